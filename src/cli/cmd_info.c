/* ptconv info: what a recording holds.
 *
 * One pass over the records collects the sideband facts (threads, mapped
 * images, AUX data per CPU and thread, losses, trace errors); then the
 * header facts and the collection are printed as text or as one JSON
 * object.  Memory grows only with distinct threads, images, CPUs, not with
 * the recording's length.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "decoders/arm_spe/spe_info.h"
#include "common/error.h"
#include "common/json.h"
#include "convert/pt_convert.h"
#include "images/locate.h"
#include "input/perf_reader.h"
#include "sideband/sideband.h"
#include "sideband/tracepoint.h"

#define MAX_THREADS	(1u << 20)
#define MAX_IMAGES	(1u << 16)
#define MAX_ERRORS_KEPT	32
#define MAX_PRIV	4096

/* ---- small maps ------------------------------------------------------ */

/* u32 key -> index of an entry: open addressing, doubling (load <= 1/2).
 * Entries live in arrays in arrival order and are sorted only for output,
 * so that a recording with a million threads stays linear. */
struct u32_index {
	uint32_t *keys, *vals;	/* vals: index + 1, 0 = empty */
	size_t cap, n;
};

static inline size_t u32_slot(uint32_t k, size_t mask)
{
	return (size_t)((k * 2654435761u) ^ (k >> 16)) & mask;
}

/* The index stored for key, or -1; with insert, add next_index when absent. */
static long u32_index_get(struct u32_index *x, uint32_t key, int insert, size_t next_index)
{
	size_t h;

	if (x->cap) {
		h = u32_slot(key, x->cap - 1);
		while (x->vals[h]) {
			if (x->keys[h] == key)
				return (long)x->vals[h] - 1;
			h = (h + 1) & (x->cap - 1);
		}
	}
	if (!insert)
		return -1;
	if (2 * (x->n + 1) > x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 64, i;
		uint32_t *nk = calloc(cap, sizeof(*nk)), *nv = calloc(cap, sizeof(*nv));
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -1;
		}
		for (i = 0; i < x->cap; i++) {
			if (!x->vals[i])
				continue;
			h = u32_slot(x->keys[i], cap - 1);
			while (nv[h])
				h = (h + 1) & (cap - 1);
			nk[h] = x->keys[i];
			nv[h] = x->vals[i];
		}
		free(x->keys);
		free(x->vals);
		x->keys = nk;
		x->vals = nv;
		x->cap = cap;
	}
	h = u32_slot(key, x->cap - 1);
	while (x->vals[h])
		h = (h + 1) & (x->cap - 1);
	x->keys[h] = key;
	x->vals[h] = (uint32_t)next_index + 1;
	x->n++;
	return (long)next_index;
}

static void u32_index_free(struct u32_index *x)
{
	free(x->keys);
	free(x->vals);
}

/* u32 key -> counters (keys are CPUs or thread ids). */
struct u32_stat {
	uint32_t key;
	uint64_t bytes, count;
};

struct u32_map {
	struct u32_stat *v;
	size_t n, cap;
	struct u32_index idx;
};

static struct u32_stat *u32_map_get(struct u32_map *m, uint32_t key)
{
	long i = u32_index_get(&m->idx, key, 0, 0);

	if (i >= 0)
		return &m->v[i];
	if (m->n >= MAX_THREADS)
		return NULL;
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct u32_stat *nv = realloc(m->v, cap * sizeof(*nv));
		if (!nv)
			return NULL;
		m->v = nv;
		m->cap = cap;
	}
	if (u32_index_get(&m->idx, key, 1, m->n) < 0)
		return NULL;
	memset(&m->v[m->n], 0, sizeof(*m->v));
	m->v[m->n].key = key;
	return &m->v[m->n++];
}

static int u32_stat_cmp(const void *a, const void *b)
{
	const struct u32_stat *x = a, *y = b;
	return (int32_t)x->key < (int32_t)y->key ? -1 : (int32_t)x->key > (int32_t)y->key;
}

struct thread {
	uint32_t tid, pid, ppid;
	int forked, exited, have_pid;
	char *comm;
};

struct thread_map {
	struct thread *v;
	size_t n, cap;
	uint64_t dropped;
	struct u32_index idx;
};

static struct thread *thread_get(struct thread_map *m, uint32_t tid)
{
	long i = u32_index_get(&m->idx, tid, 0, 0);

	if (i >= 0)
		return &m->v[i];
	if (m->n >= MAX_THREADS) {
		m->dropped++;
		return NULL;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct thread *nv = realloc(m->v, cap * sizeof(*nv));
		if (!nv)
			return NULL;
		m->v = nv;
		m->cap = cap;
	}
	if (u32_index_get(&m->idx, tid, 1, m->n) < 0)
		return NULL;
	memset(&m->v[m->n], 0, sizeof(*m->v));
	m->v[m->n].tid = tid;
	return &m->v[m->n++];
}

static int thread_cmp(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;
	if (x->pid != y->pid)
		return (int32_t)x->pid < (int32_t)y->pid ? -1 : 1;
	return (int32_t)x->tid < (int32_t)y->tid ? -1 : (int32_t)x->tid > (int32_t)y->tid;
}

/* Executable images, deduplicated by path and build-id (open hashing). */
struct image {
	char *path;
	uint8_t build_id[20];
	uint8_t build_id_size;
	int from_mmap2;		/* build-id came with the mapping */
	uint64_t maps;		/* MMAP/MMAP2 records naming it */
	uint32_t first_pid;
	int located;		/* enum ptc_locate_result or <0 */
	char *found_path;
};

struct image_set {
	struct image *v;
	size_t n, cap;
	uint32_t *slots;	/* index+1, 0 empty */
	size_t nslots;
	uint64_t dropped;
};

static uint64_t image_hash(const char *path, const uint8_t *id, size_t idlen)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (; *path; path++)
		h = (h ^ (uint8_t)*path) * 1099511628211ull;
	for (i = 0; i < idlen; i++)
		h = (h ^ id[i]) * 1099511628211ull;
	return h;
}

static int image_eq(const struct image *im, const char *path, const uint8_t *id, size_t idlen)
{
	return im->build_id_size == idlen && !memcmp(im->build_id, id, idlen) &&
	       !strcmp(im->path, path);
}

static int image_rehash(struct image_set *s, size_t nslots)
{
	uint32_t *ns = calloc(nslots, sizeof(*ns));
	size_t i;

	if (!ns)
		return -1;
	for (i = 0; i < s->n; i++) {
		size_t h = image_hash(s->v[i].path, s->v[i].build_id, s->v[i].build_id_size) &
			   (nslots - 1);
		while (ns[h])
			h = (h + 1) & (nslots - 1);
		ns[h] = (uint32_t)i + 1;
	}
	free(s->slots);
	s->slots = ns;
	s->nslots = nslots;
	return 0;
}

