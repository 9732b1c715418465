noinst_HEADERS += src/images/image.h
