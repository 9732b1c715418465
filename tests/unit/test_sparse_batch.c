/* Sparse batches (common/trace_event.h): a path stands in a batch as its
 * first record, marked, and sinks make its other records when they need
 * them.  The oracle is the same stream given dense, record by record: the
 * path-aware .ptc writer and the writers that take every record must
 * write the same bytes either way, and the .ptc read back must be the
 * dense stream. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/trace_event.h"
#include "ptconv/trace.h"
#include "writers/insn.h"
#include "writers/writers.h"
#include "../lib/check.h"
#include "loop_code.h"

#define NTEMPLATES 7
#define NSTREAM 60000		/* batch entries */
#define BIAS2 0x7f0000000000ull	/* a second mapping of the same code */

struct template {
	struct ptc_path path;
	struct ptc_branch rec[PTC_PATH_RECORDS_MAX];
};

static struct template tpl[NTEMPLATES];

/* The stream: entries, dense records, and the marks of the sparse form. */
static struct ptc_branch sparse[NSTREAM], *dense;
/* The writers' chunks: small, so that they end inside paths and windows. */
static uint32_t chunk_records = 97;
static struct ptc_path_mark marks[NSTREAM];
static size_t nsparse, ndense, nmarks;

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* Path templates: chains of blocks at made-up addresses, starting with a
 * conditional branch as the walker's paths do, with calls, returns to
 * their fall-through, direct jumps and conditionals of both outcomes. */
static void make_templates(void)
{
	static const uint32_t sizes[NTEMPLATES] = { 1, 2, 4, 5, 9, 17, PTC_PATH_RECORDS_MAX };
	size_t t, k;

	for (t = 0; t < NTEMPLATES; t++) {
		struct ptc_path *p = &tpl[t].path;
		uint64_t ip = 0x400000 + 0x10000 * t;
		uint64_t call_ret = 0;

		memset(p, 0, sizeof(*p));
		p->id = t + 1;
		p->records = sizes[t];
		p->rec = tpl[t].rec;
		for (k = 0; k < sizes[t]; k++) {
			struct ptc_branch *r = &tpl[t].rec[k];
			int kind = k == 0 ? PTC_BR_COND : (int)rnd(4);

			r->ip = ip + 0x20 + rnd(8);
			r->insns = 1 + rnd(9);
			r->time = 0;
			r->flags = 0;
			r->length = 2;
			r->taken = 1;
			if (kind == 0 || kind == PTC_BR_COND) {
				r->kind = PTC_BR_COND;
				r->taken = (uint8_t)rnd(2);
				r->target = ip + 0x200;
			} else if (kind == 1 && !call_ret) {
				r->kind = PTC_BR_CALL;
				r->length = 5;
				r->target = ip + 0x800;
				call_ret = r->ip + 5;
			} else if (kind == 2 && call_ret) {
				r->kind = PTC_BR_RET;
				r->length = 1;
				r->target = call_ret;
				call_ret = 0;
			} else {
				r->kind = PTC_BR_JMP;
				r->target = ip + 0x400;
			}
			ip = r->taken ? r->target : r->ip + r->length;
			p->kinds += (uint64_t)1 << (9 * r->kind);
			p->not_taken += !r->taken;
			if (r->kind == PTC_BR_COND)
				p->taken |= (uint64_t)r->taken << p->bits++;
			if (k)
				p->insns += r->insns;
		}
	}
}

/* An encoder as a sink. */
static int enc_paths(void *e, const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm)
{
	return ptc_ahead_enc_paths(e, b, n, m, nm);
}

static int enc_branches(void *e, const struct ptc_branch *b, size_t n)
{
	return ptc_ahead_enc_paths(e, b, n, NULL, 0);
}

/* A mostly repeating walk through the templates (so that the writer's
 * notes on paths are used), at two biases, with single records between
 * them: some the same branches as the paths' returns going elsewhere
 * (which the notes must notice), some indirect jumps, some after a gap. */
