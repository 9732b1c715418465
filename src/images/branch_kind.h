/* What kind of branch an x86 instruction is, as the images' branch tables
 * list it (branch_table.c): one classification for the walker's tables and
 * for the libipt engine, which classifies the instructions of libipt's
 * blocks itself. */
#ifndef PTC_IMAGES_BRANCH_KIND_H
#define PTC_IMAGES_BRANCH_KIND_H

#include <Zydis/Zydis.h>

/* The enum ptc_branch_kind (common/trace_event.h) of in, or -1 for a
 * non-branch.  Needs only the minimal decoding (mnemonic, opcode, ModRM,
 * immediates): far jumps, calls and returns (retf, retfq) are far. */
int ptc_branch_kind(const ZydisDecodedInstruction *in);

#endif
