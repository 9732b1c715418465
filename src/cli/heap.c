/* The program's heap, tuned once at start (ptc_cli_tune_heap()).
 *
 * A conversion allocates its memory as it goes and keeps growing it: the
 * writers' tables and buffers, the decoders' logs, the windows of trace
 * read from the file, zstd's workspaces.  Each 4 KiB page is faulted in
 * when first touched, and glibc gives freed memory back to the system (and
 * takes large blocks from mmap, unmapped on free), so memory used again is
 * faulted in again.  A fault costs 1-2 us on bare metal and about 14 us on
 * the 2-vCPU virtual machines these figures come from; a conversion of
 * python3's recording (18M branches) took 11,100 of them, a fifth of its
 * time there.  So, in the program only (the library leaves its caller's
 * heap alone):
 *  - freed memory stays in the heap for the next allocation (no trimming,
 *    no mmap for blocks below 32 MiB);
 *  - the main heap takes 256 MiB of address space at once and asks for
 *    transparent huge pages on it, so that a fault brings 2 MiB in at once
 *    where the system allows it (THP "madvise" or "always"; memory is taken
 *    only where touched, as with small pages); beyond that it grows by
 *    64 MiB at a time, in small pages;
 *  - every thread allocates from that heap (one arena): the -j workers'
 *    windows, logs and encodings are allocated on one thread and freed on
 *    another, and their own arenas would each be faulted in page by page.
 * Peak memory stays what the conversion holds at once: memory not in use
 * is reused rather than returned.  With glibc only; elsewhere a no-op.
 * GLIBC_TUNABLES naming malloc settings wins: the user tuned it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* (a sanitizer brings its own allocator, which these settings do not reach) */
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)
#define HEAP_STEP ((size_t)64 << 20)
#define HEAP_RESERVE ((size_t)256 << 20)

static void *heap_filler;	/* (kept: see below) */

void ptc_cli_tune_heap(void)
{
	const char *t = getenv("GLIBC_TUNABLES");
	void *p;

	if (t && strstr(t, "glibc.malloc."))
		return;
	(void)mallopt(M_MMAP_THRESHOLD, 32 << 20);	/* glibc's largest on 64-bit hosts */
	(void)mallopt(M_TRIM_THRESHOLD, 1 << 30);
	(void)mallopt(M_ARENA_MAX, 1);
#ifdef MADV_HUGEPAGE
	/* Grow the heap now by HEAP_RESERVE of address space (a block that
	 * the top pad follows), ask for huge pages on it from the first 2 MiB
	 * boundary on, and keep the block's part below that boundary taken
	 * (untouched: one page of memory), so that later allocations begin
	 * where huge pages can be. */
	(void)mallopt(M_TOP_PAD, (int)HEAP_RESERVE);
	p = malloc(HUGE_PAGE);
	(void)mallopt(M_TOP_PAD, (int)HEAP_STEP);
	if (p) {
		const uintptr_t from = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
		const uintptr_t to = (uintptr_t)sbrk(0) & ~(HUGE_PAGE - 1);

		free(p);
		/* (p in the heap just grown: not a block mapped on its own) */
		if (to > from && to - from <= HEAP_RESERVE + HUGE_PAGE) {
			(void)madvise((void *)from, to - from, MADV_HUGEPAGE);	/* a hint */
			if (from - (uintptr_t)p > 64)
				heap_filler = malloc(from - (uintptr_t)p - 64);
		}
	}
#endif
}
#else
void ptc_cli_tune_heap(void)
{
}
#endif
