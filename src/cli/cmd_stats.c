/* ptconv stats: what a ptconv trace holds, read through libptconv-trace:
 * instruction and branch totals (the MPKI denominators), the branch mix,
 * gaps by cause, and the hottest branches with their taken rates. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_event.h"
#include "cli/cli.h"
#include "common/error.h"
#include "common/json.h"
#include "ptconv/trace.h"
#include "writers/wutil.h"

struct site {
	uint64_t ip, execs, taken, targets_hash;
	uint8_t kind;
};

static int by_execs(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	if (x->execs != y->execs)
		return x->execs < y->execs ? 1 : -1;
	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

/* The same figures as the text, as one JSON object: counts are exact
 * integers (rates are left to the reader), addresses hex strings (they
 * may exceed what a JSON double holds exactly). */
static void print_json(const char *path, const struct ptc_trace_info *info, uint64_t all_insns,
		       uint64_t br, const uint64_t *kinds, const uint64_t *taken, const uint64_t *gaps,
		       uint64_t real_gaps, uint64_t lost, const struct site *sites, size_t n_sites, size_t top)
{
	struct ptc_json j;
	char ip[32];
	size_t i;

	ptc_json_init(&j, stdout);
	ptc_json_begin_object(&j, NULL);
	ptc_json_string(&j, "file", path);
	ptc_json_u64(&j, "pid", info->pid);
	ptc_json_u64(&j, "tid", info->tid);
	ptc_json_string(&j, "comm", info->comm);
	ptc_json_u64(&j, "version", info->version);
	ptc_json_u64(&j, "chunks", info->chunks);
	ptc_json_u64(&j, "instructions", all_insns);
	ptc_json_u64(&j, "branches", br);
	ptc_json_u64(&j, "static_branches", n_sites);
	ptc_json_begin_object(&j, "kinds");	/* executions and taken ones by kind */
	for (i = 0; i < 7; i++) {
		ptc_json_begin_object(&j, ptc_trace_kind_name((int)i));
		ptc_json_u64(&j, "executions", kinds[i]);
		ptc_json_u64(&j, "taken", taken[i]);
		ptc_json_end_object(&j);
	}
	ptc_json_end_object(&j);
	ptc_json_u64(&j, "gaps", real_gaps);
	ptc_json_begin_object(&j, "gaps_by_cause");
	for (i = 0; i < 16; i++)
		if (gaps[i] && i != PTC_GAP_START)
			ptc_json_u64(&j, ptc_trace_gap_cause_name((int)i), gaps[i]);
	ptc_json_end_object(&j);
	ptc_json_u64(&j, "lost_branches", lost);	/* over the gaps that know theirs */
	ptc_json_u64(&j, "stream_starts", gaps[PTC_GAP_START]);
	ptc_json_begin_array(&j, "hottest");
	for (i = 0; i < n_sites && i < top; i++) {
		snprintf(ip, sizeof(ip), "0x%" PRIx64, sites[i].ip);
		ptc_json_begin_object(&j, NULL);
		ptc_json_string(&j, "ip", ip);
		ptc_json_string(&j, "kind", ptc_trace_kind_name(sites[i].kind));
		ptc_json_u64(&j, "executions", sites[i].execs);
		ptc_json_u64(&j, "taken", sites[i].taken);
		ptc_json_end_object(&j);
	}
	ptc_json_end_array(&j);
	ptc_json_end_object(&j);
	fputc('\n', stdout);
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct ptc_trace_record buf[4096];
	uint64_t kinds[8] = { 0 }, taken[8] = { 0 }, gaps[16] = { 0 }, insns = 0, lost = 0, real_gaps, br, all_insns;
	struct site *sites = NULL;
	size_t n_sites = 0, cap = 0, top = 20, i;
	struct ptc_map map;
	struct ptc_trace_info info;
	struct ptc_trace *t;
	char msg[1024] = "";
	int opt, err, n, json = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
		if (opt == 't') {
			top = strtoul(optarg, NULL, 0);
		} else if (opt == 'j') {
			json = 1;
		} else {
			fprintf(opt == 'h' ? stdout : stderr, "usage: ptconv stats [--top N] [--json] TRACE.ptc\n");
			return opt == 'h' ? PTC_EXIT_OK : PTC_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: ptconv stats [--top N] [--json] TRACE.ptc\n");
		return PTC_EXIT_USAGE;
	}
	t = ptc_trace_open_msg(argv[optind], &err, msg, sizeof(msg));
	if (!t) {
		ptc_cli_error("%s", msg[0] ? msg : ptc_errstr(err));
		return PTC_EXIT_INPUT;
	}
	if (ptc_map_init(&map) < 0) {
		ptc_trace_close(t);
		return PTC_EXIT_INPUT;
	}
	ptc_trace_info(t, &info);
	while ((n = ptc_trace_read(t, buf, 4096)) > 0) {
		int k;
		for (k = 0; k < n; k++) {
			const struct ptc_trace_record *r = &buf[k];
			uint32_t id;
			if (r->kind == PTC_TRACE_GAP) {
				struct ptc_trace_gap g;
				gaps[r->taken < 16 ? r->taken : 15]++;
				if (ptc_trace_gap(t, r->insns, &g) == 0 && g.lost_branches != UINT64_MAX)
					lost += g.lost_branches;
				continue;
			}
			kinds[r->kind & 7]++;
			taken[r->kind & 7] += r->taken;
			insns += r->insns;
			id = ptc_map_get(&map, r->ip);
			if (id == UINT32_MAX) {
				if (n_sites == cap) {
					struct site *ns;
					cap = cap ? cap * 2 : 4096;
					ns = realloc(sites, cap * sizeof(*ns));
					if (!ns)
						goto nomem;
					sites = ns;
				}
				id = (uint32_t)n_sites++;
				memset(&sites[id], 0, sizeof(sites[id]));
				sites[id].ip = r->ip;
				sites[id].kind = r->kind;
				if (ptc_map_put(&map, r->ip, id) < 0)
					goto nomem;
			}
			sites[id].execs++;
			sites[id].taken += r->taken;
		}
	}
	if (n < 0) {
		ptc_cli_error("%s", ptc_trace_errmsg(t));
		free(sites);
		ptc_map_free(&map);
		ptc_trace_close(t);
		return PTC_EXIT_INPUT;
	}
	qsort(sites, n_sites, sizeof(*sites), by_execs);
	/* A stream (re)start record marks where execution begins; it loses
	 * nothing, so it is counted apart from the gaps. */
	for (i = 0, real_gaps = 0; i < 16; i++)
		if (i != PTC_GAP_START)
			real_gaps += gaps[i];
	for (i = 0, br = 0; i < 7; i++)
		br += kinds[i];
	all_insns = insns + info.tail_insns;
	if (json) {
		print_json(argv[optind], &info, all_insns, br, kinds, taken, gaps, real_gaps, lost,
			   sites, n_sites, top);
	} else {
		printf("trace: %s (pid %u tid %u comm %s), format version %u, %" PRIu64 " chunks\n",
		       argv[optind], info.pid, info.tid, info.comm, info.version, info.chunks);
		printf("instructions: %" PRIu64 "\n", all_insns);
		printf("branches: %" PRIu64 " (%.2f per 1000 instructions)\n", br,
		       all_insns ? 1000.0 * br / all_insns : 0.0);
		printf("conditional: %" PRIu64 " (%.2f per 1000 instructions), taken %.2f%%\n", kinds[5],
		       all_insns ? 1000.0 * kinds[5] / all_insns : 0.0,
		       kinds[5] ? 100.0 * taken[5] / kinds[5] : 0.0);
		printf("MPKI denominator: %.6f kilo-instructions\n", all_insns / 1000.0);
		printf("static branches: %zu\n", n_sites);
		printf("branch mix:\n");
		for (i = 0; i < 7; i++)
			printf("  %-9s %14" PRIu64 "  %6.2f%%  taken %6.2f%%\n", ptc_trace_kind_name((int)i), kinds[i],
			       br ? 100.0 * kinds[i] / br : 0.0, kinds[i] ? 100.0 * taken[i] / kinds[i] : 0.0);
		printf("gaps: %" PRIu64 "", real_gaps);
		for (i = 0; i < 16; i++)
			if (gaps[i] && i != PTC_GAP_START)
				printf(" %s=%" PRIu64, ptc_trace_gap_cause_name((int)i), gaps[i]);
		if (lost)
			printf(" (about %" PRIu64 " branches lost)", lost);
		printf("\n");
		printf("stream starts: %" PRIu64 "\n", gaps[PTC_GAP_START]);
		printf("hottest branches (ip kind executions share taken-rate):\n");
		for (i = 0; i < n_sites && i < top; i++)
			printf("  0x%016" PRIx64 " %-8s %12" PRIu64 " %6.2f%% %7.2f%%\n", sites[i].ip,
			       ptc_trace_kind_name(sites[i].kind), sites[i].execs,
			       br ? 100.0 * sites[i].execs / br : 0.0,
			       100.0 * sites[i].taken / sites[i].execs);
	}
	free(sites);
	ptc_map_free(&map);
	ptc_trace_close(t);
	return PTC_EXIT_OK;
nomem:
	ptc_cli_error("out of memory");
	free(sites);
	ptc_map_free(&map);
	ptc_trace_close(t);
	return PTC_EXIT_INPUT;
}
