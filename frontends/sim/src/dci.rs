//! The DCI switches both models host: one real [`Decider`](lcmp_decide::Decider) per DC, its
//! per-switch seed and its clock. The fluid engine ([`crate::engine`]) and
//! the packet model ([`crate::packet`]) differ in what they feed the
//! deciders (a link backlog, a port's queued data bytes), not in how the
//! deciders are built, seeded, sampled or timed.

use lcmp_decide::flow_cache::{SlotBlock, SlotStorage, BLOCK_SLOTS, BUCKET};
use lcmp_decide::{DeciderConfig, DeciderWith, Instant, PortId, Tables};

use crate::error::SimError;
use crate::network::Network;
use crate::run::EngineConfig;

/// Ports per simulated decider (the core's maximum).
const PORTS: usize = 64;
/// The least flow-cache slots of a simulated switch (2^15, every switch's
/// before caches were sized per workload).
pub const MIN_FLOW_SLOTS: usize = 1 << 15;
/// The most: 2^23 (96 MiB a switch).
pub const MAX_FLOW_SLOTS: usize = 1 << 23;

/// Whether a DCI switch's flow cache can have `slots` slots: a power of
/// two from [`BLOCK_SLOTS`] (16) to [`MAX_FLOW_SLOTS`]. The one rule for
/// `--flow-cache` and for the switches a run builds.
///
/// ```
/// use lcmp_sim::dci::valid_flow_slots;
/// assert!(valid_flow_slots(16) && valid_flow_slots(1 << 23));
/// assert!(!valid_flow_slots(8) && !valid_flow_slots(40) && !valid_flow_slots(1 << 24));
/// ```
pub fn valid_flow_slots(slots: usize) -> bool {
    slots.is_power_of_two() && (BLOCK_SLOTS..=MAX_FLOW_SLOTS).contains(&slots)
}

/// A simulated switch's flow-cache slots, sized at run time. Hand-written
/// because `lcmp-decide` allocates nothing: it implements [`SlotStorage`]
/// for a borrowed `[SlotBlock]`, and a decider that owns its slots on the
/// heap needs this owner.
#[derive(Clone, Debug)]
pub(crate) struct Slots(Box<[SlotBlock]>);

impl SlotStorage for Slots {
    #[inline]
    fn slot_count(&self) -> usize {
        self.0.slot_count()
    }

    #[inline]
    fn bucket(&self, b: usize) -> Option<(&[u64; BUCKET], &[u32; BUCKET])> {
        self.0.bucket(b)
    }

    #[inline]
    fn bucket_mut(&mut self, b: usize) -> Option<(&mut [u64; BUCKET], &mut [u32; BUCKET])> {
        self.0.bucket_mut(b)
    }
}

/// A simulated DCI switch's decider.
pub(crate) type Switch = DeciderWith<PORTS, Slots>;

/// The longest a switch with tables `t` may have to keep an idle flow's
/// entry, seconds: its largest safe gap (docs/design.md, "The in-order
/// promise") when nothing is known of its queues, a full buffer's drain
/// `buffer / rate` at a port plus the port's reorder window (how much
/// later than on the group's fastest candidate a packet arrives), and
/// never beyond the idle timeout (the entry expires then).
pub fn worst_safe_gap_s(t: &Tables) -> f64 {
    let p = &t.params;
    let tick_s = 1.0 / f64::from(p.ticks_per_second.max(1));
    let unit_s = f64::from(p.delay_unit_ticks) * tick_s;
    let gap = t
        .ports
        .iter()
        .map(|port| {
            let drain = port.buffer_bytes as f64 * 8.0 / port.rate_bps.max(1) as f64;
            let window = t
                .groups
                .iter()
                .filter_map(|g| {
                    let own = g.candidates.iter().find(|c| c.port == port.id)?;
                    let min = g.candidates.iter().map(|c| c.delay_units).min()?;
                    Some(f64::from(own.delay_units.saturating_sub(min)) * unit_s)
                })
                .fold(0.0, f64::max);
            drain + window
        })
        .fold(0.0, f64::max);
    gap.min(f64::from(p.idle_timeout_ticks) * tick_s)
}

