/*
 * The cost table of the C API on a Cortex-M4F (docs/firmware.md, "Cost
 * table"): every function lcmp.h exports, called through liblcmp_ffi.a
 * (thumbv7em-none-eabihf) in QEMU mps2-an386, prints one line
 *
 *     cost NAME STACK_BYTES INSTRUCTIONS
 *
 * Instructions: QEMU runs with `-icount shift=7`, so its virtual clock
 * advances exactly 2^7 ns per instruction executed, and SysTick counts
 * that clock at the board's 25 MHz (3.2 ticks an instruction): a call's
 * ticks / 3.2, less those of an empty call through the same thunk, is its
 * instruction count, exact (a calibration block of 1 000 `nop`s must read
 * 1 000, or the image fails). Stack: the 16 KiB below the caller's stack
 * pointer is painted before each call, and the deepest word changed is
 * its stack use, less the empty call's.
 *
 * scripts/test.d/70-firmware.sh runs it and frontends/firmware/costs.sh
 * compares the figures with the budgets of frontends/firmware/costs.txt.
 * `trace.h` (gen-trace.sh) gives the tables blob; 10 levels, 6 ports
 * (testbed8's DC1) is the shape the budgets are for. `signed.h` gives it
 * signed, for the signed installs (an Ed25519 verification each).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lcmp.h"
#include "rt.h"

#include "trace.h"
/* signed_blob[] / signed_blob_len: trace.h's blob signed with the test
 * key frontends/firmware/cost/cost-key.pem (generation 1); signed_key[]:
 * its public key (70-firmware.sh writes it). */
#include "signed.h"

/* --- measuring ------------------------------------------------------ */

#define SYST_CSR (*(volatile uint32_t *)0xE000E010)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018)
#define RELOAD 0xFFFFFFu
#define PAINT_WORDS (16 * 1024 / 4)
#define PATTERN 0xC0575EEDu
/* 2^7 ns an instruction at 25 MHz: 128 / 40 = 3.2 ticks. */
#define TICKS_NUM 16u
#define TICKS_DEN 5u

static volatile uint32_t wraps;

void systick_handler(void) { wraps++; }

static void fail(const char *what, int32_t code) { fail_sh(what, lcmp_strerror(code)); }

struct cost {
    uint32_t stack;
    uint64_t instructions;
};

typedef void (*thunk)(void);

/* Runs `f` once on a painted stack with SysTick running: its stack bytes
 * and instructions, the thunk's call and return included. */
static struct cost __attribute__((noinline)) measure(thunk f) {
    uint32_t *sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    /* Paint below this frame (the calls below push from sp down). */
    volatile uint32_t *lo = sp - PAINT_WORDS;
    for (volatile uint32_t *p = lo; p < sp; p++) *p = PATTERN;
    SYST_CSR = 0;
    SYST_RVR = RELOAD;
    SYST_CVR = 0;
    wraps = 0;
    SYST_CSR = 7; /* processor clock, interrupt on wrap, enabled */
    uint32_t start = SYST_CVR;
    f();
    uint32_t end = SYST_CVR;
    uint32_t w = wraps;
    SYST_CSR = 0;
    uint64_t ticks = (uint64_t)w * (RELOAD + 1) + start - end;
    uint32_t *deep = (uint32_t *)lo;
    while (deep < sp && *deep == PATTERN) deep++;
    struct cost c;
    c.stack = (uint32_t)((uintptr_t)sp - (uintptr_t)deep);
    c.instructions = (ticks * TICKS_DEN + TICKS_NUM / 2) / TICKS_NUM;
    return c;
}

static struct cost empty;

static void print_cost(const char *name, struct cost c) {
    struct line l = {.len = 0};
    put(&l, "cost ");
    put(&l, name);
    put(&l, " ");
    put_u64(&l, c.stack > empty.stack ? c.stack - empty.stack : 0);
    put(&l, " ");
    put_u64(&l, c.instructions > empty.instructions ? c.instructions - empty.instructions : 0);
    put(&l, "\n");
    puts_sh(l.buf);
}

/* The largest of several runs, per figure. */
static struct cost worst(struct cost a, struct cost b) {
    if (b.stack > a.stack) a.stack = b.stack;
    if (b.instructions > a.instructions) a.instructions = b.instructions;
    return a;
}

#define MEASURE(name, thunk) print_cost(name, measure(thunk))

