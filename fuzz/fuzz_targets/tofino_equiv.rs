//! Target 5: the Tofino frontend's entries and interpreter against
//! `lcmp-decide`, packet by packet; see `lcmp_fuzz::tofino`.
#![no_main]

libfuzzer_sys::fuzz_target!(|input: lcmp_fuzz::tofino::TofinoInput| lcmp_fuzz::tofino::run(&input));
