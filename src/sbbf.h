/*
 * src/sbbf.h -- the Parquet split-block filter's structure and probe
 * arithmetic, shared by the portable path (sbbf.c) and the AVX2 path
 * (sbbf_avx2.c).
 */
#ifndef BK_SRC_SBBF_H
#define BK_SRC_SBBF_H

#include "bloomkit/sbbf.h"
#include "bloomkit/sbbf_inline.h" /* block, masks, salts, the one-key test */
#include "hash.h"
#include "prefetch.h"

#define BK_SBBF_WORD_BITS 32u

/* The kind's object, reached through a handle with
 * bk_filter_object_of(filter, BK_KIND_SBBF). */
typedef struct bk_sbbf bk_sbbf;
struct bk_sbbf {
    uint32_t *words;      /* block_count * 8 words, host order, 64-byte aligned */
    uint64_t block_count; /* 1 .. 2^32 */
    uint64_t capacity;
    double target_fpr;
    uint64_t keys_added;
    bk_hasher hasher;
    unsigned flags;
    bool borrowed; /* words belong to a mapped file: read-only */
    bool use_avx2;
    /* The one-key calls' straight run applies: XXH64 on the AVX2 path
     * (bk_sbbf_uses_simd), kept in step with both by src/sbbf.c. */
    bool xxh64_on_avx2;
};

/* Block index of the spec: ((hash >> 32) * z) >> 32, z <= 2^32 blocks. */
static inline uint32_t *bk_sbbf_block(const bk_sbbf *filter, uint64_t hash)
{
    return (uint32_t *)bk_sbbf_block_of(filter->words, filter->block_count, hash);
}

bool bk_sbbf_avx2_set(uint32_t *block, uint32_t key);
bool bk_sbbf_avx2_test(const uint32_t *block, uint32_t key);

/*
 * The one-key operations of the kind's table (src/filter.h: add_key,
 * contains_key, add_u64, contains_u64).  In a build with the AVX2 source
 * the table holds src/sbbf_avx2.c's, which serve a filter with
 * xxh64_on_avx2 (and keys of 8 or 16 bytes) in one straight run each --
 * the hash (XXH64 written out, its h2 never computed), the block, the
 * mask, the test or the OR and the count -- one indirect call from the
 * handle, and pass the others to these portable ones (src/sbbf.c).
 */
bk_status bk_sbbf_add_key_portable(void *filter, const void *key, size_t len, bool *was_new);
bool bk_sbbf_contains_key_portable(const void *filter, const void *key, size_t len);
bk_status bk_sbbf_add_u64_portable(void *filter, uint64_t key, bool *was_new);
bool bk_sbbf_contains_u64_portable(const void *filter, uint64_t key);
bk_status bk_sbbf_avx2_add_key(void *filter, const void *key, size_t len, bool *was_new);
bool bk_sbbf_avx2_contains_key(const void *filter, const void *key, size_t len);
bk_status bk_sbbf_avx2_add_u64(void *filter, uint64_t key, bool *was_new);
bool bk_sbbf_avx2_contains_u64(const void *filter, uint64_t key);
size_t bk_sbbf_avx2_add_batch(bk_sbbf *filter, const bk_hash *hashes, size_t count);
/* Each block is requested BK_LINE_RING_SIZE keys ahead (src/prefetch.h). */
size_t bk_sbbf_avx2_test_batch(const bk_sbbf *filter, const bk_hash *hashes, size_t count,
                               bool *results);

/* Path selection for tests and benchmarks: BK_EUNSUPPORTED (nothing
 * changes) for AVX2 on a machine or build without it. */
bk_status bk_sbbf_set_simd(bk_sbbf *filter, bool use_avx2);
static inline bool bk_sbbf_uses_simd(const bk_sbbf *filter)
{
    return filter->use_avx2 && !(filter->flags & BK_FLAG_CONCURRENT);
}

/* As blocked's (src/blocked.h): queries use src/prefetch.h's ring,
 * D = 64; adds prefetch 32 keys ahead. */
#define BK_SBBF_ADD_PREFETCH_DISTANCE 32u

/* A key's block, for the query batches' ring (src/prefetch.h). */
static inline const void *bk_sbbf_line_of(const void *filter, const bk_hash *hash)
{
    return bk_sbbf_block(filter, hash->h1);
}

#endif
