/* Corners of the Intel PT specification (issue 15), each a packet sequence
 * written with libipt's encoder over a tiny hand-assembled image, with the
 * branches the instructions and the packets imply, worked out by hand in
 * the comments: never taken from ptconv's output.
 *
 *	test_pt_corners DIR
 *
 * writes, per case NAME: DIR/NAME.pt (raw Intel PT), DIR/NAME.code (the
 * raw code, to load at BASE with --image DIR/NAME.code:BASE),
 * DIR/NAME.expect (the branches, "IP TARGET KIND TAKEN INSNS", and gaps,
 * "gap CAUSE", in order, as `-f text` lists them without the thread and the
 * gaps' offsets) and, where the libipt engine cannot be exact, the reason
 * and what it gives in DIR/NAME.libipt; and the list of cases, "NAME
 * BASE" per line, in DIR/cases.  tests/pt_corners.sh runs every engine
 * on them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "../lib/check.h"

#define BASE 0x400000ull
/* where the current case's code is: BASE, or its own base (16-bit code,
 * whose IP wraps at 64 KiB, lies below) */
static uint64_t base = BASE;
/* where a system call enters the kernel (user-only: tracing stops there) */
#define KERNEL 0xffffffff81000000ull

/* Packets in the order given by a script of words separated by spaces:
 *
 *	psb	PSB+ of 64-bit code (MODE.Exec) with tracing off
 *	psb@A	the same with tracing on at A (its FUP)
 *	psbx@A	the same inside a transaction (MODE.TSX, InTX set)
 *	psb32, psb32@A	the same in 32-bit code (MODE.Exec: CS.L 0, CS.D 1)
 *	mode16, mode32, mode64	MODE.Exec of 16-bit (CS.L 0, CS.D 0),
 *		32-bit or 64-bit code, which binds to the TIP that follows
 *	abort	MODE.TSX of a transaction's abort (TXAbort set), which binds
 *		to the FUP that follows
 *	pge@A, pgd@A, fup@A, tip@A	TIP.PGE, TIP.PGD, FUP, TIP with IP A
 *	pgd	TIP.PGD with no IP (suppressed)
 *	tnt:BITS	a TNT packet, its branches in order (tnt:110: taken,
 *		taken, not taken)
 *	ovf	OVF: the processor dropped packets (a FUP after it says
 *		where tracing resumes)
 *	pwr	power events only libipt's query decoder reads: PWRE (C6)
 *		then PWRX (woken by an interrupt)
 *	raw:HEX	bytes as they are, for packets libipt's encoder cannot write
 *
 * A: +HEX (from the case's base), 0xHEX, or k (the kernel's KERNEL). */
struct seq {
	uint8_t buf[4096];
	struct pt_encoder *enc;
};

static void put(struct seq *s, struct pt_packet *p)
{
	CHECK(pt_enc_next(s->enc, p) > 0, "encoder: packet type %d", p->type);
	memset(p, 0, sizeof(*p));
}

static uint64_t addr(const char *a)
{
	if (a[0] == 'k')
		return KERNEL;
	if (a[0] == '+')
		return base + strtoull(a + 1, NULL, 16);
	return strtoull(a, NULL, 16);
}

static void script(struct seq *s, const char *name, const char *text)
{
	char buf[512], *w, *save = NULL;
	struct pt_packet p;

	snprintf(buf, sizeof(buf), "%s", text);
	memset(&p, 0, sizeof(p));
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *at = strchr(w, '@');
		uint64_t ip = at ? addr(at + 1) : 0;

		if (at)
			*at = 0;
		if (!strcmp(w, "psb") || !strcmp(w, "psbx") || !strcmp(w, "psb32")) {
			p.type = ppt_psb;
			put(s, &p);
			p.type = ppt_mode;
			p.payload.mode.leaf = pt_mol_exec;
			p.payload.mode.bits.exec.csl = w[3] != '3';
			p.payload.mode.bits.exec.csd = w[3] == '3';
			put(s, &p);
			if (w[3] == 'x') {
				p.type = ppt_mode;
				p.payload.mode.leaf = pt_mol_tsx;
				p.payload.mode.bits.tsx.intx = 1;
				put(s, &p);
			}
			if (ip) {
				p.type = ppt_fup;
				p.payload.ip.ipc = pt_ipc_sext_48;
				p.payload.ip.ip = ip;
				put(s, &p);
			}
			p.type = ppt_psbend;
		} else if (!strcmp(w, "pge") || !strcmp(w, "pgd") || !strcmp(w, "fup") || !strcmp(w, "tip")) {
			p.type = w[1] == 'g' ? (w[2] == 'e' ? ppt_tip_pge : ppt_tip_pgd) : w[0] == 'f' ? ppt_fup : ppt_tip;
			p.payload.ip.ipc = at ? pt_ipc_sext_48 : pt_ipc_suppressed;
			p.payload.ip.ip = ip;
		} else if (!strncmp(w, "tnt:", 4)) {
			const char *b;

			p.type = ppt_tnt_8;
			for (b = w + 4; *b; b++)
				p.payload.tnt.payload = p.payload.tnt.payload << 1 | (uint64_t)(*b == '1');
			p.payload.tnt.bit_size = (uint8_t)(b - (w + 4));
		} else if (!strncmp(w, "raw:", 4)) {
			uint64_t off = 0;
			const char *h;

			CHECK(pt_enc_get_offset(s->enc, &off) == 0, "%s: encoder offset", name);
			for (h = w + 4; h[0] && h[1] && off < sizeof(s->buf); h += 2) {
				char x[3] = { h[0], h[1], 0 };
				s->buf[off++] = (uint8_t)strtoul(x, NULL, 16);
			}
			CHECK(pt_enc_sync_set(s->enc, off) == 0, "%s: encoder offset", name);
			continue;
		} else if (!strcmp(w, "ovf")) {
			p.type = ppt_ovf;
		} else if (!strncmp(w, "mode", 4)) {
			p.type = ppt_mode;
			p.payload.mode.leaf = pt_mol_exec;
			p.payload.mode.bits.exec.csl = !strcmp(w + 4, "64");
			p.payload.mode.bits.exec.csd = !strcmp(w + 4, "32");
		} else if (!strcmp(w, "abort")) {
			p.type = ppt_mode;
			p.payload.mode.leaf = pt_mol_tsx;
			p.payload.mode.bits.tsx.abrt = 1;
		} else if (!strcmp(w, "pwr")) {
			p.type = ppt_pwre;
			p.payload.pwre.state = 2;
			put(s, &p);
			p.type = ppt_pwrx;
			p.payload.pwrx.last = 2;
			p.payload.pwrx.deepest = 2;
			p.payload.pwrx.interrupt = 1;
		} else {
			CHECK(0, "%s: unknown packet %s", name, w);
			continue;
		}
		put(s, &p);
	}
}

