/* ptconv packets: count (or list) the Intel PT packets of every AUX queue
 * with libipt's packet decoder, the way `perf script -D` shows them. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "config.h"
#include "cli/cli.h"
#include "common/error.h"
#include "convert/pt_convert.h"
#include "decoders/intel_pt/unknown.h"
#include "input/perf_reader.h"

enum kind {
	K_PAD, K_PSB, K_PSBEND, K_FUP, K_TIP, K_TIP_PGE, K_TIP_PGD, K_TNT, K_MODE_EXEC, K_MODE_TSX,
	K_PIP, K_VMCS, K_CBR, K_TSC, K_TMA, K_MTC, K_CYC, K_STOP, K_OVF, K_MNT, K_EXSTOP, K_MWAIT,
	K_PWRE, K_PWRX, K_PTW, K_CFE, K_EVD, K_TRIG, K_UNKNOWN, K_BAD, K_NR
};

static const char *const kind_names[K_NR] = {
	"PAD", "PSB", "PSBEND", "FUP", "TIP", "TIP.PGE", "TIP.PGD", "TNT", "MODE.Exec", "MODE.TSX",
	"PIP", "VMCS", "CBR", "TSC", "TMA", "MTC", "CYC", "TRACESTOP", "OVF", "MNT", "EXSTOP", "MWAIT",
	"PWRE", "PWRX", "PTWRITE", "CFE", "EVD", "TRIG", "unknown", "bad",
};

struct piece { uint64_t offset, size, file_off; uint8_t *data; };

struct queue {
	uint32_t idx, cpu, tid;
	struct piece *p;
	size_t np;
	uint64_t counts[K_NR];
	uint64_t bytes;
};

static int kind_of(const struct pt_packet *p)
{
	switch (p->type) {
	case ppt_pad: return K_PAD;
	case ppt_psb: return K_PSB;
	case ppt_psbend: return K_PSBEND;
	case ppt_fup: return K_FUP;
	case ppt_tip: return K_TIP;
	case ppt_tip_pge: return K_TIP_PGE;
	case ppt_tip_pgd: return K_TIP_PGD;
	case ppt_tnt_8: case ppt_tnt_64: return K_TNT;
	case ppt_mode: return p->payload.mode.leaf == pt_mol_exec ? K_MODE_EXEC : K_MODE_TSX;
	case ppt_pip: return K_PIP;
	case ppt_vmcs: return K_VMCS;
	case ppt_cbr: return K_CBR;
	case ppt_tsc: return K_TSC;
	case ppt_tma: return K_TMA;
	case ppt_mtc: return K_MTC;
	case ppt_cyc: return K_CYC;
	case ppt_stop: return K_STOP;
	case ppt_ovf: return K_OVF;
	case ppt_mnt: return K_MNT;
	case ppt_exstop: return K_EXSTOP;
	case ppt_mwait: return K_MWAIT;
	case ppt_pwre: return K_PWRE;
	case ppt_pwrx: return K_PWRX;
	case ppt_ptw: return K_PTW;
#if HAVE_DECL_PPT_CFE && HAVE_DECL_PPT_EVD
	case ppt_cfe: return K_CFE;
	case ppt_evd: return K_EVD;
#endif
#if HAVE_DECL_PPT_TRIG
	case ppt_trig: return K_TRIG;
#endif
	default: return K_UNKNOWN;
	}
}

static void list_packet(const struct queue *q, uint64_t off, const struct pt_packet *p, int k)
{
	printf("%u %#10" PRIx64 "  %-9s", q->idx, off, kind_names[k]);
	switch (p->type) {
	case ppt_fup: case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd:
		if (p->payload.ip.ipc == pt_ipc_suppressed)
			printf(" suppressed");
		else
			printf(" 0x%" PRIx64 " (ipc %d)", p->payload.ip.ip, (int)p->payload.ip.ipc);
		break;
	case ppt_tnt_8: case ppt_tnt_64: {
		int i;
		printf(" ");
		for (i = p->payload.tnt.bit_size - 1; i >= 0; i--)
			putchar((p->payload.tnt.payload >> i) & 1 ? 'T' : 'N');
		break;
	}
	case ppt_tsc: printf(" 0x%" PRIx64, p->payload.tsc.tsc); break;
	case ppt_mtc: printf(" 0x%x", p->payload.mtc.ctc); break;
	case ppt_cyc: printf(" 0x%" PRIx64, p->payload.cyc.value); break;
	case ppt_pip: printf(" 0x%" PRIx64, p->payload.pip.cr3); break;
	case ppt_cbr: printf(" %u", p->payload.cbr.ratio); break;
	case ppt_mode:
		if (p->payload.mode.leaf == pt_mol_exec)
			printf(" csl %d csd %d", p->payload.mode.bits.exec.csl, p->payload.mode.bits.exec.csd);
		break;
#if HAVE_DECL_PPT_CFE && HAVE_DECL_PPT_EVD
	case ppt_cfe:
		printf(" type %d vector %u ip %u", (int)p->payload.cfe.type, p->payload.cfe.vector, p->payload.cfe.ip);
		break;
	case ppt_evd: printf(" type %d 0x%" PRIx64, (int)p->payload.evd.type, p->payload.evd.payload); break;
#endif
#if HAVE_DECL_PPT_TRIG
	case ppt_trig: printf(" trbv 0x%x", p->payload.trig.trbv); break;
#endif
	default: break;
	}
	putchar('\n');
}

/* Decode one AUXTRACE buffer from its first byte, as `perf script -D`
 * does: bytes before the first PSB are decoded too (they may be the tail
 * of a packet that began in the previous buffer); a byte that starts no
 * valid packet counts as bad and decoding goes on at the next byte. */
