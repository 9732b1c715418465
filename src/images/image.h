/* Executable images and their branch tables.
 *
 * An image is one ELF file (or a raw code dump such as the vDSO) as the
 * decoders see it: its code bytes and a table of every branch instruction in
 * its executable segments, sorted by address, built once with Zydis.  All
 * addresses here are the image's own (ELF virtual addresses, or dump-relative
 * plus its nominal base); a process maps an image at run-time address
 * vaddr + bias, and the caller (the address-space model) applies the bias.
 *
 * The table is laid out for the control-flow walker's inner loop: from a
 * branch, the next branch and the exact number of instructions up to it are
 * one array access away, for both the fall-through and the direct target.
 */
#ifndef PTC_IMAGES_IMAGE_H
#define PTC_IMAGES_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "images/symtab.h"

#define PTC_NO_BRANCH UINT32_MAX

struct ptc_tbranch {
	uint64_t ip;		/* address of the branch instruction */
	uint64_t target;	/* direct target; 0 for indirect jumps/calls, returns, far */
	uint32_t target_next;	/* index of the first branch at or after target, or PTC_NO_BRANCH
				 * (target outside this image's code, or not an instruction boundary) */
	uint32_t target_insns;	/* instructions from target up to and including branch target_next */
	uint32_t fall_insns;	/* instructions from ip + length up to and including branch [i + 1];
				 * 0 when the fall-through does not reach branch [i + 1] by straight-line code */
	uint8_t kind;		/* enum ptc_branch_kind (common/trace_event.h) */
	uint8_t length;		/* instruction bytes */
	uint16_t flags;		/* enum ptc_tbranch_flags */
};

enum ptc_tbranch_flags {
	/* The direct target is the fall-through (call to the next instruction
	 * to read the IP, jcc with displacement 0): both ways lead to the
	 * same place, and such a call is never matched by a return. */
	PTC_TBF_TARGET_IS_FALL = 1 << 0,
	/* The direct target lies outside this image's code: the walker must
	 * look it up in the address space (target_next is PTC_NO_BRANCH). */
	PTC_TBF_TARGET_OUTSIDE = 1 << 1,
};

struct ptc_image;

/* Load an ELF file and build its branch table.  When build_id is not NULL
 * the file's NT_GNU_BUILD_ID note must match it (else -ptc_err_mismatch).
 * err receives "PATH: reason" on failure. */
int ptc_image_load_elf(struct ptc_image **out, const char *path,
		       const uint8_t *build_id, size_t build_id_size,
		       char *err, size_t errlen);

/* The same, with the decoding of large code regions shared among threads
 * threads (the caller's and threads - 1 that it starts and joins): the
 * table does not depend on their number. */
int ptc_image_load_elf_mt(struct ptc_image **out, const char *path,
			  const uint8_t *build_id, size_t build_id_size, int threads,
			  char *err, size_t errlen);

/* The same, reading the tables from the table cache in table_dir and
 * storing there those it builds (table_cache.h; NULL: no cache).  The
 * tables are the same either way. */
int ptc_image_load_elf_cached(struct ptc_image **out, const char *path,
			      const uint8_t *build_id, size_t build_id_size, int threads,
			      const char *table_dir, char *err, size_t errlen);

/* An image from raw code bytes (vDSO dump, --image PATH:ADDR for raw input)
 * placed at base; the bytes are copied.  Bytes that are an ELF image (a vDSO
 * dump) are parsed as ELF: its own addresses apply and base is ignored (get
 * the run-time placement from ptc_image_bias, as for files). */
int ptc_image_from_bytes(struct ptc_image **out, const char *name,
			 const uint8_t *bytes, size_t size, uint64_t base,
			 char *err, size_t errlen);

void ptc_image_free(struct ptc_image *img);

/* x86 code is decoded as the processor's execution mode says (Intel PT's
 * MODE.Exec): 64-bit (CS.L), 32-bit (CS.D) or 16-bit.  An image's own
 * table decodes the mode of its file: 32 for an i386 ELF file, 64 for the
 * rest (x86-64 and x32 files, raw bytes). */
unsigned ptc_image_mode(const struct ptc_image *img);

/* The image's code as code of mode bits (16, 32 or 64): img itself when
 * its table decodes that mode, else an image with the same bytes, symbols
 * and name and a table of that mode, built on the first call for that
 * mode (once, whatever the threads asking) and freed with img.  Code is
 * normally all of one mode, so a recording builds one table per image.
 * 0, or a negative code with "NAME: reason" in err. */
int ptc_image_in_mode(const struct ptc_image *img, unsigned bits, const struct ptc_image **out,
		      char *err, size_t errlen);

