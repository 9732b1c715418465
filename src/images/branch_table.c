/* The branch table of an image: a linear sweep with Zydis over every code
 * region, recording each branch instruction and each instruction start.
 *
 * Instruction starts go into a bitmap (one bit per code byte) with a running
 * count per 64-bit word, so that the number of instructions between two
 * boundaries of the same straight-line run is two popcounts and a
 * subtraction, and the next branch after any address is a binary search.
 * This costs 1.5 bits per code byte besides the 32-byte branch records.
 *
 * Decoding is most of the work (libc: about 30 ms).  With more than one
 * thread, helpers decode pieces of the large regions ahead, each as a
 * sweep from its piece's start would, and the sweep takes their results
 * once it stands where theirs stood: a linear sweep's next place depends
 * on its place alone, so the table is the one a single thread builds.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "common/error.h"
#include "common/grow.h"
#include "common/trace_event.h"
#include "images/branch_kind.h"
#include "images/image_int.h"
#include "images/x86_newer.h"

/* A decoder of the code of mode bits (16, 32 or 64; image_int.h). */
static void init_decoder(ZydisDecoder *dec, unsigned bits)
{
	if (bits == 32)
		ZydisDecoderInit(dec, ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32);
	else if (bits == 16)
		ZydisDecoderInit(dec, ZYDIS_MACHINE_MODE_LEGACY_16, ZYDIS_STACK_WIDTH_16);
	else
		ZydisDecoderInit(dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	/* Mnemonic, length and the raw opcode/ModRM/immediate are all a
	 * branch table needs (a relative immediate, not ZYDIS_ATTRIB_IS_RELATIVE,
	 * tells jmp rel32 from jmp *disp32(%rip)); operands and semantic
	 * details are not, and skipping them makes the sweep much faster. */
	ZydisDecoderEnableMode(dec, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
}

int ptc_branch_kind(const ZydisDecodedInstruction *in)
{
	int dflt = in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT;

	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_JB: case ZYDIS_MNEMONIC_JBE:
	case ZYDIS_MNEMONIC_JCXZ: case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_JKNZD: case ZYDIS_MNEMONIC_JKZD:
	case ZYDIS_MNEMONIC_JL: case ZYDIS_MNEMONIC_JLE:
	case ZYDIS_MNEMONIC_JNB: case ZYDIS_MNEMONIC_JNBE:
	case ZYDIS_MNEMONIC_JNL: case ZYDIS_MNEMONIC_JNLE:
	case ZYDIS_MNEMONIC_JNO: case ZYDIS_MNEMONIC_JNP:
	case ZYDIS_MNEMONIC_JNS: case ZYDIS_MNEMONIC_JNZ:
	case ZYDIS_MNEMONIC_JO: case ZYDIS_MNEMONIC_JP:
	case ZYDIS_MNEMONIC_JS: case ZYDIS_MNEMONIC_JZ:
	case ZYDIS_MNEMONIC_LOOP: case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
		return PTC_BR_COND;
	case ZYDIS_MNEMONIC_JMP:
		if (in->raw.imm[0].is_relative)
			return PTC_BR_JMP;
		/* FF /5 (and EA outside 64-bit mode) is a far jump. */
		if (dflt && in->opcode == 0xff && in->raw.modrm.reg == 5)
			return PTC_BR_FAR;
		if (dflt && in->opcode == 0xea)
			return PTC_BR_FAR;
		return PTC_BR_JMP_IND;
	case ZYDIS_MNEMONIC_CALL:
		if (in->raw.imm[0].is_relative)
			return PTC_BR_CALL;
		if (dflt && in->opcode == 0xff && in->raw.modrm.reg == 3)
			return PTC_BR_FAR;
		if (dflt && in->opcode == 0x9a)
			return PTC_BR_FAR;
		return PTC_BR_CALL_IND;
	case ZYDIS_MNEMONIC_RET:
		if (dflt && (in->opcode == 0xca || in->opcode == 0xcb))
			return PTC_BR_FAR;
		return PTC_BR_RET;
	case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ: case ZYDIS_MNEMONIC_UIRET:
	case ZYDIS_MNEMONIC_SYSCALL: case ZYDIS_MNEMONIC_SYSENTER:
	case ZYDIS_MNEMONIC_SYSEXIT: case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3: case ZYDIS_MNEMONIC_INTO:
	case ZYDIS_MNEMONIC_UD0: case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
		return PTC_BR_FAR;
	default:
		return -1;
	}
}

/* Target t of a direct branch with an operand size below 64 bits: in
 * 32-bit code (flat: its code segment starts at 0) EIP wraps at 4 GiB, and
 * at 64 KiB with a 16-bit operand size (a 66 prefix).  In 16-bit code IP
 * wraps within a code segment whose base the trace's linear addresses do
 * not say: as libipt, no wrap. */
static __attribute__((noinline)) uint64_t wrap_target(const ZydisDecodedInstruction *in, uint64_t t)
{
	if (in->machine_mode == ZYDIS_MACHINE_MODE_LEGACY_16)
		return t;
	return t & (in->operand_width == 16 ? 0xffff : 0xffffffff);
}

static uint64_t direct_target(const ZydisDecodedInstruction *in, uint64_t ip)
{
	uint64_t t = ip + in->length + (uint64_t)in->raw.imm[0].value.s;

	/* In 64-bit code near branches have a 64-bit operand size (but in
	 * AMD's branch mode, not enabled): one test there. */
	if (in->operand_width != 64)
		t = wrap_target(in, t);
	return t;
}

/* What the sweep needs of one instruction. */
struct dinsn {
	uint64_t target;	/* direct target, 0 for other kinds */
	uint8_t length;		/* 0: no instruction decodes here */
	int8_t kind;		/* enum ptc_branch_kind, -1 not a branch */
};

/* Decode the instruction at p, with the bytes up to end (its region's). */
static void decode_at(const ZydisDecoder *dec, const struct ptc_span *s, uint64_t p, uint64_t end,
		      struct dinsn *d)
{
	ZydisDecodedInstruction in;
	struct ptc_x86_newer nw;
	uint64_t left = end - p;

	/* (rare bytes first: the mode costs nothing on the common path) */
	if (ptc_x86_newer_branch(s->bytes + (p - s->vaddr), left, &nw) &&
	    dec->machine_mode == ZYDIS_MACHINE_MODE_LONG_64) {
		d->length = nw.length;
		d->kind = nw.kind;
		d->target = 0;
		return;
	}
	if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(dec, NULL, s->bytes + (p - s->vaddr),
			left < ZYDIS_MAX_INSTRUCTION_LENGTH ? left : ZYDIS_MAX_INSTRUCTION_LENGTH,
			&in))) {
		d->length = 0;
		return;
	}
	d->length = in.length;
	d->kind = (int8_t)ptc_branch_kind(&in);
	d->target = (d->kind == PTC_BR_JMP || d->kind == PTC_BR_CALL || d->kind == PTC_BR_COND)
		? direct_target(&in, p) : 0;
}

