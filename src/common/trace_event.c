/* Sparse batches of branch records made dense, for the sinks that want
 * every record (common/trace_event.h). */
#include "common/trace_event.h"

#include <string.h>

size_t ptc_batch_dense(const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm,
		       size_t *i, size_t *j, struct ptc_branch *out, size_t room)
{
	size_t k = 0;

	while (*i < n) {
		size_t end = *j < nm ? m[*j].at : n, take = end - *i;

		if (take) {
			if (take > room - k)
				take = room - k;
			memcpy(out + k, b + *i, take * sizeof(*b));
			k += take;
			*i += take;
			if (*i < end)
				break;	/* full */
			continue;
		}
		/* a path at *i */
		if (m[*j].path->records > room - k)
			break;
		ptc_path_records(out + k, m[*j].path, &b[*i]);
		k += m[*j].path->records;
		++*i;
		++*j;
	}
	return k;
}

int ptc_batch_give_dense(int (*branches)(void *ctx, const struct ptc_branch *b, size_t n), void *ctx,
			 const struct ptc_branch *b, size_t n, const struct ptc_path_mark *m, size_t nm)
{
	struct ptc_branch dense[PTC_DENSE_PIECE];
	size_t i = 0, j = 0, k;
	int err;

	if (!nm)
		return n ? branches(ctx, b, n) : 0;
	while ((k = ptc_batch_dense(b, n, m, nm, &i, &j, dense, sizeof(dense) / sizeof(dense[0]))) > 0)
		if ((err = branches(ctx, dense, k)) < 0)
			return err;
	return 0;
}
