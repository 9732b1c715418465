# ptgen-encode: ground truth -> Intel PT perf.data (see tests/ptgen/ground-truth.md).
noinst_PROGRAMS += tests/ptgen/ptgen-encode
tests_ptgen_ptgen_encode_SOURCES = tests/ptgen/encode/encode.c \
	tests/ptgen/encode/gen.c tests/ptgen/encode/gen.h \
	tests/ptgen/encode/ptenc.c tests/ptgen/encode/ptenc.h \
	tests/ptgen/encode/truth.c tests/ptgen/encode/truth.h

# libipt as a reference decoder for the oracle tests.
check_PROGRAMS += tests/ptgen/ptblk
tests_ptgen_ptblk_SOURCES = tests/ptgen/ptblk.c tests/ptgen/read-file.h
EXTRA_DIST += tests/ptgen/encode/compare.py tests/ptgen/encode/README.md

# Oracle tests: real executions traced by ptgen-trace, encoded, and decoded
# by Linux perf and by libipt.  The traced programs are compiled by the
# tests themselves, without the sanitizer flags of the build.
AM_TESTS_ENVIRONMENT += PTGEN_CC='$(CC)'; export PTGEN_CC;
TESTS += tests/ptgen/encode-perf.sh tests/ptgen/encode-libipt.sh \
	tests/ptgen/encode-corpus.sh
EXTRA_DIST += tests/ptgen/encode-perf.sh tests/ptgen/encode-libipt.sh \
	tests/ptgen/encode-corpus.sh \
	tests/ptgen/encode/common.sh \
	tests/ptgen/encode/progs/pe_calls.c tests/ptgen/encode/progs/pe_threads.c \
	tests/ptgen/encode/progs/pe_fork.c

# ptgen-walk: scale mode (random walk over a real binary's code).
noinst_PROGRAMS += tests/ptgen/ptgen-walk
tests_ptgen_ptgen_walk_SOURCES = tests/ptgen/encode/walk.c \
	tests/ptgen/encode/gen.c tests/ptgen/encode/gen.h \
	tests/ptgen/encode/ptenc.c tests/ptgen/encode/ptenc.h \
	tests/ptgen/encode/truth.c tests/ptgen/encode/truth.h

# The packet policy, read back with libipt's packet decoder.
check_PROGRAMS += tests/ptgen/encode/test_ptenc
tests_ptgen_encode_test_ptenc_SOURCES = tests/ptgen/encode/test_ptenc.c \
	tests/ptgen/encode/ptenc.c tests/ptgen/encode/ptenc.h
TESTS += tests/ptgen/encode/test_ptenc

# libipt's query decoder alone over a raw stream: the ceiling contrib/bench
# prints beside the walker.
noinst_PROGRAMS += tests/ptgen/ptqry-rate
tests_ptgen_ptqry_rate_SOURCES = tests/ptgen/ptqry-rate.c tests/ptgen/read-file.h
