//! The C ABI's layout, and nothing else (a leaf: it imports no module of
//! this crate): its sizes and version, the `repr(C)` structs a caller
//! passes in and gets back, and the opaque digest. The conversions to and
//! from the core's types are in `convert`, the codes in `codes`.

use core::mem::size_of;

use ::lcmp_tables::replay::Digest;
use lcmp_decide::BURST;

/// Ports of one decider (port ids `0..LCMP_PORTS`).
pub const LCMP_PORTS: usize = 64;
/// The flow-cache size of the replay shape: `lcmp replay` and the firmware
/// decide with 1 024 slots (`lcmp_tables::replay::ReplayDecider`), so a
/// decider of this size reproduces their digests. Any other power of two
/// of at least `LCMP_MIN_FLOWS` works for routing.
pub const LCMP_FLOWS: usize = 1024;
/// The smallest flow cache (one block of two 8-slot buckets).
pub const LCMP_MIN_FLOWS: usize = 16;
/// Bytes of memory per flow slot.
pub const LCMP_SLOT_BYTES: usize = 12;
/// Alignment of a decider's memory (the flow cache's key lines).
pub const LCMP_DECIDER_ALIGN: usize = 64;
/// Upper bound, on every target, of the bytes before the slots (checked at
/// compile time): `lcmp_decider_size(flows) <= LCMP_DECIDER_HEADER_MAX +
/// LCMP_SLOT_BYTES * flows`, for `static` storage in C.
pub const LCMP_DECIDER_HEADER_MAX: usize = 45056;
/// Most candidates in one route group (and in one explanation).
pub const LCMP_MAX_CANDIDATES: usize = 16;
/// The port value meaning "none" (no route, not pinned, no rank).
pub const LCMP_NO_PORT: u8 = 255;
/// Packets decided together by `lcmp_on_packets` (its chunk size; any
/// count may be passed).
pub const LCMP_BURST: usize = 32;

/// The ABI version of this library and header (bumped on any change to a
/// struct layout, a code or a signature; see CHANGELOG.md). Every init call
/// checks the caller's: the header's `lcmp_decider_init`,
/// `lcmp_decider_init_shared` and `lcmp_tables_init` are macros that pass
/// it to `lcmp_decider_init_`, `lcmp_decider_init_shared_` and
/// `lcmp_tables_init_` (zlib's `deflateInit` / `deflateInit_` pattern),
/// which return `LCMP_ERR_ABI` on a mismatch before they read or write
/// anything.
pub const LCMP_ABI_VERSION: u32 = 8;

/// The smallest `out_size` `lcmp_get_counters_` fills: the
/// `lcmp_counters` of ABI 3, which today's begins with (ABI 4 appended
/// `reclaimed`). A caller's struct of that layout gets every counter but
/// the ones appended since; a smaller size is `LCMP_ERR_ABI`.
pub const LCMP_COUNTERS_MIN_SIZE: usize = 104;

/// The smallest `out_size` `lcmp_explain_` fills: `sizeof(lcmp_explanation)`
/// of this header (its layout is unchanged since ABI 1); a smaller size
/// is `LCMP_ERR_ABI`.
pub const LCMP_EXPLANATION_MIN_SIZE: usize = 220;

// The digest is defined for this port count (lcmp_tables::replay).
const _: () = assert!(LCMP_PORTS == ::lcmp_tables::replay::REPLAY_PORTS);
const _: () = assert!(LCMP_FLOWS == ::lcmp_tables::replay::REPLAY_FLOWS);
const _: () = assert!(LCMP_MIN_FLOWS == lcmp_decide::flow_cache::BLOCK_SLOTS);
const _: () = assert!(LCMP_BURST == BURST);
const _: () = assert!(LCMP_SLOT_BYTES == lcmp_decide::FlowCache::<16>::SLOT_BYTES);
const _: () = assert!(LCMP_MAX_CANDIDATES == lcmp_decide::tables::MAX_CANDIDATES);

