/*
 * src/fuse.c -- static filters: xor filters and binary fuse filters.
 *
 * The idea (Graf & Lemire, "Xor Filters: Faster and Smaller Than Bloom and
 * Cuckoo Filters", JEA 2020; "Binary Fuse Filters: Fast and Smaller Than
 * Xor Filters", JEA 2022): keep an array of s small fingerprints (8 or 16
 * bits).  Each key x has a fingerprint f(x) and d = 3 (or 4) slots
 * h_0(x) .. h_{d-1}(x), and the array is filled so that for every key of the
 * set
 *
 *     f(x) = F[h_0(x)] ^ F[h_1(x)] ^ F[h_2(x)]   (^ F[h_3(x)] when d = 4)
 *
 * A query computes the right-hand side: equal for every key of the set (no
 * false negatives), equal by chance with probability 2^-w for any other key
 * (w = fingerprint bits).  Three or four loads, one compare, no branch.
 *
 * Construction is "peeling" a hypergraph whose vertices are slots and whose
 * edges are keys: a slot that only one key uses can be set last, after
 * every other slot of that key, to make that key's equation hold.  So:
 *   1. count, for every slot, the keys that use it, and xor their hashes
 *      together (a slot used by one key then holds that key's hash); the
 *      count shares its byte with the xor of the key's slot indexes j
 *      (count << 2 | xor j), so a slot left with one key also says which
 *      of that key's slots it is;
 *   2. one pass over the slots from last to first: a slot used by exactly
 *      one key gets (key, slot) pushed on a stack and the key removed from
 *      its other slots; a slot this leaves with one key is peeled at once
 *      (depth first, from a small "pending" stack) before the pass moves on;
 *   3. if every key was pushed, pop them in reverse order and set
 *      F[slot] = f(x) ^ (the key's other slots): a later-peeled key never
 *      touches a slot set before it.
 * Peeling succeeds with high probability when s is a little more than the
 * number of keys; if it fails (the remaining keys form a 2-core) the whole
 * build retries with another seed.
 *
 * Where the slots are (the two papers differ only here):
 *
 *   xor (2020):  three blocks of s/3 slots, one slot in each block,
 *                h_i = reduce(rotl(hash, 21 i), s/3) + i s/3;
 *                s = 1.23 n + 32 for peeling to succeed.
 *
 *   binary fuse (2022): s/L segments of L slots (L a power of two); a key
 *                picks a segment j, from 0 to segment_count-1, and uses one
 *                slot in each of the d consecutive segments j .. j+d-1:
 *
 *        segment:   0       1       2       3       4       5
 *                [.......|...x...|.x.....|.....x.|.......|.......]
 *                         h_0      h_1      h_2        (d = 3, j = 1)
 *
 *                h_0 = reduce(hash, segment_count * L) (segment j and an
 *                offset in it), h_i = (h_0 + i L) xor (offset_i(hash) mod L)
 *                which stays in segment j+i.  Keys that share a segment
 *                overlap a lot, which makes peeling succeed at a much
 *                smaller s: 1.125 n for d = 3, 1.075 n for d = 4 (large n).
 *
 *   Sizing (binary fuse paper, section 4; the constants are the paper's
 *   empirical fits), for n >= 2 distinct keys:
 *     d = 3:  L = 2^floor(ln n / ln 3.33 + 2.25)
 *             s >= n * max(1.125, 0.875 + 0.25 ln(10^6) / ln n)
 *     d = 4:  L = 2^floor(ln n / ln 2.91 - 0.5)
 *             s >= n * max(1.075, 0.77 + 0.305 ln(6 10^5) / ln n)
 *     L is kept within [4, 2^18]; segment_count = ceil(s/L) - (d-1) (at
 *     least 1) and the array has (segment_count + d - 1) L slots.
 *   Offsets: offset_1 = hash >> 18, offset_2 = hash (low bits), and for
 *   d = 4 offset_3 = top bits of hash * 0x9E3779B97F4A7C15 (our choice: a
 *   fourth independent-looking bit field without a second hash).
 *
 * Bits per key: w s / n, i.e. 1.23 w (xor), 1.125 w and 1.075 w (fuse) for
 * large n, against the lower bound w = log2(1/p) (Carter et al. 1978).
 *
 * Hashes.  Every key arrives as the 128-bit bk_hash.  An attempt with seed
 * a turns it into a 64-bit hash by one of two rules (bk_fuse_query_hash,
 * recorded in the filter and its file):
 *   unmixed (the first attempt):  h1 + a.  Every library hash makes h1
 *     uniform, so the query needs no more arithmetic than the slots':
 *     mixing again cost a fuse8 query a third of its time at 10^6 keys
 *     (docs/PERFORMANCE.md).
 *   mixed (retries):  mix64((h1 ^ rotl(h2, 32)) + a)  (bk_mix64), so each
 *     retry sees a fresh, independent-looking hypergraph, and hashes that a
 *     caller supplies need randomness in only one of their halves.  Every
 *     file written before the rule existed holds this rule.
 * A first attempt whose unmixed hashes tell fewer keys apart than the mixed
 * ones (caller hashes that differ in h2 only) gives way to the retries.
 * The fingerprint is the low w bits of hash ^ (hash >> 32).  Attempt seeds
 * are mix64(hash seed + attempt * golden ratio), except a MIX64 filter's
 * first, which is 0: MIX64's h1 already has the hash seed in it, and the
 * add it saves sits on an integer key's query path (0.3 ns of a 5 ns
 * query at 10^6 keys, docs/PERFORMANCE.md; files whose MIX64 first
 * attempt had a seed are queried with it).  Deterministic either way: the
 * same keys and hash seed give the same filter byte for byte.
 *
 * Key order and duplicates.  Each attempt first groups its 64-bit hashes by
 * their top bits (one counting pass, one scatter: about 8 keys a bucket),
 * which puts keys in slot order, so step 1 walks memory almost
 * sequentially.  Two equal hashes (repeated keys, or the rare distinct keys
 * whose 64-bit hashes collide: their queries are identical, so storing one
 * answers both) share all their slots and can never be peeled, so a peel
 * that takes every key proves there are none; only when a peel fails does
 * the attempt sort each bucket, drop repeats, and count and peel again
 * with the same seed.  Nothing here depends on the order of the keys
 * inside a bucket, so the filter is the one of the distinct hashes.
 *
 * Memory layout of a filter: one 64-byte aligned array of s fingerprints
 * (uint8_t, or uint16_t little-endian in files), nothing else.
 *
 * Scratch during construction (n keys, s slots): bucketed hashes, reused
 * as the peel stack (8 n) + the peeled slot's index (1 n) + bucket counters
 * (4 min(2^20, n/8)) in one block; per slot a count byte (1 s) and an xor
 * of hashes (8 s) in another; each block a whole number of 2 MiB pages
 * once it is 2 MiB or more (4 KiB page faults are costly on a
 * virtual machine, and an odd-sized mapping is faulted 4 KiB at a time at
 * its ends).  The pending stack of step 2 starts at 64 + s/256 entries (fuse;
 * its deepest chain was 0.12-0.35% of n at 10^6 keys) or 64 + s/8 (xor: 7%)
 * and doubles if needed.  bk_fuse_build_scratch_bytes: 21.0 bytes per key
 * at 10^6 keys for fuse8/fuse16/fuse8_4 and 23.7 for xor8; 19.7 (fuse8),
 * 19.3 (fuse8_4) and 21.2 (xor8) at 10^7.
 *
 * Measured at 10^6 keys (FPR over 10^7 absent queries; docs/STATIC.md has
 * the details, docs/PERFORMANCE.md the speed):
 *     kind     bits/key  x log2(1/p)  FPR
 *     xor8     9.84      1.23         0.3890%
 *     fuse8    9.04      1.13         0.3929%
 *     fuse16   18.09     1.13         0.00167%
 *     fuse8_4  8.62      1.08         0.3954%
 *   At 10^7 keys 18.04 bits (fuse16), 9.02 (fuse8).  The build is 235
 *   instructions per key for fuse8, hashing included (callgrind).  A query
 *   of the unmixed rule is 28 instructions from the 128-bit hash (42 with
 *   the mixed rule) plus the bk_filter dispatch.  Integer keys
 *   (bk_filter_contains_u64): when the handle wraps a filter it asks
 *   contains_u64_for which copy to call, and a filter of the unmixed rule
 *   hashed with MIX64 or XXH3 gets one that tests nothing per key -- for
 *   fuse8 with MIX64, 36 instructions with the return, the mixer's h1
 *   (one xor with the pre-xored seed, two multiplies) included; the
 *   others take the general copy, which tests the rule and the algorithm.
 *   The fields a query reads open the object, in one cache line.  Past
 *   the L2 the three loads dominate.
 * Inline view (bloomkit/fuse_inline.h, which holds the hash rule,
 * fingerprint, slot and xor functions this file uses): the same query
 * compiled into a caller's loop, no call per key.
 * Batches (the ops tables' contains_hash_batch, which every batch query of
 * the bk_filter handle reaches):
 * filters within the core's L2 are probed key by key, bigger ones in
 * chunks of 32 keys whose slots are computed and prefetched first.
 */
