//! A plain `std` reference model of one LCMP switch, written for the
//! differential target from the paper (§3.1-§3.4, §5) and the core's
//! written specification (`docs/design.md`: hashes and key bytes;
//! `docs/paper-map.md`: each formula and its deviations), not from
//! `lcmp-decide`'s code.
//!
//! It shares nothing with the crate beyond its public *types* (tables,
//! flow keys, decisions, explanations, errors), which it uses so that
//! results can be compared with `==`. Everything is recomputed the obvious
//! way on every call: `HashMap` flow table, `Vec` + sort selection, `u128`
//! arithmetic, its own MurmurHash3 and bitwise CRC-32.
//!
//! Where the spec leaves a choice open, the model follows the crate's
//! *documented* contract, and says so:
//!
//! * `Q` is a function of the last sampled depth and the port's buffer and
//!   level count *in force when a decision reads it* (the crate's `monitor`
//!   docs); `T` is stored as a level *index* at sample time and scored with
//!   the level table in force when read (an index beyond a shorter new table
//!   reads as 0); `D` is the stored counter. `C_cong` and `C` are recomputed
//!   from these on every read, with the weights in force: the crate caches
//!   `C_cong` per port (refreshed at samples and installs), and this is what
//!   checks that cache.
//! * Samples for a port the tables do not list (or before any install)
//!   advance the raw depth, trend (with `K = 3`) and time only; its `T`
//!   reads 0 and the duration counter is untouched.
//! * `rank` is the position among the live candidates sorted by
//!   `(C, port)` under every scheme (information only for ECMP and UCMP,
//!   which pick in installation order).
//! * With no tables installed every packet is `NoRoute(UnknownGroup)`: there
//!   are no groups to hash over.
//! * A pin belongs to a flow and its group (another group's packet of the
//!   same flow is another pin, as in the crate's cache, issue 33). It is
//!   honoured only while its port is up and listed among the
//!   packet's group's candidates (an install may withdraw it); otherwise the
//!   flow is re-decided, counted as a failover (port down) or a withdrawal
//!   (port up, no longer a candidate). A flow whose group is gone is
//!   forgotten, idle entry included; one whose candidates are all down
//!   keeps its pin.
//! * The flow table is unbounded. The differential target keeps at most 8
//!   flows against a 16-slot cache of 8-slot buckets, so the crate's cache
//!   can never refuse an insert; and it keeps the total clock advance
//!   below 2^31 ticks, so the wrapping age of an entry is its true age. In
//!   that regime the crate's slot placement, eviction of *idle* entries and
//!   GC are unobservable except through the GC counter, which is not
//!   compared.

use std::collections::HashMap;

use lcmp_decide::{
    Addresses, CandidateExplanation, Counters, CutReason, Decision, Error, Explanation, FlowKey,
    GroupId, HashAlgorithm, Instant, Pick, PortId, Reason, Scheme, Setting, Tables,
};

/// Idle timeout used when no tables are installed (2 s at 1 µs a tick).
const DEFAULT_IDLE: u32 = 2_000_000;

#[derive(Clone, Debug, Default)]
struct Port {
    down: bool,
    prev_bytes: u64,
    trend: i64,
    last_sample: u32,
    duration: u16,
    /// Level index of `T` (`None`: below every level, score 0).
    t: Option<usize>,
}

/// The reference model of a switch with `ports` ports.
#[derive(Clone, Debug)]
pub struct Model {
    scheme: Scheme,
    seed: u32,
    hash: HashAlgorithm,
    tables: Option<Tables>,
    current: bool,
    ports: Vec<Port>,
    flows: HashMap<(FlowKey, GroupId), (PortId, u32)>,
    counters: Counters,
}

impl Model {
    /// A model switch with no tables.
    pub fn new(ports: usize, scheme: Scheme, seed: u32, hash: HashAlgorithm) -> Self {
        Model {
            scheme,
            seed,
            hash,
            tables: None,
            current: false,
            ports: vec![Port::default(); ports],
            flows: HashMap::new(),
            counters: Counters::default(),
        }
    }

