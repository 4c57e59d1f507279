//! Target 4: text (raw, or arbitrary topology and scenario values rendered
//! to JSON) into the topology and scenario parsers of `lcmp tables` and
//! `lcmp explain`; see `lcmp_fuzz::json` for the checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: lcmp_fuzz::json::JsonInput| {
    lcmp_fuzz::json::run(&input);
});
