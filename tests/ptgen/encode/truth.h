/* Streaming reader of ptgen ground-truth files (tests/ptgen/ground-truth.md). */
#ifndef PTGEN_TRUTH_H
#define PTGEN_TRUTH_H

#include <stdint.h>
#include <stdio.h>

struct truth_event {
	char type;		/* V T F C M B R A S X E */
	uint64_t time;
	uint32_t pid, tid, ppid, ptid;
	uint64_t ip, target;	/* B: branch; R, A: ip */
	uint64_t start, len, pgoff;	/* M */
	uint32_t prot;		/* M: PROT_* bits */
	int kind, taken;	/* B */
	unsigned blen;		/* B: instruction length */
	uint64_t insns;		/* B, A */
	int exec;		/* C */
	unsigned bits;		/* R: the mode of the code there, 32 or 64 */
	uint8_t build_id[20];	/* M */
	unsigned build_id_len;	/* 0 when '-' */
	const char *comm;	/* T, C; valid until the next truth_next() */
	const char *path;	/* M */
	const char *dump;	/* M: file with the mapping's bytes, or NULL */
	uint64_t line;
};

struct truth;

/* Opens path ("-" is stdin).  Returns NULL with a message on stderr. */
struct truth *truth_open(const char *path);
void truth_close(struct truth *t);
/* 1 with an event, 0 at the end, -1 on a malformed line (message on stderr). */
int truth_next(struct truth *t, struct truth_event *ev);
/* Seeks back to the first line (not for stdin). */
int truth_rewind(struct truth *t);

#endif
