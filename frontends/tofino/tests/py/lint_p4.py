"""Structural checks of a generated lcmp.p4 (no P4 compiler is available
here, so this catches generator slips, not type errors): balanced braces;
every table applied exactly once in its control; every action a table lists
is declared there; every metadata and header field used is declared; every
`.execute(` names a RegisterAction or Lpf of the control, every `.count(`
a Counter of the control, and every RegisterAction names a declared
Register.

Usage: python lint_p4.py DIR/lcmp.p4"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import p4names  # noqa: E402


def fields_of(text, kind, name):
    m = re.search(rf"\b{kind}\s+{name}\s*\{{(.*?)\}}", text, re.S)
    if m is None:
        raise SystemExit(f"FAIL: {kind} {name} not declared")
    return {f.group(1) for f in re.finditer(r"\b[\w<>]+\s+(\w+)\s*;", m.group(1))}


def main(path):
    raw = Path(path).read_text()
    text = re.sub(r"/\*.*?\*/", "", raw, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    errors = []
    if text.count("{") != text.count("}") or text.count("(") != text.count(")"):
        errors.append("unbalanced braces or parentheses")
    for needed in ("#include <tna.p4>", "Pipeline(", "Switch(pipe) main;"):
        if needed not in text:
            errors.append(f"missing {needed!r}")
    meta = fields_of(text, "struct", "lcmp_meta_t")
    emeta = fields_of(text, "struct", "lcmp_egress_meta_t")
    # headers_t's members and their header types.
    members = re.search(r"\bstruct\s+headers_t\s*\{(.*?)\}", text, re.S).group(1)
    headers = {
        m.group(2): fields_of(text, "header", m.group(1))
        for m in re.finditer(r"\b(\w+_h)\s+(\w+)\s*;", members)
    }
    for m in re.finditer(r"\bmeta\.(\w+)", text):
        if m.group(1) not in meta:
            errors.append(f"meta.{m.group(1)} not in lcmp_meta_t")
    for m in re.finditer(r"\bemeta\.(\w+)", text):
        if m.group(1) not in emeta:
            errors.append(f"emeta.{m.group(1)} not in lcmp_egress_meta_t")
    for m in re.finditer(r"\bhdr\.(\w+)\.(\w+)", text):
        h, f = m.groups()
        if f not in ("isValid", "setValid", "setInvalid") and f not in headers.get(h, set()):
            errors.append(f"hdr.{h}.{f} not declared")
    decls = p4names.parse(path)
    for ctl, d in decls.items():
        body = p4names._block(text, re.search(rf"\bcontrol\s+{ctl}\s*\(", text).end())
        for t, td in d["tables"].items():
            n = len(re.findall(rf"\b{t}\.apply\(\)", body))
            if n != 1:
                errors.append(f"{ctl}.{t} applied {n} times")
            for a in td["actions"] + td["default_only"]:
                if a not in d["actions"]:
                    errors.append(f"{ctl}.{t}: action {a} not declared")
            if td["default"] not in td["actions"] + td["default_only"]:
                errors.append(f"{ctl}.{t}: default action {td['default']} not listed")
        externs = set(re.findall(r"\bRegisterAction<[^>]*(?:<[^>]*>[^>]*)*>\s*\((\w+)\)\s*(\w+)", body))
        for reg, _ in externs:
            if reg not in d["registers"]:
                errors.append(f"{ctl}: RegisterAction on undeclared register {reg}")
        callable_ = {name for _, name in externs} | set(re.findall(r"\bLpf<[^;]*\)\s*(\w+)\s*;", body)) \
            | set(d["meters"])
        for m in re.finditer(r"\b(\w+)\.execute\(", body):
            if m.group(1) not in callable_:
                errors.append(f"{ctl}: {m.group(1)}.execute has no declaration")
        # Every .count( names a Counter declared in the control.
        counters = set(re.findall(r"\bCounter<[^;]*\)\s*(\w+)\s*;", body))
        for m in re.finditer(r"\b(\w+)\.count\(", body):
            if m.group(1) not in counters:
                errors.append(f"{ctl}: {m.group(1)}.count has no declaration")
    if errors:
        for e in sorted(set(errors)):
            print("FAIL:", e)
        return 1
    print(f"lint ok: {sum(len(d['tables']) for d in decls.values())} tables, "
          f"{sum(len(d['registers']) for d in decls.values())} registers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
