/*
 * src/blocked_avx2.c -- the blocked filter's AVX2 path (compiled with
 * -mavx2; called only when bk_cpu()->avx2, see src/blocked.c).
 *
 * Queries take the AVX2 round of bloomkit/blocked_inline.h: the line in two
 * registers of eight 32-bit words, the words of seven positions picked
 * with VPERMD, one VPTEST (the header has the layout and the figures).
 *
 * Inserts need the OR of all positions that fall in each word: the key's
 * whole 512-bit mask, the OR of k rows of a constant table (src/blocked.c),
 *
 *     bk_blocked_one_hot[p] = the block with only bit p set    (p in [0, 512))
 *
 * 512 rows of 64 bytes (32 KiB), so each position costs two loads and two
 * ORs; the positions are the successive 9-bit slices of h2 (the walk of
 * bloomkit/blocked_inline.h).  Then block |= mask, two loads, ORs and
 * stores, and the key was new if (mask & ~block) != 0 (VPTEST's carry).
 *
 * The table replaced a computed mask (per position a broadcast, two
 * subtractions, two VPSLLVQ whose counts of 64 or more give 0, two ORs:
 * seven vector operations against two).  The table's rows compete with
 * the filter's lines for L1; that costs less than the arithmetic it saves
 * (docs/PERFORMANCE.md).
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

/* Always inlined, so that callers passing a constant k (the specialised
 * add loops below) get a straight run of instructions with no loop
 * bookkeeping. */
static inline __attribute__((always_inline)) block_mask build_mask(uint64_t h2, unsigned hashes)
{
    block_mask mask = { _mm256_setzero_si256(), _mm256_setzero_si256() };
    bk_blocked_walk walk = bk_blocked_walk_start(h2);
    for (unsigned i = 0; i < hashes; i++) {
        const void *one_hot = bk_blocked_one_hot[bk_blocked_walk_next(&walk)];
        const __m256i *row = (const __m256i *)one_hot;
        mask.low = _mm256_or_si256(mask.low, _mm256_load_si256(row));
        mask.high = _mm256_or_si256(mask.high, _mm256_load_si256(row + 1));
    }
    return mask;
}

static inline __attribute__((always_inline)) bool set_block(uint64_t *block, uint64_t h2,
                                                            unsigned hashes)
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

/* Single keys: a switch on k reaches the same straight-line code (its jump
 * is predicted, k being fixed per filter). */
#define CASES(CALL)           \
    case 1: return CALL(1);   \
    case 2: return CALL(2);   \
    case 3: return CALL(3);   \
    case 4: return CALL(4);   \
    case 5: return CALL(5);   \
    case 6: return CALL(6);   \
    case 7: return CALL(7);   \
    case 8: return CALL(8);   \
    case 9: return CALL(9);   \
    case 10: return CALL(10); \
    case 11: return CALL(11); \
    case 12: return CALL(12); \
    case 13: return CALL(13); \
    case 14: return CALL(14); \
    case 15: return CALL(15); \
    case 16: return CALL(16)

