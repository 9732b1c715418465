# Build fragment for src/decoders/intel_pt (see Makefile.am).
