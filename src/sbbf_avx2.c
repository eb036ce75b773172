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
 * The mask and the test are bloomkit/sbbf_inline.h's, shared with the
 * inline view.  Same bits and answers as the spec's loops in src/sbbf.c.
 */
#include "sbbf.h"

#if defined(__AVX2__)
#include <immintrin.h>

static inline bool set_block(uint32_t *block, uint32_t key)
{
    __m256i mask = bk_sbbf_block_mask_avx2(key);
    __m256i *line = (__m256i *)(void *)block;
    __m256i words = _mm256_load_si256(line);
    bool present = _mm256_testc_si256(words, mask);
    _mm256_store_si256(line, _mm256_or_si256(words, mask));
    return !present;
}

bool bk_sbbf_avx2_set(uint32_t *block, uint32_t key) { return set_block(block, key); }

bool bk_sbbf_avx2_contains_key(const bk_sbbf *filter, const void *key, size_t len)
{
    uint64_t hash = bk_hash_xxh64(key, len, filter->hasher.seed).h1;
    return bk_sbbf_block_test_avx2(bk_sbbf_block(filter, hash), (uint32_t)hash);
}

bool bk_sbbf_avx2_add_key(bk_sbbf *filter, const void *key, size_t len)
{
    uint64_t hash = bk_hash_xxh64(key, len, filter->hasher.seed).h1;
    bool fresh = set_block(bk_sbbf_block(filter, hash), (uint32_t)hash);
    filter->keys_added = bk_saturating_add(filter->keys_added, fresh);
    return fresh;
}
bool bk_sbbf_avx2_test(const uint32_t *block, uint32_t key)
{
    return bk_sbbf_block_test_avx2(block, key);
}

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
    filter->keys_added = bk_saturating_add(filter->keys_added, fresh);
    return fresh;
}

static inline bool probe(const void *unused, const void *block, const bk_hash *hash)
{
    (void)unused;
    return bk_sbbf_block_test_avx2(block, (uint32_t)hash->h1);
}

size_t bk_sbbf_avx2_test_batch(const bk_sbbf *filter, const bk_hash *hashes, size_t count,
                               bool *results)
{
    return bk_line_ring_probe(filter, hashes, count, results, bk_sbbf_line_of, probe, NULL);
}

#endif /* __AVX2__ */
