#!/usr/bin/env bash
# Formatting, clippy (warnings are errors) and rustdoc (warnings are errors).
set -euo pipefail
source scripts/lib.sh
ensure_component rustfmt
ensure_component clippy
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
