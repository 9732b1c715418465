# Build fragment for tests/ptgen (see Makefile.am): the ground-truth tracer.
noinst_PROGRAMS += tests/ptgen/ptgen-trace
tests_ptgen_ptgen_trace_SOURCES = tests/ptgen/trace/ptgen-trace.c \
	tests/ptgen/trace/aspace.c tests/ptgen/trace/aspace.h \
	tests/ptgen/trace/insn.c tests/ptgen/trace/insn.h
