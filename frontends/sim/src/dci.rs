//! The DCI switches both models host: one real [`Decider`] per DC, its
//! per-switch seed and its clock. The fluid engine ([`crate::engine`]) and
//! the packet model ([`crate::packet`]) differ in what they feed the
//! deciders (a link backlog, a port's queued data bytes), not in how the
//! deciders are built, seeded, sampled or timed.

use lcmp_decide::{Decider, DeciderConfig, Instant, PortId, Scheme};

use crate::network::Network;

/// Ports per simulated decider (the core's maximum).
const PORTS: usize = 64;
/// Flow-cache slots per simulated decider.
const FLOWS: usize = 1 << 15;
/// A simulated DCI switch's decider.
pub(crate) type Switch = Decider<PORTS, FLOWS>;

/// The decider seed of switch `index` for a run's `hash_seed`: a
/// different, fixed ECMP hash per switch, as real switches have.
pub(crate) fn switch_seed(hash_seed: u32, index: usize) -> u32 {
    hash_seed
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add((index as u32).wrapping_mul(0x85EB_CA6B))
}

/// One decider per DC of `net`, each with `scheme`, its
/// [`switch_seed`] and its DC's tables installed.
pub(crate) fn switches(net: &Network, scheme: Scheme, hash_seed: u32) -> Vec<Box<Switch>> {
    net.tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut d = Box::new(Switch::new(
                DeciderConfig::DEFAULT
                    .with_scheme(scheme)
                    .with_seed(switch_seed(hash_seed, i)),
            ));
            // `Network::new` built these with `build_tables`, which
            // compiles them; a failure here would be a tables bug.
            let _ = d.install(t);
            d
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
