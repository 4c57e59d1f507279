//! The decider: flow cache, congestion monitor and installed tables behind
//! one sans-IO interface (§3.1 runtime workflow, Fig. 2).

use crate::flow_cache::{
    touch_line, FlowCache, FlowCacheRef, FlowCacheWith, SlotArray, SlotBlock, SlotStorage, BUCKET,
};
use crate::fmt::trace;
use crate::hash::{FlowCacheKey, FlowKey, HashAlgorithm};
use crate::in_flight::InFlight;
use crate::monitor::{PortState, Signals};
use crate::select::{decide, evaluate, pick_list, Explanation, Inputs, Reason, Scheme};
use crate::tables::{
    CompiledTables, GroupId, OwnedTables, Params, PortId, Tables, TablesSlot, ValidTables,
    MAX_CANDIDATES, MAX_PORTS,
};
use crate::time::Instant;
use crate::Error;
use core::ops::Deref;

/// Per-switch settings that do not come with the tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct DeciderConfig {
    /// The routing scheme.
    pub scheme: Scheme,
    /// The per-switch ECMP hash seed.
    pub seed: u32,
    /// The ECMP hash function.
    pub hash: HashAlgorithm,
    /// What a new flow gets when the flow cache has no room for it.
    #[cfg_attr(feature = "serde", serde(default))]
    pub overflow: Overflow,
    /// The flow cache's secret: keys the fingerprint that chooses a flow's
    /// buckets and tag ([`FlowKey::fingerprint`]), so that flows crafted
    /// without it cannot fill a victim's buckets or share its tag. Draw it
    /// at start from a random source; [`FlowCacheKey::ZERO`] (the default)
    /// is for tests and replays. Never serialized.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub flow_key: FlowCacheKey,
}

impl DeciderConfig {
    /// [`DeciderConfig::default`] as a constant, for `static` deciders
    /// (`Decider::new(DeciderConfig::DEFAULT)` in a `const` context): LCMP,
    /// seed 0, MurmurHash3, [`Overflow::Refuse`].
    pub const DEFAULT: DeciderConfig = DeciderConfig {
        scheme: Scheme::Lcmp,
        seed: 0,
        hash: HashAlgorithm::Murmur3,
        overflow: Overflow::Refuse,
        flow_key: FlowCacheKey::ZERO,
    };
}

with_setters!(DeciderConfig {
    scheme: Scheme => with_scheme,
    seed: u32 => with_seed,
    hash: HashAlgorithm => with_hash,
    overflow: Overflow => with_overflow,
    flow_key: FlowCacheKey => with_flow_key,
});

/// What a new flow gets when the flow cache cannot pin it (both of its
/// buckets hold only active flows and none can move; see
/// [`crate::flow_cache`]).
///
/// A flow that is forwarded without a pin can move later: its next packet
/// after a slot frees up is decided afresh (LCMP's choice depends on
/// congestion, not only on the hash), and any stateless spread over the
/// live candidates changes when a port flaps. No bounded memory can avoid
/// that for every flow, so the default refuses such a flow instead, the way
/// a full connection-tracking table drops new connections: every flow that
/// is forwarded at all is pinned, and a pinned flow that keeps sending
/// keeps its port while the port is up and a candidate of its group (§7.5:
/// RDMA's Go-Back-N turns one reordering into a retransmission burst).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Overflow {
    /// `Decision::NoRoute(Reason::CacheFull)`: the packet is not forwarded
    /// (the sender retries; by then idle entries may have been collected).
    /// No forwarded flow ever changes port while its port is up and a
    /// candidate.
    #[default]
    Refuse,
    /// `Decision::Unpinned`: stateless ECMP over the live candidates. Keeps
    /// every flow flowing, but such a flow may change port later (when it
    /// gets a slot, or when a port flaps).
    Stateless,
}

/// The outcome of [`Decider::on_packet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Decision {
    /// An established flow: forwarded on its pinned port.
    Hit(PortId),
    /// A new decision, pinned in the flow cache.
    New {
        /// The chosen port.
        port: PortId,
        /// Why (LCMP pick, fallback, baseline).
        reason: Reason,
        /// The flow was pinned to a port it can no longer use, and was
        /// re-decided in place: the port went down (fast failover, §3.4) or
        /// an install withdrew it from the packet's group
        /// ([`Counters::failovers`] and [`Counters::withdrawals`] tell which).
        failover: bool,
    },
    /// The flow cache had no room and the decider runs [`Overflow::Stateless`]:
    /// routed by the stateless ECMP hash over the live candidates, not
    /// pinned.
    Unpinned(PortId),
    /// No live candidate, an unknown group, or (under the default
    /// [`Overflow::Refuse`]) no room to pin a new flow
    /// ([`Reason::CacheFull`]).
    NoRoute(Reason),
}

impl Decision {
    /// The egress port, if any.
    pub const fn port(&self) -> Option<PortId> {
        match *self {
            Decision::Hit(p) | Decision::Unpinned(p) | Decision::New { port: p, .. } => Some(p),
            Decision::NoRoute(_) => None,
        }
    }
}

/// Event counters. Every packet lands in exactly one of `hits`,
/// `new_flows`, `failovers`, `withdrawals`, `unpinned` and `no_route`, so
/// they add up to `packets`; `min_cost_fallbacks` and `ecmp_fallbacks` count
/// reasons among the new decisions, `cache_full` the new flows the cache
/// could not pin (among `unpinned` or `no_route`), `displacements` the
/// inserts that moved an entry to its other bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Counters {
    /// Packets seen by `on_packet`.
    pub packets: u64,
    /// Established flows forwarded on their pinned port.
    pub hits: u64,
    /// New flows decided and pinned.
    pub new_flows: u64,
    /// Pinned flows whose port was down, re-decided and re-pinned.
    pub failovers: u64,
    /// Pinned flows whose port is up but no longer a candidate of the
    /// packet's group (an install withdrew it), re-decided and re-pinned.
    pub withdrawals: u64,
    /// Flows routed statelessly because the flow cache was full
    /// ([`Overflow::Stateless`]).
    pub unpinned: u64,
    /// Packets with no route.
    pub no_route: u64,
    /// New decisions that took the minimum-cost fallback.
    pub min_cost_fallbacks: u64,
    /// New decisions that fell back to ECMP (tables outdated).
    pub ecmp_fallbacks: u64,
    /// New flows the flow cache had no room for (refused under
    /// [`Overflow::Refuse`], counted in `no_route`; unpinned under
    /// [`Overflow::Stateless`]).
    pub cache_full: u64,
    /// Inserts that moved an active entry to its other bucket (its port
    /// unchanged) to make room.
    pub displacements: u64,
    /// New flows pinned in the entry of an active but idle flow whose idle
    /// time exceeded its safe gap (no packet of it can still be in flight
    /// on its old path; docs/design.md, "The in-order promise"): the cache
    /// was full for them, and they are counted in `new_flows`, not
    /// `cache_full`.
    pub reclaimed: u64,
    /// Idle flow-cache entries cleared by `gc`.
    pub gc_evictions: u64,
    /// Queue samples accepted.
    pub samples: u64,
}

/// The flow cache's tag of a flow: the low [`crate::flow_cache::HASH_BITS`]
/// (40) bits of its keyed fingerprint, which choose its buckets, and its
/// group in the 16 bits above. A forged fingerprint collision (2^-40 per
/// guess against an unknown key) toward another group is another entry.
#[inline]
const fn cache_tag(fingerprint: u64, group: GroupId) -> u64 {
    use crate::flow_cache::{HASH_BITS, HASH_MASK};
    (fingerprint & HASH_MASK) | ((group.0 as u64) << HASH_BITS)
}

/// Whether a pin can be honoured, and if not, why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PinState {
    Usable,
    PortDown,
    Withdrawn,
}

/// Whether a pin on `port` can be honoured for a packet of `group`, given
/// the ports' state and the tables (see [`DeciderWith::on_packet`]).
#[inline(always)]
fn pin_state(
    ports: &[PortState],
    tables: Option<&CompiledTables>,
    group: GroupId,
    port: PortId,
) -> PinState {
    if !ports.get(usize::from(port.0)).is_some_and(PortState::is_up) {
        PinState::PortDown
    } else if !tables.is_some_and(|t| t.is_candidate(group, port)) {
        PinState::Withdrawn
    } else {
        PinState::Usable
    }
}

fn bump(counter: &mut u64) {
    *counter = counter.saturating_add(1);
}

/// Whether a flow last seen on `port` at `last_seen` may move at `now`
/// (the in-flight bound of `port`, under its liveness).
fn may_move_on(
    ports: &[PortState],
    in_flight: &[InFlight],
    now: Instant,
    port: PortId,
    last_seen: Instant,
) -> bool {
    let i = usize::from(port.0);
    let up = ports.get(i).is_some_and(PortState::is_up);
    in_flight
        .get(i)
        .is_some_and(|b| b.may_move(now, last_seen, up))
}

