//! Build script:
//!
//! * linker scripts: cortex-m-rt's `link.x` (which includes `memory.x` from
//!   this directory) and, with logging, defmt's `defmt.x`;
//! * the embedded scenarios: for each `traces/*.csv` (its first line names
//!   `topology=` and `switch=`), the switch's table blob (`lcmp-tables`
//!   `build_tables` + `encode_blob`), the trace in the compact encoding
//!   (`parse_csv` + `encode_trace`), and the digest and decision count that
//!   `lcmp_tables::replay::replay` computes on the host, which the image
//!   must reproduce;
//! * signing: every scenario's blob is signed (`lcmp_tables::blob::signed`)
//!   with a test controller key made from a fixed seed, scenario `i` at
//!   generation `i + 1`, and the image trusts that key's public half only
//!   (the private seed never reaches the image). Three blobs the image
//!   must reject are built too: a signed blob with one payload byte
//!   changed, one signed by another key, one for another switch, and (at
//!   run time) the first scenario's blob replayed after the second's; and
//!   the newer blob the image installs after its simulated reset.
use core::fmt::Write as _;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

use lcmp_decide::{DeciderConfig, Decision};
use lcmp_tables::blob::encode_blob_vec;
use lcmp_tables::blob::signed::{public_key, sign_blob_vec, Claims, Scope, SIGNED_HEADER_LEN};
use lcmp_tables::replay::{encode_trace_vec, parse_csv, replay, ReplayDecider};
use lcmp_tables::{build_tables, BuildOptions, Topology};

/// The scenarios, in the order the image runs them.
const TRACES: [&str; 2] = ["steady", "failures"];

/// The test controller's secret seed. A test key: a real controller keeps
/// its key off the build machine (`lcmp tables keygen`, docs/tables.md),
/// and the image gets only the public key.
const CONTROLLER_SEED: [u8; 32] = *b"lcmp-firmware test controller k1";
/// A key the image does not trust.
const OTHER_SEED: [u8; 32] = *b"lcmp-firmware untrusted key   k2";

fn header_field<'a>(first_line: &'a str, key: &str) -> Option<&'a str> {
    first_line
        .trim_start_matches('#')
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

struct Built {
    /// The device the blob is signed for (the trace's topology and switch).
    scope: Scope,
    tables: Vec<u8>,
    trace: Vec<u8>,
    digest: u64,
    decisions: u64,
    packets: u64,
    hits: u64,
    unpinned: u64,
    no_route: u64,
}

fn build(csv_path: &Path, generation: u64) -> Result<Built, String> {
    let text = fs::read_to_string(csv_path).map_err(|e| format!("{}: {e}", csv_path.display()))?;
    let first = text.lines().next().unwrap_or("");
    let topo_name = header_field(first, "topology").ok_or("first line lacks topology=")?;
    let switch_name = header_field(first, "switch").ok_or("first line lacks switch=")?;
    let topo = Topology::embedded(topo_name).ok_or(format!("unknown topology {topo_name}"))?;
    let switch = topo
        .dc_id(switch_name)
        .ok_or(format!("unknown switch {switch_name}"))?;
    let tables = build_tables(&topo, switch, &BuildOptions::default())
        .map_err(|e| format!("build_tables: {e}"))?;
    let blob = encode_blob_vec(&tables, generation).map_err(|e| format!("encode_blob: {e}"))?;
    let scope = topo.scope(switch);
    let claims = Claims {
        scope,
        not_after: None,
    };
    let blob = sign_blob_vec(&blob, &CONTROLLER_SEED, &claims).map_err(|e| format!("sign: {e}"))?;
    let events =
        parse_csv(&text, Some(&topo)).map_err(|e| format!("{}: {e}", csv_path.display()))?;
    let trace = encode_trace_vec(&events).map_err(|e| format!("encode_trace: {e}"))?;
    let mut decider = Box::new(ReplayDecider::new(DeciderConfig::default()));
    decider
        .install(&tables)
        .map_err(|e| format!("install: {e}"))?;
    let (mut hits, mut unpinned, mut no_route) = (0, 0, 0);
    let summary = replay(&mut decider, events.iter().copied().map(Ok), |r| {
        match r.decision {
            Decision::Hit(_) => hits += 1,
            Decision::Unpinned(_) => unpinned += 1,
            Decision::NoRoute(_) => no_route += 1,
            Decision::New { .. } => {}
        }
    })
    .map_err(|e| format!("replay: {e}"))?;
    Ok(Built {
        scope,
        tables: blob,
        trace,
        digest: summary.digest,
        decisions: summary.decisions,
        packets: decider.counters().packets,
        hits,
        unpinned,
        no_route,
    })
}