const char *ptc_image_name(const struct ptc_image *img);
/* The build-id read from the file, NULL/0 when it has none. */
const uint8_t *ptc_image_build_id(const struct ptc_image *img, size_t *size);

/* The branch table, sorted by ip. */
const struct ptc_tbranch *ptc_image_branches(const struct ptc_image *img, size_t *count);

/* For an arbitrary address inside the image's code: the index of the first
 * branch at or after addr and the instructions from addr up to and including
 * it.  -ptc_err_not_found when addr is outside the code, -ptc_err_decode when
 * addr is not an instruction boundary reachable by straight-line decoding. */
/* Details: "the code" is the executable sections (the executable segments
 * when the file has no section headers); an address in an executable segment
 * but outside those sections gives -ptc_err_decode, one outside every
 * executable segment -ptc_err_not_found.  Straight-line code ends at an
 * undecodable byte and at a section end followed by a gap (padding between
 * sections is not code).  An address the linear sweep did not see as an
 * instruction start (a jump into the middle of an instruction) is decoded
 * from there until it re-joins an instruction start of the sweep, within
 * 256 instructions; a branch met before that is not in the table, so such
 * an address gives -ptc_err_decode.  O(1) for a sweep boundary (a few array
 * reads), thread-safe (the image is not modified). */
int ptc_image_next_branch(const struct ptc_image *img, uint64_t addr,
			  uint32_t *index, uint32_t *insns);

/* The function symbol addr (an address of the image's own) belongs to,
 * or NULL, and around addr the addresses [*lo, *hi) whose symbol starts
 * at the same address, or that belong to none like addr (images/symtab.h
 * says which symbol: .symtab, else .dynsym, of an ELF file; a vDSO dump
 * has its .dynsym; a raw --image none).  lo and hi may be NULL. */
const struct ptc_sym *ptc_image_symbol(const struct ptc_image *img, uint64_t addr, uint64_t *lo,
				       uint64_t *hi);

/* Copy up to n code bytes at addr; returns the bytes copied (0 outside). */
size_t ptc_image_read(const struct ptc_image *img, uint64_t addr, uint8_t *buf, size_t n);

/* How a file maps: the executable PT_LOAD segments' file offsets and
 * addresses, so that a mapping (start, pgoff) gives the bias.  Returns 0 and
 * the bias for a mapping whose file offset range covers an executable segment,
 * -ptc_err_not_found otherwise. */
int ptc_image_bias(const struct ptc_image *img, uint64_t map_start,
		   uint64_t map_pgoff, int64_t *bias);

/* What building the table found (for reports and benchmarks). */
struct ptc_image_stats {
	uint64_t code_bytes;	/* bytes swept (executable sections, else segments) */
	uint64_t insns;		/* instructions found by the linear sweep */
	uint64_t branches;	/* entries in the branch table */
	uint64_t bad_bytes;	/* undecodable bytes skipped by resynchronising */
	uint64_t first_bad;	/* address of the first one, 0 when none */
	uint64_t runs;		/* straight-line runs (1 + resynchronisations + gaps) */
	uint64_t table_bytes;	/* memory of the table and boundary index (code bytes excluded) */
	int table_cached;	/* read from the table cache, not built */
};

void ptc_image_stats(const struct ptc_image *img, struct ptc_image_stats *st);

/* Finding the file behind a mapping, the way perf does: the path itself
 * under --symfs, then perf's build-id cache (DIR/.build-id/xx/yyyy..., and
 * DIR/[vdso]/BUILDID/vdso for the vDSO).  Loaded images are shared. */
struct ptc_image_cache;

struct ptc_image_cache_options {
	const char *symfs;		/* NULL: none */
	const char *buildid_dir;	/* NULL: $HOME/.debug */
	int force;			/* use an image even if its build-id differs */
	int threads;			/* for building a branch table (ptc_image_load_elf_mt), 0: 1 */
	const char *table_dir;		/* the table cache (table_cache.h), NULL: none */
};

int ptc_image_cache_new(struct ptc_image_cache **out, const struct ptc_image_cache_options *opt);
void ptc_image_cache_free(struct ptc_image_cache *c);

/* The images loaded so far, and how many of their branch tables came from
 * the table cache (each image's table of its own mode). */
void ptc_image_cache_tables(const struct ptc_image_cache *c, size_t *loaded, size_t *from_table_cache);

/* Look up (and load once) the image for a mapped file.  build_id may be NULL.
 * Returns 0 with *img set, or a negative code with a message in err naming
 * the file and the build-id (the caller reports each missing image once). */
int ptc_image_cache_get(struct ptc_image_cache *c, const char *filename,
			const uint8_t *build_id, size_t build_id_size,
			const struct ptc_image **img, char *err, size_t errlen);

#endif
