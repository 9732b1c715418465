/* Address spaces and ELF symbols for SPE samples (see spe_symbols.h). */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/grow.h"
#include "images/locate.h"
#include "images/symtab.h"
#include "decoders/arm_spe/spe_symbols.h"

struct seg {
	uint64_t off, filesz, vaddr;
};

struct image {
	char *name;		/* as recorded */
	uint8_t build_id[20];
	size_t build_id_size;	/* 0: none recorded */
	int loaded;		/* tried */
	int found;		/* file read */
	struct seg *segs;
	size_t nr_segs;
	struct ptc_symtab syms;
};

struct mapping {
	uint64_t start, end, pgoff;
	size_t image;
};

struct proc {
	int32_t pid;
	struct mapping *maps;
	size_t nr, cap;
	size_t last;		/* index of the last hit */
};

struct ptc_spe_symbols {
	char *symfs, *buildid_dir;
	size_t mismatched;
	struct image *images;
	size_t nr_images, cap_images;
	struct proc *procs;
	size_t nr_procs, cap_procs;
	size_t last_proc;
	size_t missing;
};

int ptc_spe_symbols_new(struct ptc_spe_symbols **out, const char *symfs, const char *buildid_dir)
{
	struct ptc_spe_symbols *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ptc_err_nomem;
	if ((symfs && *symfs && !(s->symfs = strdup(symfs))) ||
	    (buildid_dir && *buildid_dir && !(s->buildid_dir = strdup(buildid_dir)))) {
		free(s->symfs);
		free(s);
		return -ptc_err_nomem;
	}
	elf_version(EV_CURRENT);
	*out = s;
	return 0;
}

void ptc_spe_symbols_free(struct ptc_spe_symbols *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_images; i++) {
		free(s->images[i].name);
		free(s->images[i].segs);
		ptc_symtab_free(&s->images[i].syms);
	}
	for (i = 0; i < s->nr_procs; i++)
		free(s->procs[i].maps);
	free(s->images);
	free(s->procs);
	free(s->symfs);
	free(s->buildid_dir);
	free(s);
}

size_t ptc_spe_symbols_missing(const struct ptc_spe_symbols *s)
{
	return s->missing;
}

size_t ptc_spe_symbols_mismatched(const struct ptc_spe_symbols *s)
{
	return s->mismatched;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	return ptc_grow(p, cap, need, elem, 8);
}

static long image_index(struct ptc_spe_symbols *s, const char *name,
			const uint8_t *build_id, size_t build_id_size)
{
	size_t i;

	if (build_id_size > 20)
		build_id_size = 20;
	/* one image per (name, build-id): a file replaced during the run is
	 * another image */
	for (i = 0; i < s->nr_images; i++)
		if (!strcmp(s->images[i].name, name) && s->images[i].build_id_size == build_id_size &&
		    !memcmp(s->images[i].build_id, build_id ? build_id : (const uint8_t *)"", build_id_size))
			return (long)i;
	if (grow((void **)&s->images, &s->cap_images, s->nr_images + 1, sizeof(*s->images)))
		return -ptc_err_nomem;
	memset(&s->images[s->nr_images], 0, sizeof(*s->images));
	if (!(s->images[s->nr_images].name = strdup(name)))
		return -ptc_err_nomem;
	if (build_id_size)
		memcpy(s->images[s->nr_images].build_id, build_id, build_id_size);
	s->images[s->nr_images].build_id_size = build_id_size;
	return (long)s->nr_images++;
}

static struct proc *find_proc(struct ptc_spe_symbols *s, int32_t pid, int create)
{
	size_t i;

	if (s->last_proc < s->nr_procs && s->procs[s->last_proc].pid == pid)
		return &s->procs[s->last_proc];
	for (i = 0; i < s->nr_procs; i++)
		if (s->procs[i].pid == pid) {
			s->last_proc = i;
			return &s->procs[i];
		}
	if (!create || grow((void **)&s->procs, &s->cap_procs, s->nr_procs + 1, sizeof(*s->procs)))
		return NULL;
	memset(&s->procs[s->nr_procs], 0, sizeof(*s->procs));
	s->procs[s->nr_procs].pid = pid;
	s->last_proc = s->nr_procs;
	return &s->procs[s->nr_procs++];
}

