//! The C ABI called as a C caller would, with valid and invalid pointers on
//! purpose; each `unsafe` block is a sequence of such calls.
#![allow(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block
)]

use core::ffi::{c_void, CStr};
use core::ptr;

use lcmp_decide::{
    Candidate, Decision, Error, FlowKey, Group, GroupId, PortConfig, PortId, Reason, Tables,
};

use crate::boundary::Inner;
use crate::*;
use lcmp_decide::tables::CompiledTables;

/// Installs `t` into `d` through the C ABI (a blob of generation 1).
fn install_tables(d: *mut lcmp_decider, t: &Tables) -> Result<(), i32> {
    let blob = ::lcmp_tables::blob::encode_blob_vec(t, 1).unwrap();
    match unsafe { lcmp_install(d, blob.as_ptr(), blob.len()) } {
        LCMP_OK => Ok(()),
        code => Err(code),
    }
}

/// A 64-byte-aligned line of caller memory.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Memory for a decider with `flows` slots, filled with garbage (init
/// must not depend on its contents).
fn storage(flows: usize) -> Vec<Line> {
    vec![Line([0xA5; 64]); lcmp_decider_size(flows).div_ceil(64)]
}

fn tables() -> Tables {
    let mut t = Tables::paper_defaults();
    for (id, gbps) in [(0u8, 200u64), (1, 25), (2, 100)] {
        t.ports
            .push(PortConfig {
                id: PortId(id),
                rate_bps: gbps * 1_000_000_000,
                buffer_bytes: 5_000_000_000,
            })
            .unwrap();
    }
    let mut g = Group {
        id: GroupId(8),
        candidates: heapless::Vec::new(),
    };
    for (port, delay, gbps) in [(0u8, 25u32, 200u64), (1, 5, 25), (2, 10, 100)] {
        g.candidates
            .push(Candidate {
                port: PortId(port),
                delay_units: delay,
                capacity_bps: gbps * 1_000_000_000,
            })
            .unwrap();
    }
    t.groups.push(g).unwrap();
    t
}

fn init_with(mem: &mut [Line], flows: usize, config: *const lcmp_config) -> *mut lcmp_decider {
    let mut d = ptr::null_mut();
    let rc = unsafe {
        lcmp_decider_init(
            mem.as_mut_ptr().cast(),
            mem.len() * 64,
            flows,
            config,
            &mut d,
        )
    };
    assert_eq!(rc, LCMP_OK, "{:?}", strerror(rc));
    assert!(!d.is_null());
    d
}

fn init(mem: &mut [Line]) -> *mut lcmp_decider {
    init_with(mem, LCMP_FLOWS, ptr::null())
}

fn inner<'a>(d: *mut lcmp_decider) -> &'a mut Inner {
    unsafe { &mut boundary::handle_mut(d).unwrap().inner }
}

fn flow(i: u32) -> lcmp_flow {
    lcmp_flow_v4(0x0A00_0000 + i, 0x0A07_0001, 1000, 4791, 17)
}

#[test]
fn size_align_and_header_bounds() {
    for flows in [16usize, 1024, 1 << 16, 1 << 20] {
        let size = lcmp_decider_size(flows);
        assert!(size <= LCMP_DECIDER_HEADER_MAX + LCMP_SLOT_BYTES * flows);
        assert_eq!(size - lcmp_decider_size(16), LCMP_SLOT_BYTES * (flows - 16));
        assert_eq!(size % 64, 0);
    }
    for bad in [0usize, 8, 1000, 1025, usize::MAX, 1 << (usize::BITS - 1)] {
        assert_eq!(lcmp_decider_size(bad), 0, "{bad} slots");
    }
    assert_eq!(lcmp_decider_align(), LCMP_DECIDER_ALIGN);
    assert_eq!(lcmp_abi_version(), LCMP_ABI_VERSION);
}

#[test]
fn init_rejects_bad_memory_flows_and_config() {
    let mut mem = storage(LCMP_FLOWS);
    mem.push(Line([0; 64]));
    let mut d = ptr::null_mut();
    let len = mem.len() * 64;
    let p = mem.as_mut_ptr().cast::<c_void>();
    let need = lcmp_decider_size(LCMP_FLOWS);
    let config = |scheme, hash, overflow| lcmp_config {
        scheme,
        hash,
        overflow,
        ..lcmp_config::default()
    };
    unsafe {
        assert_eq!(
            lcmp_decider_init(ptr::null_mut(), len, LCMP_FLOWS, ptr::null(), &mut d),
            LCMP_ERR_NULL
        );
        assert_eq!(
            lcmp_decider_init(p, need - 1, LCMP_FLOWS, ptr::null(), &mut d),
            LCMP_ERR_BUFFER_TOO_SMALL
        );
        for flows in [0usize, 8, 1000] {
            assert_eq!(
                lcmp_decider_init(p, len, flows, ptr::null(), &mut d),
                LCMP_ERR_FLOWS
            );
        }
        let odd = mem.as_mut_ptr().cast::<u8>().add(8).cast::<c_void>();
        assert_eq!(
            lcmp_decider_init(odd, len - 8, LCMP_FLOWS, ptr::null(), &mut d),
            LCMP_ERR_MISALIGNED
        );
        assert_eq!(
            lcmp_decider_init(p, len, LCMP_FLOWS, ptr::null(), ptr::null_mut()),
            LCMP_ERR_NULL
        );
        for bad in [config(9, 0, 0), config(0, 7, 0), config(0, 0, 2)] {
            assert_eq!(
                lcmp_decider_init(p, len, LCMP_FLOWS, &bad, &mut d),
                LCMP_ERR_INVALID_ARGUMENT
            );
        }
    }
    assert!(d.is_null(), "no handle on error");
}

#[test]
fn uninitialised_and_null_handles_are_rejected() {
    let mut mem = storage(LCMP_FLOWS);
    let d = mem.as_mut_ptr().cast::<lcmp_decider>();
    let f = flow(1);
    let mut out = lcmp_decision::default();
    let mut counters = lcmp_counters::default();
    unsafe {
        assert_eq!(lcmp_sample(d, 1, 0, 0), LCMP_ERR_NOT_INITIALIZED);
        assert_eq!(
            lcmp_on_packet(d, 1, &f, 8, &mut out),
            LCMP_ERR_NOT_INITIALIZED
        );
        assert_eq!(
            lcmp_get_counters(d, &mut counters),
            LCMP_ERR_NOT_INITIALIZED
        );
        assert_eq!(lcmp_gc(d, 1, 10), LCMP_ERR_NOT_INITIALIZED);
        assert_eq!(lcmp_set_port(ptr::null_mut(), 0, 1), LCMP_ERR_NULL);
        assert_eq!(lcmp_install(ptr::null_mut(), ptr::null(), 0), LCMP_ERR_NULL);
        assert_eq!(
            lcmp_flow_cache_usage(ptr::null(), ptr::null_mut(), ptr::null_mut()),
            LCMP_ERR_NULL
        );
        let odd = mem.as_mut_ptr().cast::<u8>().add(4).cast::<lcmp_decider>();
        assert_eq!(lcmp_set_port(odd, 0, 1), LCMP_ERR_MISALIGNED);
    }
}

