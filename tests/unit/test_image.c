/* Images and branch tables, checked against oracles that share no code with
 * ptconv or Zydis:
 *   - hand-assembled code whose decoding comes from the Intel SDM encodings;
 *   - GNU objdump's disassembly of the same bytes / ELF files (--objdump);
 *   - the dynamic loader (dl_iterate_phdr) and /proc/self/maps for biases,
 *     and the build-id note the loader mapped into this very process.
 *
 *   test_image                   unit checks (no arguments)
 *   test_image --objdump [--threads N] FILE..  compare each ELF file's table
 *                                with objdump -d (built by N threads)
 *   test_image --bench FILE..    print table build speed and size
 *   test_image --cache-get DIR FILE HEXID [force]   one image cache lookup
 *   test_image --bias FILE START PGOFF   bias of a mapping (hex numbers)
 */
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/trace_event.h"
#include "images/image.h"
/* (the table cache's damage that keeps the checksum needs the internals) */
#include "images/image_int.h"
#include "images/table_cache.h"
#include "../lib/check.h"

/* ---- objdump listing ---------------------------------------------------- */

struct od_insn {
	uint64_t addr;
	uint64_t target;	/* direct target, 0 if none */
	uint8_t len;
	int8_t kind;		/* enum ptc_branch_kind, -1 not a branch, -2 (bad) */
	uint8_t ud;		/* kind -2: objdump decodes it, but the CPU raises #UD */
	uint8_t lock;		/* has a lock prefix */
	uint8_t cut;		/* .byte: objdump stopped at a symbol's end, inside
				 * an instruction that runs on into the next one */
	uint8_t prefix_only;	/* a prefix objdump lists alone (rex.R before
				 * another REX): part of the next instruction */
	/* filled by straight_line(): */
	uint32_t next_br;	/* index (in the listing) of the first branch at or after */
	uint32_t cnt;		/* instructions up to it, 0 when straight-line code ends first */
};

struct od_list {
	struct od_insn *v;
	size_t n, cap;
};

static const char *const od_prefixes[] = {
	"data16", "data32", "addr16", "addr32", "cs", "ds", "es", "ss", "fs", "gs",
	"lock", "rep", "repz", "repnz", "repe", "repne", "bnd", "notrack",
	"xacquire", "xrelease", "{disp8}", "{disp32}", "{vex}", "{vex3}", "{evex}", NULL
};

static int is_prefix(const char *tok)
{
	int i;

	if (!strncmp(tok, "rex", 3))
		return 1;
	for (i = 0; od_prefixes[i]; i++)
		if (!strcmp(tok, od_prefixes[i]))
			return 1;
	return 0;
}

/* Classify an AT&T mnemonic as objdump prints it. */
static int od_kind(const char *m, const char *ops)
{
	static const char *const far[] = {
		"syscall", "sysenter", "sysexit", "sysexitl", "sysexitq", "sysret",
		"sysretl", "sysretq", "int", "int3", "int1", "icebp", "into",
		"iret", "iretw", "iretl", "iretq", "uiret", "ljmp", "ljmpw", "ljmpl",
		"ljmpq", "lcall", "lcallw", "lcalll", "lcallq", "lret", "lretw",
		"lretl", "lretq", NULL
	};
	int i, ind = ops && ops[0] == '*';

	for (i = 0; far[i]; i++)
		if (!strcmp(m, far[i]))
			return PTC_BR_FAR;
	if (!strncmp(m, "ud", 2) && (m[2] == '0' || m[2] == '1' || m[2] == '2'))
		return PTC_BR_FAR;
	if (!strcmp(m, "jmp") || !strcmp(m, "jmpq") || !strcmp(m, "jmpw"))
		return ind ? PTC_BR_JMP_IND : PTC_BR_JMP;
	if (!strcmp(m, "call") || !strcmp(m, "callq") || !strcmp(m, "callw"))
		return ind ? PTC_BR_CALL_IND : PTC_BR_CALL;
	if (!strcmp(m, "ret") || !strcmp(m, "retq") || !strcmp(m, "retw"))
		return PTC_BR_RET;
	if (m[0] == 'j' || !strncmp(m, "loop", 4))
		return PTC_BR_COND;
	return -1;
}

static int od_parse_line(char *line, struct od_insn *in)
{
	char *p = line, *end, *tab, *tok, *ops;
	uint8_t bytes[32];
	uint64_t addr;
	int nbytes = 0, i;

	while (*p == ' ')
		p++;
	addr = strtoull(p, &end, 16);
	if (end == p || end[0] != ':' || end[1] != '\t')
		return 0;
	p = end + 2;
	tab = strchr(p, '\t');
	if (!tab) {
		return 0;	/* bytes without an instruction (not with -w) */
	}
	for (; p < tab; p++)
		if (p[0] != ' ' && p[1] != ' ' && p + 1 < tab) {
			if (nbytes < (int)sizeof(bytes))
				bytes[nbytes] = (uint8_t)strtoul((char[]){ p[0], p[1], 0 }, NULL, 16);
			nbytes++;
			p++;
		}
	memset(in, 0, sizeof(*in));
	in->addr = addr;
	in->len = (uint8_t)nbytes;
	p = tab + 1;
	p[strcspn(p, "\n")] = 0;
	if (strstr(p, "(bad)")) {
		in->kind = -2;
		return 1;
	}
	/* What objdump decodes but the CPU refuses (#UD; SDM vol. 2):
	 * a VEX or EVEX prefix after a legacy or REX prefix (2.3.2), a move
	 * to CS or to a segment register that does not exist (MOV). */
	for (i = 0; i < nbytes && i < (int)sizeof(bytes) &&
		    (bytes[i] == 0x66 || bytes[i] == 0xf2 || bytes[i] == 0xf3 || bytes[i] == 0xf0 ||
		     (bytes[i] & 0xf0) == 0x40);
	     i++)
		;
	if ((i > 0 && i < nbytes && i < (int)sizeof(bytes) &&
	     (bytes[i] == 0xc4 || bytes[i] == 0xc5 || bytes[i] == 0x62) &&
	     /* (LES, LDS, BOUND in 32-bit code) */
	     !strstr(p, "les") && !strstr(p, "lds") && !strstr(p, "bound")) ||
	    (strstr(p, "mov") && (strstr(p, ",%cs") || strstr(p, ",%?")))) {
		in->kind = -2;
		in->ud = 1;
		return 1;
	}
	if (!strncmp(p, ".byte", 5)) {
		in->kind = -1;
		in->cut = 1;
		return 1;
	}
	/* Skip prefixes; the first other token is the mnemonic. */
	for (;;) {
		while (*p == ' ')
			p++;
		tok = p;
		p += strcspn(p, " ");
		if (*p)
			*p++ = 0;
		if (!strcmp(tok, "lock"))
			in->lock = 1;
		if (!is_prefix(tok) || !*p)
			break;
	}
	if (is_prefix(tok) && !*p) {
		/* objdump lists a REX prefix that another prefix follows
		 * on a line of its own; the CPU (SDM vol. 2, 2.2.1) and
		 * Zydis take it as part of the instruction it precedes */
		in->prefix_only = 1;
		return 1;
	}
	while (*p == ' ')
		p++;
	ops = p;
	in->kind = (int8_t)od_kind(tok, ops);
	if ((in->kind == PTC_BR_JMP || in->kind == PTC_BR_CALL || in->kind == PTC_BR_COND))
		in->target = strtoull(ops, NULL, 16);
	return 1;
}

