/* SPDX-License-Identifier: Apache-2.0
 *
 * lcmp-fwd: the packet parser. Ethernet (up to two 802.1Q/802.1ad tags)
 * -> IPv4 (the IHL honoured) or IPv6 (hop-by-hop, routing, destination
 * options, fragment and AH extension headers skipped, at most
 * PARSE_MAX_EXT of them) -> the 5-tuple of an lcmp_flow.
 *
 * Fragments: a first fragment (offset 0) carries the L4 header and is
 * keyed with its ports, like an unfragmented packet; a later fragment
 * (offset != 0) has no ports and is keyed by addresses and protocol only
 * (ports 0). So a fragmented datagram's later fragments may take another
 * port than its first (see docs/dpdk.md, "Parsing").
 *
 * Nothing here trusts a length field: every read is bounded by the
 * frame's length, and a frame shorter than what its headers declare is
 * PARSE_TRUNCATED.
 */
#ifndef LCMP_FWD_PARSE_H
#define LCMP_FWD_PARSE_H

#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "lcmp.h"

enum parse_result {
	PARSE_OK = 0,
	PARSE_TRUNCATED,
	PARSE_NON_IP,
};

/* Parsed headers: what the dispatcher hashes and the worker routes. */
struct parsed {
	struct lcmp_flow flow;
	uint8_t dst[16];  /* destination address, for the route lookup */
	uint32_t l3_off;  /* the IP header's offset in the frame */
	uint8_t n_vlan;   /* VLAN tags before it (0..2), 4 bytes each */
	uint8_t ttl;      /* IPv4 TTL or IPv6 hop limit, as received */
	uint8_t family;   /* LCMP_FAMILY_V4 or LCMP_FAMILY_V6 */
};

#define PARSE_MAX_EXT 4
#define PARSE_HDR_MAX 128 /* bytes copied when headers span segments */

/* The `len` bytes at `off`, or NULL when the frame is shorter. In the
 * first segment (every frame of a NIC's 2-KiB mbufs) a pointer into it
 * after one check: a segment's data_len is at most the frame's pkt_len
 * (issue 36 item 5: the frame's length and rte_pktmbuf_read's own check
 * were two checks a read). */
static inline const uint8_t *
parse_read(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint8_t *buf)
{
	if (likely(off + len <= rte_pktmbuf_data_len(m)))
		return rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	if (off + len > rte_pktmbuf_pkt_len(m))
		return NULL;
	return rte_pktmbuf_read(m, off, len, buf);
}

static inline int
proto_has_ports(uint8_t proto)
{
	/* TCP, UDP, DCCP, UDP-Lite, SCTP: ports in the first 4 bytes. */
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == 33 ||
	       proto == 136 || proto == IPPROTO_SCTP;
}

/* Ports at `off` into `flow` (a first fragment or whole packet), within
 * the datagram (which ends at `end`, before any Ethernet padding). */
static inline int
parse_ports(const struct rte_mbuf *m, uint32_t off, uint32_t end,
	    struct lcmp_flow *flow)
{
	uint8_t tmp[4];
	const uint8_t *p;

	if (!proto_has_ports(flow->proto))
		return PARSE_OK;
	if (off + 4 > end)
		return PARSE_TRUNCATED;
	p = parse_read(m, off, 4, tmp);
	if (p == NULL)
		return PARSE_TRUNCATED;
	flow->sport = (uint16_t)((p[0] << 8) | p[1]);
	flow->dport = (uint16_t)((p[2] << 8) | p[3]);
	return PARSE_OK;
}

