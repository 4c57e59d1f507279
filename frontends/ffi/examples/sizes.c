/* Caller-sized flow caches through the C ABI (docs/firmware.md, "Linking
 * the C library into C firmware"): for 1 024, 65 536 and 1 048 576 slots,
 * allocate lcmp_decider_size(flows) bytes aligned to lcmp_decider_align(),
 * install a table blob, pin 60 % of the slots' worth of flows in bursts
 * (lcmp_on_packets), and check that every one of them then hits its port.
 *
 *   sizes TABLES.bin GROUP
 *
 * Prints one line per size; exits 1 on the first mismatch, with a message. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcmp.h"

#define MAX_BLOB (96 * 1024)
static uint8_t blob[MAX_BLOB];

static int fail(const char *what, int32_t code) {
    fprintf(stderr, "sizes: %s: %s (%" PRId32 ")\n", what, lcmp_strerror(code), code);
    return 1;
}

static lcmp_packet packet(uint32_t i, uint16_t group) {
    lcmp_packet p;
    memset(&p, 0, sizeof p);
    p.flow = lcmp_flow_v4(0x0A000000u + i, 0x0A080001u, (uint16_t)(1000 + (i >> 20)), 4791, 17);
    p.group = group;
    return p;
}

/* One cache size; 0 on success. */
static int run(size_t flows, const uint8_t *tables, size_t tables_len, uint16_t group) {
    size_t size = lcmp_decider_size(flows);
    if (size == 0 || size > LCMP_DECIDER_HEADER_MAX + LCMP_SLOT_BYTES * flows) {
        fprintf(stderr, "sizes: lcmp_decider_size(%zu) = %zu, outside the header's formula\n",
                flows, size);
        return 1;
    }
    size_t align = lcmp_decider_align();
    void *mem = aligned_alloc(align, (size + align - 1) / align * align);
    if (!mem) {
        perror("aligned_alloc");
        return 1;
    }
    memset(mem, 0xA5, size); /* init must not depend on the memory's contents */
    lcmp_decider *d = NULL;
    int32_t rc = lcmp_decider_init(mem, size, flows, NULL, &d);
    if (rc != LCMP_OK) return fail("lcmp_decider_init", rc);
    rc = lcmp_install(d, tables, tables_len);
    if (rc != LCMP_OK) return fail("lcmp_install", rc);

    uint32_t n = (uint32_t)(flows * 6 / 10);
    uint8_t *port = malloc(n);
    if (!port) return 1;
    lcmp_packet burst[LCMP_BURST];
    lcmp_decision out[LCMP_BURST];
    /* Flows whose 40-bit keyed fingerprints collide share an entry
     * (docs/design.md: about n^2 / 2^41 pairs): the second one's first
     * packet hits the first's pin. A few at most. */
    uint32_t shared = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < n; i += LCMP_BURST) {
            size_t m = n - i < LCMP_BURST ? n - i : LCMP_BURST;
            for (size_t k = 0; k < m; k++) burst[k] = packet(i + (uint32_t)k, group);
            rc = lcmp_on_packets(d, 1 + (uint32_t)pass, burst, m, out);
            if (rc != (int32_t)m) return fail("lcmp_on_packets", rc);
            for (size_t k = 0; k < m; k++) {
                uint8_t want = pass == 0 ? LCMP_DECISION_NEW : LCMP_DECISION_HIT;
                if (pass == 0 && out[k].kind == LCMP_DECISION_HIT && shared < 2) {
                    shared++;
                    want = LCMP_DECISION_HIT;
                }
                if (out[k].kind != want || (pass == 1 && out[k].port != port[i + k])) {
                    fprintf(stderr, "sizes: %zu slots, pass %d, flow %" PRIu32 ": kind %u port %u\n",
                            flows, pass, i + (uint32_t)k, out[k].kind, out[k].port);
                    return 1;
                }
                port[i + k] = out[k].port;
            }
        }
    }
    size_t slots = 0, used = 0;
    rc = lcmp_flow_cache_usage(d, &slots, &used);
    if (rc != LCMP_OK) return fail("lcmp_flow_cache_usage", rc);
    lcmp_counters c;
    rc = lcmp_get_counters(d, &c);
    if (rc != LCMP_OK) return fail("lcmp_get_counters", rc);
    if (slots != flows || used != n - shared || c.new_flows != n - shared
        || c.hits != n + shared || c.cache_full != 0) {
        fprintf(stderr, "sizes: %zu slots: usage %zu/%zu, counters new %" PRIu64 " hits %" PRIu64 "\n",
                flows, used, slots, c.new_flows, c.hits);
        return 1;
    }
    printf("flows=%zu bytes=%zu pinned=%" PRIu32 " hits=%" PRIu64 "\n", flows, size, n, c.hits);
    free(port);
    free(mem);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: sizes TABLES.bin GROUP\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t len = fread(blob, 1, sizeof blob, f);
    fclose(f);
    uint16_t group = (uint16_t)strtoul(argv[2], NULL, 10);
    /* Invalid sizes are refused. */
    if (lcmp_decider_size(1000) != 0 || lcmp_decider_size(8) != 0) {
        fprintf(stderr, "sizes: a non-power-of-two size was accepted\n");
        return 1;
    }
    const size_t sizes[] = {1024, 65536, 1048576};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (run(sizes[i], blob, len, group)) return 1;
    }
    return 0;
}
