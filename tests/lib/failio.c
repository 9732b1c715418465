/* A fault-injection shim for the test suite (LD_PRELOAD), so that every
 * error path of ptconv's output runs in `make check` without root and
 * without a hook in the product (issue 18).
 *
 * It fails one call, or every call from one on, of the chosen operations
 * on files inside one directory, with the chosen errno:
 *
 *   FAILIO_DIR=DIR       only files under DIR (by path, or by an fd's or a
 *                        FILE's /proc/self/fd link) are counted
 *   FAILIO_OPS=a,b       operations: open (open, openat, fopen, creat),
 *                        write (write, pwrite, fwrite), flush (fflush,
 *                        fclose, fsync, fdatasync), rename, mkdir
 *   FAILIO_NTH=N         fail the Nth counted call (1 first); 0: fail none
 *   FAILIO_STICKY=1      and every counted call after it (a full disk)
 *   FAILIO_ERRNO=NAME    ENOSPC (default), EIO, EROFS, EACCES, EDQUOT
 *   FAILIO_COUNT=FILE    at exit, write the number of counted calls there
 *
 * A failed fclose() still closes the stream, as fclose(3) says it does
 * on error; a failed fwrite() writes nothing and sets the stream's error
 * indicator, as a write failing inside stdio does.  (glibc and Linux.) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

enum { OP_OPEN = 1, OP_WRITE = 2, OP_FLUSH = 4, OP_RENAME = 8, OP_MKDIR = 16 };

static struct {
	int ready, ops, sticky, err;
	unsigned long nth, count;
	char dir[PATH_MAX];
	size_t dirlen;
	const char *count_file;
} cfg;

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static FILE *(*real_fopen)(const char *, const char *);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static size_t (*real_fwrite)(const void *, size_t, size_t, FILE *);
static int (*real_fflush)(FILE *);
static int (*real_fclose)(FILE *);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_rename)(const char *, const char *);
static int (*real_mkdir)(const char *, mode_t);

static int absolute(const char *path, char *out, size_t size);
static int fd_in_dir(int fd);

static void report(void)
{
	FILE *f;

	if (!cfg.count_file || !real_fopen)
		return;
	f = real_fopen(cfg.count_file, "w");
	if (!f)
		return;
	fprintf(f, "%lu\n", cfg.count);
	real_fclose(f);
}

static void setup(void)
{
	const char *s;
	char *save, *tok, ops[256];

	if (cfg.ready)
		return;
	cfg.ready = 1;
	real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	real_openat = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	real_fopen = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
	real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	real_pwrite = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
	real_fwrite = (size_t (*)(const void *, size_t, size_t, FILE *))dlsym(RTLD_NEXT, "fwrite");
	real_fflush = (int (*)(FILE *))dlsym(RTLD_NEXT, "fflush");
	real_fclose = (int (*)(FILE *))dlsym(RTLD_NEXT, "fclose");
	real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	real_rename = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	real_mkdir = (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "mkdir");

	s = getenv("FAILIO_DIR");
	if (!s || !absolute(s, cfg.dir, sizeof(cfg.dir)))
		return;	/* nothing to count */
	cfg.dirlen = strlen(cfg.dir);
	s = getenv("FAILIO_OPS");
	snprintf(ops, sizeof(ops), "%s", s ? s : "");
	for (tok = strtok_r(ops, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "open"))
			cfg.ops |= OP_OPEN;
		else if (!strcmp(tok, "write"))
			cfg.ops |= OP_WRITE;
		else if (!strcmp(tok, "flush"))
			cfg.ops |= OP_FLUSH;
		else if (!strcmp(tok, "rename"))
			cfg.ops |= OP_RENAME;
		else if (!strcmp(tok, "mkdir"))
			cfg.ops |= OP_MKDIR;
	}
	s = getenv("FAILIO_NTH");
	cfg.nth = s ? strtoul(s, NULL, 0) : 0;
	s = getenv("FAILIO_STICKY");
	cfg.sticky = s && *s == '1';
	s = getenv("FAILIO_ERRNO");
	cfg.err = ENOSPC;
	if (s && !strcmp(s, "EIO"))
		cfg.err = EIO;
	else if (s && !strcmp(s, "EROFS"))
		cfg.err = EROFS;
	else if (s && !strcmp(s, "EACCES"))
		cfg.err = EACCES;
	else if (s && !strcmp(s, "EDQUOT"))
		cfg.err = EDQUOT;
	cfg.count_file = getenv("FAILIO_COUNT");
	if (cfg.count_file)
		atexit(report);
}

/* path made absolute: its directory resolved (it must exist), its last
 * component kept.  0: it cannot be. */