static struct image *image_get(struct image_set *s, const char *path, const uint8_t *id,
			       size_t idlen)
{
	static const uint8_t no_id[20];
	size_t h;
	struct image *im;

	if (!id)
		id = no_id;
	if (!s->nslots && image_rehash(s, 256) < 0)
		return NULL;
	h = image_hash(path, id, idlen) & (s->nslots - 1);
	while (s->slots[h]) {
		im = &s->v[s->slots[h] - 1];
		if (image_eq(im, path, id, idlen))
			return im;
		h = (h + 1) & (s->nslots - 1);
	}
	if (s->n >= MAX_IMAGES) {
		s->dropped++;
		return NULL;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct image *nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return NULL;
		s->v = nv;
		s->cap = cap;
	}
	im = &s->v[s->n];
	memset(im, 0, sizeof(*im));
	im->path = strdup(path);
	if (!im->path)
		return NULL;
	memcpy(im->build_id, id, idlen);
	im->build_id_size = (uint8_t)idlen;
	s->slots[h] = (uint32_t)++s->n;
	if (2 * s->n > s->nslots)
		image_rehash(s, 2 * s->nslots);
	return im;
}

/* ---- what one pass collects ----------------------------------------- */

struct aux_error {
	struct ptc_perf_auxtrace_error e;
	char msg[65];
	uint64_t offset;
};

struct info {
	const char *path;
	struct ptc_locate_options loc;
	struct ptc_perf_reader *r;
	int read_err;			/* <0 when reading stopped early */

	int have_auxinfo;
	uint32_t auxinfo_type;
	uint64_t *priv;
	size_t nr_priv;
	uint64_t nr_auxinfo;

	struct u32_map aux_cpu, aux_tid;
	uint64_t auxtrace_records;

	uint64_t aux_records, aux_bytes_reported;
	uint64_t aux_truncated, aux_overwrite, aux_partial, aux_collision;
	uint64_t lost_records, lost_events, lost_samples_records, lost_samples;
	uint64_t aux_errors;
	struct aux_error errors[MAX_ERRORS_KEPT];
	uint64_t bad_records;		/* records the body parsers rejected */
	uint64_t first_bad_offset;

	struct thread_map threads;
	struct image_set images;

	/* how a trace would be attributed to threads */
	struct ptc_sideband *sb;
	struct ptc_sched_switch_samples ss;
};

static void note_bad(struct info *in, const struct ptc_perf_record *rec)
{
	if (!in->bad_records++)
		in->first_bad_offset = rec->offset;
}

static void set_comm(struct thread *t, const char *comm)
{
	char *c = strdup(comm);

	if (c) {
		free(t->comm);
		t->comm = c;
	}
}

/* Switches for the attribution summary: the sideband model ptconv convert
 * uses, fed the same way (sched_switch samples count only on CPUs without
 * switch records). */
static void collect_switches(struct info *in, const struct ptc_perf_record *rec)
{
	struct ptc_sched_switch sw;

	/* only what attribution needs: info's memory must not follow the
	 * number of AUX or MMAP records */
	switch (rec->type) {
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		(void)ptc_sb_add_record(in->sb, rec);	/* malformed ones are counted by collect() */
		break;
	default:
		break;
	}
	if (rec->type == PERF_RECORD_SAMPLE &&
	    ptc_sched_switch_sample(&in->ss, in->r, rec, &sw) > 0 && (rec->sid.valid & PTC_SID_CPU))
		(void)ptc_sb_add_sched_switch(in->sb, rec->sid.cpu,
					      (rec->sid.valid & PTC_SID_TIME) ? rec->sid.time : 0,
					      (uint32_t)sw.next_pid);
}

static int64_t have_sched_switch(const struct info *in)
{
	if (in->have_auxinfo && in->auxinfo_type == PTC_AUXTRACE_INTEL_PT &&
	    in->nr_priv > PTC_PT_HAVE_SCHED_SWITCH)
		return (int64_t)in->priv[PTC_PT_HAVE_SCHED_SWITCH];
	return -1;
}

static void print_attribution_text(const struct info *in, const struct ptc_perf_stats *st)
{
	size_t cpu;
	int64_t h = have_sched_switch(in);

	printf("thread switches: %" PRIu64 " SWITCH_CPU_WIDE, %" PRIu64 " SWITCH, %" PRIu64
	       " ITRACE_START records, %" PRIu64 " sched_switch samples",
	       st->records[PERF_RECORD_SWITCH_CPU_WIDE], st->records[PERF_RECORD_SWITCH],
	       st->records[PERF_RECORD_ITRACE_START], in->ss.samples);
	if (in->ss.bad)
		printf(" (%" PRIu64 " unreadable)", in->ss.bad);
	if (h >= 0)
		printf(", have_sched_switch %" PRId64, h);
	printf("\n");
	if (in->ss.err[0])
		printf("  sched_switch samples unusable: %s\n", in->ss.err);
	for (cpu = 0; cpu < ptc_sb_nr_cpus(in->sb); cpu++) {
		unsigned seen, used = ptc_sb_cpu_sources(in->sb, (int)cpu, &seen);
		if (!seen)
			continue;
		printf("  cpu %-4zu attributed by %s: %zu switches, %zu threads%s\n", cpu,
		       ptc_sb_source_name(used), ptc_sb_cpu_switches(in->sb, (int)cpu),
		       ptc_sb_cpu_threads(in->sb, (int)cpu),
		       (seen & PTC_SB_SRC_SCHED_SWITCH) && !(used & PTC_SB_SRC_SCHED_SWITCH) ?
		       " (sched_switch samples ignored: switch records present)" : "");
	}
}

static void print_attribution_json(const struct info *in, const struct ptc_perf_stats *st,
				   struct ptc_json *j)
{
	size_t cpu;
	int64_t h = have_sched_switch(in);

	ptc_json_begin_object(j, "attribution");
	if (h >= 0)
		ptc_json_i64(j, "have_sched_switch", h);
	else
		ptc_json_null(j, "have_sched_switch");
	ptc_json_u64(j, "switch_cpu_wide_records", st->records[PERF_RECORD_SWITCH_CPU_WIDE]);
	ptc_json_u64(j, "switch_records", st->records[PERF_RECORD_SWITCH]);
	ptc_json_u64(j, "itrace_start_records", st->records[PERF_RECORD_ITRACE_START]);
	ptc_json_u64(j, "sched_switch_samples", in->ss.samples);
	ptc_json_u64(j, "bad_sched_switch_samples", in->ss.bad);
	if (in->ss.err[0])
		ptc_json_string(j, "sched_switch_error", in->ss.err);
	else
		ptc_json_null(j, "sched_switch_error");
	ptc_json_begin_array(j, "cpus");
	for (cpu = 0; cpu < ptc_sb_nr_cpus(in->sb); cpu++) {
		unsigned seen, used = ptc_sb_cpu_sources(in->sb, (int)cpu, &seen);
		if (!seen)
			continue;
		ptc_json_begin_object(j, NULL);
		ptc_json_u64(j, "cpu", cpu);
		ptc_json_string(j, "source", ptc_sb_source_name(used));
		ptc_json_u64(j, "switches", ptc_sb_cpu_switches(in->sb, (int)cpu));
		ptc_json_u64(j, "threads", ptc_sb_cpu_threads(in->sb, (int)cpu));
		ptc_json_bool(j, "sched_switch_ignored", (seen & PTC_SB_SRC_SCHED_SWITCH) &&
							 !(used & PTC_SB_SRC_SCHED_SWITCH));
		ptc_json_end_object(j);
	}
	ptc_json_end_array(j);
	ptc_json_end_object(j);
}

