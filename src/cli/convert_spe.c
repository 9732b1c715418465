/* ARM SPE conversion: perf.data records to SPE sample outputs.
 *
 * Reads the recording once, in file order: metadata and sideband records
 * feed the SPE session (src/decoders/arm_spe/spe_session.h), AUXTRACE data
 * is streamed through it in bounded chunks, and every attributed sample
 * goes to the requested outputs (src/writers/spe/).  SPE is sampled: the
 * outputs describe one operation in N and are never branch traces.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "common/error.h"
#include "convert/pt_convert.h"
#include "decoders/arm_spe/spe_info.h"
#include "decoders/arm_spe/spe_session.h"
#include "decoders/arm_spe/spe_symbols.h"
#include "input/perf_reader.h"
#include "writers/spe/spe_writers.h"
#include "writers/writers.h"

#define AUX_CHUNK (1u << 20)

enum { OUT_CSV = 1, OUT_PROFILE = 2, OUT_BOLT = 4 };

struct conv {
	const struct ptc_convert_options *opt;
	struct ptc_spe_symbols *syms;
	struct ptc_spe_csv *csv;
	struct ptc_spe_profile *profile;
	struct ptc_spe_bolt *bolt;
	uint64_t kept, filtered, branches, retired_branches;
	int write_err;
};

/* Which of our formats were asked for; -1 when the list names only
 * formats that make no sense for sampled data. */
static int parse_formats(const char *list, char *bad, size_t badlen)
{
	char buf[512], *tok, *save = NULL;
	int out = 0, others = 0;

	bad[0] = 0;
	if (!list || !*list)
		return OUT_CSV | OUT_PROFILE;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "spe-csv"))
			out |= OUT_CSV;
		else if (!strcmp(tok, "spe-profile"))
			out |= OUT_PROFILE;
		else if (!strcmp(tok, "bolt"))
			out |= OUT_BOLT;
		else {
			others++;
			if (!bad[0])
				snprintf(bad, badlen, "%s", tok);
		}
	}
	return out ? out : (others ? -1 : OUT_CSV | OUT_PROFILE);
}

static int keep_sample(struct conv *c, const struct ptc_spe_sample *s)
{
	const struct ptc_convert_options *o = c->opt;

	if (o->pid >= 0 && s->pid != o->pid)
		return 0;
	if (o->tid >= 0 && s->tid != o->tid)
		return 0;
	if (o->comm && (!s->comm || strcmp(o->comm, s->comm)))
		return 0;
	if (o->time_start > 0 || (o->time_end && o->time_end != UINT64_MAX)) {
		if (!s->have_time || s->time < o->time_start ||
		    (o->time_end && s->time > o->time_end))
			return 0;
	}
	return 1;
}

static int on_sample(void *ctx, const struct ptc_spe_sample *s)
{
	struct conv *c = ctx;
	int err = 0;

	if (!keep_sample(c, s)) {
		c->filtered++;
		return 0;
	}
	c->kept++;
	if (ptc_spe_is_branch(s->rec)) {
		c->branches++;
		if (ptc_spe_retired(s->rec))
			c->retired_branches++;
	}
	if (c->csv)
		err = ptc_spe_csv_add(c->csv, s);
	if (!err && c->profile)
		err = ptc_spe_profile_add(c->profile, s);
	if (!err && c->bolt)
		err = ptc_spe_bolt_add(c->bolt, s);
	return err;
}

/* An output file, under its temporary name until close_out() (writers.h:
 * ptc_out_tmpname). */
static FILE *open_out(const char *dir, const char *name, char *path, size_t len)
{
	char tmp[4300];
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	f = ptc_out_tmpname(tmp, sizeof(tmp), path) < 0 ? NULL : fopen(tmp, "w");
	if (!f)
		ptc_cli_error("%s: cannot create: %s", path, strerror(errno));
	return f;
}

/* Close output file name of dir: under its name when the conversion
 * succeeded (ok), else its temporary goes.  0, or -1 after a message. */
