//! `lcmp_install_signed` called as a C caller would: a good signed blob
//! installs and reports its generation; a tampered payload, an untrusted
//! key, a replayed or older generation (below the caller's floor or the
//! running generation), an unsigned blob, a bad trusted key, a blob for
//! another switch or topology, an expired blob and a version 1 envelope
//! each get their own code, and change nothing.
#![allow(
    clippy::undocumented_unsafe_blocks,
    clippy::multiple_unsafe_ops_per_block
)]

use core::ffi::CStr;
use core::ptr;

use ::lcmp_tables::blob::signed::{public_key, sign_blob_vec, Claims, Scope};
use ::lcmp_tables::Topology;
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

/// testbed8's switch `s`'s scope.
fn scope(s: u16) -> Scope {
    Topology::embedded("testbed8").unwrap().scope(s)
}

/// `inner` signed with `seed` for `scope`, expiring at `not_after`.
fn sign_for(inner: &[u8], seed: &[u8; 32], scope: Scope, not_after: Option<u64>) -> Vec<u8> {
    sign_blob_vec(inner, seed, &Claims { scope, not_after }).unwrap()
}

/// `inner` signed for the test's device (switch 1), no expiry.
fn sign(inner: &[u8], seed: &[u8; 32]) -> Vec<u8> {
    sign_for(inner, seed, scope(1), None)
}

/// Installs on switch 1 at time `now` (0: no clock).
fn install_at(
    d: *mut lcmp_decider,
    blob: &[u8],
    keys: &[[u8; 32]],
    now: u64,
    installed: u64,
    out: &mut u64,
) -> i32 {
    let me = scope(1).to_bytes();
    unsafe {
        lcmp_install_signed(
            d,
            blob.as_ptr(),
            blob.len(),
            keys.as_ptr().cast(),
            keys.len(),
            me.as_ptr(),
            now,
            installed,
            out,
        )
    }
}

fn install(
    d: *mut lcmp_decider,
    blob: &[u8],
    keys: &[[u8; 32]],
    installed: u64,
    out: &mut u64,
) -> i32 {
    install_at(d, blob, keys, 0, installed, out)
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
    let good = sign(&testbed8_blob(1, 7), &SEED_A);
    assert_eq!(install(d, &good, &[a], 0, &mut generation), LCMP_OK);
    assert_eq!(generation, 7);
    let installed = observe(d);

    let newer = testbed8_blob(2, 8);
    let mut tampered = sign(&newer, &SEED_A);
    tampered[48 + 24 + 2] ^= 1;
    let mut v1 = sign(&newer, &SEED_A);
    v1[4] = 1;
    // Switch 2's validly signed tables (mix-and-match), and the same
    // switch id of another topology.
    let for_switch2 = sign_for(&newer, &SEED_A, scope(2), None);
    let bso13 = Topology::embedded("bso13").unwrap().scope(1);
    let other_topology = sign_for(&newer, &SEED_A, bso13, None);
    // Cheap checks before the signature: a tampered blob for another
    // switch is refused for its scope.
    let mut tampered_switch2 = for_switch2.clone();
    let last = tampered_switch2.len() - 1;
    tampered_switch2[last] ^= 1;
    let mut zero_key = [0u8; 32];
    zero_key[0] = 1; // the identity point: small order
    let cases: [Case; 13] = [
        (&tampered, vec![a], 7, LCMP_ERR_SIG_BAD_SIGNATURE),
        (&for_switch2, vec![a], 7, LCMP_ERR_SIG_WRONG_SCOPE),
        (&other_topology, vec![a], 7, LCMP_ERR_SIG_WRONG_SCOPE),
        (&tampered_switch2, vec![a], 7, LCMP_ERR_SIG_WRONG_SCOPE),
        (&v1, vec![a], 7, LCMP_ERR_SIG_UNSCOPED),
        // The caller's floor 0 while generation 7 runs: still a rollback.
        (&good, vec![a], 0, LCMP_ERR_SIG_ROLLBACK),
        (&sign(&newer, &SEED_B), vec![a], 7, LCMP_ERR_SIG_UNKNOWN_KEY),
        (&good, vec![a], 7, LCMP_ERR_SIG_ROLLBACK),
        (
            &sign(&testbed8_blob(2, 6), &SEED_A),
            vec![a],
            7,
            LCMP_ERR_SIG_ROLLBACK,
        ),
        (&newer, vec![a], 7, LCMP_ERR_SIG_UNSIGNED),
        (
            &sign(&newer, &SEED_A),
            vec![zero_key],
            7,
            LCMP_ERR_SIG_BAD_KEY,
        ),
        (&sign(&newer, &SEED_A), vec![a, a], 7, LCMP_ERR_SIG_BAD_KEY),
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
            scope(1).to_bytes().as_ptr(),
            0,
            0,
            ptr::null_mut(),
        )
    };
    assert_eq!(rc, LCMP_ERR_NULL);
    assert_eq!(observe(d), installed);

    // Rotation: the next key signs generation 8, both trusted.
    // Expiry: refused by a clock past it, taken without a clock.
    let expiring = sign_for(&newer, &SEED_B, scope(1), Some(1_000));
    let mut out = 0;
    assert_eq!(
        install_at(d, &expiring, &[a, b], 1_001, 7, &mut out),
        LCMP_ERR_SIG_EXPIRED
    );
    assert_eq!(observe(d), installed);
    let next = sign(&newer, &SEED_B);
    assert_eq!(install(d, &next, &[a, b], 7, &mut generation), LCMP_OK);
    assert_eq!(generation, 8);
    assert_ne!(observe(d), installed);
}

