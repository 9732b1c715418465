/* ARM SPE session (see spe_session.h). */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "decoders/arm_spe/spe_session.h"

struct thread {
	int32_t tid, pid;	/* tid 0 marks a free slot: tid 0 (idle) is never stored */
	char comm[16];
	int has_comm;
};

struct sched_entry {
	uint64_t time;
	int32_t pid, tid;
};

struct cpu_sched {
	int32_t cpu;
	struct sched_entry *e;
	size_t nr, cap;
};

struct queue {
	struct ptc_spe_session *s;
	int32_t cpu, tid;
	struct ptc_spe_decoder *dec;
};

struct ptc_spe_session {
	ptc_spe_sample_fn fn;
	void *ctx;
	struct ptc_spe_info info;
	int have_info;
	struct ptc_time_conv tc;
	struct thread *threads;
	size_t nr_threads, cap_threads;	/* open addressing, cap a power of two */
	struct cpu_sched *cpus;
	size_t nr_cpus, cap_cpus;
	struct queue **queues;
	size_t nr_queues, cap_queues;
	struct ptc_spe_session_stats st;
};

int ptc_spe_session_new(struct ptc_spe_session **out, ptc_spe_sample_fn fn, void *ctx)
{
	struct ptc_spe_session *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ptc_err_nomem;
	s->fn = fn;
	s->ctx = ctx;
	*out = s;
	return 0;
}

void ptc_spe_session_free(struct ptc_spe_session *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_queues; i++) {
		ptc_spe_decoder_free(s->queues[i]->dec);
		free(s->queues[i]);
	}
	for (i = 0; i < s->nr_cpus; i++)
		free(s->cpus[i].e);
	free(s->queues);
	free(s->cpus);
	free(s->threads);
	ptc_spe_info_free(&s->info);
	free(s);
}

int ptc_spe_session_set_info(struct ptc_spe_session *s, const uint64_t *priv, size_t nr_priv,
			     char *err, size_t errlen)
{
	int ret;

	ptc_spe_info_free(&s->info);
	ret = ptc_spe_info_parse(&s->info, priv, nr_priv, err, errlen);
	s->have_info = ret == 0;
	return ret;
}

const struct ptc_spe_info *ptc_spe_session_info(const struct ptc_spe_session *s)
{
	return s->have_info ? &s->info : NULL;
}

void ptc_spe_session_set_time_conv(struct ptc_spe_session *s, const struct ptc_time_conv *tc)
{
	s->tc = *tc;
}

static size_t thread_slot(const struct ptc_spe_session *s, int32_t tid)
{
	size_t mask = s->cap_threads - 1, i = ((uint32_t)tid * 2654435761u) & mask;

	while (s->threads[i].tid && s->threads[i].tid != tid)
		i = (i + 1) & mask;
	return i;
}

static struct thread *find_thread(const struct ptc_spe_session *s, int32_t tid)
{
	size_t i;

	if (!s->cap_threads || tid <= 0)
		return NULL;
	i = thread_slot(s, tid);
	return s->threads[i].tid ? &s->threads[i] : NULL;
}

int ptc_spe_session_thread(struct ptc_spe_session *s, int32_t pid, int32_t tid, const char *comm)
{
	struct thread *t;
	size_t i;

	if (tid <= 0)
		return 0;
	if ((s->nr_threads + 1) * 2 > s->cap_threads) {
		size_t cap = s->cap_threads ? s->cap_threads * 2 : 64;
		struct thread *old = s->threads, *n = calloc(cap, sizeof(*n));
		size_t oldcap = s->cap_threads;

		if (!n)
			return -ptc_err_nomem;
		s->threads = n;
		s->cap_threads = cap;
		for (i = 0; i < oldcap; i++)
			if (old[i].tid)
				s->threads[thread_slot(s, old[i].tid)] = old[i];
		free(old);
	}
	i = thread_slot(s, tid);
	t = &s->threads[i];
	if (!t->tid) {
		t->tid = tid;
		s->nr_threads++;
	}
	if (pid > 0)
		t->pid = pid;
	if (comm) {
		strncpy(t->comm, comm, sizeof(t->comm) - 1);
		t->comm[sizeof(t->comm) - 1] = 0;
		t->has_comm = 1;
	}
	return 0;
}

static struct cpu_sched *find_cpu(struct ptc_spe_session *s, int32_t cpu, int create)
{
	size_t i;

	for (i = 0; i < s->nr_cpus; i++)
		if (s->cpus[i].cpu == cpu)
			return &s->cpus[i];
	if (!create)
		return NULL;
	if (s->nr_cpus == s->cap_cpus) {
		size_t cap = s->cap_cpus ? s->cap_cpus * 2 : 16;
		struct cpu_sched *n = realloc(s->cpus, cap * sizeof(*n));
		if (!n)
			return NULL;
		s->cpus = n;
		s->cap_cpus = cap;
	}
	memset(&s->cpus[s->nr_cpus], 0, sizeof(*s->cpus));
	s->cpus[s->nr_cpus].cpu = cpu;
	return &s->cpus[s->nr_cpus++];
}

