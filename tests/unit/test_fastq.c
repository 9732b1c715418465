/* ptconv's query decoder (src/decoders/intel_pt/fastq.c) against libipt's
 * query decoder, the reference: the same questions about the same bytes
 * must get the same answers (tests/unit/fastq_lockstep.h).
 *
 *	test_fastq [STREAM...]
 *
 * Without arguments: packet sequences written with libipt's encoder, one
 * per corner of the packets fastq handles (events bound to TIP, TIP.PGE and
 * TIP.PGD, PSB+ with and without an IP, MODE.TSX in PSB+, CBR outside PSB+,
 * every IP compression, TSC/TMA/MTC timing with wraps, long TNT, a PSB+ cut
 * by the end, a PSB+ with a packet it may not hold), and sequences it must
 * refuse (OVF, CYC, PIP, MODE.TSX outside PSB+, a cut packet, a PSB pattern
 * inside a packet).  With streams (raw AUX data, e.g. ptgen-walk
 * --aux-dump): each must be supported as a whole, and each, its cuts at
 * every PSB and 200 mutants of it must decode alike in lockstep (a mutant
 * only when fastq supports it).
 *
 *	test_fastq --write-seeds DIR	(the sequences as fuzz seeds) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "../lib/check.h"
#include "fastq_lockstep.h"

#define MTC_FREQ 3
#define CTC_N 80	/* TSC ticks per crystal tick, as ptgen's */

/* ratio 0: no CTC:TSC ratio; 1: one; 2: one and the BDM70 erratum. */
static void config(struct pt_config *cfg, uint8_t *buf, size_t size, int ratio)
{
	pt_config_init(cfg);
	cfg->begin = buf;
	cfg->end = buf + size;
	cfg->mtc_freq = MTC_FREQ;
	cfg->nom_freq = 20;
	if (ratio) {
		cfg->cpuid_0x15_eax = 1;
		cfg->cpuid_0x15_ebx = CTC_N;
	}
	cfg->errata.bdm70 = ratio == 2;
}

/* Every seed and both timing configurations: same answers. */
static void lockstep_all(uint8_t *buf, size_t size, const char *name, int nseeds)
{
	struct pt_config cfg;
	struct fastq_lockstep_counts cnt;
	char why[300];
	int ratio, s;

	for (ratio = 0; ratio < 3; ratio++) {
		for (s = 0; s < nseeds; s++) {
			int64_t r;
			memset(&cnt, 0, sizeof(cnt));
			config(&cfg, buf, size, ratio);
			r = fastq_lockstep(&cfg, 0x9e3779b97f4a7c15ull * (uint64_t)(s + 1), 1u << 24, &cnt,
					   why, sizeof(why));
			CHECK(r >= 0, "%s (seed %d, ratio %d): %s", name, s, ratio, why);
			if (!s && ratio == 2 && nseeds > 1)
				printf("%s: %" PRId64 " questions, %" PRIu64 " bits, %" PRIu64 " targets, %" PRIu64
				       " events, %" PRIu64 " syncs, %" PRIu64 " errors: same answers\n", name, r,
				       cnt.bits, cnt.tips, cnt.events, cnt.syncs, cnt.errors);
		}
	}
}

static int supported(uint8_t *buf, size_t size)
{
	struct pt_config cfg;

	config(&cfg, buf, size, 1);
	return ptc_fq_supported(&cfg);
}

/* ---- packet sequences ---- */

struct seq {
	uint8_t buf[4096];
	size_t size;
	struct pt_encoder *enc;
	struct pt_config cfg;
};

static void seq_begin(struct seq *s)
{
	memset(s->buf, 0, sizeof(s->buf));
	pt_config_init(&s->cfg);
	s->cfg.begin = s->buf;
	s->cfg.end = s->buf + sizeof(s->buf);
	s->enc = pt_alloc_encoder(&s->cfg);
	s->size = 0;
}

static void put(struct seq *s, struct pt_packet p)
{
	int n = pt_enc_next(s->enc, &p);
	uint64_t off;

	CHECK(n > 0, "encoder: packet type %d: %d", p.type, n);
	if (pt_enc_get_offset(s->enc, &off) == 0)
		s->size = (size_t)off;
}

