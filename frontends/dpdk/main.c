/* SPDX-License-Identifier: Apache-2.0
 *
 * lcmp-fwd: an l3fwd-style DPDK application that routes with LCMP
 * (liblcmp_ffi.a, include/lcmp.h). docs/dpdk.md is its manual.
 *
 *   lcmp-fwd [EAL args] -- -c CONFIG [options]
 *
 * Lcores: the main lcore is the control plane (table installs, queue
 * samples, link events, statistics); with one worker the worker polls the
 * RX queues itself; with several, either one dispatcher lcore hashes each
 * packet's 5-tuple to a worker ring (--dispatch sw, the default: a flow
 * always lands on the same worker), or every worker polls its own RSS
 * queue of every RX port (--dispatch rss). Each worker owns one LCMP
 * decider and one TX queue per egress port, and runs:
 *
 *   RX burst (32) -> destination MAC check -> parse -> VLAN, TTL checks ->
 *   route group (LPM) -> lcmp_on_packets -> TTL/hop limit - 1 (RFC 1624
 *   checksum update), VLAN tags stripped -> MAC rewrite for the next hop
 *   -> TX burst per port
 *
 * Tables: the control lcore installs a blob once into a new lcmp_tables
 * object (validated and compiled there, one copy for every worker) and
 * publishes it as a new generation (one atomic pointer). Each worker
 * attaches its decider to a new generation between two bursts
 * (lcmp_use_tables: hitless, pinned flows keep their ports; it releases
 * the previous generation). The control lcore frees the old generation
 * only after every worker has passed a quiescent state (rte_rcu_qsbr: no
 * worker still reads the old struct table_gen) and the object's user
 * count is 0 (no decider reads its tables). Samples go to each worker
 * through its own control ring (dropped when it is full), link states
 * through two published masks that every worker applies (never lost), so
 * a decider is only ever touched by the lcore that owns it.
 */
#define _GNU_SOURCE /* memmem */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include <sodium.h>

#include "lcmp.h"
#include "parse.h"

#define BURST 32
#define PREFETCH_AHEAD 3 /* frames whose headers are prefetched (l3fwd's PREFETCH_OFFSET) */
#define MAX_WORKERS 16
#define MAX_RX_PORTS 8
#define MAX_ROUTES 4096
#define RX_DESC 1024
#define TX_DESC 1024
#define CTL_RING 1024
#define TXQ_MAX 512 /* packets a worker holds per port while TX is busy */
#define GC_BUDGET 64
/* A port's TX queue is sent when it holds BURST frames, when RX finds
 * nothing, and at the latest this long after the last drain: l3fwd's
 * BURST_TX_DRAIN_US. Sending every port's few frames after every RX
 * burst made six TX calls of about five frames out of each burst of 32
 * routed over six ports (issue 36 item 5). */
#define TX_DRAIN_US 100
#define MBUF_CACHE 256 /* the mbuf pool's per-lcore cache */
/* The smallest --mbuf-size: the headers a worker reads and rewrites
 * (Ethernet, two VLAN tags, an IPv6 header and the L4 ports, 80 bytes)
 * must be in a frame's first segment, with room to spare. */
#define MIN_MBUF_SIZE 128

/* ---- configuration ----------------------------------------------------- */

struct egress {
	bool used;
	int line; /* its 'port' line in the config */
	uint16_t dpdk_port;
	struct rte_ether_addr next_hop;
	struct rte_ether_addr src; /* the DPDK port's MAC */
};
/* The worker writes both MACs with one copy (route_burst). */
_Static_assert(offsetof(struct egress, src) ==
		       offsetof(struct egress, next_hop) + RTE_ETHER_ADDR_LEN,
	       "next_hop and src adjacent, as in an Ethernet header");

struct app_config {
	uint16_t rx_ports[MAX_RX_PORTS];
	unsigned int n_rx_ports;
	struct egress egress[LCMP_PORTS]; /* by LCMP port */
	char tables_path[4096];
	/* With any 'trust' line, only signed blobs of a newer generation are
	 * installed (the keys themselves: `trust`, below). */
	bool signed_only;
	/* The state file ('state' line): the trusted keys, their floors and
	 * the removed key ids, kept across restarts. */
	char state_path[4096];
	/* This switch's scope ('scope' line, `lcmp tables scope`): a signed
	 * blob for another switch or topology is refused. Required with
	 * 'trust'. */
	uint8_t scope[LCMP_SCOPE_LEN];
	bool has_scope;
	/* Egress DPDK ports (deduplicated), for queue setup and TX. */
	bool dpdk_is_egress[RTE_MAX_ETHPORTS];
	uint16_t egress_ports[RTE_MAX_ETHPORTS];
	unsigned int n_egress_ports;
	struct rte_lpm *lpm4;
	struct rte_lpm6 *lpm6;
	/* Default routes (0.0.0.0/0, ::/0): rte_lpm takes depths from 1, so
	 * a miss in the LPM falls back to these. */
	bool has_default4, has_default6;
	uint16_t default4, default6;
	/* Every route's group and line, for the check against the tables. */
	struct {
		uint16_t group;
		int line;
	} routes[2 * MAX_ROUTES + 2];
	unsigned int n_routes;
	int tables_line;
	const char *path; /* the config file */
};

struct options {
	const char *config;
	unsigned int workers;
	size_t flows;
	unsigned int stats_ms;
	unsigned int sample_us;
	unsigned int link_ms;
	unsigned int exit_idle_ms;
	const char *control;
	uint64_t install_after; /* 0: none */
	const char *install_path;
	bool hold;
	bool rss;
	uint32_t seed;
	bool seed_set; /* --seed given; else a random seed per start */
	uint8_t scheme;
	unsigned int stall_ms;  /* test only: worker 0 sleeps this long at start */
	unsigned int mbufs;     /* 0: 8192 + 4096 per worker */
	unsigned int mbuf_size; /* data room after the headroom */
	unsigned int worker_ring; /* --dispatch sw: each worker's ring (a power of two) */
	bool promiscuous;         /* route unicast frames for any MAC */
	uint8_t vlan;             /* VLAN_STRIP, VLAN_KEEP or VLAN_DROP */
};

enum { VLAN_STRIP, VLAN_KEEP, VLAN_DROP };

static struct app_config cfg;
/* Each receiving DPDK port's own MAC: frames for another are not routed
 * (unless --promiscuous). */
static struct rte_ether_addr rx_mac[RTE_MAX_ETHPORTS];
static struct options opt = {
	.workers = 1,
	.flows = 65536,
	.stats_ms = 1000,
	.sample_us = 1000,
	.link_ms = 100,
	.exit_idle_ms = 0,
	.hold = true,
	.scheme = LCMP_SCHEME_LCMP,
	.worker_ring = 4096,
};

/* ---- table generations ------------------------------------------------- */

/* One published table generation: the one compiled tables object that
 * every worker's decider reads. */
struct table_gen {
	uint64_t seq;        /* publication order, 1, 2, ... */
	uint64_t generation; /* the blob's own generation (header) */
	size_t len;          /* the blob's bytes */
	struct lcmp_tables *tables;
	void *mem;           /* the object's memory (rte_malloc) */
	unsigned int signer; /* signed: the key (trust.keys) that signed it */
};

static struct table_gen *volatile g_gen; /* read with __atomic_load_n */

/* The link state every decider must have: bit P of g_link_known says that
 * LCMP port P's state is known, bit P of g_link_up that it is up. The
 * control lcore writes them (g_link_up first, then g_link_known with
 * release), every worker compares them with its own at every loop. A
 * state, not a message: it cannot be dropped for a full ring or wait
 * behind queued samples, and a worker that was stalled applies the latest
 * state before its next packet (docs/dpdk.md, "Table updates, samples and
 * link events"). */
static uint64_t g_link_known, g_link_up;
_Static_assert(LCMP_PORTS <= 64, "one bit per LCMP port in a 64-bit mask");
static struct rte_rcu_qsbr *g_qsbr;

/* ---- per-lcore state --------------------------------------------------- */

enum ctl_kind { CTL_SAMPLE = 1, CTL_EXPLAIN };

struct ctl_msg { /* 16 bytes: an rte_ring element */
	uint8_t kind;
	uint8_t port; /* LCMP port */
	uint8_t pad[2];
	uint32_t now;
	uint64_t bytes;
};

/* Counters a worker publishes (relaxed stores) and the main lcore reads. */
struct worker_stats {
	uint64_t rx, tx, truncated, non_ip, l2_multicast, other_mac, vlan_dropped,
		ttl_expired, unknown_dst, no_route, unmapped, tx_full, samples, links,
		installs, install_errors;
	uint64_t seq; /* the generation it runs */
	uint64_t generation;
} __rte_cache_aligned;

struct txq {
	uint16_t n;
	struct rte_mbuf *pkts[TXQ_MAX];
};

struct worker {
	unsigned int id;
	unsigned int lcore;
	struct lcmp_decider *d;
	struct rte_ring *in;  /* from the dispatcher (--dispatch sw) */
	struct rte_ring *ctl; /* samples and link events from the control lcore */
	struct txq *txq;      /* by DPDK port */
	uint64_t *backlog_bytes; /* by DPDK port: the queue-depth proxy */
	struct worker_stats stats;
	uint64_t link_known, link_up; /* the link states its decider has */
	struct lcmp_counters lcmp; /* copied at exit */
	uint64_t cpu_ns;           /* the worker thread's CPU time, at exit */
	/* Published every 1024 loops (relaxed stores; telemetry reads them):
	 * the decider's counters and its flow cache's use. */
	struct lcmp_counters live;
	uint64_t cache_slots, cache_used;
	uint64_t routed[LCMP_PORTS]; /* packets routed to each LCMP port */
} __rte_cache_aligned;

/* An 'explain' of the control file: the control lcore writes the request
 * and sends CTL_EXPLAIN to the flow's worker, which answers with
 * lcmp_explain on its own decider (no other thread may read it). */
static struct {
	struct lcmp_flow flow;
	uint16_t group;
	int32_t rc;
	struct lcmp_explanation ex;
	int done; /* set by the worker (release) */
} g_explain;

static uint64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct worker workers[MAX_WORKERS];
static unsigned int dispatcher_lcore = RTE_MAX_LCORE;
/* Set by a signal, the control file or the idle exit; read by every lcore
 * (always through __atomic builtins: lock-free on an int, so also safe in
 * the signal handler). */
static int quit;
static uint64_t tsc_per_us;

/* Test hook (--install-after): RX stops at packet N until every worker
 * runs the new generation, so the switch point is exact. */
static uint64_t g_rx_total;     /* packets received, all RX lcores */
static uint64_t g_dispatched;   /* handed to worker rings */
static int g_hook_state;        /* 0 idle, 1 requested, 2 done */

