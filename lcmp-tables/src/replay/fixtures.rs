//! Events the replay modules' tests share.

use alloc::vec::Vec;
use core::net::Ipv4Addr;

use lcmp_decide::{FlowKey, PortId};

use super::TraceEvent;

pub(super) fn flow(i: u16) -> FlowKey {
    FlowKey::v4(
        Ipv4Addr::new(10, 0, 0, 1),
        Ipv4Addr::new(10, 0, 7, 1),
        1000 + i,
        4791,
        17,
    )
}

pub(super) fn sample_events() -> Vec<TraceEvent> {
    alloc::vec![
        TraceEvent::Sample {
            t_us: 0,
            port: PortId(2),
            queue_bytes: 4_000_000_000
        },
        TraceEvent::Packet {
            t_us: 10,
            flow: flow(1),
            dst_dc: 8
        },
        TraceEvent::Link {
            t_us: 20,
            port: PortId(4),
            up: false
        },
        TraceEvent::Packet {
            t_us: u64::from(u32::MAX) + 7,
            flow: flow(2),
            dst_dc: 3
        },
    ]
}

/// Events from quickcheck's raw tuples `(delta_us, kind, a, b, n)`:
/// times never decrease; packets are IPv4 or IPv6, samples and link
/// changes use every port number.
pub(super) fn arbitrary_events(raw: &[(u32, u8, u128, u128, u64)]) -> Vec<TraceEvent> {
    let mut t_us = 0u64;
    raw.iter()
        .map(|&(delta, kind, a, b, n)| {
            t_us += u64::from(delta);
            let (sport, dport, proto, dst_dc) = (
                n as u16,
                (n >> 16) as u16,
                (n >> 32) as u8,
                (n >> 40) as u16,
            );
            match kind % 4 {
                0 => TraceEvent::Packet {
                    t_us,
                    flow: FlowKey::v4(
                        Ipv4Addr::from_bits(a as u32),
                        Ipv4Addr::from_bits(b as u32),
                        sport,
                        dport,
                        proto,
                    ),
                    dst_dc,
                },
                1 => TraceEvent::Packet {
                    t_us,
                    flow: FlowKey::v6(
                        core::net::Ipv6Addr::from_bits(a),
                        core::net::Ipv6Addr::from_bits(b),
                        sport,
                        dport,
                        proto,
                    ),
                    dst_dc,
                },
                2 => TraceEvent::Sample {
                    t_us,
                    port: PortId(n as u8),
                    queue_bytes: n.rotate_left(17),
                },
                _ => TraceEvent::Link {
                    t_us,
                    port: PortId(n as u8),
                    up: n & 1 == 0,
                },
            }
        })
        .collect()
}
