//! Equivalence of the exported entries with the decision core *and* with
//! the independent reference model of `fuzz/src/model.rs` (written from the
//! paper, sharing no code with `lcmp-decide`): over random tables, weights,
//! queue states, down ports, schemes and flows, the interpreter's pick list
//! of every group equals the model's kept set in its order, and its port
//! for every new flow equals both `Decider::on_packet`'s and the model's
//! (CRC mode, [`Pick::ScaledHash`]). Then the flow pins: a second property
//! runs two phases through the pin registers against the core.
//!
//! Every property counts what it compared and asserts a minimum, so a
//! generator that stops producing comparable cases fails instead of
//! passing vacuously; tables the core rejects are discarded, counted, and
//! bounded.

mod common;

use core::net::Ipv4Addr;
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use common::{entries_pick_list, headers, Scenario, TwoPhase};
use lcmp_decide::tables::MAX_PORTS;
use lcmp_decide::{
    Candidate, Decider, DeciderConfig, Decision, FlowKey, Group, GroupId, HashAlgorithm, Instant,
    Pick, PortConfig, PortId, Scheme, Tables,
};
use lcmp_tofino::interp::{Interpreter, PinRegisters, PinStatus};
use lcmp_tofino::model::{bucket_ranges, Match};
use lcmp_tofino::schema::names;
use lcmp_tofino::{Agent, EntrySet, Error, ExportOptions};
use quickcheck::{QuickCheck, TestResult};

/// The fuzz crate's reference model, compiled into this test as a module
/// (it uses only `lcmp-decide`'s public types, `heapless` and `std`).
#[allow(unreachable_pub, dead_code, missing_docs, clippy::all)]
#[path = "../../../fuzz/src/model.rs"]
mod reference;

/// The agent, the core and the reference model, fed the same tables,
/// samples and port events.
struct Three {
    agent: Agent,
    core: Box<Decider<MAX_PORTS, 1024>>,
    model: reference::Model,
}

fn three(s: &Scenario) -> Result<Option<Three>, String> {
    let agent = match Agent::new(&s.tables, s.config, s.options.clone()) {
        Ok(a) => a,
        Err(Error::Core(_)) => return Ok(None), // tables the core rejects
        Err(e) => return Err(format!("agent: {e}")),
    };
    let mut core: Box<Decider<MAX_PORTS, 1024>> = Box::new(Decider::new(s.config));
    core.install(&s.tables)
        .map_err(|e| format!("install: {e}"))?;
    let mut model = reference::Model::new(MAX_PORTS, s.config.scheme, s.config.seed, s.config.hash);
    model
        .install(&s.tables)
        .map_err(|e| format!("model install: {e}"))?;
    let mut t = Three { agent, core, model };
    apply(&mut t, &s.samples, &s.down, &[])?;
    Ok(Some(t))
}

fn apply(t: &mut Three, samples: &[(u32, u8, u64)], down: &[u8], up: &[u8]) -> Result<(), String> {
    for &(ts, port, depth) in samples {
        let now = Instant::from_ticks(ts);
        t.agent
            .sample(now, PortId(port), depth)
            .map_err(|e| e.to_string())?;
        t.core
            .sample(now, PortId(port), depth)
            .map_err(|e| e.to_string())?;
        t.model
            .sample(now, PortId(port), depth)
            .map_err(|e| format!("{e:?}"))?;
    }
    let events = down
        .iter()
        .map(|&p| (p, false))
        .chain(up.iter().map(|&p| (p, true)));
    for (p, is_up) in events {
        t.agent
            .set_port_up(PortId(p), is_up)
            .map_err(|e| e.to_string())?;
        t.core
            .set_port_up(PortId(p), is_up)
            .map_err(|e| e.to_string())?;
        t.model
            .set_port_up(PortId(p), is_up)
            .map_err(|e| format!("{e:?}"))?;
    }
    Ok(())
}

