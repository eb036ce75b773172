/*
 * src/counting.c -- the counting Bloom filter: 4-bit saturating counters,
 * all of a key's counters in one cache line.
 *
 * The idea (Fan, Cao, Almeida & Broder, "Summary cache: a scalable
 * wide-area Web cache sharing protocol", IEEE/ACM ToN 8(3), 2000): a Bloom
 * filter cannot remove a key because a set bit may belong to several keys.
 * Replace each bit by a small counter: add increments the key's k counters,
 * remove decrements them, and a counter shared by several keys stays
 * positive while any of them remains.  "Counter > 0" plays the part of
 * "bit set", so contains, the false-positive rate and the fill-based
 * estimates are those of the bit-array filter with the same probes.
 *
 * Two layouts of the same counters (bk_counting_layout, recorded in the
 * file):
 *
 *   BLOCKED (the default): the counters are cut into lines of 128 counters
 *   (64 bytes, one cache line), and all k counters of a key are in one
 *   line -- the cache-line blocked filter of Putze, Sanders & Singler
 *   ("Cache-, Hash- and Space-Efficient Bloom Filters", WEA 2007) applied
 *   to counters.  A query or an add then costs one cache miss instead of
 *   k, and a batch overlaps those misses (a prefetch ring, src/prefetch.h).
 *
 *   CLASSIC: the k counters anywhere in the array (the classic filter's
 *   probes, bk_probe_* over m).  The only layout of older files, which
 *   still load and answer as they did; created with
 *   BK_FLAG_COUNTING_CLASSIC.
 *
 * Memory layout (both): m counters packed two per byte, counter i in byte
 * i/2, low nibble for even i, high nibble for odd i; for odd m (classic
 * only) the unused high nibble of the last byte is always 0.  The array is
 * allocated 64-byte aligned, so in the blocked layout line j is exactly
 * bytes [64 j, 64 j + 64), counters 128 j .. 128 j + 127:
 *
 *     byte:      [  0  ][  1  ] ... [ 63  ][ 64  ] ...    [ m/2 - 1 ]
 *     nibbles:   c1|c0  c3|c2  ... c127|c126 c129|c128 ...
 *                hi lo
 *                \______ line 0 (64 B) ______/\_ line 1 ...
 *
 * Blocked probes.  The key is hashed once to (h1, h2) (src/hash.c):
 *     line        = bk_reduce(h1, lines)          (multiply-shift)
 *     counter_i   = p_i >> 2, p_i the i-th 9-bit position of the blocked
 *                   kind's walk over h2 (bloomkit/detail/blocked_detail.h:
 *                   slices of h2, then of bk_mix64(h2), ... for k > 7)
 * The counters are independent and uniform on [0, 128) (with
 * replacement).  Counter c of a line, seen as eight little-endian 64-bit
 * words, is bits 4c .. 4c + 3: the bits p_i of a `blocked` filter with one
 * 512-bit block per line are set exactly when counter p_i >> 2 is non-zero.
 * So bk_counting_to_bloom turns a blocked-layout filter into a `blocked`
 * filter that answers every query identically (see there).
 *
 * Why 128 four-bit counters per line, not 64 eight-bit ones.  The FPR of a
 * blocked filter rises as its block shrinks (uneven block loads, below);
 * 64 counters need 12.1 counters per key for 1% (97 bits per key at 8
 * bits) against 10.9 (43 bits per key) for 128, and four bits already make
 * overflow negligible (below).
 *
 * Accuracy.  A line receives Poisson(128/c) keys at c counters per key
 * (Putze et al. 2007), and an absent key is positive when its k counters
 * are non-zero: exactly the blocked filter's model with a 512-bit block
 * replaced by 128 cells (bk_blocked_predicted_fpr(c, k, 128), src/sizing.c):
 *
 *     FPR = sum_i Pois(i; 128/c) E[(X_i/128)^k],  X_i: counters non-zero
 *
 * k is the smallest within 1% of the best for c (bk_blocked_best_hashes),
 * and sizing from a target FPR searches the smallest c reaching it
 * (bk_blocked_bits_per_key_for_fpr with 128 cells):
 *
 *     target FPR   counters/key  k   bits/key   (classic layout: bits/key, k)
 *        10%           4.92      3     19.7          19.2, 3
 *         2%           8.88      5     35.5          32.6, 6
 *         1%          10.85      6     43.4          38.3, 7
 *       0.1%          19.01      8     76.0          57.5, 10
 *      0.01%          30.94     10    123.8          76.7, 13
 *
 * Below about 1e-5 the blocked layout needs more than twice the classic
 * counters (196.6 against 95.8 bits per key at 1e-5; at 1e-12 no line
 * size reaches the FPR), so a filter sized from such an FPR takes the
 * classic layout (takes_blocked_layout).
 *
 * Overflow and saturation.  A counter of a line holding i keys receives
 * Binomial(k i, 1/128) increments, so at the design point
 *
 *     P(counter >= t) = sum_i Pois(i; 128/c) P(Binomial(k i, 1/128) >= t)
 *
 * (the blocked analogue of Fan et al.'s Poisson bound for the classic
 * layout, P(some counter >= t) <= m (e ln 2 / t)^t).  Summed numerically:
 * a counter reaches 16 with probability 3.1e-16 at 1% (c = 10.85, k = 6),
 * 6.0e-17 at 0.1%, 1.8e-16 at 2%; 15 with 5.2e-15 at 1%.  Over a filter of
 * 10^9 counters the chance that any counter would overflow is below 3e-7.
 * When one does anyway (usually: one key added many times) the counter
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
 * A key's probes may repeat a counter; it then adds 2 to that counter, and
 * remove subtracts 2.  Should a counter run out before its last probe (only
 * possible for a key never added), remove undoes its own decrements and
 * reports BK_ENOTFOUND: it never underflows a counter and never
 * half-removes a key.
 *
 * Measured (tests/test_counting.c, examples/counting_delete.c; release):
 *   - blocked, 20,000 keys at p = 1%: m = 216,960 counters (1,695 lines,
 *     106 KiB), k = 6; 400,000 absent queries: FPR 0.9883%, design
 *     0.9998%, predicted from the fill 0.9976%.  10^7 8-byte keys
 *     (bloomkit-bench): 0.994% against 1.000% designed.
 *   - classic, 20,000 keys at p = 1%: m = 191,702 counters (93.6 KiB), k = 7;
 *     FPR 1.0015%, predicted from the fill 1.0048%, design 1.0039%.
 *   - The deletion demonstration (m = 768 in 6 lines, k = 4, keys
 *     in0..in99): after removing in7, the first false positive is out3;
 *     removing it makes in49, in51 and in65 absent (classic layout, m =
 *     624: out9, then in6 and in11).
 *
 * One key per call (blocked layout).  A filter far bigger than the caches
 * answers one key at a time no faster than the core overlaps independent
 * misses on the keys' lines, and it overlaps as many as its out-of-order
 * window holds calls: every instruction, load and store of a call -- the
 * hash, the dispatch, saved registers, the test -- waits in that window
 * behind the oldest miss.  The floor is one key hashed and one load of its
 * line.  So the one-key paths are made of few instructions:
 *
 *   - Queries: the portable test reads a line with one 8-byte load per
 *     counter (k loads, each waiting on the same miss); the AVX2 and
 *     AVX-512 tests (chosen per filter from the CPU, src/counting_path.h)
 *     take two 32-byte loads or one 64-byte load, everything but a few
 *     instructions computed from the hash before the line arrives.
 *   - Adds: the portable add reads and writes one 8-byte word per counter,
 *     k stores to the missing line, each later load of the line waiting on
 *     them; the vector adds take one load, a saturating add of all 128
 *     nibbles and one store (see "The add on the whole line" below), with
 *     the increments computed from the hash before the line arrives.
 *     Whether the key was new is computed only when the caller asks.
 *   - Calls: the handle jumps to the kind's integer-key (or 8-byte key)
 *     function, which jumps to one function per path and hash (MIX64 and
 *     XXH3 inlined) holding the whole call in straight code for k <= 7,
 *     with no saved registers.
 *
 * Every path gives the same answers and leaves the same counters (tested).
 * Batches request their lines ahead and test them with the same vector
 * tests.  How close the calls come to the floor: docs/PERFORMANCE.md,
 * "Counting one key per call against its floor".
 */
#include "bloomkit/counting.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blocked.h"
#include "bloom.h"
#include "counting_path.h"
#include "cpu.h"
#include "endian.h"
#include "filter.h"
#include "hash.h"
#include "memory.h"
#include "prefetch.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COUNTING_HAVE_X86_PATHS 1
#include <immintrin.h>
#endif

#define BATCH_CHUNK 16
#define NIBBLE_LOW_BITS 0x1111111111111111ULL