    /// The counters (`gc_evictions` stays 0: the model has no slots).
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Validates and installs tables; on error nothing changes.
    pub fn install(&mut self, t: &Tables) -> Result<(), Error> {
        validate(t, self.ports.len())?;
        self.tables = Some(t.clone());
        self.current = true;
        Ok(())
    }

    /// Marks the tables outdated or current (§5).
    pub fn set_tables_current(&mut self, current: bool) {
        self.current = current;
    }

    /// Changes the scheme.
    pub fn set_scheme(&mut self, scheme: Scheme) {
        self.scheme = scheme;
    }

    /// Port liveness.
    pub fn set_port_up(&mut self, port: PortId, up: bool) -> Result<(), Error> {
        let p = self
            .ports
            .get_mut(usize::from(port.0))
            .ok_or(Error::PortOutOfRange(port.0))?;
        p.down = !up;
        Ok(())
    }

    /// One queue sample (§3.3, the congestion monitor: `Q`, `T`, `D`).
    pub fn sample(&mut self, now: Instant, port: PortId, bytes: u64) -> Result<(), Error> {
        let idx = usize::from(port.0);
        if idx >= self.ports.len() {
            return Err(Error::PortOutOfRange(port.0));
        }
        let tables = self.tables.as_ref();
        // A port the tables do not list (or any before an install) is
        // refused and records nothing, as the C ABI's `lcmp_sample`.
        let (t, pc) = tables
            .and_then(|t| t.ports.iter().find(|p| p.id == port).map(|p| (t, *p)))
            .ok_or(Error::PortNotInTables(port.0))?;
        let k = t.params.trend_shift;
        let p = &mut self.ports[idx];
        // Eq. 3 with floor shifts, exact in i128 then clamped to i64.
        let delta = clamp_i64(i128::from(bytes) - i128::from(p.prev_bytes));
        let old = i128::from(p.trend);
        let next = old - (old >> k) + (i128::from(delta) >> k);
        p.trend = clamp_i64(next);
        let interval = now.ticks().wrapping_sub(p.last_sample).max(1);
        p.prev_bytes = bytes;
        p.last_sample = now.ticks();
        let n = t.levels.len();
        // T: highest i with T >= (rate / 8) * ((i + 1) / n) * interval_s.
        p.t = if p.trend <= 0 {
            None
        } else {
            (0..n).rev().find(|&i| {
                let lhs = p.trend as u128 * n as u128 * u128::from(t.params.ticks_per_second) * 8;
                let rhs = u128::from(pc.rate_bps) * (i as u128 + 1) * u128::from(interval);
                lhs >= rhs
            })
        };
        let q_score = queue_score(bytes, pc.buffer_bytes, &t.levels);
        if q_score >= t.params.high_water {
            p.duration = p.duration.saturating_add(1);
        } else if q_score <= t.params.low_water {
            p.duration = p.duration.saturating_sub(1);
        }
        self.counters.samples += 1;
        Ok(())
    }

    fn idle(&self) -> u32 {
        self.tables
            .as_ref()
            .map_or(DEFAULT_IDLE, |t| t.params.idle_timeout_ticks)
    }

    fn live_pin(&self, key: &FlowKey, group: GroupId, now: Instant) -> Option<PortId> {
        let idle = self.idle();
        self.flows
            .get(&(*key, group))
            .filter(|(_, seen)| now.ticks().wrapping_sub(*seen) <= idle)
            .map(|(port, _)| *port)
    }

    fn up(&self, port: PortId) -> bool {
        self.ports.get(usize::from(port.0)).is_some_and(|p| !p.down)
    }

