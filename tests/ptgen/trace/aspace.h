/* Address spaces of traced processes: their mappings (from /proc/PID/maps),
 * a cache of the bytes of their executable mappings (so that decoding a
 * step does not cost a /proc read), and the M lines that announce new
 * executable mappings.
 */
#ifndef PTGEN_TRACE_ASPACE_H
#define PTGEN_TRACE_ASPACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct ptg_aspace;

/* What an M line needs besides the mapping. */
struct ptg_mline_ctx {
	FILE *out;
	uint64_t time;
	pid_t pid, tid;
	const char *vdso_dir;	/* where vDSO images are dumped */
};

/* Opens the address space of pid.  Mappings present now count as already
 * announced when announced_now is set (a forked child inherits them);
 * otherwise the next ptg_aspace_refresh() announces them all.  NULL with
 * errno on failure. */
struct ptg_aspace *ptg_aspace_open(pid_t pid, int announced_now);
void ptg_aspace_free(struct ptg_aspace *as);

/* Re-reads the mappings (after a system call that may have changed them;
 * through thread m->tid, which must be alive) and writes an M line for each executable mapping not announced before.
 * Returns the number of M lines, or -1 when the maps cannot be read (the
 * process is gone). */
int ptg_aspace_refresh(struct ptg_aspace *as, const struct ptg_mline_ctx *m);

/* Copies up to n code bytes at ip into buf; returns how many (0 when ip is
 * in no mapping). */
size_t ptg_aspace_read(struct ptg_aspace *as, uint64_t ip, uint8_t *buf,
		       size_t n);

/* Reads n bytes of data at addr (not cached): 0, or -1. */
int ptg_aspace_peek(struct ptg_aspace *as, uint64_t addr, void *buf, size_t n);

/* Writes n bytes at addr, read-only code included (the tracer's breakpoint
 * instructions; the code cache keeps the bytes it read): 0, or -1. */
int ptg_aspace_poke(struct ptg_aspace *as, uint64_t addr, const void *buf, size_t n);

#endif