/* The blocked layout's line: 128 counters in 64 bytes. */
#define LINE_COUNTERS 128u
#define LINE_BYTES 64u
#define LINE_WORDS 8u
/* A 9-bit walk position p names counter p >> 2 (bits 4c .. 4c+3 of the line). */
#define POSITION_TO_COUNTER_SHIFT 2u

typedef struct bk_counting {
    uint8_t *bytes;     /* ceil(m/2) bytes of counters (allocated: padded to 8) */
    size_t byte_count;  /* ceil(m/2) */
    size_t alloc_bytes; /* bytes allocated (0 when borrowed) */
    uint64_t counters;  /* m */
    uint64_t lines;     /* m / 128 in the blocked layout; 0 in the classic one */
    unsigned hashes;    /* k */
    bk_counting_layout layout;
    uint64_t capacity;   /* design n */
    double target_fpr;   /* predicted FPR at capacity */
    uint64_t keys_added; /* adds minus removes */
    bk_hasher hasher;
    bool borrowed;         /* bytes belong to a mapped file: read-only */
    bk_counting_path path; /* the blocked layout's line test (src/counting_path.h) */
    uint8_t first_lanes;   /* bit i set for the first round's positions i < min(k, 7) */
    /* The one-key query and add of the layout and path (choose_one_key_paths);
     * the add is called on writable filters only. */
    bool (*query)(const struct bk_counting *filter, bk_hash hash);
    bk_status (*add)(struct bk_counting *filter, bk_hash hash, bool *was_new);
    /* The same from an integer key: for BK_HASH_MIX64 and BK_HASH_XXH3 the
     * path's own functions with the hash inlined, else the hash and the two
     * above (choose_u64_paths). */
    bool (*query_u64)(const struct bk_counting *filter, uint64_t key);
    bk_status (*add_u64)(struct bk_counting *filter, uint64_t key, bool *was_new);
} bk_counting;

/* What a filter is: m counters, k probes, the layout, design n and FPR. */
typedef struct counting_design {
    bk_sizing sizing; /* bits = m counters */
    bk_counting_layout layout;
} counting_design;

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
/* Query paths                                                              */
/* ------------------------------------------------------------------------ */

/* Whether this CPU (and build) can take `path`: AVX2 and AVX-512 F (with
 * DQ and BW, as bk_cpu reports it) on x86-64; BLOOMKIT_PORTABLE clears
 * both (src/cpu.h). */
static bool path_available(bk_counting_path path)
{
    switch (path) {
    case BK_COUNTING_PATH_PORTABLE: return true;
#ifdef COUNTING_HAVE_X86_PATHS
    case BK_COUNTING_PATH_AVX2: return bk_cpu()->avx2;
    case BK_COUNTING_PATH_AVX512: return bk_cpu()->avx2 && bk_cpu()->avx512dqbw;
#endif
    default: return false;
    }
}

/* The widest path this CPU has. */
static bk_counting_path best_path(void)
{
    if (path_available(BK_COUNTING_PATH_AVX512))
        return BK_COUNTING_PATH_AVX512;
    if (path_available(BK_COUNTING_PATH_AVX2))
        return BK_COUNTING_PATH_AVX2;
    return BK_COUNTING_PATH_PORTABLE;
}

/* ------------------------------------------------------------------------ */
/* Design and creation                                                      */
/* ------------------------------------------------------------------------ */

static bk_status check_design(const counting_design *design)
{
    const bk_sizing *sizing = &design->sizing;
    if (sizing->bits == 0 || sizing->hashes == 0 || sizing->capacity == 0)
        return BK_ERANGE;
    if (sizing->bits > BK_MAX_BITS / BK_COUNTING_COUNTER_BITS || sizing->hashes > BK_MAX_HASHES)
        return BK_ERANGE;
    if (design->layout == BK_COUNTING_BLOCKED && sizing->bits % LINE_COUNTERS != 0)
        return BK_ERANGE;
    return BK_OK;
}

/* The blocked layout's design FPR: m counters in lines of 128 at n keys. */
static double blocked_predicted_fpr(uint64_t counters, unsigned hashes, uint64_t capacity)
{
    return bk_blocked_predicted_fpr((double)counters / (double)capacity, hashes, LINE_COUNTERS);
}

/* The blocked layout's counters and k from the parameters, whose checks
 * the classic sizing (`classic`, computed from the same parameters) has
 * already made: explicit m rounded up to whole lines; counters per key at
 * the blocked k; or the fewest counters per key reaching the FPR. */
static bk_status blocked_sizing(const bk_params *params, const bk_sizing *classic,
                                bk_sizing *out)
{
    double n = (double)params->capacity;
    double counters;
    unsigned hashes;
    if (params->bits != 0) {
        counters = (double)classic->bits;
        hashes = classic->hashes;
    } else if (params->bits_per_key != 0) {
        counters = ceil(n * params->bits_per_key);
        hashes = bk_blocked_best_hashes(params->bits_per_key, LINE_COUNTERS);
    } else {
        double per_key;
        bk_status status = bk_blocked_bits_per_key_for_fpr(params->fpr == 0 ? 0.01 : params->fpr,
                                                           LINE_COUNTERS, &per_key, &hashes);
        if (status != BK_OK)
            return status;
        counters = ceil(n * per_key);
    }
    double lines = ceil(counters / LINE_COUNTERS);
    if (!(lines * LINE_COUNTERS <= (double)(BK_MAX_BITS / BK_COUNTING_COUNTER_BITS)))
        return BK_ERANGE;
    memset(out, 0, sizeof *out);
    out->capacity = params->capacity;
    out->bits = (uint64_t)(lines < 1 ? 1 : lines) * LINE_COUNTERS;
    out->hashes = hashes;
    out->predicted_fpr = blocked_predicted_fpr(out->bits, hashes, out->capacity);
    return BK_OK;
}

/* Whether a filter made from `params` takes the blocked layout, whose
 * design (or its error) is `blocked`.  Yes unless the flag asks for the
 * classic one, or the size comes from a target FPR and the blocked design
 * misses it or needs more than BLOCKED_MAX_COUNTER_RATIO times the classic
 * counters: a 128-counter line holds few keys at low FPRs, and below about
 * 1e-5 the blocked layout needs more than twice the classic counters (at
 * 1e-12 no design reaches the FPR). */
#define BLOCKED_MAX_COUNTER_RATIO 2.0

static bool takes_blocked_layout(const bk_params *params, const bk_sizing *classic,
                                 const bk_sizing *blocked, bk_status blocked_status)
{
    if (params->flags & BK_FLAG_COUNTING_CLASSIC)
        return false;
    bool sized_by_fpr = params->bits == 0 && params->bits_per_key == 0;
    if (!sized_by_fpr)
        return true; /* explicit m or counters per key: their errors are reported */
    return blocked_status == BK_OK &&
           (double)blocked->bits <= BLOCKED_MAX_COUNTER_RATIO * (double)classic->bits;
}

static bk_status design_from_params(const bk_params *params, counting_design *out)
{
    bk_sizing classic, blocked;
    memset(&blocked, 0, sizeof blocked);
    bk_status status = bk_size_from_params(params, &classic);
    if (status != BK_OK)
        return status;
    status = (params->flags & BK_FLAG_COUNTING_CLASSIC)
                 ? BK_OK
                 : blocked_sizing(params, &classic, &blocked);
    if (takes_blocked_layout(params, &classic, &blocked, status)) {
        if (status != BK_OK)
            return status;
        out->layout = BK_COUNTING_BLOCKED;
        out->sizing = blocked;
    } else {
        out->layout = BK_COUNTING_CLASSIC;
        out->sizing = classic;
    }
    return check_design(out);
}

static void choose_one_key_paths(bk_counting *filter);

/* A filter of the given design (sizing.bits = m counters).  With `borrowed`
 * NULL the counters are allocated and zeroed; otherwise the filter reads
 * those ceil(m/2) bytes in place and is read-only. */
static bk_status create_from_design(const counting_design *design, const bk_hasher *hasher,
                                    uint8_t *borrowed, bk_counting **out)
{
    bk_status status = check_design(design);
    if (status != BK_OK)
        return status;
    const bk_sizing *sizing = &design->sizing;
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
    filter->layout = design->layout;
    filter->lines = design->layout == BK_COUNTING_BLOCKED ? sizing->bits / LINE_COUNTERS : 0;
    filter->hashes = sizing->hashes;
    unsigned first_round = sizing->hashes < BK_BLOCKED_POSITIONS_PER_WORD
                               ? sizing->hashes
                               : BK_BLOCKED_POSITIONS_PER_WORD;
    filter->first_lanes = (uint8_t)((1u << first_round) - 1);
    filter->capacity = sizing->capacity;
    filter->target_fpr = sizing->predicted_fpr;
    filter->hasher = *hasher;
    filter->path = best_path();
    choose_one_key_paths(filter);
    *out = filter;
    return BK_OK;
}