    /// Whether `port` is listed among `group`'s candidates in the installed
    /// tables (a pin on anything else was withdrawn by an install).
    fn is_candidate(&self, group: GroupId, port: PortId) -> bool {
        self.tables.as_ref().is_some_and(|t| {
            t.groups
                .iter()
                .any(|g| g.id == group && g.candidates.iter().any(|c| c.port == port))
        })
    }

    /// One packet (§3.1 steps 2-4, §3.4 fast failover).
    pub fn on_packet(&mut self, now: Instant, key: &FlowKey, group: GroupId) -> Decision {
        self.counters.packets += 1;
        let pin = self.live_pin(key, group, now);
        if let Some(port) = pin {
            if self.up(port) && self.is_candidate(group, port) {
                self.flows.insert((*key, group), (port, now.ticks()));
                self.counters.hits += 1;
                return Decision::Hit(port);
            }
        }
        let e = self.evaluate(key, group, self.scheme);
        let Some(port) = e.chosen else {
            // Every candidate down: the pin is kept (the flow returns to
            // its port when it comes back); group gone: forgotten.
            if e.reason != Reason::NoLiveCandidate {
                self.flows.remove(&(*key, group));
            }
            self.counters.no_route += 1;
            return Decision::NoRoute(e.reason);
        };
        self.flows.insert((*key, group), (port, now.ticks()));
        if let Some(old) = pin {
            if self.up(old) {
                self.counters.withdrawals += 1;
            } else {
                self.counters.failovers += 1;
            }
        } else {
            self.counters.new_flows += 1;
        }
        match e.reason {
            Reason::MinCostFallback => self.counters.min_cost_fallbacks += 1,
            Reason::EcmpFallback => self.counters.ecmp_fallbacks += 1,
            _ => {}
        }
        Decision::New {
            port,
            reason: e.reason,
            failover: pin.is_some(),
        }
    }

    /// The explanation of what `on_packet` would do now.
    pub fn explain(&self, now: Instant, key: &FlowKey, group: GroupId) -> Explanation {
        let mut e = self.evaluate(key, group, self.scheme);
        if let Some(port) = self.live_pin(key, group, now) {
            e.pinned = Some(port);
            if self.up(port) && self.is_candidate(group, port) {
                e.chosen = Some(port);
                e.reason = Reason::Pinned;
            }
        }
        e
    }

    /// The ECMP hash of a flow.
    pub fn hash(&self, key: &FlowKey) -> u32 {
        let bytes = key_bytes(key);
        match self.hash {
            HashAlgorithm::Murmur3 => murmur3(&bytes, self.seed),
            HashAlgorithm::Crc32 => crc32(&bytes) ^ self.seed,
        }
    }

