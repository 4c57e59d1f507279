//! Structured fuzz inputs: an arbitrary scenario (decider settings, a flow
//! pool, initial tables) and a sequence of events, built with `arbitrary`.
//!
//! The spec types are deliberately close to valid: table builders keep
//! levels sorted, ids small and ports mostly listed, so most installs
//! succeed and the decision paths get exercised; a [`Mangle`] breaks one
//! rule on purpose so every validation error is reached too.

use arbitrary::Arbitrary;
use core::net::{Ipv4Addr, Ipv6Addr};
use lcmp_decide::tables::{default_capacity_thresholds, DEFAULT_LEVELS, MAX_LEVELS};
use lcmp_decide::{
    Candidate, DeciderConfig, FlowCacheKey, FlowKey, Group, GroupId, HashAlgorithm, Params, Pick,
    PortConfig, PortId, Scheme, Tables, Weights,
};

/// Group ids live in `0..GROUP_SPACE`, so events hit installed and unknown
/// groups and installs sometimes repeat an id.
pub const GROUP_SPACE: u16 = 6;

/// A whole fuzz case.
#[derive(Arbitrary, Debug, Clone)]
pub struct Scenario {
    /// Decider settings.
    pub config: ConfigSpec,
    /// The tick counter at the start (near `u32::MAX` to cross the wrap).
    pub start: StartSpec,
    /// Tables installed before the first event (may be invalid).
    pub tables: TablesSpec,
    /// The flows packets are drawn from.
    pub flows: Vec<FlowSpec>,
    /// What happens.
    pub events: Vec<Event>,
}

/// Decider settings.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct ConfigSpec {
    /// Routing scheme.
    pub scheme: SchemeSpec,
    /// ECMP hash seed.
    pub seed: u32,
    /// CRC-32 instead of MurmurHash3.
    pub crc: bool,
}

impl ConfigSpec {
    /// The decider configuration.
    pub fn build(&self) -> DeciderConfig {
        // The default `Overflow::Refuse`: decide_events checks that every
        // forwarded flow arrives in order, which only it promises.
        // The flow cache's key from the seed (the committed seeds keep
        // their layout): the keyed path under keys the fuzzer varies.
        let key = u128::from(self.seed).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835);
        DeciderConfig::DEFAULT
            .with_flow_key(FlowCacheKey::from_bytes(key.to_le_bytes()))
            .with_scheme(self.scheme.build())
            .with_seed(self.seed)
            .with_hash(if self.crc {
                HashAlgorithm::Crc32
            } else {
                HashAlgorithm::Murmur3
            })
    }
}

/// A routing scheme: the core's scheme whose code is the variant's
/// position. (`lcmp_decide` has no `arbitrary` feature, so this enum is the
/// `arbitrary` form; its variants keep their order, which is the committed
/// seeds' byte layout.)
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum SchemeSpec {
    /// LCMP (code 0).
    Lcmp,
    /// ECMP (code 1).
    Ecmp,
    /// UCMP (code 2).
    Ucmp,
}

impl SchemeSpec {
    /// The scheme: [`Scheme::from_code`] of the variant's position.
    pub fn build(self) -> Scheme {
        Scheme::from_code(self as u8).unwrap_or_default()
    }
}

/// The first tick.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum StartSpec {
    /// Tick 0 (a port's "previous sample" time).
    Zero,
    /// Shortly before the 32-bit counter wraps.
    BeforeWrap(u16),
    /// Anywhere.
    Raw(u32),
}

impl StartSpec {
    /// The tick.
    pub fn ticks(self) -> u32 {
        match self {
            StartSpec::Zero => 0,
            StartSpec::BeforeWrap(d) => u32::MAX - u32::from(d),
            StartSpec::Raw(t) => t,
        }
    }
}

/// A flow of the pool.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct FlowSpec {
    /// IPv6 instead of IPv4.
    pub v6: bool,
    /// Source address seed.
    pub src: u32,
    /// Destination address seed.
    pub dst: u32,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Protocol (the fingerprint covers it, the ECMP hash does not).
    pub proto: u8,
}

