/* The two real SPE records from hardware (../shared/data/arm_spe) decode to
 * exactly the values documented in ../shared/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/check.h"
#include "decoders/arm_spe/spe_record.h"

struct got {
	int n;
	struct ptc_spe_record rec[4];
};

static int keep(void *ctx, const struct ptc_spe_record *r)
{
	struct got *g = ctx;

	if (g->n < 4)
		g->rec[g->n] = *r;
	g->n++;
	return 0;
}

static size_t load(const char *dir, const char *name, uint8_t *buf, size_t cap)
{
	char path[4096];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/data/arm_spe/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		SKIP("%s: cannot open (shared data absent)", path);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

static void check_one(const char *dir, const char *name, int with_ts)
{
	uint8_t buf[256];
	size_t n = load(dir, name, buf, sizeof(buf));
	struct ptc_spe_decoder *d;
	struct got g = { 0 };
	const struct ptc_spe_record *r = &g.rec[0];
	const struct ptc_spe_decode_stats *st;

	CHECK_EQ_U64(n, 64);
	CHECK(ptc_spe_decoder_new(&d, keep, &g) == 0, "decoder");
	CHECK(ptc_spe_decoder_feed(d, buf, n, 0) == 0, "feed");
	ptc_spe_decoder_finish(d);
	st = ptc_spe_decoder_stats(d);
	CHECK_EQ_U64(g.n, 1);
	CHECK_EQ_U64(st->bad_bytes, 0);
	CHECK_EQ_U64(st->dropped_records, 0);
	/* PC 0x7ffdbf2143e0 EL0 NS */
	CHECK(r->present & PTC_SPE_F_PC, "%s: PC present", name);
	CHECK_EQ_U64(r->pc.addr, 0x7ffdbf2143e0ULL);
	CHECK_EQ_U64(r->pc.el, 0);
	CHECK_EQ_U64(r->pc.ns, 1);
	/* branch COND */
	CHECK(ptc_spe_is_branch(r), "%s: branch", name);
	CHECK_EQ_U64(r->op.cond, 1);
	CHECK_EQ_U64(r->op.indirect, 0);
	CHECK_EQ_U64(r->op.cr, PTC_SPE_CR_NONE);
	/* EVENTS RETIRED only */
	CHECK_EQ_U64(r->events, PTC_SPE_EV(PTC_SPE_EV_RETIRED));
	CHECK(ptc_spe_retired(r) && !ptc_spe_mispredicted(r) && !ptc_spe_not_taken(r), "%s: flags", name);
	/* latencies */
	CHECK_EQ_U64(r->lat_issue, with_ts ? 41 : 39);
	CHECK_EQ_U64(r->lat_total, with_ts ? 42 : 40);
	CHECK(!(r->present & PTC_SPE_F_LAT_XLAT), "%s: no translation latency", name);
	/* target 0x7ffdbf214408 EL0 NS */
	CHECK(r->present & PTC_SPE_F_TARGET, "%s: target present", name);
	CHECK_EQ_U64(r->target.addr, 0x7ffdbf214408ULL);
	CHECK_EQ_U64(r->target.el, 0);
	CHECK_EQ_U64(r->target.ns, 1);
	/* then END (ts0) or TIMESTAMP 3913207673451 (ts1) */
	CHECK_EQ_U64(r->ended_by_timestamp, with_ts);
	if (with_ts) {
		CHECK(r->present & PTC_SPE_F_TIMESTAMP, "%s: timestamp present", name);
		CHECK_EQ_U64(r->timestamp, 3913207673451ULL);
	} else {
		CHECK(!(r->present & PTC_SPE_F_TIMESTAMP), "%s: no timestamp", name);
	}
	CHECK_EQ_U64(r->offset, 0);
	CHECK_EQ_U64(r->size, 64);
	ptc_spe_decoder_free(d);

	/* The same bytes fed one byte at a time decode identically. */
	{
		struct got g2 = { 0 };
		size_t i;

		ptc_spe_decoder_new(&d, keep, &g2);
		for (i = 0; i < n; i++)
			ptc_spe_decoder_feed(d, buf + i, 1, i);
		ptc_spe_decoder_finish(d);
		CHECK_EQ_U64(g2.n, 1);
		CHECK(g2.n == 1 && g2.rec[0].pc.addr == r->pc.addr &&
		      g2.rec[0].target.addr == r->target.addr &&
		      g2.rec[0].events == r->events && g2.rec[0].lat_total == r->lat_total &&
		      g2.rec[0].lat_issue == r->lat_issue && g2.rec[0].timestamp == r->timestamp &&
		      g2.rec[0].present == r->present && g2.rec[0].size == r->size,
		      "%s: byte-wise feeding differs", name);
		ptc_spe_decoder_free(d);
	}
}

int main(void)
{
	const char *dir = getenv("PTC_SHARED");

	if (!dir || !*dir)
		dir = "../shared";
	check_one(dir, "spe-b1-ts0.bin", 0);
	check_one(dir, "spe-b1-ts1.bin", 1);
	return check_result();
}
