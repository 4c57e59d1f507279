//! Installing signed table blobs through the C ABI: [`lcmp_install_signed`]
//! verifies an Ed25519-signed blob (`lcmp_tables::blob::signed`) against
//! one or two trusted public keys and the rollback rule before it installs
//! the tables, with its own status codes for each refusal.

use core::ffi::CStr;

use ::lcmp_tables::blob::signed::{
    decode_verified_into, TrustedKey, TrustedKeys, Unsigned, PUBLIC_KEY_LEN,
};
use ::lcmp_tables::{SignatureError, TablesError};

use crate::codes::{
    blob_error_code, LCMP_ERR_INVALID_ARGUMENT, LCMP_ERR_MISALIGNED, LCMP_ERR_NULL, LCMP_OK,
};
use crate::shared::{compile_body, install_own};
use crate::{boundary, lcmp_decider, lcmp_tables};
use lcmp_decide::Tables;

/// Bytes of one Ed25519 public key (RFC 8032 encoding).
pub const LCMP_PUBLIC_KEY_LEN: usize = 32;
/// Most trusted keys at once (two during a key rotation).
pub const LCMP_MAX_TRUSTED_KEYS: usize = 2;
/// The signed blob's signature does not verify under the trusted key it
/// names: it was changed after signing, or signed by another key.
pub const LCMP_ERR_SIG_BAD_SIGNATURE: i32 = -40;
/// The signed blob names a key id that no trusted key has.
pub const LCMP_ERR_SIG_UNKNOWN_KEY: i32 = -41;
/// The blob's generation is not newer than the installed one (rollback or
/// replay).
pub const LCMP_ERR_SIG_ROLLBACK: i32 = -42;
/// An unsigned table blob where a signed one is required.
pub const LCMP_ERR_SIG_UNSIGNED: i32 = -43;
/// A trusted public key is not a valid Ed25519 key, or two trusted keys
/// share a key id.
pub const LCMP_ERR_SIG_BAD_KEY: i32 = -44;

const _: () = assert!(LCMP_PUBLIC_KEY_LEN == PUBLIC_KEY_LEN);

/// The status code of a signed-install error.
pub fn signed_error_code(e: TablesError) -> i32 {
    match e {
        TablesError::Signature(SignatureError::BadSignature) => LCMP_ERR_SIG_BAD_SIGNATURE,
        TablesError::Signature(SignatureError::UnknownKey(_)) => LCMP_ERR_SIG_UNKNOWN_KEY,
        TablesError::Signature(SignatureError::Rollback { .. }) => LCMP_ERR_SIG_ROLLBACK,
        TablesError::Signature(SignatureError::Unsigned) => LCMP_ERR_SIG_UNSIGNED,
        TablesError::Signature(_) => LCMP_ERR_SIG_BAD_KEY,
        other => blob_error_code(other),
    }
}

/// The messages of the signed-install codes (`None` for other codes).
pub fn signed_strerror(code: i32) -> Option<&'static CStr> {
    Some(match code {
        LCMP_ERR_SIG_BAD_SIGNATURE => {
            c"bad signature: the blob was changed or signed by another key"
        }
        LCMP_ERR_SIG_UNKNOWN_KEY => c"signed by a key that is not trusted",
        LCMP_ERR_SIG_ROLLBACK => c"rollback: generation not newer than the installed one",
        LCMP_ERR_SIG_UNSIGNED => c"unsigned blob: only signed blobs are accepted",
        LCMP_ERR_SIG_BAD_KEY => c"trusted key not a valid Ed25519 public key, or a duplicate",
        _ => return None,
    })
}

/// The trusted keys of `n` contiguous 32-byte public keys.
fn trusted(keys: &[u8]) -> Result<TrustedKeys, i32> {
    let key = |i: usize| -> Result<TrustedKey, i32> {
        let bytes = keys
            .get(i * PUBLIC_KEY_LEN..(i + 1) * PUBLIC_KEY_LEN)
            .and_then(|b| <[u8; PUBLIC_KEY_LEN]>::try_from(b).ok())
            .ok_or(LCMP_ERR_INVALID_ARGUMENT)?;
        TrustedKey::new(bytes).map_err(signed_error_code)
    };
    match keys.len() / PUBLIC_KEY_LEN {
        1 => Ok(TrustedKeys::one(key(0)?)),
        2 => TrustedKeys::two(key(0)?, key(1)?).map_err(signed_error_code),
        _ => Err(LCMP_ERR_INVALID_ARGUMENT),
    }
}

