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
# Installs CRATE@VERSION unless BINARY --version already reports VERSION.
ensure_cargo_tool() {
  local bin=$1 crate=$2 version=$3
  shift 3
  if command -v "$bin" >/dev/null 2>&1 && "$bin" --version 2>/dev/null | grep -q "$version"; then
    return 0
  fi
  cargo install --locked "$crate@$version" "$@" || cargo install "$crate@$version" "$@"
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
