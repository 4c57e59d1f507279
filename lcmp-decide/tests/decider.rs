//! Decision scenarios on testbed8's DC1 switch, with expectations computed
//! by hand from Alg. 1-2 and Eq. 1-5 (see the comments).

mod common;

use common::*;
use lcmp_decide::*;

#[test]
fn idle_testbed8_keeps_the_three_cheapest() {
    // C_path by hand (first hop, 1 ms units, shift 5, w_dl=3, w_lc=1, S=2):
    //   DC2 (200G, 25ms): ds 199, cs 128 -> 181;  C = 3*181 >> 2 = 135
    //   DC3 (200G,250ms): ds 255, cs 128 -> 223;  C = 167
    //   DC4 (100G, 10ms): ds  79, cs 204 -> 110;  C =  82
    //   DC5 (100G,100ms): ds 255, cs 204 -> 242;  C = 181
    //   DC6 ( 25G,  5ms): ds  39, cs 255 ->  93;  C =  69
    //   DC7 ( 25G, 50ms): ds 255, cs 255 -> 255;  C = 191
    let d = decider(Scheme::Lcmp, Params::PAPER);
    let e = d.explain(t(0), &flow(1), DC8);
    let c_path: Vec<u8> = e.candidates.iter().map(|c| c.c_path).collect();
    assert_eq!(c_path, [181, 223, 110, 242, 93, 255]);
    let cost: Vec<u8> = e.candidates.iter().map(|c| c.cost).collect();
    assert_eq!(cost, [135, 167, 82, 181, 69, 191]);
    let rank: Vec<Option<u8>> = e.candidates.iter().map(|c| c.rank).collect();
    assert_eq!(rank, [Some(2), Some(3), Some(1), Some(4), Some(0), Some(5)]);
    // Lower half of six = three: DC6, DC4, DC2 (ports 4, 2, 0).
    assert_eq!(kept_ports(&e), [0, 2, 4]);
    assert_eq!(e.candidates[1].cut_reason, Some(CutReason::UpperHalf));
    assert_eq!(e.reason, Reason::HashInKept);
    // The pick is kept[hash % 3] in sorted order (DC6, DC4, DC2).
    let sorted = [4u8, 2, 0];
    assert_eq!(e.chosen, Some(PortId(sorted[(e.hash % 3) as usize])));
}

/// `Pick::ScaledHash` (the Tofino data plane's pick) keeps the same kept
/// set and picks `kept[((hash >> 16) * 3) >> 16]`, for ECMP too.
#[test]
fn scaled_hash_pick_scales_the_top_bits() {
    let params = Params::PAPER.with_pick(Pick::ScaledHash);
    let d = decider(Scheme::Lcmp, params);
    let sorted = [4u8, 2, 0];
    let mut differs = 0;
    for i in 0..200 {
        let e = d.explain(t(0), &flow(i), DC8);
        assert_eq!(kept_ports(&e), [0, 2, 4]);
        assert_eq!(e.reason, Reason::HashInKept);
        let scaled = ((e.hash >> 16) * 3) >> 16;
        assert_eq!(e.chosen, Some(PortId(sorted[scaled as usize])));
        differs += usize::from(scaled != e.hash % 3);
    }
    assert!(differs > 50, "the two picks must differ for many flows");
    let d = decider(Scheme::Ecmp, params);
    let e = d.explain(t(0), &flow(5), DC8);
    assert_eq!(e.chosen, Some(PortId((((e.hash >> 16) * 6) >> 16) as u8)));
}

#[test]
fn full_queue_moves_a_kept_port_out_when_congestion_can_outweigh_path() {
    // With the paper's 3:1 fusion the congestion term adds at most 31 and
    // cannot reorder testbed8; with alpha:beta = 1:3 (§7.2) it can.
    let params = Params::PAPER.with_weights(Weights::PAPER.with_alpha(1).with_beta(3));
    let mut d = decider(Scheme::Lcmp, params);
    let idle = d.explain(t(0), &flow(1), DC8);
    // Idle: C = C_path >> 2: DC6 23, DC4 27, DC2 45, DC3 55, DC5 60, DC7 63.
    assert_eq!(kept_ports(&idle), [0, 2, 4]);
    // Fill DC6's queue to 95 % in one 1 ms sample: Q = 255; the trend jumps
    // by 4.75 GB / 8, far above 25 Gbps * 1 ms: T = 255; D = 0.
    d.sample(t(1000), PortId(4), 4_750_000_000)
        .expect("known port");
    let e = d.explain(t(1000), &flow(1), DC8);
    let dc6 = &e.candidates[4];
    assert_eq!((dc6.q, dc6.t, dc6.d), (255, 255, 0));
    assert_eq!(dc6.c_cong, 95); // (2 * 255 + 255) >> 3
    assert_eq!(dc6.cost, 94); // (93 + 3 * 95) >> 2
    assert_eq!(kept_ports(&e), [0, 1, 2], "DC6 leaves, DC3 enters");
    assert_eq!(dc6.cut_reason, Some(CutReason::UpperHalf));
}