/// Packets of a burst are decided this many at a time by
/// [`DeciderWith::on_packets`] (DPDK's `rte_eth_rx_burst` default).
pub const BURST: usize = 32;

/// The LCMP decision core for one DCI switch: `PORTS` ports, a flow cache
/// over slot storage `S` and the tables in slot `T`. Use
/// [`Decider<PORTS, FLOWS>`](Decider), which owns `FLOWS` slots (a power of
/// two; no heap, usable in a `static`) and its tables, or [`DeciderRef`],
/// whose slots the caller provides at run time; [`SharedDecider`] (any `S`
/// with `T = Option<P>`) reads compiled tables that several deciders share
/// ([`DeciderWith::use_tables`]).
///
/// ```
/// use lcmp_decide::*;
/// use core::net::Ipv4Addr;
///
/// let mut tables = Tables::paper_defaults();
/// for (id, gbps) in [(0u8, 200u64), (1, 25)] {
///     tables.ports.push(PortConfig { id: PortId(id), rate_bps: gbps * 1_000_000_000,
///         buffer_bytes: 5_000_000_000 }).unwrap();
/// }
/// let mut group = Group { id: GroupId(8), candidates: heapless::Vec::new() };
/// group.candidates.push(Candidate { port: PortId(0), delay_units: 25, capacity_bps: 200_000_000_000 }).unwrap();
/// group.candidates.push(Candidate { port: PortId(1), delay_units: 5, capacity_bps: 25_000_000_000 }).unwrap();
/// tables.groups.push(group).unwrap();
///
/// let mut d: Decider<4, 1024> = Decider::new(DeciderConfig::default());
/// d.install(&tables).unwrap();
/// let flow = FlowKey::v4(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 7, 0, 1), 1000, 4791, 17);
/// let now = Instant::from_ticks(1);
/// let first = d.on_packet(now, &flow, GroupId(8));
/// assert!(matches!(first, Decision::New { .. }));
/// assert_eq!(d.on_packet(now, &flow, GroupId(8)), Decision::Hit(first.port().unwrap()));
/// ```
///
/// `PORTS` must be between 1 and [`tables::MAX_PORTS`](crate::tables::MAX_PORTS),
/// checked at compile time:
///
/// ```compile_fail,E0080
/// let d: lcmp_decide::Decider<65, 1024> = lcmp_decide::Decider::new(Default::default());
/// ```
#[derive(Clone, Debug)]
pub struct DeciderWith<const PORTS: usize, S, T = OwnedTables> {
    config: DeciderConfig,
    /// The tables this decider runs on: its own ([`OwnedTables`], always
    /// present, so that a decider without tables is all zero bytes and is
    /// built in place: `.bss`, `memset`, never copied through the stack) or
    /// a reference to shared ones (`Option<P>`).
    tables: T,
    tables_valid: bool,
    ports: [PortState; PORTS],
    in_flight: [InFlight; PORTS],
    cache: FlowCacheWith<S>,
    counters: Counters,
}

/// A decider that owns its `FLOWS` flow-cache slots (a power of two, at
/// least 16): `const fn` construction, for `static`s and fixed firmware.
pub type Decider<const PORTS: usize, const FLOWS: usize> = DeciderWith<PORTS, SlotArray<FLOWS>>;

/// A decider over caller-provided flow-cache storage, sized at run time
/// (`16 * blocks.len()` slots; 12 bytes a slot).
///
/// ```
/// # use lcmp_decide::{flow_cache::SlotBlock, DeciderConfig, DeciderRef};
/// let mut blocks = vec![SlotBlock::EMPTY; 1 << 16]; // 1 048 576 slots, 12 MiB
/// let d: DeciderRef<'_, 64> = DeciderRef::with_slots(DeciderConfig::default(), &mut blocks).unwrap();
/// assert_eq!(d.flow_cache().capacity(), 1 << 20);
/// ```
pub type DeciderRef<'a, const PORTS: usize> = DeciderWith<PORTS, &'a mut [SlotBlock]>;

/// A decider that owns `FLOWS` flow-cache slots and reads compiled tables
/// through `P` (`&CompiledTables`, `Arc<CompiledTables>`, `Rc`, `Box`, or
/// any `Deref<Target = CompiledTables>`), shared with other deciders: one
/// 20.6 KB copy of the tables for every core instead of one per decider.
/// Only the tables are shared; ports, in-flight bounds, the flow cache and
/// counters stay per decider. See [`DeciderWith::use_tables`].
///
/// ```
/// use lcmp_decide::*;
/// # use core::net::Ipv4Addr;
/// let mut tables = Tables::paper_defaults();
/// tables.ports.push(PortConfig { id: PortId(0), rate_bps: 100_000_000_000,
///     buffer_bytes: 1 << 30 }).unwrap();
/// let mut group = Group { id: GroupId(8), candidates: heapless::Vec::new() };
/// group.candidates.push(Candidate { port: PortId(0), delay_units: 5,
///     capacity_bps: 100_000_000_000 }).unwrap();
/// tables.groups.push(group).unwrap();
/// let compiled = tables.compile(4).unwrap(); // once, for every core
///
/// let mut a: SharedDecider<4, 1024, &tables::CompiledTables> = SharedDecider::new(DeciderConfig::DEFAULT);
/// let mut b: SharedDecider<4, 1024, &tables::CompiledTables> = SharedDecider::new(DeciderConfig::DEFAULT);
/// assert_eq!(a.use_tables(&compiled), Ok(None));
/// assert_eq!(b.use_tables(&compiled), Ok(None));
/// let flow = FlowKey::v4(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 7, 0, 1), 1, 2, 17);
/// let now = Instant::from_ticks(1);
/// assert_eq!(a.on_packet(now, &flow, GroupId(8)).port(), Some(PortId(0)));
/// assert_eq!(b.on_packet(now, &flow, GroupId(8)).port(), Some(PortId(0)));
/// ```
pub type SharedDecider<const PORTS: usize, const FLOWS: usize, P> =
    DeciderWith<PORTS, SlotArray<FLOWS>, Option<P>>;

impl<const PORTS: usize, const FLOWS: usize, T: TablesSlot>
    DeciderWith<PORTS, SlotArray<FLOWS>, T>
{
    /// A decider with no tables: every packet gets `NoRoute` until
    /// [`DeciderWith::install`] (or [`DeciderWith::use_tables`]).
    pub const fn new(config: DeciderConfig) -> Self {
        Self::from_cache(config, FlowCache::new())
    }
}

impl<'a, const PORTS: usize, T: TablesSlot> DeciderWith<PORTS, &'a mut [SlotBlock], T> {
    /// A decider with no tables over caller-provided flow-cache storage
    /// (cleared here). The count of blocks must be a power of two
    /// ([`Error::FlowSlots`] otherwise).
    pub fn with_slots(config: DeciderConfig, blocks: &'a mut [SlotBlock]) -> Result<Self, Error> {
        Ok(Self::from_cache(config, FlowCacheRef::with_slots(blocks)?))
    }
}

impl<const PORTS: usize, S: SlotStorage, T: TablesSlot> DeciderWith<PORTS, S, T> {
    const CHECK: () = assert!(
        PORTS > 0 && PORTS <= MAX_PORTS,
        "Decider PORTS must be between 1 and MAX_PORTS"
    );

    /// A decider with no tables over any [`SlotStorage`] (cleared here; a
    /// power of two of at least 16 slots, [`Error::FlowSlots`] otherwise):
    /// how a C ABI or an allocator-backed caller provides its own memory.
    // Inlined so that a caller that writes the result into its own memory
    // (the C ABI's `lcmp_decider_init`) builds it in place, not in a
    // 25 KiB stack temporary (docs/firmware.md, "Stack").
    #[inline(always)]
    pub fn with_storage(config: DeciderConfig, storage: S) -> Result<Self, Error> {
        Ok(Self::from_cache(
            config,
            FlowCacheWith::with_storage(storage)?,
        ))
    }

    const fn from_cache(config: DeciderConfig, cache: FlowCacheWith<S>) -> Self {
        let () = Self::CHECK;
        DeciderWith {
            config,
            tables: T::EMPTY,
            tables_valid: false,
            ports: [PortState::NEW; PORTS],
            in_flight: [InFlight::NEW; PORTS],
            cache,
            counters: Counters {
                packets: 0,
                hits: 0,
                new_flows: 0,
                failovers: 0,
                withdrawals: 0,
                unpinned: 0,
                no_route: 0,
                min_cost_fallbacks: 0,
                ecmp_fallbacks: 0,
                cache_full: 0,
                displacements: 0,
                reclaimed: 0,
                gc_evictions: 0,
                samples: 0,
            },
        }
    }

