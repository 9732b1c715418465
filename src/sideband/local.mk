# Sideband model: mappings, threads, per-CPU switch timelines (see sideband.h).
libptconv_a_SOURCES += src/sideband/sideband.c src/sideband/sideband.h
