//! The packet path against the memory floor (docs/performance.md, "Bursts
//! and the memory floor"). Every benchmark does 32 operations per
//! iteration, so criterion's time per iteration divided by 32 is the time
//! per packet (or per load):
//!
//! * `floor/dependent/SIZE`: 32 loads from a table of the cache's size,
//!   each address taken from the previous load (a random cycle over its
//!   cache lines): one miss at a time, the latency floor.
//! * `floor/independent/SIZE`: 32 loads at random lines known up front: the
//!   misses overlap, the throughput floor a burst can approach.
//! * `hit/single/SIZE` and `hit/burst/SIZE`: 32 established flows, in a
//!   random order over 61 % of the slots (40 000 of 65 536), by
//!   `on_packet` one at a time and by one `on_packets`.
//! * `new/single` and `new/burst`: 32 new flows with six candidates
//!   (steady state: idle timeout 0, every packet a new flow reusing an idle
//!   slot), 65 536 slots.
//!
//! The owned (`Decider<8, N>`) and caller-provided (`DeciderRef`) forms
//! are both measured at 64K slots.
#![allow(missing_docs)]

use std::hint::black_box;
use std::net::Ipv4Addr;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lcmp_decide::flow_cache::{SlotStorage, BLOCK_SLOTS};
use lcmp_decide::*;

mod common;

/// testbed8's DC1: six candidates.
fn tables(idle_timeout_ticks: u32) -> Tables {
    common::tables(6, idle_timeout_ticks)
}

const BURST_LEN: usize = 32;

fn flow(i: u32) -> FlowKey {
    FlowKey::v4(
        Ipv4Addr::from_bits(0x0A00_0000 ^ i.wrapping_mul(0x9E37_79B9)),
        Ipv4Addr::new(10, 8, 0, 1),
        (i >> 16) as u16,
        4791,
        17,
    )
}

/// A xorshift64* stream (seeded, reproducible).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

fn label(slots: usize) -> String {
    match slots {
        s if s >= 1 << 20 => format!("{}M", s >> 20),
        s => format!("{}K", s >> 10),
    }
}

/// The two floors for a table of `slots * 12` bytes.
fn bench_floors(c: &mut Criterion) {
    let mut g = c.benchmark_group("floor");
    g.throughput(Throughput::Elements(BURST_LEN as u64));
    for slots in [4096usize, 1 << 16, 1 << 20] {
        let lines = slots * 12 / 64;
        let mut rng = Rng(0x5EED ^ slots as u64);
        // A random cyclic order of the lines; each line's first word holds
        // the index of the next.
        let mut order: Vec<usize> = (0..lines).collect();
        rng.shuffle(&mut order);
        let mut table = vec![0u64; lines * 8];
        for w in 0..lines {
            table[order[w] * 8] = order[(w + 1) % lines] as u64;
        }
        let mut at = order[0];
        g.bench_function(BenchmarkId::new("dependent", label(slots)), |b| {
            b.iter(|| {
                for _ in 0..BURST_LEN {
                    at = table[at * 8] as usize;
                }
                black_box(at)
            })
        });
        // As many random lines as the table has, so that the loads cover
        // it (a shorter list would revisit a cache-resident subset).
        let len = lines.next_power_of_two();
        let random: Vec<usize> = (0..len).map(|_| rng.below(lines) * 8).collect();
        let mut next = 0usize;
        g.bench_function(BenchmarkId::new("independent", label(slots)), |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for k in 0..BURST_LEN {
                    sum = sum.wrapping_add(table[random[(next + k) & (len - 1)]]);
                }
                next = next.wrapping_add(BURST_LEN);
                black_box(sum)
            })
        });
    }
    g.finish();
}

/// Pins `flows` flows in `d`; returns a long random-order packet stream
/// over them.
fn pinned<S: SlotStorage>(d: &mut DeciderWith<8, S>, flows: u32) -> Vec<(FlowKey, GroupId)> {
    let now = Instant::from_ticks(10);
    for i in 0..flows {
        let _ = d.on_packet(now, &flow(i), GroupId(8));
    }
    assert_eq!(d.flow_cache().len(), flows as usize, "all pinned");
    let mut rng = Rng(0xF10E ^ u64::from(flows));
    let mut stream: Vec<(FlowKey, GroupId)> = (0..flows).map(|i| (flow(i), GroupId(8))).collect();
    rng.shuffle(&mut stream);
    stream
}

fn bench_hits_in<S: SlotStorage>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    d: &mut DeciderWith<8, S>,
    name: &str,
) {
    let slots = d.flow_cache().capacity();
    let stream = pinned(d, (slots as u64 * 61 / 100) as u32);
    let now = Instant::from_ticks(20);
    let mut at = 0usize;
    let next = |at: &mut usize| {
        if *at + BURST_LEN > stream.len() {
            *at = 0;
        }
        *at += BURST_LEN;
        &stream[*at - BURST_LEN..*at]
    };
    g.bench_function(
        BenchmarkId::new(format!("single{name}"), label(slots)),
        |b| {
            b.iter(|| {
                let mut last = None;
                for (k, grp) in next(&mut at) {
                    last = d.on_packet(now, black_box(k), *grp).port();
                }
                black_box(last)
            })
        },
    );
    let mut out = [Decision::Hit(PortId(0)); BURST_LEN];
    g.bench_function(
        BenchmarkId::new(format!("burst{name}"), label(slots)),
        |b| {
            b.iter(|| {
                let n = d.on_packets(now, black_box(next(&mut at)), &mut out);
                black_box((n, out[BURST_LEN - 1]))
            })
        },
    );
    assert_eq!(
        d.counters().hits,
        d.counters().packets - d.counters().new_flows
    );
}

