/* Gaps for the threads that ran during a loss: see bystanders.h. */
#include <stdio.h>
#include <string.h>

#include "decoders/intel_pt/bystanders.h"

void ptc_pt_bystanders_init(struct ptc_pt_bystanders *by, const struct ptc_pt_env *env, int cpu,
			    const struct ptc_pt_stats *stats)
{
	memset(by, 0, sizeof(*by));
	by->env = env;
	by->cpu = cpu;
	by->stats = stats;
}

/* The pending gap's span ends at until: the environment gives it to the
 * threads switched in on the CPU meanwhile, where their streams stand then. */
static int tell(struct ptc_pt_bystanders *by, uint64_t until)
{
	by->pending = 0;
	return by->env->lost_on_cpu(by->env->ctx, by->cpu, by->gap.time, until, &by->gap, by->owner,
				    by->resumer);
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
	if (!by->env->lost_on_cpu || by->cpu < 0 ||
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
