/* Output files under a temporary name until they are complete.
 *
 * Every output file is written as ".NAME.ptconv-part" beside its final
 * NAME and renamed once it is whole (rename(2) within a directory is
 * atomic), so that a script globbing the final names never reads a trace
 * cut short by a kill, a full disk or an error.  A run killed outright
 * leaves only such temporaries, which the next run into the directory
 * removes.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "writers/writers.h"

#define TMP_SUFFIX ".ptconv-part"

/* dir created, or an existing directory: 0, or a negative ptc error with
 * errno set (ENOTDIR for anything else). */
static int out_mkdir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0777) == 0)
		return 0;
	if (errno != EEXIST)
		return -ptc_err_io;
	if (stat(dir, &st) != 0)
		return -ptc_err_io;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;	/* e.g. -o naming the input */
		return -ptc_err_io;
	}
	return 0;
}

int ptc_out_tmpname(char *buf, size_t size, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
	int n = snprintf(buf, size, "%.*s.%s" TMP_SUFFIX, (int)dir, path, path + dir);

	return n < 0 || (size_t)n >= size ? -ptc_err_invalid : 0;
}

int ptc_out_commit(const char *path)
{
	char tmp[4096];

	if (ptc_out_tmpname(tmp, sizeof(tmp), path) < 0) {
		errno = ENAMETOOLONG;
		return -ptc_err_invalid;
	}
	return rename(tmp, path) == 0 ? 0 : -ptc_err_io;
}

void ptc_out_discard(const char *path)
{
	char tmp[4096];

	if (ptc_out_tmpname(tmp, sizeof(tmp), path) == 0)
		unlink(tmp);
}

/* Skip the digits at *s (at least one). */
static int digits(const char **s)
{
	const char *p = *s;

	while (*p >= '0' && *p <= '9')
		p++;
	if (p == *s)
		return 0;
	*s = p;
	return 1;
}

static int one_of(const char *s, const char *const *v)
{
	for (; *v; v++)
		if (!strcmp(s, *v))
			return 1;
	return 0;
}

/* Is name one that a conversion writes (ptconv-convert(1), OUTPUT)?
 * Exactly those shapes, so that no other file is ever taken for one. */
static int is_output(const char *name)
{
	static const char *const whole[] = { "summary.json", "spe.csv", "spe-profile.csv", "spe.bolt.fdata",
					     "perfetto.pftrace", NULL };
	static const char *const exts[] = { "ptc", "bb", "bt9.gz", "champsim.xz", "champsim.gz", "cbp2025.gz", NULL };
	static const char *const parted[] = { "bt9.gz", "champsim.xz", "champsim.gz", "cbp2025.gz", NULL };
	static const char *const thread_files[] = { "txt", "cbpexp", NULL };
	const char *p = name;

	if (one_of(name, whole))
		return 1;
	if (!strncmp(p, "trace.", 6)) {	/* trace.TID.EXT, trace.cpuN.EXT, trace.TID.partN.EXT */
		p += 6;
		if (!strncmp(p, "cpu", 3))
			p += 3;
		if (!digits(&p) || *p++ != '.')
			return 0;
		if (one_of(p, exts))
			return 1;
		if (strncmp(p, "part", 4))
			return 0;
		p += 4;
		return digits(&p) && *p++ == '.' && one_of(p, parted);
	}
	if (!strncmp(p, "xray.", 5)) {	/* xray.PID.fdr, xray.PID.TID.fdr, xray.PID.map.{yaml,elf} */
		p += 5;
		if (!digits(&p))
			return 0;
		if (!strcmp(p, ".fdr") || !strcmp(p, ".map.yaml") || !strcmp(p, ".map.elf"))
			return 1;
		return *p++ == '.' && digits(&p) && !strcmp(p, ".fdr");
	}
	if (!strncmp(p, "xtrace.", 7)) {	/* xtrace.TIME.ID.hintN.{xinsndata,xsnapshot}.bin */
		p += 7;
		if (!digits(&p) || *p++ != '.' || !digits(&p) || strncmp(p, ".hint", 5))
			return 0;
		p += 5;
		return digits(&p) && (!strcmp(p, ".xinsndata.bin") || !strcmp(p, ".xsnapshot.bin"));
	}
	/* PID-TID.txt, cpuN.cbpexp, ... */
	if (!strncmp(p, "cpu", 3)) {
		p += 3;
		if (!digits(&p))
			return 0;
	} else if (!digits(&p) || *p++ != '-' || !digits(&p)) {
		return 0;
	}
	return *p++ == '.' && one_of(p, thread_files);
}

/* A summary.json of ptconv's (its first keys), not another tool's. */
static int is_our_summary(const char *path)
{
	char head[16384];	/* (the input path comes first: up to 4 KiB) */
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f)
		return 0;
	n = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	head[n] = 0;
	return strstr(head, "\"decoder\":") && strstr(head, "\"trace_bytes\":");
}

/* Remove the regular files of dir that is_output() names, never keep:
 * how many; -1 (errno EEXIST), nothing removed, when dir holds a
 * summary.json that is not ptconv's. */
static int clean_outputs(const char *dir, const char *keep)
{
	DIR *d;
	struct dirent *e;
	struct stat ks;
	int n = 0, have_keep = keep && stat(keep, &ks) == 0;
	char sum[4096];

	/* another tool's summary.json: this is not a directory of ours */
	if (snprintf(sum, sizeof(sum), "%s/summary.json", dir) < (int)sizeof(sum) &&
	    access(sum, F_OK) == 0 && !is_our_summary(sum)) {
		errno = EEXIST;
		return -1;
	}
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char p[4096];
		struct stat st;

		if (!is_output(e->d_name) ||
		    snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p) ||
		    lstat(p, &st) != 0 || !S_ISREG(st.st_mode) ||
		    (have_keep && st.st_dev == ks.st_dev && st.st_ino == ks.st_ino))
			continue;
		if (unlink(p) == 0)
			n++;
	}
	closedir(d);
	return n;
}

int ptc_out_prepare(const char *dir, const char *keep, int only_temporaries, int *removed,
		    int *unfinished, char *err, size_t errlen)
{
	*removed = *unfinished = 0;
	if (out_mkdir(dir) < 0) {
		snprintf(err, errlen, "%s: cannot create the output directory: %s", dir, strerror(errno));
		return -1;
	}
	if (!only_temporaries && (*removed = clean_outputs(dir, keep)) < 0) {
		*removed = 0;
		snprintf(err, errlen, "%s: holds a summary.json that is not ptconv's: not an output directory "
			 "(choose another -o)", dir);
		return -1;
	}
	*unfinished = ptc_out_clean(dir);
	return 0;
}

int ptc_out_clean(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t sl = strlen(TMP_SUFFIX);
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		char p[4096];

		if (e->d_name[0] != '.' || l <= sl + 1 || strcmp(e->d_name + l - sl, TMP_SUFFIX))
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) < (int)sizeof(p) && unlink(p) == 0)
			n++;
	}
	closedir(d);
	return n;
}
