/* perf.data reader: file mode, pipe mode, compressed records, AUX data.
 *
 * Layers, bottom up:
 *   input window  - a fixed buffer over the descriptor (read/lseek/pread);
 *                   records are handed out from it without copying.
 *   header/features - the file header, attrs and feature sections (file
 *                   mode) or their pipe-mode records, parsed once.
 *   zstd stream   - COMPRESSED/COMPRESSED2 payloads decompressed into a
 *                   fixed output buffer; a record may straddle two
 *                   compressed records, so a partial one is carried over.
 *   iterator      - ptc_perf_next(): bounds checks, sample_id parsing,
 *                   AUX data skipping, stats.
 * Memory is fixed after open apart from what the header itself describes
 * (attrs, ids, feature strings), which is bounded by the file's contents.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "common/bytes.h"
#include "common/error.h"
#include "input/perf_reader.h"

#define IN_CAP		(512u * 1024)	/* input window; > largest record (64 KiB) */
#define Z_OUT_CAP	(256u * 1024)	/* decompressed records; > 2 records */
#define Z_IN_CAP	(64u * 1024)	/* one compressed record's payload */
#define REC_MAX		65535u
#define FEAT_MAX	(256ull << 20)	/* largest feature section we load */
#define TRACING_MAX	(256ull << 20)	/* largest TRACING_DATA we keep */
#define MAX_ATTRS	16384u
#define MAX_IDS		(1u << 22)	/* all events together */
#define MAX_WARNINGS	16
#define MAX_BUILD_IDS	(1u << 20)
#define NAME_ALIGN	64
#define MAX_SKIPS	256		/* damaged places kept in detail */
#define LOOK		(256u * 1024)	/* window kept ahead of a resync candidate */
#define CHAIN		3		/* records that must follow each other there */
#define AHEAD_RECORDS	4096		/* records searched for a queue's next AUXTRACE */
#define MAX_QUEUES	65536		/* AUXTRACE queue indexes remembered */

struct id_entry {
	uint64_t id;
	uint32_t attr;
};

struct attr_priv {
	struct ptc_perf_attr pub;
	uint64_t *ids;
	char *name;
	int id_pos;	/* u64 index of ID in a SAMPLE after the header, -1 none */
	int is_pos;	/* u64 index of ID counted from a trailer's end, -1 none */
};

struct ptc_perf_reader {
	int fd, own_fd;
	char *name;
	int seekable;
	uint64_t file_size;	/* seekable inputs */
	int failed;		/* sticky error code after a failure */
	int ended;		/* trailing garbage seen: nothing more to read */

	/* input window */
	uint8_t *buf;
	size_t pos, len;
	uint64_t base;		/* input offset of buf[0] */
	int eof;

	uint64_t data_end;	/* file mode: end of the data section; else UINT64_MAX */

	/* the AUXTRACE payload after the current record */
	uint64_t aux_left;

	/* aligned copy of a record that sits misaligned in a buffer */
	uint64_t *scratch;

	/* decompression */
	ZSTD_DStream *zs;
	uint8_t *zin, *zout;
	size_t zin_pos, zin_len;
	size_t zpos, zlen;
	int zactive;		/* zin holds unconsumed compressed bytes */
	uint64_t zrec_off;	/* offset of the COMPRESSED record being expanded */
	uint16_t zrec_size;

	/* attrs */
	struct attr_priv *attrs;
	size_t nr_attrs, cap_attrs;
	struct id_entry *idmap;	/* hash table; attr is index + 1, 0 = empty */
	size_t nr_idmap, cap_idmap;
	uint64_t total_ids;
	int uniform;		/* all attrs have the same sample_type/sample_id_all */
	int all_identifier;
	int common_id_pos, common_is_pos;	/* -2: differ */

	struct ptc_perf_info info;
	char *strs[16];		/* owned feature strings */
	struct ptc_perf_build_id *build_ids;
	size_t cap_build_ids;
	uint8_t *tracing;

	struct ptc_perf_stats stats;
	uint32_t last_type;		/* of the last record delivered */
	char *warnings[MAX_WARNINGS];
	size_t nr_warnings;
	char errmsg[512];
	/* extra feature facts */
	struct ptc_perf_extra extra;
	struct ptc_perf_pmu *pmus;	/* extra.pmus, owned */
	/* EVENT_DESC names seen before their events (pipe mode sends the
	 * feature before the HEADER_ATTR records) */
	struct pending_name { uint64_t id; int has_id; size_t idx; char *name; } *pending;
	size_t nr_pending;

	/* damage: where the reading resynchronised */
	struct ptc_perf_skip *skips;
	size_t nr_skips;
	uint8_t *vbuf;		/* a record looked at ahead of the window (REC_MAX + 8) */
	struct aux_queue { uint32_t cpu, tid; int seen; uint64_t end; } *aq;	/* by AUXTRACE idx */
	size_t nr_aq;
	uint64_t tmin[3];	/* least perf time of this round and the two before */
	unsigned rounds_after_skip;	/* FINISHED_ROUNDs since the last skip */
	int skip_t_open;	/* the last skip has seen no time after it yet */
	uint64_t last_aux_off, last_aux_end;	/* the last AUXTRACE record, its data's end */
};

/* ---- messages ------------------------------------------------------- */

static int fail_at(struct ptc_perf_reader *r, int code, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void warn_at(struct ptc_perf_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void vformat_at(const struct ptc_perf_reader *r, char *msg, size_t len, uint64_t off,
		       const char *fmt, va_list ap)
{
	int n = snprintf(msg, len, "%s: offset 0x%llx: ", r->name, (unsigned long long)off);

	if (n < 0 || (size_t)n >= len)
		n = 0;
	vsnprintf(msg + n, len - n, fmt, ap);
}

static int fail_at(struct ptc_perf_reader *r, int code, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vformat_at(r, r->errmsg, sizeof(r->errmsg), off, fmt, ap);
	va_end(ap);
	r->failed = -code;
	return -code;
}

static void keep_warning(struct ptc_perf_reader *r, const char *msg)
{
	r->stats.warnings++;
	if (r->nr_warnings >= MAX_WARNINGS)
		return;
	r->warnings[r->nr_warnings] = strdup(msg);
	if (r->warnings[r->nr_warnings])
		r->nr_warnings++;
}

static void warn_at(struct ptc_perf_reader *r, uint64_t off, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vformat_at(r, msg, sizeof(msg), off, fmt, ap);
	va_end(ap);
	keep_warning(r, msg);
}

/* ---- input window --------------------------------------------------- */

static inline size_t in_avail(const struct ptc_perf_reader *r)
{
	return r->len - r->pos;
}

static inline uint64_t in_off(const struct ptc_perf_reader *r)
{
	return r->base + r->pos;
}

/* Make at least n bytes available (n <= IN_CAP); returns what is available,
 * fewer only at the end of the input, or <0 on a read error. */
static ssize_t in_fill(struct ptc_perf_reader *r, size_t n)
{
	if (in_avail(r) >= n || r->eof)
		return (ssize_t)in_avail(r);
	if (r->pos && IN_CAP - r->pos < n) {
		memmove(r->buf, r->buf + r->pos, in_avail(r));
		r->len -= r->pos;
		r->base += r->pos;
		r->pos = 0;
	}
	while (in_avail(r) < n) {
		ssize_t got = read(r->fd, r->buf + r->len, IN_CAP - r->len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return fail_at(r, ptc_err_io, r->base + r->len, "read failed: %s",
				       strerror(errno));
		}
		if (got == 0) {
			r->eof = 1;
			break;
		}
		r->len += (size_t)got;
		r->stats.bytes_read += (uint64_t)got;
	}
	return (ssize_t)in_avail(r);
}

/* An empty window at offset to of a regular file (msg_off for a message). */
static int in_lseek(struct ptc_perf_reader *r, uint64_t to, uint64_t msg_off)
{
	if (lseek(r->fd, (off_t)to, SEEK_SET) == (off_t)-1)
		return fail_at(r, ptc_err_io, msg_off, "seek failed: %s", strerror(errno));
	r->base = to;
	r->pos = r->len = 0;
	r->eof = 0;
	return 0;
}

/* Skip n bytes of input; 0, or <0 when the input ends first. */
static int in_skip(struct ptc_perf_reader *r, uint64_t n)
{
	uint64_t from = in_off(r);
	size_t take = in_avail(r) < n ? in_avail(r) : (size_t)n;

	r->pos += take;
	n -= take;
	if (!n)
		return 0;
	if (r->seekable) {
		uint64_t to = in_off(r) + n;
		if (to > r->file_size || to < n)
			return fail_at(r, ptc_err_truncated, from,
				       "input ends at 0x%llx, inside %llu bytes to skip",
				       (unsigned long long)r->file_size,
				       (unsigned long long)(n + take));
		return in_lseek(r, to, from);
	}
	while (n) {
		ssize_t got;
		/* the window is used up: slide it to the input position */
		r->base += r->len;
		r->pos = r->len = 0;
		got = in_fill(r, n < IN_CAP ? (size_t)n : IN_CAP);
		if (got < 0)
			return (int)got;
		if (got == 0)
			return fail_at(r, ptc_err_truncated, in_off(r),
				       "input ends inside %llu bytes of trace data that start at 0x%llx",
				       (unsigned long long)(n + take), (unsigned long long)from);
		take = (size_t)got < n ? (size_t)got : (size_t)n;
		r->pos += take;
		n -= take;
	}
	return 0;
}

/* Absolute read for seekable inputs: exactly n bytes or an error. */
static int in_pread(struct ptc_perf_reader *r, void *dst, size_t n, uint64_t off)
{
	uint8_t *p = dst;

	if (!r->seekable)
		return fail_at(r, ptc_err_unsupported, off, "input is not seekable");
	if (off > r->file_size || n > r->file_size - off)
		return fail_at(r, ptc_err_truncated, off,
			       "%zu bytes wanted but the input ends at 0x%llx", n,
			       (unsigned long long)r->file_size);
	while (n) {
		ssize_t got = pread(r->fd, p, n, (off_t)off);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return fail_at(r, ptc_err_io, off, "read failed: %s", strerror(errno));
		}
		if (got == 0)
			return fail_at(r, ptc_err_truncated, off, "input ends early");
		p += got;
		off += (uint64_t)got;
		n -= (size_t)got;
	}
	return 0;
}

/* ---- attrs and ids -------------------------------------------------- */

/* Fold the newest attr into the summary used to find a record's attr:
 * O(1) per attr, so that hostile recordings with many events stay fast. */
static void attr_added(struct ptc_perf_reader *r)
{
	const struct attr_priv *a = &r->attrs[r->nr_attrs - 1];
	const struct attr_priv *a0 = &r->attrs[0];

	if (r->nr_attrs == 1) {
		r->uniform = 1;
		r->all_identifier = !!(a->pub.attr.sample_type & PERF_SAMPLE_IDENTIFIER);
		r->common_id_pos = a->id_pos;
		r->common_is_pos = a->is_pos;
		return;
	}
	if (a->pub.attr.sample_type != a0->pub.attr.sample_type ||
	    a->pub.attr.sample_id_all != a0->pub.attr.sample_id_all)
		r->uniform = 0;
	if (!(a->pub.attr.sample_type & PERF_SAMPLE_IDENTIFIER))
		r->all_identifier = 0;
	if (a->id_pos != r->common_id_pos)
		r->common_id_pos = -2;
	if (a->is_pos != r->common_is_pos)
		r->common_is_pos = -2;
}

/* Sample id -> attr: open addressing, grown by doubling (load <= 1/2). */
static inline size_t id_slot(uint64_t id, size_t mask)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (size_t)id & mask;
}

static int idmap_insert(struct ptc_perf_reader *r, uint64_t id, uint32_t attr)
{
	size_t h;

	if (2 * (r->nr_idmap + 1) > r->cap_idmap) {
		size_t cap = r->cap_idmap ? 2 * r->cap_idmap : 64, i;
		struct id_entry *nm = calloc(cap, sizeof(*nm));
		if (!nm)
			return -ptc_err_nomem;
		for (i = 0; i < r->cap_idmap; i++) {
			if (!r->idmap[i].attr)
				continue;
			h = id_slot(r->idmap[i].id, cap - 1);
			while (nm[h].attr)
				h = (h + 1) & (cap - 1);
			nm[h] = r->idmap[i];
		}
		free(r->idmap);
		r->idmap = nm;
		r->cap_idmap = cap;
	}
	h = id_slot(id, r->cap_idmap - 1);
	while (r->idmap[h].attr) {
		if (r->idmap[h].id == id)
			return 0;	/* the first event claiming an id keeps it */
		h = (h + 1) & (r->cap_idmap - 1);
	}
	r->idmap[h].id = id;
	r->idmap[h].attr = attr + 1;
	r->nr_idmap++;
	return 0;
}

static struct attr_priv *attr_by_id(struct ptc_perf_reader *r, uint64_t id)
{
	size_t h;

	if (!r->cap_idmap)
		return NULL;
	h = id_slot(id, r->cap_idmap - 1);
	while (r->idmap[h].attr) {
		if (r->idmap[h].id == id)
			return &r->attrs[r->idmap[h].attr - 1];
		h = (h + 1) & (r->cap_idmap - 1);
	}
	return NULL;
}

static void attr_set_name(struct ptc_perf_reader *r, struct attr_priv *a, const char *name,
			  size_t len);

/* Add an event: raw attr bytes (avail of them, attr.size says how many
 * belong to it) and ids as raw little-endian u64s. */
