/* Unit test of the sideband's switch timelines and LOST ranges
 * (src/sideband/sideband.c): which source a CPU's timeline uses when a
 * recording has both switch records and sched_switch samples, the process
 * of a thread named by sched_switch only by its tid, where LOST records
 * say records may be missing, and until when a process's mappings stay
 * as they are.  Records are laid out by hand as
 * the kernel writes them (include/uapi/linux/perf_event.h). */
#include <string.h>

#include "common/bytes.h"
#include "common/error.h"
#include "sideband/sideband.h"
#include "../lib/check.h"

static uint64_t buf[8];

static struct ptc_perf_record rec(uint32_t type, uint16_t misc, const void *body, size_t n,
				  int cpu, uint64_t time)
{
	struct ptc_perf_record r;

	memset(&r, 0, sizeof(r));
	memset(buf, 0, sizeof(buf));
	ptc_put32(buf, type);
	ptc_put16((uint8_t *)buf + 4, misc);
	ptc_put16((uint8_t *)buf + 6, (uint16_t)(8 + n));
	memcpy((uint8_t *)buf + 8, body, n);
	r.type = type;
	r.misc = misc;
	r.size = (uint16_t)(8 + n);
	r.data = (const uint8_t *)buf;
	if (cpu >= 0) {
		r.sid.valid |= PTC_SID_CPU;
		r.sid.cpu = (uint32_t)cpu;
	}
	if (time) {
		r.sid.valid |= PTC_SID_TIME;
		r.sid.time = time;
	}
	return r;
}

static void add(struct ptc_sideband *sb, struct ptc_perf_record r)
{
	int err = ptc_sb_add_record(sb, &r);

	CHECK(err == 0, "record type %u: %d", r.type, err);
}

/* SWITCH_CPU_WIDE out on cpu to next pid/tid */
static void switch_out(struct ptc_sideband *sb, int cpu, uint64_t t, uint32_t pid, uint32_t tid)
{
	uint8_t b[8];

	ptc_put32(b, pid);
	ptc_put32(b + 4, tid);
	add(sb, rec(PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT, b, 8, cpu, t));
}

static void fork_rec(struct ptc_sideband *sb, uint32_t pid, uint32_t ppid, uint32_t tid,
		     uint32_t ptid, uint64_t t)
{
	uint8_t b[24];

	ptc_put32(b, pid);
	ptc_put32(b + 4, ppid);
	ptc_put32(b + 8, tid);
	ptc_put32(b + 12, ptid);
	ptc_put64(b + 16, t);
	add(sb, rec(PERF_RECORD_FORK, 0, b, 24, 0, t));
}

static void lost_rec(struct ptc_sideband *sb, int cpu, uint64_t t, uint64_t n)
{
	uint8_t b[16];

	ptc_put64(b, 7);
	ptc_put64(b + 8, n);
	add(sb, rec(PERF_RECORD_LOST, 0, b, 16, cpu, t));
}

/* MMAP of [addr, addr + len) in pid's address space, file "f" */
static void mmap_rec(struct ptc_sideband *sb, uint32_t pid, uint64_t addr, uint64_t len, uint64_t t)
{
	uint8_t b[40];

	memset(b, 0, sizeof(b));
	ptc_put32(b, pid);
	ptc_put32(b + 4, pid);
	ptc_put64(b + 8, addr);
	ptc_put64(b + 16, len);
	b[32] = 'f';
	add(sb, rec(PERF_RECORD_MMAP, 0, b, 40, 0, t));
}

/* ptc_sb_next_map_change(): when pid's mappings change next, and
 * ptc_sb_find_map() giving the same mapping at every time before that. */
static void test_map_changes(void)
{
	struct ptc_sideband *sb;
	const struct ptc_sb_map *m0;
	uint8_t b[16];
	uint64_t t;

	CHECK(ptc_sb_new(&sb) == 0, "new");
	mmap_rec(sb, 5, 0x1000, 0x1000, 100);
	mmap_rec(sb, 6, 0x1000, 0x1000, 150);
	mmap_rec(sb, 5, 0x1800, 0x1000, 200);	/* over the first: it ends */
	memset(b, 0, sizeof(b));
	ptc_put32(b, 5);
	ptc_put32(b + 4, 5);
	b[8] = 'x';
	add(sb, rec(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, b, 16, 0, 300));	/* all of pid 5's end */
	CHECK(ptc_sb_finish(sb) == 0, "finish");

	CHECK_EQ_U64(ptc_sb_next_map_change(sb, 5, 0), 100);
	CHECK_EQ_U64(ptc_sb_next_map_change(sb, 5, 99), 100);
	CHECK_EQ_U64(ptc_sb_next_map_change(sb, 5, 100), 200);
	CHECK_EQ_U64(ptc_sb_next_map_change(sb, 5, 199), 200);
	CHECK_EQ_U64(ptc_sb_next_map_change(sb, 5, 200), 300);
	CHECK_EQ_U64(ptc_sb_next_map_change(sb, 5, 300), PTC_SB_TIME_MAX);
	CHECK_EQ_U64(ptc_sb_next_map_change(sb, 6, 10), 150);
	CHECK_EQ_U64(ptc_sb_next_map_change(sb, 6, 150), PTC_SB_TIME_MAX);
	CHECK_EQ_U64(ptc_sb_next_map_change(sb, 7, 0), PTC_SB_TIME_MAX);
	/* the same answer from a time up to the next change, different after */
	m0 = ptc_sb_find_map(sb, 5, 100, 0x1900);
	CHECK(m0 && m0->start == 0x1000, "pid 5 at 100");
	for (t = 101; t < 200; t += 33)
		CHECK(ptc_sb_find_map(sb, 5, t, 0x1900) == m0, "pid 5 at %llu", (unsigned long long)t);
	CHECK(ptc_sb_find_map(sb, 5, 200, 0x1900) != m0, "pid 5 at 200: the new mapping");
	ptc_sb_free(sb);
}

