/*
 * bloomkit/bloom_inline.h -- one-key queries of the classic Bloom filter
 * compiled into the caller's loop.
 *
 * bk_filter_contains is a call; a loop that asks
 * about one key per step can take a view of the filter once and query it
 * with the inline functions below instead: the key's hash, its k probe
 * positions (enhanced double hashing, bloomkit/hash_inline.h) and their
 * loads all sit in the loop, with no call:
 *
 *     struct bk_bloom_view view;
 *     if (bk_bloom_view(filter, &view) == BK_OK)
 *         for (size_t i = 0; i < n; i++)
 *             hits += bk_bloom_view_contains(&view, &ids[i], sizeof ids[i]);
 *
 * bk_bloom_view_contains_hash takes the key's 128-bit hash instead.
 *
 * The view serves the inline hashes, XXH3 (the default) and XXH64:
 * bk_bloom_view returns BK_EUNSUPPORTED for a filter keyed with
 * SipHash, a library call (a call anywhere in the loop, even one never
 * taken, costs every query).  Pass
 * a fixed key width as a constant, as above: the compiler then keeps only
 * the hash's code for that length.
 *
 * The answers are bk_filter_contains's, bit for bit: src/bloom.c tests its
 * bits with bk_bloom_test_probes below, and tests/test_inline.c compares
 * view and library.  The scalar loop, as the library's portable and BMI2
 * builds, stops after the first two probes of a filter bigger than 32 MiB
 * (read from memory, not a cache) when one of them is 0, and reads all k
 * of a smaller one without a branch (src/bloom.c, test_bits, says why);
 * the gather form reads all k.
 *
 * Above the caches every probe is a memory read, and a loop without calls
 * keeps more queries' reads in flight at once: the view is faster than the
 * call there, and faster than libbloom's bloom_check (docs/PERFORMANCE.md).
 *
 * Compiled with AVX-512 F and DQ, the probe test reads the k words with
 * gathers, eight at a time (the gather form below), same answers.
 *
 * A view holds the filter's word pointer: it sees later adds and must not
 * outlive the filter (nor the mapping of a filter read with bk_filter_map).
 */
#ifndef BLOOMKIT_BLOOM_INLINE_H
#define BLOOMKIT_BLOOM_INLINE_H

#include "bloomkit/bloom.h"
#include "bloomkit/filter.h"
#include "bloomkit/hash_inline.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* A filter with more bytes than this stops a one-key query after the first
 * BK_BLOOM_EXIT_EARLY_PROBES probes when one of them is 0. */
#define BK_BLOOM_EXIT_EARLY_BYTES ((size_t)32 << 20)
#define BK_BLOOM_EXIT_EARLY_PROBES 2u

/* The view type is `struct bk_bloom_view` (the getter below has its name,
 * so there is no typedef). */
struct bk_bloom_view {
    const uint64_t *words;            /* ceil(m / 64) words */
    uint64_t bits;                    /* m */
    unsigned hashes;                  /* k */
    bool exit_early;                  /* more than BK_BLOOM_EXIT_EARLY_BYTES */
    bk_hash_algorithm hash_algorithm; /* BK_HASH_XXH3 or BK_HASH_XXH64 */
    uint64_t hash_seed;
};

/* Fills *view from a classic Bloom filter.  BK_EINVAL if either is NULL;
 * BK_EKIND for a filter of another kind; BK_EUNSUPPORTED for a SipHash
 * filter.  On error *view is untouched. */
bk_status bk_bloom_view(const bk_filter *filter, struct bk_bloom_view *view);

#if defined(__AVX512F__) && defined(__AVX512DQ__)
/*
 * The AVX-512 form of the probe test, compiled wherever the including file
 * is built with AVX-512 F and DQ (src/bloom_avx512.c in the library, and a
 * caller's loop built with -mavx512f -mavx512dq or -march=native on such a
 * CPU).  It computes eight probe positions at once from the closed form of
 * the enhanced double hashing walk (bloomkit/hash_inline.h):
 *
 *     g_i = h1 + i h2 + (i^3 - i) / 6          (mod 2^64)
 *
 * (the last term sums d_0 .. d_{i-1}'s increments: 0, 0, 1, 4, 10, 20 ...),
 * reduces them to [0, m) lane by lane exactly as bk_reduce does, and reads
 * their eight words with one gather (VPGATHERQQ), probes past k masked off:
 *
 *     lanes:  i = 8r + 0 .. 8r + 7, round r = 0 .. ceil(k / 8) - 1
 *     word    = words[pos_i >> 6]    (gather)
 *     missing = lanes whose bit (word >> (pos_i & 63)) & 1 is 0
 *
 * Same positions, same bits, same answers as the scalar loop below
 * (tests/test_bloom_batch.c compares the library's builds, tests/test_inline.c
 * the views, the walk and the reduction).  It reads all k words of every
 * key, even in a filter past BK_BLOOM_EXIT_EARLY_BYTES: gathering the first
 * two probes, branching, then gathering the rest: slower for present and
 * absent keys alike.  The gain is in instructions: the scalar loop spends
 * about nine per probe, this about twenty per eight, and where every probe
 * is a memory read the core keeps more queries' reads in flight the fewer
 * instructions each query takes.
 * Each element of a gather is an aligned 64-bit load, atomic on x86, so a
 * concurrent atomic add is seen whole or not at all, as with the scalar
 * loads.
 */
/* floor(x * range / 2^64) in each lane: bk_reduce, eight at a time.  For
 * range < 2^32, with x = xh 2^32 + xl, it is (xh range + floor(xl range /
 * 2^32)) / 2^32, whose sum stays below 2^64 (two products instead of the
 * 128-bit product's four). */