/* ---- item 3: a call with displacement 0 (call next; pop reg) ----
 *
 * The processor does not push it for return compression (nor does
 * libipt): the compressed ret of f returns to f's caller.
 *
 *   +00 85 c0           test eax,eax
 *   +02 74 01           je +05
 *   +04 90              nop
 *   +05 74 01           je +08
 *   +07 90              nop
 *   +08 e8 08 00 00 00  call +15 (f)
 *   +0d 74 01           je +10
 *   +0f 90              nop
 *   +10 0f 05           syscall
 *   +12 90 90 90
 *   +15 e8 00 00 00 00  f: call +1a (displacement 0)
 *   +1a 58              pop rax
 *   +1b c3              ret
 */
static const char code_zerocall[] =
	"\x85\xc0\x74\x01\x90\x74\x01\x90\xe8\x08\x00\x00\x00\x74\x01\x90"
	"\x0f\x05\x90\x90\x90\xe8\x00\x00\x00\x00\x58\xc3";
/* From +00: test, je taken (bit 1; 2 insns); je taken (bit 1; 1); call f
 * (1); the call to +1a (1); pop, ret compressed (bit 1; 2) to +0d, the
 * fall-through of call f; je not taken (bit 0; 1); nop, syscall (2):
 * TIP.PGD with no IP, the trace ends (target 0). */
static const char expect_zerocall[] =
	"0x400002 0x400005 cond 1 2\n"
	"0x400005 0x400008 cond 1 1\n"
	"0x400008 0x400015 call 1 1\n"
	"0x400015 0x40001a call 1 1\n"
	"0x40001b 0x40000d ret 1 2\n"
	"0x40000d 0x400010 cond 0 1\n"
	"0x400010 0x0 far 1 2\n";

/* ---- item 10: a system call in a user-only trace ----
 *
 *   +00 90     nop
 *   +01 0f 05  syscall
 *   +03 90     nop
 *   +04 0f 05  syscall
 *   +06 90     nop
 *   +07 0f 05  syscall
 */
static const char code_syscall[] = "\x90\x0f\x05\x90\x0f\x05\x90\x0f\x05";
/* The TIP.PGD of each system call names the kernel's entry: not where
 * user mode went.  ptconv-convert(1): a far transfer's target is where
 * user mode resumed when that is not the next instruction, else 0.
 * +01 resumes at +03, its next instruction: 0.  +04 resumes at +00 (a
 * signal handler, say): +00.  +01 again: the trace ends, 0. */
static const char expect_syscall[] =
	"0x400001 0x0 far 1 2\n"
	"0x400004 0x400000 far 1 2\n"
	"0x400001 0x0 far 1 2\n";

/* ---- item 2: TIP.PGD on a direct call or jump ----
 *
 * Tracing stops as a direct branch leaves the traced range (an address
 * filter): the TIP.PGD names its target, and the branch was taken there.
 *
 *   +00 90              nop
 *   +01 e8 0a 00 00 00  call +10 (f, outside the filter)
 *   +06 90              nop
 *   +07 0f 05           syscall
 *   +09 90 x 7
 *   +10 90              f: nop
 *   +11 c3              ret
 */
static const char code_pgd_call[] =
	"\x90\xe8\x0a\x00\x00\x00\x90\x0f\x05\x90\x90\x90\x90\x90\x90\x90"
	"\x90\xc3";
/* nop, call f (2 insns): TIP.PGD at f.  f runs untraced; its ret comes
 * back into the filter: TIP.PGE at +06.  nop, syscall (2).  No ret is
 * traced. */
static const char expect_pgd_call[] =
	"0x400001 0x400010 call 1 2\n"
	"0x400007 0x0 far 1 2\n";

/*   +00 90              nop
 *   +01 e9 fa ff 0f 00  jmp 0x500000 (no image there)
 *   +06 0f 05           syscall
 */
static const char code_pgd_jmp[] = "\x90\xe9\xfa\xff\x0f\x00\x0f\x05";
/* nop, jmp (2): TIP.PGD at 0x500000, which runs untraced and comes back
 * to +06 (TIP.PGE); syscall (1).  No code is needed at 0x500000: no gap. */
static const char expect_pgd_jmp[] =
	"0x400001 0x500000 jmp 1 2\n"
	"0x400006 0x0 far 1 1\n";

/* ---- item 1: TIP.PGD in place of a conditional branch's TNT bit ----
 *
 *   +00 85 c0  test eax,eax
 *   +02 74 0c  je +10
 *   +04 90     nop
 *   +05 0f 05  syscall
 *   +07 90 x 9
 *   +10 90     nop
 *   +11 0f 05  syscall
 */
static const char code_pgd_jcc[] =
	"\x85\xc0\x74\x0c\x90\x0f\x05\x90\x90\x90\x90\x90\x90\x90\x90\x90"
	"\x90\x0f\x05";
/* test, je (2): TIP.PGD at +10, its target: taken.  Tracing comes back
 * at +04 (TIP.PGE): nop, syscall (2). */
static const char expect_pgd_jcc_taken[] =
	"0x400002 0x400010 cond 1 2\n"
	"0x400005 0x0 far 1 2\n";

/* test, je (2): TIP.PGD at +04, its fall-through: not taken.  Tracing
 * comes back at +10: nop, syscall (2). */
static const char expect_pgd_jcc_fall[] =
	"0x400002 0x400010 cond 0 2\n"
	"0x400011 0x0 far 1 2\n";

/* TIP.PGD at +07, neither the je's target nor its fall-through: the
 * trace contradicts the code, a decode gap; tracing comes back at +04:
 * nop, syscall (2), counted from there. */
static const char expect_pgd_jcc_other[] =
	"gap decode\n"
	"0x400005 0x0 far 1 2 after-gap\n";

/* The same after bits of a TNT packet, which the walker takes as a path:
 *
 *   +00 31 c0     xor eax,eax
 *   +02 ff c0     inc eax
 *   +04 83 f8 05  cmp eax,5
 *   +07 75 f9     jne +02
 *   +09 0f 05     syscall
 */
static const char code_loop[] = "\x31\xc0\xff\xc0\x83\xf8\x05\x75\xf9\x0f\x05";
/* xor, inc, cmp, jne taken (bit 1; 4 insns); inc, cmp, jne taken twice
 * more (bits 1 1; 3 each); the fourth jne leaves the loop and the traced
 * range: TIP.PGD at +09, its fall-through, not taken (3).  (A TIP.PGD at
 * +02 there could not be an address filter's: +02 was traced just
 * before.) */
