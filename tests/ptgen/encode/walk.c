/* ptgen-walk: scale mode of the Intel PT generator, for benchmarks.
 *
 *	ptgen-walk [options] --branches N [--seed S] ELF
 *
 * Produces a valid (decodable, self-consistent) but synthetic execution of
 * ELF's code and writes the perf.data `perf record -e intel_pt//u` would
 * have written for it, streaming: memory is bounded by the code's size
 * (one cache entry per basic block reached), not by the trace's length.
 *
 * The walk: ELF is mapped at a fixed address; its code is decoded with
 * Zydis one basic block at a time, on demand.  Direct branches go where
 * they say; a conditional branch goes one way or the other by a seeded
 * pseudo-random choice biased per branch (backward ones mostly taken, like
 * loops); calls push their return address and returns pop it (an empty
 * stack, or more than 65536 frames deep, returns to a known function
 * entry instead); indirect jumps and calls go to function entries from the
 * symbol tables; a system call leaves user mode and resumes after it; an
 * instruction the walk cannot execute (invalid, privileged, int3, hlt,
 * code outside the segments) is an asynchronous exit, and the walk resumes
 * at a function entry (as a signal handler would); so does an occasional
 * (--escape) exception that gets the walk out of regions it would circle
 * in for ever.  Several threads (one
 * per CPU by default) take turns in time slices.  Nothing is executed:
 * the data values that would pick real directions do not exist.
 *
 * The events go through the same generator as ptgen-encode (gen.h), run
 * twice from the same seed (gen's first pass needs to see them all).
 * Optional ground truth: --truth FILE in the text format of
 * tests/ptgen/ground-truth.md (small runs, for tests), or --truth-bin FILE,
 * a compact binary form:
 *
 *	"PTGWALK1"
 *	then records, numbers as LEB128 varints (z: zigzag-signed):
 *	0x01 thread			the thread with this index (0..) runs
 *	0x02 ip				user mode (re)entered at ip
 *	0x03 delta insns		asynchronous exit before cur + delta
 *	0x04 thread			the thread ends
 *	0x10 | kind << 1 | taken, delta, insns [, z(target - ip)]
 *					a branch at ip = cur + delta, insns
 *					as in B lines; the target follows for
 *					jmp-ind, call-ind and ret (direct
 *					branches go to their encoded target,
 *					far ones to 0)
 *	cur is the running thread's IP after its previous record (the
 *	branch's destination, the R ip).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "gen.h"
#include "ptenc.h"
#include "truth.h"

#define STACK_MAX 65536
#define MAX_BLOCK_INSNS 4096

struct segment {
	uint64_t vaddr, memsz, offset, filesz;	/* from the program header, biased */
	const uint8_t *bytes;			/* file bytes of the segment */
};

/* A basic block as the walk sees it: from start to the first branch. */
struct block {
	uint64_t start;		/* 0: empty hash slot */
	uint64_t br_ip;		/* the branch (or the instruction that cannot run) */
	uint64_t target;	/* direct target */
	uint32_t insns;		/* instructions, the branch included (dead: excluded) */
	uint8_t kind;		/* enum ptenc_kind */
	uint8_t len;
	uint8_t dead;		/* br_ip cannot be executed */
	uint8_t bias;		/* conditional: taken probability in 1/256 */
	uint8_t func;		/* in the function-entry list */
};

struct walker {
	const char *path;
	uint8_t *file;
	size_t file_size;
	uint64_t base;
	struct segment seg[16];
	unsigned nr_seg;
	uint64_t *funcs;
	size_t nr_funcs, funcs_cap;
	size_t nr_sym_funcs;	/* from the symbol tables; the rest found by the walk */
	uint64_t entry;
	uint8_t build_id[20];
	unsigned build_id_len;
	ZydisDecoder dec;
	struct block *blocks;
	size_t blocks_cap, nr_blocks;
};

struct wthread {
	uint64_t ip;
	uint64_t escape;	/* branches until the next escape */
	uint64_t stack[STACK_MAX];
	unsigned sp_bottom, depth;
	uint64_t rng;
	uint64_t insns;
	int started;		/* its first R written: it is in user mode */
};

/* --- the binary ------------------------------------------------------------- */

