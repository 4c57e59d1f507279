//! Shared tables: an `lcmp_tables` object holds one compiled generation in
//! caller memory, and any number of deciders read it
//! ([`lcmp_use_tables`]), so that N cores keep one 20.6 KB copy of the
//! tables instead of N.
//!
//! # Thread safety
//!
//! A tables object may be used from several threads at once: every
//! function here that takes only an `lcmp_tables` (install, users,
//! generation) and [`lcmp_use_tables`] / [`lcmp_release_tables`] (each on
//! its own decider handle) synchronise through one atomic word in the
//! object (an install flag, a ready flag and the count of deciders that
//! read it). The rules it enforces:
//!
//! * an install ([`lcmp_tables_install`], [`lcmp_tables_install_signed`])
//!   runs only while no decider reads the object and no other install
//!   runs (else `LCMP_ERR_TABLES_IN_USE`, nothing changes);
//! * a decider attaches ([`lcmp_use_tables`]) only to an object that holds
//!   tables and is not being written (else `LCMP_ERR_TABLES_NOT_READY`,
//!   the decider keeps what it had);
//! * a decider reads the compiled tables on every packet with no atomic
//!   operation at all: the object cannot change while it is attached.
//!
//! The caller's part: a decider handle is still used by one thread at a
//! time; a tables object's memory is freed (or re-initialised) only when
//! [`lcmp_tables_users`] is 0 and no call on it runs. The generation
//! hand-over of a multi-core data plane (docs/firmware.md, "Several
//! cores"): install generation N+1 into a second object, have every core
//! call `lcmp_use_tables` between bursts (which releases generation N),
//! then reuse or free N once its user count is 0.

use core::ffi::c_void;
use core::mem::align_of;

use lcmp_decide::tables::ValidTables;
use lcmp_decide::Tables;

use crate::boundary::{self, TABLES_BYTES};
use crate::boundary::{lcmp_decider, lcmp_tables, TablesBody};
use crate::codes::*;
use crate::convert::abi_check;
use crate::types::{LCMP_ABI_VERSION, LCMP_PORTS};

/// What an install's decoder returns: the blob's generation and the
/// tables it decoded into the scratch, validated once (the proof an
/// install takes without validating again).
pub(crate) type Decoded<'a> = Result<(u64, ValidTables<'a>), i32>;

/// Decodes and validates into the body's scratch with `decode`, then
/// compiles in place (the tables are not validated again; only their
/// ports are checked against `LCMP_PORTS`): on error the compiled tables
/// and the generation are unchanged (the scratch is not).
pub(crate) fn compile_body(
    body: &mut TablesBody,
    decode: impl for<'a> FnOnce(&'a mut Tables) -> Decoded<'a>,
) -> Result<u64, i32> {
    let (generation, valid) = decode(&mut body.scratch)?;
    valid
        .compile_into(LCMP_PORTS, &mut body.compiled)
        .map_err(error_code)?;
    body.generation = generation;
    Ok(generation)
}

/// The decoder of an unsigned blob (`lcmp_install`,
/// `lcmp_tables_install`).
pub(crate) fn decode_unsigned<'a>(blob: &[u8], scratch: &'a mut Tables) -> Decoded<'a> {
    ::lcmp_tables::blob::decode_blob_valid(blob, scratch).map_err(tables_error_code)
}

/// `lcmp_install` and `lcmp_install_signed`: compiles into the handle's
/// own tables object and makes the decider read it (hitless, the core's
/// `use_tables`). On error nothing changes.
pub(crate) fn install_own(
    d: &mut lcmp_decider,
    decode: impl for<'a> FnOnce(&'a mut Tables) -> Decoded<'a>,
) -> Result<u64, i32> {
    let reference = d.write_own(|body| compile_body(body, decode).map(drop))?;
    let generation = reference.generation();
    // The previous reference (to this object or a shared one) is dropped,
    // which releases its count.
    d.inner.use_tables(reference).map_err(error_code)?;
    d.generation = generation;
    Ok(generation)
}

