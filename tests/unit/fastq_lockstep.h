/* ptconv's query decoder (fastq) against libipt's, in lockstep: both are
 * asked the same questions about the same bytes, and every answer must be
 * the same: return code and status bits, the bit, the IP, the whole event,
 * the time, the offset and the sync offset.  The questions follow the
 * answers as the walker's do (events while one is pending, a conditional or
 * indirect branch otherwise, a new sync after an error), with a seeded
 * choice that also asks the wrong question now and then, so that both
 * decoders' refusals are compared too.
 *
 * fastq_lockstep() returns the number of questions asked (>= 0) when every
 * answer agreed, or -1 with the first difference in why[]. */
#ifndef PTC_TESTS_FASTQ_LOCKSTEP_H
#define PTC_TESTS_FASTQ_LOCKSTEP_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <intel-pt.h>

#include "decoders/intel_pt/fastq.h"

struct fastq_lockstep_counts {
	uint64_t bits, tips, events, syncs, errors;
};

static uint64_t fastq_lockstep_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int fastq_same_state(struct pt_query_decoder *q, struct ptc_fq *f, char *why, size_t n,
			    uint64_t step, const char *what)
{
	uint64_t a = 0, b = 0;
	uint32_t am = 0, bm = 0, ac = 0, bc = 0;
	int ea, eb;

	ea = pt_qry_get_offset(q, &a);
	eb = ptc_fq_get_offset(f, &b);
	if (ea != eb || (ea >= 0 && a != b)) {
		snprintf(why, n, "step %" PRIu64 " (%s): offset libipt %d/%" PRIu64 ", fastq %d/%" PRIu64,
			 step, what, ea, a, eb, b);
		return -1;
	}
	ea = pt_qry_get_sync_offset(q, &a);
	eb = ptc_fq_get_sync_offset(f, &b);
	if (ea != eb || (ea >= 0 && a != b)) {
		snprintf(why, n, "step %" PRIu64 " (%s): sync offset libipt %d/%" PRIu64 ", fastq %d/%" PRIu64,
			 step, what, ea, a, eb, b);
		return -1;
	}
	ea = pt_qry_time(q, &a, &am, &ac);
	eb = ptc_fq_time(f, &b, &bm, &bc);
	if (ea != eb || a != b || am != bm || ac != bc) {
		snprintf(why, n, "step %" PRIu64 " (%s): time libipt %d/%" PRIu64 "/%u/%u, fastq %d/%" PRIu64 "/%u/%u",
			 step, what, ea, a, am, ac, eb, b, bm, bc);
		return -1;
	}
	return 0;
}

/* Is libipt's query decoder the reference here?  fastq answers as libipt
 * 2.0's does.  libipt 2.1 rebuilt its query decoder on an event decoder
 * and words some answers differently (a status update event at every PSB,
 * -pte_bad_query where the trace ends before a branch), which the walker
 * takes either way; with it loaded, there is nothing to compare fastq
 * with. */
static int fastq_lockstep_reference(void)
{
	struct pt_version v = pt_library_version();

	return v.major == 2 && v.minor == 0;
}

/* cfg: the buffer and configuration (both decoders get a copy). */
static int64_t fastq_lockstep(const struct pt_config *cfg, uint64_t seed, uint64_t max_steps,
			      struct fastq_lockstep_counts *cnt, char *why, size_t n)
{
	struct pt_query_decoder *q = pt_qry_alloc_decoder(cfg);
	struct ptc_fq f;
	uint64_t step, rs = seed | 1;
	int sa = 0, sb = 0, synced = 0, errors = 0;
	int64_t ret = -1;

	if (!q || ptc_fq_init(&f, cfg) < 0) {
		snprintf(why, n, "out of memory");
		if (q)
			pt_qry_free_decoder(q);
		return -1;
	}
	for (step = 0; step < max_steps; step++) {
		const char *what;
		uint64_t a = 0, b = 0;
		int ta = -1, tb = -1;
		unsigned r = (unsigned)(fastq_lockstep_rand(&rs) % 16);

		if (!synced) {
			what = "sync";
			sa = pt_qry_sync_forward(q, &a);
			sb = ptc_fq_sync_forward(&f, &b);
			if (sa != sb || (sa >= 0 && !(sa & pts_ip_suppressed) && a != b)) {
				snprintf(why, n, "step %" PRIu64 " sync: libipt %d ip %" PRIx64 ", fastq %d ip %" PRIx64,
					 step, sa, a, sb, b);
				goto out;
			}
			if (sa == -pte_eos)
				break;
			cnt->syncs++;
			synced = sa >= 0;
		} else if ((sa & pts_event_pending) ? r != 0 : r == 0) {
			struct pt_event ea, eb;
			what = "event";
			memset(&ea, 0x5a, sizeof(ea));
			memset(&eb, 0x5a, sizeof(eb));
			sa = pt_qry_event(q, &ea, sizeof(ea));
			sb = ptc_fq_event(&f, &eb, sizeof(eb));
			if (sa != sb || (sa >= 0 && memcmp(&ea, &eb, sizeof(ea)))) {
				snprintf(why, n, "step %" PRIu64 " event: libipt %d type %d ip_supp %u tsc %" PRIu64
					 ", fastq %d type %d ip_supp %u tsc %" PRIu64, step, sa, ea.type,
					 ea.ip_suppressed, ea.tsc, sb, eb.type, eb.ip_suppressed, eb.tsc);
				goto out;
			}
			cnt->events += sa >= 0;
		} else if (r < 11) {
			what = "cond";
			sa = pt_qry_cond_branch(q, &ta);
			sb = ptc_fq_cond_branch(&f, &tb);
			if (sa != sb || (sa >= 0 && ta != tb)) {
				snprintf(why, n, "step %" PRIu64 " cond: libipt %d taken %d, fastq %d taken %d",
					 step, sa, ta, sb, tb);
				goto out;
			}
			cnt->bits += sa >= 0;
			if (sa == -pte_bad_query) {
				/* as the walker: an indirect branch may be due */
				what = "indirect after cond";
				sa = pt_qry_indirect_branch(q, &a);
				sb = ptc_fq_indirect_branch(&f, &b);
				if (sa != sb || (sa >= 0 && a != b)) {
					snprintf(why, n, "step %" PRIu64 " indirect: libipt %d ip %" PRIx64
						 ", fastq %d ip %" PRIx64, step, sa, a, sb, b);
					goto out;
				}
				cnt->tips += sa >= 0;
			}
		} else {
			what = "indirect";
			sa = pt_qry_indirect_branch(q, &a);
			sb = ptc_fq_indirect_branch(&f, &b);
			if (sa != sb || (sa >= 0 && a != b)) {
				snprintf(why, n, "step %" PRIu64 " indirect: libipt %d ip %" PRIx64 ", fastq %d ip %" PRIx64,
					 step, sa, a, sb, b);
				goto out;
			}
			cnt->tips += sa >= 0;
		}
		if (fastq_same_state(q, &f, why, n, step, what) < 0)
			goto out;
		if (sa < 0 && sa != -pte_bad_query) {
			/* the walker resynchronises after a failed query */
			cnt->errors++;
			if (sa == -pte_eos || ++errors > 64)
				break;
			synced = 0;
		} else if (sa < 0) {
			/* a wrong question: the next one may be the right one;
			 * ask about a pending event first */
			if (fastq_lockstep_rand(&rs) % 4 == 0)
				sa = 0;
			else
				sa = pts_event_pending;
		}
	}
	ret = (int64_t)step;
out:
	ptc_fq_fini(&f);
	pt_qry_free_decoder(q);
	return ret;
}

#endif