    /// The new-flow decision and its explanation under `scheme`.
    fn evaluate(&self, key: &FlowKey, group: GroupId, scheme: Scheme) -> Explanation {
        let hash = self.hash(key);
        let mut out = Explanation {
            scheme,
            group,
            candidates: heapless::Vec::new(),
            hash,
            pinned: None,
            chosen: None,
            reason: Reason::UnknownGroup,
        };
        let Some(t) = self.tables.as_ref() else {
            return out;
        };
        let Some(g) = t.groups.iter().find(|g| g.id == group) else {
            return out;
        };
        let w = &t.params.weights;
        let n = t.capacity_thresholds_bps.len();
        for c in &g.candidates {
            let ds = delay_score(c.delay_units, t.params.delay_shift);
            // Alg. 2: from the top, 255 - level[i] for the highest i reached.
            let cs = (0..n)
                .rev()
                .find(|&i| c.capacity_bps >= t.capacity_thresholds_bps[i])
                .map_or(255, |i| 255 - t.levels[i]);
            let c_path = shift_cap(
                u64::from(w.w_dl) * u64::from(ds) + u64::from(w.w_lc) * u64::from(cs),
                w.s_path,
            );
            let port = &self.ports[usize::from(c.port.0)];
            let cfg = t.ports.iter().find(|p| p.id == c.port).expect("validated");
            let q = queue_score(port.prev_bytes, cfg.buffer_bytes, &t.levels);
            let tl = port.t.and_then(|i| t.levels.get(i).copied()).unwrap_or(0);
            let d = (port.duration >> 2).min(255) as u8;
            let c_cong = shift_cap(
                u64::from(w.w_ql) * u64::from(q)
                    + u64::from(w.w_tl) * u64::from(tl)
                    + u64::from(w.w_dp) * u64::from(d),
                w.s_cong,
            );
            let cost = shift_cap(
                u64::from(w.alpha) * u64::from(c_path) + u64::from(w.beta) * u64::from(c_cong),
                w.s_total,
            );
            let up = !port.down;
            out.candidates
                .push(CandidateExplanation {
                    port: c.port,
                    up,
                    delay_score: ds,
                    cap_score: cs,
                    c_path,
                    q,
                    t: tl,
                    d,
                    c_cong,
                    cost,
                    rank: None,
                    kept: false,
                    cut_reason: if up { None } else { Some(CutReason::Down) },
                })
                .expect("group capacity");
        }
        let live: Vec<usize> = (0..out.candidates.len())
            .filter(|&i| out.candidates[i].up)
            .collect();
        if live.is_empty() {
            out.reason = Reason::NoLiveCandidate;
            return out;
        }
        let cands = &mut out.candidates;
        let mut order = live.clone();
        order.sort_by_key(|&i| (cands[i].cost, cands[i].port));
        for (rank, &i) in order.iter().enumerate() {
            cands[i].rank = Some(rank as u8);
        }
        let (chosen, reason) = match scheme {
            Scheme::Lcmp if self.current => {
                // §3.4: sort (C, port), keep the lower half (all when
                // n / 2 < 2), drop C >= cut, hash within; else min cost.
                let keep = if order.len() / 2 < 2 {
                    order.len()
                } else {
                    order.len() / 2
                };
                let mut kept = Vec::new();
                for (rank, &i) in order.iter().enumerate() {
                    let c = &mut cands[i];
                    if rank >= keep {
                        c.cut_reason = Some(CutReason::UpperHalf);
                    } else if c.cost >= t.params.cut {
                        c.cut_reason = Some(CutReason::OverCut);
                    } else {
                        c.kept = true;
                        kept.push(i);
                    }
                }
                if kept.is_empty() {
                    (Some(cands[order[0]].port), Reason::MinCostFallback)
                } else {
                    match t.params.pick {
                        Pick::Hash | Pick::ScaledHash => (
                            Some(cands[kept[hash_pick(t.params.pick, hash, kept.len())]].port),
                            Reason::HashInKept,
                        ),
                        Pick::CapacityWeighted => {
                            let weight =
                                |i: usize| (g.candidates[i].capacity_bps / 1_000_000).max(1);
                            let total: u64 = kept.iter().map(|&i| weight(i)).sum();
                            let mut point = u64::from(hash) % total;
                            let mut pick = *kept.last().expect("non-empty");
                            for &i in &kept {
                                if point < weight(i) {
                                    pick = i;
                                    break;
                                }
                                point -= weight(i);
                            }
                            (Some(cands[pick].port), Reason::WeightedInKept)
                        }
                    }
                }
            }
            Scheme::Lcmp | Scheme::Ecmp => {
                for &i in &live {
                    cands[i].kept = true;
                }
                let pick = live[hash_pick(t.params.pick, hash, live.len())];
                let reason = if scheme == Scheme::Ecmp {
                    Reason::Ecmp
                } else {
                    Reason::EcmpFallback
                };
                (Some(cands[pick].port), reason)
            }
            Scheme::Ucmp => {
                let max = live
                    .iter()
                    .map(|&i| g.candidates[i].capacity_bps)
                    .max()
                    .expect("live");
                let mut kept = Vec::new();
                for &i in &live {
                    if g.candidates[i].capacity_bps == max {
                        cands[i].kept = true;
                        kept.push(i);
                    } else {
                        cands[i].cut_reason = Some(CutReason::NotMaxCapacity);
                    }
                }
                (
                    Some(cands[kept[hash_pick(t.params.pick, hash, kept.len())]].port),
                    Reason::Ucmp,
                )
            }
        };
        out.chosen = chosen;
        out.reason = reason;
        out
    }
}

