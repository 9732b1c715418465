/* truth-check: an independent checker of ptgen ground-truth files.
 *
 *   truth-check [--objdump LIST [--bias HEX]] [--stats] FILE.truth
 *
 * Checks the format of every line (tests/ptgen/ground-truth.md), that time
 * never decreases, that every thread's lines chain (a block starts where
 * the previous branch went: its target when taken, the next instruction
 * when not, the R line's IP after a far branch or an A), that every branch
 * lies in an executable mapping its process announced, and that the sums
 * add up.  With --objdump, LIST holds one line per instruction of a binary
 * as objdump disassembled it ("ADDR LEN CLASS TARGET", hex address,
 * decimal length, branch class as enum ptc_branch_kind or -1, hex direct
 * target or 0): then every branch inside the listed code must be an
 * instruction objdump lists, of the same class, length and direct target,
 * and the instruction count of every block that starts there must equal
 * the number of instructions objdump lists from the block's start to the
 * branch.  objdump is the oracle here, not Zydis, which the tracer uses.
 * --bias adds the load bias of a position-independent binary to the
 * listed addresses and direct targets.
 *
 * Exit 0 when all holds, 1 otherwise (each problem is printed with its
 * line number).  --stats prints "thread TID PID INSNS BRANCHES" per thread
 * and "total INSNS BRANCHES".
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ins {
	uint64_t addr, target;
	int len, cls;
};

struct map {
	uint64_t start, end;
};

struct proc {
	long pid;
	struct map *maps;
	size_t n, cap;
};

struct thr {
	long tid, pid;
	int in_user;		/* an R since the last far branch or A */
	int ended;
	uint64_t next;		/* where the next block starts */
	uint64_t insns, branches;
};

