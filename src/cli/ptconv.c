/* ptconv: the command-line front end.  Dispatches to one subcommand per
 * verb, git-style; `ptconv FILE ...` is short for `ptconv convert FILE ...`. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "cli/cli.h"

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "convert", cmd_convert, "turn a recording into branch traces (the default)" },
	{ "info", cmd_info, "show what a recording holds" },
	{ "packets", cmd_packets, "count or list the trace packets of a recording" },
	{ "dump", cmd_dump, "print a trace file written by ptconv" },
	{ "stats", cmd_stats, "branch mix and hottest branches of a trace" },
	{ "slice", cmd_slice, "cut a trace to an instruction range" },
};

void ptc_cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ptconv: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *to)
{
	size_t i;

	fprintf(to, "usage: ptconv [convert] FILE [options]\n"
		    "       ptconv <command> [options]\n\ncommands:\n");
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(to, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(to, "\nSee ptconv(1) and ptconv-<command>(1).\n");
}

int main(int argc, char **argv)
{
	size_t i;

	ptc_cli_tune_heap();
	if (argc < 2) {
		usage(stderr);
		return PTC_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return PTC_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ptconv %s\n", PACKAGE_VERSION);
		return PTC_EXIT_OK;
	}
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].run(argc - 1, argv + 1);
	/* Anything else is the input of the default verb. */
	return cmd_convert(argc, argv);
}
