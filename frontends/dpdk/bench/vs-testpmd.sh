#!/usr/bin/env bash
# lcmp-fwd against dpdk-testpmd (docs/dpdk.md, "Benchmarks"): the same
# input, vdevs and one forwarding lcore each. A benchmark, not a test:
# it prints figures, it checks nothing.
#
#   vs-testpmd.sh LCMP-FWD TABLES FLOWS SECONDS [CPU0 CPU1]
#
# Input: `pcaptest.py flows` (one 60-byte UDP frame per flow towards
# DC8), replayed by net_pcap with infinite_rx=1, into net_null. 256-byte
# mbufs (the whole pcap is held in mbufs). Each app forwards for SECONDS;
# the figure is packets per CPU-second of the forwarding lcore(s):
# lcmp-fwd's own exit line (its worker's CPU time), and for testpmd its
# forwarding lcore's thread's CPU time (/proc), so that a shared, loaded
# CPU counts only the time each app ran.
set -euo pipefail
fwd=$1 tables=$2 flows=$3 secs=$4
c0=${5:-0} c1=${6:-1}
source "$(dirname "$0")/input.sh"
bench_input "$tables" "$flows" "$c0" "$c1"

(sleep "$secs" && printf 'quit\n' >"$work/ctl.tmp" && mv "$work/ctl.tmp" "$work/ctl") &
"$fwd" "${eal[@]}" --file-prefix "lcmp-bench-$$" -- -c "$work/fwd.conf" --stats-ms 0 \
  --mbufs "$mbufs" --mbuf-size 256 --flows $((flows * 2 > 65536 ? flows * 2 : 65536)) \
  --control "$work/ctl" >"$work/fwd.out" 2>"$work/fwd.err"
wait
lcmp=$(sed -n 's/^exit: rate: .*: \([0-9.]*\) Mpps per CPU-second$/\1/p' "$work/fwd.out")
[ -n "$lcmp" ] || { cat "$work/fwd.err" "$work/fwd.out" >&2; exit 1; }
# What the decider saw: a flow's first packet is a new flow (decided and
# pinned), every later one a hit; short runs over many flows are mostly
# first packets.
hits=$(sed -n 's/^exit: decider 0: .* hits=\([0-9]*\) .*/\1/p' "$work/fwd.out")
new=$(sed -n 's/^exit: decider 0: .* new_flows=\([0-9]*\) .*/\1/p' "$work/fwd.out")

testpmd() { # testpmd MODE: Mpps per CPU-second of its forwarding lcore
  local pkts ticks tid
  mkfifo "$work/tp.in"
  dpdk-testpmd "${eal[@]}" --file-prefix "lcmp-bench-tp-$$" -- --forward-mode="$1" \
    --total-num-mbufs="$mbufs" --mbuf-size=$((256 + 128)) --nb-cores=1 --auto-start \
    --no-lsc-interrupt <"$work/tp.in" >"$work/tp.out" 2>&1 &
  local pid=$!
  exec 7>"$work/tp.in"
  sleep "$secs"
  # The forwarding lcore's thread (EAL names it rte-worker-1): its CPU
  # time in clock ticks, just before forwarding stops (DPDK 22.11: rte-worker-1).
  ticks=0
  for tid in /proc/$pid/task/*; do
    # (A thread may exit between the glob and the read.)
    comm=$(cat "$tid/comm" 2>/dev/null) || continue
    if [ "$comm" = rte-worker-1 ]; then
      ticks=$(awk '{print $14 + $15}' "$tid/stat")
    fi
  done
  echo >&7
  exec 7>&-
  wait "$pid" || true
  rm -f "$work/tp.in"
  pkts=$(grep -A3 'Accumulated forward statistics' "$work/tp.out" |
    sed -n 's/.*RX-packets: *\([0-9]*\).*/\1/p' | head -n1)
  # (Inside $(...): what went wrong goes to stderr, or it would vanish.)
  [ -n "$pkts" ] && [ "$ticks" -gt 0 ] || {
    echo "testpmd --forward-mode=$1 forwarded nothing in $secs s (too short for its start-up?):" >&2
    tail -20 "$work/tp.out" >&2
    exit 1
  }
  python3 -c "import os; print('%.3f' % ($pkts / ($ticks / os.sysconf('SC_CLK_TCK')) / 1e6))"
}
io=$(testpmd io)
tswap=$(testpmd 5tswap)
python3 - "$flows" "$lcmp" "$io" "$tswap" "$hits" "$new" <<'PY'
import sys
flows, lcmp, io, tswap = sys.argv[1], *map(float, sys.argv[2:5])
hits, new = int(sys.argv[5] or 0), int(sys.argv[6] or 0)
print("%s flows: lcmp-fwd %.2f Mpps per CPU-second (%.0f %% hits); testpmd io %.2f, 5tswap %.2f; "
      "lcmp-fwd / 5tswap %.2fx, / io %.2fx" % (flows, lcmp, 100.0 * hits / max(hits + new, 1),
                                             io, tswap, lcmp / tswap, lcmp / io))
PY