/// Bytes of memory a tables object needs (about 40 KB: the compiled tables
/// and the scratch an install decodes into).
#[no_mangle]
pub extern "C" fn lcmp_tables_size() -> usize {
    TABLES_BYTES
}

/// Alignment a tables object's memory needs (`LCMP_DECIDER_ALIGN`, 64).
#[no_mangle]
pub extern "C" fn lcmp_tables_align() -> usize {
    align_of::<lcmp_decide::flow_cache::SlotBlock>()
}

/// Creates an empty tables object in `mem` (at least `lcmp_tables_size()`
/// bytes aligned to `lcmp_tables_align()`) and stores it in `*out`.
/// Deciders cannot use it until an install succeeds
/// (`LCMP_ERR_TABLES_NOT_READY`). The memory's previous contents do not
/// matter, except that memory holding a live tables object or decider is
/// refused with `LCMP_ERR_ALREADY_INITIALIZED` (nothing changes: a second
/// init would empty tables that deciders read and zero their user
/// count); `lcmp_tables_fini` ends an object first.
///
/// Call it as `lcmp_tables_init(mem, mem_len, out)`, lcmp.h's macro,
/// which passes the header's `LCMP_ABI_VERSION` as `abi_version`: a
/// library of another ABI version returns `LCMP_ERR_ABI` before it reads
/// or writes anything.
///
/// # Safety
/// `mem` must be valid for reads and writes of `mem_len` bytes and not be used by
/// anything else while the object lives (in particular not freed while
/// `lcmp_tables_users` > 0); `out` must be null (an error) or writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_tables_init_(
    mem: *mut c_void,
    mem_len: usize,
    out: *mut *mut lcmp_tables,
    abi_version: u32,
) -> i32 {
    if let Err(code) = abi_check(abi_version) {
        return code;
    }
    if out.is_null() {
        return LCMP_ERR_NULL;
    }
    let t = try_boundary!(boundary::tables_init(mem, mem_len));
    output!(out, t);
    LCMP_OK
}

/// [`lcmp_tables_init_`] with this library's `LCMP_ABI_VERSION`, as
/// lcmp.h's `lcmp_tables_init` macro calls it (for Rust callers; not
/// exported).
///
/// # Safety
/// As `lcmp_tables_init_`.
pub unsafe extern "C" fn lcmp_tables_init(
    mem: *mut c_void,
    mem_len: usize,
    out: *mut *mut lcmp_tables,
) -> i32 {
    forward!(lcmp_tables_init_(mem, mem_len, out, LCMP_ABI_VERSION))
}

/// Ends tables object `t`: refused with `LCMP_ERR_TABLES_IN_USE` while a
/// decider reads it (`lcmp_tables_users` > 0: `lcmp_release_tables`,
/// `lcmp_use_tables` of another object or `lcmp_decider_fini` on each
/// first) or an install runs; then its magic word is cleared, so that every
/// later call on it is `LCMP_ERR_NOT_INITIALIZED` and its memory may be
/// freed or given to `lcmp_tables_init` again.
///
/// # Safety
/// `t` must be a live tables object; no call on it may start once this
/// one has returned `LCMP_OK`.
#[no_mangle]
pub unsafe extern "C" fn lcmp_tables_fini(t: *mut lcmp_tables) -> i32 {
    match tables_ref!(t).finish() {
        Ok(()) => LCMP_OK,
        Err(code) => code,
    }
}

