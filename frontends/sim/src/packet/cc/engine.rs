//! The controllers inside the packet engine (`--cc`): each test runs the
//! real engine (fabric, switches, INT stamps at every egress, ECN, routed
//! acknowledgements, window gate, RTO) on two DCs joined by one link, and
//! reads the flows' controllers and counters as the run goes.

use super::CcKind;
use crate::network::Network;
use crate::packet::ccrun::Ctl;
use crate::packet::{Ev, PacketConfig, Sim, PS_PER_US};
use crate::run::{AckPath, EngineConfig, FlowSpec};
use lcmp_tables::{BuildOptions, Topology};

const G: u64 = 1_000_000_000;

/// Two DCs joined by one link of `capacity_bps` and `delay_us`.
fn two_dcs(capacity_bps: u64, delay_us: u64) -> Network {
    let topo = Topology::from_json(&format!(
        r#"{{"name":"two","buffer_bytes":1073741824,
        "dcs":[{{"id":1,"name":"A"}},{{"id":2,"name":"B"}}],
        "links":[{{"a":1,"b":2,"capacity_bps":{capacity_bps},"delay_us":{delay_us}}}]}}"#
    ))
    .expect("valid topology");
    Network::new(&topo, &BuildOptions::default()).expect("network")
}

/// The artifact's settings with `kind` at every sender, NICs and fabric
/// links at `line_bps` (spine-DCI four times that), routed
/// acknowledgements.
fn config(kind: CcKind, line_bps: u64) -> EngineConfig {
    let packet = PacketConfig {
        intra_bps: line_bps,
        spine_dci_bps: 4 * line_bps,
        ..PacketConfig::DEFAULT
    }
    .with_cc(kind);
    EngineConfig {
        nic_bps: line_bps,
        ack_path: AckPath::Routed,
        packet,
        ..EngineConfig::default()
    }
}

/// A flow of `size` bytes from host `host` of DC 1 to the same host of DC
/// 2, starting at `start_us`.
fn flow(host: u16, size: u64, start_us: f64) -> FlowSpec {
    FlowSpec {
        start_us,
        src_dc: 1,
        dst_dc: 2,
        src_host: host,
        dst_host: host,
        sport: 4000 + host,
        size,
    }
}

/// Runs every event due up to `until_ps` (no further).
fn run_until(sim: &mut Sim, until_ps: u64) {
    while let Some((t, ev)) = sim.queue.peek() {
        if t > until_ps {
            break;
        }
        sim.queue.pop();
        sim.now = t;
        sim.handle(t, ev);
    }
}

fn start(sim: &mut Sim) {
    sim.at(0, Ev::Arrival);
}

/// Flow `f`'s controller.
fn ctl<'s>(sim: &'s Sim, f: usize) -> &'s Ctl {
    &sim.flows[f].cc.as_deref().expect("a --cc flow").ctl
}

/// Flow `f`'s pacing rate now.
fn rate(sim: &Sim, f: usize) -> u64 {
    sim.flows[f].cc.as_deref().expect("a --cc flow").rate_bps()
}

/// Payload bytes flow `f` delivered in `[from, to]` ps (runs the sim to
/// `to`).
fn delivered_between(sim: &mut Sim, f: usize, from: u64, to: u64) -> u64 {
    run_until(sim, from);
    let before = sim.flows[f].delivered;
    run_until(sim, to);
    sim.flows[f].delivered - before
}

fn gbps(bytes: u64, ps: u64) -> f64 {
    bytes as f64 * 8.0 / (ps as f64 * 1e-12) / 1e9
}

/// The payload share of a data packet's wire bytes under `cfg`.
fn payload_share(cfg: &EngineConfig) -> f64 {
    let p = f64::from(cfg.packet.payload_bytes);
    p / (p + f64::from(cfg.packet.header_bytes))
}

