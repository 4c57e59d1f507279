//! The data plane's two-way flow pins (`lcmp_pin0`/`lcmp_pin1`), run by the
//! interpreter statement by statement as `lcmp.p4`: a cell is taken only
//! once it has expired, so two live flows that share a cell keep their
//! ports on every packet; a third is routed unpinned and reported to the
//! CPU by a digest; a flow pinned in way 1 whose way-0 cell frees up keeps
//! its port; a flow whose pinned port died is re-pinned through a resubmit.

mod common;

use lcmp_decide::{DeciderConfig, HashAlgorithm};
use lcmp_tofino::hash::Headers;
use lcmp_tofino::interp::{
    pin_indices, pin_slot, DigestMeter, Interpreter, PinRegisters, PinStatus,
};
use lcmp_tofino::model::Match;
use lcmp_tofino::schema::{names, Reason};
use lcmp_tofino::{Agent, EntrySet, ExportOptions, Program};

const PIN_SLOTS: u32 = 512;

fn agent() -> Agent {
    agent_with(PIN_SLOTS)
}

fn agent_with(pin_slots: u32) -> Agent {
    common::testbed8_dc1(ExportOptions {
        pin_slots,
        ..ExportOptions::default()
    })
}

fn flow(src: u32, sport: u16) -> Headers {
    Headers {
        src: 0x0A01_0000 | src,
        dst: 0x0A08_0001,
        sport,
        dport: 4791,
        proto: 17,
    }
}

/// Flows `a`, `b`, `c` with one way-0 cell, `b` and `c` with one way-1
/// cell, and each hashing to a different bucket than the next.
fn colliding() -> (Headers, Headers, Headers) {
    let a = flow(1, 1000);
    let (sa, ia) = pin_slot(&a, PIN_SLOTS);
    let mut b = None;
    let mut c = None;
    'search: for src in 2..64u32 {
        for sport in 0..=u16::MAX {
            let f = flow(src, sport);
            let (s, i0) = pin_slot(&f, PIN_SLOTS);
            if i0 != ia || s == sa {
                continue;
            }
            match b {
                None => b = Some((f, pin_indices(s, PIN_SLOTS).1)),
                Some((_, i1b)) if pin_indices(s, PIN_SLOTS).1 == i1b => {
                    c = Some(f);
                    break 'search;
                }
                Some(_) => {}
            }
        }
    }
    let (b, _) = b.expect("a way-0 collision");
    (a, b, c.expect("a way-0 and way-1 collision"))
}

/// `entries` with group 8's selection rotated by one bucket (a congestion
/// change that moves every bucket).
fn rotated(entries: &EntrySet) -> EntrySet {
    let mut out = entries.clone();
    let ports: Vec<u64> = (0..3)
        .map(|b| {
            entries
                .entries
                .iter()
                .find(|e| {
                    e.table == names::SELECT && e.matches == [Match::Exact(8), Match::Exact(b)]
                })
                .map(|e| e.params[0])
                .expect("bucket")
        })
        .collect();
    for e in out.entries.iter_mut() {
        if e.table == names::SELECT && e.matches[0] == Match::Exact(8) {
            if let Match::Exact(b) = e.matches[1] {
                e.params[0] = ports[((b + 1) % 3) as usize];
            }
        }
    }
    out
}

fn program_and_entries() -> (Program, EntrySet) {
    let a = agent();
    (a.program(), a.entries().expect("entries"))
}

