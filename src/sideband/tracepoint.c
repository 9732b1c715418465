/* perf's tracing-data container and sched:sched_switch samples (see
 * tracepoint.h).  The container is walked with a bounded cursor: every
 * size is checked against the bytes left before it is used, so a hostile
 * size claims nothing from memory. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "common/bytes.h"
#include "common/error.h"
#include "sideband/tracepoint.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PTC_HAS_ASAN 1
#endif
#endif
#ifndef PTC_HAS_ASAN
#define PTC_HAS_ASAN 0
#endif

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

#define MAX_SYSTEMS	65536
#define MAX_FORMATS	(1u << 20)

struct cur {
	const uint8_t *p;
	size_t n, at;
	int big;
	const char *name;
	char *err;
	size_t errlen;
	uint64_t base;
};

static int fail(struct cur *c, int code, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct cur *c, int code, size_t at, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (c->err && c->errlen) {
		k = snprintf(c->err, c->errlen, "%s: offset 0x%llx: tracing data: ", c->name,
			     (unsigned long long)(c->base + at));
		if (k >= 0 && (size_t)k < c->errlen) {
			va_start(ap, fmt);
			vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
			va_end(ap);
		}
	}
	return -code;
}

static uint64_t load(const struct cur *c, const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[c->big ? n - 1 - i : i] << (8 * i);
	return v;
}

/* An integer of n bytes; what names it for the message. */
static int take_int(struct cur *c, unsigned n, uint64_t *v, const char *what)
{
	if (c->n - c->at < n)
		return fail(c, ptc_err_truncated, c->at, "the data end inside %s (%u bytes wanted, %zu left)",
			    what, n, c->n - c->at);
	*v = load(c, c->p + c->at, n);
	c->at += n;
	return 0;
}

/* A NUL-terminated string of at most max bytes. */
static int take_string(struct cur *c, const char **s, size_t max, const char *what)
{
	size_t left = c->n - c->at, lim = left < max ? left : max;
	const uint8_t *z = memchr(c->p + c->at, 0, lim);

	if (!z)
		return fail(c, left <= max ? ptc_err_truncated : ptc_err_bad_record, c->at,
			    "%s is not NUL-terminated within %zu bytes", what, lim);
	*s = (const char *)c->p + c->at;
	c->at = (size_t)(z - c->p) + 1;
	return 0;
}

/* A block of size bytes (size read as an nsize-byte integer first). */
static int take_block(struct cur *c, unsigned nsize, const uint8_t **p, uint64_t *size,
		      const char *what)
{
	size_t at = c->at;
	int err = take_int(c, nsize, size, what);

	if (err)
		return err;
	if (*size > c->n - c->at)
		return fail(c, ptc_err_bad_size, at, "%s claims %llu bytes, only %zu left", what,
			    (unsigned long long)*size, c->n - c->at);
	*p = c->p + c->at;
	c->at += (size_t)*size;
	return 0;
}

static int add_format(struct ptc_tracing_data *td, size_t *cap, const char *system,
		      const uint8_t *text, uint64_t size, uint64_t offset)
{
	struct ptc_tracing_format *f;

	if (td->nr_formats == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		f = realloc(td->formats, ncap * sizeof(*f));
		if (!f)
			return -ptc_err_nomem;
		td->formats = f;
		*cap = ncap;
	}
	f = &td->formats[td->nr_formats++];
	f->system = system;
	f->text = text;
	f->size = size;
	f->offset = offset;
	return 0;
}

static int expect_tag(struct cur *c, const char *tag)
{
	size_t n = strlen(tag) + 1;

	if (c->n - c->at < n)
		return fail(c, ptc_err_truncated, c->at, "the data end before \"%s\"", tag);
	if (memcmp(c->p + c->at, tag, n))
		return fail(c, ptc_err_bad_record, c->at, "\"%s\" expected", tag);
	c->at += n;
	return 0;
}

