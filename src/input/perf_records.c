/* Decoding record bodies.  Each parser checks that the record is of its
 * type and long enough for every field it reads; strings must end inside
 * the record.  Pointers in the results point into rec->data. */
#include <string.h>

#include "common/bytes.h"
#include "common/error.h"
#include "input/perf_reader.h"

static const char *const kernel_names[] = {
	[PERF_RECORD_MMAP] = "MMAP",
	[PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[16] = "NAMESPACES",
	[17] = "KSYMBOL",
	[18] = "BPF_EVENT",
	[19] = "CGROUP",
	[20] = "TEXT_POKE",
	[21] = "AUX_OUTPUT_HW_ID",
};

static const char *const user_names[] = {
	[PTC_REC_HEADER_ATTR - 64] = "HEADER_ATTR",
	[PTC_REC_HEADER_EVENT_TYPE - 64] = "HEADER_EVENT_TYPE",
	[PTC_REC_HEADER_TRACING_DATA - 64] = "HEADER_TRACING_DATA",
	[PTC_REC_HEADER_BUILD_ID - 64] = "HEADER_BUILD_ID",
	[PTC_REC_FINISHED_ROUND - 64] = "FINISHED_ROUND",
	[PTC_REC_ID_INDEX - 64] = "ID_INDEX",
	[PTC_REC_AUXTRACE_INFO - 64] = "AUXTRACE_INFO",
	[PTC_REC_AUXTRACE - 64] = "AUXTRACE",
	[PTC_REC_AUXTRACE_ERROR - 64] = "AUXTRACE_ERROR",
	[PTC_REC_THREAD_MAP - 64] = "THREAD_MAP",
	[PTC_REC_CPU_MAP - 64] = "CPU_MAP",
	[PTC_REC_STAT_CONFIG - 64] = "STAT_CONFIG",
	[PTC_REC_STAT - 64] = "STAT",
	[PTC_REC_STAT_ROUND - 64] = "STAT_ROUND",
	[PTC_REC_EVENT_UPDATE - 64] = "EVENT_UPDATE",
	[PTC_REC_TIME_CONV - 64] = "TIME_CONV",
	[PTC_REC_HEADER_FEATURE - 64] = "HEADER_FEATURE",
	[PTC_REC_COMPRESSED - 64] = "COMPRESSED",
	[PTC_REC_FINISHED_INIT - 64] = "FINISHED_INIT",
	[PTC_REC_COMPRESSED2 - 64] = "COMPRESSED2",
};

const char *ptc_perf_record_name(uint32_t type)
{
	const char *n = NULL;

	if (type < sizeof(kernel_names) / sizeof(kernel_names[0]))
		n = kernel_names[type];
	else if (type >= 64 && type - 64 < sizeof(user_names) / sizeof(user_names[0]))
		n = user_names[type - 64];
	return n ? n : "UNKNOWN";
}

/* A NUL-terminated string at off inside the record, or NULL. */
static const char *rec_string(const struct ptc_perf_record *rec, size_t off)
{
	if (off >= rec->size || !memchr(rec->data + off, 0, rec->size - off))
		return NULL;
	return (const char *)rec->data + off;
}

#define NEED(cond) do { if (!(cond)) return -ptc_err_bad_record; } while (0)

int ptc_perf_parse_mmap(const struct ptc_perf_record *rec, struct ptc_perf_mmap *out)
{
	const uint8_t *d = rec->data;
	size_t fn_off;

	memset(out, 0, sizeof(*out));
	NEED(rec->type == PERF_RECORD_MMAP || rec->type == PERF_RECORD_MMAP2);
	NEED(rec->size >= 8 + 32);
	out->pid = ptc_le32(d + 8);
	out->tid = ptc_le32(d + 12);
	out->start = ptc_le64(d + 16);
	out->len = ptc_le64(d + 24);
	out->pgoff = ptc_le64(d + 32);
	out->executable = !(rec->misc & PERF_RECORD_MISC_MMAP_DATA);
	if (rec->type == PERF_RECORD_MMAP) {
		fn_off = 40;
	} else {
		/* maj, min, ino, ino_generation | build_id_size, res, build_id[20]; prot, flags */
		NEED(rec->size >= 40 + 24 + 8);
		if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			out->has_build_id = 1;
			out->build_id_size = d[40];
			NEED(out->build_id_size <= 20);
			memcpy(out->build_id, d + 44, 20);
		} else {
			out->maj = ptc_le32(d + 40);
			out->min = ptc_le32(d + 44);
			out->ino = ptc_le64(d + 48);
			out->ino_generation = ptc_le64(d + 56);
		}
		out->prot = ptc_le32(d + 64);
		out->flags = ptc_le32(d + 68);
		fn_off = 72;
	}
	out->filename = rec_string(rec, fn_off);
	NEED(out->filename);
	return 0;
}

int ptc_perf_parse_comm(const struct ptc_perf_record *rec, struct ptc_perf_comm *out)
{
	memset(out, 0, sizeof(*out));
	NEED(rec->type == PERF_RECORD_COMM);
	NEED(rec->size >= 8 + 8 + 1);
	out->pid = ptc_le32(rec->data + 8);
	out->tid = ptc_le32(rec->data + 12);
	out->exec = !!(rec->misc & PERF_RECORD_MISC_COMM_EXEC);
	out->comm = rec_string(rec, 16);
	NEED(out->comm);
	return 0;
}

