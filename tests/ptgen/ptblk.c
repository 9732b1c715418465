/* ptblk: libipt as an independent reference decoder for the tests.
 *
 *	ptblk TRUTH PID STREAM [CUT...]
 *
 * Decodes one raw Intel PT stream (one thread's AUX data, as written by
 * `ptgen-encode --per-thread --aux-dump`) with libipt, the memory image
 * built from the truth's M lines of process PID (the vDSO from its dump),
 * and prints
 *
 *	B ip target		each taken branch (target 0 for a far branch
 *				that leaves user mode), from the instruction
 *				flow decoder
 *	E offset code message	each decode error, where it was found
 *	I insn N		instructions seen by the instruction decoder
 *	I block N		instructions seen by the block decoder
 *
 * CUT offsets split the stream where the recording says data was lost (a
 * TRUNCATED AUX record): the pieces are decoded independently, as a
 * consumer that reads the AUX records must, and each cut is reported as an
 * E line.
 *
 * The block decoder's blocks run through direct jumps and calls, so the
 * per-branch list comes from the instruction decoder of the same library;
 * the two instruction counts must agree with each other and the truth.
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <intel-pt.h>

#include "read-file.h"

/* Adds the truth's executable mappings of pid to the image.  A process
 * made by fork has no M lines of its own for what it inherited: its
 * parent's mappings up to the fork come first (recursively), then its own
 * (libipt replaces what a later section overlaps). */
static int load_image_until(struct pt_image *image, const char *truth,
			    unsigned pid, unsigned long long until, int depth)
{
	char *line = NULL, *dir = strdup(truth), *tdir = dirname(dir);
	size_t cap = 0;
	FILE *f = fopen(truth, "r");
	unsigned long long fork_time = 0;
	unsigned ppid = 0;
	int n = 0;

	if (!f) {
		fprintf(stderr, "ptblk: %s: %s\n", truth, strerror(errno));
		exit(2);
	}
	while (getline(&line, &cap, f) > 0) {
		unsigned long long time;
		unsigned a, b, c, d;

		if (line[0] == 'F' &&
		    sscanf(line, "F %llu %u %u %u %u", &time, &a, &b, &c, &d) == 5 &&
		    c == pid && a != pid) {
			ppid = a;
			fork_time = time;
		}
	}
	if (ppid && depth < 16)
		n += load_image_until(image, truth, ppid, fork_time, depth + 1);
	rewind(f);
	while (getline(&line, &cap, f) > 0) {
		char path[4096], dump[4096], file[8192];
		unsigned long long start, len, pgoff, time;
		unsigned mpid, mtid;
		int k;

		dump[0] = 0;
		if (line[0] != 'M')
			continue;
		k = sscanf(line, "M %llu %u %u %llx %llx %llx %*s %*s %4095s %4095s",
			   &time, &mpid, &mtid, &start, &len, &pgoff, path, dump);
		if (k < 7 || mpid != pid || time > until)
			continue;
		if (dump[0]) {
			/* The dump holds the mapping's bytes from its start. */
			if (dump[0] == '/')
				snprintf(file, sizeof(file), "%s", dump);
			else
				snprintf(file, sizeof(file), "%s/%s", tdir, dump);
			pgoff = 0;
		} else {
			snprintf(file, sizeof(file), "%s", path);
		}
		k = pt_image_add_file(image, file, pgoff, len, NULL, start);
		if (k < 0) {
			fprintf(stderr, "ptblk: %s: %s\n", file, pt_errstr(pt_errcode(k)));
			exit(2);
		}
		n++;
	}
	free(line);
	free(dir);
	fclose(f);
	return n;
}

static void load_image(struct pt_image *image, const char *truth, unsigned pid)
{
	if (!load_image_until(image, truth, pid, ~0ULL, 0)) {
		fprintf(stderr, "ptblk: no mappings of pid %u in %s\n", pid, truth);
		exit(2);
	}
}

static void init_config(struct pt_config *c, uint8_t *buf, size_t size)
{
	pt_config_init(c);
	c->begin = buf;
	c->end = buf + size;
	/* The CPU ptgen-encode claims (GenuineIntel,6,85,4); libipt may
	 * not know its errata, which is not an error. */
	c->cpu.vendor = pcv_intel;
	c->cpu.family = 6;
	c->cpu.model = 85;
	c->cpu.stepping = 4;
	(void)pt_cpu_errata(&c->errata, &c->cpu);
	c->mtc_freq = 3;
	c->nom_freq = 20;
	c->cpuid_0x15_eax = 1;
	c->cpuid_0x15_ebx = 80;
}

struct pending {
	int valid;
	uint64_t ip;
	uint8_t size;
	enum pt_insn_class iclass;
};

