/* ptconv dump: print a trace written by ptconv, one record per line.
 * Reads ptconv traces (through libptconv-trace) and xtrace instruction
 * streams (*.xinsndata.bin, through the xtrace reader). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "cli/cli.h"
#include "common/error.h"
#include "ptconv/trace.h"
#include "writers/xtrace.h"

static void usage(FILE *to)
{
	fprintf(to, "usage: ptconv dump [-i] [--start REC] [--count N] TRACE.ptc\n"
		    "       ptconv dump [--count N] FILE.xinsndata.bin\n"
		    "  -i, --insns   list every instruction of each block (from the embedded code)\n");
}

/* Print the instructions of the block [start .. r->ip]. */
static void list_block(struct ptc_trace *t, ZydisDecoder *dec, ZydisFormatter *fmt,
		       uint64_t start, const struct ptc_trace_record *r)
{
	uint64_t ip = start;
	uint32_t i;

	for (i = 0; i < r->insns; i++) {
		uint8_t b[ZYDIS_MAX_INSTRUCTION_LENGTH];
		ZydisDecodedInstruction zi;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		char text[256];
		size_t n = ptc_trace_code(t, ip, b, sizeof(b));

		if (!n || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, b, n, &zi, ops))) {
			printf("    0x%016" PRIx64 "  (no code bytes: %" PRIu32 " instructions not listed)\n",
			       ip, r->insns - i);
			return;
		}
		ZydisFormatterFormatInstruction(fmt, &zi, ops, zi.operand_count_visible, text,
						sizeof(text), ip, NULL);
		printf("    0x%016" PRIx64 "  %s\n", ip, text);
		ip += zi.length;
	}
}

static int dump_ptc(const char *path, uint64_t start, uint64_t count, int insns)
{
	static struct ptc_trace_record buf[1024];
	struct ptc_trace_info info;
	struct ptc_trace *t;
	ZydisDecoder dec;
	ZydisFormatter fmt;
	char msg[1024] = "";
	uint64_t idx, next_start = 0, before = 0;
	int err, n = 0;

	t = ptc_trace_open_msg(path, &err, msg, sizeof(msg));
	if (!t) {
		ptc_cli_error("%s", msg[0] ? msg : ptc_errstr(err));
		return PTC_EXIT_INPUT;
	}
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_ATT);
	ptc_trace_info(t, &info);
	printf("# ptconv trace version %u: pid %u tid %u comm %s cpu %d\n", info.version, info.pid,
	       info.tid, info.comm, info.cpu);
	printf("# %" PRIu64 " records (%" PRIu64 " branches, %" PRIu64 " gaps), %" PRIu64
	       " instructions (%" PRIu64 " after the last branch), %" PRIu64 " chunks\n",
	       info.records, info.branches, info.gaps, info.instructions, info.tail_insns, info.chunks);
	printf("# record time ip kind taken target insns flags\n");
	if (start) {
		struct ptc_trace_record prev;
		if ((err = ptc_trace_seek_record(t, start - 1)) < 0 || ptc_trace_read(t, &prev, 1) != 1)
			goto readerr;
		next_start = ptc_record_dest(&prev);
	}
	idx = ptc_trace_tell(t, &before);
	while (count && (n = ptc_trace_read(t, buf, count < 1024 ? count : 1024)) > 0) {
		int i;
		for (i = 0; i < n; i++, idx++) {
			const struct ptc_trace_record *r = &buf[i];
			if (r->kind == PTC_TRACE_GAP) {
				struct ptc_trace_gap g;
				ptc_trace_gap(t, r->insns, &g);
				printf("%" PRIu64 " %" PRIu64 " gap cause %u ip 0x%" PRIx64 " resume 0x%" PRIx64
				       " aux 0x%" PRIx64 " lost-branches %" PRId64 " lost-bytes %" PRIu64 " %s\n",
				       idx, r->time, r->taken, g.ip, g.resume_ip, g.aux_offset,
				       g.lost_branches == UINT64_MAX ? (int64_t)-1 : (int64_t)g.lost_branches,
				       g.lost_bytes, g.detail);
				next_start = ptc_record_dest(r);
				continue;
			}
			if (insns && next_start)
				list_block(t, &dec, &fmt, next_start, r);
			printf("%" PRIu64 " %" PRIu64 " 0x%" PRIx64 " %s %u 0x%" PRIx64 " %" PRIu32 " %u\n", idx,
			       r->time, r->ip, ptc_trace_kind_name(r->kind), r->taken, r->target, r->insns, r->flags);
			next_start = ptc_record_dest(r);
		}
		count -= (uint64_t)n;
	}
	if (n < 0)
		goto readerr;
	if (n == 0 && insns && info.tail_insns && next_start) {
		/* the trace ends inside a block (a slice): its first
		 * instructions, which no record holds */
		struct ptc_trace_record tail = { .insns = (uint32_t)info.tail_insns };
		printf("# the %" PRIu64 " instructions after the last branch:\n", info.tail_insns);
		list_block(t, &dec, &fmt, next_start, &tail);
	}
	ptc_trace_close(t);
	return PTC_EXIT_OK;
readerr:
	ptc_cli_error("%s", ptc_trace_errmsg(t));
	ptc_trace_close(t);
	return PTC_EXIT_INPUT;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "insns", no_argument, NULL, 'i' },
		{ "start", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t start = 0, count = UINT64_MAX;
	int opt, insns = 0;
	const char *path;
	size_t len;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "is:n:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'i': insns = 1; break;
		case 's': start = strtoull(optarg, NULL, 0); break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'h': usage(stdout); return PTC_EXIT_OK;
		default: usage(stderr); return PTC_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return PTC_EXIT_USAGE;
	}
	path = argv[optind];
	len = strlen(path);
	if (len >= 14 && !strcmp(path + len - 14, ".xinsndata.bin"))
		return ptc_xtrace_dump(path, count, stdout) < 0 ? PTC_EXIT_INPUT : PTC_EXIT_OK;
	return dump_ptc(path, start, count, insns);
}
