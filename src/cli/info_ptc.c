/* ptconv info TRACE.ptc: what a ptconv trace holds and where its bytes go,
 * from its header, static part and chunk index alone (libptconv-trace's
 * ptc_trace_info and ptc_trace_layout), plus its first and last records'
 * times: at most two chunks are expanded, so it answers at once whatever
 * the trace's length.  ptconv stats reads every record. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/error.h"
#include "common/json.h"
#include "ptconv/trace.h"

/* The time of record index into *time; 0, or a negative error. */
static int record_time(struct ptc_trace *t, uint64_t index, uint64_t *time)
{
	struct ptc_trace_record r;
	int n;

	if ((n = ptc_trace_seek_record(t, index)) < 0)
		return n;
	if ((n = ptc_trace_read(t, &r, 1)) < 0)
		return n;
	if (n != 1)
		return -ptc_err_truncated;
	*time = r.time;
	return 0;
}

/* The gap table's records by kind: stream starts lose nothing. */
struct gap_summary {
	uint64_t losses, starts, lost_bytes, lost_branches, unknown_branches;
};

static void summarize_gaps(const struct ptc_trace *t, const struct ptc_trace_info *in, struct gap_summary *g)
{
	struct ptc_trace_gap gap;
	uint64_t i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < in->gaps; i++) {
		if (ptc_trace_gap(t, i, &gap) < 0)
			continue;
		if (gap.cause == PTC_TRACE_GAP_START) {
			g->starts++;
			continue;
		}
		g->losses++;
		g->lost_bytes += gap.lost_bytes;
		if (gap.lost_branches == UINT64_MAX)
			g->unknown_branches++;
		else
			g->lost_branches += gap.lost_branches;
	}
}

static double per_branch(uint64_t bytes, uint64_t branches)
{
	return branches ? (double)bytes / (double)branches : 0.0;
}

static void print_text(const struct ptc_trace *t, const char *path, const struct ptc_trace_info *in, const struct ptc_trace_layout *l,
		       const struct gap_summary *g, int have_time, uint64_t first, uint64_t last)
{
	printf("%-17s%s (ptconv trace, format version %u)\n", "file:", path, in->version);
	printf("%-17spid %u, tid %u, comm %s, ", "thread:", in->pid, in->tid, in->comm);
	if (in->cpu < 0)
		printf("per-thread stream\n");
	else
		printf("cpu %d\n", in->cpu);
	printf("%-17s%" PRIu64 ": %" PRIu64 " branches, %" PRIu64 " gaps, %" PRIu64 " stream starts\n",
	       "records:", in->records, in->branches, g->losses, g->starts);
	if (g->losses) {
		printf("%-17s%" PRIu64 " trace bytes, %" PRIu64 " branches", "lost:", g->lost_bytes,
		       g->lost_branches);
		if (g->unknown_branches)
			printf(" and an unknown number at %" PRIu64 " gaps", g->unknown_branches);
		printf(" (ptconv dump lists the gaps)\n");
	}
	printf("%-17s%" PRIu64 " (%" PRIu64 " after the last branch)\n", "instructions:", in->instructions,
	       in->tail_insns);
	if (have_time)
		printf("%-17s%" PRIu64 " .. %" PRIu64 " (first and last record)\n", "time:", first, last);
	printf("%-17s%" PRIu64 " (block and branch pairs), %" PRIu64 " successor edges\n", "static nodes:",
	       in->static_branches, l->edges);
	printf("%-17s%" PRIu64 ", up to %" PRIu64 " records each\n", "chunks:", in->chunks, l->max_chunk_records);
	printf("%-17s%" PRIu64 " bytes in %" PRIu64 " ranges\n", "embedded code:", l->code_bytes, l->code_ranges);
	if (in->version >= 3)
		printf("%-17s%" PRIu64 " address ranges%s\n", "symbols:", l->symbols,
		       ptc_trace_flags(t) & PTC_TRACE_UNTIMED ? "; recorded without timing packets" : "");
	printf("%-17s%" PRIu64 " bytes, %.3f per branch\n", "size:", l->file_bytes,
	       per_branch(l->file_bytes, in->branches));
	printf("  %-24s%12" PRIu64 "\n", "header", l->header_bytes);
	printf("  %-24s%12" PRIu64 "  (%.3f per branch; expanded %" PRIu64
	       ": taken bits, target slots, events)\n", "chunks", l->chunk_bytes,
	       per_branch(l->chunk_bytes, in->branches), l->chunk_raw_bytes);
	printf("  %-24s%12" PRIu64 "  (expanded %" PRIu64 ", of which:)\n", "static part", l->static_bytes,
	       l->static_raw_bytes);
	printf("    %-22s%12" PRIu64 "\n", "head", l->static_head_bytes);
	printf("    %-22s%12" PRIu64 "\n", "node and edge tables", l->table_bytes);
	printf("    %-22s%12" PRIu64 "\n", "chunk index", l->index_bytes);
	printf("    %-22s%12" PRIu64 "\n", "gap table", l->gap_table_bytes);
	printf("    %-22s%12" PRIu64 "\n", "code", l->code_bytes);
	printf("    %-22s%12" PRIu64 "\n", "strings", l->string_bytes);
	if (in->version >= 3)
		printf("    %-22s%12" PRIu64 "\n", "symbols", l->symbol_bytes);
	if (l->other_bytes)
		printf("  %-24s%12" PRIu64 "  (in no part of the trace)\n", "other", l->other_bytes);
}

