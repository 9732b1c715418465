/* Unit test of ptgen-trace's instruction classification (trace/insn.c).
 *
 * Oracles: the x86 encodings (Intel SDM) for kinds, lengths and targets,
 * and the CPU itself for conditional branches: for every condition code
 * and every combination of the flags it reads, the test executes the real
 * jcc with those flags and compares its direction with ptg_cond_taken()
 * applied to the decoded instruction.
 */
#include <stdint.h>
#include <string.h>

#include "tests/lib/check.h"
#include "common/trace_event.h"
#include "insn.h"

/* The CPU's own answer: does jcc (condition code cc) jump with rflags? */
#define JCC_CASE(n, mnem)                                                    \
	case n:                                                              \
		__asm__ volatile("push %1\n\tpopf\n\t" mnem " 1f\n\t"         \
				 "xor %0, %0\n\tjmp 2f\n"                     \
				 "1:\tmov $1, %0\n"                           \
				 "2:"                                         \
				 : "=r"(r)                                    \
				 : "r"(rflags)                                \
				 : "cc");                                     \
		break;

static int cpu_jcc(int cc, uint64_t rflags)
{
	uint64_t r = 0;

	switch (cc) {
	JCC_CASE(0, "jo") JCC_CASE(1, "jno") JCC_CASE(2, "jb")
	JCC_CASE(3, "jae") JCC_CASE(4, "je") JCC_CASE(5, "jne")
	JCC_CASE(6, "jbe") JCC_CASE(7, "ja") JCC_CASE(8, "js")
	JCC_CASE(9, "jns") JCC_CASE(10, "jp") JCC_CASE(11, "jnp")
	JCC_CASE(12, "jl") JCC_CASE(13, "jge") JCC_CASE(14, "jle")
	JCC_CASE(15, "jg")
	}
	return (int)r;
}

static int cpu_loop(int which, uint64_t rcx, uint64_t rflags)
{
	uint64_t r = 0;

	if (which == 0)
		__asm__ volatile("push %2\n\tpopf\n\tloop 1f\n\txor %0, %0\n\t"
				 "jmp 2f\n1:\tmov $1, %0\n2:"
				 : "=r"(r), "+c"(rcx) : "r"(rflags) : "cc");
	else if (which == 1)
		__asm__ volatile("push %2\n\tpopf\n\tloope 1f\n\txor %0, %0\n\t"
				 "jmp 2f\n1:\tmov $1, %0\n2:"
				 : "=r"(r), "+c"(rcx) : "r"(rflags) : "cc");
	else if (which == 2)
		__asm__ volatile("push %2\n\tpopf\n\tloopne 1f\n\txor %0, %0\n\t"
				 "jmp 2f\n1:\tmov $1, %0\n2:"
				 : "=r"(r), "+c"(rcx) : "r"(rflags) : "cc");
	else
		__asm__ volatile("jrcxz 1f\n\txor %0, %0\n\t"
				 "jmp 2f\n1:\tmov $1, %0\n2:"
				 : "=r"(r) : "c"(rcx) : "cc");
	return (int)r;
}

struct enc {
	const char *what;
	uint8_t bytes[15];
	int n;
	int kind;
	int len;
	uint64_t target;	/* for ip 0x1000 */
	int rep;
};

