/* Function-level calls and returns of one thread (calls.h), shared by
 * the xray and perfetto writers. */
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <stdio.h>

#include "common/error.h"
#include "writers/calls.h"

void ptc_funcs_free(struct ptc_funcs *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->v[i].name);
		free(f->v[i].image);
	}
	free(f->v);
	memset(f, 0, sizeof(*f));
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

void ptc_func_name(const struct ptc_func *f, char *name, size_t size)
{
	if (f->name)
		snprintf(name, size, "%s", f->name);
	else if (f->image)
		snprintf(name, size, "%s+0x%" PRIx64, base_name(f->image), f->vaddr);
	else
		snprintf(name, size, "0x%" PRIx64, f->start);
}

/* The C++ runtime's demangler (the Itanium C++ ABI's __cxa_demangle):
 * a malloc'd string, or NULL when name is no mangled name. */
char *__cxa_demangle(const char *name, char *buf, size_t *len, int *status);

void ptc_func_demangled_name(const struct ptc_func *f, char *name, size_t size)
{
	char *d = NULL;
	int status = -1;

	/* (only names of the mangling's form: a C name such as "i" or "f"
	 * would otherwise be taken for a mangled type) */
	if (f->name && !strncmp(f->name, "_Z", 2))
		d = __cxa_demangle(f->name, NULL, NULL, &status);
	if (d && !status)
		snprintf(name, size, "%s", d);
	else
		ptc_func_name(f, name, size);
	free(d);
}

int ptc_calls_init(struct ptc_calls *k, struct ptc_funcs *fns, const struct ptc_symbol_reader *sym,
		   uint32_t max_fns, int untimed, const struct ptc_calls_sink *sink)
{
	memset(k, 0, sizeof(*k));
	if (ptc_map_init(&k->ids) < 0)
		return -ptc_err_nomem;
	k->fns = fns;
	k->sym = sym;
	k->sink = *sink;
	k->max_fns = max_fns;
	k->untimed = untimed;
	k->gen = 1;
	return 0;
}

void ptc_calls_fini(struct ptc_calls *k)
{
	free(k->st);
	k->st = NULL;
	ptc_map_free(&k->ids);
}

/* A branch's time: its perf time, or when it has none (no timing packet
 * yet) the last one's; in a recording without timing packets, the
 * instructions the thread executed so far (this branch included). */
static uint64_t when(struct ptc_calls *k, uint64_t time)
{
	if (!k->untimed && time > k->latest)
		k->latest = time;
	return ptc_calls_time(k, time);
}

static int enter(struct ptc_calls *k, uint32_t fn, size_t depth, uint64_t time)
{
	k->last = time;
	return k->sink.enter(k->sink.ctx, fn, depth, time);
}

static int leave(struct ptc_calls *k, uint32_t fn, size_t depth, uint64_t time, enum ptc_calls_how how)
{
	k->last = time;
	return k->sink.leave(k->sink.ctx, fn, depth, time, how);
}

/* What the symbols say of addr, through a small cache of ranges (a
 * mapping changes only in a system call: the cache is emptied at every
 * far branch and gap). */
static const struct ptc_symbol *sym_at(struct ptc_calls *k, uint64_t addr)
{
	struct ptc_symbol *s;
	unsigned i;

	for (i = 0; i < k->ncache; i++)
		if (addr >= k->cache[i].lo && addr < k->cache[i].hi)
			return &k->cache[i];
	s = &k->cache[k->next_cache];
	k->next_cache = (k->next_cache + 1) % 4;
	if (k->ncache < 4)
		k->ncache++;
	memset(s, 0, sizeof(*s));
	if (k->sym)
		k->sym->lookup(k->sym->ctx, addr, s);
	/* (the strings are not kept: func() copies those it needs) */
	s->name = s->start ? "" : NULL;
	s->image = NULL;
	if (s->lo > addr || s->hi <= addr) {
		s->lo = addr;
		s->hi = addr + 1;
	}
	return s;
}

static void forget_symbols(struct ptc_calls *k)
{
	k->ncache = 0;
	k->next_cache = 0;
	k->gen++;
}

static uint64_t func_key(uint64_t start, uint32_t probe)
{
	return ptc_hash64(start + probe) >> 1;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The thread's number of the function that addr belongs to, or (no
 * symbol) of the function that starts at addr; created on first use.
 * UINT32_MAX when out of memory or numbers. */
static uint32_t func(struct ptc_calls *k, uint64_t addr)
{
	struct ptc_funcs *fs = k->fns;
	struct ptc_symbol s;
	uint64_t start;
	uint32_t id, probe;
	size_t slot = (size_t)(ptc_hash64(addr) % 1024);

	if (k->targets[slot].addr == addr && k->targets[slot].gen == k->gen)
		return k->targets[slot].fn;
	memset(&s, 0, sizeof(s));
	if (k->sym)
		k->sym->lookup(k->sym->ctx, addr, &s);
	start = s.start ? s.start : addr;
	for (probe = 0;; probe++) {
		id = ptc_map_get(&k->ids, func_key(start, probe));
		if (id == UINT32_MAX)
			break;
		if (fs->v[id].start == start && !fs->v[id].name == !s.start &&
		    !fs->v[id].image == !s.image && (!s.image || !strcmp(fs->v[id].image, s.image)))
			goto found;
	}
	if (fs->n + 1 >= k->max_fns)
		return UINT32_MAX;
	if (fs->n == fs->cap) {
		size_t cap = fs->cap ? fs->cap * 2 : 256;
		struct ptc_func *n = realloc(fs->v, cap * sizeof(*n));
		if (!n)
			return UINT32_MAX;
		fs->v = n;
		fs->cap = cap;
	}
	id = (uint32_t)fs->n;
	memset(&fs->v[id], 0, sizeof(fs->v[id]));
	fs->v[id].start = start;
	fs->v[id].vaddr = s.image ? s.vaddr - (addr - start) : 0;
	fs->v[id].name = s.start ? dup_or_null(s.name ? s.name : "") : NULL;
	fs->v[id].image = dup_or_null(s.image);
	if ((s.start && !fs->v[id].name) || (s.image && !fs->v[id].image) ||
	    ptc_map_put(&k->ids, func_key(start, probe), id) < 0) {
		free(fs->v[id].name);
		free(fs->v[id].image);
		return UINT32_MAX;
	}
	fs->n++;
found:
	k->targets[slot].addr = addr;
	k->targets[slot].gen = k->gen;
	k->targets[slot].fn = id;
	return id;
}

