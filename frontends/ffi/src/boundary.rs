//! The only module of the workspace with `unsafe` code: it turns the raw
//! pointers a C caller passes into references, checking everything that
//! can be checked (null, alignment, size, the handle's magic word) and
//! stating in each function's `# Safety` section what cannot be.
//!
//! Everything above this module is safe Rust over `&`/`&mut`.

use core::ffi::c_void;
use core::mem::{align_of, size_of};
use core::ptr;

use crate::{
    lcmp_decider, lcmp_digest, DigestState, Inner, DIGEST_MAGIC, LCMP_ERR_BUFFER_TOO_SMALL,
    LCMP_ERR_MISALIGNED, LCMP_ERR_NOT_INITIALIZED, LCMP_ERR_NULL, MAGIC,
};
use lcmp_tables::replay::Digest;

/// Writes a fresh decider into `mem` and returns the handle.
///
/// # Safety
/// `mem` must be null or valid for writes of `mem_len` bytes, and those
/// bytes must not be accessed through any other pointer while the handle is
/// in use.
pub(crate) unsafe fn init(
    mem: *mut c_void,
    mem_len: usize,
    value: lcmp_decider,
) -> Result<*mut lcmp_decider, i32> {
    if mem.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    if mem_len < size_of::<lcmp_decider>() {
        return Err(LCMP_ERR_BUFFER_TOO_SMALL);
    }
    let p = mem.cast::<lcmp_decider>();
    if !p.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    // SAFETY: `p` is non-null and aligned (checked above) and, by the
    // caller's contract, valid for writes of `mem_len >= size_of` bytes that
    // nothing else aliases. `write` does not read or drop the old bytes.
    unsafe { p.write(value) };
    Ok(p)
}

/// Checks a handle: non-null, aligned, initialised by `lcmp_decider_init`.
///
/// # Safety
/// `d` must be null or point to at least `size_of::<lcmp_decider>()`
/// readable bytes.
unsafe fn check(d: *const lcmp_decider) -> Result<(), i32> {
    if d.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    if !d.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    // SAFETY: `d` is non-null and aligned (checked above) and points to an
    // object of `size_of::<lcmp_decider>()` bytes (caller), so the field's
    // address is in bounds; no reference is created and nothing is read.
    let field = unsafe { ptr::addr_of!((*d).magic) };
    // SAFETY: in bounds, aligned for `u32`, readable (caller). Only the
    // magic word is read, and every bit pattern is a valid `u32`, so memory
    // the C side never initialised through `lcmp_decider_init` is rejected
    // here instead of being used as a decider (a best-effort guard, not a
    // proof).
    let magic = unsafe { field.read() };
    if magic == MAGIC {
        Ok(())
    } else {
        Err(LCMP_ERR_NOT_INITIALIZED)
    }
}

/// The whole handle (decider and blob scratch), for mutation.
///
/// # Safety
/// `d` must be null or a handle returned by `lcmp_decider_init` whose memory
/// is still valid, and no other call may use the same handle concurrently.
pub(crate) unsafe fn handle_mut<'a>(d: *mut lcmp_decider) -> Result<&'a mut lcmp_decider, i32> {
    // SAFETY: forwarded contract (readable, see above).
    unsafe { check(d) }?;
    // SAFETY: checked non-null, aligned and initialised; the caller
    // guarantees exclusive access for the duration of the call.
    Ok(unsafe { &mut *d })
}

/// The decider behind a handle, for mutation.
///
/// # Safety
/// As [`handle_mut`].
pub(crate) unsafe fn decider_mut<'a>(d: *mut lcmp_decider) -> Result<&'a mut Inner, i32> {
    // SAFETY: forwarded contract.
    unsafe { handle_mut(d) }.map(|d| &mut d.inner)
}

/// The decider behind a handle, read-only.
///
/// # Safety
/// As [`decider_mut`], except that concurrent read-only calls are allowed.
pub(crate) unsafe fn decider_ref<'a>(d: *const lcmp_decider) -> Result<&'a Inner, i32> {
    // SAFETY: forwarded contract (readable, see above).
    unsafe { check(d) }?;
    // SAFETY: checked non-null, aligned and initialised; no writer runs
    // concurrently by the caller's contract.
    let d = unsafe { &*d };
    Ok(&d.inner)
}

