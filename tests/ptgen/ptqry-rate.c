/* ptqry-rate: how fast libipt's query decoder alone goes through a stream.
 *
 *	ptqry-rate [--packets] STREAM...
 *
 * Drives pt_qry_cond_branch(), pt_qry_indirect_branch() and pt_qry_event()
 * over raw Intel PT streams (as `ptgen-walk --aux-dump` writes them) with
 * no memory image and no walk: whichever query the next packet answers is
 * the one asked.  Every decoder built on libipt's query decoder (ptconv's
 * walker among them) makes at least these calls, so the rate printed is
 * the ceiling of such a decoder on this machine; contrib/bench prints it
 * beside the walker's rate.  CPU time of the decoding loops only (not
 * of reading the files).
 *
 * With --packets, libipt's packet decoder alone (pt_pkt_next): the ceiling
 * of a decoder that would take TNT bits from whole packets instead.
 *
 * Prints one line: conditional bits, indirect targets, events (packets of
 * other kinds with --packets), decode errors, CPU seconds and queries per
 * second (bits and targets per second).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <intel-pt.h>

#include "read-file.h"

struct counts {
	uint64_t bits, tips, events, errors;
};

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void init_config(struct pt_config *cfg, uint8_t *buf, size_t size)
{
	pt_config_init(cfg);
	cfg->begin = buf;
	cfg->end = buf + size;
}

/* Take every pending event; returns the last status or an error. */
static int drain_events(struct pt_query_decoder *q, int st, struct counts *c)
{
	struct pt_event ev;

	while (st >= 0 && (st & pts_event_pending)) {
		st = pt_qry_event(q, &ev, sizeof(ev));
		if (st >= 0)
			c->events++;
	}
	return st;
}

static double decode(const char *path, struct counts *c)
{
	struct pt_query_decoder *q;
	struct pt_config cfg;
	size_t size;
	uint8_t *buf = ptgen_read_file("ptqry-rate", path, &size);
	uint64_t ip;
	double t0;
	int st, taken;

	init_config(&cfg, buf, size);
	q = pt_qry_alloc_decoder(&cfg);
	if (!q) {
		fprintf(stderr, "ptqry-rate: %s: cannot allocate a query decoder\n", path);
		exit(2);
	}
	t0 = cpu_seconds();
	for (;;) {
		st = pt_qry_sync_forward(q, &ip);
		if (st == -pte_eos)
			break;
		if (st < 0) {
			c->errors++;
			break;
		}
		for (;;) {
			st = drain_events(q, st, c);
			if (st < 0)
				break;
			st = pt_qry_cond_branch(q, &taken);
			if (st >= 0) {
				c->bits++;
				continue;
			}
			if (st != -pte_bad_query)
				break;
			st = pt_qry_indirect_branch(q, &ip);
			if (st >= 0) {
				c->tips++;
				continue;
			}
			break;
		}
		if (st == -pte_eos)
			break;
		c->errors++;	/* resynchronise at the next PSB */
	}
	t0 = cpu_seconds() - t0;
	pt_qry_free_decoder(q);
	free(buf);
	return t0;
}

static double decode_packets(const char *path, struct counts *c)
{
	struct pt_packet_decoder *pk;
	struct pt_packet p;
	struct pt_config cfg;
	size_t size;
	uint8_t *buf = ptgen_read_file("ptqry-rate", path, &size);
	double t0;
	int st;

	init_config(&cfg, buf, size);
	pk = pt_pkt_alloc_decoder(&cfg);
	if (!pk) {
		fprintf(stderr, "ptqry-rate: %s: cannot allocate a packet decoder\n", path);
		exit(2);
	}
	t0 = cpu_seconds();
	while (pt_pkt_sync_forward(pk) >= 0) {
		while ((st = pt_pkt_next(pk, &p, sizeof(p))) >= 0) {
			switch (p.type) {
			case ppt_tnt_8:
			case ppt_tnt_64:
				c->bits += p.payload.tnt.bit_size;
				break;
			case ppt_tip:
				c->tips++;
				break;
			default:
				c->events++;
				break;
			}
		}
		if (st == -pte_eos)
			break;
		c->errors++;
	}
	t0 = cpu_seconds() - t0;
	pt_pkt_free_decoder(pk);
	free(buf);
	return t0;
}

int main(int argc, char **argv)
{
	struct counts c = { 0 };
	double t = 0;
	int i = 1, packets = 0;

	if (argc > 1 && !strcmp(argv[1], "--packets")) {
		packets = 1;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: ptqry-rate [--packets] STREAM...\n");
		return 2;
	}
	for (; i < argc; i++)
		t += packets ? decode_packets(argv[i], &c) : decode(argv[i], &c);
	printf("%" PRIu64 " conditional bits, %" PRIu64 " indirect targets, %" PRIu64
	       " %s, %" PRIu64 " errors in %.3f s CPU: %.3g queries/s\n",
	       c.bits, c.tips, c.events, packets ? "other packets" : "events", c.errors, t, t > 0 ? (double)(c.bits + c.tips) / t : 0.0);
	return 0;
}