impl FlowSpec {
    /// The flow key.
    pub fn key(&self) -> FlowKey {
        if self.v6 {
            let src = (0xfd00u128 << 112) | u128::from(self.src);
            let dst = (0xfd00u128 << 112) | (u128::from(self.dst) << 32) | 1;
            FlowKey::v6(
                Ipv6Addr::from_bits(src),
                Ipv6Addr::from_bits(dst),
                self.sport,
                self.dport,
                self.proto,
            )
        } else {
            FlowKey::v4(
                Ipv4Addr::from_bits(self.src),
                Ipv4Addr::from_bits(self.dst),
                self.sport,
                self.dport,
                self.proto,
            )
        }
    }
}

/// The flow pool of a scenario: exactly `max` distinct flows, the specs'
/// first and then synthesised ones (`10.1.0.i -> 10.8.0.1`, UDP), so that a
/// packet event can name many flows cheaply (filling the flow cache takes
/// one short event per flow, not one flow spec each).
pub fn flow_pool(specs: &[FlowSpec], max: usize) -> Vec<FlowKey> {
    let mut keys: Vec<FlowKey> = Vec::new();
    for s in specs {
        let k = s.key();
        if !keys.contains(&k) && keys.len() < max {
            keys.push(k);
        }
    }
    let mut i = 0u16;
    while keys.len() < max {
        let k = FlowKey::v4(
            Ipv4Addr::from_bits(0x0A01_0000 | u32::from(i)),
            Ipv4Addr::new(10, 8, 0, 1),
            1000u16.wrapping_add(i),
            4791,
            17,
        );
        if !keys.contains(&k) {
            keys.push(k);
        }
        i = i.wrapping_add(1);
    }
    keys
}

/// One event.
#[derive(Arbitrary, Debug, Clone)]
pub enum Event {
    /// A packet of pool flow `flow % pool size` towards group
    /// `group % GROUP_SPACE`.
    Packet {
        /// Pool index.
        flow: u8,
        /// Group selector.
        group: u8,
    },
    /// `explain` for a flow and group (side-effect free).
    Explain {
        /// Pool index.
        flow: u8,
        /// Group selector.
        group: u8,
    },
    /// A queue sample (port may be out of range).
    Sample {
        /// Port id.
        port: u8,
        /// Depth.
        queue: QueueSpec,
    },
    /// The clock moves.
    Advance(StepSpec),
    /// Port liveness (port may be out of range).
    PortUp {
        /// Port id.
        port: u8,
        /// Up or down.
        up: bool,
    },
    /// Incremental GC with any budget.
    Gc {
        /// Slots to visit.
        budget: BudgetSpec,
    },
    /// A table install (valid or not).
    Install(Box<TablesSpec>),
    /// Tables marked outdated or current.
    SetCurrent(bool),
    /// The scheme changes.
    SetScheme(SchemeSpec),
}

impl Event {
    /// The group id a selector names.
    pub fn group(sel: u8) -> GroupId {
        GroupId(u16::from(sel) % GROUP_SPACE)
    }
}

/// A queue depth.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum QueueSpec {
    /// Empty.
    Zero,
    /// `u64::MAX` bytes.
    Max,
    /// A few bytes.
    Small(u16),
    /// `n * 50 MB` (the 5 GB buffers' range and beyond).
    Coarse(u8),
    /// Anything.
    Raw(u64),
}

impl QueueSpec {
    /// Bytes.
    pub fn bytes(self) -> u64 {
        match self {
            QueueSpec::Zero => 0,
            QueueSpec::Max => u64::MAX,
            QueueSpec::Small(n) => u64::from(n),
            QueueSpec::Coarse(n) => u64::from(n) * 50_000_000,
            QueueSpec::Raw(n) => n,
        }
    }
}

