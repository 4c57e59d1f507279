//! Acceptance tests of the `lcmp` binary: hand-checked `explain` scenarios
//! on testbed8, table blobs, replay, and error handling (one line on
//! stderr, exit 1, never a panic).

use std::path::Path;
use std::process::{Command, Output};

use lcmp_decide::Scheme;
use serde_json::Value;

mod common;
use common::{fails, lcmp, ok_json, tmp};

fn here(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .display()
        .to_string()
}

fn explain(file: &str, extra: &[&str]) -> Value {
    let path = here(&format!("tests/scenarios/{file}"));
    let mut args = vec!["explain", path.as_str()];
    args.extend_from_slice(extra);
    ok_json(&args)
}

/// `(port, cost, kept, cut_reason)` of each candidate.
fn fates(v: &Value) -> Vec<(u64, u64, bool, Value)> {
    v["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| {
            (
                c["port"].as_u64().expect("port"),
                c["cost"].as_u64().expect("cost"),
                c["kept"].as_bool().expect("kept"),
                c["cut_reason"].clone(),
            )
        })
        .collect()
}

/// The flow's ECMP hash, MurmurHash3 x86_32 seed 0 over 10.0.0.1,
/// 10.0.7.1, ports 49152/4791. `tests/py/murmur3_ecmp.py` (run by
/// `scripts/test.d/20-tables-cli.sh`) checks this value, and the hash
/// `lcmp explain` reports for every scenario, against an independent
/// Python implementation of the reference algorithm.
const HASH: u64 = 3_708_028_808;

#[test]
fn idle_keeps_the_three_cheapest() {
    // By hand (Alg. 1-2, Eq. 1-2, paper weights, 1 ms unit, shift 5, 400 G
    // top class): delay scores 199, 255, 79, 255, 39, 255; capacity scores
    // 128, 128, 204, 204, 255, 255; C_path = (3 d + c) >> 2 = 181, 223,
    // 110, 242, 93, 255; idle C = (3 C_path) >> 2 = 135, 167, 82, 181, 69,
    // 191. Sorted: ports 4, 2, 0 | 1, 3, 5; the lower half is kept.
    let v = explain("idle.json", &[]);
    let c_path: Vec<u64> = v["candidates"]
        .as_array()
        .expect("c")
        .iter()
        .map(|c| c["c_path"].as_u64().expect("c_path"))
        .collect();
    assert_eq!(c_path, [181, 223, 110, 242, 93, 255]);
    let neighbors: Vec<u64> = v["candidates"]
        .as_array()
        .expect("c")
        .iter()
        .map(|c| c["neighbor"].as_u64().expect("n"))
        .collect();
    assert_eq!(neighbors, [2, 3, 4, 5, 6, 7]);
    let uh = Value::from("upper_half");
    assert_eq!(
        fates(&v),
        [
            (0, 135, true, Value::Null),
            (1, 167, false, uh.clone()),
            (2, 82, true, Value::Null),
            (3, 181, false, uh.clone()),
            (4, 69, true, Value::Null),
            (5, 191, false, uh),
        ]
    );
    assert_eq!(v["hash"], HASH);
    // The hash picks in sorted order: [4, 2, 0][HASH % 3 = 2] = port 0.
    assert_eq!(v["chosen_port"], 0);
    assert_eq!(v["chosen_neighbor"], 2);
    assert_eq!(v["reason"], "hash_in_kept");
    for c in v["candidates"].as_array().expect("c") {
        assert_eq!(
            (
                c["q"].as_u64(),
                c["t"].as_u64(),
                c["d"].as_u64(),
                c["c_cong"].as_u64()
            ),
            (Some(0), Some(0), Some(0), Some(0))
        );
        assert_eq!(c["up"], true);
    }
}

