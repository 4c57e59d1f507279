//! The plain, serialisable description a control plane installs, and its
//! validation (validate at the edge: nothing after this re-checks).

use heapless::Vec;

use super::ids::*;

use crate::cost::Weights;
use crate::error::{Error, Setting};

/// The paper's level scores `255 * (i + 1) / N` for `N = 10` (Fig. 3).
pub const DEFAULT_LEVELS: [u8; 10] = default_levels::<10>();

/// `level[i] = 255 * (i + 1) / N`.
///
/// ```
/// # use lcmp_decide::tables::default_levels;
/// assert_eq!(default_levels::<4>(), [63, 127, 191, 255]);
/// ```
// Evaluated at compile time for `DEFAULT_LEVELS`; `i < N` bounds the index
// and `255 * (i + 1) / N <= 255`.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub const fn default_levels<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        // (i + 1) <= N, so the quotient is at most 255.
        out[i] = (255 * (i + 1) / N) as u8;
        i += 1;
    }
    out
}

/// `thr[i] = max_cap * (i + 1) / N` (§3.1, Alg. 2's default thresholds),
/// exact in `u128`, for `n <= MAX_LEVELS` (longer requests are truncated).
///
/// ```
/// # use lcmp_decide::tables::default_capacity_thresholds;
/// let thr = default_capacity_thresholds(400, 10);
/// assert_eq!(&thr[..], &[40, 80, 120, 160, 200, 240, 280, 320, 360, 400]);
/// ```
pub fn default_capacity_thresholds(max_cap: u64, n: usize) -> Vec<u64, MAX_LEVELS> {
    let n = n.min(MAX_LEVELS);
    (0..n)
        .map(|i| {
            let scaled = u128::from(max_cap).saturating_mul((i as u128).saturating_add(1));
            // i + 1 <= n, so the quotient is at most max_cap.
            scaled.checked_div(n as u128).unwrap_or(0) as u64
        })
        .collect()
}

/// How the final port is picked inside the kept set (§3.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Pick {
    /// `hash % kept.len()`: the paper's ECMP inside the reduced set.
    #[default]
    #[cfg_attr(feature = "serde", serde(alias = "Hash"))]
    Hash,
    /// Capacity-weighted (WCMP inside LCMP's reduced set): the hash falls
    /// into the kept candidates' capacity shares. An extension, off by
    /// default; see `docs/simulator.md`.
    #[cfg_attr(feature = "serde", serde(alias = "CapacityWeighted"))]
    CapacityWeighted,
    /// `((hash >> 16) * n) >> 16`: the hash's top 16 bits scaled into
    /// `0..n` (multiply-shift range reduction) instead of `hash % n`, for
    /// every hash pick of the decider (LCMP's kept set, ECMP, UCMP). Each
    /// of `n <= 16` choices gets `floor` or `ceil` of `65536 / n` of the
    /// hash space, within `n / 65536` of an even share. This is what a
    /// Tofino data plane computes with one range-match table (no modulo
    /// unit); see `docs/tofino.md`.
    #[cfg_attr(feature = "serde", serde(alias = "ScaledHash"))]
    ScaledHash,
}

/// Scalar settings of the estimators and the selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Params {
    /// Weights and shifts of Eq. 1, 2, 4-5.
    pub weights: Weights,
    /// Alg. 1 saturation shift `s` (delays of `1 << s` units score 255).
    pub delay_shift: u8,
    /// `K` of Eq. 3.
    pub trend_shift: u8,
    /// Queue score at or above which the duration counter rises (80 %).
    pub high_water: u8,
    /// Queue score at or below which the duration counter decays (40 %).
    pub low_water: u8,
    /// Candidates whose fused cost is at or above this are cut (§3.4).
    pub cut: u8,
    /// Ticks in one second, for the trend normalisation.
    pub ticks_per_second: u32,
    /// A flow idle for longer than this many ticks is forgotten.
    pub idle_timeout_ticks: u32,
    /// How the final port is picked in the kept set.
    pub pick: Pick,
    /// The cost band: candidates whose fused cost exceeds the lowest live
    /// cost by more than this are cut too, after the half and the cut of
    /// §3.4 (an extension; 255, the default, cuts nothing, since every
    /// cost is at most 255).
    pub band: u8,
    /// Ticks in one unit of [`Candidate::delay_units`] (1 000: 1 ms units
    /// at 1 µs ticks). With it the decider knows how long a packet can
    /// still be in flight on a path, and reuses the flow-cache entry of a
    /// flow that has been idle longer than that before the idle timeout
    /// (docs/design.md, "The in-order promise"). 0: the unit is unknown,
    /// and no entry is reused before the idle timeout.
    // The blob's wire structs in lcmp-tables carry it from format 3 on;
    // serde (JSON) defaults it to 0 when absent.
    #[cfg_attr(feature = "serde", serde(default))]
    pub delay_unit_ticks: u32,
}

