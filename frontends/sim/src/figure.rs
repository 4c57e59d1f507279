//! Every figure of the paper's evaluation that the simulator reproduces,
//! as data (issue 35 item 3): the `lcmp sim` runs each needs, in the
//! regime that reproduces it, and the artifact's published numbers to set
//! ours beside (`data/artifact-fig*/`, each folder's README naming its
//! source). A newcomer picks a figure by its number ([`figure`]) instead
//! of reading docs/simulator.md for the preset.
//!
//! `lcmp sim figure N` runs a figure's runs on every core ([`run`]),
//! sets ours beside the artifact's per size bin ([`compare`], the
//! reproduction check's band, `vs_artifact::check_curve`) with a verdict
//! per published column, and with `--out DIR` writes the JSON, the
//! per-bin CSV and SVGs of ours beside the artifact's. `--plan` prints
//! the plan, `--emit-jobs` the runs as shell jobs (GNU parallel, Slurm)
//! and `--merge DIR` reads their JSON back. Figures whose runs need
//! something the model does not have yet say so in [`Figure::pending`].

pub mod pair_bins;

/// One `lcmp sim` run of a figure: a label and its arguments (after
/// `lcmp sim`; paths are relative to the repository root).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// What the run is in the figure (a load, a workload, a control, a
    /// weight setting).
    pub label: &'static str,
    /// The `lcmp sim` arguments.
    pub args: &'static [&'static str],
}

/// One published table of the artifact: 20 equal-count size bins, the
/// p50 and p99 FCT slowdown of each of its columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Published {
    /// Which run of the figure it is set beside ([`Run::label`]).
    pub label: &'static str,
    /// The data file, relative to `frontends/sim/data/`.
    pub file: &'static str,
    /// Its text.
    pub csv: &'static str,
}

/// A figure of the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figure {
    /// Its number in the paper.
    pub number: u8,
    /// What it shows.
    pub title: &'static str,
    /// The model that reproduces it (`packet` or `fluid`).
    pub model: &'static str,
    /// The runs it needs.
    pub runs: &'static [Run],
    /// The artifact's numbers to set ours beside.
    pub published: &'static [Published],
    /// What the model still lacks to run it as the artifact did (`None`:
    /// nothing).
    pub pending: Option<&'static str>,
    /// The figure whose runs this one reads (`None`: its own): one set of
    /// runs serves both, so its jobs, plan, merge and runs are that
    /// figure's ([`runs_of`]).
    pub runs_from: Option<u8>,
    /// How its published tables are set beside ours.
    pub comparison: Comparison,
}

/// How a figure's published tables are set beside our runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// All of a run's flows in 20 equal-count size bins, each bin's p50
    /// and p99 against the artifact's within the reproduction check's
    /// band ([`compare`]).
    SizeBins,
    /// The flows of one DC pair (recorded with `--pair-flows`), every
    /// seed pooled, in the artifact's own size bins, by the exact law of
    /// the artifact's rank among ours ([`pair_bins`]): the artifact's
    /// curves of a pair are a handful of flows a bin.
    PairFlows,
}

macro_rules! published {
    ($label:expr, $file:expr) => {
        Published {
            label: $label,
            file: $file,
            csv: include_str!(concat!("../data/", $file)),
        }
    };
}

/// The artifact preset at 30 % load, in the packet model, three seeds.
macro_rules! artifact30 {
    ($($extra:expr),* $(,)?) => {
        &["--model", "packet", "--preset", "artifact", "--load", "0.3", "--seeds", "3", $($extra),*]
    };
}

/// The artifact's 13-DC runs (`simulation/mix/config/13DC-hetero/`):
/// `--preset artifact --topology bso13`, its 13-DC regime (all-to-all web
/// search whose load is relative to the 208 hosts' NICs: its
/// `traffic_WebSearch_13DC-0.{3,5,8}util.txt` carry 5.82, 10.07 and
/// 16.98 Tbps over 10, 10 and 8 ms of arrivals from 2.000 s, 0.28, 0.48
/// and 0.82 of 208 x 100 Gbps; those windows; the settings the preset gives
/// testbed8, as its `config_batch.txt` is the 8-DC one's but for the
/// topology and traffic files; each DCI switch its own PFC pool), with
/// `extra` before the loads and seeds.
macro_rules! bso13 {
    ($($extra:expr),* $(,)?) => {
        &[
            "--model", "packet", "--preset", "artifact", "--topology", "bso13", $($extra,)*
            "--load", "0.3,0.5,0.8", "--seeds", "3",
        ]
    };
}

/// Figure 7's runs (the `bso13!` arguments), recording the flows between
/// DC1 and DC13 (`--pair-flows`, which changes nothing else) so that the
/// same runs also give Figure 8.
const BSO13: &[&str] = bso13!("--pair-flows", "DC1:DC13");

