//! The pointer layer, and the only module of the workspace with `unsafe`
//! blocks: it turns the raw pointers a C caller passes into references,
//! checking everything that can be checked (null, alignment, size, the
//! handle's magic word) and stating in each function's `# Safety` section
//! what cannot be; it lays out the opaque handle and tables object in the
//! caller's memory and implements the flow-cache storage there. It imports
//! only the leaves `codes` and `types`.
//!
//! The `extern "C"` functions elsewhere in the crate reach caller memory
//! only through the macros at the end of this module (`handle_mut!`,
//! `handle_ref!`, `input!`, `out!`, `output!`, `output_sized!`, `bytes!`,
//! `slice!`, `slice_mut!`, `tables_ref!`, `digest_mut!`, `forward!`),
//! generic where the
//! rustls-ffi helpers are (`try_ref_from_ptr!`), which hold the crate's
//! only `unsafe` blocks outside this file's functions: each one forwards
//! its caller's documented contract.

use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::mem::{align_of, offset_of, size_of, MaybeUninit};
use core::ops::Deref;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicU32, Ordering};

use ::lcmp_tables::replay::Digest;
use lcmp_decide::flow_cache::{SlotBlock, SlotStorage, BLOCK_SLOTS, BUCKET};
use lcmp_decide::tables::CompiledTables;
use lcmp_decide::{DeciderConfig, DeciderWith, Tables};

use crate::codes::*;
use crate::types::{
    lcmp_config, lcmp_digest, DigestState, DIGEST_MAGIC, LCMP_DECIDER_ALIGN,
    LCMP_DECIDER_HEADER_MAX, LCMP_PORTS,
};

/// The decider type behind a handle: its slots live after the handle in
/// the caller's memory, and it reads its tables through a counted
/// reference to an `lcmp_tables` object (its own, or a shared one).
pub(crate) type Inner = DeciderWith<LCMP_PORTS, CallerSlots, Option<TablesRef>>;

/// Written into a handle by `lcmp_decider_init` ("LCMP"), cleared by
/// `lcmp_decider_fini`: an init over memory that holds it is refused.
pub(crate) const MAGIC: u32 = 0x4C43_4D50;

/// Written last into a tables object by `lcmp_tables_init` ("LCTB"),
/// cleared by `lcmp_tables_fini`.
pub(crate) const TABLES_MAGIC: u32 = 0x4C43_5442;

/// An opaque decider in caller-provided memory (see
/// `lcmp_decider_init`).
pub struct lcmp_decider {
    magic: u32,
    /// The generation of the tables the decider reads (0 without tables).
    pub(crate) generation: u64,
    /// The decider.
    pub(crate) inner: Inner,
    /// The decider's own tables object, after its slots in the caller's
    /// memory (`lcmp_decider_init`), or null (`lcmp_decider_init_shared`).
    own: *mut lcmp_tables,
}

/// An opaque tables object in caller-provided memory (see
/// `lcmp_tables_init`): one compiled generation of tables, which any
/// number of deciders read.
pub struct lcmp_tables {
    /// [`TABLES_MAGIC`] while the object is live (from `lcmp_tables_init`
    /// to `lcmp_tables_fini`); atomic because `lcmp_tables_fini` clears
    /// it through the shared reference every thread holds.
    magic: AtomicU32,
    /// [`WRITING`] and [`READY`] flags and the count
    /// of deciders that read the tables, in one word so that attach and
    /// install decide atomically.
    state: AtomicU32,
    /// Written only by an install that holds the `WRITING` flag with no
    /// user, read only by holders of a user count.
    body: UnsafeCell<TablesBody>,
}

/// The contents of a tables object.
pub(crate) struct TablesBody {
    /// The installed blob's generation (0 while empty).
    pub(crate) generation: u64,
    /// Where an install decodes a blob before it compiles the tables, so
    /// that neither the decoded nor the compiled tables are ever built on
    /// the stack (every frame of the library stays under 4 KiB).
    pub(crate) scratch: Tables,
    /// What the deciders read.
    pub(crate) compiled: CompiledTables,
}

/// The flow-cache slots of a handle: the [`SlotBlock`]s that follow the
/// handle in the caller's memory (`lcmp_decider_init` checked their size
/// and alignment). A raw pointer, not a slice, because the handle and its
/// slots share one allocation the caller owns; a slice over them exists
/// only for the duration of one access, as a reborrow of the handle.
#[derive(Debug)]
pub(crate) struct CallerSlots {
    blocks: *mut SlotBlock,
    len: usize,
}

