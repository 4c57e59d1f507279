//! Golden files: the export for testbed8 DC1 (seed 0, CRC-32, the
//! congestion state in `tests/golden/state.json`), the update from the
//! idle state to it in `tests/golden/update/`, and the idle export for the
//! bso13 switch with the most groups and the largest pick lists (DC3: 12
//! groups, pick lists up to 4, 6 ports) in `tests/golden/bso13-dc3/`, must
//! not change unless on purpose. Re-bless with `LCMP_BLESS=1 cargo test -p lcmp-tofino --test
//! golden` (only the value `1` blesses); a golden file that is no longer
//! generated fails the test, and blessing removes it.

use std::path::{Path, PathBuf};

use lcmp_tofino::cli::{
    agent_file, export, export_update, CommonArgs, EntriesArgs, HashArg, TargetArg, UpdateArgs,
};
use lcmp_tofino::render::{entry_files, update_files, Files};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn common(out: PathBuf) -> CommonArgs {
    CommonArgs {
        topology: "testbed8".into(),
        switch: "DC1".into(),
        out,
        seed: 0,
        hash: HashArg::Crc32,
        scheme: lcmp_decide::Scheme::Lcmp,
        pin_slots: None,
        target: TargetArg::Tofino1,
        dev_ports: vec![],
        profile: lcmp_decide::Profile::Paper,
        routes: vec![],
        next_hops: vec![],
        placeholder_next_hops: true,
        cpu_port: None,
    }
}

/// Compares (or with `LCMP_BLESS=1` writes) `files` in `dir`; files in
/// `dir` that are not generated (other than `keep`) are stale.
fn compare(dir: &Path, files: &Files, keep: &[&str]) -> Vec<String> {
    let bless = std::env::var_os("LCMP_BLESS").is_some_and(|v| v == "1");
    let mut bad = Vec::new();
    std::fs::create_dir_all(dir).expect("golden dir");
    for (name, text) in &files.files {
        let path = dir.join(name);
        if bless {
            std::fs::write(&path, text).expect("write golden file");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(old) if old == *text => {}
            _ => bad.push(name.clone()),
        }
    }
    for e in std::fs::read_dir(dir).expect("golden dir").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let generated = files.files.iter().any(|(n, _)| *n == name);
        if e.path().is_file() && !generated && !keep.contains(&name.as_str()) {
            if bless {
                std::fs::remove_file(e.path()).expect("remove stale golden file");
            } else {
                bad.push(format!("{name} (no longer generated)"));
            }
        }
    }
    bad
}

#[test]
fn testbed8_dc1_outputs_match_golden_files() {
    let dir = golden_dir();
    let args = EntriesArgs {
        common: common(dir.clone()),
        state: Some(dir.join("state.json")),
    };
    let (program, entries) = export(&args).expect("export");
    let mut files = entry_files(&program, &entries);
    files.files.push(agent_file(&args.common).expect("agent"));
    let mut bad = compare(&dir, &files, &["state.json", "compile-stamps.json"]);
    let update = UpdateArgs {
        common: common(dir.join("update")),
        from: None,
        state: dir.join("state.json"),
    };
    let (program, old, new) = export_update(&update).expect("update");
    bad.extend(
        compare(
            &dir.join("update"),
            &update_files(&program, &old, &new),
            &[],
        )
        .into_iter()
        .map(|n| format!("update/{n}")),
    );
    assert!(
        bad.is_empty(),
        "output differs from the golden files {bad:?}; if the change is intended, \
         re-bless with LCMP_BLESS=1 cargo test -p lcmp-tofino --test golden"
    );
}

#[test]
fn bso13_dc3_outputs_match_golden_files() {
    let dir = golden_dir().join("bso13-dc3");
    let mut c = common(dir.clone());
    c.topology = "bso13".into();
    c.switch = "DC3".into();
    let args = EntriesArgs {
        common: c,
        state: None,
    };
    let (program, entries) = export(&args).expect("export");
    let mut files = entry_files(&program, &entries);
    files.files.push(agent_file(&args.common).expect("agent"));
    let bad = compare(&dir, &files, &[]);
    assert!(
        bad.is_empty(),
        "output differs from the golden files {bad:?}; if the change is intended, \
         re-bless with LCMP_BLESS=1 cargo test -p lcmp-tofino --test golden"
    );
}