impl Params {
    /// The paper's defaults, with 1 µs ticks and a 2 s idle timeout.
    pub const PAPER: Params = Params {
        weights: Weights::PAPER,
        delay_shift: 5,
        trend_shift: 3,
        high_water: 204,
        low_water: 102,
        cut: 204,
        ticks_per_second: 1_000_000,
        idle_timeout_ticks: 2_000_000,
        pick: Pick::Hash,
        band: u8::MAX,
        delay_unit_ticks: 1_000,
    };

    /// All zero: the placeholder of a decider with no tables (never used to
    /// decide; zero bytes keep an empty decider in `.bss`).
    pub(crate) const UNSET: Params = Params {
        weights: Weights {
            alpha: 0,
            beta: 0,
            w_dl: 0,
            w_lc: 0,
            w_ql: 0,
            w_tl: 0,
            w_dp: 0,
            s_path: 0,
            s_cong: 0,
            s_total: 0,
        },
        delay_shift: 0,
        trend_shift: 0,
        high_water: 0,
        low_water: 0,
        cut: 0,
        ticks_per_second: 0,
        idle_timeout_ticks: 0,
        pick: Pick::Hash,
        band: 0,
        delay_unit_ticks: 0,
    };

    /// Checks shifts, weights, water marks and the tick rate.
    pub const fn validate(&self) -> Result<(), Error> {
        if let Err(e) = self.weights.validate() {
            return Err(e);
        }
        if self.delay_shift >= 32 {
            return Err(Error::ShiftTooLarge(Setting::DelayShift));
        }
        if self.trend_shift >= 64 {
            return Err(Error::ShiftTooLarge(Setting::TrendShift));
        }
        if self.low_water > self.high_water {
            return Err(Error::InvalidSetting(Setting::WaterMarks));
        }
        if self.ticks_per_second == 0 {
            return Err(Error::InvalidSetting(Setting::TicksPerSecond));
        }
        Ok(())
    }
}

with_setters!(Params {
    weights: Weights => with_weights,
    delay_shift: u8 => with_delay_shift,
    trend_shift: u8 => with_trend_shift,
    high_water: u8 => with_high_water,
    low_water: u8 => with_low_water,
    cut: u8 => with_cut,
    ticks_per_second: u32 => with_ticks_per_second,
    idle_timeout_ticks: u32 => with_idle_timeout_ticks,
    pick: Pick => with_pick,
    band: u8 => with_band,
    delay_unit_ticks: u32 => with_delay_unit_ticks,
});

impl Default for Params {
    fn default() -> Self {
        Params::PAPER
    }
}

/// A DCI egress port: its line rate and buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PortConfig {
    /// The port.
    pub id: PortId,
    /// Line rate, bits per second (normalises the trend).
    pub rate_bps: u64,
    /// Egress buffer, bytes (sets the queue thresholds).
    pub buffer_bytes: u64,
}

/// One candidate next hop of a route group and its path attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Candidate {
    /// Egress port.
    pub port: PortId,
    /// One-way delay in the control plane's delay unit (default 1 ms).
    pub delay_units: u32,
    /// Path capacity, bits per second (the bottleneck for the `path` metric).
    pub capacity_bps: u64,
}

/// Explicit queue thresholds for a set of ports (§3.1 "Bootstrap": the
/// threshold vectors a control plane installs; a switch holds them as a
/// range table on queue depth). Ports without a table use
/// `floor(buffer * i / N)` (Fig. 3).
///
/// ```
/// # use lcmp_decide::tables::QueueThresholds;
/// # use lcmp_decide::PortId;
/// let mut t = QueueThresholds::default();
/// t.ports.push(PortId(4)).unwrap();
/// for b in [0, 1_000, 5_000] { t.bytes.push(b).unwrap(); }
/// assert!(t.is_non_decreasing());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct QueueThresholds {
    /// The ports the table applies to.
    pub ports: Vec<PortId, MAX_PORTS>,
    /// `qthr[0..N]`, bytes, non-decreasing, one per level: a non-empty
    /// depth has the highest level `i` with `depth >= qthr[i]`.
    pub bytes: Vec<u64, MAX_LEVELS>,
}

