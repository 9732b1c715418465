/* spe-profile statistics: a generated recording whose branches have known
 * misprediction and not-taken probabilities (seeded pseudo-random records,
 * deterministic) must give profile rows whose 95% confidence intervals
 * cover the true misprediction rate for a statistically sane fraction of
 * the branches, with counts, taken rates and execution estimates that
 * follow from what was put in.  Wrong-path (not retired) samples must not
 * count.  Also checks ptc_spe_describe_info() on the same metadata.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/check.h"
#include "cli/cli.h"
#include "common/bytes.h"
#include "decoders/arm_spe/spe_info.h"
#include "input/perf_reader.h"
#include "input/perf_writer.h"
#include "writers/spe/spe_writers.h"
#include "spe_build.h"

void ptc_cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("ptconv: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define NR_BRANCHES 200
#define PERIOD 1024
#define PMU_TYPE 10

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_u64(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static double uniform(void)
{
	return (double)(next_u64() >> 11) / 9007199254740992.0;
}

struct truth {
	uint64_t pc, target;
	uint8_t op;
	double p_mispred, p_not_taken;
	unsigned int n;			/* retired samples */
	unsigned int wrong_path;	/* non-retired samples */
	unsigned int mispred, not_taken;	/* realised counts */
};

static struct truth br[NR_BRANCHES];

/* A small CSV row reader: fills cols[] and returns their number. */
static int split(char *line, char **cols, int max)
{
	int n = 0;

	while (n < max) {
		char *c = strchr(line, ',');
		cols[n++] = line;
		if (!c)
			break;
		*c = 0;
		line = c + 1;
	}
	return n;
}

