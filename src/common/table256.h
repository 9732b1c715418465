/* A 256-entry table of constants, one per byte value, written out by the
 * preprocessor from a constant expression F(v): lookups by a byte then
 * cost one load instead of a chain of tests (packet sizes by first byte,
 * counter lanes by branch kind).
 *
 *   static const uint8_t sizes[256] = PTC_TABLE256(SIZE_OF);
 */
#ifndef PTC_COMMON_TABLE256_H
#define PTC_COMMON_TABLE256_H

#define PTC_TABLE4_(F, v) F(v), F((v) + 1), F((v) + 2), F((v) + 3)
#define PTC_TABLE16_(F, v) PTC_TABLE4_(F, v), PTC_TABLE4_(F, (v) + 4), PTC_TABLE4_(F, (v) + 8), \
	PTC_TABLE4_(F, (v) + 12)
#define PTC_TABLE64_(F, v) PTC_TABLE16_(F, v), PTC_TABLE16_(F, (v) + 16), PTC_TABLE16_(F, (v) + 32), \
	PTC_TABLE16_(F, (v) + 48)
#define PTC_TABLE256(F) { PTC_TABLE64_(F, 0), PTC_TABLE64_(F, 64), PTC_TABLE64_(F, 128), PTC_TABLE64_(F, 192) }

#endif
