/* The writer pool (ptc_writer_pool): writers suspended when more than
 * max_open are open write the same contents as writers that never were.
 *
 * Three threads' writers (champsim, cbp2025 and bt9 with a loss in between,
 * xtrace, bbv) get one interleaved sequence of events twice: without a
 * pool and with a pool of one open writer, so that every switch suspends
 * the previous writer, once even before its first byte (its file must
 * then be byte for byte the unsuspended one).  Every file must decompress
 * (zlib, liblzma: independent of ptconv's writers) to the same bytes.  A
 * champsim file stays one xz stream (ChampSim's reader reads one), of
 * more blocks than without the pool (liblzma's reading of its index); a
 * bt9 file stays three gzip members; a cbp2025 file gets a member per
 * suspension.
 *
 * ptconv's own format (.ptc) is suspended by ending its chunk: two
 * threads' .ptc writers take turns under a pool of one, one of them
 * suspended before its first byte and right after a loss gap; read back
 * with libptconv-trace, each file must give exactly the branch and gap
 * events the test fed in, in as many chunks as the turns ended.
 *
 * A suspended .ptc, champsim or bt9 writer whose file is removed must
 * fail naming it at its next event. */
#include <dirent.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/error.h"
#include "ptconv/trace.h"
#include "writers/writers.h"
#include "writers/fmt.h"
#include "../lib/check.h"
#include "loop_code.h"

/* The whole file, or NULL. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (p = malloc((size_t)n + 1)) && fread(p, 1, (size_t)n, f) == (size_t)n)
		*len = (size_t)n;
	fclose(f);
	return p;
}

/* Decompress every concatenated gzip member / xz stream of path (plain
 * files as they are) into a malloc'd buffer; NULL when invalid. */
static uint8_t *unpack(const char *path, size_t *out_len, int *streams)
{
	size_t len, cap = 1 << 20, n = 0;
	uint8_t *in = slurp(path, &len), *out = malloc(cap);
	int gz = strstr(path, ".gz") != NULL, xz = strstr(path, ".xz") != NULL;

	*streams = 0;
	if (!in || !out) {
		free(in);
		free(out);
		return NULL;
	}
	if (!gz && !xz) {
		free(out);
		*out_len = len;
		*streams = 1;
		return in;
	}
	if (gz) {
		size_t pos = 0;
		while (pos < len) {
			z_stream s;
			int r;
			memset(&s, 0, sizeof(s));
			if (inflateInit2(&s, 31) != Z_OK)
				goto bad;
			s.next_in = in + pos;
			s.avail_in = (uInt)(len - pos);
			do {
				if (n == cap && !(out = realloc(out, cap *= 2)))
					goto bad;
				s.next_out = out + n;
				s.avail_out = (uInt)(cap - n);
				r = inflate(&s, Z_NO_FLUSH);
				n = cap - s.avail_out;
			} while (r == Z_OK);
			pos = len - s.avail_in;
			inflateEnd(&s);
			if (r != Z_STREAM_END)
				goto bad;
			++*streams;
		}
	} else {
		lzma_stream s = LZMA_STREAM_INIT;
		lzma_ret r;
		if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED | LZMA_TELL_ANY_CHECK) != LZMA_OK)
			goto bad;
		s.next_in = in;
		s.avail_in = len;
		do {
			if (n == cap && !(out = realloc(out, cap *= 2)))
				break;
			s.next_out = out + n;
			s.avail_out = cap - n;
			r = lzma_code(&s, s.avail_in ? LZMA_RUN : LZMA_FINISH);
			n = cap - s.avail_out;
			if (r == LZMA_GET_CHECK) {
				++*streams;	/* one per stream header */
				r = LZMA_OK;
			}
		} while (r == LZMA_OK && out);
		lzma_end(&s);
		if (r != LZMA_STREAM_END || !out)
			goto bad;
	}
	free(in);
	*out_len = n;
	return out;
