/* Address spaces of traced processes (see aspace.h). */
#include "aspace.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct ptg_map {
	uint64_t start, end, pgoff, inode;
	int prot;		/* PROT_READ | PROT_WRITE | PROT_EXEC */
	char *path;		/* as the kernel names it; "" when anonymous */
	uint8_t *bytes;		/* cached code, NULL until first read */
};

struct ptg_aspace {
	pid_t pid;
	int memfd;		/* /proc/PID/mem */
	int wfd;		/* the same for writing (-1 until the first) */
	struct ptg_map *maps;
	size_t nmaps;
	size_t last;		/* the mapping of the last read: steps stay near */
	int announce_all;	/* next refresh announces every mapping */
};

static void free_maps(struct ptg_map *maps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(maps[i].path);
		free(maps[i].bytes);
	}
	free(maps);
}

/* Parses /proc/PID/maps.  Lines look like
 * "7f..-7f.. r-xp 00001000 08:01 1234    /usr/lib/x.so". */
static int read_maps(pid_t pid, struct ptg_map **out, size_t *nout)
{
	char name[64], *line = NULL;
	size_t cap = 0, n = 0, lcap = 0;
	struct ptg_map *maps = NULL;
	FILE *f;

	/* /proc/TID works for any thread, listed or not. */
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return -1;
	while (getline(&line, &lcap, f) > 0) {
		unsigned long long start, end, pgoff, inode;
		char perms[8];
		int pos = 0;
		struct ptg_map *m;
		char *path, *nl;

		if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %llu %n", &start,
			   &end, perms, &pgoff, &inode, &pos) < 5 || !pos)
			continue;
		if (n == cap) {
			struct ptg_map *nm;

			cap = cap ? 2 * cap : 64;
			nm = realloc(maps, cap * sizeof(*maps));
			if (!nm)
				goto fail;
			maps = nm;
		}
		path = line + pos;
		nl = strchr(path, '\n');
		if (nl)
			*nl = 0;
		m = &maps[n];
		memset(m, 0, sizeof(*m));
		m->start = start;
		m->end = end;
		m->pgoff = pgoff;
		m->inode = inode;
		m->prot = (perms[0] == 'r' ? PROT_READ : 0) |
			  (perms[1] == 'w' ? PROT_WRITE : 0) |
			  (perms[2] == 'x' ? PROT_EXEC : 0);
		m->path = strdup(path);
		if (!m->path)
			goto fail;
		n++;
	}
	free(line);
	fclose(f);
	*out = maps;
	*nout = n;
	return 0;
fail:
	free(line);
	fclose(f);
	free_maps(maps, n);
	errno = ENOMEM;
	return -1;
}

struct ptg_aspace *ptg_aspace_open(pid_t pid, int announced_now)
{
	struct ptg_aspace *as = calloc(1, sizeof(*as));
	char name[64];

	if (!as)
		return NULL;
	as->pid = pid;
	as->wfd = -1;
	snprintf(name, sizeof(name), "/proc/%d/mem", (int)pid);
	as->memfd = open(name, O_RDONLY | O_CLOEXEC);
	if (as->memfd < 0 || read_maps(pid, &as->maps, &as->nmaps) < 0) {
		int e = errno;

		ptg_aspace_free(as);
		errno = e;
		return NULL;
	}
	as->announce_all = !announced_now;
	return as;
}

void ptg_aspace_free(struct ptg_aspace *as)
{
	if (!as)
		return;
	if (as->memfd >= 0)
		close(as->memfd);
	if (as->wfd >= 0)
		close(as->wfd);
	free_maps(as->maps, as->nmaps);
	free(as);
}

static int same_map(const struct ptg_map *a, const struct ptg_map *b)
{
	return a->start == b->start && a->end == b->end &&
	       a->pgoff == b->pgoff && a->inode == b->inode &&
	       a->prot == b->prot && !strcmp(a->path, b->path);
}

/* Executable mappings that hold code the program can run.  [vsyscall] is
 * executable in name only (the kernel emulates it on a fault). */
