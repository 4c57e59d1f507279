//! Installing tables in place: validation comes first, a rejected install
//! leaves the decider exactly as it was, and the in-place compile equals
//! the by-value one whatever the memory held before.

mod common;

use common::*;
use lcmp_decide::tables::CompiledTables;
use lcmp_decide::*;
use quickcheck::{quickcheck, Arbitrary, Gen};

/// Every piece of state a packet can observe, plus the whole decider's
/// `Debug` form (which covers the compiled tables, port state, flow cache
/// and counters field by field).
#[derive(Debug, PartialEq)]
struct Snapshot {
    counters: Counters,
    explanations: Vec<Explanation>,
    pins: Vec<Option<PortId>>,
    tables: Option<CompiledTables>,
    signals: Vec<Option<Signals>>,
    everything: String,
}

const FLOWS: u32 = 300;

fn snapshot(d: &Decider<8, 64>, now: u32) -> Snapshot {
    let explanations: Vec<Explanation> = (0..FLOWS)
        .map(|i| d.explain(t(now), &flow(i), group_of(i)))
        .collect();
    Snapshot {
        counters: *d.counters(),
        pins: explanations.iter().map(|e| e.pinned).collect(),
        explanations,
        tables: d.tables().cloned(),
        signals: (0..8).map(|p| d.signals(PortId(p))).collect(),
        everything: format!("{d:?}"),
    }
}

fn group_of(i: u32) -> GroupId {
    if i.is_multiple_of(3) {
        GroupId(9)
    } else {
        DC8
    }
}

/// testbed8 DC1 plus a second group (9) over ports 1, 3 and 5.
fn two_groups() -> Tables {
    let mut t = testbed8_dc1(Params::PAPER);
    let mut g = t.groups[0].clone();
    g.id = GroupId(9);
    g.candidates.retain(|c| c.port.0 % 2 == 1);
    t.groups.push(g).expect("capacity");
    t
}

/// A decider with pins (a 64-slot cache, so some flows overflow), queue
/// samples, a port down and tables installed twice.
fn busy_decider() -> Decider<8, 64> {
    let mut d: Decider<8, 64> = Decider::new(DeciderConfig::default());
    d.install(&testbed8_dc1(Params::PAPER)).expect("valid");
    d.install(&two_groups()).expect("valid");
    for i in 0..FLOWS {
        let _ = d.on_packet(t(i), &flow(i), group_of(i));
        if i % 7 == 0 {
            d.sample(t(i), PortId((i % 6) as u8), u64::from(i) * 10_000_000)
                .expect("port");
        }
    }
    d.set_port_up(PortId(2), false).expect("port");
    d
}

/// One invalid variant of `two_groups()` per core error.
fn invalid_tables() -> Vec<(Tables, Error)> {
    let base = two_groups();
    let mut out = Vec::new();
    let mut add = |f: &dyn Fn(&mut Tables), e: Error| {
        let mut t = base.clone();
        f(&mut t);
        out.push((t, e));
    };
    add(
        &|t| t.params.weights.s_total = 40,
        Error::ShiftTooLarge(Setting::TotalShift),
    );
    add(
        &|t| t.params.delay_shift = 32,
        Error::ShiftTooLarge(Setting::DelayShift),
    );
    add(
        &|t| t.params.ticks_per_second = 0,
        Error::InvalidSetting(Setting::TicksPerSecond),
    );
    add(&|t| t.levels.clear(), Error::InvalidLevels);
    add(
        &|t| {
            t.capacity_thresholds_bps.pop();
        },
        Error::InvalidCapacityThresholds,
    );
    // Port 8 is out of range for a decider of 8 ports.
    add(&|t| t.ports[5].id = PortId(8), Error::PortOutOfRange(8));
    add(&|t| t.ports[5].id = PortId(0), Error::DuplicatePort(0));
    add(&|t| t.ports[3].buffer_bytes = 0, Error::ZeroPortCapacity(3));
    // The last group is the one that fails: the first is valid, so a
    // group-by-group install would already have changed something.
    add(
        &|t| t.groups[1].candidates[2].port = PortId(7),
        Error::UnknownPort { group: 9, port: 7 },
    );
    add(
        &|t| t.groups[1].candidates[2].port = PortId(200),
        Error::UnknownPort {
            group: 9,
            port: 200,
        },
    );
    add(
        &|t| t.groups[1].candidates[2].port = PortId(1),
        Error::DuplicateCandidate { group: 9, port: 1 },
    );
    add(
        &|t| t.groups[1].candidates[2].capacity_bps = 0,
        Error::ZeroCapacity { group: 9, port: 5 },
    );
    add(&|t| t.groups[1].candidates.clear(), Error::EmptyGroup(9));
    add(&|t| t.groups[1].id = DC8, Error::DuplicateGroup(8));
    out
}