static void seq_end(struct seq *s)
{
	pt_free_encoder(s->enc);
}

static struct pt_packet pk(enum pt_packet_type t)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = t;
	return p;
}

static struct pt_packet ipp(enum pt_packet_type t, enum pt_ip_compression ipc, uint64_t ip)
{
	struct pt_packet p = pk(t);

	p.payload.ip.ipc = ipc;
	p.payload.ip.ip = ip;
	return p;
}

static struct pt_packet tnt(int bits, uint64_t payload)
{
	struct pt_packet p = pk(bits > 6 ? ppt_tnt_64 : ppt_tnt_8);

	p.payload.tnt.bit_size = (uint8_t)bits;
	p.payload.tnt.payload = payload;
	return p;
}

static struct pt_packet tsc(uint64_t v)
{
	struct pt_packet p = pk(ppt_tsc);

	p.payload.tsc.tsc = v;
	return p;
}

static struct pt_packet tma(uint16_t ctc, uint16_t fc)
{
	struct pt_packet p = pk(ppt_tma);

	p.payload.tma.ctc = ctc;
	p.payload.tma.fc = fc;
	return p;
}

static struct pt_packet mtc(uint8_t ctc)
{
	struct pt_packet p = pk(ppt_mtc);

	p.payload.mtc.ctc = ctc;
	return p;
}

static struct pt_packet cbr(uint8_t r)
{
	struct pt_packet p = pk(ppt_cbr);

	p.payload.cbr.ratio = r;
	return p;
}

static struct pt_packet mode_exec(int csl, int csd)
{
	struct pt_packet p = pk(ppt_mode);

	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = (uint32_t)csl;
	p.payload.mode.bits.exec.csd = (uint32_t)csd;
	return p;
}

static struct pt_packet mode_tsx(int intx, int abrt)
{
	struct pt_packet p = pk(ppt_mode);

	p.payload.mode.leaf = pt_mol_tsx;
	p.payload.mode.bits.tsx.intx = (uint32_t)intx;
	p.payload.mode.bits.tsx.abrt = (uint32_t)abrt;
	return p;
}

/* PSB+ with time, a mode, a CBR and (ip != 0) a FUP: tracing on. */
static void psb_plus(struct seq *s, uint64_t t, uint64_t ip, int tsx)
{
	put(s, pk(ppt_psb));
	put(s, tsc(t));
	put(s, tma((uint16_t)(t / CTC_N), (uint16_t)(t % CTC_N)));
	put(s, cbr(20));
	put(s, mode_exec(1, 0));
	if (tsx)
		put(s, mode_tsx(0, 0));
	if (ip)
		put(s, ipp(ppt_fup, pt_ipc_sext_48, ip));
	put(s, pk(ppt_pad));
	put(s, pk(ppt_psbend));
}

typedef void (*seq_fn)(struct seq *s);

static void seq_basic(struct seq *s)
{
	psb_plus(s, 1000000, 0x401000, 0);
	put(s, tnt(6, 0x2d));
	put(s, ipp(ppt_tip, pt_ipc_update_16, 0x1234));
	put(s, tnt(47, 0x5555aaaa5555ull));
	put(s, ipp(ppt_tip, pt_ipc_update_32, 0x00402000));
	put(s, ipp(ppt_tip, pt_ipc_update_48, 0x7fff00001000ull));
	put(s, ipp(ppt_tip, pt_ipc_full, 0x401010));
	put(s, ipp(ppt_tip, pt_ipc_suppressed, 0));
	put(s, tnt(1, 1));
	put(s, ipp(ppt_tip, pt_ipc_sext_48, 0xffff800000001000ull));
}

/* Tracing off and on again: a system call (PGD with the IP suppressed,
 * user-only), an interrupt (FUP then PGD), a mode before PGE, an
 * asynchronous branch (FUP then TIP), a mode before a TIP and before PGD. */
