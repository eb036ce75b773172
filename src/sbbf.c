/*
 * src/sbbf.c -- the split-block Bloom filter of Apache Parquet.
 *
 * The specification (apache/parquet-format, BloomFilter.md) combines two
 * ideas: the blocked Bloom filter of Putze, Sanders & Singler (2007) --
 * every key's bits in one small block -- and the "split" Bloom filter
 * folklore (Broder & Mitzenmacher 2004, section 2.1) -- each of the k
 * probes has its own disjoint range of bits.  A block is 256 bits, eight
 * 32-bit words, and a key sets exactly one bit in each word:
 *
 *     hash   = XXH64(key bytes, seed 0)               64 bits
 *     block  = ((hash >> 32) * block_count) >> 32     upper half, multiply-shift
 *     x      = (uint32_t) hash                        lower half
 *     bit in word i = (uint32_t)(x * SALT[i]) >> 27   i = 0..7, one bit each
 *
 *     SALT = 47b6137b 44974d91 8824ad5b a2b7289d 705495c7 2df1424b 9efc4947 5c6bfb31
 *
 * Memory layout: block_count blocks of 32 bytes, 64-byte aligned (two
 * blocks per cache line; a block never straddles one).  Words are kept in
 * host order; on the little-endian hosts everyone runs, the bytes in memory
 * are the Parquet bitset itself:
 *
 *     words: [ w0 w1 w2 w3 w4 w5 w6 w7 ][ w8 ... w15 ] ...
 *            \____ block 0 (32 B) ____/\__ block 1 _/
 *
 * The AVX2 path is the natural one: one VPMULLD by the salts, a shift by
 * 27 and a VPSLLVD of ones give the whole 256-bit mask, then one OR (add)
 * or one VPTEST (query) over the block (src/sbbf_avx2.c).  The portable
 * path below is the spec's loop; both give identical bits and answers
 * (tests/test_sbbf.c, which also checks golden vectors worked out by hand
 * from the spec).  The block address, the word masks and both one-key
 * tests are bloomkit/sbbf_inline.h's, shared with the inline view a
 * caller can compile into its own loop (tests/test_inline.c).
 *
 * Accuracy (src/sizing.c): a block receives Poisson(256/c) keys at c bits
 * per key; each key leaves a given bit of a word clear with probability
 * 31/32, so
 *
 *     FPR = sum_i Pois(i; 256/c) (1 - (31/32)^i)^8
 *
 * The spec's sizing rule c = -8 / ln(1 - p^{1/8}) is the classic formula
 * with k = 8 and ignores the uneven block loads: it promises 1% at 9.68
 * bits per key where the formula above (and measurement) needs 10.53, and
 * 0.5% at 11.54 where the filter gives 0.65%.  Sizing here uses the formula
 * above.  (Since each word is tested at one bit, the formula is exact: no
 * Jensen gap as in the blocked kind.)
 *
 * Measured (examples/blocked_fpr_table.c: 1,000,000 8-byte keys, 10,000,000
 * absent keys per row, XXH64 seed 0):
 *
 *     bits/key   measured FPR   predicted   classic Bloom, k = 8
 *        6         9.935 %       9.933 %       8.648 %
 *        8         3.314 %       3.321 %       2.549 %
 *       10         1.263 %       1.265 %       0.846 %
 *       12         0.5405 %      0.5420 %      0.314 %
 *       16         0.1293 %      0.1316 %      0.057 %
 *       20         0.0403 %      0.0420 %      0.014 %
 *
 * Fill: expected 1 - e^{-lambda/32} with lambda keys per block, inverted
 * for the key estimate (approximate, as for the blocked kind; measured
 * within 0.07% of the true count from 1e5 to 2e6 keys in a filter for 1e6).
 *
 * Parquet interchange (the end of this file): BK_FLAG_PARQUET_SIZE rounds
 * the block count up to a power of two, at most 2^22 blocks (128 MiB), the
 * sizes every Parquet reader accepts; bk_sbbf_to_parquet refuses any other
 * filter; and a filter is written and read with or without the
 * BloomFilterHeader a Parquet file puts before the bitset, encoded and
 * decoded here in Thrift's compact protocol (the decoder bounded against
 * hostile bytes).
 */
#include "sbbf.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "endian.h"
#include "filter.h"
#include "memory.h"

#define SBBF_HASHES 8u
#define SBBF_BLOCK_BITS 256u

/* ------------------------------------------------------------------------ */
/* Design and creation                                                      */
/* ------------------------------------------------------------------------ */

typedef struct sbbf_design {
    uint64_t block_count;
    uint64_t capacity;
    double predicted_fpr;
} sbbf_design;

static double predicted_fpr(uint64_t block_count, uint64_t capacity)
{
    return bk_split_block_predicted_fpr((double)block_count * SBBF_BLOCK_BITS / (double)capacity,
                                        SBBF_HASHES, BK_SBBF_WORD_BITS);
}

/* The smallest power of two >= blocks (blocks <= 2^32). */
static uint64_t power_of_two_at_least(uint64_t blocks)
{
    uint64_t power = 1;
    while (power < blocks)
        power <<= 1;
    return power;
}

/* With BK_FLAG_PARQUET_SIZE the block count is rounded up to a power of
 * two, and may not exceed Parquet's largest bitset. */
static bk_status design_from_bits(uint64_t capacity, double bits, unsigned flags,
                                  sbbf_design *out)
{
    if (!(bits <= (double)BK_SBBF_MAX_BLOCKS * SBBF_BLOCK_BITS))
        return BK_ERANGE;
    uint64_t blocks = (uint64_t)ceil(bits / SBBF_BLOCK_BITS);
    if (blocks == 0)
        blocks = 1;
    if (blocks > BK_SBBF_MAX_BLOCKS)
        return BK_ERANGE;
    if (flags & BK_FLAG_PARQUET_SIZE) {
        blocks = power_of_two_at_least(blocks);
        if (blocks > BK_SBBF_PARQUET_MAX_BYTES / BK_SBBF_BLOCK_BYTES)
            return BK_ERANGE;
    }
    out->block_count = blocks;
    out->capacity = capacity;
    out->predicted_fpr = predicted_fpr(blocks, capacity);
    return BK_OK;
}

