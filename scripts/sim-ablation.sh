#!/usr/bin/env bash
# The artifact ablation of docs/simulator.md ("Which mechanisms carry the
# tail"): `lcmp sim --preset artifact` with each of the artifact's mechanisms
# turned off in turn, then the paper regime with each LCMP mechanism turned
# on in turn. Prints one Markdown table; every row is one `lcmp sim` run of
# ECMP, UCMP and LCMP (mean ± sd over the seeds).
#
#   scripts/sim-ablation.sh                 # 30 % load, 5 seeds
#   LOAD=0.5 SEEDS=3 scripts/sim-ablation.sh
#
# Needs a release `lcmp` (cargo build --release -p lcmp-cli) and jq.
set -euo pipefail
cd "$(dirname "$0")/.."
lcmp=${LCMP:-target/release/lcmp}
load=${LOAD:-0.3}
seeds=${SEEDS:-5}
[ -x "$lcmp" ] || cargo build -q --release -p lcmp-cli
command -v jq >/dev/null || { echo "sim-ablation.sh needs jq" >&2; exit 1; }

# The artifact's queue thresholds without the 32-bit wrap: 5 GB * i / 10.
linear5g=0,500MB,1GB,1500MB,2GB,2500MB,3GB,3500MB,4GB,4500MB

row() {
  local name=$1
  shift
  "$lcmp" sim --load "$load" --seeds "$seeds" --schemes ecmp,ucmp,lcmp --json "$@" |
    jq -r --arg name "$name" '
      def pm(x): "\(x.mean * 100 | round / 100) ± \(x.sd * 100 | round / 100)";
      def s(n): .summary[] | select(.scheme == n);
      def share(l): [s("lcmp").links[] | select(.link == l) | .flow_share.mean * 100 | round][0] // 0;
      "| \($name) | \(pm(s("lcmp").p50)) | \(pm(s("lcmp").p99)) | \(s("ecmp").p50.mean * 100 | round / 100) / \(s("ecmp").p99.mean * 100 | round / 100) | \(s("ucmp").p50.mean * 100 | round / 100) / \(s("ucmp").p99.mean * 100 | round / 100) | \(share("DC1->DC3")) / \(share("DC1->DC5")) / \(share("DC1->DC6")) / \(share("DC1->DC7")) % |"'
}

echo "Load $load, $seeds seeds, testbed8 DC1 -> DC8. Flow shares: LCMP's flows via DC3 / DC5 / DC6 / DC7."
echo
echo "| run | lcmp p50 | lcmp p99 | ecmp p50 / p99 | ucmp p50 / p99 | via DC3/5/6/7 |"
echo "| --- | --- | --- | --- | --- | --- |"
a=(--preset artifact)
row "artifact preset (all on)" "${a[@]}"
row "- delay saturation 32 ms (shift 5)" "${a[@]}" --saturation 5
row "- S_cong 3 (the paper's)" "${a[@]}" --weights s_cong=3
row "- queue thresholds not wrapped (5 GB * i / 10)" "${a[@]}" --queue-thresholds "$linear5g"
row "- trend term on (w_tl = 1)" "${a[@]}" --weights w_tl=1
row "- sampling every 1 ms, not per decision" "${a[@]}" --sampling periodic
row "- flow keys: 5-tuple (no collisions)" "${a[@]}" --flow-id five-tuple
row "- DCI buffer: the topology's 5 GB" "${a[@]}" --buffer 5GB
row "- congestion term off (beta = 0, rm-beta)" "${a[@]}" --weights beta=0
row "- FCT without the ACK path" "${a[@]}" --ack-path none
row "- ideal FCT: one way at NIC rate" "${a[@]}" --ideal oneway
row "- arrival window 150 ms" "${a[@]}" --window 0.15
p=(--window 0.2)
row "paper regime, 200 ms window (all off)" "${p[@]}"
row "+ delay saturation 512 ms" "${p[@]}" --saturation 9
row "+ S_cong 2" "${p[@]}" --weights s_cong=2
row "+ both" "${p[@]}" --saturation 9 --weights s_cong=2
row "+ both, wrapped thresholds, no trend" "${p[@]}" --saturation 9 --weights s_cong=2,w_tl=0 --queue-thresholds wrap32:5GB
row "+ those, sampling per decision" "${p[@]}" --saturation 9 --weights s_cong=2,w_tl=0 --queue-thresholds wrap32:5GB --sampling decision
