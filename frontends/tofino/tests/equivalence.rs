//! Equivalence of the exported entries with the decision core: over random
//! tables, weights, queue states, down ports, schemes and flows, the
//! interpreter's port for a new flow is `Decider::on_packet`'s port (CRC
//! mode), in every case.

use core::net::Ipv4Addr;

use lcmp_decide::tables::{default_capacity_thresholds, MAX_PORTS};
use lcmp_decide::{
    Candidate, Decider, DeciderConfig, Decision, FlowKey, Group, GroupId, HashAlgorithm, Instant,
    PortConfig, PortId, Scheme, Tables, Weights,
};
use lcmp_tofino::hash::Headers;
use lcmp_tofino::interp::Interpreter;
use lcmp_tofino::model::{q_ranges, CELL_BYTES};
use lcmp_tofino::{Agent, Error, ExportOptions};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

fn below(g: &mut Gen, n: usize) -> usize {
    usize::arbitrary(g) % n.max(1)
}

/// A random configuration, congestion state and set of flows.
#[derive(Clone, Debug)]
struct Scenario {
    tables: Tables,
    options: ExportOptions,
    config: DeciderConfig,
    samples: Vec<(u32, u8, u64)>,
    down: Vec<u8>,
    flows: Vec<(FlowKey, GroupId)>,
}

impl Arbitrary for Scenario {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut t = Tables::paper_defaults();
        // Levels: the paper's ten, or 1..=16 random strictly increasing.
        if bool::arbitrary(g) {
            let n = 1 + below(g, 16);
            let mut lv: Vec<u8> = (0..n).map(|_| 1 + (u8::arbitrary(g) % 255)).collect();
            lv.sort_unstable();
            lv.dedup();
            t.levels = lv.iter().copied().collect();
            t.capacity_thresholds_bps = default_capacity_thresholds(400_000_000_000, lv.len());
        }
        let w = &mut t.params.weights;
        *w = Weights {
            alpha: u32::arbitrary(g) % 8,
            beta: u32::arbitrary(g) % 8,
            w_dl: u32::arbitrary(g) % 8,
            w_lc: u32::arbitrary(g) % 8,
            w_ql: u32::arbitrary(g) % 8,
            w_tl: u32::arbitrary(g) % 8,
            w_dp: u32::arbitrary(g) % 8,
            s_path: (u8::arbitrary(g) % 5),
            s_cong: (u8::arbitrary(g) % 5),
            s_total: (u8::arbitrary(g) % 5),
        };
        t.params.cut = u8::arbitrary(g);
        let a = u8::arbitrary(g);
        let b = u8::arbitrary(g);
        t.params.high_water = a.max(b);
        t.params.low_water = a.min(b);
        // Ports: 1..=12 distinct ids below 64.
        let nports = 1 + below(g, 12);
        let mut ids: Vec<u8> = Vec::new();
        while ids.len() < nports {
            let id = (u8::arbitrary(g) as usize % MAX_PORTS) as u8;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        let rates = [25u64, 40, 100, 200, 400];
        for &id in &ids {
            let rate = rates[below(g, rates.len())] * 1_000_000_000;
            let buffer = [1u64 << 20, 22_000_000, 5_000_000_000][below(g, 3)];
            let _ = t.ports.push(PortConfig {
                id: PortId(id),
                rate_bps: rate,
                buffer_bytes: buffer,
            });
        }
        // Groups: 1..=5 with ids 1..=255, each 1..=min(16, ports) candidates.
        let ngroups = 1 + below(g, 5);
        let mut gids: Vec<u16> = Vec::new();
        while gids.len() < ngroups {
            let id = 1 + (u16::arbitrary(g) % 255);
            if !gids.contains(&id) {
                gids.push(id);
            }
        }
        for &gid in &gids {
            let mut group = Group {
                id: GroupId(gid),
                candidates: heapless::Vec::new(),
            };
            let n = 1 + below(g, ids.len().min(16));
            let mut pool = ids.clone();
            for _ in 0..n {
                let port = pool.swap_remove(below(g, pool.len()));
                let cap = rates[below(g, rates.len())] * 1_000_000_000;
                let _ = group.candidates.push(Candidate {
                    port: PortId(port),
                    delay_units: u32::arbitrary(g) % 300,
                    capacity_bps: cap,
                });
            }
            let _ = t.groups.push(group);
        }
        let scheme = [Scheme::Lcmp, Scheme::Lcmp, Scheme::Ecmp, Scheme::Ucmp][below(g, 4)];
        let config = DeciderConfig {
            scheme,
            seed: u32::arbitrary(g),
            hash: HashAlgorithm::Crc32,
            ..DeciderConfig::default()
        };
        // Queue samples: mostly on LCMP ports, depths across the buffer.
        let mut samples = Vec::new();
        let mut now = 0u32;
        for _ in 0..below(g, 40) {
            now = now.wrapping_add(1 + u32::arbitrary(g) % 5000);
            let port = ids[below(g, ids.len())];
            let depth = match below(g, 4) {
                0 => 0,
                1 => u64::arbitrary(g) % 30_000_000,
                2 => u64::arbitrary(g) % 6_000_000_000,
                _ => u64::arbitrary(g),
            };
            samples.push((now, port, depth));
        }
        let down: Vec<u8> = ids.iter().copied().filter(|_| below(g, 4) == 0).collect();
        let flows = (0..1 + below(g, 24))
            .map(|i| {
                let gid = gids[below(g, gids.len())];
                let key = FlowKey::v4(
                    Ipv4Addr::from_bits(u32::arbitrary(g)),
                    Ipv4Addr::from_bits(
                        (10 << 24) | (u32::from(gid) << 16) | (u32::arbitrary(g) & 0xFFFF),
                    ),
                    u16::arbitrary(g) ^ (i as u16),
                    u16::arbitrary(g),
                    if bool::arbitrary(g) { 17 } else { 6 },
                );
                (key, GroupId(gid))
            })
            .collect();
        let mut options = ExportOptions::default();
        if bool::arbitrary(g) {
            // Front-panel style device ports: 128, 132, 136, ...
            for (i, d) in options.dev_ports.iter_mut().enumerate() {
                *d = 128 + 4 * i as u16;
            }
        }
        Scenario {
            tables: t,
            options,
            config,
            samples,
            down,
            flows,
        }
    }
}

