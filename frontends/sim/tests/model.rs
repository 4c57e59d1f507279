//! Model checks of the engine: ideal FCT alone, conservation of
//! bytes, capacity and buffer bounds, determinism, and CLI errors.

use lcmp_sim::engine::{self, EngineConfig, FlowSpec};
use lcmp_sim::experiment::{Experiment, SchemeSpec};
use lcmp_sim::network::Network;
use lcmp_sim::rng::Pcg32;
use lcmp_sim::traffic::{generate, Pairs, TrafficSpec};
use lcmp_sim::workload::Workload;
use lcmp_tables::{BuildOptions, Topology};

fn two_dcs(buffer: u64) -> Topology {
    Topology::from_json(&format!(
        r#"{{"name":"two","buffer_bytes":{buffer},
        "dcs":[{{"id":1,"name":"A"}},{{"id":2,"name":"B"}}],
        "links":[{{"a":1,"b":2,"capacity_bps":100000000000,"delay_us":5000}}]}}"#
    ))
    .expect("valid topology")
}

fn flow(start_us: f64, src: u16, dst: u16, size: u64) -> FlowSpec {
    FlowSpec {
        start_us,
        src_dc: src,
        dst_dc: dst,
        src_host: 0,
        dst_host: 0,
        sport: 4000,
        size,
    }
}

#[test]
fn a_flow_alone_on_the_shortest_path_has_slowdown_one() {
    let net = Network::new(&two_dcs(1 << 30), &BuildOptions::default()).expect("network");
    for size in [1_000u64, 100_000, 10_000_000, 30_000_000] {
        let out = engine::run(
            &net,
            &EngineConfig::default(),
            &[flow(123.4, 1, 2, size)],
            1e6,
        )
        .expect("run");
        let f = &out.flows[0];
        let slowdown = f.fct_us.expect("completed") / f.ideal_us;
        assert!(
            (slowdown - 1.0).abs() < 0.01,
            "size {size}: slowdown {slowdown}"
        );
        assert!(slowdown >= 1.0 - 1e-9, "faster than ideal: {slowdown}");
    }
    // testbed8: a small flow from DC1 to DC6 takes the direct 5 ms link.
    let topo = Topology::embedded("testbed8").expect("embedded");
    let net = Network::new(&topo, &BuildOptions::default()).expect("network");
    let out = engine::run(
        &net,
        &EngineConfig::default(),
        &[flow(0.0, 1, 6, 50_000)],
        1e6,
    )
    .expect("run");
    let f = &out.flows[0];
    let slowdown = f.fct_us.expect("completed") / f.ideal_us;
    assert!((slowdown - 1.0).abs() < 0.01, "slowdown {slowdown}");
}

fn paper_flows(load: f64, seed: u64) -> Vec<FlowSpec> {
    let spec = TrafficSpec {
        pairs: Pairs::One { src: 1, dst: 8 },
        load,
        reference_bps: 1.6e12,
        window_us: WINDOW_US,
        hosts_per_dc: 16,
        sports: lcmp_sim::traffic::SourcePorts::Random,
    };
    let w = Workload::embedded("websearch").expect("embedded");
    generate(&spec, &w, &[1, 8], &mut Pcg32::new(seed, 0))
}

fn check_bounds(net: &Network, out: &engine::RunOutput) {
    assert_eq!(
        out.bytes_delivered, out.bytes_offered,
        "bytes lost or invented"
    );
    assert!(
        out.flows.iter().all(|f| f.fct_us.is_some()),
        "a flow did not finish"
    );
    assert!(out.queues_within_buffer);
    for (l, s) in net.links.iter().zip(&out.links) {
        assert!(s.max_step_bytes <= s.step_bound_bytes, "{l:?}: {s:?}");
        assert!(s.max_queue_bytes <= l.buffer_bytes, "{l:?}: {s:?}");
        let cap_bytes = l.capacity_bps as f64 / 8.0 * out.end_us * 1e-6;
        assert!(
            s.bytes as f64 <= cap_bytes + 1.0,
            "{l:?} carried more than its capacity"
        );
        let window_bytes = l.capacity_bps as f64 / 8.0 * WINDOW_US * 1e-6;
        assert!(
            s.served_in_window as f64 <= window_bytes + 1.0,
            "{l:?} over capacity in the window"
        );
    }
}