/// Installs a table blob (as `lcmp_install` takes it) into a tables
/// object. Refused with `LCMP_ERR_TABLES_IN_USE` while any decider uses the
/// object or another install into it runs; then the blob and table codes
/// of `lcmp_install`. On any error the object is unchanged (still empty, or
/// still the previous tables). Safe to call from any thread (the
/// rules are at `lcmp_use_tables`).
///
/// # Safety
/// `t` must be a live tables object; `blob` readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn lcmp_tables_install(
    t: *mut lcmp_tables,
    blob: *const u8,
    len: usize,
) -> i32 {
    let t = tables_ref!(t);
    let blob = bytes!(blob, len);
    match t.write(|body| compile_body(body, |s| decode_unsigned(blob, s))) {
        Ok(_) => LCMP_OK,
        Err(code) => code,
    }
}

/// The generation (blob header) of the tables in `t`:
/// `LCMP_ERR_TABLES_NOT_READY` while it is empty or being installed. Safe
/// to call from any thread.
///
/// # Safety
/// `t` must be a live tables object; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_tables_generation(t: *const lcmp_tables, out: *mut u64) -> i32 {
    let t = tables_ref!(t);
    if out.is_null() {
        return LCMP_ERR_NULL;
    }
    // Read under a user count of its own, so that no install can write it
    // meanwhile.
    let generation = match t.acquire() {
        Ok(reference) => reference.generation(),
        Err(code) => return code,
    };
    output!(out, generation);
    LCMP_OK
}

/// How many deciders read `t` now (a snapshot: from another thread it may
/// change at once). 0 means an install may proceed and, if no call on `t`
/// runs, its memory may be freed.
///
/// # Safety
/// `t` must be a live tables object; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_tables_users(t: *const lcmp_tables, out: *mut u32) -> i32 {
    let users = tables_ref!(t).users();
    output!(out, users);
    LCMP_OK
}

/// Makes decider `d` read the tables in `t` (shared with any other
/// decider that uses `t`) and lets go of what it read before (its own
/// tables or another object, whose user count drops). Hitless, as
/// `lcmp_install` of the same blob: pinned flows keep their ports unless
/// the new tables withdraw the port from the flow's group, port state and
/// counters are kept. `LCMP_ERR_TABLES_NOT_READY` if `t` is empty or being
/// installed (`d` keeps its tables). `lcmp_generation(d)` then reads `t`'s
/// generation. Call it between bursts, on the thread that owns `d`.
///
/// Thread safety: a decider handle is used by one thread at a time; a
/// tables object by any number of threads at once (`lcmp_tables_install`,
/// `lcmp_tables_install_signed`, `lcmp_tables_generation`,
/// `lcmp_tables_users`, and this function and `lcmp_release_tables`, each
/// on its own handle), synchronised by one atomic word in the object: an
/// install runs only while no decider reads the object and no other
/// install runs (else `LCMP_ERR_TABLES_IN_USE`), an attach only to a
/// complete object (else `LCMP_ERR_TABLES_NOT_READY`), and an attached
/// decider reads the tables on every packet without atomics, as they
/// cannot change while it is attached. Free or re-initialise an object
/// only when `lcmp_tables_users` is 0 and no call on it runs.
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time; `t` a
/// live tables object that stays valid until `d` lets go of it
/// (`lcmp_use_tables` of another object, or `lcmp_release_tables`).
#[no_mangle]
pub unsafe extern "C" fn lcmp_use_tables(d: *mut lcmp_decider, t: *const lcmp_tables) -> i32 {
    let d = handle_mut!(d);
    let t = tables_ref!(t);
    let reference = match t.acquire() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let generation = reference.generation();
    match d.inner.use_tables(reference) {
        Ok(_previous) => {
            d.generation = generation;
            LCMP_OK
        }
        Err(e) => error_code(e),
    }
}

/// Makes decider `d` read no tables (every packet gets no route, pins and
/// port state are kept) and lets go of the tables object it read, so that
/// its user count drops. Call it before freeing a decider's memory that
/// uses a shared object; harmless without tables.
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time.
#[no_mangle]
pub unsafe extern "C" fn lcmp_release_tables(d: *mut lcmp_decider) -> i32 {
    let d = handle_mut!(d);
    drop(d.inner.release_tables());
    d.generation = 0;
    LCMP_OK
}
