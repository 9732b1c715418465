/* ARM SPE record layer (see spe_record.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "decoders/arm_spe/spe_record.h"

/* The longest packet: extended header + 8-byte payload, or a 16-byte
 * alignment pad. */
#define SPE_MAX_PACKET 16

struct ptc_spe_decoder {
	ptc_spe_record_fn fn;
	void *ctx;
	struct ptc_spe_record rec;	/* the record in progress */
	int in_record;			/* rec has packets */
	int skipping;			/* after corruption: ignore packets up to a boundary */
	int after_resync;		/* the next record must start with its PC packet */
	uint64_t next_offset;		/* where the next piece should start; UINT64_MAX before the first */
	uint8_t carry[SPE_MAX_PACKET];	/* start of a packet cut at the end of the last piece */
	size_t carry_len;
	/* perf record pads each AUXTRACE piece to 8 bytes with zeros and the
	 * next piece starts at the unpadded end: the last 7 bytes of a piece
	 * are held until the next piece says how many of them were data. */
	uint8_t hold[8];
	size_t hold_len;
	uint64_t hold_off;
	uint64_t first_error, last_error;
	struct ptc_spe_decode_stats st;
};

#define SPE_HOLD 7

int ptc_spe_decoder_new(struct ptc_spe_decoder **out, ptc_spe_record_fn fn, void *ctx)
{
	struct ptc_spe_decoder *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -ptc_err_nomem;
	d->fn = fn;
	d->ctx = ctx;
	d->next_offset = UINT64_MAX;
	d->first_error = d->last_error = UINT64_MAX;
	*out = d;
	return 0;
}

void ptc_spe_decoder_free(struct ptc_spe_decoder *d)
{
	free(d);
}

const struct ptc_spe_decode_stats *ptc_spe_decoder_stats(const struct ptc_spe_decoder *d)
{
	return &d->st;
}

uint64_t ptc_spe_decoder_first_error_offset(const struct ptc_spe_decoder *d)
{
	return d->first_error;
}

uint64_t ptc_spe_decoder_last_error_offset(const struct ptc_spe_decoder *d)
{
	return d->last_error;
}

static void drop_record(struct ptc_spe_decoder *d, uint64_t upto)
{
	if (d->in_record) {
		d->st.dropped_records++;
		if (upto > d->rec.offset)
			d->st.dropped_bytes += upto - d->rec.offset;
	}
	d->in_record = 0;
}