#[test]
fn a_rejected_install_changes_nothing() {
    let cases = invalid_tables();
    assert_eq!(cases.len(), 14);
    for (tables, want) in cases {
        let mut d = busy_decider();
        let before = snapshot(&d, 400);
        assert!(before.pins.iter().any(Option::is_some), "pins to keep");
        assert_eq!(d.install(&tables), Err(want));
        assert_eq!(tables.validate(8), Err(want));
        assert_eq!(snapshot(&d, 400), before, "{want:?}");
        // And it keeps deciding as an untouched copy does.
        let mut twin = busy_decider();
        for i in 0..2 * FLOWS {
            let (now, g) = (500 + i, group_of(i));
            assert_eq!(
                d.on_packet(t(now), &flow(i), g),
                twin.on_packet(t(now), &flow(i), g),
                "{want:?}, flow {i}"
            );
        }
    }
}

#[test]
fn a_rejected_first_install_leaves_no_tables() {
    let mut d: Decider<8, 64> = Decider::new(DeciderConfig::default());
    let before = snapshot(&d, 0);
    for (tables, want) in invalid_tables() {
        assert_eq!(d.install(&tables), Err(want));
        assert!(d.tables().is_none());
        assert_eq!(snapshot(&d, 0), before, "{want:?}");
    }
    assert_eq!(
        d.on_packet(t(1), &flow(1), DC8),
        Decision::NoRoute(Reason::UnknownGroup)
    );
}

#[test]
fn install_over_larger_tables_leaves_nothing_behind() {
    let mut d: Decider<8, 64> = Decider::new(DeciderConfig::default());
    d.install(&two_groups()).expect("valid");
    let small = testbed8_dc1(Params::PAPER);
    d.install(&small).expect("valid");
    assert_eq!(d.tables(), small.compile(8).ok().as_ref());
    assert!(d.tables().is_some_and(|c| c.group(GroupId(9)).is_none()));
    assert_eq!(
        d.on_packet(t(1), &flow(1), GroupId(9)),
        Decision::NoRoute(Reason::UnknownGroup)
    );
}

/// Random tables: valid about half of the time, otherwise with one fault
/// of twelve kinds (so every validation error occurs), over a port-id space
/// of 8 and up to 12 groups of up to 6 candidates.
#[derive(Clone, Debug)]
struct AnyTables(Tables);