#[test]
fn packets_samples_failover_explain_counters() {
    let mut mem = storage(LCMP_FLOWS);
    let d = init(&mut mem);
    let f = flow(1);
    let mut out = lcmp_decision::default();
    unsafe {
        // No tables yet: no route.
        assert_eq!(lcmp_on_packet(d, 1, &f, 8, &mut out), LCMP_OK);
        assert_eq!(out.kind, LCMP_DECISION_NO_ROUTE);
        assert_eq!(out.port, LCMP_NO_PORT);
        assert_eq!(out.reason, LCMP_REASON_UNKNOWN_GROUP);

        install_tables(d, &tables()).unwrap();
        assert_eq!(lcmp_sample(d, 10, 2, 1_000_000), LCMP_OK);
        assert_eq!(lcmp_sample(d, 10, 64, 0), LCMP_ERR_PORT_OUT_OF_RANGE);

        assert_eq!(lcmp_on_packet(d, 20, &f, 8, &mut out), LCMP_OK);
        assert_eq!(out.kind, LCMP_DECISION_NEW);
        let first = out.port;
        assert!(first < 3);
        assert_eq!(lcmp_on_packet(d, 30, &f, 8, &mut out), LCMP_OK);
        assert_eq!(
            (out.kind, out.port, out.reason),
            (LCMP_DECISION_HIT, first, LCMP_REASON_PINNED)
        );

        let mut e = lcmp_explanation::default();
        assert_eq!(lcmp_explain(d, 30, &f, 8, &mut e), LCMP_OK);
        assert_eq!(
            (e.chosen, e.pinned, e.reason),
            (first, first, LCMP_REASON_PINNED)
        );
        assert_eq!(e.n_candidates, 3);
        assert_eq!(e.group, 8);

        // Fast failover.
        assert_eq!(lcmp_set_port(d, first, 0), LCMP_OK);
        assert_eq!(lcmp_on_packet(d, 40, &f, 8, &mut out), LCMP_OK);
        assert_eq!(out.kind, LCMP_DECISION_FAILOVER);
        assert_ne!(out.port, first);
        assert_eq!(lcmp_explain(d, 40, &f, 8, &mut e), LCMP_OK);
        let down = e.candidates.iter().find(|c| c.port == first).unwrap();
        assert!(!down.up);
        assert_eq!(down.cut_reason, LCMP_CUT_DOWN);
        assert_eq!(down.rank, LCMP_NO_PORT);

        // Unknown family, unknown group.
        let mut bad = f;
        bad.family = 5;
        assert_eq!(
            lcmp_on_packet(d, 41, &bad, 8, &mut out),
            LCMP_ERR_INVALID_ARGUMENT
        );
        assert_eq!(lcmp_on_packet(d, 41, &flow(2), 9, &mut out), LCMP_OK);
        assert_eq!(out.kind, LCMP_DECISION_NO_ROUTE);
        assert_eq!(out.reason, LCMP_REASON_UNKNOWN_GROUP);
        assert_eq!(lcmp_on_packet(d, 41, &f, 8, ptr::null_mut()), LCMP_ERR_NULL);

        let mut c = lcmp_counters::default();
        assert_eq!(lcmp_get_counters(d, &mut c), LCMP_OK);
        assert_eq!(
            (
                c.packets,
                c.hits,
                c.new_flows,
                c.failovers,
                c.no_route,
                c.samples
            ),
            (5, 1, 1, 1, 2, 1)
        );
        assert_eq!(
            c.hits + c.new_flows + c.failovers + c.withdrawals + c.unpinned + c.no_route,
            c.packets
        );
        let (mut slots, mut used) = (0usize, 0usize);
        assert_eq!(lcmp_flow_cache_usage(d, &mut slots, &mut used), LCMP_OK);
        assert_eq!((slots, used), (LCMP_FLOWS, 1));

        // Idle for longer than the 2 s timeout: collected.
        assert_eq!(lcmp_gc(d, 40 + 3_000_000, LCMP_FLOWS as u32), 1);
        assert_eq!(lcmp_set_scheme(d, LCMP_SCHEME_ECMP), LCMP_OK);
        assert_eq!(lcmp_set_scheme(d, 3), LCMP_ERR_INVALID_ARGUMENT);
        assert_eq!(lcmp_set_tables_current(d, 0), LCMP_OK);
        // C flags are 0 or 1 (a `bool` of 2 would be undefined behaviour).
        assert_eq!(lcmp_set_tables_current(d, 2), LCMP_ERR_INVALID_ARGUMENT);
        assert_eq!(lcmp_set_port(d, 0, 2), LCMP_ERR_INVALID_ARGUMENT);
    }
}

#[test]
fn caller_sized_caches_of_1k_64k_and_1m_slots() {
    for flows in [1024usize, 1 << 16, 1 << 20] {
        let mut mem = storage(flows);
        let d = init_with(&mut mem, flows, ptr::null());
        install_tables(d, &tables()).unwrap();
        // Fill 60 % of the slots, then every flow hits its port. Two flows
        // of a group share an entry when their 40-bit keyed fingerprints
        // collide (docs/design.md: n^2 / 2^41 pairs expected, 0.18 at
        // 629 146 flows): the second one's first packet hits the first's pin.
        let n = (flows * 6 / 10) as u32;
        let mut ports = Vec::with_capacity(n as usize);
        let mut out = lcmp_decision::default();
        let mut shared = 0usize;
        unsafe {
            for i in 0..n {
                assert_eq!(lcmp_on_packet(d, 1, &flow(i), 8, &mut out), LCMP_OK);
                if out.kind == LCMP_DECISION_HIT {
                    shared += 1;
                } else {
                    assert_eq!(out.kind, LCMP_DECISION_NEW, "{flows} slots, flow {i}");
                }
                ports.push(out.port);
            }
            assert!(shared <= 2, "{flows} slots: {shared} shared entries");
            for (i, p) in ports.iter().enumerate() {
                assert_eq!(lcmp_on_packet(d, 2, &flow(i as u32), 8, &mut out), LCMP_OK);
                assert_eq!((out.kind, out.port), (LCMP_DECISION_HIT, *p));
            }
            let (mut slots, mut used) = (0usize, 0usize);
            assert_eq!(lcmp_flow_cache_usage(d, &mut slots, &mut used), LCMP_OK);
            assert_eq!((slots, used), (flows, n as usize - shared));
        }
    }
}

#[test]
fn a_burst_decides_as_packets_one_by_one() {
    let config = |overflow| lcmp_config {
        overflow,
        ..lcmp_config::default()
    };
    for overflow in [LCMP_OVERFLOW_REFUSE, LCMP_OVERFLOW_STATELESS] {
        let cfg = config(overflow);
        let (mut m1, mut m2) = (storage(16), storage(16));
        let (a, b) = (init_with(&mut m1, 16, &cfg), init_with(&mut m2, 16, &cfg));
        install_tables(a, &tables()).unwrap();
        install_tables(b, &tables()).unwrap();
        // 100 packets over 40 flows (repeats in a burst, more flows than
        // 16 slots), a port down half way.
        let packets: Vec<lcmp_packet> = (0..100u32)
            .map(|i| lcmp_packet {
                flow: flow((i * 7) % 40),
                group: if i % 9 == 0 { 9 } else { 8 },
            })
            .collect();
        let mut burst = vec![lcmp_decision::default(); 100];
        let mut single = lcmp_decision::default();
        unsafe {
            for (round, chunk) in packets.chunks(50).enumerate() {
                let now = 10 + round as u32;
                let start = round * 50;
                let n = lcmp_on_packets(
                    a,
                    now,
                    chunk.as_ptr(),
                    chunk.len(),
                    burst[start..].as_mut_ptr(),
                );
                assert_eq!(n, 50);
                for (p, want) in chunk.iter().zip(&burst[start..start + 50]) {
                    assert_eq!(
                        lcmp_on_packet(b, now, &p.flow, p.group, &mut single),
                        LCMP_OK
                    );
                    assert_eq!(single, *want);
                }
                assert_eq!(lcmp_set_port(a, 1, 0), LCMP_OK);
                assert_eq!(lcmp_set_port(b, 1, 0), LCMP_OK);
            }
            let (mut ca, mut cb) = (lcmp_counters::default(), lcmp_counters::default());
            assert_eq!(lcmp_get_counters(a, &mut ca), LCMP_OK);
            assert_eq!(lcmp_get_counters(b, &mut cb), LCMP_OK);
            assert_eq!(ca, cb);
            assert!(ca.cache_full > 0, "the 16-slot cache overflowed");
            assert_eq!(ca.unpinned > 0, overflow == LCMP_OVERFLOW_STATELESS);
            // A bad family anywhere rejects the whole burst; nothing moves.
            let mut bad = packets[..3].to_vec();
            bad[2].flow.family = 0;
            assert_eq!(
                lcmp_on_packets(a, 20, bad.as_ptr(), 3, burst.as_mut_ptr()),
                LCMP_ERR_INVALID_ARGUMENT
            );
            let mut after = lcmp_counters::default();
            assert_eq!(lcmp_get_counters(a, &mut after), LCMP_OK);
            assert_eq!(after, ca);
            // Empty bursts may pass null pointers; a non-empty one may not.
            assert_eq!(lcmp_on_packets(a, 20, ptr::null(), 0, ptr::null_mut()), 0);
            assert_eq!(
                lcmp_on_packets(a, 20, packets.as_ptr(), 1, ptr::null_mut()),
                LCMP_ERR_NULL
            );
        }
    }
}

