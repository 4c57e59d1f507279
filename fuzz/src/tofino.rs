//! The `tofino_equiv` driver: the Tofino frontend's table entries, run by
//! its interpreter with Tofino match semantics and the flow-pin registers,
//! against `lcmp-decide` on the same tables, samples, port events and
//! packets. Every packet must leave on the same (device) port, or be dropped
//! by both.
//!
//! Within what the frontend supports: IPv4, CRC-32, the data plane's pick
//! (`Pick::ScaledHash`), group ids below 256, the default 2 s idle timeout,
//! and a clock that advances a few milliseconds a phase (the ASIC's pin
//! timestamps count 2^24 ns units, so idle-timeout boundaries are not
//! compared). Distinct flows may share pin cells: two flows sharing a
//! way-0 cell are both pinned, one in each way, and must both keep the
//! core's ports; a flow that finds both of its cells held by live flows is
//! routed unpinned, on its group's stable fallback (`lcmp_fallback`),
//! where the core pins it: candidate `((hash & 0xFFFF) * n) >> 16` of the
//! group's `n`, or the next one after it (cyclically) that the core sees
//! up, computed here from the core's tables and port states. From its
//! first unpinned packet on, such a flow is compared with the fallback
//! while unpinned and not at all once pinned (the core's pin keeps its
//! first decision). A flow that takes a cell while its `lcmp_unpinned`
//! cell holds a fresh record of its own fallback tag, written by another
//! flow sharing that cell, pins the fallback port (docs/tofino.md: in
//! order, not the core's choice): that packet is compared with the
//! fallback, and the flow not at all afterwards. Every other flow, with
//! the core. This is the contract of the crate's quickcheck
//! (`frontends/tofino/tests/equivalence.rs`) and `tests/pins.rs`, searched
//! by coverage instead of at random.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use arbitrary::Arbitrary;
use lcmp_decide::tables::MAX_PORTS;
use lcmp_decide::{
    Addresses, Decider, DeciderConfig, FlowKey, GroupId, HashAlgorithm, Instant, Params, Pick,
    PortId,
};
use lcmp_tofino::hash::Headers;
use lcmp_tofino::interp::{pin_slot, unpinned_index, Interpreter, PinRegisters, PinStatus, FB_TAG};
use lcmp_tofino::{Agent, ExportOptions};

use crate::input::{QueueSpec, SchemeSpec, TablesSpec, GROUP_SPACE};

/// Packets compared so far (the seed test checks the target is not vacuous).
pub static COMPARED: AtomicUsize = AtomicUsize::new(0);
/// Flow pairs of the inputs that share a way-0 pin cell.
pub static SHARED: AtomicUsize = AtomicUsize::new(0);
/// Packets routed unpinned (both ways held by other live flows).
pub static UNPINNED: AtomicUsize = AtomicUsize::new(0);
/// Flows that took a cell after going unpinned, with their
/// `lcmp_unpinned` record intact (pinned to their fallback port).
pub static REPINNED: AtomicUsize = AtomicUsize::new(0);
/// Flows never unpinned that took a cell while another flow's record of
/// the same fallback tag sat in their `lcmp_unpinned` cell.
pub static BORROWED: AtomicUsize = AtomicUsize::new(0);

/// One `tofino_equiv` input.
#[derive(Arbitrary, Debug)]
pub struct TofinoInput {
    /// The tables (port ids below 64).
    pub tables: Box<TablesSpec>,
    /// Hash seed.
    pub seed: u32,
    /// Scheme.
    pub scheme: SchemeSpec,
    /// Device ports 128, 132, ... instead of the identity map.
    pub front_panel: bool,
    /// Flows: `(source, low destination bits, sport, dport, TCP?, group)`.
    pub flows: Vec<(u32, u16, u16, u16, bool, u8)>,
    /// Phases: state changes, then every flow sends a packet.
    pub phases: Vec<Phase>,
}

/// State changes before a round of packets.
#[derive(Arbitrary, Debug)]
pub struct Phase {
    /// Samples: `(µs since the previous one, port selector, depth)`.
    pub samples: Vec<(u16, u8, QueueSpec)>,
    /// Liveness changes: `(port selector, up)`.
    pub links: Vec<(u8, bool)>,
}

