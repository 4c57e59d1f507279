//! Installing signed table blobs through the C ABI: [`lcmp_install_signed`]
//! verifies an Ed25519-signed blob (`lcmp_tables::blob::signed`) against
//! one or two trusted public keys and the rollback rule before it installs
//! the tables, with its own status codes for each refusal.

use ::lcmp_tables::blob::signed::{
    decode_verified_valid, verify_signed, Device, Scope, TrustedKey, TrustedKeys, Unsigned,
    PUBLIC_KEY_LEN,
};

use lcmp_decide::Tables;

use crate::boundary::{lcmp_decider, lcmp_tables, TablesBody};
use crate::codes::{tables_error_code, LCMP_ERR_INVALID_ARGUMENT, LCMP_OK};
use crate::shared::{compile_body, install_own, Decoded};

/// Bytes of one Ed25519 public key (RFC 8032 encoding).
pub const LCMP_PUBLIC_KEY_LEN: usize = 32;
/// Most trusted keys at once (two during a key rotation).
pub const LCMP_MAX_TRUSTED_KEYS: usize = 2;
/// Bytes of a device's scope (`lcmp tables scope` prints them in hex):
/// the switch id (`uint16_t`, little-endian), two zero bytes, the
/// topology's 16-byte digest.
pub const LCMP_SCOPE_LEN: usize = 20;

const _: () = assert!(LCMP_PUBLIC_KEY_LEN == PUBLIC_KEY_LEN);

/// The trusted keys of `n` contiguous 32-byte public keys.
fn trusted(keys: &[u8]) -> Result<TrustedKeys, i32> {
    let key = |i: usize| -> Result<TrustedKey, i32> {
        let bytes = keys
            .get(i * PUBLIC_KEY_LEN..(i + 1) * PUBLIC_KEY_LEN)
            .and_then(|b| <[u8; PUBLIC_KEY_LEN]>::try_from(b).ok())
            .ok_or(LCMP_ERR_INVALID_ARGUMENT)?;
        TrustedKey::new(bytes).map_err(tables_error_code)
    };
    match keys.len() / PUBLIC_KEY_LEN {
        1 => Ok(TrustedKeys::one(key(0)?)),
        2 => TrustedKeys::two(key(0)?, key(1)?).map_err(tables_error_code),
        _ => Err(LCMP_ERR_INVALID_ARGUMENT),
    }
}