static const struct segment *seg_of(const struct walker *w, uint64_t ip)
{
	unsigned i;

	for (i = 0; i < w->nr_seg; i++)
		if (ip >= w->seg[i].vaddr && ip < w->seg[i].vaddr + w->seg[i].filesz)
			return &w->seg[i];
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void load_elf(struct walker *w, const char *path)
{
	struct stat st;
	Elf *elf;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t i, n, cap = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		die("%s: %s", path, strerror(errno));
	w->path = path;
	w->file_size = (size_t)st.st_size;
	w->file = mmap(NULL, w->file_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (w->file == MAP_FAILED)
		die("%s: mmap: %s", path, strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)w->file, w->file_size);
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		die("%s: not an x86-64 ELF file", path);
	/* Position-independent code goes where the kernel would put a PIE
	 * without ASLR. */
	w->base = eh.e_type == ET_DYN ? 0x555555554000ULL : 0;
	w->entry = eh.e_entry + w->base;
	if (elf_getphdrnum(elf, &n))
		die("%s: no program headers", path);
	for (i = 0; i < n && w->nr_seg < 16; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || ph.p_offset + ph.p_filesz > w->file_size)
			continue;
		w->seg[w->nr_seg].vaddr = ph.p_vaddr + w->base;
		w->seg[w->nr_seg].memsz = ph.p_memsz;
		w->seg[w->nr_seg].offset = ph.p_offset;
		w->seg[w->nr_seg].filesz = ph.p_filesz;
		w->seg[w->nr_seg].bytes = w->file + ph.p_offset;
		w->nr_seg++;
	}
	if (!w->nr_seg)
		die("%s: no executable segment", path);
	/* Function entries (indirect targets) and the build-id. */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
			size_t k, nsym = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;

			for (k = 0; k < nsym; k++) {
				GElf_Sym sym;
				uint64_t a;

				if (!gelf_getsym(d, (int)k, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
				    !sym.st_value || !sym.st_size)
					continue;
				a = sym.st_value + w->base;
				if (!seg_of(w, a))
					continue;
				if (w->nr_funcs == cap) {
					cap = cap ? 2 * cap : 1024;
					w->funcs = realloc(w->funcs, cap * sizeof(*w->funcs));
					if (!w->funcs)
						die("out of memory");
				}
				w->funcs_cap = cap;
				w->funcs[w->nr_funcs++] = a;
			}
		} else if (sh.sh_type == SHT_NOTE) {
			size_t off = 0, name_off, desc_off;
			GElf_Nhdr nh;

			while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0)
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz &&
				    nh.n_descsz <= 20) {
					memcpy(w->build_id, (uint8_t *)d->d_buf + desc_off,
					       nh.n_descsz);
					w->build_id_len = nh.n_descsz;
				}
		}
	}
	elf_end(elf);
	close(fd);
	if (w->nr_funcs) {
		size_t j = 0;

		qsort(w->funcs, w->nr_funcs, sizeof(*w->funcs), cmp_u64);
		for (i = 0; i < w->nr_funcs; i++)
			if (!j || w->funcs[j - 1] != w->funcs[i])
				w->funcs[j++] = w->funcs[i];
		w->nr_funcs = j;
	} else {
		w->funcs = malloc(sizeof(*w->funcs));
		if (!w->funcs)
			die("out of memory");
		w->funcs_cap = 1;
		w->funcs[w->nr_funcs++] = w->entry;
	}
	w->nr_sym_funcs = w->nr_funcs;
	ZydisDecoderInit(&w->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
}

