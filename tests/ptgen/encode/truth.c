/* Ground-truth reader (see truth.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "truth.h"

#define MAX_FIELDS 16

struct truth {
	FILE *f;
	const char *path;
	char *line;
	size_t cap;
	uint64_t lineno;
	int version_seen;
};

struct truth *truth_open(const char *path)
{
	struct truth *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->path = path;
	t->f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!t->f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		free(t);
		return NULL;
	}
	return t;
}

void truth_close(struct truth *t)
{
	if (!t)
		return;
	if (t->f && t->f != stdin)
		fclose(t->f);
	free(t->line);
	free(t);
}

int truth_rewind(struct truth *t)
{
	if (t->f == stdin || fseek(t->f, 0, SEEK_SET))
		return -1;
	t->lineno = 0;
	t->version_seen = 0;
	return 0;
}

static int bad(struct truth *t, const char *why)
{
	fprintf(stderr, "%s:%llu: %s\n", t->path, (unsigned long long)t->lineno, why);
	return -1;
}

static int num(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno || end == s || *end) ? -1 : 0;
}

/* prot as a number or as "r-xp"-style letters. */
static int parse_prot(const char *s, uint32_t *prot)
{
	uint64_t v;

	if (!num(s, &v)) {
		*prot = (uint32_t)v;
		return 0;
	}
	*prot = 0;
	for (; *s; s++) {
		if (*s == 'r')
			*prot |= PROT_READ;
		else if (*s == 'w')
			*prot |= PROT_WRITE;
		else if (*s == 'x')
			*prot |= PROT_EXEC;
		else if (*s != '-' && *s != 'p' && *s != 's')
			return -1;
	}
	return 0;
}

static int parse_build_id(const char *s, uint8_t *out, unsigned *len)
{
	size_t n = strlen(s), i;

	*len = 0;
	if (!strcmp(s, "-"))
		return 0;
	if (n % 2 || n / 2 > 20 || !n)
		return -1;
	for (i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	*len = (unsigned)(n / 2);
	return 0;
}

/* Undoes ptgen-trace's escaping of path, comm and dump: a backslash and
 * three octal digits stand for one byte (as in /proc/PID/mounts). */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = 0;
}

int truth_next(struct truth *t, struct truth_event *ev)
{
	char *f[MAX_FIELDS], *p;
	uint64_t v[MAX_FIELDS];
	int nf, i;
	ssize_t n;

	for (;;) {
		n = getline(&t->line, &t->cap, t->f);
		if (n < 0)
			return 0;
		t->lineno++;
		while (n && (t->line[n - 1] == '\n' || t->line[n - 1] == '\r'))
			t->line[--n] = 0;
		if (n && t->line[0] != '#')
			break;
	}
	memset(ev, 0, sizeof(*ev));
	ev->line = t->lineno;
	/* Split on single spaces; a comm (last field of T and C lines) may
	 * itself contain spaces and is put back together below. */
	p = t->line;
	for (nf = 0; nf < MAX_FIELDS && p; nf++) {
		f[nf] = p;
		p = strchr(p, ' ');
		if (p)
			*p++ = 0;
	}
	if (strlen(f[0]) != 1)
		return bad(t, "bad line type");
	ev->type = f[0][0];
	if ((ev->type == 'T' && nf > 5) || (ev->type == 'C' && nf > 6)) {
		int last = ev->type == 'T' ? 4 : 5;

		if (p)
			p[-1] = ' ';
		for (i = last + 1; i < nf; i++)
			f[i][-1] = ' ';
		nf = last + 1;
		p = NULL;
	}
	if (p)
		return bad(t, "too many fields");
	if (ev->type == 'V') {
		if (nf != 2 || strcmp(f[1], "1"))
			return bad(t, "unsupported truth version");
		t->version_seen = 1;
		return 1;
	}
	if (!t->version_seen)
		return bad(t, "missing V 1 line");
	if (nf < 2 || num(f[1], &ev->time))
		return bad(t, "bad time");
	for (i = 2; i < nf; i++)
		if (num(f[i], &v[i]))
			v[i] = UINT64_MAX;	/* not a number: checked per type */

#define NEED(n) do { if (nf < (n)) return bad(t, "too few fields"); } while (0)
#define NUMS(a, b) do { for (i = (a); i <= (b); i++) if (v[i] == UINT64_MAX) return bad(t, "bad number"); } while (0)
	switch (ev->type) {
	case 'T':	/* T time pid tid comm */
		NEED(5);
		NUMS(2, 3);
		ev->pid = (uint32_t)v[2];
		ev->tid = (uint32_t)v[3];
		unescape(f[4]);
		ev->comm = f[4];
		break;
	case 'F':	/* F time ppid ptid pid tid */
		NEED(6);
		NUMS(2, 5);
		ev->ppid = (uint32_t)v[2];
		ev->ptid = (uint32_t)v[3];
		ev->pid = (uint32_t)v[4];
		ev->tid = (uint32_t)v[5];
		break;
	case 'C':	/* C time pid tid exec comm */
		NEED(6);
		NUMS(2, 4);
		ev->pid = (uint32_t)v[2];
		ev->tid = (uint32_t)v[3];
		ev->exec = (int)v[4];
		unescape(f[5]);
		ev->comm = f[5];
		break;
	case 'M':	/* M time pid tid start len pgoff prot build-id path [dump] */
		NEED(10);
		NUMS(2, 6);
		ev->pid = (uint32_t)v[2];
		ev->tid = (uint32_t)v[3];
		ev->start = v[4];
		ev->len = v[5];
		ev->pgoff = v[6];
		if (parse_prot(f[7], &ev->prot))
			return bad(t, "bad prot");
		if (parse_build_id(f[8], ev->build_id, &ev->build_id_len))
			return bad(t, "bad build-id");
		unescape(f[9]);
		ev->path = f[9];
		if (nf > 10)
			unescape(f[10]);
		ev->dump = nf > 10 ? f[10] : NULL;
		break;
	case 'B':	/* B time tid ip target kind taken len insns */
		NEED(9);
		NUMS(2, 8);
		ev->tid = (uint32_t)v[2];
		ev->ip = v[3];
		ev->target = v[4];
		ev->kind = (int)v[5];
		ev->taken = (int)v[6];
		ev->blen = (unsigned)v[7];
		ev->insns = v[8];
		if (ev->kind < 0 || ev->kind > 6 || ev->taken > 1 || !ev->blen || ev->blen > 15)
			return bad(t, "bad branch");
		break;
	case 'R':	/* R time tid ip [32] */
		NEED(4);
		NUMS(2, 3);
		ev->tid = (uint32_t)v[2];
		ev->ip = v[3];
		ev->bits = 64;
		if (nf > 4 && v[4] != 32)
			return bad(t, "bad mode");
		if (nf > 4)
			ev->bits = 32;
		break;
	case 'A':	/* A time tid ip insns */
		NEED(5);
		NUMS(2, 4);
		ev->tid = (uint32_t)v[2];
		ev->ip = v[3];
		ev->insns = v[4];
		break;
	case 'S':	/* S time tid */
	case 'E':	/* E time tid */
		NEED(3);
		NUMS(2, 2);
		ev->tid = (uint32_t)v[2];
		break;
	case 'X':	/* X time pid tid */
		NEED(4);
		NUMS(2, 3);
		ev->pid = (uint32_t)v[2];
		ev->tid = (uint32_t)v[3];
		break;
	default:
		return bad(t, "unknown line type");
	}
#undef NEED
#undef NUMS
	return 1;
}