/// A flow alone reaches (about) line rate. HPCC aims at η = 0.95 of the
/// busiest hop (`R = R_c·η/u + W_AI` with `u` = the rate over the line
/// rate), so its band is 0.90 to 1.0 of line rate; DCTCP, unmarked, stays
/// at line rate; TIMELY below `T_low` (50 µs) adds and stays at line rate,
/// so its network is 10 µs long (RTT about 33 µs). The delivered payload
/// over the last 2 ms is at least 85 % of what the controller's rate
/// carries (the rest: the window's pauses, ACK spacing).
#[test]
fn a_flow_alone_reaches_line_rate() {
    let line = 10 * G;
    for (kind, delay_us, low) in [
        (CcKind::Hpcc, 1_000, 0.90),
        (CcKind::Dctcp, 1_000, 0.99),
        (CcKind::Timely, 10, 0.99),
    ] {
        let net = two_dcs(line, delay_us);
        let cfg = config(kind, line);
        let specs = [flow(0, 50_000_000, 0.0)];
        let mut sim = Sim::new(&net, &cfg, &specs, 1e9).expect("sim");
        start(&mut sim);
        let (from, to) = (8_000 * PS_PER_US, 10_000 * PS_PER_US);
        let got = gbps(delivered_between(&mut sim, 0, from, to), to - from);
        let r = rate(&sim, 0) as f64;
        assert!(
            r >= low * line as f64 && r <= line as f64,
            "{kind}: rate {r} bps, want {low} to 1.0 of {line}"
        );
        let want = r / 1e9 * payload_share(&cfg);
        assert!(
            got >= 0.85 * want && got <= want * 1.01,
            "{kind}: {got:.2} Gbps of payload, the rate carries {want:.2}"
        );
    }
}

/// The records that ride with a flow's packets (HPCC's stamps, TIMELY's
/// send times) are held while its packets and acknowledgements are on
/// their way, and their memory is freed when it is done (a ring keeps
/// its slots when its records go); DCTCP keeps none.
#[test]
fn a_done_flow_holds_no_records() {
    let line = 10 * G;
    for (kind, kept) in [
        (CcKind::Hpcc, true),
        (CcKind::Timely, true),
        (CcKind::Dctcp, false),
    ] {
        let net = two_dcs(line, 100);
        let cfg = config(kind, line);
        let specs = [flow(0, 2_000_000, 0.0)];
        let mut sim = Sim::new(&net, &cfg, &specs, 1e9).expect("sim");
        start(&mut sim);
        let held = |sim: &Sim| {
            sim.flows[0]
                .cc
                .as_deref()
                .expect("a --cc flow")
                .records_held()
        };
        // Every stamp carries the line rate of a port it crossed, the
        // first packets' (the first stamp of each rate) included.
        let mut stamps = 0;
        for us in [2, 5, 10, 20, 50, 100, 300] {
            run_until(&mut sim, us * PS_PER_US);
            let rates = sim.cc.as_deref().expect("a run").rates_seen();
            let flow = sim.flows[0].cc.as_deref().expect("a --cc flow");
            let stamped = flow.stamped_line_rates(rates);
            stamps += stamped.len();
            assert!(
                stamped.iter().all(|r| *r > 0 && rates.contains(r)),
                "{kind} at {us} us: {stamped:?} against {rates:?}"
            );
        }
        assert_eq!(stamps > 0, kind == CcKind::Hpcc, "{kind}");
        assert!(!sim.flows[0].done, "{kind}");
        let (live, slots) = held(&sim);
        assert_eq!(live > 100, kept, "{kind}: {live} records");
        assert!(slots >= live, "{kind}");
        run_until(&mut sim, 100_000 * PS_PER_US);
        assert!(sim.flows[0].done, "{kind}");
        assert_eq!(held(&sim), (0, 0), "{kind}");
    }
}

