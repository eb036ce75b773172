/*
 * src/bloom_avx512.c -- the classic filter's one-key queries, batch
 * queries and batch adds built with AVX-512 F and DQ (compiled with
 * -mavx512f -mavx512dq; called from src/bloom.c only when
 * bk_cpu()->avx512dqbw).
 *
 * Built with those flags, bk_bloom_test_probes (bloomkit/bloom_inline.h)
 * is the gather form: the k probe positions eight at a time from the
 * closed form of the double hashing walk, their words read with one
 * VPGATHERQQ.  That header has the idea, the formulas and the figures;
 * this file compiles the library's two one-key queries with it, the hash
 * of the key inlined into the second as in src/bloom.c, and holds the
 * batch pipeline built on its parts (below).  Same bits, same answers as
 * the portable and BMI2 builds (tests/test_bloom_batch.c runs all three on
 * the same filters).
 *
 * src/bloom.c takes this build for one-key queries of filters with k <= 8
 * (every target FPR down to about 0.4%) at any size, and of bigger k past
 * one core's L2; its batch pipeline below, past the L2 with k <= 8.  With
 * k = 10 (0.1%) neither build wins everywhere (a driver, 8-byte keys
 * through bk_filter_contains, both builds in one process, medians of 15
 * passes, present / absent, ns): BMI2 11.4 against 13.8 present at 10^5
 * keys, 17.1 / 19.0 against 19.4 / 21.2 at 10^6; at 10^7 104.7 / 52.5
 * against 100.7 / 50.5 and at 10^8 171.9 / 124.6 against 145.6 / 157.5
 * (absent keys of a filter past 32 MiB stop at the BMI2 build's first two
 * probes; the gather reads all k).  At 10^8 keys (120 MB) in
 * bloomkit-bench, one raw key per call of k = 7 became 1.57x / 1.71x
 * faster than libbloom's bloom_check (int64 keys, present / absent) and
 * 1.79x / 1.97x (str16), from 1.07-1.35x / 1.26-1.79x in five earlier runs
 * of the BMI2 build.
 */
#include "bloom.h"
#include "cpu.h" /* BK_NOINLINE */

#if defined(__AVX512F__) && defined(__AVX512DQ__)
static inline __attribute__((always_inline)) bool test_bits(const bk_bloom *filter, bk_hash hash)
{
    return bk_bloom_test_probes(filter->words, filter->bits, filter->hashes, filter->exit_early,
                                hash);
}

/*
 * The one-key queries.  A filter with k <= 8 tests its probes in one round
 * of eight lanes: its code is a straight line, and the 8- and 16-byte keys
 * of the default hash are hashed with their length known.  The rest (k > 8,
 * other lengths, XXH64 and SipHash) take the general form, a function of
 * its own so that the straight line saves no registers for it; one_round
 * only chooses the faster code, both forms answer for any k.  Measured on
 * the Zen 5 host (a driver: k = 7, keys through bk_filter_contains, the
 * library before and after in one process, medians of 15 passes of 4e6
 * queries), ns per key, with src/bloom.c's frameless dispatch and this
 * build taken below the L2 too (before: the BMI2 build there):
 *     keys    8-byte present   8-byte absent   16-byte present   libbloom
 *     10^5       9.2 ->  7.8      9.2 ->  7.8      9.9 ->  9.3     13.5 / 23.7
 *     10^6      14.5 -> 11.6     13.4 -> 10.8     15.6 -> 13.4     19.2 / 27.4
 *     10^7      52.1 -> 31.8     67.6 -> 65.4     57.8 -> 54.0     83.7 / 95.0
 * (libbloom's bloom_check, 8-byte keys present / absent).  From a
 * precomputed hash at 10^5 keys: 5.8 (BMI2) -> 5.1.
 */
static inline __attribute__((always_inline)) bool one_round(const bk_bloom *filter)
{
    return filter->hashes <= 8;
}

static BK_NOINLINE bool contains_hash_general(const bk_bloom *filter, bk_hash hash)
{
    return test_bits(filter, hash);
}

static BK_NOINLINE bool contains_key_general(const bk_bloom *filter, const void *key,
                                             size_t len)
{
    return test_bits(filter, bk_hash_inline(&filter->hasher, key, len));
}

bool bk_bloom_avx512_contains_hash(const bk_bloom *filter, bk_hash hash)
{
    if (!one_round(filter))
        return contains_hash_general(filter, hash);
    return test_bits(filter, hash);
}

bool bk_bloom_avx512_contains(const bk_bloom *filter, const void *key, size_t len)
{
    if (!one_round(filter) || filter->hasher.algorithm != BK_HASH_XXH3 || (len != 8 && len != 16))
        return contains_key_general(filter, key, len);
    bk_hash hash = len == 8 ? bk_hash_xxh3(key, 8, filter->hasher.seed)
                            : bk_hash_xxh3(key, 16, filter->hasher.seed);
    return test_bits(filter, hash);
}