/// Verifies a signed table blob (the `LCMS` envelope of `lcmp tables
/// sign`) and installs its tables, like `lcmp_install` (hitless).
///
/// `keys` holds `n_keys` (1, or 2 during a rotation) trusted Ed25519 public
/// keys of `LCMP_PUBLIC_KEY_LEN` bytes each, back to back. `scope` is this
/// device's `LCMP_SCOPE_LEN`-byte scope (`lcmp tables scope --topology F
/// --switch S`): a blob signed for another switch or topology is
/// `LCMP_ERR_SIG_WRONG_SCOPE`. `now` is the time in Unix seconds from a
/// clock the device trusts, or 0 for none (a signed expiry is then not
/// checked; else a blob past it is `LCMP_ERR_SIG_EXPIRED`).
/// `installed_generation` is the floor the caller persisted (0 for none);
/// the blob's generation must be greater than it and than the generation
/// the decider runs (`lcmp_generation`), whichever is larger. The scope,
/// the expiry and the generation are checked before the signature, so a
/// replayed or misdirected blob costs no verification. On success the
/// generation is written to `*out_generation`.
///
/// What firmware persists (docs/firmware.md, "What firmware persists"),
/// because the library keeps nothing across a reset: the last installed
/// generation per trusted key id (`*out_key_id` of `lcmp_verify_signed`),
/// written atomically (a torn write must leave the old value), and passed
/// as `installed_generation` next time: the largest among the keys still
/// trusted (a retired key's generations no longer bind; its blobs are
/// refused by key id). The scope and the trusted keys are provisioned
/// configuration, not written from the management channel. Persist before
/// the tables are used: verify first (`lcmp_verify_signed`), persist, then
/// install with the floor from before; or install into a spare
/// `lcmp_tables` object with `lcmp_tables_install_signed`, persist, then
/// `lcmp_use_tables`.
/// Unsigned blobs are refused (`LCMP_ERR_SIG_UNSIGNED`; `lcmp_install`
/// takes them).
///
/// Errors: `LCMP_ERR_NULL` / `LCMP_ERR_MISALIGNED` (a pointer),
/// `LCMP_ERR_INVALID_ARGUMENT` (`n_keys` not 1 or 2, or a scope whose
/// reserved bytes are not 0), `LCMP_ERR_SIG_BAD_KEY`,
/// `LCMP_ERR_SIG_UNSCOPED`, `LCMP_ERR_SIG_WRONG_SCOPE`,
/// `LCMP_ERR_SIG_EXPIRED`, `LCMP_ERR_SIG_ROLLBACK`,
/// `LCMP_ERR_SIG_UNKNOWN_KEY`, `LCMP_ERR_SIG_BAD_SIGNATURE`, then the blob
/// and table codes of `lcmp_install`. On any error nothing changes: not the
/// decider, not `*out_generation`.
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time; `blob`
/// must be readable for `len` bytes, `keys` for `n_keys *
/// LCMP_PUBLIC_KEY_LEN` bytes, `scope` for `LCMP_SCOPE_LEN` bytes, and
/// `out_generation` writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_install_signed(
    d: *mut lcmp_decider,
    blob: *const u8,
    len: usize,
    keys: *const u8,
    n_keys: usize,
    scope: *const u8,
    now: u64,
    installed_generation: u64,
    out_generation: *mut u64,
) -> i32 {
    let d = handle_mut!(d);
    // The arguments in their documented order: the blob, the key count,
    // the keys, the output (checked before anything changes, so that the
    // final write cannot fail), the keys' validity, the scope.
    let blob = bytes!(blob, len);
    let keys = bytes!(keys, try_code!(keys_len(n_keys)));
    let out_generation = out!(out_generation);
    let keys = try_code!(trusted(keys));
    let device = try_code!(device(bytes!(scope, LCMP_SCOPE_LEN), now));
    // The floor: the caller's, or the running generation if larger (a
    // caller that passes 0 cannot roll the decider back).
    let floor = installed_generation.max(d.generation);
    // Verified and decoded into the tables object's scratch, then
    // installed in place: the decider is unchanged on error.
    let installed = install_own(d, |s| verified(blob, &keys, &device, floor, s));
    out_generation.write(try_code!(installed));
    LCMP_OK
}

/// `lcmp_install_signed` into a shared tables object: the checks of
/// `lcmp_install_signed`, then those of `lcmp_tables_install`
/// (`LCMP_ERR_TABLES_IN_USE` while any decider uses it). On any error
/// nothing changes: not the object, not `*out_generation`.
///
/// The floor is the larger of `installed_generation` and the object's own
/// generation. This is the spare-object recipe for firmware that must
/// persist the generation before the tables are used: install into a
/// spare object no decider reads, persist `*out_generation`, then
/// `lcmp_use_tables` it.
///
/// # Safety
/// `t` must be a live tables object; `blob` readable for `len` bytes,
/// `keys` for `n_keys * LCMP_PUBLIC_KEY_LEN` bytes, `scope` for
/// `LCMP_SCOPE_LEN` bytes, and `out_generation` writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_tables_install_signed(
    t: *mut lcmp_tables,
    blob: *const u8,
    len: usize,
    keys: *const u8,
    n_keys: usize,
    scope: *const u8,
    now: u64,
    installed_generation: u64,
    out_generation: *mut u64,
) -> i32 {
    let t = tables_ref!(t);
    // As in `lcmp_install_signed`.
    let blob = bytes!(blob, len);
    let keys = bytes!(keys, try_code!(keys_len(n_keys)));
    let out_generation = out!(out_generation);
    let keys = try_code!(trusted(keys));
    let device = try_code!(device(bytes!(scope, LCMP_SCOPE_LEN), now));
    // An empty object has no generation; the reference is dropped at once
    // (holding it would make the install `LCMP_ERR_TABLES_IN_USE`).
    let current = t.acquire().map_or(0, |r| r.generation());
    let floor = installed_generation.max(current);
    let decode =
        |body: &mut TablesBody| compile_body(body, |s| verified(blob, &keys, &device, floor, s));
    out_generation.write(try_code!(t.write(decode)));
    LCMP_OK
}

