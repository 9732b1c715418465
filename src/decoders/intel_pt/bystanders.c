/* Gaps for the threads that ran during a loss: see bystanders.h. */
#include <stdio.h>
#include <string.h>

#include "decoders/intel_pt/bystanders.h"

/* Most threads ever switched in on one CPU during one loss that are told
 * (the rest are too many to matter: a loss that long has lost the trace). */
#define BYSTANDERS_MAX 256

void ptc_pt_bystanders_init(struct ptc_pt_bystanders *by, const struct ptc_pt_env *env, int cpu,
			    const struct ptc_pt_stats *stats)
{
	memset(by, 0, sizeof(*by));
	by->env = env;
	by->cpu = cpu;
	by->stats = stats;
}

/* Give the pending gap to the threads switched in on the CPU in
 * (gap time, until]. */
static int tell(struct ptc_pt_bystanders *by, uint64_t until)
{
	struct ptc_pt_thread *th[BYSTANDERS_MAX];
	size_t n, i, j;
	int err;

	by->pending = 0;
	n = by->env->threads_between(by->env->ctx, by->cpu, by->gap.time, until, th, BYSTANDERS_MAX);
	/* (time order) the resuming thread's last switch-in ends the loss */
	for (i = n; by->resumer && i > 0; i--)
		if (th[i - 1] == by->resumer) {
			n = i - 1;
			break;
		}
	for (i = 0; i < n; i++) {
		struct ptc_pt_thread *t = th[i];
		if (!t || t == by->owner || t == by->resumer)
			continue;
		for (j = 0; j < i && th[j] != t; j++)
			;
		if (j < i)
			continue;	/* switched in twice */
		ptc_pt_thread_flush(t);
		t->pending_insns = 0;
		t->depth = 0;
		t->after_gap = 1;
		/* (not counted in the decoder's statistics: one loss, counted
		 * where it closed, loss.h) */
		err = ptc_pt_thread_gap(t, &by->gap);
		if (err < 0)
			return err;
	}
	return 0;
}

int ptc_pt_bystanders_time(struct ptc_pt_bystanders *by, uint64_t now)
{
	if (!by->pending || now <= by->gap.time)
		return 0;
	return tell(by, now);
}

int ptc_pt_bystanders_note(struct ptc_pt_bystanders *by, const struct ptc_gap *g,
			   struct ptc_pt_thread *owner, struct ptc_pt_thread *resumer, uint64_t now)
{
	int err;

	if (by->pending) {
		/* the previous loss ends where time is known now */
		err = tell(by, now);
		if (err < 0)
			return err;
	}
	/* A loss at no known time is everyone's only when the queue held no
	 * trace at all (its AUXTRACE records all lost), or lost it from its
	 * very start (stream offset 0): then every thread switched in on the
	 * CPU before decoding resumed lost branches. */
	if (!by->env->threads_between || by->cpu < 0 ||
	    (!g->time && g->aux_offset && (resumer || !by->stats || by->stats->bytes)))
		return 0;
	by->gap = *g;
	by->gap.resume_ip = 0;
	by->gap.resume_offset = UINT64_MAX;
	by->gap.lost_bytes = 0;
	by->gap.lost_branches = UINT64_MAX;
	snprintf(by->detail, sizeof(by->detail), "ran during: %s", g->detail ? g->detail : "");
	by->gap.detail = by->detail;
	by->owner = owner;
	by->resumer = resumer;
	by->pending = 1;
	return ptc_pt_bystanders_time(by, resumer ? now : UINT64_MAX);
}
