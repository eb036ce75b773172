/*
 * src/blocked.h -- the cache-line blocked filter's structure, shared by
 * the portable path (blocked.c), the AVX2 path (blocked_avx2.c) and the
 * AVX-512 path (blocked_avx512.c).  The block arithmetic and the block
 * test are in bloomkit/blocked_inline.h, which the inline view shares.
 * Callers outside the library use the opaque bk_blocked of
 * bloomkit/blocked.h.
 */
#ifndef BK_SRC_BLOCKED_H
#define BK_SRC_BLOCKED_H

#include "bloomkit/blocked.h"
#include "bloomkit/blocked_inline.h"
#include "hash.h"
#include "prefetch.h"

struct bk_blocked {
    uint64_t *words;      /* block_count * 8 words, 64-byte aligned */
    uint64_t block_count;
    unsigned hashes;      /* k */
    uint64_t capacity;    /* design n */
    double target_fpr;    /* predicted FPR at capacity */
    uint64_t keys_added;
    bk_hasher hasher;
    unsigned flags;       /* BK_FLAG_* */
    bool borrowed;        /* words belong to a mapped file: read-only */
    bool use_avx2;        /* probe with the AVX2 path (blocked_avx2.c) */
    bool use_avx512;      /* with use_avx2: queries take the AVX-512 path */
    /* The one-key functions of the chosen path (portable, AVX2 or
     * AVX-512), set whenever the three flags above change: the add (ORs
     * the key's bits into its block; whether any bit flipped) and the
     * queries from a hash and from key bytes. */
    bool (*set_bits)(struct bk_blocked *filter, bk_hash hash);
    bool (*contains_hash)(const struct bk_blocked *filter, bk_hash hash);
    bool (*contains_key)(const struct bk_blocked *filter, const void *key, size_t len);
    /* For k <= 7, the slice shifts of the query's one round
     * (bk_blocked_round_shifts: 9 j in lane j < k, 0 elsewhere), which the
     * SIMD one-key queries load rather than build on every call. */
    uint64_t round_shifts[BK_BLOCKED_BLOCK_WORDS];
};

/* The block of a hash (bloomkit/blocked_inline.h: multiply-shift of h1). */
static inline uint64_t *bk_blocked_block(const bk_blocked *filter, bk_hash hash)
{
    return (uint64_t *)bk_blocked_block_of(filter->words, filter->block_count, hash.h1);
}

/* The one-key query from key bytes of the keys the SIMD paths' own does
 * not serve (a hash other than XXH3, a length other than 8 or 16): the
 * hash, then the filter's contains_hash. */
bool bk_blocked_contains_other_key(const bk_blocked *filter, const void *key, size_t len);

/* Whether a SIMD path's one-key query from key bytes serves this key
 * itself: the default hash (XXH3), an 8- or 16-byte key and k <= 7 (one
 * round), for bloomkit/blocked_inline.h's bk_blocked_one_round_test_key_*;
 * the others go to bk_blocked_contains_other_key, a call, so that the SIMD
 * query needs no stack frame.  Hashing, then calling the path's
 * contains_hash through its pointer: slower. */
static inline bool bk_blocked_simd_serves_key(const bk_blocked *filter, size_t len)
{
    return filter->hasher.algorithm == BK_HASH_XXH3 && (len == 8 || len == 16) &&
           filter->hashes <= BK_BLOCKED_POSITIONS_PER_WORD;
}

/* The AVX2 path (blocked_avx2.c): same bits and answers as the portable one. */
bool bk_blocked_avx2_set_bits(bk_blocked *filter, bk_hash hash);
bool bk_blocked_avx2_contains_hash(const bk_blocked *filter, bk_hash hash);
bool bk_blocked_avx2_contains_key(const bk_blocked *filter, const void *key, size_t len);
size_t bk_blocked_avx2_add_batch(bk_blocked *filter, const bk_hash *hashes, size_t count);
/* Each block is requested BK_LINE_RING_SIZE keys ahead (src/prefetch.h). */
size_t bk_blocked_avx2_test_batch(const bk_blocked *filter, const bk_hash *hashes, size_t count,
                                  bool *results);

/* Row p is the block with only bit p set: a key's mask is the OR of its k
 * rows (the AVX2 and AVX-512 paths; 32 KiB, 64-byte aligned rows). */
extern const uint64_t bk_blocked_one_hot[BK_BLOCKED_BLOCK_BITS][BK_BLOCKED_BLOCK_WORDS];

/* The AVX-512 path (blocked_avx512.c): same bits and answers again. */
bool bk_blocked_avx512_set_bits(bk_blocked *filter, bk_hash hash);
size_t bk_blocked_avx512_add_batch(bk_blocked *filter, const bk_hash *hashes, size_t count);
bool bk_blocked_avx512_contains_hash(const bk_blocked *filter, bk_hash hash);
bool bk_blocked_avx512_contains_key(const bk_blocked *filter, const void *key, size_t len);
size_t bk_blocked_avx512_test_batch(const bk_blocked *filter, const bk_hash *hashes,
                                    size_t count, bool *results);

/* Which path a filter takes.  bk_blocked_set_simd(filter, true) fails with
 * BK_EUNSUPPORTED when the CPU (or BLOOMKIT_PORTABLE) rules AVX2 out.  For
 * tests and benchmarks; filters start on the best path available. */
bk_status bk_blocked_set_simd(bk_blocked *filter, bool use_avx2);
static inline bool bk_blocked_uses_simd(const bk_blocked *filter)
{
    return filter->use_avx2 && !(filter->flags & BK_FLAG_CONCURRENT);
}
/* Whether SIMD queries use AVX-512 (on by default where the CPU has
 * AVX-512 F, DQ and BW and BLOOMKIT_NO_AVX512 is unset); BK_EUNSUPPORTED to
 * turn it on without them. */
bk_status bk_blocked_set_avx512(bk_blocked *filter, bool use_avx512);

/* Prefetch distance of the batch loops, in keys: enough lines in flight to
 * cover a memory latency at a few ns of work per key (Little's law: lines
 * in flight = latency / time per line, about 40 on the hosts measured).
 * Queries use BK_LINE_RING_SIZE = 64 (src/prefetch.h), adds 32: 8 and 16
 * were slower, 64 no better. */
#define BK_ADD_PREFETCH_DISTANCE 32u

/* A key's block, for the query batches' ring of src/prefetch.h: the
 * block's address is computed once per key, not twice. */
static inline const void *bk_blocked_line_of(const void *filter, const bk_hash *hash)
{
    return bk_blocked_block(filter, *hash);
}

#endif
