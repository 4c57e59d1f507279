//! The tables a control plane installs (§3.1 "Bootstrap", Fig. 3): level
//! scores, capacity thresholds, per-port link rate and buffer, route groups
//! with per-candidate path attributes, weights and selection settings.
//!
//! [`Tables`] is the plain, serialisable description; [`Tables::compile`]
//! validates it once and precomputes every per-candidate score, so the
//! per-packet path never re-checks anything (validate at the edge).

use heapless::Vec;

use crate::cost::{delay_score, link_cap_score, path_cost, Weights};
use crate::error::{Error, Setting};
use crate::estimator::queue::QueueScale;
use crate::monitor::PortContext;

/// Most levels in a level-score, capacity-threshold or queue-threshold
/// vector (`N <= 16`).
pub const MAX_LEVELS: usize = 16;
/// Most candidates (next hops) in one route group.
pub const MAX_CANDIDATES: usize = 16;
/// Most route groups (destinations) in one table set.
pub const MAX_GROUPS: usize = 64;
/// Most ports in one table set (port ids are `0..MAX_PORTS`).
pub const MAX_PORTS: usize = 64;
/// Group ids below this are found by direct index (one load) on the packet
/// path; larger ids by binary search over at most [`MAX_GROUPS`] groups.
pub const DIRECT_GROUP_IDS: usize = 256;
/// Most explicit queue-threshold tables in one table set (each may serve
/// any number of ports).
pub const MAX_QUEUE_TABLES: usize = 4;

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

/// A port id (`0..MAX_PORTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct PortId(pub u8);

/// A route-group id: the destination (for example a DC number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct GroupId(pub u16);

/// How the final port is picked inside the kept set (§3.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Pick {
    /// `hash % kept.len()`: the paper's ECMP inside the reduced set.
    #[default]
    Hash,
    /// Capacity-weighted (WCMP inside LCMP's reduced set): the hash falls
    /// into the kept candidates' capacity shares. An extension, off by
    /// default; see `docs/simulator.md`.
    CapacityWeighted,
    /// `((hash >> 16) * n) >> 16`: the hash's top 16 bits scaled into
    /// `0..n` (multiply-shift range reduction) instead of `hash % n`, for
    /// every hash pick of the decider (LCMP's kept set, ECMP, UCMP). Each
    /// of `n <= 16` choices gets `floor` or `ceil` of `65536 / n` of the
    /// hash space, within `n / 65536` of an even share. This is what a
    /// Tofino data plane computes with one range-match table (no modulo
    /// unit); see `docs/tofino.md`.
    ScaledHash,
}

