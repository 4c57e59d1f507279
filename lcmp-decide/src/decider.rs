//! The decider: flow cache, congestion monitor and installed tables behind
//! one sans-IO interface (§3.1 runtime workflow, Fig. 2).

use crate::flow_cache::FlowCache;
use crate::fmt::trace;
use crate::hash::{FlowKey, HashAlgorithm};
use crate::monitor::{PortState, Signals};
use crate::select::{decide, evaluate, Explanation, Inputs, Reason, Scheme};
use crate::tables::{CompiledTables, GroupId, Params, PortId, Tables, MAX_PORTS};
use crate::time::Instant;
use crate::Error;

/// Per-switch settings that do not come with the tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DeciderConfig {
    /// The routing scheme.
    pub scheme: Scheme,
    /// The per-switch ECMP hash seed.
    pub seed: u32,
    /// The ECMP hash function.
    pub hash: HashAlgorithm,
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
        /// The flow was pinned to a port that went down (fast failover).
        failover: bool,
    },
    /// The flow cache had no room: routed by the stateless ECMP hash over the
    /// live candidates (consistent per flow), not pinned.
    Unpinned(PortId),
    /// No live candidate, or an unknown group.
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
/// `new_flows`, `failovers`, `unpinned` and `no_route`, so they add up to
/// `packets`; `min_cost_fallbacks` and `ecmp_fallbacks` count reasons among
/// the new decisions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Counters {
    /// Packets seen by `on_packet`.
    pub packets: u64,
    /// Established flows forwarded on their pinned port.
    pub hits: u64,
    /// New flows decided and pinned.
    pub new_flows: u64,
    /// Pinned flows whose port was down, re-decided and re-pinned.
    pub failovers: u64,
    /// Flows routed statelessly because the flow cache was full.
    pub unpinned: u64,
    /// Packets with no route.
    pub no_route: u64,
    /// New decisions that took the minimum-cost fallback.
    pub min_cost_fallbacks: u64,
    /// New decisions that fell back to ECMP (tables outdated).
    pub ecmp_fallbacks: u64,
    /// Idle flow-cache entries cleared by `gc`.
    pub gc_evictions: u64,
    /// Queue samples accepted.
    pub samples: u64,
}

fn bump(counter: &mut u64) {
    *counter = counter.saturating_add(1);
}

/// The LCMP decision core for one DCI switch: `PORTS` ports, a flow cache of
/// `FLOWS` slots (a power of two). No heap; usable in a `static`.
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
/// ```compile_fail
/// let d: lcmp_decide::Decider<65, 1024> = lcmp_decide::Decider::new(Default::default());
/// ```
#[derive(Clone, Debug)]
pub struct Decider<const PORTS: usize, const FLOWS: usize> {
    config: DeciderConfig,
    tables: Option<CompiledTables>,
    tables_valid: bool,
    ports: [PortState; PORTS],
    cache: FlowCache<FLOWS>,
    counters: Counters,
}

impl<const PORTS: usize, const FLOWS: usize> Decider<PORTS, FLOWS> {
    const CHECK: () = assert!(
        PORTS > 0 && PORTS <= MAX_PORTS,
        "Decider PORTS must be between 1 and MAX_PORTS"
    );

    /// A decider with no tables: every packet gets `NoRoute` until
    /// [`Decider::install`].
    pub const fn new(config: DeciderConfig) -> Self {
        let () = Self::CHECK;
        Decider {
            config,
            tables: None,
            tables_valid: false,
            ports: [PortState::NEW; PORTS],
            cache: FlowCache::new(),
            counters: Counters {
                packets: 0,
                hits: 0,
                new_flows: 0,
                failovers: 0,
                unpinned: 0,
                no_route: 0,
                min_cost_fallbacks: 0,
                ecmp_fallbacks: 0,
                gc_evictions: 0,
                samples: 0,
            },
        }
    }

    /// Validates and installs new tables. Hitless: pinned flows keep their
    /// ports, port state is kept, new decisions use the new tables. On error
    /// nothing changes.
    pub fn install(&mut self, tables: &Tables) -> Result<(), Error> {
        let compiled = tables.compile(PORTS)?;
        trace!("lcmp: installed {} groups", compiled.groups().len());
        // New weights or levels apply to the stored congestion at once.
        for (i, state) in self.ports.iter_mut().enumerate() {
            let ctx = u8::try_from(i)
                .ok()
                .and_then(|p| compiled.port_context(PortId(p)));
            state.refresh_c_cong(ctx);
        }
        self.tables = Some(compiled);
        self.tables_valid = true;
        Ok(())
    }