impl QueueThresholds {
    /// Whether the thresholds never decrease.
    pub fn is_non_decreasing(&self) -> bool {
        self.bytes.windows(2).all(|w| matches!(w, [a, b] if a <= b))
    }
}

/// A route group: the candidate next hops towards one destination.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Group {
    /// The group's id (the destination).
    pub id: GroupId,
    /// Candidates, in installation order (the ECMP order).
    pub candidates: Vec<Candidate, MAX_CANDIDATES>,
}

/// Everything a control plane installs into a decider.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Tables {
    /// Scalar settings.
    pub params: Params,
    /// Level-score table `level[0..N]`, strictly increasing.
    pub levels: Vec<u8, MAX_LEVELS>,
    /// Capacity thresholds `thr[0..N]` (bits per second), strictly increasing.
    pub capacity_thresholds_bps: Vec<u64, MAX_LEVELS>,
    /// The ports the groups use.
    pub ports: Vec<PortConfig, MAX_PORTS>,
    /// Route groups.
    pub groups: Vec<Group, MAX_GROUPS>,
    /// Explicit queue thresholds of some ports (none: every port uses its
    /// buffer's).
    pub queue_thresholds: Vec<QueueThresholds, MAX_QUEUE_TABLES>,
}

impl Tables {
    /// Tables with the paper's defaults (`N = 10`, 400 Gbps top class) and
    /// no ports or groups yet.
    ///
    /// ```
    /// # use lcmp_decide::Tables;
    /// let t = Tables::paper_defaults();
    /// assert_eq!(&t.levels[..], &[25, 51, 76, 102, 127, 153, 178, 204, 229, 255]);
    /// ```
    pub fn paper_defaults() -> Self {
        Tables {
            params: Params::PAPER,
            levels: DEFAULT_LEVELS.iter().copied().collect(),
            capacity_thresholds_bps: default_capacity_thresholds(400_000_000_000, 10),
            ports: Vec::new(),
            groups: Vec::new(),
            queue_thresholds: Vec::new(),
        }
    }

    /// Empty tables: the paper's [`Params`] and no levels, thresholds, ports
    /// or groups. Not installable as they are (no levels); a `const`
    /// starting point for memory that a decoder fills in place, such as a
    /// `static` or a scratch area next to a decider, so that no `Tables`
    /// (about 19 KiB) is ever built on the stack.
    ///
    /// ```
    /// # use lcmp_decide::Tables;
    /// static SCRATCH: Tables = Tables::new();
    /// assert!(SCRATCH.groups.is_empty() && SCRATCH.validate(8).is_err());
    /// ```
    pub const fn new() -> Self {
        Tables {
            params: Params::PAPER,
            levels: Vec::new(),
            capacity_thresholds_bps: Vec::new(),
            ports: Vec::new(),
            groups: Vec::new(),
            queue_thresholds: Vec::new(),
        }
    }

