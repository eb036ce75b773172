/*
 * src/blocked.c -- the cache-line blocked Bloom filter.
 *
 * The idea (Putze, Sanders & Singler, "Cache-, Hash- and Space-Efficient
 * Bloom Filters", WEA 2007, JEA 2009): a classic Bloom filter's k probes land
 * on k random cache lines, so a filter bigger than the caches pays up to k
 * cache misses per query.  Cut the bit array into blocks of one cache line
 * (512 bits) and put all k probes of a key into one block, chosen by the
 * hash: every query then costs one cache miss, and with a batch of keys
 * whose blocks are prefetched ahead, about one overlapped memory read.
 *
 * Memory layout: block_count blocks of 8 little-endian-numbered 64-bit
 * words, 64-byte aligned (so a block is exactly one cache line; filters of
 * 2 MiB or more come from mmap with a transparent-huge-page hint, which
 * keeps the TLB from becoming the second miss, src/memory.c):
 *
 *     words: [ w0 w1 w2 w3 w4 w5 w6 w7 ][ w8 ... w15 ] ... [ ... ]
 *            \_____ block 0 (64 B) ____/\__ block 1 _/      block B-1
 *     bit j of a block (0 <= j < 512): word j >> 6, bit j & 63
 *
 * Probes: the key is hashed once to (h1, h2) (src/hash.c).
 *     block       = bk_reduce(h1, block_count)   (multiply-shift, any count)
 *     position_i  = 9-bit slice i of h2, i < 7;  slices of bk_mix64(h2),
 *                   bk_mix64(bk_mix64(h2)), ... for k > 7
 *                   (the walk of bloomkit/blocked_inline.h)
 * The positions are independent and uniform on [0, 512) (with
 * replacement), exactly the model below.  Queries with AVX2 or AVX-512
 * look seven positions up at once in the line held in registers, the
 * words picked by a permute (bloomkit/blocked_inline.h, whose inline view
 * compiles the same tests into a caller's loop; batches in
 * src/blocked_avx2.c and src/blocked_avx512.c).  Inserts OR in the key's
 * 512-bit mask, built from k one-hot rows of a table (src/blocked_avx2.c,
 * src/blocked_avx512.c).  The portable path gives identical bits and
 * answers (tests/test_blocked.c checks all three); the path is chosen
 * once per filter (choose_path).
 *
 * Accuracy (src/sizing.c, bk_blocked_predicted_fpr): at c bits per key a
 * block receives Poisson(512/c) keys (Putze, Sanders & Singler 2007), and
 * a block holding i keys gives a false positive with probability
 * E[(X/512)^k], X the bits its k i probes set:
 *
 *     FPR = sum_i Pois(i; 512/c) E[(X_i/512)^k]
 *
 * The mean is computed exactly (two stable recursions, sizing.c);
 * the usual shortcut (1 - (1 - 1/512)^{k i})^k is a few percent optimistic
 * at k >= 8, which measurement shows.  Uneven block loads make a blocked
 * filter worse than the classic (1 - e^{-k/c})^k, and its best k is
 * lower: the FPR is flat near its minimum and we take the smallest k
 * within 1% of it (bk_blocked_best_hashes).  Sizing from a target FPR
 * searches the smallest c reaching it: 9.92 bits per key (k = 6) for 1%,
 * 15.55 (k = 9) for 0.1%, against 9.59 and 14.38 for a classic filter.
 *
 * Measured (examples/blocked_fpr_table.c: 1,000,000 8-byte keys, 10,000,000
 * absent keys per row, XXH3 seed 0; one binomial sigma is 0.3% of the
 * figure at 1%, 1.1% at 0.08%; all rows: docs/BLOCKED.md):
 *
 *     bits/key  k  measured FPR  predicted   classic Bloom (same c, k)
 *        6      4    5.754 %      5.774 %       5.605 %
 *        8      5    2.314 %      2.326 %       2.168 %
 *       10      6    0.9615 %     0.9663 %      0.8435 %
 *       10      7    0.9656 %     0.9684 %      0.8192 %
 *       12      7    0.4146 %     0.4145 %      0.3294 %
 *       16      9    0.0861 %     0.0844 %      0.0505 %
 *       20     11    0.0196 %     0.0198 %      0.0078 %
 *
 *   At 10 bits per key and k = 6 the measured 0.9615% is 0.8% above the
 *   0.954% usually quoted as the best a 512-bit cache-local filter can do
 *   (the target was 2%), and within noise of the exact model's 0.966%.
 *
 * Counting from the fill: with lambda keys per block the expected fill is
 * 1 - e^{-lambda (1 - (1 - 1/512)^k)}, inverted by bk_blocked_estimate_keys;
 * it is right on average but the fill of one filter varies with the block
 * loads, so the estimate is approximate.  Measured (seeds 1-3, a filter
 * for 1e6 keys at 1%, after 1e5, 5e5, 1e6 and 2e6 keys): within 0.05% of
 * the true count every time; the FPR estimated from it at capacity was
 * 0.999-1.001%.
 *
 * Concurrency (BK_FLAG_CONCURRENT): add ORs each non-zero word of the key's
 * mask with a relaxed atomic fetch-or; contains reads words with relaxed
 * atomic loads (plain moves on x86).  Both take the portable path, since a
 * 256-bit vector access is not one atomic operation.
 */
