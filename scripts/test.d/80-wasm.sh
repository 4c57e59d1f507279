#!/usr/bin/env bash
# wasm-demo (docs/wasm-demo.md): the demo API's native tests; clippy for
# wasm32; the package built by wasm-demo/build.sh (wasm-bindgen CLI pinned
# to the wasm-bindgen of Cargo.lock, wasm-opt from Debian's binaryen) with
# no `import "env"` (binaryen's wasm-dis lists the imports) and under the
# 300 KiB budget; then the end-to-end test of the page in headless
# Chromium (Debian's chromium, playwright-core from
# wasm-demo/package-lock.json), which compares the page with `lcmp explain`
# and its simulation with `lcmp sim --json` for the same settings, and saves
# screenshots to wasm-demo/artifacts/.
set -euo pipefail
source scripts/lib.sh
ensure_target wasm32-unknown-unknown
ensure_apt chromium binaryen
command -v npm >/dev/null 2>&1 || ensure_apt nodejs npm

cargo test -p wasm-demo
cargo clippy -p wasm-demo --lib --target wasm32-unknown-unknown -- -D warnings
./wasm-demo/build.sh

wasm=wasm-demo/www/pkg/wasm_demo_bg.wasm
# The module's imports: only wasm-bindgen's glue, never the C `env`
# (binaryen's wasm-dis prints each as `(import "MODULE" "NAME" ...)`).
modules=$(wasm-dis "$wasm" | sed -n 's/^ *(import "\([^"]*\)".*/\1/p' | sort -u)
echo "wasm imports from:" $modules
if grep -qx env <<<"$modules"; then
  echo "wasm-demo: $wasm imports from env" >&2
  exit 1
fi
size=$(stat -c %s "$wasm")
echo "wasm size: $size bytes"
if [ "$size" -gt $((300 * 1024)) ]; then
  echo "wasm-demo: $wasm is $size bytes, over the 300 KiB budget" >&2
  exit 1
fi

cargo build -q -p lcmp-cli
target=$(cargo metadata -q --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
(cd wasm-demo && npm ci --no-audit --no-fund --loglevel=error)
LCMP_BIN="$target/debug/lcmp" node --test wasm-demo/tests/e2e.mjs
