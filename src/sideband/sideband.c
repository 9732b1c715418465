/* Sideband model: mappings over time per process, threads, per-CPU switch
 * timelines, AUX and LOST records.  See sideband.h. */
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/grow.h"
#include "sideband/sideband.h"

struct sb_switch {
	uint64_t time;
	uint64_t seq;		/* record order, breaks ties between equal times */
	uint32_t pid, tid;
	uint8_t source;		/* enum ptc_sb_source */
	uint8_t pid_known;	/* 0: sched_switch gives the tid only */
	uint8_t unknown;	/* damaged records leave the thread unknown */
	uint32_t cand, ncand;	/* when unknown: the threads it may be (sb->cands) */
};

/* A SWITCH_CPU_WIDE record as read, kept until ptc_sb_finish() checks it
 * against its neighbours (check_switches()). */
struct sb_swrec {
	uint64_t time, seq, offset;
	uint32_t np_pid, np_tid;	/* next_prev: the thread in (out) or out (in) */
	uint32_t pid, tid;		/* sample_id: the thread out (out) or in (in) */
	uint16_t size;
	uint8_t out, have_sid;
	uint8_t unknown;		/* set by the check: its entry is unknown */
	uint32_t cand, ncand;		/* ... and the threads it may be */
};

struct sb_cpu {
	struct sb_switch *v;
	size_t n, cap;
	int sorted;
	unsigned sources;	/* enum ptc_sb_source bits of the entries added */
	unsigned used;		/* ... of those kept by ptc_sb_finish() */
	size_t nthreads;	/* distinct non-idle threads, after finish */
	uint64_t last_time;	/* of the latest record from this CPU */
	struct sb_swrec *sw;	/* its SWITCH_CPU_WIDE records, until finish */
	size_t nsw, capsw;
};

struct sb_buildid {
	int32_t pid;
	const char *filename;
	uint8_t id[20];
	uint8_t size;
};

struct ptc_sideband {
	struct ptc_sb_map *maps;
	size_t nr_maps, cap_maps;

	struct ptc_sb_thread *threads;
	size_t nr_threads, cap_threads;
	uint32_t *thash;	/* open addressing: index + 1, 0 empty */
	size_t thash_size;

	struct sb_cpu *cpus;
	size_t nr_cpus;

	struct ptc_sb_aux *aux;
	size_t nr_aux, cap_aux;

	struct sb_buildid *bids;
	size_t nr_bids;

	/* interned strings: a list of malloc'd blocks */
	char **strs;
	size_t nr_strs, cap_strs;

	uint64_t lost, lost_records, seq;

	struct ptc_sb_lost_range *lranges;
	size_t nr_lranges, cap_lranges;

	struct ptc_sb_switch_damage *swdmg;
	size_t nr_swdmg, cap_swdmg;
	struct sb_cand { uint32_t pid, tid; } *cands;
	size_t nr_cands, cap_cands;
};

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
	return ptc_grow(v, cap, need, elem, 16);
}

static const char *intern(struct ptc_sideband *sb, const char *s)
{
	size_t i;
	char *c;

	/* Most names repeat (the same library in every process): reuse the
	 * last few. */
	for (i = sb->nr_strs; i > 0 && i + 64 > sb->nr_strs; i--)
		if (!strcmp(sb->strs[i - 1], s))
			return sb->strs[i - 1];
	if (grow((void **)&sb->strs, &sb->cap_strs, sb->nr_strs + 1, sizeof(char *)))
		return NULL;
	c = strdup(s);
	if (!c)
		return NULL;
	sb->strs[sb->nr_strs++] = c;
	return c;
}

int ptc_sb_new(struct ptc_sideband **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ptc_err_nomem;
}

void ptc_sb_free(struct ptc_sideband *sb)
{
	size_t i;

	if (!sb)
		return;
	for (i = 0; i < sb->nr_strs; i++)
		free(sb->strs[i]);
	for (i = 0; i < sb->nr_cpus; i++) {
		free(sb->cpus[i].v);
		free(sb->cpus[i].sw);
	}
	free(sb->swdmg);
	free(sb->cands);
	free(sb->strs);
	free(sb->cpus);
	free(sb->maps);
	free(sb->threads);
	free(sb->thash);
	free(sb->aux);
	free(sb->bids);
	free(sb->lranges);
	free(sb);
}

static size_t thash_slot(uint32_t tid, size_t size)
{
	return (size_t)((tid * 2654435761u) & (size - 1));
}

static struct ptc_sb_thread *thread_find(const struct ptc_sideband *sb, uint32_t tid)
{
	size_t i;

	if (!sb->thash_size)
		return NULL;
	for (i = thash_slot(tid, sb->thash_size); sb->thash[i]; i = (i + 1) & (sb->thash_size - 1))
		if (sb->threads[sb->thash[i] - 1].tid == tid)
			return &sb->threads[sb->thash[i] - 1];
	return NULL;
}

static int thash_rebuild(struct ptc_sideband *sb, size_t size)
{
	uint32_t *h = calloc(size, sizeof(*h));
	size_t i, j;

	if (!h)
		return -ptc_err_nomem;
	for (i = 0; i < sb->nr_threads; i++) {
		for (j = thash_slot(sb->threads[i].tid, size); h[j]; j = (j + 1) & (size - 1))
			;
		h[j] = (uint32_t)i + 1;
	}
	free(sb->thash);
	sb->thash = h;
	sb->thash_size = size;
	return 0;
}

static struct ptc_sb_thread *thread_get(struct ptc_sideband *sb, uint32_t pid, uint32_t tid,
					uint64_t time)
{
	struct ptc_sb_thread *t = thread_find(sb, tid);

	if (t)
		return t;
	if (grow((void **)&sb->threads, &sb->cap_threads, sb->nr_threads + 1, sizeof(*t)))
		return NULL;
	t = &sb->threads[sb->nr_threads++];
	t->pid = pid;
	t->tid = tid;
	t->ptid = 0;	/* unknown until a FORK says */
	t->comm = NULL;
	t->t_start = time;
	t->t_exit = PTC_SB_TIME_MAX;
	if (sb->nr_threads * 2 > sb->thash_size) {
		if (thash_rebuild(sb, sb->thash_size ? sb->thash_size * 2 : 64))
			return NULL;
	} else {
		size_t j;
		for (j = thash_slot(tid, sb->thash_size); sb->thash[j]; j = (j + 1) & (sb->thash_size - 1))
			;
		sb->thash[j] = (uint32_t)sb->nr_threads;
	}
	return t;
}

