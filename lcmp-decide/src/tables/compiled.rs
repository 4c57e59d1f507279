//! The compiled form a decider runs on: validated tables with every
//! per-candidate score precomputed, a direct group index and per-port
//! contexts for the estimators.

use heapless::Vec;

// The description's types compile into this module's; the description
// imports nothing back (one direction, as the layers above the core).
use super::description::{Params, PortConfig, QueueThresholds, Tables, ValidTables};
use super::ids::*;
use crate::cost::{delay_score, link_cap_score, path_cost};
use crate::estimator::queue::QueueScale;
use crate::Error;

impl Tables {
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
}

impl ValidTables<'_> {
    /// [`Tables::compile_into`] of tables validated once at the edge:
    /// checks only that their ports fit a decider of `port_capacity` ports
    /// ([`ValidTables::fits`]; on error `out` is unchanged), then compiles
    /// in place. The same result as [`Tables::compile_into`] of the same
    /// tables, without validating them again.
    ///
    /// ```
    /// # use lcmp_decide::{tables::CompiledTables, Tables};
    /// let t = Tables::paper_defaults();
    /// let mut out = CompiledTables::new();
    /// t.validated().unwrap().compile_into(8, &mut out).unwrap();
    /// assert_eq!(out, t.compile(8).unwrap());
    /// ```
    pub fn compile_into(self, port_capacity: usize, out: &mut CompiledTables) -> Result<(), Error> {
        self.fits(port_capacity)?;
        self.tables().compile_validated(out);
        Ok(())
    }
}

impl Tables {
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
        // One round a group, so the loop is bounded even on input that
        // skipped validation.
        let mut last: Option<GroupId> = None;
        for _ in 0..self.groups.len() {
            let Some(g) = self
                .groups
                .iter()
                .filter(|g| last.is_none_or(|l| g.id > l))
                .min_by_key(|g| g.id)
            else {
                break;
            };
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
                    delay_units: c.delay_units,
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
}

/// What a port's estimators read from the installed tables: the scalar
/// settings, the level scores, the port and its queue scale. Built by
/// [`CompiledTables::port_context`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortContext<'a> {
    /// Scalar settings (weights, trend shift, water marks, tick rate).
    pub params: &'a Params,
    /// Level scores `level[0..N]`.
    pub levels: &'a [u8],
    /// The port's rate and buffer.
    pub port: &'a PortConfig,
    /// How the port's queue depth maps to levels.
    pub queue: QueueScale<'a>,
}

/// A candidate with its precomputed path scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CompiledCandidate {
    /// Egress port.
    pub port: PortId,
    /// One-way delay in the tables' delay unit (for the reorder window).
    pub delay_units: u32,
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
/// Built only by [`Tables::compile`] and [`Tables::compile_into`] (the
/// latter into a [`CompiledTables::new`] placeholder in the caller's
/// memory). Immutable once compiled, so several deciders may read one
/// (`DeciderWith::use_tables`).
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

impl Default for CompiledTables {
    /// [`CompiledTables::new`]: the empty placeholder.
    fn default() -> Self {
        CompiledTables::new()
    }
}

