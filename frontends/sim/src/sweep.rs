//! `lcmp sim [OPTIONS] sweep`: a grid search over LCMP's settings against
//! baselines, the search behind the tuned profile (`docs/simulator.md`).
//!
//! Every grid point (one value per `--vary` axis) runs the candidate
//! scheme on every scenario (workload x load, each over the base seeds);
//! the baselines run once per scenario. A configuration *beats* a scenario
//! when its mean p50 and its mean p99 are both below every baseline's, and
//! *loses* it when its p50 or p99 is worse than a baseline's by more than
//! twice the standard error of the difference (seed noise). Configurations
//! are ranked by scenarios beaten, then scenarios lost, then the larger of
//! their two worst ratios to the best baseline, then the sum of the two. Output: a Markdown report on stdout and,
//! with `--out DIR`, `sweep.md`, `sweep.json` and `sweep.svg` (each
//! configuration's worst p50 ratio against its worst p99 ratio).

use core::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use plotters::prelude::*;
use serde::Serialize;

use crate::args::{experiment, to_args, SimArgs};
pub use crate::args::{MergeArgs, SweepArgs};
use crate::error::SimError;
use crate::report::{print, summarise, Spread, Summary};
use crate::stats::RunResult;

/// The `lcmp sim` options a `--vary` axis may name.
pub const VARIABLE: [&str; 8] = [
    "profile",
    "saturation",
    "band",
    "weights",
    "queue-thresholds",
    "scheme",
    "sample-us",
    "idle-timeout-ms",
];

/// One grid point: the option values it sets (`None`: not given).
pub type Config = Vec<(String, Option<String>)>;

/// The configurations of `--vary` axes (one empty configuration if none).
///
/// ```
/// # use lcmp_sim::sweep::grid;
/// let g = grid(&["band=-/16".into(), "saturation=5/9".into()]).unwrap();
/// assert_eq!(g.len(), 4);
/// assert_eq!(g[1], vec![("band".into(), None), ("saturation".into(), Some("9".into()))]);
/// assert!(grid(&["colour=red".into()]).is_err());
/// ```
pub fn grid(vary: &[String]) -> Result<Vec<Config>, SimError> {
    let mut out: Vec<Config> = vec![Vec::new()];
    for axis in vary {
        let (name, values) = axis.split_once('=').ok_or_else(|| {
            SimError::Config(format!("--vary: expected NAME=V1/V2/..., got `{axis}`"))
        })?;
        let name = name.trim();
        if !VARIABLE.contains(&name) {
            return Err(SimError::Config(format!(
                "--vary: `{name}` cannot be varied (options: {})",
                VARIABLE.join(", ")
            )));
        }
        if out
            .first()
            .is_some_and(|c| c.iter().any(|(n, _)| n == name))
        {
            return Err(SimError::Config(format!("--vary: `{name}` is given twice")));
        }
        let values: Vec<Option<String>> = values
            .split('/')
            .map(str::trim)
            .map(|v| (v != "-").then(|| v.to_string()))
            .collect();
        if values.iter().flatten().any(String::is_empty) {
            return Err(SimError::Config(format!("--vary: empty value in `{axis}`")));
        }
        out = out
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((name.to_string(), v.clone()));
                    c
                })
            })
            .collect();
        if out.len() > 10_000 {
            return Err(SimError::Config(
                "--vary: more than 10000 configurations".into(),
            ));
        }
    }
    Ok(out)
}

/// A configuration's name: its given options, `base` if none.
pub fn config_name(c: &Config) -> String {
    let given: Vec<String> = c
        .iter()
        .filter_map(|(n, v)| v.as_ref().map(|v| format!("{n}={v}")))
        .collect();
    if given.is_empty() {
        "base".into()
    } else {
        given.join(" ")
    }
}