/// Verifies a signed table blob without installing it: the checks of
/// `lcmp_install_signed`, in its order (scope, expiry and generation before
/// the signature), then the inner blob's header and CRC; the tables
/// themselves are decoded and checked only by an install. No decider or
/// tables object is read or changed. On success the blob's generation is
/// written to `*out_generation` and the id of the key that signed it (the
/// first 8 bytes of its public key, little-endian; `lcmp tables verify`
/// prints it) to `*out_key_id`; on any error neither is written.
///
/// This is how firmware persists a generation before the tables are used
/// (docs/firmware.md, "What firmware persists"): verify with the floor it
/// persisted (and at least `lcmp_generation` of the decider), write the
/// generation and key id to its flash, then install the same bytes with
/// the floor it had *before* (the generation just persisted is not newer
/// than itself). A reset between the persist and the install only costs
/// that blob: it is refused from then on, and the next generation
/// installs. The codes are those of `lcmp_install_signed` before its blob
/// and table codes, then `LCMP_ERR_BLOB_*` of the inner header.
///
/// # Safety
/// `blob` must be readable for `len` bytes, `keys` for `n_keys *
/// LCMP_PUBLIC_KEY_LEN` bytes, `scope` for `LCMP_SCOPE_LEN` bytes;
/// `out_generation` and `out_key_id` writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_verify_signed(
    blob: *const u8,
    len: usize,
    keys: *const u8,
    n_keys: usize,
    scope: *const u8,
    now: u64,
    installed_generation: u64,
    out_generation: *mut u64,
    out_key_id: *mut u64,
) -> i32 {
    // As in `lcmp_install_signed`, with the key id's output after the
    // keys.
    let blob = bytes!(blob, len);
    let keys = bytes!(keys, try_code!(keys_len(n_keys)));
    let out_generation = out!(out_generation);
    let keys = try_code!(trusted(keys));
    let out_key_id = out!(out_key_id);
    let device = try_code!(device(bytes!(scope, LCMP_SCOPE_LEN), now));
    let v = try_code!(
        verify_signed(blob, &keys, &device, installed_generation).map_err(tables_error_code)
    );
    out_generation.write(v.generation);
    // A signed blob always names its key.
    out_key_id.write(v.key_id.map_or(0, |k| k.0));
    LCMP_OK
}

/// Verifies `blob` and decodes it into `scratch`; its generation.
fn verified<'a>(
    blob: &[u8],
    keys: &TrustedKeys,
    device: &Device,
    installed_generation: u64,
    scratch: &'a mut Tables,
) -> Decoded<'a> {
    decode_verified_valid(
        blob,
        keys,
        device,
        installed_generation,
        Unsigned::Reject,
        scratch,
    )
    .map(|(v, valid)| (v.generation, valid))
    .map_err(tables_error_code)
}

/// Bytes of `n_keys` trusted keys: `LCMP_ERR_INVALID_ARGUMENT` unless
/// `n_keys` is 1 or 2.
fn keys_len(n_keys: usize) -> Result<usize, i32> {
    if (1..=LCMP_MAX_TRUSTED_KEYS).contains(&n_keys) {
        Ok(n_keys * PUBLIC_KEY_LEN)
    } else {
        Err(LCMP_ERR_INVALID_ARGUMENT)
    }
}

/// The installing device of a signed install: its scope (`LCMP_SCOPE_LEN`
/// bytes, checked after the other arguments) and clock (`now`, 0 for
/// none).
fn device(scope: &[u8], now: u64) -> Result<Device, i32> {
    let scope = <&[u8; LCMP_SCOPE_LEN]>::try_from(scope).map_err(|_| LCMP_ERR_INVALID_ARGUMENT)?;
    let scope = Scope::from_bytes(scope).map_err(|_| LCMP_ERR_INVALID_ARGUMENT)?;
    Ok(Device {
        scope,
        now: (now != 0).then_some(now),
    })
}
