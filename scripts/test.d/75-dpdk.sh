#!/usr/bin/env bash
# The DPDK frontend (docs/dpdk.md): lcmp-fwd under EAL without NICs or
# hugepages (--no-huge --no-pci -m 512), with net_pcap vdevs:
# * install Debian's DPDK (22.11 LTS, libdpdk-dev) if pkg-config lacks it;
# * build lcmp-fwd (pkg-config, liblcmp_ffi.a, -Wl,--gc-sections);
# * generate a trace and its pcap (frontends/dpdk/tests/pcaptest.py: bad
#   frames interleaved), tables from `lcmp tables --topology testbed8
#   --switch DC1`, and `lcmp replay`'s decisions for the trace;
# * run the app with 1 and 2 worker lcores: every packet must egress on
#   the port `lcmp replay` decides (compared packet by packet), with the
#   next hop's MAC, in flow order; bad frames counted and dropped;
# * a table update after 1 500 frames (--install-after, exact and
#   --no-hold): nothing lost, no established flow moved, new flows on the
#   new tables' ports; a bad blob mid-trace is refused, forwarding goes on;
# * shared tables: a worker's decider holds no tables (one copy a
#   generation, attached with lcmp_use_tables);
# * signed blobs ('trust' lines): a signed update installed; an unsigned
#   one, one signed by an untrusted key and a replayed generation refused
#   mid-trace with one line each, forwarding on the first tables;
# * bad command lines and configs: one line on stderr, exit status 1;
#   the config checked against its tables; default routes;
# * every RX queue polled, the devices' own counters printed;
# * rte_telemetry (/lcmp/*, read with dpdk-telemetry.py), the control
#   file's cache and explain;
# * af_packet over veth pairs in network namespaces with real UDP and TCP
#   traffic (frontends/dpdk/tests/netns.sh), where namespaces can be made.
set -euo pipefail
source scripts/lib.sh
if ! pkg-config --exists libdpdk 2>/dev/null; then
  ensure_apt pkg-config libdpdk-dev libpcap-dev
fi
# The build (make; libsodium: the dispatcher's keyed hash and key-rotation
# statements), the pcap generator and checker (Python 3, standard library
# only) and OpenSSL's CLI (the test signs key-rotation statements with it).
ensure_apt make python3 libsodium-dev openssl
# DPDK's telemetry client (dpdk-telemetry.py), and the namespace run's
# tools (ip, nstat; ethtool).
ensure_apt dpdk-dev iproute2 ethtool
expect "pkg-config finds libdpdk" pkg-config --exists libdpdk
echo "DPDK $(pkg-config --modversion libdpdk)"

root=$PWD
target=${CARGO_TARGET_DIR:-$root/target}
export CARGO_TARGET_DIR=$target
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lcmp=$target/debug/lcmp
fwd=$target/dpdk/lcmp-fwd
check=(python3 frontends/dpdk/tests/pcaptest.py check)

cargo build -p lcmp-ffi --release --locked
cargo build -p lcmp-cli --locked
make -s -C frontends/dpdk BUILD="$target/dpdk" TARGET_DIR="$target" "$fwd"

python3 frontends/dpdk/tests/pcaptest.py gen "$work" --seed 22 --flows 300 --packets 3000
"$lcmp" tables --topology testbed8 --switch DC1 -o "$work/t1.bin" >/dev/null
# The second tables keep only the cheapest candidate (--band 0): new flows
# towards DC8 all take port 4, established ones must stay where they are.
"$lcmp" tables --topology testbed8 --switch DC1 --band 0 --generation 2 -o "$work/t2.bin" >/dev/null
"$lcmp" replay --topology testbed8 --switch DC1 "$work/trace.csv" >"$work/replay1.txt"
"$lcmp" replay --topology testbed8 --switch DC1 --band 0 "$work/trace.csv" >"$work/replay2.txt"
tail -n1 "$work/replay1.txt"
head -c 16 "$work/t1.bin" >"$work/bad.bin"

# The config: LCMP port P is net_pcap(P+1); DC d's prefixes are route
# group d (10.0.(d-1).0/24, fd00:0:0:(d-1)::/64), DC1's own excepted: its
# tables have no group 1, and a route to a group the tables lack is
# refused (packets towards DC1 are unknown_dst: pcaptest.py check).
{
  echo "rx net_pcap0"
  for p in 0 1 2 3 4 5; do echo "port $p net_pcap$((p + 1)) 02:00:00:00:01:0$p"; done
  for d in 1 2 3 4 5 6 7; do
    echo "route 10.0.$d.0/24 $((d + 1))"
    echo "route fd00:0:0:$d::/64 $((d + 1))"
  done
  echo "tables $work/t1.bin"
} >"$work/fwd.conf"

# Lcores: main (control) + workers (+ the dispatcher with 2 workers),
# spread over the first two CPUs this process may run on (a container's
# cpuset need not start at CPU 0).
read -r -a cpus <<<"$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))')"
c0=${cpus[0]}
c1=${cpus[1]:-$c0}
# run NAME WORKERS [APP OPTIONS...]: the app on the pcap, its stdout in
# $work/NAME.stats, its egress pcaps in $work/NAME/out-P-qW.pcap; the
# config is $CONF if set, else $work/fwd.conf.
run() {
  local name=$1 workers=$2 p q files status=0
  shift 2
  mkdir -p "$work/$name"
  local vdevs=(--vdev "net_pcap0,rx_pcap=$work/in.pcap${RX_EXTRA:-}")
  for p in 0 1 2 3 4 5; do
    files=
    for ((q = 0; q < workers; q++)); do files+=",tx_pcap=$work/$name/out-$p-q$q.pcap"; done
    vdevs+=(--vdev "net_pcap$((p + 1))${files}")
  done
  local lcores="0@$c0,1@$c1"
  if [ "$workers" -gt 1 ]; then lcores="0@$c0,1@$c1,2@$c0,3@$c1"; fi
  # --exit-idle-ms: the pcap's end is one second without a frame (long
  # enough for a descheduled RX lcore on a loaded machine).
  timeout 120 "$fwd" --no-huge --no-pci -m 512 --lcores "$lcores" --file-prefix "lcmp-test-$$" \
    --log-level=lib.eal:warning "${vdevs[@]}" -- -c "${CONF:-$work/fwd.conf}" --workers "$workers" \
    --exit-idle-ms 1000 --stats-ms 0 --seed 0 "$@" >"$work/$name.stats" 2>"$work/$name.err" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "lcmp-fwd ($name) exited with status $status:"
    cat "$work/$name.err" "$work/$name.stats"
    exit 1
  fi
  grep '^exit: total:' "$work/$name.stats" | sed "s/^/$name: /"
}