static void __rte_noreturn __rte_format_printf(1, 2)
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("lcmp-fwd: error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static inline uint32_t
now_us(void)
{
	return (uint32_t)(rte_rdtsc() / tsc_per_us);
}

#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
/* A counter only its lcore writes, read by the main lcore. */
#define INC(x, n) STORE(x, (x) + (n))

/* ---- blobs --------------------------------------------------------------- */

/* Reads a whole regular file (at most 64 MiB); NULL with `*why` set. The
 * file is opened non-blocking and checked with fstat before any read, so
 * a FIFO or a device named by the control file is refused at once
 * instead of blocking the control lcore. */
static uint8_t *
read_file(const char *path, size_t *len, const char **why)
{
	struct stat st;
	FILE *f;
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		*why = strerror(errno);
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "rb");
	if (f == NULL) {
		*why = strerror(errno);
		close(fd);
		return NULL;
	}
	*why = "out of memory";
	for (;;) {
		size_t got;

		if (n == cap) {
			uint8_t *nb;

			cap = cap ? cap * 2 : 4096;
			if (cap > (64u << 20)) {
				free(buf);
				fclose(f);
				*why = strerror(EFBIG);
				return NULL;
			}
			nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		*why = strerror(errno);
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* ---- trust: keys, per-key floors, the state file ------------------------ */

/* The trusted keys, each with its rollback floor, and the key ids removed
 * for good (docs/dpdk.md, "Trusted keys and the state file"). Only the
 * control lcore reads or changes them. A signed blob must be newer than
 * the largest floor of the keys trusted now: a key's floor is the newest
 * generation it signed that this device installed, so removing a key
 * (a rotation) drops its floor with it, as TUF resets the versions it
 * stored when a role's keys rotate, and a stolen key's generation
 * u64::MAX is undone by rotating that key away. */
#define MAX_REVOKED 64

struct trust_key {
	uint8_t pk[LCMP_PUBLIC_KEY_LEN];
	uint64_t id; /* the envelope's key id: the key's first 8 bytes, LE */
	uint64_t floor;
};

struct trust_set {
	struct trust_key keys[LCMP_MAX_TRUSTED_KEYS];
	unsigned int n;
	uint64_t revoked[MAX_REVOKED];
	unsigned int n_revoked;
};

static struct trust_set trust;
static uint64_t trust_changes, trust_refused;

static uint64_t
key_id(const uint8_t pk[LCMP_PUBLIC_KEY_LEN])
{
	uint64_t id = 0;
	int i;

	for (i = 7; i >= 0; i--)
		id = (id << 8) | pk[i];
	return id;
}

static uint64_t
trust_floor(const struct trust_set *t)
{
	uint64_t floor = 0;
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (t->keys[i].floor > floor)
			floor = t->keys[i].floor;
	return floor;
}

static int
trust_find(const struct trust_set *t, uint64_t id)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (t->keys[i].id == id)
			return (int)i;
	return -1;
}

static bool
trust_is_revoked(const struct trust_set *t, uint64_t id)
{
	unsigned int i;

	for (i = 0; i < t->n_revoked; i++)
		if (t->revoked[i] == id)
			return true;
	return false;
}

/* Hex digits into bytes: exactly 2 * n digits; 0 on success. */
static int
parse_hex(const char *hex, uint8_t *out, size_t n)
{
	size_t i;

	if (strlen(hex) != 2 * n)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned int v;

		if (!isxdigit((unsigned char)hex[2 * i]) || !isxdigit((unsigned char)hex[2 * i + 1]) ||
		    sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

/* A key id as `lcmp tables keygen` prints it: 16 hex digits. */
static int
parse_key_id(const char *s, uint64_t *id)
{
	char *end;

	if (strlen(s) != 16 || !isxdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	*id = strtoull(s, &end, 16);
	return *end == '\0' && errno == 0 ? 0 : -1;
}

static void
hex_of(const uint8_t *b, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/* Writes the state file atomically: a temporary file beside it, written
 * and fsync'ed, renamed over it, and the directory fsync'ed, so a crash
 * leaves the old state or the new one, never a torn one. 0, or -1 with
 * `*why` set. */
static int
state_write(const struct trust_set *t, const char **why)
{
	char tmp[sizeof(cfg.state_path) + 8], dir[sizeof(cfg.state_path)];
	char text[256 + LCMP_MAX_TRUSTED_KEYS * 128 + MAX_REVOKED * 32];
	size_t len = 0, off = 0;
	unsigned int i;
	char *slash;
	int fd, dfd;

	len += (size_t)snprintf(text + len, sizeof(text) - len,
				"# lcmp-fwd state (docs/dpdk.md, \"Trusted keys and the state "
				"file\"): written by lcmp-fwd, do not edit while it runs\n"
				"lcmp-fwd-state 1\n");
	for (i = 0; i < t->n; i++) {
		char pk[2 * LCMP_PUBLIC_KEY_LEN + 1];

		hex_of(t->keys[i].pk, LCMP_PUBLIC_KEY_LEN, pk);
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"key %016" PRIx64 " %s %" PRIu64 "\n", t->keys[i].id, pk,
					t->keys[i].floor);
	}
	for (i = 0; i < t->n_revoked; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "revoked %016" PRIx64 "\n",
					t->revoked[i]);
	if (len >= sizeof(text)) { /* cannot happen: sized for the limits */
		errno = EOVERFLOW;
		goto fail;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", cfg.state_path);
	snprintf(dir, sizeof(dir), "%s", cfg.state_path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			unlink(tmp);
			goto fail;
		}
		off += (size_t)w;
	}
	if (fsync(fd) != 0) {
		close(fd);
		unlink(tmp);
		goto fail;
	}
	if (close(fd) != 0 || rename(tmp, cfg.state_path) != 0) {
		unlink(tmp);
		goto fail;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		goto fail;
	if (fsync(dfd) != 0) {
		close(dfd);
		goto fail;
	}
	close(dfd);
	return 0;
fail:
	*why = strerror(errno);
	return -1;
}

/* Reads the state file into `t` at start. 1 if it exists (its keys are
 * the trusted set), 0 if it does not; dies (one line) if it is bad. */
static int
state_read(struct trust_set *t)
{
	const char *path = cfg.state_path, *why;
	size_t len = 0;
	char *text, *line, *save = NULL;
	int n = 0;
	bool header = false;

	text = (char *)read_file(path, &len, &why);
	if (text == NULL) {
		struct stat st;

		if (lstat(path, &st) != 0 && errno == ENOENT)
			return 0;
		die("state %s: %s", path, why);
	}
	if (memchr(text, '\0', len) != NULL || len == 0 || text[len - 1] != '\n')
		die("state %s: not a state file", path);
	text[len - 1] = '\0';
	memset(t, 0, sizeof(*t));
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *argv[5], *s2 = NULL, *tok;
		int argc = 0;

		n++;
		if (line[0] == '#')
			continue;
		for (tok = strtok_r(line, " ", &s2); tok != NULL && argc < 5; tok = strtok_r(NULL, " ", &s2))
			argv[argc++] = tok;
		if (!header) {
			if (argc != 2 || strcmp(argv[0], "lcmp-fwd-state") != 0 || strcmp(argv[1], "1") != 0)
				die("state %s:%d: expected 'lcmp-fwd-state 1'", path, n);
			header = true;
		} else if (argc == 4 && strcmp(argv[0], "key") == 0) {
			struct trust_key *k = &t->keys[t->n];
			uint64_t id;
			char *end;

			if (t->n == LCMP_MAX_TRUSTED_KEYS)
				die("state %s:%d: more than %d keys", path, n, LCMP_MAX_TRUSTED_KEYS);
			if (parse_key_id(argv[1], &id) != 0 ||
			    parse_hex(argv[2], k->pk, LCMP_PUBLIC_KEY_LEN) != 0 || key_id(k->pk) != id ||
			    trust_find(t, id) >= 0 || !isdigit((unsigned char)argv[3][0]))
				die("state %s:%d: bad key line", path, n);
			errno = 0;
			k->floor = strtoull(argv[3], &end, 10);
			if (*end != '\0' || errno != 0)
				die("state %s:%d: bad key line", path, n);
			k->id = id;
			t->n++;
		} else if (argc == 2 && strcmp(argv[0], "revoked") == 0) {
			if (t->n_revoked == MAX_REVOKED)
				die("state %s:%d: more than %d revoked keys", path, n, MAX_REVOKED);
			if (parse_key_id(argv[1], &t->revoked[t->n_revoked]) != 0)
				die("state %s:%d: bad revoked line", path, n);
			t->n_revoked++;
		} else {
			die("state %s:%d: expected 'key ID PUBKEY FLOOR' or 'revoked ID'", path, n);
		}
	}
	free(text);
	if (t->n == 0)
		die("state %s: no trusted key", path);
	return 1;
}

/* Makes `next` the trusted set: written to the state file first (if
 * any), so nothing is trusted that a restart would forget. */
static int
trust_commit(const struct trust_set *next, const char **why)
{
	if (cfg.state_path[0] != '\0' && state_write(next, why) != 0)
		return -1;
	trust = *next;
	return 0;
}

/* Reads an Ed25519 public key from a SubjectPublicKeyInfo PEM file (what
 * `lcmp tables keygen --pubkey` and `openssl pkey -pubout` write): the
 * base64 between the BEGIN and END PUBLIC KEY lines is 44 bytes of DER,
 * the Ed25519 SPKI prefix and the key. Written by hand because neither
 * libc nor DPDK decodes base64. 0, or -1 with `why` set. */
static int
read_public_key(const char *path, uint8_t key[LCMP_PUBLIC_KEY_LEN], const char **why)
{
	static const uint8_t spki[12] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
					 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
	static const char begin[] = "-----BEGIN PUBLIC KEY-----";
	static const char end[] = "-----END PUBLIC KEY-----";
	uint8_t der[64];
	size_t len = 0, n = 0, i;
	uint32_t acc = 0;
	unsigned int bits = 0;
	char *text = (char *)read_file(path, &len, why), *p, *q;

	if (text == NULL)
		return -1;
	*why = "not an Ed25519 public key (PEM SubjectPublicKeyInfo)";
	p = memmem(text, len, begin, sizeof(begin) - 1);
	q = p != NULL ? memmem(p, len - (size_t)(p - text), end, sizeof(end) - 1) : NULL;
	if (p == NULL || q == NULL) {
		free(text);
		return -1;
	}
	for (p += sizeof(begin) - 1; p < q; p++) {
		const char *alphabet =
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *at;

		if (*p == '\r' || *p == '\n' || *p == ' ' || *p == '\t')
			continue;
		if (*p == '=')
			break;
		at = *p != '\0' ? strchr(alphabet, *p) : NULL;
		if (at == NULL || n == sizeof(der)) {
			free(text);
			return -1;
		}
		acc = (acc << 6) | (uint32_t)(at - alphabet);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			der[n++] = (uint8_t)(acc >> bits);
		}
	}
	free(text);
	if (n != sizeof(spki) + LCMP_PUBLIC_KEY_LEN || memcmp(der, spki, sizeof(spki)) != 0)
		return -1;
	for (i = 0; i < LCMP_PUBLIC_KEY_LEN; i++)
		key[i] = der[sizeof(spki) + i];
	return 0;
}

/* Frees a generation no decider reads any more (its user count is 0):
 * the object is ended first (lcmp_tables_fini clears its magic word), so
 * that the memory, handed out again, is not taken for a live object. */
static void
free_gen(struct table_gen *g)
{
	if (g->tables != NULL)
		lcmp_tables_fini(g->tables);
	rte_free(g->mem);
	free(g);
}

/* Why an install was refused (counted by reason: the "exit: installs"
 * line and the telemetry). */
enum refusal {
	REFUSED_READ,      /* the file: missing, not regular, too big, memory */
	REFUSED_BLOB,      /* not a valid blob: format, CRC, trailing bytes, tables */
	REFUSED_SIGNATURE, /* signed mode: unsigned, unknown key, bad signature,
			    * scope, expiry; unsigned mode: a signed blob */
	REFUSED_ROLLBACK,  /* a generation not newer than the installed one */
	REFUSED_CONFIG,    /* tables that do not match the config */
	REFUSED_STATE,     /* the state file could not be written */
	REFUSED_N
};
static const char *const refusal_name[REFUSED_N] = {"read", "blob", "signature", "rollback",
						    "config", "state"};
static uint64_t installs_published, installs_refused[REFUSED_N];

static enum refusal
refusal_of(int32_t rc)
{
	if (rc == LCMP_ERR_SIG_ROLLBACK)
		return REFUSED_ROLLBACK;
	if (rc <= LCMP_ERR_SIG_BAD_SIGNATURE && rc >= LCMP_ERR_SIG_EXPIRED)
		return REFUSED_SIGNATURE;
	return REFUSED_BLOB;
}

/* The tables of `g` against the config (docs/dpdk.md, "Configuration"):
 * every route's group and every 'port' line's LCMP port are in the
 * tables, and every port of the tables has a 'port' line. Asked of a
 * probe decider attached to the tables (the C ABI lists neither ports
 * nor groups): lcmp_set_port answers LCMP_ERR_NO_SUCH_PORT for a port
 * the tables do not list, lcmp_explain LCMP_REASON_UNKNOWN_GROUP for a
 * group. 0, or -1 with the reason in `why` (the config's file and line). */
static int
check_tables(const struct table_gen *g, const char *blob_path, char *why, size_t why_len)
{
	struct lcmp_config lc = {.size = sizeof(lc), .abi_version = LCMP_ABI_VERSION};
	struct lcmp_decider *d = NULL;
	struct lcmp_flow flow = {.family = LCMP_FAMILY_V4, .proto = 17};
	size_t size = RTE_ALIGN_CEIL(lcmp_decider_shared_size(LCMP_MIN_FLOWS), LCMP_DECIDER_ALIGN);
	void *mem = aligned_alloc(LCMP_DECIDER_ALIGN, size);
	unsigned int lp, i;
	int ret = 0;

	if (mem == NULL || lcmp_decider_init_shared(mem, size, LCMP_MIN_FLOWS, &lc, &d) != LCMP_OK ||
	    lcmp_use_tables(d, g->tables) != LCMP_OK) {
		snprintf(why, why_len, "cannot check the tables against the config");
		ret = -1;
		goto out;
	}
	for (lp = 0; lp < LCMP_PORTS && ret == 0; lp++) {
		bool listed = lcmp_set_port(d, (uint8_t)lp, 1) == LCMP_OK;

		if (cfg.egress[lp].used && !listed) {
			snprintf(why, why_len, "%s:%d: LCMP port %u is not in the tables (%s)",
				 cfg.path, cfg.egress[lp].line, lp, blob_path);
			ret = -1;
		} else if (!cfg.egress[lp].used && listed) {
			snprintf(why, why_len, "%s:%d: the tables (%s) list LCMP port %u, which has "
				 "no 'port' line", cfg.path, cfg.tables_line, blob_path, lp);
			ret = -1;
		}
	}
	for (i = 0; i < cfg.n_routes && ret == 0; i++) {
		struct lcmp_explanation ex;

		if (lcmp_explain(d, 0, &flow, cfg.routes[i].group, &ex) != LCMP_OK ||
		    ex.reason == LCMP_REASON_UNKNOWN_GROUP) {
			snprintf(why, why_len, "%s:%d: route group %u is not in the tables (%s)",
				 cfg.path, cfg.routes[i].line, cfg.routes[i].group, blob_path);
			ret = -1;
		}
	}
out:
	if (d != NULL) {
		lcmp_release_tables(d);
		lcmp_decider_fini(d);
	}
	free(mem);
	return ret;
}

/* Reads a blob and installs it into a new tables object; NULL (and one
 * line on stderr, the reason in `*refused`) if bad. Workers only ever see
 * valid tables. A signed blob's signer is g->signer (an index into
 * trust.keys). */
static struct table_gen *
load_gen(const char *path, uint64_t seq, enum refusal *refused)
{
	struct table_gen *g;
	size_t len = 0;
	int32_t rc;
	const char *why;
	uint8_t *blob = read_file(path, &len, &why);

	*refused = REFUSED_READ;
	if (blob == NULL) {
		fprintf(stderr, "lcmp-fwd: %s: %s\n", path, why);
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (g != NULL)
		g->mem = rte_zmalloc("lcmp_tables", lcmp_tables_size(), lcmp_tables_align());
	if (g == NULL || g->mem == NULL) {
		fprintf(stderr, "lcmp-fwd: %s: out of memory\n", path);
		free(g);
		free(blob);
		return NULL;
	}
	if (cfg.signed_only) {
		/* Signed: the envelope's length is the file's; the blob's
		 * generation must be newer than every trusted key's floor.
		 * One key at a time, so that the signer is known (its floor
		 * moves): a key id that is not the key's is refused before
		 * the signature is verified, so the other key costs no
		 * verification. */
		uint64_t signed_gen = 0;
		/* The host's clock: a blob past its signed expiry is refused. */
		time_t now = time(NULL);
		unsigned int i;

		rc = lcmp_tables_init(g->mem, lcmp_tables_size(), &g->tables);
		for (i = 0; rc == LCMP_OK && i < trust.n; i++) {
			rc = lcmp_tables_install_signed(g->tables, blob, len, trust.keys[i].pk, 1,
							cfg.scope, now > 0 ? (uint64_t)now : 0,
							trust_floor(&trust), &signed_gen);
			if (rc == LCMP_OK) {
				g->signer = i;
				break;
			}
			if (rc == LCMP_ERR_SIG_UNKNOWN_KEY && i + 1 < trust.n)
				rc = LCMP_OK; /* not this key's: the next one */
		}
	} else {
		size_t blob_len = 0;
		static const uint8_t signed_magic[4] = {'L', 'C', 'M', 'S'};

		if (len >= sizeof(signed_magic) && memcmp(blob, signed_magic, 4) == 0) {
			/* The signed envelope (lcmp tables sign) is not a
			 * blob's bad magic: say what it is. */
			fprintf(stderr, "lcmp-fwd: %s: a signed blob, and the config has no 'trust' "
				"line (add the signer's key: 'trust PUBKEY.pem' and 'scope HEX')\n",
				path);
			*refused = REFUSED_SIGNATURE;
			free(blob);
			free_gen(g);
			return NULL;
		}
		rc = lcmp_blob_len(blob, len, &blob_len);
		if (rc == LCMP_OK && blob_len != len) {
			fprintf(stderr, "lcmp-fwd: %s: %zu bytes after the blob's end (a blob file "
				"is exactly what lcmp tables -o wrote)\n", path, len - blob_len);
			*refused = REFUSED_BLOB;
			free(blob);
			free_gen(g);
			return NULL;
		}
		if (rc == LCMP_OK)
			rc = lcmp_tables_init(g->mem, lcmp_tables_size(), &g->tables);
		if (rc == LCMP_OK)
			rc = lcmp_tables_install(g->tables, blob, len);
	}
	free(blob);
	if (rc != LCMP_OK) {
		*refused = refusal_of(rc);
		fprintf(stderr, "lcmp-fwd: %s: %s (%d)\n", path,
			lcmp_strerror(rc), (int)rc);
		free_gen(g);
		return NULL;
	}
	g->seq = seq;
	g->len = len;
	lcmp_tables_generation(g->tables, &g->generation);
	if (!cfg.signed_only) {
		/* The rollback guard of unsigned mode: only a newer generation
		 * than the one running (within this run: nothing is kept
		 * across a restart without 'trust' and 'state'). */
		const struct table_gen *cur = __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE);

		if (cur != NULL && g->generation <= cur->generation) {
			fprintf(stderr, "lcmp-fwd: %s: rollback: generation %" PRIu64
				" not newer than the installed %" PRIu64 "\n", path, g->generation,
				cur->generation);
			*refused = REFUSED_ROLLBACK;
			free_gen(g);
			return NULL;
		}
	}
	{
		char why_buf[4096 + 256];

		if (check_tables(g, path, why_buf, sizeof(why_buf)) != 0) {
			fprintf(stderr, "lcmp-fwd: %s%s\n",
				__atomic_load_n(&g_gen, __ATOMIC_ACQUIRE) == NULL ? "error: " : "",
				why_buf);
			*refused = REFUSED_CONFIG;
			free_gen(g);
			return NULL;
		}
	}
	return g;
}

static uint64_t gen_seq;

/* Publishes a new generation and frees the old one once no worker can
 * reach it. Returns 0, or -1 if the blob was rejected (nothing changes). */
static int
install_blob(const char *path)
{
	enum refusal refused;
	struct table_gen *g = load_gen(path, gen_seq + 1, &refused), *old;
	uint64_t token;

	if (g == NULL) {
		installs_refused[refused]++;
		return -1;
	}
	if (cfg.signed_only) {
		/* The signer's floor is persisted before any worker can use
		 * the tables (docs/tables.md, "What a device persists"). */
		struct trust_set next = trust;
		const char *why;

		next.keys[g->signer].floor = g->generation;
		if (trust_commit(&next, &why) != 0) {
			fprintf(stderr, "lcmp-fwd: %s: not installed: state %s: %s\n", path,
				cfg.state_path, why);
			installs_refused[REFUSED_STATE]++;
			free_gen(g);
			return -1;
		}
	}
	gen_seq++;
	installs_published++;
	old = __atomic_exchange_n(&g_gen, g, __ATOMIC_RELEASE);
	/* After the grace period no worker holds `old` itself... */
	token = rte_rcu_qsbr_start(g_qsbr);
	rte_rcu_qsbr_check(g_qsbr, token, true);
	if (old != NULL) {
		uint32_t users = 1;

		/* ...and once every worker attached to the new generation
		 * (at its next control step), none reads its tables. */
		while (lcmp_tables_users(old->tables, &users) == LCMP_OK && users != 0)
			rte_delay_us_sleep(10);
		free_gen(old);
	}
	printf("tables: %s generation %" PRIu64 " published (seq %" PRIu64
	       ", %zu bytes)\n", path, g->generation, g->seq, g->len);
	fflush(stdout);
	return 0;
}

/* ---- config file ----------------------------------------------------------- */

static int
parse_mac(const char *s, struct rte_ether_addr *mac)
{
	return rte_ether_unformat_addr(s, mac);
}

static int
parse_dpdk_port(const char *s, uint16_t *port)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s != '\0' && *end == '\0') {
		if (v >= RTE_MAX_ETHPORTS || !rte_eth_dev_is_valid_port((uint16_t)v))
			return -1;
		*port = (uint16_t)v;
		return 0;
	}
	return rte_eth_dev_get_port_by_name(s, port) == 0 ? 0 : -1;
}

static void
add_route(const char *file, int line, const char *prefix, const char *group_s)
{
	char buf[128];
	char *slash, *end;
	unsigned long depth, group;
	uint8_t a6[16];
	struct in_addr a4;

	if (strlen(prefix) >= sizeof(buf))
		die("%s:%d: bad prefix", file, line);
	strcpy(buf, prefix);
	slash = strchr(buf, '/');
	if (slash == NULL)
		die("%s:%d: prefix without /length: %s", file, line, prefix);
	*slash = '\0';
	depth = strtoul(slash + 1, &end, 10);
	if (*end != '\0')
		die("%s:%d: bad prefix length: %s", file, line, prefix);
	group = strtoul(group_s, &end, 10);
	if (*group_s == '\0' || *end != '\0' || group > 0xffff)
		die("%s:%d: bad route group: %s", file, line, group_s);
	if (inet_pton(AF_INET, buf, &a4) == 1) {
		uint32_t hop;

		if (depth > 32)
			die("%s:%d: bad IPv4 prefix length: %s", file, line, prefix);
		if (depth == 0) {
			if (cfg.has_default4)
				die("%s:%d: a second IPv4 default route: %s", file, line, prefix);
			cfg.has_default4 = true;
			cfg.default4 = (uint16_t)group;
		} else {
			if (rte_lpm_is_rule_present(cfg.lpm4, rte_be_to_cpu_32(a4.s_addr),
						    (uint8_t)depth, &hop) == 1)
				die("%s:%d: prefix %s listed twice", file, line, prefix);
			if (rte_lpm_add(cfg.lpm4, rte_be_to_cpu_32(a4.s_addr),
					(uint8_t)depth, (uint32_t)group) != 0)
				die("%s:%d: cannot add route %s", file, line, prefix);
		}
	} else if (inet_pton(AF_INET6, buf, a6) == 1) {
		uint32_t hop;

		if (depth > 128)
			die("%s:%d: bad IPv6 prefix length: %s", file, line, prefix);
		if (depth == 0) {
			if (cfg.has_default6)
				die("%s:%d: a second IPv6 default route: %s", file, line, prefix);
			cfg.has_default6 = true;
			cfg.default6 = (uint16_t)group;
		} else {
			if (rte_lpm6_is_rule_present(cfg.lpm6, a6, (uint8_t)depth, &hop) == 1)
				die("%s:%d: prefix %s listed twice", file, line, prefix);
			if (rte_lpm6_add(cfg.lpm6, a6, (uint8_t)depth, (uint32_t)group) != 0)
				die("%s:%d: cannot add route %s", file, line, prefix);
		}
	} else {
		die("%s:%d: bad address: %s", file, line, buf);
	}
	if (cfg.n_routes < RTE_DIM(cfg.routes)) {
		cfg.routes[cfg.n_routes].group = (uint16_t)group;
		cfg.routes[cfg.n_routes++].line = line;
	}
}

/* The config file (docs/dpdk.md, "Configuration"):
 *   rx DEV                          a DPDK port (id or name) to receive on
 *   port LCMP_PORT DEV NEXT_HOP_MAC an LCMP port: egress DPDK port, next hop
 *   route PREFIX/LEN GROUP          destination prefix -> route group
 *   tables BLOB                     the table blob (lcmp tables -o)
 *   trust PUBKEY.pem                a trusted public key (at most two):
 *                                   then only signed blobs are installed
 *   scope HEX                       this switch's scope (40 hex digits,
 *                                   `lcmp tables scope`), with 'trust'
 *   state FILE                      with 'trust': the trusted keys and
 *                                   their floors, kept across restarts
 * '#' starts a comment. */
static void
read_config(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int n = 0;
	struct rte_lpm_config c4 = {.max_rules = MAX_ROUTES, .number_tbl8s = 256};
	struct rte_lpm6_config c6 = {.max_rules = MAX_ROUTES, .number_tbl8s = 1 << 12};

	if (f == NULL)
		die("%s: %s", path, strerror(errno));
	cfg.lpm4 = rte_lpm_create("lcmp_routes4", (int)rte_socket_id(), &c4);
	cfg.lpm6 = rte_lpm6_create("lcmp_routes6", (int)rte_socket_id(), &c6);
	if (cfg.lpm4 == NULL || cfg.lpm6 == NULL)
		die("cannot create the route tables (rte_lpm): %s",
		    rte_strerror(rte_errno));
	cfg.path = path;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *argv[8], *save = NULL, *tok, *hash;
		int argc = 0;

		n++;
		if (strchr(line, '\n') == NULL && !feof(f))
			die("%s:%d: line longer than %zu characters", path, n, sizeof(line) - 2);
		hash = strchr(line, '#');
		if (hash != NULL)
			*hash = '\0';
		for (tok = strtok_r(line, " \t\r\n", &save); tok != NULL && argc < 8;
		     tok = strtok_r(NULL, " \t\r\n", &save))
			argv[argc++] = tok;
		if (argc == 0)
			continue;
		if (strcmp(argv[0], "rx") == 0 && argc == 2) {
			uint16_t p;

			if (cfg.n_rx_ports == MAX_RX_PORTS)
				die("%s:%d: more than %d rx ports", path, n, MAX_RX_PORTS);
			if (parse_dpdk_port(argv[1], &p) != 0)
				die("%s:%d: no DPDK port %s", path, n, argv[1]);
			cfg.rx_ports[cfg.n_rx_ports++] = p;
		} else if (strcmp(argv[0], "port") == 0 && argc == 4) {
			char *end;
			unsigned long lp = strtoul(argv[1], &end, 10);
			struct egress *e;

			if (*end != '\0' || lp >= LCMP_PORTS)
				die("%s:%d: LCMP port must be 0..%d: %s", path, n,
				    LCMP_PORTS - 1, argv[1]);
			e = &cfg.egress[lp];
			if (e->used)
				die("%s:%d: LCMP port %lu listed twice", path, n, lp);
			if (parse_dpdk_port(argv[2], &e->dpdk_port) != 0)
				die("%s:%d: no DPDK port %s", path, n, argv[2]);
			if (parse_mac(argv[3], &e->next_hop) != 0)
				die("%s:%d: bad MAC address %s", path, n, argv[3]);
			/* A router's next hop is one station. */
			if (!rte_is_unicast_ether_addr(&e->next_hop) ||
			    rte_is_zero_ether_addr(&e->next_hop))
				die("%s:%d: next hop %s is not a unicast MAC address", path, n,
				    argv[3]);
			e->used = true;
			e->line = n;
			if (!cfg.dpdk_is_egress[e->dpdk_port])
				cfg.egress_ports[cfg.n_egress_ports++] = e->dpdk_port;
			cfg.dpdk_is_egress[e->dpdk_port] = true;
		} else if (strcmp(argv[0], "route") == 0 && argc == 3) {
			add_route(path, n, argv[1], argv[2]);
		} else if (strcmp(argv[0], "tables") == 0 && argc == 2) {
			if (cfg.tables_line != 0)
				die("%s:%d: a second 'tables' line (the first is line %d)", path, n,
				    cfg.tables_line);
			cfg.tables_line = n;
			if (strlen(argv[1]) >= sizeof(cfg.tables_path))
				die("%s:%d: path too long", path, n);
			strcpy(cfg.tables_path, argv[1]);
		} else if (strcmp(argv[0], "trust") == 0 && argc == 2) {
			struct trust_key *k = &trust.keys[trust.n];
			const char *why;

			if (trust.n == LCMP_MAX_TRUSTED_KEYS)
				die("%s:%d: at most %d trusted keys", path, n, LCMP_MAX_TRUSTED_KEYS);
			if (read_public_key(argv[1], k->pk, &why) != 0)
				die("%s:%d: %s: %s", path, n, argv[1], why);
			k->id = key_id(k->pk);
			if (trust_find(&trust, k->id) >= 0)
				die("%s:%d: %s: a second key with key id %016" PRIx64, path, n, argv[1],
				    k->id);
			trust.n++;
			cfg.signed_only = true;
		} else if (strcmp(argv[0], "state") == 0 && argc == 2) {
			if (strlen(argv[1]) + 8 >= sizeof(cfg.state_path))
				die("%s:%d: path too long", path, n);
			strcpy(cfg.state_path, argv[1]);
		} else if (strcmp(argv[0], "scope") == 0 && argc == 2) {
			if (parse_hex(argv[1], cfg.scope, LCMP_SCOPE_LEN) != 0)
				die("%s:%d: scope: expected 40 hex digits (lcmp tables scope)", path, n);
			cfg.has_scope = true;
		} else {
			die("%s:%d: expected 'rx DEV', 'port N DEV MAC', "
			    "'route PREFIX/LEN GROUP', 'tables BLOB', 'trust PUBKEY', 'scope HEX' "
			    "or 'state FILE'", path, n);
		}
	}
	fclose(f);
	if (cfg.signed_only && !cfg.has_scope)
		die("%s: 'trust' needs this switch's 'scope' line (lcmp tables scope)", path);
	if (cfg.state_path[0] != '\0' && !cfg.signed_only)
		die("%s: 'state' needs 'trust' (it keeps the signed generations)", path);
	if (cfg.n_rx_ports == 0)
		die("%s: no 'rx' line", path);
	if (cfg.tables_path[0] == '\0')
		die("%s: no 'tables' line", path);
}

/* ---- ports ------------------------------------------------------------------ */

static struct rte_mempool *pool;
static bool port_started[RTE_MAX_ETHPORTS]; /* only these are stopped at exit */

static void
port_setup(uint16_t port, uint16_t n_rx, uint16_t n_tx)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t q, rxd = RX_DESC, txd = TX_DESC;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		die("port %u: no device info: %s", port, rte_strerror(-rc));
	if (n_rx > info.max_rx_queues)
		die("port %u (%s): %u RX queues needed, the device has %u", port,
		    info.driver_name, n_rx, info.max_rx_queues);
	if (n_tx > info.max_tx_queues)
		die("port %u (%s): %u TX queues needed (one per worker), the "
		    "device has %u (a net_pcap vdev has one per tx_pcap)",
		    port, info.driver_name, n_tx, info.max_tx_queues);
	if (opt.rss && n_rx > 1) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			info.flow_type_rss_offloads;
		if (conf.rx_adv_conf.rss_conf.rss_hf == 0)
			die("port %u (%s) has no RSS: use --dispatch sw", port,
			    info.driver_name);
	}
	rc = rte_eth_dev_configure(port, n_rx, n_tx, &conf);
	if (rc != 0)
		die("port %u: configure: %s", port, rte_strerror(-rc));
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
	if (rc != 0)
		die("port %u: descriptors: %s", port, rte_strerror(-rc));
	for (q = 0; q < n_rx; q++) {
		rc = rte_eth_rx_queue_setup(port, q, rxd,
					    rte_eth_dev_socket_id(port), NULL, pool);
		if (rc != 0)
			die("port %u: RX queue %u: %s", port, q, rte_strerror(-rc));
	}
	for (q = 0; q < n_tx; q++) {
		rc = rte_eth_tx_queue_setup(port, q, txd,
					    rte_eth_dev_socket_id(port), NULL);
		if (rc != 0)
			die("port %u: TX queue %u: %s", port, q, rte_strerror(-rc));
	}
	rc = rte_eth_dev_start(port);
	if (rc != 0)
		die("port %u: start: %s", port, rte_strerror(-rc));
	port_started[port] = true;
	/* Only frames for this port's MAC are routed: promiscuous mode only
	 * when asked (either call may be unsupported: not fatal, the
	 * workers check the destination MAC anyway). */
	if (opt.promiscuous)
		rte_eth_promiscuous_enable(port);
	else
		rte_eth_promiscuous_disable(port);
	if (rte_eth_macaddr_get(port, &rx_mac[port]) != 0)
		die("port %u: no MAC address", port);
}

