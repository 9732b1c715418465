/* bolt: BOLT pre-aggregated branch profile ("B from to count mispred")
 * from SPE taken-branch samples.
 *
 * perf2bolt -pa reads lines "B <from> <to> <count> <mispred>" whose
 * addresses are hex offsets from the binary's base load address, which is
 * the ELF virtual address for executables and for PIEs linked at 0.  One
 * file describes one binary: the one with the most taken-branch samples.
 * Counts are sample counts (each stands for one in N operations): BOLT uses
 * them as relative weights.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "writers/spe/spe_writers.h"

struct edge {
	int32_t pid;
	uint8_t used;
	uint64_t from, to, count, mispred;
};

struct ptc_spe_bolt {
	struct edge *e;
	size_t nr, cap;
	uint64_t overflow;	/* samples of edges beyond PTC_SPE_MAX_BRANCHES */
};

uint64_t ptc_spe_bolt_overflow(const struct ptc_spe_bolt *b)
{
	return b->overflow;
}

int ptc_spe_bolt_new(struct ptc_spe_bolt **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ptc_err_nomem;
}

void ptc_spe_bolt_free(struct ptc_spe_bolt *b)
{
	if (!b)
		return;
	free(b->e);
	free(b);
}

static size_t slot(const struct edge *e, size_t cap, int32_t pid, uint64_t from, uint64_t to)
{
	uint64_t h = (from * 0x9e3779b97f4a7c15ULL) ^ (to * 0xc2b2ae3d27d4eb4fULL) ^ (uint32_t)pid;
	size_t i = (size_t)(h >> 17) & (cap - 1);

	while (e[i].used && (e[i].from != from || e[i].to != to || e[i].pid != pid))
		i = (i + 1) & (cap - 1);
	return i;
}

int ptc_spe_bolt_add(struct ptc_spe_bolt *b, const struct ptc_spe_sample *s)
{
	const struct ptc_spe_record *r = s->rec;
	struct edge *e;
	size_t i;

	/* Only retired, taken branches with both ends known are edges. */
	if (!ptc_spe_is_branch(r) || !ptc_spe_retired(r) || !ptc_spe_branch_taken(r) ||
	    (r->present & (PTC_SPE_F_PC | PTC_SPE_F_TARGET)) != (PTC_SPE_F_PC | PTC_SPE_F_TARGET))
		return 0;
	if ((b->nr + 1) * 2 > b->cap && b->nr < PTC_SPE_MAX_BRANCHES) {
		size_t cap = b->cap ? b->cap * 2 : 1024, k;
		struct edge *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ptc_err_nomem;
		for (k = 0; k < b->cap; k++)
			if (b->e[k].used)
				n[slot(n, cap, b->e[k].pid, b->e[k].from, b->e[k].to)] = b->e[k];
		free(b->e);
		b->e = n;
		b->cap = cap;
	}
	i = slot(b->e, b->cap, s->pid, r->pc.addr, r->target.addr);
	e = &b->e[i];
	if (!e->used && b->nr >= PTC_SPE_MAX_BRANCHES) {
		b->overflow++;
		return 0;
	}
	if (!e->used) {
		e->used = 1;
		e->pid = s->pid;
		e->from = r->pc.addr;
		e->to = r->target.addr;
		b->nr++;
	}
	e->count++;
	if (ptc_spe_mispredicted(r))
		e->mispred++;
	return 0;
}

struct out {
	uint64_t from, to, count, mispred;
};

static int cmp_out(const void *a, const void *b)
{
	const struct out *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

int ptc_spe_bolt_write(struct ptc_spe_bolt *b, FILE *f, struct ptc_spe_symbols *syms,
		       const char **dso, uint64_t *written, uint64_t *skipped)
{
	uint64_t *weight = NULL;
	size_t nw = 0, i, n = 0;
	int best = -1;
	struct out *o;

	*written = *skipped = 0;
	if (dso)
		*dso = NULL;
	/* Pick the binary with the most samples at branch sources. */
	for (i = 0; syms && i < b->cap; i++) {
		struct ptc_spe_location loc;

		if (!b->e[i].used || !ptc_spe_symbols_lookup(syms, b->e[i].pid, b->e[i].from, &loc))
			continue;
		if ((size_t)loc.dso_index >= nw) {
			size_t nn = (size_t)loc.dso_index + 16;
			uint64_t *w = realloc(weight, nn * sizeof(*w));
			if (!w) {
				free(weight);
				return -ptc_err_nomem;
			}
			memset(w + nw, 0, (nn - nw) * sizeof(*w));
			weight = w;
			nw = nn;
		}
		weight[loc.dso_index] += b->e[i].count;
	}
	for (i = 0; i < nw; i++)
		if (weight[i] && (best < 0 || weight[i] > weight[best]))
			best = (int)i;
	free(weight);

	o = calloc(b->nr ? b->nr : 1, sizeof(*o));
	if (!o)
		return -ptc_err_nomem;
	for (i = 0; i < b->cap; i++) {
		const struct edge *e = &b->e[i];
		struct ptc_spe_location lf, lt;
		uint64_t from = e->from, to = e->to;

		if (!e->used)
			continue;
		if (best >= 0) {
			/* Both ends in the chosen binary, as its own addresses. */
			if (!ptc_spe_symbols_lookup(syms, e->pid, e->from, &lf) ||
			    !ptc_spe_symbols_lookup(syms, e->pid, e->to, &lt) ||
			    lf.dso_index != best || lt.dso_index != best) {
				(*skipped)++;
				continue;
			}
			if (dso)
				*dso = lf.dso;
			if (lf.have_vaddr && lt.have_vaddr) {
				from = lf.vaddr;
				to = lt.vaddr;
			}
		}
		/* Several processes of one binary: merge their counts. */
		o[n].from = from;
		o[n].to = to;
		o[n].count = e->count;
		o[n].mispred = e->mispred;
		n++;
	}
	qsort(o, n, sizeof(*o), cmp_out);
	for (i = 0; i < n; i++) {
		uint64_t c = o[i].count, m = o[i].mispred;

		while (i + 1 < n && o[i + 1].from == o[i].from && o[i + 1].to == o[i].to) {
			i++;
			c += o[i].count;
			m += o[i].mispred;
		}
		fprintf(f, "B %" PRIx64 " %" PRIx64 " %" PRIu64 " %" PRIu64 "\n", o[i].from, o[i].to, c, m);
		(*written)++;
	}
	free(o);
	if (fflush(f) || ferror(f))
		return -ptc_err_io;
	return 0;
}
