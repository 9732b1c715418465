/* Fuzz target: ptconv's query decoder (fastq) against libipt's, in
 * lockstep (tests/unit/fastq_lockstep.h).  Whatever the bytes, where
 * ptc_fq_supported() takes them both decoders must give the same answer to
 * every question, under every configuration the conversion uses (with and
 * without a CTC:TSC ratio, with erratum BDM70); fastq must not crash on the
 * rest.  The questions' seed comes from the input's last byte.
 * Seeds: tests/fuzz/seeds/fuzz_fastq (pieces of ptgen streams). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../unit/fastq_lockstep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fastq_lockstep_counts cnt;
	struct pt_config cfg;
	char why[300];
	int mode;

	for (mode = 0; mode < 3; mode++) {
		pt_config_init(&cfg);
		cfg.begin = (uint8_t *)data;
		cfg.end = (uint8_t *)data + size;
		cfg.mtc_freq = 3;
		cfg.nom_freq = 20;
		if (mode) {
			cfg.cpuid_0x15_eax = 1;
			cfg.cpuid_0x15_ebx = 80;
		}
		cfg.errata.bdm70 = mode == 2;
		if (ptc_fq_supported(&cfg) != 1 || !fastq_lockstep_reference())
			continue;
		if (fastq_lockstep(&cfg, size ? data[size - 1] + 1u : 1u, 1u << 20, &cnt, why, sizeof(why)) < 0) {
			fprintf(stderr, "fastq and libipt differ (mode %d): %s\n", mode, why);
			abort();
		}
	}
	return 0;
}
