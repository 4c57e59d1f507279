#!/usr/bin/env bash
# wasm-demo (issue 7): the demo API's native tests; clippy for wasm32; the
# package built by wasm-demo/build.sh (wasm-bindgen CLI pinned to the
# wasm-bindgen of Cargo.lock, wasm-opt from Debian's binaryen) with no
# `import "env"` and under the 300 KiB budget; then the end-to-end test of
# the page in headless Chromium (Debian's chromium, playwright-core from
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
# The module's imports: only wasm-bindgen's glue, never the C `env`.
python3 - "$wasm" <<'PY'
import sys

data = open(sys.argv[1], "rb").read()
assert data[:4] == b"\0asm", "not a wasm module"

def leb(buf, i):
    r = s = 0
    while True:
        b = buf[i]; i += 1
        r |= (b & 0x7F) << s; s += 7
        if b < 0x80:
            return r, i

i, modules = 8, set()
while i < len(data):
    sid = data[i]; size, i = leb(data, i + 1); end = i + size
    if sid == 2:
        n, j = leb(data, i)
        for _ in range(n):
            ml, j = leb(data, j); mod = data[j:j + ml].decode(); j += ml
            fl, j = leb(data, j); j += fl
            kind = data[j]; j += 1
            if kind == 0: _, j = leb(data, j)
            elif kind == 1: j += 1; fl2 = data[j]; _, j = leb(data, j + 1); j = leb(data, j)[1] if fl2 & 1 else j
            elif kind == 2: fl2 = data[j]; _, j = leb(data, j + 1); j = leb(data, j)[1] if fl2 & 1 else j
            elif kind == 3: j += 2
            else: j += 2
            modules.add(mod)
    i = end
print("wasm imports from:", sorted(modules))
assert "env" not in modules, "the module imports from env"
PY
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
