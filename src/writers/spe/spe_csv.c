/* spe-csv: one row per SPE record, every decoded field. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "writers/spe/spe_writers.h"

struct ptc_spe_csv {
	FILE *f;
	struct ptc_spe_symbols *syms;
};

static const char header[] =
	"aux_offset,cpu,pid,tid,comm,tid_source,time,timestamp,"
	"pc,pc_el,pc_ns,pc_symbol,"
	"op_class,op_subclass,op_payload,cond,indirect,call_return,gcs,"
	"retired,mispredicted,not_taken,taken,"
	"target,target_el,target_ns,target_symbol,prev_target,prev_target_el,"
	"events,event_names,lat_total,lat_issue,lat_xlat,other_counters,"
	"vaddr,vaddr_tag,paddr,paddr_ns,paddr_ch,paddr_pat,data_source,"
	"context_el1,context_el2,"
	"store,atomic,exclusive,acq_rel,sve_evl,sve_pred,sve_sg,fp,simd,sme_ets,gcs_common\n";

int ptc_spe_csv_new(struct ptc_spe_csv **out, FILE *f, struct ptc_spe_symbols *syms,
		    uint64_t sample_period)
{
	struct ptc_spe_csv *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ptc_err_nomem;
	w->f = f;
	w->syms = syms;
	if (sample_period)
		fprintf(f, "# ARM SPE samples: 1 in %" PRIu64 " operations, one row per sampled "
			"operation; not a control-flow trace (see ptconv-spe(7))\n", sample_period);
	else
		fprintf(f, "# ARM SPE samples: one row per sampled operation; not a control-flow "
			"trace (see ptconv-spe(7))\n");
	fputs(header, f);
	*out = w;
	return 0;
}

/* Rows are built in a buffer with hand-rolled number formatting: an SPE
 * recording holds up to ~1e8 records, and fprintf per field is what would
 * make this writer slow. */
struct line {
	char b[4096];
	size_t n;
};

static void put_c(struct line *l, char c)
{
	if (l->n < sizeof(l->b))
		l->b[l->n++] = c;
}

static void put_s(struct line *l, const char *s)
{
	while (*s)
		put_c(l, *s++);
}