#include "blocked.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "endian.h"
#include "filter.h"
#include "memory.h"

#define KNOWN_FLAGS BK_FLAG_CONCURRENT

/* ------------------------------------------------------------------------ */
/* Design and creation                                                      */
/* ------------------------------------------------------------------------ */

typedef struct blocked_design {
    uint64_t block_count;
    unsigned hashes;
    uint64_t capacity;
    double predicted_fpr;
} blocked_design;

static const uint64_t MAX_BLOCKS = BK_MAX_BITS / BK_BLOCKED_BLOCK_BITS;

static bk_status design_from_bits(uint64_t capacity, double bits, unsigned hashes,
                                  blocked_design *out)
{
    if (hashes == 0)
        return BK_EINVAL;
    if (hashes > BK_MAX_HASHES || !(bits <= (double)BK_MAX_BITS))
        return BK_ERANGE;
    uint64_t blocks = (uint64_t)ceil(bits / BK_BLOCKED_BLOCK_BITS);
    if (blocks == 0)
        blocks = 1;
    if (blocks > MAX_BLOCKS)
        return BK_ERANGE;
    out->block_count = blocks;
    out->hashes = hashes;
    out->capacity = capacity;
    out->predicted_fpr = bk_blocked_predicted_fpr(
        (double)blocks * BK_BLOCKED_BLOCK_BITS / (double)capacity, hashes,
        BK_BLOCKED_BLOCK_BITS);
    return BK_OK;
}

static bk_status design_from_params(const bk_params *params, blocked_design *out)
{
    if (params == NULL || params->capacity == 0)
        return BK_EINVAL;
    double n = (double)params->capacity;
    if (params->bits != 0 || params->hashes != 0) {
        if (params->bits == 0 || params->hashes == 0)
            return BK_EINVAL;
        if (params->bits > BK_MAX_BITS)
            return BK_ERANGE;
        return design_from_bits(params->capacity, (double)params->bits, params->hashes, out);
    }
    if (params->bits_per_key != 0) {
        double c = params->bits_per_key;
        if (!(c >= 1) || !isfinite(c))
            return BK_EINVAL;
        if (!(n * c <= (double)BK_MAX_BITS))
            return BK_ERANGE;
        return design_from_bits(params->capacity, n * c,
                                bk_blocked_best_hashes(c, BK_BLOCKED_BLOCK_BITS), out);
    }
    double fpr = params->fpr == 0 ? 0.01 : params->fpr;
    double c;
    unsigned k;
    bk_status status = bk_blocked_bits_per_key_for_fpr(fpr, BK_BLOCKED_BLOCK_BITS, &c, &k);
    if (status != BK_OK)
        return status;
    if (!(n * c <= (double)BK_MAX_BITS))
        return BK_ERANGE;
    return design_from_bits(params->capacity, n * c, k, out);
}

static bool avx2_available(void)
{
#ifdef BK_HAVE_AVX2_SOURCES
    return bk_cpu()->avx2;
#else
    return false;
#endif
}

/* src/blocked_avx512.c is built with -mavx512f -mavx512dq (its key query
 * finishes the hash with VPMULLQ). */
static bool avx512_available(void)
{
#ifdef BK_HAVE_AVX512_SOURCES
    return bk_cpu()->avx512dqbw;
#else
    return false;
#endif
}

static bk_blocked_path best_path(const bk_blocked *filter);

