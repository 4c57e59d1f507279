//! The C ABI reproduces `lcmp_tables::replay` (the `lcmp replay` digest)
//! on the committed firmware traces, and `lcmp_install` reports each blob
//! fault with its own code. Driven through the `extern "C"` functions, as a
//! C caller would.
#![allow(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block
)]

use core::ptr;

use ::lcmp_tables::blob::encode_blob_vec;
use ::lcmp_tables::replay::{parse_csv, replay, ReplayDecider, TraceEvent};
use ::lcmp_tables::{build_tables, BuildOptions, Topology};
use lcmp_decide::{Addresses, DeciderConfig};
use lcmp_ffi::*;

mod common;
use common::{testbed8_blob, CallerDecider};

fn scenario(csv: &str) -> (Topology, u16) {
    let first = csv.lines().next().unwrap();
    let field = |k: &str| {
        first
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))
            .unwrap()
    };
    let topo = Topology::embedded(field("topology")).unwrap();
    let switch = topo.dc_id(field("switch")).unwrap();
    (topo, switch)
}

fn c_flow(key: &lcmp_decide::FlowKey) -> lcmp_flow {
    let mut f = lcmp_flow {
        sport: key.sport,
        dport: key.dport,
        proto: key.proto,
        ..lcmp_flow::default()
    };
    match key.addrs {
        Addresses::V4 { src, dst } => {
            f.family = LCMP_FAMILY_V4;
            f.src[..4].copy_from_slice(&src.to_be_bytes());
            f.dst[..4].copy_from_slice(&dst.to_be_bytes());
        }
        Addresses::V6 { src, dst } => {
            f.family = LCMP_FAMILY_V6;
            f.src = src.to_be_bytes();
            f.dst = dst.to_be_bytes();
        }
    }
    f
}

fn check_trace(csv: &str) {
    let (topo, switch) = scenario(csv);
    let tables = build_tables(&topo, switch, &BuildOptions::default()).unwrap();
    let blob = encode_blob_vec(&tables, 1).unwrap();
    let events = parse_csv(csv, Some(&topo)).unwrap();

    let mut reference = Box::new(ReplayDecider::new(DeciderConfig::default()));
    reference.install(&tables).unwrap();
    let want = replay(&mut reference, events.iter().copied().map(Ok), |_| {}).unwrap();

    let caller = CallerDecider::new();
    let d = caller.handle;
    let mut digest = lcmp_digest::default();
    unsafe {
        assert_eq!(lcmp_install(d, blob.as_ptr(), blob.len()), LCMP_OK);
        assert_eq!(lcmp_digest_init(&mut digest), LCMP_OK);
        for (index, e) in events.iter().enumerate() {
            let now = e.now(&tables.params).ticks();
            match *e {
                TraceEvent::Packet { t_us, flow, dst_dc } => {
                    let f = c_flow(&flow);
                    let mut out = lcmp_decision::default();
                    assert_eq!(lcmp_on_packet(d, now, &f, dst_dc, &mut out), LCMP_OK);
                    assert_eq!(
                        lcmp_digest_update(&mut digest, index as u32, t_us, &f, dst_dc, &out),
                        LCMP_OK
                    );
                }
                TraceEvent::Sample {
                    port, queue_bytes, ..
                } => assert_eq!(lcmp_sample(d, now, port.0, queue_bytes), LCMP_OK),
                TraceEvent::Link { port, up, .. } => {
                    assert_eq!(lcmp_set_port(d, port.0, u8::from(up)), LCMP_OK)
                }
            }
        }
        let (mut value, mut n) = (0u64, 0u64);
        assert_eq!(lcmp_digest_value(&mut digest, &mut value, &mut n), LCMP_OK);
        assert_eq!((value, n), (want.digest, want.decisions));
        let mut c = lcmp_counters::default();
        assert_eq!(lcmp_get_counters(d, &mut c), LCMP_OK);
        let r = reference.counters();
        assert_eq!(
            (
                c.packets,
                c.hits,
                c.new_flows,
                c.failovers,
                c.unpinned,
                c.no_route,
                c.samples
            ),
            (
                r.packets,
                r.hits,
                r.new_flows,
                r.failovers,
                r.unpinned,
                r.no_route,
                r.samples
            )
        );
    }
}