static struct sb_cpu *cpu_get(struct ptc_sideband *sb, uint32_t cpu)
{
	if (cpu >= 65536)
		return NULL;
	if (cpu >= sb->nr_cpus) {
		struct sb_cpu *c = realloc(sb->cpus, (cpu + 1) * sizeof(*c));
		if (!c)
			return NULL;
		memset(c + sb->nr_cpus, 0, (cpu + 1 - sb->nr_cpus) * sizeof(*c));
		sb->cpus = c;
		sb->nr_cpus = cpu + 1;
	}
	return &sb->cpus[cpu];
}

static int push_entry(struct ptc_sideband *sb, uint32_t cpu, uint64_t time, uint64_t seq,
		      uint32_t pid, uint32_t tid, enum ptc_sb_source source, int pid_known, int unknown,
		      uint32_t cand, uint32_t ncand);

static int push_switch(struct ptc_sideband *sb, uint32_t cpu, uint64_t time, uint64_t seq,
		       uint32_t pid, uint32_t tid, enum ptc_sb_source source, int pid_known, int unknown)
{
	return push_entry(sb, cpu, time, seq, pid, tid, source, pid_known, unknown, 0, 0);
}

static int push_entry(struct ptc_sideband *sb, uint32_t cpu, uint64_t time, uint64_t seq,
		      uint32_t pid, uint32_t tid, enum ptc_sb_source source, int pid_known, int unknown,
		      uint32_t cand, uint32_t ncand)
{
	struct sb_cpu *c;
	struct sb_switch *s;

	c = cpu_get(sb, cpu);
	if (!c)
		return -ptc_err_nomem;
	/* The same thread again from the same source changes nothing: a
	 * stream of repeated records costs no memory. */
	if (c->n) {
		s = &c->v[c->n - 1];
		if (s->source == source && s->tid == tid && s->pid == pid && !s->unknown && !unknown &&
		    time >= s->time)
			return 0;
	}
	if (grow((void **)&c->v, &c->cap, c->n + 1, sizeof(*s)))
		return -ptc_err_nomem;
	s = &c->v[c->n++];
	s->time = time;
	s->seq = seq;
	s->pid = pid;
	s->tid = tid;
	s->source = (uint8_t)source;
	s->pid_known = (uint8_t)pid_known;
	s->unknown = (uint8_t)unknown;
	s->cand = cand;
	s->ncand = ncand;
	c->sources |= source;
	c->sorted = 0;
	return 0;
}

static int add_switch(struct ptc_sideband *sb, const struct ptc_perf_record *rec,
		      uint32_t pid, uint32_t tid, enum ptc_sb_source source)
{
	if (!(rec->sid.valid & PTC_SID_CPU))
		return 0;
	return push_switch(sb, rec->sid.cpu, (rec->sid.valid & PTC_SID_TIME) ? rec->sid.time : 0, sb->seq,
			   pid, tid, source, 1, 0);
}

/* A SWITCH_CPU_WIDE record: kept as read, its entry in the CPU's timeline
 * made by ptc_sb_finish() once its neighbours have vouched for it. */
static int keep_cpu_wide_switch(struct ptc_sideband *sb, const struct ptc_perf_record *rec,
				const struct ptc_perf_switch *sw)
{
	struct sb_cpu *c;
	struct sb_swrec *r;

	if (!(rec->sid.valid & PTC_SID_CPU))
		return 0;
	c = cpu_get(sb, rec->sid.cpu);
	if (!c || grow((void **)&c->sw, &c->capsw, c->nsw + 1, sizeof(*r)))
		return -ptc_err_nomem;
	r = &c->sw[c->nsw++];
	memset(r, 0, sizeof(*r));
	r->time = (rec->sid.valid & PTC_SID_TIME) ? rec->sid.time : 0;
	r->seq = sb->seq;
	r->offset = rec->offset;
	r->size = rec->size;
	r->out = sw->out != 0;
	r->np_pid = sw->next_prev_pid;
	r->np_tid = sw->next_prev_tid;
	r->have_sid = (rec->sid.valid & PTC_SID_TID) != 0;
	r->pid = rec->sid.pid;
	r->tid = rec->sid.tid;
	c->sources |= PTC_SB_SRC_SWITCH;
	c->sorted = 0;
	return 0;
}

int ptc_sb_add_sched_switch(struct ptc_sideband *sb, uint32_t cpu, uint64_t time,
			    uint32_t next_tid)
{
	sb->seq++;
	return push_switch(sb, cpu, time, sb->seq, next_tid, next_tid, PTC_SB_SRC_SCHED_SWITCH, 0, 0);
}

static uint64_t rec_time(const struct ptc_perf_record *rec)
{
	return (rec->sid.valid & PTC_SID_TIME) ? rec->sid.time : 0;
}

static void lookup_build_id(const struct ptc_sideband *sb, struct ptc_sb_map *m);

int ptc_sb_add_build_ids(struct ptc_sideband *sb, const struct ptc_perf_info *info)
{
	size_t i;
	struct sb_buildid *n;

	if (!info->nr_build_ids || info->nr_build_ids == sb->nr_bids)
		return 0;
	/* pipe mode delivers them as records: take the list anew */
	n = calloc(info->nr_build_ids, sizeof(*n));
	if (!n)
		return -ptc_err_nomem;
	free(sb->bids);
	sb->bids = n;
	sb->nr_bids = 0;
	for (i = 0; i < info->nr_build_ids; i++) {
		const struct ptc_perf_build_id *b = &info->build_ids[i];
		struct sb_buildid *d = &sb->bids[sb->nr_bids];

		if (!b->filename)
			continue;
		d->filename = intern(sb, b->filename);
		if (!d->filename)
			return -ptc_err_nomem;
		d->pid = b->pid;
		d->size = b->size > 20 ? 20 : b->size;
		memcpy(d->id, b->build_id, d->size);
		sb->nr_bids++;
	}
	for (i = 0; i < sb->nr_maps; i++)
		if (!sb->maps[i].build_id_size)
			lookup_build_id(sb, &sb->maps[i]);
	return 0;
}

