//! Text tables and JSON of a sweep's results.

use core::fmt::Write as _;

use serde::Serialize;

use crate::error::SimError;
use crate::stats::{RunResult, BUCKETS};

/// Mean, sample standard deviation and a 95 % bootstrap interval of the
/// mean over seeds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    /// Mean over seeds.
    pub mean: f64,
    /// Sample standard deviation over seeds (0 for one seed).
    pub sd: f64,
    /// Lower end of the 95 % percentile-bootstrap interval of the mean
    /// ([`bootstrap_mean`]; the mean itself for one seed).
    pub lo: f64,
    /// Upper end of that interval.
    pub hi: f64,
}

/// Bootstrap resamples behind every interval.
pub const BOOTSTRAP_RESAMPLES: usize = 4000;

/// The 95 % percentile-bootstrap interval of the mean of `v`: the 2.5th
/// and 97.5th percentiles of the means of [`BOOTSTRAP_RESAMPLES`]
/// resamples with replacement, drawn from a PCG32 seeded by `v.len()`
/// alone (the same data give the same interval on every run). With fewer
/// than two values the interval is the mean itself.
///
/// ```
/// # use lcmp_sim::report::bootstrap_mean;
/// let (lo, hi) = bootstrap_mean(&[1.0, 2.0, 3.0, 4.0, 5.0]);
/// assert!(lo < 3.0 && 3.0 < hi && lo >= 1.0 && hi <= 5.0);
/// assert_eq!(bootstrap_mean(&[7.0]), (7.0, 7.0));
/// ```
pub fn bootstrap_mean(v: &[f64]) -> (f64, f64) {
    let n = v.len();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = v.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, mean);
    }
    let mut rng = crate::rng::Pcg32::new(0xB0_07_57_4A, n as u64);
    let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| (0..n).map(|_| v[rng.below(n as u32) as usize]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at =
        |q: f64| means[((q * BOOTSTRAP_RESAMPLES as f64) as usize).min(BOOTSTRAP_RESAMPLES - 1)];
    (at(0.025), at(0.975))
}

/// The 95 % paired percentile-bootstrap interval of the ratio of means
/// `Σ scheme / Σ baseline` over `pairs` (scheme, baseline) of the same
/// seeds: resampling pairs keeps them paired, and a ratio of positive
/// values is never negative, so the change it gives is never below
/// −100 %. Same resampling as [`bootstrap_mean`].
///
/// ```
/// # use lcmp_sim::report::bootstrap_ratio;
/// let (lo, hi) = bootstrap_ratio(&[(1.0, 10.0), (30.0, 10.0), (2.0, 9.0)]);
/// assert!(lo > 0.0 && lo < 1.1 && hi > 1.0);
/// ```
pub fn bootstrap_ratio(pairs: &[(f64, f64)]) -> (f64, f64) {
    let n = pairs.len();
    let ratio = |it: &mut dyn Iterator<Item = (f64, f64)>| {
        let (a, b) = it.fold((0.0, 0.0), |(x, y), (p, q)| (x + p, y + q));
        if b.abs() > 1e-12 {
            a / b
        } else {
            1.0
        }
    };
    let whole = ratio(&mut pairs.iter().copied());
    if n < 2 {
        return (whole, whole);
    }
    let mut rng = crate::rng::Pcg32::new(0xB0_07_57_4A, n as u64);
    let mut rs: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| ratio(&mut (0..n).map(|_| pairs[rng.below(n as u32) as usize])))
        .collect();
    rs.sort_by(f64::total_cmp);
    let at = |q: f64| rs[((q * BOOTSTRAP_RESAMPLES as f64) as usize).min(BOOTSTRAP_RESAMPLES - 1)];
    (at(0.025), at(0.975))
}

