//! The figure registry (`lcmp_sim::figure`): every run a figure lists is
//! a valid `lcmp sim` command today (Figure 10's `--cc` runs included).

#![cfg(feature = "cli")]
use clap::Parser;
use lcmp_sim::cli::{experiment, SimArgs};
use lcmp_sim::figure::FIGURES;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    sim: SimArgs,
}

#[test]
fn every_figures_runs_are_valid_lcmp_sim_commands() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    let mut checked = 0;
    for f in FIGURES {
        for run in f.runs {
            // Paths are relative to the repository root; tests run in the
            // crate's directory.
            let args: Vec<String> = run
                .args
                .iter()
                .map(|a| a.replacen("frontends/sim/", root, 1))
                .collect();
            let parsed = Cli::try_parse_from(std::iter::once("sim".to_string()).chain(args));
            let cli = parsed.unwrap_or_else(|e| panic!("figure {} {}: {e}", f.number, run.label));
            let exp = experiment(&cli.sim)
                .unwrap_or_else(|e| panic!("figure {} {}: {e}", f.number, run.label));
            assert!(!exp.loads.is_empty());
            checked += 1;
        }
    }
    assert!(checked >= 1 + 1 + 1 + 1 + 3 + 4 + 9, "{checked}");
}

#[test]
fn lcmp_sim_figure_prints_a_known_figure_and_refuses_an_unknown_one() {
    let run = |args: &[&str]| {
        let cli = Cli::try_parse_from(std::iter::once("sim").chain(args.iter().copied()))
            .expect("parses");
        lcmp_sim::cli::run(&cli.sim)
    };
    run(&["figure", "9", "--plan"]).expect("figure 9 has a plan");
    run(&["figure", "10", "--emit-jobs", "--out", "runs"]).expect("jobs");
    let e = run(&["figure", "5", "--model", "nope"])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--model nope") && e.contains("fluid or packet"),
        "{e}"
    );
    let e = run(&["figure", "5", "--seeds", "0"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("--seeds"), "{e}");
    let e = run(&["figure", "5", "--merge", "/nonexistent-dir"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("nothing to set beside"), "{e}");
    let e = run(&["figure", "6"]).unwrap_err().to_string();
    assert!(
        e.contains("figure 6") && e.contains("1, 5, 7, 8, 9, 10, 11"),
        "{e}"
    );
    assert!(
        Cli::try_parse_from(["sim", "figure"]).is_err(),
        "N is required"
    );
}

/// Runs the runs `labels` of figure `f` with `o` on two threads: per run
/// label, its results.
fn run_figure(
    f: &lcmp_sim::figure::Figure,
    labels: &[&str],
    o: &lcmp_sim::figure::Overrides,
) -> Vec<(String, Vec<lcmp_sim::stats::RunResult>)> {
    f.runs
        .iter()
        .filter(|r| labels.contains(&r.label))
        .map(|run| {
            let (_, exp) = lcmp_sim::figure::experiment(f, run, o).expect("a valid run");
            (run.label.to_string(), exp.run(2, &|| {}).expect("runs"))
        })
        .collect()
}

/// Runs the runs `labels` of figure `n` with `o` and sets them beside the
/// artifact's columns: (column, verdict agrees, points out, published
/// table) per compared column.
fn reduced(
    n: u8,
    labels: &[&str],
    o: &lcmp_sim::figure::Overrides,
) -> Vec<(String, bool, usize, String)> {
    use lcmp_sim::figure::{compare, figure};
    use lcmp_sim::vs_artifact::{Band, BINS};
    let f = figure(n).expect("a figure");
    let results = run_figure(f, labels, o);
    let (compared, not) = compare(f, &results, 0..BINS, Band::FULL).expect("compares");
    assert!(not.is_empty(), "figure {n}: {not:?}");
    compared
        .into_iter()
        .map(|c| (c.column, c.verdict.agrees, c.verdict.out, c.table))
        .collect()
}

fn verdict<'a>(
    v: &'a [(String, bool, usize, String)],
    column: &str,
) -> &'a (String, bool, usize, String) {
    v.iter()
        .find(|c| c.0 == column)
        .unwrap_or_else(|| panic!("no column {column} in {v:?}"))
}

