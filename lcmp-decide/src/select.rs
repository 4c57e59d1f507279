//! Two-stage, diversity-preserving selection (§3.4) and the baselines.
//!
//! LCMP: the live candidates are scored (Eq. 1), sorted by `(C, port)`
//! ascending, the upper half is dropped (all are kept when `n / 2 < 2`),
//! candidates whose cost reaches the cut are dropped (and, with a cost band
//! `k < 255`, those costing more than the lowest cost plus `k`), and the
//! ECMP hash picks within what is left, in sorted order. If nothing is left, the minimum-cost
//! candidate is taken (§3.4 "Fallbacks"). ECMP hashes over all live
//! candidates in installation order; UCMP, as the paper's artifact runs it,
//! hashes over the live candidates of maximum capacity.
//!
//! The packet path (`decide`) works on packed sort keys only; `evaluate`
//! (behind [`crate::Decider::explain`]) calls the same `decide` for the pick
//! and the same ranking for the kept/cut annotation, so the two cannot drift.

use core::num::NonZeroUsize;

use heapless::Vec;

use crate::cost::fused_cost;
use crate::monitor::PortState;
use crate::narrow_div::div_u64_to_u32;
use crate::tables::{
    CompiledCandidate, CompiledGroup, CompiledTables, GroupId, Params, Pick, PortId, MAX_CANDIDATES,
};

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
    /// The flow cache had no room for a new flow: refused
    /// ([`crate::Overflow::Refuse`]) or routed by stateless ECMP
    /// ([`crate::Overflow::Stateless`]), not pinned.
    CacheFull,
    /// The group has no live candidate.
    NoLiveCandidate,
    /// The group is not installed (or no tables are).
    UnknownGroup,
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
    /// LCMP: its fused cost is at or above the cut, or more than the cost
    /// band above the lowest cost.
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
    /// Position among the live candidates sorted by `(cost, port)`: LCMP's
    /// order. ECMP and UCMP still pick in installation order; for them the
    /// rank is information only.
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

impl<const PORTS: usize> Inputs<'_, PORTS> {
    fn state(&self, port: PortId) -> Option<&PortState> {
        self.ports.get(usize::from(port.0))
    }

    fn up(&self, port: PortId) -> bool {
        self.state(port).is_some_and(PortState::is_up)
    }
}

/// The live candidates sorted by `(cost, port)`, as packed keys
/// `cost << 16 | port << 8 | index` (ports are unique in a group, so the
/// order is total and deterministic).
struct Ranking {
    keys: [u32; MAX_CANDIDATES],
    n: usize,
}

impl Ranking {
    fn sorted(&self) -> &[u32] {
        self.keys.get(..self.n).unwrap_or(&[])
    }

    /// Group index of the candidate at `rank`.
    fn index(&self, rank: usize) -> Option<usize> {
        self.sorted().get(rank).map(|k| (k & 0xFF) as usize)
    }

    fn cost(&self, rank: usize) -> Option<u8> {
        self.sorted().get(rank).map(|k| (k >> 16) as u8)
    }
}

fn rank<const PORTS: usize>(
    inputs: &Inputs<'_, PORTS>,
    tables: &CompiledTables,
    group: &CompiledGroup,
) -> Ranking {
    let mut r = Ranking {
        keys: [0; MAX_CANDIDATES],
        n: 0,
    };
    let w = &tables.params().weights;
    for (i, c) in group.candidates.iter().enumerate() {
        crate::work::candidate_read();
        let Some(state) = inputs.state(c.port).filter(|s| s.is_up()) else {
            continue;
        };
        // C_cong was computed when the port's last sample arrived (§3.3).
        let cost = fused_cost(c.c_path, state.c_cong(), w);
        if let Some(slot) = r.keys.get_mut(r.n) {
            *slot = (u32::from(cost) << 16) | (u32::from(c.port.0) << 8) | i as u32;
            r.n = r.n.saturating_add(1);
        }
    }
    if let Some(live) = r.keys.get_mut(..r.n) {
        live.sort_unstable_by(|a, b| {
            crate::work::candidate_comparison();
            a.cmp(b)
        });
    }
    r
}