impl CallerSlots {
    /// Read access to the blocks.
    fn blocks(&self) -> &[SlotBlock] {
        // SAFETY: `blocks` points to `len` initialised (zeroed by `init`,
        // then written only through these accessors) `SlotBlock`s inside
        // the caller's decider memory, aligned for `SlotBlock`, which the
        // caller keeps valid and unaliased while the handle lives. The
        // slice borrows `self`, so no `&mut` made by `blocks_mut` can
        // coexist with it.
        unsafe { core::slice::from_raw_parts(self.blocks, self.len) }
    }

    /// Write access to the blocks.
    fn blocks_mut(&mut self) -> &mut [SlotBlock] {
        // SAFETY: as in `blocks`; the slice borrows `self` mutably, so it
        // is the only reference to the blocks while it lives.
        unsafe { core::slice::from_raw_parts_mut(self.blocks, self.len) }
    }
}

impl SlotStorage for CallerSlots {
    fn slot_count(&self) -> usize {
        // Cannot wrap: `init` checked that the blocks fit in memory
        // (`decider_bytes`), so `len <= isize::MAX / 192` (wrapping, not
        // saturating, keeps a branch off every lookup).
        self.len.wrapping_mul(BLOCK_SLOTS)
    }

    fn bucket(&self, b: usize) -> Option<(&[u64; BUCKET], &[u32; BUCKET])> {
        self.blocks().bucket(b)
    }

    fn bucket_mut(&mut self, b: usize) -> Option<(&mut [u64; BUCKET], &mut [u32; BUCKET])> {
        self.blocks_mut().bucket_mut(b)
    }
}

/// The burst's read-ahead of a flow's primary bucket, its key line and
/// its tick line (`DeciderWith::on_packets_with`'s hook): software
/// prefetches into every cache level, as DPDK's `rte_prefetch0`
/// (`prefetcht0` on x86-64, `prfm pldl1keep` on AArch64), elsewhere the
/// core's plain load (`touch_line`). A prefetch retires without waiting
/// for its line, so a burst's misses all overlap; the core cannot issue
/// one, being `forbid(unsafe_code)`. Returns 0 (nothing for the burst to
/// keep alive) where it prefetches.
#[inline(always)]
pub(crate) fn prefetch_lines(keys: &[u64; BUCKET], seen: &[u32; BUCKET]) -> u64 {
    prefetch(keys.as_ptr().cast());
    prefetch(seen.as_ptr().cast());
    if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
        0
    } else {
        lcmp_decide::flow_cache::touch_line(keys, seen)
    }
}

/// One software prefetch of the line holding `line` (nothing where the
/// architecture has none this crate knows).
#[inline(always)]
fn prefetch(line: *const i8) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint that never faults and changes no
        // memory; SSE, which it needs, is part of x86-64's baseline, and
        // the address is a live reference's.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line) };
    }
    #[cfg(target_arch = "aarch64")]
    {
        // SAFETY: `prfm` is a hint that never faults, writes no register
        // or memory and leaves the flags alone; the address is a live
        // reference's.
        unsafe {
            core::arch::asm!(
                "prfm pldl1keep, [{line}]",
                line = in(reg) line,
                options(nostack, preserves_flags, readonly)
            )
        };
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = line;
}

/// Bytes of a decider's memory before its slots: the handle, rounded up to
/// the slots' 64-byte alignment.
pub(crate) const HEADER_BYTES: usize =
    size_of::<lcmp_decider>().next_multiple_of(LCMP_DECIDER_ALIGN);

/// Bytes of a tables object, rounded up to 64 (it follows the slots of a
/// decider that owns one).
pub(crate) const TABLES_BYTES: usize =
    size_of::<lcmp_tables>().next_multiple_of(LCMP_DECIDER_ALIGN);

// The header promises these bounds to C code that allocates statically
// (a decider that owns its tables carries a tables object after its
// slots).
const _: () = assert!(HEADER_BYTES + TABLES_BYTES <= LCMP_DECIDER_HEADER_MAX);
const _: () = assert!(align_of::<lcmp_decider>() <= LCMP_DECIDER_ALIGN);
const _: () = assert!(align_of::<lcmp_tables>() <= LCMP_DECIDER_ALIGN);
const _: () = assert!(align_of::<SlotBlock>() == LCMP_DECIDER_ALIGN);
const _: () = assert!(size_of::<SlotBlock>() == 12 * BLOCK_SLOTS);

