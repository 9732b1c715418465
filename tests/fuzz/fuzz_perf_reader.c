/* Fuzz target: the perf.data reader, every record parser, and the
 * sideband built from the records.
 *
 * The input is served through a memfd (a regular, seekable file: file mode,
 * pread, lseek over AUX data) and, when small enough, again through a pipe
 * (pipe mode, AUX data skipped by reading).  Every record is handed to the
 * parser of its type and to the sideband (whose switch records are checked
 * against each other at the end, then asked who ran when on each CPU), and
 * the AUX data of every other AUXTRACE record is read, the rest skipped, so
 * that both paths run. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "input/perf_reader.h"
#include "sideband/sideband.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse_all(const struct ptc_perf_record *rec)
{
	union {
		struct ptc_perf_mmap mmap;
		struct ptc_perf_comm comm;
		struct ptc_perf_task task;
		struct ptc_perf_aux aux;
		struct ptc_perf_itrace_start is;
		struct ptc_perf_switch sw;
		struct ptc_perf_lost lost;
		struct ptc_perf_auxtrace at;
		struct ptc_perf_auxtrace_info ai;
		struct ptc_perf_auxtrace_error ae;
	} u;
	volatile size_t sink = 0;
	size_t i;

	(void)ptc_perf_record_name(rec->type);
	if (ptc_perf_parse_mmap(rec, &u.mmap) == 0)
		sink += strlen(u.mmap.filename);
	if (ptc_perf_parse_comm(rec, &u.comm) == 0)
		sink += strlen(u.comm.comm);
	ptc_perf_parse_task(rec, &u.task);
	ptc_perf_parse_aux(rec, &u.aux);
	ptc_perf_parse_itrace_start(rec, &u.is);
	ptc_perf_parse_switch(rec, &u.sw);
	ptc_perf_parse_lost(rec, &u.lost);
	ptc_perf_parse_auxtrace(rec, &u.at);
	if (ptc_perf_parse_auxtrace_info(rec, &u.ai) == 0)
		for (i = 0; i < u.ai.nr_priv; i++)
			sink += u.ai.priv[i];
	if (ptc_perf_parse_auxtrace_error(rec, &u.ae) == 0)
		sink += strlen(u.ae.msg);
	(void)sink;
}

static void count_thread(void *arg, uint32_t pid, uint32_t tid, uint64_t time)
{
	*(size_t *)arg += pid + tid + (size_t)time;
}

/* The sideband's answers after its last record, on every CPU it knows, at
 * the times its own entries and damage name. */
static void ask_sideband(struct ptc_sideband *sb)
{
	const struct ptc_sb_switch_damage *dmg;
	const struct ptc_sb_thread *th;
	volatile size_t sink = 0;
	size_t ncpu = ptc_sb_nr_cpus(sb), ndmg, nth, i, n;
	uint32_t pid[4], tid[4];
	uint64_t lost;
	int cpu;

	if (ptc_sb_finish(sb) < 0)
		return;
	dmg = ptc_sb_switch_damage(sb, &ndmg);
	th = ptc_sb_threads(sb, &nth);
	for (cpu = 0; (size_t)cpu < ncpu && cpu < 64; cpu++) {
		n = 0;
		sink += ptc_sb_cpu_switches(sb, cpu) + ptc_sb_cpu_threads(sb, cpu);
		sink += ptc_sb_threads_between(sb, cpu, 0, UINT64_MAX, count_thread, &n) + n;
		sink += (size_t)ptc_sb_next_switch_in(sb, cpu, 0);
		for (i = 0; i < ndmg && i < 16; i++) {
			if (ptc_sb_thread_on_cpu(sb, cpu, dmg[i].time, pid, tid) == 0)
				sink += tid[0];
			sink += ptc_sb_unknown_on_cpu(sb, cpu, dmg[i].time, pid, tid, 4);
			sink += ptc_sb_unknown_on_cpu(sb, cpu, dmg[i].t_start, pid, tid, 4);
		}
		if (ptc_sb_thread_on_cpu(sb, cpu, 0, pid, tid) == 0)
			sink += pid[0];
	}
	for (i = 0; i < nth && i < 16; i++) {
		(void)ptc_sb_thread(sb, th[i].tid);
		(void)ptc_sb_find_map(sb, th[i].pid, PTC_SB_TIME_MAX, 0x400000);
		sink += ptc_sb_next_map_change(sb, th[i].pid, 1);
	}
	sink += ptc_sb_lost(sb, &lost) + lost;
	(void)sink;
}

static void run(int fd)
{
	struct ptc_perf_reader *r;
	struct ptc_sideband *sb = NULL;
	struct ptc_perf_record rec;
	static uint8_t aux[4096];
	char err[256];
	size_t i, n = 0;

	if (ptc_perf_open_fd(&r, fd, "fuzz", err, sizeof(err)) < 0)
		return;
	for (i = 0; i < ptc_perf_nr_attrs(r); i++) {
		const struct ptc_perf_attr *a = ptc_perf_attr(r, i);
		if (a->nr_ids)
			(void)ptc_perf_attr_of(r, a->ids[a->nr_ids - 1]);
	}
	if (ptc_sb_new(&sb) < 0)
		sb = NULL;
	while (ptc_perf_next(r, &rec) > 0) {
		parse_all(&rec);
		if (sb && ptc_sb_add_record(sb, &rec) < 0) {
			ptc_sb_free(sb);
			sb = NULL;
		}
		if (rec.type == PTC_REC_AUXTRACE && (n++ & 1)) {
			if (ptc_perf_seekable(r))
				ptc_perf_pread(r, aux, rec.aux_size < sizeof(aux) ? rec.aux_size : sizeof(aux),
					       rec.aux_offset);
			while (ptc_perf_read_aux(r, aux, sizeof(aux)) > 0)
				;
		}
	}
	(void)ptc_perf_errmsg(r);
	(void)ptc_perf_info(r);
	(void)ptc_perf_stats(r);
	if (sb) {
		ask_sideband(sb);
		ptc_sb_free(sb);
	}
	ptc_perf_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	int p[2];

	if (fd >= 0) {
		if (write(fd, data, size) == (ssize_t)size && lseek(fd, 0, SEEK_SET) == 0)
			run(fd);
		close(fd);
	}
	if (size <= 60000 && pipe(p) == 0) {
		fcntl(p[1], F_SETPIPE_SZ, 65536);
		if (write(p[1], data, size) == (ssize_t)size) {
			close(p[1]);
			p[1] = -1;
			run(p[0]);
		}
		close(p[0]);
		if (p[1] >= 0)
			close(p[1]);
	}
	return 0;
}