/// How many candidates survive the cuts: the first `keep` of the ranking
/// (the lower half; all when `n / 2 < 2`), minus those at or above the cost
/// cut (§3.4) and those more than `band` above the lowest cost (the cost
/// band, an extension; `band = 255` cuts nothing). Costs are sorted, so the
/// kept set is a prefix of the ranking.
fn kept_prefix(r: &Ranking, params: &Params) -> (usize, usize) {
    let keep = if r.n / 2 < 2 { r.n } else { r.n / 2 };
    let ceiling = r.cost(0).map_or(0, |best| best.saturating_add(params.band));
    let kept = (0..keep)
        .take_while(|&i| r.cost(i).is_some_and(|c| c < params.cut && c <= ceiling))
        .count();
    (keep, kept)
}

/// The hash pick among `n > 0` choices: `hash % n`, or with
/// [`Pick::ScaledHash`] the top 16 bits scaled into `0..n`,
/// `((hash >> 16) * n) >> 16` (below `n` for every hash).
fn bucket(hash: u32, n: usize, pick: Pick) -> usize {
    match pick {
        Pick::Hash | Pick::CapacityWeighted => (hash as usize).checked_rem(n).unwrap_or(0),
        Pick::ScaledHash => (u64::from(hash >> 16).saturating_mul(n as u64) >> 16) as usize,
    }
}

/// How many ranks LCMP hashes over (§3.4): the kept prefix, or `None` when
/// nothing is kept and the minimum-cost candidate is taken alone. One rule
/// for the pick ([`choose_lcmp`]) and the list ([`pick_list`]).
fn lcmp_kept(r: &Ranking, params: &Params) -> Option<NonZeroUsize> {
    NonZeroUsize::new(kept_prefix(r, params).1)
}

/// The LCMP pick (§3.4) from a ranking: a group index and the reason.
fn choose_lcmp(
    r: &Ranking,
    tables: &CompiledTables,
    group: &CompiledGroup,
    hash: u32,
) -> (Option<usize>, Reason) {
    let params = tables.params();
    let Some(kept) = lcmp_kept(r, params) else {
        return (r.index(0), Reason::MinCostFallback);
    };
    match params.pick {
        Pick::Hash | Pick::ScaledHash => (
            r.index(bucket(hash, kept.get(), params.pick)),
            Reason::HashInKept,
        ),
        Pick::CapacityWeighted => (weighted(r, kept.get(), group, hash), Reason::WeightedInKept),
    }
}

/// Capacity-weighted pick: `hash % Σ w` falls into one kept candidate's
/// share, `w` its path capacity in whole Mbit/s (at least 1), in rank order.
/// Out of line: inlined, its division grew the default (hash) pick's
/// new-flow path by 4 instructions on a Cortex-M4 and 8 on x86_64.
#[inline(never)]
fn weighted(r: &Ranking, kept: usize, group: &CompiledGroup, hash: u32) -> Option<usize> {
    let weight = |rank: usize| -> u64 {
        crate::work::candidate_read();
        r.index(rank)
            .and_then(|i| group.candidates.get(i))
            .map_or(1, |c| weight_mbps(c.capacity_bps))
    };
    r.index(weighted_rank(hash, kept, weight))
}

/// A capacity's weight in the capacity-weighted pick: whole Mbit/s, at
/// least 1, and at most 2^32, which picks as any larger weight does (the
/// point `hash % Σ w` is below 2^32, and a sum of 2^32 or more leaves the
/// hash whole). Through the 32-bit hardware divide, as a packet's costs
/// need (docs/firmware.md, "Cost table"; a `u64` division took about 300
/// instructions on a Cortex-M4).
fn weight_mbps(capacity_bps: u64) -> u64 {
    div_u64_to_u32(capacity_bps, 1_000_000).map_or(1 << 32, |w| u64::from(w.max(1)))
}

