/* Decode the instructions of a branch block with Zydis. */
#include <inttypes.h>
#include <string.h>

#include "writers/insn.h"

void ptc_walker_init(struct ptc_walker *w, const struct ptc_code_reader *code,
		     struct ptc_wctx *c)
{
	memset(w, 0, sizeof(*w));
	ZydisDecoderInit(&w->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	w->code = code;
	w->wctx = c;
}

void ptc_insn_decode(struct ptc_walker *w, uint64_t ip, struct ptc_insn *in)
{
	size_t n = 0;

	in->ip = ip;
	in->decoded = 0;
	in->len = 0;
	if (w->code && w->code->read)
		n = w->code->read(w->code->ctx, ip, in->bytes, sizeof(in->bytes));
	if (n && ZYAN_SUCCESS(ZydisDecoderDecodeFull(&w->dec, in->bytes, n, &in->zi, in->ops))) {
		in->decoded = 1;
		in->len = in->zi.length;
	}
}

void ptc_walk_gap(struct ptc_walker *w, const struct ptc_gap *g)
{
	w->next = g->resume_ip;
	w->next_known = g->resume_ip != 0;
}

int ptc_walk_branch(struct ptc_walker *w, const struct ptc_branch *b,
		    ptc_insn_fn fn, void *ctx)
{
	struct ptc_insn in;
	uint64_t ip = w->next, i;
	int err;

	if (b->insns > 1 && !w->next_known) {
		/* The block's start is unknown (first branch of a stream that
		 * did not begin with a gap): only the branch can be listed. */
		w->missing += b->insns - 1;
		ptc_wwarn(w->wctx, "%" PRIu32 " instructions before the branch at 0x%" PRIx64
			  " not listed: block start unknown", b->insns - 1, b->ip);
	} else {
		for (i = 0; b->insns && i < b->insns - 1u; i++) {
			ptc_insn_decode(w, ip, &in);
			if (!in.decoded) {
				w->missing += b->insns - 1 - i;
				ptc_wwarn(w->wctx, "no code bytes at 0x%" PRIx64
					  ": %" PRIu64 " instructions not listed", ip,
					  (uint64_t)(b->insns - 1 - i));
				break;
			}
			err = fn(ctx, &in, NULL);
			if (err < 0)
				return err;
			ip += in.len;
		}
		if (i == b->insns - 1u && b->insns && ip != b->ip) {
			w->mismatches++;
			ptc_wwarn(w->wctx, "block from 0x%" PRIx64 " ends at 0x%" PRIx64
				  ", not at its branch 0x%" PRIx64, w->next, ip, b->ip);
		}
	}
	ptc_insn_decode(w, b->ip, &in);
	if (!in.decoded) {
		/* Still list the branch: its IP and length are in the event. */
		memset(&in.zi, 0, sizeof(in.zi));
		in.len = b->length;
		in.ip = b->ip;
	}
	err = fn(ctx, &in, b);
	if (err < 0)
		return err;
	w->next = ptc_branch_dest(b);
	w->next_known = w->next != 0;
	return 0;
}
