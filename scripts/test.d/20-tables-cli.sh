#!/usr/bin/env bash
# lcmp-tables and the `lcmp` tool: unit, property, integration and doc
# tests; the no_std (no alloc) build of lcmp-tables for a Cortex-M4F (the
# firmware decodes blobs and replays encoded traces there); a smoke run of
# every subcommand against the embedded topologies; the ECMP hash of
# `lcmp explain` (and the one its tests pin) against an independent Python
# MurmurHash3.
set -euo pipefail
source scripts/lib.sh
ensure_target thumbv7em-none-eabihf
cargo test -p lcmp-tables
cargo test -p lcmp-cli
cargo build -p lcmp-tables --target thumbv7em-none-eabihf
cargo build -p lcmp-tables --target thumbv7em-none-eabihf --features alloc
cargo build -p lcmp-tables --target thumbv7em-none-eabihf --features defmt
cargo run -q -p lcmp-cli -- tables --topology bso13 --switch DC1 >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo run -q -p lcmp-cli -- tables --topology testbed8 --switch DC1 -o "$tmp/dc1.bin" >/dev/null
cargo run -q -p lcmp-cli -- tables verify "$tmp/dc1.bin"
cargo run -q -p lcmp-cli -- explain frontends/cli/tests/scenarios/idle.json >/dev/null
cargo run -q -p lcmp-cli -- replay --topology testbed8 --switch DC1 -q \
  lcmp-tables/tests/data/testbed8-dc1.csv
target=$(cargo metadata -q --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
python3 frontends/cli/tests/py/murmur3_ecmp.py "$target/debug/lcmp"
