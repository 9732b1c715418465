/* Executable images: an ELF file's executable segments (or a raw code dump)
 * and where its code sections lie in them.  The file is mapped, not copied:
 * the code bytes the decoders read are the page cache's.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "images/image_int.h"
#include "images/table_cache.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static struct ptc_image *image_new(const char *name)
{
	struct ptc_image *img = calloc(1, sizeof(*img));

	if (!img)
		return NULL;
	img->name = strdup(name ? name : "");
	if (!img->name) {
		free(img);
		return NULL;
	}
	img->mode = 64;
	pthread_mutex_init(&img->modes_lock, NULL);
	return img;
}

/* The table of an image (all that a table of another mode owns). */
void ptc_image_drop_table(struct ptc_image *img)
{
	if (img->table_map) {
		munmap(img->table_map, img->table_map_size);
		img->table_map = NULL;
		img->table_map_size = 0;
	} else {
		free(img->bits);
		free(img->rank);
		free(img->first_br);
		free(img->runs);
		free(img->br);
	}
	img->bits = NULL;
	img->rank = img->first_br = NULL;
	img->runs = NULL;
	img->br = NULL;
	img->nwords = img->nruns = img->nbr = 0;
	img->ninsns = img->bad_bytes = img->first_bad = 0;
}

void ptc_image_free(struct ptc_image *img)
{
	size_t i;

	if (!img)
		return;
	if (img->base) {
		ptc_image_drop_table(img);
		free(img);
		return;
	}
	for (i = 0; i < sizeof(img->modes) / sizeof(img->modes[0]); i++)
		ptc_image_free(img->modes[i]);
	pthread_mutex_destroy(&img->modes_lock);
	if (img->map)
		munmap(img->map, img->map_size);
	free(img->copy);
	free(img->spans);
	free(img->regions);
	ptc_image_drop_table(img);
	ptc_symtab_free(&img->syms);
	free(img->name);
	free(img->table_dir);
	free(img);
}

static int cmp_span(const void *a, const void *b)
{
	const struct ptc_span *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int cmp_region(const void *a, const void *b)
{
	const struct ptc_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sort the spans and drop what overlaps an earlier one (only a corrupt or
 * hostile file has overlapping executable segments). */
static void normalise_spans(struct ptc_image *img)
{
	size_t i, n = 0;

	qsort(img->spans, img->nspans, sizeof(*img->spans), cmp_span);
	for (i = 0; i < img->nspans; i++) {
		struct ptc_span s = img->spans[i];

		if (n) {
			const struct ptc_span *p = &img->spans[n - 1];
			uint64_t pend = p->vaddr + p->size;

			if (s.vaddr < pend) {
				uint64_t cut = pend - s.vaddr;

				if (cut >= s.size)
					continue;
				s.vaddr += cut;
				s.offset += cut;
				s.bytes += cut;
				s.size -= cut;
			}
		}
		img->spans[n++] = s;
	}
	img->nspans = n;
}

/* Clip region r to the spans and append what remains (a section may only
 * cover code that is mapped executable). */
static void add_region(struct ptc_image *img, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < img->nspans; i++) {
		const struct ptc_span *s = &img->spans[i];
		uint64_t a = start > s->vaddr ? start : s->vaddr;
		uint64_t b = end < s->vaddr + s->size ? end : s->vaddr + s->size;

		if (a < b) {
			img->regions[img->nregions].start = a;
			img->regions[img->nregions].end = b;
			img->nregions++;
			return;	/* spans are disjoint; a section lies in one segment */
		}
	}
}

static void normalise_regions(struct ptc_image *img)
{
	size_t i, n = 0;

	qsort(img->regions, img->nregions, sizeof(*img->regions), cmp_region);
	for (i = 0; i < img->nregions; i++) {
		struct ptc_region r = img->regions[i];

		if (n && r.start < img->regions[n - 1].end) {
			if (r.end <= img->regions[n - 1].end)
				continue;
			r.start = img->regions[n - 1].end;
		}
		img->regions[n++] = r;
	}
	img->nregions = n;
}

static void read_build_id(struct ptc_image *img, Elf *elf, uint64_t off, uint64_t size,
			  Elf_Type type)
{
	Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)off, size, type);
	size_t pos = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!d)
		return;
	while (pos < d->d_size &&
	       (next = gelf_getnote(d, pos, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0) {
			size_t n = nh.n_descsz < sizeof(img->build_id) ? nh.n_descsz
								      : sizeof(img->build_id);

			memcpy(img->build_id, (const char *)d->d_buf + desc_off, n);
			img->build_id_size = n;
			return;
		}
		pos = next;
	}
}

