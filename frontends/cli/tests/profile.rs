//! The named parameter profiles (`paper`, `tuned`) and the table options
//! that go with them (cost band, explicit queue thresholds) through the
//! `lcmp` binary: `lcmp tables --profile/--band/--queue-thresholds`,
//! `lcmp tofino --profile`, `lcmp sim --profile` and `lcmp sim sweep`, and
//! their bad values (one line on stderr, exit 1; clap's own usage errors
//! exit 2).

use serde_json::Value;

mod common;
use common::{fails, lcmp, ok, tmp};

const DC1: [&str; 5] = ["tables", "--topology", "testbed8", "--switch", "DC1"];

fn tables_json(extra: &[&str]) -> Value {
    let mut args = DC1.to_vec();
    args.extend_from_slice(extra);
    args.push("--json");
    serde_json::from_str(&ok(&args)).expect("json")
}

/// `(delay_score, c_path)` of group DC8's candidates.
fn dc8(v: &Value) -> Vec<(u64, u64)> {
    let g = v["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .find(|g| g["id"] == 8)
        .expect("DC8");
    g["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| {
            (
                c["delay_score"].as_u64().expect("ds"),
                c["c_path"].as_u64().expect("c_path"),
            )
        })
        .collect()
}

#[test]
fn tables_accept_the_profile_and_its_options() {
    let paper = tables_json(&[]);
    assert_eq!(paper["params"]["delay_shift"], 5);
    assert_eq!(paper["params"]["band"], 255);
    assert_eq!(paper["format_version"], 3);
    // Shift 10 by hand (docs/simulator.md): delayScore (d * 255) >> 10.
    let tuned = tables_json(&["--profile", "tuned"]);
    assert_eq!(tuned["params"]["delay_shift"], 10);
    assert_eq!(tuned["params"]["band"], 8);
    assert_eq!(tuned["params"]["weights"], paper["params"]["weights"]);
    assert_eq!(
        dc8(&tuned),
        [(6, 36), (62, 78), (2, 52), (24, 69), (1, 64), (12, 72)]
    );
    // Options change the profile's values.
    let b = tables_json(&["--profile", "tuned", "--band", "8", "--saturation", "5"]);
    assert_eq!(
        (
            b["params"]["band"].as_u64(),
            b["params"]["delay_shift"].as_u64()
        ),
        (Some(8), Some(5))
    );
    let q = tables_json(&["--queue-thresholds", "wrap32:5GB"]);
    let thr: Vec<u64> = q["ports"][4]["queue_thresholds_bytes"]
        .as_array()
        .expect("thresholds")
        .iter()
        .map(|v| v.as_u64().expect("u64"))
        .collect();
    assert_eq!(
        thr,
        [
            0,
            205_032_704,
            205_032_704,
            205_032_704,
            205_032_704,
            205_032_704,
            205_032_704,
            205_032_704,
            205_032_704,
            205_032_704
        ]
    );
    // A blob keeps the band and the thresholds.
    let blob = tmp("tuned.bin");
    let path = blob.display().to_string();
    let mut args = DC1.to_vec();
    args.extend_from_slice(&[
        "--profile",
        "tuned",
        "--queue-thresholds",
        "wrap32:5GB",
        "-o",
        &path,
    ]);
    ok(&args);
    let back: Value =
        serde_json::from_str(&ok(&["tables", "verify", &path, "--json"])).expect("json");
    assert_eq!(back["params"]["band"], 8);
    assert_eq!(
        back["ports"][4]["queue_thresholds_bytes"],
        q["ports"][4]["queue_thresholds_bytes"]
    );
    let _ = std::fs::remove_file(blob);
}

#[test]
fn bad_table_options_are_one_line_errors() {
    for (extra, needle) in [
        (&["--profile", "fast"][..], "unknown profile"),
        (&["--band", "256"], "--band"),
        (&["--band=-1"], "--band"),
        (&["--queue-thresholds", "0,1"], "queue thresholds"),
        (&["--queue-thresholds", "wrap32:x"], "byte count"),
        (
            &["--queue-thresholds", "9,8,7,6,5,4,3,2,1,0"],
            "non-decreasing",
        ),
        (&["--saturation", "40"], "--saturation"),
    ] {
        let mut args = DC1.to_vec();
        args.extend_from_slice(extra);
        let err = fails(&args);
        assert!(err.contains(needle), "{extra:?}: {err}");
    }
}

