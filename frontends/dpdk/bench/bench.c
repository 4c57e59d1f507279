/* SPDX-License-Identifier: Apache-2.0
 *
 * lcmp-bench: LCMP's decision through the C ABI against DPDK's own flow
 * table, over the same flows, in one process (docs/performance.md, "The
 * DPDK frontend").
 *
 *   lcmp-bench [EAL args] -- BLOB [SLOTS [ROUNDS]]
 *
 * SLOTS (default 1 048 576) is both the LCMP flow cache's size and the
 * rte_hash's entries; 61 % of it is filled with established flows
 * (towards group 8, six candidates on testbed8's DC1), then the flows are
 * looked up in a random order, in bursts of 32, keys laid out in burst
 * order for both:
 *
 *   rte_hash_lookup_bulk_data  l3fwd's exact-match key (IPv4 5-tuple,
 *                              16 bytes), CRC hash, data = the port
 *   lcmp_on_packets            lcmp_packet bursts (40 bytes each)
 *   lcmp_on_packet             the same packets one at a time
 *
 * and, for lcmp-fwd's software dispatcher, the worker hash over the same
 * flows (struct lcmp_flow, one at a time): rte_hash_crc from seed 0 (the
 * old, public one) against SipHash-2-4 under a random key (libsodium's
 * crypto_shorthash, what it uses now);
 *
 * and prints ns per key (the median of ROUNDS rounds, default 9, each
 * over every flow once), in the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID: on a shared, loaded machine the time the
 * thread was descheduled does not count; what other processes do to the
 * caches and TLB still does) and in TSC wall time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include <sodium.h>

#include "lcmp.h"

#define BURST 32
#define MAX_ROUNDS 64

struct key5 { /* l3fwd's ipv4_5tuple: 13 bytes, padded to 16 */
	uint32_t src, dst;
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t pad[3];
};

static uint64_t rng_state = 0x22u;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

static void
fail(const char *what, const char *why)
{
	fprintf(stderr, "lcmp-bench: error: %s: %s\n", what, why);
	exit(1);
}

