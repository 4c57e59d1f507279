//! The `decide_events` driver: an arbitrary event sequence against a small
//! decider (8 ports, a 16-slot flow cache, so it fills; the default
//! `Overflow::Refuse`), checking after every event:
//!
//! 1. A `New` port is a live candidate of the packet's group in the
//!    installed tables; so is a `Hit` port, which is also the port the flow
//!    was last pinned to; `Unpinned` never happens (only
//!    `Overflow::Stateless` routes without a pin);
//!    `NoRoute(UnknownGroup)` only for a group that is not installed,
//!    `NoRoute(NoLiveCandidate)` only when every candidate is down,
//!    `NoRoute(CacheFull)` only for a flow with no live pin.
//! 2. The promise to RDMA senders (docs/design.md, "The in-order promise"):
//!    a flow that was forwarded and has not been idle longer than any idle
//!    timeout in force since its last packet gets `Hit` on its port while
//!    that port is up and a candidate of the packet's group, unless a new
//!    flow reused its entry (`reclaimed`), in which case its next packet is
//!    a new decision that arrives after every earlier packet of it: every
//!    forwarded packet gets an arrival time (send time + its path's delay +
//!    the queueing delay of its port's sample in force at the send, capped
//!    by the buffer), and a flow that changes port outside a failover or a
//!    withdrawal arrives later than its latest earlier packet. Otherwise it
//!    is re-decided (`failover: true`, away from a port that is down or
//!    withdrawn) or has no route.
//! 3. `flow_cache().len() <= capacity` after every event; GC evicts at most
//!    `budget` entries and the length and `gc_evictions` move by what it
//!    returns.
//! 4. Counters add up: `packets == hits + new_flows + failovers +
//!    withdrawals + unpinned + no_route`, and each packet moves exactly its
//!    own counters (`cache_full` with a refusal, `displacements` at most
//!    with a new flow).
//! 5. `explain` just before a packet predicts its decision (a refusal is
//!    predicted as the new decision it would have pinned), and every
//!    explanation is self-consistent (kept ⇒ up, down ⇒ cut as `Down`, the
//!    pick is kept, the minimum-cost fallback takes the minimum).
//! 6. A failed install changes nothing; samples and liveness for ports out
//!    of range are typed errors.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use arbitrary::{Arbitrary, Unstructured};
use lcmp_decide::{
    Counters, CutReason, Decider, Decision, Error, Explanation, FlowKey, GroupId, Instant, Params,
    PortId, Reason,
};

use crate::input::{flow_pool, Event, Scenario};

/// Ports of the decider under test.
pub const PORTS: usize = 8;
/// Flow-cache slots (two buckets of 8: 17 active flows fill a flow's
/// buckets).
pub const FLOWS: usize = 16;
/// Port ids used in tables and events: `0..PORT_SPACE` (8 and 9 are out of
/// range).
const PORT_SPACE: u8 = 10;
/// At most this many distinct flows.
const MAX_FLOWS: usize = 64;

/// Decisions seen so far by kind: hit, new, failover (port down),
/// withdrawal (port no longer a candidate), refused (cache full), other no
/// route (the seed test checks that the committed seeds reach every kind).
pub static KINDS: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];

/// What the harness knows about a flow's pin.
#[derive(Clone, Copy, Debug)]
struct Pin {
    port: PortId,
    /// Absolute (unwrapped) tick of the last pinning packet.
    seen: u64,
    /// The smallest idle timeout in force since then.
    min_idle: u32,
}

// The in-order model, written once for lcmp-decide's stickiness property
// and this driver (a file of lcmp-decide's test support, not a crate: it
// needs only lcmp_decide and std).
#[path = "../../lcmp-decide/tests/common/in_order.rs"]
#[allow(dead_code)]
mod in_order;
use in_order::Arrival;

