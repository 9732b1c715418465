/* The function symbols a .ptc embeds (ptc_syms.h). */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "writers/ptc_syms.h"

int ptc_symw_init(struct ptc_symw *s)
{
	memset(s, 0, sizeof(*s));
	return ptc_map_init(&s->ident) < 0 ? -ptc_err_nomem : 0;
}

void ptc_symw_free(struct ptc_symw *s)
{
	size_t i;

	for (i = 0; i < s->nimages; i++)
		free(s->images[i]);
	free(s->images);
	free(s->v);
	free(s->cover);
	free(s->known);
	free(s->names);
	ptc_map_free(&s->ident);
	memset(s, 0, sizeof(*s));
}

static uint64_t str_hash(const char *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	while (n--)
		h = ptc_hash64(h ^ (unsigned char)*p++);
	return h;
}

/* The answer's identity: equal answers hash alike. */
static uint64_t ident_key(const struct ptc_symw_entry *e, const char *name, uint32_t probe)
{
	uint64_t h = ptc_hash64(e->lo) ^ ptc_hash64(e->hi + 1) ^ ptc_hash64(e->start + 2);

	h = ptc_hash64(h ^ e->vaddr ^ (uint64_t)e->image << 48);
	return ptc_hash64(h ^ str_hash(name, e->name_len) ^ probe) >> 1;
}

static int same(const struct ptc_symw *s, const struct ptc_symw_entry *a, const struct ptc_symw_entry *b,
		const char *bname)
{
	return a->lo == b->lo && a->hi == b->hi && a->start == b->start && a->vaddr == b->vaddr &&
	       a->image == b->image && a->name_len == b->name_len &&
	       (!a->name_len || !memcmp(s->names + a->name, bname, a->name_len));
}

/* image's number + 1, interned; 0 when out of memory */
static uint32_t image_of(struct ptc_symw *s, const char *image)
{
	size_t i;

	for (i = s->nimages; i-- > 0;)
		if (!strcmp(s->images[i], image))
			return (uint32_t)i + 1;
	if (s->nimages == s->capimages) {
		size_t cap = s->capimages ? s->capimages * 2 : 16;
		char **n = realloc(s->images, cap * sizeof(*n));
		if (!n)
			return 0;
		s->images = n;
		s->capimages = cap;
	}
	if (!(s->images[s->nimages] = strdup(image)))
		return 0;
	return (uint32_t)++s->nimages;
}

/* The first of n sorted, disjoint ranges that ends after addr (n: none):
 * the ranges below it are skipped in steps of halving powers of two. */
static size_t range_at(const struct ptc_symw_range *v, size_t n, uint64_t addr)
{
	size_t i = 0, step = 1;

	while (step <= n / 2)
		step *= 2;
	for (; step; step /= 2)
		if (i + step <= n && v[i + step - 1].hi <= addr)
			i += step;
	return i;
}

/* A free slot at index i of the sorted array *v of *n ranges (*cap room). */
static int range_open(struct ptc_symw_range **v, size_t *n, size_t *cap, size_t i)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		void *nv = realloc(*v, ncap * sizeof(**v));

		if (!nv)
			return -ptc_err_nomem;
		*v = nv;
		*cap = ncap;
	}
	memmove(&(*v)[i + 1], &(*v)[i], (*n - i) * sizeof(**v));
	(*n)++;
	return 0;
}

static int covered(const struct ptc_symw *s, uint64_t lo, uint64_t hi)
{
	size_t i = range_at(s->cover, s->ncover, lo);

	return i < s->ncover && s->cover[i].lo < hi;
}

/* [lo, hi) joins the cover, merged with the ranges it touches. */
static int cover_add(struct ptc_symw *s, uint64_t lo, uint64_t hi)
{
	/* the first range that ends at lo or later: it touches or follows */
	size_t i = range_at(s->cover, s->ncover, lo ? lo - 1 : 0), j = i;

	while (j < s->ncover && s->cover[j].lo <= hi) {
		if (s->cover[j].lo < lo)
			lo = s->cover[j].lo;
		if (s->cover[j].hi > hi)
			hi = s->cover[j].hi;
		j++;
	}
	if (i == j) {
		if (range_open(&s->cover, &s->ncover, &s->capcover, i) < 0)
			return -ptc_err_nomem;
		j = i + 1;
	}
	s->cover[i].lo = lo;
	s->cover[i].hi = hi;
	if (j > i + 1) {
		memmove(&s->cover[i + 1], &s->cover[j], (s->ncover - j) * sizeof(*s->cover));
		s->ncover -= j - i - 1;
	}
	return 0;
}

