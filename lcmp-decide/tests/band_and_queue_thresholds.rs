//! The cost band (`Params::band`), explicit queue thresholds
//! (`Tables::queue_thresholds`) and the profiles, on testbed8's DC1 switch,
//! with expectations computed by hand from Alg. 1-2 and Eq. 1-5.

mod common;

use common::*;
use lcmp_decide::tables::QueueThresholds;
use lcmp_decide::*;

/// Delay saturation at 512 ms (shift 9), `S_cong = 2`.
fn shift9(band: u8) -> Params {
    Params::PAPER
        .with_delay_shift(9)
        .with_weights(Weights::PAPER.with_s_cong(2))
        .with_band(band)
}

#[test]
fn shift9_costs_and_the_band() {
    // delayScore = (d * 255) >> 9: DC2 12, DC3 124, DC4 4, DC5 49, DC6 2,
    // DC7 24. C_path = (3 ds + cs) >> 2 with cs 128 / 204 / 255:
    // 41, 125, 54, 87, 65, 81. Idle C = 3 C_path >> 2: 30, 93, 40, 65, 48, 60.
    let d = decider(Scheme::Lcmp, shift9(u8::MAX));
    let e = d.explain(t(0), &flow(1), DC8);
    let c_path: Vec<u8> = e.candidates.iter().map(|c| c.c_path).collect();
    assert_eq!(c_path, [41, 125, 54, 87, 65, 81]);
    let cost: Vec<u8> = e.candidates.iter().map(|c| c.cost).collect();
    assert_eq!(cost, [30, 93, 40, 65, 48, 60]);
    assert_eq!(kept_ports(&e), [0, 2, 4], "the cheaper half: DC2, DC4, DC6");

    // Band 10: the ceiling is 30 + 10 = 40, so DC6 (48) is cut too.
    let d = decider(Scheme::Lcmp, shift9(10));
    let e = d.explain(t(0), &flow(1), DC8);
    assert_eq!(kept_ports(&e), [0, 2]);
    assert_eq!(e.candidates[4].cut_reason, Some(CutReason::OverCut));
    assert_eq!(e.candidates[1].cut_reason, Some(CutReason::UpperHalf));
    // Band 0: only the cheapest.
    let mut d = decider(Scheme::Lcmp, shift9(0));
    assert_eq!(kept_ports(&d.explain(t(0), &flow(1), DC8)), [0]);
    for i in 0..64 {
        let decision = d.on_packet(t(i), &flow(i), DC8);
        assert_eq!(decision.port(), Some(PortId(0)));
    }
}

#[test]
fn the_band_never_empties_the_kept_set() {
    for band in [0u8, 1, 7, 200, 255] {
        let mut d = decider(Scheme::Lcmp, shift9(band));
        for i in 0..32 {
            let decision = d.on_packet(t(i), &flow(i), DC8);
            assert!(
                matches!(
                    decision,
                    Decision::New {
                        reason: Reason::HashInKept,
                        ..
                    }
                ),
                "band {band}: {decision:?}"
            );
        }
    }
}

/// The artifact's queue thresholds for a 5 GB buffer stored in 32 bits,
/// made non-decreasing: 0, then 205 032 704 for every higher level.
fn wrapped() -> QueueThresholds {
    let mut q = QueueThresholds::default();
    for p in 0..6 {
        q.ports.push(PortId(p)).expect("capacity");
    }
    q.bytes.push(0).expect("capacity");
    for _ in 1..10 {
        q.bytes.push(205_032_704).expect("capacity");
    }
    q
}