struct Harness {
    d: Decider<PORTS, FLOWS>,
    /// The queue sample in force per port (bytes).
    queue: HashMap<PortId, u64>,
    /// Flows the in-order check follows (dropped when a move of theirs is
    /// outside the promise: a failover, a withdrawal, a delay change).
    arrivals: HashMap<FlowKey, Arrival>,
    now: u32,
    abs: u64,
    /// Established flows (removed on `NoRoute`).
    pins: HashMap<(FlowKey, GroupId), Pin>,
    /// The last port each flow was pinned to (never removed: an idle entry
    /// stays in its slot until reused or collected).
    last_port: HashMap<(FlowKey, GroupId), PortId>,
}

/// Runs one fuzz input.
pub fn run(data: &[u8]) {
    // As libfuzzer-sys decodes a typed target's input.
    let Ok(s) = Scenario::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    run_scenario(&s);
}

/// Runs one scenario, panicking on the first violated invariant.
pub fn run_scenario(s: &Scenario) {
    let flows = flow_pool(&s.flows, MAX_FLOWS);
    let start = s.start.ticks();
    let mut h = Harness {
        d: Decider::new(s.config.build()),
        queue: HashMap::new(),
        arrivals: HashMap::new(),
        now: start,
        abs: u64::from(start),
        pins: HashMap::new(),
        last_port: HashMap::new(),
    };
    h.install(&s.tables.build(PORT_SPACE));
    let trace = std::env::var_os("LCMP_FUZZ_TRACE").is_some();
    for (i, ev) in s.events.iter().enumerate() {
        if trace {
            eprintln!("event {i} at tick {}: {ev:?}", h.now);
        }
        h.event(ev, &flows);
        h.check_global();
    }
}

impl Harness {
    fn params(&self) -> Params {
        self.d.tables().map_or(Params::PAPER, |t| *t.params())
    }

    fn instant(&self) -> Instant {
        Instant::from_ticks(self.now)
    }

    fn up(&self, port: PortId) -> bool {
        self.d.port_state(port).is_some_and(|s| s.is_up())
    }

    /// Whether `port` is a candidate of `group` in the installed tables.
    fn candidate(&self, group: GroupId, port: PortId) -> bool {
        self.d
            .tables()
            .and_then(|t| t.group(group))
            .is_some_and(|g| g.candidates.iter().any(|c| c.port == port))
    }

    /// Whether `port` is a live candidate of `group` in the installed tables.
    fn live_candidate(&self, group: GroupId, port: PortId) -> bool {
        self.candidate(group, port) && self.up(port)
    }

    /// One-way delay units of `port` in `group` under the installed tables.
    fn delay_units(&self, group: GroupId, port: PortId) -> Option<u32> {
        let g = self.d.tables()?.group(group)?;
        g.candidates
            .iter()
            .find(|c| c.port == port)
            .map(|c| c.delay_units)
    }

    /// When a packet of `group` sent now on `port` arrives, picoseconds (the
    /// shared model's; the decider's bound must cover it).
    fn arrival_ps(&self, group: GroupId, port: PortId) -> u128 {
        let Some(t) = self.d.tables() else { return 0 };
        let queue = self.queue.get(&port).copied().unwrap_or(0);
        in_order::arrival_ps(t, group, port, self.abs, queue)
    }

