noinst_HEADERS += src/images/image.h src/images/locate.h