bad:
	free(in);
	free(out);
	return NULL;
}

/* The blocks of the xz file at path, as its stream's index lists them
 * (liblzma), or -1. */
static long xz_blocks(const char *path)
{
	size_t len, pos = 0;
	uint8_t *in = slurp(path, &len);
	lzma_stream_flags fl;
	lzma_index *idx = NULL;
	uint64_t lim = UINT64_MAX;
	long n = -1;

	if (in && len >= 2 * LZMA_STREAM_HEADER_SIZE &&
	    lzma_stream_footer_decode(&fl, in + len - LZMA_STREAM_HEADER_SIZE) == LZMA_OK &&
	    fl.backward_size <= len - 2 * LZMA_STREAM_HEADER_SIZE &&
	    lzma_index_buffer_decode(&idx, &lim, NULL, in + len - LZMA_STREAM_HEADER_SIZE - fl.backward_size,
				     &pos, fl.backward_size) == LZMA_OK) {
		n = (long)lzma_index_block_count(idx);
		lzma_index_end(idx, NULL);
	}
	free(in);
	return n;
}

/* Run the event sequence into dir, with pool or without (NULL). */
static void run(const char *dir, struct ptc_writer_pool *pool)
{
	struct ptc_code_reader code = { code_read, NULL };
	struct ptc_writer_config cfg = { 0 };
	struct ptc_thread_info ti[3] = { { 10, 11, "a", -1 }, { 10, 12, "b", -1 }, { 10, 13, "c", -1 } };
	struct ptc_gap start = { PTC_GAP_START, 0, 0, 1, 0, 0x1000, 0, 0, NULL };
	struct ptc_gap loss = { PTC_GAP_OVERFLOW, 0, 0, 50, 0x1006, 0x1000, 7, 0, NULL };
	struct ptc_branch b[4];
	struct ptc_writer *w[3];
	struct ptc_sink s[3];
	int i, k, r;

	cfg.outdir = dir;
	cfg.code = &code;
	cfg.bbv_interval = 5;
	cfg.threads = 2;
	cfg.pool = pool;
	for (i = 0; i < 4; i++) {
		b[i] = (struct ptc_branch){ 0x1006, 0x1000, (uint64_t)(5 + i), 3, PTC_BR_COND, 1, 2, 0 };
	}
	for (i = 0; i < 3; i++) {
		CHECK(ptc_writer_new(&w[i], "champsim,cbp2025,xtrace,bt9", &cfg) == 0, "new %d", i);
		s[i] = ptc_writer_sink(w[i]);
	}
	/* c begins first and never writes: suspended before its first byte */
	CHECK(s[2].begin(s[2].ctx, &ti[2]) == 0, "begin c: %s", ptc_writer_errmsg(w[2]));
	for (i = 0; i < 2; i++) {
		CHECK(s[i].begin(s[i].ctx, &ti[i]) == 0, "begin: %s", ptc_writer_errmsg(w[i]));
		CHECK(s[i].gap(s[i].ctx, &start) == 0, "start: %s", ptc_writer_errmsg(w[i]));
	}
	/* a and b take turns; a loses data once (a new part file) */
	for (k = 0; k < 6; k++) {
		for (i = 0; i < 2; i++) {
			r = s[i].branches(s[i].ctx, b, 4);
			CHECK(r == 0, "branches %d/%d: %s", k, i, ptc_writer_errmsg(w[i]));
		}
		if (k == 2)
			CHECK(s[0].gap(s[0].ctx, &loss) == 0, "loss: %s", ptc_writer_errmsg(w[0]));
	}
	for (i = 0; i < 3; i++) {
		CHECK(s[i].end(s[i].ctx) == 0, "end %d: %s", i, ptc_writer_errmsg(w[i]));
		CHECK(!strcmp(ptc_writer_warnings(w[i]), ""), "warnings: %s", ptc_writer_warnings(w[i]));
		ptc_writer_free(w[i]);
	}
}

