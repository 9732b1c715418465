/* -f text writer (see text.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "writers/text.h"
#include "writers/writers.h"

struct text_writer {
	struct ptc_sink sink;
	FILE *f;
	char *path;
	uint32_t tid;
	char err[512];		/* the first failure: sink.errmsg */
	char buf[1 << 16];
};

/* Note the first failure, with errno's reason. */
static int tw_fail(struct text_writer *w, const char *what)
{
	if (!w->err[0])
		snprintf(w->err, sizeof(w->err), "%s: %s: %s", w->path, what, strerror(errno));
	return -ptc_err_io;
}

static const char *tw_errmsg(void *ctx)
{
	return ((struct text_writer *)ctx)->err;
}

static int tw_begin(void *ctx, const struct ptc_thread_info *t)
{
	struct text_writer *w = ctx;

	w->tid = t->tid;
	fprintf(w->f, "# ptconv text 1 pid %u tid %u comm %s\n", t->pid, t->tid,
		t->comm ? t->comm : "-");
	return ferror(w->f) ? tw_fail(w, "write") : 0;
}

/* Hex without printf: this is the hot path of -f text. */
static char *put_hex(char *p, uint64_t v)
{
	char tmp[16];
	int n = 0;

	*p++ = '0';
	*p++ = 'x';
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_dec(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static int tw_branches(void *ctx, const struct ptc_branch *b, size_t n)
{
	struct text_writer *w = ctx;
	char line[128], *p;
	size_t i;

	for (i = 0; i < n; i++) {
		const char *k = ptc_branch_kind_name(b[i].kind);
		p = put_dec(line, w->tid);
		*p++ = ' ';
		p = put_hex(p, b[i].ip);
		*p++ = ' ';
		p = put_hex(p, b[i].target);
		*p++ = ' ';
		memcpy(p, k, strlen(k));
		p += strlen(k);
		*p++ = ' ';
		*p++ = b[i].taken ? '1' : '0';
		*p++ = ' ';
		p = put_dec(p, b[i].insns);
		if (b[i].flags & PTC_BRF_AFTER_GAP) {
			memcpy(p, " after-gap", 10);
			p += 10;
		}
		*p++ = '\n';
		if (fwrite(line, 1, (size_t)(p - line), w->f) != (size_t)(p - line))
			return tw_fail(w, "write");
	}
	return 0;
}

static int tw_gap(void *ctx, const struct ptc_gap *g)
{
	struct text_writer *w = ctx;

	/* Where the stream starts is not a loss: the text format lists
	 * losses only (see ptconv-convert(1)). */
	if (g->cause == PTC_GAP_START)
		return 0;
	fprintf(w->f, "%u gap %s aux=0x%" PRIx64, w->tid,
		ptc_gap_cause_name(g->cause), g->aux_offset);
	if (g->resume_offset == UINT64_MAX)
		fprintf(w->f, " resume=-");
	else
		fprintf(w->f, " resume=0x%" PRIx64, g->resume_offset);
	fprintf(w->f, " lost-bytes=%" PRIu64, g->lost_bytes);
	if (g->lost_branches == UINT64_MAX)
		fprintf(w->f, " lost-branches=?");
	else
		fprintf(w->f, " lost-branches=%" PRIu64, g->lost_branches);
	fprintf(w->f, " ip=0x%" PRIx64 " resume-ip=0x%" PRIx64 " : %s\n", g->ip, g->resume_ip,
		g->detail ? g->detail : "");
	return ferror(w->f) ? tw_fail(w, "write") : 0;
}

static int tw_end(void *ctx)
{
	struct text_writer *w = ctx;
	int err = 0;

	if (!w->f)
		return 0;
	if (ferror(w->f))
		err = tw_fail(w, "write");
	if (fclose(w->f) != 0)
		err = tw_fail(w, "close");
	w->f = NULL;
	if (!err && ptc_out_commit(w->path) < 0)
		err = tw_fail(w, "cannot give the complete file its name");
	return err;
}

int ptc_text_sink_new(struct ptc_sink **out, const char *path)
{
	struct text_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ptc_err_nomem;
	{
		char tmp[4096];
		w->f = ptc_out_tmpname(tmp, sizeof(tmp), path) < 0 ? NULL : fopen(tmp, "w");
	}
	if (!w->f) {
		free(w);
		return -ptc_err_io;
	}
	setvbuf(w->f, w->buf, _IOFBF, sizeof(w->buf));
	w->path = strdup(path);
	w->sink.begin = tw_begin;
	w->sink.branches = tw_branches;
	w->sink.gap = tw_gap;
	w->sink.end = tw_end;
	w->sink.errmsg = tw_errmsg;
	w->sink.ctx = w;
	*out = &w->sink;
	return 0;
}

void ptc_text_sink_free(struct ptc_sink *s)
{
	struct text_writer *w;

	if (!s)
		return;
	w = s->ctx;
	if (w->f)
		fclose(w->f);
	free(w->path);
	free(w);
}
