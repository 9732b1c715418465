/* Unit test of the tracing-data container parser and the sched_switch
 * reader (src/sideband/tracepoint.c).
 *
 * The containers are built here byte by byte in the layout perf's
 * tools/perf/util/trace-event-read.c reads; the sched_switch format text is
 * the one a Linux 6.1 x86_64 kernel gives in
 * /sys/kernel/tracing/events/sched/sched_switch/format, whose offsets
 * (prev_pid at 24, next_comm at 40, next_pid at 56) are the expected values.
 * Every prefix of a valid container must be refused with a message naming
 * the offset, and sizes that claim more than present must not allocate.
 */
#include <string.h>

#include "common/bytes.h"
#include "common/error.h"
#include "sideband/tracepoint.h"
#include "../lib/check.h"

static const char sched_switch_fmt[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d ==> next_comm=%s next_pid=%d\", "
	"REC->prev_comm, REC->prev_pid, REC->next_comm, REC->next_pid\n";

static const char wakeup_fmt[] =
	"name: sched_wakeup\n"
	"ID: 373\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int pid;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"pid=%d\", REC->pid\n";

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

struct buf {
	uint8_t b[8192];
	size_t n;
	int big;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_int(struct buf *b, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		b->b[b->n + (b->big ? n - 1 - i : i)] = (uint8_t)(v >> (8 * i));
	b->n += n;
}

static void put_str(struct buf *b, const char *s)
{
	put(b, s, strlen(s) + 1);
}

static void put_blk(struct buf *b, const char *s, unsigned nsize)
{
	put_int(b, strlen(s), nsize);
	put(b, s, strlen(s));
}

/* A container as perf writes it; where the sched_switch text lands. */
static size_t build(struct buf *b, int big, const char *version)
{
	size_t at;

	memset(b, 0, sizeof(*b));
	b->big = big;
	put(b, "\027\010\104tracing", 10);
	put_str(b, version);
	put_int(b, (uint64_t)big, 1);
	put_int(b, 8, 1);
	put_int(b, 4096, 4);
	put_str(b, "header_page");
	put_blk(b, header_page, 8);
	put_str(b, "header_event");
	put_blk(b, "# compressed entry header\n", 8);
	put_int(b, 1, 4);			/* one ftrace format */
	put_blk(b, "name: function\nID: 1\nformat:\n", 8);
	put_int(b, 2, 4);			/* two systems */
	put_str(b, "irq");
	put_int(b, 0, 4);
	put_str(b, "sched");
	put_int(b, 2, 4);
	put_blk(b, wakeup_fmt, 8);
	put_int(b, strlen(sched_switch_fmt), 8);
	at = b->n;
	put(b, sched_switch_fmt, strlen(sched_switch_fmt));
	put_blk(b, "ffffffff81000000 T _text\n", 4);	/* kallsyms */
	put_int(b, 0, 4);			/* printk */
	if (strcmp(version, "0.5"))
		put_blk(b, "1 init\n", 8);	/* saved cmdlines */
	return at;
}

static void test_parse(int big)
{
	struct buf b;
	struct ptc_tracing_data *td = NULL;
	const struct ptc_tracing_format *f;
	char err[256];
	size_t at = build(&b, big, "0.6");
	int e;

	e = ptc_tracing_data_parse(b.b, b.n, "t", 0, &td, err, sizeof(err));
	CHECK(e == 0, "parse: %d %s", e, err);
	if (e)
		return;
	CHECK(!strcmp(td->version, "0.6"), "version %s", td->version);
	CHECK_EQ_U64(td->big_endian, big);
	CHECK_EQ_U64(td->long_size, 8);
	CHECK_EQ_U64(td->page_size, 4096);
	CHECK_EQ_U64(td->header_page_size, strlen(header_page));
	CHECK_EQ_U64(td->nr_formats, 3);
	CHECK_EQ_U64(td->nr_systems, 2);
	CHECK_EQ_U64(td->kallsyms_size, 25);
	CHECK_EQ_U64(td->cmdlines_size, 7);
	CHECK_EQ_U64(td->size, b.n);
	f = ptc_tracing_data_find(td, "sched", "sched_switch");
	CHECK(f != NULL, "sched_switch not found");
	if (f) {
		CHECK_EQ_U64(f->offset, at);
		CHECK_EQ_U64(f->size, strlen(sched_switch_fmt));
	}
	CHECK(ptc_tracing_data_find(td, "sched", "sched_switc") == NULL, "prefix matched");
	CHECK(ptc_tracing_data_find(td, "irq", "sched_switch") == NULL, "wrong system matched");
	CHECK(ptc_tracing_data_find(td, "ftrace", "function") != NULL, "ftrace format");
	ptc_tracing_data_free(td);
}

static void test_v05(void)
{
	struct buf b;
	struct ptc_tracing_data *td = NULL;
	char err[256];

	build(&b, 0, "0.5");
	CHECK(ptc_tracing_data_parse(b.b, b.n, "t", 0, &td, err, sizeof(err)) == 0, "0.5: %s", err);
	if (td)
		CHECK_EQ_U64(td->size, b.n);
	ptc_tracing_data_free(td);
}

static void test_truncated(void)
{
	struct buf b;
	struct ptc_tracing_data *td;
	char err[256];
	size_t n;
	int e;

	build(&b, 0, "0.6");
	for (n = 0; n < b.n; n++) {
		td = (void *)1;
		e = ptc_tracing_data_parse(b.b, n, "cut", 0x1000, &td, err, sizeof(err));
		CHECK(e < 0, "prefix of %zu bytes accepted", n);
		CHECK(td == NULL, "no container on failure");
		CHECK(!strncmp(err, "cut: offset 0x", 14) && strtoull(err + 12, NULL, 16) >= 0x1000 &&
		      strtoull(err + 12, NULL, 16) <= 0x1000 + n && strstr(err, ": tracing data: "),
		      "message '%s'", err);
		if (e >= 0)
			ptc_tracing_data_free(td);
	}
}

static void test_hostile(void)
{
	struct buf b;
	struct ptc_tracing_data *td;
	char err[256];
	size_t off;
	int e;

	build(&b, 0, "0.6");
	/* header_page's size: 2^63 */
	off = 10 + 4 + 1 + 1 + 4 + 12;
	ptc_put64(b.b + off, 1ull << 63);
	e = ptc_tracing_data_parse(b.b, b.n, "h", 0, &td, err, sizeof(err));
	CHECK(e == -ptc_err_bad_size, "huge header_page: %d %s", e, err);
	CHECK(strstr(err, "h: offset 0x20: tracing data: header_page claims") != NULL, "message '%s'", err);

	build(&b, 0, "0.6");
	memcpy(b.b + 3, "traxing", 7);
	CHECK(ptc_tracing_data_parse(b.b, b.n, "h", 0, &td, err, sizeof(err)) == -ptc_err_bad_magic,
	      "bad magic: %s", err);

	build(&b, 0, "0.6");
	b.b[10 + 4] = 7;		/* byte order flag */
	CHECK(ptc_tracing_data_parse(b.b, b.n, "h", 0, &td, err, sizeof(err)) == -ptc_err_bad_record,
	      "bad endian flag: %s", err);

	build(&b, 0, "0.6");
	b.b[10 + 4 + 1] = 3;		/* long size */
	CHECK(ptc_tracing_data_parse(b.b, b.n, "h", 0, &td, err, sizeof(err)) == -ptc_err_bad_record,
	      "bad long size: %s", err);

	/* a version string that never ends */
	memset(b.b, 'x', sizeof(b.b));
	memcpy(b.b, "\027\010\104tracing", 10);
	CHECK(ptc_tracing_data_parse(b.b, sizeof(b.b), "h", 0, &td, err, sizeof(err)) < 0, "endless version");
	CHECK(ptc_tracing_data_parse(NULL, 0, "h", 0, &td, err, sizeof(err)) == -ptc_err_bad_magic, "empty");
}

static void put_raw_le(uint8_t *raw, size_t off, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		raw[off + i] = (uint8_t)(v >> (8 * i));
}

static void test_sched_switch(void)
{
	struct buf b;
	struct ptc_tracing_data *td = NULL;
	struct ptc_sched_switch_reader *r = NULL;
	struct ptc_sched_switch s;
	uint8_t raw[68];
	char err[256];
	int e;

	build(&b, 0, "0.6");
	if (ptc_tracing_data_parse(b.b, b.n, "t", 0, &td, err, sizeof(err)) < 0) {
		CHECK(0, "parse: %s", err);
		return;
	}
	e = ptc_sched_switch_new(&r, td, "t", 0, err, sizeof(err));
	CHECK(e == 0, "sched_switch_new: %d %s", e, err);
	if (e)
		goto out;
	CHECK_EQ_U64(ptc_sched_switch_id(r), 372);
	/* a record as the kernel lays it out (offsets from the format text) */
	memset(raw, 0, sizeof(raw));
	put_raw_le(raw, 0, 372, 2);
	put_raw_le(raw, 4, 1234, 4);
	memcpy(raw + 8, "worker", 6);
	put_raw_le(raw, 24, 1234, 4);
	put_raw_le(raw, 28, 120, 4);
	memcpy(raw + 40, "0123456789abcdefXX", 16);	/* a full 16-byte comm */
	put_raw_le(raw, 56, 98765, 4);
	memset(&s, 0, sizeof(s));
	e = ptc_sched_switch_read(r, raw, sizeof(raw), &s);
	CHECK(e == 0, "read: %d", e);
	CHECK_EQ_U64(s.prev_pid, 1234);
	CHECK_EQ_U64(s.next_pid, 98765);
	CHECK(!strcmp(s.prev_comm, "worker"), "prev_comm %s", s.prev_comm);
	CHECK(!strcmp(s.next_comm, "0123456789abcde"), "next_comm %s", s.next_comm);
	/* the idle task */
	put_raw_le(raw, 56, 0, 4);
	CHECK(ptc_sched_switch_read(r, raw, sizeof(raw), &s) == 0 && s.next_pid == 0, "idle");
	/* too short for next_pid */
	CHECK(ptc_sched_switch_read(r, raw, 59, &s) == -ptc_err_bad_record, "short raw data");
	CHECK(ptc_sched_switch_read(r, raw, 60, &s) == 0, "exactly long enough");
	/* another event's record */
	put_raw_le(raw, 0, 373, 2);
	CHECK(ptc_sched_switch_read(r, raw, sizeof(raw), &s) == -ptc_err_bad_record, "wrong common_type");
out:
	ptc_sched_switch_free(r);
	ptc_tracing_data_free(td);
}

static void test_no_sched_switch(void)
{
	static const uint8_t tiny[] = "\027\010\104tracing0.6\0\0\10\0\20\0\0"
				      "header_page\0\0\0\0\0\0\0\0\0"
				      "header_event\0\0\0\0\0\0\0\0\0"
				      "\0\0\0\0" "\0\0\0\0" "\0\0\0\0" "\0\0\0\0"
				      "\0\0\0\0\0\0\0\0";
	struct ptc_tracing_data *td = NULL;
	struct ptc_sched_switch_reader *r;
	char err[256];
	int e;

	e = ptc_tracing_data_parse(tiny, sizeof(tiny) - 1, "t", 0, &td, err, sizeof(err));
	CHECK(e == 0, "empty container: %s", err);
	if (e)
		return;
	CHECK_EQ_U64(td->size, sizeof(tiny) - 1);
	CHECK(ptc_sched_switch_new(&r, td, "t", 0, err, sizeof(err)) == -ptc_err_not_found, "no format");
	CHECK(strstr(err, "no sched:sched_switch") != NULL, "message '%s'", err);
	ptc_tracing_data_free(td);
}

/* A SAMPLE record laid out by hand as the kernel writes it for `perf
 * record -e sched:sched_switch` (sample_type IP|TID|TIME|CPU|PERIOD|RAW|
 * IDENTIFIER, as perf evlist -v shows for such a recording). */
static void test_sample_raw(void)
{
	uint64_t rec64[32];
	uint8_t *d = (uint8_t *)rec64;
	struct perf_event_attr attr;
	struct ptc_perf_record rec;
	const uint8_t *raw;
	uint32_t size;
	size_t at = 8;

	memset(rec64, 0, sizeof(rec64));
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			   PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW | PERF_SAMPLE_IDENTIFIER;
	at += 6 * 8;			/* identifier ip tid time cpu period */
	ptc_put32(d + at, 12);
	memcpy(d + at + 4, "abcdefghijkl", 12);
	at += 16;
	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_SAMPLE;
	rec.size = (uint16_t)at;
	rec.data = d;
	CHECK(ptc_perf_sample_raw(&rec, &attr, &raw, &size) == 0, "raw");
	CHECK_EQ_U64(size, 12);
	CHECK(raw == d + 8 + 48 + 4, "raw at %td", raw - d);
	rec.size = (uint16_t)(at - 8);
	CHECK(ptc_perf_sample_raw(&rec, &attr, &raw, &size) == -ptc_err_bad_record, "short");
	/* with READ (group of 2, id + lost) and a callchain of 3 before it */
	attr.sample_type |= PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN;
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | (1u << 4) /* LOST */;
	at = 8 + 6 * 8;
	ptc_put64(d + at, 2);
	at += 8 + 2 * 3 * 8;
	ptc_put64(d + at, 3);
	at += 8 + 3 * 8;
	ptc_put32(d + at, 8);
	at += 16;
	rec.size = (uint16_t)at;
	CHECK(ptc_perf_sample_raw(&rec, &attr, &raw, &size) == 0 && size == 8, "raw after read+callchain");
	CHECK(raw == d + at - 12, "raw at %td", raw - d);
	ptc_put64(d + 8 + 6 * 8, 1ull << 60);	/* hostile group count */
	CHECK(ptc_perf_sample_raw(&rec, &attr, &raw, &size) == -ptc_err_bad_record, "huge group");
	attr.sample_type &= ~(uint64_t)PERF_SAMPLE_RAW;
	CHECK(ptc_perf_sample_raw(&rec, &attr, &raw, &size) == -ptc_err_not_found, "no RAW");
}

int main(void)
{
	test_parse(0);
	test_parse(1);
	test_v05();
	test_truncated();
	test_hostile();
	test_sched_switch();
	test_no_sched_switch();
	test_sample_raw();
	return check_result();
}
