#!/usr/bin/env bash
# The project's one test command (README, "Two commands"). Installs what the tests
# need (idempotent, pinned versions), then runs every part in
# scripts/test.d/ in name order. Each part is a bash script that exits
# non-zero on failure. Set LCMP_TEST_ONLY=NN to run only parts whose
# name starts with NN (for example LCMP_TEST_ONLY=10); a value that
# matches no part is an error.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
failed=()
passed=0
for part in scripts/test.d/*.sh; do
  name=$(basename "$part")
  if [ -n "${LCMP_TEST_ONLY:-}" ] && [[ "$name" != "$LCMP_TEST_ONLY"* ]]; then
    continue
  fi
  echo "=== $name"
  start=$(date +%s)
  if bash "$part"; then
    echo "=== $name: ok ($(( $(date +%s) - start )) s)"
    passed=$((passed + 1))
  else
    echo "=== $name: FAILED ($(( $(date +%s) - start )) s)"
    failed+=("$name")
  fi
done
if [ $((passed + ${#failed[@]})) -eq 0 ]; then
  echo "LCMP_TEST_ONLY=${LCMP_TEST_ONLY:-} matches no part of scripts/test.d:" \
    $(cd scripts/test.d && ls -- *.sh) >&2
  echo "parts: 0 passed, 0 failed"
  exit 1
fi
if [ "${#failed[@]}" -ne 0 ]; then
  echo "failed parts: ${failed[*]}"
  echo "parts: $passed passed, ${#failed[@]} failed"
  exit 1
fi
echo "parts: $passed passed, 0 failed"