/* --- the calls ------------------------------------------------------ */

#define FLOWS 1024
static uint8_t decider_mem[LCMP_DECIDER_HEADER_MAX + LCMP_SLOT_BYTES * FLOWS]
    __attribute__((aligned(LCMP_DECIDER_ALIGN)));
static uint8_t tables_mem[48 * 1024] __attribute__((aligned(64)));
static uint8_t shared_mem[16 * 1024] __attribute__((aligned(64)));
static lcmp_decider *d, *shared;
static lcmp_tables *t;
static int32_t rc;
static volatile uint32_t sink;
static uint32_t now = 1000;
static uint8_t port;
static uint64_t depth;
static uint32_t next_flow = 1;
static lcmp_flow flow;
static lcmp_decision out;
static lcmp_packet burst[LCMP_BURST];
static lcmp_decision burst_out[LCMP_BURST];
static lcmp_explanation ex;
static lcmp_counters counters;
static lcmp_digest digest;
static uint64_t u64_out, u64_out2;
static size_t size_out, size_out2;
static uint32_t u32_out;
static const uint8_t key[LCMP_PUBLIC_KEY_LEN] = {1};

/* Group 8 of testbed8's DC1 has all six ports as candidates. */
#define GROUP 8

static lcmp_flow new_flow(void) {
    uint32_t n = next_flow++;
    return lcmp_flow_v4(0x0A000000u | n, 0x0A800000u | (n * 7u), (uint16_t)(1000 + n), 4791, 17);
}

/* The empty call: a thunk calling a function that returns at once, so
 * the figures printed are each function's own, from its call to its
 * return. */
static void __attribute__((noinline)) nothing(void) { __asm__ volatile(""); }
static void t_empty(void) {
    nothing();
    __asm__ volatile("");
}
static void t_calibrate(void) {
    nothing();
    __asm__ volatile(".rept 1000\n\tnop\n\t.endr");
}
static void t_abi_version(void) { sink = lcmp_abi_version(); }
static void t_decider_size(void) { sink = lcmp_decider_size(65536); }
static void t_decider_shared_size(void) { sink = lcmp_decider_shared_size(16); }
static void t_decider_align(void) { sink = lcmp_decider_align(); }
static void t_decider_init(void) { rc = lcmp_decider_init(decider_mem, sizeof decider_mem, FLOWS, 0, &d); }
static void t_install(void) { rc = lcmp_install(d, trace_blob, trace_blob_len); }
static void t_install_signed(void) {
    u64_out2 = 0;
    rc = lcmp_install_signed(d, trace_blob, trace_blob_len, key, 1, signed_scope, 0, 0, &u64_out2);
}
static uint64_t installed;
static void t_install_signed_ok(void) {
    rc = lcmp_install_signed(d, signed_blob, signed_blob_len, signed_key, 1, signed_scope, 0, installed, &u64_out2);
}
static void t_blob_len(void) { rc = lcmp_blob_len(trace_blob, trace_blob_len, &size_out); }
static void t_generation(void) { rc = lcmp_generation(d, &u64_out); }
static void t_sample(void) { rc = lcmp_sample(d, now, port, depth); }
static void t_set_port(void) { rc = lcmp_set_port(d, port, true); }
static void t_on_packet(void) { rc = lcmp_on_packet(d, now, &flow, GROUP, &out); }
static void t_on_packets(void) { rc = lcmp_on_packets(d, now, burst, LCMP_BURST, burst_out); }
static void t_gc(void) { rc = lcmp_gc(d, now, 4096); }
static void t_flow_cache_usage(void) { rc = lcmp_flow_cache_usage(d, &size_out, &size_out2); }
static void t_explain(void) { rc = lcmp_explain(d, now, &flow, GROUP, &ex); }
static void t_get_counters(void) { rc = lcmp_get_counters(d, &counters); }
static void t_set_scheme(void) { rc = lcmp_set_scheme(d, LCMP_SCHEME_LCMP); }
static void t_set_tables_current(void) { rc = lcmp_set_tables_current(d, true); }
static void t_strerror(void) { sink = (uint32_t)(uintptr_t)lcmp_strerror(LCMP_ERR_NULL); }
static void t_reason_str(void) { sink = (uint32_t)(uintptr_t)lcmp_reason_str(out.reason); }
static void t_flow_v4(void) { flow = lcmp_flow_v4(0x0A000001u, 0x0A000002u, 1000, 4791, 17); }
static void t_digest_init(void) { rc = lcmp_digest_init(&digest); }
static void t_digest_update(void) { rc = lcmp_digest_update(&digest, 1, now, &flow, GROUP, &out); }
static void t_digest_value(void) { rc = lcmp_digest_value(&digest, &u64_out, &u64_out2); }
static void t_tables_size(void) { sink = lcmp_tables_size(); }
static void t_tables_align(void) { sink = lcmp_tables_align(); }
static void t_tables_init(void) { rc = lcmp_tables_init(tables_mem, sizeof tables_mem, &t); }
static void t_tables_install(void) { rc = lcmp_tables_install(t, trace_blob, trace_blob_len); }
static void t_tables_install_signed(void) {
    u64_out2 = 0;
    rc = lcmp_tables_install_signed(t, trace_blob, trace_blob_len, key, 1, signed_scope, 0, 0, &u64_out2);
}
static void t_tables_install_signed_ok(void) {
    rc = lcmp_tables_install_signed(t, signed_blob, signed_blob_len, signed_key, 1, signed_scope, 0, 0, &u64_out2);
}
static void t_tables_generation(void) { rc = lcmp_tables_generation(t, &u64_out); }
static void t_tables_users(void) { rc = lcmp_tables_users(t, &u32_out); }
static void t_decider_init_shared(void) {
    rc = lcmp_decider_init_shared(shared_mem, sizeof shared_mem, 16, 0, &shared);
}
static void t_verify_signed(void) {
    rc = lcmp_verify_signed(signed_blob, signed_blob_len, signed_key, 1, signed_scope, 0, 1, &u64_out2, &u64_out);
}
static void t_decider_fini(void) { rc = lcmp_decider_fini(shared); }
static void t_tables_fini(void) { rc = lcmp_tables_fini(t); }
static void t_use_tables(void) { rc = lcmp_use_tables(shared, t); }
static void t_release_tables(void) { rc = lcmp_release_tables(shared); }