#[test]
fn colliding_live_flows_keep_their_ports_and_a_third_is_reported() {
    let (program, entries) = program_and_entries();
    let moved = rotated(&entries);
    let (a, b, c) = colliding();
    let mut pins = PinRegisters::default();
    let ms = |t: u64| t * 1_000_000;
    let i0 = Interpreter::new(&program, &entries);
    let ta = i0.packet(&mut pins, &a, ms(1)).expect("a");
    let tb = i0.packet(&mut pins, &b, ms(1)).expect("b");
    assert_eq!(ta.ways, (PinStatus::Taken, PinStatus::None));
    assert_eq!(
        tb.ways,
        (PinStatus::Busy, PinStatus::Taken),
        "b goes to way 1"
    );
    let (pa, pb) = (ta.port.expect("a routed"), tb.port.expect("b routed"));
    // Every bucket moves; a and b, alternating, keep their ports: neither
    // evicts the other (the old single-cell pin re-decided both each time).
    let i1 = Interpreter::new(&program, &moved);
    for t in 2..50 {
        let ta = i1.packet(&mut pins, &a, ms(t)).expect("a");
        let tb = i1.packet(&mut pins, &b, ms(t)).expect("b");
        assert_eq!(
            (ta.port, ta.ways.0, ta.pin_hit),
            (Some(pa), PinStatus::Hit, true)
        );
        assert_eq!(
            (tb.port, tb.ways, tb.pin_hit),
            (Some(pb), (PinStatus::Busy, PinStatus::Hit), true)
        );
        assert!(!ta.pin_failed && !tb.pin_failed);
    }
    // c finds both cells live: unpinned, digest, and routed to its group's
    // stable fallback, which the bucket rewrite did not move: the same
    // port under the old and the new selection.
    let tc = i1.packet(&mut pins, &c, ms(50)).expect("c");
    assert!(tc.pin_failed && tc.fallback && tc.digest, "{tc:?}");
    assert!(!tc.pin_hit);
    let before = i0.packet(&mut pins.clone(), &c, ms(50)).expect("c");
    assert!(
        before.fallback && before.port == tc.port,
        "{before:?} {tc:?}"
    );
    let hash = u64::from(i1.hash(&c) & 0xFFFF);
    let fb = i1
        .lookup(names::FALLBACK, &[8, hash])
        .expect("lookup")
        .expect("a fallback entry");
    assert_eq!(tc.port, Some(fb.params[0]));
    // a and b are untouched by it.
    assert_eq!(i1.packet(&mut pins, &a, ms(51)).expect("a").port, Some(pa));
    assert_eq!(i1.packet(&mut pins, &b, ms(51)).expect("b").port, Some(pb));
}

/// A flow that went unpinned (on its group's fallback port) and takes a
/// cell for a later packet pins its fallback port, not the selection's:
/// taking a cell never moves it (`lcmp_unpinned`). Without its record
/// (cleared, or overwritten by a flow of another fallback port) the new
/// pin follows the selection: the record is what keeps it.
#[test]
fn an_unpinned_flow_that_takes_a_cell_keeps_its_fallback_port() {
    let (program, entries) = program_and_entries();
    let moved = rotated(&entries);
    let (a, b, c) = colliding();
    let ms = |t: u64| t * 1_000_000;
    // The selection under which c's selected port is not its fallback.
    let (i, sel) = [&entries, &moved]
        .into_iter()
        .map(|e| Interpreter::new(&program, e))
        .find_map(|i| {
            let t = i.packet(&mut PinRegisters::default(), &c, ms(1)).ok()?;
            let fb = i
                .lookup(names::FALLBACK, &[8, u64::from(i.hash(&c) & 0xFFFF)])
                .ok()??
                .params[0];
            (t.port != Some(fb)).then_some((i, t.port))
        })
        .expect("a selection that differs from c's fallback");
    // a and b hold both of c's cells; c goes unpinned, on its fallback.
    let fresh = || PinRegisters {
        gaps: [Some(1), Some(1)],
        ..PinRegisters::default()
    };
    let start = |pins: &mut PinRegisters| {
        i.packet(pins, &a, ms(1)).expect("a");
        i.packet(pins, &b, ms(1)).expect("b");
        let tc = i.packet(pins, &c, ms(2)).expect("c");
        assert!(tc.pin_failed && tc.fallback, "{tc:?}");
        assert_ne!(tc.port, sel);
        tc.port
    };
    let mut pins = fresh();
    let fb = start(&mut pins);
    // a and b go idle past the gap (1 unit, 16.8 ms): c takes way 0 and
    // pins the port it has been taking, then follows its pin.
    let tc = i.packet(&mut pins, &c, ms(100)).expect("c");
    assert_eq!(tc.ways.0, PinStatus::Taken, "{tc:?}");
    assert!(!tc.pin_failed && tc.fallback, "{tc:?}");
    assert_eq!(tc.port, fb, "taking a cell moved the flow");
    let tc = i.packet(&mut pins, &c, ms(110)).expect("c");
    assert_eq!((tc.ways.0, tc.port), (PinStatus::Hit, fb));
    // Without the record: the selection's port, a move.
    for forget in [
        |p: &mut PinRegisters| p.unpinned.clear(),
        |p: &mut PinRegisters| p.unpinned.values_mut().for_each(|c| c.tag ^= 1),
    ] {
        let mut pins = fresh();
        start(&mut pins);
        forget(&mut pins);
        let tc = i.packet(&mut pins, &c, ms(100)).expect("c");
        assert_eq!(tc.ways.0, PinStatus::Taken);
        assert!(!tc.fallback);
        assert_eq!(tc.port, sel);
    }
    // A record older than the idle timeout is no record: the flow was idle.
    let mut pins = fresh();
    start(&mut pins);
    let idle_ns = (program.pin_idle_units() + 2) << lcmp_tofino::schema::CLOCK_UNIT_SHIFT;
    let tc = i.packet(&mut pins, &c, ms(2) + idle_ns).expect("c");
    assert_eq!((tc.fallback, tc.port), (false, sel));
}