static int attr_add(struct ptc_perf_reader *r, uint64_t off, const uint8_t *p, size_t avail,
		    const uint8_t *ids, size_t nr_ids)
{
	struct attr_priv *a;
	uint32_t asize;
	uint64_t st;
	size_t i;

	if (avail < PERF_ATTR_SIZE_VER0)
		return fail_at(r, ptc_err_bad_record, off, "event attribute of %zu bytes is too short",
			       avail);
	asize = ptc_le32(p + 4);
	if (asize == 0)
		asize = PERF_ATTR_SIZE_VER0;
	if (asize < PERF_ATTR_SIZE_VER0 || asize > avail)
		return fail_at(r, ptc_err_bad_record, off,
			       "event attribute size %u outside 64..%zu", asize, avail);
	if (r->nr_attrs >= MAX_ATTRS)
		return fail_at(r, ptc_err_bad_size, off, "more than %u events", MAX_ATTRS);
	if (nr_ids > MAX_IDS || r->total_ids + nr_ids > MAX_IDS)
		return fail_at(r, ptc_err_bad_size, off, "more than %u sample ids", MAX_IDS);
	if (r->nr_attrs == r->cap_attrs) {
		size_t cap = r->cap_attrs ? 2 * r->cap_attrs : 8;
		struct attr_priv *na = realloc(r->attrs, cap * sizeof(*na));
		if (!na)
			return fail_at(r, ptc_err_nomem, off, "out of memory");
		r->attrs = na;
		r->cap_attrs = cap;
	}
	a = &r->attrs[r->nr_attrs];
	memset(a, 0, sizeof(*a));
	memcpy(&a->pub.attr, p, asize < sizeof(a->pub.attr) ? asize : sizeof(a->pub.attr));
	a->pub.file_attr_size = asize;
	if (nr_ids) {
		a->ids = malloc(nr_ids * sizeof(uint64_t));
		if (!a->ids)
			return fail_at(r, ptc_err_nomem, off, "out of memory");
		for (i = 0; i < nr_ids; i++)
			a->ids[i] = ptc_le64(ids + 8 * i);
	}
	a->pub.ids = a->ids;
	a->pub.nr_ids = nr_ids;
	st = a->pub.attr.sample_type;
	if (st & PERF_SAMPLE_IDENTIFIER)
		a->id_pos = 0;
	else if (st & PERF_SAMPLE_ID)
		a->id_pos = !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
			    !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR);
	else
		a->id_pos = -1;
	if (st & PERF_SAMPLE_IDENTIFIER)
		a->is_pos = 1;
	else if (st & PERF_SAMPLE_ID)
		a->is_pos = 1 + !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
	else
		a->is_pos = -1;
	r->nr_attrs++;
	r->total_ids += nr_ids;
	attr_added(r);
	for (i = 0; i < nr_ids; i++)
		if (idmap_insert(r, a->ids[i], (uint32_t)(r->nr_attrs - 1)) < 0)
			return fail_at(r, ptc_err_nomem, off, "out of memory");
	/* A name that came before its event. */
	for (i = 0; i < r->nr_pending && !a->name; i++) {
		const struct pending_name *pn = &r->pending[i];
		size_t k;
		if (!pn->has_id) {
			if (pn->idx == r->nr_attrs - 1)
				attr_set_name(r, a, pn->name, strlen(pn->name));
			continue;
		}
		for (k = 0; k < nr_ids; k++)
			if (a->ids[k] == pn->id) {
				attr_set_name(r, a, pn->name, strlen(pn->name));
				break;
			}
	}
	return 0;
}

static void attr_set_name(struct ptc_perf_reader *r, struct attr_priv *a, const char *name,
			  size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		return;
	memcpy(s, name, len);
	s[len] = 0;
	free(a->name);
	a->name = s;
	a->pub.name = s;
}

/* ---- feature sections ----------------------------------------------- */

/* A bounded cursor over one feature section's bytes. */
struct cur {
	const uint8_t *p;
	size_t n, at;
	int bad;
};

static uint32_t cur_u32(struct cur *c)
{
	uint32_t v;
	if (c->bad || c->n - c->at < 4) {
		c->bad = 1;
		return 0;
	}
	v = ptc_le32(c->p + c->at);
	c->at += 4;
	return v;
}

static uint64_t cur_u64(struct cur *c)
{
	uint64_t v;
	if (c->bad || c->n - c->at < 8) {
		c->bad = 1;
		return 0;
	}
	v = ptc_le64(c->p + c->at);
	c->at += 8;
	return v;
}

static const uint8_t *cur_bytes(struct cur *c, uint64_t len)
{
	const uint8_t *p;
	if (c->bad || c->n - c->at < len) {
		c->bad = 1;
		return NULL;
	}
	p = c->p + c->at;
	c->at += (size_t)len;
	return p;
}

/* perf's do_write_string: u32 length (padded, NUL included), then bytes. */
static char *cur_string(struct cur *c)
{
	uint32_t len = cur_u32(c);
	const uint8_t *p = cur_bytes(c, len);
	size_t n;
	char *s;

	if (!p)
		return NULL;
	n = strnlen((const char *)p, len);
	s = malloc(n + 1);
	if (!s) {
		c->bad = 1;
		return NULL;
	}
	memcpy(s, p, n);
	s[n] = 0;
	return s;
}

static const char **info_str_slot(struct ptc_perf_reader *r, int feat)
{
	switch (feat) {
	case PTC_FEAT_HOSTNAME: return &r->info.hostname;
	case PTC_FEAT_OSRELEASE: return &r->info.osrelease;
	case PTC_FEAT_VERSION: return &r->info.version;
	case PTC_FEAT_ARCH: return &r->info.arch;
	case PTC_FEAT_CPUDESC: return &r->info.cpudesc;
	case PTC_FEAT_CPUID: return &r->info.cpuid;
	case PTC_FEAT_CMDLINE: return &r->info.cmdline;
	}
	return NULL;
}

static void set_owned_str(struct ptc_perf_reader *r, int feat, char *s)
{
	const char **slot = info_str_slot(r, feat);

	if (!slot || feat >= 16) {
		free(s);
		return;
	}
	free(r->strs[feat]);
	r->strs[feat] = s;
	*slot = s;
}

static int build_id_add(struct ptc_perf_reader *r, const uint8_t *p, size_t n)
{
	struct ptc_perf_build_id *b;
	uint16_t misc;
	size_t flen;
	char *fn;

	/* header(8) pid(4) build_id[24] filename[] */
	if (n < 8 + 4 + 24 + 1)
		return -1;
	if (r->info.nr_build_ids >= MAX_BUILD_IDS)
		return -1;
	if (r->info.nr_build_ids == r->cap_build_ids) {
		size_t cap = r->cap_build_ids ? 2 * r->cap_build_ids : 16;
		struct ptc_perf_build_id *nb = realloc(r->build_ids, cap * sizeof(*nb));
		if (!nb)
			return -1;
		r->build_ids = nb;
		r->cap_build_ids = cap;
		r->info.build_ids = nb;
	}
	misc = ptc_le16(p + 4);
	flen = strnlen((const char *)p + 36, n - 36);
	fn = malloc(flen + 1);
	if (!fn)
		return -1;
	memcpy(fn, p + 36, flen);
	fn[flen] = 0;
	b = &r->build_ids[r->info.nr_build_ids++];
	memset(b, 0, sizeof(*b));
	b->misc = misc;
	b->pid = (int32_t)ptc_le32(p + 8);
	memcpy(b->build_id, p + 12, 20);
	/* PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15): the size byte follows the id. */
	b->size = (misc & (1u << 15)) ? p[32] : 20;
	if (b->size > 20)
		b->size = 20;
	b->filename = fn;
	return 0;
}

static void pmu_add(struct ptc_perf_reader *r, uint32_t type, char *name)
{
	struct ptc_perf_extra *x = &r->extra;
	struct ptc_perf_pmu *np;

	if (x->nr_pmus >= 4096) {
		free(name);
		return;
	}
	if ((x->nr_pmus & (x->nr_pmus - 1)) == 0) {	/* doubling */
		np = realloc(r->pmus, (x->nr_pmus ? 2 * x->nr_pmus : 1) * sizeof(*np));
		if (!np) {
			free(name);
			return;
		}
		r->pmus = np;
		x->pmus = np;
	}
	np = r->pmus;
	np[x->nr_pmus].type = type;
	np[x->nr_pmus].name = name;
	x->nr_pmus++;
}

static void strlist_add(char ***list, size_t *nr, char *s)
{
	char **nl;

	if (!s)
		return;
	if (*nr >= 65536) {
		free(s);
		return;
	}
	/* capacity doubles: grow when the count reaches a power of two */
	if ((*nr & (*nr - 1)) == 0) {
		nl = realloc(*list, (*nr ? 2 * *nr : 1) * sizeof(*nl));
		if (!nl) {
			free(s);
			return;
		}
		*list = nl;
	}
	nl = *list;
	nl[(*nr)++] = s;
}

/* Parse one feature's bytes (file section or HEADER_FEATURE payload).
 * A malformed feature is a warning: the records can still be read. */
static void feature_parse(struct ptc_perf_reader *r, int feat, const uint8_t *p, size_t n,
			  uint64_t off)
{
	struct cur c = { p, n, 0, 0 };
	uint32_t i, nr;

	if (feat >= 0 && feat < PTC_FEAT_BITS)
		r->info.features[feat / 64] |= 1ull << (feat % 64);
	switch (feat) {
	case PTC_FEAT_HOSTNAME:
	case PTC_FEAT_OSRELEASE:
	case PTC_FEAT_VERSION:
	case PTC_FEAT_ARCH:
	case PTC_FEAT_CPUDESC:
	case PTC_FEAT_CPUID: {
		char *s = cur_string(&c);
		if (s)
			set_owned_str(r, feat, s);
		break;
	}
	case PTC_FEAT_NRCPUS:
		r->info.nr_cpus_avail = cur_u32(&c);
		r->info.nr_cpus_online = cur_u32(&c);
		break;
	case PTC_FEAT_TOTAL_MEM:
		r->info.total_mem_kb = cur_u64(&c);
		break;
	case PTC_FEAT_CLOCKID:
		r->info.clockid_res_ns = cur_u64(&c);
		break;
	case PTC_FEAT_CMDLINE: {
		size_t total = 0, cap = 0, len;
		char *joined = NULL, *s;
		nr = cur_u32(&c);
		for (i = 0; i < nr && !c.bad; i++) {
			s = cur_string(&c);
			if (!s)
				break;
			len = strlen(s);
			if (total + len + 2 > cap) {
				size_t ncap = 2 * (total + len + 2);
				char *nj = realloc(joined, ncap);
				if (!nj) {
					free(s);
					c.bad = 1;
					break;
				}
				joined = nj;
				cap = ncap;
			}
			if (total)
				joined[total++] = ' ';
			memcpy(joined + total, s, len);
			total += len;
			joined[total] = 0;
			free(s);
		}
		if (!joined)
			joined = strdup("");
		if (joined)
			set_owned_str(r, feat, joined);
		break;
	}
	case PTC_FEAT_EVENT_DESC: {
		uint32_t asz;
		nr = cur_u32(&c);
		asz = cur_u32(&c);
		for (i = 0; i < nr && !c.bad; i++) {
			uint32_t nids;
			char *name;
			const uint8_t *ids;
			struct attr_priv *a = NULL;
			if (!cur_bytes(&c, asz))
				break;
			nids = cur_u32(&c);
			name = cur_string(&c);
			ids = cur_bytes(&c, (uint64_t)nids * 8);
			if (!name)
				break;
			if (ids && nids)
				a = attr_by_id(r, ptc_le64(ids));
			if (!a && i < r->nr_attrs && r->nr_attrs == nr)
				a = &r->attrs[i];
			if (a && (!a->name || !a->name[0])) {
				attr_set_name(r, a, name, strlen(name));
				free(name);
			} else if (!a && r->nr_pending < MAX_ATTRS) {
				struct pending_name *np = realloc(r->pending, (r->nr_pending + 1) * sizeof(*np));
				if (np) {
					r->pending = np;
					np[r->nr_pending].has_id = ids && nids;
					np[r->nr_pending].id = ids && nids ? ptc_le64(ids) : 0;
					np[r->nr_pending].idx = i;
					np[r->nr_pending].name = name;
					r->nr_pending++;
				} else {
					free(name);
				}
			} else {
				free(name);
			}
		}
		break;
	}
	case PTC_FEAT_BUILD_ID:
		while (!c.bad && c.n - c.at >= 8) {
			uint16_t sz = ptc_le16(c.p + c.at + 6);
			if (sz < 8 || sz > c.n - c.at) {
				c.bad = 1;
				break;
			}
			build_id_add(r, c.p + c.at, sz);
			c.at += sz;
		}
		break;
	case PTC_FEAT_TRACING_DATA:
		if (!r->tracing && n <= TRACING_MAX) {
			r->tracing = malloc(n ? n : 1);
			if (r->tracing) {
				memcpy(r->tracing, p, n);
				r->info.tracing_data = r->tracing;
				r->info.tracing_data_size = n;
				r->info.tracing_data_offset = off;
			}
		}
		break;
	case PTC_FEAT_AUXTRACE:
		r->extra.auxtrace_index_entries = cur_u64(&c);
		break;
	case PTC_FEAT_SAMPLE_TIME:
		r->extra.sample_time_first = cur_u64(&c);
		r->extra.sample_time_last = cur_u64(&c);
		r->extra.have_sample_time = !c.bad;
		break;
	case PTC_FEAT_COMPRESSED:
		r->extra.comp_version = cur_u32(&c);
		r->extra.comp_type = cur_u32(&c);
		r->extra.comp_level = cur_u32(&c);
		r->extra.comp_ratio = cur_u32(&c);
		r->extra.comp_mmap_len = cur_u32(&c);
		r->extra.have_compressed = !c.bad;
		break;
	case PTC_FEAT_PMU_MAPPINGS:
		nr = cur_u32(&c);
		for (i = 0; i < nr && !c.bad; i++) {
			uint32_t type = cur_u32(&c);
			char *name = cur_string(&c);
			if (name)
				pmu_add(r, type, name);
		}
		break;
	case PTC_FEAT_CPU_TOPOLOGY:
		nr = cur_u32(&c);
		for (i = 0; i < nr && !c.bad; i++)
			strlist_add(&r->extra.core_siblings, &r->extra.nr_core_siblings, cur_string(&c));
		nr = cur_u32(&c);
		for (i = 0; i < nr && !c.bad; i++)
			strlist_add(&r->extra.thread_siblings, &r->extra.nr_thread_siblings,
				    cur_string(&c));
		/* per-CPU core/socket ids and die lists follow; info does not need them */
		break;
	case PTC_FEAT_HYBRID_TOPOLOGY:
		nr = cur_u32(&c);
		for (i = 0; i < nr && !c.bad; i++) {
			char *pmu = cur_string(&c);
			char *cpus = cur_string(&c);
			if (!pmu || !cpus) {
				free(pmu);
				free(cpus);
				break;
			}
			strlist_add(&r->extra.hybrid_pmus, &r->extra.nr_hybrid, pmu);
			strlist_add(&r->extra.hybrid_cpus, &r->extra.nr_hybrid_cpus, cpus);
		}
		break;
	default:
		/* Known to perf but not needed here, or unknown: skipped by size. */
		break;
	}
	if (c.bad)
		warn_at(r, off, "feature %d section of %zu bytes is malformed; ignored in part", feat, n);
}