static const struct enc encs[] = {
	{ "jmp rel8", { 0xeb, 0x10 }, 2, PTC_BR_JMP, 2, 0x1012, 0 },
	{ "jmp rel32", { 0xe9, 0x00, 0x01, 0x00, 0x00 }, 5, PTC_BR_JMP, 5, 0x1105, 0 },
	{ "jmp back", { 0xeb, 0xfe }, 2, PTC_BR_JMP, 2, 0x1000, 0 },
	{ "jmp *%rax", { 0xff, 0xe0 }, 2, PTC_BR_JMP_IND, 2, 0, 0 },
	{ "notrack jmp *%rax", { 0x3e, 0xff, 0xe0 }, 3, PTC_BR_JMP_IND, 3, 0, 0 },
	{ "jmp *disp(%rip)", { 0xff, 0x25, 0, 0, 0, 0 }, 6, PTC_BR_JMP_IND, 6, 0, 0 },
	{ "call rel32", { 0xe8, 0xfb, 0xff, 0xff, 0xff }, 5, PTC_BR_CALL, 5, 0x1000, 0 },
	{ "call *%rdx", { 0xff, 0xd2 }, 2, PTC_BR_CALL_IND, 2, 0, 0 },
	{ "call *8(%rax)", { 0xff, 0x50, 0x08 }, 3, PTC_BR_CALL_IND, 3, 0, 0 },
	{ "ret", { 0xc3 }, 1, PTC_BR_RET, 1, 0, 0 },
	{ "ret $8", { 0xc2, 0x08, 0x00 }, 3, PTC_BR_RET, 3, 0, 0 },
	{ "repz ret", { 0xf3, 0xc3 }, 2, PTC_BR_RET, 2, 0, 0 },
	{ "bnd ret", { 0xf2, 0xc3 }, 2, PTC_BR_RET, 2, 0, 0 },
	{ "je rel8", { 0x74, 0x05 }, 2, PTC_BR_COND, 2, 0x1007, 0 },
	{ "jne rel32", { 0x0f, 0x85, 0x10, 0x00, 0x00, 0x00 }, 6, PTC_BR_COND, 6, 0x1016, 0 },
	{ "je to its fall-through", { 0x74, 0x00 }, 2, PTC_BR_COND, 2, 0x1002, 0 },
	{ "jrcxz", { 0xe3, 0x02 }, 2, PTC_BR_COND, 2, 0x1004, 0 },
	{ "loop", { 0xe2, 0xfe }, 2, PTC_BR_COND, 2, 0x1000, 0 },
	{ "syscall", { 0x0f, 0x05 }, 2, PTC_BR_FAR, 2, 0, 0 },
	{ "int $0x80", { 0xcd, 0x80 }, 2, PTC_BR_FAR, 2, 0, 0 },
	{ "int3", { 0xcc }, 1, PTC_BR_FAR, 1, 0, 0 },
	{ "sysenter", { 0x0f, 0x34 }, 2, PTC_BR_FAR, 2, 0, 0 },
	{ "iretq", { 0x48, 0xcf }, 2, PTC_BR_FAR, 2, 0, 0 },
	{ "lret", { 0xcb }, 1, PTC_BR_FAR, 1, 0, 0 },
	{ "ljmp *(%rax)", { 0xff, 0x28 }, 2, PTC_BR_FAR, 2, 0, 0 },
	{ "rep movsb", { 0xf3, 0xa4 }, 2, PTG_NOT_BRANCH, 2, 0, 1 },
	{ "rep stosq", { 0xf3, 0x48, 0xab }, 3, PTG_NOT_BRANCH, 3, 0, 1 },
	{ "repne scasb", { 0xf2, 0xae }, 2, PTG_NOT_BRANCH, 2, 0, 1 },
	{ "movsb", { 0xa4 }, 1, PTG_NOT_BRANCH, 1, 0, 0 },
	{ "mov %rsp,%rbp", { 0x48, 0x89, 0xe5 }, 3, PTG_NOT_BRANCH, 3, 0, 0 },
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, PTG_NOT_BRANCH, 4, 0, 0 },
	{ "nopw 0(%rax,%rax)", { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 6, PTG_NOT_BRANCH, 6, 0, 0 },
};

static uint8_t memory[64];

static int read64(void *ctx, uint64_t addr, uint64_t *v)
{
	(void)ctx;
	if (addr < 0x5000 || addr + 8 > 0x5000 + sizeof(memory))
		return -1;
	memcpy(v, memory + (addr - 0x5000), 8);
	return 0;
}

