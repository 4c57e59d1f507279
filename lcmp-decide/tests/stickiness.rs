//! The decider's promise to RDMA senders (§7.5): a flow that is forwarded
//! and keeps sending (never idle longer than the idle timeout in force)
//! keeps its egress port as long as that port is up and still a candidate of
//! its group, whether the cache overflowed, ports flapped or tables changed.
//! Unit tests for each case, then a quickcheck property over random event
//! sequences against a cache small enough to overflow.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use common::events::*;
use common::in_order::{self, Arrival};
use common::*;
use lcmp_decide::flow_cache::SlotStorage;
use lcmp_decide::*;
use quickcheck::{Gen, QuickCheck};

/// The smallest decider (16 slots, two buckets) on testbed8's DC1.
fn tiny(overflow: Overflow) -> Decider<8, 16> {
    let mut d = Decider::new(DeciderConfig::default().with_overflow(overflow));
    d.install(&testbed8_dc1(Params::PAPER)).expect("valid");
    d
}

/// Offers flows 0, 1, ... at `t(0)` until the cache is full; returns the
/// pinned flows with their ports, and the next flow, which the full cache
/// refuses.
fn fill(d: &mut Decider<8, 16>) -> (Vec<(u32, PortId)>, u32) {
    let mut pinned = Vec::new();
    let mut i = 0;
    while d.flow_cache().len() < 16 {
        if let Decision::New { port, .. } = d.on_packet(t(0), &flow(i), DC8) {
            pinned.push((i, port));
        }
        i += 1;
    }
    (pinned, i)
}

#[test]
fn overflow_reuses_an_idle_entry_only_past_its_safe_gap() {
    let mut d = tiny(Overflow::Refuse);
    let (pinned, x) = fill(&mut d);
    // Flow x finds no room: refused, not forwarded anywhere.
    assert_eq!(
        d.on_packet(t(1), &flow(x), DC8),
        Decision::NoRoute(Reason::CacheFull)
    );
    // The pinned flows keep sending every 100 ms, except the first, which
    // stopped at 0. No port was ever sampled, so the first flow's last
    // packet may sit behind a full buffer: its safe gap is buffer / rate
    // plus its port's reorder window (delay - the group's smallest, 5 ms).
    let (i0, p0) = pinned[0];
    let (_, gbps, ms) = TESTBED8_DC1[usize::from(p0.0)];
    let safe_gap = BUFFER * 8 / gbps / 1_000 + u64::from(ms - 5) * 1_000;
    assert!(safe_gap < u64::from(IDLE), "{safe_gap}");
    let mut reused_at = None;
    for step in 1..20u32 {
        let now = t(step * 100_000);
        for (i, p) in pinned.iter().skip(1) {
            assert_eq!(d.on_packet(now, &flow(*i), DC8), Decision::Hit(*p));
        }
        let got = d.on_packet(now, &flow(x), DC8);
        if u64::from(now.ticks()) <= safe_gap {
            assert_eq!(got, Decision::NoRoute(Reason::CacheFull), "at {now:?}");
        } else if reused_at.is_none() {
            assert!(
                matches!(
                    got,
                    Decision::New {
                        failover: false,
                        ..
                    }
                ),
                "{got:?}"
            );
            reused_at = Some(now);
        } else {
            assert_eq!(got.port(), d.on_packet(now, &flow(x), DC8).port());
        }
    }
    assert!(reused_at.is_some(), "x never got the idle entry");
    // x took flow 0's entry: flow 0 is a new flow when it comes back.
    let c = *d.counters();
    assert_eq!(c.reclaimed, 1);
    assert_eq!(c.cache_full, c.no_route);
    assert_eq!(c.unpinned, 0);
    assert!(matches!(
        d.on_packet(t(2_000_000), &flow(i0), DC8),
        Decision::New { .. } | Decision::NoRoute(Reason::CacheFull)
    ));
}