#[test]
fn paper_weights_cannot_move_dc6_out() {
    // The measurement behind docs/simulator.md's "Beyond the paper" study:
    // even Q = T = D = 255 adds only (4 * 255 >> 3) = 127 to C_cong, i.e.
    // 31 to C, and DC6 (69 -> 101) stays below DC2 (135).
    let mut d = decider(Scheme::Lcmp, Params::PAPER);
    for i in 0..2000u32 {
        d.sample(
            t(1000 * (i + 1)),
            PortId(4),
            4_750_000_000 + u64::from(i) * 1_000_000,
        )
        .expect("known port");
    }
    let e = d.explain(t(2_000_000), &flow(1), DC8);
    assert_eq!(e.candidates[4].d, 255);
    assert!(e.candidates[4].kept);
}

#[test]
fn everything_over_the_cut_takes_the_minimum_cost_candidate() {
    // Cut at 60: every idle cost (69..191) is at or above it.
    let params = Params::PAPER.with_cut(60);
    let mut d = decider(Scheme::Lcmp, params);
    let e = d.explain(t(0), &flow(7), DC8);
    assert!(e.candidates.iter().all(|c| !c.kept));
    assert_eq!(e.reason, Reason::MinCostFallback);
    assert_eq!(e.chosen, Some(PortId(4))); // DC6, cost 69
    let decision = d.on_packet(t(0), &flow(7), DC8);
    assert_eq!(
        decision,
        Decision::New {
            port: PortId(4),
            reason: Reason::MinCostFallback,
            failover: false
        }
    );
    assert_eq!(d.counters().min_cost_fallbacks, 1);
}

#[test]
fn down_ports_are_never_chosen_and_pinned_flows_fail_over() {
    let mut d = decider(Scheme::Lcmp, Params::PAPER);
    let mut pinned = Vec::new();
    for i in 0..300 {
        let p = d.on_packet(t(i), &flow(i), DC8).port().expect("route");
        pinned.push(p);
    }
    // Take DC6 and DC4 down: the five live candidates keep two (5 / 2).
    d.set_port_up(PortId(4), false).expect("port");
    d.set_port_up(PortId(2), false).expect("port");
    let e = d.explain(t(400), &flow(1000), DC8);
    assert_eq!(kept_ports(&e), [0, 1]); // DC2 135, DC3 167
    for i in 0..300 {
        let decision = d.on_packet(t(500 + i), &flow(i), DC8);
        let port = decision.port().expect("route");
        assert!(port != PortId(4) && port != PortId(2));
        let before = pinned[i as usize];
        if before == PortId(4) || before == PortId(2) {
            assert!(matches!(decision, Decision::New { failover: true, .. }));
        } else {
            assert_eq!(decision, Decision::Hit(before), "live pins never move");
        }
    }
    let c = d.counters();
    assert_eq!(
        c.packets,
        c.hits + c.new_flows + c.failovers + c.withdrawals + c.unpinned + c.no_route
    );
    assert!(c.failovers > 0);
    // Everything down: NoRoute (the pin stays for when a port is back).
    for p in 0..6 {
        d.set_port_up(PortId(p), false).expect("port");
    }
    assert_eq!(
        d.on_packet(t(900), &flow(1), DC8),
        Decision::NoRoute(Reason::NoLiveCandidate)
    );
    assert_eq!(
        d.on_packet(t(900), &flow(1), GroupId(99)),
        Decision::NoRoute(Reason::UnknownGroup)
    );
}

#[test]
fn no_tables_means_no_route_and_outdated_tables_mean_ecmp() {
    let mut empty: Decider<8, 64> = Decider::new(DeciderConfig::default());
    assert_eq!(
        empty.on_packet(t(0), &flow(1), DC8),
        Decision::NoRoute(Reason::UnknownGroup)
    );
    let mut d = decider(Scheme::Lcmp, Params::PAPER);
    d.set_tables_current(false);
    let e = d.explain(t(0), &flow(3), DC8);
    assert_eq!(e.reason, Reason::EcmpFallback);
    assert_eq!(e.chosen, Some(PortId((e.hash % 6) as u8)));
    let _ = d.on_packet(t(0), &flow(3), DC8);
    assert_eq!(d.counters().ecmp_fallbacks, 1);
}

#[test]
fn baselines_ecmp_and_ucmp() {
    let d = decider(Scheme::Ecmp, Params::PAPER);
    let e = d.explain(t(0), &flow(5), DC8);
    assert_eq!(e.chosen, Some(PortId((e.hash % 6) as u8)));
    assert_eq!(kept_ports(&e).len(), 6);
    // UCMP: only the two 200 Gbps candidates (ports 0 and 1).
    let d = decider(Scheme::Ucmp, Params::PAPER);
    let e = d.explain(t(0), &flow(5), DC8);
    assert_eq!(kept_ports(&e), [0, 1]);
    assert_eq!(e.chosen, Some(PortId((e.hash % 2) as u8)));
    assert_eq!(e.candidates[2].cut_reason, Some(CutReason::NotMaxCapacity));
}

