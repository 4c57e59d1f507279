//! The demo's API, natively: the same answers as the crates it wraps, and
//! errors (not panics) on bad input.

use serde_json::Value;
use wasm_demo::{defaults_json, explain_json, send_flows_json, topology_json, SimDemo};

const BASE: &str = r#"{"topology":"testbed8","switch":"DC1",
    "flow":{"src":"10.0.0.1","dst":"10.0.7.1","sport":49152,"dport":4791,"proto":17},
    "dst_dc":"DC8"}"#;

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("JSON")
}

/// `explain_json` is the library's scenario explanation. (That it prints
/// what the `lcmp explain` binary prints is checked where the binary is
/// built: `frontends/cli/tests/wasm_demo.rs`.)
#[test]
fn explain_json_is_the_scenario_explanation() {
    let s = lcmp_tables::scenario::Scenario::from_json(BASE).expect("scenario");
    let want = s.explain(None).expect("explain").to_json();
    assert_eq!(explain_json(BASE).expect("explain"), want);
    let v = parse(&want);
    assert_eq!(v["candidates"].as_array().map(Vec::len), Some(6));
}

#[test]
fn bad_input_is_an_error_message() {
    for bad in [
        "",
        "{",
        "null",
        r#"{"topology":"nowhere"}"#,
        &BASE.replace("DC8", "DC99"),
    ] {
        let e = explain_json(bad).expect_err(bad);
        assert!(e.starts_with("scenario: "), "{e}");
    }
    for bad in [
        "nowhere",
        "{",
        r#"{"name":"x","dcs":[],"links":[],"buffer_bytes":1,"extra":1}"#,
    ] {
        assert!(topology_json(bad).is_err(), "{bad}");
    }
    assert!(send_flows_json(BASE, wasm_demo::MAX_SEND + 1, 0).is_err());
    assert!(SimDemo::create(0.0, 10.0, 1, "websearch").is_err());
    assert!(SimDemo::create(0.5, 10.0, 1, "nope").is_err());
    assert!(SimDemo::create(f64::NAN, 10.0, 1, "websearch").is_err());
}

#[test]
fn topology_lists_ports() {
    let v = parse(&topology_json("testbed8").expect("topology"));
    assert_eq!(v["topology"]["dcs"].as_array().map(Vec::len), Some(8));
    let dc1 = &v["switches"][0];
    assert_eq!(dc1["name"], "DC1");
    assert_eq!(dc1["ports"].as_array().map(Vec::len), Some(6));
    assert_eq!(dc1["ports"][4]["neighbor"], 6);
    let d = parse(&defaults_json().expect("defaults"));
    assert_eq!(d["weights"]["alpha"], 3);
    assert_eq!(d["cut"], 204);
}

#[test]
fn sent_flows_follow_the_kept_set_and_skip_down_ports() {
    let down = BASE.replace("\"dst_dc\"", "\"down\":[4],\"dst_dc\"");
    let v = parse(&send_flows_json(&down, 600, 9).expect("send"));
    let schemes: Vec<&str> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s["scheme"].as_str().expect("name"))
        .collect();
    assert_eq!(schemes, ["lcmp", "ecmp", "ucmp"]);
    for s in v.as_array().expect("array") {
        let total: u64 = s["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .map(|p| p["flows"].as_u64().expect("n"))
            .sum();
        assert_eq!(total, 600);
        assert_eq!(s["ports"][4]["flows"], 0, "{s}");
    }
    // LCMP with DC6 down keeps two of five (DC4, DC2: ports 2 and 0).
    let lcmp = &v[0]["ports"];
    for p in [1, 3, 5] {
        assert_eq!(lcmp[p]["flows"], 0);
    }
    // ECMP spreads over all five live ports; UCMP over the 200G ones.
    assert!(
        v[1]["ports"]
            .as_array()
            .expect("ports")
            .iter()
            .filter(|p| p["flows"] != 0)
            .count()
            == 5
    );
    let ucmp = &v[2]["ports"];
    assert!(ucmp[0]["flows"] != 0 && ucmp[1]["flows"] != 0 && ucmp[2]["flows"] == 0);
}

#[test]
fn the_simulation_steps_to_the_batch_result() {
    let mut demo = SimDemo::create(0.5, 5.0, 3, "websearch").expect("demo");
    let first = parse(&demo.snapshot_json().expect("snapshot"));
    assert_eq!(first["runs"].as_array().map(Vec::len), Some(4));
    assert_eq!(first["runs"][0]["completed"], 0);
    let mut n = 0;
    while demo.step_ms(1.0) {
        n += 1;
        assert!(n < 100_000);
    }
    let last = parse(&demo.snapshot_json().expect("snapshot"));
    for r in last["runs"].as_array().expect("runs") {
        assert_eq!(r["running"], false);
        assert!(r["flows"].as_u64().expect("flows") > 0);
        assert_eq!(r["completed"], r["flows"]);
        assert!(r["p50"].as_f64().expect("p50") >= 1.0);
        assert!(r["p99"].as_f64().expect("p99") >= r["p50"].as_f64().expect("p50"));
        assert_eq!(r["paths"].as_array().map(Vec::len), Some(6));
    }
    // The same numbers as the batch simulator (`lcmp sim`'s Experiment::run).
    let exp = lcmp_sim::experiment::Experiment {
        topology: lcmp_tables::Topology::embedded("testbed8").expect("embedded"),
        workload: lcmp_sim::workload::Workload::embedded("websearch").expect("embedded"),
        pairs: lcmp_sim::traffic::Pairs::One { src: 1, dst: 8 },
        reference: lcmp_sim::experiment::LoadReference::Nic,
        loads: vec![0.5],
        windows_us: vec![5000.0],
        schemes: vec![
            lcmp_sim::experiment::SchemeSpec::Ecmp,
            lcmp_sim::experiment::SchemeSpec::Ucmp,
            lcmp_sim::experiment::SchemeSpec::Lcmp,
            lcmp_sim::experiment::SchemeSpec::LcmpTuned,
        ],
        seeds: vec![3],
        tables: lcmp_sim::experiment::Experiment::default_tables(),
        sports: lcmp_sim::traffic::SourcePorts::Random,
        engine: lcmp_sim::engine::EngineConfig::default(),
        focus: None,
        pair_flows: None,
        bins: 1,
    };
    let batch = exp.run(1, &|| {}).expect("runs");
    for (r, b) in last["runs"].as_array().expect("runs").iter().zip(&batch) {
        assert_eq!(r["scheme"], b.scheme.as_str());
        assert_eq!(r["p50"].as_f64(), Some(b.p50));
        assert_eq!(r["p99"].as_f64(), Some(b.p99));
        assert_eq!(r["completed"].as_u64(), Some(b.completed as u64));
    }
}
