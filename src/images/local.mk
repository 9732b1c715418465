# Executable images: ELF/raw code loading, branch tables (Zydis), image cache.
noinst_HEADERS += src/images/image.h src/images/locate.h
libptconv_a_SOURCES += src/images/image.c src/images/image_int.h src/images/branch_table.c src/images/branch_kind.h \
	src/images/x86_newer.c src/images/x86_newer.h src/images/table_cache.c src/images/table_cache.h
libptconv_a_SOURCES += src/images/image_cache.c src/images/symtab.c src/images/symtab.h
check_PROGRAMS += tests/unit/test_image
tests_unit_test_image_SOURCES = tests/unit/test_image.c
TESTS += tests/unit/test_image
TESTS += tests/images_objdump.sh
EXTRA_DIST += tests/images_objdump.sh
TESTS += tests/images_cache.sh
EXTRA_DIST += tests/images_cache.sh
# Fuzz target for images (see tests/fuzz/local.mk); make check replays its
# seeds and variants of them.
fuzz: tests/fuzz/fuzz_image
check_PROGRAMS += tests/fuzz/fuzz_image
tests_fuzz_fuzz_image_SOURCES = tests/fuzz/fuzz_image.c tests/fuzz/standalone_main.c
tests_fuzz_fuzz_image_LDFLAGS = $(FUZZ_LDFLAGS)
TESTS += tests/images_fuzz_seeds.sh
EXTRA_DIST += tests/images_fuzz_seeds.sh tests/fuzz/seeds/fuzz_image/tiny.elf \
	tests/fuzz/seeds/fuzz_image/tiny-nosections.elf tests/fuzz/seeds/fuzz_image/raw-code.bin
EXTRA_DIST += contrib/bench-images
TESTS += tests/images_bias.sh
EXTRA_DIST += tests/images_bias.sh
# Fuzz target for the table cache's reader: files with a right checksum and
# any contents; tests/images_table_cache.sh replays its seeds.
fuzz: tests/fuzz/fuzz_table_cache
check_PROGRAMS += tests/fuzz/fuzz_table_cache
tests_fuzz_fuzz_table_cache_SOURCES = tests/fuzz/fuzz_table_cache.c tests/fuzz/standalone_main.c
tests_fuzz_fuzz_table_cache_LDFLAGS = $(FUZZ_LDFLAGS)
EXTRA_DIST += tests/fuzz/seeds/fuzz_table_cache
