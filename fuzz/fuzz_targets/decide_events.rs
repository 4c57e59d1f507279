//! Target 1: arbitrary event sequences against a small decider, with the
//! invariants of `lcmp_fuzz::events` checked after every event.
//! `cargo +nightly fuzz fmt decide_events FILE` prints an input.
#![no_main]

libfuzzer_sys::fuzz_target!(|s: lcmp_fuzz::input::Scenario| lcmp_fuzz::events::run_scenario(&s));