#[test]
fn decisions_round_trip_through_c() {
    let decisions = [
        Decision::Hit(PortId(3)),
        Decision::New {
            port: PortId(4),
            reason: Reason::HashInKept,
            failover: false,
        },
        Decision::New {
            port: PortId(5),
            reason: Reason::MinCostFallback,
            failover: true,
        },
        Decision::Unpinned(PortId(6)),
        Decision::NoRoute(Reason::CacheFull),
        Decision::NoRoute(Reason::UnknownGroup),
    ];
    let mut kinds = Vec::new();
    for d in decisions {
        let c = decision_to_c(d);
        assert_eq!(decision_from_c(&c), Ok(d));
        kinds.push(c.kind);
    }
    assert_eq!(kinds, [0, 1, 2, 3, 4, 4]);
    // Combinations the library never writes are refused.
    for bad in [
        lcmp_decision {
            kind: LCMP_DECISION_HIT,
            port: 1,
            reason: LCMP_REASON_ECMP,
        },
        lcmp_decision {
            kind: LCMP_DECISION_NO_ROUTE,
            port: 1,
            reason: LCMP_REASON_UNKNOWN_GROUP,
        },
        lcmp_decision {
            kind: 5,
            port: 1,
            reason: 1,
        },
        lcmp_decision {
            kind: LCMP_DECISION_NEW,
            port: 70,
            reason: 1,
        },
        lcmp_decision {
            kind: LCMP_DECISION_NEW,
            port: 1,
            reason: 10,
        },
    ] {
        assert_eq!(
            decision_from_c(&bad),
            Err(LCMP_ERR_INVALID_ARGUMENT),
            "{bad:?}"
        );
    }
}

/// A blob around any payload, with a correct header and CRC.
fn wrap(payload: &[u8]) -> Vec<u8> {
    use ::lcmp_tables::blob::{BLOB_MAGIC, BLOB_VERSION};
    let mut b = Vec::new();
    b.extend_from_slice(&BLOB_MAGIC);
    b.extend_from_slice(&BLOB_VERSION.to_le_bytes());
    b.extend_from_slice(&[0, 0]);
    b.extend_from_slice(&2u64.to_le_bytes());
    b.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_le_bytes());
    let crc32c = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
    let mut crc = crc32c.digest();
    crc.update(&b);
    crc.update(payload);
    b.extend_from_slice(&crc.finalize().to_le_bytes());
    b.extend_from_slice(payload);
    b
}

/// Everything the C side can observe of a decider, plus its whole state
/// (`Debug`: compiled tables, ports, flow cache, counters).
fn observe(d: *mut lcmp_decider) -> (lcmp_counters, Vec<lcmp_explanation>, String) {
    let mut c = lcmp_counters::default();
    let mut all = Vec::new();
    unsafe {
        assert_eq!(lcmp_get_counters(d, &mut c), LCMP_OK);
        for i in 0..40 {
            let mut e = lcmp_explanation::default();
            assert_eq!(lcmp_explain(d, 100, &flow(i), 8, &mut e), LCMP_OK);
            all.push(e);
        }
    }
    (c, all, format!("{:?}", inner(d)))
}

#[test]
fn a_rejected_blob_changes_nothing() {
    let mut mem = storage(LCMP_FLOWS);
    let d = init(&mut mem);
    let good = ::lcmp_tables::blob::encode_blob_vec(&tables(), 1).unwrap();
    let mut other = tables();
    other.groups[0].candidates.truncate(2);
    other.groups[0].id = GroupId(9);
    let other = postcard::to_allocvec(&other).unwrap();
    let mut unknown_port = tables();
    unknown_port.groups[0].candidates[2].port = PortId(9);
    let mut zero = tables();
    zero.groups[0].candidates[2].capacity_bps = 0;
    let bad = [
        (good[..good.len() - 1].to_vec(), LCMP_ERR_BLOB_TRUNCATED),
        (
            {
                let mut b = good.clone();
                *b.last_mut().unwrap() ^= 1;
                b
            },
            LCMP_ERR_BLOB_CRC,
        ),
        // The payload of other tables, cut in its only group: the scratch
        // is half overwritten when the decoder stops.
        (wrap(&other[..other.len() - 3]), LCMP_ERR_BAD_BLOB),
        (
            wrap(&postcard::to_allocvec(&unknown_port).unwrap()),
            LCMP_ERR_UNKNOWN_PORT,
        ),
        (
            wrap(&postcard::to_allocvec(&zero).unwrap()),
            LCMP_ERR_ZERO_CAPACITY,
        ),
    ];
    unsafe {
        assert_eq!(lcmp_install(d, good.as_ptr(), good.len()), LCMP_OK);
        let mut out = lcmp_decision::default();
        for i in 0..30 {
            assert_eq!(lcmp_on_packet(d, i, &flow(i), 8, &mut out), LCMP_OK);
        }
        assert_eq!(lcmp_sample(d, 50, 2, 3_000_000_000), LCMP_OK);
        assert_eq!(lcmp_set_port(d, 1, 0), LCMP_OK);
        let before = observe(d);
        assert!(before.1.iter().any(|e| e.pinned != LCMP_NO_PORT));
        for (blob, code) in &bad {
            assert_eq!(lcmp_install(d, blob.as_ptr(), blob.len()), *code);
            assert_eq!(observe(d), before, "code {code}");
        }
        // A valid blob after the failures: hitless, pins kept.
        assert_eq!(lcmp_install(d, good.as_ptr(), good.len()), LCMP_OK);
        let after = observe(d);
        assert_eq!((after.0, &after.1), (before.0, &before.1));
    }
}

