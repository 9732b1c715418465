/* Instruction classification with Zydis (see insn.h). */
#include "insn.h"

#include <Zydis/Zydis.h>

#include "common/trace_event.h"

/* Condition encodings beyond the sixteen jcc condition codes. */
enum {
	PTG_CC_JRCXZ = 16,
	PTG_CC_LOOP,
	PTG_CC_LOOPE,
	PTG_CC_LOOPNE,
	PTG_CC_ADDR32 = 0x80,	/* jecxz/loop with a 0x67 prefix: ecx, not rcx */
};

static ZydisDecoder decoder;
static int decoder_bits;	/* the mode it decodes (0: not set up yet) */

void ptg_insn_set_mode(int bits)
{
	if (bits == decoder_bits)
		return;
	if (bits == 32)
		ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32);
	else
		ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	decoder_bits = bits == 32 ? 32 : 64;
}

static int classify(const ZydisDecodedInstruction *zi, struct ptg_insn *insn)
{
	int direct = zi->raw.imm[0].is_relative;

	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
		if (zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
			return PTC_BR_FAR;
		return direct ? PTC_BR_JMP : PTC_BR_JMP_IND;
	case ZYDIS_MNEMONIC_CALL:
		if (zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
			return PTC_BR_FAR;
		return direct ? PTC_BR_CALL : PTC_BR_CALL_IND;
	case ZYDIS_MNEMONIC_RET:
		if (zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
			return PTC_BR_FAR;
		return PTC_BR_RET;
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JCXZ:
		insn->cc = PTG_CC_JRCXZ;
		return PTC_BR_COND;
	case ZYDIS_MNEMONIC_LOOP:
		insn->cc = PTG_CC_LOOP;
		return PTC_BR_COND;
	case ZYDIS_MNEMONIC_LOOPE:
		insn->cc = PTG_CC_LOOPE;
		return PTC_BR_COND;
	case ZYDIS_MNEMONIC_LOOPNE:
		insn->cc = PTG_CC_LOOPNE;
		return PTC_BR_COND;
	case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSENTER:
	case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_SYSEXIT:
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INTO:
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
		return PTC_BR_FAR;
	default:
		break;
	}
	if (zi->meta.category == ZYDIS_CATEGORY_COND_BR) {
		/* jcc rel8 is 0x70+cc, jcc rel32 is 0x0f 0x80+cc. */
		insn->cc = zi->opcode & 0x0f;
		return PTC_BR_COND;
	}
	return PTG_NOT_BRANCH;
}

int ptg_insn_decode(struct ptg_insn *insn, uint64_t ip, const uint8_t *buf,
		    size_t n)
{
	ZydisDecodedInstruction zi;

	if (!decoder_bits)
		ptg_insn_set_mode(64);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decoder, NULL, buf, n,
							&zi)))
		return -1;
	insn->ip = ip;
	insn->len = zi.length;
	insn->cc = 0;
	insn->rep = !!(zi.attributes & (ZYDIS_ATTRIB_HAS_REP |
					 ZYDIS_ATTRIB_HAS_REPE |
					 ZYDIS_ATTRIB_HAS_REPNE));
	insn->kind = classify(&zi, insn);
	insn->nowalk = zi.mnemonic == ZYDIS_MNEMONIC_XBEGIN ||
		       zi.mnemonic == ZYDIS_MNEMONIC_XABORT ||
		       zi.mnemonic == ZYDIS_MNEMONIC_XEND;
	insn->target = 0;
	if (insn->kind != PTG_NOT_BRANCH && insn->kind != PTC_BR_FAR &&
	    zi.raw.imm[0].is_relative) {
		insn->target = ip + zi.length + (uint64_t)zi.raw.imm[0].value.s;
		if (zi.operand_width == 16)
			insn->target &= 0xffff;
		else if (decoder_bits == 32)
			insn->target &= 0xffffffffu;	/* EIP wraps */
	}
	if (insn->kind == PTC_BR_COND && zi.address_width == 32 &&
	    insn->cc >= PTG_CC_JRCXZ)
		insn->cc |= PTG_CC_ADDR32;
	return 0;
}

int ptg_cond_taken(const struct ptg_insn *insn, uint64_t rflags, uint64_t rcx)
{
	int cf = !!(rflags & 0x001), pf = !!(rflags & 0x004);
	int zf = !!(rflags & 0x040), sf = !!(rflags & 0x080);
	int of = !!(rflags & 0x800);
	int cc = insn->cc & ~PTG_CC_ADDR32;
	int r;

	if (insn->cc & PTG_CC_ADDR32)
		rcx &= 0xffffffffu;
	switch (cc) {
	case PTG_CC_JRCXZ:
		return rcx == 0;
	case PTG_CC_LOOP:
		return rcx != 1;
	case PTG_CC_LOOPE:
		return rcx != 1 && zf;
	case PTG_CC_LOOPNE:
		return rcx != 1 && !zf;
	}
	/* The sixteen condition codes come in pairs, the odd one negated. */
	switch (cc >> 1) {
	case 0: r = of; break;			/* jo */
	case 1: r = cf; break;			/* jb */
	case 2: r = zf; break;			/* je */
	case 3: r = cf || zf; break;		/* jbe */
	case 4: r = sf; break;			/* js */
	case 5: r = pf; break;			/* jp */
	case 6: r = sf != of; break;		/* jl */
	default: r = zf || sf != of; break;	/* jle */
	}
	return (cc & 1) ? !r : r;
}

