# perf.data input: reader (and writer, used by the test generator).
noinst_HEADERS += src/input/perf_abi.h src/input/perf_reader.h
libptconv_a_SOURCES += src/input/perf_reader.c src/input/perf_records.c \
	src/images/locate.c src/common/json.c src/common/json.h
dist_man_MANS += man/ptconv-info.1

# Fuzz target (see tests/fuzz/local.mk); make check replays its seeds and,
# through tests/reader_fuzz_seeds.sh, the shared recordings.
# (tests/fuzz/local.mk is included after this file and sets FUZZ_TARGETS
# with `=`, so the target joins `make fuzz` as an extra prerequisite.)
fuzz: tests/fuzz/fuzz_perf_reader
check_PROGRAMS += tests/fuzz/fuzz_perf_reader
tests_fuzz_fuzz_perf_reader_SOURCES = tests/fuzz/fuzz_perf_reader.c tests/fuzz/standalone_main.c
tests_fuzz_fuzz_perf_reader_LDFLAGS = $(FUZZ_LDFLAGS)
EXTRA_DIST += tests/fuzz/gen_perf_seeds.py \
	tests/fuzz/seeds/fuzz_perf_reader/file.data \
	tests/fuzz/seeds/fuzz_perf_reader/pipe.data \
	tests/fuzz/seeds/fuzz_perf_reader/file-compressed.data \
	tests/fuzz/seeds/fuzz_perf_reader/pipe-compressed2.data \
	tests/fuzz/seeds/fuzz_perf_reader/pipe-empty.data
TESTS += tests/reader_fuzz_seeds.sh
EXTRA_DIST += tests/reader_fuzz_seeds.sh
check_PROGRAMS += tests/unit/test_perf_reader
tests_unit_test_perf_reader_SOURCES = tests/unit/test_perf_reader.c
TESTS += tests/unit/test_perf_reader
TESTS += tests/info_perf_oracle.sh
EXTRA_DIST += tests/info_perf_oracle.sh
TESTS += tests/reader_bad_input.sh
EXTRA_DIST += tests/reader_bad_input.sh
TESTS += tests/info_images.sh tests/info_json.sh
EXTRA_DIST += tests/info_images.sh tests/info_json.sh
TESTS += tests/reader_sample_ids.sh
EXTRA_DIST += tests/reader_sample_ids.sh
TESTS += tests/reader_large.sh
EXTRA_DIST += tests/reader_large.sh