/// Bytes a decider with `flows` slots needs (with its own tables object
/// when `owns_tables`), or `None` if `flows` is not a power of two of at
/// least 16 or the total overflows.
pub(crate) fn decider_bytes(flows: usize, owns_tables: bool) -> Option<usize> {
    if !flows.is_power_of_two() || flows < BLOCK_SLOTS {
        return None;
    }
    let slots = (flows / BLOCK_SLOTS).checked_mul(size_of::<SlotBlock>())?;
    let tables = if owns_tables { TABLES_BYTES } else { 0 };
    HEADER_BYTES
        .checked_add(slots)?
        .checked_add(tables)
        .filter(|&n| n <= isize::MAX as usize)
}

/// Writes a fresh decider with `flows` slots into `mem` and its handle
/// into `*out` (checked first); with `owns_tables`, an empty tables object
/// of its own after the slots.
///
/// # Safety
/// `mem` must be null or valid for writes of `mem_len` bytes, and those
/// bytes must not be accessed through any other pointer while the handle is
/// in use; `out` must be null or writable.
pub(crate) unsafe fn init(
    mem: *mut c_void,
    mem_len: usize,
    flows: usize,
    config: DeciderConfig,
    owns_tables: bool,
    out: *mut *mut lcmp_decider,
) -> Result<(), i32> {
    if out.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    if mem.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    let need = decider_bytes(flows, owns_tables).ok_or(LCMP_ERR_FLOWS)?;
    let p = mem.cast::<lcmp_decider>();
    if !mem.cast::<SlotBlock>().is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    // SAFETY: non-null, aligned, `mem_len` readable bytes (caller).
    unsafe { refuse_live(mem, mem_len) }?;
    if mem_len < need {
        return Err(LCMP_ERR_BUFFER_TOO_SMALL);
    }
    // SAFETY: `HEADER_BYTES + 192 * (flows / 16) <= need <= mem_len`, so
    // the offset stays inside the caller's allocation.
    let blocks = unsafe { mem.cast::<u8>().add(HEADER_BYTES) }.cast::<SlotBlock>();
    let len = flows / BLOCK_SLOTS;
    // SAFETY: `blocks` is aligned (`mem` is 64-byte aligned and
    // `HEADER_BYTES` a multiple of 64) and valid for writes of `len`
    // blocks (bounds above). All-zero bytes are empty slots, so the
    // memory holds valid `SlotBlock`s from here on.
    unsafe { ptr::write_bytes(blocks, 0, len) };
    let own = if owns_tables {
        // SAFETY: the slots end `HEADER_BYTES + 192 * len` bytes in, a
        // multiple of 64, and `TABLES_BYTES` more bytes follow inside the
        // caller's `need <= mem_len` bytes.
        let at = unsafe { blocks.add(len) }.cast::<lcmp_tables>();
        // SAFETY: aligned (64 >= its alignment), writable for
        // `TABLES_BYTES`, not overlapping the handle or the slots.
        unsafe { tables_write(at) };
        at
    } else {
        ptr::null_mut()
    };
    let slots = CallerSlots { blocks, len };
    let inner = DeciderWith::with_storage(config, slots).map_err(error_code)?;
    let value = lcmp_decider {
        magic: MAGIC,
        generation: 0,
        inner,
        own,
    };
    // SAFETY: `p` is non-null, aligned (64 >= the handle's alignment) and
    // valid for writes of `size_of::<lcmp_decider>() <= HEADER_BYTES` bytes
    // that do not overlap the slots; `write` does not read or drop the old
    // bytes.
    unsafe { p.write(value) };
    // SAFETY: forwarded contract (`out` writable).
    unsafe { output(out, p) }
}

/// `LCMP_ERR_ALREADY_INITIALIZED` if the caller's memory holds a live
/// decider or tables object: the magic word of either, where that object
/// keeps it (a field within `len` bytes), so that a second init neither
/// resets a running decider nor loses the user count of the tables it
/// reads. `lcmp_decider_fini` and `lcmp_tables_fini` clear the words; a
/// best-effort guard like [`check`]'s (memory freed without them and
/// handed out again still holds its word: that init is refused too, and
/// the caller zeroes the memory or finishes the object first).
///
/// # Safety
/// `mem` must be non-null, aligned to [`LCMP_DECIDER_ALIGN`] and readable
/// for `len` bytes.
unsafe fn refuse_live(mem: *const c_void, len: usize) -> Result<(), i32> {
    let word = |at: usize| -> u32 {
        if at.saturating_add(size_of::<u32>()) > len {
            return 0;
        }
        // SAFETY: `at + 4 <= len`, so the offset stays inside the caller's
        // readable bytes.
        let field = unsafe { mem.cast::<u8>().add(at) }.cast::<u32>();
        // SAFETY: readable (above), aligned (`at` is the offset of a `u32`
        // field and `mem` is 64-aligned); any bit pattern is a valid `u32`.
        unsafe { field.read() }
    };
    if word(offset_of!(lcmp_decider, magic)) == MAGIC
        || word(offset_of!(lcmp_tables, magic)) == TABLES_MAGIC
    {
        return Err(LCMP_ERR_ALREADY_INITIALIZED);
    }
    Ok(())
}