/* Read objdump's listing of a file; raw_base != 0 means raw x86-64 bytes
 * placed at raw_base. */
static int od_read(const char *file, uint64_t raw_base, const char *extra, struct od_list *l)
{
	const char *od = getenv("OBJDUMP");
	char cmd[4096], line[8192];
	struct od_insn pre = { 0 };
	FILE *f;

	if (!od || !*od)
		od = "objdump";
	if (raw_base)
		snprintf(cmd, sizeof(cmd),
			 "%s -D -z -w -b binary -m i386:x86-64 --adjust-vma=0x%" PRIx64 " %s '%s'",
			 od, raw_base, extra, file);
	else
		snprintf(cmd, sizeof(cmd), "%s -d -z -w %s '%s'", od, extra, file);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct od_insn in;

		if (!od_parse_line(line, &in))
			continue;
		if (pre.len && in.addr == pre.addr + pre.len) {
			/* the prefixes listed alone before it are its own */
			in.addr = pre.addr;
			in.len = (uint8_t)(in.len + pre.len);
		}
		pre.len = 0;
		if (in.prefix_only) {
			pre = in;
			continue;
		}
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 4096;
			l->v = realloc(l->v, l->cap * sizeof(*l->v));
			if (!l->v)
				abort();
		}
		l->v[l->n++] = in;
	}
	return pclose(f) == 0 && l->n ? 0 : -1;
}

/* For each instruction: the next branch by straight-line execution and the
 * instruction count to it, from the listing alone. */
static void straight_line(struct od_list *l)
{
	size_t i = l->n;

	while (i--) {
		struct od_insn *in = &l->v[i];
		const struct od_insn *nx = i + 1 < l->n ? &l->v[i + 1] : NULL;

		in->cnt = 0;
		in->next_br = UINT32_MAX;
		if (in->kind == -2)
			continue;
		if (in->kind >= 0) {
			in->cnt = 1;
			in->next_br = (uint32_t)i;
		} else if (nx && nx->addr == in->addr + in->len && nx->cnt) {
			in->cnt = nx->cnt + 1;
			in->next_br = nx->next_br;
		}
	}
}

/* The listing's instruction at addr, or NULL. */
static const struct od_insn *od_find(const struct od_list *l, uint64_t addr)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && l->v[lo].addr == addr ? &l->v[lo] : NULL;
}

static const char *kind_name(int k)
{
	static const char *const n[] = { "jmp", "jmp-ind", "call", "call-ind", "ret", "cond", "far" };

	return k >= 0 && k < PTC_BR_KIND_NR ? n[k] : "none";
}

/* Report the first few differences, count them all. */
#define DIFF(...)                                                              \
	do {                                                                   \
		if (shown++ < 20) {                                            \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
		}                                                              \
	} while (0)

/* Addresses inside instructions (a jump into the middle of one): objdump
 * disassembles from there (--start-address) until its listing re-joins an
 * instruction start of the full listing; the next branch and count must be
 * what that path gives, or a decode error when it meets a branch first (not
 * in the table) or undecodable bytes.  Returns the samples checked. */
static size_t check_mid_instruction(const struct ptc_image *img, const char *file,
				    uint64_t raw_base, const struct od_list *l, size_t samples,
				    int *diffs)
{
	const struct ptc_tbranch *br;
	size_t nbr, k, done = 0;
	int shown = *diffs;

	br = ptc_image_branches(img, &nbr);
	for (k = 0; k < samples && l->n; k++) {
		size_t i = (k + 1) * l->n / (samples + 1), m;
		struct od_list sub = { 0 };
		char extra[128];
		uint64_t x, want_ip = 0;
		uint32_t count = 0, idx = 0, n = 0;
		int want_rc = 1, soft = 0, rc;

		while (i < l->n && (l->v[i].len < 2 || l->v[i].kind == -2))
			i++;
		if (i >= l->n)
			break;
		x = l->v[i].addr + 1;
		snprintf(extra, sizeof(extra), "--start-address=0x%" PRIx64 " --stop-address=0x%" PRIx64,
			 x, x + 512);
		if (od_read(file, raw_base, extra, &sub) < 0) {
			free(sub.v);
			continue;
		}
		for (m = 0; m < sub.n; m++) {
			const struct od_insn *e = &sub.v[m], *orig;

			if (m == 0 && e->addr != x)
				break;	/* objdump did not start where asked */
			orig = od_find(l, e->addr);
			if (orig && e->addr != x) {
				want_rc = orig->cnt ? 0 : -ptc_err_decode;
				if (orig->cnt) {
					want_ip = l->v[orig->next_br].addr;
					count += orig->cnt;
				}
				break;
			}
			/* objdump accepts lock on any instruction; the CPU (and
			 * Zydis) raise #UD for most: no common ground. */
			if (e->lock)
				break;
			/* nor where objdump cut an instruction at a symbol's
			 * end (seen in i386 code, from inside padding) */
			if (e->cut)
				break;
			/* where objdump fails to decode what a CPU may run
			 * (reserved aliases such as df c9, an fxch): a decode
			 * error agrees, anything else is no opinion */
			soft = e->kind == -2 && !e->ud;
			if (e->kind == -2 || e->kind >= 0) {
				want_rc = -ptc_err_decode;
				break;
			}
			count++;
			if (m + 1 < sub.n && sub.v[m + 1].addr != e->addr + e->len)
				break;	/* a gap in the listing: no opinion */
		}
		free(sub.v);
		if (want_rc == 1)
			continue;	/* the window ended before the paths re-joined */
		rc = ptc_image_next_branch(img, x, &idx, &n);
		if (soft && rc != want_rc)
			continue;
		if (rc != want_rc || (rc == 0 && (idx >= nbr || br[idx].ip != want_ip || n != count)))
			DIFF("%s: from 0x%" PRIx64 " (inside an instruction): rc %d, 0x%" PRIx64
			     " after %u insns; objdump: rc %d, 0x%" PRIx64 " after %u", file, x, rc,
			     rc == 0 && idx < nbr ? br[idx].ip : 0, n, want_rc, want_ip, count);
		done++;
	}
	*diffs = shown;
	return done;
}

/* Every branch objdump lists is in the table with the same kind, length
 * and target, nothing else is; every instruction start objdump lists gets
 * the same next branch and instruction count. */