#[test]
fn full_queue_moves_a_kept_port_out() {
    // Equal weights (alpha = beta = 1, S_total = 1): idle C = C_path >> 1 =
    // 90, 111, 55, 121, 46, 127, so port 0 is kept (sorted 4, 2, 0).
    let idle = explain("equal-weights-idle.json", &[]);
    assert_eq!(fates(&idle)[0], (0, 90, true, Value::Null));
    // One sample of a full 5 GB buffer on port 0 (200 G) at 1 ms: Q = 255
    // (>= qthr[9] = 4.5 GB); T = 5e9 >> 3 = 625 MB >= the level-9 trend
    // threshold 25 MB, so T = 255; D = 1 >> 2 = 0. C_cong = (2*255 + 255 +
    // 0) >> 3 = 95; C = (181 + 95) >> 1 = 138 > 111: port 0 drops to the
    // upper half and port 1 takes its place.
    let v = explain("full-queue.json", &[]);
    let c0 = &v["candidates"][0];
    assert_eq!(
        (c0["q"].as_u64(), c0["t"].as_u64(), c0["d"].as_u64()),
        (Some(255), Some(255), Some(0))
    );
    assert_eq!(c0["c_cong"], 95);
    let uh = Value::from("upper_half");
    assert_eq!(
        fates(&v),
        [
            (0, 138, false, uh.clone()),
            (1, 111, true, Value::Null),
            (2, 55, true, Value::Null),
            (3, 121, false, uh.clone()),
            (4, 46, true, Value::Null),
            (5, 127, false, uh),
        ]
    );
    // Kept in sorted order [4, 2, 1]; HASH % 3 = 2: port 1.
    assert_eq!(v["chosen_port"], 1);
    assert_eq!(idle["chosen_port"], 0);
}

#[test]
fn all_over_the_cut_falls_back_to_min_cost() {
    // alpha = 9: C = (9 C_path) >> 2 = 407->255, 501->255, 247, 544->255,
    // 209, 573->255. The lower half (ports 4, 2, 0) is at or over the cut
    // (204), so nothing is kept and the minimum-cost port 4 is taken.
    let v = explain("over-cut.json", &[]);
    let oc = Value::from("over_cut");
    let uh = Value::from("upper_half");
    assert_eq!(
        fates(&v),
        [
            (0, 255, false, oc.clone()),
            (1, 255, false, uh.clone()),
            (2, 247, false, oc.clone()),
            (3, 255, false, uh.clone()),
            (4, 209, false, oc),
            (5, 255, false, uh),
        ]
    );
    assert_eq!(v["chosen_port"], 4);
    assert_eq!(v["reason"], "min_cost_fallback");
}

#[test]
fn a_down_port_is_never_chosen() {
    // Port 4 (the cheapest) down: five live, keep 5 / 2 = 2: ports 2 and 0;
    // HASH % 2 = 0: port 2.
    let v = explain("down.json", &[]);
    let c4 = &v["candidates"][4];
    assert_eq!(
        (c4["up"].as_bool(), c4["kept"].as_bool()),
        (Some(false), Some(false))
    );
    assert_eq!(c4["cut_reason"], "down");
    assert_eq!(c4["rank"], Value::Null);
    assert_eq!(v["chosen_port"], 2);
    for scheme in ["lcmp", "ecmp", "ucmp"] {
        let v = explain("down.json", &["--scheme", scheme]);
        assert_ne!(v["chosen_port"], 4, "{scheme}");
        assert_eq!(v["scheme"], scheme);
    }
    let none = explain("all-down.json", &[]);
    assert_eq!(none["chosen_port"], Value::Null);
    assert_eq!(none["reason"], "no_live_candidate");
}

#[test]
fn baselines() {
    // ECMP keeps every live port: HASH % 6 = 2 (3708028808 = 6 * 618004801
    // + 2) -> port 2. UCMP keeps the 200 G ports 0 and 1: HASH % 2 = 0 ->
    // port 0.
    let e = explain("idle.json", &["--scheme", "ecmp"]);
    assert_eq!(
        (e["chosen_port"].as_u64(), e["reason"].as_str()),
        (Some(2), Some("ecmp"))
    );
    let u = explain("idle.json", &["--scheme", "ucmp"]);
    assert_eq!(
        (u["chosen_port"].as_u64(), u["reason"].as_str()),
        (Some(0), Some("ucmp"))
    );
    let kept: Vec<bool> = u["candidates"]
        .as_array()
        .expect("c")
        .iter()
        .map(|c| c["kept"].as_bool().expect("k"))
        .collect();
    assert_eq!(kept, [true, true, false, false, false, false]);
}