static void lookup_build_id(const struct ptc_sideband *sb, struct ptc_sb_map *m)
{
	size_t i;
	const struct sb_buildid *any = NULL;

	for (i = 0; i < sb->nr_bids; i++) {
		const struct sb_buildid *b = &sb->bids[i];
		if (strcmp(b->filename, m->filename))
			continue;
		if (b->pid == (int32_t)m->pid) {
			any = b;
			break;
		}
		if (!any)
			any = b;
	}
	if (any) {
		memcpy(m->build_id, any->id, any->size);
		m->build_id_size = any->size;
	}
}

static int on_mmap(struct ptc_sideband *sb, const struct ptc_perf_record *rec)
{
	struct ptc_perf_mmap mm;
	struct ptc_sb_map *m;
	int err;

	err = ptc_perf_parse_mmap(rec, &mm);
	if (err < 0)
		return err;
	if (!mm.executable || !mm.len)
		return 0;
	if (rec->type == PERF_RECORD_MMAP2 && !(mm.prot & 4 /* PROT_EXEC */) && mm.prot)
		return 0;
	if (grow((void **)&sb->maps, &sb->cap_maps, sb->nr_maps + 1, sizeof(*m)))
		return -ptc_err_nomem;
	m = &sb->maps[sb->nr_maps];
	memset(m, 0, sizeof(*m));
	m->start = mm.start;
	m->end = mm.start + mm.len;
	m->pgoff = mm.pgoff;
	m->pid = mm.pid;
	m->t_start = rec_time(rec);
	m->t_end = PTC_SB_TIME_MAX;
	m->filename = intern(sb, mm.filename ? mm.filename : "");
	if (!m->filename)
		return -ptc_err_nomem;
	if (mm.has_build_id && mm.build_id_size) {
		m->build_id_size = mm.build_id_size > 20 ? 20 : mm.build_id_size;
		memcpy(m->build_id, mm.build_id, m->build_id_size);
	} else {
		lookup_build_id(sb, m);
	}
	/* A new mapping replaces what it overlaps in that process. */
	{
		size_t i;
		for (i = 0; i < sb->nr_maps; i++) {
			struct ptc_sb_map *o = &sb->maps[i];
			if (o->pid == m->pid && o->t_end == PTC_SB_TIME_MAX &&
			    o->start < m->end && m->start < o->end)
				o->t_end = m->t_start;
		}
	}
	sb->nr_maps++;
	return 0;
}

static int on_comm(struct ptc_sideband *sb, const struct ptc_perf_record *rec)
{
	struct ptc_perf_comm c;
	struct ptc_sb_thread *t;
	uint64_t time = rec_time(rec);
	int err;

	err = ptc_perf_parse_comm(rec, &c);
	if (err < 0)
		return err;
	t = thread_get(sb, c.pid, c.tid, time);
	if (!t)
		return -ptc_err_nomem;
	t->pid = c.pid;
	t->comm = intern(sb, c.comm ? c.comm : "");
	if (!t->comm)
		return -ptc_err_nomem;
	if (c.exec) {
		/* exec replaces the address space: every mapping of the
		 * process ends here. */
		size_t i;
		for (i = 0; i < sb->nr_maps; i++)
			if (sb->maps[i].pid == c.pid && sb->maps[i].t_end == PTC_SB_TIME_MAX)
				sb->maps[i].t_end = time;
	}
	return 0;
}

static int on_fork(struct ptc_sideband *sb, const struct ptc_perf_record *rec)
{
	struct ptc_perf_task f;
	struct ptc_sb_thread *t, *parent;
	size_t i, n;
	int err;

	err = ptc_perf_parse_task(rec, &f);
	if (err < 0)
		return err;
	parent = thread_find(sb, f.ptid);
	t = thread_get(sb, f.pid, f.tid, f.time);
	if (!t)
		return -ptc_err_nomem;
	t->pid = f.pid;
	t->ptid = f.ptid;
	t->t_start = f.time;
	t->t_exit = PTC_SB_TIME_MAX;
	parent = thread_find(sb, f.ptid);	/* thread_get may have moved it */
	if (parent && !t->comm)
		t->comm = parent->comm;
	if (f.pid == f.ppid)
		return 0;	/* a new thread shares its process's mappings */
	/* A new process starts with a copy of its parent's address space. */
	n = sb->nr_maps;
	for (i = 0; i < n; i++) {
		struct ptc_sb_map *m;
		if (sb->maps[i].pid != f.ppid || sb->maps[i].t_end <= f.time ||
		    sb->maps[i].t_start > f.time)
			continue;
		if (grow((void **)&sb->maps, &sb->cap_maps, sb->nr_maps + 1, sizeof(*m)))
			return -ptc_err_nomem;
		m = &sb->maps[sb->nr_maps++];
		*m = sb->maps[i];
		m->pid = f.pid;
		m->t_start = f.time;
		m->t_end = PTC_SB_TIME_MAX;
		m->user = NULL;
		m->user_state = 0;
	}
	return 0;
}

static int on_exit_rec(struct ptc_sideband *sb, const struct ptc_perf_record *rec)
{
	struct ptc_perf_task f;
	struct ptc_sb_thread *t;
	int err;

	err = ptc_perf_parse_task(rec, &f);
	if (err < 0)
		return err;
	t = thread_find(sb, f.tid);
	if (t)
		t->t_exit = f.time;
	return 0;
}

