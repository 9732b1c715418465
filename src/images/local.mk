# Executable images: ELF/raw code loading, branch tables (Zydis), image cache.
noinst_HEADERS += src/images/image.h src/images/locate.h
libptconv_a_SOURCES += src/images/image.c src/images/image_int.h src/images/branch_table.c
libptconv_a_SOURCES += src/images/image_cache.c
check_PROGRAMS += tests/unit/test_image
tests_unit_test_image_SOURCES = tests/unit/test_image.c
TESTS += tests/unit/test_image
TESTS += tests/images_objdump.sh
EXTRA_DIST += tests/images_objdump.sh
