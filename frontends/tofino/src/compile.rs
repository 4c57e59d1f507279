//! `lcmp tofino compile`: runs the Tofino compiler on a generated
//! `lcmp.p4` and summarises what it placed, and the compile stamps that
//! record, per golden program, the sha256 of the text the compiler saw,
//! the compiler's commit and its stage counts.
//!
//! Two compilers are supported, both named by `--bf-p4c PATH`:
//!
//! * the open-source `p4c-barefoot` (`p4lang/p4c`, `backends/tofino`),
//!   which needs the program preprocessed first (`cc -E` with p4c's
//!   `p4include` and `bf-p4c/p4include`, given with `--p4include`); then
//!   `p4c-barefoot --nocpp -D__TARGET_TOFINO__=N --target tofinoN --arch
//!   tna|t2na -o OUT --bf-rt-schema OUT/bf-rt.json --p4runtime-files
//!   OUT/p4info.txtpb --p4runtime-force-std-externs FILE.p4pp`;
//! * an SDE's `bf-p4c`, which preprocesses itself (no `--p4include`).
//!
//! The summary is read from what the compiler writes: the stage count of
//! each gress from the assembly (`OUT/pipe/*.bfa`, `stage N ingress:`),
//! and the resource totals from `OUT/pipe/logs/resources.json` when the
//! compiler writes it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::Error;
use crate::model::Target;

/// What a compile of one program for one target produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Ingress stages (highest stage number used + 1; 0 if none).
    pub ingress_stages: u32,
    /// Egress stages.
    pub egress_stages: u32,
    /// The resources the compiler allocated, `(what, used)`, summed over the
    /// pipe's stages from `pipe/logs/resources.json` and `pipe/logs/phv.json`
    /// (written with `-g`; empty when the compiler does not write them).
    pub resources: Vec<(String, String)>,
}

