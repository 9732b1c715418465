# Fuzz targets.  Each stage adds its own in its local.mk:
#   check_PROGRAMS += tests/fuzz/fuzz_NAME
#   tests_fuzz_fuzz_NAME_SOURCES = tests/fuzz/fuzz_NAME.c $(FUZZ_DRIVER)
#   tests_fuzz_fuzz_NAME_LDFLAGS = $(FUZZ_LDFLAGS)
#   fuzz: tests/fuzz/fuzz_NAME
# plus a test that replays its seeds.  `make fuzz` builds them all (use a
# build configured with CC=clang --enable-fuzzing; see contrib/fuzz.sh).
FUZZ_DRIVER = tests/fuzz/standalone_main.c
fuzz:
.PHONY: fuzz