static void seq_events(struct seq *s)
{
	psb_plus(s, 2000000, 0x401000, 0);
	put(s, tnt(3, 5));
	put(s, mtc(0x10));
	put(s, ipp(ppt_tip_pgd, pt_ipc_suppressed, 0));
	put(s, tsc(2001000));
	put(s, tma((uint16_t)(2001000 / CTC_N), 7));
	put(s, mtc(0x40));
	put(s, mode_exec(1, 0));
	put(s, ipp(ppt_tip_pge, pt_ipc_sext_48, 0x401100));
	put(s, tnt(2, 1));
	put(s, ipp(ppt_fup, pt_ipc_update_16, 0x1110));
	put(s, ipp(ppt_tip_pgd, pt_ipc_suppressed, 0));
	put(s, ipp(ppt_tip_pge, pt_ipc_update_16, 0x1110));
	put(s, ipp(ppt_fup, pt_ipc_update_16, 0x1120));
	put(s, ipp(ppt_tip, pt_ipc_update_16, 0x2000));
	put(s, mode_exec(1, 0));
	put(s, ipp(ppt_tip, pt_ipc_update_16, 0x2100));
	put(s, mode_exec(0, 1));
	put(s, mode_exec(1, 0));
	put(s, ipp(ppt_tip_pgd, pt_ipc_update_16, 0x2200));
	put(s, cbr(24));
	put(s, ipp(ppt_tip_pge, pt_ipc_update_16, 0x2300));
	put(s, cbr(22));
	put(s, tnt(4, 9));
	put(s, ipp(ppt_tip_pgd, pt_ipc_update_16, 0x2400));
}

/* Time before any TSC: MTC alone (and in PSB+), then a TSC; MTC counting
 * in seq_timing2. */
static void seq_timing(struct seq *s)
{
	put(s, pk(ppt_psb));
	put(s, mtc(3));
	put(s, ipp(ppt_fup, pt_ipc_sext_48, 0x401000));
	put(s, pk(ppt_psbend));
	put(s, mtc(4));
	put(s, tnt(3, 1));
	put(s, mtc(9));
	put(s, ipp(ppt_tip, pt_ipc_update_16, 0x1000));
	put(s, tsc(777777));
	put(s, mtc(10));
	put(s, tnt(3, 1));
}

/* MTC counting: a wrap of its 8 bits, a TMA whose low CTC bits are above
 * the next MTC's, a skipped period, a TMA twice. */
static void seq_timing2(struct seq *s)
{
	int i;

	psb_plus(s, 0x12345678, 0x401000, 0);
	for (i = 0; i < 40; i++) {
		put(s, mtc((uint8_t)(0xf0 + i * 3)));
		put(s, tnt(1, (uint64_t)i & 1));
		if (i % 7 == 3)
			put(s, ipp(ppt_tip, pt_ipc_update_16, (uint64_t)(0x1000 + i)));
	}
	put(s, tsc(0x12400000));
	put(s, tma(0xfff0, 3));
	put(s, mtc(0x02));
	put(s, tnt(2, 3));
	put(s, tsc(0x12500000));
	put(s, mtc(0x99));
	put(s, tnt(2, 3));
	put(s, tma(0x0100, 1));
	put(s, tnt(2, 3));
}

/* PSB+ without an IP (tracing off), with MODE.TSX, PSB+ right after a
 * TNT whose bits are still cached, and a PSB+ cut by the end. */
static void seq_psbs(struct seq *s)
{
	psb_plus(s, 3000000, 0, 1);
	put(s, ipp(ppt_tip_pge, pt_ipc_sext_48, 0x401000));
	put(s, tnt(5, 0x11));
	psb_plus(s, 3001000, 0x401040, 1);
	put(s, tnt(3, 2));
	put(s, ipp(ppt_tip_pgd, pt_ipc_suppressed, 0));
	psb_plus(s, 3002000, 0, 0);
	put(s, pk(ppt_pad));
	put(s, pk(ppt_psb));
	put(s, tsc(3003000));
	put(s, ipp(ppt_fup, pt_ipc_sext_48, 0x401000));
}

/* A PSB+ holding a TIP (not allowed there): both refuse it alike, and a
 * TMA before any TSC. */
