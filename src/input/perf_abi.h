/* The perf.data on-disk format: constants and fixed layouts.
 *
 * The kernel's records (PERF_RECORD_MMAP ...) and struct perf_event_attr come
 * from <linux/perf_event.h>; what only the perf tool defines (user records,
 * feature sections, file headers, AUXTRACE_INFO layouts) is spelled out here.
 * Shared by the reader and the writer so the two always agree.
 */
#ifndef PTC_INPUT_PERF_ABI_H
#define PTC_INPUT_PERF_ABI_H

#include <stdint.h>
#include <linux/perf_event.h>

#define PTC_PERF_MAGIC		0x32454c4946524550ULL	/* "PERFILE2" */
#define PTC_PERF_MAGIC_SWAPPED	0x50455246494c4532ULL
#define PTC_PERF_FILE_HEADER_SIZE	104
#define PTC_PERF_PIPE_HEADER_SIZE	16

/* Record types written by the perf tool itself (tools/lib/perf/include/perf/event.h). */
enum ptc_perf_user_record {
	PTC_REC_HEADER_ATTR = 64,
	PTC_REC_HEADER_EVENT_TYPE = 65,
	PTC_REC_HEADER_TRACING_DATA = 66,
	PTC_REC_HEADER_BUILD_ID = 67,
	PTC_REC_FINISHED_ROUND = 68,
	PTC_REC_ID_INDEX = 69,
	PTC_REC_AUXTRACE_INFO = 70,
	PTC_REC_AUXTRACE = 71,
	PTC_REC_AUXTRACE_ERROR = 72,
	PTC_REC_THREAD_MAP = 73,
	PTC_REC_CPU_MAP = 74,
	PTC_REC_STAT_CONFIG = 75,
	PTC_REC_STAT = 76,
	PTC_REC_STAT_ROUND = 77,
	PTC_REC_EVENT_UPDATE = 78,
	PTC_REC_TIME_CONV = 79,
	PTC_REC_HEADER_FEATURE = 80,
	PTC_REC_COMPRESSED = 81,
	PTC_REC_FINISHED_INIT = 82,
	PTC_REC_COMPRESSED2 = 83,
	PTC_REC_USER_MAX
};

/* Kernel records newer than some distributions' headers. */
#ifndef PERF_RECORD_AUX_OUTPUT_HW_ID
#define PERF_RECORD_AUX_OUTPUT_HW_ID 21
#endif
#define PTC_REC_KERNEL_MAX 64

/* PERF_RECORD_AUX flags. */
#define PTC_AUX_FLAG_TRUNCATED	0x01
#define PTC_AUX_FLAG_OVERWRITE	0x02
#define PTC_AUX_FLAG_PARTIAL	0x04
#define PTC_AUX_FLAG_COLLISION	0x08

/* MMAP2 carries a build-id instead of maj/min/ino when this misc bit is set. */
#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

/* Feature sections (bit numbers in the file header's feature bitmap). */
enum ptc_perf_feature {
	PTC_FEAT_RESERVED = 0,
	PTC_FEAT_TRACING_DATA = 1,
	PTC_FEAT_BUILD_ID,
	PTC_FEAT_HOSTNAME,
	PTC_FEAT_OSRELEASE,
	PTC_FEAT_VERSION,
	PTC_FEAT_ARCH,
	PTC_FEAT_NRCPUS,
	PTC_FEAT_CPUDESC,
	PTC_FEAT_CPUID,
	PTC_FEAT_TOTAL_MEM,
	PTC_FEAT_CMDLINE,
	PTC_FEAT_EVENT_DESC,
	PTC_FEAT_CPU_TOPOLOGY,
	PTC_FEAT_NUMA_TOPOLOGY,
	PTC_FEAT_BRANCH_STACK,
	PTC_FEAT_PMU_MAPPINGS,
	PTC_FEAT_GROUP_DESC,
	PTC_FEAT_AUXTRACE,
	PTC_FEAT_STAT,
	PTC_FEAT_CACHE,
	PTC_FEAT_SAMPLE_TIME,
	PTC_FEAT_MEM_TOPOLOGY,
	PTC_FEAT_CLOCKID,
	PTC_FEAT_DIR_FORMAT,
	PTC_FEAT_BPF_PROG_INFO,
	PTC_FEAT_BPF_BTF,
	PTC_FEAT_COMPRESSED,
	PTC_FEAT_CPU_PMU_CAPS,
	PTC_FEAT_CLOCK_DATA,
	PTC_FEAT_HYBRID_TOPOLOGY,
	PTC_FEAT_PMU_CAPS,
	PTC_FEAT_LAST,
	PTC_FEAT_BITS = 256
};

/* AUXTRACE_INFO types. */
enum ptc_auxtrace_type {
	PTC_AUXTRACE_UNKNOWN = 0,
	PTC_AUXTRACE_INTEL_PT = 1,
	PTC_AUXTRACE_INTEL_BTS = 2,
	PTC_AUXTRACE_CS_ETM = 3,
	PTC_AUXTRACE_ARM_SPE = 4,
	PTC_AUXTRACE_S390_CPUMSF = 5,
	PTC_AUXTRACE_HISI_PTT = 6,
};

/* Intel PT AUXTRACE_INFO priv[] indices; older files stop after PER_CPU_MMAPS. */
enum ptc_intel_pt_info {
	PTC_PT_PMU_TYPE,
	PTC_PT_TIME_SHIFT,
	PTC_PT_TIME_MULT,
	PTC_PT_TIME_ZERO,
	PTC_PT_CAP_USER_TIME_ZERO,
	PTC_PT_TSC_BIT,
	PTC_PT_NORETCOMP_BIT,
	PTC_PT_HAVE_SCHED_SWITCH,
	PTC_PT_SNAPSHOT_MODE,
	PTC_PT_PER_CPU_MMAPS,
	PTC_PT_MTC_BIT,
	PTC_PT_MTC_FREQ_BITS,
	PTC_PT_TSC_CTC_N,
	PTC_PT_TSC_CTC_D,
	PTC_PT_CYC_BIT,
	PTC_PT_MAX_NONTURBO_RATIO,
	PTC_PT_FILTER_STR_LEN,
	PTC_PT_INFO_NR	/* the filter string follows */
};

/* ARM SPE AUXTRACE_INFO. Version 1: priv = {PMU_TYPE, PER_CPU_MMAPS}. */
enum ptc_spe_info_v1 { PTC_SPE_V1_PMU_TYPE, PTC_SPE_V1_PER_CPU_MMAPS, PTC_SPE_V1_NR };
/* Version 2 header, then one block per CPU starting with PTC_SPE_CPU_MAGIC. */
enum ptc_spe_info_v2 { PTC_SPE_V2_VERSION, PTC_SPE_V2_HEADER_SIZE, PTC_SPE_V2_PMU_TYPE, PTC_SPE_V2_NR_CPUS };
#define PTC_SPE_CPU_MAGIC 0x1010101010101010ULL
enum ptc_spe_cpu_info { PTC_SPE_CPU_MAGIC_IDX, PTC_SPE_CPU_CPU, PTC_SPE_CPU_NR_PARAMS, PTC_SPE_CPU_MIDR, PTC_SPE_CPU_PMU_TYPE, PTC_SPE_CPU_CAP_MIN_IVAL };

/* Fixed record sizes (bytes, header included). */
#define PTC_AUXTRACE_RECORD_SIZE 48	/* size, offset, reference, idx, tid, cpu, reserved; trace data follows */
#define PTC_AUXTRACE_INFO_HEADER_SIZE 16	/* header + u32 type + u32 reserved; priv[] follows */

#endif
