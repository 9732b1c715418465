# The conversion pipeline behind `ptconv convert` for Intel PT: the
# recording read into queues and runs, windows planned and decoded (ahead,
# on workers, with -j), threads and their writers, the summary.  It sits
# above decoders/ and writers/, which never call up into it.
libptconv_a_SOURCES += src/convert/pt_convert.c src/convert/pt_convert.h
# -j: the workers encode ahead for the .ptc writer (writers.h), the same files
TESTS += tests/pt_ahead_encode.sh
EXTRA_DIST += tests/pt_ahead_encode.sh
