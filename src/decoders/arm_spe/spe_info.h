/* ARM SPE recording metadata: the AUXTRACE_INFO (type 4) private words and
 * the arm_spe event's perf_event_attr.
 *
 * Version 1 (perf before 6.6): priv = { PMU_TYPE, PER_CPU_MMAPS }, exactly
 * two words.  Version 2: priv = { VERSION (2), HEADER_SIZE (words in the
 * header), PMU_TYPE, NR_CPUS }, then at priv[HEADER_SIZE] one block per CPU:
 * { MAGIC 0x1010101010101010, CPU, NR_PARAMS, then NR_PARAMS words:
 * MIDR, PMU_TYPE, CAP_MIN_IVAL, (CAP_EVENT_FILTER, ...) }.
 */
#ifndef PTC_DECODERS_ARM_SPE_SPE_INFO_H
#define PTC_DECODERS_ARM_SPE_SPE_INFO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/perf_event.h>

struct ptc_spe_cpu_meta {
	uint64_t cpu;
	uint64_t midr;		/* MIDR_EL1 of the CPU */
	uint64_t pmu_type;	/* UINT64_MAX: no SPE PMU on this CPU */
	uint64_t min_interval;	/* the PMU's caps/min_interval, 0 when unknown */
	uint64_t event_filter;	/* caps/event_filter mask, 0 when not recorded */
	uint64_t nr_params;	/* words after NR_PARAMS in the block */
	int has_event_filter;
};

struct ptc_spe_info {
	unsigned int version;		/* 1 or 2 (or later, read as 2) */
	uint64_t pmu_type;
	int per_cpu_mmaps;		/* version 1 only; -1 when not recorded */
	uint64_t nr_cpus;
	struct ptc_spe_cpu_meta *cpus;	/* nr_cpus blocks (version 2), NULL for 1 */
};

/* Parse priv[0..nr_priv).  On bad metadata returns -ptc_err_bad_record and
 * writes "priv[N]: reason" to err. */
int ptc_spe_info_parse(struct ptc_spe_info *out, const uint64_t *priv, size_t nr_priv,
		       char *err, size_t errlen);
void ptc_spe_info_free(struct ptc_spe_info *info);
/* The block of a CPU, NULL when absent (always for version 1). */
const struct ptc_spe_cpu_meta *ptc_spe_info_cpu(const struct ptc_spe_info *info, uint64_t cpu);

/* The arm_spe PMU's attr.config bits (drivers/perf/arm_spe_pmu.c formats). */
#define PTC_SPE_CFG_TS_ENABLE	(1ULL << 0)	/* PMSCR.TS: timestamps */
#define PTC_SPE_CFG_PA_ENABLE	(1ULL << 1)	/* PMSCR.PA: physical addresses */
#define PTC_SPE_CFG_PCT_ENABLE	(1ULL << 2)	/* PMSCR.PCT: physical timestamps */
#define PTC_SPE_CFG_JITTER	(1ULL << 16)	/* PMSIRR.RND: random jitter of the interval */
#define PTC_SPE_CFG_BRANCH	(1ULL << 32)	/* PMSFCR.B: keep branches */
#define PTC_SPE_CFG_LOAD	(1ULL << 33)	/* PMSFCR.LD: keep loads */
#define PTC_SPE_CFG_STORE	(1ULL << 34)	/* PMSFCR.ST: keep stores */
#define PTC_SPE_CFG_DISCARD	(1ULL << 35)	/* PMBLIMITR.FM: discard mode */

/* Print, one "  key: value" per line, the SPE configuration: metadata
 * version, PMU type, per-CPU MIDR and minimum interval, and from the
 * arm_spe event's attr (the one of attrs[] whose type is the PMU type, or
 * the only one) the sampling period, filters (operation type, event mask
 * config1, minimum latency config2), timestamps,
 * physical addresses, jitter, user/kernel exclusion.  attrs may be NULL.
 * Returns 0, or -ptc_err_bad_record (after printing the reason) when the
 * metadata is malformed.  This is what `ptconv info` shows. */
int ptc_spe_describe_info(FILE *out, const uint64_t *priv, size_t nr_priv,
			  const struct perf_event_attr *const *attrs, size_t nr_attrs);

/* The attr of the arm_spe event among attrs (see above), or NULL. */
const struct perf_event_attr *ptc_spe_find_attr(const struct ptc_spe_info *info,
						const struct perf_event_attr *const *attrs,
						size_t nr_attrs);

#endif