/* Fold one packet into the record in progress; returns <0 to stop. */
static int apply(struct ptc_spe_decoder *d, const struct ptc_spe_packet *p, uint64_t off)
{
	struct ptc_spe_record *r = &d->rec;
	int boundary = p->kind == PTC_SPE_PKT_END || p->kind == PTC_SPE_PKT_TIMESTAMP;

	d->st.packets++;
	if (p->kind == PTC_SPE_PKT_PAD || p->kind == PTC_SPE_PKT_ALIGN) {
		d->st.pad_bytes += p->size;
		return 0;
	}
	if (d->skipping) {
		d->st.dropped_bytes += p->size;
		if (boundary)
			d->skipping = 0;
		return 0;
	}
	if (!d->in_record && d->after_resync) {
		/* A payload byte may have looked like END or TIMESTAMP while
		 * skipping: trust the boundary only if the next record starts
		 * like every record the hardware writes, with its PC. */
		if (p->kind != PTC_SPE_PKT_ADDRESS || p->index != PTC_SPE_ADDR_PC) {
			d->st.dropped_bytes += p->size;
			if (!boundary)
				d->skipping = 1;
			return 0;
		}
		d->after_resync = 0;
	}
	if (!d->in_record) {
		memset(r, 0, offsetof(struct ptc_spe_record, counter));
		r->offset = off;
		d->in_record = 1;
	}
	r->packets++;
	switch (p->kind) {
	case PTC_SPE_PKT_TIMESTAMP:
		r->timestamp = p->payload;
		r->present |= PTC_SPE_F_TIMESTAMP;
		r->ended_by_timestamp = 1;
		break;
	case PTC_SPE_PKT_EVENTS:
		r->events = p->payload;
		r->events_size = p->payload_size;
		r->present |= PTC_SPE_F_EVENTS;
		break;
	case PTC_SPE_PKT_DATA_SOURCE:
		r->data_source = p->payload;
		r->data_source_size = p->payload_size;
		r->present |= PTC_SPE_F_DATA_SOURCE;
		break;
	case PTC_SPE_PKT_CONTEXT:
		if (p->index == PTC_SPE_CTX_EL1) {
			r->context_el1 = (uint32_t)p->payload;
			r->present |= PTC_SPE_F_CONTEXT_EL1;
		} else if (p->index == PTC_SPE_CTX_EL2) {
			r->context_el2 = (uint32_t)p->payload;
			r->present |= PTC_SPE_F_CONTEXT_EL2;
		}
		break;
	case PTC_SPE_PKT_OP_TYPE:
		r->op_class = p->index;
		r->op_payload = (uint8_t)p->payload;
		ptc_spe_op_fields(p->index, (uint8_t)p->payload, &r->op);
		r->present |= PTC_SPE_F_OP;
		break;
	case PTC_SPE_PKT_ADDRESS: {
		struct ptc_spe_address *a = NULL;
		uint32_t f = 0;

		r->addr_mask |= 1u << (p->index & 31);
		switch (p->index) {
		case PTC_SPE_ADDR_PC: a = &r->pc; f = PTC_SPE_F_PC; break;
		case PTC_SPE_ADDR_BRANCH_TARGET: a = &r->target; f = PTC_SPE_F_TARGET; break;
		case PTC_SPE_ADDR_DATA_VIRT: a = &r->vaddr; f = PTC_SPE_F_VADDR; break;
		case PTC_SPE_ADDR_DATA_PHYS: a = &r->paddr; f = PTC_SPE_F_PADDR; break;
		case PTC_SPE_ADDR_PREV_BRANCH: a = &r->prev_target; f = PTC_SPE_F_PREV_TARGET; break;
		default: r->present |= PTC_SPE_F_OTHER_ADDR; break;
		}
		if (a) {
			ptc_spe_address_fields(p->index, p->payload, a);
			r->present |= f;
		}
		break;
	}
	case PTC_SPE_PKT_COUNTER: {
		uint32_t v = (uint32_t)p->payload;

		r->counter_mask |= 1u << (p->index & 31);
		r->counter[p->index & 31] = v;
		switch (p->index) {
		case PTC_SPE_CNT_TOTAL: r->lat_total = v; r->present |= PTC_SPE_F_LAT_TOTAL; break;
		case PTC_SPE_CNT_ISSUE: r->lat_issue = v; r->present |= PTC_SPE_F_LAT_ISSUE; break;
		case PTC_SPE_CNT_XLAT: r->lat_xlat = v; r->present |= PTC_SPE_F_LAT_XLAT; break;
		default: r->present |= PTC_SPE_F_OTHER_COUNTER; break;
		}
		break;
	}
	default:
		break;
	}
	if (boundary) {
		int err = 0;

		r->size = (uint32_t)(off + p->size - r->offset);
		d->in_record = 0;
		if (r->packets == 1) {
			/* END/TIMESTAMP alone: nothing was sampled. */
			d->st.empty_records++;
			return 0;
		}
		d->st.records++;
		if (d->fn)
			err = d->fn(d->ctx, r);
		if (err < 0)
			return err;
	}
	return 0;
}

/* A byte that is no header: drop the record, wait for a boundary. */
static void corrupt(struct ptc_spe_decoder *d, uint64_t off)
{
	d->st.bad_bytes++;
	if (d->first_error == UINT64_MAX)
		d->first_error = off;
	d->last_error = off;
	if (!d->skipping)
		d->st.resyncs++;
	drop_record(d, off);
	d->skipping = 1;
	d->after_resync = 1;
}

/* Decode buf; stops at a packet cut by the end of buf and returns its
 * start position (len when none), or <0 from the callback. */
static long decode_run(struct ptc_spe_decoder *d, const uint8_t *buf, size_t len,
		       uint64_t offset, size_t stop_after)
{
	size_t pos = 0;

	while (pos < len && pos < stop_after) {
		struct ptc_spe_packet p;
		int n;

		if (buf[pos] == 0) {
			/* Runs of PAD bytes fill most records: skip them in one go. */
			size_t end = pos + 1;

			while (end < len && end < stop_after && buf[end] == 0)
				end++;
			d->st.packets += end - pos;
			d->st.pad_bytes += end - pos;
			pos = end;
			continue;
		}
		n = ptc_spe_packet_decode(&p, buf + pos, len - pos, offset + pos);

		if (n == -ptc_err_truncated)
			return (long)pos;
		if (n < 0) {
			corrupt(d, offset + pos);
			pos++;
			continue;
		}
		n = apply(d, &p, offset + pos);
		if (n < 0)
			return n;
		pos += p.size;
	}
	return (long)pos;
}