static int parse(struct cur *c, struct ptc_tracing_data *td)
{
	static const uint8_t magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const char *s;
	uint64_t v, count, nsys, i, j, size;
	const uint8_t *blk;
	size_t fcap = 0, at;
	int err;

	if (c->n < sizeof(magic) || memcmp(c->p, magic, sizeof(magic)))
		return fail(c, ptc_err_bad_magic, 0, "not a container of perf's (no \\027\\010\\104tracing magic)");
	c->at = sizeof(magic);
	if ((err = take_string(c, &s, sizeof(td->version), "the version string")))
		return err;
	snprintf(td->version, sizeof(td->version), "%s", s);
	at = c->at;
	if ((err = take_int(c, 1, &v, "the byte order")))
		return err;
	if (v > 1)
		return fail(c, ptc_err_bad_record, at, "byte order flag %llu is neither 0 nor 1",
			    (unsigned long long)v);
	td->big_endian = (int)v;
	c->big = td->big_endian;
	at = c->at;
	if ((err = take_int(c, 1, &v, "the long size")))
		return err;
	if (v != 4 && v != 8)
		return fail(c, ptc_err_bad_record, at, "long size %llu is neither 4 nor 8",
			    (unsigned long long)v);
	td->long_size = (unsigned)v;
	at = c->at;
	if ((err = take_int(c, 4, &v, "the page size")))
		return err;
	if (!v)
		return fail(c, ptc_err_bad_record, at, "page size 0");
	td->page_size = (uint32_t)v;

	if ((err = expect_tag(c, "header_page")) ||
	    (err = take_block(c, 8, &td->header_page, &td->header_page_size, "header_page")) ||
	    (err = expect_tag(c, "header_event")) ||
	    (err = take_block(c, 8, &td->header_event, &td->header_event_size, "header_event")))
		return err;

	if ((err = take_int(c, 4, &count, "the ftrace format count")))
		return err;
	for (i = 0; i < count; i++) {
		at = c->at;
		if ((err = take_block(c, 8, &blk, &size, "an ftrace format")))
			return err;
		if (td->nr_formats >= MAX_FORMATS)
			return fail(c, ptc_err_bad_size, at, "more than %u formats", MAX_FORMATS);
		if ((err = add_format(td, &fcap, "ftrace", blk, size, (uint64_t)(blk - c->p))))
			return fail(c, -err, at, "out of memory");
	}

	at = c->at;
	if ((err = take_int(c, 4, &nsys, "the event system count")))
		return err;
	if (nsys > MAX_SYSTEMS || nsys > c->n - c->at)
		return fail(c, ptc_err_bad_size, at, "%llu event systems in %zu bytes",
			    (unsigned long long)nsys, c->n - c->at);
	td->systems = calloc(nsys ? nsys : 1, sizeof(char *));
	if (!td->systems)
		return fail(c, ptc_err_nomem, at, "out of memory");
	for (i = 0; i < nsys; i++) {
		char *sys;

		if ((err = take_string(c, &s, 4096, "an event system name")))
			return err;
		sys = strdup(s);
		if (!sys)
			return fail(c, ptc_err_nomem, c->at, "out of memory");
		td->systems[td->nr_systems++] = sys;
		if ((err = take_int(c, 4, &count, "an event count")))
			return err;
		for (j = 0; j < count; j++) {
			at = c->at;
			if ((err = take_block(c, 8, &blk, &size, "an event format")))
				return err;
			if (td->nr_formats >= MAX_FORMATS)
				return fail(c, ptc_err_bad_size, at, "more than %u formats", MAX_FORMATS);
			if ((err = add_format(td, &fcap, sys, blk, size, (uint64_t)(blk - c->p))))
				return fail(c, -err, at, "out of memory");
		}
	}

	if ((err = take_block(c, 4, &blk, &td->kallsyms_size, "kallsyms")) ||
	    (err = take_block(c, 4, &blk, &td->printk_size, "the ftrace printk formats")))
		return err;
	if (strtod(td->version, NULL) >= 0.6 &&
	    (err = take_block(c, 8, &blk, &td->cmdlines_size, "the saved cmdlines")))
		return err;
	td->size = c->at;
	return 0;
}

int ptc_tracing_data_parse(const uint8_t *data, size_t n, const char *name, uint64_t base,
			   struct ptc_tracing_data **out, char *err, size_t errlen)
{
	struct cur c = { data, n, 0, 0, name ? name : "tracing data", err, errlen, base };
	struct ptc_tracing_data *td;
	int e;

	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	td = calloc(1, sizeof(*td));
	if (!td)
		return fail(&c, ptc_err_nomem, 0, "out of memory");
	if (!data)
		n = c.n = 0;
	e = parse(&c, td);
	if (e < 0) {
		ptc_tracing_data_free(td);
		return e;
	}
	*out = td;
	return 0;
}

void ptc_tracing_data_free(struct ptc_tracing_data *td)
{
	size_t i;

	if (!td)
		return;
	for (i = 0; i < td->nr_systems; i++)
		free(td->systems[i]);
	free(td->systems);
	free(td->formats);
	free(td);
}