impl CompiledTables {
    /// An empty placeholder (no levels, ports or groups) for
    /// [`Tables::compile_into`] to fill, so that shared tables can be
    /// compiled in place, in a `static` or in memory a C caller provides,
    /// never through a 20.6 KB stack temporary. A decider refuses it until
    /// it is compiled (`use_tables`: [`Error::InvalidLevels`]).
    ///
    /// ```
    /// # use lcmp_decide::{tables::CompiledTables, Tables};
    /// const EMPTY: CompiledTables = CompiledTables::new(); // `static`-ready
    /// let mut compiled = CompiledTables::new();
    /// Tables::paper_defaults().compile_into(8, &mut compiled).unwrap();
    /// assert_eq!(compiled.levels(), &Tables::paper_defaults().levels[..]);
    /// ```
    pub const fn new() -> Self {
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

    /// Whether a decider with `ports` ports can run these tables: every
    /// listed port is below `ports` ([`Error::PortOutOfRange`] with the first
    /// that is not), and the tables were compiled at all
    /// ([`Error::InvalidLevels`] for the [`CompiledTables::new`]
    /// placeholder: compiled tables always have levels).
    ///
    /// ```
    /// # use lcmp_decide::{Error, Tables};
    /// let compiled = Tables::paper_defaults().compile(8).unwrap();
    /// assert_eq!(compiled.check_fits(8), Ok(()));
    /// ```
    pub fn check_fits(&self, ports: usize) -> Result<(), Error> {
        if self.levels.is_empty() {
            return Err(Error::InvalidLevels);
        }
        match self.ports.iter().find(|p| usize::from(p.id.0) >= ports) {
            Some(p) => Err(Error::PortOutOfRange(p.id.0)),
            None => Ok(()),
        }
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

    /// The reorder window of `port`, ticks: the largest `delay(port) -
    /// min delay` over the groups the port is a candidate of, so that a
    /// packet sent on `port` arrives at most this much later than one sent
    /// at the same time on any candidate of its group (queueing aside).
    /// `None` when the tables do not say the delay unit
    /// ([`Params::delay_unit_ticks`] 0: no window is known, so no entry is
    /// reused early); `Some(0)` for a port no group uses; a window too long
    /// for `u32` saturates. Install-time work: one pass over the groups.
    pub fn reorder_window_ticks(&self, port: PortId) -> Option<u32> {
        let unit = self.params.delay_unit_ticks;
        if unit == 0 {
            return None;
        }
        let mut window = 0u32;
        for g in &self.groups {
            let Some(own) = g.candidates.iter().find(|c| c.port == port) else {
                continue;
            };
            let min = g
                .candidates
                .iter()
                .map(|c| c.delay_units)
                .min()
                .unwrap_or(own.delay_units);
            window = window.max(own.delay_units.saturating_sub(min));
        }
        Some(u32::try_from(u64::from(window).saturating_mul(u64::from(unit))).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::tables::{Candidate, Group, Tables};

    /// Ports 0-2; group 1 over ports 0 (5 units) and 1 (12), group 2 over
    /// ports 1 (3) and 2 (10); installed in the order 2, 1.
    fn two_groups() -> Tables {
        let mut t = crate::tables::paper_with_ports(3, 100_000_000_000, 1 << 20);
        for (id, cands) in [(2u16, [(1u8, 3u32), (2, 10)]), (1, [(0, 5), (1, 12)])] {
            let mut g = Group {
                id: GroupId(id),
                candidates: Vec::new(),
            };
            for (port, delay_units) in cands {
                let _ = g.candidates.push(Candidate {
                    port: PortId(port),
                    delay_units,
                    capacity_bps: 100_000_000_000,
                });
            }
            let _ = t.groups.push(g);
        }
        t
    }

    /// Tables over the ports `ids` (in that order, the first 16 kept),
    /// one group over all of them.
    fn over_ports(ids: &[u8]) -> Tables {
        let mut t = Tables::paper_defaults();
        let mut g = Group {
            id: GroupId(3),
            candidates: Vec::new(),
        };
        for &id in ids.iter().take(MAX_CANDIDATES) {
            let _ = t.ports.push(PortConfig {
                id: PortId(id),
                rate_bps: 100_000_000_000,
                buffer_bytes: 1 << 20,
            });
            let _ = g.candidates.push(Candidate {
                port: PortId(id),
                delay_units: u32::from(id),
                capacity_bps: 100_000_000_000,
            });
        }
        let _ = t.groups.push(g);
        t
    }

    quickcheck::quickcheck! {
        /// Validated once at the edge, then installed into a decider of
        /// any size: the same answer and the same compiled tables as
        /// validating for that size (item 4 of issue 34: one validation,
        /// no change of behaviour).
        fn validated_then_fitted_is_validate(ids: std::vec::Vec<u8>, cap: u8) -> bool {
            // Distinct ids below 64, so that most cases are valid tables.
            let mut distinct = std::vec::Vec::new();
            for id in ids.iter().map(|id| id % 64) {
                if !distinct.contains(&id) {
                    distinct.push(id);
                }
            }
            let t = over_ports(&distinct);
            let cap = usize::from(cap % 72);
            let Ok(valid) = t.validated() else {
                return t.validate(MAX_PORTS).is_err();
            };
            let (mut a, mut b) = (CompiledTables::new(), CompiledTables::new());
            let (ra, rb) = (valid.compile_into(cap, &mut a), t.compile_into(cap, &mut b));
            valid.fits(cap) == t.validate(cap) && ra == rb && a == b
        }
    }

    #[test]
    fn fits_names_the_first_port_out_of_range() {
        let t = over_ports(&[4, 60, 9, 63]);
        let valid = t.validated().expect("valid");
        assert_eq!(valid.fits(64), Ok(()));
        assert_eq!(valid.fits(61), Err(Error::PortOutOfRange(63)));
        assert_eq!(valid.fits(60), Err(Error::PortOutOfRange(60)));
        assert_eq!(valid.fits(10), Err(Error::PortOutOfRange(60)));
        assert_eq!(valid.fits(5), Err(Error::PortOutOfRange(60)));
        assert_eq!(valid.fits(4), Err(Error::PortOutOfRange(4)));
        assert_eq!(valid.fits(0), Err(Error::PortOutOfRange(4)));
        // On error the compiled tables are unchanged.
        let mut out = t.compile(64).expect("valid");
        let before = out.clone();
        assert_eq!(
            valid.compile_into(9, &mut out),
            Err(Error::PortOutOfRange(60))
        );
        assert_eq!(out, before);
        let mut bad = t.clone();
        bad.levels.clear();
        assert_eq!(bad.validated(), Err(Error::InvalidLevels));
    }

    #[test]
    fn groups_are_compiled_once_each_sorted_by_id() {
        let c = two_groups().compile(8).expect("valid");
        let ids: std::vec::Vec<u16> = c.groups().iter().map(|g| g.id.0).collect();
        assert_eq!(ids, [1, 2]);
        let g1 = &c.groups()[0];
        assert!(g1.has_candidate(PortId(0)) && g1.has_candidate(PortId(1)));
        assert!(!g1.has_candidate(PortId(2)));
        // Ports past the mask's 64 bits are no candidate (and no overflow).
        assert!(!g1.has_candidate(PortId(64)) && !g1.has_candidate(PortId(255)));
    }

    #[test]
    fn reorder_windows_are_the_largest_delay_over_the_groups_minimum() {
        let mut t = two_groups();
        t.params.delay_unit_ticks = 1_000;
        let c = t.compile(8).expect("valid");
        // Port 1: 12 - 5 in group 1 (0 in group 2, where it is the fastest).
        assert_eq!(c.reorder_window_ticks(PortId(1)), Some(7_000));
        assert_eq!(
            c.reorder_window_ticks(PortId(0)),
            Some(0),
            "the fastest of its group"
        );
        assert_eq!(c.reorder_window_ticks(PortId(2)), Some(7_000));
        assert_eq!(c.reorder_window_ticks(PortId(5)), Some(0), "in no group");
        t.params.delay_unit_ticks = 0;
        let c = t.compile(8).expect("valid");
        assert_eq!(c.reorder_window_ticks(PortId(0)), None, "unit unknown");
    }

    #[test]
    fn clear_is_the_empty_placeholder() {
        let mut c = two_groups().compile(8).expect("valid");
        assert_ne!(c, CompiledTables::new());
        c.clear();
        assert_eq!(c, CompiledTables::new());
    }
}