const WINDOW_US: f64 = 70_000.0;

#[test]
fn bytes_are_conserved_and_links_and_queues_stay_in_bounds() {
    let topo = Topology::embedded("testbed8").expect("embedded");
    let flows = paper_flows(0.8, 7);
    assert!(flows.len() > 1000);
    for scheme in [
        SchemeSpec::Ecmp,
        SchemeSpec::Lcmp,
        SchemeSpec::LcmpW,
        SchemeSpec::LcmpT,
    ] {
        let (s, opts) = scheme.settings(&Experiment::default_tables());
        let net = Network::new(&topo, &opts).expect("network");
        let cfg = EngineConfig {
            scheme: s,
            ..Default::default()
        };
        let out = engine::run(&net, &cfg, &flows, WINDOW_US).expect("run");
        check_bounds(&net, &out);
        // The 25 Gbps ports really queue at 80 % load.
        assert!(out.links.iter().any(|s| s.max_queue_bytes > 100_000_000));
    }
}

#[test]
fn small_buffers_hold_senders_back_without_loss() {
    // 2 MB buffers: back-pressure must engage, and nothing may be lost.
    let mut topo = Topology::embedded("testbed8").expect("embedded");
    topo.buffer_bytes = 2_000_000;
    let net = Network::new(&topo, &BuildOptions::default()).expect("network");
    let mut flows = paper_flows(0.8, 3);
    // 20 ms of arrivals are plenty to fill 2 MB buffers (and keep the test fast).
    flows.retain(|f| f.start_us < 20_000.0);
    let out = engine::run(&net, &EngineConfig::default(), &flows, WINDOW_US).expect("run");
    check_bounds(&net, &out);
    assert!(
        out.links.iter().any(|s| s.max_queue_bytes > 1_900_000),
        "buffers never filled"
    );
    // A two-hop chain where the second hop is the bottleneck: the first
    // hop's queue must hold the excess (lossless back-pressure upstream).
    let chain = Topology::from_json(
        r#"{"name":"chain","buffer_bytes":1000000,
        "dcs":[{"id":1,"name":"A"},{"id":2,"name":"B"},{"id":3,"name":"C"}],
        "links":[{"a":1,"b":2,"capacity_bps":100000000000,"delay_us":1000},
                 {"a":2,"b":3,"capacity_bps":10000000000,"delay_us":1000}]}"#,
    )
    .expect("valid");
    let net = Network::new(&chain, &BuildOptions::default()).expect("network");
    let out = engine::run(
        &net,
        &EngineConfig::default(),
        &[flow(0.0, 1, 3, 20_000_000)],
        1e6,
    )
    .expect("run");
    check_bounds(&net, &out);
    let a_b = net
        .links
        .iter()
        .position(|l| (l.from, l.to) == (1, 2))
        .expect("link");
    assert!(
        out.links[a_b].max_queue_bytes > 900_000,
        "no upstream back-pressure"
    );
    // 20 MB through 10 Gbps takes at least 16 ms.
    assert!(out.flows[0].fct_us.expect("done") > 16_000.0);
}

fn small_experiment(seed: u64) -> Experiment {
    Experiment {
        topology: Topology::embedded("testbed8").expect("embedded"),
        workload: Workload::embedded("websearch").expect("embedded"),
        pairs: Pairs::One { src: 1, dst: 8 },
        reference: lcmp_sim::experiment::LoadReference::Nic,
        loads: vec![0.3, 0.8],
        windows_us: vec![30_000.0, 15_000.0],
        schemes: vec![SchemeSpec::Ecmp, SchemeSpec::Ucmp, SchemeSpec::Lcmp],
        seeds: vec![seed, seed + 1],
        tables: Experiment::default_tables(),
        sports: lcmp_sim::traffic::SourcePorts::Random,
        engine: EngineConfig::default(),
        focus: None,
        pair_flows: None,
        bins: 8,
    }
}