/// The stage counts in a `.bfa` assembly: `stage N ingress:` and
/// `stage N egress:` lines.
///
/// ```
/// let bfa = "stage 0 ingress:\n  x\nstage 3 ingress:\nstage 0 egress:\n";
/// assert_eq!(lcmp_tofino::compile::bfa_stages(bfa), (4, 1));
/// ```
pub fn bfa_stages(bfa: &str) -> (u32, u32) {
    let mut out = (0u32, 0u32);
    for line in bfa.lines() {
        let mut w = line.split_whitespace();
        let (Some("stage"), Some(n), Some(gress)) = (w.next(), w.next(), w.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<u32>() else { continue };
        match gress.trim_end_matches(':') {
            "ingress" => out.0 = out.0.max(n + 1),
            "egress" => out.1 = out.1.max(n + 1),
            _ => {}
        }
    }
    out
}

/// The stateful ALU blocks of a `.bfa` assembly whose name contains one
/// of `registers`: each `stateful NAME:` header line and the lines indented
/// under it (its rows, its `initial_value`, its `actions:` with the ALU
/// instructions the compiler chose, e.g. `grt.u` or `grt.s` compares),
/// in the order of the file. What `lcmp tofino compile` writes to
/// `OUT/salu.txt` for the pin and clock registers, so that the compare
/// the wrap arithmetic rests on (docs/tofino.md, "The clock") can be kept
/// beside the goldens and read.
///
/// ```
/// let bfa = "stage 3 ingress:\n  stateful LcmpIngress.lcmp_pin0:\n    actions:\n      pin0_lookup:\n      - grt.u cmp0, hi, -phv_lo\n  exact_match x:\n    row: 1\n";
/// let got = lcmp_tofino::compile::salu_blocks(bfa, &["lcmp_pin0"]);
/// assert_eq!(got, "  stateful LcmpIngress.lcmp_pin0:\n    actions:\n      pin0_lookup:\n      - grt.u cmp0, hi, -phv_lo\n");
/// assert_eq!(lcmp_tofino::compile::salu_blocks(bfa, &["lcmp_clock"]), "");
/// ```
pub fn salu_blocks(bfa: &str, registers: &[&str]) -> String {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out = String::new();
    let mut inside: Option<usize> = None;
    for line in bfa.lines() {
        if let Some(depth) = inside {
            if line.trim().is_empty() || indent(line) > depth {
                out.push_str(line);
                out.push('\n');
                continue;
            }
            inside = None;
        }
        let t = line.trim_start();
        if t.starts_with("stateful ") && registers.iter().any(|r| t.contains(r)) {
            inside = Some(indent(line));
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// What the compiler's stateful ALU blocks (`OUT/salu.txt`, see
/// [`salu_blocks`]) say against the program's schema, one line per
/// difference: each register of [`SALU_REGISTERS`] (or each of its
/// halves) present with the schema's size; the clock starting at [`CLOCK_START_WRAPS`] epochs and
/// testing the wrap against `-CLOCK_WRAP`; and every compare of the pins
/// and the clock unsigned (`.u`), as the interp mirror compares (issue 32
/// item 5: the freshness and wrap tests rest on it).
///
/// [`CLOCK_START_WRAPS`]: crate::schema::CLOCK_START_WRAPS
pub fn salu_mismatches(schema: &crate::schema::Schema, salu: &str) -> Vec<String> {
    use crate::schema::{names, CLOCK_START_WRAPS, CLOCK_UNIT_SHIFT, CLOCK_WRAP};
    let mut out = Vec::new();
    // A halved register (crate::halves) is checked in each half.
    let names = SALU_REGISTERS
        .iter()
        .flat_map(|&r| crate::halves::halves(schema, r).map_or_else(|| vec![r], |h| h.to_vec()));
    for name in names {
        let block = salu_blocks(salu, &[name]);
        let Some(ours) = schema.registers.iter().find(|r| r.name == name) else {
            out.push(format!("{name}: not in the schema"));
            continue;
        };
        let size = format!(
            "name: {}.{name}, size: {} }}",
            ours.control.name(),
            ours.size
        );
        if block.is_empty() {
            out.push(format!("{name}: no stateful ALU block"));
        } else if !block.contains(&size) {
            out.push(format!(
                "{name}: the compiler's size is not the schema's {}",
                ours.size
            ));
        }
        // Compares: `equ`/`neq` are sign-free; an ordered compare must be
        // unsigned.
        for l in block.lines().map(str::trim) {
            let op = l
                .strip_prefix("- ")
                .and_then(|r| r.split(' ').next())
                .unwrap_or("");
            if op.ends_with(".s") {
                out.push(format!("{name}: a signed compare: {l}"));
            }
        }
        if name == names::REG_CLOCK {
            let epoch = CLOCK_START_WRAPS << CLOCK_UNIT_SHIFT;
            if !block.contains(&format!("initial_value: {{ lo: {epoch} ,")) {
                out.push(format!("{name}: initial epoch is not {epoch}"));
            }
            let wrap = format!(", -{CLOCK_WRAP}");
            if !block
                .lines()
                .any(|l| l.contains("grt.u") && l.trim_end().ends_with(&wrap))
            {
                out.push(format!(
                    "{name}: no unsigned wrap test against -{CLOCK_WRAP}"
                ));
            }
        }
    }
    out
}

/// The registers whose ALU instructions `lcmp tofino compile` keeps
/// (`OUT/salu.txt`): the pins and the clock.
pub const SALU_REGISTERS: [&str; 3] = [
    crate::schema::names::REG_PIN0,
    crate::schema::names::REG_PIN1,
    crate::schema::names::REG_CLOCK,
];

/// The compiler's command line for `target`, on `input` (preprocessed when
/// `nocpp`), writing into `out`.
pub fn compiler_args(target: Target, input: &Path, out: &Path, nocpp: bool) -> Vec<String> {
    let (t, arch) = match target {
        Target::Tofino1 => ("tofino", "tna"),
        Target::Tofino2 => ("tofino2", "t2na"),
    };
    let mut args = Vec::new();
    if nocpp {
        args.push("--nocpp".to_string());
    }
    if target == Target::Tofino2 {
        // Tofino 2's CLOTs: p4lang/p4c 34b86e9 allocates the desugared IPv4
        // options varbit to a CLOT that its parser never fills, and bfas
        // rejects the assembly ("No length for clot 0"); in PHV it
        // assembles (docs/tofino.md).
        args.push("--no-clot".to_string());
    }
    args.extend([
        format!("-D__TARGET_TOFINO__={}", target.number()),
        "--target".into(),
        t.into(),
        "--arch".into(),
        arch.into(),
        "-o".into(),
        out.display().to_string(),
        // Debug info: the resource and PHV logs the summary reads.
        "-g".into(),
        "--bf-rt-schema".into(),
        out.join("bf-rt.json").display().to_string(),
        "--p4runtime-files".into(),
        out.join("p4info.txtpb").display().to_string(),
        // The P4Info in standard messages, the one the exports use
        // (render::p4runtime); bf-rt.json is the same either way.
        "--p4runtime-force-std-externs".into(),
        input.display().to_string(),
    ]);
    args
}

/// The preprocessor's command line (`cc -E`) for `target`.
pub fn preprocess_args(
    target: Target,
    input: &Path,
    output: &Path,
    include: &[PathBuf],
) -> Vec<String> {
    let mut args = vec![
        "-E".to_string(),
        "-x".into(),
        "assembler-with-cpp".into(),
        format!("-D__TARGET_TOFINO__={}", target.number()),
    ];
    for i in include {
        args.push(format!("-I{}", i.display()));
    }
    args.extend([
        input.display().to_string(),
        "-o".into(),
        output.display().to_string(),
    ]);
    args
}

fn run(step: &'static str, program: &Path, args: &[String], log: &Path) -> Result<(), Error> {
    let output = Command::new(program)
        .args(args)
        .output()
        .map_err(|source| Error::Io {
            path: program.to_path_buf(),
            source,
        })?;
    let mut text = output.stdout;
    text.extend_from_slice(&output.stderr);
    std::fs::write(log, &text).map_err(|source| Error::Io {
        path: log.to_path_buf(),
        source,
    })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(Error::Compile {
            step,
            status: output.status.code(),
            log: log.to_path_buf(),
        })
    }
}

/// The texts of a finished compile's assemblies, `OUT/pipe/*.bfa`.
fn bfa_texts(out: &Path) -> Result<Vec<String>, Error> {
    let pipe = out.join("pipe");
    let dir = std::fs::read_dir(&pipe).map_err(|source| Error::Io {
        path: pipe.clone(),
        source,
    })?;
    let mut texts = Vec::new();
    for e in dir.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "bfa") {
            texts.push(std::fs::read_to_string(&p).map_err(|source| Error::Io {
                path: p.clone(),
                source,
            })?);
        }
    }
    Ok(texts)
}

/// Reads the summary of a finished compile in `out`.
pub fn summary(out: &Path) -> Result<Summary, Error> {
    let pipe = out.join("pipe");
    let mut s = Summary::default();
    for text in bfa_texts(out)? {
        let (i, g) = bfa_stages(&text);
        s.ingress_stages = s.ingress_stages.max(i);
        s.egress_stages = s.egress_stages.max(g);
    }
    let read = |f: &str| {
        std::fs::read_to_string(pipe.join("logs").join(f))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    };
    if let Some(v) = read("resources.json") {
        s.resources = mau_totals(&v);
    }
    if let Some(v) = read("phv.json") {
        s.resources.extend(phv_totals(&v));
    }
    Ok(s)
}

/// The MAU resources of a `resources.json` (bf-p4c's schema: per stage,
/// `rams.srams`, `map_rams.maprams`, `tcams.tcams`, `meter_alus.meters`,
/// `hash_distribution_units.units`, `gateways.gateways`, each a list of
/// the units in use), summed over the stages.
pub fn mau_totals(resources: &serde_json::Value) -> Vec<(String, String)> {
    const UNITS: [(&str, &str, &str); 6] = [
        ("SRAM blocks", "rams", "srams"),
        ("map RAMs", "map_rams", "maprams"),
        ("TCAM blocks", "tcams", "tcams"),
        ("stateful ALUs", "meter_alus", "meters"),
        (
            "hash distribution units",
            "hash_distribution_units",
            "units",
        ),
        ("gateways", "gateways", "gateways"),
    ];
    let Some(stages) = resources["resources"]["mau"]["mau_stages"].as_array() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (what, group, list) in UNITS {
        let used: usize = stages
            .iter()
            .map(|st| st[group][list].as_array().map_or(0, Vec::len))
            .sum();
        out.push((what.to_string(), used.to_string()));
    }
    out
}

/// The PHV containers a `phv.json` allocates (`containers`: one per
/// container in use) against those the target has (`resources`).
pub fn phv_totals(phv: &serde_json::Value) -> Vec<(String, String)> {
    let used = phv["containers"].as_array().map_or(0, Vec::len);
    let bits: u64 = phv["containers"].as_array().map_or(0, |c| {
        c.iter().filter_map(|x| x["bit_width"].as_u64()).sum()
    });
    let available: u64 = phv["resources"].as_array().map_or(0, |r| {
        r.iter().filter_map(|x| x["num_containers"].as_u64()).sum()
    });
    vec![(
        "PHV containers".to_string(),
        format!("{used} of {available} ({bits} bits)"),
    )]
}

/// Compiles `p4` (a file) for `target` into `out`, with `bf_p4c`; with
/// `include` non-empty, preprocesses with `cc` first and passes
/// `--nocpp`. Returns the summary.
pub fn compile(
    bf_p4c: &Path,
    include: &[PathBuf],
    p4: &Path,
    target: Target,
    out: &Path,
) -> Result<Summary, Error> {
    std::fs::create_dir_all(out).map_err(|source| Error::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let input = if include.is_empty() {
        p4.to_path_buf()
    } else {
        let pp = out.join("lcmp.p4pp");
        let args = preprocess_args(target, p4, &pp, include);
        run(
            "preprocess (cc -E)",
            Path::new("cc"),
            &args,
            &out.join("cpp.log"),
        )?;
        pp
    };
    let args = compiler_args(target, &input, out, !include.is_empty());
    run("compile", bf_p4c, &args, &out.join("compile.log"))?;
    write_salu(out)?;
    write_placement(out)?;
    let s = summary(out)?;
    let path = out.join("resources.txt");
    std::fs::write(&path, s.to_text()).map_err(|source| Error::Io { path, source })?;
    Ok(s)
}

impl Summary {
    /// `OUT/resources.txt`, the summary kept beside the goldens: the stage
    /// counts, then one `what: used` line per resource.
    ///
    /// ```
    /// let s = lcmp_tofino::compile::Summary {
    ///     ingress_stages: 10,
    ///     egress_stages: 1,
    ///     resources: vec![("SRAM blocks".into(), "116".into())],
    /// };
    /// assert_eq!(s.to_text(), "ingress stages: 10\negress stages: 1\nSRAM blocks: 116\n");
    /// ```
    pub fn to_text(&self) -> String {
        let mut o = format!(
            "ingress stages: {}\negress stages: {}\n",
            self.ingress_stages, self.egress_stages
        );
        for (k, v) in &self.resources {
            o.push_str(k);
            o.push_str(": ");
            o.push_str(v);
            o.push('\n');
        }
        o
    }
}

/// Writes `OUT/salu.txt`: [`salu_blocks`] of [`SALU_REGISTERS`] from every
/// `OUT/pipe/*.bfa`.
fn write_salu(out: &Path) -> Result<(), Error> {
    let text: String = bfa_texts(out)?
        .iter()
        .map(|bfa| salu_blocks(bfa, &SALU_REGISTERS))
        .collect();
    let path = out.join("salu.txt");
    std::fs::write(&path, text).map_err(|source| Error::Io { path, source })
}

/// Where the compiler placed the program's named objects, per ingress
/// stage of an assembly (`.bfa`): its match tables (`exact_match`,
/// `ternary_match` of a P4 table, without bf-p4c's `_0` suffix; the
/// `tbl_*` tables it makes of the `apply` block's statements are left
/// out), stateful registers and meters (by their P4 name), and the hash
/// actions of the `lcmp_hash_*` tables. Each stage is one line, `stage N:`
/// and its names in the assembly's order (`OUT/placement.txt`, kept beside
/// the goldens; docs/tofino.md's placement table is checked against it).
///
/// ```
/// let bfa = "stage 0 ingress:\n  hash_action tbl_lcmp_hash_sig 0:\n  ternary_match lcmp_route_0 1:\n  ternary_match tbl_lcmp7:\n  stateful tbl_lcmp7$salu.LcmpIngress.lcmp_clock:\n    row: 1\nstage 1 ingress:\nstage 0 egress:\n  exact_match lcmp_tx_0:\n";
/// assert_eq!(
///     lcmp_tofino::compile::placement(bfa),
///     "stage 0: lcmp_hash_sig lcmp_route lcmp_clock\nstage 1:\n"
/// );
/// ```
pub fn placement(bfa: &str) -> String {
    let mut out = String::new();
    let mut ingress = false;
    for line in bfa.lines() {
        if let Some(head) = line.strip_prefix("stage ") {
            ingress = head.ends_with(" ingress:");
            if ingress {
                let n = head.split(' ').next().unwrap_or_default();
                out.push_str(&format!("stage {n}:\n"));
            }
            continue;
        }
        // A stage's objects sit two spaces in; their bodies deeper.
        let Some(item) = line
            .strip_prefix("  ")
            .filter(|i| ingress && !i.starts_with(' '))
        else {
            continue;
        };
        let mut words = item.split_whitespace();
        let (Some(kind), Some(name)) = (words.next(), words.next()) else {
            continue;
        };
        let name = name.trim_end_matches(':');
        let named = match kind {
            "exact_match" | "ternary_match" if !name.starts_with("tbl_") => {
                Some(name.strip_suffix("_0").unwrap_or(name))
            }
            "hash_action" => name
                .strip_prefix("tbl_")
                .filter(|n| n.starts_with("lcmp_hash_")),
            "stateful" | "meter" => name.rsplit('.').next(),
            _ => None,
        };
        if let Some(n) = named {
            out.pop();
            out.push(' ');
            out.push_str(n);
            out.push('\n');
        }
    }
    out
}

/// Writes `OUT/placement.txt`: [`placement`] of every `OUT/pipe/*.bfa`.
fn write_placement(out: &Path) -> Result<(), Error> {
    let text: String = bfa_texts(out)?.iter().map(|bfa| placement(bfa)).collect();
    let path = out.join("placement.txt");
    std::fs::write(&path, text).map_err(|source| Error::Io { path, source })
}

/// Runs the assembler `bfas` on each `OUT/pipe/*.bfa` of a finished
/// compile, writing `OUT/asm/` (log in `OUT/assemble.log`); an assembler
/// error is a one-line error naming the log.
pub fn assemble(bfas: &Path, out: &Path) -> Result<(), Error> {
    let pipe = out.join("pipe");
    let dir = std::fs::read_dir(&pipe).map_err(|source| Error::Io {
        path: pipe.clone(),
        source,
    })?;
    let asm = out.join("asm");
    // bfas writes its resource logs there and complains if it cannot.
    let logs = asm.join("logs");
    std::fs::create_dir_all(&logs).map_err(|source| Error::Io {
        path: logs.clone(),
        source,
    })?;
    for e in dir.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "bfa") {
            let args = vec![
                "-o".to_string(),
                asm.display().to_string(),
                p.display().to_string(),
            ];
            run("assemble", bfas, &args, &out.join("assemble.log"))?;
        }
    }
    Ok(())
}