/* ---- .ptc ---- */

/* What a thread was fed: the oracle its file is read back against. */
struct fed {
	struct ptc_trace_record rec[64];
	int n;
	int chunks, pending;	/* chunks its turns ended, records since */
};

static void feed_branches(struct ptc_sink *s, struct ptc_writer *w, struct fed *f, int n, int after_gap)
{
	struct ptc_branch b[16];
	int i;

	for (i = 0; i < n; i++) {
		int k = f->n + i;
		/* taken loops, and an indirect jump to 0x1000 or 0x1003 */
		b[i] = (struct ptc_branch){ 0x1006, k % 3 == 2 && k % 2 ? 0x1003 : 0x1000,
					    1000 + (uint64_t)(k / 2) * 7, (uint32_t)(2 + k % 2),
					    k % 3 == 2 ? PTC_BR_JMP_IND : PTC_BR_COND, 1, 2,
					    i == 0 && after_gap ? PTC_BRF_AFTER_GAP : 0 };
		f->rec[k] = (struct ptc_trace_record){ b[i].ip, b[i].target, b[i].time, b[i].insns,
						       b[i].kind, b[i].taken, b[i].length, b[i].flags };
	}
	CHECK(s->branches(s->ctx, b, (size_t)n) == 0, "ptc branches: %s", ptc_writer_errmsg(w));
	f->n += n;
	f->pending += n;
}

static void feed_gap(struct ptc_sink *s, struct ptc_writer *w, struct fed *f, uint8_t cause, uint64_t time)
{
	struct ptc_gap g = { cause, 0, 0, time, cause == PTC_GAP_START ? 0 : 0x1006, 0x1000, 3, 0, NULL };

	CHECK(s->gap(s->ctx, &g) == 0, "ptc gap: %s", ptc_writer_errmsg(w));
	f->rec[f->n++] = (struct ptc_trace_record){ g.ip, g.resume_ip, g.time, 0, PTC_TRACE_GAP, cause, 0, 0 };
	f->pending++;
}

/* Thread t's turn: with a pool of one, the other thread's writer is
 * suspended, which ends its chunk if it has records since its last. */
static void turn(struct fed *f, int t, int pooled)
{
	if (pooled && f[!t].pending) {
		f[!t].chunks++;
		f[!t].pending = 0;
	}
}

/* Read path back and compare it with what f fed. */
static void check_ptc(const char *path, struct fed *f, int want_chunks)
{
	struct ptc_trace_record got[80];
	struct ptc_trace_info info;
	struct ptc_trace *t;
	int err, n, i, gaps = 0;

	t = ptc_trace_open(path, &err);
	CHECK(t != NULL, "%s: open: %s", path, ptc_trace_errstr(err));
	if (!t)
		return;
	CHECK(ptc_trace_info(t, &info) == 0, "%s: info", path);
	n = ptc_trace_read(t, got, 80);
	CHECK(n == f->n, "%s: %d records, fed %d: %s", path, n, f->n, n < 0 ? ptc_trace_errmsg(t) : "");
	CHECK(info.records == (uint64_t)f->n, "%s: header says %llu records", path,
	      (unsigned long long)info.records);
	CHECK(info.chunks == (uint64_t)want_chunks, "%s: %llu chunks, want %d", path,
	      (unsigned long long)info.chunks, want_chunks);
	for (i = 0; i < n && i < f->n; i++) {
		const struct ptc_trace_record *a = &got[i], *b = &f->rec[i];
		if (b->kind == PTC_TRACE_GAP) {
			/* a gap record's insns is its number */
			CHECK(a->kind == PTC_TRACE_GAP && a->ip == b->ip && a->target == b->target &&
			      a->time == b->time && a->taken == b->taken && a->insns == (uint32_t)gaps,
			      "%s: record %d: not the gap fed", path, i);
			gaps++;
			continue;
		}
		CHECK(a->ip == b->ip && a->target == b->target && a->time == b->time &&
		      a->insns == b->insns && a->kind == b->kind && a->taken == b->taken &&
		      a->length == b->length && a->flags == b->flags,
		      "%s: record %d: ip %llx target %llx time %llu insns %u kind %u flags %u, fed %llx %llx %llu %u %u %u",
		      path, i, (unsigned long long)a->ip, (unsigned long long)a->target,
		      (unsigned long long)a->time, a->insns, a->kind, a->flags, (unsigned long long)b->ip,
		      (unsigned long long)b->target, (unsigned long long)b->time, b->insns, b->kind, b->flags);
	}
	ptc_trace_close(t);
}

