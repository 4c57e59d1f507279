#!/usr/bin/env python3
"""Import circles between the modules of crates, one file a module.

Usage: module-circles.py SRC_DIR...   (exit 1 and one line per circle)
       module-circles.py --self-test  (it finds a planted circle)

Written by hand (issue 34): cargo-modules answers the same question
(`dependencies --acyclic`) but builds rust-analyzer's crates, minutes of
CI for a check this size. What it reads: every `crate::`, `super::` and
`self::` path outside `#[cfg(test)] mod` blocks and comments, grouped
imports (`use super::{a, b}`) included, resolved to the deepest module
file it names. A module using its own ancestors is the module tree, not a
circle; every other edge counts.
"""
import os
import re
import sys
import tempfile
from collections import defaultdict

PATH = re.compile(r"\b((?:crate|super|self)(?:::\w+)+)")
GROUP = re.compile(r"\b((?:crate|super|self)(?:::\w+)*)::\{([^{}]*)\}")
TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{")


def modules(src):
    """Module path (tuple) -> file, for every .rs file under src."""
    mods = {}
    for root, _, files in os.walk(src):
        for f in files:
            if f.endswith(".rs"):
                rel = os.path.relpath(os.path.join(root, f), src)[:-3].split(os.sep)
                if rel[-1] in ("mod", "lib", "main"):
                    rel = rel[:-1]
                mods[tuple(rel)] = os.path.join(root, f)
    return mods


def without_tests(text):
    """The text without `#[cfg(test)] mod name { ... }` blocks."""
    out, i = [], 0
    while (m := TEST_MOD.search(text, i)) is not None:
        out.append(text[i : m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def resolve(mods, here, path):
    """The deepest module `path` names, seen from module `here`."""
    parts = path.split("::")
    if parts[0] == "crate":
        base, parts = [], parts[1:]
    else:
        base = list(here)
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                base = base[:-1]
            parts = parts[1:]
    for k in range(len(parts), -1, -1):
        if tuple(base + parts[:k]) in mods:
            return tuple(base + parts[:k])
    return None


def graph(mods):
    g = defaultdict(set)
    for m, path in mods.items():
        text = re.sub(r"//.*", "", without_tests(open(path).read()))
        paths = PATH.findall(text)
        for head, body in GROUP.findall(text):
            paths += [head + "::" + item.strip().split(" as ")[0] for item in body.split(",")]
        for p in paths:
            t = resolve(mods, m, p.rstrip(":"))
            # An ancestor (the module tree) or itself is not an edge.
            if t is not None and t != m and m[: len(t)] != t:
                g[m].add(t)
    return g


def circles(mods, g):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(mods):
        if v not in index:
            visit(v)
    return found


def check(src):
    mods = modules(src)
    return [" <-> ".join("::".join(m) or "crate" for m in c) for c in circles(mods, graph(mods))]


def self_test():
    with tempfile.TemporaryDirectory() as d:
        files = {
            "lib.rs": "mod a;\nmod b;\nmod c;\n",
            "a.rs": "use crate::b::B;\n",
            "b/mod.rs": "use super::c::{C, D};\nmod inner;\n",
            "b/inner.rs": "use super::super::b::X; // the parent: not a circle\n",
            "c.rs": "use crate::a::A;\n#[cfg(test)]\nmod test { use crate::b::B; }\n",
        }
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        got = check(d)
        assert got == ["a <-> b <-> c"], got
        with open(os.path.join(d, "c.rs"), "w") as f:
            f.write("// use crate::a::A;\n")
        assert check(d) == [], check(d)
    print("module-circles self-test: ok (finds a planted circle, and none once it is cut)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    bad = [f"{src}: {c}" for src in sys.argv[1:] for c in check(src)]
    for line in bad:
        print("import circle: " + line, file=sys.stderr)
    sys.exit(1 if bad else 0)
