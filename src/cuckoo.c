/*
 * src/cuckoo.c -- the cuckoo filter, with a victim stash so nothing is lost.
 *
 * The idea (Fan, Andersen, Kaminsky & Mitzenmacher, "Cuckoo Filter:
 * Practically Better Than Bloom", CoNEXT 2014): store an f-bit fingerprint
 * of each key in a table of B buckets of b = 4 slots.  A key may live in
 * two buckets; a query compares its fingerprint with the 8 slots of both.
 * Remove deletes one matching fingerprint -- which is why remove is only
 * safe for keys known to be present: a false positive's fingerprint is
 * another key's.
 *
 * Partial-key cuckoo hashing.  When both buckets are full, a stored
 * fingerprint is evicted to ITS other bucket, which must be computable from
 * the fingerprint and the bucket alone (the key is gone).  The paper uses
 * i2 = i1 XOR hash(f), which needs B to be a power of two: the table then
 * runs between 47.5% and 95% full at capacity, wasting up to half the
 * memory.  We use the multiply-shift form that allows ANY B:
 *
 *     t(f)      = reduce(mix64(f), B)                 in [0, B)
 *     alt(i, f) = (t(f) - i) mod B
 *
 * which is an involution, alt(alt(i, f), f) = t - (t - i) = i, exactly the
 * property XOR gives; for uniform i, alt(i, f) is uniform too.  So the
 * table is sized to the capacity, not to the next power of two.
 *
 *     bucket1     = reduce(h1, B)                (src/hash.h, multiply-shift)
 *     fingerprint = 1 + reduce(h2, 2^f - 1)      uniform on [1, 2^f - 1]: 0 marks an empty slot
 *     bucket2     = alt(bucket1, fingerprint)
 *
 * Insert: put the fingerprint in a free slot of bucket1 or bucket2; if both
 * are full, pick one of them at random, swap the fingerprint with a random
 * slot's, and carry the evicted one to its alternate bucket; repeat at most
 * BK_CUCKOO_MAX_KICKS = 500 times.  If still homeless, the last evicted
 * fingerprint goes to the one-entry VICTIM STASH (with its bucket), and the
 * insert has succeeded: every key is still stored.  While the stash is
 * occupied, further adds return BK_EFULL and change nothing; contains and
 * count look at the stash; a remove makes room and re-inserts the stashed
 * fingerprint.  (The random choices come from a per-filter splitmix64
 * sequence, bk_mix64 of a counter: deterministic and saved in the file.)
 *
 * False positives.  A query compares against 8 slots, each occupied with
 * probability `load` and then equal with probability 1/(2^f - 1):
 *
 *     p = 1 - (1 - 1/(2^f - 1))^(8 load)   ~  8 load / 2^f   (= 2b/2^f full)
 *
 * Sizing from (n, p): the narrowest f from 4 to 16 whose p at 95% load is
 * at most the target, and B = ceil((n + 3 sqrt n) / (4 x 0.95)): the
 * paper's 95% load for b = 4, reached at n plus three standard deviations
 * of a Poisson count, so that small tables (whose fill fluctuates most)
 * still take their n keys.  Each width, at 95% load (f / 0.95 bits per
 * key), against a Bloom filter of the same FPR (1.44 log2(1/p)):
 *
 *     f   FPR p(0.95, f)   bits/key   Bloom     f   FPR p(0.95, f)   bits/key   Bloom
 *     4   40.8 %             4.2        1.9     11  0.371 %           11.6      11.6
 *     5   22.1 %             5.3        3.1     12  0.185 %           12.6      13.1
 *     6   11.4 %             6.3        4.5     13  0.0927 %          13.7      14.5
 *     7   5.83 %             7.4        5.9     14  0.0464 %          14.7      15.9
 *     8   2.94 %             8.4        7.3     15  0.0232 %          15.8      17.4
 *     9   1.48 %             9.5        8.8     16  0.0116 %          16.8      18.8
 *     10  0.741 %           10.5       10.2
 *
 * so the cuckoo filter is the smaller one below about 0.4%.  A 1.6%
 * target (two 2-slot buckets of 8-bit fingerprints, full) takes f = 9 at
 * 9.5 bits per key.  The paper's semi-sorting (the 4 slots of a bucket
 * sorted by their top 4 bits and stored as one of 3876 patterns, 1 bit per
 * slot saved) is not used: it needs f >= 5, a decode table on every
 * bucket read and sorted rewrites on every insert and kick, and a width
 * one bit narrower buys the same saving at twice the FPR.
 *
 * Memory layout: B buckets of 4 f-bit slots, packed back to back: the
 * table read as one little-endian integer has bucket i at bits
 * [4f i, 4f (i+1)) and, within a bucket, slot j at bits [j f, (j+1) f).
 * For f = 8, 12, 16 a bucket is 4, 6 or 8 whole bytes; for odd f it starts
 * on a byte or half-byte boundary and the table's last 4 bits may be
 * padding (always 0).  So every width costs exactly f bits per slot.
 *
 *     table:  [ s0 | s1 | s2 | s3 ][ s0 | s1 | s2 | s3 ] ...  B buckets
 *             \_ bucket 0: 4f bits _/\_ bucket 1 ______/
 *     stash:  (fingerprint, bucket)  -- fingerprint 0 = empty
 *
 * A bucket is read as one unaligned 8-byte little-endian load at byte
 * 4f i / 8, shifted by 0 or 4 bits and masked (4f + 4 <= 64): the payload
 * needs no conversion on any host (a mapped file is queried in place); the
 * last buckets, whose 8 bytes would pass the end of the table, are read
 * byte by byte.
 *
 * One query: bucket1 from h1, whose cache line is requested at once; the
 * fingerprint from h2; bucket2 = alt(bucket1, f), its line requested as
 * soon as it is known; both buckets loaded, then both tested without a
 * branch (matching_slots).  t(f) is a chain of three dependent multiplies
 * before bucket2's address is known; filters of f <= 12 whose table is
 * 32 times larger than 2^f x 4 bytes keep t(f) for every fingerprint in a
 * small table (make_targets) and look it up instead.
 *
 * Measured (tests/test_cuckoo.c and docs/DELETION.md, release build):
 *   - load when the stash is first taken, adding distinct keys: 0.971-0.972
 *     on 1,024 buckets, 0.964-0.966 on 16,384, 0.960-0.962 on 262,144
 *     (means over 3-10 runs, each width); the 95% design load holds.
 *   - capacity n fits: B = ceil((n + 3 sqrt n) / 3.8) took every one of its
 *     n keys in 24,400 filters of 1 to 20,000 keys (with B = ceil(n / 3.8),
 *     0.35-0.95% of filters of 10-500 keys filled early).
 *   - FPR at 95% load, 1,000,000 absent queries, measured vs predicted
 *     (tests/test_cuckoo.c, test_fpr_matches_prediction):
 *       f =  4: 0.3978 vs 0.4081    f =  9: 0.014897 vs 0.014777
 *       f =  5: 0.2190 vs 0.2206    f = 10: 0.007378 vs 0.007405
 *       f =  6: 0.1133 vs 0.1145    f = 11: 0.003771 vs 0.003707
 *       f =  7: 0.0580 vs 0.0583    f = 12: 0.001912 vs 0.001854
 *       f =  8: 0.02941 vs 0.02942  f = 13: 0.000936 vs 0.000927
 *       f = 14: 0.000446 vs 0.000464, f = 15: 0.000243 vs 0.000232,
 *       f = 16: 0.000127 vs 0.000116 (5M queries, 4 seeds: 0.000113-0.000124).
 *     For f <= 6 the measured rate sits a little below the formula, which
 *     counts matches in both buckets of a key as independent.
 */