/* Threads x (0) and y (1) take turns; with pool, one writer is open at
 * a time.  x is suspended before its first byte (y begins), and right
 * after a loss gap (y's next records). */
static void run_ptc(const char *dir, struct ptc_writer_pool *pool)
{
	struct ptc_code_reader code = { code_read, NULL };
	struct ptc_writer_config cfg = { 0 };
	struct ptc_thread_info ti[2] = { { 20, 21, "x", -1 }, { 20, 22, "y", -1 } };
	struct ptc_writer *w[2];
	struct ptc_sink s[2];
	struct fed f[2];
	char path[1200];
	int i, k, pooled = pool != NULL;

	memset(f, 0, sizeof(f));
	cfg.outdir = dir;
	cfg.code = &code;
	cfg.pool = pool;
	for (i = 0; i < 2; i++) {
		CHECK(ptc_writer_new(&w[i], "ptconv", &cfg) == 0, "new ptc %d", i);
		s[i] = ptc_writer_sink(w[i]);
	}
	CHECK(s[0].begin(s[0].ctx, &ti[0]) == 0, "begin x: %s", ptc_writer_errmsg(w[0]));
	turn(f, 1, pooled);
	CHECK(s[1].begin(s[1].ctx, &ti[1]) == 0, "begin y: %s", ptc_writer_errmsg(w[1]));
	/* x was suspended with no record: its file, closed, is the 64-byte
	 * header alone (open, the header would still be in its buffer) */
	if (pooled) {
		size_t len;
		uint8_t *p;
		/* (under its temporary name until complete) */
		snprintf(path, sizeof(path), "%s/.trace.%u.ptc.ptconv-part", dir, ti[0].tid);
		p = slurp(path, &len);
		CHECK(p && len == 64 && !memcmp(p, "PTCTRACE", 8), "%s: %zu bytes while suspended", path, len);
		free(p);
	}
	turn(f, 0, pooled);
	feed_gap(&s[0], w[0], &f[0], PTC_GAP_START, 900);
	feed_branches(&s[0], w[0], &f[0], 5, 0);
	turn(f, 1, pooled);
	feed_gap(&s[1], w[1], &f[1], PTC_GAP_START, 950);
	feed_branches(&s[1], w[1], &f[1], 3, 0);
	turn(f, 0, pooled);
	feed_branches(&s[0], w[0], &f[0], 2, 0);
	feed_gap(&s[0], w[0], &f[0], PTC_GAP_OVERFLOW, 2000);
	/* x suspended right after the gap */
	turn(f, 1, pooled);
	feed_branches(&s[1], w[1], &f[1], 4, 0);
	turn(f, 0, pooled);
	feed_branches(&s[0], w[0], &f[0], 5, 1);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < 2; i++) {
			turn(f, i, pooled);
			feed_branches(&s[i], w[i], &f[i], 6 + k, 0);
		}
	}
	/* y's last records and a gap at its very end, x ends suspended */
	feed_gap(&s[1], w[1], &f[1], PTC_GAP_AUX_LOST, 9000);
	for (i = 0; i < 2; i++) {
		CHECK(s[i].end(s[i].ctx) == 0, "end ptc %d: %s", i, ptc_writer_errmsg(w[i]));
		CHECK(!strcmp(ptc_writer_warnings(w[i]), ""), "warnings: %s", ptc_writer_warnings(w[i]));
		ptc_writer_free(w[i]);
		if (f[i].pending)
			f[i].chunks++;
		snprintf(path, sizeof(path), "%s/trace.%u.ptc", dir, ti[i].tid);
		check_ptc(path, &f[i], f[i].chunks);
		CHECK(!pooled || f[i].chunks >= 5, "thread %d: only %d chunks", i, f[i].chunks);
		unlink(path);
	}
}