#[test]
fn every_code_has_a_message_and_every_reason_a_name() {
    // The one table of codes is lcmp.h's: every `LCMP_OK`/`LCMP_ERR_*`
    // define, and nothing else, with a message of its own.
    let header = include_str!("../include/lcmp.h");
    let mut defined: Vec<i32> = header
        .lines()
        .filter_map(|l| l.strip_prefix("#define LCMP_"))
        .filter(|l| l.starts_with("OK ") || l.starts_with("ERR_"))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    let mut table: Vec<i32> = STATUS.iter().map(|(code, _)| *code).collect();
    defined.sort_unstable();
    table.sort_unstable();
    assert_eq!(table, defined);
    let mut messages: Vec<&CStr> = STATUS.iter().map(|(_, m)| *m).collect();
    messages.sort_unstable();
    messages.dedup();
    assert_eq!(messages.len(), STATUS.len(), "two codes share a message");
    for (code, message) in STATUS {
        assert_eq!(strerror(code), message, "code {code}");
        assert_ne!(strerror(code), UNKNOWN_CODE, "code {code}");
        assert!(!lcmp_strerror(code).is_null());
    }
    for unknown in [42, 1, -10_000, i32::MIN] {
        assert_eq!(strerror(unknown), UNKNOWN_CODE);
    }
    // Messages that name where the caller went wrong (issue 34 item 7):
    // -3 for every size call, -5 for the key count, bad magic for a
    // signed blob given to the unsigned call.
    let says = |code, what: &str| {
        let m = strerror(code).to_str().unwrap_or_default();
        assert!(m.contains(what), "code {code}: {m:?} lacks {what:?}");
    };
    says(LCMP_ERR_BUFFER_TOO_SMALL, "lcmp_tables_size");
    says(LCMP_ERR_BUFFER_TOO_SMALL, "lcmp_decider_shared_size");
    says(LCMP_ERR_INVALID_ARGUMENT, "n_keys");
    says(LCMP_ERR_BLOB_BAD_MAGIC, "lcmp_install_signed");
    for r in Reason::ALL {
        assert_eq!(reason_name(r.code()).to_str(), Ok(r.name()));
    }
    assert_eq!(reason_name(200), c"unknown");
}

#[test]
fn ipv6_and_v4_helper() {
    let f = lcmp_flow_v4(0x0A00_0001, 0x0A07_0001, 1, 2, 17);
    assert_eq!(&f.src[..4], &[10, 0, 0, 1]);
    assert_eq!(
        flow_from_c(&f),
        Ok(FlowKey::v4(
            [10, 0, 0, 1].into(),
            [10, 7, 0, 1].into(),
            1,
            2,
            17
        ))
    );
    let mut g = f;
    g.family = LCMP_FAMILY_V6;
    assert!(matches!(
        flow_from_c(&g).map(|k| k.addrs),
        Ok(lcmp_decide::Addresses::V6 { .. })
    ));
}

#[test]
fn every_table_error_has_a_distinct_code() {
    use lcmp_decide::Setting;
    let errors = [
        Error::ShiftTooLarge(Setting::PathShift),
        Error::WeightOverflow(Setting::PathWeights),
        Error::InvalidSetting(Setting::WaterMarks),
        Error::InvalidLevels,
        Error::InvalidCapacityThresholds,
        Error::PortOutOfRange(70),
        Error::DuplicatePort(1),
        Error::ZeroPortCapacity(1),
        Error::UnknownPort { group: 1, port: 2 },
        Error::DuplicateGroup(1),
        Error::EmptyGroup(1),
        Error::DuplicateCandidate { group: 1, port: 2 },
        Error::ZeroCapacity { group: 1, port: 2 },
        Error::FlowSlots(3),
    ];
    let mut codes: Vec<i32> = errors.iter().map(|e| error_code(*e)).collect();
    assert!(codes.iter().all(|c| strerror(*c) != c"unknown error code"));
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), errors.len());
}

#[test]
fn config_size_and_abi_version_are_checked() {
    let mut mem = storage(LCMP_FLOWS);
    let mut d = ptr::null_mut();
    let len = mem.len() * 64;
    let p = mem.as_mut_ptr().cast::<c_void>();
    let good = lcmp_config::default();
    assert_eq!(good.size as usize, size_of::<lcmp_config>());
    assert_eq!(good.abi_version, LCMP_ABI_VERSION);
    let wrong = [
        lcmp_config { size: 8, ..good },
        lcmp_config { size: 0, ..good },
        lcmp_config {
            abi_version: 3,
            ..good
        },
        lcmp_config {
            size: 0,
            abi_version: 0,
            ..good
        },
    ];
    unsafe {
        for bad in &wrong {
            assert_eq!(
                lcmp_decider_init(p, len, LCMP_FLOWS, bad, &mut d),
                LCMP_ERR_ABI,
                "{bad:?}"
            );
        }
        assert!(d.is_null());
        // A caller of ABI 3 passed an 8-byte struct whose first word is
        // scheme/hash/overflow: only that word is read, and rejected.
        let old: [u32; 2] = [0, 0];
        assert_eq!(
            lcmp_decider_init(p, len, LCMP_FLOWS, old.as_ptr().cast(), &mut d),
            LCMP_ERR_ABI
        );
        assert_eq!(
            lcmp_decider_init(p, len, LCMP_FLOWS, &good, &mut d),
            LCMP_OK
        );
    }
}

#[test]
fn blob_len_finds_a_blob_in_a_larger_buffer() {
    let good = ::lcmp_tables::blob::encode_blob_vec(&tables(), 7).unwrap();
    let mut padded = good.clone();
    padded.extend_from_slice(&[0xA5; 100]);
    let mut n = 0usize;
    unsafe {
        assert_eq!(
            lcmp_blob_len(padded.as_ptr(), padded.len(), &mut n),
            LCMP_OK
        );
        assert_eq!(n, good.len());
        assert_eq!(lcmp_blob_len(good.as_ptr(), good.len(), &mut n), LCMP_OK);
        assert_eq!(n, good.len());
        let cases: [(&[u8], i32); 4] = [
            (&good[..good.len() - 1], LCMP_ERR_BLOB_TRUNCATED),
            (&good[..10], LCMP_ERR_BLOB_TRUNCATED),
            (
                b"LCMX\x02\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
                LCMP_ERR_BLOB_BAD_MAGIC,
            ),
            (
                b"LCMT\x09\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
                LCMP_ERR_BLOB_VERSION,
            ),
        ];
        for (bytes, code) in cases {
            assert_eq!(lcmp_blob_len(bytes.as_ptr(), bytes.len(), &mut n), code);
        }
        let mut huge = good.clone();
        huge[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            lcmp_blob_len(huge.as_ptr(), huge.len(), &mut n),
            LCMP_ERR_BAD_BLOB
        );
        assert_eq!(
            lcmp_blob_len(good.as_ptr(), good.len(), ptr::null_mut()),
            LCMP_ERR_NULL
        );

        // Install: the padded buffer has its own code; the found length
        // installs, and the generation is the blob's.
        let mut mem = storage(LCMP_FLOWS);
        let d = init(&mut mem);
        let mut generation = 99u64;
        assert_eq!(lcmp_generation(d, &mut generation), LCMP_OK);
        assert_eq!(generation, 0);
        assert_eq!(
            lcmp_install(d, padded.as_ptr(), padded.len()),
            LCMP_ERR_BLOB_LENGTH
        );
        assert_eq!(lcmp_generation(d, &mut generation), LCMP_OK);
        assert_eq!(generation, 0, "a rejected blob changes nothing");
        assert_eq!(
            lcmp_blob_len(padded.as_ptr(), padded.len(), &mut n),
            LCMP_OK
        );
        assert_eq!(lcmp_install(d, padded.as_ptr(), n), LCMP_OK);
        assert_eq!(lcmp_generation(d, &mut generation), LCMP_OK);
        assert_eq!(generation, 7);
        assert_eq!(lcmp_generation(d, ptr::null_mut()), LCMP_ERR_NULL);
        assert_eq!(lcmp_generation(ptr::null(), &mut generation), LCMP_ERR_NULL);
    }
}

