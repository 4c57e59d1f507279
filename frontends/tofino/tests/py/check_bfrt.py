"""Loads LCMP's table writes through the reimplementation of bfrt_python's
reader (bfrt_reader.py, after open-p4studio's bfrtcli.py / bfrtTable.py)
with tables described from DIR/lcmp.p4, and checks that the three outputs
install the same entries.

  check_bfrt.py load DIR
      DIR/lcmp_entries.json through `add_from_json` (one call per table
      list), DIR/lcmp_entries.py through the generated `add_with_*`
      methods, and DIR/lcmp_write_request_<n>.txtpb (P4Runtime, decoded
      with the p4runtime protobufs and written through the same table
      objects) must give the same, non-empty, entries, with no error.
  check_bfrt.py update OLD UPDATE NEW
      OLD/lcmp_entries.py then UPDATE/lcmp_update.py, and the same with
      the P4Runtime requests, must end with NEW's entries.
  check_bfrt.py agent IDLE TRACE NEW
      IDLE/lcmp_entries.py, then IDLE/lcmp_agent.py --dry-run's loop on
      TRACE (polls of usage_cells per dev_port, down ports, digests) with
      the core of $LCMP_CORE, writing through the reader's tables, must
      end with NEW's entries; every digest of the trace is handled, and a
      poll naming an unknown device port stops the core with an error.
  check_bfrt.py switch IDLE TRACE NEW
      lcmp_agent.py's `Switch` class (the one that runs on the switch)
      against a recording fake of bfrt_python (the reader's tables, the TM
      counter and port tables, the digest's learn object, batches): the
      calls and their order (deregister, register, read-back, batched
      phases each completed; every TM read from_hw=True), a start on empty
      tables, a restart with the idle load and a stale entry present (only
      the difference is written), a digest burst, and a write that fails
      (retried, then reported); must end with NEW's entries.
  check_bfrt.py selftest DIR
      The reader refuses what bfrt_python refuses: LPM and range keys as
      objects, an entry without `action`, a value wider than its field,
      another table's entry, an add of a present key.
"""

import copy
import io
import json
import re
import os
import py_compile
import sys
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")

sys.path.insert(0, str(Path(__file__).parent))
import bfrt_reader  # noqa: E402
import p4names  # noqa: E402


class CheckError(Exception):
    pass


def fresh(d):
    return bfrt_reader.make_bfrt(p4names.parse(Path(d) / "lcmp.p4"))


def node(bfrt, table_name):
    _, ctl, tbl = table_name.split(".")
    return getattr(getattr(bfrt.lcmp.pipe, ctl), tbl)


def load_json(d, doc=None):
    bfrt, tables = fresh(d)
    if doc is None:
        doc = json.loads((Path(d) / "lcmp_entries.json").read_text())
    out = io.StringIO()
    with redirect_stdout(out):
        for t in doc["tables"]:
            node(bfrt, t["table"]).add_from_json(json.dumps(t["entries"]))
    errors = [e for t in tables.values() for e in t.errors] + [
        line for line in out.getvalue().splitlines() if "rror" in line
    ]
    return tables, errors


def run_script(bfrt, path):
    with tempfile.TemporaryDirectory() as tmp:
        py_compile.compile(str(path), doraise=True, cfile=str(Path(tmp) / "script.pyc"))
    exec(compile(Path(path).read_text(), str(path), "exec"), {"bfrt": bfrt})