static inline __attribute__((always_inline)) bool set_bits(bk_blocked *filter, bk_hash hash)
{
    uint64_t *block = bk_blocked_block(filter, hash);
#define SET(K) set_block(block, hash.h2, K)
    switch (filter->hashes) {
        CASES(SET);
    default: return set_block(block, hash.h2, filter->hashes);
    }
#undef SET
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

/* Queries: bloomkit/blocked_inline.h's AVX2 test, eight positions' words
 * picked from the line with VPERMD; for k <= 7 its one round, with the
 * slice shifts the filter keeps (the first four lanes, then the rest). */
static inline __attribute__((always_inline)) bk_blocked_round_shifts_avx2
kept_round_shifts(const bk_blocked *filter)
{
    const bk_blocked_round_shifts_avx2 shifts = {
        _mm256_loadu_si256((const __m256i *)(const void *)filter->round_shifts),
        _mm256_loadu_si256((const __m256i *)(const void *)(filter->round_shifts + 4)),
    };
    return shifts;
}

static bool path_contains_hash(const bk_blocked *filter, bk_hash hash)
{
    const uint64_t *block = bk_blocked_block(filter, hash);
    if (__builtin_expect(filter->hashes > BK_BLOCKED_POSITIONS_PER_WORD, 0))
        return bk_blocked_block_test_avx2(block, hash.h2, filter->hashes);
    return bk_blocked_line_round_test_avx2(block, hash.h2, kept_round_shifts(filter));
}

/* The integer-key query, as the AVX-512 path's: one straight run for
 * k <= 7 with MIX64 or XXH3, the others through
 * bk_blocked_contains_other_u64. */
static inline __attribute__((always_inline)) bool contains_u64(const bk_blocked *filter,
                                                               uint64_t key)
{
    if (__builtin_expect(filter->u64_query == BK_BLOCKED_U64_MIX64_ROUND, 1)) {
        const bk_hash hash = bk_mix64_of_u64(key, filter->hasher.seed);
        return bk_blocked_line_round_test_avx2(bk_blocked_block(filter, hash), hash.h2,
                                               kept_round_shifts(filter));
    }
    if (filter->u64_query == BK_BLOCKED_U64_XXH3_ROUND)
        return bk_blocked_one_round_test_unfinished_avx2(
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
    return bk_blocked_one_round_test_key_avx2(filter->words, filter->block_count,
                                              kept_round_shifts(filter), key, len,
                                              filter->hasher.seed);
}

/*
 * The add loops, specialised for each k up to 16 (a switch outside the
 * loop picks one) so that the mask is built by straight-line code.
 */
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

#define SPECIALISE(K)                                                      \
    static size_t add_batch_##K(bk_blocked *f, const bk_hash *h, size_t n) \
    {                                                                      \
        return add_batch(f, h, n, K);                                      \
    }
/* One specialisation per k (a list, not an expression: not for clang-format). */
/* clang-format off */
SPECIALISE(1) SPECIALISE(2) SPECIALISE(3) SPECIALISE(4) SPECIALISE(5) SPECIALISE(6)
SPECIALISE(7) SPECIALISE(8) SPECIALISE(9) SPECIALISE(10) SPECIALISE(11) SPECIALISE(12)
SPECIALISE(13) SPECIALISE(14) SPECIALISE(15) SPECIALISE(16)

typedef size_t (*add_batch_fn)(bk_blocked *, const bk_hash *, size_t);
/* clang-format on */

static const add_batch_fn add_batches[17] = {
    NULL,         add_batch_1,  add_batch_2,  add_batch_3,  add_batch_4,  add_batch_5,
    add_batch_6,  add_batch_7,  add_batch_8,  add_batch_9,  add_batch_10, add_batch_11,
    add_batch_12, add_batch_13, add_batch_14, add_batch_15, add_batch_16,
};

static size_t path_add_batch(bk_blocked *filter, const bk_hash *hashes, size_t count)
{
    unsigned k = filter->hashes;
    size_t fresh = k <= 16 ? add_batches[k](filter, hashes, count)
                           : add_batch(filter, hashes, count, k);
    return bk_blocked_count_new(filter, fresh);
}

/* The query batch: k <= 7 (context: the round's slice shifts) is one
 * round; larger k (context: k) loops over rounds. */
static inline __attribute__((always_inline)) bool
probe_one_round(const void *shifts, const void *block, const bk_hash *hash)
{
    const __m256i *line = block;
    return bk_blocked_round_test_avx2(_mm256_load_si256(line), _mm256_load_si256(line + 1),
                                      hash->h2, *(const bk_blocked_round_shifts_avx2 *)shifts);
}

static inline __attribute__((always_inline)) bool probe_rounds(const void *k, const void *block,
                                                               const bk_hash *hash)
{
    return bk_blocked_block_test_avx2(block, hash->h2, *(const unsigned *)k);
}

static size_t path_test_batch(const bk_blocked *filter, const bk_hash *hashes, size_t count,
                              bool *results)
{
    const unsigned k = filter->hashes;
    if (k <= BK_BLOCKED_POSITIONS_PER_WORD) {
        const bk_blocked_round_shifts_avx2 shifts = bk_blocked_round_shifts_for_avx2(k);
        return bk_line_ring_probe(filter, hashes, count, results, bk_blocked_line_of,
                                  probe_one_round, &shifts);
    }
    return bk_line_ring_probe(filter, hashes, count, results, bk_blocked_line_of, probe_rounds,
                              &k);
}

const bk_blocked_path bk_blocked_avx2_path = {
    .set_bits = path_set_bits,
    .add_key = path_add_key,
    .contains_hash = path_contains_hash,
    .contains_key = path_contains_key,
    .contains_u64 = path_contains_u64,
    .add_u64 = path_add_u64,
    .add_batch = path_add_batch,
    .test_batch = path_test_batch,
};

#endif /* __AVX2__ */
