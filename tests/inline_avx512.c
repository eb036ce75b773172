/*
 * tests/inline_avx512.c -- the inline classic-bloom view compiled with
 * -mavx512f -mavx512dq, where bk_bloom_test_probes is the gather form
 * (bloomkit/bloom_inline.h), and that form's two arithmetic steps, and the
 * blocked view, whose block test is then the AVX-512 one
 * (bloomkit/blocked_inline.h), so that tests/test_inline.c (compiled for
 * the baseline) can check them against the scalar forms and the library.
 */
#include "inline_paths.h"

bool avx512_bloom_view_contains(const struct bk_bloom_view *view, const void *key, size_t len)
{
    return bk_bloom_view_contains(view, key, len);
}

bool avx512_bloom_view_contains_constant_length(const struct bk_bloom_view *view,
                                                const void *key, size_t len)
{
    return bloom_view_contains_constant_length(view, key, len);
}

bool avx512_bloom_view_contains_hash(const struct bk_bloom_view *view, bk_hash hash)
{
    return bk_bloom_view_contains_hash(view, hash);
}

void avx512_reduce_x8(const uint64_t x[8], uint64_t range, uint64_t out[8])
{
    _mm512_storeu_si512(out, bk_reduce_x8(_mm512_loadu_si512(x), range));
}

void avx512_xxh3_avalanche_x8(const uint64_t in[8], uint64_t out[8])
{
    _mm512_storeu_si512(out, bk_xxh3_avalanche_x8(_mm512_loadu_si512(in)));
}

void avx512_probe_hashes_x8(bk_hash hash, unsigned first, uint64_t out[8])
{
    _mm512_storeu_si512(out, bk_probe_hashes_x8(hash, first));
}

bool avx512_blocked_view_contains(const struct bk_blocked_view *view, const void *key,
                                  size_t len)
{
    return bk_blocked_view_contains(view, key, len);
}

bool avx512_blocked_view_contains_constant_length(const struct bk_blocked_view *view,
                                                  const void *key, size_t len)
{
    return blocked_view_contains_constant_length(view, key, len);
}

bool avx512_blocked_view_contains_hash(const struct bk_blocked_view *view, bk_hash hash)
{
    return bk_blocked_view_contains_hash(view, hash);
}

bool avx512_blocked_view_contains_u64(const struct bk_blocked_view *view, uint64_t value)
{
    return bk_blocked_view_contains_u64(view, value);
}
