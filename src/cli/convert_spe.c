/* ARM SPE conversion: placeholder until its issue lands. */
#include "cli/cli.h"

int ptc_convert_arm_spe(const struct ptc_convert_options *opt, struct ptc_perf_reader *r)
{
	ptc_cli_error("arm_spe: not built yet");
	return PTC_EXIT_INPUT;
}
