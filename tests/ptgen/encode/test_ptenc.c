/* ptenc's packet policy, packet by packet, read back with libipt's packet
 * decoder (the oracle for the bytes): PSB+ contents, MODE.EXEC before
 * TIP.PGE, TNT packing and bit order, IP compression, TIP.PGD with the IP
 * suppressed, FUP + TIP.PGD for an interrupt, the 64-entry RET-compression
 * stack, PSB spacing, OVF then FUP.
 */
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "../../lib/check.h"
#include "ptenc.h"

static uint8_t stream[1 << 20];
static size_t stream_len;

static int sink(void *ctx, const uint8_t *data, size_t size, uint64_t offset)
{
	(void)ctx;
	CHECK_EQ_U64(offset, stream_len);
	if (stream_len + size > sizeof(stream))
		return -1;
	memcpy(stream + stream_len, data, size);
	stream_len += size;
	return 0;
}

static struct ptenc *make(int retcomp, uint64_t psb_period)
{
	struct ptenc_config c = {
		.retcomp = retcomp, .tsc = 1, .mtc = 1, .mtc_period = 3,
		.tsc_ctc_ratio = 80, .cbr = 20, .psb_period = psb_period,
		.chunk_size = 4096, .sink = sink,
	};
	struct ptenc *e;

	stream_len = 0;
	CHECK(ptenc_new(&e, &c) == 0, "ptenc_new");
	return e;
}

/* The packets of the stream, decoded by libipt. */
static struct pt_packet pkts[65536];
static uint64_t offs[65536];
static size_t npkts;

static void decode(void)
{
	struct pt_config c;
	struct pt_packet_decoder *d;
	int st;

	pt_config_init(&c);
	c.begin = stream;
	c.end = stream + stream_len;
	d = pt_pkt_alloc_decoder(&c);
	CHECK(d != NULL, "pt_pkt_alloc_decoder");
	npkts = 0;
	st = pt_pkt_sync_set(d, 0);
	while (st >= 0 && npkts < 65536) {
		pt_pkt_get_offset(d, &offs[npkts]);
		st = pt_pkt_next(d, &pkts[npkts], sizeof(pkts[0]));
		if (st >= 0)
			npkts++;
	}
	CHECK(st == -pte_eos, "packet decoder stopped with %d", st);
	pt_pkt_free_decoder(d);
}

/* Index of the next packet of type t at or after i, or npkts. */
static size_t find(size_t i, enum pt_packet_type t)
{
	while (i < npkts && pkts[i].type != t)
		i++;
	return i;
}

static size_t count(enum pt_packet_type t)
{
	size_t i, n = 0;

	for (i = 0; i < npkts; i++)
		n += pkts[i].type == t;
	return n;
}

static void test_start_resume_tnt_tip(void)
{
	struct ptenc *e = make(1, 1 << 14);
	static const int taken[7] = { 1, 0, 1, 1, 0, 0, 1 };
	size_t i;
	int k;

	CHECK(ptenc_start(e, 1000) == 0, "start");
	CHECK(ptenc_resume(e, 1100, 0x7ffff7fe4b70ULL) == 0, "resume");
	for (k = 0; k < 7; k++)
		CHECK(ptenc_branch(e, 1200 + k, PTENC_COND, 0x7ffff7fe4b80ULL + 4 * k,
				   0x7ffff7fe5000ULL, taken[k], 2) == 0, "cond");
	CHECK(ptenc_branch(e, 1300, PTENC_JMP_IND, 0x7ffff7fe4c00ULL,
			   0x7ffff7fe1234ULL, 1, 2) == 0, "jmp ind");
	CHECK(ptenc_branch(e, 1400, PTENC_FAR, 0x7ffff7fe4d00ULL, 0, 1, 2) == 0, "syscall");
	CHECK(ptenc_flush(e) == 0, "flush");
	decode();

	/* PSB+ while not in user mode: no MODE.EXEC, no FUP. */
	CHECK(npkts > 6 && pkts[0].type == ppt_psb, "PSB first");
	CHECK(pkts[1].type == ppt_tsc && pkts[1].payload.tsc.tsc == 1000, "TSC in PSB+");
	CHECK(pkts[2].type == ppt_tma, "TMA in PSB+");
	CHECK(pkts[3].type == ppt_cbr && pkts[3].payload.cbr.ratio == 20, "CBR in PSB+");
	CHECK(pkts[4].type == ppt_psbend, "PSBEND");
	/* Resume: TSC, TMA, MODE.EXEC 64-bit, TIP.PGE with the full IP. */
	i = find(5, ppt_tip_pge);
	CHECK(i < npkts && pkts[i].payload.ip.ip == 0x7ffff7fe4b70ULL &&
	      pkts[i].payload.ip.ipc == pt_ipc_sext_48, "TIP.PGE ip/ipc");
	CHECK(pkts[i - 1].type == ppt_mode && pkts[i - 1].payload.mode.leaf == pt_mol_exec &&
	      pt_get_exec_mode(&pkts[i - 1].payload.mode.bits.exec) == ptem_64bit,
	      "MODE.EXEC 64 before TIP.PGE");
	/* Seven conditionals: a 6-bit TNT, oldest in the highest bit, then
	 * the seventh flushed before the TIP. */
	i = find(i, ppt_tnt_8);
	CHECK(i < npkts && pkts[i].payload.tnt.bit_size == 6 &&
	      pkts[i].payload.tnt.payload == 0x2c /* 101100 */, "first TNT");
	i = find(i + 1, ppt_tnt_8);
	CHECK(i < npkts && pkts[i].payload.tnt.bit_size == 1 &&
	      pkts[i].payload.tnt.payload == 1, "second TNT");
	i = find(i, ppt_tip);
	CHECK(i < npkts && pkts[i].payload.ip.ip == 0x1234 &&
	      pkts[i].payload.ip.ipc == pt_ipc_update_16, "TIP update-16");
	i = find(i, ppt_tip_pgd);
	CHECK(i < npkts && pkts[i].payload.ip.ipc == pt_ipc_suppressed, "TIP.PGD suppressed");
	CHECK(!ptenc_enabled(e), "disabled after the syscall");
	ptenc_free(e);
}

