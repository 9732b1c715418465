/* Instruction classification for the ground-truth tracer.
 *
 * The tracer needs, for each instruction it single-steps, only its length,
 * whether it is a branch and of which kind (the numbers of enum
 * ptc_branch_kind), its direct target, and whether it is a REP-prefixed
 * string instruction (which traps once per iteration under single-step).
 */
#ifndef PTGEN_TRACE_INSN_H
#define PTGEN_TRACE_INSN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

#define PTG_NOT_BRANCH (-1)

struct ptg_insn {
	uint64_t ip;
	uint64_t target;	/* direct target; 0 when indirect or far */
	int kind;		/* enum ptc_branch_kind, or PTG_NOT_BRANCH */
	uint8_t len;
	uint8_t rep;		/* REP/REPE/REPNE string instruction */
	uint8_t cc;		/* condition: see ptg_cond_taken() */
	uint8_t nowalk;		/* not a branch, but may not fall through
				 * (RTM): always single-step it */
};

/* The mode of the code that ptg_insn_decode() and
 * ptg_insn_indirect_target() read from now on: 64 (the default) or 32
 * (a compatibility-mode task, whose registers are the low halves of
 * struct user_regs_struct's). */
void ptg_insn_set_mode(int bits);

/* Decodes the instruction at ip from the n bytes at buf.  Returns 0, or -1
 * when the bytes are not a valid instruction. */
int ptg_insn_decode(struct ptg_insn *insn, uint64_t ip, const uint8_t *buf,
		    size_t n);

/* Whether the conditional branch insn is taken, from the flags and rcx
 * before it executed.  Used when its target equals its fall-through, where
 * the next IP cannot tell. */
int ptg_cond_taken(const struct ptg_insn *insn, uint64_t rflags, uint64_t rcx);

/* Reads 8 bytes of the traced program's memory: 0, or -1. */
typedef int (*ptg_read64_fn)(void *ctx, uint64_t addr, uint64_t *value);

/* Where the return or indirect jump or call insn (decoded from the n bytes
 * at buf) is about to go, from the registers before it and the memory it
 * reads: 0 with *target, or -1 when that cannot be told (an operand this
 * does not evaluate, unreadable memory). */
int ptg_insn_indirect_target(const struct ptg_insn *insn, const uint8_t *buf,
			     size_t n, const struct user_regs_struct *regs,
			     ptg_read64_fn read64, void *ctx, uint64_t *target);

#endif