    fn install(&mut self, t: &lcmp_decide::Tables) {
        // A port's rate and buffer (bit/s, bytes), as the tables had them.
        type PortShape = (u64, u64);
        let before = self.d.tables().cloned();
        let port_of = |h: &Self, p: PortId| {
            h.d.tables()
                .and_then(|t| t.port(p))
                .map(|c| (c.rate_bps, c.buffer_bytes))
        };
        let old: Vec<(FlowKey, Option<u32>, Option<PortShape>)> = self
            .arrivals
            .iter()
            .map(|(k, a)| (*k, self.delay_units(a.group, a.port), port_of(self, a.port)))
            .collect();
        let unit = self.params().delay_unit_ticks;
        match self.d.install(t) {
            Ok(()) => {
                // A withdrawn candidate, a changed delay (or unit), or a port
                // whose rate or buffer the tables changed (its queued packets
                // drain as the old port did): outside the promise.
                let same_unit = unit == self.params().delay_unit_ticks;
                for (k, was, port_was) in old {
                    let a = self.arrivals.get(&k).copied();
                    let now = a.and_then(|a| self.delay_units(a.group, a.port));
                    let port_now = a.and_then(|a| port_of(self, a.port));
                    if !same_unit || now.is_none() || now != was || port_now != port_was {
                        self.arrivals.remove(&k);
                    }
                }
                let idle = self.params().idle_timeout_ticks;
                for p in self.pins.values_mut() {
                    p.min_idle = p.min_idle.min(idle);
                }
                assert!(self.d.tables().is_some());
            }
            Err(_) => assert_eq!(
                self.d.tables(),
                before.as_ref(),
                "failed install changed tables"
            ),
        }
    }

    fn event(&mut self, ev: &Event, flows: &[FlowKey]) {
        match *ev {
            Event::Packet { flow, group } => {
                let key = flows[usize::from(flow) % flows.len()];
                self.packet(&key, Event::group(group));
            }
            Event::Explain { flow, group } => {
                let key = flows[usize::from(flow) % flows.len()];
                let e = self.d.explain(self.instant(), &key, Event::group(group));
                self.check_explanation(&e);
            }
            Event::Sample { port, queue } => {
                let port = PortId(port % (PORT_SPACE + 2));
                let before = self.d.counters().samples;
                let listed = self.d.tables().is_some_and(|t| t.port(port).is_some());
                let r = self.d.sample(self.instant(), port, queue.bytes());
                if usize::from(port.0) < PORTS && !listed {
                    // Refused, as the C ABI refuses it: nothing recorded.
                    assert_eq!(r, Err(Error::PortNotInTables(port.0)));
                    assert_eq!(self.d.counters().samples, before);
                } else if usize::from(port.0) < PORTS {
                    assert_eq!(r, Ok(()));
                    self.queue.insert(port, queue.bytes());
                    assert_eq!(self.d.counters().samples, before.saturating_add(1));
                    let st = self.d.port_state(port).expect("in range");
                    assert_eq!(st.queue_bytes(), queue.bytes());
                    if let Some(t) = self.d.tables() {
                        let n = t.levels().len();
                        if let Some(cfg) = t.port(port) {
                            assert!(usize::from(st.queue_code(cfg, n).0) <= n);
                        }
                        assert!(usize::from(st.trend_code().0) <= n);
                    }
                } else {
                    assert_eq!(r, Err(Error::PortOutOfRange(port.0)));
                    assert_eq!(self.d.counters().samples, before);
                }
            }
            Event::Advance(step) => {
                let dt = step.ticks(self.now);
                self.now = self.now.wrapping_add(dt);
                self.abs += u64::from(dt);
            }
            Event::PortUp { port, up } => {
                let port = PortId(port % (PORT_SPACE + 2));
                let r = self.d.set_port_up(port, up);
                if usize::from(port.0) < PORTS {
                    assert_eq!(r, Ok(()));
                    assert_eq!(self.up(port), up);
                    if !up {
                        // What the port queued is lost: its flows fail over.
                        self.arrivals.retain(|_, a| a.port != port);
                    }
                } else {
                    assert_eq!(r, Err(Error::PortOutOfRange(port.0)));
                }
            }
            Event::Gc { budget } => {
                let budget = budget.slots();
                let len = self.d.flow_cache().len();
                let evictions = self.d.counters().gc_evictions;
                let n = self.d.gc(self.instant(), budget);
                assert!(
                    n <= budget.min(FLOWS),
                    "gc evicted {n} with budget {budget}"
                );
                assert_eq!(self.d.flow_cache().len(), len - n);
                assert_eq!(self.d.counters().gc_evictions, evictions + n as u64);
                // GC never removes an established flow: checked on its next
                // packet by the stickiness invariant.
            }
            Event::Install(ref t) => self.install(&t.build(PORT_SPACE)),
            Event::SetCurrent(c) => self.d.set_tables_current(c),
            Event::SetScheme(s) => self.d.set_scheme(s.build()),
        }
    }