static void collect(struct info *in, const struct ptc_perf_record *rec)
{
	switch (rec->type) {
	case PTC_REC_AUXTRACE_INFO: {
		struct ptc_perf_auxtrace_info ai;
		if (ptc_perf_parse_auxtrace_info(rec, &ai) < 0) {
			note_bad(in, rec);
			break;
		}
		if (!in->nr_auxinfo++) {
			in->have_auxinfo = 1;
			in->auxinfo_type = ai.type;
			in->nr_priv = ai.nr_priv < MAX_PRIV ? ai.nr_priv : MAX_PRIV;
			in->priv = malloc((in->nr_priv ? in->nr_priv : 1) * sizeof(uint64_t));
			if (in->priv)
				memcpy(in->priv, ai.priv, in->nr_priv * sizeof(uint64_t));
			else
				in->nr_priv = 0;
		}
		break;
	}
	case PTC_REC_AUXTRACE: {
		struct ptc_perf_auxtrace at;
		struct u32_stat *s;
		if (ptc_perf_parse_auxtrace(rec, &at) < 0) {
			note_bad(in, rec);
			break;
		}
		in->auxtrace_records++;
		if ((s = u32_map_get(&in->aux_cpu, at.cpu))) {
			s->bytes += at.size;
			s->count++;
		}
		if ((s = u32_map_get(&in->aux_tid, at.tid))) {
			s->bytes += at.size;
			s->count++;
		}
		break;
	}
	case PERF_RECORD_AUX: {
		struct ptc_perf_aux a;
		if (ptc_perf_parse_aux(rec, &a) < 0) {
			note_bad(in, rec);
			break;
		}
		in->aux_records++;
		in->aux_bytes_reported += a.aux_size;
		in->aux_truncated += !!(a.flags & PTC_AUX_FLAG_TRUNCATED);
		in->aux_overwrite += !!(a.flags & PTC_AUX_FLAG_OVERWRITE);
		in->aux_partial += !!(a.flags & PTC_AUX_FLAG_PARTIAL);
		in->aux_collision += !!(a.flags & PTC_AUX_FLAG_COLLISION);
		break;
	}
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		struct ptc_perf_lost l;
		if (ptc_perf_parse_lost(rec, &l) < 0) {
			note_bad(in, rec);
			break;
		}
		if (rec->type == PERF_RECORD_LOST) {
			in->lost_records++;
			in->lost_events += l.lost;
		} else {
			in->lost_samples_records++;
			in->lost_samples += l.lost;
		}
		break;
	}
	case PTC_REC_AUXTRACE_ERROR: {
		struct ptc_perf_auxtrace_error e;
		if (ptc_perf_parse_auxtrace_error(rec, &e) < 0) {
			note_bad(in, rec);
			break;
		}
		if (in->aux_errors < MAX_ERRORS_KEPT) {
			struct aux_error *k = &in->errors[in->aux_errors];
			k->e = e;
			snprintf(k->msg, sizeof(k->msg), "%s", e.msg);
			k->e.msg = k->msg;
			k->offset = rec->offset;
		}
		in->aux_errors++;
		break;
	}
	case PERF_RECORD_COMM: {
		struct ptc_perf_comm c;
		struct thread *t;
		if (ptc_perf_parse_comm(rec, &c) < 0) {
			note_bad(in, rec);
			break;
		}
		if ((t = thread_get(&in->threads, c.tid))) {
			t->pid = c.pid;
			t->have_pid = 1;
			set_comm(t, c.comm);
		}
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		struct ptc_perf_task k;
		struct thread *t;
		if (ptc_perf_parse_task(rec, &k) < 0) {
			note_bad(in, rec);
			break;
		}
		if (!(t = thread_get(&in->threads, k.tid)))
			break;
		t->pid = k.pid;
		t->have_pid = 1;
		if (rec->type == PERF_RECORD_FORK) {
			struct thread *parent;
			t->forked = 1;
			t->ppid = k.ppid;
			/* A new thread starts with its parent's name. */
			if (!t->comm && (parent = thread_get(&in->threads, k.ptid)) &&
			    parent->comm) {
				/* thread_get may have moved the array: look t up again */
				char *c = strdup(parent->comm);
				t = thread_get(&in->threads, k.tid);
				if (t && c && !t->comm)
					t->comm = c;
				else
					free(c);
			}
		} else {
			t->exited = 1;
		}
		break;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct ptc_perf_mmap m;
		struct image *im;
		if (ptc_perf_parse_mmap(rec, &m) < 0) {
			note_bad(in, rec);
			break;
		}
		if (!m.executable)
			break;
		if (rec->type == PERF_RECORD_MMAP2 && !(m.prot & 4))
			break;	/* MMAP2 carries the protection: only code matters */
		im = image_get(&in->images, m.filename, m.has_build_id ? m.build_id : NULL,
			       m.has_build_id ? m.build_id_size : 0);
		if (im) {
			if (!im->maps++)
				im->first_pid = m.pid;
			im->from_mmap2 = m.has_build_id;
		}
		break;
	}
	}
}

/* ---- classification --------------------------------------------------- */

static const char *auxtrace_type_name(uint32_t t)
{
	switch (t) {
	case PTC_AUXTRACE_INTEL_PT: return "intel_pt";
	case PTC_AUXTRACE_INTEL_BTS: return "intel_bts";
	case PTC_AUXTRACE_CS_ETM: return "cs_etm";
	case PTC_AUXTRACE_ARM_SPE: return "arm_spe";
	case PTC_AUXTRACE_S390_CPUMSF: return "s390_cpumsf";
	case PTC_AUXTRACE_HISI_PTT: return "hisi_ptt";
	}
	return "unknown";
}

