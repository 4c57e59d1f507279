#!/usr/bin/env bash
# lcmp-tofino: unit, equivalence (quickcheck against lcmp-decide and the
# fuzz crate's reference model), pin, update, text-check (lint), golden and
# compile-stamp tests (a golden program whose sha256 is not recorded in
# tests/golden/compile-stamps.json fails, and with
# LCMP_STAMPS_REQUIRE_COMPILED=1, set here, so does a stamp without the
# compiler's 0 errors and stage counts; docs/tofino.md); then the Python checks of the generated files: a
# structural lint of lcmp.p4, P4Runtime text with the PyPI p4runtime
# protobufs and with finsy, the bfrt_python script, the BF-Runtime JSON
# and the P4Runtime requests loaded through a reimplementation of
# bfrt_python's reader (open-p4studio bfrtcli.py / bfrtTable.py), the
# agent's dry run (lcmp_agent.py with the core of `lcmp tofino agent`), and
# the agent's Switch class against a recording fake of bfrt_python.
set -euo pipefail
source scripts/lib.sh

LCMP_STAMPS_REQUIRE_COMPILED=1 cargo test -p lcmp-tofino

# Pinned Python tools in their own venv (idempotent). finsy 0.30.0 and
# p4runtime 1.6.0 install together on Python 3.11; see docs/tofino.md.
P4RUNTIME_VERSION=1.6.0
FINSY_VERSION=0.30.0
# Inside the clone (target/ is ignored): CI caches nothing outside it.
VENV="${LCMP_TOFINO_VENV:-$PWD/target/lcmp-tofino-py}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
have_version() { "$VENV/bin/pip" show "$1" 2>/dev/null | grep -qx "Version: $2"; }
if ! have_version p4runtime "$P4RUNTIME_VERSION" || ! have_version finsy "$FINSY_VERSION"; then
  "$VENV/bin/pip" install -q "p4runtime==$P4RUNTIME_VERSION" "finsy==$FINSY_VERSION"
fi
PY="$VENV/bin/python"
export PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python

# The checked-in golden export, and fresh exports of other configurations.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export_to() {
  cargo run -q -p lcmp-tofino --example tofino_export -- "$@" >/dev/null
}
golden=frontends/tofino/tests/golden
export_to entries --topology bso13 --switch DC3 --seed 12648430 \
  --dev-port 0=128 --dev-port 1=136 --dev-port 2=144 --placeholder-next-hops -o "$work/bso13-dc3"
export_to entries --topology testbed8 --switch DC8 --scheme ecmp --seed 7 \
  --target tofino2 --pin-slots 1024 --placeholder-next-hops -o "$work/testbed8-dc8-ecmp"
# The idle load the golden update starts from.
export_to entries --topology testbed8 --switch DC1 --placeholder-next-hops -o "$work/testbed8-dc1-idle"
# Without next hops for every routed port, entries are refused.
if cargo run -q -p lcmp-tofino --example tofino_export -- \
    entries --topology testbed8 --switch DC1 --next-hop 0=02:00:00:00:00:01,02:00:00:00:00:02 \
    -o "$work/no-next-hops" 2>"$work/err"; then
  echo "an export without next hops was not refused"; exit 1
fi
expect_line "$work/err" -F "device port 1 has no next hop"
# A murmur3 configuration is refused with the typed error.
if cargo run -q -p lcmp-tofino --example tofino_export -- \
    p4 --topology testbed8 --switch DC1 --hash murmur3 -o "$work/murmur3" 2>"$work/err"; then
  echo "murmur3 export was not refused"; exit 1
fi
expect_line "$work/err" -F "needs the CRC-32 ECMP hash"

for dir in "$golden" "$golden/bso13-dc3" "$work/bso13-dc3" "$work/testbed8-dc8-ecmp"; do
  echo "--- $dir"
  "$PY" frontends/tofino/tests/py/lint_p4.py "$dir/lcmp.p4"
  update=()
  if [ "$dir" = "$golden" ]; then update=("$golden/update"); fi
  "$PY" frontends/tofino/tests/py/check_p4runtime.py p4runtime "$dir" "${update[@]}"
  "$PY" frontends/tofino/tests/py/check_p4runtime.py finsy "$dir" "${update[@]}"
  "$PY" frontends/tofino/tests/py/check_bfrt.py load "$dir"
done
echo "--- update: idle testbed8 DC1 -> $golden/state.json"
"$PY" frontends/tofino/tests/py/check_bfrt.py update "$work/testbed8-dc1-idle" "$golden/update" "$golden"
"$PY" frontends/tofino/tests/py/check_bfrt.py selftest "$golden"
echo "--- agent dry run: idle testbed8 DC1 + polls -> $golden/state.json's entries"
cargo build -q -p lcmp-tofino --example tofino_export
LCMP_CORE="$(cargo metadata --format-version 1 --no-deps | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/examples/tofino_export agent --topology testbed8 --switch DC1 --placeholder-next-hops" \
  "$PY" frontends/tofino/tests/py/check_bfrt.py agent "$work/testbed8-dc1-idle" \
  frontends/tofino/tests/fixtures/agent_trace.json "$golden"
echo "--- the agent's Switch class against a recording fake of bfrt_python"
LCMP_CORE="$(cargo metadata --format-version 1 --no-deps | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/examples/tofino_export agent --topology testbed8 --switch DC1 --placeholder-next-hops" \
  "$PY" frontends/tofino/tests/py/check_bfrt.py switch "$work/testbed8-dc1-idle" \
  frontends/tofino/tests/fixtures/agent_trace.json "$golden"