#[test]
fn stateless_overflow_can_move_a_flow_which_is_why_it_is_not_the_default() {
    // Under Overflow::Stateless an overflowed flow is forwarded by ECMP over
    // the live candidates; once a slot frees, it is decided by LCMP and may
    // land elsewhere. Count such flows among a hundred overflowed ones.
    let mut moved = 0;
    for k in 0..100u32 {
        let mut d = tiny(Overflow::Stateless);
        let (_, x) = fill(&mut d);
        let x = x + k;
        let Decision::Unpinned(first) = d.on_packet(t(1), &flow(x), DC8) else {
            panic!("flow {x} should overflow");
        };
        let later = t(IDLE + 10);
        let second = d.on_packet(later, &flow(x), DC8).port().expect("route");
        if second != first {
            moved += 1;
        }
        // Refuse, the default, never forwards it before it is pinned.
        let mut strict = tiny(Overflow::Refuse);
        let _ = fill(&mut strict);
        assert_eq!(
            strict.on_packet(t(1), &flow(x), DC8),
            Decision::NoRoute(Reason::CacheFull)
        );
    }
    assert!(moved > 10, "{moved} of 100 overflowed flows moved");
}

#[test]
fn port_flap_while_overflowed_moves_only_the_flows_of_the_dead_port() {
    let mut d = tiny(Overflow::Refuse);
    let (pinned, x) = fill(&mut d);
    assert_eq!(
        d.on_packet(t(1), &flow(x), DC8),
        Decision::NoRoute(Reason::CacheFull)
    );
    let dead = pinned[0].1;
    d.set_port_up(dead, false).expect("port");
    let mut now_on = pinned.clone();
    for (k, (i, p)) in pinned.iter().enumerate() {
        let got = d.on_packet(t(10), &flow(*i), DC8);
        if *p == dead {
            let Decision::New {
                port,
                failover: true,
                ..
            } = got
            else {
                panic!("flow {i} on the dead port: {got:?}");
            };
            assert_ne!(port, dead);
            now_on[k].1 = port;
        } else {
            assert_eq!(got, Decision::Hit(*p));
        }
    }
    // The port comes back: nobody moves back or anywhere else.
    d.set_port_up(dead, true).expect("port");
    for (i, p) in &now_on {
        assert_eq!(d.on_packet(t(20), &flow(*i), DC8), Decision::Hit(*p));
    }
    // The overflowed flow is still refused (the cache is full and live).
    assert_eq!(
        d.on_packet(t(30), &flow(x), DC8),
        Decision::NoRoute(Reason::CacheFull)
    );
    assert!(d.counters().failovers >= 1);
    assert_eq!(d.counters().withdrawals, 0);
}

/// 300 flows pinned on the full testbed8 DC1 group; returns their ports.
fn pin_many(d: &mut Decider<8, 1024>) -> Vec<PortId> {
    (0..300)
        .map(|i| d.on_packet(t(i), &flow(i), DC8).port().expect("route"))
        .collect()
}

/// Installs testbed8 DC1 tables edited by `edit` and checks that exactly the
/// flows pinned on `gone` are re-decided, as withdrawals, onto other ports,
/// and that everything else stays.
fn withdraw(edit: impl Fn(&mut Tables), gone: PortId) {
    let mut d = decider(Scheme::Lcmp, Params::PAPER);
    let ports = pin_many(&mut d);
    assert!(ports.contains(&gone), "some flow is pinned on {gone:?}");
    let mut tables = testbed8_dc1(Params::PAPER);
    edit(&mut tables);
    d.install(&tables).expect("valid");
    // explain shows the stale pin and the re-decision before the packet.
    let i = ports.iter().position(|p| *p == gone).expect("pinned");
    let e = d.explain(t(1000), &flow(i as u32), DC8);
    assert_eq!(e.pinned, Some(gone));
    assert_ne!(e.reason, Reason::Pinned);
    let mut moved = 0;
    for (i, p) in ports.iter().enumerate() {
        let got = d.on_packet(t(1000), &flow(i as u32), DC8);
        if *p == gone {
            let Decision::New {
                port,
                failover: true,
                ..
            } = got
            else {
                panic!("flow {i} on the withdrawn port: {got:?}");
            };
            assert_ne!(port, gone);
            moved += 1;
            // ... and it stays there.
            assert_eq!(
                d.on_packet(t(1001), &flow(i as u32), DC8),
                Decision::Hit(port)
            );
        } else {
            assert_eq!(got, Decision::Hit(*p), "flow {i}");
        }
    }
    let c = d.counters();
    assert_eq!(c.withdrawals, moved);
    assert_eq!(c.failovers, 0);
}