static void compare_with_objdump(const struct ptc_image *img, const char *file, uint64_t raw_base)
{
	struct od_list l = { 0 };
	const struct ptc_tbranch *br;
	size_t nbr, i, j = 0, nod = 0, bad = 0, counted = 0, mid;
	int shown = 0;

	if (od_read(file, raw_base, "", &l) < 0) {
		CHECK(0, "objdump failed on %s", file);
		free(l.v);
		return;
	}
	straight_line(&l);
	br = ptc_image_branches(img, &nbr);

	for (i = 0; i < l.n; i++) {
		const struct od_insn *in = &l.v[i];

		if (in->kind == -2)
			bad++;
		if (in->kind < 0)
			continue;
		nod++;
		while (j < nbr && br[j].ip < in->addr) {
			DIFF("%s: table has a branch at 0x%" PRIx64
			      " (%s) that objdump does not list", file, br[j].ip, kind_name(br[j].kind));
			j++;
		}
		if (j >= nbr || br[j].ip != in->addr) {
			DIFF("%s: objdump's %s at 0x%" PRIx64 " is not in the table",
			      file, kind_name(in->kind), in->addr);
			continue;
		}
		if (br[j].kind != in->kind || br[j].length != in->len ||
		    br[j].target != in->target)
			DIFF("%s: 0x%" PRIx64 ": table %s len %u target 0x%" PRIx64
			      ", objdump %s len %u target 0x%" PRIx64, file, in->addr,
			      kind_name(br[j].kind), br[j].length, br[j].target,
			      kind_name(in->kind), in->len, in->target);
		if (!(br[j].flags & PTC_TBF_TARGET_IS_FALL) != !(in->target && in->target == in->addr + in->len))
			DIFF("%s: 0x%" PRIx64 ": flags 0x%x", file, in->addr, br[j].flags);
		j++;
	}
	for (; j < nbr; j++)
		DIFF("%s: table has a branch at 0x%" PRIx64
		      " that objdump does not list", file, br[j].ip);
	CHECK_EQ_U64(nbr, nod);

	for (i = 0; i < l.n; i++) {
		const struct od_insn *in = &l.v[i];
		uint32_t idx = 0, n = 0;
		int rc;

		if (in->kind == -2)
			continue;
		rc = ptc_image_next_branch(img, in->addr, &idx, &n);
		if (in->cnt) {
			uint64_t want = l.v[in->next_br].addr;

			if (rc != 0 || idx >= nbr || br[idx].ip != want || n != in->cnt)
				DIFF("%s: from 0x%" PRIx64 ": rc %d next branch 0x%"
				      PRIx64 " after %u insns; objdump: 0x%" PRIx64 " after %u",
				      file, in->addr, rc, rc == 0 && idx < nbr ? br[idx].ip : 0, n,
				      want, in->cnt);
			counted++;
		} else {
			if (rc != -ptc_err_decode)
				DIFF(
			      "%s: from 0x%" PRIx64 " straight-line code ends without a branch,"
			      " got rc %d index %u", file, in->addr, rc, idx);
		}
	}

	/* The precomputed links agree with the listing as well (where it has
	 * an instruction: objdump has no opinion on inter-section padding). */
	for (i = 0; i < nbr; i++) {
		const struct od_insn *t = od_find(&l, br[i].target);
		const struct od_insn *f = od_find(&l, br[i].ip + br[i].length);

		if (br[i].target && t && t->cnt &&
		    (br[i].target_next >= nbr || br[br[i].target_next].ip != l.v[t->next_br].addr ||
		     br[i].target_insns != t->cnt))
			DIFF("%s: 0x%" PRIx64 ": target 0x%" PRIx64 " links to %u after %u insns;"
			     " objdump: 0x%" PRIx64 " after %u", file, br[i].ip, br[i].target,
			     br[i].target_next, br[i].target_insns, l.v[t->next_br].addr, t->cnt);
		if (br[i].target && t && !t->cnt && br[i].target_next != PTC_NO_BRANCH)
			DIFF("%s: 0x%" PRIx64 ": target reaches no branch, table links %u",
			     file, br[i].ip, br[i].target_next);
		if (f && f->cnt && i + 1 < nbr && l.v[f->next_br].addr == br[i + 1].ip) {
			if (br[i].fall_insns != f->cnt)
				DIFF("%s: 0x%" PRIx64 ": fall_insns %u, objdump %u", file, br[i].ip,
				     br[i].fall_insns, f->cnt);
		} else if (f && br[i].fall_insns) {
			DIFF("%s: 0x%" PRIx64 ": fall_insns %u, objdump: no straight line to the"
			     " next branch", file, br[i].ip, br[i].fall_insns);
		}
	}
	/* PTC_TEST_MID_SAMPLES: more samples, to look for disagreements */
	mid = check_mid_instruction(img, file, raw_base, &l,
				    getenv("PTC_TEST_MID_SAMPLES") ? (size_t)atoi(getenv("PTC_TEST_MID_SAMPLES")) : 12,
				    &shown);
	CHECK(shown == 0, "%s: %d differences from objdump", file, shown);
	printf("%s: %zu instructions, %zu branches, %zu (bad), %zu counts checked against objdump,"
	       " %zu mid-instruction addresses\n", file, l.n, nod, bad, counted, mid);
	free(l.v);
}

/* A new temporary file under $TMPDIR (default /tmp). */
static int tmp_file(char *path, size_t len, const char *what)
{
	const char *dir = getenv("TMPDIR");

	snprintf(path, len, "%s/ptc-test-%s.XXXXXX", dir && *dir ? dir : "/tmp", what);
	return mkstemp(path);
}

/* ---- hand-assembled code ------------------------------------------------ */

/* Encodings from the Intel SDM, vol. 2. */
static const uint8_t code[] = {
	/* 0x1000 */ 0x55,				/* push %rbp */
	/* 0x1001 */ 0x48, 0x89, 0xe5,			/* mov %rsp,%rbp */
	/* 0x1004 */ 0x74, 0x05,			/* je 0x100b */
	/* 0x1006 */ 0xe8, 0x00, 0x00, 0x00, 0x00,	/* call 0x100b (the next insn) */
	/* 0x100b */ 0xff, 0xd0,			/* call *%rax */
	/* 0x100d */ 0xff, 0xe0,			/* jmp *%rax */
	/* 0x100f */ 0x0f, 0x05,			/* syscall */
	/* 0x1011 */ 0xe2, 0xfe,			/* loop 0x1011 */
	/* 0x1013 */ 0xe3, 0x00,			/* jrcxz 0x1015 */
	/* 0x1015 */ 0x90,				/* nop */
	/* 0x1016 */ 0xeb, 0xf8,			/* jmp 0x1010: inside the syscall */
	/* 0x1018 */ 0xc3,				/* ret */
	/* 0x1019 */ 0xcb,				/* lret (far) */
	/* 0x101a */ 0xff, 0x18,			/* lcall *(%rax) (far) */
	/* 0x101c */ 0x0f, 0x0b,			/* ud2 */
	/* 0x101e */ 0xcd, 0x80,			/* int $0x80 */
	/* 0x1020 */ 0x0f, 0x84, 0x00, 0x00, 0x00, 0x00, /* je 0x1026 (= fall-through) */
	/* 0x1026 */ 0x06,				/* push %es: invalid in 64-bit mode */
	/* 0x1027 */ 0x48, 0x31, 0xc0,			/* xor %rax,%rax */
	/* 0x102a */ 0xf3, 0xc3,			/* repz ret */
	/* 0x102c */ 0x3e, 0xff, 0xe0,			/* notrack jmp *%rax */
	/* 0x102f */ 0x66, 0x90,			/* xchg %ax,%ax */
	/* 0x1031 */ 0xe9, 0x00, 0x00, 0x01, 0x00,	/* jmp 0x11036: outside the image */
};

