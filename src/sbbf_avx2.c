/*
 * src/sbbf_avx2.c -- the Parquet split-block filter's AVX2 path (compiled
 * with -mavx2; called only when bk_cpu()->avx2, see src/sbbf.c).
 *
 * The eight words of a block are the eight 32-bit lanes of one register:
 *
 *     mask  = 1 << ((x * SALT) >> 27)     VPMULLD, VPSRLD, VPSLLVD
 *     add:   block |= mask                one load, OR, store
 *     test:  (mask & ~block) == 0         one VPTEST (carry flag)
 *
 * Same bits and answers as the spec's loops in src/sbbf.c.
 */
#include "sbbf.h"

#if defined(__AVX2__)
#include <immintrin.h>

static inline __m256i block_mask(uint32_t key)
{
    const __m256i salts = _mm256_setr_epi32(
        (int)0x47b6137bu, (int)0x44974d91u, (int)0x8824ad5bu, (int)0xa2b7289du,
        (int)0x705495c7u, (int)0x2df1424bu, (int)0x9efc4947u, (int)0x5c6bfb31u);
    __m256i products = _mm256_mullo_epi32(_mm256_set1_epi32((int)key), salts);
    return _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32(products, 27));
}

static inline bool set_block(uint32_t *block, uint32_t key)
{
    __m256i mask = block_mask(key);
    __m256i *line = (__m256i *)(void *)block;
    __m256i words = _mm256_load_si256(line);
    bool present = _mm256_testc_si256(words, mask);
    _mm256_store_si256(line, _mm256_or_si256(words, mask));
    return !present;
}

static inline bool test_block(const uint32_t *block, uint32_t key)
{
    return _mm256_testc_si256(_mm256_load_si256((const __m256i *)(const void *)block),
                              block_mask(key));
}

bool bk_sbbf_avx2_set(uint32_t *block, uint32_t key) { return set_block(block, key); }
bool bk_sbbf_avx2_test(const uint32_t *block, uint32_t key) { return test_block(block, key); }

size_t bk_sbbf_avx2_add_batch(bk_sbbf *filter, const bk_hash *hashes, size_t count)
{
    size_t fresh = 0;
    for (size_t i = 0; i < count && i < BK_SBBF_ADD_PREFETCH_DISTANCE; i++)
        __builtin_prefetch(bk_sbbf_block(filter, hashes[i].h1), 1);
    for (size_t i = 0; i < count; i++) {
        if (i + BK_SBBF_ADD_PREFETCH_DISTANCE < count) {
            size_t ahead = i + BK_SBBF_ADD_PREFETCH_DISTANCE;
            __builtin_prefetch(bk_sbbf_block(filter, hashes[ahead].h1), 1);
        }
        fresh += set_block(bk_sbbf_block(filter, hashes[i].h1), (uint32_t)hashes[i].h1);
    }
    filter->keys_added += fresh;
    return fresh;
}

size_t bk_sbbf_avx2_test_batch(const bk_sbbf *filter, const bk_hash *hashes, size_t count,
                               bool *results)
{
    size_t present = 0;
    for (size_t i = 0; i < count && i < BK_SBBF_PREFETCH_DISTANCE; i++)
        __builtin_prefetch(bk_sbbf_block(filter, hashes[i].h1), 0);
    for (size_t i = 0; i < count; i++) {
        if (i + BK_SBBF_PREFETCH_DISTANCE < count)
            __builtin_prefetch(bk_sbbf_block(filter, hashes[i + BK_SBBF_PREFETCH_DISTANCE].h1), 0);
        bool found = test_block(bk_sbbf_block(filter, hashes[i].h1), (uint32_t)hashes[i].h1);
        present += found;
        if (results != NULL)
            results[i] = found;
    }
    return present;
}

#endif /* __AVX2__ */
