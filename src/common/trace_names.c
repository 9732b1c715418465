/* The names of branch kinds and gap causes, as every output and report
 * spells them: one table each, so that a text trace, `ptconv stats`,
 * `ptconv dump` and the JSON report never disagree. */
#include "common/trace_event.h"

static const char *const kind_names[PTC_BR_KIND_NR] = {
	"jmp", "jmp-ind", "call", "call-ind", "ret", "cond", "far",
};

static const char *const gap_names[PTC_GAP_CAUSE_NR] = {
	"overflow", "aux-lost", "records-lost", "no-image", "build-id", "decode", "disabled", "start",
};

const char *ptc_branch_kind_name(int kind)
{
	return kind >= 0 && kind < PTC_BR_KIND_NR ? kind_names[kind] : "unknown";
}

const char *ptc_gap_cause_name(int cause)
{
	return cause >= 0 && cause < PTC_GAP_CAUSE_NR ? gap_names[cause] : "unknown";
}