static void seq_bad_context(struct seq *s)
{
	put(s, pk(ppt_psb));
	put(s, ipp(ppt_tip, pt_ipc_sext_48, 0x401000));
	put(s, pk(ppt_psbend));
	put(s, tnt(2, 1));
	psb_plus(s, 100, 0x401000, 0);
	put(s, tnt(2, 1));
	put(s, pk(ppt_psb));
	put(s, tma(5, 5));
	put(s, pk(ppt_psbend));
	put(s, tnt(2, 1));
	psb_plus(s, 200, 0x401000, 0);
	put(s, ipp(ppt_tip_pge, pt_ipc_update_16, 0x2000));
	put(s, tnt(2, 1));
}

/* BDM70: a PSB+ with a FUP while tracing is off, then TIP.PGE (the FUP
 * is ignored with the erratum), and one followed by a TNT (it is not). */
static void seq_bdm70(struct seq *s)
{
	psb_plus(s, 100, 0x401000, 0);
	put(s, ipp(ppt_tip_pge, pt_ipc_sext_48, 0x401000));
	put(s, tnt(2, 1));
	put(s, ipp(ppt_tip_pgd, pt_ipc_suppressed, 0));
	psb_plus(s, 200, 0x401020, 0);
	put(s, mtc(9));
	put(s, ipp(ppt_tip_pge, pt_ipc_sext_48, 0x401020));
	put(s, tnt(2, 1));
	put(s, ipp(ppt_tip_pgd, pt_ipc_suppressed, 0));
	psb_plus(s, 300, 0x401040, 0);
	put(s, tnt(2, 1));
}

/* Sequences fastq must leave to libipt. */
static void seq_ovf(struct seq *s)
{
	psb_plus(s, 100, 0x401000, 0);
	put(s, pk(ppt_ovf));
	put(s, ipp(ppt_fup, pt_ipc_sext_48, 0x401000));
}

static void seq_cyc(struct seq *s)
{
	struct pt_packet p = pk(ppt_cyc);

	p.payload.cyc.value = 12;
	psb_plus(s, 100, 0x401000, 0);
	put(s, p);
	put(s, tnt(2, 1));
}

static void seq_pip(struct seq *s)
{
	struct pt_packet p = pk(ppt_pip);

	p.payload.pip.cr3 = 0x1000;
	psb_plus(s, 100, 0x401000, 0);
	put(s, p);
	put(s, tnt(2, 1));
}

static void seq_tsx(struct seq *s)
{
	psb_plus(s, 100, 0x401000, 0);
	put(s, mode_tsx(1, 0));
	put(s, ipp(ppt_fup, pt_ipc_update_16, 0x1000));
	put(s, tnt(2, 1));
}

/* A payload that ends in PSB pattern bytes right before a PSB: the search
 * for a PSB finds the packet, not the run's start (the check that every
 * PSB found is a packet guards the case where it would not). */
static void seq_psb_in_payload(struct seq *s)
{
	psb_plus(s, 100, 0x401000, 0);
	put(s, ipp(ppt_tip, pt_ipc_full, 0x8202820282028202ull));
	psb_plus(s, 200, 0x401000, 0);
	put(s, tnt(2, 1));
}

/* Runs of TNT packets back to back (43% of xz's TNT packets follow
 * another): runs ended by a TIP, a TNT-64, an MTC, a PGD, a FUP's event
 * and the end, long ones, and TNT-8s after a TNT-64.  The lockstep's wrong
 * questions (an indirect branch, an event) land inside the runs too, and
 * the offsets are compared at every bit. */