/// CRC-32/ISCSI of `a` then `b` (the table blob's header CRC).
fn crc32c(a: &[u8], b: &[u8]) -> u32 {
    // Bitwise CRC-32C (reflected, polynomial 0x82F63B78): a build-time
    // helper, not worth a dependency.
    let mut crc = !0u32;
    for &byte in a.iter().chain(b) {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn main() {
    let dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_default());
    println!("cargo:rustc-link-search={}", dir.display());
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg=--nmagic");
    println!("cargo:rustc-link-arg=-Tlink.x");
    if env::var_os("CARGO_FEATURE_LOG").is_some() {
        println!("cargo:rustc-link-arg=-Tdefmt.x");
    }

    let mut rs = String::from("// Generated by build.rs from traces/*.csv.\n\n");
    rs.push_str("/// The embedded scenarios, in run order.\n");
    let _ = writeln!(
        rs,
        "pub(crate) const SCENARIOS: [Scenario; {}] = [",
        TRACES.len()
    );
    let mut last_inner = Vec::new();
    let mut last_scope = None;
    for (i, name) in TRACES.into_iter().enumerate() {
        let csv = dir.join("traces").join(format!("{name}.csv"));
        println!("cargo:rerun-if-changed={}", csv.display());
        let built = match build(&csv, i as u64 + 1) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("error: scenario {name}: {e}");
                std::process::exit(1);
            }
        };
        last_inner = built.tables[SIGNED_HEADER_LEN..built.tables.len() - 64].to_vec();
        last_scope = Some(built.scope);
        for (suffix, bytes) in [("tables", &built.tables), ("trace", &built.trace)] {
            let path = out.join(format!("{name}.{suffix}.bin"));
            if let Err(e) = fs::write(&path, bytes) {
                eprintln!("error: write {}: {e}", path.display());
                std::process::exit(1);
            }
        }
        let _ = writeln!(
            rs,
            "    Scenario {{\n        name: {name:?},\n        \
             scope: {:?},\n        \
             tables: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{name}.tables.bin\")),\n        \
             trace: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{name}.trace.bin\")),\n        \
             expected: Expected {{ digest: {:#018x}, decisions: {}, packets: {}, hits: {}, unpinned: {}, no_route: {} }},\n    }},",
            built.scope.to_bytes(), built.digest, built.decisions, built.packets, built.hits, built.unpinned, built.no_route
        );
    }
    rs.push_str("];\n");
    // The blobs the image must reject, both at a generation newer than
    // every scenario's, so only the signature can refuse them.
    let newer = TRACES.len() as u64 + 1;
    let mut inner = last_inner.clone();
    inner[8..16].copy_from_slice(&newer.to_le_bytes());
    // Re-seal the inner CRC, so the blob is a well-formed one that was
    // changed after signing, not a corrupt one.
    let crc = crc32c(&inner[..20], &inner[24..]);
    inner[20..24].copy_from_slice(&crc.to_le_bytes());
    // Signed for the last scenario's device, which the rejections run as.
    let Some(scope) = last_scope else {
        eprintln!("error: no scenario");
        std::process::exit(1);
    };
    let claims = Claims {
        scope,
        not_after: None,
    };
    let mut tampered = sign_blob_vec(&inner, &CONTROLLER_SEED, &claims).unwrap_or_default();
    // One payload byte of the inner blob (a candidate delay), and its CRC
    // fixed up: only the signature notices.
    let at = SIGNED_HEADER_LEN + 24 + 30;
    tampered[at] ^= 0x01;
    let fixed = crc32c(
        &tampered[SIGNED_HEADER_LEN..SIGNED_HEADER_LEN + 20],
        &tampered[SIGNED_HEADER_LEN + 24..tampered.len() - 64],
    );
    tampered[SIGNED_HEADER_LEN + 20..SIGNED_HEADER_LEN + 24].copy_from_slice(&fixed.to_le_bytes());
    let other = sign_blob_vec(&inner, &OTHER_SEED, &claims).unwrap_or_default();
    // Validly signed, newer, for another switch of the same topology
    // (mix-and-match).
    let elsewhere = Claims {
        scope: Scope {
            switch: scope.switch ^ 1,
            ..scope
        },
        not_after: None,
    };
    let wrong_scope = sign_blob_vec(&inner, &CONTROLLER_SEED, &elsewhere).unwrap_or_default();
    // The same tables, validly signed: what the image installs after its
    // simulated reset.
    let newer_blob = sign_blob_vec(&inner, &CONTROLLER_SEED, &claims).unwrap_or_default();
    for (name, bytes) in [
        ("tampered", &tampered),
        ("other-key", &other),
        ("wrong-scope", &wrong_scope),
        ("newer", &newer_blob),
    ] {
        let path = out.join(format!("{name}.signed.bin"));
        if bytes.is_empty() || fs::write(&path, bytes).is_err() {
            eprintln!("error: write {}", path.display());
            std::process::exit(1);
        }
    }
    let _ = writeln!(
        rs,
        "\n/// The test controller's public key: the one key the image trusts.\n\
         pub(crate) const TRUSTED_KEY: [u8; 32] = {:?};\n\
         /// A blob changed after signing (one payload byte, inner CRC fixed up).\n\
         pub(crate) const TAMPERED: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/tampered.signed.bin\"));\n\
         /// A blob signed by a key the image does not trust.\n\
         pub(crate) const OTHER_KEY: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/other-key.signed.bin\"));\n\
         /// A blob validly signed for another switch than the last scenario's.\n\
         pub(crate) const WRONG_SCOPE: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/wrong-scope.signed.bin\"));\n\
         /// The last scenario's tables at the next generation, validly signed.\n\
         pub(crate) const NEWER: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/newer.signed.bin\"));",
        public_key(&CONTROLLER_SEED)
    );
    if let Err(e) = fs::write(out.join("scenarios.rs"), rs) {
        eprintln!("error: write scenarios.rs: {e}");
        std::process::exit(1);
    }
}
