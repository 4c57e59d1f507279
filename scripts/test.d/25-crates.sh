#!/usr/bin/env bash
# The library crates ship: lcmp-decide and lcmp-tables build
# with the declared MSRV (the workspace's `rust-version`, installed with
# rustup, minimal profile) with no and with all features; their docs build
# as docs.rs builds them (all features, warnings are errors); and
# `cargo publish --dry-run` packages both and builds them from the packages
# (lcmp-tables against the packaged lcmp-decide); lcmp-tables without
# `alloc` leaves the core's `serde` feature off; the newest section of
# each CHANGELOG.md is the crate's version and states its MSRV (lcmp-ffi's
# tests check that the sections name the format and ABI versions). Needs
# crates.io's index, nothing else.
set -euo pipefail
source scripts/lib.sh
crates=(lcmp-decide lcmp-tables)
pkgs=()
for c in "${crates[@]}"; do pkgs+=(-p "$c"); done

# The MSRV, after checking each CHANGELOG.md's newest section.
msrv=$(cargo metadata -q --format-version 1 --no-deps | python3 -c '
import json, os, sys
versions = set()
for p in json.load(sys.stdin)["packages"]:
    name, version, msrv = p["name"], p["version"], p["rust_version"]
    if name not in sys.argv[1:]:
        continue
    versions.add(msrv)
    log = open(os.path.join(os.path.dirname(p["manifest_path"]), "CHANGELOG.md")).read()
    newest = log.split("\n## ")[1] if "\n## " in log else ""
    assert newest.split()[:1] == [version], f"{name}/CHANGELOG.md: the newest section is not ## {version}"
    line = f"MSRV: Rust {msrv}."
    assert line in newest, f"{name}/CHANGELOG.md: the newest section does not say {line}"
assert len(versions) == 1 and None not in versions, f"one rust-version for the library crates: {versions}"
print(versions.pop())' "${crates[@]}")
echo "--- MSRV $msrv"
if ! rustup toolchain list | grep -q "^$msrv-"; then
  rustup toolchain install "$msrv" --profile minimal
fi
cargo "+$msrv" check "${pkgs[@]}"
cargo "+$msrv" check "${pkgs[@]}" --all-features

echo "--- docs as docs.rs builds them"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features "${pkgs[@]}"

echo "--- lcmp-tables leaves the core's serde off without alloc (firmware)"
# Its trace and blob formats have their own wire structs; only the
# alloc-side scenarios and reports serialise core types. The alloc run is
# the control: it must show the feature, or the grep proves nothing.
core_serde() {
  cargo tree -q -p lcmp-tables -e normal,features -i lcmp-decide "$@" |
    grep -c 'lcmp-decide feature "serde"' || true
}
expect "lcmp-tables (no features) turns on lcmp-decide's serde" [ "$(core_serde)" = 0 ]
expect "lcmp-tables --features defmt turns on lcmp-decide's serde" [ "$(core_serde --features defmt)" = 0 ]
expect "lcmp-tables --features alloc shows lcmp-decide's serde (the control)" [ "$(core_serde --features alloc)" != 0 ]

echo "--- cargo publish --dry-run"
# --allow-dirty: this checks packaging, so a work tree with uncommitted
# changes is packaged as it is (a clean clone in CI is clean anyway).
# cargo verifies lcmp-tables against the lcmp-decide it just packaged,
# served from a temporary local registry (target/package/tmp-registry),
# but it extracts that registry's crates under CARGO_HOME keyed by the
# registry's path and does not extract them again: a second run in the
# same checkout builds against the first run's lcmp-decide. Drop those
# stale copies of our own crates first (only the path-keyed local
# registries, whose names start with '-'; crates.io's are untouched).
# For the same reason the verification builds in a target directory of
# its own, emptied first: cargo treats a registry crate as immutable and
# would reuse the first run's build of the packaged lcmp-decide.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
for c in "${crates[@]}"; do
  rm -rf "$cargo_home"/registry/src/-*/"$c"-* "$cargo_home"/registry/cache/-*/"$c"-*
done
rm -rf target/publish-check
CARGO_TARGET_DIR=target/publish-check cargo publish --dry-run --allow-dirty "${pkgs[@]}"