#[test]
fn an_expired_cell_is_taken_and_a_way_one_pin_survives_way_zero_freeing() {
    let (program, entries) = program_and_entries();
    let moved = rotated(&entries);
    let (a, b, c) = colliding();
    let idle_ns = program.pin_idle_units() << lcmp_tofino::schema::CLOCK_UNIT_SHIFT;
    let mut pins = PinRegisters::default();
    let i0 = Interpreter::new(&program, &entries);
    let t0 = 5_000_000_000u64;
    i0.packet(&mut pins, &a, t0).expect("a");
    let pb = i0.packet(&mut pins, &b, t0).expect("b").port;
    // a stops; b keeps sending, past a's idle timeout.
    let later = t0 + idle_ns + 200_000_000;
    let i1 = Interpreter::new(&program, &moved);
    let tb = i1.packet(&mut pins, &b, t0 + idle_ns / 2).expect("b");
    assert_eq!(tb.ways, (PinStatus::Busy, PinStatus::Hit));
    // a's way-0 cell has expired: b takes it, finds its way-1 pin, and
    // copies its port (it does not re-decide).
    let tb = i1.packet(&mut pins, &b, later).expect("b");
    assert_eq!(tb.ways, (PinStatus::Taken, PinStatus::Hit));
    assert_eq!(tb.port, pb);
    let tb = i1.packet(&mut pins, &b, later + 1_000_000).expect("b");
    assert_eq!(
        (tb.ways.0, tb.port),
        (PinStatus::Hit, pb),
        "now pinned in way 0"
    );
    // b's way-1 copy was refreshed when it was found; while it lives, c
    // (same cells as b) has no room.
    let tc = i1.packet(&mut pins, &c, later + 2_000_000).expect("c");
    assert!(tc.pin_failed, "{tc:?}");
    // Once the copy expires (b keeps its way-0 pin alive), c gets way 1.
    let tb = i1.packet(&mut pins, &b, later + idle_ns).expect("b");
    assert_eq!((tb.ways.0, tb.port), (PinStatus::Hit, pb));
    let tc = i1
        .packet(&mut pins, &c, later + idle_ns + 100_000_000)
        .expect("c");
    assert_eq!(tc.ways, (PinStatus::Busy, PinStatus::Taken), "{tc:?}");
    assert_eq!(tc.port, i1.ingress(&c).expect("c").port);
    // a comes back after its expiry: a new flow (its way-0 cell is b's now),
    // decided by the current selection.
    let ta = i1
        .packet(&mut pins, &a, later + idle_ns + 200_000_000)
        .expect("a");
    assert_eq!(ta.ways.0, PinStatus::Busy, "{ta:?}");
    assert!(!ta.pin_hit);
    assert_eq!(ta.port, i1.ingress(&a).expect("a").port);
}

/// The agent after 3 s of 10 ms polls (past the core's two epochs) with
/// every queue empty: the agent, the last poll's time (µs) and its pin gap.
fn polled_agent() -> (Agent, u32, u32) {
    let mut agent = agent();
    let t_us = poll(&mut agent, 0, 300, 0);
    let gap = agent.pin_gap_units(lcmp_decide::Instant::from_ticks(t_us));
    (agent, t_us, gap)
}

/// `polls` polls 10 ms apart after `t_us`, every LCMP port at `cells`; the
/// last poll's time.
fn poll(agent: &mut Agent, mut t_us: u32, polls: u32, cells: u64) -> u32 {
    let ports: Vec<lcmp_decide::PortId> = agent.tables().ports.iter().map(|p| p.id).collect();
    for _ in 0..polls {
        t_us += 10_000;
        for &p in &ports {
            agent
                .on_usage_cells(lcmp_decide::Instant::from_ticks(t_us), p, cells)
                .expect("poll");
        }
    }
    t_us
}