/// One stamp: a program's text hash, the compiler that compiled it and
/// what it placed, per target.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stamp {
    /// The golden program (a path under `tests/golden`).
    pub program: String,
    /// SHA-256 of its text after the header comment ([`program_body`]).
    pub sha256: String,
    /// The compiler: repository and commit.
    pub compiler: String,
    /// Per target: `tofino` / `tofino2`, ingress and egress stages.
    pub targets: Vec<TargetStamp>,
}

/// The compiler's verdict for one target: `None` everywhere while the
/// compile is pending (the program is recorded, not yet compiled).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TargetStamp {
    /// `tofino` or `tofino2`.
    pub target: String,
    /// Errors reported (0 for a stamp that lets the program land).
    pub errors: Option<u32>,
    /// Ingress stages the compiler used.
    pub ingress_stages: Option<u32>,
    /// Egress stages the compiler used.
    pub egress_stages: Option<u32>,
}

impl TargetStamp {
    /// Whether the compiler has compiled it with no error.
    pub fn compiled(&self) -> bool {
        self.errors == Some(0) && self.ingress_stages.is_some()
    }
}

/// The stamp file (`tests/golden/compile-stamps.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stamps {
    /// One per golden program.
    pub stamps: Vec<Stamp>,
}

impl Stamps {
    /// Parses the stamp file.
    pub fn from_json(text: &str) -> Result<Stamps, Error> {
        serde_json::from_str(text).map_err(Error::Stamps)
    }

