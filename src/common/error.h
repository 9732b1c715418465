/* ptconv error codes.
 *
 * As in libipt, functions return a negative error code (-ptc_err_*) on
 * failure, zero or a positive count on success; ptc_errstr() names a code.
 * Codes say what went wrong; the human message with file, offset and reason
 * is kept by the object that failed (e.g. ptc_perf_errmsg()).
 */
#ifndef PTC_COMMON_ERROR_H
#define PTC_COMMON_ERROR_H

enum ptc_error_code {
	ptc_ok = 0,
	ptc_err_internal,	/* a bug in ptconv */
	ptc_err_invalid,	/* invalid argument */
	ptc_err_nomem,		/* out of memory */
	ptc_err_io,		/* a read or write failed (see errno) */
	ptc_err_eos,		/* end of stream (not an error for iterators) */
	ptc_err_truncated,	/* the input ends inside a structure */
	ptc_err_bad_magic,	/* not a file of the expected kind */
	ptc_err_bad_size,	/* a size or offset in the input is impossible */
	ptc_err_bad_record,	/* a record's contents are malformed */
	ptc_err_foreign_endian,	/* written on a machine of the other byte order */
	ptc_err_unsupported,	/* valid input that ptconv does not handle */
	ptc_err_decompress,	/* a compressed record did not decompress */
	ptc_err_not_found,	/* a file, image or item is not there */
	ptc_err_mismatch,	/* e.g. a build-id that does not match */
	ptc_err_decode,		/* trace data that cannot be decoded */
	ptc_err_overflow,	/* a counter or buffer would overflow */
	ptc_err_interrupted,	/* the user asked to stop (a signal) */
	ptc_err_max
};

/* The name of an error code; accepts the code or its negation. */
const char *ptc_errstr(int code);

#endif