/// Per-decider settings that do not come with the tables. `size` and
/// `abi_version` must be `sizeof(lcmp_config)` and `LCMP_ABI_VERSION`
/// (`lcmp_decider_init` returns `LCMP_ERR_ABI` otherwise, and reads
/// nothing past `size`); the other fields all zero are the defaults (LCMP,
/// MurmurHash3, refuse on a full cache, seed 0, the zero flow key). In C99
/// (designated, so `-Wextra`'s missing-initialiser warning stays quiet):
/// `lcmp_config c = { .size = sizeof(lcmp_config), .abi_version = LCMP_ABI_VERSION };`
/// In C89: `memset` it to zero, then set both fields.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct lcmp_config {
    /// `sizeof(lcmp_config)` as the caller compiled it.
    pub size: u32,
    /// `LCMP_ABI_VERSION` of the caller's header.
    pub abi_version: u32,
    /// `LCMP_SCHEME_*`.
    pub scheme: u8,
    /// `LCMP_HASH_*`.
    pub hash: u8,
    /// `LCMP_OVERFLOW_*`: what a new flow gets when the flow cache has no
    /// room for it.
    pub overflow: u8,
    /// The per-switch ECMP hash seed.
    pub seed: u32,
    /// The flow cache's 128-bit secret (SipHash key of the fingerprint,
    /// docs/design.md "Why the flow cache's hash is keyed"): fill it from
    /// the system's or the board's random source at start. All zero (the
    /// default) is for tests and replays: anyone can then aim flows at a
    /// victim's buckets. Never logged, never in a blob.
    pub flow_key: [u8; 16],
}

/// `size_of::<lcmp_config>()`, the value of `lcmp_config.size`.
pub(crate) const LCMP_CONFIG_SIZE: u32 = size_of::<lcmp_config>() as u32;

/// A flow's 5-tuple. Addresses are in network byte order; an IPv4 address
/// fills the first 4 bytes (the rest is ignored).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lcmp_flow {
    /// Source address.
    pub src: [u8; 16],
    /// Destination address.
    pub dst: [u8; 16],
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// IP protocol number (17 for RoCEv2).
    pub proto: u8,
    /// `LCMP_FAMILY_V4` or `LCMP_FAMILY_V6`.
    pub family: u8,
}

/// One packet of a burst (`lcmp_on_packets`): its flow and route group.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lcmp_packet {
    /// The flow.
    pub flow: lcmp_flow,
    /// The destination route group.
    pub group: u16,
}

/// The outcome of `lcmp_on_packet`. Not a sized output: 3 bytes written
/// per packet, in arrays (`lcmp_on_packets`), so its layout is fixed for
/// good (a change would be a new struct and new calls).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lcmp_decision {
    /// `LCMP_DECISION_*`.
    pub kind: u8,
    /// The egress port, or `LCMP_NO_PORT`.
    pub port: u8,
    /// `LCMP_REASON_*` (`LCMP_REASON_PINNED` for a hit,
    /// `LCMP_REASON_CACHE_FULL` for an unpinned flow).
    pub reason: u8,
}

/// One candidate of an explanation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lcmp_candidate {
    /// Egress port.
    pub port: u8,
    /// Whether the port is up.
    pub up: bool,
    /// Alg. 1 delay score.
    pub delay_score: u8,
    /// Alg. 2 capacity score.
    pub cap_score: u8,
    /// Eq. 2 path cost.
    pub c_path: u8,
    /// Queue level score `Q`.
    pub q: u8,
    /// Trend level score `T`.
    pub t: u8,
    /// Duration penalty `D`.
    pub d: u8,
    /// Eq. 4-5 congestion cost.
    pub c_cong: u8,
    /// Eq. 1 fused cost.
    pub cost: u8,
    /// Rank among the live candidates sorted by `(cost, port)`, or
    /// `LCMP_NO_PORT` (255) when down.
    pub rank: u8,
    /// In the set the final hash picks from.
    pub kept: bool,
    /// `LCMP_CUT_*`.
    pub cut_reason: u8,
}

