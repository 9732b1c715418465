/* Test feeder: turn a ground-truth file (tests/ptgen/ground-truth.md) into the
 * branch-event stream a decoder would produce and hand it to ptconv's
 * writers.  Code bytes come from the files named in the M lines.
 * usage: truth2fmt -f FORMATS -o DIR [-b BBV] [-c CHUNK] [-s START_IP] [-z] [-x SNAPSHOT_INTERVAL] [-r REPEAT] [-q NS] [-j THREADS] X.truth
 * -r: feed the branches REPEAT times, -q: round times down to multiples of NS
 * (benchmarks: real timing packets come every few microseconds); -j: compression
 * threads of champsim and cbp2025 (the bytes must not depend on it)
 * -s: the thread's first instruction (a decoder knows it from the trace), sent
 * as a PTC_GAP_START gap; -z: champsim as .gz.
 * -g AT:COUNT (repeatable): a loss in the first thread, as a decoder reports
 * an overflow: branches AT .. AT+COUNT-1 (0-based) are not passed on, and a
 * PTC_GAP_OVERFLOW gap resuming at the destination of the last of them
 * comes before the next branch (COUNT 0: a gap that loses nothing). */
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
#define MAX_THREADS 64

/* One traced thread: its own writers, as the convert command has. */
struct thread {
	unsigned tid;
	char comm[64];
	struct ptc_writer *w;
	struct ptc_sink s;
	struct ptc_branch batch[BATCH];
	size_t nb;
	uint64_t pending_async;
	uint64_t nbranch;		/* B lines seen, passed on or lost */
	uint64_t skip_to;		/* branches before this index are lost */
	uint64_t resume;		/* where the last branch went */
	int in_loss;
	int far_pending, started, ended;
};

static struct { uint64_t at, count; } losses[8];
static int nlosses;

static struct thread threads[MAX_THREADS];
static int nthreads;

static struct thread *thread_of(unsigned tid)
{
	int i;

	for (i = 0; i < nthreads; i++)
		if (threads[i].tid == tid)
			return &threads[i];
	return NULL;
}

static int flush(struct thread *th)
{
	int err = 0;

	if (th->nb)
		err = th->s.branches(th->s.ctx, th->batch, th->nb);
	th->nb = 0;
	return err;
}

/* The gap a decoder reports where it resumes after lost data (resume_ip
 * 0: it never did). */
static int loss_gap(struct thread *th, uint64_t t, uint64_t resume_ip)
{
	struct ptc_gap g = { .cause = PTC_GAP_OVERFLOW, .time = t, .resume_ip = resume_ip,
			     .resume_offset = resume_ip ? 0 : UINT64_MAX, .lost_branches = UINT64_MAX };
	int err;

	th->in_loss = 0;
	if ((err = flush(th)) < 0)
		return err;
	return th->s.gap(th->s.ctx, &g);
}

static int finish(struct thread *th)
{
	int err;

	if (th->ended)
		return 0;
	th->ended = 1;
	if (th->in_loss && (err = loss_gap(th, 0, 0)) < 0)
		return err;
	if ((err = flush(th)) < 0)
		return err;
	return th->s.end(th->s.ctx);
}

