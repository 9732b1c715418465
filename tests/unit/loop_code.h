/* A three-instruction loop at 0x1000 and a ptc_code_reader callback over
 * it: the code the writer unit tests' branch events run through. */
#ifndef PTC_TESTS_UNIT_LOOP_CODE_H
#define PTC_TESTS_UNIT_LOOP_CODE_H

#include <stdint.h>
#include <string.h>

static const uint8_t code_bytes[] = {
	0x48, 0x31, 0xc0,		/* 0x1000: xor %rax,%rax */
	0x48, 0xff, 0xc0,		/* 0x1003: inc %rax */
	0x75, 0xf8,			/* 0x1006: jne 0x1000 */
};

static size_t code_read(void *ctx, uint64_t ip, uint8_t *buf, size_t n)
{
	(void)ctx;
	if (ip < 0x1000 || ip >= 0x1000 + sizeof(code_bytes))
		return 0;
	if (n > 0x1000 + sizeof(code_bytes) - ip)
		n = 0x1000 + sizeof(code_bytes) - ip;
	memcpy(buf, code_bytes + (ip - 0x1000), n);
	return n;
}

#endif
