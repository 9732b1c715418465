# Build fragment (see Makefile.am).
