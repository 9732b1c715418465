# Build fragment for src/sideband (see Makefile.am).
