//! The decider's `extern "C"` functions: create, install, feed samples and
//! liveness, route packets one at a time or in bursts, explain, count.

use core::ffi::{c_char, c_void};
use core::mem::size_of;

use lcmp_decide::{GroupId, Instant, PortId};

use crate::boundary::{self, decider_bytes, lcmp_decider, Inner};
use crate::codes::*;
use crate::convert::*;
use crate::shared::{decode_unsigned, install_own};
use crate::types::*;

fn status(r: Result<(), i32>) -> i32 {
    match r {
        Ok(()) => LCMP_OK,
        Err(code) => code,
    }
}

/// Returns [`LCMP_ABI_VERSION`] as compiled into the library, to compare with
/// the header's at start-up.
#[no_mangle]
pub extern "C" fn lcmp_abi_version() -> u32 {
    LCMP_ABI_VERSION
}

/// Bytes of memory a decider with `flows` flow-cache slots and tables of
/// its own (`lcmp_decider_init`) needs: at most `LCMP_DECIDER_HEADER_MAX +
/// LCMP_SLOT_BYTES * flows`. 0 if `flows` is not a power of two of at
/// least `LCMP_MIN_FLOWS` (or the size overflows).
#[no_mangle]
pub extern "C" fn lcmp_decider_size(flows: usize) -> usize {
    decider_bytes(flows, true).unwrap_or(0)
}

/// Bytes of memory a decider with `flows` flow-cache slots and no tables
/// of its own (`lcmp_decider_init_shared`) needs: `lcmp_decider_size(flows)`
/// less `lcmp_tables_size()`. 0 as for `lcmp_decider_size`.
#[no_mangle]
pub extern "C" fn lcmp_decider_shared_size(flows: usize) -> usize {
    decider_bytes(flows, false).unwrap_or(0)
}

/// Alignment a decider's memory needs (`LCMP_DECIDER_ALIGN`, 64).
#[no_mangle]
pub extern "C" fn lcmp_decider_align() -> usize {
    LCMP_DECIDER_ALIGN
}

/// Both decider inits: the caller's ABI version first, then the config,
/// then the memory (`owns_tables`: with a tables object of its own).
/// Not exported (no `#[no_mangle]`); `extern "C"` only so that the
/// exported inits forward to it as to each other.
///
/// # Safety
/// As `lcmp_decider_init_`.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn decider_init(
    mem: *mut c_void,
    mem_len: usize,
    flows: usize,
    config: *const lcmp_config,
    out: *mut *mut lcmp_decider,
    owns_tables: bool,
    abi_version: u32,
) -> i32 {
    try_code!(abi_check(abi_version));
    let config = try_code!(decider_config(try_boundary!(boundary::config(config))));
    try_boundary!(boundary::init(
        mem,
        mem_len,
        flows,
        config,
        owns_tables,
        out
    ));
    LCMP_OK
}

/// Creates a decider with no tables and `flows` flow-cache slots (a power
/// of two of at least `LCMP_MIN_FLOWS`) in `mem` (at least
/// `lcmp_decider_size(flows)` bytes, aligned to `lcmp_decider_align()`)
/// and stores its handle in `*out`. Call it as `lcmp_decider_init(mem,
/// mem_len, flows, config, out)`, lcmp.h's macro, which passes the
/// header's `LCMP_ABI_VERSION` as `abi_version`: a library of another ABI
/// version returns `LCMP_ERR_ABI` before it reads or writes anything, with
/// a null config too. `config` may be null for the defaults (LCMP,
/// MurmurHash3, refuse on a full cache, seed 0); otherwise its `size` and
/// `abi_version` must be `sizeof(lcmp_config)` and `LCMP_ABI_VERSION`
/// (else `LCMP_ERR_ABI`). Until `lcmp_install` every packet gets no route.
///
/// The memory's previous contents do not matter, except one word: memory
/// that holds a live decider or tables object (its magic word) is refused
/// with `LCMP_ERR_ALREADY_INITIALIZED` and nothing changes, so that a
/// second init can neither reset a running decider nor lose the user
/// count of the shared tables it reads. To re-initialise a decider, call
/// `lcmp_decider_fini` first (memory freed without it and handed out
/// again may still hold the word: finish or zero it).
///
/// # Safety
/// `mem` must be valid for reads and writes of `mem_len` bytes and not be
/// used by anything else while the handle lives; `config` must be null or
/// point to an `lcmp_config`; `out` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_decider_init_(
    mem: *mut c_void,
    mem_len: usize,
    flows: usize,
    config: *const lcmp_config,
    out: *mut *mut lcmp_decider,
    abi_version: u32,
) -> i32 {
    forward!(decider_init(
        mem,
        mem_len,
        flows,
        config,
        out,
        true,
        abi_version
    ))
}

