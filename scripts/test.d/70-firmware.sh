#!/usr/bin/env bash
# The SmartNIC frontends (docs/firmware.md), one function per job, each
# image built once and run once:
# * ffi: lcmp-ffi's unit and replay tests (the committed include/lcmp.h
#   must equal cbindgen's output), the staticlib for the host and
#   thumbv7em-none-eabihf;
# * c_examples: the C replay example, linked with the system C compiler,
#   rejects bad input in one line; the caller-sized flow caches of sizes.c;
#   the ABI checks from C (tests/c/abi.c: init versions, sized outputs);
# * threads: the shared-tables example (examples/shared_tables.c, POSIX
#   threads) under helgrind: 0 errors with frontends/ffi/helgrind.supp,
#   errors without it, and a decider handle shared by two threads
#   (tests/c/handle_race.c) still reported with it; built with
#   -fsanitize=thread, no report;
# * firmware_build: lcmp-firmware (its own workspace): fmt, clippy, the
#   release (logging) and nopanic (silent) images;
# * firmware_run: the logging image under QEMU installs each scenario's
#   signed blob (its floor persisted in a flash model first) and refuses a
#   tampered payload, an untrusted key, another switch's blob and a
#   replayed older generation; after a simulated reset it reads its floor
#   back from the flash model, refuses the blob it installed before, keeps
#   the floor through a torn write and installs a newer generation;
# * digests: for each trace in frontends/firmware/traces, the digest and
#   counters of `lcmp replay` == the C example == the firmware under QEMU
#   (mps2-an386) == the bare-metal C example (arm-none-eabi-gcc +
#   liblcmp_ffi.a) under QEMU;
# * panic_audit: the audit (panic-paths.txt), the panic-never link check,
#   and the silent image's run (the panic-never build when it links);
# * c_api_panics: the bare-metal C image calls every function lcmp.h
#   exports; without lcmp_install_signed it links no panic machinery at
#   all, and with it only ed25519-compact's bounds checks;
# * costs: every exported C function's stack (painted) and instructions
#   (QEMU -icount) on the Cortex-M4 against frontends/firmware/costs.txt,
#   the table of docs/firmware.md and lcmp.h generated from it, and no
#   64- or 128-bit division on the packet and sample paths (costs);
# * sizes: the size report (figures in docs/firmware.md) and the 16 KiB
#   flash budget of the core;
# * stack_frames: no stack frame over 4096 B in the firmware image or in a
#   bare-metal C image linking all of liblcmp_ffi.a's API
#   (stack-frames.sh), and docs/firmware.md's tables of the largest are
#   those frames.
set -euo pipefail
source scripts/lib.sh
ensure_apt qemu-system-arm gcc-arm-none-eabi valgrind
ensure_target thumbv7em-none-eabihf
ensure_component llvm-tools
ensure_cargo_tool defmt-print defmt-print 1.2.0

root=$PWD
target=${CARGO_TARGET_DIR:-$root/target}
export CARGO_TARGET_DIR=$target
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fw=frontends/firmware
bm=frontends/ffi/examples/baremetal
thumb=$target/thumbv7em-none-eabihf
image=$thumb/release/lcmp-firmware
lcmp=$target/debug/lcmp
ffi_thumb=$thumb/release/liblcmp_ffi.a
qemu=(qemu-system-arm -machine mps2-an386 -cpu cortex-m4
  -semihosting-config enable=on,target=native -nographic -serial none -monitor none)
llvm_bin="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin"
# A bare-metal C image for the Cortex-M4: bm_image OUT TRACE_DIR [LDFLAGS...]
# (TRACE_DIR holds the trace.h of gen-trace.sh): main.c, or the program
# $bm_main names, over the run-time rt.c and liblcmp_ffi.a.
bm_image() {
  local out=$1 trace_dir=$2
  shift 2
  arm-none-eabi-gcc -std=c11 -Wall -Wextra -Werror -O2 -mcpu=cortex-m4 -mthumb \
    -mfloat-abi=hard -mfpu=fpv4-sp-d16 -ffreestanding -nostdlib \
    -Ifrontends/ffi/include -I"$bm" -I"$trace_dir" -T "$bm/link.ld" \
    "${bm_main:-$bm/main.c}" "$bm/rt.c" \
    "$ffi_thumb" -lgcc -Wl,--gc-sections -Wl,-z,noexecstack "$@" -o "$out"
}
# A host C example linked with liblcmp_ffi.a: host_example SOURCE OUT
# (--gc-sections keeps only what the program reaches: docs/firmware.md).
host_example() {
  cc -std=c11 -Wall -Wextra -Werror -pedantic -O2 -Ifrontends/ffi/include \
    "$1" "$target/release/liblcmp_ffi.a" -Wl,--gc-sections -lpthread -ldl -lm -o "$2"
}