static struct ins *list;
static size_t nlist;
static struct proc *procs;
static size_t nprocs;
static struct thr *thrs;
static size_t nthrs;
static int errors;
static long lineno;
static uint64_t listed_branches;	/* B lines checked against the listing */

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void bad(const char *fmt, ...)
{
	va_list ap;

	if (errors < 50) {
		fprintf(stderr, "line %ld: ", lineno);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	errors++;
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	p = realloc(p, *cap * size);
	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return p;
}

static int cmp_ins(const void *a, const void *b)
{
	const struct ins *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static void load_list(const char *path, uint64_t bias)
{
	FILE *f = fopen(path, "r");
	size_t cap = 0;
	struct ins in;

	if (!f) {
		perror(path);
		exit(1);
	}
	while (fscanf(f, "%" SCNx64 " %d %d %" SCNx64, &in.addr, &in.len,
		      &in.cls, &in.target) == 4) {
		in.addr += bias;
		if (in.target)
			in.target += bias;
		list = grow(list, &cap, nlist, sizeof(*list));
		list[nlist++] = in;
	}
	fclose(f);
	qsort(list, nlist, sizeof(*list), cmp_ins);
}

/* Index of the listed instruction at addr, or -1. */
static long find_ins(uint64_t addr)
{
	size_t lo = 0, hi = nlist;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (list[mid].addr == addr)
			return (long)mid;
		if (list[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int in_listing(uint64_t addr)
{
	return nlist && addr >= list[0].addr &&
	       addr < list[nlist - 1].addr + (uint64_t)list[nlist - 1].len;
}

static struct proc *get_proc(long pid)
{
	static size_t cap;

	for (size_t i = 0; i < nprocs; i++)
		if (procs[i].pid == pid)
			return &procs[i];
	procs = grow(procs, &cap, nprocs, sizeof(*procs));
	memset(&procs[nprocs], 0, sizeof(*procs));
	procs[nprocs].pid = pid;
	return &procs[nprocs++];
}

static struct thr *get_thr(long tid)
{
	for (size_t i = nthrs; i-- > 0;)
		if (thrs[i].tid == tid)
			return &thrs[i];
	return NULL;
}

static struct thr *new_thr(long pid, long tid)
{
	static size_t cap;

	thrs = grow(thrs, &cap, nthrs, sizeof(*thrs));
	memset(&thrs[nthrs], 0, sizeof(*thrs));
	thrs[nthrs].tid = tid;
	thrs[nthrs].pid = pid;
	return &thrs[nthrs++];
}

static int mapped(long pid, uint64_t ip)
{
	struct proc *p = get_proc(pid);

	for (size_t i = 0; i < p->n; i++)
		if (ip >= p->maps[i].start && ip < p->maps[i].end)
			return 1;
	return 0;
}

/* With the listing: the block from t->next to ip holds n instructions
 * before ip. */
static void check_block(struct thr *t, uint64_t ip, uint64_t n,
			const char *what)
{
	long a, b;

	if (!in_listing(t->next) || !in_listing(ip))
		return;
	a = find_ins(t->next);
	b = find_ins(ip);
	if (a < 0)
		bad("block start 0x%" PRIx64 " is no instruction objdump lists",
		    t->next);
	else if (b < 0)
		bad("%s 0x%" PRIx64 " is no instruction objdump lists", what, ip);
	else if (b < a || (uint64_t)(b - a) != n)
		bad("%s 0x%" PRIx64 ": %" PRIu64 " instructions before it from "
		    "0x%" PRIx64 ", objdump lists %ld", what, ip, n, t->next,
		    b - a);
}

static struct thr *user_thr(long tid, const char *what)
{
	struct thr *t = get_thr(tid);

	if (!t || t->ended) {
		bad("%s of thread %ld, which does not exist", what, tid);
		return NULL;
	}
	return t;
}

static void line_B(char **f, int n)
{
	uint64_t ip, target;
	int kind, taken, len;
	uint64_t insns;
	struct thr *t;

	if (n != 9) {
		bad("B line with %d fields", n);
		return;
	}
	t = user_thr(strtol(f[2], NULL, 10), "B");
	ip = strtoull(f[3], NULL, 16);
	target = strtoull(f[4], NULL, 16);
	kind = atoi(f[5]);
	taken = atoi(f[6]);
	len = atoi(f[7]);
	insns = strtoull(f[8], NULL, 10);
	if (!t)
		return;
	if (kind < 0 || kind > 6 || (taken != 0 && taken != 1) || len < 1 ||
	    len > 15 || insns < 1)
		bad("B line out of range");
	if (!taken && kind != 5)
		bad("a not-taken branch of kind %d", kind);
	if (!t->in_user)
		bad("B of thread %ld before its R", t->tid);
	if (!mapped(t->pid, ip))
		bad("branch 0x%" PRIx64 " is in no executable mapping of %ld",
		    ip, t->pid);
	check_block(t, ip, insns - 1, "branch");
	if (in_listing(ip)) {
		long i = find_ins(ip);

		listed_branches++;
		if (i >= 0 && (list[i].cls != kind || list[i].len != len))
			bad("branch 0x%" PRIx64 ": kind %d len %d, objdump says "
			    "kind %d len %d", ip, kind, len, list[i].cls,
			    list[i].len);
		else if (i >= 0 && (kind == 0 || kind == 2 || kind == 5) &&
			 list[i].target != target)
			bad("branch 0x%" PRIx64 ": target 0x%" PRIx64
			    ", objdump says 0x%" PRIx64, ip, target,
			    list[i].target);
	}
	t->insns += insns;
	t->branches++;
	if (kind == 6) {
		t->in_user = 0;
		if (target != 0)
			bad("far branch with target 0x%" PRIx64, target);
	} else {
		t->next = taken ? target : ip + (uint64_t)len;
	}
}

static void line_A(char **f, int n)
{
	struct thr *t;
	uint64_t ip, insns;

	if (n != 5) {
		bad("A line with %d fields", n);
		return;
	}
	t = user_thr(strtol(f[2], NULL, 10), "A");
	ip = strtoull(f[3], NULL, 16);
	insns = strtoull(f[4], NULL, 10);
	if (!t)
		return;
	if (!t->in_user)
		bad("A of thread %ld outside user mode", t->tid);
	check_block(t, ip, insns, "asynchronous exit at");
	t->insns += insns;
	t->in_user = 0;
}

static void line_M(char **f, int n)
{
	struct proc *p;
	uint64_t start, len;

	if (n != 10 && n != 11) {
		bad("M line with %d fields", n);
		return;
	}
	p = get_proc(strtol(f[2], NULL, 10));
	start = strtoull(f[4], NULL, 16);
	len = strtoull(f[5], NULL, 16);
	if (!(atoi(f[7]) & 4))
		bad("M line of a mapping that is not executable");
	if (strcmp(f[8], "-") && strspn(f[8], "0123456789abcdef") != strlen(f[8]))
		bad("build-id %s is not hex", f[8]);
	if (!strcmp(f[9], "[vdso]") && n != 11)
		bad("vDSO without its dump");
	p->maps = grow(p->maps, &p->cap, p->n, sizeof(*p->maps));
	p->maps[p->n].start = start;
	p->maps[p->n].end = start + len;
	p->n++;
}

static void line(char **f, int n)
{
	struct thr *t;

	switch (f[0][0]) {
	case 'B':
		line_B(f, n);
		break;
	case 'A':
		line_A(f, n);
		break;
	case 'R':
		if (n != 4 && !(n == 5 && !strcmp(f[4], "32"))) {
			bad("R line with %d fields", n);
			break;
		}
		t = user_thr(strtol(f[2], NULL, 10), "R");
		if (!t)
			break;
		if (t->in_user)
			bad("R of thread %ld, which is in user mode", t->tid);
		t->in_user = 1;
		t->next = strtoull(f[3], NULL, 16);
		break;
	case 'T':
		if (n != 5) {
			bad("T line with %d fields", n);
			break;
		}
		if (get_thr(strtol(f[3], NULL, 10)) &&
		    !get_thr(strtol(f[3], NULL, 10))->ended)
			bad("T of a live thread");
		new_thr(strtol(f[2], NULL, 10), strtol(f[3], NULL, 10));
		break;
	case 'F':
		if (n != 6) {
			bad("F line with %d fields", n);
			break;
		}
		if (strcmp(f[2], f[4])) {	/* a new process: a copy */
			size_t pi, ci;

			get_proc(strtol(f[2], NULL, 10));
			get_proc(strtol(f[4], NULL, 10));
			pi = (size_t)(get_proc(strtol(f[2], NULL, 10)) - procs);
			ci = (size_t)(get_proc(strtol(f[4], NULL, 10)) - procs);
			procs[ci].n = 0;
			for (size_t i = 0; i < procs[pi].n; i++) {
				procs[ci].maps = grow(procs[ci].maps,
						      &procs[ci].cap, procs[ci].n,
						      sizeof(struct map));
				procs[ci].maps[procs[ci].n++] = procs[pi].maps[i];
			}
		}
		break;
	case 'C':
		if (n != 6) {
			bad("C line with %d fields", n);
			break;
		}
		if (atoi(f[4]) == 1)
			get_proc(strtol(f[2], NULL, 10))->n = 0;
		break;
	case 'M':
		line_M(f, n);
		break;
	case 'S':
		if (n != 3)
			bad("S line with %d fields", n);
		else
			user_thr(strtol(f[2], NULL, 10), "S");
		break;
	case 'X':
		if (n != 4)
			bad("X line with %d fields", n);
		break;
	case 'E':
		if (n != 3) {
			bad("E line with %d fields", n);
			break;
		}
		t = user_thr(strtol(f[2], NULL, 10), "E");
		if (t)
			t->ended = 1;
		break;
	default:
		bad("unknown line type %s", f[0]);
	}
}

int main(int argc, char **argv)
{
	const char *objdump = NULL, *path = NULL;
	uint64_t bias = 0;
	int stats = 0;
	char buf[8192];
	uint64_t last = 0, tot = 0, totb = 0;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--objdump") && i + 1 < argc)
			objdump = argv[++i];
		else if (!strcmp(argv[i], "--bias") && i + 1 < argc)
			bias = strtoull(argv[++i], NULL, 16);
		else if (!strcmp(argv[i], "--stats"))
			stats = 1;
		else
			path = argv[i];
	}
	if (!path) {
		fprintf(stderr, "usage: truth-check [--objdump LIST [--bias HEX]] "
				"[--stats] FILE.truth\n");
		return 2;
	}
	if (objdump)
		load_list(objdump, bias);
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 1;
	}
	while (fgets(buf, sizeof(buf), f)) {
		char *fld[16], *save = NULL, *tok;
		int n = 0;
		uint64_t time;

		lineno++;
		buf[strcspn(buf, "\n")] = 0;
		if (buf[0] == '#')
			continue;
		for (tok = strtok_r(buf, " ", &save); tok && n < 16;
		     tok = strtok_r(NULL, " ", &save))
			fld[n++] = tok;
		if (lineno == 1) {
			if (n != 2 || strcmp(fld[0], "V") || strcmp(fld[1], "1"))
				bad("the first line is not \"V 1\"");
			continue;
		}
		if (n < 3 || strlen(fld[0]) != 1) {
			bad("malformed line");
			continue;
		}
		time = strtoull(fld[1], NULL, 10);
		if (time < last)
			bad("time %" PRIu64 " after %" PRIu64, time, last);
		last = time;
		line(fld, n);
	}
	fclose(f);
	if (lineno == 0)
		bad("empty file");
	for (size_t i = 0; i < nthrs; i++) {
		if (!thrs[i].ended)
			fprintf(stderr, "thread %ld has no E line\n", thrs[i].tid),
				errors++;
		if (stats)
			printf("thread %ld %ld %" PRIu64 " %" PRIu64 "\n",
			       thrs[i].tid, thrs[i].pid, thrs[i].insns,
			       thrs[i].branches);
		tot += thrs[i].insns;
		totb += thrs[i].branches;
	}
	if (stats)
		printf("total %" PRIu64 " %" PRIu64 "\n", tot, totb);
	if (tot != last)
		fprintf(stderr, "note: %" PRIu64 " instructions, last time %"
			PRIu64 "\n", tot, last);
	if (objdump) {
		printf("listed %" PRIu64 "\n", listed_branches);
		if (!listed_branches) {
			fprintf(stderr, "no branch lies in the listed code\n");
			errors++;
		}
	}
	if (errors)
		fprintf(stderr, "%s: %d problem(s)\n", path, errors);
	return errors ? 1 : 0;
}
