/* See x86_newer.h. */
#include "images/x86_newer.h"

#include "common/trace_event.h"

int ptc_x86_newer_branch(const uint8_t *p, size_t n, struct ptc_x86_newer *out)
{
	/* ERETU F3 0F 01 CA, ERETS F2 0F 01 CA */
	if (n >= 4 && (p[0] == 0xf3 || p[0] == 0xf2) && p[1] == 0x0f && p[2] == 0x01 && p[3] == 0xca) {
		out->name = p[0] == 0xf3 ? "ERETU" : "ERETS";
		out->length = 4;
		out->kind = PTC_BR_FAR;
		return 1;
	}
	/* JMPABS: the REX2 prefix D5 with M0 = 0 (legacy map 0) and W = 0
	 * (bits 7 and 3 of its payload byte), opcode A1, a 64-bit
	 * immediate: the target */
	if (n >= 11 && p[0] == 0xd5 && !(p[1] & 0x88) && p[2] == 0xa1) {
		out->name = "JMPABS";
		out->length = 11;
		out->kind = PTC_BR_JMP_IND;
		return 1;
	}
	return 0;
}