/*
 * Batches of filters with k <= 8: src/bloom.c's pipeline (key i's k words
 * requested GATHER_DISTANCE keys before its turn), with each key's
 * positions computed once, eight at a time, and kept in a ring of
 * GATHER_DISTANCE registers from the request to the turn:
 *
 *     request key i + D:  positions = reduce(walk(hash, 0..7))   ring[i mod D]
 *                         prefetch words[position >> 6], k of them
 *     query key i:        gather words[ring[i mod D] >> 6], test the bits
 *     add key i:          set the k bits one word at a time
 *
 * Measured (Zen 5; the library before and after loaded in one process,
 * hash batches of 1,024 keys, half present, 21 alternating passes of 4e6,
 * medians), ns per key, src/bloom.c's scalar pipeline against this one:
 *     k = 7 (1%):     10^6 keys 10.1 -> 6.4,  10^7 23.5 -> 13.9,  10^8 36.5 -> 33.0
 * and for key batches 12.2 -> 8.5, 27.4 -> 17.0, 43.3 -> 37.4.  With
 * k = 10 (0.1%) the same form, its second round of two probes computed
 * again at the test, was slower at 10^6 keys (19.2 -> 21.7) though faster
 * at 10^7 (33.7 -> 25.4); keeping both rounds' positions in the ring did
 * not change that, so k > 8 keeps the scalar pipeline.  D = 4 and 16 against
 * 8 (a driver, k = 7, medians at 10^6 / 10^7 / 10^8 keys): 6.5 / 12.9 /
 * 48.2 ns, 6.6 / 10.1 / 45.1 and 6.6 / 8.8 / 46.3, none better at every
 * size.
 *
 * Adds take this form only without BK_FLAG_CONCURRENT (whose adds are
 * atomic ORs, src/bloom.c).  Adding 8-byte keys in batches of 1,024 to an
 * empty filter (min(n, 4e6) keys, 9 alternating passes, medians): 14.5 ->
 * 9.5 ns per key at 10^6 keys, 21.6 -> 12.1 at 10^7, 70.4 -> 46.0 at 10^8.
 * The lanes are read back from a stored copy of the register; taking them
 * out by register moves instead (VMOVQ and a VALIGNQ rotation per lane)
 * was slower: queries 6.8 -> 7.9 ns at 10^6 and 14.4 -> 26.8 at 10^7, adds
 * 9.6 -> 11.4 and 12.7 -> 15.3.
 */
#define GATHER_DISTANCE 8

/* Prefetches the words of key `hash`'s k <= 8 probes, for writing when
 * `for_write` (a constant where this is inlined); returns their positions. */
static inline __attribute__((always_inline)) __m512i request_words(const uint64_t *words,
                                                                   uint64_t bits,
                                                                   unsigned hashes, bk_hash hash,
                                                                   bool for_write)
{
    __m512i positions = bk_reduce_x8(bk_probe_hashes_x8(hash, 0), bits);
    uint64_t word_index[8] __attribute__((aligned(64)));
    _mm512_store_si512((void *)word_index, _mm512_srli_epi64(positions, 6));
    for (unsigned lane = 0; lane < hashes; lane++) {
        if (for_write)
            __builtin_prefetch(&words[word_index[lane]], 1);
        else
            __builtin_prefetch(&words[word_index[lane]], 0);
    }
    return positions;
}

/* Sets the k <= 8 bits at `positions`; whether one of them was 0.  One
 * word at a time: a scatter would lose a bit where two probes share a
 * word. */
static inline __attribute__((always_inline)) bool set_words(uint64_t *words, __m512i positions,
                                                            unsigned hashes)
{
    uint64_t position_of[8] __attribute__((aligned(64)));
    _mm512_store_si512((void *)position_of, positions);
    uint64_t flipped = 0;
    for (unsigned lane = 0; lane < hashes; lane++) {
        uint64_t position = position_of[lane];
        uint64_t mask = (uint64_t)1 << (position & 63);
        uint64_t old = words[position >> 6];
        flipped |= ~old & mask;
        words[position >> 6] = old | mask;
    }
    return flipped != 0;
}

/* The pipeline over hashes[0..count): queries (answers to results, which
 * may be NULL) or, when `adding` (a constant where this is inlined), adds.
 * Returns the keys present, or the keys new. */
static inline __attribute__((always_inline)) size_t
pipeline(const bk_bloom *filter, const bk_hash *hashes, size_t count, bool *results, bool adding)
{
    uint64_t *const words = filter->words;
    const uint64_t bits = filter->bits;
    const unsigned k = filter->hashes;
    const __mmask8 lanes = bk_probe_lanes_x8(k, 0);
    __m512i ring[GATHER_DISTANCE];
    size_t ahead = count < GATHER_DISTANCE ? count : GATHER_DISTANCE;
    for (size_t i = 0; i < ahead; i++)
        ring[i] = request_words(words, bits, k, hashes[i], adding);
    size_t counted = 0;
    for (size_t i = 0; i < count; i++) {
        __m512i *slot = &ring[i % GATHER_DISTANCE];
        __m512i positions = *slot;
        if (i < count - ahead)
            *slot = request_words(words, bits, k, hashes[i + GATHER_DISTANCE], adding);
        bool answer = adding ? set_words(words, positions, k)
                             : bk_missing_bits_x8(words, positions, lanes) == 0;
        counted += answer;
        if (results != NULL)
            results[i] = answer;
    }
    return counted;
}

size_t bk_bloom_avx512_test_batch(const bk_bloom *filter, const bk_hash *hashes, size_t count,
                                  bool *results)
{
    return pipeline(filter, hashes, count, results, false);
}

size_t bk_bloom_avx512_add_batch(bk_bloom *filter, const bk_hash *hashes, size_t count)
{
    return pipeline(filter, hashes, count, NULL, true);
}
#endif