static const char expect_pgd_jcc_loop[] =
	"0x400007 0x400002 cond 1 4\n"
	"0x400007 0x400002 cond 1 3\n"
	"0x400007 0x400002 cond 1 3\n"
	"0x400007 0x400002 cond 0 3\n";

/* ---- item 5: code after the last branch of an image ----
 *
 *   +00 85 c0  test eax,eax
 *   +02 74 01  je +05
 *   +04 90     nop
 *   +05 90     nop
 *   +06 90     nop
 *   +07 90     nop (the image's last byte)
 */
static const char code_tail[] = "\x85\xc0\x74\x01\x90\x90\x90\x90";
/* test, je not taken (bit 0; 2 insns); nop, nop; an interrupt before +06
 * stops tracing (FUP +06, TIP.PGD): 2 instructions pending.  Tracing
 * comes back at +00: test, je taken (bit 1), counted with the 2 before
 * the interrupt (4); nop, nop and tracing stops before +07: pending, not
 * reported (no branch follows). */
static const char expect_tail_async[] =
	"0x400002 0x400005 cond 0 2\n"
	"0x400002 0x400005 cond 1 4\n";
/* test, je not taken; the trace ends in the nops: nothing lost. */
static const char expect_tail_end[] = "0x400002 0x400005 cond 0 2\n";
/* test, je not taken; a TNT bit, but no branch follows +04 in the image:
 * the trace contradicts the code. */
static const char expect_tail_bad[] =
	"0x400002 0x400005 cond 0 2\n"
	"gap decode\n";

/* libipt's block decoder walks ahead of the trace until it needs a
 * packet: in code after the last branch it runs off the end of the
 * image's code and fails there ("no memory mapped"), whether the trace
 * ended first or holds a branch's packet; the libipt engine reports that
 * as a no-image gap (ptconv-convert(1), --engine). */
static const char libipt_tail[] =
	"# libipt's block decoder runs off the image's end before it needs the\n"
	"# next packet: a no-image gap there, wherever the trace ends\n"
	"0x400002 0x400005 cond 0 2\n"
	"gap no-image\n";

/* ---- item 7: packets and instructions newer than libipt 2.0 ----
 *
 * Byte for byte from the packet formats of the Intel SDM (vol. 3, Intel
 * Processor Trace), which libipt 2.0's encoder cannot write:
 *   CFE  02 13, [IP:7 | type:4..0], vector: a control-flow event of Event
 *        Trace; type 1 (INTR) with IP clear binds to the FUP and TIP (or
 *        TIP.PGD) of the interrupt's asynchronous branch that follow
 *   EVD  02 53, [type:5..0], 8 bytes of payload: type 0 is CR2, the page
 *        fault's address, for the CFE that follows
 *   TRIG D9, [IP:7 | ICNTV:6 | MULT:5], trigger bits: trigger tracing; no
 *        IP, no count: it says nothing about control flow
 * A libipt that knows them (CFE, EVD: 2.1; TRIG: 2.2) decodes them and the
 * branches are those the instructions and the other packets say; one that
 * does not stops at them: everything up to the next PSB is lost, a decode
 * gap that names the packet.
 *
 * On code_syscall: nop, syscall (tracing stops in the kernel); an
 * interrupt at +01 (FUP, TIP.PGD without IP) stops tracing after the nop,
 * which resumes at +01 (TIP.PGE): syscall, 2 instructions with the nop;
 * a PSB+ with tracing off; tracing resumes at +03, the second syscall's
 * nop: nop, syscall (2).  Both resume at their next instruction: target 0.
 * The TRIG case has no interrupt: nop, syscall, the same branches. */
static const char expect_newer_pkt[] =
	"0x400001 0x0 far 1 2\n"
	"0x400004 0x0 far 1 2\n";
static const char expect_newer_pkt_lost[] =
	"gap decode\n"
	"0x400004 0x0 far 1 2 after-gap\n";

/* FRED's far returns and APX's JMPABS, which ptconv's walker knows (from
 * their encodings) whatever Zydis says, and libipt from 2.2 on:
 *
 *   +00 90           nop
 *   +01 f3 0f 01 ca  eretu (f2 0f 01 ca: erets)
 *   +05 90           nop
 *   +06 0f 05        syscall
 *   +08 90           nop
 *   +09 0f 05        syscall
 */
static const char code_eretu[] = "\x90\xf3\x0f\x01\xca\x90\x0f\x05\x90\x0f\x05";
static const char code_erets[] = "\x90\xf2\x0f\x01\xca\x90\x0f\x05\x90\x0f\x05";
/* nop, eretu: a far return, its TIP at +05 (2 insns); nop, syscall (2),
 * tracing stops; a PSB+, tracing resumes at +08: nop, syscall (2). */
static const char expect_eret[] =
	"0x400001 0x400005 far 1 2\n"
	"0x400006 0x0 far 1 2\n"
	"0x400009 0x0 far 1 2\n";
/*   +00 90                             nop
 *   +01 d5 00 a1 0c 00 40 00 00 00 00 00  jmpabs 0x40000c (REX2, A1, imm64)
 *   +0c 90                             nop
 *   +0d 0f 05                          syscall
 *   +0f 90                             nop
 *   +10 0f 05                          syscall
 */
static const char code_jmpabs[] =
	"\x90\xd5\x00\xa1\x0c\x00\x40\x00\x00\x00\x00\x00\x90\x0f\x05\x90\x0f\x05";
/* nop, jmpabs: traced with a TIP (+0c), as an indirect jump (2 insns);
 * nop, syscall (2); a PSB+; nop, syscall (2). */
static const char expect_jmpabs[] =
	"0x400001 0x40000c jmp-ind 1 2\n"
	"0x40000d 0x0 far 1 2\n"
	"0x400010 0x0 far 1 2\n";
/* libipt before 2.2 takes eretu/erets for clac (and binds the TIP to the
 * syscall after it) and fails on jmpabs: a decode gap that names the
 * instruction.  By the time its block comes out, libipt has read the
 * packets after it up to and into the next PSB+ (it looks ahead for
 * events that bind there), so decoding resumes at the PSB after that:
 * none in this short trace. */
static const char expect_insn_lost[] = "gap decode\n";

/* ---- item 6: errata ----
 *
 * BDM64 (Broadwell, CPUID 6/61, 6/71, 6/79, 6/86): a TSX abort right after
 * a branch may leave that branch's TNT bit or TIP wrong.  libipt's
 * workaround (pt_errata.bdm64, in its instruction and block decoders):
 * when the abort's IP cannot be reached from where the branch's packet
 * says it went, by straight-line code and direct jumps and calls within
 * 256 instructions, the branch went to the abort's IP.
 *
 *   +00 test eax,eax; +02 je +08; +04 nop; +05 je +10; +07 nop; +08 nop;
 *   +09 jmp rax; +0b nop; +0c nop (the abort's handler); +0d syscall;
 *   +0f nop; +10 nop; +11 syscall
 */