/// Every figure, by number.
pub const FIGURES: &[Figure] = &[
    Figure {
        number: 1,
        title: "Motivation: DC1-DC8 link utilisation and FCT under ECMP, UCMP and LCMP (8 DCs, web search, 30 %)",
        model: "packet",
        runs: &[Run {
            label: "30",
            args: artifact30!(),
        }],
        published: &[published!("30", "artifact-fig1/fct-30.csv")],
        pending: Some("the per-link utilisation of DC1's six links is not compared by the command (artifact-fig1/link-utilization.csv): the artifact's averages sum both directions' bytes over one direction's capacity in 2^30 bit/s, in 10 ms buckets from its trace's first sample to the last flow's completion (analysis/plot_link_utilization.py), and the trace behind them is not published; the JSON's links give ours, docs/simulator.md sets them beside it by hand"),
        runs_from: None,
        comparison: Comparison::SizeBins,
    },
    Figure {
        number: 5,
        title: "FCT slowdown per flow size, ECMP / UCMP / LCMP (8 DCs, web search, 30/50/80 %)",
        model: "packet",
        runs: &[Run {
            label: "30,50,80",
            args: &[
                "--model",
                "packet",
                "--preset",
                "artifact",
                "--load",
                "0.3,0.5,0.8",
                "--seeds",
                "3",
                "--vs-artifact",
            ],
        }],
        published: &[
            published!("30", "artifact-fig5/30.csv"),
            published!("50", "artifact-fig5/50.csv"),
            published!("80", "artifact-fig5/80.csv"),
        ],
        pending: None,
        runs_from: None,
        comparison: Comparison::SizeBins,
    },
    Figure {
        number: 7,
        title: "FCT slowdown per flow size on the 13-DC BSO network, all-to-all (web search, 30/50/80 %)",
        model: "packet",
        runs: &[Run {
            label: "30,50,80",
            args: BSO13,
        }],
        published: &[
            published!("30", "artifact-fig7/30.csv"),
            published!("50", "artifact-fig7/50.csv"),
            published!("80", "artifact-fig7/80.csv"),
        ],
        pending: None,
        runs_from: None,
        comparison: Comparison::SizeBins,
    },
    Figure {
        number: 8,
        title: "Figure 7's runs seen from the DC1-DC13 pair (web search, 30/50/80 %)",
        model: "packet",
        // Figure 7's runs themselves ([`runs_of`]): their `--pair-flows
        // DC1:DC13` records are what `pair_bins` compares.
        runs: &[Run {
            label: "30,50,80",
            args: BSO13,
        }],
        published: &[
            published!("30", "artifact-fig8/30.csv"),
            published!("50", "artifact-fig8/50.csv"),
            published!("80", "artifact-fig8/80.csv"),
        ],
        pending: None,
        runs_from: Some(7),
        comparison: Comparison::PairFlows,
    },
    Figure {
        number: 9,
        title: "LCMP's FCT slowdown with three workloads (8 DCs, DC1-DC8, 30 %)",
        model: "packet",
        runs: &[
            Run {
                label: "alistorage",
                // The artifact's AliStorage flow list spans 5 ms of arrivals.
                args: artifact30!("--workload", "alistorage", "--window", "0.005"),
            },
            Run {
                label: "googlerpc",
                // Its GoogleRPC flow list spans 0.5 ms (10 271 flows).
                args: artifact30!(
                    "--workload",
                    "frontends/sim/data/workload-googlerpc/googlerpc.cdf",
                    "--window",
                    "0.0005"
                ),
            },
            Run {
                label: "websearch",
                args: artifact30!("--workload", "websearch"),
            },
        ],
        published: &[
            published!("alistorage", "artifact-fig9/alistorage-dc1-dc8.csv"),
            published!("googlerpc", "artifact-fig9/googlerpc-dc1-dc8.csv"),
            published!("websearch", "artifact-fig9/websearch-dc1-dc8.csv"),
        ],
        pending: None,
        runs_from: None,
        comparison: Comparison::SizeBins,
    },
    Figure {
        number: 10,
        title: "FCT slowdown per flow size under four congestion controls (8 DCs, web search, 30 %)",
        model: "packet",
        runs: &[
            Run {
                label: "dcqcn",
                args: artifact30!("--cc", "dcqcn"),
            },
            Run {
                label: "hpcc",
                args: artifact30!("--cc", "hpcc"),
            },
            Run {
                label: "timely",
                args: artifact30!("--cc", "timely"),
            },
            Run {
                label: "dctcp",
                args: artifact30!("--cc", "dctcp"),
            },
        ],
        published: &[
            published!("dcqcn", "artifact-fig10/dcqcn.csv"),
            published!("hpcc", "artifact-fig10/hpcc.csv"),
            published!("timely", "artifact-fig10/timely.csv"),
            published!("dctcp", "artifact-fig10/dctcp.csv"),
        ],
        pending: None,
        runs_from: None,
        comparison: Comparison::SizeBins,
    },
    Figure {
        number: 11,
        title: "LCMP's ablations: global weights, path-cost and congestion-cost weights (8 DCs, web search, 30 %)",
        model: "packet",
        runs: &[
            Run {
                label: "normal",
                args: artifact30!("--schemes", "lcmp"),
            },
            Run {
                label: "alpha=0-beta=4",
                args: artifact30!("--schemes", "lcmp", "--weights", "alpha=0,beta=4"),
            },
            Run {
                label: "alpha=4-beta=0",
                args: artifact30!("--schemes", "lcmp", "--weights", "alpha=4,beta=0"),
            },
            Run {
                label: "alpha=2-beta=2",
                args: artifact30!("--schemes", "lcmp", "--weights", "alpha=2,beta=2"),
            },
            Run {
                label: "alpha=1-beta=3",
                args: artifact30!("--schemes", "lcmp", "--weights", "alpha=1,beta=3"),
            },
            Run {
                label: "w_dl=2-w_bw=2",
                args: artifact30!("--schemes", "lcmp", "--weights", "w_dl=2,w_lc=2"),
            },
            Run {
                label: "w_dl=1-w_bw=3",
                args: artifact30!("--schemes", "lcmp", "--weights", "w_dl=1,w_lc=3"),
            },
            Run {
                label: "w_ql=1-w_tl=2-w_dp=1",
                args: artifact30!("--schemes", "lcmp", "--weights", "w_ql=1,w_tl=2,w_dp=1"),
            },
            Run {
                label: "w_ql=1-w_tl=1-w_dp=2",
                args: artifact30!("--schemes", "lcmp", "--weights", "w_ql=1,w_tl=1,w_dp=2"),
            },
        ],
        published: &[
            published!("ablation", "artifact-fig11/ablation-study.csv"),
            published!("global-weight", "artifact-fig11/global-weight.csv"),
            published!("path-cost", "artifact-fig11/path-cost.csv"),
            published!("congestion-cost", "artifact-fig11/congestion-cost.csv"),
        ],
        pending: None,
        runs_from: None,
        comparison: Comparison::SizeBins,
    },
];

/// The figure numbered `n`, if the simulator reproduces it.
///
/// ```
/// let f = lcmp_sim::figure::figure(9).unwrap();
/// assert_eq!(f.runs.len(), 3);
/// assert!(lcmp_sim::figure::figure(6).is_none()); // the testbed's, not the simulator's
/// ```
#[must_use]
pub fn figure(n: u8) -> Option<&'static Figure> {
    FIGURES.iter().find(|f| f.number == n)
}

/// The figure whose runs `f` is made of ([`Figure::runs_from`]): Figure 8
/// is the DC1-DC13 flows of Figure 7's runs, so its jobs, plan, merge and
/// own runs are Figure 7's (one set of runs serves both); every other
/// figure, itself.
///
/// ```
/// use lcmp_sim::figure::{figure, runs_of};
/// assert_eq!(runs_of(figure(8).unwrap()).number, 7);
/// assert_eq!(runs_of(figure(9).unwrap()).number, 9);
/// ```
#[must_use]
pub fn runs_of(f: &'static Figure) -> &'static Figure {
    f.runs_from.and_then(figure).unwrap_or(f)
}

/// A job's name: `figN-RUN`, every character of the run's label outside
/// `[A-Za-z0-9.-]` written `_` (the label and file name of its JSON).
#[must_use]
pub fn job_name(f: &Figure, run: &Run) -> String {
    format!("fig{}-{}", f.number, run.label)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// What `lcmp sim figure N` may change in a figure's runs: the model,
/// the seeds, a cap on the arrival window (a shorter, reduced form).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// `fluid` or `packet` instead of the figure's model.
    pub model: Option<String>,
    /// Seeds 1..=N instead of the figure's 3.
    pub seeds: Option<u64>,
    /// At most this arrival window, seconds.
    pub window_s: Option<f64>,
    /// Only these loads of the figure's (a reduced form: one of Figure
    /// 7's three loads), as fractions.
    pub loads: Option<Vec<f64>>,
}

/// The loads a figure's runs are at, as `lcmp sim` parses its runs
/// ([`experiment`]), each once, in order.
#[cfg(feature = "cli")]
fn figure_loads(f: &Figure) -> Result<Vec<f64>, crate::SimError> {
    let mut loads: Vec<f64> = Vec::new();
    for run in f.runs {
        let (_, exp) = experiment(f, run, &Overrides::default())?;
        for l in exp.loads {
            // The same text parses to the same value: exact.
            if !loads.contains(&l) {
                loads.push(l);
            }
        }
    }
    Ok(loads)
}

/// The `lcmp sim` arguments of one run with `o` applied and `--bins 20`
/// (the artifact's equal-count bins) added.
#[must_use]
pub fn run_args(run: &Run, o: &Overrides) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let mut it = run.args.iter();
    let mut window = None;
    while let Some(&a) = it.next() {
        match (a, it.clone().next()) {
            ("--model", Some(_)) if o.model.is_some() => {
                it.next();
                v.extend(["--model".into(), o.model.clone().unwrap_or_default()]);
            }
            ("--seeds", Some(_)) if o.seeds.is_some() => {
                it.next();
                v.extend(["--seeds".into(), o.seeds.unwrap_or(1).to_string()]);
            }
            ("--load", Some(l)) => {
                it.next();
                let kept: Vec<&str> = match &o.loads {
                    Some(keep) => l
                        .split(',')
                        .filter(|x| x.parse::<f64>().is_ok_and(|x| keep.contains(&x)))
                        .collect(),
                    None => Vec::new(),
                };
                // No override, or a run at none of the loads asked for
                // (the CLI refuses such a load before it gets here): the
                // run's own loads.
                let kept = if kept.is_empty() {
                    (*l).to_string()
                } else {
                    kept.join(",")
                };
                v.extend(["--load".into(), kept]);
            }
            ("--window", Some(w)) => {
                it.next();
                window = w.parse::<f64>().ok();
                if window.is_none() {
                    v.extend(["--window".into(), (*w).to_string()]);
                }
            }
            _ => v.push(a.to_string()),
        }
    }
    let w = match (window, o.window_s) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if let Some(w) = w {
        v.extend(["--window".into(), w.to_string()]);
    }
    v.extend(["--bins".into(), "20".into()]);
    v
}