/* Parse the ELF image in [data, data + size): segments, sections, build-id. */
static int parse_elf(struct ptc_image *img, uint8_t *data, size_t size,
		     char *err, size_t errlen)
{
	Elf *elf;
	GElf_Ehdr eh;
	size_t i, nph, nsec = 0, nobits_code = 0, empty_code = 0, phsize, shsize;
	Elf_Scn *scn = NULL;
	int rc = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(err, errlen, -ptc_err_internal, "%s: libelf: %s", img->name,
			    elf_errmsg(-1));
	elf = elf_memory((char *)data, size);
	if (!elf)
		return fail(err, errlen, -ptc_err_bad_magic, "%s: not an ELF file: %s",
			    img->name, elf_errmsg(-1));
	if (elf_kind(elf) != ELF_K_ELF) {
		rc = fail(err, errlen, -ptc_err_bad_magic, "%s: not an ELF file", img->name);
		goto out;
	}
	if (!gelf_getehdr(elf, &eh)) {
		rc = fail(err, errlen, -ptc_err_truncated, "%s: bad ELF header: %s",
			  img->name, elf_errmsg(-1));
		goto out;
	}
	/* x86-64 and x32 files hold 64-bit code, i386 files 32-bit code (the
	 * mode MODE.Exec then normally says; a table of another mode is made
	 * when the trace says otherwise). */
	if (eh.e_machine == EM_X86_64 && (eh.e_ident[EI_CLASS] == ELFCLASS64 ||
					  eh.e_ident[EI_CLASS] == ELFCLASS32)) {
		img->mode = 64;
	} else if (eh.e_machine == EM_386 && eh.e_ident[EI_CLASS] == ELFCLASS32) {
		img->mode = 32;
	} else {
		rc = fail(err, errlen, -ptc_err_unsupported,
			  "%s: not an x86 ELF file (class %u, machine %u)", img->name,
			  eh.e_ident[EI_CLASS], eh.e_machine);
		goto out;
	}
	phsize = eh.e_ident[EI_CLASS] == ELFCLASS32 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr);
	shsize = eh.e_ident[EI_CLASS] == ELFCLASS32 ? sizeof(Elf32_Shdr) : sizeof(Elf64_Shdr);
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		rc = fail(err, errlen, -ptc_err_foreign_endian, "%s: big-endian ELF", img->name);
		goto out;
	}
	if (elf_getphdrnum(elf, &nph) != 0) {
		rc = fail(err, errlen, -ptc_err_bad_record, "%s: bad program headers: %s",
			  img->name, elf_errmsg(-1));
		goto out;
	}
	if (nph > size / phsize) {
		rc = fail(err, errlen, -ptc_err_bad_size,
			  "%s: %zu program headers cannot fit in %zu bytes", img->name, nph, size);
		goto out;
	}
	img->spans = calloc(nph ? nph : 1, sizeof(*img->spans));
	if (!img->spans) {
		rc = fail(err, errlen, -ptc_err_nomem, "%s: out of memory", img->name);
		goto out;
	}
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			rc = fail(err, errlen, -ptc_err_bad_record,
				  "%s: program header %zu unreadable: %s", img->name, i,
				  elf_errmsg(-1));
			goto out;
		}
		if (ph.p_type == PT_NOTE && !img->build_id_size && ph.p_offset <= size &&
		    ph.p_filesz <= size - ph.p_offset)
			read_build_id(img, elf, ph.p_offset, ph.p_filesz,
				      ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && !ph.p_filesz && ph.p_memsz)
			empty_code++;
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || !ph.p_filesz)
			continue;
		if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset) {
			rc = fail(err, errlen, -ptc_err_truncated,
				  "%s: executable segment %zu (file offset 0x%" PRIx64
				  ", 0x%" PRIx64 " bytes) extends past the end of the file (0x%zx bytes)",
				  img->name, i, (uint64_t)ph.p_offset, (uint64_t)ph.p_filesz, size);
			goto out;
		}
		if (ph.p_vaddr + ph.p_filesz < ph.p_vaddr) {
			rc = fail(err, errlen, -ptc_err_bad_size,
				  "%s: executable segment %zu wraps the address space", img->name, i);
			goto out;
		}
		img->spans[img->nspans].vaddr = ph.p_vaddr;
		img->spans[img->nspans].size = ph.p_filesz;
		img->spans[img->nspans].offset = ph.p_offset;
		img->spans[img->nspans].bytes = data + ph.p_offset;
		img->nspans++;
	}
	if (!img->nspans) {
		rc = fail(err, errlen, -ptc_err_not_found, "%s: no executable segment%s", img->name,
			  empty_code ? " with bytes in the file (a separate debug-info file?)" : "");
		goto out;
	}
	normalise_spans(img);

	if (elf_getshdrnum(elf, &nsec) != 0)
		nsec = 0;	/* no usable section headers: sweep the segments */
	if (nsec > size / shsize)
		nsec = 0;
	img->regions = calloc(nsec + img->nspans, sizeof(*img->regions));
	if (!img->regions) {
		rc = fail(err, errlen, -ptc_err_nomem, "%s: out of memory", img->name);
		goto out;
	}
	while (nsec && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (!img->build_id_size && sh.sh_type == SHT_NOTE && sh.sh_offset <= size &&
		    sh.sh_size <= size - sh.sh_offset)
			read_build_id(img, elf, sh.sh_offset, sh.sh_size,
				      sh.sh_addralign == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (sh.sh_type == SHT_NOBITS && (sh.sh_flags & SHF_EXECINSTR))
			nobits_code++;
		if (sh.sh_type != SHT_PROGBITS || (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) !=
		    (SHF_ALLOC | SHF_EXECINSTR) || !sh.sh_size ||
		    sh.sh_addr + sh.sh_size < sh.sh_addr)
			continue;
		if (img->nregions < nsec)
			add_region(img, sh.sh_addr, sh.sh_addr + sh.sh_size);
	}
	if (!img->nregions && nobits_code) {
		/* A separate debug-info file: the segments are there, their
		 * bytes are not. */
		rc = fail(err, errlen, -ptc_err_unsupported,
			  "%s: its code sections have no bytes (a separate debug-info file?)",
			  img->name);
		goto out;
	}
	if (!img->nregions)
		for (i = 0; i < img->nspans; i++)
			add_region(img, img->spans[i].vaddr,
				   img->spans[i].vaddr + img->spans[i].size);
	normalise_regions(img);
	/* the function names (none when out of memory: they only name) */
	ptc_symtab_read(&img->syms, elf);
out:
	elf_end(elf);
	return rc;
}