static bk_status ops_create(const bk_params *params, void **out)
{
    counting_design design;
    bk_status status = design_from_params(params, &design);
    if (status != BK_OK)
        return status;
    bk_hasher hasher;
    status = bk_hasher_from_params(&hasher, params);
    if (status != BK_OK)
        return status;
    return create_from_design(&design, &hasher, NULL, (bk_counting **)out);
}

static void ops_destroy(void *object)
{
    bk_counting *filter = object;
    if (!filter->borrowed)
        bk_free_zeroed(filter->bytes, filter->alloc_bytes);
    memset(&filter->hasher, 0, sizeof filter->hasher); /* do not leave the key behind */
    free(filter);
}

static counting_design design_of(const bk_counting *filter)
{
    counting_design design;
    memset(&design, 0, sizeof design);
    design.sizing.capacity = filter->capacity;
    design.sizing.bits = filter->counters;
    design.sizing.hashes = filter->hashes;
    design.sizing.predicted_fpr = filter->target_fpr;
    design.layout = filter->layout;
    return design;
}

static bk_status ops_copy(const void *object, void **out)
{
    const bk_counting *filter = object;
    counting_design design = design_of(filter);
    bk_counting *copy;
    bk_status status = create_from_design(&design, &filter->hasher, NULL, &copy);
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
/* Where a key's counters are                                               */
/* ------------------------------------------------------------------------ */

static inline uint64_t line_index(const bk_counting *filter, bk_hash hash)
{
    return bk_blocked_block_index(hash.h1, filter->lines);
}

/* The key's line (blocked layout). */
static inline uint8_t *line_of(const bk_counting *filter, bk_hash hash)
{
    return filter->bytes + line_index(filter, hash) * LINE_BYTES;
}

static inline unsigned next_line_counter(bk_blocked_walk *walk)
{
    return bk_blocked_walk_next(walk) >> POSITION_TO_COUNTER_SHIFT;
}

/* The key's k counter indexes (0..m) in either layout, in probe order. */
static void key_positions(const bk_counting *filter, bk_hash hash, uint64_t *positions)
{
    if (filter->layout == BK_COUNTING_BLOCKED) {
        uint64_t first = line_index(filter, hash) * LINE_COUNTERS;
        bk_blocked_walk walk = bk_blocked_walk_start(hash.h2);
        for (unsigned i = 0; i < filter->hashes; i++)
            positions[i] = first + next_line_counter(&walk);
        return;
    }
    bk_probe probe = bk_probe_start(hash);
    for (unsigned i = 0; i < filter->hashes; i++)
        positions[i] = bk_probe_next(&probe, filter->counters);
}

/* ------------------------------------------------------------------------ */
/* The hot path, blocked layout: one line per key                           */
/* ------------------------------------------------------------------------ */

/*
 * A line is read as eight little-endian 64-bit words: the counter of walk
 * position p (counter p >> 2) is bits (p & 60) .. (p & 60) + 3 of word
 * p >> 6.  One hash word gives up to 7 positions (its 9-bit slices, lowest
 * first); k > 7 continues with bk_mix64 of the word, as the walk does
 * (bloomkit/detail/blocked_detail.h).  The tests and increments below
 * avoid branches on the counters: a counter v in 0..15 has v - 1 with bit
 * 4 set exactly when v is 0, so OR-ing v - 1 over the key's counters
 * gives "some counter was 0" in bit 4.
 */
#define ROUND_POSITIONS BK_BLOCKED_POSITIONS_PER_WORD
#define ZERO_FLAG 16u

static inline unsigned round_length(unsigned hashes, unsigned done)
{
    return hashes - done < ROUND_POSITIONS ? hashes - done : ROUND_POSITIONS;
}

static inline uint64_t line_word(const uint8_t *line, unsigned position)
{
    return bk_load_le64(line + 8 * (position >> 6));
}

/* v - 1 for the counter v of slice i of `word` (bit 4 set when v is 0). */
static inline uint64_t slice_zero_flag(const uint8_t *line, uint64_t word, unsigned i)
{
    unsigned position = (unsigned)(word >> (BK_BLOCKED_POSITION_BITS * i)) &
                        (BK_BLOCKED_BLOCK_BITS - 1);
    return ((line_word(line, position) >> (position & 60)) & 0xf) - 1;
}

/* Bit 4 set when one of `count` (1..7) counters named by the slices of
 * `word` is 0.  A switch into straight code, each slice at a constant
 * shift: no loop counter and no exit test per counter (a one-key query is
 * bound by how many instructions wait behind its cache miss). */
static inline uint64_t round_zero_flags(const uint8_t *line, uint64_t word, unsigned count)
{
    uint64_t flags = 0;
    switch (count) {
    case 7: flags |= slice_zero_flag(line, word, 6); /* fallthrough */
    case 6: flags |= slice_zero_flag(line, word, 5); /* fallthrough */
    case 5: flags |= slice_zero_flag(line, word, 4); /* fallthrough */
    case 4: flags |= slice_zero_flag(line, word, 3); /* fallthrough */
    case 3: flags |= slice_zero_flag(line, word, 2); /* fallthrough */
    case 2: flags |= slice_zero_flag(line, word, 1); /* fallthrough */
    default: flags |= slice_zero_flag(line, word, 0);
    }
    return flags;
}

/* Whether the key's k counters in its line are all non-zero. */
static inline bool line_test(const uint8_t *line, uint64_t h2, unsigned hashes)
{
    uint64_t flags = round_zero_flags(line, h2, round_length(hashes, 0));
    for (unsigned done = ROUND_POSITIONS; done < hashes; done += ROUND_POSITIONS) {
        h2 = bk_mix64(h2);
        flags |= round_zero_flags(line, h2, round_length(hashes, done));
    }
    return (flags & ZERO_FLAG) == 0;
}

/* Increments `count` counters named by the slices of `word` (saturating;
 * a repeated counter is read back after its first increment); bit 4 of
 * the result is set when one of them was 0. */
static inline uint64_t round_increment(uint8_t *line, uint64_t word, unsigned count)
{
    uint64_t flags = 0;
    for (unsigned i = 0; i < count; i++, word >>= BK_BLOCKED_POSITION_BITS) {
        unsigned position = (unsigned)word & (BK_BLOCKED_BLOCK_BITS - 1);
        uint8_t *at = line + 8 * (position >> 6);
        uint64_t bits = bk_load_le64(at);
        unsigned shift = position & 60;
        uint64_t value = (bits >> shift) & 0xf;
        flags |= value - 1;
        bk_store_le64(at, bits + ((uint64_t)(value < BK_COUNTING_MAX) << shift));
    }
    return flags;
}

/* Increments the key's k counters in its line; returns whether any was 0. */
static inline bool line_increment(uint8_t *line, uint64_t h2, unsigned hashes)
{
    uint64_t flags = round_increment(line, h2, round_length(hashes, 0));
    for (unsigned done = ROUND_POSITIONS; done < hashes; done += ROUND_POSITIONS) {
        h2 = bk_mix64(h2);
        flags |= round_increment(line, h2, round_length(hashes, done));
    }
    return (flags & ZERO_FLAG) != 0;
}

/*
 * The same test on the whole line in vector registers (x86-64; why: the
 * opening comment, "One key per call").  The k positions, the word (or
 * 32-bit lane) of each counter and the counter's nibble mask are computed
 * from h2 alone, so only the last two or three instructions wait for the
 * line:
 *
 *   AVX-512: lane i of a 64-bit vector holds position p_i = slice i of the
 *   hash word (shifts 0, 9, ..., 54; lane 7 unused), the line's word
 *   p_i >> 6 is moved into it (VPERMQ), shifted right by p_i & 60, and
 *   VPTESTNMQ with 15 flags the lanes whose counter is 0.
 *   AVX2: eight 32-bit lanes; the counter of p_i is bits (p_i & 28) ..
 *   (p_i & 28) + 3 of the line's 32-bit word p_i >> 5, taken from the
 *   line's low or high half by VPERMD of each and a blend on bit 3 of that
 *   word index; VPCMPEQD against zero after the nibble mask flags the zeros.
 * Rounds of seven positions and bk_mix64 between them, as the walk.
 */
#ifdef COUNTING_HAVE_X86_PATHS
#define AVX_TARGET_512 __attribute__((target("avx2,avx512f")))
#define AVX_TARGET_2 __attribute__((target("avx2")))

/* Lanes of the zero flags of `count` (1..7) positions. */
static inline unsigned round_lanes(unsigned count) { return (1u << count) - 1; }

/* One bit per lane of `lanes` (lane i: slice i of `word`, i < 7) whose
 * counter is 0.  VPERMQ reads bits 0..2 of each index, so slice i shifted
 * right by 9 i + 6 names its word with no mask; the counter is then
 * shifted down by p & 60 and tested against 15. */
AVX_TARGET_512 static inline unsigned avx512_lane_zeros(__m512i line, uint64_t word,
                                                        __mmask8 lanes)
{
    const __m512i slices = _mm512_set_epi64(63, 54, 45, 36, 27, 18, 9, 0);
    const __m512i slice_words = _mm512_set_epi64(69, 60, 51, 42, 33, 24, 15, 6);
    __m512i broadcast = _mm512_set1_epi64((long long)word);
    __m512i words = _mm512_permutexvar_epi64(_mm512_srlv_epi64(broadcast, slice_words), line);
    __m512i shifts = _mm512_and_si512(_mm512_srlv_epi64(broadcast, slices),
                                      _mm512_set1_epi64(60));
    return _mm512_mask_testn_epi64_mask(lanes, _mm512_srlv_epi64(words, shifts),
                                        _mm512_set1_epi64(0xf));
}

/* One bit per position of the round (`count`: 1..7) whose counter is 0. */
AVX_TARGET_512 static inline unsigned avx512_round_zeros(__m512i line, uint64_t word,
                                                         unsigned count)
{
    return avx512_lane_zeros(line, word, (__mmask8)round_lanes(count));
}

/* Non-zero when one of the key's k counters in the line `data` is 0. */
AVX_TARGET_512 static inline unsigned avx512_line_zeros(__m512i data, uint64_t h2,
                                                        unsigned hashes)
{
    unsigned zeros = avx512_round_zeros(data, h2, round_length(hashes, 0));
    for (unsigned done = ROUND_POSITIONS; done < hashes; done += ROUND_POSITIONS) {
        h2 = bk_mix64(h2);
        zeros |= avx512_round_zeros(data, h2, round_length(hashes, done));
    }
    return zeros;
}

/* line_test on AVX-512 F, any k. */
AVX_TARGET_512 BK_NOINLINE static bool line_test_avx512_rounds(const uint8_t *line, uint64_t h2,
                                                               unsigned hashes)
{
    return avx512_line_zeros(_mm512_loadu_si512((const void *)line), h2, hashes) == 0;
}

/* line_test on AVX-512 F: k <= 7 (every design from 2% down to 0.1%
 * FPR but one) in straight code, larger k out of line, so that the
 * one-key query holds few instructions and no saved registers. */
AVX_TARGET_512 static inline bool line_test_avx512(const uint8_t *line, uint64_t h2,
                                                   unsigned hashes)
{
    if (hashes > ROUND_POSITIONS)
        return line_test_avx512_rounds(line, h2, hashes);
    return avx512_round_zeros(_mm512_loadu_si512((const void *)line), h2, hashes) == 0;
}

/* The one-key query's form of it: `first_lanes` = round_lanes(min(k, 7)),
 * kept in the filter, saves computing the mask per call. */
AVX_TARGET_512 static inline bool line_test_avx512_lanes(const uint8_t *line, uint64_t h2,
                                                         unsigned hashes, __mmask8 first_lanes)
{
    if (hashes > ROUND_POSITIONS)
        return line_test_avx512_rounds(line, h2, hashes);
    return avx512_lane_zeros(_mm512_loadu_si512((const void *)line), h2, first_lanes) == 0;
}

/* The AVX2 lanes of the round's positions: the low 32 bits of slices
 * 0, 4, 1, 5, 2, 6, 3, 7 (slice 7 unused), so `count` positions take the
 * lanes of avx2_round_lanes[count]. */
static const uint8_t avx2_round_lanes[ROUND_POSITIONS + 1] = { 0x00, 0x01, 0x05, 0x15,
                                                               0x55, 0x57, 0x5f, 0x7f };

/* One bit per lane (avx2_round_lanes) whose counter is 0. */
AVX_TARGET_2 static inline unsigned avx2_round_zeros(__m256i low, __m256i high, uint64_t word,
                                                     unsigned count)
{
    __m256i broadcast = _mm256_set1_epi64x((long long)word);
    __m256i first = _mm256_srlv_epi64(broadcast, _mm256_set_epi64x(27, 18, 9, 0));
    __m256i second = _mm256_srlv_epi64(broadcast, _mm256_set_epi64x(63, 54, 45, 36));
    __m256i positions = _mm256_and_si256(
        _mm256_blend_epi32(first, _mm256_slli_epi64(second, 32), 0xaa),
        _mm256_set1_epi32(BK_BLOCKED_BLOCK_BITS - 1));
    __m256i lanes = _mm256_srli_epi32(positions, 5);
    __m256i from_low = _mm256_permutevar8x32_epi32(low, lanes);
    __m256i from_high = _mm256_permutevar8x32_epi32(high, lanes);
    __m256 in_high = _mm256_castsi256_ps(_mm256_slli_epi32(lanes, 28));
    __m256i words = _mm256_castps_si256(_mm256_blendv_ps(
        _mm256_castsi256_ps(from_low), _mm256_castsi256_ps(from_high), in_high));
    __m256i nibbles = _mm256_sllv_epi32(_mm256_set1_epi32(0xf),
                                        _mm256_and_si256(positions, _mm256_set1_epi32(28)));
    __m256i zero = _mm256_cmpeq_epi32(_mm256_and_si256(words, nibbles), _mm256_setzero_si256());
    return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(zero)) & avx2_round_lanes[count];
}