/* RX queues by DPDK port (0: not an rx port), and with one RX lcore (one
 * worker, or the dispatcher) the (port, queue) pairs it polls in turn. */
static uint16_t rx_nq[RTE_MAX_ETHPORTS];
static struct {
	uint16_t port, queue;
} g_rxq[RTE_MAX_ETHPORTS];
static unsigned int n_g_rxq;

/* How many RX queues an rx port gets, so that no frame waits in a queue
 * nobody polls. A vdev whose queues are fixed by its arguments and all
 * fed (net_af_packet's qpairs, the kernel's fanout spreading frames over
 * them; net_pcap's rx_pcap files; net_af_xdp's queue_count) gets all of
 * them: with one RX lcore, it polls each in turn; with --dispatch rss,
 * worker W polls queue W, so the counts must match (else refused). A NIC
 * gets one queue (--dispatch sw) or one per worker (rss): it fills only
 * the queues configured. */
static uint16_t
rx_queues_of(uint16_t port)
{
	struct rte_eth_dev_info info;
	char name[RTE_ETH_NAME_MAX_LEN] = "?";
	bool fixed;
	int rc = rte_eth_dev_info_get(port, &info);

	if (rc != 0)
		die("port %u: no device info: %s", port, rte_strerror(-rc));
	rte_eth_dev_get_name_by_port(port, name);
	fixed = strcmp(info.driver_name, "net_af_packet") == 0 ||
		strcmp(info.driver_name, "net_pcap") == 0 ||
		strcmp(info.driver_name, "net_af_xdp") == 0;
	if (!fixed)
		return (uint16_t)(opt.rss ? opt.workers : 1);
	if (info.max_rx_queues == 0)
		die("port %u (%s): the device has no RX queue", port, name);
	if (opt.rss && info.max_rx_queues != opt.workers)
		die("port %u (%s, %s): %u RX queues, %u worker(s) with --dispatch rss: "
		    "frames in a queue no worker polls would be lost (give the device one "
		    "queue per worker, or use --dispatch sw)", port, name, info.driver_name,
		    info.max_rx_queues, opt.workers);
	return info.max_rx_queues;
}

