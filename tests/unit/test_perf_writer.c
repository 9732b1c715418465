/* perf.data writer: writes small recordings in file and pipe mode and asks
 * Linux perf (the oracle) what it reads in them.  The byte layout of the
 * file header is also checked directly against the documented format.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/error.h"
#include "input/perf_writer.h"
#include "../lib/check.h"

static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
				 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static void write_recording(const char *path, enum ptc_perf_writer_mode mode, int zlevel)
{
	struct ptc_perf_writer *w;
	struct perf_event_attr attr;
	struct ptc_perf_writer_sid sid = { .pid = 4242, .tid = 4243,
					   .time = 1000000, .id = 77, .cpu = 1 };
	const char *argv[] = { "perf", "record", "-e", "dummy:u", "./prog" };
	uint64_t ids[2] = { 77, 78 };
	uint8_t body[256];
	const char *file = "/opt/ptgen/prog";
	size_t n;
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0, "open %s", path);
	err = ptc_perf_writer_new(&w, fd, mode);
	CHECK(!err, "new: %s", ptc_errstr(err));

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.size = sizeof(attr);
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	attr.sample_id_all = 1;
	attr.exclude_kernel = 1;
	attr.mmap = attr.comm = attr.task = attr.mmap2 = 1;
	err = ptc_perf_writer_add_attr(w, &attr, "dummy:u", ids, 2);
	CHECK(!err, "add_attr: %s", ptc_errstr(err));
	if (zlevel)
		CHECK(!ptc_perf_writer_set_compression(w, zlevel), "compression");

	CHECK(!ptc_perf_writer_set_string(w, PTC_FEAT_HOSTNAME, "ptgen-host"), "hostname");
	CHECK(!ptc_perf_writer_set_string(w, PTC_FEAT_OSRELEASE, "6.1.0-ptgen"), "osrelease");
	CHECK(!ptc_perf_writer_set_string(w, PTC_FEAT_VERSION, "6.1.ptgen"), "version");
	CHECK(!ptc_perf_writer_set_string(w, PTC_FEAT_ARCH, "x86_64"), "arch");
	CHECK(!ptc_perf_writer_set_string(w, PTC_FEAT_CPUDESC, "Synthetic CPU @ 2.00GHz"), "cpudesc");
	CHECK(!ptc_perf_writer_set_string(w, PTC_FEAT_CPUID, "GenuineIntel,6,85,4"), "cpuid");
	CHECK(!ptc_perf_writer_set_nrcpus(w, 4, 2), "nrcpus");
	CHECK(!ptc_perf_writer_set_u64(w, PTC_FEAT_TOTAL_MEM, 16777216), "mem");
	CHECK(!ptc_perf_writer_set_cmdline(w, 5, argv), "cmdline");
	CHECK(!ptc_perf_writer_add_build_id(w, 4242, PERF_RECORD_MISC_USER, bid, 20, file), "buildid");

	/* COMM: pid, tid, comm[] */
	memset(body, 0, sizeof(body));
	ptc_put32(body, 4242);
	ptc_put32(body + 4, 4243);
	strcpy((char *)body + 8, "ptgenprog");
	err = ptc_perf_writer_event(w, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC,
				    body, 8 + strlen("ptgenprog") + 1, &sid);
	CHECK(!err, "comm: %s", ptc_errstr(err));

	/* MMAP2 with a build-id. */
	memset(body, 0, sizeof(body));
	ptc_put32(body, 4242);
	ptc_put32(body + 4, 4243);
	ptc_put64(body + 8, 0x400000);
	ptc_put64(body + 16, 0x2000);
	ptc_put64(body + 24, 0);
	body[32] = 20;
	memcpy(body + 36, bid, 20);
	ptc_put32(body + 56, 5);	/* prot */
	ptc_put32(body + 60, 2);	/* flags */
	strcpy((char *)body + 64, file);
	n = 64 + strlen(file) + 1;
	sid.time += 10;
	err = ptc_perf_writer_event(w, PERF_RECORD_MMAP2,
				    PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID,
				    body, n, &sid);
	CHECK(!err, "mmap2: %s", ptc_errstr(err));
	CHECK(!ptc_perf_writer_finished_round(w), "round");

	/* EXIT: pid, ppid, tid, ptid, time */
	memset(body, 0, sizeof(body));
	ptc_put32(body, 4242);
	ptc_put32(body + 4, 1);
	ptc_put32(body + 8, 4243);
	ptc_put32(body + 12, 1);
	ptc_put64(body + 16, 1000100);
	sid.time = 1000100;
	err = ptc_perf_writer_event(w, PERF_RECORD_EXIT, 0, body, 24, &sid);
	CHECK(!err, "exit: %s", ptc_errstr(err));
	if (mode == PTC_PERF_WRITE_FILE)
		CHECK(!ptc_perf_writer_set_sample_time(w, 1000000, 1000100), "time");
	err = ptc_perf_writer_finish(w);
	CHECK(!err, "finish: %s %s", ptc_errstr(err), ptc_perf_writer_errmsg(w));
	/* Adding attrs after the first record is refused. */
	CHECK(ptc_perf_writer_add_attr(w, &attr, "x", NULL, 0) == -ptc_err_invalid, "late attr");
	ptc_perf_writer_free(w);
	close(fd);
}