/// Flow-cache slots for a switch that sees `flows_per_s` new flows a
/// second and keeps each entry up to `hold_s` (its [`worst_safe_gap_s`]):
/// as a deployment provisions a cache, twice the entries that can be live
/// at once (a new flow is refused only when both of its two 8-slot
/// buckets hold live flows: at half occupancy about 0.5^16), a power of
/// two between [`MIN_FLOW_SLOTS`] and [`MAX_FLOW_SLOTS`].
///
/// ```
/// use lcmp_sim::dci::{flow_slots, MIN_FLOW_SLOTS};
/// // Web search at 30 % on testbed8's DC1: 35 000 flows a second.
/// assert_eq!(flow_slots(35_000.0, 1.645), 1 << 17);
/// assert_eq!(flow_slots(0.0, 1.645), MIN_FLOW_SLOTS);
/// ```
#[must_use]
pub fn flow_slots(flows_per_s: f64, hold_s: f64) -> usize {
    let live = (flows_per_s.max(0.0) * hold_s.max(0.0)).ceil();
    let want = (2.0 * live).min(MAX_FLOW_SLOTS as f64) as usize;
    want.next_power_of_two()
        .clamp(MIN_FLOW_SLOTS, MAX_FLOW_SLOTS)
}

/// The decider seed of switch `index` for a run's `hash_seed`: a
/// different, fixed ECMP hash per switch, as real switches have.
pub(crate) fn switch_seed(hash_seed: u32, index: usize) -> u32 {
    hash_seed
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add((index as u32).wrapping_mul(0x85EB_CA6B))
}

/// One decider per DC of `net`, each with `cfg.scheme`, its
/// [`switch_seed`] of `cfg.hash_seed`, its DC's tables installed and a
/// flow cache of `cfg.flow_slots`, or else of [`flow_slots`] for
/// `cfg.flow_rate_per_s` and its tables' [`worst_safe_gap_s`].
///
/// # Errors
/// [`SimError::Config`] when `cfg.flow_slots` is not a power of two from
/// [`BLOCK_SLOTS`] to [`MAX_FLOW_SLOTS`]: every DC gets its switch or the
/// run does not start (a missing switch would shift every later DC's
/// switch into the wrong place).
pub(crate) fn switches(net: &Network, cfg: &EngineConfig) -> Result<Vec<Box<Switch>>, SimError> {
    let (scheme, hash_seed) = (cfg.scheme, cfg.hash_seed);
    net.tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let slots = cfg
                .flow_slots
                .unwrap_or_else(|| flow_slots(cfg.flow_rate_per_s, worst_safe_gap_s(t)));
            let refused = || {
                SimError::Config(format!(
                    "flow cache of {slots} slots for DC{}'s switch: expected a power of two from {BLOCK_SLOTS} to {MAX_FLOW_SLOTS}",
                    i + 1
                ))
            };
            // Checked here, not only by the core: whole blocks of a size
            // that is no power of two could still add up to one.
            if !valid_flow_slots(slots) {
                return Err(refused());
            }
            let blocks = vec![SlotBlock::EMPTY; slots / BLOCK_SLOTS].into_boxed_slice();
            let mut d = Box::new(
                Switch::with_storage(
                    DeciderConfig::DEFAULT
                        .with_scheme(scheme)
                        .with_seed(switch_seed(hash_seed, i)),
                    Slots(blocks),
                )
                .map_err(|_| refused())?,
            );
            // `Network::new` built these with `build_tables`, which
            // compiles them; a refusal would be a tables bug, still an
            // error rather than a switch without tables.
            d.install(t).map_err(|e| {
                SimError::Config(format!("DC{}'s switch refused its tables: {e}", i + 1))
            })?;
            Ok(d)
        })
        .collect()
}

/// A decider's clock reading at `us` microseconds of simulated time, at
/// the tick rate of `net`'s tables (`Params::ticks_per_second`, the same
/// for every DC: one profile builds them), through the one conversion
/// every frontend uses ([`lcmp_tables::time::instant`]; it wraps as the
/// core's `Instant` does).
pub(crate) fn instant_at_us(net: &Network, us: u64) -> Instant {
    // By reference: this runs for every decision and sample of a packet
    // run, and `Params` is a few hundred bytes.
    let params = net
        .tables
        .first()
        .map_or(&lcmp_decide::Params::PAPER, |t| &t.params);
    lcmp_tables::time::instant(params, us)
}