/* The kind of an event: intel_pt, arm_spe, cs_etm or other. */
static const char *attr_kind(const struct info *in, const struct ptc_perf_attr *a)
{
	const struct ptc_perf_extra *x = ptc_perf_extra(in->r);
	size_t i;

	if (a->attr.type < PERF_TYPE_MAX)
		return "other";
	for (i = 0; i < x->nr_pmus; i++) {
		const char *n = x->pmus[i].name;
		if (x->pmus[i].type != a->attr.type || !n)
			continue;
		if (!strcmp(n, "intel_pt"))
			return "intel_pt";
		if (!strncmp(n, "arm_spe", 7))
			return "arm_spe";
		if (!strcmp(n, "cs_etm"))
			return "cs_etm";
		return "other";
	}
	/* No PMU_MAPPINGS (e.g. simpleperf): the AUXTRACE_INFO names the PMU type. */
	if (in->have_auxinfo && in->nr_priv) {
		uint64_t pmu = 0;
		switch (in->auxinfo_type) {
		case PTC_AUXTRACE_INTEL_PT:
			pmu = in->priv[PTC_PT_PMU_TYPE];
			break;
		case PTC_AUXTRACE_ARM_SPE:
			pmu = in->priv[0] == 2 && in->nr_priv > PTC_SPE_V2_PMU_TYPE ?
			      in->priv[PTC_SPE_V2_PMU_TYPE] : in->priv[PTC_SPE_V1_PMU_TYPE];
			break;
		case PTC_AUXTRACE_CS_ETM:
			/* {CS_HEADER_VERSION, CS_PMU_TYPE_CPUS = type << 32 | nr_cpu, ...} */
			if (in->nr_priv > 1)
				pmu = in->priv[1] >> 32;
			break;
		}
		if (pmu == a->attr.type) {
			const char *k = auxtrace_type_name(in->auxinfo_type);
			if (!strcmp(k, "intel_pt") || !strcmp(k, "arm_spe") || !strcmp(k, "cs_etm"))
				return k;
		}
	}
	return "other";
}

/* A name for an event the recording does not name (simpleperf files,
 * old pipe-mode files): perf's names for the generic events, else the
 * PMU's name from PMU_MAPPINGS or the kind, as in "intel_pt//". */
static const char *derived_name(const struct info *in, const struct ptc_perf_attr *a,
				char *buf, size_t len)
{
	static const char *const hw[] = { "cycles", "instructions", "cache-references",
		"cache-misses", "branches", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles" };
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults",
		"context-switches", "cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults", "dummy", "bpf-output" };
	const struct ptc_perf_extra *x = ptc_perf_extra(in->r);
	const char *kind;
	size_t i;

	if (a->attr.type == PERF_TYPE_HARDWARE && a->attr.config < sizeof(hw) / sizeof(hw[0]))
		return hw[a->attr.config];
	if (a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config < sizeof(sw) / sizeof(sw[0]))
		return sw[a->attr.config];
	for (i = 0; i < x->nr_pmus; i++)
		if (x->pmus[i].type == a->attr.type && x->pmus[i].name) {
			snprintf(buf, len, "%s//", x->pmus[i].name);
			return buf;
		}
	kind = attr_kind(in, a);
	if (strcmp(kind, "other"))
		snprintf(buf, len, "%s//", kind);
	else
		snprintf(buf, len, "type %u config 0x%llx", a->attr.type,
			 (unsigned long long)a->attr.config);
	return buf;
}

/* Intel PT config bits (the kernel's /sys/bus/event_source/devices/intel_pt/format). */
struct cfg_field {
	const char *name;
	int lo, hi;
};

static const struct cfg_field pt_fields[] = {
	{ "pt", 0, 0 }, { "cyc", 1, 1 }, { "pwr_evt", 4, 4 }, { "fup_on_ptw", 5, 5 },
	{ "mtc", 9, 9 }, { "tsc", 10, 10 }, { "noretcomp", 11, 11 }, { "ptw", 12, 12 },
	{ "branch", 13, 13 }, { "mtc_period", 14, 17 }, { "cyc_thresh", 19, 22 },
	{ "psb_period", 24, 27 }, { "event", 31, 31 }, { "notnt", 55, 55 },
};

static uint64_t cfg_value(uint64_t config, const struct cfg_field *f)
{
	int w = f->hi - f->lo + 1;
	return (config >> f->lo) & (w == 64 ? ~0ull : ((1ull << w) - 1));
}

static const char *const pt_priv_names[PTC_PT_INFO_NR] = {
	"pmu_type", "time_shift", "time_mult", "time_zero", "cap_user_time_zero", "tsc_bit",
	"noretcomp_bit", "have_sched_switch", "snapshot_mode", "per_cpu_mmaps", "mtc_bit",
	"mtc_freq_bits", "tsc_ctc_ratio_n", "tsc_ctc_ratio_d", "cyc_bit", "max_nonturbo_ratio",
	"filter_str_len",
};

/* The Intel PT address filter string, or NULL; stored into buf. */
static const char *pt_filter(const struct info *in, char *buf, size_t len)
{
	uint64_t flen;
	size_t avail;

	if (in->auxinfo_type != PTC_AUXTRACE_INTEL_PT || in->nr_priv <= PTC_PT_FILTER_STR_LEN)
		return NULL;
	flen = in->priv[PTC_PT_FILTER_STR_LEN];
	if (!flen)
		return NULL;
	avail = (in->nr_priv - PTC_PT_INFO_NR) * 8;
	if (flen > avail)
		flen = avail;
	if (flen >= len)
		flen = len - 1;
	memcpy(buf, (const char *)(in->priv + PTC_PT_INFO_NR), (size_t)flen);
	buf[flen] = 0;
	return buf;
}

static void locate_images(struct info *in)
{
	const struct ptc_perf_info *pi = ptc_perf_info(in->r);
	size_t i, j;

	for (i = 0; i < in->images.n; i++) {
		struct image *im = &in->images.v[i];
		char found[4096];
		if (!im->build_id_size) {
			/* The BUILD_ID feature / HEADER_BUILD_ID records name the file. */
			for (j = 0; j < pi->nr_build_ids; j++) {
				const char *bf = pi->build_ids[j].filename;
				if (bf && (!strcmp(bf, im->path) ||
					   (!strncmp(im->path, "[kernel.kallsyms]", 17) &&
					    !strcmp(bf, "[kernel.kallsyms]")))) {
					im->build_id_size = pi->build_ids[j].size;
					memcpy(im->build_id, pi->build_ids[j].build_id, 20);
					break;
				}
			}
		}
		im->located = ptc_locate_image(&in->loc, im->path, im->build_id, im->build_id_size,
					       found, sizeof(found));
		if (im->located == PTC_LOCATE_FOUND || im->located == PTC_LOCATE_MISMATCH)
			im->found_path = strdup(found);
	}
}

static const char *located_name(int k)
{
	switch (k) {
	case PTC_LOCATE_FOUND: return "found";
	case PTC_LOCATE_MISSING: return "missing";
	case PTC_LOCATE_MISMATCH: return "build-id mismatch";
	}
	return "error";
}