static int check_build_id(const struct ptc_image *img, const uint8_t *want, size_t want_size,
			  char *err, size_t errlen)
{
	char have_hex[41], want_hex[41];
	size_t i, n;

	/* perf pads build-ids to 20 bytes with zeros. */
	while (want_size && !want[want_size - 1])
		want_size--;
	n = img->build_id_size;
	while (n && !img->build_id[n - 1])
		n--;
	if (want_size == n && memcmp(want, img->build_id, n) == 0)
		return 0;
	for (i = 0; i < n && i < 20; i++)
		sprintf(have_hex + 2 * i, "%02x", img->build_id[i]);
	have_hex[2 * i] = 0;
	for (i = 0; i < want_size && i < 20; i++)
		sprintf(want_hex + 2 * i, "%02x", want[i]);
	want_hex[2 * i] = 0;
	return fail(err, errlen, -ptc_err_mismatch, "%s: build-id %s, expected %s", img->name,
		    n ? have_hex : "(none)", want_hex);
}

int ptc_image_load_elf(struct ptc_image **out, const char *path,
		       const uint8_t *build_id, size_t build_id_size,
		       char *err, size_t errlen)
{
	return ptc_image_load_elf_mt(out, path, build_id, build_id_size, 1, err, errlen);
}

/* Fill img's table: from the table cache when it has it, else by the
 * sweep (then stored there). */
