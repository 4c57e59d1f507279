//! Traffic: Poisson flow arrivals over an arrival window, random host
//! pairs, sizes from a workload CDF, all from one seeded generator.

use crate::engine::FlowSpec;
use crate::rng::Pcg32;
use crate::workload::Workload;

/// Which DC pairs exchange traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairs {
    /// Only from one DC to another (the paper's testbed runs: DC1 -> DC8).
    One {
        /// Source DC id.
        src: u16,
        /// Destination DC id.
        dst: u16,
    },
    /// Every ordered pair of distinct DCs, uniformly (paper §6.2).
    AllToAll,
}

/// How flows get their UDP source ports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SourcePorts {
    /// Uniform in `1024..65536`.
    #[default]
    Random,
    /// Per host pair, counting up from 10000 (the artifact's `third.cc`:
    /// `portNumder[src][dst]++`).
    PerPair,
}

/// The artifact's first source port of each host pair.
pub const PER_PAIR_FIRST_PORT: u16 = 10_000;

/// What generates the flows of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficSpec {
    /// Who talks to whom.
    pub pairs: Pairs,
    /// Offered load as a fraction of `reference_bps`.
    pub load: f64,
    /// The capacity the load refers to, bits per second.
    pub reference_bps: f64,
    /// Arrivals happen in `[0, window_us)`.
    pub window_us: f64,
    /// Hosts per DC.
    pub hosts_per_dc: u16,
    /// Source-port allocation (the draws are the same either way).
    pub sports: SourcePorts,
}

/// Draws the flows: arrivals at rate `load * reference / (8 * mean size)`.
/// `dcs` lists the DC ids (for [`Pairs::AllToAll`]).
///
/// ```
/// # use lcmp_sim::{rng::Pcg32, traffic::*, workload::Workload};
/// let spec = TrafficSpec { pairs: Pairs::One { src: 1, dst: 8 }, load: 0.3,
///     reference_bps: 1.6e12, window_us: 150_000.0, hosts_per_dc: 16,
///     sports: SourcePorts::Random };
/// let flows = generate(&spec, &Workload::embedded("websearch").unwrap(), &[1, 8], &mut Pcg32::new(1, 0));
/// assert!((4_500..6_000).contains(&flows.len()));
/// ```
pub fn generate(
    spec: &TrafficSpec,
    workload: &Workload,
    dcs: &[u16],
    rng: &mut Pcg32,
) -> Vec<FlowSpec> {
    let mut out = Vec::new();
    let rate_per_us = spec.load * spec.reference_bps / (8.0 * workload.mean_bytes()) * 1e-6;
    if rate_per_us.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater)
        || dcs.len() < 2 && matches!(spec.pairs, Pairs::AllToAll)
    {
        return out;
    }
    let hosts = u32::from(spec.hosts_per_dc.max(1));
    let mut counters: std::collections::HashMap<(u16, u16, u16, u16), u16> =
        std::collections::HashMap::new();
    let mut t = rng.exp(1.0 / rate_per_us);
    while t < spec.window_us {
        let (src, dst) = match spec.pairs {
            Pairs::One { src, dst } => (src, dst),
            Pairs::AllToAll => {
                let n = dcs.len() as u32;
                let a = rng.below(n);
                let b = (a + 1 + rng.below(n - 1)) % n;
                (dcs[a as usize], dcs[b as usize])
            }
        };
        let src_host = rng.below(hosts) as u16;
        let dst_host = rng.below(hosts) as u16;
        let random_port = 1024 + rng.below(64_512) as u16;
        let sport = match spec.sports {
            SourcePorts::Random => random_port,
            SourcePorts::PerPair => {
                let next = counters
                    .entry((src, src_host, dst, dst_host))
                    .or_insert(PER_PAIR_FIRST_PORT);
                let port = *next;
                *next = next.wrapping_add(1);
                port
            }
        };
        out.push(FlowSpec {
            start_us: t,
            src_dc: src,
            dst_dc: dst,
            src_host,
            dst_host,
            sport,
            size: workload.sample(rng),
        });
        t += rng.exp(1.0 / rate_per_us);
    }
    out
}