echo "--- default routes (0.0.0.0/0, ::/0) accepted and used"
# Every IP frame then has a route group (DC8's): no unknown_dst.
{ grep -v '^route ' "$work/fwd.conf"; printf 'route 0.0.0.0/0 8\nroute ::/0 8\n'; } >"$work/default.conf"
CONF=$work/default.conf run default 1
expect_line "$work/default.stats" -E "^exit: total: rx=[0-9]+ tx=[1-9][0-9]* .* unknown_dst=0 "

echo "--- per-packet egress == lcmp replay, 1 and 2 workers; routed as a router routes"
# The checker also wants every egressed frame's TTL (hop limit) one less
# than sent, with a valid IPv4 header checksum, its VLAN tags stripped,
# and none of the frames for another MAC, broadcast, multicast or with TTL
# 0 or 1 routed (each counted).
for workers in 1 2; do
  run "w$workers" "$workers"
  "${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/w$workers.stats" \
    --replay "$work/replay1.txt" "$work/w$workers"/out-*.pcap
done
# Every loss counted: the device's own counters beside the app's.
frames=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["frames"])' "$work/bad.json")
expect_line "$work/w1.stats" -xE "exit: port 0 \(net_pcap0\): ipackets=$frames imissed=0 ierrors=0 rx_nombuf=0 opackets=0 oerrors=0"
expect_line "$work/w2.stats" -xE "exit: port 1 \(net_pcap1\): ipackets=0 imissed=0 ierrors=0 rx_nombuf=0 opackets=[1-9][0-9]* oerrors=0"
# Every RX queue polled: net_pcap0 with two rx_pcap files has two RX
# queues, both fed; the one RX lcore (1 worker; 2: the dispatcher) polls
# both, so every frame of both files is received.
for workers in 1 2; do
  RX_EXTRA=",rx_pcap=$work/in.pcap" run "twoq$workers" "$workers"
  expect_line "$work/twoq$workers.stats" -E "^exit: total: rx=$((2 * frames)) "
  expect_line "$work/twoq$workers.stats" -E "^exit: port 0 \(net_pcap0\): ipackets=$((2 * frames)) "
done
# Frames the parser rejects are spread over the workers (all to worker 0,
# garbage could fill its ring): worker 1 counts some too.
w1_bad=$(sed -n 's/^exit: worker 1 lcore [0-9]*: .* truncated=\([0-9]*\) .*/\1/p' "$work/w2.stats")
expect "worker 1 dropped truncated frames too (truncated=$w1_bad)" test "${w1_bad:-0}" -gt 0
# The frames are addressed to net_pcap0's MAC (pcaptest.py: DST_MAC).
expect_line "$work/w1.stats" -F "lcmp-fwd: rx DPDK port 0 (net_pcap0) MAC 02:70:63:61:70:00: unicast for this MAC routed, VLAN tags stripped"
expect_line "$work/w1.stats" -E "^exit: total: .* l2_multicast=[1-9][0-9]* other_mac=[1-9][0-9]* vlan_dropped=0 ttl_expired=[1-9][0-9]* "
# --vlan keep: the tags leave with the frame; drop: tagged frames are not
# routed (counted); --promiscuous: frames for another MAC are routed (still
# not broadcast, multicast or expired ones).
run vlan-keep 1 --vlan keep
"${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/vlan-keep.stats" \
  --replay "$work/replay1.txt" --vlan keep "$work/vlan-keep"/out-*.pcap
run vlan-drop 2 --vlan drop
"${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/vlan-drop.stats" \
  --replay "$work/replay1.txt" --vlan drop "$work/vlan-drop"/out-*.pcap
run promisc 1 --promiscuous
expect_line "$work/promisc.stats" -F "MAC 02:70:63:61:70:00: promiscuous (unicast for any MAC routed)"
"${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/promisc.stats" \
  --replay "$work/replay1.txt" --promiscuous "$work/promisc"/out-*.pcap

# Shared tables: each worker's decider holds no tables of its own; one
# generation's compiled tables exist once, whatever the worker count.
stats=$(cat "$work/w2.stats")
re='\(([0-9]+) bytes\), .*tables shared by every worker: ([0-9]+) bytes a generation \(([0-9]+) bytes a worker with tables of its own\)'
[[ $stats =~ $re ]] || { echo "no memory line in lcmp-fwd's output"; exit 1; }
read -r per_worker shared own <<<"${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]}"
expect "worker memory + shared tables ($per_worker + $shared B) = an owning worker's ($own B)" test $((per_worker + shared)) -eq "$own"
expect "the shared tables are more than 20 000 B ($shared B)" test "$shared" -gt 20000
echo "memory: ${per_worker} B a worker + ${shared} B of tables once (was ${own} B a worker)"

echo "--- a table update after 1500 frames"
for workers in 1 2; do
  run "update$workers" "$workers" --install-after "1500:$work/t2.bin"
  expect_line "$work/update$workers.stats" -F "generation 2 published"
  "${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/update$workers.stats" \
    --replay "$work/replay1.txt" --replay2 "$work/replay2.txt" --switch-at 1500 \
    "$work/update$workers"/out-*.pcap
