/* The engine handle: which decoder a queue runs, decided once here. */
#include <stdlib.h>

#include "common/error.h"
#include "decoders/intel_pt/blkdec.h"
#include "decoders/intel_pt/engine.h"

struct ptc_pt_engine {
	enum ptc_pt_engine_kind kind;
	union {
		struct ptc_pt_decoder *walker;
		struct ptc_blk_decoder *blk;
	} u;
};

int ptc_pt_engine_new(struct ptc_pt_engine **out, enum ptc_pt_engine_kind kind,
		      const struct ptc_pt_params *p, const struct ptc_pt_env *env, int cpu,
		      uint32_t queue_tid)
{
	struct ptc_pt_engine *e = calloc(1, sizeof(*e));
	int err;

	*out = NULL;
	if (!e)
		return -ptc_err_nomem;
	e->kind = kind;
	if (kind == PTC_PT_ENGINE_LIBIPT)
		err = ptc_blk_decoder_new(&e->u.blk, p, env, cpu, queue_tid);
	else
		err = ptc_pt_decoder_new(&e->u.walker, p, env, cpu, queue_tid);
	if (err < 0) {
		free(e);
		return err;
	}
	*out = e;
	return 0;
}

void ptc_pt_engine_free(struct ptc_pt_engine *e)
{
	if (!e)
		return;
	if (e->kind == PTC_PT_ENGINE_LIBIPT)
		ptc_blk_decoder_free(e->u.blk);
	else
		ptc_pt_decoder_free(e->u.walker);
	free(e);
}

int ptc_pt_engine_checks_suspects(enum ptc_pt_engine_kind kind)
{
	return kind == PTC_PT_ENGINE_WALKER;
}

int ptc_pt_engine_set_buffer(struct ptc_pt_engine *e, const uint8_t *buf, size_t size,
			     uint64_t offset, uint64_t lost, int gap_cause, const char *why)
{
	if (e->kind == PTC_PT_ENGINE_LIBIPT)
		return ptc_blk_decoder_set_buffer(e->u.blk, buf, size, offset, lost, gap_cause, why);
	return ptc_pt_decoder_set_buffer(e->u.walker, buf, size, offset, lost, gap_cause, why);
}

int ptc_pt_engine_continue(struct ptc_pt_engine *e, const uint8_t *buf, size_t size,
			   uint64_t offset)
{
	if (e->kind == PTC_PT_ENGINE_LIBIPT)
		return ptc_blk_decoder_continue(e->u.blk, buf, size, offset);
	return ptc_pt_decoder_continue(e->u.walker, buf, size, offset);
}

int ptc_pt_engine_add_suspect(struct ptc_pt_engine *e, uint64_t s, uint64_t end)
{
	if (!ptc_pt_engine_checks_suspects(e->kind))
		return -ptc_err_unsupported;
	return ptc_pt_decoder_add_suspect(e->u.walker, s, end);
}

int ptc_pt_engine_run(struct ptc_pt_engine *e, uint64_t until)
{
	if (e->kind == PTC_PT_ENGINE_LIBIPT)
		return ptc_blk_decoder_run(e->u.blk, until);
	return ptc_pt_decoder_run(e->u.walker, until);
}

void ptc_pt_engine_set_continued(struct ptc_pt_engine *e, int continued)
{
	if (e->kind == PTC_PT_ENGINE_WALKER)
		ptc_pt_decoder_set_continued(e->u.walker, continued);
}

void ptc_pt_engine_set_memo(struct ptc_pt_engine *e, struct ptc_path_memo *memo)
{
	if (e->kind == PTC_PT_ENGINE_WALKER)
		ptc_pt_decoder_set_memo(e->u.walker, memo);
}

int ptc_pt_engine_replay(struct ptc_pt_engine *e, struct ptc_pt_ahead *a, uint64_t until)
{
	if (e->kind == PTC_PT_ENGINE_LIBIPT)
		return -ptc_err_mismatch;
	return ptc_pt_decoder_replay(e->u.walker, a, until);
}

struct ptc_pt_thread *ptc_pt_engine_thread(const struct ptc_pt_engine *e)
{
	return e->kind == PTC_PT_ENGINE_LIBIPT ? NULL : ptc_pt_decoder_thread(e->u.walker);
}

int ptc_pt_engine_finish(struct ptc_pt_engine *e)
{
	if (e->kind == PTC_PT_ENGINE_LIBIPT)
		return ptc_blk_decoder_finish(e->u.blk);
	return ptc_pt_decoder_finish(e->u.walker);
}

uint64_t ptc_pt_engine_time(const struct ptc_pt_engine *e)
{
	if (e->kind == PTC_PT_ENGINE_LIBIPT)
		return ptc_blk_decoder_time(e->u.blk);
	return ptc_pt_decoder_time(e->u.walker);
}

uint64_t ptc_pt_engine_settled_time(const struct ptc_pt_engine *e)
{
	if (e->kind == PTC_PT_ENGINE_LIBIPT)
		return ptc_blk_decoder_settled_time(e->u.blk);
	return ptc_pt_decoder_settled_time(e->u.walker);
}

const struct ptc_pt_stats *ptc_pt_engine_stats(const struct ptc_pt_engine *e)
{
	if (e->kind == PTC_PT_ENGINE_LIBIPT)
		return ptc_blk_decoder_stats(e->u.blk);
	return ptc_pt_decoder_stats(e->u.walker);
}