/// [`lcmp_decider_init_`] with this library's `LCMP_ABI_VERSION`, as
/// lcmp.h's `lcmp_decider_init` macro calls it (for Rust callers; not
/// exported).
///
/// # Safety
/// As `lcmp_decider_init_`.
pub unsafe extern "C" fn lcmp_decider_init(
    mem: *mut c_void,
    mem_len: usize,
    flows: usize,
    config: *const lcmp_config,
    out: *mut *mut lcmp_decider,
) -> i32 {
    forward!(lcmp_decider_init_(
        mem,
        mem_len,
        flows,
        config,
        out,
        LCMP_ABI_VERSION
    ))
}

/// `lcmp_decider_init` for a decider with no tables of its own, in
/// `lcmp_decider_shared_size(flows)` bytes: it reads the tables of an
/// `lcmp_tables` object that other deciders may share (`lcmp_use_tables`);
/// until then every packet gets no route, and `lcmp_install` on it is
/// `LCMP_ERR_TABLES_SHARED`.
///
/// Called as `lcmp_decider_init_shared(mem, mem_len, flows, config, out)`,
/// lcmp.h's macro, which passes `LCMP_ABI_VERSION` (checked first, as by
/// `lcmp_decider_init_`).
///
/// # Safety
/// As `lcmp_decider_init_`.
#[no_mangle]
pub unsafe extern "C" fn lcmp_decider_init_shared_(
    mem: *mut c_void,
    mem_len: usize,
    flows: usize,
    config: *const lcmp_config,
    out: *mut *mut lcmp_decider,
    abi_version: u32,
) -> i32 {
    forward!(decider_init(
        mem,
        mem_len,
        flows,
        config,
        out,
        false,
        abi_version
    ))
}

/// [`lcmp_decider_init_shared_`] with this library's `LCMP_ABI_VERSION`,
/// as lcmp.h's `lcmp_decider_init_shared` macro calls it (for Rust
/// callers; not exported).
///
/// # Safety
/// As `lcmp_decider_init_`.
pub unsafe extern "C" fn lcmp_decider_init_shared(
    mem: *mut c_void,
    mem_len: usize,
    flows: usize,
    config: *const lcmp_config,
    out: *mut *mut lcmp_decider,
) -> i32 {
    forward!(lcmp_decider_init_shared_(
        mem,
        mem_len,
        flows,
        config,
        out,
        LCMP_ABI_VERSION
    ))
}

/// Ends decider `d`: lets go of the tables it reads (a shared object's
/// user count drops, as with `lcmp_release_tables`) and clears its magic
/// word, so that every later call on the handle is
/// `LCMP_ERR_NOT_INITIALIZED` and its memory may be freed or initialised
/// again (`lcmp_decider_init` refuses memory that holds a live decider).
/// Re-initialising a decider is `lcmp_decider_fini`, then
/// `lcmp_decider_init` or `lcmp_decider_init_shared`: its pins, port
/// state and counters are gone.
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time.
#[no_mangle]
pub unsafe extern "C" fn lcmp_decider_fini(d: *mut lcmp_decider) -> i32 {
    let d = handle_mut!(d);
    drop(d.inner.release_tables());
    d.generation = 0;
    // The decider's own tables object: no user is left (its only reader,
    // `d`, let go above), so this cannot be refused.
    if let Some(own) = d.own() {
        if let Err(code) = own.finish() {
            return code;
        }
    }
    d.end();
    LCMP_OK
}

