//! The compile stamps (`tests/golden/compile-stamps.json`): every golden
//! program, as generated now, must have its sha256 stamped, so no change to
//! the P4 lands without a bf-p4c compile being recorded for it. A stamp
//! names the compiler (`p4lang/p4c` and its commit) and, per target, the
//! compiler's errors and stage counts; a target whose compile is still
//! pending has no counts (`null`). Where the compiler has stamped counts,
//! the compiler's output committed beside the goldens
//! (`compiled/<target>/`) must be present, agree with the stamp and the
//! exports, and be what docs/tofino.md states.
//!
//! To stamp a changed program: `lcmp tofino compile --bf-p4c PATH
//! [--p4include DIR ...] --target tofino1|tofino2 ...` (docs/tofino.md)
//! prints the sha256 and the stamp line of each target.

use std::path::{Path, PathBuf};

use lcmp_tofino::cli::{export, CommonArgs, EntriesArgs, HashArg, TargetArg};
use lcmp_tofino::compile::Stamps;
use lcmp_tofino::model::Target;
use lcmp_tofino::render::p4;

fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn args(topology: &str, switch: &str, target: TargetArg) -> EntriesArgs {
    EntriesArgs {
        common: CommonArgs {
            topology: topology.into(),
            switch: switch.into(),
            out: PathBuf::from("unused"),
            seed: 0,
            hash: HashArg::Crc32,
            scheme: lcmp_decide::Scheme::Lcmp,
            pin_slots: None,
            target,
            dev_ports: vec![],
            profile: lcmp_decide::Profile::Paper,
            routes: vec![],
            next_hops: vec![],
            placeholder_next_hops: true,
            cpu_port: None,
        },
        state: None,
    }
}

/// The golden programs: path, topology, switch, and the one target each
/// is generated for (the Tofino 2 program has half the pin cells,
/// `Target::default_pin_slots`).
const GOLDEN: [(&str, &str, &str, TargetArg, &str); 4] = [
    ("lcmp.p4", "testbed8", "DC1", TargetArg::Tofino1, "tofino"),
    (
        "tofino2/lcmp.p4",
        "testbed8",
        "DC1",
        TargetArg::Tofino2,
        "tofino2",
    ),
    (
        "bso13-dc3/lcmp.p4",
        "bso13",
        "DC3",
        TargetArg::Tofino1,
        "tofino",
    ),
    (
        "bso13-dc3/tofino2/lcmp.p4",
        "bso13",
        "DC3",
        TargetArg::Tofino2,
        "tofino2",
    ),
];

/// The program of a golden path.
fn exported(path: &str) -> lcmp_tofino::Program {
    let (_, topo, sw, target, _) = GOLDEN
        .iter()
        .find(|g| g.0 == path)
        .expect("a golden program");
    export(&args(topo, sw, *target)).expect("export").0
}

/// The golden programs as generated now: `(golden path, text)`.
fn programs() -> Vec<(&'static str, String)> {
    GOLDEN
        .iter()
        .map(|(path, ..)| (*path, p4::render(&exported(path))))
        .collect()
}

fn stamps() -> Stamps {
    let text = std::fs::read_to_string(golden().join("compile-stamps.json")).expect("stamps");
    Stamps::from_json(&text).expect("valid stamps")
}

