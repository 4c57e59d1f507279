#!/usr/bin/env bash
# Lists the 64- and 128-bit division routines reachable from the given
# entry points of a thumbv7em ELF, one "ENTRY: ROUTINE (via CALLER)" line
# each (docs/firmware.md, "Cost table"): the per-packet and per-sample
# calls must reach none (a Cortex-M4 divides 32 bits in hardware; the
# 64-bit routine costs about 300 instructions there, the 128-bit one
# about 1 500). Follows direct calls and tail calls (`bl`, `b.w`, `b`
# to another function) of arm-none-eabi-objdump's disassembly, not
# indirect ones (`blx rN`); the core makes none on these paths.
# Usage: division-audit.sh ELF ENTRY... (exit 0; the caller judges).
set -euo pipefail
elf=$1
shift
arm-none-eabi-objdump -d --no-show-raw-insn "$elf" | python3 -c '
import re, sys
entries = sys.argv[1:]
calls, cur = {}, None
for line in sys.stdin:
    m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
    if m:
        cur = m.group(1)
        calls.setdefault(cur, set())
        continue
    m = re.search(r"\s(?:bl|b\.w|b|blx)(?:\.n|\.w)?\s+[0-9a-f]+ <([^>+]+)(?:\+0x[0-9a-f]+)?>", line)
    if m and cur and m.group(1) != cur:
        calls[cur].add(m.group(1))
# 64- and 128-bit division: the AEABI helpers, libgcc and compiler-builtins.
div = re.compile(r"__aeabi_(u?ldivmod)|__(u?div|u?mod)(di|ti)3|__udivmod(di|ti)4|u(64|128)_div_rem|u(64|128)_by_u(64|128)_div_rem|specialized_div_rem")
for e in entries:
    if e not in calls:
        sys.exit(f"division-audit.sh: no function {e} in the image")
    seen, todo, via = {e}, [e], {}
    while todo:
        f = todo.pop()
        for g in calls.get(f, ()):
            if g not in seen:
                seen.add(g)
                via[g] = f
                todo.append(g)
    for g in sorted(seen):
        if div.search(g):
            print(f"{e}: {g} (via {via.get(g, e)})")
' "$@"