static void seq_tnt_runs(struct seq *s)
{
	int i;

	psb_plus(s, 300000, 0x401000, 0);
	put(s, tnt(6, 0x2d));
	put(s, tnt(1, 1));
	put(s, tnt(5, 0x11));
	put(s, ipp(ppt_tip, pt_ipc_update_16, 0x1234));
	put(s, tnt(3, 6));
	put(s, tnt(6, 0x2a));
	put(s, tnt(20, 0xabcde));
	put(s, tnt(2, 2));
	put(s, tnt(4, 9));
	put(s, mtc(0x21));
	put(s, tnt(6, 0x15));
	for (i = 0; i < 12; i++)
		put(s, tnt(1 + i % 6, (uint64_t)(0x15 + i * 7) & ((1u << (1 + i % 6)) - 1)));
	put(s, ipp(ppt_tip, pt_ipc_update_16, 0x2000));
	put(s, tnt(47, 0x7fff0000ffffull));
	for (i = 0; i < 5; i++)
		put(s, tnt(6, 0x33));
	put(s, ipp(ppt_tip, pt_ipc_update_16, 0x2100));
	put(s, tnt(2, 1));
	put(s, tnt(3, 5));
	put(s, ipp(ppt_fup, pt_ipc_update_16, 0x2110));
	put(s, ipp(ppt_tip_pgd, pt_ipc_suppressed, 0));
	put(s, mode_exec(1, 0));
	put(s, ipp(ppt_tip_pge, pt_ipc_update_16, 0x2200));
	put(s, tnt(4, 3));
	put(s, tnt(4, 12));
	put(s, ipp(ppt_tip_pgd, pt_ipc_update_16, 0x2300));
	put(s, ipp(ppt_tip_pge, pt_ipc_update_16, 0x2400));
	put(s, tnt(2, 1));
	put(s, tnt(6, 0x3f));
	put(s, tnt(1, 0));
}

static const struct {
	const char *name;
	seq_fn fn;
	int supported;
} seqs[] = {
	{ "basic", seq_basic, 1 },
	{ "events", seq_events, 1 },
	{ "timing", seq_timing, 1 },
	{ "bdm70", seq_bdm70, 1 },
	{ "timing2", seq_timing2, 1 },
	{ "psbs", seq_psbs, 1 },
	{ "bad-context", seq_bad_context, 1 },
	{ "ovf", seq_ovf, 0 },
	{ "cyc", seq_cyc, 0 },
	{ "pip", seq_pip, 0 },
	{ "tsx", seq_tsx, 0 },
	{ "psb-run-in-payload", seq_psb_in_payload, 1 },
	{ "tnt-runs", seq_tnt_runs, 1 },
};

/* Cut a stream at every PSB (the windows the conversion decodes) and at a
 * few other places: each piece decodes alike; a piece ending inside a
 * packet is not supported. */
static void cuts(uint8_t *buf, size_t size, const char *name)
{
	struct pt_config cfg;
	struct pt_packet_decoder *pk;
	uint64_t off, cuts[64];
	size_t n = 0, i;
	char nm[300];

	config(&cfg, buf, size, 1);
	pk = pt_pkt_alloc_decoder(&cfg);
	while (n < 60 && pt_pkt_sync_forward(pk) >= 0 && pt_pkt_get_sync_offset(pk, &off) >= 0)
		cuts[n++] = off;
	pt_pkt_free_decoder(pk);
	for (i = 0; i + 1 < n; i += 3) {
		snprintf(nm, sizeof(nm), "%s [%" PRIu64 ", %" PRIu64 ")", name, cuts[i], cuts[i + 1]);
		CHECK(supported(buf + cuts[i], (size_t)(cuts[i + 1] - cuts[i])) == 1, "%s: not supported", nm);
		lockstep_all(buf + cuts[i], (size_t)(cuts[i + 1] - cuts[i]), nm, 1);
		/* from the start of the stream up to a PSB, then the rest */
		lockstep_all(buf, (size_t)cuts[i + 1], nm, 1);
		lockstep_all(buf + cuts[i], size - (size_t)cuts[i], nm, 1);
	}
	/* a piece that ends one byte into a packet of more than one byte */
	if (n >= 2) {
		config(&cfg, buf, size, 1);
		pk = pt_pkt_alloc_decoder(&cfg);
		pt_pkt_sync_set(pk, cuts[1]);
		for (;;) {
			struct pt_packet p;
			uint64_t at;
			if (pt_pkt_get_offset(pk, &at) < 0 || pt_pkt_next(pk, &p, sizeof(p)) < 0)
				break;
			if (p.size > 1) {
				CHECK(supported(buf, (size_t)at + 1) == 0, "%s: cut inside a packet at %" PRIu64
				      " called supported", name, at + 1);
				break;
			}
		}
		pt_pkt_free_decoder(pk);
	}
}

