/*
 * src/counting_path.h -- the counting kind's query paths (internal, for
 * tests): the blocked layout's one-key query answers through a portable
 * scalar test or, where the CPU has them, an AVX2 or AVX-512 test of the
 * whole line (src/counting.c); every path gives the same answers.
 */
#ifndef BK_SRC_COUNTING_PATH_H
#define BK_SRC_COUNTING_PATH_H

#include "bloomkit/filter.h"

typedef enum bk_counting_path {
    BK_COUNTING_PATH_PORTABLE = 0,
    BK_COUNTING_PATH_AVX2 = 1,
    BK_COUNTING_PATH_AVX512 = 2
} bk_counting_path;

/* Puts a counting filter's one-key queries on `path`.  BK_EINVAL for NULL,
 * BK_EKIND for another kind, BK_EUNSUPPORTED when this CPU (or
 * BLOOMKIT_PORTABLE, or the build) rules the path out; the filter is then
 * unchanged.  A classic-layout filter accepts any available path and
 * answers as before (its counters are not in one line). */
bk_status bk_counting_set_path(bk_filter *filter, bk_counting_path path);

#endif
