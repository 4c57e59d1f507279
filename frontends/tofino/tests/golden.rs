//! Golden files: the export for testbed8 DC1 (seed 0, CRC-32, the
//! congestion state in `tests/golden/state.json`) must not change unless
//! on purpose. Re-bless with `LCMP_BLESS=1 cargo test -p lcmp-tofino --test golden`.

use std::path::{Path, PathBuf};

use lcmp_tofino::cli::{export, CommonArgs, EntriesArgs, HashArg, SchemeArg};
use lcmp_tofino::render::entry_files;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

#[test]
fn testbed8_dc1_outputs_match_golden_files() {
    let dir = golden_dir();
    let args = EntriesArgs {
        common: CommonArgs {
            topology: "testbed8".into(),
            switch: "DC1".into(),
            out: dir.clone(),
            seed: 0,
            hash: HashArg::Crc32,
            scheme: SchemeArg::Lcmp,
            pin_slots: lcmp_tofino::model::DEFAULT_PIN_SLOTS,
            dev_ports: vec![],
            profile: lcmp_decide::Profile::Paper,
        },
        state: Some(dir.join("state.json")),
    };
    let (program, entries) = export(&args).expect("export");
    let files = entry_files(&program, &entries);
    let bless = std::env::var_os("LCMP_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (name, text) in &files.files {
        let path = dir.join(name);
        if bless {
            std::fs::write(&path, text).expect("write golden file");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(old) if old == *text => {}
            _ => stale.push(*name),
        }
    }
    assert!(
        stale.is_empty(),
        "output differs from the golden files {stale:?}; if the change is intended, \
         re-bless with LCMP_BLESS=1 cargo test -p lcmp-tofino --test golden"
    );
}