/* The lanes of bk_blocked_round_shifts(k), for k <= 7. */
static void set_round_shifts(bk_blocked *filter)
{
    for (unsigned lane = 0; lane < BK_BLOCKED_BLOCK_WORDS; lane++)
        filter->round_shifts[lane] = lane < filter->hashes &&
                                             lane < BK_BLOCKED_POSITIONS_PER_WORD
                                         ? BK_BLOCKED_POSITION_BITS * lane
                                         : 0;
}

static size_t payload_bytes(uint64_t block_count)
{
    return (size_t)block_count * (BK_BLOCKED_BLOCK_BITS / 8);
}

static bk_status create_from_design(const blocked_design *design, const bk_hasher *hasher,
                                    unsigned flags, uint64_t *borrowed_words, bk_blocked **out)
{
    if ((flags & ~KNOWN_FLAGS) != 0)
        return BK_EINVAL;
    if (design->block_count == 0 || design->block_count > MAX_BLOCKS || design->hashes == 0 ||
        design->hashes > BK_MAX_HASHES || design->capacity == 0)
        return BK_ERANGE;
    if (design->block_count > SIZE_MAX / (BK_BLOCKED_BLOCK_BITS / 8))
        return BK_ERANGE; /* 32-bit hosts */
    bk_blocked *filter = calloc(1, sizeof *filter);
    if (filter == NULL)
        return BK_ENOMEM;
    if (borrowed_words != NULL) {
        filter->words = borrowed_words;
        filter->borrowed = true;
    } else {
        filter->words = bk_alloc_zeroed(payload_bytes(design->block_count));
        if (filter->words == NULL) {
            free(filter);
            return BK_ENOMEM;
        }
    }
    filter->block_count = design->block_count;
    filter->hashes = design->hashes;
    filter->capacity = design->capacity;
    filter->target_fpr = design->predicted_fpr;
    filter->hasher = *hasher;
    filter->flags = flags;
    filter->path = best_path(filter);
    set_round_shifts(filter);
    filter->u64_query = BK_BLOCKED_U64_OTHER;
    if (filter->hashes <= BK_BLOCKED_POSITIONS_PER_WORD && hasher->algorithm == BK_HASH_MIX64)
        filter->u64_query = BK_BLOCKED_U64_MIX64_ROUND;
    if (filter->hashes <= BK_BLOCKED_POSITIONS_PER_WORD && hasher->algorithm == BK_HASH_XXH3)
        filter->u64_query = BK_BLOCKED_U64_XXH3_ROUND;
    *out = filter;
    return BK_OK;
}

static bk_status create(const bk_params *params, bk_blocked **out)
{
    blocked_design design;
    bk_status status = design_from_params(params, &design);
    if (status != BK_OK)
        return status;
    bk_hasher hasher;
    status = bk_hasher_from_params(&hasher, params);
    if (status != BK_OK)
        return status;
    return create_from_design(&design, &hasher, params->flags, NULL, out);
}

static void destroy(bk_blocked *filter)
{
    if (!filter->borrowed)
        bk_free_zeroed(filter->words, payload_bytes(filter->block_count));
    memset(&filter->hasher, 0, sizeof filter->hasher); /* do not leave the key behind */
    free(filter);
}

static blocked_design design_of(const bk_blocked *filter)
{
    blocked_design design = { filter->block_count, filter->hashes, filter->capacity,
                              filter->target_fpr };
    return design;
}

static bk_status copy(const bk_blocked *filter, bk_blocked **out)
{
    blocked_design design = design_of(filter);
    bk_blocked *copy;
    bk_status status = create_from_design(&design, &filter->hasher, filter->flags, NULL, &copy);
    if (status != BK_OK)
        return status;
    memcpy(copy->words, filter->words, payload_bytes(filter->block_count));
    copy->keys_added = filter->keys_added;
    copy->path = filter->path;
    *out = copy;
    return BK_OK;
}

