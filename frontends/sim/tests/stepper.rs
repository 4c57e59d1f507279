//! `engine::Stepper` (the wasm demo's step-by-step run) gives exactly what
//! `engine::run` gives, however the steps are cut.

use lcmp_sim::engine::{self, EngineConfig, Stepper};
use lcmp_sim::network::Network;
use lcmp_sim::rng::Pcg32;
use lcmp_sim::traffic::{generate, Pairs, TrafficSpec};
use lcmp_sim::workload::Workload;
use lcmp_tables::{BuildOptions, Topology};

#[test]
fn stepping_in_chunks_equals_one_run() {
    let topo = Topology::embedded("testbed8").expect("embedded");
    let net = Network::new(&topo, &BuildOptions::default()).expect("network");
    let spec = TrafficSpec {
        pairs: Pairs::One { src: 1, dst: 8 },
        load: 0.8,
        reference_bps: 16.0 * 100e9,
        window_us: 10_000.0,
        hosts_per_dc: 16,
        sports: lcmp_sim::traffic::SourcePorts::Random,
    };
    let wl = Workload::embedded("websearch").expect("embedded");
    let flows = generate(&spec, &wl, &[1, 2, 3, 4, 5, 6, 7, 8], &mut Pcg32::new(3, 0));
    assert!(flows.len() > 20);
    let cfg = EngineConfig::default();
    let whole = engine::run(&net, &cfg, &flows, spec.window_us).expect("run");
    for chunk_us in [10.0, 777.0, 5_000.0] {
        let mut s =
            Stepper::new(net.clone(), cfg.clone(), flows.clone(), spec.window_us).expect("stepper");
        let mut until = 0.0;
        let mut saw_queue = false;
        while s.advance(until) {
            until += chunk_us;
            assert!(
                s.now_us() <= until + f64::from(cfg.dt_us)
                    || s.queue_bytes().iter().all(|&q| q == 0)
            );
            saw_queue |= s.queue_bytes().iter().any(|&q| q > 0);
            assert!(until < 1e9, "the run ends");
        }
        assert!(saw_queue || chunk_us > 1000.0);
        assert!(!s.running());
        assert_eq!(s.output(), whole, "chunk {chunk_us} us");
    }
    // Part-way, unfinished flows have no FCT yet.
    let mut s = Stepper::new(net, cfg, flows, spec.window_us).expect("stepper");
    s.advance(2_000.0);
    let part = s.output();
    assert!(part.flows.iter().any(|f| f.fct_us.is_none()));
    assert!(part.bytes_delivered < whole.bytes_delivered);
}