/* ---- text output ---------------------------------------------------- */

static void print_str(const char *label, const char *v)
{
	if (v)
		printf("%-16s %s\n", label, v);
}

static void print_text(struct info *in)
{
	struct ptc_perf_reader *r = in->r;
	const struct ptc_perf_info *pi = ptc_perf_info(r);
	const struct ptc_perf_stats *st = ptc_perf_stats(r);
	const struct ptc_perf_extra *x = ptc_perf_extra(r);
	char hex[41], filt[4096];
	size_t i;

	printf("%-16s %s (%s mode)\n", "file:", in->path, pi->pipe_mode ? "pipe" : "file");
	print_str("perf version:", pi->version);
	print_str("hostname:", pi->hostname);
	print_str("os release:", pi->osrelease);
	print_str("arch:", pi->arch);
	print_str("cpu:", pi->cpudesc);
	print_str("cpuid:", pi->cpuid);
	if (pi->nr_cpus_avail || pi->nr_cpus_online)
		printf("%-16s %u online, %u available\n", "cpus:", pi->nr_cpus_online,
		       pi->nr_cpus_avail);
	if (pi->total_mem_kb)
		printf("%-16s %" PRIu64 " kB\n", "total memory:", pi->total_mem_kb);
	print_str("command line:", pi->cmdline);
	if (pi->clockid_res_ns)
		printf("%-16s %" PRIu64 " ns\n", "clock res:", pi->clockid_res_ns);
	if (x->have_sample_time)
		printf("%-16s %" PRIu64 " .. %" PRIu64 " ns\n", "sample time:", x->sample_time_first,
		       x->sample_time_last);
	if (x->have_compressed)
		printf("%-16s %s level %u, ratio %u, mmap %u bytes\n", "compressed:",
		       x->comp_type == 1 ? "zstd" : "unknown", x->comp_level, x->comp_ratio,
		       x->comp_mmap_len);
	if (pi->tracing_data_size)
		printf("%-16s %zu bytes\n", "tracing data:", pi->tracing_data_size);
	if (pi->nr_build_ids)
		printf("%-16s %zu\n", "build-ids:", pi->nr_build_ids);
	if (x->nr_pmus) {
		printf("%-16s", "pmus:");
		for (i = 0; i < x->nr_pmus; i++)
			printf(" %s=%u", x->pmus[i].name, x->pmus[i].type);
		printf("\n");
	}
	for (i = 0; i < x->nr_core_siblings; i++)
		printf("%-16s %s\n", i ? "" : "core siblings:", x->core_siblings[i]);
	for (i = 0; i < x->nr_thread_siblings; i++)
		printf("%-16s %s\n", i ? "" : "thread siblings:", x->thread_siblings[i]);
	for (i = 0; i < x->nr_hybrid; i++)
		printf("%-16s %s: %s\n", i ? "" : "hybrid pmus:", x->hybrid_pmus[i],
		       i < x->nr_hybrid_cpus ? x->hybrid_cpus[i] : "?");

	printf("\nevents:\n");
	for (i = 0; i < ptc_perf_nr_attrs(r); i++) {
		const struct ptc_perf_attr *a = ptc_perf_attr(r, i);
		const char *kind = attr_kind(in, a);
		size_t f;
		char dn[128];
		printf("  [%zu] %s%s: kind %s, type %u, config 0x%" PRIx64 ", sample_type 0x%" PRIx64
		       ", %zu ids\n", i, a->name ? a->name : derived_name(in, a, dn, sizeof(dn)),
		       a->name ? "" : " (name derived)", kind, a->attr.type,
		       (uint64_t)a->attr.config, (uint64_t)a->attr.sample_type, a->nr_ids);
		if (!strcmp(kind, "intel_pt")) {
			printf("      config:");
			for (f = 0; f < sizeof(pt_fields) / sizeof(pt_fields[0]); f++)
				printf(" %s=%" PRIu64, pt_fields[f].name,
				       cfg_value(a->attr.config, &pt_fields[f]));
			printf("\n");
		}
		printf("      exclude_user=%u exclude_kernel=%u sample_id_all=%u\n",
		       a->attr.exclude_user, a->attr.exclude_kernel, a->attr.sample_id_all);
	}

	if (in->have_auxinfo) {
		printf("\nauxtrace info:   type %u (%s), %zu priv values\n", in->auxinfo_type,
		       auxtrace_type_name(in->auxinfo_type), in->nr_priv);
		if (in->auxinfo_type == PTC_AUXTRACE_INTEL_PT) {
			for (i = 0; i < in->nr_priv && i < PTC_PT_INFO_NR; i++)
				printf("  %-20s %" PRIu64 " (0x%" PRIx64 ")\n", pt_priv_names[i],
				       in->priv[i], in->priv[i]);
			if (pt_filter(in, filt, sizeof(filt)))
				printf("  %-20s %s\n", "filter", filt);
		}
		if (in->auxinfo_type == PTC_AUXTRACE_ARM_SPE) {
			const struct perf_event_attr *attrs[64];
			size_t n = 0;

			for (i = 0; i < ptc_perf_nr_attrs(r) && n < 64; i++)
				attrs[n++] = &ptc_perf_attr(r, i)->attr;
			fflush(stdout);
			ptc_spe_describe_info(stdout, in->priv, in->nr_priv, attrs, n);
		}
		if (in->nr_auxinfo > 1)
			printf("  (%" PRIu64 " AUXTRACE_INFO records; the first is shown)\n",
			       in->nr_auxinfo);
	}

	printf("\naux data:        %" PRIu64 " bytes in %" PRIu64 " AUXTRACE records\n",
	       st->aux_bytes, in->auxtrace_records);
	for (i = 0; i < in->aux_cpu.n; i++)
		printf("  cpu %-6d %12" PRIu64 " bytes in %" PRIu64 " records\n",
		       (int32_t)in->aux_cpu.v[i].key, in->aux_cpu.v[i].bytes, in->aux_cpu.v[i].count);
	for (i = 0; i < in->aux_tid.n; i++)
		printf("  tid %-6d %12" PRIu64 " bytes in %" PRIu64 " records\n",
		       (int32_t)in->aux_tid.v[i].key, in->aux_tid.v[i].bytes, in->aux_tid.v[i].count);
	printf("aux records:     %" PRIu64 " (%" PRIu64 " bytes), truncated %" PRIu64
	       ", partial %" PRIu64 ", collision %" PRIu64 ", overwrite %" PRIu64 "\n",
	       in->aux_records, in->aux_bytes_reported, in->aux_truncated, in->aux_partial,
	       in->aux_collision, in->aux_overwrite);
	if (in->aux_bytes_reported && !st->aux_bytes)
		printf("note:            the AUX records announce %" PRIu64 " bytes of trace, but the "
		       "recording holds no AUXTRACE data\n", in->aux_bytes_reported);
	printf("lost:            %" PRIu64 " LOST records (%" PRIu64 " events), %" PRIu64
	       " LOST_SAMPLES records (%" PRIu64 " samples)\n", in->lost_records, in->lost_events,
	       in->lost_samples_records, in->lost_samples);
	print_attribution_text(in, st);
	printf("auxtrace errors: %" PRIu64 "\n", in->aux_errors);
	for (i = 0; i < in->aux_errors && i < MAX_ERRORS_KEPT; i++) {
		const struct aux_error *e = &in->errors[i];
		printf("  offset 0x%" PRIx64 ": type %u code %u cpu %d pid %d tid %d ip 0x%" PRIx64
		       ": %s\n", e->offset, e->e.type, e->e.code, (int32_t)e->e.cpu,
		       (int32_t)e->e.pid, (int32_t)e->e.tid, e->e.ip, e->msg);
	}

	printf("\nthreads:         %zu\n", in->threads.n);
	for (i = 0; i < in->threads.n; i++) {
		const struct thread *t = &in->threads.v[i];
		printf("  pid %-7d tid %-7d %s%s%s\n", (int32_t)t->pid, (int32_t)t->tid,
		       t->comm ? t->comm : "?", t->forked ? " (forked)" : "",
		       t->exited ? " (exited)" : "");
	}
	if (in->threads.dropped)
		printf("  (%" PRIu64 " more threads not kept)\n", in->threads.dropped);

	printf("\nimages:          %zu\n", in->images.n);
	for (i = 0; i < in->images.n; i++) {
		const struct image *im = &in->images.v[i];
		if (im->build_id_size)
			ptc_build_id_hex(im->build_id, im->build_id_size, hex);
		else
			strcpy(hex, "-");
		printf("  %s  build-id %s  %s%s%s\n", im->path, hex, located_name(im->located),
		       im->found_path ? ": " : "", im->found_path ? im->found_path : "");
	}
	if (in->images.dropped)
		printf("  (%" PRIu64 " more images not kept)\n", in->images.dropped);

	printf("\nrecords:\n");
	for (i = 0; i < PTC_REC_USER_MAX; i++)
		if (st->records[i])
			printf("  %-20s %" PRIu64 "\n", ptc_perf_record_name((uint32_t)i),
			       st->records[i]);
	printf("  %-20s %" PRIu64 "\n", "unknown (skipped)", st->unknown_records);
	if (st->compressed_records)
		printf("  %-20s %" PRIu64 " (%" PRIu64 " bytes decompressed)\n", "compressed",
		       st->compressed_records, st->decompressed_bytes);
	if (in->bad_records)
		printf("  %-20s %" PRIu64 " (first at offset 0x%" PRIx64 ")\n", "malformed",
		       in->bad_records, in->first_bad_offset);
	if (st->trailing_bytes)
		printf("  %-20s %" PRIu64 " bytes at offset 0x%" PRIx64 "\n", "trailing garbage",
		       st->trailing_bytes, st->trailing_offset);
	if (st->skips) {
		printf("  %-20s %" PRIu64 " bytes skipped at %" PRIu64 " places (%" PRIu64 " records "
		       "repaired)\n", "damaged input", st->skipped_bytes, st->skips, st->repairs);
		for (i = 0; i < ptc_perf_nr_skips(in->r); i++) {
			const struct ptc_perf_skip *k = ptc_perf_skip(in->r, i);
			printf("    offset 0x%" PRIx64 ": %" PRIu64 " bytes%s%s\n", k->offset, k->bytes,
			       k->to_end ? " (to the end)" : "", k->bytes ? "" : " (repaired)");
		}
	}
}