/* --- basic blocks ------------------------------------------------------------ */

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static void decode_block(struct walker *w, struct block *b)
{
	uint64_t ip = b->start;
	uint32_t n = 0;

	b->dead = 1;
	b->br_ip = ip;
	while (n < MAX_BLOCK_INSNS) {
		const struct segment *s = seg_of(w, ip);
		ZydisDecodedInstruction in;
		ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
		uint64_t avail;

		b->br_ip = ip;
		b->insns = n;
		if (!s)
			return;
		avail = s->vaddr + s->filesz - ip;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&w->dec, s->bytes + (ip - s->vaddr),
							  avail, &in, ops)))
			return;
		b->len = in.length;
		switch (in.meta.category) {
		case ZYDIS_CATEGORY_COND_BR:
			if (in.mnemonic == ZYDIS_MNEMONIC_XBEGIN)
				return;
			b->kind = PTENC_COND;
			break;
		case ZYDIS_CATEGORY_UNCOND_BR:
			b->kind = ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE ? PTENC_JMP :
				  PTENC_JMP_IND;
			if (in.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
				return;
			break;
		case ZYDIS_CATEGORY_CALL:
			b->kind = ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE ? PTENC_CALL :
				  PTENC_CALL_IND;
			if (in.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
				return;
			break;
		case ZYDIS_CATEGORY_RET:
			if (in.mnemonic != ZYDIS_MNEMONIC_RET)
				return;	/* iret, retf: not in user code we can follow */
			b->kind = PTENC_RET;
			break;
		case ZYDIS_CATEGORY_SYSCALL:
			b->kind = PTENC_FAR;
			break;
		case ZYDIS_CATEGORY_INTERRUPT:
		case ZYDIS_CATEGORY_SYSTEM:
			return;		/* int3, int n, hlt, privileged: an exception */
		default:
			if (in.mnemonic == ZYDIS_MNEMONIC_UD2 || in.mnemonic == ZYDIS_MNEMONIC_UD0 ||
			    in.mnemonic == ZYDIS_MNEMONIC_UD1 || in.mnemonic == ZYDIS_MNEMONIC_HLT)
				return;
			ip += in.length;
			n++;
			continue;
		}
		if (b->kind == PTENC_COND || b->kind == PTENC_JMP || b->kind == PTENC_CALL) {
			ZyanU64 t;

			if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], ip, &t)))
				return;
			b->target = t;
		}
		b->insns = n + 1;
		b->dead = 0;
		if (b->kind == PTENC_COND) {
			/* Loops mostly go round; forward branches get one of
			 * a few biases, fixed per branch. */
			static const uint8_t bias[4] = { 16, 128, 200, 245 };

			b->bias = b->target <= ip ? 230 : bias[hash64(ip) & 3];
		}
		return;
	}
}

static const struct block *get_block(struct walker *w, uint64_t ip)
{
	size_t i;

	if (2 * (w->nr_blocks + 1) > w->blocks_cap) {
		size_t cap = w->blocks_cap ? 2 * w->blocks_cap : 1 << 16, j;
		struct block *nb = calloc(cap, sizeof(*nb));

		if (!nb)
			die("out of memory");
		for (j = 0; j < w->blocks_cap; j++) {
			if (!w->blocks[j].start)
				continue;
			for (i = hash64(w->blocks[j].start) & (cap - 1); nb[i].start;
			     i = (i + 1) & (cap - 1))
				;
			nb[i] = w->blocks[j];
		}
		free(w->blocks);
		w->blocks = nb;
		w->blocks_cap = cap;
	}
	for (i = hash64(ip) & (w->blocks_cap - 1); w->blocks[i].start;
	     i = (i + 1) & (w->blocks_cap - 1))
		if (w->blocks[i].start == ip)
			return &w->blocks[i];
	w->blocks[i].start = ip;
	decode_block(w, &w->blocks[i]);
	w->nr_blocks++;
	return &w->blocks[i];
}

/* A direct call's target is a function entry too: stripped binaries have
 * few symbols, and the walk should reach more than their entries.  The
 * list only grows in walk order, so both passes see the same list. */
static void note_func(struct walker *w, uint64_t ip)
{
	struct block *b = (struct block *)get_block(w, ip);

	if (b->func)
		return;
	b->func = 1;
	if (w->nr_funcs == w->funcs_cap) {
		w->funcs_cap = w->funcs_cap ? 2 * w->funcs_cap : 1024;
		w->funcs = realloc(w->funcs, w->funcs_cap * sizeof(*w->funcs));
		if (!w->funcs)
			die("out of memory");
	}
	w->funcs[w->nr_funcs++] = ip;
}

/* --- the walk ---------------------------------------------------------------- */

static uint64_t rnd(struct wthread *t)
{
	/* xorshift64* */
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 0x2545f4914f6cdd1dULL;
}

static uint64_t random_func(const struct walker *w, struct wthread *t)
{
	return w->funcs[rnd(t) % w->nr_funcs];
}