/// A clock step.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum StepSpec {
    /// One tick.
    Tick,
    /// Up to 65 535 ticks.
    Small(u16),
    /// Whole milliseconds at 1 µs a tick (up to about 65 s: crosses the 2 s
    /// idle timeout).
    Millis(u16),
    /// A large jump, up to `u32::MAX` ticks.
    Large(u32),
    /// To a few ticks before the 32-bit counter wraps.
    ToWrap(u8),
}

impl StepSpec {
    /// Ticks to advance from `now`.
    pub fn ticks(self, now: u32) -> u32 {
        match self {
            StepSpec::Tick => 1,
            StepSpec::Small(n) => u32::from(n),
            StepSpec::Millis(n) => u32::from(n) * 1000,
            StepSpec::Large(n) => n,
            StepSpec::ToWrap(d) => (u32::MAX - u32::from(d)).wrapping_sub(now),
        }
    }
}

/// A GC budget.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum BudgetSpec {
    /// Nothing.
    Zero,
    /// A few slots.
    Small(u8),
    /// `usize::MAX`.
    Max,
    /// Anything.
    Raw(usize),
}

impl BudgetSpec {
    /// Slots.
    pub fn slots(self) -> usize {
        match self {
            BudgetSpec::Zero => 0,
            BudgetSpec::Small(n) => usize::from(n),
            BudgetSpec::Max => usize::MAX,
            BudgetSpec::Raw(n) => n,
        }
    }
}

/// A weight: usually small, sometimes huge (and then often overflowing).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum WeightSpec {
    /// The paper's default for this weight.
    Default,
    /// `0..=255`.
    Small(u8),
    /// Anything (validation must reject what could overflow).
    Raw(u32),
}

impl WeightSpec {
    fn build(self, default: u32) -> u32 {
        match self {
            WeightSpec::Default => default,
            WeightSpec::Small(n) => u32::from(n),
            WeightSpec::Raw(n) => n,
        }
    }
}

/// A shift: usually below 8, sometimes anything (validation limits it).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum ShiftSpec {
    /// The default.
    Default,
    /// `0..8`.
    Small(u8),
    /// Anything.
    Raw(u8),
}

impl ShiftSpec {
    fn build(self, default: u8) -> u8 {
        match self {
            ShiftSpec::Default => default,
            ShiftSpec::Small(n) => n % 8,
            ShiftSpec::Raw(n) => n,
        }
    }
}

/// Scalar settings.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct ParamsSpec {
    /// Use `Params::PAPER` and ignore the rest.
    pub paper: bool,
    /// `[alpha, beta, w_dl, w_lc, w_ql, w_tl, w_dp]`.
    pub weights: [WeightSpec; 7],
    /// `[s_path, s_cong, s_total, delay_shift, trend_shift]`.
    pub shifts: [ShiftSpec; 5],
    /// High water mark (`None`: default).
    pub high_water: Option<u8>,
    /// Low water mark (`None`: default).
    pub low_water: Option<u8>,
    /// Cut (`None`: default).
    pub cut: Option<u8>,
    /// Ticks per second (`None`: 1 000 000).
    pub ticks_per_second: Option<u32>,
    /// Idle timeout (`None`: 2 s).
    pub idle: Option<IdleSpec>,
    /// Capacity-weighted pick.
    pub weighted: bool,
}

/// An idle timeout.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum IdleSpec {
    /// Zero: every flow is idle one tick after its last packet.
    Zero,
    /// Up to 65 535 ticks.
    Small(u16),
    /// Anything.
    Raw(u32),
}