#[test]
fn steady_trace_digest_matches_replay() {
    check_trace(include_str!("../../firmware/traces/steady.csv"));
}

#[test]
fn failures_trace_digest_matches_replay() {
    check_trace(include_str!("../../firmware/traces/failures.csv"));
}

#[test]
fn blob_faults_have_their_own_codes() {
    let blob = testbed8_blob(1, 3);
    let caller = CallerDecider::new();
    let d = caller.handle;
    unsafe {
        let install = |bytes: &[u8]| lcmp_install(d, bytes.as_ptr(), bytes.len());
        assert_eq!(install(&blob[..10]), LCMP_ERR_BLOB_TRUNCATED);
        assert_eq!(install(&blob[..blob.len() - 1]), LCMP_ERR_BLOB_TRUNCATED);
        let mut bad = blob.clone();
        bad[0] = b'X';
        assert_eq!(install(&bad), LCMP_ERR_BLOB_BAD_MAGIC);
        let mut bad = blob.clone();
        bad[4] = 9;
        assert_eq!(install(&bad), LCMP_ERR_BLOB_VERSION);
        let mut bad = blob.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x40;
        assert_eq!(install(&bad), LCMP_ERR_BLOB_CRC);
        assert_eq!(lcmp_install(d, ptr::null(), 5), LCMP_ERR_NULL);
        assert_eq!(lcmp_install(d, ptr::null(), 0), LCMP_ERR_BLOB_TRUNCATED);
        // Nothing was installed by the failures: still no route.
        let f = lcmp_flow_v4(0x0A01_0001, 0x0A08_0001, 1, 4791, 17);
        let mut out = lcmp_decision::default();
        assert_eq!(lcmp_on_packet(d, 1, &f, 8, &mut out), LCMP_OK);
        assert_eq!(out.kind, LCMP_DECISION_NO_ROUTE);
        assert_eq!(install(&blob), LCMP_OK);
        assert_eq!(lcmp_on_packet(d, 2, &f, 8, &mut out), LCMP_OK);
        assert_eq!(out.kind, LCMP_DECISION_NEW);
        for code in [
            LCMP_ERR_BLOB_TRUNCATED,
            LCMP_ERR_BLOB_BAD_MAGIC,
            LCMP_ERR_BLOB_VERSION,
            LCMP_ERR_BLOB_CRC,
        ] {
            assert_ne!(strerror(code), c"unknown error code");
        }
    }
}

#[test]
fn digest_rejects_what_on_packet_never_writes() {
    let mut digest = lcmp_digest::default();
    let f = lcmp_flow_v4(0x0A01_0001, 0x0A08_0001, 1, 4791, 17);
    let ok = lcmp_decision {
        kind: LCMP_DECISION_NEW,
        port: 3,
        reason: LCMP_REASON_HASH_IN_KEPT,
    };
    unsafe {
        // Not initialised yet.
        assert_eq!(
            lcmp_digest_update(&mut digest, 0, 0, &f, 8, &ok),
            LCMP_ERR_NOT_INITIALIZED
        );
        assert_eq!(lcmp_digest_init(&mut digest), LCMP_OK);
        for bad in [
            lcmp_decision {
                kind: LCMP_DECISION_HIT,
                ..ok
            },
            lcmp_decision { reason: 77, ..ok },
            lcmp_decision { port: 64, ..ok },
            lcmp_decision { kind: 9, ..ok },
            lcmp_decision {
                kind: LCMP_DECISION_NO_ROUTE,
                ..ok
            },
        ] {
            assert_eq!(
                lcmp_digest_update(&mut digest, 0, 0, &f, 8, &bad),
                LCMP_ERR_INVALID_ARGUMENT
            );
        }
        assert_eq!(lcmp_digest_update(&mut digest, 0, 0, &f, 8, &ok), LCMP_OK);
        let mut n = 0;
        assert_eq!(
            lcmp_digest_value(&mut digest, ptr::null_mut(), &mut n),
            LCMP_OK
        );
        assert_eq!(n, 1);
    }
}
