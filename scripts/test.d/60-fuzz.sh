#!/usr/bin/env bash
# Fuzzing (issue 8; docs/fuzzing.md). The fuzz crate's own tests on stable
# (reference-model golden vectors, seed corpora replayed), then every
# cargo-fuzz target built on nightly and run from its committed seed corpus
# for LCMP_FUZZ_SECONDS seconds (default 60). A crash, a panic, an invariant
# or model mismatch, or an input running longer than 10 s fails the part.
#   LCMP_FUZZ_SECONDS=600 LCMP_TEST_ONLY=60 scripts/test.sh   # run longer
#   LCMP_FUZZ_TARGETS="differential" ...                      # a subset
set -euo pipefail
source scripts/lib.sh
CARGO_FUZZ_VERSION=0.13.2
ensure_cargo_tool cargo-fuzz cargo-fuzz "$CARGO_FUZZ_VERSION"
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
seconds=${LCMP_FUZZ_SECONDS:-60}

cd fuzz
cargo test --lib
# No sanitizer: the workspace forbids unsafe code, so ASan would only slow
# the search; -a keeps debug assertions and overflow checks on.
flags=(-s none -a)
cargo +nightly fuzz build "${flags[@]}"
targets=${LCMP_FUZZ_TARGETS:-$(cargo +nightly fuzz list)}
failed=()
for target in $targets; do
  work=$(mktemp -d)
  rm -rf "artifacts/$target"
  echo "--- fuzz $target for ${seconds}s"
  dict=()
  if [ -f "dict/$target.dict" ]; then dict=(-dict="dict/$target.dict"); fi
  # New inputs go to $work (the first directory); the seeds stay as committed.
  if cargo +nightly fuzz run "${flags[@]}" "$target" "$work" "corpus/$target" -- \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=512 \
      -max_len=4096 -print_final_stats=1 "${dict[@]}" 2>"$work.log"; then
    grep -E '^#[0-9]+[[:space:]]+DONE|stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work.log" || true
  else
    tail -n 60 "$work.log"
    for crash in artifacts/"$target"/*; do
      [ -e "$crash" ] || continue
      echo "--- reproducer $crash:"
      cargo +nightly fuzz fmt "${flags[@]}" "$target" "$crash" 2>&1 | tail -n 80 || true
    done
    failed+=("$target")
  fi
  rm -rf "$work" "$work.log"
done
if [ "${#failed[@]}" -ne 0 ]; then
  echo "fuzz targets that crashed: ${failed[*]} (reproduce: cd fuzz && cargo +nightly fuzz run -s none -a TARGET artifacts/TARGET/crash-...)"
  exit 1
fi
