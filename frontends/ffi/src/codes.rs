//! Every numeric code of the C ABI, and nothing else (a leaf: it imports
//! no module of this crate): the status codes, with their messages in one
//! table ([`STATUS`], read by `lcmp_strerror`) and one mapping from the
//! Rust errors ([`error_code`], [`tables_error_code`]), as rustls-ffi keeps
//! one `rustls_result` and one `map_error`; and the enum codes of configs,
//! flows, decisions, reasons and cuts. The enum codes are the core's own
//! (`lcmp_decide::codes`); the literals here exist because cbindgen needs
//! them to write `#define`s, and a compile-time assertion ties each to the
//! core's value, so the two cannot drift.

use core::ffi::CStr;

use ::lcmp_tables::{FormatError, SignatureError, TablesError};
use lcmp_decide::codes::DecisionKind;
use lcmp_decide::{CutReason, Error, Reason, Scheme};

/// Success.
pub const LCMP_OK: i32 = 0;
/// A required pointer was null.
pub const LCMP_ERR_NULL: i32 = -1;
/// A pointer was not aligned for its type (a decider's memory: to
/// `lcmp_decider_align()`).
pub const LCMP_ERR_MISALIGNED: i32 = -2;
/// The memory given to `lcmp_decider_init` is smaller than
/// `lcmp_decider_size(flows)`.
pub const LCMP_ERR_BUFFER_TOO_SMALL: i32 = -3;
/// The handle was not initialised by `lcmp_decider_init`.
pub const LCMP_ERR_NOT_INITIALIZED: i32 = -4;
/// An enum-like argument (scheme, hash, overflow policy, address family)
/// is out of range.
pub const LCMP_ERR_INVALID_ARGUMENT: i32 = -5;
/// A port id is not below `LCMP_PORTS`.
pub const LCMP_ERR_PORT_OUT_OF_RANGE: i32 = -6;
/// The table blob could not be decoded for a reason without its own code
/// (reserved bits set, a declared length over the limit, a malformed,
/// oversize or non-canonical payload); see also `LCMP_ERR_BLOB_*`.
pub const LCMP_ERR_BAD_BLOB: i32 = -7;
/// The flow-slot count is not a power of two of at least `LCMP_MIN_FLOWS`.
pub const LCMP_ERR_FLOWS: i32 = -8;
/// The caller was compiled against another header: the `LCMP_ABI_VERSION`
/// an init call passes (lcmp.h's init macros pass it) is not this
/// library's, `lcmp_config.size` is not its `sizeof(lcmp_config)` or
/// `lcmp_config.abi_version` not its `LCMP_ABI_VERSION`, or a sized
/// output (`lcmp_get_counters`, `lcmp_explain`) is smaller than the oldest
/// layout this library fills (`LCMP_COUNTERS_MIN_SIZE`,
/// `LCMP_EXPLANATION_MIN_SIZE`).
pub const LCMP_ERR_ABI: i32 = -9;
/// The installed tables do not list this port (a queue sample or link
/// event for it, or any port before the first `lcmp_install`).
pub const LCMP_ERR_NO_SUCH_PORT: i32 = -23;
/// `lcmp_decider_init`, `lcmp_decider_init_shared` or `lcmp_tables_init`
/// over memory that holds a live decider or tables object: nothing is
/// changed (a second init would reset a running decider, or lose the user
/// count of the tables it reads). Finish the object first
/// (`lcmp_decider_fini`, `lcmp_tables_fini`).
pub const LCMP_ERR_ALREADY_INITIALIZED: i32 = -24;
/// The table blob is shorter than its header or its declared length.
pub const LCMP_ERR_BLOB_TRUNCATED: i32 = -30;
/// The table blob does not start with the magic `LCMT`.
pub const LCMP_ERR_BLOB_BAD_MAGIC: i32 = -31;
/// The table blob's format version is not supported.
pub const LCMP_ERR_BLOB_VERSION: i32 = -32;
/// The table blob's CRC does not match.
pub const LCMP_ERR_BLOB_CRC: i32 = -33;
/// The buffer given to `lcmp_install` is longer than the blob its header
/// declares (`lcmp_blob_len` finds a blob's length in a larger buffer).
pub const LCMP_ERR_BLOB_LENGTH: i32 = -34;
/// `lcmp_tables_install` into a tables object that a decider still reads
/// (`lcmp_tables_users` > 0) or that another install is writing.
pub const LCMP_ERR_TABLES_IN_USE: i32 = -35;
/// `lcmp_use_tables` of a tables object that holds no tables yet or that
/// an install is writing.
pub const LCMP_ERR_TABLES_NOT_READY: i32 = -36;
/// `lcmp_install` on a decider made by `lcmp_decider_init_shared`: it has
/// no tables of its own (install into an `lcmp_tables` object instead).
pub const LCMP_ERR_TABLES_SHARED: i32 = -37;
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
/// The blob was signed for another device: another switch id or topology
/// than the `scope` passed (the mix-and-match of one switch's tables onto
/// another).
pub const LCMP_ERR_SIG_WRONG_SCOPE: i32 = -45;
/// A version 1 signed envelope, which has no scope: refused (re-sign with
/// `lcmp tables sign --topology --switch`).
pub const LCMP_ERR_SIG_UNSCOPED: i32 = -46;
/// The blob's signed expiry is before `now`.
pub const LCMP_ERR_SIG_EXPIRED: i32 = -47;
/// Tables: a shift of 32 or more.
pub const LCMP_ERR_SHIFT_TOO_LARGE: i32 = -10;
/// Tables: weights whose weighted sum of scores could overflow.
pub const LCMP_ERR_WEIGHT_OVERFLOW: i32 = -11;
/// Tables: a water mark, cut or tick rate out of range.
pub const LCMP_ERR_INVALID_SETTING: i32 = -12;
/// Tables: level scores empty or not strictly increasing.
pub const LCMP_ERR_INVALID_LEVELS: i32 = -13;
/// Tables: capacity thresholds not one per level or not increasing.
pub const LCMP_ERR_INVALID_CAPACITY_THRESHOLDS: i32 = -14;
/// Tables: a port listed twice.
pub const LCMP_ERR_DUPLICATE_PORT: i32 = -15;
/// Tables: a port with zero rate or buffer.
pub const LCMP_ERR_ZERO_PORT_CAPACITY: i32 = -16;
/// Tables: a group names a port that is not listed.
pub const LCMP_ERR_UNKNOWN_PORT: i32 = -17;
/// Tables: a group listed twice.
pub const LCMP_ERR_DUPLICATE_GROUP: i32 = -18;
/// Tables: a group without candidates.
pub const LCMP_ERR_EMPTY_GROUP: i32 = -19;
/// Tables: a port twice in one group.
pub const LCMP_ERR_DUPLICATE_CANDIDATE: i32 = -20;
/// Tables: a candidate with zero capacity.
pub const LCMP_ERR_ZERO_CAPACITY: i32 = -21;
/// Tables: rejected for a reason this ABI version does not name.
pub const LCMP_ERR_INVALID_TABLES: i32 = -22;

