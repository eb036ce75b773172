/*
 * src/bloom.c -- the classic Bloom filter.
 *
 * The idea (Bloom, "Space/Time Trade-offs in Hash Coding with Allowable
 * Errors", CACM 13(7), 1970): keep m bits, all zero.  To add a key, set the
 * k bits its hash selects; to query, check them.  A zero bit proves the key
 * was never added (bits are never cleared, so no false negatives); all k set
 * may be a coincidence of other keys' bits (a false positive), with
 * probability ~ (1 - e^{-kn/m})^k after n keys (src/sizing.c).
 *
 * Memory layout: one array of ceil(m/64) little-endian-numbered 64-bit words,
 * 64-byte aligned (one cache line = 8 words = 512 bits):
 *
 *     bit i  ->  words[i >> 6], bit (i & 63)
 *
 *     words:  [ w0 | w1 | ... | w7 ][ w8 | ... | w15 ] ... [ w_{W-1} ]
 *             \____ cache line 0 __/\__ cache line 1 _/
 *
 *   The bits at positions >= m in the last word are always zero, so
 *   popcount over whole words counts exactly the set bits, and the words
 *   can be OR-ed and AND-ed wholesale for union and intersection.
 *
 * Probe positions: the key is hashed once to 128 bits (h1, h2) (src/hash.c)
 * and the k positions come from enhanced double hashing with multiply-shift
 * range reduction (src/hash.h).  Kirsch & Mitzenmacher ("Less hashing, same
 * performance", 2006) show that two hash values give the same asymptotic FPR
 * as k independent hashes; the multiply-shift reduction allows any m, not
 * just powers of two, and any m up to 2^56 with 64-bit arithmetic.
 *
 * Costs: one hash, then k random reads that do not depend on each other.
 * The query reads all k words and ANDs the bits, without a branch per probe:
 * an absent key's first zero bit is as likely to be at any probe, so an
 * early exit is mispredicted about half the time, and that costs more than
 * the extra reads (which overlap).  The probe loop is unrolled by 4.  A filter
 * bigger than the caches still pays up to k cache misses per key: that is
 * what the blocked kinds (src/blocked.c, src/sbbf.c) fix.
 *
 * The probe test itself (bk_bloom_test_probes) lives in
 * bloomkit/bloom_inline.h: compiled with AVX-512 it reads the k words with
 * gathers, eight probes at a time, and src/bloom_avx512.c is the library's
 * build of it, taken for one-key queries with k <= 8 at every size (one
 * straight-line round) and for filters bigger than one core's L2.  The
 * header's view compiles the whole one-key query into a caller's loop,
 * where every probe of a big filter is a memory read and a loop without
 * calls keeps more of them in flight.
 *
 * Batches run as a software pipeline: the k lines of key i + 8 are
 * prefetched while key i is probed, so about 8k line fetches are in flight
 * instead of one key's k.  Speed at every size: docs/PERFORMANCE.md.
 *
 * Accuracy (examples/fpr_table.c: 100,000 keys "user:%d", 1,000,000 absent
 * keys "guest:%d", the best k for each size; every row within two standard
 * deviations of the binomial noise of the prediction):
 *
 *     bits/key   k    measured   predicted
 *            4   3    0.146749    0.146892
 *            6   4    0.055880    0.056057
 *            8   6    0.021319    0.021577
 *           10   7    0.008120    0.008194
 *           12   8    0.003090    0.003142
 *           16  11    0.000425    0.000459
 *           20  14    0.000055    0.000067
 */
#include "bloom.h"

#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "endian.h"
#include "filter.h"
#include "hash.h"
#include "memory.h"

#define KNOWN_FLAGS BK_FLAG_CONCURRENT

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

