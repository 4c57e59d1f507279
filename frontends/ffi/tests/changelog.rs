//! CHANGELOG.md has a section for this version that names the C ABI
//! version of this build and the blob format version it installs.

use lcmp_ffi::LCMP_ABI_VERSION;
use lcmp_tables::blob::BLOB_VERSION;

#[test]
fn changelog_names_this_abi_and_blob_version() {
    let log = include_str!("../CHANGELOG.md");
    let version = env!("CARGO_PKG_VERSION");
    let section = log
        .split("\n## ")
        .find(|s| s.starts_with(&format!("{version} ")) || s.starts_with(&format!("{version}\n")))
        .unwrap_or_else(|| panic!("CHANGELOG.md has no `## {version}` section"));
    for line in [
        format!("C ABI version {LCMP_ABI_VERSION} (`LCMP_ABI_VERSION`)"),
        format!("Installs blob format version {BLOB_VERSION} (lcmp-tables `BLOB_VERSION`)"),
    ] {
        assert!(
            section.contains(&line),
            "the {version} section does not say `{line}`"
        );
    }
}
