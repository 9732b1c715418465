/* Test feeder: turn a ground-truth file (tests/ptgen/ground-truth.md) into the
 * branch-event stream a decoder would produce and hand it to ptconv's
 * writers.  Code bytes come from the files named in the M lines.
 * usage: truth2fmt -f FORMATS -o DIR [-b BBV] [-c CHUNK] [-s START_IP] [-z] [-x SNAPSHOT_INTERVAL] [-r REPEAT] [-q NS] X.truth
 * -r: feed the branches REPEAT times, -q: round times down to multiples of NS
 * (benchmarks: real timing packets come every few microseconds)
 * -s: the thread's first instruction (a decoder knows it from the trace), sent
 * as a PTC_GAP_START gap; -z: champsim as .gz. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "writers/writers.h"

struct map {
	uint64_t start, len, pgoff;
	uint8_t *bytes;
	size_t size;
};

static struct map maps[64];
static int nmaps;

static size_t code_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	int i;

	for (i = 0; i < nmaps; i++) {
		struct map *m = &maps[i];
		if (ip >= m->start && ip < m->start + m->len) {
			uint64_t off = m->pgoff + (ip - m->start);
			size_t k;
			if (off >= m->size)
				return 0;
			k = m->size - off < n ? m->size - off : n;
			if (ip + k > m->start + m->len)
				k = m->start + m->len - ip;
			memcpy(buf, m->bytes + off, k);
			return k;
		}
	}
	return 0;
}

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc(n ? n : 1);
	if (b && fread(b, 1, n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*size = n;
	return b;
}

#define BATCH 64

int main(int argc, char **argv)
{
	struct ptc_writer_config cfg = { 0 };
	struct ptc_code_reader code = { code_read, NULL };
	struct ptc_branch batch[BATCH];
	const char *formats = "ptconv";
	struct ptc_thread_info ti = { 0, 0, "", -1 };
	struct ptc_writer *w = NULL;
	struct ptc_sink s;
	char line[2048], comm[64] = "";
	size_t nb = 0;
	uint64_t pending_async = 0, start_ip = 0;
	int far_pending = 0, started = 0;
	int opt, err, begun = 0;
	unsigned long repeat = 1, round;
	uint64_t quantum = 1, tbase = 0, tlast = 0;
	FILE *f;

	while ((opt = getopt(argc, argv, "f:o:b:c:s:zx:r:q:l:")) != -1) {
		switch (opt) {
		case 's': start_ip = strtoull(optarg, NULL, 0); break;
		case 'z': cfg.champsim_gz = 1; break;
		case 'l': cfg.level = atoi(optarg); break;
		case 'q': quantum = strtoull(optarg, NULL, 0); break;
		case 'r': repeat = strtoul(optarg, NULL, 0); break;
		case 'x': cfg.xtrace_snapshot = strtoull(optarg, NULL, 0); break;
		case 'f': formats = optarg; break;
		case 'o': cfg.outdir = optarg; break;
		case 'b': cfg.bbv_interval = strtoull(optarg, NULL, 0); break;
		case 'c': cfg.chunk_records = strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (optind >= argc || !cfg.outdir)
		return 2;
	f = fopen(argv[optind], "r");
	if (!f) {
		perror(argv[optind]);
		return 1;
	}
	cfg.code = &code;
	if ((err = ptc_writer_new(&w, formats, &cfg)) < 0) {
		fprintf(stderr, "truth2fmt: %s\n", ptc_errstr(err));
		return 1;
	}
	s = ptc_writer_sink(w);
#define CALL(x) do { if ((err = (x)) < 0) goto fail; } while (0)
	for (round = 0; round < repeat; round++, rewind(f), tbase = tlast)
	while (fgets(line, sizeof(line), f)) {
		char ty = line[0];
		uint64_t t, ip, target, insns, start, len, pgoff;
		unsigned tid, pid, kind, taken, blen;
		char path[1024], dump[1024], bid[256];
		int n;

		if (ty == 'T' && !begun) {
			if (sscanf(line, "T %" SCNu64 " %u %u %63s", &t, &pid, &tid, comm) < 3)
				goto bad;
			ti.pid = pid;
			ti.tid = tid;
			ti.comm = comm;
			CALL(s.begin(s.ctx, &ti));
			begun = 1;
			if (start_ip) {
				/* Where a decoder starts: what PGE tells it. */
				struct ptc_gap g = { PTC_GAP_START, 0, 0, t, 0, start_ip, 0, 0, NULL };
				CALL(s.gap(s.ctx, &g));
				started = 1;
			}
		} else if (ty == 'R') {
			if (sscanf(line, "R %" SCNu64 " %u %" SCNx64, &t, &tid, &ip) != 3 || !begun)
				goto bad;
			if (!started) {
				/* The thread's first instruction: what PGE tells a decoder. */
				struct ptc_gap g = { PTC_GAP_START, 0, 0, t, 0, ip, 0, 0, NULL };
				CALL(s.gap(s.ctx, &g));
				started = 1;
			} else if (far_pending && nb && batch[nb - 1].ip + batch[nb - 1].length != ip) {
				/* User mode resumed elsewhere (a signal handler): a
				 * decoder reports where, as the far branch's target. */
				batch[nb - 1].target = ip;
			}
			far_pending = 0;
		} else if (ty == 'M' && !round) {
			n = sscanf(line, "M %" SCNu64 " %u %u %" SCNx64 " %" SCNx64 " %" SCNx64 " %*s %255s %1023s %1023s",
				   &t, &pid, &tid, &start, &len, &pgoff, bid, path, dump);
			if (n < 8 || nmaps == 64)
				goto bad;
			maps[nmaps].start = start;
			maps[nmaps].len = len;
			maps[nmaps].pgoff = pgoff;
			maps[nmaps].bytes = slurp(n == 9 ? dump : path, &maps[nmaps].size);
			if (!maps[nmaps].bytes) {
				fprintf(stderr, "truth2fmt: cannot read %s\n", n == 9 ? dump : path);
				return 1;
			}
			nmaps++;
		} else if (ty == 'B') {
			struct ptc_branch *b;
			if (nb == BATCH) {
				CALL(s.branches(s.ctx, batch, nb));
				nb = 0;
			}
			b = &batch[nb];
			if (sscanf(line, "B %" SCNu64 " %u %" SCNx64 " %" SCNx64 " %u %u %u %" SCNu64,
				   &t, &tid, &ip, &target, &kind, &taken, &blen, &insns) != 8 || !begun)
				goto bad;
			memset(b, 0, sizeof(*b));
			b->ip = ip;
			b->target = target;
			/* -q: time as coarse as timing packets make it. */
			b->time = (tbase + t) / quantum * quantum;
			tlast = tbase + t;
			b->insns = (uint32_t)(insns + pending_async);
			pending_async = 0;
			b->kind = (uint8_t)kind;
			b->taken = (uint8_t)taken;
			b->length = (uint8_t)blen;
			far_pending = kind == PTC_BR_FAR;
			nb++;
		} else if (ty == 'A') {
			/* An interrupt that resumes where it stopped is invisible in
			 * a branch trace: its instructions join the next block. */
			if (sscanf(line, "A %" SCNu64 " %u %" SCNx64 " %" SCNu64, &t, &tid, &ip, &insns) != 4)
				goto bad;
			pending_async += insns;
		} else if (ty == 'E') {
			break;
		}
		continue;
bad:
		fprintf(stderr, "truth2fmt: %s: bad line: %s", argv[optind], line);
		return 1;
	}
	if (nb)
		CALL(s.branches(s.ctx, batch, nb));
	CALL(s.end(s.ctx));
	fputs(ptc_writer_warnings(w), stderr);
	ptc_writer_free(w);
	return 0;
fail:
	fprintf(stderr, "truth2fmt: %s (%s)\n", ptc_writer_errmsg(w), ptc_errstr(err));
	ptc_writer_free(w);
	return 1;
}