/* A suspended writer of format whose file (trace.31.gone, written as
 * .trace.31.gone.ptconv-part until complete) is gone by its next event:
 * the event fails, naming the file and why, rather than starting a new
 * file with only the rest.  Its outputs are trace.*.out. */
static void run_reopen_fails(const char *dir, const char *format, const char *gone, const char *out)
{
	struct ptc_code_reader code = { code_read, NULL };
	struct ptc_writer_config cfg = { 0 };
	struct ptc_thread_info ti[2] = { { 30, 31, "x", -1 }, { 30, 32, "y", -1 } };
	struct ptc_branch b = { 0x1006, 0x1000, 5, 3, PTC_BR_COND, 1, 2, 0 };
	struct ptc_writer_pool *pool;
	struct ptc_writer *w[2];
	struct ptc_sink s[2];
	char path[1200];
	int i;

	CHECK(ptc_writer_pool_new(&pool, 1, 1) == 0, "pool");
	cfg.outdir = dir;
	cfg.code = &code;
	cfg.pool = pool;
	for (i = 0; i < 2; i++) {
		CHECK(ptc_writer_new(&w[i], format, &cfg) == 0, "new %s %d", format, i);
		s[i] = ptc_writer_sink(w[i]);
		CHECK(s[i].begin(s[i].ctx, &ti[i]) == 0, "begin: %s", ptc_writer_errmsg(w[i]));
	}
	/* x is suspended (y began): its file goes */
	snprintf(path, sizeof(path), "%s/.trace.31.%s.ptconv-part", dir, gone);
	CHECK(unlink(path) == 0, "%s: unlink %s", format, path);
	CHECK(s[0].branches(s[0].ctx, &b, 1) < 0, "%s: branches into a file that is gone succeeded", format);
	CHECK(strstr(ptc_writer_errmsg(w[0]), path) && strstr(ptc_writer_errmsg(w[0]), "No such file"),
	      "%s: message: %s", format, ptc_writer_errmsg(w[0]));
	for (i = 0; i < 2; i++) {
		s[i].end(s[i].ctx);
		ptc_writer_free(w[i]);
	}
	ptc_writer_pool_free(pool);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/trace.%d.%s", dir, 31 + i, out);
		unlink(path);
	}
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted file names of dir (at most max). */
static size_t names(const char *dir, char **out, size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	while (d && (e = readdir(d)) && n < max)
		if (e->d_name[0] != '.')
			out[n++] = strdup(e->d_name);
	if (d)
		closedir(d);
	qsort(out, n, sizeof(*out), cmp_name);
	return n;
}

