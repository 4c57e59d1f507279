/* The ABI checks as a C caller meets them (docs/firmware.md, "ABI
 * version"), run by scripts/test.d/70-firmware.sh:
 *
 * - every init call, through lcmp.h's macros, passes the header's
 *   LCMP_ABI_VERSION and initialises (a null config included); the `_`
 *   functions behind them, given another version, return LCMP_ERR_ABI
 *   and touch neither the memory nor *out;
 * - the sized outputs: a struct of an older layout (ABI 3's counters,
 *   LCMP_COUNTERS_MIN_SIZE bytes) gets exactly its prefix and nothing past
 *   it is written; a size below the oldest layout is LCMP_ERR_ABI with
 *   nothing written.
 *
 * Prints one line per check; exits 1 at the first failure. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcmp.h"

static int failures;

static void check(int ok, const char *what) {
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    if (!ok) failures++;
}

/* Memory of `n` bytes aligned to 64, filled with 0xA5. */
static unsigned char *memory(size_t n) {
    unsigned char *p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (!p) {
        perror("aligned_alloc");
        exit(1);
    }
    memset(p, 0xA5, n);
    return p;
}

/* Whether `n` bytes at `p` all equal `b`. */
static int all(const unsigned char *p, size_t n, unsigned char b) {
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != b) return 0;
    return 1;
}

int main(void) {
    const uint32_t others[] = {0, LCMP_ABI_VERSION - 1, LCMP_ABI_VERSION + 1, 0xFFFFFFFFu};
    size_t size = lcmp_decider_size(LCMP_FLOWS), shared = lcmp_decider_shared_size(LCMP_FLOWS);
    size_t tsize = lcmp_tables_size(), i;
    lcmp_config cfg = {.size = sizeof(lcmp_config), .abi_version = LCMP_ABI_VERSION};
    lcmp_decider *const canary = (lcmp_decider *)(uintptr_t)0x40;
    lcmp_tables *const tcanary = (lcmp_tables *)(uintptr_t)0x40;
    unsigned char *mem = memory(size), *smem = memory(shared), *tmem = memory(tsize);
    lcmp_decider *d = canary, *s = canary;
    lcmp_tables *t = tcanary;

    /* Another header's version: refused first, nothing read or written. */
    for (i = 0; i < sizeof others / sizeof others[0]; i++) {
        uint32_t v = others[i];
        check(lcmp_decider_init_(mem, size, LCMP_FLOWS, NULL, &d, v) == LCMP_ERR_ABI && d == canary &&
                  all(mem, size, 0xA5),
              "lcmp_decider_init_ of another version, null config: LCMP_ERR_ABI, nothing written");
        check(lcmp_decider_init_(mem, size, LCMP_FLOWS, &cfg, &d, v) == LCMP_ERR_ABI && d == canary &&
                  all(mem, size, 0xA5),
              "lcmp_decider_init_ of another version, valid config: LCMP_ERR_ABI");
        check(lcmp_decider_init_shared_(smem, shared, LCMP_FLOWS, NULL, &s, v) == LCMP_ERR_ABI &&
                  s == canary && all(smem, shared, 0xA5),
              "lcmp_decider_init_shared_ of another version: LCMP_ERR_ABI, nothing written");
        check(lcmp_tables_init_(tmem, tsize, &t, v) == LCMP_ERR_ABI && t == tcanary &&
                  all(tmem, tsize, 0xA5),
              "lcmp_tables_init_ of another version: LCMP_ERR_ABI, nothing written");
    }
    /* The header's version, through the macros. */
    check(lcmp_decider_init(mem, size, LCMP_FLOWS, NULL, &d) == LCMP_OK && d != canary,
          "lcmp_decider_init (the header's version, null config): LCMP_OK");
    check(lcmp_decider_init_shared(smem, shared, LCMP_FLOWS, &cfg, &s) == LCMP_OK && s != canary,
          "lcmp_decider_init_shared (the header's version): LCMP_OK");
    check(lcmp_tables_init(tmem, tsize, &t) == LCMP_OK && t != tcanary,
          "lcmp_tables_init (the header's version): LCMP_OK");

    /* Some counts (no tables: every packet is no route). */
    {
        lcmp_flow f = lcmp_flow_v4(0x0A000001u, 0x0A080001u, 1000, 4791, 17);
        lcmp_decision out;
        lcmp_counters whole;
        unsigned char buf[sizeof(lcmp_counters) + 64];
        int n;
        for (n = 0; n < 5; n++) lcmp_on_packet(d, 1, &f, 8, &out);
        check(lcmp_get_counters(d, &whole) == LCMP_OK && whole.packets == 5 && whole.no_route == 5,
              "lcmp_get_counters (the header's size): all counters");
        /* ABI 3's lcmp_counters: the first 104 bytes, without `reclaimed`. */
        memset(buf, 0xEE, sizeof buf);
        check(lcmp_get_counters_(d, (lcmp_counters *)(void *)buf, LCMP_COUNTERS_MIN_SIZE) == LCMP_OK &&
                  memcmp(buf, &whole, LCMP_COUNTERS_MIN_SIZE) == 0 &&
                  all(buf + LCMP_COUNTERS_MIN_SIZE, sizeof buf - LCMP_COUNTERS_MIN_SIZE, 0xEE),
              "an older caller's smaller lcmp_counters: its prefix written, nothing past it");
        memset(buf, 0xEE, sizeof buf);
        check(lcmp_get_counters_(d, (lcmp_counters *)(void *)buf, LCMP_COUNTERS_MIN_SIZE - 8) ==
                      LCMP_ERR_ABI &&
                  all(buf, sizeof buf, 0xEE),
              "an lcmp_counters smaller than the oldest layout: LCMP_ERR_ABI, nothing written");
    }
    {
        lcmp_flow f = lcmp_flow_v4(0x0A000001u, 0x0A080001u, 1000, 4791, 17);
        lcmp_explanation e;
        unsigned char buf[sizeof(lcmp_explanation) + 64];
        check(lcmp_explain(d, 1, &f, 8, &e) == LCMP_OK && e.reason == LCMP_REASON_UNKNOWN_GROUP,
              "lcmp_explain (the header's size): LCMP_OK");
        memset(buf, 0xEE, sizeof buf);
        check(lcmp_explain_(d, 1, &f, 8, (lcmp_explanation *)(void *)buf, LCMP_EXPLANATION_MIN_SIZE - 1) ==
                      LCMP_ERR_ABI &&
                  all(buf, sizeof buf, 0xEE),
              "an lcmp_explanation smaller than its layout: LCMP_ERR_ABI, nothing written");
    }
    printf("%s\n", failures ? "abi: FAILED" : "abi: all checks passed");
    return failures ? 1 : 0;
}