fn headers(k: &FlowKey) -> Headers {
    match k.addrs {
        lcmp_decide::Addresses::V4 { src, dst } => Headers {
            src,
            dst,
            sport: k.sport,
            dport: k.dport,
            proto: k.proto,
        },
        lcmp_decide::Addresses::V6 { .. } => Headers {
            src: 0,
            dst: 0,
            sport: 0,
            dport: 0,
            proto: 0,
        },
    }
}

fn check(s: &Scenario) -> Result<usize, String> {
    let mut agent = match Agent::new(&s.tables, s.config, s.options) {
        Ok(a) => a,
        Err(Error::Core(_)) => return Ok(0), // tables the core rejects
        Err(e) => return Err(format!("agent: {e}")),
    };
    let mut core: Decider<MAX_PORTS, 1024> = Decider::new(s.config);
    core.install(&s.tables)
        .map_err(|e| format!("install: {e}"))?;
    for &(t, port, depth) in &s.samples {
        agent
            .sample(Instant::from_ticks(t), PortId(port), depth)
            .map_err(|e| e.to_string())?;
        core.sample(Instant::from_ticks(t), PortId(port), depth)
            .map_err(|e| e.to_string())?;
    }
    for &p in &s.down {
        agent
            .set_port_up(PortId(p), false)
            .map_err(|e| e.to_string())?;
        core.set_port_up(PortId(p), false)
            .map_err(|e| e.to_string())?;
    }
    let program = agent.program();
    let entries = agent.entries().map_err(|e| format!("entries: {e}"))?;
    let interp = Interpreter::new(&program, &entries);
    let mut compared = 0;
    let now = Instant::from_ticks(s.samples.last().map_or(1, |x| x.0));
    for (key, group) in &s.flows {
        let want = match core.on_packet(now, key, *group) {
            Decision::New { port, .. } => Some(agent.dev_port(port)),
            Decision::NoRoute(_) => None,
            Decision::Hit(_) => continue, // a repeated random flow
            other => return Err(format!("unexpected core decision {other:?}")),
        };
        let tr = interp.ingress(&headers(key)).map_err(|e| e.to_string())?;
        if tr.port != want {
            return Err(format!(
                "flow {key:?} group {group:?}: interpreter {tr:?}, core {want:?}, pick list {:?}",
                agent.pick_list(*group)
            ));
        }
        compared += 1;
    }
    Ok(compared)
}