/// TIMELY as the artifact runs it cannot use an inter-DC path: every RTT
/// above `T_high` (500 µs) cuts, so a flow alone on the 1 ms link sinks
/// to `MIN_RATE` (100 Mb/s) — the artifact's behaviour, kept.
#[test]
fn timely_sinks_to_its_floor_above_t_high() {
    let line = 10 * G;
    let net = two_dcs(line, 1_000);
    let cfg = config(CcKind::Timely, line);
    let specs = [flow(0, 50_000_000, 0.0)];
    let mut sim = Sim::new(&net, &cfg, &specs, 1e9).expect("sim");
    start(&mut sim);
    run_until(&mut sim, 40_000 * PS_PER_US);
    let r = rate(&sim, 0);
    assert!(r <= 200_000_000, "rate {r} bps after 40 ms");
}

/// Two flows from two hosts of one leaf share one inter-DC link of half
/// their line rate: each gets 35 % to 65 % of the link's payload capacity
/// over the last third, and together at least 75 % of it.
#[test]
fn two_flows_on_one_bottleneck_share_it() {
    let line = 10 * G;
    let link = 5 * G;
    for (kind, delay_us) in [
        (CcKind::Hpcc, 100),
        (CcKind::Dctcp, 100),
        (CcKind::Timely, 10),
    ] {
        let net = two_dcs(link, delay_us);
        let cfg = config(kind, line);
        let specs = [flow(0, 200_000_000, 0.0), flow(1, 200_000_000, 0.0)];
        let mut sim = Sim::new(&net, &cfg, &specs, 1e9).expect("sim");
        start(&mut sim);
        let (from, to) = (20_000 * PS_PER_US, 30_000 * PS_PER_US);
        run_until(&mut sim, from);
        let before = [sim.flows[0].delivered, sim.flows[1].delivered];
        run_until(&mut sim, to);
        let got: Vec<f64> = (0..2)
            .map(|i| gbps(sim.flows[i].delivered - before[i], to - from))
            .collect();
        let cap = link as f64 / 1e9 * payload_share(&cfg);
        for (i, g) in got.iter().enumerate() {
            assert!(
                (0.35 * cap..=0.65 * cap).contains(g),
                "{kind}: flow {i} got {g:.2} Gbps of {cap:.2} ({got:?})"
            );
        }
        assert!(
            got[0] + got[1] >= 0.75 * cap,
            "{kind}: {got:?} of {cap:.2} Gbps"
        );
    }
}

/// The DCI switch's egress onto the inter-DC link.
fn dci_egress(sim: &Sim) -> (u32, u16) {
    let node = sim.fab.dci[0];
    let (_, port) = sim.fab.core_ports[0][0];
    (node, port)
}

