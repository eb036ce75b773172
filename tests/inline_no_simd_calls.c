/*
 * tests/inline_no_simd_calls.c -- the sbbf and blocked views compiled with
 * BK_VIEW_NO_SIMD_CALLS (bloomkit/detail/view_simd.h), as a caller that
 * must hold no code for AVX builds them: the views then ignore their
 * simd_call field and take their portable tests, which tests/test_inline.c
 * compares with the library.
 */
#define BK_VIEW_NO_SIMD_CALLS
#include "inline_paths.h"

#if defined(BK_VIEW_SIMD_CALLS)
#error "BK_VIEW_NO_SIMD_CALLS must keep the views' SIMD calls out"
#endif

bool no_simd_calls_sbbf_view_contains(const struct bk_sbbf_view *view, const void *key,
                                      size_t len)
{
    return view_contains_constant_length(view, key, len);
}

bool no_simd_calls_sbbf_view_contains_u64(const struct bk_sbbf_view *view, uint64_t value)
{
    return bk_sbbf_view_contains_u64(view, value);
}

bool no_simd_calls_blocked_view_contains(const struct bk_blocked_view *view, const void *key,
                                         size_t len)
{
    return blocked_view_contains_constant_length(view, key, len);
}

bool no_simd_calls_blocked_view_contains_hash(const struct bk_blocked_view *view, bk_hash hash)
{
    return bk_blocked_view_contains_hash(view, hash);
}

bool no_simd_calls_blocked_view_contains_u64(const struct bk_blocked_view *view, uint64_t value)
{
    return bk_blocked_view_contains_u64(view, value);
}
