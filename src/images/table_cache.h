/* Branch tables kept on disk between runs.
 *
 * Building an image's table (a Zydis sweep of all its code) is the one
 * cost of a conversion that does not grow with the trace: about 30 ms of
 * CPU for the C library, which every traced program maps.  A table
 * depends only on the code bytes, where they lie and the mode, so it is
 * stored under a hash of those and read back by any later run that maps
 * the same code, whatever the file's name or build-id.  Internal to
 * src/images (image.c decides when); the caller names the directory
 * (struct ptc_image_cache_options.table_dir), NULL for none.
 */
#ifndef PTC_IMAGES_TABLE_CACHE_H
#define PTC_IMAGES_TABLE_CACHE_H

#include <stdint.h>

struct ptc_image;

/* The key of img's table (its mode, and its base image's code). */
void ptc_table_cache_key(const struct ptc_image *img, uint8_t key[16]);

/* Fill img's table from dir: 1 done, 0 no usable file (absent, another
 * format, damaged: img unchanged), -ptc_err_nomem. */
int ptc_table_cache_load(struct ptc_image *img, const char *dir, const uint8_t key[16]);

/* Store img's table in dir (made if missing) under a temporary name,
 * renamed when whole: 0, or -1 when it could not be written (the cache is
 * an optimisation: the caller goes on). */
int ptc_table_cache_store(const struct ptc_image *img, const char *dir, const uint8_t key[16]);

#endif
