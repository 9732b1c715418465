/* What libipt does not know, named for the gap it causes: packets of the
 * Intel SDM newer than the libipt loaded (libipt 2.0 decodes neither
 * Event Trace's CFE and EVD nor trigger tracing's TRIG; 2.1 decodes CFE
 * and EVD; 2.2 TRIG too) and branch instructions newer than its
 * instruction decoder (images/x86_newer.h). */
#ifndef PTC_DECODERS_INTEL_PT_UNKNOWN_H
#define PTC_DECODERS_INTEL_PT_UNKNOWN_H

#include <stddef.h>
#include <stdint.h>

#include <intel-pt.h>

/* The name of the packet that starts at p (n bytes readable) when it is one
 * of those, else NULL. */
const char *ptc_pt_newer_packet(const uint8_t *p, size_t n);

/* Why decoding failed with st (a libipt error code), in words: libipt's,
 * or for an opcode it does not know (-pte_bad_opc), the packet where its
 * packet decoder stops when it reads cfg's buffer from the PSB at
 * sync_off, named and placed (base + its offset in the buffer).  Writes
 * into buf (n bytes) and returns it. */
const char *ptc_pt_why(const struct pt_config *cfg, uint64_t sync_off, uint64_t base, int st, char *buf,
		       size_t n);

/* The same for an instruction at ip that libipt's decoder does not know:
 * "libipt X.Y does not decode NAME at IP", or NULL when the bytes (n at p)
 * are not one of the newer branches. */
const char *ptc_pt_why_insn(const uint8_t *p, size_t n, uint64_t ip, char *buf, size_t len);

/* The words a gap adds where an erratum of some processors explains what
 * the trace says (erratum: "BDM64", "BDM70", and which processors) but the
 * CPU is not known: that --cpu would apply its workaround.  Writes into
 * buf (n bytes) and returns it; "" when the CPU is known. */
const char *ptc_pt_errata_hint(int cpu_known, const char *erratum, char *buf, size_t n);
/* Is the last thing that cfg's buffer says between the PSB at sync_off
 * and the offset to (where a libipt decoder failed: with 2.1 and later the
 * last packet it read, whose event counts) a TSX abort (nothing answered
 * after it: a branch decoded from its packets before it, erratum BDM64)?
 * 1 and its IP in *ip, else 0 (the query decoder's answers from the PSB
 * on, bounded). */
int ptc_pt_abort_before(const struct pt_config *cfg, uint64_t sync_off, uint64_t to, uint64_t *ip);
#endif