/* File mode: read the feature bitmap's sections (after the data section). */
static void features_read(struct ptc_perf_reader *r, const uint8_t *hdr)
{
	uint64_t bitmap[4], tab_off = r->info.data_offset + r->info.data_size;
	int bit, nr = 0, idx = 0;
	uint8_t *sec;

	memcpy(bitmap, hdr + 72, 32);
	for (bit = 0; bit < PTC_FEAT_BITS; bit++)
		if (ptc_le64(&bitmap[bit / 64]) >> (bit % 64) & 1)
			nr++;
	if (!nr)
		return;
	sec = malloc((size_t)nr * 16);
	if (!sec)
		return;
	if (tab_off < r->info.data_offset || tab_off > r->file_size ||
	    (uint64_t)nr * 16 > r->file_size - tab_off) {
		warn_at(r, tab_off, "feature section table (%d entries) is past the end of the file "
			"at 0x%llx: features not read", nr, (unsigned long long)r->file_size);
		r->stats.features_unread += (uint64_t)nr;
		free(sec);
		return;
	}
	if (in_pread(r, sec, (size_t)nr * 16, tab_off) < 0) {
		r->failed = 0;
		warn_at(r, tab_off, "feature section table unreadable");
		r->stats.features_unread += (uint64_t)nr;
		free(sec);
		return;
	}
	for (bit = 0; bit < PTC_FEAT_BITS; bit++) {
		uint64_t off, size;
		uint8_t *p;
		if (!(ptc_le64(&bitmap[bit / 64]) >> (bit % 64) & 1))
			continue;
		off = ptc_le64(sec + 16 * idx);
		size = ptc_le64(sec + 16 * idx + 8);
		idx++;
		r->info.features[bit / 64] |= 1ull << (bit % 64);
		if (off > r->file_size || size > r->file_size - off) {
			warn_at(r, tab_off + 16 * (idx - 1),
				"feature %d section [0x%llx, +%llu) is past the end of the file at 0x%llx",
				bit, (unsigned long long)off, (unsigned long long)size,
				(unsigned long long)r->file_size);
			r->stats.features_unread++;
			continue;
		}
		if (size > FEAT_MAX) {
			warn_at(r, off, "feature %d section of %llu bytes is too large; skipped", bit,
				(unsigned long long)size);
			r->stats.features_unread++;
			continue;
		}
		p = malloc(size ? (size_t)size : 1);
		if (!p)
			continue;
		if (in_pread(r, p, (size_t)size, off) == 0)
			feature_parse(r, bit, p, (size_t)size, off);
		r->failed = 0;
		free(p);
	}
	free(sec);
}

/* ---- open ----------------------------------------------------------- */

static int open_file_mode(struct ptc_perf_reader *r)
{
	uint8_t hdr[PTC_PERF_FILE_HEADER_SIZE];
	uint64_t attr_size, attrs_off, attrs_size, nattrs, i;
	uint8_t *attrs;

	if (!r->seekable)
		return fail_at(r, ptc_err_unsupported, 0,
			       "a file-mode perf.data must be read from a file, not a pipe "
			       "(record with `perf record -o -` for pipe mode)");
	if (r->file_size < PTC_PERF_FILE_HEADER_SIZE)
		return fail_at(r, ptc_err_truncated, 0, "file of %llu bytes is shorter than the %d-byte header",
			       (unsigned long long)r->file_size, PTC_PERF_FILE_HEADER_SIZE);
	if (in_pread(r, hdr, sizeof(hdr), 0) < 0)
		return r->failed;
	attr_size = ptc_le64(hdr + 16);
	attrs_off = ptc_le64(hdr + 24);
	attrs_size = ptc_le64(hdr + 32);
	r->info.data_offset = ptc_le64(hdr + 40);
	r->info.data_size = ptc_le64(hdr + 48);

	if (r->info.data_offset < PTC_PERF_FILE_HEADER_SIZE ||
	    r->info.data_offset > r->file_size)
		return fail_at(r, ptc_err_bad_size, 40, "data section offset 0x%llx outside the file (%llu bytes)",
			       (unsigned long long)r->info.data_offset, (unsigned long long)r->file_size);
	if (r->info.data_size > UINT64_MAX - r->info.data_offset)
		return fail_at(r, ptc_err_bad_size, 48, "data section size %llu overflows",
			       (unsigned long long)r->info.data_size);
	r->data_end = r->info.data_offset + r->info.data_size;
	if (r->data_end > r->file_size)
		warn_at(r, 48, "data section [0x%llx, 0x%llx) runs past the end of the file at 0x%llx",
			(unsigned long long)r->info.data_offset, (unsigned long long)r->data_end,
			(unsigned long long)r->file_size);

	/* attrs: attr_size-byte entries of {perf_event_attr, ids section} */
	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096)
		return fail_at(r, ptc_err_bad_size, 16, "attribute entry size %llu is impossible",
			       (unsigned long long)attr_size);
	if (attrs_off > r->file_size || attrs_size > r->file_size - attrs_off)
		return fail_at(r, ptc_err_truncated, 24,
			       "attribute section [0x%llx, +%llu) is past the end of the file at 0x%llx",
			       (unsigned long long)attrs_off, (unsigned long long)attrs_size,
			       (unsigned long long)r->file_size);
	if (attrs_size % attr_size)
		return fail_at(r, ptc_err_bad_size, 32, "attribute section size %llu is not a multiple of %llu",
			       (unsigned long long)attrs_size, (unsigned long long)attr_size);
	nattrs = attrs_size / attr_size;
	if (nattrs > MAX_ATTRS)
		return fail_at(r, ptc_err_bad_size, 32, "%llu events", (unsigned long long)nattrs);
	attrs = malloc(attrs_size ? (size_t)attrs_size : 1);
	if (!attrs)
		return fail_at(r, ptc_err_nomem, 24, "out of memory");
	if (in_pread(r, attrs, (size_t)attrs_size, attrs_off) < 0) {
		free(attrs);
		return r->failed;
	}
	for (i = 0; i < nattrs; i++) {
		const uint8_t *e = attrs + i * attr_size;
		uint64_t ids_off = ptc_le64(e + attr_size - 16);
		uint64_t ids_size = ptc_le64(e + attr_size - 8);
		uint64_t eoff = attrs_off + i * attr_size;
		uint8_t *ids = NULL;
		int err;

		if (ids_off > r->file_size || ids_size > r->file_size - ids_off || ids_size % 8 ||
		    ids_size / 8 > MAX_IDS) {
			free(attrs);
			return fail_at(r, ptc_err_bad_size, eoff + attr_size - 16,
				       "ids of event %llu [0x%llx, +%llu) outside the file",
				       (unsigned long long)i, (unsigned long long)ids_off,
				       (unsigned long long)ids_size);
		}
		if (ids_size) {
			ids = malloc((size_t)ids_size);
			if (!ids) {
				free(attrs);
				return fail_at(r, ptc_err_nomem, ids_off, "out of memory");
			}
			if (in_pread(r, ids, (size_t)ids_size, ids_off) < 0) {
				free(ids);
				free(attrs);
				return r->failed;
			}
		}
		err = attr_add(r, eoff, e, (size_t)attr_size - 16, ids, (size_t)(ids_size / 8));
		free(ids);
		if (err < 0) {
			free(attrs);
			return err;
		}
	}
	free(attrs);
	features_read(r, hdr);

	return in_lseek(r, r->info.data_offset, r->info.data_offset);
}

int ptc_perf_open_fd(struct ptc_perf_reader **out, int fd, const char *name,
		     char *errmsg, size_t errlen)
{
	struct ptc_perf_reader *r;
	struct stat st;
	uint64_t magic, hsize;
	ssize_t got;
	int err = 0;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ptc_err_nomem;
	r->fd = fd;
	r->name = strdup(name ? name : "(input)");
	r->buf = malloc(IN_CAP);
	r->scratch = malloc(REC_MAX + 8);
	r->data_end = UINT64_MAX;
	r->tmin[0] = r->tmin[1] = r->tmin[2] = UINT64_MAX;
	if (!r->name || !r->buf || !r->scratch) {
		err = -ptc_err_nomem;
		snprintf(r->errmsg, sizeof(r->errmsg), "%s: out of memory", name);
		goto fail;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) == 0) {
		r->seekable = 1;
		r->file_size = (uint64_t)st.st_size;
	}

	got = in_fill(r, 16);
	if (got < 0) {
		err = (int)got;
		goto fail;
	}
	if (got < 8) {
		/* (an output of a run that was stopped, as a rule) */
		err = fail_at(r, ptc_err_truncated, 0, got ? "%zd bytes: too short for a perf.data header "
			      "or a ptconv trace's" : "empty file (%zd bytes): not a perf.data file nor a ptconv trace",
			      got);
		goto fail;
	}
	magic = ptc_le64(r->buf);
	if (magic == PTC_PERF_MAGIC_SWAPPED) {
		err = fail_at(r, ptc_err_foreign_endian, 0,
			      "byte-swapped magic: the file was written on a big-endian machine, "
			      "which ptconv does not read");
		goto fail;
	}
	if (magic != PTC_PERF_MAGIC) {
		err = fail_at(r, ptc_err_bad_magic, 0, "not a perf.data file (no PERFILE2 magic)");
		goto fail;
	}
	if (got < 16) {
		err = fail_at(r, ptc_err_truncated, 8, "input ends inside the header");
		goto fail;
	}
	hsize = ptc_le64(r->buf + 8);
	if (hsize == PTC_PERF_PIPE_HEADER_SIZE) {
		r->info.pipe_mode = 1;
		r->pos = 16;
	} else if (hsize == PTC_PERF_FILE_HEADER_SIZE) {
		err = open_file_mode(r);
		if (err < 0)
			goto fail;
	} else {
		err = fail_at(r, ptc_err_unsupported, 8, "header size %llu is neither 104 (file) nor 16 (pipe)",
			      (unsigned long long)hsize);
		goto fail;
	}
	r->zs = ZSTD_createDStream();
	r->zin = malloc(Z_IN_CAP);
	r->zout = malloc(Z_OUT_CAP);
	if (!r->zs || !r->zin || !r->zout) {
		err = fail_at(r, ptc_err_nomem, 0, "out of memory");
		goto fail;
	}
	ZSTD_initDStream(r->zs);
	/* Bound what a hostile frame can make the decoder allocate. */
	ZSTD_DCtx_setParameter(r->zs, ZSTD_d_windowLogMax, 27);
	*out = r;
	return 0;
fail:
	if (errmsg && errlen)
		snprintf(errmsg, errlen, "%s", r->errmsg[0] ? r->errmsg : ptc_errstr(err));
	r->own_fd = 0;
	ptc_perf_close(r);
	return err;
}

int ptc_perf_open(struct ptc_perf_reader **out, const char *path, char *errmsg, size_t errlen)
{
	int fd, err;

	*out = NULL;
	if (!strcmp(path, "-"))
		return ptc_perf_open_fd(out, 0, "(stdin)", errmsg, errlen);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errmsg && errlen)
			snprintf(errmsg, errlen, "%s: %s", path, strerror(errno));
		return errno == ENOENT ? -ptc_err_not_found : -ptc_err_io;
	}
	err = ptc_perf_open_fd(out, fd, path, errmsg, errlen);
	if (err < 0) {
		close(fd);
		return err;
	}
	(*out)->own_fd = 1;
	return 0;
}

