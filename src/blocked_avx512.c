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

static inline __attribute__((always_inline)) bool test_block(const uint64_t *block, uint64_t h2,
                                                             unsigned hashes)
{
    const __m512i slice_shifts = _mm512_setr_epi64(0, 9, 18, 27, 36, 45, 54, 0);
    const __m512i position_mask = _mm512_set1_epi64(BK_BLOCK_BITS - 1);
    const __m512i bit_mask = _mm512_set1_epi64(63);
    const __m512i one = _mm512_set1_epi64(1);
    const __m512i line = _mm512_load_si512((const void *)block);
    uint64_t word = h2;
    bool present = true;
    for (unsigned done = 0; done < hashes; done += BK_POSITIONS_PER_WORD) {
        if (done != 0)
            word = bk_mix64(word);
        unsigned here = hashes - done < BK_POSITIONS_PER_WORD ? hashes - done
                                                               : BK_POSITIONS_PER_WORD;
        __mmask8 lanes = (__mmask8)((1u << here) - 1);
        __m512i positions = _mm512_and_si512(
            _mm512_srlv_epi64(_mm512_set1_epi64((long long)word), slice_shifts), position_mask);
        __m512i words = _mm512_permutexvar_epi64(_mm512_srli_epi64(positions, 6), line);
        __m512i bits = _mm512_srlv_epi64(words, _mm512_and_si512(positions, bit_mask));
        present &= _mm512_mask_test_epi64_mask(lanes, bits, one) == lanes;
    }
    return present;
}

bool bk_blocked_avx512_test(const uint64_t *block, uint64_t h2, unsigned hashes)
{
    return test_block(block, h2, hashes);
}

size_t bk_blocked_avx512_test_batch(const bk_blocked *filter, const bk_hash *hashes,
                                    size_t count, bool *results, bool prefetch)
{
    const unsigned k = filter->hashes;
    size_t present = 0;
    for (size_t i = 0; prefetch && i < count && i < BK_PREFETCH_DISTANCE; i++)
        __builtin_prefetch(bk_blocked_block(filter, hashes[i]), 0);
    for (size_t i = 0; i < count; i++) {
        if (prefetch && i + BK_PREFETCH_DISTANCE < count)
            __builtin_prefetch(bk_blocked_block(filter, hashes[i + BK_PREFETCH_DISTANCE]), 0);
        bool found = test_block(bk_blocked_block(filter, hashes[i]), hashes[i].h2, k);
        present += found;
        if (results != NULL)
            results[i] = found;
    }
    return present;
}

#endif /* __AVX512F__ */
