/*
 * src/blocked_avx2.c -- the blocked filter's AVX2 path (compiled with
 * -mavx2; called only when bk_cpu()->avx2, see src/blocked.c).
 *
 * A block is one 512-bit cache line, held in two 256-bit registers of four
 * 64-bit lanes each: lanes 0-3 are words 0-3 (bits 0-255), lanes 4-7 words
 * 4-7.  A key's mask is the OR of k rows of a constant table (src/blocked.c),
 *
 *     bk_blocked_one_hot[p] = the block with only bit p set    (p in [0, 512))
 *
 * 512 rows of 64 bytes (32 KiB), so each position costs two loads and two
 * ORs; the positions themselves are the successive 9-bit slices of h2
 * (bloomkit/blocked_inline.h).
 *
 *     set:   block |= mask                     (two loads, ORs, stores)
 *     test:  (mask & ~block) == 0              (VPTEST's carry flag)
 *
 * The table replaced a computed mask (per position a broadcast, two
 * subtractions, two VPSLLVQ whose counts of 64 or more give 0, two ORs:
 * seven vector operations against two).  Measured on the Xeon of
 * docs/PERFORMANCE.md, k = 6, best of three runs: inserts from hashes
 * 6.7 -> 5.1 ns per key at 1e5 keys and 9.3 -> 8.0 ns at 1e7, from keys
 * 11.3 -> 10.4 ns at 1e7; AVX2 query batches (BLOOMKIT_NO_AVX512=1) of
 * hashes at 1e5 keys 6.1 -> 4.5 ns.  The table's rows compete with the
 * filter's lines for L1 (48 KiB here); at these sizes that costs less than
 * the arithmetic it saves.
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
 * batch loops below) get a straight run of instructions with no loop
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

static inline __attribute__((always_inline)) bool set_block(uint64_t *block, uint64_t h2, unsigned hashes)
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

static inline __attribute__((always_inline)) bool test_block(const uint64_t *block, uint64_t h2, unsigned hashes)
{
    block_mask mask = build_mask(h2, hashes);
    const __m256i *line = (const __m256i *)(const void *)block;
    return _mm256_testc_si256(_mm256_load_si256(line), mask.low) &
           _mm256_testc_si256(_mm256_load_si256(line + 1), mask.high);
}

/* Single keys: a switch on k reaches the same straight-line code (its jump
 * is predicted, k being fixed per filter). */
#define CASES(CALL)                                                                     \
    case 1: return CALL(1);   case 2: return CALL(2);   case 3: return CALL(3);         \
    case 4: return CALL(4);   case 5: return CALL(5);   case 6: return CALL(6);         \
    case 7: return CALL(7);   case 8: return CALL(8);   case 9: return CALL(9);         \
    case 10: return CALL(10); case 11: return CALL(11); case 12: return CALL(12);       \
    case 13: return CALL(13); case 14: return CALL(14); case 15: return CALL(15);       \
    case 16: return CALL(16)

bool bk_blocked_avx2_set(uint64_t *block, uint64_t h2, unsigned hashes)
{
#define SET(K) set_block(block, h2, K)
    switch (hashes) {
    CASES(SET);
    default: return set_block(block, h2, hashes);
    }
#undef SET
}

bool bk_blocked_avx2_test(const uint64_t *block, uint64_t h2, unsigned hashes)
{
#define TEST(K) test_block(block, h2, K)
    switch (hashes) {
    CASES(TEST);
    default: return test_block(block, h2, hashes);
    }
#undef TEST
}

/*
 * The batch loops, specialised for each k up to 16 (a switch outside the
 * loop picks one) so that the mask is built by straight-line code.
 */
static inline __attribute__((always_inline)) size_t add_batch(bk_blocked *filter,
                                                              const bk_hash *hashes,
                                                              size_t count, unsigned k)
{
    size_t fresh = 0;
    for (size_t i = 0; i < count && i < BK_ADD_PREFETCH_DISTANCE; i++)
        __builtin_prefetch(bk_blocked_block(filter, hashes[i]), 1);
    for (size_t i = 0; i < count; i++) {
        if (i + BK_ADD_PREFETCH_DISTANCE < count)
            __builtin_prefetch(bk_blocked_block(filter, hashes[i + BK_ADD_PREFETCH_DISTANCE]), 1);
        fresh += set_block(bk_blocked_block(filter, hashes[i]), hashes[i].h2, k);
    }
    return fresh;
}

/* context: k, a constant in each specialised loop */
static inline __attribute__((always_inline)) bool probe(const void *k, const void *block,
                                                        const bk_hash *hash)
{
    return test_block(block, hash->h2, *(const unsigned *)k);
}

static inline __attribute__((always_inline)) size_t test_batch(const bk_blocked *filter,
                                                               const bk_hash *hashes,
                                                               size_t count, bool *results,
                                                               unsigned k)
{
    return bk_line_ring_probe(filter, hashes, count, results, bk_blocked_line_of, probe, &k);
}

#define SPECIALISE(K)                                                                   \
    static size_t add_batch_##K(bk_blocked *f, const bk_hash *h, size_t n)              \
    {                                                                                   \
        return add_batch(f, h, n, K);                                                   \
    }                                                                                   \
    static size_t test_batch_##K(const bk_blocked *f, const bk_hash *h, size_t n,       \
                                 bool *r)                                               \
    {                                                                                   \
        return test_batch(f, h, n, r, K);                                               \
    }
SPECIALISE(1) SPECIALISE(2) SPECIALISE(3) SPECIALISE(4) SPECIALISE(5) SPECIALISE(6)
SPECIALISE(7) SPECIALISE(8) SPECIALISE(9) SPECIALISE(10) SPECIALISE(11) SPECIALISE(12)
SPECIALISE(13) SPECIALISE(14) SPECIALISE(15) SPECIALISE(16)

typedef size_t (*add_batch_fn)(bk_blocked *, const bk_hash *, size_t);
typedef size_t (*test_batch_fn)(const bk_blocked *, const bk_hash *, size_t, bool *);

static const add_batch_fn add_batches[17] = {
    NULL, add_batch_1, add_batch_2, add_batch_3, add_batch_4, add_batch_5, add_batch_6,
    add_batch_7, add_batch_8, add_batch_9, add_batch_10, add_batch_11, add_batch_12,
    add_batch_13, add_batch_14, add_batch_15, add_batch_16,
};
static const test_batch_fn test_batches[17] = {
    NULL, test_batch_1, test_batch_2, test_batch_3, test_batch_4, test_batch_5, test_batch_6,
    test_batch_7, test_batch_8, test_batch_9, test_batch_10, test_batch_11, test_batch_12,
    test_batch_13, test_batch_14, test_batch_15, test_batch_16,
};

size_t bk_blocked_avx2_add_batch(bk_blocked *filter, const bk_hash *hashes, size_t count)
{
    unsigned k = filter->hashes;
    size_t fresh = k <= 16 ? add_batches[k](filter, hashes, count)
                           : add_batch(filter, hashes, count, k);
    filter->keys_added += fresh;
    return fresh;
}

size_t bk_blocked_avx2_test_batch(const bk_blocked *filter, const bk_hash *hashes, size_t count,
                                  bool *results)
{
    unsigned k = filter->hashes;
    return k <= 16 ? test_batches[k](filter, hashes, count, results)
                   : test_batch(filter, hashes, count, results, k);
}

#endif /* __AVX2__ */