static int make_table(struct ptc_image *img, int threads, char *err, size_t errlen)
{
	const char *dir = img->base ? img->base->table_dir : img->table_dir;
	uint8_t key[16];
	int rc;

	if (dir) {
		ptc_table_cache_key(img, key);
		rc = ptc_table_cache_load(img, dir, key);
		if (rc < 0)
			return fail(err, errlen, rc, "%s: out of memory", img->name);
		if (rc == 1) {
			img->table_cached = 1;
			return 0;
		}
	}
	rc = ptc_image_build_table(img, threads, err, errlen);
	if (rc == 0 && dir)
		ptc_table_cache_store(img, dir, key);
	return rc;
}

int ptc_image_load_elf_mt(struct ptc_image **out, const char *path,
			  const uint8_t *build_id, size_t build_id_size, int threads,
			  char *err, size_t errlen)
{
	return ptc_image_load_elf_cached(out, path, build_id, build_id_size, threads, NULL, err, errlen);
}

int ptc_image_load_elf_cached(struct ptc_image **out, const char *path,
			      const uint8_t *build_id, size_t build_id_size, int threads,
			      const char *table_dir, char *err, size_t errlen)
{
	struct ptc_image *img;
	struct stat st;
	void *map;
	int fd, rc;

	if (!out || !path)
		return fail(err, errlen, -ptc_err_invalid, "ptc_image_load_elf: no path");
	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, errno == ENOENT ? -ptc_err_not_found : -ptc_err_io,
			    "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0) {
		rc = fail(err, errlen, -ptc_err_io, "%s: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf32_Ehdr)) {
		close(fd);
		return fail(err, errlen, S_ISREG(st.st_mode) ? -ptc_err_truncated : -ptc_err_invalid,
			    "%s: %s", path, S_ISREG(st.st_mode) ?
			    "too short for an ELF header" : "not a regular file");
	}
	/* Private and writable so that libelf may convert in place; nothing is
	 * written for a native-endian file, so the pages stay shared. */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return fail(err, errlen, -ptc_err_io, "%s: mmap: %s", path, strerror(errno));

	img = image_new(path);
	if (!img) {
		munmap(map, (size_t)st.st_size);
		return fail(err, errlen, -ptc_err_nomem, "%s: out of memory", path);
	}
	img->map = map;
	img->map_size = (size_t)st.st_size;
	rc = parse_elf(img, map, img->map_size, err, errlen);
	if (rc == 0 && build_id && build_id_size)
		rc = check_build_id(img, build_id, build_id_size, err, errlen);
	if (rc == 0 && table_dir && !(img->table_dir = strdup(table_dir)))
		rc = fail(err, errlen, -ptc_err_nomem, "%s: out of memory", path);
	if (rc == 0)
		rc = make_table(img, threads, err, errlen);
	if (rc < 0) {
		ptc_image_free(img);
		return rc;
	}
	*out = img;
	return 0;
}

