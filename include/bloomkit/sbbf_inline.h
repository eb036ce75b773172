/*
 * bloomkit/sbbf_inline.h -- one-key split-block queries compiled into the
 * caller's loop.
 *
 * A query through bk_filter_contains is a call per key.  A program that asks about one key at a
 * time in a hot loop -- a join probing each row, a storage engine checking
 * each point lookup -- can instead take a view of the filter once and query
 * it with the inline functions below, which the compiler folds into the
 * loop: hash, block address, mask and test in straight-line code.
 *
 *     struct bk_sbbf_view view;
 *     if (bk_sbbf_view(filter, &view) == BK_OK)
 *         for (size_t i = 0; i < n; i++)
 *             hits += bk_sbbf_view_contains(&view, &ids[i], sizeof ids[i]);
 *
 * The view serves XXH64 filters (the Parquet hash, every sbbf filter but
 * those keyed with SipHash).  Keys of a fixed width should be passed with
 * their length as a constant, as above: the compiler then keeps only
 * XXH64's straight-line code for that length, and the loop holds no call
 * and no branch on the length.  A run-time length also works (keys[i].len)
 * but is slower (below).
 *
 * The answers are bk_filter_contains's, bit for bit: the library's own one-key
 * and batch queries are built from the same functions (src/sbbf.c,
 * src/sbbf_avx2.c), and tests/test_inline.c compares the view, compiled
 * with and without AVX2, against the library on random filters and keys.
 *
 * The block test (Parquet's BloomFilter.md; src/sbbf.c draws the layout):
 *
 *     block = words + 8 * (((hash >> 32) * block_count) >> 32)
 *     mask word i = 1 << ((uint32_t)(x * SALT[i]) >> 27),  x = (uint32_t)hash
 *     present  <=>  every word has its mask bit set
 *
 * Portable path: eight word tests with relaxed atomic loads (what a filter
 * created with BK_FLAG_CONCURRENT needs, and a plain load on x86-64).
 * AVX2 path, chosen at compile time (the including file is compiled with
 * -mavx2 or -march=... that implies it): one VPMULLD by the salts, shifts,
 * and one VPTEST of the whole block; a concurrent filter's view keeps the
 * portable path, as the library does.
 *
 * What the loop must not hold: a run-time length, or a call anywhere in
 * it even if never taken (as a SipHash branch would be).  Either makes the
 * compiler spill and reload, and the extra branches and spills leave fewer
 * queries in flight while the block loads wait on L2 and L3 (figures:
 * docs/PERFORMANCE.md).
 *
 * A view holds the filter's word pointer: it is valid while the filter
 * lives (bk_filter_clear and every add keep the words in place) and sees
 * every add made after it was taken.  It must not outlive the filter.
 */
#ifndef BLOOMKIT_SBBF_INLINE_H
#define BLOOMKIT_SBBF_INLINE_H

#include "bloomkit/hash_inline.h"
#include "bloomkit/sbbf.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

#define BK_SBBF_WORDS 8u /* 32-bit words per 256-bit block */

/* The eight odd constants of the Parquet specification (BloomFilter.md). */
#define BK_SBBF_SALTS                                                                 \
    {                                                                                 \
        0x47b6137bu, 0x44974d91u, 0x8824ad5bu, 0xa2b7289du, 0x705495c7u, 0x2df1424bu, \
            0x9efc4947u, 0x5c6bfb31u                                                  \
    }

/* The view type is `struct bk_sbbf_view` (the getter below has its name,
 * as struct stat and stat() share theirs). */
struct bk_sbbf_view {
    const uint32_t *words; /* block_count * 8 words, 32-byte aligned */
    uint64_t block_count;
    uint64_t seed;     /* the filter's XXH64 seed (0 for Parquet) */
    bool word_by_word; /* the portable test only: a BK_FLAG_CONCURRENT
                              filter, or the library on its portable path */
};

/* Fills *view from an sbbf filter.  BK_EINVAL if either is NULL; BK_EKIND
 * for a filter of another kind; BK_EUNSUPPORTED for a filter keyed with
 * SipHash (its hash is a library call, so it has no inline query: use
 * bk_filter_contains).  On error *view is untouched. */
