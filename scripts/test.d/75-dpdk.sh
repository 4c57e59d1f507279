#!/usr/bin/env bash
# The DPDK frontend (docs/dpdk.md): installs Debian's DPDK (22.11 LTS,
# libdpdk-dev, with the net_pcap/net_null/net_ring vdevs) if pkg-config
# does not find it.
set -euo pipefail
source scripts/lib.sh
if ! pkg-config --exists libdpdk 2>/dev/null; then
  ensure_apt pkg-config libdpdk-dev libpcap-dev
fi
pkg-config --exists libdpdk
echo "DPDK $(pkg-config --modversion libdpdk)"