/// Everything about one decision (`lcmp_explain`). A sized output, as
/// `lcmp_counters`: fields are only ever appended after `candidates`
/// (`lcmp_candidate`'s layout is fixed: a change would be a new struct).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct lcmp_explanation {
    /// The flow's ECMP hash.
    pub hash: u32,
    /// The destination group.
    pub group: u16,
    /// `LCMP_SCHEME_*` that decided.
    pub scheme: u8,
    /// `LCMP_REASON_*`.
    pub reason: u8,
    /// The chosen port, or `LCMP_NO_PORT`.
    pub chosen: u8,
    /// The port the flow is pinned to, or `LCMP_NO_PORT`.
    pub pinned: u8,
    /// Valid entries in `candidates`.
    pub n_candidates: u8,
    /// The group's candidates in installation order, down ones too.
    pub candidates: [lcmp_candidate; LCMP_MAX_CANDIDATES],
}

impl Default for lcmp_explanation {
    fn default() -> Self {
        lcmp_explanation {
            hash: 0,
            group: 0,
            scheme: 0,
            reason: 0,
            chosen: LCMP_NO_PORT,
            pinned: LCMP_NO_PORT,
            n_candidates: 0,
            candidates: [lcmp_candidate::default(); LCMP_MAX_CANDIDATES],
        }
    }
}

/// Event counters (`lcmp_decide::Counters`): `hits + new_flows + failovers
/// + withdrawals + unpinned + no_route == packets`.
///
/// A sized output: the header's `lcmp_get_counters` passes `sizeof(lcmp_counters)`, and the
/// library writes that many bytes at most; counters are only ever
/// appended, so an older caller's smaller struct gets the counters it
/// knows and nothing past its end is written.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lcmp_counters {
    /// Packets seen.
    pub packets: u64,
    /// Established flows on their pinned port.
    pub hits: u64,
    /// New flows decided and pinned.
    pub new_flows: u64,
    /// Pinned flows whose port was down, re-decided.
    pub failovers: u64,
    /// Pinned flows whose port an install withdrew from the group,
    /// re-decided.
    pub withdrawals: u64,
    /// Flows routed statelessly (`LCMP_OVERFLOW_STATELESS`, cache full).
    pub unpinned: u64,
    /// Packets with no route (refused new flows included).
    pub no_route: u64,
    /// New decisions that took the minimum-cost fallback.
    pub min_cost_fallbacks: u64,
    /// New decisions that fell back to ECMP.
    pub ecmp_fallbacks: u64,
    /// New flows the flow cache had no room for.
    pub cache_full: u64,
    /// Inserts that moved an entry to its other bucket to make room.
    pub displacements: u64,
    /// Idle flow-cache entries cleared by `lcmp_gc`.
    pub gc_evictions: u64,
    /// Queue samples accepted.
    pub samples: u64,
    /// New flows pinned in the entry of an idle flow that could move
    /// without reordering (counted in `new_flows` too).
    pub reclaimed: u64,
}

// The minimum sizes are layouts this struct begins with: ABI 3's counters
// end with `samples`, and the explanation has not changed.
const _: () = assert!(LCMP_COUNTERS_MIN_SIZE == core::mem::offset_of!(lcmp_counters, reclaimed));
const _: () = assert!(LCMP_EXPLANATION_MIN_SIZE == size_of::<lcmp_explanation>());

/// Words of storage in an [`lcmp_digest`].
pub const LCMP_DIGEST_WORDS: usize = 6;

/// A running decision digest: the one `lcmp replay` and the firmware print
/// (CRC-64/XZ over 7 bytes per packet decision, `lcmp_tables::replay`).
/// Opaque; initialise with `lcmp_digest_init`. It may live anywhere (stack,
/// static) and be copied with `memcpy`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct lcmp_digest {
    /// Private state.
    pub opaque: [u64; LCMP_DIGEST_WORDS],
}

/// What an `lcmp_digest` holds.
pub(crate) struct DigestState {
    pub(crate) magic: u32,
    pub(crate) digest: Digest,
}

/// Written first into an initialised digest ("LCMD").
pub(crate) const DIGEST_MAGIC: u32 = 0x4C43_4D44;
