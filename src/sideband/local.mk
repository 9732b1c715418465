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
