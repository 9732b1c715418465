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

struct seq {
	uint8_t buf[4096];
	size_t size;
	struct pt_encoder *enc;
	struct pt_config cfg;
};

/* (the sequence's size is the encoder's offset at the end) */
static void put(struct seq *s, struct pt_packet p)
{
	CHECK(pt_enc_next(s->enc, &p) > 0, "encoder: packet type %d", p.type);
}

static struct pt_packet pk(enum pt_packet_type t)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = t;
	return p;
}

static struct pt_packet ipp(enum pt_packet_type t, uint64_t ip)
{
	struct pt_packet p = pk(t);

	p.payload.ip.ipc = ip ? pt_ipc_sext_48 : pt_ipc_suppressed;
	p.payload.ip.ip = ip;
	return p;
}

/* n bits, the first branch's in bit n - 1 */
static struct pt_packet tnt(int n, uint64_t bits)
{
	struct pt_packet p = pk(ppt_tnt_8);

	p.payload.tnt.bit_size = (uint8_t)n;
	p.payload.tnt.payload = bits;
	return p;
}

/* PSB+ of 64-bit code with tracing off (no FUP) or on at ip */
static void psb(struct seq *s, uint64_t ip)
{
	struct pt_packet m = pk(ppt_mode);

	put(s, pk(ppt_psb));
	m.payload.mode.leaf = pt_mol_exec;
	m.payload.mode.bits.exec.csl = 1;
	put(s, m);
	if (ip)
		put(s, ipp(ppt_fup, ip));
	put(s, pk(ppt_psbend));
}

static void pge(struct seq *s, uint64_t ip) { put(s, ipp(ppt_tip_pge, ip)); }
static void pgd(struct seq *s, uint64_t ip) { put(s, ipp(ppt_tip_pgd, ip)); }

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

/* the four bits in one TNT packet: the walker takes the first one alone
 * (it starts from a search) and the rest, from the second je, as a path
 * of its memo (tnt_path.h) */
static void seq_zerocall_path(struct seq *s)
{
	psb(s, 0);
	pge(s, BASE);
	put(s, tnt(4, 0xe));
	pgd(s, 0);
}

/* one bit per TNT packet: one branch at a time */
static void seq_zerocall_bits(struct seq *s)
{
	psb(s, 0);
	pge(s, BASE);
	put(s, tnt(1, 1));
	put(s, tnt(1, 1));
	put(s, tnt(1, 1));
	put(s, tnt(1, 0));
	pgd(s, 0);
}

static const struct corner {
	const char *name;
	const char *code;
	size_t code_size;
	void (*fn)(struct seq *);
	const char *expect;
	const char *libipt;	/* the libipt engine differs: why, then what it gives */
} corners[] = {
#define CODE(c) c, sizeof(c) - 1
	{ "zerocall_path", CODE(code_zerocall), seq_zerocall_path, expect_zerocall, NULL },
	{ "zerocall_bits", CODE(code_zerocall), seq_zerocall_bits, expect_zerocall, NULL },
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
		uint64_t off = 0;

		memset(&s, 0, sizeof(s));
		pt_config_init(&s.cfg);
		s.cfg.begin = s.buf;
		s.cfg.end = s.buf + sizeof(s.buf);
		s.enc = pt_alloc_encoder(&s.cfg);
		CHECK(s.enc != NULL, "no encoder");
		if (!s.enc)
			break;
		c->fn(&s);
		CHECK(pt_enc_get_offset(s.enc, &off) == 0, "encoder offset");
		s.size = (size_t)off;
		pt_free_encoder(s.enc);
		write_file(argv[1], c->name, ".pt", s.buf, s.size);
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