/// HPCC's window follows the INT the switches stamp: a step in the queue
/// the inter-DC egress reports (a standing backlog of one base window
/// added to its count, no packets) makes `U = R/B + q/(B·T)` at least 1 at
/// that hop whatever the rate, so each RTT's commit cuts `R_c` by `η/u`
/// and within ten RTTs the rate and the window (the base window scaled by
/// the rate) are below a fifth of line rate; the step taken away, `u`
/// falls to the rate's share and the next commits take the rate back
/// above 0.9 of line rate within ten RTTs.
#[test]
fn hpccs_window_follows_the_int_queue_step() {
    let line = 10 * G;
    let net = two_dcs(line, 100);
    let cfg = config(CcKind::Hpcc, line);
    let specs = [flow(0, 1_000_000_000, 0.0)];
    let mut sim = Sim::new(&net, &cfg, &specs, 1e9).expect("sim");
    start(&mut sim);
    let window = |sim: &Sim| {
        let Ctl::Hpcc(h) = ctl(sim, 0) else {
            panic!("an HPCC flow")
        };
        let w = super::Controller::window_bytes(h).expect("a window");
        (w, h.utilisation())
    };
    let base_win = sim.cc.as_deref().expect("--cc run").base_win;
    let rtt = sim.cc.as_deref().expect("--cc run").base_rtt_ps;
    let mut t = 3_000 * PS_PER_US;
    run_until(&mut sim, t);
    let steady = rate(&sim, 0);
    assert!(steady as f64 >= 0.9 * line as f64, "{steady}");
    let (n, p) = dci_egress(&sim);
    sim.fab.port_mut(n, p).expect("egress").data_bytes += base_win;
    t += 10 * rtt;
    run_until(&mut sim, t);
    let r = rate(&sim, 0) as f64 / line as f64;
    let (w, u) = window(&sim);
    assert!(r <= 0.2, "rate {r} of line ten RTTs into the step");
    assert!(u > 1.0, "u {u} with a base window queued");
    // The sender holds to the window: its unacknowledged bytes stay
    // within it (one packet over at most, the one that filled it).
    for k in 1..=20 {
        run_until(&mut sim, t + k * rtt / 20);
        let fl = &sim.flows[0];
        let in_flight = u64::from(fl.snd_nxt - fl.snd_una) * u64::from(cfg.packet.payload_bytes);
        let (w, _) = window(&sim);
        assert!(
            in_flight <= w + u64::from(cfg.packet.payload_bytes),
            "{in_flight} B in flight, window {w} B"
        );
    }
    t += rtt;
    assert!(
        (w as f64 / base_win as f64 - r).abs() < 0.01,
        "window {w} of {base_win} at rate {r}"
    );
    sim.fab.port_mut(n, p).expect("egress").data_bytes -= base_win;
    t += 10 * rtt;
    run_until(&mut sim, t);
    let r = rate(&sim, 0) as f64 / line as f64;
    let (w, u) = window(&sim);
    assert!(r >= 0.9, "rate {r} of line ten RTTs after the step");
    assert!(u < 1.0, "u {u} without the queue");
    assert!(
        (w as f64 / base_win as f64 - r).abs() < 0.01,
        "window {w} of {base_win} at rate {r}"
    );
}

/// DCTCP's α follows the fraction of marked packets: a standing backlog at
/// the inter-DC egress halfway between `kmin` and `kmax` marks each packet
/// with probability about `pmax / 2` (0.1), and after about 1 200 windows
/// (`g` = 1/256; a 33 µs RTT for 40 ms) α is within 0.05 of the fraction
/// the engine marked; with no backlog α has decayed below 0.05.
#[test]
fn dctcps_alpha_follows_the_ecn_fraction() {
    let line = 10 * G;
    for backlog in [false, true] {
        let net = two_dcs(line, 10);
        let cfg = config(CcKind::Dctcp, line);
        let specs = [flow(0, 1_000_000_000, 0.0)];
        let mut sim = Sim::new(&net, &cfg, &specs, 1e9).expect("sim");
        start(&mut sim);
        if backlog {
            let (n, p) = dci_egress(&sim);
            let port = sim.fab.port_mut(n, p).expect("egress");
            port.data_bytes += (port.ecn.kmin + port.ecn.kmax) / 2;
        }
        run_until(&mut sim, 40_000 * PS_PER_US);
        let Ctl::Dctcp(d) = ctl(&sim, 0) else {
            panic!("a DCTCP flow")
        };
        let frac = sim.stats.ecn_marked as f64 / sim.stats.data_packets as f64;
        if backlog {
            assert!((0.07..=0.14).contains(&frac), "marked {frac}");
            assert!(
                (d.alpha() - frac).abs() < 0.05,
                "α {} against {frac} marked",
                d.alpha()
            );
        } else {
            assert!(d.alpha() < 0.05, "α {} with {frac} marked", d.alpha());
        }
    }
}

