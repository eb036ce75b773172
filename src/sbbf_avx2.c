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

/* The query of an XXH64 filter from the hash before its last step: the
 * block from its upper half, which that step leaves as it is
 * (bk_xxh64_finish), the key from the finished lower half. */
static inline bool test_unfinished(const bk_sbbf *filter, uint64_t unfinished)
{
    return bk_sbbf_block_test_avx2(bk_sbbf_block(filter, unfinished),
                                   (uint32_t)bk_xxh64_finish(unfinished));
}

/* The add likewise: whether the key was new, counted without a branch. */
static inline bool add_unfinished(bk_sbbf *filter, uint64_t unfinished)
{
    bool fresh = set_block(bk_sbbf_block(filter, unfinished),
                           (uint32_t)bk_xxh64_finish(unfinished));
    filter->keys_added = bk_saturating_add(filter->keys_added, fresh);
    return fresh;
}

/* XXH64 of an 8- or 16-byte key (len one of the two) before its last
 * step, written out.  The other lengths go to the portable functions: the
 * library's XXH64 call here would cost these functions a stack frame. */
static inline uint64_t unfinished_of_key(const bk_sbbf *filter, const void *key, size_t len)
{
    if (len == 8)
        return bk_xxh64_unfinished_of_u64(bk_xxh64_read(key), filter->hasher.seed);
    return bk_xxh64_unfinished_8_or_16(key, 16, filter->hasher.seed);
}

static inline bool serves_key(const bk_sbbf *filter, size_t len)
{
    return filter->xxh64_on_avx2 && (len == 8 || len == 16);
}

bool bk_sbbf_avx2_contains_u64(const void *object, uint64_t key)
{
    const bk_sbbf *filter = object;
    if (__builtin_expect(!filter->xxh64_on_avx2, 0))
        return bk_sbbf_contains_u64_portable(object, key);
    return test_unfinished(filter, bk_xxh64_unfinished_of_u64(key, filter->hasher.seed));
}

bool bk_sbbf_avx2_contains_key(const void *object, const void *key, size_t len)
{
    const bk_sbbf *filter = object;
    if (__builtin_expect(!serves_key(filter, len), 0))
        return bk_sbbf_contains_key_portable(object, key, len);
    return test_unfinished(filter, unfinished_of_key(filter, key, len));
}

bk_status bk_sbbf_avx2_add_u64(void *object, uint64_t key, bool *was_new)
{
    bk_sbbf *filter = object;
    if (__builtin_expect(!filter->xxh64_on_avx2 || filter->borrowed, 0))
        return bk_sbbf_add_u64_portable(object, key, was_new);
    bool fresh = add_unfinished(filter, bk_xxh64_unfinished_of_u64(key, filter->hasher.seed));
    if (was_new != NULL)
        *was_new = fresh;
    return BK_OK;
}

bk_status bk_sbbf_avx2_add_key(void *object, const void *key, size_t len, bool *was_new)
{
    bk_sbbf *filter = object;
    if (__builtin_expect(!serves_key(filter, len) || filter->borrowed, 0))
        return bk_sbbf_add_key_portable(object, key, len, was_new);
    bool fresh = add_unfinished(filter, unfinished_of_key(filter, key, len));
    if (was_new != NULL)
        *was_new = fresh;
    return BK_OK;
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
