/* Address spaces and ELF symbols for SPE samples.
 *
 * Each process's executable mappings (from MMAP/MMAP2 records) are kept;
 * an address resolves to the mapped file, the ELF virtual address inside it
 * (through the file's PT_LOAD program headers) and, when the file is found
 * and has a symbol table, the function containing it.  Files are found as
 * perf finds them (images/locate.h: build-id cache, --symfs, recorded path,
 * a file whose build-id differs from the recorded one is not used) and
 * opened once, lazily, with libelf.
 */
#ifndef PTC_DECODERS_ARM_SPE_SPE_SYMBOLS_H
#define PTC_DECODERS_ARM_SPE_SPE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct ptc_spe_symbols;

/* symfs and buildid_dir may be NULL (buildid_dir NULL: $HOME/.debug). */
int ptc_spe_symbols_new(struct ptc_spe_symbols **out, const char *symfs, const char *buildid_dir);
void ptc_spe_symbols_free(struct ptc_spe_symbols *s);

/* An executable mapping of pid (-1: the kernel's, shared by all);
 * build_id (build_id_size bytes, 0 when unknown) from MMAP2. */
int ptc_spe_symbols_add_mmap(struct ptc_spe_symbols *s, int32_t pid, uint64_t start,
			     uint64_t len, uint64_t pgoff, const char *filename,
			     const uint8_t *build_id, size_t build_id_size);

struct ptc_spe_location {
	const char *dso;	/* mapped file name as recorded, NULL when unmapped */
	int have_vaddr;		/* the file was read: vaddr is valid */
	uint64_t vaddr;		/* ELF virtual address of the address in dso */
	const char *symbol;	/* function name, NULL when unknown */
	uint64_t sym_offset;	/* address - function start */
	int dso_index;		/* small integer naming the dso, -1 when unmapped */
};

/* Resolve addr as seen by process pid; returns 1 when the address is in a
 * known mapping, 0 otherwise.  Strings stay valid until the handle is freed. */
int ptc_spe_symbols_lookup(struct ptc_spe_symbols *s, int32_t pid, uint64_t addr,
			   struct ptc_spe_location *loc);

/* "func+0x1c", "dso+0x1234" or "" into buf. */
void ptc_spe_location_format(const struct ptc_spe_location *loc, uint64_t addr,
			     char *buf, size_t len);

/* Files looked for and not found, and found with another build-id. */
size_t ptc_spe_symbols_missing(const struct ptc_spe_symbols *s);
size_t ptc_spe_symbols_mismatched(const struct ptc_spe_symbols *s);

#endif
