/* ptconv slice: placeholder until its issue lands. */
#include "cli/cli.h"

int cmd_slice(int argc, char **argv)
{
	ptc_cli_error("slice: not built yet");
	return PTC_EXIT_USAGE;
}