#include "fuse.h"

#include "bloomkit/fuse_inline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "endian.h"
#include "filter.h"
#include "hash.h"
#include "memory.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))
#define BATCH_CHUNK 32
#define MAX_SEGMENT_LENGTH ((uint32_t)1 << 18)
#define MIN_SEGMENT_LENGTH 4u

/* The four kinds this file implements. */
static bool is_fuse_kind(bk_kind kind)
{
    return kind == BK_KIND_XOR8 || kind == BK_KIND_FUSE8 || kind == BK_KIND_FUSE16 ||
           kind == BK_KIND_FUSE8_4;
}

static unsigned fingerprint_bits_of(bk_kind kind) { return kind == BK_KIND_FUSE16 ? 16 : 8; }

static unsigned arity_of(bk_kind kind) { return kind == BK_KIND_FUSE8_4 ? 4 : 3; }

static uint64_t fingerprint_bytes(bk_kind kind, uint64_t slots)
{
    return slots * (fingerprint_bits_of(kind) / 8);
}

/* ------------------------------------------------------------------------ */
/* Sizing (formulas from the two papers; see the opening comment)           */
/* ------------------------------------------------------------------------ */

static void xor_geometry(uint64_t keys, fuse_geometry *g)
{
    uint64_t capacity = 32 + (uint64_t)ceil(1.23 * (double)keys);
    uint64_t block = (capacity + 2) / 3;
    g->arity = 3;
    g->segment_length = (uint32_t)block;
    g->segment_mask = 0;
    g->segment_count = 3;
    g->segment_count_length = block;
    g->slots = 3 * block;
}

static uint32_t fuse_segment_length(unsigned arity, uint64_t keys)
{
    if (keys < 2)
        return MIN_SEGMENT_LENGTH;
    double exponent = arity == 3 ? log((double)keys) / log(3.33) + 2.25
                                 : log((double)keys) / log(2.91) - 0.5;
    double length = ldexp(1.0, (int)floor(exponent));
    if (length < MIN_SEGMENT_LENGTH)
        return MIN_SEGMENT_LENGTH;
    if (length > MAX_SEGMENT_LENGTH)
        return MAX_SEGMENT_LENGTH;
    return (uint32_t)length;
}

static double fuse_size_factor(unsigned arity, uint64_t keys)
{
    double log_n = log((double)keys);
    double factor = arity == 3 ? 0.875 + 0.25 * log(1e6) / log_n
                               : 0.77 + 0.305 * log(6e5) / log_n;
    double floor_factor = arity == 3 ? 1.125 : 1.075;
    return factor > floor_factor ? factor : floor_factor;
}

static void fuse_geometry_for(unsigned arity, uint64_t keys, fuse_geometry *g)
{
    uint32_t length = fuse_segment_length(arity, keys);
    uint64_t wanted = keys < 2 ? 0
                               : (uint64_t)llround((double)keys * fuse_size_factor(arity, keys));
    uint64_t segments = (wanted + length - 1) / length;
    uint64_t count = segments > arity - 1 ? segments - (arity - 1) : 1;
    g->arity = arity;
    g->segment_length = length;
    g->segment_mask = length - 1;
    g->segment_count = (uint32_t)count;
    g->segment_count_length = count * length;
    g->slots = (count + arity - 1) * length;
}