/// Writes an empty tables object at `p`.
///
/// # Safety
/// `p` must be non-null, aligned for `lcmp_tables` and valid for writes of
/// `size_of::<lcmp_tables>()` bytes that nothing else accesses.
unsafe fn tables_write(p: *mut lcmp_tables) {
    // Field by field, so that each empty value is written in place (the
    // compiled tables are all zero bytes: a `memset`), never through a
    // 40 KB stack temporary of the whole object. Every `addr_of_mut!` below
    // stays in bounds of the caller's object, and every `write` goes to an
    // aligned field of it, neither reading nor dropping the old bytes.
    // SAFETY: in bounds (caller).
    let state = unsafe { ptr::addr_of_mut!((*p).state) };
    // SAFETY: aligned, writable (caller).
    unsafe { state.write(AtomicU32::new(0)) };
    // SAFETY: in bounds (caller).
    let body = UnsafeCell::raw_get(unsafe { ptr::addr_of!((*p).body) });
    // SAFETY: in bounds of the body.
    let generation = unsafe { ptr::addr_of_mut!((*body).generation) };
    // SAFETY: aligned, writable.
    unsafe { generation.write(0) };
    // SAFETY: in bounds of the body.
    let scratch = unsafe { ptr::addr_of_mut!((*body).scratch) };
    // SAFETY: aligned, writable.
    unsafe { scratch.write(Tables::new()) };
    // SAFETY: in bounds of the body.
    let compiled = unsafe { ptr::addr_of_mut!((*body).compiled) };
    // SAFETY: aligned, writable.
    unsafe { compiled.write(CompiledTables::new()) };
    // The magic last: only a complete object is ever recognised.
    // SAFETY: in bounds (caller).
    let magic = unsafe { ptr::addr_of_mut!((*p).magic) };
    // SAFETY: aligned, writable.
    unsafe { magic.write(AtomicU32::new(TABLES_MAGIC)) };
}

/// Writes an empty tables object into the caller's memory and returns it.
///
/// # Safety
/// `mem` must be null or valid for writes of `mem_len` bytes that nothing
/// else accesses while the object is in use.
pub(crate) unsafe fn tables_init(
    mem: *mut c_void,
    mem_len: usize,
) -> Result<*mut lcmp_tables, i32> {
    if mem.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    let p = mem.cast::<lcmp_tables>();
    if !mem.cast::<SlotBlock>().is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    // SAFETY: non-null, aligned, `mem_len` readable bytes (caller).
    unsafe { refuse_live(mem, mem_len) }?;
    if mem_len < TABLES_BYTES {
        return Err(LCMP_ERR_BUFFER_TOO_SMALL);
    }
    // SAFETY: non-null, 64-byte aligned, `TABLES_BYTES` writable bytes
    // (checked; caller).
    unsafe { tables_write(p) };
    Ok(p)
}

/// A checked tables object, read-only (every mutation goes through its
/// atomic state word and `UnsafeCell`, so a shared reference is what every
/// thread holds).
///
/// # Safety
/// `t` must be null or point to at least `size_of::<lcmp_tables>()`
/// readable bytes that stay valid for `'a`.
pub(crate) unsafe fn tables_ref<'a>(t: *const lcmp_tables) -> Result<&'a lcmp_tables, i32> {
    if t.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    if !t.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    // SAFETY: non-null and aligned (checked), in bounds (caller); no
    // reference is created.
    let field = unsafe { ptr::addr_of!((*t).magic) };
    // SAFETY: aligned for `AtomicU32`, readable (caller); any bit pattern
    // is a valid value. The magic is written last by `tables_write`, and
    // changed only by `lcmp_tables_fini` (atomically, so that a racing
    // reader sees the old word or 0, never a torn one).
    let magic = unsafe { &*field }.load(Ordering::Acquire);
    if magic != TABLES_MAGIC {
        return Err(LCMP_ERR_NOT_INITIALIZED);
    }
    // SAFETY: initialised by `tables_write` (best effort, as for deciders).
    Ok(unsafe { &*t })
}