static void check_header(const char *path)
{
	uint8_t h[104];
	FILE *f = fopen(path, "rb");

	CHECK(f && fread(h, 1, sizeof(h), f) == sizeof(h), "read header");
	if (f)
		fclose(f);
	CHECK(!memcmp(h, "PERFILE2", 8), "magic");
	CHECK_EQ_U64(ptc_le64(h + 8), 104);
	CHECK_EQ_U64(ptc_le64(h + 16), sizeof(struct perf_event_attr) + 16);
	/* ids (16 bytes) come right after the header, then the attr. */
	CHECK_EQ_U64(ptc_le64(h + 24), 104 + 16);
	CHECK_EQ_U64(ptc_le64(h + 40), 104 + 16 + sizeof(struct perf_event_attr) + 16);
	/* HOSTNAME..CMDLINE, BUILD_ID, EVENT_DESC, SAMPLE_TIME */
	CHECK_EQ_U64(ptc_le64(h + 72), (1u << 2) | (0xffu << 3) | (1u << 11) | (1u << 12) | (1u << 21));
}

/* The type of the first record of a file-mode recording. */
static uint32_t first_record_type(const char *path)
{
	uint8_t h[104], r[8];
	FILE *f = fopen(path, "rb");
	uint32_t type = 0;

	if (f && fread(h, 1, sizeof(h), f) == sizeof(h) &&
	    !fseek(f, (long)ptc_le64(h + 40), SEEK_SET) &&
	    fread(r, 1, sizeof(r), f) == sizeof(r))
		type = ptc_le32(r);
	if (f)
		fclose(f);
	return type;
}

/* Runs a shell command; returns its whole output (malloc'd). */
static char *run(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	size_t cap = 1 << 16, n = 0, r;
	char *out = malloc(cap);

	if (!p || !out)
		return out;
	while ((r = fread(out + n, 1, cap - 1 - n, p)) > 0) {
		n += r;
		if (n == cap - 1) {
			cap *= 2;
			out = realloc(out, cap);
		}
	}
	out[n] = 0;
	pclose(p);
	return out;
}

static void expect(const char *out, const char *what)
{
	CHECK(out && strstr(out, what), "perf output lacks \"%s\"", what);
}