int main(void)
{
	static const uint64_t flag_bits[] = { 0x001, 0x004, 0x040, 0x080, 0x800 };
	struct ptg_insn in;

	for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		const struct enc *e = &encs[i];
		int r = ptg_insn_decode(&in, 0x1000, e->bytes, (size_t)e->n);

		CHECK(r == 0, "%s: not decoded", e->what);
		if (r)
			continue;
		CHECK(in.kind == e->kind, "%s: kind %d, want %d", e->what, in.kind, e->kind);
		CHECK(in.len == e->len, "%s: len %d, want %d", e->what, in.len, e->len);
		CHECK(in.target == e->target, "%s: target 0x%llx, want 0x%llx", e->what,
		      (unsigned long long)in.target, (unsigned long long)e->target);
		CHECK(in.rep == e->rep, "%s: rep %d, want %d", e->what, in.rep, e->rep);
	}

	/* Every condition code, short and near forms, against the CPU, for
	 * all 32 combinations of CF, PF, ZF, SF and OF. */
	for (int cc = 0; cc < 16; cc++) {
		uint8_t shortj[2] = { (uint8_t)(0x70 + cc), 0x00 };
		uint8_t nearj[6] = { 0x0f, (uint8_t)(0x80 + cc), 0, 0, 0, 0 };
		struct ptg_insn s, n;

		CHECK(ptg_insn_decode(&s, 0x2000, shortj, 2) == 0 && s.kind == PTC_BR_COND,
		      "jcc %d rel8", cc);
		CHECK(ptg_insn_decode(&n, 0x2000, nearj, 6) == 0 && n.kind == PTC_BR_COND,
		      "jcc %d rel32", cc);
		for (int m = 0; m < 32; m++) {
			uint64_t fl = 0x202;	/* IF and the always-one bit */
			int want;

			for (int b = 0; b < 5; b++)
				if (m & (1 << b))
					fl |= flag_bits[b];
			want = cpu_jcc(cc, fl);
			CHECK(ptg_cond_taken(&s, fl, 0) == want,
			      "jcc %d rel8 flags %#llx: %d, the CPU says %d", cc,
			      (unsigned long long)fl, ptg_cond_taken(&s, fl, 0), want);
			CHECK(ptg_cond_taken(&n, fl, 0) == want,
			      "jcc %d rel32 flags %#llx", cc, (unsigned long long)fl);
		}
	}

	/* loop, loope, loopne, jrcxz for rcx 0, 1, 2 and ZF 0/1. */
	{
		static const uint8_t op[4] = { 0xe2, 0xe1, 0xe0, 0xe3 };
		static const uint64_t rcxs[] = { 0, 1, 2, 0x100000000ull };

		for (int w = 0; w < 4; w++) {
			uint8_t bytes[2] = { op[w], 0x00 };

			CHECK(ptg_insn_decode(&in, 0x3000, bytes, 2) == 0 &&
			      in.kind == PTC_BR_COND, "loop form %d", w);
			for (size_t k = 0; k < 4; k++)
				for (int zf = 0; zf < 2; zf++) {
					uint64_t fl = 0x202 | (zf ? 0x40 : 0);
					int want = cpu_loop(w, rcxs[k], fl);

					CHECK(ptg_cond_taken(&in, fl, rcxs[k]) == want,
					      "loop form %d rcx %#llx zf %d: the CPU says %d",
					      w, (unsigned long long)rcxs[k], zf, want);
				}
		}
	}

	/* Indirect targets from registers and memory. */
	{
		struct user_regs_struct regs;
		uint64_t t = 0, v = 0x1234567;
		uint8_t jmp_rax[] = { 0xff, 0xe0 };
		uint8_t call_8rax[] = { 0xff, 0x50, 0x08 };
		uint8_t jmp_tab[] = { 0xff, 0x24, 0xcd, 0x00, 0x50, 0x00, 0x00 };	/* jmp *0x5000(,%rcx,8) */
		uint8_t ret[] = { 0xc3 };
		uint8_t jmp_fs[] = { 0x64, 0xff, 0x20 };	/* jmp *%fs:(%rax) */

		memset(&regs, 0, sizeof(regs));
		regs.rax = 0x5000;
		regs.rcx = 2;
		regs.rsp = 0x5020;
		memcpy(memory + 8, &v, 8);
		v = 0x7777;
		memcpy(memory + 16, &v, 8);
		v = 0x4242;
		memcpy(memory + 0x20, &v, 8);

		ptg_insn_decode(&in, 0x1000, jmp_rax, sizeof(jmp_rax));
		CHECK(ptg_insn_indirect_target(&in, jmp_rax, sizeof(jmp_rax), &regs, read64, NULL, &t) == 0 &&
		      t == 0x5000, "jmp *%%rax: 0x%llx", (unsigned long long)t);
		ptg_insn_decode(&in, 0x1000, call_8rax, sizeof(call_8rax));
		CHECK(ptg_insn_indirect_target(&in, call_8rax, sizeof(call_8rax), &regs, read64, NULL, &t) == 0 &&
		      t == 0x1234567, "call *8(%%rax): 0x%llx", (unsigned long long)t);
		ptg_insn_decode(&in, 0x1000, jmp_tab, sizeof(jmp_tab));
		CHECK(ptg_insn_indirect_target(&in, jmp_tab, sizeof(jmp_tab), &regs, read64, NULL, &t) == 0 &&
		      t == 0x7777, "jmp *0x5000(,%%rcx,8): 0x%llx", (unsigned long long)t);
		ptg_insn_decode(&in, 0x1000, ret, sizeof(ret));
		CHECK(ptg_insn_indirect_target(&in, ret, sizeof(ret), &regs, read64, NULL, &t) == 0 &&
		      t == 0x4242, "ret: 0x%llx", (unsigned long long)t);
		ptg_insn_decode(&in, 0x1000, jmp_fs, sizeof(jmp_fs));
		CHECK(ptg_insn_indirect_target(&in, jmp_fs, sizeof(jmp_fs), &regs, read64, NULL, &t) < 0,
		      "jmp *%%fs:(%%rax) must not be evaluated");
	}
	return check_result();
}
