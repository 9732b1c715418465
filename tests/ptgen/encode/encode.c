/* ptgen-encode: turns a ground-truth execution (.truth, see
 * tests/ptgen/ground-truth.md) into the perf.data that
 * `perf record -e intel_pt//u` would have written for it.
 *
 * The truth is read twice (see gen.h): it must be a regular file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "truth.h"

static void usage(void)
{
	fprintf(stderr, "usage: ptgen-encode [options] TRUTH\n");
	gen_options_help(stderr);
	exit(2);
}

static void pass(struct gen *g, struct truth *tr, int scan)
{
	struct truth_event ev;
	int r;

	while ((r = truth_next(tr, &ev)) > 0) {
		if (scan)
			gen_scan(g, &ev);
		else
			gen_event(g, &ev);
	}
	if (r < 0)
		exit(1);
}

int main(int argc, char **argv)
{
	struct gen_options o;
	struct truth *tr;
	struct gen *g;
	int c, fd;

	gen_options_init(&o);
	while ((c = getopt_long(argc, argv, "o:h", gen_long_options, NULL)) != -1) {
		if (c == 'o')
			o.out = optarg;
		else if (!gen_option(&o, c, optarg))
			usage();
	}
	if (optind + 1 != argc)
		usage();
	o.truth = argv[optind];
	gen_options_check(&o);

	tr = truth_open(o.truth);
	if (!tr)
		return 1;
	fd = strcmp(o.out, "-") ? open(o.out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : 1;
	if (fd < 0)
		die("%s: %s", o.out, strerror(errno));
	g = gen_new(&o, fd);
	pass(g, tr, 1);
	if (truth_rewind(tr))
		die("%s: cannot read the truth twice (not a regular file?)", o.truth);
	gen_begin(g);
	pass(g, tr, 0);
	gen_finish(g);
	if (getenv("PTGEN_STATS"))
		gen_stats(g, stderr);
	gen_free(g);
	if (fd != 1 && close(fd))
		die("%s: %s", o.out, strerror(errno));
	truth_close(tr);
	return 0;
}