/// The spare-tables-object recipe (docs/tables.md, "What a device
/// persists"): verify and compile into an `lcmp_tables` object that no
/// decider reads, persist the generation, and only then let the decider
/// read it. A crash between the install and the persist leaves the old
/// tables running and the old floor; the floor of the object itself is
/// its own generation, whatever the caller passes.
#[test]
fn spare_tables_object_lets_firmware_persist_before_use() {
    let caller = CallerDecider::new();
    let d = caller.handle;
    let a = public_key(&SEED_A);
    let me = scope(1).to_bytes();
    let mut memory = vec![common::Line([0; 64]); lcmp_tables_size().div_ceil(64)];
    let mut spare = ptr::null_mut();
    let rc = unsafe { lcmp_tables_init(memory.as_mut_ptr().cast(), memory.len() * 64, &mut spare) };
    assert_eq!(rc, LCMP_OK);
    let install_spare = |blob: &[u8], floor: u64, out: &mut u64| unsafe {
        lcmp_tables_install_signed(
            spare,
            blob.as_ptr(),
            blob.len(),
            a.as_ptr(),
            1,
            me.as_ptr(),
            0,
            floor,
            out,
        )
    };
    let blob = sign(&testbed8_blob(1, 5), &SEED_A);
    let mut persisted = 0u64;
    let mut got = 0u64;
    assert_eq!(install_spare(&blob, persisted, &mut got), LCMP_OK);
    // Not in use yet: the decider still has no tables.
    let before = observe(d);
    persisted = got; // the firmware's flash write
    assert_eq!(unsafe { lcmp_use_tables(d, spare) }, LCMP_OK);
    assert_ne!(observe(d), before);
    let mut g = 0;
    assert_eq!(unsafe { lcmp_generation(d, &mut g) }, LCMP_OK);
    assert_eq!((g, persisted), (5, 5));
    // The object's own generation is a floor too (the caller passes 0).
    assert_eq!(unsafe { lcmp_release_tables(d) }, LCMP_OK);
    assert_eq!(install_spare(&blob, 0, &mut got), LCMP_ERR_SIG_ROLLBACK);
}

/// `lcmp_verify_signed` with switch 1's scope and no clock.
fn verify(blob: &[u8], keys: &[[u8; 32]], floor: u64, out: &mut (u64, u64)) -> i32 {
    let me = scope(1).to_bytes();
    unsafe {
        lcmp_verify_signed(
            blob.as_ptr(),
            blob.len(),
            keys.as_ptr().cast(),
            keys.len(),
            me.as_ptr(),
            0,
            floor,
            &mut out.0,
            &mut out.1,
        )
    }
}

