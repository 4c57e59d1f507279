//! Criterion benchmarks of the packet path, each beside a straightforward
//! `std` baseline (HashMap flow table, Vec + sort) measured in the same run.
//! The hit and the new flow run under the zero flow key (`lcmp`) and a
//! random-looking one (`lcmp_keyed`) in the same run, and the fingerprint
//! alone beside the unkeyed mix it replaced (issue 33). Figures are
//! recorded in docs/performance.md.
#![allow(missing_docs)]

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lcmp_decide::cost::{congestion_cost, delay_score, fused_cost, link_cap_score, path_cost};
use lcmp_decide::*;

mod common;
use common::{flow, tables, CANDS, GBPS};

const FLOWS: usize = 1 << 16;

/// A device's flow key (any non-zero value: SipHash costs the same under
/// every key, which the `lcmp` / `lcmp_keyed` pairs show).
const KEY: FlowCacheKey = FlowCacheKey::from_bytes(*b"bench flow key!!");

/// The decider variants of each LCMP benchmark: the zero key (the default)
/// and a device key.
const KEYS: [(&str, FlowCacheKey); 2] = [("lcmp", FlowCacheKey::ZERO), ("lcmp_keyed", KEY)];

fn decider(n: usize, idle: u32, key: FlowCacheKey) -> Box<Decider<8, FLOWS>> {
    let mut d = Box::new(Decider::new(DeciderConfig::default().with_flow_key(key)));
    d.install(&tables(n, idle)).expect("valid");
    // Some congestion so C_cong is not trivially zero.
    for p in 0..n as u8 {
        let _ = d.sample(
            Instant::from_ticks(1000),
            PortId(p),
            u64::from(p) * 300_000_000,
        );
    }
    d
}

/// The baseline: the same scores, but a `HashMap` flow table and a
/// heap-allocated `Vec` of candidates sorted with `sort_by`.
struct Baseline {
    flows: HashMap<FlowKey, (PortId, u32)>,
    cands: Vec<(PortId, u64, u32)>,
    queue_scores: Vec<u8>,
}

impl Baseline {
    fn new(n: usize) -> Self {
        Baseline {
            flows: HashMap::new(),
            cands: CANDS
                .iter()
                .take(n)
                .enumerate()
                .map(|(i, (g, ms))| (PortId(i as u8), g * GBPS, *ms))
                .collect(),
            queue_scores: (0..n).map(|i| (i * 25) as u8).collect(),
        }
    }

    fn on_packet(&mut self, now: u32, key: &FlowKey) -> PortId {
        if let Some(entry) = self.flows.get_mut(key) {
            entry.1 = now;
            return entry.0;
        }
        let thr = tables::default_capacity_thresholds(400 * GBPS, 10);
        let w = Weights::PAPER;
        let mut scored: Vec<(u8, PortId)> = self
            .cands
            .iter()
            .zip(&self.queue_scores)
            .map(|((p, cap, ms), q)| {
                let c_path = path_cost(
                    delay_score(*ms, 5),
                    link_cap_score(*cap, &thr, &tables::DEFAULT_LEVELS),
                    &w,
                );
                (fused_cost(c_path, congestion_cost(*q, 0, 0, &w), &w), *p)
            })
            .collect();
        scored.sort();
        let keep = if scored.len() / 2 < 2 {
            scored.len()
        } else {
            scored.len() / 2
        };
        let kept: Vec<_> = scored.iter().take(keep).filter(|(c, _)| *c < 204).collect();
        let hash = key.ecmp_hash(HashAlgorithm::Murmur3, 0);
        let port = if kept.is_empty() {
            scored[0].1
        } else {
            kept[hash as usize % kept.len()].1
        };
        self.flows.insert(*key, (port, now));
        port
    }
}

/// Pins `keys`, then measures `on_packet` hits cycling through them.
fn bench_pinned<const F: usize>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    d: &mut Decider<8, F>,
    keys: &[FlowKey],
    (name, label): (&str, &str),
) {
    for k in keys {
        let _ = d.on_packet(Instant::from_ticks(2000), k, GroupId(8));
    }
    let mut i = 0usize;
    g.bench_function(BenchmarkId::new(name, label), |b| {
        b.iter(|| {
            i = (i + 1) % keys.len();
            black_box(d.on_packet(Instant::from_ticks(3000), black_box(&keys[i]), GroupId(8)))
        })
    });
}