int ptc_perf_parse_task(const struct ptc_perf_record *rec, struct ptc_perf_task *out)
{
	const uint8_t *d = rec->data;

	memset(out, 0, sizeof(*out));
	NEED(rec->type == PERF_RECORD_FORK || rec->type == PERF_RECORD_EXIT);
	NEED(rec->size >= 8 + 24);
	out->pid = ptc_le32(d + 8);
	out->ppid = ptc_le32(d + 12);
	out->tid = ptc_le32(d + 16);
	out->ptid = ptc_le32(d + 20);
	out->time = ptc_le64(d + 24);
	return 0;
}

int ptc_perf_parse_aux(const struct ptc_perf_record *rec, struct ptc_perf_aux *out)
{
	memset(out, 0, sizeof(*out));
	NEED(rec->type == PERF_RECORD_AUX);
	NEED(rec->size >= 8 + 24);
	out->aux_offset = ptc_le64(rec->data + 8);
	out->aux_size = ptc_le64(rec->data + 16);
	out->flags = ptc_le64(rec->data + 24);
	return 0;
}

int ptc_perf_parse_itrace_start(const struct ptc_perf_record *rec, struct ptc_perf_itrace_start *out)
{
	memset(out, 0, sizeof(*out));
	NEED(rec->type == PERF_RECORD_ITRACE_START);
	NEED(rec->size >= 8 + 8);
	out->pid = ptc_le32(rec->data + 8);
	out->tid = ptc_le32(rec->data + 12);
	return 0;
}

int ptc_perf_parse_switch(const struct ptc_perf_record *rec, struct ptc_perf_switch *out)
{
	memset(out, 0, sizeof(*out));
	NEED(rec->type == PERF_RECORD_SWITCH || rec->type == PERF_RECORD_SWITCH_CPU_WIDE);
	out->out = !!(rec->misc & PERF_RECORD_MISC_SWITCH_OUT);
	out->preempt = !!(rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	if (rec->type == PERF_RECORD_SWITCH_CPU_WIDE) {
		NEED(rec->size >= 8 + 8);
		out->next_prev_pid = ptc_le32(rec->data + 8);
		out->next_prev_tid = ptc_le32(rec->data + 12);
	}
	return 0;
}

int ptc_perf_parse_lost(const struct ptc_perf_record *rec, struct ptc_perf_lost *out)
{
	memset(out, 0, sizeof(*out));
	if (rec->type == PERF_RECORD_LOST) {
		NEED(rec->size >= 8 + 16);
		out->id = ptc_le64(rec->data + 8);
		out->lost = ptc_le64(rec->data + 16);
		return 0;
	}
	NEED(rec->type == PERF_RECORD_LOST_SAMPLES);
	NEED(rec->size >= 8 + 8);
	out->lost = ptc_le64(rec->data + 8);
	if (rec->sid.valid & PTC_SID_ID)
		out->id = rec->sid.id;
	return 0;
}

int ptc_perf_parse_auxtrace(const struct ptc_perf_record *rec, struct ptc_perf_auxtrace *out)
{
	const uint8_t *d = rec->data;

	memset(out, 0, sizeof(*out));
	NEED(rec->type == PTC_REC_AUXTRACE);
	NEED(rec->size >= PTC_AUXTRACE_RECORD_SIZE - 4);
	out->size = ptc_le64(d + 8);
	out->offset = ptc_le64(d + 16);
	out->reference = ptc_le64(d + 24);
	out->idx = ptc_le32(d + 32);
	out->tid = ptc_le32(d + 36);
	out->cpu = ptc_le32(d + 40);
	return 0;
}

int ptc_perf_parse_auxtrace_info(const struct ptc_perf_record *rec, struct ptc_perf_auxtrace_info *out)
{
	memset(out, 0, sizeof(*out));
	NEED(rec->type == PTC_REC_AUXTRACE_INFO);
	NEED(rec->size >= PTC_AUXTRACE_INFO_HEADER_SIZE);
	/* The reader hands out 8-byte aligned records, so priv[] is aligned. */
	NEED(((uintptr_t)rec->data & 7) == 0);
	out->type = ptc_le32(rec->data + 8);
	out->priv = (const uint64_t *)(const void *)(rec->data + PTC_AUXTRACE_INFO_HEADER_SIZE);
	out->nr_priv = (rec->size - PTC_AUXTRACE_INFO_HEADER_SIZE) / 8u;
	return 0;
}

int ptc_perf_parse_auxtrace_error(const struct ptc_perf_record *rec, struct ptc_perf_auxtrace_error *out)
{
	const uint8_t *d = rec->data;

	memset(out, 0, sizeof(*out));
	NEED(rec->type == PTC_REC_AUXTRACE_ERROR);
	/* header, type, code, cpu, pid, tid, fmt, ip, msg[64] */
	NEED(rec->size >= 8 + 24 + 8 + 64);
	out->type = ptc_le32(d + 8);
	out->code = ptc_le32(d + 12);
	out->cpu = ptc_le32(d + 16);
	out->pid = ptc_le32(d + 20);
	out->tid = ptc_le32(d + 24);
	out->fmt = ptc_le32(d + 28);
	out->ip = ptc_le64(d + 32);
	NEED(memchr(d + 40, 0, 64));
	out->msg = (const char *)d + 40;
	if (out->fmt >= 1 && rec->size >= 112)
		out->time = ptc_le64(d + 104);
	if (out->fmt >= 2 && rec->size >= 120) {
		out->machine_pid = ptc_le32(d + 112);
		out->vcpu = ptc_le32(d + 116);
	}
	return 0;
}