#[test]
fn tables_blob_round_trip_and_verify() {
    let path = tmp("dc1.bin");
    let p = path.display().to_string();
    let out = lcmp(&[
        "tables",
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
        "-o",
        &p,
        "--generation",
        "9",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let ok = lcmp(&["tables", "verify", &p]);
    assert_eq!(ok.status.code(), Some(0));
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(
        text.contains("generation 9") && text.contains("7 groups"),
        "{text}"
    );
    let bytes = std::fs::read(&path).expect("read");
    // Damage: truncated, flipped payload bit, wrong version.
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("trunc", bytes[..bytes.len() - 1].to_vec(), "truncated"),
        (
            "flip",
            {
                let mut b = bytes.clone();
                b[30] ^= 4;
                b
            },
            "CRC mismatch",
        ),
        (
            "ver",
            {
                let mut b = bytes.clone();
                b[4] = 7;
                b
            },
            "unsupported format version 7",
        ),
    ];
    for (name, data, want) in cases {
        let bad = tmp(name);
        std::fs::write(&bad, data).expect("write");
        let err = fails(&["tables", "verify", &bad.display().to_string()]);
        assert!(err.contains(want), "{err}");
    }
    let v = ok_json(&["tables", "verify", &p, "--json"]);
    assert_eq!(v["generation"], 9);
    let json = ok_json(&["tables", "--topology", "bso13", "--switch", "DC3", "--json"]);
    assert_eq!(json["origin"]["switch"], 3);
    assert_eq!(json["ports"][0]["buffer_bytes"], 6_000_000_000u64);
}

#[test]
fn fractions_on_the_command_line() {
    let v = ok_json(&[
        "tables",
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
        "--json",
        "--cut",
        "70%",
        "--high-water",
        "0.9",
        "--low-water",
        "0.3",
        "--levels",
        "4",
        "--capacity-thresholds",
        "10%,25%,50%,100%",
    ]);
    // round(255 * 0.7) = round(178.5) = 179; 229.5 -> 230; 76.5 -> 77.
    assert_eq!(
        (
            v["params"]["cut"].as_u64(),
            v["params"]["high_water"].as_u64()
        ),
        (Some(179), Some(230))
    );
    assert_eq!(v["params"]["low_water"], 77);
    assert_eq!(v["levels"], serde_json::json!([63, 127, 191, 255]));
    assert_eq!(
        v["capacity_thresholds_bps"],
        serde_json::json!([
            40_000_000_000u64,
            100_000_000_000u64,
            200_000_000_000u64,
            400_000_000_000u64
        ])
    );
    fails(&[
        "tables",
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
        "--cut",
        "120%",
    ]);
}

#[test]
fn replay_prints_decisions_digest_and_counters() {
    let trace = here("../../lcmp-tables/tests/data/testbed8-dc1.csv");
    let out = lcmp(&[
        "replay",
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
        &trace,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 42 + 2);
    assert_eq!(lines[42], "digest 0xf2ca0b1871b8838c");
    assert!(
        lines[43].contains("packets=42 hits=16 new_flows=23 failovers=1"),
        "{}",
        lines[43]
    );
    assert_eq!(
        lines[0],
        "0 t_us=0 flow=10.0.0.1,10.0.7.1,49152,4791,17 dst_dc=8 new port=0 reason=hash_in_kept"
    );
    // The encoded form replays to the same digest.
    let enc = tmp("trace.bin");
    let e = enc.display().to_string();
    let q = lcmp(&[
        "replay",
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
        "-q",
        "--encode",
        &e,
        &trace,
    ]);
    assert_eq!(
        String::from_utf8_lossy(&q.stdout).lines().next(),
        Some("digest 0xf2ca0b1871b8838c")
    );
    let again = lcmp(&[
        "replay",
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
        "-q",
        &e,
    ]);
    assert_eq!(
        String::from_utf8_lossy(&again.stdout).lines().next(),
        Some("digest 0xf2ca0b1871b8838c")
    );
}

#[test]
fn errors_are_one_line() {
    let bad_trace = tmp("bad.csv");
    std::fs::write(
        &bad_trace,
        "0,packet,10.0.0.1,10.0.7.1,1,2,17,8\n5,sample,x,1\n",
    )
    .expect("write");
    let err = fails(&[
        "replay",
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
        &bad_trace.display().to_string(),
    ]);
    assert!(err.contains("trace line 2"), "{err}");
    fails(&[
        "replay",
        "--topology",
        "testbed8",
        "--switch",
        "DC99",
        &bad_trace.display().to_string(),
    ]);
    fails(&["explain", "/nonexistent/scenario.json"]);
    let junk = tmp("junk.json");
    std::fs::write(&junk, "{\"topology\": 5}").expect("write");
    fails(&["explain", &junk.display().to_string()]);
    let scen = tmp("badport.json");
    std::fs::write(
        &scen,
        r#"{"topology":"testbed8","switch":"DC1","samples":[{"t_us":0,"port":9,"queue_bytes":1}],
            "flow":{"src":"10.0.0.1","dst":"10.0.7.1","sport":1,"dport":2,"proto":17},"dst_dc":"DC8"}"#,
    )
    .expect("write");
    let err = fails(&["explain", &scen.display().to_string()]);
    assert!(err.contains("no port 9"), "{err}");
    let topo = tmp("topo.json");
    std::fs::write(
        &topo,
        r#"{"name":"x","dcs":[{"id":1,"name":"A"}],"links":[],"buffer_bytes":0}"#,
    )
    .expect("write");
    let err = fails(&[
        "tables",
        "--topology",
        &topo.display().to_string(),
        "--switch",
        "A",
    ]);
    assert!(err.contains("buffer"), "{err}");
    // Usage errors are clap's (exit 2), not panics.
    assert_eq!(
        lcmp(&["tables", "--topology", "testbed8"]).status.code(),
        Some(2)
    );
    assert_eq!(lcmp(&["replay"]).status.code(), Some(2));
    // ... on one line, like every other error.
    for args in [
        &["tables", "--bogus"][..],
        &["tables", "--topology", "testbed8"],
        &[
            "tofino",
            "p4",
            "--topology",
            "testbed8",
            "--switch",
            "DC1",
            "--profile",
            "x",
        ],
        &["sim", "--load", "nope"],
    ] {
        let out = lcmp(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("lcmp: error: "), "{args:?}: {err}");
    }
    // A scheme the core does not name: clap's usage error (exit 2) with the
    // core's one-line message; the core's names are the flag's values.
    let idle = here("tests/scenarios/idle.json");
    let out = lcmp(&["explain", &idle, "--scheme", "wcmp"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.ends_with(&format!(": {}", "wcmp".parse::<Scheme>().unwrap_err())),
        "{err}"
    );
    let help = lcmp(&["replay", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    for s in Scheme::ALL {
        assert!(help.contains(&format!("- {}: ", s.name())), "{help}");
    }
}

/// Runs `lcmp args` with a stdout whose reader is already gone (`lcmp ...
/// | head` after `head` exits): every write gets EPIPE, deterministically.
fn into_closed_pipe(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_lcmp"))
        .args(args)
        .stdout(writer)
        .output()
        .expect("run lcmp")
}

#[test]
fn a_closed_stdout_ends_every_printing_command_quietly() {
    let dir = tmp("closed-pipe");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let blob = dir.join("dc1.bin").display().to_string();
    let run_json = dir.join("run.json").display().to_string();
    let p4 = dir.join("p4").display().to_string();
    let scenario = here("tests/scenarios/idle.json");
    let trace = here("../../lcmp-tables/tests/data/testbed8-dc1.csv");
    let dc1 = ["--topology", "testbed8", "--switch", "DC1"];
    let table = [&["tables"][..], &dc1].concat();
    let mut to_blob = table.to_vec();
    to_blob.extend(["-o", &blob]);
    assert_eq!(lcmp(&to_blob).status.code(), Some(0));
    // A small run: one load, two schemes, 5 ms of arrivals.
    let sim = [
        "sim",
        "--load",
        "0.3",
        "--window",
        "0.005",
        "--schemes",
        "ecmp,lcmp",
    ];
    let json = lcmp(&[&sim[..], &["--json"]].concat());
    assert_eq!(json.status.code(), Some(0));
    std::fs::write(&run_json, &json.stdout).expect("write run json");
    let replay = [&["replay"][..], &dc1, &[trace.as_str()]].concat();
    let sweep = [&sim[..], &["sweep", "--vary", "band=8/16"]].concat();
    let jobs = [&sweep[..], &["--emit-jobs"]].concat();
    let tofino = [&["tofino", "p4"][..], &dc1, &["-o", &p4]].concat();
    let commands: [&[&str]; 11] = [
        &table,
        &["tables", "verify", &blob],
        &["explain", &scenario],
        &replay,
        &sim,
        &[&sim[..], &["--json"]].concat(),
        &[
            "sim",
            "--model",
            "packet",
            "--load",
            "0.3",
            "--window",
            "0.0005",
            "--schemes",
            "ecmp",
        ],
        &sweep,
        &jobs,
        &["sim", "merge", &run_json],
        &tofino,
    ];
    for args in commands {
        let out = into_closed_pipe(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("error"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
