#!/usr/bin/env bash
# Mutation testing of the packet path (docs/testing.md): cargo-mutants
# (pinned, installed with --locked) mutates the files below one mutant at a
# time and runs lcmp-decide's own unit and integration tests
# (.cargo/mutants.toml); the part fails on any mutant the tests miss, and
# on any timeout, unless .cargo/mutants.toml excludes it with a reason.
# Runs last, in place (the work tree's target/ is reused; each file is
# restored after its mutants). Budget: about 10 minutes on 2 cores.
#   LCMP_MUTANTS_FILES="lcmp-decide/src/cost.rs" LCMP_TEST_ONLY=90 ./scripts/test.sh
# A full run of either crate: see docs/testing.md.
set -euo pipefail
source scripts/lib.sh
CARGO_MUTANTS_VERSION=27.1.0
ensure_cargo_tool cargo-mutants cargo-mutants "$CARGO_MUTANTS_VERSION"
# The packet path that fits the budget and whose every mutant is caught or
# excluded (docs/testing.md): the selection (rank, keep-half, cut, band,
# picks), the fused cost, the estimators (level scan, queue, trend,
# persistence), the in-flight bound that lets a full cache reuse an
# entry and the 32-bit-divide division the sample and the weighted pick
# use (narrow_div). The flow cache and the decider are not in it yet (docs/testing.md).
files=${LCMP_MUTANTS_FILES:-lcmp-decide/src/select.rs lcmp-decide/src/cost.rs lcmp-decide/src/estimator/mod.rs lcmp-decide/src/estimator/queue.rs lcmp-decide/src/estimator/trend.rs lcmp-decide/src/estimator/persistence.rs lcmp-decide/src/in_flight.rs lcmp-decide/src/narrow_div.rs}
args=()
for f in $files; do
  expect "$f exists" test -f "$f"
  args+=(--file "$f")
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The earlier parts ran these tests unmutated (--baseline skip); the
# timeout is that of .cargo/mutants.toml's minimum.
rc=0
cargo mutants --in-place --no-shuffle -p lcmp-decide "${args[@]}" --baseline skip \
  --timeout 120 --output "$out" || rc=$?
m=$out/mutants.out
for kind in caught missed unviable timeout; do
  count=0
  if [ -f "$m/$kind.txt" ]; then count=$(wc -l <"$m/$kind.txt"); fi
  echo "$kind $count"
done
if [ "$rc" -ne 0 ]; then
  echo "cargo mutants: exit status $rc; mutants the tests missed or that timed out:" >&2
  cat "$m/missed.txt" "$m/timeout.txt" 2>/dev/null >&2 || true
  echo "kill each with a test in lcmp-decide, or exclude it in .cargo/mutants.toml with a reason" >&2
  exit 1
fi
# Restored: no marker of cargo-mutants is left in the sources.
if grep -rl 'changed by cargo-mutants' lcmp-decide/src; then
  echo "a mutated file was not restored (above)" >&2
  exit 1
fi