/* ---- the fast path ------------------------------------------------------ */

/* route_group for an IPv4 destination (network byte order). */
static __rte_always_inline bool
route_v4(const uint8_t dst[16], uint16_t *group)
{
	uint32_t a, hop;

	memcpy(&a, dst, 4);
	if (unlikely(rte_lpm_lookup(cfg.lpm4, rte_be_to_cpu_32(a), &hop) != 0)) {
		if (!cfg.has_default4)
			return false;
		hop = cfg.default4;
	}
	*group = (uint16_t)hop;
	return true;
}

static inline bool
route_group(const struct parsed *p, uint16_t *group)
{
	uint32_t hop;

	if (p->family == LCMP_FAMILY_V4)
		return route_v4(p->dst, group);
	if (rte_lpm6_lookup(cfg.lpm6, p->dst, &hop) != 0) {
		if (!cfg.has_default6)
			return false;
		hop = cfg.default6;
	}
	*group = (uint16_t)hop;
	return true;
}

static inline void
tx_flush(struct worker *w, uint16_t port)
{
	struct txq *q = &w->txq[port];
	uint16_t sent;
	uint64_t bytes = 0;
	uint16_t i;

	if (q->n == 0)
		return;
	sent = rte_eth_tx_burst(port, (uint16_t)w->id, q->pkts, q->n);
	INC(w->stats.tx, sent);
	if (sent < q->n) {
		memmove(q->pkts, q->pkts + sent, (size_t)(q->n - sent) * sizeof(q->pkts[0]));
		q->n = (uint16_t)(q->n - sent);
	} else {
		q->n = 0;
	}
	for (i = 0; i < q->n; i++)
		bytes += rte_pktmbuf_pkt_len(q->pkts[i]);
	STORE(w->backlog_bytes[port], bytes);
}

static inline void
tx_enqueue(struct worker *w, uint16_t port, struct rte_mbuf *m)
{
	struct txq *q = &w->txq[port];

	if (unlikely(q->n == TXQ_MAX)) {
		tx_flush(w, port);
		if (q->n == TXQ_MAX) {
			INC(w->stats.tx_full, 1);
			rte_pktmbuf_free(m);
			return;
		}
	}
	q->pkts[q->n++] = m;
	if (q->n >= BURST)
		tx_flush(w, port);
}

/* The IPv4 header at `ip` (its first 12 bytes writable, its TTL at least
 * 2: l3_refused): TTL decremented and the header checksum updated
 * incrementally, RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m the 16-bit
 * word holding the TTL. With the TTL above 1, m' = m - 0x0100 (no
 * borrow), so ~m + m' is 0xfeff whatever m is (issue 36 item 5: the sum
 * without reading m). Written by hand because DPDK 22.11 has no
 * incremental update (rte_ipv4_cksum recomputes the whole header,
 * options included); on the bytes as they are on the wire, so no byte
 * order is involved. A header whose checksum was wrong stays wrong (RFC
 * 1624's point against RFC 1141). */
static inline void
ipv4_decrement_ttl(uint8_t *ip)
{
	uint32_t sum = (uint32_t)(uint16_t)~(((uint32_t)ip[10] << 8) | ip[11]) + 0xfeffu;
	uint16_t hc;

	ip[8]--;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	hc = (uint16_t)~sum;
	ip[10] = (uint8_t)(hc >> 8);
	ip[11] = (uint8_t)hc;
}

/* Whether a frame for `dst` received on `m`'s port is routed: unicast,
 * for the port's MAC (or any under --promiscuous). The one rule of
 * l2_refused (which counts the others) and of the worker's fast path. */
static __rte_always_inline bool
l2_mine(const struct rte_mbuf *m, const struct rte_ether_addr *dst)
{
	if (unlikely(!rte_is_unicast_ether_addr(dst)))
		return false;
	return opt.promiscuous ||
	       (likely(m->port < RTE_MAX_ETHPORTS) && rte_is_same_ether_addr(dst, &rx_mac[m->port]));
}

/* True (and counted) for a frame a router does not route because of its
 * destination MAC (docs/dpdk.md, "What a worker does"): checked before
 * parsing, as a NIC's address filter would. A frame shorter than an
 * Ethernet header is left to the parser (truncated). */
static inline bool
l2_refused(struct worker *w, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	if (unlikely(rte_pktmbuf_data_len(m) < sizeof(*eth)))
		return false;
	if (likely(l2_mine(m, &eth->dst_addr)))
		return false;
	if (!rte_is_unicast_ether_addr(&eth->dst_addr))
		/* Broadcast and multicast are the host's (ARP, ND, routing
		 * protocols), never routed. */
		INC(w->stats.l2_multicast, 1);
	else
		INC(w->stats.other_mac, 1);
	return true;
}

/* True (and counted) for a parsed frame a router does not route: tagged
 * under --vlan drop, expired, or with headers the rewrite cannot reach. */
static inline bool
l3_refused(struct worker *w, const struct rte_mbuf *m, const struct parsed *p)
{
	if (unlikely(p->n_vlan != 0 && opt.vlan == VLAN_DROP)) {
		INC(w->stats.vlan_dropped, 1);
		return true;
	}
	if (unlikely(p->ttl <= 1)) {
		/* Expired (no ICMP time exceeded is sent). */
		INC(w->stats.ttl_expired, 1);
		return true;
	}
	/* The rewrite needs the Ethernet and VLAN headers and the IP
	 * header's first 12 bytes in the first segment. */
	if (unlikely(rte_pktmbuf_data_len(m) < p->l3_off + 12)) {
		INC(w->stats.truncated, 1);
		return true;
	}
	return false;
}

/* Routes a burst of received frames at `now` (the decider's tick). */
static void
route_burst(struct worker *w, struct rte_mbuf **m, uint16_t n, uint32_t now)
{
	struct lcmp_packet pkts[BURST];
	struct lcmp_decision dec[BURST];
	struct rte_mbuf *ok[BURST];
	struct {
		uint32_t l3_off;
		uint8_t n_vlan;
		uint8_t family;
	} hdr[BURST];
	struct parsed p;
	const uint8_t *f;
	uint16_t i, k = 0;
	uint8_t ttl;
	int32_t rc;

	/* The headers of the next PREFETCH_AHEAD frames are fetched while
	 * this one is parsed, as DPDK's l3fwd does (prefetching the frame
	 * about to be read, as before, hid nothing). */
	for (i = 0; i < PREFETCH_AHEAD && i < n; i++)
		rte_prefetch0(rte_pktmbuf_mtod(m[i], void *));
	for (i = 0; i < n; i++) {
		int r;

		if (i + PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(m[i + PREFETCH_AHEAD], void *));
		/* The common frame in one pass (parse_v4_fast); any other,
		 * or one of these that is refused, the full way below, which
		 * counts why. */
		f = rte_pktmbuf_mtod(m[i], const uint8_t *);
		ttl = parse_v4_fast(m[i], f, &pkts[k].flow);
		if (likely(ttl > 1 && l2_mine(m[i], (const struct rte_ether_addr *)f) &&
			   route_v4(pkts[k].flow.dst, &pkts[k].group))) {
			hdr[k].l3_off = sizeof(struct rte_ether_hdr);
			hdr[k].n_vlan = 0;
			hdr[k].family = LCMP_FAMILY_V4;
			ok[k++] = m[i];
			continue;
		}
		if (unlikely(l2_refused(w, m[i]))) {
			rte_pktmbuf_free(m[i]);
			continue;
		}
		/* The 5-tuple goes straight into the decider's input. */
		r = parse_packet_to(m[i], &p, &pkts[k].flow);
		if (unlikely(r != PARSE_OK)) {
			if (r == PARSE_TRUNCATED)
				INC(w->stats.truncated, 1);
			else
				INC(w->stats.non_ip, 1);
			rte_pktmbuf_free(m[i]);
			continue;
		}
		if (unlikely(l3_refused(w, m[i], &p))) {
			rte_pktmbuf_free(m[i]);
			continue;
		}
		if (unlikely(!route_group(&p, &pkts[k].group))) {
			INC(w->stats.unknown_dst, 1);
			rte_pktmbuf_free(m[i]);
			continue;
		}
		hdr[k].l3_off = p.l3_off;
		hdr[k].n_vlan = p.n_vlan;
		hdr[k].family = p.family;
		ok[k++] = m[i];
	}
	if (k == 0)
		return;
	rc = lcmp_on_packets(w->d, now, pkts, k, dec);
	if (unlikely(rc < 0)) {
		/* Cannot happen: the parser writes valid families. */
		for (i = 0; i < k; i++)
			rte_pktmbuf_free(ok[i]);
		INC(w->stats.no_route, k);
		return;
	}
	for (i = 0; i < k; i++) {
		const struct egress *e;
		uint8_t *ip;

		if (dec[i].port == LCMP_NO_PORT) {
			INC(w->stats.no_route, 1);
			rte_pktmbuf_free(ok[i]);
			continue;
		}
		e = &cfg.egress[dec[i].port];
		if (unlikely(!e->used)) {
			INC(w->stats.unmapped, 1);
			rte_pktmbuf_free(ok[i]);
			continue;
		}
		/* l3_refused checked that the headers up to the IP
		 * header's 12th byte are in the first segment. */
		ip = rte_pktmbuf_mtod_offset(ok[i], uint8_t *, hdr[i].l3_off);
		if (hdr[i].family == LCMP_FAMILY_V4)
			ipv4_decrement_ttl(ip);
		else
			ip[7]--; /* the hop limit: IPv6 has no header checksum */
		if (hdr[i].n_vlan != 0 && opt.vlan == VLAN_STRIP) {
			/* The destination and source MACs move over the tags
			 * (rewritten below anyway), which leave the frame. */
			uint16_t tags = (uint16_t)(4 * hdr[i].n_vlan);
			uint8_t *f = rte_pktmbuf_mtod(ok[i], uint8_t *);

			memmove(f + tags, f, 2 * RTE_ETHER_ADDR_LEN);
			rte_pktmbuf_adj(ok[i], tags);
		}
		/* The next hop's and the port's MACs, adjacent in the
		 * egress as in the header: one 12-byte copy. */
		memcpy(rte_pktmbuf_mtod(ok[i], uint8_t *), &e->next_hop, 2 * RTE_ETHER_ADDR_LEN);
		INC(w->routed[dec[i].port], 1);
		tx_enqueue(w, e->dpdk_port, ok[i]);
	}
}

/* The worker's control inputs: a new table generation, samples, links. */
static void
worker_control(struct worker *w, uint64_t *seq)
{
	struct table_gen *g = __atomic_load_n(&g_gen, __ATOMIC_ACQUIRE);
	struct ctl_msg msgs[32];
	unsigned int i, n;
	uint64_t known, up, changed;

	if (g != NULL && g->seq != *seq) {
		int32_t rc = lcmp_use_tables(w->d, g->tables);

		if (rc == LCMP_OK) {
			uint64_t gen = 0;

			INC(w->stats.installs, 1);
			lcmp_generation(w->d, &gen);
			STORE(w->stats.generation, gen);
		} else {
			INC(w->stats.install_errors, 1);
		}
		*seq = g->seq;
		STORE(w->stats.seq, g->seq);
	}
	n = rte_ring_sc_dequeue_burst_elem(w->ctl, msgs, sizeof(msgs[0]), 32, NULL);
	for (i = 0; i < n; i++) {
		if (msgs[i].kind == CTL_SAMPLE) {
			if (lcmp_sample(w->d, msgs[i].now, msgs[i].port,
					msgs[i].bytes) == LCMP_OK)
				INC(w->stats.samples, 1);
		} else if (msgs[i].kind == CTL_EXPLAIN) {
			g_explain.rc = lcmp_explain(w->d, now_us(), &g_explain.flow,
						    g_explain.group, &g_explain.ex);
			__atomic_store_n(&g_explain.done, 1, __ATOMIC_RELEASE);
		}
	}
	/* Link states: the published masks, applied where they differ from
	 * what this decider has (g_link_known, below). */
	known = __atomic_load_n(&g_link_known, __ATOMIC_ACQUIRE);
	up = __atomic_load_n(&g_link_up, __ATOMIC_RELAXED) & known;
	changed = (known & ~w->link_known) | ((up ^ w->link_up) & known);
	while (changed != 0) {
		unsigned int lp = (unsigned int)__builtin_ctzll(changed);

		changed &= changed - 1;
		if (lcmp_set_port(w->d, (uint8_t)lp, (uint8_t)((up >> lp) & 1)) == LCMP_OK)
			INC(w->stats.links, 1);
	}
	w->link_known = known;
	w->link_up = up;
}

/* RX for one worker that polls ports itself (one worker, or RSS). With
 * the --install-after hook it stops at the hook's packet until the new
 * generation runs everywhere. */
static uint16_t
rx_direct(struct worker *w, struct rte_mbuf **m, unsigned int *next_port)
{
	uint16_t want = BURST, n = 0;
	unsigned int i;

	if (opt.install_after != 0) {
		int state = __atomic_load_n(&g_hook_state, __ATOMIC_ACQUIRE);
		uint64_t total = __atomic_load_n(&g_rx_total, __ATOMIC_RELAXED);

		if (state != 2 && total >= opt.install_after) {
			if (state == 0)
				__atomic_store_n(&g_hook_state, 1, __ATOMIC_RELEASE);
			if (opt.hold)
				return 0;
		} else if (state != 2 && total + want > opt.install_after) {
			want = (uint16_t)(opt.install_after - total);
		}
	}
	if (opt.rss) {
		for (i = 0; i < cfg.n_rx_ports && n == 0; i++) {
			uint16_t port = cfg.rx_ports[*next_port];

			*next_port = (*next_port + 1) % cfg.n_rx_ports;
			n = rte_eth_rx_burst(port, (uint16_t)w->id, m, want);
		}
	} else {
		/* Every queue of every rx port, in turn. */
		for (i = 0; i < n_g_rxq && n == 0; i++) {
			unsigned int at = *next_port;

			*next_port = (*next_port + 1) % n_g_rxq;
			n = rte_eth_rx_burst(g_rxq[at].port, g_rxq[at].queue, m, want);
		}
	}
	if (n != 0)
		__atomic_fetch_add(&g_rx_total, n, __ATOMIC_RELAXED);
	return n;
}