/// The reduced form of Figures 1, 5, 9 and 11 in the fluid model (two
/// seeds, the figures' windows): the columns whose full run agrees with
/// the artifact's within the band (docs/simulator.md, "Every figure of
/// the paper") still agree, and the check tells different curves apart:
/// LCMP's `normal` run is far from the artifact's α = 0 curve.
#[test]
#[cfg_attr(debug_assertions, ignore = "seconds in release mode, minutes in debug")]
fn reduced_fluid_figures_agree_where_the_full_runs_do() {
    use lcmp_sim::figure::Overrides;
    let o = Overrides {
        model: Some("fluid".into()),
        seeds: Some(2),
        window_s: None,
        loads: None,
    };
    // Figure 1 (Figure 5's 30 % runs): UCMP's curve.
    let v = reduced(1, &["30"], &o);
    assert!(verdict(&v, "UCMP").1, "{v:?}");
    // Figure 9: the Ali storage flows between DC1 and DC8.
    let v = reduced(9, &["alistorage"], &o);
    assert!(verdict(&v, "Ours").1, "{v:?}");
    // Figure 11: LCMP without path quality (α = 0) and with a
    // capacity-heavy path cost both admit the slow paths, as the
    // artifact's did; LCMP's own weights do not reach them.
    let v = reduced(11, &["alpha=0-beta=4", "w_dl=1-w_bw=3", "normal"], &o);
    assert!(verdict(&v, "alpha=0-beta=4").1, "{v:?}");
    assert!(verdict(&v, "w_dl=1-w_bw=3").1, "{v:?}");
    let f = lcmp_sim::figure::figure(11).unwrap();
    let ours = run_figure(f, &["normal"], &o).remove(0).1;
    // Our normal run set beside the artifact's α = 0 column: far outside.
    let mislabelled = vec![("alpha=0-beta=4".to_string(), ours)];
    let (c, _) = lcmp_sim::figure::compare(
        f,
        &mislabelled,
        0..lcmp_sim::vs_artifact::BINS,
        lcmp_sim::vs_artifact::Band::FULL,
    )
    .unwrap();
    let wrong = c.iter().find(|c| c.column == "alpha=0-beta=4").unwrap();
    assert!(
        !wrong.verdict.agrees && wrong.verdict.out > 20,
        "{}",
        wrong.verdict.out
    );
}

/// The reduced form of Figure 9 in the packet model (one seed, the
/// artifact's 5 ms of Ali storage arrivals): LCMP's curve between DC1 and
/// DC8 agrees with the artifact's.
#[test]
#[cfg_attr(debug_assertions, ignore = "seconds in release mode, minutes in debug")]
fn reduced_packet_figure_9_agrees() {
    let o = lcmp_sim::figure::Overrides {
        model: None,
        seeds: Some(1),
        window_s: None,
        loads: None,
    };
    let v = reduced(9, &["alistorage"], &o);
    assert!(verdict(&v, "Ours").1, "{v:?}");
}

/// The reduced form of Figure 10 in the packet model (one seed, 50 ms of
/// arrivals instead of 200 ms): UCMP's curve agrees with the artifact's
/// under each of the four congestion controls, as in the full runs
/// (docs/simulator.md, "Figure 10, full"), and LCMP's, set beside the
/// artifact's HPCC, TIMELY and DCTCP tables, does not (its tail there is
/// about twice ours).
#[test]
#[cfg_attr(debug_assertions, ignore = "seconds in release mode, minutes in debug")]
fn reduced_packet_figure_10_agrees_for_ucmp_under_every_control() {
    let o = lcmp_sim::figure::Overrides {
        model: None,
        seeds: Some(1),
        window_s: Some(0.05),
        loads: None,
    };
    let f = lcmp_sim::figure::figure(10).expect("figure 10");
    let labels: Vec<&str> = f.runs.iter().map(|r| r.label).collect();
    assert_eq!(labels, ["dcqcn", "hpcc", "timely", "dctcp"]);
    let v = reduced(10, &labels, &o);
    let of = |table: &str, column: &str| {
        v.iter()
            .find(|c| c.0 == column && c.3 == table)
            .unwrap_or_else(|| panic!("no column {column} of {table} in {v:?}"))
    };
    for table in labels {
        assert!(of(table, "UCMP").1, "{table}: {v:?}");
    }
    for table in ["hpcc", "timely", "dctcp"] {
        let lcmp = of(table, "Ours");
        assert!(!lcmp.1 && lcmp.2 > 20, "{table}: {v:?}");
    }
}

