/*
 * replay.c: the LCMP C ABI driven by C code, as a SmartNIC firmware would
 * drive it. Reads a table blob (`lcmp tables ... -o tables.bin`) and a CSV
 * replay trace (the `lcmp replay` format), feeds every event to the decider
 * in caller-provided memory, and prints the decision digest and counters in
 * the format of `lcmp replay --quiet`:
 *
 *   digest 0x0123456789abcdef
 *   events=N decisions=N packets=N hits=N ...
 *
 * Build (host; see docs/firmware.md):
 *   cargo build -p lcmp-ffi --release
 *   cc -std=c11 -Wall -Wextra -O2 -Ifrontends/ffi/include \
 *      frontends/ffi/examples/replay.c target/release/liblcmp_ffi.a \
 *      -lpthread -ldl -lm -o replay
 *   ./replay tables.bin frontends/firmware/traces/steady.csv
 *
 * Trace lines: `t_us,packet,src,dst,sport,dport,proto,dst_dc` (IPv4 or
 * IPv6 addresses, dst_dc a numeric DC id), `t_us,sample,port,queue_bytes`,
 * `t_us,link,port,up|down`; `#` comments and blank lines are skipped.
 * Exit status: 0 on success, 1 on any error (message on stderr).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lcmp.h"

/* The decider lives in static storage for the replay shape (LCMP_FLOWS
 * slots, so that the digest matches lcmp replay), sized by the header's
 * bound; lcmp_decider_size(LCMP_FLOWS) is checked at run time. */
#define DECIDER_BYTES (LCMP_DECIDER_HEADER_MAX + LCMP_SLOT_BYTES * LCMP_FLOWS)
static _Alignas(LCMP_DECIDER_ALIGN) uint8_t decider_mem[DECIDER_BYTES];

#define MAX_BLOB (96 * 1024)
static uint8_t blob[MAX_BLOB];

static int fail(const char *what, int32_t code) {
    fprintf(stderr, "replay: %s: %s (%" PRId32 ")\n", what, lcmp_strerror(code), code);
    return 1;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out) {
    char *end;
    if (*s < '0' || *s > '9') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max) return -1;
    *out = (uint64_t)v;
    return 0;
}

static int parse_addr(const char *s, uint8_t out[16], uint8_t *family) {
    memset(out, 0, 16);
    if (inet_pton(AF_INET, s, out) == 1) {
        *family = LCMP_FAMILY_V4;
        return 0;
    }
    if (inet_pton(AF_INET6, s, out) == 1) {
        *family = LCMP_FAMILY_V6;
        return 0;
    }
    return -1;
}

/* Splits `line` at commas in place; returns the number of fields (at most
 * `max`, or max + 1 if there were more). Surrounding spaces are trimmed. */
