/*
 * src/counting.c -- the counting Bloom filter: 4-bit saturating counters.
 *
 * The idea (Fan, Cao, Almeida & Broder, "Summary cache: a scalable
 * wide-area Web cache sharing protocol", IEEE/ACM ToN 8(3), 2000): a Bloom
 * filter cannot remove a key because a set bit may belong to several keys.
 * Replace each bit by a small counter: add increments the key's k counters,
 * remove decrements them, and a counter shared by several keys stays
 * positive while any of them remains.  "Counter > 0" plays the part of
 * "bit set", so contains, the false-positive rate, the sizing and the
 * fill-based estimates are exactly the classic filter's (src/sizing.c):
 *
 *     p ~ (1 - e^{-kn/m})^k,   n ~ -(m/k) ln(1 - nonzero/m)
 *
 * The price is the counter width: 4 bits, four times the classic filter.
 *
 * Why 4 bits, and saturation.  With k = (m/n) ln 2 the load of one counter
 * is ~ Poisson(ln 2), and Fan et al. bound
 *
 *     P(some counter >= i) <= m (e ln 2 / i)^i
 *
 * so a counter reaches 15 with probability <= 3.1e-14 and 16 with <= 1.4e-15.
 * When it does anyway (usually: one key added many times), the counter
 * SATURATES: it stays at 15 and is never decremented, because from then on
 * the number of keys on it is unknown; decrementing could reach zero while
 * keys remain, a false negative.  A stuck counter only leaves a little
 * false-positive rate behind.  saturated_counters counts them.
 *
 * Removing a key that was never added.  If any of its counters is zero the
 * key is certainly absent: remove changes nothing and says BK_ENOTFOUND.
 * But a false positive -- all counters non-zero by coincidence -- cannot be
 * told from a present key, and removing it decrements other keys' counters,
 * which can create false negatives (Fan et al. 2000; the demonstration in
 * examples/counting_delete.c).  remove is only safe for keys known present.
 *
 * A key's probes may repeat a position (double hashing into a small m); it
 * then adds 2 to that counter, and remove subtracts 2.  Should a counter
 * run out before its last probe (only possible for a key never added),
 * remove undoes its own decrements and reports BK_ENOTFOUND: it never
 * underflows a counter and never half-removes a key.
 *
 * Memory layout: m counters packed two per byte, counter i in byte i/2,
 * low nibble for even i, high nibble for odd i; the unused high nibble of
 * the last byte (odd m) is always 0.  The array is allocated 64-byte
 * aligned; the fill statistics read it 16 counters (8 bytes) at a time,
 * the tail byte by byte, so a mapped payload of any length works too.
 *
 *     byte:      [  0  ][  1  ][  2  ] ...  [ (m-1)/2 ]
 *     nibbles:   c1|c0  c3|c2  c5|c4  ...   (0)|c_{m-1}
 *                hi lo
 *
 * Probe positions are the classic filter's (bk_probe_* over m), so the
 * classic filter obtained by bk_counting_to_bloom (bit i = counter i > 0)
 * answers every query identically.
 *
 * Measured (tests/test_counting.c, examples/counting_delete.c; release):
 *   - 20,000 keys at p = 1%: m = 191,702 counters (93.6 KiB, against
 *     23.4 KiB for the classic filter), k = 7; 200,000 absent queries:
 *     FPR 1.0015%, predicted from the fill 1.0048%, design 1.0039%.
 *   - The deletion demonstration (m = 624, k = 4, keys in0..in99): after
 *     removing in7, the first false positive is out9; removing it makes
 *     in6 and in11 absent.
 */
#include "bloomkit/counting.h"

#include <stdlib.h>
#include <string.h>

#include "bloom.h"
#include "endian.h"
#include "filter.h"
#include "hash.h"
#include "memory.h"

#define BATCH_CHUNK 16
#define NIBBLE_LOW_BITS 0x1111111111111111ULL

