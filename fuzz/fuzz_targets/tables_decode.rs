//! Target 3: byte strings (raw, or with a correct header, or damaged
//! encodings of arbitrary tables) into the table-blob decoder; see
//! `lcmp_fuzz::blob` for the checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: lcmp_fuzz::blob::BlobInput| lcmp_fuzz::blob::run(&input));