static int executable(const struct walker *w, uint64_t ip)
{
	return seg_of(w, ip) != NULL;
}

struct run {
	struct gen_options o;
	struct walker w;
	struct wthread *threads;
	unsigned nr_threads;
	uint64_t branches, seed, slice, escape;
	uint32_t pid;
	FILE *text, *bin;
	int emit_truth;		/* the second pass writes the ground truth */
	struct gen *g;
	int scan;
	uint64_t now;		/* ns: one instruction = 1 ns */
	uint64_t n_taken, n_resume, n_async, n_switch;	/* second pass */
};

static void put_varint(FILE *f, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		if (v)
			b |= 0x80;
		putc(b, f);
	} while (v);
}

static void emit(struct run *r, struct truth_event *ev)
{
	if (r->scan)
		gen_scan(r->g, ev);
	else
		gen_event(r->g, ev);
}

static void emit_text(struct run *r, const struct truth_event *ev)
{
	FILE *f = r->text;

	if (!f || !r->emit_truth)
		return;
	switch (ev->type) {
	case 'T': fprintf(f, "T %llu %u %u %s\n", (unsigned long long)ev->time, ev->pid, ev->tid, ev->comm); break;
	case 'C': fprintf(f, "C %llu %u %u %d %s\n", (unsigned long long)ev->time, ev->pid, ev->tid, ev->exec, ev->comm); break;
	case 'F': fprintf(f, "F %llu %u %u %u %u\n", (unsigned long long)ev->time, ev->ppid, ev->ptid, ev->pid, ev->tid); break;
	case 'S': fprintf(f, "S %llu %u\n", (unsigned long long)ev->time, ev->tid); break;
	case 'R': fprintf(f, "R %llu %u 0x%llx\n", (unsigned long long)ev->time, ev->tid, (unsigned long long)ev->ip); break;
	case 'A': fprintf(f, "A %llu %u 0x%llx %llu\n", (unsigned long long)ev->time, ev->tid,
			  (unsigned long long)ev->ip, (unsigned long long)ev->insns); break;
	case 'B': fprintf(f, "B %llu %u 0x%llx 0x%llx %d %d %u %llu\n", (unsigned long long)ev->time,
			  ev->tid, (unsigned long long)ev->ip, (unsigned long long)ev->target,
			  ev->kind, ev->taken, ev->blen, (unsigned long long)ev->insns); break;
	case 'E': fprintf(f, "E %llu %u\n", (unsigned long long)ev->time, ev->tid); break;
	case 'X': fprintf(f, "X %llu %u %u\n", (unsigned long long)ev->time, ev->pid, ev->tid); break;
	case 'M': {
		unsigned i;

		fprintf(f, "M %llu %u %u 0x%llx 0x%llx 0x%llx %u ", (unsigned long long)ev->time,
			ev->pid, ev->tid, (unsigned long long)ev->start, (unsigned long long)ev->len,
			(unsigned long long)ev->pgoff, ev->prot);
		for (i = 0; i < ev->build_id_len; i++)
			fprintf(f, "%02x", ev->build_id[i]);
		fprintf(f, "%s %s\n", ev->build_id_len ? "" : "-", ev->path);
		break;
	}
	default: break;
	}
}

static void event(struct run *r, struct truth_event *ev)
{
	struct truth_event copy = *ev;

	if (!r->scan) {
		if (ev->type == 'B' && (ev->kind != PTENC_COND || ev->taken))
			r->n_taken++;
		r->n_resume += ev->type == 'R';
		r->n_async += ev->type == 'A';
		r->n_switch += ev->type == 'S';
	}
	emit_text(r, ev);
	emit(r, &copy);
}

static void thread_event(struct run *r, char type, unsigned ti, uint64_t ip)
{
	struct truth_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.time = r->now;
	ev.pid = r->pid;
	ev.tid = r->pid + ti;
	ev.ip = ip;
	event(r, &ev);
	if (r->bin && r->emit_truth) {
		if (type == 'S') {
			putc(0x01, r->bin);
			put_varint(r->bin, ti);
		} else if (type == 'R') {
			putc(0x02, r->bin);
			put_varint(r->bin, ip);
		} else if (type == 'E') {
			putc(0x04, r->bin);
			put_varint(r->bin, ti);
		}
	}
}