/// The rank, among `kept` in rank order, whose share of `Σ weight` the
/// point `hash % Σ weight` falls into (the last when none, which the
/// remainder rules out).
fn weighted_rank(hash: u32, kept: usize, weight: impl Fn(usize) -> u64) -> usize {
    let total = (0..kept).map(&weight).fold(0u64, u64::saturating_add);
    // The hash is below 2^32: a larger total leaves it whole, a smaller one
    // takes the 32-bit remainder.
    let mut point = match u32::try_from(total) {
        Ok(total) => u64::from(hash.checked_rem(total).unwrap_or(0)),
        Err(_) => u64::from(hash),
    };
    for rank in 0..kept {
        let w = weight(rank);
        if point < w {
            return rank;
        }
        point = point.saturating_sub(w);
    }
    kept.saturating_sub(1)
}

/// The hash pick ([`bucket`]) among the `n` candidates that pass
/// `eligible`, in installation order: the ECMP step shared by ECMP, UCMP
/// and the stateless fallback.
fn hash_among(
    group: &CompiledGroup,
    hash: u32,
    mode: Pick,
    eligible: impl Fn(&CompiledCandidate) -> bool,
) -> Option<usize> {
    let eligible = |c: &CompiledCandidate| {
        crate::work::candidate_read();
        eligible(c)
    };
    let n = group.candidates.iter().filter(|c| eligible(c)).count();
    let pick = bucket(hash, n, mode);
    group
        .candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| eligible(c))
        .nth(pick)
        .map(|(i, _)| i)
}

/// UCMP as in the artifact: the maximum capacity among live candidates.
fn ucmp_capacity<const PORTS: usize>(inputs: &Inputs<'_, PORTS>, group: &CompiledGroup) -> u64 {
    group
        .candidates
        .iter()
        .filter(|c| {
            crate::work::candidate_read();
            inputs.up(c.port)
        })
        .map(|c| c.capacity_bps)
        .max()
        .unwrap_or(0)
}

/// The candidates an unranked step hashes over, in installation order: the
/// live ones for ECMP and for LCMP on outdated tables, the live ones of
/// maximum capacity for UCMP. One rule for the pick ([`decide`]) and the
/// list ([`pick_list`]).
fn unranked_eligible<'a, const PORTS: usize>(
    inputs: &'a Inputs<'_, PORTS>,
    group: &CompiledGroup,
) -> impl Fn(&CompiledCandidate) -> bool + 'a {
    let max = matches!(inputs.scheme, Scheme::Ucmp).then(|| ucmp_capacity(inputs, group));
    move |c| inputs.up(c.port) && max.is_none_or(|m| c.capacity_bps == m)
}

/// The new-flow decision for a flow with ECMP hash `hash` in `group_id`:
/// the chosen port (`None`: no route) and the reason. The packet path.
pub(crate) fn decide<const PORTS: usize>(
    inputs: &Inputs<'_, PORTS>,
    group_id: GroupId,
    hash: u32,
) -> (Option<PortId>, Reason) {
    let Some(tables) = inputs.tables else {
        return (None, Reason::UnknownGroup);
    };
    let Some(group) = tables.group(group_id) else {
        return (None, Reason::UnknownGroup);
    };
    // CapacityWeighted applies to LCMP's kept set only; ECMP steps hash.
    let mode = tables.params().pick;
    let (index, reason) = match inputs.scheme {
        Scheme::Lcmp if inputs.tables_valid => {
            choose_lcmp(&rank(inputs, tables, group), tables, group, hash)
        }
        scheme => {
            let reason = match scheme {
                Scheme::Lcmp => Reason::EcmpFallback,
                Scheme::Ecmp => Reason::Ecmp,
                Scheme::Ucmp => Reason::Ucmp,
            };
            let eligible = unranked_eligible(inputs, group);
            (hash_among(group, hash, mode, eligible), reason)
        }
    };
    match index.and_then(|i| group.candidates.get(i)) {
        Some(c) => (Some(c.port), reason),
        None => (None, Reason::NoLiveCandidate),
    }
}