/// The verify-then-persist-then-install sequence of docs/firmware.md:
/// `lcmp_verify_signed` reports the generation and key id and changes no
/// running tables; the install then takes the same bytes with the floor
/// from before the persist; every refusal writes nothing.
#[test]
fn verify_only_reports_generation_and_key_and_changes_nothing() {
    let caller = CallerDecider::new();
    let d = caller.handle;
    let (a, b) = (public_key(&SEED_A), public_key(&SEED_B));
    let mut g = 0;
    let first = sign(&testbed8_blob(1, 7), &SEED_A);
    assert_eq!(install(d, &first, &[a], 0, &mut g), LCMP_OK);
    let running = observe(d);
    let newer = sign(&testbed8_blob(2, 8), &SEED_B);
    let mut out = (0u64, 0u64);
    assert_eq!(verify(&newer, &[a, b], 7, &mut out), LCMP_OK);
    // The key id: the first 8 bytes of the signer's public key.
    let id_b = u64::from_le_bytes(b[..8].try_into().unwrap());
    assert_eq!(out, (8, id_b));
    // The running tables did not change.
    assert_eq!(observe(d), running);
    assert_eq!(unsafe { lcmp_generation(d, &mut g) }, LCMP_OK);
    assert_eq!(g, 7);
    let persisted = out.0; // the firmware's flash write
                           // The persisted generation is a floor: the same blob is a rollback
                           // now, so the install passes the floor from before the persist.
    assert_eq!(
        verify(&newer, &[a, b], persisted, &mut out),
        LCMP_ERR_SIG_ROLLBACK
    );
    assert_eq!(install(d, &newer, &[a, b], 7, &mut g), LCMP_OK);
    assert_eq!(g, 8);
    assert_ne!(observe(d), running);
    // Refusals, cheap checks first, nothing written.
    let mut tampered = sign(&testbed8_blob(1, 9), &SEED_A);
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    let short = sign(&testbed8_blob(1, 9), &SEED_A);
    let cases: [(Vec<u8>, Vec<[u8; 32]>, i32); 6] = [
        (tampered, vec![a], LCMP_ERR_SIG_BAD_SIGNATURE),
        (
            sign_for(&testbed8_blob(1, 9), &SEED_A, scope(2), None),
            vec![a],
            LCMP_ERR_SIG_WRONG_SCOPE,
        ),
        (
            sign(&testbed8_blob(1, 9), &SEED_B),
            vec![a],
            LCMP_ERR_SIG_UNKNOWN_KEY,
        ),
        (
            sign(&testbed8_blob(1, 8), &SEED_A),
            vec![a],
            LCMP_ERR_SIG_ROLLBACK,
        ),
        (testbed8_blob(1, 9), vec![a], LCMP_ERR_SIG_UNSIGNED),
        (
            short[..short.len() - 1].to_vec(),
            vec![a],
            LCMP_ERR_BLOB_TRUNCATED,
        ),
    ];
    let after = observe(d);
    for (blob, keys, want) in cases {
        let mut out = (12345, 678);
        assert_eq!(verify(&blob, &keys, 8, &mut out), want);
        assert_eq!(out, (12345, 678), "code {want}: an output written");
    }
    assert_eq!(observe(d), after);
    // Null outputs are errors before anything else.
    let ok = sign(&testbed8_blob(1, 9), &SEED_A);
    let me = scope(1).to_bytes();
    let mut generation = 0;
    let rc = unsafe {
        lcmp_verify_signed(
            ok.as_ptr(),
            ok.len(),
            a.as_ptr(),
            1,
            me.as_ptr(),
            0,
            8,
            &mut generation,
            ptr::null_mut(),
        )
    };
    assert_eq!((rc, generation), (LCMP_ERR_NULL, 0));
}