static int split(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (n == max) return max + 1;
        fields[n++] = p;
        char *comma = strchr(p, ',');
        char *end = comma ? comma : p + strlen(p);
        while (end > p && (end[-1] == ' ' || end[-1] == '\t')) end--;
        if (!comma) {
            *end = '\0';
            return n;
        }
        *end = '\0';
        p = comma + 1;
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s TABLES.bin TRACE.csv\n", argv[0]);
        return 2;
    }
    if (lcmp_abi_version() != LCMP_ABI_VERSION) {
        fprintf(stderr, "replay: library ABI %" PRIu32 " != header ABI %d\n",
                lcmp_abi_version(), LCMP_ABI_VERSION);
        return 1;
    }
    if (lcmp_decider_size(LCMP_FLOWS) > sizeof decider_mem || lcmp_decider_align() > LCMP_DECIDER_ALIGN) {
        fprintf(stderr, "replay: decider does not fit the header's bounds\n");
        return 1;
    }

    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t blob_len = fread(blob, 1, sizeof blob, f);
    int too_big = !feof(f);
    fclose(f);
    if (too_big) {
        fprintf(stderr, "replay: %s: larger than %d bytes\n", argv[1], MAX_BLOB);
        return 1;
    }

    lcmp_decider *d = NULL;
    lcmp_config config = {.size = sizeof(lcmp_config),
                          .abi_version = LCMP_ABI_VERSION,
                          .scheme = LCMP_SCHEME_LCMP,
                          .hash = LCMP_HASH_MURMUR3,
                          .overflow = LCMP_OVERFLOW_REFUSE,
                          .seed = 0};
    int32_t rc = lcmp_decider_init(decider_mem, sizeof decider_mem, LCMP_FLOWS, &config, &d);
    if (rc != LCMP_OK) return fail("lcmp_decider_init", rc);
    rc = lcmp_install(d, blob, blob_len);
    if (rc != LCMP_OK) return fail(argv[1], rc);

    lcmp_digest digest;
    rc = lcmp_digest_init(&digest);
    if (rc != LCMP_OK) return fail("lcmp_digest_init", rc);

    FILE *trace = fopen(argv[2], "r");
    if (!trace) {
        perror(argv[2]);
        return 1;
    }
    char line[512];
    uint32_t index = 0; /* events so far: the digest counts every event */
    unsigned long lineno = 0;
    int status = 0;
    while (fgets(line, sizeof line, trace)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\0' || *p == '#') continue;
        char *fields[9];
        int n = split(p, fields, 8);
        uint64_t t_us, v;
        if (n < 2 || parse_u64(fields[0], UINT64_MAX, &t_us) != 0) goto bad_line;
        uint32_t now = (uint32_t)t_us; /* 1 tick = 1 us, wrapping */
        if (strcmp(fields[1], "packet") == 0 && n == 8) {
            lcmp_flow flow;
            uint8_t fam_src, fam_dst;
            uint64_t sport, dport, proto, dst_dc;
            if (parse_addr(fields[2], flow.src, &fam_src) || parse_addr(fields[3], flow.dst, &fam_dst) ||
                fam_src != fam_dst || parse_u64(fields[4], 65535, &sport) ||
                parse_u64(fields[5], 65535, &dport) || parse_u64(fields[6], 255, &proto) ||
                parse_u64(fields[7], 65535, &dst_dc))
                goto bad_line;
            flow.family = fam_src;
            flow.sport = (uint16_t)sport;
            flow.dport = (uint16_t)dport;
            flow.proto = (uint8_t)proto;
            lcmp_decision decision;
            rc = lcmp_on_packet(d, now, &flow, (uint16_t)dst_dc, &decision);
            if (rc != LCMP_OK) return fail("lcmp_on_packet", rc);
            rc = lcmp_digest_update(&digest, index, t_us, &flow, (uint16_t)dst_dc, &decision);
            if (rc != LCMP_OK) return fail("lcmp_digest_update", rc);
        } else if (strcmp(fields[1], "sample") == 0 && n == 4) {
            uint64_t port;
            if (parse_u64(fields[2], 255, &port) || parse_u64(fields[3], UINT64_MAX, &v)) goto bad_line;
            rc = lcmp_sample(d, now, (uint8_t)port, v);
            if (rc != LCMP_OK) return fail("lcmp_sample", rc);
        } else if (strcmp(fields[1], "link") == 0 && n == 4) {
            uint64_t port;
            if (parse_u64(fields[2], 255, &port)) goto bad_line;
            bool up;
            if (strcmp(fields[3], "up") == 0) up = true;
            else if (strcmp(fields[3], "down") == 0) up = false;
            else goto bad_line;
            rc = lcmp_set_port(d, (uint8_t)port, up);
            if (rc != LCMP_OK) return fail("lcmp_set_port", rc);
        } else {
            goto bad_line;
        }
        index++;
        continue;
    bad_line:
        fprintf(stderr, "replay: %s:%lu: malformed event\n", argv[2], lineno);
        status = 1;
        break;
    }
    fclose(trace);
    if (status != 0) return status;

    uint64_t value, decisions;
    rc = lcmp_digest_value(&digest, &value, &decisions);
    if (rc != LCMP_OK) return fail("lcmp_digest_value", rc);
    lcmp_counters c;
    rc = lcmp_get_counters(d, &c);
    if (rc != LCMP_OK) return fail("lcmp_get_counters", rc);
    printf("digest 0x%016" PRIx64 "\n", value);
    printf("events=%" PRIu32 " decisions=%" PRIu64 " packets=%" PRIu64 " hits=%" PRIu64
           " new_flows=%" PRIu64 " failovers=%" PRIu64 " unpinned=%" PRIu64 " no_route=%" PRIu64
           " min_cost_fallbacks=%" PRIu64 " ecmp_fallbacks=%" PRIu64 " samples=%" PRIu64 "\n",
           index, decisions, c.packets, c.hits, c.new_flows, c.failovers, c.unpinned, c.no_route,
           c.min_cost_fallbacks, c.ecmp_fallbacks, c.samples);
    return 0;
}
