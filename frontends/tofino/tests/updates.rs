//! Hitless updates: between two congestion states, the
//! agent's [`Plan`] is applied one write at a time, and after *every*
//! write the interpreter routes every bucket of every group (both ends of
//! each `lcmp_bucket` range) and a set of pinned flows to a live candidate:
//! a port of the old or the new pick list that `lcmp_port_alive` says is
//! up, with no table miss. The same check catches the two naive orders:
//! raising `k` before the new buckets exist, and a reload that clears the
//! tables first.

mod common;

use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::collections::BTreeSet;

use common::{entries_pick_list, headers, TwoPhase};
use lcmp_decide::{Instant, PortId};
use lcmp_tofino::interp::{Interpreter, PinRegisters};
use lcmp_tofino::model::{bucket_ranges, Op, Phase, Plan, Update, PHASE_NAMES};
use lcmp_tofino::{Agent, EntrySet, Error, Program};
use quickcheck::{QuickCheck, TestResult};

/// What a group may be routed to during an update.
struct Allowed {
    /// Device ports of the old and new pick lists.
    ports: BTreeSet<u64>,
    /// Neither side has a route: `no_route` is fine at any time; one side
    /// without a route: `no_route` is fine until the groups phase.
    empty_side: bool,
}

/// Checks one intermediate entry set: every bucket and every pinned flow is
/// routed to an allowed, live port (an unpinned flow on its group's
/// fallback: a live candidate). Returns the number of probes.
fn check_state(
    program: &Program,
    entries: &EntrySet,
    groups: &[(u16, Allowed)],
    pinned: &[lcmp_tofino::hash::Headers],
    pins: &mut PinRegisters,
    now_ns: u64,
) -> Result<usize, String> {
    let interp = Interpreter::new(program, entries);
    let mut probes = 0;
    for (g, allowed) in groups {
        let dst = (10u32 << 24) | (u32::from(*g) << 16) | 1;
        let tr = interp.route(dst, 0).map_err(|e| e.to_string())?;
        if tr.no_route || tr.group.is_none() {
            if !allowed.empty_side {
                return Err(format!("group {g}: no route mid-update ({tr:?})"));
            }
            continue;
        }
        let k = tr.k.unwrap_or(0);
        for (_, low, high) in bucket_ranges(k) {
            for hi in [low, high] {
                let tr = interp
                    .route(dst, (hi as u32) << 16)
                    .map_err(|e| e.to_string())?;
                let port = tr
                    .selected
                    .ok_or_else(|| format!("group {g}, k {k}: {:?} missed", tr.miss))?;
                if !allowed.ports.contains(&port) {
                    return Err(format!(
                        "group {g}: bucket of {hi:#x} -> port {port}, not a candidate of the old or new pick list {:?}",
                        allowed.ports
                    ));
                }
                if !interp.alive(port).map_err(|e| e.to_string())? {
                    return Err(format!(
                        "group {g}: bucket of {hi:#x} -> port {port}, which is down"
                    ));
                }
                probes += 1;
            }
        }
    }
    for h in pinned {
        let g = ((h.dst >> 16) & 0xFF) as u16;
        let Some((_, allowed)) = groups.iter().find(|(x, _)| *x == g) else {
            continue;
        };
        let tr = interp.packet(pins, h, now_ns).map_err(|e| e.to_string())?;
        if tr.miss.is_some() {
            return Err(format!("pinned flow {h:?}: {tr:?}"));
        }
        // A flow no pin cell holds takes its group's stable fallback: a
        // live candidate of the group (`lcmp_member`), whatever the pick
        // lists.
        let fallback_ok = |p: u64| tr.fallback && tr.member && interp.alive(p).unwrap_or(false);
        match tr.port {
            Some(p) if allowed.ports.contains(&p) || fallback_ok(p) => probes += 1,
            None if allowed.empty_side || tr.group.is_none() => {}
            _ => return Err(format!("pinned flow {h:?} of group {g}: {tr:?}")),
        }
    }
    Ok(probes)
}

