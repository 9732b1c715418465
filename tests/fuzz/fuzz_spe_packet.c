/* Fuzz target: the ARM SPE packet and record layers, the AUXTRACE_INFO
 * metadata parser and the SPE outputs.
 *
 * The input is decoded packet by packet at every offset, then as an AUX
 * stream cut into pieces at places chosen by the input (contiguous, with
 * gaps, and overlapping as perf's padding makes them), and every record is
 * written as a CSV row and added to a profile and a BOLT aggregate.  The
 * same bytes are also read as AUXTRACE_INFO private words. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/bytes.h"
#include "decoders/arm_spe/spe_info.h"
#include "decoders/arm_spe/spe_record.h"
#include "decoders/arm_spe/spe_session.h"
#include "writers/spe/spe_writers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sinks {
	struct ptc_spe_csv *csv;
	struct ptc_spe_profile *prof;
	struct ptc_spe_bolt *bolt;
};

static int on_sample(void *ctx, const struct ptc_spe_sample *s)
{
	struct sinks *k = ctx;

	if (k->csv)
		ptc_spe_csv_add(k->csv, s);
	if (k->prof)
		ptc_spe_profile_add(k->prof, s);
	if (k->bolt)
		ptc_spe_bolt_add(k->bolt, s);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ptc_spe_session *s;
	struct sinks k = { 0 };
	struct ptc_spe_info info;
	struct ptc_time_conv tc = { .valid = 1, .time_mult = 3, .time_shift = 2, .time_zero = 7 };
	FILE *null = fopen("/dev/null", "w");
	uint64_t priv[64];
	size_t i, nw, pos;
	char desc[256], err[128];
	unsigned int step;

	/* packet layer at every offset */
	for (i = 0; i < size; i++) {
		struct ptc_spe_packet p;
		if (ptc_spe_packet_decode(&p, data + i, size - i, i) > 0) {
			struct ptc_spe_address a;
			struct ptc_spe_op o;
			ptc_spe_packet_describe(&p, desc, sizeof(desc));
			ptc_spe_address_fields(p.index, p.payload, &a);
			ptc_spe_op_fields(p.index, (uint8_t)p.payload, &o);
		}
	}

	/* metadata */
	nw = size / 8 < 64 ? size / 8 : 64;
	for (i = 0; i < nw; i++)
		priv[i] = ptc_le64(data + 8 * i);
	if (ptc_spe_info_parse(&info, priv, nw, err, sizeof(err)) == 0) {
		ptc_spe_info_cpu(&info, 1);
		ptc_spe_info_free(&info);
	}
	if (null)
		ptc_spe_describe_info(null, priv, nw, NULL, 0);

	/* record layer through a session, with outputs */
	if (ptc_spe_session_new(&s, on_sample, &k))
		goto out;
	ptc_spe_session_set_time_conv(s, &tc);
	ptc_spe_session_sched(s, 0, 10, 1, 2);
	ptc_spe_session_thread(s, 1, 2, "fuzz");
	if (null)
		ptc_spe_csv_new(&k.csv, null, NULL, 1024);
	ptc_spe_profile_new(&k.prof);
	ptc_spe_bolt_new(&k.bolt);
	step = size ? 1 + data[0] % 97 : 1;
	for (pos = 0; pos < size; ) {
		size_t n = size - pos < step ? size - pos : step;
		uint64_t off = pos;

		/* every fifth piece lands a little early or late */
		if ((pos / step) % 5 == 4)
			off = pos + (data[pos] & 8 ? 3 : 0) - (data[pos] & 4 ? 2 : 0);
		ptc_spe_session_aux(s, (int32_t)(pos / step % 2), -1, off, data + pos, n);
		pos += n;
		step = 1 + (step * 7 + 3) % 97;
	}
	ptc_spe_session_finish(s);
	ptc_spe_session_stats(s);
	if (null && k.prof)
		ptc_spe_profile_write(k.prof, null, NULL, 1024);
	if (null && k.bolt) {
		uint64_t w, sk;
		const char *dso;
		ptc_spe_bolt_write(k.bolt, null, NULL, &dso, &w, &sk);
	}
	ptc_spe_session_free(s);
out:
	ptc_spe_csv_free(k.csv);
	ptc_spe_profile_free(k.prof);
	ptc_spe_bolt_free(k.bolt);
	if (null)
		fclose(null);
	return 0;
}