/// The pin cells' safe gap the agent derives from its queue polls is the
/// core's own in-order bound (`Decider::may_move`, by which a full flow
/// cache reclaims an entry): every idle time above it may move on every
/// port, the unit below it may not on some port; deep queues lengthen it,
/// and it never exceeds the idle timeout.
#[test]
fn the_agents_pin_gap_is_the_cores_safe_gap() {
    let (mut agent, t_us, gap) = polled_agent();
    let idle = u32::try_from(agent.program().pin_idle_units()).expect("units");
    let unit_ns = 1u64 << lcmp_tofino::schema::CLOCK_UNIT_SHIFT;
    let ports: Vec<lcmp_decide::PortId> = agent.tables().ports.iter().map(|p| p.id).collect();
    let now = lcmp_decide::Instant::from_ticks(t_us);
    assert!(gap > 0 && gap < idle, "shallow queues: gap {gap} of {idle}");
    let unit_us = |units: u64| ((units * unit_ns) / 1_000) as u32;
    for units in u64::from(gap)..=u64::from(idle) {
        let seen = lcmp_decide::Instant::from_ticks(t_us - unit_us(units) - 1);
        for &p in &ports {
            assert!(
                agent.decider().may_move(now, p, seen),
                "{units} units, {p:?}"
            );
        }
    }
    let seen = lcmp_decide::Instant::from_ticks(t_us - unit_us(u64::from(gap) - 1));
    assert!(ports
        .iter()
        .any(|&p| !agent.decider().may_move(now, p, seen)));
    // Deep queues (5 GB on every port): a longer gap, at most the timeout.
    let t_us = poll(&mut agent, t_us, 3, 40_000_000);
    let deep = agent.pin_gap_units(lcmp_decide::Instant::from_ticks(t_us));
    assert!(
        deep > gap && deep <= idle,
        "deep queues: gap {deep}, shallow {gap}"
    );
}

/// The core's in-order reuse in the data plane: with the agent's gap
/// written into `pin0_gap`/`pin1_gap`, a cell whose flow has been idle
/// longer than the gap is taken by a new flow, long before the idle
/// timeout; a cell idle for less is not, nor is one under the loaded
/// default (the idle timeout).
#[test]
fn a_cell_idle_past_the_agents_safe_gap_is_reused() {
    let (agent, _, gap) = polled_agent();
    let program = agent.program();
    let entries = agent.entries().expect("entries");
    let unit_ns = 1u64 << lcmp_tofino::schema::CLOCK_UNIT_SHIFT;
    let a = flow(1, 1000);
    let (sa, ia) = pin_slot(&a, PIN_SLOTS);
    let x = (2..64u32)
        .flat_map(|src| (0..2048u16).map(move |sport| flow(src, sport)))
        .find(|f| {
            let (s, i) = pin_slot(f, PIN_SLOTS);
            i == ia && s != sa
        })
        .expect("a way-0 collision");
    let run = |gap: Option<u32>, after_units: u64| {
        let i = Interpreter::new(&program, &entries);
        let mut pins = PinRegisters {
            gaps: [gap, gap],
            ..PinRegisters::default()
        };
        let t0 = 5_000_000_000u64;
        assert_eq!(
            i.packet(&mut pins, &a, t0).expect("a").ways.0,
            PinStatus::Taken
        );
        i.packet(&mut pins, &x, t0 + after_units * unit_ns)
            .expect("x")
            .ways
            .0
    };
    assert_eq!(run(Some(gap), u64::from(gap) + 2), PinStatus::Taken);
    assert_eq!(run(Some(gap), u64::from(gap) - 1), PinStatus::Busy);
    assert_eq!(run(None, u64::from(gap) + 2), PinStatus::Busy);
}

#[test]
fn a_dead_pinned_port_is_resubmitted_and_re_pinned() {
    let mut agent = agent();
    let program = agent.program();
    let before = agent.entries().expect("entries");
    let (a, b, _) = colliding();
    let mut pins = PinRegisters::default();
    let i0 = Interpreter::new(&program, &before);
    let pa = i0
        .packet(&mut pins, &a, 1_000_000)
        .expect("a")
        .port
        .expect("a");
    let pb = i0
        .packet(&mut pins, &b, 1_000_000)
        .expect("b")
        .port
        .expect("b");
    // Both pinned ports die (identity device ports).
    for p in [pa, pb] {
        agent
            .set_port_up(lcmp_decide::PortId(p as u8), false)
            .expect("port");
    }
    let after = agent.entries().expect("entries");
    let i1 = Interpreter::new(&program, &after);
    for (f, dead) in [(a, pa), (b, pb)] {
        let t = i1.packet(&mut pins, &f, 2_000_000).expect("failover");
        assert!(t.resubmitted && t.pin_hit, "{t:?}");
        let new = t.port.expect("re-pinned to a live port");
        assert_ne!(new, dead);
        assert_eq!(Some(new), i1.ingress(&f).expect("sel").port);
        // The next packet follows the new pin without a resubmit.
        let t = i1.packet(&mut pins, &f, 3_000_000).expect("pinned");
        assert_eq!((t.port, t.resubmitted, t.pin_hit), (Some(new), false, true));
    }
}