/// `base` with a configuration's options and the candidate scheme.
fn apply(base: &SimArgs, c: &Config) -> Result<SimArgs, SimError> {
    let mut a = base.clone();
    a.action = None;
    a.schemes = vec!["lcmp".into()];
    for (name, value) in c {
        let Some(v) = value.clone() else { continue };
        let number = |flag: &str| {
            v.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| {
                SimError::Config(format!(
                    "--vary {flag}: expected a positive integer, got `{v}`"
                ))
            })
        };
        match name.as_str() {
            "profile" => a.profile = Some(v),
            "saturation" => a.saturation = Some(v),
            "band" => a.band = Some(v),
            "weights" => a.weights = Some(v),
            "queue-thresholds" => a.queue_thresholds = Some(v),
            "scheme" => a.schemes = vec![v],
            "sample-us" => a.sample_us = number("sample-us")?,
            "idle-timeout-ms" => a.idle_timeout_ms = Some(v),
            // `grid` admits only VARIABLE names.
            other => return Err(SimError::Config(format!("--vary: unknown `{other}`"))),
        }
    }
    Ok(a)
}

/// One scenario's numbers for one scheme or configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// Workload name.
    pub workload: String,
    /// Offered load.
    pub load: f64,
    /// Median slowdown over seeds.
    pub p50: Spread,
    /// 99th-percentile slowdown over seeds.
    pub p99: Spread,
}

/// A configuration's results and score.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scored {
    /// Its name ([`config_name`]).
    pub name: String,
    /// Per scenario.
    pub cells: Vec<Cell>,
    /// Scenarios where its mean p50 and p99 are below every baseline's.
    pub beats: usize,
    /// Scenarios where it is worse than a baseline beyond seed noise.
    pub loses: usize,
    /// Largest `p50 / best baseline p50` over scenarios.
    pub worst_p50_ratio: f64,
    /// Largest `p99 / best baseline p99` over scenarios.
    pub worst_p99_ratio: f64,
}

/// Everything a sweep produced.
#[derive(Clone, Debug, Serialize)]
pub struct SweepReport {
    /// What was swept.
    pub title: String,
    /// Seeds per scenario.
    pub seeds: usize,
    /// Baselines, per scheme name.
    pub baselines: Vec<(String, Vec<Cell>)>,
    /// Configurations, best first.
    pub configs: Vec<Scored>,
    /// Wall-clock time, seconds.
    pub wall_time_s: f64,
}

fn cells(workload: &str, sums: &[Summary], scheme: &str) -> Vec<Cell> {
    sums.iter()
        .filter(|s| s.scheme == scheme)
        .map(|s| Cell {
            workload: workload.to_string(),
            load: s.load,
            p50: s.p50,
            p99: s.p99,
        })
        .collect()
}

/// `a` is worse than `b` by more than twice the standard error of the
/// difference of two means over `n` seeds each.
fn significantly_worse(a: Spread, b: Spread, n: usize) -> bool {
    let n = n.max(1) as f64;
    let se = ((a.sd * a.sd + b.sd * b.sd) / n).sqrt();
    a.mean - b.mean > 2.0 * se && a.mean > b.mean
}

/// Scores a configuration's cells against the baselines'.
pub fn score(
    name: String,
    cells: Vec<Cell>,
    baselines: &[(String, Vec<Cell>)],
    seeds: usize,
) -> Scored {
    let (mut beats, mut loses) = (0, 0);
    let (mut w50, mut w99) = (0.0f64, 0.0f64);
    for c in &cells {
        let same = |b: &&Cell| b.workload == c.workload && b.load == c.load;
        let bs: Vec<&Cell> = baselines
            .iter()
            .filter_map(|(_, v)| v.iter().find(same))
            .collect();
        let best50 = bs.iter().map(|b| b.p50.mean).fold(f64::INFINITY, f64::min);
        let best99 = bs.iter().map(|b| b.p99.mean).fold(f64::INFINITY, f64::min);
        if c.p50.mean < best50 && c.p99.mean < best99 {
            beats += 1;
        }
        if bs.iter().any(|b| {
            significantly_worse(c.p50, b.p50, seeds) || significantly_worse(c.p99, b.p99, seeds)
        }) {
            loses += 1;
        }
        if best50 > 0.0 && best50.is_finite() {
            w50 = w50.max(c.p50.mean / best50);
        }
        if best99 > 0.0 && best99.is_finite() {
            w99 = w99.max(c.p99.mean / best99);
        }
    }
    Scored {
        name,
        cells,
        beats,
        loses,
        worst_p50_ratio: w50,
        worst_p99_ratio: w99,
    }
}

