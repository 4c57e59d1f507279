//! The `repr(C)` structs of the ABI and their conversions to and from the
//! core's types. The conversions from the core destructure its structs
//! exhaustively, so a field added to the core fails to compile here until
//! the C side says what to do with it.

use core::net::{Ipv4Addr, Ipv6Addr};

use lcmp_decide::codes::DecisionKind;
use lcmp_decide::{
    CandidateExplanation, Counters, CutReason, DeciderConfig, Decision, Explanation, FlowCacheKey,
    FlowKey, GroupId, HashAlgorithm, Overflow, PortId, Reason, Scheme,
};

use ::lcmp_tables::replay::Digest;

use crate::codes::*;
use crate::{LCMP_MAX_CANDIDATES, LCMP_NO_PORT, LCMP_PORTS};

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

impl Default for lcmp_config {
    /// This library's size and ABI version, the default settings.
    fn default() -> Self {
        lcmp_config {
            size: LCMP_CONFIG_SIZE,
            abi_version: crate::LCMP_ABI_VERSION,
            scheme: LCMP_SCHEME_LCMP,
            hash: LCMP_HASH_MURMUR3,
            overflow: LCMP_OVERFLOW_REFUSE,
            seed: 0,
            flow_key: [0; 16],
        }
    }
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

/// The outcome of `lcmp_on_packet`.
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

/// Everything about one decision (`lcmp_explain`).
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

impl From<&Counters> for lcmp_counters {
    fn from(c: &Counters) -> Self {
        let Counters {
            packets,
            hits,
            new_flows,
            failovers,
            withdrawals,
            unpinned,
            no_route,
            min_cost_fallbacks,
            ecmp_fallbacks,
            cache_full,
            displacements,
            gc_evictions,
            samples,
            reclaimed,
            ..
        } = *c;
        lcmp_counters {
            packets,
            hits,
            new_flows,
            failovers,
            withdrawals,
            unpinned,
            no_route,
            min_cost_fallbacks,
            ecmp_fallbacks,
            cache_full,
            displacements,
            gc_evictions,
            samples,
            reclaimed,
        }
    }
}

/// The core's settings for a C config.
pub fn config_from_c(c: &lcmp_config) -> Result<DeciderConfig, i32> {
    let lcmp_config {
        size,
        abi_version,
        scheme,
        hash,
        overflow,
        seed,
        flow_key,
    } = *c;
    if size != LCMP_CONFIG_SIZE || abi_version != crate::LCMP_ABI_VERSION {
        return Err(LCMP_ERR_ABI);
    }
    let hash = match hash {
        LCMP_HASH_MURMUR3 => HashAlgorithm::Murmur3,
        LCMP_HASH_CRC32 => HashAlgorithm::Crc32,
        _ => return Err(LCMP_ERR_INVALID_ARGUMENT),
    };
    let overflow = match overflow {
        LCMP_OVERFLOW_REFUSE => Overflow::Refuse,
        LCMP_OVERFLOW_STATELESS => Overflow::Stateless,
        _ => return Err(LCMP_ERR_INVALID_ARGUMENT),
    };
    Ok(DeciderConfig::DEFAULT
        .with_scheme(scheme_from_c(scheme)?)
        .with_seed(seed)
        .with_hash(hash)
        .with_overflow(overflow)
        .with_flow_key(FlowCacheKey::from_bytes(flow_key)))
}

/// The scheme of an `LCMP_SCHEME_*` code.
pub fn scheme_from_c(s: u8) -> Result<Scheme, i32> {
    Scheme::from_code(s).ok_or(LCMP_ERR_INVALID_ARGUMENT)
}

/// A port id below `LCMP_PORTS`.
pub fn port_from_c(port: u8) -> Result<PortId, i32> {
    if usize::from(port) < LCMP_PORTS {
        Ok(PortId(port))
    } else {
        Err(LCMP_ERR_PORT_OUT_OF_RANGE)
    }
}

fn port_code(p: Option<PortId>) -> u8 {
    p.map_or(LCMP_NO_PORT, |p| p.0)
}

/// The core's flow key for a C flow.
pub fn flow_from_c(f: &lcmp_flow) -> Result<FlowKey, i32> {
    let lcmp_flow {
        src,
        dst,
        sport,
        dport,
        proto,
        family,
    } = *f;
    match family {
        LCMP_FAMILY_V4 => {
            let [s0, s1, s2, s3, ..] = src;
            let [d0, d1, d2, d3, ..] = dst;
            Ok(FlowKey::v4(
                Ipv4Addr::new(s0, s1, s2, s3),
                Ipv4Addr::new(d0, d1, d2, d3),
                sport,
                dport,
                proto,
            ))
        }
        LCMP_FAMILY_V6 => Ok(FlowKey::v6(
            Ipv6Addr::from(src),
            Ipv6Addr::from(dst),
            sport,
            dport,
            proto,
        )),
        _ => Err(LCMP_ERR_INVALID_ARGUMENT),
    }
}

/// The core's packet for a C packet whose family is
/// `LCMP_FAMILY_V4` or `LCMP_FAMILY_V6` (checked by the caller; any other
/// value is read as IPv6).
#[inline]
pub fn packet_key(p: &lcmp_packet) -> (FlowKey, GroupId) {
    let f = &p.flow;
    let key = if f.family == LCMP_FAMILY_V4 {
        let [s0, s1, s2, s3, ..] = f.src;
        let [d0, d1, d2, d3, ..] = f.dst;
        FlowKey::v4(
            Ipv4Addr::new(s0, s1, s2, s3),
            Ipv4Addr::new(d0, d1, d2, d3),
            f.sport,
            f.dport,
            f.proto,
        )
    } else {
        FlowKey::v6(
            Ipv6Addr::from(f.src),
            Ipv6Addr::from(f.dst),
            f.sport,
            f.dport,
            f.proto,
        )
    };
    (key, GroupId(p.group))
}

/// The core's packet for a C packet.
pub fn packet_from_c(p: &lcmp_packet) -> Result<(FlowKey, GroupId), i32> {
    let lcmp_packet { flow, group } = *p;
    Ok((flow_from_c(&flow)?, GroupId(group)))
}

/// The C form of a decision: one match (the packet path writes one a
/// packet), equal to `kind().code()`, `port()` and `reason().code()` (a
/// test checks every variant).
#[inline]
pub fn decision_to_c(d: Decision) -> lcmp_decision {
    let (kind, port, reason) = match d {
        Decision::Hit(p) => (LCMP_DECISION_HIT, p.0, LCMP_REASON_PINNED),
        Decision::New {
            port,
            reason,
            failover,
        } => (
            if failover {
                LCMP_DECISION_FAILOVER
            } else {
                LCMP_DECISION_NEW
            },
            port.0,
            reason.code(),
        ),
        Decision::Unpinned(p) => (LCMP_DECISION_UNPINNED, p.0, LCMP_REASON_CACHE_FULL),
        Decision::NoRoute(r) => (LCMP_DECISION_NO_ROUTE, LCMP_NO_PORT, r.code()),
    };
    lcmp_decision { kind, port, reason }
}

/// [`decision_to_c`] through the core's accessors (the reference it is
/// tested against).
pub fn decision_to_c_by_accessors(d: Decision) -> lcmp_decision {
    lcmp_decision {
        kind: d.kind().code(),
        port: port_code(d.port()),
        reason: d.reason().code(),
    }
}

/// The core decision a C decision stands for (the inverse of
/// [`decision_to_c`]); `LCMP_ERR_INVALID_ARGUMENT` for a combination the
/// library never writes.
pub fn decision_from_c(d: &lcmp_decision) -> Result<Decision, i32> {
    let lcmp_decision { kind, port, reason } = *d;
    let bad = LCMP_ERR_INVALID_ARGUMENT;
    let reason = Reason::from_code(reason).ok_or(bad)?;
    let port = || port_from_c(port).map_err(|_| bad);
    let decision = match kind {
        LCMP_DECISION_HIT => Decision::Hit(port()?),
        LCMP_DECISION_NEW | LCMP_DECISION_FAILOVER => Decision::New {
            port: port()?,
            reason,
            failover: kind == LCMP_DECISION_FAILOVER,
        },
        LCMP_DECISION_UNPINNED => Decision::Unpinned(port()?),
        LCMP_DECISION_NO_ROUTE if d.port == LCMP_NO_PORT => Decision::NoRoute(reason),
        _ => return Err(bad),
    };
    // Only the combinations `decision_to_c` writes.
    if decision_to_c(decision) == *d {
        Ok(decision)
    } else {
        Err(bad)
    }
}

const _: () = assert!(DecisionKind::ALL.len() == 5);

/// The C form of an explanation.
pub fn explanation_to_c(e: &Explanation) -> lcmp_explanation {
    let Explanation {
        scheme,
        group,
        ref candidates,
        hash,
        pinned,
        chosen,
        reason,
    } = *e;
    let mut out = lcmp_explanation {
        hash,
        group: group.0,
        scheme: scheme.code(),
        reason: reason.code(),
        chosen: port_code(chosen),
        pinned: port_code(pinned),
        ..lcmp_explanation::default()
    };
    for (slot, c) in out.candidates.iter_mut().zip(candidates.iter()) {
        *slot = candidate_to_c(c);
        out.n_candidates = out.n_candidates.saturating_add(1);
    }
    out
}

fn candidate_to_c(c: &CandidateExplanation) -> lcmp_candidate {
    let CandidateExplanation {
        port,
        up,
        delay_score,
        cap_score,
        c_path,
        q,
        t,
        d,
        c_cong,
        cost,
        rank,
        kept,
        cut_reason,
    } = *c;
    lcmp_candidate {
        port: port.0,
        up,
        delay_score,
        cap_score,
        c_path,
        q,
        t,
        d,
        c_cong,
        cost,
        rank: rank.unwrap_or(LCMP_NO_PORT),
        kept,
        cut_reason: CutReason::code(cut_reason),
    }
}

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
