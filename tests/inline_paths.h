/*
 * tests/inline_paths.h -- the inline sbbf view as compiled in
 * tests/inline_avx2.c (with -mavx2), called from tests/test_inline.c.
 */
#ifndef BK_TESTS_INLINE_PATHS_H
#define BK_TESTS_INLINE_PATHS_H

#include "bloomkit/sbbf_inline.h"

bool avx2_sbbf_view_contains(const bk_sbbf_view *view, const void *key, size_t len);

#endif