/// The fraction of `flows` distinct flows, arriving one after the other
/// and all live, whose pin fails (both ways hold live pins of others).
fn pin_failures(pin_slots: u32, flows: u32) -> f64 {
    let a = agent_with(pin_slots);
    let (program, entries) = (a.program(), a.entries().expect("entries"));
    let interp = Interpreter::new(&program, &entries);
    let mut pins = PinRegisters::default();
    let mut x: u32 = 0x9E37_79B9;
    let mut failed = 0u32;
    for i in 0..flows {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let h = Headers {
            src: 0x0A01_0000 | (x & 0xFFFF),
            dst: 0x0A08_0001,
            sport: (x >> 16) as u16,
            dport: (i & 0xFFFF) as u16,
            proto: 6,
        };
        let t = interp.packet(&mut pins, &h, 1_000_000).expect("packet");
        failed += u32::from(t.pin_failed);
    }
    f64::from(failed) / f64::from(flows)
}

/// The figures of `docs/tofino.md`: with the default 2 x 65 536 cells,
/// the share of new flows left unpinned when 25 000 and 50 000 flows are
/// live (the paper's flow cache holds 50 000).
#[test]
fn pin_failure_rate_at_the_default_size() {
    let default = lcmp_tofino::model::DEFAULT_PIN_SLOTS;
    let (f25, f50) = (pin_failures(default, 25_000), pin_failures(default, 50_000));
    eprintln!(
        "unpinned: {:.2} % of 25k flows, {:.2} % of 50k flows",
        100.0 * f25,
        100.0 * f50
    );
    assert!(f25 > 0.0 && f25 < 0.01, "{f25}");
    assert!(f50 > f25 && f50 < 0.05, "{f50}");
}

/// Tofino 2's default is now Tofino 1's 2 x 65 536 cells (each way in two
/// registers of `Target::register_cells`, `lcmp_tofino::halves`); its
/// default before, 2 x 32 768 (what bf-p4c 34b86e9 places in one register):
/// the same loads, and the price of half the cells, as docs/tofino.md
/// quotes them.
#[test]
fn pin_failure_rate_at_the_tofino2_default_size() {
    use lcmp_tofino::model::Target;
    assert_eq!(
        Target::Tofino2.default_pin_slots(),
        lcmp_tofino::model::DEFAULT_PIN_SLOTS
    );
    let t2 = 2 * Target::Tofino2.register_cells();
    assert_eq!(t2, lcmp_tofino::model::DEFAULT_PIN_SLOTS / 2);
    let (f25, f50) = (pin_failures(t2, 25_000), pin_failures(t2, 50_000));
    eprintln!(
        "Tofino 2 unpinned: {:.2} % of 25k flows, {:.2} % of 50k flows",
        100.0 * f25,
        100.0 * f50
    );
    let full = lcmp_tofino::model::DEFAULT_PIN_SLOTS;
    assert!(f25 > pin_failures(full, 25_000) && f25 < 0.05, "{f25}");
    assert!(f50 > f25 && f50 < 0.16, "{f50}");
}

/// The idle check across the stamp's wrap. The stateful ALU compares
/// `now - seen > PIN_IDLE` in 34-bit arithmetic (bf-p4c `CheckStatefulAlu`:
/// memory and PHV zero-extended), not mod 2^32, so the previous program's
/// raw 32-bit stamp and its `0x80000000` initial "last seen" left every
/// cell busy for the stamp's first 39 hours and every cell written before a
/// wrap busy after it. The clock register makes `meta.now` monotonic: a
/// flow live across the 48-bit counter's wrap keeps its pin, a cell idle
/// across it expires after the idle timeout, and cells are free from the
/// first packet.
#[test]
fn pins_hold_and_expire_across_the_stamp_wrap() {
    use lcmp_tofino::interp::expired;
    // The previous formulation, under the ALU's arithmetic.
    let idle = 30_518u32; // 2 s in the old 65.536 us units
    let old_now = 1_000u32; // 65 ms after the counter's zero
    assert!(old_now.wrapping_sub(0x8000_0000) > idle, "mod 2^32: free");
    assert!(!expired(old_now, 0x8000_0000, idle), "34-bit: busy");
    let before_wrap = u32::MAX - 100;
    assert!(
        !expired(50, before_wrap, idle),
        "34-bit: busy after the wrap"
    );

    // The same program for each chip (Tofino 2's differs in its resubmit
    // header and parser only): the mirror at the wrap, for both.
    for target in lcmp_tofino::model::Target::ALL {
        let agent = common::testbed8_dc1(ExportOptions {
            pin_slots: PIN_SLOTS,
            target,
            ..ExportOptions::default()
        });
        let (program, entries) = (agent.program(), agent.entries().expect("entries"));
        across_the_wrap(&program, &entries);
    }
}

