//! CHANGELOG.md has a section for this version that states the MSRV of
//! `Cargo.toml`.

#[test]
fn changelog_has_this_version_and_its_msrv() {
    let log = include_str!("../CHANGELOG.md");
    let version = env!("CARGO_PKG_VERSION");
    let section = log
        .split("\n## ")
        .find(|s| s.starts_with(&format!("{version} ")) || s.starts_with(&format!("{version}\n")))
        .unwrap_or_else(|| panic!("CHANGELOG.md has no `## {version}` section"));
    let msrv = format!("MSRV: Rust {}.", env!("CARGO_PKG_RUST_VERSION"));
    assert!(
        section.contains(&msrv),
        "the {version} section does not say `{msrv}`"
    );
}
