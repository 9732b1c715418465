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
/* where a system call enters the kernel (user-only: tracing stops there) */
#define KERNEL 0xffffffff81000000ull

/* Packets in the order given by a script of words separated by spaces:
 *
 *	psb	PSB+ of 64-bit code (MODE.Exec) with tracing off
 *	psb@A	the same with tracing on at A (its FUP)
 *	pge@A, pgd@A, fup@A, tip@A	TIP.PGE, TIP.PGD, FUP, TIP with IP A
 *	pgd	TIP.PGD with no IP (suppressed)
 *	tnt:BITS	a TNT packet, its branches in order (tnt:110: taken,
 *		taken, not taken)
 *	pwr	power events only libipt's query decoder reads: PWRE (C6)
 *		then PWRX (woken by an interrupt)
 *
 * A: +HEX (from BASE), 0xHEX, or k (the kernel's KERNEL). */
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
		return BASE + strtoull(a + 1, NULL, 16);
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
		if (!strcmp(w, "psb")) {
			p.type = ppt_psb;
			put(s, &p);
			p.type = ppt_mode;
			p.payload.mode.leaf = pt_mol_exec;
			p.payload.mode.bits.exec.csl = 1;
			put(s, &p);
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

static const struct corner {
	const char *name;
	const char *code;
	size_t code_size;
	const char *packets;	/* script() */
	const char *expect;
	const char *libipt;	/* the libipt engine differs: why, then what it gives */
} corners[] = {
#define CODE(c) c, sizeof(c) - 1
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
	{ "tail_end", CODE(code_tail), "psb pge@+0 tnt:0", expect_tail_end, libipt_tail },
	{ "tail_bad", CODE(code_tail), "psb pge@+0 tnt:01", expect_tail_bad, libipt_tail },
#undef CODE
};

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
		write_file(argv[1], c->name, ".expect", c->expect, strlen(c->expect));
		if (c->libipt)
			write_file(argv[1], c->name, ".libipt", c->libipt, strlen(c->libipt));
		nl += (size_t)snprintf(list + nl, sizeof(list) - nl, "%s 0x%" PRIx64 "\n", c->name, (uint64_t)BASE);
		CHECK(nl < sizeof(list), "too many cases");
	}
	write_file(argv[1], "cases", "", list, nl);
	return check_result();
}
