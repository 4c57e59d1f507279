/* The caller's bug that frontends/ffi/helgrind.supp must not hide: one
 * decider handle used by two threads at once without a lock (a handle is
 * not thread-safe: docs/firmware.md, "Threads and race detectors").
 * scripts/test.d/70-firmware.sh runs it under helgrind with the
 * suppressions and expects races reported on the packet path.
 *
 *   handle_race TABLES.bin GROUP */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "lcmp.h"

#define FLOWS 1024

static lcmp_decider *d;
static uint16_t group;

static void *route(void *arg) {
    uint32_t base = (uint32_t)(uintptr_t)arg, i;
    for (i = 0; i < 200; i++) {
        lcmp_flow f = lcmp_flow_v4(base + i, 0x0A080001u, 1000, 4791, 17);
        lcmp_decision out;
        lcmp_on_packet(d, i, &f, group, &out);
    }
    return NULL;
}

int main(int argc, char **argv) {
    static uint8_t blob[96 * 1024];
    size_t len, size = lcmp_decider_size(FLOWS);
    void *mem = aligned_alloc(64, (size + 63) / 64 * 64);
    pthread_t a, b;
    FILE *f;
    int32_t rc;
    if (argc != 3 || !mem) return 2;
    f = fopen(argv[1], "rb");
    if (!f) return 2;
    len = fread(blob, 1, sizeof blob, f);
    fclose(f);
    group = (uint16_t)strtoul(argv[2], NULL, 10);
    rc = lcmp_decider_init(mem, size, FLOWS, NULL, &d);
    if (rc == LCMP_OK) rc = lcmp_install(d, blob, len);
    if (rc != LCMP_OK) {
        fprintf(stderr, "handle_race: %s\n", lcmp_strerror(rc));
        return 1;
    }
    /* The bug: both threads route on the one handle. */
    pthread_create(&a, NULL, route, (void *)(uintptr_t)0x0A000000u);
    pthread_create(&b, NULL, route, (void *)(uintptr_t)0x0B000000u);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    puts("handle_race: done (helgrind must report the races above)");
    return 0;
}