/* The span that contains addr, or NULL. */
static const struct ptc_span *find_span(const struct ptc_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->nspans;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ptc_span *s = &img->spans[mid];

		if (addr < s->vaddr)
			hi = mid;
		else if (addr - s->vaddr >= s->size)
			lo = mid + 1;
		else
			return s;
	}
	return NULL;
}

/* The code region (executable section) that contains addr, or NULL. */
static const struct ptc_region *find_region(const struct ptc_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->nregions;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ptc_region *r = &img->regions[mid];

		if (addr < r->start)
			hi = mid;
		else if (addr >= r->end)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

static inline size_t bit_index(const struct ptc_span *s, uint64_t addr)
{
	return s->word0 * 64 + (size_t)(addr - s->vaddr);
}

static inline int is_boundary(const struct ptc_image *img, const struct ptc_span *s,
			      uint64_t addr)
{
	size_t b = bit_index(s, addr);

	return (img->bits[b / 64] >> (b % 64)) & 1;
}

/* Without -mpopcnt GCC calls a libgcc routine; this is as fast inline. */
static inline unsigned popcount64(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

/* Instruction starts before addr, counted over the whole bitmap.  addr may
 * be one past the span's last byte (the bitmap has a spare word). */
static inline uint64_t rank_of(const struct ptc_image *img, const struct ptc_span *s,
			       uint64_t addr)
{
	size_t b = bit_index(s, addr);
	uint64_t w = img->bits[b / 64];
	unsigned sh = b % 64;

	w = sh ? w << (64 - sh) : 0;
	return img->rank[b / 64] + popcount64(w);
}

/* The run containing addr (which must be an instruction boundary), or NULL. */
static const struct ptc_run *find_run(const struct ptc_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->nruns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->runs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= img->runs[lo - 1].end)
		return NULL;
	return &img->runs[lo - 1];
}

/* Index of the first branch with ip >= addr (nbr when none): the per-word
 * index gives the first branch of addr's 64-byte block, a few steps on
 * give the answer. */
static size_t lower_branch(const struct ptc_image *img, const struct ptc_span *s,
			   uint64_t addr)
{
	size_t j = img->first_br[bit_index(s, addr) / 64];

	while (j < img->nbr && img->br[j].ip < addr)
		j++;
	return j;
}

/* Next branch from a boundary of the linear sweep. */
static int next_from_boundary(const struct ptc_image *img, const struct ptc_span *s,
			      uint64_t addr, uint32_t *index, uint64_t *insns)
{
	const struct ptc_run *run = find_run(img, addr);
	size_t j;

	if (!run)
		return -ptc_err_internal;
	j = lower_branch(img, s, addr);
	if (j >= img->nbr || img->br[j].ip >= run->end)
		return -ptc_err_decode;	/* straight-line code ends without a branch */
	*index = (uint32_t)j;
	*insns = rank_of(img, s, img->br[j].ip) - rank_of(img, s, addr) + 1;
	return 0;
}

/* How far decoding from a non-boundary address may go before giving up:
 * real code re-synchronises within a few instructions, and the bound keeps
 * hostile input from making every lookup a long decode. */
#define PTC_ON_THE_FLY_MAX 256

/* The same for an address the sweep did not see as an instruction start
 * (overlapping instructions, a jump into the middle of one): decode from it
 * until the instruction stream re-joins a known boundary.  A branch met on
 * the way is not in the table, so that address cannot be served. */
static int next_on_the_fly(const struct ptc_image *img, const struct ptc_span *s,
			   const struct ptc_region *r, uint64_t addr,
			   uint32_t *index, uint64_t *insns)
{
	ZydisDecoder dec;
	uint64_t n = 0;

	init_decoder(&dec, img->mode);
	while (addr < r->end && n < PTC_ON_THE_FLY_MAX) {
		ZydisDecodedInstruction in;
		struct ptc_x86_newer nw;
		uint64_t left = r->end - addr;
		int err;

		if (is_boundary(img, s, addr)) {
			err = next_from_boundary(img, s, addr, index, insns);
			if (err < 0)
				return err;
			*insns += n;
			return 0;
		}
		if ((ptc_x86_newer_branch(s->bytes + (addr - s->vaddr), left, &nw) && img->mode == 64) ||
		    ZYAN_FAILED(ZydisDecoderDecodeInstruction(&dec, NULL,
				s->bytes + (addr - s->vaddr),
				left < ZYDIS_MAX_INSTRUCTION_LENGTH ? left : ZYDIS_MAX_INSTRUCTION_LENGTH,
				&in)))
			return -ptc_err_decode;
		if (ptc_branch_kind(&in) >= 0)
			return -ptc_err_decode;
		n++;
		addr += in.length;
	}
	return -ptc_err_decode;
}

int ptc_image_next_branch(const struct ptc_image *img, uint64_t addr,
			  uint32_t *index, uint32_t *insns)
{
	const struct ptc_span *s;
	const struct ptc_region *r;
	uint64_t n;
	int err;

	if (!img || !index || !insns)
		return -ptc_err_invalid;
	s = find_span(img, addr);
	if (!s)
		return -ptc_err_not_found;
	if (is_boundary(img, s, addr)) {
		err = next_from_boundary(img, s, addr, index, &n);
	} else {
		/* Bytes of an executable segment outside every code section
		 * (headers, padding between sections) are not code. */
		r = find_region(img, addr);
		if (!r)
			return -ptc_err_decode;
		err = next_on_the_fly(img, s, r, addr, index, &n);
	}
	if (err < 0)
		return err;
	if (n > UINT32_MAX)
		return -ptc_err_overflow;
	*insns = (uint32_t)n;
	return 0;
}

/* A piece of a large region that a helper decodes ahead: per byte from
 * start, what the sweep from start found there (0: it did not stand
 * there; else the length in the low nibble and the kind + 1 in the high
 * one; BAD: no instruction), and the direct targets in the order met. */
#define PIECE_MIN (64u << 10)
#define BAD 0xff

struct target_at {
	uint64_t ip, target;
};

struct piece {
	const struct ptc_span *s;
	unsigned mode;		/* the image's (init_decoder()) */
	uint64_t start, end, region_end;
	uint8_t *at;
	struct target_at *tgt;
	size_t ntgt, tcap, cursor;
	enum { P_WAITING, P_HELPER, P_DONE, P_SWEEP } state;	/* P_SWEEP: the sweep decodes it */
	int err;
};

struct helpers {
	struct piece *pieces;
	size_t npieces, next, cur;	/* next: the first not taken; cur: the sweep's */
	pthread_mutex_t mu;
	pthread_cond_t done;
	pthread_t *th;
	int nth;
};

static int grow(void **p, size_t *cap, size_t need, size_t elem);

static int piece_decode(struct piece *pc)
{
	ZydisDecoder dec;
	uint64_t p = pc->start;

	init_decoder(&dec, pc->mode);
	pc->at = calloc((size_t)(pc->end - pc->start), 1);
	if (!pc->at)
		return -ptc_err_nomem;
	while (p < pc->end) {
		struct dinsn d;

		decode_at(&dec, pc->s, p, pc->region_end, &d);
		if (!d.length) {
			pc->at[p - pc->start] = BAD;
			p++;
			continue;
		}
		pc->at[p - pc->start] = (uint8_t)(d.length | (d.kind + 1) << 4);
		if (d.target) {
			if (grow((void **)&pc->tgt, &pc->tcap, pc->ntgt + 1, sizeof(*pc->tgt)) < 0)
				return -ptc_err_nomem;
			pc->tgt[pc->ntgt].ip = p;
			pc->tgt[pc->ntgt++].target = d.target;
		}
		p += d.length;
	}
	return 0;
}

static void *helper_main(void *arg)
{
	struct helpers *h = arg;

	pthread_mutex_lock(&h->mu);
	while (h->next < h->npieces) {
		struct piece *pc = &h->pieces[h->next++];

		if (pc->state != P_WAITING)
			continue;
		pc->state = P_HELPER;
		pthread_mutex_unlock(&h->mu);
		pc->err = piece_decode(pc);
		pthread_mutex_lock(&h->mu);
		pc->state = P_DONE;
		pthread_cond_broadcast(&h->done);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* Cut the regions of at least two pieces' size into pieces (the first
 * piece of each stays the sweep's own) and start up to threads - 1
 * helpers on them.  Nothing is started when there is no such region or
 * no thread can be made: the sweep then decodes everything itself. */
static void start_helpers(struct helpers *h, const struct ptc_image *img, int threads)
{
	size_t r, n = 0;
	int i;

	memset(h, 0, sizeof(*h));
	if (threads < 2)
		return;
	for (r = 0; r < img->nregions; r++) {
		uint64_t size = img->regions[r].end - img->regions[r].start;
		uint64_t k = size / PIECE_MIN < (uint64_t)threads ? size / PIECE_MIN : (uint64_t)threads;
		if (k >= 2)
			n += (size_t)k - 1;
	}
	if (!n || !(h->pieces = calloc(n, sizeof(*h->pieces))))
		return;
	for (r = 0; r < img->nregions; r++) {
		const struct ptc_region *rg = &img->regions[r];
		const struct ptc_span *s = find_span(img, rg->start);
		uint64_t size = rg->end - rg->start, step, k, j;

		k = size / PIECE_MIN < (uint64_t)threads ? size / PIECE_MIN : (uint64_t)threads;
		if (k < 2 || !s)
			continue;
		step = size / k;
		for (j = 1; j < k; j++) {
			struct piece *pc = &h->pieces[h->npieces++];
			/* bitmap words are the sweep's alone; the cut is any place */
			pc->s = s;
			pc->mode = img->mode;
			pc->start = rg->start + j * step;
			pc->end = j + 1 < k ? rg->start + (j + 1) * step : rg->end;
			pc->region_end = rg->end;
		}
	}
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->done, NULL);
	h->th = calloc((size_t)threads - 1, sizeof(*h->th));
	for (i = 0; h->th && i < threads - 1 && (size_t)i < h->npieces; i++)
		if (pthread_create(&h->th[i], NULL, helper_main, h) == 0)
			h->nth++;
	if (!h->nth) {
		free(h->th);
		h->th = NULL;
	}
}

static void stop_helpers(struct helpers *h)
{
	size_t i;
	int t;

	if (!h->pieces)
		return;
	if (h->nth) {
		/* pieces not taken yet are not worth decoding any more */
		pthread_mutex_lock(&h->mu);
		for (i = 0; i < h->npieces; i++)
			if (h->pieces[i].state == P_WAITING)
				h->pieces[i].state = P_SWEEP;
		pthread_mutex_unlock(&h->mu);
		for (t = 0; t < h->nth; t++)
			pthread_join(h->th[t], NULL);
	}
	for (i = 0; i < h->npieces; i++) {
		free(h->pieces[i].at);
		free(h->pieces[i].tgt);
	}
	free(h->th);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->done);
	free(h->pieces);
	h->pieces = NULL;
}

/* The instruction at p of the sweep: from a helper when one stood there,
 * else decoded here. */
static void next_insn(struct helpers *h, const ZydisDecoder *dec, const struct ptc_span *s,
		      const struct ptc_region *r, uint64_t p, struct dinsn *d)
{
	while (h->nth && h->cur < h->npieces && p >= h->pieces[h->cur].end)
		h->cur++;
	if (h->nth && h->cur < h->npieces && p >= h->pieces[h->cur].start) {
		struct piece *pc = &h->pieces[h->cur];
		uint8_t v;

		if (pc->state != P_DONE && pc->state != P_SWEEP) {
			pthread_mutex_lock(&h->mu);
			if (pc->state == P_WAITING)
				pc->state = P_SWEEP;	/* no helper came to it: decode it here */
			while (pc->state == P_HELPER)
				pthread_cond_wait(&h->done, &h->mu);
			pthread_mutex_unlock(&h->mu);
		}
		if (pc->state == P_DONE && !pc->err && (v = pc->at[p - pc->start]) != 0) {
			if (v == BAD) {
				d->length = 0;
				return;
			}
			d->length = v & 15;
			d->kind = (int8_t)((v >> 4) - 1);
			d->target = 0;
			if (d->kind == PTC_BR_JMP || d->kind == PTC_BR_CALL || d->kind == PTC_BR_COND) {
				while (pc->cursor < pc->ntgt && pc->tgt[pc->cursor].ip < p)
					pc->cursor++;
				if (pc->cursor < pc->ntgt && pc->tgt[pc->cursor].ip == p) {
					d->target = pc->tgt[pc->cursor].target;
					return;
				}
				/* (a target of 0 is not kept: decode again) */
			} else {
				return;
			}
		}
	}
	decode_at(dec, s, p, r->end, d);
}

struct sweep {
	struct ptc_run *runs;
	size_t nruns, runs_cap;
	struct ptc_tbranch *br;
	size_t nbr, br_cap;
	uint64_t prev_end;	/* where the previous region's sweep stopped */
	size_t last;		/* 1 + the branch that straight-line code continues from, 0 none */
	uint64_t since;		/* instructions decoded since that branch */
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	return ptc_grow(p, cap, need, elem, 64);
}

static int add_run(struct sweep *sw, uint64_t start, uint64_t end)
{
	int err;

	if (start == end)
		return 0;
	/* Regions that touch continue one straight-line run. */
	if (sw->nruns && sw->runs[sw->nruns - 1].end == start) {
		sw->runs[sw->nruns - 1].end = end;
		return 0;
	}
	err = grow((void **)&sw->runs, &sw->runs_cap, sw->nruns + 1, sizeof(*sw->runs));
	if (err < 0)
		return err;
	sw->runs[sw->nruns].start = start;
	sw->runs[sw->nruns].end = end;
	sw->nruns++;
	return 0;
}

static int sweep_region(struct ptc_image *img, const ZydisDecoder *dec, struct helpers *h,
			const struct ptc_span *s, const struct ptc_region *r,
			struct sweep *sw)
{
	uint64_t p = r->start, run_start = r->start;
	uint64_t *bits = img->bits;
	size_t b0 = s->word0 * 64 - (size_t)s->vaddr;	/* bit index by address (mod 2^64) */
	int err;

	if (r->start != sw->prev_end)
		sw->last = 0;	/* a gap: nothing falls through into this region */
	while (p < r->end) {
		struct dinsn in;
		size_t b;

		next_insn(h, dec, s, r, p, &in);
		if (!in.length) {
			/* Resynchronise one byte further; the run ends here. */
			err = add_run(sw, run_start, p);
			if (err < 0)
				return err;
			if (!img->bad_bytes)
				img->first_bad = p;
			img->bad_bytes++;
			sw->last = 0;
			p++;
			run_start = p;
			continue;
		}
		b = b0 + (size_t)p;
		bits[b / 64] |= (uint64_t)1 << (b % 64);
		img->ninsns++;
		if (in.kind >= 0) {
			struct ptc_tbranch *t;

			if (sw->nbr == sw->br_cap) {
				err = grow((void **)&sw->br, &sw->br_cap, sw->nbr + 1, sizeof(*sw->br));
				if (err < 0)
					return err;
			}
			t = &sw->br[sw->nbr++];
			t->ip = p;
			t->target = in.target;
			t->target_next = PTC_NO_BRANCH;
			t->target_insns = 0;
			t->fall_insns = 0;
			t->kind = (uint8_t)in.kind;
			t->length = in.length;
			t->flags = 0;
			/* The previous branch falls through to this one. */
			if (sw->last)
				sw->br[sw->last - 1].fall_insns =
					sw->since < UINT32_MAX ? (uint32_t)sw->since + 1 : 0;
			sw->last = sw->nbr;
			sw->since = 0;
		} else {
			sw->since++;
		}
		p += in.length;
	}
	sw->prev_end = p;
	return add_run(sw, run_start, p);
}

static void *shrink(void *p, size_t n, size_t elem)
{
	void *q;

	if (!n) {
		free(p);
		return NULL;
	}
	q = realloc(p, n * elem);
	return q ? q : p;
}

int ptc_image_build_table(struct ptc_image *img, int threads, char *err, size_t errlen)
{
	ZydisDecoder dec;
	struct helpers h = { 0 };
	struct sweep sw = { 0 };
	size_t i, w, r, nwords = 0;
	uint64_t total = 0;
	int rc;

	for (i = 0; i < img->nspans; i++) {
		img->spans[i].word0 = nwords;
		nwords += (size_t)((img->spans[i].size + 63) / 64);
	}
	/* One spare word, so that the address one past a span's end can be
	 * ranked like any other. */
	img->nwords = nwords;
	img->bits = calloc(nwords + 1, sizeof(*img->bits));
	img->rank = calloc(nwords + 1, sizeof(*img->rank));
	img->first_br = calloc(nwords + 1, sizeof(*img->first_br));
	if (!img->bits || !img->rank || !img->first_br) {
		rc = -ptc_err_nomem;
		goto fail;
	}

	init_decoder(&dec, img->mode);
	start_helpers(&h, img, threads);
	sw.prev_end = img->nregions ? img->regions[0].start - 1 : 0;
	for (r = 0; r < img->nregions; r++) {
		const struct ptc_span *s = find_span(img, img->regions[r].start);

		if (!s) {
			rc = -ptc_err_internal;
			goto fail;
		}
		rc = sweep_region(img, &dec, &h, s, &img->regions[r], &sw);
		if (rc < 0)
			goto fail;
	}
	stop_helpers(&h);
	if (sw.nbr >= PTC_NO_BRANCH || img->ninsns > UINT32_MAX) {
		snprintf(err, errlen, "%s: too many instructions for a branch table", img->name);
		rc = -ptc_err_overflow;
		goto fail;
	}

	/* Shrink to fit: the tables live as long as the image.  A failed
	 * shrinking realloc leaves the larger block, which is still good. */
	img->runs = shrink(sw.runs, sw.nruns, sizeof(*sw.runs));
	img->nruns = sw.nruns;
	img->br = shrink(sw.br, sw.nbr, sizeof(*sw.br));
	img->nbr = sw.nbr;

	for (w = 0; w <= nwords; w++) {
		img->rank[w] = (uint32_t)total;
		total += popcount64(img->bits[w]);
	}
	for (i = 0, r = 0; i < img->nspans; i++) {
		const struct ptc_span *s = &img->spans[i];
		size_t nw = (size_t)((s->size + 63) / 64);

		for (w = 0; w < nw; w++) {
			uint64_t a = s->vaddr + 64 * (uint64_t)w;

			while (r < img->nbr && img->br[r].ip < a)
				r++;
			img->first_br[s->word0 + w] = (uint32_t)r;
		}
	}
	img->first_br[nwords] = (uint32_t)img->nbr;

	for (i = 0; i < img->nbr; i++) {
		struct ptc_tbranch *t = &img->br[i];
		uint32_t idx, n;

		if (!t->target)
			continue;
		if (t->target == t->ip + t->length)
			t->flags |= PTC_TBF_TARGET_IS_FALL;
		rc = ptc_image_next_branch(img, t->target, &idx, &n);
		if (rc == 0) {
			t->target_next = idx;
			t->target_insns = n;
		} else if (rc == -ptc_err_not_found) {
			t->flags |= PTC_TBF_TARGET_OUTSIDE;
		}
	}
	return 0;

fail:
	stop_helpers(&h);
	free(sw.runs);
	free(sw.br);
	if (rc == -ptc_err_nomem)
		snprintf(err, errlen, "%s: out of memory building the branch table", img->name);
	else if (rc == -ptc_err_internal)
		snprintf(err, errlen, "%s: internal error building the branch table", img->name);
	return rc;
}