/* Non-zero when one of the key's k counters in the line (`low`, `high`
 * halves) is 0. */
AVX_TARGET_2 static inline unsigned avx2_line_zeros(__m256i low, __m256i high, uint64_t h2,
                                                    unsigned hashes)
{
    unsigned zeros = avx2_round_zeros(low, high, h2, round_length(hashes, 0));
    for (unsigned done = ROUND_POSITIONS; done < hashes; done += ROUND_POSITIONS) {
        h2 = bk_mix64(h2);
        zeros |= avx2_round_zeros(low, high, h2, round_length(hashes, done));
    }
    return zeros;
}

/* line_test on AVX2. */
AVX_TARGET_2 static inline bool line_test_avx2(const uint8_t *line, uint64_t h2, unsigned hashes)
{
    return avx2_line_zeros(_mm256_loadu_si256((const void *)line),
                           _mm256_loadu_si256((const void *)(line + 32)), h2, hashes) == 0;
}

/*
 * The add on the whole line (AVX-512 BW and AVX2).  Row 4c of
 * bk_blocked_one_hot (the 512-bit block with only bit 4c set) is counter c
 * plus one, so the sum of the rows of the key's k counters -- 64-bit lane
 * adds, one aligned row load each, all before the line arrives -- holds in
 * nibble c how many of its probes name counter c.  With k <= 15 no nibble
 * of that sum exceeds 15, so the rows add without a carry between
 * nibbles.  The line then takes one load, a saturating add of every nibble
 * (the low and the high nibbles of each byte apart, as bytes: a sum of at
 * most 30, clamped to 15 by an unsigned byte minimum) and one store: the
 * same counters as k increments one at a time, each stopping at 15.
 * Larger k takes the portable add.
 */
#define VECTOR_ADD_MAX_HASHES 15u
#define AVX_TARGET_512BW __attribute__((target("avx2,avx512f,avx512bw")))

/* The row of slice i of `word`: its counter's one-hot 512 bits. */
static inline const void *slice_one_hot(uint64_t word, unsigned i)
{
    unsigned position = (unsigned)(word >> (BK_BLOCKED_POSITION_BITS * i)) &
                        (BK_BLOCKED_BLOCK_BITS - 1);
    return bk_blocked_one_hot[position & ~3u];
}

/* The sum of the rows of `count` (1..7) slices of `word`, lanes by lanes
 * (a 64-byte row as one AVX-512 or two AVX2 vectors: ROW_ADD). */
#define ROUND_ROWS(ROW_ADD, sum, word, count)                           \
    do {                                                                \
        switch (count) {                                                \
        case 7: ROW_ADD(sum, slice_one_hot(word, 6)); /* fallthrough */ \
        case 6: ROW_ADD(sum, slice_one_hot(word, 5)); /* fallthrough */ \
        case 5: ROW_ADD(sum, slice_one_hot(word, 4)); /* fallthrough */ \
        case 4: ROW_ADD(sum, slice_one_hot(word, 3)); /* fallthrough */ \
        case 3: ROW_ADD(sum, slice_one_hot(word, 2)); /* fallthrough */ \
        case 2: ROW_ADD(sum, slice_one_hot(word, 1)); /* fallthrough */ \
        default: ROW_ADD(sum, slice_one_hot(word, 0));                  \
        }                                                               \
    } while (0)

