//! Deciders that share one compiled tables object decide exactly as
//! deciders that own a copy each: a quickcheck property over random event
//! streams (packets, samples, flaps, installs, GC) split between two
//! deciders, so that per-decider state (ports, in-flight bounds, cache,
//! counters, `tables_valid`) is shown to stay per decider; and a hand-over
//! to a new generation keeps every established flow's port unless the new
//! tables withdraw it from the flow's group.

mod common;

use std::rc::Rc;

use common::events::*;
use common::*;
use lcmp_decide::tables::CompiledTables;
use lcmp_decide::*;
use quickcheck::{quickcheck, Arbitrary, Gen, QuickCheck};

/// Two deciders reading one `Rc<CompiledTables>`, a 16-slot cache each (so
/// that overflow and reclaim are exercised).
type Shared = SharedDecider<8, 16, Rc<CompiledTables>>;
type Owned = Decider<8, 16>;

/// The tables of an `Install` event (or of the start), compiled once for
/// both shared deciders.
fn compiled(t: &Tables) -> Rc<CompiledTables> {
    Rc::new(t.compile(8).expect("valid"))
}

/// Which of the two deciders gets a per-port event: the port's parity, so
/// that each sees different samples and flaps.
fn target(port: u8) -> usize {
    usize::from(port % 2)
}

/// What both forms of decider are observed through after each event.
fn observe<S: flow_cache::SlotStorage, T: tables::TablesSlot>(
    d: &DeciderWith<8, S, T>,
    now: Instant,
) -> (Counters, Vec<Option<Signals>>, Vec<Explanation>, usize) {
    (
        *d.counters(),
        (0..8).map(|p| d.signals(PortId(p))).collect(),
        (0..FLOWS)
            .map(|n| d.explain(now, &flow(n), group_of(n)))
            .collect(),
        d.flow_cache().len(),
    )
}

fn shared_matches_owned(events: Vec<Event>, stateless: bool) -> bool {
    let overflow = if stateless {
        Overflow::Stateless
    } else {
        Overflow::Refuse
    };
    let config = |seed| {
        DeciderConfig::DEFAULT
            .with_seed(seed)
            .with_overflow(overflow)
    };
    let mut owned: [Owned; 2] = [Owned::new(config(1)), Owned::new(config(2))];
    let mut shared: [Shared; 2] = [Shared::new(config(1)), Shared::new(config(2))];
    let start = tables_for([0x3F, 0x3F], 25, false);
    let gen = compiled(&start);
    for (o, s) in owned.iter_mut().zip(shared.iter_mut()) {
        o.install(&start).expect("valid");
        assert!(s.use_tables(Rc::clone(&gen)).expect("fits").is_none());
    }
    assert_eq!(Rc::strong_count(&gen), 3, "one copy, two readers");
    let mut clock = Clock::START;
    for ev in &events {
        let now = clock.instant();
        match *ev {
            Event::Packets(ref flows) => {
                // Even positions to decider 0, odd ones to decider 1.
                for (i, &n) in flows.iter().enumerate() {
                    let who = i % 2;
                    let (key, group) = (flow(n), group_of(n));
                    let o = owned[who].on_packet(now, &key, group);
                    let s = shared[who].on_packet(now, &key, group);
                    assert_eq!(o, s, "packet {i} of {flows:?}");
                }
            }
            Event::Advance(dt) => {
                clock.now = clock.now.wrapping_add(dt);
                clock.abs += u64::from(dt);
            }
            Event::Sample(p, q) => {
                let who = target(p);
                owned[who].sample(now, PortId(p), q).expect("port");
                shared[who].sample(now, PortId(p), q).expect("port");
            }
            Event::Flap(p, up) => {
                let who = target(p);
                owned[who].set_port_up(PortId(p), up).expect("port");
                shared[who].set_port_up(PortId(p), up).expect("port");
            }
            Event::Install(masks, delay, short) => {
                let t = tables_for(masks, delay, short);
                let next = compiled(&t);
                for (o, s) in owned.iter_mut().zip(shared.iter_mut()) {
                    o.install(&t).expect("valid");
                    let old = s.use_tables(Rc::clone(&next)).expect("fits");
                    assert!(old.is_some(), "the previous generation comes back");
                }
                // The last reader let the previous generation go.
                assert_eq!(Rc::strong_count(&next), 3);
            }
            Event::Gc(budget) => {
                for (o, s) in owned.iter_mut().zip(shared.iter_mut()) {
                    assert_eq!(
                        o.gc(now, usize::from(budget)),
                        s.gc(now, usize::from(budget))
                    );
                }
            }
            Event::SetCurrent(c) => {
                // Per decider: only decider 0 is told.
                owned[0].set_tables_current(c);
                shared[0].set_tables_current(c);
            }
        }
        let now = clock.instant();
        for (o, s) in owned.iter().zip(shared.iter()) {
            assert_eq!(o.tables(), s.tables());
            assert_eq!(observe(o, now), observe(s, now));
        }
    }
    true
}

