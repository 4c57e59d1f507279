//! Target 7: byte strings (raw, or signed encodings of arbitrary tables,
//! maybe damaged) into the signed-blob installer; see `lcmp_fuzz::signed`
//! for the checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: lcmp_fuzz::signed::SignedInput| lcmp_fuzz::signed::run(&input));