int main(void)
{
	char dir[] = "/tmp/ptc-spe-prof-XXXXXX", file[256], out[256], path[300];
	static struct spe_buf q;
	struct ptc_perf_writer *w;
	struct ptc_perf_reader *r;
	struct ptc_convert_options o;
	struct perf_event_attr a;
	uint64_t ids[1] = { 7 };
	uint8_t body[256];
	uint64_t priv[4 + 7] = { 2, 4, PMU_TYPE, 1, 0x1010101010101010ULL, 0, 4, 0x413fd0c1, PMU_TYPE, 1024, 0x2ff };
	uint64_t offset = 0, ts = 100;
	char err[256], line[4096], *cols[32], *names[32];
	int fd, ncols = 0, rows = 0, covered = 0, inside = 0, i, ret;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	for (i = 0; i < NR_BRANCHES; i++) {
		static const uint8_t ops[] = { 0x01, 0x01, 0x01, 0x02, 0x0a, 0x12, 0x00, 0x08 };
		br[i].pc = 0x400000 + 0x40 * (uint64_t)i;
		br[i].target = 0x500000 + 0x10 * (uint64_t)i;
		br[i].op = ops[i % 8];
		/* rates from 0.2% to 50%, log-spread */
		br[i].p_mispred = 0.002 * (1.0 + 249.0 * uniform() * uniform());
		br[i].p_not_taken = (br[i].op & 1) ? uniform() : 0;
		br[i].n = 30 + (unsigned int)(570 * uniform());
		br[i].wrong_path = (unsigned int)(br[i].n / 10);
	}

	fd = open((snprintf(file, sizeof(file), "%s/gen.data", dir), file), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && ptc_perf_writer_new(&w, fd, PTC_PERF_WRITE_FILE) == 0, "writer");
	memset(&a, 0, sizeof(a));
	a.type = PMU_TYPE;
	a.size = sizeof(a);
	a.config = 1ULL | (1ULL << 32);	/* timestamps, branch filter */
	a.sample_period = PERIOD;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	a.sample_id_all = 1;
	ptc_perf_writer_add_attr(w, &a, "arm_spe_0/branch_filter=1/", ids, 1);
	memset(body, 0, sizeof(body));
	ptc_put32(body, 4);
	memcpy(body + 8, priv, sizeof(priv));
	CHECK(ptc_perf_writer_event(w, PTC_REC_AUXTRACE_INFO, 0, body, 8 + sizeof(priv), NULL) == 0, "info");

	/* Interleave the branches' samples pseudo-randomly, as a run would. */
	{
		unsigned int left = 0, k;
		unsigned int rem[NR_BRANCHES], wrem[NR_BRANCHES];

		for (i = 0; i < NR_BRANCHES; i++) {
			rem[i] = br[i].n;
			wrem[i] = br[i].wrong_path;
			left += rem[i] + wrem[i];
		}
		while (left) {
			int b = (int)(next_u64() % NR_BRANCHES);
			uint64_t ev;
			int retired;

			if (!rem[b] && !wrem[b])
				continue;
			retired = rem[b] && (!wrem[b] || next_u64() % 10);
			if (retired) {
				rem[b]--;
				ev = 1u << 1;
				if (uniform() < br[b].p_mispred) {
					ev |= 1u << 7;
					br[b].mispred++;
				}
				if ((br[b].op & 1) && uniform() < br[b].p_not_taken) {
					ev |= 1u << 6;
					br[b].not_taken++;
				}
			} else {
				/* wrong path: always "mispredicted", never retired */
				wrem[b]--;
				ev = 1u << 7;
			}
			left--;
			sb_branch(&q, br[b].pc, br[b].op, ev, 3, 9, br[b].target, 0, 4242, 1, ts++);
			if (q.n > sizeof(q.b) - 128) {
				CHECK(ptc_perf_writer_auxtrace(w, offset, 0, 0, 4242, 0, q.b, q.n) == 0, "aux");
				offset += q.n;
				q.n = 0;
			}
		}
		if (q.n)
			CHECK(ptc_perf_writer_auxtrace(w, offset, 0, 0, 4242, 0, q.b, q.n) == 0, "aux");
		(void)k;
	}
	CHECK(ptc_perf_writer_finish(w) == 0, "finish");
	ptc_perf_writer_free(w);
	close(fd);

	memset(&o, 0, sizeof(o));
	snprintf(out, sizeof(out), "%s/out", dir);
	o.input = file;
	o.outdir = out;
	o.formats = "spe-profile";
	o.pid = o.tid = -1;
	o.time_end = UINT64_MAX;
	o.quiet = 1;
	CHECK(ptc_perf_open(&r, file, err, sizeof(err)) == 0, "open: %s", err);
	ret = ptc_convert_arm_spe(&o, r);
	ptc_perf_close(r);
	CHECK(ret == PTC_EXIT_OK, "convert %d", ret);

	snprintf(path, sizeof(path), "%s/spe-profile.csv", out);
	f = fopen(path, "r");
	CHECK(f != NULL, "open %s", path);
	{
		double prev_lo = 2;
		while (f && fgets(line, sizeof(line), f)) {
			char *nl = strchr(line, '\n');
			uint64_t pc, samples, retired, taken, mispred, est;
			double rate, lo, hi, trate;
			int n, j, b = -1;

			if (nl)
				*nl = 0;
			if (line[0] == '#')
				continue;
			if (!ncols) {
				static char hdr[4096];
				strcpy(hdr, line);
				ncols = split(hdr, names, 32);
				continue;
			}
			n = split(line, cols, 32);
			CHECK(n == ncols, "row with %d columns", n);
#define C(name) ({ const char *v_ = ""; for (j = 0; j < ncols; j++) if (!strcmp(names[j], name)) v_ = cols[j]; v_; })
			pc = strtoull(C("pc"), NULL, 16);
			samples = strtoull(C("samples"), NULL, 10);
			retired = strtoull(C("retired"), NULL, 10);
			taken = strtoull(C("taken"), NULL, 10);
			mispred = strtoull(C("mispredicted"), NULL, 10);
			est = strtoull(C("est_executions"), NULL, 10);
			rate = atof(C("mispred_rate"));
			lo = atof(C("mispred_ci_low"));
			hi = atof(C("mispred_ci_high"));
			trate = atof(C("taken_rate"));
			for (j = 0; j < NR_BRANCHES; j++)
				if (br[j].pc == pc)
					b = j;
			CHECK(b >= 0, "unknown pc 0x%" PRIx64, pc);
			if (b < 0)
				continue;
			rows++;
			/* exact counts: what was put in */
			CHECK_EQ_U64(samples, br[b].n + br[b].wrong_path);
			CHECK_EQ_U64(retired, br[b].n);
			CHECK_EQ_U64(mispred, br[b].mispred);
			CHECK_EQ_U64(taken, br[b].n - br[b].not_taken);
			CHECK_EQ_U64(est, (uint64_t)br[b].n * PERIOD);
			/* the interval holds the point estimate */
			inside += lo <= rate + 1e-9 && rate <= hi + 1e-9;
			/* and, about 95% of the time, the true rate */
			covered += lo <= br[b].p_mispred && br[b].p_mispred <= hi;
			/* the taken rate is near the truth (within 5 standard errors) */
			{
				double p = 1 - br[b].p_not_taken, se = p * (1 - p) / br[b].n;
				double d = trate - p;
				CHECK(d * d <= 25 * se + 1e-12, "pc 0x%" PRIx64 ": taken rate %f, true %f",
				      pc, trate, p);
			}
			/* hardest to predict first */
			CHECK(lo <= prev_lo + 1e-9, "row order: lower bound %f after %f", lo, prev_lo);
			prev_lo = lo;
#undef C
		}
	}
	if (f)
		fclose(f);
	CHECK(rows == NR_BRANCHES, "%d rows", rows);
	CHECK(inside == rows, "%d of %d intervals hold their estimate", inside, rows);
	/* Binomial(200, 0.95): mean 190, sd 3.1; 180..200 holds with >99.9% */
	CHECK(covered >= 180, "true rate inside the 95%% interval for only %d of %d branches",
	      covered, rows);
	fprintf(stderr, "true rate covered by %d of %d 95%% intervals\n", covered, rows);

	/* The Wilson interval against reference values of the textbook
	 * formula, computed outside ptconv (Python, double precision):
	 * 10 of 100 -> [0.0552291, 0.1743657]; 0 of 20 -> [0, 0.1611252] */
	{
		double lo, hi;
		ptc_wilson_interval(10, 100, &lo, &hi);
		CHECK(lo > 0.05522 && lo < 0.05524 && hi > 0.17436 && hi < 0.17438,
		      "wilson(10,100) = [%f, %f]", lo, hi);
		ptc_wilson_interval(0, 20, &lo, &hi);
		CHECK(lo == 0 && hi > 0.16112 && hi < 0.16113, "wilson(0,20) = [%f, %f]", lo, hi);
	}

	/* ptconv info's view of the same metadata */
	{
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);
		const struct perf_event_attr *attrs[1] = { &a };

		CHECK(ptc_spe_describe_info(m, priv, sizeof(priv) / 8, attrs, 1) == 0, "describe");
		fclose(m);
		CHECK(strstr(text, "metadata version: 2") != NULL, "version: %s", text);
		CHECK(strstr(text, "cpu 0: MIDR 0x413fd0c1 (Neoverse N1), PMU type 10, minimum interval 1024, event filter caps 0x2ff") != NULL, "cpu: %s", text);
		CHECK(strstr(text, "sampling interval: 1 in 1024 operations") != NULL, "period: %s", text);
		CHECK(strstr(text, "operation filter: branches") != NULL, "filter: %s", text);
		CHECK(strstr(text, "timestamps: yes") != NULL, "ts: %s", text);
		CHECK(strstr(text, "physical addresses: no") != NULL, "pa: %s", text);
		CHECK(strstr(text, "not a control-flow trace") != NULL, "sampled: %s", text);
		free(text);
	}
	/* malformed metadata is refused with the word that is wrong */
	{
		struct ptc_spe_info info;
		uint64_t bad[4 + 6] = { 2, 4, PMU_TYPE, 1, 0x1111, 0, 3, 1, 2, 3 };
		uint64_t many[4 + 3] = { 2, 4, PMU_TYPE, 1000000000, 0x1010101010101010ULL, 0, 0 };
		uint64_t runs[4 + 3] = { 2, 4, PMU_TYPE, 1, 0x1010101010101010ULL, 0, 99 };
		uint64_t v1[2] = { 8, 0 };

		CHECK(ptc_spe_info_parse(&info, bad, 10, err, sizeof(err)) < 0 && strstr(err, "priv[4]"),
		      "bad magic: %s", err);
		CHECK(ptc_spe_info_parse(&info, many, 7, err, sizeof(err)) < 0 && strstr(err, "priv[3]"),
		      "too many cpus: %s", err);
		CHECK(ptc_spe_info_parse(&info, runs, 7, err, sizeof(err)) < 0 && strstr(err, "priv[6]"),
		      "params past the end: %s", err);
		CHECK(ptc_spe_info_parse(&info, v1, 2, err, sizeof(err)) == 0 && info.version == 1 &&
		      info.pmu_type == 8 && info.per_cpu_mmaps == 0, "v1");
		ptc_spe_info_free(&info);
	}

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_result();
}