static BK_ALWAYS_INLINE __m512i bk_reduce_x8(__m512i x, uint64_t range)
{
    const __m512i r = _mm512_set1_epi64((long long)range);
    if (range > UINT32_MAX)
        return bk_multiply_high_x8(x, r);
    __m512i low = _mm512_srli_epi64(_mm512_mul_epu32(x, r), 32);
    __m512i high = _mm512_mul_epu32(_mm512_srli_epi64(x, 32), r);
    return _mm512_srli_epi64(_mm512_add_epi64(high, low), 32);
}

/* The walk's positions g_i for i = first .. first + 7 (before reduction). */
static BK_ALWAYS_INLINE __m512i bk_probe_hashes_x8(bk_hash hash, unsigned first)
{
    __m512i i = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    /* (i^3 - i) / 6 for i = 0 .. 7 */
    __m512i tetrahedral = _mm512_setr_epi64(0, 0, 1, 4, 10, 20, 35, 56);
    if (first != 0) {
        /* i^3 - i is divisible by 6: halve it, then divide by 3 exactly
         * (multiply by 3's inverse mod 2^64) */
        i = _mm512_add_epi64(i, _mm512_set1_epi64(first));
        __m512i cube_less_i =
            _mm512_sub_epi64(_mm512_mullo_epi64(_mm512_mullo_epi64(i, i), i), i);
        tetrahedral = _mm512_mullo_epi64(_mm512_srli_epi64(cube_less_i, 1),
                                         _mm512_set1_epi64((long long)0xaaaaaaaaaaaaaaabULL));
    }
    __m512i steps = _mm512_mullo_epi64(i, _mm512_set1_epi64((long long)hash.h2));
    return _mm512_add_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)hash.h1), steps),
                            tetrahedral);
}

/* The lanes of round `first` (probes first .. first + 7) that are probes. */
static BK_ALWAYS_INLINE __mmask8 bk_probe_lanes_x8(unsigned hashes, unsigned first)
{
    unsigned here = hashes - first < 8 ? hashes - first : 8;
    return (__mmask8)((1u << here) - 1);
}

/* The lanes of `lanes` whose bit (position, reduced) is 0 in words[]:
 * one gather of their words, a shift and a test. */
static BK_ALWAYS_INLINE __mmask8 bk_missing_bits_x8(const uint64_t *words, __m512i positions,
                                                   __mmask8 lanes)
{
    __m512i probed = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), lanes,
                                                 _mm512_srli_epi64(positions, 6), words, 8);
    __m512i bit = _mm512_srlv_epi64(probed, _mm512_and_si512(positions, _mm512_set1_epi64(63)));
    return _mm512_mask_testn_epi64_mask(lanes, bit, _mm512_set1_epi64(1));
}

static BK_ALWAYS_INLINE bool bk_bloom_test_probes_x8(const uint64_t *words, uint64_t bits,
                                                     unsigned hashes, bk_hash hash)
{
    __mmask8 missing = 0;
    for (unsigned first = 0; first < hashes; first += 8) {
        __m512i positions = bk_reduce_x8(bk_probe_hashes_x8(hash, first), bits);
        missing |= bk_missing_bits_x8(words, positions, bk_probe_lanes_x8(hashes, first));
    }
    return missing == 0;
}
#endif

/* Whether all k bits of `hash` are set in words[0..m).  Loads are relaxed
 * atomics: plain moves on x86 and ARM, and race-free against the atomic
 * adds of a BK_FLAG_CONCURRENT filter.  Built with AVX-512 F and DQ, the
 * gather form above (which ignores exit_early: it reads all k at once). */
static BK_ALWAYS_INLINE bool bk_bloom_test_probes(const uint64_t *words, uint64_t bits,
                                                  unsigned hashes, bool exit_early,
                                                  bk_hash hash)
{
#if defined(__AVX512F__) && defined(__AVX512DQ__)
    (void)exit_early;
    return bk_bloom_test_probes_x8(words, bits, hashes, hash);
#else
    bk_probe probe = bk_probe_start(hash);
    uint64_t all = 1;
    unsigned i = 0;
    if (exit_early) {
        unsigned first =
            hashes < BK_BLOOM_EXIT_EARLY_PROBES ? hashes : BK_BLOOM_EXIT_EARLY_PROBES;
        for (; i < first; i++) {
            uint64_t position = bk_probe_next(&probe, bits);
            all &= __atomic_load_n(&words[position >> 6], __ATOMIC_RELAXED) >> (position & 63);
        }
        if ((all & 1) == 0)
            return false;
    }
#pragma GCC unroll 4 /* gcc and clang: a shorter cache-resident query */
    for (; i < hashes; i++) {
        uint64_t position = bk_probe_next(&probe, bits);
        all &= __atomic_load_n(&words[position >> 6], __ATOMIC_RELAXED) >> (position & 63);
    }
    return all & 1;
#endif
}

/* bk_bloom_contains_hash(filter, hash), inline. */
static BK_ALWAYS_INLINE bool bk_bloom_view_contains_hash(const struct bk_bloom_view *view, bk_hash hash)
{
    return bk_bloom_test_probes(view->words, view->bits, view->hashes, view->exit_early, hash);
}

/* bk_bloom_contains(filter, key, len), inline; key may be NULL when len is 0. */
static BK_ALWAYS_INLINE bool bk_bloom_view_contains(const struct bk_bloom_view *view, const void *key,
                                                    size_t len)
{
    return bk_bloom_view_contains_hash(
        view, bk_hash_xxh3_or_xxh64(view->hash_algorithm, key, len, view->hash_seed));
}

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_BLOOM_INLINE_H */
