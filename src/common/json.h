/* A small streaming JSON writer: objects, arrays, strings (escaped, and
 * made valid UTF-8), integers, booleans.  Commas and indentation are
 * tracked per nesting level; misuse (too deep) is ignored, not fatal. */
#ifndef PTC_COMMON_JSON_H
#define PTC_COMMON_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PTC_JSON_MAX_DEPTH 32

struct ptc_json {
	FILE *out;
	int depth;
	int count[PTC_JSON_MAX_DEPTH];	/* members written at each level */
};

void ptc_json_init(struct ptc_json *j, FILE *out);
/* key is NULL inside arrays and at the top level. */
void ptc_json_begin_object(struct ptc_json *j, const char *key);
void ptc_json_end_object(struct ptc_json *j);
void ptc_json_begin_array(struct ptc_json *j, const char *key);
void ptc_json_end_array(struct ptc_json *j);
/* s may be NULL: written as null. */
void ptc_json_string(struct ptc_json *j, const char *key, const char *s);
void ptc_json_string_n(struct ptc_json *j, const char *key, const char *s, size_t n);
void ptc_json_u64(struct ptc_json *j, const char *key, uint64_t v);
void ptc_json_i64(struct ptc_json *j, const char *key, int64_t v);
void ptc_json_bool(struct ptc_json *j, const char *key, int v);
void ptc_json_null(struct ptc_json *j, const char *key);
/* Write s as a JSON string literal (quotes included). */
void ptc_json_write_escaped(FILE *out, const char *s, size_t n);

#endif
