# Build fragment for tests/ptgen (see Makefile.am).
