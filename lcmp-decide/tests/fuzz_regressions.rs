//! Regression tests for what the fuzz targets (`fuzz/`, docs/fuzzing.md)
//! found, one test per finding, each with the input that exposed it reduced
//! to the public API.

use core::net::Ipv4Addr;
use lcmp_decide::*;

const GBPS: u64 = 1_000_000_000;

/// One group (8) over ports 0..n, 100 Gbps, 5 GB buffers, 10 ms apart.
fn tables(n: u8) -> Tables {
    let mut t = Tables::paper_defaults();
    let mut g = Group {
        id: GroupId(8),
        candidates: heapless::Vec::new(),
    };
    for p in 0..n {
        t.ports
            .push(PortConfig {
                id: PortId(p),
                rate_bps: 100 * GBPS,
                buffer_bytes: 5_000_000_000,
            })
            .expect("capacity");
        g.candidates
            .push(Candidate {
                port: PortId(p),
                delay_units: 10 * u32::from(p),
                capacity_bps: 100 * GBPS,
            })
            .expect("capacity");
    }
    t.groups.push(g).expect("capacity");
    t
}

/// `differential`, crash-531d6b9f: the fingerprint XORed the protocol into
/// its seed and then XORed the first key word in, so the protocol cancelled
/// against the low byte of the source address. Two flows whose
/// `src_low_byte ^ proto` agreed shared one flow-cache entry: the second
/// flow was reported as pinned and hit the first one's port.
#[test]
fn fingerprint_protocol_does_not_cancel_source_byte() {
    // The fuzzer's pair (IPv6, protocols 255 and 113).
    let dst = 336_294_682_933_583_715_852_837_625_779_726_581_761u128;
    let a = FlowKey {
        addrs: Addresses::V6 {
            src: 336_294_682_933_583_715_844_663_186_252_830_437_745,
            dst,
        },
        sport: 29041,
        dport: 29041,
        proto: 255,
    };
    let b = FlowKey {
        addrs: Addresses::V6 {
            src: 336_294_682_933_583_715_844_663_186_252_830_437_887,
            dst,
        },
        proto: 113,
        ..a
    };
    assert_ne!(
        a.fingerprint(&FlowCacheKey::ZERO),
        b.fingerprint(&FlowCacheKey::ZERO)
    );

    // The same shape over IPv4: 10.0.0.1/TCP and 10.0.0.22/UDP (1 ^ 6 ==
    // 22 ^ 17), same destination and ports.
    let d = Ipv4Addr::new(10, 8, 0, 1);
    let tcp = FlowKey::v4(Ipv4Addr::new(10, 0, 0, 1), d, 4000, 4791, 6);
    let udp = FlowKey::v4(Ipv4Addr::new(10, 0, 0, 22), d, 4000, 4791, 17);
    assert_ne!(
        tcp.fingerprint(&FlowCacheKey::ZERO),
        udp.fingerprint(&FlowCacheKey::ZERO)
    );

    // And at the decider: the second flow is new, not a hit on the first's pin.
    let mut dec: Decider<8, 16> = Decider::new(DeciderConfig::default());
    dec.install(&tables(6)).expect("valid tables");
    let now = Instant::from_ticks(7);
    assert!(matches!(
        dec.on_packet(now, &tcp, GroupId(8)),
        Decision::New { .. }
    ));
    assert_eq!(dec.explain(now, &udp, GroupId(8)).pinned, None);
    assert!(matches!(
        dec.on_packet(now, &udp, GroupId(8)),
        Decision::New { .. }
    ));
    assert_eq!(dec.counters().new_flows, 2);
    assert_eq!(dec.flow_cache().len(), 2);
}

/// Every pair of protocols against every source low byte: no two distinct
/// keys that differ only there share a fingerprint.
#[test]
fn fingerprint_separates_source_byte_and_protocol() {
    let mut seen = std::collections::HashMap::new();
    for src in 0..=255u32 {
        for proto in [0u8, 1, 6, 17, 47, 58, 132, 255] {
            let k = FlowKey {
                addrs: Addresses::V4 {
                    src: 0x0A00_0000 | src,
                    dst: 0x0A08_0001,
                },
                sport: 1000,
                dport: 4791,
                proto,
            };
            if let Some(other) = seen.insert(k.fingerprint(&FlowCacheKey::ZERO), k) {
                panic!("{k:?} and {other:?} share a fingerprint");
            }
        }
    }
}