    /// Marks the installed path tables as outdated (`false`) or current
    /// again (`true`). While outdated, LCMP falls back to ECMP over the live
    /// candidates (paper §5); an `install` makes them current.
    pub fn set_tables_current(&mut self, current: bool) {
        self.tables_valid = current;
    }

    /// The installed tables, if any.
    pub fn tables(&self) -> Option<&CompiledTables> {
        self.tables.as_ref()
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
        self.tables
            .as_ref()
            .map_or(Params::PAPER.idle_timeout_ticks, |t| {
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
    pub fn sample(&mut self, now: Instant, port: PortId, queue_bytes: u64) -> Result<(), Error> {
        let i = Self::port_index(port)?;
        let config = self.tables.as_ref().and_then(|t| t.port_context(port));
        if let Some(state) = self.ports.get_mut(i) {
            state.on_sample(now, queue_bytes, config);
            bump(&mut self.counters.samples);
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

    /// A port's monitor state.
    pub fn port_state(&self, port: PortId) -> Option<&PortState> {
        self.ports.get(usize::from(port.0))
    }

    /// A port's congestion signals as scores (`Q`, `T`, `D`, `C_cong`).
    pub fn signals(&self, port: PortId) -> Option<Signals> {
        let state = self.port_state(port)?;
        let ctx = self.tables.as_ref().and_then(|t| t.port_context(port));
        Some(state.signals(ctx.as_ref()))
    }

    fn port_up(&self, port: PortId) -> bool {
        self.port_state(port).is_some_and(PortState::is_up)
    }

    /// The counters.
    pub const fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The flow cache (read-only: occupancy for telemetry).
    pub const fn flow_cache(&self) -> &FlowCache<FLOWS> {
        &self.cache
    }

    fn inputs(&self, scheme: Scheme) -> Inputs<'_, PORTS> {
        Inputs {
            tables: self.tables.as_ref(),
            tables_valid: self.tables_valid,
            ports: &self.ports,
            scheme,
        }
    }

    /// Routes one packet (§3.1): an established flow whose port is up follows
    /// its pin; otherwise (new flow, or pinned port down) the flow is decided
    /// and pinned. Total: every input gets a [`Decision`].
    #[must_use]
    pub fn on_packet(&mut self, now: Instant, key: &FlowKey, group: GroupId) -> Decision {
        bump(&mut self.counters.packets);
        let idle = self.idle_timeout();
        let fingerprint = key.fingerprint();
        let probe = self.cache.probe(fingerprint, now, idle);
        let pinned = probe.found;
        if let Some(pin) = pinned {
            if self.port_up(pin.port) {
                self.cache.refresh(pin.slot, now);
                bump(&mut self.counters.hits);
                return Decision::Hit(pin.port);
            }
        }
        let hash = key.ecmp_hash(self.config.hash, self.config.seed);
        let (chosen, reason) = decide(&self.inputs(self.config.scheme), group, hash);
        let Some(port) = chosen else {
            if let Some(pin) = pinned {
                self.cache.remove(pin.slot);
            }
            bump(&mut self.counters.no_route);
            return Decision::NoRoute(reason);
        };
        if let Some(pin) = pinned {
            // Lazy failover: only this flow is re-decided, in place.
            self.cache.repin(pin.slot, port, now);
            bump(&mut self.counters.failovers);
            self.count_reason(reason);
            return Decision::New {
                port,
                reason,
                failover: true,
            };
        }
        match self.cache.insert_probed(&probe, fingerprint, port, now) {
            Ok(_) => {
                bump(&mut self.counters.new_flows);
                self.count_reason(reason);
                Decision::New {
                    port,
                    reason,
                    failover: false,
                }
            }
            Err(_) => {
                bump(&mut self.counters.unpinned);
                let (stateless, _) = decide(&self.inputs(Scheme::Ecmp), group, hash);
                // The group had a live candidate a moment ago, so ECMP finds
                // one too; fall back to the LCMP port for totality.
                Decision::Unpinned(stateless.unwrap_or(port))
            }
        }
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
    /// kept set, the hash, the pick and the reason. An established flow on a
    /// live port is reported as [`Reason::Pinned`].
    #[must_use]
    pub fn explain(&self, key: &FlowKey, group: GroupId, now: Instant) -> Explanation {
        let hash = key.ecmp_hash(self.config.hash, self.config.seed);
        let mut explanation = evaluate(&self.inputs(self.config.scheme), group, hash);
        let idle = self.idle_timeout();
        if let Some(pin) = self.cache.lookup(key.fingerprint(), now, idle) {
            explanation.pinned = Some(pin.port);
            if self.port_up(pin.port) {
                explanation.chosen = Some(pin.port);
                explanation.reason = Reason::Pinned;
            }
        }
        explanation
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
