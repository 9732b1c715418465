/* Branch instructions newer than the decoders ptconv may be built with:
 * FRED's ERETU and ERETS (far returns to user and to supervisor mode) and
 * APX's JMPABS (a jump to a 64-bit absolute address that Intel PT traces
 * with a TIP, as an indirect jump).  Zydis 4.0 and libipt before 2.2 know
 * none of them: Zydis takes ERETU/ERETS for CLAC and fails on JMPABS's
 * REX2 prefix.  ptconv recognises them from their encodings in the Intel
 * SDM, so that the walker decodes them whatever Zydis says, and the
 * libipt engine can name the instruction where libipt does not know it. */
#ifndef PTC_IMAGES_X86_NEWER_H
#define PTC_IMAGES_X86_NEWER_H

#include <stddef.h>
#include <stdint.h>

struct ptc_x86_newer {
	const char *name;	/* "ERETU", "ERETS", "JMPABS" */
	uint8_t length;
	int8_t kind;		/* enum ptc_branch_kind */
};

/* Is the 64-bit-mode instruction at p (n bytes readable) one of them?
 * 1 with *out filled, else 0. */
int ptc_x86_newer_branch(const uint8_t *p, size_t n, struct ptc_x86_newer *out);

#endif
