//! Shared by the integration tests: a random scenario generator (tables,
//! scheme, seed, device ports, pin-table size, queue samples, down ports,
//! flows) and helpers that read the entries.
#![allow(dead_code, unreachable_pub)]

use core::net::Ipv4Addr;

use lcmp_decide::tables::{default_capacity_thresholds, MAX_PORTS};
use lcmp_decide::{
    Candidate, DeciderConfig, FlowKey, Group, GroupId, HashAlgorithm, Pick, PortConfig, PortId,
    Scheme, Tables, Weights,
};
use lcmp_tofino::hash::Headers;
use lcmp_tofino::model::Match;
use lcmp_tofino::schema::actions::NO_ROUTE;
use lcmp_tofino::schema::names;
use lcmp_tofino::{Agent, EntrySet, ExportOptions};
use quickcheck::{Arbitrary, Gen};

/// The agent of testbed8's DC1 under LCMP, seed 7, CRC-32, with `opts`.
pub fn testbed8_dc1(opts: ExportOptions) -> Agent {
    let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
    let cfg = DeciderConfig::default()
        .with_scheme(Scheme::Lcmp)
        .with_seed(7)
        .with_hash(HashAlgorithm::Crc32);
    lcmp_tofino::cli::agent_for(&topo, "DC1", cfg, opts).expect("agent")
}

pub fn below(g: &mut Gen, n: usize) -> usize {
    usize::arbitrary(g) % n.max(1)
}

/// A random configuration, congestion state and set of flows.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub tables: Tables,
    pub options: ExportOptions,
    pub config: DeciderConfig,
    pub samples: Vec<(u32, u8, u64)>,
    pub down: Vec<u8>,
    pub flows: Vec<(FlowKey, GroupId)>,
}

impl Arbitrary for Scenario {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut t = Tables::paper_defaults();
        t.params.pick = Pick::ScaledHash;
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
        *w = Weights::PAPER
            .with_alpha(u32::arbitrary(g) % 8)
            .with_beta(u32::arbitrary(g) % 8)
            .with_w_dl(u32::arbitrary(g) % 8)
            .with_w_lc(u32::arbitrary(g) % 8)
            .with_w_ql(u32::arbitrary(g) % 8)
            .with_w_tl(u32::arbitrary(g) % 8)
            .with_w_dp(u32::arbitrary(g) % 8)
            .with_s_path(u8::arbitrary(g) % 5)
            .with_s_cong(u8::arbitrary(g) % 5)
            .with_s_total(u8::arbitrary(g) % 5);
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
        let config = DeciderConfig::default()
            .with_scheme(scheme)
            .with_seed(u32::arbitrary(g))
            .with_hash(HashAlgorithm::Crc32);
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
        // Small pin tables (256 cells a way) make ways collide often.
        if bool::arbitrary(g) {
            options.pin_slots = 512;
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

pub fn headers(k: &FlowKey) -> Headers {
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

/// The pick list the entries encode for a group: `P[b]` for `b < k`, read
/// from `lcmp_dst_group` and `lcmp_select` (empty: `no_route`).
pub fn entries_pick_list(entries: &EntrySet, group: GroupId) -> Option<Vec<u64>> {
    let g = u64::from(group.0);
    let dst = entries.entries.iter().find(|e| {
        e.table == names::DST_GROUP
            && e.matches
                == [Match::Lpm {
                    value: (10 << 24) | (g << 16),
                    prefix_len: 16,
                }]
    })?;
    if dst.action == NO_ROUTE.name {
        return Some(Vec::new());
    }
    let k = *dst.params.get(1)?;
    (0..k)
        .map(|b| {
            entries
                .entries
                .iter()
                .find(|e| {
                    e.table == names::SELECT && e.matches == [Match::Exact(g), Match::Exact(b)]
                })
                .and_then(|e| e.params.first().copied())
        })
        .collect()
}

/// A scenario and a second state: more samples, more ports down, some
/// ports back up.
#[derive(Clone, Debug)]
pub struct TwoPhase {
    pub base: Scenario,
    pub samples2: Vec<(u32, u8, u64)>,
    pub down2: Vec<u8>,
    pub up2: Vec<u8>,
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
        let up2 = base
            .down
            .iter()
            .copied()
            .filter(|_| bool::arbitrary(g))
            .collect();
        TwoPhase {
            base,
            samples2,
            down2,
            up2,
        }
    }
}