static const struct {
	uint64_t ip, target;
	int kind, len;
} code_branches[] = {
	{ 0x1004, 0x100b, PTC_BR_COND, 2 },
	{ 0x1006, 0x100b, PTC_BR_CALL, 5 },
	{ 0x100b, 0, PTC_BR_CALL_IND, 2 },
	{ 0x100d, 0, PTC_BR_JMP_IND, 2 },
	{ 0x100f, 0, PTC_BR_FAR, 2 },
	{ 0x1011, 0x1011, PTC_BR_COND, 2 },
	{ 0x1013, 0x1015, PTC_BR_COND, 2 },
	{ 0x1016, 0x1010, PTC_BR_JMP, 2 },
	{ 0x1018, 0, PTC_BR_RET, 1 },
	{ 0x1019, 0, PTC_BR_FAR, 1 },
	{ 0x101a, 0, PTC_BR_FAR, 2 },
	{ 0x101c, 0, PTC_BR_FAR, 2 },
	{ 0x101e, 0, PTC_BR_FAR, 2 },
	{ 0x1020, 0x1026, PTC_BR_COND, 6 },
	{ 0x102a, 0, PTC_BR_RET, 2 },
	{ 0x102c, 0, PTC_BR_JMP_IND, 3 },
	{ 0x1031, 0x11036, PTC_BR_JMP, 5 },
};

#define NCODE_BR (sizeof(code_branches) / sizeof(code_branches[0]))

static void test_raw_code(void)
{
	struct ptc_image *img = NULL;
	const struct ptc_tbranch *br;
	struct ptc_image_stats st;
	char err[256] = "";
	uint8_t buf[8];
	uint32_t idx, n;
	int64_t bias;
	size_t nbr, i;
	int rc;

	rc = ptc_image_from_bytes(&img, "hand", code, sizeof(code), 0x1000, err, sizeof(err));
	CHECK(rc == 0, "from_bytes: %s", err);
	if (rc)
		return;
	br = ptc_image_branches(img, &nbr);
	CHECK_EQ_U64(nbr, NCODE_BR);
	for (i = 0; i < nbr && i < NCODE_BR; i++) {
		CHECK_EQ_U64(br[i].ip, code_branches[i].ip);
		CHECK(br[i].kind == code_branches[i].kind, "0x%" PRIx64 ": kind %s, want %s",
		      br[i].ip, kind_name(br[i].kind), kind_name(code_branches[i].kind));
		CHECK_EQ_U64(br[i].length, code_branches[i].len);
		CHECK_EQ_U64(br[i].target, code_branches[i].target);
	}
	if (nbr == NCODE_BR) {
		/* je 0x100b: target is the indirect call [2], 1 insn; fall-through
		 * reaches the call [1] in 1 insn. */
		CHECK_EQ_U64(br[0].target_next, 2);
		CHECK_EQ_U64(br[0].target_insns, 1);
		CHECK_EQ_U64(br[0].fall_insns, 1);
		/* call to the next instruction: target and fall-through agree. */
		CHECK_EQ_U64(br[1].target_next, 2);
		CHECK_EQ_U64(br[1].target_insns, 1);
		CHECK_EQ_U64(br[1].fall_insns, 1);
		/* loop to itself. */
		CHECK_EQ_U64(br[5].target_next, 5);
		CHECK_EQ_U64(br[5].target_insns, 1);
		/* jrcxz: nop, then jmp [7]: 2 insns either way. */
		CHECK_EQ_U64(br[6].target_next, 7);
		CHECK_EQ_U64(br[6].target_insns, 2);
		CHECK_EQ_U64(br[6].fall_insns, 2);
		/* jmp 0x1010 lands inside the syscall: 05 e2 fe e3 00 decodes as
		 * add $0xe3fee2,%eax (5 bytes), re-joining at the nop 0x1015:
		 * add, nop, jmp = 3 instructions to branch [7] itself. */
		CHECK_EQ_U64(br[7].target_next, 7);
		CHECK_EQ_U64(br[7].target_insns, 3);
		/* je 0x1026: the target is an undecodable byte, and so is the
		 * fall-through's path to the next branch. */
		CHECK_EQ_U64(br[13].target_next, PTC_NO_BRANCH);
		CHECK_EQ_U64(br[13].fall_insns, 0);
		/* notrack jmp: xchg, then the jmp [16]. */
		CHECK_EQ_U64(br[15].fall_insns, 2);
		/* The last branch has no next branch to fall into; its target
		 * is in no code of this image. */
		CHECK_EQ_U64(br[16].fall_insns, 0);
		CHECK_EQ_U64(br[16].target_next, PTC_NO_BRANCH);
		CHECK_EQ_U64(br[16].flags, PTC_TBF_TARGET_OUTSIDE);
		/* Target = fall-through: the call to the next insn, je +0. */
		CHECK_EQ_U64(br[1].flags, PTC_TBF_TARGET_IS_FALL);
		CHECK_EQ_U64(br[13].flags, PTC_TBF_TARGET_IS_FALL);
		CHECK_EQ_U64(br[0].flags, 0);
		CHECK_EQ_U64(br[7].flags, 0);
	}
	rc = ptc_image_next_branch(img, 0x1000, &idx, &n);
	CHECK(rc == 0 && idx == 0 && n == 3, "0x1000: rc %d idx %u n %u", rc, idx, n);
	rc = ptc_image_next_branch(img, 0x1027, &idx, &n);
	CHECK(rc == 0 && idx == 14 && n == 2, "0x1027: rc %d idx %u n %u", rc, idx, n);
	rc = ptc_image_next_branch(img, 0x1010, &idx, &n);
	CHECK(rc == 0 && idx == 7 && n == 3, "0x1010: rc %d idx %u n %u", rc, idx, n);
	/* 0x1026 is the invalid byte. */
	CHECK_EQ_U64(ptc_image_next_branch(img, 0x1026, &idx, &n), -ptc_err_decode);
	/* 0x1007: 00 00 00 00 ff d0 ...: add %al,(%rax) twice, then the
	 * boundary 0x100b (call *%rax): 3 instructions. */
	rc = ptc_image_next_branch(img, 0x1007, &idx, &n);
	CHECK(rc == 0 && idx == 2 && n == 3, "0x1007: rc %d idx %u n %u", rc, idx, n);
	/* 0x1005: 05 e8 00 00 00 = add $0xe8,%eax, then 00 ff = add %bh,%bh
	 * at 0x100a, which swallows the call at 0x100b: 0x100c d0 e0 = shl %al,
	 * 0x100e e0 0f = loopne: a branch that is not in the table. */
	CHECK_EQ_U64(ptc_image_next_branch(img, 0x1005, &idx, &n), -ptc_err_decode);
	rc = ptc_image_next_branch(img, 0x102f, &idx, &n);
	CHECK(rc == 0 && idx == 16 && n == 2, "0x102f: rc %d idx %u n %u", rc, idx, n);
	CHECK_EQ_U64(ptc_image_next_branch(img, 0xfff, &idx, &n), -ptc_err_not_found);
	CHECK_EQ_U64(ptc_image_next_branch(img, 0x1000 + sizeof(code), &idx, &n), -ptc_err_not_found);

	CHECK_EQ_U64(ptc_image_read(img, 0x102e, buf, sizeof(buf)), 8);
	CHECK(buf[0] == 0xe0 && buf[1] == 0x66 && buf[2] == 0x90 && buf[3] == 0xe9, "read");
	CHECK_EQ_U64(ptc_image_read(img, 0x1034, buf, sizeof(buf)), 2);
	CHECK_EQ_U64(ptc_image_read(img, 0x2000, buf, sizeof(buf)), 0);
	CHECK(ptc_image_bias(img, 0x7f0000001000, 0, &bias) == 0 &&
	      bias == 0x7f0000000000, "raw bias");
	ptc_image_stats(img, &st);
	CHECK_EQ_U64(st.bad_bytes, 1);
	CHECK_EQ_U64(st.first_bad, 0x1026);
	/* 22 instructions (and one invalid byte) per the listing above. */
	CHECK_EQ_U64(st.insns, 22);
	CHECK(strcmp(ptc_image_name(img), "hand") == 0, "name");

	/* The same bytes through objdump, when it is installed. */
	if (system("objdump --version >/dev/null 2>&1") == 0) {
		char path[4096];
		int fd = tmp_file(path, sizeof(path), "image");

		if (fd >= 0) {
			int ok = write(fd, code, sizeof(code)) == (ssize_t)sizeof(code);

			close(fd);
			if (ok)
				compare_with_objdump(img, path, 0x1000);
			unlink(path);
		}
	}
	ptc_image_free(img);
}