#[test]
fn samples_and_links_on_ports_without_tables_are_errors() {
    let mut mem = storage(LCMP_FLOWS);
    let d = init(&mut mem);
    let mut c = lcmp_counters::default();
    unsafe {
        // Before any install, no port exists.
        assert_eq!(lcmp_sample(d, 1, 0, 10), LCMP_ERR_NO_SUCH_PORT);
        assert_eq!(lcmp_set_port(d, 0, 0), LCMP_ERR_NO_SUCH_PORT);
        let blob = ::lcmp_tables::blob::encode_blob_vec(&tables(), 1).unwrap();
        assert_eq!(lcmp_install(d, blob.as_ptr(), blob.len()), LCMP_OK);
        // The tables list ports 0..=2.
        assert_eq!(lcmp_sample(d, 2, 2, 10), LCMP_OK);
        assert_eq!(lcmp_set_port(d, 2, 1), LCMP_OK);
        assert_eq!(lcmp_sample(d, 3, 3, 10), LCMP_ERR_NO_SUCH_PORT);
        assert_eq!(lcmp_set_port(d, 5, 0), LCMP_ERR_NO_SUCH_PORT);
        assert_eq!(lcmp_sample(d, 3, 64, 10), LCMP_ERR_PORT_OUT_OF_RANGE);
        assert_eq!(lcmp_set_port(d, 200, 0), LCMP_ERR_PORT_OUT_OF_RANGE);
        assert_eq!(lcmp_get_counters(d, &mut c), LCMP_OK);
        assert_eq!(c.samples, 1, "rejected samples are not recorded");
    }
}

#[test]
fn decision_to_c_is_the_accessors_conversion() {
    use lcmp_decide::Decision;
    let mut all = vec![Decision::Hit(PortId(3)), Decision::Unpinned(PortId(63))];
    for r in Reason::ALL {
        all.push(Decision::NoRoute(r));
        for failover in [false, true] {
            all.push(Decision::New {
                port: PortId(5),
                reason: r,
                failover,
            });
        }
    }
    for d in all {
        assert_eq!(decision_to_c(d), decision_to_c_by_accessors(d), "{d:?}");
    }
}

/// Memory for a tables object.
fn tables_storage() -> Vec<Line> {
    vec![Line([0x5A; 64]); lcmp_tables_size().div_ceil(64)]
}

/// Memory for a decider without tables of its own.
fn shared_storage(flows: usize) -> Vec<Line> {
    vec![Line([0xA5; 64]); lcmp_decider_shared_size(flows).div_ceil(64)]
}

fn init_shared(mem: &mut [Line]) -> *mut lcmp_decider {
    let mut d = ptr::null_mut();
    let rc = unsafe {
        lcmp_decider_init_shared(
            mem.as_mut_ptr().cast(),
            mem.len() * 64,
            LCMP_FLOWS,
            ptr::null(),
            &mut d,
        )
    };
    assert_eq!(rc, LCMP_OK, "{:?}", strerror(rc));
    d
}

fn init_tables(mem: &mut [Line]) -> *mut lcmp_tables {
    let mut t = ptr::null_mut();
    let rc = unsafe { lcmp_tables_init(mem.as_mut_ptr().cast(), mem.len() * 64, &mut t) };
    assert_eq!(rc, LCMP_OK, "{:?}", strerror(rc));
    t
}

fn users(t: *const lcmp_tables) -> u32 {
    let mut n = 99;
    assert_eq!(unsafe { lcmp_tables_users(t, &mut n) }, LCMP_OK);
    n
}

#[test]
fn shared_sizes() {
    for flows in [16usize, 1024, 1 << 20] {
        assert_eq!(
            lcmp_decider_size(flows) - lcmp_decider_shared_size(flows),
            lcmp_tables_size(),
            "an owning decider carries one tables object"
        );
    }
    assert_eq!(lcmp_decider_shared_size(1000), 0);
    assert_eq!(lcmp_tables_align(), LCMP_DECIDER_ALIGN);
    // The shared handle holds no compiled tables (20 648 B).
    assert!(
        lcmp_decider_shared_size(16) < 8192,
        "{}",
        lcmp_decider_shared_size(16)
    );
    assert!(lcmp_tables_size() > size_of::<CompiledTables>());
}

/// Two shared deciders over one tables object decide exactly as two
/// owning deciders with the same blob, and the object's user count, state
/// and generation follow every attach, release and install.
#[test]
fn shared_tables_decide_as_owned_and_hand_over_safely() {
    let blob1 = ::lcmp_tables::blob::encode_blob_vec(&tables(), 3).unwrap();
    let mut t2 = tables();
    t2.groups[0].candidates.truncate(2); // withdraws port 2
    let blob2 = ::lcmp_tables::blob::encode_blob_vec(&t2, 4).unwrap();
    let (mut m1, mut m2) = (tables_storage(), tables_storage());
    let (gen1, gen2) = (init_tables(&mut m1), init_tables(&mut m2));
    let mut mem: Vec<Vec<Line>> = (0..4)
        .map(|i| {
            if i < 2 {
                storage(LCMP_FLOWS)
            } else {
                shared_storage(LCMP_FLOWS)
            }
        })
        .collect();
    let (owned_a, owned_b) = {
        let (a, b) = mem.split_at_mut(1);
        (init(&mut a[0]), init(&mut b[0]))
    };
    let (shared_a, shared_b) = {
        let (a, b) = mem.split_at_mut(3);
        (init_shared(&mut a[2]), init_shared(&mut b[0]))
    };
    unsafe {
        let mut g = 0u64;
        // Empty: nobody may attach, and it has no generation.
        assert_eq!(lcmp_use_tables(shared_a, gen1), LCMP_ERR_TABLES_NOT_READY);
        assert_eq!(
            lcmp_tables_generation(gen1, &mut g),
            LCMP_ERR_TABLES_NOT_READY
        );
        assert_eq!(
            lcmp_install(shared_a, blob1.as_ptr(), blob1.len()),
            LCMP_ERR_TABLES_SHARED
        );
        // A bad blob leaves it empty.
        assert_eq!(
            lcmp_tables_install(gen1, blob1.as_ptr(), 5),
            LCMP_ERR_BLOB_TRUNCATED
        );
        assert_eq!(lcmp_use_tables(shared_a, gen1), LCMP_ERR_TABLES_NOT_READY);
        assert_eq!(
            lcmp_tables_install(gen1, blob1.as_ptr(), blob1.len()),
            LCMP_OK
        );
        assert_eq!(lcmp_tables_generation(gen1, &mut g), LCMP_OK);
        assert_eq!(g, 3);
        for d in [owned_a, owned_b] {
            assert_eq!(lcmp_install(d, blob1.as_ptr(), blob1.len()), LCMP_OK);
        }
        for d in [shared_a, shared_b] {
            assert_eq!(lcmp_use_tables(d, gen1), LCMP_OK);
            assert_eq!(lcmp_generation(d, &mut g), LCMP_OK);
            assert_eq!(g, 3);
        }
        assert_eq!(users(gen1), 2);
        // In use: no install into it, and nothing changes.
        assert_eq!(
            lcmp_tables_install(gen1, blob2.as_ptr(), blob2.len()),
            LCMP_ERR_TABLES_IN_USE
        );
        assert_eq!(lcmp_tables_generation(gen1, &mut g), LCMP_OK);
        assert_eq!(g, 3);
        let route = |d, i: u32| {
            let mut out = lcmp_decision::default();
            assert_eq!(lcmp_on_packet(d, 10 + i, &flow(i), 8, &mut out), LCMP_OK);
            (out.kind, out.port, out.reason)
        };
        for i in 0..200 {
            // Even flows to the A deciders, odd ones to B, with a sample
            // and a link event on A only.
            let (o, s) = if i % 2 == 0 {
                (owned_a, shared_a)
            } else {
                (owned_b, shared_b)
            };
            if i == 100 {
                assert_eq!(lcmp_sample(owned_a, 110, 0, 4_000_000_000), LCMP_OK);
                assert_eq!(lcmp_sample(shared_a, 110, 0, 4_000_000_000), LCMP_OK);
                assert_eq!(lcmp_set_port(owned_a, 1, 0), LCMP_OK);
                assert_eq!(lcmp_set_port(shared_a, 1, 0), LCMP_OK);
            }
            assert_eq!(route(o, i), route(s, i), "flow {i}");
        }
        // Generation 2 into the second object; each decider moves to it.
        assert_eq!(
            lcmp_tables_install(gen2, blob2.as_ptr(), blob2.len()),
            LCMP_OK
        );
        for (o, s) in [(owned_a, shared_a), (owned_b, shared_b)] {
            assert_eq!(lcmp_install(o, blob2.as_ptr(), blob2.len()), LCMP_OK);
            assert_eq!(lcmp_use_tables(s, gen2), LCMP_OK);
        }
        assert_eq!((users(gen1), users(gen2)), (0, 2));
        for i in 0..200 {
            let (o, s) = if i % 2 == 0 {
                (owned_a, shared_a)
            } else {
                (owned_b, shared_b)
            };
            let (kind, port, reason) = route(s, i);
            assert_eq!(route(o, i), (kind, port, reason), "flow {i}");
            assert_ne!(port, 2, "port 2 was withdrawn");
        }
        for (o, s) in [(owned_a, shared_a), (owned_b, shared_b)] {
            assert_eq!(observe(o).0, observe(s).0, "counters");
        }
        // Generation 1 is free now: it takes a new install.
        assert_eq!(
            lcmp_tables_install(gen1, blob2.as_ptr(), blob2.len()),
            LCMP_OK
        );
        // Releasing: no route, and the count drops.
        assert_eq!(lcmp_release_tables(shared_a), LCMP_OK);
        assert_eq!(users(gen2), 1);
        assert_eq!(lcmp_generation(shared_a, &mut g), LCMP_OK);
        assert_eq!(g, 0);
        assert_eq!(route(shared_a, 0).0, LCMP_DECISION_NO_ROUTE);
        // An owning decider may read a shared object and go back to its own.
        assert_eq!(lcmp_use_tables(owned_a, gen2), LCMP_OK);
        assert_eq!(users(gen2), 2);
        assert_eq!(lcmp_install(owned_a, blob1.as_ptr(), blob1.len()), LCMP_OK);
        assert_eq!(users(gen2), 1);
        assert_eq!(lcmp_generation(owned_a, &mut g), LCMP_OK);
        assert_eq!(g, 3);
        // Bad handles and objects.
        assert_eq!(lcmp_use_tables(shared_a, ptr::null()), LCMP_ERR_NULL);
        let garbage = tables_storage();
        assert_eq!(
            lcmp_use_tables(shared_a, garbage.as_ptr().cast()),
            LCMP_ERR_NOT_INITIALIZED
        );
        assert_eq!(lcmp_tables_users(ptr::null(), &mut 0), LCMP_ERR_NULL);
        let mut t = ptr::null_mut();
        let mut small = tables_storage();
        assert_eq!(
            lcmp_tables_init(small.as_mut_ptr().cast(), lcmp_tables_size() - 1, &mut t),
            LCMP_ERR_BUFFER_TOO_SMALL
        );
        assert_eq!(
            lcmp_tables_init(
                small.as_mut_ptr().cast::<u8>().add(8).cast(),
                lcmp_tables_size(),
                &mut t
            ),
            LCMP_ERR_MISALIGNED
        );
    }
}