/* The "name: X" line at the start of a format text. */
static int format_named(const struct ptc_tracing_format *f, const char *event)
{
	size_t n = strlen(event);
	const char *t = (const char *)f->text;

	if (f->size < 6 + n || memcmp(t, "name: ", 6) || memcmp(t + 6, event, n))
		return 0;
	return f->size == 6 + n || t[6 + n] == '\n' || t[6 + n] == '\r';
}

const struct ptc_tracing_format *ptc_tracing_data_find(const struct ptc_tracing_data *td,
						       const char *system, const char *event)
{
	size_t i;

	for (i = 0; i < td->nr_formats; i++)
		if (!strcmp(td->formats[i].system, system) && format_named(&td->formats[i], event))
			return &td->formats[i];
	return NULL;
}

/* ---- sched_switch through libtraceevent ---- */

struct ptc_sched_switch_reader {
	struct tep_handle *tep;
	struct tep_event *ev;
	struct tep_format_field *common_type, *prev_pid, *next_pid, *prev_comm, *next_comm;
	uint64_t id;
};

void ptc_sched_switch_free(struct ptc_sched_switch_reader *r)
{
	if (!r)
		return;
	if (r->tep)
		tep_free(r->tep);
	free(r);
}

static int errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return 0;
}

/* Parse format f with a fresh libtraceevent handle set up for td. */
static struct tep_handle *parse_format(const struct ptc_tracing_data *td, const struct ptc_tracing_format *f,
				       int *ok)
{
	struct tep_handle *tep = tep_alloc();

	*ok = 0;
	if (!tep)
		return NULL;
	tep_set_file_bigendian(tep, td->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, (int)td->long_size);
	tep_set_page_size(tep, (int)td->page_size);
	*ok = tep_parse_event(tep, (const char *)f->text, (unsigned long)f->size, "sched") == TEP_ERRNO__SUCCESS;
	return tep;
}

/* libtraceevent's format parser dereferences NULL on some hostile formats
 * (fuzz_tracing_data finds them in minutes): a format is parsed in a
 * child process first, within limits of time and memory, and here only
 * once the child has parsed it to the end (the parser is deterministic).
 * 0: parsed; 1: the parser refused it; -1: the child crashed or ran out
 * of its limits (a sanitizer that catches the crash exits with a status
 * of its own: only REFUSED and 0 are the child's word); -2: no child
 * could be made. */
#define REFUSED 42
static int parse_in_child(const struct ptc_tracing_data *td, const struct ptc_tracing_format *f)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -2;
	if (pid == 0) {
		static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
		struct rlimit cpu = { 10, 10 }, as = { 1ul << 30, 1ul << 30 };
		struct tep_handle *tep;
		size_t i;
		int ok;

		/* a crash ends the child by its signal, without the handlers
		 * of a sanitizer or a fuzzer that would report it as ours */
		for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			signal(fatal[i], SIG_DFL);
		setrlimit(RLIMIT_CPU, &cpu);
#if !defined(__SANITIZE_ADDRESS__) && !PTC_HAS_ASAN
		/* (AddressSanitizer's shadow memory needs far more address space) */
		setrlimit(RLIMIT_AS, &as);
#else
		(void)as;
#endif
		tep = parse_format(td, f, &ok);
		_exit(tep && ok && tep_find_event_by_name(tep, "sched", "sched_switch") ? 0 : REFUSED);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == REFUSED))
		return WEXITSTATUS(st) == 0 ? 0 : 1;
	return -1;
}