/* ---- the loader as the oracle ------------------------------------------- */

struct loaded {
	char name[4096];
	uint64_t addr;		/* dlpi_addr: the bias */
	uint8_t id[20];
	size_t idsz;
};

static struct loaded objs[64];
static int nobjs;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded *o;
	int i;

	if (nobjs == 64)
		return 1;
	o = &objs[nobjs++];
	memset(o, 0, sizeof(*o));
	if (info->dlpi_name && info->dlpi_name[0])
		snprintf(o->name, sizeof(o->name), "%s", info->dlpi_name);
	else if (!realpath("/proc/self/exe", o->name))
		o->name[0] = 0;
	o->addr = info->dlpi_addr;
	/* The build-id note as the loader mapped it. */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + 12 <= end) {
			uint32_t nsz, dsz, type;

			memcpy(&nsz, p, 4);
			memcpy(&dsz, p + 4, 4);
			memcpy(&type, p + 8, 4);
			p += 12;
			if (type == 3 && nsz == 4 && !memcmp(p, "GNU", 4) && dsz <= 20) {
				memcpy(o->id, p + 4, dsz);
				o->idsz = dsz;
				break;
			}
			p += (nsz + 3) / 4 * 4 + (dsz + 3) / 4 * 4;
		}
	}
	return 0;
}

static void test_bias_and_build_id(void)
{
	char line[8192], err[512];
	FILE *maps;
	int i, matched = 0;

	dl_iterate_phdr(phdr_cb, NULL);
	maps = fopen("/proc/self/maps", "r");
	if (!maps) {
		CHECK(0, "/proc/self/maps: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long start, end, pgoff;
		char perms[8], path[4096], real[4096];
		struct ptc_image *img;
		int64_t bias;
		int rc;

		path[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start, &end, perms, &pgoff,
			   path) < 4 || perms[2] != 'x' || path[0] != '/')
			continue;
		if (!realpath(path, real))
			continue;
		for (i = 0; i < nobjs; i++) {
			char oreal[4096];

			if (realpath(objs[i].name, oreal) && !strcmp(oreal, real))
				break;
		}
		if (i == nobjs)
			continue;
		rc = ptc_image_load_elf(&img, real, objs[i].idsz ? objs[i].id : NULL,
					objs[i].idsz, err, sizeof(err));
		CHECK(rc == 0, "%s: %s", real, err);
		if (rc)
			continue;
		rc = ptc_image_bias(img, start, pgoff, &bias);
		CHECK(rc == 0 && (uint64_t)bias == objs[i].addr,
		      "%s mapped at 0x%llx pgoff 0x%llx: rc %d bias 0x%" PRIx64 ", loader says 0x%"
		      PRIx64, real, start, pgoff, rc, (uint64_t)bias, objs[i].addr);
		if (objs[i].idsz) {
			size_t sz;
			const uint8_t *id = ptc_image_build_id(img, &sz);

			CHECK(id && sz == objs[i].idsz && !memcmp(id, objs[i].id, sz),
			      "%s: build-id differs from the loaded note", real);
		}
		matched++;
		ptc_image_free(img);
	}
	fclose(maps);
	/* This program, libc, libelf and Zydis at least. */
	CHECK(matched >= 3, "only %d executable mappings matched", matched);
}

static void test_errors_and_cache(void)
{
	struct ptc_image_cache_options opt = { 0 };
	struct ptc_image_cache *c;
	const struct ptc_image *a, *b;
	struct ptc_image *img;
	uint8_t wrong[20];
	char err[1024], self[4096], hex[41];
	size_t i, idsz;
	int rc;

	if (!realpath("/proc/self/exe", self))
		return;
	/* objs[0] is this program (dl_iterate_phdr lists it first). */
	idsz = objs[0].idsz;
	if (!idsz) {
		fprintf(stderr, "note: %s has no build-id; skipping build-id checks\n", self);
		return;
	}
	memcpy(wrong, objs[0].id, idsz);
	wrong[0] ^= 0xff;
	for (i = 0; i < idsz; i++)
		sprintf(hex + 2 * i, "%02x", wrong[i]);

	rc = ptc_image_load_elf(&img, self, wrong, idsz, err, sizeof(err));
	CHECK(rc == -ptc_err_mismatch, "wrong build-id: rc %d", rc);
	CHECK(strstr(err, self) && strstr(err, hex), "message names file and id: %s", err);

	rc = ptc_image_load_elf(&img, "/nonexistent/ptc-image", NULL, 0, err, sizeof(err));
	CHECK(rc == -ptc_err_not_found && strstr(err, "/nonexistent/ptc-image"), "missing: %d %s",
	      rc, err);

	CHECK(ptc_image_cache_new(&c, &opt) == 0, "cache");
	rc = ptc_image_cache_get(c, self, objs[0].id, idsz, &a, err, sizeof(err));
	CHECK(rc == 0 && a, "cache get: %s", err);
	rc = ptc_image_cache_get(c, self, objs[0].id, idsz, &b, err, sizeof(err));
	CHECK(rc == 0 && a == b, "cache loads once");
	rc = ptc_image_cache_get(c, self, wrong, idsz, &b, err, sizeof(err));
	CHECK(rc == -ptc_err_mismatch && !b, "cache mismatch rc %d", rc);
	CHECK(strstr(err, self) && strstr(err, hex), "cache message: %s", err);
	err[0] = 0;
	rc = ptc_image_cache_get(c, self, wrong, idsz, &b, err, sizeof(err));
	CHECK(rc == -ptc_err_mismatch && strstr(err, hex), "cached failure: %d %s", rc, err);
	rc = ptc_image_cache_get(c, "/nonexistent/lib.so", wrong, idsz, &b, err, sizeof(err));
	CHECK(rc == -ptc_err_not_found && strstr(err, "/nonexistent/lib.so") && strstr(err, hex),
	      "cache missing: %d %s", rc, err);
	/* Many entries (the index grows), each answered from the cache. */
	for (i = 0; i < 2 * 300; i++) {
		char name[64];

		snprintf(name, sizeof(name), "/nonexistent/lib%zu.so", i % 300);
		rc = ptc_image_cache_get(c, name, i % 2 ? wrong : NULL, i % 2 ? idsz : 0, &b,
					 err, sizeof(err));
		CHECK(rc == -ptc_err_not_found && strstr(err, name), "%s: %d %s", name, rc, err);
	}
	rc = ptc_image_cache_get(c, self, objs[0].id, idsz, &b, err, sizeof(err));
	CHECK(rc == 0 && a == b, "cache keeps the first image after growing");
	/* Another name for the same file (as /lib and /usr/lib on merged-usr
	 * systems): the same image, not a second load. */
	{
		char link[4096];
		int fd = tmp_file(link, sizeof(link), "link");

		if (fd >= 0) {
			close(fd);
			unlink(link);
			if (symlink(self, link) == 0) {
				rc = ptc_image_cache_get(c, link, objs[0].id, idsz, &b, err, sizeof(err));
				CHECK(rc == 0 && a == b, "symlinked name: rc %d, same image %d", rc, a == b);
				unlink(link);
			}
		}
	}
	ptc_image_cache_free(c);

	opt.force = 1;
	CHECK(ptc_image_cache_new(&c, &opt) == 0, "cache");
	rc = ptc_image_cache_get(c, self, wrong, idsz, &b, err, sizeof(err));
	CHECK(rc == 0 && b, "--force uses the mismatching file: %d %s", rc, err);
	ptc_image_cache_free(c);
}

