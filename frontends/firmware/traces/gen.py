#!/usr/bin/env python3
"""Generates the replay traces in this directory (deterministic: fixed
seeds, no dependencies). Output is committed; rerun only to change a trace:

    python3 frontends/firmware/traces/gen.py

Format (lcmp_tables::replay, `lcmp replay`): one event a line,
`t_us,packet,src,dst,sport,dport,proto,dst_dc`, `t_us,sample,port,queue_bytes`,
`t_us,link,port,up|down`. The first comment line names the topology and the
switch, which build.rs and scripts/test.d/70-firmware.sh read.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
GB = 1_000_000_000


def write(name, topology, switch, about, events):
    events.sort(key=lambda e: (e[0], e[1]))
    path = os.path.join(HERE, name)
    with open(path, "w") as f:
        f.write(f"# topology={topology} switch={switch}\n")
        for line in about:
            f.write(f"# {line}\n")
        for t, _, text in events:
            f.write(f"{t},{text}\n")


def packets(rng, events, seq, flow, times, dst_dc):
    src, dst, sport = flow
    for t in times:
        events.append((t, seq[0], f"packet,{src},{dst},{sport},4791,17,{dst_dc}"))
        seq[0] += 1


def queue(events, seq, t, port, q):
    events.append((t, seq[0], f"sample,{port},{int(q)}"))
    seq[0] += 1


def steady():
    """testbed8, switch DC1 (ports 0..5 lead to DC2..DC7; DC8 has all six
    as candidates). Steady RoCE load with congestion that moves between
    ports, a flow-cache burst, and flows that come back after the 2 s idle
    timeout."""
    rng = random.Random(20260101)
    ev, seq = [], [0]
    # Queue samples every 10 ms on every port for 300 ms.
    for t in range(0, 300_001, 10_000):
        for port in range(6):
            q = 20_000 + rng.randrange(0, 50_000)
            if port == 4 and 60_000 <= t <= 150_000:  # DC6 (25G, 5 ms) fills
                q = min(4.6 * GB, (t - 50_000) * 50_000)
            if port == 2 and 120_000 <= t <= 220_000:  # DC4 (100G, 10 ms)
                q = min(3.5 * GB, (t - 110_000) * 40_000)
            if port == 0 and t >= 200_000:  # DC2 (200G) oscillates
                q = 2.0 * GB if (t // 20_000) % 2 else 0.4 * GB
            queue(ev, seq, t + port, port, q)
    flows = []
    for i in range(300):
        flow = (f"10.1.{i // 200}.{i % 200 + 1}", f"10.8.{rng.randrange(4)}.{rng.randrange(1, 17)}",
                rng.randrange(1024, 65535))
        flows.append(flow)
        start = rng.randrange(0, 280_000)
        times = sorted({start} | {start + rng.randrange(1, 20_000) for _ in range(rng.randrange(1, 5))})
        packets(rng, ev, seq, flow, times, 8)
    # Single-candidate groups DC2..DC7.
    for i in range(30):
        flow = (f"10.1.9.{i + 1}", f"10.{2 + i % 6}.0.1", 20_000 + i)
        t = rng.randrange(0, 290_000)
        packets(rng, ev, seq, flow, [t, t + 500], 2 + i % 6)
    # A burst of short flows at 250 ms: the 1024-slot flow cache fills and
    # some flows are routed unpinned.
    for i in range(1100):
        flow = (f"10.1.{100 + i // 250}.{i % 250 + 1}", "10.8.0.1", 30_000 + i)
        packets(rng, ev, seq, flow, [250_000 + i], 8)
    # After the idle timeout (2 s): a third of the flows come back, under new
    # congestion on DC7's port.
    for t in range(2_600_000, 2_700_001, 10_000):
        for port in range(6):
            q = 3.0 * GB if port == 5 else 30_000
            queue(ev, seq, t + port, port, q)
    for flow in flows[::3]:
        t = rng.randrange(2_610_000, 2_700_000)
        packets(rng, ev, seq, flow, [t, t + 100], 8)
    write("steady.csv", "testbed8", "DC1",
          ["Steady load with congestion changes (see gen.py)."], ev)


def failures():
    """bso13, switch DC3 (ports 0..5 lead to DC1, DC2, DC4, DC5, DC6, DC7).
    Flows to DC12, DC11, DC13 and DC1 while links fail and recover: pinned
    flows fail over, DC1 loses its only route for a while."""
    rng = random.Random(20260202)
    ev, seq = [], [0]
    for t in range(0, 400_001, 20_000):
        for port in range(6):
            q = 10_000 + rng.randrange(0, 100_000)
            if port == 5 and 100_000 <= t <= 300_000:
                q = 5.0 * GB * 0.9
            queue(ev, seq, t + port, port, q)
    for t, port, up in [(50_000, 4, False), (80_000, 3, False), (120_000, 0, False),
                        (160_000, 4, True), (200_000, 0, True), (200_000, 3, True),
                        (260_000, 1, False), (330_000, 1, True)]:
        ev.append((t, seq[0], f"link,{port},{'up' if up else 'down'}"))
        seq[0] += 1
    dsts = [12, 11, 13, 1]  # numeric ids (the C example parses numbers only)
    for i in range(240):
        dst_dc = dsts[i % 4]
        flow = (f"10.3.{i // 100}.{i % 100 + 1}", f"10.{dst_dc}.0.{rng.randrange(1, 17)}",
                rng.randrange(1024, 65535))
        start = rng.randrange(0, 200_000)
        times = sorted({start} | {start + rng.randrange(1, 200_000) for _ in range(rng.randrange(2, 7))})
        packets(rng, ev, seq, flow, times, dst_dc)
    write("failures.csv", "bso13", "DC3",
          ["Link failures and recoveries under load (see gen.py)."], ev)


if __name__ == "__main__":
    steady()
    failures()