done
# Without the hold, forwarding goes on while the new generation spreads.
run nohold 2 --install-after "1500:$work/t2.bin" --no-hold
"${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/nohold.stats" \
  --replay "$work/replay1.txt" --replay2 "$work/replay2.txt" --switch-at 1500 --loose \
  "$work/nohold"/out-*.pcap
# Without 'trust' lines too, an older or the same generation is refused
# (counted), forwarding goes on on the first tables.
run rollback 1 --install-after "1500:$work/t1.bin"
expect_line "$work/rollback.err" -xF "lcmp-fwd: $work/t1.bin: rollback: generation 1 not newer than the installed 1"
expect_line "$work/rollback.stats" -xE "exit: installs: published=1 refused=1 read=0 blob=0 signature=0 rollback=1 config=0 state=0"
"${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/rollback.stats" \
  --replay "$work/replay1.txt" "$work/rollback"/out-*.pcap
# A bad blob mid-trace is refused with one line; the first tables stay.
run badblob 2 --install-after "1500:$work/bad.bin"
expect_line "$work/badblob.err" -E "^lcmp-fwd: $work/bad.bin: table blob truncated \(-30\)$"
"${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/badblob.stats" \
  --replay "$work/replay1.txt" "$work/badblob"/out-*.pcap

# The control file: an install while (or after) the pcap is replayed; the
# file is consumed, every worker ends on generation 2, nothing is lost.
# A FIFO named by 'install' is refused at once (opened non-blocking,
# fstat'ed): it would block the control lcore, and the install after it.
mkfifo "$work/fifo.bin"
printf '# a comment\ninstall %s\nstats\nbogus s3cret-token\ninstall %s\nlink 7 down\nlink 0 sideways\nlink x up\ninstall\n' \
  "$work/fifo.bin" "$work/t2.bin" >"$work/ctl"
run control 2 --control "$work/ctl"
expect "lcmp-fwd consumed the control file $work/ctl" test ! -e "$work/ctl"
expect_line "$work/control.err" -xF "lcmp-fwd: $work/fifo.bin: not a regular file"
# A bad line is reported by number, its content never echoed.
expect_line "$work/control.err" -xF "lcmp-fwd: control: line 4: unknown command"
# A refused line says why.
expect_line "$work/control.err" -xF "lcmp-fwd: control: line 6: link: LCMP port 7 has no 'port' line"
expect_line "$work/control.err" -xF "lcmp-fwd: control: line 7: link: expected up or down"
expect_line "$work/control.err" -xF "lcmp-fwd: control: line 8: link: LCMP port must be 0..63"
expect_line "$work/control.err" -xF "lcmp-fwd: control: line 9: install: expected 'install BLOB'"
expect_line "$work/control.stats" -xE "exit: installs: published=2 refused=1 read=1 blob=0 signature=0 rollback=0 config=0 state=0"
expect "the control file's content is not echoed" bash -c "! grep -q s3cret '$work/control.err'"
# A control file that is a symlink is removed unread (its target is not
# run: 'quit' there would end the run before the trace's end).
printf 'quit\n' >"$work/ctl-target"
ln -s "$work/ctl-target" "$work/ctl-link"
run ctl-symlink 1 --control "$work/ctl-link"
expect_line "$work/ctl-symlink.err" -xF "lcmp-fwd: control: $work/ctl-link is a symlink: removed, not read"
expect "the symlink is gone, its target kept" test ! -L "$work/ctl-link" -a -e "$work/ctl-target"
"${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/ctl-symlink.stats" \
  --replay "$work/replay1.txt" "$work/ctl-symlink"/out-*.pcap
expect_line "$work/control.stats" -F "generation 2 published"
gen2=$(grep -c '^exit: worker .* generation=2$' "$work/control.stats" || true)
expect "both workers end on generation 2 ($work/control.stats: $gen2)" test "$gen2" -eq 2
"${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/control.stats" \
  --replay "$work/replay1.txt" --replay2 "$work/replay2.txt" --switch-at 1500 --loose \
  "$work/control"/out-*.pcap

echo "--- telemetry (dpdk-telemetry.py) and the control file's cache and explain"
# The app runs until told to quit; once the trace is through, its
# counters are read over DPDK's telemetry socket, then one flow of the
# trace (towards DC8, pinned by then) is explained.
read -r esrc edst esport edport eproto <<<"$(awk -F, '$1 ~ /^[0-9]/ && $8 == 8 && $5 != 0 {print $3, $4, $5, $6, $7; exit}' "$work/trace.csv")"
run tel 2 --exit-idle-ms 0 --stats-ms 100 --control "$work/ctl-tel" &
tel=$!
for _ in $(seq 300); do grep -q "^stats: total: rx=$frames " "$work/tel.stats" 2>/dev/null && break; sleep 0.1; done
printf '/lcmp/stats\n/lcmp/worker,1\n/lcmp/ports\n/lcmp/port,5\n/lcmp/installs\n' |
  dpdk-telemetry.py -f "lcmp-test-$$" >"$work/tel.json"
printf 'cache\nexplain %s %s %s %s %s\nexplain 10.0.0.1 192.168.1.1 1 2 17\nquit\n' \
  "$esrc" "$edst" "$esport" "$edport" "$eproto" >"$work/ctl-tel.tmp"
