/* Function symbols of an ELF file (see symtab.h). */
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "images/symtab.h"

static int cmp_sym(const void *a, const void *b)
{
	const struct ptc_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* bigger first, so that a sized symbol wins over an alias of size 0 */
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The function symbols of the sections of type want: counted when t->syms
 * is NULL (t->n, *strsize), else stored after the first t->n. */
static void read_table(struct ptc_symtab *t, Elf *e, Elf64_Word want, size_t *strsize)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sy;
			const char *nm;
			size_t l;

			if (!gelf_getsym(d, (int)i, &sy) || GELF_ST_TYPE(sy.st_info) != STT_FUNC ||
			    sy.st_shndx == SHN_UNDEF || !sy.st_value)
				continue;
			nm = elf_strptr(e, sh.sh_link, sy.st_name);
			if (!nm || !*nm)
				continue;
			l = strlen(nm) + 1;
			if (t->syms) {
				t->syms[t->n].addr = sy.st_value;
				t->syms[t->n].size = sy.st_size;
				t->syms[t->n].name = t->strings + *strsize;
				t->syms[t->n].order = (uint32_t)t->n;
				memcpy(t->strings + *strsize, nm, l);
			}
			*strsize += l;
			t->n++;
		}
	}
}

int ptc_symtab_read(struct ptc_symtab *t, struct Elf *e)
{
	Elf64_Word want = SHT_SYMTAB;
	size_t n, strsize = 0;

	memset(t, 0, sizeof(*t));
	/* .symtab when it has any, else .dynsym: counted, then read */
	read_table(t, e, want, &strsize);
	if (!t->n) {
		want = SHT_DYNSYM;
		read_table(t, e, want, &strsize);
	}
	if (!t->n)
		return 0;
	n = t->n;
	t->syms = malloc(n * sizeof(*t->syms));
	t->strings = malloc(strsize);
	if (!t->syms || !t->strings) {
		ptc_symtab_free(t);
		return -ptc_err_nomem;
	}
	t->n = 0;
	strsize = 0;
	read_table(t, e, want, &strsize);
	if (t->n != n) {	/* (the same file read twice) */
		ptc_symtab_free(t);
		return -ptc_err_internal;
	}
	qsort(t->syms, t->n, sizeof(*t->syms), cmp_sym);
	return 0;
}

void ptc_symtab_free(struct ptc_symtab *t)
{
	free(t->syms);
	free(t->strings);
	memset(t, 0, sizeof(*t));
}

const struct ptc_sym *ptc_symtab_find(const struct ptc_symtab *t, uint64_t vaddr, uint64_t *lo,
				      uint64_t *hi)
{
	size_t l = 0, h = t->n, i, first;
	uint64_t next = UINT64_MAX, end;
	const struct ptc_sym *g;

	/* lo = 1 + the last symbol with addr <= vaddr */
	while (l < h) {
		size_t mid = l + (h - l) / 2;
		if (t->syms[mid].addr <= vaddr)
			l = mid + 1;
		else
			h = mid;
	}
	if (l < t->n)
		next = t->syms[l].addr;
	if (hi)
		*hi = next;
	if (lo)
		*lo = 0;
	if (!l)
		return NULL;
	/* the symbols at that address, the largest first */
	for (first = l - 1; first > 0 && t->syms[first - 1].addr == t->syms[l - 1].addr; first--)
		;
	g = &t->syms[first];
	end = g->addr + (g->size ? g->size : 1);
	if (end < g->addr || end > next)
		end = next;	/* (a symbol running into the next one) */
	for (i = l; i-- > first;) {
		const struct ptc_sym *c = &t->syms[i];

		if (vaddr - c->addr < c->size || (c->size == 0 && c->addr == vaddr)) {
			if (lo)
				*lo = c->addr;
			if (hi) {
				uint64_t e = c->addr + (c->size ? c->size : 1);
				*hi = e < c->addr || e > next ? next : e;
			}
			return c;
		}
	}
	/* past every symbol at that address: none up to the next one */
	if (lo)
		*lo = end <= vaddr ? end : vaddr;
	return NULL;
}