/// `lcmp_config.scheme`: LCMP (§3).
pub const LCMP_SCHEME_LCMP: u8 = 0;
/// `lcmp_config.scheme`: ECMP over the live candidates.
pub const LCMP_SCHEME_ECMP: u8 = 1;
/// `lcmp_config.scheme`: UCMP (the live candidates of maximum capacity).
pub const LCMP_SCHEME_UCMP: u8 = 2;
/// `lcmp_config.hash`: MurmurHash3 x86_32 seeded with the switch seed.
pub const LCMP_HASH_MURMUR3: u8 = 0;
/// `lcmp_config.hash`: CRC-32 (IEEE) XOR the seed, as a Tofino computes.
pub const LCMP_HASH_CRC32: u8 = 1;
/// `lcmp_config.overflow`: a new flow the flow cache cannot pin gets no
/// route (`LCMP_REASON_CACHE_FULL`), so no forwarded flow ever changes port
/// while its port is up and a candidate (the default).
pub const LCMP_OVERFLOW_REFUSE: u8 = 0;
/// `lcmp_config.overflow`: such a flow is routed by stateless ECMP
/// (`LCMP_DECISION_UNPINNED`) and may change port later.
pub const LCMP_OVERFLOW_STATELESS: u8 = 1;
/// `lcmp_flow.family`: IPv4 (addresses in the first 4 bytes).
pub const LCMP_FAMILY_V4: u8 = 4;
/// `lcmp_flow.family`: IPv6.
pub const LCMP_FAMILY_V6: u8 = 6;