/// Runs the sweep and prints (and writes) its report.
pub fn run(base: &SimArgs, s: &SweepArgs, jobs: usize) -> Result<SweepReport, SimError> {
    let configs = grid(&s.vary)?;
    let workloads = if s.workloads.is_empty() {
        vec![base.workload.clone()]
    } else {
        s.workloads.clone()
    };
    let baselines = if s.baselines.is_empty() {
        vec!["ecmp".to_string(), "ucmp".to_string()]
    } else {
        s.baselines.clone()
    };
    // Build every experiment first, so bad input fails before any run.
    let mut plans = Vec::new();
    for w in &workloads {
        let mut b = base.clone();
        b.action = None;
        b.workload = w.clone();
        b.schemes = baselines.clone();
        let bexp = experiment(&b)?;
        let mut cexps = Vec::new();
        for c in &configs {
            let mut a = apply(&b, c)?;
            a.workload = w.clone();
            cexps.push(experiment(&a)?);
        }
        plans.push((w.clone(), bexp, cexps));
    }
    let seeds = plans.first().map_or(1, |p| p.1.seeds.len());
    let started = std::time::Instant::now();
    let total = plans.len() * (configs.len() + 1);
    let mut done = 0;
    let mut progress = |what: &str| {
        done += 1;
        // Progress is a courtesy: a closed stderr must not stop the sweep.
        let _ = writeln!(
            std::io::stderr(),
            "sweep: {done}/{total} {what} ({:.0} s)",
            started.elapsed().as_secs_f64()
        );
    };
    let mut base_cells: Vec<(String, Vec<Cell>)> =
        baselines.iter().map(|b| (b.clone(), Vec::new())).collect();
    let mut config_cells: Vec<Vec<Cell>> = vec![Vec::new(); configs.len()];
    for (w, bexp, cexps) in &plans {
        let sums = summarise(&bexp.run(jobs, &|| {})?);
        for (name, v) in &mut base_cells {
            v.extend(cells(w, &sums, name));
        }
        progress(&format!("{w}: baselines"));
        for (i, exp) in cexps.iter().enumerate() {
            let sums = summarise(&exp.run(jobs, &|| {})?);
            let scheme = exp.schemes.first().map_or("lcmp", |s| s.name());
            config_cells[i].extend(cells(w, &sums, scheme));
            progress(&format!("{w}: {}", config_name(&configs[i])));
        }
    }
    let names: Vec<String> = configs.iter().map(config_name).collect();
    let title_tail = format!(
        "topology {}, pairs {}",
        base.topology,
        base.pair.as_deref().unwrap_or("default")
    );
    conclude(
        Outcome {
            names,
            base_cells,
            config_cells,
            workloads,
            baselines,
            seeds,
            title_tail,
            wall_time_s: started.elapsed().as_secs_f64(),
        },
        s.out.as_deref(),
        &s.mark,
    )
}

/// What a sweep measured, before scoring.
struct Outcome {
    names: Vec<String>,
    base_cells: Vec<(String, Vec<Cell>)>,
    config_cells: Vec<Vec<Cell>>,
    workloads: Vec<String>,
    baselines: Vec<String>,
    seeds: usize,
    title_tail: String,
    wall_time_s: f64,
}