    /// The stamp of a program text, if the hash of its body
    /// ([`program_body`]) is stamped.
    pub fn find(&self, text: &str) -> Option<&Stamp> {
        let h = body_sha256(text);
        self.stamps.iter().find(|s| s.sha256 == h)
    }

    /// The stamps committed beside the golden programs
    /// (`tests/golden/compile-stamps.json`, compiled into the crate so that
    /// a generated program's header states what the compiler said of it);
    /// empty if the file does not parse (the stamp test fails then).
    pub fn golden() -> Stamps {
        Stamps::from_json(include_str!("../tests/golden/compile-stamps.json")).unwrap_or_default()
    }
}

/// A generated program without its header comment: what the compiler
/// compiles and a stamp records (the header states the stamp, so it cannot
/// be part of what the stamp hashes).
///
/// ```
/// use lcmp_tofino::compile::program_body;
/// assert_eq!(program_body("/* header */\n\n#include <core.p4>\n"), "#include <core.p4>\n");
/// assert_eq!(program_body("#include <core.p4>\n"), "#include <core.p4>\n");
/// ```
pub fn program_body(text: &str) -> &str {
    match text.strip_prefix("/*").and_then(|t| t.split_once("*/")) {
        Some((_, rest)) => rest.trim_start_matches('\n'),
        None => text,
    }
}

/// The SHA-256 (hex) of a program's body ([`program_body`]): the hash a
/// stamp records.
pub fn body_sha256(text: &str) -> String {
    crate::sha256::hex(program_body(text).as_bytes())
}

#[cfg(test)]
pub(crate) mod test {
    use super::*;

    #[test]
    fn resource_logs_are_summed_over_the_stages() {
        let res = serde_json::json!({"resources": {"mau": {"mau_stages": [
            {"rams": {"srams": [{}, {}, {}]}, "meter_alus": {"meters": [{}]},
             "tcams": {"tcams": [{}]}},
            {"rams": {"srams": [{}]}, "map_rams": {"maprams": [{}, {}]},
             "hash_distribution_units": {"units": [{}, {}]}, "gateways": {"gateways": [{}]}}
        ]}}});
        let got: Vec<String> = mau_totals(&res)
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        assert_eq!(
            got,
            [
                "SRAM blocks 4",
                "map RAMs 2",
                "TCAM blocks 1",
                "stateful ALUs 1",
                "hash distribution units 2",
                "gateways 1"
            ]
        );
        assert!(mau_totals(&serde_json::json!({})).is_empty());
        let phv = serde_json::json!({
            "containers": [{"bit_width": 32}, {"bit_width": 8}],
            "resources": [{"num_containers": 32}, {"num_containers": 48}]
        });
        assert_eq!(
            phv_totals(&phv),
            [(
                "PHV containers".to_string(),
                "2 of 80 (40 bits)".to_string()
            )]
        );
    }