static int is_code(const struct ptg_map *m)
{
	return (m->prot & PROT_EXEC) && strcmp(m->path, "[vsyscall]");
}

static int load_bytes(struct ptg_aspace *as, struct ptg_map *m)
{
	size_t len = m->end - m->start, done = 0;

	m->bytes = malloc(len);
	if (!m->bytes)
		return -1;
	while (done < len) {
		ssize_t r = pread(as->memfd, m->bytes + done, len - done,
				  (off_t)(m->start + done));

		if (r <= 0) {
			/* Unreadable tail (e.g. past the end of the file):
			 * zeros decode as harmless instructions. */
			memset(m->bytes + done, 0, len - done);
			break;
		}
		done += (size_t)r;
	}
	return 0;
}

/* The build-id note of an ELF image, as hex; "-" when it has none. */
static void elf_build_id(Elf *elf, char *hex, size_t hexsz)
{
	Elf_Scn *scn = NULL;

	snprintf(hex, hexsz, "-");
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			const uint8_t *desc = (const uint8_t *)d->d_buf + doff;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + noff, "GNU", 4) ||
			    nh.n_descsz == 0 || 2 * nh.n_descsz >= hexsz)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", desc[i]);
			return;
		}
	}
}

/* Build-ids of files, looked up once per path. */
struct bid_cache {
	struct bid_cache *next;
	char *path;
	char hex[84];
};
static struct bid_cache *bid_cache;

static const char *file_build_id(const char *path)
{
	struct bid_cache *c;
	int fd;

	for (c = bid_cache; c; c = c->next)
		if (!strcmp(c->path, path))
			return c->hex;
	c = calloc(1, sizeof(*c));
	if (!c)
		return "-";
	c->path = strdup(path);
	if (!c->path) {
		free(c);
		return "-";
	}
	snprintf(c->hex, sizeof(c->hex), "-");
	fd = path[0] == '/' ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		Elf *elf;

		elf_version(EV_CURRENT);
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		elf_build_id(elf, c->hex, sizeof(c->hex));
		elf_end(elf);
		close(fd);
	}
	c->next = bid_cache;
	bid_cache = c;
	return c->hex;
}

/* Writes a path field: spaces, backslashes and control characters become
 * octal escapes (\040, \134, ...) so that the field stays one word. */
static void put_path(FILE *out, const char *p)
{
	for (; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch <= ' ' || ch == '\\' || ch == 0x7f)
			fprintf(out, "\\%03o", ch);
		else
			fputc(ch, out);
	}
}

