/* Several cores, one tables object per generation (docs/firmware.md,
 * "Several cores: shared tables"), with POSIX threads: the host program
 * that helgrind and ThreadSanitizer run ("Threads and race detectors").
 *
 *   shared_tables TABLES.bin GROUP [WORKERS [GENERATIONS]]
 *
 * The control thread (main) keeps two lcmp_tables objects. It installs
 * the blob into one and publishes it (a pointer under a mutex); each
 * worker thread owns a decider without tables of its own
 * (lcmp_decider_init_shared), routes bursts, and attaches to whatever is
 * published between two bursts (lcmp_use_tables, which lets go of the
 * previous object). For each next generation the control thread waits
 * until every worker reads the current object, waits until no worker
 * reads the spare one (lcmp_tables_users == 0: the library's atomic user
 * count is the only synchronisation between a worker's last reads of the
 * old tables and this install), installs into the spare and publishes it.
 * At the end every worker releases its tables and ends its decider, and
 * both objects are ended (lcmp_tables_fini, refused while a decider reads
 * one).
 *
 * Prints one line; exits 1 on any unexpected status, with a message. */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcmp.h"

#define MAX_BLOB (96 * 1024)
#define MAX_WORKERS 16
#define FLOWS 1024

static uint8_t blob[MAX_BLOB];
static size_t blob_len;
static uint16_t group;

/* What the control thread publishes, under `lock`. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static lcmp_tables *published;
static int stop;

struct worker {
    pthread_t thread;
    unsigned id;
    lcmp_tables *reading; /* the object this worker attached last (its own) */
    uint64_t packets, routed;
    int32_t error;        /* the first unexpected status */
    const char *where;
};

static void *aligned(size_t n) {
    void *p = aligned_alloc(64, (n + 63) / 64 * 64);
    if (!p) {
        perror("aligned_alloc");
        exit(1);
    }
    return p;
}

static int fail(const char *what, int32_t code) {
    fprintf(stderr, "shared_tables: %s: %s (%" PRId32 ")\n", what, lcmp_strerror(code), code);
    return 1;
}

static lcmp_tables *current(int *stopped) {
    lcmp_tables *t;
    pthread_mutex_lock(&lock);
    t = published;
    *stopped = stop;
    pthread_mutex_unlock(&lock);
    return t;
}

static void *work(void *arg) {
    struct worker *w = arg;
    size_t size = lcmp_decider_shared_size(FLOWS);
    void *mem = aligned(size);
    lcmp_decider *d = NULL;
    lcmp_config cfg = {.size = sizeof(lcmp_config), .abi_version = LCMP_ABI_VERSION};
    lcmp_packet burst[LCMP_BURST];
    lcmp_decision out[LCMP_BURST];
    uint32_t now = 0, i;
    int32_t rc = lcmp_decider_init_shared(mem, size, FLOWS, &cfg, &d);
    if (rc != LCMP_OK) {
        w->error = rc, w->where = "lcmp_decider_init_shared";
        return NULL;
    }
    for (;;) {
        int stopped;
        lcmp_tables *t = current(&stopped);
        if (stopped) break;
        if (t != w->reading) {
            rc = lcmp_use_tables(d, t);
            if (rc != LCMP_OK) {
                w->error = rc, w->where = "lcmp_use_tables";
                break;
            }
            w->reading = t;
        }
        now += 100;
        for (i = 0; i < LCMP_BURST; i++) {
            memset(&burst[i], 0, sizeof burst[i]);
            burst[i].flow = lcmp_flow_v4(0x0A000000u + w->id * 4096 + (uint32_t)(w->packets + i) % 512,
                                         0x0A080001u, 1000, 4791, 17);
            burst[i].group = group;
        }
        rc = lcmp_on_packets(d, now, burst, LCMP_BURST, out);
        if (rc != LCMP_BURST) {
            w->error = rc, w->where = "lcmp_on_packets";
            break;
        }
        for (i = 0; i < LCMP_BURST; i++) w->routed += out[i].port != LCMP_NO_PORT;
        w->packets += LCMP_BURST;
        sched_yield();
    }
    rc = lcmp_release_tables(d);
    if (rc == LCMP_OK) rc = lcmp_decider_fini(d);
    if (rc != LCMP_OK && w->error == 0) w->error = rc, w->where = "lcmp_release_tables/fini";
    free(mem);
    return NULL;
}

