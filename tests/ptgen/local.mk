# Build fragment for tests/ptgen (see Makefile.am): the ground-truth tracer
# ptgen-trace, the corpus of real programs it traces and their tests.
noinst_PROGRAMS += tests/ptgen/ptgen-trace
tests_ptgen_ptgen_trace_SOURCES = tests/ptgen/trace/ptgen-trace.c \
	tests/ptgen/trace/aspace.c tests/ptgen/trace/aspace.h \
	tests/ptgen/trace/insn.c tests/ptgen/trace/insn.h

# An independent checker of .truth files (format, chaining, and against an
# objdump listing).
check_PROGRAMS += tests/ptgen/truth-check
tests_ptgen_truth_check_SOURCES = tests/ptgen/truth-check.c

# The corpus: small deterministic programs in every shape the decoders meet
# (static, dynamic, PIE, non-PIE, no libc, threads, fork+exec, signals,
# vDSO).  They are built with the plain compiler and their own flags, not
# with CFLAGS/LIBS: sanitizers or libraries would change what they execute
# (and a static link of ASan is impossible).
PTG_CORPUS = tests/corpus/c_nolibc tests/corpus/c_static \
	tests/corpus/c_recurse tests/corpus/c_switch tests/corpus/c_setjmp \
	tests/corpus/c_signal tests/corpus/c_vdso tests/corpus/c_threads \
	tests/corpus/c_forkexec tests/corpus/c_spawn tests/corpus/c_mainexit
check_DATA = $(PTG_CORPUS)
CLEANFILES += $(PTG_CORPUS)
EXTRA_DIST += $(PTG_CORPUS:=.c)
PTG_CORPUS_CC = $(AM_V_CC)$(MKDIR_P) tests/corpus && $(CC) -g -Wall

tests/corpus/c_nolibc: $(srcdir)/tests/corpus/c_nolibc.c
	$(PTG_CORPUS_CC) -O1 -static -nostdlib -no-pie -fno-pie -fno-builtin \
	  -fno-stack-protector -fno-tree-loop-distribute-patterns \
	  -o $@ $(srcdir)/tests/corpus/c_nolibc.c
tests/corpus/c_static: $(srcdir)/tests/corpus/c_static.c
	$(PTG_CORPUS_CC) -O2 -static -no-pie -fno-pie -o $@ $(srcdir)/tests/corpus/c_static.c
tests/corpus/c_recurse: $(srcdir)/tests/corpus/c_recurse.c
	$(PTG_CORPUS_CC) -O0 -no-pie -fno-pie -o $@ $(srcdir)/tests/corpus/c_recurse.c
tests/corpus/c_switch: $(srcdir)/tests/corpus/c_switch.c
	$(PTG_CORPUS_CC) -O2 -fPIE -pie -o $@ $(srcdir)/tests/corpus/c_switch.c
tests/corpus/c_setjmp: $(srcdir)/tests/corpus/c_setjmp.c
	$(PTG_CORPUS_CC) -O1 -static-pie -fPIE -o $@ $(srcdir)/tests/corpus/c_setjmp.c
tests/corpus/c_signal: $(srcdir)/tests/corpus/c_signal.c
	$(PTG_CORPUS_CC) -O2 -fPIE -pie -o $@ $(srcdir)/tests/corpus/c_signal.c
tests/corpus/c_vdso: $(srcdir)/tests/corpus/c_vdso.c
	$(PTG_CORPUS_CC) -O2 -fPIE -pie -o $@ $(srcdir)/tests/corpus/c_vdso.c
tests/corpus/c_threads: $(srcdir)/tests/corpus/c_threads.c
	$(PTG_CORPUS_CC) -O2 -pthread -o $@ $(srcdir)/tests/corpus/c_threads.c
tests/corpus/c_forkexec: $(srcdir)/tests/corpus/c_forkexec.c
	$(PTG_CORPUS_CC) -O2 -o $@ $(srcdir)/tests/corpus/c_forkexec.c
tests/corpus/c_spawn: $(srcdir)/tests/corpus/c_spawn.c
	$(PTG_CORPUS_CC) -O2 -o $@ $(srcdir)/tests/corpus/c_spawn.c
tests/corpus/c_mainexit: $(srcdir)/tests/corpus/c_mainexit.c
	$(PTG_CORPUS_CC) -O2 -pthread -o $@ $(srcdir)/tests/corpus/c_mainexit.c

TESTS += tests/ptgen/trace-corpus.sh tests/ptgen/trace-objdump.sh \
	tests/ptgen/trace-valgrind.sh tests/ptgen/trace-robust.sh \
	tests/ptgen/trace-nextinsn.sh
EXTRA_DIST += tests/ptgen/README.md tests/ptgen/trace-lib.sh tests/ptgen/trace-corpus.sh \
	tests/ptgen/trace-objdump.sh tests/ptgen/trace-valgrind.sh \
	tests/ptgen/trace-robust.sh tests/ptgen/trace-nextinsn.sh

# Instruction classification against the x86 encodings and the CPU itself.
check_PROGRAMS += tests/ptgen/test_trace_insn
tests_ptgen_test_trace_insn_SOURCES = tests/ptgen/test_trace_insn.c \
	tests/ptgen/trace/insn.c tests/ptgen/trace/insn.h
tests_ptgen_test_trace_insn_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/ptgen/trace -I$(top_srcdir)
TESTS += tests/ptgen/test_trace_insn
