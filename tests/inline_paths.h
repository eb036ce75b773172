/*
 * tests/inline_paths.h -- the inline views as compiled in
 * tests/inline_avx2.c (with -mavx2), called from tests/test_inline.c.
 */
#ifndef BK_TESTS_INLINE_PATHS_H
#define BK_TESTS_INLINE_PATHS_H

#include "bloomkit/fuse_inline.h"
#include "bloomkit/sbbf_inline.h"

bool avx2_sbbf_view_contains(const bk_sbbf_view *view, const void *key, size_t len);
bool avx2_fuse_view_contains(const bk_fuse_view *view, const void *key, size_t len);

#endif