int ptc_spe_symbols_add_mmap(struct ptc_spe_symbols *s, int32_t pid, uint64_t start,
			     uint64_t len, uint64_t pgoff, const char *filename,
			     const uint8_t *build_id, size_t build_id_size)
{
	struct proc *p = find_proc(s, pid, 1);
	long img;
	size_t i, j;

	if (!p)
		return -ptc_err_nomem;
	if (!len || start + len < start)
		return 0;
	img = image_index(s, filename, build_id, build_id_size);
	if (img < 0)
		return (int)img;
	/* A new mapping hides what it overlaps (mmap over an old range). */
	for (i = j = 0; i < p->nr; i++)
		if (p->maps[i].end <= start || p->maps[i].start >= start + len)
			p->maps[j++] = p->maps[i];
	p->nr = j;
	if (grow((void **)&p->maps, &p->cap, p->nr + 1, sizeof(*p->maps)))
		return -ptc_err_nomem;
	p->maps[p->nr].start = start;
	p->maps[p->nr].end = start + len;
	p->maps[p->nr].pgoff = pgoff;
	p->maps[p->nr].image = (size_t)img;
	p->nr++;
	p->last = 0;
	return 0;
}

/* Read PT_LOAD segments and function symbols (images/symtab.h). */
static void load_image(struct ptc_spe_symbols *s, struct image *im)
{
	char path[4096];
	Elf *e = NULL;
	GElf_Ehdr eh;
	size_t i, nph, segcap = 0;
	int fd = -1;

	im->loaded = 1;
	if (im->name[0] == '[' || !im->name[0])
		return;		/* [vdso], [kernel.kallsyms] ... : no file */
	{
		struct ptc_locate_options lo = { .symfs = s->symfs, .buildid_dir = s->buildid_dir };
		int found = ptc_locate_image(&lo, im->name, im->build_id_size ? im->build_id : NULL,
					     im->build_id_size, path, sizeof(path));

		if (found == PTC_LOCATE_MISMATCH) {
			s->mismatched++;
			return;
		}
		if (found != PTC_LOCATE_FOUND) {
			s->missing++;
			return;
		}
	}
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		s->missing++;
		return;
	}
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || elf_getphdrnum(e, &nph))
		goto out;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (grow((void **)&im->segs, &segcap, im->nr_segs + 1, sizeof(*im->segs)))
			goto out;
		im->segs[im->nr_segs].off = ph.p_offset;
		im->segs[im->nr_segs].filesz = ph.p_filesz;
		im->segs[im->nr_segs].vaddr = ph.p_vaddr;
		im->nr_segs++;
	}
	im->found = 1;
	ptc_symtab_read(&im->syms, e);	/* (out of memory: no names) */
out:
	if (e)
		elf_end(e);
	close(fd);
}

int ptc_spe_symbols_lookup(struct ptc_spe_symbols *s, int32_t pid, uint64_t addr,
			   struct ptc_spe_location *loc)
{
	struct proc *p;
	const struct mapping *m = NULL;
	struct image *im;
	uint64_t off;
	size_t i;

	memset(loc, 0, sizeof(*loc));
	loc->dso_index = -1;
	/* Upper-half addresses are the kernel's, whatever the process. */
	p = find_proc(s, (addr >> 63) ? -1 : pid, 0);
	if (!p)
		return 0;
	if (p->last < p->nr && p->maps[p->last].start <= addr && addr < p->maps[p->last].end)
		m = &p->maps[p->last];
	for (i = 0; !m && i < p->nr; i++)
		if (p->maps[i].start <= addr && addr < p->maps[i].end) {
			m = &p->maps[i];
			p->last = i;
		}
	if (!m)
		return 0;
	im = &s->images[m->image];
	loc->dso = im->name;
	loc->dso_index = (int)m->image;
	if (!im->loaded)
		load_image(s, im);
	off = addr - m->start + m->pgoff;
	for (i = 0; i < im->nr_segs; i++) {
		const struct seg *g = &im->segs[i];
		if (off >= g->off && off - g->off < g->filesz) {
			const struct ptc_sym *sy;

			loc->have_vaddr = 1;
			loc->vaddr = off - g->off + g->vaddr;
			sy = ptc_symtab_find(&im->syms, loc->vaddr, NULL, NULL);
			if (sy) {
				loc->symbol = sy->name;
				loc->sym_offset = loc->vaddr - sy->addr;
			}
			break;
		}
	}
	return 1;
}

void ptc_spe_location_format(const struct ptc_spe_location *loc, uint64_t addr,
			     char *buf, size_t len)
{
	(void)addr;
	if (loc->symbol)
		snprintf(buf, len, "%s+0x%llx", loc->symbol, (unsigned long long)loc->sym_offset);
	else if (loc->dso && loc->have_vaddr)
		snprintf(buf, len, "%s+0x%llx", loc->dso, (unsigned long long)loc->vaddr);
	else if (loc->dso)
		snprintf(buf, len, "%s", loc->dso);
	else if (len)
		buf[0] = 0;
}