/// Scores, ranks, prints and (with `out`) writes a sweep's report.
fn conclude(o: Outcome, out: Option<&Path>, mark: &[String]) -> Result<SweepReport, SimError> {
    let Outcome {
        names,
        base_cells,
        config_cells,
        workloads,
        baselines,
        seeds,
        title_tail,
        wall_time_s,
    } = o;
    let n_configs = names.len();
    let mut scored: Vec<Scored> = names
        .into_iter()
        .zip(config_cells)
        .map(|(name, cells)| score(name, cells, &base_cells, seeds))
        .collect();
    scored.sort_by(|a, b| {
        let worst = |c: &Scored| c.worst_p50_ratio.max(c.worst_p99_ratio);
        let sum = |c: &Scored| c.worst_p50_ratio + c.worst_p99_ratio;
        b.beats
            .cmp(&a.beats)
            .then(a.loses.cmp(&b.loses))
            .then(worst(a).total_cmp(&worst(b)))
            .then(sum(a).total_cmp(&sum(b)))
    });
    let loads: Vec<String> = base_cells
        .first()
        .map(|(_, v)| {
            let mut l: Vec<String> = Vec::new();
            for c in v {
                let pct = format!("{:.0}%", c.load * 100.0);
                if !l.contains(&pct) {
                    l.push(pct);
                }
            }
            l
        })
        .unwrap_or_default();
    let title = format!(
        "{} configurations x {} scenarios ({}; loads {}; {} seeds; {}) against {}",
        n_configs,
        base_cells.first().map_or(0, |(_, v)| v.len()),
        workloads.join(", "),
        loads.join(", "),
        seeds,
        title_tail,
        baselines.join(", ")
    );
    let report = SweepReport {
        title,
        seeds,
        baselines: base_cells,
        configs: scored,
        wall_time_s,
    };
    let md = markdown(&report);
    print(&md)?;
    if let Some(dir) = out {
        write(dir, &report, &md, mark)?;
    }
    Ok(report)
}

/// `text` quoted for a POSIX shell when it needs it.
fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The label of a sweep job: `sweep|<workload index>|<workload>|base` or
/// `sweep|<workload index>|<workload>|config|<index>|<name>`.
fn job_label(wi: usize, w: &str, config: Option<(usize, &str)>) -> String {
    match config {
        None => format!("sweep|{wi}|{w}|base"),
        Some((i, name)) => format!("sweep|{wi}|{w}|config|{i}|{name}"),
    }
}