static void make_stream(void)
{
	size_t cur = 0, k;
	uint64_t time = 1000;

	dense = calloc((size_t)NSTREAM * PTC_PATH_RECORDS_MAX, sizeof(*dense));
	while (nsparse < NSTREAM) {
		uint32_t what = rnd(100);
		struct ptc_branch *e = &sparse[nsparse];

		if (rnd(9) == 0)
			time += 1 + rnd(50);
		if (what < 70) {
			const struct template *t = &tpl[cur];
			uint64_t bias = rnd(5) ? 0 : BIAS2;

			*e = t->rec[0];
			e->ip += bias;
			e->target += bias;
			e->time = time;
			e->insns = 3 + rnd(2);
			marks[nmarks].at = (uint32_t)nsparse;
			marks[nmarks++].path = (struct ptc_path *)&t->path;
			ptc_path_records(&dense[ndense], &t->path, e);
			ndense += t->path.records;
			nsparse++;
			cur = rnd(10) ? (cur + 1) % NTEMPLATES : rnd(NTEMPLATES);
			continue;
		}
		if (what < 85) {
			/* a return of some template to another destination */
			const struct template *t = &tpl[rnd(NTEMPLATES)];

			*e = t->rec[rnd(t->path.records)];
			if (e->kind != PTC_BR_RET) {
				e->kind = PTC_BR_JMP_IND;
				e->length = 2;
			}
			e->taken = 1;
			e->target = 0x900000 + 0x40 * rnd(3);
		} else {
			e->ip = 0x900000 + 0x40 * rnd(3) + 0x10;
			e->kind = PTC_BR_JMP_IND;
			e->length = 3;
			e->taken = 1;
			e->target = tpl[rnd(NTEMPLATES)].rec[0].ip - 0x10;
			e->flags = rnd(20) ? 0 : PTC_BRF_AFTER_GAP;
		}
		e->time = time;
		e->insns = 1 + rnd(4);
		dense[ndense++] = *e;
		nsparse++;
	}
	for (k = 0; k < NTEMPLATES; k++)
		memset(tpl[k].path.scratch, 0, sizeof(tpl[k].path.scratch));
}

/* The dense pieces of the whole sparse stream are the dense stream. */
static void test_dense_pieces(void)
{
	struct ptc_branch out[PTC_PATH_RECORDS_MAX + 3];
	size_t i = 0, j = 0, at = 0, k, bad = 0;

	while ((k = ptc_batch_dense(sparse, nsparse, marks, nmarks, &i, &j, out, sizeof(out) / sizeof(out[0]))) >
	       0) {
		if (at + k > ndense || memcmp(out, &dense[at], k * sizeof(*out)))
			bad++;
		at += k;
	}
	CHECK(!bad && at == ndense && i == nsparse && j == nmarks, "dense pieces: %zu of %zu records, %zu bad",
	      at, ndense, bad);
	for (k = 0; k < nmarks; k++) {
		const struct ptc_path *p = marks[k].path;
		struct ptc_branch last = ptc_path_last(p, &sparse[marks[k].at]), all[PTC_PATH_RECORDS_MAX];

		ptc_path_records(all, p, &sparse[marks[k].at]);
		if (memcmp(&last, &all[p->records - 1], sizeof(last)))
			break;
	}
	CHECK(k == nmarks, "a path's last record (mark %zu)", k);
}

/* Write the stream into dir with formats fmts, in batches of 1 to 256
 * entries (the same cuts both ways: a path never straddles one), sparse
 * or dense. */
static int write_stream(const char *dir, const char *fmts, int as_sparse)
{
	struct ptc_code_reader code = { code_read, NULL };
	struct ptc_writer_config cfg = { 0 };
	struct ptc_thread_info th = { 7, 7, "t", -1 };
	struct ptc_gap start = { PTC_GAP_START, 0, 0, 1, 0, 0x400020, 0, 0, NULL };
	struct ptc_writer *w;
	struct ptc_sink s;
	size_t i = 0, j = 0, d = 0;
	uint64_t cuts = 12345;
	int err;

	cfg.outdir = dir;
	cfg.code = &code;
	cfg.chunk_records = chunk_records;
	if ((err = ptc_writer_new(&w, fmts, &cfg)) < 0)
		return err;
	s = ptc_writer_sink(w);
	if ((err = s.begin(s.ctx, &th)) < 0 || (err = s.gap(s.ctx, &start)) < 0)
		goto out;
	while (i < nsparse) {
		size_t n, j1, d1, k;

		cuts = cuts * 6364136223846793005ull + 1442695040888963407ull;
		n = 1 + (size_t)(cuts >> 33) % 256;
		if (n > nsparse - i)
			n = nsparse - i;
		for (j1 = j, d1 = d, k = i; k < i + n; k++) {
			if (j1 < nmarks && marks[j1].at == k)
				d1 += marks[j1++].path->records;
			else
				d1++;
		}
		if (as_sparse) {
			struct ptc_path_mark m[256];

			for (k = j; k < j1; k++) {
				m[k - j].at = marks[k].at - (uint32_t)i;
				m[k - j].path = marks[k].path;
			}
			err = j1 > j ? s.paths(s.ctx, sparse + i, n, m, j1 - j) : s.branches(s.ctx, sparse + i, n);
		} else {
			err = s.branches(s.ctx, dense + d, d1 - d);
		}
		if (err < 0)
			goto out;
		i += n;
		j = j1;
		d = d1;
	}
	err = s.end(s.ctx);
out:
	if (err < 0)
		fprintf(stderr, "writing: %s\n", ptc_writer_errmsg(w));
	ptc_writer_free(w);
	return err;
}