int main(int argc, char **argv)
{
	struct ptc_writer_config cfg = { 0 };
	struct ptc_code_reader code = { code_read, NULL };
	const char *formats = "ptconv";
	struct thread *th = NULL;
	char line[2048];
	uint64_t start_ip = 0;
	int opt, err, i;
	unsigned long repeat = 1, round;
	uint64_t quantum = 1, tbase = 0, tlast = 0;
	FILE *f;

	while ((opt = getopt(argc, argv, "f:o:b:c:s:zx:r:q:l:g:j:")) != -1) {
		switch (opt) {
		case 'g':
			if (nlosses == 8 || sscanf(optarg, "%" SCNu64 ":%" SCNu64, &losses[nlosses].at,
						   &losses[nlosses].count) != 2)
				return 2;
			nlosses++;
			break;
		case 's': start_ip = strtoull(optarg, NULL, 0); break;
		case 'z': cfg.champsim_gz = 1; break;
		case 'l': cfg.level = atoi(optarg); break;
		case 'j': cfg.threads = atoi(optarg); break;
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
#define CALL(x) do { if ((err = (x)) < 0) goto fail; } while (0)
	for (round = 0; round < repeat; round++, rewind(f), tbase = tlast)
	while (fgets(line, sizeof(line), f)) {
		char ty = line[0];
		uint64_t t, ip, target, insns, start, len, pgoff;
		unsigned tid, pid, kind, taken, blen;
		char path[1024], dump[1024], bid[256], comm[64] = "";
		int n;

		if (ty == 'T' && !round) {
			struct ptc_thread_info ti;
			if (sscanf(line, "T %" SCNu64 " %u %u %63s", &t, &pid, &tid, comm) < 3 ||
			    nthreads == MAX_THREADS || thread_of(tid))
				goto bad;
			th = &threads[nthreads++];
			th->tid = tid;
			snprintf(th->comm, sizeof(th->comm), "%s", comm);
			if ((err = ptc_writer_new(&th->w, formats, &cfg)) < 0) {
				fprintf(stderr, "truth2fmt: %s\n", ptc_errstr(err));
				return 1;
			}
			th->s = ptc_writer_sink(th->w);
			ti.pid = pid;
			ti.tid = tid;
			ti.comm = th->comm;
			ti.cpu = -1;
			CALL(th->s.begin(th->s.ctx, &ti));
			if (start_ip && nthreads == 1) {
				/* Where a decoder starts: what PGE tells it. */
				struct ptc_gap g = { PTC_GAP_START, 0, 0, t, 0, start_ip, 0, 0, NULL };
				CALL(th->s.gap(th->s.ctx, &g));
				th->started = 1;
			}
		} else if (ty == 'R') {
			if (sscanf(line, "R %" SCNu64 " %u %" SCNx64, &t, &tid, &ip) != 3 || !(th = thread_of(tid)))
				goto bad;
			if (!th->started) {
				/* The thread's first instruction: what PGE tells a decoder. */
				struct ptc_gap g = { PTC_GAP_START, 0, 0, t, 0, ip, 0, 0, NULL };
				CALL(flush(th));
				CALL(th->s.gap(th->s.ctx, &g));
				th->started = 1;
				th->resume = ip;
			} else if (th->far_pending && th->nb &&
				   th->batch[th->nb - 1].ip + th->batch[th->nb - 1].length != ip) {
				/* User mode resumed elsewhere (a signal handler): a
				 * decoder reports where, as the far branch's target. */
				th->batch[th->nb - 1].target = ip;
			}
			th->far_pending = 0;
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
			if (sscanf(line, "B %" SCNu64 " %u %" SCNx64 " %" SCNx64 " %u %u %u %" SCNu64,
				   &t, &tid, &ip, &target, &kind, &taken, &blen, &insns) != 8 ||
			    !(th = thread_of(tid)))
				goto bad;
			if (th == &threads[0] && nlosses) {
				uint64_t k = th->nbranch++, dest = ip + blen;
				int lost;
				for (i = 0; i < nlosses; i++) {
					if (losses[i].at != k)
						continue;
					if (th->in_loss && k >= th->skip_to)
						CALL(loss_gap(th, t, th->resume));	/* the previous loss ends */
					if (losses[i].at + losses[i].count > th->skip_to)
						th->skip_to = losses[i].at + losses[i].count;
					th->in_loss = 1;
				}
				lost = k < th->skip_to;
				if (!lost && th->in_loss)
					CALL(loss_gap(th, t, th->resume));
				/* the next block starts where this branch went */
				if (kind == PTC_BR_FAR ? target != 0 : taken)
					dest = target;
				th->resume = dest;
				if (lost) {
					th->pending_async = 0;
					th->far_pending = 0;
					continue;
				}
			}
			if (th->nb == BATCH)
				CALL(flush(th));
			b = &th->batch[th->nb];
			memset(b, 0, sizeof(*b));
			b->ip = ip;
			b->target = target;
			/* -q: time as coarse as timing packets make it. */
			b->time = (tbase + t) / quantum * quantum;
			tlast = tbase + t;
			b->insns = (uint32_t)(insns + th->pending_async);
			th->pending_async = 0;
			b->kind = (uint8_t)kind;
			b->taken = (uint8_t)taken;
			b->length = (uint8_t)blen;
			th->far_pending = kind == PTC_BR_FAR;
			th->nb++;
		} else if (ty == 'A') {
			/* An interrupt that resumes where it stopped is invisible in
			 * a branch trace: its instructions join the next block. */
			if (sscanf(line, "A %" SCNu64 " %u %" SCNx64 " %" SCNu64, &t, &tid, &ip, &insns) != 4 ||
			    !(th = thread_of(tid)))
				goto bad;
			th->pending_async += insns;
		} else if (ty == 'E' && round + 1 == repeat) {
			if (sscanf(line, "E %" SCNu64 " %u", &t, &tid) != 2 || !(th = thread_of(tid)))
				goto bad;
			CALL(finish(th));
		}
		continue;
bad:
		fprintf(stderr, "truth2fmt: %s: bad line: %s", argv[optind], line);
		return 1;
	}
	for (i = 0; i < nthreads; i++) {
		th = &threads[i];
		CALL(finish(th));
		fputs(ptc_writer_warnings(th->w), stderr);
		ptc_writer_free(th->w);
	}
	return 0;
fail:
	fprintf(stderr, "truth2fmt: %s (%s)\n", th && th->w ? ptc_writer_errmsg(th->w) : "", ptc_errstr(err));
	return 1;
}
