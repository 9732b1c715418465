# Build fragment for src/writers (see Makefile.am).