/// Scalar settings of the estimators and the selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
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

    /// Validates the tables for a decider with `port_capacity` ports and
    /// precomputes every candidate's `delayScore`, `linkCapScore` and
    /// `C_path`, into a new value. [`Tables::compile_into`] does the same in
    /// place, without a `CompiledTables` (about 19 KiB) on the stack.
    pub fn compile(&self, port_capacity: usize) -> Result<CompiledTables, Error> {
        let mut out = CompiledTables::new();
        self.compile_into(port_capacity, &mut out)?;
        Ok(out)
    }

    /// [`Tables::compile`] into existing memory: validates first
    /// ([`Tables::validate`]); on error `out` is unchanged, on success it is
    /// rebuilt in place (nothing of its previous contents remains). Needs
    /// well under 1 KiB of stack whatever the size of the tables.
    ///
    /// ```
    /// # use lcmp_decide::{GroupId, Tables};
    /// let mut compiled = Tables::paper_defaults().compile(8).unwrap();
    /// let mut bad = Tables::paper_defaults();
    /// bad.levels.clear();
    /// assert!(bad.compile_into(8, &mut compiled).is_err());
    /// assert_eq!(compiled, Tables::paper_defaults().compile(8).unwrap());
    /// ```
    pub fn compile_into(
        &self,
        port_capacity: usize,
        out: &mut CompiledTables,
    ) -> Result<(), Error> {
        self.validate(port_capacity)?;
        self.compile_validated(out);
        Ok(())
    }

    /// The infallible half of [`Tables::compile_into`], for tables that
    /// passed [`Tables::validate`]: rebuilds `out` in place. (On tables that
    /// did not, it still writes something without panicking, but not
    /// anything a decider should run on.)
    pub(crate) fn compile_validated(&self, out: &mut CompiledTables) {
        out.params = self.params;
        out.levels.clone_from(&self.levels);
        out.ports.clear();
        // Same capacity as the source: the extend cannot fail.
        let _ = out.ports.extend_from_slice(&self.ports);
        out.groups.clear();
        // Groups are stored sorted by id: each round takes the smallest id
        // above the last one (ids are unique once validated). At most
        // 64 x 64 comparisons, at install time, with no sort code, no
        // scratch memory and no recursion (a `sort_unstable` of the
        // 280-byte groups cost up to 12 levels of 292-byte frames, of
        // their indices 2.7 KiB of flash; docs/firmware.md, "Stack").
        let mut last: Option<GroupId> = None;
        while let Some(g) = self
            .groups
            .iter()
            .filter(|g| last.is_none_or(|l| g.id > l))
            .min_by_key(|g| g.id)
        {
            last = Some(g.id);
            let mut compiled = CompiledGroup {
                id: g.id,
                candidates: Vec::new(),
                port_mask: 0,
            };
            for c in &g.candidates {
                let ds = delay_score(c.delay_units, self.params.delay_shift);
                let cs =
                    link_cap_score(c.capacity_bps, &self.capacity_thresholds_bps, &self.levels);
                // Same capacity as the source: the push cannot fail.
                let _ = compiled.candidates.push(CompiledCandidate {
                    port: c.port,
                    delay_score: ds,
                    cap_score: cs,
                    c_path: path_cost(ds, cs, &self.params.weights),
                    capacity_bps: c.capacity_bps,
                });
                // Validated ports are below MAX_PORTS = 64, so each has a bit.
                compiled.port_mask |= port_bit(c.port);
            }
            let _ = out.groups.push(compiled);
        }
        out.direct = [0; DIRECT_GROUP_IDS];
        for (i, g) in out.groups.iter().enumerate() {
            if let Some(slot) = out.direct.get_mut(usize::from(g.id.0)) {
                // i < MAX_GROUPS = 64, so i + 1 fits a byte; 0 means absent.
                *slot = u8::try_from(i.saturating_add(1)).unwrap_or(0);
            }
        }
        out.queue_thresholds.clone_from(&self.queue_thresholds);
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

/// Bit `port` of a port set, or 0 for ports of 64 and above.
fn port_bit(port: PortId) -> u64 {
    1u64.checked_shl(u32::from(port.0)).unwrap_or(0)
}

fn strictly_increasing<T: PartialOrd>(v: &[T]) -> bool {
    v.windows(2).all(|w| matches!(w, [a, b] if a < b))
}

/// A candidate with its precomputed path scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CompiledCandidate {
    /// Egress port.
    pub port: PortId,
    /// Alg. 1 score.
    pub delay_score: u8,
    /// Alg. 2 score.
    pub cap_score: u8,
    /// Eq. 2 score.
    pub c_path: u8,
    /// Path capacity, bits per second (UCMP and the weighted pick use it).
    pub capacity_bps: u64,
}

/// A validated route group.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CompiledGroup {
    /// The group's id.
    pub id: GroupId,
    /// Candidates in installation order.
    pub candidates: Vec<CompiledCandidate, MAX_CANDIDATES>,
    /// Bit `p` is set when port `p` is a candidate: the packet path checks a
    /// pin against it in O(1) (a withdrawn candidate's flows are re-decided).
    pub port_mask: u64,
}

impl CompiledGroup {
    /// Whether `port` is one of the group's candidates.
    pub const fn has_candidate(&self, port: PortId) -> bool {
        port.0 < 64 && self.port_mask & (1u64 << port.0) != 0
    }
}