/// The model's kept set in pick order: LCMP in `(cost, port)` rank, ECMP
/// and UCMP in installation order; the single chosen port of the
/// minimum-cost fallback; empty without a route.
fn model_pick_list(model: &reference::Model, scheme: Scheme, group: GroupId) -> Vec<PortId> {
    let probe = FlowKey::v4(Ipv4Addr::UNSPECIFIED, Ipv4Addr::UNSPECIFIED, 0, 0, 0);
    let e = model.explain(Instant::ZERO, &probe, group);
    let Some(chosen) = e.chosen else {
        return Vec::new();
    };
    let mut kept: Vec<_> = e.candidates.iter().filter(|c| c.kept).collect();
    if scheme == Scheme::Lcmp {
        kept.sort_by_key(|c| c.rank);
    }
    if kept.is_empty() {
        return vec![chosen];
    }
    kept.iter().map(|c| c.port).collect()
}

static ACCEPTED: AtomicUsize = AtomicUsize::new(0);
static REJECTED: AtomicUsize = AtomicUsize::new(0);
static FLOWS: AtomicUsize = AtomicUsize::new(0);
static PICK_LISTS: AtomicUsize = AtomicUsize::new(0);
static NO_ROUTES: AtomicUsize = AtomicUsize::new(0);

/// Compares pick lists and new-flow ports; returns (pick lists, flows).
fn check(s: &Scenario) -> Result<Option<(usize, usize)>, String> {
    let Some(mut t) = three(s)? else {
        return Ok(None);
    };
    let program = t.agent.program();
    let entries = t.agent.entries().map_err(|e| format!("entries: {e}"))?;
    let interp = Interpreter::new(&program, &entries);
    let mut lists = 0;
    for g in &s.tables.groups {
        let got = entries_pick_list(&entries, g.id)
            .ok_or_else(|| format!("group {:?}: incomplete entries", g.id))?;
        let want: Vec<u64> = model_pick_list(&t.model, s.config.scheme, g.id)
            .into_iter()
            .map(|p| t.agent.dev_port(p))
            .collect();
        if got != want {
            return Err(format!(
                "group {:?}: entries pick {got:?}, reference model keeps {want:?}",
                g.id
            ));
        }
        if got.is_empty() {
            NO_ROUTES.fetch_add(1, Relaxed);
        }
        lists += 1;
    }
    let now = Instant::from_ticks(s.samples.last().map_or(1, |x| x.0));
    let mut flows = 0;
    for (key, group) in &s.flows {
        let h = headers(key);
        let tr = interp.ingress(&h).map_err(|e| e.to_string())?;
        if tr.hash != t.model.hash(key) {
            return Err(format!("flow {key:?}: hash {:#x} vs model", tr.hash));
        }
        let model = t
            .model
            .explain(now, key, *group)
            .chosen
            .map(|p| t.agent.dev_port(p));
        let core = match t.core.on_packet(now, key, *group) {
            Decision::New { port, .. } => Some(t.agent.dev_port(port)),
            Decision::NoRoute(_) => None,
            Decision::Hit(_) => continue, // a repeated random flow
            other => return Err(format!("unexpected core decision {other:?}")),
        };
        if tr.port != core || tr.port != model {
            return Err(format!(
                "flow {key:?} group {group:?}: interpreter {tr:?}, core {core:?}, model {model:?}, \
                 pick list {:?}",
                t.agent.pick_list(*group)
            ));
        }
        flows += 1;
    }
    Ok(Some((lists, flows)))
}

#[test]
fn new_flows_match_the_core_and_the_reference_model() {
    fn prop(s: Scenario) -> TestResult {
        match check(&s) {
            Ok(Some((lists, flows))) => {
                ACCEPTED.fetch_add(1, Relaxed);
                PICK_LISTS.fetch_add(lists, Relaxed);
                FLOWS.fetch_add(flows, Relaxed);
                TestResult::passed()
            }
            Ok(None) => {
                REJECTED.fetch_add(1, Relaxed);
                TestResult::discard()
            }
            Err(msg) => TestResult::error(msg),
        }
    }
    QuickCheck::new()
        .tests(400)
        .quickcheck(prop as fn(Scenario) -> TestResult);
    let (accepted, rejected) = (ACCEPTED.load(Relaxed), REJECTED.load(Relaxed));
    let (lists, flows) = (PICK_LISTS.load(Relaxed), FLOWS.load(Relaxed));
    eprintln!("{accepted} scenarios ({rejected} rejected), {lists} pick lists, {flows} flows");
    assert!(accepted >= 400, "only {accepted} scenarios compared");
    assert!(
        rejected * 10 <= accepted,
        "{rejected} scenarios rejected by the core against {accepted} compared"
    );
    assert!(lists >= 1000, "only {lists} pick lists compared");
    assert!(flows >= 3000, "only {flows} new-flow decisions compared");
    assert!(
        NO_ROUTES.load(Relaxed) >= 10,
        "no-route groups not exercised"
    );
}

