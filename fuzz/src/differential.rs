//! The `differential` driver: the same event sequence through
//! `lcmp-decide` and through the reference [`Model`]; every install,
//! sample and liveness result, every decision, every `explain` and the
//! counters (all but `gc_evictions`) must be equal.
//!
//! Flow-cache capacity is made unobservable rather than modelled: the
//! decider has a 16-slot cache (two buckets of 8) and the pool holds at
//! most 8 distinct flows, so even a flow whose two bucket choices coincide
//! finds a free or idle slot (at most 7 *other* flows exist) and an insert
//! can never be refused; `Unpinned` is therefore a failure here. The total clock
//! advance is capped below 2^31 ticks (the start tick is arbitrary, so the
//! counter still wraps), so an entry's wrapping age is its true age and an
//! idle entry can never look fresh again; then where the crate put an entry,
//! which idle entry an insert reused and what GC cleared cannot change a
//! decision, provided an idle entry stays idle: so every install of one
//! input uses the idle timeout of its first tables (a longer timeout
//! installed later would revive, in the model, entries the crate may
//! already have collected or reused). See docs/fuzzing.md.

use arbitrary::{Arbitrary, Unstructured};
use lcmp_decide::{Decider, Decision, FlowKey, GroupId, Instant, PortId, Tables};

use crate::input::{flow_pool, Event, Scenario, GROUP_SPACE};
use crate::model::Model;

/// Ports of both switches.
pub const PORTS: usize = 8;
/// Flow-cache slots of the decider.
pub const FLOWS: usize = 16;
/// Most distinct flows (see the module docs).
pub const MAX_FLOWS: usize = 8;
/// Port ids used in tables and events (8 and 9 are out of range).
const PORT_SPACE: u8 = 10;
/// Cap on the total clock advance of one input.
const MAX_ADVANCE: u64 = (1 << 31) - 1;

/// Runs one fuzz input.
pub fn run(data: &[u8]) {
    // As libfuzzer-sys decodes a typed target's input.
    let Ok(s) = Scenario::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    run_scenario(&s);
}

struct Pair {
    d: Decider<PORTS, FLOWS>,
    m: Model,
    now: u32,
    advanced: u64,
    /// The idle timeout of every install (module docs).
    idle: u32,
}

/// Runs one scenario, panicking on the first difference.
pub fn run_scenario(s: &Scenario) {
    let flows = flow_pool(&s.flows, MAX_FLOWS);
    let cfg = s.config.build();
    let first = s.tables.build(PORT_SPACE);
    let mut p = Pair {
        d: Decider::new(cfg),
        m: Model::new(PORTS, cfg.scheme, cfg.seed, cfg.hash),
        now: s.start.ticks(),
        advanced: 0,
        idle: first.params.idle_timeout_ticks,
    };
    p.install(&first);
    let trace = std::env::var_os("LCMP_FUZZ_TRACE").is_some();
    for (i, ev) in s.events.iter().enumerate() {
        if trace {
            eprintln!("event {i} at tick {}: {ev:?}", p.now);
        }
        p.event(ev, &flows, i);
    }
    // Finally every flow towards every group.
    for key in &flows {
        for g in 0..GROUP_SPACE {
            p.explain(key, GroupId(g), usize::MAX);
        }
    }
}

impl Pair {
    fn now(&self) -> Instant {
        Instant::from_ticks(self.now)
    }

    fn install(&mut self, t: &Tables) {
        let mut t = t.clone();
        t.params.idle_timeout_ticks = self.idle;
        let t = &t;
        let a = self.d.install(t);
        let b = self.m.install(t);
        assert_eq!(a, b, "install of {t:?}");
    }

    fn explain(&self, key: &FlowKey, group: GroupId, i: usize) {
        let a = self.d.explain(key, group, self.now());
        let b = self.m.explain(key, group, self.now());
        assert_eq!(a, b, "explain, event {i}, {key:?}");
    }

    fn event(&mut self, ev: &Event, flows: &[FlowKey], i: usize) {
        match *ev {
            Event::Packet { flow, group } => {
                let key = flows[usize::from(flow) % flows.len()];
                let group = Event::group(group);
                self.explain(&key, group, i);
                let a = self.d.on_packet(self.now(), &key, group);
                let b = self.m.on_packet(self.now(), &key, group);
                if std::env::var_os("LCMP_FUZZ_TRACE").is_some() {
                    eprintln!("  {key:?} -> {group:?}: {a:?} / model {b:?}");
                }
                assert!(!matches!(a, Decision::Unpinned(_)), "cache refused: {a:?}");
                assert_eq!(a, b, "decision, event {i}, {key:?} -> {group:?}");
                let mut ca = *self.d.counters();
                ca.gc_evictions = 0;
                assert_eq!(ca, self.m.counters(), "counters, event {i}");
            }
            Event::Explain { flow, group } => {
                let key = flows[usize::from(flow) % flows.len()];
                self.explain(&key, Event::group(group), i);
            }
            Event::Sample { port, queue } => {
                let port = PortId(port % (PORT_SPACE + 2));
                let a = self.d.sample(self.now(), port, queue.bytes());
                let b = self.m.sample(self.now(), port, queue.bytes());
                assert_eq!(a, b, "sample, event {i}");
            }
            Event::Advance(step) => {
                let dt = u64::from(step.ticks(self.now)).min(MAX_ADVANCE - self.advanced);
                self.advanced += dt;
                self.now = self.now.wrapping_add(dt as u32);
            }
            Event::PortUp { port, up } => {
                let port = PortId(port % (PORT_SPACE + 2));
                assert_eq!(self.d.set_port_up(port, up), self.m.set_port_up(port, up));
            }
            Event::Gc { budget } => {
                let _ = self.d.gc(self.now(), budget.slots());
            }
            Event::Install(ref t) => self.install(&t.build(PORT_SPACE)),
            Event::SetCurrent(c) => {
                self.d.set_tables_current(c);
                self.m.set_tables_current(c);
            }
            Event::SetScheme(s) => {
                self.d.set_scheme(s.build());
                self.m.set_scheme(s.build());
            }
        }
    }
}

#[cfg(test)]
mod test {
    #[test]
    fn seed_corpus_passes() {
        let n = crate::replay_corpus("differential", super::run);
        assert!(n > 0, "no seeds");
    }
}