void ptc_perf_close(struct ptc_perf_reader *r)
{
	size_t i;

	if (!r)
		return;
	if (r->own_fd)
		close(r->fd);
	for (i = 0; i < r->nr_attrs; i++) {
		free(r->attrs[i].ids);
		free(r->attrs[i].name);
	}
	free(r->attrs);
	free(r->idmap);
	for (i = 0; i < r->nr_pending; i++)
		free(r->pending[i].name);
	free(r->pending);
	for (i = 0; i < 16; i++)
		free(r->strs[i]);
	for (i = 0; i < r->info.nr_build_ids; i++)
		free((char *)r->build_ids[i].filename);
	free(r->build_ids);
	free(r->tracing);
	for (i = 0; i < r->extra.nr_pmus; i++)
		free((char *)r->pmus[i].name);
	free(r->pmus);
	for (i = 0; i < r->extra.nr_core_siblings; i++)
		free(r->extra.core_siblings[i]);
	free(r->extra.core_siblings);
	for (i = 0; i < r->extra.nr_thread_siblings; i++)
		free(r->extra.thread_siblings[i]);
	free(r->extra.thread_siblings);
	for (i = 0; i < r->extra.nr_hybrid; i++)
		free(r->extra.hybrid_pmus[i]);
	free(r->extra.hybrid_pmus);
	for (i = 0; i < r->extra.nr_hybrid_cpus; i++)
		free(r->extra.hybrid_cpus[i]);
	free(r->extra.hybrid_cpus);
	for (i = 0; i < r->nr_warnings; i++)
		free(r->warnings[i]);
	for (i = 0; i < r->nr_skips; i++)
		free((char *)r->skips[i].message);
	free(r->skips);
	free(r->vbuf);
	free(r->aq);
	if (r->zs)
		ZSTD_freeDStream(r->zs);
	free(r->zin);
	free(r->zout);
	free(r->buf);
	free(r->scratch);
	free(r->name);
	free(r);
}

/* ---- sample ids ----------------------------------------------------- */

static int is_kernel_type(uint32_t t)
{
	return t >= PERF_RECORD_MMAP && t <= PERF_RECORD_AUX_OUTPUT_HW_ID;
}

static int is_known_type(uint32_t t)
{
	return is_kernel_type(t) || (t >= PTC_REC_HEADER_ATTR && t < PTC_REC_USER_MAX);
}

/* Where every event puts its id: the word of a sample after its header
 * (0 first), and the word of another record's sample_id trailer counted
 * from its end (1 last); -1 or -2 when the events differ. */
static int sample_id_word(const struct ptc_perf_reader *r)
{
	return r->all_identifier ? 0 : r->common_id_pos;
}

static int trailer_id_word(const struct ptc_perf_reader *r)
{
	return r->all_identifier ? 1 : r->common_is_pos;
}

/* Which attr describes this record's sample fields. */
static const struct attr_priv *attr_for(struct ptc_perf_reader *r, const uint8_t *d, uint16_t size,
					uint32_t type)
{
	const struct attr_priv *a;
	int pos;
	uint64_t id;

	if (!r->nr_attrs)
		return NULL;
	if (r->uniform || r->nr_attrs == 1)
		return &r->attrs[0];
	if (type == PERF_RECORD_SAMPLE) {
		pos = sample_id_word(r);
		if (pos < 0 || 8 + 8 * (size_t)pos + 8 > size)
			return &r->attrs[0];
		id = ptc_le64(d + 8 + 8 * pos);
	} else {
		pos = trailer_id_word(r);
		if (pos < 0 || 8 + 8 * (size_t)pos > size)
			return &r->attrs[0];
		id = ptc_le64(d + size - 8 * pos);
	}
	a = attr_by_id(r, id);
	return a ? a : &r->attrs[0];
}

static void parse_sid(struct ptc_perf_reader *r, struct ptc_perf_record *rec)
{
	struct ptc_perf_sample_id *s = &rec->sid;
	const struct attr_priv *a;
	const uint8_t *p, *end;
	uint64_t st;

	memset(s, 0, sizeof(*s));
	if (rec->type >= PTC_REC_HEADER_ATTR || rec->type == 0)
		return;
	a = attr_for(r, rec->data, rec->size, rec->type);
	if (!a)
		return;
	st = a->pub.attr.sample_type;
	end = rec->data + rec->size;
	if (rec->type == PERF_RECORD_SAMPLE) {
		p = rec->data + 8;
#define TAKE(n) ((size_t)(end - p) >= (n) ? (p += (n), p - (n)) : NULL)
		if (st & PERF_SAMPLE_IDENTIFIER) {
			const uint8_t *q = TAKE(8);
			if (!q)
				goto bad;
			s->id = ptc_le64(q);
			s->valid |= PTC_SID_IDENTIFIER | PTC_SID_ID;
		}
		if (st & PERF_SAMPLE_IP) {
			const uint8_t *q = TAKE(8);
			if (!q)
				goto bad;
			s->ip = ptc_le64(q);
			s->valid |= PTC_SID_IP;
		}
		if (st & PERF_SAMPLE_TID) {
			const uint8_t *q = TAKE(8);
			if (!q)
				goto bad;
			s->pid = ptc_le32(q);
			s->tid = ptc_le32(q + 4);
			s->valid |= PTC_SID_TID;
		}
		if (st & PERF_SAMPLE_TIME) {
			const uint8_t *q = TAKE(8);
			if (!q)
				goto bad;
			s->time = ptc_le64(q);
			s->valid |= PTC_SID_TIME;
		}
		if ((st & PERF_SAMPLE_ADDR) && !TAKE(8))
			goto bad;
		if (st & PERF_SAMPLE_ID) {
			const uint8_t *q = TAKE(8);
			if (!q)
				goto bad;
			s->id = ptc_le64(q);
			s->valid |= PTC_SID_ID;
		}
		if (st & PERF_SAMPLE_STREAM_ID) {
			const uint8_t *q = TAKE(8);
			if (!q)
				goto bad;
			s->stream_id = ptc_le64(q);
			s->valid |= PTC_SID_STREAM_ID;
		}
		if (st & PERF_SAMPLE_CPU) {
			const uint8_t *q = TAKE(8);
			if (!q)
				goto bad;
			s->cpu = ptc_le32(q);
			s->valid |= PTC_SID_CPU;
		}
#undef TAKE
		return;
	}
	if (!a->pub.attr.sample_id_all)
		return;
	{
		size_t n = 8 * (size_t)(!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
					!!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
					!!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER));
		if (!n)
			return;
		if (rec->size < 8 + n)
			goto bad;
		p = end - n;
	}
	if (st & PERF_SAMPLE_TID) {
		s->pid = ptc_le32(p);
		s->tid = ptc_le32(p + 4);
		s->valid |= PTC_SID_TID;
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		s->time = ptc_le64(p);
		s->valid |= PTC_SID_TIME;
		p += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		s->id = ptc_le64(p);
		s->valid |= PTC_SID_ID;
		p += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		s->stream_id = ptc_le64(p);
		s->valid |= PTC_SID_STREAM_ID;
		p += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		s->cpu = ptc_le32(p);
		s->valid |= PTC_SID_CPU;
		p += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		s->id = ptc_le64(p);
		s->valid |= PTC_SID_IDENTIFIER | PTC_SID_ID;
	}
	return;
bad:
	memset(s, 0, sizeof(*s));
	r->stats.bad_sample_ids++;
}

/* ---- in-stream header records --------------------------------------- */

static int handle_header_attr(struct ptc_perf_reader *r, const struct ptc_perf_record *rec)
{
	const uint8_t *d = rec->data;
	uint32_t asize;

	if (rec->size < 8 + PERF_ATTR_SIZE_VER0)
		return fail_at(r, ptc_err_bad_record, rec->offset, "HEADER_ATTR of %u bytes is too short",
			       rec->size);
	asize = ptc_le32(d + 8 + 4);
	if (!asize)
		asize = PERF_ATTR_SIZE_VER0;
	if (asize > rec->size - 8u)
		return fail_at(r, ptc_err_bad_record, rec->offset,
			       "HEADER_ATTR attribute size %u exceeds the record (%u bytes)", asize,
			       rec->size);
	return attr_add(r, rec->offset, d + 8, asize, d + 8 + asize, (rec->size - 8 - asize) / 8);
}

static void handle_event_update(struct ptc_perf_reader *r, const struct ptc_perf_record *rec)
{
	const uint8_t *d = rec->data;
	struct attr_priv *a;

	if (rec->size < 24) {
		warn_at(r, rec->offset, "EVENT_UPDATE of %u bytes is too short", rec->size);
		return;
	}
	/* PERF_EVENT_UPDATE__NAME (2): a NUL-terminated name follows */
	if (ptc_le64(d + 8) != 2)
		return;
	a = attr_by_id(r, ptc_le64(d + 16));
	if (a)
		attr_set_name(r, a, (const char *)d + 24, strnlen((const char *)d + 24, rec->size - 24u));
}

static void handle_time_conv(struct ptc_perf_reader *r, const struct ptc_perf_record *rec)
{
	const uint8_t *d = rec->data;

	if (rec->size < 32) {
		warn_at(r, rec->offset, "TIME_CONV of %u bytes is too short", rec->size);
		return;
	}
	r->info.have_time_conv = 1;
	r->info.time_shift = ptc_le64(d + 8);
	r->info.time_mult = ptc_le64(d + 16);
	r->info.time_zero = ptc_le64(d + 24);
	if (rec->size >= 56) {
		r->info.time_cycles = ptc_le64(d + 32);
		r->info.time_mask = ptc_le64(d + 40);
		r->info.cap_user_time_zero = d[48];
		r->info.cap_user_time_short = d[49];
	}
}

/* Process what the reader itself needs from a record; <0 is fatal. */
static int handle_record(struct ptc_perf_reader *r, struct ptc_perf_record *rec)
{
	switch (rec->type) {
	case PTC_REC_HEADER_ATTR:
		return handle_header_attr(r, rec);
	case PTC_REC_HEADER_FEATURE:
		if (rec->size < 16) {
			warn_at(r, rec->offset, "HEADER_FEATURE of %u bytes is too short", rec->size);
			return 0;
		}
		{
			uint64_t feat = ptc_le64(rec->data + 8);
			if (feat < PTC_FEAT_BITS)
				feature_parse(r, (int)feat, rec->data + 16, rec->size - 16u, rec->offset + 16);
		}
		return 0;
	case PTC_REC_HEADER_BUILD_ID:
		if (build_id_add(r, rec->data, rec->size) < 0)
			warn_at(r, rec->offset, "HEADER_BUILD_ID of %u bytes is malformed", rec->size);
		return 0;
	case PTC_REC_EVENT_UPDATE:
		handle_event_update(r, rec);
		return 0;
	case PTC_REC_TIME_CONV:
		handle_time_conv(r, rec);
		return 0;
	}
	return 0;
}

/* Hand out a record whose bytes are at p: copied to an aligned buffer when
 * they are not 8-byte aligned, so that callers may read u64 arrays. */
static void rec_set_data(struct ptc_perf_reader *r, struct ptc_perf_record *rec, const uint8_t *p)
{
	if ((uintptr_t)p & 7) {
		memcpy(r->scratch, p, rec->size);
		p = (const uint8_t *)r->scratch;
	}
	rec->data = p;
}

/* ---- damage and resynchronisation ------------------------------------ */

/* A record header is taken for damage when no writer of perf.data could
 * have written it.  The kernel's records are multiples of 8 bytes
 * (kernel/events/core.c warns when a sample is not; COMM and MMAP names are
 * padded to 8) and so are perf's own, but for three: HEADER_FEATURE in pipe
 * mode (84 bytes in the recordings of perf 4.14 and 6.16), TRACING_DATA
 * (header.size 12 in older perfs) and COMPRESSED (its payload unpadded,
 * which COMPRESSED2 replaced); after these the records that follow are no
 * longer 8-aligned to the data section. */
static int size_may_be_odd(uint32_t t)
{
	return t == PTC_REC_HEADER_FEATURE || t == PTC_REC_HEADER_TRACING_DATA ||
	       t == PTC_REC_COMPRESSED;
}

/* The least size of a record of type t, header included and the sample_id
 * trailer not: its fixed fields, names padded to at least 8 bytes. */
static unsigned type_min_size(uint32_t t)
{
	static const uint8_t kernel[] = {
		[PERF_RECORD_MMAP] = 48, [PERF_RECORD_LOST] = 24, [PERF_RECORD_COMM] = 24,
		[PERF_RECORD_EXIT] = 32, [PERF_RECORD_THROTTLE] = 32, [PERF_RECORD_UNTHROTTLE] = 32,
		[PERF_RECORD_FORK] = 32, [PERF_RECORD_READ] = 24, [PERF_RECORD_SAMPLE] = 8,
		[PERF_RECORD_MMAP2] = 80, [PERF_RECORD_AUX] = 32, [PERF_RECORD_ITRACE_START] = 16,
		[PERF_RECORD_LOST_SAMPLES] = 16, [PERF_RECORD_SWITCH] = 8,
		[PERF_RECORD_SWITCH_CPU_WIDE] = 16, [PERF_RECORD_NAMESPACES] = 24,
		/* KSYMBOL, BPF_EVENT, CGROUP, TEXT_POKE, AUX_OUTPUT_HW_ID */
		[17] = 32, [18] = 24, [19] = 24, [20] = 24, [PERF_RECORD_AUX_OUTPUT_HW_ID] = 16,
	};

	if (t < sizeof(kernel) && kernel[t])
		return kernel[t];
	switch (t) {
	case PTC_REC_HEADER_ATTR:
		return 8 + PERF_ATTR_SIZE_VER0;
	case PTC_REC_HEADER_TRACING_DATA:
		return 12;
	case PTC_REC_AUXTRACE:
		return PTC_AUXTRACE_RECORD_SIZE;
	case PTC_REC_TIME_CONV:
		return 32;
	case PTC_REC_HEADER_FEATURE:
	case PTC_REC_COMPRESSED2:
	case PTC_REC_AUXTRACE_INFO:
		return 16;
	}
	return 8;
}

