/* Fuzz target: the readers of ptconv's own trace format and of xtrace
 * streams must reject any input with an error, never crash or allocate
 * what the input merely claims. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create (the build defines it too) */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ptconv/trace.h"
#include "writers/xtrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ptc_trace_record rec[512];
	char path[64];
	int fd = memfd_create("ptc-fuzz", 0), err, n, rounds = 0;
	struct ptc_trace *t;
	struct ptc_xtrace_reader *x;
	struct ptc_xtrace_insn in;
	uint32_t before;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	t = ptc_trace_open(path, &err);
	if (t) {
		struct ptc_trace_gap g;
		struct ptc_trace_layout l;
		uint8_t code[16];
		/* the parts never claim more than the file, and the static
		 * part's sections add up to it, whatever the file says */
		if (ptc_trace_layout(t, &l, 4) == 0 ||
		    (ptc_trace_layout(t, &l, sizeof(l)) == 0 &&
		     (l.header_bytes + l.static_bytes + l.other_bytes > l.file_bytes ||
		      l.static_raw_bytes != l.static_head_bytes + l.table_bytes + l.index_bytes +
		      l.gap_table_bytes + l.code_bytes + l.string_bytes + l.symbol_bytes)))
			abort();
		while ((n = ptc_trace_read(t, rec, 512)) > 0 && rounds++ < 4096) {
			int i;
			for (i = 0; i < n; i++)
				if (rec[i].kind == PTC_TRACE_GAP)
					ptc_trace_gap(t, rec[i].insns, &g);
		}
		ptc_trace_seek_record(t, 3);
		ptc_trace_seek_insn(t, 5, &before);
		ptc_trace_code(t, 0x401000, code, sizeof(code));
		{
			/* an answer holds its address; the changes go forward */
			static const uint64_t addrs[] = { 0, 0x1000, 0x1050, 0x2000, 0x401000, UINT64_MAX };
			struct ptc_trace_symbol sym;
			uint64_t r = 0, k;
			for (k = 0; k < 16 && r != UINT64_MAX; k++) {
				size_t a;
				for (a = 0; a < sizeof(addrs) / sizeof(addrs[0]); a++)
					if (ptc_trace_symbol(t, r, addrs[a], &sym) &&
					    (sym.lo > addrs[a] || sym.hi <= addrs[a]))
						abort();
				if (ptc_trace_symbols_change(t, r) <= r)
					abort();
				r = ptc_trace_symbols_change(t, r);
			}
		}
		ptc_trace_close(t);
	}
	if (ptc_xtrace_open(&x, path, NULL, 0) == 0) {
		rounds = 0;
		while (ptc_xtrace_next(x, &in) > 0 && rounds++ < 100000)
			;
		ptc_xtrace_close(x);
	}
	close(fd);
	return 0;
}