/// The reduced form of Figures 7 and 8 in the packet model: Figure 7's
/// runs at 50 % alone (`lcmp sim figure 7 --load 0.5 --seeds 1`), one
/// seed, the artifact's own 10 ms of arrivals (a shorter window
/// disagrees everywhere: the 13-DC queues have not built up). Every
/// column of Figure 7's 50 % table agrees with the artifact's (1-2 of 40
/// points out in this form, 0 in the full runs), and so does every
/// column of Figure 8's from the same runs' DC1-DC13 flows; the same
/// results set beside the artifact's 80 % tables are refused, so the
/// check tells a 50 % curve from an 80 % one (docs/simulator.md, "Every
/// figure of the paper").
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "a minute in release mode, much longer in debug"
)]
fn reduced_packet_figures_7_and_8_agree_at_50_percent_and_not_as_80() {
    use lcmp_sim::figure::{compare, figure, pair_bins, Overrides};
    use lcmp_sim::vs_artifact::{Band, BINS};
    let o = Overrides {
        seeds: Some(1),
        loads: Some(vec![0.5]),
        ..Overrides::default()
    };
    let (f7, f8) = (figure(7).unwrap(), figure(8).unwrap());
    let results = run_figure(f7, &[f7.runs[0].label], &o);
    // One load, one seed: a run per scheme.
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1.len(), 3);
    assert!(results[0].1.iter().all(|r| r.load == 0.5 && r.seed == 1));
    let (c7, not) = compare(f7, &results, 0..BINS, Band::FULL).expect("compares");
    assert!(not.is_empty(), "{not:?}");
    let (c8, not) = pair_bins::compare(f8, &results).expect("compares");
    assert!(not.is_empty(), "{not:?}");
    for (figure, columns) in [
        (
            7,
            c7.iter()
                .map(|c| (c.table.clone(), c.column.clone(), c.verdict.agrees))
                .collect::<Vec<_>>(),
        ),
        (
            8,
            c8.iter()
                .map(|c| (c.table.clone(), c.column.clone(), c.agrees))
                .collect(),
        ),
    ] {
        let names: Vec<&str> = columns.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(names, ["Ours", "ECMP", "UCMP"], "figure {figure}");
        for (table, column, agrees) in &columns {
            assert_eq!(table, "50");
            assert!(agrees, "figure {figure}: {column} disagrees: {columns:?}");
        }
    }
    // The same runs labelled 80 %: every column of both figures is refused.
    let mut as80 = results.clone();
    for r in &mut as80[0].1 {
        r.load = 0.8;
    }
    let (c7, _) = compare(f7, &as80, 0..BINS, Band::FULL).expect("compares");
    let (c8, _) = pair_bins::compare(f8, &as80).expect("compares");
    assert_eq!((c7.len(), c8.len()), (3, 3));
    assert!(
        c7.iter().all(|c| c.table == "80" && !c.verdict.agrees),
        "{c7:?}"
    );
    assert!(c8.iter().all(|c| c.table == "80" && !c.agrees), "{c8:?}");
}

/// The reduced form of Figure 1 in the packet model (one seed, the
/// artifact's 200 ms): ECMP, UCMP and LCMP agree with the artifact's
/// Figure 1 curves, the runs of its committed code (1, 1 and 0 of 40
/// points out in this form; 0 with 3 seeds). The same results set beside
/// Figure 5's 30 % table, whose LCMP curve is a run on the same flows by
/// code the artifact does not carry (docs/simulator.md, "The artifact's
/// 30 % runs: two builds on the same flows"), agree for UCMP (one run in
/// both tables) and not for LCMP.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "a minute in release mode, much longer in debug"
)]
fn reduced_packet_figure_1_agrees_and_figure_5s_other_lcmp_run_does_not() {
    use lcmp_sim::figure::{compare, figure, Overrides};
    use lcmp_sim::vs_artifact::{Band, BINS};
    let o = Overrides {
        seeds: Some(1),
        ..Overrides::default()
    };
    let f1 = figure(1).unwrap();
    let results = run_figure(f1, &[f1.runs[0].label], &o);
    // One load, one seed: a run per scheme.
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1.len(), 3);
    assert!(results[0].1.iter().all(|r| r.load == 0.3 && r.seed == 1));
    let (c1, not) = compare(f1, &results, 0..BINS, Band::FULL).expect("compares");
    assert!(not.is_empty(), "{not:?}");
    let names: Vec<&str> = c1.iter().map(|c| c.column.as_str()).collect();
    assert_eq!(names, ["Ours", "ECMP", "UCMP"]);
    assert!(c1.iter().all(|c| c.verdict.agrees), "{c1:?}");
    // Figure 5's 30 % table, the same flows: its UCMP is Figure 1's run,
    // its LCMP another build's.
    let f5 = figure(5).unwrap();
    let as5 = vec![("30,50,80".to_string(), results[0].1.clone())];
    let (c5, _) = compare(f5, &as5, 0..BINS, Band::FULL).expect("compares");
    let of = |column: &str| {
        c5.iter()
            .find(|c| c.column == column && c.table == "30")
            .unwrap()
    };
    assert!(of("UCMP").verdict.agrees, "{c5:?}");
    assert!(
        !of("Ours").verdict.agrees && of("Ours").verdict.out >= 10,
        "{c5:?}"
    );
}
