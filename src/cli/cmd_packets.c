/* ptconv packets: placeholder until its issue lands. */
#include "cli/cli.h"

int cmd_packets(int argc, char **argv)
{
	ptc_cli_error("packets: not built yet");
	return PTC_EXIT_USAGE;
}
