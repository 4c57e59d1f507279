#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The pcap replay test of lcmp-fwd (scripts/test.d/75-dpdk.sh), Python
standard library only.

  pcaptest.py gen DIR [--seed S] [--flows N] [--packets M]
      DIR/trace.csv  the packets, as an `lcmp replay` trace (CSV)
      DIR/in.pcap    the same packets as frames, in trace order (some
                     VLAN-tagged, TTLs from 2 to 255), with bad frames
                     (truncated, non-IP, unknown destination, and routable
                     ones a router must not route: broadcast, multicast,
                     another host's MAC, TTL 0 or 1) interleaved; every
                     good frame carries its trace index
      DIR/bad.json   how many bad frames of each kind, and the pcap
                     position of every trace packet
  pcaptest.py check --dir DIR --config CONFIG --stats STATS --replay OUT
                    [--replay2 OUT2 --switch-at N [--loose]] OUT.pcap...
      compares, packet by packet, the egress port of every frame (the
      LCMP port of the pcap it was written to: out-P-*.pcap) with the port
      `lcmp replay` decided for the same trace index, checks the next-hop
      MAC, per-flow order, the drop counters and that nothing was lost.
      With --replay2: tables replaced when the app had received N frames
      (--install-after N): flows first seen before frame N must keep the
      port of the first tables, later flows get the second tables' port;
      --loose (the --no-hold run): the switch point is not exact, so each
      flow must stay on one port, which either tables may have chosen.
      Every egressed frame must have its TTL (hop limit) one less than
      sent and a valid IPv4 header checksum, and its VLAN tags stripped
      (--vlan strip, the default), kept (keep) or not egress (drop);
      frames for another MAC, broadcast, multicast and expired ones must
      not egress (--promiscuous: those for another MAC must).

Exit status 0 when everything matches, 1 with one line per mismatch (at
most 20) otherwise.
"""
import argparse
import glob
import ipaddress
import json
import os
import random
import re
import struct
import sys

MAGIC = b"LCMPIDX"
# A frame a router must not route (another host's MAC, broadcast,
# multicast, an expired TTL): no trace index, this mark instead.
BAD_MAGIC = b"LCMPBAD"
SRC_MAC = bytes.fromhex("0200000000fe")
# The receiving port's MAC: net_pcap gives its vdevs 02:70:63:61:70:<n> in
# the order they are made, and the RX vdev is made first (75-dpdk.sh checks
# that lcmp-fwd reports this MAC for it).
DST_MAC = bytes.fromhex("027063617000")
OTHER_MAC = bytes.fromhex("0200000000ee")
BROADCAST = bytes.fromhex("ffffffffffff")
MULTICAST = (bytes.fromhex("01005e000001"), bytes.fromhex("333300000001"))


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def eth(ethertype, payload, dst=DST_MAC, tags=()):
    """A frame; tags: (TPID, VID) pairs, outermost first."""
    vlan = b"".join(struct.pack("!HH", tpid, vid) for tpid, vid in tags)
    return dst + SRC_MAC + vlan + struct.pack("!H", ethertype) + payload


def ttl_of(index):
    """The TTL (hop limit) trace packet `index` is sent with: every value
    from 2 to 255, so that the checksum update meets many words."""
    return 2 + index % 254


def ipv4(src, dst, proto, payload, ident=0, frag=0, total=None, ihl=5, version=4, ttl=64):
    options = b"\x01" * ((ihl - 5) * 4)  # NOPs
    length = 4 * ihl + len(payload) if total is None else total
    hdr = struct.pack("!BBHHHBBH4s4s", (version << 4) | ihl, 0, length, ident,
                      frag, ttl, proto, 0, src.packed, dst.packed) + options
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def ipv6(src, dst, nh, payload, plen=None, hl=64):
    length = len(payload) if plen is None else plen
    return struct.pack("!IHBB16s16s", 6 << 28, length, nh, hl, src.packed,
                       dst.packed) + payload


def l4(proto, sport, dport, body):
    if proto == 6:  # TCP, 20 bytes, no options
        return struct.pack("!HHIIBBHHH", sport, dport, 0, 0, 5 << 4, 0x10,
                           1024, 0, 0) + body
    return struct.pack("!HHHH", sport, dport, 8 + len(body), 0) + body


def tag(index):
    return MAGIC + struct.pack("!I", index) + b"\0" * 5


def addr(family, dc, host):
    if family == 4:
        return ipaddress.IPv4Address("10.0.%d.%d" % (dc - 1, host))
    return ipaddress.IPv6Address("fd00:0:0:%x::%x" % (dc - 1, host))


def gen(args):
    rng = random.Random(args.seed)
    os.makedirs(args.dir, exist_ok=True)
    flows = []
    for i in range(args.flows):
        family = 6 if rng.random() < 0.3 else 4
        r = rng.random()
        # Mostly towards DC8 (six candidates), some towards single-port
        # groups, a few towards DC1 itself (no group: no route).
        dc = 8 if r < 0.7 else (1 if r < 0.75 else rng.randint(2, 7))
        proto = 6 if rng.random() < 0.2 else 17
        flows.append({
            "family": family,
            "src": addr(family, 1, rng.randint(1, 250)),
            "dst": addr(family, dc, rng.randint(1, 250)),
            "sport": rng.randint(1024, 65535),
            "dport": 4791 if proto == 17 else rng.choice([80, 443, 5201]),
            "proto": proto,
            "dc": dc,
        })
    rows, frames, kinds = [], [], []
    bad = {"truncated": 0, "non_ip": 0, "unknown_dst": 0, "l2_multicast": 0, "other_mac": 0,
           "ttl_expired": 0}
    vlan = {}  # trace index -> VLAN tags

    def packet(f, frag=None):
        """Trace row and frame for one packet of flow f (frag: None, 'first'
        or 'later'); returns the trace index."""
        index = len(rows)
        t = index * 10
        later = frag == "later"
        sport, dport = (0, 0) if later else (f["sport"], f["dport"])
        rows.append("%d,packet,%s,%s,%d,%d,%d,%d" % (
            t, f["src"], f["dst"], sport, dport, f["proto"], f["dc"]))
        body = tag(index) + bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))
        ttl = ttl_of(index)
        # About 4 % with one 802.1Q tag, 1 % with two (802.1ad outside).
        r = rng.random()
        tags = (((0x8100, 1 + index % 4094),) if r < 0.04 else
                ((0x88A8, 100), (0x8100, 1 + index % 4094)) if r < 0.05 else ())
        if tags:
            vlan[index] = len(tags)
        if f["family"] == 4:
            if frag is None:
                ip = ipv4(f["src"], f["dst"], f["proto"], l4(f["proto"], sport, dport, body),
                          ident=index & 0xFFFF, ihl=5 if index % 7 else 7, ttl=ttl)
            elif frag == "first":
                ip = ipv4(f["src"], f["dst"], f["proto"], l4(f["proto"], sport, dport, body),
                          ident=index & 0xFFFF, frag=0x2000, ttl=ttl)
            else:
                ip = ipv4(f["src"], f["dst"], f["proto"], body, ident=index & 0xFFFF,
                          frag=185, ttl=ttl)
            frames.append(eth(0x0800, ip, tags=tags))
        else:
            if frag is None:
                ip = ipv6(f["src"], f["dst"], f["proto"], l4(f["proto"], sport, dport, body),
                          hl=ttl)
            else:
                off = 0 if frag == "first" else 185
                fh = struct.pack("!BBHI", f["proto"], 0, (off << 3) | (1 if frag == "first" else 0),
                                 index)
                payload = l4(f["proto"], sport, dport, body) if frag == "first" else body
                ip = ipv6(f["src"], f["dst"], 44, fh + payload, hl=ttl)
            frames.append(eth(0x86DD, ip, tags=tags))
        kinds.append(index)
        return index

    def routable(family, dst, ttl=64):
        """A packet with a route (a single-port group) and BAD_MAGIC."""
        body = l4(17, rng.randint(1024, 65535), 4791, BAD_MAGIC + b"\0" * 9)
        dc = rng.randint(2, 7)
        if family == 4:
            return eth(0x0800, ipv4(addr(4, 1, 9), addr(4, dc, 9), 17, body, ttl=ttl), dst=dst)
        return eth(0x86DD, ipv6(addr(6, 1, 9), addr(6, dc, 9), 17, body, hl=ttl), dst=dst)

    def bad_frame():
        k = rng.randrange(14)
        f = rng.choice(flows)
        family = rng.choice((4, 6))
        if k >= 9:
            # Routable, but not to be routed: broadcast, multicast (IPv4's
            # and IPv6's), another host's MAC, an expired TTL (0 or 1).
            if k == 9:
                frame, kind = routable(family, BROADCAST), "l2_multicast"
            elif k == 10:
                frame, kind = routable(family, MULTICAST[family == 6]), "l2_multicast"
            elif k == 11:
                frame, kind = routable(family, OTHER_MAC), "other_mac"
            else:
                frame, kind = routable(family, DST_MAC, ttl=k - 12), "ttl_expired"
            frames.append(frame)
            kinds.append(kind)
            bad[kind] += 1
            return
        v4 = ipv4(addr(4, 1, 1), addr(4, 8, 1), 17, l4(17, 1, 2, b"x" * 8))
        if k == 0:
            frame, kind = eth(0x0800, b"")[:10], "truncated"
        elif k == 1:  # total length beyond the frame
            frame, kind = eth(0x0800, v4[:30]), "truncated"
        elif k == 2:  # ports cut off
            frame, kind = eth(0x0800, ipv4(addr(4, 1, 1), addr(4, 8, 1), 17, b"")[:20]
                              + b"\x01\x02"), "truncated"
        elif k == 3:  # IPv6 header cut
            frame, kind = eth(0x86DD, ipv6(addr(6, 1, 1), addr(6, 8, 1), 17, b"")[:30]), "truncated"
        elif k == 4:  # IHL below 5
            frame, kind = eth(0x0800, bytes([0x44]) + v4[1:]), "truncated"
        elif k == 5:  # ARP
            frame, kind = eth(0x0806, bytes(28)), "non_ip"
        elif k == 6:  # IPv4 ethertype, version 6 inside
            frame, kind = eth(0x0800, bytes([0x65]) + v4[1:]), "non_ip"
        elif k == 7:
            frame, kind = eth(0x0800, ipv4(ipaddress.IPv4Address("10.0.0.9"),
                                           ipaddress.IPv4Address("192.168.1.1"), 17,
                                           l4(17, 5, 6, b"y" * 8))), "unknown_dst"
        else:
            frame, kind = eth(0x86DD, ipv6(ipaddress.IPv6Address("fd00::9"),
                                           ipaddress.IPv6Address("2001:db8::1"), 17,
                                           l4(17, 5, 6, b"z" * 8))), "unknown_dst"
        del f
        frames.append(frame)
        kinds.append(kind)
        bad[kind] += 1

    for _ in range(args.packets):
        r = rng.random()
        if r < 0.04:
            bad_frame()
            continue
        f = rng.choice(flows)
        if r < 0.08 and f["proto"] == 17:
            packet(f, "first")
            packet(f, "later")
        else:
            packet(f)
    positions = [i for i, k in enumerate(kinds) if isinstance(k, int)]
    with open(os.path.join(args.dir, "trace.csv"), "w") as out:
        out.write("# topology=testbed8 switch=DC1 (frontends/dpdk/tests/pcaptest.py, seed %d)\n"
                  % args.seed)
        out.write("\n".join(rows) + "\n")
    write_pcap(os.path.join(args.dir, "in.pcap"), frames)
    with open(os.path.join(args.dir, "bad.json"), "w") as out:
        json.dump({"bad": bad, "frames": len(frames), "positions": positions, "vlan": vlan}, out)
    print("generated %d frames: %d trace packets of %d flows (%d VLAN-tagged), bad frames %s"
          % (len(frames), len(rows), args.flows, len(vlan), bad))


def flows_pcap(args):
    """One 64-byte UDP frame per flow towards DC8 (10.0.7.0/24), in a
    random order: the benchmark's input (net_pcap infinite_rx=1)."""
    rng = random.Random(args.seed)
    order = list(range(args.flows))
    rng.shuffle(order)
    dst = ipaddress.IPv4Address("10.0.7.1")
    frames = []
    for i in order:
        src = ipaddress.IPv4Address(0x0A000000 | ((i * 0x9E3779B1) & 0xFFFFFF))
        sport = 1024 + (i >> 24) * 4096 + (i * 7919) % 4096
        udp = l4(17, sport & 0xFFFF, 4791, b"\0" * 18)
        frames.append(eth(0x0800, ipv4(src, dst, 17, udp)))
    write_pcap(args.out, frames)
    print("wrote %s: %d flows, one %d-byte frame each" % (args.out, args.flows, len(frames[0])))


def write_pcap(path, frames):
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, frame in enumerate(frames):
            out.write(struct.pack("<IIII", i // 100000, (i * 10) % 1000000,
                                  len(frame), len(frame)))
            out.write(frame)


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    out, off = [], 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        out.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return out


LINE = re.compile(r"^(\d+) t_us=\d+ flow=(\S+) dst_dc=\d+ (\w+) port=(\S+) reason=\S+$")


def read_replay(path):
    """index -> (flow, port or None)"""
    out = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if m:
                port = None if m.group(4) == "-" else int(m.group(4))
                out[int(m.group(1))] = (m.group(2), port)
    if not out:
        sys.exit("pcaptest: %s: no decision lines" % path)
    return out


def read_stats(path):
    total = None
    with open(path) as f:
        for line in f:
            if line.startswith("exit: total:"):
                total = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", line))
    if total is None:
        sys.exit("pcaptest: %s: no 'exit: total:' line (did the app exit cleanly?)" % path)
    return total


def read_macs(config):
    macs = {}
    with open(config) as f:
        for line in f:
            w = line.split("#")[0].split()
            if len(w) == 4 and w[0] == "port":
                macs[int(w[1])] = bytes.fromhex(w[3].replace(":", ""))
    return macs


def read_route_groups(config):
    """The route groups the config's 'route' lines name."""
    groups = set()
    with open(config) as f:
        for line in f:
            w = line.split("#")[0].split()
            if len(w) == 3 and w[0] == "route":
                groups.add(int(w[2]))
    return groups


def read_trace_dcs(directory):
    """trace index -> destination DC (the route group; lcmp replay's trace)."""
    with open(os.path.join(directory, "trace.csv")) as f:
        return [int(line.rsplit(",", 1)[1]) for line in f if line[0].isdigit()]


def check(args):
    with open(os.path.join(args.dir, "bad.json")) as f:
        meta = json.load(f)
    positions = meta["positions"]
    r1 = read_replay(args.replay)
    r2 = read_replay(args.replay2) if args.replay2 else None
    stats = read_stats(args.stats)
    macs = read_macs(args.config)
    errors = []

    def err(msg):
        errors.append(msg)

    vlan = {int(i): n for i, n in meta["vlan"].items()}
    if not vlan:
        err("the trace has no VLAN-tagged packet: the VLAN check could not fail")

    def check_headers(frame, index, port):
        """The frame as a router sends it: VLAN tags stripped or kept as
        --vlan says, TTL (hop limit) one less than sent, a valid IPv4
        header checksum."""
        tags = vlan.get(index, 0) if args.vlan == "keep" else 0
        off = 12 + 4 * tags
        etype = struct.unpack("!H", frame[off:off + 2])[0]
        ip = frame[off + 2:]
        want = ttl_of(index) - 1
        where = "trace packet %d on port %d" % (index, port)
        if etype == 0x0800 and len(ip) >= 20:
            ihl = 4 * (ip[0] & 15)
            if ip[8] != want:
                err("%s: TTL %d, sent with %d" % (where, ip[8], want + 1))
            if csum(ip[:ihl]) != 0:
                err("%s: bad IPv4 header checksum %04x" % (where, struct.unpack("!H", ip[10:12])[0]))
        elif etype == 0x86DD and len(ip) >= 40:
            if ip[7] != want:
                err("%s: hop limit %d, sent with %d" % (where, ip[7], want + 1))
        else:
            err("%s: EtherType %04x at offset %d (%d VLAN tags sent, --vlan %s)"
                % (where, etype, off, vlan.get(index, 0), args.vlan))

    # Where each frame went.
    seen = {}  # index -> LCMP port
    not_for_routing = 0  # BAD_MAGIC frames that egressed
    for path in args.pcaps:
        m = re.search(r"out-(\d+)(?:-[^/]*)?\.pcap$", path)
        if not m:
            sys.exit("pcaptest: %s: not named out-PORT[-...].pcap" % path)
        port = int(m.group(1))
        last = {}  # flow -> last index, per-flow order on this queue
        for frame in read_pcap(path):
            if frame.find(BAD_MAGIC) >= 0:
                not_for_routing += 1
                continue
            at = frame.find(MAGIC)
            if at < 0 or at + len(MAGIC) + 4 > len(frame):
                err("%s: a frame without a trace index" % path)
                continue
            index = struct.unpack("!I", frame[at + len(MAGIC):at + len(MAGIC) + 4])[0]
            if index in seen:
                err("trace packet %d egressed twice (ports %d, %d)" % (index, seen[index], port))
            seen[index] = port
            if frame[:6] != macs.get(port):
                err("trace packet %d on port %d: destination MAC %s, next hop %s"
                    % (index, port, frame[:6].hex(":"), (macs.get(port) or b"").hex(":")))
            check_headers(frame, index, port)
            flow = r1.get(index, ("?", None))[0]
            if flow in last and last[flow] > index:
                err("flow %s reordered on port %d: %d after %d" % (flow, port, index, last[flow]))
            last[flow] = index

    first = {}
    for index in sorted(r1):
        first.setdefault(r1[index][0], index)
    moved_flows = set()
    if r2 is not None:
        moved_flows = {flow for i, (flow, p) in r1.items() if r2[i][1] != p}
        if not moved_flows:
            err("the second tables decide every flow as the first do: the update test could not fail")
    expected_routed = 0
    dropped_tagged = 0
    for index, (flow, port) in sorted(r1.items()):
        if args.vlan == "drop" and index in vlan:
            dropped_tagged += 1
            if index in seen:
                err("trace packet %d has %d VLAN tags and egressed under --vlan drop"
                    % (index, vlan[index]))
            continue
        want = port
        if r2 is not None:
            before = positions[first[flow]] < args.switch_at
            if args.loose:
                choices = {r1[first[flow]][1], r2[first[flow]][1]}
                got = seen.get(index)
                if got is None and (None not in choices):
                    err("trace packet %d (flow %s) lost" % (index, flow))
                elif got not in choices:
                    err("trace packet %d (flow %s) on port %s, neither tables' choice %s"
                        % (index, flow, got, sorted(c for c in choices if c is not None)))
                fp = seen.get(first[flow])
                if got is not None and fp is not None and got != fp:
                    err("flow %s moved from port %d to %d at packet %d" % (flow, fp, got, index))
                expected_routed += got is not None
                continue
            want = port if before else r2[index][1]
        expected_routed += want is not None
        got = seen.get(index)
        if got != want:
            err("trace packet %d (flow %s): egress port %s, lcmp replay decides %s"
                % (index, flow, "none" if got is None else got, "none" if want is None else want))
    extra = set(seen) - set(r1)
    if extra:
        err("%d egressed frames with an index not in the trace" % len(extra))

    bad = dict(meta["bad"])
    bad["vlan_dropped"] = dropped_tagged
    # Trace packets towards a group the config has no route for (DC1's
    # own prefixes: its tables have no group 1) are unknown_dst to lcmp-fwd,
    # no route to lcmp replay.
    groups, dcs = read_route_groups(args.config), read_trace_dcs(args.dir)
    unrouted = sum(1 for i, (_, p) in r1.items() if p is None and dcs[i] not in groups
                   and not (args.vlan == "drop" and i in vlan))
    bad["unknown_dst"] += unrouted
    promiscuously_routed = 0
    if args.promiscuous:
        promiscuously_routed, bad["other_mac"] = bad["other_mac"], 0
    for k in bad:
        if stats.get(k) != bad[k]:
            err("counter %s=%s, the pcap has %d such frames" % (k, stats.get(k), bad[k]))
    if not_for_routing != promiscuously_routed:
        err("%d frames for another MAC, broadcast, multicast or with an expired TTL egressed "
            "(want %d: %s)" % (not_for_routing, promiscuously_routed,
                               "--promiscuous routes other MACs" if args.promiscuous
                               else "none is routed"))
    if stats.get("rx") != meta["frames"]:
        err("rx=%s, the pcap has %d frames" % (stats.get("rx"), meta["frames"]))
    no_route = len(r1) - expected_routed - dropped_tagged
    no_route -= unrouted
    if stats.get("no_route") != no_route:
        err("no_route=%s, lcmp replay has %d packets without a route" % (stats.get("no_route"), no_route))
    if (stats.get("tx") != len(seen) + not_for_routing or stats.get("tx_full")
            or stats.get("unmapped")):
        err("tx=%s tx_full=%s unmapped=%s, %d frames in the output pcaps"
            % (stats.get("tx"), stats.get("tx_full"), stats.get("unmapped"),
               len(seen) + not_for_routing))
    if stats.get("rx") != stats.get("tx", 0) + stats.get("dropped", 0):
        err("rx=%s != tx=%s + dropped=%s: packets lost" % (stats.get("rx"), stats.get("tx"), stats.get("dropped")))
    for e in errors[:20]:
        print("pcaptest: " + e)
    if errors:
        print("pcaptest: %d mismatches" % len(errors))
        return 1
    mode = "" if r2 is None else (" (update at frame %d%s; %d flows decided differently by the two tables)"
                                  % (args.switch_at, ", loose" if args.loose else "", len(moved_flows)))
    print("pcaptest: %d trace packets: every egress port as lcmp replay decides%s; %d routed, "
          "%d no route; bad frames dropped and counted %s"
          % (len(r1), mode, len(seen), no_route, bad))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("dir")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--flows", type=int, default=300)
    g.add_argument("--packets", type=int, default=3000)
    fp = sub.add_parser("flows")
    fp.add_argument("out")
    fp.add_argument("--flows", type=int, default=65536)
    fp.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("check")
    c.add_argument("--dir", required=True)
    c.add_argument("--config", required=True)
    c.add_argument("--stats", required=True)
    c.add_argument("--replay", required=True)
    c.add_argument("--replay2")
    c.add_argument("--switch-at", type=int, default=0)
    c.add_argument("--loose", action="store_true")
    c.add_argument("--vlan", choices=("strip", "keep", "drop"), default="strip")
    c.add_argument("--promiscuous", action="store_true")
    c.add_argument("pcaps", nargs="*")
    args = ap.parse_args()
    if args.cmd == "gen":
        gen(args)
        return 0
    if args.cmd == "flows":
        flows_pcap(args)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
