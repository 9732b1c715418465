/* The writer registry: names, lists, fan-out, file naming, errors. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "ptconv/trace.h"
#include "writers/writers.h"
#include "../lib/check.h"
#include "loop_code.h"

static int exists(const char *dir, const char *name)
{
	char p[1100];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0;
}

int main(void)
{
	char dir[512], bad[16], path[600];
	struct ptc_code_reader code = { code_read, NULL };
	struct ptc_writer_config cfg = { 0 };
	struct ptc_thread_info cpu3 = { 0, 0, "x", 3 };
	struct ptc_gap start = { PTC_GAP_START, 0, 0, 1, 0, 0x1000, 0, 0, NULL };
	struct ptc_branch b[2] = {
		{ 0x1006, 0x1000, 5, 3, PTC_BR_COND, 1, 2, 0 },
		{ 0x1006, 0x1000, 9, 3, PTC_BR_COND, 0, 2, 0 },
	};
	struct ptc_writer *w;
	struct ptc_sink s;
	struct ptc_trace *t;
	struct ptc_trace_info info;
	int err;

	CHECK(ptc_writer_find("ptconv") != NULL, "ptconv registered");
	CHECK(ptc_writer_find("champsim")->per_instruction, "champsim lists instructions");
	CHECK(ptc_writer_find("nope") == NULL, "unknown name");
	CHECK(ptc_writer_check_list("ptconv,bt9,cbp2025", bad, sizeof(bad)) == 0, "good list");
	CHECK(ptc_writer_check_list("ptconv,champsimx", bad, sizeof(bad)) == -ptc_err_not_found &&
	      !strcmp(bad, "champsimx"), "bad list names the culprit: %s", bad);
	CHECK(ptc_writer_new(&w, "bt9,nope", &cfg) == -ptc_err_not_found, "unknown format refused");

	snprintf(dir, sizeof(dir), "%s/ptc-writers-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		SKIP("no temporary directory");
	cfg.outdir = dir;
	cfg.code = &code;
	cfg.bbv_interval = 4;
	/* Per-CPU stream, every format, duplicates ignored, bbv added by --bbv. */
	err = ptc_writer_new(&w, "ptconv,xtrace,ptconv,champsim,cbp2025,bt9", &cfg);
	CHECK(err == 0, "new: %d", err);
	if (!err) {
		s = ptc_writer_sink(w);
		CHECK(s.begin(s.ctx, &cpu3) == 0, "begin: %s", ptc_writer_errmsg(w));
		CHECK(s.gap(s.ctx, &start) == 0, "gap: %s", ptc_writer_errmsg(w));
		CHECK(s.branches(s.ctx, b, 2) == 0, "branches: %s", ptc_writer_errmsg(w));
		CHECK(s.end(s.ctx) == 0, "end: %s", ptc_writer_errmsg(w));
		CHECK(!strcmp(ptc_writer_warnings(w), ""), "warnings: %s", ptc_writer_warnings(w));
		ptc_writer_free(w);
	}
	CHECK(exists(dir, "trace.cpu3.ptc") && exists(dir, "trace.cpu3.bt9.gz") &&
	      exists(dir, "trace.cpu3.champsim.xz") && exists(dir, "trace.cpu3.cbp2025.gz") &&
	      exists(dir, "trace.cpu3.bb") && exists(dir, "xtrace.1.3.hint13.xinsndata.bin") &&
	      exists(dir, "xtrace.1.3.hint13.xsnapshot.bin"), "per-CPU file names");
	snprintf(path, sizeof(path), "%s/trace.cpu3.ptc", dir);
	t = ptc_trace_open(path, &err);
	CHECK(t != NULL, "open: %d", err);
	if (t) {
		ptc_trace_info(t, &info);
		CHECK_EQ_U64(info.cpu, 3);
		CHECK_EQ_U64(info.records, 3);
		CHECK_EQ_U64(info.instructions, 6);
		ptc_trace_close(t);
	}
	/* A per-instruction format without code bytes is an error at begin. */
	cfg.code = NULL;
	cfg.bbv_interval = 0;
	if (ptc_writer_new(&w, "champsim", &cfg) == 0) {
		s = ptc_writer_sink(w);
		CHECK(s.begin(s.ctx, &cpu3) == -ptc_err_invalid, "champsim without code");
		CHECK(strstr(ptc_writer_errmsg(w), "code") != NULL, "message: %s", ptc_writer_errmsg(w));
		ptc_writer_free(w);
	}
	{
		const char *names[] = { "trace.cpu3.ptc", "trace.cpu3.bt9.gz", "trace.cpu3.champsim.xz",
					"trace.cpu3.cbp2025.gz", "trace.cpu3.bb",
					"xtrace.1.3.hint13.xinsndata.bin", "xtrace.1.3.hint13.xsnapshot.bin" };
		size_t i;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			unlink(path);
		}
		rmdir(dir);
	}
	return check_result();
}
