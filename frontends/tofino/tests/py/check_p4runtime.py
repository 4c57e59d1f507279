"""Checks lcmp.p4info.txtpb and the WriteRequests in DIR
(lcmp_write_request_<n>.txtpb, and lcmp_update_write_request_<n>.txtpb of
an update directory given as a third argument).

Mode `p4runtime`: all parse with the PyPI p4runtime protobufs
(text_format), every update names tables, fields, actions and parameters of
the P4Info with values that fit their widths (a DELETE carries no action),
no entry uses a DEFAULT_ONLY action, and the P4Info's tables, actions,
registers and digests match those declared in DIR/lcmp.p4.

Mode `finsy`: finsy loads the P4Info as a schema and decodes and re-encodes
every entity unchanged (finsy checks names, ids and widths while decoding).
finsy bundles its own copy of the P4Runtime protos, which clash in the
protobuf descriptor pool with the p4runtime package's, so each mode runs in
its own process.

Usage: python check_p4runtime.py p4runtime|finsy DIR [UPDATE_DIR]"""

import os
import sys
from pathlib import Path

os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")

from google.protobuf import text_format  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import p4names  # noqa: E402


def fits(value, bits):
    return len(value) >= 1 and int.from_bytes(value, "big") < (1 << bits)


def requests(dirs, parse):
    """(file name, WriteRequest) of every request file, in order."""
    out = []
    for d, stem in dirs:
        files = sorted(d.glob(stem + "_*.txtpb"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
        if not files:
            raise SystemExit(f"FAIL: no {stem}_<n>.txtpb in {d}")
        out += [(f.name, parse(f.read_text())) for f in files]
    return out


def request_dirs(d, update):
    dirs = [(d, "lcmp_write_request")]
    if update is not None:
        dirs.append((update, "lcmp_update_write_request"))
    return dirs


def check_finsy(d, update=None):
    import finsy
    from finsy.p4entity import decode_entity
    from finsy.proto import p4i, p4r

    info = text_format.Parse((d / "lcmp.p4info.txtpb").read_text(), p4i.P4Info())
    reqs = requests(request_dirs(d, update), lambda t: text_format.Parse(t, p4r.WriteRequest()))
    schema = finsy.P4Schema(info)
    errors = []
    updates = [(f"{name} update {i}", u) for name, r in reqs for i, u in enumerate(r.updates)]
    for n, u in updates:
        try:
            ent = decode_entity(u.entity, schema)
            again = ent.encode(schema)
        except Exception as e:  # finsy raises ValueError and friends
            errors.append(f"update {n}: finsy: {e}")
            continue
        if again != u.entity:
            errors.append(f"update {n}: finsy re-encodes differently:\n{again}\nvs\n{u.entity}")
    if errors:
        for e in errors[:20]:
            print("FAIL:", e)
        print(f"{len(errors)} errors")
        return 1
    print(f"finsy ok: {len(updates)} entities in {len(reqs)} requests decode and re-encode unchanged")
    return 0


def check_p4runtime(d, update=None):
    from p4.config.v1 import p4info_pb2
    from p4.v1 import p4runtime_pb2

    info = text_format.Parse((d / "lcmp.p4info.txtpb").read_text(), p4info_pb2.P4Info())
    reqs = requests(
        request_dirs(d, update), lambda t: text_format.Parse(t, p4runtime_pb2.WriteRequest())
    )
    tables = {t.preamble.id: t for t in info.tables}
    actions = {a.preamble.id: a for a in info.actions}
    errors = []
    updates = [(f"{name} update {i}", u) for name, r in reqs for i, u in enumerate(r.updates)]
    for n, u in updates:
        which = u.entity.WhichOneof("entity")
        if which == "table_entry":
            te = u.entity.table_entry
            t = tables.get(te.table_id)
            if t is None:
                errors.append(f"update {n}: unknown table id {te.table_id}")
                continue
            fields = {f.id: f for f in t.match_fields}
            if len(te.match) != len(fields):
                errors.append(f"update {n}: {t.preamble.name}: {len(te.match)} matches")
            for m in te.match:
                f = fields.get(m.field_id)
                kind = m.WhichOneof("field_match_type")
                if f is None:
                    errors.append(f"update {n}: unknown field {m.field_id}")
                    continue
                want = p4info_pb2.MatchField.MatchType.Name(f.match_type).lower()
                if kind != want:
                    errors.append(f"update {n}: {f.name} is {want}, got {kind}")
                vals = {
                    "exact": [m.exact.value],
                    "lpm": [m.lpm.value],
                    "ternary": [m.ternary.value, m.ternary.mask],
                    "range": [m.range.low, m.range.high],
                }[kind]
                if not all(fits(v, f.bitwidth) for v in vals):
                    errors.append(f"update {n}: {f.name} wider than {f.bitwidth}")
                if kind == "lpm" and m.lpm.prefix_len > f.bitwidth:
                    errors.append(f"update {n}: {f.name} prefix too long")
            needs_prio = any(
                f.match_type in (p4info_pb2.MatchField.TERNARY, p4info_pb2.MatchField.RANGE)
                for f in t.match_fields
            )
            if needs_prio != (te.priority > 0):
                errors.append(f"update {n}: {t.preamble.name}: priority {te.priority}")
            if u.type == p4runtime_pb2.Update.DELETE:
                if te.HasField("action"):
                    errors.append(f"update {n}: a DELETE with an action")
                continue
            act = te.action.action
            refs = {r.id: r for r in t.action_refs}
            if act.action_id not in refs:
                errors.append(f"update {n}: action {act.action_id} not in {t.preamble.name}")
                continue
            if refs[act.action_id].scope == p4info_pb2.ActionRef.DEFAULT_ONLY:
                errors.append(f"update {n}: entry uses a DEFAULT_ONLY action")
            a = actions[act.action_id]
            params = {p.id: p for p in a.params}
            if len(act.params) != len(params):
                errors.append(f"update {n}: {a.preamble.name}: {len(act.params)} params")
            for p in act.params:
                if p.param_id not in params or not fits(p.value, params[p.param_id].bitwidth):
                    errors.append(f"update {n}: {a.preamble.name} param {p.param_id}")
        else:
            errors.append(f"update {n}: unexpected entity {which}")

    # The P4Info names are the ones lcmp.p4 declares.
    p4 = p4names.parse(d / "lcmp.p4")
    for t in info.tables:
        ctl, name = t.preamble.name.split(".")
        decl = p4.get(ctl, {}).get("tables", {}).get(name)
        if decl is None:
            errors.append(f"P4Info table {t.preamble.name} not in lcmp.p4")
            continue
        if [f.name for f in t.match_fields] != list(decl["keys"]):
            errors.append(f"{t.preamble.name}: keys {list(decl['keys'])} in lcmp.p4")
        names = [
            actions[r.id].preamble.name.split(".")[1]
            for r in t.action_refs
            if r.scope != p4info_pb2.ActionRef.DEFAULT_ONLY
        ]
        only = [
            actions[r.id].preamble.name.split(".")[1]
            for r in t.action_refs
            if r.scope == p4info_pb2.ActionRef.DEFAULT_ONLY
        ]
        if names != decl["actions"] or only != decl["default_only"]:
            errors.append(f"{t.preamble.name}: actions {decl['actions']} in lcmp.p4")
        default = actions[t.const_default_action_id].preamble.name.split(".")[1]
        if default != decl["default"]:
            errors.append(f"{t.preamble.name}: default {decl['default']} in lcmp.p4")
        widths = [(f.name, f.bitwidth) for f in t.match_fields]
        if widths != [(k, v["bits"]) for k, v in decl["keys"].items()]:
            errors.append(f"{t.preamble.name}: key widths {decl['keys']} in lcmp.p4")
        if t.size != decl["size"]:
            errors.append(f"{t.preamble.name}: size {decl['size']} in lcmp.p4")
    for a in info.actions:
        ctl, name = a.preamble.name.split(".")
        decl = p4.get(ctl, {}).get("actions", {}).get(name)
        if decl != {p.name: p.bitwidth for p in a.params}:
            errors.append(f"P4Info action {a.preamble.name} differs from lcmp.p4: {decl}")
    for r in info.registers:
        ctl, name = r.preamble.name.split(".")
        decl = p4.get(ctl, {}).get("registers", {}).get(name)
        bits = r.type_spec.bitstring.bit.bitwidth
        if decl is None or decl["size"] != r.size or decl["bits"] != bits:
            errors.append(f"P4Info register {r.preamble.name} differs from lcmp.p4: {decl}")
    # Counters and the meter: the standard messages bf-p4c's
    # --p4runtime-force-std-externs writes, as lcmp.p4 declares them.
    for c in info.counters:
        ctl, name = c.preamble.name.split(".")
        decl = p4.get(ctl, {}).get("counters", {}).get(name)
        if decl is None or decl["size"] != c.size \
                or c.spec.unit != p4info_pb2.CounterSpec.BOTH or c.preamble.id >> 24 != 0x12:
            errors.append(f"P4Info counter {c.preamble.name} differs from lcmp.p4: {decl}")
    if sorted(c.preamble.name for c in info.counters) != sorted(
            f"{ctl}.{n}" for ctl, d in p4.items() for n in d.get("counters", {})):
        errors.append("P4Info counters are not lcmp.p4's")
    for m in info.meters:
        ctl, name = m.preamble.name.split(".")
        decl = p4.get(ctl, {}).get("meters", {}).get(name)
        if decl is None or decl["size"] != m.size or m.preamble.id >> 24 != 0x14:
            errors.append(f"P4Info meter {m.preamble.name} differs from lcmp.p4: {decl}")
    if not info.digests:
        errors.append("P4Info has no digest")
    for g in info.digests:
        ctl, name = g.preamble.name.split(".")
        decl = p4.get(ctl, {}).get("digests", {}).get(name)
        if decl is None or decl["bits"] != g.type_spec.bitstring.bit.bitwidth:
            errors.append(f"P4Info digest {g.preamble.name} differs from lcmp.p4: {decl}")

    if errors:
        for e in errors[:50]:
            print("FAIL:", e)
        print(f"{len(errors)} errors")
        return 1
    print(
        f"p4runtime ok: {len(info.tables)} tables, {len(info.actions)} actions, "
        f"{len(info.registers)} registers, {len(info.counters)} counters, "
        f"{len(info.meters)} meters, {len(info.digests)} digests; "
        f"{len(updates)} updates in {len(reqs)} requests"
    )
    return 0


if __name__ == "__main__":
    mode, directory = sys.argv[1], Path(sys.argv[2])
    update = Path(sys.argv[3]) if len(sys.argv) > 3 else None
    sys.exit({"p4runtime": check_p4runtime, "finsy": check_finsy}[mode](directory, update))