ffi() {
  echo "--- lcmp-ffi"
  cargo test -p lcmp-ffi --locked
  cargo build -p lcmp-ffi --release --locked
  cargo build -p lcmp-ffi --release --locked --target thumbv7em-none-eabihf
  expect "the thumbv7em staticlib $ffi_thumb exists and is not empty" test -s "$ffi_thumb"
}

c_examples() {
  echo "--- C examples"
  # The header alone, as C89, C99 and C++ (no `//` comments, no C99-only
  # constructs outside the system headers).
  printf '#include "lcmp.h"\nint lcmp_header_check;\n' >"$work/header.c"
  local std
  for std in c89 c99; do
    cc -std=$std -pedantic-errors -Wall -Wextra -Werror -fsyntax-only \
      -Ifrontends/ffi/include "$work/header.c"
  done
  c++ -x c++ -std=c++11 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only \
    -Ifrontends/ffi/include "$work/header.c"
  echo "lcmp.h compiles as C89, C99 and C++11"
  # The initialiser lcmp.h suggests compiles under the flags it is used
  # with (a positional one failed -Wextra's missing-field-initializers).
  local init
  init=$(sed -n 's/^ \* `\(lcmp_config c = {[^`]*}\);`$/\1/p' frontends/ffi/include/lcmp.h)
  expect "lcmp.h suggests one lcmp_config initialiser" [ "$(grep -c . <<<"$init")" = 1 ]
  printf '#include "lcmp.h"\nvoid f(void);\nvoid f(void) { %s; (void)c; }\n' "$init" >"$work/init.c"
  cc -std=c99 -pedantic-errors -Wall -Wextra -Werror -fsyntax-only \
    -Ifrontends/ffi/include "$work/init.c"
  echo "lcmp.h's suggested initialiser compiles with -Wall -Wextra -Werror: $init"
  # The ABI checks from C (tests/c/abi.c): every init, through lcmp.h's
  # macros, passes the header's LCMP_ABI_VERSION (another version:
  # LCMP_ERR_ABI, nothing written, a null config included); the sized
  # outputs write an older caller's smaller struct up to its size only,
  # and refuse one below the oldest layout.
  host_example frontends/ffi/tests/c/abi.c "$work/abi_c"
  "$work/abi_c" >"$work/abi.out" || { cat "$work/abi.out"; echo "tests/c/abi.c failed"; exit 1; }
  expect_line "$work/abi.out" -x 'abi: all checks passed'
  echo "tests/c/abi.c: $(grep -c '^ok: ' "$work/abi.out") ABI checks from C pass"
  cargo build -p lcmp-cli --locked
  host_example frontends/ffi/examples/replay.c "$work/replay_c"
  # The example rejects what it cannot parse, with exit status 1 and one
  # message on stderr (a crash or an abort is another status): a malformed
  # CSV line after a valid blob, and an empty blob (LCMP_ERR_BLOB_TRUNCATED).
  "$lcmp" tables --topology testbed8 --switch DC1 -o "$work/good.bin" >/dev/null
  printf '# a comment\n0,teleport,1\n' >"$work/bad.csv"
  : >"$work/empty.bin"
  c_rejects "^replay: $work/bad.csv:2: malformed event\$" "$work/good.bin" "$work/bad.csv"
  c_rejects "^replay: $work/empty.bin: .+ \(-30\)\$" "$work/empty.bin" "$work/bad.csv"
  # Caller-sized flow caches through the C ABI: 1 024, 65 536 and 1 048 576
  # slots from lcmp_decider_size(flows), 60 % pinned in bursts, then all hit.
  host_example frontends/ffi/examples/sizes.c "$work/sizes_c"
  "$work/sizes_c" "$work/good.bin" 8 | tee "$work/sizes.out"
  # docs/firmware.md gives each of these sizes (lcmp_decider_size's).
  local line flows bytes
  while read -r line; do
    flows=$(sed -n 's/^flows=\([0-9]*\) .*/\1/p' <<<"$line" | sed ':a;s/\B[0-9]\{3\}\>/ &/;ta')
    bytes=$(sed -n 's/.* bytes=\([0-9]*\).*/\1/p' <<<"$line" | sed ':a;s/\B[0-9]\{3\}\>/ &/;ta')
    expect_line docs/firmware.md -F "$flows flows: $bytes B"
  done <"$work/sizes.out"
}

