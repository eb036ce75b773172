/*
 * src/bloom_avx512.c -- the classic filter's one-key queries built with
 * AVX-512 F and DQ (compiled with -mavx512f -mavx512dq; called from
 * src/bloom.c only when bk_cpu()->avx512dqbw).
 *
 * Built with those flags, bk_bloom_test_probes (bloomkit/bloom_inline.h)
 * is the gather form: the k probe positions eight at a time from the
 * closed form of the double hashing walk, their words read with one
 * VPGATHERQQ.  That header has the idea, the formulas and the figures;
 * this file only compiles the library's two one-key queries with it, the
 * hash of the key inlined into the second as in src/bloom.c.  Same bits,
 * same answers as the portable and BMI2 builds (tests/test_bloom_batch.c
 * runs all three on the same filters).
 */
#include "bloom.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
static inline __attribute__((always_inline)) bool test_bits(const bk_bloom *filter, bk_hash hash)
{
    return bk_bloom_test_probes(filter->words, filter->bits, filter->hashes, filter->exit_early,
                                hash);
}

bool bk_bloom_avx512_contains_hash(const bk_bloom *filter, bk_hash hash)
{
    return test_bits(filter, hash);
}

bool bk_bloom_avx512_contains(const bk_bloom *filter, const void *key, size_t len)
{
    return test_bits(filter, bk_hash_inline(&filter->hasher, key, len));
}
#endif
