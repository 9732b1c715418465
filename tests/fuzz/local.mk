# Build fragment for tests/fuzz (see Makefile.am).