/// Feeds `sw` the queued bytes of each of its inter-DC ports: `(core
/// port, bytes)` pairs.
pub(crate) fn sample(sw: &mut Switch, now: Instant, depths: impl Iterator<Item = (u8, u64)>) {
    for (port, depth) in depths {
        let _ = sw.sample(now, PortId(port), depth);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    /// The heap slots keep what the decider writes: many flows through a
    /// switch built by [`switches`], each seen twice, are each a new flow
    /// then a hit on the port first chosen.
    #[test]
    fn a_switch_remembers_its_flows_in_its_heap_slots() {
        let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
        let net = Network::new(&topo, &lcmp_tables::BuildOptions::default()).expect("network");
        let mut sw = switches(&net, &EngineConfig::default()).expect("switches");
        let s = &mut sw[0];
        let group = net.tables[0].groups[0].id;
        let flows: Vec<_> = (0..500u16)
            .map(|i| {
                let src = core::net::Ipv4Addr::new(10, 0, 0, 1);
                lcmp_decide::FlowKey::v4(src, core::net::Ipv4Addr::new(10, 8, 0, 1), i, 80, 17)
            })
            .collect();
        let first: Vec<_> = flows
            .iter()
            .map(|k| s.on_packet(Instant::from_ticks(10), k, group).port())
            .collect();
        let again: Vec<_> = flows
            .iter()
            .map(|k| s.on_packet(Instant::from_ticks(20), k, group).port())
            .collect();
        assert!(first.iter().all(Option::is_some));
        assert_eq!(first, again);
        assert_eq!((s.counters().new_flows, s.counters().hits), (500, 500));
        // And the read-only explanation sees each flow pinned where it went.
        for (k, port) in flows.iter().zip(&first) {
            assert_eq!(s.explain(Instant::from_ticks(30), k, group).pinned, *port);
        }
    }

    #[test]
    fn caches_are_sized_for_the_flow_rate_and_the_largest_safe_gap() {
        let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
        let net = Network::new(&topo, &lcmp_tables::BuildOptions::default()).expect("network");
        // docs/design.md: testbed8's worst case is 1.645 s, a 25 Gbps
        // port behind a full 5 GB buffer (1.6 s) with a 45 ms window.
        let gap = net.tables.iter().map(worst_safe_gap_s).fold(0.0, f64::max);
        assert!((gap - 1.645).abs() < 0.001, "{gap}");
        // Ali storage at 30 % of DC1's 1.6 Tbps: about 1.47 M flows a
        // second, 2.4 M live at once: 2^23 slots; web search: 2^17.
        let mut cfg = EngineConfig {
            flow_rate_per_s: 1.47e6,
            ..EngineConfig::default()
        };
        let sw = switches(&net, &cfg).expect("switches");
        assert_eq!(sw[0].flow_cache().capacity(), 1 << 23);
        cfg.flow_rate_per_s = 35_000.0;
        assert_eq!(
            switches(&net, &cfg).expect("switches")[0]
                .flow_cache()
                .capacity(),
            1 << 17
        );
        // --flow-cache: one size everywhere.
        cfg.flow_slots = Some(1 << 10);
        assert!(switches(&net, &cfg)
            .expect("switches")
            .iter()
            .all(|s| s.flow_cache().capacity() == 1 << 10));
        assert_eq!(flow_slots(1e12, 2.0), MAX_FLOW_SLOTS);
    }

    /// A refused cache size stops the run instead of leaving a DC
    /// without its switch (the old `filter_map` dropped every switch and
    /// returned fewer than one per DC).
    #[test]
    fn a_refused_flow_cache_size_is_an_error_not_a_missing_switch() {
        let topo = lcmp_tables::Topology::embedded("testbed8").expect("testbed8");
        let net = Network::new(&topo, &lcmp_tables::BuildOptions::default()).expect("network");
        for bad in [0, 8, 40, 1000, MAX_FLOW_SLOTS * 2] {
            let cfg = EngineConfig {
                flow_slots: Some(bad),
                ..EngineConfig::default()
            };
            match switches(&net, &cfg) {
                Err(SimError::Config(m)) => {
                    assert!(m.contains(&format!("flow cache of {bad} slots")), "{m}");
                    assert!(m.contains("power of two"), "{m}");
                }
                Err(e) => panic!("{bad}: wrong error {e}"),
                Ok(sw) => panic!("{bad}: accepted, {} switches", sw.len()),
            }
        }
        let cfg = EngineConfig {
            flow_slots: Some(BLOCK_SLOTS),
            ..EngineConfig::default()
        };
        assert_eq!(
            switches(&net, &cfg).expect("16 slots").len(),
            net.tables.len()
        );
    }

    #[test]
    fn every_switch_gets_its_own_seed_and_runs_their_own_seeds_apart() {
        let seeds: Vec<u32> = (0..8).map(|i| switch_seed(1, i)).collect();
        let mut unique = seeds.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), seeds.len(), "{seeds:?}");
        assert_ne!(switch_seed(1, 0), switch_seed(2, 0));
    }
}