typedef struct bk_counting {
    uint8_t *bytes;      /* ceil(m/2) bytes of counters (allocated: padded to 8) */
    size_t byte_count;   /* ceil(m/2) */
    size_t alloc_bytes;  /* bytes allocated (0 when borrowed) */
    uint64_t counters;   /* m */
    unsigned hashes;     /* k */
    uint64_t capacity;   /* design n */
    double target_fpr;   /* predicted FPR at capacity */
    uint64_t keys_added; /* adds minus removes */
    bk_hasher hasher;
    bool borrowed; /* bytes belong to a mapped file: read-only */
} bk_counting;

/* ------------------------------------------------------------------------ */
/* Counters                                                                 */
/* ------------------------------------------------------------------------ */

static inline unsigned counter_get(const uint8_t *bytes, uint64_t index)
{
    return (bytes[index >> 1] >> ((index & 1) * 4)) & 0xf;
}

static inline void counter_set(uint8_t *bytes, uint64_t index, unsigned value)
{
    unsigned shift = (unsigned)(index & 1) * 4;
    uint8_t *byte = &bytes[index >> 1];
    *byte = (uint8_t)((*byte & ~(0xfu << shift)) | (value << shift));
}

static size_t bytes_for_counters(uint64_t counters) { return (size_t)((counters + 1) / 2); }

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

static bk_status check_sizing(const bk_sizing *sizing)
{
    if (sizing->bits == 0 || sizing->hashes == 0 || sizing->capacity == 0)
        return BK_ERANGE;
    if (sizing->bits > BK_MAX_BITS / BK_COUNTING_COUNTER_BITS || sizing->hashes > BK_MAX_HASHES)
        return BK_ERANGE;
    return BK_OK;
}

/* A filter of the given design (sizing->bits = m counters).  With `borrowed`
 * NULL the counters are allocated and zeroed; otherwise the filter reads
 * those ceil(m/2) bytes in place and is read-only. */
static bk_status create_from_sizing(const bk_sizing *sizing, const bk_hasher *hasher,
                                    uint8_t *borrowed, bk_counting **out)
{
    bk_status status = check_sizing(sizing);
    if (status != BK_OK)
        return status;
    bk_counting *filter = calloc(1, sizeof *filter);
    if (filter == NULL)
        return BK_ENOMEM;
    filter->byte_count = bytes_for_counters(sizing->bits);
    if (borrowed != NULL) {
        filter->bytes = borrowed;
        filter->borrowed = true;
    } else {
        filter->alloc_bytes = (filter->byte_count + 7) & ~(size_t)7;
        filter->bytes = bk_alloc_zeroed(filter->alloc_bytes);
        if (filter->bytes == NULL) {
            free(filter);
            return BK_ENOMEM;
        }
    }
    filter->counters = sizing->bits;
    filter->hashes = sizing->hashes;
    filter->capacity = sizing->capacity;
    filter->target_fpr = sizing->predicted_fpr;
    filter->hasher = *hasher;
    *out = filter;
    return BK_OK;
}

static bk_status sizing_from_params(const bk_params *params, bk_sizing *sizing)
{
    bk_status status = bk_size_from_params(params, sizing);
    if (status != BK_OK)
        return status;
    return check_sizing(sizing);
}

static bk_status ops_create(const bk_params *params, void **out)
{
    bk_sizing sizing;
    bk_status status = sizing_from_params(params, &sizing);
    if (status != BK_OK)
        return status;
    bk_hasher hasher;
    status = bk_hasher_from_params(&hasher, params);
    if (status != BK_OK)
        return status;
    return create_from_sizing(&sizing, &hasher, NULL, (bk_counting **)out);
}

static void ops_destroy(void *object)
{
    bk_counting *filter = object;
    if (!filter->borrowed)
        bk_free_zeroed(filter->bytes, filter->alloc_bytes);
    memset(&filter->hasher, 0, sizeof filter->hasher); /* do not leave the key behind */
    free(filter);
}

static bk_sizing sizing_of(const bk_counting *filter)
{
    bk_sizing sizing;
    memset(&sizing, 0, sizeof sizing);
    sizing.capacity = filter->capacity;
    sizing.bits = filter->counters;
    sizing.hashes = filter->hashes;
    sizing.predicted_fpr = filter->target_fpr;
    return sizing;
}