/* Runs thread ti for up to budget instructions; returns branches made. */
static uint64_t run_slice(struct run *r, unsigned ti, uint64_t budget, uint64_t max_branches)
{
	struct walker *w = &r->w;
	struct wthread *t = &r->threads[ti];
	uint64_t done = 0, nbr = 0;
	struct truth_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.pid = r->pid;
	ev.tid = r->pid + ti;
	while (done < budget && nbr < max_branches) {
		const struct block blk = *get_block(w, t->ip), *b = &blk;
		uint64_t cur = t->ip, next;

		/* A random walk can circle in a region whose exits are all
		 * unlikely; now and then an exception takes the thread to
		 * a random function (as a signal handler that longjmps). */
		if (r->escape && !t->escape--) {
			t->escape = rnd(t) % (2 * r->escape);
			ev.type = 'A';
			ev.time = r->now;
			ev.ip = cur;
			ev.insns = 0;
			event(r, &ev);
			if (r->bin && r->emit_truth) {
				putc(0x03, r->bin);
				put_varint(r->bin, 0);
				put_varint(r->bin, 0);
			}
			t->depth = 0;
			t->ip = random_func(w, t);
			thread_event(r, 'R', ti, t->ip);
			continue;
		}
		if (b->dead) {
			/* An exception before br_ip executed; a handler runs
			 * at a function entry. */
			r->now += b->insns;
			done += b->insns;
			ev.type = 'A';
			ev.time = r->now;
			ev.ip = b->br_ip;
			ev.insns = b->insns;
			event(r, &ev);
			if (r->bin && r->emit_truth) {
				putc(0x03, r->bin);
				put_varint(r->bin, b->br_ip - cur);
				put_varint(r->bin, b->insns);
			}
			t->depth = 0;
			t->ip = random_func(w, t);
			thread_event(r, 'R', ti, t->ip);
			continue;
		}
		ev.type = 'B';
		ev.ip = b->br_ip;
		ev.kind = b->kind;
		ev.blen = b->len;
		ev.insns = b->insns;
		ev.taken = 1;
		ev.target = b->target;
		next = b->target;
		switch (b->kind) {
		case PTENC_COND:
			ev.taken = (rnd(t) & 0xff) < b->bias;
			if (!executable(w, b->target))
				ev.taken = 0;
			else if (!executable(w, b->br_ip + b->len))
				ev.taken = 1;
			next = ev.taken ? b->target : b->br_ip + b->len;
			break;
		case PTENC_JMP:
			if (!executable(w, next)) {
				/* Out of the image (another library). */
				next = ev.target = random_func(w, t);
				ev.kind = PTENC_JMP_IND;
			}
			break;
		case PTENC_CALL:
		case PTENC_CALL_IND:
			if (t->depth == STACK_MAX) {
				t->sp_bottom = (t->sp_bottom + 1) % STACK_MAX;
				t->depth--;
			}
			t->stack[(t->sp_bottom + t->depth++) % STACK_MAX] = b->br_ip + b->len;
			if (b->kind == PTENC_CALL_IND || !executable(w, next)) {
				/* The PLT or a pointer: some function. */
				next = ev.target = random_func(w, t);
			} else {
				note_func(w, next);
			}
			break;
		case PTENC_JMP_IND:
			next = ev.target = random_func(w, t);
			break;
		case PTENC_RET:
			if (t->depth) {
				t->depth--;
				next = t->stack[(t->sp_bottom + t->depth) % STACK_MAX];
			} else {
				next = random_func(w, t);
			}
			ev.target = next;
			break;
		case PTENC_FAR:
			ev.target = 0;
			next = b->br_ip + b->len;
			break;
		}
		r->now += b->insns;
		done += b->insns;
		ev.time = r->now;
		event(r, &ev);
		if (r->bin && r->emit_truth) {
			int64_t d = (int64_t)(ev.target - ev.ip);

			putc(0x10 | (ev.kind << 1) | ev.taken, r->bin);
			put_varint(r->bin, b->br_ip - cur);
			put_varint(r->bin, b->insns);
			if (ev.kind == PTENC_JMP_IND || ev.kind == PTENC_CALL_IND ||
			    ev.kind == PTENC_RET)
				put_varint(r->bin, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
		}
		nbr++;
		t->insns += b->insns;
		t->ip = next;
		if (b->kind == PTENC_FAR)
			thread_event(r, 'R', ti, t->ip);
	}
	return nbr;
}

/* One full walk: all events, from the seed. */
static void walk(struct run *r)
{
	struct truth_event ev;
	uint64_t made = 0;
	unsigned ti;
	char comm[16];
	const char *slash = strrchr(r->w.path, '/');

	snprintf(comm, sizeof(comm), "%s", slash ? slash + 1 : r->w.path);
	r->now = 0;
	/* Both passes must make the same choices: forget the functions the
	 * previous pass found. */
	r->w.nr_funcs = r->w.nr_sym_funcs;
	for (size_t i = 0; i < r->w.blocks_cap; i++)
		r->w.blocks[i].func = 0;
	for (ti = 0; ti < r->nr_threads; ti++) {
		struct wthread *t = &r->threads[ti];

		t->rng = hash64(r->seed * 1000003 + ti) | 1;
		t->depth = t->sp_bottom = 0;
		t->insns = 0;
		t->started = 0;
		t->escape = r->escape;
		t->ip = !ti && executable(&r->w, r->w.entry) ? r->w.entry :
			random_func(&r->w, t);
	}
	memset(&ev, 0, sizeof(ev));
	ev.pid = r->pid;
	ev.tid = r->pid;
	ev.comm = comm;
	ev.type = 'T';
	event(r, &ev);
	ev.type = 'C';
	ev.exec = 1;
	event(r, &ev);
	for (unsigned i = 0; i < r->w.nr_seg; i++) {
		const struct segment *s = &r->w.seg[i];

		memset(&ev, 0, sizeof(ev));
		ev.type = 'M';
		ev.pid = r->pid;
		ev.tid = r->pid;
		ev.start = s->vaddr & ~0xfffULL;
		ev.pgoff = s->offset & ~0xfffULL;
		ev.len = ((s->vaddr + s->memsz + 0xfff) & ~0xfffULL) - ev.start;
		ev.prot = PROT_READ | PROT_EXEC;
		memcpy(ev.build_id, r->w.build_id, r->w.build_id_len);
		ev.build_id_len = r->w.build_id_len;
		ev.path = r->w.path;
		event(r, &ev);
	}
	for (ti = 1; ti < r->nr_threads; ti++) {
		memset(&ev, 0, sizeof(ev));
		ev.type = 'F';
		ev.ppid = ev.ptid = ev.pid = r->pid;
		ev.tid = r->pid + ti;
		event(r, &ev);
		ev.type = 'T';
		ev.comm = comm;
		event(r, &ev);
	}
	/* Round robin; every thread starts with an R at its first IP. */
	for (ti = 0; made < r->branches; ti = (ti + 1) % r->nr_threads) {
		thread_event(r, 'S', ti, 0);
		if (!r->threads[ti].started) {
			r->threads[ti].started = 1;
			thread_event(r, 'R', ti, r->threads[ti].ip);
		}
		made += run_slice(r, ti, r->slice, r->branches - made);
	}
	/* The trace ends with each thread leaving user mode (an interrupt
	 * at its current IP), so that decoders can follow the direct
	 * branches made after its last packet.  A thread whose turn never
	 * came (the branches were all made before it) never entered user
	 * mode: it has nothing to leave. */
	for (ti = 0; ti < r->nr_threads; ti++) {
		if (!r->threads[ti].started)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.type = 'A';
		ev.time = r->now;
		ev.pid = r->pid;
		ev.tid = r->pid + ti;
		ev.ip = r->threads[ti].ip;
		event(r, &ev);
		if (r->bin && r->emit_truth) {
			putc(0x01, r->bin);
			put_varint(r->bin, ti);
			putc(0x03, r->bin);
			put_varint(r->bin, 0);
			put_varint(r->bin, 0);
		}
	}
	for (ti = 0; ti < r->nr_threads; ti++) {
		thread_event(r, 'E', ti, 0);
		memset(&ev, 0, sizeof(ev));
		ev.type = 'X';
		ev.time = r->now;
		ev.pid = r->pid;
		ev.tid = r->pid + ti;
		event(r, &ev);
	}
}

/* --read-bin: prints a binary ground truth as text B, A, R, S, E lines
 * (times 0: the binary form has none), taking direct targets from the code,
 * so that tests can compare it with --truth of the same walk. */
static uint64_t get_varint(FILE *f, int *eof)
{
	uint64_t v = 0;
	int c, shift = 0;

	do {
		c = getc(f);
		if (c == EOF || shift > 63) {
			*eof = 1;
			return 0;
		}
		v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
	} while (c & 0x80);
	return v;
}

static int read_bin(struct walker *w, const char *path, uint32_t pid)
{
	FILE *f = fopen(path, "rb");
	char magic[8];
	uint64_t cur[1024] = { 0 };
	unsigned ti = 0;
	int c, eof = 0;

	if (!f || fread(magic, 1, 8, f) != 8 || memcmp(magic, "PTGWALK1", 8))
		die("%s: not a ptgen-walk binary truth", path);
	while (!eof && (c = getc(f)) != EOF) {
		uint64_t a, b, z;

		switch (c) {
		case 0x01:
		case 0x04:
			a = get_varint(f, &eof);
			if (a >= 1024)
				die("%s: bad thread index", path);
			ti = (unsigned)a;
			if (c == 0x04)
				printf("E 0 %u\n", pid + ti);
			else
				printf("S 0 %u\n", pid + ti);
			break;
		case 0x02:
			cur[ti] = get_varint(f, &eof);
			printf("R 0 %u 0x%llx\n", pid + ti, (unsigned long long)cur[ti]);
			break;
		case 0x03:
			a = get_varint(f, &eof);
			b = get_varint(f, &eof);
			printf("A 0 %u 0x%llx %llu\n", pid + ti,
			       (unsigned long long)(cur[ti] + a), (unsigned long long)b);
			break;
		default: {
			unsigned kind = (c >> 1) & 7, taken = c & 1;
			const struct block *bl;
			uint64_t ip, target;

			if (!(c & 0x10) || kind > PTENC_FAR)
				die("%s: bad record 0x%02x", path, c);
			a = get_varint(f, &eof);
			b = get_varint(f, &eof);
			ip = cur[ti] + a;
			bl = get_block(w, cur[ti]);
			if (bl->br_ip != ip)
				die("%s: branch at 0x%llx, the code has one at 0x%llx", path,
				    (unsigned long long)ip, (unsigned long long)bl->br_ip);
			target = bl->target;
			if (kind == PTENC_JMP_IND || kind == PTENC_CALL_IND || kind == PTENC_RET) {
				z = get_varint(f, &eof);
				target = ip + (uint64_t)((int64_t)(z >> 1) ^ -(int64_t)(z & 1));
			} else if (kind == PTENC_FAR) {
				target = 0;
			}
			printf("B 0 %u 0x%llx 0x%llx %u %u %u %llu\n", pid + ti,
			       (unsigned long long)ip, (unsigned long long)target, kind, taken,
			       bl->len, (unsigned long long)b);
			if (kind == PTENC_COND && !taken)
				cur[ti] = ip + bl->len;
			else
				cur[ti] = target;
			break;
		}
		}
	}
	fclose(f);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
"usage: ptgen-walk [options] --branches N ELF\n"
"  --branches N          branches to make (all threads together)\n"
"  --seed S              seed of the walk (default 1)\n"
"  --threads N           threads (default: one per CPU)\n"
"  --slice N             instructions per time slice (default 100000)\n"
"  --escape N            jump to a random function about every N branches\n"
"                        (an exception; default 20000, 0: never)\n"
"  --truth FILE          also write the text ground truth (small runs)\n"
"  --truth-bin FILE      also write the compact binary ground truth\n"
"usage: ptgen-walk --read-bin FILE ELF   (print a binary truth as text)\n");
	gen_options_help(stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static struct option lo[64];
	struct run r;
	struct timespec t0, t1;
	const char *text = NULL, *bin = NULL, *readbin = NULL;
	unsigned n;
	int c, fd;
	double secs;

	memset(&r, 0, sizeof(r));
	gen_options_init(&r.o);
	r.seed = 1;
	r.slice = 100000;
	r.escape = 20000;
	r.pid = 4000;
	for (n = 0; gen_long_options[n].name; n++)
		lo[n] = gen_long_options[n];
	lo[n++] = (struct option){ "branches", required_argument, NULL, 'b' };
	lo[n++] = (struct option){ "seed", required_argument, NULL, 's' };
	lo[n++] = (struct option){ "threads", required_argument, NULL, 't' };
	lo[n++] = (struct option){ "slice", required_argument, NULL, 'S' };
	lo[n++] = (struct option){ "escape", required_argument, NULL, 'e' };
	lo[n++] = (struct option){ "truth", required_argument, NULL, 'T' };
	lo[n++] = (struct option){ "truth-bin", required_argument, NULL, 'Y' };
	lo[n++] = (struct option){ "read-bin", required_argument, NULL, 'R' };
	lo[n] = (struct option){ NULL, 0, NULL, 0 };
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o': r.o.out = optarg; break;
		case 'b': r.branches = strtoull(optarg, NULL, 0); break;
		case 's': r.seed = strtoull(optarg, NULL, 0); break;
		case 't': r.nr_threads = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'S': r.slice = strtoull(optarg, NULL, 0); break;
		case 'e': r.escape = strtoull(optarg, NULL, 0); break;
		case 'T': text = optarg; break;
		case 'Y': bin = optarg; break;
		case 'R': readbin = optarg; break;
		default:
			if (!gen_option(&r.o, c, optarg))
				usage();
		}
	}
	if (readbin && optind + 1 == argc) {
		load_elf(&r.w, argv[optind]);
		read_bin(&r.w, readbin, r.pid);
		free(r.w.funcs);
		free(r.w.blocks);
		munmap(r.w.file, r.w.file_size);
		return 0;
	}
	if (optind + 1 != argc || !r.branches || !r.slice)
		usage();
	gen_options_check(&r.o);
	if (!r.nr_threads)
		r.nr_threads = r.o.per_thread ? 1 : r.o.cpus;
	if (r.nr_threads > 1024)
		die("too many threads");
	r.threads = calloc(r.nr_threads, sizeof(*r.threads));
	if (!r.threads)
		die("out of memory");
	load_elf(&r.w, argv[optind]);
	r.o.truth = argv[optind];
	if (text && !(r.text = fopen(text, "w")))
		die("%s: %s", text, strerror(errno));
	if (bin && !(r.bin = fopen(bin, "wb")))
		die("%s: %s", bin, strerror(errno));
	if (r.text)
		fprintf(r.text, "V 1\n# ptgen-walk %s seed %llu\n", argv[optind],
			(unsigned long long)r.seed);
	if (r.bin)
		fwrite("PTGWALK1", 1, 8, r.bin);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = strcmp(r.o.out, "-") ? open(r.o.out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : 1;
	if (fd < 0)
		die("%s: %s", r.o.out, strerror(errno));
	r.g = gen_new(&r.o, fd);
	r.scan = 1;
	walk(&r);
	gen_begin(r.g);
	r.scan = 0;
	r.emit_truth = 1;
	walk(&r);
	gen_finish(r.g);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr,
		"ptgen-walk: %llu branches, %llu instructions, %zu blocks, %zu functions, "
		"%llu AUX bytes (%.3f bytes/branch), %.2f s (%.1f Mbranches/s, both passes); "
		"%llu taken, %llu user-mode entries, %llu asynchronous exits, %llu time slices\n",
		(unsigned long long)r.branches, (unsigned long long)r.now, r.w.nr_blocks,
		r.w.nr_funcs, (unsigned long long)gen_aux_bytes(r.g),
		(double)gen_aux_bytes(r.g) / (double)r.branches, secs,
		(double)r.branches / secs / 1e6, (unsigned long long)r.n_taken,
		(unsigned long long)r.n_resume, (unsigned long long)r.n_async,
		(unsigned long long)r.n_switch);
	if (getenv("PTGEN_STATS"))
		gen_stats(r.g, stderr);
	gen_free(r.g);
	if (fd != 1 && close(fd))
		die("%s: %s", r.o.out, strerror(errno));
	if (r.text && fclose(r.text))
		die("%s: write failed", text);
	if (r.bin && fclose(r.bin))
		die("%s: write failed", bin);
	free(r.threads);
	free(r.w.funcs);
	free(r.w.blocks);
	munmap(r.w.file, r.w.file_size);
	return 0;
}