/// `lcmp sim [OPTIONS] sweep ... --emit-jobs`: prints one shell command
/// line per job (baselines, then each configuration, per workload and
/// seed). Every job runs one seed and writes `lcmp sim --json` into the
/// job directory; `lcmp sim merge DIR/*.json` scores them as the sweep
/// would have.
pub fn emit_jobs(base: &SimArgs, s: &SweepArgs) -> Result<(), SimError> {
    let configs = grid(&s.vary)?;
    let workloads = if s.workloads.is_empty() {
        vec![base.workload.clone()]
    } else {
        s.workloads.clone()
    };
    let baselines = if s.baselines.is_empty() {
        vec!["ecmp".to_string(), "ucmp".to_string()]
    } else {
        s.baselines.clone()
    };
    let mut lines = Vec::new();
    let dir = s.job_dir.display().to_string();
    for (wi, w) in workloads.iter().enumerate() {
        let mut b = base.clone();
        b.action = None;
        b.workload = w.clone();
        b.schemes = baselines.clone();
        // Bad input fails here, before any job line is printed.
        let seeds = experiment(&b)?.seeds;
        let mut jobs: Vec<(String, SimArgs)> = vec![("base".into(), b.clone())];
        for (i, c) in configs.iter().enumerate() {
            let mut a = apply(&b, c)?;
            a.workload = w.clone();
            experiment(&a)?;
            a.label = Some(job_label(wi, w, Some((i, &config_name(c)))));
            jobs.push((format!("c{i:04}"), a));
        }
        jobs[0].1.label = Some(job_label(wi, w, None));
        for seed in &seeds {
            for (tag, a) in &jobs {
                let mut a = a.clone();
                a.seed = *seed;
                a.seeds = Some(1);
                a.json = true;
                a.plot = None;
                a.jobs = Some(1);
                let mut words = vec![shell_quote(&s.job_command), "sim".into()];
                words.extend(to_args(&a).iter().map(|x| shell_quote(x)));
                words.extend(["--jobs".into(), "1".into()]);
                let file = format!("{dir}/w{wi}-{tag}-s{seed}.json");
                lines.push(format!(
                    "mkdir -p {} && {} > {}",
                    shell_quote(&dir),
                    words.join(" "),
                    shell_quote(&file)
                ));
            }
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    print(&text)?;
    eprintln!(
        "{} jobs; run them with `parallel < JOBFILE` or a Slurm array, then `lcmp sim merge {}/*.json`",
        lines.len(),
        dir
    );
    Ok(())
}

pub(crate) fn read_run_file(path: &Path) -> Result<(Option<String>, Vec<RunResult>), SimError> {
    let text = std::fs::read_to_string(path).map_err(|e| out_err(path, e))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| SimError::Config(format!("{}: not lcmp sim JSON ({e})", path.display())))?;
    let label = v
        .get("config")
        .and_then(|c| c.get("label"))
        .and_then(|l| l.as_str())
        .map(str::to_string);
    let results = v.get("results").cloned().ok_or_else(|| {
        SimError::Config(format!(
            "{}: no `results` (not lcmp sim --json output)",
            path.display()
        ))
    })?;
    let results: Vec<RunResult> = serde_json::from_value(results)
        .map_err(|e| SimError::Config(format!("{}: bad `results` ({e})", path.display())))?;
    Ok((label, results))
}

/// Orders merged runs by load, then by scheme in the order the files
/// first name them (the order `lcmp sim --schemes` gave, not the
/// alphabet's: baselines stay first), then by seed.
pub(crate) fn order_merged(results: &mut [RunResult]) {
    let mut schemes: Vec<String> = Vec::new();
    for r in results.iter() {
        if !schemes.contains(&r.scheme) {
            schemes.push(r.scheme.clone());
        }
    }
    let rank = |s: &str| schemes.iter().position(|x| x == s).unwrap_or(usize::MAX);
    results.sort_by(|a, b| {
        a.load
            .total_cmp(&b.load)
            .then(rank(&a.scheme).cmp(&rank(&b.scheme)))
            .then(a.seed.cmp(&b.seed))
    });
}

/// `lcmp sim merge FILES...`: sweep jobs become the sweep's report; other
/// runs are concatenated (ordered by load, then scheme in the order the
/// files name them, then seed) into the `lcmp sim` tables, JSON or figures.
pub fn merge(m: &MergeArgs) -> Result<(), SimError> {
    let started = std::time::Instant::now();
    let mut files = Vec::new();
    for f in &m.files {
        files.push(read_run_file(f)?);
    }
    let sweep = !files.is_empty()
        && files
            .iter()
            .all(|(l, _)| l.as_deref().is_some_and(|l| l.starts_with("sweep|")));
    if !sweep {
        let mut results: Vec<RunResult> = files.into_iter().flat_map(|(_, r)| r).collect();
        order_merged(&mut results);
        let title = format!("lcmp sim merge: {} files", m.files.len());
        if m.json {
            let doc = crate::report::JsonReport {
                config: serde_json::json!({ "merged_files": m.files.len() }),
                results: &results,
                summary: summarise(&results),
                comparisons: crate::report::compare(&results),
            };
            let text =
                serde_json::to_string_pretty(&doc).map_err(|e| SimError::Output(e.to_string()))?;
            print(&format!("{text}\n"))?;
        } else {
            print(&crate::report::text(&title, &results))?;
        }
        if let Some(dir) = &m.plot {
            crate::plot::write_all(dir, &title, &results)?;
        }
        return Ok(());
    }
    // Sweep jobs: group by label.
    type Key = (usize, String, Option<(usize, String)>);
    let mut groups: Vec<(Key, Vec<RunResult>)> = Vec::new();
    for (label, results) in files {
        let label = label.unwrap_or_default();
        let parts: Vec<&str> = label.splitn(6, '|').collect();
        let bad = || SimError::Config(format!("merge: bad sweep label `{label}`"));
        let wi: usize = parts.get(1).and_then(|x| x.parse().ok()).ok_or_else(bad)?;
        let w = parts.get(2).ok_or_else(bad)?.to_string();
        let config = match parts.get(3) {
            Some(&"base") => None,
            Some(&"config") => {
                let i: usize = parts.get(4).and_then(|x| x.parse().ok()).ok_or_else(bad)?;
                Some((i, parts.get(5).ok_or_else(bad)?.to_string()))
            }
            _ => return Err(bad()),
        };
        let key = (wi, w, config);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.extend(results),
            None => groups.push((key, results)),
        }
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    let mut workloads: Vec<(usize, String)> = Vec::new();
    let mut names: Vec<(usize, String)> = Vec::new();
    for ((wi, w, c), _) in &groups {
        if !workloads.iter().any(|(i, _)| i == wi) {
            workloads.push((*wi, w.clone()));
        }
        if let Some((i, n)) = c {
            if !names.iter().any(|(j, _)| j == i) {
                names.push((*i, n.clone()));
            }
        }
    }
    names.sort();
    let mut baselines: Vec<String> = Vec::new();
    let mut seeds = 0;
    for ((_, _, c), rs) in &groups {
        if c.is_none() {
            for r in rs {
                if !baselines.contains(&r.scheme) {
                    baselines.push(r.scheme.clone());
                }
            }
            let mut ss: Vec<u64> = rs.iter().map(|r| r.seed).collect();
            ss.sort_unstable();
            ss.dedup();
            seeds = seeds.max(ss.len());
        }
    }
    let mut base_cells: Vec<(String, Vec<Cell>)> =
        baselines.iter().map(|b| (b.clone(), Vec::new())).collect();
    let mut config_cells: Vec<Vec<Cell>> = vec![Vec::new(); names.len()];
    for ((_, w, c), rs) in &groups {
        let sums = summarise(rs);
        match c {
            None => {
                for (name, v) in &mut base_cells {
                    v.extend(cells(w, &sums, name));
                }
            }
            Some((i, _)) => {
                let k = names.iter().position(|(j, _)| j == i).unwrap_or(0);
                let scheme = rs.first().map_or("lcmp", |r| r.scheme.as_str());
                config_cells[k].extend(cells(w, &sums, scheme));
            }
        }
    }
    conclude(
        Outcome {
            names: names.into_iter().map(|(_, n)| n).collect(),
            base_cells,
            config_cells,
            workloads: workloads.into_iter().map(|(_, w)| w).collect(),
            baselines,
            seeds,
            title_tail: format!("merged from {} job files", m.files.len()),
            wall_time_s: started.elapsed().as_secs_f64(),
        },
        m.out.as_deref(),
        &m.mark,
    )
    .map(|_| ())
}

fn pm(s: Spread) -> String {
    format!("{:.2} ± {:.2}", s.mean, s.sd)
}

/// The report as Markdown: the ranking, then per scenario the baselines and
/// the best configurations (at most four).
pub fn markdown(r: &SweepReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Sweep: {}, {:.0} s.\n", r.title, r.wall_time_s);
    let _ = writeln!(
        s,
        "| rank | configuration | beats every baseline (p50 and p99) | worse beyond noise | worst p50 ratio | worst p99 ratio |"
    );
    let _ = writeln!(s, "| --- | --- | --- | --- | --- | --- |");
    let n = r.configs.first().map_or(0, |c| c.cells.len());
    for (i, c) in r.configs.iter().enumerate() {
        let _ = writeln!(
            s,
            "| {} | `{}` | {}/{n} | {}/{n} | {:.2} | {:.2} |",
            i + 1,
            c.name,
            c.beats,
            c.loses,
            c.worst_p50_ratio,
            c.worst_p99_ratio
        );
    }
    let top: Vec<&Scored> = r.configs.iter().take(4).collect();
    let _ = write!(
        s,
        "\nMean ± sd over {} seeds, p50 then p99.\n\n| workload | load |",
        r.seeds
    );
    for (b, _) in &r.baselines {
        let _ = write!(s, " {b} p50 | {b} p99 |");
    }
    for c in &top {
        let _ = write!(s, " `{}` p50 | p99 |", c.name);
    }
    let cols = 2 + 2 * (r.baselines.len() + top.len());
    let _ = writeln!(s, "\n|{}", " --- |".repeat(cols));
    let rows = r.baselines.first().map_or(&[][..], |(_, v)| &v[..]);
    for row in rows {
        let _ = write!(s, "| {} | {:.0}% |", row.workload, row.load * 100.0);
        let find = |v: &[Cell]| {
            v.iter()
                .find(|c| c.workload == row.workload && c.load == row.load)
                .map_or(" - | - |".to_string(), |c| {
                    format!(" {} | {} |", pm(c.p50), pm(c.p99))
                })
        };
        for (_, v) in &r.baselines {
            s.push_str(&find(v));
        }
        for c in &top {
            s.push_str(&find(&c.cells));
        }
        s.push('\n');
    }
    s
}

fn out_err(path: &Path, e: impl core::fmt::Display) -> SimError {
    SimError::Output(format!("{}: {e}", path.display()))
}

fn write(dir: &Path, r: &SweepReport, md: &str, mark: &[String]) -> Result<(), SimError> {
    std::fs::create_dir_all(dir).map_err(|e| out_err(dir, e))?;
    let p = dir.join("sweep.md");
    std::fs::write(&p, md).map_err(|e| out_err(&p, e))?;
    let p = dir.join("sweep.json");
    let json = serde_json::to_string_pretty(r).map_err(|e| out_err(&p, e))?;
    std::fs::write(&p, json).map_err(|e| out_err(&p, e))?;
    let p = dir.join("sweep.svg");
    figure(&p, r, mark).map_err(|e| out_err(&p, e))?;
    eprintln!(
        "wrote sweep.md, sweep.json and sweep.svg to {}",
        dir.display()
    );
    Ok(())
}

/// Each configuration's worst p50 ratio (x) against its worst p99 ratio
/// (y), both relative to the best baseline of each scenario; below 1 on
/// both axes means better than every baseline everywhere. Colour: how many
/// scenarios it beats. The best and the marked configurations are ringed
/// and labelled.
fn figure(path: &Path, r: &SweepReport, mark: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let xs = r.configs.iter().map(|c| c.worst_p50_ratio);
    let ys = r.configs.iter().map(|c| c.worst_p99_ratio);
    let xmax = xs.fold(1.2f64, f64::max) * 1.1;
    let ymax = ys.fold(1.2f64, f64::max) * 1.1;
    let root = SVGBackend::new(path, (960, 680)).into_drawing_area();
    root.fill(&WHITE)?;
    let (upper, lower) = root.split_vertically(640);
    let mut chart = ChartBuilder::on(&upper)
        .caption(
            "lcmp sim sweep: worst ratio to the best baseline",
            ("sans-serif", 20),
        )
        .margin(14)
        .x_label_area_size(60)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax)?;
    chart
        .configure_mesh()
        .x_desc("worst p50 / best baseline p50 over scenarios")
        .y_desc("worst p99 / best baseline p99")
        .draw()?;
    let n = r.configs.first().map_or(1, |c| c.cells.len()).max(1);
    chart.draw_series(core::iter::once(Rectangle::new(
        [(0.0, 0.0), (1.0, 1.0)],
        RGBColor(44, 160, 44).mix(0.08).filled(),
    )))?;
    chart.draw_series(r.configs.iter().map(|c| {
        let f = c.beats as f64 / n as f64;
        let colour = RGBColor((214.0 * (1.0 - f)) as u8, (160.0 * f) as u8, 40);
        Circle::new((c.worst_p50_ratio, c.worst_p99_ratio), 4, colour.filled())
    }))?;
    let labelled: Vec<(usize, &Scored)> = r
        .configs
        .iter()
        .enumerate()
        .filter(|(i, c)| *i == 0 || mark.contains(&c.name))
        .collect();
    chart.draw_series(labelled.iter().enumerate().map(|(k, (i, c))| {
        EmptyElement::at((c.worst_p50_ratio, c.worst_p99_ratio))
            + Circle::new((0, 0), 8, BLACK.stroke_width(2))
            + Text::new(
                format!("#{} {}", i + 1, c.name),
                (12, 18 * k as i32 - 6),
                ("sans-serif", 14).into_font(),
            )
    }))?;
    lower.draw(&Text::new(
        format!(
            "{} configurations; colour: scenarios beaten (green all {n}, red none); shaded: better than every baseline in every scenario",
            r.configs.len()
        ),
        (80, 12),
        ("sans-serif", 13).into_font(),
    ))?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod test {
    use super::*;

    fn cell(load: f64, p50: f64, p99: f64, sd: f64) -> Cell {
        Cell {
            workload: "w".into(),
            load,
            p50: Spread {
                mean: p50,
                sd,
                lo: p50,
                hi: p50,
            },
            p99: Spread {
                mean: p99,
                sd,
                lo: p99,
                hi: p99,
            },
        }
    }

    #[test]
    fn merged_runs_keep_the_schemes_order_not_the_alphabets() {
        let run = |scheme: &str, load: f64, seed: u64| -> RunResult {
            serde_json::from_value(serde_json::json!({
                "scheme": scheme, "load": load, "seed": seed, "flows": 1,
                "completed": 1, "p50": 1.0, "p99": 1.0, "mean": 1.0,
                "buckets": [], "bins": [], "links": [], "bytes_offered": 1,
                "bytes_delivered": 1, "unrouted": 0, "unpinned": 0,
                "sim_time_s": 0.0, "wall_time_s": 0.0
            }))
            .expect("a run result")
        };
        // Two job files' runs as `--schemes ucmp,lcmp,ecmp` wrote them.
        let mut rs = vec![
            run("ucmp", 0.5, 2),
            run("lcmp", 0.5, 2),
            run("ecmp", 0.3, 2),
            run("ucmp", 0.3, 1),
            run("lcmp", 0.3, 1),
            run("ecmp", 0.3, 1),
        ];
        order_merged(&mut rs);
        let got: Vec<(f64, &str, u64)> = rs
            .iter()
            .map(|r| (r.load, r.scheme.as_str(), r.seed))
            .collect();
        assert_eq!(
            got,
            [
                (0.3, "ucmp", 1),
                (0.3, "lcmp", 1),
                (0.3, "ecmp", 1),
                (0.3, "ecmp", 2),
                (0.5, "ucmp", 2),
                (0.5, "lcmp", 2)
            ]
        );
    }

    #[test]
    fn scoring_counts_beats_losses_and_ratios() {
        let base = vec![
            (
                "ecmp".to_string(),
                vec![cell(0.3, 10.0, 50.0, 1.0), cell(0.8, 20.0, 60.0, 1.0)],
            ),
            (
                "ucmp".to_string(),
                vec![cell(0.3, 20.0, 40.0, 1.0), cell(0.8, 30.0, 55.0, 1.0)],
            ),
        ];
        // Beats 30 % (5 < 10, 20 < 40); at 80 % p50 19 < 20 but p99 56 > 55
        // by less than noise (2 * sqrt(2 / 5) = 1.26).
        let s = score(
            "x".into(),
            vec![cell(0.3, 5.0, 20.0, 1.0), cell(0.8, 19.0, 56.0, 1.0)],
            &base,
            5,
        );
        assert_eq!((s.beats, s.loses), (1, 0));
        assert!((s.worst_p50_ratio - 0.95).abs() < 1e-9);
        assert!((s.worst_p99_ratio - 56.0 / 55.0).abs() < 1e-9);
        // Clearly worse at 80 %: a loss.
        let s = score(
            "y".into(),
            vec![cell(0.3, 5.0, 20.0, 1.0), cell(0.8, 19.0, 70.0, 1.0)],
            &base,
            5,
        );
        assert_eq!((s.beats, s.loses), (1, 1));
    }

    #[test]
    fn grid_rejects_bad_axes() {
        assert!(grid(&[]).map(|g| g.len() == 1).unwrap_or(false));
        assert!(grid(&["band".into()]).is_err());
        assert!(grid(&["band=1/".into()]).is_err());
        assert!(grid(&["band=1".into(), "band=2".into()]).is_err());
        assert_eq!(
            config_name(&grid(&["band=-".into()]).expect("grid")[0]),
            "base"
        );
    }
}