static void ok(const char *what) {
    if (rc != LCMP_OK) fail(what, rc);
}

int main(void) {
    empty = measure(t_empty);
    struct cost cal = measure(t_calibrate);
    if (cal.instructions - empty.instructions != 1000) {
        struct line l = {.len = 0};
        put(&l, "error: the calibration block of 1000 instructions measured ");
        put_u64(&l, cal.instructions - empty.instructions);
        put(&l, " (is QEMU running with -icount shift=7?)\n");
        puts_sh(l.buf);
        exit_sh(0);
    }
    MEASURE("lcmp_abi_version", t_abi_version);
    MEASURE("lcmp_decider_size", t_decider_size);
    MEASURE("lcmp_decider_shared_size", t_decider_shared_size);
    MEASURE("lcmp_decider_align", t_decider_align);
    MEASURE("lcmp_decider_init_", t_decider_init);
    ok("decider_init");
    /* Over the live decider: refused, nothing changes. */
    lcmp_decider *live = d;
    MEASURE("lcmp_decider_init_:again", t_decider_init);
    if (rc != LCMP_ERR_ALREADY_INITIALIZED || d != live) fail("decider_init: again", rc);
    MEASURE("lcmp_blob_len", t_blob_len);
    ok("blob_len");
    MEASURE("lcmp_install", t_install);
    ok("install");
    MEASURE("lcmp_generation", t_generation);
    ok("generation");

    /* A queue sample: the worst over six ports, each sampled at an empty,
     * a filling (rising trend), a full and a draining queue. */
    struct cost s = {0, 0};
    static const uint64_t depths[] = {0, 600000000, 2500000000u, 5000000000u, 7000000000u, 1200000000, 0};
    for (unsigned k = 0; k < sizeof depths / sizeof depths[0]; k++) {
        for (port = 0; port < 6; port++) {
            depth = depths[k] / (port + 1u);
            now += 100;
            s = worst(s, measure(t_sample));
            ok("sample");
        }
    }
    print_cost("lcmp_sample", s);
    port = 2;
    MEASURE("lcmp_set_port", t_set_port);
    ok("set_port");

    /* Packets: a new flow's decision, then the same flow's hit (the worst
     * of 16 each); a burst of 32 new flows, then the same 32 again. */
    struct cost fresh = {0, 0}, hit = {0, 0};
    for (int k = 0; k < 16; k++) {
        flow = new_flow();
        now += 1;
        fresh = worst(fresh, measure(t_on_packet));
        ok("on_packet: new");
        hit = worst(hit, measure(t_on_packet));
        ok("on_packet: hit");
    }
    print_cost("lcmp_on_packet:new", fresh);
    print_cost("lcmp_on_packet:hit", hit);
    for (int k = 0; k < LCMP_BURST; k++) {
        burst[k].flow = new_flow();
        burst[k].group = GROUP;
    }
    MEASURE("lcmp_on_packets:32new", t_on_packets);
    if (rc != LCMP_BURST) fail("on_packets: new", rc);
    MEASURE("lcmp_on_packets:32hit", t_on_packets);
    if (rc != LCMP_BURST) fail("on_packets: hit", rc);
    MEASURE("lcmp_explain_", t_explain);
    ok("explain");
    MEASURE("lcmp_flow_v4", t_flow_v4);
    MEASURE("lcmp_digest_init", t_digest_init);
    ok("digest_init");
    MEASURE("lcmp_digest_update", t_digest_update);
    ok("digest_update");
    MEASURE("lcmp_digest_value", t_digest_value);
    ok("digest_value");
    MEASURE("lcmp_reason_str", t_reason_str);
    MEASURE("lcmp_strerror", t_strerror);
    MEASURE("lcmp_get_counters_", t_get_counters);
    ok("get_counters");
    MEASURE("lcmp_flow_cache_usage", t_flow_cache_usage);
    ok("flow_cache_usage");
    /* gc of the whole cache, every flow idle past the timeout. */
    now += 100000000;
    MEASURE("lcmp_gc", t_gc);
    if (rc < 0) fail("gc", rc);
    MEASURE("lcmp_set_scheme", t_set_scheme);
    ok("set_scheme");
    MEASURE("lcmp_set_tables_current", t_set_tables_current);
    ok("set_tables_current");
    /* An unsigned blob offered to the signed install: refused. */
    MEASURE("lcmp_install_signed:refused", t_install_signed);
    if (rc == LCMP_OK) fail("install_signed: an unsigned blob", rc);
    /* The signed blob (generation 2, over the generation-1 tables the
     * decider runs) with no persisted floor, then offered again: a replay,
     * refused by the generation check before the signature. */
    /* Verify only (what firmware persists first): the same signed blob,
     * a whole Ed25519 verification, no install. */
    MEASURE("lcmp_verify_signed", t_verify_signed);
    ok("verify_signed");
    if (u64_out2 != 2) fail("verify_signed: generation", LCMP_ERR_INVALID_ARGUMENT);
    installed = 0;
    MEASURE("lcmp_install_signed", t_install_signed_ok);
    ok("install_signed");
    if (u64_out2 != 2) fail("install_signed: generation", LCMP_ERR_INVALID_ARGUMENT);
    installed = u64_out2;
    MEASURE("lcmp_install_signed:replay", t_install_signed_ok);
    if (rc == LCMP_OK) fail("install_signed: a replay", rc);

    MEASURE("lcmp_tables_size", t_tables_size);
    MEASURE("lcmp_tables_align", t_tables_align);
    MEASURE("lcmp_tables_init_", t_tables_init);
    ok("tables_init");
    MEASURE("lcmp_tables_install", t_tables_install);
    ok("tables_install");
    MEASURE("lcmp_tables_install_signed:refused", t_tables_install_signed);
    if (rc == LCMP_OK) fail("tables_install_signed: an unsigned blob", rc);
    MEASURE("lcmp_tables_install_signed", t_tables_install_signed_ok);
    ok("tables_install_signed");
    MEASURE("lcmp_tables_generation", t_tables_generation);
    ok("tables_generation");
    MEASURE("lcmp_decider_init_shared_", t_decider_init_shared);
    ok("decider_init_shared");
    MEASURE("lcmp_use_tables", t_use_tables);
    ok("use_tables");
    MEASURE("lcmp_tables_users", t_tables_users);
    ok("tables_users");
    MEASURE("lcmp_release_tables", t_release_tables);
    ok("release_tables");
    MEASURE("lcmp_decider_fini", t_decider_fini);
    ok("decider_fini");
    MEASURE("lcmp_tables_fini", t_tables_fini);
    ok("tables_fini");
    puts_sh("cost done\n");
    exit_sh(1);
}
