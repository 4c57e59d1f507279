//! Two-stage, diversity-preserving selection (§3.4) and the baselines.
//!
//! LCMP: the live candidates are scored (Eq. 1), sorted by `(C, port)`
//! ascending, the upper half is dropped (all are kept when `n / 2 < 2`),
//! candidates whose cost reaches the cut are dropped, and the ECMP hash picks
//! within what is left, in sorted order. If nothing is left, the minimum-cost
//! candidate is taken (§3.4 "Fallbacks"). ECMP hashes over all live
//! candidates in installation order; UCMP, as the paper's artifact runs it,
//! hashes over the live candidates of maximum capacity.
//!
//! One function, [`evaluate`], produces the full [`Explanation`]; the packet
//! path reads its `chosen` port, so `explain` and `on_packet` cannot drift.

use heapless::Vec;

use crate::cost::{congestion_cost, fused_cost};
use crate::monitor::PortState;
use crate::tables::{CompiledGroup, CompiledTables, GroupId, Pick, PortId, MAX_CANDIDATES};

/// The routing scheme a decider runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Scheme {
    /// LCMP (§3).
    #[default]
    Lcmp,
    /// ECMP: hash over all live candidates.
    Ecmp,
    /// UCMP as the paper's artifact runs it: hash over the live candidates of
    /// maximum capacity.
    Ucmp,
}

/// Why a decision came out as it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Reason {
    /// An established flow followed its pinned, live port.
    Pinned,
    /// LCMP: the hash picked within the kept set.
    HashInKept,
    /// LCMP with [`Pick::CapacityWeighted`]: the hash fell into a kept
    /// candidate's capacity share.
    WeightedInKept,
    /// LCMP: every candidate was cut, so the minimum-cost one was taken.
    MinCostFallback,
    /// The ECMP scheme.
    Ecmp,
    /// The UCMP scheme.
    Ucmp,
    /// LCMP with its tables marked outdated: plain ECMP (§5 safe fallback).
    EcmpFallback,
    /// The flow cache had no room: stateless ECMP, not pinned.
    CacheFull,
    /// The group has no live candidate.
    NoLiveCandidate,
    /// The group is not installed (or no tables are).
    UnknownGroup,
}

impl Reason {
    /// A one-sentence description for people.
    pub const fn describe(self) -> &'static str {
        match self {
            Reason::Pinned => "established flow: followed its pinned egress, which is up",
            Reason::HashInKept => "new flow: hashed within the low-cost kept set",
            Reason::WeightedInKept => {
                "new flow: capacity-weighted hash within the low-cost kept set"
            }
            Reason::MinCostFallback => {
                "new flow: every candidate was over the cut, so the minimum-cost one was taken"
            }
            Reason::Ecmp => "ECMP: hashed over all live candidates",
            Reason::Ucmp => "UCMP: hashed over the live candidates of maximum capacity",
            Reason::EcmpFallback => "LCMP tables outdated: fell back to ECMP over live candidates",
            Reason::CacheFull => "flow cache full: stateless ECMP over live candidates, not pinned",
            Reason::NoLiveCandidate => "no route: every candidate of the group is down",
            Reason::UnknownGroup => "no route: the destination group is not installed",
        }
    }
}

/// Why a candidate is not in the kept set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CutReason {
    /// Its port is down.
    Down,
    /// LCMP: it sorted into the high-cost half.
    UpperHalf,
    /// LCMP: its fused cost is at or above the cut.
    OverCut,
    /// UCMP: its capacity is below the maximum.
    NotMaxCapacity,
}

/// One candidate's scores and fate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CandidateExplanation {
    /// Egress port.
    pub port: PortId,
    /// Whether the port is up.
    pub up: bool,
    /// Alg. 1.
    pub delay_score: u8,
    /// Alg. 2.
    pub cap_score: u8,
    /// Eq. 2.
    pub c_path: u8,
    /// Queue level score `Q`.
    pub q: u8,
    /// Trend level score `T`.
    pub t: u8,
    /// Duration penalty `D`.
    pub d: u8,
    /// Eq. 4-5.
    pub c_cong: u8,
    /// Eq. 1, the fused cost.
    pub cost: u8,
    /// Position among the live candidates sorted by `(cost, port)`.
    pub rank: Option<u8>,
    /// Whether it is in the set the final hash picks from.
    pub kept: bool,
    /// Why it is not kept.
    pub cut_reason: Option<CutReason>,
}