/// [`pins_hold_and_expire_across_the_stamp_wrap`] for one program.
fn across_the_wrap(program: &Program, entries: &EntrySet) {
    use lcmp_tofino::interp::Clock;
    let interp = Interpreter::new(program, entries);
    let idle_ns = program.pin_idle_units() << lcmp_tofino::schema::CLOCK_UNIT_SHIFT;
    let wrap = 1u64 << 48;
    let (a, b, _) = colliding();
    let mut pins = PinRegisters::default();
    // Free from the first packet, at the counter's zero.
    let t = interp.packet(&mut pins, &a, 0).expect("a");
    assert_eq!(t.ways.0, PinStatus::Taken);
    // a sends every 0.5 s from 10 s before the wrap to 10 s after.
    let mut port = None;
    let mut at = wrap - 10_000_000_000;
    let mut pins = PinRegisters::default();
    let mut clock = Clock::default();
    let mut last_now = 0;
    while at < wrap + 10_000_000_000 {
        let t = interp.packet(&mut pins, &a, at).expect("a");
        port = port.or(t.port);
        assert_eq!(t.port, port, "a keeps its port at {at}");
        assert!(t.ways.0 == PinStatus::Hit || at == wrap - 10_000_000_000);
        let now = clock.tick(at);
        assert!(now >= last_now, "monotonic at {at}");
        last_now = now;
        at += 500_000_000;
    }
    assert_eq!(pins.clock.wraps, 2, "one wrap counted");
    // b's way-0 cell is a's: busy while a lives, taken once a has been idle
    // longer than the timeout (across the wrap).
    let mut pins = PinRegisters::default();
    interp
        .packet(&mut pins, &a, wrap - 1_000_000_000)
        .expect("a");
    let tb = interp.packet(&mut pins, &b, wrap + 500_000_000).expect("b");
    assert_eq!(tb.ways.0, PinStatus::Busy, "a idle 1.5 s: live");
    let tb = interp
        .packet(&mut pins, &b, wrap - 1_000_000_000 + idle_ns + 100_000_000)
        .expect("b");
    assert_eq!(tb.ways.0, PinStatus::Taken, "a idle past the timeout");
}

/// A flow both ways refuse is reported once per idle timeout, on its first
/// packet, not on every packet (the digest filter).
#[test]
fn the_pin_failure_digest_is_sent_once_per_flow_and_timeout() {
    let (program, entries) = program_and_entries();
    let interp = Interpreter::new(&program, &entries);
    let idle_ns = program.pin_idle_units() << lcmp_tofino::schema::CLOCK_UNIT_SHIFT;
    let (a, b, c) = colliding();
    let mut pins = PinRegisters::default();
    let ms = |t: u64| 1_000_000_000 + t * 1_000_000;
    interp.packet(&mut pins, &a, ms(0)).expect("a");
    interp.packet(&mut pins, &b, ms(0)).expect("b");
    let mut digests = 0;
    for t in 1..200 {
        interp.packet(&mut pins, &a, ms(t)).expect("a");
        interp.packet(&mut pins, &b, ms(t)).expect("b");
        let tc = interp.packet(&mut pins, &c, ms(t)).expect("c");
        assert!(tc.pin_failed && tc.port.is_some(), "{tc:?}");
        digests += usize::from(tc.digest);
    }
    assert_eq!(digests, 1, "one digest for 199 unpinned packets");
    // After the idle timeout, a second report.
    let mut later = 0;
    for t in 0..3 {
        let at = ms(200) + idle_ns + t * 1_000_000;
        interp.packet(&mut pins, &a, at).expect("a");
        interp.packet(&mut pins, &b, at).expect("b");
        later += usize::from(interp.packet(&mut pins, &c, at).expect("c").digest);
    }
    assert_eq!(later, 1);
}