#include "cuckoo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "endian.h"
#include "filter.h"
#include "hash.h"
#include "memory.h"

#define SLOTS BK_CUCKOO_SLOTS_PER_BUCKET
#define BATCH_CHUNK 16
#define KICK_STATE_INCREMENT 0x9e3779b97f4a7c15ULL

struct bk_cuckoo {
    uint8_t *table; /* B buckets of 4f bits, packed: table_bytes_for() */
    size_t table_bytes;
    uint64_t buckets;           /* B, any value >= 1 */
    unsigned fingerprint_bits;  /* f: 4 .. 16 */
    unsigned bucket_bits;       /* 4 f */
    uint64_t bucket_mask;       /* the low 4f bits */
    uint32_t fingerprint_mask;  /* 2^f - 1 */
    uint64_t slot_lows;         /* 1 in each slot's lowest bit ... */
    uint64_t slot_highs;        /* ... and in its highest: matching_slots */
    uint32_t *targets;          /* t(f) for every f, or NULL: alternate() */
    uint64_t capacity;          /* design n */
    double target_fpr;          /* predicted FPR at capacity */
    uint64_t stored;            /* fingerprints in table and stash */
    uint32_t stash_fingerprint; /* 0: stash empty */
    uint64_t stash_bucket;
    uint64_t kick_state; /* splitmix64 counter for the random kicks */
    bk_hasher hasher;
    bool borrowed; /* table belongs to a mapped file: read-only */
};

/* Where a key lives. */
typedef struct location {
    uint32_t fingerprint;
    uint64_t bucket1;
    uint64_t bucket2;
} location;

/* ------------------------------------------------------------------------ */
/* Formulas (sizing and false-positive rate)                                */
/* ------------------------------------------------------------------------ */

double bk_cuckoo_predicted_fpr(double load, unsigned fingerprint_bits)
{
    if (!(load > 0) || fingerprint_bits == 0 || fingerprint_bits > 32)
        return 0.0;
    double match = 1.0 / (ldexp(1.0, (int)fingerprint_bits) - 1.0);
    double compared = 2.0 * SLOTS * (load < 1 ? load : 1);
    return -expm1(compared * log1p(-match));
}

static bool valid_fingerprint_bits(unsigned bits)
{
    return bits >= BK_CUCKOO_MIN_FINGERPRINT_BITS && bits <= BK_CUCKOO_MAX_FINGERPRINT_BITS;
}

