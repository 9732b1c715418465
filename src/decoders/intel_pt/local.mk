# Intel PT: the query-decoder walker (ptdec) over ptconv's query decoder
# (fastq) or libipt's, and the libipt block-decoder engine (blkdec), behind
# one handle (engine).  The conversion pipeline above them is src/convert/.
libptconv_a_SOURCES += src/decoders/intel_pt/ptdec.c src/decoders/intel_pt/ptdec.h \
	src/decoders/intel_pt/fastq.c src/decoders/intel_pt/fastq.h \
	src/decoders/intel_pt/tnt_path.c src/decoders/intel_pt/tnt_path.h \
	src/decoders/intel_pt/blkdec.c src/decoders/intel_pt/blkdec.h \
	src/decoders/intel_pt/bystanders.c src/decoders/intel_pt/bystanders.h \
	src/decoders/intel_pt/loss.c src/decoders/intel_pt/loss.h src/decoders/intel_pt/last_ip.h \
	src/decoders/intel_pt/engine.c src/decoders/intel_pt/engine.h \
	src/decoders/intel_pt/unknown.c src/decoders/intel_pt/unknown.h
TESTS += tests/pt_truth.sh tests/pt_threads.sh tests/pt_packets.sh tests/pt_real.sh tests/pt_walk.sh
# Every output format of a PT conversion, read back by tests/writers/*.py
TESTS += tests/pt_formats.sh
EXTRA_DIST += tests/pt_formats.sh
EXTRA_DIST += tests/pt_truth.sh tests/pt_threads.sh tests/pt_packets.sh tests/pt_real.sh tests/pt_walk.sh \
	tests/pt_truth_compare.py tests/cbpexp_read.py tests/ptprog/pt_threads.c