/// Applies `plan` to `old` write by write, checking every state.
fn walk(
    program: &Program,
    old: &EntrySet,
    plan: &Plan,
    groups: &[(u16, Allowed)],
    pinned: &[lcmp_tofino::hash::Headers],
) -> Result<(EntrySet, usize), String> {
    let mut pins = PinRegisters::default();
    let mut t = 1_000_000u64;
    // Pin the flows under the old entries.
    let mut probes = check_state(program, old, groups, pinned, &mut pins, t)?;
    let mut cur = old.clone();
    for u in plan.updates() {
        cur.apply(u).map_err(|e| e.to_string())?;
        t += 1_000_000;
        probes += check_state(program, &cur, groups, pinned, &mut pins, t).map_err(|e| {
            format!(
                "after {:?} {} {:?}: {e}",
                u.op, u.entry.table, u.entry.matches
            )
        })?;
    }
    Ok((cur, probes))
}

fn allowed(agent_old: &Agent, old: &EntrySet, new: &EntrySet) -> Vec<(u16, Allowed)> {
    agent_old
        .tables()
        .groups
        .iter()
        .map(|g| {
            let a = entries_pick_list(old, g.id).unwrap_or_default();
            let b = entries_pick_list(new, g.id).unwrap_or_default();
            let empty_side = a.is_empty() || b.is_empty();
            (
                g.id.0,
                Allowed {
                    ports: a.into_iter().chain(b).collect(),
                    empty_side,
                },
            )
        })
        .collect()
}

static STATES: AtomicUsize = AtomicUsize::new(0);
static PROBES: AtomicUsize = AtomicUsize::new(0);
static PHASES: [AtomicUsize; PHASE_NAMES.len()] =
    [const { AtomicUsize::new(0) }; PHASE_NAMES.len()];

