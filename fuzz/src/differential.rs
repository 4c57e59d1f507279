//! The `differential` driver: the same event sequence through
//! `lcmp-decide` and through the reference [`Model`]; every install,
//! sample and liveness result, every decision, every `explain` and the
//! counters (all but `gc_evictions`) must be equal.
//!
//! Flow-cache capacity is made unobservable rather than modelled: the
//! decider has a 16-slot cache (two buckets of 8) and the pool holds at
//! most 8 distinct flows, each sent toward one group only (the first its
//! packets name: the cache's entry is a flow and its group, issue 33), so
//! even a flow whose two bucket choices coincide
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

/// What one input compared between the crate and the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Compared {
    /// `on_packet` decisions (each with the counters after it).
    pub decisions: usize,
    /// `explain` results.
    pub explains: usize,
}

impl core::ops::AddAssign for Compared {
    fn add_assign(&mut self, o: Compared) {
        self.decisions += o.decisions;
        self.explains += o.explains;
    }
}

/// Runs one fuzz input: `None` if the bytes do not decode to a
/// [`Scenario`] (libFuzzer skips those too), else what was compared.
pub fn run(data: &[u8]) -> Option<Compared> {
    // As libfuzzer-sys decodes a typed target's input.
    let s = Scenario::arbitrary_take_rest(Unstructured::new(data)).ok()?;
    Some(run_scenario(&s))
}

struct Pair {
    d: Decider<PORTS, FLOWS>,
    m: Model,
    now: u32,
    advanced: u64,
    /// The idle timeout of every install (module docs).
    idle: u32,
    /// The one group each flow's packets go to (module docs).
    group_of: std::collections::HashMap<FlowKey, GroupId>,
    compared: Compared,
}

/// Runs one scenario, panicking on the first difference; returns what it
/// compared.
pub fn run_scenario(s: &Scenario) -> Compared {
    let flows = flow_pool(&s.flows, MAX_FLOWS);
    let cfg = s.config.build();
    let first = s.tables.build(PORT_SPACE);
    let mut p = Pair {
        d: Decider::new(cfg),
        m: Model::new(PORTS, cfg.scheme, cfg.seed, cfg.hash),
        now: s.start.ticks(),
        advanced: 0,
        idle: first.params.idle_timeout_ticks,
        group_of: std::collections::HashMap::new(),
        compared: Compared::default(),
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
    p.compared
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

    fn explain(&mut self, key: &FlowKey, group: GroupId, i: usize) {
        let a = self.d.explain(self.now(), key, group);
        let b = self.m.explain(self.now(), key, group);
        assert_eq!(a, b, "explain, event {i}, {key:?}");
        self.compared.explains += 1;
    }

    fn event(&mut self, ev: &Event, flows: &[FlowKey], i: usize) {
        match *ev {
            Event::Packet { flow, group } => {
                let key = flows[usize::from(flow) % flows.len()];
                let group = *self.group_of.entry(key).or_insert(Event::group(group));
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
                self.compared.decisions += 1;
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
    const MIN_DECISIONS: usize = 600;
    const MIN_EXPLAINS: usize = 4000;

    /// Every seed decodes, and together they compare at least this many
    /// decisions and explanations (the committed corpus: 627 and 4467,
    /// rounded down; a corpus that stopped reaching the decider fails).
    #[test]
    fn seed_corpus_passes() {
        let (mut decoded, mut total) = (0, super::Compared::default());
        let n = crate::replay_corpus("differential", |data| {
            if let Some(c) = super::run(data) {
                decoded += 1;
                total += c;
            }
        });
        eprintln!("differential seeds: {n} files, {decoded} decode, {total:?}");
        assert!(n >= 50, "{n} seed files");
        assert_eq!(decoded, n, "seeds that do not decode to a scenario");
        assert!(total.decisions >= MIN_DECISIONS, "{total:?}");
        assert!(total.explains >= MIN_EXPLAINS, "{total:?}");
    }
}
