/* The instructions between branches, for per-instruction formats.
 *
 * A branch event says how many instructions ran since the previous branch's
 * destination; the walker decodes them from the code bytes with Zydis, so
 * that writers can list every instruction with its operands.
 */
#ifndef PTC_WRITERS_INSN_H
#define PTC_WRITERS_INSN_H

#include <Zydis/Zydis.h>

#include "common/trace_event.h"
#include "writers/fmt.h"

/* The registers an instruction reads and writes, as Zydis's largest
 * enclosing registers (eax -> rax), without duplicates; flags appear as
 * ZYDIS_REGISTER_RFLAGS, instruction-pointer uses are left out.  Memory
 * operands contribute their base and index to the reads; *mem_read and
 * *mem_write say whether it accesses memory (LEA and NOP do not). */
struct ptc_insn_regs {
	ZydisRegister rd[16], wr[16];
	int nrd, nwr;
	int mem_read, mem_write, mem_size, mem_index;
};

struct ptc_insn {
	uint64_t ip;
	uint8_t len;
	uint8_t bytes[ZYDIS_MAX_INSTRUCTION_LENGTH];
	int decoded;			/* 0 when the bytes were missing or invalid */
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct ptc_insn_regs regs;	/* computed once per decoding (ptc_insn_regs) */
};

/* Called for each instruction; br is NULL for non-branches and the branch
 * event for the block's last instruction. */
typedef int (*ptc_insn_fn)(void *ctx, const struct ptc_insn *in, const struct ptc_branch *br);

struct ptc_walker {
	ZydisDecoder dec;
	const struct ptc_code_reader *code;
	struct ptc_wctx *wctx;
	uint64_t next;			/* where the next block starts */
	int next_known;
	uint64_t missing;		/* instructions not listed (unknown start, no bytes) */
	uint64_t mismatches;		/* blocks whose decoded path missed the branch */
	struct ptc_blk **blk;		/* record templates by block (ptc_walk_branch_tmpl) */
	uint8_t *tmpl;			/* a block's records being built */
};

/* A walker over cfg->code; it uses the decoding cache of the OS thread
 * it runs on (one per decoding thread, shared by all the walkers of all
 * the threads' writers it runs: see insn.c). */
void ptc_walker_init(struct ptc_walker *w, const struct ptc_writer_config *cfg,
		     struct ptc_wctx *c);
void ptc_walker_fini(struct ptc_walker *w);
/* Free the walker's block templates (they are rebuilt when needed; the
 * output does not change): for writers that are idle a long time. */
void ptc_walker_trim(struct ptc_walker *w);

/* Free the calling OS thread's shared cache now (an exiting thread's goes
 * by itself); the next decoding on it makes a new one. */
void ptc_insn_cache_release(void);

/* Decode the block ending in branch b and call fn per instruction. */
int ptc_walk_branch(struct ptc_walker *w, const struct ptc_branch *b,
		    ptc_insn_fn fn, void *ctx);

/* Formats whose record of a non-branch instruction depends on that
 * instruction alone write a block's non-branch records as one template:
 * built once by rec() per instruction, then reused while the code bytes
 * of the block are unchanged, and handed to emit() in one piece. */
struct ptc_walk_tmpl {
	size_t max_rec;			/* the most bytes rec() writes */
	/* Write the record of non-branch instruction in into out; its length. */
	size_t (*rec)(void *ctx, const struct ptc_insn *in, uint8_t *out);
	int (*emit)(void *ctx, const void *p, size_t n);
};

/* As ptc_walk_branch, with the same output and warnings, where fn must
 * write for a non-branch instruction what t->rec() makes and pass it to
 * t->emit(); fn is called for the branch and for blocks that cannot be
 * cached (unknown start, missing bytes, longer than a template holds). */
int ptc_walk_branch_tmpl(struct ptc_walker *w, const struct ptc_branch *b,
			 const struct ptc_walk_tmpl *t, ptc_insn_fn fn, void *ctx);

/* Where the n instructions from ip end, decoded from code's bytes, into
 * *end; returns how many could be decoded (fewer than n when bytes are
 * missing or invalid, *end then after the last decoded one). */
uint64_t ptc_insn_skip(const struct ptc_code_reader *code, uint64_t ip, uint64_t n, uint64_t *end);
/* The n instructions after the last branch, where the trace ends inside a
 * block (a slice's tail): fn is called for each, br NULL. */
int ptc_walk_tail(struct ptc_walker *w, uint64_t n, ptc_insn_fn fn, void *ctx);
/* After a gap the next block starts at its resume IP. */
void ptc_walk_gap(struct ptc_walker *w, const struct ptc_gap *g);

/* Where execution continues after branch b (0 if unknown). */
static inline uint64_t ptc_branch_dest(const struct ptc_branch *b)
{
	if (b->kind == PTC_BR_FAR && !b->target)
		return b->ip + b->length;	/* syscall returns behind itself */
	return b->taken ? b->target : b->ip + b->length;
}

/* Decode the instruction at ip (->decoded says if it worked).  The result
 * is valid until the next call; decodings are cached by address and reused
 * while the code bytes there are unchanged. */
const struct ptc_insn *ptc_insn_decode(struct ptc_walker *w, uint64_t ip);

#endif

void ptc_insn_regs(const struct ptc_insn *in, struct ptc_insn_regs *r);
