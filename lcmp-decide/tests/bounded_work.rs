//! "Every call does bounded work" (docs/design.md, "The sans-IO contract"),
//! counted: with the test-only feature `_work-counters` the flow cache,
//! the selection and the estimators count their bucket scans, candidate
//! reads and comparisons, gc visits and level comparisons
//! (`lcmp_decide::work`), and these properties assert the documented
//! bound after every call of random event streams, on a 16-port switch
//! whose groups have up to `MAX_CANDIDATES` (16) candidates, with up to
//! `MAX_LEVELS` (16) levels and a 32-slot cache that overflows.
//!
//! Run: `cargo test -p lcmp-decide --features _work-counters --test bounded_work`.

use lcmp_decide::tables::{MAX_CANDIDATES, MAX_LEVELS};
use lcmp_decide::work::{take, Work};
use lcmp_decide::*;
use quickcheck::{Arbitrary, Gen};
use std::sync::Mutex;

/// The counters are process-wide: one property at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const PORTS: usize = 16;
const SLOTS: usize = 32;
/// Slots of a flow's two buckets.
const BUCKET_SLOTS: usize = 16;

/// The bounds of docs/design.md, per call.
mod bound {
    use super::*;
    /// A hit: the tag search of at most the flow's two buckets.
    pub(crate) const HIT_BUCKET_SCANS: usize = 2;
    /// Any packet: the tag search and the vacancy search of its two
    /// buckets (4), one displacement (the other bucket of each of the 16
    /// entries of its two buckets) and the reuse pass over its two buckets.
    pub(crate) const PACKET_BUCKET_SCANS: usize = 4 + BUCKET_SLOTS + 2;
    /// Any packet: five passes over at most 16 candidates (UCMP's maximum
    /// capacity, count and pick; then, for a refused insert under
    /// `Overflow::Stateless`, ECMP's count and pick).
    pub(crate) const PACKET_CANDIDATE_READS: usize = 5 * MAX_CANDIDATES;
    /// The ranking's sort of at most 16 keys: insertion sort's worst case
    /// `n (n - 1) / 2` plus a run check of `n - 1` comparisons.
    pub(crate) const PACKET_CANDIDATE_COMPARISONS: usize =
        MAX_CANDIDATES * (MAX_CANDIDATES - 1) / 2 + MAX_CANDIDATES - 1;
    /// A sample: the queue level's and the trend level's scans from the
    /// top of at most 16 levels.
    pub(crate) const SAMPLE_LEVEL_COMPARISONS: usize = 2 * MAX_LEVELS;
}

/// A switch: its candidates' delays and capacities, levels, pick and
/// scheme, and its overflow policy.
#[derive(Clone, Debug)]
struct World {
    cands: Vec<(u32, u64)>,
    levels: usize,
    pick: Pick,
    scheme: Scheme,
    stateless: bool,
    events: Vec<Event>,
}

#[derive(Clone, Debug)]
enum Event {
    Packet(u32),
    Burst(Vec<u32>),
    Sample(u8, u64),
    Flap(u8, bool),
    Advance(u32),
    Gc(u16),
    SetCurrent(bool),
}

impl Arbitrary for Event {
    fn arbitrary(g: &mut Gen) -> Self {
        match u8::arbitrary(g) % 10 {
            0..=3 => Event::Packet(u32::arbitrary(g) % 80),
            4 => Event::Burst(
                (0..usize::arbitrary(g) % 40)
                    .map(|_| u32::arbitrary(g) % 80)
                    .collect(),
            ),
            5 | 6 => Event::Sample(
                u8::arbitrary(g) % PORTS as u8,
                u64::arbitrary(g) % 6_000_000_000,
            ),
            7 => Event::Flap(u8::arbitrary(g) % PORTS as u8, bool::arbitrary(g)),
            8 => match bool::arbitrary(g) {
                true => Event::Advance(u32::arbitrary(g) % 3_000_000),
                false => Event::Gc(u16::arbitrary(g) % 100),
            },
            _ => match u8::arbitrary(g) % 4 {
                0 => Event::SetCurrent(bool::arbitrary(g)),
                _ => Event::Advance(u32::arbitrary(g) % 1_000),
            },
        }
    }
}

impl Arbitrary for World {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = usize::arbitrary(g) % MAX_CANDIDATES + 1;
        World {
            cands: (0..n)
                .map(|_| {
                    (
                        u32::arbitrary(g) % 300,
                        (u64::arbitrary(g) % 400 + 1) * 1_000_000_000,
                    )
                })
                .collect(),
            levels: usize::arbitrary(g) % MAX_LEVELS + 1,
            pick: *g
                .choose(&[Pick::Hash, Pick::ScaledHash, Pick::CapacityWeighted])
                .expect("non-empty"),
            scheme: *g
                .choose(&[Scheme::Lcmp, Scheme::Ecmp, Scheme::Ucmp])
                .expect("non-empty"),
            stateless: bool::arbitrary(g),
            events: Vec::arbitrary(g),
        }
    }
}

