/*
 * src/blocked.h -- the cache-line blocked filter's structure and what its
 * probe paths share: the portable path (blocked.c), the AVX2 path
 * (blocked_avx2.c) and the AVX-512 path (blocked_avx512.c), which depend
 * on this header alone.  The block arithmetic and the block tests are in
 * bloomkit/detail/blocked_detail.h, which the inline view shares.
 * Callers outside the library use a bk_filter handle of kind
 * BK_KIND_BLOCKED.
 */
#ifndef BK_SRC_BLOCKED_H
#define BK_SRC_BLOCKED_H

#include "bloomkit/blocked.h"
#include "bloomkit/blocked_inline.h"
#include "hash.h"
#include "prefetch.h"

struct bk_blocked;

/*
 * One probe path's functions: the portable one (blocked.c), the AVX2 one
 * (blocked_avx2.c) or the AVX-512 one (blocked_avx512.c), same bits and
 * answers.  A filter holds a copy of its path's table and calls through
 * it, so no call re-decides the path:
 *   set_bits:      ORs the key's bits into its block; whether any flipped;
 *   add_key:       the one-key add from key bytes: the hash (inline), then
 *                  set_bits' work, the key counted into keys_added if new;
 *                  whether it was (one call for bk_filter_add);
 *   contains_hash, contains_key: the one-key queries;
 *   contains_u64, add_u64: the integer-key query and add (the key's 8
 *                  little-endian bytes), as contains_key and add_key;
 *   add_batch:     set_bits for each hash (blocks prefetched ahead),
 *                  counting the new keys into keys_added; returns them;
 *   test_batch:    contains_hash for each hash (src/prefetch.h's ring):
 *                  results[i] (if results is not NULL); returns the
 *                  positives.
 */
typedef struct bk_blocked_path {
    bool (*set_bits)(struct bk_blocked *filter, bk_hash hash);
    bool (*add_key)(struct bk_blocked *filter, const void *key, size_t len);
    bool (*contains_hash)(const struct bk_blocked *filter, bk_hash hash);
    bool (*contains_key)(const struct bk_blocked *filter, const void *key, size_t len);
    bool (*contains_u64)(const struct bk_blocked *filter, uint64_t key);
    bool (*add_u64)(struct bk_blocked *filter, uint64_t key);
    size_t (*add_batch)(struct bk_blocked *filter, const bk_hash *hashes, size_t count);
    size_t (*test_batch)(const struct bk_blocked *filter, const bk_hash *hashes, size_t count,
                         bool *results);
} bk_blocked_path;

typedef struct bk_blocked bk_blocked;

/* Which integer-key query a SIMD path makes (set when the filter is made). */
typedef enum {
    BK_BLOCKED_U64_OTHER,       /* the hash, then contains_hash */
    BK_BLOCKED_U64_MIX64_ROUND, /* MIX64, one round */
    BK_BLOCKED_U64_XXH3_ROUND,  /* XXH3 (h2 finished in the vector unit), one round */
} bk_blocked_u64_query;

struct bk_blocked {
    uint64_t *words; /* block_count * 8 words, 64-byte aligned */
    uint64_t block_count;
    unsigned hashes;   /* k */
    uint64_t capacity; /* design n */
    double target_fpr; /* predicted FPR at capacity */
    uint64_t keys_added;
    bk_hasher hasher;
    unsigned flags;       /* BK_FLAG_* */
    bool borrowed;        /* words belong to a mapped file: read-only */
    bk_blocked_path path; /* the functions of the path the filter takes */
    /* For k <= 7, the slice shifts of the query's one round
     * (bk_blocked_round_shifts: 9 j in lane j < k, 0 elsewhere), which the
     * SIMD one-key queries load rather than build on every call. */
    uint64_t round_shifts[BK_BLOCKED_BLOCK_WORDS];
    /* k <= 7 and the hash MIX64 or XXH3: the SIMD integer-key queries
     * are one straight run (one test of this flag before it). */
    bk_blocked_u64_query u64_query;
};

/* The block of a hash (bloomkit/blocked_inline.h: multiply-shift of h1). */
static inline uint64_t *bk_blocked_block(const bk_blocked *filter, bk_hash hash)
{
    return (uint64_t *)bk_blocked_block_of(filter->words, filter->block_count, hash.h1);
}