impl ParamsSpec {
    /// The parameters.
    pub fn build(&self) -> Params {
        if self.paper {
            return Params::PAPER;
        }
        let p = Params::PAPER;
        let w = Weights::PAPER;
        let [a, b, dl, lc, ql, tl, dp] = self.weights;
        let [sp, sc, st, ds, ts] = self.shifts;
        Params::PAPER
            .with_weights(
                Weights::PAPER
                    .with_alpha(a.build(w.alpha))
                    .with_beta(b.build(w.beta))
                    .with_w_dl(dl.build(w.w_dl))
                    .with_w_lc(lc.build(w.w_lc))
                    .with_w_ql(ql.build(w.w_ql))
                    .with_w_tl(tl.build(w.w_tl))
                    .with_w_dp(dp.build(w.w_dp))
                    .with_s_path(sp.build(w.s_path))
                    .with_s_cong(sc.build(w.s_cong))
                    .with_s_total(st.build(w.s_total)),
            )
            .with_delay_shift(ds.build(p.delay_shift))
            .with_trend_shift(ts.build(p.trend_shift))
            .with_high_water(self.high_water.unwrap_or(p.high_water))
            .with_low_water(self.low_water.unwrap_or(p.low_water))
            .with_cut(self.cut.unwrap_or(p.cut))
            .with_ticks_per_second(self.ticks_per_second.unwrap_or(p.ticks_per_second))
            .with_idle_timeout_ticks(match self.idle {
                None => p.idle_timeout_ticks,
                Some(IdleSpec::Zero) => 0,
                Some(IdleSpec::Small(n)) => u32::from(n),
                Some(IdleSpec::Raw(n)) => n,
            })
            .with_pick(if self.weighted {
                Pick::CapacityWeighted
            } else {
                Pick::Hash
            })
        // The cost band is not fuzzed here: the reference model has none
        // (it stays the paper's, 255); nor is the delay unit (the paper's
        // 1 ms at 1 us ticks), so the committed seeds decode as they did.
    }
}

/// A rate or capacity in bits per second.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum RateSpec {
    /// One of the paper's link classes.
    Class(u8),
    /// Whole Gbps.
    Gbps(u16),
    /// Anything (zero included).
    Raw(u64),
}

const CLASSES_GBPS: [u64; 5] = [25, 40, 100, 200, 400];

impl RateSpec {
    /// Bits per second.
    pub fn bps(self) -> u64 {
        match self {
            RateSpec::Class(i) => CLASSES_GBPS[usize::from(i) % CLASSES_GBPS.len()] * 1_000_000_000,
            RateSpec::Gbps(g) => u64::from(g) * 1_000_000_000,
            RateSpec::Raw(n) => n,
        }
    }
}

/// A port configuration.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct PortSpec {
    /// Port id (reduced modulo the port space of the target).
    pub id: u8,
    /// Line rate.
    pub rate: RateSpec,
    /// Buffer: `None` is 5 GB, else raw bytes.
    pub buffer: Option<u64>,
}

/// A candidate.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct CandidateSpec {
    /// Index into the table's port list (so candidates name listed ports).
    pub port: u8,
    /// One-way delay in delay units.
    pub delay: DelaySpec,
    /// Path capacity.
    pub capacity: RateSpec,
}

/// A delay.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum DelaySpec {
    /// `0..=255` units.
    Small(u8),
    /// Anything.
    Raw(u32),
}

/// A route group.
#[derive(Arbitrary, Debug, Clone)]
pub struct GroupSpec {
    /// Group id selector (modulo [`GROUP_SPACE`]).
    pub id: u8,
    /// Candidates (truncated to the group capacity; repeats skipped).
    pub candidates: Vec<CandidateSpec>,
}

/// The level-score table.
#[derive(Arbitrary, Debug, Clone)]
pub enum LevelsSpec {
    /// The paper's ten levels.
    Paper,
    /// `255 * (i + 1) / n` for `n = 1 + k % 16`.
    Linear(u8),
    /// Arbitrary scores, sorted and deduplicated.
    Custom(Vec<u8>),
}

/// The capacity thresholds (one per level).
#[derive(Arbitrary, Debug, Clone)]
pub enum ThresholdsSpec {
    /// `max * (i + 1) / n` with `max` 400 Gbps.
    Paper,
    /// `max * (i + 1) / n` with this `max`.
    Scaled(RateSpec),
    /// Arbitrary values, sorted and deduplicated, padded to the level count.
    Custom(Vec<u64>),
}

