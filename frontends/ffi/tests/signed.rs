//! `lcmp_install_signed` called as a C caller would: a good signed blob
//! installs and reports its generation; a tampered payload, an untrusted
//! key, a replayed or older generation, an unsigned blob and a bad trusted
//! key each get their own code, and change nothing.
#![allow(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block
)]

use core::ffi::CStr;
use core::ptr;

use ::lcmp_tables::blob::signed::{public_key, sign_blob_vec};
use lcmp_ffi::*;

mod common;
use common::{testbed8_blob, CallerDecider};

const SEED_A: [u8; 32] = [0x31; 32];
const SEED_B: [u8; 32] = [0x32; 32];

fn flow() -> lcmp_flow {
    let mut f = lcmp_flow {
        src: [0; 16],
        dst: [0; 16],
        sport: 1000,
        dport: 4791,
        proto: 17,
        family: LCMP_FAMILY_V4,
    };
    f.src[..4].copy_from_slice(&[10, 0, 0, 1]);
    f.dst[..4].copy_from_slice(&[10, 8, 0, 1]);
    f
}

/// What the C side sees of the installed tables: the explanation of a
/// flow towards DC8 (switch DC1's group) and towards DC1 (DC2's).
fn observe(d: *mut lcmp_decider) -> String {
    let mut out = String::new();
    for group in [8, 1] {
        let mut e = lcmp_explanation::default();
        let rc = unsafe { lcmp_explain(d, 100, &flow(), group, &mut e) };
        out.push_str(&format!("{rc} {e:?}\n"));
    }
    out
}

fn install(
    d: *mut lcmp_decider,
    blob: &[u8],
    keys: &[[u8; 32]],
    installed: u64,
    out: &mut u64,
) -> i32 {
    unsafe {
        lcmp_install_signed(
            d,
            blob.as_ptr(),
            blob.len(),
            keys.as_ptr().cast(),
            keys.len(),
            installed,
            out,
        )
    }
}

/// A refused install: the blob, the trusted keys, the installed
/// generation, the status code.
type Case<'a> = (&'a [u8], Vec<[u8; 32]>, u64, i32);

#[test]
fn signed_install_and_each_refusal() {
    let caller = CallerDecider::new();
    let d = caller.handle;
    let (a, b) = (public_key(&SEED_A), public_key(&SEED_B));
    let mut generation = 0;
    let good = sign_blob_vec(&testbed8_blob(1, 7), &SEED_A).unwrap();
    assert_eq!(install(d, &good, &[a], 0, &mut generation), LCMP_OK);
    assert_eq!(generation, 7);
    let installed = observe(d);

    let newer = testbed8_blob(2, 8);
    let mut tampered = sign_blob_vec(&newer, &SEED_A).unwrap();
    tampered[20 + 24 + 2] ^= 1;
    let mut zero_key = [0u8; 32];
    zero_key[0] = 1; // the identity point: small order
    let cases: [Case; 8] = [
        (&tampered, vec![a], 7, LCMP_ERR_SIG_BAD_SIGNATURE),
        (
            &sign_blob_vec(&newer, &SEED_B).unwrap(),
            vec![a],
            7,
            LCMP_ERR_SIG_UNKNOWN_KEY,
        ),
        (&good, vec![a], 7, LCMP_ERR_SIG_ROLLBACK),
        (
            &sign_blob_vec(&testbed8_blob(2, 6), &SEED_A).unwrap(),
            vec![a],
            7,
            LCMP_ERR_SIG_ROLLBACK,
        ),
        (&newer, vec![a], 7, LCMP_ERR_SIG_UNSIGNED),
        (
            &sign_blob_vec(&newer, &SEED_A).unwrap(),
            vec![zero_key],
            7,
            LCMP_ERR_SIG_BAD_KEY,
        ),
        (
            &sign_blob_vec(&newer, &SEED_A).unwrap(),
            vec![a, a],
            7,
            LCMP_ERR_SIG_BAD_KEY,
        ),
        (&good[..good.len() - 1], vec![a], 0, LCMP_ERR_BLOB_TRUNCATED),
    ];
    for (bytes, keys, installed_gen, want) in cases {
        let mut out = 12345;
        assert_eq!(install(d, bytes, &keys, installed_gen, &mut out), want);
        assert_eq!(out, 12345, "code {want}: out_generation written");
        assert_eq!(observe(d), installed, "code {want}: the decider changed");
        let msg = unsafe { CStr::from_ptr(lcmp_strerror(want)) };
        assert_ne!(msg.to_str().unwrap(), "unknown error code", "{want}");
    }
    // Argument errors.
    let mut out = 0;
    assert_eq!(
        install(d, &good, &[], 0, &mut out),
        LCMP_ERR_INVALID_ARGUMENT
    );
    assert_eq!(
        install(d, &good, &[a, b, a], 0, &mut out),
        LCMP_ERR_INVALID_ARGUMENT
    );
    let rc = unsafe {
        lcmp_install_signed(
            d,
            good.as_ptr(),
            good.len(),
            a.as_ptr(),
            1,
            0,
            ptr::null_mut(),
        )
    };
    assert_eq!(rc, LCMP_ERR_NULL);
    assert_eq!(observe(d), installed);

    // Rotation: the next key signs generation 8, both trusted.
    let next = sign_blob_vec(&newer, &SEED_B).unwrap();
    assert_eq!(install(d, &next, &[a, b], 7, &mut generation), LCMP_OK);
    assert_eq!(generation, 8);
    assert_ne!(observe(d), installed);
}
