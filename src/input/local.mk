# perf.data input: reader (and writer, used by the test generator).
noinst_HEADERS += src/input/perf_abi.h src/input/perf_reader.h
libptconv_a_SOURCES += src/input/perf_reader.c src/input/perf_records.c \
	src/images/locate.c src/common/json.c src/common/json.h
dist_man_MANS += man/ptconv-info.1