fn bench_hit(c: &mut Criterion) {
    let mut g = c.benchmark_group("hit");
    // Two working sets: 2 000 flows in a 4 096-slot cache (48 KiB, cache
    // resident, like a NIC core's table) and 20 000 flows in 65 536 slots
    // (768 KiB, mostly L2/L3 misses), each beside a HashMap of the same flows.
    for (flows, label) in [(2_000u32, "2k_flows"), (20_000, "20k_flows")] {
        let keys: Vec<FlowKey> = (0..flows).map(flow).collect();
        for (name, key) in KEYS {
            if flows <= 2_000 {
                let config = DeciderConfig::default().with_flow_key(key);
                let mut d: Box<Decider<8, 4096>> = Box::new(Decider::new(config));
                d.install(&tables(6, 2_000_000)).expect("valid");
                bench_pinned(&mut g, &mut d, &keys, (name, label));
            } else {
                let mut d = decider(6, 2_000_000, key);
                bench_pinned(&mut g, &mut d, &keys, (name, label));
            }
        }
        let mut i = 0usize;
        let mut base = Baseline::new(6);
        for k in &keys {
            base.on_packet(2000, k);
        }
        g.bench_function(BenchmarkId::new("std_baseline", label), |b| {
            b.iter(|| {
                i = (i + 1) % keys.len();
                black_box(base.on_packet(3000, black_box(&keys[i])))
            })
        });
    }
    g.finish();
}

fn bench_new_flow(c: &mut Criterion) {
    let mut g = c.benchmark_group("new_flow");
    for n in [2usize, 4, 6, 8] {
        // Idle timeout 0 and a clock that advances every packet: each packet
        // is a new flow whose slot reuses an idle one (steady state).
        let mut now = 10_000u32;
        for (name, key) in KEYS {
            let mut d = decider(n, 0, key);
            g.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    now = now.wrapping_add(1);
                    black_box(d.on_packet(
                        Instant::from_ticks(now),
                        black_box(&flow(now)),
                        GroupId(8),
                    ))
                })
            });
        }
        let mut base = Baseline::new(n);
        g.bench_with_input(BenchmarkId::new("std_baseline", n), &n, |b, _| {
            b.iter(|| {
                now = now.wrapping_add(1);
                if base.flows.len() > FLOWS {
                    base.flows.clear(); // the baseline's GC, amortised
                }
                black_box(base.on_packet(now, black_box(&flow(now))))
            })
        });
    }
    g.finish();
}

fn bench_gc(c: &mut Criterion) {
    let mut g = c.benchmark_group("gc");
    let mut d = decider(6, 1000, KEY);
    for i in 0..(FLOWS as u32 / 2) {
        let _ = d.on_packet(Instant::from_ticks(i % 500), &flow(i), GroupId(8));
    }
    // Entries are not idle at t = 600, so GC scans without evicting: the
    // steady-state cost of a 64-slot step.
    g.bench_function("step_64_slots", |b| {
        b.iter(|| black_box(d.gc(Instant::from_ticks(600), 64)))
    });
    let mut table: HashMap<u32, u32> = (0..FLOWS as u32 / 2).map(|i| (i, i % 500)).collect();
    g.bench_function("std_baseline_retain_full_table", |b| {
        b.iter(|| {
            table.retain(|_, seen| 600u32.wrapping_sub(*seen) <= 1000);
            black_box(table.len())
        })
    });
    g.finish();
}

/// The fingerprint before issue 33 (commit 301d038, `FlowKey::fingerprint`
/// for IPv4): two SplitMix64 finaliser rounds from a public constant, no
/// key. Kept here only as the reference of the `fingerprint` group: it is
/// what the keyed hash costs more per packet.
fn unkeyed_fingerprint_v4(src: u32, dst: u32, last: u64) -> u64 {
    const FINGERPRINT_SEED: u64 = 0x9E37_79B9_7F4A_7C15;
    fn splitmix64(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    let h = splitmix64(FINGERPRINT_SEED ^ (u64::from(src) | (u64::from(dst) << 32)));
    splitmix64(h ^ last)
}

fn bench_fingerprint(c: &mut Criterion) {
    let mut g = c.benchmark_group("fingerprint");
    let keys: Vec<FlowKey> = (0..1024).map(flow).collect();
    let mut i = 0usize;
    g.bench_function("siphash13_keyed", |b| {
        b.iter(|| {
            i = (i + 1) % keys.len();
            black_box(black_box(&keys[i]).fingerprint(&KEY))
        })
    });
    g.bench_function("unkeyed_splitmix_before_issue_33", |b| {
        b.iter(|| {
            i = (i + 1) % keys.len();
            let k = black_box(&keys[i]);
            let Addresses::V4 { src, dst } = k.addrs else {
                return 0;
            };
            let last = u64::from(k.sport) | (u64::from(k.dport) << 16) | (u64::from(k.proto) << 32);
            black_box(unkeyed_fingerprint_v4(src, dst, last))
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    bench_hit,
    bench_new_flow,
    bench_gc,
    bench_fingerprint
);
criterion_main!(benches);