/// Installs decoded tables from a table blob (the versioned postcard blob
/// of `lcmp tables -o`), exactly `len` bytes (a longer buffer is
/// `LCMP_ERR_BLOB_LENGTH`; `lcmp_blob_len` finds a blob's length in one).
/// Hitless: pinned flows keep their ports (a pin whose port the new tables
/// withdraw from its group is re-decided on the flow's next packet). On
/// any error nothing changes. The tables go into the decider's own tables
/// object, which it reads from then on (also after `lcmp_use_tables` of a
/// shared one); a decider made by `lcmp_decider_init_shared` has none:
/// `LCMP_ERR_TABLES_SHARED`.
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time; `blob`
/// must be readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn lcmp_install(d: *mut lcmp_decider, blob: *const u8, len: usize) -> i32 {
    let d = handle_mut!(d);
    let blob = bytes!(blob, len);
    // Decoded into the tables object's scratch, then validated and
    // compiled in place: the decider is unchanged on error.
    match install_own(d, |s| decode_unsigned(blob, s)) {
        Ok(_) => LCMP_OK,
        Err(code) => code,
    }
}

/// The length of the table blob at the start of `buf` (`buf_len` bytes),
/// read from its header: `*out_len` is the header plus its declared
/// payload, at most `buf_len`, so a blob inside a larger buffer (a DMA
/// region, a flash sector) is found. Checks the header only (magic,
/// format version, declared length); the CRC and the tables are checked by
/// `lcmp_install`. Errors: `LCMP_ERR_BLOB_TRUNCATED` (shorter than the
/// header or than the declared length), `LCMP_ERR_BLOB_BAD_MAGIC`,
/// `LCMP_ERR_BLOB_VERSION`, `LCMP_ERR_BAD_BLOB` (declared length over the
/// format's limit).
///
/// # Safety
/// `buf` must be readable for `buf_len` bytes; `out_len` null (an error) or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_blob_len(buf: *const u8, buf_len: usize, out_len: *mut usize) -> i32 {
    let bytes = bytes!(buf, buf_len);
    if out_len.is_null() {
        return LCMP_ERR_NULL;
    }
    match blob_len(bytes) {
        Ok(n) => {
            output!(out_len, n);
            LCMP_OK
        }
        Err(code) => code,
    }
}

/// The blob length of [`lcmp_blob_len`], from the header layout of
/// `lcmp_tables::blob` (magic, version at 4, payload length at 16).
fn blob_len(bytes: &[u8]) -> Result<usize, i32> {
    use ::lcmp_tables::blob::{
        BLOB_HEADER_LEN, BLOB_MAGIC, BLOB_OLDEST_VERSION, BLOB_VERSION, MAX_BLOB_PAYLOAD,
    };
    let header = bytes
        .get(..BLOB_HEADER_LEN)
        .ok_or(LCMP_ERR_BLOB_TRUNCATED)?;
    let field = |at: usize, n: usize| header.get(at..at.saturating_add(n)).unwrap_or(&[]);
    if field(0, 4) != BLOB_MAGIC {
        return Err(LCMP_ERR_BLOB_BAD_MAGIC);
    }
    let version = match *field(4, 2) {
        [a, b] => u16::from_le_bytes([a, b]),
        _ => return Err(LCMP_ERR_BLOB_TRUNCATED),
    };
    if !(BLOB_OLDEST_VERSION..=BLOB_VERSION).contains(&version) {
        return Err(LCMP_ERR_BLOB_VERSION);
    }
    let declared = match *field(16, 4) {
        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
        _ => return Err(LCMP_ERR_BLOB_TRUNCATED),
    };
    let payload = usize::try_from(declared).map_err(|_| LCMP_ERR_BAD_BLOB)?;
    if payload > MAX_BLOB_PAYLOAD {
        return Err(LCMP_ERR_BAD_BLOB);
    }
    let total = BLOB_HEADER_LEN.saturating_add(payload);
    if total > bytes.len() {
        return Err(LCMP_ERR_BLOB_TRUNCATED);
    }
    Ok(total)
}