/// A job's `lcmp sim` arguments: [`run_args`] without `--vs-artifact`,
/// which prints a text verdict and refuses `--json`. A job writes JSON,
/// and `lcmp sim figure N --merge DIR` sets it beside the artifact's
/// curves (with the same 20 bins: `run_args` asks for them).
fn job_args(run: &Run, o: &Overrides) -> Vec<String> {
    let mut v = run_args(run, o);
    v.retain(|a| a != "--vs-artifact");
    v
}

/// The shell job of one run: `lcmp sim ARGS --json --label figN-RUN >
/// DIR/figN-RUN.json` ([`job_name`]; ARGS: [`run_args`] less
/// `--vs-artifact`).
#[must_use]
pub fn job(f: &Figure, run: &Run, o: &Overrides, dir: &str) -> String {
    let name = job_name(f, run);
    format!(
        "lcmp sim {} --json --label {name} > {dir}/{name}.json",
        job_args(run, o).join(" ")
    )
}

/// `run` as one job per load and seed ([`job`]'s command with `--load L
/// --seed S --seeds 1 --jobs 1`, writing `DIR/NAME.lL-sS.json`): the
/// parts `lcmp sim figure N --merge DIR` reads back as the whole run.
#[cfg(feature = "cli")]
pub fn split_jobs(
    f: &Figure,
    run: &Run,
    o: &Overrides,
    dir: &str,
) -> Result<Vec<String>, crate::SimError> {
    let args = job_args(run, o);
    let sim = parse_run(&args).map_err(|e| {
        crate::SimError::Config(format!("figure {} run {}: {e}", f.number, run.label))
    })?;
    let exp = crate::args::experiment(&sim)?;
    let name = job_name(f, run);
    let mut jobs = Vec::new();
    for load in &exp.loads {
        for seed in &exp.seeds {
            let mut v: Vec<String> = Vec::new();
            let mut it = args.iter();
            while let Some(a) = it.next() {
                if matches!(a.as_str(), "--load" | "--seed" | "--seeds" | "--jobs") {
                    it.next();
                } else {
                    v.push(a.clone());
                }
            }
            v.extend([
                "--load".into(),
                load.to_string(),
                "--seed".into(),
                seed.to_string(),
                "--seeds".into(),
                "1".into(),
                "--jobs".into(),
                "1".into(),
            ]);
            jobs.push(format!(
                "lcmp sim {} --json --label {name} > {dir}/{name}.l{load}-s{seed}.json",
                v.join(" ")
            ));
        }
    }
    Ok(jobs)
}

/// The JSON files of `run`'s job in `dir`: its whole-run file
/// (`NAME.json`) and the parts of a split job (`NAME.l*-s*.json`), in
/// name order.
#[cfg(feature = "cli")]
fn job_files(f: &Figure, run: &Run, dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let name = job_name(f, run);
    let whole = format!("{name}.json");
    let part = format!("{name}.l");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n == whole
                            || (n.starts_with(&part)
                                && n.ends_with(".json")
                                && n[part.len()..].contains("-s"))
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// The scheme of a published column that names one (`Ours` is LCMP),
/// `None` for a column that names a run (Figure 11's weights).
#[must_use]
pub fn published_scheme(column: &str) -> Option<&'static str> {
    match column {
        "Ours" => Some("lcmp"),
        "ECMP" => Some("ecmp"),
        "UCMP" => Some("ucmp"),
        _ => None,
    }
}

/// The results a published column is set beside: the run's label, the
/// scheme and, for a table of one load, the load.
#[must_use]
pub fn column_source(
    f: &Figure,
    p: &Published,
    column: &str,
) -> Option<(&'static str, &'static str, Option<f64>)> {
    let scheme = match published_scheme(column) {
        Some(s) => s,
        None => {
            // Figure 11: a column is a run (the artifact names its default
            // weights three ways).
            let label = match column {
                "alpha=3-beta=1" | "w_dl=3-w_bw=1" | "w_ql=2-w_tl=1-w_dp=1" => "normal",
                c => c,
            };
            let run = f.runs.iter().find(|r| r.label == label)?;
            return Some((run.label, "lcmp", None));
        }
    };
    let run = f
        .runs
        .iter()
        .find(|r| r.label == p.label || r.label.split(',').any(|l| l == p.label))?;
    let load = p.label.parse::<f64>().ok().map(|pct| pct / 100.0);
    Some((run.label, scheme, load))
}

/// One published column set beside our runs.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Compared {
    /// The published table's label and file.
    pub table: String,
    /// Its data file (under `frontends/sim/data/`).
    pub file: String,
    /// The column (`Ours`, `ECMP`, a weight setting).
    pub column: String,
    /// Our run it is set beside.
    pub run: String,
    /// The verdict, per bin.
    pub verdict: crate::vs_artifact::Verdict,
}

/// Sets every published column of `f` beside the results of its runs
/// (`results`: per run label, its results) over the bins `bins`. A column
/// whose run is missing is left out; one whose runs lack 20 size bins is
/// named in the second list, with why. Errors: a published table that
/// does not parse.
pub fn compare(
    f: &Figure,
    results: &[(String, Vec<crate::stats::RunResult>)],
    bins: std::ops::Range<usize>,
    band: crate::vs_artifact::Band,
) -> Result<(Vec<Compared>, Vec<String>), String> {
    let mut out = Vec::new();
    let mut not = Vec::new();
    for p in f.published {
        let table = parse_table(p.csv).map_err(|e| format!("{}: {e}", p.file))?;
        for (ci, column) in table[0].values.iter().map(|v| v.0.clone()).enumerate() {
            let Some((run, scheme, load)) = column_source(f, p, &column) else {
                continue;
            };
            let Some((_, rs)) = results.iter().find(|(l, _)| l == run) else {
                continue;
            };
            let runs: Vec<&crate::stats::RunResult> = rs
                .iter()
                .filter(|r| r.scheme == scheme && load.is_none_or(|l| (r.load - l).abs() < 1e-9))
                .collect();
            if runs.is_empty() {
                continue;
            }
            let curve: Vec<(f64, f64)> = table
                .iter()
                .map(|b| (b.values[ci].1, b.values[ci].2))
                .collect();
            let name = format!("{column} ({scheme}, {})", p.file);
            let verdict =
                match crate::vs_artifact::check_curve(&name, &runs, &curve, bins.clone(), band) {
                    Ok(v) => v,
                    Err(e) => {
                        not.push(e);
                        continue;
                    }
                };
            out.push(Compared {
                table: p.label.into(),
                file: p.file.into(),
                column,
                run: run.into(),
                verdict,
            });
        }
    }
    Ok((out, not))
}

