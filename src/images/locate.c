/* Finding the file behind a mapping (see locate.h): build-id cache, then
 * --symfs, then the recorded path, each checked against the build-id. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "images/locate.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

void ptc_build_id_hex(const uint8_t *id, size_t size, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < size; i++) {
		out[2 * i] = hex[id[i] >> 4];
		out[2 * i + 1] = hex[id[i] & 15];
	}
	out[2 * size] = 0;
}

/* Search one ELF_T_NOTE data block for the GNU build-id. */
static int note_build_id(Elf_Data *data, uint8_t out[20])
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (data && off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0) {
			size_t n = nh.n_descsz < 20 ? nh.n_descsz : 20;
			memcpy(out, (const char *)data->d_buf + desc_off, n);
			return (int)n;
		}
		off = next;
	}
	return 0;
}

int ptc_read_build_id(const char *path, uint8_t out[20])
{
	Elf_Scn *scn = NULL;
	Elf *elf;
	size_t i, nph;
	int fd, ret = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ptc_err_internal;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ptc_err_not_found;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = -ptc_err_bad_magic;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		ret = note_build_id(elf_getdata(scn, NULL), out);
		if (ret)
			goto out;
	}
	/* Stripped of section headers: look in the PT_NOTE segments. */
	if (elf_getphdrnum(elf, &nph) == 0) {
		for (i = 0; i < nph; i++) {
			GElf_Phdr ph;
			Elf_Data *d;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
			ret = note_build_id(d, out);
			if (ret)
				goto out;
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Check a candidate: 1 found, 2 mismatch, 0 absent. */
static int try_candidate(const char *cand, const uint8_t *build_id, size_t build_id_size)
{
	uint8_t have[20];
	int n;

	if (!is_file(cand))
		return 0;
	if (!build_id_size)
		return 1;
	n = ptc_read_build_id(cand, have);
	if (n <= 0)
		return 1;	/* nothing to compare with (not ELF, or no note) */
	if ((size_t)n > build_id_size || memcmp(have, build_id, (size_t)n))
		return 2;
	/* A recording that does not say the build-id's size stores 20 bytes:
	 * a shorter id (e.g. 16-byte) is followed by zeros. */
	for (; (size_t)n < build_id_size; n++)
		if (build_id[n])
			return 2;
	return 1;
}

int ptc_locate_image(const struct ptc_locate_options *opt, const char *filename,
		     const uint8_t *build_id, size_t build_id_size,
		     char *path, size_t pathlen)
{
	char cand[3 * 4096], hex[41], mism[3 * 4096] = "";
	const char *dir = opt ? opt->buildid_dir : NULL;
	const char *symfs = opt ? opt->symfs : NULL;
	int k;

	if (!filename || !path || !pathlen)
		return -ptc_err_invalid;
	if (build_id_size > 20)
		build_id_size = 20;
	path[0] = 0;
	if (build_id_size && build_id) {
		char home[4096];
		if (!dir) {
			const char *h = getenv("HOME");
			if (h) {
				snprintf(home, sizeof(home), "%s/.debug", h);
				dir = home;
			}
		}
		ptc_build_id_hex(build_id, build_id_size, hex);
		if (dir) {
			if (!strcmp(filename, "[vdso]"))
				snprintf(cand, sizeof(cand), "%s/[vdso]/%s/vdso", dir, hex);
			else
				snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
			k = try_candidate(cand, build_id, build_id_size);
			if (k == 1) {
				snprintf(path, pathlen, "%s", cand);
				return PTC_LOCATE_FOUND;
			}
			if (k == 2)
				snprintf(mism, sizeof(mism), "%s", cand);
		}
	}
	/* Pseudo files ([vdso], [kernel.kallsyms], //anon) have no path. */
	if (filename[0] != '/')
		goto done;
	if (symfs && *symfs) {
		snprintf(cand, sizeof(cand), "%s%s", symfs, filename);
		k = try_candidate(cand, build_id, build_id_size);
		if (k == 1) {
			snprintf(path, pathlen, "%s", cand);
			return PTC_LOCATE_FOUND;
		}
		if (k == 2 && !mism[0])
			snprintf(mism, sizeof(mism), "%s", cand);
	}
	k = try_candidate(filename, build_id, build_id_size);
	if (k == 1) {
		snprintf(path, pathlen, "%s", filename);
		return PTC_LOCATE_FOUND;
	}
	if (k == 2 && !mism[0])
		snprintf(mism, sizeof(mism), "%s", filename);
done:
	if (mism[0]) {
		snprintf(path, pathlen, "%s", mism);
		return PTC_LOCATE_MISMATCH;
	}
	return PTC_LOCATE_MISSING;
}