static int feed_piece(struct ptc_spe_decoder *d, const uint8_t *buf, size_t len,
		      uint64_t offset)
{
	size_t pos = 0;
	long n;

	if (d->next_offset != UINT64_MAX && offset != d->next_offset) {
		/* A break in the stream: what was pending is lost. */
		d->st.discontinuities++;
		d->st.dropped_bytes += d->carry_len;
		drop_record(d, d->next_offset);
		d->carry_len = 0;
		d->skipping = 0;
		d->after_resync = 0;
	}
	if (!len)
		return 0;
	if (d->carry_len) {
		/* Finish the cut packet from a small joined window. */
		uint8_t win[2 * SPE_MAX_PACKET];
		size_t take = len < SPE_MAX_PACKET ? len : SPE_MAX_PACKET;
		size_t wlen = d->carry_len + take;
		uint64_t woff = offset - d->carry_len;

		memcpy(win, d->carry, d->carry_len);
		memcpy(win + d->carry_len, buf, take);
		n = decode_run(d, win, wlen, woff, d->carry_len);
		if (n < 0)
			return (int)n;
		if ((size_t)n < d->carry_len) {
			/* Still cut (the piece is tiny): keep carrying. */
			memmove(d->carry, d->carry + n, d->carry_len - (size_t)n);
			d->carry_len -= (size_t)n;
			if (d->carry_len + len > SPE_MAX_PACKET) {
				/* cannot happen: a packet is at most 16 bytes */
				d->carry_len = 0;
			} else {
				memcpy(d->carry + d->carry_len, buf, len);
				d->carry_len += len;
			}
			d->next_offset = offset + len;
			return 0;
		}
		pos = (size_t)n - d->carry_len;
		d->carry_len = 0;
	}
	n = decode_run(d, buf + pos, len - pos, offset + pos, SIZE_MAX);
	if (n < 0)
		return (int)n;
	pos += (size_t)n;
	if (pos < len) {
		d->carry_len = len - pos;
		memcpy(d->carry, buf + pos, d->carry_len);
	}
	d->next_offset = offset + len;
	return 0;
}

/* Decode what is held back as data. */
static int release_hold(struct ptc_spe_decoder *d, size_t n)
{
	int err = 0;

	if (n)
		err = feed_piece(d, d->hold, n, d->hold_off);
	d->hold_len = 0;
	return err;
}

int ptc_spe_decoder_feed(struct ptc_spe_decoder *d, const uint8_t *buf, size_t len,
			 uint64_t offset)
{
	size_t keep;
	int err;

	d->st.bytes += len;
	if (d->hold_len) {
		uint64_t end = d->hold_off + d->hold_len;

		if (offset >= d->hold_off && offset <= end) {
			/* bytes of the hold from `offset` on were padding
			 * (zeros, by construction): count them as pads */
			size_t data = (size_t)(offset - d->hold_off), i;
			int zeros = 1;

			for (i = data; i < d->hold_len; i++)
				zeros &= d->hold[i] == 0;
			if (!zeros)
				data = d->hold_len;	/* not padding: a real overlap, decode it all */
			d->st.pad_bytes += d->hold_len - data;
			err = release_hold(d, data);
			if (err < 0)
				return err;
		} else {
			err = release_hold(d, d->hold_len);
			if (err < 0)
				return err;
		}
	}
	keep = len < SPE_HOLD ? len : SPE_HOLD;
	err = feed_piece(d, buf, len - keep, offset);
	if (err < 0)
		return err;
	memcpy(d->hold, buf + len - keep, keep);
	d->hold_len = keep;
	d->hold_off = offset + len - keep;
	return 0;
}

void ptc_spe_decoder_finish(struct ptc_spe_decoder *d)
{
	release_hold(d, d->hold_len);
	d->st.dropped_bytes += d->carry_len;
	if (d->next_offset != UINT64_MAX)
		drop_record(d, d->next_offset - d->carry_len);
	d->carry_len = 0;
	d->skipping = 0;
	d->after_resync = 0;
	d->next_offset = UINT64_MAX;
}
