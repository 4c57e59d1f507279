#!/usr/bin/env bash
# The library crates ship (issue 15): lcmp-decide and lcmp-tables build
# with the declared MSRV (the workspace's `rust-version`, installed with
# rustup, minimal profile) with no and with all features; their docs build
# as docs.rs builds them (all features, warnings are errors); and
# `cargo publish --dry-run` packages both and builds them from the packages
# (lcmp-tables against the packaged lcmp-decide). Needs crates.io's index,
# nothing else. (Each crate's tests check its CHANGELOG.md.)
set -euo pipefail
source scripts/lib.sh
crates=(lcmp-decide lcmp-tables)
pkgs=()
for c in "${crates[@]}"; do pkgs+=(-p "$c"); done

msrv=$(cargo metadata -q --format-version 1 --no-deps | python3 -c '
import json, sys
m = json.load(sys.stdin)
v = {p["rust_version"] for p in m["packages"] if p["name"] in sys.argv[1:]}
assert len(v) == 1 and None not in v, f"one rust-version for the library crates, got {v}"
print(v.pop())' "${crates[@]}")
echo "--- MSRV $msrv"
if ! rustup toolchain list | grep -q "^$msrv-"; then
  rustup toolchain install "$msrv" --profile minimal
fi
cargo "+$msrv" check "${pkgs[@]}"
cargo "+$msrv" check "${pkgs[@]}" --all-features

echo "--- docs as docs.rs builds them"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features "${pkgs[@]}"

echo "--- cargo publish --dry-run"
# --allow-dirty: this checks packaging, so a work tree with uncommitted
# changes is packaged as it is (a clean clone in CI is clean anyway).
cargo publish --dry-run --allow-dirty "${pkgs[@]}"
