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
 * Three checks, chosen at compile time from the including file's target
 * (same answers; tests/test_inline.c compares them):
 * - AVX2 (-mavx2, or a -march implying it): one VPMULLD by the salts,
 *   shifts, and one VPTEST of the whole block.
 * - SSE2 (every other x86-64 build, plain -O2 included): the same in two
 *   halves, with 1 << n made from the float 2^n (bk_sbbf_block_test_sse2).
 * - Scalar (other targets): two words per 64-bit register, no branch on
 *   the bits.
 * A caller built without AVX2 by GCC or clang on x86-64 also carries the
 * AVX2 check, compiled into its file with the target attribute, and calls
 * it where the view's simd_call field says the library runs its own (a
 * direct call, no handle: bloomkit/detail/view_simd.h;
 * BK_VIEW_NO_SIMD_CALLS keeps it out): 1.25x as fast as the inline SSE2
 * check at 10^6 keys, and faster than the library call, which the
 * SSE2 check only matched.  The SSE2 check stays for CPUs without AVX2
 * (figures: docs/PERFORMANCE.md).
 * A concurrent filter's view, and that of a library on its portable path,
 * tests word by word with relaxed atomic loads, as the library does.
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

#include "bloomkit/detail/view_simd.h"
#include "bloomkit/hash_inline.h"
#include "bloomkit/sbbf.h"

#if defined(__SSE2__)
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
    /* The SIMD test a caller compiled without AVX2 calls
     * (bloomkit/detail/view_simd.h): BK_VIEW_SIMD_AVX2 where the library
     * runs its own AVX2 test, else BK_VIEW_SIMD_NONE. */
    unsigned simd_call;
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

/* The bits of words i and i + 1 of a block (64-bit aligned, i even) that
 * key x needs and the block lacks: word i's in the low half.  Salts are
 * constants where this is inlined (an immediate multiply each). */
static BK_ALWAYS_INLINE uint64_t bk_sbbf_pair_missing(const uint32_t *block, uint32_t x,
                                                      unsigned i, uint32_t salt_low,
                                                      uint32_t salt_high)
{
    uint64_t pair;
    memcpy(&pair, block + i, sizeof pair);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    pair = pair << 32 | pair >> 32; /* word i in the low half */
#endif
    uint64_t mask = ((uint64_t)1 << ((uint32_t)(x * salt_low) >> 27)) |
                    ((uint64_t)1 << (((uint32_t)(x * salt_high) >> 27) + 32));
    return mask & ~pair;
}

/* The scalar check for callers built without AVX2: every word tested with
 * no branch on the answer (a branch per word mispredicts on absent keys),
 * two words at a time in 64-bit registers, plain loads (not for a
 * BK_FLAG_CONCURRENT filter).  Per pair: two immediate multiplies, two
 * shifts of one, a 64-bit load, an AND-NOT into the missing bits.
 * Written out: gcc -O2 keeps a loop, loading the salts. */
static BK_ALWAYS_INLINE bool bk_sbbf_block_test_scalar(const uint32_t *block, uint32_t x)
{
    return (bk_sbbf_pair_missing(block, x, 0, 0x47b6137bu, 0x44974d91u) |
            bk_sbbf_pair_missing(block, x, 2, 0x8824ad5bu, 0xa2b7289du) |
            bk_sbbf_pair_missing(block, x, 4, 0x705495c7u, 0x2df1424bu) |
            bk_sbbf_pair_missing(block, x, 6, 0x9efc4947u, 0x5c6bfb31u)) == 0;
}

#if defined(__SSE2__)
/*
 * The check with SSE2, which every x86-64 compiler enables: the block in
 * two registers of four words, the eight products x * SALT[i] from four
 * PMULUDQ (SSE2 multiplies the even lanes only: the odd ones are moved
 * down first), and 1 << n for n = product >> 27 made without a per-lane
 * shift (AVX2's VPSLLVD), from the float 2^n: its bits are (n + 127) << 23,
 * and CVTTPS2DQ turns it into the integer 2^n -- for n = 31 too, the
 * out-of-range answer 0x80000000 being exactly 1 << 31.  Then AND-NOT,
 * OR, and a compare with zero of all sixteen bytes.  About half the
 * instructions of the 64-bit scalar check.
 */