/// TIMELY reacts to the RTT gradient: between `T_low` and `T_high` (a
/// 50 µs link, RTT about 113 µs), a flow alone adds to line rate; a step
/// of 30 µs in the data direction's delay (RTT + 30 µs) makes the smoothed
/// difference `α · 30` = 26.25 µs, a gradient of 1.3 over `minRTT` (20
/// µs), and the update cuts the rate by `max(0, 1 − β·1.3)` to its
/// floor. With the RTT flat again the difference decays by `1 − α` an
/// update but stays positive, so the artifact's rule (`gradient ≤ 0` to
/// add) keeps cutting: the rate stays at the floor (TIMELY's, kept).
#[test]
fn timely_cuts_on_a_positive_rtt_gradient() {
    let line = 10 * G;
    let net = two_dcs(line, 50);
    let cfg = config(CcKind::Timely, line);
    let specs = [flow(0, 1_000_000_000, 0.0)];
    let mut sim = Sim::new(&net, &cfg, &specs, 1e9).expect("sim");
    start(&mut sim);
    let diff = |sim: &Sim| {
        let Ctl::Timely(t) = ctl(sim, 0) else {
            panic!("a TIMELY flow")
        };
        t.rtt_diff_ps()
    };
    run_until(&mut sim, 5_000 * PS_PER_US);
    assert!(rate(&sim, 0) >= line * 99 / 100, "{}", rate(&sim, 0));
    assert!(diff(&sim).abs() < 1e6, "RTT difference {} ps", diff(&sim));
    let (n, p) = dci_egress(&sim);
    sim.fab.port_mut(n, p).expect("egress").delay_ps += 30 * PS_PER_US;
    let (mut lowest, mut peak) = (u64::MAX, 0.0f64);
    for k in 1..=40 {
        run_until(&mut sim, 5_000 * PS_PER_US + k * 10 * PS_PER_US);
        lowest = lowest.min(rate(&sim, 0));
        peak = peak.max(diff(&sim));
    }
    assert!(lowest <= line / 50, "lowest rate {lowest} after the step");
    assert!(
        (peak - 0.875 * 30e6).abs() < 2e6,
        "peak RTT difference {peak} ps"
    );
    run_until(&mut sim, 10_000 * PS_PER_US);
    let d = diff(&sim);
    assert!(
        d > 0.0 && d < 1e3,
        "RTT difference {d} ps 5 ms after the step"
    );
    assert!(rate(&sim, 0) <= line / 50, "{}", rate(&sim, 0));
}

/// A flow whose acknowledgements stop while its window is full still
/// finishes: the link to its destination loses everything for 3 ms, the
/// sender stalls on its window with nothing to acknowledge, and the RTO
/// (here 10 ms) sends it back to its first unacknowledged packet.
#[test]
fn a_stalled_window_is_recovered_by_the_rto() {
    let line = 10 * G;
    for kind in [CcKind::Hpcc, CcKind::Timely, CcKind::Dctcp] {
        let net = two_dcs(line, 100);
        let mut cfg = config(kind, line);
        cfg.packet.rto_ps = 10_000 * PS_PER_US;
        let specs = [flow(0, 5_000_000, 0.0)];
        let mut sim = Sim::new(&net, &cfg, &specs, 1e9).expect("sim");
        start(&mut sim);
        let lossy = dci_egress(&sim);
        let (from, to) = (200 * PS_PER_US, 3_200 * PS_PER_US);
        while let Some((t, ev)) = sim.queue.pop() {
            sim.now = t;
            if let Ev::Deliver(n, p) = ev {
                if (n, p) == lossy && (from..to).contains(&t) {
                    // The wire's head is lost; the next one is due as
                    // `deliver` would schedule it.
                    let port = sim.fab.port_mut(n, p).expect("egress");
                    port.wire.pop_front();
                    if let Some(&(next, _)) = port.wire.front() {
                        sim.at(next.max(t), ev);
                    }
                    continue;
                }
            }
            sim.handle(t, ev);
            if sim.finished == specs.len() || t > 100_000 * PS_PER_US {
                break;
            }
        }
        let fct = sim.outcomes[0].fct_us;
        assert!(
            fct.is_some_and(|f| f > 10_000.0),
            "{kind}: FCT {fct:?} µs (the RTO is 10 ms)"
        );
        assert!(sim.stats.retransmitted > 0, "{kind}: no retransmission");
    }
}
