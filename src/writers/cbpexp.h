/* -f cbpexp: the cbp-experiments trace, version 0 (see
 * ../shared/docs/branch-trace-formats.md section 1 and ptconv-convert(1)):
 *
 *   header   9 x u64: magic "CBPEXP!!", version 0, num_entries,
 *            entries_offset, entries_size, num_branches, branches_offset,
 *            num_images, images_offset
 *   entries  one zstd frame of num_entries x u32 (bits 0..30 branch index,
 *            bit 31 taken)
 *   branches num_branches x {u64 inst_addr, u64 targ_addr, u32 inst_length,
 *            u32 type}, one per distinct (inst_addr, targ_addr)
 *   images   num_images x {u64 start, u64 len, u64 data_size,
 *            u64 data_offset, char filename[256]}, then the image bytes
 *
 * Far branches (syscalls), which the format has no type for, are not
 * written: the format describes user-mode control flow between them.
 */
#ifndef PTC_WRITERS_CBPEXP_H
#define PTC_WRITERS_CBPEXP_H

#include <stdint.h>

#include "common/trace_event.h"

#define PTC_CBPEXP_MAGIC 0x2121505845504243ULL

int ptc_cbpexp_sink_new(struct ptc_sink **out, const char *path, int zstd_level);
/* An image to embed: memory [start, start + file size) maps the file at path
 * from offset 0; name is what the filename field says.  Call before end(). */
int ptc_cbpexp_add_image(struct ptc_sink *s, uint64_t start, const char *name, const char *path);
void ptc_cbpexp_sink_free(struct ptc_sink *s);

#endif