    fn packet(&mut self, key: &FlowKey, group: GroupId) {
        let now = self.instant();
        let idle = self.params().idle_timeout_ticks;
        let before = *self.d.counters();
        let e = self.d.explain(now, key, group);
        self.check_explanation(&e);
        let established = self
            .pins
            .get(&(*key, group))
            .copied()
            .filter(|p| self.abs - p.seen <= u64::from(p.min_idle));
        let decision = self.d.on_packet(now, key, group);

        // 5. explain predicted it.
        match decision {
            Decision::Hit(p) => {
                assert_eq!(e.reason, Reason::Pinned, "{decision:?} vs {e:?}");
                assert_eq!(e.chosen, Some(p));
            }
            Decision::New {
                port,
                reason,
                failover,
            } => {
                assert_eq!((e.chosen, e.reason), (Some(port), reason), "{e:?}");
                assert_eq!(e.pinned.is_some(), failover, "{e:?}");
            }
            Decision::Unpinned(p) => panic!("Overflow::Refuse routed {p:?} without a pin"),
            Decision::NoRoute(Reason::CacheFull) => {
                // explain does not predict room in the cache: it shows the
                // new decision that could not be pinned.
                assert!(e.chosen.is_some() && e.reason != Reason::Pinned, "{e:?}");
                assert_eq!(e.pinned, None, "a pinned flow is never refused");
            }
            Decision::NoRoute(r) => {
                assert_eq!((e.chosen, e.reason), (None, r), "{e:?}");
            }
        }

        // 1. The port is legitimate.
        match decision {
            Decision::Hit(p) => {
                assert!(
                    self.live_candidate(group, p),
                    "hit on {p:?}, not a live candidate of {group:?}"
                );
                assert_eq!(
                    self.last_port.get(&(*key, group)),
                    Some(&p),
                    "hit on a port never pinned"
                );
            }
            Decision::New { port, .. } | Decision::Unpinned(port) => {
                assert!(
                    self.live_candidate(group, port),
                    "{decision:?} is not a live candidate of {group:?}"
                );
            }
            Decision::NoRoute(Reason::UnknownGroup) => {
                assert!(self.d.tables().and_then(|t| t.group(group)).is_none());
            }
            Decision::NoRoute(Reason::NoLiveCandidate) => {
                let g = self.d.tables().and_then(|t| t.group(group)).expect("group");
                assert!(g.candidates.iter().all(|c| !self.up(c.port)));
            }
            Decision::NoRoute(Reason::CacheFull) => {}
            Decision::NoRoute(r) => panic!("NoRoute with reason {r:?}"),
        }

        // 2. A forwarded flow that keeps sending never moves while its port
        // is up and a candidate of its group.
        let reused = self.d.counters().reclaimed;
        if let Some(pin) = established {
            if self.live_candidate(group, pin.port) {
                // Its entry may have been reused by a new flow since (then
                // this is a new decision, checked for order below).
                assert!(
                    decision == Decision::Hit(pin.port)
                        || (matches!(
                            decision,
                            Decision::New {
                                failover: false,
                                ..
                            }
                        ) && reused > 0),
                    "established flow moved: {decision:?}"
                );
            } else {
                assert!(
                    matches!(
                        decision,
                        Decision::New { failover: true, .. } | Decision::NoRoute(_)
                    ),
                    "established flow on a down or withdrawn port: {decision:?}"
                );
            }
        }
        let withdrawn = if let Decision::New { failover: true, .. } = decision {
            let old = self
                .last_port
                .get(&(*key, group))
                .copied()
                .expect("failover of an unpinned flow");
            assert!(
                !self.live_candidate(group, old),
                "re-decided away from a live candidate {old:?}"
            );
            self.up(old)
        } else {
            false
        };

        let kind = match decision {
            Decision::Hit(_) => 0,
            Decision::New {
                failover: false, ..
            } => 1,
            Decision::New { failover: true, .. } if withdrawn => 3,
            Decision::New { failover: true, .. } => 2,
            Decision::NoRoute(Reason::CacheFull) => 4,
            Decision::Unpinned(_) | Decision::NoRoute(_) => 5,
        };
        KINDS[kind].fetch_add(1, Ordering::Relaxed);

        // 4. Counters.
        let after = *self.d.counters();
        let mut want = before;
        want.packets += 1;
        match decision {
            Decision::Hit(_) => want.hits += 1,
            Decision::New {
                failover: false, ..
            } => {
                want.new_flows += 1;
                // At most one reuse of an idle flow's entry, with a new
                // flow only.
                want.reclaimed = after
                    .reclaimed
                    .clamp(before.reclaimed, before.reclaimed + 1);
                // At most one displacement, with a new flow only.
                want.displacements = after
                    .displacements
                    .clamp(before.displacements, before.displacements + 1);
            }
            Decision::New { failover: true, .. } if withdrawn => want.withdrawals += 1,
            Decision::New { failover: true, .. } => want.failovers += 1,
            Decision::Unpinned(_) => want.unpinned += 1,
            Decision::NoRoute(r) => {
                want.no_route += 1;
                if r == Reason::CacheFull {
                    want.cache_full += 1;
                }
            }
        }
        if let Decision::New { reason, .. } = decision {
            match reason {
                Reason::MinCostFallback => want.min_cost_fallbacks += 1,
                Reason::EcmpFallback => want.ecmp_fallbacks += 1,
                _ => {}
            }
        }
        assert_eq!(after, want, "counters after {decision:?}");

        // 2 (in order). A flow that changes port outside a failover or a
        // withdrawal arrives after its latest earlier packet.
        let followed = self
            .arrivals
            .get(key)
            .copied()
            .filter(|a| a.group == group && established.is_some());
        if let Some(p) = decision.port() {
            let a = self.arrival_ps(group, p);
            let failover = matches!(decision, Decision::New { failover: true, .. });
            if let (Err(early), Some(f)) =
                (in_order::check(followed.as_ref(), p, a, failover), followed)
            {
                panic!(
                    "{key:?} moved {:?} -> {p:?} and arrives {early} ps before its latest packet",
                    f.port
                );
            }
            // Same path: FIFO, nothing overtakes.
            let arrival = in_order::after(followed.as_ref(), group, p, a, failover);
            self.arrivals.insert(*key, arrival);
        } else if decision == Decision::NoRoute(Reason::UnknownGroup) {
            self.arrivals.remove(key);
        }

        // Track pins.
        let pin = |port| Pin {
            port,
            seen: self.abs,
            min_idle: idle,
        };
        match decision {
            Decision::Hit(p) | Decision::New { port: p, .. } => {
                self.pins.insert((*key, group), pin(p));
                self.last_port.insert((*key, group), p);
            }
            Decision::Unpinned(_) => {}
            Decision::NoRoute(_) => {
                self.pins.remove(&(*key, group));
            }
        }
    }

