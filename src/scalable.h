/*
 * src/scalable.h -- the scalable Bloom filter's internals that its tests
 * check (src/scalable.c).  Programs use the bk_filter handle and
 * bloomkit/scalable.h.
 */
#ifndef BK_SRC_SCALABLE_H
#define BK_SRC_SCALABLE_H

#include "bloomkit/scalable.h"

typedef struct bk_scalable bk_scalable;

/* Whether sub-filter `index` alone reports the hash (false for an index out
 * of range): for tests of the levels' independence. */
bool bk_scalable_level_contains_hash(const bk_scalable *filter, unsigned index, bk_hash hash);

#endif