#[test]
fn tofino_exports_the_tuned_profile() {
    let entries = |profile: &str| -> Value {
        let dir = tmp(&format!("tofino-{profile}"));
        let d = dir.display().to_string();
        ok(&[
            "tofino",
            "entries",
            "--topology",
            "testbed8",
            "--switch",
            "DC1",
            "--profile",
            profile,
            "--placeholder-next-hops",
            "-o",
            &d,
        ]);
        let text = std::fs::read_to_string(dir.join("lcmp_entries.json")).expect("entries");
        let _ = std::fs::remove_dir_all(&dir);
        serde_json::from_str(&text).expect("json")
    };
    // The group size of DC8: three kept candidates under the paper's
    // parameters, one under the tuned profile's band when idle (DC2 27;
    // DC4 39 is more than 8 above it).
    let k = |v: &Value| -> Option<u64> {
        let mut found = None;
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            match x {
                Value::Object(m) => {
                    // `k` rides on the destination's group entry.
                    let sized = m
                        .get("table_name")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t.ends_with("lcmp_dst_group"));
                    if sized && m.get("data").and_then(|d| d.get("group")) == Some(&Value::from(8))
                    {
                        found = m
                            .get("data")
                            .and_then(|d| d.get("k"))
                            .and_then(Value::as_u64);
                    }
                    stack.extend(m.values());
                }
                Value::Array(a) => stack.extend(a),
                _ => {}
            }
        }
        found
    };
    assert_eq!(k(&entries("paper")), Some(3));
    assert_eq!(k(&entries("tuned")), Some(1));
    let out = lcmp(&[
        "tofino",
        "p4",
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
        "--profile",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2), "a clap usage error");
}

#[test]
fn sim_runs_the_profile_and_the_artifact_preset() {
    let json = ok(&[
        "sim",
        "--load",
        "0.3",
        "--window",
        "0.01",
        "--profile",
        "tuned",
        "--schemes",
        "lcmp,lcmp-tuned",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&json).expect("json");
    let s = v["summary"].as_array().expect("summary");
    assert_eq!(s.len(), 2);
    // `--profile tuned --schemes lcmp` is the lcmp-tuned scheme.
    assert_eq!(s[0]["p99"]["mean"], s[1]["p99"]["mean"]);
    let a = ok(&[
        "sim", "--preset", "artifact", "--load", "0.3", "--window", "0.01", "--seeds", "1",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&a).expect("json");
    assert_eq!(v["summary"].as_array().map(Vec::len), Some(3));
    fails(&["sim", "--ideal", "best"]);
    fails(&["sim", "--profile", "fast"]);
    fails(&["sim", "sweep", "--vary", "colour=red"]);
}

#[test]
fn explain_scenarios_take_a_profile() {
    let scenario = |profile: &str| {
        format!(
            r#"{{"topology": "testbed8", "switch": "DC1", "profile": {profile},
               "flow": {{"src": "10.0.0.1", "dst": "10.0.7.1", "sport": 49152, "dport": 4791, "proto": 17}},
               "dst_dc": "DC8"}}"#
        )
    };
    let kept = |profile: &str| -> Vec<u64> {
        let path = tmp(&format!("scenario-{}.json", profile.len()));
        std::fs::write(&path, scenario(profile)).expect("write");
        let v: Value =
            serde_json::from_str(&ok(&["explain", &path.display().to_string()])).expect("json");
        let _ = std::fs::remove_file(&path);
        v["candidates"]
            .as_array()
            .expect("candidates")
            .iter()
            .filter(|c| c["kept"] == true)
            .map(|c| c["port"].as_u64().expect("port"))
            .collect()
    };
    // Idle DC1: the paper keeps DC6, DC4, DC2; the tuned band keeps DC2.
    let mut paper = kept(r#""paper""#);
    paper.sort_unstable();
    assert_eq!(paper, [0, 2, 4]);
    assert_eq!(kept(r#""tuned""#), [0]);
    let path = tmp("scenario-bad.json");
    std::fs::write(&path, scenario(r#""fast""#)).expect("write");
    let err = fails(&["explain", &path.display().to_string()]);
    assert!(err.contains("fast") || err.contains("variant"), "{err}");
    let _ = std::fs::remove_file(&path);
}