    /// What every change of tables does to the per-decider state, whether
    /// they were compiled in place ([`DeciderWith::install`]) or attached
    /// ([`DeciderWith::use_tables`]): new weights or levels apply to the
    /// stored congestion at once, the in-flight bounds take the new buffers
    /// and reorder windows, and the tables count as current.
    fn on_tables_changed(&mut self) {
        if let Some(compiled) = self.tables.current() {
            trace!("lcmp: installed {} groups", compiled.groups().len());
            for (i, state) in self.ports.iter_mut().enumerate() {
                let ctx = u8::try_from(i)
                    .ok()
                    .and_then(|p| compiled.port_context(PortId(p)));
                state.refresh_c_cong(ctx);
            }
            for (i, bound) in self.in_flight.iter_mut().enumerate() {
                // PORTS <= MAX_PORTS = 64: every index is a port id.
                bound.on_install(compiled, u8::try_from(i).unwrap_or(u8::MAX));
            }
        }
        self.tables_valid = true;
    }

    /// Marks the installed path tables as outdated (`false`) or current
    /// again (`true`). While outdated, LCMP falls back to ECMP over the live
    /// candidates (paper §5); an `install` makes them current.
    pub fn set_tables_current(&mut self, current: bool) {
        self.tables_valid = current;
    }

    /// The installed tables, if any.
    #[inline]
    pub fn tables(&self) -> Option<&CompiledTables> {
        self.tables.current()
    }

    /// Returns the decider to its state after construction with `config`,
    /// in place: no tables (shared ones are let go, as by
    /// [`DeciderWith::release_tables`]), every port up and unsampled, an
    /// empty flow cache, zero counters. Nothing large is built on the stack
    /// (a firmware resets a `static` decider with it).
    pub fn reset(&mut self, config: DeciderConfig) {
        self.config = config;
        self.tables.clear();
        self.tables_valid = false;
        self.ports.fill(PortState::NEW);
        self.in_flight.fill(InFlight::NEW);
        self.cache.clear();
        self.counters = Counters::default();
    }

    /// The settings given at construction.
    pub const fn config(&self) -> &DeciderConfig {
        &self.config
    }

    /// Switches the routing scheme (pinned flows are kept).
    pub fn set_scheme(&mut self, scheme: Scheme) {
        self.config.scheme = scheme;
    }

    fn idle_timeout(&self) -> u32 {
        self.tables().map_or(Params::PAPER.idle_timeout_ticks, |t| {
            t.params().idle_timeout_ticks
        })
    }

    fn port_index(port: PortId) -> Result<usize, Error> {
        let i = usize::from(port.0);
        if i < PORTS {
            Ok(i)
        } else {
            Err(Error::PortOutOfRange(port.0))
        }
    }

    /// Feeds one queue-depth sample of `port` (§3.3), at the caller's cadence.
    /// `Q`, `T` and `D` are computed here and stored.
    ///
    /// A port beyond `PORTS` is [`Error::PortOutOfRange`]; a port the
    /// installed tables do not list (or any port before an install) is
    /// [`Error::PortNotInTables`], as the C ABI's `lcmp_sample` refuses it
    /// (`LCMP_ERR_NO_SUCH_PORT`): either way nothing is recorded (no port
    /// state, in-flight bound or counter changes).
    pub fn sample(&mut self, now: Instant, port: PortId, queue_bytes: u64) -> Result<(), Error> {
        let i = Self::port_index(port)?;
        let config = self.tables.current().and_then(|t| t.port_context(port));
        // Checked before anything is recorded; in the order below (the
        // context passed on as it came) the check costs 10 instructions
        // of x86-64 per sample (part 15's `sample`), where building a new
        // `Some` from the unwrapped context cost 39.
        let Some(ctx) = config else {
            return Err(Error::PortNotInTables(port.0));
        };
        let rate = Some((ctx.port.rate_bps, ctx.params.ticks_per_second));
        if let Some(state) = self.ports.get_mut(i) {
            state.on_sample(now, queue_bytes, config);
            bump(&mut self.counters.samples);
        }
        let epoch = (self.idle_timeout() / 2).max(1);
        if let Some(bound) = self.in_flight.get_mut(i) {
            bound.on_sample(now, queue_bytes, rate, epoch);
        }
        Ok(())
    }

    /// Sets a port's liveness (data-plane fast failover, §3.4).
    pub fn set_port_up(&mut self, port: PortId, up: bool) -> Result<(), Error> {
        let i = Self::port_index(port)?;
        if let Some(state) = self.ports.get_mut(i) {
            state.set_up(up);
        }
        Ok(())
    }

    /// Whether a flow whose last packet left on `port` at `last_seen` could
    /// be moved at `now` without reordering it: the predicate by which a
    /// full cache reuses an active flow's entry (`Counters::reclaimed`;
    /// docs/design.md, "The in-order promise"). A port out of range may
    /// not be moved from. A data plane that reuses its own flow state by
    /// idle time (the Tofino export's pin cells) reads its safe gap from
    /// here.
    pub fn may_move(&self, now: Instant, port: PortId, last_seen: Instant) -> bool {
        may_move_on(&self.ports, &self.in_flight, now, port, last_seen)
    }

    /// A port's monitor state.
    pub fn port_state(&self, port: PortId) -> Option<&PortState> {
        self.ports.get(usize::from(port.0))
    }

    /// A port's congestion signals as scores (`Q`, `T`, `D`, `C_cong`).
    pub fn signals(&self, port: PortId) -> Option<Signals> {
        let state = self.port_state(port)?;
        let ctx = self.tables().and_then(|t| t.port_context(port));
        Some(state.signals(ctx.as_ref()))
    }

    /// The counters.
    pub const fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The flow cache (read-only: occupancy for telemetry).
    pub const fn flow_cache(&self) -> &FlowCacheWith<S> {
        &self.cache
    }

