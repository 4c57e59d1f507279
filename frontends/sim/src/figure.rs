//! Every figure of the paper's evaluation that the simulator reproduces,
//! as data (issue 35 item 3): the `lcmp sim` runs each needs, in the
//! regime that reproduces it, and the artifact's published numbers to set
//! ours beside (`data/artifact-fig*/`, each folder's README naming its
//! source). A newcomer picks a figure by its number ([`figure`]) instead
//! of reading docs/simulator.md for the preset.
//!
//! `lcmp sim figure N` prints a figure's plan from this registry, and
//! `lcmp sim figure N --emit-jobs` its runs as shell jobs whose JSON
//! `lcmp sim merge` combines. Running them itself on every core and
//! setting ours beside the artifact's per size bin (seeds, intervals, a
//! verdict per scheme, CSV beside the JSON) is not written yet. Figures
//! whose runs need something the model does not have yet say so in
//! [`Figure::pending`].

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

/// The 13-DC network, all-to-all, at the three loads, in the packet model.
const BSO13: &[&str] = &[
    "--model",
    "packet",
    "--topology",
    "bso13",
    "--pair",
    "all",
    "--schemes",
    "ecmp,ucmp,lcmp",
    "--load",
    "0.3,0.5,0.8",
    "--seeds",
    "3",
];

/// The 13-DC network seen from the DC1-DC13 pair (Figure 8).
const BSO13_DC1_DC13: &[&str] = &[
    "--model",
    "packet",
    "--topology",
    "bso13",
    "--pair",
    "all",
    "--focus",
    "DC1:DC13",
    "--schemes",
    "ecmp,ucmp,lcmp",
    "--load",
    "0.3,0.5,0.8",
    "--seeds",
    "3",
];

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
        pending: Some("the per-link utilisation of DC1's six links is not compared yet (artifact-fig1/link-utilization.csv)"),
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
        pending: Some("the packet fabric applies the artifact's per-DCI-switch PFC pools (packet::artifact_pool) only with --preset artifact, which is testbed8's; these bso13 runs keep one DCI buffer"),
    },
    Figure {
        number: 8,
        title: "Figure 7's runs seen from the DC1-DC13 pair",
        model: "packet",
        runs: &[Run {
            label: "30,50,80",
            args: BSO13_DC1_DC13,
        }],
        published: &[
            published!("30", "artifact-fig8/30.csv"),
            published!("50", "artifact-fig8/50.csv"),
            published!("80", "artifact-fig8/80.csv"),
        ],
        pending: Some("as Figure 7"),
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
        pending: Some("`--cc` runs in the packet engine; only a reduced form is measured so far (50 ms of arrivals, seed 1: docs/simulator.md, \"Congestion controls\"), not these 3-seed full windows"),
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

/// The shell job of one run: `lcmp sim ARGS --json --label figN-RUN >
/// DIR/figN-RUN.json`, the label and file name made of the run's label
/// with every character outside `[A-Za-z0-9.-]` written `_`.
#[must_use]
pub fn job(f: &Figure, run: &Run, dir: &str) -> String {
    let name: String = format!("fig{}-{}", f.number, run.label)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!(
        "lcmp sim {} --json --label {name} > {dir}/{name}.json",
        run.args.join(" ")
    )
}

/// `lcmp sim figure N`: the plan (title, model, what is pending, each
/// run's command, the published tables), or with `--emit-jobs` one shell
/// job per run.
#[cfg(feature = "cli")]
pub fn print(args: &crate::args::FigureArgs) -> Result<(), crate::SimError> {
    use std::fmt::Write as _;
    let f = figure(args.number).ok_or_else(|| {
        let known: Vec<String> = FIGURES.iter().map(|f| f.number.to_string()).collect();
        crate::SimError::Config(format!(
            "figure {}: the simulator reproduces figures {} (Figure 6 is the testbed's)",
            args.number,
            known.join(", ")
        ))
    })?;
    let dir = args.out.display().to_string();
    let mut out = String::new();
    if args.emit_jobs {
        for run in f.runs {
            let _ = writeln!(out, "{}", job(f, run, &dir));
        }
    } else {
        let _ = writeln!(out, "Figure {}: {}", f.number, f.title);
        let _ = writeln!(out, "model: {}", f.model);
        if let Some(p) = f.pending {
            let _ = writeln!(out, "pending: {p}");
        }
        let _ = writeln!(out, "runs (from the repository root):");
        for run in f.runs {
            let _ = writeln!(out, "  {:<22} lcmp sim {}", run.label, run.args.join(" "));
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
            "jobs: mkdir -p {dir} && lcmp sim figure {} --emit-jobs --out {dir} | parallel; then lcmp sim merge {dir}/*.json",
            f.number
        );
    }
    crate::report::print(&out)
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
        let j = job(f, run, "out");
        assert!(
            j.starts_with("lcmp sim --model packet --preset artifact"),
            "{j}"
        );
        assert!(j.contains("--weights w_dl=2,w_lc=2"), "{j}");
        assert!(
            j.ends_with("--json --label fig11-w_dl_2-w_bw_2 > out/fig11-w_dl_2-w_bw_2.json"),
            "{j}"
        );
    }

    #[test]
    fn figure_numbers_are_unique_and_the_papers() {
        let n: Vec<u8> = FIGURES.iter().map(|f| f.number).collect();
        assert_eq!(n, [1, 5, 7, 8, 9, 10, 11]);
    }
}
