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
 *
 * src/bloom.c takes this build for filters bigger than one core's L2.
 * Below that the BMI2 build answers one key per call faster: on the Zen 5
 * host (a driver, k = 7, 8-byte keys, 4e6 queries per pass, medians of 9,
 * both builds in one process) a key through bk_filter_contains took 14.3
 * ns here against 12.2 at 10^5 keys (120 KB), 15.9 against 15.2 at 10^6
 * (1.2 MB, about the L2), and 26.8 against 31.3 at 10^7 (present keys);
 * a precomputed hash 8.6 against 7.8 at 10^5 and 10.2 against 11.0 at
 * 10^6.  At 10^8 keys (120 MB) in bloomkit-bench, one raw key per call
 * became 1.57x / 1.71x faster than libbloom's bloom_check (int64 keys,
 * present / absent) and 1.79x / 1.97x (str16), from 1.07-1.35x /
 * 1.26-1.79x in five earlier runs of the BMI2 build.
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
