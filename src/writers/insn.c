/* Decode the instructions of a branch block with Zydis. */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "writers/insn.h"
#include "writers/wutil.h"

/* Decoded instructions cached by address: the per-instruction writers see
 * each hot instruction millions of times; 8192 entries (about 10 MB) hold
 * the hot code of an interpreter, where 2048 missed about a third.
 *
 * One cache per OS thread that decodes (the main thread, each -j worker),
 * shared by every walker that runs on it, not one per walker: a process
 * with hundreds of live threads would otherwise hold hundreds of caches
 * of the same code.  Sharing is exact: an entry is reused only while the
 * code bytes at its address are the same, whoever asks (the decoding
 * depends on the bytes alone), and an entry is valid only until the next
 * decoding on the same OS thread, which ptc_insn_decode already says.
 * Walkers never run on two OS threads at once, so no lock is needed. */
#define CACHE_SIZE 8192

/* Block templates: a block's non-branch records, reused while its code
 * bytes are the same.  4096 blocks hold the hot paths of an interpreter;
 * longer blocks are rare and cost little per instruction anyway.  At most
 * BLK_INSNS * max_rec + BLK_BYTES per entry (about 12 MB per walker for
 * ChampSim when every entry is full; typical blocks are 4-5 instructions). */
#define BLK_SLOTS 4096
#define BLK_INSNS 32
#define BLK_BYTES 256

struct ptc_blk {
	uint64_t start, bip;		/* first instruction, branch */
	uint32_t insns;			/* as in the branch event, branch included */
	uint32_t nbytes, tlen;		/* code bytes [start, bip), template bytes */
	uint8_t data[];			/* the code bytes, then the template */
};

static void compute_regs(const struct ptc_insn *in, struct ptc_insn_regs *r);

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static int cache_key_ok;
static __thread struct ptc_insn *thread_cache;

static void cache_key_init(void)
{
	/* The destructor frees a worker's cache when the worker exits. */
	cache_key_ok = pthread_key_create(&cache_key, free) == 0;
}

/* This OS thread's cache, made on first use; NULL when out of memory
 * (decode_bytes then decodes every time). */
static struct ptc_insn *shared_cache(void)
{
	if (thread_cache)
		return thread_cache;
	pthread_once(&cache_once, cache_key_init);
	if (!cache_key_ok)
		return NULL;
	thread_cache = calloc(CACHE_SIZE + 1, sizeof(*thread_cache));	/* [CACHE_SIZE]: scratch */
	if (thread_cache && pthread_setspecific(cache_key, thread_cache) != 0) {
		free(thread_cache);
		thread_cache = NULL;
	}
	return thread_cache;
}

void ptc_insn_cache_release(void)
{
	if (!thread_cache)
		return;
	pthread_setspecific(cache_key, NULL);
	free(thread_cache);
	thread_cache = NULL;
}

