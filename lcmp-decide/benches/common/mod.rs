//! The tables the benchmarks and the instruction-count example decide on:
//! testbed8's DC1 candidates (the first six) and two more, in one group
//! towards DC 8. Shared by `benches/decide.rs`, `benches/burst.rs` and
//! `examples/hot_path.rs` (by path), so that their figures are comparable.
#![allow(dead_code, unreachable_pub)]

use core::net::Ipv4Addr;

use lcmp_decide::*;

pub const GBPS: u64 = 1_000_000_000;

/// (capacity Gbps, delay ms) of up to eight candidates (testbed8's six first).
pub const CANDS: [(u64, u32); 8] = [
    (200, 25),
    (200, 250),
    (100, 10),
    (100, 100),
    (25, 5),
    (25, 50),
    (400, 3),
    (40, 20),
];

/// The paper's defaults with the first `n` candidates on ports `0..n` and
/// the given idle timeout.
pub fn tables(n: usize, idle_timeout_ticks: u32) -> Tables {
    let mut t = Tables::paper_defaults();
    t.params.idle_timeout_ticks = idle_timeout_ticks;
    let mut g = Group {
        id: GroupId(8),
        candidates: heapless::Vec::new(),
    };
    for (i, (gbps, ms)) in CANDS.iter().take(n).enumerate() {
        let id = PortId(i as u8);
        let _ = t.ports.push(PortConfig {
            id,
            rate_bps: gbps * GBPS,
            buffer_bytes: 5_000_000_000,
        });
        let _ = g.candidates.push(Candidate {
            port: id,
            delay_units: *ms,
            capacity_bps: gbps * GBPS,
        });
    }
    let _ = t.groups.push(g);
    t
}

/// Flow `i` of the single-packet benches and `hot_path`: distinct source
/// addresses towards DC 8, RoCE v2 (UDP 4791).
pub fn flow(i: u32) -> FlowKey {
    FlowKey::v4(
        Ipv4Addr::from_bits(0x0A01_0000 ^ i),
        Ipv4Addr::new(10, 8, 0, 1),
        (i >> 8) as u16,
        4791,
        17,
    )
}