    fn inputs(&self, scheme: Scheme) -> Inputs<'_, PORTS> {
        Inputs {
            tables: self.tables(),
            tables_valid: self.tables_valid,
            ports: &self.ports,
            scheme,
        }
    }

    /// Whether a pin on `port` can be honoured for a packet of `group`: the
    /// port is up and still a candidate of the group (O(1): a direct group
    /// index and a port bitmask).
    fn pin_usable(&self, group: GroupId, port: PortId) -> PinState {
        pin_state(&self.ports, self.tables(), group, port)
    }

    /// Routes one packet (§3.1): an established flow whose port is up and
    /// still a candidate of `group` follows its pin; otherwise (a new flow,
    /// a pinned port that went down, or one an install withdrew from the
    /// group) the flow is decided and pinned. A new flow the cache cannot
    /// pin gets what [`DeciderConfig::overflow`] says. Total: every input
    /// gets a [`Decision`].
    ///
    /// The promise this keeps: a flow that is forwarded and keeps sending
    /// (never idle longer than the idle timeout) keeps its egress port as
    /// long as that port is up and a candidate of its group (under
    /// [`Overflow::Refuse`], the default, for every flow).
    #[must_use]
    #[inline]
    pub fn on_packet(&mut self, now: Instant, key: &FlowKey, group: GroupId) -> Decision {
        let tag = cache_tag(key.fingerprint(&self.config.flow_key), group);
        let idle = self.idle_timeout();
        let decision = self.route(now, idle, group, tag, |algorithm, seed| {
            key.ecmp_hash(algorithm, seed)
        });
        self.count_hits(u64::from(matches!(decision, Decision::Hit(_))));
        decision
    }

    /// Counts `n` hits (packets [`DeciderWith::route`] returned a
    /// [`Decision::Hit`] for, which it does not count itself).
    #[inline]
    fn count_hits(&mut self, n: u64) {
        self.counters.packets = self.counters.packets.saturating_add(n);
        self.counters.hits = self.counters.hits.saturating_add(n);
    }

    /// Routes a burst of packets, in order: `out[i]` is exactly what
    /// [`DeciderWith::on_packet`] would return for `packets[i]` after the
    /// packets before it (duplicates of a flow inside the burst included).
    /// Processes `min(packets.len(), out.len())` packets and returns how
    /// many. Faster than a loop over `on_packet` when the flow cache is
    /// larger than the CPU's caches: each group of [`BURST`] packets first
    /// computes every flow's fingerprint and reads the cache line its
    /// lookup needs first (independent loads, so their misses overlap, as
    /// DPDK's `rte_hash_lookup_bulk` does), then decides the packets one by
    /// one. [`DeciderWith::on_packets_by`] is the same over packets and
    /// decisions in the caller's own layout.
    pub fn on_packets(
        &mut self,
        now: Instant,
        packets: &[(FlowKey, GroupId)],
        out: &mut [Decision],
    ) -> usize {
        self.on_packets_by(now, packets, |&p| p, out, |o, d| *o = d)
    }

    /// [`DeciderWith::on_packets`] over packets and decisions in the
    /// caller's layout (a C struct, a parsed header), so that no burst of
    /// `(FlowKey, GroupId)` and no array of [`Decision`]s is built only to
    /// be converted: `read` gives a packet's flow and group (it is called
    /// once a packet for the fingerprint, again for the group, and a third
    /// time only when the flow is not a usable pin, for the ECMP hash: a
    /// hit needs no key), and `write` stores a decision into its output
    /// slot. The same decisions, counters and flow-cache state as
    /// `on_packets` over the converted packets, given a `read` that
    /// returns the same value each call.
    ///
    /// ```
    /// # use lcmp_decide::*;
    /// # use core::net::Ipv4Addr;
    /// let mut d: Decider<4, 1024> = Decider::new(DeciderConfig::DEFAULT);
    /// // A caller's own packet and decision layouts (here: no tables yet).
    /// let packets = [(Ipv4Addr::new(10, 0, 0, 1), 1000u16)];
    /// let mut ports = [0u8; 1];
    /// let n = d.on_packets_by(
    ///     Instant::from_ticks(1),
    ///     &packets,
    ///     |&(src, sport)| (FlowKey::v4(src, Ipv4Addr::new(10, 7, 0, 1), sport, 4791, 17), GroupId(8)),
    ///     &mut ports,
    ///     |o, decision| *o = decision.port().map_or(255, |p| p.0),
    /// );
    /// assert_eq!((n, ports), (1, [255]));
    /// ```
    #[inline]
    pub fn on_packets_by<P, O>(
        &mut self,
        now: Instant,
        packets: &[P],
        read: impl Fn(&P) -> (FlowKey, GroupId),
        out: &mut [O],
        write: impl FnMut(&mut O, Decision),
    ) -> usize {
        self.on_packets_with(now, packets, read, out, write, touch_line)
    }

    /// [`DeciderWith::on_packets_by`] with the read-ahead of each flow's
    /// primary bucket supplied by the caller: `read_ahead` gets its key
    /// line (64 bytes, 64-byte aligned, in the flow cache's storage) and
    /// its tick line (32 bytes, which a hit writes) before any packet of
    /// the group of [`BURST`] is decided, and returns a value the
    /// burst keeps alive with `core::hint::black_box` (the default,
    /// [`touch_line`], reads the key line's first key; a prefetch returns 0).
    ///
    /// It is a hook because the core is `forbid(unsafe_code)` and a
    /// prefetch instruction is not safe Rust (`_mm_prefetch` and `asm!`
    /// need `unsafe`); a plain load starts the same miss but stalls the
    /// core once a reorder buffer's worth of them is outstanding, where a
    /// prefetch retires at once. A caller with an `unsafe` boundary (the C
    /// ABI, `lcmp-ffi`) passes a function that issues one, as DPDK's
    /// `rte_hash_lookup_bulk` does with `rte_prefetch0`. The hook cannot
    /// change a decision: it sees the two lines only, read-only.
    #[inline]
    pub fn on_packets_with<P, O>(
        &mut self,
        now: Instant,
        packets: &[P],
        read: impl Fn(&P) -> (FlowKey, GroupId),
        out: &mut [O],
        mut write: impl FnMut(&mut O, Decision),
        read_ahead: impl Fn(&[u64; BUCKET], &[u32; BUCKET]) -> u64,
    ) -> usize {
        let n = packets.len().min(out.len());
        let (Some(packets), Some(out)) = (packets.get(..n), out.get_mut(..n)) else {
            return 0;
        };
        // The same for every packet of the call: the tables do not change.
        let idle = self.idle_timeout();
        for (burst, decisions) in packets.chunks(BURST).zip(out.chunks_mut(BURST)) {
            let mut tags = [0u64; BURST];
            let mut lines = 0u64;
            for (p, tag) in burst.iter().zip(tags.iter_mut()) {
                let (key, group) = read(p);
                *tag = cache_tag(key.fingerprint(&self.config.flow_key), group);
                lines ^= self.cache.lines(*tag).map_or(0, |(k, s)| read_ahead(k, s));
            }
            // Keeps the reads: their only purpose is to start the misses.
            core::hint::black_box(lines);
            // Hits are counted once a group (the other outcomes by `route`).
            let mut hits = 0u64;
            for ((p, tag), o) in burst.iter().zip(tags).zip(decisions) {
                let decision = self.route(now, idle, read(p).1, tag, |algorithm, seed| {
                    read(p).0.ecmp_hash(algorithm, seed)
                });
                // At most BURST a group: cannot wrap.
                hits = hits.wrapping_add(u64::from(matches!(decision, Decision::Hit(_))));
                write(o, decision);
            }
            self.count_hits(hits);
        }
        n
    }

    /// [`DeciderWith::on_packet`] with the flow's cache tag
    /// ([`cache_tag`] of its fingerprint and `group`) and the idle timeout
    /// computed; `ecmp_hash` (the flow's [`FlowKey::ecmp_hash`]) is called
    /// only when the flow needs deciding (a hit reads only the tag), so a
    /// burst in the caller's layout converts a hit's key once, for its
    /// fingerprint, and a single packet's key is never copied. A hit is
    /// not counted here: the caller counts its hits
    /// ([`DeciderWith::count_hits`], once a burst), every other outcome is.
    #[inline]
    fn route(
        &mut self,
        now: Instant,
        idle: u32,
        group: GroupId,
        tag: u64,
        ecmp_hash: impl FnOnce(HashAlgorithm, u32) -> u32,
    ) -> Decision {
        // The entry is the flow's keyed hash and its group: a flow of
        // another group never reads, re-pins or deletes it.
        let fingerprint = tag;
        let (ports, tables) = (&self.ports, self.tables.current());
        let usable = |port| pin_state(ports, tables, group, port) == PinState::Usable;
        let probe = match self.cache.hit_or_probe(fingerprint, now, idle, usable) {
            Ok(port) => return Decision::Hit(port),
            Err(probe) => probe,
        };
        bump(&mut self.counters.packets);
        let pinned = probe.found;
        let cause = pinned.map_or(PinState::Usable, |pin| self.pin_usable(group, pin.port));
        let hash = ecmp_hash(self.config.hash, self.config.seed);
        let (chosen, reason) = decide(&self.inputs(self.config.scheme), group, hash);
        let Some(port) = chosen else {
            // Every candidate down: the pin stays, so that a flow whose
            // port comes back returns to it (a switch's data plane, which
            // drops without touching its pin registers, does the same).
            // Group gone: the flow is forgotten, idle entry included.
            if reason != Reason::NoLiveCandidate {
                if let Some(slot) = probe.entry() {
                    self.cache.remove(slot);
                }
            }
            bump(&mut self.counters.no_route);
            return Decision::NoRoute(reason);
        };
        if let Some(pin) = pinned {
            // Lazy re-decision: only this flow, in place, on its next packet
            // (no sweep at failure or install time).
            self.cache.repin(pin.slot, port, now);
            bump(match cause {
                PinState::Withdrawn => &mut self.counters.withdrawals,
                _ => &mut self.counters.failovers,
            });
            self.count_reason(reason);
            return Decision::New {
                port,
                reason,
                failover: true,
            };
        }
        match self
            .cache
            .insert_probed(&probe, fingerprint, port, now, idle)
        {
            Ok(placement) => {
                bump(&mut self.counters.new_flows);
                if placement.displaced {
                    bump(&mut self.counters.displacements);
                }
                self.count_reason(reason);
                Decision::New {
                    port,
                    reason,
                    failover: false,
                }
            }
            Err(_) if self.reclaim(now, fingerprint, port) => {
                bump(&mut self.counters.new_flows);
                bump(&mut self.counters.reclaimed);
                self.count_reason(reason);
                Decision::New {
                    port,
                    reason,
                    failover: false,
                }
            }
            Err(_) => {
                bump(&mut self.counters.cache_full);
                match self.config.overflow {
                    Overflow::Refuse => {
                        bump(&mut self.counters.no_route);
                        Decision::NoRoute(Reason::CacheFull)
                    }
                    Overflow::Stateless => {
                        bump(&mut self.counters.unpinned);
                        let (stateless, _) = decide(&self.inputs(Scheme::Ecmp), group, hash);
                        // The group had a live candidate a moment ago, so
                        // ECMP finds one too; fall back to the LCMP port for
                        // totality.
                        Decision::Unpinned(stateless.unwrap_or(port))
                    }
                }
            }
        }
    }

    /// Pins a new flow whose buckets are full in the entry of an active
    /// flow that can move without reordering (bounded: the 16 slots of its
    /// two buckets). Whether it could.
    #[cold]
    fn reclaim(&mut self, now: Instant, fingerprint: u64, port: PortId) -> bool {
        let (ports, in_flight) = (&self.ports, &self.in_flight);
        let may_move =
            |p: PortId, last_seen: Instant| may_move_on(ports, in_flight, now, p, last_seen);
        self.cache.reclaim(fingerprint, port, now, may_move).is_ok()
    }

    fn count_reason(&mut self, reason: Reason) {
        match reason {
            Reason::MinCostFallback => bump(&mut self.counters.min_cost_fallbacks),
            Reason::EcmpFallback => bump(&mut self.counters.ecmp_fallbacks),
            _ => {}
        }
    }

    /// Explains the decision `on_packet` would make for `key` now, without
    /// changing anything: every candidate's scores, the sort, the cuts, the
    /// kept set, the hash, the pick and the reason. An established flow whose
    /// port is up and still a candidate of `group` is reported as
    /// [`Reason::Pinned`]; a pin that can no longer be honoured shows in
    /// `pinned` beside the re-decision. Whether a new flow would find room
    /// in the flow cache is not predicted ([`Reason::CacheFull`] comes from
    /// `on_packet` only).
    #[must_use]
    pub fn explain(&self, now: Instant, key: &FlowKey, group: GroupId) -> Explanation {
        let hash = key.ecmp_hash(self.config.hash, self.config.seed);
        let mut explanation = evaluate(&self.inputs(self.config.scheme), group, hash);
        let idle = self.idle_timeout();
        let tag = cache_tag(key.fingerprint(&self.config.flow_key), group);
        if let Some(port) = self.cache.lookup(tag, now, idle) {
            explanation.pinned = Some(port);
            if self.pin_usable(group, port) == PinState::Usable {
                explanation.chosen = Some(port);
                explanation.reason = Reason::Pinned;
            }
        }
        explanation
    }

    /// The ports a new flow of `group` is hashed over now, in pick order
    /// (LCMP's kept set by rank, §3.4): with [`crate::Pick::Hash`] or
    /// [`crate::Pick::ScaledHash`], a new flow whose ECMP hash is `h` gets
    /// the entry that hash picks among `len()` choices (`h % len`, or the
    /// scaled top 16 bits). What a switch agent installs as a group's
    /// bucket table, without explaining one flow per bucket. Empty: no
    /// route (unknown group, no live candidate, no tables).
    ///
    /// ```
    /// # use lcmp_decide::*;
    /// let d: Decider<4, 64> = Decider::new(DeciderConfig::DEFAULT);
    /// assert!(d.pick_list(GroupId(1)).is_empty()); // no tables yet
    /// ```
    #[must_use]
    pub fn pick_list(&self, group: GroupId) -> heapless::Vec<PortId, MAX_CANDIDATES> {
        pick_list(&self.inputs(self.config.scheme), group)
    }

    /// Incremental flow-cache garbage collection: visits at most `budget`
    /// slots and clears idle entries. Returns how many were cleared.
    pub fn gc(&mut self, now: Instant, budget: usize) -> usize {
        let idle = self.idle_timeout();
        let evicted = self.cache.gc(now, budget, idle);
        self.counters.gc_evictions = self.counters.gc_evictions.saturating_add(evicted as u64);
        evicted
    }
}