    /// [`Tables::validate`] for the largest decider ([`MAX_PORTS`] ports),
    /// once, at the edge: the proof that it passed, which
    /// [`ValidTables::compile_into`] and `DeciderWith::install_valid` take
    /// without checking again (smoltcp validates a packet once and hands
    /// out a type that says so). `lcmp_tables`' decoders return it.
    ///
    /// ```
    /// # use lcmp_decide::{Error, Tables};
    /// let t = Tables::paper_defaults();
    /// let valid = t.validated().unwrap();
    /// assert_eq!(valid.tables(), &t);
    /// let mut bad = Tables::paper_defaults();
    /// bad.levels.clear();
    /// assert_eq!(bad.validated().map(|_| ()), Err(Error::InvalidLevels));
    /// ```
    pub fn validated(&self) -> Result<ValidTables<'_>, Error> {
        self.validate(MAX_PORTS)?;
        Ok(ValidTables { tables: self })
    }

    /// Checks everything [`Tables::compile`] checks, for a decider with
    /// `port_capacity` ports, without building anything: O(1) extra memory
    /// (a few words of stack), so it is the step that may fail before an
    /// in-place install.
    ///
    /// Errors, in this order: the [`Params`] checks; [`Error::InvalidLevels`];
    /// [`Error::InvalidCapacityThresholds`]; then per port, in order,
    /// [`Error::PortOutOfRange`], [`Error::DuplicatePort`],
    /// [`Error::ZeroPortCapacity`]; then per group, in order,
    /// [`Error::DuplicateGroup`], [`Error::EmptyGroup`] and per candidate
    /// [`Error::UnknownPort`], [`Error::DuplicateCandidate`],
    /// [`Error::ZeroCapacity`].
    ///
    /// ```
    /// # use lcmp_decide::{Error, Tables};
    /// let mut t = Tables::paper_defaults();
    /// assert_eq!(t.validate(8), Ok(()));
    /// t.levels.clear();
    /// assert_eq!(t.validate(8), Err(Error::InvalidLevels));
    /// ```
    pub fn validate(&self, port_capacity: usize) -> Result<(), Error> {
        self.params.validate()?;
        if self.levels.is_empty() || !strictly_increasing(&self.levels) {
            return Err(Error::InvalidLevels);
        }
        if self.capacity_thresholds_bps.len() != self.levels.len()
            || !strictly_increasing(&self.capacity_thresholds_bps)
        {
            return Err(Error::InvalidCapacityThresholds);
        }
        // Listed ports are below MAX_PORTS = 64 once range-checked, so a
        // bit set of them replaces the list the compiled tables keep.
        let mut listed = 0u64;
        for p in &self.ports {
            if usize::from(p.id.0) >= port_capacity.min(MAX_PORTS) {
                return Err(Error::PortOutOfRange(p.id.0));
            }
            if listed & port_bit(p.id) != 0 {
                return Err(Error::DuplicatePort(p.id.0));
            }
            if p.rate_bps == 0 || p.buffer_bytes == 0 {
                return Err(Error::ZeroPortCapacity(p.id.0));
            }
            listed |= port_bit(p.id);
        }
        for (i, g) in self.groups.iter().enumerate() {
            let earlier = self.groups.get(..i).unwrap_or(&[]);
            if earlier.iter().any(|h| h.id == g.id) {
                return Err(Error::DuplicateGroup(g.id.0));
            }
            if g.candidates.is_empty() {
                return Err(Error::EmptyGroup(g.id.0));
            }
            let mut seen = 0u64;
            for c in &g.candidates {
                let (group, port) = (g.id.0, c.port.0);
                // A port id of 64 or more has no bit: never listed.
                if listed & port_bit(c.port) == 0 {
                    return Err(Error::UnknownPort { group, port });
                }
                if seen & port_bit(c.port) != 0 {
                    return Err(Error::DuplicateCandidate { group, port });
                }
                if c.capacity_bps == 0 {
                    return Err(Error::ZeroCapacity { group, port });
                }
                seen |= port_bit(c.port);
            }
        }
        self.check_queue_thresholds(&self.ports)
    }

    /// Every explicit queue-threshold table has one non-decreasing entry
    /// per level and names listed ports, each port in at most one table.
    fn check_queue_thresholds(&self, ports: &[PortConfig]) -> Result<(), Error> {
        for (i, t) in self.queue_thresholds.iter().enumerate() {
            if t.bytes.len() != self.levels.len() || !t.is_non_decreasing() {
                return Err(Error::InvalidQueueThresholds);
            }
            for p in &t.ports {
                if !ports.iter().any(|q| q.id == *p) {
                    return Err(Error::QueueThresholdsPort(p.0));
                }
                let earlier = self.queue_thresholds.iter().take(i);
                let repeated = t.ports.iter().filter(|q| *q == p).count() > 1;
                if repeated || earlier.flat_map(|e| e.ports.iter()).any(|q| q == p) {
                    return Err(Error::QueueThresholdsPort(p.0));
                }
            }
        }
        Ok(())
    }
}

impl Default for Tables {
    /// [`Tables::new`].
    fn default() -> Self {
        Tables::new()
    }
}