# The shared-tables hand-off under race detectors (docs/firmware.md,
# "Threads and race detectors"); needs $work/good.bin from c_examples.
threads() {
  echo "--- threads: shared tables under helgrind and ThreadSanitizer"
  local supp=frontends/ffi/helgrind.supp status args=("$work/good.bin" 8 3 6)
  host_example frontends/ffi/examples/shared_tables.c "$work/shared_tables"
  host_example frontends/ffi/tests/c/handle_race.c "$work/handle_race"
  "$work/shared_tables" "${args[@]}"
  # helgrind OUT PROGRAM ARGS...: its status (9 when it reports an error).
  helgrind() {
    local out=$1
    shift
    valgrind --tool=helgrind --error-exitcode=9 "$@" >"$out.out" 2>"$out.err"
  }
  status=0
  helgrind "$work/hg-supp" --suppressions="$supp" "$work/shared_tables" "${args[@]}" || status=$?
  if [ "$status" -ne 0 ] || ! grep -q 'ERROR SUMMARY: 0 errors' "$work/hg-supp.err"; then
    cat "$work/hg-supp.err"
    echo "helgrind with $supp: status $status, want 0 and no error"
    exit 1
  fi
  echo "helgrind with $supp: $(sed -n 's/^==[0-9]*== //p' "$work/hg-supp.err" | grep 'ERROR SUMMARY')"
  status=0
  helgrind "$work/hg-bare" "$work/shared_tables" "${args[@]}" || status=$?
  expect "helgrind without $supp reports the hand-off's races (status $status, want 9)" [ "$status" -eq 9 ]
  expect_line "$work/hg-bare.err" -F 'lcmp_tables_install'
  echo "helgrind without $supp: $(sed -n 's/^==[0-9]*== //p' "$work/hg-bare.err" | grep 'ERROR SUMMARY')"
  status=0
  helgrind "$work/hg-misuse" --suppressions="$supp" "$work/handle_race" "$work/good.bin" 8 || status=$?
  expect "helgrind with $supp still reports a handle used by two threads (status $status, want 9)" [ "$status" -eq 9 ]
  expect_line "$work/hg-misuse.err" -F 'lcmp_on_packet'
  echo "helgrind with $supp on tests/c/handle_race.c: $(sed -n 's/^==[0-9]*== //p' "$work/hg-misuse.err" | grep 'ERROR SUMMARY')"
  cc -std=c11 -Wall -Wextra -Werror -pedantic -O1 -g -fsanitize=thread -Ifrontends/ffi/include \
    frontends/ffi/examples/shared_tables.c "$target/release/liblcmp_ffi.a" -lpthread -ldl -lm \
    -o "$work/shared_tables_tsan"
  TSAN_OPTIONS=halt_on_error=1 "$work/shared_tables_tsan" "$work/good.bin" 8 3 20
  echo "ThreadSanitizer: no report"
}

# c_rejects EXPECTED-STDERR-REGEX BLOB CSV
c_rejects() {
  local want=$1 status=0
  shift
  "$work/replay_c" "$@" >"$work/rejected.out" 2>"$work/rejected.err" || status=$?
  if [ "$status" -ne 1 ] || [ -s "$work/rejected.out" ] || [ "$(wc -l <"$work/rejected.err")" -ne 1 ] \
    || ! grep -qE "$want" "$work/rejected.err"; then
    echo "the C example on $*: status $status (want 1), stdout $(wc -c <"$work/rejected.out") bytes (want 0), stderr:"
    cat "$work/rejected.err"
    echo "(want one line matching: $want)"
    exit 1
  fi
  echo "C example rejects $*: $(cat "$work/rejected.err")"
}

firmware_build() {
  echo "--- lcmp-firmware: fmt, clippy, build"
  (
    cd "$fw"
    cargo fmt --check
    cargo clippy --release --locked -- -D warnings
    cargo clippy --profile nopanic --locked --no-default-features -- -D warnings
    cargo build --release --locked
    cargo build --profile nopanic --locked --no-default-features
  )
  # The panic-never build below links to the same path.
  cp "$thumb/nopanic/lcmp-firmware" "$work/nopanic.elf"
}

