/* libipt 2.1 and later report the tracing state at every PSB as a status
 * update event (ptev_enabled with the PSB+'s IP, or ptev_disabled, with
 * status_update set); libipt 2.0, loaded here, never does, but its struct
 * pt_event has the field.  Synthetic events against what they mean to an
 * engine (ptc_pt_status_update(), which both engines act on): the same
 * state is nothing (no gap), a contrary one is said, any other event is
 * not a status update of the tracing state.  The expectations follow from
 * libipt's documentation of status_update and from its own decoders,
 * which refuse a contrary one (-pte_bad_status_update). */
#include <string.h>

#include <intel-pt.h>

#include "../lib/check.h"
#include "decoders/intel_pt/ptdec.h"

static struct pt_event event(enum pt_event_type type, int status)
{
	struct pt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.status_update = status != 0;
	if (type == ptev_enabled)
		ev.variant.enabled.ip = 0x401000;
	else if (type == ptev_disabled)
		ev.ip_suppressed = 1;
	return ev;
}

int main(void)
{
	/* per event: what it means to an engine with tracing off, and on */
	static const struct {
		enum pt_event_type type;
		int status, off, on;
	} cases[] = {
		/* a PSB+ with a FUP (tracing on), without one (off): the same
		 * state is nothing, the other is contrary */
		{ ptev_enabled, 1, PTC_PT_STATUS_ON, PTC_PT_STATUS_AGREES },
		{ ptev_disabled, 1, PTC_PT_STATUS_AGREES, PTC_PT_STATUS_OFF },
		/* TIP.PGE and TIP.PGD: changes, the engines' own business */
		{ ptev_enabled, 0, PTC_PT_STATUS_NONE, PTC_PT_STATUS_NONE },
		{ ptev_disabled, 0, PTC_PT_STATUS_NONE, PTC_PT_STATUS_NONE },
		/* other PSB+ status updates (libipt 2.0 gives these too), an
		 * asynchronous disable */
		{ ptev_exec_mode, 1, PTC_PT_STATUS_NONE, PTC_PT_STATUS_NONE },
		{ ptev_async_paging, 1, PTC_PT_STATUS_NONE, PTC_PT_STATUS_NONE },
		{ ptev_cbr, 1, PTC_PT_STATUS_NONE, PTC_PT_STATUS_NONE },
		{ ptev_async_disabled, 0, PTC_PT_STATUS_NONE, PTC_PT_STATUS_NONE },
	};
	size_t i;
	int on;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pt_event ev = event(cases[i].type, cases[i].status);

		for (on = 0; on < 2; on++) {
			int got = ptc_pt_status_update(&ev, on), want = on ? cases[i].on : cases[i].off;

			CHECK(got == want, "case %zu: event %d status_update %d, engine %s: %d, want %d", i,
			      (int)cases[i].type, cases[i].status, on ? "on" : "off", got, want);
		}
	}
	return check_result();
}