/// The ports a new flow of `group_id` is hashed over, in pick order (what
/// [`crate::DeciderWith::pick_list`] returns): LCMP's kept set by rank (the
/// minimum-cost candidate alone when nothing is kept; the live candidates
/// in installation order while the tables are outdated), ECMP's live
/// candidates and UCMP's live maximum-capacity candidates in installation
/// order. Under [`Pick::Hash`] and [`Pick::ScaledHash`] a new flow with
/// hash `h` gets `list[bucket(h, list.len())]`; under
/// [`Pick::CapacityWeighted`] the kept set is the list, weighted by
/// capacity. Empty: no route.
pub(crate) fn pick_list<const PORTS: usize>(
    inputs: &Inputs<'_, PORTS>,
    group_id: GroupId,
) -> Vec<PortId, MAX_CANDIDATES> {
    let mut out = Vec::new();
    let Some((tables, group)) = inputs.tables.and_then(|t| Some((t, t.group(group_id)?))) else {
        return out;
    };
    let mut push = |i: Option<usize>| {
        if let Some(c) = i.and_then(|i| group.candidates.get(i)) {
            // At most MAX_CANDIDATES ports: the push cannot fail.
            let _ = out.push(c.port);
        }
    };
    match inputs.scheme {
        Scheme::Lcmp if inputs.tables_valid => {
            let r = rank(inputs, tables, group);
            let n = lcmp_kept(&r, tables.params()).map_or(1, NonZeroUsize::get);
            (0..n).for_each(|rank| push(r.index(rank)));
        }
        _ => {
            let eligible = unranked_eligible(inputs, group);
            group
                .candidates
                .iter()
                .enumerate()
                .filter(|(_, c)| eligible(c))
                .for_each(|(i, _)| push(Some(i)));
        }
    }
    out
}

/// Scores every candidate of `group_id` and explains the new-flow decision
/// for a flow with ECMP hash `hash` (what `explain` returns).
pub(crate) fn evaluate<const PORTS: usize>(
    inputs: &Inputs<'_, PORTS>,
    group_id: GroupId,
    hash: u32,
) -> Explanation {
    let (chosen, reason) = decide(inputs, group_id, hash);
    let mut out = Explanation {
        scheme: inputs.scheme,
        group: group_id,
        candidates: Vec::new(),
        hash,
        pinned: None,
        chosen,
        reason,
    };
    let Some((tables, group)) = inputs.tables.and_then(|t| Some((t, t.group(group_id)?))) else {
        return out;
    };
    let w = &tables.params().weights;
    for c in &group.candidates {
        let state = inputs.state(c.port).copied().unwrap_or_default();
        let up = inputs.up(c.port);
        let s = state.signals(tables.port_context(c.port).as_ref());
        // `candidates` has the group's own capacity, so this cannot fail.
        let _ = out.candidates.push(CandidateExplanation {
            port: c.port,
            up,
            delay_score: c.delay_score,
            cap_score: c.cap_score,
            c_path: c.c_path,
            q: s.q,
            t: s.t,
            d: s.d,
            c_cong: s.c_cong,
            cost: fused_cost(c.c_path, s.c_cong, w),
            rank: None,
            kept: false,
            cut_reason: if up { None } else { Some(CutReason::Down) },
        });
    }
    let ranking = rank(inputs, tables, group);
    let (keep, kept) = kept_prefix(&ranking, tables.params());
    let eligible = unranked_eligible(inputs, group);
    for rank in 0..ranking.n {
        let Some(i) = ranking.index(rank) else {
            continue;
        };
        // Ranked candidates are live: only UCMP's capacity rule cuts here.
        let unranked_kept = group.candidates.get(i).is_some_and(&eligible);
        let Some(c) = out.candidates.get_mut(i) else {
            continue;
        };
        c.rank = Some(rank as u8);
        let (is_kept, cut) = match inputs.scheme {
            Scheme::Lcmp if inputs.tables_valid => match rank {
                r if r < kept => (true, None),
                r if r >= keep => (false, Some(CutReason::UpperHalf)),
                _ => (false, Some(CutReason::OverCut)),
            },
            _ if unranked_kept => (true, None),
            _ => (false, Some(CutReason::NotMaxCapacity)),
        };
        c.kept = is_kept;
        c.cut_reason = cut;
    }
    out
}