/* ---- JSON output ---------------------------------------------------- */

static void print_json(struct info *in)
{
	struct ptc_perf_reader *r = in->r;
	const struct ptc_perf_info *pi = ptc_perf_info(r);
	const struct ptc_perf_stats *st = ptc_perf_stats(r);
	const struct ptc_perf_extra *x = ptc_perf_extra(r);
	struct ptc_json j;
	char hex[41], filt[4096];
	size_t i, f;

	ptc_json_init(&j, stdout);
	ptc_json_begin_object(&j, NULL);
	ptc_json_string(&j, "file", in->path);
	ptc_json_string(&j, "mode", pi->pipe_mode ? "pipe" : "file");
	ptc_json_string(&j, "perf_version", pi->version);
	ptc_json_string(&j, "hostname", pi->hostname);
	ptc_json_string(&j, "os_release", pi->osrelease);
	ptc_json_string(&j, "arch", pi->arch);
	ptc_json_string(&j, "cpu_desc", pi->cpudesc);
	ptc_json_string(&j, "cpuid", pi->cpuid);
	ptc_json_u64(&j, "nr_cpus_online", pi->nr_cpus_online);
	ptc_json_u64(&j, "nr_cpus_avail", pi->nr_cpus_avail);
	ptc_json_u64(&j, "total_mem_kb", pi->total_mem_kb);
	ptc_json_string(&j, "cmdline", pi->cmdline);
	ptc_json_u64(&j, "clockid_res_ns", pi->clockid_res_ns);
	if (x->have_sample_time) {
		ptc_json_u64(&j, "sample_time_first", x->sample_time_first);
		ptc_json_u64(&j, "sample_time_last", x->sample_time_last);
	}
	if (x->have_compressed) {
		ptc_json_begin_object(&j, "compressed");
		ptc_json_string(&j, "type", x->comp_type == 1 ? "zstd" : "unknown");
		ptc_json_u64(&j, "level", x->comp_level);
		ptc_json_u64(&j, "ratio", x->comp_ratio);
		ptc_json_end_object(&j);
	}
	ptc_json_begin_array(&j, "pmus");
	for (i = 0; i < x->nr_pmus; i++) {
		ptc_json_begin_object(&j, NULL);
		ptc_json_string(&j, "name", x->pmus[i].name);
		ptc_json_u64(&j, "type", x->pmus[i].type);
		ptc_json_end_object(&j);
	}
	ptc_json_end_array(&j);
	ptc_json_begin_array(&j, "core_siblings");
	for (i = 0; i < x->nr_core_siblings; i++)
		ptc_json_string(&j, NULL, x->core_siblings[i]);
	ptc_json_end_array(&j);
	ptc_json_begin_array(&j, "thread_siblings");
	for (i = 0; i < x->nr_thread_siblings; i++)
		ptc_json_string(&j, NULL, x->thread_siblings[i]);
	ptc_json_end_array(&j);
	ptc_json_u64(&j, "tracing_data_bytes", pi->tracing_data_size);
	ptc_json_u64(&j, "build_ids", pi->nr_build_ids);
	ptc_json_begin_array(&j, "hybrid_topology");
	for (i = 0; i < x->nr_hybrid; i++) {
		ptc_json_begin_object(&j, NULL);
		ptc_json_string(&j, "pmu", x->hybrid_pmus[i]);
		ptc_json_string(&j, "cpus", i < x->nr_hybrid_cpus ? x->hybrid_cpus[i] : NULL);
		ptc_json_end_object(&j);
	}
	ptc_json_end_array(&j);

	ptc_json_begin_array(&j, "events");
	for (i = 0; i < ptc_perf_nr_attrs(r); i++) {
		const struct ptc_perf_attr *a = ptc_perf_attr(r, i);
		const char *kind = attr_kind(in, a);
		ptc_json_begin_object(&j, NULL);
		char dn[128];
		ptc_json_string(&j, "name", a->name);
		if (!a->name)
			ptc_json_string(&j, "derived_name", derived_name(in, a, dn, sizeof(dn)));
		ptc_json_string(&j, "kind", kind);
		ptc_json_u64(&j, "type", a->attr.type);
		ptc_json_u64(&j, "config", a->attr.config);
		ptc_json_u64(&j, "sample_type", a->attr.sample_type);
		ptc_json_u64(&j, "nr_ids", a->nr_ids);
		ptc_json_bool(&j, "exclude_user", a->attr.exclude_user);
		ptc_json_bool(&j, "exclude_kernel", a->attr.exclude_kernel);
		if (!strcmp(kind, "intel_pt")) {
			ptc_json_begin_object(&j, "intel_pt_config");
			for (f = 0; f < sizeof(pt_fields) / sizeof(pt_fields[0]); f++)
				ptc_json_u64(&j, pt_fields[f].name, cfg_value(a->attr.config, &pt_fields[f]));
			ptc_json_end_object(&j);
		}
		ptc_json_end_object(&j);
	}
	ptc_json_end_array(&j);

	if (in->have_auxinfo) {
		ptc_json_begin_object(&j, "auxtrace_info");
		ptc_json_u64(&j, "type", in->auxinfo_type);
		ptc_json_string(&j, "kind", auxtrace_type_name(in->auxinfo_type));
		ptc_json_u64(&j, "nr_priv", in->nr_priv);
		if (in->auxinfo_type == PTC_AUXTRACE_INTEL_PT) {
			for (i = 0; i < in->nr_priv && i < PTC_PT_INFO_NR; i++)
				ptc_json_u64(&j, pt_priv_names[i], in->priv[i]);
			ptc_json_string(&j, "filter", pt_filter(in, filt, sizeof(filt)));
		} else {
			ptc_json_begin_array(&j, "priv");
			for (i = 0; i < in->nr_priv; i++)
				ptc_json_u64(&j, NULL, in->priv[i]);
			ptc_json_end_array(&j);
		}
		ptc_json_end_object(&j);
	}

	ptc_json_begin_object(&j, "aux");
	ptc_json_u64(&j, "bytes", st->aux_bytes);
	ptc_json_u64(&j, "auxtrace_records", in->auxtrace_records);
	ptc_json_begin_array(&j, "per_cpu");
	for (i = 0; i < in->aux_cpu.n; i++) {
		ptc_json_begin_object(&j, NULL);
		ptc_json_i64(&j, "cpu", (int32_t)in->aux_cpu.v[i].key);
		ptc_json_u64(&j, "bytes", in->aux_cpu.v[i].bytes);
		ptc_json_u64(&j, "records", in->aux_cpu.v[i].count);
		ptc_json_end_object(&j);
	}
	ptc_json_end_array(&j);
	ptc_json_begin_array(&j, "per_thread");
	for (i = 0; i < in->aux_tid.n; i++) {
		ptc_json_begin_object(&j, NULL);
		ptc_json_i64(&j, "tid", (int32_t)in->aux_tid.v[i].key);
		ptc_json_u64(&j, "bytes", in->aux_tid.v[i].bytes);
		ptc_json_u64(&j, "records", in->aux_tid.v[i].count);
		ptc_json_end_object(&j);
	}
	ptc_json_end_array(&j);
	ptc_json_u64(&j, "aux_records", in->aux_records);
	ptc_json_u64(&j, "aux_records_bytes", in->aux_bytes_reported);
	ptc_json_bool(&j, "aux_data_missing", in->aux_bytes_reported && !st->aux_bytes);
	ptc_json_u64(&j, "truncated", in->aux_truncated);
	ptc_json_u64(&j, "partial", in->aux_partial);
	ptc_json_u64(&j, "collision", in->aux_collision);
	ptc_json_u64(&j, "overwrite", in->aux_overwrite);
	ptc_json_u64(&j, "lost_records", in->lost_records);
	ptc_json_u64(&j, "lost_events", in->lost_events);
	ptc_json_u64(&j, "lost_samples_records", in->lost_samples_records);
	ptc_json_u64(&j, "lost_samples", in->lost_samples);
	ptc_json_end_object(&j);

	print_attribution_json(in, st, &j);
	ptc_json_u64(&j, "auxtrace_errors", in->aux_errors);
	ptc_json_begin_array(&j, "auxtrace_error_list");
	for (i = 0; i < in->aux_errors && i < MAX_ERRORS_KEPT; i++) {
		const struct aux_error *e = &in->errors[i];
		ptc_json_begin_object(&j, NULL);
		ptc_json_u64(&j, "offset", e->offset);
		ptc_json_u64(&j, "type", e->e.type);
		ptc_json_u64(&j, "code", e->e.code);
		ptc_json_i64(&j, "cpu", (int32_t)e->e.cpu);
		ptc_json_i64(&j, "pid", (int32_t)e->e.pid);
		ptc_json_i64(&j, "tid", (int32_t)e->e.tid);
		ptc_json_u64(&j, "ip", e->e.ip);
		ptc_json_string(&j, "msg", e->msg);
		ptc_json_end_object(&j);
	}
	ptc_json_end_array(&j);

	ptc_json_begin_array(&j, "threads");
	for (i = 0; i < in->threads.n; i++) {
		const struct thread *t = &in->threads.v[i];
		ptc_json_begin_object(&j, NULL);
		ptc_json_i64(&j, "pid", (int32_t)t->pid);
		ptc_json_i64(&j, "tid", (int32_t)t->tid);
		ptc_json_string(&j, "comm", t->comm);
		ptc_json_bool(&j, "forked", t->forked);
		ptc_json_bool(&j, "exited", t->exited);
		ptc_json_end_object(&j);
	}
	ptc_json_end_array(&j);

	ptc_json_begin_array(&j, "images");
	for (i = 0; i < in->images.n; i++) {
		const struct image *im = &in->images.v[i];
		ptc_json_begin_object(&j, NULL);
		ptc_json_string(&j, "path", im->path);
		if (im->build_id_size) {
			ptc_build_id_hex(im->build_id, im->build_id_size, hex);
			ptc_json_string(&j, "build_id", hex);
		} else {
			ptc_json_null(&j, "build_id");
		}
		ptc_json_u64(&j, "mappings", im->maps);
		ptc_json_string(&j, "local", located_name(im->located));
		ptc_json_string(&j, "local_path", im->found_path);
		ptc_json_end_object(&j);
	}
	ptc_json_end_array(&j);

	ptc_json_begin_object(&j, "records");
	for (i = 0; i < PTC_REC_USER_MAX; i++)
		if (st->records[i])
			ptc_json_u64(&j, ptc_perf_record_name((uint32_t)i), st->records[i]);
	ptc_json_end_object(&j);
	ptc_json_begin_object(&j, "record_types");	/* the same, by type number */
	for (i = 0; i < PTC_REC_USER_MAX; i++)
		if (st->records[i]) {
			char num[16];
			snprintf(num, sizeof(num), "%zu", i);
			ptc_json_u64(&j, num, st->records[i]);
		}
	ptc_json_end_object(&j);
	ptc_json_u64(&j, "unknown_records", st->unknown_records);
	ptc_json_u64(&j, "compressed_records", st->compressed_records);
	ptc_json_u64(&j, "decompressed_bytes", st->decompressed_bytes);
	ptc_json_u64(&j, "malformed_records", in->bad_records);
	ptc_json_u64(&j, "trailing_garbage_bytes", st->trailing_bytes);
	if (st->trailing_bytes)
		ptc_json_u64(&j, "trailing_garbage_offset", st->trailing_offset);
	/* damaged input the reader skipped, place by place */
	ptc_convert_json_damage(&j, r);
	ptc_json_begin_array(&j, "warnings");
	for (i = 0; i < ptc_perf_nr_warnings(r); i++)
		ptc_json_string(&j, NULL, ptc_perf_warning(r, i));
	ptc_json_end_array(&j);
	ptc_json_string(&j, "error", in->read_err < 0 ? ptc_perf_errmsg(r) : NULL);
	ptc_json_end_object(&j);
}

