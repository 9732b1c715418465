# Build fragment for src/decoders/arm_spe (see Makefile.am).
