# Helpers for scripts/test.d parts: idempotent, pinned installs.
# shellcheck shell=bash

# ensure_target TARGET: rustup target add, if missing.
ensure_target() {
  if ! rustup target list --installed | grep -qx "$1"; then
    rustup target add "$1"
  fi
}

# ensure_component COMPONENT [TOOLCHAIN]
ensure_component() {
  local tc=${2:-stable}
  if ! rustup component list --toolchain "$tc" --installed | grep -q "^$1"; then
    rustup component add --toolchain "$tc" "$1"
  fi
}

# ensure_cargo_tool BINARY CRATE VERSION [extra cargo install args]
# Installs CRATE at exactly VERSION unless BINARY --version already reports
# VERSION. `--locked` builds it with the dependency versions of its
# published Cargo.lock, so the whole tool is pinned, not only its version.
# A failed install fails the part: retrying without `--locked` would undo
# the pinning.
#
# The one exception (checked for every tool installed here, with
# `cargo install --locked` against the registry, cargo 1.95):
# * wasm-bindgen-cli 0.2.130 (wasm-demo/build.sh): its Cargo.lock pins
#   webpki-roots 1.0.11, which the registry index does not offer (1.0.10 is
#   its newest), so `--locked` cannot resolve; it is installed without it
#   (its own version stays exact: the wasm-bindgen of Cargo.lock).
# cargo-fuzz 0.13.2 and defmt-print 1.2.0 install with `--locked`. A new
# version of an unlocked tool is tried with `--locked` again.
UNLOCKED_CARGO_TOOLS=(wasm-bindgen-cli@0.2.130)
ensure_cargo_tool() {
  local bin=$1 crate=$2 version=$3 locked=(--locked)
  shift 3
  # A cargo subcommand may answer --version only through cargo
  # (`cargo-hack --version` fails; `cargo hack --version` works).
  if command -v "$bin" >/dev/null 2>&1 &&
    { "$bin" --version 2>/dev/null || cargo "${bin#cargo-}" --version 2>/dev/null; } |
    grep -qwF -- "$version"; then
    return 0
  fi
  if [[ " ${UNLOCKED_CARGO_TOOLS[*]} " == *" $crate@$version "* ]]; then
    locked=()
  fi
  cargo install "${locked[@]}" "$crate@$version" "$@"
}

# ensure_apt PACKAGE... : apt-get install the missing ones.
ensure_apt() {
  local missing=()
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ "${#missing[@]}" -ne 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
}

# A check in a part says what failed: under `set -e` a bare `grep -q` or
# `test` that fails ends the part with no word of what was checked.
#
# expect DESCRIPTION COMMAND...: runs COMMAND; if it fails, prints
# "<part>: failed: DESCRIPTION" on stderr and exits 1.
expect() {
  local what=$1
  shift
  if ! "$@"; then
    echo "$(basename "$0"): failed: $what" >&2
    exit 1
  fi
}

# expect_line FILE GREP-ARGS...: FILE has a line that `grep GREP-ARGS`
# matches; if not, says which pattern FILE lacks, shows its last lines and
# exits 1.
expect_line() {
  local file=$1
  shift
  if ! grep -q "$@" "$file"; then
    echo "$(basename "$0"): failed: $file has no line matching grep $*; its last lines:" >&2
    tail -n 20 "$file" >&2
    exit 1
  fi
}