static const char code_bdm64[] = "\x85\xc0\x74\x04\x90\x74\x09\x90\x90\xff\xe0\x90\x90\x0f\x05\x90\x90\x0f\x05";
/* bdm64_cond: inside a transaction from +00, test, je (2) with a
 * not-taken bit, then the abort at +08 (FUP), to its handler +0c (TIP).
 * From the bit's +04, +08 is not reachable (the je at +05 needs a
 * packet): the erratum, the je went to +08, its target: taken.  The abort
 * takes +08's nop away; the handler: nop, syscall (2).  A PSB+, tracing
 * resumes at +0f: nop, nop, syscall (3).
 *
 * bdm64_nocpu: without the CPU (raw mode, no --cpu) the bit is taken as it
 * is (as libipt does without the workaround), and the abort at +08
 * contradicts it: a decode gap (that names --cpu) up to the next PSB;
 * tracing resumes at +0f.
 *
 * bdm64_reach: the abort at +05, which the not-taken bit's +04 reaches
 * (nop): no erratum.  je not taken (2); the nop, then the abort before
 * the je at +05; the handler's nop, syscall: 3.  Then as above.
 *
 * bdm64_ind: from +08, nop, jmp rax (2), its TIP at +0f; the abort at
 * +0c, which +0f does not reach (its syscall leaves): the jmp went to +0c.
 * The abort's handler is +0f: nop, nop, syscall (3). */
static const char expect_bdm64_cond[] = "0x400002 0x400008 cond 1 2\n0x40000d 0x0 far 1 2\n0x400011 0x0 far 1 3\n";
static const char expect_bdm64_nocpu[] = "0x400002 0x400008 cond 0 2\ngap decode\n0x400011 0x0 far 1 3 after-gap\n";
static const char expect_bdm64_reach[] = "0x400002 0x400008 cond 0 2\n0x40000d 0x0 far 1 3\n0x400011 0x0 far 1 3\n";
static const char expect_bdm64_ind[] = "0x400009 0x40000c jmp-ind 1 2\n0x400011 0x0 far 1 3\n";

/* BDM70 (most cores from Broadwell on): a PSB+ right before a TIP.PGE may
 * hold a FUP (and MODE.Exec) although tracing is still off.  libipt's
 * workaround (pt_errata.bdm70): a PSB+ whose FUP is followed by a TIP.PGE
 * (timing and mode packets aside) is taken as one with tracing off.  When
 * the TIP.PGE names the FUP's IP, the PSB+ and the TIP.PGE say the same
 * whatever the CPU: execution was there, nothing ran in between, nothing
 * is lost.  On code_syscall: nop, syscall (2), and again from +03 (2). */
static const char expect_bdm70[] = "0x400001 0x0 far 1 2\n0x400004 0x0 far 1 2\n";
/* The FUP at +03, the TIP.PGE at +00: on a CPU with the erratum, the FUP
 * is the erratum's (as above); on one without, tracing was on at +03 and
 * what ran before it came back at +00 is unknown.  Without --cpu: a gap
 * (that names --cpu); the branches are those above. */
static const char expect_bdm70_other[] = "gap disabled\n0x400001 0x0 far 1 2 after-gap\n0x400004 0x0 far 1 2\n";

/* ---- item 8: a PSB+ no decoder can synchronise at ----
 *
 * On code_syscall: a PSB+ whose FUP has the reserved IP compression 5
 * (Intel SDM: reserved), then nop, syscall from +00 (TIP.PGE, TIP.PGD):
 * what ran there cannot be placed, a decode gap up to the next PSB; from
 * its TIP.PGE at +03: nop, syscall (2).  (Both engines skipped such a
 * PSB silently, without a gap.) */
#define PSB_RESERVED_FUP "raw:02820282028202820282028202820282" "9901" "bd0000000000000000" "0223"
static const char expect_psb_broken[] = "gap decode\n0x400004 0x0 far 1 2 after-gap\n";

/* ---- item 8: a branch into code no image covers ----
 *
 *   +00 90              nop
 *   +01 e8 fa ff 0f 00  call 0x500000 (no image there)
 *   +06 90              nop
 *   +07 0f 05           syscall
 *
 * nop, call (2): it went to 0x500000, where the code is unknown: a
 * no-image gap; what runs there ends in the kernel (TIP.PGD); after a
 * PSB+, tracing comes back at +06: nop, syscall (2).  The same with an
 * indirect jump (code_jmp_nomap: +01 ff e0 jmp rax, its TIP at 0x500000;
 * +03 nop, +04 syscall). */
static const char code_call_nomap[] = "\x90\xe8\xfa\xff\x0f\x00\x90\x0f\x05";
static const char expect_call_nomap[] = "0x400001 0x500000 call 1 2\ngap no-image\n0x400007 0x0 far 1 2 after-gap\n";
static const char code_jmp_nomap[] = "\x90\xff\xe0\x90\x0f\x05";
static const char expect_jmp_nomap[] = "0x400001 0x500000 jmp-ind 1 2\ngap no-image\n0x400004 0x0 far 1 2 after-gap\n";
/* libipt's block decoder reads the packets after the branch up to and
 * into the next PSB+ (for the events that may bind there) before it fails
 * on the code at 0x500000: the libipt engine resumes at the PSB after
 * that one (none here).  The branch is kept (it dropped it before). */
#define LIBIPT_NOMAP                                                                 \
	"# libipt's block decoder has read into the next PSB+ when it fails on the\n" \
	"# code no image covers: decoding resumes at the PSB after that (none here)\n"
static const char libipt_call_nomap[] = LIBIPT_NOMAP "0x400001 0x500000 call 1 2\ngap no-image\n";
static const char libipt_jmp_nomap[] = LIBIPT_NOMAP "0x400001 0x500000 jmp-ind 1 2\ngap no-image\n";

/* ---- item 8: a far return (retfq) ----
 *
 *   +00 90     nop
 *   +01 48 cb  retfq (REX.W retf: a far return, its TIP names where it went)
 *   +03 90     nop
 *   +04 0f 05  syscall
 *
 * nop, retfq to +03 (2): a far transfer, kind far, as every far branch;
 * nop, syscall (2). */
static const char code_retfq[] = "\x90\x48\xcb\x90\x0f\x05";
static const char expect_retfq[] = "0x400001 0x400003 far 1 2\n0x400004 0x0 far 1 2\n";

