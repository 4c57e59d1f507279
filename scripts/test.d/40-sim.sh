#!/usr/bin/env bash
# lcmp-sim: model checks and unit/doc tests in release mode, then a timed
# smoke run of `lcmp sim` with no arguments (the issue-4 budget: < 60 s).
set -euo pipefail
source scripts/lib.sh
cargo test --release -p lcmp-sim
# `lcmp sim` once the CLI has the subcommand; the crate's own binary (the
# same code) otherwise.
cargo build --release -p lcmp-sim --bin lcmp-sim
runner=(cargo run -q --release -p lcmp-sim --bin lcmp-sim --)
if cargo build -q --release -p lcmp-cli 2>/dev/null \
  && cargo run -q --release -p lcmp-cli -- sim --help >/dev/null 2>&1; then
  runner=(cargo run -q --release -p lcmp-cli -- sim)
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s%N)
"${runner[@]}" >"$out"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
cat "$out"
echo "smoke run (${runner[*]}): ${ms} ms"
grep -q "lcmp vs ecmp" "$out"
grep -q "load 80%" "$out"
if [ "$ms" -gt 60000 ]; then
  echo "lcmp sim took ${ms} ms, over the 60 s budget" >&2
  exit 1
fi
# The artifact preset's acceptance command (issue 12): also under 60 s.
start=$(date +%s%N)
"${runner[@]}" --preset artifact --load 0.3 --schemes ecmp,ucmp,lcmp --json >"$out"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "artifact preset run: ${ms} ms"
grep -q '"flow_id": "artifact"' "$out"
if [ "$ms" -gt 60000 ]; then
  echo "lcmp sim --preset artifact took ${ms} ms, over the 60 s budget" >&2
  exit 1
fi
# Bad input is a one-line error and a non-zero exit, not a panic.
if "${runner[@]}" --topology no-such-topology 2>"$out"; then
  echo "a bad topology was accepted" >&2
  exit 1
fi
test "$(wc -l <"$out")" -eq 1
! grep -q panicked "$out"
