# Build fragment for src/images (see Makefile.am).
