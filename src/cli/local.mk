# The ptconv program: a thin front end over libptconv.a.
bin_PROGRAMS += src/ptconv
src_ptconv_SOURCES = src/cli/ptconv.c src/cli/cli.h src/cli/heap.c \
	src/cli/cmd_info.c src/cli/cmd_convert.c src/cli/cmd_packets.c \
	src/cli/cmd_dump.c src/cli/cmd_stats.c src/cli/cmd_slice.c \
	src/cli/convert_spe.c src/cli/convert_ptc.c src/cli/info_ptc.c
# ptconv convert TRACE.ptc: every format from a .ptc alone, against the truth
TESTS += tests/pt_reconvert.sh
# ptconv info TRACE.ptc against the independent reader and the truth
TESTS += tests/info_ptc.sh
EXTRA_DIST += tests/pt_reconvert.sh tests/info_ptc.sh