    /// A finished compile's directory: the stage counts and `salu.txt`
    /// (the pin and clock registers' ALU blocks, nothing else) from its
    /// assembly.
    #[test]
    fn the_assembly_gives_the_stages_and_the_pin_and_clock_alu_blocks() {
        let dir = std::env::temp_dir().join(format!("lcmp-salu-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("pipe")).expect("dir");
        let bfa = "stage 0 ingress:\n  stateful LcmpIngress.lcmp_clock:\n    actions:\n      - grt.s cmp0, hi\n  stateful LcmpIngress.lcmp_fail:\n    actions:\n      - neq cmp0, lo\nstage 4 ingress:\n  stateful LcmpIngress.lcmp_pin0:\n    actions:\n      - grt.u cmp0, phv_lo, -hi\n";
        std::fs::write(dir.join("pipe/lcmp.bfa"), bfa).expect("bfa");
        write_salu(&dir).expect("salu");
        let salu = std::fs::read_to_string(dir.join("salu.txt")).expect("salu.txt");
        let s = summary(&dir).expect("summary");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(salu.contains("lcmp_clock:\n    actions:\n      - grt.s cmp0, hi\n"));
        assert!(salu.contains("lcmp_pin0:\n    actions:\n      - grt.u cmp0, phv_lo, -hi\n"));
        assert!(
            !salu.contains("lcmp_fail") && !salu.contains("stage"),
            "{salu}"
        );
        assert_eq!((s.ingress_stages, s.egress_stages), (5, 0));
    }

    /// A stand-in compiler in `dir`: writes `OUT/pipe/lcmp.bfa` with two
    /// ingress stages (`lcmp_select` in the first) and one egress stage.
    #[cfg(unix)]
    pub(crate) fn fake_compiler(dir: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let compiler = dir.join("fake-bf-p4c");
        let script = "#!/bin/sh\nout=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n\
                      mkdir -p \"$out/pipe\"\nprintf 'stage 0 ingress:\\n  exact_match lcmp_select_0 2:\\n\
                      stage 1 ingress:\\nstage 0 egress:\\n' > \"$out/pipe/lcmp.bfa\"\n";
        std::fs::write(&compiler, script).expect("script");
        std::fs::set_permissions(&compiler, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        compiler
    }

    /// A compile runs the compiler, then writes the summary, `salu.txt`
    /// and `placement.txt` from its assembly; a failing compiler is the
    /// compile step's error.
    #[cfg(unix)]
    #[test]
    fn a_compile_writes_its_summary_and_placement_from_the_assembly() {
        let dir = std::env::temp_dir().join(format!("lcmp-compile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let p4 = dir.join("in.p4");
        std::fs::write(&p4, "").expect("p4");
        let compiler = fake_compiler(&dir);
        let out = dir.join("out");
        let got = compile(&compiler, &[], &p4, Target::Tofino1, &out);
        let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap_or_default();
        let (placement_txt, resources_txt) = (read("placement.txt"), read("resources.txt"));
        let failed = compile(Path::new("/bin/false"), &[], &p4, Target::Tofino1, &out);
        let _ = std::fs::remove_dir_all(&dir);
        let s = got.expect("the fake compiles");
        assert_eq!((s.ingress_stages, s.egress_stages), (2, 1), "{s:?}");
        assert_eq!(placement_txt, "stage 0: lcmp_select\nstage 1:\n");
        assert_eq!(resources_txt, s.to_text());
        assert!(
            matches!(
                failed,
                Err(Error::Compile {
                    step: "compile",
                    ..
                })
            ),
            "{failed:?}"
        );
    }

    /// `bfas` runs once on every `pipe/*.bfa` and on nothing else, with
    /// `-o OUT/asm`; its failure is the step's error naming the log.
    #[cfg(unix)]
    #[test]
    fn the_assembler_runs_on_every_assembly_and_its_failure_is_an_error() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("lcmp-bfas-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("pipe")).expect("dir");
        for f in ["a.bfa", "b.json", "c.bfa"] {
            std::fs::write(dir.join("pipe").join(f), "").expect("file");
        }
        let calls = dir.join("calls");
        let bfas = dir.join("fake-bfas");
        let script = format!("#!/bin/sh\necho \"$@\" >> '{}'\n", calls.display());
        std::fs::write(&bfas, script).expect("script");
        std::fs::set_permissions(&bfas, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let ran = assemble(&bfas, &dir);
        let mut got: Vec<String> = std::fs::read_to_string(&calls)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        got.sort();
        let failed = assemble(Path::new("/bin/false"), &dir);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(ran.is_ok(), "{ran:?}");
        let asm = dir.join("asm").display().to_string();
        let pipe = dir.join("pipe");
        assert_eq!(
            got,
            [
                format!("-o {asm} {}", pipe.join("a.bfa").display()),
                format!("-o {asm} {}", pipe.join("c.bfa").display()),
            ]
        );
        assert!(
            matches!(
                failed,
                Err(Error::Compile {
                    step: "assemble",
                    ..
                })
            ),
            "{failed:?}"
        );
    }

    /// The `resources.txt` kept beside every golden is a [`Summary`]'s
    /// text: read back into one, [`Summary::to_text`] writes it again byte
    /// for byte.
    #[test]
    fn the_kept_resource_files_are_summaries_as_text() {
        let kept = [
            include_str!("../tests/golden/compiled/tofino/resources.txt"),
            include_str!("../tests/golden/tofino2/compiled/tofino2/resources.txt"),
        ];
        for text in kept {
            let mut lines = text
                .lines()
                .map(|l| l.split_once(": ").expect("what: used"));
            let mut stages = |what: &str| {
                let (k, v) = lines.next().expect("a stage line");
                assert_eq!(k, what, "{text}");
                v.parse::<u32>().expect("a stage count")
            };
            let (ingress_stages, egress_stages) =
                (stages("ingress stages"), stages("egress stages"));
            let s = Summary {
                ingress_stages,
                egress_stages,
                resources: lines.map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            };
            assert!(s.resources.len() > 3, "{text}");
            assert_eq!(s.to_text(), text);
        }
    }

    /// The golden programs are found in the stamps compiled into the
    /// crate, each compiled on its target; a stamp still pending, with an
    /// error or without stages is not; a stamp file that does not parse is
    /// an error, and one that does reads back whole.
    #[test]
    fn the_golden_programs_are_stamped_and_only_a_clean_compile_counts() {
        let stamps = Stamps::golden();
        let goldens = [
            (include_str!("../tests/golden/lcmp.p4"), "tofino"),
            (include_str!("../tests/golden/tofino2/lcmp.p4"), "tofino2"),
        ];
        for (text, target) in goldens {
            let t = stamps
                .find(text)
                .and_then(|s| s.targets.iter().find(|t| t.target == target))
                .expect("the golden program is stamped for its target");
            assert!(t.compiled(), "{t:?}");
            let with = |f: fn(&mut TargetStamp)| {
                let mut u = t.clone();
                f(&mut u);
                u.compiled()
            };
            assert!(!with(|u| u.errors = None));
            assert!(!with(|u| u.errors = Some(1)));
            assert!(!with(|u| u.ingress_stages = None));
        }
        assert!(matches!(Stamps::from_json("{"), Err(Error::Stamps(_))));
        let text = serde_json::to_string(&stamps).expect("json");
        assert_eq!(Stamps::from_json(&text).ok(), Some(stamps));
    }

    /// The placement names the P4 tables, registers, meters and LCMP hash
    /// actions of each ingress stage, and nothing of the compiler's own
    /// tables, other hash actions or the egress.
    #[test]
    fn the_placement_names_each_ingress_stages_objects() {
        let bfa = "phv ingress:\nstage 0 ingress:\n  hash_action tbl_lcmp_hash_ecmp 0:\n  \
                   hash_action tbl_lcmp709 0:\n  exact_match lcmp_select_0 2:\n  \
                   ternary_match tbl_lcmp7:\n  stateful tbl_lcmp7$salu.LcmpIngress.lcmp_pin0:\n    \
                   exact_match nested_0:\nstage 1 ingress:\nstage 2 ingress:\n  \
                   meter tbl_x$meter.LcmpIngress.digest_meter:\n  gateway g:\n\
                   stage 0 egress:\n  exact_match lcmp_tx_0:\n";
        assert_eq!(
            placement(bfa),
            "stage 0: lcmp_hash_ecmp lcmp_select lcmp_pin0\nstage 1:\nstage 2: digest_meter\n"
        );
        assert_eq!(placement(""), "");
    }

    #[test]
    fn command_lines_are_the_documented_ones() {
        let a = compiler_args(
            Target::Tofino2,
            Path::new("x/lcmp.p4pp"),
            Path::new("o"),
            true,
        );
        assert_eq!(
            a.join(" "),
            "--nocpp --no-clot -D__TARGET_TOFINO__=2 --target tofino2 --arch t2na -o o -g \
             --bf-rt-schema o/bf-rt.json --p4runtime-files o/p4info.txtpb \
             --p4runtime-force-std-externs x/lcmp.p4pp"
        );
        let p = preprocess_args(
            Target::Tofino1,
            Path::new("lcmp.p4"),
            Path::new("o/lcmp.p4pp"),
            &[PathBuf::from("a"), PathBuf::from("b")],
        );
        assert_eq!(
            p.join(" "),
            "-E -x assembler-with-cpp -D__TARGET_TOFINO__=1 -Ia -Ib lcmp.p4 -o o/lcmp.p4pp"
        );
        assert_eq!(
            bfa_stages("stage 11 ingress:\nstage 2 egress:\nstage x ingress:"),
            (12, 3)
        );
        assert_eq!(bfa_stages(""), (0, 0));
    }
}

/// A text-format protobuf message, parsed just far enough to read P4Info:
/// fields in order, each a scalar (numbers, enums, unquoted strings) or a
/// nested message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Text {
    /// A scalar's text (a string without its quotes).
    Scalar(String),
    /// A nested message.
    Msg(Vec<(String, Text)>),
}

impl Text {
    /// Parses a text-format message (the top level, without braces).
    pub fn parse(text: &str) -> Option<Text> {
        let mut toks = Vec::new();
        let mut chars = text.chars().peekable();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                chars.next();
            } else if c == '#' {
                while chars.next().is_some_and(|c| c != '\n') {}
            } else if c == '{' || c == '}' || c == ':' {
                toks.push(c.to_string());
                chars.next();
            } else if c == '"' {
                chars.next();
                let mut s = String::from("\"");
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            s.push(c);
                            s.extend(chars.next());
                        }
                        '"' => break,
                        c => s.push(c),
                    }
                }
                toks.push(s);
            } else {
                let mut s = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || "{}:\"".contains(c) {
                        break;
                    }
                    s.push(c);
                    chars.next();
                }
                toks.push(s);
            }
        }
        let mut pos = 0;
        let msg = Self::fields(&toks, &mut pos)?;
        (pos == toks.len()).then_some(Text::Msg(msg))
    }

    fn fields(toks: &[String], pos: &mut usize) -> Option<Vec<(String, Text)>> {
        let mut out = Vec::new();
        while let Some(key) = toks.get(*pos) {
            if key == "}" {
                break;
            }
            *pos += 1;
            if toks.get(*pos).is_some_and(|t| t == ":") {
                *pos += 1;
            }
            if toks.get(*pos).is_some_and(|t| t == "{") {
                *pos += 1;
                let inner = Self::fields(toks, pos)?;
                if toks.get(*pos).is_some_and(|t| t == "}") {
                    *pos += 1;
                } else {
                    return None;
                }
                out.push((key.clone(), Text::Msg(inner)));
            } else {
                let v = toks.get(*pos)?;
                *pos += 1;
                out.push((
                    key.clone(),
                    Text::Scalar(v.trim_start_matches('"').to_string()),
                ));
            }
        }
        Some(out)
    }

    /// Every field `key` of a message.
    pub fn all(&self, key: &str) -> Vec<&Text> {
        let fields: &[(String, Text)] = match self {
            Text::Msg(m) => m,
            Text::Scalar(_) => &[],
        };
        fields
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v)
            .collect()
    }

    /// The first field `key`.
    pub fn get(&self, key: &str) -> Option<&Text> {
        self.all(key).into_iter().next()
    }

    /// The first scalar field `key` at any depth, depth first (the
    /// `size` inside an extern instance's `info {[type.googleapis.com/
    /// barefoot.Register] {...}}`, or a standard message's own).
    pub fn deep(&self, key: &str) -> Option<&str> {
        let Text::Msg(fields) = self else {
            return None;
        };
        fields.iter().find_map(|(k, v)| match v {
            Text::Scalar(s) if k == key => Some(s.as_str()),
            Text::Scalar(_) => None,
            Text::Msg(_) => v.deep(key),
        })
    }

    /// A scalar at a dotted path (`preamble.name`).
    pub fn at(&self, path: &str) -> Option<&str> {
        let mut t = self;
        for k in path.split('.') {
            t = t.get(k)?;
        }
        match t {
            Text::Scalar(s) => Some(s),
            Text::Msg(_) => None,
        }
    }
}