static bk_status clear(bk_blocked *filter)
{
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    memset(filter->words, 0, payload_bytes(filter->block_count));
    filter->keys_added = 0;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The hot path, portable                                                   */
/* ------------------------------------------------------------------------ */

/* The block's 512-bit mask of the key's k positions. */
static inline void build_mask(uint64_t h2, unsigned hashes,
                              uint64_t mask[BK_BLOCKED_BLOCK_WORDS])
{
    memset(mask, 0, BK_BLOCKED_BLOCK_WORDS * sizeof mask[0]);
    bk_blocked_walk walk = bk_blocked_walk_start(h2);
    for (unsigned i = 0; i < hashes; i++) {
        unsigned position = bk_blocked_walk_next(&walk);
        mask[position >> 6] |= (uint64_t)1 << (position & 63);
    }
}

/* ORs the mask into the block; returns whether any bit flipped. */
static inline bool set_block_portable(uint64_t *block, uint64_t h2, unsigned hashes,
                                      bool concurrent)
{
    uint64_t mask[BK_BLOCKED_BLOCK_WORDS];
    build_mask(h2, hashes, mask);
    uint64_t flipped = 0;
    if (concurrent) { /* an atomic only where the mask has bits */
        for (unsigned w = 0; w < BK_BLOCKED_BLOCK_WORDS; w++) {
            if (mask[w] != 0)
                flipped |= ~__atomic_fetch_or(&block[w], mask[w], __ATOMIC_RELAXED) & mask[w];
        }
    } else { /* branch-free: a data-dependent branch per word mispredicts */
        for (unsigned w = 0; w < BK_BLOCKED_BLOCK_WORDS; w++) {
            flipped |= ~block[w] & mask[w];
            block[w] |= mask[w];
        }
    }
    return flipped != 0;
}

static bool set_bits_portable(bk_blocked *filter, bk_hash hash)
{
    return set_block_portable(bk_blocked_block(filter, hash), hash.h2, filter->hashes,
                              (filter->flags & BK_FLAG_CONCURRENT) != 0);
}

/* A function of its own: inlined into contains_hash_portable, gcc 12 adds
 * the block's base to every probe's address again, which is slower. */
static BK_NOINLINE bool test_block_portable(const uint64_t *block, uint64_t h2, unsigned hashes)
{
    return bk_blocked_block_test_portable(block, h2, hashes);
}

static bool contains_hash_portable(const bk_blocked *filter, bk_hash hash)
{
    return test_block_portable(bk_blocked_block(filter, hash), hash.h2, filter->hashes);
}

static inline void count_new_key(bk_blocked *filter)
{
    if (filter->flags & BK_FLAG_CONCURRENT)
        __atomic_fetch_add(&filter->keys_added, 1, __ATOMIC_RELAXED);
    else
        filter->keys_added = bk_saturating_add(filter->keys_added, 1);
}

static bool add_key_portable(bk_blocked *filter, const void *key, size_t len)
{
    bool flipped = set_bits_portable(filter, bk_hash_inline(&filter->hasher, key, len));
    if (flipped)
        count_new_key(filter);
    return flipped;
}

bk_hash bk_blocked_hash_u64_called(const bk_hasher *hasher, uint64_t key)
{
    return bk_hash_u64(hasher, key);
}

static bool contains_u64_portable(const bk_blocked *filter, uint64_t key)
{
    return contains_hash_portable(filter, bk_hash_u64(&filter->hasher, key));
}

static bool add_u64_portable(bk_blocked *filter, uint64_t key)
{
    bool flipped = set_bits_portable(filter, bk_hash_u64(&filter->hasher, key));
    if (flipped)
        count_new_key(filter);
    return flipped;
}

static bk_status add_key(bk_blocked *filter, const void *key, size_t len, bool *was_new)
{
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    bool flipped = filter->path.add_key(filter, key, len);
    if (was_new != NULL)
        *was_new = flipped;
    return BK_OK;
}

static bk_status add_hash(bk_blocked *filter, bk_hash hash, bool *was_new)
{
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    bool flipped = filter->path.set_bits(filter, hash);
    if (flipped)
        count_new_key(filter);
    if (was_new != NULL)
        *was_new = flipped;
    return BK_OK;
}

bk_status bk_blocked_view(const bk_filter *handle, struct bk_blocked_view *view)
{
    if (handle == NULL || view == NULL)
        return BK_EINVAL;
    const bk_blocked *filter = bk_filter_object_of(handle, BK_KIND_BLOCKED);
    if (filter == NULL)
        return BK_EKIND;
    if (filter->hasher.algorithm == BK_HASH_SIPHASH || (filter->flags & BK_FLAG_CONCURRENT))
        return BK_EUNSUPPORTED;
    view->words = filter->words;
    view->block_count = filter->block_count;
    bk_blocked_last_round_shifts(filter->hashes, view->last_round_shifts);
    view->last_round_positions = bk_blocked_last_round_positions(filter->hashes);
    view->hashes = filter->hashes;
    view->rounds = bk_blocked_round_count(filter->hashes);
    view->hash_algorithm = filter->hasher.algorithm;
    view->hash_seed = filter->hasher.seed;
    view->xxh3_one_round = view->hash_algorithm == BK_HASH_XXH3 && view->rounds == 1;
    view->mix64_one_round = view->hash_algorithm == BK_HASH_MIX64 && view->rounds == 1;
    /* the view's SIMD test where the library's own tests run (AVX-512 F
     * and DQ, which the library's path needs with BW) */
    view->simd_call = avx2_available() && avx512_available() ? BK_VIEW_SIMD_AVX512
                      : avx2_available()                     ? BK_VIEW_SIMD_AVX2
                                                             : BK_VIEW_SIMD_NONE;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Batches: prefetch the block of key i + D while probing key i             */
/* ------------------------------------------------------------------------ */

static size_t add_batch_portable(bk_blocked *filter, const bk_hash *hashes, size_t count)
{
    bool concurrent = (filter->flags & BK_FLAG_CONCURRENT) != 0;
    size_t fresh = 0;
    for (size_t i = 0; i < count && i < BK_ADD_PREFETCH_DISTANCE; i++)
        __builtin_prefetch(bk_blocked_block(filter, hashes[i]), 1);
    for (size_t i = 0; i < count; i++) {
        if (i + BK_ADD_PREFETCH_DISTANCE < count)
            __builtin_prefetch(bk_blocked_block(filter, hashes[i + BK_ADD_PREFETCH_DISTANCE]),
                               1);
        if (set_block_portable(bk_blocked_block(filter, hashes[i]), hashes[i].h2, filter->hashes,
                               concurrent)) {
            count_new_key(filter);
            fresh++;
        }
    }
    return fresh;
}

/* The batch probe; context: k. */
static inline bool probe_portable(const void *k, const void *block, const bk_hash *hash)
{
    return bk_blocked_block_test_portable(block, hash->h2, *(const unsigned *)k);
}

static size_t test_batch_portable(const bk_blocked *filter, const bk_hash *hashes, size_t count,
                                  bool *results)
{
    const unsigned k = filter->hashes;
    return bk_line_ring_probe(filter, hashes, count, results, bk_blocked_line_of, probe_portable,
                              &k);
}

static bk_status add_hash_batch(bk_blocked *filter, const bk_hash *hashes, size_t count,
                                size_t *new_count)
{
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    size_t fresh = filter->path.add_batch(filter, hashes, count);
    if (new_count != NULL)
        *new_count = fresh;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The paths                                                                */
/* ------------------------------------------------------------------------ */

static const bk_blocked_path portable_path = {
    .set_bits = set_bits_portable,
    .add_key = add_key_portable,
    .contains_hash = contains_hash_portable,
    .contains_key = bk_blocked_contains_other_key,
    .contains_u64 = contains_u64_portable,
    .add_u64 = add_u64_portable,
    .add_batch = add_batch_portable,
    .test_batch = test_batch_portable,
};

/* The path a filter takes: the widest the CPU has, portable for a
 * BK_FLAG_CONCURRENT filter (its adds are atomic ORs per word). */
static bk_blocked_path best_path(const bk_blocked *filter)
{
    if (filter->flags & BK_FLAG_CONCURRENT)
        return portable_path;
#ifdef BK_HAVE_AVX512_SOURCES
    if (avx2_available() && avx512_available())
        return bk_blocked_avx512_path;
#endif
#ifdef BK_HAVE_AVX2_SOURCES
    if (avx2_available())
        return bk_blocked_avx2_path;
#endif
    return portable_path;
}

bk_status bk_blocked_set_path(bk_blocked *filter, bk_blocked_path_id path)
{
    if (filter == NULL)
        return BK_EINVAL;
    if ((path != BK_BLOCKED_PORTABLE && !avx2_available()) ||
        (path == BK_BLOCKED_AVX512 && !avx512_available()))
        return BK_EUNSUPPORTED;
    if (path == BK_BLOCKED_PORTABLE || (filter->flags & BK_FLAG_CONCURRENT))
        filter->path = portable_path;
#ifdef BK_HAVE_AVX2_SOURCES
    else if (path == BK_BLOCKED_AVX2)
        filter->path = bk_blocked_avx2_path;
#endif
#ifdef BK_HAVE_AVX512_SOURCES
    else
        filter->path = bk_blocked_avx512_path;
#endif
    return BK_OK;
}

bool bk_blocked_uses_simd(const bk_blocked *filter)
{
    return filter->path.set_bits != portable_path.set_bits;
}

/* ------------------------------------------------------------------------ */
/* Parameters, fill, statistics                                             */
/* ------------------------------------------------------------------------ */

static uint64_t bits_of(const bk_blocked *filter)
{
    return filter->block_count * BK_BLOCKED_BLOCK_BITS;
}

static uint64_t bits_set(const bk_blocked *filter)
{
    size_t words = (size_t)filter->block_count * BK_BLOCKED_BLOCK_WORDS;
    if (filter->flags & BK_FLAG_CONCURRENT)
        return bk_popcount_words_shared(filter->words, words);
    return bk_popcount_words(filter->words, words);
}

static double estimate_from_fill(const bk_blocked *filter, double fill)
{
    return bk_blocked_estimate_keys(filter->block_count, filter->hashes, BK_BLOCKED_BLOCK_BITS,
                                    fill);
}

/* The key count estimated from the filter's fill now. */
static double estimate_keys_now(const bk_blocked *filter)
{
    return estimate_from_fill(filter, (double)bits_set(filter) / (double)bits_of(filter));
}

static double keys_per_block(const bk_blocked *filter, double keys)
{
    return keys / (double)filter->block_count;
}

static void stats(const bk_blocked *filter, bk_stats *out)
{
    bk_stats s;
    memset(&s, 0, sizeof s);
    double bits = (double)bits_of(filter);
    s.kind = BK_KIND_BLOCKED;
    s.bits = bits_of(filter);
    s.hashes = filter->hashes;
    s.bytes = payload_bytes(filter->block_count);
    s.capacity = filter->capacity;
    s.target_fpr = filter->target_fpr;
    s.keys_added = __atomic_load_n(&filter->keys_added, __ATOMIC_RELAXED); /* adds may run */
    s.fill_ratio = (double)bits_set(filter) / bits;
    s.keys_estimated = estimate_from_fill(filter, s.fill_ratio);
    s.design_fill_ratio = bk_blocked_expected_fill(
        keys_per_block(filter, (double)filter->capacity), filter->hashes, BK_BLOCKED_BLOCK_BITS);
    s.current_fpr = s.keys_estimated > 0
                        ? bk_blocked_predicted_fpr(bits / s.keys_estimated, filter->hashes,
                                                   BK_BLOCKED_BLOCK_BITS)
                        : 0.0;
    s.bits_per_key = bits / (double)filter->capacity;
    double margin_fill = bk_blocked_expected_fill(
        keys_per_block(filter, (double)filter->capacity * BK_DESIGN_MARGIN), filter->hashes,
        BK_BLOCKED_BLOCK_BITS);
    s.past_design_point = s.fill_ratio > margin_fill;
    s.hash_algorithm = filter->hasher.algorithm;
    s.seed = filter->hasher.seed;
    *out = s;
}

/* ------------------------------------------------------------------------ */
/* Set algebra                                                              */
/* ------------------------------------------------------------------------ */

static bk_status check_compatible(const bk_blocked *a, const bk_blocked *b)
{
    if (a->block_count != b->block_count || a->hashes != b->hashes ||
        !bk_hasher_equal(&a->hasher, &b->hasher))
        return BK_EINCOMPATIBLE;
    return BK_OK;
}

static bk_status union_with(bk_blocked *dst, const bk_blocked *src)
{
    bk_status status = check_compatible(dst, src);
    if (status != BK_OK)
        return status;
    if (dst->borrowed)
        return BK_EIMMUTABLE;
    size_t words = (size_t)dst->block_count * BK_BLOCKED_BLOCK_WORDS;
    for (size_t i = 0; i < words; i++)
        dst->words[i] |= src->words[i];
    dst->keys_added = bk_saturating_add(dst->keys_added, src->keys_added);
    return BK_OK;
}

static bk_status intersect_with(bk_blocked *dst, const bk_blocked *src)
{
    bk_status status = check_compatible(dst, src);
    if (status != BK_OK)
        return status;
    if (dst->borrowed)
        return BK_EIMMUTABLE;
    size_t words = (size_t)dst->block_count * BK_BLOCKED_BLOCK_WORDS;
    for (size_t i = 0; i < words; i++)
        dst->words[i] &= src->words[i];
    if (src->keys_added < dst->keys_added)
        dst->keys_added = src->keys_added;
    return BK_OK;
}

static bk_status estimate_sets(const bk_blocked *a, const bk_blocked *b, bk_set_estimate *out)
{
    bk_status status = check_compatible(a, b);
    if (status != BK_OK)
        return status;
    size_t words = (size_t)a->block_count * BK_BLOCKED_BLOCK_WORDS;
    uint64_t union_bits = 0;
    for (size_t i = 0; i < words; i++)
        union_bits += (uint64_t)__builtin_popcountll(a->words[i] | b->words[i]);
    double bits = (double)bits_of(a);
    bk_set_estimate e;
    e.a = estimate_keys_now(a);
    e.b = estimate_keys_now(b);
    e.union_size = estimate_from_fill(a, (double)union_bits / bits);
    e.intersection_size = e.a + e.b - e.union_size;
    if (e.intersection_size < 0)
        e.intersection_size = 0;
    if (e.intersection_size > e.union_size)
        e.intersection_size = e.union_size;
    e.jaccard = e.union_size > 0 ? e.intersection_size / e.union_size : 0.0;
    *out = e;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The kind's adapter: bk_filter dispatch and the file format               */
/* ------------------------------------------------------------------------ */

/*
 * Parameter block (32 bytes, little-endian; docs/BLOCKED.md):
 *     0  u64  block count       8  u32  hashes (k)    12  u32  block bits (512)
 *    16  u64  capacity         24  f64  target FPR (predicted at capacity)
 * Payload: block count x 64 bytes: each block's 8 words, little-endian.
 */
#define BLOCKED_PARAMS_SIZE 32

static size_t ops_params_size(const void *filter)
{
    (void)filter;
    return BLOCKED_PARAMS_SIZE;
}

static void ops_write_params(const void *object, uint8_t *out)
{
    const bk_blocked *filter = object;
    bk_store_le64(out, filter->block_count);
    bk_store_le32(out + 8, filter->hashes);
    bk_store_le32(out + 12, BK_BLOCKED_BLOCK_BITS);
    bk_store_le64(out + 16, filter->capacity);
    bk_store_le_double(out + 24, filter->target_fpr);
}

static uint64_t ops_payload_size(const void *object)
{
    return payload_bytes(((const bk_blocked *)object)->block_count);
}

static void ops_write_payload(const void *object, uint8_t *out)
{
    const bk_blocked *filter = object;
    bk_store_le64_array(out, filter->words,
                        (size_t)filter->block_count * BK_BLOCKED_BLOCK_WORDS);
}

static bk_status ops_read(const uint8_t *params, size_t params_size, const uint8_t *payload,
                          uint64_t payload_size, const bk_hasher *hasher, uint64_t keys_added,
                          bool in_place, void **out)
{
    if (params_size != BLOCKED_PARAMS_SIZE)
        return BK_ECORRUPT;
    blocked_design design;
    design.block_count = bk_load_le64(params);
    design.hashes = bk_load_le32(params + 8);
    uint32_t block_bits = bk_load_le32(params + 12);
    design.capacity = bk_load_le64(params + 16);
    design.predicted_fpr = bk_load_le_double(params + 24);
    if (block_bits != BK_BLOCKED_BLOCK_BITS || design.block_count == 0 || design.hashes == 0 ||
        design.capacity == 0 || !bk_stored_fpr_valid(design.predicted_fpr))
        return BK_ECORRUPT;
    if (design.block_count > MAX_BLOCKS || design.hashes > BK_MAX_HASHES)
        return BK_ERANGE;
    if (payload_size != (uint64_t)design.block_count * (BK_BLOCKED_BLOCK_BITS / 8))
        return BK_ECORRUPT;
    bk_blocked *filter;
    uint64_t *borrowed = in_place ? (uint64_t *)(uintptr_t)payload : NULL;
    bk_status status = create_from_design(&design, hasher, 0, borrowed, &filter);
    if (status != BK_OK)
        return status;
    if (!in_place)
        bk_load_le64_array(filter->words, payload,
                           (size_t)design.block_count * BK_BLOCKED_BLOCK_WORDS);
    filter->keys_added = keys_added;
    *out = filter;
    return BK_OK;
}

static bk_status ops_create(const bk_params *params, void **out)
{
    return create(params, (bk_blocked **)out);
}

static void ops_destroy(void *filter) { destroy(filter); }

static bk_status ops_copy(const void *filter, void **out)
{
    return copy(filter, (bk_blocked **)out);
}

static bk_status ops_clear(void *filter) { return clear(filter); }
static const bk_hasher *ops_hasher(const void *filter)
{
    return &((const bk_blocked *)filter)->hasher;
}

static bk_status ops_add_hash(void *filter, bk_hash hash, bool *was_new)
{
    return add_hash(filter, hash, was_new);
}

static bk_status ops_add_key(void *filter, const void *key, size_t len, bool *was_new)
{
    return add_key(filter, key, len, was_new);
}

static bk_status ops_add_u64(void *object, uint64_t key, bool *was_new)
{
    bk_blocked *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    bool fresh = filter->path.add_u64(filter, key);
    if (was_new != NULL)
        *was_new = fresh;
    return BK_OK;
}

static bool ops_contains_u64(const void *filter, uint64_t key)
{
    const bk_blocked *f = filter;
    return f->path.contains_u64(f, key);
}

static bool ops_contains_hash(const void *filter, bk_hash hash)
{
    const bk_blocked *f = filter;
    return f->path.contains_hash(f, hash);
}

static bool ops_contains_key(const void *filter, const void *key, size_t len)
{
    const bk_blocked *f = filter;
    return f->path.contains_key(f, key, len);
}

static bk_status ops_add_hash_batch(void *filter, const bk_hash *hashes, size_t count,
                                    size_t *new_count)
{
    return add_hash_batch(filter, hashes, count, new_count);
}

static size_t ops_contains_hash_batch(const void *filter, const bk_hash *hashes, size_t count,
                                      bool *results)
{
    const bk_blocked *f = filter;
    return f->path.test_batch(f, hashes, count, results);
}

static bk_status ops_union(void *dst, const void *src) { return union_with(dst, src); }
static bk_status ops_intersect(void *dst, const void *src) { return intersect_with(dst, src); }

static bk_status ops_estimate_sets(const void *a, const void *b, bk_set_estimate *out)
{
    return estimate_sets(a, b, out);
}

static void ops_stats(const void *filter, bk_stats *out) { stats(filter, out); }

static bk_status ops_design(const bk_params *params, bk_stats *out)
{
    blocked_design design;
    bk_status status = design_from_params(params, &design);
    if (status != BK_OK)
        return status;
    double bits = (double)design.block_count * BK_BLOCKED_BLOCK_BITS;
    memset(out, 0, sizeof *out);
    out->kind = BK_KIND_BLOCKED;
    out->bits = design.block_count * BK_BLOCKED_BLOCK_BITS;
    out->hashes = design.hashes;
    out->bytes = payload_bytes(design.block_count);
    out->capacity = design.capacity;
    out->target_fpr = design.predicted_fpr;
    out->bits_per_key = bits / (double)design.capacity;
    out->design_fill_ratio = bk_blocked_expected_fill(
        (double)design.capacity / (double)design.block_count, design.hashes,
        BK_BLOCKED_BLOCK_BITS);
    out->hash_algorithm = params->hash_algorithm;
    return BK_OK;
}

const bk_kind_ops bk_blocked_ops = {
    .kind = BK_KIND_BLOCKED,
    .name = "blocked",
    .concurrent_adds = true,
    .create = ops_create,
    .destroy = ops_destroy,
    .copy = ops_copy,
    .clear = ops_clear,
    .hasher = ops_hasher,
    .add_hash = ops_add_hash,
    .contains_hash = ops_contains_hash,
    .contains_key = ops_contains_key,
    .add_key = ops_add_key,
    .contains_u64 = ops_contains_u64,
    .add_u64 = ops_add_u64,
    .add_hash_batch = ops_add_hash_batch,
    .contains_hash_batch = ops_contains_hash_batch,
    .union_with = ops_union,
    .intersect_with = ops_intersect,
    .estimate_sets = ops_estimate_sets,
    .stats = ops_stats,
    .design = ops_design,
    .params_size = ops_params_size,
    .write_params = ops_write_params,
    .payload_size = ops_payload_size,
    .write_payload = ops_write_payload,
    .read = ops_read,
};
