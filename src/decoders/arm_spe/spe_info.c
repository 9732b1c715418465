/* ARM SPE AUXTRACE_INFO metadata (see spe_info.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "decoders/arm_spe/spe_info.h"

#define SPE_CPU_MAGIC 0x1010101010101010ULL

static int fail(char *err, size_t errlen, size_t idx, const char *why)
{
	if (err && errlen)
		snprintf(err, errlen, "AUXTRACE_INFO priv[%zu] (byte %zu of the record): %s",
			 idx, 16 + 8 * idx, why);
	return -ptc_err_bad_record;
}

int ptc_spe_info_parse(struct ptc_spe_info *out, const uint64_t *priv, size_t nr_priv,
		       char *err, size_t errlen)
{
	size_t pos, i;
	uint64_t hdr;

	memset(out, 0, sizeof(*out));
	out->per_cpu_mmaps = -1;
	if (nr_priv < 2)
		return fail(err, errlen, nr_priv, "arm_spe metadata needs at least 2 words");
	if (nr_priv == 2) {
		/* Version 1 has no version word: it is recognised by its size,
		 * as perf does. */
		out->version = 1;
		out->pmu_type = priv[0];
		out->per_cpu_mmaps = priv[1] != 0;
		return 0;
	}
	if (priv[0] < 2)
		return fail(err, errlen, 0, "version word below 2 in a multi-word header");
	if (nr_priv < 4)
		return fail(err, errlen, nr_priv, "version 2 header needs 4 words");
	hdr = priv[1];
	if (hdr < 4 || hdr > nr_priv)
		return fail(err, errlen, 1, "header size outside the record");
	out->version = priv[0] > 0xffff ? 0xffff : (unsigned int)priv[0];
	out->pmu_type = priv[2];
	out->nr_cpus = priv[3];
	/* Each CPU block takes at least 3 words: bound the count by the record
	 * before allocating anything. */
	if (out->nr_cpus > (nr_priv - hdr) / 3)
		return fail(err, errlen, 3, "more CPUs than the record holds");
	if (out->nr_cpus) {
		out->cpus = calloc((size_t)out->nr_cpus, sizeof(*out->cpus));
		if (!out->cpus)
			return -ptc_err_nomem;
	}
	pos = (size_t)hdr;
	for (i = 0; i < out->nr_cpus; i++) {
		struct ptc_spe_cpu_meta *c = &out->cpus[i];
		uint64_t np;

		if (nr_priv - pos < 3) {
			ptc_spe_info_free(out);
			return fail(err, errlen, pos, "CPU block cut short");
		}
		if (priv[pos] != SPE_CPU_MAGIC) {
			ptc_spe_info_free(out);
			return fail(err, errlen, pos, "CPU block without its magic 0x1010101010101010");
		}
		c->cpu = priv[pos + 1];
		np = priv[pos + 2];
		if (np > nr_priv - pos - 3) {
			ptc_spe_info_free(out);
			return fail(err, errlen, pos + 2, "CPU block parameters run past the record");
		}
		c->nr_params = np;
		c->pmu_type = UINT64_MAX;
		if (np > 0)
			c->midr = priv[pos + 3];
		if (np > 1)
			c->pmu_type = priv[pos + 4];
		if (np > 2)
			c->min_interval = priv[pos + 5];
		if (np > 3) {
			c->event_filter = priv[pos + 6];
			c->has_event_filter = 1;
		}
		pos += 3 + (size_t)np;
	}
	return 0;
}

void ptc_spe_info_free(struct ptc_spe_info *info)
{
	free(info->cpus);
	info->cpus = NULL;
	info->nr_cpus = 0;
}

const struct ptc_spe_cpu_meta *ptc_spe_info_cpu(const struct ptc_spe_info *info, uint64_t cpu)
{
	uint64_t i;

	for (i = 0; i < info->nr_cpus; i++)
		if (info->cpus[i].cpu == cpu)
			return &info->cpus[i];
	return NULL;
}

const struct perf_event_attr *ptc_spe_find_attr(const struct ptc_spe_info *info,
						const struct perf_event_attr *const *attrs,
						size_t nr_attrs)
{
	size_t i;

	for (i = 0; attrs && i < nr_attrs; i++)
		if (attrs[i] && attrs[i]->type == info->pmu_type)
			return attrs[i];
	return attrs && nr_attrs == 1 ? attrs[0] : NULL;
}

/* MIDR_EL1: implementer 31:24, variant 23:20, architecture 19:16,
 * part number 15:4, revision 3:0. */
static const char *midr_name(uint64_t midr)
{
	static const struct { uint32_t impl, part; const char *name; } known[] = {
		{ 0x41, 0xd0c, "Neoverse N1" }, { 0x41, 0xd40, "Neoverse V1" },
		{ 0x41, 0xd49, "Neoverse N2" }, { 0x41, 0xd4f, "Neoverse V2" },
		{ 0x41, 0xd8e, "Neoverse N3" }, { 0x41, 0xd84, "Neoverse V3" },
		{ 0x41, 0xd0b, "Cortex-A76" }, { 0x41, 0xd41, "Cortex-A78" },
		{ 0x41, 0xd44, "Cortex-X1" }, { 0x41, 0xd46, "Cortex-A510" },
		{ 0x41, 0xd47, "Cortex-A710" }, { 0x41, 0xd48, "Cortex-X2" },
		{ 0x48, 0xd01, "HiSilicon TSV110 (Kunpeng 920)" },
		{ 0xc0, 0xac3, "Ampere-1" }, { 0xc0, 0xac4, "Ampere-1A" },
	};
	uint32_t impl = (midr >> 24) & 0xff, part = (midr >> 4) & 0xfff;
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].impl == impl && known[i].part == part)
			return known[i].name;
	return NULL;
}

