/*
 * tests/inline_avx2.c -- the inline sbbf and blocked views compiled with
 * -mavx2, so that tests/test_inline.c (compiled for the baseline) can put
 * the AVX2 and the portable inline paths side by side.
 */
#include "inline_paths.h"

bool avx2_sbbf_view_contains(const struct bk_sbbf_view *view, const void *key, size_t len)
{
    return bk_sbbf_view_contains(view, key, len);
}

bool avx2_sbbf_view_contains_constant_length(const struct bk_sbbf_view *view, const void *key,
                                             size_t len)
{
    return view_contains_constant_length(view, key, len);
}

bool avx2_blocked_view_contains(const struct bk_blocked_view *view, const void *key, size_t len)
{
    return bk_blocked_view_contains(view, key, len);
}

bool avx2_blocked_view_contains_constant_length(const struct bk_blocked_view *view,
                                                const void *key, size_t len)
{
    return blocked_view_contains_constant_length(view, key, len);
}

bool avx2_blocked_view_contains_hash(const struct bk_blocked_view *view, bk_hash hash)
{
    return bk_blocked_view_contains_hash(view, hash);
}


void avx2_xxh3_avalanche_x4(const uint64_t in[4], uint64_t out[4])
{
    _mm256_storeu_si256(
        (__m256i *)(void *)out,
        bk_xxh3_avalanche_x4(_mm256_loadu_si256((const __m256i *)(const void *)in)));
}

bool avx2_blocked_view_contains_u64(const struct bk_blocked_view *view, uint64_t value)
{
    return bk_blocked_view_contains_u64(view, value);
}

bool avx2_sbbf_view_contains_u64(const struct bk_sbbf_view *view, uint64_t value)
{
    return bk_sbbf_view_contains_u64(view, value);
}
