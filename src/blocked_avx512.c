/*
 * src/blocked_avx512.c -- the blocked filter's AVX-512 query path (compiled
 * with -mavx512f; called only when bk_cpu()->avx512, see src/blocked.c).
 *
 * A query needs k bits of one 512-bit block.  The AVX2 path builds the
 * block's whole 512-bit mask, position by position (seven vector
 * operations per position).  With AVX-512 the block fits one register, and
 * a query can instead look up all of its positions at once, seven per
 * round (the seven 9-bit slices of one hash word, src/blocked.h):
 *
 *     lane j (j < 7):   p_j   = (word >> 9 j) & 511         (the slice)
 *                       w_j   = line[p_j >> 6]               VPSRLVQ by 9 j + 6, VPERMQ
 *                       bit_j = (w_j >> (p_j & 63)) & 1      VPSRLVQ, VPANDQ, VPSRLVQ
 *     present:          no lane j < k with bit_j = 0         VPTESTNMQ, mask test
 *
 * VPERMQ reads its eight indices' low three bits, so the word shifted right
 * by 9 j + 6 selects lane p_j >> 6 of the loaded line: a gather from a
 * register, with no mask (at 10^7 keys 4-6% off a hash batch, Zen 5).
 * Lane 7 and lanes past k test slice 0 again (their shifts are 0 and 6), a
 * bit the key needs anyway, so the final test needs no lane mask.  For
 * k > 7 the next round takes
 * the next word of the walk, bk_mix64 of the previous one, exactly as the
 * portable path does.  About ten instructions for k <= 7, against some
 * fifty for the AVX2 mask.
 *
 * Inserts need the OR of all positions that fall in each word: the key's
 * whole 512-bit mask, here the OR of its k rows of bk_blocked_one_hot
 * (src/blocked.c), one 64-byte load and OR per position, then one OR into
 * the line.  On the Xeon (k = 6, best of three runs) inserts from hashes
 * took 3.5 ns per key at 1e5 keys against 5.0 for the AVX2 path with the
 * same table, and 7.1 against 8.2 ns at 1e7.  (A mask computed in
 * registers, each position broadcast to the eight word lanes and shifted
 * by p - 64 w, measured no faster than AVX2's: 7.0 against 6.6 ns.)
 *
 * Measured (k = 6, 8-byte keys, absent-key batches through
 * bk_filter_contains_batch, hashing included; one core of the Zen 5 machine
 * of docs/PERFORMANCE.md): 6.5 ns per key against 9.2 with the AVX2 path
 * for a cache-resident filter (1e4 keys), 17 against 26 ns at 1e8 keys.
 * The batch loop is about 45 instructions per key against 68 for AVX2
 * (counted in the disassembly: valgrind cannot run AVX-512).  Answers are
 * those of the portable path (tests/test_blocked.c checks all three).
 */
#include "blocked.h"

#if defined(__AVX512F__)
#include <immintrin.h>

/* The key's 512-bit mask: the OR of its k rows of bk_blocked_one_hot, one
 * load-and-OR per position, over the positions' walk (src/blocked.h). */
static inline __attribute__((always_inline)) __m512i key_mask(uint64_t h2, unsigned hashes)
{
    __m512i mask = _mm512_setzero_si512();
    bk_position_walk walk = bk_position_walk_start(h2);
    for (unsigned i = 0; i < hashes; i++) {
        const void *row = bk_blocked_one_hot[bk_position_next(&walk)];
        mask = _mm512_or_si512(mask, _mm512_load_si512(row));
    }
    return mask;
}

/* ORs the key's mask into the block; whether a bit flipped. */
static inline __attribute__((always_inline)) bool set_block(uint64_t *block, uint64_t h2,
                                                            unsigned hashes)
{
    __m512i mask = key_mask(h2, hashes);
    __m512i line = _mm512_load_si512((const void *)block);
    __mmask8 flipped = _mm512_test_epi64_mask(_mm512_andnot_si512(line, mask), mask);
    _mm512_store_si512((void *)block, _mm512_or_si512(line, mask));
    return flipped != 0;
}

/* The k of the designs up to 20 bits per key (3 to 11) get code with a
 * constant k, so the mask is built in straight-line code; others take the
 * general loop. */
#define FOR_COMMON_K(X) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

bool bk_blocked_avx512_set(uint64_t *block, uint64_t h2, unsigned hashes)
{
    switch (hashes) {
#define SET_CONSTANT_K(K) \
    case K:               \
        return set_block(block, h2, K);
        FOR_COMMON_K(SET_CONSTANT_K)
#undef SET_CONSTANT_K
    default:
        return set_block(block, h2, hashes);
    }
}

static inline __attribute__((always_inline)) size_t add_batch(bk_blocked *filter,
                                                              const bk_hash *hashes,
                                                              size_t count, unsigned k)
{
    size_t fresh = 0;
    for (size_t i = 0; i < count && i < BK_ADD_PREFETCH_DISTANCE; i++)
        __builtin_prefetch(bk_blocked_block(filter, hashes[i]), 1);
    for (size_t i = 0; i < count; i++) {
        if (i + BK_ADD_PREFETCH_DISTANCE < count)
            __builtin_prefetch(bk_blocked_block(filter, hashes[i + BK_ADD_PREFETCH_DISTANCE]), 1);
        fresh += set_block(bk_blocked_block(filter, hashes[i]), hashes[i].h2, k);
    }
    return fresh;
}