    fn check_explanation(&self, e: &Explanation) {
        let tables = self.d.tables();
        let group = tables.and_then(|t| t.group(e.group));
        match group {
            None => assert!(e.candidates.is_empty()),
            Some(g) => {
                let ports: Vec<_> = g.candidates.iter().map(|c| c.port).collect();
                let got: Vec<_> = e.candidates.iter().map(|c| c.port).collect();
                assert_eq!(
                    got, ports,
                    "explanation lists the group's candidates in order"
                );
            }
        }
        for c in &e.candidates {
            assert_eq!(c.up, self.up(c.port));
            if c.kept {
                assert!(c.up && c.cut_reason.is_none(), "{c:?}");
            }
            if !c.up {
                assert_eq!(c.cut_reason, Some(CutReason::Down));
                assert!(c.rank.is_none());
            }
        }
        let live: Vec<_> = e.candidates.iter().filter(|c| c.up).collect();
        if e.reason == Reason::Pinned {
            assert!(e.chosen.is_some() && e.chosen == e.pinned);
            return;
        }
        let chosen = e
            .chosen
            .and_then(|p| e.candidates.iter().find(|c| c.port == p));
        match e.reason {
            Reason::UnknownGroup => assert!(group.is_none() && e.chosen.is_none()),
            Reason::NoLiveCandidate => assert!(live.is_empty() && e.chosen.is_none()),
            Reason::MinCostFallback => {
                let c = chosen.expect("fallback picks");
                assert!(live.iter().all(|o| (o.cost, o.port) >= (c.cost, c.port)));
                assert!(live.iter().all(|o| !o.kept));
                assert_eq!(c.rank, Some(0));
            }
            Reason::HashInKept | Reason::WeightedInKept => {
                let c = chosen.expect("pick");
                assert!(c.kept);
                // The kept set is the part of the lower half under the cut.
                let keep = if live.len() / 2 < 2 {
                    live.len()
                } else {
                    live.len() / 2
                };
                let cut = self.params().cut;
                for o in &live {
                    let r = usize::from(o.rank.expect("ranked"));
                    assert_eq!(o.kept, r < keep && o.cost < cut, "{o:?}");
                }
            }
            Reason::Ecmp | Reason::EcmpFallback => {
                let c = chosen.expect("pick");
                assert!(live.iter().all(|o| o.kept) && c.kept);
                let idx = live.iter().position(|o| o.port == c.port).expect("live");
                assert_eq!(idx, e.hash as usize % live.len());
            }
            Reason::Ucmp => {
                let c = chosen.expect("pick");
                assert!(c.kept);
            }
            r => panic!("explanation with reason {r:?}"),
        }
        // Under every scheme the live candidates are ranked by (C, port).
        let mut ranks: Vec<_> = live
            .iter()
            .map(|c| c.rank.expect("live is ranked"))
            .collect();
        ranks.sort_unstable();
        assert!(
            ranks.iter().enumerate().all(|(i, r)| usize::from(*r) == i),
            "{e:?}"
        );
        for o in &live {
            for p in &live {
                if p.rank < o.rank {
                    assert!((p.cost, p.port) < (o.cost, o.port), "{e:?}");
                }
            }
        }
    }

    fn check_global(&self) {
        let cache = self.d.flow_cache();
        assert!(cache.len() <= cache.capacity() && cache.capacity() == FLOWS);
        let c: Counters = *self.d.counters();
        assert_eq!(
            c.packets,
            c.hits + c.new_flows + c.failovers + c.withdrawals + c.unpinned + c.no_route,
            "{c:?}"
        );
        assert!(
            c.min_cost_fallbacks + c.ecmp_fallbacks <= c.new_flows + c.failovers + c.withdrawals
        );
        assert!(c.cache_full <= c.no_route && c.displacements <= c.new_flows);
    }
}

#[cfg(test)]
mod test {
    #[test]
    fn seed_corpus_passes() {
        let n = crate::replay_corpus("decide_events", super::run);
        assert!(n > 0, "no seeds");
        let kinds: Vec<u64> = super::KINDS
            .iter()
            .map(|k| k.load(std::sync::atomic::Ordering::Relaxed))
            .collect();
        assert!(
            kinds.iter().all(|&k| k > 0),
            "hit/new/failover/withdrawal/refused/no-route: {kinds:?}"
        );
    }
}
