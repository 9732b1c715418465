# perf.data writer (used by the test generator ptgen-encode).
libptconv_a_SOURCES += src/input/perf_writer.c
noinst_HEADERS += src/input/perf_writer.h
check_PROGRAMS += tests/unit/test_perf_writer
tests_unit_test_perf_writer_SOURCES = tests/unit/test_perf_writer.c
TESTS += tests/unit/test_perf_writer