/// A CSV field: quoted when it holds a comma or a quote.
fn field(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The per-bin numbers as CSV: one row per compared column and bin.
#[must_use]
pub fn csv(f: &Figure, compared: &[Compared]) -> String {
    let mut s = String::from(
        "figure,table,column,run,load,seeds,bin,size_ours,artifact_flow_size,p50_ours,p50_ours_sd,p50_artifact,p50_band,p50_inside,p99_ours,p99_ours_sd,p99_artifact,p99_band,p99_inside\n",
    );
    for c in compared {
        let sizes = f
            .published
            .iter()
            .find(|p| p.file == c.file)
            .and_then(|p| parse_table(p.csv).ok())
            .unwrap_or_default();
        let v = &c.verdict;
        let half = v.points.len() / 2;
        for (a, b) in v.points[..half].iter().zip(&v.points[half..]) {
            s.push_str(&format!(
                "{},{},{},{},{},{},{},{:.0},{},{:.4},{:.4},{},{:.4},{},{:.4},{:.4},{},{:.4},{}\n",
                f.number,
                field(&c.table),
                field(&c.column),
                field(&c.run),
                v.load,
                v.seeds,
                a.bin,
                a.size,
                sizes.get(a.bin).map_or(0, |b| b.flow_size),
                a.ours,
                a.ours_sd,
                a.published,
                a.band,
                a.inside,
                b.ours,
                b.ours_sd,
                b.published,
                b.band,
                b.inside
            ));
        }
    }
    s
}

/// One line per compared column: its verdict.
#[must_use]
pub fn verdicts(compared: &[Compared], band: crate::vs_artifact::Band) -> String {
    let mut s = format!(
        "verdicts (a point agrees within max({:.0} % of the artifact's value, {}σ of the difference); a column agrees with at most {} of its points outside):\n",
        band.min_rel * 100.0,
        band.sigmas,
        band.max_out
    );
    for c in compared {
        let v = &c.verdict;
        let p50_out = v
            .points
            .iter()
            .filter(|p| p.stat == "p50" && !p.inside)
            .count();
        s.push_str(&format!(
            "  {:<38} {:<22} load {:>3.0}%  {} seed(s)  {:<10} {:>2} of {} points out (p50 {p50_out}, p99 {})\n",
            c.file,
            c.column,
            v.load * 100.0,
            v.seeds,
            if v.agrees { "agrees" } else { "DISAGREES" },
            v.out,
            v.points.len(),
            v.out - p50_out
        ));
    }
    s
}

#[cfg(feature = "cli")]
fn unknown(n: u8) -> crate::SimError {
    let known: Vec<String> = FIGURES.iter().map(|f| f.number.to_string()).collect();
    crate::SimError::Config(format!(
        "figure {n}: the simulator reproduces figures {} (Figure 6 is the testbed's)",
        known.join(", ")
    ))
}

#[cfg(feature = "cli")]
fn overrides(f: &Figure, args: &crate::args::FigureArgs) -> Result<Overrides, crate::SimError> {
    if let Some(m) = &args.model {
        if m != "fluid" && m != "packet" {
            return Err(crate::SimError::Config(format!(
                "--model {m}: give fluid or packet"
            )));
        }
    }
    if args.seeds == Some(0) {
        return Err(crate::SimError::Config("--seeds: give at least 1".into()));
    }
    if let Some(w) = args.window {
        if !(w.is_finite() && w > 0.0) {
            return Err(crate::SimError::Config(format!(
                "--window {w}: give a positive number of seconds"
            )));
        }
    }
    let loads = match &args.load {
        None => None,
        Some(given) => {
            let ours = figure_loads(f)?;
            let mut loads = Vec::new();
            for l in given.split(',') {
                match l.trim().parse::<f64>() {
                    Ok(x) if ours.contains(&x) => loads.push(x),
                    _ => {
                        let known: Vec<String> = ours.iter().map(f64::to_string).collect();
                        return Err(crate::SimError::Config(format!(
                            "--load {l}: figure {} runs at load {}",
                            f.number,
                            known.join(", ")
                        )));
                    }
                }
            }
            Some(loads)
        }
    };
    Ok(Overrides {
        model: args.model.clone(),
        seeds: args.seeds,
        window_s: args.window,
        loads,
    })
}

/// Parses a run's arguments as `lcmp sim` would, resolving the
/// repository-relative data paths when run from elsewhere.
#[cfg(feature = "cli")]
fn parse_run(args: &[String]) -> Result<crate::args::SimArgs, String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    let args = args.iter().map(|a| {
        if a.starts_with("frontends/sim/") && !std::path::Path::new(a).exists() {
            a.replacen("frontends/sim/", root, 1)
        } else {
            a.clone()
        }
    });
    crate::args::parse_sim_args(args)
        .map_err(|e| e.to_string().lines().next().unwrap_or_default().to_string())
}

/// The experiment of one run of `f` with `o` applied, as `lcmp sim`
/// would build it from [`run_args`] (the tests' reduced figures use it).
#[cfg(feature = "cli")]
pub fn experiment(
    f: &Figure,
    run: &Run,
    o: &Overrides,
) -> Result<(crate::args::SimArgs, crate::experiment::Experiment), crate::SimError> {
    let sim = parse_run(&run_args(run, o)).map_err(|e| {
        crate::SimError::Config(format!("figure {} run {}: {e}", f.number, run.label))
    })?;
    let exp = crate::args::experiment(&sim)?;
    Ok((sim, exp))
}