#[test]
fn interpreter_port_equals_core_port_for_new_flows() {
    fn prop(s: Scenario) -> TestResult {
        match check(&s) {
            Ok(_) => TestResult::passed(),
            Err(msg) => TestResult::error(msg),
        }
    }
    QuickCheck::new()
        .tests(400)
        .quickcheck(prop as fn(Scenario) -> TestResult);
}

/// `lcmp_mod_*` compute `hash mod k` for every k up to 16 and many hashes,
/// including the extremes.
#[test]
fn modulo_tables_are_exact() {
    let mut t = Tables::paper_defaults();
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
    let cfg = DeciderConfig {
        scheme: Scheme::Ecmp,
        seed: 0,
        hash: HashAlgorithm::Crc32,
        ..DeciderConfig::default()
    };
    let agent = Agent::new(&t, cfg, ExportOptions::default()).expect("agent");
    let program = agent.program();
    assert_eq!(program.sizes.max_k, 16);
    let entries = agent.entries().expect("entries");
    let interp = Interpreter::new(&program, &entries);
    let mut hashes: Vec<u32> = vec![
        0,
        1,
        15,
        16,
        255,
        256,
        65_535,
        65_536,
        u32::MAX,
        u32::MAX - 1,
    ];
    let mut x: u32 = 0x1234_5678;
    for _ in 0..2000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        hashes.push(x);
    }
    for k in 1..=16u64 {
        for &h in &hashes {
            let mut rsum = 0u64;
            for (i, table) in lcmp_tofino::schema::names::MOD_N.iter().enumerate() {
                let nib = u64::from(h >> (4 * i)) & 0xF;
                let e = interp
                    .lookup(table, &[k, nib])
                    .expect("lookup")
                    .expect("residue entry");
                rsum += e.params[0];
            }
            assert!(rsum < 128, "rsum fits bit<8> without wrapping");
            let e = interp
                .lookup(lcmp_tofino::schema::names::MOD_FOLD, &[k, rsum])
                .expect("lookup")
                .expect("fold entry");
            assert_eq!(e.params[0], u64::from(h) % k, "h = {h:#x}, k = {k}");
        }
    }
}

/// The egress range table reproduces the core's queue level for every depth
/// the 19-bit `deq_qdepth` can report.
#[test]
fn queue_quantisation_matches_core() {
    use lcmp_decide::estimator::queue::queue_level;
    let levels: Vec<u8> = lcmp_decide::tables::DEFAULT_LEVELS.to_vec();
    for buffer in [1u64 << 20, 22_000_000, 41_943_040, 5_000_000_000, 999, 80] {
        let ranges = q_ranges(buffer, &levels);
        for cells in (0..(1u64 << 19)).step_by(7).chain([1, 2, (1 << 19) - 1]) {
            let want = queue_level(cells * CELL_BYTES, buffer, levels.len()).score(&levels);
            let got = ranges
                .iter()
                .find(|(_, lo, hi)| *lo <= cells && cells <= *hi)
                .map_or(0, |r| r.0);
            assert_eq!(got, want, "buffer {buffer}, {cells} cells");
        }
    }
}

