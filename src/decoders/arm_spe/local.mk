# Build fragment for src/decoders/arm_spe (see Makefile.am).
# ARM SPE: packet layer, record layer, AUXTRACE_INFO metadata, and the
# session that turns a recording's AUX queues into attributed records.
libptconv_a_SOURCES += \
	src/decoders/arm_spe/spe_packet.c src/decoders/arm_spe/spe_packet.h \
	src/decoders/arm_spe/spe_record.c src/decoders/arm_spe/spe_record.h

check_PROGRAMS += tests/unit/test_spe_packet tests/unit/test_spe_real
tests_unit_test_spe_packet_SOURCES = tests/unit/test_spe_packet.c
tests_unit_test_spe_real_SOURCES = tests/unit/test_spe_real.c
TESTS += tests/unit/test_spe_packet tests/unit/test_spe_real