#[test]
fn capacity_weighted_pick_follows_capacity_shares() {
    let params = Params::PAPER.with_pick(Pick::CapacityWeighted);
    let d = decider(Scheme::Lcmp, params);
    let mut counts = [0u32; 6];
    for i in 0..7000 {
        let p = d.explain(t(0), &flow(i), DC8).chosen.expect("route");
        counts[usize::from(p.0)] += 1;
    }
    // Kept DC2 (200G), DC4 (100G), DC6 (25G): shares 8/13, 4/13, 1/13.
    let share = |p: usize| f64::from(counts[p]) / 7000.0;
    assert!((share(0) - 8.0 / 13.0).abs() < 0.03, "{counts:?}");
    assert!((share(2) - 4.0 / 13.0).abs() < 0.03, "{counts:?}");
    assert!((share(4) - 1.0 / 13.0).abs() < 0.03, "{counts:?}");
    assert_eq!(counts[1] + counts[3] + counts[5], 0);
}

#[test]
fn hitless_install_keeps_pins_and_uses_new_tables_for_new_flows() {
    let mut d = decider(Scheme::Lcmp, Params::PAPER);
    let first: Vec<PortId> = (0..100)
        .map(|i| d.on_packet(t(i), &flow(i), DC8).port().expect("route"))
        .collect();
    // New tables: DC6 now 500 ms away, so it drops out of the kept set.
    let mut tables = testbed8_dc1(Params::PAPER);
    tables.groups[0].candidates[4].delay_units = 500;
    d.install(&tables).expect("valid");
    for (i, p) in first.iter().enumerate() {
        assert_eq!(d.on_packet(t(200), &flow(i as u32), DC8), Decision::Hit(*p));
    }
    let e = d.explain(t(300), &flow(10_000), DC8);
    assert!(!e.candidates[4].kept);
    // A rejected install changes nothing.
    tables.groups[0].candidates[0].capacity_bps = 0;
    assert!(d.install(&tables).is_err());
    assert!(!d.explain(t(300), &flow(10_000), DC8).candidates[4].kept);
}

#[test]
fn full_cache_refuses_new_flows_and_never_evicts_active_pins() {
    let mut d: Decider<8, 16> = Decider::new(DeciderConfig::default());
    d.install(&testbed8_dc1(Params::PAPER)).expect("valid");
    let mut outcomes = Vec::new();
    for i in 0..64 {
        outcomes.push(d.on_packet(t(i), &flow(i), DC8));
    }
    let c = *d.counters();
    assert_eq!(c.new_flows, 16, "sixteen slots");
    assert_eq!((c.cache_full, c.no_route, c.unpinned), (48, 48, 0));
    assert_eq!(d.flow_cache().len(), 16);
    let refused = outcomes
        .iter()
        .filter(|o| **o == Decision::NoRoute(Reason::CacheFull))
        .count();
    assert_eq!(refused, 48);
    // After the idle timeout, GC frees the slots and new flows pin again.
    let later = t(3_000_000);
    assert_eq!(d.gc(later, 16), 16);
    assert!(matches!(
        d.on_packet(later, &flow(1000), DC8),
        Decision::New { .. }
    ));
}

#[test]
fn full_cache_routes_statelessly_when_configured() {
    let mut d: Decider<8, 16> =
        Decider::new(DeciderConfig::default().with_overflow(Overflow::Stateless));
    d.install(&testbed8_dc1(Params::PAPER)).expect("valid");
    let mut outcomes = Vec::new();
    for i in 0..64 {
        outcomes.push(d.on_packet(t(i), &flow(i), DC8));
    }
    let c = *d.counters();
    assert_eq!(c.new_flows, 16, "sixteen slots");
    assert_eq!((c.cache_full, c.unpinned, c.no_route), (48, 48, 0));
    for (i, o) in outcomes.iter().enumerate() {
        if let Decision::Unpinned(p) = o {
            let e = FlowKey::ecmp_hash(&flow(i as u32), HashAlgorithm::Murmur3, 0);
            assert_eq!(*p, PortId((e % 6) as u8), "stateless ECMP");
        }
    }
}

#[test]
fn samples_and_ports_out_of_range_are_typed_errors() {
    let mut d = decider(Scheme::Lcmp, Params::PAPER);
    assert_eq!(d.sample(t(0), PortId(8), 1), Err(Error::PortOutOfRange(8)));
    assert_eq!(
        d.set_port_up(PortId(200), false),
        Err(Error::PortOutOfRange(200))
    );
    // A sample for a port the tables do not list is refused, as the C
    // ABI's `lcmp_sample` refuses it (LCMP_ERR_NO_SUCH_PORT), and records
    // nothing.
    let before = (d.port_state(PortId(7)).copied(), *d.counters());
    assert_eq!(
        d.sample(t(0), PortId(7), 1_000),
        Err(Error::PortNotInTables(7))
    );
    assert_eq!((d.port_state(PortId(7)).copied(), *d.counters()), before);
}
