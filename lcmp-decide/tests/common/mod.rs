//! Shared fixtures: testbed8's DC1 switch built by hand from the topology
//! README (first-hop metric), independent of `lcmp-tables`.

#![allow(dead_code, unreachable_pub)]

pub mod events;
pub mod in_order;

use core::net::Ipv4Addr;
use lcmp_decide::*;

pub const GBPS: u64 = 1_000_000_000;
pub const BUFFER: u64 = 5_000_000_000;
pub const DC8: GroupId = GroupId(8);

/// (neighbour DC, capacity in Gbps, one-way delay in ms) of DC1's ports 0..6.
pub const TESTBED8_DC1: [(u16, u64, u32); 6] = [
    (2, 200, 25),
    (3, 200, 250),
    (4, 100, 10),
    (5, 100, 100),
    (6, 25, 5),
    (7, 25, 50),
];

pub fn testbed8_dc1(params: Params) -> Tables {
    let mut t = Tables::paper_defaults();
    t.params = params;
    let mut g = Group {
        id: DC8,
        candidates: heapless::Vec::new(),
    };
    for (port, (_, gbps, ms)) in TESTBED8_DC1.iter().enumerate() {
        let id = PortId(port as u8);
        t.ports
            .push(PortConfig {
                id,
                rate_bps: gbps * GBPS,
                buffer_bytes: BUFFER,
            })
            .expect("capacity");
        g.candidates
            .push(Candidate {
                port: id,
                delay_units: *ms,
                capacity_bps: gbps * GBPS,
            })
            .expect("capacity");
    }
    t.groups.push(g).expect("capacity");
    t
}

pub fn decider(scheme: Scheme, params: Params) -> Decider<8, 1024> {
    let mut d = Decider::new(
        DeciderConfig::default()
            .with_scheme(scheme)
            .with_seed(0)
            .with_hash(HashAlgorithm::Murmur3),
    );
    d.install(&testbed8_dc1(params)).expect("valid tables");
    d
}

pub fn flow(i: u32) -> FlowKey {
    FlowKey::v4(
        Ipv4Addr::from_bits(0x0A01_0000 | (i & 0xFFFF)),
        Ipv4Addr::from_bits(0x0A08_0000 | (i >> 16)),
        (1000 + i % 5000) as u16,
        4791,
        17,
    )
}

pub fn t(ticks: u32) -> Instant {
    Instant::from_ticks(ticks)
}

/// The ports of the kept set, ascending.
pub fn kept_ports(e: &Explanation) -> Vec<u8> {
    let mut v: Vec<u8> = e
        .candidates
        .iter()
        .filter(|c| c.kept)
        .map(|c| c.port.0)
        .collect();
    v.sort_unstable();
    v
}
