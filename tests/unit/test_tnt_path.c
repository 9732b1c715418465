/* The walker's memo of TNT paths (decoders/intel_pt/tnt_path.h): paths
 * from the fuzz image's branch table for given bits, against its code
 * (tests/fuzz/pt_fuzz_image.h) read by hand: the counted loop, a call and
 * its return inside one path, the stops at an indirect jump and at a return
 * to a caller outside the path, and a memo without room.  (fuzz_tnt_path
 * compares whole decodings with and without the memo.) */
#include <stdio.h>
#include <stdlib.h>

#include "decoders/intel_pt/tnt_path.h"
#include "../fuzz/pt_fuzz_image.h"

static int failures;

#define CHECK(c, ...)							\
	do {								\
		if (!(c)) {						\
			failures++;					\
			printf("not ok - %s:%d: ", __FILE__, __LINE__);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

/* the table entry of the branch at addr */
static uint32_t entry(const struct ptc_tbranch *tb, size_t n, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (tb[i].ip == addr)
			return i;
	return PTC_NO_BRANCH;
}

static void test_paths(void)
{
	struct ptc_path_memo *m;
	const struct ptc_tbranch *tb;
	struct ptc_tnt_path *p, *q;
	size_t n;
	uint32_t jne;

	tb = ptc_image_branches(pt_fuzz_image(), &n);
	jne = entry(tb, n, 0x400007);
	CHECK(jne != PTC_NO_BRANCH, "the loop's jne is in the table");
	if (ptc_path_memo_new(&m, 1 << 20) < 0)
		abort();

	/* jne taken twice: two records, back at the jne with 3 instructions */
	p = ptc_path_memo_get(m, tb, (uint32_t)n, jne, 2, 0x3);
	CHECK(p && p->nsteps == 2 && p->tnt_bits == 2, "two taken bits: two branches");
	CHECK(p && !p->stack && !p->push_mask && !p->keep_mask && !p->max_depth, "no call, no return");
	if (p && p->nsteps == 2) {
		CHECK(p->step[0].ip == 0x400007 && p->step[0].taken && p->step[0].target == 0x400002,
		      "first: the jne, taken to 400002");
		CHECK(p->step[1].insns == 3, "inc, cmp, jne: 3 instructions");
		CHECK(p->end_idx == jne && p->end_insns == 3 && p->end_ip == 0x400002, "ends at the jne again");
		CHECK(p->path.records == 2 && p->path.bits == 2 && p->path.taken == 3 && !p->path.not_taken,
		      "its sink view");
	}
	/* the same key: the same path */
	q = ptc_path_memo_get(m, tb, (uint32_t)n, jne, 2, 0x3);
	CHECK(q == p, "a second lookup finds the first path");

	/* not taken, then the call, the nop and the compressed return (a
	 * taken bit) inside the path; it stops at the indirect jmp rbx */
	p = ptc_path_memo_get(m, tb, (uint32_t)n, jne, 2, 0x1);
	CHECK(p && p->nsteps == 3 && p->tnt_bits == 2, "jne, call, ret: three records for two bits (%u)",
	      p ? p->nsteps : 0);
	if (p && p->nsteps == 3) {
		CHECK(!p->step[0].taken && p->step[1].kind == PTC_BR_CALL && p->step[1].insns == 1,
		      "not taken, then the call (1 instruction)");
		CHECK(p->step[2].kind == PTC_BR_RET && p->step[2].target == 0x40000e && p->step[2].insns == 2,
		      "nop, ret: back to 40000e");
		CHECK(p->end_ip == 0x40000e && tb[p->end_idx].ip == 0x40000e && p->end_insns == 1,
		      "then the jmp rbx, one instruction on");
		CHECK(p->path.bits == 1 && p->path.taken == 0 && p->path.not_taken == 1,
		      "one conditional branch, not taken");
		/* on a call stack: one push, returned from within */
		CHECK(p->stack && p->push_mask == 1u << 1 && p->keep_mask == 0 && p->max_depth == 1,
		      "it pushes at its call, pops it again, goes one deep (%x %x %u)", p->push_mask,
		      p->keep_mask, p->max_depth);
	}
	/* not taken, then a not-taken bit for the return: the walker reports
	 * that, so the path stops after the jne */
	p = ptc_path_memo_get(m, tb, (uint32_t)n, jne, 2, 0x0);
	CHECK(p && p->nsteps == 1 && p->tnt_bits == 1, "a not-taken return is the walker's");
	/* it uses one bit: every key whose first bit is that one gets this
	 * very path, not a copy (the bits after it do not matter) */
	q = ptc_path_memo_get(m, tb, (uint32_t)n, jne, 1, 0x0);
	CHECK(q == p, "the key of the one bit it uses: the same path");
	q = ptc_path_memo_get(m, tb, (uint32_t)n, jne, 3, 0x1);
	CHECK(q == p, "three bits, the same first one: the same path");
	CHECK(ptc_path_memo_count(m) == 5, "five keys held (%zu)", ptc_path_memo_count(m));
	/* the return alone (a caller outside the path) is not a path */
	p = ptc_path_memo_get(m, tb, (uint32_t)n, entry(tb, n, 0x400019), 1, 0x1);
	CHECK(p && p->nsteps == 0, "a return whose call is not in the path: no path");
	q = ptc_path_memo_get(m, tb, (uint32_t)n, entry(tb, n, 0x400019), 2, 0x2);
	CHECK(q == p, "nor with other bits: the same empty path");
	CHECK(ptc_path_memo_count(m) == 8, "eight keys held (%zu)", ptc_path_memo_count(m));
	ptc_path_memo_free(m);

	/* a full memo answers NULL, never a wrong path */
	if (ptc_path_memo_new(&m, 4096) < 0)
		abort();
	p = ptc_path_memo_get(m, tb, (uint32_t)n, jne, 2, 0x3);
	CHECK(!p, "a memo with no room gives no path");
	CHECK(!ptc_path_memo_open(m), "a memo with no room says it is closed");
	ptc_path_memo_free(m);

	/* a memo that fills up closes, and keeps answering for what it holds */
	if (ptc_path_memo_new(&m, (size_t)384 << 10) < 0)
		abort();
	q = ptc_path_memo_get(m, tb, (uint32_t)n, jne, 2, 0x3);
	CHECK(q && ptc_path_memo_open(m), "the first path fits");
	{
		unsigned i, nbits, bits, got = 0, refused = 0;

		for (i = 0; i < (unsigned)n && !refused; i++)
			for (nbits = 1; nbits <= PTC_PATH_BITS && !refused; nbits++)
				for (bits = 0; bits < 1u << nbits && !refused; bits++) {
					if (ptc_path_memo_get(m, tb, (uint32_t)n, i, nbits, bits))
						got++;
					else
						refused = 1;
				}
		CHECK(refused && got > 100, "the memo fills up (%u paths) and refuses", got);
	}
	CHECK(!ptc_path_memo_open(m), "a full memo says it is closed");
	CHECK(ptc_path_memo_bytes(m) <= (size_t)384 << 10, "within its bytes (%zu)", ptc_path_memo_bytes(m));
	p = ptc_path_memo_get(m, tb, (uint32_t)n, jne, 2, 0x3);
	CHECK(p == q, "a full memo still gives the paths it holds");
	ptc_path_memo_free(m);
}

int main(void)
{
	test_paths();
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
