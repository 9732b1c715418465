/* The Intel PT conversion pipeline: perf.data (or raw PT bytes) in, one
 * trace per thread out.  Called by `ptconv convert`. */
#ifndef PTC_DECODERS_INTEL_PT_PT_CONVERT_H
#define PTC_DECODERS_INTEL_PT_PT_CONVERT_H

#include "cli/cli.h"

struct ptc_perf_reader;

/* What only the Intel PT pipeline needs beyond struct ptc_convert_options. */
struct ptc_pt_options {
	int engine_libipt;		/* --engine=libipt: libipt's block decoder */
	int engine_query;		/* --engine=query: the walker over libipt's
					 * query decoder only (no fastq.h) */
	int engine_steps;		/* --engine=steps: the walker one branch at a
					 * time (no memo of TNT paths) */
	const char *raw_pt;		/* --pt FILE: raw trace bytes */
	const char **images;		/* --image PATH[:ADDR[:OFFSET]] */
	size_t nr_images;
	const char *cpu;		/* --cpu FAMILY/MODEL/STEPPING */
	int zstd_level;			/* cbpexp entries, default 3 */
	int progress;			/* progress on stderr (terminal) */
	int check_partial;		/* --check-partial: decode AUX ranges flagged
					 * PARTIAL/COLLISION, keeping segments the
					 * next PSB confirms (a heuristic) */
	uint64_t bbv_interval;		/* --bbv N: SimPoint vectors every N instructions */
};

/* Returns an enum ptc_exit. */
int ptc_convert_intel_pt(const struct ptc_convert_options *opt, const struct ptc_pt_options *pt,
			 struct ptc_perf_reader *r);
int ptc_convert_raw_pt(const struct ptc_convert_options *opt, const struct ptc_pt_options *pt);
/* Say on standard error where the reader skipped damaged input (the file,
 * the offsets, why). */
void ptc_convert_say_damage(const struct ptc_perf_reader *r);
/* The same in JSON: skipped_input_bytes, repaired_records and input_damage
 * (offset, bytes, to_end, more_places, reason per place); r may be NULL. */
struct ptc_json;
void ptc_convert_json_damage(struct ptc_json *j, const struct ptc_perf_reader *r);

#endif
