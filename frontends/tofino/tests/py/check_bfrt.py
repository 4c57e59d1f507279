"""Replays DIR/lcmp_entries.py (bfrt_python) and DIR/lcmp_entries.json
(BF-Runtime JSON, `add_from_json` form) against a mock of the `bfrt` object
whose tables, keys, actions, parameters and registers are the ones declared
in DIR/lcmp.p4, and checks that both files install the same entries.

Usage: python check_bfrt.py DIR"""

import json
import py_compile
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import p4names  # noqa: E402


class MockError(Exception):
    pass


def _int(v, what):
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise MockError(f"{what}: {v!r} is not a non-negative integer")
    return v


class Table:
    def __init__(self, control, name, decl, actions):
        self.control, self.name, self.decl, self.actions = control, name, decl, actions
        self.kinds = {}
        self.entries = []

    def set_kinds(self, kinds):
        self.kinds = kinds

    def clear(self):
        self.entries = []

    def _key(self, kw):
        key = {}
        needs_prio = any(k in ("range", "ternary") for k in self.kinds.values())
        for name, kind in self.kinds.items():
            if kind == "exact":
                key[name] = _int(kw.pop(name), name)
            elif kind == "lpm":
                key[name] = (_int(kw.pop(name), name), _int(kw.pop(name + "_p_length"), name))
            elif kind == "range":
                key[name] = (_int(kw.pop(name + "_start"), name), _int(kw.pop(name + "_end"), name))
                if key[name][0] > key[name][1]:
                    raise MockError(f"{self.name}.{name}: empty range")
            elif kind == "ternary":
                key[name] = (_int(kw.pop(name), name), _int(kw.pop(name + "_mask"), name))
            else:
                raise MockError(f"{self.name}: key kind {kind}")
        if needs_prio:
            key["$MATCH_PRIORITY"] = _int(kw.pop("MATCH_PRIORITY"), "MATCH_PRIORITY")
        return key

    def _data(self, action, kw):
        if action not in self.decl["actions"]:
            raise MockError(f"{self.name}: action {action} not allowed")
        params = self.actions[action]
        if set(kw) != set(params):
            raise MockError(f"{self.name}.{action}: params {sorted(kw)} != {sorted(params)}")
        for p, v in kw.items():
            if _int(v, p) >= 1 << params[p]:
                raise MockError(f"{self.name}.{action}.{p}: {v} wider than {params[p]} bits")
        return dict(kw)

    def _add(self, action, kw):
        kw = dict(kw)
        try:
            key = self._key(kw)
        except KeyError as e:
            raise MockError(f"{self.name}: missing key argument {e}") from None
        data = self._data(action, kw)
        if len(self.entries) >= self.decl["size"]:
            raise MockError(f"{self.name}: more than size = {self.decl['size']} entries")
        entry = (self.name, action, tuple(sorted(key.items())), tuple(sorted(data.items())))
        if any(e[:3] == entry[:3] for e in self.entries):
            raise MockError(f"{self.name}: duplicate key {key}")
        self.entries.append(entry)

    def __getattr__(self, attr):
        m = re.fullmatch(r"add_with_(\w+)", attr)
        if m is None:
            raise AttributeError(f"{self.name} has no attribute {attr}")
        return lambda **kw: self._add(m.group(1), kw)

    def add_from_json(self, text):
        for e in json.loads(text):
            if e["table_name"] != f"pipe.{self.control}.{self.name}":
                raise MockError(f"{self.name}: entry for {e['table_name']}")
            ctl, action = e["action"].split(".")
            if ctl != self.control:
                raise MockError(f"{self.name}: action of control {ctl}")
            kw = {}
            for k, v in e["key"].items():
                if k == "$MATCH_PRIORITY":
                    kw["MATCH_PRIORITY"] = v
                elif isinstance(v, int):
                    kw[k] = v
                elif "prefix_len" in v:
                    kw[k], kw[k + "_p_length"] = v["value"], v["prefix_len"]
                elif "low" in v:
                    kw[k + "_start"], kw[k + "_end"] = v["low"], v["high"]
                elif "mask" in v:
                    kw[k], kw[k + "_mask"] = v["value"], v["mask"]
                else:
                    raise MockError(f"{self.name}.{k}: unknown key form {v}")
            kw.update(e["data"])
            self._add(action, kw)