/// The generation (blob header) of the tables the decider reads (its own
/// from `lcmp_install`, or a shared object's from `lcmp_use_tables`), 0
/// without tables. A control plane checks with it that a decider runs the
/// tables it published.
///
/// # Safety
/// `d` must be a live handle not written concurrently; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_generation(d: *const lcmp_decider, out: *mut u64) -> i32 {
    let generation = handle_ref!(d).generation;
    output!(out, generation);
    LCMP_OK
}

/// `LCMP_FAMILY_V4` or `LCMP_FAMILY_V6`.
#[inline]
fn valid_family(p: &lcmp_packet) -> bool {
    matches!(p.flow.family, LCMP_FAMILY_V4 | LCMP_FAMILY_V6)
}

/// `port` as a port of the installed tables, else `LCMP_ERR_NO_SUCH_PORT`
/// (`LCMP_ERR_PORT_OUT_OF_RANGE` beyond `LCMP_PORTS`).
fn installed_port(d: &Inner, port: u8) -> Result<PortId, i32> {
    let p = port_from_c(port)?;
    match d.tables().and_then(|t| t.port(p)) {
        Some(_) => Ok(p),
        None => Err(LCMP_ERR_NO_SUCH_PORT),
    }
}

/// Feeds one queue-depth sample (bytes) of `port`, taken at tick `now`.
/// `LCMP_ERR_NO_SUCH_PORT` if the installed tables do not list `port`
/// (nothing is recorded).
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time.
#[no_mangle]
pub unsafe extern "C" fn lcmp_sample(
    d: *mut lcmp_decider,
    now: u32,
    port: u8,
    queue_bytes: u64,
) -> i32 {
    let d = &mut handle_mut!(d).inner;
    // The core refuses a port its tables do not list (`PortNotInTables`,
    // mapped to `LCMP_ERR_NO_SUCH_PORT`) and records nothing.
    status(port_from_c(port).and_then(|p| {
        d.sample(Instant::from_ticks(now), p, queue_bytes)
            .map_err(error_code)
    }))
}

/// Sets a port up (`up` 1) or down (0; fast failover: flows pinned to it
/// are re-decided at their next packet). `LCMP_ERR_NO_SUCH_PORT` if the
/// installed tables do not list `port`, `LCMP_ERR_INVALID_ARGUMENT` if
/// `up` is neither 0 nor 1 (nothing changes). A `uint8_t`, not a C
/// `bool`: a `bool` holding anything but 0 or 1 is undefined behaviour
/// in Rust.
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time.
#[no_mangle]
pub unsafe extern "C" fn lcmp_set_port(d: *mut lcmp_decider, port: u8, up: u8) -> i32 {
    let d = &mut handle_mut!(d).inner;
    status(flag(up).and_then(|up| {
        installed_port(d, port).and_then(|p| d.set_port_up(p, up).map_err(error_code))
    }))
}

/// A C flag: 0 or 1, anything else `LCMP_ERR_INVALID_ARGUMENT`.
fn flag(v: u8) -> Result<bool, i32> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(LCMP_ERR_INVALID_ARGUMENT),
    }
}

/// Routes one packet of `flow` towards route group `group` at tick `now`
/// and writes the decision to `*out`.
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time; `flow`
/// must be readable and `out` writable (or null: an error).
#[no_mangle]
pub unsafe extern "C" fn lcmp_on_packet(
    d: *mut lcmp_decider,
    now: u32,
    flow: *const lcmp_flow,
    group: u16,
    out: *mut lcmp_decision,
) -> i32 {
    let d = &mut handle_mut!(d).inner;
    let key = match flow_from_c(input!(flow)) {
        Ok(k) => k,
        Err(e) => return e,
    };
    if out.is_null() {
        return LCMP_ERR_NULL;
    }
    let decision = d.on_packet(Instant::from_ticks(now), &key, GroupId(group));
    output!(out, decision_to_c(decision));
    LCMP_OK
}