/// `lcmp_decision.kind`: an established flow followed its pinned port.
pub const LCMP_DECISION_HIT: u8 = 0;
/// `lcmp_decision.kind`: a new flow, decided and pinned.
pub const LCMP_DECISION_NEW: u8 = 1;
/// `lcmp_decision.kind`: a pinned flow whose port went down or was
/// withdrawn from its group, re-decided and re-pinned.
pub const LCMP_DECISION_FAILOVER: u8 = 2;
/// `lcmp_decision.kind`: the flow cache had no room and the decider runs
/// `LCMP_OVERFLOW_STATELESS`: stateless ECMP, not pinned.
pub const LCMP_DECISION_UNPINNED: u8 = 3;
/// `lcmp_decision.kind`: no route (`port` is `LCMP_NO_PORT`).
pub const LCMP_DECISION_NO_ROUTE: u8 = 4;

/// Reason: an established flow followed its pinned, live port.
pub const LCMP_REASON_PINNED: u8 = 0;
/// Reason: LCMP hashed within the kept set.
pub const LCMP_REASON_HASH_IN_KEPT: u8 = 1;
/// Reason: LCMP capacity-weighted pick within the kept set.
pub const LCMP_REASON_WEIGHTED_IN_KEPT: u8 = 2;
/// Reason: every candidate was over the cut; the minimum-cost one was taken.
pub const LCMP_REASON_MIN_COST_FALLBACK: u8 = 3;
/// Reason: the ECMP scheme.
pub const LCMP_REASON_ECMP: u8 = 4;
/// Reason: the UCMP scheme.
pub const LCMP_REASON_UCMP: u8 = 5;
/// Reason: tables marked outdated, ECMP fallback.
pub const LCMP_REASON_ECMP_FALLBACK: u8 = 6;
/// Reason: the flow cache had no room for a new flow.
pub const LCMP_REASON_CACHE_FULL: u8 = 7;
/// Reason: every candidate is down.
pub const LCMP_REASON_NO_LIVE_CANDIDATE: u8 = 8;
/// Reason: the group (or any table) is not installed.
pub const LCMP_REASON_UNKNOWN_GROUP: u8 = 9;

/// `lcmp_candidate.cut_reason`: kept (or not applicable).
pub const LCMP_CUT_NONE: u8 = 0;
/// Cut: the port is down.
pub const LCMP_CUT_DOWN: u8 = 1;
/// Cut: sorted into the high-cost half.
pub const LCMP_CUT_UPPER_HALF: u8 = 2;
/// Cut: fused cost at or above the cut.
pub const LCMP_CUT_OVER_CUT: u8 = 3;
/// Cut (UCMP): capacity below the maximum.
pub const LCMP_CUT_NOT_MAX_CAPACITY: u8 = 4;

