//! Fuzzing support for LCMP-rs (issue 8): structured inputs ([`input`]),
//! a `std` reference model ([`model`]) and the two drivers the fuzz
//! targets call, [`events::run`] (invariants after every event) and
//! [`differential::run`] (crate vs model, decision by decision).
//!
//! The drivers panic on a violated invariant; libFuzzer turns the panic into
//! a crash artifact. They also build on stable, so `cargo test` here runs
//! the model's golden tests and replays the committed seed corpora.

pub mod differential;
pub mod events;
pub mod input;
pub mod model;

/// Replays every file under `fuzz/corpus/<target>/` through `f`
/// (used by the unit tests; the fuzzer replays corpora itself).
#[cfg(test)]
pub(crate) fn replay_corpus(target: &str, f: impl Fn(&[u8])) -> usize {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut n = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if let Ok(bytes) = std::fs::read(e.path()) {
                f(&bytes);
                n += 1;
            }
        }
    }
    n
}