/// A flow-cache size the core refuses stops both models' runs with one
/// clear error (before: the switch was dropped and every later DC's
/// switch took the wrong DC's place).
#[test]
fn a_refused_flow_cache_size_stops_the_run_with_an_error() {
    for model in [engine::Model::Fluid, engine::Model::Packet] {
        let mut exp = small_experiment(1);
        exp.loads = vec![0.3];
        exp.windows_us = vec![1_000.0];
        exp.engine.model = model;
        exp.engine.flow_slots = Some(100);
        match exp.run(2, &|| {}) {
            Err(lcmp_sim::SimError::Config(m)) => {
                assert!(m.contains("flow cache of 100 slots"), "{m}");
                assert!(!m.contains('\n'), "{m}");
            }
            other => panic!("{model:?}: {:?}", other.map(|v| v.len())),
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_results() {
    let strip = |mut v: Vec<lcmp_sim::stats::RunResult>| {
        for r in &mut v {
            r.wall_time_s = 0.0;
        }
        v
    };
    let a = strip(small_experiment(11).run(2, &|| {}).expect("runs"));
    let b = strip(small_experiment(11).run(1, &|| {}).expect("runs"));
    assert_eq!(a.len(), 12);
    assert_eq!(a, b, "same seed, different results");
    let c = strip(small_experiment(12).run(2, &|| {}).expect("runs"));
    assert_ne!(a, c, "a different seed changed nothing");
}

#[test]
fn schemes_route_as_the_core_decides() {
    let results = small_experiment(5).run(2, &|| {}).expect("runs");
    let share = |scheme: &str, link: &str| -> f64 {
        let r = results
            .iter()
            .find(|r| r.scheme == scheme && r.load == 0.3)
            .expect("run");
        r.links
            .iter()
            .find(|l| format!("{}->{}", l.from, l.to) == link)
            .map_or(0.0, |l| l.flow_share)
    };
    // UCMP: only the two 200 Gbps paths.
    assert!(share("ucmp", "DC1->DC4") == 0.0 && share("ucmp", "DC1->DC2") > 0.3);
    // ECMP: all six paths.
    for dc in 2..=7 {
        assert!(share("ecmp", &format!("DC1->DC{dc}")) > 0.08, "ecmp DC{dc}");
    }
    // LCMP with the paper's weights keeps DC2, DC4, DC6 (never the 250 ms DC3).
    assert_eq!(share("lcmp", "DC1->DC3"), 0.0);
    assert!(share("lcmp", "DC1->DC6") > 0.25);
}

#[test]
fn queues_are_fifo() {
    // A 10 MB flow at 100 Gbps into a 10 Gbps link; 100 µs later a 1 KB
    // flow arrives. Ahead of it: the big flow's first 110 µs (1.375 MB, its
    // bytes of the arrival step included) less the 112.5 KB served since
    // the first step, about 1.26 MB, so it waits about 1,010 µs at 10 Gbps.
    // Processor sharing would let it through in a few µs; a lost byte would
    // leave it unfinished.
    let topo = Topology::from_json(
        r#"{"name":"slow","buffer_bytes":1000000000,
        "dcs":[{"id":1,"name":"A"},{"id":2,"name":"B"}],
        "links":[{"a":1,"b":2,"capacity_bps":10000000000,"delay_us":1000}]}"#,
    )
    .expect("valid");
    let net = Network::new(&topo, &BuildOptions::default()).expect("network");
    let mut small = flow(100.0, 1, 2, 1_000);
    small.src_host = 1;
    let out = engine::run(
        &net,
        &EngineConfig::default(),
        &[flow(0.0, 1, 2, 10_000_000), small],
        1e6,
    )
    .expect("run");
    let wait = out.flows[1].fct_us.expect("done") - 1_000.0;
    assert!((990.0..=1_030.0).contains(&wait), "waited {wait} µs");
    // The big flow: 10 MB at 10 Gbps is 8 ms, plus the small flow's 1 KB.
    let big = out.flows[0].fct_us.expect("done") - 1_000.0;
    assert!((8_000.0..=8_030.0).contains(&big), "big flow took {big} µs");
}
