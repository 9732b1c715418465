# Writers of the Intel PT issue: cbp-experiments (cbpexp) and text.
libptconv_a_SOURCES += src/writers/cbpexp.c src/writers/cbpexp.h \
	src/writers/text.c src/writers/text.h
