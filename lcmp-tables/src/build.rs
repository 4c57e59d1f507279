//! Bootstrap (§3.1, §3.2): a switch's [`Tables`] from a [`Topology`].
//!
//! One route group per reachable destination DC (`GroupId(dst id)`), whose
//! candidates are the neighbours on minimum-hop paths, in port order. Each
//! candidate's path attributes come from the chosen [`PathMetric`]:
//!
//! * [`PathMetric::FirstHop`] (default, as the paper's artifact): the egress
//!   link's one-way delay in whole delay units, rounded down, and its
//!   capacity.
//! * [`PathMetric::Path`]: the delay summed along the best minimum-hop path
//!   through that neighbour (least delay, then largest bottleneck), rounded
//!   down to whole units, and that path's bottleneck capacity.
//!
//! Ports are the switch's links ([`Topology::ports`]): link rate = link
//! capacity, buffer = the topology's buffer. Queue levels come from each
//! port's buffer unless explicit queue thresholds are given, which then
//! apply to every port. Level scores are
//! `255 * (i + 1) / N`; capacity thresholds are `top * (i + 1) / N` or the
//! given fractions of `top` (default 400 Gbps, the paper's top class).

use alloc::vec::Vec;

use lcmp_decide::tables::{
    default_capacity_thresholds, Candidate, Group, GroupId, QueueThresholds, MAX_CANDIDATES,
    MAX_GROUPS, MAX_LEVELS, MAX_PORTS,
};
use lcmp_decide::{Params, PortConfig, Profile, Tables};

use crate::error::{Count, OptionError, TablesError, TopologyError};
use crate::fraction::Fraction;
use crate::graph::{Graph, ToDst};
use crate::topology::Topology;

/// How a candidate's delay and capacity are derived.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PathMetric {
    /// The egress link only (the paper's artifact).
    #[default]
    FirstHop,
    /// The best minimum-hop path through the candidate neighbour.
    Path,
}

/// The Alg. 1 saturation shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Saturation {
    /// A fixed shift: delays of `1 << s` units or more score 255.
    Shift(u8),
    /// The smallest shift whose saturation point lies above the topology's
    /// largest candidate delay (over every switch and destination, under
    /// the chosen metric), so no candidate saturates: the same shift on
    /// every switch of a topology.
    Auto,
}

impl Default for Saturation {
    /// Shift 5: 32 delay units (32 ms at the default 1 ms unit).
    fn default() -> Self {
        Saturation::Shift(5)
    }
}

/// Knobs of [`build_tables`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildOptions {
    /// Path metric (default first hop).
    pub metric: PathMetric,
    /// Delay saturation (default shift 5).
    pub saturation: Saturation,
    /// The delay unit, microseconds (default 1000: 1 ms).
    pub delay_unit_us: u64,
    /// Scalar settings (default the paper's); `delay_shift` is overwritten
    /// from `saturation`.
    pub params: Params,
    /// Number of levels `N` (default 10).
    pub levels: usize,
    /// The top capacity class, bits per second (default 400 Gbps).
    pub top_capacity_bps: u64,
    /// Capacity thresholds as fractions of `top_capacity_bps`, one per
    /// level; `None`: `(i + 1) / N`.
    pub capacity_fractions: Option<Vec<Fraction>>,
    /// Explicit queue thresholds `qthr[0..N]` (bytes, non-decreasing) for
    /// every port of the switch; `None`: each port's
    /// `floor(buffer * i / N)`.
    pub queue_thresholds: Option<Vec<u64>>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            metric: PathMetric::FirstHop,
            saturation: Saturation::default(),
            delay_unit_us: 1000,
            params: Params::PAPER,
            levels: 10,
            top_capacity_bps: 400_000_000_000,
            capacity_fractions: None,
            queue_thresholds: None,
        }
    }
}

