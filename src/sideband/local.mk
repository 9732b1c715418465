# Sideband model: mappings, threads, per-CPU switch timelines (see sideband.h);
# tracepoint samples (tracing-data container, sched_switch via libtraceevent).
libptconv_a_SOURCES += src/sideband/sideband.c src/sideband/sideband.h \
	src/sideband/tracepoint.c src/sideband/tracepoint.h
check_PROGRAMS += tests/unit/test_tracepoint tests/unit/test_sideband
tests_unit_test_tracepoint_SOURCES = tests/unit/test_tracepoint.c
tests_unit_test_sideband_SOURCES = tests/unit/test_sideband.c
TESTS += tests/unit/test_tracepoint tests/unit/test_sideband
# End to end: attribution by sched:sched_switch samples, LOST records,
# untimed per-CPU traces (ground truth + Linux perf as oracles).
TESTS += tests/pt_sched_switch.sh
EXTRA_DIST += tests/pt_sched_switch.sh
# Fuzz target for the tracing-data parser, and the replay of its seeds.
fuzz: tests/fuzz/fuzz_tracing_data
check_PROGRAMS += tests/fuzz/fuzz_tracing_data
tests_fuzz_fuzz_tracing_data_SOURCES = tests/fuzz/fuzz_tracing_data.c tests/fuzz/standalone_main.c
tests_fuzz_fuzz_tracing_data_LDFLAGS = $(FUZZ_LDFLAGS)
TESTS += tests/sideband_fuzz_seeds.sh
EXTRA_DIST += tests/sideband_fuzz_seeds.sh \
	tests/fuzz/seeds/fuzz_tracing_data/linux-6.1-sched_switch.tracing