impl Spread {
    /// Of some values (zeros if none).
    pub fn of(v: &[f64]) -> Self {
        if v.is_empty() {
            return Spread::default();
        }
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let sd = if v.len() > 1 {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        let (lo, hi) = bootstrap_mean(v);
        Spread { mean, sd, lo, hi }
    }
}

/// A scheme against a baseline at one load, paired by seed: the mean of
/// the per-seed differences of a statistic, its 95 % paired-bootstrap
/// interval, and in how many seeds the scheme was lower.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The scheme compared.
    pub scheme: String,
    /// The baseline.
    pub baseline: String,
    /// Offered load.
    pub load: f64,
    /// `p50`, `p99` or `mean`.
    pub metric: String,
    /// Seeds both ran.
    pub seeds: usize,
    /// Mean of `scheme - baseline` over those seeds.
    pub diff: f64,
    /// 95 % paired-bootstrap interval of that mean.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// The difference relative to the baseline's mean, percent.
    pub change_pct: f64,
    /// Lower end of the change's 95 % interval, percent: the paired
    /// bootstrap interval of the ratio of means ([`bootstrap_ratio`])
    /// minus 1, so never below −100 %.
    pub lo_pct: f64,
    /// Upper end.
    pub hi_pct: f64,
    /// Seeds in which the scheme's value was below the baseline's.
    pub lower_in: usize,
    /// `lower` (the ratio's interval below 1), `higher` (above 1),
    /// `within noise`, or `one seed` (no interval).
    pub verdict: String,
}

/// The baselines every other scheme is compared with, when present.
pub const BASELINES: [&str; 2] = ["ecmp", "ucmp"];

/// Every scheme against every baseline ([`BASELINES`]; the first scheme
/// if none of them ran), per load and metric, paired by seed.
pub fn compare(results: &[RunResult]) -> Vec<Comparison> {
    let mut out = Vec::new();
    let mut loads: Vec<f64> = Vec::new();
    let mut schemes: Vec<String> = Vec::new();
    for r in results {
        if !loads.contains(&r.load) {
            loads.push(r.load);
        }
        if !schemes.contains(&r.scheme) {
            schemes.push(r.scheme.clone());
        }
    }
    let mut baselines: Vec<String> = schemes
        .iter()
        .filter(|s| BASELINES.contains(&s.as_str()))
        .cloned()
        .collect();
    if baselines.is_empty() {
        baselines.extend(schemes.first().cloned());
    }
    type Metric = (&'static str, fn(&RunResult) -> f64);
    let metrics: [Metric; 3] = [("p50", |r| r.p50), ("p99", |r| r.p99), ("mean", |r| r.mean)];
    for &load in &loads {
        for s in schemes.iter().filter(|s| !baselines.contains(s)) {
            for b in &baselines {
                for (name, f) in metrics {
                    let mut d = Vec::new();
                    let mut pairs = Vec::new();
                    let (mut base_sum, mut lower) = (0.0, 0);
                    for r in results.iter().filter(|r| r.load == load && &r.scheme == s) {
                        if let Some(q) = results
                            .iter()
                            .find(|q| q.load == load && &q.scheme == b && q.seed == r.seed)
                        {
                            d.push(f(r) - f(q));
                            pairs.push((f(r), f(q)));
                            base_sum += f(q);
                            lower += usize::from(f(r) < f(q));
                        }
                    }
                    if d.is_empty() {
                        continue;
                    }
                    let n = d.len();
                    let diff = d.iter().sum::<f64>() / n as f64;
                    let (lo, hi) = bootstrap_mean(&d);
                    let base_mean = base_sum / n as f64;
                    let pct = |x: f64| {
                        if base_mean.abs() > 1e-12 {
                            x / base_mean * 100.0
                        } else {
                            0.0
                        }
                    };
                    let (rlo, rhi) = bootstrap_ratio(&pairs);
                    let verdict = if n < 2 {
                        "one seed"
                    } else if rhi < 1.0 {
                        "lower"
                    } else if rlo > 1.0 {
                        "higher"
                    } else {
                        "within noise"
                    };
                    out.push(Comparison {
                        scheme: s.clone(),
                        baseline: b.clone(),
                        load,
                        metric: name.into(),
                        seeds: n,
                        diff,
                        lo,
                        hi,
                        change_pct: pct(diff),
                        lo_pct: (rlo - 1.0) * 100.0,
                        hi_pct: (rhi - 1.0) * 100.0,
                        lower_in: lower,
                        verdict: verdict.into(),
                    });
                }
            }
        }
    }
    out
}

/// One (scheme, load) over its seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Scheme name.
    pub scheme: String,
    /// Offered load.
    pub load: f64,
    /// Seeds aggregated.
    pub seeds: usize,
    /// Flows per run, averaged.
    pub flows: f64,
    /// Median slowdown.
    pub p50: Spread,
    /// 99th-percentile slowdown.
    pub p99: Spread,
    /// Mean slowdown.
    pub mean: Spread,
    /// Per size bucket.
    pub buckets: Vec<BucketSummary>,
    /// Per link that carried traffic in any seed.
    pub links: Vec<LinkSummary>,
}