/// The hash pick among `n` choices: `hash % n`, or for `ScaledHash` the
/// top 16 bits scaled, `floor((hash >> 16) * n / 2^16)` (the capacity
/// weighted pick hashes ECMP steps with `%` too).
fn hash_pick(pick: Pick, hash: u32, n: usize) -> usize {
    match pick {
        Pick::ScaledHash => ((u64::from(hash >> 16) * n as u64) / 65_536) as usize,
        Pick::Hash | Pick::CapacityWeighted => hash as usize % n,
    }
}

fn clamp_i64(v: i128) -> i64 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// `min(sum >> shift, 255)`.
fn shift_cap(sum: u64, shift: u8) -> u8 {
    (sum >> shift).min(255) as u8
}

/// `Q`: `level[i]` for the highest `i` with `bytes >= floor(buffer * i / n)`;
/// 0 for an empty queue.
fn queue_score(bytes: u64, buffer: u64, levels: &[u8]) -> u8 {
    let n = levels.len();
    if bytes == 0 {
        return 0;
    }
    (0..n)
        .rev()
        .find(|&i| u128::from(bytes) >= u128::from(buffer) * i as u128 / n as u128)
        .map_or(0, |i| levels[i])
}

/// Alg. 1.
fn delay_score(delay: u32, shift: u8) -> u8 {
    if u64::from(delay) >= 1u64 << shift {
        255
    } else {
        ((u64::from(delay) * 255) >> shift) as u8
    }
}

/// Table validation, in the order the spec lists the tables: scalars,
/// levels, thresholds, ports, groups.
fn validate(t: &Tables, port_capacity: usize) -> Result<(), Error> {
    let p = &t.params;
    let w = &p.weights;
    if w.s_path >= 32 {
        return Err(Error::ShiftTooLarge(Setting::PathShift));
    }
    if w.s_cong >= 32 {
        return Err(Error::ShiftTooLarge(Setting::CongestionShift));
    }
    if w.s_total >= 32 {
        return Err(Error::ShiftTooLarge(Setting::TotalShift));
    }
    let fits =
        |ws: &[u32]| ws.iter().map(|&x| u64::from(x)).sum::<u64>() * 255 <= u64::from(u32::MAX);
    if !fits(&[w.w_dl, w.w_lc]) {
        return Err(Error::WeightOverflow(Setting::PathWeights));
    }
    if !fits(&[w.w_ql, w.w_tl, w.w_dp]) {
        return Err(Error::WeightOverflow(Setting::CongestionWeights));
    }
    if !fits(&[w.alpha, w.beta]) {
        return Err(Error::WeightOverflow(Setting::FusionWeights));
    }
    if p.delay_shift >= 32 {
        return Err(Error::ShiftTooLarge(Setting::DelayShift));
    }
    if p.trend_shift >= 64 {
        return Err(Error::ShiftTooLarge(Setting::TrendShift));
    }
    if p.low_water > p.high_water {
        return Err(Error::InvalidSetting(Setting::WaterMarks));
    }
    if p.ticks_per_second == 0 {
        return Err(Error::InvalidSetting(Setting::TicksPerSecond));
    }
    if t.levels.is_empty() || t.levels.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::InvalidLevels);
    }
    let thr = &t.capacity_thresholds_bps;
    if thr.len() != t.levels.len() || thr.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::InvalidCapacityThresholds);
    }
    for (i, port) in t.ports.iter().enumerate() {
        if usize::from(port.id.0) >= port_capacity {
            return Err(Error::PortOutOfRange(port.id.0));
        }
        if t.ports[..i].iter().any(|q| q.id == port.id) {
            return Err(Error::DuplicatePort(port.id.0));
        }
        if port.rate_bps == 0 || port.buffer_bytes == 0 {
            return Err(Error::ZeroPortCapacity(port.id.0));
        }
    }
    for (i, g) in t.groups.iter().enumerate() {
        if t.groups[..i].iter().any(|h| h.id == g.id) {
            return Err(Error::DuplicateGroup(g.id.0));
        }
        if g.candidates.is_empty() {
            return Err(Error::EmptyGroup(g.id.0));
        }
        for (j, c) in g.candidates.iter().enumerate() {
            let (group, port) = (g.id.0, c.port.0);
            if !t.ports.iter().any(|p| p.id == c.port) {
                return Err(Error::UnknownPort { group, port });
            }
            if g.candidates[..j].iter().any(|k| k.port == c.port) {
                return Err(Error::DuplicateCandidate { group, port });
            }
            if c.capacity_bps == 0 {
                return Err(Error::ZeroCapacity { group, port });
            }
        }
    }
    Ok(())
}

