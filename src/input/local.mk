# perf.data input: reader (and writer, used by the test generator).
noinst_HEADERS += src/input/perf_abi.h src/input/perf_reader.h