static bk_status geometry_for(bk_kind kind, uint64_t keys, fuse_geometry *g)
{
    if (!is_fuse_kind(kind))
        return BK_EKIND;
    if (keys > BK_FUSE_MAX_KEYS)
        return BK_ERANGE;
    if (kind == BK_KIND_XOR8)
        xor_geometry(keys, g);
    else
        fuse_geometry_for(arity_of(kind), keys, g);
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The hot path                                                             */
/* ------------------------------------------------------------------------ */

/* The hash, fingerprint, slot and xor functions are bloomkit/fuse_inline.h's
 * (one copy for the library and the inline view). */

static ALWAYS_INLINE void slots_of(const fuse_geometry *g, uint64_t hash, bk_kind kind,
                                   uint64_t slot[4])
{
    bk_fuse_slots_of(hash, kind, g->segment_count_length, g->segment_length, g->segment_mask,
                     slot);
}

/* The query for the 64-bit hash h (bk_fuse_query_hash). */
static ALWAYS_INLINE bool contains_query_hash(const bk_fuse *filter, uint64_t h, bk_kind kind)
{
    uint64_t slot[4];
    slots_of(&filter->geometry, h, kind, slot);
    return bk_fuse_fingerprint(h, kind) == bk_fuse_stored_xor(filter->fingerprints, slot, kind);
}

static ALWAYS_INLINE void prefetch_slots(const bk_fuse *filter, const uint64_t slot[4],
                                         bk_kind kind)
{
    unsigned width = kind == BK_KIND_FUSE16 ? 2 : 1;
    const char *base = filter->fingerprints;
    __builtin_prefetch(base + slot[0] * width);
    __builtin_prefetch(base + slot[1] * width);
    __builtin_prefetch(base + slot[2] * width);
    if (kind == BK_KIND_FUSE8_4)
        __builtin_prefetch(base + slot[3] * width);
}

static ALWAYS_INLINE bool contains_kind(const bk_fuse *filter, bk_hash hash, bk_kind kind)
{
    return contains_query_hash(filter, bk_fuse_query_hash(hash, filter->seed, filter->mixed),
                               kind);
}

/* The query of a key's bytes: the rule tested before the key is hashed, so
 * the unmixed copy computes h1 alone. */
static ALWAYS_INLINE bool contains_key_kind(const bk_fuse *filter, const void *key, size_t len,
                                            bk_kind kind)
{
    if (!filter->mixed)
        return contains_query_hash(
            filter, bk_hash_inline(&filter->hasher, key, len).h1 + filter->seed, kind);
    return contains_kind(filter, bk_hash_inline(&filter->hasher, key, len), kind);
}

/* The query of an integer key whose hash is not inlined below (XXH64,
 * SipHash): out of line, reached by a tail call, so that the inlined
 * algorithms' path needs no stack frame. */
static BK_NOINLINE bool contains_u64_called(const bk_fuse *filter, uint64_t key)
{
    bk_hash hash = bk_hash_u64(&filter->hasher, key);
    switch (filter->kind) {
    case BK_KIND_XOR8: return contains_kind(filter, hash, BK_KIND_XOR8);
    case BK_KIND_FUSE16: return contains_kind(filter, hash, BK_KIND_FUSE16);
    case BK_KIND_FUSE8_4: return contains_kind(filter, hash, BK_KIND_FUSE8_4);
    default: return contains_kind(filter, hash, BK_KIND_FUSE8);
    }
}

/* *hash = bk_hash_u64(hasher, key) where it is inlined: MIX64 (the
 * integer-key hash) and XXH3 (the default); false for the others. */
static ALWAYS_INLINE bool hash_u64_inlined(const bk_hasher *hasher, uint64_t key, bk_hash *hash)
{
    if (__builtin_expect(hasher->algorithm == BK_HASH_MIX64, 1))
        *hash = bk_mix64_of_u64(key, hasher->seed);
    else if (hasher->algorithm == BK_HASH_XXH3)
        *hash = bk_xxh3_128_of_u64(key, hasher->seed);
    else
        return false;
    return true;
}

/* The query of an integer key (bk_filter_contains_u64).  As in
 * contains_key_kind, the rule is tested first, so that the unmixed copy
 * computes h1 alone. */
static ALWAYS_INLINE bool contains_u64_kind(const bk_fuse *filter, uint64_t key, bk_kind kind)
{
    bk_hash hash;
    if (!filter->mixed) {
        if (!hash_u64_inlined(&filter->hasher, key, &hash))
            return contains_u64_called(filter, key);
        return contains_query_hash(filter, hash.h1 + filter->seed, kind);
    }
    if (!hash_u64_inlined(&filter->hasher, key, &hash))
        return contains_u64_called(filter, key);
    return contains_kind(filter, hash, kind);
}

/* The integer-key query of a filter of the unmixed rule whose hash is
 * MIX64 with the attempt seed 0 that builds give it (unseeded_mix64), or
 * XXH3 (unmixed_xxh3), the case fixed when the handle wraps the object
 * (contains_u64_for), so nothing is tested per key: the hash's h1 (plus
 * the seed for XXH3), the kind's slots and loads. */
static ALWAYS_INLINE bool contains_u64_unseeded_mix64(const bk_fuse *filter, uint64_t key,
                                                      bk_kind kind)
{
    return contains_query_hash(filter, bk_fuse_mix64_h1(key, filter->mix64_key), kind);
}

static ALWAYS_INLINE bool contains_u64_unmixed_xxh3(const bk_fuse *filter, uint64_t key,
                                                    bk_kind kind)
{
    return contains_query_hash(
        filter, bk_xxh3_128_of_u64(key, filter->hasher.seed).h1 + filter->seed, kind);
}

typedef bool (*contains_u64_fn)(const void *filter, uint64_t key);

/* The contains_u64 copy for a filter: one of the two above, or the
 * general one (the mixed rule, the other hashes, and MIX64 files written
 * when a first attempt's seed was not 0). */
static contains_u64_fn contains_u64_choice(const bk_fuse *filter, contains_u64_fn unseeded_mix64,
                                           contains_u64_fn unmixed_xxh3, contains_u64_fn general)
{
    if (filter->mixed)
        return general;
    switch (filter->hasher.algorithm) {
    case BK_HASH_MIX64: return filter->seed == 0 ? unseeded_mix64 : general;
    case BK_HASH_XXH3: return unmixed_xxh3;
    default: return general;
    }
}

/* A chunk: hash and prefetch every key's slots, then compare. */
static ALWAYS_INLINE size_t contains_chunk(const bk_fuse *filter, const bk_hash *hashes,
                                           size_t count, bool *results, bk_kind kind)
{
    uint64_t slot[BATCH_CHUNK][4];
    uint32_t expected[BATCH_CHUNK];
    for (size_t i = 0; i < count; i++) {
        uint64_t h = bk_fuse_query_hash(hashes[i], filter->seed, filter->mixed);
        slots_of(&filter->geometry, h, kind, slot[i]);
        expected[i] = bk_fuse_fingerprint(h, kind);
        prefetch_slots(filter, slot[i], kind);
    }
    size_t present = 0;
    for (size_t i = 0; i < count; i++) {
        bool found = expected[i] == bk_fuse_stored_xor(filter->fingerprints, slot[i], kind);
        present += found;
        if (results != NULL)
            results[i] = found;
    }
    return present;
}

/* A filter that fits the core's L2 answers without prefetching: key by
 * key wins there, chunks with their prefetches past it. */
static ALWAYS_INLINE size_t contains_batch_kind(const bk_fuse *filter, const bk_hash *hashes,
                                                size_t count, bool *results, bk_kind kind)
{
    size_t present = 0;
    if (fingerprint_bytes(kind, filter->geometry.slots) <= bk_cpu()->l2_bytes) {
        for (size_t i = 0; i < count; i++) {
            bool found = contains_kind(filter, hashes[i], kind);
            present += found;
            if (results != NULL)
                results[i] = found;
        }
        return present;
    }
    for (size_t start = 0; start < count; start += BATCH_CHUNK) {
        size_t n = count - start < BATCH_CHUNK ? count - start : BATCH_CHUNK;
        present += contains_chunk(filter, hashes + start, n, results ? results + start : NULL,
                                  kind);
    }
    return present;
}

/* The kinds' queries, one straight-line copy per kind, are the ops tables'
 * (FUSE_KIND_OPS at the end of this file). */

bk_status bk_fuse_view(const bk_filter *handle, struct bk_fuse_view *view)
{
    if (handle == NULL || view == NULL)
        return BK_EINVAL;
    bk_kind kind = bk_filter_kind(handle);
    const bk_fuse *filter = is_fuse_kind(kind) ? bk_filter_object_of(handle, kind) : NULL;
    if (filter == NULL)
        return BK_EKIND;
    if (!bk_hasher_inlinable(&filter->hasher))
        return BK_EUNSUPPORTED;
    view->fingerprints = filter->fingerprints;
    view->first_slot_range = filter->geometry.segment_count_length;
    view->segment_length = filter->geometry.segment_length;
    view->segment_mask = filter->geometry.segment_mask;
    view->attempt_seed = filter->seed;
    view->mix64_key = filter->mix64_key;
    view->kind = filter->kind;
    view->hash_algorithm = filter->hasher.algorithm;
    view->hash_seed = filter->hasher.seed;
    view->mixed = filter->mixed;
    view->mix64_fuse8 = filter->kind == BK_KIND_FUSE8 && !filter->mixed &&
                        filter->hasher.algorithm == BK_HASH_MIX64 && filter->seed == 0;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Construction, step 0: the attempt's hashes in slot order                 */
/* ------------------------------------------------------------------------ */

#define MAX_BUCKET_BITS 20
#define INSERTION_SORT_LIMIT 64

/* Buckets by top bits: about 8 keys per bucket, at most 2^20 buckets. */
static unsigned bucket_bits_for(uint64_t keys)
{
    unsigned bits = 1;
    while (bits < MAX_BUCKET_BITS && ((uint64_t)8 << bits) < keys)
        bits++;
    return bits;
}

/*
 * sorted[0..count) = the attempt hashes of input[0..count), grouped by their
 * top `bucket_bits` bits in ascending order (one counting pass, one scatter;
 * not sorted inside a bucket).  Afterwards bucket_end[b] is the end of
 * bucket b.  `bucket_end` has 2^bucket_bits + 1 entries.
 */
static void bucket_hashes(const bk_hash *input, size_t count, uint64_t seed, bool mixed,
                          unsigned bucket_bits, uint32_t *bucket_end, uint64_t *sorted)
{
    size_t buckets = (size_t)1 << bucket_bits;
    unsigned shift = 64 - bucket_bits;
    memset(bucket_end, 0, (buckets + 1) * sizeof *bucket_end);
    for (size_t i = 0; i < count; i++)
        bucket_end[(bk_fuse_query_hash(input[i], seed, mixed) >> shift) + 1]++;
    for (size_t b = 0; b < buckets; b++)
        bucket_end[b + 1] += bucket_end[b];
    for (size_t i = 0; i < count; i++) {
        uint64_t h = bk_fuse_query_hash(input[i], seed, mixed);
        sorted[bucket_end[h >> shift]++] = h;
    }
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void insertion_sort(uint64_t *values, size_t count)
{
    for (size_t i = 1; i < count; i++) {
        uint64_t v = values[i];
        size_t j = i;
        while (j > 0 && values[j - 1] > v) {
            values[j] = values[j - 1];
            j--;
        }
        values[j] = v;
    }
}

/*
 * Drops repeated hashes from the output of bucket_hashes (equal hashes share
 * a bucket): sorts each bucket, keeps the first of each run, and closes the
 * gaps.  Returns the number of distinct hashes, now ascending in
 * sorted[0..return).  Only run when a peel failed (see build_with_scratch).
 */
static size_t drop_repeats(uint64_t *sorted, unsigned bucket_bits, const uint32_t *bucket_end)
{
    size_t buckets = (size_t)1 << bucket_bits;
    size_t begin = 0, unique = 0;
    for (size_t b = 0; b < buckets; b++) {
        size_t end = bucket_end[b];
        if (end - begin <= INSERTION_SORT_LIMIT)
            insertion_sort(sorted + begin, end - begin);
        else
            qsort(sorted + begin, end - begin, sizeof *sorted, compare_u64);
        for (size_t i = begin; i < end; i++)
            if (i == begin || sorted[i] != sorted[i - 1])
                sorted[unique++] = sorted[i];
        begin = end;
    }
    return unique;
}

/* ------------------------------------------------------------------------ */
/* Construction, steps 1-3: count, peel, assign                             */
/* ------------------------------------------------------------------------ */

/* Per slot, one byte: (keys using the slot) << 2 | (xor of the indices j,
 * 0..3, of the slot in those keys' slot lists).  With one key left, the
 * low bits say which of its slots this is, so peeling needs no compare. */
#define SLOT_KEY_ONE 4u
#define SLOT_INDEX_MASK 3u

/* The working memory of a build: two blocks from bk_alloc_zeroed, sized in
 * whole huge pages when large (a 4 KiB page fault costs microseconds on a
 * virtual machine, and a big build would otherwise take thousands), and a
 * small growable stack:
 *   key block:  sorted (8 n), peeled_index (1 n), bucket_end (4 buckets)
 *   slot block: slot_hashes (8 s), slot_keys (1 s)
 *   pending:    4 bytes a slot waiting to be peeled; the deepest chain of
 *               a peel is about 0.1% of n for fuse, 7% for xor (measured),
 *               so it starts at 64 + s/256 (fuse) or 64 + s/8 (xor) and doubles
 *               (small sets grow it: the tests take that path). */
typedef struct build_scratch {
    uint64_t *sorted;      /* the attempt's hashes; then the peel stack */
    uint8_t *peeled_index; /* stack: which of the key's slots was its own */
    uint32_t *bucket_end;  /* bucket_hashes' buckets */
    void *key_block;
    size_t key_block_bytes;
    size_t key_room; /* entries of sorted and peeled_index */
    unsigned bucket_bits;
    uint64_t *slot_hashes; /* per slot: xor of the hashes of its keys */
    uint8_t *slot_keys;    /* per slot: key count and index xor (SLOT_KEY_ONE) */
    uint32_t *pending;     /* slots left with one key, not yet peeled */
    size_t pending_room;
    bool out_of_memory; /* pending could not grow */
    void *slot_block;
    size_t slot_block_bytes;
    uint64_t slots;  /* room for this many slots */
    bool slots_zero; /* slot_keys and slot_hashes still all zero */
} build_scratch;

static size_t bucket_count(unsigned bucket_bits) { return ((size_t)1 << bucket_bits) + 1; }

static size_t round_up_64(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

static size_t key_block_bytes(size_t room, unsigned bucket_bits)
{
    return bk_huge_round(round_up_64(room * 8) + round_up_64(room) +
                         bucket_count(bucket_bits) * 4);
}

static size_t slot_block_bytes(uint64_t slots)
{
    return bk_huge_round(round_up_64(slots * 8) + slots);
}

static size_t initial_pending_room(uint64_t segment_mask, uint64_t slots)
{
    return 64 + (segment_mask == 0 ? slots / 8 : slots / 256); /* xor : fuse */
}

static uint64_t scratch_bytes(uint64_t keys, const fuse_geometry *g)
{
    uint64_t room = keys ? keys : 1;
    return key_block_bytes(room, bucket_bits_for(keys)) + slot_block_bytes(g->slots) +
           initial_pending_room(g->segment_mask, g->slots) * 4;
}

static void scratch_free_slots(build_scratch *s)
{
    bk_free_zeroed(s->slot_block, s->slot_block_bytes);
    free(s->pending);
    s->slot_block = NULL;
    s->slot_hashes = NULL;
    s->slot_keys = NULL;
    s->pending = NULL;
    s->pending_room = 0;
    s->slots = 0;
}

static void scratch_free(build_scratch *s)
{
    bk_free_zeroed(s->key_block, s->key_block_bytes);
    s->key_block = NULL;
    scratch_free_slots(s);
}

static bk_status scratch_alloc_keys(build_scratch *s, size_t count)
{
    memset(s, 0, sizeof *s);
    s->key_room = count ? count : 1;
    s->bucket_bits = bucket_bits_for(count);
    s->key_block_bytes = key_block_bytes(s->key_room, s->bucket_bits);
    char *block = bk_alloc_zeroed(s->key_block_bytes);
    if (block == NULL)
        return BK_ENOMEM;
    s->key_block = block;
    s->sorted = (uint64_t *)(void *)block;
    block += round_up_64(s->key_room * 8);
    s->peeled_index = (uint8_t *)block;
    block += round_up_64(s->key_room);
    s->bucket_end = (uint32_t *)(void *)block;
    return BK_OK;
}

/* Room for at least the slots of `g`, all zero. */
static bk_status scratch_alloc_slots(build_scratch *s, const fuse_geometry *g)
{
    uint64_t slots = g->slots;
    if (s->slot_block != NULL && s->slots >= slots)
        return BK_OK;
    scratch_free_slots(s);
    s->slot_block_bytes = slot_block_bytes(slots);
    s->pending_room = initial_pending_room(g->segment_mask, slots);
    char *block = bk_alloc_zeroed(s->slot_block_bytes);
    s->pending = malloc(s->pending_room * sizeof *s->pending);
    if (block == NULL || s->pending == NULL) {
        bk_free_zeroed(block, s->slot_block_bytes);
        scratch_free_slots(s);
        return BK_ENOMEM;
    }
    s->slot_block = block;
    s->slot_hashes = (uint64_t *)(void *)block;
    block += round_up_64(slots * 8);
    s->slot_keys = (uint8_t *)block;
    s->slots = slots;
    s->slots_zero = true;
    return BK_OK;
}

/* The key counts of all slots added up: arity * keys unless a count
 * wrapped (each wrap loses 64).  One pass over a byte a slot, cheaper than
 * a test at every increment. */
static uint64_t total_slot_keys(const uint8_t *slot_keys, uint64_t slots)
{
    uint64_t total = 0;
    for (uint64_t i = 0; i < slots; i++)
        total += slot_keys[i] >> 2;
    return total;
}

/* Step 1.  False if a slot count wrapped (64 keys or more in one slot:
 * never for distinct random hashes, but repeated keys do it; the caller
 * then drops repeats and tries again). */
static ALWAYS_INLINE bool count_slots(const fuse_geometry *g, build_scratch *s, size_t keys,
                                      bk_kind kind)
{
    /* Local copies: the byte stores below may alias anything else. */
    const fuse_geometry geometry = *g;
    const uint64_t *hashes = s->sorted;
    uint8_t *slot_keys = s->slot_keys;
    uint64_t *slot_hashes = s->slot_hashes;
    if (!s->slots_zero) {
        memset(slot_keys, 0, geometry.slots);
        memset(slot_hashes, 0, geometry.slots * sizeof *slot_hashes);
    }
    s->slots_zero = false;
    for (size_t i = 0; i < keys; i++) {
        uint64_t h = hashes[i], slot[4];
        slots_of(&geometry, h, kind, slot);
        for (unsigned j = 0; j < arity_of(kind); j++) {
            slot_keys[slot[j]] = (uint8_t)((slot_keys[slot[j]] + SLOT_KEY_ONE) ^ j);
            slot_hashes[slot[j]] ^= h;
        }
    }
    return total_slot_keys(slot_keys, geometry.slots) == (uint64_t)keys * arity_of(kind);
}

/* The state of a peel, in locals: the byte stores of the peel may alias
 * anything, so fields read through `build_scratch` would be reloaded after
 * each of them. */
typedef struct peeler {
    fuse_geometry geometry;
    uint8_t *slot_keys;
    uint64_t *slot_hashes;
    uint64_t *stack;      /* peeled hashes (s->sorted) */
    uint8_t *stack_index; /* which of their slots was their own */
    uint32_t *pending;
    size_t pending_room;
    size_t stacked;
} peeler;

/* Room on `pending` for one more key's pushes (rarely grows). */
static bool pending_room_for(peeler *p, build_scratch *s, size_t top)
{
    if (top + 4 <= p->pending_room)
        return true;
    size_t room = 2 * p->pending_room;
    uint32_t *grown = realloc(p->pending, room * sizeof *grown);
    if (grown == NULL) {
        s->out_of_memory = true;
        return false;
    }
    s->pending = p->pending = grown;
    s->pending_room = p->pending_room = room;
    return true;
}

/* Takes the key of `own` (its only key) out of all its slots and pushes it
 * on the peel stack; slots left with one key go on `pending`, which must
 * have room for 4 more.  Returns the new top of `pending`. */
static ALWAYS_INLINE size_t peel_slot(peeler *p, uint32_t own, size_t top, bk_kind kind)
{
    uint8_t *slot_keys = p->slot_keys;
    uint64_t *slot_hashes = p->slot_hashes;
    uint64_t h = slot_hashes[own], slot[4];
    p->stack[p->stacked] = h;
    p->stack_index[p->stacked] = (uint8_t)(slot_keys[own] & SLOT_INDEX_MASK);
    p->stacked++;
    slots_of(&p->geometry, h, kind, slot);
    for (unsigned j = 0; j < arity_of(kind); j++) {
        uint8_t c = (uint8_t)((slot_keys[slot[j]] - SLOT_KEY_ONE) ^ j);
        slot_keys[slot[j]] = c;
        slot_hashes[slot[j]] ^= h;
        p->pending[top] = (uint32_t)slot[j];
        top += (c >> 2) == 1; /* branch-free push */
    }
    return top;
}

/*
 * Step 2.  One pass over the slots from the last to the first; a slot with
 * one key is peeled, and so is every slot that this leaves with one key
 * (depth first, from `pending`), before the pass moves on.  This is the
 * same order as pushing every single-key slot on a stack first and then
 * popping it, but needs only as much of `pending` as the deepest chain.
 * Returns the number of keys peeled (pushed in s->sorted / s->peeled_index);
 * stops early, with s->out_of_memory, if `pending` cannot grow.
 */
static ALWAYS_INLINE size_t peel(const fuse_geometry *g, build_scratch *s, bk_kind kind)
{
    peeler p = { *g,
                 s->slot_keys,
                 s->slot_hashes,
                 s->sorted,
                 s->peeled_index,
                 s->pending,
                 s->pending_room,
                 0 };
    const uint8_t *slot_keys = p.slot_keys;
    for (uint64_t i = p.geometry.slots; i-- > 0;) {
        if ((slot_keys[i] >> 2) != 1)
            continue;
        size_t top = peel_slot(&p, (uint32_t)i, 0, kind);
        while (top > 0) {
            uint32_t own = p.pending[--top];
            if ((slot_keys[own] >> 2) != 1)
                continue; /* its key left from another slot */
            if (!pending_room_for(&p, s, top))
                return p.stacked;
            top = peel_slot(&p, own, top, kind);
        }
    }
    return p.stacked;
}

/* Step 3: in reverse peel order, make each key's equation hold. */
static ALWAYS_INLINE void assign(const fuse_geometry *g, const build_scratch *s, size_t keys,
                                 void *fingerprints, bk_kind kind)
{
    const fuse_geometry geometry = *g; /* locals: the stores may alias */
    const uint64_t *stack = s->sorted;
    const uint8_t *stack_index = s->peeled_index;
    for (size_t i = keys; i-- > 0;) {
        uint64_t h = stack[i], slot[4];
        slots_of(&geometry, h, kind, slot);
        uint64_t own = slot[stack_index[i]];
        /* F[own] is still 0, so xoring it in changes nothing. */
        uint32_t value = bk_fuse_fingerprint(h, kind) ^
                         bk_fuse_stored_xor(fingerprints, slot, kind);
        if (kind == BK_KIND_FUSE16)
            ((uint16_t *)fingerprints)[own] = (uint16_t)value;
        else
            ((uint8_t *)fingerprints)[own] = (uint8_t)value;
    }
}

static ALWAYS_INLINE bool count_and_peel_kind(const fuse_geometry *g, build_scratch *s,
                                              size_t keys, bk_kind kind)
{
    return count_slots(g, s, keys, kind) && peel(g, s, kind) == keys;
}

static bool count_and_peel(bk_kind kind, const fuse_geometry *g, build_scratch *s, size_t keys)
{
    switch (kind) {
    case BK_KIND_XOR8: return count_and_peel_kind(g, s, keys, BK_KIND_XOR8);
    case BK_KIND_FUSE16: return count_and_peel_kind(g, s, keys, BK_KIND_FUSE16);
    case BK_KIND_FUSE8_4: return count_and_peel_kind(g, s, keys, BK_KIND_FUSE8_4);
    default: return count_and_peel_kind(g, s, keys, BK_KIND_FUSE8);
    }
}

static void assign_any(bk_kind kind, const fuse_geometry *g, const build_scratch *s, size_t keys,
                       void *fingerprints)
{
    switch (kind) {
    case BK_KIND_XOR8: assign(g, s, keys, fingerprints, BK_KIND_XOR8); break;
    case BK_KIND_FUSE16: assign(g, s, keys, fingerprints, BK_KIND_FUSE16); break;
    case BK_KIND_FUSE8_4: assign(g, s, keys, fingerprints, BK_KIND_FUSE8_4); break;
    default: assign(g, s, keys, fingerprints, BK_KIND_FUSE8); break;
    }
}

/* The seed of attempt `attempt` (1, 2, ...) for a filter of `hasher`.  A
 * MIX64 filter's first attempt takes 0: its h1 already has the hash seed
 * in it (the mixer's first xor), and an add of 0 is one step fewer on an
 * integer key's query path (contains_u64_unseeded_mix64). */
static uint64_t attempt_seed(const bk_hasher *hasher, unsigned attempt)
{
    if (attempt == 1 && hasher->algorithm == BK_HASH_MIX64)
        return 0;
    return bk_mix64(hasher->seed + (uint64_t)attempt * BK_FUSE_GOLDEN_64);
}

/* An object, 64-byte aligned (bk_fuse's query fields in one line), freed
 * with free(); NULL when out of memory. */
static bk_fuse *fuse_object_alloc(void)
{
    _Static_assert(sizeof(bk_fuse) % 64 == 0, "aligned_alloc takes a multiple of 64");
    return aligned_alloc(64, sizeof(bk_fuse));
}

static bk_fuse *new_filter(bk_kind kind, const bk_hasher *hasher)
{
    bk_fuse *filter = fuse_object_alloc();
    if (filter == NULL)
        return NULL;
    memset(filter, 0, sizeof *filter);
    filter->kind = kind;
    filter->fingerprint_bits = fingerprint_bits_of(kind);
    filter->hasher = *hasher;
    filter->mix64_key = bk_fuse_mix64_key(hasher->seed);
    return filter;
}

/* The attempt's distinct hashes, ascending in s->sorted; their number. */
static size_t distinct_hashes(build_scratch *s, const bk_hash *hashes, size_t count,
                              uint64_t seed, bool mixed)
{
    bucket_hashes(hashes, count, seed, mixed, s->bucket_bits, s->bucket_end, s->sorted);
    return drop_repeats(s->sorted, s->bucket_bits, s->bucket_end);
}

/*
 * Whether the unmixed hashes of the first attempt (h1 + seed), `unique` of
 * them distinct, tell the keys apart as well as all 128 bits do (as the
 * mixed hashes of the second attempt count them): false only for
 * caller-supplied hashes that vary in h2 alone.  If so, s->sorted holds the
 * unmixed distinct hashes again.
 */
static bool unmixed_tells_apart(build_scratch *s, const bk_hash *hashes, size_t count,
                                const bk_hasher *hasher, size_t unique)
{
    if (distinct_hashes(s, hashes, count, attempt_seed(hasher, 2), true) != unique)
        return false;
    distinct_hashes(s, hashes, count, attempt_seed(hasher, 1), false);
    return true;
}

/*
 * Attempts until one peels: the first with the unmixed hash rule, later ones
 * mixed (bk_fuse_query_hash).  Repeats are dropped only when needed: two
 * equal hashes share all their slots, so neither can ever be peeled, and a
 * peel that takes every key proves there were none.  So an attempt first
 * counts and peels the hashes as they are; if that fails it drops repeats,
 * and if there were any, counts and peels again with the same seed -- unless
 * the first attempt's unmixed hashes merged keys that differ in h2 only,
 * which only the mixed rule keeps apart.  The filter is the one the
 * distinct hashes give (the peel does not depend on the order of the keys).
 * The geometry comes from the first completed attempt's number of distinct
 * hashes (later attempts differ only by the 2^-64 collisions, which the
 * size factor's slack absorbs or a retry fixes).
 */
static bk_status build_with_scratch(bk_fuse *filter, build_scratch *s, const bk_hash *hashes,
                                    size_t count)
{
    fuse_geometry *g = &filter->geometry;
    bool sizing = true; /* no attempt completed yet: the geometry follows this one */
    for (unsigned attempt = 1; attempt <= BK_FUSE_MAX_ATTEMPTS; attempt++) {
        uint64_t seed = attempt_seed(&filter->hasher, attempt);
        bool mixed = attempt > 1;
        bucket_hashes(hashes, count, seed, mixed, s->bucket_bits, s->bucket_end, s->sorted);
        size_t keys = count;
        if (sizing)
            geometry_for(filter->kind, keys, g);
        if (scratch_alloc_slots(s, g) != BK_OK)
            return BK_ENOMEM;
        bool peeled = count_and_peel(filter->kind, g, s, keys);
        if (s->out_of_memory)
            return BK_ENOMEM;
        if (!peeled) {
            /* The peel stack overwrote the hashes: put them back first. */
            size_t unique = distinct_hashes(s, hashes, count, seed, mixed);
            if (unique != keys && !mixed &&
                !unmixed_tells_apart(s, hashes, count, &filter->hasher, unique))
                continue;
            if (unique != keys) {
                keys = unique;
                if (sizing)
                    geometry_for(filter->kind, keys, g);
                peeled = count_and_peel(filter->kind, g, s, keys);
            }
        }
        sizing = false;
        if (s->out_of_memory)
            return BK_ENOMEM;
        if (!peeled)
            continue;
        filter->fingerprints = bk_alloc_zeroed(fingerprint_bytes(filter->kind, g->slots));
        if (filter->fingerprints == NULL)
            return BK_ENOMEM;
        assign_any(filter->kind, g, s, keys, filter->fingerprints);
        filter->seed = seed;
        filter->mixed = mixed;
        filter->keys = keys;
        filter->attempts = attempt;
        return BK_OK;
    }
    return BK_EFULL;
}

static void fuse_destroy(void *object)
{
    bk_fuse *filter = object;
    if (!filter->borrowed)
        bk_free_zeroed(filter->fingerprints,
                       fingerprint_bytes(filter->kind, filter->geometry.slots));
    memset(&filter->hasher, 0, sizeof filter->hasher); /* do not leave the key behind */
    free(filter);
}

/*
 * A filter of `kind` holding the `count` hashes (equal hashes count as one
 * key; count 0 gives a filter that holds nothing); `hasher` (copied) is
 * recorded as the filter's hash.  Errors: BK_ERANGE if count >
 * BK_FUSE_MAX_KEYS (before the hashes are read); BK_ENOMEM; BK_EFULL if
 * BK_FUSE_MAX_ATTEMPTS attempts all failed to peel (does not happen for
 * distinct hashes from a good hash function: each attempt succeeds with
 * probability > 1/2).  On error nothing is leaked.
 */
static bk_status build_kind(bk_kind kind, const bk_hasher *hasher, const bk_hash *hashes,
                            size_t count, void **out)
{
    if ((uint64_t)count > BK_FUSE_MAX_KEYS)
        return BK_ERANGE;
    bk_fuse *filter = new_filter(kind, hasher);
    if (filter == NULL)
        return BK_ENOMEM;
    build_scratch scratch;
    bk_status status = scratch_alloc_keys(&scratch, count);
    if (status == BK_OK) {
        status = build_with_scratch(filter, &scratch, hashes, count);
        scratch_free(&scratch);
    }
    if (status != BK_OK) {
        fuse_destroy(filter);
        return status;
    }
    *out = filter;
    return BK_OK;
}

static bk_status fuse_copy(const void *object, void **out)
{
    const bk_fuse *filter = object;
    bk_fuse *copy = fuse_object_alloc();
    if (copy == NULL)
        return BK_ENOMEM;
    *copy = *filter;
    uint64_t bytes = fingerprint_bytes(filter->kind, filter->geometry.slots);
    copy->fingerprints = bk_alloc_zeroed(bytes);
    if (copy->fingerprints == NULL) {
        free(copy);
        return BK_ENOMEM;
    }
    memcpy(copy->fingerprints, filter->fingerprints, bytes);
    copy->borrowed = false;
    *out = copy;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Parameters and statistics                                                */
/* ------------------------------------------------------------------------ */

static const bk_hasher *fuse_hasher(const void *filter)
{
    return &((const bk_fuse *)filter)->hasher;
}

static void fill_design(bk_kind kind, uint64_t keys, const fuse_geometry *g, bk_stats *out)
{
    memset(out, 0, sizeof *out);
    unsigned bits = fingerprint_bits_of(kind);
    out->kind = kind;
    out->bits = g->slots * bits;
    out->hashes = g->arity;
    out->bytes = fingerprint_bytes(kind, g->slots);
    out->capacity = keys;
    out->target_fpr = ldexp(1.0, -(int)bits);
    out->current_fpr = out->target_fpr;
    out->bits_per_key = keys ? (double)out->bits / (double)keys : 0.0;
    out->load_factor = (double)keys / (double)g->slots; /* 1/1.125 = 0.89 for large fuse8 */
    out->fingerprint_bits = bits;
}

static void fuse_stats(const void *object, bk_stats *out)
{
    const bk_fuse *filter = object;
    fill_design(filter->kind, filter->keys, &filter->geometry, out);
    out->keys_added = filter->keys;
    out->keys_estimated = (double)filter->keys;
    out->hash_algorithm = filter->hasher.algorithm;
    out->seed = filter->hasher.seed;
}

/* The design for `params->capacity` distinct keys (the only sizing field a
 * static kind reads): BK_ERANGE beyond BK_FUSE_MAX_KEYS. */
static bk_status design_kind(bk_kind kind, const bk_params *params, bk_stats *out)
{
    fuse_geometry g;
    bk_status status = geometry_for(kind, params->capacity, &g);
    if (status != BK_OK)
        return status;
    fill_design(kind, params->capacity, &g, out);
    out->hash_algorithm = params->hash_algorithm;
    return BK_OK;
}

bk_status bk_fuse_build_scratch_bytes(bk_kind kind, uint64_t keys, uint64_t *bytes)
{
    fuse_geometry g;
    bk_status status = geometry_for(kind, keys, &g);
    if (status != BK_OK)
        return status;
    if (bytes == NULL)
        return BK_EINVAL;
    *bytes = scratch_bytes(keys, &g);
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The kinds' adapters: bk_filter dispatch and the file format              */
/* ------------------------------------------------------------------------ */

/*
 * Parameter block (48 bytes, little-endian; docs/STATIC.md "File format"):
 *     0  u32  arity d (3 or 4)          4  u32  fingerprint bits (8 or 16)
 *     8  u64  seed of the attempt that peeled
 *    16  u64  keys: distinct hashes stored
 *    24  u32  segment length L (xor: block length s/3)
 *    28  u32  segment count (xor: 3)
 *    32  u64  slots s            40  u32  build attempts
 *    44  u32  hash rule (bk_fuse_query_hash): 0 mixed (a retry, and every
 *             block written before the field existed, when it was reserved
 *             and 0), 1 unmixed (a first attempt)
 * Payload: s fingerprints of 1 or 2 bytes (16-bit ones little-endian).
 */
#define FUSE_PARAMS_SIZE 48
#define HASH_RULE_MIXED 0u
#define HASH_RULE_UNMIXED 1u

static size_t ops_params_size(const void *filter)
{
    (void)filter;
    return FUSE_PARAMS_SIZE;
}

static void ops_write_params(const void *object, uint8_t *out)
{
    const bk_fuse *filter = object;
    bk_store_le32(out, filter->geometry.arity);
    bk_store_le32(out + 4, filter->fingerprint_bits);
    bk_store_le64(out + 8, filter->seed);
    bk_store_le64(out + 16, filter->keys);
    bk_store_le32(out + 24, filter->geometry.segment_length);
    bk_store_le32(out + 28, filter->geometry.segment_count);
    bk_store_le64(out + 32, filter->geometry.slots);
    bk_store_le32(out + 40, filter->attempts);
    bk_store_le32(out + 44, filter->mixed ? HASH_RULE_MIXED : HASH_RULE_UNMIXED);
}

static uint64_t ops_payload_size(const void *object)
{
    const bk_fuse *filter = object;
    return fingerprint_bytes(filter->kind, filter->geometry.slots);
}

static void ops_write_payload(const void *object, uint8_t *out)
{
    const bk_fuse *filter = object;
    uint64_t bytes = ops_payload_size(filter);
    if (filter->fingerprint_bits == 8 || bk_host_is_little_endian()) {
        memcpy(out, filter->fingerprints, bytes);
        return;
    }
    const uint16_t *f = filter->fingerprints;
    for (uint64_t i = 0; i < filter->geometry.slots; i++)
        bk_store_le16(out + 2 * i, f[i]);
}

/* A geometry read from a file, checked for consistency: every slot a query
 * can compute lies below `slots`. */
static bk_status check_geometry(bk_kind kind, const fuse_geometry *g)
{
    if (g->slots == 0 || g->slots > UINT32_MAX)
        return BK_ECORRUPT;
    if (kind == BK_KIND_XOR8)
        return g->segment_count == 3 && g->segment_length >= 1 &&
                       g->slots == 3 * (uint64_t)g->segment_length
                   ? BK_OK
                   : BK_ECORRUPT;
    uint32_t length = g->segment_length;
    if (length == 0 || (length & (length - 1)) != 0 || length > MAX_SEGMENT_LENGTH ||
        g->segment_count == 0)
        return BK_ECORRUPT;
    if (g->slots != ((uint64_t)g->segment_count + g->arity - 1) * length)
        return BK_ECORRUPT;
    return BK_OK;
}

static bk_status read_geometry(bk_kind kind, const uint8_t *params, fuse_geometry *g)
{
    memset(g, 0, sizeof *g);
    g->arity = bk_load_le32(params);
    g->segment_length = bk_load_le32(params + 24);
    g->segment_count = bk_load_le32(params + 28);
    g->slots = bk_load_le64(params + 32);
    if (g->arity != arity_of(kind) || bk_load_le32(params + 4) != fingerprint_bits_of(kind))
        return BK_ECORRUPT;
    bk_status status = check_geometry(kind, g);
    if (status != BK_OK)
        return status;
    if (kind == BK_KIND_XOR8) {
        g->segment_count_length = g->segment_length;
    } else {
        g->segment_mask = g->segment_length - 1;
        g->segment_count_length = (uint64_t)g->segment_count * g->segment_length;
    }
    return BK_OK;
}

static bk_status read_kind(bk_kind kind, const uint8_t *params, size_t params_size,
                           const uint8_t *payload, uint64_t payload_size,
                           const bk_hasher *hasher, uint64_t keys_added, bool in_place,
                           void **out)
{
    if (params_size != FUSE_PARAMS_SIZE)
        return BK_ECORRUPT;
    uint32_t hash_rule = bk_load_le32(params + 44);
    if (hash_rule != HASH_RULE_MIXED && hash_rule != HASH_RULE_UNMIXED)
        return BK_ECORRUPT;
    fuse_geometry g;
    bk_status status = read_geometry(kind, params, &g);
    if (status != BK_OK)
        return status;
    uint64_t keys = bk_load_le64(params + 16);
    unsigned attempts = bk_load_le32(params + 40);
    if (keys > BK_FUSE_MAX_KEYS)
        return BK_ERANGE;
    if (keys > g.slots || keys != keys_added || attempts == 0 ||
        attempts > BK_FUSE_MAX_ATTEMPTS || payload_size != fingerprint_bytes(kind, g.slots))
        return BK_ECORRUPT;
    bk_fuse *filter = new_filter(kind, hasher);
    if (filter == NULL)
        return BK_ENOMEM;
    filter->geometry = g;
    filter->seed = bk_load_le64(params + 8);
    filter->mixed = hash_rule == HASH_RULE_MIXED;
    filter->keys = keys;
    filter->attempts = attempts;
    if (in_place) {
        filter->fingerprints = (void *)(uintptr_t)payload;
        filter->borrowed = true;
    } else {
        filter->fingerprints = bk_alloc_zeroed(payload_size);
        if (filter->fingerprints == NULL) {
            free(filter);
            return BK_ENOMEM;
        }
        if (filter->fingerprint_bits == 8 || bk_host_is_little_endian()) {
            memcpy(filter->fingerprints, payload, payload_size);
        } else {
            uint16_t *f = filter->fingerprints;
            for (uint64_t i = 0; i < g.slots; i++)
                f[i] = bk_load_le16(payload + 2 * i);
        }
    }
    *out = filter;
    return BK_OK;
}

/* The table of each kind, its kind fixed at compile time in the query,
 * batch, build, design and read functions (one straight-line copy each). */
#define FUSE_KIND_OPS(suffix, KIND)                                                             \
    static bool contains_##suffix(const void *f, bk_hash hash)                                  \
    {                                                                                           \
        return contains_kind(f, hash, KIND);                                                    \
    }                                                                                           \
    static bool contains_key_##suffix(const void *f, const void *key, size_t len)               \
    {                                                                                           \
        return contains_key_kind(f, key, len, KIND);                                            \
    }                                                                                           \
    static bool contains_u64_##suffix(const void *f, uint64_t key)                              \
    {                                                                                           \
        return contains_u64_kind(f, key, KIND);                                                 \
    }                                                                                           \
    static bool contains_u64_mix64_##suffix(const void *f, uint64_t key)                        \
    {                                                                                           \
        return contains_u64_unseeded_mix64(f, key, KIND);                                       \
    }                                                                                           \
    static bool contains_u64_xxh3_##suffix(const void *f, uint64_t key)                         \
    {                                                                                           \
        return contains_u64_unmixed_xxh3(f, key, KIND);                                         \
    }                                                                                           \
    static contains_u64_fn contains_u64_for_##suffix(const void *f)                             \
    {                                                                                           \
        return contains_u64_choice(f, contains_u64_mix64_##suffix, contains_u64_xxh3_##suffix,  \
                                   contains_u64_##suffix);                                      \
    }                                                                                           \
    static size_t batch_##suffix(const void *f, const bk_hash *hashes, size_t n, bool *r)       \
    {                                                                                           \
        return contains_batch_kind(f, hashes, n, r, KIND);                                      \
    }                                                                                           \
    static bk_status build_##suffix(const bk_params *params, const bk_hasher *hasher,           \
                                    const bk_hash *hashes, size_t n, void **out)                \
    {                                                                                           \
        (void)params; /* the handle made the hasher from it */                                  \
        return build_kind(KIND, hasher, hashes, n, out);                                        \
    }                                                                                           \
    static bk_status design_##suffix(const bk_params *params, bk_stats *out)                    \
    {                                                                                           \
        return design_kind(KIND, params, out);                                                  \
    }                                                                                           \
    static bk_status read_##suffix(const uint8_t *params, size_t params_size,                   \
                                   const uint8_t *payload, uint64_t payload_size,               \
                                   const bk_hasher *hasher, uint64_t keys_added, bool in_place, \
                                   void **out)                                                  \
    {                                                                                           \
        return read_kind(KIND, params, params_size, payload, payload_size, hasher, keys_added,  \
                         in_place, out);                                                        \
    }                                                                                           \
    const bk_kind_ops bk_##suffix##_ops = {                                                     \
        .kind = KIND,                                                                           \
        .name = #suffix,                                                                        \
        .is_static = true,                                                                      \
        .build = build_##suffix,                                                                \
        .destroy = fuse_destroy,                                                                \
        .copy = fuse_copy,                                                                      \
        .hasher = fuse_hasher,                                                                  \
        .contains_hash = contains_##suffix,                                                     \
        .contains_key = contains_key_##suffix,                                                  \
        .contains_u64 = contains_u64_##suffix,                                                  \
        .contains_u64_for = contains_u64_for_##suffix,                                          \
        .contains_hash_batch = batch_##suffix,                                                  \
        .stats = fuse_stats,                                                                    \
        .design = design_##suffix,                                                              \
        .params_size = ops_params_size,                                                         \
        .write_params = ops_write_params,                                                       \
        .payload_size = ops_payload_size,                                                       \
        .write_payload = ops_write_payload,                                                     \
        .read = read_##suffix,                                                                  \
    };

FUSE_KIND_OPS(xor8, BK_KIND_XOR8)
FUSE_KIND_OPS(fuse8, BK_KIND_FUSE8)
FUSE_KIND_OPS(fuse16, BK_KIND_FUSE16)
FUSE_KIND_OPS(fuse8_4, BK_KIND_FUSE8_4)
