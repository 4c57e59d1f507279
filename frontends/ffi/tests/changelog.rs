//! The newest section of each changelog names the format and ABI versions
//! this build writes and reads: lcmp-tables' (blob and trace formats) and
//! this crate's (C ABI). `scripts/test.d/25-crates.sh` checks that the
//! library crates' newest sections are their `Cargo.toml` versions.

use lcmp_ffi::LCMP_ABI_VERSION;
use lcmp_tables::blob::BLOB_VERSION;
use lcmp_tables::replay::TRACE_VERSION;

#[test]
fn newest_changelog_sections_name_the_current_versions() {
    let tables = include_str!("../../../lcmp-tables/CHANGELOG.md");
    let ffi = include_str!("../CHANGELOG.md");
    for (file, log, lines) in [
        (
            "lcmp-tables/CHANGELOG.md",
            tables,
            [
                format!("Blob format version {BLOB_VERSION} (`blob::BLOB_VERSION`)"),
                format!("Trace format version {TRACE_VERSION} (`replay::TRACE_VERSION`)"),
            ],
        ),
        (
            "frontends/ffi/CHANGELOG.md",
            ffi,
            [
                format!("C ABI version {LCMP_ABI_VERSION} (`LCMP_ABI_VERSION`)"),
                format!("Installs blob format version {BLOB_VERSION} (lcmp-tables `BLOB_VERSION`)"),
            ],
        ),
    ] {
        let newest = log
            .split("\n## ")
            .nth(1)
            .unwrap_or_else(|| panic!("{file} has no `## ` section"));
        for line in lines {
            assert!(
                newest.contains(&line),
                "{file}: the newest section does not say `{line}`"
            );
        }
    }
}

/// docs/firmware.md ("ABI version") names the current C ABI version.
#[test]
fn the_firmware_guide_names_the_current_abi_version() {
    let guide = include_str!("../../../docs/firmware.md");
    let line = format!("`LCMP_ABI_VERSION` is {LCMP_ABI_VERSION} (");
    assert!(
        guide.contains(&line),
        "docs/firmware.md does not say `{line}`"
    );
}