/// Everything about one decision, side-effect free (see
/// [`crate::Decider::explain`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Explanation {
    /// The scheme that decided.
    pub scheme: Scheme,
    /// The destination group.
    pub group: GroupId,
    /// Every candidate of the group, in installation order, down ones too.
    pub candidates: Vec<CandidateExplanation, MAX_CANDIDATES>,
    /// The flow's ECMP hash.
    pub hash: u32,
    /// The port an established flow is pinned to, if any.
    pub pinned: Option<PortId>,
    /// The chosen port (`None`: no route).
    pub chosen: Option<PortId>,
    /// Why.
    pub reason: Reason,
}

/// What the decider knows when it evaluates a group.
pub(crate) struct Inputs<'a, const PORTS: usize> {
    pub(crate) tables: Option<&'a CompiledTables>,
    pub(crate) tables_valid: bool,
    pub(crate) ports: &'a [PortState; PORTS],
    pub(crate) scheme: Scheme,
}

/// Scores every candidate of `group` and makes the new-flow decision for a
/// flow with ECMP hash `hash`.
pub(crate) fn evaluate<const PORTS: usize>(
    inputs: &Inputs<'_, PORTS>,
    group_id: GroupId,
    hash: u32,
) -> Explanation {
    let mut out = Explanation {
        scheme: inputs.scheme,
        group: group_id,
        candidates: Vec::new(),
        hash,
        pinned: None,
        chosen: None,
        reason: Reason::UnknownGroup,
    };
    let Some(tables) = inputs.tables else {
        return out;
    };
    let Some(group) = tables.group(group_id) else {
        return out;
    };
    score(tables, group, inputs.ports, &mut out.candidates);
    let live = out.candidates.iter().filter(|c| c.up).count();
    if live == 0 {
        out.reason = Reason::NoLiveCandidate;
        return out;
    }
    let (chosen, reason) = match inputs.scheme {
        Scheme::Lcmp if inputs.tables_valid => lcmp(&mut out.candidates, tables, group, hash),
        Scheme::Lcmp => (ecmp(&mut out.candidates, hash), Reason::EcmpFallback),
        Scheme::Ecmp => (ecmp(&mut out.candidates, hash), Reason::Ecmp),
        Scheme::Ucmp => (ucmp(&mut out.candidates, group, hash), Reason::Ucmp),
    };
    out.chosen = chosen;
    out.reason = reason;
    out
}

/// Fills in the scores (Eq. 1-5) of every candidate.
fn score<const PORTS: usize>(
    tables: &CompiledTables,
    group: &CompiledGroup,
    ports: &[PortState; PORTS],
    out: &mut Vec<CandidateExplanation, MAX_CANDIDATES>,
) {
    let params = tables.params();
    let levels = tables.levels();
    let w = &params.weights;
    for c in &group.candidates {
        let state = ports
            .get(usize::from(c.port.0))
            .copied()
            .unwrap_or_default();
        let q = state.queue_code().score(levels);
        let t = state.trend_code().score(levels);
        let d = state.duration_penalty();
        let c_cong = congestion_cost(q, t, d, w);
        let up = state.is_up() && usize::from(c.port.0) < PORTS;
        // `out` has the group's own capacity, so this push cannot fail.
        let _ = out.push(CandidateExplanation {
            port: c.port,
            up,
            delay_score: c.delay_score,
            cap_score: c.cap_score,
            c_path: c.c_path,
            q,
            t,
            d,
            c_cong,
            cost: fused_cost(c.c_path, c_cong, w),
            rank: None,
            kept: false,
            cut_reason: if up { None } else { Some(CutReason::Down) },
        });
    }
}

/// `hash % n` as an index (n > 0).
fn bucket(hash: u32, n: usize) -> usize {
    (hash as usize).checked_rem(n).unwrap_or(0)
}