# The logging image under QEMU: its defmt log, decoded, in $work/fw.log.
firmware_run() {
  echo "--- QEMU run"
  local status=0
  timeout 120 "${qemu[@]}" -kernel "$image" >"$work/fw.defmt" || status=$?
  defmt-print --log-format '{s}' -e "$image" stdin <"$work/fw.defmt" >"$work/fw.log"
  cat "$work/fw.log"
  if [ "$status" -ne 0 ]; then
    echo "firmware exited with status $status"; exit 1
  fi
  expect_line "$work/fw.log" -x 'all scenarios match the host'
  # The image installs only signed blobs: each scenario's signed blob went
  # in (its digest lines above), and these three were refused.
  local rejected
  for rejected in 'tampered payload: bad signature' 'untrusted key: unknown key' \
    "another switch's blob: wrong scope" 'replayed older generation: rollback'; do
    expect_line "$work/fw.log" -xF "rejected $rejected"
  done
  # The floor survived a reset (docs/firmware.md, "What firmware persists").
  local line
  for line in 'after a reset: floor 2 read from flash' \
    'after a reset: refused the blob installed before: rollback' \
    'after a torn flash write: floor 2 kept' 'after a reset: installed the newer generation 3'; do
    expect_line "$work/fw.log" -xF "$line"
  done
}

digests() {
  echo "--- digests: lcmp replay == C example == firmware == bare-metal C"
  local csv name first topology switch
  for csv in "$fw"/traces/*.csv; do
    name=$(basename "$csv" .csv)
    first=$(head -n1 "$csv")
    topology=$(sed -n 's/.*topology=\([^ ]*\).*/\1/p' <<<"$first")
    switch=$(sed -n 's/.*switch=\([^ ]*\).*/\1/p' <<<"$first")
    "$lcmp" tables --topology "$topology" --switch "$switch" -o "$work/$name.bin" >/dev/null
    "$lcmp" replay --topology "$topology" --switch "$switch" --quiet "$csv" >"$work/$name.cli"
    "$work/replay_c" "$work/$name.bin" "$csv" >"$work/$name.c"
    sed -n "s/^$name: //p" "$work/fw.log" | sed 's/^generation=[0-9]* //' >"$work/$name.fw"
    expect "lcmp replay --quiet prints 2 lines for $csv" test "$(wc -l <"$work/$name.cli")" -eq 2
    mkdir -p "$work/bm-$name"
    bash "$bm/gen-trace.sh" "$work/$name.bin" "$csv" >"$work/bm-$name/trace.h"
    bm_image "$work/bm-$name/image.elf" "$work/bm-$name"
    # SYS_WRITE0 goes to QEMU's semihosting console, which is its stderr.
    timeout 120 "${qemu[@]}" -kernel "$work/bm-$name/image.elf" 2>"$work/$name.bm" >/dev/null
    diff -u "$work/$name.cli" "$work/$name.c"
    diff -u "$work/$name.cli" "$work/$name.fw"
    diff -u "$work/$name.cli" "$work/$name.bm"
    echo "$name ($topology $switch): $(head -n1 "$work/$name.cli") (lcmp replay, C, QEMU Rust, QEMU C)"
    trace_dir=$work/bm-$name
  done
}

panic_audit() {
  echo "--- panic audit"
  bash "$fw/panic-audit.sh" "$work/nopanic.elf" >"$work/panics.txt"
  { grep -v '^#' "$fw/panic-paths.txt" || true; } | sed '/^$/d' >"$work/panics.expected"
  cat "$work/panics.txt"
  sort -u -o "$work/panics.expected" "$work/panics.expected"
  local new_paths gone_paths linked silent label
  new_paths=$(comm -13 "$work/panics.expected" "$work/panics.txt")
  gone_paths=$(comm -23 "$work/panics.expected" "$work/panics.txt")
  if [ -n "$new_paths" ]; then
    echo "new panic path(s) in the firmware image (fix them, or list and explain them in"
    echo "$fw/panic-paths.txt and docs/firmware.md):"
    echo "$new_paths"
    exit 1
  fi
  if [ -n "$gone_paths" ]; then
    echo "note: listed panic path(s) no longer present (remove from $fw/panic-paths.txt):"
    echo "$gone_paths"
  fi
  (cd "$fw" && cargo build --profile nopanic --locked --no-default-features \
    --features panic-never >"$work/panic-never.log" 2>&1) && linked=1 || linked=0
  if [ -s "$work/panics.txt" ]; then
    if [ "$linked" -eq 1 ]; then
      echo "panic-never linked although the audit lists panic paths"; exit 1
    fi
    expect_line "$work/panic-never.log" -F 'panic-never'
    echo "panic-never: does not link, as expected: $(wc -l <"$work/panics.txt") known panic path(s)"
    silent=$work/nopanic.elf label=nopanic
  else
    if [ "$linked" -ne 1 ]; then
      cat "$work/panic-never.log"; echo "panic-never: no audited path, yet the link failed"; exit 1
    fi
    echo "panic-never: links: no panic path in the image"
    silent=$thumb/nopanic/lcmp-firmware label=panic-never
  fi
  # The silent image (no logging) checks every scenario itself: exit 0 is
  # all digests matching.
  timeout 120 "${qemu[@]}" -kernel "$silent" >/dev/null
  echo "$label image (no logging) exits 0: digests match"
}

