/* ptenc: the packet policy of one Intel PT trace stream (one AUX queue).
 *
 * The caller describes what the CPU did in user mode, event by event, with
 * the time of each event in TSC ticks; ptenc decides which packets the
 * hardware would have written (IA32_RTIT_CTL with BranchEn, user-only
 * tracing, optional TSC/MTC/CYC) and encodes them with libipt's packet
 * encoder.  Encoded bytes are handed to a sink in chunks; memory is bounded
 * by the chunk size.
 *
 * Modelled: TNT accumulation (short TNT up to 6 bits, or long TNT up to 47),
 * flushed before any other control-flow or PSB packet; TIP/FUP/TIP.PGE IP
 * compression against the last IP; RET compression with a 64-entry call
 * stack (oldest entry dropped when full, cleared at PSB and overflow);
 * PSB+ every psb_period bytes (PSB, TSC, TMA, CBR, and when tracing is
 * enabled MODE.EXEC and FUP of the current IP, PSBEND); TIP.PGD with a
 * suppressed IP when a far branch leaves user mode; FUP + TIP.PGD for an
 * asynchronous exit; MODE.EXEC + TIP.PGE when user mode resumes; OVF with
 * FUP of the resume IP; MTC every 2^mtc_period crystal ticks while packets
 * are enabled; CYC before CYC-eligible packets in cycle-accurate mode.
 */
#ifndef PTGEN_PTENC_H
#define PTGEN_PTENC_H

#include <stddef.h>
#include <stdint.h>

/* Receives the stream in order: bytes [offset, offset + size). */
typedef int (*ptenc_sink_fn)(void *ctx, const uint8_t *data, size_t size,
			     uint64_t offset);

struct ptenc_config {
	int retcomp;		/* RET compression (IA32_RTIT_CTL.DisRETC = 0) */
	int tsc, mtc, cyc;	/* timing packets */
	unsigned mtc_period;	/* MTC every 2^mtc_period crystal ticks */
	unsigned tsc_ctc_ratio;	/* TSC ticks per crystal tick */
	unsigned cbr;		/* core:bus ratio, core cycles per TSC tick = cbr / max_nonturbo */
	int long_tnt;		/* accumulate up to 47 bits in long TNT packets */
	uint64_t psb_period;	/* bytes between PSBs */
	size_t chunk_size;	/* bytes handed to the sink at a time */
	ptenc_sink_fn sink;
	void *sink_ctx;
};

struct ptenc;

enum ptenc_kind {	/* as enum ptc_branch_kind */
	PTENC_JMP, PTENC_JMP_IND, PTENC_CALL, PTENC_CALL_IND, PTENC_RET,
	PTENC_COND, PTENC_FAR
};

struct ptenc_stats {
	uint64_t tnt_bits, tnt_packets, tip, tip_pge, tip_pgd, fup, psb, ovf,
		 mode_exec, tsc, tma, mtc, cyc, cbr, ret_compressed,
		 callstack_dropped, bytes, bytes_lost;
};

int ptenc_new(struct ptenc **out, const struct ptenc_config *cfg);
void ptenc_free(struct ptenc *e);

/* TraceEn 0 -> 1 while the CPU is not in user mode: PSB+ without IP. */
int ptenc_start(struct ptenc *e, uint64_t tsc);
/* A branch executed in user mode (not far). */
int ptenc_branch(struct ptenc *e, uint64_t tsc, enum ptenc_kind kind,
		 uint64_t ip, uint64_t target, int taken, unsigned len);
/* A far branch (syscall) leaves user mode: TIP.PGD, IP suppressed. */
int ptenc_far_exit(struct ptenc *e, uint64_t tsc);
/* An asynchronous exit (interrupt, exception) before the instruction at ip
 * executed: FUP ip, TIP.PGD. */
int ptenc_async_exit(struct ptenc *e, uint64_t tsc, uint64_t ip);
/* The mode of the code from the next resume on (MODE.EXEC, there and in
 * the PSB+s): 64 (the default), or 32 for a compatibility-mode task (CS.L
 * 0, CS.D 1). */
void ptenc_set_mode(struct ptenc *e, unsigned bits);
/* User mode resumes at ip: MODE.EXEC, TIP.PGE ip. */
int ptenc_resume(struct ptenc *e, uint64_t tsc, uint64_t ip);
/* Internal buffer overflow: OVF now; packets are lost until
 * ptenc_overflow_end(), which writes the FUP of the IP where tracing
 * resumes (ip = 0 when the CPU is not in user mode then; the next
 * ptenc_resume() gives the IP). */
int ptenc_overflow(struct ptenc *e, uint64_t tsc);
int ptenc_overflow_end(struct ptenc *e, uint64_t tsc, uint64_t ip, int in_user);
/* The AUX buffer is full: the hardware stops writing (pending TNT bits
 * are lost with the rest) until `bytes` bytes of packets have not been
 * written, then starts again with a PSB+ at the next branch or resume, as
 * when perf re-enables the event (PERF_AUX_FLAG_TRUNCATED). */
int ptenc_stop(struct ptenc *e, uint64_t bytes);
/* True while ptenc_stop() discards packets. */
int ptenc_stopped(const struct ptenc *e);
/* True while packets are being dropped after ptenc_overflow(). */
int ptenc_in_overflow(const struct ptenc *e);
/* Writes pending TNT bits and hands everything to the sink. */
int ptenc_flush(struct ptenc *e);
/* Bytes produced so far (including those not yet handed to the sink). */
uint64_t ptenc_offset(const struct ptenc *e);
/* Stream offset of the last PSB, UINT64_MAX if none. */
uint64_t ptenc_last_psb(const struct ptenc *e);
int ptenc_enabled(const struct ptenc *e);
/* TNT bits not yet written. */
unsigned ptenc_pending_tnt(const struct ptenc *e);
const struct ptenc_stats *ptenc_stats(const struct ptenc *e);

#endif