#[test]
fn shared_deciders_decide_as_owning_ones() {
    QuickCheck::new()
        .tests(300)
        .rng(Gen::new(60))
        .quickcheck(shared_matches_owned as fn(Vec<Event>, bool) -> bool);
}

/// New candidate masks for the two groups (never empty, so that both
/// groups survive the hand-over).
#[derive(Clone, Debug)]
struct Masks([u8; 2]);

impl Arbitrary for Masks {
    fn arbitrary(g: &mut Gen) -> Self {
        let mask = |g: &mut Gen| (u8::arbitrary(g) & 0x3F).max(1);
        Masks([mask(g), mask(g)])
    }
}

quickcheck! {
    /// Flows pinned under generation 1 keep their ports under generation 2
    /// whenever the port is still a candidate of their group (a hit); the
    /// others, and only they, are re-decided as withdrawals.
    fn hand_over_keeps_established_flows(flows: Vec<u16>, next: Masks, down: u8) -> bool {
        let gen1 = tables_for([0x3F, 0x3F], 25, false);
        let gen2 = tables_for(next.0, 25, false);
        let (c1, c2) = (gen1.compile(8).expect("valid"), gen2.compile(8).expect("valid"));
        let mut d: SharedDecider<8, 1024, &CompiledTables> =
            SharedDecider::new(DeciderConfig::DEFAULT);
        d.use_tables(&c1).expect("fits");
        let down = PortId(down % PORTS);
        d.set_port_up(down, false).expect("port");
        let flows: Vec<u32> = flows.iter().map(|&f| u32::from(f)).collect();
        let mut pinned = std::collections::HashMap::new();
        for &n in &flows {
            if let Some(p) = d.on_packet(t(10), &flow(n), group_of(n)).port() {
                pinned.insert(n, p);
            }
        }
        let previous = d.use_tables(&c2).expect("fits");
        assert!(previous.is_some_and(|p| core::ptr::eq(p, &c1)));
        let before = *d.counters();
        let mut withdrawn = 0;
        for (&n, &port) in &pinned {
            let decision = d.on_packet(t(20), &flow(n), group_of(n));
            if c2.is_candidate(group_of(n), port) {
                assert_eq!(decision, Decision::Hit(port), "flow {n}");
            } else if next.0[(n % 2) as usize] == 1 << down.0 {
                // The group's only candidate left is the port that is down.
                assert_eq!(decision, Decision::NoRoute(Reason::NoLiveCandidate));
            } else {
                withdrawn += 1;
                assert!(
                    matches!(decision, Decision::New { failover: true, port: p, .. } if p != port && p != down),
                    "flow {n}: {decision:?}"
                );
            }
        }
        d.counters().withdrawals - before.withdrawals == withdrawn
    }
}
