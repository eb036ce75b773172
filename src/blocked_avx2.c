/*
 * src/blocked_avx2.c -- the blocked filter's AVX2 path (compiled with
 * -mavx2; called only when bk_cpu()->avx2, see src/blocked.c).
 *
 * A block is one 512-bit cache line, held in two 256-bit registers of four
 * 64-bit lanes each: lanes 0-3 are words 0-3 (bits 0-255), lanes 4-7 words
 * 4-7.  For a position p in [0, 512) the one-bit mask of lane w is
 *
 *     1 << (p - 64 w)      when 0 <= p - 64 w < 64, else 0
 *
 * and VPSLLVQ gives exactly that: a shift count of 64 or more (including a
 * "negative" count, which is huge as an unsigned 64-bit number) yields 0.
 * So each position costs one broadcast, two subtractions, two variable
 * shifts and two ORs, with no branch and no table; the positions
 * themselves are the successive 9-bit slices of h2 (src/blocked.h), taken
 * with a 9-bit shift of the broadcast word each round.
 *
 *     set:   block |= mask                     (two loads, ORs, stores)
 *     test:  (mask & ~block) == 0              (VPTEST's carry flag)
 *
 * The bits set and the answers are those of the portable path in
 * src/blocked.c; tests/test_blocked.c checks it on random filters.
 */
#include "blocked.h"

#if defined(__AVX2__)
#include <immintrin.h>

typedef struct block_mask {
    __m256i low;  /* words 0-3 */
    __m256i high; /* words 4-7 */
} block_mask;

static inline block_mask build_mask(uint64_t h2, unsigned hashes)
{
    const __m256i one = _mm256_set1_epi64x(1);
    const __m256i low_base = _mm256_setr_epi64x(0, 64, 128, 192);
    const __m256i high_base = _mm256_setr_epi64x(256, 320, 384, 448);
    const __m256i slice = _mm256_set1_epi64x(BK_BLOCK_BITS - 1);
    block_mask mask = { _mm256_setzero_si256(), _mm256_setzero_si256() };
    uint64_t word = h2;
    unsigned done = 0;
    while (done < hashes) {
        __m256i bits = _mm256_set1_epi64x((long long)word);
        unsigned round = hashes - done < BK_POSITIONS_PER_WORD ? hashes - done
                                                                : BK_POSITIONS_PER_WORD;
        for (unsigned i = 0; i < round; i++) {
            __m256i position = _mm256_and_si256(bits, slice);
            mask.low = _mm256_or_si256(
                mask.low, _mm256_sllv_epi64(one, _mm256_sub_epi64(position, low_base)));
            mask.high = _mm256_or_si256(
                mask.high, _mm256_sllv_epi64(one, _mm256_sub_epi64(position, high_base)));
            bits = _mm256_srli_epi64(bits, BK_POSITION_BITS);
        }
        done += round;
        word = bk_mix64(word);
    }
    return mask;
}

static inline bool set_block(uint64_t *block, uint64_t h2, unsigned hashes)
{
    block_mask mask = build_mask(h2, hashes);
    __m256i *line = (__m256i *)(void *)block;
    __m256i low = _mm256_load_si256(line);
    __m256i high = _mm256_load_si256(line + 1);
    bool present = _mm256_testc_si256(low, mask.low) & _mm256_testc_si256(high, mask.high);
    _mm256_store_si256(line, _mm256_or_si256(low, mask.low));
    _mm256_store_si256(line + 1, _mm256_or_si256(high, mask.high));
    return !present;
}

static inline bool test_block(const uint64_t *block, uint64_t h2, unsigned hashes)
{
    block_mask mask = build_mask(h2, hashes);
    const __m256i *line = (const __m256i *)(const void *)block;
    return _mm256_testc_si256(_mm256_load_si256(line), mask.low) &
           _mm256_testc_si256(_mm256_load_si256(line + 1), mask.high);
}

bool bk_blocked_avx2_set(uint64_t *block, uint64_t h2, unsigned hashes)
{
    return set_block(block, h2, hashes);
}

bool bk_blocked_avx2_test(const uint64_t *block, uint64_t h2, unsigned hashes)
{
    return test_block(block, h2, hashes);
}

size_t bk_blocked_avx2_add_batch(bk_blocked *filter, const bk_hash *hashes, size_t count)
{
    size_t fresh = 0;
    for (size_t i = 0; i < count && i < BK_PREFETCH_DISTANCE; i++)
        __builtin_prefetch(bk_blocked_block(filter, hashes[i]), 1);
    for (size_t i = 0; i < count; i++) {
        if (i + BK_PREFETCH_DISTANCE < count)
            __builtin_prefetch(bk_blocked_block(filter, hashes[i + BK_PREFETCH_DISTANCE]), 1);
        fresh += set_block(bk_blocked_block(filter, hashes[i]), hashes[i].h2, filter->hashes);
    }
    filter->keys_added += fresh;
    return fresh;
}

size_t bk_blocked_avx2_test_batch(const bk_blocked *filter, const bk_hash *hashes, size_t count,
                                  bool *results)
{
    size_t present = 0;
    for (size_t i = 0; i < count && i < BK_PREFETCH_DISTANCE; i++)
        __builtin_prefetch(bk_blocked_block(filter, hashes[i]), 0);
    for (size_t i = 0; i < count; i++) {
        if (i + BK_PREFETCH_DISTANCE < count)
            __builtin_prefetch(bk_blocked_block(filter, hashes[i + BK_PREFETCH_DISTANCE]), 0);
        bool found = test_block(bk_blocked_block(filter, hashes[i]), hashes[i].h2,
                                filter->hashes);
        present += found;
        if (results != NULL)
            results[i] = found;
    }
    return present;
}

#endif /* __AVX2__ */