static void expect_on(struct ptc_sideband *sb, int cpu, uint64_t t, uint32_t pid, uint32_t tid)
{
	uint32_t p = 0xdead, k = 0xdead;
	int err = ptc_sb_thread_on_cpu(sb, cpu, t, &p, &k);

	CHECK(err == 0 && p == pid && k == tid, "cpu %d at %llu: %d %u/%u, want %u/%u", cpu,
	      (unsigned long long)t, err, p, k, pid, tid);
}

/* SWITCH_CPU_WIDE on cpu at t with its sample_id thread (pid/tid) and
 * next_prev (np_pid/np_tid), at offset off of the input */
static void switch_rec(struct ptc_sideband *sb, int cpu, uint64_t t, int out, uint32_t pid, uint32_t tid,
		       uint32_t np_pid, uint32_t np_tid, uint64_t off)
{
	struct ptc_perf_record r;
	uint8_t b[8];

	ptc_put32(b, np_pid);
	ptc_put32(b + 4, np_tid);
	r = rec(PERF_RECORD_SWITCH_CPU_WIDE, out ? PERF_RECORD_MISC_SWITCH_OUT : 0, b, 8, cpu, t);
	r.sid.valid |= PTC_SID_TID;
	r.sid.pid = pid;
	r.sid.tid = tid;
	r.offset = off;
	add(sb, r);
}

/* The pair rule: a switch-out of A to B and the switch-in of B (from A),
 * then B's switch-out, name B's stretch four times.  A field the others
 * outvote is repaired (and counted); a thread named once and never
 * announced has no vote, and a stretch with no two agreeing fields is
 * nobody's: a lost range on the CPU, its possible threads named. */
static void test_switch_pairs(void)
{
	struct ptc_sideband *sb;
	const struct ptc_sb_switch_damage *d;
	const struct ptc_sb_lost_range *l;
	uint32_t pid[4], tid[4], p, k;
	size_t n;

	CHECK(ptc_sb_new(&sb) == 0, "new");
	fork_rec(sb, 300, 1, 300, 1, 1);
	fork_rec(sb, 300, 300, 301, 300, 2);
	/* cpu 2: 300 runs, then 301 whose switch-in says 77777 */
	switch_rec(sb, 2, 10, 1, 0, 0, 300, 300, 0x100);
	switch_rec(sb, 2, 11, 0, 300, 300, 0, 0, 0x130);
	switch_rec(sb, 2, 20, 1, 300, 300, 300, 301, 0x160);
	switch_rec(sb, 2, 21, 0, 300, 77777, 300, 300, 0x190);	/* damaged */
	switch_rec(sb, 2, 30, 1, 300, 301, 0, 0, 0x1c0);
	switch_rec(sb, 2, 31, 0, 0, 0, 300, 301, 0x1f0);
	/* cpu 3: its last switch-in says 88888, only one field before it */
	switch_rec(sb, 3, 10, 1, 0, 0, 300, 300, 0x220);
	switch_rec(sb, 3, 11, 0, 300, 88888, 0, 0, 0x250);	/* damaged */
	CHECK(ptc_sb_finish(sb) == 0, "finish");

	expect_on(sb, 2, 15, 300, 300);
	expect_on(sb, 2, 25, 300, 301);		/* not 77777: repaired */
	expect_on(sb, 2, 35, 0, 0);
	CHECK(ptc_sb_thread_on_cpu(sb, 3, 15, &p, &k) == -ptc_err_not_found, "cpu 3 at 15: %u/%u", p, k);
	n = ptc_sb_unknown_on_cpu(sb, 3, 15, pid, tid, 4);
	CHECK(n == 1 && pid[0] == 300 && tid[0] == 300, "cpu 3's candidates: %zu", n);
	CHECK_EQ_U64(ptc_sb_unknown_on_cpu(sb, 2, 25, pid, tid, 4), 0);

	d = ptc_sb_switch_damage(sb, &n);
	CHECK_EQ_U64(n, 2);
	CHECK(d[0].cpu == 2 && d[0].offset == 0x190 && !d[0].next_prev && d[0].tid == 77777 &&
	      d[0].repaired && d[0].pid_taken == 300 && d[0].tid_taken == 301, "cpu 2's damage");
	CHECK(d[1].cpu == 3 && d[1].offset == 0x250 && d[1].tid == 88888 && !d[1].repaired, "cpu 3's damage");
	l = ptc_sb_lost_ranges(sb, &n);
	CHECK(n == 1 && l[0].cpu == 3 && l[0].offset == 0x250 && l[0].damaged && l[0].t_start == 10 &&
	      l[0].t_end == PTC_SB_TIME_MAX, "cpu 3's lost range: %zu", n);
	ptc_sb_free(sb);
}