static int push(struct ptc_calls *k, uint32_t fn, uint64_t ret, uint64_t time)
{
	if (k->depth == k->capst) {
		size_t cap = k->capst ? k->capst * 2 : 256;
		struct ptc_calls_frame *n = realloc(k->st, cap * sizeof(*n));
		if (!n)
			return -ptc_err_nomem;
		k->st = n;
		k->capst = cap;
	}
	k->st[k->depth].fn = fn;
	k->st[k->depth].ret = ret;
	k->depth++;
	return enter(k, fn, k->depth - 1, time);
}

/* Leave the frames above depth d, the innermost first. */
static int unwind(struct ptc_calls *k, size_t d, uint64_t time, enum ptc_calls_how how)
{
	int err;

	while (k->depth > d) {
		k->depth--;
		if ((err = leave(k, k->st[k->depth].fn, k->depth, time, how)) < 0)
			return err;
	}
	return 0;
}

/* A return to target: it leaves the frame it returns from (the innermost
 * one whose return address is target, or the innermost frame when its
 * return address is unknown) and the frames above it; one from before the
 * trace (or before a loss) leaves none. */
static int ret(struct ptc_calls *k, uint64_t target, uint64_t time)
{
	size_t i;

	if (k->depth && !k->st[k->depth - 1].ret)
		return unwind(k, k->depth - 1, time, PTC_CALLS_EXIT);
	for (i = k->depth; i-- > 0;)
		if (k->st[i].ret == target)
			return unwind(k, i, time, PTC_CALLS_EXIT);
	return 0;
}

/* A jump (or a far branch) to target: a tail call when target is the
 * entry of another function than the one jumped from; a jump into a
 * function that is on the stack below the innermost frame leaves the
 * frames above it (longjmp, an exception's landing pad). */
static int jump(struct ptc_calls *k, uint64_t from, uint64_t target, uint64_t time)
{
	const struct ptc_symbol *sf, *st;
	uint64_t from_start, to_start;
	uint32_t fn;
	size_t i;
	int err;

	sf = sym_at(k, from);
	if (target >= sf->lo && target < sf->hi)
		return 0;	/* within the function (or the same stretch without one) */
	from_start = sf->start;
	st = sym_at(k, target);
	to_start = st->start;
	if (!to_start || to_start == from_start)
		return 0;
	if (to_start == target) {
		if ((fn = func(k, target)) == UINT32_MAX)
			return -ptc_err_nomem;
		if (!k->depth)
			return push(k, fn, 0, time);
		if ((err = leave(k, k->st[k->depth - 1].fn, k->depth - 1, time, PTC_CALLS_TAIL)) < 0)
			return err;
		k->st[k->depth - 1].fn = fn;
		return enter(k, fn, k->depth - 1, time);
	}
	for (i = k->depth; i-- > 0;)
		if (k->fns->v[k->st[i].fn].start == to_start && k->fns->v[k->st[i].fn].name)
			return unwind(k, i + 1, time, PTC_CALLS_EXIT);
	return 0;
}

static int branch(struct ptc_calls *k, const struct ptc_branch *b)
{
	uint64_t t;
	uint32_t fn;

	k->insns += b->insns;
	t = when(k, b->time);

	switch (b->kind) {
	case PTC_BR_CALL:
	case PTC_BR_CALL_IND:
		if ((fn = func(k, b->target)) == UINT32_MAX)
			return -ptc_err_nomem;
		return push(k, fn, b->ip + b->length, t);
	case PTC_BR_RET:
		return ret(k, b->target, t);
	case PTC_BR_JMP:
	case PTC_BR_JMP_IND:
	case PTC_BR_COND:
		return b->taken && b->target ? jump(k, b->ip, b->target, t) : 0;
	case PTC_BR_FAR:
		/* a system call: mappings may change; user mode resumed at
		 * target (0: behind the instruction), at a signal handler's
		 * entry a frame begins that its return leaves */
		forget_symbols(k);
		if (b->target && b->target != b->ip + b->length) {
			const struct ptc_symbol *s = sym_at(k, b->target);
			if (s->start == b->target) {
				if ((fn = func(k, b->target)) == UINT32_MAX)
					return -ptc_err_nomem;
				return push(k, fn, 0, t);
			}
		}
		return 0;
	default:
		return 0;
	}
}

int ptc_calls_branches(struct ptc_calls *k, const struct ptc_branch *b, size_t n)
{
	size_t i;
	int err;

	for (i = 0; i < n; i++)
		if ((err = branch(k, &b[i])) < 0)
			return err;
	return 0;
}

int ptc_calls_gap(struct ptc_calls *k, uint64_t time)
{
	forget_symbols(k);
	return unwind(k, 0, when(k, time), PTC_CALLS_LOST);
}