static void print_event_mask(FILE *out, const char *key, uint64_t mask)
{
	int bit, any = 0;

	fprintf(out, "  %s: 0x%" PRIx64, key, mask);
	for (bit = 0; bit < 64; bit++) {
		const char *name;

		if (!(mask >> bit & 1))
			continue;
		name = NULL;
		if (bit < 26) {
			/* same names as the EVENTS packet */
			static const char *const n[26] = {
				"EXCEPTION-GEN", "RETIRED", "L1D-ACCESS", "L1D-REFILL",
				"TLB-ACCESS", "TLB-REFILL", "NOT-TAKEN", "MISPRED",
				"LLC-ACCESS", "LLC-REFILL", "REMOTE-ACCESS", "ALIGNMENT",
				NULL, NULL, NULL, NULL, "TXN", "SVE-PARTIAL-PRED",
				"SVE-EMPTY-PRED", "L2D-ACCESS", "L2D-MISS", "HITM", "LFB",
				"SNOOPED", "STREAMING-SVE", "SMCU",
			};
			name = n[bit];
		}
		fprintf(out, "%s%s", any ? "," : " (", name ? name : "");
		if (!name)
			fprintf(out, "bit%d", bit);
		any = 1;
	}
	fprintf(out, "%s\n", any ? ")" : "");
}

int ptc_spe_describe_info(FILE *out, const uint64_t *priv, size_t nr_priv,
			  const struct perf_event_attr *const *attrs, size_t nr_attrs)
{
	struct ptc_spe_info info;
	const struct perf_event_attr *a;
	char err[160];
	uint64_t i;
	int ret;

	ret = ptc_spe_info_parse(&info, priv, nr_priv, err, sizeof(err));
	if (ret < 0) {
		fprintf(out, "  arm_spe metadata: unusable: %s\n", err);
		return ret;
	}
	fprintf(out, "  trace: ARM SPE (sampled operations; not a control-flow trace)\n");
	fprintf(out, "  metadata version: %u\n", info.version);
	fprintf(out, "  PMU type: %" PRIu64 "\n", info.pmu_type);
	if (info.version == 1)
		fprintf(out, "  per-CPU mmaps: %s\n", info.per_cpu_mmaps ? "yes" : "no (per-thread)");
	else
		fprintf(out, "  CPUs described: %" PRIu64 "\n", info.nr_cpus);
	for (i = 0; i < info.nr_cpus; i++) {
		const struct ptc_spe_cpu_meta *c = &info.cpus[i];
		const char *name = midr_name(c->midr);

		fprintf(out, "  cpu %" PRIu64 ": MIDR 0x%" PRIx64 "%s%s%s", c->cpu, c->midr,
			name ? " (" : "", name ? name : "", name ? ")" : "");
		if (c->pmu_type == UINT64_MAX)
			fprintf(out, ", no SPE PMU");
		else
			fprintf(out, ", PMU type %" PRIu64 ", minimum interval %" PRIu64,
				c->pmu_type, c->min_interval);
		if (c->has_event_filter)
			fprintf(out, ", event filter caps 0x%" PRIx64, c->event_filter);
		fputc('\n', out);
	}
	a = ptc_spe_find_attr(&info, attrs, nr_attrs);
	if (a) {
		uint64_t cfg = a->config;
		int ops = !!(cfg & (PTC_SPE_CFG_BRANCH | PTC_SPE_CFG_LOAD | PTC_SPE_CFG_STORE));

		if (a->freq)
			fprintf(out, "  sampling: frequency %llu Hz (interval varies)\n",
				(unsigned long long)a->sample_freq);
		else
			fprintf(out, "  sampling interval: 1 in %llu operations%s\n",
				(unsigned long long)a->sample_period,
				cfg & PTC_SPE_CFG_JITTER ? " (with random jitter)" : "");
		fprintf(out, "  operation filter: %s%s%s%s\n", ops ? "" : "none (all operations)",
			cfg & PTC_SPE_CFG_BRANCH ? "branches " : "",
			cfg & PTC_SPE_CFG_LOAD ? "loads " : "",
			cfg & PTC_SPE_CFG_STORE ? "stores" : "");
		if (a->config1)
			print_event_mask(out, "event filter (config1, required events)", a->config1);
		else
			fprintf(out, "  event filter: none\n");
		fprintf(out, "  minimum latency filter: %llu cycles\n",
			(unsigned long long)(a->config2 & 0xfff));
		fprintf(out, "  timestamps: %s%s\n", cfg & PTC_SPE_CFG_TS_ENABLE ? "yes" : "no",
			cfg & PTC_SPE_CFG_PCT_ENABLE ? " (physical counter)" : "");
		fprintf(out, "  physical addresses: %s\n", cfg & PTC_SPE_CFG_PA_ENABLE ? "yes" : "no");
		if (cfg & PTC_SPE_CFG_DISCARD)
			fprintf(out, "  discard mode: yes (no records were written)\n");
		fprintf(out, "  exception levels: %s%s\n", a->exclude_user ? "" : "user ",
			a->exclude_kernel ? "" : "kernel");
	} else {
		fprintf(out, "  arm_spe event attr: not found (PMU type %" PRIu64 ")\n", info.pmu_type);
	}
	ptc_spe_info_free(&info);
	return 0;
}