/* The size of a kernel record of type t that has no variable part, header
 * included and the sample_id trailer not; 0 for the others. */
static unsigned fixed_size(uint32_t t)
{
	switch (t) {
	case PERF_RECORD_LOST:
		return 24;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_AUX:
		return 32;
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_SWITCH_CPU_WIDE:
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		return 16;
	case PERF_RECORD_SWITCH:
		return 8;
	}
	return 0;
}

static int sid_size_max(const struct ptc_perf_reader *r);
static int sid_size_min(const struct ptc_perf_reader *r);
static int peek(struct ptc_perf_reader *r, uint64_t off, void *dst, size_t n);

/* Where the string of a kernel record of type t that ends in one (a file
 * name, a command) begins, header included; 0 for the others. */
static unsigned string_at(uint32_t t)
{
	switch (t) {
	case PERF_RECORD_MMAP:
		return 40;
	case PERF_RECORD_COMM:
		return 16;
	case PERF_RECORD_MMAP2:
		return 72;
	}
	return 0;
}

/* The size of the sample at off (its header says size) that its event's
 * sample_type and the counts in it give (the kernel's layout,
 * perf_event.h), or 0 when that cannot be told: the event unknown, a
 * sample_type bit this reader does not know, or bytes it cannot see.  A
 * count that runs past size gives more than size.  (A sample's size
 * grown by damage would swallow the records after it unseen.) */
static uint64_t sample_size(const struct ptc_perf_reader *r, uint64_t off, uint16_t size)
{
	/* (their numbers: older kernel headers lack the newer ones) */
	enum {
		S_IP = 1 << 0, S_TID = 1 << 1, S_TIME = 1 << 2, S_ADDR = 1 << 3, S_READ = 1 << 4,
		S_CALLCHAIN = 1 << 5, S_ID = 1 << 6, S_CPU = 1 << 7, S_PERIOD = 1 << 8,
		S_STREAM_ID = 1 << 9, S_RAW = 1 << 10, S_BRANCH_STACK = 1 << 11, S_REGS_USER = 1 << 12,
		S_STACK_USER = 1 << 13, S_WEIGHT = 1 << 14, S_DATA_SRC = 1 << 15, S_IDENTIFIER = 1 << 16,
		S_TRANSACTION = 1 << 17, S_REGS_INTR = 1 << 18, S_PHYS_ADDR = 1 << 19, S_AUX = 1 << 20,
		S_CGROUP = 1 << 21, S_DATA_PAGE_SIZE = 1 << 22, S_CODE_PAGE_SIZE = 1 << 23,
		S_WEIGHT_STRUCT = 1 << 24, S_KNOWN = (1 << 25) - 1,
		F_ENABLED = 1 << 0, F_RUNNING = 1 << 1, F_ID = 1 << 2, F_GROUP = 1 << 3, F_LOST = 1 << 4,
		B_HW_INDEX = 1 << 17, B_COUNTERS = 1 << 19,
	};
	struct ptc_perf_reader *rw = (struct ptc_perf_reader *)r;
	const struct perf_event_attr *attr;
	uint64_t st, at = 8, v;
	uint8_t w[8];

	if (!r->nr_attrs)
		return 0;
	if (r->uniform || r->nr_attrs == 1) {
		attr = &r->attrs[0].pub.attr;
	} else {
		int pos = sample_id_word(r);
		const struct attr_priv *a;

		if (pos < 0 || 8 + 8 * (unsigned)pos + 8 > size || !peek(rw, off + 8 + 8 * (unsigned)pos, w, 8) ||
		    !(a = attr_by_id(rw, ptc_le64(w))))
			return 0;
		attr = &a->pub.attr;
	}
	st = attr->sample_type;
	if (st & ~(uint64_t)S_KNOWN)
		return 0;
/* the u64 count at at, or the record's end passed */
#define COUNT(v)                                                        \
	do {                                                            \
		if (at + 8 > size)                                      \
			return at + 8;                                  \
		if (!peek(rw, off + at, w, 8))                          \
			return 0;                                       \
		(v) = ptc_le64(w);                                      \
		if ((v) > 65536)                                        \
			return 65536 + at;                              \
	} while (0)
	at += 8 * (uint64_t)__builtin_popcountll(st & (S_IDENTIFIER | S_IP | S_TID | S_TIME | S_ADDR | S_ID |
						       S_STREAM_ID | S_CPU | S_PERIOD));
	if (st & S_READ) {
		uint64_t rf = attr->read_format;
		unsigned per = 1 + !!(rf & F_ID) + !!(rf & F_LOST);

		if (rf & F_GROUP) {
			COUNT(v);
			at += 8 + 8 * (!!(rf & F_ENABLED) + !!(rf & F_RUNNING)) + 8 * per * v;
		} else {
			at += 8 * (per + !!(rf & F_ENABLED) + !!(rf & F_RUNNING));
		}
	}
	if (st & S_CALLCHAIN) {
		COUNT(v);
		at += 8 + 8 * v;
	}
	if (st & S_RAW) {
		/* a u32 size, counting the padding to 8 after it */
		if (at + 4 > size)
			return at + 4;
		if (!peek(rw, off + at, w, 4))
			return 0;
		at += 4 + (uint64_t)ptc_le32(w);
	}
	if (st & S_BRANCH_STACK) {
		uint64_t bst = attr->branch_sample_type;

		COUNT(v);
		at += 8 + (bst & B_HW_INDEX ? 8 : 0) + 24 * v + (bst & B_COUNTERS ? 8 * v : 0);
	}
	if (st & S_REGS_USER) {
		COUNT(v);	/* the ABI: none, no registers */
		at += 8 + (v ? 8 * (uint64_t)__builtin_popcountll(attr->sample_regs_user) : 0);
	}
	if (st & S_STACK_USER) {
		COUNT(v);	/* the bytes, then their dynamic size when any */
		at += 8 + (v ? v + 8 : 0);
	}
	at += 8 * (uint64_t)(!!(st & (S_WEIGHT | S_WEIGHT_STRUCT)) + !!(st & S_DATA_SRC) + !!(st & S_TRANSACTION));
	if (st & S_REGS_INTR) {
		COUNT(v);
		at += 8 + (v ? 8 * (uint64_t)__builtin_popcountll(attr->sample_regs_intr) : 0);
	}
	at += 8 * (uint64_t)__builtin_popcountll(st & (S_PHYS_ADDR | S_CGROUP | S_DATA_PAGE_SIZE | S_CODE_PAGE_SIZE));
	if (st & S_AUX) {
		COUNT(v);
		at += 8 + v;
	}
#undef COUNT
	return at;
}

/* Why the header (type, misc, size) at off cannot be a record's, or NULL;
 * the reason is written to buf when there is one (a scan passes none).
 * strict: also what a resynchronisation point must satisfy (a known type,
 * the kernel's misc bits).  Records inside a compressed record have no
 * place in the data section (inner). */
#define BAD(...) (buf ? (snprintf(buf, len, __VA_ARGS__), buf) : "")
static const char *header_bad(const struct ptc_perf_reader *r, uint64_t off, uint32_t type,
			      uint16_t misc, uint16_t size, int strict, int inner, char *buf, size_t len)
{
	if (size < 8)
		return BAD("record of type %u has size %u (< 8)", type, size);
	if (!is_known_type(type)) {
		/* a type of a newer perf is skipped; a type no perf will use
		 * for long (its own are below 100), or an odd size, is not a
		 * record */
		if (strict || type >= 65536 || size % 8)
			return BAD("record of unknown type %u with size %u", type, size);
		return NULL;
	}
	if (size % 8 && !size_may_be_odd(type))
		return BAD("%s record of %u bytes, not a multiple of 8", ptc_perf_record_name(type), size);
	if (size < type_min_size(type))
		return BAD("%s record of %u bytes, shorter than its fields (%u)", ptc_perf_record_name(type),
			   size, type_min_size(type));
	/* a record of fixed fields larger than they and the recording's
	 * sample_id trailer: a damaged size, which would swallow the records
	 * after it */
	if (is_kernel_type(type) && fixed_size(type) && sid_size_max(r) >= 0 &&
	    size > fixed_size(type) + (unsigned)sid_size_max(r))
		return BAD("%s record of %u bytes, longer than its fields and sample id (%u)",
			   ptc_perf_record_name(type), size, fixed_size(type) + (unsigned)sid_size_max(r));
	/* ... or shorter: its sample id (thread, time, CPU) would be read
	 * from the wrong bytes */
	if (is_kernel_type(type) && fixed_size(type) && sid_size_min(r) > 0 &&
	    size < fixed_size(type) + (unsigned)sid_size_min(r))
		return BAD("%s record of %u bytes, shorter than its fields and sample id (%u)",
			   ptc_perf_record_name(type), size, fixed_size(type) + (unsigned)sid_size_min(r));
	/* ... and one of a string: longer than the string (to its NUL,
	 * padded to 8) and the trailer */
	if (!inner && is_kernel_type(type) && string_at(type) && size > string_at(type) &&
	    sid_size_max(r) >= 0) {
		char str[4096];
		size_t n = size - string_at(type) < sizeof(str) ? size - string_at(type) : sizeof(str), k;

		if (peek((struct ptc_perf_reader *)r, off + string_at(type), str, n)) {
			for (k = 0; k < n && str[k]; k++)
				;
			if (k < n && size > ((string_at(type) + k + 1 + 7) & ~7u) + (unsigned)sid_size_max(r))
				return BAD("%s record of %u bytes, longer than its string and sample id (%u)",
					   ptc_perf_record_name(type), size,
					   ((string_at(type) + (unsigned)k + 1 + 7) & ~7u) + (unsigned)sid_size_max(r));
		}
	}
	/* ... and a sample: the size its event's sample_type gives it */
	if (!inner && type == PERF_RECORD_SAMPLE) {
		uint64_t want = sample_size(r, off, size);

		if (want && want != size)
			return BAD("SAMPLE record of %u bytes, its event's sample_type makes it %llu", size,
				   (unsigned long long)want);
	}
	if (type == PTC_REC_AUXTRACE && size != PTC_AUXTRACE_RECORD_SIZE)
		return BAD("AUXTRACE record of %u bytes (perf's are %d)", size, PTC_AUXTRACE_RECORD_SIZE);
	if (!inner && off < r->data_end && size > r->data_end - off)
		return BAD("%s record of %u bytes runs past the end of the data section at 0x%llx",
			   ptc_perf_record_name(type), size, (unsigned long long)r->data_end);
	/* the kernel's misc: a CPU mode 0..5 and flags in bits 12..15 */
	if (strict && is_kernel_type(type) && ((misc & 0x0ff8) || (misc & 7) > 5))
		return BAD("%s record with misc 0x%x", ptc_perf_record_name(type), misc);
	return NULL;
}
#undef BAD

/* n bytes at input offset off: from the window, else (a regular file) read
 * there.  0 when they cannot be had: a stream beyond the window, the end. */
static int peek(struct ptc_perf_reader *r, uint64_t off, void *dst, size_t n)
{
	uint8_t *p = dst;

	if (off >= r->base && off - r->base <= r->len && r->len - (off - r->base) >= n) {
		memcpy(dst, r->buf + (off - r->base), n);
		return 1;
	}
	if (!r->seekable || off > r->file_size || n > r->file_size - off)
		return 0;
	while (n) {
		ssize_t got = pread(r->fd, p, n, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return 0;
		p += got;
		off += (uint64_t)got;
		n -= (size_t)got;
	}
	return 1;
}

/* Move the window to input offset to: forward on any input, back only in
 * a regular file. */
static int in_seek(struct ptc_perf_reader *r, uint64_t to)
{
	if (to >= r->base && to - r->base <= r->len) {
		r->pos = (size_t)(to - r->base);
		return 0;
	}
	if (to > in_off(r))
		return in_skip(r, to - in_off(r));
	if (!r->seekable)
		return fail_at(r, ptc_err_internal, to, "cannot go back in a stream");
	return in_lseek(r, to, to);
}

/* The size of the sample_id trailer of event k's records. */
static int event_sid_size(const struct ptc_perf_reader *r, size_t k)
{
	uint64_t st = r->attrs[k].pub.attr.sample_type;

	if (!r->attrs[k].pub.attr.sample_id_all)
		return 0;
	return 8 * (!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ID) +
		    !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) +
		    !!(st & PERF_SAMPLE_IDENTIFIER));
}

/* The sample_id trailer's size when every record carries the same one
 * (a single event, or events alike), else -1. */
static int sid_size(const struct ptc_perf_reader *r)
{
	if (!r->nr_attrs || !(r->uniform || r->nr_attrs == 1))
		return -1;
	return event_sid_size(r, 0);
}

/* The largest sample_id trailer of the recording's events; -1 before
 * they are known. */
static int sid_size_max(const struct ptc_perf_reader *r)
{
	int max = -1, n;
	size_t k;

	for (k = 0; k < r->nr_attrs; k++)
		if ((n = event_sid_size(r, k)) > max)
			max = n;
	return max;
}

/* The smallest sample_id trailer of the recording's events; -1 before
 * they are known. */