class Register:
    def __init__(self, control, name, decl):
        self.control, self.name, self.decl = control, name, decl
        m = re.fullmatch(r"bit<(\d+)>", decl["type"])
        self.bits = int(m.group(1)) if m else None
        self.cells = {}

    def clear(self):
        self.cells = {}

    def mod(self, REGISTER_INDEX, f1):  # noqa: N803 (bfrt_python's names)
        _int(REGISTER_INDEX, "REGISTER_INDEX")
        if REGISTER_INDEX >= self.decl["size"]:
            raise MockError(f"{self.name}[{REGISTER_INDEX}] beyond size {self.decl['size']}")
        if self.bits is None or _int(f1, "f1") >= 1 << self.bits:
            raise MockError(f"{self.name}: {f1} does not fit {self.decl['type']}")
        self.cells[REGISTER_INDEX] = f1

    def add_from_json(self, text):
        for e in json.loads(text):
            if e["table_name"] != f"pipe.{self.control}.{self.name}":
                raise MockError(f"{self.name}: entry for {e['table_name']}")
            (field, value), = e["data"].items()
            if field != f"{self.control}.{self.name}.f1":
                raise MockError(f"{self.name}: data field {field}")
            self.mod(REGISTER_INDEX=e["key"]["$REGISTER_INDEX"], f1=value)


class Namespace:
    def __init__(self, what, children):
        self._what, self._children = what, children

    def __getattr__(self, attr):
        try:
            return self._children[attr]
        except KeyError:
            raise MockError(f"{self._what} has no {attr}") from None


def key_kinds(p4_path):
    """Match kinds per (control, table, key name), read from lcmp.p4."""
    text = Path(p4_path).read_text()
    kinds = {}
    for m in re.finditer(r"\btable\s+(\w+)\s*\{(.*?)\n    \}", text, re.S):
        for k in re.finditer(r":\s*(\w+)\s*@name\(\"(\w+)\"\)", m.group(2)):
            kinds.setdefault(m.group(1), {})[k.group(2)] = k.group(1)
    return kinds


def make_bfrt(p4_path, program="lcmp"):
    decls = p4names.parse(p4_path)
    kinds = key_kinds(p4_path)
    controls = {}
    objects = {}
    for ctl, d in decls.items():
        children = {}
        for t, td in d["tables"].items():
            tbl = Table(ctl, t, td, d["actions"])
            tbl.set_kinds(kinds.get(t, {}))
            children[t] = tbl
        for r, rd in d["registers"].items():
            children[r] = Register(ctl, r, rd)
        objects.update({(ctl, n): o for n, o in children.items()})
        controls[ctl] = Namespace(ctl, children)
    pipe = Namespace("pipe", controls)
    prog = Namespace(program, {"pipe": pipe})

    class Bfrt(Namespace):
        def complete_operations(self):
            pass

    return Bfrt("bfrt", {program: prog}), objects


def snapshot(objects):
    tables = sorted(e for o in objects.values() if isinstance(o, Table) for e in o.entries)
    regs = sorted(
        (o.name, i, v) for o in objects.values() if isinstance(o, Register) for i, v in o.cells.items()
    )
    return tables, regs


def main(d):
    d = Path(d)
    script = d / "lcmp_entries.py"
    py_compile.compile(str(script), doraise=True, cfile=str(Path("/tmp") / "lcmp_entries.pyc"))
    bfrt, objects = make_bfrt(d / "lcmp.p4")
    exec(compile(script.read_text(), str(script), "exec"), {"bfrt": bfrt})
    from_script = snapshot(objects)

    bfrt2, objects2 = make_bfrt(d / "lcmp.p4")
    doc = json.loads((d / "lcmp_entries.json").read_text())
    by_table = {}
    for e in doc["entries"] + doc["registers"]:
        by_table.setdefault(e["table_name"], []).append(e)
    for name, es in by_table.items():
        _, ctl, obj = name.split(".")
        getattr(getattr(bfrt2.lcmp.pipe, ctl), obj).add_from_json(json.dumps(es))
    from_json = snapshot(objects2)

    if from_script != from_json:
        print("FAIL: bfrt_python and BF-Runtime JSON install different entries")
        return 1
    if not from_script[0]:
        print("FAIL: no entries")
        return 1
    print(f"bfrt ok: {len(from_script[0])} entries, {len(from_script[1])} register cells, "
          "script and JSON agree")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1]))
    except MockError as e:
        print(f"FAIL: {e}")
        sys.exit(1)