static inline int
parse_ipv4(const struct rte_mbuf *m, uint32_t off, struct parsed *out, struct lcmp_flow *fl)
{
	uint8_t tmp[60];
	const struct rte_ipv4_hdr *ip;
	uint32_t ihl, total;
	uint16_t frag;

	ip = (const struct rte_ipv4_hdr *)parse_read(m, off, 20, tmp);
	if (ip == NULL)
		return PARSE_TRUNCATED;
	if ((ip->version_ihl >> 4) != 4)
		return PARSE_NON_IP;
	ihl = (uint32_t)(ip->version_ihl & 0x0f) * 4;
	total = rte_be_to_cpu_16(ip->total_length);
	/* A header shorter than 20 bytes, or a datagram shorter than its
	 * header or longer than the frame, is malformed: truncated. */
	if (ihl < 20 || total < ihl || off + total > rte_pktmbuf_pkt_len(m))
		return PARSE_TRUNCATED;
	memset(fl, 0, sizeof(*fl));
	out->ttl = ip->time_to_live;
	memcpy(fl->src, &ip->src_addr, 4);
	memcpy(fl->dst, &ip->dst_addr, 4);
	memcpy(out->dst, &ip->dst_addr, 4);
	fl->proto = ip->next_proto_id;
	fl->family = LCMP_FAMILY_V4;
	out->family = LCMP_FAMILY_V4;
	frag = rte_be_to_cpu_16(ip->fragment_offset);
	if ((frag & RTE_IPV4_HDR_OFFSET_MASK) != 0)
		return PARSE_OK; /* a later fragment: no ports */
	return parse_ports(m, off + ihl, off + total, fl);
}

/* Out of line: the worker inlines the parser, and IPv4 is its common
 * case. */