impl<const PORTS: usize, S: SlotStorage> DeciderWith<PORTS, S, OwnedTables> {
    /// Validates and installs new tables. Hitless: pinned flows keep their
    /// ports, port state is kept, new decisions use the new tables. On error
    /// nothing changes.
    ///
    /// The tables are validated first ([`Tables::validate`]), then compiled
    /// in place over the previous ones (`&mut self`: no packet sees a half
    /// state), so no copy of the tables is built on the stack: an install
    /// needs well under 1 KiB of it (docs/firmware.md, "Stack").
    pub fn install(&mut self, tables: &Tables) -> Result<(), Error> {
        self.tables.install(tables, PORTS)?;
        self.on_tables_changed();
        Ok(())
    }

    /// [`DeciderWith::install`] of tables validated once at the edge
    /// ([`Tables::validated`], or `lcmp_tables`' decoders): not validated
    /// again, only their ports checked against `PORTS`
    /// ([`ValidTables::fits`]: [`Error::PortOutOfRange`]). The same result
    /// as [`DeciderWith::install`] of the same tables; on error nothing
    /// changes.
    ///
    /// ```
    /// # use lcmp_decide::*;
    /// let t = tables::Tables::paper_defaults();
    /// let mut a: Decider<8, 64> = Decider::new(DeciderConfig::DEFAULT);
    /// let mut b: Decider<8, 64> = Decider::new(DeciderConfig::DEFAULT);
    /// a.install_valid(t.validated().unwrap()).unwrap();
    /// b.install(&t).unwrap();
    /// assert_eq!(a.tables(), b.tables());
    /// ```
    pub fn install_valid(&mut self, tables: ValidTables<'_>) -> Result<(), Error> {
        self.tables.install_valid(tables, PORTS)?;
        self.on_tables_changed();
        Ok(())
    }
}

