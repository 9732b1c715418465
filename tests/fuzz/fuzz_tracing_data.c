/* Fuzz target: perf's tracing-data container from arbitrary bytes, the
 * sched_switch format through libtraceevent, and a sched_switch record
 * (the input's last 64 bytes) read with it.  Anything may fail; nothing
 * may crash, read out of bounds or allocate what the input only claims. */
#include <stddef.h>
#include <stdint.h>

#include "sideband/tracepoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ptc_tracing_data *td;
	struct ptc_sched_switch_reader *r;
	struct ptc_sched_switch s;
	char err[256];

	if (ptc_tracing_data_parse(data, size, "fuzz", 0, &td, err, sizeof(err)) < 0)
		return 0;
	ptc_tracing_data_find(td, "sched", "sched_switch");
	if (ptc_sched_switch_new(&r, td, "fuzz", 0, err, sizeof(err)) == 0) {
		size_t n = size < 64 ? size : 64;
		ptc_sched_switch_read(r, data + size - n, n, &s);
		ptc_sched_switch_free(r);
	}
	ptc_tracing_data_free(td);
	return 0;
}