/* A 64-bit general-purpose register's value, or -1 for any other. */
static int gpr64(ZydisRegister r, const struct user_regs_struct *regs,
		 uint64_t *v)
{
	switch (r) {
	case ZYDIS_REGISTER_RAX: *v = regs->rax; return 0;
	case ZYDIS_REGISTER_RCX: *v = regs->rcx; return 0;
	case ZYDIS_REGISTER_RDX: *v = regs->rdx; return 0;
	case ZYDIS_REGISTER_RBX: *v = regs->rbx; return 0;
	case ZYDIS_REGISTER_RSP: *v = regs->rsp; return 0;
	case ZYDIS_REGISTER_RBP: *v = regs->rbp; return 0;
	case ZYDIS_REGISTER_RSI: *v = regs->rsi; return 0;
	case ZYDIS_REGISTER_RDI: *v = regs->rdi; return 0;
	case ZYDIS_REGISTER_R8: *v = regs->r8; return 0;
	case ZYDIS_REGISTER_R9: *v = regs->r9; return 0;
	case ZYDIS_REGISTER_R10: *v = regs->r10; return 0;
	case ZYDIS_REGISTER_R11: *v = regs->r11; return 0;
	case ZYDIS_REGISTER_R12: *v = regs->r12; return 0;
	case ZYDIS_REGISTER_R13: *v = regs->r13; return 0;
	case ZYDIS_REGISTER_R14: *v = regs->r14; return 0;
	case ZYDIS_REGISTER_R15: *v = regs->r15; return 0;
	default: return -1;
	}
}

/* The value of register r of the code being decoded: a 64-bit one in
 * 64-bit code, a 32-bit one (the low half of its 64-bit register) in
 * 32-bit code; -1 for any other. */
static int gpr(ZydisRegister r, const struct user_regs_struct *regs, uint64_t *v)
{
	if (decoder_bits != 32)
		return gpr64(r, regs, v);
	if (ZydisRegisterGetClass(r) != ZYDIS_REGCLASS_GPR32 ||
	    gpr64(ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r), regs, v) < 0)
		return -1;
	*v &= 0xffffffffu;
	return 0;
}

int ptg_insn_indirect_target(const struct ptg_insn *insn, const uint8_t *buf,
			     size_t n, const struct user_regs_struct *regs,
			     ptg_read64_fn read64, void *ctx, uint64_t *target)
{
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	const ZydisDecodedOperand *o = &op[0];
	uint64_t addr = 0, v;
	/* 64-bit code, or 32-bit code (its addresses and pointers 32 bits) */
	unsigned w = decoder_bits == 32 ? 32 : 64;
	uint64_t mask = w == 32 ? 0xffffffffu : UINT64_MAX;

	if (insn->kind == PTC_BR_RET) {
		if (read64(ctx, regs->rsp & mask, target) < 0)
			return -1;
		*target &= mask;
		return 0;
	}
	if (insn->kind != PTC_BR_JMP_IND && insn->kind != PTC_BR_CALL_IND)
		return -1;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, buf, n, &zi, op)) ||
	    zi.operand_width != w)
		return -1;
	if (o->type == ZYDIS_OPERAND_TYPE_REGISTER)
		return gpr(o->reg.value, regs, target);
	if (o->type != ZYDIS_OPERAND_TYPE_MEMORY || zi.address_width != w ||
	    o->mem.segment == ZYDIS_REGISTER_FS ||
	    o->mem.segment == ZYDIS_REGISTER_GS)
		return -1;
	if (o->mem.base == ZYDIS_REGISTER_RIP)
		addr = insn->ip + insn->len;
	else if (o->mem.base != ZYDIS_REGISTER_NONE) {
		if (gpr(o->mem.base, regs, &addr) < 0)
			return -1;
	}
	if (o->mem.index != ZYDIS_REGISTER_NONE) {
		if (gpr(o->mem.index, regs, &v) < 0)
			return -1;
		addr += v * o->mem.scale;
	}
	if (o->mem.disp.has_displacement)
		addr += (uint64_t)o->mem.disp.value;
	if (read64(ctx, addr & mask, target) < 0)
		return -1;
	*target &= mask;
	return 0;
}