static BK_ALWAYS_INLINE __m128i bk_sbbf_word_masks_sse2(__m128i x_lanes, __m128i salts)
{
    const __m128i even = _mm_mul_epu32(x_lanes, salts);
    const __m128i odd = _mm_mul_epu32(x_lanes, _mm_srli_epi64(salts, 32));
    /* the low 32 bits of each product, back in lane order */
    const __m128i products = _mm_unpacklo_epi32(_mm_shuffle_epi32(even, _MM_SHUFFLE(3, 1, 2, 0)),
                                                _mm_shuffle_epi32(odd, _MM_SHUFFLE(3, 1, 2, 0)));
    const __m128i exponent_bits = _mm_slli_epi32(
        _mm_add_epi32(_mm_srli_epi32(products, 27), _mm_set1_epi32(127)), 23);
    return _mm_cvttps_epi32(_mm_castsi128_ps(exponent_bits));
}

static BK_ALWAYS_INLINE bool bk_sbbf_block_test_sse2(const uint32_t *block, uint32_t x)
{
    const __m128i x_lanes = _mm_set1_epi32((int)x);
    const __m128i low_salts = _mm_setr_epi32(0x47b6137b, 0x44974d91, (int)0x8824ad5bu,
                                             (int)0xa2b7289du);
    const __m128i high_salts = _mm_setr_epi32(0x705495c7, 0x2df1424b, (int)0x9efc4947u,
                                              0x5c6bfb31);
    const __m128i *line = (const __m128i *)(const void *)block;
    const __m128i missing = _mm_or_si128(
        _mm_andnot_si128(_mm_load_si128(line), bk_sbbf_word_masks_sse2(x_lanes, low_salts)),
        _mm_andnot_si128(_mm_load_si128(line + 1),
                         bk_sbbf_word_masks_sse2(x_lanes, high_salts)));
    return _mm_movemask_epi8(_mm_cmpeq_epi32(missing, _mm_setzero_si128())) == 0xffff;
}
#endif

#if defined(__AVX2__) || defined(BK_VIEW_SIMD_CALLS)
/* The eight word masks of key x, one per 32-bit lane. */
static BK_VIEW_TARGET_AVX2 inline __m256i bk_sbbf_block_mask_avx2(uint32_t x)
{
    static const uint32_t salts[BK_SBBF_WORDS] = BK_SBBF_SALTS;
    __m256i salt_lanes = _mm256_loadu_si256((const __m256i *)(const void *)salts);
    __m256i products = _mm256_mullo_epi32(_mm256_set1_epi32((int)x), salt_lanes);
    return _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32(products, 27));
}

/* The block check in one VPTEST: no mask bit outside the block's bits. */
static BK_VIEW_TARGET_AVX2 inline bool bk_sbbf_block_test_avx2(const uint32_t *block, uint32_t x)
{
    return _mm256_testc_si256(_mm256_load_si256((const __m256i *)(const void *)block),
                              bk_sbbf_block_mask_avx2(x));
}
#endif

#if defined(BK_VIEW_SIMD_CALLS)
/* The AVX2 check as a function of the caller's file compiled for AVX2,
 * which its code without AVX2 calls (bloomkit/detail/view_simd.h). */
static BK_VIEW_SIMD_CALL BK_VIEW_TARGET_AVX2 bool
bk_sbbf_view_call_test_avx2(const uint32_t *block, uint32_t x)
{
    return bk_sbbf_block_test_avx2(block, x);
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
#elif defined(__SSE2__)
#if defined(BK_VIEW_SIMD_CALLS)
    if (__builtin_expect(view->simd_call == BK_VIEW_SIMD_AVX2, 1))
        return bk_sbbf_view_call_test_avx2(block, x);
#endif
    if (__builtin_expect(!view->word_by_word, 1))
        return bk_sbbf_block_test_sse2(block, x);
#else
    if (__builtin_expect(!view->word_by_word, 1))
        return bk_sbbf_block_test_scalar(block, x);
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

/* bk_filter_contains_u64(filter, value), inline: the key of the 8 bytes
 * holding `value` little-endian. */
static BK_ALWAYS_INLINE bool bk_sbbf_view_contains_u64(const struct bk_sbbf_view *view,
                                                       uint64_t value)
{
    uint64_t unfinished = bk_xxh64_unfinished_of_u64(value, view->seed);
    return bk_sbbf_view_test(view, bk_sbbf_block_of(view->words, view->block_count, unfinished),
                             (uint32_t)bk_xxh64_finish(unfinished));
}

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_SBBF_INLINE_H */