static int sid_size_min(const struct ptc_perf_reader *r)
{
	int min = -1, n;
	size_t k;

	for (k = 0; k < r->nr_attrs; k++)
		if ((n = event_sid_size(r, k)) < min || min < 0)
			min = n;
	return min;
}

/* An AUXTRACE record's fields (p, 48 bytes) as perf writes them: the
 * payload padded to 8, the reserved field 0, a sane queue, and the cpu and
 * tid its queue's earlier records had. */
static int aux_fields_ok(const struct ptc_perf_reader *r, const uint8_t *p)
{
	uint64_t asz = ptc_le64(p + 8);
	uint32_t idx = ptc_le32(p + 32), tid = ptc_le32(p + 36), cpu = ptc_le32(p + 40);

	if (asz % 8 || ptc_le32(p + 44) || idx >= MAX_QUEUES || (cpu != UINT32_MAX && cpu >= 65536))
		return 0;
	return idx >= r->nr_aq || !r->aq[idx].seen || (r->aq[idx].cpu == cpu && r->aq[idx].tid == tid);
}

static void aux_queue_seen(struct ptc_perf_reader *r, const uint8_t *p)
{
	uint32_t idx = ptc_le32(p + 32);

	if (idx >= MAX_QUEUES)
		return;
	if (idx >= r->nr_aq) {
		size_t n = (size_t)idx + 1;
		struct aux_queue *q = realloc(r->aq, n * sizeof(*q));
		if (!q)
			return;
		memset(q + r->nr_aq, 0, (n - r->nr_aq) * sizeof(*q));
		r->aq = q;
		r->nr_aq = n;
	}
	if (!r->aq[idx].seen) {
		r->aq[idx].seen = 1;
		r->aq[idx].tid = ptc_le32(p + 36);
		r->aq[idx].cpu = ptc_le32(p + 40);
	}
	r->aq[idx].end = ptc_le64(p + 16) + ptc_le64(p + 8);
}

/* perf pads an AUXTRACE record's data to 8 bytes and counts the padding in
 * its size, not in the queue's offsets: the next record's offset is up to 7
 * below this one's offset + size. */