int main(void)
{
	char d1[512], d2[512], p1[1200], p2[1200], *n1[64], *n2[64];
	struct ptc_writer_pool *pool;
	size_t i, c1, c2, suspended_streams = 0;
	int threads_a, threads_b;

	snprintf(d1, sizeof(d1), "%s/ptc-pool-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	snprintf(d2, sizeof(d2), "%s", d1);
	if (!mkdtemp(d1) || !mkdtemp(d2))
		SKIP("no temporary directory");

	run(d1, NULL);
	CHECK(ptc_writer_pool_new(&pool, 1, 2) == 0, "pool");
	/* the compression threads are shared: 2 for the first file, then 1 */
	threads_a = ptc_writer_pool_get_threads(pool, 2);
	threads_b = ptc_writer_pool_get_threads(pool, 2);
	CHECK(threads_a == 2 && threads_b == 1, "threads given: %d, %d", threads_a, threads_b);
	ptc_writer_pool_put_threads(pool, threads_a);
	ptc_writer_pool_put_threads(pool, threads_b);
	run(d2, pool);
	CHECK(ptc_writer_pool_suspensions(pool) >= 10, "suspensions: %llu",
	      (unsigned long long)ptc_writer_pool_suspensions(pool));
	ptc_writer_pool_free(pool);

	/* .ptc: without a pool (one chunk each), then with a pool of one */
	run_ptc(d1, NULL);
	CHECK(ptc_writer_pool_new(&pool, 1, 2) == 0, "pool");
	run_ptc(d2, pool);
	CHECK(ptc_writer_pool_suspensions(pool) >= 10, "ptc suspensions: %llu",
	      (unsigned long long)ptc_writer_pool_suspensions(pool));
	ptc_writer_pool_free(pool);
	run_reopen_fails(d1, "ptconv", "ptc", "ptc");
	run_reopen_fails(d1, "champsim", "champsim.xz", "champsim.xz");
	run_reopen_fails(d1, "bt9", "bt9.gz.seq", "bt9.gz");

	c1 = names(d1, n1, 64);
	c2 = names(d2, n2, 64);
	CHECK(c1 == c2 && c1 == 3 * 6 + 3, "files: %zu and %zu", c1, c2);
	for (i = 0; i < c1 && i < c2; i++) {
		uint8_t *a, *b;
		size_t la, lb;
		int sa, sb;

		CHECK(!strcmp(n1[i], n2[i]), "names %s, %s", n1[i], n2[i]);
		snprintf(p1, sizeof(p1), "%s/%s", d1, n1[i]);
		snprintf(p2, sizeof(p2), "%s/%s", d2, n2[i]);
		a = unpack(p1, &la, &sa);
		b = unpack(p2, &lb, &sb);
		CHECK(a && b, "%s: valid", n1[i]);
		if (a && b) {
			CHECK(la == lb && !memcmp(a, b, la), "%s: same contents (%zu, %zu bytes)", n1[i], la, lb);
			/* a bt9 file: its header, its edge sequence and its
			 * end, each a gzip member */
			CHECK(sa == (strstr(n1[i], ".bt9.") ? 3 : 1), "%s: %d streams without a pool", n1[i], sa);
			if (strstr(n1[i], ".champsim.")) {
				long ba = xz_blocks(p1), bb = xz_blocks(p2);
				CHECK(sb == 1, "%s: %d xz streams with a pool", n1[i], sb);
				/* (thread c's: suspended before its first byte) */
				CHECK(strstr(n1[i], ".13.") ? ba == bb : ba == 1 && bb > 1,
				      "%s: %ld xz blocks, %ld with a pool", n1[i], ba, bb);
			} else if (strstr(n1[i], ".bt9.")) {
				CHECK(sb == 3, "%s: %d gzip members with a pool", n1[i], sb);
			} else if (sb > 1) {
				suspended_streams += (size_t)sb;
			}
			/* thread c's files were suspended before their first
			 * byte: the very same bytes */
			if (strstr(n1[i], ".13.")) {
				uint8_t *x = slurp(p1, &la), *y = slurp(p2, &lb);
				CHECK(x && y && la == lb && !memcmp(x, y, la), "%s: same bytes", n1[i]);
				free(x);
				free(y);
			}
		}
		free(a);
		free(b);
		unlink(p1);
		unlink(p2);
	}
	CHECK(suspended_streams >= 8, "streams after suspensions: %zu", suspended_streams);
	for (i = 0; i < c1; i++)
		free(n1[i]);
	for (i = 0; i < c2; i++)
		free(n2[i]);
	rmdir(d1);
	rmdir(d2);
	return check_result();
}