fn headers(k: &FlowKey) -> Headers {
    match k.addrs {
        Addresses::V4 { src, dst } => Headers {
            src,
            dst,
            sport: k.sport,
            dport: k.dport,
            proto: k.proto,
        },
        Addresses::V6 { .. } => unreachable!("IPv4 only"),
    }
}

/// The group's stable fallback for an ECMP hash, from the core's tables
/// and port states: candidate `((hash & 0xFFFF) * n) >> 16`, or the next
/// one after it (cyclically) that is up; that candidate if none is.
fn fallback<const N: usize, const S: usize>(
    core: &Decider<N, S>,
    group: GroupId,
    hash: u32,
) -> Option<PortId> {
    let g = core.tables()?.groups().iter().find(|g| g.id == group)?;
    let n = g.candidates.len();
    let j = ((usize::try_from(hash & 0xFFFF).ok()?) * n) >> 16;
    let up = |i: usize| {
        core.port_state(g.candidates[i].port)
            .is_some_and(|s| s.is_up())
    };
    let to = (0..n).map(|d| (j + d) % n).find(|&i| up(i)).unwrap_or(j);
    g.candidates.get(to).map(|c| c.port)
}

/// Runs one input.
pub fn run(input: &TofinoInput) {
    let mut tables = input.tables.build(MAX_PORTS as u8);
    tables.params.pick = Pick::ScaledHash;
    tables.params.idle_timeout_ticks = Params::PAPER.idle_timeout_ticks;
    tables.params.ticks_per_second = Params::PAPER.ticks_per_second;
    let config = DeciderConfig::default()
        .with_scheme(input.scheme.build())
        .with_seed(input.seed)
        .with_hash(HashAlgorithm::Crc32);
    // An odd seed selects the smallest pin registers (2 x 256 cells), so
    // that the inputs' flows share cells (module docs) as often as they
    // do not.
    let mut options = ExportOptions::default();
    if input.seed & 1 == 1 {
        options.pin_slots = 512;
    }
    if input.front_panel {
        for (i, d) in options.dev_ports.iter_mut().enumerate() {
            *d = 128 + 4 * i as u16;
        }
    }
    let mut agent = match Agent::new(&tables, config, options) {
        Ok(a) => a,
        Err(e) => {
            // Only what the core rejects (the rest is excluded above).
            assert!(
                tables.compile(MAX_PORTS).is_err(),
                "agent refused valid tables: {e}"
            );
            return;
        }
    };
    let mut core: Box<Decider<MAX_PORTS, 1024>> = Box::new(Decider::new(config));
    core.install(&tables).expect("the agent accepted them");

    let flows: Vec<(FlowKey, GroupId)> = input
        .flows
        .iter()
        .take(24)
        .map(|&(src, low, sport, dport, tcp, g)| {
            let gid = u16::from(g) % GROUP_SPACE;
            let dst = (10 << 24) | (u32::from(gid) << 16) | u32::from(low);
            let key = FlowKey {
                addrs: Addresses::V4 { src, dst },
                sport,
                dport,
                proto: if tcp { 6 } else { 17 },
            };
            (key, GroupId(gid))
        })
        .collect();
    // Flows sharing a way-0 pin cell (module docs): counted, so that the
    // seed test can require that shared cells are reached.
    let slots = agent.program().sizes.pin_slots;
    let mut cells = BTreeMap::new();
    for (k, _) in &flows {
        let (sig, idx) = pin_slot(&headers(k), slots);
        if cells.insert(idx, sig).is_some_and(|old| old != sig) {
            SHARED.fetch_add(1, Ordering::Relaxed);
        }
    }
    // Flows that have had an unpinned packet (both ways held by others).
    let mut unpinned = vec![false; flows.len()];
    // Flows that took a cell after going unpinned.
    let mut pinned_since = vec![false; flows.len()];

    let ports: Vec<PortId> = tables.ports.iter().map(|p| p.id).collect();
    let pick = |sel: u8| ports[usize::from(sel) % ports.len()];
    let mut pins = PinRegisters::default();
    let mut t = 1u32;
    for (n, phase) in input.phases.iter().take(6).enumerate() {
        if !ports.is_empty() {
            for &(dt, sel, q) in phase.samples.iter().take(64) {
                t += u32::from(dt % 5000);
                let (now, port, bytes) = (Instant::from_ticks(t), pick(sel), q.bytes());
                agent.sample(now, port, bytes).expect("agent sample");
                core.sample(now, port, bytes).expect("core sample");
            }
            for &(sel, up) in phase.links.iter().take(16) {
                agent.set_port_up(pick(sel), up).expect("agent link");
                core.set_port_up(pick(sel), up).expect("core link");
            }
        }
        t += 10;
        let program = agent.program();
        let entries = agent.entries().expect("entries");
        let interp = Interpreter::new(&program, &entries);
        for (i, (key, group)) in flows.iter().enumerate() {
            // Whether lcmp_unpinned still holds this flow's record: its
            // current fallback's tag (another unpinned flow of another
            // fallback may have overwritten the cell).
            let h = headers(key);
            let fb = fallback(&core, *group, interp.hash(&h)).map(|p| agent.dev_port(p));
            let (sig, _) = pin_slot(&h, slots);
            let recorded = fb.is_some_and(|p| {
                pins.unpinned
                    .get(&unpinned_index(sig, slots))
                    .is_some_and(|c| c.tag == u32::from(FB_TAG) | p as u32)
            });
            let d = core.on_packet(Instant::from_ticks(t), key, *group);
            let tr = interp
                .packet(&mut pins, &headers(key), u64::from(t) * 1000)
                .expect("interpreter");
            COMPARED.fetch_add(1, Ordering::Relaxed);
            if tr.pin_failed {
                unpinned[i] = true;
                pinned_since[i] = false;
                UNPINNED.fetch_add(1, Ordering::Relaxed);
                let want = fallback(&core, *group, tr.hash).map(|p| agent.dev_port(p));
                assert_eq!(
                    tr.port, want,
                    "phase {n}: unpinned flow {key:?} -> {group:?}: {tr:?}"
                );
                assert!(tr.fallback, "phase {n}: unpinned off the fallback: {tr:?}");
                continue;
            }
            let took_a_cell = tr.ways.0 == PinStatus::Taken || tr.ways.1 == PinStatus::Taken;
            if !unpinned[i] && recorded && took_a_cell && tr.fallback {
                // lcmp_unpinned is indexed by a slice of the signature and
                // holds only the fallback tag: another flow's fresh record
                // of the same tag reads as this flow's own, so it pins the
                // fallback port (in order: the flow is new to its cell).
                // Its pin keeps that port, not the core's.
                BORROWED.fetch_add(1, Ordering::Relaxed);
                assert_eq!(tr.port, fb, "phase {n}: a borrowed record {key:?}: {tr:?}");
                unpinned[i] = true;
                pinned_since[i] = true;
                continue;
            }
            if unpinned[i] {
                // Taking a cell does not move it: a flow unpinned lately
                // (its record intact) pins its fallback port. Afterwards
                // its pin keeps it (the core's pin keeps its own first
                // decision, so it is not compared with the core).
                if !pinned_since[i] && recorded && took_a_cell {
                    REPINNED.fetch_add(1, Ordering::Relaxed);
                    assert_eq!(tr.port, fb, "phase {n}: a new pin moved {key:?}: {tr:?}");
                    assert!(tr.fallback, "phase {n}: {tr:?}");
                }
                pinned_since[i] |= took_a_cell || tr.pin_hit;
                continue;
            }
            let want = d.port().map(|p| agent.dev_port(p));
            assert_eq!(
                tr.port, want,
                "phase {n}: flow {key:?} -> {group:?}: interpreter {tr:?}, core {d:?}"
            );
        }
    }
}

#[cfg(test)]
mod test {
    use arbitrary::{Arbitrary, Unstructured};
    use std::sync::atomic::Ordering;

    #[test]
    fn seed_corpus_passes_and_compares_packets() {
        let n = crate::replay_corpus("tofino_equiv", |data| {
            if let Ok(i) = super::TofinoInput::arbitrary_take_rest(Unstructured::new(data)) {
                super::run(&i);
            }
        });
        assert!(n > 0, "no seeds");
        let compared = super::COMPARED.load(Ordering::Relaxed);
        assert!(compared >= 100, "only {compared} packets compared");
        let shared = super::SHARED.load(Ordering::Relaxed);
        assert!(shared > 0, "no seed has flows sharing a pin cell");
        let borrowed = super::BORROWED.load(Ordering::Relaxed);
        assert!(borrowed > 0, "no seed reads another flow's unpinned record");
    }
}