/// Verifies a signed table blob (the `LCMS` envelope of `lcmp tables
/// sign`) and installs its tables, like `lcmp_install` (hitless).
///
/// `keys` holds `n_keys` (1, or 2 during a rotation) trusted Ed25519 public
/// keys of `LCMP_PUBLIC_KEY_LEN` bytes each, back to back.
/// `installed_generation` is the generation of the tables installed now (0
/// for none); the blob's must be greater. On success its generation is
/// written to `*out_generation`: keep it (in storage that survives a
/// reset) and pass it next time. Unsigned blobs are refused
/// (`LCMP_ERR_SIG_UNSIGNED`; `lcmp_install` takes them).
///
/// Errors: `LCMP_ERR_NULL` / `LCMP_ERR_MISALIGNED` (a pointer),
/// `LCMP_ERR_INVALID_ARGUMENT` (`n_keys` not 1 or 2),
/// `LCMP_ERR_SIG_BAD_KEY`, `LCMP_ERR_SIG_UNKNOWN_KEY`,
/// `LCMP_ERR_SIG_BAD_SIGNATURE`, `LCMP_ERR_SIG_ROLLBACK`, then the blob and
/// table codes of `lcmp_install`. On any error nothing changes: not the
/// decider, not `*out_generation`.
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time; `blob`
/// must be readable for `len` bytes, `keys` for `n_keys *
/// LCMP_PUBLIC_KEY_LEN` bytes, and `out_generation` writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_install_signed(
    d: *mut lcmp_decider,
    blob: *const u8,
    len: usize,
    keys: *const u8,
    n_keys: usize,
    installed_generation: u64,
    out_generation: *mut u64,
) -> i32 {
    let d = handle_mut!(d);
    let (blob, keys) = try_boundary!(signed_inputs(blob, len, keys, n_keys, out_generation));
    // Verified and decoded into the tables object's scratch, then
    // installed in place: the decider is unchanged on error.
    let decode = |s: &mut Tables| verified(blob, &keys, installed_generation, s);
    // SAFETY: `out_generation` is writable by this function's contract.
    unsafe { reported(install_own(d, decode), out_generation) }
}

/// `lcmp_install_signed` into a shared tables object: the checks of
/// `lcmp_install_signed`, then those of `lcmp_tables_install`
/// (`LCMP_ERR_TABLES_IN_USE` while any decider uses it). On any error
/// nothing changes: not the object, not `*out_generation`.
///
/// # Safety
/// `t` must be a live tables object; `blob` readable for `len` bytes,
/// `keys` for `n_keys * LCMP_PUBLIC_KEY_LEN` bytes, and `out_generation`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_tables_install_signed(
    t: *mut lcmp_tables,
    blob: *const u8,
    len: usize,
    keys: *const u8,
    n_keys: usize,
    installed_generation: u64,
    out_generation: *mut u64,
) -> i32 {
    let t = tables_ref!(t);
    let (blob, keys) = try_boundary!(signed_inputs(blob, len, keys, n_keys, out_generation));
    let decode = |s: &mut Tables| verified(blob, &keys, installed_generation, s);
    // SAFETY: `out_generation` is writable by this function's contract.
    unsafe { reported(t.write(|body| compile_body(body, decode)), out_generation) }
}

/// A signed install's C result: `LCMP_OK` with the installed generation
/// written to `*out_generation`, or the install's code (nothing written).
///
/// # Safety
/// `out_generation` must be null (an error) or writable.
unsafe fn reported(installed: Result<u64, i32>, out_generation: *mut u64) -> i32 {
    let generation = match installed {
        Ok(generation) => generation,
        Err(code) => return code,
    };
    output!(out_generation, generation);
    LCMP_OK
}

/// Verifies `blob` and decodes it into `scratch`; its generation.
fn verified(
    blob: &[u8],
    keys: &TrustedKeys,
    installed_generation: u64,
    scratch: &mut Tables,
) -> Result<u64, i32> {
    decode_verified_into(blob, keys, installed_generation, Unsigned::Reject, scratch)
        .map(|v| v.generation)
        .map_err(signed_error_code)
}

/// The checked arguments of both signed installs, in their documented
/// order: the blob, the key count, the keys, the output pointer (checked
/// before anything changes, so that the final write cannot fail), the keys'
/// validity.
///
/// # Safety
/// `blob` must be null or readable for `len` bytes, `keys` for `n_keys *
/// LCMP_PUBLIC_KEY_LEN` bytes.
unsafe fn signed_inputs<'a>(
    blob: *const u8,
    len: usize,
    keys: *const u8,
    n_keys: usize,
    out_generation: *mut u64,
) -> Result<(&'a [u8], TrustedKeys), i32> {
    // SAFETY: forwarded contract.
    let blob = unsafe { boundary::bytes(blob, len) }?;
    if !(1..=LCMP_MAX_TRUSTED_KEYS).contains(&n_keys) {
        return Err(LCMP_ERR_INVALID_ARGUMENT);
    }
    // SAFETY: forwarded contract.
    let keys = unsafe { boundary::bytes(keys, n_keys * PUBLIC_KEY_LEN) }?;
    if out_generation.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    if !out_generation.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    Ok((blob, trusted(keys)?))
}