#[test]
fn explicit_queue_thresholds_move_a_congested_port_out() {
    let mut tables = testbed8_dc1(shift9(u8::MAX));
    tables.queue_thresholds.push(wrapped()).expect("capacity");
    let mut d: Decider<8, 1024> = Decider::new(DeciderConfig::default());
    d.install(&tables).expect("valid");
    let mut linear = decider(Scheme::Lcmp, shift9(u8::MAX));
    // DC6 holds 205 032 704 bytes for 41 samples 1 ms apart. The trend
    // jumps to 25 629 088 and decays by 1/8 a sample to 122 763, below the
    // first 25 Gbps level (312 500): T = 0.
    for i in 1..=41u32 {
        d.sample(t(1000 * i), PortId(4), 205_032_704).expect("port");
        linear
            .sample(t(1000 * i), PortId(4), 205_032_704)
            .expect("port");
    }
    // Wrapped: Q = 255 each time, so the duration counter reaches 41 and
    // D = 10. C_cong = (2 * 255 + 0 + 10) >> 2 = 130;
    // C = (3 * 65 + 130) >> 2 = 81, above DC7 (60) and DC5 (65).
    let e = d.explain(t(41_000), &flow(1), DC8);
    let dc6 = &e.candidates[4];
    assert_eq!(
        (dc6.q, dc6.t, dc6.d, dc6.c_cong, dc6.cost),
        (255, 0, 10, 130, 81)
    );
    assert_eq!(kept_ports(&e), [0, 2, 5], "DC6 leaves, DC7 enters");
    // Linear 5 GB thresholds: 205 MB is level 0 (Q = 25), D stays 0;
    // C_cong = 50 >> 2 = 12, C = (195 + 12) >> 2 = 51: DC6 stays.
    let e = linear.explain(t(41_000), &flow(1), DC8);
    let dc6 = &e.candidates[4];
    assert_eq!(
        (dc6.q, dc6.t, dc6.d, dc6.c_cong, dc6.cost),
        (25, 0, 0, 12, 51)
    );
    assert_eq!(kept_ports(&e), [0, 2, 4]);
    assert_eq!(d.signals(PortId(4)).map(|s| s.q), Some(255));
    assert_eq!(linear.signals(PortId(4)).map(|s| s.q), Some(25));
}

#[test]
fn bad_queue_thresholds_are_refused() {
    let with = |q: QueueThresholds| {
        let mut t = testbed8_dc1(Params::PAPER);
        t.queue_thresholds.push(q).expect("capacity");
        t.compile(8)
    };
    let mut short = wrapped();
    short.bytes.pop();
    assert_eq!(with(short), Err(Error::InvalidQueueThresholds));
    let mut down = wrapped();
    down.bytes[5] = 1;
    assert_eq!(with(down), Err(Error::InvalidQueueThresholds));
    let mut unknown = wrapped();
    unknown.ports.push(PortId(7)).expect("capacity");
    assert_eq!(with(unknown), Err(Error::QueueThresholdsPort(7)));
    let mut twice = wrapped();
    twice.ports.push(PortId(3)).expect("capacity");
    assert_eq!(with(twice), Err(Error::QueueThresholdsPort(3)));
    let mut t = testbed8_dc1(Params::PAPER);
    t.queue_thresholds.push(wrapped()).expect("capacity");
    let mut other = QueueThresholds::default();
    other.ports.push(PortId(2)).expect("capacity");
    other.bytes = wrapped().bytes;
    t.queue_thresholds.push(other).expect("capacity");
    assert_eq!(t.compile(8), Err(Error::QueueThresholdsPort(2)));
    assert!(testbed8_dc1(Params::PAPER)
        .compile(8)
        .expect("valid")
        .queue_scale(&testbed8_dc1(Params::PAPER).ports[0])
        .level(1)
        .eq(&estimator::LevelCode::level(0)));
}

#[test]
fn the_tuned_profile_keeps_the_cheapest_when_idle() {
    // Shift 10: delayScore (d * 255) >> 10 = 6, 62, 2, 24, 1, 12;
    // C_path = 36, 78, 52, 69, 64, 72; idle C = 27, 58, 39, 51, 48, 54.
    // The band of 8 keeps costs up to 35: DC2 alone.
    let tuned = Profile::Tuned.params();
    assert_eq!(tuned, Params::PAPER.with_delay_shift(10).with_band(8));
    let mut d = decider(Scheme::Lcmp, tuned);
    let e = d.explain(t(0), &flow(1), DC8);
    let cost: Vec<u8> = e.candidates.iter().map(|c| c.cost).collect();
    assert_eq!(cost, [27, 58, 39, 51, 48, 54]);
    assert_eq!(kept_ports(&e), [0]);
    // DC2's queue at 95 % of 5 GB, rising: Q = T = 255, C_cong = 95,
    // C = (108 + 95) >> 2 = 50: DC4 (39) is now the cheapest and the band
    // keeps 39..47: DC4 alone (DC6 48 is just out).
    d.sample(t(1000), PortId(0), 4_750_000_000).expect("port");
    let e = d.explain(t(1000), &flow(1), DC8);
    assert_eq!(e.candidates[0].cost, 50);
    assert_eq!(kept_ports(&e), [2]);
    let d = decider(Scheme::Lcmp, Profile::Paper.params());
    assert_eq!(kept_ports(&d.explain(t(0), &flow(1), DC8)), [0, 2, 4]);
}
