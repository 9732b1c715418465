/* --engine=libipt: the same branch events as the walker (ptdec.h), produced
 * by libipt's block decoder reading code through the same images.  Slower;
 * it exists to validate the walker and to measure it against. */
#ifndef PTC_DECODERS_INTEL_PT_BLKDEC_H
#define PTC_DECODERS_INTEL_PT_BLKDEC_H

#include "decoders/intel_pt/ptdec.h"

struct ptc_blk_decoder;

int ptc_blk_decoder_new(struct ptc_blk_decoder **out, const struct ptc_pt_params *p,
			const struct ptc_pt_env *env, int cpu, uint32_t queue_tid);
void ptc_blk_decoder_free(struct ptc_blk_decoder *d);
int ptc_blk_decoder_set_buffer(struct ptc_blk_decoder *d, const uint8_t *buf, size_t size,
			       uint64_t offset, uint64_t lost, int gap_cause, const char *why);
/* The stream's next bytes, right after the current piece and starting at
 * a PSB (a window boundary, as ptc_pt_decoder_continue): the walk goes on
 * from that PSB without a gap.  Only trace state carries over (thread,
 * time, the branch waiting for its successor, an open gap): libipt
 * restarts at the PSB, where the hardware (and ptgen-encode) also emptied
 * the RET-compression stack and flushed the pending TNT bits. */
int ptc_blk_decoder_continue(struct ptc_blk_decoder *d, const uint8_t *buf, size_t size, uint64_t offset);
int ptc_blk_decoder_run(struct ptc_blk_decoder *d, uint64_t until);
int ptc_blk_decoder_finish(struct ptc_blk_decoder *d);
uint64_t ptc_blk_decoder_time(const struct ptc_blk_decoder *d);
/* As ptc_pt_decoder_settled_time(); 0 while a block or branch is held
 * (they carry no time of their own). */
uint64_t ptc_blk_decoder_settled_time(const struct ptc_blk_decoder *d);
const struct ptc_pt_stats *ptc_blk_decoder_stats(const struct ptc_blk_decoder *d);

#endif