/// The two-stage selection of §3.4 on scored candidates.
fn lcmp(
    cands: &mut [CandidateExplanation],
    tables: &CompiledTables,
    group: &CompiledGroup,
    hash: u32,
) -> (Option<PortId>, Reason) {
    let params = tables.params();
    // Sort keys (cost, port, index) packed into one integer: ports are unique
    // in a group, so the order is total and deterministic.
    let mut order: Vec<u32, MAX_CANDIDATES> = cands
        .iter()
        .enumerate()
        .filter(|(_, c)| c.up)
        .map(|(i, c)| (u32::from(c.cost) << 16) | (u32::from(c.port.0) << 8) | i as u32)
        .collect();
    order.sort_unstable();
    let n = order.len();
    let keep = if n / 2 < 2 { n } else { n / 2 };
    let mut kept: Vec<usize, MAX_CANDIDATES> = Vec::new();
    for (rank, key) in order.iter().enumerate() {
        let i = (key & 0xFF) as usize;
        let Some(c) = cands.get_mut(i) else { continue };
        c.rank = Some(rank as u8);
        if rank >= keep {
            c.cut_reason = Some(CutReason::UpperHalf);
        } else if c.cost >= params.cut {
            c.cut_reason = Some(CutReason::OverCut);
        } else {
            c.kept = true;
            let _ = kept.push(i);
        }
    }
    if kept.is_empty() {
        let min = order.first().map(|key| (key & 0xFF) as usize);
        let port = min.and_then(|i| cands.get(i)).map(|c| c.port);
        return (port, Reason::MinCostFallback);
    }
    let pick = match params.pick {
        Pick::Hash => kept.get(bucket(hash, kept.len())).copied(),
        Pick::CapacityWeighted => weighted(&kept, group, hash),
    };
    let reason = match params.pick {
        Pick::Hash => Reason::HashInKept,
        Pick::CapacityWeighted => Reason::WeightedInKept,
    };
    (pick.and_then(|i| cands.get(i)).map(|c| c.port), reason)
}

/// Capacity-weighted pick: `hash % Σ w` falls into one kept candidate's
/// share, `w` its path capacity in whole Mbit/s (at least 1). `kept` holds
/// indices into the group's candidates (the explanation keeps their order).
fn weighted(kept: &[usize], group: &CompiledGroup, hash: u32) -> Option<usize> {
    let weight = |i: usize| -> u64 {
        group
            .candidates
            .get(i)
            .map_or(1, |c| (c.capacity_bps / 1_000_000).max(1))
    };
    let total: u64 = kept.iter().map(|&i| weight(i)).fold(0, u64::saturating_add);
    let mut point = u64::from(hash).checked_rem(total).unwrap_or(0);
    for &i in kept {
        let w = weight(i);
        if point < w {
            return Some(i);
        }
        point = point.saturating_sub(w);
    }
    kept.last().copied()
}

/// ECMP: `hash % live` over the live candidates in installation order.
fn ecmp(cands: &mut [CandidateExplanation], hash: u32) -> Option<PortId> {
    let live = cands.iter().filter(|c| c.up).count();
    let pick = bucket(hash, live);
    for c in cands.iter_mut().filter(|c| c.up) {
        c.kept = true;
    }
    cands.iter().filter(|c| c.up).nth(pick).map(|c| c.port)
}

/// UCMP as in the artifact: ECMP over the live candidates of maximum capacity.
fn ucmp(cands: &mut [CandidateExplanation], group: &CompiledGroup, hash: u32) -> Option<PortId> {
    // The explanation lists the group's candidates in order: same indices.
    let capacity = |i: usize| group.candidates.get(i).map_or(0, |c| c.capacity_bps);
    let max = (0..cands.len())
        .filter(|&i| cands.get(i).is_some_and(|c| c.up))
        .map(capacity)
        .max()
        .unwrap_or(0);
    for (i, c) in cands.iter_mut().enumerate().filter(|(_, c)| c.up) {
        if capacity(i) == max {
            c.kept = true;
        } else {
            c.cut_reason = Some(CutReason::NotMaxCapacity);
        }
    }
    let n = cands.iter().filter(|c| c.kept).count();
    cands
        .iter()
        .filter(|c| c.kept)
        .nth(bucket(hash, n))
        .map(|c| c.port)
}