#[cfg(test)]
mod test {
    use super::*;

    use crate::tables::{Candidate, Group, PortConfig, Tables};

    const GBPS: u64 = 1_000_000_000;
    /// (one-way delay units, capacity in Gbps) of ports 0..6.
    const CANDS: [(u32, u64); 6] = [
        (25, 200),
        (250, 200),
        (10, 100),
        (100, 100),
        (5, 25),
        (50, 25),
    ];

    /// Compiled tables with group 1 over the first `n` of `CANDS`.
    fn compiled(n: usize, params: Params) -> CompiledTables {
        let mut t = Tables::paper_defaults();
        t.params = params;
        let mut g = Group {
            id: GroupId(1),
            candidates: Vec::new(),
        };
        for (p, &(delay, gbps)) in CANDS.iter().enumerate() {
            t.ports
                .push(PortConfig {
                    id: PortId(p as u8),
                    rate_bps: gbps * GBPS,
                    buffer_bytes: 5_000_000_000,
                })
                .expect("room");
            if p < n {
                g.candidates
                    .push(Candidate {
                        port: PortId(p as u8),
                        delay_units: delay,
                        capacity_bps: gbps * GBPS,
                    })
                    .expect("room");
            }
        }
        t.groups.push(g).expect("room");
        t.compile(8).expect("valid tables")
    }

    fn ports(down: &[u8]) -> [PortState; 8] {
        let mut s = [PortState::NEW; 8];
        for &p in down {
            s[usize::from(p)].set_up(false);
        }
        s
    }

    fn inputs<'a>(t: &'a CompiledTables, s: &'a [PortState; 8], scheme: Scheme) -> Inputs<'a, 8> {
        Inputs {
            tables: Some(t),
            tables_valid: true,
            ports: s,
            scheme,
        }
    }

    /// The reference ranking: live candidates by (idle fused cost, port).
    fn by_cost(t: &CompiledTables, s: &[PortState; 8]) -> std::vec::Vec<(u8, PortId)> {
        let g = t.group(GroupId(1)).expect("group");
        let w = &t.params().weights;
        let mut v: std::vec::Vec<(u8, PortId)> = g
            .candidates
            .iter()
            .filter(|c| s[usize::from(c.port.0)].is_up())
            .map(|c| (fused_cost(c.c_path, 0, w), c.port))
            .collect();
        v.sort();
        v
    }

    /// LCMP keeps the cheaper half (all when that is under two) and
    /// hashes within it, in rank order; the explanation agrees.
    #[test]
    fn lcmp_keeps_the_cheaper_half_and_hashes_in_rank_order() {
        for (n, keep) in [(1, 1), (2, 2), (3, 3), (4, 2), (5, 2), (6, 3)] {
            let t = compiled(n, Params::PAPER);
            let s = ports(&[]);
            assert!(s.iter().all(PortState::is_up));
            let i = inputs(&t, &s, Scheme::Lcmp);
            let want = by_cost(&t, &s);
            assert_eq!(want.len(), n);
            let kept: std::vec::Vec<PortId> = want.iter().take(keep).map(|&(_, p)| p).collect();
            for hash in 0..12u32 {
                assert_eq!(
                    decide(&i, GroupId(1), hash),
                    (Some(kept[hash as usize % keep]), Reason::HashInKept),
                    "{n} candidates, hash {hash}"
                );
            }
            assert_eq!(pick_list(&i, GroupId(1)).as_slice(), kept.as_slice(), "{n}");
            let e = evaluate(&i, GroupId(1), 7);
            assert_eq!(e.chosen, Some(kept[7 % keep]));
            for c in &e.candidates {
                let r = want.iter().position(|&(_, p)| p == c.port).expect("ranked");
                assert_eq!(c.rank, Some(r as u8), "{n}: {c:?}");
                assert_eq!(c.cost, want[r].0);
                assert_eq!(c.kept, r < keep, "{n}: {c:?}");
                assert_eq!(c.cut_reason, (r >= keep).then_some(CutReason::UpperHalf));
            }
        }
    }

