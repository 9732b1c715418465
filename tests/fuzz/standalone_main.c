/* Replays inputs through a fuzz target without libFuzzer, so that every
 * target's seeds and past crashers run in `make check` under any compiler.
 * Arguments are files or directories (read recursively, one level). */
#ifndef PTC_LIBFUZZER
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional, a target's: its verdict on the whole replay of n inputs (the
 * exit status), e.g. that the seeds reached the code it is about. */
int ptc_fuzz_replayed(int n) __attribute__((weak));

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long size;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(size > 0 ? (size_t)size : 1);
	if (!buf || (size > 0 && fread(buf, 1, (size_t)size, f) != (size_t)size)) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)size);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int i, n = 0;

	for (i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "%s: cannot stat\n", argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			char path[4096];
			while (d && (e = readdir(d))) {
				if (e->d_name[0] == '.')
					continue;
				snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
				if (run_file(path) == 0)
					n++;
			}
			if (d)
				closedir(d);
		} else if (run_file(argv[i]) == 0) {
			n++;
		}
	}
	fprintf(stderr, "%d inputs replayed\n", n);
	return ptc_fuzz_replayed ? ptc_fuzz_replayed(n) : 0;
}
#endif