#[test]
fn murmur3_is_refused() {
    let t = Tables::paper_defaults();
    let cfg = DeciderConfig {
        hash: HashAlgorithm::Murmur3,
        ..DeciderConfig::default()
    };
    assert!(matches!(
        Agent::new(&t, cfg, ExportOptions::default()),
        Err(Error::Murmur3NotSupported)
    ));
    let mut t2 = t.clone();
    t2.params.pick = lcmp_decide::Pick::CapacityWeighted;
    let crc = DeciderConfig {
        hash: HashAlgorithm::Crc32,
        ..DeciderConfig::default()
    };
    assert!(matches!(
        Agent::new(&t2, crc, ExportOptions::default()),
        Err(Error::WeightedPickNotSupported)
    ));
}

/// The comparison can fail: a selection table with one bucket moved to
/// another port, or a wrong seed, is caught on testbed8 DC1.
#[test]
fn corrupted_entries_are_caught() {
    let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
    let cfg = DeciderConfig {
        scheme: Scheme::Lcmp,
        seed: 99,
        hash: HashAlgorithm::Crc32,
        ..DeciderConfig::default()
    };
    let agent =
        lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, ExportOptions::default()).expect("agent");
    let mut core: Decider<MAX_PORTS, 1024> = Decider::new(cfg);
    let tables =
        lcmp_tables::build_tables(&topo, 1, &lcmp_tables::BuildOptions::default()).expect("tables");
    core.install(&tables).expect("install");
    let program = agent.program();
    let good = agent.entries().expect("entries");
    let flows: Vec<FlowKey> = (0..200u16)
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
    let mismatches = |entries: &lcmp_tofino::EntrySet, program: &lcmp_tofino::Program| -> usize {
        let interp = Interpreter::new(program, entries);
        flows
            .iter()
            .filter(|k| {
                let want = core
                    .explain(k, GroupId(8), Instant::ZERO)
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
        .find(|e| e.table == "lcmp_select" && e.matches[1] == lcmp_tofino::model::Match::Exact(1))
        .expect("bucket 1");
    e.params[0] = 7;
    assert!(
        mismatches(&bad, &program) > 0,
        "a moved bucket must be caught"
    );
    let wrong_seed = lcmp_tofino::Program {
        seed: 98,
        ..program.clone()
    };
    assert!(
        mismatches(&good, &wrong_seed) > 0,
        "a wrong seed must be caught"
    );
}

/// A scenario in two phases: flows start under one congestion state, then
/// more samples arrive and more ports go down, and every flow sends again.
#[derive(Clone, Debug)]
struct TwoPhase {
    base: Scenario,
    samples2: Vec<(u32, u8, u64)>,
    down2: Vec<u8>,
}

impl Arbitrary for TwoPhase {
    fn arbitrary(g: &mut Gen) -> Self {
        let base = Scenario::arbitrary(g);
        let ids: Vec<u8> = base.tables.ports.iter().map(|p| p.id.0).collect();
        let mut now = base.samples.last().map_or(0, |s| s.0);
        let samples2 = (0..below(g, 30))
            .map(|_| {
                now += 1 + u32::arbitrary(g) % 5000;
                let depth = [0, u64::arbitrary(g) % 6_000_000_000, u64::arbitrary(g)][below(g, 3)];
                (now, ids[below(g, ids.len())], depth)
            })
            .collect();
        let down2 = ids.iter().copied().filter(|_| below(g, 3) == 0).collect();
        TwoPhase {
            base,
            samples2,
            down2,
        }
    }
}

fn check_two_phase(s: &TwoPhase) -> Result<bool, String> {
    use lcmp_tofino::interp::{pin_slot, PinRegisters};
    let b = &s.base;
    let mut agent = match Agent::new(&b.tables, b.config, b.options) {
        Ok(a) => a,
        Err(Error::Core(_)) => return Ok(false),
        Err(e) => return Err(format!("agent: {e}")),
    };
    // Distinct flows sharing a pin cell evict each other on the ASIC (one
    // cell per index) but not in the core's cache: not comparable.
    let slots = agent.program().sizes.pin_slots;
    let mut seen = std::collections::BTreeMap::new();
    for (k, _) in &b.flows {
        let (sig, idx) = pin_slot(&headers(k), slots);
        if seen.insert(idx, sig).is_some_and(|old| old != sig) {
            return Ok(false);
        }
    }
    let mut core: Decider<MAX_PORTS, 1024> = Decider::new(b.config);
    core.install(&b.tables)
        .map_err(|e| format!("install: {e}"))?;
    let mut pins = PinRegisters::default();
    let phases = [(&b.samples, &b.down), (&s.samples2, &s.down2)];
    let mut t = 0u32;
    for (phase, (samples, down)) in phases.iter().enumerate() {
        for &(ts, port, depth) in samples.iter() {
            agent
                .sample(Instant::from_ticks(ts), PortId(port), depth)
                .map_err(|e| e.to_string())?;
            core.sample(Instant::from_ticks(ts), PortId(port), depth)
                .map_err(|e| e.to_string())?;
            t = t.max(ts);
        }
        for &p in down.iter() {
            agent
                .set_port_up(PortId(p), false)
                .map_err(|e| e.to_string())?;
            core.set_port_up(PortId(p), false)
                .map_err(|e| e.to_string())?;
        }
        t += 10;
        let program = agent.program();
        let entries = agent.entries().map_err(|e| format!("entries: {e}"))?;
        let interp = Interpreter::new(&program, &entries);
        for (key, group) in &b.flows {
            let d = core.on_packet(Instant::from_ticks(t), key, *group);
            let tr = interp
                .packet(&mut pins, &headers(key), u64::from(t) * 1000)
                .map_err(|e| e.to_string())?;
            if tr.resubmitted && tr.port.is_some() {
                FAILOVERS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
            }
            if tr.port != d.port().map(|p| agent.dev_port(p)) {
                return Err(format!(
                    "phase {phase}: flow {key:?}: interpreter {tr:?}, core {d:?}"
                ));
            }
        }
    }
    Ok(true)
}

static FAILOVERS: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Established flows follow their pins, and a flow whose pinned port went
/// down is re-decided (resubmit) to the core's failover port.
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
    let n = FAILOVERS.load(core::sync::atomic::Ordering::Relaxed);
    assert!(n >= 20, "only {n} failovers exercised");
}

/// testbed8 DC1, idle: the three lowest-cost next hops to DC8 are kept, in
/// cost order (via DC6, DC4, DC2; ports are the neighbours in id order), and
/// device ports are mapped; a device port shared by two ports is refused.
#[test]
fn testbed8_dc1_pick_list_and_device_ports() {
    let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
    let cfg = DeciderConfig {
        scheme: Scheme::Lcmp,
        seed: 0,
        hash: HashAlgorithm::Crc32,
        ..DeciderConfig::default()
    };
    let mut opts = ExportOptions::default();
    for (i, d) in opts.dev_ports.iter_mut().enumerate() {
        *d = 128 + 8 * i as u16;
    }
    let agent = lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, opts).expect("agent");
    assert_eq!(
        agent.pick_list(GroupId(8)).expect("pick list"),
        [PortId(4), PortId(2), PortId(0)]
    );
    let entries = agent.entries().expect("entries");
    let sel: Vec<u64> = entries
        .entries
        .iter()
        .filter(|e| e.table == "lcmp_select" && e.matches[0] == lcmp_tofino::model::Match::Exact(8))
        .map(|e| e.params[0])
        .collect();
    assert_eq!(sel, [160, 144, 128]);
    opts.dev_ports[1] = opts.dev_ports[0];
    assert!(matches!(
        lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, opts),
        Err(Error::DevPort(1))
    ));
}
