/* Gaps for the threads that ran during a loss ("bystanders"), shared by
 * both Intel PT engines (the walker, ptdec.c, and --engine=libipt,
 * blkdec.c).
 *
 * On one CPU's trace, a loss (overflow, lost AUX data, a decode error)
 * hides more than the thread running when it began and the one running
 * when decoding resumed: every thread the sideband says was switched in on
 * that CPU in between lost branches too, though the trace never shows it
 * running.  Each of them gets the gap, with the detail "ran during: ...",
 * without a resume address (its stream restarts where it next runs) and
 * without lost bytes (those are counted once, for the thread that owns the
 * gap).
 *
 * The decoder knows when a loss began (the gap's time) but not yet when it
 * ended: the span ends where the decoder's time is next known after the
 * gap.  So a closed gap is noted, and once time has moved past it (or the
 * trace ended) the environment is told the span (lost_on_cpu, ptdec.h).
 * It knows who was switched in when, and gives each of them the gap where
 * its stream stands at that time: a thread that ran on other CPUs before
 * and after its stretch here has its gap between those branches.  The span
 * may reach past the resumption: only the switches before the resuming
 * thread's last one fall in the gap.
 */
#ifndef PTC_DECODERS_INTEL_PT_BYSTANDERS_H
#define PTC_DECODERS_INTEL_PT_BYSTANDERS_H

#include <stdint.h>

#include "decoders/intel_pt/ptdec.h"

struct ptc_pt_bystanders {
	const struct ptc_pt_env *env;	/* told the losses (lost_on_cpu) */
	int cpu;			/* <0: a per-thread queue, nobody else runs */
	const struct ptc_pt_stats *stats;	/* the decoder's: did its queue hold any trace */
	int pending;			/* a gap waits for time to move past it */
	struct ptc_gap gap;		/* what the bystanders get */
	struct ptc_pt_thread *owner;	/* told already: the thread the loss began in */
	struct ptc_pt_thread *resumer;	/* told already: the one that resumed (NULL: none) */
	char detail[160];
};

/* env and stats (the decoder's, or NULL) must outlive by.  The
 * bystanders' gaps are not counted in the decoder's statistics: the loss
 * is, once (loss.h). */
void ptc_pt_bystanders_init(struct ptc_pt_bystanders *by, const struct ptc_pt_env *env, int cpu,
			    const struct ptc_pt_stats *stats);

/* Gap g was closed (given to owner and to resumer, the thread running
 * where decoding resumed, NULL when the trace ended in the gap) at
 * decoder time now.  A gap noted before and still pending is settled
 * first.  Returns 0 or the first sink error. */
int ptc_pt_bystanders_note(struct ptc_pt_bystanders *by, const struct ptc_gap *g,
			   struct ptc_pt_thread *owner, struct ptc_pt_thread *resumer, uint64_t now);

/* The decoder's time is now now (UINT64_MAX: the trace ended): a pending
 * gap goes to its bystanders once now is past its time.  Returns 0 or the
 * first sink error. */
int ptc_pt_bystanders_time(struct ptc_pt_bystanders *by, uint64_t now);

#endif
