/*
 * bloomkit/detail/bloom_detail.h -- what bloomkit/bloom_inline.h's view and
 * src/bloom.c's queries are built from: the probe walk of the classic
 * filter (enhanced double hashing) and the probe test, scalar and AVX-512
 * gather form.  Included by bloom_inline.h; not an interface of the
 * library: names and contracts here may change between versions.
 */
#ifndef BLOOMKIT_DETAIL_BLOOM_DETAIL_H
#define BLOOMKIT_DETAIL_BLOOM_DETAIL_H

#include "bloomkit/hash_inline.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* A filter with more bytes than this stops a one-key query after the first
 * BK_BLOOM_EXIT_EARLY_PROBES probes when one of them is 0. */
#define BK_BLOOM_EXIT_EARLY_BYTES ((size_t)32 << 20)
#define BK_BLOOM_EXIT_EARLY_PROBES 2u

/*
 * The k probe positions of a classic filter's key: enhanced double hashing
 * (Dillinger & Manolios 2004; the plain form is Kirsch & Mitzenmacher 2006)
 *
 *     g_0 = h1, g_{i+1} = g_i + d_i, d_0 = h2, d_{i+1} = d_i + i + 1  (mod 2^64)
 *     position_i = bk_reduce(g_i, m)
 *
 * The quadratic term stops the sequence from collapsing when h2 is close to
 * 0 modulo the reduction, which plain h1 + i*h2 suffers.  Reduction is
 * applied to the 64-bit sum, so m need not be a power of two and m up to
 * 2^64 - 1 is addressable.
 */
typedef struct bk_probe {
    uint64_t position_hash; /* g_i */
    uint64_t step;          /* d_i */
    uint64_t index;         /* i */
} bk_probe;

static BK_ALWAYS_INLINE bk_probe bk_probe_start(bk_hash hash)
{
    bk_probe probe = { hash.h1, hash.h2, 0 };
    return probe;
}

/* The next probe position in [0, range). */
static BK_ALWAYS_INLINE uint64_t bk_probe_next(bk_probe *probe, uint64_t range)
{
    uint64_t position = bk_reduce(probe->position_hash, range);
    probe->position_hash += probe->step;
    probe->index++;
    probe->step += probe->index;
    return position;
}

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
        __m512i cube_less_i = _mm512_sub_epi64(_mm512_mullo_epi64(_mm512_mullo_epi64(i, i), i),
                                               i);
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
                                                  unsigned hashes, bool exit_early, bk_hash hash)
{
#if defined(__AVX512F__) && defined(__AVX512DQ__)
    (void)exit_early;
    return bk_bloom_test_probes_x8(words, bits, hashes, hash);
#else
    bk_probe probe = bk_probe_start(hash);
    uint64_t all = 1;
    unsigned i = 0;
    if (exit_early) {
        unsigned first = hashes < BK_BLOOM_EXIT_EARLY_PROBES ? hashes
                                                             : BK_BLOOM_EXIT_EARLY_PROBES;
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

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_DETAIL_BLOOM_DETAIL_H */