#[test]
fn every_golden_program_is_stamped() {
    let stamps = stamps();
    for (path, text) in programs() {
        let Some(stamp) = stamps.find(&text) else {
            panic!(
                "{path}: sha256 {} is not stamped in tests/golden/compile-stamps.json: \
                 compile the changed program with `lcmp tofino compile` (docs/tofino.md) \
                 and stamp it",
                lcmp_tofino::compile::body_sha256(&text)
            );
        };
        assert_eq!(stamp.program, path);
        // The committed program is the one stamped.
        let committed = std::fs::read_to_string(golden().join(path)).expect("golden program");
        assert!(
            committed == text,
            "{path}: the committed program is not the generated one"
        );
        assert!(
            stamp.compiler.starts_with("p4lang/p4c "),
            "{}",
            stamp.compiler
        );
        let targets: Vec<&str> = stamp.targets.iter().map(|t| t.target.as_str()).collect();
        let target = GOLDEN.iter().find(|g| g.0 == path).map(|g| g.4);
        assert_eq!(targets, [target.unwrap_or_default()], "{path}");
        let strict = std::env::var_os("LCMP_STAMPS_REQUIRE_COMPILED").is_some_and(|v| v == "1");
        for t in &stamp.targets {
            assert!(
                !strict || t.compiled(),
                "{path} on {}: the compile is pending (LCMP_STAMPS_REQUIRE_COMPILED=1)",
                t.target
            );
            // A stamped compile has no error, and its counts come with it.
            assert_eq!(
                t.errors.is_some(),
                t.ingress_stages.is_some(),
                "{path} {}",
                t.target
            );
            assert_eq!(
                t.errors.is_some(),
                t.egress_stages.is_some(),
                "{path} {}",
                t.target
            );
            if let Some(e) = t.errors {
                assert_eq!(
                    e, 0,
                    "{path} on {}: a program with errors may not land",
                    t.target
                );
            }
        }
    }
}

/// Where the compiler has stamped a program, its output is committed and
/// matches the stamp and the exports: the resource summary's stage counts
/// are the stamp's and within the chip's stages, its stateful ALUs one per
/// register of the schema plus the digest meter, and docs/tofino.md's
/// verdict table shows the summary's figures.
#[test]
fn the_compilers_outputs_match_the_stamps_and_the_exports() {
    let stamps = stamps();
    let docs = std::fs::read_to_string(golden().join("../../../../docs/tofino.md")).expect("docs");
    let mut compared = 0;
    for (path, text) in programs() {
        let Some(stamp) = stamps.find(&text) else {
            continue; // every_golden_program_is_stamped fails for it
        };
        for t in stamp.targets.iter().filter(|t| t.compiled()) {
            let target = match t.target.as_str() {
                "tofino" => Target::Tofino1,
                _ => Target::Tofino2,
            };
            let Some(theirs) = t.ingress_stages else {
                panic!("{path} on {}: no ingress stage count", t.target);
            };
            assert!(
                theirs <= target.stages(),
                "{path} on {}: {theirs} stages",
                t.target
            );
            let dir = golden()
                .join(Path::new(path).parent().unwrap_or(Path::new("")))
                .join("compiled")
                .join(&t.target);
            for f in [
                "bf-rt.json",
                "p4info.txtpb",
                "salu.txt",
                "resources.txt",
                "placement.txt",
            ] {
                assert!(dir.join(f).is_file(), "{} lacks {f}", dir.display());
            }
            // The exports address the compiled program: names, ids and
            // widths from the compiler's own files.
            let schema = exported(path).schema();
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("compiler output");
            let m = lcmp_tofino::compile::p4info_mismatches(&schema, &read("p4info.txtpb"));
            assert!(m.is_empty(), "{path} on {}: P4Info {m:?}", t.target);
            let m = lcmp_tofino::compile::bfrt_mismatches(&schema, &read("bf-rt.json"));
            assert!(m.is_empty(), "{path} on {}: bf-rt.json {m:?}", t.target);
            // The pin and clock ALU blocks: sizes, constants, unsigned
            // compares (issue 32 items 4 and 5).
            let m = lcmp_tofino::compile::salu_mismatches(&schema, &read("salu.txt"));
            assert!(m.is_empty(), "{path} on {}: salu.txt {m:?}", t.target);
            // The resource summary is the stamped compile's.
            let res = read("resources.txt");
            let stages = format!(
                "ingress stages: {}\negress stages: {}\n",
                theirs,
                t.egress_stages.unwrap_or_default()
            );
            assert!(res.starts_with(&stages), "{path} on {}: {res}", t.target);
            let line = |what: &str| -> String {
                res.lines()
                    .find_map(|l| l.strip_prefix(what))
                    .unwrap_or_else(|| panic!("{path}: no {what}"))
                    .to_string()
            };
            assert_eq!(
                line("stateful ALUs: "),
                (schema.registers.len() + 1).to_string(),
                "{path} on {}: one per register and the digest meter",
                t.target
            );
            // The docs' verdict row: stages, SRAM (map RAMs), TCAM, ALUs.
            let row = format!(
                "| **{theirs} / {}** | {} ({}) | {} | {} |",
                t.egress_stages.unwrap_or_default(),
                line("SRAM blocks: "),
                line("map RAMs: "),
                line("TCAM blocks: "),
                line("stateful ALUs: ")
            );
            assert!(
                docs.lines()
                    .any(|l| l.contains(&format!("`tests/golden/{path}`")) && l.contains(&row)),
                "docs/tofino.md lacks the row of {path} on {}: {row}",
                t.target
            );
            compared += 1;
        }
    }
    eprintln!("{compared} compiled targets compared with their outputs");
}