#define AVX512_ROW_ADD(sum, row) ((sum) = _mm512_add_epi64((sum), _mm512_load_si512(row)))

/* The key's increments, nibble c for counter c (k <= 15). */
AVX_TARGET_512BW static inline __m512i avx512_increments(uint64_t h2, unsigned hashes)
{
    __m512i sum = _mm512_setzero_si512();
    ROUND_ROWS(AVX512_ROW_ADD, sum, h2, round_length(hashes, 0));
    for (unsigned done = ROUND_POSITIONS; done < hashes; done += ROUND_POSITIONS) {
        h2 = bk_mix64(h2);
        ROUND_ROWS(AVX512_ROW_ADD, sum, h2, round_length(hashes, done));
    }
    return sum;
}

/* Every nibble of `line` plus its nibble of `increments`, clamped to 15. */
AVX_TARGET_512BW static inline __m512i avx512_saturating_add(__m512i line, __m512i increments)
{
    const __m512i low = _mm512_set1_epi8(0x0f);
    __m512i even = _mm512_add_epi8(_mm512_and_si512(line, low),
                                   _mm512_and_si512(increments, low));
    __m512i odd = _mm512_add_epi8(_mm512_and_si512(_mm512_srli_epi64(line, 4), low),
                                  _mm512_and_si512(_mm512_srli_epi64(increments, 4), low));
    return _mm512_or_si512(_mm512_min_epu8(even, low),
                           _mm512_slli_epi64(_mm512_min_epu8(odd, low), 4));
}

/* line_increment on AVX-512 BW (k <= 15); *fresh (when not NULL) gets
 * whether one of the counters was 0. */
AVX_TARGET_512BW static inline void line_increment_avx512(uint8_t *line, uint64_t h2,
                                                          unsigned hashes, bool *fresh)
{
    __m512i increments = avx512_increments(h2, hashes);
    __m512i data = _mm512_loadu_si512((const void *)line);
    if (fresh != NULL)
        *fresh = avx512_line_zeros(data, h2, hashes) != 0;
    _mm512_storeu_si512((void *)line, avx512_saturating_add(data, increments));
}

/* The same for k <= 7 (one round) in straight code: the one-key add of
 * the common designs holds few instructions and no saved registers. */
AVX_TARGET_512BW static inline void line_increment_avx512_one_round(uint8_t *line, uint64_t h2,
                                                                    unsigned hashes, bool *fresh)
{
    __m512i increments = _mm512_setzero_si512();
    ROUND_ROWS(AVX512_ROW_ADD, increments, h2, hashes);
    __m512i data = _mm512_loadu_si512((const void *)line);
    if (fresh != NULL)
        *fresh = avx512_round_zeros(data, h2, hashes) != 0;
    _mm512_storeu_si512((void *)line, avx512_saturating_add(data, increments));
}

#define AVX2_ROW_ADD(sum, row)                                                \
    do {                                                                      \
        const __m256i *halves = (const __m256i *)(row);                       \
        (sum)[0] = _mm256_add_epi64((sum)[0], _mm256_load_si256(halves));     \
        (sum)[1] = _mm256_add_epi64((sum)[1], _mm256_load_si256(halves + 1)); \
    } while (0)

/* Every nibble of `half` plus its nibble of `increments`, clamped to 15. */
AVX_TARGET_2 static inline __m256i avx2_saturating_add(__m256i half, __m256i increments)
{
    const __m256i low = _mm256_set1_epi8(0x0f);
    __m256i even = _mm256_add_epi8(_mm256_and_si256(half, low),
                                   _mm256_and_si256(increments, low));
    __m256i odd = _mm256_add_epi8(_mm256_and_si256(_mm256_srli_epi64(half, 4), low),
                                  _mm256_and_si256(_mm256_srli_epi64(increments, 4), low));
    return _mm256_or_si256(_mm256_min_epu8(even, low),
                           _mm256_slli_epi64(_mm256_min_epu8(odd, low), 4));
}

/* line_increment on AVX2 (k <= 15), as line_increment_avx512. */
AVX_TARGET_2 static inline void line_increment_avx2(uint8_t *line, uint64_t h2, unsigned hashes,
                                                    bool *fresh)
{
    __m256i sum[2] = { _mm256_setzero_si256(), _mm256_setzero_si256() };
    uint64_t word = h2;
    ROUND_ROWS(AVX2_ROW_ADD, sum, word, round_length(hashes, 0));
    for (unsigned done = ROUND_POSITIONS; done < hashes; done += ROUND_POSITIONS) {
        word = bk_mix64(word);
        ROUND_ROWS(AVX2_ROW_ADD, sum, word, round_length(hashes, done));
    }
    __m256i low = _mm256_loadu_si256((const void *)line);
    __m256i high = _mm256_loadu_si256((const void *)(line + 32));
    if (fresh != NULL)
        *fresh = avx2_line_zeros(low, high, h2, hashes) != 0;
    _mm256_storeu_si256((void *)line, avx2_saturating_add(low, sum[0]));
    _mm256_storeu_si256((void *)(line + 32), avx2_saturating_add(high, sum[1]));
}
#endif

/* ------------------------------------------------------------------------ */
/* The hot path, classic layout: k counters anywhere                        */
/* ------------------------------------------------------------------------ */

/* Increments the key's k counters (saturating); returns whether any was 0. */
static inline bool classic_increment(bk_counting *filter, bk_hash hash)
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

static inline bool classic_test(const bk_counting *filter, bk_hash hash)
{
    bk_probe probe = bk_probe_start(hash);
    for (unsigned i = 0; i < filter->hashes; i++)
        if (counter_get(filter->bytes, bk_probe_next(&probe, filter->counters)) == 0)
            return false;
    return true;
}

static inline void classic_prefetch(const bk_counting *filter, bk_hash hash)
{
    bk_probe probe = bk_probe_start(hash);
    for (unsigned i = 0; i < filter->hashes; i++)
        __builtin_prefetch(&filter->bytes[bk_probe_next(&probe, filter->counters) >> 1]);
}

/* ------------------------------------------------------------------------ */
/* One key                                                                  */
/* ------------------------------------------------------------------------ */

/* What every add does after its counters: the key count. */
static inline bk_status count_added(bk_counting *filter)
{
    filter->keys_added = bk_saturating_add(filter->keys_added, 1);
    return BK_OK;
}

/* The same, and *was_new (when not NULL) from whether a counter was 0. */
static inline bk_status finish_add(bk_counting *filter, bool fresh, bool *was_new)
{
    if (was_new != NULL)
        *was_new = fresh;
    return count_added(filter);
}

/* The one-key queries and adds, one per layout and path, each out of line
 * so that the ops below reach it by one tail jump through filter->query or
 * filter->add. */
static BK_NOINLINE bool query_classic(const bk_counting *filter, bk_hash hash)
{
    return classic_test(filter, hash);
}

static BK_NOINLINE bool query_portable(const bk_counting *filter, bk_hash hash)
{
    return line_test(line_of(filter, hash), hash.h2, filter->hashes);
}

static BK_NOINLINE bk_status add_classic(bk_counting *filter, bk_hash hash, bool *was_new)
{
    return finish_add(filter, classic_increment(filter, hash), was_new);
}

static BK_NOINLINE bk_status add_portable(bk_counting *filter, bk_hash hash, bool *was_new)
{
    return finish_add(filter, line_increment(line_of(filter, hash), hash.h2, filter->hashes),
                      was_new);
}

#ifdef COUNTING_HAVE_X86_PATHS
AVX_TARGET_512 BK_NOINLINE static bool query_avx512(const bk_counting *filter, bk_hash hash)
{
    return line_test_avx512_lanes(line_of(filter, hash), hash.h2, filter->hashes,
                                  filter->first_lanes);
}

AVX_TARGET_2 BK_NOINLINE static bool query_avx2(const bk_counting *filter, bk_hash hash)
{
    return line_test_avx2(line_of(filter, hash), hash.h2, filter->hashes);
}

/* The vector adds (the vector increments write *was_new themselves): k <= 7
 * in straight code, larger k out of line, so that the one-key add holds
 * few instructions and no saved registers. */
AVX_TARGET_512BW BK_NOINLINE static bk_status add_avx512_rounds(bk_counting *filter,
                                                                bk_hash hash, bool *was_new)
{
    line_increment_avx512(line_of(filter, hash), hash.h2, filter->hashes, was_new);
    return count_added(filter);
}

AVX_TARGET_512BW static inline bk_status add_on_line_avx512(bk_counting *filter, bk_hash hash,
                                                            bool *was_new)
{
    if (filter->hashes > ROUND_POSITIONS)
        return add_avx512_rounds(filter, hash, was_new);
    line_increment_avx512_one_round(line_of(filter, hash), hash.h2, filter->hashes, was_new);
    return count_added(filter);
}