/* A LOST record: the records lost were written to the buffer of its CPU
 * (or thread) after the previous record that came out of it and before the
 * LOST record itself. */
static int add_lost_range(struct ptc_sideband *sb, const struct ptc_perf_record *rec, uint64_t count)
{
	struct ptc_sb_lost_range *l;
	int have_cpu = (rec->sid.valid & PTC_SID_CPU) && rec->sid.cpu < 65536;

	if (grow((void **)&sb->lranges, &sb->cap_lranges, sb->nr_lranges + 1, sizeof(*l)))
		return -ptc_err_nomem;
	l = &sb->lranges[sb->nr_lranges++];
	l->cpu = have_cpu ? (int)rec->sid.cpu : -1;
	l->tid = (rec->sid.valid & PTC_SID_TID) ? (int64_t)rec->sid.tid : -1;
	l->count = count;
	l->offset = rec->offset;
	l->damaged = 0;
	if (rec->sid.valid & PTC_SID_TIME) {
		struct sb_cpu *c = have_cpu && rec->sid.cpu < sb->nr_cpus ? &sb->cpus[rec->sid.cpu] : NULL;
		l->t_end = rec->sid.time;
		l->t_start = c && c->last_time <= rec->sid.time ? c->last_time : 0;
	} else {
		/* no time: the loss could be anywhere */
		l->t_start = 0;
		l->t_end = PTC_SB_TIME_MAX;
	}
	return 0;
}

int ptc_sb_add_damage(struct ptc_sideband *sb, uint64_t offset, uint64_t bytes, uint64_t t_start,
		      uint64_t t_end)
{
	struct ptc_sb_lost_range *l;

	if (grow((void **)&sb->lranges, &sb->cap_lranges, sb->nr_lranges + 1, sizeof(*l)))
		return -ptc_err_nomem;
	l = &sb->lranges[sb->nr_lranges++];
	memset(l, 0, sizeof(*l));
	l->cpu = -1;
	l->tid = -1;
	l->offset = offset;
	l->damaged = bytes ? bytes : 1;
	l->t_start = t_start;
	l->t_end = t_end;
	return 0;
}

int ptc_sb_add_record(struct ptc_sideband *sb, const struct ptc_perf_record *rec)
{
	int err;

	sb->seq++;
	if (rec->type != PERF_RECORD_LOST && (rec->sid.valid & (PTC_SID_CPU | PTC_SID_TIME)) ==
						     (PTC_SID_CPU | PTC_SID_TIME)) {
		struct sb_cpu *c = cpu_get(sb, rec->sid.cpu);
		if (c && rec->sid.time > c->last_time)
			c->last_time = rec->sid.time;
	}
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return on_mmap(sb, rec);
	case PERF_RECORD_COMM:
		return on_comm(sb, rec);
	case PERF_RECORD_FORK:
		return on_fork(sb, rec);
	case PERF_RECORD_EXIT:
		return on_exit_rec(sb, rec);
	case PERF_RECORD_ITRACE_START: {
		struct ptc_perf_itrace_start it;
		err = ptc_perf_parse_itrace_start(rec, &it);
		if (err < 0)
			return err;
		if (!thread_get(sb, it.pid, it.tid, rec_time(rec)))
			return -ptc_err_nomem;
		return add_switch(sb, rec, it.pid, it.tid, PTC_SB_SRC_ITRACE_START);
	}
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		struct ptc_perf_switch sw;
		err = ptc_perf_parse_switch(rec, &sw);
		if (err < 0)
			return err;
		if (rec->type == PERF_RECORD_SWITCH_CPU_WIDE)
			return keep_cpu_wide_switch(sb, rec, &sw);
		if (!sw.out && (rec->sid.valid & PTC_SID_TID))
			return add_switch(sb, rec, rec->sid.pid, rec->sid.tid, PTC_SB_SRC_SWITCH);
		/* a switch-out says the CPU's buffer has records up to here */
		return 0;
	}
	case PERF_RECORD_AUX: {
		struct ptc_perf_aux a;
		struct ptc_sb_aux *d;
		err = ptc_perf_parse_aux(rec, &a);
		if (err < 0)
			return err;
		if (grow((void **)&sb->aux, &sb->cap_aux, sb->nr_aux + 1, sizeof(*d)))
			return -ptc_err_nomem;
		d = &sb->aux[sb->nr_aux++];
		d->aux_offset = a.aux_offset;
		d->aux_size = a.aux_size;
		d->flags = a.flags;
		d->time = rec_time(rec);
		d->cpu = (rec->sid.valid & PTC_SID_CPU) ? (int)rec->sid.cpu : -1;
		d->tid = (rec->sid.valid & PTC_SID_TID) ? rec->sid.tid : 0;
		d->have_id = (rec->sid.valid & PTC_SID_ID) != 0;
		d->id = rec->sid.id;
		return 0;
	}
	case PERF_RECORD_LOST: {
		struct ptc_perf_lost l;
		err = ptc_perf_parse_lost(rec, &l);
		if (err < 0)
			return err;
		sb->lost += l.lost;
		sb->lost_records++;
		return add_lost_range(sb, rec, l.lost);
	}
	default:
		return 0;
	}
}

/* Time order, record order between equal times. */
static int cmp_time_seq(uint64_t xt, uint64_t xs, uint64_t yt, uint64_t ys)
{
	if (xt != yt)
		return xt < yt ? -1 : 1;
	return xs < ys ? -1 : xs > ys;
}

