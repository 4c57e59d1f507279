//! The router around LCMP (issue 32, item 3), run by the interpreter as
//! `lcmp.p4` does: no packet is dropped silently (each one not forwarded is
//! counted under its reason in `lcmp_exceptions`), control traffic and
//! expired TTLs go to the CPU port with their reason, IPv6 is refused and
//! counted, a malformed IPv4 header (IHL below 5, version not 4) is
//! dropped and counted, every fragment of a datagram takes one path, and
//! the pin events of routed packets are counted.

mod common;

use lcmp_tofino::interp::{Frame, Interpreter, Ipv4Packet, PinRegisters};
use lcmp_tofino::schema::{pin_event, Reason};
use lcmp_tofino::{Agent, EntrySet, ExportOptions, Program};

fn agent(cpu_port: Option<u16>) -> Agent {
    common::testbed8_dc1(ExportOptions {
        pin_slots: 512,
        cpu_port,
        ..ExportOptions::default()
    })
}

/// The program and entries of [`agent`].
fn exported(cpu_port: Option<u16>) -> (Program, EntrySet) {
    let agent = agent(cpu_port);
    (agent.program(), agent.entries().expect("entries"))
}

/// A UDP packet to DC8's prefix (an LCMP group).
fn udp(sport: u16) -> Ipv4Packet {
    Ipv4Packet {
        version: 4,
        ihl: 5,
        ttl: 64,
        more_fragments: false,
        frag_offset: 0,
        src: 0x0A01_0001,
        dst: 0x0A08_0001,
        proto: 17,
        sport,
        dport: 4791,
    }
}

fn count(pins: &PinRegisters, r: Reason) -> u64 {
    pins.exceptions[usize::from(r.code())]
}

#[test]
fn exceptions_go_to_the_cpu_or_are_dropped_and_counted_by_reason() {
    let (program, entries) = exported(None);
    let interp = Interpreter::new(&program, &entries);
    let mut pins = PinRegisters::default();
    let cpu = u64::from(ExportOptions::default().target.pcie_cpu_port());
    let mut t_ns = 1_000_000_000;
    let mut send = |pins: &mut PinRegisters, f: Frame| {
        t_ns += 1_000;
        interp.frame(pins, &f, t_ns).expect("frame")
    };
    // ARP: to the CPU port with its reason.
    let t = send(&mut pins, Frame::NotIp(0x0806));
    assert_eq!(
        (t.reason, t.cpu_port, t.port),
        (Some(Reason::NotIp), Some(cpu), None)
    );
    // IPv6: refused, counted, not sent anywhere.
    let t = send(&mut pins, Frame::Ipv6);
    assert_eq!(
        (t.reason, t.cpu_port, t.port),
        (Some(Reason::Ipv6), None, None)
    );
    // IHL 0 to 4 and a version that is not 4: malformed, dropped, counted.
    for ihl in 0..5 {
        let t = send(&mut pins, Frame::Ipv4(Ipv4Packet { ihl, ..udp(1) }));
        assert_eq!(
            (t.reason, t.port, t.cpu_port),
            (Some(Reason::BadIpv4), None, None)
        );
    }
    let t = send(
        &mut pins,
        Frame::Ipv4(Ipv4Packet {
            version: 6,
            ..udp(1)
        }),
    );
    assert_eq!(t.reason, Some(Reason::BadIpv4));
    // IHL 15 (options) is routed.
    let t = send(&mut pins, Frame::Ipv4(Ipv4Packet { ihl: 15, ..udp(1) }));
    assert!(t.port.is_some() && t.reason.is_none(), "{t:?}");
    // TTL 1 and 0 on a routed packet: to the CPU (ICMP time exceeded).
    for ttl in [0, 1] {
        let t = send(&mut pins, Frame::Ipv4(Ipv4Packet { ttl, ..udp(2) }));
        assert_eq!(
            (t.reason, t.cpu_port, t.port),
            (Some(Reason::TtlExpired), Some(cpu), None)
        );
        assert!(t.ttl_expired);
    }
    // TTL 2 is forwarded.
    let t = send(&mut pins, Frame::Ipv4(Ipv4Packet { ttl: 2, ..udp(2) }));
    assert!(t.port.is_some() && t.reason.is_none());
    // No LCMP group and no default route: unrouted, dropped, counted.
    let t = send(
        &mut pins,
        Frame::Ipv4(Ipv4Packet {
            dst: 0xAC10_0001,
            ..udp(3)
        }),
    );
    assert_eq!(
        (t.reason, t.port, t.cpu_port),
        (Some(Reason::Unrouted), None, None)
    );
    assert_eq!(count(&pins, Reason::NotIp), 1);
    assert_eq!(count(&pins, Reason::Ipv6), 1);
    assert_eq!(count(&pins, Reason::BadIpv4), 6);
    assert_eq!(count(&pins, Reason::TtlExpired), 2);
    assert_eq!(count(&pins, Reason::Unrouted), 1);
    assert_eq!(
        pins.exceptions.iter().sum::<u64>(),
        11,
        "forwarded packets are not exceptions"
    );
    // Another CPU port, when told.
    let (program, entries) = exported(Some(320));
    let interp = Interpreter::new(&program, &entries);
    let t = interp
        .frame(&mut PinRegisters::default(), &Frame::NotIp(0x88CC), 1)
        .expect("LLDP");
    assert_eq!(t.cpu_port, Some(320));
}