/* The decider's counters and flow-cache use, for telemetry (the main
 * lcore and the telemetry thread never read the decider itself). */
static void
publish_decider(struct worker *w)
{
	struct lcmp_counters c;
	size_t slots = 0, used = 0;

	if (lcmp_get_counters(w->d, &c) == LCMP_OK) {
		STORE(w->live.packets, c.packets);
		STORE(w->live.hits, c.hits);
		STORE(w->live.new_flows, c.new_flows);
		STORE(w->live.failovers, c.failovers);
		STORE(w->live.withdrawals, c.withdrawals);
		STORE(w->live.unpinned, c.unpinned);
		STORE(w->live.no_route, c.no_route);
		STORE(w->live.cache_full, c.cache_full);
		STORE(w->live.samples, c.samples);
	}
	if (lcmp_flow_cache_usage(w->d, &slots, &used) == LCMP_OK) {
		STORE(w->cache_slots, (uint64_t)slots);
		STORE(w->cache_used, (uint64_t)used);
	}
}

static int
worker_main(void *arg)
{
	struct worker *w = arg;
	struct rte_mbuf *m[BURST];
	uint64_t seq = 0, loops = 0;
	unsigned int next_port = 0, idle = 0, i;
	uint16_t p;
	bool direct = w->in == NULL;
	uint64_t cpu0 = thread_cpu_ns();
	const uint64_t drain_tsc = (rte_get_tsc_hz() + US_PER_S - 1) / US_PER_S * TX_DRAIN_US;
	uint64_t last_drain = rte_rdtsc();

	rte_rcu_qsbr_thread_register(g_qsbr, w->id);
	rte_rcu_qsbr_thread_online(g_qsbr, w->id);
	if (w->id == 0 && opt.stall_ms != 0)
		/* The test's stalled worker (a shared CPU): its control ring
		 * fills meanwhile, and no link event may be lost. */
		rte_delay_us_sleep(opt.stall_ms * 1000u);
	while (!__atomic_load_n(&quit, __ATOMIC_RELAXED)) {
		/* One TSC read a loop (a VM's rdtsc is not free): the burst's
		 * tick and the drain interval's clock. */
		uint64_t tsc;
		uint16_t n;

		worker_control(w, &seq);
		if (direct)
			n = rx_direct(w, m, &next_port);
		else
			n = (uint16_t)rte_ring_sc_dequeue_burst(w->in, (void **)m,
								BURST, NULL);
		tsc = rte_rdtsc();
		if (n != 0) {
			INC(w->stats.rx, n);
			route_burst(w, m, n, (uint32_t)(tsc / tsc_per_us));
			idle = 0;
		}
		/* Full queues were sent by tx_enqueue; the rest when RX is
		 * idle or the drain interval has passed (TX_DRAIN_US). */
		if (n == 0 || tsc - last_drain >= drain_tsc) {
			for (i = 0; i < cfg.n_egress_ports; i++)
				if (w->txq[cfg.egress_ports[i]].n != 0)
					tx_flush(w, cfg.egress_ports[i]);
			last_drain = tsc;
		}
		if ((++loops & 1023) == 0) {
			lcmp_gc(w->d, now_us(), GC_BUDGET);
			publish_decider(w);
		}
		/* Publish this worker's counters (the main lcore reads them). */
		__atomic_thread_fence(__ATOMIC_RELEASE);
		rte_rcu_qsbr_quiescent(g_qsbr, w->id);
		if (n == 0 && ++idle > 256) {
			/* Nothing to do: on a shared CPU, let others run. */
			rte_delay_us_sleep(10);
			idle = 0;
		}
	}
	rte_rcu_qsbr_thread_offline(g_qsbr, w->id);
	rte_rcu_qsbr_thread_unregister(g_qsbr, w->id);
	lcmp_release_tables(w->d); /* the last generation's users drop to 0 */
	for (p = 0; p < RTE_MAX_ETHPORTS; p++) {
		uint16_t tries;

		for (tries = 0; tries < 1000 && w->txq[p].n != 0; tries++)
			tx_flush(w, p);
		/* What TX still refuses at exit is dropped, and counted
		 * (tx_full), so that rx = tx + dropped holds at exit too. */
		INC(w->stats.tx_full, w->txq[p].n);
		while (w->txq[p].n != 0)
			rte_pktmbuf_free(w->txq[p].pkts[--w->txq[p].n]);
	}
	lcmp_get_counters(w->d, &w->lcmp);
	publish_decider(w);
	w->cpu_ns = thread_cpu_ns() - cpu0;
	return 0;
}

/* The software dispatcher: RX, a keyed flow hash, the worker's ring. A
 * packet the parser rejects goes to the next worker in turn, which counts
 * and drops it (all to one worker, garbage would let anyone fill that
 * worker's ring and have its flows dropped).
 *
 * The hash is SipHash-2-4 (libsodium's crypto_shorthash) under a key
 * drawn at every start and never printed: with a public hash (CRC32-C
 * from a fixed seed, as before; a random CRC seed would not do, CRC is
 * affine in it, so collisions stay collisions) anyone could craft flows
 * that all land on one worker. And a full worker ring drops what it
 * refused (counted: dispatch_dropped) instead of stopping RX for every
 * worker: one overloaded or stalled worker loses its own packets only. */
static uint8_t dispatch_key[crypto_shorthash_KEYBYTES];
static uint64_t dispatch_dropped; /* written by the dispatcher only */

static int
dispatcher_main(void *arg)
{
	struct rte_mbuf *m[BURST];
	struct rte_mbuf *held[MAX_WORKERS][BURST];
	unsigned int n_held[MAX_WORKERS] = {0};
	unsigned int next_port = 0, w, idle = 0, next_bad = 0;
	struct worker fake = {.id = 0};

	(void)arg;
	while (!__atomic_load_n(&quit, __ATOMIC_RELAXED)) {
		uint16_t n = rx_direct(&fake, m, &next_port), i;

		if (n == 0) {
			if (++idle > 256) {
				rte_delay_us_sleep(10);
				idle = 0;
			}
			continue;
		}
		idle = 0;
		for (i = 0; i < n; i++) {
			struct parsed p;
			uint64_t h;

			if (parse_packet(m[i], &p) == PARSE_OK) {
				crypto_shorthash((unsigned char *)&h, (const unsigned char *)&p.flow,
						 sizeof(p.flow), dispatch_key);
				w = (unsigned int)(h % opt.workers);
			} else {
				w = next_bad;
				next_bad = (next_bad + 1) % opt.workers;
			}
			held[w][n_held[w]++] = m[i];
		}
		for (w = 0; w < opt.workers; w++) {
			unsigned int sent, k;

			if (n_held[w] == 0)
				continue;
			sent = rte_ring_sp_enqueue_burst(workers[w].in, (void **)held[w],
							 n_held[w], NULL);
			__atomic_fetch_add(&g_dispatched, sent, __ATOMIC_RELEASE);
			for (k = sent; k < n_held[w]; k++)
				rte_pktmbuf_free(held[w][k]);
			if (sent < n_held[w])
				INC(dispatch_dropped, n_held[w] - sent);
			n_held[w] = 0;
		}
	}
	return 0;
}

/* ---- the control lcore --------------------------------------------------- */

static uint64_t ctl_dropped;

static void
send_all(struct ctl_msg *msg)
{
	unsigned int w;

	for (w = 0; w < opt.workers; w++)
		/* A full ring (a stalled worker) drops this message only;
		 * the next sample replaces it. */
		if (rte_ring_sp_enqueue_elem(workers[w].ctl, msg, sizeof(*msg)) != 0)
			ctl_dropped++;
}

static void
send_samples(void)
{
	struct ctl_msg msg = {.kind = CTL_SAMPLE};
	unsigned int lp, w;

	msg.now = now_us();
	for (lp = 0; lp < LCMP_PORTS; lp++) {
		uint64_t bytes = 0;

		if (!cfg.egress[lp].used)
			continue;
		/* The queue-depth proxy (docs/dpdk.md): the bytes the workers
		 * hold for this port because its TX queue refused them. */
		for (w = 0; w < opt.workers; w++)
			bytes += LOAD(workers[w].backlog_bytes[cfg.egress[lp].dpdk_port]);
		msg.port = (uint8_t)lp;
		msg.bytes = bytes;
		send_all(&msg);
	}
}

/* af_packet's PMD reports its link up whatever the kernel interface's
 * carrier (a veth whose peer is down says NO-CARRIER, and every frame
 * sent to it is lost): for an af_packet port the carrier is read from
 * /sys/class/net/IFACE/carrier as well. IFACE is the vdev's iface=
 * argument ("" for other drivers). */
static char af_packet_iface[RTE_MAX_ETHPORTS][32];

static void
find_af_packet_iface(uint16_t port)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;
	const char *a;
	size_t n;

	if (rte_eth_dev_info_get(port, &info) != 0 ||
	    strcmp(info.driver_name, "net_af_packet") != 0 || info.device == NULL)
		return;
	da = rte_dev_devargs(info.device);
	if (da == NULL || da->args == NULL)
		return;
	for (a = da->args; a != NULL; a = strchr(a, ',') ? strchr(a, ',') + 1 : NULL) {
		if (strncmp(a, "iface=", 6) != 0)
			continue;
		a += 6;
		n = strcspn(a, ",");
		if (n > 0 && n < sizeof(af_packet_iface[port]) && memchr(a, '/', n) == NULL) {
			memcpy(af_packet_iface[port], a, n);
			af_packet_iface[port][n] = '\0';
		}
		return;
	}
}

/* A counter of the kernel interface behind af_packet port `port`
 * (/sys/class/net/IFACE/statistics/NAME), or UINT64_MAX if unknown. */
static uint64_t
af_packet_kernel_stat(uint16_t port, const char *name)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	if (af_packet_iface[port][0] == '\0')
		return UINT64_MAX;
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", af_packet_iface[port], name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return UINT64_MAX;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

/* The kernel interface's rx_packets when the port started: the app's
 * ipackets is compared with what the kernel counted since. */
static uint64_t af_packet_rx0[RTE_MAX_ETHPORTS];

/* 1 if the kernel interface behind af_packet port `port` has carrier, 0
 * if not, -1 if unknown (not af_packet, or unreadable). */
static int
af_packet_carrier(uint16_t port)
{
	char path[96], c = '?';
	int fd;

	if (af_packet_iface[port][0] == '\0')
		return -1;
	snprintf(path, sizeof(path), "/sys/class/net/%s/carrier", af_packet_iface[port]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = '?';
	close(fd);
	/* Reading the carrier of an interface that is down fails (EINVAL):
	 * down as well. */
	return c == '1' ? 1 : 0;
}

static int link_state[LCMP_PORTS]; /* -1 unknown, 0 down, 1 up */
static bool admin_down[LCMP_PORTS];
static void
poll_links(void)
{
	unsigned int lp;

	for (lp = 0; lp < LCMP_PORTS; lp++) {
		struct rte_eth_link link;
		int up;

		if (!cfg.egress[lp].used)
			continue;
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(cfg.egress[lp].dpdk_port, &link) != 0)
			continue;
		up = link.link_status == RTE_ETH_LINK_UP && !admin_down[lp] &&
		     af_packet_carrier(cfg.egress[lp].dpdk_port) != 0;
		if (up == link_state[lp])
			continue;
		link_state[lp] = up;
		if (up)
			__atomic_fetch_or(&g_link_up, 1ull << lp, __ATOMIC_RELAXED);
		else
			__atomic_fetch_and(&g_link_up, ~(1ull << lp), __ATOMIC_RELAXED);
		__atomic_fetch_or(&g_link_known, 1ull << lp, __ATOMIC_RELEASE);
		printf("link: LCMP port %u (DPDK port %u) %s\n", lp,
		       cfg.egress[lp].dpdk_port, up ? "up" : "down");
		fflush(stdout);
	}
}

/* Key rotation through the control file (docs/dpdk.md, "Trusted keys and
 * the state file"). The control file is not authenticated, so a change
 * of the trusted set is: it needs a statement signed (Ed25519, 64 bytes
 * in file `sig_path`) by a key trusted now, over the text
 *   "lcmp-fwd trust add <the new key, 64 hex digits>\n"
 *   "lcmp-fwd trust remove <key id, 16 hex digits>\n"
 * (as `openssl pkeyutl -sign -rawin` makes it). Verified with libsodium
 * (crypto_sign_verify_detached, which refuses small-order and
 * non-canonical points); the C ABI verifies table blobs only. A removed
 * key id is never trusted again (a replayed 'add' is refused), and the
 * last key cannot be removed. 0, or -1 with `*why` set. */
static int
trust_statement_ok(const char *text, const char *sig_path, const char **why)
{
	size_t len = 0;
	unsigned int i;
	uint8_t *sig = read_file(sig_path, &len, why);
	int ok = -1;

	if (sig == NULL)
		return -1;
	*why = "the signature file is not 64 bytes";
	if (len == crypto_sign_BYTES) {
		*why = "the statement is not signed by a trusted key";
		for (i = 0; i < trust.n && ok != 0; i++)
			if (crypto_sign_verify_detached(sig, (const unsigned char *)text,
							strlen(text), trust.keys[i].pk) == 0)
				ok = 0;
	}
	free(sig);
	return ok;
}

static int
trust_add(const char *key_path, const char *sig_path, const char **why)
{
	struct trust_set next = trust;
	struct trust_key k;
	char text[64 + 2 * LCMP_PUBLIC_KEY_LEN], hex[2 * LCMP_PUBLIC_KEY_LEN + 1];

	memset(&k, 0, sizeof(k));
	if (read_public_key(key_path, k.pk, why) != 0)
		return -1;
	k.id = key_id(k.pk);
	if (trust_find(&trust, k.id) >= 0) {
		*why = "that key id is trusted already";
		return -1;
	}
	if (trust_is_revoked(&trust, k.id)) {
		*why = "that key id was removed: it is never trusted again";
		return -1;
	}
	if (trust.n == LCMP_MAX_TRUSTED_KEYS) {
		*why = "two keys are trusted: remove one first";
		return -1;
	}
	hex_of(k.pk, LCMP_PUBLIC_KEY_LEN, hex);
	snprintf(text, sizeof(text), "lcmp-fwd trust add %s\n", hex);
	if (trust_statement_ok(text, sig_path, why) != 0)
		return -1;
	next.keys[next.n++] = k; /* floor 0: it signed nothing here yet */
	if (trust_commit(&next, why) != 0)
		return -1;
	printf("trust: key id %016" PRIx64 " added (%u trusted, floor %" PRIu64 ")\n", k.id,
	       trust.n, trust_floor(&trust));
	fflush(stdout);
	return 0;
}