int main(void)
{
	struct ptc_sideband *sb;
	const struct ptc_sb_lost_range *l;
	unsigned seen, used;
	size_t n;
	uint64_t nl;

	test_switch_pairs();
	CHECK(ptc_sb_new(&sb) == 0, "new");
	/* process 200 with a second thread 201, forked before the trace */
	fork_rec(sb, 200, 1, 200, 1, 1);
	fork_rec(sb, 200, 200, 201, 200, 2);

	/* cpu 0: switch records and sched_switch samples: the records win */
	ptc_sb_add_sched_switch(sb, 0, 5, 999);
	switch_out(sb, 0, 10, 200, 200);
	ptc_sb_add_sched_switch(sb, 0, 10, 200);
	ptc_sb_add_sched_switch(sb, 0, 15, 999);
	switch_out(sb, 0, 20, 0, 0);

	/* cpu 1: sched_switch samples only */
	ptc_sb_add_sched_switch(sb, 1, 10, 201);
	ptc_sb_add_sched_switch(sb, 1, 20, 0);
	ptc_sb_add_sched_switch(sb, 1, 30, 300);	/* a thread the sideband never saw */
	{
		uint8_t b[24] = { 0 };	/* an EXIT out of cpu 1 */
		ptc_put32(b, 555);
		ptc_put32(b + 8, 555);
		ptc_put64(b + 16, 33);
		add(sb, rec(PERF_RECORD_EXIT, 0, b, 24, 1, 33));
	}
	lost_rec(sb, 1, 40, 3);
	lost_rec(sb, -1, 0, 1);				/* no cpu, no time */
	CHECK(ptc_sb_finish(sb) == 0, "finish");

	used = ptc_sb_cpu_sources(sb, 0, &seen);
	CHECK(used == PTC_SB_SRC_SWITCH, "cpu 0 uses %#x", used);
	CHECK(seen == (PTC_SB_SRC_SWITCH | PTC_SB_SRC_SCHED_SWITCH), "cpu 0 saw %#x", seen);
	CHECK(!strcmp(ptc_sb_source_name(used), "switch"), "name %s", ptc_sb_source_name(used));
	CHECK_EQ_U64(ptc_sb_cpu_switches(sb, 0), 2);
	CHECK_EQ_U64(ptc_sb_cpu_threads(sb, 0), 1);
	expect_on(sb, 0, 16, 200, 200);		/* not 999 */
	expect_on(sb, 0, 25, 0, 0);

	used = ptc_sb_cpu_sources(sb, 1, &seen);
	CHECK(used == PTC_SB_SRC_SCHED_SWITCH, "cpu 1 uses %#x", used);
	CHECK(!strcmp(ptc_sb_source_name(used), "sched_switch"), "name %s", ptc_sb_source_name(used));
	CHECK_EQ_U64(ptc_sb_cpu_switches(sb, 1), 3);
	CHECK_EQ_U64(ptc_sb_cpu_threads(sb, 1), 2);
	expect_on(sb, 1, 15, 200, 201);		/* the process from FORK */
	expect_on(sb, 1, 25, 0, 0);
	expect_on(sb, 1, 35, 300, 300);		/* unknown: its own process */
	CHECK(ptc_sb_cpu_sources(sb, 5, &seen) == 0 && seen == 0, "cpu 5");
	CHECK(!strcmp(ptc_sb_source_name(0), "none"), "none");

	CHECK_EQ_U64(ptc_sb_lost(sb, &nl), 4);
	CHECK_EQ_U64(nl, 2);
	l = ptc_sb_lost_ranges(sb, &n);
	CHECK_EQ_U64(n, 2);
	if (n == 2) {
		CHECK(l[0].cpu == 1 && l[0].t_start == 33 && l[0].t_end == 40 && l[0].count == 3,
		      "range 0: cpu %d %llu..%llu x%llu", l[0].cpu, (unsigned long long)l[0].t_start,
		      (unsigned long long)l[0].t_end, (unsigned long long)l[0].count);
		CHECK(l[1].cpu == -1 && l[1].t_start == 0 && l[1].t_end == PTC_SB_TIME_MAX,
		      "range 1: cpu %d %llu..%llu", l[1].cpu, (unsigned long long)l[1].t_start,
		      (unsigned long long)l[1].t_end);
	}
	ptc_sb_free(sb);
	test_map_changes();
	return check_result();
}