static uint64_t aux_padded(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/* p (48 bytes) holds the fields of the record that continues a queue seen
 * before, at the offset where its last record ended: an AUXTRACE record
 * whatever its first 8 bytes say. */
static int aux_continues(const struct ptc_perf_reader *r, const uint8_t *p)
{
	uint32_t idx = ptc_le32(p + 32);
	uint64_t off = ptc_le64(p + 16);

	return aux_fields_ok(r, p) && idx < r->nr_aq && r->aq[idx].seen && off <= r->aq[idx].end &&
	       r->aq[idx].end - off < 8;
}

/* The whole record p (size bytes, its header passed header_bad strictly)
 * as the kernel or perf write it: fixed-size records of a recording whose
 * records all carry the same sample_id trailer have exactly their size, and
 * the trailer's (or a sample's) id is one of the recording's ids or 0
 * (records perf synthesizes). */
static int body_ok(const struct ptc_perf_reader *r, const uint8_t *p, uint32_t type, uint16_t size)
{
	int sid = sid_size(r), pos;
	unsigned fixed = 0;

	switch (type) {
	case PTC_REC_AUXTRACE:
		return size == PTC_AUXTRACE_RECORD_SIZE && aux_fields_ok(r, p);
	case PTC_REC_FINISHED_ROUND:
	case PTC_REC_FINISHED_INIT:
		return size == 8;
	case PTC_REC_HEADER_FEATURE:
		return ptc_le64(p + 8) < PTC_FEAT_BITS;
	case PTC_REC_COMPRESSED2:
		return size % 8 == 0 && ptc_le64(p + 8) <= size - 16u && ptc_le64(p + 8) + 8 > size - 16u;
	case PERF_RECORD_COMM:
		if (sid >= 0 && size != 24 + sid && size != 32 + sid)
			return 0;
		break;
	}
	if (!is_kernel_type(type) || sid < 0)
		return 1;
	fixed = fixed_size(type);
	if (fixed && size != fixed + (unsigned)sid)
		return 0;
	if (size < type_min_size(type) + (unsigned)sid || !r->cap_idmap)
		return 1;
	/* the id, where the events put it */
	if (type == PERF_RECORD_SAMPLE) {
		pos = sample_id_word(r);
		if (pos < 0 || 8 + 8 * (size_t)pos + 8 > size)
			return 1;
		pos = 8 + 8 * pos;
	} else {
		pos = trailer_id_word(r);
		if (pos < 1 || !r->attrs[0].pub.attr.sample_id_all || 8 * (size_t)pos > (size_t)sid)
			return 1;
		pos = size - 8 * pos;
	}
	return ptc_le64(p + pos) == 0 ||
	       attr_by_id((struct ptc_perf_reader *)r, ptc_le64(p + pos)) != NULL;
}

/* Whether CHAIN records that follow each other start at at: each plausible
 * (strictly), ending at the end of the data section or before it.  A chain
 * that runs out of what can be seen (a stream's window, a file cut short)
 * after its first record counts. */
static int chain_ok(struct ptc_perf_reader *r, uint64_t at)
{
	int k;

	for (k = 0; k < CHAIN; k++) {
		uint8_t h[8];
		uint32_t type;
		uint16_t size;

		if (at == r->data_end)
			return k > 0;
		if (r->data_end - at < 8 || !peek(r, at, h, 8))
			return k > 0 && r->data_end - at >= 8;
		type = ptc_le32(h);
		size = ptc_le16(h + 6);
		if (header_bad(r, at, type, ptc_le16(h + 4), size, 1, 0, NULL, 0))
			return 0;
		if (!peek(r, at, r->vbuf, size))
			return k > 0;
		if (!body_ok(r, r->vbuf, type, size))
			return 0;
		at += size;
		if (type == PTC_REC_AUXTRACE || type == PTC_REC_HEADER_TRACING_DATA) {
			uint64_t more = type == PTC_REC_AUXTRACE ? ptc_le64(r->vbuf + 8) : ptc_le32(r->vbuf + 8);
			if (more > r->data_end - at)
				return 0;
			at += more;
		}
	}
	return 1;
}

static int is_text(uint8_t c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' || c == '\r';
}

/* Scan from input offset from for the first offset below limit where a
 * chain of plausible records starts (at any byte: records after an
 * odd-sized one are not 8-aligned).  1 with the window there, 0 with the
 * window at the end of the data (of the input, at limit); *text stays 1
 * while every byte scanned is text.  Memory: the window and one record. */
static int scan(struct ptc_perf_reader *r, uint64_t from, uint64_t limit, uint64_t *found, int *text)
{
	int err = in_seek(r, from);

	if (err < 0)
		return err;
	if (!r->vbuf && !(r->vbuf = malloc(REC_MAX + 8)))
		return fail_at(r, ptc_err_nomem, from, "out of memory");
	for (;;) {
		uint64_t at = in_off(r), left = r->data_end > at ? r->data_end - at : 0;
		ssize_t got = in_fill(r, LOOK);
		size_t n, i;

		if (got < 0)
			return (int)got;
		if (at >= limit)
			return 0;
		if ((uint64_t)got > left)
			got = (ssize_t)left;
		if (got >= 8 && (uint64_t)got - 7 > limit - at)
			got = (ssize_t)(limit - at + 7);
		if (got < 8) {
			for (i = 0; i < (size_t)got; i++)
				*text &= is_text(r->buf[r->pos + i]);
			r->pos += (size_t)got;
			return 0;
		}
		n = (size_t)got - 7;
		for (i = 0; i < n; i++) {
			const uint8_t *p = r->buf + r->pos + i;
			*text &= is_text(p[0]);
			if (!header_bad(r, at + i, ptc_le32(p), ptc_le16(p + 4), ptc_le16(p + 6), 1, 0, NULL, 0))
				break;
		}
		r->pos += i;
		if (i == n)
			continue;
		/* a candidate: with the window full ahead of it, its chain */
		got = in_fill(r, LOOK);
		if (got < 0)
			return (int)got;
		if (chain_ok(r, in_off(r))) {
			*found = in_off(r);
			return 1;
		}
		r->pos++;
	}
}

/* Note damage: bytes lost from off on (0: repaired).  The message goes to
 * the warnings too. */
static void add_skip(struct ptc_perf_reader *r, uint64_t off, uint64_t msg_off, uint64_t bytes, int to_end,
		     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* (the message names msg_off, the damaged record's offset) */
static void add_skip(struct ptc_perf_reader *r, uint64_t off, uint64_t msg_off, uint64_t bytes, int to_end,
		     const char *fmt, ...)
{
	struct ptc_perf_skip *s;
	uint64_t t0 = r->tmin[0];
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vformat_at(r, msg, sizeof(msg), msg_off, fmt, ap);
	va_end(ap);
	keep_warning(r, msg);
	r->stats.skips++;
	r->stats.skipped_bytes += bytes;
	if (!bytes)
		r->stats.repairs++;
	if (r->tmin[1] < t0)
		t0 = r->tmin[1];
	if (r->tmin[2] < t0)
		t0 = r->tmin[2];
	if (t0 == UINT64_MAX)
		t0 = 0;
	if (r->nr_skips == MAX_SKIPS) {
		/* the last one kept stands for the rest */
		s = &r->skips[MAX_SKIPS - 1];
		s->bytes += bytes;
		s->merged++;
		s->to_end |= to_end;
		if (t0 < s->t_start)
			s->t_start = t0;
	} else {
		if (!r->skips && !(r->skips = calloc(MAX_SKIPS, sizeof(*r->skips))))
			return;
		s = &r->skips[r->nr_skips];
		s->message = strdup(msg);
		if (!s->message)
			return;
		r->nr_skips++;
		s->offset = off;
		s->bytes = bytes;
		s->to_end = to_end;
		s->t_start = t0;
	}
	/* the records lost are no later than those of the next two rounds */
	s->t_end = UINT64_MAX;
	r->skip_t_open = !to_end;
	r->rounds_after_skip = 0;
}

#define LOST_WHAT "its records are lost: sideband (MMAP, COMM, EXIT, SWITCH ...) cannot be " \
		  "recovered, trace data there is a gap of its queue"

/* Whether the window can go back to input offset to. */
static int can_rewind(const struct ptc_perf_reader *r, uint64_t to)
{
	return r->seekable || to >= r->base;
}

/* Hand out the AUXTRACE record whose 48 bytes are h, at off, with size
 * bytes of trace data at aoff (aux_lost: none, they are lost). */
static int give_auxtrace(struct ptc_perf_reader *r, struct ptc_perf_record *rec, uint64_t off,
			 const uint8_t *h, uint64_t aoff, uint64_t size, int aux_lost)
{
	int err;

	memset(rec, 0, sizeof(*rec));
	memcpy(r->scratch, h, PTC_AUXTRACE_RECORD_SIZE);
	/* (a repaired header: the type, misc and size perf writes) */
	ptc_put32((uint8_t *)r->scratch, PTC_REC_AUXTRACE);
	ptc_put16((uint8_t *)r->scratch + 4, 0);
	ptc_put16((uint8_t *)r->scratch + 6, PTC_AUXTRACE_RECORD_SIZE);
	rec->type = PTC_REC_AUXTRACE;
	rec->size = PTC_AUXTRACE_RECORD_SIZE;
	rec->offset = off;
	rec->data = (const uint8_t *)r->scratch;
	rec->aux_offset = aoff;
	rec->aux_size = size;
	rec->aux_lost = aux_lost;
	if (size && (err = in_seek(r, aoff)) < 0)
		return err;
	r->aux_left = size;
	r->stats.aux_bytes += size;
	r->last_aux_off = off;
	r->last_aux_end = aoff + size;
	aux_queue_seen(r, h);
	return 1;
}

/* The offset field of queue idx's next AUXTRACE record from at on (up to
 * AHEAD_RECORDS records); 0 when none is seen. */
static int next_aux_offset(struct ptc_perf_reader *r, uint64_t at, uint32_t idx, uint64_t *offset)
{
	int k;

	for (k = 0; k < AHEAD_RECORDS && at < r->data_end && r->data_end - at >= 8; k++) {
		uint8_t h[PTC_AUXTRACE_RECORD_SIZE];
		uint32_t type;
		uint16_t size;
		uint64_t more = 0;

		if (!peek(r, at, h, 8))
			return 0;
		type = ptc_le32(h);
		size = ptc_le16(h + 6);
		if (header_bad(r, at, type, ptc_le16(h + 4), size, 0, 0, NULL, 0))
			return 0;
		if (type == PTC_REC_AUXTRACE || type == PTC_REC_HEADER_TRACING_DATA) {
			if (!peek(r, at, h, type == PTC_REC_AUXTRACE ? sizeof(h) : 12))
				return 0;
			if (type == PTC_REC_AUXTRACE && ptc_le32(h + 32) == idx) {
				*offset = ptc_le64(h + 16);
				return 1;
			}
			more = type == PTC_REC_AUXTRACE ? ptc_le64(h + 8) : ptc_le32(h + 8);
		}
		if (more > r->data_end - at - size)
			return 0;
		at += size + more;
	}
	return 0;
}

/* Whether the trace data of the AUXTRACE record at off (h, its 48 bytes)
 * ends where a record starts: the reason (in buf) when it cannot, NULL when
 * it does or when that cannot be told.  A regular file is read where the
 * data ends; a stream is looked at as far as the window goes ahead
 * (bounded: data that claims to go on past it is damaged when a chain of
 * records starts in the window).  Data that runs past the end of the input
 * is a file cut short unless a chain of records starts in it. */
static const char *aux_check(struct ptc_perf_reader *r, uint64_t off, const uint8_t *h, char *buf,
			     size_t len, int *err)
{
	uint64_t asz = ptc_le64(h + 8), aoff = off + PTC_AUXTRACE_RECORD_SIZE, x = aoff + asz, c = 0;
	uint64_t have = r->seekable ? (r->file_size > aoff ? r->file_size - aoff : 0) : 0;
	uint8_t n[8];
	char next[160];
	int text = 0, found;

	*err = 0;
	if (asz > r->data_end - aoff) {
		snprintf(buf, len, "AUXTRACE data of %llu bytes runs past the end of the data section at 0x%llx",
			 (unsigned long long)asz, (unsigned long long)r->data_end);
		return buf;
	}
	if (!r->seekable) {
		/* the window from the data on */
		ssize_t got = in_fill(r, IN_CAP);
		if (got < 0) {
			*err = (int)got;
			return NULL;
		}
		have = (uint64_t)got;
	}
	if (asz > have && (r->seekable || r->eof || asz > LOOK)) {
		/* the end of the input (of the window) comes first */
		found = scan(r, aoff, r->seekable || r->eof ? UINT64_MAX : aoff + LOOK, &c, &text);
		if (found < 0 || (*err = in_seek(r, aoff)) < 0) {
			*err = found < 0 ? found : *err;
			return NULL;
		}
		if (!found)
			return NULL;
		snprintf(buf, len, "AUXTRACE data of %llu bytes runs past the end of the input%s, but an "
			 "intact record follows at 0x%llx", (unsigned long long)asz,
			 r->seekable || r->eof ? "" : " ahead", (unsigned long long)c);
		return buf;
	}
	if (x >= r->data_end || !peek(r, x, n, 8))
		return NULL;	/* the data section ends there, the input within 8 bytes */
	if (r->data_end - x < 8 || header_bad(r, x, ptc_le32(n), ptc_le16(n + 4), ptc_le16(n + 6), 0, 0,
					      next, sizeof(next))) {
		snprintf(buf, len, "AUXTRACE data of %llu bytes is not followed by a record (at 0x%llx: %s)",
			 (unsigned long long)asz, (unsigned long long)x,
			 r->data_end - x < 8 ? "the data section ends" : next);
		return buf;
	}
	return NULL;
}

/* An AUXTRACE record at off (its 48 bytes h) whose trace data, size bytes
 * as it says, does not end where a record starts (why).  The scan from
 * its data on finds the next intact record at c.  When no record starts
 * inside the data it claims, that data is whole (the damage is after it).
 * Else its data are the bytes up to c when the queue's next AUXTRACE record
 * takes up at the offset that makes them so (repaired); otherwise they are
 * lost, the record handed out with aux_lost so that its queue gets the gap. */
static int aux_damaged(struct ptc_perf_reader *r, struct ptc_perf_record *rec, uint64_t off,
		       const uint8_t *h, int header_too, const char *why)
{
	uint64_t aoff = off + PTC_AUXTRACE_RECORD_SIZE, size = ptc_le64(h + 8), c = 0, end, next;
	int found, text = 0;

	if (!r->vbuf && !(r->vbuf = malloc(REC_MAX + 8)))	/* (chain_ok()'s) */
		return fail_at(r, ptc_err_nomem, off, "out of memory");
	if (header_too && size && can_rewind(r, aoff) && size <= r->data_end - aoff &&
	    (aoff + size == r->data_end || chain_ok(r, aoff + size))) {
		/* its fields are perf's and intact records follow the data
		 * they claim: the damage is in the header's type, misc or
		 * size alone (the trace data may hold bytes that look like
		 * records: a scan from its start could stop inside it) */
		add_skip(r, off, off, 0, 0, "%s: the record repaired: an AUXTRACE record whose trace data of "
			 "%llu bytes is followed by intact records", why, (unsigned long long)size);
		return give_auxtrace(r, rec, off, h, aoff, size, 0);
	}
	found = scan(r, aoff, UINT64_MAX, &c, &text);
	if (found < 0)
		return found;
	end = found ? c : in_off(r);
	if (!can_rewind(r, aoff)) {
		/* a stream whose window has moved on: the data is gone */
	} else if (found && next_aux_offset(r, c, ptc_le32(h + 32), &next) && next >= ptc_le64(h + 16) &&
		   (next - ptc_le64(h + 16) == c - aoff || aux_padded(next - ptc_le64(h + 16)) == c - aoff)) {
		add_skip(r, off, off, 0, 0, "%s: the record repaired: its trace data are the %llu bytes up to the "
			 "next intact record at 0x%llx, where the next AUXTRACE record of queue %u takes up", why,
			 (unsigned long long)(c - aoff), (unsigned long long)c, ptc_le32(h + 32));
		return give_auxtrace(r, rec, off, h, aoff, c - aoff, 0);
	} else if (header_too && size == end - aoff) {
		add_skip(r, off, off, 0, 0, "%s: the record repaired: an AUXTRACE record whose trace data of "
			 "%llu bytes ends where the next intact record starts", why, (unsigned long long)size);
		return give_auxtrace(r, rec, off, h, aoff, size, 0);
	} else if (!header_too && size <= end - aoff) {
		/* no record starts inside the data it claims: that is whole,
		 * what comes after it is damaged (and may have been more of
		 * its data: aux_lost) */
		return give_auxtrace(r, rec, off, h, aoff, size, 1);
	}
	if (found)
		add_skip(r, aoff, off, end - aoff, 0, "%s: its trace data (queue %u) lost: the %llu bytes "
			 "from 0x%llx skipped up to the next intact record at 0x%llx; " LOST_WHAT, why,
			 ptc_le32(h + 32), (unsigned long long)(end - aoff), (unsigned long long)aoff,
			 (unsigned long long)end);
	else
		add_skip(r, aoff, off, end - aoff, 1, "%s: its trace data (queue %u) lost, and no intact "
			 "record follows: the %llu bytes from 0x%llx to the end of the data at 0x%llx lost; "
			 LOST_WHAT, why, ptc_le32(h + 32), (unsigned long long)(end - aoff),
			 (unsigned long long)aoff, (unsigned long long)end);
	return give_auxtrace(r, rec, off, h, aoff, 0, 1);
}

/* The record header at off is damaged (why): go on at the next offset
 * where a chain of plausible records starts; the bytes up to it are lost.
 * An AUXTRACE record whose header alone is damaged keeps its trace data
 * (aux_damaged).  1 when rec is to be handed out, 0 to read on, <0. */
static int resync(struct ptc_perf_reader *r, struct ptc_perf_record *rec, uint64_t off, const char *why)
{
	uint8_t h[PTC_AUXTRACE_RECORD_SIZE];
	uint64_t c = 0, end;
	int found, text = r->info.pipe_mode;
	char after[160] = "";
	size_t i;

	if (r->data_end - off >= sizeof(h) && peek(r, off, h, sizeof(h)) &&
	    (ptc_le32(h) == PTC_REC_AUXTRACE ? aux_fields_ok(r, h) : aux_continues(r, h)))
		return aux_damaged(r, rec, off, h, 1, why);
	for (i = 0; i < 8 && text && peek(r, off + i, h, 1); i++)
		text = is_text(h[0]);
	if (off == r->last_aux_end && r->last_aux_end)
		snprintf(after, sizeof(after), " (right after the trace data of the AUXTRACE record at 0x%llx, "
			 "whose size may be what is damaged)", (unsigned long long)r->last_aux_off);
	found = scan(r, off + 1, UINT64_MAX, &c, &text);
	if (found < 0)
		return found;
	end = found ? c : in_off(r);
	if (found) {
		add_skip(r, off, off, end - off, 0, "%s%s: %llu bytes skipped up to the next intact record at "
			 "0x%llx; " LOST_WHAT, why, after, (unsigned long long)(end - off), (unsigned long long)end);
	} else if (text && r->info.pipe_mode) {
		/* text after the last record: perf's messages in the same pipe */
		r->stats.trailing_offset = off;
		r->stats.trailing_bytes = end - off;
		warn_at(r, off, "%llu bytes of trailing garbage after the last record",
			(unsigned long long)(end - off));
		r->ended = 1;
	} else {
		add_skip(r, off, off, end - off, 1, "%s%s: no intact record follows: %llu bytes lost to the end "
			 "of the data at 0x%llx; " LOST_WHAT, why, after, (unsigned long long)(end - off),
			 (unsigned long long)end);
	}
	return 0;
}

/* Times around damage: the least time of the last three rounds before it
 * (perf writes a round's records after the round before the last one), up
 * to the greatest of the two rounds after it. */
static void note_time(struct ptc_perf_reader *r, const struct ptc_perf_record *rec)
{
	uint64_t t = rec->sid.time;

	if (rec->type == PTC_REC_FINISHED_ROUND) {
		r->tmin[2] = r->tmin[1];
		r->tmin[1] = r->tmin[0];
		r->tmin[0] = UINT64_MAX;
		if (r->rounds_after_skip < 2 && ++r->rounds_after_skip == 2 && r->nr_skips)
			r->skip_t_open = 0;
		return;
	}
	if (!(rec->sid.valid & PTC_SID_TIME) || !t)
		return;
	if (t < r->tmin[0])
		r->tmin[0] = t;
	if (r->nr_skips && r->rounds_after_skip < 2) {
		struct ptc_perf_skip *s = &r->skips[r->nr_skips - 1];
		if (r->skip_t_open) {
			s->t_end = t;
			r->skip_t_open = 0;
		} else if (t > s->t_end && s->t_end != UINT64_MAX) {
			s->t_end = t;
		}
	}
}

/* ---- compressed records --------------------------------------------- */

/* The compressed record being expanded is damaged (why): what is left of
 * it and of a record straddling it is dropped, the stream starts afresh
 * with the next compressed record. */
static int z_damaged(struct ptc_perf_reader *r, const char *why)
{
	r->zactive = 0;
	r->zpos = r->zlen = 0;
	ZSTD_initDStream(r->zs);
	add_skip(r, r->zrec_off, r->zrec_off, r->zrec_size, 0, "%s: the compressed record of %u bytes is skipped; "
		 LOST_WHAT, why, r->zrec_size);
	return 0;
}

/* Next record out of the decompressed stream: 1 and *rec, 0 when the
 * current compressed payload is used up (or damaged), <0 on error. */
static int z_next(struct ptc_perf_reader *r, struct ptc_perf_record *rec)
{
	for (;;) {
		size_t have = r->zlen - r->zpos;
		if (have >= 8) {
			uint16_t size = ptc_le16(r->zout + r->zpos + 6);
			uint32_t type = ptc_le32(r->zout + r->zpos);
			char why[160];
			if (header_bad(r, 0, type, ptc_le16(r->zout + r->zpos + 4), size, 0, 1, why,
				       sizeof(why)))
				return z_damaged(r, why);
			if (have >= size) {
				memset(rec, 0, sizeof(*rec));
				rec->type = type;
				rec->misc = ptc_le16(r->zout + r->zpos + 4);
				rec->size = size;
				rec->offset = r->zrec_off;
				rec->compressed = 1;
				rec_set_data(r, rec, r->zout + r->zpos);
				r->zpos += size;
				if (type == PTC_REC_COMPRESSED || type == PTC_REC_COMPRESSED2 ||
				    type == PTC_REC_AUXTRACE || type == PTC_REC_HEADER_TRACING_DATA)
					return fail_at(r, ptc_err_unsupported, r->zrec_off,
						       "%s record inside a compressed record",
						       ptc_perf_record_name(type));
				return 1;
			}
		}
		if (!r->zactive)
			return 0;
		if (r->zpos) {
			memmove(r->zout, r->zout + r->zpos, have);
			r->zlen = have;
			r->zpos = 0;
		}
		{
			ZSTD_outBuffer ob = { r->zout, Z_OUT_CAP, r->zlen };
			ZSTD_inBuffer ib = { r->zin, r->zin_len, r->zin_pos };
			size_t ret = ZSTD_decompressStream(r->zs, &ob, &ib);
			if (ZSTD_isError(ret)) {
				char why[160];
				snprintf(why, sizeof(why), "compressed record does not decompress: %s",
					 ZSTD_getErrorName(ret));
				return z_damaged(r, why);
			}
			r->stats.decompressed_bytes += ob.pos - r->zlen;
			r->zlen = ob.pos;
			r->zin_pos = ib.pos;
			/* Done with this payload once all input is consumed and the
			 * decoder had room left (so it holds nothing back). */
			if (ib.pos == ib.size && ob.pos < ob.size)
				r->zactive = 0;
		}
	}
}

static int z_start(struct ptc_perf_reader *r, const struct ptc_perf_record *rec)
{
	const uint8_t *payload;
	size_t n;

	r->zrec_off = rec->offset;
	r->zrec_size = rec->size;
	r->stats.compressed_records++;
	if (rec->type == PTC_REC_COMPRESSED2) {
		uint64_t dsize = ptc_le64(rec->data + 8);	/* (16 bytes at least: header_bad) */
		if (dsize > rec->size - 16u) {
			char why[160];
			snprintf(why, sizeof(why), "COMPRESSED2 data size %llu exceeds the record",
				 (unsigned long long)dsize);
			return z_damaged(r, why);
		}
		payload = rec->data + 16;
		n = (size_t)dsize;
	} else {
		payload = rec->data + 8;
		n = rec->size - 8u;
	}
	memcpy(r->zin, payload, n);
	r->zin_pos = 0;
	r->zin_len = n;
	r->zactive = 1;
	return 0;
}

/* ---- the iterator ----------------------------------------------------- */

static int deliver(struct ptc_perf_reader *r, struct ptc_perf_record *rec)
{
	int err = handle_record(r, rec);

	if (err < 0)
		return err;
	parse_sid(r, rec);
	note_time(r, rec);
	r->stats.records[rec->type]++;
	r->last_type = rec->type;
	return 1;
}

/* The end of a pipe-mode recording, which has no size to say it is whole:
 * a recorder that ends its rounds of records with FINISHED_ROUND (perf
 * does, the last round too) ends the stream with one.  Records after the
 * last one are a round cut short (a copy interrupted at a record's
 * boundary): an error, once they are read, so that the loss of the rest of
 * the round is not taken for the end of the recording.  Perf ends each
 * pass over its buffers that wrote records with one, so a recording with
 * trace data (AUXTRACE) has one even when cut before its first. */
static int round_ended(struct ptc_perf_reader *r, uint64_t off)
{
	if (!r->info.pipe_mode ||
	    (!r->stats.records[PTC_REC_FINISHED_ROUND] && !r->stats.records[PTC_REC_AUXTRACE]) ||
	    r->last_type == PTC_REC_FINISHED_ROUND)
		return 0;
	return fail_at(r, ptc_err_truncated, off, "the input ends inside a round of records (the "
		       "recorder ends each with FINISHED_ROUND): cut short, the rest of the round lost");
}

/* The tail of the input does not hold a whole record: 0 at the end, 1 to
 * read on (damage skipped), <0. */
static int at_tail(struct ptc_perf_reader *r, uint64_t off, size_t have, uint32_t type,
		   uint32_t size)
{
	if (r->info.pipe_mode && (have < 4 || !is_known_type(type))) {
		/* Not the start of any record perf writes: garbage after the
		 * last record (e.g. messages that went into the same pipe). */
		r->stats.trailing_offset = off;
		r->stats.trailing_bytes = have;
		warn_at(r, off, "%zu bytes of trailing garbage after the last record", have);
		r->ended = 1;
		return round_ended(r, off);
	}
	if (have < 8)
		return fail_at(r, ptc_err_truncated, off, "input ends inside a record header (%zu bytes left)",
			       have);
	{
		/* the input ends inside the record: cut short, unless intact
		 * records follow inside what it claims (its size is damaged) */
		uint64_t c = 0;
		int text = 0, found = scan(r, off + 1, UINT64_MAX, &c, &text);
		if (found < 0)
			return found;
		if (found) {
			add_skip(r, off, off, c - off, 0, "%s record of %u bytes runs past the end of the input, "
				 "but intact records follow: %llu bytes skipped up to the next intact record at "
				 "0x%llx; " LOST_WHAT, ptc_perf_record_name(type), size,
				 (unsigned long long)(c - off), (unsigned long long)c);
			return 1;
		}
	}
	return fail_at(r, ptc_err_truncated, off,
		       "%s record of %u bytes truncated: the input ends after %zu bytes",
		       ptc_perf_record_name(type), size, have);
}

int ptc_perf_next(struct ptc_perf_reader *r, struct ptc_perf_record *rec)
{
	for (;;) {
		uint64_t off;
		ssize_t got;
		uint32_t type;
		uint16_t size;
		char whybuf[256];
		const char *why;
		int ret;

		if (r->failed)
			return r->failed;
		if (r->ended)
			return 0;
		if (r->aux_left) {
			uint64_t n = r->aux_left;
			r->aux_left = 0;
			if ((ret = in_skip(r, n)) < 0)
				return ret;
		}
		if (r->zactive || r->zlen > r->zpos) {
			ret = z_next(r, rec);
			if (ret < 0)
				return ret;
			if (ret) {
				if (!is_known_type(rec->type)) {
					r->stats.unknown_records++;
					continue;
				}
				return deliver(r, rec);
			}
		}
		off = in_off(r);
		if (off >= r->data_end) {
			if (off > r->data_end)
				return fail_at(r, ptc_err_bad_size, off, "read past the data section end 0x%llx",
					       (unsigned long long)r->data_end);
			goto end;
		}
		got = in_fill(r, 8);
		if (got < 0)
			return (int)got;
		if (got == 0) {
			if (r->data_end != UINT64_MAX)
				return fail_at(r, ptc_err_truncated, off,
					       "input ends inside the data section, which should end at 0x%llx",
					       (unsigned long long)r->data_end);
			goto end;
		}
		type = got >= 4 ? ptc_le32(r->buf + r->pos) : 0;
		if (got < 8)
			return at_tail(r, off, (size_t)got, type, 0);
		size = ptc_le16(r->buf + r->pos + 6);
		why = header_bad(r, off, type, ptc_le16(r->buf + r->pos + 4), size, 0, 0, whybuf,
				 sizeof(whybuf));
		if (why) {
			if ((ret = resync(r, rec, off, why)) < 0)
				return ret;
			if (ret)
				return deliver(r, rec);
			continue;
		}
		got = in_fill(r, size);
		if (got < 0)
			return (int)got;
		if (got < size) {
			if ((ret = at_tail(r, off, (size_t)got, type, size)) != 1)
				return ret;
			continue;
		}

		memset(rec, 0, sizeof(*rec));
		rec->type = type;
		rec->misc = ptc_le16(r->buf + r->pos + 4);
		rec->size = size;
		rec->offset = off;
		rec_set_data(r, rec, r->buf + r->pos);
		r->pos += size;

		if (!is_known_type(type)) {
			r->stats.unknown_records++;
			continue;
		}
		switch (type) {
		case PTC_REC_COMPRESSED:
		case PTC_REC_COMPRESSED2:
			if (r->zlen == r->zpos)
				r->zpos = r->zlen = 0;
			if ((ret = z_start(r, rec)) < 0)
				return ret;
			continue;
		case PTC_REC_AUXTRACE: {
			uint64_t asz = ptc_le64(rec->data + 8), aoff = off + size;
			uint8_t h[PTC_AUXTRACE_RECORD_SIZE];
			memcpy(h, rec->data, sizeof(h));	/* (the window may move) */
			why = aux_check(r, off, h, whybuf, sizeof(whybuf), &ret);
			if (ret < 0)
				return ret;
			if (why) {
				if ((ret = aux_damaged(r, rec, off, h, 0, why)) < 0)
					return ret;
				return deliver(r, rec);
			}
			memcpy(r->scratch, h, sizeof(h));
			rec->data = (const uint8_t *)r->scratch;
			aux_queue_seen(r, rec->data);
			/* A file cut inside the trace data: hand out the record so
			 * that the bytes present can be read; reading stops with an
			 * error at the end of the input. */
			if (r->seekable && (aoff > r->file_size || asz > r->file_size - aoff))
				warn_at(r, off, "AUXTRACE data of %llu bytes at 0x%llx runs past the end of the "
					"input at 0x%llx: the file is truncated",
					(unsigned long long)asz, (unsigned long long)aoff,
					(unsigned long long)r->file_size);
			/* (handed out from the scratch copy: ptc_perf_read_aux()
			 * moves the window) */
			rec->aux_size = asz;
			rec->aux_offset = aoff;
			r->aux_left = asz;
			r->stats.aux_bytes += asz;
			r->last_aux_off = off;
			r->last_aux_end = aoff + asz;
			break;
		}
		case PTC_REC_HEADER_TRACING_DATA: {
			uint64_t tsz = ptc_le32(rec->data + 8);	/* (12 bytes at least: header_bad) */
			if (tsz > r->data_end - (off + size)) {
				snprintf(whybuf, sizeof(whybuf), "tracing data of %llu bytes runs past the "
					 "data section", (unsigned long long)tsz);
				if ((ret = resync(r, rec, off, whybuf)) < 0)
					return ret;
				if (ret)
					return deliver(r, rec);
				continue;
			}
			/* Keep the data for libtraceevent when it is sane in size.  It
			 * is read through the window, which may move: the record is
			 * handed out from the scratch copy. */
			if (rec->data != (const uint8_t *)r->scratch) {
				memcpy(r->scratch, rec->data, size);
				rec->data = (const uint8_t *)r->scratch;
			}
			if (!r->tracing && tsz <= TRACING_MAX) {
				/* grown as the bytes arrive, so that memory follows
				 * what the input holds, not what it claims */
				uint64_t done = 0;
				while (done < tsz) {
					size_t want = tsz - done < IN_CAP ? (size_t)(tsz - done) : IN_CAP;
					uint8_t *nt;
					got = in_fill(r, want);
					if (got < 0)
						return (int)got;
					if ((size_t)got < want)
						return fail_at(r, ptc_err_truncated, in_off(r),
							       "input ends inside %llu bytes of tracing data",
							       (unsigned long long)tsz);
					nt = realloc(r->tracing, (size_t)(done + want));
					if (!nt)
						return fail_at(r, ptc_err_nomem, in_off(r), "out of memory");
					r->tracing = nt;
					memcpy(r->tracing + done, r->buf + r->pos, want);
					r->pos += want;
					done += want;
				}
				r->info.tracing_data = r->tracing;
				r->info.tracing_data_size = (size_t)tsz;
				r->info.tracing_data_offset = off + size;
				break;
			}
			r->aux_left = tsz;	/* skipped like AUX data before the next record */
			break;
		}
		}
		return deliver(r, rec);
	end:
		if (r->zlen > r->zpos)
			return fail_at(r, ptc_err_truncated, r->zrec_off,
				       "the input ends inside a record that straddles compressed records "
				       "(%zu bytes pending)", r->zlen - r->zpos);
		return round_ended(r, off);
	}
}

ssize_t ptc_perf_read_aux(struct ptc_perf_reader *r, void *buf, size_t n)
{
	uint8_t *dst = buf;
	size_t done = 0;

	if (r->failed)
		return r->failed;
	if (n > r->aux_left)
		n = (size_t)r->aux_left;
	while (done < n) {
		size_t take = in_avail(r);
		if (!take) {
			ssize_t got;
			if (n - done >= IN_CAP / 2) {
				/* Large reads go straight to the caller's buffer. */
				got = read(r->fd, dst + done, n - done);
				if (got < 0 && errno == EINTR)
					continue;
				if (got > 0) {
					r->base += (uint64_t)got + r->len;
					r->pos = r->len = 0;
					r->stats.bytes_read += (uint64_t)got;
					done += (size_t)got;
					continue;
				}
				if (got == 0)
					r->eof = 1;
			} else {
				got = in_fill(r, 1);
				if (got > 0)
					continue;
				r->failed = 0;	/* reported below, after the bytes copied */
			}
			/* The input ends (or fails) inside the trace data: hand out
			 * what was copied; the next call reports it. */
			if (done)
				break;
			if (got < 0 && errno != 0)
				return fail_at(r, ptc_err_io, in_off(r), "read failed: %s", strerror(errno));
			return fail_at(r, ptc_err_truncated, in_off(r),
				       "input ends inside AUXTRACE data (%llu bytes missing)",
				       (unsigned long long)r->aux_left);
		}
		if (take > n - done)
			take = n - done;
		memcpy(dst + done, r->buf + r->pos, take);
		r->pos += take;
		done += take;
	}
	r->aux_left -= done;
	return (ssize_t)done;
}

int ptc_perf_pread(struct ptc_perf_reader *r, void *buf, size_t n, uint64_t offset)
{
	int err;

	if (!r->seekable)
		return -ptc_err_unsupported;
	err = in_pread(r, buf, n, offset);
	if (err < 0) {
		/* A bad pread does not break the iterator. */
		r->failed = 0;
	}
	return err;
}

const struct ptc_perf_info *ptc_perf_info(const struct ptc_perf_reader *r)
{
	return &r->info;
}

const struct ptc_perf_stats *ptc_perf_stats(const struct ptc_perf_reader *r)
{
	return &r->stats;
}

const struct ptc_perf_extra *ptc_perf_extra(const struct ptc_perf_reader *r)
{
	return &r->extra;
}

size_t ptc_perf_nr_skips(const struct ptc_perf_reader *r)
{
	return r->nr_skips;
}

const struct ptc_perf_skip *ptc_perf_skip(const struct ptc_perf_reader *r, size_t i)
{
	return i < r->nr_skips ? &r->skips[i] : NULL;
}

size_t ptc_perf_nr_attrs(const struct ptc_perf_reader *r)
{
	return r->nr_attrs;
}

const struct ptc_perf_attr *ptc_perf_attr(const struct ptc_perf_reader *r, size_t i)
{
	return i < r->nr_attrs ? &r->attrs[i].pub : NULL;
}

const struct ptc_perf_attr *ptc_perf_attr_of(const struct ptc_perf_reader *r, uint64_t id)
{
	const struct attr_priv *a;

	if (r->nr_attrs == 1)
		return &r->attrs[0].pub;
	a = attr_by_id((struct ptc_perf_reader *)r, id);
	return a ? &a->pub : NULL;
}

const char *ptc_perf_name(const struct ptc_perf_reader *r)
{
	return r->name;
}

const char *ptc_perf_errmsg(const struct ptc_perf_reader *r)
{
	return r->errmsg;
}

size_t ptc_perf_nr_warnings(const struct ptc_perf_reader *r)
{
	return r->nr_warnings;
}

const char *ptc_perf_warning(const struct ptc_perf_reader *r, size_t i)
{
	return i < r->nr_warnings ? r->warnings[i] : NULL;
}

int ptc_perf_seekable(const struct ptc_perf_reader *r)
{
	return r->seekable;
}

uint64_t ptc_perf_file_size(const struct ptc_perf_reader *r)
{
	return r->seekable ? r->file_size : 0;
}