static bk_status ops_copy(const void *object, void **out)
{
    const bk_counting *filter = object;
    bk_sizing sizing = sizing_of(filter);
    bk_counting *copy;
    bk_status status = create_from_sizing(&sizing, &filter->hasher, NULL, &copy);
    if (status != BK_OK)
        return status;
    memcpy(copy->bytes, filter->bytes, filter->byte_count);
    copy->keys_added = filter->keys_added;
    *out = copy;
    return BK_OK;
}

static bk_status ops_clear(void *object)
{
    bk_counting *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    memset(filter->bytes, 0, filter->byte_count);
    filter->keys_added = 0;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The hot path                                                             */
/* ------------------------------------------------------------------------ */

/* Increments the key's k counters (saturating); returns whether any was 0. */
static inline bool increment_counters(bk_counting *filter, bk_hash hash)
{
    bk_probe probe = bk_probe_start(hash);
    bool some_zero = false;
    for (unsigned i = 0; i < filter->hashes; i++) {
        uint64_t position = bk_probe_next(&probe, filter->counters);
        unsigned value = counter_get(filter->bytes, position);
        some_zero |= value == 0;
        if (value < BK_COUNTING_MAX)
            counter_set(filter->bytes, position, value + 1);
    }
    return some_zero;
}

static inline bool all_counters_positive(const bk_counting *filter, bk_hash hash)
{
    bk_probe probe = bk_probe_start(hash);
    for (unsigned i = 0; i < filter->hashes; i++)
        if (counter_get(filter->bytes, bk_probe_next(&probe, filter->counters)) == 0)
            return false;
    return true;
}

static inline unsigned min_counter(const bk_counting *filter, bk_hash hash)
{
    bk_probe probe = bk_probe_start(hash);
    unsigned least = BK_COUNTING_MAX;
    for (unsigned i = 0; i < filter->hashes && least > 0; i++) {
        unsigned value = counter_get(filter->bytes, bk_probe_next(&probe, filter->counters));
        if (value < least)
            least = value;
    }
    return least;
}

static inline void prefetch_counters(const bk_counting *filter, bk_hash hash)
{
    bk_probe probe = bk_probe_start(hash);
    for (unsigned i = 0; i < filter->hashes; i++)
        __builtin_prefetch(&filter->bytes[bk_probe_next(&probe, filter->counters) >> 1]);
}

static bool any_counter_zero(const bk_counting *filter, const uint64_t *positions)
{
    for (unsigned i = 0; i < filter->hashes; i++)
        if (counter_get(filter->bytes, positions[i]) == 0)
            return true;
    return false;
}

/* Decrements the unsaturated counters at positions[0..k).  If a position
 * repeated more often than its counter holds, the decrements made so far
 * are undone (in reverse order: a decremented counter is at most 13, a
 * skipped one stays 15) and false is returned: nothing has changed. */
static bool decrement_all_or_nothing(bk_counting *filter, const uint64_t *positions)
{
    for (unsigned i = 0; i < filter->hashes; i++) {
        unsigned value = counter_get(filter->bytes, positions[i]);
        if (value == 0) {
            while (i-- > 0) {
                unsigned undo = counter_get(filter->bytes, positions[i]);
                if (undo != BK_COUNTING_MAX)
                    counter_set(filter->bytes, positions[i], undo + 1);
            }
            return false;
        }
        if (value != BK_COUNTING_MAX)
            counter_set(filter->bytes, positions[i], value - 1);
    }
    return true;
}

static bk_status ops_add_hash(void *object, bk_hash hash, bool *was_new)
{
    bk_counting *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    bool fresh = increment_counters(filter, hash);
    filter->keys_added = bk_saturating_add(filter->keys_added, 1);
    if (was_new != NULL)
        *was_new = fresh;
    return BK_OK;
}

static bk_status ops_remove_hash(void *object, bk_hash hash)
{
    bk_counting *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    uint64_t positions[BK_MAX_HASHES];
    bk_probe probe = bk_probe_start(hash);
    for (unsigned i = 0; i < filter->hashes; i++)
        positions[i] = bk_probe_next(&probe, filter->counters);
    if (any_counter_zero(filter, positions) || !decrement_all_or_nothing(filter, positions))
        return BK_ENOTFOUND;
    if (filter->keys_added > 0)
        filter->keys_added--;
    return BK_OK;
}

static bool ops_contains_hash(const void *filter, bk_hash hash)
{
    return all_counters_positive(filter, hash);
}

static bool ops_contains_key(const void *object, const void *key, size_t len)
{
    const bk_counting *filter = object;
    return all_counters_positive(filter, bk_hash_inline(&filter->hasher, key, len));
}

static bk_status ops_count_hash(const void *filter, bk_hash hash, uint64_t *count)
{
    *count = min_counter(filter, hash);
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Batches: hash a chunk, prefetch its counters, then probe                 */
/* ------------------------------------------------------------------------ */

static size_t add_chunk(bk_counting *filter, const bk_hash *hashes, size_t count)
{
    size_t fresh = 0;
    for (size_t i = 0; i < count; i++)
        prefetch_counters(filter, hashes[i]);
    for (size_t i = 0; i < count; i++)
        fresh += increment_counters(filter, hashes[i]);
    filter->keys_added = bk_saturating_add(filter->keys_added, count);
    return fresh;
}

static size_t test_chunk(const bk_counting *filter, const bk_hash *hashes, size_t count,
                         bool *results)
{
    size_t present = 0;
    for (size_t i = 0; i < count; i++)
        prefetch_counters(filter, hashes[i]);
    for (size_t i = 0; i < count; i++) {
        bool found = all_counters_positive(filter, hashes[i]);
        present += found;
        if (results != NULL)
            results[i] = found;
    }
    return present;
}

static inline size_t chunk_length(size_t count, size_t start)
{
    return count - start < BATCH_CHUNK ? count - start : BATCH_CHUNK;
}

static bk_status ops_add_hash_batch(void *object, const bk_hash *hashes, size_t count,
                                    size_t *new_count)
{
    bk_counting *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    size_t fresh = 0;
    for (size_t start = 0; start < count; start += BATCH_CHUNK)
        fresh += add_chunk(filter, hashes + start, chunk_length(count, start));
    *new_count = fresh;
    return BK_OK;
}

static size_t ops_contains_hash_batch(const void *filter, const bk_hash *hashes, size_t count,
                                      bool *results)
{
    size_t present = 0;
    for (size_t start = 0; start < count; start += BATCH_CHUNK)
        present += test_chunk(filter, hashes + start, chunk_length(count, start),
                              results ? results + start : NULL);
    return present;
}

/* ------------------------------------------------------------------------ */
/* Parameters, fill and estimates                                           */
/* ------------------------------------------------------------------------ */

typedef struct counter_census {
    uint64_t nonzero;
    uint64_t saturated;
} counter_census;

/* Counts non-zero and saturated counters 16 at a time: a nibble is non-zero
 * when the OR of its four bits is 1, saturated when their AND is 1. */
static counter_census take_census(const bk_counting *filter)
{
    counter_census census = { 0, 0 };
    size_t whole_words = filter->byte_count / 8;
    for (size_t w = 0; w < whole_words; w++) {
        uint64_t word;
        memcpy(&word, filter->bytes + 8 * w, 8); /* nibble order is irrelevant here */
        uint64_t any = (word | word >> 1 | word >> 2 | word >> 3) & NIBBLE_LOW_BITS;
        uint64_t all = (word & word >> 1 & word >> 2 & word >> 3) & NIBBLE_LOW_BITS;
        census.nonzero += (uint64_t)__builtin_popcountll(any);
        census.saturated += (uint64_t)__builtin_popcountll(all);
    }
    for (uint64_t i = (uint64_t)whole_words * 16; i < filter->counters; i++) {
        unsigned value = counter_get(filter->bytes, i);
        census.nonzero += value != 0;
        census.saturated += value == BK_COUNTING_MAX;
    }
    return census;
}

/* The design fields shared by stats and the design hook. */
static void fill_design(const bk_sizing *sizing, bk_hash_algorithm algorithm, bk_stats *out)
{
    memset(out, 0, sizeof *out);
    out->kind = BK_KIND_COUNTING;
    out->bits = sizing->bits * BK_COUNTING_COUNTER_BITS;
    out->hashes = sizing->hashes;
    out->bytes = bytes_for_counters(sizing->bits);
    out->capacity = sizing->capacity;
    out->target_fpr = sizing->predicted_fpr;
    out->bits_per_key = (double)out->bits / (double)sizing->capacity;
    out->design_fill_ratio = bk_expected_fill(sizing->capacity, sizing->bits, sizing->hashes);
    out->hash_algorithm = algorithm;
}

static void ops_stats(const void *object, bk_stats *out)
{
    const bk_counting *filter = object;
    bk_sizing sizing = sizing_of(filter);
    bk_stats s;
    fill_design(&sizing, filter->hasher.algorithm, &s);
    counter_census census = take_census(filter);
    s.keys_added = filter->keys_added;
    s.keys_estimated = bk_estimate_keys(filter->counters, filter->hashes, census.nonzero);
    s.fill_ratio = (double)census.nonzero / (double)filter->counters;
    s.current_fpr = bk_fpr_from_fill(s.fill_ratio, filter->hashes);
    s.past_design_point = bk_fill_past_design_point(s.fill_ratio, filter->capacity,
                                                    filter->counters, filter->hashes);
    s.design_point_keys = bk_design_point_keys(filter->capacity, filter->counters,
                                               filter->hashes);
    s.saturated_counters = census.saturated;
    s.seed = filter->hasher.seed;
    *out = s;
}

/* ------------------------------------------------------------------------ */
/* Union and conversion                                                     */
/* ------------------------------------------------------------------------ */

static bool compatible(const bk_counting *a, const bk_counting *b)
{
    return a->counters == b->counters && a->hashes == b->hashes &&
           bk_hasher_equal(&a->hasher, &b->hasher);
}

static inline unsigned saturating_sum(unsigned a, unsigned b)
{
    return a + b > BK_COUNTING_MAX ? BK_COUNTING_MAX : a + b;
}

static bk_status ops_union(void *dst_object, const void *src_object)
{
    bk_counting *dst = dst_object;
    const bk_counting *src = src_object;
    if (!compatible(dst, src))
        return BK_EINCOMPATIBLE;
    if (dst->borrowed)
        return BK_EIMMUTABLE;
    for (size_t i = 0; i < dst->byte_count; i++) {
        unsigned low = saturating_sum(dst->bytes[i] & 0xfu, src->bytes[i] & 0xfu);
        unsigned high = saturating_sum(dst->bytes[i] >> 4, src->bytes[i] >> 4);
        dst->bytes[i] = (uint8_t)(low | high << 4);
    }
    dst->keys_added = bk_saturating_add(dst->keys_added, src->keys_added);
    return BK_OK;
}

bk_status bk_counting_counter(const bk_filter *handle, uint64_t index, unsigned *value)
{
    const bk_counting *filter = bk_filter_object_of(handle, BK_KIND_COUNTING);
    if (handle == NULL || value == NULL)
        return BK_EINVAL;
    if (filter == NULL)
        return BK_EKIND;
    if (index >= filter->counters)
        return BK_ERANGE;
    *value = counter_get(filter->bytes, index);
    return BK_OK;
}

bk_status bk_counting_to_bloom(const bk_filter *handle, bk_filter **out)
{
    const bk_counting *filter = bk_filter_object_of(handle, BK_KIND_COUNTING);
    if (handle == NULL || out == NULL)
        return BK_EINVAL;
    if (filter == NULL)
        return BK_EKIND;
    bk_sizing sizing = sizing_of(filter);
    bk_bloom *bloom;
    bk_status status = bk_bloom_create_from_sizing(&sizing, &filter->hasher, 0, NULL, &bloom);
    if (status != BK_OK)
        return status;
    for (uint64_t i = 0; i < filter->counters; i++)
        if (counter_get(filter->bytes, i) != 0)
            bloom->words[i >> 6] |= (uint64_t)1 << (i & 63);
    bloom->keys_added = filter->keys_added;
    status = bk_filter_wrap(&bk_bloom_ops, bloom, out);
    if (status != BK_OK)
        bk_bloom_ops.destroy(bloom);
    return status;
}

/* ------------------------------------------------------------------------ */
/* The kind's adapter: bk_filter dispatch and the file format               */
/* ------------------------------------------------------------------------ */

/*
 * Parameter block (32 bytes, little-endian; docs/DELETION.md "File format"):
 *     0  u64  counters (m)    8  u32  hashes (k)     12  u32  counter bits, 4
 *    16  u64  capacity       24  f64  target FPR (design FPR at capacity)
 * Payload: ceil(m/2) bytes, counter i in byte i/2, low nibble for even i;
 * for odd m the high nibble of the last byte is 0.  Bytes have no
 * endianness, so a mapped file is read in place on any host.
 */
#define COUNTING_PARAMS_SIZE 32

static size_t ops_params_size(const void *filter)
{
    (void)filter;
    return COUNTING_PARAMS_SIZE;
}

static void ops_write_params(const void *object, uint8_t *out)
{
    const bk_counting *filter = object;
    bk_store_le64(out, filter->counters);
    bk_store_le32(out + 8, filter->hashes);
    bk_store_le32(out + 12, BK_COUNTING_COUNTER_BITS);
    bk_store_le64(out + 16, filter->capacity);
    bk_store_le_double(out + 24, filter->target_fpr);
}

static uint64_t ops_payload_size(const void *object)
{
    return ((const bk_counting *)object)->byte_count;
}

static void ops_write_payload(const void *object, uint8_t *out)
{
    const bk_counting *filter = object;
    memcpy(out, filter->bytes, filter->byte_count);
}

static bk_status ops_read(const uint8_t *params, size_t params_size, const uint8_t *payload,
                          uint64_t payload_size, const bk_hasher *hasher, uint64_t keys_added,
                          bool in_place, void **out)
{
    if (params_size != COUNTING_PARAMS_SIZE)
        return BK_ECORRUPT;
    bk_sizing sizing;
    memset(&sizing, 0, sizeof sizing);
    sizing.bits = bk_load_le64(params);
    sizing.hashes = bk_load_le32(params + 8);
    sizing.capacity = bk_load_le64(params + 16);
    sizing.predicted_fpr = bk_load_le_double(params + 24);
    if (bk_load_le32(params + 12) != BK_COUNTING_COUNTER_BITS || sizing.bits == 0 ||
        sizing.hashes == 0 || sizing.capacity == 0 || !bk_stored_fpr_valid(sizing.predicted_fpr))
        return BK_ECORRUPT;
    if (check_sizing(&sizing) != BK_OK)
        return BK_ERANGE;
    if (payload_size != bytes_for_counters(sizing.bits))
        return BK_ECORRUPT;
    if ((sizing.bits & 1) && (payload[payload_size - 1] >> 4) != 0)
        return BK_ECORRUPT;
    bk_counting *filter;
    uint8_t *borrowed = in_place ? (uint8_t *)(uintptr_t)payload : NULL;
    bk_status status = create_from_sizing(&sizing, hasher, borrowed, &filter);
    if (status != BK_OK)
        return status;
    if (!in_place)
        memcpy(filter->bytes, payload, filter->byte_count);
    filter->keys_added = keys_added;
    *out = filter;
    return BK_OK;
}

static const bk_hasher *ops_hasher(const void *filter)
{
    return &((const bk_counting *)filter)->hasher;
}

static bk_status ops_design(const bk_params *params, bk_stats *out)
{
    bk_sizing sizing;
    bk_status status = sizing_from_params(params, &sizing);
    if (status != BK_OK)
        return status;
    fill_design(&sizing, params->hash_algorithm, out);
    return BK_OK;
}

const bk_kind_ops bk_counting_ops = {
    .kind = BK_KIND_COUNTING,
    .name = "counting",
    .create = ops_create,
    .destroy = ops_destroy,
    .copy = ops_copy,
    .clear = ops_clear,
    .hasher = ops_hasher,
    .add_hash = ops_add_hash,
    .contains_hash = ops_contains_hash,
    .contains_key = ops_contains_key,
    .remove_hash = ops_remove_hash,
    .count_hash = ops_count_hash,
    .add_hash_batch = ops_add_hash_batch,
    .contains_hash_batch = ops_contains_hash_batch,
    .union_with = ops_union,
    .stats = ops_stats,
    .design = ops_design,
    .params_size = ops_params_size,
    .write_params = ops_write_params,
    .payload_size = ops_payload_size,
    .write_payload = ops_write_payload,
    .read = ops_read,
};
