//! CHANGELOG.md has a section for this version that names the blob and
//! trace format versions this build writes, and the MSRV of `Cargo.toml`.

use lcmp_tables::blob::BLOB_VERSION;
use lcmp_tables::replay::TRACE_VERSION;

#[test]
fn changelog_names_this_version_formats_and_msrv() {
    let log = include_str!("../CHANGELOG.md");
    let version = env!("CARGO_PKG_VERSION");
    let section = log
        .split("\n## ")
        .find(|s| s.starts_with(&format!("{version} ")) || s.starts_with(&format!("{version}\n")))
        .unwrap_or_else(|| panic!("CHANGELOG.md has no `## {version}` section"));
    for line in [
        format!("Blob format version {BLOB_VERSION} (`blob::BLOB_VERSION`)"),
        format!("Trace format version {TRACE_VERSION} (`replay::TRACE_VERSION`)"),
        format!("MSRV: Rust {}.", env!("CARGO_PKG_RUST_VERSION")),
    ] {
        assert!(
            section.contains(&line),
            "the {version} section does not say `{line}`"
        );
    }
}