void ptc_walker_init(struct ptc_walker *w, const struct ptc_writer_config *cfg,
		     struct ptc_wctx *c)
{
	memset(w, 0, sizeof(*w));
	ZydisDecoderInit(&w->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	w->code = cfg->code;
	w->wctx = c;
}

void ptc_walker_fini(struct ptc_walker *w)
{
	ptc_walker_trim(w);
}

void ptc_walker_trim(struct ptc_walker *w)
{
	size_t i;

	for (i = 0; w->blk && i < BLK_SLOTS; i++)
		free(w->blk[i]);
	free(w->blk);
	free(w->tmpl);
	w->blk = NULL;
	w->tmpl = NULL;
}

/* Decode the instruction at ip from its n code bytes (at most 15). */
static const struct ptc_insn *decode_bytes(struct ptc_walker *w, uint64_t ip,
					   const uint8_t *bytes, size_t n)
{
	static __thread struct ptc_insn fallback;
	struct ptc_insn *cache = shared_cache(), *in;

	if (cache) {
		in = &cache[(ip ^ (ip >> 11)) & (CACHE_SIZE - 1)];
		/* Reuse only if the bytes there are still the same code. */
		if (in->decoded && in->ip == ip && n >= in->len && !memcmp(in->bytes, bytes, in->len))
			return in;
	} else {
		in = &fallback;
	}
	in->ip = ip;
	in->decoded = 0;
	in->len = 0;
	memcpy(in->bytes, bytes, n);
	if (n && ZYAN_SUCCESS(ZydisDecoderDecodeFull(&w->dec, in->bytes, n, &in->zi, in->ops))) {
		in->decoded = 1;
		in->len = in->zi.length;
	}
	compute_regs(in, &in->regs);
	return in;
}

const struct ptc_insn *ptc_insn_decode(struct ptc_walker *w, uint64_t ip)
{
	uint8_t bytes[ZYDIS_MAX_INSTRUCTION_LENGTH];
	size_t n = 0;

	if (w->code && w->code->read)
		n = w->code->read(w->code->ctx, ip, bytes, sizeof(bytes));
	return decode_bytes(w, ip, bytes, n);
}

void ptc_walk_gap(struct ptc_walker *w, const struct ptc_gap *g)
{
	w->next = g->resume_ip;
	w->next_known = g->resume_ip != 0;
}

/* The block's last instruction, the branch, and where the next starts;
 * code: the branch's n code bytes when already read, else NULL. */
static int walk_last(struct ptc_walker *w, const struct ptc_branch *b,
		     const uint8_t *code, size_t n, ptc_insn_fn fn, void *ctx)
{
	const struct ptc_insn *in;
	int err;

	in = code ? decode_bytes(w, b->ip, code, n) : ptc_insn_decode(w, b->ip);
	if (!in->decoded) {
		/* Still list the branch: its IP and length are in the event. */
		struct ptc_insn *cache = shared_cache();
		struct ptc_insn *s = cache ? &cache[CACHE_SIZE] : NULL;
		static __thread struct ptc_insn scratch;
		if (!s)
			s = &scratch;
		memset(&s->zi, 0, sizeof(s->zi));
		memset(&s->regs, 0, sizeof(s->regs));
		s->decoded = 0;
		s->len = b->length;
		s->ip = b->ip;
		memset(s->bytes, 0, sizeof(s->bytes));
		in = s;
	}
	err = fn(ctx, in, b);
	if (err < 0)
		return err;
	w->next = ptc_branch_dest(b);
	w->next_known = w->next != 0;
	return 0;
}

static size_t blk_slot(uint64_t start, uint64_t bip, uint32_t insns)
{
	return ptc_hash64(start ^ (bip << 17) ^ (bip >> 47) ^ ((uint64_t)insns << 40)) & (BLK_SLOTS - 1);
}

/* Decode the block's non-branch instructions into a template; 0 and no
 * template when the block is not a clean run of decodable instructions
 * ending at the branch (ptc_walk_branch then lists it, and warns). */
static struct ptc_blk *blk_build(struct ptc_walker *w, const struct ptc_branch *b,
				 const struct ptc_walk_tmpl *t, void *ctx,
				 const uint8_t *code, uint32_t nbytes)
{
	struct ptc_blk *e;
	uint64_t ip = w->next;
	size_t tlen = 0;
	uint32_t i;

	if (!w->tmpl && !(w->tmpl = malloc(BLK_INSNS * t->max_rec)))
		return NULL;
	for (i = 0; i + 1 < b->insns; i++) {
		const struct ptc_insn *in = ptc_insn_decode(w, ip);
		if (!in->decoded || ip + in->len > b->ip)
			return NULL;
		tlen += t->rec(ctx, in, w->tmpl + tlen);
		ip += in->len;
	}
	if (ip != b->ip)
		return NULL;
	e = malloc(sizeof(*e) + nbytes + tlen);
	if (!e)
		return NULL;
	e->start = w->next;
	e->bip = b->ip;
	e->insns = b->insns;
	e->nbytes = nbytes;
	e->tlen = (uint32_t)tlen;
	memcpy(e->data, code, nbytes);
	memcpy(e->data + nbytes, w->tmpl, tlen);
	return e;
}

int ptc_walk_branch_tmpl(struct ptc_walker *w, const struct ptc_branch *b,
			 const struct ptc_walk_tmpl *t, ptc_insn_fn fn, void *ctx)
{
	uint8_t code[BLK_BYTES + ZYDIS_MAX_INSTRUCTION_LENGTH];
	struct ptc_blk **slot, *e;
	uint64_t nbytes;
	size_t got;
	int err;

	if (!w->next_known || b->insns < 2 || b->insns > BLK_INSNS + 1 || b->ip <= w->next ||
	    (nbytes = b->ip - w->next) > BLK_BYTES || !w->code || !w->code->read)
		return ptc_walk_branch(w, b, fn, ctx);
	if (!w->blk && !(w->blk = calloc(BLK_SLOTS, sizeof(*w->blk))))
		return ptc_walk_branch(w, b, fn, ctx);
	/* The block's bytes and the branch's, in one read. */
	got = w->code->read(w->code->ctx, w->next, code, nbytes + ZYDIS_MAX_INSTRUCTION_LENGTH);
	if (got < nbytes)
		return ptc_walk_branch(w, b, fn, ctx);
	slot = &w->blk[blk_slot(w->next, b->ip, b->insns)];
	e = *slot;
	if (!e || e->start != w->next || e->bip != b->ip || e->insns != b->insns ||
	    memcmp(e->data, code, nbytes)) {
		e = blk_build(w, b, t, ctx, code, (uint32_t)nbytes);
		if (!e)
			return ptc_walk_branch(w, b, fn, ctx);
		free(*slot);
		*slot = e;
	}
	if ((err = t->emit(ctx, e->data + e->nbytes, e->tlen)) < 0)
		return err;
	return walk_last(w, b, code + nbytes, got - nbytes, fn, ctx);
}

uint64_t ptc_insn_skip(const struct ptc_code_reader *code, uint64_t ip, uint64_t n, uint64_t *end)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	uint8_t b[ZYDIS_MAX_INSTRUCTION_LENGTH];
	uint64_t i;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (i = 0; i < n && code && code->read; i++) {
		size_t got = code->read(code->ctx, ip, b, sizeof(b));
		if (!got || !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, b, got, &zi)))
			break;
		ip += zi.length;
	}
	*end = ip;
	return i;
}

