#!/usr/bin/env bash
# lcmp-fwd between two network namespaces over veth pairs (net_af_packet),
# with real UDP and TCP traffic (docs/dpdk.md, "af_packet over veth").
#
#   netns.sh LCMP-FWD WORKDIR TABLES CPU0 CPU1
#
#   ns1 (10.0.0.1) --veth-- nsf: in0 [lcmp-fwd] out0 --veth-- ns2 (10.0.7.1)
#     \______________________ r1 -- r2 (the return path) ______/
#
# ns1 reaches 10.0.7.0/24 through lcmp-fwd (a static neighbour: the
# gateway's MAC is in0's, lcmp-fwd does no ARP); ns2's replies come back
# over a direct veth (lcmp-fwd routes towards DC8 only: DC1's own prefix
# is no group of its tables). lcmp-fwd's namespace has no address and no
# forwarding, so only lcmp-fwd forwards. IPv6 is off (no ND, no router
# solicitations: every frame on the wire is the test's), and ns1's
# transmit checksum and segmentation offloads are off: af_packet hands
# lcmp-fwd the frame as the sender's stack left it, and a veth's partial
# checksum would reach ns2 unfinished (dropped there).
#
# The receiving vdev has two queue pairs (qpairs=2): the kernel's fanout
# spreads the flows over both, and the one worker polls both.
# Checked: the UDP datagrams all arrive, a TCP transfer of 4 MiB completes,
# and lcmp-fwd's counters equal what the namespaces counted: its rx the
# frames ns1 sent on eth0, its tx the frames ns2 received on eth0, its
# devices' own counters (ipackets, opackets) the same, and nothing dropped
# or missed; then ns2's end of the egress veth goes down, and lcmp-fwd
# sees out0's carrier go (its PMD keeps saying up). Prints one line of figures. Exit status 0, or 1 with a reason;
# 2 if network namespaces cannot be made here (the caller skips).
set -euo pipefail
fwd=$1 work=$2 tables=$3 c0=$4 c1=$5
tag=$$
ns1=lcmp1-$tag ns2=lcmp2-$tag nsf=lcmpf-$tag
fail() { echo "netns: $*"; exit 1; }
app=
cleanup() {
  if [ -n "$app" ]; then kill "$app" 2>/dev/null || true; wait "$app" 2>/dev/null || true; fi
  for ns in "$ns1" "$ns2" "$nsf"; do ip netns del "$ns" 2>/dev/null || true; done
}
trap cleanup EXIT
if ! ip netns add "$ns1" 2>/dev/null; then
  echo "netns: cannot create a network namespace here (ip netns add: needs CAP_SYS_ADMIN)"
  exit 2
fi
ip netns add "$ns2"
ip netns add "$nsf"
in1() { ip netns exec "$ns1" "$@"; }
in2() { ip netns exec "$ns2" "$@"; }
inf() { ip netns exec "$nsf" "$@"; }
for ns in "$ns1" "$ns2" "$nsf"; do
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
if ! ip link add in0 netns "$nsf" type veth peer name eth0 netns "$ns1" 2>/dev/null; then
  echo "netns: cannot create a veth pair here (ip link add type veth)"
  exit 2
fi
ip link add out0 netns "$nsf" type veth peer name eth0 netns "$ns2"
ip link add r1 netns "$ns1" type veth peer name r2 netns "$ns2"
for l in in0 out0 lo; do inf ip link set "$l" up; done
in1 ip addr add 10.0.0.1/24 dev eth0
in1 ip addr add 10.9.0.1/24 dev r1
in2 ip addr add 10.0.7.1/24 dev eth0
in2 ip addr add 10.9.0.2/24 dev r2
for l in eth0 r1 lo; do in1 ip link set "$l" up; done
for l in eth0 r2 lo; do in2 ip link set "$l" up; done
in1 ethtool -K eth0 tx off tso off gso off >/dev/null 2>&1 || true
in1 sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.r1.rp_filter=0 net.ipv4.conf.eth0.rp_filter=0
in_mac=$(inf cat /sys/class/net/in0/address)
out_peer_mac=$(in2 cat /sys/class/net/eth0/address)
in1 ip route add 10.0.7.0/24 via 10.0.0.254 dev eth0
in1 ip neigh replace 10.0.0.254 lladdr "$in_mac" nud permanent dev eth0
in2 ip route add 10.0.0.0/24 via 10.9.0.1 dev r2

# Every port of the tables leaves through out0 towards ns2's eth0.
{
  echo "rx net_af_packet0"
  for p in 0 1 2 3 4 5; do echo "port $p net_af_packet1 $out_peer_mac"; done
  echo "route 10.0.7.0/24 8"
  echo "tables $tables"
} >"$work/netns.conf"

inf timeout 60 "$fwd" --no-huge --no-pci -m 512 --lcores "0@$c0,1@$c1" --file-prefix "lcmp-netns-$tag" \
  --log-level=lib.eal:warning --vdev net_af_packet0,iface=in0,qpairs=2 --vdev net_af_packet1,iface=out0 \
  -- -c "$work/netns.conf" --stats-ms 0 --control "$work/netns.ctl" >"$work/netns.stats" 2>"$work/netns.err" &