mv "$work/ctl-tel.tmp" "$work/ctl-tel"
wait "$tel"
python3 - "$work/tel.json" "$frames" <<'PY'
import json, sys
replies = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
by = {list(r)[0]: list(r.values())[0] for r in replies}
stats, w1, installs = by["/lcmp/stats"], by["/lcmp/worker"], by["/lcmp/installs"]
frames = int(sys.argv[2])
assert stats["rx"] == frames, stats
assert stats["no_route"] == stats["cache_full"] + stats["no_route_other"], stats
assert stats["flow_cache_used"] > 0 and stats["flow_cache_slots"] == 2 * 65536, stats
assert 0 < w1["rx"] < frames and "cache_full" in w1 and w1["lcore"] >= 1, w1
assert by["/lcmp/ports"] == [0, 1, 2, 3, 4, 5], by["/lcmp/ports"]
assert by["/lcmp/port"]["up"] == 1 and by["/lcmp/port"]["dpdk_port"] == 6, by["/lcmp/port"]
assert installs["published"] == 1 and installs["refused"] == 0, installs
print("telemetry: rx=%d tx=%d cache_full=%d flow_cache_used=%d of %d; port 5 routed=%d"
      % (stats["rx"], stats["tx"], stats["cache_full"], stats["flow_cache_used"],
         stats["flow_cache_slots"], by["/lcmp/port"]["routed"]))
PY
expect_line "$work/tel.stats" -E "^cache: worker 0: [1-9][0-9]* of 65536 slots used \([0-9]+%\), cache_full=0$"
expect_line "$work/tel.stats" -E "^explain: worker [01]: group 8: [a-z_ ]+, chosen ([0-5]), pinned \1, hash [0-9a-f]{8}; candidates:( port [0-5] cost [0-9]+ \(path [0-9]+, congestion [0-9]+\) rank [0-9]+( kept)?;){6}$"
expect_line "$work/tel.err" -xF "lcmp-fwd: control: line 3: explain: no route for the destination (unknown_dst)"

echo "--- a link event reaches a stalled worker whose control ring was full"
# Worker 0 sleeps 3 s at start while samples (every 1 us) fill its control
# ring; an administrative link-down arrives meanwhile. Link states are
# published state, not ring messages: the worker applies the latest (5 up
# and port 0 down, links=6) before its first packet, with control
# messages (samples) dropped; the down took effect: more packets without
# a route than in the run with every link up (w1). (A link message behind
# a full ring was lost for good once; then resent until the ring took it,
# which still raced the worker's first packets on a loaded machine.)
(sleep 1 && printf 'link 0 down\n' >"$work/ctl-stall.tmp" && mv "$work/ctl-stall.tmp" "$work/ctl-stall") &
run stall 1 --stall-worker-ms 3000 --sample-us 1 --control "$work/ctl-stall"
wait
expect_line "$work/stall.stats" -F "link: LCMP port 0 (DPDK port 1) down"
expect_line "$work/stall.stats" -E "^exit: total: .* links=6 ctl_dropped=[1-9][0-9]* "
no_route_of() { sed -n 's/^exit: total: .* no_route=\([0-9]*\) .*/\1/p' "$1"; }
stalled=$(no_route_of "$work/stall.stats") all_up=$(no_route_of "$work/w1.stats")
expect "port 0's down reached the stalled worker (no_route $stalled > $all_up)" test "$stalled" -gt "$all_up"

# rejects EXPECTED-STDERR-REGEX CONFIG [APP OPTIONS...]
rejects() {
  local want=$1 conf=$2 status=0
  shift 2
  timeout 60 "$fwd" --no-huge --no-pci -m 512 --lcores "${LCORES:-0@$c0,1@$c1}" --file-prefix "lcmp-test-$$" \
    --log-level=lib.eal:error --vdev "net_pcap0,rx_pcap=$work/in.pcap" \
    --vdev "net_pcap1,tx_pcap=$work/rejected.pcap" -- -c "$conf" "$@" \
    >"$work/rejected.out" 2>"$work/rejected.raw" || status=$?
  # EAL's own start-up notice is not the app's.
  grep -v '^TELEMETRY: ' "$work/rejected.raw" >"$work/rejected.err" || true
  if [ "$status" -ne 1 ] || [ "$(wc -l <"$work/rejected.err")" -ne 1 ] ||
    ! grep -qE "$want" "$work/rejected.err"; then
    echo "lcmp-fwd -c $conf $*: status $status (want 1), stderr:"
    cat "$work/rejected.err"
    echo "(want one line matching: $want)"
    exit 1
  fi
  echo "rejected: $(cat "$work/rejected.err")"
}
echo "--- the dispatcher drops for a full worker ring instead of stalling every worker"
# Two workers behind the software dispatcher, worker 0 asleep for 3 s, the
# rings 512 deep: what a full ring refuses is dropped and counted, and
# worker 1 routes meanwhile (the first stats line, at 1 s, shows worker 1
# with its final rx and worker 0 with none). Before, a full ring stopped
# the dispatcher's RX for every worker until worker 0 woke.
run dstall 2 --stall-worker-ms 3000 --worker-ring 512 --stats-ms 1000 --exit-idle-ms 5000
total=$(grep '^exit: total:' "$work/dstall.stats")
re=' rx=([0-9]+) tx=([0-9]+) .* dispatch_dropped=([0-9]+) dropped=([0-9]+) '
[[ $total =~ $re ]] || { echo "no totals in $work/dstall.stats"; exit 1; }
read -r d_rx d_tx d_ddrop d_drop <<<"${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]}"
expect "every frame received ($d_rx of $frames)" test "$d_rx" -eq "$frames"
expect "worker 0's full ring dropped frames (dispatch_dropped=$d_ddrop)" test "$d_ddrop" -gt 0
expect "rx = tx + dropped ($d_rx = $d_tx + $d_drop)" test "$d_rx" -eq $((d_tx + d_drop))
w_rx() { sed -n "s/^$1: worker $2 lcore [0-9]*: rx=\([0-9]*\) .*/\1/p" "$work/dstall.stats" | head -n1; }
w0_at1=$(w_rx stats 0) w1_at1=$(w_rx stats 1) w1_end=$(w_rx exit 1)
expect "worker 0 was asleep at the first stats line (rx=$w0_at1)" test "$w0_at1" -eq 0
expect "worker 1 had routed all it got by then ($w1_at1 of $w1_end)" test "$w1_at1" -eq "$w1_end" -a "$w1_end" -gt 0
echo "dispatcher: $d_ddrop frames dropped for full rings; worker 1 routed $w1_end while worker 0 slept"