int ptc_sched_switch_new(struct ptc_sched_switch_reader **out,
			 const struct ptc_tracing_data *td, const char *name, uint64_t base,
			 char *err, size_t errlen)
{
	const struct ptc_tracing_format *f;
	struct ptc_sched_switch_reader *r;
	struct tep_format_field **need[] = { NULL, NULL, NULL };
	const char *names[] = { "prev_pid", "next_pid", "next_comm" };
	size_t i;

	*out = NULL;
	if (!name)
		name = "tracing data";
	f = ptc_tracing_data_find(td, "sched", "sched_switch");
	if (!f) {
		errf(err, errlen, "%s: offset 0x%llx: tracing data: no sched:sched_switch format", name,
		     (unsigned long long)base);
		return -ptc_err_not_found;
	}
	/* libtraceevent prints its parse problems itself: they are ours to report */
	tep_set_loglevel(TEP_LOG_NONE);
	switch (parse_in_child(td, f)) {
	case 1:
		errf(err, errlen, "%s: offset 0x%llx: tracing data: libtraceevent cannot parse the "
		     "sched:sched_switch format", name, (unsigned long long)(base + f->offset));
		return -ptc_err_bad_record;
	case -1:
		errf(err, errlen, "%s: offset 0x%llx: tracing data: the sched:sched_switch format makes "
		     "libtraceevent crash (in a child process): not used", name, (unsigned long long)(base + f->offset));
		return -ptc_err_bad_record;
	case -2:
		errf(err, errlen, "%s: offset 0x%llx: tracing data: no process to check the sched:sched_switch "
		     "format in: %s", name, (unsigned long long)(base + f->offset), strerror(errno));
		return -ptc_err_nomem;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ptc_err_nomem;
	{
		int ok;
		r->tep = parse_format(td, f, &ok);
		if (!r->tep) {
			ptc_sched_switch_free(r);
			return -ptc_err_nomem;
		}
		if (!ok) {
			errf(err, errlen, "%s: offset 0x%llx: tracing data: libtraceevent cannot parse the "
			     "sched:sched_switch format", name, (unsigned long long)(base + f->offset));
			ptc_sched_switch_free(r);
			return -ptc_err_bad_record;
		}
	}
	r->ev = tep_find_event_by_name(r->tep, "sched", "sched_switch");
	if (!r->ev) {
		errf(err, errlen, "%s: offset 0x%llx: tracing data: the sched_switch format names no such event", name,
		     (unsigned long long)(base + f->offset));
		ptc_sched_switch_free(r);
		return -ptc_err_bad_record;
	}
	need[0] = &r->prev_pid;
	need[1] = &r->next_pid;
	need[2] = &r->next_comm;
	for (i = 0; i < 3; i++) {
		*need[i] = tep_find_field(r->ev, names[i]);
		if (!*need[i]) {
			errf(err, errlen, "%s: offset 0x%llx: tracing data: the sched_switch format has no field %s", name,
			     (unsigned long long)(base + f->offset), names[i]);
			ptc_sched_switch_free(r);
			return -ptc_err_bad_record;
		}
	}
	r->prev_comm = tep_find_field(r->ev, "prev_comm");
	r->common_type = tep_find_common_field(r->ev, "common_type");
	if (r->prev_pid->size > 8 || r->next_pid->size > 8 ||
	    (r->common_type && r->common_type->size > 8)) {
		errf(err, errlen, "%s: offset 0x%llx: tracing data: sched_switch pid fields of impossible size", name,
		     (unsigned long long)(base + f->offset));
		ptc_sched_switch_free(r);
		return -ptc_err_bad_record;
	}
	r->id = (uint64_t)r->ev->id;
	*out = r;
	return 0;
}

uint64_t ptc_sched_switch_id(const struct ptc_sched_switch_reader *r)
{
	return r->id;
}

static int field_fits(const struct tep_format_field *f, size_t size)
{
	return f->offset >= 0 && f->size >= 0 && (size_t)f->offset + (size_t)f->size <= size;
}

static void read_comm(const struct tep_format_field *f, const uint8_t *raw, size_t size, char out[16])
{
	size_t n;

	memset(out, 0, 16);
	if (!f || !field_fits(f, size) || (f->flags & TEP_FIELD_IS_DYNAMIC))
		return;
	n = (size_t)f->size < 15 ? (size_t)f->size : 15;
	memcpy(out, raw + f->offset, n);
	out[15] = 0;
}

int ptc_sched_switch_read(const struct ptc_sched_switch_reader *r,
			  const uint8_t *raw, size_t size, struct ptc_sched_switch *out)
{
	unsigned long long v;

	if (!field_fits(r->prev_pid, size) || !field_fits(r->next_pid, size))
		return -ptc_err_bad_record;
	if (r->common_type && field_fits(r->common_type, size)) {
		if (tep_read_number_field(r->common_type, raw, &v) || v != r->id)
			return -ptc_err_bad_record;
	}
	if (tep_read_number_field(r->prev_pid, raw, &v))
		return -ptc_err_bad_record;
	out->prev_pid = (int32_t)v;
	if (tep_read_number_field(r->next_pid, raw, &v))
		return -ptc_err_bad_record;
	out->next_pid = (int32_t)v;
	read_comm(r->prev_comm, raw, size, out->prev_comm);
	read_comm(r->next_comm, raw, size, out->next_comm);
	return 0;
}

/* ---- the RAW field of a sample ---- */

int ptc_perf_sample_raw(const struct ptc_perf_record *rec,
			const struct perf_event_attr *attr,
			const uint8_t **raw, uint32_t *size)
{
	uint64_t st = attr->sample_type, rf = attr->read_format, nr;
	size_t at = 8, n = rec->size, k;
	const uint8_t *d = rec->data;

	if (!(st & PERF_SAMPLE_RAW))
		return -ptc_err_not_found;
	/* fixed u64 fields before READ, in the kernel's order */
	k = !!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
	    !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR) + !!(st & PERF_SAMPLE_ID) +
	    !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_PERIOD);
	at += 8 * k;
	if (at > n)
		return -ptc_err_bad_record;
	if (st & PERF_SAMPLE_READ) {
		size_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
		size_t hdr = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);

		if (rf & PERF_FORMAT_GROUP) {
			if (n - at < 8)
				return -ptc_err_bad_record;
			nr = ptc_le64(d + at);
			at += 8;
			if (nr > (n - at) / 8 / per)
				return -ptc_err_bad_record;
			at += 8 * (hdr + (size_t)nr * per);
		} else {
			at += 8 * (hdr + per);
		}
		if (at > n)
			return -ptc_err_bad_record;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (n - at < 8)
			return -ptc_err_bad_record;
		nr = ptc_le64(d + at);
		at += 8;
		if (nr > (n - at) / 8)
			return -ptc_err_bad_record;
		at += 8 * (size_t)nr;
	}
	if (n - at < 4)
		return -ptc_err_bad_record;
	*size = ptc_le32(d + at);
	at += 4;
	if (*size > n - at)
		return -ptc_err_bad_record;
	*raw = d + at;
	return 0;
}

