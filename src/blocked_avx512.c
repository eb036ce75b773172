/*
 * src/blocked_avx512.c -- the blocked filter's AVX-512 query path (compiled
 * with -mavx512f -mavx512dq; called only when bk_cpu()->avx512dqbw, see
 * src/blocked.c).
 *
 * A query needs k bits of one 512-bit block.  The AVX2 path builds the
 * block's whole 512-bit mask, position by position.  With AVX-512 the
 * block fits one register, and a query looks up seven positions at once
 * with a permute from the register: bk_blocked_block_test_avx512 in
 * bloomkit/blocked_inline.h, which the inline view compiles too, has the
 * idea.  This file runs it over batches.
 *
 * Inserts need the OR of all positions that fall in each word: the key's
 * whole 512-bit mask, here the OR of its k rows of bk_blocked_one_hot
 * (src/blocked.c), one 64-byte load and OR per position, then one OR into
 * the line.  A mask computed in registers (each position broadcast to the
 * eight word lanes and shifted by p - 64 w): no faster than the table.
 *
 * The batch loop is about 45 instructions per key against 68 for AVX2
 * (counted in the disassembly: valgrind cannot run AVX-512).  Answers are
 * those of the portable path (tests/test_blocked.c checks all three).
 */
#include "blocked.h"

#if defined(__AVX512F__)
#include <immintrin.h>

/* The key's 512-bit mask: the OR of its k rows of bk_blocked_one_hot, one
 * load-and-OR per position, over the positions' walk (bloomkit/blocked_inline.h). */
static inline __attribute__((always_inline)) __m512i key_mask(uint64_t h2, unsigned hashes)
{
    __m512i mask = _mm512_setzero_si512();
    bk_blocked_walk walk = bk_blocked_walk_start(h2);
    for (unsigned i = 0; i < hashes; i++) {
        const void *row = bk_blocked_one_hot[bk_blocked_walk_next(&walk)];
        mask = _mm512_or_si512(mask, _mm512_load_si512(row));
    }
    return mask;
}

/* ORs the key's mask into the block; whether a bit flipped. */
static inline __attribute__((always_inline)) bool set_block(uint64_t *block, uint64_t h2,
                                                            unsigned hashes)
{
    __m512i mask = key_mask(h2, hashes);
    __m512i line = _mm512_load_si512((const void *)block);
    __mmask8 flipped = _mm512_test_epi64_mask(_mm512_andnot_si512(line, mask), mask);
    _mm512_store_si512((void *)block, _mm512_or_si512(line, mask));
    return flipped != 0;
}

/* The k of the designs up to 20 bits per key (3 to 11) get code with a
 * constant k, so the mask is built in straight-line code; others take the
 * general loop. */
#define FOR_COMMON_K(X) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

static inline __attribute__((always_inline)) bool set_bits(bk_blocked *filter, bk_hash hash)
{
    uint64_t *block = bk_blocked_block(filter, hash);
    switch (filter->hashes) {
#define SET_CONSTANT_K(K) \
    case K: return set_block(block, hash.h2, K);
        FOR_COMMON_K(SET_CONSTANT_K)
#undef SET_CONSTANT_K
    default: return set_block(block, hash.h2, filter->hashes);
    }
}

static bool path_set_bits(bk_blocked *filter, bk_hash hash) { return set_bits(filter, hash); }

/* The one-key add: the hash and path_set_bits' switch inline, the key
 * counted without a branch on whether it was new. */
static bool path_add_key(bk_blocked *filter, const void *key, size_t len)
{
    return bk_blocked_count_new(filter,
                                set_bits(filter, bk_hash_inline(&filter->hasher, key, len)));
}

/* The integer-key add: the hash (MIX64 and XXH3 inline), the mask, the
 * key counted without a branch. */
static bool path_add_u64(bk_blocked *filter, uint64_t key)
{
    return bk_blocked_count_new(filter,
                                set_bits(filter, bk_blocked_hash_u64(&filter->hasher, key)));
}

static inline __attribute__((always_inline)) size_t
add_batch(bk_blocked *filter, const bk_hash *hashes, size_t count, unsigned k)
{
    size_t fresh = 0;
    for (size_t i = 0; i < count && i < BK_ADD_PREFETCH_DISTANCE; i++)
        __builtin_prefetch(bk_blocked_block(filter, hashes[i]), 1);
    for (size_t i = 0; i < count; i++) {
        if (i + BK_ADD_PREFETCH_DISTANCE < count)
            __builtin_prefetch(bk_blocked_block(filter, hashes[i + BK_ADD_PREFETCH_DISTANCE]),
                               1);
        fresh += set_block(bk_blocked_block(filter, hashes[i]), hashes[i].h2, k);
    }
    return fresh;
}