def p4runtime_requests(d, stem, info_dir=None):
    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2
    from p4.v1 import p4runtime_pb2

    info_path = Path(info_dir or d) / "lcmp.p4info.txtpb"
    info = text_format.Parse(info_path.read_text(), p4info_pb2.P4Info())
    files = sorted(Path(d).glob(stem + "_*.txtpb"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    if not files:
        raise CheckError(f"no {stem}_<n>.txtpb in {d}")
    reqs = [text_format.Parse(f.read_text(), p4runtime_pb2.WriteRequest()) for f in files]
    return info, reqs


def apply_p4runtime(tables, info, reqs, max_priority=1):
    """Writes P4Runtime updates through the bfrt table objects."""
    by_id = {t.preamble.id: t for t in info.tables}
    actions = {a.preamble.id: a for a in info.actions}
    n = 0
    for req in reqs:
        for u in req.updates:
            te = u.entity.table_entry
            t = by_id[te.table_id]
            # The P4Info names tables without the pipeline (bf-p4c's
            # --p4runtime-force-std-externs form); BF-Runtime with it.
            table = tables["pipe." + t.preamble.name]
            fields = {f.id: f.name for f in t.match_fields}
            key = {}
            for m in te.match:
                kind = m.WhichOneof("field_match_type")
                v = {
                    "exact": lambda: int.from_bytes(m.exact.value, "big"),
                    "lpm": lambda: [int.from_bytes(m.lpm.value, "big"), m.lpm.prefix_len],
                    "range": lambda: [
                        int.from_bytes(m.range.low, "big"),
                        int.from_bytes(m.range.high, "big"),
                    ],
                    "ternary": lambda: [
                        int.from_bytes(m.ternary.value, "big"),
                        int.from_bytes(m.ternary.mask, "big"),
                    ],
                }[kind]()
                key[fields[m.field_id]] = v
            if te.priority:
                key["$MATCH_PRIORITY"] = max_priority - te.priority
            action, data = None, {}
            if te.HasField("action"):
                a = actions[te.action.action.action_id]
                action = a.preamble.name.encode("ascii")
                names = {p.id: p.name for p in a.params}
                data = {
                    names[p.param_id]: int.from_bytes(p.value, "big")
                    for p in te.action.action.params
                }
            keys, parsed = table.parse_str_input("p4runtime", key, data, action)
            kind = p4runtime_pb2_update_type(u)
            if kind == "INSERT":
                table.add_entry(keys, parsed, action)
            elif kind == "MODIFY":
                table.mod_entry(keys, parsed, action)
            else:
                table.del_entry(keys)
            n += 1
    return n


def p4runtime_pb2_update_type(u):
    from p4.v1 import p4runtime_pb2

    return p4runtime_pb2.Update.Type.Name(u.type)


def check_load(d):
    from_json, errors = load_json(d)
    if errors:
        raise CheckError("add_from_json: " + "; ".join(errors[:5]))
    bfrt, from_script = fresh(d)
    run_script(bfrt, Path(d) / "lcmp_entries.py")
    info, reqs = p4runtime_requests(d, "lcmp_write_request")
    _, from_p4rt = fresh(d)
    apply_p4runtime(from_p4rt, info, reqs)
    a, b, c = (bfrt_reader.snapshot(x) for x in (from_json, from_script, from_p4rt))
    if not a:
        raise CheckError("no entries")
    if a != b:
        raise CheckError("BF-Runtime JSON and bfrt_python install different entries")
    if a != c:
        raise CheckError("BF-Runtime JSON and P4Runtime install different entries")
    print(f"bfrt ok: {len(a)} entries; add_from_json, bfrt_python and P4Runtime agree")


def check_update(old, update, new):
    want, errors = load_json(new)
    if errors:
        raise CheckError("add_from_json: " + "; ".join(errors[:5]))
    bfrt, tables = fresh(old)
    run_script(bfrt, Path(old) / "lcmp_entries.py")
    run_script(bfrt, Path(update) / "lcmp_update.py")
    if bfrt_reader.snapshot(tables) != bfrt_reader.snapshot(want):
        raise CheckError("bfrt_python: load + update differs from the new load")
    _, p4rt = fresh(old)
    info, reqs = p4runtime_requests(old, "lcmp_write_request")
    apply_p4runtime(p4rt, info, reqs)
    _, ureqs = p4runtime_requests(update, "lcmp_update_write_request", info_dir=old)
    n = apply_p4runtime(p4rt, info, ureqs)
    if bfrt_reader.snapshot(p4rt) != bfrt_reader.snapshot(want):
        raise CheckError("P4Runtime: load + update differs from the new load")
    print(f"bfrt update ok: {n} writes, bfrt_python and P4Runtime reach the new entries")


def load_agent(d):
    import importlib.util
    spec = importlib.util.spec_from_file_location("lcmp_agent", Path(d) / "lcmp_agent.py")
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    return agent


def check_agent(idle, trace, new):
    want, errors = load_json(new)
    if errors:
        raise CheckError("add_from_json: " + "; ".join(errors[:5]))
    bfrt, tables = fresh(idle)
    run_script(bfrt, Path(idle) / "lcmp_entries.py")
    agent = load_agent(idle)
    polls = json.loads(Path(trace).read_text())
    calls = io.StringIO()
    switch = agent.DryRun(polls, bfrt=bfrt, out=calls)
    digests = agent.DigestLog(out=io.StringIO())
    switch.on_digest(digests)
    core = agent.Core(os.environ["LCMP_CORE"], load=True)
    n = agent.run(switch, switch.polls(), core)
    if core.close() != 0:
        raise CheckError("the core failed")
    if bfrt_reader.snapshot(tables) != bfrt_reader.snapshot(want):
        raise CheckError("agent: load + polls differ from the new load")
    # The safe gap of the pin cells: written into both pin registers'
    # parameters, equal, and at most the idle timeout (PIN_IDLE).
    gaps = bfrt_reader.params(tables)
    pin_idle = int(re.search(r"PIN_IDLE = 32w(\d+)", (Path(idle) / "lcmp.p4").read_text()).group(1))
    if sorted(gaps) != ["pipe.LcmpIngress.pin0_gap", "pipe.LcmpIngress.pin1_gap"] \
            or len(set(gaps.values())) != 1 or not 0 <= min(gaps.values()) <= pin_idle:
        raise CheckError(f"agent: pin gaps {gaps}, idle timeout {pin_idle}")
    spec = (("CIR_PPS", agent.DIGEST_RATE_PPS), ("PIR_PPS", agent.DIGEST_RATE_PPS),
            ("CBS_PKTS", agent.DIGEST_BURST), ("PBS_PKTS", agent.DIGEST_BURST))
    if bfrt_reader.meters(tables) != {"pipe.LcmpIngress.digest_meter": {(0,): ("$METER", spec)}}:
        raise CheckError(f"agent: digest meter {bfrt_reader.meters(tables)}")

    if n == 0 or calls.getvalue().count("bfrt.lcmp.pipe.") != n:
        raise CheckError(f"{n} writes, printed {calls.getvalue().count('bfrt.lcmp.pipe.')}")
    sent = sum(len(p.get("digests", [])) for p in polls)
    if sum(digests.per_group.values()) != sent or sent == 0:
        raise CheckError(f"digests: {digests.per_group} of {sent}")
    if digests.received != sent or digests.malformed != 0:
        raise CheckError(f"agent: {digests.received} digests received of {sent}")
    # A poll of a port that is no LCMP port: the core stops with an error.
    import subprocess
    core = agent.Core(os.environ["LCMP_CORE"], stderr=subprocess.DEVNULL)
    try:
        core.plan({"t_us": 1, "usage_cells": {"511": 1}, "down": []})
        raise CheckError("the core accepted an unknown device port")
    except RuntimeError:
        pass
    if core.close() == 0:
        raise CheckError("the core exited 0 after a bad poll")
    print(f"agent ok: {len(polls)} polls, {n} writes, {sent} digests; "
          "the dry run reaches the new entries")


class Recorder:
    """A recording fake of bfrt_python around the reader's tables: every
    call on the program's tables, the TM counter table, the port table,
    the digest's learn object and the session (batches, completion) is
    appended to `calls` as (path, method, kwargs)."""

    def __init__(self, bfrt, tables, agent, cells=None, down=()):
        self.calls = []
        self.tables = tables
        self.fail = {}  # (table path, method) -> failures left
        rec = self
        self.callbacks = []

        class Wrap:
            def __init__(self, path, target):
                self._path, self._target = path, target

            def __getattr__(self, attr):
                v = getattr(self._target, attr)
                if callable(v):
                    def call(*a, **kw):
                        rec.calls.append((self._path, attr, kw))
                        left = rec.fail.get((self._path, attr), 0)
                        if left:
                            rec.fail[(self._path, attr)] = left - 1
                            raise Exception("injected failure")
                        return v(*a, **kw)
                    return call
                return Wrap(self._path + "." + attr, v)

        class Entry:
            def __init__(self, data):
                self.data = data

        class Tm:
            def get(self, dev_port=None, from_hw=False, print_ents=True):
                return Entry({b"usage_cells": (cells or {}).get(dev_port, 0)})

        class Port:
            def get(self, DEV_PORT=None, print_ents=True):
                return Entry({b"$PORT_UP": DEV_PORT not in down})

        class Learn:
            def callback_register(self, cb):
                rec.callbacks.append(cb)

            def callback_deregister(self):
                if not rec.callbacks:
                    raise Exception("no callback registered")
                rec.callbacks.clear()

        class Session:
            def batch_begin(self):
                pass

            def batch_end(self):
                pass

            def complete_operations(self):
                pass

        tm = Tm()
        tm_node = bfrt_reader.Node("tm", {})
        path = agent.TM_TABLE.split(".")
        tree = {path[-1]: tm}
        for part in reversed(path[:-1]):
            tree = {part: bfrt_reader.Node(part, tree)}
        del tm_node
        ctl, digest = agent.DIGEST.split(".")
        pipe = bfrt.lcmp.pipe
        controls = dict(pipe._children)
        controls[ctl] = bfrt_reader.Node(ctl, dict(getattr(controls.get(ctl), "_children", {}),
                                                   **{digest: Learn()}))
        program = bfrt_reader.Node("lcmp", {"pipe": bfrt_reader.Node("pipe", controls)})
        root = dict(tree, port=bfrt_reader.Node("port", {"port": Port()}), lcmp=program)
        session = Session()
        for m in ("batch_begin", "batch_end", "complete_operations"):
            root[m] = getattr(session, m)
        self.bfrt = Wrap("bfrt", bfrt_reader.Node("bfrt", root))


def check_switch(idle, trace, new):
    want, errors = load_json(new)
    if errors:
        raise CheckError("add_from_json: " + "; ".join(errors[:5]))
    agent = load_agent(idle)
    polls = json.loads(Path(trace).read_text())
    core_cmd = os.environ["LCMP_CORE"]

    def start(bfrt, tables, polls_, cells=None, down=()):
        rec = Recorder(bfrt, tables, agent, cells, down)
        switch = agent.Switch(rec.bfrt, out=io.StringIO())
        digests = agent.DigestLog(out=io.StringIO())
        switch.on_digest(digests)
        core = agent.Core(core_cmd, load=True)
        n = agent.run(switch, polls_, core)
        if core.close() != 0:
            raise CheckError("the core failed")
        return rec, switch, digests, n

    def writes(rec):
        return [c for c in rec.calls if c[0].startswith("bfrt.lcmp.pipe.Lcmp")
                and c[1] not in ("dump", "callback_register", "callback_deregister")]

    # 1. Empty tables: the agent loads them, then follows the polls.
    bfrt, tables = fresh(idle)
    trace_polls = [{k: p[k] for k in ("t_us", "usage_cells", "down") if k in p} for p in polls]
    rec, switch, digests, n_empty = start(bfrt, tables, iter(trace_polls))
    n = n_empty
    if bfrt_reader.snapshot(tables) != bfrt_reader.snapshot(want):
        raise CheckError("switch: empty tables + polls differ from the new load")
    methods = [c[1] for c in rec.calls]
    if methods[:3] != ["callback_deregister", "callback_register", "dump"] or rec.callbacks == []:
        raise CheckError(f"switch: starts with {methods[:3]}")
    if len(writes(rec)) != n or n == 0:
        raise CheckError(f"switch: {n} writes, {len(writes(rec))} recorded")
    # Every phase is one batch, completed after it ends.
    i = methods.index("batch_begin")
    seq = [m for m in methods[i:] if m in ("batch_begin", "batch_end", "complete_operations")]
    if seq != ["batch_begin", "batch_end", "complete_operations"] * (len(seq) // 3) or not seq:
        raise CheckError(f"switch: batches {seq[:6]}")
    for c in rec.calls:
        if c[1].startswith(("add_with_", "mod_with_", "delete")):
            before = methods[:rec.calls.index(c)]
            if before.count("batch_begin") != before.count("batch_end") + 1:
                raise CheckError(f"switch: write outside a batch: {c}")

    # 2. The poll reads every TM counter from the hardware.
    bfrt2, tables2 = fresh(idle)
    rec2 = Recorder(bfrt2, tables2, agent, cells={4: 7}, down=(5,))
    sw2 = agent.Switch(rec2.bfrt, out=io.StringIO())
    poll = sw2.poll(5)
    if poll["usage_cells"].get("4") != 7 or poll["down"] != [5]:
        raise CheckError(f"switch: poll {poll}")
    # The counters: every listed cell read from the hardware, the non-zero
    # ones reported by name.
    tables2["pipe.LcmpIngress.lcmp_exceptions"].cells = {1: (3, 192), 4: (2, 128)}
    tables2["pipe.LcmpIngress.lcmp_pin_events"].cells = {0: (5, 500), 1: (100, 10000)}
    tables2["pipe.LcmpEgress.lcmp_port_tx"].cells = {4: (105, 10500)}
    rec2.calls.clear()
    line = agent.report(sw2.counters())
    for want in ("not forwarded: not_ip 3 pkts 192 B, ttl_expired 2 pkts 128 B",
                 "pins: new pin 5 pkts 500 B, pin hit 100 pkts 10000 B",
                 "tx: port 4 105 pkts 10500 B"):
        if want not in line:
            raise CheckError(f"switch: counters line {line!r} lacks {want!r}")
    reads = [c for c in rec2.calls if c[1] == "get"]
    cells = sum(len(v[1]) for v in agent.COUNTERS.values())
    if len(reads) != cells or not all(c[2].get("from_hw") for c in reads):
        raise CheckError(f"switch: counter reads {reads[:3]} ({len(reads)} of {cells})")

    # 3. A restart on tables that hold the idle load, plus a stale entry
    # and a changed one: only the differences are written, and the digest
    # callback is deregistered before it is registered again.
    bfrt, tables = fresh(idle)
    run_script(bfrt, Path(idle) / "lcmp_entries.py")
    bfrt.lcmp.pipe.LcmpIngress.lcmp_select.mod_with_set_port(group=8, bucket=0, port=511)
    bfrt.lcmp.pipe.LcmpIngress.lcmp_route.add_with_route(dst_addr=0x0B000000, dst_addr_p_length=8, port=3)
    rec, switch, digests, n = start(bfrt, tables, iter([]))
    first = [c[1] for c in writes(rec)]
    if sorted(first) != ["delete", "mod", "mod_with_set_port"]:  # mod: the digest meter
        raise CheckError(f"switch: restart wrote {first}")
    idle_want, _ = load_json(idle)
    if bfrt_reader.snapshot(tables) != bfrt_reader.snapshot(idle_want):
        raise CheckError("switch: the restart did not reach the idle load")
    rec.calls.clear()
    switch.on_digest(digests)
    if [c[1] for c in rec.calls] != ["callback_deregister", "callback_register"] \
            or len(rec.callbacks) != 1:
        raise CheckError(f"switch: re-registering: {rec.calls}")

    # 4. A digest burst through the registered callback: every message
    # counted, malformed ones too.
    msg = polls[0]["digests"][0]
    burst = [{k.encode(): v for k, v in msg.items()} for _ in range(5000)] + [{b"group": 1}]
    rec.callbacks[0](0, 0, 0, 0, None, burst)
    if sum(digests.per_group.values()) != 5000:
        raise CheckError(f"switch: digest burst counted {digests.per_group}")

    # 5. A write that fails twice is retried and succeeds; one that fails
    # every time is reported and stops the plan.
    bfrt, tables = fresh(idle)
    rec = Recorder(bfrt, tables, agent)
    switch = agent.Switch(rec.bfrt, out=io.StringIO())
    op = {"table": "LcmpIngress.lcmp_port_alive", "method": "add_with_port_up", "args": {"port": 4}}
    rec.fail[("bfrt.lcmp.pipe.LcmpIngress.lcmp_port_alive", "add_with_port_up")] = 2
    switch.write(op)
    if switch.retried != 2 or switch.failed != 0:
        raise CheckError(f"switch: retried {switch.retried}, failed {switch.failed}")
    op = dict(op, args={"port": 5})
    rec.fail[("bfrt.lcmp.pipe.LcmpIngress.lcmp_port_alive", "add_with_port_up")] = agent.RETRIES
    try:
        agent.apply(switch, {"phases": [{"what": "x", "ops": [op]}]})
        raise CheckError("switch: a failing write was not reported")
    except agent.WriteError:
        pass
    if switch.failed != 1 or "failed 3 times" not in switch.out.getvalue():
        raise CheckError(f"switch: failure not reported: {switch.out.getvalue()!r}")
    # 6. The period the loop holds against the fake: 200 polls, each read
    # from the fake's TM and port tables, planned by the core and applied,
    # alternating between the idle state and the trace's (so every poll
    # writes).
    import time
    bfrt, tables = fresh(idle)
    rec = Recorder(bfrt, tables, agent, cells={4: 0})
    switch = agent.Switch(rec.bfrt, out=io.StringIO())
    core = agent.Core(core_cmd, load=True)
    t_us = [0]

    def timed():
        for i in range(200):
            t_us[0] += 10_000
            p = switch.poll(t_us[0])
            if i % 2:
                p = dict(trace_polls[1], t_us=t_us[0])
            yield p
    t0 = time.monotonic()
    writes_200 = agent.run(switch, timed(), core)
    per_poll_ms = (time.monotonic() - t0) * 1000 / 200
    core.close()
    reports = switch.out.getvalue().count("lcmp_agent: not forwarded: none; pins:")
    every = max(1, round(agent.REPORT_S / agent.PERIOD_S))
    if reports != 200 // every:
        raise CheckError(f"switch: {reports} counter reports in 200 polls, every {every}")
    print(f"switch ok: {n_empty} writes from empty tables, restart wrote {first}, "
          "5000-digest burst counted, retries and failures reported, counters read and printed; "
          f"200 polls with {writes_200} writes: {per_poll_ms:.2f} ms a poll against the fake")


def check_selftest(d):
    doc = json.loads((Path(d) / "lcmp_entries.json").read_text())
    _, errors = load_json(d, doc)
    if errors:
        raise CheckError("the unmodified document fails: " + "; ".join(errors[:3]))

    def first_with(pred):
        for t in doc["tables"]:
            for e in t["entries"]:
                if pred(e):
                    return t, e
        raise CheckError("no entry to corrupt")

    cases = {}
    bad = copy.deepcopy(doc)
    t, e = first_with(lambda e: isinstance(e["key"].get("dst_addr"), list))
    i = doc["tables"].index(t)
    j = t["entries"].index(e)
    v, plen = e["key"]["dst_addr"]
    bad["tables"][i]["entries"][j]["key"]["dst_addr"] = {"value": v, "prefix_len": plen}
    cases["LPM key as an object"] = bad
    bad = copy.deepcopy(doc)
    t, e = first_with(lambda e: isinstance(e["key"].get("hash_hi"), list))
    i, j = doc["tables"].index(t), t["entries"].index(e)
    low, high = e["key"]["hash_hi"]
    bad["tables"][i]["entries"][j]["key"]["hash_hi"] = {"low": low, "high": high}
    cases["range key as an object"] = bad
    bad = copy.deepcopy(doc)
    del bad["tables"][0]["entries"][0]["action"]
    cases["entry without action"] = bad
    bad = copy.deepcopy(doc)
    t, e = first_with(lambda e: "port" in e["data"])
    i, j = doc["tables"].index(t), t["entries"].index(e)
    bad["tables"][i]["entries"][j]["data"]["port"] = 512
    cases["9-bit port of 512"] = bad
    bad = copy.deepcopy(doc)
    bad["tables"][0]["entries"].append(bad["tables"][1]["entries"][0])
    cases["another table's entry"] = bad
    bad = copy.deepcopy(doc)
    bad["tables"][0]["entries"].append(bad["tables"][0]["entries"][0])
    cases["an add of a present key"] = bad
    for what, case in cases.items():
        _, errors = load_json(d, case)
        if not errors:
            raise CheckError(f"the reader accepted {what}")
    print(f"bfrt selftest ok: {len(cases)} malformed documents refused")


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    try:
        {"load": check_load, "update": check_update, "agent": check_agent,
         "switch": check_switch, "selftest": check_selftest}[mode](*args)
    except (CheckError, bfrt_reader.BfRtTableError, OSError, AttributeError, KeyError,
            TypeError) as e:
        print(f"FAIL: {type(e).__name__}: {e}")
        sys.exit(1)