/* ---- a recording's sched_switch samples ---- */

static void samples_setup(struct ptc_sched_switch_samples *ss, const struct ptc_perf_reader *r)
{
	const struct ptc_perf_info *info = ptc_perf_info(r);
	const char *what = ptc_perf_name(r);
	char msg[256];
	int err;

	ss->state = -1;
	if (!info->tracing_data) {
		snprintf(ss->err, sizeof(ss->err), "%s: tracepoint samples but no tracing data "
			 "(TRACING_DATA feature or record) to decode them", ptc_perf_name(r));
		return;
	}
	err = ptc_tracing_data_parse(info->tracing_data, info->tracing_data_size, what,
				     info->tracing_data_offset, &ss->td, msg, sizeof(msg));
	if (!err)
		err = ptc_sched_switch_new(&ss->rd, ss->td, what, info->tracing_data_offset, msg,
					   sizeof(msg));
	if (err < 0) {
		snprintf(ss->err, sizeof(ss->err), "%s", msg[0] ? msg : ptc_errstr(err));
		return;
	}
	ss->state = 1;
}

int ptc_sched_switch_sample(struct ptc_sched_switch_samples *ss, const struct ptc_perf_reader *r,
			    const struct ptc_perf_record *rec, struct ptc_sched_switch *out)
{
	const struct ptc_perf_attr *a;
	const uint8_t *raw;
	uint32_t size;
	int err;

	if (rec->type != PERF_RECORD_SAMPLE)
		return 0;
	a = ptc_perf_attr_of(r, rec->sid.id);
	if (!a || a->attr.type != PERF_TYPE_TRACEPOINT)
		return 0;
	if (!ss->state)
		samples_setup(ss, r);
	if (ss->state < 0) {
		/* cannot tell which tracepoint: named sched:sched_switch? */
		if (a->name && strcmp(a->name, "sched:sched_switch"))
			return 0;
		ss->bad++;
		return -ptc_err_unsupported;
	}
	if (a->attr.config != ss->rd->id)
		return 0;
	err = ptc_perf_sample_raw(rec, &a->attr, &raw, &size);
	if (!err)
		err = ptc_sched_switch_read(ss->rd, raw, size, out);
	if (err < 0) {
		ss->bad++;
		return -ptc_err_bad_record;
	}
	ss->samples++;
	if (!(rec->sid.valid & PTC_SID_CPU))
		ss->no_cpu++;
	return 1;
}

void ptc_sched_switch_samples_fini(struct ptc_sched_switch_samples *ss)
{
	ptc_sched_switch_free(ss->rd);
	ptc_tracing_data_free(ss->td);
	memset(ss, 0, sizeof(*ss));
}