fn strictly_increasing<T: PartialOrd>(v: &[T]) -> bool {
    v.windows(2).all(|w| matches!(w, [a, b] if a < b))
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn water_marks_may_be_equal_not_crossed() {
        let mut p = Params::PAPER;
        p.low_water = p.high_water;
        assert_eq!(p.validate(), Ok(()));
        p.low_water = p.high_water.saturating_add(1);
        assert_eq!(
            p.validate(),
            Err(Error::InvalidSetting(Setting::WaterMarks))
        );
    }

    fn thresholds(ports: &[u8], bytes: &[u64]) -> QueueThresholds {
        let mut t = QueueThresholds::default();
        for &p in ports {
            let _ = t.ports.push(PortId(p));
        }
        for &b in bytes {
            let _ = t.bytes.push(b);
        }
        t
    }

    #[test]
    fn non_decreasing_allows_equal_steps() {
        assert!(thresholds(&[], &[0, 1_000, 1_000, 5_000]).is_non_decreasing());
        assert!(!thresholds(&[], &[0, 5_000, 1_000]).is_non_decreasing());
        assert!(thresholds(&[], &[]).is_non_decreasing());
    }

    /// Paper defaults with ports 0-3 and `tables` as the explicit
    /// queue-threshold tables.
    fn with_queue_tables(tables: &[QueueThresholds]) -> Tables {
        let mut t = crate::tables::paper_with_ports(4, 1_000_000_000, 1 << 20);
        for q in tables {
            let _ = t.queue_thresholds.push(q.clone());
        }
        t
    }

    #[test]
    fn queue_threshold_tables_are_checked() {
        let ten: std::vec::Vec<u64> = (0..10).map(|i| i * 1_000).collect();
        let ok = |t: &[QueueThresholds]| with_queue_tables(t).validate(8);
        assert_eq!(
            ok(&[thresholds(&[0, 1], &ten), thresholds(&[2], &ten)]),
            Ok(())
        );
        assert_eq!(
            ok(&[thresholds(&[0], &ten[..9])]),
            Err(Error::InvalidQueueThresholds),
            "one entry per level"
        );
        let mut down = ten.clone();
        down.swap(3, 4);
        assert_eq!(
            ok(&[thresholds(&[0], &down)]),
            Err(Error::InvalidQueueThresholds),
            "decreasing"
        );
        assert_eq!(
            ok(&[thresholds(&[0, 7], &ten)]),
            Err(Error::QueueThresholdsPort(7)),
            "a port not in the port list"
        );
        assert_eq!(
            ok(&[thresholds(&[1, 1], &ten)]),
            Err(Error::QueueThresholdsPort(1)),
            "twice in one table"
        );
        assert_eq!(
            ok(&[thresholds(&[0, 2], &ten), thresholds(&[1, 2], &ten)]),
            Err(Error::QueueThresholdsPort(2)),
            "in two tables"
        );
    }
}

/// Tables that passed [`Tables::validate`] for a decider of [`MAX_PORTS`]
/// ports ([`Tables::validated`]): a borrow, so that tables decoded into
/// caller memory are never copied. Installing them
/// ([`ValidTables::compile_into`], `DeciderWith::install_valid`) checks
/// only that their ports fit the decider, the one property that depends
/// on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValidTables<'a> {
    tables: &'a Tables,
}

impl<'a> ValidTables<'a> {
    /// The tables.
    pub fn tables(&self) -> &'a Tables {
        self.tables
    }

    /// `Ok` if every port of the tables is below `port_capacity`, else
    /// [`Error::PortOutOfRange`] of the first one that is not (in list
    /// order): what [`Tables::validate`]`(port_capacity)` adds to
    /// [`Tables::validated`], so that the two give the same answer.
    ///
    /// ```
    /// # use lcmp_decide::{Error, PortConfig, PortId, Tables};
    /// let mut t = Tables::paper_defaults();
    /// for id in [3, 9, 5] {
    ///     let port = PortConfig { id: PortId(id), rate_bps: 1, buffer_bytes: 1 };
    ///     t.ports.push(port).unwrap();
    /// }
    /// let valid = t.validated().unwrap();
    /// assert_eq!(valid.fits(10), Ok(()));
    /// assert_eq!(valid.fits(9), Err(Error::PortOutOfRange(9)));
    /// assert_eq!(valid.fits(4), Err(Error::PortOutOfRange(9)));
    /// assert_eq!(valid.fits(4), t.validate(4));
    /// ```
    pub fn fits(&self, port_capacity: usize) -> Result<(), Error> {
        match self
            .tables
            .ports
            .iter()
            .find(|p| usize::from(p.id.0) >= port_capacity)
        {
            Some(p) => Err(Error::PortOutOfRange(p.id.0)),
            None => Ok(()),
        }
    }
}
