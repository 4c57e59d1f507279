//! `on_packets` (the burst path) gives exactly the decisions of calling
//! `on_packet` once per packet, in order: a quickcheck property over random
//! event sequences whose bursts mix hits, new flows, failovers,
//! withdrawals, overflows and repeated flows, on both storage forms and
//! both overflow policies; and so does `on_packets_with` over packets and
//! decisions in a caller's own layout (the C ABI's form), whose read-ahead
//! hook sees every packet's key line once.

mod common;

use common::events::*;
use common::*;
use lcmp_decide::flow_cache::SlotStorage;
use lcmp_decide::*;
use quickcheck::{Gen, QuickCheck};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Packets routed by the property, and how many of them were in a burst
/// that also held a refused or unpinned packet (the overflow case).
static PACKETS: AtomicU64 = AtomicU64::new(0);
static OVERFLOW_BURSTS: AtomicU64 = AtomicU64::new(0);

/// Runs `events` through `burst` (with `on_packets`, or `on_packets_with`
/// over flow numbers and `Option<Decision>`s when `by_layout`) and
/// `single` (with `on_packet` per packet); every decision and counter must
/// agree.
fn agree<A: SlotStorage, B: SlotStorage>(
    mut burst: DeciderWith<8, A>,
    mut single: DeciderWith<8, B>,
    events: &[Event],
    by_layout: bool,
) -> bool {
    install_start(&mut burst);
    install_start(&mut single);
    let (mut c1, mut c2) = (Clock::START, Clock::START);
    for ev in events {
        apply(&mut burst, ev, &mut c1);
        apply(&mut single, ev, &mut c2);
        let Event::Packets(flows) = ev else {
            continue;
        };
        let packets: Vec<(FlowKey, GroupId)> =
            flows.iter().map(|&n| (flow(n), group_of(n))).collect();
        let out: Vec<Decision> = if by_layout {
            // The caller's layout: a flow number in, an optional decision
            // out; the hook counts the lines and prefetches nothing.
            let lines = Cell::new(0usize);
            let mut out = vec![None; flows.len()];
            let n = burst.on_packets_with(
                c1.instant(),
                flows,
                |&n| (flow(n), group_of(n)),
                &mut out,
                |o, d| *o = Some(d),
                |_, _| {
                    lines.set(lines.get() + 1);
                    0
                },
            );
            assert_eq!((n, lines.get()), (flows.len(), flows.len()));
            out.into_iter()
                .map(|d| d.expect("every decision written"))
                .collect()
        } else {
            let mut out = vec![Decision::NoRoute(Reason::UnknownGroup); packets.len()];
            assert_eq!(
                burst.on_packets(c1.instant(), &packets, &mut out),
                packets.len()
            );
            out
        };
        let one_by_one: Vec<Decision> = packets
            .iter()
            .map(|(k, g)| single.on_packet(c2.instant(), k, *g))
            .collect();
        assert_eq!(out, one_by_one);
        assert_eq!(burst.counters(), single.counters());
        PACKETS.fetch_add(packets.len() as u64, Ordering::Relaxed);
        let overflowed = out.iter().any(|d| {
            matches!(
                d,
                Decision::Unpinned(_) | Decision::NoRoute(Reason::CacheFull)
            )
        });
        OVERFLOW_BURSTS.fetch_add(u64::from(overflowed), Ordering::Relaxed);
    }
    let now = c1.instant();
    assert_eq!(burst.flow_cache().len(), single.flow_cache().len());
    (0..FLOWS).all(|n| {
        burst.explain(now, &flow(n), group_of(n)) == single.explain(now, &flow(n), group_of(n))
    })
}

fn burst_is_sequential(events: Vec<Event>, stateless: bool, by_layout: bool) -> bool {
    let config = DeciderConfig::default()
        .with_seed(3)
        .with_overflow(if stateless {
            Overflow::Stateless
        } else {
            Overflow::Refuse
        });
    let mut blocks = [SlotBlock::EMPTY; 1];
    let borrowed = DeciderRef::<8>::with_slots(config, &mut blocks).expect("one block");
    let mut blocks2 = [SlotBlock::EMPTY; 1];
    let borrowed2 = DeciderRef::<8>::with_slots(config, &mut blocks2).expect("one block");
    // Owned burst against borrowed single, and the other way round.
    agree(Decider::<8, 16>::new(config), borrowed, &events, by_layout)
        && agree(borrowed2, Decider::<8, 16>::new(config), &events, by_layout)
}

#[test]
fn a_burst_decides_exactly_as_packet_by_packet() {
    QuickCheck::new()
        .rng(Gen::new(100))
        .tests(300)
        .quickcheck(burst_is_sequential as fn(Vec<Event>, bool, bool) -> bool);
    assert!(PACKETS.load(Ordering::Relaxed) > 10_000);
    assert!(
        OVERFLOW_BURSTS.load(Ordering::Relaxed) > 0,
        "no burst overflowed the cache"
    );
}

#[test]
fn a_short_output_bounds_the_burst() {
    let mut d = decider(Scheme::Lcmp, Params::PAPER);
    let packets: Vec<(FlowKey, GroupId)> = (0..100).map(|i| (flow(i), DC8)).collect();
    let mut out = [Decision::NoRoute(Reason::UnknownGroup); 70];
    assert_eq!(d.on_packets(t(1), &packets, &mut out), 70);
    assert!(out.iter().all(|d| matches!(d, Decision::New { .. })));
    assert_eq!(d.counters().packets, 70);
    // The rest, later: the first 70 hit, the others are new.
    let mut rest = vec![Decision::NoRoute(Reason::UnknownGroup); 100];
    assert_eq!(d.on_packets(t(2), &packets, &mut rest), 100);
    assert!(rest[..70]
        .iter()
        .zip(&out)
        .all(|(r, o)| Some(*r) == o.port().map(Decision::Hit)));
    assert!(rest[70..].iter().all(|d| matches!(d, Decision::New { .. })));
    assert_eq!(d.on_packets(t(3), &[], &mut rest), 0);
}