/// One deliberate rule violation.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Mangle {
    /// Make two levels equal.
    EqualLevels,
    /// Drop a capacity threshold.
    ShortThresholds,
    /// Repeat the first port.
    DuplicatePort,
    /// A zero line rate.
    ZeroRate,
    /// A candidate naming an unlisted port.
    UnknownPort(u8),
    /// Repeat the first group.
    DuplicateGroup,
    /// Empty the first group.
    EmptyGroup,
    /// Repeat a candidate.
    DuplicateCandidate,
    /// A zero candidate capacity.
    ZeroCapacity,
    /// Low water above high water.
    WaterMarks,
    /// Zero ticks per second.
    ZeroTickRate,
    /// Empty the level table.
    NoLevels,
}

/// Tables to install.
#[derive(Arbitrary, Debug, Clone)]
pub struct TablesSpec {
    /// Scalars.
    pub params: ParamsSpec,
    /// Level scores.
    pub levels: LevelsSpec,
    /// Capacity thresholds.
    pub thresholds: ThresholdsSpec,
    /// Ports (duplicates skipped unless mangled).
    pub ports: Vec<PortSpec>,
    /// Groups (duplicates skipped unless mangled).
    pub groups: Vec<GroupSpec>,
    /// A rule to break, if any.
    pub mangle: Option<Mangle>,
}

fn sorted_dedup<T: Ord + Copy>(v: &[T], max: usize) -> Vec<T> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.dedup();
    v.truncate(max);
    v
}

impl TablesSpec {
    /// Builds the tables. Port ids are taken modulo `port_space`; pass a
    /// value above the decider's port count to reach `PortOutOfRange`.
    pub fn build(&self, port_space: u8) -> Tables {
        let mut t = Tables::paper_defaults();
        t.params = self.params.build();
        let levels: Vec<u8> = match &self.levels {
            LevelsSpec::Paper => DEFAULT_LEVELS.to_vec(),
            LevelsSpec::Linear(k) => {
                let n = 1 + usize::from(*k) % MAX_LEVELS;
                (0..n).map(|i| (255 * (i + 1) / n) as u8).collect()
            }
            LevelsSpec::Custom(v) => sorted_dedup(v, MAX_LEVELS),
        };
        let n = levels.len();
        let thresholds: Vec<u64> = match &self.thresholds {
            ThresholdsSpec::Paper => default_capacity_thresholds(400_000_000_000, n).to_vec(),
            ThresholdsSpec::Scaled(r) => default_capacity_thresholds(r.bps(), n).to_vec(),
            ThresholdsSpec::Custom(v) => {
                let mut v = sorted_dedup(v, n);
                let mut next = v.last().map_or(1, |x| x.saturating_add(1));
                while v.len() < n {
                    v.push(next);
                    next = next.saturating_add(1_000_000_000);
                }
                v
            }
        };
        t.levels = levels.iter().copied().collect();
        t.capacity_thresholds_bps = thresholds.iter().copied().collect();
        let space = port_space.max(1);
        for p in &self.ports {
            let id = PortId(p.id % space);
            if t.ports.iter().any(|q| q.id == id) {
                continue;
            }
            let cfg = PortConfig {
                id,
                rate_bps: p.rate.bps().max(1),
                buffer_bytes: p.buffer.unwrap_or(5_000_000_000).max(1),
            };
            if t.ports.push(cfg).is_err() {
                break;
            }
        }
        for g in &self.groups {
            let id = Event::group(g.id);
            if t.groups.iter().any(|h| h.id == id) || t.ports.is_empty() {
                continue;
            }
            let mut group = Group {
                id,
                candidates: heapless::Vec::new(),
            };
            for c in &g.candidates {
                let port = t.ports[usize::from(c.port) % t.ports.len()].id;
                if group.candidates.iter().any(|k| k.port == port) {
                    continue;
                }
                let cand = Candidate {
                    port,
                    delay_units: match c.delay {
                        DelaySpec::Small(d) => u32::from(d),
                        DelaySpec::Raw(d) => d,
                    },
                    capacity_bps: c.capacity.bps().max(1),
                };
                if group.candidates.push(cand).is_err() {
                    break;
                }
            }
            if group.candidates.is_empty() {
                continue;
            }
            if t.groups.push(group).is_err() {
                break;
            }
        }
        if let Some(m) = self.mangle {
            mangle(&mut t, m);
        }
        t
    }
}