/* ---- the command ---------------------------------------------------- */

static void usage(FILE *to)
{
	fprintf(to, "usage: ptconv info FILE [--json] [--symfs DIR] [--buildid-dir DIR]\n"
		    "       ptconv info TRACE.ptc [--json]\n");
}

static void info_free(struct info *in)
{
	size_t i;

	for (i = 0; i < in->threads.n; i++)
		free(in->threads.v[i].comm);
	free(in->threads.v);
	for (i = 0; i < in->images.n; i++) {
		free(in->images.v[i].path);
		free(in->images.v[i].found_path);
	}
	free(in->images.v);
	free(in->images.slots);
	free(in->aux_cpu.v);
	free(in->aux_tid.v);
	u32_index_free(&in->aux_cpu.idx);
	u32_index_free(&in->aux_tid.idx);
	u32_index_free(&in->threads.idx);
	free(in->priv);
	ptc_sb_free(in->sb);
	ptc_sched_switch_samples_fini(&in->ss);
}

int cmd_info(int argc, char **argv)
{
	struct info in;
	struct ptc_perf_record rec;
	char err[1024];
	int json = 0, i, ret, damaged, sb_err;
	size_t w;

	memset(&in, 0, sizeof(in));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--symfs") && i + 1 < argc) {
			in.loc.symfs = argv[++i];
		} else if (!strcmp(argv[i], "--buildid-dir") && i + 1 < argc) {
			in.loc.buildid_dir = argv[++i];
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return PTC_EXIT_OK;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			ptc_cli_error("info: unknown option %s", argv[i]);
			usage(stderr);
			return PTC_EXIT_USAGE;
		} else if (!in.path) {
			in.path = argv[i];
		} else {
			ptc_cli_error("info: more than one input file");
			return PTC_EXIT_USAGE;
		}
	}
	if (!in.path) {
		usage(stderr);
		return PTC_EXIT_USAGE;
	}
	if (ptc_is_ptc_trace(in.path)) {
		/* a ptconv trace embeds its code: no images to look up */
		if (in.loc.symfs || in.loc.buildid_dir) {
			ptc_cli_error("info: %s is a ptconv trace: --symfs and --buildid-dir do not apply", in.path);
			return PTC_EXIT_USAGE;
		}
		return ptc_info_ptc(in.path, json);
	}
	if (ptc_perf_open(&in.r, in.path, err, sizeof(err)) < 0) {
		size_t l = strlen(in.path), sl = strlen(".ptconv-part");
		ptc_cli_error("%s", err);
		if (l > sl && !strcmp(in.path + l - sl, ".ptconv-part"))
			ptc_cli_error("%s: the unfinished output of a ptconv run that was stopped "
				      "(ptconv-convert(1), OUTPUT)", in.path);
		return PTC_EXIT_INPUT;
	}
	if (ptc_sb_new(&in.sb) < 0) {
		ptc_perf_close(in.r);
		return PTC_EXIT_INPUT;
	}
	while ((ret = ptc_perf_next(in.r, &rec)) > 0) {
		collect(&in, &rec);
		collect_switches(&in, &rec);
	}
	in.read_err = ret;
	/* (a timeline not checked for want of memory: said, the status 3) */
	sb_err = ptc_sb_finish(in.sb);
	locate_images(&in);
	/* sorted for output (the hash indexes are not used any more) */
	if (in.threads.n)
		qsort(in.threads.v, in.threads.n, sizeof(*in.threads.v), thread_cmp);
	if (in.aux_cpu.n)
		qsort(in.aux_cpu.v, in.aux_cpu.n, sizeof(*in.aux_cpu.v), u32_stat_cmp);
	if (in.aux_tid.n)
		qsort(in.aux_tid.v, in.aux_tid.n, sizeof(*in.aux_tid.v), u32_stat_cmp);
	if (json)
		print_json(&in);
	else
		print_text(&in);
	fflush(stdout);
	for (w = 0; w < ptc_perf_nr_warnings(in.r); w++)
		ptc_cli_error("warning: %s", ptc_perf_warning(in.r, w));
	if (in.bad_records)
		ptc_cli_error("warning: %s: %" PRIu64 " malformed records skipped (first at offset 0x%" PRIx64 ")",
			      in.path, in.bad_records, in.first_bad_offset);
	if (ret < 0)
		ptc_cli_error("%s", ptc_perf_errmsg(in.r));
	if (sb_err < 0)
		ptc_cli_error("%s: checking the context switches: %s", in.path, ptc_errstr(sb_err));
	/* damaged input (its places are among the warnings above) */
	damaged = ptc_perf_stats(in.r)->skips != 0;
	ptc_perf_close(in.r);
	info_free(&in);
	return ret < 0 || damaged || sb_err < 0 ? PTC_EXIT_INPUT : PTC_EXIT_OK;
}
