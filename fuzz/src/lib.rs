//! Fuzzing support for LCMP-rs (`docs/fuzzing.md`): structured inputs ([`input`]),
//! a `std` reference model ([`model`]) and the drivers the fuzz targets
//! call: [`events`] (invariants after every event), [`differential`]
//! (crate vs model, decision by decision), [`blob`] (the table-blob
//! decoder), [`json`] (the topology and scenario JSON parsers),
//! [`tofino`] (the Tofino entries' interpreter against the core) and
//! [`trace`] (the replay trace parsers).
//!
//! The drivers panic on a violated invariant; libFuzzer turns the panic into
//! a crash artifact. They also build on stable, so `cargo test` here runs
//! the model's golden tests and replays the committed seed corpora.

pub mod blob;
pub mod differential;
pub mod events;
pub mod input;
pub mod json;
pub mod model;
pub mod signed;
pub mod tofino;
pub mod trace;

/// Replays every file under `fuzz/corpus/<target>/` through `f`
/// (used by the unit tests; the fuzzer replays corpora itself).
#[cfg(test)]
pub(crate) fn replay_corpus(target: &str, mut f: impl FnMut(&[u8])) -> usize {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut n = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if let Ok(bytes) = std::fs::read(e.path()) {
                f(&bytes);
                n += 1;
            }
        }
    }
    n
}

/// Writes the hand-made seeds (`cargo test --lib -- --ignored write_seeds`):
/// the CLI's scenario files, the embedded topologies as JSON and their
/// switches' table blobs, each behind the 4 zero bytes that select the
/// raw-bytes variant of the target's input enum.
#[cfg(test)]
mod seeds {
    use std::path::Path;

    fn write(target: &str, name: &str, body: &[u8]) {
        write_variant(target, name, 0, body);
    }

    /// `variant` is the `u32` that `arbitrary` maps to the wanted enum
    /// variant (`(x * variants) >> 32`).
    fn write_variant(target: &str, name: &str, variant: u32, body: &[u8]) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus")
            .join(target);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let mut bytes = variant.to_le_bytes().to_vec();
        bytes.extend_from_slice(body);
        std::fs::write(dir.join(format!("seed-{name}")), bytes).expect("write");
    }

    #[test]
    #[ignore = "writes files; run by hand"]
    fn write_seeds() {
        let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("../frontends/cli/tests/scenarios");
        for e in std::fs::read_dir(cli).expect("scenarios").flatten() {
            let name = e
                .path()
                .file_stem()
                .expect("stem")
                .to_string_lossy()
                .into_owned();
            write(
                "scenario_json",
                &format!("cli-{name}"),
                &std::fs::read(e.path()).expect("read"),
            );
        }
        // trace_replay: Csv = 0, CsvNamed = 0x6000_0000, Encoded = 0xC000_0000.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let csv = std::fs::read_to_string(root.join("lcmp-tables/tests/data/testbed8-dc1.csv"))
            .expect("csv");
        write_variant(
            "trace_replay",
            "testbed8-dc1-csv",
            0x6000_0000,
            csv.as_bytes(),
        );
        let steady = std::fs::read_to_string(root.join("frontends/firmware/traces/steady.csv"))
            .expect("csv");
        let head: String = steady.lines().take(40).flat_map(|l| [l, "\n"]).collect();
        write_variant(
            "trace_replay",
            "steady-head-csv",
            0x6000_0000,
            head.as_bytes(),
        );
        let topo = lcmp_tables::Topology::embedded("testbed8").expect("embedded");
        let events = lcmp_tables::replay::parse_csv(&csv, Some(&topo)).expect("parses");
        let numeric: String = csv.replace(",DC8", ",8").replace(",DC2", ",2");
        write(
            "trace_replay",
            "testbed8-dc1-numeric-csv",
            numeric.as_bytes(),
        );
        let encoded = lcmp_tables::replay::encode_trace_vec(&events).expect("encodes");
        write_variant(
            "trace_replay",
            "testbed8-dc1-encoded",
            0xC000_0000,
            &encoded,
        );
        for topo in lcmp_tables::topology::EMBEDDED {
            let t = lcmp_tables::Topology::embedded(topo).expect("embedded");
            write(
                "scenario_json",
                &format!("topology-{topo}"),
                serde_json::to_string(&t).expect("json").as_bytes(),
            );
            for dc in t.dcs.iter().take(2) {
                let tables =
                    lcmp_tables::build_tables(&t, dc.id, &Default::default()).expect("build");
                let blob = lcmp_tables::blob::encode_blob_vec(&tables, 1).expect("encode");
                write("tables_decode", &format!("{topo}-dc{}", dc.id), &blob);
                // signed_verify's raw variant: installed generation 0 (8
                // bytes), unsigned refused (1 byte), then the signed blob.
                let mut signed = vec![0u8; 9];
                signed.extend(
                    lcmp_tables::blob::signed::sign_blob_vec(
                        &blob,
                        &crate::signed::TRUSTED_SEED,
                        &crate::signed::CLAIMS,
                    )
                    .expect("sign"),
                );
                write("signed_verify", &format!("{topo}-dc{}", dc.id), &signed);
            }
        }
    }
}
