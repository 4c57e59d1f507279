#!/usr/bin/env bash
# lcmp-decide: unit, property, integration and doc tests; the no_std builds
# for a Cortex-M4F and for wasm32; every combination of the optional
# features compiles; the bounded-work counts (feature _work-counters).
set -euo pipefail
source scripts/lib.sh
ensure_target thumbv7em-none-eabihf
ensure_target wasm32-unknown-unknown
cargo test -p lcmp-decide
cargo test -p lcmp-decide --features serde
# The bounded-work promise, counted (test-only feature, docs/design.md).
cargo test -p lcmp-decide --features _work-counters --test bounded_work
cargo build -p lcmp-decide --target thumbv7em-none-eabihf
# Every combination of the optional features (defmt, serde): none above,
# each alone, both.
cargo build -p lcmp-decide --target thumbv7em-none-eabihf --features defmt
cargo build -p lcmp-decide --target thumbv7em-none-eabihf --features serde
cargo build -p lcmp-decide --target thumbv7em-none-eabihf --features defmt,serde
cargo build -p lcmp-decide --target wasm32-unknown-unknown
# The benchmarks compile and run once each (figures: docs/performance.md).
cargo bench -p lcmp-decide -- --test
