/* -f text: one line per branch, for reading and for diffing against
 * perf script or a ground truth.  Format (stable, see ptconv-convert(1)):
 *
 *   # ptconv text 1 pid PID tid TID comm COMM
 *   TID IP TARGET KIND TAKEN INSNS [after-gap]
 *   TID gap CAUSE aux=OFF resume=OFF|- lost-bytes=N lost-branches=N|? ip=IP resume-ip=IP : DETAIL
 *
 * IP and TARGET in hex with 0x, KIND one of jmp jmp-ind call call-ind ret
 * cond far, TAKEN 1 or 0, INSNS the instructions since the previous branch
 * (this one included).
 */
#ifndef PTC_WRITERS_TEXT_H
#define PTC_WRITERS_TEXT_H

#include "common/trace_event.h"

/* A sink writing path; its end() closes the file.  Free with
 * ptc_text_sink_free() after end(). */
int ptc_text_sink_new(struct ptc_sink **out, const char *path);
void ptc_text_sink_free(struct ptc_sink *s);

#endif
