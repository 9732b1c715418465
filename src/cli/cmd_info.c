/* ptconv info: placeholder until its issue lands. */
#include "cli/cli.h"

int cmd_info(int argc, char **argv)
{
	ptc_cli_error("info: not built yet");
	return PTC_EXIT_USAGE;
}
