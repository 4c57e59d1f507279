#!/usr/bin/env bash
# Formatting, clippy (warnings are errors) and rustdoc (warnings are errors).
set -euo pipefail
source scripts/lib.sh
ensure_component rustfmt
ensure_component clippy
cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
# Checks in the test parts say what failed (scripts/lib.sh: `expect`,
# `expect_line`): a bare `grep -q` or `test` line ends a part under
# `set -e` with no word of what was checked.
bare=$(grep -nE '^[[:space:]]*(grep -[a-zA-Z]*q[a-zA-Z]* |test )' scripts/test.d/*.sh || true)
if [ -n "$bare" ]; then
  echo "bare checks in scripts/test.d (use expect or expect_line from scripts/lib.sh):" >&2
  echo "$bare" >&2
  exit 1
fi
# No import circle between the modules of the library crates, the C ABI
# and the CLI (scripts/module-circles.py says why it is hand-written; its
# self-test shows it finds a planted circle).
python3 scripts/module-circles.py --self-test
expect "no import circle in lcmp-decide, lcmp-tables, lcmp-ffi, lcmp-cli" \
  python3 scripts/module-circles.py lcmp-decide/src lcmp-tables/src frontends/ffi/src frontends/cli/src