    /// Equal costs rank by port, not by installation order: a group that
    /// lists port 3 before port 1, with the same delay and capacity, ranks
    /// port 1 first (the ranking key packs the port above the index).
    #[test]
    fn equal_costs_rank_by_port_not_by_installation_order() {
        let mut t = Tables::paper_defaults();
        for p in [1u8, 3] {
            t.ports
                .push(PortConfig {
                    id: PortId(p),
                    rate_bps: 100 * GBPS,
                    buffer_bytes: 5_000_000_000,
                })
                .expect("room");
        }
        let mut g = Group {
            id: GroupId(1),
            candidates: Vec::new(),
        };
        for p in [3u8, 1] {
            g.candidates
                .push(Candidate {
                    port: PortId(p),
                    delay_units: 10,
                    capacity_bps: 100 * GBPS,
                })
                .expect("room");
        }
        t.groups.push(g).expect("room");
        let t = t.compile(8).expect("valid tables");
        let s = ports(&[]);
        let i = inputs(&t, &s, Scheme::Lcmp);
        assert_eq!(
            pick_list(&i, GroupId(1)).as_slice(),
            &[PortId(1), PortId(3)]
        );
        assert_eq!(
            decide(&i, GroupId(1), 0),
            (Some(PortId(1)), Reason::HashInKept)
        );
        assert_eq!(
            decide(&i, GroupId(1), 1),
            (Some(PortId(3)), Reason::HashInKept)
        );
    }

    /// A port that is down is never ranked or chosen; every port down is no
    /// route.
    #[test]
    fn down_ports_are_never_chosen() {
        let t = compiled(6, Params::PAPER);
        let cheapest = by_cost(&t, &ports(&[]))[0].1;
        let s = ports(&[cheapest.0]);
        let want = by_cost(&t, &s);
        assert_eq!(want.len(), 5);
        for scheme in [Scheme::Lcmp, Scheme::Ecmp, Scheme::Ucmp] {
            let i = inputs(&t, &s, scheme);
            for hash in 0..20u32 {
                let (port, _) = decide(&i, GroupId(1), hash);
                assert!(
                    port.is_some() && port != Some(cheapest),
                    "{scheme:?} {hash}"
                );
            }
        }
        let i = inputs(&t, &s, Scheme::Lcmp);
        // Five live: the cheaper two are kept.
        let kept = [want[0].1, want[1].1];
        assert_eq!(pick_list(&i, GroupId(1)).as_slice(), &kept);
        let e = evaluate(&i, GroupId(1), 3);
        let down = e
            .candidates
            .iter()
            .find(|c| c.port == cheapest)
            .expect("listed");
        assert!(!down.up && down.rank.is_none() && !down.kept);
        assert_eq!(down.cut_reason, Some(CutReason::Down));
        let s = ports(&[0, 1, 2, 3, 4, 5]);
        for scheme in [Scheme::Lcmp, Scheme::Ecmp, Scheme::Ucmp] {
            let i = inputs(&t, &s, scheme);
            assert_eq!(decide(&i, GroupId(1), 1), (None, Reason::NoLiveCandidate));
            assert!(pick_list(&i, GroupId(1)).is_empty());
        }
        let i = inputs(&t, &s, Scheme::Lcmp);
        assert_eq!(decide(&i, GroupId(9), 1), (None, Reason::UnknownGroup));
    }