/// `lcmp sim figure N`: runs the figure's runs on `jobs` threads (or
/// prints its plan with `--plan`, its runs as shell jobs with
/// `--emit-jobs`, or reads those jobs' JSON with `--merge DIR`), sets
/// ours beside the artifact's per size bin with a verdict per column,
/// and with `--out DIR` writes `figN.json`, `figN.csv` and one SVG per
/// published table there. `run_label` names a run (the `lcmp sim` run
/// label: model, preset, knobs, seeds, commit, command line).
#[cfg(feature = "cli")]
pub fn run(
    args: &crate::args::FigureArgs,
    jobs: usize,
    run_label: fn(&crate::args::SimArgs, &crate::experiment::Experiment) -> String,
) -> Result<(), crate::SimError> {
    use crate::SimError;
    use std::fmt::Write as _;
    let f = figure(args.number).ok_or_else(|| unknown(args.number))?;
    // The figure whose runs these are (Figure 8: Figure 7's).
    let src = runs_of(f);
    let o = overrides(src, args)?;
    let model = o.model.as_deref().unwrap_or(f.model);
    let out_dir = args.out.clone();
    let dir = out_dir
        .as_ref()
        .map_or_else(|| "figure-runs".to_string(), |d| d.display().to_string());
    let mut out = String::new();
    if args.emit_jobs {
        for run in src.runs {
            if args.split {
                for j in split_jobs(src, run, &o, &dir)? {
                    let _ = writeln!(out, "{j}");
                }
            } else {
                let _ = writeln!(out, "{}", job(src, run, &o, &dir));
            }
        }
        return crate::report::print(&out);
    }
    if args.plan {
        let _ = writeln!(out, "Figure {}: {}", f.number, f.title);
        let _ = writeln!(out, "model: {model} (the figure's: {})", f.model);
        if let Some(p) = f.pending {
            let _ = writeln!(out, "pending: {p}");
        }
        if src.number != f.number {
            let _ = writeln!(
                out,
                "its runs are Figure {}'s (one set of runs serves both: their jobs' files are fig{}-*.json)",
                src.number, src.number
            );
        }
        let _ = writeln!(out, "runs (from the repository root):");
        for run in src.runs {
            let _ = writeln!(
                out,
                "  {:<22} lcmp sim {}",
                run.label,
                run_args(run, &o).join(" ")
            );
        }
        let _ = writeln!(
            out,
            "the artifact's data (frontends/sim/data/, README in each folder):"
        );
        for p in f.published {
            let _ = writeln!(out, "  {:<22} {}", p.label, p.file);
        }
        let _ = writeln!(
            out,
            "run: lcmp sim figure {n} --out {dir}; or as jobs: mkdir -p {dir} && lcmp sim figure {n} --emit-jobs --out {dir} | parallel, then lcmp sim figure {n} --merge {dir} --out {dir}",
            n = f.number
        );
        return crate::report::print(&out);
    }
    let started = std::time::Instant::now();
    let mut results: Vec<(String, Vec<crate::stats::RunResult>)> = Vec::new();
    let mut labels: Vec<(String, String)> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    if let Some(from) = &args.merge {
        for run in src.runs {
            let files = job_files(src, run, from);
            if files.is_empty() {
                skipped.push(format!(
                    "{}: no {}",
                    run.label,
                    from.join(format!("{}.json", job_name(src, run))).display()
                ));
                continue;
            }
            let mut rs = Vec::new();
            for path in &files {
                let (label, part) = crate::sweep::read_run_file(path)?;
                let label = label.unwrap_or_default();
                if label != job_name(src, run) {
                    return Err(SimError::Config(format!(
                        "{}: labelled `{label}`, expected `{}`",
                        path.display(),
                        job_name(src, run)
                    )));
                }
                rs.extend(part);
            }
            crate::sweep::order_merged(&mut rs);
            if let Some(w) = rs.windows(2).find(|w| {
                (w[0].load, &w[0].scheme, w[0].seed) == (w[1].load, &w[1].scheme, w[1].seed)
            }) {
                return Err(SimError::Config(format!(
                    "{}: {} at load {} seed {} is in two of its files; keep one",
                    from.display(),
                    w[0].scheme,
                    w[0].load,
                    w[0].seed
                )));
            }
            let merged = match files.as_slice() {
                [one] => one.display().to_string(),
                _ => format!(
                    "{} files {}/{}*.json",
                    files.len(),
                    from.display(),
                    job_name(src, run)
                ),
            };
            labels.push((run.label.into(), format!("merged from {merged}")));
            results.push((run.label.into(), rs));
        }
    } else {
        for run in src.runs {
            let sim = match parse_run(&run_args(run, &o)) {
                Ok(s) => s,
                Err(e) if f.pending.is_some() => {
                    skipped.push(format!("{}: {e}", run.label));
                    continue;
                }
                Err(e) => {
                    return Err(SimError::Config(format!(
                        "figure {} run {}: {e}",
                        f.number, run.label
                    )))
                }
            };
            let exp = crate::args::experiment(&sim)?;
            let threads = match exp.engine.model {
                crate::engine::Model::Packet => crate::experiment::packet_threads(exp.runs(), jobs),
                crate::engine::Model::Fluid => jobs,
            };
            let label = run_label(&sim, &exp);
            eprintln!(
                "lcmp sim figure {}: run {} ({} runs on {threads} thread(s))",
                f.number,
                run.label,
                exp.runs()
            );
            let done = std::sync::atomic::AtomicUsize::new(0);
            let total = exp.runs();
            let tick = || {
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                eprintln!(
                    "lcmp sim figure {}: {}: {n}/{total} runs done ({:.1} s)",
                    f.number,
                    run.label,
                    started.elapsed().as_secs_f64()
                );
            };
            let rs = exp.run(threads, &tick)?;
            labels.push((run.label.into(), label));
            results.push((run.label.into(), rs));
        }
    }
    if f.comparison == Comparison::PairFlows {
        return pair_figure(
            f,
            model,
            out_dir.as_deref(),
            &labels,
            &results,
            skipped,
            started,
        );
    }
    let band = crate::vs_artifact::Band::FULL;
    let (compared, not_compared) = compare(f, &results, 0..crate::vs_artifact::BINS, band)
        .map_err(|e| SimError::Config(format!("figure {}: {e}", f.number)))?;
    skipped.extend(not_compared.iter().map(|e| format!("not compared: {e}")));
    if compared.is_empty() {
        return Err(SimError::Config(format!(
            "figure {}: nothing to set beside the artifact's ({})",
            f.number,
            skipped.join("; ")
        )));
    }
    header(&mut out, f, model);
    if let Some(p) = f.pending {
        let _ = writeln!(out, "pending: {p}");
    }
    for s in &skipped {
        let _ = writeln!(out, "left out: {s}");
    }
    for (run, label) in &labels {
        let _ = writeln!(out, "run {run}: {label}");
    }
    out.push('\n');
    for c in &compared {
        out.push_str(&crate::vs_artifact::text(
            std::slice::from_ref(&c.verdict),
            band,
        ));
    }
    out.push('\n');
    out.push_str(&verdicts(&compared, band));
    let _ = writeln!(out, "{:.1} s", started.elapsed().as_secs_f64());
    crate::report::print(&out)?;
    if let Some(d) = &out_dir {
        write_outputs(f, d, model, &labels, &results, &compared, band, &out)?;
    }
    Ok(())
}

/// Figure 8's comparison ([`crate::figure::pair_bins`]): the pair flows of
/// Figure 7's runs, pooled over seeds, against the artifact's few flows a
/// bin; printed as the other figures are, and written to `out_dir`.
#[cfg(feature = "cli")]
fn pair_figure(
    f: &Figure,
    model: &str,
    out_dir: Option<&std::path::Path>,
    labels: &[(String, String)],
    results: &[(String, Vec<crate::stats::RunResult>)],
    mut skipped: Vec<String>,
    started: std::time::Instant,
) -> Result<(), crate::SimError> {
    use std::fmt::Write as _;
    let (compared, not) = pair_bins::compare(f, results)
        .map_err(|e| crate::SimError::Config(format!("figure {}: {e}", f.number)))?;
    skipped.extend(not.iter().map(|e| format!("not compared: {e}")));
    if compared.is_empty() {
        return Err(crate::SimError::Config(format!(
            "figure {}: nothing to set beside the artifact's ({})",
            f.number,
            skipped.join("; ")
        )));
    }
    let mut out = String::new();
    header(&mut out, f, model);
    let _ = writeln!(
        out,
        "the DC1-DC13 flows (either direction) of Figure 7's runs, every seed pooled, in the artifact's own size bins; per bin and statistic, the artifact's value against the exact law of its rank among ours (docs/simulator.md, \"Fig. 8: a handful of flows a bin\")"
    );
    for s in &skipped {
        let _ = writeln!(out, "left out: {s}");
    }
    for (run, label) in labels {
        let _ = writeln!(out, "run {run}: {label}");
    }
    out.push('\n');
    out.push_str(&pair_bins::text(&compared));
    out.push('\n');
    out.push_str(&pair_bins::verdicts(&compared));
    let _ = writeln!(out, "{:.1} s", started.elapsed().as_secs_f64());
    crate::report::print(&out)?;
    if let Some(d) = out_dir {
        pair_bins::write_outputs(f, d, model, labels, &compared, &out)?;
    }
    Ok(())
}

/// The first two lines of a figure's text: its number and title, then
/// the model, the command line and the commit.
#[cfg(feature = "cli")]
fn header(out: &mut String, f: &Figure, model: &str) {
    use std::fmt::Write as _;
    let _ = writeln!(out, "Figure {}: {}", f.number, f.title);
    let _ = writeln!(
        out,
        "model {model} (the figure's regime: {}); command: lcmp sim figure {}{}; commit {}",
        f.model,
        f.number,
        std::env::args()
            .skip_while(|a| a != "figure")
            .skip(2)
            .fold(String::new(), |s, a| s + " " + &a),
        crate::COMMIT
    );
}

/// Creates `dir` and writes a figure's `figN.json` (the figure, its
/// title, the model and the commit, then the fields of `body`), `figN.csv`
/// and `figN.txt` into it (Figure 8's and the others' alike).
#[cfg(feature = "cli")]
pub(crate) fn write_text_outputs(
    dir: &std::path::Path,
    f: &Figure,
    model: &str,
    body: serde_json::Value,
    csv: String,
    text: &str,
) -> Result<(), crate::SimError> {
    use crate::SimError;
    let io =
        |p: &std::path::Path, e: std::io::Error| SimError::Output(format!("{}: {e}", p.display()));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let stem = format!("fig{}", f.number);
    let mut json = serde_json::json!({
        "figure": f.number,
        "title": f.title,
        "model": model,
        "commit": crate::COMMIT,
    });
    if let (Some(head), serde_json::Value::Object(fields)) = (json.as_object_mut(), body) {
        head.extend(fields);
    }
    let files = [
        (
            format!("{stem}.json"),
            serde_json::to_string_pretty(&json).map_err(|e| SimError::Output(e.to_string()))?,
        ),
        (format!("{stem}.csv"), csv),
        (format!("{stem}.txt"), text.to_string()),
    ];
    for (name, body) in files {
        let p = dir.join(name);
        std::fs::write(&p, body).map_err(|e| io(&p, e))?;
    }
    Ok(())
}