static __rte_noinline int
parse_ipv6(const struct rte_mbuf *m, uint32_t off, struct parsed *out, struct lcmp_flow *fl)
{
	uint8_t tmp[40];
	const struct rte_ipv6_hdr *ip;
	const uint8_t *ext;
	uint32_t end, l4;
	uint8_t next;
	int i;

	ip = (const struct rte_ipv6_hdr *)parse_read(m, off, 40, tmp);
	if (ip == NULL)
		return PARSE_TRUNCATED;
	if ((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6)
		return PARSE_NON_IP;
	end = off + 40 + rte_be_to_cpu_16(ip->payload_len);
	if (end > rte_pktmbuf_pkt_len(m))
		return PARSE_TRUNCATED;
	memset(fl, 0, sizeof(*fl));
	out->ttl = ip->hop_limits;
	memcpy(fl->src, ip->src_addr, 16);
	memcpy(fl->dst, ip->dst_addr, 16);
	memcpy(out->dst, ip->dst_addr, 16);
	fl->family = LCMP_FAMILY_V6;
	out->family = LCMP_FAMILY_V6;
	next = ip->proto;
	l4 = off + 40;
	for (i = 0; i < PARSE_MAX_EXT; i++) {
		uint8_t etmp[8];

		if (next != IPPROTO_HOPOPTS && next != IPPROTO_ROUTING &&
		    next != IPPROTO_DSTOPTS && next != IPPROTO_FRAGMENT &&
		    next != IPPROTO_AH)
			break;
		ext = parse_read(m, l4, 8, etmp);
		if (ext == NULL || l4 + 8 > end)
			return PARSE_TRUNCATED;
		if (next == IPPROTO_FRAGMENT) {
			uint16_t fo = (uint16_t)((ext[2] << 8) | ext[3]);

			if ((fo & 0xfff8) != 0) {
				/* A later fragment: addresses and protocol. */
				fl->proto = ext[0];
				return PARSE_OK;
			}
			next = ext[0];
			l4 += 8;
		} else if (next == IPPROTO_AH) {
			next = ext[0];
			l4 += ((uint32_t)ext[1] + 2) * 4;
		} else {
			next = ext[0];
			l4 += ((uint32_t)ext[1] + 1) * 8;
		}
	}
	fl->proto = next;
	if (l4 > end)
		return PARSE_TRUNCATED;
	return parse_ports(m, l4, end, fl);
}

/* Parses one frame into `out`, its 5-tuple into `fl` (the worker passes
 * its burst's lcmp_packet, so that the flow is written once, not copied
 * from a stack struct: issue 36 item 5). */
static __rte_always_inline int
parse_packet_to(const struct rte_mbuf *m, struct parsed *out, struct lcmp_flow *fl)
{
	uint8_t tmp[sizeof(struct rte_ether_hdr)];
	const struct rte_ether_hdr *eth;
	const uint8_t *tag;
	uint32_t off = sizeof(struct rte_ether_hdr);
	uint16_t type;
	int i;

	eth = (const struct rte_ether_hdr *)parse_read(m, 0, sizeof(*eth), tmp);
	if (eth == NULL)
		return PARSE_TRUNCATED;
	type = rte_be_to_cpu_16(eth->ether_type);
	for (i = 0; i < 2 && (type == RTE_ETHER_TYPE_VLAN ||
			      type == RTE_ETHER_TYPE_QINQ); i++) {
		tag = parse_read(m, off, 4, tmp);
		if (tag == NULL)
			return PARSE_TRUNCATED;
		type = (uint16_t)((tag[2] << 8) | tag[3]);
		off += 4;
	}
	out->l3_off = off;
	out->n_vlan = (uint8_t)i;
	if (type == RTE_ETHER_TYPE_IPV4)
		return parse_ipv4(m, off, out, fl);
	if (type == RTE_ETHER_TYPE_IPV6)
		return parse_ipv6(m, off, out, fl);
	return PARSE_NON_IP;
}

/* The worker's common case in one pass (issue 36 item 5, as l3fwd's
 * fixed-offset path): an untagged IPv4 frame without options whose
 * Ethernet, IP and L4 port bytes (38) are in the first segment, a TCP or
 * UDP datagram that is whole or a first fragment, its total length
 * within the frame. Writes the flow's address, port, protocol and family
 * fields (lcmp.h: the rest of an IPv4 address is ignored) and returns the
 * TTL; 0 for any other frame, which parse_packet_to then parses in full
 * (it gives the same flow for the frames this accepts). */
#define PARSE_FAST_LEN 38 /* Ethernet 14, IPv4 20, the L4 ports 4 */
static __rte_always_inline uint8_t
parse_v4_fast(const struct rte_mbuf *m, const uint8_t *f, struct lcmp_flow *fl)
{
	uint32_t head;
	uint16_t total, frag;
	uint8_t proto;

	if (unlikely(rte_pktmbuf_data_len(m) < PARSE_FAST_LEN))
		return 0;
	/* The EtherType and the version and IHL: 08 00 45. */
	memcpy(&head, f + 12, 4);
	if ((head & rte_cpu_to_be_32(0xffffff00)) != rte_cpu_to_be_32(0x08004500))
		return 0;
	memcpy(&total, f + 16, 2);
	total = rte_be_to_cpu_16(total);
	memcpy(&frag, f + 20, 2);
	proto = f[23];
	/* The ports within the datagram, the datagram within the frame, no
	 * later fragment (which has no ports). */
	if (total < 24 || 14u + total > rte_pktmbuf_pkt_len(m) ||
	    (rte_be_to_cpu_16(frag) & RTE_IPV4_HDR_OFFSET_MASK) != 0 ||
	    (proto != IPPROTO_UDP && proto != IPPROTO_TCP))
		return 0;
	memcpy(fl->src, f + 26, 4);
	memcpy(fl->dst, f + 30, 4);
	fl->sport = (uint16_t)((f[34] << 8) | f[35]);
	fl->dport = (uint16_t)((f[36] << 8) | f[37]);
	fl->proto = proto;
	fl->family = LCMP_FAMILY_V4;
	return f[22];
}

/* Parses one frame into `out` (its 5-tuple into out->flow). */
static inline int
parse_packet(const struct rte_mbuf *m, struct parsed *out)
{
	return parse_packet_to(m, out, &out->flow);
}

#endif /* LCMP_FWD_PARSE_H */
