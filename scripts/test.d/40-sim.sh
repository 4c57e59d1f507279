#!/usr/bin/env bash
# lcmp-sim: model checks, the packet model's validation tests and unit/doc
# tests in release mode, then timed smoke runs of `lcmp sim` with no
# arguments (the main job: the fluid model's run, then the packet model's
# 30 % run in the artifact's regime; budget < 120 s, about 32 s on two free
# cores), of the artifact preset and of the packet model (each < 60 s,
# docs/simulator.md).
set -euo pipefail
source scripts/lib.sh
cargo test --release -p lcmp-sim
# The packet model's cost benchmark, in its 2 ms form (the full run is
# `cargo bench -p lcmp-sim --bench packet_run`, docs/simulator.md "Cost").
cargo test --release -p lcmp-sim --bench packet_run
# The smoke run is `lcmp sim`; if the tool does not build, the part fails
# (no fallback to another binary).
cargo build --release -p lcmp-cli
runner=(cargo run -q --release -p lcmp-cli -- sim)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s%N)
"${runner[@]}" >"$out"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
cat "$out"
echo "smoke run (${runner[*]}): ${ms} ms"
expect_line "$out" -F "lcmp vs ecmp"
expect_line "$out" -F "load 80%"
# Both models, each under its own label (issue 31 item 6).
expect_line "$out" -F "== the main job, 1 of 2: the fluid (flow-level) model"
expect_line "$out" -F "model fluid (flow-level); preset none;"
expect_line "$out" -F "== the main job, 2 of 2: the packet model (discrete-event RoCE)"
expect_line "$out" -F "model packet (discrete-event RoCE); preset artifact;"
# Every output names the commit it was built from (issue 31 item 7).
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
expect_line "$out" -F "; commit $commit; command: lcmp sim"
if [ "$ms" -gt 120000 ]; then
  echo "lcmp sim took ${ms} ms, over the 120 s budget" >&2
  exit 1
fi
# The artifact preset's run (docs/simulator.md): also under 60 s.
start=$(date +%s%N)
"${runner[@]}" --preset artifact --load 0.3 --schemes ecmp,ucmp,lcmp --json >"$out"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "artifact preset run: ${ms} ms"
expect_line "$out" -F '"flow_id": "artifact"'
if [ "$ms" -gt 60000 ]; then
  echo "lcmp sim --preset artifact took ${ms} ms, over the 60 s budget" >&2
  exit 1
fi
# The packet model's command line (a 2 ms window: 65 flows; its
# validation tests ran above): under 60 s, counters in the JSON.
start=$(date +%s%N)
"${runner[@]}" --model packet --preset artifact --load 0.3 --window 0.002 --seeds 1 --json >"$out"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "packet model smoke run: ${ms} ms"
expect_line "$out" -F '"model": "packet"'
expect_line "$out" -F '"events"'
expect_line "$out" -F "\"commit\": \"$commit\""
if [ "$ms" -gt 60000 ]; then
  echo "lcmp sim --model packet (2 ms window) took ${ms} ms, over the 60 s budget" >&2
  exit 1
fi
# Bad input is a one-line error naming the input and exit status 1 (a
# panic exits with 101), not a panic.
status=0
"${runner[@]}" --topology no-such-topology >/dev/null 2>"$out" || status=$?
echo "bad topology: exit $status: $(cat "$out")"
if [ "$status" -ne 1 ]; then
  echo "a bad topology exited with $status, not 1" >&2
  exit 1
fi
if grep -q panicked "$out"; then
  echo "a bad topology panicked" >&2
  exit 1
fi
if [ "$(wc -l <"$out")" -ne 1 ] || ! grep -q '^lcmp: error: .*no-such-topology' "$out"; then
  echo "a bad topology's error is not one 'lcmp: error: ... no-such-topology' line" >&2
  exit 1
fi
# No import circle between lcmp-sim's modules (issue 31 item 4: the fluid
# and packet models, the run vocabulary, the command line and the sweep).
expect "no import circle in lcmp-sim" python3 scripts/module-circles.py frontends/sim/src