fn bench_hits(c: &mut Criterion) {
    let mut g = c.benchmark_group("hit");
    g.throughput(Throughput::Elements(BURST_LEN as u64));
    let config = DeciderConfig::default();
    let mut small: Box<Decider<8, 4096>> = Box::new(Decider::new(config));
    small.install(&tables(2_000_000)).expect("valid");
    bench_hits_in(&mut g, &mut small, "");
    let mut owned: Box<Decider<8, { 1 << 16 }>> = Box::new(Decider::new(config));
    owned.install(&tables(2_000_000)).expect("valid");
    bench_hits_in(&mut g, &mut owned, "");
    drop(owned);
    for slots in [1usize << 16, 1 << 20] {
        let mut blocks = vec![SlotBlock::EMPTY; slots / BLOCK_SLOTS];
        let mut d = DeciderRef::<8>::with_slots(config, &mut blocks).expect("power of two");
        d.install(&tables(2_000_000)).expect("valid");
        bench_hits_in(&mut g, &mut d, "_ref");
    }
    g.finish();
}

fn bench_new(c: &mut Criterion) {
    let mut g = c.benchmark_group("new");
    g.throughput(Throughput::Elements(BURST_LEN as u64));
    let mut d: Box<Decider<8, { 1 << 16 }>> = Box::new(Decider::new(DeciderConfig::default()));
    d.install(&tables(0)).expect("valid");
    // Idle timeout 0 and a clock that moves on every burst: each packet is
    // a new flow whose insert reuses an idle slot (steady state).
    let mut tick = 100u32;
    let mut i = 0u32;
    let mut fresh = || {
        tick = tick.wrapping_add(1);
        let keys: [(FlowKey, GroupId); BURST_LEN] =
            std::array::from_fn(|k| (flow(i.wrapping_add(k as u32)), GroupId(8)));
        i = i.wrapping_add(BURST_LEN as u32);
        (Instant::from_ticks(tick), keys)
    };
    g.bench_function("single/6", |b| {
        b.iter_batched_ref(
            &mut fresh,
            |(now, keys)| {
                let mut last = None;
                for (k, grp) in keys.iter() {
                    last = d.on_packet(*now, k, *grp).port();
                }
                black_box(last)
            },
            criterion::BatchSize::SmallInput,
        )
    });
    let mut out = [Decision::Hit(PortId(0)); BURST_LEN];
    g.bench_function("burst/6", |b| {
        b.iter_batched_ref(
            &mut fresh,
            |(now, keys)| {
                let n = d.on_packets(*now, &keys[..], &mut out);
                black_box((n, out[0]))
            },
            criterion::BatchSize::SmallInput,
        )
    });
    assert_eq!(d.counters().new_flows, d.counters().packets);
    g.finish();
}

/// The parts of a burst's prefetch pass at 1M slots, 32 packets an
/// iteration: the fingerprints alone, the key-line read of each packet
/// (`FlowCacheWith::touch`) from precomputed fingerprints, and both, as
/// `on_packets` does them (docs/performance.md, "Bursts and the memory
/// floor").
fn bench_prefetch(c: &mut Criterion) {
    let mut g = c.benchmark_group("prefetch");
    g.throughput(Throughput::Elements(BURST_LEN as u64));
    let mut blocks = vec![SlotBlock::EMPTY; (1 << 20) / BLOCK_SLOTS];
    let mut d = DeciderRef::<8>::with_slots(DeciderConfig::default(), &mut blocks).expect("blocks");
    d.install(&tables(2_000_000)).expect("valid");
    let stream = pinned(&mut d, 640_000);
    let fingerprints: Vec<u64> = stream
        .iter()
        .map(|(k, _)| k.fingerprint(&FlowCacheKey::ZERO))
        .collect();
    let n = stream.len() / BURST_LEN * BURST_LEN;
    let mut at = 0usize;
    g.bench_function("fingerprint/1M", |b| {
        b.iter(|| {
            let x = stream[at..at + BURST_LEN]
                .iter()
                .fold(0u64, |x, (k, _)| x ^ k.fingerprint(&FlowCacheKey::ZERO));
            at = (at + BURST_LEN) % n;
            black_box(x)
        })
    });
    g.bench_function("touch/1M", |b| {
        b.iter(|| {
            let cache = d.flow_cache();
            let x = fingerprints[at..at + BURST_LEN]
                .iter()
                .fold(0u64, |x, fp| x ^ cache.touch(*fp));
            at = (at + BURST_LEN) % n;
            black_box(x)
        })
    });
    g.bench_function("fingerprint_and_touch/1M", |b| {
        b.iter(|| {
            let cache = d.flow_cache();
            let x = stream[at..at + BURST_LEN].iter().fold(0u64, |x, (k, _)| {
                x ^ cache.touch(k.fingerprint(&FlowCacheKey::ZERO))
            });
            at = (at + BURST_LEN) % n;
            black_box(x)
        })
    });
    g.finish();
}

criterion_group!(benches, bench_floors, bench_hits, bench_new, bench_prefetch);
criterion_main!(benches);
