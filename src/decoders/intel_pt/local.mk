# Intel PT: the query-decoder walker (ptdec), the libipt block-decoder engine.
libptconv_a_SOURCES += src/decoders/intel_pt/ptdec.c src/decoders/intel_pt/ptdec.h
