/* ptconv stats: placeholder until its issue lands. */
#include "cli/cli.h"

int cmd_stats(int argc, char **argv)
{
	ptc_cli_error("stats: not built yet");
	return PTC_EXIT_USAGE;
}
