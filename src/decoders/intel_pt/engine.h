/* One handle over the two Intel PT decoders: the walker (ptdec.h, the
 * default) and libipt's block decoder (blkdec.h, --engine=libipt).  Both
 * turn the pieces of one AUX queue into the same branch events; the
 * conversion driver (pt_convert.c) feeds and runs a queue through this
 * interface and never asks which engine it holds.
 *
 * The calls mean what the walker's do (ptdec.h).  Where the engines
 * differ, the difference is documented here. */
#ifndef PTC_DECODERS_INTEL_PT_ENGINE_H
#define PTC_DECODERS_INTEL_PT_ENGINE_H

#include "decoders/intel_pt/ptdec.h"

enum ptc_pt_engine_kind {
	PTC_PT_ENGINE_WALKER,		/* ptdec.c: packets walked over the branch tables */
	PTC_PT_ENGINE_LIBIPT,		/* blkdec.c: libipt's block decoder */
};

struct ptc_pt_engine;

int ptc_pt_engine_new(struct ptc_pt_engine **out, enum ptc_pt_engine_kind kind,
		      const struct ptc_pt_params *p, const struct ptc_pt_env *env, int cpu,
		      uint32_t queue_tid);
void ptc_pt_engine_free(struct ptc_pt_engine *e);

/* Whether the engine can check PARTIAL/COLLISION ranges segment by
 * segment (ptc_pt_engine_add_suspect); only the walker can, so the driver
 * skips such ranges whole for the other. */
int ptc_pt_engine_checks_suspects(enum ptc_pt_engine_kind kind);

int ptc_pt_engine_set_buffer(struct ptc_pt_engine *e, const uint8_t *buf, size_t size,
			     uint64_t offset, uint64_t lost, int gap_cause, const char *why);
int ptc_pt_engine_continue(struct ptc_pt_engine *e, const uint8_t *buf, size_t size,
			   uint64_t offset);
/* -ptc_err_unsupported from an engine that does not check suspects. */
int ptc_pt_engine_add_suspect(struct ptc_pt_engine *e, uint64_t s, uint64_t end);
/* ptc_pt_decoder_set_continued(): nothing for the libipt engine. */
void ptc_pt_engine_set_continued(struct ptc_pt_engine *e, int continued);
/* The walker's memo of TNT paths from now on (ptc_pt_decoder_set_memo()). */
void ptc_pt_engine_set_memo(struct ptc_pt_engine *e, struct ptc_path_memo *memo);
int ptc_pt_engine_run(struct ptc_pt_engine *e, uint64_t until);
/* ptc_pt_decoder_replay() (ptdec.h): -ptc_err_mismatch from the libipt
 * engine, which decodes every window itself. */
int ptc_pt_engine_replay(struct ptc_pt_engine *e, struct ptc_pt_ahead *a, uint64_t until);
int ptc_pt_engine_finish(struct ptc_pt_engine *e);
uint64_t ptc_pt_engine_time(const struct ptc_pt_engine *e);
/* The libipt engine returns 0 while it holds a block or branch, which
 * carry no time of their own. */
uint64_t ptc_pt_engine_settled_time(const struct ptc_pt_engine *e);
const struct ptc_pt_stats *ptc_pt_engine_stats(const struct ptc_pt_engine *e);
/* The thread the engine's branches go to now (NULL: none known, or the
 * libipt engine). */
struct ptc_pt_thread *ptc_pt_engine_thread(const struct ptc_pt_engine *e);

#endif
