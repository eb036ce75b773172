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
};

/* Block index of the spec: ((hash >> 32) * z) >> 32, z <= 2^32 blocks. */
static inline uint32_t *bk_sbbf_block(const bk_sbbf *filter, uint64_t hash)
{
    return (uint32_t *)bk_sbbf_block_of(filter->words, filter->block_count, hash);
}

bool bk_sbbf_avx2_set(uint32_t *block, uint32_t key);
/* The one-key add of an XXH64 filter on the AVX2 path, hash to count in
 * one function (fewer calls than hashing, then bk_sbbf_avx2_set): whether
 * the key was new, counted in keys_added. */
bool bk_sbbf_avx2_add_key(bk_sbbf *filter, const void *key, size_t len);
/* The one-key query of an XXH64 filter on the AVX2 path, likewise. */
bool bk_sbbf_avx2_contains_key(const bk_sbbf *filter, const void *key, size_t len);
bool bk_sbbf_avx2_test(const uint32_t *block, uint32_t key);
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
