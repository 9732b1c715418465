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
#include <unistd.h>

#include "common/error.h"
#include "writers/writers.h"

#define TMP_SUFFIX ".ptconv-part"

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