/* Answer e holds over its range in epoch ep (0: no epoch, nothing kept). */
static int remember(struct ptc_symw *s, const struct ptc_symw_entry *e, uint64_t ep)
{
	size_t i;

	if (!ep || ep != s->known_epoch)
		return 0;
	i = range_at(s->known, s->nknown, e->lo);
	if (i < s->nknown && s->known[i].lo < e->hi)
		return 0;	/* (overlaps one: not this epoch's partition, keep out) */
	if (range_open(&s->known, &s->nknown, &s->capknown, i) < 0)
		return -ptc_err_nomem;
	s->known[i].lo = e->lo;
	s->known[i].hi = e->hi;
	return 0;
}

int ptc_symw_note(struct ptc_symw *s, const struct ptc_symbol_reader *r, uint64_t addr, uint64_t rec)
{
	struct ptc_symbol a;
	struct ptc_symw_entry e;
	const char *name;
	uint32_t probe, id;
	uint64_t ep = 0;
	size_t i;

	if (!r || !r->lookup)
		return 0;
	if (r->epoch) {
		/* a range noted in this epoch: the answer noted */
		ep = r->epoch(r->ctx);
		if (ep != s->known_epoch) {
			s->nknown = 0;
			s->known_epoch = ep;
		}
		i = range_at(s->known, s->nknown, addr);
		if (i < s->nknown && s->known[i].lo <= addr)
			return 0;
	}
	memset(&a, 0, sizeof(a));
	r->lookup(r->ctx, addr, &a);
	/* (no image and no symbol: the reader answers nothing, as it does
	 * for every address the table does not hold) */
	if ((!a.start && !a.image) || a.lo > addr || a.hi <= addr)
		return 0;
	memset(&e, 0, sizeof(e));
	e.lo = a.lo;
	e.hi = a.hi;
	e.start = a.start;
	e.vaddr = a.image ? a.vaddr - (addr - a.lo) : 0;
	name = a.start && a.name ? a.name : "";
	e.name_len = (uint32_t)strlen(name);
	if (a.image && !(e.image = image_of(s, a.image)))
		return -ptc_err_nomem;
	for (probe = 0;; probe++) {
		id = ptc_map_get(&s->ident, ident_key(&e, name, probe));
		if (id == UINT32_MAX)
			break;
		if (same(s, &s->v[id], &e, name) && !s->v[id].shadowed)
			return remember(s, &e, ep);	/* the answer it has */
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct ptc_symw_entry *n = realloc(s->v, cap * sizeof(*n));
		if (!n)
			return -ptc_err_nomem;
		s->v = n;
		s->cap = cap;
	}
	if (s->names_len + e.name_len > s->names_cap) {
		size_t cap = s->names_cap ? s->names_cap : 4096;
		char *n;
		while (cap < s->names_len + e.name_len)
			cap *= 2;
		if (!(n = realloc(s->names, cap)))
			return -ptc_err_nomem;
		s->names = n;
		s->names_cap = cap;
	}
	/* over what it overlaps, from this record on */
	if (covered(s, e.lo, e.hi)) {
		s->nknown = 0;	/* some of them may be shadowed now */
		e.from = rec;
		for (i = 0; i < s->n; i++)
			if (s->v[i].lo < e.hi && e.lo < s->v[i].hi)
				s->v[i].shadowed = 1;
	}
	e.name = s->names_len;
	if (e.name_len)	/* (names is NULL until the first name) */
		memcpy(s->names + s->names_len, name, e.name_len);
	if (cover_add(s, e.lo, e.hi) < 0 || ptc_map_put(&s->ident, ident_key(&e, name, probe), (uint32_t)s->n) < 0)
		return -ptc_err_nomem;
	s->names_len += e.name_len;
	s->v[s->n++] = e;
	return remember(s, &e, ep);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct ptc_symw_entry *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

struct ptc_symw_entry *ptc_symw_sorted(const struct ptc_symw *s)
{
	struct ptc_symw_entry *v = malloc((s->n ? s->n : 1) * sizeof(*v));

	if (v && s->n) {	/* (s->v is NULL while empty) */
		memcpy(v, s->v, s->n * sizeof(*v));
		qsort(v, s->n, sizeof(*v), cmp_entry);
	}
	return v;
}