/// The stamp check fails on a program whose text is not stamped: a one-byte
/// change of the golden program is refused.
/// docs/tofino.md's placement table ("Where the compiler placed it") is
/// the compiler's: per ingress stage, the names it lists for testbed8 DC1
/// on Tofino 1 and 2 are those of `compiled/<target>/placement.txt`
/// (`lcmp tofino compile` writes it from the assembly), "both hashes"
/// where the two hash actions are, and "statements only" where no named
/// object is.
#[test]
fn the_docs_placement_table_is_the_compilers() {
    let docs = std::fs::read_to_string(golden().join("../../../../docs/tofino.md")).expect("docs");
    let section = docs
        .split("## Where the compiler placed it")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("the placement section");
    let rows: Vec<Vec<&str>> = section
        .lines()
        .filter_map(|l| l.strip_prefix('|')?.strip_suffix('|'))
        .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>())
        .filter(|cells| cells.first().is_some_and(|c| c.parse::<u32>().is_ok()))
        .collect();
    assert!(rows.len() >= 12, "{section}");
    let files = [
        "compiled/tofino/placement.txt",
        "tofino2/compiled/tofino2/placement.txt",
    ];
    for (column, file) in files.iter().enumerate() {
        let placed = std::fs::read_to_string(golden().join(file)).expect("placement.txt");
        let mut stages = 0;
        for line in placed.lines() {
            let (stage, names) = line.split_once(':').expect("stage N: names");
            let stage = stage.trim_start_matches("stage ");
            let names: Vec<&str> = names.split_whitespace().collect();
            let cell = rows
                .iter()
                .find(|r| r.first() == Some(&stage))
                .and_then(|r| r.get(column + 1))
                .unwrap_or_else(|| panic!("docs lack stage {stage} of {file}"));
            let mut listed: Vec<&str> = cell.split('`').skip(1).step_by(2).collect();
            let mut named: Vec<&str> = names
                .iter()
                .copied()
                .filter(|n| !n.starts_with("lcmp_hash_"))
                .collect();
            listed.sort_unstable();
            named.sort_unstable();
            assert_eq!(listed, named, "{file} stage {stage}: docs say {cell}");
            let hashes = names.len() - named.len();
            assert_eq!(
                cell.contains("both hashes"),
                hashes == 2,
                "{file} stage {stage}: {cell}"
            );
            assert_eq!(
                cell.contains("statements only"),
                names.is_empty(),
                "{file} stage {stage}: {cell}"
            );
            stages += 1;
        }
        let documented = rows
            .iter()
            .filter(|r| r.get(column + 1).is_some_and(|c| !c.trim().is_empty()))
            .count();
        assert_eq!(
            documented, stages,
            "{file}: one row per stage the compiler used"
        );
    }
}

#[test]
fn an_unstamped_program_is_refused() {
    let stamps = stamps();
    let (_, text) = programs().into_iter().next().expect("a program");
    assert!(stamps.find(&text).is_some());
    let changed = text.replacen("PIN_IDLE = 32w", "PIN_IDLE = 32w1", 1);
    assert_ne!(changed, text);
    assert!(stamps.find(&changed).is_none());
}