static int
trust_remove(const char *id_s, const char *sig_path, const char **why)
{
	struct trust_set next = trust;
	char text[64];
	uint64_t id, dropped;
	int at;

	if (parse_key_id(id_s, &id) != 0) {
		*why = "expected a key id (16 hex digits)";
		return -1;
	}
	at = trust_find(&trust, id);
	if (at < 0) {
		*why = "no trusted key has that key id";
		return -1;
	}
	if (trust.n == 1) {
		*why = "the last trusted key: add its successor first";
		return -1;
	}
	snprintf(text, sizeof(text), "lcmp-fwd trust remove %016" PRIx64 "\n", id);
	if (trust_statement_ok(text, sig_path, why) != 0)
		return -1;
	dropped = next.keys[at].floor;
	next.keys[at] = next.keys[--next.n];
	if (next.n_revoked == MAX_REVOKED) /* the oldest removal is forgotten */
		memmove(next.revoked, next.revoked + 1, (MAX_REVOKED - 1) * sizeof(next.revoked[0]));
	else
		next.n_revoked++;
	next.revoked[next.n_revoked - 1] = id;
	if (trust_commit(&next, why) != 0)
		return -1;
	printf("trust: key id %016" PRIx64 " removed with its floor %" PRIu64
	       " (%u trusted, floor %" PRIu64 ")\n", id, dropped, trust.n, trust_floor(&trust));
	fflush(stdout);
	return 0;
}

/* The control file (--control FILE): when it appears, each line is run
 * ("install BLOB", "link PORT up|down", "stats", "quit") and the file is
 * removed. Write it elsewhere and rename it into place. */
static void print_stats(const char *label);

/* "cache": each worker's flow-cache use, as it last published it. */
static void
ctl_cache(void)
{
	unsigned int w;

	for (w = 0; w < opt.workers; w++) {
		uint64_t slots = LOAD(workers[w].cache_slots), used = LOAD(workers[w].cache_used);

		printf("cache: worker %u: %" PRIu64 " of %" PRIu64 " slots used (%" PRIu64
		       "%%), cache_full=%" PRIu64 "\n", w, used, slots, slots ? used * 100 / slots : 0,
		       LOAD(workers[w].live.cache_full));
	}
	fflush(stdout);
}

/* "explain SRC DST SPORT DPORT PROTO": the decision lcmp_on_packet would
 * make now for that flow (lcmp_explain), asked of the worker that owns
 * the flow (the dispatcher's hash; with --dispatch rss the NIC's, so every
 * worker is asked). 0, or -1 with `*why` set. */
static int
ctl_explain(char **argv, const char **why)
{
	struct lcmp_flow flow;
	struct parsed p;
	unsigned long sport, dport, proto;
	char *end1, *end2, *end3;
	unsigned int w, first = 0, last = opt.workers;
	uint16_t group;

	memset(&flow, 0, sizeof(flow));
	memset(&p, 0, sizeof(p));
	if (inet_pton(AF_INET, argv[1], flow.src) == 1 && inet_pton(AF_INET, argv[2], flow.dst) == 1)
		flow.family = LCMP_FAMILY_V4;
	else if (inet_pton(AF_INET6, argv[1], flow.src) == 1 &&
		 inet_pton(AF_INET6, argv[2], flow.dst) == 1)
		flow.family = LCMP_FAMILY_V6;
	else {
		*why = "explain: expected two IPv4 or two IPv6 addresses";
		return -1;
	}
	sport = strtoul(argv[3], &end1, 10);
	dport = strtoul(argv[4], &end2, 10);
	proto = strtoul(argv[5], &end3, 10);
	if (*end1 != '\0' || *end2 != '\0' || *end3 != '\0' || sport > 65535 || dport > 65535 ||
	    proto > 255) {
		*why = "explain: expected ports 0..65535 and a protocol 0..255";
		return -1;
	}
	flow.sport = (uint16_t)sport;
	flow.dport = (uint16_t)dport;
	flow.proto = (uint8_t)proto;
	p.flow = flow;
	p.family = flow.family;
	memcpy(p.dst, flow.dst, 16);
	if (!route_group(&p, &group)) {
		*why = "explain: no route for the destination (unknown_dst)";
		return -1;
	}
	if (opt.workers > 1 && !opt.rss) {
		uint64_t h;

		crypto_shorthash((unsigned char *)&h, (const unsigned char *)&flow, sizeof(flow),
				 dispatch_key);
		first = (unsigned int)(h % opt.workers);
		last = first + 1;
	}
	for (w = first; w < last; w++) {
		struct ctl_msg msg = {.kind = CTL_EXPLAIN};
		const struct lcmp_explanation *ex = &g_explain.ex;
		unsigned int i, tries;

		g_explain.flow = flow;
		g_explain.group = group;
		__atomic_store_n(&g_explain.done, 0, __ATOMIC_RELEASE);
		if (rte_ring_sp_enqueue_elem(workers[w].ctl, &msg, sizeof(msg)) != 0) {
			*why = "explain: the worker's control ring is full";
			return -1;
		}
		for (tries = 0; tries < 100000 && !__atomic_load_n(&g_explain.done, __ATOMIC_ACQUIRE);
		     tries++)
			rte_delay_us_sleep(10);
		if (!__atomic_load_n(&g_explain.done, __ATOMIC_ACQUIRE)) {
			/* The worker may still answer: wait for it, so that
			 * the next request does not race this one. */
			while (!__atomic_load_n(&g_explain.done, __ATOMIC_ACQUIRE) &&
			       !__atomic_load_n(&quit, __ATOMIC_RELAXED))
				rte_delay_us_sleep(1000);
		}
		if (g_explain.rc != LCMP_OK) {
			*why = lcmp_strerror(g_explain.rc);
			return -1;
		}
		printf("explain: worker %u: group %u: %s, chosen %s%u, pinned %s%u, hash %08" PRIx32
		       "; candidates:", w, ex->group, lcmp_reason_str(ex->reason),
		       ex->chosen == LCMP_NO_PORT ? "none " : "", ex->chosen,
		       ex->pinned == LCMP_NO_PORT ? "none " : "", ex->pinned, ex->hash);
		for (i = 0; i < ex->n_candidates && i < LCMP_MAX_CANDIDATES; i++) {
			const struct lcmp_candidate *c = &ex->candidates[i];

			if (!c->up)
				printf(" port %u down;", c->port);
			else
				printf(" port %u cost %u (path %u, congestion %u) rank %u%s;", c->port,
				       c->cost, c->c_path, c->c_cong, c->rank, c->kept ? " kept" : "");
		}
		putchar('\n');
	}
	fflush(stdout);
	return 0;
}

/* Why a control line is refused: its command's form, or unknown. */
static const char *
ctl_usage(const char *cmd)
{
	if (strcmp(cmd, "install") == 0)
		return "install: expected 'install BLOB'";
	if (strcmp(cmd, "link") == 0)
		return "link: expected 'link PORT up|down'";
	if (strcmp(cmd, "trust") == 0)
		return "trust: expected 'trust add PUBKEY.pem SIG' or 'trust remove KEYID SIG'";
	if (strcmp(cmd, "stats") == 0 || strcmp(cmd, "quit") == 0 || strcmp(cmd, "cache") == 0)
		return "stats, cache and quit take no argument";
	if (strcmp(cmd, "explain") == 0)
		return "explain: expected 'explain SRC DST SPORT DPORT PROTO'";
	return "unknown command";
}

static void
poll_control_file(void)
{
	FILE *f;
	char line[4200];
	struct stat st;
	int fd, n = 0;

	if (opt.control == NULL)
		return;
	/* Never through a symlink, and a regular file only (a FIFO would
	 * block the control lcore); anything else is removed unread. */
	fd = open(opt.control, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP) {
			fprintf(stderr, "lcmp-fwd: control: %s is a symlink: removed, not read\n",
				opt.control);
			unlink(opt.control);
		}
		return;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "lcmp-fwd: control: %s is not a regular file: removed, not read\n",
			opt.control);
		close(fd);
		unlink(opt.control);
		return;
	}
	f = fdopen(fd, "r");
	if (f == NULL) {
		close(fd);
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *argv[7], *save = NULL, *tok;
		int argc = 0;

		n++;
		for (tok = strtok_r(line, " \t\r\n", &save); tok != NULL && argc < 7;
		     tok = strtok_r(NULL, " \t\r\n", &save))
			argv[argc++] = tok;
		if (argc == 0 || argv[0][0] == '#')
			continue;
		if (strcmp(argv[0], "install") == 0 && argc == 2) {
			install_blob(argv[1]);
		} else if (strcmp(argv[0], "link") == 0 && argc == 3) {
			char *end;
			unsigned long lp = strtoul(argv[1], &end, 10);

			if (*end != '\0' || argv[1][0] == '\0' || lp >= LCMP_PORTS)
				fprintf(stderr, "lcmp-fwd: control: line %d: link: LCMP port must be "
					"0..%d\n", n, LCMP_PORTS - 1);
			else if (!cfg.egress[lp].used)
				fprintf(stderr, "lcmp-fwd: control: line %d: link: LCMP port %lu has "
					"no 'port' line\n", n, lp);
			else if (strcmp(argv[2], "up") != 0 && strcmp(argv[2], "down") != 0)
				fprintf(stderr, "lcmp-fwd: control: line %d: link: expected up or "
					"down\n", n);
			else
				admin_down[lp] = strcmp(argv[2], "down") == 0;
		} else if (strcmp(argv[0], "trust") == 0 && argc == 4 &&
			   (strcmp(argv[1], "add") == 0 || strcmp(argv[1], "remove") == 0)) {
			const char *why = NULL;
			int rc = strcmp(argv[1], "add") == 0 ? trust_add(argv[2], argv[3], &why)
							   : trust_remove(argv[2], argv[3], &why);

			if (rc == 0) {
				trust_changes++;
			} else {
				trust_refused++;
				fprintf(stderr, "lcmp-fwd: control: line %d: trust %s: %s\n", n,
					argv[1], why);
			}
		} else if (strcmp(argv[0], "stats") == 0 && argc == 1) {
			print_stats("stats");
		} else if (strcmp(argv[0], "cache") == 0 && argc == 1) {
			ctl_cache();
		} else if (strcmp(argv[0], "explain") == 0 && argc == 6) {
			const char *why = NULL;

			if (ctl_explain(argv, &why) != 0)
				fprintf(stderr, "lcmp-fwd: control: line %d: %s\n", n, why);
		} else if (strcmp(argv[0], "quit") == 0 && argc == 1) {
			__atomic_store_n(&quit, 1, __ATOMIC_RELAXED);
		} else {
			/* The line is not echoed: the file is not trusted input. */
			fprintf(stderr, "lcmp-fwd: control: line %d: %s\n", n, ctl_usage(argv[0]));
		}
	}
	fclose(f);
	unlink(opt.control);
}

/* The --install-after hook, on the control lcore. */
static void
run_hook(void)
{
	unsigned int w;

	if (__atomic_load_n(&g_hook_state, __ATOMIC_ACQUIRE) != 1)
		return;
	if (opt.hold) {
		/* RX is stopped: wait until the workers routed everything
		 * received before the hook, so no packet before it sees the
		 * new tables. */
		for (;;) {
			uint64_t done = 0, want;

			for (w = 0; w < opt.workers; w++)
				done += __atomic_load_n(&workers[w].stats.rx, __ATOMIC_ACQUIRE);
			want = dispatcher_lcore == RTE_MAX_LCORE
				       ? __atomic_load_n(&g_rx_total, __ATOMIC_ACQUIRE)
				       : __atomic_load_n(&g_dispatched, __ATOMIC_ACQUIRE);
			/* (What the dispatcher dropped no worker will route.) */
			if (done >= want && want + LOAD(dispatch_dropped) >= opt.install_after)
				break;
			rte_delay_us_sleep(10);
		}
	}
	if (install_blob(opt.install_path) == 0 && opt.hold) {
		/* Wait until every worker runs it. */
		for (w = 0; w < opt.workers; w++)
			while (__atomic_load_n(&workers[w].stats.seq, __ATOMIC_ACQUIRE) !=
			       gen_seq)
				rte_delay_us_sleep(10);
	}
	__atomic_store_n(&g_hook_state, 2, __ATOMIC_RELEASE);
}

/* Table installs: published, and refused by reason. */
static void
print_installs(const char *label)
{
	uint64_t all = 0;
	unsigned int r;

	for (r = 0; r < REFUSED_N; r++)
		all += installs_refused[r];
	printf("%s: installs: published=%" PRIu64 " refused=%" PRIu64, label, installs_published,
	       all);
	for (r = 0; r < REFUSED_N; r++)
		printf(" %s=%" PRIu64, refusal_name[r], installs_refused[r]);
	putchar('\n');
}

/* What the devices themselves counted, beside the app's counters: frames
 * the NIC or vdev dropped before the app saw them (imissed: RX queue
 * full; rx_nombuf: no mbuf for the RX ring; ierrors) and TX errors
 * (oerrors). af_packet's link state is the kernel interface's carrier
 * (link_of), which its PMD does not report. */
static void
print_ports(const char *label)
{
	uint16_t p;

	RTE_ETH_FOREACH_DEV(p) {
		struct rte_eth_stats st;
		char name[RTE_ETH_NAME_MAX_LEN] = "?";

		if (!port_started[p] || rte_eth_stats_get(p, &st) != 0)
			continue;
		rte_eth_dev_get_name_by_port(p, name);
		printf("%s: port %u (%s): ipackets=%" PRIu64 " imissed=%" PRIu64 " ierrors=%" PRIu64
		       " rx_nombuf=%" PRIu64 " opackets=%" PRIu64 " oerrors=%" PRIu64, label, p,
		       name, st.ipackets, st.imissed, st.ierrors, st.rx_nombuf, st.opackets,
		       st.oerrors);
		if (af_packet_rx0[p] != UINT64_MAX && af_packet_iface[p][0] != '\0') {
			/* DPDK 22.11's af_packet counts no imissed: frames the
			 * kernel received that its socket ring had no room for
			 * show only as the gap between the kernel's count and
			 * ipackets (a few in flight while it runs). */
			uint64_t k = af_packet_kernel_stat(p, "rx_packets");

			if (k != UINT64_MAX)
				printf(" kernel_rx_packets=%" PRIu64, k - af_packet_rx0[p]);
		}
		putchar('\n');
	}
}

