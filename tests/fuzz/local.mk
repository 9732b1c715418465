# Fuzz targets.  Each stage adds its own in its local.mk:
#   FUZZ_TARGETS += tests/fuzz/fuzz_NAME
#   check_PROGRAMS += tests/fuzz/fuzz_NAME
#   tests_fuzz_fuzz_NAME_SOURCES = tests/fuzz/fuzz_NAME.c $(FUZZ_DRIVER)
#   tests_fuzz_fuzz_NAME_LDFLAGS = $(FUZZ_LDFLAGS)
# plus a test that replays its seeds.  `make fuzz` builds them all (use a
# build configured with CC=clang --enable-fuzzing; see contrib/fuzz.sh).
FUZZ_TARGETS =
FUZZ_DRIVER = tests/fuzz/standalone_main.c
fuzz: $(FUZZ_TARGETS)
.PHONY: fuzz