/// A caller's input struct. `T` must be a `repr(C)` type made of integers
/// only, so that every bit pattern is a valid value.
///
/// # Safety
/// `p` must be null or valid for reads of one `T`.
pub(crate) unsafe fn input<'a, T: Copy>(p: *const T) -> Result<&'a T, i32> {
    if p.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    if !p.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    // SAFETY: non-null, aligned, readable (caller), and any bit pattern is a
    // valid `T` (integer-only `repr(C)` struct, see above).
    Ok(unsafe { &*p })
}

/// Writes one value to a caller's output location (never read first, so the
/// caller's memory may be uninitialised).
///
/// # Safety
/// `p` must be null or valid for writes of one `T`.
pub(crate) unsafe fn output<T>(p: *mut T, value: T) -> Result<(), i32> {
    if p.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    if !p.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    // SAFETY: non-null, aligned and writable by the caller's contract;
    // `write` neither reads nor drops the previous contents.
    unsafe { p.write(value) };
    Ok(())
}

/// A caller's byte buffer. A null pointer with length 0 is the empty slice.
///
/// # Safety
/// `p` must be null or valid for reads of `len` bytes that nothing writes
/// during the call.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize) -> Result<&'a [u8], i32> {
    if p.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(LCMP_ERR_NULL)
        };
    }
    if len > isize::MAX as usize {
        return Err(LCMP_ERR_BUFFER_TOO_SMALL);
    }
    // SAFETY: non-null, `u8` needs no alignment, `len` bytes readable and
    // not mutated during the call (caller), `len <= isize::MAX`.
    Ok(unsafe { core::slice::from_raw_parts(p, len) })
}

/// Writes a fresh digest state into the caller's `lcmp_digest`.
///
/// # Safety
/// `p` must be null or valid for writes of one `lcmp_digest`.
pub(crate) unsafe fn digest_init(p: *mut lcmp_digest, state: DigestState) -> Result<(), i32> {
    if p.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    if !p.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    // SAFETY: non-null, aligned for `lcmp_digest` and so for `DigestState`
    // (compile-time checks below), writable for `size_of::<lcmp_digest>()
    // >= size_of::<DigestState>()` bytes (caller); nothing is read or
    // dropped.
    unsafe { p.cast::<DigestState>().write(state) };
    Ok(())
}

/// The digest in an initialised `lcmp_digest`.
///
/// # Safety
/// `p` must be null or point to a readable and writable `lcmp_digest` that
/// no other call uses concurrently.
pub(crate) unsafe fn digest_mut<'a>(p: *mut lcmp_digest) -> Result<&'a mut Digest, i32> {
    if p.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    if !p.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    let state = p.cast::<DigestState>();
    // SAFETY: in bounds of the caller's `lcmp_digest` (it is at least as
    // large as `DigestState`); no reference is created and nothing read.
    let field = unsafe { ptr::addr_of!((*state).magic) };
    // SAFETY: aligned, readable (caller); any bit pattern is a valid `u32`.
    if unsafe { field.read() } != DIGEST_MAGIC {
        return Err(LCMP_ERR_NOT_INITIALIZED);
    }
    // SAFETY: the magic shows `lcmp_digest_init` wrote a `DigestState` here
    // (best effort, as for deciders); exclusive by the caller's contract.
    Ok(unsafe { &mut (*state).digest })
}

const _: () = assert!(size_of::<DigestState>() <= size_of::<lcmp_digest>());
const _: () = assert!(align_of::<DigestState>() <= align_of::<lcmp_digest>());

// The header promises these bounds to C code that allocates statically.
const _: () = assert!(size_of::<lcmp_decider>() <= crate::LCMP_DECIDER_SIZE_MAX);
const _: () = assert!(align_of::<lcmp_decider>() <= crate::LCMP_DECIDER_ALIGN_MAX);
