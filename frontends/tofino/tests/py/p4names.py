"""Names declared in a generated lcmp.p4: controls, tables (with key names,
kinds and widths, actions, @defaultonly actions, size), actions (with
parameter widths), registers (with sizes), register parameters, meters,
counters (with sizes) and digests.

A small purpose-built reader for the program lcmp-tofino generates, not a
P4 parser: it is what the bfrt reimplementation and the P4Runtime checks
describe the tables by, the way bf-p4c's bf-rt.json and P4Info would."""

import re

# Arch typedefs (tofino1_specs.p4 / tofino2_specs.p4).
TYPEDEFS = {"PortId_t": 9, "ResubmitType_t": 3, "DigestType_t": 3, "MirrorId_t": 10}


def _strip(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"^\s*#[^\n]*", "", text, flags=re.M)


def _block(text, start):
    """The text between the brace at or after `start` and its match."""
    i = text.index("{", start)
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1 : j]
    raise ValueError("unbalanced braces")


def _types(text):
    """typedef widths and struct/header fields of the whole program."""
    typedefs = dict(TYPEDEFS)
    for m in re.finditer(r"\btypedef\s+bit<(\d+)>\s+(\w+)\s*;", text):
        typedefs[m.group(2)] = int(m.group(1))
    structs = {}
    for m in re.finditer(r"\b(?:struct|header)\s+(\w+)\s*\{", text):
        body = _block(text, m.start())
        structs[m.group(1)] = {
            f.group(2): f.group(1) for f in re.finditer(r"([\w<>]+)\s+(\w+)\s*;", body)
        }
    return typedefs, structs


def _width(ty, typedefs, structs=None):
    ty = ty.strip()
    m = re.fullmatch(r"bit<(\d+)>", ty)
    if m:
        return int(m.group(1))
    if ty in typedefs:
        return typedefs[ty]
    if structs is not None and ty in structs:
        return sum(_width(t, typedefs, structs) for t in structs[ty].values())
    raise ValueError(f"unknown type {ty!r}")


def _expr_width(expr, params, typedefs, structs):
    m = re.fullmatch(r"(.+)\[(\d+):(\d+)\]", expr)
    if m:
        return int(m.group(2)) - int(m.group(3)) + 1
    parts = expr.split(".")
    ty = params[parts[0]]
    for f in parts[1:]:
        ty = structs[ty][f]
    return _width(ty, typedefs, structs)


def parse(path):
    raw = open(path, encoding="utf-8").read()
    text = _strip(raw)
    typedefs, structs = _types(text)
    out = {}
    for m in re.finditer(r"\bcontrol\s+(\w+)\s*\(([^)]*)\)", text):
        name = m.group(1)
        params = {}
        for p in m.group(2).split(","):
            words = p.split()
            if len(words) >= 2:
                params[words[-1]] = words[-2]
        body = _block(text, m.end())
        ctl = {"tables": {}, "actions": {}, "registers": {}, "digests": {}, "params": {}, "meters": {},
               "counters": {}}
        for a in re.finditer(r"\baction\s+(\w+)\s*\(([^)]*)\)", body):
            ps = {}
            for p in filter(None, (s.strip() for s in a.group(2).split(","))):
                ty, pname = p.rsplit(None, 1)
                ps[pname] = _width(ty, typedefs)
            ctl["actions"][a.group(1)] = ps
        for t in re.finditer(r"\btable\s+(\w+)\s*\{", body):
            tb = _block(body, t.start())
            keys = {}
            kb = _block(tb, tb.index("key"))
            for k in re.finditer(r"([\w.\[\]:]+)\s*:\s*(\w+)\s*@name\(\"(\w+)\"\)", kb):
                keys[k.group(3)] = {
                    "kind": k.group(2),
                    "bits": _expr_width(k.group(1), params, typedefs, structs),
                }
            ab = _block(tb, tb.index("actions"))
            acts, default_only = [], []
            for s in (s.strip() for s in ab.split(";")):
                if not s:
                    continue
                if s.startswith("@defaultonly"):
                    default_only.append(s.split()[-1])
                else:
                    acts.append(s)
            size = int(re.search(r"size\s*=\s*(\d+)", tb).group(1))
            default = re.search(r"default_action\s*=\s*(\w+)", tb).group(1)
            ctl["tables"][t.group(1)] = {
                "keys": keys,
                "actions": acts,
                "default_only": default_only,
                "default": default,
                "size": size,
            }
        for r in re.finditer(r"\bRegister<(.+?)>\s*\((\d+)(?:\s*,[^)]*)?\)\s*(\w+)\s*;", body):
            ty = r.group(1).rsplit(",", 1)[0].strip()
            ctl["registers"][r.group(3)] = {
                "type": ty,
                "bits": _width(ty, typedefs, structs),
                "size": int(r.group(2)),
            }
        for r in re.finditer(r"\bRegisterParam<(.+?)>\s*\([^)]*\)\s*(\w+)\s*;", body):
            ctl["params"][r.group(2)] = {"bits": _width(r.group(1).strip(), typedefs, structs)}
        for r in re.finditer(r"\bMeter<.+?>\s*\((\d+)\s*,[^)]*\)\s*(\w+)\s*;", body):
            ctl["meters"][r.group(2)] = {"size": int(r.group(1))}
        for r in re.finditer(r"\bCounter<.+?>\s*\((\d+)\s*,[^)]*\)\s*(\w+)\s*;", body):
            ctl["counters"][r.group(2)] = {"size": int(r.group(1))}
        for d in re.finditer(r"\bDigest<(\w+)>\s*\(\)\s*(\w+)\s*;", body):
            ctl["digests"][d.group(2)] = {"bits": _width(d.group(1), typedefs, structs)}
        out[name] = ctl
    return out
