//! Quickcheck properties of the decider over random tables, congestion,
//! liveness and flows.

mod common;

use common::*;
use lcmp_decide::flow_cache::SlotStorage;
use lcmp_decide::*;
use quickcheck::{quickcheck, Arbitrary, Gen};

/// A random single-group table set plus inputs.
#[derive(Clone, Debug)]
struct World {
    /// (delay units, capacity Gbps 1..=400) per candidate; 1..=8 candidates.
    cands: Vec<(u32, u64)>,
    weights: Weights,
    /// (port, queue bytes, tick step) samples.
    samples: Vec<(u8, u64, u32)>,
    down: Vec<bool>,
    flows: Vec<u32>,
    scheme: Scheme,
    pick: Pick,
}

impl Arbitrary for World {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = usize::arbitrary(g) % 8 + 1;
        let cands = (0..n)
            .map(|_| (u32::arbitrary(g) % 300, u64::arbitrary(g) % 400 + 1))
            .collect();
        let small = |g: &mut Gen| u32::arbitrary(g) % 5;
        let weights = Weights::PAPER
            .with_alpha(small(g))
            .with_beta(small(g))
            .with_w_dl(small(g))
            .with_w_lc(small(g))
            .with_w_ql(small(g))
            .with_w_tl(small(g))
            .with_w_dp(small(g))
            .with_s_path(u8::arbitrary(g) % 4)
            .with_s_cong(u8::arbitrary(g) % 5)
            .with_s_total(u8::arbitrary(g) % 4);
        let samples = Vec::<(u8, u64, u32)>::arbitrary(g)
            .into_iter()
            .map(|(p, q, dt)| (p % 8, q % 6_000_000_000, dt % 10_000))
            .collect();
        let down = (0..n).map(|_| u8::arbitrary(g) % 4 == 0).collect();
        let scheme = *g
            .choose(&[Scheme::Lcmp, Scheme::Ecmp, Scheme::Ucmp])
            .unwrap_or(&Scheme::Lcmp);
        let pick = *g
            .choose(&[Pick::Hash, Pick::CapacityWeighted, Pick::ScaledHash])
            .unwrap_or(&Pick::Hash);
        World {
            cands,
            weights,
            samples,
            down,
            flows: Vec::arbitrary(g),
            scheme,
            pick,
        }
    }
}

impl World {
    fn tables(&self) -> Tables {
        let mut t = Tables::paper_defaults();
        t.params.weights = self.weights;
        t.params.pick = self.pick;
        let mut g = Group {
            id: DC8,
            candidates: heapless::Vec::new(),
        };
        for (i, (delay, gbps)) in self.cands.iter().enumerate() {
            let id = PortId(i as u8);
            let _ = t.ports.push(PortConfig {
                id,
                rate_bps: gbps * GBPS,
                buffer_bytes: BUFFER,
            });
            let _ = g.candidates.push(Candidate {
                port: id,
                delay_units: *delay,
                capacity_bps: gbps * GBPS,
            });
        }
        let _ = t.groups.push(g);
        t
    }

    /// Installs the tables and applies samples and liveness to `d`; returns
    /// the time reached.
    fn setup<S: SlotStorage>(&self, d: &mut DeciderWith<8, S>) -> u32 {
        d.install(&self.tables())
            .expect("generated tables are valid");
        let mut now = 0u32;
        for (p, q, dt) in &self.samples {
            now = now.wrapping_add(*dt);
            self.sample(d, now, *p, *q);
        }
        for (i, down) in self.down.iter().enumerate() {
            d.set_port_up(PortId(i as u8), !down)
                .expect("ports below 8");
        }
        now
    }

    /// A sample of port `p` (below 8): accepted for a listed port, the
    /// typed error for one the tables do not list (nothing recorded).
    fn sample<S: SlotStorage>(&self, d: &mut DeciderWith<8, S>, now: u32, p: u8, q: u64) {
        let r = d.sample(t(now), PortId(p), q);
        if usize::from(p) < self.cands.len() {
            assert_eq!(r, Ok(()), "listed port {p}");
        } else {
            assert_eq!(r, Err(Error::PortNotInTables(p)), "unlisted port {p}");
        }
    }

    fn config(&self) -> DeciderConfig {
        DeciderConfig::default()
            .with_scheme(self.scheme)
            .with_seed(42)
            .with_hash(HashAlgorithm::Murmur3)
    }

    /// Builds a decider that owns its 256 slots; returns it and the time
    /// reached.
    fn decider(&self) -> (Decider<8, 256>, u32) {
        let mut d = Decider::new(self.config());
        let now = self.setup(&mut d);
        (d, now)
    }

    fn live(&self) -> Vec<PortId> {
        (0..self.cands.len())
            .filter(|i| !self.down[*i])
            .map(|i| PortId(i as u8))
            .collect()
    }
}

/// Evaluates `$body` with `($d, $now)` set up from `$w`, once on a decider
/// that owns its slots and once on one over caller-provided blocks of the
/// same size; true when both are.
macro_rules! on_both {
    ($w:expr, |$d:ident, $now:ident| $body:expr) => {{
        let w = &$w;
        let owned = {
            let (mut $d, $now) = w.decider();
            let _ = &mut $d;
            $body
        };
        let mut blocks = vec![SlotBlock::EMPTY; 256 / 16];
        let borrowed = {
            let mut $d = DeciderRef::<8>::with_slots(w.config(), &mut blocks).expect("16 blocks");
            let $now = w.setup(&mut $d);
            $body
        };
        owned && borrowed
    }};
}

