//! What the `lcmp` binary's integration tests share: running it, scratch
//! paths, and the two outcomes every command has (success, or one line on
//! stderr with exit 1 and no panic).
#![allow(dead_code)] // each test binary uses part of it

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Runs the `lcmp` binary with `args`.
pub(crate) fn lcmp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lcmp"))
        .args(args)
        .output()
        .expect("run lcmp")
}

/// A path of this test process's own under cargo's scratch directory.
pub(crate) fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("lcmp-{}-{name}", std::process::id()))
}

/// [`tmp`], created empty as a directory.
pub(crate) fn fresh_dir(name: &str) -> PathBuf {
    let d = tmp(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

/// The standard output of a run that must succeed.
pub(crate) fn ok(args: &[&str]) -> String {
    let out = lcmp(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// [`ok`], parsed as JSON.
pub(crate) fn ok_json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).expect("json")
}

/// Asserts a clean failure: exit 1, one line on stderr, nothing panicked;
/// returns the line.
pub(crate) fn one_line_error(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("lcmp: error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// [`one_line_error`] of a run of `args`.
pub(crate) fn fails(args: &[&str]) -> String {
    one_line_error(&lcmp(args))
}
