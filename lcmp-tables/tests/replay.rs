//! Replay of the checked-in testbed8 trace: the digest is pinned, and the
//! decisions that can be reasoned about by hand are checked one by one.

use lcmp_decide::{DeciderConfig, Decision, PortId, Reason, Scheme};
use lcmp_tables::replay::{
    encode_trace_vec, parse_csv, replay, DecisionRecord, ReplayDecider, TraceEvent, TraceReader,
};
use lcmp_tables::{build_tables, BuildOptions, Topology};

const TRACE: &str = include_str!("data/testbed8-dc1.csv");
/// The digest of `data/testbed8-dc1.csv` on testbed8, switch DC1, default
/// tables, LCMP, seed 0. Frontends (firmware, FFI) must print the same.
const DIGEST: u64 = 0xf2ca_0b18_71b8_838c;

fn run(scheme: Scheme, events: &[TraceEvent]) -> (u64, Vec<DecisionRecord>, lcmp_decide::Counters) {
    let topo = Topology::embedded("testbed8").expect("embedded");
    let tables = build_tables(&topo, 1, &BuildOptions::default()).expect("build");
    let mut d = Box::new(ReplayDecider::new(
        DeciderConfig::default().with_scheme(scheme),
    ));
    d.install(&tables).expect("install");
    let mut records = Vec::new();
    let s = replay(&mut *d, events.iter().copied().map(Ok), |r| {
        records.push(*r)
    })
    .expect("replay");
    assert_eq!(s.decisions as usize, records.len());
    (s.digest, records, *d.counters())
}

fn events() -> Vec<TraceEvent> {
    let topo = Topology::embedded("testbed8").expect("embedded");
    parse_csv(TRACE, Some(&topo)).expect("parse")
}

#[test]
fn digest_is_pinned() {
    let (digest, records, c) = run(Scheme::Lcmp, &events());
    assert_eq!(digest, DIGEST, "a decision changed: {digest:#018x}");
    assert_eq!(records.len(), 42);
    assert_eq!(
        (
            c.packets,
            c.hits,
            c.new_flows,
            c.failovers,
            c.no_route,
            c.samples
        ),
        (42, 16, 23, 1, 2, 16)
    );
}

#[test]
fn hand_checked_decisions() {
    let (_, records, _) = run(Scheme::Lcmp, &events());
    let at = |i: u32| records.iter().find(|r| r.index == i).map(|r| r.decision);
    // Idle DC1 -> DC8 (default weights): costs by port 135, 167, 82, 181,
    // 69, 191, so the kept set is ports {4, 2, 0}: every new flow of part 1
    // lands there.
    for r in records.iter().filter(|r| r.index < 8) {
        let p = r.decision.port().expect("routed");
        assert!([PortId(0), PortId(2), PortId(4)].contains(&p), "{r:?}");
    }
    // Their second packets are hits on the same port.
    for i in 0..8 {
        assert_eq!(at(i + 8), at(i).and_then(|d| d.port()).map(Decision::Hit));
    }
    // After port 2 goes down, nothing uses port 2 until it is back up, and
    // exactly the flows pinned to it fail over.
    for r in records.iter().filter(|r| (36..=56).contains(&r.index)) {
        assert_ne!(r.decision.port(), Some(PortId(2)), "{r:?}");
        let was_on_2 = at(r.index.wrapping_sub(29)) == Some(Decision::Hit(PortId(2)));
        if (37..=44).contains(&r.index) {
            assert_eq!(
                matches!(r.decision, Decision::New { failover: true, .. }),
                was_on_2,
                "{r:?}"
            );
        }
    }
    // DC3 has one path (port 1): routed, then no route while it is down.
    assert_eq!(at(45).and_then(|d| d.port()), Some(PortId(1)));
    assert_eq!(at(47), Some(Decision::NoRoute(Reason::NoLiveCandidate)));
    // Traffic to the switch's own DC has no group.
    assert_eq!(at(48), Some(Decision::NoRoute(Reason::UnknownGroup)));
    assert_eq!(at(57).and_then(|d| d.port()), Some(PortId(1)));
}

#[test]
fn encoded_trace_gives_the_same_digest() {
    let events = events();
    let bytes = encode_trace_vec(&events).expect("encode");
    let topo = Topology::embedded("testbed8").expect("embedded");
    let tables = build_tables(&topo, 1, &BuildOptions::default()).expect("build");
    let mut d = Box::new(ReplayDecider::new(DeciderConfig::default()));
    d.install(&tables).expect("install");
    let reader = TraceReader::new(&bytes).expect("header");
    let s = replay(&mut *d, reader, |_| {}).expect("replay");
    assert_eq!(s.digest, DIGEST);
    assert_eq!(s.events as usize, events.len());
}

#[test]
fn digest_changes_when_a_decision_does() {
    let (ecmp, _, _) = run(Scheme::Ecmp, &events());
    assert_ne!(ecmp, DIGEST);
    // Moving one packet to another flow changes one decision.
    let mut ev = events();
    if let Some(TraceEvent::Packet { flow, .. }) = ev.get_mut(8) {
        flow.sport = 1;
    }
    let (changed, _, _) = run(Scheme::Lcmp, &ev);
    assert_ne!(changed, DIGEST);
}