int ptc_image_from_bytes(struct ptc_image **out, const char *name,
			 const uint8_t *bytes, size_t size, uint64_t base,
			 char *err, size_t errlen)
{
	struct ptc_image *img;
	int rc;

	if (!out || (!bytes && size))
		return fail(err, errlen, -ptc_err_invalid, "ptc_image_from_bytes: no bytes");
	*out = NULL;
	if (!size)
		return fail(err, errlen, -ptc_err_invalid, "%s: no code bytes", name ? name : "");
	if (base + size < base)
		return fail(err, errlen, -ptc_err_bad_size, "%s: 0x%zx bytes at 0x%" PRIx64
			    " wrap the address space", name ? name : "", size, base);
	img = image_new(name);
	if (!img)
		return fail(err, errlen, -ptc_err_nomem, "%s: out of memory", name ? name : "");
	img->copy = malloc(size);
	if (!img->copy) {
		ptc_image_free(img);
		return fail(err, errlen, -ptc_err_nomem, "%s: out of memory", name ? name : "");
	}
	memcpy(img->copy, bytes, size);

	if (size >= 4 && memcmp(bytes, ELFMAG, SELFMAG) == 0) {
		/* A vDSO dump: an ELF image, which says itself where its code is. */
		rc = parse_elf(img, img->copy, size, err, errlen);
	} else {
		img->spans = calloc(1, sizeof(*img->spans));
		img->regions = calloc(1, sizeof(*img->regions));
		if (!img->spans || !img->regions) {
			rc = fail(err, errlen, -ptc_err_nomem, "%s: out of memory", img->name);
		} else {
			img->spans[0].vaddr = base;
			img->spans[0].size = size;
			img->spans[0].offset = 0;
			img->spans[0].bytes = img->copy;
			img->nspans = 1;
			img->regions[0].start = base;
			img->regions[0].end = base + size;
			img->nregions = 1;
			rc = 0;
		}
	}
	if (rc == 0)
		rc = ptc_image_build_table(img, 1, err, errlen);
	if (rc < 0) {
		ptc_image_free(img);
		return rc;
	}
	*out = img;
	return 0;
}

unsigned ptc_image_mode(const struct ptc_image *img)
{
	return img ? img->mode : 0;
}

int ptc_image_in_mode(const struct ptc_image *img, unsigned bits, const struct ptc_image **out,
		      char *err, size_t errlen)
{
	struct ptc_image *base, *m;
	int slot = ptc_mode_slot(bits), rc = 0;

	if (!img || !out || slot < 0)
		return fail(err, errlen, -ptc_err_invalid, "ptc_image_in_mode: no image or mode");
	if (img->mode == bits) {
		*out = img;
		return 0;
	}
	/* (the file's image is only read, but for the tables of other modes
	 * it keeps: hence the cast) */
	base = (struct ptc_image *)(img->base ? img->base : img);
	if (base->mode == bits) {
		*out = base;
		return 0;
	}
	pthread_mutex_lock(&base->modes_lock);
	m = base->modes[slot];
	if (!m) {
		m = malloc(sizeof(*m));
		if (!m) {
			rc = fail(err, errlen, -ptc_err_nomem, "%s: out of memory", base->name);
		} else {
			/* what the code is, shared (the name, the spans, the
			 * regions, the symbols: base owns them); the table and
			 * its statistics, its own */
			*m = *base;
			m->mode = bits;
			m->base = base;
			m->map = NULL;
			m->copy = NULL;
			memset(m->modes, 0, sizeof(m->modes));
			m->bits = NULL;
			m->rank = NULL;
			m->first_br = NULL;
			m->runs = NULL;
			m->br = NULL;
			m->nwords = m->nruns = m->nbr = 0;
			m->ninsns = m->bad_bytes = m->first_bad = 0;
			m->table_cached = 0;
			rc = make_table(m, 1, err, errlen);
			if (rc < 0) {
				ptc_image_free(m);
				m = NULL;
			} else {
				base->modes[slot] = m;
			}
		}
	}
	pthread_mutex_unlock(&base->modes_lock);
	if (rc < 0)
		return rc;
	*out = m;
	return 0;
}

