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

/* The comm may hold anything: keep the CSV parseable. */
static void put_text(FILE *f, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
	}
	fputc('"', f);
}

static void put_symbol(struct ptc_spe_csv *w, int32_t pid, uint64_t addr)
{
	struct ptc_spe_location loc;
	char buf[512];

	if (!w->syms || !ptc_spe_symbols_lookup(w->syms, pid, addr, &loc))
		return;
	ptc_spe_location_format(&loc, addr, buf, sizeof(buf));
	put_text(w->f, buf);
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
	FILE *f = w->f;
	int br = ptc_spe_is_branch(r), bit, first = 1;
	unsigned int i;

	fprintf(f, "0x%" PRIx64 ",", r->offset);
	if (s->cpu >= 0)
		fprintf(f, "%d", s->cpu);
	fputc(',', f);
	if (s->pid >= 0)
		fprintf(f, "%d", s->pid);
	fputc(',', f);
	if (s->tid >= 0)
		fprintf(f, "%d", s->tid);
	fputc(',', f);
	put_text(f, s->comm);
	fprintf(f, ",%s,", src[s->tid_source & 3]);
	if (s->have_time)
		fprintf(f, "%" PRIu64, s->time);
	fputc(',', f);
	if (r->present & PTC_SPE_F_TIMESTAMP)
		fprintf(f, "%" PRIu64, r->timestamp);
	fputc(',', f);
	/* pc */
	if (r->present & PTC_SPE_F_PC) {
		fprintf(f, "0x%" PRIx64 ",%u,%u,", r->pc.addr, r->pc.el, r->pc.ns);
		put_symbol(w, s->pid, r->pc.addr);
	} else {
		fputs(",,,", f);
	}
	/* operation */
	fprintf(f, ",%s,", class_name(r));
	if (r->present & PTC_SPE_F_OP)
		fprintf(f, "%s,0x%02x,", ptc_spe_op_subclass_name(r->op.subclass), r->op_payload);
	else
		fputs(",,", f);
	if (br)
		fprintf(f, "%u,%u,%s,%u,", r->op.cond, r->op.indirect, cr_name(r->op.cr), r->op.gcs);
	else if ((r->present & PTC_SPE_F_OP) && r->op_class == PTC_SPE_OP_OTHER)
		fprintf(f, "%u,,,,", r->op.cond);	/* conditional select */
	else
		fputs(",,,,", f);
	/* events */
	if (r->present & PTC_SPE_F_EVENTS)
		fprintf(f, "%d,%d,%d,", ptc_spe_retired(r), ptc_spe_mispredicted(r), ptc_spe_not_taken(r));
	else
		fputs(",,,", f);
	if (br)
		fprintf(f, "%d", ptc_spe_branch_taken(r));
	fputc(',', f);
	if (r->present & PTC_SPE_F_TARGET) {
		fprintf(f, "0x%" PRIx64 ",%u,%u,", r->target.addr, r->target.el, r->target.ns);
		put_symbol(w, s->pid, r->target.addr);
	} else {
		fputs(",,,", f);
	}
	fputc(',', f);
	if (r->present & PTC_SPE_F_PREV_TARGET)
		fprintf(f, "0x%" PRIx64 ",%u", r->prev_target.addr, r->prev_target.el);
	else
		fputc(',', f);
	fputc(',', f);
	if (r->present & PTC_SPE_F_EVENTS) {
		fprintf(f, "0x%" PRIx64 ",", r->events);
		for (bit = 0; bit < 64; bit++) {
			const char *n;

			if (!(r->events >> bit & 1))
				continue;
			n = ptc_spe_event_name((unsigned int)bit);
			if (!first)
				fputc('|', f);
			if (n)
				fputs(n, f);
			else
				fprintf(f, "IMPDEF%d", bit);
			first = 0;
		}
	} else {
		fputc(',', f);
	}
	fputc(',', f);
	if (r->present & PTC_SPE_F_LAT_TOTAL)
		fprintf(f, "%u", r->lat_total);
	fputc(',', f);
	if (r->present & PTC_SPE_F_LAT_ISSUE)
		fprintf(f, "%u", r->lat_issue);
	fputc(',', f);
	if (r->present & PTC_SPE_F_LAT_XLAT)
		fprintf(f, "%u", r->lat_xlat);
	fputc(',', f);
	first = 1;
	for (i = 3; i < 32; i++)
		if (r->counter_mask >> i & 1) {
			fprintf(f, "%s%u=%u", first ? "" : "|", i, r->counter[i]);
			first = 0;
		}
	fputc(',', f);
	if (r->present & PTC_SPE_F_VADDR)
		fprintf(f, "0x%" PRIx64 ",0x%02x", r->vaddr.addr, r->vaddr.tag);
	else
		fputc(',', f);
	fputc(',', f);
	if (r->present & PTC_SPE_F_PADDR)
		fprintf(f, "0x%" PRIx64 ",%u,%u,%u", r->paddr.addr, r->paddr.ns, r->paddr.ch, r->paddr.pat);
	else
		fputs(",,,", f);
	fputc(',', f);
	if (r->present & PTC_SPE_F_DATA_SOURCE)
		fprintf(f, "%" PRIu64, r->data_source);
	fputc(',', f);
	if (r->present & PTC_SPE_F_CONTEXT_EL1)
		fprintf(f, "%u", r->context_el1);
	fputc(',', f);
	if (r->present & PTC_SPE_F_CONTEXT_EL2)
		fprintf(f, "%u", r->context_el2);
	fputc(',', f);
	if ((r->present & PTC_SPE_F_OP) && r->op_class == PTC_SPE_OP_LDST) {
		fprintf(f, "%u,", r->op.store);
		if (r->op.subclass == PTC_SPE_SUB_EXTENDED)
			fprintf(f, "%u,%u,%u,", r->op.atomic, r->op.exclusive, r->op.acq_rel);
		else
			fputs(",,,", f);
	} else {
		fputs(",,,,", f);
	}
	if (r->op.evl)
		fprintf(f, "%u,%u,%u,", r->op.evl, r->op.pred, r->op.sg);
	else
		fputs(",,,", f);
	if ((r->present & PTC_SPE_F_OP) && r->op_class == PTC_SPE_OP_OTHER &&
	    r->op.subclass != PTC_SPE_SUB_UNKNOWN)
		fprintf(f, "%u,%s", r->op.fp, r->op.subclass == PTC_SPE_SUB_OTHER ? (r->op.simd ? "1" : "0") : "");
	else
		fputc(',', f);
	fputc(',', f);
	if (r->op.ets)
		fprintf(f, "%u", r->op.ets);
	fputc(',', f);
	if (r->op.subclass == PTC_SPE_SUB_GCS)
		fprintf(f, "%u", r->op.gcs_common);
	fputc('\n', f);
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
