/* One loss, one gap, for both engines: see loss.h. */
#include <stdio.h>
#include <string.h>

#include <intel-pt.h>

#include "decoders/intel_pt/last_ip.h"
#include "decoders/intel_pt/loss.h"

void ptc_pt_losses_init(struct ptc_pt_losses *ls, struct ptc_pt_bystanders *by, const struct ptc_pt_env *env,
			int cpu, uint32_t qtid, struct ptc_pt_stats *st, struct ptc_pt_thread *orphan)
{
	ptc_pt_bystanders_init(by, env, cpu, st);
	*ls = (struct ptc_pt_losses){ .env = env, .cpu = cpu, .qtid = qtid, .st = st, .orphan = orphan, .by = by };
}

/* A thread that lost data loses what it was in the middle of. */
static void lose_history(struct ptc_pt_thread *t)
{
	t->pending_insns = 0;
	t->depth = 0;
	t->after_gap = 1;
}

int ptc_pt_loss_open(struct ptc_pt_loss *l, const struct ptc_pt_losses *ls, struct ptc_pt_thread *t,
		     int enabled, int cause, uint64_t offset, uint64_t time, const char *fmt, va_list ap)
{
	if (l->active)
		return 0;	/* the same loss: nothing was decoded since it began */
	memset(&l->gap, 0, sizeof(l->gap));
	l->active = 1;
	l->owner = t;
	l->psb = UINT64_MAX;	/* none since it began */
	if (t == ls->orphan && ls->env->thread_at) {
		/* Not decoding anyone yet (e.g. the loss is at the start):
		 * the gap belongs to whoever the sideband says ran. */
		struct ptc_pt_thread *o = ls->env->thread_at(ls->env->ctx, ls->cpu, ls->qtid, time);
		if (o) {
			l->owner = o;
			lose_history(o);
		}
	}
	l->gap.cause = (uint8_t)cause;
	l->gap.aux_offset = offset;
	l->gap.resume_offset = UINT64_MAX;
	l->gap.time = time;
	/* where the exact stream ends: the same in both engines, since
	 * both hand the thread the same branches */
	l->gap.ip = enabled && l->owner ? ptc_pt_thread_stream_ip(l->owner) : 0;
	l->gap.lost_branches = UINT64_MAX;
	vsnprintf(l->detail, sizeof(l->detail), fmt, ap);
	l->gap.detail = l->detail;
	if (t)
		lose_history(t);
	return 1;
}

void ptc_pt_loss_to_end(struct ptc_pt_loss *l, uint64_t end)
{
	if (l->active && end > l->gap.aux_offset)
		l->gap.lost_bytes += end - l->gap.aux_offset;
}

/* Tell thread t (the orphan: the environment, as nobody's) of the gap. */
static int tell(const struct ptc_pt_losses *ls, struct ptc_pt_thread *t, const struct ptc_gap *g)
{
	if (!t || t == ls->orphan) {
		if (ls->env->orphan_gap)
			ls->env->orphan_gap(ls->env->ctx, g);
		return 0;
	}
	return ptc_pt_thread_gap(t, g);
}

int ptc_pt_loss_close(struct ptc_pt_loss *l, const struct ptc_pt_losses *ls, struct ptc_pt_thread *cur,
		      uint64_t resume_off, uint64_t resume_ip, uint64_t now)
{
	struct ptc_pt_stats *st = ls->st;
	struct ptc_gap *g = &l->gap;
	int err;

	if (!l->active)
		return 0;
	l->active = 0;
	if (resume_off != UINT64_MAX && l->psb != UINT64_MAX && l->psb < resume_off)
		/* resynchronised there: the bytes after it were decoded */
		resume_off = l->psb;
	else if (resume_off != UINT64_MAX && g->cause == PTC_GAP_OVERFLOW)
		/* the packets after the OVF were decoded: nothing of the
		 * trace was lost, only what the processor never wrote */
		resume_off = g->aux_offset;
	g->resume_offset = resume_off;
	g->resume_ip = resume_ip;
	if (resume_off != UINT64_MAX && resume_off > g->aux_offset)
		g->lost_bytes += resume_off - g->aux_offset;
	/* one loss: counted once, however many threads are told */
	st->gaps++;
	st->gaps_by_cause[g->cause]++;
	st->lost_bytes += g->lost_bytes;
	/* A rough estimate from what was decoded so far: branches per byte. */
	if (st->bytes && g->lost_bytes && g->lost_bytes != UINT64_MAX)
		g->lost_branches = (uint64_t)((double)st->branches / (double)st->bytes * (double)g->lost_bytes);
	err = tell(ls, l->owner, g);
	/* Another thread that resumes after the gap has lost its history
	 * too (nobody known there: the gap is the owner's alone). */
	if (err >= 0 && cur && cur != l->owner && cur != ls->orphan) {
		lose_history(cur);
		err = tell(ls, cur, g);
	}
	if (err >= 0)
		/* and so have those switched in on this CPU meanwhile */
		err = ptc_pt_bystanders_note(ls->by, g, l->owner, resume_off == UINT64_MAX ? NULL : cur, now);
	return err;
}

/* A packet decoder of cfg's buffer at the PSB at window offset from (the
 * scans below read from the last PSB decoded from): NULL when out of
 * memory or when there is no packet there. */
static struct pt_packet_decoder *scan_from(const struct pt_config *cfg, uint64_t from)
{
	struct pt_packet_decoder *pk = pt_pkt_alloc_decoder(cfg);

	if (pk && pt_pkt_sync_set(pk, from) < 0) {
		pt_pkt_free_decoder(pk);
		pk = NULL;
	}
	return pk;
}

