/* ptconv dump: placeholder until its issue lands. */
#include "cli/cli.h"

int cmd_dump(int argc, char **argv)
{
	ptc_cli_error("dump: not built yet");
	return PTC_EXIT_USAGE;
}