/// Validated tables with precomputed path scores: what a decider runs on.
/// Built only by [`Tables::compile`] and [`Tables::compile_into`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CompiledTables {
    params: Params,
    levels: Vec<u8, MAX_LEVELS>,
    ports: Vec<PortConfig, MAX_PORTS>,
    groups: Vec<CompiledGroup, MAX_GROUPS>,
    /// `direct[id] = index + 1` into `groups` for ids below
    /// [`DIRECT_GROUP_IDS`], 0 when absent.
    direct: [u8; DIRECT_GROUP_IDS],
    queue_thresholds: Vec<QueueThresholds, MAX_QUEUE_TABLES>,
}

impl CompiledTables {
    /// No levels, ports or groups: only ever filled by
    /// [`Tables::compile_validated`] before anyone reads it.
    pub(crate) const fn new() -> Self {
        CompiledTables {
            params: Params::UNSET,
            levels: Vec::new(),
            ports: Vec::new(),
            groups: Vec::new(),
            direct: [0; DIRECT_GROUP_IDS],
            queue_thresholds: Vec::new(),
        }
    }

    /// Back to [`CompiledTables::new`], in place.
    pub(crate) fn clear(&mut self) {
        self.params = Params::UNSET;
        self.levels.clear();
        self.ports.clear();
        self.groups.clear();
        self.direct = [0; DIRECT_GROUP_IDS];
        self.queue_thresholds.clear();
    }