static bk_status fingerprint_bits_for(const bk_params *params, unsigned *out)
{
    if (params->fingerprint_bits != 0) {
        if (!valid_fingerprint_bits(params->fingerprint_bits))
            return BK_EINVAL;
        *out = params->fingerprint_bits;
        return BK_OK;
    }
    if (params->bits_per_key != 0) {
        if (!(params->bits_per_key > 0) || !isfinite(params->bits_per_key))
            return BK_EINVAL;
        double widest = floor(params->bits_per_key * BK_CUCKOO_DESIGN_LOAD);
        if (widest < BK_CUCKOO_MIN_FINGERPRINT_BITS)
            return BK_ERANGE;
        *out = widest > BK_CUCKOO_MAX_FINGERPRINT_BITS ? BK_CUCKOO_MAX_FINGERPRINT_BITS
                                                       : (unsigned)widest;
        return BK_OK;
    }
    double fpr = params->fpr == 0 ? 0.01 : params->fpr;
    if (!(fpr > 0 && fpr < 1))
        return BK_EINVAL;
    for (unsigned f = BK_CUCKOO_MIN_FINGERPRINT_BITS; f <= BK_CUCKOO_MAX_FINGERPRINT_BITS; f++) {
        if (bk_cuckoo_predicted_fpr(BK_CUCKOO_DESIGN_LOAD, f) <= fpr) {
            *out = f;
            return BK_OK;
        }
    }
    return BK_ERANGE;
}

typedef struct cuckoo_design {
    uint64_t capacity;
    uint64_t buckets;
    unsigned fingerprint_bits;
    double target_fpr;
} cuckoo_design;

static uint64_t table_bits(uint64_t buckets, unsigned fingerprint_bits)
{
    return buckets * SLOTS * fingerprint_bits;
}

/* The table's bytes: B buckets of 4f bits back to back, the last byte
 * zero-padded when 4f B is not a multiple of 8 (odd f, odd B). */
static uint64_t table_bytes_for(uint64_t buckets, unsigned fingerprint_bits)
{
    return (table_bits(buckets, fingerprint_bits) + 7) / 8;
}

static double design_load(uint64_t capacity, uint64_t buckets)
{
    return (double)capacity / ((double)buckets * SLOTS);
}

