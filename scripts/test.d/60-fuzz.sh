#!/usr/bin/env bash
# Fuzzing (docs/fuzzing.md). The fuzz crate (its own workspace, outside
# `cargo fmt --all` and the workspace's clippy) formatted and clippy-clean
# on stable, its own tests on stable (reference-model golden vectors, seed
# corpora replayed), then every
# cargo-fuzz target built on nightly and run from its committed seed corpus
# for LCMP_FUZZ_SECONDS seconds (default 60), LCMP_FUZZ_JOBS targets at a
# time (default 2, one per core). A crash, a panic, an invariant or model
# mismatch, or an input running longer than 10 s fails the part.
#   LCMP_FUZZ_SECONDS=600 LCMP_TEST_ONLY=60 scripts/test.sh   # run longer
#   LCMP_FUZZ_TARGETS="differential" ...                      # a subset
set -euo pipefail
source scripts/lib.sh
ensure_component rustfmt
ensure_component clippy
CARGO_FUZZ_VERSION=0.13.2
ensure_cargo_tool cargo-fuzz cargo-fuzz "$CARGO_FUZZ_VERSION"
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
seconds=${LCMP_FUZZ_SECONDS:-60}
jobs=${LCMP_FUZZ_JOBS:-2}

cd fuzz
cargo fmt --check
cargo clippy --all-targets -- -D warnings
cargo test --lib
# No sanitizer: the workspace forbids unsafe code, so ASan would only slow
# the search; -a keeps debug assertions and overflow checks on.
flags=(-s none -a)
cargo +nightly fuzz build "${flags[@]}"
targets=${LCMP_FUZZ_TARGETS:-$(cargo +nightly fuzz list)}
# No target would fuzz nothing and pass: an empty list is a broken crate.
if [ -z "${targets//[[:space:]]/}" ]; then
  echo "60-fuzz: no fuzz target to run (cargo fuzz list printed nothing)" >&2
  exit 1
fi
logs=$(mktemp -d)

# run TARGET: fuzz it from its seeds; new inputs go to a scratch directory
# (the first one), so the committed seeds stay as they are.
run() {
  local target=$1 work dict=()
  work=$(mktemp -d)
  rm -rf "artifacts/$target"
  if [ -f "dict/$target.dict" ]; then dict=(-dict="dict/$target.dict"); fi
  local rc=0
  cargo +nightly fuzz run "${flags[@]}" "$target" "$work" "corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=512 \
    -max_len=4096 -print_final_stats=1 "${dict[@]}" >"$logs/$target.log" 2>&1 || rc=$?
  rm -rf "$work"
  return $rc
}

failed=()
report() {
  local target=$1 rc=$2
  echo "--- $target (${seconds}s)"
  if [ "$rc" -eq 0 ]; then
    grep -E '^#[0-9]+[[:space:]]+DONE|stat::(average_exec_per_sec|peak_rss_mb)' "$logs/$target.log" || true
  else
    # The panic (invariant or mismatch), libFuzzer's verdict, then the input.
    grep -m 1 -A 12 'panicked at' "$logs/$target.log" || true
    grep -E 'ERROR: libFuzzer|SUMMARY:|Test unit written' "$logs/$target.log" || tail -n 30 "$logs/$target.log"
    for crash in artifacts/"$target"/*; do
      [ -e "$crash" ] || continue
      echo "--- reproducer $crash:"
      cargo +nightly fuzz fmt "${flags[@]}" "$target" "$crash" 2>&1 | head -n 300 || true
    done
    failed+=("$target")
  fi
}

# At most $jobs targets at once.
pending=($targets)
while [ "${#pending[@]}" -ne 0 ]; do
  batch=("${pending[@]:0:$jobs}")
  pending=("${pending[@]:$jobs}")
  pids=()
  for target in "${batch[@]}"; do
    run "$target" &
    pids+=($!)
  done
  for i in "${!batch[@]}"; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    report "${batch[$i]}" "$rc"
  done
done
rm -rf "$logs"
if [ "${#failed[@]}" -ne 0 ]; then
  echo "fuzz targets that crashed: ${failed[*]}"
  echo "reproduce: cd fuzz && cargo +nightly fuzz run -s none -a TARGET artifacts/TARGET/crash-..."
  exit 1
fi