/// The fallback of a flow no pin cell holds is stable: congestion (queue
/// samples that move selection buckets) changes no `lcmp_fallback` entry,
/// and a port going down changes exactly the ranges that named it, each
/// to a live candidate of the group; when it comes back, they return.
#[test]
fn the_fallback_moves_only_the_ranges_of_a_dead_port() {
    let fallback = |a: &Agent| -> Vec<(Vec<Match>, u64)> {
        let e = a.entries().expect("entries");
        e.entries
            .iter()
            .filter(|e| e.table == names::FALLBACK)
            .map(|e| (e.matches.clone(), e.params[0]))
            .collect()
    };
    let mut a = agent();
    let idle = fallback(&a);
    let groups = a.tables().groups.len();
    let candidates: usize = a.tables().groups.iter().map(|g| g.candidates.len()).sum();
    assert_eq!(
        idle.len(),
        candidates,
        "one range per candidate of {groups} groups"
    );
    let select = |a: &Agent| -> Vec<u64> {
        let e = a.entries().expect("entries");
        e.entries
            .iter()
            .filter(|e| e.table == names::SELECT)
            .map(|e| e.params[0])
            .collect()
    };
    let idle_select = select(&a);
    // Deep queues on ports 4 and 2 (the golden state's samples): the
    // selection moves, the fallback does not.
    for (t, p, q) in [
        (1_000, 4, 4_500_000_000),
        (2_000, 4, 4_600_000_000),
        (2_000, 2, 1_200_000),
    ] {
        a.sample(
            lcmp_decide::Instant::from_ticks(t),
            lcmp_decide::PortId(p),
            q,
        )
        .expect("sample");
    }
    assert_ne!(select(&a), idle_select, "congestion moved buckets");
    assert_eq!(fallback(&a), idle, "and no fallback entry");
    // Port 0 down: only its ranges change, to live ports.
    a.set_port_up(lcmp_decide::PortId(0), false)
        .expect("port 0");
    let down = fallback(&a);
    let dead = a.dev_port(lcmp_decide::PortId(0));
    // A group whose only candidate is port 0 keeps it (it has no route).
    let only_dead = |m: &[Match]| {
        a.tables().groups.iter().any(|g| {
            m[0] == Match::Exact(u64::from(g.id.0))
                && g.candidates
                    .iter()
                    .all(|c| c.port == lcmp_decide::PortId(0))
        })
    };
    let mut changed = 0;
    for ((m, before), (m2, after)) in idle.iter().zip(&down) {
        assert_eq!(m, m2);
        if only_dead(m) {
            continue;
        }
        if before != after {
            changed += 1;
        }
        assert_eq!(before != after, *before == dead, "{m:?}");
        assert_ne!(*after, dead, "{m:?}");
    }
    assert!(changed > 0);
    a.set_port_up(lcmp_decide::PortId(0), true).expect("port 0");
    assert_eq!(fallback(&a), idle);
}

/// A digest storm: 3 000 live flows over 512 pin cells, each sending a
/// packet every 10 ms for 0.5 s, interleaved; most find no cell and most of
/// those share a cell of the digest filter with another, so without the
/// meter nearly every interleaved packet sends a digest. The meter (200
/// packets per second, burst 20, as the agent configures it) holds the
/// digests to its burst plus its rate, whatever the collisions.
#[test]
fn thousands_of_colliding_unpinned_flows_send_metered_digests() {
    let (program, entries) = program_and_entries();
    let interp = Interpreter::new(&program, &entries);
    let flows: Vec<Headers> = (0..3_000u32)
        .map(|i| flow(i / 500 + 1, (i % 500) as u16))
        .collect();
    let run = |meter: Option<DigestMeter>| {
        let mut pins = PinRegisters {
            digest_meter: meter,
            ..PinRegisters::default()
        };
        let (mut digests, mut metered, mut unpinned) = (0u64, 0u64, 0u64);
        for round in 0..50u64 {
            for (i, f) in flows.iter().enumerate() {
                let at = 1_000_000_000 + round * 10_000_000 + i as u64 * 3_000;
                let tr = interp.packet(&mut pins, f, at).expect("packet");
                assert!(tr.port.is_some(), "every flow is forwarded: {tr:?}");
                digests += u64::from(tr.digest);
                metered += u64::from(tr.metered);
                unpinned += u64::from(tr.pin_failed && round == 49);
            }
        }
        (digests, metered, unpinned)
    };
    let (storm, none, unpinned) = run(None);
    assert_eq!(none, 0);
    assert!(
        unpinned > 2_000,
        "{unpinned} flows unpinned in the last round"
    );
    assert!(storm > 50_000, "without the meter: {storm} digests");
    let (sent, held, _) = run(Some(DigestMeter::new(200, 20)));
    // 0.5 s of traffic: at most the burst plus half a second's rate.
    assert!(sent <= 20 + 100 + 1, "{sent} digests sent");
    assert!(sent >= 100, "{sent} digests sent");
    eprintln!("digests: {storm} unmetered, {sent} metered; {unpinned} flows unpinned");
    assert_eq!(
        sent + held,
        storm,
        "the meter only holds back what the filter passed"
    );
}

/// A packet the selection does not route (a bucket or selection miss)
/// leaves every pin cell alone: no cell is taken with port 0.
#[test]
fn a_selection_miss_writes_no_pin() {
    let (program, entries) = program_and_entries();
    let mut holes = entries.clone();
    holes.entries.retain(|e| e.table != names::SELECT);
    let interp = Interpreter::new(&program, &holes);
    let mut pins = PinRegisters::default();
    let (a, _, _) = colliding();
    let t = interp.packet(&mut pins, &a, 1_000_000_000).expect("a");
    assert_eq!(t.miss, Some(names::SELECT));
    assert_eq!(
        (t.port, t.pin_hit, t.ways.0),
        (None, false, PinStatus::None)
    );
    assert_eq!(
        pins,
        PinRegisters {
            clock: pins.clock,
            exceptions: pins.exceptions,
            ..PinRegisters::default()
        }
    );
    // Not silently: counted under R_TABLE_MISS, and dropped.
    assert_eq!(t.reason, Some(Reason::TableMiss));
    assert_eq!(pins.exceptions[usize::from(Reason::TableMiss.code())], 1);
    assert_eq!(pins.exceptions.iter().sum::<u64>(), 1);
    // With the selection back, the flow's first packet takes its cell.
    let interp = Interpreter::new(&program, &entries);
    let t = interp.packet(&mut pins, &a, 2_000_000_000).expect("a");
    assert_eq!(t.ways.0, PinStatus::Taken);
    assert!(t.port.is_some());
}