echo "--- signed blobs: with a 'trust' line, only signed and newer tables are installed"
# key_id: the id `lcmp tables keygen` printed.
key_id() { sed -n 's/.*; key id \([0-9a-f]\{16\}\)$/\1/p' "$1"; }
"$lcmp" tables keygen --key "$work/k.pem" --pubkey "$work/pub.pem" >"$work/k.id"
"$lcmp" tables keygen --key "$work/other.pem" --pubkey "$work/other.pub.pem" >"$work/other.id"
kid=$(key_id "$work/k.id") oid=$(key_id "$work/other.id")
expect "keygen printed two key ids ($kid, $oid)" test "${#kid}" -eq 16 -a "${#oid}" -eq 16
dc1=(--topology testbed8 --switch DC1)
"$lcmp" tables sign --key "$work/k.pem" "${dc1[@]}" "$work/t1.bin" -o "$work/t1.signed" >/dev/null
"$lcmp" tables sign --key "$work/k.pem" "${dc1[@]}" "$work/t2.bin" -o "$work/t2.signed" >/dev/null
"$lcmp" tables sign --key "$work/other.pem" "${dc1[@]}" "$work/t2.bin" -o "$work/t2.other" >/dev/null
# Switch DC2's newer tables, validly signed for DC2 (mix-and-match), and
# DC1's signed with an expiry in the past.
"$lcmp" tables --topology testbed8 --switch DC2 --generation 2 -o "$work/t2dc2.bin" >/dev/null
"$lcmp" tables sign --key "$work/k.pem" --topology testbed8 --switch DC2 "$work/t2dc2.bin" \
  -o "$work/t2.dc2" >/dev/null
"$lcmp" tables sign --key "$work/k.pem" "${dc1[@]}" --not-after 1000 "$work/t2.bin" \
  -o "$work/t2.expired" >/dev/null
{
  grep -v '^tables ' "$work/fwd.conf"
  echo "trust $work/other.pub.pem # a second key: rotation"
  echo "trust $work/pub.pem"
  echo "scope $("$lcmp" tables scope "${dc1[@]}")"
  echo "tables $work/t1.signed"
} >"$work/signed.conf"
# The second key is trusted too, so t2.other would verify: trust only k's.
grep -v 'other.pub.pem' "$work/signed.conf" >"$work/signed1.conf"
CONF=$work/signed.conf run signed 2 --install-after "1500:$work/t2.signed"
expect_line "$work/signed.stats" -F "generation 2 published"
"${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/signed.stats" \
  --replay "$work/replay1.txt" --replay2 "$work/replay2.txt" --switch-at 1500 \
  "$work/signed"/out-*.pcap
# Refused mid-trace with one line each, the first tables kept: an unsigned
# blob, one signed by an untrusted key, a replay of the installed generation,
# a blob for another switch (DC2), an expired blob.
refused_unsigned="unsigned blob: only signed blobs are accepted \(-43\)"
refused_other="signed by a key that is not trusted \(-41\)"
refused_rollback="rollback: generation not newer than the installed one \(-42\)"
refused_scope="wrong scope: the blob was signed for another switch or topology \(-45\)"
refused_expired="expired: the blob's signed expiry has passed \(-47\)"
for case in "t2.bin:$refused_unsigned" "t2.other:$refused_other" "t1.signed:$refused_rollback" \
  "t2.dc2:$refused_scope" "t2.expired:$refused_expired"; do
  blob=${case%%:*}
  CONF=$work/signed1.conf run "refused-$blob" 1 --install-after "1500:$work/$blob"
  expect_line "$work/refused-$blob.err" -E "^lcmp-fwd: $work/$blob: ${case#*:}$"
  "${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/refused-$blob.stats" \
    --replay "$work/replay1.txt" "$work/refused-$blob"/out-*.pcap
done

# Unsigned mode: another switch's tables (DC2's, generation 2) mid-trace
# are refused against the config (its route groups), counted 'config',
# every packet on the first tables.
run wrongsw 1 --install-after "1500:$work/t2dc2.bin"
expect_line "$work/wrongsw.err" -xE "lcmp-fwd: $work/fwd.conf:[0-9]+: .* \($work/t2dc2.bin\)"
expect_line "$work/wrongsw.stats" -xE "exit: installs: published=1 refused=1 read=0 blob=0 signature=0 rollback=0 config=1 state=0"
"${check[@]}" --dir "$work" --config "$work/fwd.conf" --stats "$work/wrongsw.stats" \
  --replay "$work/replay1.txt" "$work/wrongsw"/out-*.pcap