int main(void)
{
	const char *perf = getenv("PERF"), *tmp = getenv("TMPDIR");
	char dir[256], file[300], pipe[300], zfile[300], zpipe[300], cmd[1024];
	char *out;

	snprintf(dir, sizeof(dir), "%s/ptc-pw-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(file, sizeof(file), "%s/file.data", dir);
	snprintf(pipe, sizeof(pipe), "%s/pipe.data", dir);
	snprintf(zfile, sizeof(zfile), "%s/zfile.data", dir);
	snprintf(zpipe, sizeof(zpipe), "%s/zpipe.data", dir);
	write_recording(file, PTC_PERF_WRITE_FILE, 0);
	write_recording(pipe, PTC_PERF_WRITE_PIPE, 0);
	write_recording(zfile, PTC_PERF_WRITE_FILE, 3);
	write_recording(zpipe, PTC_PERF_WRITE_PIPE, 3);
	check_header(file);
	CHECK_EQ_U64(first_record_type(file), PERF_RECORD_COMM);
	CHECK_EQ_U64(first_record_type(zfile), PTC_REC_COMPRESSED);

	if (!perf || !*perf || access(perf, X_OK)) {
		fprintf(stderr, "perf not found: skipping the perf oracle checks\n");
	} else {
		snprintf(cmd, sizeof(cmd), "%s report --header-only -i %s 2>&1", perf, file);
		out = run(cmd);
		expect(out, "hostname : ptgen-host");
		expect(out, "os release : 6.1.0-ptgen");
		expect(out, "arch : x86_64");
		expect(out, "nrcpus online : 2");
		expect(out, "nrcpus avail : 4");
		expect(out, "cpudesc : Synthetic CPU @ 2.00GHz");
		expect(out, "cpuid : GenuineIntel,6,85,4");
		expect(out, "total memory : 16777216 kB");
		expect(out, "cmdline : perf record -e dummy:u ./prog");
		expect(out, "event : name = dummy:u");
		expect(out, "id = { 77, 78 }");
		free(out);

		snprintf(cmd, sizeof(cmd), "%s buildid-list -i %s 2>&1", perf, file);
		out = run(cmd);
		expect(out, "deadbeef0102030405060708090a0b0c0d0e0f10 /opt/ptgen/prog");
		free(out);

		snprintf(cmd, sizeof(cmd), "%s script -D -i %s 2>&1", perf, file);
		out = run(cmd);
		expect(out, "PERF_RECORD_COMM exec: ptgenprog:4242/4243");
		expect(out, "PERF_RECORD_MMAP2 4242/4243: [0x400000(0x2000) @ 0");
		expect(out, "PERF_RECORD_EXIT(4242:4243):(1:1)");
		expect(out, "PERF_RECORD_FINISHED_ROUND");
		free(out);

		snprintf(cmd, sizeof(cmd), "%s script -D -i - < %s 2>&1", perf, pipe);
		out = run(cmd);
		expect(out, "PERF_RECORD_ATTR");
		expect(out, "PERF_RECORD_FEATURE");
		expect(out, "PERF_RECORD_COMM exec: ptgenprog:4242/4243");
		expect(out, "PERF_RECORD_EXIT(4242:4243):(1:1)");
		free(out);

		/* perf record -z layout: perf decompresses the records. */
		snprintf(cmd, sizeof(cmd), "%s script -D -i %s 2>&1", perf, zfile);
		out = run(cmd);
		expect(out, "PERF_RECORD_COMM exec: ptgenprog:4242/4243");
		expect(out, "PERF_RECORD_MMAP2 4242/4243: [0x400000(0x2000) @ 0");
		expect(out, "PERF_RECORD_EXIT(4242:4243):(1:1)");
		free(out);
		snprintf(cmd, sizeof(cmd), "%s report --header-only -i %s 2>&1", perf, zfile);
		out = run(cmd);
		expect(out, "compressed : Zstd, level = 3");
		free(out);
		snprintf(cmd, sizeof(cmd), "cat %s | %s script -D -i - 2>&1", zpipe, perf);
		out = run(cmd);
		expect(out, "PERF_RECORD_COMM exec: ptgenprog:4242/4243");
		expect(out, "PERF_RECORD_EXIT(4242:4243):(1:1)");
		free(out);

		snprintf(cmd, sizeof(cmd), "%s report --header-only -i - < %s 2>&1", perf, pipe);
		out = run(cmd);
		expect(out, "arch : x86_64");
		free(out);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_result();
}