static void print_json(const struct ptc_trace *t, const char *path, const struct ptc_trace_info *in, const struct ptc_trace_layout *l,
		       const struct gap_summary *g, int have_time, uint64_t first, uint64_t last)
{
	struct ptc_json j;

	ptc_json_init(&j, stdout);
	ptc_json_begin_object(&j, NULL);
	ptc_json_string(&j, "file", path);
	ptc_json_string(&j, "kind", "ptconv-trace");
	ptc_json_u64(&j, "version", in->version);
	ptc_json_u64(&j, "pid", in->pid);
	ptc_json_u64(&j, "tid", in->tid);
	ptc_json_i64(&j, "cpu", in->cpu);
	ptc_json_string(&j, "comm", in->comm);
	ptc_json_u64(&j, "records", in->records);
	ptc_json_u64(&j, "branches", in->branches);
	ptc_json_u64(&j, "gaps", g->losses);
	ptc_json_u64(&j, "stream_starts", g->starts);
	ptc_json_u64(&j, "lost_bytes", g->lost_bytes);
	ptc_json_u64(&j, "lost_branches", g->lost_branches);
	ptc_json_u64(&j, "gaps_losing_unknown_branches", g->unknown_branches);
	ptc_json_u64(&j, "instructions", in->instructions);
	ptc_json_u64(&j, "tail_instructions", in->tail_insns);
	if (have_time) {
		ptc_json_u64(&j, "first_time", first);
		ptc_json_u64(&j, "last_time", last);
	}
	ptc_json_u64(&j, "static_nodes", in->static_branches);
	ptc_json_u64(&j, "edges", l->edges);
	ptc_json_u64(&j, "chunks", in->chunks);
	ptc_json_u64(&j, "max_chunk_records", l->max_chunk_records);
	ptc_json_u64(&j, "code_ranges", l->code_ranges);
	ptc_json_u64(&j, "symbols", l->symbols);
	ptc_json_bool(&j, "untimed", !!(ptc_trace_flags(t) & PTC_TRACE_UNTIMED));
	ptc_json_begin_object(&j, "bytes");
	ptc_json_u64(&j, "file", l->file_bytes);
	ptc_json_u64(&j, "header", l->header_bytes);
	ptc_json_u64(&j, "chunks", l->chunk_bytes);
	ptc_json_u64(&j, "chunks_expanded", l->chunk_raw_bytes);
	ptc_json_u64(&j, "static", l->static_bytes);
	ptc_json_u64(&j, "static_expanded", l->static_raw_bytes);
	ptc_json_u64(&j, "static_head", l->static_head_bytes);
	ptc_json_u64(&j, "tables", l->table_bytes);
	ptc_json_u64(&j, "chunk_index", l->index_bytes);
	ptc_json_u64(&j, "gap_table", l->gap_table_bytes);
	ptc_json_u64(&j, "code", l->code_bytes);
	ptc_json_u64(&j, "strings", l->string_bytes);
	ptc_json_u64(&j, "symbols", l->symbol_bytes);
	ptc_json_u64(&j, "other", l->other_bytes);
	ptc_json_end_object(&j);
	ptc_json_end_object(&j);
	fputc('\n', stdout);
}

int ptc_info_ptc(const char *path, int json)
{
	struct ptc_trace_info in;
	struct ptc_trace_layout l;
	struct gap_summary g;
	struct ptc_trace *t;
	uint64_t first = 0, last = 0;
	char msg[1024] = "";
	int err = 0, have_time = 0;

	t = ptc_trace_open_msg(path, &err, msg, sizeof(msg));
	if (!t) {
		ptc_cli_error("%s", msg[0] ? msg : ptc_errstr(err));
		return PTC_EXIT_INPUT;
	}
	ptc_trace_info(t, &in);
	if ((err = ptc_trace_layout(t, &l, sizeof(l))) < 0) {
		ptc_cli_error("%s: %s", path, ptc_errstr(err));
		ptc_trace_close(t);
		return PTC_EXIT_INPUT;
	}
	summarize_gaps(t, &in, &g);
	/* A damaged chunk leaves the times out: what the header and the
	 * static part say is still printed, then why the records are not. */
	if (in.records) {
		err = record_time(t, 0, &first);
		if (err >= 0)
			err = record_time(t, in.records - 1, &last);
		have_time = err >= 0;
	}
	if (json)
		print_json(t, path, &in, &l, &g, have_time, first, last);
	else
		print_text(t, path, &in, &l, &g, have_time, first, last);
	fflush(stdout);
	if (err < 0)
		ptc_cli_error("%s", ptc_trace_errmsg(t)[0] ? ptc_trace_errmsg(t) : ptc_errstr(err));
	ptc_trace_close(t);
	return err < 0 ? PTC_EXIT_INPUT : PTC_EXIT_OK;
}