echo "--- the floor survives a restart (state file); key rotation through the control file"
# state.conf: signed1.conf (key k trusted, t1.signed at start) with a state
# file. t2 (generation 2) installed: the state file keeps k's floor 2.
state=$work/fwd.state
{ cat "$work/signed1.conf"; echo "state $state"; } >"$work/state.conf"
CONF=$work/state.conf run state1 1 --install-after "1500:$work/t2.signed"
expect_line "$work/state1.stats" -F "generation 2 published"
expect_line "$state" -xE "key $kid [0-9a-f]{64} 2"
expect "the state file was renamed into place (no temporary left)" test ! -e "$state.tmp"
# The small config of `rejects` (below) with the same key, scope and state.
scope_dc1=$("$lcmp" tables scope "${dc1[@]}")
# Every port of the tables has a 'port' line (here all on net_pcap1).
ports6=$(for p in 0 1 2 3 4 5; do printf 'port %s net_pcap1 02:00:00:00:01:0%s\n' "$p" "$p"; done)
small_state() { # small_state NAME BLOB: $work/NAME.conf starting with BLOB
  printf 'rx net_pcap0\n%s\nroute 10.0.7.0/24 8\ntrust %s\nscope %s\nstate %s\ntables %s\n' \
    "$ports6" "$work/pub.pem" "$scope_dc1" "$state" "$2" >"$work/$1.conf"
}
# A restart with an older or the same generation is refused, in one line.
small_state restart1 "$work/t1.signed"
small_state restart2 "$work/t2.signed"
rejects "^lcmp-fwd: $work/t1.signed: $refused_rollback$" "$work/restart1.conf"
rejects "^lcmp-fwd: $work/t2.signed: $refused_rollback$" "$work/restart2.conf"
# The stolen key's blob (k signs generation 1 000), the new key's (other:
# 4) and one of k's after its removal (5).
for g in 4 5 1000; do
  "$lcmp" tables --topology testbed8 --switch DC1 --generation "$g" -o "$work/t$g.bin" >/dev/null
done
"$lcmp" tables sign --key "$work/k.pem" "${dc1[@]}" "$work/t1000.bin" -o "$work/t1000.k" >/dev/null
"$lcmp" tables sign --key "$work/other.pem" "${dc1[@]}" "$work/t4.bin" -o "$work/t4.other" >/dev/null
"$lcmp" tables sign --key "$work/k.pem" "${dc1[@]}" "$work/t5.bin" -o "$work/t5.k" >/dev/null
# Rotation statements, signed with OpenSSL (docs/dpdk.md): k adds other,
# other removes k; one signed by the key being added (not trusted yet).
other_hex=$(openssl pkey -pubin -in "$work/other.pub.pem" -outform DER | tail -c 32 | xxd -p -c 64)
printf 'lcmp-fwd trust add %s\n' "$other_hex" >"$work/add.txt"
printf 'lcmp-fwd trust remove %s\n' "$kid" >"$work/remove.txt"
openssl pkeyutl -sign -inkey "$work/k.pem" -rawin -in "$work/add.txt" -out "$work/add.sig"
openssl pkeyutl -sign -inkey "$work/other.pem" -rawin -in "$work/add.txt" -out "$work/add.self.sig"
openssl pkeyutl -sign -inkey "$work/other.pem" -rawin -in "$work/remove.txt" -out "$work/remove.sig"
# Start on the stolen key's generation 1 000 (newer than k's floor 2), then
# rotate to the other key without a restart.
sed "s|^tables .*|tables $work/t1000.k|" "$work/state.conf" >"$work/rotate.conf"
cat >"$work/ctl-rotate" <<EOF2
install $work/t4.other
trust add $work/other.pub.pem $work/add.self.sig
trust add $work/other.pub.pem $work/add.sig
install $work/t4.other
trust remove $kid $work/add.sig
trust remove $kid $work/remove.sig
install $work/t4.other
install $work/t5.k
trust remove $oid $work/remove.sig
trust add $work/pub.pem $work/add.sig
EOF2
CONF=$work/rotate.conf run rotate 1 --control "$work/ctl-rotate"
expect "lcmp-fwd consumed the control file" test ! -e "$work/ctl-rotate"
expect_line "$work/rotate.stats" -F "generation 1000 published"
err=$work/rotate.err
# 1 and 4: generation 4 is refused while k (floor 1 000) is trusted, before
# and after the other key is added (the generation is checked before the
# key); 2: a statement not signed by a trusted key.
rollbacks=$(grep -cxE "lcmp-fwd: $work/t4.other: $refused_rollback" "$err" || true)
expect "t4.other refused twice as a rollback while k is trusted ($rollbacks)" test "$rollbacks" -eq 2
expect_line "$err" -xF "lcmp-fwd: control: line 2: trust add: the statement is not signed by a trusted key"
expect_line "$work/rotate.stats" -xF "trust: key id $oid added (2 trusted, floor 1000)"
# 5: a statement for another change (the add's) does not remove.
expect_line "$err" -xF "lcmp-fwd: control: line 5: trust remove: the statement is not signed by a trusted key"
expect_line "$work/rotate.stats" -xF "trust: key id $kid removed with its floor 1000 (1 trusted, floor 0)"
# 7: with k and its floor gone, the new key's generation 4 installs; 8: k's
# blobs are refused; 9: the last key stays; 10: a removed key never returns.
expect_line "$work/rotate.stats" -F "$work/t4.other generation 4 published"
expect_line "$err" -xF "lcmp-fwd: $work/t5.k: signed by a key that is not trusted (-41)"
expect_line "$err" -xF "lcmp-fwd: control: line 9: trust remove: the last trusted key: add its successor first"
expect_line "$err" -xF "lcmp-fwd: control: line 10: trust add: that key id was removed: it is never trusted again"
expect_line "$work/rotate.stats" -E "^exit: total: .* trust_changes=2 trust_refused=4$"
expect_line "$work/rotate.stats" -E "^exit: worker 0 .* generation=4$"
expect_line "$state" -xE "key $oid [0-9a-f]{64} 4"
expect_line "$state" -xF "revoked $kid"
expect "the state file trusts one key" test "$(grep -c '^key ' "$state")" -eq 1
echo "rotation: k (generation 1000) -> other (4) without a restart; state: $(grep -v '^#' "$state" | tr '\n' ' ')"

