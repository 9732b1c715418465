/* spe-profile: per static branch statistics from SPE branch samples. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "writers/spe/spe_writers.h"

/* Distinct indirect targets kept per branch; more are counted as "other". */
#define MAX_TARGETS 8

struct target {
	uint64_t addr, count;
};

struct entry {
	struct ptc_spe_branch_stats b;
	uint8_t used;
	uint8_t nr_targets;
	uint64_t other_targets;
	struct target t[MAX_TARGETS];
};

struct ptc_spe_profile {
	struct entry *e;
	size_t nr, cap;		/* open addressing, cap a power of two */
	uint64_t overflow;	/* samples of branches beyond PTC_SPE_MAX_BRANCHES */
};

uint64_t ptc_spe_profile_overflow(const struct ptc_spe_profile *p)
{
	return p->overflow;
}

/* Square root by Newton's method: the build links no libm (configure is
 * shared), and the interval needs only a few digits. */
static double root(double x)
{
	double r = x > 1 ? x : 1;
	int i;

	if (x <= 0)
		return 0;
	for (i = 0; i < 100; i++) {
		double n = 0.5 * (r + x / r);
		if (n == r)
			break;
		r = n;
	}
	return r;
}

/* z for a two-sided 95% interval */
#define Z95 1.959963984540054

void ptc_wilson_interval(uint64_t k, uint64_t n, double *lo, double *hi)
{
	double p, z2, den, c, h;

	if (!n) {
		*lo = 0;
		*hi = 1;
		return;
	}
	p = (double)k / (double)n;
	z2 = Z95 * Z95;
	den = 1 + z2 / (double)n;
	c = (p + z2 / (2.0 * (double)n)) / den;
	h = Z95 * root(p * (1 - p) / (double)n + z2 / (4.0 * (double)n * (double)n)) / den;
	*lo = c - h < 0 ? 0 : c - h;
	*hi = c + h > 1 ? 1 : c + h;
}

int ptc_spe_profile_new(struct ptc_spe_profile **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ptc_err_nomem;
}

void ptc_spe_profile_free(struct ptc_spe_profile *p)
{
	if (!p)
		return;
	free(p->e);
	free(p);
}

size_t ptc_spe_profile_branches(const struct ptc_spe_profile *p)
{
	return p->nr;
}

static size_t slot(const struct entry *e, size_t cap, int32_t pid, uint64_t pc)
{
	uint64_t h = (pc ^ ((uint64_t)(uint32_t)pid << 40)) * 0x9e3779b97f4a7c15ULL;
	size_t i = (size_t)(h >> 20) & (cap - 1);

	while (e[i].used && (e[i].b.pc != pc || e[i].b.pid != pid))
		i = (i + 1) & (cap - 1);
	return i;
}

const struct ptc_spe_branch_stats *ptc_spe_profile_get(const struct ptc_spe_profile *p,
						       int32_t pid, uint64_t pc)
{
	size_t i;

	if (!p->cap)
		return NULL;
	i = slot(p->e, p->cap, pid, pc);
	return p->e[i].used ? &p->e[i].b : NULL;
}

static int grow(struct ptc_spe_profile *p)
{
	size_t cap = p->cap ? p->cap * 2 : 1024, i;
	struct entry *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ptc_err_nomem;
	for (i = 0; i < p->cap; i++)
		if (p->e[i].used)
			n[slot(n, cap, p->e[i].b.pid, p->e[i].b.pc)] = p->e[i];
	free(p->e);
	p->e = n;
	p->cap = cap;
	return 0;
}

int ptc_spe_profile_add(struct ptc_spe_profile *p, const struct ptc_spe_sample *s)
{
	const struct ptc_spe_record *r = s->rec;
	struct entry *e;
	size_t i;

	if (!ptc_spe_is_branch(r) || !(r->present & PTC_SPE_F_PC))
		return 0;
	if ((p->nr + 1) * 2 > p->cap && p->nr < PTC_SPE_MAX_BRANCHES && grow(p))
		return -ptc_err_nomem;
	i = slot(p->e, p->cap, s->pid, r->pc.addr);
	e = &p->e[i];
	if (!e->used && p->nr >= PTC_SPE_MAX_BRANCHES) {
		p->overflow++;
		return 0;
	}
	if (!e->used) {
		e->used = 1;
		e->b.pid = s->pid;
		e->b.pc = r->pc.addr;
		e->b.op_payload = r->op_payload;
		p->nr++;
	} else if (e->b.op_payload != r->op_payload) {
		e->b.mixed_op = 1;
	}
	e->b.samples++;
	if (!ptc_spe_retired(r))
		return 0;	/* wrong-path samples say nothing about the correct path */
	e->b.retired++;
	if (ptc_spe_branch_taken(r))
		e->b.taken++;
	else
		e->b.not_taken++;
	if (ptc_spe_mispredicted(r))
		e->b.mispred++;
	if (r->present & PTC_SPE_F_LAT_TOTAL) {
		e->b.lat_n++;
		e->b.lat_total_sum += r->lat_total;
		if (r->lat_total > e->b.lat_total_max)
			e->b.lat_total_max = r->lat_total;
		e->b.lat_issue_sum += r->lat_issue;
	}
	if (r->op.indirect && (r->present & PTC_SPE_F_TARGET)) {
		unsigned int k;

		for (k = 0; k < e->nr_targets; k++)
			if (e->t[k].addr == r->target.addr)
				break;
		if (k < e->nr_targets)
			e->t[k].count++;
		else if (e->nr_targets < MAX_TARGETS) {
			e->t[e->nr_targets].addr = r->target.addr;
			e->t[e->nr_targets].count = 1;
			e->nr_targets++;
		} else {
			e->other_targets++;
		}
	}
	return 0;
}