/* Entries [i, i + n) of the stream (its marks from *j on) to the sink,
 * sparse; *j moves past theirs. */
static int give_entries(struct ptc_sink *s, size_t i, size_t n, size_t *j)
{
	struct ptc_path_mark m[256];
	size_t k = 0;

	while (*j < nmarks && marks[*j].at < i + n) {
		m[k].at = marks[*j].at - (uint32_t)i;
		m[k++].path = marks[(*j)++].path;
	}
	return k ? s->paths(s->ctx, sparse + i, n, m, k) : s->branches(s->ctx, sparse + i, n);
}

/* Where the block after entry i - 1 starts (its last record's
 * destination); j: the first mark at or after i. */
static uint64_t dest_before(size_t i, size_t j)
{
	struct ptc_branch last = sparse[i - 1];

	if (j && marks[j - 1].at == i - 1)
		last = ptc_path_last(marks[j - 1].path, &sparse[i - 1]);
	return ptc_branch_dest(&last);
}

/* The stream to the .ptc writer alone in windows of 1 to 24 entries, as
 * -j does: a few entries given, the rest encoded ahead against a
 * snapshot of the writer's tables (of this window or up to three before:
 * older ones know less) and spliced, or given when the encoding failed
 * or would cross the chunk's end.  *spliced: how many windows were. */
static int write_ahead(const char *dir, size_t *spliced)
{
	struct ptc_code_reader code = { code_read, NULL };
	struct ptc_writer_config cfg = { 0 };
	struct ptc_thread_info th = { 7, 7, "t", -1 };
	struct ptc_gap start = { PTC_GAP_START, 0, 0, 1, 0, 0x400020, 0, 0, NULL };
	struct ptc_ahead_tables *snap[4] = { NULL, NULL, NULL, NULL };
	struct ptc_ahead_enc *e = NULL;
	struct ptc_ahead_out *o = NULL;
	struct ptc_writer *w;
	struct ptc_sink s;
	size_t i = 0, j = 0, k;
	int err;

	*spliced = 0;
	cfg.outdir = dir;
	cfg.code = &code;
	cfg.chunk_records = chunk_records;
	cfg.ahead_tables = 1;
	cfg.ahead_records_per_node = 1;	/* snapshots of young tables too */
	if ((err = ptc_writer_new(&w, "ptconv", &cfg)) < 0)
		return err;
	s = ptc_writer_sink(w);
	if ((err = ptc_ahead_enc_new(&e)) < 0 || (err = ptc_ahead_out_new(&o)) < 0 || (err = s.begin(s.ctx, &th)) < 0 ||
	    (err = s.gap(s.ctx, &start)) < 0)
		goto out;
	while (i < nsparse) {
		size_t n = 1 + rnd(24), given = 1 + rnd(3);
		struct ptc_ahead_tables *t;

		if (n > nsparse - i)
			n = nsparse - i;
		if (given > n)
			given = n;
		if ((err = give_entries(&s, i, given, &j)) < 0)
			goto out;
		i += given;
		n -= given;
		ptc_ahead_tables_put(snap[3]);
		memmove(snap + 1, snap, 3 * sizeof(*snap));
		snap[0] = ptc_writer_ahead_tables(w);
		t = snap[rnd(4)];
		if (!n)
			continue;
		if (t && ptc_ahead_enc_begin(e, t, dest_before(i, j), o) == 0) {
			/* in batches of 1 to 8 entries, as long as it takes them:
			 * the rest given after the splice */
			struct ptc_sink es = { NULL, enc_branches, NULL, NULL, e, enc_paths, NULL };
			size_t taken = 0, jj = j, jt = j;

			while (taken < n) {
				size_t b = 1 + rnd(8);

				if (b > n - taken)
					b = n - taken;
				if (give_entries(&es, i + taken, b, &jj) < 0)
					break;
				taken += b;
				jt = jj;
			}
			ptc_ahead_enc_end(e);
			if (ptc_ahead_out_records(o) && ptc_ahead_out_records(o) <= ptc_writer_ahead_room(w, o)) {
				if ((err = ptc_writer_splice(w, o)) < 0)
					goto out;
				(*spliced)++;
				i += taken;
				n -= taken;
				j = jt;
				if (!n)
					continue;
			}
		}
		if ((err = give_entries(&s, i, n, &j)) < 0)
			goto out;
		i += n;
	}
	err = s.end(s.ctx);
out:
	if (err < 0)
		fprintf(stderr, "writing ahead: %s\n", ptc_writer_errmsg(w));
	for (k = 0; k < 4; k++)
		ptc_ahead_tables_put(snap[k]);
	ptc_ahead_enc_free(e);
	ptc_ahead_out_free(o);
	ptc_writer_free(w);
	return err;
}