/// The ECMP key bytes (`docs/design.md`, "Hashes"): addresses as
/// little-endian numeric values, then `sport | dport << 16` as a
/// little-endian `u32`.
pub fn key_bytes(key: &FlowKey) -> Vec<u8> {
    let mut b = Vec::new();
    match key.addrs {
        Addresses::V4 { src, dst } => {
            b.extend_from_slice(&src.to_le_bytes());
            b.extend_from_slice(&dst.to_le_bytes());
        }
        Addresses::V6 { src, dst } => {
            b.extend_from_slice(&src.to_le_bytes());
            b.extend_from_slice(&dst.to_le_bytes());
        }
    }
    b.extend_from_slice(&(u32::from(key.sport) | (u32::from(key.dport) << 16)).to_le_bytes());
    b
}

/// MurmurHash3 x86_32, transcribed from Appleby's `MurmurHash3_x86_32`.
pub fn murmur3(data: &[u8], seed: u32) -> u32 {
    let (c1, c2) = (0xcc9e_2d51u32, 0x1b87_3593u32);
    let mut h1 = seed;
    let nblocks = data.len() / 4;
    for i in 0..nblocks {
        let mut k1 = u32::from_le_bytes(data[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
        k1 = k1.wrapping_mul(c1);
        k1 = k1.rotate_left(15);
        k1 = k1.wrapping_mul(c2);
        h1 ^= k1;
        h1 = h1.rotate_left(13);
        h1 = h1.wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = &data[nblocks * 4..];
    let mut k1 = 0u32;
    if tail.len() >= 3 {
        k1 ^= u32::from(tail[2]) << 16;
    }
    if tail.len() >= 2 {
        k1 ^= u32::from(tail[1]) << 8;
    }
    if !tail.is_empty() {
        k1 ^= u32::from(tail[0]);
        k1 = k1.wrapping_mul(c1);
        k1 = k1.rotate_left(15);
        k1 = k1.wrapping_mul(c2);
        h1 ^= k1;
    }
    h1 ^= data.len() as u32;
    h1 ^= h1 >> 16;
    h1 = h1.wrapping_mul(0x85eb_ca6b);
    h1 ^= h1 >> 13;
    h1 = h1.wrapping_mul(0xc2b2_ae35);
    h1 ^= h1 >> 16;
    h1
}

/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), bit by bit.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod test {
    use super::*;
    use core::net::Ipv4Addr;
    use lcmp_decide::{Candidate, Group, PortConfig};

    #[test]
    fn hash_vectors() {
        assert_eq!(murmur3(b"", 1), 0x514E_28B7);
        assert_eq!(murmur3(&[0x21, 0x43, 0x65], 0), 0x7E4A_8634);
        assert_eq!(murmur3(b"Hello, world!", 1234), 0xFAF6_CDB3);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let k = FlowKey::v4(
            Ipv4Addr::new(10, 0, 0, 1),
            Ipv4Addr::new(10, 0, 7, 2),
            0x1234,
            0xABCD,
            17,
        );
        assert_eq!(
            key_bytes(&k),
            [0x01, 0, 0, 0x0A, 0x02, 0x07, 0, 0x0A, 0x34, 0x12, 0xCD, 0xAB]
        );
    }

    /// testbed8 DC1 → DC8 (first-hop metric), scored by hand from Alg. 1-2
    /// and Eq. 1-2 with the paper's weights:
    /// 200G/25 ms: ds 199, cs 128, C_path 181, C 135;
    /// 200G/250 ms: 255, 128, 223, 167; 100G/10 ms: 79, 204, 110, 82;
    /// 100G/100 ms: 255, 204, 242, 181; 25G/5 ms: 39, 255, 93, 69;
    /// 25G/50 ms: 255, 255, 255, 191. Sorted: 6(69) 4(82) 2(135) | ...
    #[test]
    fn testbed8_golden() {
        let mut t = Tables::paper_defaults();
        let mut g = Group {
            id: GroupId(8),
            candidates: heapless::Vec::new(),
        };
        for (i, (gbps, ms)) in [
            (200u64, 25u32),
            (200, 250),
            (100, 10),
            (100, 100),
            (25, 5),
            (25, 50),
        ]
        .into_iter()
        .enumerate()
        {
            let port = PortId(i as u8);
            t.ports
                .push(PortConfig {
                    id: port,
                    rate_bps: gbps * 1_000_000_000,
                    buffer_bytes: 5_000_000_000,
                })
                .unwrap();
            g.candidates
                .push(Candidate {
                    port,
                    delay_units: ms,
                    capacity_bps: gbps * 1_000_000_000,
                })
                .unwrap();
        }
        t.groups.push(g).unwrap();
        let mut m = Model::new(8, Scheme::Lcmp, 0, HashAlgorithm::Murmur3);
        m.install(&t).unwrap();
        let k = FlowKey::v4(
            Ipv4Addr::new(10, 1, 0, 1),
            Ipv4Addr::new(10, 8, 0, 1),
            1000,
            4791,
            17,
        );
        let e = m.explain(Instant::from_ticks(0), &k, GroupId(8));
        let got: Vec<_> = e
            .candidates
            .iter()
            .map(|c| (c.delay_score, c.cap_score, c.c_path, c.cost))
            .collect();
        assert_eq!(
            got,
            [
                (199, 128, 181, 135),
                (255, 128, 223, 167),
                (79, 204, 110, 82),
                (255, 204, 242, 181),
                (39, 255, 93, 69),
                (255, 255, 255, 191)
            ]
        );
        let kept: Vec<_> = e
            .candidates
            .iter()
            .filter(|c| c.kept)
            .map(|c| c.port.0)
            .collect();
        assert_eq!(kept, [0, 2, 4]);
        // A full queue on port 4 for a while: Q 255, D rises, C moves up.
        for i in 0..8 {
            m.sample(
                Instant::from_ticks(1000 * (i + 1)),
                PortId(4),
                5_000_000_000,
            )
            .unwrap();
        }
        let e = m.explain(Instant::from_ticks(9000), &k, GroupId(8));
        let c4 = e.candidates[4];
        // Q 255, T 255 (a 5 GB rise at 25 Gbps), D = 8 >> 2;
        // C_cong = (2*255 + 255 + 2) >> 3 = 95, C = (3*93 + 95) >> 2 = 93.
        assert_eq!(
            (c4.q, c4.t, c4.d, c4.c_cong, c4.cost),
            (255, 255, 2, 95, 93)
        );
    }
}
