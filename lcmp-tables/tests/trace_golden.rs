//! Format stability of encoded replay traces (`LCMR`): every golden trace
//! of every released trace version decodes, forever, to the events it was
//! written from, and a golden of the current version re-encodes to its own
//! bytes. If this fails, the event layout changed: add a new
//! `TRACE_VERSION` with its own wire structs (`replay/codec.rs`) and keep
//! the older readers.
//!
//! `LCMP_BLESS=1` rewrites the current version's goldens and then fails,
//! so a bless run never passes: check the new files in, then run again
//! without it. Older versions' files are history, never rewritten.

use core::net::{Ipv4Addr, Ipv6Addr};

use lcmp_decide::{FlowKey, PortId};
use lcmp_tables::replay::{encode_trace_vec, parse_csv, TraceEvent, TraceReader, TRACE_VERSION};
use lcmp_tables::Topology;

/// The checked-in testbed8 trace (IPv4 packets, samples, link changes).
fn testbed8() -> Vec<TraceEvent> {
    let topo = Topology::embedded("testbed8").expect("embedded");
    parse_csv(include_str!("data/testbed8-dc1.csv"), Some(&topo)).expect("parse")
}

/// Every variant and the extremes of every field: IPv6 addresses, 64-bit
/// times and queue depths, port 255, both link states.
fn extremes() -> Vec<TraceEvent> {
    let v6 = FlowKey::v6(
        Ipv6Addr::new(0xfd00, 0, 0, 1, 0, 0, 0, 1),
        Ipv6Addr::new(0xfd00, 0, 0, 7, 0xffff, 0xffff, 0xffff, 0xffff),
        u16::MAX,
        4791,
        17,
    );
    let v4 = FlowKey::v4(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::BROADCAST, 0, 0, 6);
    vec![
        TraceEvent::Sample {
            t_us: 0,
            port: PortId(0),
            queue_bytes: 0,
        },
        TraceEvent::Packet {
            t_us: 1,
            flow: v4,
            dst_dc: 0,
        },
        TraceEvent::Packet {
            t_us: 300,
            flow: v6,
            dst_dc: u16::MAX,
        },
        TraceEvent::Link {
            t_us: 301,
            port: PortId(255),
            up: false,
        },
        TraceEvent::Link {
            t_us: 302,
            port: PortId(255),
            up: true,
        },
        TraceEvent::Sample {
            t_us: u64::MAX,
            port: PortId(255),
            queue_bytes: u64::MAX,
        },
    ]
}

/// One golden trace: its file under `tests/golden/`, the trace version it
/// was written in, and its events.
struct Golden {
    file: &'static str,
    version: u16,
    events: Vec<TraceEvent>,
}

fn goldens() -> Vec<Golden> {
    vec![
        Golden {
            file: "trace-v1-testbed8-dc1.lcmr",
            version: 1,
            events: testbed8(),
        },
        Golden {
            file: "trace-v1-extremes.lcmr",
            version: 1,
            events: extremes(),
        },
    ]
}

#[test]
fn golden_traces_of_every_version_decode() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let all = goldens();
    let bless = std::env::var("LCMP_BLESS").as_deref() == Ok("1");
    let mut blessed = Vec::new();
    for g in all.iter().filter(|g| bless && g.version == TRACE_VERSION) {
        std::fs::write(
            dir.join(g.file),
            encode_trace_vec(&g.events).expect("encode"),
        )
        .expect("write");
        blessed.push(g.file);
    }
    for v in 1..=TRACE_VERSION {
        assert!(
            all.iter().any(|g| g.version == v),
            "no golden trace of version {v}"
        );
    }
    for g in &all {
        let path = dir.join(g.file);
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (LCMP_BLESS=1 writes it)", path.display()));
        assert_eq!(&bytes[..4], b"LCMR", "{}", g.file);
        assert_eq!(
            u16::from_le_bytes([bytes[4], bytes[5]]),
            g.version,
            "{}",
            g.file
        );
        let back: Result<Vec<_>, _> = TraceReader::new(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", g.file))
            .collect();
        assert_eq!(back.as_ref(), Ok(&g.events), "{}", g.file);
        if g.version == TRACE_VERSION {
            assert_eq!(
                encode_trace_vec(&g.events).expect("encode"),
                bytes,
                "{}",
                g.file
            );
        }
    }
    assert!(
        blessed.is_empty(),
        "LCMP_BLESS=1 rewrote {blessed:?}: check them in and run again without LCMP_BLESS"
    );
}