/* Counts `fresh` new keys into the filter's keys_added (saturating) and
 * returns them: how every path's adds end. */
static BK_ALWAYS_INLINE size_t bk_blocked_count_new(bk_blocked *filter, size_t fresh)
{
    filter->keys_added = bk_saturating_add(filter->keys_added, fresh);
    return fresh;
}

/* The one-key query from key bytes of the keys the SIMD paths' own does
 * not serve (a hash other than XXH3, a length other than 8 or 16), and the
 * portable path's: the hash, then the path's contains_hash.  Not inlined:
 * a call, so that the SIMD query needs no stack frame. */
static BK_NOINLINE __attribute__((unused)) bool
bk_blocked_contains_other_key(const bk_blocked *filter, const void *key, size_t len)
{
    return filter->path.contains_hash(filter, bk_hash_inline(&filter->hasher, key, len));
}

/* bk_hash_u64 out of line (src/blocked.c), for the algorithms the
 * integer-key paths do not inline: a call, so that theirs need no stack
 * frame. */
bk_hash bk_blocked_hash_u64_called(const bk_hasher *hasher, uint64_t key);

/* The integer-key query of the keys a SIMD path's own does not serve, and
 * the portable path's: the hash, then the path's contains_hash. */
static BK_NOINLINE __attribute__((unused)) bool
bk_blocked_contains_other_u64(const bk_blocked *filter, uint64_t key)
{
    return filter->path.contains_hash(filter, bk_blocked_hash_u64_called(&filter->hasher, key));
}

/* bk_hash_u64(hasher, key): MIX64 (the integer-key hash) and XXH3 (the
 * default) inline, the others called. */
static BK_ALWAYS_INLINE bk_hash bk_blocked_hash_u64(const bk_hasher *hasher, uint64_t key)
{
    if (__builtin_expect(hasher->algorithm == BK_HASH_MIX64, 1))
        return bk_mix64_of_u64(key, hasher->seed);
    if (hasher->algorithm == BK_HASH_XXH3)
        return bk_xxh3_128_of_u64(key, hasher->seed);
    return bk_blocked_hash_u64_called(hasher, key);
}

/* Whether a SIMD path's one-key query from key bytes serves this key
 * itself: the default hash (XXH3), an 8- or 16-byte key and k <= 7 (one
 * round), for bloomkit/blocked_inline.h's bk_blocked_one_round_test_key_*;
 * the others go to bk_blocked_contains_other_key.  Hashing, then calling
 * the path's contains_hash through its pointer: slower. */
static inline bool bk_blocked_simd_serves_key(const bk_blocked *filter, size_t len)
{
    return filter->hasher.algorithm == BK_HASH_XXH3 && (len == 8 || len == 16) &&
           filter->hashes <= BK_BLOCKED_POSITIONS_PER_WORD;
}

/* The AVX2 and AVX-512 paths (x86-64 builds only). */
extern const bk_blocked_path bk_blocked_avx2_path;
extern const bk_blocked_path bk_blocked_avx512_path;

/* Row p is the block with only bit p set: a key's mask is the OR of its k
 * rows (the AVX2 and AVX-512 paths; 32 KiB, 64-byte aligned rows;
 * src/blocked_one_hot.c). */
extern const uint64_t bk_blocked_one_hot[BK_BLOCKED_BLOCK_BITS][BK_BLOCKED_BLOCK_WORDS];

/* The paths, for tests: bk_blocked_set_path puts the filter on one
 * (BK_EUNSUPPORTED when the CPU, BLOOMKIT_PORTABLE or BLOOMKIT_NO_AVX512
 * rules it out; a BK_FLAG_CONCURRENT filter stays portable); filters start
 * on the best path available.  bk_blocked_uses_simd: whether the filter is
 * on the AVX2 or AVX-512 path. */
typedef enum { BK_BLOCKED_PORTABLE, BK_BLOCKED_AVX2, BK_BLOCKED_AVX512 } bk_blocked_path_id;
bk_status bk_blocked_set_path(bk_blocked *filter, bk_blocked_path_id path);
bool bk_blocked_uses_simd(const bk_blocked *filter);

/* A key's block, for the query batches' ring of src/prefetch.h: the
 * block's address is computed once per key, not twice. */
static inline const void *bk_blocked_line_of(const void *filter, const bk_hash *hash)
{
    return bk_blocked_block(filter, *hash);
}

#endif