/// The SVG of one published table: `STEM-TABLE.svg` in `dir`, `TABLE`
/// the published file's name without its folder and `.csv`.
#[cfg(feature = "cli")]
pub(crate) fn svg_path(dir: &std::path::Path, stem: &str, published: &str) -> std::path::PathBuf {
    let table = published
        .rsplit('/')
        .next()
        .unwrap_or(published)
        .trim_end_matches(".csv");
    dir.join(format!("{stem}-{table}.svg"))
}

/// Writes `figN.json` (labels, our results, the comparisons), `figN.csv`
/// (per bin), `figN.txt` (the printed text) and `figN-TABLE.svg` (ours
/// solid beside the artifact's dashed) into `dir`.
#[cfg(feature = "cli")]
#[allow(clippy::too_many_arguments)]
fn write_outputs(
    f: &Figure,
    dir: &std::path::Path,
    model: &str,
    labels: &[(String, String)],
    results: &[(String, Vec<crate::stats::RunResult>)],
    compared: &[Compared],
    band: crate::vs_artifact::Band,
    text: &str,
) -> Result<(), crate::SimError> {
    let stem = format!("fig{}", f.number);
    let body = serde_json::json!({
        "band": band,
        "runs": labels.iter().map(|(run, label)| serde_json::json!({
            "run": run,
            "label": label,
            "results": results.iter().find(|(l, _)| l == run).map(|(_, r)| r),
        })).collect::<Vec<_>>(),
        "comparisons": compared,
    });
    write_text_outputs(dir, f, model, body, csv(f, compared), text)?;
    for p in f.published {
        let cs: Vec<&Compared> = compared.iter().filter(|c| c.file == p.file).collect();
        let Some(first) = cs.first() else { continue };
        let table = parse_table(p.csv).map_err(crate::SimError::Config)?;
        let mut series = Vec::new();
        for c in &cs {
            let scheme = published_scheme(&c.column).unwrap_or(&c.column).to_string();
            let half = c.verdict.points.len() / 2;
            let (p50, p99) = c.verdict.points.split_at(half);
            series.push(crate::plot::Series {
                name: format!("{} (ours, {} seeds)", c.column, c.verdict.seeds),
                scheme: scheme.clone(),
                points: p50
                    .iter()
                    .zip(p99)
                    .map(|(a, b)| (a.size, a.ours, b.ours))
                    .collect(),
                artifact: false,
            });
            let ci = table[0]
                .values
                .iter()
                .position(|v| v.0 == c.column)
                .unwrap_or(0);
            series.push(crate::plot::Series {
                name: format!("{} (artifact)", c.column),
                scheme,
                points: table
                    .iter()
                    .map(|b| (b.flow_size as f64, b.values[ci].1, b.values[ci].2))
                    .collect(),
                artifact: true,
            });
        }
        let path = svg_path(dir, &stem, p.file);
        let title = format!(
            "Figure {} ({}, {model} model, commit {}): ours solid, artifact dashed; load {:.0}%",
            f.number,
            p.file,
            crate::COMMIT,
            first.verdict.load * 100.0
        );
        let footer: Vec<String> = labels
            .iter()
            .filter(|(run, _)| cs.iter().any(|c| c.run == *run))
            .map(|(run, label)| format!("run {run}: {label}"))
            .collect();
        crate::plot::slowdown_series(&path, &title, &series, &footer)?;
    }
    eprintln!(
        "wrote {stem}.json, {stem}.csv, {stem}.txt and the SVGs to {}",
        dir.display()
    );
    Ok(())
}

/// One size bin of a published table.
#[derive(Clone, Debug, PartialEq)]
pub struct Bin {
    /// The bin's start percentile (0, 0.05, ..., 0.95).
    pub percentile: f64,
    /// The flow size the artifact's script reports for the bin, bytes.
    pub flow_size: u64,
    /// Per column (`Ours`, `ECMP`, a run name): (p50, p99).
    pub values: Vec<(String, f64, f64)>,
}