// Each C literal is the core's code.
const _: () = {
    assert!(LCMP_SCHEME_LCMP == Scheme::Lcmp.code());
    assert!(LCMP_SCHEME_ECMP == Scheme::Ecmp.code());
    assert!(LCMP_SCHEME_UCMP == Scheme::Ucmp.code());
    assert!(LCMP_DECISION_HIT == DecisionKind::Hit.code());
    assert!(LCMP_DECISION_NEW == DecisionKind::New.code());
    assert!(LCMP_DECISION_FAILOVER == DecisionKind::Failover.code());
    assert!(LCMP_DECISION_UNPINNED == DecisionKind::Unpinned.code());
    assert!(LCMP_DECISION_NO_ROUTE == DecisionKind::NoRoute.code());
    assert!(LCMP_REASON_PINNED == Reason::Pinned.code());
    assert!(LCMP_REASON_HASH_IN_KEPT == Reason::HashInKept.code());
    assert!(LCMP_REASON_WEIGHTED_IN_KEPT == Reason::WeightedInKept.code());
    assert!(LCMP_REASON_MIN_COST_FALLBACK == Reason::MinCostFallback.code());
    assert!(LCMP_REASON_ECMP == Reason::Ecmp.code());
    assert!(LCMP_REASON_UCMP == Reason::Ucmp.code());
    assert!(LCMP_REASON_ECMP_FALLBACK == Reason::EcmpFallback.code());
    assert!(LCMP_REASON_CACHE_FULL == Reason::CacheFull.code());
    assert!(LCMP_REASON_NO_LIVE_CANDIDATE == Reason::NoLiveCandidate.code());
    assert!(LCMP_REASON_UNKNOWN_GROUP == Reason::UnknownGroup.code());
    assert!(LCMP_CUT_NONE == CutReason::code(None));
    assert!(LCMP_CUT_DOWN == CutReason::code(Some(CutReason::Down)));
    assert!(LCMP_CUT_UPPER_HALF == CutReason::code(Some(CutReason::UpperHalf)));
    assert!(LCMP_CUT_OVER_CUT == CutReason::code(Some(CutReason::OverCut)));
    assert!(LCMP_CUT_NOT_MAX_CAPACITY == CutReason::code(Some(CutReason::NotMaxCapacity)));
};

/// The status code of a core error.
pub fn error_code(e: Error) -> i32 {
    match e {
        Error::ShiftTooLarge(_) => LCMP_ERR_SHIFT_TOO_LARGE,
        Error::WeightOverflow(_) => LCMP_ERR_WEIGHT_OVERFLOW,
        Error::InvalidSetting(_) => LCMP_ERR_INVALID_SETTING,
        Error::InvalidLevels => LCMP_ERR_INVALID_LEVELS,
        Error::InvalidCapacityThresholds => LCMP_ERR_INVALID_CAPACITY_THRESHOLDS,
        Error::PortOutOfRange(_) => LCMP_ERR_PORT_OUT_OF_RANGE,
        Error::PortNotInTables(_) => LCMP_ERR_NO_SUCH_PORT,
        Error::DuplicatePort(_) => LCMP_ERR_DUPLICATE_PORT,
        Error::ZeroPortCapacity(_) => LCMP_ERR_ZERO_PORT_CAPACITY,
        Error::UnknownPort { .. } => LCMP_ERR_UNKNOWN_PORT,
        Error::DuplicateGroup(_) => LCMP_ERR_DUPLICATE_GROUP,
        Error::EmptyGroup(_) => LCMP_ERR_EMPTY_GROUP,
        Error::DuplicateCandidate { .. } => LCMP_ERR_DUPLICATE_CANDIDATE,
        Error::ZeroCapacity { .. } => LCMP_ERR_ZERO_CAPACITY,
        Error::FlowSlots(_) => LCMP_ERR_FLOWS,
        _ => LCMP_ERR_INVALID_TABLES,
    }
}

/// The status code of an `lcmp_tables` error (a blob's, a signed blob's,
/// or the core's tables it carries): the one mapping of every install
/// and verify call.
pub fn tables_error_code(e: TablesError) -> i32 {
    match e {
        TablesError::Core(e) => error_code(e),
        TablesError::Format(FormatError::Truncated { .. }) => LCMP_ERR_BLOB_TRUNCATED,
        TablesError::Format(FormatError::BadMagic) => LCMP_ERR_BLOB_BAD_MAGIC,
        TablesError::Format(FormatError::UnsupportedVersion(_)) => LCMP_ERR_BLOB_VERSION,
        TablesError::Format(FormatError::CrcMismatch { .. }) => LCMP_ERR_BLOB_CRC,
        TablesError::Format(FormatError::LengthMismatch { .. }) => LCMP_ERR_BLOB_LENGTH,
        TablesError::Signature(e) => match e {
            SignatureError::BadSignature => LCMP_ERR_SIG_BAD_SIGNATURE,
            SignatureError::UnknownKey(_) => LCMP_ERR_SIG_UNKNOWN_KEY,
            SignatureError::Rollback { .. } => LCMP_ERR_SIG_ROLLBACK,
            SignatureError::Unsigned => LCMP_ERR_SIG_UNSIGNED,
            SignatureError::WrongScope { .. } => LCMP_ERR_SIG_WRONG_SCOPE,
            SignatureError::Unscoped => LCMP_ERR_SIG_UNSCOPED,
            SignatureError::Expired { .. } => LCMP_ERR_SIG_EXPIRED,
            _ => LCMP_ERR_SIG_BAD_KEY,
        },
        _ => LCMP_ERR_BAD_BLOB,
    }
}

