//! What the C-ABI integration tests share: a decider in caller memory,
//! made as a C caller makes one, and testbed8's blobs.
#![allow(dead_code)] // each test binary uses part of it

use core::ptr;

use ::lcmp_tables::blob::encode_blob_vec;
use ::lcmp_tables::{build_tables, BuildOptions, Topology};
use lcmp_ffi::*;

/// A 64-byte-aligned line of caller memory.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Line(pub(crate) [u8; 64]);

/// A decider of `LCMP_FLOWS` flows initialised (default config) in
/// zeroed caller memory that lives as long as this value.
pub(crate) struct CallerDecider {
    _memory: Vec<Line>,
    /// The handle `lcmp_decider_init` returned.
    pub(crate) handle: *mut lcmp_decider,
}

impl CallerDecider {
    pub(crate) fn new() -> Self {
        let mut memory = vec![Line([0; 64]); lcmp_decider_size(LCMP_FLOWS).div_ceil(64)];
        let mut handle = ptr::null_mut();
        // SAFETY: the memory is writable for its whole length and outlives
        // the handle (both are in `Self`; a Vec's buffer does not move).
        let rc = unsafe {
            lcmp_decider_init(
                memory.as_mut_ptr().cast(),
                memory.len() * 64,
                LCMP_FLOWS,
                ptr::null(),
                &mut handle,
            )
        };
        assert_eq!(rc, LCMP_OK);
        CallerDecider {
            _memory: memory,
            handle,
        }
    }
}

/// The blob of testbed8's switch `switch` (default build options) at
/// `generation`.
pub(crate) fn testbed8_blob(switch: u16, generation: u64) -> Vec<u8> {
    let topo = Topology::embedded("testbed8").unwrap();
    encode_blob_vec(
        &build_tables(&topo, switch, &BuildOptions::default()).unwrap(),
        generation,
    )
    .unwrap()
}