int
main(int argc, char **argv)
{
	size_t slots = 1u << 20, n, i, blob_len = 0;
	unsigned int rounds = 9, r;
	struct lcmp_packet *pkts;
	struct key5 *keys;
	const void **keyptr;
	struct lcmp_decision *dec;
	struct lcmp_decider *d;
	struct rte_hash *h;
	double t_hash[MAX_ROUNDS], t_burst[MAX_ROUNDS], t_single[MAX_ROUNDS];
	double w_hash[MAX_ROUNDS], w_burst[MAX_ROUNDS];
	double t_crc[MAX_ROUNDS], t_sip[MAX_ROUNDS];
	uint8_t sip_key[crypto_shorthash_KEYBYTES];
	uint64_t sink = 0, hz;
	struct lcmp_config lc;
	uint8_t blob[96 * 1024];
	size_t used = 0;
	FILE *f;
	void *mem;
	int ret = rte_eal_init(argc, argv);

	if (ret < 0)
		fail("EAL", rte_strerror(rte_errno));
	if (sodium_init() < 0)
		fail("libsodium", "cannot initialise");
	randombytes_buf(sip_key, sizeof(sip_key));
	argc -= ret;
	argv += ret;
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: lcmp-bench [EAL args] -- BLOB [SLOTS [ROUNDS]]\n");
		return 2;
	}
	if (argc >= 3)
		slots = strtoull(argv[2], NULL, 10);
	if (argc >= 4)
		rounds = (unsigned int)strtoul(argv[3], NULL, 10);
	if (rounds == 0 || rounds > MAX_ROUNDS)
		fail("ROUNDS", "1..64");
	if (lcmp_decider_size(slots) == 0)
		fail("SLOTS", "a power of two of at least 16");
	f = fopen(argv[1], "rb");
	if (f == NULL)
		fail(argv[1], "cannot open");
	blob_len = fread(blob, 1, sizeof(blob), f);
	fclose(f);
	n = slots * 61 / 100;
	hz = rte_get_tsc_hz();

	memset(&lc, 0, sizeof(lc));
	lc.size = sizeof(lc);
	lc.abi_version = LCMP_ABI_VERSION;
	mem = rte_zmalloc("bench_decider", lcmp_decider_size(slots), LCMP_DECIDER_ALIGN);
	if (mem == NULL)
		fail("decider", "out of memory (raise -m)");
	if (lcmp_decider_init(mem, lcmp_decider_size(slots), slots, &lc, &d) != LCMP_OK)
		fail("lcmp_decider_init", "failed");
	ret = lcmp_install(d, blob, blob_len);
	if (ret != LCMP_OK)
		fail(argv[1], lcmp_strerror(ret));

	pkts = rte_zmalloc("bench_pkts", sizeof(*pkts) * n, 64);
	keys = rte_zmalloc("bench_keys", sizeof(*keys) * n, 64);
	keyptr = rte_zmalloc("bench_keyptr", sizeof(*keyptr) * n, 64);
	dec = rte_zmalloc("bench_dec", sizeof(*dec) * BURST, 64);
	if (pkts == NULL || keys == NULL || keyptr == NULL || dec == NULL)
		fail("keys", "out of memory (raise -m)");
	for (i = 0; i < n; i++) {
		uint32_t src = 0x0A000000u ^ (uint32_t)(i * 0x9E3779B9u);
		uint32_t dst = 0x0A070001u;
		uint16_t sport = (uint16_t)(i >> 16) ^ 0xC000, dport = 4791;

		pkts[i].flow = lcmp_flow_v4(src, dst, sport, dport, 17);
		pkts[i].group = 8;
	}
	/* Pin every flow, then shuffle into a random lookup order. */
	for (i = 0; i < n; i += BURST) {
		size_t m = n - i < BURST ? n - i : BURST;

		lcmp_on_packets(d, 10, pkts + i, m, dec);
	}
	lcmp_flow_cache_usage(d, NULL, &used);
	for (i = n - 1; i > 0; i--) {
		size_t j = rng() % (i + 1);
		struct lcmp_packet t = pkts[i];

		pkts[i] = pkts[j];
		pkts[j] = t;
	}

	{
		struct rte_hash_parameters hp = {
			.name = "bench_flows",
			.entries = (uint32_t)slots,
			.key_len = sizeof(struct key5),
			.hash_func = rte_hash_crc,
			.hash_func_init_val = 0,
			.socket_id = (int)rte_socket_id(),
		};

		h = rte_hash_create(&hp);
		if (h == NULL)
			fail("rte_hash_create", rte_strerror(rte_errno));
	}
	for (i = 0; i < n; i++) {
		const struct lcmp_flow *fl = &pkts[i].flow;

		memcpy(&keys[i].src, fl->src, 4);
		memcpy(&keys[i].dst, fl->dst, 4);
		keys[i].sport = fl->sport;
		keys[i].dport = fl->dport;
		keys[i].proto = fl->proto;
		keyptr[i] = &keys[i];
		if (rte_hash_add_key_data(h, &keys[i], (void *)(uintptr_t)(i % 6)) != 0)
			fail("rte_hash_add_key_data", "table full");
	}

	for (r = 0; r < rounds; r++) {
		uint64_t t0, t1, c0, c1;
		size_t b = n / BURST * BURST;

		c0 = cpu_ns();
		t0 = rte_rdtsc_precise();
		for (i = 0; i < b; i += BURST) {
			void *data[BURST];
			uint64_t hits = 0;

			rte_hash_lookup_bulk_data(h, keyptr + i, BURST, &hits, data);
			sink += hits + (uintptr_t)data[BURST - 1];
		}
		t1 = rte_rdtsc_precise();
		c1 = cpu_ns();
		w_hash[r] = (double)(t1 - t0) * 1e9 / (double)hz / (double)b;
		t_hash[r] = (double)(c1 - c0) / (double)b;

		c0 = cpu_ns();
		t0 = rte_rdtsc_precise();
		for (i = 0; i < b; i += BURST) {
			lcmp_on_packets(d, 20, pkts + i, BURST, dec);
			sink += dec[BURST - 1].port;
		}
		t1 = rte_rdtsc_precise();
		c1 = cpu_ns();
		w_burst[r] = (double)(t1 - t0) * 1e9 / (double)hz / (double)b;
		t_burst[r] = (double)(c1 - c0) / (double)b;

		c0 = cpu_ns();
		for (i = 0; i < b; i++) {
			lcmp_on_packet(d, 20, &pkts[i].flow, pkts[i].group, dec);
			sink += dec[0].port;
		}
		c1 = cpu_ns();
		t_single[r] = (double)(c1 - c0) / (double)b;

		c0 = cpu_ns();
		for (i = 0; i < b; i++)
			sink += rte_hash_crc(&pkts[i].flow, sizeof(pkts[i].flow), 0) % 4;
		c1 = cpu_ns();
		t_crc[r] = (double)(c1 - c0) / (double)b;

		c0 = cpu_ns();
		for (i = 0; i < b; i++) {
			uint64_t hv;

			crypto_shorthash((unsigned char *)&hv, (const unsigned char *)&pkts[i].flow,
					 sizeof(pkts[i].flow), sip_key);
			sink += hv % 4;
		}
		c1 = cpu_ns();
		t_sip[r] = (double)(c1 - c0) / (double)b;
	}
	{
		struct lcmp_counters c;
		double hash = median(t_hash, rounds), burst = median(t_burst, rounds);

		lcmp_get_counters(d, &c);
		printf("slots %zu, flows %zu (pinned %zu), %u rounds, sink %" PRIu64 "\n",
		       slots, n, used, rounds, sink & 1);
		printf("rte_hash_lookup_bulk_data: %.1f ns/key (wall %.1f)\n", hash,
		       median(w_hash, rounds));
		printf("lcmp_on_packets (burst 32): %.1f ns/packet (%.2fx rte_hash; wall %.1f)\n",
		       burst, burst / hash, median(w_burst, rounds));
		printf("lcmp_on_packet (one at a time): %.1f ns/packet\n",
		       median(t_single, rounds));
		printf("dispatcher hash over a %zu-byte lcmp_flow: rte_hash_crc %.1f ns/key, "
		       "SipHash-2-4 (crypto_shorthash) %.1f ns/key\n", sizeof(pkts[0].flow),
		       median(t_crc, rounds), median(t_sip, rounds));
		printf("counters: packets=%" PRIu64 " hits=%" PRIu64 " new_flows=%" PRIu64
		       " no_route=%" PRIu64 "\n", c.packets, c.hits, c.new_flows, c.no_route);
	}
	rte_hash_free(h);
	rte_eal_cleanup();
	return 0;
}