/// `lcmp_strerror`'s message for a code this library does not define.
pub(crate) const UNKNOWN_CODE: &CStr =
    c"unknown error code (not an LCMP_ERR_* of this library's lcmp.h)";

/// Every status code of the C ABI with its `lcmp_strerror` message, in
/// code order: the one table of codes (a compile-time check below keeps
/// the codes distinct; a test compares the table with lcmp.h's
/// `LCMP_OK`/`LCMP_ERR_*` defines).
pub(crate) const STATUS: [(i32, &CStr); 41] = [
    (LCMP_OK, c"ok"),
    (LCMP_ERR_NULL, c"a required pointer is null"),
    (LCMP_ERR_MISALIGNED, c"a pointer is not aligned for its type"),
    (LCMP_ERR_BUFFER_TOO_SMALL, c"buffer smaller than its size call (lcmp_decider_size, lcmp_decider_shared_size or lcmp_tables_size)"),
    (LCMP_ERR_NOT_INITIALIZED, c"handle not initialised by lcmp_decider_init"),
    (LCMP_ERR_INVALID_ARGUMENT, c"argument out of range: scheme, hash, overflow policy, address family, a 0/1 flag, n_keys (1 or 2) or the scope"),
    (LCMP_ERR_PORT_OUT_OF_RANGE, c"port id is not below LCMP_PORTS"),
    (LCMP_ERR_BAD_BLOB, c"table blob cannot be decoded"),
    (LCMP_ERR_FLOWS, c"flow slots must be a power of two of at least LCMP_MIN_FLOWS"),
    (LCMP_ERR_ABI, c"compiled against another lcmp.h: LCMP_ABI_VERSION, lcmp_config.size/abi_version or an output struct's size differs from this library's (rebuild with its header)"),
    (LCMP_ERR_SHIFT_TOO_LARGE, c"tables: a shift is 32 or more"),
    (LCMP_ERR_WEIGHT_OVERFLOW, c"tables: weights could overflow the weighted sum"),
    (LCMP_ERR_INVALID_SETTING, c"tables: water mark, cut or tick rate out of range"),
    (LCMP_ERR_INVALID_LEVELS, c"tables: level scores empty or not strictly increasing"),
    (LCMP_ERR_INVALID_CAPACITY_THRESHOLDS, c"tables: capacity thresholds not one per level or not increasing"),
    (LCMP_ERR_DUPLICATE_PORT, c"tables: a port is listed twice"),
    (LCMP_ERR_ZERO_PORT_CAPACITY, c"tables: a port has zero rate or buffer"),
    (LCMP_ERR_UNKNOWN_PORT, c"tables: a group names an unknown port"),
    (LCMP_ERR_DUPLICATE_GROUP, c"tables: a group is listed twice"),
    (LCMP_ERR_EMPTY_GROUP, c"tables: a group has no candidate"),
    (LCMP_ERR_DUPLICATE_CANDIDATE, c"tables: a port appears twice in one group"),
    (LCMP_ERR_ZERO_CAPACITY, c"tables: a candidate has zero capacity"),
    (LCMP_ERR_INVALID_TABLES, c"tables rejected"),
    (LCMP_ERR_NO_SUCH_PORT, c"the installed tables have no such port"),
    (LCMP_ERR_ALREADY_INITIALIZED, c"memory holds a live decider or tables object: finish it (lcmp_*_fini) first"),
    (LCMP_ERR_BLOB_TRUNCATED, c"table blob truncated"),
    (LCMP_ERR_BLOB_BAD_MAGIC, c"not a table blob (bad magic; a signed blob, magic LCMS, goes to lcmp_install_signed)"),
    (LCMP_ERR_BLOB_VERSION, c"table blob format version not supported"),
    (LCMP_ERR_BLOB_CRC, c"table blob CRC mismatch"),
    (LCMP_ERR_BLOB_LENGTH, c"buffer longer than the table blob's declared length"),
    (LCMP_ERR_TABLES_IN_USE, c"tables object still used by a decider or being installed"),
    (LCMP_ERR_TABLES_NOT_READY, c"tables object empty or being installed"),
    (LCMP_ERR_TABLES_SHARED, c"decider has no tables of its own: install into its lcmp_tables"),
    (LCMP_ERR_SIG_BAD_SIGNATURE, c"bad signature: the blob was changed or signed by another key"),
    (LCMP_ERR_SIG_UNKNOWN_KEY, c"signed by a key that is not trusted"),
    (LCMP_ERR_SIG_ROLLBACK, c"rollback: generation not newer than the installed one"),
    (LCMP_ERR_SIG_UNSIGNED, c"unsigned blob: only signed blobs are accepted"),
    (LCMP_ERR_SIG_BAD_KEY, c"trusted key not a valid Ed25519 public key, or a duplicate"),
    (LCMP_ERR_SIG_WRONG_SCOPE, c"wrong scope: the blob was signed for another switch or topology"),
    (LCMP_ERR_SIG_UNSCOPED, c"signed envelope version 1 (no scope): re-sign it"),
    (LCMP_ERR_SIG_EXPIRED, c"expired: the blob's signed expiry has passed"),
];