/// Attach and release from several threads while another thread keeps
/// trying to install: an install succeeds only when it sees no user, and
/// every attach that succeeds sees a complete generation.
#[test]
fn concurrent_attach_and_install_never_overlap() {
    let blobs: Vec<Vec<u8>> = (1..=2)
        .map(|g| ::lcmp_tables::blob::encode_blob_vec(&tables(), g).unwrap())
        .collect();
    let mut mem = tables_storage();
    let t = init_tables(&mut mem);
    assert_eq!(
        unsafe { lcmp_tables_install(t, blobs[0].as_ptr(), blobs[0].len()) },
        LCMP_OK
    );
    let t_addr = t as usize;
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(move || {
                let mut mem = shared_storage(16);
                let mut d = ptr::null_mut();
                let t = t_addr as *const lcmp_tables;
                unsafe {
                    assert_eq!(
                        lcmp_decider_init_shared(
                            mem.as_mut_ptr().cast(),
                            mem.len() * 64,
                            16,
                            ptr::null(),
                            &mut d
                        ),
                        LCMP_OK
                    );
                    for _ in 0..2000 {
                        match lcmp_use_tables(d, t) {
                            LCMP_OK => {
                                let mut g = 0;
                                assert_eq!(lcmp_generation(d, &mut g), LCMP_OK);
                                assert!(g == 1 || g == 2, "generation {g}");
                                let mut out = lcmp_decision::default();
                                assert_eq!(lcmp_on_packet(d, 1, &flow(1), 8, &mut out), LCMP_OK);
                                assert_ne!(out.kind, LCMP_DECISION_NO_ROUTE);
                                assert_eq!(lcmp_release_tables(d), LCMP_OK);
                            }
                            code => assert_eq!(code, LCMP_ERR_TABLES_NOT_READY),
                        }
                    }
                }
            });
        }
        scope.spawn(move || {
            let t = t_addr as *mut lcmp_tables;
            for i in 0..2000 {
                let b = &blobs[i % 2];
                let rc = unsafe { lcmp_tables_install(t, b.as_ptr(), b.len()) };
                assert!(rc == LCMP_OK || rc == LCMP_ERR_TABLES_IN_USE, "{rc}");
            }
        });
    });
    assert_eq!(users(t), 0);
}

/// Issue 33 (a) through the C ABI: sixteen flows crafted offline from the
/// published algorithm (the fingerprint under the key the attacker
/// assumes, all zero; the buckets of docs/design.md) into a victim's two
/// buckets, then the victim's new flow, on a decider keyed with
/// `flow_key`. Returns the victim's decision kind.
fn crafted_then_victim(flow_key: [u8; 16]) -> u8 {
    const FLOWS: usize = 256;
    let config = lcmp_config {
        flow_key,
        ..lcmp_config::default()
    };
    let mut mem = storage(FLOWS);
    let d = init_with(&mut mem, FLOWS, &config);
    install_tables(d, &tables()).unwrap();
    // The attacker's model: 40 fingerprint bits, the low ones and the
    // same bits rotated by 20 pick two of the 32 buckets.
    let buckets = |f: &lcmp_flow| {
        let fp = flow_from_c(f)
            .unwrap()
            .fingerprint(&lcmp_decide::FlowCacheKey::ZERO)
            & ((1 << 40) - 1);
        let mask = (FLOWS / 8 - 1) as u64;
        let rotated = ((fp >> 20) | (fp << 20)) & ((1 << 40) - 1);
        let mut b = [fp & mask, rotated & mask];
        b.sort_unstable();
        b
    };
    let victim = lcmp_flow_v4(0x0A00_0007, 0x0A07_0001, 5000, 4791, 17);
    let target = buckets(&victim);
    let crafted: Vec<lcmp_flow> = (0..=u16::MAX)
        .map(|sport| lcmp_flow_v4(0x0A00_0042, 0x0A07_0001, sport, 4791, 17))
        .filter(|f| buckets(f) == target)
        .take(16)
        .collect();
    assert_eq!(crafted.len(), 16);
    let mut out = lcmp_decision::default();
    for f in &crafted {
        assert_eq!(unsafe { lcmp_on_packet(d, 1, f, 8, &mut out) }, LCMP_OK);
        assert_eq!(out.kind, LCMP_DECISION_NEW);
    }
    assert_eq!(
        unsafe { lcmp_on_packet(d, 2, &victim, 8, &mut out) },
        LCMP_OK
    );
    out.kind
}

#[test]
fn crafted_flows_refuse_a_victim_only_without_a_flow_key() {
    assert_eq!(crafted_then_victim([0; 16]), LCMP_DECISION_NO_ROUTE);
    assert_eq!(crafted_then_victim(*b"per-device key!!"), LCMP_DECISION_NEW);
}

