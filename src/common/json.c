/* Streaming JSON writer (see json.h). */
#include <inttypes.h>
#include <string.h>

#include "common/json.h"

void ptc_json_init(struct ptc_json *j, FILE *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

void ptc_json_write_escaped(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	fputc('"', out);
	while (i < n) {
		unsigned char c = s[i];
		size_t len;
		switch (c) {
		case '"': fputs("\\\"", out); i++; continue;
		case '\\': fputs("\\\\", out); i++; continue;
		case '\n': fputs("\\n", out); i++; continue;
		case '\r': fputs("\\r", out); i++; continue;
		case '\t': fputs("\\t", out); i++; continue;
		case '\b': fputs("\\b", out); i++; continue;
		case '\f': fputs("\\f", out); i++; continue;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			i++;
			continue;
		}
		len = utf8_len(s + i, n - i);
		if (!len) {
			/* Not UTF-8: keep the byte's value visible as U+00XX. */
			fprintf(out, "\\u%04x", c);
			i++;
			continue;
		}
		fwrite(s + i, 1, len, out);
		i += len;
	}
	fputc('"', out);
}

static void member(struct ptc_json *j, const char *key)
{
	if (j->depth > 0 && j->depth <= PTC_JSON_MAX_DEPTH) {
		if (j->count[j->depth - 1]++)
			fputc(',', j->out);
		fputc('\n', j->out);
		fprintf(j->out, "%*s", 2 * j->depth, "");
	}
	if (key) {
		ptc_json_write_escaped(j->out, key, strlen(key));
		fputs(": ", j->out);
	}
}

static void open_level(struct ptc_json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->out);
	if (j->depth < PTC_JSON_MAX_DEPTH)
		j->count[j->depth] = 0;
	j->depth++;
}

static void close_level(struct ptc_json *j, char c)
{
	if (j->depth <= 0)
		return;
	j->depth--;
	if (j->depth < PTC_JSON_MAX_DEPTH && j->count[j->depth])
		fprintf(j->out, "\n%*s", 2 * j->depth, "");
	fputc(c, j->out);
	if (j->depth == 0)
		fputc('\n', j->out);
}

void ptc_json_begin_object(struct ptc_json *j, const char *key) { open_level(j, key, '{'); }
void ptc_json_end_object(struct ptc_json *j) { close_level(j, '}'); }
void ptc_json_begin_array(struct ptc_json *j, const char *key) { open_level(j, key, '['); }
void ptc_json_end_array(struct ptc_json *j) { close_level(j, ']'); }

void ptc_json_string_n(struct ptc_json *j, const char *key, const char *s, size_t n)
{
	member(j, key);
	if (s)
		ptc_json_write_escaped(j->out, s, n);
	else
		fputs("null", j->out);
}

void ptc_json_string(struct ptc_json *j, const char *key, const char *s)
{
	ptc_json_string_n(j, key, s, s ? strlen(s) : 0);
}

void ptc_json_u64(struct ptc_json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->out, "%" PRIu64, v);
}

void ptc_json_i64(struct ptc_json *j, const char *key, int64_t v)
{
	member(j, key);
	fprintf(j->out, "%" PRId64, v);
}

void ptc_json_bool(struct ptc_json *j, const char *key, int v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->out);
}

void ptc_json_null(struct ptc_json *j, const char *key)
{
	member(j, key);
	fputs("null", j->out);
}