/// `lcmp_tables::state`: an install holds the object (no user may attach).
pub(crate) const WRITING: u32 = 1 << 31;
/// `lcmp_tables::state`: the object holds compiled tables.
pub(crate) const READY: u32 = 1 << 30;
/// `lcmp_tables::state`: the count of deciders that read the tables.
pub(crate) const USERS: u32 = READY - 1;

impl lcmp_tables {
    /// The deciders that read the tables now.
    pub(crate) fn users(&self) -> u32 {
        self.state.load(Ordering::Acquire) & USERS
    }

    /// A counted reference for one more decider:
    /// `LCMP_ERR_TABLES_NOT_READY` while the object is empty or an install
    /// is writing it.
    pub(crate) fn acquire(&self) -> Result<TablesRef, i32> {
        self.state
            // Acquire: the install's writes (published by its Release
            // store of READY) happen before this reader's reads.
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |s| {
                let ready = s & (WRITING | READY) == READY;
                // 2^30 - 1 deciders cannot exist in one address space; the
                // check keeps the count from reaching the flags anyway.
                (ready && s & USERS < USERS).then_some(s + 1)
            })
            .map_err(|_| LCMP_ERR_TABLES_NOT_READY)?;
        Ok(TablesRef(NonNull::from(self)))
    }

    /// Runs an install on the body: refused with `LCMP_ERR_TABLES_IN_USE`
    /// while a decider reads the tables or another install runs. On
    /// success the object is ready; on error it is as it was (`f` must
    /// leave `compiled` and `generation` unchanged when it fails, as
    /// `Tables::compile_into` does).
    pub(crate) fn write<R>(
        &self,
        f: impl FnOnce(&mut TablesBody) -> Result<R, i32>,
    ) -> Result<R, i32> {
        let before = self.hold()?;
        // SAFETY: the state went from no user and no writer to WRITING, so
        // no `TablesRef` exists (each holds a user) and none can be made
        // (`acquire` refuses WRITING) until the store below: this is the
        // only reference to the body.
        let body = unsafe { &mut *self.body.get() };
        let result = f(body);
        let after = if result.is_ok() {
            READY
        } else {
            before & READY
        };
        // Release: publishes the body to the next `acquire`.
        self.state.store(after, Ordering::Release);
        result
    }

    /// Ends the object (`lcmp_tables_fini`): refused with
    /// `LCMP_ERR_TABLES_IN_USE` while a decider reads it or an install
    /// runs; then it stays held for writing (no decider can attach) and its
    /// magic word is cleared, so that every later call on it is
    /// `LCMP_ERR_NOT_INITIALIZED` and `lcmp_tables_init` may take the
    /// memory again.
    pub(crate) fn finish(&self) -> Result<(), i32> {
        self.hold()?;
        self.magic.store(0, Ordering::Release);
        Ok(())
    }

    /// Takes the object for writing (the `WRITING` flag, no user may
    /// attach): `LCMP_ERR_TABLES_IN_USE` while a decider reads it or
    /// another writer holds it. Returns the state before.
    fn hold(&self) -> Result<u32, i32> {
        // Acquire: every reader's reads (released by its `fetch_sub`)
        // happen before the holder's writes.
        self.state
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |s| {
                (s & (WRITING | USERS) == 0).then_some(WRITING)
            })
            .map_err(|_| LCMP_ERR_TABLES_IN_USE)
    }

    /// [`lcmp_tables::write`] for the tables object a handle owns, which
    /// that handle may be reading ([`lcmp_decider::write_own`]).
    ///
    /// # Safety
    /// `self` must be the `own` object of a handle borrowed mutably by the
    /// caller, and no `&CompiledTables` from that handle's tables may be
    /// live.
    unsafe fn write_own<R>(
        &self,
        f: impl FnOnce(&mut TablesBody) -> Result<R, i32>,
    ) -> Result<R, i32> {
        let before = self.state.load(Ordering::Relaxed);
        // SAFETY: see above: exclusive by the caller's contract.
        let body = unsafe { &mut *self.body.get() };
        let result = f(body);
        if result.is_ok() {
            self.state
                .store((before & USERS) | READY, Ordering::Release);
        }
        result
    }
}

/// A decider's counted reference to a tables object: it derefs to the
/// compiled tables, which no install can change while it lives, and
/// releases its count when dropped (`lcmp_use_tables` of another object,
/// `lcmp_release_tables`).
pub(crate) struct TablesRef(NonNull<lcmp_tables>);