int ptc_spe_session_sched(struct ptc_spe_session *s, int32_t cpu, uint64_t time,
			  int32_t pid, int32_t tid)
{
	struct cpu_sched *c = find_cpu(s, cpu, 1);
	size_t i;

	if (!c)
		return -ptc_err_nomem;
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct sched_entry *n = realloc(c->e, cap * sizeof(*n));
		if (!n)
			return -ptc_err_nomem;
		c->e = n;
		c->cap = cap;
	}
	/* Usually in time order; keep the array sorted when not. */
	i = c->nr;
	while (i > 0 && c->e[i - 1].time > time) {
		c->e[i] = c->e[i - 1];
		i--;
	}
	c->e[i].time = time;
	c->e[i].pid = pid;
	c->e[i].tid = tid;
	c->nr++;
	if (tid > 0 && pid > 0)
		return ptc_spe_session_thread(s, pid, tid, NULL);
	return 0;
}

static const struct sched_entry *sched_at(struct ptc_spe_session *s, int32_t cpu, uint64_t time)
{
	struct cpu_sched *c = find_cpu(s, cpu, 0);
	size_t lo = 0, hi;

	if (!c || !c->nr)
		return NULL;
	hi = c->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->e[mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &c->e[lo - 1] : NULL;
}

static int on_record(void *ctx, const struct ptc_spe_record *rec)
{
	struct queue *q = ctx;
	struct ptc_spe_session *s = q->s;
	struct ptc_spe_sample smp;
	const struct thread *t;

	memset(&smp, 0, sizeof(smp));
	smp.rec = rec;
	smp.cpu = q->cpu;
	smp.pid = smp.tid = -1;
	if (rec->present & PTC_SPE_F_TIMESTAMP) {
		smp.have_time = 1;
		smp.time = ptc_time_conv_ticks(&s->tc, rec->timestamp);
		s->st.timed++;
	}
	if (rec->present & (PTC_SPE_F_CONTEXT_EL1 | PTC_SPE_F_CONTEXT_EL2)) {
		smp.tid = (int32_t)((rec->present & PTC_SPE_F_CONTEXT_EL1) ? rec->context_el1
									    : rec->context_el2);
		smp.tid_source = PTC_SPE_TID_CONTEXT;
	} else if (q->cpu < 0 && q->tid > 0) {
		smp.tid = q->tid;
		smp.tid_source = PTC_SPE_TID_QUEUE;
	} else if (smp.have_time) {
		const struct sched_entry *e = sched_at(s, q->cpu, smp.time);
		if (e && e->tid >= 0) {
			smp.tid = e->tid;
			smp.pid = e->pid;
			smp.tid_source = PTC_SPE_TID_SWITCH;
		}
	}
	t = find_thread(s, smp.tid);
	if (t) {
		if (t->pid > 0)
			smp.pid = t->pid;
		if (t->has_comm)
			smp.comm = t->comm;
	}
	if (smp.tid == 0)
		smp.pid = 0;	/* the idle task */
	s->st.tid_from[smp.tid_source]++;
	s->st.samples++;
	return s->fn ? s->fn(s->ctx, &smp) : 0;
}

static struct queue *find_queue(struct ptc_spe_session *s, int32_t cpu, int32_t tid)
{
	struct queue *q;
	size_t i;

	for (i = 0; i < s->nr_queues; i++) {
		q = s->queues[i];
		if (q->cpu == cpu && (cpu >= 0 || q->tid == tid))
			return q;
	}
	if (s->nr_queues == s->cap_queues) {
		size_t cap = s->cap_queues ? s->cap_queues * 2 : 16;
		struct queue **n = realloc(s->queues, cap * sizeof(*n));
		if (!n)
			return NULL;
		s->queues = n;
		s->cap_queues = cap;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->s = s;
	q->cpu = cpu;
	q->tid = tid;
	if (ptc_spe_decoder_new(&q->dec, on_record, q)) {
		free(q);
		return NULL;
	}
	s->queues[s->nr_queues++] = q;
	return q;
}

int ptc_spe_session_aux(struct ptc_spe_session *s, int32_t cpu, int32_t tid, uint64_t offset,
			const uint8_t *data, size_t size)
{
	struct queue *q = find_queue(s, cpu, tid);

	if (!q)
		return -ptc_err_nomem;
	s->st.aux_records++;
	s->st.aux_bytes += size;
	return ptc_spe_decoder_feed(q->dec, data, size, offset);
}

void ptc_spe_session_finish(struct ptc_spe_session *s)
{
	size_t i;

	for (i = 0; i < s->nr_queues; i++)
		ptc_spe_decoder_finish(s->queues[i]->dec);
}

const struct ptc_spe_session_stats *ptc_spe_session_stats(struct ptc_spe_session *s)
{
	size_t i;

	memset(&s->st.decode, 0, sizeof(s->st.decode));
	s->st.bad_offset = UINT64_MAX;
	s->st.bad_cpu = s->st.bad_tid = -1;
	for (i = 0; i < s->nr_queues; i++) {
		const struct ptc_spe_decode_stats *d = ptc_spe_decoder_stats(s->queues[i]->dec);
		struct ptc_spe_decode_stats *t = &s->st.decode;

		if (d->bad_bytes && s->st.bad_offset == UINT64_MAX) {
			s->st.bad_offset = ptc_spe_decoder_first_error_offset(s->queues[i]->dec);
			s->st.bad_cpu = s->queues[i]->cpu;
			s->st.bad_tid = s->queues[i]->tid;
		}

		t->bytes += d->bytes;
		t->packets += d->packets;
		t->pad_bytes += d->pad_bytes;
		t->records += d->records;
		t->empty_records += d->empty_records;
		t->bad_bytes += d->bad_bytes;
		t->resyncs += d->resyncs;
		t->dropped_records += d->dropped_records;
		t->dropped_bytes += d->dropped_bytes;
		t->discontinuities += d->discontinuities;
	}
	return &s->st;
}