#[test]
fn withdrawn_candidate_moves_its_flows_lazily() {
    // DC6 (port 4) leaves the group but stays a port of the switch.
    withdraw(
        |t| {
            t.groups[0].candidates.remove(4);
        },
        PortId(4),
    );
}

#[test]
fn withdrawn_port_moves_its_flows_lazily() {
    // DC4 (port 2) leaves the switch's tables altogether.
    withdraw(
        |t| {
            t.groups[0].candidates.remove(2);
            t.ports.remove(2);
        },
        PortId(2),
    );
}

#[test]
fn withdrawn_group_drops_its_pins() {
    let mut d = decider(Scheme::Lcmp, Params::PAPER);
    let ports = pin_many(&mut d);
    let mut tables = testbed8_dc1(Params::PAPER);
    tables.groups.clear();
    d.install(&tables).expect("valid");
    for i in 0..300u32 {
        assert_eq!(
            d.on_packet(t(1000), &flow(i), DC8),
            Decision::NoRoute(Reason::UnknownGroup)
        );
    }
    assert_eq!(d.flow_cache().len(), 0, "pins of a gone group are dropped");
    // The group comes back: flows are decided afresh and pinned again.
    d.install(&testbed8_dc1(Params::PAPER)).expect("valid");
    for (i, p) in ports.iter().enumerate() {
        let got = d.on_packet(t(2000), &flow(i as u32), DC8);
        assert!(
            matches!(
                got,
                Decision::New {
                    failover: false,
                    ..
                }
            ),
            "{got:?}"
        );
        // Same tables, same congestion, same hash: the same decision.
        assert_eq!(got.port(), Some(*p));
    }
}

#[test]
fn a_pin_belongs_to_its_group() {
    // Two groups on the same ports. A flow's entry holds its group (issue
    // 33: a forged tag toward another group must not move a victim), so a
    // flow pinned via group 8 that shows up with group 9, where its port is
    // not a candidate, is a new flow of group 9, and its group-8 pin stays.
    let mut tables = testbed8_dc1(Params::PAPER);
    let mut g9 = tables.groups[0].clone();
    g9.id = GroupId(9);
    g9.candidates.retain(|c| c.port.0 < 2);
    tables.groups.push(g9).expect("capacity");
    let mut d: Decider<8, 1024> = Decider::new(DeciderConfig::default());
    d.install(&tables).expect("valid");
    let (i, p) = (0..100u32)
        .find_map(|i| {
            let p = d.on_packet(t(0), &flow(i), DC8).port()?;
            (p.0 >= 2).then_some((i, p))
        })
        .expect("a flow on ports 2..6");
    let got = d.on_packet(t(1), &flow(i), GroupId(9));
    assert!(
        matches!(got, Decision::New { failover: false, port, .. } if port.0 < 2),
        "{got:?}"
    );
    assert_eq!(d.counters().withdrawals, 0);
    assert_eq!(d.on_packet(t(2), &flow(i), DC8), Decision::Hit(p));
    assert_eq!(
        d.on_packet(t(3), &flow(i), GroupId(9)),
        Decision::Hit(got.port().expect("port"))
    );
    // A group with no route forgets only its own entry.
    assert!(matches!(
        d.on_packet(t(4), &flow(i), GroupId(77)),
        Decision::NoRoute(_)
    ));
    assert_eq!(d.on_packet(t(5), &flow(i), DC8), Decision::Hit(p));
}

// ---------------------------------------------------------------------------
// The property: per-flow in-order arrival.

/// What the property knows about a forwarded flow.
#[derive(Clone, Copy, Debug)]
struct Forwarded {
    /// Its port, group and latest arrival (the shared model's).
    arrival: Arrival,
    /// Absolute tick of its last forwarded packet.
    seen: u64,
    /// The smallest idle timeout in force since.
    min_idle: u32,
}