/* The previous instruction was a branch; the next one executed is at ip. */
static void resolve(struct pending *p, uint64_t ip)
{
	if (!p->valid)
		return;
	switch (p->iclass) {
	case ptic_cond_jump:
		if (ip != p->ip + p->size)
			printf("B 0x%" PRIx64 " 0x%" PRIx64 "\n", p->ip, ip);
		break;
	case ptic_call:
	case ptic_return:
	case ptic_jump:
		printf("B 0x%" PRIx64 " 0x%" PRIx64 "\n", p->ip, ip);
		break;
	default:
		break;
	}
	p->valid = 0;
}

static void report(uint64_t offset, int err)
{
	printf("E %" PRIu64 " %d %s\n", offset, -err, pt_errstr(pt_errcode(err)));
}

static uint64_t insn_pass(uint8_t *buf, size_t size, const char *truth, unsigned pid)
{
	struct pt_config c;
	struct pt_insn_decoder *d;
	struct pending p = { 0 };
	uint64_t ninsn = 0, offset;
	int st;

	init_config(&c, buf, size);
	d = pt_insn_alloc_decoder(&c);
	if (!d)
		exit(2);
	load_image(pt_insn_get_image(d), truth, pid);
	st = pt_insn_sync_forward(d);
	for (;;) {
		struct pt_insn insn;

		if (st < 0) {
			if (st == -pte_eos)
				break;
			pt_insn_get_offset(d, &offset);
			report(offset, st);
			p.valid = 0;
			st = pt_insn_sync_forward(d);
			continue;
		}
		while (st & pts_event_pending) {
			struct pt_event ev;

			st = pt_insn_event(d, &ev, sizeof(ev));
			if (st < 0)
				break;
			switch (ev.type) {
			case ptev_disabled:
				if (p.valid && (p.iclass == ptic_far_call ||
						p.iclass == ptic_far_jump))
					printf("B 0x%" PRIx64 " 0x0\n", p.ip);
				p.valid = 0;
				break;
			case ptev_async_disabled:
				resolve(&p, ev.variant.async_disabled.at);
				break;
			case ptev_overflow:
				pt_insn_get_offset(d, &offset);
				printf("E %" PRIu64 " 0 overflow\n", offset);
				p.valid = 0;
				break;
			default:
				break;
			}
		}
		if (st < 0)
			continue;
		st = pt_insn_next(d, &insn, sizeof(insn));
		if (st < 0)
			continue;
		ninsn++;
		resolve(&p, insn.ip);
		if (insn.iclass != ptic_other && insn.iclass != ptic_error) {
			p.valid = 1;
			p.ip = insn.ip;
			p.size = insn.size;
			p.iclass = insn.iclass;
		}
	}
	pt_insn_free_decoder(d);
	return ninsn;
}

static uint64_t block_pass(uint8_t *buf, size_t size, const char *truth, unsigned pid)
{
	struct pt_config c;
	struct pt_block_decoder *d;
	uint64_t ninsn = 0;
	int st;

	init_config(&c, buf, size);
	d = pt_blk_alloc_decoder(&c);
	if (!d)
		exit(2);
	load_image(pt_blk_get_image(d), truth, pid);
	st = pt_blk_sync_forward(d);
	for (;;) {
		struct pt_block block;

		if (st < 0) {
			if (st == -pte_eos)
				break;
			st = pt_blk_sync_forward(d);
			continue;
		}
		while (st & pts_event_pending) {
			struct pt_event ev;

			st = pt_blk_event(d, &ev, sizeof(ev));
			if (st < 0)
				break;
		}
		if (st < 0)
			continue;
		st = pt_blk_next(d, &block, sizeof(block));
		if (st >= 0)
			ninsn += block.ninsn;
	}
	pt_blk_free_decoder(d);
	return ninsn;
}

int main(int argc, char **argv)
{
	uint8_t *buf;
	size_t size, start = 0;
	uint64_t insn = 0, block = 0;
	unsigned pid;
	int i;

	if (argc < 4) {
		fprintf(stderr, "usage: ptblk TRUTH PID STREAM [CUT...]\n");
		return 2;
	}
	pid = (unsigned)strtoul(argv[2], NULL, 0);
	buf = ptgen_read_file("ptblk", argv[3], &size);
	for (i = 4; i <= argc; i++) {
		size_t end = i < argc ? (size_t)strtoull(argv[i], NULL, 0) : size;

		if (end > size || end < start) {
			fprintf(stderr, "ptblk: bad cut %s\n", argv[i]);
			return 2;
		}
		if (end > start) {
			insn += insn_pass(buf + start, end - start, argv[1], pid);
			block += block_pass(buf + start, end - start, argv[1], pid);
		}
		if (i < argc)
			printf("E %zu 0 data lost here (cut)\n", end);
		start = end;
	}
	printf("I insn %" PRIu64 "\nI block %" PRIu64 "\n", insn, block);
	free(buf);
	return 0;
}