echo "--- bad command lines and configs: one line, status 1"
printf 'rx net_pcap0\n%s\nroute 10.0.7.0/24 8\ntables %s\n' "$ports6" "$work/t1.bin" >"$work/small.conf"
printf 'rx net_pcap0\nport 70 net_pcap1 02:00:00:00:01:00\n' >"$work/badport.conf"
printf 'rx net_pcap0\nport 0 net_pcap1 02:00:00:00:01\n' >"$work/badmac.conf"
printf 'rx net_pcap9\n' >"$work/baddev.conf"
printf 'rx net_pcap0\nroute 10.0.7.0/33 8\n' >"$work/badroute.conf"
printf 'rx net_pcap0\nport 0 net_pcap1 02:00:00:00:01:00\ntables %s\n' "$work/bad.bin" >"$work/badtables.conf"
rejects "^lcmp-fwd: error: $work/missing.conf: No such file or directory$" "$work/missing.conf"
rejects "^lcmp-fwd: error: $work/badport.conf:2: LCMP port must be 0\.\.63: 70$" "$work/badport.conf"
rejects "^lcmp-fwd: error: $work/badmac.conf:2: bad MAC address 02:00:00:00:01$" "$work/badmac.conf"
rejects "^lcmp-fwd: error: $work/baddev.conf:1: no DPDK port net_pcap9$" "$work/baddev.conf"
rejects "^lcmp-fwd: error: $work/badroute.conf:2: bad IPv4 prefix length: 10.0.7.0/33$" "$work/badroute.conf"
rejects "^lcmp-fwd: $work/bad.bin: table blob truncated \(-30\)$" "$work/badtables.conf"
printf 'rx net_pcap0\n%s\nroute 10.0.7.0/24 8\ntrust %s\nscope %s\ntables %s\n' \
  "$ports6" "$work/pub.pem" "$("$lcmp" tables scope "${dc1[@]}")" "$work/t1.bin" >"$work/unsigned.conf"
grep -v '^scope ' "$work/unsigned.conf" >"$work/noscope.conf"
rejects "^lcmp-fwd: error: $work/noscope.conf: 'trust' needs this switch's 'scope' line \(lcmp tables scope\)$" \
  "$work/noscope.conf"
printf 'rx net_pcap0\ntrust %s\n' "$work/k.pem" >"$work/badkey.conf"
rejects "^lcmp-fwd: $work/t1.bin: $refused_unsigned$" "$work/unsigned.conf"
rejects "^lcmp-fwd: error: $work/badkey.conf:2: $work/k.pem: not an Ed25519 public key \(PEM SubjectPublicKeyInfo\)$" \
  "$work/badkey.conf"
# Restarts with the state file: the config trusts k, the state file only
# the other key (k was removed), with its floor 4.
small_state restart-k "$work/t5.k"
small_state restart-old "$work/t4.other"
rejects "^lcmp-fwd: $work/t5.k: $refused_other$" "$work/restart-k.conf"
rejects "^lcmp-fwd: $work/t4.other: $refused_rollback$" "$work/restart-old.conf"
printf 'lcmp-fwd-state 1\nkey %s %s 4\n' "$oid" "$(printf 0%.0s {1..64})" >"$work/badstate"
small_state badstate "$work/t4.other"
sed -i "s|^state .*|state $work/badstate|" "$work/badstate.conf"
rejects "^lcmp-fwd: error: state $work/badstate:2: bad key line$" "$work/badstate.conf"
# The temporary state file is never followed through a symlink: the
# install is refused and the link's target untouched.
mkdir "$work/st2"
echo "victim" >"$work/victim"
ln -s "$work/victim" "$work/st2/fwd.state.tmp"
small_state tmplink "$work/t1.signed"
sed -i "s|^state .*|state $work/st2/fwd.state|" "$work/tmplink.conf"
rejects "^lcmp-fwd: $work/t1.signed: not installed: state $work/st2/fwd.state: Too many levels of symbolic links$" \
  "$work/tmplink.conf"
expect "the symlink's target is untouched" test "$(cat "$work/victim")" = victim
expect "no state file was written" test ! -e "$work/st2/fwd.state"
printf 'rx net_pcap0\nstate %s\n' "$state" >"$work/stateonly.conf"
rejects "^lcmp-fwd: error: $work/stateonly.conf: 'state' needs 'trust' \(it keeps the signed generations\)$" \
  "$work/stateonly.conf"
rejects "^lcmp-fwd: error: --flows: a power of two of at least 16, got 1000$" "$work/small.conf" --flows 1000
rejects "^lcmp-fwd: error: --workers: expected a number up to 16, got \"x\"$" "$work/small.conf" --workers x
rejects "^lcmp-fwd: error: --vlan: expected strip, keep or drop, got \"untag\"$" "$work/small.conf" --vlan untag
rejects "^lcmp-fwd: error: --worker-ring: a power of two from 64 to 1048576, got 1000$" "$work/small.conf" \
  --worker-ring 1000
rejects "^lcmp-fwd: error: 4 lcores needed \(main, 2 worker\(s\), dispatcher\), EAL gave 2: use -l or --lcores$" \
  "$work/small.conf" --workers 2
rejects "^lcmp-fwd: error: unknown option --bogus \(try --help\)$" "$work/small.conf" --bogus
rejects "^lcmp-fwd: error: --workers needs a value \(try --help\)$" "$work/small.conf" --workers
rejects "^lcmp-fwd: error: --mbuf-size: at least 128 bytes \(a frame's headers must be in its first segment\), got 8$" \
  "$work/small.conf" --mbuf-size 8
rejects "^lcmp-fwd: error: --mbufs: at least [0-9]+ for this run \(1 RX queue\(s\) of 1024 descriptors, 2 lcores' caches and bursts\), got 10$" \
  "$work/small.conf" --mbufs 10
# A device whose RX queues are all fed (net_pcap: one per rx_pcap) with
# more queues than --dispatch rss has workers: refused, not half-polled.
LCORES="0@$c0,1@$c1,2@$c0" rejects \
  "^lcmp-fwd: error: port 0 \(net_pcap0, net_pcap\): 1 RX queues, 2 worker\(s\) with --dispatch rss: .*$" \
  "$work/small.conf" --workers 2 --dispatch rss

