#include "common/error.h"

const char *ptc_errstr(int code)
{
	if (code < 0)
		code = -code;
	switch ((enum ptc_error_code)code) {
	case ptc_ok: return "success";
	case ptc_err_internal: return "internal error";
	case ptc_err_invalid: return "invalid argument";
	case ptc_err_nomem: return "out of memory";
	case ptc_err_io: return "input/output error";
	case ptc_err_eos: return "end of stream";
	case ptc_err_truncated: return "truncated input";
	case ptc_err_bad_magic: return "bad magic";
	case ptc_err_bad_size: return "impossible size or offset";
	case ptc_err_bad_record: return "malformed record";
	case ptc_err_foreign_endian: return "foreign byte order";
	case ptc_err_unsupported: return "unsupported";
	case ptc_err_decompress: return "decompression failed";
	case ptc_err_not_found: return "not found";
	case ptc_err_mismatch: return "mismatch";
	case ptc_err_decode: return "undecodable trace data";
	case ptc_err_overflow: return "overflow";
	case ptc_err_interrupted: return "interrupted";
	case ptc_err_max: break;
	}
	return "unknown error";
}