fn check_move(m: &TwoPhase) -> Result<bool, String> {
    let b = &m.base;
    let mut agent = match Agent::new(&b.tables, b.config, b.options.clone()) {
        Ok(a) => a,
        Err(Error::Core(_)) => return Ok(false),
        Err(e) => return Err(e.to_string()),
    };
    let feed = |agent: &mut Agent, samples: &[(u32, u8, u64)]| -> Result<(), String> {
        for &(t, p, q) in samples {
            agent
                .sample(Instant::from_ticks(t), PortId(p), q)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    feed(&mut agent, &b.samples)?;
    for &p in &b.down {
        agent
            .set_port_up(PortId(p), false)
            .map_err(|e| e.to_string())?;
    }
    let program = agent.program();
    let old = agent.entries().map_err(|e| e.to_string())?;
    let before = agent.clone();
    feed(&mut agent, &m.samples2)?;
    for &p in &m.down2 {
        agent
            .set_port_up(PortId(p), false)
            .map_err(|e| e.to_string())?;
    }
    for &p in &m.up2 {
        agent
            .set_port_up(PortId(p), true)
            .map_err(|e| e.to_string())?;
    }
    let new = agent.entries().map_err(|e| e.to_string())?;
    let plan = new.plan_from(&old);
    let groups = allowed(&before, &old, &new);
    let pinned: Vec<_> = b.flows.iter().map(|(k, _)| headers(k)).collect();
    let (end, probes) = walk(&program, &old, &plan, &groups, &pinned)?;
    if !new.plan_from(&end).is_empty() {
        return Err("the plan does not reach the new entries".into());
    }
    STATES.fetch_add(plan.len() + 1, Relaxed);
    PROBES.fetch_add(probes, Relaxed);
    for p in &plan.phases {
        if let Some(i) = PHASE_NAMES.iter().position(|n| *n == p.what) {
            PHASES[i].fetch_add(1, Relaxed);
        }
    }
    Ok(true)
}

#[test]
fn every_state_of_an_update_routes_to_a_live_candidate() {
    fn prop(m: TwoPhase) -> TestResult {
        match check_move(&m) {
            Ok(true) => TestResult::passed(),
            Ok(false) => TestResult::discard(),
            Err(e) => TestResult::error(e),
        }
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(TwoPhase) -> TestResult);
    let (states, probes) = (STATES.load(Relaxed), PROBES.load(Relaxed));
    let phases: Vec<usize> = PHASES.iter().map(|p| p.load(Relaxed)).collect();
    eprintln!("{states} intermediate states, {probes} probes, phases {phases:?}");
    assert!(states >= 1000, "only {states} states checked");
    assert!(probes >= 20_000, "only {probes} probes");
    // A congestion change under one set of tables: no next hop, route or
    // candidate changes (`withdrawn_candidates_drain_like_the_core`).
    let fixed = [
        "static tables",
        "next hops",
        "new members",
        "retired fallback ranges",
        "withdrawn members",
        "retired next hops",
    ];
    for (i, n) in phases.iter().enumerate() {
        if !fixed.contains(&PHASE_NAMES[i]) {
            assert!(*n >= 10, "phase {:?} exercised {n} times", PHASE_NAMES[i]);
        }
    }
}

/// testbed8 DC1: port 4 (via DC6, the cheapest) goes down, so group 8's
/// pick list changes and keeps 3; then the paper's 1:3 weights and a full
/// queue shrink and regrow `k`. The agent's plan passes; the naive orders
/// (`k` first, or clear and reload) fail the same check.
#[test]
fn naive_orders_are_caught() {
    let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
    let cfg = lcmp_decide::DeciderConfig::default()
        .with_scheme(lcmp_decide::Scheme::Ecmp)
        .with_seed(3)
        .with_hash(lcmp_decide::HashAlgorithm::Crc32);
    let mut agent =
        lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, Default::default()).expect("agent");
    agent.set_port_up(PortId(4), false).expect("port");
    agent.set_port_up(PortId(5), false).expect("port");
    let program = agent.program();
    let old = agent.entries().expect("entries");
    let before = agent.clone();
    // Both ports come back: ECMP over six, k grows from 4 to 6.
    agent.set_port_up(PortId(4), true).expect("port");
    agent.set_port_up(PortId(5), true).expect("port");
    let new = agent.entries().expect("entries");
    let groups = allowed(&before, &old, &new);
    let plan = new.plan_from(&old);
    walk(&program, &old, &plan, &groups, &[]).expect("the agent's plan is hitless");
    // Raising k before the new buckets exist.
    let mut early = plan.clone();
    let sizes = early
        .phases
        .iter()
        .position(|p| p.what == "group sizes and routes")
        .expect("k changes");
    let moved = early.phases.remove(sizes);
    early.phases.insert(0, moved);
    let e = walk(&program, &old, &early, &groups, &[]).expect_err("caught");
    assert!(e.contains("missed"), "{e}");
    // Back: lowering k after deleting the buckets.
    let back = old.plan_from(&new);
    walk(&program, &new, &back, &groups, &[]).expect("the agent's plan is hitless");
    let mut late = back.clone();
    let retired = late
        .phases
        .iter()
        .position(|p| p.what == "retired buckets")
        .expect("buckets retire");
    let moved = late.phases.remove(retired);
    late.phases.insert(0, moved);
    assert!(walk(&program, &new, &late, &groups, &[]).is_err());
    // The old reload script: clear every table, then add everything.
    let clear = Plan {
        phases: vec![
            Phase {
                what: "clear",
                updates: old
                    .entries
                    .iter()
                    .map(|e| Update {
                        op: Op::Delete,
                        entry: e.clone(),
                    })
                    .collect(),
            },
            Phase {
                what: "add",
                updates: new.load_plan().updates().cloned().collect(),
            },
        ],
    };
    let e = walk(&program, &old, &clear, &groups, &[]).expect_err("caught");
    assert!(
        e.contains("no route") || e.contains("missed") || e.contains("down"),
        "{e}"
    );
}

/// An install that withdraws a candidate from a group (new tables): the
/// update adds and deletes `lcmp_member` entries around the selection
/// writes, every state routes to an old or new candidate, and afterwards
/// every flow that was pinned to the withdrawn port is resubmitted once and
/// re-pinned to the port the core re-decides it to (`Decider::on_packet`
/// after the same install); flows on other ports keep theirs. Deleting the
/// membership first drops the withdrawn port's pinned flows mid-update.
#[test]
fn withdrawn_candidates_drain_like_the_core() {
    use lcmp_decide::{Decider, Decision};
    let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
    let cfg = lcmp_decide::DeciderConfig::default()
        .with_scheme(lcmp_decide::Scheme::Ecmp)
        .with_seed(11)
        .with_hash(lcmp_decide::HashAlgorithm::Crc32);
    let before = lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, Default::default()).expect("agent");
    let mut tables = before.tables().clone();
    let g = tables
        .groups
        .iter_mut()
        .find(|g| g.candidates.len() >= 2)
        .expect("a group with 2 candidates");
    let group = g.id;
    let withdrawn = g.candidates[0].port;
    g.candidates.retain(|c| c.port != withdrawn);
    let after = Agent::new(&tables, cfg, Default::default()).expect("agent");
    // The loaded program keeps running (the new tables need no larger one).
    let program = before.program();
    assert!(after.program().sizes.max_k <= program.sizes.max_k);
    let (old, new) = (
        before.entries().expect("old"),
        after.entries().expect("new"),
    );
    let plan = new.plan_from(&old);
    let what: Vec<&str> = plan.phases.iter().map(|p| p.what).collect();
    assert!(what.contains(&"withdrawn members"), "{what:?}");
    // The group's fallback ranges are re-split: the old leave first.
    assert!(what.contains(&"retired fallback ranges"), "{what:?}");
    let flows: Vec<lcmp_decide::FlowKey> = (0..48u16)
        .map(|i| {
            lcmp_decide::FlowKey::v4(
                core::net::Ipv4Addr::new(10, 1, 0, 1),
                core::net::Ipv4Addr::new(10, group.0 as u8, 0, 9),
                2000 + 7 * i,
                80,
                6,
            )
        })
        .collect();
    let pinned: Vec<_> = flows.iter().map(headers).collect();
    let groups = allowed(&before, &old, &new);
    walk(&program, &old, &plan, &groups, &pinned).expect("hitless");
    // The same flows through the interpreter, packet by packet, beside
    // the core: pin under the old tables, install the new ones, send again.
    let mut core: Decider<64, 4096> = Decider::new(cfg);
    core.install(before.tables()).expect("install");
    let mut pins = PinRegisters::default();
    let i_old = Interpreter::new(&program, &old);
    let i_new = Interpreter::new(&program, &new);
    let mut on_withdrawn = 0;
    for (k, h) in flows.iter().zip(&pinned) {
        let t = i_old.packet(&mut pins, h, 1_000_000).expect("old");
        let d = core.on_packet(Instant::from_ticks(1), k, group);
        assert_eq!(t.port, d.port().map(|p| before.dev_port(p)), "{d:?}");
        on_withdrawn += usize::from(t.port == Some(before.dev_port(withdrawn)));
    }
    assert!(
        on_withdrawn >= 3,
        "only {on_withdrawn} flows on the withdrawn port"
    );
    core.install(&tables).expect("install");
    for (k, h) in flows.iter().zip(&pinned) {
        let was = i_old
            .packet(&mut pins.clone(), h, 2_000_000)
            .expect("old")
            .port;
        let t = i_new.packet(&mut pins, h, 2_000_000).expect("new");
        let d = core.on_packet(Instant::from_ticks(2), k, group);
        assert_eq!(
            t.port,
            d.port().map(|p| after.dev_port(p)),
            "{k:?}: {t:?} {d:?}"
        );
        let moved = was == Some(before.dev_port(withdrawn));
        assert_eq!(t.resubmitted, moved, "{t:?}");
        assert_eq!(matches!(d, Decision::New { failover: true, .. }), moved);
        // Pinned again: the next packet follows the new pin.
        let again = i_new.packet(&mut pins, h, 3_000_000).expect("new");
        assert!(!again.resubmitted && again.pin_hit && again.port == t.port);
    }
    // Withdrawing the membership first: the withdrawn port's flows are
    // dropped while the selection still names it.
    let mut early = plan.clone();
    let at = early
        .phases
        .iter()
        .position(|p| p.what == "withdrawn members")
        .expect("phase");
    let moved = early.phases.remove(at);
    early.phases.insert(0, moved);
    let e = walk(&program, &old, &early, &groups, &pinned).expect_err("caught");
    assert!(e.contains("pinned flow"), "{e}");
}