impl World {
    fn tables(&self) -> Tables {
        let mut t = Tables::paper_defaults();
        t.params = Params::PAPER.with_pick(self.pick);
        let n = self.levels;
        t.levels = (1..=n).map(|i| (i * 255 / n) as u8).collect();
        t.capacity_thresholds_bps = tables::default_capacity_thresholds(400_000_000_000, n);
        for p in 0..PORTS {
            t.ports
                .push(PortConfig {
                    id: PortId(p as u8),
                    rate_bps: 100_000_000_000,
                    buffer_bytes: 5_000_000_000,
                })
                .expect("capacity");
        }
        // Group 1 has every candidate, group 2 every other one.
        for (id, step) in [(1, 1), (2, 2)] {
            let mut g = Group {
                id: GroupId(id),
                candidates: heapless::Vec::new(),
            };
            for (i, &(delay, cap)) in self.cands.iter().enumerate().step_by(step) {
                g.candidates
                    .push(Candidate {
                        port: PortId(i as u8),
                        delay_units: delay,
                        capacity_bps: cap,
                    })
                    .expect("capacity");
            }
            t.groups.push(g).expect("capacity");
        }
        t
    }

    fn decider(&self) -> Decider<PORTS, SLOTS> {
        let overflow = if self.stateless {
            Overflow::Stateless
        } else {
            Overflow::Refuse
        };
        let mut d = Decider::new(
            DeciderConfig::default()
                .with_scheme(self.scheme)
                .with_overflow(overflow),
        );
        d.install(&self.tables()).expect("valid tables");
        d
    }
}

fn flow(n: u32) -> (FlowKey, GroupId) {
    let key = FlowKey::v4(
        core::net::Ipv4Addr::from_bits(0x0A01_0000 | n),
        core::net::Ipv4Addr::from_bits(0x0A08_0000),
        1000 + n as u16,
        4791,
        17,
    );
    (key, GroupId(1 + (n % 2) as u16))
}

/// What a call may do: `Work` with every field at its bound.
fn within(w: &Work, max: &Work) -> bool {
    w.bucket_scans <= max.bucket_scans
        && w.candidate_reads <= max.candidate_reads
        && w.candidate_comparisons <= max.candidate_comparisons
        && w.gc_visits <= max.gc_visits
        && w.level_comparisons <= max.level_comparisons
}

fn packets(n: usize) -> Work {
    Work {
        bucket_scans: n * bound::PACKET_BUCKET_SCANS,
        candidate_reads: n * bound::PACKET_CANDIDATE_READS,
        candidate_comparisons: n * bound::PACKET_CANDIDATE_COMPARISONS,
        ..Work::default()
    }
}

/// The largest work of any call of each kind, for the sanity checks.
#[derive(Default)]
struct Peaks {
    packet: Work,
    gc: usize,
    sample: usize,
}

fn peak(a: &mut Work, b: &Work) {
    a.bucket_scans = a.bucket_scans.max(b.bucket_scans);
    a.candidate_reads = a.candidate_reads.max(b.candidate_reads);
    a.candidate_comparisons = a.candidate_comparisons.max(b.candidate_comparisons);
}