/* Polls until `t` has `users` readers (every worker attached) or, with
 * `users` 0, none. */
static int wait_users(lcmp_tables *t, uint32_t users) {
    for (;;) {
        uint32_t n;
        int32_t rc = lcmp_tables_users(t, &n);
        if (rc != LCMP_OK) return fail("lcmp_tables_users", rc);
        if (n == users) return 0;
        sched_yield();
    }
}

int main(int argc, char **argv) {
    FILE *f;
    unsigned workers = 2, generations = 4, g, w;
    struct worker ws[MAX_WORKERS];
    lcmp_tables *objects[2];
    void *tmem[2];
    uint64_t packets = 0, routed = 0;
    int32_t rc;
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: shared_tables TABLES.bin GROUP [WORKERS [GENERATIONS]]\n");
        return 2;
    }
    f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    blob_len = fread(blob, 1, sizeof blob, f);
    fclose(f);
    group = (uint16_t)strtoul(argv[2], NULL, 10);
    if (argc > 3) workers = (unsigned)strtoul(argv[3], NULL, 10);
    if (argc > 4) generations = (unsigned)strtoul(argv[4], NULL, 10);
    if (workers == 0 || workers > MAX_WORKERS || generations == 0) {
        fprintf(stderr, "shared_tables: 1 to %d workers, at least 1 generation\n", MAX_WORKERS);
        return 2;
    }
    for (g = 0; g < 2; g++) {
        tmem[g] = aligned(lcmp_tables_size());
        rc = lcmp_tables_init(tmem[g], lcmp_tables_size(), &objects[g]);
        if (rc != LCMP_OK) return fail("lcmp_tables_init", rc);
    }
    rc = lcmp_tables_install(objects[0], blob, blob_len);
    if (rc != LCMP_OK) return fail("lcmp_tables_install", rc);
    published = objects[0];
    memset(ws, 0, sizeof ws);
    for (w = 0; w < workers; w++) {
        ws[w].id = w;
        if (pthread_create(&ws[w].thread, NULL, work, &ws[w]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    for (g = 1; g < generations; g++) {
        lcmp_tables *cur = objects[(g - 1) % 2], *spare = objects[g % 2];
        /* Every worker reads the current generation... */
        if (wait_users(cur, workers)) return 1;
        /* ...so none reads the spare any more: install the next one. */
        if (wait_users(spare, 0)) return 1;
        rc = lcmp_tables_install(spare, blob, blob_len);
        if (rc != LCMP_OK) return fail("lcmp_tables_install", rc);
        pthread_mutex_lock(&lock);
        published = spare;
        pthread_mutex_unlock(&lock);
    }
    if (wait_users(objects[(generations - 1) % 2], workers)) return 1;
    pthread_mutex_lock(&lock);
    stop = 1;
    pthread_mutex_unlock(&lock);
    for (w = 0; w < workers; w++) {
        pthread_join(ws[w].thread, NULL);
        if (ws[w].error != 0) return fail(ws[w].where, ws[w].error);
        packets += ws[w].packets;
        routed += ws[w].routed;
    }
    for (g = 0; g < 2; g++) {
        rc = lcmp_tables_fini(objects[g]);
        if (rc != LCMP_OK) return fail("lcmp_tables_fini", rc);
        free(tmem[g]);
    }
    if (routed == 0) {
        fprintf(stderr, "shared_tables: no packet of group %u was routed\n", (unsigned)group);
        return 1;
    }
    printf("shared_tables: %u workers, %u generations handed over, %" PRIu64 " packets, %" PRIu64
           " routed\n",
           workers, generations, packets, routed);
    return 0;
}