static void
print_stats(const char *label)
{
	struct worker_stats t;
	unsigned int w;

	memset(&t, 0, sizeof(t));
	for (w = 0; w < opt.workers; w++) {
		const struct worker_stats *s = &workers[w].stats;

#define F(x) uint64_t x = LOAD(s->x); t.x += x
		F(rx); F(tx); F(truncated); F(non_ip); F(l2_multicast); F(other_mac);
		F(vlan_dropped); F(ttl_expired); F(unknown_dst); F(no_route); F(unmapped);
		F(tx_full); F(samples); F(links); F(installs); F(install_errors);
#undef F
		printf("%s: worker %u lcore %u: rx=%" PRIu64 " tx=%" PRIu64
		       " truncated=%" PRIu64 " non_ip=%" PRIu64 " l2_multicast=%" PRIu64
		       " other_mac=%" PRIu64 " vlan_dropped=%" PRIu64 " ttl_expired=%" PRIu64
		       " unknown_dst=%" PRIu64 " no_route=%" PRIu64
		       " unmapped=%" PRIu64 " tx_full=%" PRIu64
		       " samples=%" PRIu64 " links=%" PRIu64 " installs=%" PRIu64
		       " install_errors=%" PRIu64 " generation=%" PRIu64 "\n",
		       label, w, workers[w].lcore, rx, tx, truncated, non_ip, l2_multicast,
		       other_mac, vlan_dropped, ttl_expired, unknown_dst, no_route, unmapped,
		       tx_full, samples, links, installs, install_errors, LOAD(s->generation));
	}
	/* The dispatcher's drops never reached a worker: the total counts
	 * them received and dropped, so that rx = tx + dropped. */
	t.rx += LOAD(dispatch_dropped);
	printf("%s: total: rx=%" PRIu64 " tx=%" PRIu64 " truncated=%" PRIu64
	       " non_ip=%" PRIu64 " l2_multicast=%" PRIu64 " other_mac=%" PRIu64
	       " vlan_dropped=%" PRIu64 " ttl_expired=%" PRIu64
	       " unknown_dst=%" PRIu64 " no_route=%" PRIu64
	       " unmapped=%" PRIu64 " tx_full=%" PRIu64 " dispatch_dropped=%" PRIu64
	       " dropped=%" PRIu64 " samples=%" PRIu64 " links=%" PRIu64 " ctl_dropped=%" PRIu64
	       " trust_changes=%" PRIu64 " trust_refused=%" PRIu64 "\n",
	       label, t.rx, t.tx, t.truncated, t.non_ip, t.l2_multicast, t.other_mac,
	       t.vlan_dropped, t.ttl_expired, t.unknown_dst, t.no_route, t.unmapped,
	       t.tx_full, LOAD(dispatch_dropped),
	       t.truncated + t.non_ip + t.l2_multicast + t.other_mac + t.vlan_dropped +
		       t.ttl_expired + t.unknown_dst + t.no_route + t.unmapped + t.tx_full +
		       LOAD(dispatch_dropped),
	       t.samples, t.links, ctl_dropped, trust_changes, trust_refused);
	print_installs(label);
	print_ports(label);
	fflush(stdout);
}

/* ---- telemetry (docs/dpdk.md, "Telemetry") ------------------------------- */

/* The app's counters in one dict: worker `only`'s, or all workers'
 * summed (only < 0). Read with relaxed loads from the telemetry thread. */
static void
tel_counters(struct rte_tel_data *d, int only)
{
	struct worker_stats t;
	struct lcmp_counters c;
	uint64_t slots = 0, used = 0;
	unsigned int w;

	memset(&t, 0, sizeof(t));
	memset(&c, 0, sizeof(c));
	for (w = 0; w < opt.workers; w++) {
		const struct worker *wk = &workers[w];

		if (only >= 0 && (unsigned int)only != w)
			continue;
#define F(x) t.x += LOAD(wk->stats.x)
		F(rx); F(tx); F(truncated); F(non_ip); F(l2_multicast); F(other_mac);
		F(vlan_dropped); F(ttl_expired); F(unknown_dst); F(no_route); F(unmapped);
		F(tx_full); F(samples); F(links); F(installs); F(install_errors);
#undef F
#define G(x) c.x += LOAD(wk->live.x)
		G(packets); G(hits); G(new_flows); G(failovers); G(withdrawals); G(unpinned);
		G(no_route); G(cache_full);
#undef G
		slots += LOAD(wk->cache_slots);
		used += LOAD(wk->cache_used);
	}
	rte_tel_data_start_dict(d);
#define A(name, v) rte_tel_data_add_dict_u64(d, name, v)
	A("rx", t.rx); A("tx", t.tx); A("truncated", t.truncated); A("non_ip", t.non_ip);
	A("l2_multicast", t.l2_multicast); A("other_mac", t.other_mac);
	A("vlan_dropped", t.vlan_dropped); A("ttl_expired", t.ttl_expired);
	A("unknown_dst", t.unknown_dst);
	/* The decider's no route, split: refused for a full flow cache, and
	 * the rest (no live candidate, unknown group). */
	A("no_route", t.no_route); A("cache_full", c.cache_full);
	A("no_route_other", c.no_route - RTE_MIN(c.no_route, c.cache_full));
	A("unmapped", t.unmapped); A("tx_full", t.tx_full);
	A("hits", c.hits); A("new_flows", c.new_flows); A("failovers", c.failovers);
	A("withdrawals", c.withdrawals); A("unpinned", c.unpinned);
	A("flow_cache_slots", slots); A("flow_cache_used", used);
	A("samples", t.samples); A("links", t.links);
	A("attaches", t.installs); A("attach_errors", t.install_errors);
	if (only < 0) {
		A("dispatch_dropped", LOAD(dispatch_dropped));
		A("ctl_dropped", LOAD(ctl_dropped));
	}
#undef A
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	tel_counters(d, -1);
	return 0;
}

/* A number parameter below `max`, or -1. */
static long
tel_param(const char *params, unsigned long max)
{
	char *end;
	unsigned long v;

	if (params == NULL || !isdigit((unsigned char)params[0]))
		return -1;
	v = strtoul(params, &end, 10);
	return *end == '\0' && v < max ? (long)v : -1;
}

static int
tel_worker(const char *cmd, const char *params, struct rte_tel_data *d)
{
	long w = tel_param(params, opt.workers);

	(void)cmd;
	if (w < 0)
		return -EINVAL;
	tel_counters(d, (int)w);
	rte_tel_data_add_dict_u64(d, "lcore", workers[w].lcore);
	rte_tel_data_add_dict_u64(d, "generation", LOAD(workers[w].stats.generation));
	return 0;
}

static int
tel_port(const char *cmd, const char *params, struct rte_tel_data *d)
{
	long lp = tel_param(params, LCMP_PORTS);
	uint64_t routed = 0, backlog = 0;
	unsigned int w;

	(void)cmd;
	if (lp < 0 || !cfg.egress[lp].used)
		return -EINVAL;
	for (w = 0; w < opt.workers; w++) {
		routed += LOAD(workers[w].routed[lp]);
		backlog += LOAD(workers[w].backlog_bytes[cfg.egress[lp].dpdk_port]);
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "dpdk_port", cfg.egress[lp].dpdk_port);
	rte_tel_data_add_dict_u64(d, "up", __atomic_load_n(&g_link_up, __ATOMIC_RELAXED) >> lp & 1);
	rte_tel_data_add_dict_u64(d, "admin_down", admin_down[lp]);
	rte_tel_data_add_dict_u64(d, "routed", routed);
	rte_tel_data_add_dict_u64(d, "backlog_bytes", backlog);
	return 0;
}

static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int lp;

	(void)cmd;
	(void)params;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (lp = 0; lp < LCMP_PORTS; lp++)
		if (cfg.egress[lp].used)
			rte_tel_data_add_array_int(d, (int)lp);
	return 0;
}

static int
tel_installs(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int r;
	uint64_t all = 0;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "published", LOAD(installs_published));
	for (r = 0; r < REFUSED_N; r++)
		all += LOAD(installs_refused[r]);
	rte_tel_data_add_dict_u64(d, "refused", all);
	for (r = 0; r < REFUSED_N; r++)
		rte_tel_data_add_dict_u64(d, refusal_name[r], LOAD(installs_refused[r]));
	rte_tel_data_add_dict_u64(d, "trust_changes", LOAD(trust_changes));
	rte_tel_data_add_dict_u64(d, "trust_refused", LOAD(trust_refused));
	return 0;
}

static void
telemetry_register(void)
{
	rte_telemetry_register_cmd("/lcmp/stats", tel_stats,
				   "lcmp-fwd's counters, all workers. No parameters");
	rte_telemetry_register_cmd("/lcmp/worker", tel_worker,
				   "One worker's counters. Parameter: worker id");
	rte_telemetry_register_cmd("/lcmp/ports", tel_ports,
				   "The LCMP ports with a 'port' line. No parameters");
	rte_telemetry_register_cmd("/lcmp/port", tel_port,
				   "One LCMP port: link, packets routed to it. Parameter: LCMP port");
	rte_telemetry_register_cmd("/lcmp/installs", tel_installs,
				   "Table installs published and refused by reason. No parameters");
}

static void
on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&quit, 1, __ATOMIC_RELAXED);
}

/* ---- start-up ------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr,
		"usage: lcmp-fwd [EAL args] -- -c CONFIG [--workers N] [--flows N]\n"
		"         [--dispatch sw|rss] [--scheme lcmp|ecmp|ucmp] [--seed N]\n"
		"         [--stats-ms MS] [--sample-us US] [--link-ms MS]\n"
		"         [--control FILE] [--exit-idle-ms MS]\n"
		"         [--install-after N:BLOB [--no-hold]] [--mbufs N] [--mbuf-size BYTES]\n"
		"         [--worker-ring N] [--promiscuous] [--vlan strip|keep|drop]\n");
}

static unsigned long
num_arg(const char *name, const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || v > max)
		die("%s: expected a number up to %lu, got \"%s\"", name, max, s);
	return v;
}

/* The index of `s` in the NULL-terminated `names`; dies otherwise, naming
 * the choices ("--vlan: expected strip, keep or drop, got \"x\""). */
static unsigned int
choice_arg(const char *name, const char *s, const char *const *names)
{
	char list[128] = "";
	unsigned int i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	for (i = 0; names[i] != NULL; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i == 0 ? "" : names[i + 1] == NULL ? " or " : ", ", names[i]);
	die("%s: expected %s, got \"%s\"", name, list, s);
	return 0;
}

/* rte_eal_init failed: one line saying why. EAL leaves rte_errno 0 when
 * another primary process holds the file prefix's config lock (EAL then
 * says "Success"): that case is recognised by trying the lock, as EAL
 * does (its runtime directory: /var/run/dpdk as root, else
 * $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk, then the prefix, "rte" unless
 * --file-prefix gives one). */
static void __rte_noreturn
eal_failed(int argc, char **argv)
{
	const char *prefix = "rte", *base = getenv("XDG_RUNTIME_DIR");
	char path[4096];
	struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	int i, fd;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--file-prefix") == 0 && i + 1 < argc)
			prefix = argv[i + 1];
		else if (strncmp(argv[i], "--file-prefix=", 14) == 0)
			prefix = argv[i] + 14;
	}
	if (getuid() == 0)
		base = "/var/run";
	else if (base == NULL)
		base = "/tmp";
	snprintf(path, sizeof(path), "%s/dpdk/%s/config", base, prefix);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0 && fcntl(fd, F_GETLK, &lk) == 0 && lk.l_type != F_UNLCK)
		die("EAL: another DPDK process (pid %d) runs with --file-prefix %s: give each "
		    "instance its own --file-prefix", (int)lk.l_pid, prefix);
	if (rte_errno != 0)
		die("EAL: %s (EAL's own lines above say more)", rte_strerror(rte_errno));
	die("EAL: initialisation failed (EAL's own lines above say why)");
}

static void
parse_args(int argc, char **argv)
{
	static const struct option longs[] = {
		{"config", required_argument, NULL, 'c'},
		{"workers", required_argument, NULL, 'w'},
		{"flows", required_argument, NULL, 'f'},
		{"dispatch", required_argument, NULL, 'D'},
		{"scheme", required_argument, NULL, 'S'},
		{"seed", required_argument, NULL, 's'},
		{"stats-ms", required_argument, NULL, 'T'},
		{"sample-us", required_argument, NULL, 'Q'},
		{"link-ms", required_argument, NULL, 'L'},
		{"control", required_argument, NULL, 'C'},
		{"exit-idle-ms", required_argument, NULL, 'X'},
		{"install-after", required_argument, NULL, 'I'},
		{"no-hold", no_argument, NULL, 'H'},
		{"mbufs", required_argument, NULL, 'M'},
		{"stall-worker-ms", required_argument, NULL, 'W'},
		{"mbuf-size", required_argument, NULL, 'Z'},
		{"worker-ring", required_argument, NULL, 'R'},
		{"promiscuous", no_argument, NULL, 'P'},
		{"vlan", required_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	/* getopt's own messages off: an unknown option or a missing value is
	 * one line of ours and status 1, like every other bad argument. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:h", longs, NULL)) != -1) {
		switch (c) {
		case 'c': opt.config = optarg; break;
		case 'w': opt.workers = (unsigned int)num_arg("--workers", optarg, MAX_WORKERS); break;
		case 'f': opt.flows = num_arg("--flows", optarg, 1ul << 26); break;
		case 'D': {
			static const char *const modes[] = {"sw", "rss", NULL};

			opt.rss = choice_arg("--dispatch", optarg, modes) == 1;
			break;
		}
		case 'S': {
			static const char *const schemes[] = {"lcmp", "ecmp", "ucmp", NULL};
			static const uint8_t ids[] = {LCMP_SCHEME_LCMP, LCMP_SCHEME_ECMP,
						      LCMP_SCHEME_UCMP};

			opt.scheme = ids[choice_arg("--scheme", optarg, schemes)];
			break;
		}
		case 's':
			opt.seed = (uint32_t)num_arg("--seed", optarg, UINT32_MAX);
			opt.seed_set = true;
			break;
		case 'W': opt.stall_ms = (unsigned int)num_arg("--stall-worker-ms", optarg, 60000); break;
		case 'T': opt.stats_ms = (unsigned int)num_arg("--stats-ms", optarg, 3600000); break;
		case 'Q': opt.sample_us = (unsigned int)num_arg("--sample-us", optarg, 60000000); break;
		case 'L': opt.link_ms = (unsigned int)num_arg("--link-ms", optarg, 3600000); break;
		case 'C': opt.control = optarg; break;
		case 'X': opt.exit_idle_ms = (unsigned int)num_arg("--exit-idle-ms", optarg, 3600000); break;
		case 'I': {
			char *colon = strchr(optarg, ':');

			if (colon == NULL || colon[1] == '\0')
				die("--install-after: expected N:BLOB, got \"%s\"", optarg);
			*colon = '\0';
			opt.install_after = num_arg("--install-after", optarg, UINT64_MAX);
			if (opt.install_after == 0)
				die("--install-after: N must be at least 1");
			opt.install_path = colon + 1;
			break;
		}
		case 'H': opt.hold = false; break;
		case 'M': opt.mbufs = (unsigned int)num_arg("--mbufs", optarg, 1u << 26); break;
		case 'Z':
			opt.mbuf_size = (unsigned int)num_arg("--mbuf-size", optarg,
							      65535 - RTE_PKTMBUF_HEADROOM);
			if (opt.mbuf_size < MIN_MBUF_SIZE)
				die("--mbuf-size: at least %u bytes (a frame's headers must be in its "
				    "first segment), got %u", MIN_MBUF_SIZE, opt.mbuf_size);
			break;
		case 'R':
			opt.worker_ring = (unsigned int)num_arg("--worker-ring", optarg, 1u << 20);
			if (opt.worker_ring < 64 || !rte_is_power_of_2(opt.worker_ring))
				die("--worker-ring: a power of two from 64 to 1048576, got %u",
				    opt.worker_ring);
			break;
		case 'P': opt.promiscuous = true; break;
		case 'V': {
			/* In the order of VLAN_STRIP, VLAN_KEEP, VLAN_DROP. */
			static const char *const modes[] = {"strip", "keep", "drop", NULL};

			opt.vlan = (uint8_t)choice_arg("--vlan", optarg, modes);
			break;
		}
		case 'h': usage(); exit(0);
		case ':': die("%s needs a value (try --help)", argv[optind - 1]);
		default:
			if (optopt != 0)
				die("unknown option -%c (try --help)", optopt);
			die("unknown option %s (try --help)", argv[optind - 1]);
		}
	}
	if (optind != argc)
		die("unexpected argument \"%s\"", argv[optind]);
	if (opt.config == NULL)
		die("-c CONFIG is required (try --help)");
	if (opt.workers == 0)
		die("--workers: at least 1");
	if (lcmp_decider_size(opt.flows) == 0)
		die("--flows: a power of two of at least %d, got %zu", LCMP_MIN_FLOWS,
		    opt.flows);
}

