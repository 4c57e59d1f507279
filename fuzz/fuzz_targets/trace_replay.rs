//! Target 6: `lcmp replay`'s inputs, CSV traces and encoded traces, into
//! their parsers and through a decider; see `lcmp_fuzz::trace`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: lcmp_fuzz::trace::TraceInput| lcmp_fuzz::trace::run(&input));