const char *ptc_image_name(const struct ptc_image *img)
{
	return img ? img->name : NULL;
}

const uint8_t *ptc_image_build_id(const struct ptc_image *img, size_t *size)
{
	if (size)
		*size = img ? img->build_id_size : 0;
	return img && img->build_id_size ? img->build_id : NULL;
}

const struct ptc_tbranch *ptc_image_branches(const struct ptc_image *img, size_t *count)
{
	if (count)
		*count = img ? img->nbr : 0;
	return img ? img->br : NULL;
}

const struct ptc_sym *ptc_image_symbol(const struct ptc_image *img, uint64_t addr, uint64_t *lo,
				       uint64_t *hi)
{
	if (!img) {
		if (lo)
			*lo = addr;
		if (hi)
			*hi = addr + 1;
		return NULL;
	}
	return ptc_symtab_find(&img->syms, addr, lo, hi);
}

size_t ptc_image_read(const struct ptc_image *img, uint64_t addr, uint8_t *buf, size_t n)
{
	size_t i, done = 0;

	if (!img || !buf)
		return 0;
	/* Spans are sorted; a read may continue into an adjacent one. */
	for (i = 0; i < img->nspans && done < n; i++) {
		const struct ptc_span *s = &img->spans[i];
		uint64_t a = addr + done, left;
		size_t k;

		if (a < s->vaddr || a - s->vaddr >= s->size)
			continue;
		left = s->size - (a - s->vaddr);
		k = n - done < left ? n - done : (size_t)left;
		memcpy(buf + done, s->bytes + (a - s->vaddr), k);
		done += k;
	}
	return done;
}

int ptc_image_bias(const struct ptc_image *img, uint64_t map_start,
		   uint64_t map_pgoff, int64_t *bias)
{
	const struct ptc_span *best = NULL;
	size_t i;

	if (!img || !bias)
		return -ptc_err_invalid;
	/* The segment whose file range holds the mapping's first byte (the
	 * kernel maps from the page that contains p_offset), else the first
	 * one after it: a mapping that starts earlier in the file (pre
	 * separate-code layouts map the file from offset 0) covers it. */
	for (i = 0; i < img->nspans; i++) {
		const struct ptc_span *s = &img->spans[i];
		uint64_t page = s->offset & ~(uint64_t)0xfff;

		if (map_pgoff >= page && map_pgoff < s->offset + s->size) {
			best = s;
			break;
		}
		if (s->offset >= map_pgoff && (!best || s->offset < best->offset))
			best = s;
	}
	if (!best)
		return -ptc_err_not_found;
	*bias = (int64_t)(map_start - map_pgoff + best->offset - best->vaddr);
	return 0;
}

void ptc_image_stats(const struct ptc_image *img, struct ptc_image_stats *st)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	if (!img)
		return;
	for (i = 0; i < img->nregions; i++)
		st->code_bytes += img->regions[i].end - img->regions[i].start;
	st->insns = img->ninsns;
	st->branches = img->nbr;
	st->bad_bytes = img->bad_bytes;
	st->first_bad = img->first_bad;
	st->runs = img->nruns;
	st->table_cached = img->table_cached;
	st->table_bytes = img->nbr * sizeof(*img->br) + (img->nwords + 1) * (sizeof(*img->bits) +
			  sizeof(*img->rank) + sizeof(*img->first_br)) + img->nruns * sizeof(*img->runs) +
			  img->nspans * sizeof(*img->spans) + img->nregions * sizeof(*img->regions);
}
