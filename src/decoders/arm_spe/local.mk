# Build fragment for src/decoders/arm_spe (see Makefile.am), and for the
# ARM SPE outputs in src/writers/spe (no fragment of their own is included).
# ARM SPE: packet layer, record layer, AUXTRACE_INFO metadata, symbols, the
# session that turns a recording's AUX queues into attributed samples.
libptconv_a_SOURCES += \
	src/decoders/arm_spe/spe_packet.c src/decoders/arm_spe/spe_packet.h \
	src/decoders/arm_spe/spe_record.c src/decoders/arm_spe/spe_record.h \
	src/decoders/arm_spe/spe_info.c src/decoders/arm_spe/spe_info.h \
	src/decoders/arm_spe/spe_symbols.c src/decoders/arm_spe/spe_symbols.h \
	src/decoders/arm_spe/spe_session.c src/decoders/arm_spe/spe_session.h \
	src/writers/spe/spe_writers.h src/writers/spe/spe_csv.c \
	src/writers/spe/spe_profile.c src/writers/spe/spe_bolt.c

dist_man_MANS += man/ptconv-spe.7

check_PROGRAMS += tests/unit/test_spe_packet tests/unit/test_spe_real
tests_unit_test_spe_packet_SOURCES = tests/unit/test_spe_packet.c
tests_unit_test_spe_real_SOURCES = tests/unit/test_spe_real.c
TESTS += tests/unit/test_spe_packet tests/unit/test_spe_real

# perf.data round trip through the reader and ptc_convert_arm_spe(), and
# Linux perf's own decode of the version 1 file.
check_PROGRAMS += tests/unit/test_spe_perf
tests_unit_test_spe_perf_SOURCES = tests/unit/test_spe_perf.c tests/unit/spe_build.h src/cli/convert_spe.c
TESTS += tests/unit/test_spe_perf

# Profile statistics on a generated recording with known rates.
check_PROGRAMS += tests/unit/test_spe_profile
tests_unit_test_spe_profile_SOURCES = tests/unit/test_spe_profile.c tests/unit/spe_build.h src/cli/convert_spe.c
TESTS += tests/unit/test_spe_profile

# Fuzz target (see tests/fuzz/local.mk, included after this file: it sets
# FUZZ_TARGETS with `=`, so the target joins `make fuzz` directly); make
# check replays its seeds and the shared real buffers.
fuzz: tests/fuzz/fuzz_spe_packet
check_PROGRAMS += tests/fuzz/fuzz_spe_packet
tests_fuzz_fuzz_spe_packet_SOURCES = tests/fuzz/fuzz_spe_packet.c tests/fuzz/standalone_main.c
tests_fuzz_fuzz_spe_packet_LDFLAGS = $(FUZZ_LDFLAGS)
TESTS += tests/spe_fuzz_seeds.sh
EXTRA_DIST += tests/spe_fuzz_seeds.sh \
	tests/fuzz/seeds/fuzz_spe_packet/branches \
	tests/fuzz/seeds/fuzz_spe_packet/loads \
	tests/fuzz/seeds/fuzz_spe_packet/align \
	tests/fuzz/seeds/fuzz_spe_packet/corrupt \
	tests/fuzz/seeds/fuzz_spe_packet/metadata-v2