/* The vDSO of this process, dumped from memory as perf does: an ELF image
 * given as bytes.  The loader tells where it is mapped (dl_iterate_phdr's
 * linux-vdso.so.1 entry), objdump disassembles the dump. */
static void test_vdso(void)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), start = 0, end = 0;
	char line[512], err[512], path[4096];
	struct ptc_image *img;
	const struct loaded *o = NULL;
	int64_t bias;
	FILE *maps;
	int i, rc, fd;

	if (!base) {
		fprintf(stderr, "note: no vDSO in this process\n");
		return;
	}
	maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long long a, b;

		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &a, &b) == 2) {
			start = a;
			end = b;
		}
	}
	if (maps)
		fclose(maps);
	CHECK(start == base, "[vdso] at 0x%" PRIx64 ", AT_SYSINFO_EHDR 0x%" PRIx64, start, base);
	if (start != base)
		return;
	for (i = 0; i < nobjs; i++)
		if (strstr(objs[i].name, "vdso"))
			o = &objs[i];
	rc = ptc_image_from_bytes(&img, "[vdso]", (const uint8_t *)(uintptr_t)start,
				  (size_t)(end - start), start, err, sizeof(err));
	CHECK(rc == 0, "vdso: %s", err);
	if (rc)
		return;
	rc = ptc_image_bias(img, start, 0, &bias);
	CHECK(rc == 0, "vdso bias rc %d", rc);
	if (o)
		CHECK((uint64_t)bias == o->addr, "vdso bias 0x%" PRIx64 ", loader 0x%" PRIx64,
		      (uint64_t)bias, o->addr);
	fd = tmp_file(path, sizeof(path), "vdso");
	if (fd >= 0) {
		if (write(fd, (const void *)(uintptr_t)start, (size_t)(end - start)) ==
		    (ssize_t)(end - start) && system("objdump --version >/dev/null 2>&1") == 0)
			compare_with_objdump(img, path, 0);
		close(fd);
		unlink(path);
	}
	ptc_image_free(img);
}

/* Truncated and corrupted copies of this program: an error, never a crash
 * (the sanitizer build turns any bad access into a failure). */
static void test_corrupt(void)
{
	char self[4096], path[4096], err[512];
	struct ptc_image *img;
	uint8_t *data;
	struct stat st;
	FILE *f;
	size_t cuts[] = { 0, 1, 16, 63, 64, 100, 200, 1000, 4096, 8192 };
	size_t i;
	int fd, rc;

	if (!realpath("/proc/self/exe", self) || stat(self, &st) != 0)
		return;
	data = malloc((size_t)st.st_size);
	f = fopen(self, "rb");
	if (!data || !f || fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		CHECK(0, "read %s", self);
		goto out;
	}
	fd = tmp_file(path, sizeof(path), "corrupt");
	if (fd < 0)
		goto out;
	close(fd);
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		FILE *o = fopen(path, "wb");

		if (!o)
			break;
		fwrite(data, 1, cuts[i], o);
		fclose(o);
		rc = ptc_image_load_elf(&img, path, NULL, 0, err, sizeof(err));
		CHECK(rc < 0 && strstr(err, path), "cut at %zu: rc %d %s", cuts[i], rc, err);
		if (rc == 0)
			ptc_image_free(img);
	}
	/* Hostile headers: bytes of the ELF header and of every field of the
	 * program headers that says where or how big something is, set to
	 * 0xff, 0x7f and 0 in turn (huge counts, offsets and sizes). */
	for (i = 16; i < 64 + 14 * 56 && i < (size_t)st.st_size; i++) {
		static const uint8_t vals[] = { 0xff, 0x7f, 0x00 };
		static const uint8_t phdr_bytes[] = { 0, 4, 8, 12, 15, 16, 20, 23, 32, 36, 39, 40 };
		size_t v, k;

		if (i >= 64) {
			for (k = 0; k < sizeof(phdr_bytes); k++)
				if ((i - 64) % 56 == phdr_bytes[k])
					break;
			if (k == sizeof(phdr_bytes))
				continue;
		}
		for (v = 0; v < sizeof(vals); v++) {
			uint8_t keep = data[i];

			data[i] = vals[v];
			rc = ptc_image_from_bytes(&img, "corrupt", data, (size_t)st.st_size, 0,
						  err, sizeof(err));
			data[i] = keep;
			if (rc == 0)
				ptc_image_free(img);
			else
				CHECK(strstr(err, "corrupt"), "byte %zu: message without the name: %s",
				      i, err);
		}
	}
	unlink(path);
	/* Raw garbage that happens to start like an ELF. */
	memcpy(data, "\177ELF", 4);
	rc = ptc_image_from_bytes(&img, "garbage", data, 40, 0, err, sizeof(err));
	CHECK(rc < 0, "short ELF bytes accepted");
out:
	if (f)
		fclose(f);
	free(data);
}

/* An AArch64 ELF (a real one from ../shared): a clear "unsupported". */
/* Image i (path) built with one thread and with n: the same table, the
 * same statistics and the same answer from every address of the code. */