    /// Costs at or over the cut leave nothing kept: the cheapest candidate
    /// alone (min-cost fallback). The band cuts what is more than `band`
    /// above the cheapest.
    #[test]
    fn the_cut_and_the_band() {
        let t = compiled(6, Params::PAPER.with_cut(0));
        let s = ports(&[]);
        let i = inputs(&t, &s, Scheme::Lcmp);
        let cheapest = by_cost(&t, &s)[0].1;
        for hash in 0..6 {
            assert_eq!(
                decide(&i, GroupId(1), hash),
                (Some(cheapest), Reason::MinCostFallback)
            );
        }
        assert_eq!(pick_list(&i, GroupId(1)).as_slice(), &[cheapest]);
        let e = evaluate(&i, GroupId(1), 0);
        assert!(e.candidates.iter().all(|c| !c.kept));
        assert!(e
            .candidates
            .iter()
            .any(|c| c.cut_reason == Some(CutReason::OverCut)));
        // Band 0: only candidates at the cheapest cost stay.
        let t = compiled(6, Params::PAPER.with_band(0));
        let i = inputs(&t, &s, Scheme::Lcmp);
        let want = by_cost(&t, &s);
        let ties = want
            .iter()
            .take(3)
            .filter(|&&(c, _)| c == want[0].0)
            .count();
        for hash in 0..6u32 {
            let (port, reason) = decide(&i, GroupId(1), hash);
            assert_eq!(reason, Reason::HashInKept);
            assert_eq!(port, Some(want[hash as usize % ties].1));
        }
        // The cut exactly at the second-cheapest cost keeps the cheapest only.
        let second = want[1].0;
        let t = compiled(6, Params::PAPER.with_cut(second));
        let i = inputs(&t, &s, Scheme::Lcmp);
        if want[0].0 < second {
            assert_eq!(pick_list(&i, GroupId(1)).as_slice(), &[want[0].1]);
        }
    }