static void put_u(struct line *l, uint64_t v)
{
	char t[24];
	int i = 0;

	do {
		t[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (i)
		put_c(l, t[--i]);
}

static void put_i(struct line *l, int64_t v)
{
	if (v < 0) {
		put_c(l, '-');
		put_u(l, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u(l, (uint64_t)v);
	}
}

/* 0x-prefixed lower-case hex, at least `digits` digits */
static void put_x(struct line *l, uint64_t v, int digits)
{
	static const char hex[] = "0123456789abcdef";
	char t[16];
	int i = 0;

	do {
		t[i++] = hex[v & 15];
		v >>= 4;
	} while (v || i < digits);
	put_s(l, "0x");
	while (i)
		put_c(l, t[--i]);
}

/* The comm and symbols may hold anything: keep the CSV parseable. */
static void put_text(struct line *l, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		put_s(l, s);
		return;
	}
	put_c(l, '"');
	for (; *s; s++) {
		if (*s == '"')
			put_c(l, '"');
		put_c(l, *s == '\n' || *s == '\r' ? ' ' : *s);
	}
	put_c(l, '"');
}

static void put_symbol(struct ptc_spe_csv *w, struct line *l, int32_t pid, uint64_t addr)
{
	struct ptc_spe_location loc;
	char buf[512];

	if (!w->syms || !ptc_spe_symbols_lookup(w->syms, pid, addr, &loc))
		return;
	ptc_spe_location_format(&loc, addr, buf, sizeof(buf));
	put_text(l, buf);
}

static const char *class_name(const struct ptc_spe_record *r)
{
	if (!(r->present & PTC_SPE_F_OP))
		return "";
	switch (r->op_class) {
	case PTC_SPE_OP_OTHER: return "OTHER";
	case PTC_SPE_OP_LDST: return "LDST";
	case PTC_SPE_OP_BRANCH: return "BRANCH";
	default: return "RESERVED";
	}
}

static const char *cr_name(unsigned int cr)
{
	static const char *const n[] = { "", "CALL", "RETURN", "OTHER" };
	return n[cr & 3];
}

int ptc_spe_csv_add(struct ptc_spe_csv *w, const struct ptc_spe_sample *s)
{
	static const char *const src[] = { "", "context", "queue", "switch" };
	const struct ptc_spe_record *r = s->rec;
	const uint32_t f = r->present;
	int br = ptc_spe_is_branch(r), ldst = (f & PTC_SPE_F_OP) && r->op_class == PTC_SPE_OP_LDST;
	int other = (f & PTC_SPE_F_OP) && r->op_class == PTC_SPE_OP_OTHER, bit, first = 1;
	struct line l;
	unsigned int i;

	l.n = 0;
	put_x(&l, r->offset, 1);
	put_c(&l, ',');
	if (s->cpu >= 0)
		put_i(&l, s->cpu);
	put_c(&l, ',');
	if (s->pid >= 0)
		put_i(&l, s->pid);
	put_c(&l, ',');
	if (s->tid >= 0)
		put_i(&l, s->tid);
	put_c(&l, ',');
	put_text(&l, s->comm);
	put_c(&l, ',');
	put_s(&l, src[s->tid_source & 3]);
	put_c(&l, ',');
	if (s->have_time)
		put_u(&l, s->time);
	put_c(&l, ',');
	if (f & PTC_SPE_F_TIMESTAMP)
		put_u(&l, r->timestamp);
	put_c(&l, ',');
	/* pc,pc_el,pc_ns,pc_symbol */
	if (f & PTC_SPE_F_PC) {
		put_x(&l, r->pc.addr, 1);
		put_c(&l, ',');
		put_u(&l, r->pc.el);
		put_c(&l, ',');
		put_u(&l, r->pc.ns);
		put_c(&l, ',');
		put_symbol(w, &l, s->pid, r->pc.addr);
	} else {
		put_s(&l, ",,,");
	}
	/* op_class,op_subclass,op_payload */
	put_c(&l, ',');
	put_s(&l, class_name(r));
	put_c(&l, ',');
	if (f & PTC_SPE_F_OP) {
		put_s(&l, ptc_spe_op_subclass_name(r->op.subclass));
		put_c(&l, ',');
		put_x(&l, r->op_payload, 2);
	} else {
		put_c(&l, ',');
	}
	put_c(&l, ',');
	/* cond,indirect,call_return,gcs */
	if (br) {
		put_u(&l, r->op.cond);
		put_c(&l, ',');
		put_u(&l, r->op.indirect);
		put_c(&l, ',');
		put_s(&l, cr_name(r->op.cr));
		put_c(&l, ',');
		put_u(&l, r->op.gcs);
	} else {
		if (other)
			put_u(&l, r->op.cond);	/* conditional select */
		put_s(&l, ",,,");
	}
	put_c(&l, ',');
	/* retired,mispredicted,not_taken,taken */
	if (f & PTC_SPE_F_EVENTS) {
		put_u(&l, (uint64_t)ptc_spe_retired(r));
		put_c(&l, ',');
		put_u(&l, (uint64_t)ptc_spe_mispredicted(r));
		put_c(&l, ',');
		put_u(&l, (uint64_t)ptc_spe_not_taken(r));
	} else {
		put_s(&l, ",,");
	}
	put_c(&l, ',');
	if (br)
		put_u(&l, (uint64_t)ptc_spe_branch_taken(r));
	put_c(&l, ',');
	/* target,target_el,target_ns,target_symbol */
	if (f & PTC_SPE_F_TARGET) {
		put_x(&l, r->target.addr, 1);
		put_c(&l, ',');
		put_u(&l, r->target.el);
		put_c(&l, ',');
		put_u(&l, r->target.ns);
		put_c(&l, ',');
		put_symbol(w, &l, s->pid, r->target.addr);
	} else {
		put_s(&l, ",,,");
	}
	put_c(&l, ',');
	/* prev_target,prev_target_el */
	if (f & PTC_SPE_F_PREV_TARGET) {
		put_x(&l, r->prev_target.addr, 1);
		put_c(&l, ',');
		put_u(&l, r->prev_target.el);
	} else {
		put_c(&l, ',');
	}
	put_c(&l, ',');
	/* events,event_names */
	if (f & PTC_SPE_F_EVENTS) {
		put_x(&l, r->events, 1);
		put_c(&l, ',');
		for (bit = 0; bit < 64; bit++) {
			const char *n;

			if (!(r->events >> bit & 1))
				continue;
			n = ptc_spe_event_name((unsigned int)bit);
			if (!first)
				put_c(&l, '|');
			if (n) {
				put_s(&l, n);
			} else {
				put_s(&l, "IMPDEF");
				put_u(&l, (uint64_t)bit);
			}
			first = 0;
		}
	} else {
		put_c(&l, ',');
	}
	put_c(&l, ',');
	/* lat_total,lat_issue,lat_xlat,other_counters */
	if (f & PTC_SPE_F_LAT_TOTAL)
		put_u(&l, r->lat_total);
	put_c(&l, ',');
	if (f & PTC_SPE_F_LAT_ISSUE)
		put_u(&l, r->lat_issue);
	put_c(&l, ',');
	if (f & PTC_SPE_F_LAT_XLAT)
		put_u(&l, r->lat_xlat);
	put_c(&l, ',');
	first = 1;
	for (i = 3; i < 32; i++)
		if (r->counter_mask >> i & 1) {
			if (!first)
				put_c(&l, '|');
			put_u(&l, i);
			put_c(&l, '=');
			put_u(&l, r->counter[i]);
			first = 0;
		}
	put_c(&l, ',');
	/* vaddr,vaddr_tag */
	if (f & PTC_SPE_F_VADDR) {
		put_x(&l, r->vaddr.addr, 1);
		put_c(&l, ',');
		put_x(&l, r->vaddr.tag, 2);
	} else {
		put_c(&l, ',');
	}
	put_c(&l, ',');
	/* paddr,paddr_ns,paddr_ch,paddr_pat */
	if (f & PTC_SPE_F_PADDR) {
		put_x(&l, r->paddr.addr, 1);
		put_c(&l, ',');
		put_u(&l, r->paddr.ns);
		put_c(&l, ',');
		put_u(&l, r->paddr.ch);
		put_c(&l, ',');
		put_u(&l, r->paddr.pat);
	} else {
		put_s(&l, ",,,");
	}
	put_c(&l, ',');
	/* data_source,context_el1,context_el2 */
	if (f & PTC_SPE_F_DATA_SOURCE)
		put_u(&l, r->data_source);
	put_c(&l, ',');
	if (f & PTC_SPE_F_CONTEXT_EL1)
		put_u(&l, r->context_el1);
	put_c(&l, ',');
	if (f & PTC_SPE_F_CONTEXT_EL2)
		put_u(&l, r->context_el2);
	put_c(&l, ',');
	/* store,atomic,exclusive,acq_rel */
	if (ldst) {
		put_u(&l, r->op.store);
		put_c(&l, ',');
		if (r->op.subclass == PTC_SPE_SUB_EXTENDED) {
			put_u(&l, r->op.atomic);
			put_c(&l, ',');
			put_u(&l, r->op.exclusive);
			put_c(&l, ',');
			put_u(&l, r->op.acq_rel);
		} else {
			put_s(&l, ",,");
		}
	} else {
		put_s(&l, ",,,");
	}
	put_c(&l, ',');
	/* sve_evl,sve_pred,sve_sg */
	if (r->op.evl) {
		put_u(&l, r->op.evl);
		put_c(&l, ',');
		put_u(&l, r->op.pred);
		put_c(&l, ',');
		put_u(&l, r->op.sg);
	} else {
		put_s(&l, ",,");
	}
	put_c(&l, ',');
	/* fp,simd,sme_ets,gcs_common */
	if (other && r->op.subclass != PTC_SPE_SUB_UNKNOWN) {
		put_u(&l, r->op.fp);
		put_c(&l, ',');
		if (r->op.subclass == PTC_SPE_SUB_OTHER)
			put_u(&l, r->op.simd);
	} else {
		put_c(&l, ',');
	}
	put_c(&l, ',');
	if (r->op.ets)
		put_u(&l, r->op.ets);
	put_c(&l, ',');
	if (r->op.subclass == PTC_SPE_SUB_GCS)
		put_u(&l, r->op.gcs_common);
	put_c(&l, '\n');
	if (fwrite(l.b, 1, l.n, w->f) != l.n)
		return -ptc_err_io;
	return 0;
}

int ptc_spe_csv_finish(struct ptc_spe_csv *w)
{
	if (fflush(w->f) || ferror(w->f))
		return -ptc_err_io;
	return 0;
}

void ptc_spe_csv_free(struct ptc_spe_csv *w)
{
	free(w);
}