static void same_with_threads(const char *path, int n)
{
	struct ptc_image *one, *many;
	struct ptc_image_stats s1, s2;
	const struct ptc_tbranch *b1, *b2;
	size_t n1, n2;
	uint64_t a, lo, hi, diff = 0;
	char err[512];

	if (ptc_image_load_elf(&one, path, NULL, 0, err, sizeof(err)) < 0) {
		CHECK(0, "%s", err);
		return;
	}
	if (ptc_image_load_elf_mt(&many, path, NULL, 0, n, err, sizeof(err)) < 0) {
		CHECK(0, "%s (%d threads)", err, n);
		ptc_image_free(one);
		return;
	}
	ptc_image_stats(one, &s1);
	ptc_image_stats(many, &s2);
	CHECK(s1.insns == s2.insns && s1.branches == s2.branches && s1.bad_bytes == s2.bad_bytes &&
	      s1.first_bad == s2.first_bad, "%s, %d threads: %" PRIu64 " instructions, %" PRIu64
	      " bad bytes; one thread: %" PRIu64 ", %" PRIu64, path, n, s2.insns, s2.bad_bytes,
	      s1.insns, s1.bad_bytes);
	b1 = ptc_image_branches(one, &n1);
	b2 = ptc_image_branches(many, &n2);
	CHECK(n1 == n2 && (!n1 || !memcmp(b1, b2, n1 * sizeof(*b1))), "%s, %d threads: the same branch table",
	      path, n);
	if (n1) {
		lo = b1[0].ip > 64 ? b1[0].ip - 64 : 0;
		hi = b1[n1 - 1].ip + 64;
		for (a = lo; a < hi; a++) {
			uint32_t i1 = 0, c1 = 0, i2 = 0, c2 = 0;
			int r1 = ptc_image_next_branch(one, a, &i1, &c1);
			int r2 = ptc_image_next_branch(many, a, &i2, &c2);
			diff += r1 != r2 || i1 != i2 || c1 != c2;
		}
		CHECK(!diff, "%s, %d threads: %" PRIu64 " addresses answered otherwise", path, n, diff);
	}
	ptc_image_free(one);
	ptc_image_free(many);
}

/* The branch table does not depend on how many threads build it: the C
 * library, and a copy of it whose code has stretches of random bytes
 * (undecodable bytes, instructions across the helpers' cuts). */
static void test_threads(void)
{
	static const int ns[] = { 2, 3, 8, 23 };
	const char *libc = NULL;
	char path[4096];
	uint8_t *data = NULL;
	struct stat st;
	FILE *f;
	size_t i, k;
	int fd;

	for (i = 0; i < (size_t)nobjs; i++)
		if (strstr(objs[i].name, "/libc.so"))
			libc = objs[i].name;
	if (!libc || stat(libc, &st) != 0) {
		printf("# no C library found: threaded builds not checked\n");
		return;
	}
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		same_with_threads(libc, ns[i]);
	data = malloc((size_t)st.st_size);
	f = fopen(libc, "rb");
	if (!data || !f || fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		CHECK(0, "read %s", libc);
		goto out;
	}
	/* every 40 KiB from 256 KiB on (inside the code), 3000 random bytes */
	srand(7);
	for (i = 256u << 10; i + 3000 < (size_t)st.st_size / 2; i += 40u << 10)
		for (k = 0; k < 3000; k++)
			data[i + k] = (uint8_t)rand();
	fd = tmp_file(path, sizeof(path), "threads");
	if (fd < 0 || write(fd, data, (size_t)st.st_size) != (ssize_t)st.st_size) {
		CHECK(0, "write %s", path);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		same_with_threads(path, ns[i]);
	unlink(path);
out:
	if (f)
		fclose(f);
	free(data);
}

static void test_foreign_arch(void)
{
	const char *shared = getenv("PTC_SHARED");
	char path[4096], err[512];
	struct ptc_image *img;
	struct stat st;
	int rc;

	if (!shared || !*shared)
		return;
	snprintf(path, sizeof(path), "%s/data/cs_etm/etm_test_loop", shared);
	if (stat(path, &st) != 0) {
		fprintf(stderr, "note: %s absent; AArch64 check skipped\n", path);
		return;
	}
	rc = ptc_image_load_elf(&img, path, NULL, 0, err, sizeof(err));
	CHECK(rc == -ptc_err_unsupported && strstr(err, path) && strstr(err, "not an x86 ELF"),
	      "AArch64 ELF: rc %d: %s", rc, err);
	if (rc == 0)
		ptc_image_free(img);
}

/* ---- the table cache (table_cache.h) -------------------------------------- */

/* a and b hold the same table: every branch, and the same answers. */
static void same_table(const struct ptc_image *a, const struct ptc_image *b, const char *what)
{
	const struct ptc_tbranch *ba, *bb;
	size_t na, nb, i;

	ba = ptc_image_branches(a, &na);
	bb = ptc_image_branches(b, &nb);
	CHECK(na == nb && !memcmp(ba, bb, na * sizeof(*ba)), "%s: branches differ (%zu, %zu)", what, na, nb);
	CHECK(a->nwords == b->nwords && !memcmp(a->bits, b->bits, (a->nwords + 1) * sizeof(*a->bits)) &&
	      !memcmp(a->rank, b->rank, (a->nwords + 1) * sizeof(*a->rank)) &&
	      !memcmp(a->first_br, b->first_br, (a->nwords + 1) * sizeof(*a->first_br)) &&
	      a->nruns == b->nruns && !memcmp(a->runs, b->runs, a->nruns * sizeof(*a->runs)) &&
	      a->ninsns == b->ninsns && a->bad_bytes == b->bad_bytes && a->first_bad == b->first_bad,
	      "%s: boundary index or runs differ", what);
	for (i = 0; i < na && na == nb; i += 97) {
		uint32_t ia, ib, ka, kb;
		int ra = ptc_image_next_branch(a, ba[i].ip + ba[i].length, &ia, &ka);
		int rb = ptc_image_next_branch(b, ba[i].ip + ba[i].length, &ib, &kb);

		CHECK(ra == rb && (ra < 0 || (ia == ib && ka == kb)), "%s: lookup after 0x%" PRIx64 " differs",
		      what, ba[i].ip);
	}
}

/* This program's tables: built and stored, then read back the same; a
 * file made to lie (its checksum right, a field wrong) is not used. */
static void test_table_cache(void)
{
	char self[4096], dir[4096], err[512];
	struct ptc_image *built = NULL, *again = NULL, *plain = NULL;
	struct ptc_image_stats st;
	uint8_t key[16];
	size_t nbr, k;
	int fd;

	if (!realpath("/proc/self/exe", self))
		return;
	fd = tmp_file(dir, sizeof(dir), "tables");
	if (fd < 0)
		return;
	close(fd);
	unlink(dir);	/* the cache makes its directory */
	CHECK(ptc_image_load_elf_cached(&built, self, NULL, 0, 1, dir, err, sizeof(err)) == 0, "%s", err);
	CHECK(ptc_image_load_elf_cached(&again, self, NULL, 0, 2, dir, err, sizeof(err)) == 0, "%s", err);
	CHECK(ptc_image_load_elf(&plain, self, NULL, 0, err, sizeof(err)) == 0, "%s", err);
	if (!built || !again || !plain)
		goto out;
	ptc_image_stats(built, &st);
	CHECK(!st.table_cached, "the first load read a table");
	ptc_image_stats(again, &st);
	CHECK(st.table_cached, "the second load built its table again");
	same_table(plain, again, "from the cache");
	ptc_image_branches(plain, &nbr);
	CHECK(nbr > 100, "only %zu branches", nbr);

	/* Each lie is stored with a right checksum, under the right key. */
	ptc_table_cache_key(plain, key);
	for (k = 0; k < 7 && nbr > 100; k++) {
		struct ptc_image *l = NULL;
		struct ptc_tbranch *b = &plain->br[nbr / 2], saved = *b;
		uint32_t r = plain->rank[1], f = plain->first_br[plain->nwords];
		uint64_t run_end = plain->runs[0].end;
		static const char *const what[] = { "a target index past the table", "a kind out of range",
						    "a length of 0", "branches out of order", "a wrong rank",
						    "a first branch past the table", "a run past the code" };

		if (k == 0)
			b->target_next = (uint32_t)nbr + 7;
		else if (k == 1)
			b->kind = 200;
		else if (k == 2)
			b->length = 0;
		else if (k == 3)
			b->ip = plain->br[0].ip;
		else if (k == 4)
			plain->rank[1] = r + 1;
		else if (k == 5)
			plain->first_br[plain->nwords] = (uint32_t)nbr + 1;
		else
			plain->runs[0].end = run_end + (1ull << 30);
		CHECK(ptc_table_cache_store(plain, dir, key) == 0, "store the lie");
		*b = saved;
		plain->rank[1] = r;
		plain->first_br[plain->nwords] = f;
		plain->runs[0].end = run_end;
		CHECK(ptc_image_load_elf_cached(&l, self, NULL, 0, 1, dir, err, sizeof(err)) == 0, "%s", err);
		if (!l)
			continue;
		ptc_image_stats(l, &st);
		CHECK(!st.table_cached, "the cache's %s was used", what[k]);
		same_table(plain, l, what[k]);
		ptc_image_free(l);
	}
	printf("table cache: %zu branches stored and read back the same; %zu lies refused\n", nbr, k);
out:
	ptc_image_free(built);
	ptc_image_free(again);
	ptc_image_free(plain);
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		CHECK(system(cmd) == 0, "%s", cmd);
	}
}