/* ---- items 8 and 9: an overflow right after a branch's packet ----
 *
 * On code_pgd_jcc: test, je (2) taken (its bit before the OVF); the OVF
 * loses what ran until the FUP at +04: an overflow gap; nop, syscall (2),
 * counted from +04.  (The libipt engine dropped the je: libipt's block
 * decoder had taken its bit, but the block that would say where it went
 * is the one the overflow lost.)  With the bit not taken: the same. */
static const char expect_ovf_taken[] = "0x400002 0x400010 cond 1 2\ngap overflow\n0x400005 0x0 far 1 2 after-gap\n";
static const char expect_ovf_fall[] = "0x400002 0x400010 cond 0 2\ngap overflow\n0x400005 0x0 far 1 2 after-gap\n";

/* An overflow right after a return's or an indirect jump's packet: the
 * same (both engines dropped them: found on another CPU's run of
 * pt_gap_rule.sh, where ld.so takes other paths).
 *
 *   +00 e8 02 00 00 00  call +07
 *   +05 0f 05           syscall
 *   +07 c3              ret
 *
 * call (1), ret (1) to +05, compressed (a TNT bit) or not (a TIP); the
 * OVF; syscall (1), counted from the FUP at +05.  On code_jmp_nomap:
 * nop, jmp rax (2) to +03 (its TIP), the OVF, syscall (1) from +04. */
static const char code_ovf_ret[] = "\xe8\x02\x00\x00\x00\x0f\x05\xc3";
static const char expect_ovf_ret[] =
	"0x400000 0x400007 call 1 1\n0x400007 0x400005 ret 1 1\ngap overflow\n0x400005 0x0 far 1 1 after-gap\n";
static const char expect_ovf_jmp[] = "0x400001 0x400003 jmp-ind 1 2\ngap overflow\n0x400004 0x0 far 1 1 after-gap\n";

/* ---- item 4: 32-bit and compatibility-mode code ----
 *
 * MODE.Exec says how the bytes decode: a1 is mov eax,[moffs32] (5 bytes)
 * in 32-bit code and mov eax,[moffs64] (9 bytes) in 64-bit code, so code
 * decoded in the wrong mode loses the test and the je behind it.
 *
 *   +00 a1 00 10 40 00  mov eax,[0x401000]
 *   +05 85 c0           test eax,eax
 *   +07 74 05           je +0e
 *   +09 e8 06 00 00 00  call +14 (f)
 *   +0e ff e3           jmp ebx
 *   +10 90              nop
 *   +11 cd 80           int 0x80
 *   +13 90              nop
 *   +14 90              f: nop
 *   +15 c3              ret
 */
static const char code_moffs32[] =
	"\xa1\x00\x10\x40\x00\x85\xc0\x74\x05\xe8\x06\x00\x00\x00\xff\xe3"
	"\x90\xcd\x80\x90\x90\xc3";
/* mov, test, je not taken (bit 0; 3 insns); call f (1); nop, ret
 * compressed (bit 1; 2) to +0e; jmp ebx with its TIP to +11 (1); int 0x80
 * (1): TIP.PGD at the kernel, the trace ends (target 0). */
static const char expect_moffs32[] =
	"0x400007 0x40000e cond 0 3\n"
	"0x400009 0x400014 call 1 1\n"
	"0x400015 0x40000e ret 1 2\n"
	"0x40000e 0x400011 jmp-ind 1 1\n"
	"0x400011 0x0 far 1 1\n";

/* A far jump from 64-bit code into 32-bit code (a compatibility-mode code
 * segment) and back: each with MODE.Exec bound to its TIP.
 *
 *   +00 a1 00 10 40 00 00 00 00 00  mov eax,[0x401000] (64-bit)
 *   +09 85 c0                       test eax,eax
 *   +0b 75 04                       jne +11
 *   +0d ff 2c 24                    jmp far [rsp]
 *   +10 90                          nop
 *   +11 a1 00 10 40 00              mov eax,[0x401000] (32-bit)
 *   +16 85 c0                       test eax,eax
 *   +18 74 04                       je +1e
 *   +1a ff 2c 24                    jmp far [esp]
 *   +1d 90                          nop
 *   +1e cd 80                       int 0x80
 *   +20 a1 00 10 40 00 00 00 00 00  mov eax,[0x401000] (64-bit)
 *   +29 0f 05                       syscall
 */
static const char code_modes[] =
	"\xa1\x00\x10\x40\x00\x00\x00\x00\x00\x85\xc0\x75\x04\xff\x2c\x24\x90"
	"\xa1\x00\x10\x40\x00\x85\xc0\x74\x04\xff\x2c\x24\x90\xcd\x80"
	"\xa1\x00\x10\x40\x00\x00\x00\x00\x00\x0f\x05";
/* mov, test, jne not taken (bit 0; 3 insns); the far jump, its TIP at +11
 * (1); mov, test, je not taken (bit 0; 3); the far jump, its TIP at +20
 * (1); mov, syscall (2): TIP.PGD at the kernel. */
static const char expect_modes[] =
	"0x40000b 0x400011 cond 0 3\n"
	"0x40000d 0x400011 far 1 1\n"
	"0x400018 0x40001e cond 0 3\n"
	"0x40001a 0x400020 far 1 1\n"
	"0x400029 0x0 far 1 2\n";
/* The same from +11, where tracing starts in 32-bit code. */
static const char expect_modes_pge32[] =
	"0x400018 0x40001e cond 0 3\n"
	"0x40001a 0x400020 far 1 1\n"
	"0x400029 0x0 far 1 2\n";

/* 16-bit code, at 0x1000 (its IP is 16 bits): a1 is mov ax,[moffs16] (3
 * bytes), e8 a call with a 16-bit displacement.
 *
 *   +00 a1 00 20  mov ax,[0x2000]
 *   +03 85 c0     test ax,ax
 *   +05 74 03     je +0a
 *   +07 e8 02 00  call +0c (f)
 *   +0a ff e3     jmp bx
 *   +0c 90        f: nop
 *   +0d c3        ret
 *   +0e 90        nop
 *   +0f cd 80     int 0x80
 */
#define BASE16 0x1000ull
static const char code_moffs16[] = "\xa1\x00\x20\x85\xc0\x74\x03\xe8\x02\x00\xff\xe3\x90\xc3\x90\xcd\x80";
/* mov, test, je not taken (bit 0; 3 insns); call f (1); nop, ret
 * compressed (bit 1; 2) to +0a; jmp bx with its TIP to +0f (1); int 0x80
 * (1): TIP.PGD at the kernel. */
static const char expect_moffs16[] =
	"0x1005 0x100a cond 0 3\n"
	"0x1007 0x100c call 1 1\n"
	"0x100d 0x100a ret 1 2\n"
	"0x100a 0x100f jmp-ind 1 1\n"
	"0x100f 0x0 far 1 1\n";