struct row {
	const struct entry *e;
	double rate, lo, hi;
};

/* Hardest to predict first: highest lower bound of the misprediction
 * rate (a rate well supported by samples beats a noisy one), then most
 * mispredicted samples, then address. */
static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo > y->lo ? -1 : 1;
	if (x->e->b.mispred != y->e->b.mispred)
		return x->e->b.mispred > y->e->b.mispred ? -1 : 1;
	if (x->e->b.retired != y->e->b.retired)
		return x->e->b.retired > y->e->b.retired ? -1 : 1;
	if (x->e->b.pid != y->e->b.pid)
		return x->e->b.pid < y->e->b.pid ? -1 : 1;
	return x->e->b.pc < y->e->b.pc ? -1 : x->e->b.pc > y->e->b.pc;
}

static const char *kind_name(uint8_t v)
{
	struct ptc_spe_op o;

	ptc_spe_op_fields(PTC_SPE_OP_BRANCH, v, &o);
	if (o.cr == PTC_SPE_CR_CALL)
		return o.indirect ? "CALL_IND" : "CALL";
	if (o.cr == PTC_SPE_CR_RETURN)
		return "RET";
	if (o.cond)
		return o.indirect ? "COND_IND" : "COND";
	return o.indirect ? "JMP_IND" : "JMP";
}

static int cmp_target(const void *a, const void *b)
{
	const struct target *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int ptc_spe_profile_write(struct ptc_spe_profile *p, FILE *f, struct ptc_spe_symbols *syms,
			  uint64_t sample_period)
{
	struct row *rows;
	size_t i, n = 0;

	rows = calloc(p->nr ? p->nr : 1, sizeof(*rows));
	if (!rows)
		return -ptc_err_nomem;
	for (i = 0; i < p->cap; i++) {
		const struct entry *e = &p->e[i];

		if (!e->used)
			continue;
		rows[n].e = e;
		rows[n].rate = e->b.retired ? (double)e->b.mispred / (double)e->b.retired : 0;
		ptc_wilson_interval(e->b.mispred, e->b.retired, &rows[n].lo, &rows[n].hi);
		n++;
	}
	qsort(rows, n, sizeof(*rows), cmp_row);
	fprintf(f, "# ARM SPE per-branch profile from sampled operations (1 in %" PRIu64
		"); estimates, not a control-flow trace (see ptconv-spe(7))\n", sample_period);
	fputs("pid,pc,symbol,kind,op_payload,mixed_op,samples,retired,taken,not_taken,taken_rate,"
	      "mispredicted,mispred_rate,mispred_ci_low,mispred_ci_high,est_executions,"
	      "est_mispredictions,lat_total_mean,lat_total_max,lat_issue_mean,"
	      "indirect_targets,targets\n", f);
	for (i = 0; i < n; i++) {
		const struct entry *e = rows[i].e;
		const struct ptc_spe_branch_stats *b = &e->b;
		struct ptc_spe_location loc;
		char sym[512] = "";
		struct target t[MAX_TARGETS];
		unsigned int k;

		if (syms && ptc_spe_symbols_lookup(syms, b->pid, b->pc, &loc))
			ptc_spe_location_format(&loc, b->pc, sym, sizeof(sym));
		fprintf(f, "%d,0x%" PRIx64 ",", b->pid, b->pc);
		if (strpbrk(sym, ",\"\n\r")) {
			/* CSV quoting, as spe.csv does (C++ names hold commas) */
			const char *c;

			fputc('"', f);
			for (c = sym; *c; c++) {
				if (*c == '"')
					fputc('"', f);
				fputc(*c == '\n' || *c == '\r' ? ' ' : *c, f);
			}
			fputc('"', f);
		} else {
			fputs(sym, f);
		}
		fprintf(f, ",%s,0x%02x,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
			kind_name(b->op_payload), b->op_payload, b->mixed_op, b->samples, b->retired,
			b->taken, b->not_taken);
		if (b->retired)
			fprintf(f, "%.6f,", (double)b->taken / (double)b->retired);
		else
			fputc(',', f);
		fprintf(f, "%" PRIu64 ",", b->mispred);
		if (b->retired)
			fprintf(f, "%.6f,%.6f,%.6f,", rows[i].rate, rows[i].lo, rows[i].hi);
		else
			fputs(",,,", f);
		if (sample_period)
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",", b->retired * sample_period,
				b->mispred * sample_period);
		else
			fputs(",,", f);
		if (b->lat_n)
			fprintf(f, "%.2f,%" PRIu64 ",%.2f,", (double)b->lat_total_sum / (double)b->lat_n,
				b->lat_total_max, (double)b->lat_issue_sum / (double)b->lat_n);
		else
			fputs(",,,", f);
		fprintf(f, "%u%s,", e->nr_targets, e->other_targets ? "+" : "");
		memcpy(t, e->t, sizeof(t));
		qsort(t, e->nr_targets, sizeof(t[0]), cmp_target);
		for (k = 0; k < e->nr_targets; k++)
			fprintf(f, "%s0x%" PRIx64 ":%" PRIu64, k ? "|" : "", t[k].addr, t[k].count);
		if (e->other_targets)
			fprintf(f, "|other:%" PRIu64, e->other_targets);
		fputc('\n', f);
	}
	free(rows);
	if (fflush(f) || ferror(f))
		return -ptc_err_io;
	return 0;
}