/// Runs `w`'s events and checks each call's work against its bound;
/// `Err` names the first call over it.
fn run(w: &World, peaks: &mut Peaks) -> Result<(), String> {
    let mut d = w.decider();
    let mut now = Instant::from_ticks(1);
    let _ = take();
    for (i, ev) in w.events.iter().enumerate() {
        let (work, max) = match ev {
            Event::Packet(n) => {
                let (key, group) = flow(*n);
                let decision = d.on_packet(now, &key, group);
                let work = take();
                let mut max = packets(1);
                if matches!(decision, Decision::Hit(_)) {
                    max = Work {
                        bucket_scans: bound::HIT_BUCKET_SCANS,
                        ..Work::default()
                    };
                }
                peak(&mut peaks.packet, &work);
                (work, max)
            }
            Event::Burst(ns) => {
                let burst: Vec<_> = ns.iter().map(|&n| flow(n)).collect();
                let mut out = vec![Decision::NoRoute(Reason::UnknownGroup); burst.len()];
                let _ = d.on_packets(now, &burst, &mut out);
                (take(), packets(burst.len()))
            }
            Event::Sample(p, q) => {
                d.sample(now, PortId(*p), *q).expect("port");
                let work = take();
                peaks.sample = peaks.sample.max(work.level_comparisons);
                let max = Work {
                    level_comparisons: bound::SAMPLE_LEVEL_COMPARISONS,
                    ..Work::default()
                };
                (work, max)
            }
            Event::Flap(p, up) => {
                d.set_port_up(PortId(*p), *up).expect("port");
                (take(), Work::default())
            }
            Event::Advance(dt) => {
                now = Instant::from_ticks(now.ticks().wrapping_add(*dt));
                (take(), Work::default())
            }
            Event::Gc(budget) => {
                let _ = d.gc(now, usize::from(*budget));
                let work = take();
                // Exactly the budget, up to the capacity.
                let visits = usize::from(*budget).min(SLOTS);
                if work.gc_visits != visits {
                    return Err(format!(
                        "event {i} {ev:?}: {work:?}, want {visits} gc visits"
                    ));
                }
                peaks.gc = peaks.gc.max(work.gc_visits);
                let max = Work {
                    gc_visits: visits,
                    ..Work::default()
                };
                (work, max)
            }
            Event::SetCurrent(c) => {
                d.set_tables_current(*c);
                (take(), Work::default())
            }
        };
        if !within(&work, &max) {
            return Err(format!("event {i} {ev:?}: {work:?}, over {max:?}"));
        }
    }
    Ok(())
}

/// Random worlds and event streams: no call over its bound.
#[test]
fn every_call_does_bounded_work() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut peaks = Peaks::default();
    let mut g = Gen::new(200);
    for case in 0..300 {
        let w = World::arbitrary(&mut g);
        if let Err(e) = run(&w, &mut peaks) {
            panic!("case {case}: {e}\n{w:?}");
        }
    }
    // The counters count: over 300 streams the packet path displaced,
    // ranked 16 candidates and sampled 16 levels at least once.
    eprintln!(
        "peaks: packet {:?}, gc {}, sample {}",
        peaks.packet, peaks.gc, peaks.sample
    );
    assert!(peaks.packet.bucket_scans > 4, "no displacement counted");
    assert!(peaks.packet.candidate_reads >= MAX_CANDIDATES);
    assert!(peaks.packet.candidate_comparisons > 0);
    assert!(peaks.sample > MAX_LEVELS);
    assert_eq!(peaks.gc, SLOTS);
}

/// The bounds are tight where a fixed stream reaches them: a full cache
/// displaces (more than the probe's 4 scans), a hit in the primary bucket
/// scans one bucket, and a gc visits exactly its budget.
#[test]
fn the_counters_see_the_work() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let w = World {
        cands: (0..MAX_CANDIDATES as u32)
            .map(|i| (i * 17 % 300, 100_000_000_000))
            .collect(),
        levels: MAX_LEVELS,
        pick: Pick::Hash,
        scheme: Scheme::Lcmp,
        stateless: false,
        events: Vec::new(),
    };
    let mut d = w.decider();
    let now = Instant::from_ticks(1);
    let _ = take();
    // Flow 0 is in group 1, whose candidates are all 16.
    let (key, group) = flow(0);
    assert!(matches!(
        d.on_packet(now, &key, group),
        Decision::New { .. }
    ));
    let new = take();
    // A miss: tag search and vacancy search of the primary bucket (the
    // secondary one too for the tag); all 16 candidates ranked.
    assert!((3..=4).contains(&new.bucket_scans), "{new:?}");
    assert_eq!(new.candidate_reads, MAX_CANDIDATES, "{new:?}");
    assert!(new.candidate_comparisons >= MAX_CANDIDATES - 1, "{new:?}");
    assert!(matches!(d.on_packet(now, &key, group), Decision::Hit(_)));
    let hit = take();
    assert!((1..=2).contains(&hit.bucket_scans), "{hit:?}");
    assert_eq!(
        hit.candidate_reads + hit.candidate_comparisons,
        0,
        "{hit:?}"
    );
    // Fill the 32 slots: some insert finds both buckets full and displaces.
    let mut displaced = false;
    for n in 1..200 {
        let (key, group) = flow(n);
        let _ = d.on_packet(now, &key, group);
        displaced |= take().bucket_scans > 4;
    }
    assert!(displaced, "no insert displaced ({:?})", d.counters());
    assert!(d.counters().displacements > 0);
    let _ = d.gc(now, 10);
    assert_eq!(take().gc_visits, 10);
    d.sample(now, PortId(0), 4_000_000_000).expect("port");
    let sample = take();
    assert!(sample.level_comparisons > 0 && sample.level_comparisons <= 2 * MAX_LEVELS);
}