/* The same code above 64 KiB (a code segment's base, which the trace's
 * linear addresses do not show): nothing wraps, as libipt has it. */
static const char expect_moffs16_high[] =
	"0x400005 0x40000a cond 0 3\n"
	"0x400007 0x40000c call 1 1\n"
	"0x40000d 0x40000a ret 1 2\n"
	"0x40000a 0x40000f jmp-ind 1 1\n"
	"0x40000f 0x0 far 1 1\n";

/* Which of them the libipt loaded knows (pt_library_version()). */
enum { NEWER_NONE, NEWER_PKT21, NEWER_PKT22, NEWER_INSN22 };

static const struct corner {
	const char *name;
	const char *code;
	size_t code_size;
	const char *packets;	/* script() */
	const char *expect;
	const char *libipt;	/* the libipt engine differs: why, then what it gives */
	int newer;		/* NEWER_*: what libipt must know for expect */
	const char *lost;	/* otherwise: what every engine (packets) or the
				 * libipt engine (instructions) gives */
	const char *detail;	/* what the gap's text must say, then */
	const char *cpu;	/* --cpu FAMILY/MODEL/STEPPING, NULL: none */
	const char *erratum;	/* bdm64, bdm70: expect is also checked against
				 * libipt's instruction flow decoder with that
				 * workaround on (insn_flow()); "": without one */
	uint64_t base;		/* where the code is, 0: BASE */
} corners[] = {
/* (designated: the fields after expect are optional) */
#define CODE(c) .code = c, .code_size = sizeof(c) - 1
	/* the four bits in one TNT packet: the walker takes the first one
	 * alone (it starts from a search), the rest as a path of its memo
	 * (tnt_path.h) */
	{ "zerocall_path", CODE(code_zerocall), "psb pge@+0 tnt:1110 pgd", expect_zerocall, NULL },
	/* one bit per TNT packet: one branch at a time */
	{ "zerocall_bits", CODE(code_zerocall), "psb pge@+0 tnt:1 tnt:1 tnt:1 tnt:0 pgd", expect_zerocall,
	  NULL },
	{ "syscall_kernel_ip", CODE(code_syscall), "psb pge@+0 pgd@k pge@+3 pgd@k pge@+0 pgd@k", expect_syscall,
	  NULL },
	{ "pgd_call", CODE(code_pgd_call), "psb pge@+0 pgd@+10 pge@+6 pgd", expect_pgd_call, NULL },
	{ "pgd_jmp", CODE(code_pgd_jmp), "psb pge@+0 pgd@0x500000 pge@+6 pgd", expect_pgd_jmp, NULL },
	{ "pgd_jcc_taken", CODE(code_pgd_jcc), "psb pge@+0 pgd@+10 pge@+4 pgd", expect_pgd_jcc_taken, NULL },
	{ "pgd_jcc_fall", CODE(code_pgd_jcc), "psb pge@+0 pgd@+4 pge@+10 pgd", expect_pgd_jcc_fall, NULL },
	/* the same with the processor in C6 while tracing is off (libipt's
	 * query decoder reads those packets), and with a PSB+ (tracing off)
	 * between TIP.PGD and TIP.PGE: the same branches */
	{ "pgd_jcc_power", CODE(code_pgd_jcc), "psb pge@+0 pgd@+10 pwr pge@+4 pgd", expect_pgd_jcc_taken, NULL },
	{ "pgd_jcc_psb", CODE(code_pgd_jcc), "psb pge@+0 pgd@+4 psb pge@+10 pgd", expect_pgd_jcc_fall, NULL },
	{ "pgd_jcc_other", CODE(code_pgd_jcc), "psb pge@+0 pgd@+7 pge@+4 pgd", expect_pgd_jcc_other, NULL },
	{ "pgd_jcc_loop", CODE(code_loop), "psb pge@+0 tnt:111 pgd@+9", expect_pgd_jcc_loop, NULL },
	{ "tail_async", CODE(code_tail), "psb pge@+0 tnt:0 fup@+6 pgd pge@+0 tnt:1 fup@+7 pgd", expect_tail_async,
	  NULL },
	/* the same with a PSB+ between the interrupt and the resumption: it
	 * loses nothing (tracing was off), and a window of the trace that
	 * starts there (pt_corners.sh) must continue the walk, which holds
	 * the interrupt's disable when its piece ends */
	{ "tail_async_psb", CODE(code_tail), "psb pge@+0 tnt:0 fup@+6 pgd psb pge@+0 tnt:1 fup@+7 pgd",
	  expect_tail_async, NULL },
	{ "tail_end", CODE(code_tail), "psb pge@+0 tnt:0", expect_tail_end, libipt_tail },
	{ "tail_bad", CODE(code_tail), "psb pge@+0 tnt:01", expect_tail_bad, libipt_tail },
	{ "cfe_intr", CODE(code_syscall), "psb pge@+0 raw:02130120 fup@+1 pgd pge@+1 pgd@k psb pge@+3 pgd@k",
	  expect_newer_pkt, NULL, NEWER_PKT21, expect_newer_pkt_lost, "CFE packet" },
	{ "evd_cfe_pf", CODE(code_syscall),
	  "psb pge@+0 raw:02530000100000000000000213010e fup@+1 pgd pge@+1 pgd@k psb pge@+3 pgd@k",
	  expect_newer_pkt, NULL, NEWER_PKT21, expect_newer_pkt_lost, "EVD packet" },
	{ "trig", CODE(code_syscall), "psb pge@+0 raw:d90001 pgd@k psb pge@+3 pgd@k", expect_newer_pkt, NULL,
	  NEWER_PKT22, expect_newer_pkt_lost, "TRIG packet" },
	{ "eretu", CODE(code_eretu), "psb pge@+0 tip@+5 pgd@k psb pge@+8 pgd@k", expect_eret, NULL, NEWER_INSN22,
	  expect_insn_lost, "ERETU" },
	{ "erets", CODE(code_erets), "psb pge@+0 tip@+5 pgd@k psb pge@+8 pgd@k", expect_eret, NULL, NEWER_INSN22,
	  expect_insn_lost, "ERETS" },
	{ "jmpabs", CODE(code_jmpabs), "psb pge@+0 tip@+c pgd@k psb pge@+f pgd@k", expect_jmpabs, NULL,
	  NEWER_INSN22, expect_insn_lost, "JMPABS" },
	{ "bdm64_cond", CODE(code_bdm64), "psbx@+0 tnt:0 abort fup@+8 tip@+c pgd@k psb pge@+f pgd@k",
	  expect_bdm64_cond, .cpu = "6/61/2", .erratum = "bdm64" },
	{ "bdm64_nocpu", CODE(code_bdm64), "psbx@+0 tnt:0 abort fup@+8 tip@+c pgd@k psb pge@+f pgd@k",
	  expect_bdm64_nocpu, .detail = "--cpu" },
	{ "bdm64_reach", CODE(code_bdm64), "psbx@+0 tnt:0 abort fup@+5 tip@+c pgd@k psb pge@+f pgd@k",
	  expect_bdm64_reach, .cpu = "6/61/2", .erratum = "bdm64" },
	{ "bdm64_ind", CODE(code_bdm64), "psbx@+8 tip@+f abort fup@+c tip@+f pgd@k", expect_bdm64_ind,
	  .cpu = "6/71/1", .erratum = "bdm64" },
	{ "bdm70_same", CODE(code_syscall), "psb@+0 pge@+0 pgd@k psb pge@+3 pgd@k", expect_bdm70,
	  .erratum = "bdm70" },
	{ "bdm70_same_cpu", CODE(code_syscall), "psb@+0 pge@+0 pgd@k psb pge@+3 pgd@k", expect_bdm70,
	  .cpu = "6/85/4", .erratum = "bdm70" },
	{ "bdm70_other", CODE(code_syscall), "psb@+3 pge@+0 pgd@k psb pge@+3 pgd@k", expect_bdm70_other,
	  .detail = "--cpu" },
	{ "ovf_after_jcc", CODE(code_pgd_jcc), "psb pge@+0 tnt:1 ovf fup@+4 pgd@k", expect_ovf_taken, NULL },
	{ "ovf_after_jcc_fall", CODE(code_pgd_jcc), "psb pge@+0 tnt:0 ovf fup@+4 pgd@k", expect_ovf_fall, NULL },
	{ "ovf_after_ret", CODE(code_ovf_ret), "psb pge@+0 tnt:1 ovf fup@+5 pgd@k", expect_ovf_ret, NULL },
	{ "ovf_after_ret_tip", CODE(code_ovf_ret), "psb pge@+0 tip@+5 ovf fup@+5 pgd@k", expect_ovf_ret, NULL },
	{ "ovf_after_jmp_ind", CODE(code_jmp_nomap), "psb pge@+0 tip@+3 ovf fup@+4 pgd@k", expect_ovf_jmp, NULL },
	{ "psb_broken", CODE(code_syscall), PSB_RESERVED_FUP " pge@+0 pgd@k psb pge@+3 pgd@k", expect_psb_broken, NULL },
	{ "call_nomap", CODE(code_call_nomap), "psb pge@+0 pgd@k psb pge@+6 pgd@k", expect_call_nomap,
	  libipt_call_nomap },
	{ "jmp_nomap", CODE(code_jmp_nomap), "psb pge@+0 tip@0x500000 pgd@k psb pge@+3 pgd@k", expect_jmp_nomap,
	  libipt_jmp_nomap },
	{ "retfq", CODE(code_retfq), "psb pge@+0 tip@+3 pgd@k", expect_retfq, NULL },
	{ "bdm70_other_cpu", CODE(code_syscall), "psb@+3 pge@+0 pgd@k psb pge@+3 pgd@k", expect_bdm70,
	  .cpu = "6/85/4", .erratum = "bdm70" },
	/* 32-bit code: from a TIP.PGE, from a PSB+ with tracing on, and
	 * with a PSB+ on the way (its MODE.Exec a status, not a change) */
	{ "moffs32", CODE(code_moffs32), "psb32 pge@+0 tnt:01 tip@+11 pgd@k", expect_moffs32, .erratum = "" },
	{ "moffs32_psb_on", CODE(code_moffs32), "psb32@+0 tnt:01 tip@+11 pgd@k", expect_moffs32,
	  .erratum = "" },
	{ "moffs32_psb_mid", CODE(code_moffs32), "psb32 pge@+0 tnt:01 psb32@+e tip@+11 pgd@k", expect_moffs32,
	  .erratum = "" },
	/* 64-bit code to 32-bit code and back */
	{ "modes", CODE(code_modes), "psb pge@+0 tnt:0 mode32 tip@+11 tnt:0 mode64 tip@+20 pgd@k", expect_modes,
	  .erratum = "" },
	/* the trace starting in 32-bit code (MODE.Exec before TIP.PGE) */
	{ "modes_pge32", CODE(code_modes), "psb mode32 pge@+11 tnt:0 mode64 tip@+20 pgd@k",
	  expect_modes_pge32, .erratum = "" },
	/* 16-bit code (MODE.Exec while tracing is off, before TIP.PGE) */
	{ "moffs16", CODE(code_moffs16), "psb mode16 pge@+0 tnt:01 tip@+f pgd@k", expect_moffs16, .erratum = "",
	  .base = BASE16 },
	{ "moffs16_high", CODE(code_moffs16), "psb mode16 pge@+0 tnt:01 tip@+f pgd@k", expect_moffs16_high,
	  .erratum = "" },
#undef CODE
};

