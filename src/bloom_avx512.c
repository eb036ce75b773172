/*
 * src/bloom_avx512.c -- the classic filter's one-key queries, batch
 * queries and batch adds built with AVX-512 F and DQ (compiled with
 * -mavx512f -mavx512dq; called from src/bloom.c only when
 * bk_cpu()->avx512dqbw).
 *
 * Built with those flags, bk_bloom_test_probes (bloomkit/bloom_inline.h)
 * is the gather form: the k probe positions eight at a time from the
 * closed form of the double hashing walk, their words read with one
 * VPGATHERQQ.  That header has the idea and the formulas;
 * this file compiles the library's two one-key queries with it, the hash
 * of the key inlined into the second as in src/bloom.c, and holds the
 * batch pipeline built on its parts (below).  Same bits, same answers as
 * the portable and BMI2 builds (tests/test_bloom_batch.c runs all three on
 * the same filters).
 *
 * src/bloom.c takes this build for one-key queries of filters with k <= 8
 * (every target FPR down to about 0.4%) at any size, and of bigger k past
 * one core's L2; its batch pipeline below, past the L2 with k <= 8.  With
 * k > 8 neither build wins at every size: the BMI2 build is faster within
 * the L2, and past 32 MiB its absent keys stop at the first two probes
 * while the gather reads all k.
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
 * only chooses the faster code, both forms answer for any k.  With
 * src/bloom.c's frameless dispatch, the straight line is faster than the
 * BMI2 build below the L2 too, so it serves k <= 8 at every size.
 */
static inline __attribute__((always_inline)) bool one_round(const bk_bloom *filter)
{
    return filter->hashes <= 8;
}

static BK_NOINLINE bool contains_hash_general(const bk_bloom *filter, bk_hash hash)
{
    return test_bits(filter, hash);
}

static BK_NOINLINE bool contains_key_general(const bk_bloom *filter, const void *key, size_t len)
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
    if (!one_round(filter) || filter->hasher.algorithm != BK_HASH_XXH3 ||
        (len != 8 && len != 16))
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
 * It computes each position once where src/bloom.c's scalar pipeline
 * computes it twice (to request its word and to test it).  For k > 8 the
 * second round of positions, computed again at the test or kept in the
 * ring: slower within the L2, so k > 8 keeps the scalar pipeline.  A ring
 * distance D of 4 or 16 against 8: none better at every size.
 *
 * Adds take this form only without BK_FLAG_CONCURRENT (whose adds are
 * atomic ORs, src/bloom.c).  The lanes are read back from a stored copy of
 * the register; register moves instead (VMOVQ and a VALIGNQ rotation per
 * lane): slower.
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