echo "--- the config against its tables; blobs and lines refused in one line, file and line"
cfgc() { # cfgc NAME LINES...: $work/NAME.conf: rx, the six ports, the lines given
  { echo "rx net_pcap0"; echo "$ports6"; printf '%s\n' "${@:2}"; } >"$work/$1.conf"
}
cfgc nogroup "route 10.0.7.0/24 8" "route 10.0.9.0/24 99" "tables $work/t1.bin"
rejects "^lcmp-fwd: error: $work/nogroup.conf:9: route group 99 is not in the tables \($work/t1.bin\)$" \
  "$work/nogroup.conf"
cfgc noport "port 9 net_pcap1 02:00:00:00:01:09" "tables $work/t1.bin"
rejects "^lcmp-fwd: error: $work/noport.conf:8: LCMP port 9 is not in the tables \($work/t1.bin\)$" \
  "$work/noport.conf"
printf 'rx net_pcap0\nport 0 net_pcap1 02:00:00:00:01:00\ntables %s\n' "$work/t1.bin" >"$work/oneport.conf"
rejects "^lcmp-fwd: error: $work/oneport.conf:3: the tables \($work/t1.bin\) list LCMP port 1, which has no 'port' line$" \
  "$work/oneport.conf"
cfgc dupprefix "route 10.0.7.0/24 8" "route 10.0.7.0/24 7" "tables $work/t1.bin"
rejects "^lcmp-fwd: error: $work/dupprefix.conf:9: prefix 10.0.7.0/24 listed twice$" "$work/dupprefix.conf"
cfgc duptables "tables $work/t1.bin" "tables $work/t2.bin"
rejects "^lcmp-fwd: error: $work/duptables.conf:9: a second 'tables' line \(the first is line 8\)$" \
  "$work/duptables.conf"
printf 'rx net_pcap0\nport 0 net_pcap1 ff:ff:ff:ff:ff:ff\n' >"$work/bcast.conf"
rejects "^lcmp-fwd: error: $work/bcast.conf:2: next hop ff:ff:ff:ff:ff:ff is not a unicast MAC address$" \
  "$work/bcast.conf"
{ cat "$work/t1.bin"; head -c 70 /dev/zero; } >"$work/trail.bin"
cfgc trail "tables $work/trail.bin"
rejects "^lcmp-fwd: $work/trail.bin: 70 bytes after the blob's end \(a blob file is exactly what lcmp tables -o wrote\)$" \
  "$work/trail.conf"
cfgc signed-notrust "tables $work/t1.signed"
rejects "^lcmp-fwd: $work/t1.signed: a signed blob, and the config has no 'trust' line .*$" \
  "$work/signed-notrust.conf"
cfgc duptrust "trust $work/pub.pem" "trust $work/pub.pem" "scope $scope_dc1" "tables $work/t1.signed"
rejects "^lcmp-fwd: error: $work/duptrust.conf:9: $work/pub.pem: a second key with key id $kid$" \
  "$work/duptrust.conf"
{ echo "rx net_pcap0"; printf '# %05000d\n' 0; echo "bogus"; } >"$work/longline.conf"
rejects "^lcmp-fwd: error: $work/longline.conf:2: line longer than 4094 characters$" "$work/longline.conf"
{ echo "rx net_pcap0"; printf '# %04000d\n' 0; echo "bogus"; } >"$work/notlong.conf"
rejects "^lcmp-fwd: error: $work/notlong.conf:3: expected 'rx DEV', .*$" "$work/notlong.conf"

# Two instances on one --file-prefix: the second says so in one line.
# The first also has a port no line uses (net_pcap2): at its exit, no
# "already stopped" for it.
printf 'quit\n' >"$work/ctl-first.tmp"
timeout 60 "$fwd" --no-huge --no-pci -m 512 --lcores "0@$c0,1@$c1" --file-prefix "lcmp-test-$$" \
  --log-level=lib.eal:error --vdev "net_pcap0,rx_pcap=$work/in.pcap" \
  --vdev "net_pcap1,tx_pcap=$work/first1.pcap" --vdev "net_pcap2,tx_pcap=$work/first2.pcap" \
  -- -c "$work/small.conf" --control "$work/ctl-first" --stats-ms 0 >"$work/first.out" 2>"$work/first.err" &
first=$!
for _ in $(seq 300); do grep -q '^lcmp-fwd: tables shared' "$work/first.out" && break; sleep 0.1; done
expect_line "$work/first.out" -F "lcmp-fwd: tables shared"
status=0
timeout 60 "$fwd" --no-huge --no-pci -m 512 --lcores "0@$c0,1@$c1" --file-prefix "lcmp-test-$$" \
  --log-level=lib.eal:crit --vdev "net_pcap0,rx_pcap=$work/in.pcap" -- -c "$work/small.conf" \
  >"$work/second.out" 2>"$work/second.err" || status=$?
mv "$work/ctl-first.tmp" "$work/ctl-first"
wait "$first"
expect "the second instance exits with status 1 ($status)" test "$status" -eq 1
expect_line "$work/second.err" -xE "lcmp-fwd: error: EAL: another DPDK process \(pid [0-9]+\) runs with --file-prefix lcmp-test-$$: give each instance its own --file-prefix"
expect "no 'already stopped' at a normal exit" bash -c "! grep -q 'already stopped' '$work/first.err'"
echo "--- af_packet over veth pairs in network namespaces: real UDP and TCP"
status=0
frontends/dpdk/tests/netns.sh "$fwd" "$work" "$work/t1.bin" "$c0" "$c1" || status=$?
if [ "$status" -eq 2 ]; then
  echo "(skipped: this machine cannot create network namespaces or veth pairs)"
elif [ "$status" -ne 0 ]; then
  exit 1
fi
echo "lcmp-fwd: all pcap checks passed"