impl BuildOptions {
    /// The default options with `profile`'s parameters and its delay
    /// saturation.
    ///
    /// ```
    /// # use lcmp_tables::{BuildOptions, Saturation};
    /// # use lcmp_decide::Profile;
    /// let o = BuildOptions::for_profile(Profile::Tuned);
    /// assert_eq!(o.saturation, Saturation::Shift(10));
    /// assert_eq!(o.params, Profile::Tuned.params());
    /// assert_eq!(BuildOptions::for_profile(Profile::Paper), BuildOptions::default());
    /// ```
    pub fn for_profile(profile: Profile) -> BuildOptions {
        let params = profile.params();
        BuildOptions {
            params,
            saturation: Saturation::Shift(params.delay_shift),
            ..BuildOptions::default()
        }
    }
}

/// Parses a profile name ([`Profile::from_name`]).
///
/// ```
/// # use lcmp_tables::{parse_profile, OptionError};
/// assert_eq!(parse_profile("tuned"), Ok(lcmp_decide::Profile::Tuned));
/// assert_eq!(parse_profile("x"), Err(OptionError::UnknownProfile));
/// ```
pub fn parse_profile(name: &str) -> Result<Profile, OptionError> {
    Profile::from_name(name.trim()).ok_or(OptionError::UnknownProfile)
}

/// Parses a byte count: digits with an optional `B`, `KB`, `MB`, `GB`
/// (powers of 1000) or `KiB`, `MiB`, `GiB` (powers of 1024).
///
/// ```
/// # use lcmp_tables::{parse_bytes, OptionError};
/// assert_eq!(parse_bytes("5GB"), Ok(5_000_000_000));
/// assert_eq!(parse_bytes("128MiB"), Ok(128 << 20));
/// assert_eq!(parse_bytes("12x"), Err(OptionError::BadByteCount));
/// ```
pub fn parse_bytes(text: &str) -> Result<u64, OptionError> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().map_err(|_| OptionError::BadByteCount)?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return Err(OptionError::BadByteCount),
    };
    n.checked_mul(scale).ok_or(OptionError::BadByteCount)
}

/// Parses explicit queue thresholds for `levels` levels: `levels`
/// comma-separated, non-decreasing byte counts ([`parse_bytes`]), or
/// `wrap32:BYTES`: a BYTES buffer's `floor(BYTES * i / N)` stored modulo
/// 2^32 and read from the top level down, as the paper's artifact stores
/// them (a `uint32` vector in its `dci-switch-node.cc`), turned into the
/// equivalent non-decreasing table by [`crate::derived::scan_equivalent`].
///
/// ```
/// # use lcmp_tables::parse_queue_thresholds;
/// let t = parse_queue_thresholds("wrap32:5GB", 10).unwrap();
/// assert_eq!((t[0], t[1], t[9]), (0, 205_032_704, 205_032_704));
/// assert_eq!(parse_queue_thresholds("0,1KB,2KB", 3).unwrap(), [0, 1000, 2000]);
/// assert!(parse_queue_thresholds("0,2KB,1KB", 3).is_err());
/// assert!(parse_queue_thresholds("0,1KB", 3).is_err());
/// ```
pub fn parse_queue_thresholds(text: &str, levels: usize) -> Result<Vec<u64>, TablesError> {
    let t: Vec<u64> = match text.trim().strip_prefix("wrap32:") {
        Some(buffer) => {
            let buffer = parse_bytes(buffer)?;
            let n = levels.max(1) as u128;
            let raw: Vec<u64> = (0..levels)
                .map(|i| {
                    let thr = u128::from(buffer).saturating_mul(i as u128) / n;
                    (thr % (1u128 << 32)) as u64
                })
                .collect();
            crate::derived::scan_equivalent(&raw).to_vec()
        }
        None => text
            .split(',')
            .map(parse_bytes)
            .collect::<Result<Vec<u64>, _>>()?,
    };
    if t.len() != levels || t.windows(2).any(|w| matches!(w, [a, b] if a > b)) {
        return Err(TablesError::Core(
            lcmp_decide::Error::InvalidQueueThresholds,
        ));
    }
    Ok(t)
}