/// Routes a burst of `n` packets at tick `now`, in order, writing `out[i]`
/// for `packets[i]`: exactly the decisions `n` calls of `lcmp_on_packet`
/// would give, faster when the flow cache is larger than the CPU's caches
/// (the cache lines of each group of `LCMP_BURST` packets are read before
/// any of them is decided). Returns `n`, or an error code; a packet with an
/// invalid address family rejects the whole burst before any is routed.
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time;
/// `packets` readable and `out` writable for `n` elements (either may be
/// null when `n` is 0).
#[no_mangle]
pub unsafe extern "C" fn lcmp_on_packets(
    d: *mut lcmp_decider,
    now: u32,
    packets: *const lcmp_packet,
    n: usize,
    out: *mut lcmp_decision,
) -> i32 {
    let handle = handle_mut!(d);
    let packets = slice!(packets, n);
    // The whole burst is rejected before any packet is routed: a check of
    // the family byte, the only field a conversion can refuse.
    if packets.iter().any(|p| !valid_family(p)) {
        return LCMP_ERR_INVALID_ARGUMENT;
    }
    let Ok(count) = i32::try_from(n) else {
        return LCMP_ERR_INVALID_ARGUMENT;
    };
    let out = slice_mut!(out, n);
    // The core's burst reads each C packet where it lies (converting a
    // hit's key once, for its fingerprint) and writes each C decision
    // directly; each flow's key and tick lines are prefetched, not loaded.
    handle.inner.on_packets_with(
        Instant::from_ticks(now),
        packets,
        packet_key,
        out,
        |o, d| *o = decision_to_c(d),
        boundary::prefetch_lines,
    );
    count
}

/// Incremental flow-cache garbage collection: visits at most `budget` slots.
/// Returns the number of idle entries cleared (`>= 0`) or an error code.
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time.
#[no_mangle]
pub unsafe extern "C" fn lcmp_gc(d: *mut lcmp_decider, now: u32, budget: u32) -> i32 {
    let d = &mut handle_mut!(d).inner;
    let budget = usize::try_from(budget).unwrap_or(usize::MAX);
    let evicted = d.gc(Instant::from_ticks(now), budget);
    // At most `budget <= u32::MAX` slots are visited.
    i32::try_from(evicted).unwrap_or(i32::MAX)
}

/// The flow cache's size in slots and how many hold an entry (idle ones
/// that GC has not reached included); either output may be null.
///
/// # Safety
/// `d` must be a live handle not written concurrently; the outputs null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn lcmp_flow_cache_usage(
    d: *const lcmp_decider,
    slots: *mut usize,
    used: *mut usize,
) -> i32 {
    let cache = handle_ref!(d).inner.flow_cache();
    if !slots.is_null() {
        output!(slots, cache.capacity());
    }
    if !used.is_null() {
        output!(used, cache.len());
    }
    LCMP_OK
}

/// Explains, without changing anything, the decision `lcmp_on_packet` would
/// make for `flow` now, into the caller's `*out` of `out_size` bytes. Call
/// it as `lcmp_explain(d, now, flow, group, out)`, lcmp.h's macro, which
/// passes `sizeof(lcmp_explanation)`: at most `out_size` bytes are
/// written (a newer library never writes past an older caller's struct);
/// below `LCMP_EXPLANATION_MIN_SIZE` it is `LCMP_ERR_ABI`, nothing written.
///
/// # Safety
/// `d` must be a live handle not written concurrently; `flow` readable;
/// `out` writable for `out_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn lcmp_explain_(
    d: *const lcmp_decider,
    now: u32,
    flow: *const lcmp_flow,
    group: u16,
    out: *mut lcmp_explanation,
    out_size: usize,
) -> i32 {
    let d = &handle_ref!(d).inner;
    let key = match flow_from_c(input!(flow)) {
        Ok(k) => k,
        Err(e) => return e,
    };
    if out.is_null() {
        return LCMP_ERR_NULL;
    }
    let e = explanation_to_c(&d.explain(Instant::from_ticks(now), &key, GroupId(group)));
    output_sized!(out, out_size, LCMP_EXPLANATION_MIN_SIZE, &e);
    LCMP_OK
}

