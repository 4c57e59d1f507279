//! Target 2: the same event sequences through `lcmp-decide` and through the
//! `std` reference model `lcmp_fuzz::model`; every result must be equal.
//! `cargo +nightly fuzz fmt differential FILE` prints an input.
#![no_main]

libfuzzer_sys::fuzz_target!(|s: lcmp_fuzz::input::Scenario| {
    lcmp_fuzz::differential::run_scenario(&s);
});