static int cmp_switch(const void *a, const void *b)
{
	const struct sb_switch *x = a, *y = b;

	return cmp_time_seq(x->time, x->seq, y->time, y->seq);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Switch records win over sched_switch samples: when a CPU has both (perf
 * recorded both), the samples are dropped; sched_switch entries get the
 * process of their thread from COMM/FORK (the tracepoint names threads
 * only).  Then the distinct threads are counted. */
static void finish_cpu(struct ptc_sideband *sb, struct sb_cpu *c)
{
	size_t i, k = 0;
	uint32_t *tids;

	c->used = 0;
	for (i = 0; i < c->n; i++) {
		struct sb_switch *s = &c->v[i];
		if (s->source == PTC_SB_SRC_SCHED_SWITCH && (c->sources & PTC_SB_SRC_SWITCH))
			continue;
		if (!s->pid_known) {
			const struct ptc_sb_thread *t = thread_find(sb, s->tid);
			s->pid = t ? t->pid : s->tid;
			s->pid_known = 1;
		}
		c->used |= s->source;
		c->v[k++] = *s;
	}
	c->n = k;
	if (c->n)
		qsort(c->v, c->n, sizeof(struct sb_switch), cmp_switch);
	c->sorted = 1;
	c->nthreads = 0;
	tids = c->n ? malloc(c->n * sizeof(*tids)) : NULL;
	if (!tids)
		return;
	for (i = 0, k = 0; i < c->n; i++)
		if (c->v[i].tid && !c->v[i].unknown)
			tids[k++] = c->v[i].tid;
	qsort(tids, k, sizeof(*tids), cmp_u32);
	for (i = 0; i < k; i++)
		if (!i || tids[i] != tids[i - 1])
			c->nthreads++;
	free(tids);
}

/* ---- SWITCH_CPU_WIDE records checked against each other ---- */

/* One field of a switch record naming the thread that ran on its CPU in
 * one stretch (seg) between two switches. */
struct sb_witness {
	size_t seg;
	size_t rec;		/* index in the CPU's sorted records */
	int np;			/* the next_prev field, else sample_id's */
	int suspect;		/* a thread nobody else names: no vote */
};

static int cmp_swrec(const void *a, const void *b)
{
	const struct sb_swrec *x = a, *y = b;

	return cmp_time_seq(x->time, x->seq, y->time, y->seq);
}

static int cmp_witness(const void *a, const void *b)
{
	const struct sb_witness *x = a, *y = b;

	if (x->seg != y->seg)
		return x->seg < y->seg ? -1 : 1;
	return x->rec < y->rec ? -1 : x->rec > y->rec;
}

static struct sb_witness witness(size_t seg, size_t rec, int np)
{
	struct sb_witness w = { seg, rec, np, 0 };

	return w;
}

static void witness_says(const struct sb_cpu *c, const struct sb_witness *w, uint32_t *pid, uint32_t *tid)
{
	const struct sb_swrec *r = &c->sw[w->rec];

	*pid = w->np ? r->np_pid : r->pid;
	*tid = w->np ? r->np_tid : r->tid;
}

/* Whether the field names the thread after its record's switch (the one
 * switched in, whose timeline entry the record makes). */
static int witness_after(const struct sb_cpu *c, const struct sb_witness *w)
{
	return c->sw[w->rec].out ? w->np : !w->np;
}

/* The fields of a CPU's records (sorted), each given the stretch it names:
 * a switch-out ends a stretch (its sample_id) and starts the next
 * (next_prev); the switch-in after it names the same two, the other way
 * round.  A switch-in with no switch-out before it (lost, or the CPU's
 * first record) ends and starts stretches itself.  Returns how many. */
static size_t place_witnesses(const struct sb_cpu *c, struct sb_witness *w)
{
	size_t i, n = 0, s = 0;
	int after_out = 0;

	for (i = 0; i < c->nsw; i++) {
		const struct sb_swrec *r = &c->sw[i];
		size_t before = s, after = s + 1;

		if (!r->out && after_out) {
			before = s - 1;
			after = s;
		} else {
			s++;
		}
		after_out = r->out;
		if (r->out) {
			if (r->have_sid)
				w[n++] = witness(before, i, 0);
			w[n++] = witness(after, i, 1);
		} else {
			w[n++] = witness(before, i, 1);
			if (r->have_sid)
				w[n++] = witness(after, i, 0);
		}
	}
	return n;
}

/* Every thread id named by a field of a switch record, sorted: a count of
 * how often each is named. */
static uint32_t *switch_tids(const struct ptc_sideband *sb, size_t *count)
{
	size_t i, k, n = 0;
	uint32_t *v;

	for (i = 0; i < sb->nr_cpus; i++)
		n += 2 * sb->cpus[i].nsw;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	n = 0;
	for (i = 0; i < sb->nr_cpus; i++)
		for (k = 0; k < sb->cpus[i].nsw; k++) {
			const struct sb_swrec *r = &sb->cpus[i].sw[k];
			v[n++] = r->np_tid;
			if (r->have_sid)
				v[n++] = r->tid;
		}
	qsort(v, n, sizeof(*v), cmp_u32);
	*count = n;
	return v;
}

/* A thread id no other field of any switch record names and no COMM, FORK
 * or ITRACE_START announced: perf announces every thread it traces and
 * every real switch is named by two records, so it is a damaged field.
 * (The idle task, 0, is never announced.) */
static int suspect_tid(const struct ptc_sideband *sb, const uint32_t *tids, size_t n, uint32_t tid)
{
	size_t lo = 0, hi = n;

	if (!tid || thread_find(sb, tid))
		return 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + 1 >= n || tids[lo + 1] != tid;
}

/* Whether a stretch's witnesses all say the same, none of them suspect. */
static int stretch_agrees(const struct sb_cpu *c, const struct sb_witness *w, size_t k)
{
	uint32_t pid0, tid0, pid, tid;
	size_t i;

	witness_says(c, &w[0], &pid0, &tid0);
	for (i = 0; i < k; i++) {
		witness_says(c, &w[i], &pid, &tid);
		if (w[i].suspect || pid != pid0 || tid != tid0)
			return 0;
	}
	return 1;
}

/* The value most votes give, when at least two give it and no other value
 * gets as many: 0 and *best, else -1. */
static int majority(const uint32_t *votes, size_t n, uint32_t *best)
{
	size_t i, j, top = 0, tie = 0;

	for (i = 0; i < n; i++) {
		size_t m = 0;
		for (j = 0; j < n; j++)
			m += votes[j] == votes[i];
		if (m > top) {
			top = m;
			*best = votes[i];
			tie = 0;
		} else if (m == top && votes[i] != *best) {
			tie = 1;
		}
	}
	return top >= 2 && !tie ? 0 : -1;
}

/* The thread of a stretch by majority: the thread id by the fields' votes
 * (the suspect ones have none), then its process by the votes of the
 * fields naming that thread and of its COMM/FORK. */
static int stretch_vote(const struct ptc_sideband *sb, const struct sb_cpu *c, const struct sb_witness *w,
			size_t k, uint32_t *pid, uint32_t *tid)
{
	uint32_t votes[16], p, t;
	const struct ptc_sb_thread *th;
	size_t i, n = 0;

	for (i = 0; i < k && n < 16; i++) {
		witness_says(c, &w[i], &p, &t);
		if (!w[i].suspect)
			votes[n++] = t;
	}
	if (majority(votes, n, tid) < 0)
		return -1;
	n = 0;
	for (i = 0; i < k && n < 15; i++) {
		witness_says(c, &w[i], &p, &t);
		if (!w[i].suspect && t == *tid)
			votes[n++] = p;
	}
	th = thread_find(sb, *tid);
	if (th)
		votes[n++] = th->pid;
	return majority(votes, n, pid);
}

/* The perf times a stretch spans: from its first switch in to its last
 * switch out (0 and PTC_SB_TIME_MAX where it has none). */
static void stretch_span(const struct sb_cpu *c, const struct sb_witness *w, size_t k, uint64_t *t0,
			 uint64_t *t1)
{
	size_t i;

	*t0 = PTC_SB_TIME_MAX;
	*t1 = 0;
	for (i = 0; i < k; i++) {
		uint64_t t = c->sw[w[i].rec].time;
		if (witness_after(c, &w[i]) && t < *t0)
			*t0 = t;
		if (!witness_after(c, &w[i]) && t > *t1)
			*t1 = t;
	}
	if (*t0 == PTC_SB_TIME_MAX)
		*t0 = 0;
	if (!*t1)
		*t1 = PTC_SB_TIME_MAX;
}

static int add_switch_damage(struct ptc_sideband *sb, const struct sb_cpu *c, int cpu,
			     const struct sb_witness *w, uint32_t pid, uint32_t tid, int repaired,
			     uint64_t t0, uint64_t t1)
{
	struct ptc_sb_switch_damage *d;
	const struct sb_swrec *r = &c->sw[w->rec];

	if (grow((void **)&sb->swdmg, &sb->cap_swdmg, sb->nr_swdmg + 1, sizeof(*d)))
		return -ptc_err_nomem;
	d = &sb->swdmg[sb->nr_swdmg++];
	memset(d, 0, sizeof(*d));
	d->offset = r->offset;
	d->time = r->time;
	d->cpu = cpu;
	d->next_prev = w->np;
	witness_says(c, w, &d->pid, &d->tid);
	d->pid_taken = pid;
	d->tid_taken = tid;
	d->repaired = repaired;
	d->t_start = t0;
	d->t_end = t1;
	return 0;
}

/* Outvoted fields take the majority's thread. */
static int repair_stretch(struct ptc_sideband *sb, struct sb_cpu *c, int cpu, const struct sb_witness *w,
			  size_t k, uint32_t pid, uint32_t tid, uint64_t t0, uint64_t t1)
{
	size_t i;

	for (i = 0; i < k; i++) {
		struct sb_swrec *r = &c->sw[w[i].rec];
		uint32_t p, t;
		int err;

		witness_says(c, &w[i], &p, &t);
		if (p == pid && t == tid)
			continue;
		err = add_switch_damage(sb, c, cpu, &w[i], pid, tid, 1, t0, t1);
		if (err < 0)
			return err;
		if (w[i].np) {
			r->np_pid = pid;
			r->np_tid = tid;
		} else {
			r->pid = pid;
			r->tid = tid;
		}
	}
	return 0;
}

static int add_cand(struct ptc_sideband *sb, uint32_t first, uint32_t pid, uint32_t tid)
{
	size_t i;

	for (i = first; i < sb->nr_cands; i++)
		if (sb->cands[i].tid == tid)
			return 0;
	if (grow((void **)&sb->cands, &sb->cap_cands, sb->nr_cands + 1, sizeof(*sb->cands)))
		return -ptc_err_nomem;
	sb->cands[sb->nr_cands].pid = pid;
	sb->cands[sb->nr_cands++].tid = tid;
	return 0;
}

/* The threads an unknown stretch may be, who get a records-lost gap there:
 * those its fields name (the suspect ones aside), else the announced
 * threads of the processes its fields name.  Returns the first index in
 * sb->cands; the count is sb->nr_cands - first. */
static int stretch_candidates(struct ptc_sideband *sb, const struct sb_cpu *c, const struct sb_witness *w,
			      size_t k, uint32_t *first)
{
	size_t i, j;
	uint32_t p, t;
	int err = 0;

	*first = (uint32_t)sb->nr_cands;
	for (i = 0; i < k && err >= 0; i++) {
		witness_says(c, &w[i], &p, &t);
		if (!w[i].suspect && t)
			err = add_cand(sb, *first, p, t);
	}
	for (i = 0; i < k && err >= 0 && sb->nr_cands == *first; i++) {
		witness_says(c, &w[i], &p, &t);
		for (j = 0; j < sb->nr_threads && err >= 0; j++)
			if (sb->threads[j].pid == p && sb->threads[j].tid)
				err = add_cand(sb, *first, p, sb->threads[j].tid);
	}
	return err;
}

/* No majority: the fields that are suspect or contradicted are damage, the
 * stretch's thread is unknown (its entries give none) and the stretch a
 * lost range of damaged records on the CPU: whoever runs there next gets a
 * records-lost gap rather than a thread that may not be its. */
static int lose_stretch(struct ptc_sideband *sb, struct sb_cpu *c, int cpu, const struct sb_witness *w,
			size_t k, uint64_t t0, uint64_t t1)
{
	const struct sb_witness *first = NULL;
	uint32_t cand;
	size_t i;
	int err = stretch_candidates(sb, c, w, k, &cand);

	if (err < 0)
		return err;
	for (i = 0; i < k; i++) {
		size_t j;
		uint32_t p, t, pj, tj;
		int damaged = w[i].suspect;

		if (witness_after(c, &w[i])) {
			c->sw[w[i].rec].unknown = 1;
			c->sw[w[i].rec].cand = cand;
			c->sw[w[i].rec].ncand = (uint32_t)(sb->nr_cands - cand);
		}
		witness_says(c, &w[i], &p, &t);
		for (j = 0; j < k; j++) {
			witness_says(c, &w[j], &pj, &tj);
			damaged |= !w[j].suspect && (pj != p || tj != t);
		}
		if (!damaged)
			continue;
		err = add_switch_damage(sb, c, cpu, &w[i], 0, 0, 0, t0, t1);
		if (err < 0)
			return err;
		if (!first)
			first = &w[i];
	}
	if (!first)
		return 0;
	err = ptc_sb_add_damage(sb, c->sw[first->rec].offset, c->sw[first->rec].size, t0, t1);
	if (err < 0)
		return err;
	sb->lranges[sb->nr_lranges - 1].cpu = cpu;
	return 0;
}

static int check_stretch(struct ptc_sideband *sb, struct sb_cpu *c, int cpu, const struct sb_witness *w,
			 size_t k)
{
	uint32_t pid, tid;
	uint64_t t0, t1;

	if (stretch_agrees(c, w, k))
		return 0;
	stretch_span(c, w, k, &t0, &t1);
	if (stretch_vote(sb, c, w, k, &pid, &tid) == 0)
		return repair_stretch(sb, c, cpu, w, k, pid, tid, t0, t1);
	return lose_stretch(sb, c, cpu, w, k, t0, t1);
}

/* A CPU's switch records in time order, checked stretch by stretch, then
 * made entries of its timeline: a switch-out's thread switched in
 * (next_prev), a switch-in's own (sample_id). */
static int check_switches(struct ptc_sideband *sb, struct sb_cpu *c, int cpu, const uint32_t *tids,
			  size_t ntids)
{
	struct sb_witness *w;
	size_t n, i, j;
	int err = 0;

	qsort(c->sw, c->nsw, sizeof(*c->sw), cmp_swrec);
	w = malloc(2 * c->nsw * sizeof(*w));
	if (!w)
		return -ptc_err_nomem;
	n = place_witnesses(c, w);
	for (i = 0; i < n; i++) {
		uint32_t p, t;
		witness_says(c, &w[i], &p, &t);
		w[i].suspect = suspect_tid(sb, tids, ntids, t);
	}
	qsort(w, n, sizeof(*w), cmp_witness);
	for (i = 0; i < n && err >= 0; i = j) {
		for (j = i + 1; j < n && w[j].seg == w[i].seg; j++)
			;
		err = check_stretch(sb, c, cpu, w + i, j - i);
	}
	free(w);
	for (i = 0; i < c->nsw && err >= 0; i++) {
		const struct sb_swrec *r = &c->sw[i];
		if (r->out)
			err = push_entry(sb, (uint32_t)cpu, r->time, r->seq, r->np_pid, r->np_tid,
					 PTC_SB_SRC_SWITCH, 1, r->unknown, r->cand, r->ncand);
		else if (r->have_sid)
			err = push_entry(sb, (uint32_t)cpu, r->time, r->seq, r->pid, r->tid,
					 PTC_SB_SRC_SWITCH, 1, r->unknown, r->cand, r->ncand);
	}
	free(c->sw);
	c->sw = NULL;
	c->nsw = c->capsw = 0;
	return err;
}

/* Every CPU's SWITCH_CPU_WIDE records into its timeline, checked. */
static int check_all_switches(struct ptc_sideband *sb)
{
	uint32_t *tids;
	size_t i, n;
	int err = 0;

	for (i = 0; i < sb->nr_cpus && !sb->cpus[i].nsw; i++)
		;
	if (i == sb->nr_cpus)
		return 0;
	tids = switch_tids(sb, &n);
	if (!tids)
		return -ptc_err_nomem;
	for (i = 0; i < sb->nr_cpus && err >= 0; i++)
		if (sb->cpus[i].nsw)
			err = check_switches(sb, &sb->cpus[i], (int)i, tids, n);
	free(tids);
	return err;
}

const struct ptc_sb_switch_damage *ptc_sb_switch_damage(const struct ptc_sideband *sb, size_t *count)
{
	*count = sb->nr_swdmg;
	return sb->swdmg;
}

int ptc_sb_finish(struct ptc_sideband *sb)
{
	size_t i;
	int err = check_all_switches(sb);

	for (i = 0; i < sb->nr_cpus; i++)
		if (!sb->cpus[i].sorted)
			finish_cpu(sb, &sb->cpus[i]);
	return err;
}

struct ptc_sb_map *ptc_sb_find_map(struct ptc_sideband *sb, uint32_t pid,
				   uint64_t time, uint64_t ip)
{
	struct ptc_sb_map *before = NULL, *after = NULL;
	size_t i;

	for (i = sb->nr_maps; i > 0; i--) {
		struct ptc_sb_map *m = &sb->maps[i - 1];
		if (m->pid != pid || ip < m->start || ip >= m->end)
			continue;
		if (time == PTC_SB_TIME_MAX) {
			if (m->t_end == PTC_SB_TIME_MAX)
				return m;
			if (!before)
				before = m;
			continue;
		}
		if (m->t_start <= time && time < m->t_end)
			return m;
		/* The trace's time lags (it is the last timing packet's):
		 * a mapping made just after it is the likely one; else the
		 * newest that started before. */
		if (m->t_start > time) {
			if (!after || m->t_start < after->t_start)
				after = m;
		} else if (!before) {
			before = m;
		}
	}
	return after ? after : before;
}

uint64_t ptc_sb_next_map_change(const struct ptc_sideband *sb, uint32_t pid, uint64_t time)
{
	uint64_t next = PTC_SB_TIME_MAX;
	size_t i;

	/* ptc_sb_find_map() decides by which mappings began (t_start <= time)
	 * and which ended (t_end <= time): both sets stay as they are until
	 * the next t_start or t_end. */
	for (i = 0; i < sb->nr_maps; i++) {
		const struct ptc_sb_map *m = &sb->maps[i];

		if (m->pid != pid)
			continue;
		if (m->t_start > time && m->t_start < next)
			next = m->t_start;
		if (m->t_end > time && m->t_end < next)
			next = m->t_end;
	}
	return next;
}

struct ptc_sb_map *ptc_sb_maps(struct ptc_sideband *sb, size_t *count)
{
	*count = sb->nr_maps;
	return sb->maps;
}

/* The index of a CPU's first switch entry later than time (c->n: none). */
static size_t first_after(const struct sb_cpu *c, uint64_t time)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->v[mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int ptc_sb_thread_on_cpu(const struct ptc_sideband *sb, int cpu, uint64_t time,
			 uint32_t *pid, uint32_t *tid)
{
	const struct sb_cpu *c;
	size_t lo;

	if (cpu < 0 || (size_t)cpu >= sb->nr_cpus)
		return -ptc_err_not_found;
	c = &sb->cpus[cpu];
	if (!c->n)
		return -ptc_err_not_found;
	lo = first_after(c, time);	/* the entry before it is the one running */
	if (!time || lo == 0)
		lo = 1;
	if (c->v[lo - 1].unknown)
		return -ptc_err_not_found;	/* damaged records: see check_switches() */
	*pid = c->v[lo - 1].pid;
	*tid = c->v[lo - 1].tid;
	return 0;
}

size_t ptc_sb_unknown_on_cpu(const struct ptc_sideband *sb, int cpu, uint64_t time, uint32_t *pid,
			      uint32_t *tid, size_t max)
{
	const struct sb_switch *s;
	const struct sb_cpu *c;
	size_t lo, i;

	if (cpu < 0 || (size_t)cpu >= sb->nr_cpus || !sb->cpus[cpu].n)
		return 0;
	c = &sb->cpus[cpu];
	lo = first_after(c, time);
	s = &c->v[!time || lo == 0 ? 0 : lo - 1];
	if (!s->unknown)
		return 0;
	for (i = 0; i < s->ncand && i < max; i++) {
		pid[i] = sb->cands[s->cand + i].pid;
		tid[i] = sb->cands[s->cand + i].tid;
	}
	return i;
}

size_t ptc_sb_threads_between(const struct ptc_sideband *sb, int cpu, uint64_t t0, uint64_t t1,
			      void (*fn)(void *arg, uint32_t pid, uint32_t tid, uint64_t time), void *arg)
{
	const struct sb_cpu *c;
	size_t lo, n = 0;

	if (cpu < 0 || (size_t)cpu >= sb->nr_cpus)
		return 0;
	c = &sb->cpus[cpu];
	for (lo = first_after(c, t0); lo < c->n && c->v[lo].time <= t1; lo++) {
		if (c->v[lo].unknown)
			continue;
		fn(arg, c->v[lo].pid, c->v[lo].tid, c->v[lo].time);
		n++;
	}
	return n;
}

uint64_t ptc_sb_next_switch_in(const struct ptc_sideband *sb, int cpu, uint64_t t)
{
	const struct sb_cpu *c;
	size_t lo;

	if (cpu < 0 || (size_t)cpu >= sb->nr_cpus)
		return PTC_SB_TIME_MAX;
	c = &sb->cpus[cpu];
	for (lo = first_after(c, t); lo < c->n; lo++)
		if (!c->v[lo].unknown)
			return c->v[lo].time;
	return PTC_SB_TIME_MAX;
}

size_t ptc_sb_cpu_switches(const struct ptc_sideband *sb, int cpu)
{
	if (cpu < 0 || (size_t)cpu >= sb->nr_cpus)
		return 0;
	return sb->cpus[cpu].n;
}

size_t ptc_sb_cpu_threads(const struct ptc_sideband *sb, int cpu)
{
	if (cpu < 0 || (size_t)cpu >= sb->nr_cpus)
		return 0;
	return sb->cpus[cpu].nthreads;
}

unsigned ptc_sb_cpu_sources(const struct ptc_sideband *sb, int cpu, unsigned *seen)
{
	if (cpu < 0 || (size_t)cpu >= sb->nr_cpus) {
		if (seen)
			*seen = 0;
		return 0;
	}
	if (seen)
		*seen = sb->cpus[cpu].sources;
	return sb->cpus[cpu].used;
}

size_t ptc_sb_nr_cpus(const struct ptc_sideband *sb)
{
	return sb->nr_cpus;
}

const struct ptc_sb_lost_range *ptc_sb_lost_ranges(const struct ptc_sideband *sb, size_t *count)
{
	*count = sb->nr_lranges;
	return sb->lranges;
}

const struct ptc_sb_thread *ptc_sb_thread(const struct ptc_sideband *sb, uint32_t tid)
{
	return thread_find(sb, tid);
}

const struct ptc_sb_thread *ptc_sb_threads(const struct ptc_sideband *sb, size_t *count)
{
	*count = sb->nr_threads;
	return sb->threads;
}

const struct ptc_sb_aux *ptc_sb_aux_records(const struct ptc_sideband *sb, size_t *count)
{
	*count = sb->nr_aux;
	return sb->aux;
}

uint64_t ptc_sb_lost(const struct ptc_sideband *sb, uint64_t *nr_records)
{
	if (nr_records)
		*nr_records = sb->lost_records;
	return sb->lost;
}

const char *ptc_sb_source_name(unsigned sources)
{
	if (sources & PTC_SB_SRC_SWITCH)
		return "switch";
	if (sources & PTC_SB_SRC_SCHED_SWITCH)
		return "sched_switch";
	if (sources & PTC_SB_SRC_ITRACE_START)
		return "itrace_start";
	return "none";
}
