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
# The golden-blob test blesses only on LCMP_BLESS=1, and a bless run fails
# (after writing the current version's files, byte-identical here, so the
# work tree stays clean); another value neither writes nor fails.
golden=lcmp-tables/tests/golden
bless() { LCMP_BLESS=$1 cargo test -q -p lcmp-tables --test blob golden_blobs_of_every_version_decode; }
if bless 1 >/dev/null 2>&1; then
  echo "20-tables-cli: LCMP_BLESS=1 cargo test -p lcmp-tables --test blob passed (a bless run must fail)" >&2
  exit 1
fi
expect "LCMP_BLESS=1 rewrote $golden byte for byte (the encoder and the goldens agree)" \
  git diff --quiet -- "$golden"
touch -d '2000-01-01' "$golden"/blob-v3-*.bin
expect "LCMP_BLESS=yes passes without blessing" bless yes >/dev/null
rewritten=$(find "$golden" -name 'blob-v3-*.bin' -newermt '2000-01-02')
expect "LCMP_BLESS=yes writes no golden file (it wrote: $rewritten)" test -z "$rewritten"
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