/* Does the libipt loaded know what the case needs? */
static int libipt_knows(int newer)
{
	struct pt_version v = pt_library_version();
	unsigned ver = (unsigned)v.major << 8 | v.minor;

	switch (newer) {
	case NEWER_PKT21:
		return ver >= 0x201;
	case NEWER_PKT22:
	case NEWER_INSN22:
		return ver >= 0x202;
	default:
		return 1;
	}
}

/* ---- libipt's instruction flow decoder: the errata cases' second oracle ----
 *
 * Each branch instruction as "IP DEST INSNS": DEST where execution went
 * next ("fall" for the branch's own next instruction, "-" when tracing
 * stopped at it or the trace ends), INSNS the instructions up to and
 * including it since the previous branch.  An asynchronous branch (the
 * TSX abort) names where execution was ("from"): where the branch before
 * it went. */
struct flow {
	char *out;
	size_t n, cap;
	int held;	/* a branch whose destination is not known yet */
	uint64_t ip, size, insns;
};

static void flow_put(struct flow *f, const char *dest)
{
	if (!f->held)
		return;
	f->held = 0;
	f->n += (size_t)snprintf(f->out + f->n, f->cap - f->n, "0x%" PRIx64 " %s %" PRIu64 "\n", f->ip, dest,
				 f->insns);
	CHECK(f->n < f->cap, "flow: too long");
}

static void flow_to(struct flow *f, uint64_t ip)
{
	char d[32];

	if (f->held && ip == f->ip + f->size)
		snprintf(d, sizeof(d), "fall");
	else
		snprintf(d, sizeof(d), "0x%" PRIx64, ip);
	flow_put(f, d);
}