/// [`lcmp_explain_`] of a whole `lcmp_explanation`, as lcmp.h's
/// `lcmp_explain` macro calls it (for Rust callers; not exported).
///
/// # Safety
/// As `lcmp_explain_`, `out` writable for one `lcmp_explanation`.
pub unsafe extern "C" fn lcmp_explain(
    d: *const lcmp_decider,
    now: u32,
    flow: *const lcmp_flow,
    group: u16,
    out: *mut lcmp_explanation,
) -> i32 {
    forward!(lcmp_explain_(
        d,
        now,
        flow,
        group,
        out,
        size_of::<lcmp_explanation>()
    ))
}

/// Copies the counters into the caller's `*out` of `out_size` bytes. Call
/// it as `lcmp_get_counters(d, out)`, lcmp.h's macro, which passes
/// `sizeof(lcmp_counters)`: at most `out_size` bytes are written, so a
/// caller built against an older header (fewer counters) gets the
/// counters it knows and nothing past its struct; below
/// `LCMP_COUNTERS_MIN_SIZE` it is `LCMP_ERR_ABI`, nothing written.
///
/// # Safety
/// `d` must be a live handle not written concurrently; `out` writable for
/// `out_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn lcmp_get_counters_(
    d: *const lcmp_decider,
    out: *mut lcmp_counters,
    out_size: usize,
) -> i32 {
    let value = lcmp_counters::from(handle_ref!(d).inner.counters());
    output_sized!(out, out_size, LCMP_COUNTERS_MIN_SIZE, &value);
    LCMP_OK
}

/// [`lcmp_get_counters_`] of a whole `lcmp_counters`, as lcmp.h's
/// `lcmp_get_counters` macro calls it (for Rust callers; not exported).
///
/// # Safety
/// As `lcmp_get_counters_`, `out` writable for one `lcmp_counters`.
pub unsafe extern "C" fn lcmp_get_counters(d: *const lcmp_decider, out: *mut lcmp_counters) -> i32 {
    forward!(lcmp_get_counters_(d, out, size_of::<lcmp_counters>()))
}

/// Switches the routing scheme (`LCMP_SCHEME_*`); pinned flows are kept.
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time.
#[no_mangle]
pub unsafe extern "C" fn lcmp_set_scheme(d: *mut lcmp_decider, scheme: u8) -> i32 {
    let d = &mut handle_mut!(d).inner;
    status(scheme_from_c(scheme).map(|s| d.set_scheme(s)))
}

/// Marks the installed tables outdated (`current` 0: LCMP falls back to
/// ECMP, paper §5) or current again (1); anything else is
/// `LCMP_ERR_INVALID_ARGUMENT` (nothing changes).
///
/// # Safety
/// `d` must be a live handle used by no other call at the same time.
#[no_mangle]
pub unsafe extern "C" fn lcmp_set_tables_current(d: *mut lcmp_decider, current: u8) -> i32 {
    let d = handle_mut!(d);
    status(flag(current).map(|c| d.inner.set_tables_current(c)))
}

/// A static, NUL-terminated description of a status code (never null; an
/// unknown code gets "unknown error code").
#[no_mangle]
pub extern "C" fn lcmp_strerror(code: i32) -> *const c_char {
    strerror(code).as_ptr()
}

/// A static, NUL-terminated name of an `LCMP_REASON_*` code (the core's
/// and the `lcmp` tool's JSON spelling; "unknown" for other values).
#[no_mangle]
pub extern "C" fn lcmp_reason_str(reason: u8) -> *const c_char {
    reason_name(reason).as_ptr()
}

/// An IPv4 flow from numeric addresses (10.0.0.1 is `0x0A000001`).
#[no_mangle]
pub extern "C" fn lcmp_flow_v4(src: u32, dst: u32, sport: u16, dport: u16, proto: u8) -> lcmp_flow {
    let mut f = lcmp_flow {
        family: LCMP_FAMILY_V4,
        sport,
        dport,
        proto,
        ..lcmp_flow::default()
    };
    for (slot, b) in f.src.iter_mut().zip(src.to_be_bytes()) {
        *slot = b;
    }
    for (slot, b) in f.dst.iter_mut().zip(dst.to_be_bytes()) {
        *slot = b;
    }
    f
}