/// Counters and the decision of one flow's packet: what a second init
/// must not change.
fn route(d: *mut lcmp_decider, i: u32) -> (u8, u8) {
    let mut out = lcmp_decision::default();
    assert_eq!(
        unsafe { lcmp_on_packet(d, 10, &flow(i), 8, &mut out) },
        LCMP_OK
    );
    (out.kind, out.port)
}

fn counters(d: *const lcmp_decider) -> lcmp_counters {
    let mut c = lcmp_counters::default();
    assert_eq!(unsafe { lcmp_get_counters(d, &mut c) }, LCMP_OK);
    c
}

/// A second `lcmp_decider_init`, `_init_shared` or `lcmp_tables_init` over
/// a live object is refused with its own code and changes nothing (before
/// issue 33 it reset the decider and leaked the shared tables' user count,
/// so that installs failed with `LCMP_ERR_TABLES_IN_USE` for good); the
/// `_fini` calls end an object, drop its user count, and let the memory be
/// initialised again.
#[test]
fn a_second_init_of_a_live_object_is_refused_until_fini() {
    let blob = ::lcmp_tables::blob::encode_blob_vec(&tables(), 3).unwrap();
    let (mut own_mem, mut shared_mem, mut t_mem) = (
        storage(LCMP_FLOWS),
        shared_storage(LCMP_FLOWS),
        tables_storage(),
    );
    let owned = init(&mut own_mem);
    let shared = init_shared(&mut shared_mem);
    let t = init_tables(&mut t_mem);
    unsafe {
        assert_eq!(lcmp_install(owned, blob.as_ptr(), blob.len()), LCMP_OK);
        assert_eq!(lcmp_tables_install(t, blob.as_ptr(), blob.len()), LCMP_OK);
        assert_eq!(lcmp_use_tables(shared, t), LCMP_OK);
    }
    assert_eq!(users(t), 1);
    for d in [owned, shared] {
        assert_eq!(route(d, 1).0, LCMP_DECISION_NEW);
    }
    let before = [counters(owned), counters(shared)];
    let again = |mem: &mut [Line], shared_init: bool| {
        let mut out = ptr::null_mut();
        let f = if shared_init {
            lcmp_decider_init_shared
        } else {
            lcmp_decider_init
        };
        let rc = unsafe {
            f(
                mem.as_mut_ptr().cast(),
                mem.len() * 64,
                LCMP_FLOWS,
                ptr::null(),
                &mut out,
            )
        };
        (rc, out)
    };
    let tables_again = |mem: &mut [Line]| {
        let mut out = ptr::null_mut();
        unsafe { lcmp_tables_init(mem.as_mut_ptr().cast(), mem.len() * 64, &mut out) }
    };
    // Every init over every live object: refused, the output unwritten.
    for shared_init in [false, true] {
        assert_eq!(
            again(&mut own_mem, shared_init),
            (LCMP_ERR_ALREADY_INITIALIZED, ptr::null_mut())
        );
        assert_eq!(
            again(&mut shared_mem, shared_init),
            (LCMP_ERR_ALREADY_INITIALIZED, ptr::null_mut())
        );
        assert_eq!(
            again(&mut t_mem, shared_init),
            (LCMP_ERR_ALREADY_INITIALIZED, ptr::null_mut())
        );
    }
    assert_eq!(tables_again(&mut t_mem), LCMP_ERR_ALREADY_INITIALIZED);
    assert_eq!(tables_again(&mut own_mem), LCMP_ERR_ALREADY_INITIALIZED);
    assert_eq!(tables_again(&mut shared_mem), LCMP_ERR_ALREADY_INITIALIZED);
    // Nothing changed: the user count, the generation, the counters and
    // the pins (the same flow hits).
    assert_eq!(users(t), 1);
    let mut g = 0;
    assert_eq!(unsafe { lcmp_tables_generation(t, &mut g) }, LCMP_OK);
    assert_eq!(g, 3);
    assert_eq!([counters(owned), counters(shared)], before);
    for d in [owned, shared] {
        assert_eq!(route(d, 1).0, LCMP_DECISION_HIT);
    }
    assert_eq!(counters(shared).hits, before[1].hits + 1);
    let msg = strerror(LCMP_ERR_ALREADY_INITIALIZED).to_str().unwrap();
    assert!(msg.contains("fini"), "{msg}");

    // The tables object cannot end while a decider reads it.
    assert_eq!(unsafe { lcmp_tables_fini(t) }, LCMP_ERR_TABLES_IN_USE);
    assert_eq!(users(t), 1);
    // fini drops the user count and ends the handle.
    assert_eq!(unsafe { lcmp_decider_fini(shared) }, LCMP_OK);
    assert_eq!(users(t), 0);
    assert_eq!(unsafe { lcmp_decider_fini(owned) }, LCMP_OK);
    let mut c = lcmp_counters::default();
    for d in [owned, shared] {
        assert_eq!(
            unsafe { lcmp_get_counters(d, &mut c) },
            LCMP_ERR_NOT_INITIALIZED
        );
        assert_eq!(unsafe { lcmp_decider_fini(d) }, LCMP_ERR_NOT_INITIALIZED);
    }
    assert_eq!(unsafe { lcmp_tables_fini(t) }, LCMP_OK);
    assert_eq!(
        unsafe { lcmp_tables_users(t, &mut 0) },
        LCMP_ERR_NOT_INITIALIZED
    );
    assert_eq!(unsafe { lcmp_tables_fini(t) }, LCMP_ERR_NOT_INITIALIZED);
    // Re-initialised: fresh objects (no tables, no counters).
    let owned = init(&mut own_mem);
    let shared = init_shared(&mut shared_mem);
    let t = init_tables(&mut t_mem);
    assert_eq!(counters(owned), lcmp_counters::default());
    assert_eq!(route(shared, 1).0, LCMP_DECISION_NO_ROUTE);
    assert_eq!(
        unsafe { lcmp_tables_install(t, blob.as_ptr(), blob.len()) },
        LCMP_OK
    );
    assert_eq!(unsafe { lcmp_use_tables(shared, t) }, LCMP_OK);
    assert_eq!(route(shared, 1).0, LCMP_DECISION_NEW);
}

/// `Cargo.toml`'s claim: `unsafe` blocks are written in `boundary.rs`
/// only (the other modules reach caller memory through its macros), and
/// every `unsafe fn` elsewhere is an `extern "C"` function.
#[test]
fn unsafe_blocks_are_written_only_in_boundary() {
    let others = [
        ("codes.rs", include_str!("codes.rs")),
        ("convert.rs", include_str!("convert.rs")),
        ("decider.rs", include_str!("decider.rs")),
        ("digest.rs", include_str!("digest.rs")),
        ("lib.rs", include_str!("lib.rs")),
        ("shared.rs", include_str!("shared.rs")),
        ("signed.rs", include_str!("signed.rs")),
        ("types.rs", include_str!("types.rs")),
    ];
    let mut files: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|f| f != "boundary.rs" && f != "tests.rs")
        .collect();
    files.sort();
    let listed: Vec<&str> = others.iter().map(|(f, _)| *f).collect();
    assert_eq!(files, listed, "a module of src/ is not checked here");
    for (file, text) in others {
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            let block = code.contains("unsafe {") || code.trim_end().ends_with("unsafe");
            let bare_fn = code.contains("unsafe fn") && !code.contains("unsafe extern \"C\" fn");
            assert!(
                !block && !bare_fn && !code.contains("unsafe impl"),
                "{file}:{}: unsafe outside boundary.rs: {line}",
                n + 1
            );
        }
    }
    assert!(include_str!("boundary.rs").contains("unsafe {"));
}

