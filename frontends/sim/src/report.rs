//! Text tables and JSON of a sweep's results.

use core::fmt::Write as _;

use serde::Serialize;

use crate::stats::{RunResult, BUCKETS};

/// Mean and sample standard deviation over seeds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    /// Mean over seeds.
    pub mean: f64,
    /// Sample standard deviation over seeds (0 for one seed).
    pub sd: f64,
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
        Spread { mean, sd }
    }
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
        format!("{:.2}±{:.2}", s.mean, s.sd)
    } else {
        format!("{:.2}", s.mean)
    }
}

fn change(ours: f64, theirs: f64) -> String {
    if theirs.abs() < 1e-12 {
        "n/a".into()
    } else {
        format!("{:+.1}%", (ours - theirs) / theirs * 100.0)
    }
}

/// The text report: per load, a scheme table, LCMP's change against the
/// others, and per-link utilisation and flow share (`*`: overloaded).
pub fn text(title: &str, results: &[RunResult]) -> String {
    let sums = summarise(results);
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
            "{:<9} {:>12} {:>12} {:>12}",
            "scheme", "p50", "p99", "mean"
        );
        for (_, name) in BUCKETS {
            let _ = write!(out, " {:>15}", format!("{name} p50/p99"));
        }
        let _ = writeln!(out);
        for r in &rows {
            let _ = write!(
                out,
                "{:<9} {:>12} {:>12} {:>12}",
                r.scheme,
                cell(r.p50, r.seeds),
                cell(r.p99, r.seeds),
                cell(r.mean, r.seeds)
            );
            for b in &r.buckets {
                let _ = write!(
                    out,
                    " {:>15}",
                    format!("{:.1}/{:.1}", b.p50.mean, b.p99.mean)
                );
            }
            let _ = writeln!(out);
        }
        if let Some(lcmp) = rows.iter().find(|r| r.scheme == "lcmp") {
            for other in rows.iter().filter(|r| r.scheme != "lcmp") {
                let _ = writeln!(
                    out,
                    "lcmp vs {:<8} p50 {:>7}  p99 {:>7}  mean {:>7}",
                    other.scheme,
                    change(lcmp.p50.mean, other.p50.mean),
                    change(lcmp.p99.mean, other.p99.mean),
                    change(lcmp.mean.mean, other.mean.mean)
                );
            }
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
}