static size_t path_add_batch(bk_blocked *filter, const bk_hash *hashes, size_t count)
{
    size_t fresh;
    switch (filter->hashes) {
#define ADD_CONSTANT_K(K) \
    case K: fresh = add_batch(filter, hashes, count, K); break;
        FOR_COMMON_K(ADD_CONSTANT_K)
#undef ADD_CONSTANT_K
    default: fresh = add_batch(filter, hashes, count, filter->hashes);
    }
    return bk_blocked_count_new(filter, fresh);
}

/* The slice shifts of the one round (k <= 7) that the filter keeps.  The
 * one-key calls are bound by their instructions: far above the caches
 * each query waits for its line, and how many queries overlap that wait
 * depends on how many fit in the core's reorder window.  Loading the
 * shifts saves building them (a KMOVW, a masked move, a broadcast and an
 * add) on every call. */
static inline __attribute__((always_inline)) __m512i kept_round_shifts(const bk_blocked *filter)
{
    return _mm512_loadu_si512((const void *)filter->round_shifts);
}

/* The test of a key's block: one round for k <= 7, the rounds' loop
 * otherwise. */
static bool path_contains_hash(const bk_blocked *filter, bk_hash hash)
{
    const uint64_t *block = bk_blocked_block(filter, hash);
    if (__builtin_expect(filter->hashes > BK_BLOCKED_POSITIONS_PER_WORD, 0))
        return bk_blocked_block_test_avx512(block, hash.h2, filter->hashes);
    return bk_blocked_round_test(_mm512_load_si512((const void *)block), hash.h2,
                                 kept_round_shifts(filter));
}

/* The integer-key query, one straight run for k <= 7 with MIX64 (the
 * hash, the line, one round) or XXH3 (h2's last step in the vector unit,
 * as the view's); the other filters through bk_blocked_contains_other_u64. */
static inline __attribute__((always_inline)) bool contains_u64(const bk_blocked *filter,
                                                               uint64_t key)
{
    if (__builtin_expect(filter->u64_query == BK_BLOCKED_U64_MIX64_ROUND, 1)) {
        const bk_hash hash = bk_mix64_of_u64(key, filter->hasher.seed);
        return bk_blocked_round_test(
            _mm512_load_si512((const void *)bk_blocked_block(filter, hash)), hash.h2,
            kept_round_shifts(filter));
    }
    if (filter->u64_query == BK_BLOCKED_U64_XXH3_ROUND)
        return bk_blocked_one_round_test_unfinished_avx512(
            filter->words, filter->block_count, kept_round_shifts(filter),
            bk_xxh3_128_of_u64_unfinished(key, filter->hasher.seed));
    return bk_blocked_contains_other_u64(filter, key);
}

static bool path_contains_u64(const bk_blocked *filter, uint64_t key)
{
    return contains_u64(filter, key);
}

/* The one-key query of the generic handle: an 8-byte key as the integer
 * it holds; a 16-byte one the view's way (h2's last step in the vector
 * unit) where bk_blocked_simd_serves_key. */
static bool path_contains_key(const bk_blocked *filter, const void *key, size_t len)
{
    if (len == 8)
        return contains_u64(filter, bk_xxh64_read(key));
    if (!bk_blocked_simd_serves_key(filter, len))
        return bk_blocked_contains_other_key(filter, key, len);
    return bk_blocked_one_round_test_key_avx512(filter->words, filter->block_count,
                                                kept_round_shifts(filter), key, len,
                                                filter->hasher.seed);
}

/* The batch probes.  k <= 7 (context: the round's slice shifts) is one
 * round, in a loop without the rounds' bookkeeping; larger k (context: k)
 * loops over rounds, its last round's shifts computed once per batch. */
static inline __attribute__((always_inline)) bool
probe_one_round(const void *slice_shifts, const void *block, const bk_hash *hash)
{
    return bk_blocked_round_test(_mm512_load_si512(block), hash->h2,
                                 _mm512_loadu_si512(slice_shifts));
}

static inline __attribute__((always_inline)) bool probe_rounds(const void *k, const void *block,
                                                               const bk_hash *hash)
{
    return bk_blocked_block_test_avx512(block, hash->h2, *(const unsigned *)k);
}

static size_t path_test_batch(const bk_blocked *filter, const bk_hash *hashes, size_t count,
                              bool *results)
{
    const unsigned k = filter->hashes;
    if (k <= BK_BLOCKED_POSITIONS_PER_WORD) {
        const __m512i slice_shifts = bk_blocked_round_shifts(k);
        return bk_line_ring_probe(filter, hashes, count, results, bk_blocked_line_of,
                                  probe_one_round, &slice_shifts);
    }
    return bk_line_ring_probe(filter, hashes, count, results, bk_blocked_line_of, probe_rounds,
                              &k);
}

const bk_blocked_path bk_blocked_avx512_path = {
    .set_bits = path_set_bits,
    .add_key = path_add_key,
    .contains_hash = path_contains_hash,
    .contains_key = path_contains_key,
    .contains_u64 = path_contains_u64,
    .add_u64 = path_add_u64,
    .add_batch = path_add_batch,
    .test_batch = path_test_batch,
};

#endif /* __AVX512F__ */