impl Arbitrary for AnyTables {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut t = Tables::paper_defaults();
        t.params.delay_shift = u8::arbitrary(g) % 12 + 1;
        let mut ports: Vec<u8> = (0..8).filter(|_| bool::arbitrary(g)).collect();
        if ports.is_empty() {
            ports.push(0);
        }
        for &p in &ports {
            let _ = t.ports.push(PortConfig {
                id: PortId(p),
                rate_bps: (u64::arbitrary(g) % 400 + 1) * GBPS,
                buffer_bytes: BUFFER,
            });
        }
        for _ in 0..usize::arbitrary(g) % 13 {
            let id = GroupId(u16::arbitrary(g) % 400);
            if t.groups.iter().any(|h| h.id == id) {
                continue;
            }
            let mut grp = Group {
                id,
                candidates: heapless::Vec::new(),
            };
            let chosen: Vec<u8> = ports
                .iter()
                .copied()
                .filter(|_| bool::arbitrary(g))
                .collect();
            for &p in chosen.iter().take(6) {
                let _ = grp.candidates.push(Candidate {
                    port: PortId(p),
                    delay_units: u32::arbitrary(g) % 300,
                    capacity_bps: (u64::arbitrary(g) % 400 + 1) * GBPS,
                });
            }
            if grp.candidates.is_empty() {
                let _ = grp.candidates.push(Candidate {
                    port: PortId(ports[0]),
                    delay_units: 1,
                    capacity_bps: GBPS,
                });
            }
            let _ = t.groups.push(grp);
        }
        let any_group = |g: &mut Gen, t: &Tables| {
            (!t.groups.is_empty()).then(|| usize::arbitrary(g) % t.groups.len())
        };
        match u8::arbitrary(g) % 24 {
            0 => t.params.weights.s_path = 40,
            1 => t.params.low_water = t.params.high_water.saturating_add(1),
            2 => t.levels.swap(1, 2),
            3 => {
                t.capacity_thresholds_bps.pop();
            }
            4 => t.ports[0].id = PortId(8 + u8::arbitrary(g) % 248),
            5 => {
                let p = t.ports[0];
                let _ = t.ports.push(p);
            }
            6 => t.ports[0].rate_bps = 0,
            7 => {
                if let Some(i) = any_group(g, &t) {
                    let c = t.groups[i].candidates[0];
                    let _ = t.groups[i].candidates.push(c);
                }
            }
            8 => {
                if let Some(i) = any_group(g, &t) {
                    t.groups[i].candidates[0].port = PortId(8 + u8::arbitrary(g) % 248);
                }
            }
            9 => {
                if let Some(i) = any_group(g, &t) {
                    t.groups[i].candidates[0].capacity_bps = 0;
                }
            }
            10 => {
                if let Some(i) = any_group(g, &t) {
                    t.groups[i].candidates.clear();
                }
            }
            11 => {
                if let Some(i) = any_group(g, &t) {
                    let h = t.groups[i].clone();
                    let _ = t.groups.push(h);
                }
            }
            _ => {}
        }
        AnyTables(t)
    }
}

quickcheck! {
    /// `compile_into` over anything earlier equals `compile` on success and
    /// leaves its target untouched on error, with `validate`'s error.
    fn compile_into_equals_compile(first: AnyTables, second: AnyTables, cap: u8) -> bool {
        let cap = usize::from(cap % 10);
        let Ok(mut out) = first.0.compile(cap) else {
            return true;
        };
        let before = out.clone();
        match second.0.compile_into(cap, &mut out) {
            Ok(()) => Ok(&out) == second.0.compile(cap).as_ref(),
            Err(e) => {
                out == before
                    && second.0.validate(cap) == Err(e)
                    && second.0.compile(cap) == Err(e)
            }
        }
    }

    /// Install after traffic: on error nothing changes; on success the
    /// decider runs on exactly the compiled tables.
    fn install_is_all_or_nothing(tables: AnyTables, flows: Vec<(u32, bool)>) -> bool {
        let mut d = busy_decider();
        for (i, (f, down)) in flows.iter().enumerate() {
            let _ = d.on_packet(t(400 + i as u32), &flow(*f), group_of(*f));
            let _ = d.set_port_up(PortId((f % 8) as u8), !down);
        }
        let now = 400 + flows.len() as u32;
        let before = snapshot(&d, now);
        match d.install(&tables.0) {
            Err(e) => tables.0.validate(8) == Err(e) && snapshot(&d, now) == before,
            Ok(()) => {
                d.tables() == tables.0.compile(8).ok().as_ref()
                    && *d.counters() == before.counters
                    && snapshot(&d, now).pins == before.pins
            }
        }
    }
}