static int close_out(const char *dir, const char *name, FILE *f, int ok)
{
	char path[4200];
	int bad = ferror(f);	/* (a write that failed before the last one leaves fclose() 0) */

	bad |= fclose(f) != 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!ok || bad) {
		ptc_out_discard(path);
		if (bad)
			ptc_cli_error("%s: write failed: %s", path, strerror(errno));
		return bad ? -1 : 0;
	}
	if (ptc_out_commit(path) < 0) {
		ptc_cli_error("%s: cannot give the complete file its name: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The arm_spe event's attr: the one whose type is the SPE PMU type. */
static const struct perf_event_attr *spe_attr(struct ptc_perf_reader *r, const struct ptc_spe_info *info)
{
	size_t i, n = ptc_perf_nr_attrs(r);

	for (i = 0; i < n; i++) {
		const struct ptc_perf_attr *a = ptc_perf_attr(r, i);
		if (a && info && a->attr.type == info->pmu_type)
			return &a->attr;
	}
	return n == 1 ? &ptc_perf_attr(r, 0)->attr : NULL;
}

static int feed_aux(struct ptc_perf_reader *r, struct ptc_spe_session *s,
		    const struct ptc_perf_record *rec, uint8_t *buf)
{
	struct ptc_perf_auxtrace at;
	uint64_t off;
	int32_t cpu;
	int err = ptc_perf_parse_auxtrace(rec, &at);

	if (err < 0)
		return err;
	cpu = at.cpu == UINT32_MAX ? -1 : (int32_t)at.cpu;
	off = at.offset;
	for (;;) {
		ssize_t n = ptc_perf_read_aux(r, buf, AUX_CHUNK);

		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		err = ptc_spe_session_aux(s, cpu, (int32_t)at.tid, off, buf, (size_t)n);
		if (err < 0)
			return err;
		off += (uint64_t)n;
	}
	return 0;
}

static int convert(const struct ptc_convert_options *opt, struct ptc_perf_reader *r);

/* The caller may have read records already (to find out that this is an
 * SPE recording): a regular file is read afresh from its start so that no
 * sideband record before the AUXTRACE_INFO is missed; a pipe is read from
 * where the caller left it, which must be before the AUXTRACE_INFO record. */
int ptc_convert_arm_spe(const struct ptc_convert_options *opt, struct ptc_perf_reader *r)
{
	struct ptc_perf_reader *own = NULL;
	char err[512];
	int ret;

	if (opt->input && strcmp(opt->input, "-") && ptc_perf_seekable(r) &&
	    ptc_perf_open(&own, opt->input, err, sizeof(err)) == 0) {
		ret = convert(opt, own);
		ptc_perf_close(own);
		return ret;
	}
	return convert(opt, r);
}

static int convert(const struct ptc_convert_options *opt, struct ptc_perf_reader *r)
{
	struct conv c;
	struct ptc_spe_session *s = NULL;
	struct ptc_perf_record rec;
	const struct ptc_spe_session_stats *st;
	const struct perf_event_attr *attr = NULL;
	char dirbuf[4096], path[4200], bad[128], err[256];
	const char *dir = opt->outdir;
	FILE *fcsv = NULL, *fprof = NULL, *fbolt = NULL;
	uint8_t *buf = NULL;
	uint64_t period = 0, aux_lost = 0, lost_records = 0, aux_errors = 0;
	int formats, ret, status = PTC_EXIT_OK, have_info = 0, have_tc = 0, ok;

	memset(&c, 0, sizeof(c));
	c.opt = opt;
	formats = parse_formats(opt->formats, bad, sizeof(bad));
	if (formats < 0) {
		ptc_cli_error("-f %s: not an ARM SPE output; SPE recordings are sampled, not "
			      "control-flow traces: use spe-csv, spe-profile or bolt", bad);
		return PTC_EXIT_USAGE;
	}
	if (bad[0] && !opt->quiet)
		ptc_cli_error("warning: -f %s ignored: ARM SPE recordings are sampled, not control-flow "
			      "traces", bad);
	if (!dir) {
		const char *in = opt->input && strcmp(opt->input, "-") ? opt->input : "stdin";
		snprintf(dirbuf, sizeof(dirbuf), "%s.ptconv", in);
		dir = dirbuf;
	}
	{	/* the directory is this run's */
		char msg[4400];
		int old, tmp;
		if (ptc_out_prepare(dir, opt->input, 0, &old, &tmp, msg, sizeof(msg)) < 0) {
			ptc_cli_error("%s", msg);
			return PTC_EXIT_OUTPUT;
		}
	}
	buf = malloc(AUX_CHUNK);
	if (!buf || ptc_spe_session_new(&s, on_sample, &c) ||
	    ptc_spe_symbols_new(&c.syms, opt->symfs, opt->buildid_dir)) {
		ptc_cli_error("out of memory");
		status = PTC_EXIT_INPUT;
		goto out;
	}
	if ((formats & OUT_CSV) && !(fcsv = open_out(dir, "spe.csv", path, sizeof(path)))) {
		status = PTC_EXIT_OUTPUT;
		goto out;
	}
	if ((formats & OUT_PROFILE) && (ptc_spe_profile_new(&c.profile) ||
					!(fprof = open_out(dir, "spe-profile.csv", path, sizeof(path))))) {
		status = PTC_EXIT_OUTPUT;
		goto out;
	}
	if ((formats & OUT_BOLT) && (ptc_spe_bolt_new(&c.bolt) ||
				     !(fbolt = open_out(dir, "spe.bolt.fdata", path, sizeof(path))))) {
		status = PTC_EXIT_OUTPUT;
		goto out;
	}

	while ((ret = ptc_perf_next(r, &rec)) > 0) {
		switch (rec.type) {
		case PTC_REC_AUXTRACE_INFO: {
			struct ptc_perf_auxtrace_info ai;

			if (ptc_perf_parse_auxtrace_info(&rec, &ai) < 0 || ai.type != PTC_AUXTRACE_ARM_SPE)
				break;
			if (ptc_spe_session_set_info(s, ai.priv, ai.nr_priv, err, sizeof(err)) < 0) {
				ptc_cli_error("%s: offset 0x%" PRIx64 ": %s", ptc_perf_name(r), rec.offset, err);
				status = PTC_EXIT_INPUT;
				goto out;
			}
			have_info = 1;
			attr = spe_attr(r, ptc_spe_session_info(s));
			if (attr && !attr->freq)
				period = attr->sample_period;
			if (!c.csv && fcsv && ptc_spe_csv_new(&c.csv, fcsv, c.syms, period)) {
				status = PTC_EXIT_OUTPUT;
				goto out;
			}
			break;
		}
		case PTC_REC_TIME_CONV: {
			const struct ptc_perf_info *in = ptc_perf_info(r);

			if (in->have_time_conv) {
				struct ptc_time_conv tc = {
					.valid = 1, .time_shift = in->time_shift, .time_mult = in->time_mult,
					.time_zero = in->time_zero, .time_cycles = in->time_cycles,
					.time_mask = in->time_mask,
					.cap_user_time_short = in->cap_user_time_short,
				};
				ptc_spe_session_set_time_conv(s, &tc);
				have_tc = 1;
			}
			break;
		}
		case PERF_RECORD_COMM: {
			struct ptc_perf_comm cm;

			if (ptc_perf_parse_comm(&rec, &cm) == 0)
				ptc_spe_session_thread(s, (int32_t)cm.pid, (int32_t)cm.tid, cm.comm);
			break;
		}
		case PERF_RECORD_FORK: {
			struct ptc_perf_task t;

			if (ptc_perf_parse_task(&rec, &t) == 0)
				ptc_spe_session_thread(s, (int32_t)t.pid, (int32_t)t.tid, NULL);
			break;
		}
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2: {
			struct ptc_perf_mmap m;
			uint16_t mode = rec.misc & PERF_RECORD_MISC_CPUMODE_MASK;
			int32_t pid;

			if (ptc_perf_parse_mmap(&rec, &m) < 0 || !m.executable)
				break;
			pid = (mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL) ?
			      -1 : (int32_t)m.pid;
			if (ptc_spe_symbols_add_mmap(c.syms, pid, m.start, m.len, m.pgoff, m.filename,
						     m.build_id, m.has_build_id ? m.build_id_size : 0) < 0) {
				ptc_cli_error("out of memory");
				status = PTC_EXIT_INPUT;
				goto out;
			}
			break;
		}
		case PERF_RECORD_SWITCH:
		case PERF_RECORD_SWITCH_CPU_WIDE: {
			struct ptc_perf_switch sw;
			const struct ptc_perf_sample_id *id = &rec.sid;

			if (ptc_perf_parse_switch(&rec, &sw) < 0 ||
			    (id->valid & (PTC_SID_CPU | PTC_SID_TIME)) != (PTC_SID_CPU | PTC_SID_TIME))
				break;
			if (rec.type == PERF_RECORD_SWITCH_CPU_WIDE && sw.out)
				ptc_spe_session_sched(s, (int32_t)id->cpu, id->time,
						      (int32_t)sw.next_prev_pid, (int32_t)sw.next_prev_tid);
			else if (!sw.out && (id->valid & PTC_SID_TID))
				ptc_spe_session_sched(s, (int32_t)id->cpu, id->time,
						      (int32_t)id->pid, (int32_t)id->tid);
			else if (sw.out)
				ptc_spe_session_sched(s, (int32_t)id->cpu, id->time, -1, -1);
			break;
		}
		case PERF_RECORD_ITRACE_START: {
			struct ptc_perf_itrace_start it;
			const struct ptc_perf_sample_id *id = &rec.sid;

			if (ptc_perf_parse_itrace_start(&rec, &it) == 0 &&
			    (id->valid & (PTC_SID_CPU | PTC_SID_TIME)) == (PTC_SID_CPU | PTC_SID_TIME))
				ptc_spe_session_sched(s, (int32_t)id->cpu, id->time,
						      (int32_t)it.pid, (int32_t)it.tid);
			break;
		}
		case PERF_RECORD_AUX: {
			struct ptc_perf_aux a;

			if (ptc_perf_parse_aux(&rec, &a) == 0 &&
			    (a.flags & (PTC_AUX_FLAG_TRUNCATED | PTC_AUX_FLAG_PARTIAL | PTC_AUX_FLAG_COLLISION)))
				aux_lost++;
			break;
		}
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES:
			lost_records++;
			break;
		case PTC_REC_AUXTRACE_ERROR:
			aux_errors++;
			break;
		case PTC_REC_AUXTRACE:
			if (!have_info) {
				ptc_cli_error("%s: offset 0x%" PRIx64 ": AUXTRACE data before the ARM SPE "
					      "AUXTRACE_INFO record", ptc_perf_name(r), rec.offset);
				status = PTC_EXIT_INPUT;
				goto out;
			}
			ret = feed_aux(r, s, &rec, buf);
			if (ret == -ptc_err_io || ret == -ptc_err_nomem) {
				ptc_cli_error("%s: writing the outputs failed", dir);
				status = PTC_EXIT_OUTPUT;
				goto out;
			}
			if (ret < 0)
				goto read_error;	/* e.g. a file cut inside AUX data */
			break;
		default:
			break;
		}
	}
	if (ret < 0) {
read_error:
		/* What was decoded so far is still written; the error is reported. */
		ptc_cli_error("%s", ptc_perf_errmsg(r));
		status = PTC_EXIT_INPUT;
	}
	/* damaged input skipped: a loss like the others below */
	ptc_convert_say_damage(r);
	if (!have_info) {
		ptc_cli_error("%s: no ARM SPE AUXTRACE_INFO record", ptc_perf_name(r));
		status = PTC_EXIT_INPUT;
		goto out;
	}
	ptc_spe_session_finish(s);
	if (c.csv && ptc_spe_csv_finish(c.csv) < 0) {
		ptc_cli_error("%s/spe.csv: write failed", dir);
		status = PTC_EXIT_OUTPUT;
	}
	if (c.profile && ptc_spe_profile_write(c.profile, fprof, c.syms, period) < 0) {
		ptc_cli_error("%s/spe-profile.csv: write failed", dir);
		status = PTC_EXIT_OUTPUT;
	}
	if (c.bolt) {
		uint64_t written, skipped;
		const char *dso;

		if (ptc_spe_bolt_write(c.bolt, fbolt, c.syms, &dso, &written, &skipped) < 0) {
			ptc_cli_error("%s/spe.bolt.fdata: write failed", dir);
			status = PTC_EXIT_OUTPUT;
		} else if (!opt->quiet) {
			fprintf(stderr, "ptconv: bolt: %" PRIu64 " branch edges of %s written, %"
				PRIu64 " in other binaries left out\n", written,
				dso ? dso : "(unresolved addresses)", skipped);
		}
	}
	if ((c.profile && ptc_spe_profile_overflow(c.profile)) || (c.bolt && ptc_spe_bolt_overflow(c.bolt)))
		ptc_cli_error("more than %u static branches: %" PRIu64 " samples left out of the profile, %"
			      PRIu64 " out of the BOLT file", PTC_SPE_MAX_BRANCHES,
			      c.profile ? ptc_spe_profile_overflow(c.profile) : 0,
			      c.bolt ? ptc_spe_bolt_overflow(c.bolt) : 0);
	st = ptc_spe_session_stats(s);
	if (!opt->quiet) {
		fprintf(stderr, "ptconv: ARM SPE: %" PRIu64 " sampled records (1 in %" PRIu64
			" operations; a sample, not a control-flow trace), %" PRIu64 " kept, %"
			PRIu64 " branches (%" PRIu64 " retired)\n", st->samples, period, c.kept,
			c.branches, c.retired_branches);
		fprintf(stderr, "ptconv: threads from: %" PRIu64 " CONTEXT packets, %" PRIu64
			" per-thread queues, %" PRIu64 " switch events, %" PRIu64 " unknown; %" PRIu64
			" timed%s\n", st->tid_from[PTC_SPE_TID_CONTEXT], st->tid_from[PTC_SPE_TID_QUEUE],
			st->tid_from[PTC_SPE_TID_SWITCH], st->tid_from[PTC_SPE_TID_NONE], st->timed,
			have_tc ? "" : " (no TIME_CONV: raw timer values)");
	}
	if (st->decode.bad_bytes || st->decode.dropped_records || aux_lost || lost_records ||
	    aux_errors || st->decode.discontinuities || ptc_perf_stats(r)->skips) {
		ptc_cli_error("lost: %" PRIu64 " records dropped (%" PRIu64 " bytes), %" PRIu64
			      " corrupt bytes skipped in %" PRIu64 " resynchronisations, %" PRIu64
			      " stream breaks, %" PRIu64 " AUX records flagged truncated/partial/collision, %"
			      PRIu64 " LOST records, %" PRIu64 " AUXTRACE_ERROR records, %" PRIu64
			      " bytes of damaged input skipped",
			      st->decode.dropped_records, st->decode.dropped_bytes, st->decode.bad_bytes,
			      st->decode.resyncs, st->decode.discontinuities, aux_lost, lost_records,
			      aux_errors, ptc_perf_stats(r)->skipped_bytes);
		if (st->bad_offset != UINT64_MAX) {
			if (st->bad_cpu >= 0)
				ptc_cli_error("%s: AUX data of cpu %d: offset 0x%" PRIx64 ": a byte that is no "
					      "SPE packet header (the first corrupt byte)", ptc_perf_name(r),
					      st->bad_cpu, st->bad_offset);
			else
				ptc_cli_error("%s: AUX data of thread %d: offset 0x%" PRIx64 ": a byte that is "
					      "no SPE packet header (the first corrupt byte)", ptc_perf_name(r),
					      st->bad_tid, st->bad_offset);
		}
		if (opt->strict && status == PTC_EXIT_OK)
			status = PTC_EXIT_GAPS;
	}
	if (!opt->quiet && ptc_spe_symbols_missing(c.syms))
		fprintf(stderr, "ptconv: %zu mapped files not found (use --symfs or --buildid-dir): "
			"their addresses are not symbolised\n", ptc_spe_symbols_missing(c.syms));
	if (!opt->quiet && ptc_spe_symbols_mismatched(c.syms))
		fprintf(stderr, "ptconv: %zu mapped files found with another build-id than recorded: "
			"not used\n", ptc_spe_symbols_mismatched(c.syms));
out:
	if (fcsv && !c.csv && status == PTC_EXIT_OK)
		ptc_spe_csv_new(&c.csv, fcsv, c.syms, period);	/* header even when empty */
	ptc_spe_csv_free(c.csv);
	ptc_spe_profile_free(c.profile);
	ptc_spe_bolt_free(c.bolt);
	/* whole files of what was decoded, also from a damaged input; not
	 * after a write error */
	ok = status != PTC_EXIT_OUTPUT;
	if (fcsv && close_out(dir, "spe.csv", fcsv, ok) < 0 && ok)
		status = PTC_EXIT_OUTPUT;
	if (fprof && close_out(dir, "spe-profile.csv", fprof, ok) < 0 && ok)
		status = PTC_EXIT_OUTPUT;
	if (fbolt && close_out(dir, "spe.bolt.fdata", fbolt, ok) < 0 && ok)
		status = PTC_EXIT_OUTPUT;
	ptc_spe_symbols_free(c.syms);
	ptc_spe_session_free(s);
	free(buf);
	return status;
}
