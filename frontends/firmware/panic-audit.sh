#!/usr/bin/env bash
# Lists the panic call sites that survive optimisation in a firmware image:
# every branch into core's panic entry points (panic, panic_fmt,
# panic_bounds_check, expect_failed, unwrap_failed, slice index failures,
# copy_from_slice length mismatch), as
#   <enclosing function, hash stripped> | <source file of the call site>
# sorted and de-duplicated. The call site's file is the innermost inlined
# location the debug info gives. Usage: panic-audit.sh IMAGE
set -euo pipefail
image=$1
llvm_bin="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin"
"$llvm_bin/llvm-objdump" -d -C -l --no-show-raw-insn "$image" | awk '
  /^[0-9a-f]+ <.*>:$/ {
    fn = $0
    sub(/^[0-9a-f]+ </, "", fn); sub(/>:$/, "", fn); sub(/::h[0-9a-f]+$/, "", fn)
    next
  }
  /^; / { loc = $2; sub(/:[0-9]+$/, "", loc); n = split(loc, parts, "/"); loc = parts[n]; next }
  /\tb[a-z.]*\t/ && /<(core::panicking::|core::option::expect_failed|core::result::unwrap_failed|core::slice::.*fail|core::panicking)/ {
    if (fn ~ /^core::(panicking|option::expect_failed|result::unwrap_failed|slice::.*fail)/) next
    print fn " | " loc
  }
' | sort -u
