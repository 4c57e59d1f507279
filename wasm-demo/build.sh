#!/usr/bin/env bash
# Builds the LCMP wasm demo into wasm-demo/www/pkg (not committed) and
# prints how to serve it. Installs what it needs, idempotently: the
# wasm32-unknown-unknown target and the wasm-bindgen CLI of the same
# version as the wasm-bindgen crate in Cargo.lock. Uses wasm-opt when it is
# installed (Debian `binaryen`).
#
#   ./wasm-demo/build.sh            # build, then print the URL
#   ./wasm-demo/build.sh --serve    # build and serve on 127.0.0.1:8000
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=../scripts/lib.sh
source scripts/lib.sh

ver=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ -z "$ver" ]; then
  echo "wasm-demo: no wasm-bindgen in Cargo.lock" >&2
  exit 1
fi
ensure_target wasm32-unknown-unknown
ensure_cargo_tool wasm-bindgen wasm-bindgen-cli "$ver"

cargo build -q -p wasm-demo --lib --target wasm32-unknown-unknown --profile wasm-release
target=$(cargo metadata -q --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
wasm="$target/wasm32-unknown-unknown/wasm-release/wasm_demo.wasm"
out=wasm-demo/www/pkg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$wasm" "$tmp/wasm_demo.wasm"
raw=$(stat -c %s "$wasm")
# wasm-opt runs before wasm-bindgen: binaryen 108 (Debian 12) breaks the
# externref table that wasm-bindgen adds (the page then fails at start).
if command -v wasm-opt >/dev/null 2>&1; then
  if wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
      --enable-sign-ext --enable-mutable-globals --enable-reference-types \
      --enable-multivalue -o "$tmp/opt.wasm" "$tmp/wasm_demo.wasm"; then
    mv "$tmp/opt.wasm" "$tmp/wasm_demo.wasm"
  else
    echo "wasm-demo: wasm-opt failed; keeping the unoptimised module" >&2
  fi
fi
rm -rf "$out"
wasm-bindgen --target web --no-typescript --out-dir "$out" "$tmp/wasm_demo.wasm"
bg="$out/wasm_demo_bg.wasm"
size=$(stat -c %s "$bg")
echo "wasm-demo: $bg: $size bytes ($(( (size + 1023) / 1024 )) KiB; $(( (raw + 1023) / 1024 )) KiB from rustc)"
echo "wasm-demo: serve it with: python3 -m http.server -d wasm-demo/www --bind 127.0.0.1 8000"
echo "wasm-demo: then open http://127.0.0.1:8000/"
if [ "${1:-}" = "--serve" ]; then
  exec python3 -m http.server -d wasm-demo/www --bind 127.0.0.1 8000
fi
