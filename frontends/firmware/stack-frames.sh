#!/usr/bin/env bash
# Prints the stack frame of every function of a thumbv7em image or archive,
# largest first, one "<bytes> <function, hash and .llvm suffix stripped>" a line. A frame is
# the sum of the function's `sub sp, #imm` (also `sub.w` and `subw`, the
# Thumb-2 forms with a 12-bit immediate; what it reserves below its
# register pushes, which add at most 100 bytes more). A function that moves
# `sp` by a register (a frame too large for an immediate, or a dynamic
# one) is printed as "dynamic <function>". Usage: stack-frames.sh FILE...
# (see docs/firmware.md, "Stack").
set -euo pipefail
llvm_bin="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin"
"$llvm_bin/llvm-objdump" -d -C --no-show-raw-insn "$@" | awk '
  function hex(s,   i, n) {
    n = 0; s = tolower(s); sub(/^#?0x/, "", s)
    for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
    return n
  }
  /^[0-9a-f]+ <.*>:$/ {
    key++; fn[key] = $0; frame[key] = 0
    sub(/^[0-9a-f]+ </, "", fn[key]); sub(/>:$/, "", fn[key]); sub(/ \(\.llvm\.[0-9]+\)$/, "", fn[key]); sub(/::h[0-9a-f]+$/, "", fn[key])
    next
  }
  key && /\tsub(\.w|w)?\tsp, (sp, )?#0x[0-9a-f]+$/ { frame[key] += hex($NF); next }
  key && /\tsub(\.w|w)?\tsp, (sp, )?r[0-9]+$/ { frame[key] = "dynamic" }
  END { for (k = 1; k <= key; k++) if (frame[k] != 0) print frame[k], fn[k] }
' | sort -k1,1 -rn