bk_status bk_sbbf_view(const bk_filter *filter, struct bk_sbbf_view *view);

/* The block of a hash: the spec's multiply-shift of its upper 32 bits. */
static inline const uint32_t *bk_sbbf_block_of(const uint32_t *words, uint64_t block_count,
                                               uint64_t hash)
{
    return words + ((hash >> 32) * block_count >> 32) * BK_SBBF_WORDS;
}

/* The bit word `word` of a block must have for key x = (uint32_t)hash. */
static inline uint32_t bk_sbbf_word_mask(uint32_t x, unsigned word)
{
    static const uint32_t salts[BK_SBBF_WORDS] = BK_SBBF_SALTS;
    return (uint32_t)1 << ((uint32_t)(x * salts[word]) >> 27);
}

/* The spec's block check, one word at a time, stopping at the first word
 * without its bit.  ANDing the eight tests without a branch, as the
 * blocked filter's portable test does: absent keys gain, but present keys
 * lose more, all eight multiplies being done for every key. */
static inline bool bk_sbbf_block_test_portable(const uint32_t *block, uint32_t x)
{
    for (unsigned i = 0; i < BK_SBBF_WORDS; i++)
        if ((__atomic_load_n(&block[i], __ATOMIC_RELAXED) & bk_sbbf_word_mask(x, i)) == 0)
            return false;
    return true;
}

#if defined(__AVX2__)
/* The eight word masks of key x, one per 32-bit lane. */
static inline __m256i bk_sbbf_block_mask_avx2(uint32_t x)
{
    static const uint32_t salts[BK_SBBF_WORDS] = BK_SBBF_SALTS;
    __m256i salt_lanes = _mm256_loadu_si256((const __m256i *)(const void *)salts);
    __m256i products = _mm256_mullo_epi32(_mm256_set1_epi32((int)x), salt_lanes);
    return _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32(products, 27));
}

/* The block check in one VPTEST: no mask bit outside the block's bits. */
static inline bool bk_sbbf_block_test_avx2(const uint32_t *block, uint32_t x)
{
    return _mm256_testc_si256(_mm256_load_si256((const __m256i *)(const void *)block),
                              bk_sbbf_block_mask_avx2(x));
}
#endif

/* The test of key x = (uint32_t)hash in its block. */
static BK_ALWAYS_INLINE bool bk_sbbf_view_test(const struct bk_sbbf_view *view,
                                               const uint32_t *block, uint32_t x)
{
#if defined(__AVX2__)
    /* the test a caller's loop falls through to, laid out first */
    if (__builtin_expect(!view->word_by_word, 1))
        return bk_sbbf_block_test_avx2(block, x);
#else
    (void)view; /* the portable test is the only one */
#endif
    return bk_sbbf_block_test_portable(block, x);
}

/* bk_filter_contains_hash(filter, hash) of a hash whose h1 is `hash` (the
 * 64-bit value hash a Parquet writer computes), inline. */
static BK_ALWAYS_INLINE bool bk_sbbf_view_contains_hash64(const struct bk_sbbf_view *view,
                                                          uint64_t hash)
{
    return bk_sbbf_view_test(view, bk_sbbf_block_of(view->words, view->block_count, hash),
                             (uint32_t)hash);
}

/* bk_filter_contains(filter, key, len), inline; key may be NULL when len is 0.
 * For 8- and 16-byte keys the block is read from the unfinished XXH64,
 * whose upper half is the hash's (bloomkit/hash_inline.h): one xor and two
 * moves sooner on the path to the block. */
static BK_ALWAYS_INLINE bool bk_sbbf_view_contains(const struct bk_sbbf_view *view,
                                                   const void *key, size_t len)
{
    if (len != 8 && len != 16)
        return bk_sbbf_view_contains_hash64(view, bk_hash_xxh64(key, len, view->seed).h1);
    uint64_t unfinished = bk_xxh64_unfinished_8_or_16(key, len, view->seed);
    return bk_sbbf_view_test(view, bk_sbbf_block_of(view->words, view->block_count, unfinished),
                             (uint32_t)bk_xxh64_finish(unfinished));
}

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_SBBF_INLINE_H */
