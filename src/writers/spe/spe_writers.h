/* Outputs for ARM SPE samples.
 *
 * SPE samples one operation in N: these outputs describe sampled
 * operations and per-branch statistics estimated from them.  They are not
 * branch traces (nothing is said about the operations between samples),
 * and each file says so in its first line.
 *
 *   spe-csv      one row per record, every decoded field        (spe.csv)
 *   spe-profile  one row per static branch, hardest first        (spe-profile.csv)
 *   bolt         BOLT pre-aggregated branch lines                (spe.bolt.fdata)
 *
 * Columns are documented in ptconv-spe(7).
 */
#ifndef PTC_WRITERS_SPE_SPE_WRITERS_H
#define PTC_WRITERS_SPE_SPE_WRITERS_H

#include <stdint.h>
#include <stdio.h>

#include "decoders/arm_spe/spe_session.h"
#include "decoders/arm_spe/spe_symbols.h"

/* spe-csv: streams rows to f.  syms may be NULL (no symbol columns filled). */
struct ptc_spe_csv;
int ptc_spe_csv_new(struct ptc_spe_csv **out, FILE *f, struct ptc_spe_symbols *syms,
		    uint64_t sample_period);
int ptc_spe_csv_add(struct ptc_spe_csv *w, const struct ptc_spe_sample *s);
/* Flushes; returns -ptc_err_io when a write failed. */
int ptc_spe_csv_finish(struct ptc_spe_csv *w);
void ptc_spe_csv_free(struct ptc_spe_csv *w);

/* The 95% Wilson score interval of k successes in n trials. */
void ptc_wilson_interval(uint64_t k, uint64_t n, double *lo, double *hi);

/* spe-profile: aggregates branch records by (process, PC). */
struct ptc_spe_profile;
int ptc_spe_profile_new(struct ptc_spe_profile **out);
int ptc_spe_profile_add(struct ptc_spe_profile *p, const struct ptc_spe_sample *s);
/* Rows sorted hardest-to-predict first.  sample_period is the attr's
 * sampling interval (0 when unknown: the estimate column stays empty). */
int ptc_spe_profile_write(struct ptc_spe_profile *p, FILE *f, struct ptc_spe_symbols *syms,
			  uint64_t sample_period);
size_t ptc_spe_profile_branches(const struct ptc_spe_profile *p);
/* Memory stays bounded: at most PTC_SPE_MAX_BRANCHES static branches (and
 * as many BOLT edges) are kept; samples of further ones are counted here. */
#define PTC_SPE_MAX_BRANCHES (1u << 22)
uint64_t ptc_spe_profile_overflow(const struct ptc_spe_profile *p);
void ptc_spe_profile_free(struct ptc_spe_profile *p);

/* One aggregated row, for tests and other consumers. */
struct ptc_spe_branch_stats {
	int32_t pid;
	uint64_t pc;
	uint8_t op_payload;		/* OP_TYPE payload of the first sample */
	uint8_t mixed_op;		/* samples disagreed on the operation type */
	uint64_t samples, retired, taken, not_taken, mispred;
	uint64_t lat_n, lat_total_sum, lat_total_max, lat_issue_sum;
};
/* The row of (pid, pc), NULL when none. */
const struct ptc_spe_branch_stats *ptc_spe_profile_get(const struct ptc_spe_profile *p,
						       int32_t pid, uint64_t pc);

/* bolt: taken branches as "B from to count mispred" lines. */
struct ptc_spe_bolt;
int ptc_spe_bolt_new(struct ptc_spe_bolt **out);
int ptc_spe_bolt_add(struct ptc_spe_bolt *b, const struct ptc_spe_sample *s);
/* Writes the branches of the binary with the most taken-branch samples
 * (ELF virtual addresses when the file is found, else the run-time
 * addresses); *written and *skipped count the (from, to) pairs. */
int ptc_spe_bolt_write(struct ptc_spe_bolt *b, FILE *f, struct ptc_spe_symbols *syms,
		       const char **dso, uint64_t *written, uint64_t *skipped);
void ptc_spe_bolt_free(struct ptc_spe_bolt *b);
uint64_t ptc_spe_bolt_overflow(const struct ptc_spe_bolt *b);

/* Whether a branch record was taken, trusting NOT-TAKEN only for
 * conditional operations (for others it is always taken). */
static inline int ptc_spe_branch_taken(const struct ptc_spe_record *r)
{
	if (r->op.cond)
		return !ptc_spe_not_taken(r);
	return 1;
}

#endif
