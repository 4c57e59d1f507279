//! The `trace_replay` driver: the inputs of `lcmp replay` and of the
//! firmware's trace player. CSV text into `lcmp_tables::replay::parse_csv`
//! (with and without a topology to resolve DC names), and bytes into the
//! encoded-trace reader `TraceReader`.
//!
//! Checks: both parsers give events or a typed error, never panic; parsed
//! CSV events encode, and the encoding reads back to the same events; the
//! events replay through a decider with testbed8 DC1's tables, and the
//! replay is deterministic (a second decider gives the same digest) and
//! counts one decision per packet. Bytes that the reader accepts re-encode
//! to themselves.

use std::sync::atomic::{AtomicU64, Ordering};

use arbitrary::Arbitrary;
use lcmp_decide::DeciderConfig;
use lcmp_tables::replay::{
    encode_trace_vec, parse_csv, replay, ReplayDecider, TraceEvent, TraceReader,
};
use lcmp_tables::{build_tables, BuildOptions, Topology};

use crate::input::Bytes;

/// Decisions replayed so far (the seed test checks the target is not vacuous).
pub static DECISIONS: AtomicU64 = AtomicU64::new(0);

/// One `trace_replay` input.
#[derive(Arbitrary, Debug)]
pub enum TraceInput {
    /// CSV text, DC ids as numbers.
    Csv(Bytes),
    /// CSV text, DC names resolved in testbed8.
    CsvNamed(Bytes),
    /// An encoded trace.
    Encoded(Bytes),
}

/// Runs one input.
pub fn run(input: &TraceInput) {
    let topo = Topology::embedded("testbed8").expect("embedded");
    match input {
        TraceInput::Csv(Bytes(b)) => csv(&String::from_utf8_lossy(b), None, &topo),
        TraceInput::CsvNamed(Bytes(b)) => csv(&String::from_utf8_lossy(b), Some(&topo), &topo),
        TraceInput::Encoded(Bytes(b)) => {
            let reader = match TraceReader::new(b) {
                Ok(r) => r,
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    return;
                }
            };
            let events: Result<Vec<TraceEvent>, _> = reader.take(100_000).collect();
            match events {
                Ok(events) => {
                    if let Ok(again) = encode_trace_vec(&events) {
                        assert_eq!(again, *b, "an accepted trace re-encodes differently");
                    }
                    play(&events, &topo);
                }
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
    }
}

fn csv(text: &str, names: Option<&Topology>, topo: &Topology) {
    let events = match parse_csv(text, names) {
        Ok(events) => events,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    if let Ok(bytes) = encode_trace_vec(&events) {
        let back: Vec<TraceEvent> = TraceReader::new(&bytes)
            .expect("own header")
            .collect::<Result<_, _>>()
            .expect("own events");
        assert_eq!(back, events, "encoded trace reads back differently");
    }
    play(&events, topo);
}

fn play(events: &[TraceEvent], topo: &Topology) {
    let tables = build_tables(topo, 1, &BuildOptions::default()).expect("testbed8 DC1");
    let run = || {
        let mut d = Box::new(ReplayDecider::new(DeciderConfig::default()));
        d.install(&tables).expect("valid");
        replay(&mut d, events.iter().copied().map(Ok), |_| {})
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b, "replay is not deterministic");
    if let Ok(summary) = a {
        let packets = events
            .iter()
            .filter(|e| matches!(e, TraceEvent::Packet { .. }))
            .count();
        assert_eq!(summary.decisions, packets as u64);
        DECISIONS.fetch_add(summary.decisions, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod test {
    use arbitrary::{Arbitrary, Unstructured};

    #[test]
    fn seed_corpus_passes() {
        let n = crate::replay_corpus("trace_replay", |data| {
            if let Ok(i) = super::TraceInput::arbitrary_take_rest(Unstructured::new(data)) {
                super::run(&i);
            }
        });
        assert!(n > 0, "no seeds");
        // The hand-made seeds (CSV with names and ids, encoded) replay.
        assert!(super::DECISIONS.load(std::sync::atomic::Ordering::Relaxed) >= 3 * 20);
    }
}
