/* xtrace-format (Kunpeng workload traces): writer (-f xtrace, in the
 * registry) and reader.  Layout and every decision ptconv made where the
 * public description is silent: ptconv-xtrace(5). */
#ifndef PTC_WRITERS_XTRACE_H
#define PTC_WRITERS_XTRACE_H

#include <stdint.h>
#include <stdio.h>

#define PTC_XT_SNAP_ID 0x58435450u	/* "PTCX" read as little-endian */
#define PTC_XT_VERSION 1
#define PTC_XT_HEADER_SIZE 24
#define PTC_XT_ISA_AARCH64 0
#define PTC_XT_ISA_X86_64 1
#define PTC_XT_SNAPSHOT_SIZE 384	/* with registers not captured (vector length 0) */
#define PTC_XT_GAP_LOST_UNKNOWN 0x00ffffffffffffffull	/* XGAP: lost branches unknown */

struct ptc_xtrace_insn {
	uint64_t pc;
	uint8_t len;
	uint8_t bytes[15];
	uint8_t el;		/* exception level */
	uint8_t block_start;	/* written with its PC (PCINST/XPCINST) */
	uint8_t has_target;	/* a TARGET_B token followed */
	uint64_t target;
	uint64_t offset;	/* byte offset of its token in the file */
	uint8_t after_gap;	/* an XGAP token came before it */
	uint8_t gap_cause;	/* then its cause (ptconv-trace(5) numbers) */
	uint64_t gap_lost;	/* and lost branches, PTC_XT_GAP_LOST_UNKNOWN */
};

struct ptc_xtrace_reader;

/* Open an instruction stream (*.xinsndata.bin).  On failure *r is NULL and
 * msg (if given) says why. */
int ptc_xtrace_open(struct ptc_xtrace_reader **r, const char *path, char *msg, size_t size);

/* The next instruction: 1, 0 at the end, or a negative error (see
 * ptc_xtrace_errmsg: file, byte offset, reason). */
int ptc_xtrace_next(struct ptc_xtrace_reader *r, struct ptc_xtrace_insn *in);
const char *ptc_xtrace_errmsg(const struct ptc_xtrace_reader *r);
void ptc_xtrace_close(struct ptc_xtrace_reader *r);

/* Print the instructions of path (one per line) and, when the matching
 * xsnapshot.bin exists, its header and snapshots. */
int ptc_xtrace_dump(const char *path, uint64_t count, FILE *out);

#endif
