# ptgen-encode: ground truth -> Intel PT perf.data (see tests/ptgen/ground-truth.md).
noinst_PROGRAMS += tests/ptgen/ptgen-encode
tests_ptgen_ptgen_encode_SOURCES = tests/ptgen/encode/main.c \
	tests/ptgen/encode/ptenc.c tests/ptgen/encode/ptenc.h \
	tests/ptgen/encode/truth.c tests/ptgen/encode/truth.h