int ptc_pt_ovf_scan(const struct pt_config *cfg, uint64_t from, uint64_t to, struct ptc_pt_ovf_scan *s)
{
	struct pt_packet_decoder *pk = scan_from(cfg, from);
	struct ptc_last_ip lip = { 0, 0, 0 };
	struct ptc_pt_ovf_scan now = { to, PTC_PT_OVF_AFTER_NOTHING, 0, 0 };
	struct pt_packet p;
	uint64_t off;

	*s = now;
	if (!pk)
		return -pte_nosync;
	while (pt_pkt_get_offset(pk, &off) == 0 && off < to && pt_pkt_next(pk, &p, sizeof(p)) > 0) {
		switch (p.type) {
		case ppt_tnt_8:
		case ppt_tnt_64:
			/* the packet's last bit is its least significant */
			if (p.payload.tnt.bit_size) {
				now.last = PTC_PT_OVF_AFTER_BIT;
				now.bit = (int)(p.payload.tnt.payload & 1);
			}
			break;
		case ppt_tip:
			ptc_last_ip_update(&lip, &p.payload.ip);
			now.last = lip.have && !lip.suppressed ? PTC_PT_OVF_AFTER_TIP : PTC_PT_OVF_AFTER_NOTHING;
			now.ip = lip.ip;
			break;
		case ppt_tip_pge:
		case ppt_tip_pgd:
		case ppt_fup:
			ptc_last_ip_update(&lip, &p.payload.ip);
			now.last = PTC_PT_OVF_AFTER_NOTHING;
			break;
		case ppt_psb:
			ptc_last_ip_reset(&lip);
			now.last = PTC_PT_OVF_AFTER_NOTHING;
			break;
		case ppt_ovf:
			s->ovf = off;
			s->last = now.last;
			s->bit = now.bit;
			s->ip = now.ip;
			now.last = PTC_PT_OVF_AFTER_NOTHING;
			break;
		default:
			break;
		}
	}
	pt_pkt_free_decoder(pk);
	return 0;
}

void ptc_pt_loss_at_ovf(struct ptc_pt_loss *l, const struct pt_config *cfg, uint64_t base, uint64_t sync,
			uint64_t now)
{
	struct ptc_pt_ovf_scan scan;

	if (!l->active || l->gap.cause != PTC_GAP_OVERFLOW || l->gap.aux_offset != base + now)
		return;	/* not one that just began here */
	ptc_pt_ovf_scan(cfg, sync, now, &scan);
	l->gap.aux_offset = base + scan.ovf;
}

/* The window offset of the packet after the last TIP, TIP.PGE or FUP that
 * names ip among the packets of cfg's buffer from the PSB at from up to
 * the one at to: PAD is no packet, and a PSB+ is one (a FUP in it is
 * followed by what comes after its PSBEND).  to when none names ip.
 *
 * The packet at to is looked at too: a libipt decoder's offset is where
 * it will read next in libipt 2.0, but the last packet it read in 2.1
 * and later (decoding on events), which may be the one that named ip.
 * (With 2.0, a packet at to that named ip again is taken as read: it
 * would have to repeat an address decoding could not go on at.) */
static uint64_t after_ip_packet(const struct pt_config *cfg, uint64_t from, uint64_t to, uint64_t ip, int *found)
{
	struct pt_packet_decoder *pk = scan_from(cfg, from);
	struct ptc_last_ip lip = { 0, 0, 0 };
	struct pt_packet p;
	uint64_t off, at = to;
	int in_psb = 0, named = 0;

	*found = 0;
	if (!pk)
		return to;
	while (pt_pkt_get_offset(pk, &off) == 0 && (off <= to || named) && pt_pkt_next(pk, &p, sizeof(p)) > 0) {
		if (named && !in_psb && p.type != ppt_pad) {
			/* the first packet the decoder did not use */
			at = off;
			named = 0;
			if (off > to)
				break;
		}
		switch (p.type) {
		case ppt_psb:
			in_psb = 1;
			ptc_last_ip_reset(&lip);
			break;
		case ppt_psbend:
			in_psb = 0;
			break;
		case ppt_tip:
		case ppt_tip_pge:
		case ppt_tip_pgd:
		case ppt_fup:
			ptc_last_ip_update(&lip, &p.payload.ip);
			if (p.type != ppt_tip_pgd && lip.have && !lip.suppressed && lip.ip == ip) {
				named = 1;
				*found = 1;
				at = to;
			}
			break;
		default:
			break;
		}
	}
	if (named && pt_pkt_get_offset(pk, &off) == 0)
		at = off;	/* nothing after it */
	pt_pkt_free_decoder(pk);
	return at;
}

void ptc_pt_loss_at_nomap(struct ptc_pt_loss *l, const struct pt_config *cfg, uint64_t base, uint64_t sync,
			  uint64_t now, uint64_t ip, uint64_t named_before)
{
	uint64_t at;
	int found;

	if (!l->active || l->gap.cause != PTC_GAP_NO_IMAGE || l->gap.aux_offset != base + now)
		return;	/* not one that just began here */
	at = after_ip_packet(cfg, sync, now, ip, &found);
	l->gap.aux_offset = !found && named_before != UINT64_MAX ? named_before : base + at;
}

uint64_t ptc_pt_ip_named_end(const struct pt_config *cfg, uint64_t base, uint64_t sync, uint64_t end, uint64_t ip)
{
	int found;
	uint64_t at = after_ip_packet(cfg, sync, end, ip, &found);

	return found ? base + at : UINT64_MAX;
}
