//! Conversions between the C ABI's `repr(C)` structs and codes and the
//! core's types. The conversions from the core destructure its structs
//! exhaustively, so a field added to the core fails to compile here until
//! the C side says what to do with it.

use core::net::{Ipv4Addr, Ipv6Addr};

use lcmp_decide::codes::DecisionKind;
use lcmp_decide::{
    CandidateExplanation, Counters, CutReason, DeciderConfig, Decision, Explanation, FlowCacheKey,
    FlowKey, GroupId, HashAlgorithm, Overflow, PortId, Reason, Scheme,
};

use crate::codes::*;
use crate::types::*;

impl Default for lcmp_config {
    /// This library's size and ABI version, the default settings.
    fn default() -> Self {
        lcmp_config {
            size: LCMP_CONFIG_SIZE,
            abi_version: LCMP_ABI_VERSION,
            scheme: LCMP_SCHEME_LCMP,
            hash: LCMP_HASH_MURMUR3,
            overflow: LCMP_OVERFLOW_REFUSE,
            seed: 0,
            flow_key: [0; 16],
        }
    }
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
    if size != LCMP_CONFIG_SIZE || abi_version != LCMP_ABI_VERSION {
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

/// `LCMP_ERR_ABI` unless `abi_version` (the caller's header's
/// `LCMP_ABI_VERSION`, which lcmp.h's init macros pass) is this library's.
pub fn abi_check(abi_version: u32) -> Result<(), i32> {
    if abi_version == LCMP_ABI_VERSION {
        Ok(())
    } else {
        Err(LCMP_ERR_ABI)
    }
}

/// The core's settings for a caller's config, or the defaults for none
/// (a null `lcmp_config`).
pub fn decider_config(c: Option<lcmp_config>) -> Result<DeciderConfig, i32> {
    config_from_c(&c.unwrap_or_default())
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