/* Mutants: bytes changed at random; where fastq takes one, its answers
 * must be libipt's. */
static void mutants(const uint8_t *buf, size_t size, const char *name, int count)
{
	uint8_t *m = malloc(size);
	uint64_t rs = 0x2545f4914f6cdd1dull ^ size;
	int i, taken = 0;
	char nm[300];

	for (i = 0; i < count && m; i++) {
		int k, nflip = 1 + (int)(fastq_lockstep_rand(&rs) % 4);
		memcpy(m, buf, size);
		for (k = 0; k < nflip; k++)
			m[fastq_lockstep_rand(&rs) % size] = (uint8_t)fastq_lockstep_rand(&rs);
		if (supported(m, size) != 1)
			continue;
		taken++;
		snprintf(nm, sizeof(nm), "%s mutant %d", name, i);
		lockstep_all(m, size, nm, 1);
	}
	free(m);
	printf("%s: %d of %d mutants taken by fastq\n", name, taken, count);
}

static uint8_t *read_all(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0, r;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? cap * 2 : 1 << 16);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, cap - n, f);
		if (!r)
			break;
		n += r;
	}
	fclose(f);
	*size = n;
	return buf;
}

int main(int argc, char **argv)
{
	size_t i;
	int a;
	const char *seeds = argc == 3 && !strcmp(argv[1], "--write-seeds") ? argv[2] : NULL;

	for (i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		struct seq s;
		seq_begin(&s);
		seqs[i].fn(&s);
		seq_end(&s);
		if (seeds) {
			char path[512];
			FILE *f;
			snprintf(path, sizeof(path), "%s/seq-%s", seeds, seqs[i].name);
			f = fopen(path, "wb");
			CHECK(f && fwrite(s.buf, 1, s.size, f) == s.size, "%s: cannot write", path);
			if (f)
				fclose(f);
			continue;
		}
		CHECK(supported(s.buf, s.size) == seqs[i].supported, "%s: supported %d, want %d", seqs[i].name,
		      supported(s.buf, s.size), seqs[i].supported);
		/* the lockstep holds for the supported ones */
		if (seqs[i].supported && fastq_lockstep_reference())
			lockstep_all(s.buf, s.size, seqs[i].name, 64);
	}
	if (!seeds && !fastq_lockstep_reference()) {
		struct pt_version v = pt_library_version();

		printf("SKIP: libipt %u.%u.%u is loaded: fastq answers as libipt 2.0's query decoder, "
		       "no reference to compare with (packet support checked only)\n",
		       v.major, v.minor, v.patch);
		return check_result() ? check_result() : 77;
	}
	for (a = seeds ? argc : 1; a < argc; a++) {
		size_t size;
		uint8_t *buf = read_all(argv[a], &size);
		struct fastq_lockstep_counts cnt;
		struct pt_config cfg;
		char why[300];
		int64_t r;

		CHECK(buf != NULL, "%s: %s", argv[a], strerror(errno));
		if (!buf)
			continue;
		CHECK(supported(buf, size) == 1, "%s: not supported", argv[a]);
		memset(&cnt, 0, sizeof(cnt));
		config(&cfg, buf, size, 1);
		r = fastq_lockstep(&cfg, 1, UINT64_MAX, &cnt, why, sizeof(why));
		CHECK(r >= 0, "%s: %s", argv[a], why);
		printf("%s: %" PRId64 " questions, %" PRIu64 " bits, %" PRIu64 " targets, %" PRIu64
		       " events, %" PRIu64 " syncs, %" PRIu64 " errors: same answers\n",
		       argv[a], r, cnt.bits, cnt.tips, cnt.events, cnt.syncs, cnt.errors);
		CHECK(cnt.bits > 0, "%s: no conditional branch", argv[a]);
		lockstep_all(buf, size, argv[a], 3);
		cuts(buf, size, argv[a]);
		mutants(buf, size < 65536 ? size : 65536, argv[a], 200);
		free(buf);
	}
	return check_result();
}