/// Every init checks the caller's `LCMP_ABI_VERSION` (lcmp.h's macros pass
/// it) before it reads or writes anything, with a null config too: the
/// memory and `*out` are untouched by a mismatch, and the header's own
/// version initialises.
#[test]
fn every_init_checks_the_callers_abi_version() {
    type Init = unsafe extern "C" fn(
        *mut c_void,
        usize,
        usize,
        *const lcmp_config,
        *mut *mut lcmp_decider,
        u32,
    ) -> i32;
    type Memory = fn(usize) -> Vec<Line>;
    // The header's version and four others.
    const VERSIONS: [u32; 5] = [
        0,
        LCMP_ABI_VERSION - 1,
        LCMP_ABI_VERSION,
        LCMP_ABI_VERSION + 1,
        u32::MAX,
    ];
    let inits: [(&str, Init, Memory); 2] = [
        ("lcmp_decider_init_", lcmp_decider_init_, storage),
        (
            "lcmp_decider_init_shared_",
            lcmp_decider_init_shared_,
            shared_storage,
        ),
    ];
    let good = lcmp_config::default();
    for (name, init, memory) in inits {
        for config in [ptr::null(), ptr::from_ref(&good)] {
            for version in VERSIONS {
                let mut mem = memory(LCMP_FLOWS);
                let before = mem.iter().map(|l| l.0).collect::<Vec<_>>();
                let mut d = ptr::without_provenance_mut(0x40);
                let len = mem.len() * 64;
                let rc = unsafe {
                    init(
                        mem.as_mut_ptr().cast(),
                        len,
                        LCMP_FLOWS,
                        config,
                        &mut d,
                        version,
                    )
                };
                if version == LCMP_ABI_VERSION {
                    assert_eq!(rc, LCMP_OK, "{name}: the header's version");
                    assert_ne!(d, ptr::without_provenance_mut(0x40));
                    continue;
                }
                assert_eq!(rc, LCMP_ERR_ABI, "{name} of version {version}");
                assert_eq!(
                    d,
                    ptr::without_provenance_mut(0x40),
                    "{name}: *out untouched"
                );
                assert!(
                    mem.iter().map(|l| l.0).eq(before),
                    "{name}: memory untouched"
                );
                // Checked first: even a null memory pointer is the ABI error.
                let rc = unsafe { init(ptr::null_mut(), 0, 0, config, &mut d, version) };
                assert_eq!(rc, LCMP_ERR_ABI, "{name}: checked first");
            }
        }
    }
    for version in VERSIONS {
        let mut mem = tables_storage();
        let mut t = ptr::without_provenance_mut(0x40);
        let rc =
            unsafe { lcmp_tables_init_(mem.as_mut_ptr().cast(), mem.len() * 64, &mut t, version) };
        if version == LCMP_ABI_VERSION {
            assert_eq!(rc, LCMP_OK, "the header's version");
            assert_ne!(t, ptr::without_provenance_mut(0x40));
            continue;
        }
        assert_eq!(rc, LCMP_ERR_ABI, "lcmp_tables_init_ of version {version}");
        assert_eq!(t, ptr::without_provenance_mut(0x40));
        assert!(mem.iter().all(|l| l.0 == [0x5A; 64]), "memory untouched");
        let rc = unsafe { lcmp_tables_init_(ptr::null_mut(), 0, ptr::null_mut(), version) };
        assert_eq!(rc, LCMP_ERR_ABI, "checked first");
    }
    assert!(strerror(LCMP_ERR_ABI)
        .to_str()
        .unwrap()
        .contains("LCMP_ABI_VERSION"));
}

/// `n` bytes of 0xEE around a sized output: what the library wrote, and
/// whether it kept off everything past `n`.
fn sized_output<T>(n: usize, call: impl FnOnce(*mut T, usize) -> i32) -> (i32, Vec<u8>) {
    // Room for the whole struct and 64 bytes more, aligned for `T`.
    let mut buf = vec![Line([0xEE; 64]); (size_of::<T>() + 64).div_ceil(64)];
    let rc = call(buf.as_mut_ptr().cast(), n);
    let bytes: Vec<u8> = buf.iter().flat_map(|l| l.0).collect();
    (rc, bytes)
}

/// The sized outputs: a caller's struct of an older layout (smaller) gets
/// exactly its prefix and nothing past it is written; the whole struct
/// (and a larger, newer one) gets all of this library's fields and no
/// more; a size below the oldest layout is `LCMP_ERR_ABI` with nothing
/// written.
#[test]
fn sized_outputs_write_only_the_callers_size() {
    let mut mem = storage(LCMP_FLOWS);
    let d = init(&mut mem);
    install_tables(d, &tables()).unwrap();
    for i in 0..40 {
        let _ = route(d, i);
    }
    let want = counters(d);
    assert!(want.new_flows > 0 && want.packets > 0);
    let want_bytes: Vec<u8> = {
        let p = ptr::from_ref(&want).cast::<u8>();
        (0..size_of::<lcmp_counters>())
            .map(|i| unsafe { p.add(i).read() })
            .collect()
    };
    let full = size_of::<lcmp_counters>();
    assert_eq!(full, 112);
    for n in [LCMP_COUNTERS_MIN_SIZE, full, full + 8, full + 64] {
        let (rc, bytes) = sized_output(n, |p, n| unsafe { lcmp_get_counters_(d, p, n) });
        assert_eq!(rc, LCMP_OK, "size {n}");
        let filled = n.min(full);
        assert_eq!(
            bytes[..filled],
            want_bytes[..filled],
            "size {n}: its prefix"
        );
        assert!(
            bytes[filled..].iter().all(|&b| b == 0xEE),
            "size {n}: nothing written past {filled}"
        );
    }
    // ABI 3's layout ends before `reclaimed`: that slot stays the caller's.
    let (_, old) = sized_output(LCMP_COUNTERS_MIN_SIZE, |p, n| unsafe {
        lcmp_get_counters_(d, p, n)
    });
    assert_eq!(old[104..112], [0xEE; 8]);
    for n in [0, 1, 8, LCMP_COUNTERS_MIN_SIZE - 1] {
        let (rc, bytes) = sized_output(n, |p, n| unsafe { lcmp_get_counters_(d, p, n) });
        assert_eq!(rc, LCMP_ERR_ABI, "size {n} is below the oldest layout");
        assert!(
            bytes.iter().all(|&b| b == 0xEE),
            "size {n}: nothing written"
        );
    }
    // The explanation: its one layout, or larger; smaller is refused.
    let f = flow(3);
    let mut whole = lcmp_explanation::default();
    assert_eq!(unsafe { lcmp_explain(d, 1, &f, 8, &mut whole) }, LCMP_OK);
    assert_eq!(whole.n_candidates, 3);
    let full = size_of::<lcmp_explanation>();
    for n in [full, full + 40] {
        let (rc, bytes) = sized_output(n, |p, n| unsafe { lcmp_explain_(d, 1, &f, 8, p, n) });
        assert_eq!(rc, LCMP_OK);
        let got = unsafe { bytes.as_ptr().cast::<lcmp_explanation>().read_unaligned() };
        assert_eq!(got, whole);
        assert!(
            bytes[full..].iter().all(|&b| b == 0xEE),
            "nothing past the struct"
        );
    }
    for n in [0, 4, LCMP_EXPLANATION_MIN_SIZE - 1] {
        let (rc, bytes) = sized_output(n, |p, n| unsafe { lcmp_explain_(d, 1, &f, 8, p, n) });
        assert_eq!(rc, LCMP_ERR_ABI, "size {n}");
        assert!(bytes.iter().all(|&b| b == 0xEE));
    }
    // Null and misaligned outputs are still their own errors.
    assert_eq!(
        unsafe { lcmp_get_counters_(d, ptr::null_mut(), full) },
        LCMP_ERR_NULL
    );
    let (rc, _) = sized_output::<u8>(112, |p, n| unsafe {
        lcmp_get_counters_(d, p.add(1).cast(), n)
    });
    assert_eq!(rc, LCMP_ERR_MISALIGNED);
}
