/* One loss in a queue's Intel PT trace, as both engines (the walker,
 * ptdec.c, and --engine=libipt, blkdec.c) report it: the rule of
 * ptconv-convert(1), GAPS, in one place.
 *
 * A loss begins where the trace stops being exact (an overflow, missing
 * AUX data, code in no known image, packets that contradict the code) and
 * ends where decoding resumes in known code (a PSB+, a TIP.PGE or the FUP
 * after an overflow, a TIP out of unknown code).  Failures before decoding
 * resumes, and resumption points at an IP no image covers, are the same
 * loss.  It is one gap: counted once in the decoder's statistics however
 * many threads are told (the one it began in, the one running where
 * decoding resumed, those switched in on the CPU meanwhile: bystanders.h).
 * Its ip is where the exact branch stream of the thread it began in was
 * known to continue (after its last branch, or where its tracing last
 * started), 0 when tracing was off; its lost bytes are the stream offsets
 * from where it began (the AUX offset of missing data, the OVF packet,
 * the packet the decoder stopped at) to the PSB where decoding
 * resynchronised (or, when it resumed without one, the packet it resumed
 * at; for an overflow its OVF packet: the trace lost no byte), or to the
 * end of the queue's data. */
#ifndef PTC_DECODERS_INTEL_PT_LOSS_H
#define PTC_DECODERS_INTEL_PT_LOSS_H

#include <stdarg.h>
#include <stdint.h>

#include "decoders/intel_pt/bystanders.h"
#include "decoders/intel_pt/ptdec.h"

struct ptc_pt_loss {
	int active;
	struct ptc_gap gap;
	struct ptc_pt_thread *owner;	/* the thread it began in (orphan: nobody known) */
	uint64_t psb;			/* the last PSB synchronised at since it began
				 * (stream offset; UINT64_MAX: none) */
	char detail[200];
};

/* What a decoder shares with its losses: its queue, statistics, threads. */
struct ptc_pt_losses {
	const struct ptc_pt_env *env;
	int cpu;
	uint32_t qtid;
	struct ptc_pt_stats *st;
	struct ptc_pt_thread *orphan;	/* walks while no thread is known */
	struct ptc_pt_bystanders *by;
};

/* ls for a decoder of the queue of cpu / qtid, with its statistics st,
 * its orphan thread and its bystanders by (initialised here); all must
 * outlive ls. */
void ptc_pt_losses_init(struct ptc_pt_losses *ls, struct ptc_pt_bystanders *by, const struct ptc_pt_env *env,
			int cpu, uint32_t qtid, struct ptc_pt_stats *st, struct ptc_pt_thread *orphan);

/* The trace stops being exact at stream offset offset, perf time time,
 * while thread t runs (the orphan: the thread env says runs then, if any,
 * owns it) with tracing on (enabled) or off.  t and the owner lose their
 * pending instructions and call stacks.  Returns 1 when a loss began, 0
 * when one was open already: it absorbs this failure, and nothing
 * changes. */
int ptc_pt_loss_open(struct ptc_pt_loss *l, const struct ptc_pt_losses *ls, struct ptc_pt_thread *t,
		     int enabled, int cause, uint64_t offset, uint64_t time, const char *fmt, va_list ap);

/* The decoder synchronised at the PSB at stream offset off. */
static inline void ptc_pt_loss_synced(struct ptc_pt_loss *l, uint64_t off)
{
	l->psb = off;
}

/* Decoding resumed in known code at stream offset resume_off (where the
 * decoder had read to; after a PSB it synchronised at since the loss
 * began, the loss ends at that PSB)
 * (UINT64_MAX: it never did; the lost bytes were counted up to the end)
 * and IP resume_ip, in thread cur, at decoder time now: the gap goes to
 * the owner, to cur when another thread (which loses its history too),
 * and to the bystanders; counted once.  Returns 0 or a sink's error. */
int ptc_pt_loss_close(struct ptc_pt_loss *l, const struct ptc_pt_losses *ls, struct ptc_pt_thread *cur,
		      uint64_t resume_off, uint64_t resume_ip, uint64_t now);

struct pt_config;

/* What the last packet that binds to a branch said before an OVF packet:
 * a decoder that had decoded a branch with it, and learns of the overflow
 * before the next block, still knows where that branch went. */
enum ptc_pt_before_ovf {
	PTC_PT_OVF_AFTER_NOTHING,	/* an IP packet with no branch, a PSB, nothing */
	PTC_PT_OVF_AFTER_BIT,		/* a TNT bit (bit) */
	PTC_PT_OVF_AFTER_TIP,		/* a TIP with an IP (ip) */
};

struct ptc_pt_ovf_scan {
	uint64_t ovf;		/* window offset of the OVF packet (to: none) */
	enum ptc_pt_before_ovf last;
	int bit;
	uint64_t ip;
};

/* The last OVF packet in window offsets [from, to) of cfg's buffer, read
 * from the PSB at from, and the packet that bound to a branch last before
 * it.  0, or <0 when the PSB cannot be read (s->ovf is to then). */
int ptc_pt_ovf_scan(const struct pt_config *cfg, uint64_t from, uint64_t to, struct ptc_pt_ovf_scan *s);

/* An overflow's loss, just opened at window offset now of the window at
 * stream offset base (its last PSB at window offset sync), begins at its
 * OVF packet, whichever packets the decoder had read past it. */
void ptc_pt_loss_at_ovf(struct ptc_pt_loss *l, const struct pt_config *cfg, uint64_t base, uint64_t sync,
			uint64_t now);

/* A no-image loss, just opened at window offset now of the window at
 * stream offset base (its last PSB at window offset sync), because
 * execution went to ip, which no image covers, begins at the packet after
 * the one that named ip (ptconv-convert(1), GAPS), whichever packets the
 * decoder had read past it; when no packet of the window since sync names
 * ip, at named_before (UINT64_MAX: where it was opened), the stream
 * offset ptc_pt_ip_named_end() gave for it at the end of an earlier one. */
void ptc_pt_loss_at_nomap(struct ptc_pt_loss *l, const struct pt_config *cfg, uint64_t base, uint64_t sync,
			  uint64_t now, uint64_t ip, uint64_t named_before);

/* The stream offset after the packet that named ip among those of the
 * window at stream offset base from its PSB at window offset sync up to
 * window offset end (as ptc_pt_loss_at_nomap() finds it), UINT64_MAX when
 * none does: for a walk that ends a window standing at ip, not yet looked
 * up, and goes on in the next. */
uint64_t ptc_pt_ip_named_end(const struct pt_config *cfg, uint64_t base, uint64_t sync, uint64_t end, uint64_t ip);

/* The loss never ends: the queue's data ends at stream offset end. */
void ptc_pt_loss_to_end(struct ptc_pt_loss *l, uint64_t end);

#endif