impl TablesRef {
    fn object(&self) -> &lcmp_tables {
        // SAFETY: made by `acquire` from a live object, which the caller
        // keeps valid while any decider reads it (the `# Safety` of
        // `lcmp_use_tables`: not freed while `lcmp_tables_users` > 0).
        unsafe { self.0.as_ref() }
    }

    /// The generation of the tables.
    pub(crate) fn generation(&self) -> u64 {
        // SAFETY: a user count is held, so no install writes the body.
        unsafe { (*self.object().body.get()).generation }
    }
}

impl Deref for TablesRef {
    type Target = CompiledTables;

    #[inline]
    fn deref(&self) -> &CompiledTables {
        // SAFETY: a user count is held, so no install writes the body while
        // this borrow (of `self`) lives; the owner's own install
        // (`write_own`) runs only under `&mut` of the handle, when no such
        // borrow exists.
        unsafe { &(*self.object().body.get()).compiled }
    }
}

impl Drop for TablesRef {
    fn drop(&mut self) {
        // Release: this decider's reads happen before the next install.
        self.object().state.fetch_sub(1, Ordering::Release);
    }
}

impl core::fmt::Debug for TablesRef {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("TablesRef").field(&self.0).finish()
    }
}

impl lcmp_decider {
    /// The handle's own tables object, if it has one.
    pub(crate) fn own(&self) -> Option<&lcmp_tables> {
        // SAFETY: `own` is null or was written by `init` to point to the
        // object after the slots, in the caller's memory, valid while the
        // handle is.
        unsafe { self.own.as_ref() }
    }

    /// Runs an install `f` on the body of the handle's own tables object
    /// (`LCMP_ERR_TABLES_SHARED` if it has none), which the handle itself
    /// may be reading, then returns a counted reference to it for the
    /// decider to read. On error the object is as `f` left it (`f` must
    /// leave `compiled` and `generation` unchanged when it fails).
    pub(crate) fn write_own(
        &mut self,
        f: impl FnOnce(&mut TablesBody) -> Result<(), i32>,
    ) -> Result<TablesRef, i32> {
        let own = self.own().ok_or(LCMP_ERR_TABLES_SHARED)?;
        // SAFETY: `own` is this handle's own object, and the handle is
        // borrowed mutably here, so no other call reads it; no other
        // decider can reach the object (its pointer never leaves the
        // handle), and no `&CompiledTables` from this handle's tables is
        // live (each borrows the handle).
        unsafe { own.write_own(f) }?;
        own.acquire()
    }