static int read_code(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip, void *ctx)
{
	const struct corner *c = ctx;

	(void)asid;
	if (ip < base || ip >= base + c->code_size)
		return -pte_nomap;
	if (size > base + c->code_size - ip)
		size = (size_t)(base + c->code_size - ip);
	memcpy(buf, c->code + (ip - base), size);
	return (int)size;
}

/* The case's trace through libipt's instruction flow decoder with its
 * erratum's workaround on, into out (the format above). */
static void insn_flow(const struct corner *c, uint8_t *pt, size_t n, char *out, size_t cap)
{
	struct pt_config cfg;
	struct pt_insn_decoder *dec;
	struct flow f = { out, 0, cap, 0, 0, 0, 0 };
	uint64_t count = 0;
	int st;

	out[0] = 0;
	pt_config_init(&cfg);
	cfg.begin = pt;
	cfg.end = pt + n;
	cfg.errata.bdm64 = !strcmp(c->erratum, "bdm64");	/* (both off for "") */
	cfg.errata.bdm70 = !strcmp(c->erratum, "bdm70");
	dec = pt_insn_alloc_decoder(&cfg);
	CHECK(dec && pt_image_set_callback(pt_insn_get_image(dec), read_code, (void *)c) == 0, "%s: insn decoder",
	      c->name);
	if (!dec)
		return;
	for (st = pt_insn_sync_forward(dec); st >= 0;) {
		struct pt_insn insn;
		struct pt_event ev;

		while (st >= 0 && (st & pts_event_pending)) {
			st = pt_insn_event(dec, &ev, sizeof(ev));
			if (st < 0)
				break;
			if (ev.type == ptev_async_branch)
				flow_to(&f, ev.variant.async_branch.from);
			else if (ev.type == ptev_async_disabled)
				flow_to(&f, ev.variant.async_disabled.at);
			else if (ev.type == ptev_disabled)
				flow_put(&f, "-");
		}
		if (st < 0)
			break;
		st = pt_insn_next(dec, &insn, sizeof(insn));
		if (st < 0)
			break;
		flow_to(&f, insn.ip);
		count++;
		if (insn.iclass != ptic_other && insn.iclass != ptic_error) {
			f.held = 1;
			f.ip = insn.ip;
			f.size = insn.size;
			f.insns = count;
			count = 0;
		}
	}
	flow_put(&f, "-");
	CHECK(st == -pte_eos, "%s: libipt's instruction flow decoder: %s", c->name, pt_errstr(pt_errcode(st)));
	pt_insn_free_decoder(dec);
}

/* expect's branches in insn_flow()'s terms: a far transfer's destination
 * is where tracing stopped ("-") unless it has one (a far jump with tracing
 * on), a branch not taken went to "fall". */
static void expect_flow(const char *expect, char *out, size_t cap)
{
	const char *l;
	size_t n = 0;

	out[0] = 0;
	for (l = expect; *l; l = strchr(l, '\n') + 1) {
		char ip[32], tgt[32], kind[16];
		unsigned taken, insns;

		if (sscanf(l, "%31s %31s %15s %u %u", ip, tgt, kind, &taken, &insns) != 5)
			continue;
		n += (size_t)snprintf(out + n, cap - n, "%s %s %u\n", ip,
				      !strcmp(kind, "far") && !strcmp(tgt, "0x0") ? "-" : !taken ? "fall" : tgt, insns);
		CHECK(n < cap, "expect: too long");
	}
}

static void write_file(const char *dir, const char *name, const char *ext, const void *p, size_t n)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, ext);
	f = fopen(path, "wb");
	CHECK(f && fwrite(p, 1, n, f) == n, "%s: cannot write", path);
	if (f)
		CHECK(fclose(f) == 0, "%s: cannot write", path);
}

int main(int argc, char **argv)
{
	char list[4096];
	size_t i, nl = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: test_pt_corners DIR\n");
		return 2;
	}
	for (i = 0; i < sizeof(corners) / sizeof(corners[0]); i++) {
		const struct corner *c = &corners[i];
		struct seq s;
		struct pt_config cfg;
		uint64_t size = 0;

		base = c->base ? c->base : BASE;
		memset(&s, 0, sizeof(s));
		pt_config_init(&cfg);
		cfg.begin = s.buf;
		cfg.end = s.buf + sizeof(s.buf);
		s.enc = pt_alloc_encoder(&cfg);
		CHECK(s.enc != NULL, "no encoder");
		if (!s.enc)
			break;
		script(&s, c->name, c->packets);
		CHECK(pt_enc_get_offset(s.enc, &size) == 0, "encoder offset");
		pt_free_encoder(s.enc);
		write_file(argv[1], c->name, ".pt", s.buf, (size_t)size);
		write_file(argv[1], c->name, ".code", c->code, c->code_size);
		if (c->newer == NEWER_NONE || libipt_knows(c->newer)) {
			write_file(argv[1], c->name, ".expect", c->expect, strlen(c->expect));
			if (c->libipt)
				write_file(argv[1], c->name, ".libipt", c->libipt, strlen(c->libipt));
			if (c->detail)
				write_file(argv[1], c->name, ".detail", c->detail, strlen(c->detail));
		} else if (c->newer == NEWER_INSN22) {
			/* ptconv's walker knows the instruction, libipt not */
			char why[160];
			struct pt_version v = pt_library_version();
			int n = snprintf(why, sizeof(why), "# libipt %u.%u does not decode %s\n%s", v.major, v.minor,
					 c->detail, c->lost);

			write_file(argv[1], c->name, ".expect", c->expect, strlen(c->expect));
			write_file(argv[1], c->name, ".libipt", why, (size_t)n);
			write_file(argv[1], c->name, ".detail", c->detail, strlen(c->detail));
		} else {
			write_file(argv[1], c->name, ".expect", c->lost, strlen(c->lost));
			write_file(argv[1], c->name, ".detail", c->detail, strlen(c->detail));
		}
		if (c->erratum) {
			/* the branches worked out by hand are libipt's (with the
			 * erratum's workaround on) */
			char got[1024], want[1024];

			insn_flow(c, s.buf, (size_t)size, got, sizeof(got));
			expect_flow(c->expect, want, sizeof(want));
			CHECK(!strcmp(got, want), "%s: libipt's instruction flow with %s:\n%sthe branches expected:\n%s",
			      c->name, c->erratum, got, want);
		}
		nl += (size_t)snprintf(list + nl, sizeof(list) - nl, "%s 0x%" PRIx64 " %s\n", c->name, base,
				       c->cpu ? c->cpu : "-");
		CHECK(nl < sizeof(list), "too many cases");
	}
	write_file(argv[1], "cases", "", list, nl);
	return check_result();
}