static void test_interrupt_and_ovf(void)
{
	struct ptenc *e = make(1, 1 << 14);
	size_t i;

	ptenc_start(e, 10);
	ptenc_resume(e, 20, 0x401000);
	CHECK(ptenc_branch(e, 30, PTENC_COND, 0x401010, 0x401000, 1, 2) == 0, "cond");
	CHECK(ptenc_async_exit(e, 40, 0x401004) == 0, "interrupt");
	CHECK(ptenc_resume(e, 50, 0x401004) == 0, "resume");
	CHECK(ptenc_overflow(e, 60) == 0, "ovf");
	CHECK(ptenc_branch(e, 70, PTENC_COND, 0x401010, 0x401000, 1, 2) == 0, "lost");
	CHECK(ptenc_overflow_end(e, 80, 0x7f0000401008ULL, 1) == 0, "ovf end");
	ptenc_flush(e);
	decode();
	i = find(0, ppt_fup);
	CHECK(i + 1 < npkts && pkts[i].payload.ip.ip == 0x1004 &&
	      pkts[i].payload.ip.ipc == pt_ipc_update_16 && pkts[i + 1].type == ppt_tip_pgd,
	      "FUP + TIP.PGD for an interrupt");
	CHECK(pkts[i - 1].type == ppt_tnt_8, "TNT flushed before the FUP");
	i = find(i, ppt_ovf);
	CHECK(i + 1 < npkts && pkts[i + 1].type == ppt_fup &&
	      pkts[i + 1].payload.ip.ip == 0x7f0000401008ULL &&
	      pkts[i + 1].payload.ip.ipc == pt_ipc_sext_48, "OVF then FUP with the full IP");
	CHECK(count(ppt_tnt_8) == 1, "the branch in the overflow is not traced");
	ptenc_free(e);
}

/* 70 nested calls, 70 returns: the 64 innermost returns are compressed, the
 * 6 outermost (their stack entries were dropped) are TIPs; with
 * noretcomp all 70 are TIPs. */
static void test_ret_compression(int retcomp)
{
	struct ptenc *e = make(retcomp, 1 << 20);
	const struct ptenc_stats *s;
	uint64_t t = 100;
	int k;

	ptenc_start(e, t);
	ptenc_resume(e, t, 0x500000);
	for (k = 0; k < 70; k++)
		ptenc_branch(e, ++t, PTENC_CALL, 0x500000 + 16 * k, 0x500000 + 16 * (k + 1), 1, 5);
	for (k = 69; k >= 0; k--)
		ptenc_branch(e, ++t, PTENC_RET, 0x600000, 0x500000 + 16 * k + 5, 1, 1);
	ptenc_flush(e);
	decode();
	s = ptenc_stats(e);
	if (retcomp) {
		CHECK_EQ_U64(s->ret_compressed, 64);
		CHECK_EQ_U64(s->callstack_dropped, 6);
		CHECK_EQ_U64(count(ppt_tip), 6);
		CHECK_EQ_U64(s->tnt_bits, 64);
	} else {
		CHECK_EQ_U64(s->ret_compressed, 0);
		CHECK_EQ_U64(count(ppt_tip), 70);
	}
	ptenc_free(e);
}