/// How often each case arose over all runs (the property must exercise
/// overflow, reuse, failover, withdrawal, displacement and moves to mean
/// anything).
static SEEN: [AtomicU64; 7] = [const { AtomicU64::new(0) }; 7];

fn in_order_in<S: SlotStorage>(mut d: DeciderWith<8, S>, events: &[Event]) -> bool {
    install_start(&mut d);
    let mut tables = tables_for([0x3F, 0x3F], 25, false);
    let mut clock = Clock::START;
    let mut queue = [0u64; PORTS as usize];
    let mut flows: HashMap<u32, Forwarded> = HashMap::new();
    // The port each flow was last forwarded on (kept through a no-route
    // for want of a live candidate: the pin stays for when the port is back).
    let mut last_port: HashMap<u32, PortId> = HashMap::new();
    let is_candidate = |d: &DeciderWith<8, S>, g: GroupId, p: PortId| {
        d.tables().is_some_and(|t| t.is_candidate(g, p))
    };
    let up = |d: &DeciderWith<8, S>, p: PortId| d.port_state(p).is_some_and(|s| s.is_up());
    for ev in events {
        apply(&mut d, ev, &mut clock);
        match *ev {
            Event::Install(masks, delay, short) => {
                let next = tables_for(masks, delay, short);
                let idle = next.params.idle_timeout_ticks;
                // A path whose delay changed: its packets in flight keep the
                // old delay, which the new tables no longer say; such flows
                // are outside the promise (docs/design.md).
                let delay = |t: &Tables, g: GroupId, p: PortId| {
                    t.groups
                        .iter()
                        .find(|x| x.id == g)
                        .and_then(|x| x.candidates.iter().find(|c| c.port == p))
                        .map(|c| c.delay_units)
                };
                flows.retain(|_, f| {
                    let Arrival { port, group, .. } = f.arrival;
                    let (was, is) = (delay(&tables, group, port), delay(&next, group, port));
                    // Withdrawn (no longer a candidate) or a new delay: both
                    // outside the promise.
                    was == is && is.is_some()
                });
                for f in flows.values_mut() {
                    f.min_idle = f.min_idle.min(idle);
                }
                tables = next;
            }
            Event::Sample(p, q) => queue[usize::from(p)] = q,
            // A port that goes down loses what it queued: its flows fail over
            // (outside the promise).
            Event::Flap(p, false) => flows.retain(|_, f| f.arrival.port != PortId(p)),
            _ => {}
        }
        let Event::Packets(packets) = ev else {
            continue;
        };
        let idle = d.tables().map_or(IDLE, |t| t.params().idle_timeout_ticks);
        for &n in packets {
            let group = group_of(n);
            // Within the idle timeout (beyond it a flow is new by design).
            let history = flows.get(&n).copied().filter(|f| {
                clock.abs - f.seen <= u64::from(f.min_idle) && f.arrival.group == group
            });
            let before = *d.counters();
            let got = d.on_packet(clock.instant(), &flow(n), group);
            if let Some(p) = got.port() {
                assert!(up(&d, p) && is_candidate(&d, group, p), "{got:?}");
            }
            if let Decision::Hit(p) = got {
                assert_eq!(last_port.get(&n), Some(&p), "hit on a new port");
            }
            let c = *d.counters();
            assert_eq!(
                c.packets,
                c.hits + c.new_flows + c.failovers + c.withdrawals + c.unpinned + c.no_route
            );
            let exempt = matches!(got, Decision::New { failover: true, .. });
            let mut moved = 0;
            // When this packet arrives (the shared model).
            let arrival = got.port().zip(d.tables()).map(|(p, t)| {
                in_order::arrival_ps(t, group, p, clock.abs, queue[usize::from(p.0)])
            });
            if let (Some(f), Some(p), Some(a)) = (history, got.port(), arrival) {
                let usable = up(&d, f.arrival.port) && is_candidate(&d, group, f.arrival.port);
                // A flow idle no longer than its port's reorder window (a
                // lower bound of its safe gap) never moves.
                // (Unknown: no early reuse at all, so no bound to exceed.)
                let window = d.tables().map_or(0, |t| {
                    t.reorder_window_ticks(f.arrival.port)
                        .map_or(u64::MAX, u64::from)
                });
                if usable && clock.abs - f.seen <= window {
                    assert_eq!(
                        got,
                        Decision::Hit(f.arrival.port),
                        "flow {n} moved within its window"
                    );
                }
                match in_order::check(Some(&f.arrival), p, a, exempt) {
                    Ok(checked) => moved = u64::from(checked),
                    Err(early) => panic!(
                        "flow {n} moved {:?} -> {p:?} after {} ticks and arrives {early} ps before its last packet",
                        f.arrival.port,
                        clock.abs - f.seen,
                    ),
                }
            }
            let bumped = |a: u64, b: u64| u64::from(a != b);
            for (k, hit) in [
                bumped(before.cache_full, c.cache_full),
                bumped(before.failovers, c.failovers),
                bumped(before.withdrawals, c.withdrawals),
                bumped(before.displacements, c.displacements),
                bumped(before.hits, c.hits),
                bumped(before.reclaimed, c.reclaimed),
                moved,
            ]
            .into_iter()
            .enumerate()
            {
                SEEN[k].fetch_add(hit, Ordering::Relaxed);
            }
            match got {
                Decision::Hit(port) | Decision::New { port, .. } => {
                    let a = arrival.unwrap_or_default();
                    // Same path: FIFO, so no packet overtakes an earlier one.
                    let before = history.as_ref().map(|f| &f.arrival);
                    flows.insert(
                        n,
                        Forwarded {
                            arrival: in_order::after(before, group, port, a, exempt),
                            seen: clock.abs,
                            min_idle: idle,
                        },
                    );
                    last_port.insert(n, port);
                }
                Decision::Unpinned(_) => panic!("Overflow::Refuse never forwards unpinned"),
                Decision::NoRoute(reason) => {
                    if reason == Reason::UnknownGroup {
                        // The group is gone and the flow forgotten (a
                        // withdrawal: outside the promise).
                        flows.remove(&n);
                    }
                    if reason != Reason::NoLiveCandidate {
                        last_port.remove(&n);
                    }
                }
            }
        }
    }
    true
}