app=$!
for _ in $(seq 200); do grep -q '^lcmp-fwd: tables shared' "$work/netns.stats" && break; sleep 0.1; done
grep -q '^lcmp-fwd: tables shared' "$work/netns.stats" || { cat "$work/netns.err"; fail "lcmp-fwd did not start"; }
tx1_0=$(in1 cat /sys/class/net/eth0/statistics/tx_packets)
rx2_0=$(in2 cat /sys/class/net/eth0/statistics/rx_packets)

# UDP: 16 flows of 50 datagrams, paced (af_packet's ring is finite).
in2 python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("10.0.7.1", 9000)); s.settimeout(3)
n = 0
try:
    while True:
        s.recv(2048); n += 1
except socket.timeout:
    pass
print(n)' >"$work/netns.udp" &
rcv=$!
sleep 0.5
in1 python3 -c '
import socket, time
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(16)]
for i in range(50):
    for s in socks:
        s.sendto(b"lcmp-fwd netns %d" % i, ("10.0.7.1", 9000))
    time.sleep(0.002)'
wait "$rcv"
udp=$(cat "$work/netns.udp")
[ "$udp" -eq 800 ] || fail "UDP: $udp of 800 datagrams arrived"

# TCP: 4 MiB over one connection, received to the end (EOF) and counted.
in2 python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.0.7.1", 9001)); s.listen(1); s.settimeout(30)
c, _ = s.accept(); c.settimeout(30); n = 0
while True:
    b = c.recv(65536)
    if not b:
        break
    n += len(b)
print(n)' >"$work/netns.tcp" &
srv=$!
sleep 0.5
in1 python3 -c '
import socket
s = socket.create_connection(("10.0.7.1", 9001), timeout=30)
s.sendall(bytes(4 << 20)); s.shutdown(socket.SHUT_WR); s.recv(1); s.close()' ||
  fail "TCP: the sender failed"
wait "$srv" || fail "TCP: the receiver failed"
tcp_bytes=$(cat "$work/netns.tcp")
[ "$tcp_bytes" -eq $((4 << 20)) ] || fail "TCP: $tcp_bytes of $((4 << 20)) bytes received"
retrans=$(in1 nstat -az TcpRetransSegs 2>/dev/null | awk '/TcpRetransSegs/ {print $2}')

sleep 0.5
tx1=$(( $(in1 cat /sys/class/net/eth0/statistics/tx_packets) - tx1_0 ))
rx2=$(( $(in2 cat /sys/class/net/eth0/statistics/rx_packets) - rx2_0 ))
# The carrier: ns2's end of out0 down, out0 says NO-CARRIER while the
# PMD still reports its link up; lcmp-fwd reads the carrier and takes
# every LCMP port on out0 down.
in2 ip link set eth0 down
for _ in $(seq 50); do grep -q '^link: LCMP port 5 (DPDK port 1) down$' "$work/netns.stats" && break; sleep 0.1; done
grep -q '^link: LCMP port 5 (DPDK port 1) down$' "$work/netns.stats" || fail "out0's lost carrier not seen"
printf 'quit\n' >"$work/netns.ctl.tmp"
mv "$work/netns.ctl.tmp" "$work/netns.ctl"
status=0
wait "$app" || status=$?
app=
[ "$status" -eq 0 ] || { cat "$work/netns.err"; fail "lcmp-fwd exited with status $status"; }
total=$(grep '^exit: total:' "$work/netns.stats")
re=' rx=([0-9]+) tx=([0-9]+) .* dropped=([0-9]+) '
[[ $total =~ $re ]] || fail "no totals in $work/netns.stats"
read -r rx tx dropped <<<"${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]}"
port_in=$(grep '^exit: port 0 (net_af_packet0):' "$work/netns.stats")
port_out=$(grep '^exit: port 1 (net_af_packet1):' "$work/netns.stats")
[ "$rx" -eq "$tx1" ] || fail "lcmp-fwd rx=$rx, ns1 sent $tx1 frames on eth0"
[ "$tx" -eq "$rx2" ] || fail "lcmp-fwd tx=$tx, ns2 received $rx2 frames on eth0"
[ "$dropped" -eq 0 ] || fail "lcmp-fwd dropped $dropped frames: $total"
[[ $port_in == *" ipackets=$rx imissed=0 ierrors=0 rx_nombuf=0 "*" kernel_rx_packets=$rx" ]] ||
  fail "$port_in (want ipackets=$rx, nothing missed, the kernel's count the same)"
[[ $port_out == *" opackets=$tx oerrors=0 "* ]] || fail "$port_out (want opackets=$tx, no error)"
echo "netns: UDP 800 of 800 datagrams, TCP $tcp_bytes bytes (${retrans:-?} segments retransmitted); lcmp-fwd rx=$rx (ns1 sent $tx1) tx=$tx (ns2 received $rx2) dropped=0"