AVX_TARGET_2 static inline bk_status add_on_line_avx2(bk_counting *filter, bk_hash hash,
                                                      bool *was_new)
{
    line_increment_avx2(line_of(filter, hash), hash.h2, filter->hashes, was_new);
    return count_added(filter);
}

AVX_TARGET_512BW BK_NOINLINE static bk_status add_avx512(bk_counting *filter, bk_hash hash,
                                                         bool *was_new)
{
    return add_on_line_avx512(filter, hash, was_new);
}

AVX_TARGET_2 BK_NOINLINE static bk_status add_avx2(bk_counting *filter, bk_hash hash,
                                                   bool *was_new)
{
    return add_on_line_avx2(filter, hash, was_new);
}
#endif

/* An integer key's query and add hashed with the filter's algorithm
 * (bk_hash_u64), then filter->query or filter->add. */
static bool query_u64_hashed(const bk_counting *filter, uint64_t key)
{
    return filter->query(filter, bk_hash_u64(&filter->hasher, key));
}

static bk_status add_u64_hashed(bk_counting *filter, uint64_t key, bool *was_new)
{
    return filter->add(filter, bk_hash_u64(&filter->hasher, key), was_new);
}

/*
 * The same for a BK_HASH_MIX64 or BK_HASH_XXH3 filter of the blocked
 * layout: one function per hash and path with the hash of the key's 8
 * bytes inlined (bk_mix64_of_u64, bk_xxh3_128_of_u64: what bk_hash_u64
 * computes for that algorithm), so that a one-key call is the handle's
 * jump, this kind's jump and straight code with no frame.  The byte-key
 * calls of 8-byte keys come here too (ops_contains_key).
 */
#define U64_PORTABLE_FUNCTIONS(NAME, HASH)                                                    \
    static BK_NOINLINE bool query_##NAME##_portable(const bk_counting *filter, uint64_t key)  \
    {                                                                                         \
        bk_hash hash = HASH(key, filter->hasher.seed);                                        \
        return line_test(line_of(filter, hash), hash.h2, filter->hashes);                     \
    }                                                                                         \
    static BK_NOINLINE bk_status add_##NAME##_portable(bk_counting *filter, uint64_t key,     \
                                                       bool *was_new)                         \
    {                                                                                         \
        bk_hash hash = HASH(key, filter->hasher.seed);                                        \
        return finish_add(                                                                    \
            filter, line_increment(line_of(filter, hash), hash.h2, filter->hashes), was_new); \
    }

#define U64_X86_FUNCTIONS(NAME, HASH)                                                        \
    AVX_TARGET_512 BK_NOINLINE static bool query_##NAME##_avx512(const bk_counting *filter,  \
                                                                 uint64_t key)               \
    {                                                                                        \
        bk_hash hash = HASH(key, filter->hasher.seed);                                       \
        return line_test_avx512_lanes(line_of(filter, hash), hash.h2, filter->hashes,        \
                                      filter->first_lanes);                                  \
    }                                                                                        \
    AVX_TARGET_2 BK_NOINLINE static bool query_##NAME##_avx2(const bk_counting *filter,      \
                                                             uint64_t key)                   \
    {                                                                                        \
        bk_hash hash = HASH(key, filter->hasher.seed);                                       \
        return line_test_avx2(line_of(filter, hash), hash.h2, filter->hashes);               \
    }                                                                                        \
    AVX_TARGET_512BW BK_NOINLINE static bk_status add_##NAME##_avx512(                       \
        bk_counting *filter, uint64_t key, bool *was_new)                                    \
    {                                                                                        \
        return add_on_line_avx512(filter, HASH(key, filter->hasher.seed), was_new);          \
    }                                                                                        \
    AVX_TARGET_2 BK_NOINLINE static bk_status add_##NAME##_avx2(bk_counting *filter,         \
                                                                uint64_t key, bool *was_new) \
    {                                                                                        \
        return add_on_line_avx2(filter, HASH(key, filter->hasher.seed), was_new);            \
    }

/* One hash's integer-key functions, by bk_counting_path. */
typedef struct u64_functions {
    bool (*query[3])(const bk_counting *filter, uint64_t key);
    bk_status (*add[3])(bk_counting *filter, uint64_t key, bool *was_new);
} u64_functions;