fn in_order(events: Vec<Event>) -> bool {
    let config = DeciderConfig::default().with_seed(7);
    // The owned and the caller-provided storage forms, same promise.
    let owned: Decider<8, 16> = Decider::new(config);
    let mut block = [SlotBlock::EMPTY; 1];
    let borrowed: DeciderRef<'_, 8> =
        DeciderRef::with_slots(config, &mut block).expect("one block");
    in_order_in(owned, &events) && in_order_in(borrowed, &events)
}

#[test]
fn every_flow_arrives_in_order() {
    QuickCheck::new()
        .rng(Gen::new(100))
        .tests(600)
        .quickcheck(in_order as fn(Vec<Event>) -> bool);
    // The runs reached every case the promise is about.
    let seen: Vec<u64> = SEEN.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    let names = [
        "cache full",
        "failover",
        "withdrawal",
        "displacement",
        "hit",
        "reuse of an idle entry",
        "a move checked for order",
    ];
    for (name, n) in names.iter().zip(&seen) {
        assert!(*n > 0, "no {name} in any run: {seen:?}");
    }
}

#[test]
fn the_default_config_constant_is_the_default() {
    assert_eq!(DeciderConfig::DEFAULT, DeciderConfig::default());
}

#[test]
fn reset_returns_to_the_constructed_state() {
    let mut d = decider(Scheme::Lcmp, Params::PAPER);
    let _ = pin_many(&mut d);
    d.sample(t(5), PortId(1), 1 << 30).expect("port");
    d.set_port_up(PortId(2), false).expect("port");
    let config = DeciderConfig::default().with_seed(9);
    d.reset(config);
    let fresh: Decider<8, 1024> = Decider::new(config);
    assert_eq!(format!("{d:?}"), format!("{fresh:?}"));
}