/// Where each code's message is in [`STATUS`] (255: no such code),
/// indexed by `-code`: built from the table at compile time, so that
/// `lcmp_strerror` is a bounds check and two loads, not a search.
const BY_CODE: [u8; 48] = {
    let mut index = [u8::MAX; 48];
    let mut i = 0;
    while i < STATUS.len() {
        let code = STATUS[i].0;
        // Every code is in 0..=-47 and appears once.
        assert!(code <= 0 && code > -(index.len() as i32));
        assert!(index[(-code) as usize] == u8::MAX);
        index[(-code) as usize] = i as u8;
        i += 1;
    }
    index
};

/// The message of `lcmp_strerror`: the code's in `STATUS`, or
/// `UNKNOWN_CODE`.
pub fn strerror(code: i32) -> &'static CStr {
    code.checked_neg()
        .and_then(|n| usize::try_from(n).ok())
        .and_then(|n| BY_CODE.get(n))
        .and_then(|&i| STATUS.get(usize::from(i)))
        .map_or(UNKNOWN_CODE, |(_, message)| message)
}

/// The core's reason names as C strings, in code order (checked against
/// `Reason::name` at compile time below).
const REASON_NAMES: [&CStr; Reason::ALL.len()] = [
    c"pinned",
    c"hash_in_kept",
    c"weighted_in_kept",
    c"min_cost_fallback",
    c"ecmp",
    c"ucmp",
    c"ecmp_fallback",
    c"cache_full",
    c"no_live_candidate",
    c"unknown_group",
];

/// `a == b`, in a `const` context.
const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const _: () = {
    let mut i = 0;
    while i < Reason::ALL.len() {
        let r = Reason::ALL[i];
        assert!(r.code() as usize == i);
        assert!(same_bytes(REASON_NAMES[i].to_bytes(), r.name().as_bytes()));
        i += 1;
    }
};

/// The name of `lcmp_reason_str`: the core's [`Reason::name`], or
/// "unknown".
pub fn reason_name(reason: u8) -> &'static CStr {
    REASON_NAMES
        .get(usize::from(reason))
        .copied()
        .unwrap_or(c"unknown")
}
