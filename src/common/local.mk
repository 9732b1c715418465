# Shared basics: error codes, byte loads.
libptconv_a_SOURCES += src/common/error.c src/common/error.h src/common/bytes.h src/common/grow.h src/common/table256.h \
	src/common/time_conv.c src/common/time_conv.h \
	src/common/trace_names.c src/common/trace_event.c
noinst_HEADERS += src/common/trace_event.h
