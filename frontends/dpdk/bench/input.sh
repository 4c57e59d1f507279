# The benchmarks' one input, sourced by vs-testpmd.sh and instructions.sh
# (docs/dpdk.md, "Benchmarks"), so that both measure the same thing.
#
#   bench_input TABLES FLOWS CPU0 CPU1
#
# Sets $work (a temporary directory, removed on exit) holding
# `pcaptest.py flows` ($work/flows.pcap: one 60-byte UDP frame per flow
# towards DC8) and lcmp-fwd's configuration ($work/fwd.conf: six LCMP
# ports on net_null0); $mbufs (the whole pcap held in mbufs), $mem (MB)
# and $eal, the EAL arguments both apps take: net_pcap replaying with
# infinite_rx=1 into net_null, lcores 0 and 1 pinned to CPU0 and CPU1.
#
# Memory: by default both apps run with --no-huge -m $mem (4 KiB pages;
# test and CI machines reserve no hugepages). LCMP_BENCH_HUGE=1 drops
# --no-huge and -m for both apps alike, so that EAL takes 2 MiB pages
# (lcmp-fwd's flow cache, rte_zmalloc_socket, and both apps' mbufs;
# --huge-unlink, so that no page file outlives a run).
# The user reserves the pages and mounts hugetlbfs beforehand, e.g.
#   echo 1024 >/proc/sys/vm/nr_hugepages
#   mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages
# and releases them afterwards (echo 0 >/proc/sys/vm/nr_hugepages);
# the scripts change no system setting.
bench_input() {
  local tables=$1 flows=$2 c0=$3 c1=$4 here p
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 "$here/../tests/pcaptest.py" flows "$work/flows.pcap" --flows "$flows" >/dev/null
  mbufs=$((flows + 16384))
  mem=$(((mbufs * 640 >> 20) + 512))
  {
    echo "rx net_pcap0"
    for p in 0 1 2 3 4 5; do echo "port $p net_null0 02:00:00:00:01:0$p"; done
    echo "route 10.0.7.0/24 8"
    echo "tables $tables"
  } >"$work/fwd.conf"
  # The frames are for net_pcap0's MAC (pcaptest.py's DST_MAC).
  local memargs=(--no-huge -m "$mem")
  if [ "${LCMP_BENCH_HUGE:-0}" = 1 ]; then memargs=(--huge-unlink); fi
  eal=("${memargs[@]}" --no-pci --lcores "0@$c0,1@$c1" --log-level=lib.eal:error
    --vdev "net_pcap0,rx_pcap=$work/flows.pcap,infinite_rx=1" --vdev net_null0)
}