/// `lcmp_bucket` computes `((h >> 16) * k) >> 16` for every k up to 16 and
/// many hashes, including the extremes.
#[test]
fn bucket_table_is_the_scaled_pick() {
    let mut t = Tables::paper_defaults();
    t.params.pick = Pick::ScaledHash;
    let mut group = Group {
        id: GroupId(1),
        candidates: heapless::Vec::new(),
    };
    for id in 0..16u8 {
        let _ = t.ports.push(PortConfig {
            id: PortId(id),
            rate_bps: 100_000_000_000,
            buffer_bytes: 1 << 24,
        });
        let _ = group.candidates.push(Candidate {
            port: PortId(id),
            delay_units: 1,
            capacity_bps: 100_000_000_000,
        });
    }
    let _ = t.groups.push(group);
    let cfg = DeciderConfig::default()
        .with_scheme(Scheme::Ecmp)
        .with_seed(0)
        .with_hash(HashAlgorithm::Crc32);
    let agent = Agent::new(&t, cfg, ExportOptions::default()).expect("agent");
    let program = agent.program();
    assert_eq!(program.sizes.max_k, 16);
    let entries = agent.entries().expect("entries");
    let interp = Interpreter::new(&program, &entries);
    let mut hashes: Vec<u32> = vec![0, 1, 0xFFFF, 0x1_0000, u32::MAX, u32::MAX - 1];
    let mut x: u32 = 0x1234_5678;
    for _ in 0..2000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        hashes.push(x);
    }
    let mut compared = 0;
    for k in 1..=16u64 {
        // The range boundaries themselves.
        hashes.extend(bucket_ranges(k).iter().map(|r| (r.1 as u32) << 16));
        for &h in &hashes {
            let e = interp
                .lookup(names::BUCKET, &[k, u64::from(h >> 16)])
                .expect("lookup")
                .expect("bucket entry");
            assert_eq!(
                e.params[0],
                (u64::from(h >> 16) * k) >> 16,
                "h {h:#x}, k {k}"
            );
            compared += 1;
        }
    }
    assert!(compared > 32_000);
}

#[test]
fn murmur3_and_other_picks_are_refused() {
    let mut t = Tables::paper_defaults();
    t.params.pick = Pick::ScaledHash;
    let cfg = DeciderConfig::default().with_hash(HashAlgorithm::Murmur3);
    assert!(matches!(
        Agent::new(&t, cfg, ExportOptions::default()),
        Err(Error::Murmur3NotSupported)
    ));
    let crc = DeciderConfig::default().with_hash(HashAlgorithm::Crc32);
    for pick in [Pick::Hash, Pick::CapacityWeighted] {
        t.params.pick = pick;
        let e = Agent::new(&t, crc, ExportOptions::default()).expect_err("refused");
        assert!(matches!(e, Error::PickNotSupported(p) if p == pick));
        assert!(e.to_string().contains("ScaledHash"), "{e}");
    }
}

