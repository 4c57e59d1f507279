#!/usr/bin/env python3
"""The ECMP hash, independently of the Rust code.

MurmurHash3 x86_32, written from Austin Appleby's reference algorithm
(MurmurHash3.cpp, `MurmurHash3_x86_32`) and checked against its widely
republished test vectors, over the ECMP key bytes of docs/design.md
("ECMP hash"). Then checks, for LCMP_BINARY (the `lcmp` tool):

* the hash pinned in frontends/cli/tests/cli.rs (`const HASH`) is this
  hash of the flow in frontends/cli/tests/scenarios/idle.json (seed 0);
* `lcmp explain` reports this hash for every scenario file there, with the
  scenario's seed, and for IPv6 and seeded variants of idle.json.

usage: murmur3_ecmp.py LCMP_BINARY
"""

import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile

MASK = 0xFFFFFFFF
C1, C2 = 0xCC9E2D51, 0x1B873593


def rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & MASK


def fmix(h):
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK
    h ^= h >> 16
    return h


def mix_k(k):
    return (rotl((k * C1) & MASK, 15) * C2) & MASK


def murmur3_x86_32(data: bytes, seed: int) -> int:
    h = seed & MASK
    nblocks = len(data) // 4
    for i in range(nblocks):
        h ^= mix_k(int.from_bytes(data[4 * i:4 * i + 4], "little"))
        h = rotl(h, 13)
        h = (h * 5 + 0xE6546B64) & MASK
    tail = data[4 * nblocks:]
    if tail:
        h ^= mix_k(int.from_bytes(tail, "little"))
    h ^= len(data)
    return fmix(h)


# Published vectors (e.g. the SMHasher verification set as republished in
# "MurmurHash3 test vectors"): (input, seed, hash).
VECTORS = [
    (b"", 0, 0),
    (b"", 1, 0x514E28B7),
    (b"", 0xFFFFFFFF, 0x81F16F39),
    (b"\xff\xff\xff\xff", 0, 0x76293B50),
    (b"\x21\x43\x65\x87", 0, 0xF55B516B),
    (b"\x21\x43\x65\x87", 0x5082EDEE, 0x2362F9DE),
    (b"\x21\x43\x65", 0, 0x7E4A8634),
    (b"\x21\x43", 0, 0xA0F7B07A),
    (b"\x21", 0, 0x72661CF4),
    (b"\x00\x00\x00\x00", 0, 0x2362F9DE),
    (b"aaaa", 0x9747B28C, 0x5A97808A),
    (b"Hello, world!", 0x9747B28C, 0x24884CBA),
    (b"The quick brown fox jumps over the lazy dog", 0x9747B28C, 0x2FA826CD),
]


def ecmp_key(flow) -> bytes:
    """docs/design.md: IPv4 src, dst, sport | dport << 16 as little-endian
    u32 numeric values; IPv6 src, dst as little-endian u128, then the ports
    word. The protocol is not hashed."""
    src, dst = ipaddress.ip_address(flow["src"]), ipaddress.ip_address(flow["dst"])
    assert src.version == dst.version, flow
    width = 4 if src.version == 4 else 16
    ports = flow["sport"] | (flow["dport"] << 16)
    return int(src).to_bytes(width, "little") + int(dst).to_bytes(width, "little") + ports.to_bytes(4, "little")


def explain_hash(lcmp, scenario) -> int:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(scenario, f)
        path = f.name
    try:
        out = subprocess.run([lcmp, "explain", path], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    return json.loads(out)["hash"]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    lcmp = sys.argv[1]
    for data, seed, want in VECTORS:
        got = murmur3_x86_32(data, seed)
        assert got == want, f"murmur3({data!r}, {seed:#x}) = {got:#x}, want {want:#x}"

    here = os.path.dirname(os.path.abspath(__file__))
    tests = os.path.dirname(here)
    scenarios = os.path.join(tests, "scenarios")
    with open(os.path.join(tests, "cli.rs"), encoding="utf-8") as f:
        m = re.search(r"const HASH: u64 = ([0-9_]+);", f.read())
    assert m, "cli.rs has no `const HASH: u64 = N;`"
    pinned = int(m.group(1).replace("_", ""))
    with open(os.path.join(scenarios, "idle.json"), encoding="utf-8") as f:
        idle = json.load(f)
    assert idle.get("seed", 0) == 0
    ours = murmur3_x86_32(ecmp_key(idle["flow"]), 0)
    assert ours == pinned, f"cli.rs pins HASH = {pinned}, the reference gives {ours}"
    print(f"cli.rs HASH {pinned} == reference MurmurHash3 of idle.json's flow")

    cases = []
    for name in sorted(os.listdir(scenarios)):
        with open(os.path.join(scenarios, name), encoding="utf-8") as f:
            cases.append((name, json.load(f)))
    v6 = dict(idle, flow=dict(idle["flow"], src="fd00::1:0:0:1", dst="fd00:0:7::1"))
    for seed in (1, 0xDEADBEEF, 0xFFFFFFFF):
        cases.append((f"idle.json, seed {seed:#x}", dict(idle, seed=seed)))
        cases.append((f"idle.json, IPv6, seed {seed:#x}", dict(v6, seed=seed)))
    for label, scenario in cases:
        want = murmur3_x86_32(ecmp_key(scenario["flow"]), scenario.get("seed", 0))
        got = explain_hash(lcmp, scenario)
        assert got == want, f"{label}: lcmp explain hash {got}, the reference {want}"
    print(f"lcmp explain hash == reference MurmurHash3 for {len(cases)} scenarios")


if __name__ == "__main__":
    main()