bk_status bk_bloom_create_from_sizing(const bk_sizing *sizing, const bk_hasher *hasher,
                                      unsigned flags, uint64_t *borrowed_words, bk_bloom **out)
{
    if (sizing == NULL || hasher == NULL || out == NULL || (flags & ~KNOWN_FLAGS) != 0)
        return BK_EINVAL;
    if (sizing->bits == 0 || sizing->bits > BK_MAX_BITS || sizing->hashes == 0 ||
        sizing->hashes > BK_MAX_HASHES || sizing->capacity == 0)
        return BK_ERANGE;
    bk_bloom *filter = calloc(1, sizeof *filter);
    if (filter == NULL)
        return BK_ENOMEM;
    filter->word_count = bk_bloom_words_for_bits(sizing->bits);
    if (borrowed_words != NULL) {
        filter->words = borrowed_words;
        filter->borrowed = true;
    } else {
        filter->words = bk_alloc_zeroed(filter->word_count * sizeof(uint64_t));
        if (filter->words == NULL) {
            free(filter);
            return BK_ENOMEM;
        }
    }
    filter->bits = sizing->bits;
    filter->hashes = sizing->hashes;
    filter->capacity = sizing->capacity;
    filter->target_fpr = sizing->predicted_fpr;
    filter->hasher = *hasher;
    filter->flags = flags;
    filter->use_bmi2 = bk_cpu()->bmi2;
#ifdef BK_HAVE_AVX512_SOURCES
    /* the gather build answers one key faster at every size with k <= 8,
     * and past the core's L2 with more (src/bloom_avx512.c has the
     * measurements) */
    filter->use_avx512 = bk_cpu()->avx512dqbw &&
                         (filter->hashes <= 8 ||
                          filter->word_count * sizeof(uint64_t) > bk_cpu()->l2_bytes);
#endif
    filter->exit_early = filter->word_count * sizeof(uint64_t) > BK_BLOOM_EXIT_EARLY_BYTES;
    *out = filter;
    return BK_OK;
}

bk_status bk_bloom_set_bmi2(bk_bloom *filter, bool use_bmi2)
{
    if (filter == NULL)
        return BK_EINVAL;
    if (use_bmi2 && !bk_cpu()->bmi2)
        return BK_EUNSUPPORTED;
    filter->use_bmi2 = use_bmi2;
    return BK_OK;
}

bk_status bk_bloom_set_avx512(bk_bloom *filter, bool use_avx512)
{
    if (filter == NULL)
        return BK_EINVAL;
#ifdef BK_HAVE_AVX512_SOURCES
    if (use_avx512 && !bk_cpu()->avx512dqbw)
        return BK_EUNSUPPORTED;
#else
    if (use_avx512)
        return BK_EUNSUPPORTED;
#endif
    filter->use_avx512 = use_avx512;
    return BK_OK;
}

bk_status bk_bloom_create(const bk_params *params, bk_bloom **out)
{
    bk_sizing sizing;
    bk_status status = bk_size_from_params(params, &sizing);
    if (status != BK_OK)
        return status;
    bk_hasher hasher;
    status = bk_hasher_from_params(&hasher, params);
    if (status != BK_OK)
        return status;
    return bk_bloom_create_from_sizing(&sizing, &hasher, params->flags, NULL, out);
}

void bk_bloom_free(bk_bloom *filter)
{
    if (filter == NULL)
        return;
    if (!filter->borrowed)
        bk_free_zeroed(filter->words, filter->word_count * sizeof(uint64_t));
    memset(&filter->hasher, 0, sizeof filter->hasher); /* do not leave the key behind */
    free(filter);
}

static bk_sizing sizing_of(const bk_bloom *filter)
{
    bk_sizing sizing;
    memset(&sizing, 0, sizeof sizing);
    sizing.capacity = filter->capacity;
    sizing.bits = filter->bits;
    sizing.hashes = filter->hashes;
    sizing.predicted_fpr = filter->target_fpr;
    return sizing;
}

bk_status bk_bloom_copy(const bk_bloom *filter, bk_bloom **out)
{
    if (filter == NULL || out == NULL)
        return BK_EINVAL;
    bk_sizing sizing = sizing_of(filter);
    bk_bloom *copy;
    bk_status status = bk_bloom_create_from_sizing(&sizing, &filter->hasher, filter->flags, NULL,
                                                   &copy);
    if (status != BK_OK)
        return status;
    memcpy(copy->words, filter->words, filter->word_count * sizeof(uint64_t));
    copy->keys_added = filter->keys_added;
    *out = copy;
    return BK_OK;
}

