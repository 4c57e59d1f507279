//! `lcmp tofino compile` and `lcmp tofino agent` through the `lcmp` binary:
//! the compile step runs the compiler it is given (here stand-in scripts
//! that write an assembly file, or fail) and prints the program's sha256,
//! the stage counts and the stamp line; a missing or failing compiler is a
//! one-line error with a non-zero exit. The agent answers a poll line with
//! one plan line, and refuses a device port that is no LCMP port.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod common;
use common::{fresh_dir, lcmp, one_line_error};

/// A stand-in compiler: writes `OUT/pipe/lcmp.bfa` with ingress stages 0
/// to `last` and egress stage 0, then exits with `status`.
fn fake_compiler(dir: &Path, last: u32, status: i32) -> PathBuf {
    let path = dir.join("fake-bf-p4c");
    let script = format!(
        "#!/bin/sh\nout=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n\
         mkdir -p \"$out/pipe\"\n: > \"$out/pipe/lcmp.bfa\"\n\
         for s in $(seq 0 {last}); do echo \"stage $s ingress:\" >> \"$out/pipe/lcmp.bfa\"; done\n\
         echo 'stage 0 egress:' >> \"$out/pipe/lcmp.bfa\"\necho compiled\nexit {status}\n"
    );
    executable(&path, &script);
    path
}

/// Writes `script` to `path`, executable.
fn executable(path: &Path, script: &str) {
    std::fs::write(path, script).expect("write script");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `lcmp tofino compile` of testbed8 DC1 with `compiler`, and `extra`.
fn compile_with(out: &Path, compiler: &Path, target: &str, extra: &[&str]) -> Output {
    let (compiler, out) = (compiler.display().to_string(), out.display().to_string());
    let mut args = vec![
        "tofino",
        "compile",
        "--topology",
        "testbed8",
        "--switch",
        "DC1",
        "--target",
        target,
        "--bf-p4c",
        &compiler,
        "-o",
        &out,
    ];
    args.extend_from_slice(extra);
    lcmp(&args)
}

fn compile(out: &Path, compiler: &Path, target: &str) -> Output {
    compile_with(out, compiler, target, &[])
}

#[test]
fn compile_prints_the_hash_stages_and_stamp() {
    let dir = fresh_dir("compile");
    let compiler = fake_compiler(&dir, 8, 0);
    let out = compile(&dir.join("out"), &compiler, "tofino2");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p4 = std::fs::read_to_string(dir.join("out/lcmp.p4")).expect("lcmp.p4 written");
    // The stamp hashes the text after the header comment (which states
    // the stamp).
    let hash = lcmp_tofino::compile::body_sha256(&p4);
    assert!(text.contains(&format!("lcmp.p4: sha256 {hash}")), "{text}");
    assert!(
        text.contains("tofino2: 0 errors; ingress 9 stages, egress 1 stages"),
        "{text}"
    );
    assert!(
        text.contains(
            r#"stamp: {"target":"tofino2","errors":0,"ingress_stages":9,"egress_stages":1}"#
        ),
        "{text}"
    );
    let log = std::fs::read_to_string(dir.join("out/tofino2/compile.log")).expect("log");
    assert_eq!(log, "compiled\n");
}

/// With `--bfas`, the assembler runs on the compiler's assembly; its
/// failure is the compile's, on one line.
#[test]
fn the_assembler_runs_after_the_compiler() {
    let dir = fresh_dir("bfas");
    let compiler = fake_compiler(&dir, 4, 0);
    let assembler = |status: i32| {
        let path = dir.join(format!("fake-bfas-{status}"));
        executable(
            &path,
            &format!("#!/bin/sh\necho \"bfas $*\"\nexit {status}\n"),
        );
        path.display().to_string()
    };
    let run = |bfas: &str| compile_with(&dir.join("out"), &compiler, "tofino1", &["--bfas", bfas]);
    let out = run(&assembler(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("tofino: assembled by bfas, 0 errors"),
        "{text}"
    );
    let log = std::fs::read_to_string(dir.join("out/tofino/assemble.log")).expect("log");
    assert!(
        log.starts_with("bfas -o ") && log.trim_end().ends_with("pipe/lcmp.bfa"),
        "{log}"
    );
    let err = one_line_error(&run(&assembler(2)));
    assert!(err.contains("assemble failed (status 2): see "), "{err}");
}

#[test]
fn a_missing_or_failing_compiler_is_a_one_line_error() {
    let dir = fresh_dir("fail");
    let err = one_line_error(&compile(
        &dir.join("out"),
        &dir.join("no-such-bf-p4c"),
        "tofino1",
    ));
    assert!(err.contains("no-such-bf-p4c"), "{err}");
    let failing = fake_compiler(&dir, 3, 3);
    let err = one_line_error(&compile(&dir.join("out"), &failing, "tofino1"));
    assert!(err.contains("compile failed (status 3): see "), "{err}");
    assert!(err.trim_end().ends_with("tofino/compile.log"), "{err}");
    // Bad routes and next hops are usage errors, on one line.
    for bad in [
        ["--route", "10.0.0.0=3"],
        ["--route", "10.0.0.1/8=3"],
        ["--next-hop", "3=00:11:22:33:44"],
    ] {
        let mut args = vec![
            "tofino",
            "entries",
            "--topology",
            "testbed8",
            "--switch",
            "DC1",
        ];
        args.extend(bad);
        args.extend(["-o", "/nonexistent/never-written"]);
        let out = lcmp(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{bad:?}");
        assert_eq!(err.lines().count(), 1, "{bad:?}: {err}");
    }
}

#[test]
fn the_agent_answers_each_poll_with_a_plan() {
    let run = |input: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lcmp"))
            .args([
                "tofino",
                "agent",
                "--topology",
                "testbed8",
                "--switch",
                "DC1",
                "--placeholder-next-hops",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write");
        child.wait_with_output().expect("wait")
    };
    let out = run(concat!(
        r#"{"t_us": 1000, "usage_cells": {"4": 56250000}, "down": []}"#,
        "\n",
        r#"{"t_us": 2000, "usage_cells": {}, "down": [5]}"#,
        "\n"
    ));
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["t_us"], 2000);
    let last = lines[1]["phases"].as_array().expect("phases");
    // A phase marks port 5 down (another writes the pin gaps).
    let ops: Vec<serde_json::Value> = last
        .iter()
        .flat_map(|p| p["ops"].as_array().cloned().unwrap_or_default())
        .collect();
    let down = ops
        .iter()
        .find(|o| o["table"] == "LcmpIngress.lcmp_port_alive")
        .unwrap_or_else(|| panic!("no port write in {ops:?}"));
    assert_eq!(down["method"], "mod_with_port_down");
    assert_eq!(down["args"]["port"], 5);
    let err = one_line_error(&run("{\"t_us\": 1, \"usage_cells\": {\"300\": 1}}\n"));
    assert!(err.contains("device port 300"), "{err}");
}