/// The comparison can fail: a selection table with one bucket moved to
/// another port, a wrong seed, or a shifted bucket range is caught on
/// testbed8 DC1.
#[test]
fn corrupted_entries_are_caught() {
    let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
    let cfg = DeciderConfig::default()
        .with_scheme(Scheme::Lcmp)
        .with_seed(99)
        .with_hash(HashAlgorithm::Crc32);
    let agent =
        lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, ExportOptions::default()).expect("agent");
    let mut core: Decider<MAX_PORTS, 1024> = Decider::new(cfg);
    core.install(agent.tables()).expect("install");
    let program = agent.program();
    let good = agent.entries().expect("entries");
    let flows: Vec<FlowKey> = (0..400u16)
        .map(|i| {
            FlowKey::v4(
                Ipv4Addr::new(10, 1, 0, 1),
                Ipv4Addr::new(10, 8, 0, 2),
                1000 + i,
                4791,
                17,
            )
        })
        .collect();
    let mismatches = |entries: &EntrySet, program: &lcmp_tofino::Program| -> usize {
        let interp = Interpreter::new(program, entries);
        flows
            .iter()
            .filter(|k| {
                let want = core
                    .explain(Instant::ZERO, k, GroupId(8))
                    .chosen
                    .map(|p| u64::from(p.0));
                interp.ingress(&headers(k)).map(|t| t.port).ok() != Some(want)
            })
            .count()
    };
    assert_eq!(mismatches(&good, &program), 0);
    let mut bad = good.clone();
    let e = bad
        .entries
        .iter_mut()
        .find(|e| e.table == names::SELECT && e.matches[1] == Match::Exact(1))
        .expect("bucket 1");
    e.params[0] = 7;
    assert!(
        mismatches(&bad, &program) > 0,
        "a moved bucket must be caught"
    );
    // The pick reads the hash's top 16 bits: a seed that differs there.
    let wrong_seed = lcmp_tofino::Program {
        seed: 99 ^ 0x8000_0000,
        ..program.clone()
    };
    assert!(
        mismatches(&good, &wrong_seed) > 0,
        "a wrong seed must be caught"
    );
    let mut shifted = good.clone();
    for e in shifted
        .entries
        .iter_mut()
        .filter(|e| e.table == names::BUCKET && e.matches[0] == Match::Exact(3))
    {
        if let Match::Range { low, high } = &mut e.matches[1] {
            // Move the boundary between buckets 0 and 1 by 2000.
            if *low == 0 {
                *high -= 2000;
            } else if *high < 65_535 && *low > 0 && *low < 30_000 {
                *low -= 2000;
            }
        }
    }
    assert!(
        mismatches(&shifted, &program) > 0,
        "a shifted bucket boundary must be caught"
    );
}

static PACKETS: AtomicUsize = AtomicUsize::new(0);
static FAILOVERS: AtomicUsize = AtomicUsize::new(0);
static WAY1_PINS: AtomicUsize = AtomicUsize::new(0);
static PIN_FAILS: AtomicUsize = AtomicUsize::new(0);
static FALLBACKS: AtomicUsize = AtomicUsize::new(0);

/// The group's stable fallback device port for a flow of `hash`, worked
/// out here from the core's tables and port states (the rule
/// `lcmp_fallback`'s entries are written by): the candidate of the scaled
/// pick `(hash[15:0] * n) >> 16` in candidate order while it is up, else
/// the next live candidate after it (cyclically).
fn fallback_port(t: &Three, group: GroupId, hash: u32) -> Option<u64> {
    let g = t.agent.tables().groups.iter().find(|g| g.id == group)?;
    let n = g.candidates.len();
    if n == 0 {
        return None;
    }
    let j = ((u64::from(hash & 0xFFFF) * n as u64) >> 16) as usize;
    let up = |i: usize| {
        g.candidates
            .get(i)
            .and_then(|c| t.core.port_state(c.port))
            .is_some_and(|s| s.is_up())
    };
    let to = (0..n).map(|d| (j + d) % n).find(|&i| up(i)).unwrap_or(j);
    g.candidates.get(to).map(|c| t.agent.dev_port(c.port))
}