void bk_bloom_array_free(bk_bloom *const *filters, unsigned count)
{
    for (unsigned i = 0; i < count; i++)
        bk_bloom_free(filters[i]);
}

bk_status bk_bloom_array_copy(bk_bloom *const *filters, unsigned count, bk_bloom **copies)
{
    for (unsigned i = 0; i < count; i++) {
        bk_status status = bk_bloom_copy(filters[i], &copies[i]);
        if (status != BK_OK) {
            bk_bloom_array_free(copies, i);
            return status;
        }
    }
    return BK_OK;
}

bk_status bk_bloom_clear(bk_bloom *filter)
{
    if (filter == NULL)
        return BK_EINVAL;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    memset(filter->words, 0, filter->word_count * sizeof(uint64_t));
    filter->keys_added = 0;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The hot path                                                             */
/* ------------------------------------------------------------------------ */

/* Sets the key's k bits; returns whether any of them was 0.  The filter's
 * fields are read into locals first: the stores below could alias them
 * and would force a reload per probe. */
static inline bool set_bits(bk_bloom *filter, bk_hash hash)
{
    uint64_t *const words = filter->words;
    const uint64_t bits = filter->bits;
    const unsigned hashes = filter->hashes;
    bk_probe probe = bk_probe_start(hash);
    uint64_t flipped = 0;
    if (filter->flags & BK_FLAG_CONCURRENT) {
        for (unsigned i = 0; i < hashes; i++) {
            uint64_t position = bk_probe_next(&probe, bits);
            uint64_t mask = (uint64_t)1 << (position & 63);
            uint64_t old = __atomic_fetch_or(&words[position >> 6], mask, __ATOMIC_RELAXED);
            flipped |= ~old & mask;
        }
    } else {
#pragma GCC unroll 4
        for (unsigned i = 0; i < hashes; i++) {
            uint64_t position = bk_probe_next(&probe, bits);
            uint64_t mask = (uint64_t)1 << (position & 63);
            uint64_t old = words[position >> 6];
            flipped |= ~old & mask;
            words[position >> 6] = old | mask;
        }
    }
    return flipped != 0;
}

/*
 * All k probes are read and AND-ed together, with no branch per probe.  For
 * an absent key the first zero bit is equally likely to come at the first
 * or a later probe, so an early exit at each probe is a branch the CPU
 * mispredicts about half the time (some 15 cycles each), which costs more
 * than the loads it saves while the lines come from the caches: those are
 * independent of each other and overlap.
 *
 * A filter bigger than a last-level cache (BK_BLOOM_EXIT_EARLY_BYTES) is
 * read from memory, where a line costs far more than a mispredicted
 * branch: its queries take one branch, after the first two probes.  At a
 * half-full filter an absent key stops there three times in four and
 * leaves five lines unread.  Inside the L3 the branch does not pay.  The
 * system's report of the L3 size is no guide (a virtual machine may report
 * the whole host's), so the threshold is a constant: 32 MiB, the L3 of one
 * core complex of the Zen 5 CPU it was tuned on.  Same bits tested, same
 * answers (tests/test_bloom_batch.c runs both ways).  This is the portable
 * and BMI2 builds' loop; the AVX-512 build (src/bloom_avx512.c) gathers
 * all k words at once.
 *
 * Loads are relaxed atomics: plain moves on x86 and ARM, and race-free
 * against concurrent atomic adds.
 */
static inline __attribute__((always_inline)) bool test_bits(const bk_bloom *filter, bk_hash hash)
{
    return bk_bloom_test_probes(filter->words, filter->bits, filter->hashes, filter->exit_early,
                                hash);
}

static inline void prefetch_bits(const bk_bloom *filter, bk_hash hash, int for_write)
{
    const uint64_t *const words = filter->words;
    const uint64_t bits = filter->bits;
    const unsigned hashes = filter->hashes;
    bk_probe probe = bk_probe_start(hash);
    for (unsigned i = 0; i < hashes; i++) {
        const uint64_t *line = &words[bk_probe_next(&probe, bits) >> 6];
        if (for_write)
            __builtin_prefetch(line, 1);
        else
            __builtin_prefetch(line, 0);
    }
}

static inline void count_new_key(bk_bloom *filter)
{
    if (filter->flags & BK_FLAG_CONCURRENT)
        __atomic_fetch_add(&filter->keys_added, 1, __ATOMIC_RELAXED);
    else
        filter->keys_added = bk_saturating_add(filter->keys_added, 1);
}

bk_status bk_bloom_view(const bk_filter *handle, struct bk_bloom_view *view)
{
    if (handle == NULL || view == NULL)
        return BK_EINVAL;
    const bk_bloom *filter = bk_filter_object_of(handle, BK_KIND_BLOOM);
    if (filter == NULL)
        return BK_EKIND;
    if (!bk_hasher_inlinable(&filter->hasher))
        return BK_EUNSUPPORTED;
    view->words = filter->words;
    view->bits = filter->bits;
    view->hashes = filter->hashes;
    view->exit_early = filter->exit_early;
    view->hash_algorithm = filter->hasher.algorithm;
    view->hash_seed = filter->hasher.seed;
    return BK_OK;
}

bk_status bk_bloom_add_hash(bk_bloom *filter, bk_hash hash, bool *was_new)
{
    if (filter == NULL)
        return BK_EINVAL;
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    bool flipped = set_bits(filter, hash);
    if (flipped)
        count_new_key(filter);
    if (was_new != NULL)
        *was_new = flipped;
    return BK_OK;
}

bk_status bk_bloom_add(bk_bloom *filter, const void *key, size_t len, bool *was_new)
{
    if (filter == NULL || (key == NULL && len != 0))
        return BK_EINVAL;
    return bk_bloom_add_hash(filter, bk_hash_inline(&filter->hasher, key, len), was_new);
}

/*
 * The one-key query, built a second time for CPUs with BMI2.  The probe
 * loop shifts each word by a variable count (the bit's place in it).
 * Without BMI2 that is SHR r, CL, which keeps the flags of the previous
 * instruction when the count is 0, so on Intel cores every probe's shift
 * waits for the flags of the one before; SHRX has no flags.  The same C
 * code, so the same answers (tests/test_bloom_batch.c runs both builds).
 */
#if defined(__x86_64__) && defined(__GNUC__)
#define BK_HAVE_BMI2_BUILD 1
__attribute__((target("bmi2"))) static bool test_bits_bmi2(const bk_bloom *filter, bk_hash hash)
{
    return test_bits(filter, hash);
}

__attribute__((target("bmi2"))) static BK_NOINLINE bool
contains_key_bmi2(const bk_bloom *filter, const void *key, size_t len)
{
    return test_bits(filter, bk_hash_inline(&filter->hasher, key, len));
}
#endif

bool bk_bloom_contains_hash(const bk_bloom *filter, bk_hash hash)
{
    if (filter == NULL)
        return false;
#ifdef BK_HAVE_AVX512_SOURCES
    if (filter->use_avx512)
        return bk_bloom_avx512_contains_hash(filter, hash);
#endif
#ifdef BK_HAVE_BMI2_BUILD
    if (filter->use_bmi2)
        return test_bits_bmi2(filter, hash);
#endif
    return test_bits(filter, hash);
}

/* Each build's one-key query is a function of its own (BK_NOINLINE,
 * src/cpu.h): bk_bloom_contains only checks and jumps. */
static BK_NOINLINE bool contains_key_portable(const bk_bloom *filter, const void *key,
                                              size_t len)
{
    return test_bits(filter, bk_hash_inline(&filter->hasher, key, len));
}

bool bk_bloom_contains(const bk_bloom *filter, const void *key, size_t len)
{
    if (filter == NULL || (key == NULL && len != 0))
        return false;
#ifdef BK_HAVE_AVX512_SOURCES
    if (filter->use_avx512)
        return bk_bloom_avx512_contains(filter, key, len);
#endif
#ifdef BK_HAVE_BMI2_BUILD
    if (filter->use_bmi2)
        return contains_key_bmi2(filter, key, len);
#endif
    return contains_key_portable(filter, key, len);
}

/* ------------------------------------------------------------------------ */
/* Batches: a software pipeline                                             */
/* ------------------------------------------------------------------------ */

/*
 * Key i is probed while the cache lines of key i + PIPELINE_DISTANCE are
 * being fetched: each key's k lines are prefetched DISTANCE keys before it
 * is probed.  A filter far bigger than the caches then has about
 * DISTANCE * k line fetches in flight at all times instead of one key's k.
 * Keys given as bytes are hashed a chunk at a time first (BK_KEY_CHUNK,
 * src/hash.h), faster than hashing each key inside the pipeline.  Where
 * the CPU has AVX-512, queries and adds of filters past the L2 with k <= 8
 * take the same pipeline with each key's positions computed once, eight at
 * a time, and queries read its words by one gather (src/bloom_avx512.c).
 */
#define PIPELINE_DISTANCE 8
/* Within one core's L2 (src/cpu.h) the lines are near already, and the
 * prefetch pass would only double the probe arithmetic; past it, the
 * pipeline wins. */
static inline bool worth_prefetching(const bk_bloom *filter)
{
    return filter->word_count * sizeof(uint64_t) > bk_cpu()->l2_bytes;
}

#ifdef BK_HAVE_AVX512_SOURCES
/* Whether batches take the AVX-512 pipeline (src/bloom_avx512.c): filters
 * of the AVX-512 build past the L2 with k <= 8. */
static inline bool gather_batches(const bk_bloom *filter)
{
    return filter->use_avx512 && filter->hashes <= 8 && worth_prefetching(filter);
}
#endif

static size_t add_pipelined(bk_bloom *filter, const bk_hash *hashes, size_t count)
{
    size_t fresh = 0;
#ifdef BK_HAVE_AVX512_SOURCES
    /* adds there set plain words: not for BK_FLAG_CONCURRENT */
    if (gather_batches(filter) && !(filter->flags & BK_FLAG_CONCURRENT)) {
        fresh = bk_bloom_avx512_add_batch(filter, hashes, count);
        filter->keys_added = bk_saturating_add(filter->keys_added, fresh);
        return fresh;
    }
#endif
    if (!worth_prefetching(filter)) {
        for (size_t i = 0; i < count; i++)
            fresh += set_bits(filter, hashes[i]);
    } else {
        size_t ahead = count < PIPELINE_DISTANCE ? count : PIPELINE_DISTANCE;
        for (size_t j = 0; j < ahead; j++)
            prefetch_bits(filter, hashes[j], 1);
        for (size_t i = 0; i < count; i++) {
            if (i + PIPELINE_DISTANCE < count)
                prefetch_bits(filter, hashes[i + PIPELINE_DISTANCE], 1);
            fresh += set_bits(filter, hashes[i]);
        }
    }
    if (filter->flags & BK_FLAG_CONCURRENT)
        __atomic_fetch_add(&filter->keys_added, fresh, __ATOMIC_RELAXED);
    else
        filter->keys_added = bk_saturating_add(filter->keys_added, fresh);
    return fresh;
}

static size_t test_pipelined(const bk_bloom *filter, const bk_hash *hashes, size_t count,
                             bool *results)
{
#ifdef BK_HAVE_AVX512_SOURCES
    if (gather_batches(filter))
        return bk_bloom_avx512_test_batch(filter, hashes, count, results);
#endif
    size_t present = 0;
    if (!worth_prefetching(filter)) {
        for (size_t i = 0; i < count; i++) {
            bool found = test_bits(filter, hashes[i]);
            present += found;
            if (results != NULL)
                results[i] = found;
        }
        return present;
    }
    size_t ahead = count < PIPELINE_DISTANCE ? count : PIPELINE_DISTANCE;
    for (size_t j = 0; j < ahead; j++)
        prefetch_bits(filter, hashes[j], 0);
    for (size_t i = 0; i < count; i++) {
        if (i + PIPELINE_DISTANCE < count)
            prefetch_bits(filter, hashes[i + PIPELINE_DISTANCE], 0);
        bool found = test_bits(filter, hashes[i]);
        present += found;
        if (results != NULL)
            results[i] = found;
    }
    return present;
}

void bk_bloom_prefetch_hash(const bk_bloom *filter, bk_hash hash, bool for_write)
{
    if (worth_prefetching(filter))
        prefetch_bits(filter, hash, for_write ? 1 : 0);
}

size_t bk_bloom_contains_hash_batch(const bk_bloom *filter, const bk_hash *hashes, size_t count,
                                    bool *results)
{
    return test_pipelined(filter, hashes, count, results);
}

static bk_status add_hash_batch(bk_bloom *filter, const bk_hash *hashes, size_t count,
                                size_t *new_count)
{
    if (filter->borrowed)
        return BK_EIMMUTABLE;
    size_t fresh = add_pipelined(filter, hashes, count);
    if (new_count != NULL)
        *new_count = fresh;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Parameters, fill and estimates                                           */
/* ------------------------------------------------------------------------ */

uint64_t bk_bloom_bits(const bk_bloom *filter) { return filter->bits; }
unsigned bk_bloom_hashes(const bk_bloom *filter) { return filter->hashes; }
uint64_t bk_bloom_keys_added(const bk_bloom *filter) { return filter->keys_added; }
const uint64_t *bk_bloom_words(const bk_bloom *filter) { return filter->words; }
size_t bk_bloom_word_count(const bk_bloom *filter) { return filter->word_count; }

uint64_t bk_bloom_bits_set(const bk_bloom *filter)
{
    if (filter->flags & BK_FLAG_CONCURRENT)
        return bk_popcount_words_shared(filter->words, filter->word_count);
    return bk_popcount_words(filter->words, filter->word_count);
}

double bk_bloom_estimate_keys(const bk_bloom *filter)
{
    return bk_estimate_keys(filter->bits, filter->hashes, bk_bloom_bits_set(filter));
}

void bk_bloom_stats(const bk_bloom *filter, bk_stats *out)
{
    bk_stats s;
    memset(&s, 0, sizeof s);
    uint64_t bits_set = bk_bloom_bits_set(filter);
    s.kind = BK_KIND_BLOOM;
    s.bits = filter->bits;
    s.hashes = filter->hashes;
    s.bytes = (uint64_t)filter->word_count * sizeof(uint64_t);
    s.capacity = filter->capacity;
    s.target_fpr = filter->target_fpr;
    s.keys_added = __atomic_load_n(&filter->keys_added, __ATOMIC_RELAXED); /* adds may run */
    s.keys_estimated = bk_estimate_keys(filter->bits, filter->hashes, bits_set);
    s.fill_ratio = (double)bits_set / (double)filter->bits;
    s.design_fill_ratio = bk_expected_fill(filter->capacity, filter->bits, filter->hashes);
    s.current_fpr = bk_fpr_from_fill(s.fill_ratio, filter->hashes);
    s.bits_per_key = (double)filter->bits / (double)filter->capacity;
    s.past_design_point = bk_fill_past_design_point(s.fill_ratio, filter->capacity, filter->bits,
                                                    filter->hashes);
    s.design_point_keys = bk_design_point_keys(filter->capacity, filter->bits, filter->hashes);
    s.hash_algorithm = filter->hasher.algorithm;
    s.seed = filter->hasher.seed;
    *out = s;
}

/* ------------------------------------------------------------------------ */
/* Set algebra                                                              */
/* ------------------------------------------------------------------------ */

static bk_status check_compatible(const bk_bloom *a, const bk_bloom *b)
{
    if (a->bits != b->bits || a->hashes != b->hashes || !bk_hasher_equal(&a->hasher, &b->hasher))
        return BK_EINCOMPATIBLE;
    return BK_OK;
}

static bk_status union_with(bk_bloom *dst, const bk_bloom *src)
{
    bk_status status = check_compatible(dst, src);
    if (status != BK_OK)
        return status;
    if (dst->borrowed)
        return BK_EIMMUTABLE;
    for (size_t i = 0; i < dst->word_count; i++)
        dst->words[i] |= src->words[i];
    dst->keys_added = bk_saturating_add(dst->keys_added, src->keys_added);
    return BK_OK;
}

static bk_status intersect_with(bk_bloom *dst, const bk_bloom *src)
{
    bk_status status = check_compatible(dst, src);
    if (status != BK_OK)
        return status;
    if (dst->borrowed)
        return BK_EIMMUTABLE;
    for (size_t i = 0; i < dst->word_count; i++)
        dst->words[i] &= src->words[i];
    if (src->keys_added < dst->keys_added)
        dst->keys_added = src->keys_added;
    return BK_OK;
}

static bk_status estimate_sets(const bk_bloom *a, const bk_bloom *b, bk_set_estimate *out)
{
    bk_status status = check_compatible(a, b);
    if (status != BK_OK)
        return status;
    uint64_t union_bits = 0;
    for (size_t i = 0; i < a->word_count; i++)
        union_bits += (uint64_t)__builtin_popcountll(a->words[i] | b->words[i]);
    bk_estimate_sets(a->bits, a->hashes, bk_bloom_bits_set(a), bk_bloom_bits_set(b), union_bits,
                     out);
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The kind's adapter: bk_filter dispatch and the file format               */
/* ------------------------------------------------------------------------ */

/*
 * Parameter block (32 bytes, little-endian; docs/FORMAT.md):
 *     0  u64  bits (m)        8  u32  hashes (k)     12  u32  reserved, 0
 *    16  u64  capacity       24  f64  target FPR (design FPR at capacity)
 * Payload: the ceil(m/64) words, each little-endian; bits >= m are zero.
 */
#define BLOOM_PARAMS_SIZE 32

static size_t ops_params_size(const void *filter)
{
    (void)filter;
    return BLOOM_PARAMS_SIZE;
}

static void ops_write_params(const void *object, uint8_t *out)
{
    const bk_bloom *filter = object;
    bk_store_le64(out, filter->bits);
    bk_store_le32(out + 8, filter->hashes);
    bk_store_le32(out + 12, 0);
    bk_store_le64(out + 16, filter->capacity);
    bk_store_le_double(out + 24, filter->target_fpr);
}

static uint64_t ops_payload_size(const void *object)
{
    return (uint64_t)((const bk_bloom *)object)->word_count * 8;
}

static void ops_write_payload(const void *object, uint8_t *out)
{
    const bk_bloom *filter = object;
    bk_store_le64_array(out, filter->words, filter->word_count);
}

static bool tail_bits_clear(const uint64_t *last_word, uint64_t bits)
{
    unsigned used = (unsigned)(bits & 63);
    return used == 0 || (*last_word >> used) == 0;
}

static bk_status ops_read(const uint8_t *params, size_t params_size, const uint8_t *payload,
                          uint64_t payload_size, const bk_hasher *hasher, uint64_t keys_added,
                          bool in_place, void **out)
{
    if (params_size != BLOOM_PARAMS_SIZE)
        return BK_ECORRUPT;
    bk_sizing sizing;
    memset(&sizing, 0, sizeof sizing);
    sizing.bits = bk_load_le64(params);
    sizing.hashes = bk_load_le32(params + 8);
    sizing.capacity = bk_load_le64(params + 16);
    sizing.predicted_fpr = bk_load_le_double(params + 24);
    if (bk_load_le32(params + 12) != 0 || sizing.bits == 0 || sizing.hashes == 0 ||
        sizing.capacity == 0 || !bk_stored_fpr_valid(sizing.predicted_fpr))
        return BK_ECORRUPT;
    if (sizing.bits > BK_MAX_BITS || sizing.hashes > BK_MAX_HASHES)
        return BK_ERANGE;
    if (payload_size != (uint64_t)bk_bloom_words_for_bits(sizing.bits) * 8)
        return BK_ECORRUPT;
    size_t words = bk_bloom_words_for_bits(sizing.bits);
    uint64_t last;
    bk_load_le64_array(&last, payload + (words - 1) * 8, 1);
    if (!tail_bits_clear(&last, sizing.bits))
        return BK_ECORRUPT;
    bk_bloom *filter;
    uint64_t *borrowed = in_place ? (uint64_t *)(uintptr_t)payload : NULL;
    bk_status status = bk_bloom_create_from_sizing(&sizing, hasher, 0, borrowed, &filter);
    if (status != BK_OK)
        return status;
    if (!in_place)
        bk_load_le64_array(filter->words, payload, words);
    filter->keys_added = keys_added;
    *out = filter;
    return BK_OK;
}

static bk_status ops_create(const bk_params *params, void **out)
{
    return bk_bloom_create(params, (bk_bloom **)out);
}

static void ops_destroy(void *filter) { bk_bloom_free(filter); }

static bk_status ops_copy(const void *filter, void **out)
{
    return bk_bloom_copy(filter, (bk_bloom **)out);
}

static bk_status ops_clear(void *filter) { return bk_bloom_clear(filter); }
static const bk_hasher *ops_hasher(const void *filter)
{
    return &((const bk_bloom *)filter)->hasher;
}

static bk_status ops_add_hash(void *filter, bk_hash hash, bool *was_new)
{
    return bk_bloom_add_hash(filter, hash, was_new);
}

static bool ops_contains_hash(const void *filter, bk_hash hash)
{
    return bk_bloom_contains_hash(filter, hash);
}

static bool ops_contains_key(const void *filter, const void *key, size_t len)
{
    return bk_bloom_contains(filter, key, len);
}

/* The integer-key calls: the hash inline (bk_hash_u64), then as above. */
static bool ops_contains_u64(const void *object, uint64_t key)
{
    const bk_bloom *filter = object;
    return bk_bloom_contains_hash(filter, bk_hash_u64(&filter->hasher, key));
}

static bk_status ops_add_u64(void *object, uint64_t key, bool *was_new)
{
    bk_bloom *filter = object;
    return bk_bloom_add_hash(filter, bk_hash_u64(&filter->hasher, key), was_new);
}

static bk_status ops_add_hash_batch(void *filter, const bk_hash *hashes, size_t count,
                                    size_t *new_count)
{
    return add_hash_batch(filter, hashes, count, new_count);
}

static size_t ops_contains_hash_batch(const void *filter, const bk_hash *hashes, size_t count,
                                      bool *results)
{
    return test_pipelined(filter, hashes, count, results);
}

static bk_status ops_union(void *dst, const void *src) { return union_with(dst, src); }
static bk_status ops_intersect(void *dst, const void *src) { return intersect_with(dst, src); }

static bk_status ops_estimate_sets(const void *a, const void *b, bk_set_estimate *out)
{
    return estimate_sets(a, b, out);
}

static void ops_stats(const void *filter, bk_stats *out) { bk_bloom_stats(filter, out); }

static bk_status ops_design(const bk_params *params, bk_stats *out)
{
    bk_sizing sizing;
    bk_status status = bk_size_from_params(params, &sizing);
    if (status != BK_OK)
        return status;
    memset(out, 0, sizeof *out);
    out->kind = BK_KIND_BLOOM;
    out->bits = sizing.bits;
    out->hashes = sizing.hashes;
    out->bytes = (uint64_t)bk_bloom_words_for_bits(sizing.bits) * 8;
    out->capacity = sizing.capacity;
    out->target_fpr = sizing.predicted_fpr;
    out->bits_per_key = sizing.bits_per_key;
    out->design_fill_ratio = sizing.design_fill_ratio;
    out->hash_algorithm = params->hash_algorithm;
    return BK_OK;
}

const bk_kind_ops bk_bloom_ops = {
    .kind = BK_KIND_BLOOM,
    .name = "bloom",
    .concurrent_adds = true,
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