/// The tables of DCI switch `switch` (a DC id).
///
/// ```
/// # use lcmp_tables::{build_tables, BuildOptions, Topology};
/// # use lcmp_decide::GroupId;
/// let topo = Topology::embedded("testbed8").unwrap();
/// let t = build_tables(&topo, 1, &BuildOptions::default()).unwrap();
/// let g = t.groups.iter().find(|g| g.id == GroupId(8)).unwrap();
/// assert_eq!(g.candidates.len(), 6);
/// assert_eq!(g.candidates[4].delay_units, 5); // via DC6: 5 ms
/// ```
pub fn build_tables(
    topo: &Topology,
    switch: u16,
    opts: &BuildOptions,
) -> Result<Tables, TablesError> {
    topo.validate()?;
    if topo.dc(switch).is_none() {
        return Err(TopologyError::UnknownDc(switch).into());
    }
    if opts.delay_unit_us == 0 {
        return Err(OptionError::ZeroDelayUnit.into());
    }
    let n = opts.levels;
    if n == 0 || n > MAX_LEVELS {
        return Err(OptionError::InvalidLevelCount(n).into());
    }
    // Every reachable destination is a group: refuse too many before the
    // automatic saturation's search (one per destination) and the
    // candidates' (one more each), from one search rooted at the switch
    // (the graph is undirected, so "reaches the switch" is "reachable").
    let graph = topo.graph();
    let reachable = graph.index(switch).map_or(0, |s| {
        graph
            .to_dst(s)
            .hops
            .iter()
            .filter(|h| matches!(h, Some(n) if *n > 0))
            .count()
    });
    if reachable > MAX_GROUPS {
        return Err(TablesError::TooMany {
            what: Count::Groups,
            count: reachable as u64,
        });
    }
    let mut params = opts.params;
    params.delay_shift = match opts.saturation {
        Saturation::Shift(s) => s,
        Saturation::Auto => auto_shift(topo, opts),
    };
    let mut tables = Tables::paper_defaults();
    // The candidates' delays are in `delay_unit_us`; the decider needs the
    // unit in ticks (rounded up: a longer unit only makes it wait longer
    // before reusing an idle flow's entry).
    params.delay_unit_ticks = u32::try_from(
        opts.delay_unit_us
            .saturating_mul(u64::from(params.ticks_per_second))
            .div_ceil(1_000_000),
    )
    .unwrap_or(u32::MAX);
    tables.params = params;
    tables.levels = (0..n)
        .map(|i| {
            // (i + 1) <= n <= 16: the quotient is at most 255.
            (255usize.saturating_mul(i.saturating_add(1)) / n) as u8
        })
        .collect();
    tables.capacity_thresholds_bps = match &opts.capacity_fractions {
        None => default_capacity_thresholds(opts.top_capacity_bps, n),
        Some(fr) => {
            if fr.len() != n {
                return Err(OptionError::InvalidThresholdFractions.into());
            }
            let thr: heapless::Vec<u64, MAX_LEVELS> =
                fr.iter().map(|f| f.of(opts.top_capacity_bps)).collect();
            if thr.windows(2).any(|w| matches!(w, [a, b] if a >= b)) {
                return Err(OptionError::InvalidThresholdFractions.into());
            }
            thr
        }
    };
    let ports = topo.ports(switch);
    for p in &ports {
        let rate = topo.links.get(p.link).map_or(0, |l| l.capacity_bps);
        let cfg = PortConfig {
            id: p.port,
            rate_bps: rate,
            buffer_bytes: topo.buffer_bytes,
        };
        tables
            .ports
            .push(cfg)
            .map_err(|_| TopologyError::TooManyPorts {
                switch,
                count: ports.len(),
            })?;
    }
    if let Some(bytes) = &opts.queue_thresholds {
        let mut table = QueueThresholds::default();
        for p in &tables.ports {
            // As many ports as `tables.ports`, which has the same capacity.
            let _ = table.ports.push(p.id);
        }
        if bytes.len() != n {
            return Err(TablesError::Core(
                lcmp_decide::Error::InvalidQueueThresholds,
            ));
        }
        for &b in bytes {
            let _ = table.bytes.push(b);
        }
        // One table; MAX_QUEUE_TABLES >= 1.
        let _ = tables.queue_thresholds.push(table);
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut dsts: Vec<u16> = topo
        .dcs
        .iter()
        .map(|d| d.id)
        .filter(|&d| d != switch)
        .collect();
    dsts.sort_unstable();
    for dst in dsts {
        let cands = candidates(topo, &graph, switch, dst, opts);
        if cands.is_empty() {
            continue; // unreachable: no group, packets get `UnknownGroup`
        }
        if cands.len() > MAX_CANDIDATES {
            return Err(TopologyError::OversizeGroup {
                group: dst,
                count: cands.len(),
            }
            .into());
        }
        let mut g = Group {
            id: GroupId(dst),
            candidates: heapless::Vec::new(),
        };
        for c in cands {
            g.candidates
                .push(c)
                .map_err(|_| TopologyError::OversizeGroup {
                    group: dst,
                    count: MAX_CANDIDATES,
                })?;
        }
        groups.push(g);
    }
    // At most `reachable <= MAX_GROUPS` groups (checked above).
    for g in groups {
        tables.groups.push(g).map_err(|_| TablesError::TooMany {
            what: Count::Groups,
            count: MAX_GROUPS as u64,
        })?;
    }
    crate::validate_tables(&tables)?;
    Ok(tables)
}

/// `(port, delay_us, capacity_bps)` of each candidate of `switch` towards
/// the destination `to` describes, under the metric, in port order.
fn raw_candidates(
    topo: &Topology,
    graph: &Graph,
    to: &ToDst,
    switch: u16,
    metric: PathMetric,
) -> Vec<(lcmp_decide::PortId, u64, u64)> {
    let Some(s) = graph.index(switch) else {
        return Vec::new();
    };
    graph
        .next_hops(to, s)
        .into_iter()
        .filter_map(|(u, li, port)| {
            // Ports beyond MAX_PORTS do not exist (validation rejects them).
            let port = lcmp_decide::PortId(
                u8::try_from(port)
                    .ok()
                    .filter(|&p| usize::from(p) < MAX_PORTS)?,
            );
            let link = topo.links.get(li)?;
            match metric {
                PathMetric::FirstHop => Some((port, link.delay_us, link.capacity_bps)),
                PathMetric::Path => {
                    let (d, c) = to.best.get(u).copied().flatten()?;
                    Some((
                        port,
                        link.delay_us.saturating_add(d),
                        link.capacity_bps.min(c),
                    ))
                }
            }
        })
        .collect()
}

fn units(delay_us: u64, unit_us: u64) -> u32 {
    u32::try_from(delay_us.checked_div(unit_us).unwrap_or(u64::MAX)).unwrap_or(u32::MAX)
}

fn candidates(
    topo: &Topology,
    graph: &Graph,
    switch: u16,
    dst: u16,
    opts: &BuildOptions,
) -> Vec<Candidate> {
    let Some(d) = graph.index(dst) else {
        return Vec::new();
    };
    let to = graph.to_dst(d);
    raw_candidates(topo, graph, &to, switch, opts.metric)
        .into_iter()
        .map(|(port, d, c)| Candidate {
            port,
            delay_units: units(d, opts.delay_unit_us),
            capacity_bps: c,
        })
        .collect()
}

/// The smallest shift `s <= 31` with `max_delay_units < 1 << s`, `max` over
/// every switch and destination (one search per destination).
fn auto_shift(topo: &Topology, opts: &BuildOptions) -> u8 {
    let graph = topo.graph();
    let mut max = 0u32;
    for d in 0..graph.len() {
        let to = graph.to_dst(d);
        for s in (0..graph.len()).filter(|&s| s != d) {
            let Some(id) = graph.id(s) else { continue };
            for (_, delay, _) in raw_candidates(topo, &graph, &to, id, opts.metric) {
                max = max.max(units(delay, opts.delay_unit_us));
            }
        }
    }
    let mut shift = 0u8;
    while shift < 31 && u64::from(max) >= (1u64 << shift) {
        shift = shift.saturating_add(1);
    }
    shift
}

#[cfg(test)]
mod test {
    use super::*;
    use lcmp_decide::PortId;

    fn testbed() -> Topology {
        Topology::embedded("testbed8").expect("embedded")
    }

    /// The automatic saturation is the smallest shift with every
    /// candidate's delay below `2^shift` units, at most 31.
    #[test]
    fn auto_saturation_covers_the_largest_delay() {
        let two = |delay_us: u64| Topology {
            name: "two".into(),
            dcs: [1, 2]
                .map(|id| crate::Dc {
                    id,
                    name: alloc::format!("D{id}"),
                })
                .to_vec(),
            links: alloc::vec![crate::Link {
                a: 1,
                b: 2,
                capacity_bps: 1,
                delay_us,
            }],
            buffer_bytes: 1,
        };
        let opts = BuildOptions {
            saturation: Saturation::Auto,
            ..BuildOptions::default()
        };
        for (ms, shift) in [
            (0, 0),
            (1, 1),
            (250, 8),
            (255, 8),
            (256, 9),
            (u64::MAX / 1000, 31),
        ] {
            let t = build_tables(&two(ms * 1000), 1, &opts).expect("valid");
            assert_eq!(t.params.delay_shift, shift, "{ms} ms");
        }
    }

    #[test]
    fn byte_units_are_decimal_and_binary() {
        for (text, want) in [
            ("7", 7),
            ("3B", 3),
            ("3KB", 3_000),
            ("3MB", 3_000_000),
            ("3GB", 3_000_000_000),
            ("3KiB", 3 << 10),
            ("3MiB", 3 << 20),
            ("3GiB", 3 << 30),
            (" 2 GiB ", 2 << 30),
        ] {
            assert_eq!(parse_bytes(text), Ok(want), "{text:?}");
        }
        for bad in ["", "GB", "3 TB", "3gb", "18446744073709551615KB"] {
            assert_eq!(parse_bytes(bad), Err(OptionError::BadByteCount), "{bad:?}");
        }
    }

    #[test]
    fn queue_thresholds_need_one_non_decreasing_entry_a_level() {
        assert_eq!(
            parse_queue_thresholds("0,1KB,1KB", 3),
            Ok(alloc::vec![0, 1000, 1000])
        );
        let invalid = Err(TablesError::Core(
            lcmp_decide::Error::InvalidQueueThresholds,
        ));
        assert_eq!(parse_queue_thresholds("0,1KB", 3), invalid, "too few");
        assert_eq!(
            parse_queue_thresholds("0,1KB,2KB,3KB", 3),
            invalid,
            "too many"
        );
        assert_eq!(
            parse_queue_thresholds("0,2KB,1KB", 3),
            invalid,
            "decreasing"
        );
    }

    #[test]
    fn up_to_max_levels_levels() {
        let opts = |levels| BuildOptions {
            levels,
            ..BuildOptions::default()
        };
        let t = build_tables(&testbed(), 1, &opts(MAX_LEVELS)).expect("MAX_LEVELS levels");
        assert_eq!(t.levels.len(), MAX_LEVELS);
        assert_eq!(
            build_tables(&testbed(), 1, &opts(MAX_LEVELS + 1)),
            Err(OptionError::InvalidLevelCount(MAX_LEVELS + 1).into())
        );
        assert_eq!(
            build_tables(&testbed(), 1, &opts(0)),
            Err(OptionError::InvalidLevelCount(0).into())
        );
    }

    /// DC 1 with `n` middle DCs (2..), each linked to DC 1 and to DC 100:
    /// DC 1's group towards DC 100 has `n` candidates.
    fn fan(n: u16) -> Topology {
        let link = |a, b| crate::Link {
            a,
            b,
            capacity_bps: 100_000_000_000,
            delay_us: 1000,
        };
        let mut dcs: Vec<crate::Dc> = [1, 100]
            .into_iter()
            .chain(2..2 + n)
            .map(|id| crate::Dc {
                id,
                name: alloc::format!("D{id}"),
            })
            .collect();
        dcs.sort_by_key(|d| d.id);
        Topology {
            name: "fan".into(),
            dcs,
            links: (2..2 + n)
                .flat_map(|m| [link(1, m), link(m, 100)])
                .collect(),
            buffer_bytes: 1 << 20,
        }
    }

    #[test]
    fn groups_of_up_to_max_candidates() {
        let t = build_tables(&fan(MAX_CANDIDATES as u16), 1, &BuildOptions::default())
            .expect("MAX_CANDIDATES candidates");
        let g = t
            .groups
            .iter()
            .find(|g| g.id == GroupId(100))
            .expect("group 100");
        assert_eq!(g.candidates.len(), MAX_CANDIDATES);
        assert_eq!(
            build_tables(&fan(MAX_CANDIDATES as u16 + 1), 1, &BuildOptions::default()),
            Err(TopologyError::OversizeGroup {
                group: 100,
                count: MAX_CANDIDATES + 1
            }
            .into())
        );
    }

    /// DC 1 linked to two hubs (2, 3), each with `leaves` leaf DCs: DC 1
    /// has `2 + 2 * leaves` destinations.
    fn two_hubs(leaves: u16) -> Topology {
        let link = |a, b| crate::Link {
            a,
            b,
            capacity_bps: 100_000_000_000,
            delay_us: 1000,
        };
        let last = 3 + 2 * leaves;
        Topology {
            name: "hubs".into(),
            dcs: (1..=last)
                .map(|id| crate::Dc {
                    id,
                    name: alloc::format!("D{id}"),
                })
                .collect(),
            links: [link(1, 2), link(1, 3)]
                .into_iter()
                .chain((4..=last).map(|leaf| link(2 + leaf % 2, leaf)))
                .collect(),
            buffer_bytes: 1 << 20,
        }
    }

    #[test]
    fn up_to_max_groups_groups() {
        let leaves = (MAX_GROUPS as u16 - 2) / 2;
        let t = build_tables(&two_hubs(leaves), 1, &BuildOptions::default()).expect("MAX_GROUPS");
        assert_eq!(t.groups.len(), MAX_GROUPS);
        assert_eq!(
            build_tables(&two_hubs(leaves + 1), 1, &BuildOptions::default()),
            Err(TablesError::TooMany {
                what: Count::Groups,
                count: MAX_GROUPS as u64 + 2
            })
        );
    }

    #[test]
    fn testbed8_dc1_first_hop() {
        let t = build_tables(&testbed(), 1, &BuildOptions::default()).expect("build");
        // One group per other DC, sorted by id.
        let ids: Vec<u16> = t.groups.iter().map(|g| g.id.0).collect();
        assert_eq!(ids, [2, 3, 4, 5, 6, 7, 8]);
        let g8 = t
            .groups
            .iter()
            .find(|g| g.id == GroupId(8))
            .expect("group 8");
        let got: Vec<(u8, u32, u64)> = g8
            .candidates
            .iter()
            .map(|c| (c.port.0, c.delay_units, c.capacity_bps / 1_000_000_000))
            .collect();
        assert_eq!(
            got,
            [
                (0, 25, 200),
                (1, 250, 200),
                (2, 10, 100),
                (3, 100, 100),
                (4, 5, 25),
                (5, 50, 25)
            ]
        );
        assert_eq!(t.params.delay_shift, 5);
        assert_eq!(t.ports.len(), 6);
        assert_eq!(
            t.ports[4],
            PortConfig {
                id: PortId(4),
                rate_bps: 25_000_000_000,
                buffer_bytes: 5_000_000_000
            }
        );
        // DC1 -> DC3: the direct link only.
        let g3 = t
            .groups
            .iter()
            .find(|g| g.id == GroupId(3))
            .expect("group 3");
        assert_eq!(g3.candidates.len(), 1);
        assert_eq!(g3.candidates[0].port, PortId(1));
    }

    #[test]
    fn path_metric_and_auto_saturation() {
        let opts = BuildOptions {
            metric: PathMetric::Path,
            saturation: Saturation::Auto,
            ..BuildOptions::default()
        };
        let t = build_tables(&testbed(), 1, &opts).expect("build");
        let g8 = t
            .groups
            .iter()
            .find(|g| g.id == GroupId(8))
            .expect("group 8");
        let delays: Vec<u32> = g8.candidates.iter().map(|c| c.delay_units).collect();
        assert_eq!(delays, [50, 500, 20, 200, 10, 100]);
        // Largest candidate delay in testbed8 under `path`: DC2 -> DC3 via
        // DC1 or DC8 = 25 + 250 = 275 ms... but DC1 -> DC8 via DC3 is 500 ms,
        // so 512 = 1 << 9 is the first power above it.
        assert_eq!(t.params.delay_shift, 9);
    }

    /// A candidate's path capacity is its narrowest link and its delay the
    /// sum, whichever link is the narrow one: the first hop (via DC 2), a
    /// later one (via DC 3), or neither (via DC 5); the first-hop metric
    /// sees only the egress link. (testbed8's paths have equal links, so
    /// they cannot tell `min` from either side.)
    #[test]
    fn path_capacity_is_the_narrowest_link_and_delay_the_sum() {
        const G: u64 = 1_000_000_000;
        let link = |a, b, gbps: u64, delay_us| crate::Link {
            a,
            b,
            capacity_bps: gbps * G,
            delay_us,
        };
        let topo = Topology {
            name: "narrow".into(),
            dcs: (1..=5)
                .map(|id| crate::Dc {
                    id,
                    name: alloc::format!("D{id}"),
                })
                .collect(),
            links: alloc::vec![
                link(1, 2, 100, 1000),
                link(2, 4, 400, 3000),
                link(1, 3, 400, 2000),
                link(3, 4, 25, 5000),
                link(1, 5, 200, 1000),
                link(5, 4, 200, 1000),
            ],
            buffer_bytes: 1 << 20,
        };
        let group4 = |metric| {
            let opts = BuildOptions {
                metric,
                ..BuildOptions::default()
            };
            let t = build_tables(&topo, 1, &opts).expect("build");
            let g = t
                .groups
                .iter()
                .find(|g| g.id == GroupId(4))
                .expect("group 4");
            g.candidates
                .iter()
                .map(|c| (c.port.0, c.delay_units, c.capacity_bps / G))
                .collect::<Vec<_>>()
        };
        // Ports by neighbour id: DC 2 is port 0, DC 3 port 1, DC 5 port 2;
        // delays in 1 ms units.
        assert_eq!(
            group4(PathMetric::Path),
            [(0, 4, 100), (1, 7, 25), (2, 2, 200)]
        );
        assert_eq!(
            group4(PathMetric::FirstHop),
            [(0, 1, 100), (1, 2, 400), (2, 1, 200)]
        );
    }

    #[test]
    fn bso13_dc3_groups() {
        let topo = Topology::embedded("bso13").expect("embedded");
        let t = build_tables(&topo, 3, &BuildOptions::default()).expect("build");
        assert_eq!(t.groups.len(), 12);
        let g12 = t
            .groups
            .iter()
            .find(|g| g.id == GroupId(12))
            .expect("group 12");
        // Neighbours 2, 5, 6, 7 are ports 1, 3, 4, 5.
        let ports: Vec<u8> = g12.candidates.iter().map(|c| c.port.0).collect();
        assert_eq!(ports, [1, 3, 4, 5]);
    }

    #[test]
    fn option_errors() {
        let topo = testbed();
        let o = BuildOptions {
            levels: 17,
            ..BuildOptions::default()
        };
        assert_eq!(
            build_tables(&topo, 1, &o),
            Err(TablesError::Options(OptionError::InvalidLevelCount(17)))
        );
        let o = BuildOptions {
            delay_unit_us: 0,
            ..BuildOptions::default()
        };
        assert_eq!(
            build_tables(&topo, 1, &o),
            Err(TablesError::Options(OptionError::ZeroDelayUnit))
        );
        assert_eq!(
            build_tables(&topo, 42, &BuildOptions::default()),
            Err(TablesError::Topology(TopologyError::UnknownDc(42)))
        );
        let f = |s: &str| Fraction::parse(s).expect("fraction");
        let o = BuildOptions {
            levels: 2,
            capacity_fractions: Some(alloc::vec![f("0.5"), f("0.5")]),
            ..BuildOptions::default()
        };
        assert_eq!(
            build_tables(&topo, 1, &o),
            Err(TablesError::Options(OptionError::InvalidThresholdFractions))
        );
        let o = BuildOptions {
            levels: 2,
            capacity_fractions: Some(alloc::vec![f("0.25"), f("100%")]),
            ..BuildOptions::default()
        };
        let t = build_tables(&topo, 1, &o).expect("build");
        assert_eq!(
            &t.capacity_thresholds_bps[..],
            &[100_000_000_000, 400_000_000_000]
        );
        assert_eq!(&t.levels[..], &[127, 255]);
        let mut p = Params::PAPER;
        p.low_water = 250;
        let o = BuildOptions {
            params: p,
            ..BuildOptions::default()
        };
        assert!(matches!(
            build_tables(&topo, 1, &o),
            Err(TablesError::Core(_))
        ));
    }

    #[test]
    fn profiles_and_explicit_queue_thresholds() {
        let topo = testbed();
        let tuned =
            build_tables(&topo, 1, &BuildOptions::for_profile(Profile::Tuned)).expect("build");
        assert_eq!(tuned.params, Profile::Tuned.params());
        assert_eq!((tuned.params.delay_shift, tuned.params.band), (10, 8));
        assert!(tuned.queue_thresholds.is_empty());
        let thr = parse_queue_thresholds("wrap32:5GB", 10).expect("parse");
        let o = BuildOptions {
            queue_thresholds: Some(thr.clone()),
            ..BuildOptions::default()
        };
        let t = build_tables(&topo, 1, &o).expect("build");
        assert_eq!(t.queue_thresholds.len(), 1);
        let ports: Vec<u8> = t.queue_thresholds[0].ports.iter().map(|p| p.0).collect();
        assert_eq!(ports, [0, 1, 2, 3, 4, 5]);
        assert_eq!(&t.queue_thresholds[0].bytes[..], &thr[..]);
        let r = crate::report::TablesReport::new(&t, 1, None).expect("report");
        assert_eq!(r.ports[4].queue_thresholds_bytes, thr);
        let short = BuildOptions {
            queue_thresholds: Some(thr[..9].to_vec()),
            ..BuildOptions::default()
        };
        assert_eq!(
            build_tables(&topo, 1, &short),
            Err(TablesError::Core(
                lcmp_decide::Error::InvalidQueueThresholds
            ))
        );
        let mut down = thr.clone();
        down[9] = 1;
        let down = BuildOptions {
            queue_thresholds: Some(down),
            ..BuildOptions::default()
        };
        assert_eq!(
            build_tables(&topo, 1, &down),
            Err(TablesError::Core(
                lcmp_decide::Error::InvalidQueueThresholds
            ))
        );
    }

    #[test]
    fn text_options() {
        assert_eq!(parse_bytes(" 1KiB "), Ok(1024));
        assert_eq!(parse_bytes("7"), Ok(7));
        assert_eq!(parse_bytes("99999999999GB"), Err(OptionError::BadByteCount));
        assert_eq!(parse_bytes("GB"), Err(OptionError::BadByteCount));
        assert_eq!(parse_bytes("-1"), Err(OptionError::BadByteCount));
        assert_eq!(
            parse_queue_thresholds("wrap32:x", 10),
            Err(TablesError::Options(OptionError::BadByteCount))
        );
        // A buffer below 2^32 does not wrap: the paper's linear table.
        let lin = parse_queue_thresholds("wrap32:1000", 10).expect("parse");
        assert_eq!(lin, [0, 100, 200, 300, 400, 500, 600, 700, 800, 900]);
        assert_eq!(parse_profile(" Tuned "), Ok(Profile::Tuned));
        assert_eq!(parse_profile("fast"), Err(OptionError::UnknownProfile));
    }

    #[test]
    fn oversize_group() {
        // 17 parallel two-hop paths from DC0 to DC1.
        let mut topo = Topology {
            name: "fan".into(),
            dcs: Vec::new(),
            links: Vec::new(),
            buffer_bytes: 1,
        };
        for id in 0..19u16 {
            topo.dcs.push(crate::topology::Dc {
                id,
                name: alloc::format!("D{id}"),
            });
        }
        for via in 2..19u16 {
            topo.links.push(crate::topology::Link {
                a: 0,
                b: via,
                capacity_bps: 1,
                delay_us: 1,
            });
            topo.links.push(crate::topology::Link {
                a: via,
                b: 1,
                capacity_bps: 1,
                delay_us: 1,
            });
        }
        assert_eq!(
            build_tables(&topo, 0, &BuildOptions::default()),
            Err(TablesError::Topology(TopologyError::OversizeGroup {
                group: 1,
                count: 17
            }))
        );
    }
}