    /// Ends the handle (`lcmp_decider_fini`, after it let go of its
    /// tables): its magic word is cleared, so that every later call on it
    /// is `LCMP_ERR_NOT_INITIALIZED` and `lcmp_decider_init` may take the
    /// memory again.
    pub(crate) fn end(&mut self) {
        self.magic = 0;
    }
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

/// The handle, read-only.
///
/// # Safety
/// As [`handle_mut`], except that concurrent read-only calls are allowed.
pub(crate) unsafe fn handle_ref<'a>(d: *const lcmp_decider) -> Result<&'a lcmp_decider, i32> {
    // SAFETY: forwarded contract (readable, see above).
    unsafe { check(d) }?;
    // SAFETY: checked non-null, aligned and initialised; no writer runs
    // concurrently by the caller's contract.
    Ok(unsafe { &*d })
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

/// A caller's `lcmp_config` (`None` for a null pointer: the defaults):
/// its `size` field is read first, and the rest only if `size` is this
/// library's `sizeof(lcmp_config)` (a caller built against another header
/// may have a smaller struct); `LCMP_ERR_ABI` otherwise.
///
/// # Safety
/// `p` must be null or valid for reads of the `size` field and, when that
/// field equals `size_of::<lcmp_config>()`, of a whole `lcmp_config`.
pub(crate) unsafe fn config(p: *const lcmp_config) -> Result<Option<lcmp_config>, i32> {
    if p.is_null() {
        return Ok(None);
    }
    if !p.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    // SAFETY: non-null and aligned (checked), so the field's address is in
    // bounds of the caller's struct; no reference is created.
    let size = unsafe { ptr::addr_of!((*p).size) };
    // SAFETY: aligned for `u32` and readable (caller); any bits are valid.
    if usize::try_from(unsafe { size.read() }) != Ok(size_of::<lcmp_config>()) {
        return Err(LCMP_ERR_ABI);
    }
    // SAFETY: the caller's struct is a whole `lcmp_config` (its size says
    // so), integer-only, so any bits are a valid value.
    Ok(Some(unsafe { p.read() }))
}

/// A caller's array of `n` input structs (integer-only `repr(C)`). A null
/// pointer with `n == 0` is the empty slice.
///
/// # Safety
/// `p` must be null or valid for reads of `n` values of `T` that nothing
/// writes during the call.
pub(crate) unsafe fn slice<'a, T: Copy>(p: *const T, n: usize) -> Result<&'a [T], i32> {
    if p.is_null() {
        return if n == 0 { Ok(&[]) } else { Err(LCMP_ERR_NULL) };
    }
    if !p.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    if n.checked_mul(size_of::<T>())
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(LCMP_ERR_BUFFER_TOO_SMALL);
    }
    // SAFETY: non-null, aligned, `n` readable values (caller) of a type
    // valid for any bits, total size within `isize::MAX`.
    Ok(unsafe { core::slice::from_raw_parts(p, n) })
}

/// A caller's array of `n` output structs, for writing. `T` must be an
/// integer-only `repr(C)` type (any bits are a valid value, so the
/// caller's uninitialised memory may be overwritten through it).
///
/// # Safety
/// `p` must be null or valid for writes of `n` values of `T` that nothing
/// else accesses during the call.
pub(crate) unsafe fn slice_mut<'a, T: Copy>(p: *mut T, n: usize) -> Result<&'a mut [T], i32> {
    if p.is_null() {
        return if n == 0 {
            Ok(&mut [])
        } else {
            Err(LCMP_ERR_NULL)
        };
    }
    if !p.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    if n.checked_mul(size_of::<T>())
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(LCMP_ERR_BUFFER_TOO_SMALL);
    }
    // SAFETY: `T` has no padding-dependent validity (integers only), so
    // zeroing first makes the memory a valid `[T]` whatever it held.
    unsafe { ptr::write_bytes(p, 0, n) };
    // SAFETY: non-null, aligned, `n` initialised values (just zeroed),
    // writable and exclusive for the call (caller), size within bounds.
    Ok(unsafe { core::slice::from_raw_parts_mut(p, n) })
}

/// A caller's output location, checked (non-null, aligned) before
/// anything changes, so that the final write cannot fail; writing it is
/// safe.
pub(crate) struct Out<'a, T>(&'a mut MaybeUninit<T>);

impl<T> Out<'_, T> {
    /// Writes the value (the caller's memory is never read, so it may be
    /// uninitialised).
    pub(crate) fn write(self, value: T) {
        self.0.write(value);
    }
}

/// A caller's output location, for one later write.
///
/// # Safety
/// `p` must be null or valid for writes of one `T` that nothing else
/// accesses while the returned value lives.
pub(crate) unsafe fn out<'a, T>(p: *mut T) -> Result<Out<'a, T>, i32> {
    if p.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    if !p.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    // SAFETY: non-null, aligned and writable, exclusively (caller);
    // `MaybeUninit<T>` has `T`'s layout and any contents are a valid
    // `MaybeUninit<T>`, so the reference never reads them.
    Ok(Out(unsafe { &mut *p.cast::<MaybeUninit<T>>() }))
}

/// Writes one value to a caller's output location (never read first, so the
/// caller's memory may be uninitialised).
///
/// # Safety
/// `p` must be null or valid for writes of one `T`.
pub(crate) unsafe fn output<T>(p: *mut T, value: T) -> Result<(), i32> {
    // SAFETY: forwarded contract.
    unsafe { out(p) }?.write(value);
    Ok(())
}

/// Writes `value` to a caller's sized output struct (`lcmp_counters`,
/// `lcmp_explanation`): the first `min(size, size_of::<T>())` bytes of
/// it, never a byte past `size`, so that a caller compiled against an
/// older header (a smaller struct whose fields are a prefix of `T`'s) gets
/// the fields it knows and the rest of its memory is untouched. A `size`
/// below `min` (the oldest layout this library fills) is `LCMP_ERR_ABI`;
/// null and misaligned pointers are refused first. Nothing is written on
/// error.
///
/// # Safety
/// `p` must be null or valid for writes of `size` bytes that nothing else
/// accesses during the call.
pub(crate) unsafe fn output_sized<T: Copy>(
    p: *mut T,
    size: usize,
    min: usize,
    value: &T,
) -> Result<(), i32> {
    if p.is_null() {
        return Err(LCMP_ERR_NULL);
    }
    if !p.is_aligned() {
        return Err(LCMP_ERR_MISALIGNED);
    }
    if size < min {
        return Err(LCMP_ERR_ABI);
    }
    let n = size.min(size_of::<T>());
    // SAFETY: `value` is a live `T` (readable for `size_of::<T>() >= n`
    // bytes; a byte copy may include padding), `p` is writable for `size
    // >= n` bytes (caller), and the two cannot overlap (`value` is the
    // library's, `p` the caller's exclusive memory).
    unsafe { ptr::copy_nonoverlapping(ptr::from_ref(value).cast::<u8>(), p.cast::<u8>(), n) };
    Ok(())
}