static bk_status design_from_params(const bk_params *params, cuckoo_design *out)
{
    if (params->capacity == 0)
        return BK_EINVAL;
    cuckoo_design d;
    d.capacity = params->capacity;
    bk_status status = fingerprint_bits_for(params, &d.fingerprint_bits);
    if (status != BK_OK)
        return status;
    uint64_t max_buckets = BK_MAX_BITS / (SLOTS * d.fingerprint_bits);
    if (params->bits != 0 || params->hashes != 0) {
        if (params->bits == 0)
            return BK_EINVAL;
        d.buckets = params->bits / (SLOTS * d.fingerprint_bits);
        if (d.buckets == 0)
            return BK_ERANGE;
    } else {
        double keys = (double)params->capacity;
        double buckets = ceil((keys + BK_CUCKOO_SLACK_SIGMAS * sqrt(keys)) /
                              (SLOTS * BK_CUCKOO_DESIGN_LOAD));
        if (!(buckets <= (double)max_buckets))
            return BK_ERANGE;
        d.buckets = (uint64_t)buckets;
    }
    if (d.buckets > max_buckets)
        return BK_ERANGE;
    d.target_fpr = bk_cuckoo_predicted_fpr(design_load(d.capacity, d.buckets),
                                           d.fingerprint_bits);
    *out = d;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Buckets and slots                                                        */
/* ------------------------------------------------------------------------ */

/* Bucket i is bits [4f i, 4f (i+1)) of the table, so it starts at byte
 * 4f i / 8 with a shift of 0 or 4 bits, and one 8-byte window from that
 * byte holds it whole (4f + 4 <= 64 for odd f <= 15; 4f <= 64 otherwise),
 * read and written with bk_load_le64 / bk_store_le64 (src/endian.h).
 * The windows of the last few buckets would pass the end of the table: they
 * are read and written a byte at a time (and a mapped file is never read
 * beyond its payload). */
static uint64_t tail_load(const uint8_t *p, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void tail_store(uint8_t *p, size_t bytes, uint64_t v)
{
    for (size_t i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The first bit of `bucket` in the table. */
static inline uint64_t bucket_bit(const bk_cuckoo *filter, uint64_t bucket)
{
    return bucket * filter->bucket_bits;
}

static inline uint64_t bucket_load(const bk_cuckoo *filter, uint64_t bucket)
{
    uint64_t bit = bucket_bit(filter, bucket);
    size_t byte = (size_t)(bit >> 3);
    const uint8_t *p = filter->table + byte;
    uint64_t window = __builtin_expect(byte + 8 <= filter->table_bytes, 1)
                          ? bk_load_le64(p)
                          : tail_load(p, filter->table_bytes - byte);
    return (window >> (bit & 7)) & filter->bucket_mask;
}

static inline void bucket_store(bk_cuckoo *filter, uint64_t bucket, uint64_t word)
{
    uint64_t bit = bucket_bit(filter, bucket);
    size_t byte = (size_t)(bit >> 3);
    unsigned shift = (unsigned)(bit & 7);
    uint8_t *p = filter->table + byte;
    uint64_t keep = ~(filter->bucket_mask << shift);
    if (__builtin_expect(byte + 8 <= filter->table_bytes, 1)) {
        bk_store_le64(p, (bk_load_le64(p) & keep) | word << shift);
    } else {
        size_t bytes = filter->table_bytes - byte;
        tail_store(p, bytes, (tail_load(p, bytes) & keep) | word << shift);
    }
}

/* Starts fetching the line(s) of `bucket`: a bucket may straddle two. */
static inline void prefetch_bucket(const bk_cuckoo *filter, uint64_t bucket)
{
    uint64_t bit = bucket_bit(filter, bucket);
    const uint8_t *first = filter->table + (bit >> 3);
    const uint8_t *last = filter->table + ((bit + filter->bucket_bits - 1) >> 3);
    __builtin_prefetch(first);
    __builtin_prefetch(last);
}

static inline uint32_t slot_get(const bk_cuckoo *filter, uint64_t word, unsigned slot)
{
    return (uint32_t)(word >> (slot * filter->fingerprint_bits)) & filter->fingerprint_mask;
}

static inline uint64_t slot_set(const bk_cuckoo *filter, uint64_t word, unsigned slot,
                                uint32_t fingerprint)
{
    unsigned shift = slot * filter->fingerprint_bits;
    word &= ~((uint64_t)filter->fingerprint_mask << shift);
    return word | (uint64_t)fingerprint << shift;
}

/* The slots of `word` equal to `fingerprint`, without a branch: they are
 * the zero slots of x = word ^ (fingerprint in every slot), and
 * (x - lows) & ~x & highs has the high bit of the LOWEST zero slot set
 * (the borrow it starts may also mark a higher slot: use only the lowest
 * set bit, or only "nonzero"), and is 0 when no slot is zero.  The per-slot
 * loop this replaces mispredicts for present keys, whose slot and bucket
 * are random. */
static inline uint64_t matching_slots(const bk_cuckoo *filter, uint64_t word,
                                      uint32_t fingerprint)
{
    uint64_t x = word ^ (fingerprint * filter->slot_lows);
    return (x - filter->slot_lows) & ~x & filter->slot_highs;
}

/* The first slot of `word` holding `fingerprint` (0: a free slot), or -1. */
static inline int first_slot(const bk_cuckoo *filter, uint64_t word, uint32_t fingerprint)
{
    uint64_t marks = matching_slots(filter, word, fingerprint);
    if (marks == 0)
        return -1;
    unsigned bit = (unsigned)__builtin_ctzll(marks), f = filter->fingerprint_bits;
    return (bit >= f) + (bit >= 2 * f) + (bit >= 3 * f); /* bit / f, without a division */
}

static inline int find_slot(const bk_cuckoo *filter, uint64_t bucket, uint32_t fingerprint)
{
    return first_slot(filter, bucket_load(filter, bucket), fingerprint);
}

static inline unsigned count_in_bucket(const bk_cuckoo *filter, uint64_t bucket,
                                       uint32_t fingerprint)
{
    uint64_t word = bucket_load(filter, bucket);
    unsigned count = 0;
    for (unsigned slot = 0; slot < SLOTS; slot++)
        count += slot_get(filter, word, slot) == fingerprint;
    return count;
}

static inline void write_slot(bk_cuckoo *filter, uint64_t bucket, unsigned slot,
                              uint32_t fingerprint)
{
    bucket_store(filter, bucket,
                 slot_set(filter, bucket_load(filter, bucket), slot, fingerprint));
}

/* Puts the fingerprint in a free slot of `bucket`; false if it is full. */
static inline bool try_put(bk_cuckoo *filter, uint64_t bucket, uint32_t fingerprint)
{
    int slot = find_slot(filter, bucket, 0);
    if (slot < 0)
        return false;
    write_slot(filter, bucket, (unsigned)slot, fingerprint);
    return true;
}

/* ------------------------------------------------------------------------ */
/* Hashing a key to its location                                            */
/* ------------------------------------------------------------------------ */

/* t(f) = reduce(mix64(f), B), computed: three multiplies in a chain. */
static inline uint64_t target_of(uint64_t buckets, uint32_t fingerprint)
{
    return bk_reduce(bk_mix64(fingerprint), buckets);
}

static inline uint64_t alternate(const bk_cuckoo *filter, uint64_t bucket, uint32_t fingerprint)
{
    uint64_t target = filter->targets != NULL ? filter->targets[fingerprint]
                                              : target_of(filter->buckets, fingerprint);
    return target >= bucket ? target - bucket : target + filter->buckets - bucket;
}

/* A table of t(f) for all 2^f fingerprints takes the multiply chain off the
 * way to the second bucket (one cached load instead), for widths up to
 * TARGETS_MAX_BITS (at most 16 KiB) in tables at least 32 times its size,
 * where the buckets are mostly out of cache and the table mostly in.
 * Without it (or when it cannot be allocated) t(f) is computed: the same
 * values. */
#define TARGETS_MAX_BITS 12
#define TARGETS_TABLE_RATIO 32

static void make_targets(bk_cuckoo *filter)
{
    size_t count = (size_t)1 << filter->fingerprint_bits;
    if (filter->fingerprint_bits > TARGETS_MAX_BITS || filter->buckets > UINT32_MAX ||
        filter->table_bytes / TARGETS_TABLE_RATIO < count * sizeof *filter->targets)
        return;
    uint32_t *targets = malloc(count * sizeof *targets);
    if (targets == NULL)
        return;
    for (size_t f = 0; f < count; f++)
        targets[f] = (uint32_t)target_of(filter->buckets, (uint32_t)f);
    filter->targets = targets;
}

/* The key's location; bucket1's line is requested at once, while the
 * fingerprint's alternate is being computed, and bucket2's as soon as it
 * is known, so the two memory reads overlap. */
static inline location locate(const bk_cuckoo *filter, bk_hash hash)
{
    location where;
    where.bucket1 = bk_reduce(hash.h1, filter->buckets);
    prefetch_bucket(filter, where.bucket1);
    where.fingerprint = 1 + (uint32_t)bk_reduce(hash.h2, filter->fingerprint_mask);
    where.bucket2 = alternate(filter, where.bucket1, where.fingerprint);
    prefetch_bucket(filter, where.bucket2);
    return where;
}

static inline bool stash_holds(const bk_cuckoo *filter, location where)
{
    return filter->stash_fingerprint == where.fingerprint &&
           (filter->stash_bucket == where.bucket1 || filter->stash_bucket == where.bucket2);
}

/* Both buckets are loaded before either is tested, and tested without a
 * branch. */
static inline bool is_stored(const bk_cuckoo *filter, location where)
{
    uint64_t word1 = bucket_load(filter, where.bucket1);
    uint64_t word2 = bucket_load(filter, where.bucket2);
    uint64_t found = matching_slots(filter, word1, where.fingerprint) |
                     matching_slots(filter, word2, where.fingerprint);
    return (found != 0) | stash_holds(filter, where);
}

/* ------------------------------------------------------------------------ */
/* Insertion with bounded kicks and the victim stash                        */
/* ------------------------------------------------------------------------ */

static inline uint64_t next_random(bk_cuckoo *filter)
{
    filter->kick_state += KICK_STATE_INCREMENT;
    return bk_mix64(filter->kick_state);
}

/* Relocates fingerprints to make room for `fingerprint`, whose buckets
 * (both full) are `bucket` and `other`; after BK_CUCKOO_MAX_KICKS
 * relocations the fingerprint left homeless goes to the stash. */
static void kick_in(bk_cuckoo *filter, uint64_t bucket, uint64_t other, uint32_t fingerprint)
{
    uint64_t random = next_random(filter);
    uint64_t current = (random & 1) ? other : bucket;
    for (unsigned kick = 0; kick < BK_CUCKOO_MAX_KICKS; kick++) {
        unsigned slot = (unsigned)(next_random(filter) % SLOTS);
        uint64_t word = bucket_load(filter, current);
        uint32_t evicted = slot_get(filter, word, slot);
        bucket_store(filter, current, slot_set(filter, word, slot, fingerprint));
        fingerprint = evicted;
        current = alternate(filter, current, fingerprint);
        if (try_put(filter, current, fingerprint))
            return;
    }
    filter->stash_fingerprint = fingerprint;
    filter->stash_bucket = current;
}

/* Stores the fingerprint of `where` in the first free slot of bucket1, else
 * of bucket2, else by relocation (kick_in).  Always succeeds while the
 * stash is empty.  Both buckets are loaded (and were requested by locate)
 * before either is examined. */
static void insert_location(bk_cuckoo *filter, location where)
{
    uint64_t word1 = bucket_load(filter, where.bucket1);
    uint64_t word2 = bucket_load(filter, where.bucket2);
    int slot = first_slot(filter, word1, 0);
    if (slot >= 0) {
        bucket_store(filter, where.bucket1,
                     slot_set(filter, word1, (unsigned)slot, where.fingerprint));
        return;
    }
    slot = first_slot(filter, word2, 0);
    if (slot >= 0) {
        bucket_store(filter, where.bucket2,
                     slot_set(filter, word2, (unsigned)slot, where.fingerprint));
        return;
    }
    kick_in(filter, where.bucket1, where.bucket2, where.fingerprint);
}

/* Stores `fingerprint`, whose buckets are `bucket` and its alternate. */
static void insert_fingerprint(bk_cuckoo *filter, uint64_t bucket, uint32_t fingerprint)
{
    location where = { fingerprint, bucket, alternate(filter, bucket, fingerprint) };
    insert_location(filter, where);
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

static bk_status create_from_design(const cuckoo_design *design, const bk_hasher *hasher,
                                    uint8_t *borrowed, bk_cuckoo **out)
{
    bk_cuckoo *filter = calloc(1, sizeof *filter);
    if (filter == NULL)
        return BK_ENOMEM;
    filter->buckets = design->buckets;
    filter->fingerprint_bits = design->fingerprint_bits;
    filter->bucket_bits = SLOTS * design->fingerprint_bits;
    filter->bucket_mask = filter->bucket_bits == 64 ? ~0ULL : (1ULL << filter->bucket_bits) - 1;
    filter->fingerprint_mask = (1u << design->fingerprint_bits) - 1;
    for (unsigned slot = 0; slot < SLOTS; slot++)
        filter->slot_lows |= (uint64_t)1 << (slot * design->fingerprint_bits);
    filter->slot_highs = filter->slot_lows << (design->fingerprint_bits - 1);
    filter->table_bytes = (size_t)table_bytes_for(design->buckets, design->fingerprint_bits);
    if (borrowed != NULL) {
        filter->table = borrowed;
        filter->borrowed = true;
    } else {
        filter->table = bk_alloc_zeroed(filter->table_bytes);
        if (filter->table == NULL) {
            free(filter);
            return BK_ENOMEM;
        }
    }
    filter->capacity = design->capacity;
    filter->target_fpr = design->target_fpr;
    filter->hasher = *hasher;
    make_targets(filter);
    *out = filter;
    return BK_OK;
}

static bk_status ops_create(const bk_params *params, void **out)
{
    cuckoo_design design;
    bk_status status = design_from_params(params, &design);
    if (status != BK_OK)
        return status;
    bk_hasher hasher;
    status = bk_hasher_from_params(&hasher, params);
    if (status != BK_OK)
        return status;
    return create_from_design(&design, &hasher, NULL, (bk_cuckoo **)out);
}

static void ops_destroy(void *object)
{
    bk_cuckoo *filter = object;
    if (!filter->borrowed)
        bk_free_zeroed(filter->table, filter->table_bytes);
    free(filter->targets);
    memset(&filter->hasher, 0, sizeof filter->hasher); /* do not leave the key behind */
    free(filter);
}

static cuckoo_design design_of(const bk_cuckoo *filter)
{
    cuckoo_design design = { filter->capacity, filter->buckets, filter->fingerprint_bits,
                             filter->target_fpr };
    return design;
}

static bk_status ops_copy(const void *object, void **out)
{
    const bk_cuckoo *filter = object;
    cuckoo_design design = design_of(filter);
    bk_cuckoo *copy;
    bk_status status = create_from_design(&design, &filter->hasher, NULL, &copy);
    if (status != BK_OK)
        return status;
    memcpy(copy->table, filter->table, filter->table_bytes);
    copy->stored = filter->stored;
    copy->stash_fingerprint = filter->stash_fingerprint;
    copy->stash_bucket = filter->stash_bucket;
    copy->kick_state = filter->kick_state;
    *out = copy;
    return BK_OK;
}

static bk_status ops_clear(void *object)
{
    bk_cuckoo *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    memset(filter->table, 0, filter->table_bytes);
    filter->stored = 0;
    filter->stash_fingerprint = 0;
    filter->stash_bucket = 0;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The hot path                                                             */
/* ------------------------------------------------------------------------ */

static bk_status ops_add_hash(void *object, bk_hash hash, bool *was_new)
{
    bk_cuckoo *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    if (filter->stash_fingerprint != 0)
        return BK_EFULL;
    location where = locate(filter, hash);
    if (was_new != NULL)
        *was_new = !is_stored(filter, where);
    insert_location(filter, where);
    filter->stored++;
    return BK_OK;
}

/* Stores the fingerprint unless the key is reported present (was_new, not
 * NULL, says which). */
static bk_status add_unique_hash(bk_cuckoo *filter, bk_hash hash, bool *was_new)
{
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    location where = locate(filter, hash);
    *was_new = false;
    if (is_stored(filter, where))
        return BK_OK;
    if (filter->stash_fingerprint != 0)
        return BK_EFULL;
    insert_location(filter, where);
    filter->stored++;
    *was_new = true;
    return BK_OK;
}

bk_status bk_cuckoo_add_unique_hash(bk_filter *handle, bk_hash hash, bool *was_new)
{
    bk_cuckoo *filter = bk_filter_object_of(handle, BK_KIND_CUCKOO);
    if (handle == NULL)
        return BK_EINVAL;
    if (filter == NULL)
        return BK_EKIND;
    bool fresh;
    bk_status status = add_unique_hash(filter, hash, &fresh);
    if (status == BK_OK && was_new != NULL)
        *was_new = fresh;
    return status;
}

bk_status bk_cuckoo_add_unique(bk_filter *handle, const void *key, size_t len, bool *was_new)
{
    if (handle == NULL || (key == NULL && len != 0))
        return BK_EINVAL;
    return bk_cuckoo_add_unique_hash(handle, bk_filter_hash(handle, key, len), was_new);
}

/* Deletes one copy of the fingerprint (stash first); false if none. */
static bool delete_one(bk_cuckoo *filter, location where)
{
    if (stash_holds(filter, where)) {
        filter->stash_fingerprint = 0;
        filter->stash_bucket = 0;
        return true;
    }
    uint64_t buckets[2] = { where.bucket1, where.bucket2 };
    for (int i = 0; i < 2; i++) {
        int slot = find_slot(filter, buckets[i], where.fingerprint);
        if (slot >= 0) {
            write_slot(filter, buckets[i], (unsigned)slot, 0);
            return true;
        }
    }
    return false;
}

static bk_status ops_remove_hash(void *object, bk_hash hash)
{
    bk_cuckoo *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    if (!delete_one(filter, locate(filter, hash)))
        return BK_ENOTFOUND;
    filter->stored--;
    if (filter->stash_fingerprint != 0) {
        uint32_t fingerprint = filter->stash_fingerprint;
        uint64_t bucket = filter->stash_bucket;
        filter->stash_fingerprint = 0;
        filter->stash_bucket = 0;
        insert_fingerprint(filter, bucket, fingerprint);
    }
    return BK_OK;
}

static bool ops_contains_hash(const void *filter, bk_hash hash)
{
    return is_stored(filter, locate(filter, hash));
}

static bool ops_contains_key(const void *object, const void *key, size_t len)
{
    const bk_cuckoo *filter = object;
    return is_stored(filter, locate(filter, bk_hash_inline(&filter->hasher, key, len)));
}

/* The integer-key calls: the hash inline (bk_hash_u64), then as above. */
static bool ops_contains_u64(const void *object, uint64_t key)
{
    const bk_cuckoo *filter = object;
    return is_stored(filter, locate(filter, bk_hash_u64(&filter->hasher, key)));
}

static bk_status ops_add_u64(void *object, uint64_t key, bool *was_new)
{
    bk_cuckoo *filter = object;
    return ops_add_hash(filter, bk_hash_u64(&filter->hasher, key), was_new);
}

static bk_status ops_count_hash(const void *object, bk_hash hash, uint64_t *count)
{
    const bk_cuckoo *filter = object;
    location where = locate(filter, hash);
    uint64_t copies = count_in_bucket(filter, where.bucket1, where.fingerprint);
    if (where.bucket2 != where.bucket1)
        copies += count_in_bucket(filter, where.bucket2, where.fingerprint);
    copies += stash_holds(filter, where);
    *count = copies;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                  */
/* ------------------------------------------------------------------------ */

static size_t test_chunk(const bk_cuckoo *filter, const bk_hash *hashes, size_t count,
                         bool *results)
{
    location where[BATCH_CHUNK];
    for (size_t i = 0; i < count; i++) {
        where[i] = locate(filter, hashes[i]); /* requests both buckets' lines */
    }
    size_t present = 0;
    for (size_t i = 0; i < count; i++) {
        bool found = is_stored(filter, where[i]);
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

/* Adds in order, stopping at the first error (BK_EFULL) with *new_count
 * counting the keys reported new before it. */
static bk_status ops_add_hash_batch(void *filter, const bk_hash *hashes, size_t count,
                                    size_t *new_count)
{
    size_t fresh = 0;
    bk_status status = BK_OK;
    for (size_t i = 0; i < count && status == BK_OK; i++) {
        bool was_new = false;
        status = ops_add_hash(filter, hashes[i], &was_new);
        fresh += status == BK_OK && was_new;
    }
    *new_count = fresh;
    return status;
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
/* Parameters, load and statistics                                          */
/* ------------------------------------------------------------------------ */

void bk_cuckoo_locate(const bk_cuckoo *filter, bk_hash hash, uint32_t *fingerprint,
                      uint64_t *bucket1, uint64_t *bucket2)
{
    location where = locate(filter, hash);
    *fingerprint = where.fingerprint;
    *bucket1 = where.bucket1;
    *bucket2 = where.bucket2;
}

uint64_t bk_cuckoo_alternate(const bk_cuckoo *filter, uint64_t bucket, uint32_t fingerprint)
{
    return alternate(filter, bucket, fingerprint);
}

/* Occupied slots in the table plus the stash, counted from memory (so it is
 * right even for a mapped file whose header miscounts). */
static uint64_t occupied(const bk_cuckoo *filter)
{
    uint64_t total = filter->stash_fingerprint != 0;
    for (uint64_t bucket = 0; bucket < filter->buckets; bucket++) {
        uint64_t word = bucket_load(filter, bucket);
        for (unsigned slot = 0; slot < SLOTS; slot++)
            total += slot_get(filter, word, slot) != 0;
    }
    return total;
}

static void fill_design(const cuckoo_design *design, bk_hash_algorithm algorithm, bk_stats *out)
{
    memset(out, 0, sizeof *out);
    out->kind = BK_KIND_CUCKOO;
    out->bits = table_bits(design->buckets, design->fingerprint_bits);
    out->bytes = table_bytes_for(design->buckets, design->fingerprint_bits);
    out->capacity = design->capacity;
    out->target_fpr = design->target_fpr;
    out->bits_per_key = (double)out->bits / (double)design->capacity;
    out->design_fill_ratio = design_load(design->capacity, design->buckets);
    out->fingerprint_bits = design->fingerprint_bits;
    out->hash_algorithm = algorithm;
}

static void ops_stats(const void *object, bk_stats *out)
{
    const bk_cuckoo *filter = object;
    cuckoo_design design = design_of(filter);
    bk_stats s;
    fill_design(&design, filter->hasher.algorithm, &s);
    /* A writable table's count is exact (checked on load, kept by every
     * add and remove): stats take constant time.  A mapped table's count
     * is unchecked, so it is counted from memory. */
    uint64_t stored = filter->borrowed ? occupied(filter) : filter->stored;
    s.keys_added = stored;
    s.keys_estimated = (double)stored;
    s.load_factor = (double)stored / (double)(filter->buckets * SLOTS);
    s.fill_ratio = s.load_factor;
    s.current_fpr = bk_cuckoo_predicted_fpr(s.load_factor, filter->fingerprint_bits);
    s.stash_occupied = filter->stash_fingerprint != 0;
    s.past_design_point = stored > filter->capacity || s.stash_occupied;
    s.seed = filter->hasher.seed;
    *out = s;
}

/* ------------------------------------------------------------------------ */
/* The kind's adapter: bk_filter dispatch and the file format               */
/* ------------------------------------------------------------------------ */

/*
 * Parameter block (56 bytes, little-endian; docs/DELETION.md "File format"):
 *     0  u64  buckets (B)            8  u32  fingerprint bits f (4 .. 16)
 *    12  u32  slots per bucket, 4   16  u64  capacity
 *    24  f64  target FPR            32  u64  stash bucket (0 when empty)
 *    40  u32  stash fingerprint (0 = empty)   44  u32  reserved, 0
 *    48  u64  kick state (the random sequence of relocations)
 * Payload: ceil(4f B / 8) bytes holding B buckets of 4f bits back to back:
 * the payload read as one little-endian integer has bucket i at bits
 * [4f i, 4f (i+1)) and, within it, slot j at bits [j f, (j+1) f) (0 =
 * empty); the bits past the last bucket (odd f and B) are 0.  For f = 8,
 * 12, 16 that is B buckets of 4, 6 or 8 bytes, each a little-endian
 * integer.
 */
#define CUCKOO_PARAMS_SIZE 56

static size_t ops_params_size(const void *filter)
{
    (void)filter;
    return CUCKOO_PARAMS_SIZE;
}

static void ops_write_params(const void *object, uint8_t *out)
{
    const bk_cuckoo *filter = object;
    bk_store_le64(out, filter->buckets);
    bk_store_le32(out + 8, filter->fingerprint_bits);
    bk_store_le32(out + 12, SLOTS);
    bk_store_le64(out + 16, filter->capacity);
    bk_store_le_double(out + 24, filter->target_fpr);
    bk_store_le64(out + 32, filter->stash_bucket);
    bk_store_le32(out + 40, filter->stash_fingerprint);
    bk_store_le32(out + 44, 0);
    bk_store_le64(out + 48, filter->kick_state);
}

static uint64_t ops_payload_size(const void *object)
{
    return ((const bk_cuckoo *)object)->table_bytes;
}

static void ops_write_payload(const void *object, uint8_t *out)
{
    const bk_cuckoo *filter = object;
    memcpy(out, filter->table, filter->table_bytes);
}

/* Whether the bits of the table's last byte past its last bucket are 0
 * (there are such bits only for odd f and odd B). */
static bool padding_clear(const uint8_t *payload, uint64_t payload_size, uint64_t bits)
{
    unsigned used = (unsigned)(bits & 7);
    return used == 0 || (payload[payload_size - 1] >> used) == 0;
}

static bk_status ops_read(const uint8_t *params, size_t params_size, const uint8_t *payload,
                          uint64_t payload_size, const bk_hasher *hasher, uint64_t keys_added,
                          bool in_place, void **out)
{
    if (params_size != CUCKOO_PARAMS_SIZE)
        return BK_ECORRUPT;
    cuckoo_design design;
    design.buckets = bk_load_le64(params);
    design.fingerprint_bits = bk_load_le32(params + 8);
    design.capacity = bk_load_le64(params + 16);
    design.target_fpr = bk_load_le_double(params + 24);
    uint64_t stash_bucket = bk_load_le64(params + 32);
    uint32_t stash_fingerprint = bk_load_le32(params + 40);
    if (!valid_fingerprint_bits(design.fingerprint_bits) || bk_load_le32(params + 12) != SLOTS ||
        bk_load_le32(params + 44) != 0 || design.buckets == 0 || design.capacity == 0 ||
        !bk_stored_fpr_valid(design.target_fpr))
        return BK_ECORRUPT;
    if (design.buckets > BK_MAX_BITS / (SLOTS * design.fingerprint_bits))
        return BK_ERANGE;
    uint64_t slots = design.buckets * SLOTS;
    if (payload_size != table_bytes_for(design.buckets, design.fingerprint_bits) ||
        !padding_clear(payload, payload_size,
                       table_bits(design.buckets, design.fingerprint_bits)) ||
        stash_fingerprint >= (1u << design.fingerprint_bits) ||
        (stash_fingerprint != 0 ? stash_bucket >= design.buckets : stash_bucket != 0) ||
        keys_added > slots + (stash_fingerprint != 0))
        return BK_ECORRUPT;
    bk_cuckoo *filter;
    uint8_t *borrowed = in_place ? (uint8_t *)(uintptr_t)payload : NULL;
    bk_status status = create_from_design(&design, hasher, borrowed, &filter);
    if (status != BK_OK)
        return status;
    if (!in_place)
        memcpy(filter->table, payload, filter->table_bytes);
    filter->stash_fingerprint = stash_fingerprint;
    filter->stash_bucket = stash_bucket;
    filter->kick_state = bk_load_le64(params + 48);
    filter->stored = keys_added;
    /* The key count is the number of stored fingerprints: every add
     * stores one, every remove deletes one.  A mapped table is read-only
     * and not scanned here (its stats and saves count from memory). */
    if (!in_place && occupied(filter) != keys_added) {
        ops_destroy(filter);
        return BK_ECORRUPT;
    }
    *out = filter;
    return BK_OK;
}

static const bk_hasher *ops_hasher(const void *filter)
{
    return &((const bk_cuckoo *)filter)->hasher;
}

static bk_status ops_design(const bk_params *params, bk_stats *out)
{
    cuckoo_design design;
    bk_status status = design_from_params(params, &design);
    if (status != BK_OK)
        return status;
    fill_design(&design, params->hash_algorithm, out);
    return BK_OK;
}

const bk_kind_ops bk_cuckoo_ops = {
    .kind = BK_KIND_CUCKOO,
    .name = "cuckoo",
    .create = ops_create,
    .destroy = ops_destroy,
    .copy = ops_copy,
    .clear = ops_clear,
    .hasher = ops_hasher,
    .add_hash = ops_add_hash,
    .contains_hash = ops_contains_hash,
    .contains_key = ops_contains_key,
    .contains_u64 = ops_contains_u64,
    .add_u64 = ops_add_u64,
    .remove_hash = ops_remove_hash,
    .count_hash = ops_count_hash,
    .add_hash_batch = ops_add_hash_batch,
    .contains_hash_batch = ops_contains_hash_batch,
    .stats = ops_stats,
    .design = ops_design,
    .params_size = ops_params_size,
    .write_params = ops_write_params,
    .payload_size = ops_payload_size,
    .write_payload = ops_write_payload,
    .read = ops_read,
};