static void count_buffer(struct queue *q, const uint8_t *buf, size_t size, uint64_t base, int list)
{
	struct pt_config cfg;
	struct pt_packet_decoder *d;
	uint64_t off = 0;
	int st;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + size;
	d = pt_pkt_alloc_decoder(&cfg);
	if (!d)
		return;
	while (off < size) {
		if (pt_pkt_sync_set(d, off) < 0)
			break;
		for (;;) {
			struct pt_packet p;
			int k;
			pt_pkt_get_offset(d, &off);
			st = pt_pkt_next(d, &p, sizeof(p));
			if (st < 0)
				break;
			k = kind_of(&p);
			q->counts[k]++;
			if (list)
				list_packet(q, base + off, &p, k);
		}
		if (st == -pte_eos && off >= size)
			break;
		q->counts[K_BAD]++;
		if (list) {
			/* a packet newer than the libipt loaded is named */
			const char *newer = st == -pte_bad_opc ? ptc_pt_newer_packet(buf + off, size - off) : NULL;

			printf("%u %#10" PRIx64 "  bad packet: %s%s%s\n", q->idx, base + off, pt_errstr(pt_errcode(st)),
			       newer ? ": a " : "", newer ? newer : "");
		}
		off++;
	}
	pt_pkt_free_decoder(d);
}

static int cmp_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