/* The n instructions from w->next that are no branch events, through fn;
 * *ip: where they end.  Returns how many were listed (fewer when code
 * bytes are missing, counted and reported) or a negative error. */
static int64_t walk_plain(struct ptc_walker *w, uint64_t n, ptc_insn_fn fn, void *ctx, uint64_t *ip)
{
	const struct ptc_insn *in;
	uint64_t i;
	int err;

	*ip = w->next;
	for (i = 0; i < n; i++) {
		in = ptc_insn_decode(w, *ip);
		if (!in->decoded) {
			w->missing += n - i;
			ptc_wwarn(w->wctx, "no code bytes at 0x%" PRIx64 ": %" PRIu64 " instructions not listed",
				  *ip, n - i);
			break;
		}
		*ip += in->len;
		err = fn(ctx, in, NULL);
		if (err < 0)
			return err;
	}
	return (int64_t)i;
}

int ptc_walk_tail(struct ptc_walker *w, uint64_t n, ptc_insn_fn fn, void *ctx)
{
	uint64_t ip;
	int64_t got;

	if (!n)
		return 0;
	if (!w->next_known) {
		w->missing += n;
		ptc_wwarn(w->wctx, "%" PRIu64 " instructions after the last branch not listed:"
			  " their start is unknown", n);
		return 0;
	}
	if ((got = walk_plain(w, n, fn, ctx, &ip)) < 0)
		return (int)got;
	w->next = ip;
	return 0;
}

int ptc_walk_branch(struct ptc_walker *w, const struct ptc_branch *b,
		    ptc_insn_fn fn, void *ctx)
{
	uint64_t ip;
	int64_t i;

	if (b->insns > 1 && !w->next_known) {
		/* The block's start is unknown (first branch of a stream that
		 * did not begin with a gap): only the branch can be listed. */
		w->missing += b->insns - 1;
		ptc_wwarn(w->wctx, "%" PRIu32 " instructions before the branch at 0x%" PRIx64
			  " not listed: block start unknown", b->insns - 1, b->ip);
	} else {
		i = walk_plain(w, b->insns ? b->insns - 1u : 0, fn, ctx, &ip);
		if (i < 0)
			return (int)i;
		if (b->insns && i == b->insns - 1 && ip != b->ip) {
			w->mismatches++;
			ptc_wwarn(w->wctx, "block from 0x%" PRIx64 " ends at 0x%" PRIx64
				  ", not at its branch 0x%" PRIx64, w->next, ip, b->ip);
		}
	}
	return walk_last(w, b, NULL, 0, fn, ctx);
}

static void add_reg(ZydisRegister *set, int *n, ZydisRegister reg)
{
	int i;

	if (reg == ZYDIS_REGISTER_NONE)
		return;
	reg = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
	if (reg == ZYDIS_REGISTER_NONE || ZydisRegisterGetClass(reg) == ZYDIS_REGCLASS_IP)
		return;
	if (ZydisRegisterGetClass(reg) == ZYDIS_REGCLASS_FLAGS)
		reg = ZYDIS_REGISTER_RFLAGS;
	for (i = 0; i < *n; i++)
		if (set[i] == reg)
			return;
	if (*n < 16)
		set[(*n)++] = reg;
}

void ptc_insn_regs(const struct ptc_insn *in, struct ptc_insn_regs *r)
{
	*r = in->regs;
}

static void compute_regs(const struct ptc_insn *in, struct ptc_insn_regs *r)
{
	int i;

	memset(r, 0, sizeof(*r));
	if (!in->decoded)
		return;
	for (i = 0; i < in->zi.operand_count; i++) {
		const ZydisDecodedOperand *op = &in->ops[i];
		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
				add_reg(r->rd, &r->nrd, op->reg.value);
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
				add_reg(r->wr, &r->nwr, op->reg.value);
		} else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
			add_reg(r->rd, &r->nrd, op->mem.base);
			add_reg(r->rd, &r->nrd, op->mem.index);
			if (op->mem.type == ZYDIS_MEMOP_TYPE_AGEN ||
			    op->mem.type == ZYDIS_MEMOP_TYPE_MIB ||
			    in->zi.mnemonic == ZYDIS_MNEMONIC_NOP)
				continue;
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
				r->mem_read = 1;
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
				r->mem_write = 1;
			if (op->mem.index != ZYDIS_REGISTER_NONE)
				r->mem_index = 1;
			if (op->size / 8 > r->mem_size)
				r->mem_size = op->size / 8;
		}
	}
	if (in->zi.cpu_flags) {
		if (in->zi.cpu_flags->tested)
			add_reg(r->rd, &r->nrd, ZYDIS_REGISTER_RFLAGS);
		if (in->zi.cpu_flags->modified | in->zi.cpu_flags->set_0 | in->zi.cpu_flags->set_1 |
		    in->zi.cpu_flags->undefined)
			add_reg(r->wr, &r->nwr, ZYDIS_REGISTER_RFLAGS);
	}
}
