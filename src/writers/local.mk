# Build fragment for src/writers: the output formats (see Makefile.am).
libptconv_a_SOURCES += src/writers/writers.c src/writers/writers.h src/writers/fmt.h \
	src/writers/insn.c src/writers/insn.h src/writers/wutil.c src/writers/wutil.h \
	src/writers/ptconv.c src/writers/ptc_format.h src/writers/trace_reader.c \
	src/writers/bt9.c src/writers/champsim.c src/writers/cbp2025.c \
	src/writers/xtrace.c src/writers/xtrace.h src/writers/bbv.c src/writers/outfile.c \
	src/writers/xray.c src/writers/calls.c src/writers/calls.h src/writers/procs.c \
	src/writers/perfetto.c src/writers/ptc_syms.c src/writers/ptc_syms.h
# -f perfetto's messages, compiled by protoc-c into the build tree
nodist_libptconv_a_SOURCES = src/writers/perfetto_trace.pb-c.c src/writers/perfetto_trace.pb-c.h
BUILT_SOURCES = src/writers/perfetto_trace.pb-c.c src/writers/perfetto_trace.pb-c.h
CLEANFILES += src/writers/perfetto_trace.pb-c.c src/writers/perfetto_trace.pb-c.h
EXTRA_DIST += src/writers/perfetto_trace.proto
src/writers/perfetto_trace.pb-c.h: src/writers/perfetto_trace.pb-c.c
src/writers/perfetto_trace.pb-c.c: $(top_srcdir)/src/writers/perfetto_trace.proto
	$(AM_V_GEN)$(MKDIR_P) src/writers && \
	$(PROTOC_C) --proto_path=$(top_srcdir)/src/writers --c_out=src/writers $(top_srcdir)/src/writers/perfetto_trace.proto
# (BUILT_SOURCES are made first by `make`, `make check` and `make install`
# only: `make fuzz` or `make src/ptconv` in a clean tree needs this)
src/writers/perfetto.$(OBJEXT): src/writers/perfetto_trace.pb-c.h
AM_CPPFLAGS += -I$(top_srcdir)/include -I$(top_builddir)/src

# libptconv-trace: the installed reader library of ptconv's trace format.
lib_LTLIBRARIES = libptconv-trace.la
libptconv_trace_la_SOURCES = src/writers/trace_reader.c src/writers/ptc_format.h \
	src/common/error.c src/common/error.h src/common/bytes.h \
	src/common/trace_names.c
# 1:0:1: ptc_trace_kind_name and ptc_trace_gap_cause_name added.
# 2:0:2: ptc_trace_layout added.
# 3:0:3: ptc_trace_flags, ptc_trace_symbol and ptc_trace_symbols_change added (format version 3).
libptconv_trace_la_LDFLAGS = -version-info 3:0:3 -export-symbols-regex '^ptc_trace_'
libptconv_trace_la_LIBADD = -lzstd
libptconv_trace_la_CFLAGS = $(AM_CFLAGS) -fvisibility=default
pkginclude_HEADERS = include/ptconv/trace.h
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = ptconv-trace.pc
EXTRA_DIST += ptconv-trace.pc.in

# Format tests: a test-only oracle (stepper), a feeder from ground truth to
# the writers, and independent readers in Python.
check_PROGRAMS += tests/writers/stepper tests/writers/truth2fmt tests/writers/bench_reader
tests_writers_stepper_SOURCES = tests/writers/stepper.c
tests_writers_truth2fmt_SOURCES = tests/writers/truth2fmt.c
tests_writers_bench_reader_SOURCES = tests/writers/bench_reader.c
TESTS += tests/writers/formats.sh tests/writers/consumers.sh
# -f xray against the ground truth, read back by llvm-xray (skipped without it)
TESTS += tests/writers/xray.sh
check_PROGRAMS += tests/writers/xray_feed tests/writers/ptc_syms_feed
tests_writers_xray_feed_SOURCES = tests/writers/xray_feed.c tests/writers/feed.h
tests_writers_ptc_syms_feed_SOURCES = tests/writers/ptc_syms_feed.c tests/writers/feed.h
EXTRA_DIST += tests/writers/xray.sh tests/writers/xray_truth.py tests/writers/xray_cpu.py tests/writers/xray_feed.c \
	tests/writers/xray_exc.cc tests/writers/cut_truth.py
# -f perfetto against the ground truth, read by an independent reader
TESTS += tests/writers/perfetto.sh
EXTRA_DIST += tests/writers/perfetto.sh tests/writers/perfetto_truth.py
# libptconv-trace installed, built against with pkg-config, its exports
TESTS += tests/trace_library.sh
EXTRA_DIST += tests/trace_library.sh tests/writers/lib_consumer.c
EXTRA_DIST += tests/writers/formats.sh tests/writers/consumers.sh tests/writers/x86ops.c tests/writers/prog.c tests/writers/threads.c tests/writers/read_ptc.py tests/writers/check_info.py \
	tests/writers/read_bt9.py tests/writers/read_champsim.py tests/writers/read_cbp2025.py \
	tests/writers/read_xtrace.py tests/writers/read_bbv.py tests/writers/truth.py tests/writers/check_slice.py tests/writers/read_xtrace.py tests/writers/cmp_dump.py

# Fuzz target for the trace readers; its seeds are replayed by make check
# and `make fuzz` builds it (contrib/fuzz.sh).
fuzz: tests/fuzz/fuzz_ptc_trace
check_PROGRAMS += tests/fuzz/fuzz_ptc_trace
tests_fuzz_fuzz_ptc_trace_SOURCES = tests/fuzz/fuzz_ptc_trace.c tests/fuzz/standalone_main.c
tests_fuzz_fuzz_ptc_trace_LDFLAGS = $(FUZZ_LDFLAGS)
TESTS += tests/writers/fuzz_seeds.sh tests/writers/corrupt.sh tests/writers/ptc_claims.sh
EXTRA_DIST += tests/writers/fuzz_seeds.sh tests/fuzz/seeds/fuzz_ptc_trace tests/writers/corrupt.sh tests/writers/ptc_claims.sh \
	tests/writers/corrupt_ptc.py

# Manual pages of the formats and of dump, stats, slice; the SimPoint flow.
dist_man_MANS += man/ptconv-trace.5 man/ptconv-formats.5 man/ptconv-xtrace.5 \
	man/ptconv-dump.1 man/ptconv-stats.1 man/ptconv-slice.1
EXTRA_DIST += contrib/simpoint-flow contrib/bench-formats

check_PROGRAMS += tests/unit/test_writers
tests_unit_test_writers_SOURCES = tests/unit/test_writers.c tests/unit/loop_code.h
TESTS += tests/unit/test_writers
check_PROGRAMS += tests/unit/test_sparse_batch
tests_unit_test_sparse_batch_SOURCES = tests/unit/test_sparse_batch.c tests/unit/loop_code.h
TESTS += tests/unit/test_sparse_batch