fn check_two_phase(s: &TwoPhase) -> Result<bool, String> {
    let b = &s.base;
    let Some(mut t) = three(b)? else {
        return Ok(false);
    };
    let mut pins = PinRegisters::default();
    // Flows whose pin failed (both ways held other flows): the data plane
    // routes them unpinned by the selection, the core keeps a pin; they are
    // compared with the selection from then on.
    let mut unpinned = vec![false; b.flows.len()];
    let mut clock = b.samples.last().map_or(0, |x| x.0);
    for phase in 0..2 {
        if phase == 1 {
            apply(&mut t, &s.samples2, &s.down2, &s.up2)?;
            clock = clock.max(s.samples2.last().map_or(0, |x| x.0));
        }
        clock += 10;
        let program = t.agent.program();
        let entries = t.agent.entries().map_err(|e| format!("entries: {e}"))?;
        let interp = Interpreter::new(&program, &entries);
        for (i, (key, group)) in b.flows.iter().enumerate() {
            let h = headers(key);
            let d = t.core.on_packet(Instant::from_ticks(clock), key, *group);
            let tr = interp
                .packet(&mut pins, &h, u64::from(clock) * 1000)
                .map_err(|e| e.to_string())?;
            if tr.miss.is_some() {
                return Err(format!("table miss {tr:?}"));
            }
            PACKETS.fetch_add(1, Relaxed);
            if tr.resubmitted && tr.port.is_some() {
                FAILOVERS.fetch_add(1, Relaxed);
            }
            if matches!(
                tr.ways,
                (PinStatus::Busy, PinStatus::Taken | PinStatus::Hit)
            ) {
                WAY1_PINS.fetch_add(1, Relaxed);
            }
            if tr.pin_failed {
                PIN_FAILS.fetch_add(1, Relaxed);
                unpinned[i] = true;
            }
            if unpinned[i] {
                // An unpinned flow takes its group's stable fallback
                // (lcmp_fallback), or the selection where it has none.
                let sel = interp.ingress(&h).map_err(|e| e.to_string())?;
                let expected = if tr.fallback {
                    FALLBACKS.fetch_add(1, Relaxed);
                    fallback_port(&t, *group, tr.hash)
                } else {
                    sel.port
                };
                if tr.port != expected {
                    return Err(format!(
                        "unpinned flow {key:?}: {tr:?}, expected port {expected:?} (selection {sel:?})"
                    ));
                }
                continue;
            }
            if tr.port != d.port().map(|p| t.agent.dev_port(p)) {
                return Err(format!(
                    "phase {phase}: flow {key:?}: interpreter {tr:?}, core {d:?}"
                ));
            }
        }
    }
    Ok(true)
}

/// Established flows follow their pins (in either way), and a flow whose
/// pinned port went down is re-decided (resubmit) to the core's failover
/// port.
#[test]
fn pins_and_failover_match_core() {
    fn prop(s: TwoPhase) -> TestResult {
        match check_two_phase(&s) {
            Ok(true) => TestResult::passed(),
            Ok(false) => TestResult::discard(),
            Err(msg) => TestResult::error(msg),
        }
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(TwoPhase) -> TestResult);
    let packets = PACKETS.load(Relaxed);
    let failovers = FAILOVERS.load(Relaxed);
    let way1 = WAY1_PINS.load(Relaxed);
    let fails = PIN_FAILS.load(Relaxed);
    let fallbacks = FALLBACKS.load(Relaxed);
    eprintln!("{packets} packets, {failovers} failovers, {way1} way-1 pins, {fails} pin failures, {fallbacks} fallback packets");
    assert!(packets >= 3000, "only {packets} packets compared");
    assert!(failovers >= 20, "only {failovers} failovers exercised");
    assert!(way1 >= 20, "only {way1} way-1 pins exercised");
    assert!(fails * 20 <= packets, "pin failures dominate");
}

/// testbed8 DC1, idle: the three lowest-cost next hops to DC8 are kept, in
/// cost order (via DC6, DC4, DC2; ports are the neighbours in id order), and
/// device ports are mapped; a device port shared by two ports is refused.
#[test]
fn testbed8_dc1_pick_list_and_device_ports() {
    let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
    let cfg = DeciderConfig::default()
        .with_scheme(Scheme::Lcmp)
        .with_seed(0)
        .with_hash(HashAlgorithm::Crc32);
    let mut opts = ExportOptions::default();
    for (i, d) in opts.dev_ports.iter_mut().enumerate() {
        *d = 128 + 8 * i as u16;
    }
    let agent = lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, opts.clone()).expect("agent");
    assert_eq!(
        agent.pick_list(GroupId(8)).expect("pick list"),
        [PortId(4), PortId(2), PortId(0)]
    );
    let entries = agent.entries().expect("entries");
    assert_eq!(
        entries_pick_list(&entries, GroupId(8)),
        Some(vec![160, 144, 128])
    );
    opts.dev_ports[1] = opts.dev_ports[0];
    assert!(matches!(
        lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, opts),
        Err(Error::DevPort(1))
    ));
}