U64_PORTABLE_FUNCTIONS(mix64, bk_mix64_of_u64)
U64_PORTABLE_FUNCTIONS(xxh3, bk_xxh3_128_of_u64)
#ifdef COUNTING_HAVE_X86_PATHS
U64_X86_FUNCTIONS(mix64, bk_mix64_of_u64)
U64_X86_FUNCTIONS(xxh3, bk_xxh3_128_of_u64)
#define U64_FUNCTIONS(NAME)                                                      \
    {                                                                            \
        { query_##NAME##_portable, query_##NAME##_avx2, query_##NAME##_avx512 }, \
        {                                                                        \
            add_##NAME##_portable, add_##NAME##_avx2, add_##NAME##_avx512        \
        }                                                                        \
    }
#else
#define U64_FUNCTIONS(NAME)                                                            \
    {                                                                                  \
        { query_##NAME##_portable, query_##NAME##_portable, query_##NAME##_portable }, \
        {                                                                              \
            add_##NAME##_portable, add_##NAME##_portable, add_##NAME##_portable        \
        }                                                                              \
    }
#endif
static const u64_functions mix64_functions = U64_FUNCTIONS(mix64);
static const u64_functions xxh3_functions = U64_FUNCTIONS(xxh3);

/* filter->query_u64 and add_u64 (after query and add are chosen): the
 * functions of the filter's hash and path, the add's portable one where
 * k rules the vector add out. */
static void choose_u64_paths(bk_counting *filter)
{
    filter->query_u64 = query_u64_hashed;
    filter->add_u64 = add_u64_hashed;
    const u64_functions *functions = filter->hasher.algorithm == BK_HASH_MIX64 ? &mix64_functions
                                     : filter->hasher.algorithm == BK_HASH_XXH3 ? &xxh3_functions
                                                                                : NULL;
    if (functions == NULL || filter->layout != BK_COUNTING_BLOCKED)
        return;
    filter->query_u64 = functions->query[filter->path];
    filter->add_u64 =
        functions->add[filter->add == add_portable ? BK_COUNTING_PATH_PORTABLE : filter->path];
}

/* filter->query and filter->add (and their integer-key forms) from the
 * layout, the path, k and the hash algorithm. */
static void choose_one_key_paths(bk_counting *filter)
{
    filter->query = query_portable;
    filter->add = add_portable;
    if (filter->layout == BK_COUNTING_CLASSIC) {
        filter->query = query_classic;
        filter->add = add_classic;
    }
#ifdef COUNTING_HAVE_X86_PATHS
    else if (filter->path == BK_COUNTING_PATH_AVX512)
        filter->query = query_avx512;
    else if (filter->path == BK_COUNTING_PATH_AVX2)
        filter->query = query_avx2;
    if (filter->layout == BK_COUNTING_BLOCKED && filter->hashes <= VECTOR_ADD_MAX_HASHES) {
        if (filter->path == BK_COUNTING_PATH_AVX512)
            filter->add = add_avx512;
        else if (filter->path == BK_COUNTING_PATH_AVX2)
            filter->add = add_avx2;
    }
#endif
    choose_u64_paths(filter);
}

static unsigned min_counter(const bk_counting *filter, bk_hash hash)
{
    uint64_t positions[BK_MAX_HASHES];
    key_positions(filter, hash, positions);
    unsigned least = BK_COUNTING_MAX;
    for (unsigned i = 0; i < filter->hashes; i++) {
        unsigned value = counter_get(filter->bytes, positions[i]);
        if (value < least)
            least = value;
    }
    return least;
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
    return filter->add(filter, hash, was_new);
}

static BK_NOINLINE bk_status add_key_hashed(bk_counting *filter, const void *key, size_t len,
                                            bool *was_new)
{
    return filter->add(filter, bk_hash_inline(&filter->hasher, key, len), was_new);
}

/* As ops_contains_key. */
static bk_status ops_add_key(void *object, const void *key, size_t len, bool *was_new)
{
    bk_counting *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    if (len == sizeof(uint64_t))
        return filter->add_u64(filter, bk_load_le64(key), was_new);
    return add_key_hashed(filter, key, len, was_new);
}

static bk_status ops_add_u64(void *object, uint64_t key, bool *was_new)
{
    bk_counting *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    return filter->add_u64(filter, key, was_new);
}

static bk_status ops_remove_hash(void *object, bk_hash hash)
{
    bk_counting *filter = object;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    uint64_t positions[BK_MAX_HASHES];
    key_positions(filter, hash, positions);
    if (any_counter_zero(filter, positions) || !decrement_all_or_nothing(filter, positions))
        return BK_ENOTFOUND;
    if (filter->keys_added > 0)
        filter->keys_added--;
    return BK_OK;
}

static bool ops_contains_hash(const void *filter, bk_hash hash)
{
    return ((const bk_counting *)filter)->query(filter, hash);
}

static BK_NOINLINE bool contains_key_hashed(const bk_counting *filter, const void *key,
                                            size_t len)
{
    return filter->query(filter, bk_hash_inline(&filter->hasher, key, len));
}

/* An 8-byte key is its little-endian integer (bk_hash_u64 hashes those
 * bytes): the integer-key functions take it, by a jump with no frame. */
static bool ops_contains_key(const void *object, const void *key, size_t len)
{
    const bk_counting *filter = object;
    if (len == sizeof(uint64_t))
        return filter->query_u64(filter, bk_load_le64(key));
    return contains_key_hashed(filter, key, len);
}

static bool ops_contains_u64(const void *object, uint64_t key)
{
    const bk_counting *filter = object;
    return filter->query_u64(filter, key);
}

static bk_status ops_count_hash(const void *filter, bk_hash hash, uint64_t *count)
{
    *count = min_counter(filter, hash);
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                  */
/* ------------------------------------------------------------------------ */

/* Blocked layout: each key's line requested BK_ADD_PREFETCH_DISTANCE keys
 * ahead (for writing), then its counters incremented. */
static size_t blocked_add_batch(bk_counting *filter, const bk_hash *hashes, size_t count)
{
    size_t fresh = 0;
    size_t ahead = count < BK_ADD_PREFETCH_DISTANCE ? count : BK_ADD_PREFETCH_DISTANCE;
    for (size_t i = 0; i < ahead; i++)
        __builtin_prefetch(line_of(filter, hashes[i]), 1);
    for (size_t i = 0; i < count; i++) {
        if (i + BK_ADD_PREFETCH_DISTANCE < count)
            __builtin_prefetch(line_of(filter, hashes[i + BK_ADD_PREFETCH_DISTANCE]), 1);
        fresh += line_increment(line_of(filter, hashes[i]), hashes[i].h2, filter->hashes);
    }
    return fresh;
}

/* The query ring's hooks (src/prefetch.h): a key's line, and its test. */
static inline const void *ring_line_of(const void *filter, const bk_hash *hash)
{
    return line_of(filter, *hash);
}

static inline bool ring_probe(const void *context, const void *line, const bk_hash *hash)
{
    return line_test(line, hash->h2, *(const unsigned *)context);
}

#ifdef COUNTING_HAVE_X86_PATHS
/* The ring with the vector tests of the line (the same answers). */
AVX_TARGET_512 static inline bool ring_probe_avx512(const void *context, const void *line,
                                                    const bk_hash *hash)
{
    return line_test_avx512(line, hash->h2, *(const unsigned *)context);
}

AVX_TARGET_512 BK_NOINLINE static size_t
ring_avx512(const bk_counting *filter, const bk_hash *hashes, size_t count, bool *results)
{
    return bk_line_ring_probe(filter, hashes, count, results, ring_line_of, ring_probe_avx512,
                              &filter->hashes);
}

AVX_TARGET_2 static inline bool ring_probe_avx2(const void *context, const void *line,
                                                const bk_hash *hash)
{
    return line_test_avx2(line, hash->h2, *(const unsigned *)context);
}

AVX_TARGET_2 BK_NOINLINE static size_t
ring_avx2(const bk_counting *filter, const bk_hash *hashes, size_t count, bool *results)
{
    return bk_line_ring_probe(filter, hashes, count, results, ring_line_of, ring_probe_avx2,
                              &filter->hashes);
}
#endif

/* The blocked layout's batch query on the filter's path. */
static size_t blocked_test_batch(const bk_counting *filter, const bk_hash *hashes, size_t count,
                                 bool *results)
{
#ifdef COUNTING_HAVE_X86_PATHS
    if (filter->path == BK_COUNTING_PATH_AVX512)
        return ring_avx512(filter, hashes, count, results);
    if (filter->path == BK_COUNTING_PATH_AVX2)
        return ring_avx2(filter, hashes, count, results);
#endif
    return bk_line_ring_probe(filter, hashes, count, results, ring_line_of, ring_probe,
                              &filter->hashes);
}

/* Classic layout: a chunk's k counters each prefetched, then probed. */
static size_t classic_add_chunk(bk_counting *filter, const bk_hash *hashes, size_t count)
{
    size_t fresh = 0;
    for (size_t i = 0; i < count; i++)
        classic_prefetch(filter, hashes[i]);
    for (size_t i = 0; i < count; i++)
        fresh += classic_increment(filter, hashes[i]);
    return fresh;
}

static size_t classic_test_chunk(const bk_counting *filter, const bk_hash *hashes, size_t count,
                                 bool *results)
{
    size_t present = 0;
    for (size_t i = 0; i < count; i++)
        classic_prefetch(filter, hashes[i]);
    for (size_t i = 0; i < count; i++) {
        bool found = classic_test(filter, hashes[i]);
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
    if (filter->layout == BK_COUNTING_BLOCKED) {
        fresh = blocked_add_batch(filter, hashes, count);
    } else {
        for (size_t start = 0; start < count; start += BATCH_CHUNK)
            fresh += classic_add_chunk(filter, hashes + start, chunk_length(count, start));
    }
    filter->keys_added = bk_saturating_add(filter->keys_added, count);
    *new_count = fresh;
    return BK_OK;
}

static size_t ops_contains_hash_batch(const void *object, const bk_hash *hashes, size_t count,
                                      bool *results)
{
    const bk_counting *filter = object;
    if (count == 0)
        return 0;
    if (filter->layout == BK_COUNTING_BLOCKED)
        return blocked_test_batch(filter, hashes, count, results);
    size_t present = 0;
    for (size_t start = 0; start < count; start += BATCH_CHUNK)
        present += classic_test_chunk(filter, hashes + start, chunk_length(count, start),
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
static void fill_design(const counting_design *design, bk_hash_algorithm algorithm,
                        bk_stats *out)
{
    const bk_sizing *sizing = &design->sizing;
    memset(out, 0, sizeof *out);
    out->kind = BK_KIND_COUNTING;
    out->bits = sizing->bits * BK_COUNTING_COUNTER_BITS;
    out->hashes = sizing->hashes;
    out->bytes = bytes_for_counters(sizing->bits);
    out->capacity = sizing->capacity;
    out->target_fpr = sizing->predicted_fpr;
    out->bits_per_key = (double)out->bits / (double)sizing->capacity;
    out->design_fill_ratio =
        design->layout == BK_COUNTING_BLOCKED
            ? bk_blocked_expected_fill(
                  (double)sizing->capacity / (double)(sizing->bits / LINE_COUNTERS),
                  sizing->hashes, LINE_COUNTERS)
            : bk_expected_fill(sizing->capacity, sizing->bits, sizing->hashes);
    out->hash_algorithm = algorithm;
}

/* The fill-based estimates of the blocked layout, as the blocked kind's
 * (src/blocked.c) with 128 cells per block. */
static void blocked_estimates(const bk_counting *filter, bk_stats *s)
{
    double lines = (double)filter->lines;
    s->keys_estimated = bk_blocked_estimate_keys(filter->lines, filter->hashes, LINE_COUNTERS,
                                                 s->fill_ratio);
    s->current_fpr = s->keys_estimated > 0
                         ? bk_blocked_predicted_fpr((double)filter->counters / s->keys_estimated,
                                                    filter->hashes, LINE_COUNTERS)
                         : 0.0;
    s->design_point_keys = (double)filter->capacity * BK_DESIGN_MARGIN;
    s->past_design_point = s->fill_ratio > bk_blocked_expected_fill(s->design_point_keys / lines,
                                                                    filter->hashes,
                                                                    LINE_COUNTERS);
}

static void classic_estimates(const bk_counting *filter, uint64_t nonzero, bk_stats *s)
{
    s->keys_estimated = bk_estimate_keys(filter->counters, filter->hashes, nonzero);
    s->current_fpr = bk_fpr_from_fill(s->fill_ratio, filter->hashes);
    s->past_design_point = bk_fill_past_design_point(s->fill_ratio, filter->capacity,
                                                     filter->counters, filter->hashes);
    s->design_point_keys = bk_design_point_keys(filter->capacity, filter->counters,
                                                filter->hashes);
}

static void ops_stats(const void *object, bk_stats *out)
{
    const bk_counting *filter = object;
    counting_design design = design_of(filter);
    bk_stats s;
    fill_design(&design, filter->hasher.algorithm, &s);
    counter_census census = take_census(filter);
    s.keys_added = filter->keys_added;
    s.fill_ratio = (double)census.nonzero / (double)filter->counters;
    if (filter->layout == BK_COUNTING_BLOCKED)
        blocked_estimates(filter, &s);
    else
        classic_estimates(filter, census.nonzero, &s);
    s.saturated_counters = census.saturated;
    s.seed = filter->hasher.seed;
    *out = s;
}

/* ------------------------------------------------------------------------ */
/* Union and conversion                                                     */
/* ------------------------------------------------------------------------ */

static bool compatible(const bk_counting *a, const bk_counting *b)
{
    return a->counters == b->counters && a->hashes == b->hashes && a->layout == b->layout &&
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

static const bk_counting *counting_of(const bk_filter *handle, bk_status *status)
{
    const bk_counting *filter = bk_filter_object_of(handle, BK_KIND_COUNTING);
    *status = filter != NULL ? BK_OK : BK_EKIND;
    return filter;
}

bk_status bk_counting_counter(const bk_filter *handle, uint64_t index, unsigned *value)
{
    if (handle == NULL || value == NULL)
        return BK_EINVAL;
    bk_status status;
    const bk_counting *filter = counting_of(handle, &status);
    if (filter == NULL)
        return status;
    if (index >= filter->counters)
        return BK_ERANGE;
    *value = counter_get(filter->bytes, index);
    return BK_OK;
}

bk_status bk_counting_set_path(bk_filter *handle, bk_counting_path path)
{
    if (handle == NULL)
        return BK_EINVAL;
    bk_counting *filter = bk_filter_object_of(handle, BK_KIND_COUNTING);
    if (filter == NULL)
        return BK_EKIND;
    if (!path_available(path))
        return BK_EUNSUPPORTED;
    filter->path = path;
    choose_one_key_paths(filter);
    return BK_OK;
}

bk_status bk_counting_layout_of(const bk_filter *handle, bk_counting_layout *layout)
{
    if (handle == NULL || layout == NULL)
        return BK_EINVAL;
    bk_status status;
    const bk_counting *filter = counting_of(handle, &status);
    if (filter == NULL)
        return status;
    *layout = filter->layout;
    return BK_OK;
}

/* Classic layout: the classic Bloom filter of the same m and k, bit i set
 * when counter i is non-zero. */
static bk_status to_classic_bloom(const bk_counting *filter, bk_filter **out)
{
    bk_sizing sizing = design_of(filter).sizing;
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

/* Blocked layout: a `blocked` filter of one 512-bit block per line, whose
 * bits 4c .. 4c+3 of block j are all set when counter c of line j is
 * non-zero (the probe correspondence of the opening comment).  Created
 * through the public call at exactly that size and k, then given this
 * filter's hasher, design FPR and key count. */
static bk_status to_blocked(const bk_counting *filter, bk_filter **out)
{
    bk_params params = { .capacity = filter->capacity,
                         .bits = filter->lines * BK_BLOCKED_BLOCK_BITS,
                         .hashes = filter->hashes };
    bk_filter *handle;
    bk_status status = bk_filter_create(BK_KIND_BLOCKED, &params, &handle);
    if (status != BK_OK)
        return status;
    bk_blocked *blocked = bk_filter_object_of(handle, BK_KIND_BLOCKED);
    for (uint64_t w = 0; w < filter->lines * LINE_WORDS; w++) {
        uint64_t word = bk_load_le64(filter->bytes + 8 * w);
        uint64_t nonzero = (word | word >> 1 | word >> 2 | word >> 3) & NIBBLE_LOW_BITS;
        blocked->words[w] = nonzero * 0xf;
    }
    blocked->hasher = filter->hasher;
    blocked->target_fpr = filter->target_fpr;
    blocked->keys_added = filter->keys_added;
    *out = handle;
    return BK_OK;
}

bk_status bk_counting_to_bloom(const bk_filter *handle, bk_filter **out)
{
    if (handle == NULL || out == NULL)
        return BK_EINVAL;
    bk_status status;
    const bk_counting *filter = counting_of(handle, &status);
    if (filter == NULL)
        return status;
    return filter->layout == BK_COUNTING_BLOCKED ? to_blocked(filter, out)
                                                 : to_classic_bloom(filter, out);
}

/* ------------------------------------------------------------------------ */
/* The kind's adapter: bk_filter dispatch and the file format               */
/* ------------------------------------------------------------------------ */

/*
 * Parameter block (little-endian; docs/FORMAT.md "Kind 4"):
 *     0  u64  counters (m)    8  u32  hashes (k)     12  u32  counter bits, 4
 *    16  u64  capacity       24  f64  target FPR (design FPR at capacity)
 * classic layout: these 32 bytes and no more (the block of every file
 * before the blocked layout); blocked layout: 40 bytes, adding
 *    32  u32  layout, 1      36  u32  counters per line, 128
 * Payload: ceil(m/2) bytes, counter i in byte i/2, low nibble for even i;
 * for odd m the high nibble of the last byte is 0 (classic only: blocked m
 * is a multiple of 128).  Bytes have no endianness, so a mapped file is
 * read in place on any host.
 */
#define CLASSIC_PARAMS_SIZE 32
#define BLOCKED_PARAMS_SIZE 40

static size_t ops_params_size(const void *object)
{
    const bk_counting *filter = object;
    return filter->layout == BK_COUNTING_BLOCKED ? BLOCKED_PARAMS_SIZE : CLASSIC_PARAMS_SIZE;
}

static void ops_write_params(const void *object, uint8_t *out)
{
    const bk_counting *filter = object;
    bk_store_le64(out, filter->counters);
    bk_store_le32(out + 8, filter->hashes);
    bk_store_le32(out + 12, BK_COUNTING_COUNTER_BITS);
    bk_store_le64(out + 16, filter->capacity);
    bk_store_le_double(out + 24, filter->target_fpr);
    if (filter->layout == BK_COUNTING_BLOCKED) {
        bk_store_le32(out + 32, BK_COUNTING_BLOCKED);
        bk_store_le32(out + 36, LINE_COUNTERS);
    }
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

/* The design a parameter block states, checked field by field. */
static bk_status read_design(const uint8_t *params, size_t params_size, counting_design *out)
{
    if (params_size != CLASSIC_PARAMS_SIZE && params_size != BLOCKED_PARAMS_SIZE)
        return BK_ECORRUPT;
    memset(out, 0, sizeof *out);
    bk_sizing *sizing = &out->sizing;
    sizing->bits = bk_load_le64(params);
    sizing->hashes = bk_load_le32(params + 8);
    sizing->capacity = bk_load_le64(params + 16);
    sizing->predicted_fpr = bk_load_le_double(params + 24);
    out->layout = BK_COUNTING_CLASSIC;
    if (params_size == BLOCKED_PARAMS_SIZE) {
        if (bk_load_le32(params + 32) != BK_COUNTING_BLOCKED ||
            bk_load_le32(params + 36) != LINE_COUNTERS)
            return BK_ECORRUPT;
        if (sizing->bits % LINE_COUNTERS != 0)
            return BK_ECORRUPT;
        out->layout = BK_COUNTING_BLOCKED;
    }
    if (bk_load_le32(params + 12) != BK_COUNTING_COUNTER_BITS || sizing->bits == 0 ||
        sizing->hashes == 0 || sizing->capacity == 0 ||
        !bk_stored_fpr_valid(sizing->predicted_fpr))
        return BK_ECORRUPT;
    return check_design(out) != BK_OK ? BK_ERANGE : BK_OK;
}

static bk_status ops_read(const uint8_t *params, size_t params_size, const uint8_t *payload,
                          uint64_t payload_size, const bk_hasher *hasher, uint64_t keys_added,
                          bool in_place, void **out)
{
    counting_design design;
    bk_status status = read_design(params, params_size, &design);
    if (status != BK_OK)
        return status;
    uint64_t counters = design.sizing.bits;
    if (payload_size != bytes_for_counters(counters))
        return BK_ECORRUPT;
    if ((counters & 1) && (payload[payload_size - 1] >> 4) != 0)
        return BK_ECORRUPT;
    bk_counting *filter;
    uint8_t *borrowed = in_place ? (uint8_t *)(uintptr_t)payload : NULL;
    status = create_from_design(&design, hasher, borrowed, &filter);
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
    counting_design design;
    bk_status status = design_from_params(params, &design);
    if (status != BK_OK)
        return status;
    fill_design(&design, params->hash_algorithm, out);
    return BK_OK;
}

const bk_kind_ops bk_counting_ops = {
    .kind = BK_KIND_COUNTING,
    .name = "counting",
    .kind_flags = BK_FLAG_COUNTING_CLASSIC,
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
