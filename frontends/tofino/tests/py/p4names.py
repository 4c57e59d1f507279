"""Names declared in a generated lcmp.p4: controls, tables (with key names,
actions), actions (with parameter widths) and registers (with sizes).

A small purpose-built reader for the program lcmp-tofino generates, not a
P4 parser: it is what the mocks check the rendered entries against."""

import re

TYPEDEFS = {"PortId_t": 9}


def _width(ty):
    m = re.fullmatch(r"bit<(\d+)>", ty.strip())
    if m:
        return int(m.group(1))
    if ty.strip() in TYPEDEFS:
        return TYPEDEFS[ty.strip()]
    raise ValueError(f"unknown type {ty!r}")


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


def parse(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    out = {}
    for m in re.finditer(r"\bcontrol\s+(\w+)\s*\(", text):
        name = m.group(1)
        body = _block(text, m.end())
        ctl = {"tables": {}, "actions": {}, "registers": {}}
        for a in re.finditer(r"\baction\s+(\w+)\s*\(([^)]*)\)", body):
            params = {}
            for p in filter(None, (s.strip() for s in a.group(2).split(","))):
                ty, pname = p.rsplit(None, 1)
                params[pname] = _width(ty)
            ctl["actions"][a.group(1)] = params
        for t in re.finditer(r"\btable\s+(\w+)\s*\{", body):
            tb = _block(body, t.start())
            keys = {}
            kb = _block(tb, tb.index("key"))
            for k in re.finditer(r":\s*(\w+)\s*@name\(\"(\w+)\"\)", kb):
                keys[k.group(2)] = k.group(1)
            ab = _block(tb, tb.index("actions"))
            acts = [s.strip() for s in ab.split(";") if s.strip()]
            size = int(re.search(r"size\s*=\s*(\d+)", tb).group(1))
            ctl["tables"][t.group(1)] = {"keys": keys, "actions": acts, "size": size}
        for r in re.finditer(r"\bRegister<(.+?)>\s*\((\d+)\)\s*(\w+)\s*;", body):
            ty = r.group(1).rsplit(",", 1)[0].strip()
            ctl["registers"][r.group(3)] = {"type": ty, "size": int(r.group(2))}
        out[name] = ctl
    return out