impl<const PORTS: usize, S: SlotStorage, P> DeciderWith<PORTS, S, Option<P>>
where
    P: Deref<Target = CompiledTables>,
{
    /// Makes the decider read `tables`, compiled once and shared with other
    /// deciders, and hands back the generation it read before (`None` for
    /// the first), so that the caller can release it: dropping an `Arc`, or
    /// knowing that this decider no longer borrows it. Hitless, exactly as
    /// [`DeciderWith::install`] of the same tables would be: pinned flows
    /// keep their ports (a pin whose port the new tables withdraw from its
    /// group is re-decided at the flow's next packet), port state is kept,
    /// and the per-decider state that depends on the tables (`C_cong`,
    /// in-flight bounds, [`DeciderWith::set_tables_current`]) is refreshed.
    ///
    /// Errors (nothing changes, and `tables` is dropped):
    /// [`Error::PortOutOfRange`] when the tables list a port at or above
    /// `PORTS` (they were compiled for a larger decider);
    /// [`Error::InvalidLevels`] for a `CompiledTables` that was never
    /// compiled ([`CompiledTables::new`]'s empty placeholder).
    ///
    /// ```
    /// # use lcmp_decide::*;
    /// # use std::sync::Arc;
    /// let gen1 = Arc::new(Tables::paper_defaults().compile(8).unwrap());
    /// let mut d: SharedDecider<8, 64, Arc<tables::CompiledTables>> =
    ///     SharedDecider::new(DeciderConfig::DEFAULT);
    /// assert_eq!(d.use_tables(Arc::clone(&gen1)), Ok(None));
    /// let gen2 = Arc::new(Tables::paper_defaults().compile(8).unwrap());
    /// let old = d.use_tables(gen2).unwrap();
    /// assert!(old.is_some_and(|old| Arc::ptr_eq(&old, &gen1)));
    /// // Tables compiled for 16 ports do not fit a 4-port decider.
    /// let mut small: SharedDecider<4, 64, Arc<tables::CompiledTables>> =
    ///     SharedDecider::new(DeciderConfig::DEFAULT);
    /// let mut t = Tables::paper_defaults();
    /// t.ports.push(PortConfig { id: PortId(9), rate_bps: 1, buffer_bytes: 1 }).unwrap();
    /// let wide = Arc::new(t.compile(16).unwrap());
    /// assert_eq!(small.use_tables(wide), Err(Error::PortOutOfRange(9)));
    /// ```
    pub fn use_tables(&mut self, tables: P) -> Result<Option<P>, Error> {
        tables.check_fits(PORTS)?;
        let previous = self.tables.replace(tables);
        self.on_tables_changed();
        Ok(previous)
    }

    /// Stops reading the shared tables and hands them back (`None` if there
    /// were none): from here on every packet gets no route, as before the
    /// first [`DeciderWith::use_tables`]; pins, port state and counters are
    /// kept for the next generation.
    pub fn release_tables(&mut self) -> Option<P> {
        self.tables.take()
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// The RAM formula of docs/firmware.md and docs/performance.md:
    /// `round_up_64(64 * PORTS + 12 * FLOWS + 20 848)` bytes: 24 for the
    /// congestion monitor and 40 for the in-flight bound per port (the same on
    /// 32- and 64-bit targets: no pointer in the struct).
    #[test]
    fn decider_ram_follows_the_documented_formula() {
        fn formula(ports: usize, flows: usize) -> usize {
            (64 * ports + 12 * flows + 20_848).next_multiple_of(64)
        }
        assert_eq!(size_of::<Decider<1, 16>>(), formula(1, 16));
        assert_eq!(size_of::<Decider<8, 4096>>(), formula(8, 4096));
        assert_eq!(size_of::<Decider<16, 4096>>(), formula(16, 4096));
        assert_eq!(size_of::<Decider<64, 1024>>(), formula(64, 1024));
        assert_eq!(size_of::<Decider<64, 65536>>(), formula(64, 65536));
        assert_eq!(size_of::<CompiledTables>(), 20_648);
        // Without its slots (docs/performance.md, docs/firmware.md).
        #[cfg(target_pointer_width = "64")]
        assert_eq!(size_of::<DeciderRef<'static, 64>>(), 24_928);
        // A decider over shared tables carries a pointer, not the tables.
        #[cfg(target_pointer_width = "64")]
        assert_eq!(
            size_of::<SharedDecider<64, 1024, &'static CompiledTables>>(),
            formula(64, 1024) - 20_608
        );
    }

    fn compiled(ports: &[u8]) -> CompiledTables {
        let mut t = Tables::paper_defaults();
        for &p in ports {
            let _ = t.ports.push(crate::PortConfig {
                id: PortId(p),
                rate_bps: 1_000_000_000,
                buffer_bytes: 1 << 20,
            });
        }
        t.compile(64).expect("valid")
    }

    #[test]
    fn use_tables_refuses_what_does_not_fit() {
        let mut d: SharedDecider<4, 16, &CompiledTables> =
            SharedDecider::new(DeciderConfig::DEFAULT);
        let placeholder = CompiledTables::new();
        assert_eq!(d.use_tables(&placeholder), Err(Error::InvalidLevels));
        let wide = compiled(&[0, 3, 4, 9]);
        assert_eq!(d.use_tables(&wide), Err(Error::PortOutOfRange(4)));
        assert!(d.tables().is_none(), "nothing changed");
        let fits = compiled(&[0, 3]);
        assert_eq!(d.use_tables(&fits), Ok(None));
        assert_eq!(d.use_tables(&wide), Err(Error::PortOutOfRange(4)));
        assert!(d.tables().is_some_and(|t| core::ptr::eq(t, &fits)));
    }

    #[test]
    fn release_and_reset_let_shared_tables_go() {
        use std::rc::Rc;
        let gen = Rc::new(compiled(&[0, 1]));
        let mut d: SharedDecider<4, 16, Rc<CompiledTables>> =
            SharedDecider::new(DeciderConfig::DEFAULT);
        assert_eq!(d.use_tables(Rc::clone(&gen)), Ok(None));
        assert!(d.tables().is_some());
        assert_eq!(Rc::strong_count(&gen), 2);
        let back = d.release_tables();
        assert!(back.is_some_and(|b| Rc::ptr_eq(&b, &gen)));
        assert!(d.tables().is_none());
        assert_eq!(Rc::strong_count(&gen), 1);
        let flow = FlowKey::v4(
            core::net::Ipv4Addr::new(10, 0, 0, 1),
            core::net::Ipv4Addr::new(10, 0, 0, 2),
            1,
            2,
            17,
        );
        assert_eq!(
            d.on_packet(Instant::from_ticks(1), &flow, GroupId(1)),
            Decision::NoRoute(Reason::UnknownGroup)
        );
        assert_eq!(d.use_tables(Rc::clone(&gen)), Ok(None));
        d.reset(DeciderConfig::DEFAULT);
        assert!(d.tables().is_none());
        assert_eq!(Rc::strong_count(&gen), 1, "reset drops the reference");
    }

    /// A sample moves the port's signals and counts; `reset` forgets owned
    /// tables as it lets shared ones go.
    #[test]
    fn samples_move_signals_and_reset_forgets_owned_tables() {
        let t = port_1_tables();
        let mut d: Decider<4, 16> = Decider::new(DeciderConfig::DEFAULT);
        d.install(&t).expect("valid");
        let idle = d.signals(PortId(1));
        let bound = std::format!("{:?}", d.in_flight);
        d.sample(Instant::from_ticks(5), PortId(1), 1 << 20)
            .expect("port");
        assert_eq!(d.counters().samples, 1);
        assert_ne!(d.signals(PortId(1)), idle, "a full queue is a signal");
        assert_ne!(
            std::format!("{:?}", d.in_flight),
            bound,
            "and an in-flight bound"
        );
        assert_eq!(
            d.sample(Instant::from_ticks(6), PortId(4), 0),
            Err(Error::PortOutOfRange(4))
        );
        d.reset(DeciderConfig::DEFAULT);
        assert!(d.tables().is_none(), "reset forgets owned tables");
        assert_eq!(d.counters().samples, 0);
        d.install(&t).expect("valid");
        assert_eq!(d.signals(PortId(1)), idle);
    }

    /// The paper's defaults listing one port, 1 (1 MiB buffer at 1 Gb/s).
    fn port_1_tables() -> Tables {
        let mut t = Tables::paper_defaults();
        let _ = t.ports.push(crate::PortConfig {
            id: PortId(1),
            rate_bps: 1_000_000_000,
            buffer_bytes: 1 << 20,
        });
        t
    }

    /// A decider of 4 ports whose tables list port 1 only
    /// ([`port_1_tables`]), with one sample of it taken.
    fn one_listed_port() -> Decider<4, 16> {
        let mut d: Decider<4, 16> = Decider::new(DeciderConfig::DEFAULT);
        d.install(&port_1_tables()).expect("valid");
        d.sample(Instant::from_ticks(3), PortId(1), 1 << 19)
            .expect("listed");
        d
    }

    /// Everything a sample can change: every port's monitor state and
    /// in-flight bound, and the counters.
    fn sample_state(d: &Decider<4, 16>) -> std::string::String {
        std::format!("{:?} {:?} {:?}", d.ports, d.in_flight, d.counters)
    }

    /// A sample of a port the tables do not list, or of any port before
    /// an install, is the C ABI's refusal (`LCMP_ERR_NO_SUCH_PORT`): a
    /// typed error, and nothing recorded.
    #[test]
    fn a_sample_of_an_unlisted_port_is_refused_and_records_nothing() {
        let mut d = one_listed_port();
        let before = sample_state(&d);
        for port in [0, 2, 3] {
            assert_eq!(
                d.sample(Instant::from_ticks(9), PortId(port), 1 << 20),
                Err(Error::PortNotInTables(port))
            );
        }
        assert_eq!(sample_state(&d), before, "nothing recorded");
        assert_eq!(
            d.sample(Instant::from_ticks(9), PortId(4), 1),
            Err(Error::PortOutOfRange(4)),
            "beyond PORTS is still out of range"
        );
        let mut empty: Decider<4, 16> = Decider::new(DeciderConfig::DEFAULT);
        let before = sample_state(&empty);
        assert_eq!(
            empty.sample(Instant::from_ticks(1), PortId(1), 1),
            Err(Error::PortNotInTables(1)),
            "no tables: no port is listed"
        );
        assert_eq!(sample_state(&empty), before);
        // The listed port still samples, and counts.
        d.sample(Instant::from_ticks(10), PortId(1), 1 << 20)
            .expect("listed");
        assert_eq!(d.counters().samples, 2);
        assert_ne!(sample_state(&d), before);
    }

    quickcheck::quickcheck! {
        /// Any sample of an unlisted port at any time and depth, between
        /// samples of the listed one, is refused and changes nothing.
        fn unlisted_samples_change_nothing(samples: std::vec::Vec<(u8, u32, u64)>) -> bool {
            let mut d = one_listed_port();
            samples.into_iter().all(|(port, now, bytes)| {
                let port = port % 4;
                let before = sample_state(&d);
                let r = d.sample(Instant::from_ticks(now), PortId(port), bytes);
                if port == 1 {
                    r == Ok(()) && d.counters().samples > 1
                } else {
                    r == Err(Error::PortNotInTables(port)) && sample_state(&d) == before
                }
            })
        }
    }

    /// Two 1 Gb/s ports (1 MiB buffers) and group 1 over both, port 0 the
    /// shorter path; `params` for the rest.
    fn two_port_tables(params: Params) -> Tables {
        let mut t = Tables::paper_defaults();
        t.params = params;
        let mut g = crate::Group {
            id: GroupId(1),
            candidates: heapless::Vec::new(),
        };
        for (port, delay) in [(0u8, 5u32), (1, 9)] {
            let _ = t.ports.push(crate::PortConfig {
                id: PortId(port),
                rate_bps: 1_000_000_000,
                buffer_bytes: 1 << 20,
            });
            let _ = g.candidates.push(crate::Candidate {
                port: PortId(port),
                delay_units: delay,
                capacity_bps: 1_000_000_000,
            });
        }
        let _ = t.groups.push(g);
        t
    }

    fn v4_flow(i: u16) -> FlowKey {
        let a = core::net::Ipv4Addr::new(10, 0, 0, 1);
        FlowKey::v4(a, core::net::Ipv4Addr::new(10, 9, 0, 1), i, 4791, 17)
    }

    fn ticks(t: u32) -> Instant {
        Instant::from_ticks(t)
    }

    /// A new flow, its hits, a down pin port (failover), a withdrawn pin
    /// port (withdrawal), every candidate down (the pin stays) and the
    /// counters of each, on the decider's own tests.
    #[test]
    fn pins_fail_over_drain_and_survive_an_outage() {
        let t = two_port_tables(Params::PAPER);
        let mut d: Decider<4, 64> = Decider::new(DeciderConfig::DEFAULT);
        d.install(&t).expect("valid");
        let f = v4_flow(1);
        let first = d.on_packet(ticks(1), &f, GroupId(1));
        let Some(p) = first.port() else {
            panic!("{first:?} routes");
        };
        assert_eq!(d.on_packet(ticks(2), &f, GroupId(1)), Decision::Hit(p));
        assert_eq!(Decision::NoRoute(Reason::UnknownGroup).port(), None);
        let e = d.explain(ticks(2), &f, GroupId(1));
        assert_eq!(
            (e.pinned, e.chosen, e.reason),
            (Some(p), Some(p), Reason::Pinned)
        );
        let other = PortId(1 - p.0);
        // The pin's port goes down: re-decided on the other one (explain
        // shows the pin beside the re-decision).
        d.set_port_up(p, false).expect("port");
        let e = d.explain(ticks(2), &f, GroupId(1));
        assert_eq!((e.pinned, e.chosen), (Some(p), Some(other)));
        assert_ne!(e.reason, Reason::Pinned);
        assert!(d.port_state(p).is_some_and(|s| !s.is_up()));
        assert!(matches!(
            d.on_packet(ticks(3), &f, GroupId(1)),
            Decision::New { port, failover: true, .. } if port == other
        ));
        assert_eq!(
            d.set_port_up(PortId(4), true),
            Err(Error::PortOutOfRange(4))
        );
        // Every candidate down: no route, and the pin stays for the port's
        // return.
        d.set_port_up(other, false).expect("port");
        assert_eq!(
            d.on_packet(ticks(4), &f, GroupId(1)),
            Decision::NoRoute(Reason::NoLiveCandidate)
        );
        d.set_port_up(other, true).expect("port");
        d.set_port_up(p, true).expect("port");
        assert_eq!(d.on_packet(ticks(5), &f, GroupId(1)), Decision::Hit(other));
        // Tables that no longer list the pin's port as a candidate: a
        // withdrawal, counted as one.
        let mut narrower = t.clone();
        if let Some(g) = narrower.groups.get_mut(0) {
            g.candidates.retain(|c| c.port != other);
        }
        d.install(&narrower).expect("valid");
        assert!(matches!(
            d.on_packet(ticks(6), &f, GroupId(1)),
            Decision::New { port, failover: true, .. } if port == p
        ));
        let c = d.counters();
        assert_eq!(
            (
                c.packets,
                c.hits,
                c.new_flows,
                c.failovers,
                c.withdrawals,
                c.no_route
            ),
            (6, 2, 1, 1, 1, 1)
        );
    }

    /// The fallbacks are counted by reason: outdated tables (ECMP), nothing
    /// under the cut (the cheapest alone); a scheme switch takes effect for
    /// the next new flow.
    #[test]
    fn fallbacks_and_schemes_are_counted_and_switched() {
        let mut d: Decider<4, 64> = Decider::new(DeciderConfig::DEFAULT);
        d.install(&two_port_tables(Params::PAPER)).expect("valid");
        d.set_tables_current(false);
        assert!(matches!(
            d.on_packet(ticks(1), &v4_flow(1), GroupId(1)),
            Decision::New {
                reason: Reason::EcmpFallback,
                ..
            }
        ));
        d.set_tables_current(true);
        assert!(matches!(
            d.on_packet(ticks(1), &v4_flow(2), GroupId(1)),
            Decision::New {
                reason: Reason::HashInKept,
                ..
            }
        ));
        d.set_scheme(Scheme::Ecmp);
        assert!(matches!(
            d.on_packet(ticks(1), &v4_flow(3), GroupId(1)),
            Decision::New {
                reason: Reason::Ecmp,
                ..
            }
        ));
        d.install(&two_port_tables(Params::PAPER.with_cut(0)))
            .expect("valid");
        d.set_scheme(Scheme::Lcmp);
        assert!(matches!(
            d.on_packet(ticks(1), &v4_flow(4), GroupId(1)),
            Decision::New {
                port: PortId(0),
                reason: Reason::MinCostFallback,
                ..
            }
        ));
        let c = d.counters();
        assert_eq!(
            (c.ecmp_fallbacks, c.min_cost_fallbacks, c.new_flows),
            (1, 1, 4)
        );
    }

    /// A burst counts its hits once a group of [`BURST`] packets (and
    /// takes the idle timeout once a call): the same decisions and
    /// counters as a packet at a time, over several groups of hits, new
    /// flows, packets without a route and flows gone idle.
    #[test]
    fn a_burst_decides_and_counts_as_single_packets_do() {
        let mut single: Decider<4, 64> = Decider::new(DeciderConfig::DEFAULT);
        single
            .install(&two_port_tables(Params::PAPER))
            .expect("valid");
        let mut burst = single.clone();
        let packets: std::vec::Vec<(FlowKey, GroupId)> = (0..70)
            .map(|i| (v4_flow(i % 23), GroupId(if i % 11 == 0 { 9 } else { 1 })))
            .collect();
        let idle = Params::PAPER.idle_timeout_ticks;
        for t in [1, 2, idle + 3] {
            let mut out = [Decision::NoRoute(Reason::Pinned); 70];
            assert_eq!(burst.on_packets(ticks(t), &packets, &mut out), 70);
            for ((key, group), got) in packets.iter().zip(out) {
                assert_eq!(got, single.on_packet(ticks(t), key, *group));
            }
            assert_eq!(burst.counters(), single.counters());
        }
        let c = single.counters();
        assert_eq!(c.packets, 210);
        assert_eq!(c.hits + c.new_flows + c.no_route, c.packets, "{c:?}");
        assert!(
            c.hits > c.new_flows && c.new_flows > c.no_route && c.no_route > 0,
            "{c:?}"
        );
    }

    /// The burst entries return how many packets they decided (the
    /// shorter of the two slices), `gc` how many idle entries it cleared,
    /// and a sample's epoch is half the idle timeout.
    #[test]
    fn bursts_gc_and_sample_epochs_report_what_they_did() {
        let mut d: Decider<4, 64> = Decider::new(DeciderConfig::DEFAULT);
        d.install(&two_port_tables(Params::PAPER)).expect("valid");
        let packets: std::vec::Vec<(FlowKey, GroupId)> =
            (0..5).map(|i| (v4_flow(i), GroupId(1))).collect();
        let mut out = [Decision::NoRoute(Reason::UnknownGroup); 7];
        assert_eq!(d.on_packets(ticks(1), &packets, &mut out), 5);
        assert_eq!(d.on_packets(ticks(1), &packets, &mut out[..3]), 3);
        let mut few = [0u8; 2];
        let n = d.on_packets_by(
            ticks(1),
            &packets,
            |p| (p.0, p.1),
            &mut few,
            |o, dec| {
                *o = dec.port().map_or(0, |p| p.0 + 1);
            },
        );
        assert_eq!(n, 2);
        assert!(few.iter().all(|&p| p > 0), "{few:?}");
        let reads = core::cell::Cell::new(0);
        let n = d.on_packets_with(
            ticks(1),
            &packets,
            |p| (p.0, p.1),
            &mut out,
            |o, dec| *o = dec,
            |_, _| {
                reads.set(reads.get() + 1);
                0
            },
        );
        assert_eq!((n, reads.get()), (5, 5));
        let idle = Params::PAPER.idle_timeout_ticks;
        assert_eq!(d.gc(ticks(idle + 2), 64), 5);
        assert_eq!(d.gc(ticks(idle + 2), 64), 0);
        // Samples 0.6 and 1.5 idle timeouts apart: the first does not start
        // an epoch of half the timeout, the second does.
        let mut want = InFlight::NEW;
        if let Some(c) = d.tables() {
            want.on_install(c, 1);
        }
        let rate = Some((1_000_000_000, Params::PAPER.ticks_per_second));
        for (at, q) in [
            (10, 0u64),
            (10 + idle * 3 / 10, 4096),
            (10 + idle * 3 / 4, 0),
        ] {
            d.sample(ticks(at), PortId(1), q).expect("port");
            want.on_sample(ticks(at), q, rate, idle / 2);
        }
        assert_eq!(d.in_flight.get(1), Some(&want));
    }

    /// A new flow that finds the cache full is refused while every entry's
    /// last packet may still be queued, and takes an entry once one's safe
    /// gap (buffer drain; a one-candidate group has no reorder window) has
    /// passed. tests/stickiness.rs checks the same against testbed8.
    #[test]
    fn a_full_cache_reuses_an_entry_only_past_its_safe_gap() {
        let mut t = Tables::paper_defaults();
        let _ = t.ports.push(crate::PortConfig {
            id: PortId(0),
            rate_bps: 1_000_000_000,
            buffer_bytes: 1 << 20,
        });
        let mut g = crate::Group {
            id: GroupId(1),
            candidates: heapless::Vec::new(),
        };
        let _ = g.candidates.push(crate::Candidate {
            port: PortId(0),
            delay_units: 5,
            capacity_bps: 1_000_000_000,
        });
        let _ = t.groups.push(g);
        let mut d: Decider<1, 16> = Decider::new(DeciderConfig::DEFAULT);
        d.install(&t).expect("valid");
        let flow = |i: u16| {
            let a = core::net::Ipv4Addr::new(10, 0, 0, 1);
            FlowKey::v4(a, a, i, 4791, 17)
        };
        // Bounded, so that a cache that never fills fails the test instead
        // of hanging it (a mutant of `is_vacant` did).
        let mut next = 0;
        while d.flow_cache().len() < 16 && next < 64 {
            let _ = d.on_packet(Instant::from_ticks(1), &flow(next), GroupId(1));
            next += 1;
        }
        assert_eq!(d.flow_cache().len(), 16, "the cache fills");
        let x = flow(next);
        assert_eq!(
            d.on_packet(Instant::from_ticks(2), &x, GroupId(1)),
            Decision::NoRoute(Reason::CacheFull)
        );
        assert_eq!(d.counters().reclaimed, 0);
        // 1 MiB at 1 Gb/s drains in 8 389 ticks of a microsecond.
        let later = Instant::from_ticks(1 + 8_389 + 1);
        assert!(matches!(
            d.on_packet(later, &x, GroupId(1)),
            Decision::New {
                failover: false,
                ..
            }
        ));
        assert_eq!(d.counters().reclaimed, 1);
        assert_eq!(d.flow_cache().len(), 16);
        assert_eq!(d.on_packet(later, &x, GroupId(1)), Decision::Hit(PortId(0)));
        // `may_move` is the predicate `reclaim` used: not at the drain
        // bound, past it; at once on a down port; never on an unknown one.
        let seen = Instant::from_ticks(1);
        assert!(!d.may_move(Instant::from_ticks(1 + 8_389), PortId(0), seen));
        assert!(d.may_move(later, PortId(0), seen));
        assert!(!d.may_move(later, PortId(7), seen));
        d.set_port_up(PortId(0), false).expect("port 0");
        assert!(d.may_move(Instant::from_ticks(2), PortId(0), seen));
    }

    /// Installing validated tables is installing them: the same tables,
    /// the same decision; a port beyond `PORTS` is refused and the
    /// decider keeps what it had.
    #[test]
    fn install_valid_installs_what_install_does() {
        let mut t = Tables::paper_defaults();
        let _ = t.ports.push(crate::PortConfig {
            id: PortId(1),
            rate_bps: 1_000_000_000,
            buffer_bytes: 1 << 20,
        });
        let mut a: Decider<4, 16> = Decider::new(DeciderConfig::DEFAULT);
        let mut b: Decider<4, 16> = Decider::new(DeciderConfig::DEFAULT);
        assert!(a.tables().is_none());
        a.install_valid(t.validated().expect("valid"))
            .expect("fits");
        b.install(&t).expect("valid");
        assert!(a.tables().is_some());
        assert_eq!(a.tables(), b.tables());
        let mut wide = t.clone();
        let _ = wide.ports.push(crate::PortConfig {
            id: PortId(9),
            rate_bps: 1_000_000_000,
            buffer_bytes: 1 << 20,
        });
        assert_eq!(
            a.install_valid(wide.validated().expect("valid")),
            Err(Error::PortOutOfRange(9))
        );
        assert_eq!(a.tables(), b.tables());
    }

    #[test]
    fn use_tables_refreshes_like_install() {
        let mut t = Tables::paper_defaults();
        let _ = t.ports.push(crate::PortConfig {
            id: PortId(1),
            rate_bps: 1_000_000_000,
            buffer_bytes: 1 << 20,
        });
        let mut owned: Decider<4, 16> = Decider::new(DeciderConfig::DEFAULT);
        let mut shared: SharedDecider<4, 16, &CompiledTables> =
            SharedDecider::new(DeciderConfig::DEFAULT);
        let first = t.compile(4).expect("valid");
        owned.install(&t).expect("valid");
        shared.use_tables(&first).expect("fits");
        for d in [0u64, 1 << 19, 1 << 20] {
            owned
                .sample(Instant::from_ticks(5), PortId(1), d)
                .expect("port");
            shared
                .sample(Instant::from_ticks(5), PortId(1), d)
                .expect("port");
        }
        owned.set_tables_current(false);
        shared.set_tables_current(false);
        // New weights: the stored congestion is re-scored at the switch.
        t.params.weights.w_ql = 7;
        let second = t.compile(4).expect("valid");
        owned.install(&t).expect("valid");
        shared.use_tables(&second).expect("fits");
        assert_eq!(owned.signals(PortId(1)), shared.signals(PortId(1)));
        assert_eq!(
            std::format!("{:?}", owned.port_state(PortId(1))),
            std::format!("{:?}", shared.port_state(PortId(1)))
        );
        assert_eq!(
            std::format!("{:?}", owned.in_flight),
            std::format!("{:?}", shared.in_flight)
        );
        assert!(shared.tables_valid, "attaching makes the tables current");
    }

    /// Issue 33 (a): flows crafted offline from the public algorithm (the
    /// fingerprint under a key the attacker guesses) into a victim's two
    /// buckets, sent before the victim's next flow. Returns what the
    /// victim's flow gets on a decider keyed with `key`.
    fn crafted_flows_then_victim(key: FlowCacheKey) -> Decision {
        let mut d: Decider<2, 256> = Decider::new(DeciderConfig::DEFAULT.with_flow_key(key));
        d.install(&two_port_tables(Params::PAPER)).expect("valid");
        let v4 = core::net::Ipv4Addr::new;
        let victim = FlowKey::v4(v4(10, 0, 0, 7), v4(10, 9, 0, 1), 5000, 4791, 17);
        // The attacker's model of the cache: the zero key.
        let guess = |k: &FlowKey| {
            let mut b = d
                .flow_cache()
                .buckets(cache_tag(k.fingerprint(&FlowCacheKey::ZERO), GroupId(1)));
            b.sort_unstable();
            b
        };
        let target = guess(&victim);
        let crafted: std::vec::Vec<FlowKey> = (0..=u16::MAX)
            .map(|sport| FlowKey::v4(v4(10, 0, 0, 66), v4(10, 9, 0, 1), sport, 4791, 17))
            .filter(|k| guess(k) == target)
            .take(2 * BUCKET)
            .collect();
        assert_eq!(crafted.len(), 2 * BUCKET, "enough flows for two buckets");
        for k in &crafted {
            let _ = d.on_packet(ticks(1), k, GroupId(1));
        }
        d.on_packet(ticks(2), &victim, GroupId(1))
    }

    #[test]
    fn crafted_flows_refuse_a_victim_only_on_an_unkeyed_cache() {
        // The attack works where the attacker knows the key (so the test
        // can fail), and not on a keyed cache.
        assert_eq!(
            crafted_flows_then_victim(FlowCacheKey::ZERO),
            Decision::NoRoute(Reason::CacheFull)
        );
        assert!(matches!(
            crafted_flows_then_victim(FlowCacheKey::from_bytes(*b"a per-device key")),
            Decision::New {
                failover: false,
                ..
            }
        ));
    }

    quickcheck::quickcheck! {
        // Issue 33 (a), for any secret key: the crafted flows do not refuse
        // the victim's flow.
        fn crafted_flows_miss_a_keyed_cache(k0: u64, k1: u64) -> quickcheck::TestResult {
            let mut bytes = [0u8; 16];
            bytes[..8].copy_from_slice(&k0.to_le_bytes());
            bytes[8..].copy_from_slice(&k1.to_le_bytes());
            let key = FlowCacheKey::from_bytes(bytes);
            if key.is_zero() {
                return quickcheck::TestResult::discard();
            }
            quickcheck::TestResult::from_bool(matches!(
                crafted_flows_then_victim(key),
                Decision::New { .. }
            ))
        }

        // Issue 33 (b): a flow that shares the victim's whole fingerprint
        // (a forged tag), sent toward a group that does not list the
        // victim's port or toward an unknown group, neither re-pins nor
        // deletes the victim's entry.
        fn a_forged_tag_moves_no_pin(fingerprint: u64, unknown: u16) -> quickcheck::TestResult {
            const IDLE_PAPER: u32 = Params::PAPER.idle_timeout_ticks;
            if unknown <= 2 {
                return quickcheck::TestResult::discard();
            }
            let mut t = two_port_tables(Params::PAPER);
            let mut g2 = t.groups[0].clone();
            g2.id = GroupId(2);
            g2.candidates.retain(|c| c.port == PortId(1));
            t.groups.push(g2).expect("capacity");
            let mut d: Decider<2, 64> = Decider::new(DeciderConfig::DEFAULT);
            d.install(&t).expect("valid");
            let victim = d.route(ticks(1), IDLE_PAPER, GroupId(1), cache_tag(fingerprint, GroupId(1)), |_, _| 0);
            let Some(port) = victim.port() else {
                return quickcheck::TestResult::failed();
            };
            let mut ok = port == PortId(0);
            // Toward group 2 (only port 1): a new flow of group 2.
            ok &= matches!(
                d.route(ticks(2), IDLE_PAPER, GroupId(2), cache_tag(fingerprint, GroupId(2)), |_, _| 0),
                Decision::New { port: PortId(1), failover: false, .. }
            );
            ok &= matches!(
                d.route(ticks(3), IDLE_PAPER, GroupId(unknown), cache_tag(fingerprint, GroupId(unknown)), |_, _| 0),
                Decision::NoRoute(_)
            );
            ok &= d.route(ticks(4), IDLE_PAPER, GroupId(1), cache_tag(fingerprint, GroupId(1)), |_, _| 0) == Decision::Hit(port);
            ok &= d.counters().withdrawals == 0 && d.flow_cache().len() == 2;
            quickcheck::TestResult::from_bool(ok)
        }
    }
}