/// What differs between the P4Info this crate renders for `schema` and the
/// compiler's (`p4info.txtpb` of `p4c-barefoot --p4runtime-files`): table,
/// action, key field and parameter names, ids and widths, and the register
/// and digest names and ids (an extern instance in the compiler's TNA
/// P4Info: the low 24 bits of its id are compared). Empty: they agree.
pub fn p4info_mismatches(schema: &crate::schema::Schema, compiler: &str) -> Vec<String> {
    let ours = crate::render::p4runtime::p4info(schema);
    let (Some(ours), Some(theirs)) = (Text::parse(&ours), Text::parse(compiler)) else {
        return vec!["a P4Info does not parse".into()];
    };
    let mut out = Vec::new();
    // Names without the pipeline: bf-p4c's default form prefixes tables
    // and extern instances with it, its --p4runtime-force-std-externs form
    // (ours) strips it.
    let unpiped = |n: &str| {
        n.strip_prefix(crate::schema::PIPE)
            .and_then(|r| r.strip_prefix('.'))
            .unwrap_or(n)
            .to_string()
    };
    let by_name = |doc: &Text, kind: &str| -> Vec<(String, Text)> {
        doc.all(kind)
            .into_iter()
            .filter_map(|t| Some((unpiped(t.at("preamble.name")?), t.clone())))
            .collect()
    };
    for kind in ["tables", "actions"] {
        let theirs = by_name(&theirs, kind);
        for (name, t) in by_name(&ours, kind) {
            let Some((_, c)) = theirs.iter().find(|(n, _)| *n == name) else {
                out.push(format!("{kind} {name}: not in the compiler's P4Info"));
                continue;
            };
            if t.at("preamble.id") != c.at("preamble.id") {
                out.push(format!(
                    "{kind} {name}: id {:?}, the compiler's {:?}",
                    t.at("preamble.id"),
                    c.at("preamble.id")
                ));
            }
            for sub in ["match_fields", "params"] {
                let cs: Vec<&Text> = c.all(sub);
                for f in t.all(sub) {
                    let fname = f.at("name").unwrap_or_default();
                    let Some(cf) = cs.iter().find(|x| x.at("name") == Some(fname)) else {
                        out.push(format!("{name}: {sub} {fname} not in the compiler's"));
                        continue;
                    };
                    for k in ["id", "bitwidth", "match_type"] {
                        if f.at(k) != cf.at(k) {
                            out.push(format!(
                                "{name}.{fname}: {k} {:?}, the compiler's {:?}",
                                f.at(k),
                                cf.at(k)
                            ));
                        }
                    }
                }
            }
        }
    }
    // Registers and digests: standard messages here; externs (or, with
    // --p4runtime-force-std-externs, standard messages) in the compiler's.
    // Registers and counters also by size (cells), from the instance's
    // extern info or the standard message.
    let low = |s: Option<&str>| s.and_then(|s| s.parse::<u32>().ok()).map(|v| v & 0xFF_FFFF);
    let mut instances: Vec<(String, Option<u32>, Option<String>)> = Vec::new();
    for e in theirs.all("externs") {
        for i in e.all("instances") {
            if let Some(n) = i.at("preamble.name") {
                let size = i
                    .get("info")
                    .and_then(|x| x.deep("size"))
                    .map(str::to_string);
                instances.push((unpiped(n), low(i.at("preamble.id")), size));
            }
        }
    }
    for kind in ["registers", "digests", "counters", "meters"] {
        for (n, t) in by_name(&theirs, kind) {
            let size = t.at("size").map(str::to_string);
            instances.push((n, low(t.at("preamble.id")), size));
        }
    }
    for kind in ["registers", "digests", "counters", "meters"] {
        for (name, t) in by_name(&ours, kind) {
            let Some((_, id, size)) = instances.iter().find(|(n, ..)| *n == name) else {
                out.push(format!("{kind} {name}: not in the compiler's P4Info"));
                continue;
            };
            if *id != low(t.at("preamble.id")) {
                out.push(format!(
                    "{kind} {name}: id {:?}, the compiler's {id:?}",
                    low(t.at("preamble.id"))
                ));
            }
            if kind != "digests" && t.at("size") != size.as_deref() {
                out.push(format!(
                    "{kind} {name}: size {:?}, the compiler's {size:?}",
                    t.at("size")
                ));
            }
        }
    }
    out
}

