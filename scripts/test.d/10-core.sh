#!/usr/bin/env bash
# lcmp-decide: unit, property, integration and doc tests (the compile_fail
# ones' error codes checked by nightly rustdoc, which stable does not); the
# no_std builds for a Cortex-M4F and for wasm32; every combination of the
# optional features compiles (cargo-hack's feature powerset); the
# bounded-work counts (feature _work-counters).
set -euo pipefail
source scripts/lib.sh
ensure_target thumbv7em-none-eabihf
ensure_target wasm32-unknown-unknown
ensure_cargo_tool cargo-hack cargo-hack 0.6.46
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
cargo test -p lcmp-decide
cargo test -p lcmp-decide --features serde
# The bounded-work promise, counted (test-only feature, docs/design.md).
cargo test -p lcmp-decide --features _work-counters --test bounded_work
# Stable rustdoc accepts a compile_fail doctest that fails for any reason;
# nightly's checks the error code each one names (E0080: the const
# assertion on the decider's ports and the cache's slot count).
cargo +nightly test -p lcmp-decide --doc
# Every combination of the optional features (none, each alone, all),
# the test-only counters left out.
cargo hack build -p lcmp-decide --target thumbv7em-none-eabihf --feature-powerset \
  --exclude-features _work-counters,default
cargo build -p lcmp-decide --target wasm32-unknown-unknown
# The benchmarks compile and run once each (figures: docs/performance.md).
cargo bench -p lcmp-decide -- --test