/* Dumps the vDSO image (once per build-id) and returns its file name. */
static int dump_vdso(struct ptg_aspace *as, struct ptg_map *m,
		     const char *dir, char *bid, size_t bidsz, char *file,
		     size_t filesz)
{
	size_t len = m->end - m->start;
	char tmp[4200];
	struct stat st;
	Elf *elf;
	FILE *f;

	if (!m->bytes && load_bytes(as, m) < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)m->bytes, len);
	elf_build_id(elf, bid, bidsz);
	elf_end(elf);
	snprintf(file, filesz, "%s/vdso-%s.so", dir,
		 strcmp(bid, "-") ? bid : "nobuildid");
	if (stat(file, &st) == 0 && (size_t)st.st_size == len)
		return 0;
	/* Written aside and renamed: a reader (or another tracer sharing the
	 * directory) never sees a partial image. */
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", file, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -1;
	if (fwrite(m->bytes, 1, len, f) != len) {
		fclose(f);
		unlink(tmp);
		return -1;
	}
	if (fclose(f) || rename(tmp, file)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int announce(struct ptg_aspace *as, struct ptg_map *m,
		    const struct ptg_mline_ctx *c)
{
	char bid[84], file[4096];
	int vdso = !strcmp(m->path, "[vdso]");

	if (vdso) {
		if (dump_vdso(as, m, c->vdso_dir, bid, sizeof(bid), file,
			      sizeof(file)) < 0) {
			fprintf(stderr, "ptgen-trace: cannot dump the vDSO into "
					"%s: %s\n", c->vdso_dir, strerror(errno));
			return -1;
		}
	} else {
		snprintf(bid, sizeof(bid), "%s", file_build_id(m->path));
	}
	fprintf(c->out, "M %" PRIu64 " %d %d 0x%" PRIx64 " 0x%" PRIx64
		" 0x%" PRIx64 " %d %s ", c->time, (int)c->pid, (int)c->tid,
		m->start, m->end - m->start, m->pgoff, m->prot, bid);
	put_path(c->out, m->path[0] ? m->path : "//anon");
	if (vdso) {
		fputc(' ', c->out);
		put_path(c->out, file);
	}
	fputc('\n', c->out);
	return 0;
}

int ptg_aspace_refresh(struct ptg_aspace *as, const struct ptg_mline_ctx *c)
{
	struct ptg_map *maps;
	size_t n, j = 0;
	int lines = 0;

	/* Through the thread: a process leader that exited before its
	 * threads shows no mappings any more. */
	if (read_maps(c->tid, &maps, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct ptg_map *m = &maps[i];
		int known = 0;

		/* Both lists are sorted by address. */
		while (j < as->nmaps && as->maps[j].end <= m->start)
			j++;
		if (!as->announce_all && j < as->nmaps &&
		    same_map(&as->maps[j], m)) {
			known = 1;
			m->bytes = as->maps[j].bytes;
			as->maps[j].bytes = NULL;
		}
		if (!known && is_code(m)) {
			if (announce(as, m, c) < 0) {
				free_maps(maps, n);
				return -1;
			}
			lines++;
		}
	}
	free_maps(as->maps, as->nmaps);
	as->maps = maps;
	as->nmaps = n;
	as->last = 0;
	as->announce_all = 0;
	return lines;
}

static struct ptg_map *find(struct ptg_aspace *as, uint64_t ip)
{
	size_t lo = 0, hi = as->nmaps;

	if (as->last < as->nmaps && as->maps[as->last].start <= ip &&
	    ip < as->maps[as->last].end)
		return &as->maps[as->last];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < as->maps[mid].start)
			hi = mid;
		else if (ip >= as->maps[mid].end)
			lo = mid + 1;
		else {
			as->last = mid;
			return &as->maps[mid];
		}
	}
	return NULL;
}

size_t ptg_aspace_read(struct ptg_aspace *as, uint64_t ip, uint8_t *buf,
		       size_t n)
{
	struct ptg_map *m = find(as, ip);
	size_t avail;

	if (!m || !is_code(m))
		return 0;
	if (m->prot & PROT_WRITE) {
		/* Writable code (JIT) changes under the cache: read it
		 * afresh every time. */
		ssize_t r = pread(as->memfd, buf, n < m->end - ip ? n : m->end - ip,
				  (off_t)ip);

		return r > 0 ? (size_t)r : 0;
	}
	if (!m->bytes && load_bytes(as, m) < 0)
		return 0;
	avail = m->end - ip;
	if (avail >= n) {
		memcpy(buf, m->bytes + (ip - m->start), n);
		return n;
	}
	/* An instruction that crosses into the next mapping. */
	memcpy(buf, m->bytes + (ip - m->start), avail);
	return avail + ptg_aspace_read(as, ip + avail, buf + avail, n - avail);
}

int ptg_aspace_peek(struct ptg_aspace *as, uint64_t addr, void *buf, size_t n)
{
	ssize_t r = pread(as->memfd, buf, n, (off_t)addr);

	return r == (ssize_t)n ? 0 : -1;
}

int ptg_aspace_poke(struct ptg_aspace *as, uint64_t addr, const void *buf, size_t n)
{
	if (as->wfd < 0) {
		char name[64];

		snprintf(name, sizeof(name), "/proc/%d/mem", (int)as->pid);
		as->wfd = open(name, O_WRONLY | O_CLOEXEC);
		if (as->wfd < 0)
			return -1;
	}
	return pwrite(as->wfd, buf, n, (off_t)addr) == (ssize_t)n ? 0 : -1;
}
