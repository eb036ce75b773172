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
 *     lane j (j < 7):   p_j   = (word >> 9 j) & 511         VPSRLVQ, VPANDQ
 *                       w_j   = line[p_j >> 6]               VPSRLQ, VPERMQ
 *                       bit_j = (w_j >> (p_j & 63)) & 1      VPANDQ, VPSRLVQ, VPTESTMQ
 *     present:          bit_j = 1 in every lane j < k        a mask compare
 *
 * VPERMQ reads its eight indices' low three bits, so the word index p >> 6
 * (0 to 7) selects lane p >> 6 of the loaded line: a gather from a register.
 * Lane 7 and lanes past k are masked off.  For k > 7 the next round takes
 * the next word of the walk, bk_mix64 of the previous one, exactly as the
 * portable path does.  About ten instructions for k <= 7, against some
 * fifty for the AVX2 mask.
 *
 * Inserts stay on the AVX2 path: setting bits needs the OR of all
 * positions that fall in each word, which is what the AVX2 mask computes.
 * An AVX-512 mask (each position broadcast to the eight word lanes and
 * shifted by p - 64 w) was tried and measured no faster on the Xeon: 7.0
 * against 6.6 ns per key for a hash batch of inserts at 1e5 keys.
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

/* One round: the positions of hash word `word` in the lanes of `lanes`. */
static inline __attribute__((always_inline)) bool test_round(__m512i line, uint64_t word,
                                                             __mmask8 lanes)
{
    const __m512i slice_shifts = _mm512_setr_epi64(0, 9, 18, 27, 36, 45, 54, 0);
    __m512i positions = _mm512_and_si512(
        _mm512_srlv_epi64(_mm512_set1_epi64((long long)word), slice_shifts),
        _mm512_set1_epi64(BK_BLOCK_BITS - 1));
    __m512i words = _mm512_permutexvar_epi64(_mm512_srli_epi64(positions, 6), line);
    __m512i bits = _mm512_srlv_epi64(words, _mm512_and_si512(positions, _mm512_set1_epi64(63)));
    return _mm512_mask_test_epi64_mask(lanes, bits, _mm512_set1_epi64(1)) == lanes;
}

static inline __mmask8 lanes_for(unsigned positions)
{
    return (__mmask8)((1u << positions) - 1);
}

/* k <= 7 is one round in straight-line code; larger k loops over rounds. */
static inline __attribute__((always_inline)) bool test_block(const uint64_t *block, uint64_t h2,
                                                             unsigned hashes)
{
    const __m512i line = _mm512_load_si512((const void *)block);
    if (hashes <= BK_POSITIONS_PER_WORD)
        return test_round(line, h2, lanes_for(hashes));
    uint64_t word = h2;
    bool present = true;
    for (unsigned done = 0; done < hashes; done += BK_POSITIONS_PER_WORD) {
        if (done != 0)
            word = bk_mix64(word);
        unsigned here = hashes - done < BK_POSITIONS_PER_WORD ? hashes - done
                                                               : BK_POSITIONS_PER_WORD;
        present &= test_round(line, word, lanes_for(here));
    }
    return present;
}

bool bk_blocked_avx512_test(const uint64_t *block, uint64_t h2, unsigned hashes)
{
    return test_block(block, h2, hashes);
}

static __attribute__((noinline)) bool contains_key_general(const bk_blocked *filter,
                                                           const void *key, size_t len)
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

/* The batch loop; `one_round` (k <= 7) is a constant where this is
 * inlined, so the common case gets a loop without the round logic. */
static inline __attribute__((always_inline)) size_t
test_batch(const bk_blocked *filter, const bk_hash *hashes, size_t count, bool *results,
           bool prefetch, bool one_round)
{
    const unsigned k = filter->hashes;
    const __mmask8 lanes = lanes_for(one_round ? k : 0);
    size_t present = 0;
    for (size_t i = 0; prefetch && i < count && i < BK_PREFETCH_DISTANCE; i++)
        __builtin_prefetch(bk_blocked_block(filter, hashes[i]), 0);
    for (size_t i = 0; i < count; i++) {
        if (prefetch && i + BK_PREFETCH_DISTANCE < count)
            __builtin_prefetch(bk_blocked_block(filter, hashes[i + BK_PREFETCH_DISTANCE]), 0);
        const uint64_t *block = bk_blocked_block(filter, hashes[i]);
        bool found = one_round ? test_round(_mm512_load_si512((const void *)block), hashes[i].h2,
                                            lanes)
                               : test_block(block, hashes[i].h2, k);
        present += found;
        if (results != NULL)
            results[i] = found;
    }
    return present;
}

size_t bk_blocked_avx512_test_batch(const bk_blocked *filter, const bk_hash *hashes,
                                    size_t count, bool *results, bool prefetch)
{
    if (filter->hashes <= BK_POSITIONS_PER_WORD)
        return test_batch(filter, hashes, count, results, prefetch, true);
    return test_batch(filter, hashes, count, results, prefetch, false);
}

#endif /* __AVX512F__ */