    /// ECMP hashes over the live candidates in installation order, UCMP
    /// over those of maximum capacity; outdated tables make LCMP fall back
    /// to ECMP.
    #[test]
    fn ecmp_ucmp_and_the_outdated_fallback() {
        let t = compiled(6, Params::PAPER);
        let s = ports(&[2]);
        let live = [0u8, 1, 3, 4, 5];
        let e = inputs(&t, &s, Scheme::Ecmp);
        let u = inputs(&t, &s, Scheme::Ucmp);
        let mut outdated = inputs(&t, &s, Scheme::Lcmp);
        outdated.tables_valid = false;
        for hash in 0..20u32 {
            let port = PortId(live[hash as usize % live.len()]);
            assert_eq!(decide(&e, GroupId(1), hash), (Some(port), Reason::Ecmp));
            assert_eq!(
                decide(&outdated, GroupId(1), hash),
                (Some(port), Reason::EcmpFallback)
            );
            // Ports 0 and 1 have the maximum capacity (200 Gbps).
            let port = PortId([0u8, 1][hash as usize % 2]);
            assert_eq!(decide(&u, GroupId(1), hash), (Some(port), Reason::Ucmp));
        }
        let ports_of = |i: &Inputs<'_, 8>| -> std::vec::Vec<u8> {
            pick_list(i, GroupId(1)).iter().map(|p| p.0).collect()
        };
        assert_eq!(ports_of(&e), live);
        assert_eq!(ports_of(&outdated), live);
        assert_eq!(ports_of(&u), [0, 1]);
        let x = evaluate(&u, GroupId(1), 0);
        for c in &x.candidates {
            let max = c.port.0 < 2;
            assert_eq!(c.kept, max && c.up, "{c:?}");
        }
        // Outdated tables: explain keeps every live candidate (the ECMP
        // fallback hashes over all of them), none cut by the half or the
        // cut, which the valid tables' ranking would do with 5 live.
        let x = evaluate(&outdated, GroupId(1), 0);
        assert_eq!(x.reason, Reason::EcmpFallback);
        for c in &x.candidates {
            assert_eq!(c.kept, c.up, "{c:?}");
            let cut = (!c.up).then_some(CutReason::Down);
            assert_eq!(c.cut_reason, cut, "{c:?}");
        }
        let valid = evaluate(&inputs(&t, &s, Scheme::Lcmp), GroupId(1), 0);
        assert!(valid.candidates.iter().filter(|c| c.kept).count() < live.len());
    }

    /// The arithmetic of the capacity-weighted pick before the 32-bit
    /// divide, kept as the oracle: weights by `u64` division, `u64`
    /// remainder.
    fn weighted_rank_by_division(hash: u32, capacities: &[u64]) -> usize {
        let w = |c: u64| (c / 1_000_000).max(1);
        let total = capacities
            .iter()
            .map(|&c| w(c))
            .fold(0u64, u64::saturating_add);
        let mut point = u64::from(hash).checked_rem(total).unwrap_or(0);
        for (rank, &c) in capacities.iter().enumerate() {
            if point < w(c) {
                return rank;
            }
            point = point.saturating_sub(w(c));
        }
        capacities.len().saturating_sub(1)
    }

    quickcheck::quickcheck! {
        /// The same rank as the division, for any hash and capacities (of
        /// every width: shifted down by `shift`).
        fn weighted_rank_matches_the_division(hash: u32, caps: std::vec::Vec<u64>, shift: u8) -> bool {
            let caps: std::vec::Vec<u64> = caps.iter().take(16).map(|c| c >> (shift % 64)).collect();
            weighted_rank(hash, caps.len(), |i| weight_mbps(caps[i]))
                == weighted_rank_by_division(hash, &caps)
        }
    }

    /// Capacity-weighted: `hash % total` falls into the kept candidates'
    /// capacity shares (whole Mbit/s), in rank order.
    #[test]
    fn capacity_weighted_shares() {
        let t = compiled(6, Params::PAPER.with_pick(Pick::CapacityWeighted));
        let s = ports(&[]);
        let i = inputs(&t, &s, Scheme::Lcmp);
        let g = t.group(GroupId(1)).expect("group");
        let kept: std::vec::Vec<(PortId, u32)> = by_cost(&t, &s)
            .iter()
            .take(3)
            .map(|&(_, p)| {
                let c = g.candidates.iter().find(|c| c.port == p).expect("cand");
                (p, (c.capacity_bps / 1_000_000) as u32)
            })
            .collect();
        let total: u32 = kept.iter().map(|k| k.1).sum();
        let mut start = 0;
        for &(port, w) in &kept {
            for hash in [start, start + w / 2, start + w - 1, start + total] {
                assert_eq!(
                    decide(&i, GroupId(1), hash),
                    (Some(port), Reason::WeightedInKept),
                    "hash {hash}"
                );
            }
            start += w;
        }
    }

    /// Golden vectors of the two hash picks (`docs/tofino.md` lists the
    /// scaled one): `hash % n` against `((hash >> 16) * n) >> 16`.
    #[test]
    fn bucket_golden_vectors() {
        let cases: [(u32, usize, usize, usize); 8] = [
            // (hash, n, hash % n, scaled)
            (0, 3, 0, 0),
            (0xFFFF_FFFF, 3, 0, 2),
            (0x5555_0000, 3, 2, 0), // 21845 * 3 = 65535 -> 0
            (0x5556_0000, 3, 0, 1), // 21846 * 3 = 65538 -> 1
            (0xAAAB_FFFF, 3, 2, 2), // 43691 * 3 = 131073 -> 2
            (0x8000_0000, 2, 0, 1),
            (0x1234_5678, 16, 8, 1),
            (0xDEAD_BEEF, 6, 5, 5), // 57005 * 6 = 342030 -> 5
        ];
        for (hash, n, modulo, scaled) in cases {
            assert_eq!(bucket(hash, n, Pick::Hash), modulo, "{hash:#x} % {n}");
            assert_eq!(
                bucket(hash, n, Pick::ScaledHash),
                scaled,
                "{hash:#x} scaled {n}"
            );
        }
    }

    /// The scaled pick gives each of `n` choices `floor` or `ceil` of
    /// `65536 / n` top-16-bit values, for every `n <= 16`.
    #[test]
    fn scaled_pick_shares_are_within_one() {
        for n in 1..=16usize {
            let mut count = [0u32; 16];
            for top in 0..=u16::MAX {
                let b = bucket(u32::from(top) << 16, n, Pick::ScaledHash);
                assert!(b < n);
                count[b] += 1;
            }
            let lo = 65_536 / n as u32;
            assert!(
                count[..n].iter().all(|&c| c == lo || c == lo + 1),
                "{n}: {count:?}"
            );
        }
    }
}