/// One size bucket over seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketSummary {
    /// Bucket name, e.g. `<=100KB`.
    pub name: String,
    /// Completed flows in the bucket per run, averaged over seeds.
    pub count: f64,
    /// Median slowdown.
    pub p50: Spread,
    /// 99th-percentile slowdown.
    pub p99: Spread,
}

/// One directed link over seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkSummary {
    /// `from->to`, e.g. `DC1->DC2`.
    pub link: String,
    /// Capacity, Gbit/s.
    pub capacity_gbps: f64,
    /// Utilisation during the arrival window.
    pub utilisation: Spread,
    /// Fraction of flows whose path uses the link.
    pub flow_share: Spread,
    /// Offered load during the window, mean over seeds.
    pub offered_load: f64,
    /// Overloaded in any seed.
    pub overloaded: bool,
}

/// Groups results by (load, scheme), keeping first-seen order.
pub fn summarise(results: &[RunResult]) -> Vec<Summary> {
    let mut keys: Vec<(f64, String)> = Vec::new();
    for r in results {
        if !keys.iter().any(|(l, s)| *l == r.load && *s == r.scheme) {
            keys.push((r.load, r.scheme.clone()));
        }
    }
    keys.into_iter()
        .map(|(load, scheme)| {
            let rs: Vec<&RunResult> = results
                .iter()
                .filter(|r| r.load == load && r.scheme == scheme)
                .collect();
            let of = |f: &dyn Fn(&RunResult) -> f64| {
                Spread::of(&rs.iter().map(|r| f(r)).collect::<Vec<_>>())
            };
            let buckets = BUCKETS
                .iter()
                .enumerate()
                .map(|(i, (_, name))| {
                    let p50 = of(&|r| r.buckets.get(i).map_or(0.0, |b| b.p50));
                    let p99 = of(&|r| r.buckets.get(i).map_or(0.0, |b| b.p99));
                    BucketSummary {
                        name: name.to_string(),
                        count: of(&|r| r.buckets.get(i).map_or(0.0, |b| b.count as f64)).mean,
                        p50,
                        p99,
                    }
                })
                .collect();
            let mut names: Vec<(String, f64)> = Vec::new();
            for r in &rs {
                for l in &r.links {
                    let n = format!("{}->{}", l.from, l.to);
                    if !names.iter().any(|(m, _)| *m == n) {
                        names.push((n, l.capacity_gbps));
                    }
                }
            }
            let links = names
                .into_iter()
                .map(|(n, cap)| {
                    let find = |r: &RunResult| {
                        r.links
                            .iter()
                            .find(|l| format!("{}->{}", l.from, l.to) == n)
                            .cloned()
                    };
                    let util = of(&|r| find(r).map_or(0.0, |l| l.utilisation));
                    let share = of(&|r| find(r).map_or(0.0, |l| l.flow_share));
                    let offered = of(&|r| find(r).map_or(0.0, |l| l.offered_load)).mean;
                    let over = rs.iter().any(|r| find(r).is_some_and(|l| l.overloaded));
                    LinkSummary {
                        link: n,
                        capacity_gbps: cap,
                        utilisation: util,
                        flow_share: share,
                        offered_load: offered,
                        overloaded: over,
                    }
                })
                .collect();
            Summary {
                scheme,
                load,
                seeds: rs.len(),
                flows: of(&|r| r.flows as f64).mean,
                p50: of(&|r| r.p50),
                p99: of(&|r| r.p99),
                mean: of(&|r| r.mean),
                buckets,
                links,
            }
        })
        .collect()
}

fn cell(s: Spread, seeds: usize) -> String {
    if seeds > 1 {
        format!("{:.2} [{:.2},{:.2}]", s.mean, s.lo, s.hi)
    } else {
        format!("{:.2}", s.mean)
    }
}

fn comparison_cell(c: &Comparison) -> String {
    if c.seeds < 2 {
        format!("{:+.1}%", c.change_pct)
    } else {
        format!(
            "{:+.1}% [{:+.1},{:+.1}] {}/{} {}",
            c.change_pct, c.lo_pct, c.hi_pct, c.lower_in, c.seeds, c.verdict
        )
    }
}

