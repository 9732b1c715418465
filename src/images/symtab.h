/* Function symbols of an ELF file: the one reader of them (images, ARM
 * SPE's symbolizer).
 *
 * The table is the file's .symtab, or its .dynsym when it has no .symtab
 * (a stripped library): every defined STT_FUNC symbol with a non-zero
 * address, sorted by address.  An address belongs to the symbol with the
 * greatest start at or below it whose extent [start, start + size) holds
 * it (a symbol of size 0 holds its start only); among symbols that start
 * at the same address, the smallest that holds it, and of equal ones the
 * last in the file's table.  An address past the end of that symbol
 * belongs to none, even when a larger symbol that starts lower holds it.
 */
#ifndef PTC_IMAGES_SYMTAB_H
#define PTC_IMAGES_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct Elf;

struct ptc_sym {
	uint64_t addr, size;	/* ELF virtual address and st_size */
	const char *name;
	uint32_t order;		/* index in the file's table (ties) */
};

struct ptc_symtab {
	struct ptc_sym *syms;	/* sorted by addr, larger first at one address */
	size_t n;
	char *strings;		/* the names */
};

/* Read e's function symbols into t (zeroed first); a file without any
 * gives an empty table.  0, or -ptc_err_nomem (t then empty). */
int ptc_symtab_read(struct ptc_symtab *t, struct Elf *e);
void ptc_symtab_free(struct ptc_symtab *t);

/* The symbol vaddr belongs to, or NULL.  lo and hi (either may be NULL)
 * receive the addresses around vaddr whose symbol starts at the same
 * address (or that, like vaddr, belong to none): lo <= vaddr < hi. */
const struct ptc_sym *ptc_symtab_find(const struct ptc_symtab *t, uint64_t vaddr, uint64_t *lo,
				      uint64_t *hi);

#endif