static int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int ca, cb, same = fa && fb;

	while (same && (ca = getc(fa)) == (cb = getc(fb)) && ca != EOF)
		;
	if (same)
		same = ca == cb;
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/* Every file of d1 is in d2 with the same bytes; removes both. */
static int same_dirs(const char *d1, const char *d2)
{
	DIR *dir = opendir(d1);
	struct dirent *e;
	char a[1200], b[1200];
	int files = 0, same = 1;

	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(a, sizeof(a), "%s/%s", d1, e->d_name);
		snprintf(b, sizeof(b), "%s/%s", d2, e->d_name);
		if (!same_file(a, b)) {
			fprintf(stderr, "%s and %s differ\n", a, b);
			same = 0;
		}
		files++;
		unlink(a);
		unlink(b);
	}
	if (dir)
		closedir(dir);
	rmdir(d1);
	rmdir(d2);
	return same && files > 0 ? files : -1;
}

/* The .ptc in dir read back: the dense stream. */
static void check_read_back(const char *dir)
{
	char path[1200];
	struct ptc_trace *t;
	struct ptc_trace_record r[512];
	size_t at = 0, bad = 0, gaps = 0;
	int err, k, n;

	snprintf(path, sizeof(path), "%s/trace.7.ptc", dir);
	t = ptc_trace_open(path, &err);
	CHECK(t != NULL, "open %s: %d", path, err);
	if (!t)
		return;
	while ((n = ptc_trace_read(t, r, 512)) > 0)
		for (k = 0; k < n; k++) {
			const struct ptc_branch *e = &dense[at];

			if (r[k].kind == PTC_TRACE_GAP) {
				gaps++;	/* the stream's start */
				continue;
			}
			if (at >= ndense || r[k].ip != e->ip || r[k].target != e->target || r[k].time != e->time ||
			    r[k].insns != e->insns || r[k].kind != e->kind || r[k].taken != e->taken ||
			    r[k].length != e->length || r[k].flags != e->flags)
				bad++;
			at++;
		}
	CHECK(n == 0 && at == ndense && !bad && gaps == 1, "read back: %zu of %zu records, %zu differ, %zu gaps",
	      at, ndense, bad, gaps);
	ptc_trace_close(t);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char d1[512], d2[512];
	int err1, err2, files;

	make_templates();
	make_stream();
	CHECK(ndense > 3 * nsparse, "the stream has %zu records in %zu entries", ndense, nsparse);
	test_dense_pieces();

	snprintf(d1, sizeof(d1), "%s/ptc-sparse-XXXXXX", tmp);
	snprintf(d2, sizeof(d2), "%s/ptc-dense-XXXXXX", tmp);
	if (!mkdtemp(d1) || !mkdtemp(d2))
		SKIP("no temporary directory");
	/* the .ptc writer takes paths; bt9 and bbv take every record */
	err1 = write_stream(d1, "ptconv,bt9", 1);
	err2 = write_stream(d2, "ptconv,bt9", 0);
	CHECK(err1 == 0 && err2 == 0, "written: %d %d", err1, err2);
	check_read_back(d2);
	files = same_dirs(d1, d2);
	CHECK(files >= 2, "sparse and dense give the same bytes (%d files)", files);

	/* encoded ahead and spliced, against given: the same bytes */
	for (chunk_records = 97; chunk_records < 10000; chunk_records *= 40) {
		size_t spliced = 0;

		snprintf(d1, sizeof(d1), "%s/ptc-ahead-XXXXXX", tmp);
		snprintf(d2, sizeof(d2), "%s/ptc-given-XXXXXX", tmp);
		if (!mkdtemp(d1) || !mkdtemp(d2))
			SKIP("no temporary directory");
		err1 = write_ahead(d1, &spliced);
		err2 = write_stream(d2, "ptconv", 1);
		CHECK(err1 == 0 && err2 == 0, "written: %d %d", err1, err2);
		/* (windows of about 13 entries: some 4600) */
		CHECK(spliced > (chunk_records < 1000 ? 300u : 1000u), "%zu windows spliced (chunks of %u records)",
		      spliced, chunk_records);
		files = same_dirs(d1, d2);
		CHECK(files == 1, "encoded ahead and given give the same bytes (chunks of %u records, %d files)",
		      chunk_records, files);
	}
	free(dense);
	return check_result();
}
