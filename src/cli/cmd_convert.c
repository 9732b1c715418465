/* ptconv convert: placeholder until its issue lands. */
#include "cli/cli.h"

int cmd_convert(int argc, char **argv)
{
	ptc_cli_error("convert: not built yet");
	return PTC_EXIT_USAGE;
}