fn mangle(t: &mut Tables, m: Mangle) {
    match m {
        Mangle::EqualLevels => {
            if t.levels.len() >= 2 {
                t.levels[1] = t.levels[0];
            }
        }
        Mangle::ShortThresholds => {
            t.capacity_thresholds_bps.pop();
        }
        Mangle::DuplicatePort => {
            if let Some(p) = t.ports.first().copied() {
                let _ = t.ports.push(p);
            }
        }
        Mangle::ZeroRate => {
            if let Some(p) = t.ports.last_mut() {
                p.rate_bps = 0;
            }
        }
        Mangle::UnknownPort(id) => {
            if let Some(c) = t.groups.first_mut().and_then(|g| g.candidates.first_mut()) {
                c.port = PortId(id);
            }
        }
        Mangle::DuplicateGroup => {
            if let Some(g) = t.groups.first().cloned() {
                let _ = t.groups.push(g);
            }
        }
        Mangle::EmptyGroup => {
            if let Some(g) = t.groups.first_mut() {
                g.candidates.clear();
            }
        }
        Mangle::DuplicateCandidate => {
            if let Some(g) = t.groups.first_mut() {
                if let Some(c) = g.candidates.first().copied() {
                    let _ = g.candidates.push(c);
                }
            }
        }
        Mangle::ZeroCapacity => {
            if let Some(c) = t.groups.last_mut().and_then(|g| g.candidates.last_mut()) {
                c.capacity_bps = 0;
            }
        }
        Mangle::WaterMarks => {
            t.params.low_water = t.params.high_water.saturating_add(1);
        }
        Mangle::ZeroTickRate => t.params.ticks_per_second = 0,
        Mangle::NoLevels => {
            t.levels.clear();
            t.capacity_thresholds_bps.clear();
        }
    }
}

/// Bytes that, as the last field of an input, take the rest of the fuzz
/// input verbatim (a derived `Vec<u8>` interleaves "more?" flags), so raw
/// seeds and libFuzzer's byte-level mutations map straight through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bytes(pub Vec<u8>);

impl<'a> Arbitrary<'a> for Bytes {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        let len = u.arbitrary_len::<u8>()?;
        Ok(Bytes(u.bytes(len)?.to_vec()))
    }

    fn arbitrary_take_rest(u: arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Bytes(u.take_rest().to_vec()))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn scheme_specs_are_the_core_schemes_in_code_order() {
        let specs = [SchemeSpec::Lcmp, SchemeSpec::Ecmp, SchemeSpec::Ucmp];
        let built: Vec<Scheme> = specs.iter().map(|s| s.build()).collect();
        assert_eq!(built, Scheme::ALL);
        for s in specs {
            assert_eq!(format!("{s:?}").to_lowercase(), s.build().name());
        }
        // `arbitrary` picks variant `(u32 * 3) >> 32`: the seeds' layout.
        let top = |x: u32| {
            let bytes = x.to_le_bytes();
            SchemeSpec::arbitrary(&mut arbitrary::Unstructured::new(&bytes))
                .expect("a scheme")
                .build()
        };
        assert_eq!(top(0), Scheme::Lcmp);
        assert_eq!(top(u32::MAX / 2), Scheme::Ecmp);
        assert_eq!(top(u32::MAX), Scheme::Ucmp);
    }
}