int cmd_packets(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ptc_perf_reader *r;
	struct ptc_perf_record rec;
	struct queue *qs = NULL;
	size_t nq = 0, i, k;
	uint64_t total[K_NR] = { 0 };
	char err_s[512];
	int c, list = 0, err, ret = PTC_EXIT_OK;
	uint32_t type = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "lh", lo, NULL)) != -1) {
		if (c == 'l')
			list = 1;
		else {
			fprintf(c == 'h' ? stdout : stderr, "usage: ptconv packets FILE [--list]\n");
			return c == 'h' ? PTC_EXIT_OK : PTC_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: ptconv packets FILE [--list]\n");
		return PTC_EXIT_USAGE;
	}
	if (ptc_perf_open(&r, argv[optind], err_s, sizeof(err_s)) < 0) {
		ptc_cli_error("%s", err_s);
		return PTC_EXIT_INPUT;
	}
	while ((err = ptc_perf_next(r, &rec)) > 0) {
		struct ptc_perf_auxtrace at;
		struct queue *q = NULL;
		struct piece *p;

		if (rec.type == PTC_REC_AUXTRACE_INFO) {
			struct ptc_perf_auxtrace_info ai;
			if (ptc_perf_parse_auxtrace_info(&rec, &ai) == 0)
				type = ai.type;
			continue;
		}
		if (rec.type != PTC_REC_AUXTRACE || ptc_perf_parse_auxtrace(&rec, &at) < 0)
			continue;
		for (i = 0; i < nq; i++)
			if (qs[i].idx == at.idx)
				q = &qs[i];
		if (!q) {
			qs = realloc(qs, (nq + 1) * sizeof(*qs));
			if (!qs)
				return PTC_EXIT_INPUT;
			q = &qs[nq++];
			memset(q, 0, sizeof(*q));
			q->idx = at.idx;
			q->cpu = at.cpu;
			q->tid = at.tid;
		}
		p = realloc(q->p, (q->np + 1) * sizeof(*p));
		if (!p)
			return PTC_EXIT_INPUT;
		q->p = p;
		p = &q->p[q->np++];
		memset(p, 0, sizeof(*p));
		p->offset = at.offset;
		p->size = rec.aux_size;
		p->file_off = rec.aux_offset;
		if (!ptc_perf_seekable(r) && rec.aux_size) {
			uint64_t have = 0;
			ssize_t got;
			p->data = rec.aux_size < (1ull << 34) ? malloc(rec.aux_size) : NULL;
			if (!p->data)
				return PTC_EXIT_INPUT;
			while (have < rec.aux_size && (got = ptc_perf_read_aux(r, p->data + have, rec.aux_size - have)) > 0)
				have += (uint64_t)got;
			p->size = have;
		}
	}
	if (err < 0) {
		ptc_cli_error("%s", ptc_perf_errmsg(r));
		ret = PTC_EXIT_INPUT;
	}
	/* damaged input skipped: the packets of what is left, and status 3 */
	ptc_convert_say_damage(r);
	if (ptc_perf_stats(r)->skips)
		ret = PTC_EXIT_INPUT;
	if (type && type != PTC_AUXTRACE_INTEL_PT) {
		ptc_cli_error("%s: not an Intel PT recording (AUXTRACE_INFO type %u)", argv[optind], type);
		ptc_perf_close(r);
		return PTC_EXIT_INPUT;
	}
	if (!nq) {
		ptc_cli_error("%s: no AUXTRACE data", argv[optind]);
		ptc_perf_close(r);
		return PTC_EXIT_INPUT;
	}
	for (i = 0; i < nq; i++) {
		struct queue *q = &qs[i];
		size_t a = 0;

		qsort(q->p, q->np, sizeof(*q->p), cmp_piece);
		for (a = 0; a < q->np; a++) {
			uint64_t size = q->p[a].size;
			uint8_t *buf = q->p[a].data;

			if (!buf) {
				buf = malloc(size ? size : 1);
				if (!buf)
					break;
				if (ptc_perf_pread(r, buf, size, q->p[a].file_off) < 0) {
					ptc_cli_error("%s", ptc_perf_errmsg(r));
					ret = PTC_EXIT_INPUT;
					free(buf);
					continue;
				}
			}
			q->bytes += size;
			count_buffer(q, buf, size, q->p[a].offset, list);
			if (buf != q->p[a].data)
				free(buf);
		}
		for (k = 0; k < K_NR; k++)
			total[k] += q->counts[k];
	}
	for (i = 0; i < nq; i++) {
		printf("queue %u cpu %d tid %d: %" PRIu64 " bytes in %zu buffers\n",
		       qs[i].idx, qs[i].cpu == UINT32_MAX ? -1 : (int)qs[i].cpu,
		       qs[i].tid == UINT32_MAX ? -1 : (int)qs[i].tid, qs[i].bytes, qs[i].np);
		for (k = 0; k < K_NR; k++)
			if (qs[i].counts[k])
				printf("  %-10s %" PRIu64 "\n", kind_names[k], qs[i].counts[k]);
	}
	printf("total:\n");
	for (k = 0; k < K_NR; k++)
		if (total[k])
			printf("  %-10s %" PRIu64 "\n", kind_names[k], total[k]);
	for (i = 0; i < nq; i++) {
		for (k = 0; k < qs[i].np; k++)
			free(qs[i].p[k].data);
		free(qs[i].p);
	}
	free(qs);
	ptc_perf_close(r);
	return ret;
}