static bk_status design_from_params(const bk_params *params, sbbf_design *out)
{
    if (params->capacity == 0)
        return BK_EINVAL;
    if (params->hashes != 0 && params->hashes != SBBF_HASHES)
        return BK_EINVAL;
    double n = (double)params->capacity;
    if (params->bits != 0)
        return design_from_bits(params->capacity, (double)params->bits, params->flags, out);
    double c;
    if (params->bits_per_key != 0) {
        c = params->bits_per_key;
        if (!(c >= 1) || !isfinite(c))
            return BK_EINVAL;
    } else {
        double fpr = params->fpr == 0 ? 0.01 : params->fpr;
        bk_status status = bk_split_block_bits_per_key_for_fpr(fpr, &c);
        if (status != BK_OK)
            return status;
    }
    return design_from_bits(params->capacity, n * c, params->flags, out);
}

/* XXH3 is the library-wide default (0), which for this kind means XXH64. */
static bk_status hasher_from_params(const bk_params *params, bk_hasher *hasher)
{
    bk_hash_algorithm algorithm = params->hash_algorithm;
    if (algorithm == BK_HASH_XXH3)
        algorithm = BK_HASH_XXH64;
    return bk_hasher_init(hasher, algorithm, params->seed, params->secret_key);
}

static bool avx2_available(void)
{
#ifdef BK_HAVE_AVX2_SOURCES
    return bk_cpu()->avx2;
#else
    return false;
#endif
}

static size_t payload_bytes(uint64_t block_count)
{
    return (size_t)block_count * BK_SBBF_BLOCK_BYTES;
}

/* Keeps xxh64_on_avx2 in step with the hash and the path. */
static void choose_one_key_path(bk_sbbf *filter)
{
    filter->xxh64_on_avx2 = filter->hasher.algorithm == BK_HASH_XXH64 &&
                            bk_sbbf_uses_simd(filter);
}

static bk_status create_from_design(const sbbf_design *design, const bk_hasher *hasher,
                                    unsigned flags, uint32_t *borrowed_words, bk_sbbf **out)
{
    if (design->block_count == 0 || design->block_count > BK_SBBF_MAX_BLOCKS ||
        design->capacity == 0)
        return BK_ERANGE;
    if (design->block_count > SIZE_MAX / (BK_SBBF_BLOCK_BYTES))
        return BK_ERANGE; /* 32-bit hosts */
    bk_sbbf *filter = calloc(1, sizeof *filter);
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
    filter->capacity = design->capacity;
    filter->target_fpr = design->predicted_fpr;
    filter->hasher = *hasher;
    filter->flags = flags;
    filter->use_avx2 = avx2_available();
    choose_one_key_path(filter);
    *out = filter;
    return BK_OK;
}

/* Creates an empty filter sized and hashed as bloomkit/sbbf.h describes
 * (the handle has checked the flags and the hash parameters).  Errors:
 * BK_EINVAL for a zero capacity, an fpr outside (0,1), bits_per_key below
 * 1 or .hashes other than 0 or 8; BK_ERANGE for more than 2^32 blocks (or
 * past 128 MiB with BK_FLAG_PARQUET_SIZE); BK_ENOMEM. */
static bk_status sbbf_create(const bk_params *params, void **out)
{
    sbbf_design design;
    bk_status status = design_from_params(params, &design);
    if (status != BK_OK)
        return status;
    bk_hasher hasher;
    status = hasher_from_params(params, &hasher);
    if (status != BK_OK)
        return status;
    return create_from_design(&design, &hasher, params->flags, NULL, (bk_sbbf **)out);
}

static void sbbf_destroy(void *object)
{
    bk_sbbf *filter = object;
    if (!filter->borrowed)
        bk_free_zeroed(filter->words, payload_bytes(filter->block_count));
    memset(&filter->hasher, 0, sizeof filter->hasher);
    free(filter);
}

static bk_status sbbf_copy(const void *object, void **out)
{
    const bk_sbbf *filter = object;
    sbbf_design design = { filter->block_count, filter->capacity, filter->target_fpr };
    bk_sbbf *copy;
    bk_status status = create_from_design(&design, &filter->hasher, filter->flags, NULL, &copy);
    if (status != BK_OK)
        return status;
    memcpy(copy->words, filter->words, payload_bytes(filter->block_count));
    copy->keys_added = filter->keys_added;
    copy->use_avx2 = filter->use_avx2;
    choose_one_key_path(copy);
    *out = copy;
    return BK_OK;
}

/* BK_EIMMUTABLE for a filter read in place from a mapped file. */
static bk_status sbbf_clear(void *object)
{
    bk_sbbf *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    memset(filter->words, 0, payload_bytes(filter->block_count));
    filter->keys_added = 0;
    return BK_OK;
}

static const bk_hasher *sbbf_hasher(const void *filter)
{
    return &((const bk_sbbf *)filter)->hasher;
}