/// The router part: the next hop's MACs per port, TTL 1 dropped, a
/// default route for a destination that is no LCMP group, and L4 ports
/// hashed only in first fragments.
#[test]
fn next_hops_ttl_default_routes_and_fragments() {
    use lcmp_tofino::interp::parsed;
    use lcmp_tofino::model::{NextHop, Route};
    let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
    let cfg = DeciderConfig::default().with_hash(HashAlgorithm::Crc32);
    let opts = ExportOptions {
        routes: vec![Route {
            prefix: 0xC0A8_0000,
            prefix_len: 16,
            dev_port: 300,
        }],
        next_hops: vec![NextHop {
            dev_port: 300,
            src_mac: 0x0011_2233_4455,
            dst_mac: 0x0066_7788_99AA,
        }],
        ..ExportOptions::default()
    };
    let agent = lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, opts).expect("agent");
    let (program, entries) = (agent.program(), agent.entries().expect("entries"));
    let interp = Interpreter::new(&program, &entries);
    let mut pins = PinRegisters::default();
    let (a, _, _) = colliding();
    let t = interp.packet(&mut pins, &a, 1_000_000_000).expect("a");
    let port = t.port.expect("routed");
    let n = NextHop::placeholder(port as u16);
    assert_eq!(t.next_hop, Some((n.src_mac, n.dst_mac)));
    let t = interp
        .packet_ttl(&mut pins, &a, 1_000_000_000, 1)
        .expect("a");
    assert!(t.ttl_expired && t.port.is_none());
    // Not an LCMP destination: the default route, its next hop, no pins.
    let other = parsed(0x0A01_0001, 0xC0A8_0101, 1, 2, 6, false, 0);
    let before = pins.clone();
    let t = interp
        .packet(&mut pins, &other, 2_000_000_000)
        .expect("other");
    assert_eq!((t.routed, t.port), (Some(300), Some(300)));
    assert_eq!(t.next_hop, Some((0x0011_2233_4455, 0x0066_7788_99AA)));
    assert_eq!(pins.ways, before.ways);
    // No route at all: dropped.
    let nowhere = parsed(0x0A01_0001, 0xAC10_0001, 1, 2, 6, false, 0);
    let t = interp
        .packet(&mut pins, &nowhere, 2_000_000_000)
        .expect("x");
    assert_eq!(t.port, None);
    // A later fragment hashes with ports 0, like the core's key for it.
    let first = parsed(a.src, a.dst, a.sport, a.dport, a.proto, false, 0);
    let later = parsed(a.src, a.dst, a.sport, a.dport, a.proto, false, 185);
    assert_eq!(first, a);
    assert_eq!((later.sport, later.dport), (0, 0));
    let key = lcmp_decide::FlowKey::v4(
        core::net::Ipv4Addr::from_bits(a.src),
        core::net::Ipv4Addr::from_bits(a.dst),
        0,
        0,
        a.proto,
    );
    assert_eq!(
        interp.hash(&later),
        key.ecmp_hash(HashAlgorithm::Crc32, cfg.seed)
    );
    // The program parses ports only for TCP and UDP first fragments, past
    // IPv4 options, and rewrites MACs and TTL.
    let text = lcmp_tofino::render::p4::render(&program);
    assert!(text.contains("(0, 0, 6): parse_l4;") && text.contains("(0, 0, 17): parse_l4;"));
    assert!(text.contains(
        "transition select(hdr.ipv4.flags[0:0], hdr.ipv4.frag_offset, hdr.ipv4.protocol) {"
    ));
    // (ihl - 5 in ihl's own 4 bits: a 16-bit form made bf-p4c warn that its
    // folded constant does not fit.)
    assert!(text.contains("pkt.extract(hdr.ipv4_options, (bit<32>)(hdr.ipv4.ihl - 5) * 32);"));
    assert!(text.contains("hdr.ipv4.ttl = hdr.ipv4.ttl - 1;"));
    assert!(text.contains("if (hdr.ipv4.ttl > 1) {"));
}