# Fuzz target: raw PT bytes against a fixed image; `make check` replays the seeds.
# (tests/fuzz/local.mk, included later, resets FUZZ_TARGETS: hook `make fuzz` directly)
fuzz: tests/fuzz/fuzz_pt_decoder
check_PROGRAMS += tests/fuzz/fuzz_pt_decoder
tests_fuzz_fuzz_pt_decoder_SOURCES = tests/fuzz/fuzz_pt_decoder.c tests/fuzz/pt_fuzz_image.h $(FUZZ_DRIVER)
tests_fuzz_fuzz_pt_decoder_LDFLAGS = $(FUZZ_LDFLAGS)
TESTS += tests/pt_fuzz_seeds.sh tests/pt_raw.sh
EXTRA_DIST += tests/pt_fuzz_seeds.sh tests/pt_raw.sh tests/fuzz/seeds/fuzz_pt_decoder
dist_man_MANS += man/ptconv.1 man/ptconv-convert.1 man/ptconv-packets.1
EXTRA_DIST += contrib/bench
# A vfork child returning through its parent's frames on a shared CPU
TESTS += tests/pt_vfork.sh
EXTRA_DIST += tests/pt_vfork.sh
# --engine=libipt in windows ending at a PSB, against the truth and whole runs
TESTS += tests/pt_libipt_windows.sh
EXTRA_DIST += tests/pt_libipt_windows.sh
# --engine=libipt and a jcc to its own fall-through (the block decoder's limit)
TESTS += tests/pt_libipt_jcc0.sh
EXTRA_DIST += tests/pt_libipt_jcc0.sh
# Windows that find no PSB: bounded, the rest up to the next PSB a gap
TESTS += tests/pt_window_cap.sh
EXTRA_DIST += tests/pt_window_cap.sh
# Threads finished once decoding is past their exit: bounded open files
TESTS += tests/pt_many_threads.sh
EXTRA_DIST += tests/pt_many_threads.sh tests/ptprog/seq_threads.c
# ptconv's query decoder against libipt's, in lockstep: encoder-made corner
# sequences, and real programs' and random walks' streams (pt_fastq.sh)
check_PROGRAMS += tests/unit/test_fastq
tests_unit_test_fastq_SOURCES = tests/unit/test_fastq.c tests/unit/fastq_lockstep.h
TESTS += tests/unit/test_fastq tests/pt_fastq.sh
EXTRA_DIST += tests/pt_fastq.sh
# -j N: windows decoded ahead and replayed, byte-identical to -j 1
TESTS += tests/pt_ahead.sh
EXTRA_DIST += tests/pt_ahead.sh
# Fuzz target: the replay of windows decoded ahead against decoding them in
# place, on any bytes; pt_ahead_fuzz.sh replays the PT decoder's seeds and
# mutants of them.
fuzz: tests/fuzz/fuzz_pt_ahead
check_PROGRAMS += tests/fuzz/fuzz_pt_ahead
tests_fuzz_fuzz_pt_ahead_SOURCES = tests/fuzz/fuzz_pt_ahead.c tests/fuzz/pt_fuzz_image.h $(FUZZ_DRIVER)
tests_fuzz_fuzz_pt_ahead_LDFLAGS = $(FUZZ_LDFLAGS)
TESTS += tests/pt_ahead_fuzz.sh
EXTRA_DIST += tests/pt_ahead_fuzz.sh tests/fuzz/seeds/fuzz_pt_ahead
# Fuzz target: fastq and libipt's query decoder in lockstep on any bytes;
# pt_fastq.sh replays its seeds and mutants of the streams it makes.
fuzz: tests/fuzz/fuzz_fastq
check_PROGRAMS += tests/fuzz/fuzz_fastq
tests_fuzz_fuzz_fastq_SOURCES = tests/fuzz/fuzz_fastq.c tests/unit/fastq_lockstep.h $(FUZZ_DRIVER)
tests_fuzz_fuzz_fastq_LDFLAGS = $(FUZZ_LDFLAGS)
EXTRA_DIST += tests/fuzz/seeds/fuzz_fastq
# The memo of TNT paths: hand-read paths of the fuzz image; fuzz_tnt_path
# decodes with the memo and one branch at a time (tests/fuzz/tnt_path_diff.h),
# its seeds in pt_tnt_path.sh.
check_PROGRAMS += tests/unit/test_tnt_path
tests_unit_test_tnt_path_SOURCES = tests/unit/test_tnt_path.c tests/fuzz/pt_fuzz_image.h
TESTS += tests/pt_tnt_path.sh
EXTRA_DIST += tests/pt_tnt_path.sh tests/fuzz/seeds/fuzz_tnt_path
fuzz: tests/fuzz/fuzz_tnt_path
check_PROGRAMS += tests/fuzz/fuzz_tnt_path
tests_fuzz_fuzz_tnt_path_SOURCES = tests/fuzz/fuzz_tnt_path.c tests/fuzz/tnt_path_diff.h $(FUZZ_DRIVER)
tests_fuzz_fuzz_tnt_path_LDFLAGS = $(FUZZ_LDFLAGS)
# Branches decoded after a thread's exit: unwritten, counted, --strict fails
TESTS += tests/pt_after_exit.sh
EXTRA_DIST += tests/pt_after_exit.sh
# Corners of the Intel PT specification (issue 15): encoder-made packet
# sequences over hand-assembled code, every engine against hand-derived
# branches
check_PROGRAMS += tests/unit/test_pt_corners
tests_unit_test_pt_corners_SOURCES = tests/unit/test_pt_corners.c
# libipt 2.1's status update events at a PSB, synthetic (libipt 2.0 here)
check_PROGRAMS += tests/unit/test_pt_status
tests_unit_test_pt_status_SOURCES = tests/unit/test_pt_status.c
TESTS += tests/unit/test_pt_status
TESTS += tests/pt_corners.sh
EXTRA_DIST += tests/pt_corners.sh
# One gap per loss, the same with both engines, against the losses the
# encoder made and perf's packets (issue 15, items 8 and 9)
TESTS += tests/pt_gap_rule.sh
EXTRA_DIST += tests/pt_gap_rule.sh tests/pt_gap_rule.py
# 32-bit programs (gcc -m32: gcc-multilib) traced by ptgen, every engine
# against the real execution (issue 15, item 4)
TESTS += tests/pt_m32.sh
EXTRA_DIST += tests/pt_m32.sh
