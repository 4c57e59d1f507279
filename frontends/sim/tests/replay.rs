//! `lcmp sim replay` and `fct-compare`: the packet model on the flows of an
//! artifact traffic file, written in the artifact's FCT format.

use lcmp_sim::artifact_files::{compare, compare_files, parse_fct, replay, FlowSource};
use lcmp_sim::cli::{parse_sim_args, SimArgs};

fn args(a: &[&str]) -> SimArgs {
    parse_sim_args(a.iter().copied()).expect("parses")
}

/// Three flows of the artifact's 30 % web-search file (its first lines),
/// DC1 -> DC8, the first two of one host pair.
const TRAFFIC: &str = "# src dst pg dport size start_time\n3\n\
    5 116 3 100 3255 2.000060495\n\
    5 116 3 100 1000 2.000137530\n\
    3 116 3 100 58635 2.000138574\n";

#[test]
fn replay_writes_the_artifacts_fct_format_for_every_flow() {
    let dir = std::env::temp_dir().join(format!("lcmp-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let traffic = dir.join("traffic.txt");
    std::fs::write(&traffic, TRAFFIC).expect("write");
    let a = args(&[
        "--model",
        "packet",
        "--preset",
        "artifact",
        "--load",
        "0.3",
        "--schemes",
        "lcmp",
        "--seeds",
        "1",
    ]);
    replay(&a, FlowSource::TrafficFile(&traffic), Some(&dir)).expect("runs");
    let text = std::fs::read_to_string(dir.join("fct_lcmp.txt")).expect("fct file");
    let recs = parse_fct(&text).expect("our own format parses");
    assert_eq!(recs.len(), 3);
    // Node 5 -> node 116: the artifact's addresses, per-pair ports.
    assert_eq!(
        (recs[0].sip, recs[0].dip, recs[0].sport),
        (0x0b00_0501, 0x0b00_7401, 10_000)
    );
    assert_eq!(recs[1].sport, 10_001);
    assert_eq!(recs[0].start_ns, 2_000_060_495);
    for r in &recs {
        // The artifact's ideal: 20 ms (DC6's round trip) plus the bytes.
        assert!((20_000_000..20_100_000).contains(&r.ideal_ns), "{r:?}");
        assert!(r.fct_ns >= r.ideal_ns, "{r:?}");
        // LCMP's data take one of the three kept paths (DC2, DC4, DC6).
        assert!([2, 4, 6].contains(&r.via), "{r:?}");
    }
    // A file compared with itself matches every flow exactly.
    let own = dir.join("fct_lcmp.txt");
    let report = compare_files(&own, &own, 3).expect("compares");
    assert!(report.contains("FCT within  1 %: 3 (100.0 %)"), "{report}");
    // Three flows are too few for the artifact script's 20 bins: no table.
    assert!(!report.contains("20 size bins"), "{report}");
    assert_eq!(compare(&recs, &recs).within(0.0), 3);
    // The flows of an FCT log (`--flows-of`, for the artifact's runs whose
    // traffic file it did not commit) are the flows that made it: our own
    // log replayed gives the same log.
    let again = dir.join("again");
    replay(&a, FlowSource::FctLog(&own), Some(&again)).expect("runs");
    let text2 = std::fs::read_to_string(again.join("fct_lcmp.txt")).expect("fct file");
    assert_eq!(text2, text);
    std::fs::write(
        dir.join("bad.txt"),
        "0c000501 0b007401 10000 100 3255 2000060495 1 1\n",
    )
    .expect("write");
    let e = replay(&a, FlowSource::FctLog(&dir.join("bad.txt")), None)
        .expect_err("not an artifact address")
        .to_string();
    assert!(e.contains("--flows-of") && e.contains("0c000501"), "{e}");
    // A traffic file with a bad line is an error, not a panic.
    std::fs::write(&traffic, "1\n5 116 3 100 x 2.0\n").expect("write");
    let e = replay(&a, FlowSource::TrafficFile(&traffic), None)
        .expect_err("bad size")
        .to_string();
    assert!(e.contains("line 2: bad size `x`"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