/// Flows below which a size bucket's p99 is flagged in the text report.
pub const FEW: f64 = 100.0;

/// The text report: per load, a scheme table, LCMP's change against the
/// others, and per-link utilisation and flow share (`*`: overloaded).
pub fn text(title: &str, results: &[RunResult]) -> String {
    let sums = summarise(results);
    let comparisons = compare(results);
    let mut out = String::new();
    let _ = writeln!(out, "{title}");
    let unpinned: u64 = results.iter().map(|r| r.unpinned).sum();
    let unrouted: u64 = results.iter().map(|r| r.unrouted).sum();
    let unfinished: usize = results.iter().map(|r| r.flows - r.completed).sum();
    if unpinned > 0 {
        let _ = writeln!(
            out,
            "note: {unpinned} decisions were stateless ECMP (a flow cache was full)"
        );
    }
    if unrouted > 0 || unfinished > 0 {
        let _ = writeln!(
            out,
            "note: {unrouted} flows had no route and {unfinished} did not finish (left out of the statistics)"
        );
    }
    let mut loads: Vec<f64> = Vec::new();
    for s in &sums {
        if !loads.contains(&s.load) {
            loads.push(s.load);
        }
    }
    for load in loads {
        let rows: Vec<&Summary> = sums.iter().filter(|s| s.load == load).collect();
        let Some(first) = rows.first() else { continue };
        let _ = writeln!(
            out,
            "\n== load {:.0}% ({:.0} flows per run, {} seed{}) ==",
            load * 100.0,
            first.flows,
            first.seeds,
            if first.seeds == 1 { "" } else { "s" }
        );
        let _ = write!(
            out,
            "{:<11} {:>20} {:>20} {:>20}",
            "scheme", "p50 [95 % CI]", "p99 [95 % CI]", "mean [95 % CI]"
        );
        for (_, name) in BUCKETS {
            let _ = write!(out, " {:>15}", format!("{name} p50/p99"));
        }
        let _ = writeln!(out);
        let mut few = false;
        for r in &rows {
            let _ = write!(
                out,
                "{:<11} {:>20} {:>20} {:>20}",
                r.scheme,
                cell(r.p50, r.seeds),
                cell(r.p99, r.seeds),
                cell(r.mean, r.seeds)
            );
            for b in &r.buckets {
                // `-`: no flow in the bucket; `?`: a p99 of fewer than
                // FEW flows (mostly the largest of them).
                let c = if b.count < 0.5 {
                    "-".to_string()
                } else {
                    format!(
                        "{:.1}/{:.1}{}",
                        b.p50.mean,
                        b.p99.mean,
                        if b.count < FEW { "?" } else { "" }
                    )
                };
                few |= b.count >= 0.5 && b.count < FEW;
                let _ = write!(out, " {c:>15}");
            }
            let _ = writeln!(out);
        }
        if few {
            let _ = writeln!(
                out,
                "?: p99 of fewer than {FEW:.0} flows per run (mostly their largest value); -: no flows"
            );
        }
        let here: Vec<&Comparison> = comparisons.iter().filter(|c| c.load == load).collect();
        if here.iter().any(|c| c.seeds >= 2) {
            let _ = writeln!(
                out,
                "paired by seed: change of the mean % [95 % paired-bootstrap interval of the ratio, %] seeds lower/seeds, verdict"
            );
        } else if !here.is_empty() {
            let _ = writeln!(
                out,
                "change against the baseline, % (one seed: no interval)"
            );
        }
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for c in &here {
            if !pairs.contains(&(c.scheme.as_str(), c.baseline.as_str())) {
                pairs.push((c.scheme.as_str(), c.baseline.as_str()));
            }
        }
        for (s, b) in pairs {
            let get = |m: &str| {
                here.iter()
                    .find(|c| c.scheme == s && c.baseline == b && c.metric == m)
                    .map_or("-".to_string(), |c| comparison_cell(c))
            };
            let _ = writeln!(
                out,
                "{s} vs {b:<8} p50 {}  p99 {}  mean {}",
                get("p50"),
                get("p99"),
                get("mean")
            );
        }
        let _ = writeln!(
            out,
            "links: utilisation / flow share (offered load during the window; * overloaded)"
        );
        let mut names: Vec<(String, f64)> = Vec::new();
        for r in &rows {
            for l in &r.links {
                if !names.iter().any(|(n, _)| *n == l.link) {
                    names.push((l.link.clone(), l.capacity_gbps));
                }
            }
        }
        let _ = write!(out, "{:<18}", "link");
        for r in &rows {
            let _ = write!(out, " {:>20}", r.scheme);
        }
        let _ = writeln!(out);
        for (name, cap) in names {
            let _ = write!(out, "{:<18}", format!("{name} {cap:.0}G"));
            for r in &rows {
                let c = match r.links.iter().find(|l| l.link == name) {
                    Some(l) => format!(
                        "{:.0}%/{:.0}% ({:.2}){}",
                        l.utilisation.mean * 100.0,
                        l.flow_share.mean * 100.0,
                        l.offered_load,
                        if l.overloaded { "*" } else { " " }
                    ),
                    None => "-".into(),
                };
                let _ = write!(out, " {c:>20}");
            }
            let _ = writeln!(out);
        }
    }
    out
}