/* A return that does not go where its call came from is a TIP, and the
 * stack is forgotten: the next matching return is a TIP too. */
static void test_ret_mismatch(void)
{
	struct ptenc *e = make(1, 1 << 20);

	ptenc_start(e, 1);
	ptenc_resume(e, 2, 0x500000);
	ptenc_branch(e, 3, PTENC_CALL, 0x500000, 0x501000, 1, 5);
	ptenc_branch(e, 4, PTENC_CALL, 0x501000, 0x502000, 1, 5);
	ptenc_branch(e, 5, PTENC_RET, 0x502010, 0x500005, 1, 1);	/* longjmp-like */
	ptenc_branch(e, 6, PTENC_RET, 0x500010, 0x400000, 1, 1);
	ptenc_flush(e);
	decode();
	CHECK_EQ_U64(ptenc_stats(e)->ret_compressed, 0);
	CHECK_EQ_U64(count(ppt_tip), 2);
	ptenc_free(e);
}

/* PSBs at least psb_period bytes apart, each with the current IP in its
 * FUP, the first IP after it compressed against nothing. */
static void test_psb_period(void)
{
	struct ptenc *e = make(1, 256);
	uint64_t last_psb = 0;
	size_t i, n = 0;
	int k;

	ptenc_start(e, 1);
	ptenc_resume(e, 2, 0x400000);
	for (k = 0; k < 2000; k++)
		ptenc_branch(e, 3 + (uint64_t)k, PTENC_JMP_IND, 0x400000 + 8 * (uint64_t)(k % 100),
			     0x400000 + 8 * (uint64_t)((k + 1) % 100), 1, 2);
	ptenc_flush(e);
	decode();
	for (i = 0; i < npkts; i++) {
		size_t j;

		if (pkts[i].type != ppt_psb)
			continue;
		if (n++) {
			CHECK(offs[i] >= last_psb + 256, "PSB at %llu, previous at %llu",
			      (unsigned long long)offs[i], (unsigned long long)last_psb);
			j = find(i, ppt_fup);
			CHECK(j < find(i, ppt_psbend), "FUP inside PSB+");
			CHECK(pkts[j].payload.ip.ipc == pt_ipc_sext_48, "full IP in PSB+");
			CHECK(pkts[j - 1].type == ppt_mode, "MODE.EXEC in PSB+");
			/* The next TIP goes to the FUP's IP's successor: its
			 * compression is against the FUP. */
		}
		last_psb = offs[i];
	}
	CHECK(n > 10, "%zu PSBs", n);
	CHECK_EQ_U64(ptenc_stats(e)->psb, n);
	ptenc_free(e);
}

/* AUX buffer full: nothing is written until `bytes` bytes of packets were
 * lost, then a PSB+ with the current IP, and packets again. */
static void test_stop(void)
{
	struct ptenc *e = make(1, 1 << 20);
	size_t i, before;
	int k;

	ptenc_start(e, 1);
	ptenc_resume(e, 2, 0x400000);
	ptenc_branch(e, 3, PTENC_JMP_IND, 0x400000, 0x400100, 1, 2);
	ptenc_branch(e, 4, PTENC_COND, 0x400100, 0x400000, 1, 2);	/* pending, lost */
	before = (size_t)ptenc_offset(e);
	CHECK(ptenc_stop(e, 40) == 0, "stop");
	for (k = 0; k < 30; k++)
		ptenc_branch(e, 5 + (uint64_t)k, PTENC_JMP_IND, 0x400100, 0x400200 + (uint64_t)k, 1, 2);
	CHECK(!ptenc_stopped(e), "writing again");
	CHECK(ptenc_stats(e)->bytes_lost >= 40, "%llu bytes lost",
	      (unsigned long long)ptenc_stats(e)->bytes_lost);
	ptenc_flush(e);
	decode();
	/* PSB+ (start), TSC, TMA, MODE, PGE, TIP, then the restart PSB right
	 * where writing stopped. */
	i = find(1, ppt_psb);
	CHECK(i < npkts && offs[i] == before, "restart PSB at %llu, stopped at %zu",
	      (unsigned long long)offs[i], before);
	CHECK(count(ppt_tnt_8) == 0, "the pending TNT bit was lost");
	i = find(i, ppt_fup);
	CHECK(i < npkts && pkts[i].payload.ip.ipc == pt_ipc_sext_48, "FUP in the restart PSB+");
	ptenc_free(e);
}

int main(void)
{
	test_stop();
	test_start_resume_tnt_tip();
	test_interrupt_and_ovf();
	test_ret_compression(1);
	test_ret_compression(0);
	test_ret_mismatch();
	test_psb_period();
	return check_result();
}