int
main(int argc, char **argv)
{
	unsigned int lcore, w, n_lcores_needed;
	size_t dsize;
	uint16_t p;
	int ret;
	uint64_t last_stats, last_sample, last_link, last_ctl, last_rx_change;
	uint64_t last_rx = 0, first_rx_tsc = 0, end_tsc;
	struct lcmp_config lc;

	if (sodium_init() < 0)
		die("libsodium: cannot initialise");
	ret = rte_eal_init(argc, argv);
	if (ret < 0)
		eal_failed(argc, argv);
	argc -= ret;
	argv += ret;
	if (lcmp_abi_version() != LCMP_ABI_VERSION)
		die("liblcmp_ffi.a has C ABI %u, lcmp.h %u", lcmp_abi_version(),
		    LCMP_ABI_VERSION);
	parse_args(argc, argv);
	tsc_per_us = (rte_get_tsc_hz() + 999999) / 1000000;
	read_config(opt.config);
	if (cfg.state_path[0] != '\0') {
		/* Once written, the state file is the trusted set: a key the
		 * control file removed stays removed whatever the config says. */
		struct trust_set stored;
		unsigned int i;

		if (state_read(&stored) == 1) {
			trust = stored;
			printf("lcmp-fwd: state %s:", cfg.state_path);
			for (i = 0; i < trust.n; i++)
				printf(" key id %016" PRIx64 " floor %" PRIu64, trust.keys[i].id,
				       trust.keys[i].floor);
			printf(" (%u removed)\n", trust.n_revoked);
		} else {
			printf("lcmp-fwd: state %s: none yet, the config's keys\n", cfg.state_path);
		}
	}

	n_lcores_needed = 1 + opt.workers + (opt.workers > 1 && !opt.rss ? 1 : 0);
	if (rte_lcore_count() < n_lcores_needed)
		die("%u lcores needed (main, %u worker(s)%s), EAL gave %u: use -l or --lcores",
		    n_lcores_needed, opt.workers,
		    opt.workers > 1 && !opt.rss ? ", dispatcher" : "", rte_lcore_count());

	/* Every RX queue of every rx port is polled (rx_queues_of). */
	{
		unsigned int n_rxq = 0, min_mbufs, mbufs;

		for (w = 0; w < cfg.n_rx_ports; w++) {
			p = cfg.rx_ports[w];
			if (rx_nq[p] == 0) {
				rx_nq[p] = rx_queues_of(p);
				n_rxq += rx_nq[p];
			}
		}
		/* The RX rings full of mbufs, and each lcore's mempool cache
		 * and a burst in flight: with fewer, RX starves (rx_nombuf). */
		min_mbufs = n_rxq * RX_DESC + rte_lcore_count() * (MBUF_CACHE + BURST);
		mbufs = opt.mbufs ? opt.mbufs : RTE_MAX(8192 + opt.workers * 4096, min_mbufs);
		if (mbufs < min_mbufs)
			die("--mbufs: at least %u for this run (%u RX queue(s) of %u descriptors, "
			    "%u lcores' caches and bursts), got %u", min_mbufs, n_rxq, RX_DESC,
			    rte_lcore_count(), mbufs);
		pool = rte_pktmbuf_pool_create(
			"lcmp_mbufs", mbufs, MBUF_CACHE, 0,
			(uint16_t)(RTE_PKTMBUF_HEADROOM +
				   (opt.mbuf_size ? opt.mbuf_size : RTE_MBUF_DEFAULT_DATAROOM)),
			(int)rte_socket_id());
		if (pool == NULL)
			die("mbuf pool of %u mbufs: %s", mbufs, rte_strerror(rte_errno));
	}

	RTE_ETH_FOREACH_DEV(p) {
		uint16_t n_rx = rx_nq[p];
		uint16_t n_tx = cfg.dpdk_is_egress[p] ? (uint16_t)opt.workers : 0;

		if (n_rx == 0 && n_tx == 0)
			continue;
		port_setup(p, n_rx, n_tx);
		find_af_packet_iface(p);
		af_packet_rx0[p] = af_packet_kernel_stat(p, "rx_packets");
		for (w = 0; !opt.rss && w < n_rx; w++) {
			g_rxq[n_g_rxq].port = p;
			g_rxq[n_g_rxq++].queue = (uint16_t)w;
		}
	}
	for (w = 0; w < LCMP_PORTS; w++) {
		link_state[w] = -1;
		if (cfg.egress[w].used)
			rte_eth_macaddr_get(cfg.egress[w].dpdk_port, &cfg.egress[w].src);
	}

	/* RCU: one reader thread id per worker. */
	{
		size_t sz = rte_rcu_qsbr_get_memsize(opt.workers);

		g_qsbr = rte_zmalloc("lcmp_qsbr", sz, RTE_CACHE_LINE_SIZE);
		if (g_qsbr == NULL || rte_rcu_qsbr_init(g_qsbr, opt.workers) != 0)
			die("rte_rcu_qsbr: %s", rte_strerror(rte_errno));
	}

	memset(&lc, 0, sizeof(lc));
	lc.size = sizeof(lc);
	lc.abi_version = LCMP_ABI_VERSION;
	lc.scheme = opt.scheme;
	lc.hash = LCMP_HASH_MURMUR3;
	lc.overflow = LCMP_OVERFLOW_REFUSE;
	/* The flow cache's key always, the ECMP seed unless --seed gave one,
	 * from the system's random source (docs/dpdk.md, "Security"): with
	 * public values anyone could aim flows at a victim's cache buckets or
	 * predict paths. Neither is ever printed. */
	if (getrandom(lc.flow_key, sizeof(lc.flow_key), 0) != (ssize_t)sizeof(lc.flow_key))
		die("getrandom: %s", strerror(errno));
	if (!opt.seed_set &&
	    getrandom(&opt.seed, sizeof(opt.seed), 0) != (ssize_t)sizeof(opt.seed))
		die("getrandom: %s", strerror(errno));
	lc.seed = opt.seed;
	/* The dispatcher's SipHash key, also never printed. */
	if (getrandom(dispatch_key, sizeof(dispatch_key), 0) != (ssize_t)sizeof(dispatch_key))
		die("getrandom: %s", strerror(errno));
	/* Every worker's decider reads the published generation's tables:
	 * it needs no tables of its own. */
	dsize = lcmp_decider_shared_size(opt.flows);

	/* Workers: one decider each, on the lcore's socket. */
	w = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		struct worker *wk;
		char name[32];
		void *mem;
		int32_t rc;
		int socket = (int)rte_lcore_to_socket_id(lcore);

		if (w == opt.workers) {
			if (opt.workers > 1 && !opt.rss && dispatcher_lcore == RTE_MAX_LCORE)
				dispatcher_lcore = lcore;
			continue;
		}
		wk = &workers[w];
		wk->id = w;
		wk->lcore = lcore;
		mem = rte_zmalloc_socket("lcmp_decider", dsize, LCMP_DECIDER_ALIGN, socket);
		if (mem == NULL)
			die("worker %u: %zu bytes for a %zu-flow decider: %s", w, dsize,
			    opt.flows, rte_strerror(rte_errno));
		rc = lcmp_decider_init_shared(mem, dsize, opt.flows, &lc, &wk->d);
		if (rc != LCMP_OK)
			die("worker %u: lcmp_decider_init_shared: %s", w, lcmp_strerror(rc));
		wk->txq = rte_zmalloc_socket("lcmp_txq", sizeof(struct txq) * RTE_MAX_ETHPORTS,
					     RTE_CACHE_LINE_SIZE, socket);
		wk->backlog_bytes = rte_zmalloc_socket("lcmp_backlog",
						       sizeof(uint64_t) * RTE_MAX_ETHPORTS,
						       RTE_CACHE_LINE_SIZE, socket);
		snprintf(name, sizeof(name), "lcmp_ctl%u", w);
		wk->ctl = rte_ring_create_elem(name, sizeof(struct ctl_msg), CTL_RING,
					       socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (wk->txq == NULL || wk->backlog_bytes == NULL || wk->ctl == NULL)
			die("worker %u: out of memory", w);
		if (opt.workers > 1 && !opt.rss) {
			snprintf(name, sizeof(name), "lcmp_in%u", w);
			wk->in = rte_ring_create(name, opt.worker_ring, socket,
						 RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (wk->in == NULL)
				die("worker %u: ring: %s", w, rte_strerror(rte_errno));
		}
		w++;
	}

	if (install_blob(cfg.tables_path) != 0)
		exit(1); /* load_gen said why, in one line */
	printf("lcmp-fwd: %u worker(s), %zu flows each (%zu bytes), %s, "
	       "main lcore %u (control), ECMP seed %s, flow-cache key random\n",
	       opt.workers, opt.flows, dsize,
	       opt.workers == 1 ? "direct RX" : opt.rss ? "RSS" : "software dispatcher",
	       rte_get_main_lcore(), opt.seed_set ? "as given" : "random");
	for (w = 0; w < cfg.n_rx_ports; w++) {
		char name[RTE_ETH_NAME_MAX_LEN], mac[RTE_ETHER_ADDR_FMT_SIZE];
		uint16_t port = cfg.rx_ports[w];

		if (rte_eth_dev_get_name_by_port(port, name) != 0)
			strcpy(name, "?");
		rte_ether_format_addr(mac, sizeof(mac), &rx_mac[port]);
		printf("lcmp-fwd: rx DPDK port %u (%s) MAC %s: %s, VLAN tags %s\n", port, name, mac,
		       opt.promiscuous ? "promiscuous (unicast for any MAC routed)"
				       : "unicast for this MAC routed",
		       opt.vlan == VLAN_STRIP ? "stripped" : opt.vlan == VLAN_KEEP ? "kept" : "dropped");
	}
	printf("lcmp-fwd: tables shared by every worker: %zu bytes a generation "
	       "(%zu bytes a worker with tables of its own)\n", lcmp_tables_size(),
	       lcmp_decider_size(opt.flows));
	fflush(stdout);

	telemetry_register();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (w = 0; w < opt.workers; w++)
		rte_eal_remote_launch(worker_main, &workers[w], workers[w].lcore);
	if (dispatcher_lcore != RTE_MAX_LCORE)
		rte_eal_remote_launch(dispatcher_main, NULL, dispatcher_lcore);

	last_stats = last_sample = last_link = last_ctl = last_rx_change = rte_rdtsc();
	while (!__atomic_load_n(&quit, __ATOMIC_RELAXED)) {
		uint64_t now = rte_rdtsc(), rx;

		run_hook();
		if (first_rx_tsc == 0 && __atomic_load_n(&g_rx_total, __ATOMIC_RELAXED) != 0)
			first_rx_tsc = now;
		if (opt.sample_us != 0 && now - last_sample >= opt.sample_us * tsc_per_us) {
			send_samples();
			last_sample = now;
		}
		if (opt.link_ms != 0 && now - last_link >= opt.link_ms * 1000 * tsc_per_us) {
			poll_links();
			last_link = now;
		}
		if (now - last_ctl >= 100000 * tsc_per_us) {
			poll_control_file();
			last_ctl = now;
		}
		if (opt.stats_ms != 0 && now - last_stats >= opt.stats_ms * 1000 * tsc_per_us) {
			print_stats("stats");
			last_stats = now;
		}
		if (opt.exit_idle_ms != 0) {
			rx = __atomic_load_n(&g_rx_total, __ATOMIC_RELAXED);
			if (rx != last_rx) {
				last_rx = rx;
				last_rx_change = now;
			} else if (rx != 0 && __atomic_load_n(&g_hook_state, __ATOMIC_RELAXED) != 1 &&
				   now - last_rx_change >= (uint64_t)opt.exit_idle_ms * 1000 * tsc_per_us) {
				__atomic_store_n(&quit, 1, __ATOMIC_RELAXED);
			}
		}
		rte_delay_us_sleep(50);
	}
	end_tsc = rte_rdtsc();
	rte_eal_mp_wait_lcore();
	print_stats("exit");
	if (first_rx_tsc != 0 && end_tsc > first_rx_tsc) {
		double s = (double)(end_tsc - first_rx_tsc) / (double)rte_get_tsc_hz();
		uint64_t rx = 0, tx = 0, cpu = 0;

		for (w = 0; w < opt.workers; w++) {
			rx += workers[w].stats.rx;
			tx += workers[w].stats.tx;
			cpu += workers[w].cpu_ns;
		}
		/* Per CPU-second of the workers: what a dedicated core would
		 * do, on a machine whose cores are shared (docs/dpdk.md). */
		printf("exit: rate: rx %.3f Mpps, tx %.3f Mpps over %.2f s (from the first "
		       "packet; %.3f Mpps a worker); workers' CPU time %.2f s: %.3f Mpps "
		       "per CPU-second\n", (double)rx / s / 1e6,
		       (double)tx / s / 1e6, s, (double)rx / s / 1e6 / opt.workers,
		       (double)cpu / 1e9, cpu ? (double)rx / ((double)cpu / 1e9) / 1e6 : 0.0);
	}
	for (w = 0; w < opt.workers; w++) {
		const struct lcmp_counters *c = &workers[w].lcmp;

		printf("exit: decider %u: packets=%" PRIu64 " hits=%" PRIu64
		       " new_flows=%" PRIu64 " failovers=%" PRIu64
		       " withdrawals=%" PRIu64 " unpinned=%" PRIu64
		       " no_route=%" PRIu64 " cache_full=%" PRIu64
		       " samples=%" PRIu64 "\n", w, c->packets, c->hits,
		       c->new_flows, c->failovers, c->withdrawals, c->unpinned,
		       c->no_route, c->cache_full, c->samples);
	}
	/* Only the ports this run started (stopping another one makes EAL
	 * say "already stopped"). */
	RTE_ETH_FOREACH_DEV(p) {
		if (port_started[p])
			rte_eth_dev_stop(p);
		rte_eth_dev_close(p);
	}
	rte_eal_cleanup();
	return 0;
}
