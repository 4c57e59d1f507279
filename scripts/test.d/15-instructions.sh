#!/usr/bin/env bash
# Instruction-count regression check of the packet path (docs/performance.md,
# "Instructions per operation"): `lcmp-decide/examples/hot_path.rs` under
# callgrind (Debian's valgrind), (Ir(2N) - Ir(N)) / N so that set-up
# cancels, for the established-flow hit, the new-flow decision and a
# queue sample (six ports, every level). Fails
# when any is 10 % or more above lcmp-decide/benches/instructions.baseline
# (instruction counts do not depend on the machine's load, so the check is
# stable on a shared machine). LCMP_BLESS=1 rewrites the baseline with the
# figures measured (and fails, so a bless run never passes: commit the
# file, then run again without).
set -euo pipefail
source scripts/lib.sh
ensure_apt valgrind
baseline=lcmp-decide/benches/instructions.baseline
n=${LCMP_INSTRUCTIONS_N:-100000}
cargo build -q --release -p lcmp-decide --example hot_path
target=$(cargo metadata -q --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# ir MODE N: the instructions of one run (callgrind's summary line).
ir() {
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
    "$target/release/examples/hot_path" "$1" "$2" >/dev/null 2>"$work/cg.err" || {
    cat "$work/cg.err" >&2
    exit 1
  }
  sed -n 's/^summary: //p' "$work/cg.out"
}
measured=()
failed=0
for op in hit new sample; do
  one=$(ir "$op" "$n")
  two=$(ir "$op" $((2 * n)))
  per=$(python3 -c "print(f'{($two - $one) / $n:.1f}')")
  measured+=("$op $per")
  want=$(awk -v op="$op" '$1 == op { print $2 }' "$baseline")
  expect "$baseline has a figure for $op" test -n "$want"
  verdict=$(python3 -c "print('over' if $per >= $want * 1.10 else 'ok')")
  echo "$op: $per instructions per operation (baseline $want, fails at >= +10 %): $verdict"
  if [ "$verdict" = over ]; then failed=1; fi
done
if [ "${LCMP_BLESS:-}" = 1 ]; then
  { grep '^#' "$baseline"; printf '%s\n' "${measured[@]}"; } >"$work/baseline"
  cp "$work/baseline" "$baseline"
  echo "LCMP_BLESS=1 rewrote $baseline: commit it and run again without LCMP_BLESS" >&2
  exit 1
fi
if [ "$failed" -ne 0 ]; then
  echo "the packet path got 10 % or more costlier in instructions (above); if intended," >&2
  echo "re-bless: LCMP_BLESS=1 LCMP_TEST_ONLY=15 ./scripts/test.sh (and update docs/performance.md)" >&2
  exit 1
fi