/// Parses an artifact table: `Percentile,FlowSize`, then pairs of
/// `<name>-fct_p50,<name>-fct_p99` columns, 20 rows.
pub fn parse_table(csv: &str) -> Result<Vec<Bin>, String> {
    let mut lines = csv.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().ok_or("empty table")?.split(',').collect();
    let (Some(&"Percentile"), Some(&"FlowSize")) = (header.first(), header.get(1)) else {
        return Err("the header must start with Percentile,FlowSize".into());
    };
    let mut names = Vec::new();
    for pair in header[2..].chunks(2) {
        let (Some(p50), Some(p99)) = (
            pair.first().and_then(|c| c.strip_suffix("-fct_p50")),
            pair.get(1).and_then(|c| c.strip_suffix("-fct_p99")),
        ) else {
            return Err(format!(
                "expected a <name>-fct_p50,<name>-fct_p99 pair, got {pair:?}"
            ));
        };
        if p50 != p99 {
            return Err(format!("columns {p50} and {p99} do not pair"));
        }
        names.push(p50.to_string());
    }
    if names.is_empty() {
        return Err("no scheme columns".into());
    }
    let mut bins = Vec::new();
    for (i, line) in lines.enumerate() {
        let f: Vec<f64> = line
            .split(',')
            .map(|x| x.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("row {}: {e}", i + 1))?;
        if f.len() != header.len() || f.iter().any(|x| !x.is_finite() || *x < 0.0) {
            return Err(format!(
                "row {}: expected {} non-negative numbers",
                i + 1,
                header.len()
            ));
        }
        bins.push(Bin {
            percentile: f[0],
            flow_size: f[1] as u64,
            values: names
                .iter()
                .zip(f[2..].chunks(2))
                .map(|(n, v)| (n.clone(), v[0], v[1]))
                .collect(),
        });
    }
    if bins.len() != 20 {
        return Err(format!("{} bins, expected 20", bins.len()));
    }
    Ok(bins)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn every_published_table_parses_and_names_what_the_figure_compares() {
        for f in FIGURES {
            assert!(
                !f.runs.is_empty() && !f.published.is_empty(),
                "{}",
                f.number
            );
            for p in f.published {
                let bins = parse_table(p.csv).unwrap_or_else(|e| panic!("{}: {e}", p.file));
                let names: Vec<&str> = bins[0].values.iter().map(|v| v.0.as_str()).collect();
                match f.number {
                    1 | 5 | 7 | 8 | 10 => assert_eq!(names, ["Ours", "ECMP", "UCMP"], "{}", p.file),
                    9 => assert_eq!(names, ["Ours"], "{}", p.file),
                    _ => {
                        // Figure 11: every column is one of its runs (or
                        // the artifact's name for the same weights).
                        for n in names {
                            let known = f.runs.iter().any(|r| r.label == n)
                                || [
                                    "normal",
                                    "alpha=3-beta=1",
                                    "w_dl=3-w_bw=1",
                                    "w_ql=2-w_tl=1-w_dp=1",
                                ]
                                .contains(&n);
                            assert!(known, "{}: column {n}", p.file);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn bad_tables_are_refused_with_a_reason() {
        assert!(parse_table("").is_err());
        assert!(parse_table("Size,FlowSize,Ours-fct_p50,Ours-fct_p99").is_err());
        let e = parse_table("Percentile,FlowSize,Ours-fct_p50,ECMP-fct_p99\n").unwrap_err();
        assert!(e.contains("do not pair"), "{e}");
        let e = parse_table("Percentile,FlowSize,Ours-fct_p50,Ours-fct_p99\n0,1,2\n").unwrap_err();
        assert!(e.contains("row 1"), "{e}");
        let short = "Percentile,FlowSize,Ours-fct_p50,Ours-fct_p99\n0,1,2,3\n";
        assert!(parse_table(short).unwrap_err().contains("1 bins"));
    }

    #[test]
    fn a_job_writes_its_json_under_a_safe_name() {
        let f = figure(11).unwrap();
        let run = f.runs.iter().find(|r| r.label == "w_dl=2-w_bw=2").unwrap();
        let j = job(f, run, &Overrides::default(), "out");
        assert!(
            j.starts_with("lcmp sim --model packet --preset artifact"),
            "{j}"
        );
        assert!(j.contains("--weights w_dl=2,w_lc=2"), "{j}");
        assert!(
            j.ends_with(
                "--bins 20 --json --label fig11-w_dl_2-w_bw_2 > out/fig11-w_dl_2-w_bw_2.json"
            ),
            "{j}"
        );
    }

    /// A split job is one load and one seed of its run, single-threaded,
    /// under a name `--merge` reads back (and only those names).
    #[cfg(feature = "cli")]
    #[test]
    fn a_split_job_is_one_load_and_seed_and_merge_finds_its_parts() {
        let f = figure(7).unwrap();
        let jobs = split_jobs(f, &f.runs[0], &Overrides::default(), "out").expect("splits");
        assert_eq!(jobs.len(), 9, "3 loads x 3 seeds");
        let mut seen = Vec::new();
        for j in &jobs {
            let (cmd, file) = j.split_once(" > ").expect("a redirect");
            let args: Vec<String> = cmd.split_whitespace().skip(2).map(String::from).collect();
            let sim = parse_run(&args).expect("parses");
            let e = crate::args::experiment(&sim).expect("valid");
            assert_eq!((e.loads.len(), e.seeds.len()), (1, 1), "{j}");
            assert_eq!(sim.jobs, Some(1), "{j}");
            assert_eq!(e.topology.name, "bso13", "{j}");
            assert_eq!(e.pair_flows, Some((1, 13)), "{j}: Figure 8's flows");
            assert_eq!(e.focus, None, "{j}: Figure 7 counts every flow");
            assert_eq!(
                file,
                format!("out/fig7-30_50_80.l{}-s{}.json", e.loads[0], e.seeds[0])
            );
            assert!(cmd.ends_with("--json --label fig7-30_50_80"), "{j}");
            seen.push((e.loads[0].to_string(), e.seeds[0]));
        }
        seen.sort_by(|a, b| a.partial_cmp(b).unwrap());
        seen.dedup();
        assert_eq!(seen.len(), 9);
        let dir = std::env::temp_dir().join(format!("lcmp-fig-split-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in [
            "fig7-30_50_80.l0.3-s1.json",
            "fig7-30_50_80.l0.8-s3.json",
            "fig7-30_50_80.json",
            "fig7-30_50_80.lx.json",
            "fig7-30_50_80x.json",
            "fig8-30_50_80.l0.3-s1.json",
        ] {
            std::fs::write(dir.join(n), "{}").unwrap();
        }
        let got: Vec<String> = job_files(f, &f.runs[0], &dir)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            got,
            [
                "fig7-30_50_80.json",
                "fig7-30_50_80.l0.3-s1.json",
                "fig7-30_50_80.l0.8-s3.json"
            ]
        );
    }

    /// `lcmp sim figure 8 --merge DIR` reads Figure 7's job files (one
    /// set of runs for both) and writes Figure 8's outputs from their
    /// pair flows; a load whose files lack them (Figure 7's jobs from
    /// before 1de0dd6) is named and left out, and with none left the
    /// command stops saying why.
    #[cfg(feature = "cli")]
    #[test]
    fn figure_8_merges_figure_7s_job_files_and_needs_their_pair_flows() {
        use clap::Parser as _;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            fig: crate::args::FigureArgs,
        }
        let dir = std::env::temp_dir().join(format!("lcmp-fig8-merge-{}", std::process::id()));
        let out = dir.join("out");
        std::fs::create_dir_all(&dir).unwrap();
        let part = |pair: bool, load: f64| {
            let results: Vec<crate::stats::RunResult> = ["ecmp", "ucmp", "lcmp"]
                .iter()
                .map(|scheme| crate::stats::RunResult {
                    load,
                    pair_flows: pair.then(|| {
                        (0..400u64)
                            .map(|i| crate::stats::PairFlow {
                                src_dc: if i % 2 == 0 { 1 } else { 13 },
                                dst_dc: if i % 2 == 0 { 13 } else { 1 },
                                // 1 kB to 10 MB, log-spaced.
                                size: (1e3 * 1e4f64.powf(i as f64 / 400.0)) as u64,
                                slowdown: Some(4.0 + (i % 7) as f64),
                            })
                            .collect()
                    }),
                    ..crate::report::test::run(scheme, 1, 0.0, 0.0)
                })
                .collect();
            let json = serde_json::json!({
                "config": { "label": "fig7-30_50_80" },
                "results": results,
            });
            std::fs::write(
                dir.join(format!("fig7-30_50_80.l{load}-s1.json")),
                serde_json::to_string(&json).unwrap(),
            )
            .unwrap();
        };
        let args = Cli::parse_from([
            "figure",
            "8",
            "--merge",
            dir.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .fig;
        // 30 % with the records, 50 % from an older Figure 7 job.
        part(true, 0.3);
        part(false, 0.5);
        let ok = run(&args, 1, |_, _| String::new());
        let csv = std::fs::read_to_string(out.join("fig8.csv"));
        let txt = std::fs::read_to_string(out.join("fig8.txt"));
        let svg = std::fs::read_to_string(out.join("fig8-30.svg"));
        let json = std::fs::read_to_string(out.join("fig8.json"));
        part(false, 0.3);
        let err = run(&args, 1, |_, _| String::new());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(ok.is_ok(), "{ok:?}");
        assert_eq!(csv.expect("fig8.csv").lines().count(), 1 + 3 * 20);
        assert!(svg.expect("fig8-30.svg").starts_with("<svg"));
        let json: serde_json::Value =
            serde_json::from_str(&json.expect("fig8.json")).expect("JSON");
        assert_eq!(json["figure"], 8);
        assert_eq!(json["commit"], crate::COMMIT);
        assert!(json["test"]["alpha"].is_number() && json["comparisons"].is_array());
        let txt = txt.expect("fig8.txt");
        assert!(
            txt.contains("merged from") && txt.contains("fig7-30_50_80"),
            "{txt}"
        );
        assert_eq!(
            txt.lines()
                .filter(|l| l.starts_with("left out: not compared:") && l.contains("50.csv"))
                .count(),
            3,
            "{txt}"
        );
        let e = err.expect_err("no pair flows").to_string();
        assert!(e.contains("pair_flows") && e.contains("1de0dd6"), "{e}");
    }

    /// Every job `--emit-jobs` prints, whole or split, for every figure,
    /// is an `lcmp sim` command that parses as the CLI parses it and that
    /// `lcmp sim` accepts (Figure 5's run has `--vs-artifact`, which
    /// refuses the jobs' `--json`).
    #[cfg(feature = "cli")]
    #[test]
    fn every_emitted_job_of_every_figure_is_accepted() {
        let o = Overrides::default();
        for f in FIGURES {
            for run in f.runs {
                let mut jobs = vec![job(f, run, &o, "out")];
                jobs.extend(split_jobs(f, run, &o, "out").expect("splits"));
                for j in jobs {
                    let (cmd, _) = j.split_once(" > ").expect("a redirect");
                    let args: Vec<String> =
                        cmd.split_whitespace().skip(2).map(String::from).collect();
                    let sim = parse_run(&args).unwrap_or_else(|e| panic!("{j}: {e}"));
                    assert!(sim.json, "{j}");
                    assert_ne!(sim.jobs, Some(0), "{j}");
                    let e = crate::args::experiment(&sim).unwrap_or_else(|e| panic!("{j}: {e}"));
                    assert_eq!(e.bins, crate::vs_artifact::BINS, "{j}");
                }
            }
        }
    }

    #[test]
    fn figure_numbers_are_unique_and_the_papers() {
        let n: Vec<u8> = FIGURES.iter().map(|f| f.number).collect();
        assert_eq!(n, [1, 5, 7, 8, 9, 10, 11]);
    }

    /// Our runs of `scheme` made of a published column, scaled by `k`.
    fn from_table(
        p: &Published,
        column: &str,
        scheme: &str,
        load: f64,
        k: f64,
    ) -> crate::stats::RunResult {
        let t = parse_table(p.csv).expect("parses");
        let ci = t[0]
            .values
            .iter()
            .position(|v| v.0 == column)
            .expect("column");
        crate::stats::RunResult {
            load,
            completed: 1000,
            flows: 1000,
            bins: t
                .iter()
                .map(|b| crate::stats::SizeBin {
                    size: b.flow_size as f64,
                    count: 50,
                    p50: b.values[ci].1 * k,
                    p99: b.values[ci].2 * k,
                })
                .collect(),
            ..crate::report::test::run(scheme, 1, 0.0, 0.0)
        }
    }

    #[test]
    fn run_args_apply_the_overrides_and_ask_for_twenty_bins() {
        let f = figure(9).unwrap();
        let o = Overrides {
            model: Some("fluid".into()),
            seeds: Some(1),
            window_s: Some(0.05),
            loads: None,
        };
        let ali = run_args(&f.runs[0], &o).join(" ");
        assert!(
            ali.contains("--model fluid") && !ali.contains("packet"),
            "{ali}"
        );
        assert!(
            ali.contains("--seeds 1") && !ali.contains("--seeds 3"),
            "{ali}"
        );
        // Its own 5 ms window is shorter than the cap: kept.
        assert!(ali.ends_with("--window 0.005 --bins 20"), "{ali}");
        let web = run_args(&f.runs[2], &o).join(" ");
        assert!(web.ends_with("--window 0.05 --bins 20"), "{web}");
        let plain = run_args(&f.runs[2], &Overrides::default()).join(" ");
        assert!(
            plain.contains("--model packet --preset artifact --load 0.3 --seeds 3"),
            "{plain}"
        );
        assert!(!plain.contains("--window"), "{plain}");
    }

    #[test]
    fn a_load_override_keeps_only_those_loads_of_a_run() {
        let f = figure(7).unwrap();
        let o = Overrides {
            loads: Some(vec![0.5, 0.3]),
            ..Overrides::default()
        };
        let args = run_args(&f.runs[0], &o).join(" ");
        assert!(args.contains("--load 0.3,0.5 "), "{args}");
        assert!(!args.contains("0.8"), "{args}");
        let plain = run_args(&f.runs[0], &Overrides::default()).join(" ");
        assert!(plain.contains("--load 0.3,0.5,0.8 "), "{plain}");
    }

    #[cfg(feature = "cli")]
    #[test]
    fn a_load_the_figure_does_not_run_is_refused() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            figure: crate::args::FigureArgs,
        }
        let parse = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("figure").chain(args.iter().copied()))
                .unwrap()
                .figure
        };
        let seven = figure(7).unwrap();
        assert_eq!(figure_loads(seven).unwrap(), [0.3, 0.5, 0.8]);
        assert_eq!(figure_loads(figure(10).unwrap()).unwrap(), [0.3]);
        let o = overrides(seven, &parse(&["7", "--load", "0.8,0.3"])).unwrap();
        assert_eq!(o.loads, Some(vec![0.8, 0.3]));
        let e = overrides(seven, &parse(&["7", "--load", "0.4"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--load 0.4") && e.contains("0.3, 0.5, 0.8"),
            "{e}"
        );
        let e = overrides(figure(9).unwrap(), &parse(&["9", "--load", "0.5"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("figure 9 runs at load 0.3"), "{e}");
        assert_eq!(overrides(seven, &parse(&["7"])).unwrap().loads, None);
    }

    #[test]
    fn a_figure_that_reads_another_figures_runs_has_the_same_runs() {
        for f in FIGURES {
            let src = runs_of(f);
            match f.runs_from {
                Some(n) => {
                    assert_eq!(src.number, n, "figure {}", f.number);
                    assert_ne!(n, f.number);
                    assert_eq!(src.runs, f.runs, "figure {}", f.number);
                    assert_eq!(src.runs_from, None, "one step");
                }
                None => assert_eq!(src.number, f.number),
            }
            // A pair comparison needs the pair's flows recorded.
            if f.comparison == Comparison::PairFlows {
                assert!(
                    f.runs.iter().all(|r| r.args.contains(&"--pair-flows")),
                    "figure {}",
                    f.number
                );
            }
        }
        assert_eq!(figure(8).unwrap().comparison, Comparison::PairFlows);
        assert_eq!(figure(7).unwrap().comparison, Comparison::SizeBins);
    }

    #[test]
    fn each_column_is_set_beside_its_run_and_a_departure_is_a_disagreement() {
        use crate::vs_artifact::{Band, BINS};
        // Figure 5: ECMP at 50 % from the 50 % table.
        let f = figure(5).unwrap();
        let p50 = &f.published[1];
        assert_eq!(
            column_source(f, p50, "ECMP"),
            Some(("30,50,80", "ecmp", Some(0.5)))
        );
        let same = vec![(
            "30,50,80".to_string(),
            vec![from_table(p50, "ECMP", "ecmp", 0.5, 1.0)],
        )];
        let (c, not) = compare(f, &same, 0..BINS, Band::FULL).expect("compares");
        assert!(not.is_empty(), "{not:?}");
        assert_eq!(c.len(), 1, "only ECMP at 50 % has runs");
        assert!(c[0].verdict.agrees && c[0].verdict.out == 0);
        assert_eq!((c[0].column.as_str(), c[0].table.as_str()), ("ECMP", "50"));
        let off = vec![(
            "30,50,80".to_string(),
            vec![from_table(p50, "ECMP", "ecmp", 0.5, 1.3)],
        )];
        let (c, _) = compare(f, &off, 0..BINS, Band::FULL).expect("compares");
        assert!(!c[0].verdict.agrees, "{}", verdicts(&c, Band::FULL));
        // Figure 11: the artifact's names of the default weights are the
        // `normal` run; every column of the four tables has a run.
        let f = figure(11).unwrap();
        for p in f.published {
            for column in parse_table(p.csv).unwrap()[0].values.iter().map(|v| &v.0) {
                let (run, scheme, load) = column_source(f, p, column).expect("a run");
                assert_eq!((scheme, load), ("lcmp", None), "{column}");
                assert!(f.runs.iter().any(|r| r.label == run));
            }
        }
        assert_eq!(
            column_source(f, &f.published[1], "alpha=3-beta=1").map(|c| c.0),
            Some("normal")
        );
        // The CSV quotes the run label with commas, one row per bin.
        let f = figure(5).unwrap();
        let (c, _) = compare(f, &same, 0..BINS, Band::FULL).unwrap();
        // A run with too few flows for 20 bins is named, not compared.
        let mut few = same.clone();
        few[0].1[0].bins.truncate(3);
        let (none, not) = compare(f, &few, 0..BINS, Band::FULL).unwrap();
        assert!(
            none.is_empty() && not.len() == 1 && not[0].contains("3 size bins"),
            "{not:?}"
        );
        let text = csv(f, &c);
        assert_eq!(text.lines().count(), 1 + BINS);
        assert!(
            text.lines()
                .nth(1)
                .unwrap()
                .starts_with("5,50,ECMP,\"30,50,80\",0.5,1,0,"),
            "{text}"
        );
    }
}