static int absolute(const char *path, char *out, size_t size)
{
	char buf[PATH_MAX], real[PATH_MAX];
	const char *base;
	char *slash;

	snprintf(buf, sizeof(buf), "%s", path);
	while (strlen(buf) > 1 && buf[strlen(buf) - 1] == '/')
		buf[strlen(buf) - 1] = 0;
	slash = strrchr(buf, '/');
	if (slash == buf) {
		snprintf(out, size, "%s", buf);
		return 1;
	}
	if (slash)
		*slash = 0;
	base = slash ? slash + 1 : buf;
	if (!realpath(slash ? buf : ".", real))
		return 0;
	return snprintf(out, size, "%s/%s", real, base) < (int)size;
}

/* Is path DIR or under it? */
static int path_in_dir(const char *path)
{
	char abs[2 * PATH_MAX];

	if (!cfg.dirlen || !path || !absolute(path, abs, sizeof(abs)))
		return 0;
	return !strncmp(abs, cfg.dir, cfg.dirlen) && (abs[cfg.dirlen] == '/' || !abs[cfg.dirlen]);
}

/* A stream's fd open for writing, inside DIR (closing a stream that was
 * only read has nothing to fail). */
static int written_in_dir(FILE *f)
{
	int fd = fileno(f), fl = fd < 0 ? -1 : fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_ACCMODE) != O_RDONLY && fd_in_dir(fd);
}

static int fd_in_dir(int fd)
{
	char link[64], target[PATH_MAX];
	ssize_t n;

	if (!cfg.dirlen || fd < 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = 0;
	return !strncmp(target, cfg.dir, cfg.dirlen) && target[cfg.dirlen] == '/';
}

/* Count a call of op on a file inside DIR; 1: fail it. */
static int fails(int op, int inside)
{
	unsigned long k;

	if (!(cfg.ops & op) || !inside)
		return 0;
	k = __atomic_add_fetch(&cfg.count, 1, __ATOMIC_RELAXED);	/* -j N: threads */
	return cfg.nth && (k == cfg.nth || (cfg.sticky && k > cfg.nth));
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	return openat(AT_FDCWD, path, flags, mode);	/* (this file's) */
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	setup();
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if ((flags & O_ACCMODE) != O_RDONLY && (dirfd == AT_FDCWD || path[0] == '/') &&
	    fails(OP_OPEN, path_in_dir(path))) {
		errno = cfg.err;
		return -1;
	}
	return real_openat(dirfd, path, flags, mode);
}

FILE *fopen(const char *path, const char *mode)
{
	setup();
	if (mode[0] != 'r' || strchr(mode, '+')) {
		if (fails(OP_OPEN, path_in_dir(path))) {
			errno = cfg.err;
			return NULL;
		}
	}
	return real_fopen(path, mode);
}

FILE *fopen64(const char *path, const char *mode) __attribute__((alias("fopen")));

/* An fd's call of op: 1 (errno set) when it is to fail. */
static int fd_fails(int op, int fd)
{
	setup();
	if (!fails(op, fd_in_dir(fd)))
		return 0;
	errno = cfg.err;
	return 1;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	return fd_fails(OP_WRITE, fd) ? -1 : real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	return fd_fails(OP_WRITE, fd) ? -1 : real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) __attribute__((alias("pwrite")));

size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
	setup();
	if (size && n && fails(OP_WRITE, fd_in_dir(fileno(f)))) {
		/* as a write that fails inside stdio: the stream's error
		 * indicator set (glibc's _IO_ERR_SEEN), so ferror() sees it */
		f->_flags |= 0x20;
		errno = cfg.err;
		return 0;
	}
	return real_fwrite(p, size, n, f);
}

int fflush(FILE *f)
{
	setup();
	if (f && fails(OP_FLUSH, written_in_dir(f))) {
		errno = cfg.err;
		return EOF;
	}
	return real_fflush(f);
}

int fclose(FILE *f)
{
	int inside;

	setup();
	inside = written_in_dir(f);
	if (fails(OP_FLUSH, inside)) {
		real_fclose(f);
		errno = cfg.err;
		return EOF;
	}
	return real_fclose(f);
}

int fsync(int fd)
{
	return fd_fails(OP_FLUSH, fd) ? -1 : real_fsync(fd);
}

int fdatasync(int fd)
{
	return fd_fails(OP_FLUSH, fd) ? -1 : real_fdatasync(fd);
}

int rename(const char *from, const char *to)
{
	setup();
	if (fails(OP_RENAME, path_in_dir(to))) {
		errno = cfg.err;
		return -1;
	}
	return real_rename(from, to);
}

int mkdir(const char *path, mode_t mode)
{
	setup();
	if (fails(OP_MKDIR, path_in_dir(path))) {
		errno = cfg.err;
		return -1;
	}
	return real_mkdir(path, mode);
}