size_t bk_blocked_avx512_add_batch(bk_blocked *filter, const bk_hash *hashes, size_t count)
{
    size_t fresh;
    switch (filter->hashes) {
#define ADD_CONSTANT_K(K)                            \
    case K:                                          \
        fresh = add_batch(filter, hashes, count, K); \
        break;
        FOR_COMMON_K(ADD_CONSTANT_K)
#undef ADD_CONSTANT_K
    default:
        fresh = add_batch(filter, hashes, count, filter->hashes);
    }
    filter->keys_added += fresh;
    return fresh;
}

/*
 * The shifts of a round of `positions` slices (1 to 7): 9 j in lane j <
 * positions, 0 in the other lanes, which thus test slice 0 again.  Every
 * lane then belongs to the key and the test takes no lane mask.  A mask
 * cost more than the lane it saves: gcc 12 moved it from a general register
 * into a mask register (KMOVW) on every key of a batch, and without it
 * hash batches (k = 6, the driver of the two loops in one process, 12 MB
 * filter, medians of 21 passes, Zen 5) went from 1.51-1.53 to 1.27-1.29 ns
 * per key, where the same loop with a one-instruction test takes 1.25-1.26.
 */
static inline __m512i round_slice_shifts(unsigned positions)
{
    const __m512i every_slice = _mm512_setr_epi64(0, 9, 18, 27, 36, 45, 54, 0);
    return _mm512_maskz_mov_epi64((__mmask8)((1u << positions) - 1), every_slice);
}

/* One round: the positions of hash word `word` at the lanes' slice shifts
 * (round_slice_shifts). */
static inline __attribute__((always_inline)) bool test_round(__m512i line, uint64_t word,
                                                             __m512i slice_shifts)
{
    const __m512i word_index_shifts = _mm512_add_epi64(slice_shifts, _mm512_set1_epi64(6));
    const __m512i repeated = _mm512_set1_epi64((long long)word);
    /* VPERMQ reads only the low three bits of each index: the word index
     * p >> 6 of slice j is bits 9j + 6 .. 9j + 8 of the word, so the word
     * shifted right by 9j + 6 selects it with no mask */
    __m512i words = _mm512_permutexvar_epi64(_mm512_srlv_epi64(repeated, word_index_shifts), line);
    __m512i bit_in_word = _mm512_and_si512(_mm512_srlv_epi64(repeated, slice_shifts),
                                           _mm512_set1_epi64(63));
    __m512i bits = _mm512_srlv_epi64(words, bit_in_word);
    /* no lane with its bit clear: VPTESTNMQ and a test of the mask for
     * zero, two instructions fewer per key than comparing the set lanes
     * with a lane mask (see bk_blocked_line_of in blocked.h for the gain) */
    return _mm512_testn_epi64_mask(bits, _mm512_set1_epi64(1)) == 0;
}

/* k <= 7 is one round in straight-line code; larger k loops over rounds. */
static inline __attribute__((always_inline)) bool test_block(const uint64_t *block, uint64_t h2,
                                                             unsigned hashes)
{
    const __m512i line = _mm512_load_si512((const void *)block);
    if (hashes <= BK_POSITIONS_PER_WORD)
        return test_round(line, h2, round_slice_shifts(hashes));
    uint64_t word = h2;
    bool present = true;
    for (unsigned done = 0; done < hashes; done += BK_POSITIONS_PER_WORD) {
        if (done != 0)
            word = bk_mix64(word);
        unsigned here = hashes - done < BK_POSITIONS_PER_WORD ? hashes - done
                                                               : BK_POSITIONS_PER_WORD;
        present &= test_round(line, word, round_slice_shifts(here));
    }
    return present;
}

bool bk_blocked_avx512_test(const uint64_t *block, uint64_t h2, unsigned hashes)
{
    return test_block(block, h2, hashes);
}

static BK_NOINLINE bool contains_key_general(const bk_blocked *filter, const void *key,
                                             size_t len)
{
    bk_hash hash = bk_hash_inline(&filter->hasher, key, len);
    return test_block(bk_blocked_block(filter, hash), hash.h2, filter->hashes);
}

/* The one-key query of the generic handle: the default hash of an 8- or
 * 16-byte key and the test in one function, without a call in between. */
bool bk_blocked_avx512_contains_key(const bk_blocked *filter, const void *key, size_t len)
{
    if (filter->hasher.algorithm != BK_HASH_XXH3 || (len != 8 && len != 16))
        return contains_key_general(filter, key, len);
    bk_hash hash = len == 8 ? bk_hash_xxh3(key, 8, filter->hasher.seed)
                            : bk_hash_xxh3(key, 16, filter->hasher.seed);
    return test_block(bk_blocked_block(filter, hash), hash.h2, filter->hashes);
}

/* The batch probes.  k <= 7 (context: its slice shifts) is one
 * round, a loop without the round logic; larger k (context: k) loops. */
static inline __attribute__((always_inline)) bool probe_one_round(const void *slice_shifts,
                                                                  const void *block,
                                                                  const bk_hash *hash)
{
    return test_round(_mm512_load_si512(block), hash->h2,
                      _mm512_loadu_si512(slice_shifts));
}

static inline __attribute__((always_inline)) bool probe_rounds(const void *k, const void *block,
                                                               const bk_hash *hash)
{
    return test_block(block, hash->h2, *(const unsigned *)k);
}

size_t bk_blocked_avx512_test_batch(const bk_blocked *filter, const bk_hash *hashes,
                                    size_t count, bool *results)
{
    const unsigned k = filter->hashes;
    if (k <= BK_POSITIONS_PER_WORD) {
        const __m512i slice_shifts = round_slice_shifts(k);
        return bk_line_ring_probe(filter, hashes, count, results, bk_blocked_line_of,
                                  probe_one_round, &slice_shifts);
    }
    return bk_line_ring_probe(filter, hashes, count, results, bk_blocked_line_of, probe_rounds,
                              &k);
}

#endif /* __AVX512F__ */