bk_status bk_sbbf_set_simd(bk_sbbf *filter, bool use_avx2)
{
    if (use_avx2 && !avx2_available())
        return BK_EUNSUPPORTED;
    filter->use_avx2 = use_avx2;
    choose_one_key_path(filter);
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The hot path, portable: the spec's loops                                 */
/* ------------------------------------------------------------------------ */

static inline bool set_block_portable(uint32_t *block, uint32_t key, bool concurrent)
{
    uint32_t flipped = 0;
    for (unsigned i = 0; i < BK_SBBF_WORDS; i++) {
        uint32_t mask = bk_sbbf_word_mask(key, i);
        if (concurrent) {
            flipped |= ~__atomic_fetch_or(&block[i], mask, __ATOMIC_RELAXED) & mask;
        } else {
            flipped |= ~block[i] & mask;
            block[i] |= mask;
        }
    }
    return flipped != 0;
}

static inline bool set_bits(bk_sbbf *filter, uint64_t hash)
{
    uint32_t *block = bk_sbbf_block(filter, hash);
#ifdef BK_HAVE_AVX2_SOURCES
    if (bk_sbbf_uses_simd(filter))
        return bk_sbbf_avx2_set(block, (uint32_t)hash);
#endif
    return set_block_portable(block, (uint32_t)hash, (filter->flags & BK_FLAG_CONCURRENT) != 0);
}

static inline bool test_bits(const bk_sbbf *filter, uint64_t hash)
{
    const uint32_t *block = bk_sbbf_block(filter, hash);
#ifdef BK_HAVE_AVX2_SOURCES
    if (bk_sbbf_uses_simd(filter))
        return bk_sbbf_avx2_test(block, (uint32_t)hash);
#endif
    return bk_sbbf_block_test_portable(block, (uint32_t)hash);
}

static inline void count_new_key(bk_sbbf *filter)
{
    if (filter->flags & BK_FLAG_CONCURRENT)
        __atomic_fetch_add(&filter->keys_added, 1, __ATOMIC_RELAXED);
    else
        filter->keys_added = bk_saturating_add(filter->keys_added, 1);
}

/* Adds the key of hash h1 (h2 is unused); BK_EIMMUTABLE for a filter
 * read in place. */
static bk_status sbbf_add_hash(void *object, bk_hash hash, bool *was_new)
{
    bk_sbbf *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    bool flipped = set_bits(filter, hash.h1);
    if (flipped)
        count_new_key(filter);
    if (was_new != NULL)
        *was_new = flipped;
    return BK_OK;
}

/* The one-key add and query from key bytes, and of an integer key, for
 * the filters src/sbbf_avx2.c's do not serve (src/sbbf.h): the hash, then
 * the path's test or set. */
bk_status bk_sbbf_add_key_portable(void *object, const void *key, size_t len, bool *was_new)
{
    bk_sbbf *filter = object;
    return sbbf_add_hash(object, bk_hash_inline(&filter->hasher, key, len), was_new);
}

bk_status bk_sbbf_add_u64_portable(void *object, uint64_t key, bool *was_new)
{
    bk_sbbf *filter = object;
    return sbbf_add_hash(object, bk_hash_u64(&filter->hasher, key), was_new);
}

static bool sbbf_contains_hash(const void *filter, bk_hash hash)
{
    return test_bits(filter, hash.h1);
}

bk_status bk_sbbf_view(const bk_filter *handle, struct bk_sbbf_view *view)
{
    if (handle == NULL || view == NULL)
        return BK_EINVAL;
    const bk_sbbf *filter = bk_filter_object_of(handle, BK_KIND_SBBF);
    if (filter == NULL)
        return BK_EKIND;
    if (filter->hasher.algorithm != BK_HASH_XXH64)
        return BK_EUNSUPPORTED;
    view->words = filter->words;
    view->block_count = filter->block_count;
    view->seed = filter->hasher.seed;
    view->word_by_word = !bk_sbbf_uses_simd(filter);
    /* the view's AVX2 test where the library's own runs */
    view->simd_call = view->word_by_word ? BK_VIEW_SIMD_NONE : BK_VIEW_SIMD_AVX2;
    return BK_OK;
}

bool bk_sbbf_contains_key_portable(const void *object, const void *key, size_t len)
{
    const bk_sbbf *filter = object;
    return test_bits(filter, bk_hash_inline(&filter->hasher, key, len).h1);
}

bool bk_sbbf_contains_u64_portable(const void *object, uint64_t key)
{
    const bk_sbbf *filter = object;
    return test_bits(filter, bk_hash_u64(&filter->hasher, key).h1);
}

/* ------------------------------------------------------------------------ */
/* Batches: prefetch the block of key i + D while probing key i             */
/* ------------------------------------------------------------------------ */

static size_t add_batch_portable(bk_sbbf *filter, const bk_hash *hashes, size_t count)
{
    bool concurrent = (filter->flags & BK_FLAG_CONCURRENT) != 0;
    size_t fresh = 0;
    for (size_t i = 0; i < count && i < BK_SBBF_ADD_PREFETCH_DISTANCE; i++)
        __builtin_prefetch(bk_sbbf_block(filter, hashes[i].h1), 1);
    for (size_t i = 0; i < count; i++) {
        if (i + BK_SBBF_ADD_PREFETCH_DISTANCE < count) {
            size_t ahead = i + BK_SBBF_ADD_PREFETCH_DISTANCE;
            __builtin_prefetch(bk_sbbf_block(filter, hashes[ahead].h1), 1);
        }
        if (set_block_portable(bk_sbbf_block(filter, hashes[i].h1), (uint32_t)hashes[i].h1,
                               concurrent)) {
            count_new_key(filter);
            fresh++;
        }
    }
    return fresh;
}

static inline bool probe_portable(const void *unused, const void *block, const bk_hash *hash)
{
    (void)unused;
    return bk_sbbf_block_test_portable(block, (uint32_t)hash->h1);
}

static size_t test_batch_portable(const bk_sbbf *filter, const bk_hash *hashes, size_t count,
                                  bool *results)
{
    return bk_line_ring_probe(filter, hashes, count, results, bk_sbbf_line_of, probe_portable,
                              NULL);
}

static bk_status sbbf_add_hash_batch(void *object, const bk_hash *hashes, size_t count,
                                     size_t *new_count)
{
    bk_sbbf *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    size_t fresh;
#ifdef BK_HAVE_AVX2_SOURCES
    if (bk_sbbf_uses_simd(filter))
        fresh = bk_sbbf_avx2_add_batch(filter, hashes, count);
    else
#endif
        fresh = add_batch_portable(filter, hashes, count);
    if (new_count != NULL)
        *new_count = fresh;
    return BK_OK;
}

static size_t sbbf_contains_hash_batch(const void *object, const bk_hash *hashes, size_t count,
                                       bool *results)
{
    const bk_sbbf *filter = object;
#ifdef BK_HAVE_AVX2_SOURCES
    if (bk_sbbf_uses_simd(filter))
        return bk_sbbf_avx2_test_batch(filter, hashes, count, results);
#endif
    return test_batch_portable(filter, hashes, count, results);
}

/* ------------------------------------------------------------------------ */
/* Fill and statistics                                                      */
/* ------------------------------------------------------------------------ */

static uint64_t bits_of(const bk_sbbf *filter) { return filter->block_count * SBBF_BLOCK_BITS; }

/* Popcount of every 32-bit word. */
static uint64_t bits_set(const bk_sbbf *filter)
{
    uint64_t total = 0;
    size_t words = (size_t)filter->block_count * BK_SBBF_WORDS;
    bool shared = (filter->flags & BK_FLAG_CONCURRENT) != 0; /* adds may be setting bits */
    for (size_t i = 0; i < words; i++)
        total += (uint64_t)__builtin_popcount(
            shared ? __atomic_load_n(&filter->words[i], __ATOMIC_RELAXED) : filter->words[i]);
    return total;
}

static double estimate_from_fill(uint64_t block_count, double fill)
{
    return bk_split_block_estimate_keys(block_count, BK_SBBF_WORD_BITS, fill);
}

static double estimate_keys_now(const bk_sbbf *filter)
{
    return estimate_from_fill(filter->block_count,
                              (double)bits_set(filter) / (double)bits_of(filter));
}

static void sbbf_stats(const void *object, bk_stats *out)
{
    const bk_sbbf *filter = object;
    bk_stats s;
    memset(&s, 0, sizeof s);
    double bits = (double)bits_of(filter);
    double blocks = (double)filter->block_count;
    s.kind = BK_KIND_SBBF;
    s.bits = bits_of(filter);
    s.hashes = SBBF_HASHES;
    s.bytes = payload_bytes(filter->block_count);
    s.capacity = filter->capacity;
    s.target_fpr = filter->target_fpr;
    s.keys_added = __atomic_load_n(&filter->keys_added, __ATOMIC_RELAXED); /* adds may run */
    s.fill_ratio = (double)bits_set(filter) / bits;
    s.keys_estimated = estimate_from_fill(filter->block_count, s.fill_ratio);
    s.design_fill_ratio = bk_split_block_expected_fill((double)filter->capacity / blocks,
                                                       BK_SBBF_WORD_BITS);
    s.current_fpr = s.keys_estimated > 0
                        ? bk_split_block_predicted_fpr(bits / s.keys_estimated, SBBF_HASHES,
                                                       BK_SBBF_WORD_BITS)
                        : 0.0;
    s.bits_per_key = bits / (double)filter->capacity;
    s.past_design_point = s.fill_ratio >
                          bk_split_block_expected_fill(
                              (double)filter->capacity * BK_DESIGN_MARGIN / blocks,
                              BK_SBBF_WORD_BITS);
    s.hash_algorithm = filter->hasher.algorithm;
    s.seed = filter->hasher.seed;
    *out = s;
}

/* ------------------------------------------------------------------------ */
/* Set algebra                                                              */
/* ------------------------------------------------------------------------ */

/* Set algebra: same block count, hash algorithm and seed, else
 * BK_EINCOMPATIBLE (nothing changes). */
static bk_status compatible(const bk_sbbf *a, const bk_sbbf *b)
{
    if (a->block_count != b->block_count || !bk_hasher_equal(&a->hasher, &b->hasher))
        return BK_EINCOMPATIBLE;
    return BK_OK;
}

static bk_status sbbf_union(void *object, const void *other)
{
    bk_sbbf *dst = object;
    const bk_sbbf *src = other;
    bk_status status = compatible(dst, src);
    if (status != BK_OK)
        return status;
    if (dst->borrowed)
        return BK_EIMMUTABLE;
    size_t words = (size_t)dst->block_count * BK_SBBF_WORDS;
    for (size_t i = 0; i < words; i++)
        dst->words[i] |= src->words[i];
    dst->keys_added = bk_saturating_add(dst->keys_added, src->keys_added);
    return BK_OK;
}

static bk_status sbbf_intersect(void *object, const void *other)
{
    bk_sbbf *dst = object;
    const bk_sbbf *src = other;
    bk_status status = compatible(dst, src);
    if (status != BK_OK)
        return status;
    if (dst->borrowed)
        return BK_EIMMUTABLE;
    size_t words = (size_t)dst->block_count * BK_SBBF_WORDS;
    for (size_t i = 0; i < words; i++)
        dst->words[i] &= src->words[i];
    if (src->keys_added < dst->keys_added)
        dst->keys_added = src->keys_added;
    return BK_OK;
}

static bk_status sbbf_estimate_sets(const void *first, const void *second, bk_set_estimate *out)
{
    const bk_sbbf *a = first, *b = second;
    bk_status status = compatible(a, b);
    if (status != BK_OK)
        return status;
    size_t words = (size_t)a->block_count * BK_SBBF_WORDS;
    uint64_t union_bits = 0;
    for (size_t i = 0; i < words; i++)
        union_bits += (uint64_t)__builtin_popcount(a->words[i] | b->words[i]);
    bk_set_estimate e;
    e.a = estimate_keys_now(a);
    e.b = estimate_keys_now(b);
    e.union_size = estimate_from_fill(a->block_count, (double)union_bits / (double)bits_of(a));
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
/* Parquet interchange                                                      */
/* ------------------------------------------------------------------------ */

static void store_words(uint8_t *out, const uint32_t *words, size_t count)
{
    if (bk_host_is_little_endian()) {
        memcpy(out, words, count * 4);
        return;
    }
    for (size_t i = 0; i < count; i++)
        bk_store_le32(out + 4 * i, words[i]);
}

static void load_words(uint32_t *words, const uint8_t *in, size_t count)
{
    if (bk_host_is_little_endian()) {
        memcpy(words, in, count * 4);
        return;
    }
    for (size_t i = 0; i < count; i++)
        words[i] = bk_load_le32(in + 4 * i);
}

/* Readable by every Parquet reader: XXH64 with seed 0 (the only hash the
 * format names) and a bitset of a power of two bytes in [32 B, 128 MiB]
 * (Arrow C++ and Velox refuse any other size; parquet-mr caps it too). */
static bk_status check_parquet_readable(const bk_sbbf *filter)
{
    uint64_t bytes = (uint64_t)filter->block_count * BK_SBBF_BLOCK_BYTES;
    if (filter->hasher.algorithm != BK_HASH_XXH64 || filter->hasher.seed != 0)
        return BK_EUNSUPPORTED;
    if (bytes > BK_SBBF_PARQUET_MAX_BYTES || (filter->block_count & (filter->block_count - 1)))
        return BK_EUNSUPPORTED;
    return BK_OK;
}

/* A filter of `blocks` blocks holding the little-endian bitset, hashed as
 * Parquet hashes; capacity 0: estimated from the fill (at least 1). */
static bk_status filter_from_bitset(const uint8_t *bitset, uint64_t blocks, uint64_t capacity,
                                    bk_sbbf **out)
{
    bk_hasher hasher;
    bk_status status = bk_hasher_init(&hasher, BK_HASH_XXH64, 0, NULL);
    if (status != BK_OK)
        return status;
    sbbf_design design = { blocks, 1, 0.0 };
    bk_sbbf *filter;
    status = create_from_design(&design, &hasher, 0, NULL, &filter);
    if (status != BK_OK)
        return status;
    load_words(filter->words, bitset, (size_t)blocks * BK_SBBF_WORDS);
    if (capacity == 0) {
        double estimate = ceil(estimate_keys_now(filter));
        capacity = estimate >= 1 ? (uint64_t)estimate : 1;
    }
    filter->capacity = capacity;
    filter->target_fpr = predicted_fpr(blocks, capacity);
    *out = filter;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The BloomFilterHeader, in Thrift's compact protocol                      */
/* ------------------------------------------------------------------------ */

/*
 * A Parquet file stores a column chunk's filter at its bloom_filter_offset
 * as a BloomFilterHeader (parquet.thrift) followed by the bitset:
 *
 *     struct BloomFilterHeader {
 *       1: required i32 numBytes;                        bitset length
 *       2: required BloomFilterAlgorithm algorithm;      union { 1: BLOCK (empty struct) }
 *       3: required BloomFilterHash hash;                union { 1: XXHASH (empty struct) }
 *       4: required BloomFilterCompression compression;  union { 1: UNCOMPRESSED (empty struct) }
 *     }
 *
 * The compact protocol (Apache Thrift, "Thrift Compact protocol encoding"):
 * a struct is its fields then a stop byte 0x00; a field starts with one
 * byte, the id's increase over the previous field's id in the high nibble
 * (1..15) and the type in the low one (a high nibble of 0 puts the id
 * after the type, as a zigzag varint); an i32 is a zigzag varint (n << 1 ^
 * n >> 31, then 7 bits per byte, low first, the top bit saying "more").
 * A union is a struct with exactly one field.  So numBytes = 1024 is
 *
 *     15 80 10   1c 1c 00 00   1c 1c 00 00   1c 1c 00 00   00
 *     i32 1024   algorithm     hash          compression   stop
 *
 * (16 bytes; 15 to 19 for the sizes Parquet allows).  Reading treats the
 * bytes as hostile: every read is bounded by the input, varints by their
 * longest legal length, nesting by THRIFT_MAX_DEPTH; a field this version
 * does not know is skipped (a later format may add one), but an algorithm,
 * hash or compression other than the three above is refused
 * (BK_EUNSUPPORTED), since the bitset could not be read right.
 */

enum thrift_type {
    THRIFT_STOP = 0,
    THRIFT_TRUE = 1,
    THRIFT_FALSE = 2,
    THRIFT_BYTE = 3,
    THRIFT_I16 = 4,
    THRIFT_I32 = 5,
    THRIFT_I64 = 6,
    THRIFT_DOUBLE = 7,
    THRIFT_BINARY = 8,
    THRIFT_LIST = 9,
    THRIFT_SET = 10,
    THRIFT_MAP = 11,
    THRIFT_STRUCT = 12
};

#define THRIFT_MAX_DEPTH 8
#define HEADER_MAX_BYTES 20 /* field byte, 5-byte varint, 3 x 4 union bytes, stop */

/* The header's three unions, each holding field 1, an empty struct. */
static const uint8_t header_unions[12] = { 0x1c, 0x1c, 0x00, 0x00, 0x1c, 0x1c,
                                           0x00, 0x00, 0x1c, 0x1c, 0x00, 0x00 };

/* Writes the header for a bitset of `num_bytes` (< 2^31) into out (at
 * least HEADER_MAX_BYTES); returns its length. */
static size_t write_header(uint8_t *out, uint32_t num_bytes)
{
    size_t length = 0;
    out[length++] = 0x10 | THRIFT_I32; /* field 1 */
    uint32_t zigzag = num_bytes << 1;  /* num_bytes >= 0 */
    while (zigzag >= 0x80) {
        out[length++] = (uint8_t)(zigzag | 0x80);
        zigzag >>= 7;
    }
    out[length++] = (uint8_t)zigzag;
    memcpy(out + length, header_unions, sizeof header_unions); /* fields 2, 3, 4 */
    length += sizeof header_unions;
    out[length++] = THRIFT_STOP;
    return length;
}

typedef struct thrift_reader {
    const uint8_t *bytes;
    size_t size, position;
} thrift_reader;

static bk_status read_byte(thrift_reader *r, uint8_t *out)
{
    if (r->position >= r->size)
        return BK_ETRUNCATED;
    *out = r->bytes[r->position++];
    return BK_OK;
}

static bk_status skip_bytes(thrift_reader *r, uint64_t count)
{
    if (count > r->size - r->position)
        return BK_ETRUNCATED;
    r->position += (size_t)count;
    return BK_OK;
}

/* An unsigned varint of at most `max_bits` bits (32 or 64); one carrying
 * more bits, or running past the bytes such a value needs, is BK_ECORRUPT. */
static bk_status read_varint(thrift_reader *r, unsigned max_bits, uint64_t *out)
{
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t byte;
        bk_status status = read_byte(r, &byte);
        if (status != BK_OK)
            return status;
        if (shift >= max_bits || (shift > max_bits - 7 && (byte & 0x7f) >> (max_bits - shift)))
            return BK_ECORRUPT;
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            break;
    }
    *out = value;
    return BK_OK;
}

static int64_t unzigzag(uint64_t value) { return (int64_t)(value >> 1) ^ -(int64_t)(value & 1); }

/* The next field's type and id (type THRIFT_STOP at the struct's end);
 * *last_id is the previous field's id, updated. */
static bk_status read_field_header(thrift_reader *r, int32_t *last_id, uint8_t *type,
                                   int32_t *id)
{
    uint8_t byte;
    bk_status status = read_byte(r, &byte);
    if (status != BK_OK)
        return status;
    *type = byte & 0x0f;
    if (*type == THRIFT_STOP)
        return byte == THRIFT_STOP ? BK_OK : BK_ECORRUPT;
    if (*type > THRIFT_STRUCT)
        return BK_ECORRUPT;
    if (byte >> 4) {
        *id = *last_id + (byte >> 4);
    } else {
        uint64_t raw;
        status = read_varint(r, 32, &raw);
        if (status != BK_OK)
            return status;
        int64_t value = unzigzag(raw);
        if (value < INT16_MIN || value > INT16_MAX)
            return BK_ECORRUPT;
        *id = (int32_t)value;
    }
    *last_id = *id;
    return BK_OK;
}

static bk_status skip_value(thrift_reader *r, uint8_t type, unsigned depth);

/* One element of a list, set or map: as a field's value, except that a
 * boolean takes a byte.  Every element thus takes at least a byte, so a
 * container's count can never make the reader loop longer than its input. */
static bk_status skip_element(thrift_reader *r, uint8_t type, unsigned depth)
{
    if (type == THRIFT_TRUE || type == THRIFT_FALSE)
        return skip_bytes(r, 1);
    return skip_value(r, type, depth);
}

/* The fields of a struct up to its stop byte, whatever they are; `depth`
 * is the struct's nesting level (the header's own fields are at 1). */
static bk_status skip_struct(thrift_reader *r, unsigned depth)
{
    if (depth >= THRIFT_MAX_DEPTH)
        return BK_ECORRUPT;
    int32_t last_id = 0, id;
    for (;;) {
        uint8_t type;
        bk_status status = read_field_header(r, &last_id, &type, &id);
        if (status != BK_OK || type == THRIFT_STOP)
            return status;
        status = skip_value(r, type, depth + 1);
        if (status != BK_OK)
            return status;
    }
}

/* A list or set: a byte with the count (15: a varint follows) and the
 * element type, then the elements. */
static bk_status skip_list(thrift_reader *r, unsigned depth)
{
    uint8_t byte;
    bk_status status = read_byte(r, &byte);
    if (status != BK_OK)
        return status;
    uint64_t count = byte >> 4;
    uint8_t type = byte & 0x0f;
    if (count == 15 && (status = read_varint(r, 32, &count)) != BK_OK)
        return status;
    if (type == THRIFT_STOP || type > THRIFT_STRUCT || depth >= THRIFT_MAX_DEPTH)
        return BK_ECORRUPT;
    for (uint64_t i = 0; i < count; i++)
        if ((status = skip_element(r, type, depth + 1)) != BK_OK)
            return status;
    return BK_OK;
}

static bk_status skip_map(thrift_reader *r, unsigned depth)
{
    uint64_t count;
    bk_status status = read_varint(r, 32, &count);
    if (status != BK_OK || count == 0)
        return status;
    uint8_t types;
    if ((status = read_byte(r, &types)) != BK_OK)
        return status;
    uint8_t key_type = types >> 4, value_type = types & 0x0f;
    if (key_type == THRIFT_STOP || key_type > THRIFT_STRUCT || value_type == THRIFT_STOP ||
        value_type > THRIFT_STRUCT || depth >= THRIFT_MAX_DEPTH)
        return BK_ECORRUPT;
    for (uint64_t i = 0; i < count; i++) {
        if ((status = skip_element(r, key_type, depth + 1)) != BK_OK ||
            (status = skip_element(r, value_type, depth + 1)) != BK_OK)
            return status;
    }
    return BK_OK;
}

/* Skips one value of `type` (a field this version does not know) at
 * nesting level `depth`: a container at THRIFT_MAX_DEPTH is BK_ECORRUPT. */
static bk_status skip_value(thrift_reader *r, uint8_t type, unsigned depth)
{
    uint64_t value;
    switch (type) {
    case THRIFT_TRUE:
    case THRIFT_FALSE: return BK_OK; /* a field's boolean is its type */
    case THRIFT_BYTE: return skip_bytes(r, 1);
    case THRIFT_I16:
    case THRIFT_I32: return read_varint(r, 32, &value);
    case THRIFT_I64: return read_varint(r, 64, &value);
    case THRIFT_DOUBLE: return skip_bytes(r, 8);
    case THRIFT_BINARY: {
        bk_status status = read_varint(r, 32, &value);
        return status != BK_OK ? status : skip_bytes(r, value);
    }
    case THRIFT_LIST:
    case THRIFT_SET: return skip_list(r, depth);
    case THRIFT_MAP: return skip_map(r, depth);
    case THRIFT_STRUCT: return skip_struct(r, depth);
    default: return BK_ECORRUPT;
    }
}

/* One of the header's unions, whose only member this version knows is
 * field 1, an empty struct (BLOCK, XXHASH, UNCOMPRESSED): another member
 * is BK_EUNSUPPORTED; an empty union, a second member or a member 1 that
 * is not a struct is BK_ECORRUPT. */
static bk_status read_union(thrift_reader *r)
{
    int32_t last_id = 0, member = 0, id = 0;
    uint8_t type;
    bk_status status = read_field_header(r, &last_id, &type, &member);
    if (status != BK_OK)
        return status;
    if (type == THRIFT_STOP)
        return BK_ECORRUPT;
    if (member != 1)
        return BK_EUNSUPPORTED;
    if (type != THRIFT_STRUCT)
        return BK_ECORRUPT;
    if ((status = skip_struct(r, 2)) != BK_OK)
        return status;
    if ((status = read_field_header(r, &last_id, &type, &id)) != BK_OK)
        return status;
    return type == THRIFT_STOP ? BK_OK : BK_ECORRUPT; /* a union has one member */
}

/* Reads a BloomFilterHeader: *num_bytes gets the bitset's length (a
 * multiple of 32 in [32 B, 128 MiB]) and r->position the bitset's start. */
static bk_status read_header(thrift_reader *r, uint32_t *num_bytes)
{
    bool seen[5] = { false };
    int32_t last_id = 0, id = 0;
    for (;;) {
        uint8_t type;
        bk_status status = read_field_header(r, &last_id, &type, &id);
        if (status != BK_OK)
            return status;
        if (type == THRIFT_STOP)
            break;
        if (id < 1 || id > 4) {
            if ((status = skip_value(r, type, 1)) != BK_OK)
                return status;
            continue;
        }
        if (seen[id] || type != (id == 1 ? THRIFT_I32 : THRIFT_STRUCT))
            return BK_ECORRUPT;
        seen[id] = true;
        if (id == 1) {
            uint64_t raw;
            if ((status = read_varint(r, 32, &raw)) != BK_OK)
                return status;
            int64_t value = unzigzag(raw);
            if (value < BK_SBBF_BLOCK_BYTES || value > (int64_t)BK_SBBF_PARQUET_MAX_BYTES ||
                value % BK_SBBF_BLOCK_BYTES != 0)
                return BK_ECORRUPT;
            *num_bytes = (uint32_t)value;
        } else if ((status = read_union(r)) != BK_OK) {
            return status;
        }
    }
    return seen[1] && seen[2] && seen[3] && seen[4] ? BK_OK : BK_ECORRUPT;
}

/* ------------------------------------------------------------------------ */
/* Parquet interchange through the generic handle                           */
/* ------------------------------------------------------------------------ */

bk_status bk_sbbf_to_parquet(const bk_filter *handle, bk_parquet_form form, void *buffer,
                             size_t size, size_t *written)
{
    if (handle == NULL || written == NULL ||
        (form != BK_PARQUET_BITSET && form != BK_PARQUET_WITH_HEADER))
        return BK_EINVAL;
    const bk_sbbf *filter = bk_filter_object_of(handle, BK_KIND_SBBF);
    if (filter == NULL)
        return BK_EKIND;
    bk_status status = check_parquet_readable(filter);
    if (status != BK_OK)
        return status;
    size_t bitset_size = payload_bytes(filter->block_count);
    uint8_t header[HEADER_MAX_BYTES];
    size_t header_size = form == BK_PARQUET_WITH_HEADER
                             ? write_header(header, (uint32_t)bitset_size)
                             : 0;
    if (buffer == NULL) {
        *written = header_size + bitset_size;
        return BK_OK;
    }
    if (size < header_size + bitset_size)
        return BK_ERANGE;
    memcpy(buffer, header, header_size);
    store_words((uint8_t *)buffer + header_size, filter->words,
                (size_t)filter->block_count * BK_SBBF_WORDS);
    *written = header_size + bitset_size;
    return BK_OK;
}

bk_status bk_sbbf_from_parquet(const void *bytes, size_t size, bk_parquet_form form,
                               uint64_t capacity, bk_filter **out, size_t *consumed)
{
    if (bytes == NULL || out == NULL ||
        (form != BK_PARQUET_BITSET && form != BK_PARQUET_WITH_HEADER))
        return BK_EINVAL;
    thrift_reader reader = { bytes, size, 0 };
    uint64_t bitset_size = size;
    if (form == BK_PARQUET_WITH_HEADER) {
        uint32_t num_bytes = 0;
        bk_status status = read_header(&reader, &num_bytes);
        if (status != BK_OK)
            return status;
        if (num_bytes > size - reader.position)
            return BK_ETRUNCATED;
        bitset_size = num_bytes;
    } else if (size == 0 || size % BK_SBBF_BLOCK_BYTES != 0 ||
               size > BK_SBBF_PARQUET_MAX_BYTES) {
        return BK_EINVAL;
    }
    bk_sbbf *filter;
    bk_status status = filter_from_bitset((const uint8_t *)bytes + reader.position,
                                          bitset_size / BK_SBBF_BLOCK_BYTES, capacity, &filter);
    if (status != BK_OK)
        return status;
    status = bk_filter_wrap(&bk_sbbf_ops, filter, out);
    if (status != BK_OK) {
        sbbf_destroy(filter);
        return status;
    }
    if (consumed != NULL)
        *consumed = reader.position + (size_t)bitset_size;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The kind's adapter: bk_filter dispatch and the file format               */
/* ------------------------------------------------------------------------ */

/*
 * Parameter block (32 bytes, little-endian; docs/BLOCKED.md):
 *     0  u64  block count      8  u32  hashes (8)     12  u32  block bits (256)
 *    16  u64  capacity        24  f64  target FPR (predicted at capacity)
 * Payload: block count x 32 bytes: the Parquet bitset exactly (each 32-bit
 * word little-endian).
 */
#define SBBF_PARAMS_SIZE 32

static size_t ops_params_size(const void *filter)
{
    (void)filter;
    return SBBF_PARAMS_SIZE;
}

static void ops_write_params(const void *object, uint8_t *out)
{
    const bk_sbbf *filter = object;
    bk_store_le64(out, filter->block_count);
    bk_store_le32(out + 8, SBBF_HASHES);
    bk_store_le32(out + 12, SBBF_BLOCK_BITS);
    bk_store_le64(out + 16, filter->capacity);
    bk_store_le_double(out + 24, filter->target_fpr);
}

static uint64_t ops_payload_size(const void *object)
{
    return payload_bytes(((const bk_sbbf *)object)->block_count);
}

static void ops_write_payload(const void *object, uint8_t *out)
{
    const bk_sbbf *filter = object;
    store_words(out, filter->words, (size_t)filter->block_count * BK_SBBF_WORDS);
}

static bk_status ops_read(const uint8_t *params, size_t params_size, const uint8_t *payload,
                          uint64_t payload_size, const bk_hasher *hasher, uint64_t keys_added,
                          bool in_place, void **out)
{
    if (params_size != SBBF_PARAMS_SIZE)
        return BK_ECORRUPT;
    sbbf_design design;
    design.block_count = bk_load_le64(params);
    uint32_t hashes = bk_load_le32(params + 8);
    uint32_t block_bits = bk_load_le32(params + 12);
    design.capacity = bk_load_le64(params + 16);
    design.predicted_fpr = bk_load_le_double(params + 24);
    if (hashes != SBBF_HASHES || block_bits != SBBF_BLOCK_BITS || design.block_count == 0 ||
        design.capacity == 0 || !bk_stored_fpr_valid(design.predicted_fpr))
        return BK_ECORRUPT;
    if (design.block_count > BK_SBBF_MAX_BLOCKS)
        return BK_ERANGE;
    if (payload_size != (uint64_t)design.block_count * BK_SBBF_BLOCK_BYTES)
        return BK_ECORRUPT;
    bk_sbbf *filter;
    uint32_t *borrowed = in_place ? (uint32_t *)(uintptr_t)payload : NULL;
    bk_status status = create_from_design(&design, hasher, 0, borrowed, &filter);
    if (status != BK_OK)
        return status;
    if (!in_place)
        load_words(filter->words, payload, (size_t)design.block_count * BK_SBBF_WORDS);
    filter->keys_added = keys_added;
    *out = filter;
    return BK_OK;
}

static bk_status ops_design(const bk_params *params, bk_stats *out)
{
    sbbf_design design;
    bk_status status = design_from_params(params, &design);
    if (status != BK_OK)
        return status;
    bk_hasher hasher;
    status = hasher_from_params(params, &hasher);
    if (status != BK_OK)
        return status;
    memset(out, 0, sizeof *out);
    out->kind = BK_KIND_SBBF;
    out->bits = design.block_count * SBBF_BLOCK_BITS;
    out->hashes = SBBF_HASHES;
    out->bytes = payload_bytes(design.block_count);
    out->capacity = design.capacity;
    out->target_fpr = design.predicted_fpr;
    out->bits_per_key = (double)out->bits / (double)design.capacity;
    out->design_fill_ratio = bk_split_block_expected_fill(
        (double)design.capacity / (double)design.block_count, BK_SBBF_WORD_BITS);
    out->hash_algorithm = hasher.algorithm;
    return BK_OK;
}

const bk_kind_ops bk_sbbf_ops = {
    .kind = BK_KIND_SBBF,
    .name = "sbbf",
    .concurrent_adds = true,
    .kind_flags = BK_FLAG_PARQUET_SIZE,
    .create = sbbf_create,
    .destroy = sbbf_destroy,
    .copy = sbbf_copy,
    .clear = sbbf_clear,
    .hasher = sbbf_hasher,
    .add_hash = sbbf_add_hash,
    .contains_hash = sbbf_contains_hash,
#ifdef BK_HAVE_AVX2_SOURCES
    .contains_key = bk_sbbf_avx2_contains_key,
    .add_key = bk_sbbf_avx2_add_key,
    .contains_u64 = bk_sbbf_avx2_contains_u64,
    .add_u64 = bk_sbbf_avx2_add_u64,
#else
    .contains_key = bk_sbbf_contains_key_portable,
    .add_key = bk_sbbf_add_key_portable,
    .contains_u64 = bk_sbbf_contains_u64_portable,
    .add_u64 = bk_sbbf_add_u64_portable,
#endif
    .add_hash_batch = sbbf_add_hash_batch,
    .contains_hash_batch = sbbf_contains_hash_batch,
    .union_with = sbbf_union,
    .intersect_with = sbbf_intersect,
    .estimate_sets = sbbf_estimate_sets,
    .stats = sbbf_stats,
    .design = ops_design,
    .params_size = ops_params_size,
    .write_params = ops_write_params,
    .payload_size = ops_payload_size,
    .write_payload = ops_write_payload,
    .read = ops_read,
};