/// The JSON document of `lcmp sim --json`.
#[derive(Serialize)]
pub struct JsonReport<'a, C: Serialize> {
    /// The settings of the sweep.
    pub config: C,
    /// Every run.
    pub results: &'a [RunResult],
    /// Per (scheme, load) over seeds.
    pub summary: Vec<Summary>,
    /// Every scheme against the baselines, paired by seed ([`compare`]).
    pub comparisons: Vec<Comparison>,
}

/// Writes `text` to stdout. A closed pipe (`lcmp sim ... | head`) is not
/// an error: the reader took what it wanted, so the command goes on
/// quietly (figures of `--plot` are still written) and exits with 0.
/// Any other write error is [`SimError::Output`].
pub fn print(text: &str) -> Result<(), SimError> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(SimError::Output(format!("stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// A flow size as the figures label it: `3k`, `12M`.
#[must_use]
pub fn human(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.0}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.0}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

#[cfg(test)]
pub(crate) mod test {
    use super::*;

    /// A one-flow run result with these percentiles (also vs_artifact's
    /// tests' base).
    pub(crate) fn run(scheme: &str, seed: u64, p50: f64, p99: f64) -> RunResult {
        RunResult {
            scheme: scheme.into(),
            load: 0.3,
            seed,
            flows: 1,
            completed: 1,
            p50,
            p99,
            mean: p50,
            buckets: Vec::new(),
            bins: Vec::new(),
            links: Vec::new(),
            bytes_offered: 0,
            bytes_delivered: 0,
            unrouted: 0,
            unpinned: 0,
            sim_time_s: 0.0,
            wall_time_s: 0.0,
            packet: None,
            pair_flows: None,
        }
    }

    #[test]
    fn paired_comparison_separates_a_consistent_gain_from_noise() {
        let mut rs = Vec::new();
        for seed in 1..=6u64 {
            let noise = seed as f64;
            // ecmp's values swing with the seed; lcmp's p50 is always 2
            // below (a paired gain that unpaired intervals would blur),
            // its p99 alternates above and below.
            rs.push(run("ecmp", seed, 10.0 + noise, 50.0 + noise));
            let wiggle = if seed % 2 == 0 { 1.0 } else { -1.0 };
            rs.push(run("lcmp", seed, 8.0 + noise, 50.0 + noise + wiggle));
        }
        let c = compare(&rs);
        let get = |m: &str| c.iter().find(|c| c.metric == m).expect("metric");
        let p50 = get("p50");
        assert_eq!(
            (p50.verdict.as_str(), p50.lower_in, p50.seeds),
            ("lower", 6, 6)
        );
        assert!((p50.diff + 2.0).abs() < 1e-9 && p50.hi < 0.0);
        assert_eq!(get("p99").verdict, "within noise");
        // Unpaired, the two p50 intervals overlap.
        let e = Spread::of(&[11.0, 12.0, 13.0, 14.0, 15.0, 16.0]);
        let l = Spread::of(&[9.0, 10.0, 11.0, 12.0, 13.0, 14.0]);
        assert!(l.hi > e.lo);
        // One seed: no interval, no verdict.
        let one = compare(&rs[..2]);
        assert!(one.iter().all(|c| c.verdict == "one seed"));
    }
}