# The C API's panic proof: the bare-metal C example's API tour calls every
# function lcmp.h exports (the part fails on one it does not call, so a new
# export is caught), and with --gc-sections an image keeps exactly what
# its code reaches. Without lcmp_install_signed the image must hold no
# panic machinery at all (no panic handler, no core::panicking symbol: the
# C-side counterpart of the panic-never link); lcmp_install_signed adds
# only the ed25519-compact bounds checks of docs/firmware.md ("Panic
# paths").
c_api_panics() {
  echo "--- the C API: every exported function called, no panic path"
  local h=frontends/ffi/include/lcmp.h name missing panics others
  sed -n 's/^[a-z][^(]*[ *]\(lcmp_[a-z0-9_]*\)(.*/\1/p' "$h" | sort -u >"$work/exports.h"
  "$llvm_bin/llvm-nm" -g --defined-only "$ffi_thumb" 2>/dev/null |
    awk '$2 == "T" && $3 ~ /^lcmp_/ { print $3 }' | sort -u >"$work/exports.a"
  expect "$h declares lcmp_* functions" test -s "$work/exports.h"
  if ! diff -u "$work/exports.h" "$work/exports.a"; then
    echo "the functions of $h (-) are not the lcmp_* exports of liblcmp_ffi.a (+)"; exit 1
  fi
  expect "a trace.h from the digests job (trace_dir)" test -n "$trace_dir"
  name=$(basename "$trace_dir")
  name=${name#bm-}
  # in_image ELF: the lcmp_* functions ELF defines.
  in_image() { "$llvm_bin/llvm-nm" --defined-only "$1" | awk '$3 ~ /^lcmp_/ { print $3 }' | sort -u; }
  missing=$(in_image "$trace_dir/image.elf" | comm -23 "$work/exports.h" -)
  if [ -n "$missing" ]; then
    echo "exported by $h but called nowhere in $bm/main.c (call each in api_tour):"
    echo "$missing"
    exit 1
  fi
  echo "the bare-metal C image calls all $(wc -l <"$work/exports.h") exported functions"
  bm_image "$work/c-api-nosig.elf" "$trace_dir" -DLCMP_TOUR_NO_SIGNED
  missing=$(in_image "$work/c-api-nosig.elf" | comm -23 "$work/exports.h" -)
  local want=$'lcmp_install_signed\nlcmp_tables_install_signed\nlcmp_verify_signed'
  expect "the image without the signed calls lacks exactly them (lacks: $missing)" test "$missing" = "$want"
  if "$llvm_bin/llvm-nm" -C "$work/c-api-nosig.elf" | grep -E 'rust_begin_unwind|core::panicking::'; then
    echo "panic machinery (above) is linked into a C image of the API without lcmp_install_signed:"
    bash "$fw/panic-audit.sh" "$work/c-api-nosig.elf"
    exit 1
  fi
  timeout 120 "${qemu[@]}" -kernel "$work/c-api-nosig.elf" 2>"$work/c-api-nosig.out" >/dev/null
  diff -u "$work/$name.cli" "$work/c-api-nosig.out"
  echo "every exported function but the three signed calls: no panic path linked (image runs, digests match)"
  panics=$(bash "$fw/panic-audit.sh" "$trace_dir/image.elf" | sed 's/ | .*//; s/::h[0-9a-f]\{16\}.*//' | sort -u)
  others=$(grep -v '^ed25519_compact::' <<<"$panics" || true)
  if [ -n "$others" ]; then
    echo "panic paths outside ed25519-compact in the C image of the whole API:"
    echo "$others"
    exit 1
  fi
  echo "lcmp_install_signed: $(grep -c . <<<"$panics") panic site(s), all in ed25519-compact (docs/firmware.md)"
}

# The cost table (docs/firmware.md, "Cost table"): cost.c calls every
# function lcmp.h exports under QEMU with -icount shift=7 (an exact
# instruction count through SysTick) on a painted stack, and costs.py
# compares each call's figures with frontends/firmware/costs.txt (5 %, at
# least 16; lcmp_sample at most 1 000 instructions) and docs/firmware.md's
# table with costs.txt (lcmp.h's is the ffi job's header test).
# LCMP_BLESS=1 rewrites all three from the measurement (and stack_frames
# the tables of the largest frames), and the part then fails, so that a
# bless run never passes: commit, then run again without.
costs() {
  echo "--- costs: every C call's stack and instructions on the Cortex-M4"
  local dir=$work/cost missing
  mkdir -p "$dir"
  bash "$bm/gen-trace.sh" "$work/steady.bin" "$fw/traces/steady.csv" >"$dir/trace.h"
  # Generation 2: the signed install must be newer than the generation-1
  # tables the decider already runs (the floor is the larger of the two).
  "$lcmp" tables --topology testbed8 --switch DC1 --generation 2 -o "$dir/gen2.bin" >/dev/null
  bash "$fw/cost/gen-signed.sh" "$lcmp" "$dir/gen2.bin" "$fw/cost/cost-key.pem" \
    "$fw/cost/cost-key.pub" >"$dir/signed.h"
  bm_main=$fw/cost/cost.c bm_image "$dir/cost.elf" "$dir"
  timeout 300 "${qemu[@]}" -icount shift=7 -kernel "$dir/cost.elf" 2>"$dir/cost.out" >/dev/null || {
    cat "$dir/cost.out"; echo "the cost image failed"; exit 1
  }
  expect_line "$dir/cost.out" -x 'cost done'
  # Every exported function has a line (a new export needs one).
  missing=$(sed 's/^cost \(lcmp_[a-z0-9_]*\).*/\1/p;d' "$dir/cost.out" | sort -u | comm -23 "$work/exports.h" -)
  if [ -n "$missing" ]; then
    echo "exported by lcmp.h but not measured by $fw/cost/cost.c:"; echo "$missing"; exit 1
  fi
  if [ "${LCMP_BLESS:-}" = 1 ]; then
    python3 "$fw/costs.py" bless "$dir/cost.out"
    python3 "$fw/costs.py" docs --write
    LCMP_BLESS=1 cargo test -q -p lcmp-ffi --locked --test header
  else
    python3 "$fw/costs.py" check "$dir/cost.out"
    python3 "$fw/costs.py" docs
  fi
  # No 64- or 128-bit division on the per-packet and per-sample paths.
  local divisions
  divisions=$(bash "$fw/division-audit.sh" "$dir/cost.elf" lcmp_sample lcmp_on_packet \
    lcmp_on_packets lcmp_set_port lcmp_gc lcmp_explain_ lcmp_digest_update)
  if [ -n "$divisions" ]; then
    echo "64- or 128-bit division reachable from a per-packet or per-sample call:"
    echo "$divisions"
    exit 1
  fi
  echo "division audit: no 64- or 128-bit division reachable from the packet and sample calls"
}

sizes() {
  echo "--- sizes"
  "$llvm_bin/llvm-size" -A "$image" | awk '$1 ~ /^\.(vector_table|text|rodata|data|bss)$/'
  timeout 60 "${qemu[@]}" -kernel "$thumb/release/size-probe" >/dev/null
  local probe base rodata core
  probe=$(section "$thumb/release/size-probe" .text)
  base=$(section "$thumb/release/size-baseline" .text)
  rodata=$(( $(section "$thumb/release/size-probe" .rodata) - $(section "$thumb/release/size-baseline" .rodata) ))
  core=$((probe - base))
  echo "LCMP core in an image (size-probe - size-baseline): .text $core B, .rodata $rodata B"
  if [ $((core + rodata)) -gt 16384 ]; then
    echo "the decision core exceeds the 16 KiB flash budget"; exit 1
  fi
  # docs/firmware.md ("Sizes") gives these figures: the image's row and the
  # core's line must be today's (after an intended change, copy them in).
  expect_line docs/firmware.md -F "| \`lcmp-firmware\` (logging, two scenarios, signed blobs) |\
 $(group "$(section "$image" .text)") | $(group "$(section "$image" .rodata)") |\
 $(group "$(section "$image" .data)") | $(group "$(section "$image" .bss)") |"
  expect_line docs/firmware.md -F "**LCMP decision core: $(group "$core") B \`.text\` + $(group "$rodata") B \`.rodata\`"
}

# group N: N with a space every three digits, as the docs write numbers.
group() { sed ':a;s/\B[0-9]\{3\}\>/ &/;ta' <<<"$1"; }

# section ELF NAME: the size of section NAME.
section() { "$llvm_bin/llvm-size" -A "$1" | awk -v s="$2" '$1 == s { print $2 }'; }

stack_frames() {
  echo "--- stack frames: none over 4096 B (docs/firmware.md, \"Stack\")"
  # The firmware image, and a bare-metal C image that links every exported
  # lcmp_* function of liblcmp_ffi.a (and, through --gc-sections, exactly
  # what they reach: the by-value conveniences for std users, such as
  # Tables::compile, stay in the archive but out of any C image).
  local exports elf over_limit=0
  # The script itself first: each frame form it must count (subw, sub.w,
  # sub and a register move), in an object assembled from a fixture.
  arm-none-eabi-as -mcpu=cortex-m4 -mthumb "$fw/stack-frames-selftest.s" -o "$work/sf-selftest.o"
  bash "$fw/stack-frames.sh" "$work/sf-selftest.o" >"$work/sf-selftest.txt"
  printf '6940 f\ndynamic g\n' >"$work/sf-selftest.want"
  if ! diff -u "$work/sf-selftest.want" "$work/sf-selftest.txt"; then
    echo "stack-frames.sh miscounts $fw/stack-frames-selftest.s (want above, got below)" >&2
    exit 1
  fi
  exports=$("$llvm_bin/llvm-nm" -g --defined-only "$ffi_thumb" 2>/dev/null |
    awk '$2 == "T" && $3 ~ /^lcmp_/ { print "-Wl,--undefined=" $3 }' | sort -u)
  expect "llvm-nm lists exported lcmp_* functions in $ffi_thumb" test -n "$exports"
  expect "a trace.h from the digests job (trace_dir)" test -n "$trace_dir"
  # shellcheck disable=SC2086 # one linker flag a word
  bm_image "$work/bm-all.elf" "$trace_dir" $exports
  local label
  for elf in "$image" "$work/bm-all.elf"; do
    bash "$fw/stack-frames.sh" "$elf" >"$work/frames.txt"
    # An empty list means the disassembly changed form, not that all is well.
    expect "stack-frames.sh lists frames of $(basename "$elf") (an empty list means the disassembly changed form)" test -s "$work/frames.txt"
    echo "largest stack frames of $(basename "$elf") (bytes):"
    head -n 6 "$work/frames.txt"
    # docs/firmware.md's table of them is generated (LCMP_BLESS=1 rewrites it).
    label=lcmp-firmware
    if [ "$elf" != "$image" ]; then label="the bare-metal C image"; fi
    if [ "${LCMP_BLESS:-}" = 1 ]; then
      python3 "$fw/costs.py" frames "$label" "$work/frames.txt" --write
    else
      python3 "$fw/costs.py" frames "$label" "$work/frames.txt"
    fi
    if awk '$1 == "dynamic" || $1 > 4096 { bad = 1 } END { exit !bad }' "$work/frames.txt"; then
      echo "stack frame(s) over 4096 B in $(basename "$elf"):"
      awk '$1 == "dynamic" || $1 > 4096' "$work/frames.txt"
      over_limit=1
    fi
  done
  if [ "$over_limit" -ne 0 ]; then exit 1; fi
}

# A trace.h for the all-API image (digests sets it to a trace's).
trace_dir=
ffi
c_examples
threads
firmware_build
firmware_run
digests
panic_audit
c_api_panics
costs
sizes
stack_frames
if [ "${LCMP_BLESS:-}" = 1 ]; then
  echo "LCMP_BLESS=1 rewrote $fw/costs.txt, lcmp.h and docs/firmware.md's generated" \
    "tables: commit them and run again without LCMP_BLESS" >&2
  exit 1
fi