    /// How a port's queue depth maps to levels: its explicit table if one
    /// lists it, else its buffer's `floor(buffer * i / N)`.
    pub fn queue_scale(&self, port: &PortConfig) -> QueueScale<'_> {
        self.queue_thresholds
            .iter()
            .find(|t| t.ports.contains(&port.id))
            .map_or(
                QueueScale::Buffer {
                    bytes: port.buffer_bytes,
                    levels: self.levels.len(),
                },
                |t| QueueScale::Thresholds(&t.bytes),
            )
    }

    /// What a listed port's estimators read (`None`: the port is not in
    /// the tables).
    pub fn port_context(&self, port: PortId) -> Option<PortContext<'_>> {
        let p = self.port(port)?;
        Some(PortContext {
            params: &self.params,
            levels: &self.levels,
            port: p,
            queue: self.queue_scale(p),
        })
    }

    /// Scalar settings.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Level scores.
    pub fn levels(&self) -> &[u8] {
        &self.levels
    }

    /// A port's configuration, if the tables list it.
    pub fn port(&self, port: PortId) -> Option<&PortConfig> {
        self.ports.iter().find(|p| p.id == port)
    }

    /// A group by id: one indexed load for ids below [`DIRECT_GROUP_IDS`],
    /// else a binary search (groups are sorted at compile time).
    #[inline]
    pub fn group(&self, id: GroupId) -> Option<&CompiledGroup> {
        match self.direct.get(usize::from(id.0)) {
            Some(&i) => usize::from(i)
                .checked_sub(1)
                .and_then(|i| self.groups.get(i)),
            None => self
                .groups
                .binary_search_by_key(&id, |g| g.id)
                .ok()
                .and_then(|i| self.groups.get(i)),
        }
    }

    /// Whether `port` is a candidate of group `id` (false when the group is
    /// not installed): the pin check of the packet path.
    #[inline]
    pub fn is_candidate(&self, id: GroupId, port: PortId) -> bool {
        self.group(id).is_some_and(|g| g.has_candidate(port))
    }

    /// All groups, sorted by id.
    pub fn groups(&self) -> &[CompiledGroup] {
        &self.groups
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn tables() -> Tables {
        let mut t = Tables::paper_defaults();
        for i in 0..3 {
            let _ = t.ports.push(PortConfig {
                id: PortId(i),
                rate_bps: 100_000_000_000,
                buffer_bytes: 1 << 30,
            });
        }
        let mut g = Group {
            id: GroupId(8),
            candidates: Vec::new(),
        };
        let _ = g.candidates.push(Candidate {
            port: PortId(0),
            delay_units: 5,
            capacity_bps: 25_000_000_000,
        });
        let _ = g.candidates.push(Candidate {
            port: PortId(1),
            delay_units: 10,
            capacity_bps: 100_000_000_000,
        });
        let _ = t.groups.push(g);
        t
    }

    #[test]
    fn compiles_paper_scores() {
        let c = tables().compile(8).expect("valid");
        let g = c.group(GroupId(8)).expect("group");
        let got: std::vec::Vec<_> = g
            .candidates
            .iter()
            .map(|c| (c.delay_score, c.cap_score, c.c_path))
            .collect();
        assert_eq!(got, [(39, 255, 93), (79, 204, 110)]);
        assert!(c.group(GroupId(1)).is_none());
    }

    #[test]
    fn group_lookup_and_candidate_mask() {
        let mut t = tables();
        // A large id (binary-search path) beside the direct-indexed 8.
        let mut g = t.groups[0].clone();
        g.id = GroupId(4000);
        g.candidates.truncate(1);
        let _ = t.groups.push(g);
        let c = t.compile(8).expect("valid");
        assert_eq!(c.group(GroupId(8)).map(|g| g.port_mask), Some(0b11));
        assert_eq!(c.group(GroupId(4000)).map(|g| g.port_mask), Some(0b01));
        for id in [0u16, 7, 9, 255, 256, 3999, 4001, u16::MAX] {
            assert!(c.group(GroupId(id)).is_none(), "group {id}");
        }
        assert!(c.is_candidate(GroupId(8), PortId(1)));
        assert!(
            !c.is_candidate(GroupId(8), PortId(2)),
            "port 2 is listed, not a candidate"
        );
        assert!(!c.is_candidate(GroupId(4000), PortId(1)));
        assert!(!c.is_candidate(GroupId(9), PortId(0)), "unknown group");
        assert!(!c.is_candidate(GroupId(8), PortId(200)));
    }

    #[test]
    fn rejects_each_invalid_table() {
        let mut t = tables();
        t.groups[0].candidates[0].port = PortId(7);
        assert_eq!(t.compile(8), Err(Error::UnknownPort { group: 8, port: 7 }));

        let mut t = tables();
        t.groups[0].candidates[1].port = PortId(0);
        assert_eq!(
            t.compile(8),
            Err(Error::DuplicateCandidate { group: 8, port: 0 })
        );

        let mut t = tables();
        let g = t.groups[0].clone();
        let _ = t.groups.push(g);
        assert_eq!(t.compile(8), Err(Error::DuplicateGroup(8)));

        let mut t = tables();
        t.groups[0].candidates.clear();
        assert_eq!(t.compile(8), Err(Error::EmptyGroup(8)));

        let mut t = tables();
        t.groups[0].candidates[0].capacity_bps = 0;
        assert_eq!(t.compile(8), Err(Error::ZeroCapacity { group: 8, port: 0 }));

        let mut t = tables();
        t.ports[1].id = PortId(0);
        assert_eq!(t.compile(8), Err(Error::DuplicatePort(0)));

        let mut t = tables();
        t.ports[2].rate_bps = 0;
        assert_eq!(t.compile(8), Err(Error::ZeroPortCapacity(2)));

        assert_eq!(tables().compile(2), Err(Error::PortOutOfRange(2)));

        let mut t = tables();
        t.levels[3] = t.levels[2];
        assert_eq!(t.compile(8), Err(Error::InvalidLevels));

        let mut t = tables();
        t.capacity_thresholds_bps.pop();
        assert_eq!(t.compile(8), Err(Error::InvalidCapacityThresholds));

        let mut t = tables();
        t.params.weights.s_cong = 40;
        assert_eq!(
            t.compile(8),
            Err(Error::ShiftTooLarge(Setting::CongestionShift))
        );

        let mut t = tables();
        t.params.low_water = 250;
        assert_eq!(
            t.compile(8),
            Err(Error::InvalidSetting(Setting::WaterMarks))
        );
    }
}
