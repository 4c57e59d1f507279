#!/usr/bin/env bash
# The packet model's cost before and after a change (docs/simulator.md
# "Cost"): builds the `packet_run` bench at two commits, each in its own
# git worktree and target directory under $WORK (default
# /tmp/lcmp-sim-before-after), then runs each once, one after the other,
# under `/usr/bin/time -v`, and prints per run: events, CPU time of the
# run's thread, events per CPU-second, wall time, maximum resident set,
# the run's digest (equal digests: equal outputs) and the load average
# before and after (on a shared machine CPU time is the figure that
# transfers; note the load).
#
#   frontends/sim/benches/before-after.sh OLD NEW [bench options]
#   frontends/sim/benches/before-after.sh 5e157da HEAD --window 0.2
#
# Bench options (after the commits) go to the bench: `--scheme`, `--seed`,
# `--load`, `--window` (seconds; default here 0.2, the 30 % artifact run).
set -euo pipefail
old=${1:?usage: before-after.sh OLD NEW [bench options]}
new=${2:?usage: before-after.sh OLD NEW [bench options]}
shift 2
opts=("$@")
[ ${#opts[@]} -eq 0 ] && opts=(--window 0.2)
work=${WORK:-/tmp/lcmp-sim-before-after}
repo=$(git rev-parse --show-toplevel)
mkdir -p "$work"
for rev in "$old" "$new"; do
  sha=$(git -C "$repo" rev-parse --short=12 "$rev^{commit}")
  tree="$work/$sha"
  [ -d "$tree" ] || git -C "$repo" worktree add --detach "$tree" "$sha" >/dev/null
  CARGO_TARGET_DIR="$work/target-$sha" cargo bench --manifest-path "$tree/Cargo.toml" \
    -p lcmp-sim --bench packet_run --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*packet_run[^"]*\)".*/\1/p' | tail -1 >"$work/bin-$sha"
done
for rev in "$old" "$new"; do
  sha=$(git -C "$repo" rev-parse --short=12 "$rev^{commit}")
  bin=$(cat "$work/bin-$sha")
  echo "== $rev ($sha), $(date -u +%FT%TZ), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -v "$bin" --bench "${opts[@]}" 2>&1 |
    grep -E "^packet_run|^  (flows|wall|digest)|Maximum resident|Elapsed"
  echo "   load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
