#!/usr/bin/env bash
# Instructions a packet of lcmp-fwd's worker and of dpdk-testpmd's
# forwarding lcore (5tswap) on vs-testpmd.sh's input, under callgrind
# (docs/dpdk.md, "Benchmarks"). A benchmark, not a test: it prints
# figures and checks nothing. Instruction counts do not depend on the
# machine's load, which moves vs-testpmd.sh's Mpps by tens of percent on a
# shared machine; what they leave out is memory (cache misses), so read
# both.
#
#   instructions.sh LCMP-FWD TABLES FLOWS [SHORT LONG]
#
# Each program runs twice under valgrind (SHORT and LONG seconds of wall
# time, 8 and 20 by default); the
# figure is the forwarding thread's instructions of the longer run less
# the shorter's, over the packets of the longer less the shorter's, so
# that start-up, the flows' first packets and exit cancel (every flow's
# first packet falls in both runs while FLOWS is well under the packets
# of the shorter run, which the script checks).
set -euo pipefail
fwd=$1 tables=$2 flows=$3 short=${4:-8} long=${5:-20}
source "$(dirname "$0")/input.sh"
bench_input "$tables" "$flows" 0 1
cg=(valgrind --tool=callgrind --separate-threads=yes)

# grown PREFIX1 PREFIX2: the instructions of the thread that ran the most
# more of them in the longer run than in the shorter (the forwarding one:
# the others start up, sleep or wait, the same in both runs), as
# "SHORT LONG".
grown() {
  local t id a b best=-1 out=
  for t in "$2"-*; do
    id=${t##*-}
    [ -f "$1-$id" ] || continue
    a=$(sed -n 's/^totals: //p' "$1-$id")
    b=$(sed -n 's/^totals: //p' "$t")
    if [ $((b - a)) -gt "$best" ]; then best=$((b - a)) out="$a $b"; fi
  done
  echo "$out"
}

# fwd SECONDS: runs lcmp-fwd, its callgrind files as $work/cg.fwd.SECONDS-*,
# and prints the packets its decider saw.
fwd() {
  rm -f "$work/ctl"
  (sleep "$1" && printf 'quit\n' >"$work/ctl.tmp" && mv "$work/ctl.tmp" "$work/ctl") &
  "${cg[@]}" --callgrind-out-file="$work/cg.fwd.$1" "$fwd" "${eal[@]}" --file-prefix "lcmp-ins-$$" \
    -- -c "$work/fwd.conf" --stats-ms 0 --mbufs "$mbufs" --mbuf-size 256 \
    --flows $((flows * 2 > 65536 ? flows * 2 : 65536)) --control "$work/ctl" \
    >"$work/fwd.out" 2>"$work/fwd.err" || { cat "$work/fwd.err" >&2; exit 1; }
  wait
  sed -n 's/^exit: decider 0: packets=\([0-9]*\) .*/\1/p' "$work/fwd.out"
}

# tp SECONDS: the same for testpmd (5tswap): the packets it forwarded.
tp() {
  local pid
  rm -f "$work/tp.in"
  mkfifo "$work/tp.in"
  "${cg[@]}" --callgrind-out-file="$work/cg.tp.$1" dpdk-testpmd "${eal[@]}" \
    --file-prefix "lcmp-ins-tp-$$" -- --forward-mode=5tswap --total-num-mbufs="$mbufs" \
    --mbuf-size=$((256 + 128)) --nb-cores=1 --auto-start --no-lsc-interrupt \
    <"$work/tp.in" >"$work/tp.out" 2>&1 &
  pid=$!
  exec 7>"$work/tp.in"
  sleep "$1"
  echo >&7
  exec 7>&-
  wait "$pid" || true
  grep -A3 'Accumulated forward statistics' "$work/tp.out" |
    sed -n 's/.*RX-packets: *\([0-9]*\).*/\1/p' | head -n1
}

# per WHAT P1 P2: the forwarding thread's instructions a packet, from the
# two runs' packets (P1 the shorter's, P2 the longer's) and callgrind files.
per() {
  python3 -c "import sys; p1, p2, i1, i2, f = map(int, sys.argv[2:]); \
p1 >= 2 * f or sys.exit('%s: %d packets in the short run, not twice the %d flows: give more seconds' % (sys.argv[1], p1, f)); \
print('%.1f' % ((i2 - i1) / (p2 - p1)))" "$1" "$2" "$3" \
    $(grown "$work/cg.$1.$short" "$work/cg.$1.$long") "$flows"
}
f1=$(fwd "$short") f2=$(fwd "$long")
l=$(per fwd "$f1" "$f2")
t1=$(tp "$short") t2=$(tp "$long")
t=$(per tp "$t1" "$t2")
python3 - "$flows" "$l" "$t" <<'PY'
import sys
flows, l, t = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
print("%s flows: lcmp-fwd %.1f instructions a packet, testpmd 5tswap %.1f; "
      "5tswap / lcmp-fwd %.2fx (instructions)" % (flows, l, t, t / l))
PY