/// What differs between the BF-Runtime names this crate writes (tables
/// `pipe.Control.table`, actions `Control.action`, key and data field
/// names, as in `lcmp_entries.json`) and the compiler's `bf-rt.json`.
pub fn bfrt_mismatches(schema: &crate::schema::Schema, bf_rt_json: &str) -> Vec<String> {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(bf_rt_json) else {
        return vec!["bf-rt.json does not parse".into()];
    };
    let tables = doc["tables"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for t in &schema.tables {
        let name = format!("{}.{}", crate::schema::PIPE, t.full_name());
        let Some(c) = tables.iter().find(|x| x["name"] == name.as_str()) else {
            out.push(format!("table {name}: not in bf-rt.json"));
            continue;
        };
        let keys: Vec<&str> = c["key"]
            .as_array()
            .map(|k| k.iter().filter_map(|f| f["name"].as_str()).collect())
            .unwrap_or_default();
        for k in t.keys {
            if !keys.contains(&k.name) {
                out.push(format!("{name}: key {} not in bf-rt.json {keys:?}", k.name));
            }
        }
        let specs = c["action_specs"].as_array().cloned().unwrap_or_default();
        for a in t.actions {
            let an = format!("{}.{}", t.control.name(), a.name);
            let Some(s) = specs.iter().find(|s| s["name"] == an.as_str()) else {
                out.push(format!("{name}: action {an} not in bf-rt.json"));
                continue;
            };
            let data: Vec<&str> = s["data"]
                .as_array()
                .map(|d| d.iter().filter_map(|f| f["name"].as_str()).collect())
                .unwrap_or_default();
            for p in a.params {
                if !data.contains(&p.name) {
                    out.push(format!("{an}: data {} not in bf-rt.json {data:?}", p.name));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod compiled_test {
    use super::*;
    use crate::schema::{Schema, Sizes};

    fn schema() -> Schema {
        Schema::new(&Sizes {
            groups: 2,
            max_k: 3,
            ports: 4,
            pin_slots: 1024,
        })
    }

    #[test]
    fn our_p4info_agrees_with_itself_and_a_changed_id_is_found() {
        let s = schema();
        let ours = crate::render::p4runtime::p4info(&s);
        assert!(p4info_mismatches(&s, &ours).is_empty());
        let select = crate::render::p4runtime::table_id(&s, crate::schema::names::SELECT);
        let wrong = ours.replacen(&format!("id: {select}"), "id: 45070828", 1);
        let m = p4info_mismatches(&s, &wrong);
        assert!(
            m.iter()
                .any(|x| x.contains("tables LcmpIngress.lcmp_select: id")),
            "{m:?}"
        );
        let renamed = ours.replace("\"LcmpIngress.lcmp_pin0\"", "\"LcmpIngress.lcmp_pin_0\"");
        assert!(!p4info_mismatches(&s, &renamed).is_empty());
        // bf-p4c's default form: the same names under the pipeline.
        let piped = ours.replace(
            "name: \"LcmpIngress.lcmp_",
            "name: \"pipe.LcmpIngress.lcmp_",
        );
        assert_ne!(piped, ours);
        assert!(p4info_mismatches(&s, &piped).is_empty());
        assert!(Text::parse("a { b: 1").is_none());
    }

    /// The register sizes of the committed compiler output (bf-p4c's
    /// extern form, `info {[type.googleapis.com/barefoot.Register] {size}}`)
    /// are compared: the golden sizes agree, half the pin cells do not.
    #[test]
    fn a_changed_register_size_is_found_in_the_compilers_p4info() {
        let compiled = include_str!("../tests/golden/compiled/tofino/p4info.txtpb");
        let sizes = |pin_slots| Sizes {
            groups: 7,
            max_k: 6,
            ports: 6,
            pin_slots,
        };
        let size_errors = |pin_slots| -> Vec<String> {
            p4info_mismatches(&Schema::new(&sizes(pin_slots)), compiled)
                .into_iter()
                .filter(|m| m.starts_with("registers") && m.contains("size"))
                .collect()
        };
        assert_eq!(size_errors(131_072), Vec::<String>::new());
        let m = size_errors(65_536);
        let per_way = [
            "lcmp_pin0",
            "lcmp_pin1",
            "lcmp_port0",
            "lcmp_port1",
            "lcmp_unpinned",
        ];
        for r in per_way {
            assert!(
                m.iter()
                    .any(|x| x.contains(&format!(".{r}: size Some(\"32768\")"))),
                "{r}: {m:?}"
            );
        }
        assert_eq!(m.len(), per_way.len(), "{m:?}");
    }

    /// The committed Tofino 1 ALU blocks agree with their program's schema;
    /// a changed register size, a signed compare, another epoch or wrap
    /// constant is each reported.
    #[test]
    fn salu_mismatches_finds_sizes_signs_and_constants() {
        let salu = include_str!("../tests/golden/compiled/tofino/salu.txt");
        let schema = Schema::new(&Sizes {
            groups: 7,
            max_k: 6,
            ports: 6,
            pin_slots: 131_072,
        });
        assert_eq!(salu_mismatches(&schema, salu), Vec::<String>::new());
        for (from, to, what) in [
            (
                "lcmp_pin1, size: 65536",
                "lcmp_pin1, size: 32768",
                "lcmp_pin1: the compiler's size",
            ),
            ("lss.u", "lss.s", "lcmp_pin0: a signed compare"),
            ("lo: 16777216 ,", "lo: 0 ,", "lcmp_clock: initial epoch"),
            (
                "-1073741824",
                "-1073741823",
                "lcmp_clock: no unsigned wrap test",
            ),
            (".LcmpIngress.lcmp_clock:", ".x:", "lcmp_clock: no stateful"),
        ] {
            assert!(salu.contains(from), "{from}");
            let bad = salu.replacen(from, to, 1);
            let m = salu_mismatches(&schema, &bad);
            assert!(m.iter().any(|l| l.starts_with(what)), "{what}: {m:?}");
        }
    }

    #[test]
    fn bfrt_names_are_compared() {
        let s = schema();
        let t = s.table(crate::schema::names::SELECT).expect("select");
        let doc = serde_json::json!({"tables": [{
            "name": "pipe.LcmpIngress.lcmp_select",
            "key": [{"name": "group"}, {"name": "bucket"}],
            "action_specs": [{"name": "LcmpIngress.set_port", "data": [{"name": "port"}]}],
        }]});
        let m = bfrt_mismatches(&s, &doc.to_string());
        assert!(!m.iter().any(|x| x.contains(&t.full_name())), "{m:?}");
        assert!(m
            .iter()
            .any(|x| x.contains("lcmp_dst_group: not in bf-rt.json")));
    }
}