quickcheck! {
    fn chosen_port_is_always_a_live_candidate(w: World) -> bool {
        let live = w.live();
        on_both!(w, |d, now| w.flows.iter().all(|f| match d.on_packet(t(now), &flow(*f), DC8) {
            Decision::NoRoute(Reason::NoLiveCandidate) => live.is_empty(),
            // 256 slots can be full for a flow's two buckets.
            Decision::NoRoute(Reason::CacheFull) => true,
            other => other.port().is_some_and(|p| live.contains(&p)),
        }))
    }

    fn explain_agrees_with_on_packet_and_has_no_side_effects(w: World) -> bool {
        on_both!(w, |d, now| w.flows.iter().all(|f| {
            let before = d.explain(t(now), &flow(*f), DC8);
            let again = d.explain(t(now), &flow(*f), DC8);
            let decided = d.on_packet(t(now), &flow(*f), DC8);
            before == again
                && (before.chosen == decided.port()
                    || before.reason == Reason::Pinned
                    || decided == Decision::NoRoute(Reason::CacheFull))
        }))
    }

    fn a_hit_never_changes_port_while_up(w: World, later: Vec<(u8, u64)>) -> bool {
        on_both!(w, |d, now| {
            let mut now = now;
            let first: Vec<Option<PortId>> =
                w.flows.iter().map(|f| d.on_packet(t(now), &flow(*f), DC8).port()).collect();
            // Congestion changes a lot; pins must not move.
            for (p, q) in &later {
                now = now.wrapping_add(1000);
                w.sample(&mut d, now, p % 8, *q);
            }
            w.flows.iter().zip(&first).all(|(f, p)| match p {
                Some(port) => d.on_packet(t(now), &flow(*f), DC8) == Decision::Hit(*port),
                None => true,
            })
        })
    }

    // Issue 33's keyed flow cache: the key decides where a flow's entry
    // lives, never which port a flow gets. With at most 8 distinct flows
    // (no bucket pair of 2 x 8 slots can fill) every decision and every
    // counter under any key equals the zero key's, repeats (hits)
    // included, on owned and on caller-provided slots.
    fn the_flow_key_moves_entries_not_decisions(w: World, k0: u64, k1: u64) -> bool {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&k0.to_le_bytes());
        bytes[8..].copy_from_slice(&k1.to_le_bytes());
        let key = FlowCacheKey::from_bytes(bytes);
        let mut distinct: Vec<u32> = Vec::new();
        for f in &w.flows {
            if !distinct.contains(f) && distinct.len() < 8 {
                distinct.push(*f);
            }
        }
        let packets: Vec<u32> = w.flows.iter().copied().filter(|f| distinct.contains(f)).collect();
        let run = |key: FlowCacheKey| {
            let mut d: Decider<8, 256> = Decider::new(w.config().with_flow_key(key));
            let now = w.setup(&mut d);
            let decisions: Vec<Decision> =
                packets.iter().map(|f| d.on_packet(t(now), &flow(*f), DC8)).collect();
            let mut blocks = vec![SlotBlock::EMPTY; 256 / 16];
            let mut r = DeciderRef::<8>::with_slots(w.config().with_flow_key(key), &mut blocks)
                .expect("16 blocks");
            let now = w.setup(&mut r);
            let borrowed: Vec<Decision> =
                packets.iter().map(|f| r.on_packet(t(now), &flow(*f), DC8)).collect();
            (decisions, *d.counters(), borrowed, *r.counters())
        };
        let (zero, keyed) = (run(FlowCacheKey::ZERO), run(key));
        zero == keyed && zero.0 == zero.2
    }

    fn decisions_are_a_pure_function_of_inputs(w: World) -> bool {
        let (mut a, now) = w.decider();
        let (mut b, _) = w.decider();
        let da: Vec<Decision> = w.flows.iter().map(|f| a.on_packet(t(now), &flow(*f), DC8)).collect();
        let db: Vec<Decision> = w.flows.iter().map(|f| b.on_packet(t(now), &flow(*f), DC8)).collect();
        da == db && a.counters() == b.counters()
    }

    fn stored_c_cong_matches_eq_4_5_even_after_new_weights(w: World, beta: u32, w_ql: u32) -> bool {
        let (mut d, _) = w.decider();
        let consistent = |d: &Decider<8, 256>, weights: &Weights| {
            let e = d.explain(t(0), &flow(0), DC8);
            e.candidates.iter().all(|c| {
                c.c_cong == cost::congestion_cost(c.q, c.t, c.d, weights)
                    && c.cost == cost::fused_cost(c.c_path, c.c_cong, weights)
            })
        };
        let before = consistent(&d, &w.weights);
        // A hitless install with other weights re-derives every port's C_cong.
        let mut tables = w.tables();
        tables.params.weights.beta = beta % 5;
        tables.params.weights.w_ql = w_ql % 5;
        d.install(&tables).expect("valid");
        before && consistent(&d, &tables.params.weights)
    }

    fn counters_add_up(w: World) -> bool {
        on_both!(w, |d, now| {
            for f in &w.flows {
                let _ = d.on_packet(t(now), &flow(*f), DC8);
            }
            let c = d.counters();
            c.packets == w.flows.len() as u64
                && c.packets
                    == c.hits + c.new_flows + c.failovers + c.withdrawals + c.unpinned + c.no_route
        })
    }
}