/* ---- benchmark ---------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bench(int argc, char **argv)
{
	int i, k;

	for (i = 0; i < argc; i++) {
		struct ptc_image_stats st;
		struct ptc_image *img;
		const struct ptc_tbranch *br;
		double best = 1e9, t;
		size_t nbr, j, found = 0, lookups = 0;
		char err[512];

		for (k = 0; k < 3; k++) {
			double t0 = now();

			if (ptc_image_load_elf(&img, argv[i], NULL, 0, err, sizeof(err)) < 0) {
				fprintf(stderr, "%s\n", err);
				return 1;
			}
			t0 = now() - t0;
			if (t0 < best)
				best = t0;
			ptc_image_stats(img, &st);
			if (k < 2)
				ptc_image_free(img);
		}
		/* What the walker does for an indirect branch or a resume IP:
		 * next branch and count from the fall-through of every branch
		 * (as after a return) and from every direct target. */
		br = ptc_image_branches(img, &nbr);
		t = now();
		for (k = 0; k < 5; k++)
			for (j = 0; j < nbr; j++) {
				uint32_t idx, n;

				found += ptc_image_next_branch(img, br[j].ip + br[j].length, &idx, &n) == 0;
				lookups++;
				if (br[j].target) {
					found += ptc_image_next_branch(img, br[j].target, &idx, &n) == 0;
					lookups++;
				}
			}
		t = now() - t;
		ptc_image_free(img);
		printf("%s: %.2f MB code, %" PRIu64 " insns, %" PRIu64 " branches, %" PRIu64
		       " bad bytes\n  build %.1f ms (%.1f MB/s)\n"
		       "  memory %.1f KiB: %.1f bytes/branch (32 in the table, the rest is the"
		       " boundary index), %.2f bytes/code byte\n"
		       "  next_branch: %.1f M lookups/s (%zu lookups, %zu answered)\n",
		       argv[i], st.code_bytes / 1e6, st.insns, st.branches, st.bad_bytes,
		       best * 1e3, st.code_bytes / 1e6 / best, st.table_bytes / 1024.0,
		       st.branches ? (double)st.table_bytes / (double)st.branches : 0.0,
		       st.code_bytes ? (double)st.table_bytes / (double)st.code_bytes : 0.0,
		       lookups / t / 1e6, lookups, found);
	}
	return 0;
}

/* --cache-get BUILDID_DIR FILENAME HEXID [force]: look one image up the
 * way the decoders do; print "ok PATH" or "error NAME: MESSAGE". */
static int cache_get(int argc, char **argv)
{
	struct ptc_image_cache_options opt = { 0 };
	struct ptc_image_cache *c;
	const struct ptc_image *img;
	uint8_t id[20];
	size_t n = 0;
	char err[8192] = "";
	int rc;

	if (argc < 3)
		return 2;
	opt.buildid_dir = argv[0];
	opt.force = argc > 3 && !strcmp(argv[3], "force");
	for (n = 0; n < 20 && argv[2][2 * n] && argv[2][2 * n + 1]; n++) {
		char h[3] = { argv[2][2 * n], argv[2][2 * n + 1], 0 };

		id[n] = (uint8_t)strtoul(h, NULL, 16);
	}
	if (ptc_image_cache_new(&c, &opt) < 0)
		return 2;
	rc = ptc_image_cache_get(c, argv[1], id, n, &img, err, sizeof(err));
	if (rc == 0)
		printf("ok %s\n", ptc_image_name(img));
	else
		printf("error %s: %s\n", ptc_errstr(rc), err);
	ptc_image_cache_free(c);
	return rc == 0 ? 0 : 3;
}

/* --bias FILE START PGOFF: print the bias of a mapping of FILE. */
static int print_bias(int argc, char **argv)
{
	struct ptc_image *img;
	char err[512];
	int64_t bias;
	int rc;

	if (argc < 3)
		return 2;
	if (ptc_image_load_elf(&img, argv[0], NULL, 0, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	rc = ptc_image_bias(img, strtoull(argv[1], NULL, 16), strtoull(argv[2], NULL, 16), &bias);
	ptc_image_free(img);
	if (rc < 0) {
		fprintf(stderr, "bias: %s\n", ptc_errstr(rc));
		return 3;
	}
	printf("0x%" PRIx64 "\n", (uint64_t)bias);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--bias"))
		return print_bias(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "--cache-get"))
		return cache_get(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "--bench"))
		return bench(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "--objdump")) {
		int i;

		int threads = 1;

		if (system("objdump --version >/dev/null 2>&1") != 0)
			SKIP("objdump (binutils) not installed");
		for (i = 2; i < argc; i++) {
			struct ptc_image *img;
			char err[512];

			if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
				threads = atoi(argv[++i]);
				continue;
			}
			if (ptc_image_load_elf_mt(&img, argv[i], NULL, 0, threads, err, sizeof(err)) < 0) {
				CHECK(0, "%s", err);
				continue;
			}
			compare_with_objdump(img, argv[i], 0);
			ptc_image_free(img);
		}
		return check_result();
	}
	test_raw_code();
	test_bias_and_build_id();
	test_errors_and_cache();
	test_vdso();
	test_corrupt();
	test_foreign_arch();
	test_threads();
	test_table_cache();
	return check_result();
}
