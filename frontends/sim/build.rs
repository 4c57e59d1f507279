//! Sets `LCMP_SIM_COMMIT` to the commit being built (`git rev-parse
//! --short=12 HEAD`, with `-dirty` appended when the simulator's sources
//! differ from it: `commit_paths.rs`), or `unknown` outside a git checkout
//! or without git, for the run labels ([`lcmp_sim::COMMIT`], issue 31
//! item 7). Written by
//! hand: a crate such as `vergen` or `built` does this with a heavier
//! dependency tree for one command.

use std::path::Path;
use std::process::Command;

/// One line of `git`'s output, if it ran and succeeded.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let line = text.trim();
    (out.status.success() && !line.is_empty()).then(|| line.to_string())
}

/// The paths whose uncommitted changes make a build `-dirty`.
const COMMIT_PATHS: &[&str] = include!("commit_paths.rs");

fn main() {
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        // A label that names a commit must not hide edits to the code that
        // computed the results: `git status` lists tracked files changed
        // (staged or not) under the simulator's paths.
        Some(head) => {
            let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--"];
            status.extend_from_slice(COMMIT_PATHS);
            match git(&status) {
                Some(_) => format!("{head}-dirty"),
                None => head,
            }
        }
        None => "unknown".into(),
    };
    println!("cargo:rustc-env=LCMP_SIM_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    // Build again when HEAD moves: HEAD itself (a checkout), the branch it
    // names (a commit) and packed refs. Only files that exist: cargo reruns
    // a script on every build for a missing one.
    let mut watch = vec![
        git(&["rev-parse", "--git-path", "HEAD"]),
        git(&["rev-parse", "--git-path", "packed-refs"]),
    ];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch.push(git(&["rev-parse", "--git-path", &branch]));
    }
    // Evaluate the status again when a file under those paths changes
    // (cargo scans a directory's files for a newer mtime).
    watch.extend(COMMIT_PATHS.iter().map(|p| Some((*p).to_string())));
    for path in watch.into_iter().flatten() {
        if Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