/// A caller's byte buffer. A null pointer with length 0 is the empty slice.
///
/// # Safety
/// `p` must be null or valid for reads of `len` bytes that nothing writes
/// during the call.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize) -> Result<&'a [u8], i32> {
    // SAFETY: forwarded contract (`u8` is integer-only).
    unsafe { slice(p, len) }
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
const _: () = assert!(LCMP_PORTS <= lcmp_decide::tables::MAX_PORTS);

/// `$e` (a `Result<T, i32>` from one of this module's functions, in an
/// `unsafe` call) or an early `return` of its error code, the one pattern
/// every `extern "C"` function uses to reach caller memory (rustls-ffi's
/// `try_mut_from_ptr!` is the model).
macro_rules! try_boundary {
    ($call:expr) => {
        // SAFETY: the enclosing `extern "C"` function's `# Safety` contract
        // is exactly the callee's (each documents it); the callee checks
        // what can be checked and returns an error code otherwise.
        match unsafe { $call } {
            Ok(v) => v,
            Err(code) => return code,
        }
    };
}

/// Calls one of this crate's `unsafe extern "C"` functions from another
/// with the same contract (the Rust-side twins of lcmp.h's macros, such
/// as `lcmp_decider_init` for `lcmp_decider_init_`).
macro_rules! forward {
    ($call:expr) => {
        // SAFETY: the enclosing function's `# Safety` contract is the
        // callee's (each says "as" the function it forwards to), which
        // checks what can be checked and returns an error code otherwise.
        unsafe { $call }
    };
}

/// `$e` (a `Result<T, i32>` of safe code) or an early `return` of its
/// error code.
macro_rules! try_code {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(code) => return code,
        }
    };
}

/// A caller's output location (checked now, written later), or `return`
/// its error code.
macro_rules! out {
    ($p:expr) => {
        try_boundary!($crate::boundary::out($p))
    };
}

/// A handle for mutation, or `return` its error code.
macro_rules! handle_mut {
    ($d:expr) => {
        try_boundary!($crate::boundary::handle_mut($d))
    };
}

/// A handle read-only, or `return` its error code.
macro_rules! handle_ref {
    ($d:expr) => {
        try_boundary!($crate::boundary::handle_ref($d))
    };
}

/// A caller's input struct, or `return` its error code.
macro_rules! input {
    ($p:expr) => {
        try_boundary!($crate::boundary::input($p))
    };
}

/// A caller's input array, or `return` its error code.
macro_rules! slice {
    ($p:expr, $n:expr) => {
        try_boundary!($crate::boundary::slice($p, $n))
    };
}

/// A caller's output array, or `return` its error code.
macro_rules! slice_mut {
    ($p:expr, $n:expr) => {
        try_boundary!($crate::boundary::slice_mut($p, $n))
    };
}

/// A caller's byte buffer, or `return` its error code.
macro_rules! bytes {
    ($p:expr, $n:expr) => {
        try_boundary!($crate::boundary::bytes($p, $n))
    };
}

/// Writes `$v` to a caller's output, or `return` its error code.
macro_rules! output {
    ($p:expr, $v:expr) => {
        try_boundary!($crate::boundary::output($p, $v))
    };
}

/// Writes `$v` to a caller's sized output (`$size` bytes, at least
/// `$min`), or `return` its error code.
macro_rules! output_sized {
    ($p:expr, $size:expr, $min:expr, $v:expr) => {
        try_boundary!($crate::boundary::output_sized($p, $size, $min, $v))
    };
}

/// A caller's tables object, or `return` its error code.
macro_rules! tables_ref {
    ($t:expr) => {
        try_boundary!($crate::boundary::tables_ref($t))
    };
}

/// A caller's digest, or `return` its error code.
macro_rules! digest_mut {
    ($p:expr) => {
        try_boundary!($crate::boundary::digest_mut($p))
    };
}