#[test]
fn every_fragment_of_a_datagram_takes_one_path() {
    let (program, entries) = exported(None);
    let interp = Interpreter::new(&program, &entries);
    // Datagrams that differ only in their ports: unfragmented, they spread
    // over the group's ports; fragmented, each one's fragments (the first
    // one carries the ports) hash without them, all alike.
    let mut spread = std::collections::BTreeSet::new();
    let mut pins = PinRegisters::default();
    for sport in 0..64u16 {
        let whole = interp
            .frame(&mut pins, &Frame::Ipv4(udp(sport)), 1_000_000)
            .expect("whole");
        spread.insert(whole.port.expect("forwarded"));
        let mut frag_pins = PinRegisters::default();
        let first = Ipv4Packet {
            more_fragments: true,
            ..udp(sport)
        };
        let middle = Ipv4Packet {
            frag_offset: 185,
            ..first
        };
        let last = Ipv4Packet {
            more_fragments: false,
            frag_offset: 370,
            ..first
        };
        let ports: Vec<Option<u64>> = [first, middle, last]
            .iter()
            .map(|p| {
                interp
                    .frame(&mut frag_pins, &Frame::Ipv4(*p), 1_000_000)
                    .expect("fragment")
                    .port
            })
            .collect();
        assert!(
            ports[0].is_some() && ports.iter().all(|p| *p == ports[0]),
            "{sport}: {ports:?}"
        );
        let h = |p: &Ipv4Packet| interp.hash(&p.headers());
        assert_eq!(h(&first), h(&last));
        assert_eq!(
            h(&first),
            h(&Ipv4Packet {
                sport: 0,
                dport: 0,
                ..udp(sport)
            })
        );
    }
    assert!(
        spread.len() > 1,
        "unfragmented datagrams hash with their ports"
    );
}

#[test]
fn routed_packets_count_their_pin_events() {
    let (program, entries) = exported(None);
    let interp = Interpreter::new(&program, &entries);
    let mut pins = PinRegisters::default();
    for i in 0..3u64 {
        interp
            .frame(&mut pins, &Frame::Ipv4(udp(9)), 1_000_000_000 + i * 1_000)
            .expect("packet");
    }
    // One new pin (index 0), then two hits.
    assert_eq!(pins.pin_events[0], 1);
    assert_eq!(pins.pin_events[usize::from(pin_event::HIT)], 2);
    assert_eq!(pins.pin_events.iter().sum::<u64>(), 3);
    // A packet that is not routed by the selection counts no pin event.
    interp
        .frame(&mut pins, &Frame::NotIp(0x0806), 2_000_000_000)
        .expect("ARP");
    assert_eq!(pins.pin_events.iter().sum::<u64>(), 3);
}

/// The program's text declares what the interpreter models: every reason's
/// code, the parser states that classify frames, the CPU header, the
/// exception table under `meta.reason != 0`, and the three counters.
#[test]
fn the_program_declares_the_reasons_and_counters_the_mirror_models() {
    let program = agent(None).program();
    let text = lcmp_tofino::render::p4::render(&program);
    for r in Reason::ALL {
        let decl = format!("const bit<8> R_{} = {};", r.name().to_uppercase(), r.code());
        assert!(text.contains(&decl), "{decl}");
    }
    for needle in [
        "0x86DD: refuse_ipv6;",
        "meta.reason = R_IPV6;",
        "(4, 0 &&& 0xC): bad_ipv4;",
        "(4, 4): bad_ipv4;",
        "default: bad_ipv4;",
        "meta.reason = R_BAD_IPV4;",
        "meta.reason = R_TTL_EXPIRED;",
        "meta.reason = R_UNROUTED;",
        "meta.reason = R_PORT_DOWN;",
        "if (meta.reason != 0) {\n            lcmp_exception.apply();",
        "lcmp_cpu_h     cpu;\n    ethernet_h     ethernet;",
        "Counter<bit<32>, bit<8>>(16, CounterType_t.PACKETS_AND_BYTES) lcmp_exceptions;",
        "Counter<bit<32>, bit<3>>(8, CounterType_t.PACKETS_AND_BYTES) lcmp_pin_events;",
        "Counter<bit<32>, PortId_t>(512, CounterType_t.PACKETS_AND_BYTES) lcmp_port_tx;",
        "lcmp_pin_events.count(meta.pin_event);",
        "lcmp_port_tx.count(eg_intr_md.egress_port);",
        "lcmp_exceptions.count(meta.reason);",
    ] {
        assert!(text.contains(needle), "lcmp.p4 lacks {needle:?}");
    }
    // Nothing is dropped outside the exception table but table misses and
    // an LCMP group without a live candidate, which set their reason too
    // (the table's entries drop and count; its default, for a reason
    // without an entry, drops only).
    assert_eq!(
        text.matches("ig_dprsr_md.drop_ctl = 1;").count(),
        4,
        "drop_ctl writes"
    );
}
