# Test-suite plumbing; each stage registers its own tests in its local.mk.
EXTRA_DIST += tests/lib/check.h tests/lib/common.sh tests/fuzz/standalone_main.c tests/ptgen/ground-truth.md
TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(SHELL)
check_PROGRAMS += tests/unit/test_error
tests_unit_test_error_SOURCES = tests/unit/test_error.c
TESTS += tests/unit/test_error
# Files under their final names only when complete (issue 18).
TESTS += tests/output_complete.sh
EXTRA_DIST += tests/output_complete.sh
# Recordings cut anywhere: no crash, no undefined behaviour.
TESTS += tests/pt_cut.sh
EXTRA_DIST += tests/pt_cut.sh
# Damaged record headers: reading goes on at the next intact record.
TESTS += tests/reader_resync.sh
EXTRA_DIST += tests/reader_resync.sh tests/perf_layout.py
# Sideband records framed but not parseable: a counted loss.
TESTS += tests/reader_malformed.sh
EXTRA_DIST += tests/reader_malformed.sh
# The corruption matrix: every kind of damage, the loss accounted for.
TESTS += tests/corrupt_matrix.sh
EXTRA_DIST += tests/corrupt_matrix.sh
# Many live threads with few outputs open (--max-open-outputs).
TESTS += tests/pt_live_threads.sh
EXTRA_DIST += tests/pt_live_threads.sh
check_PROGRAMS += tests/unit/test_writer_pool
tests_unit_test_writer_pool_SOURCES = tests/unit/test_writer_pool.c tests/unit/loop_code.h
TESTS += tests/unit/test_writer_pool
# Output errors injected (an LD_PRELOAD shim): every write-error path.
check_LTLIBRARIES = tests/lib/libfailio.la
tests_lib_libfailio_la_SOURCES = tests/lib/failio.c
tests_lib_libfailio_la_LDFLAGS = -module -avoid-version -shared -rpath $(abs_builddir)
tests_lib_libfailio_la_LIBADD = -ldl
TESTS += tests/output_faults.sh
EXTRA_DIST += tests/output_faults.sh
# Options parsed by type: usage errors.
TESTS += tests/cli_options.sh
EXTRA_DIST += tests/cli_options.sh
# The branch-table cache: the same files with or without it, whatever is in it.
TESTS += tests/images_table_cache.sh
EXTRA_DIST += tests/images_table_cache.sh
clean-local: clean-test-table-cache
clean-test-table-cache:
	rm -rf tests/table-cache.tmp
.PHONY: clean-test-table-cache
