/*
 * tests/test_u64.c -- integer keys: the bk_filter_*_u64 calls, bk_hash_u64
 * and the integer mixer BK_HASH_MIX64.
 *
 *   - every _u64 call is its byte-key sibling on the key's 8 little-endian
 *     bytes, on every kind of the build and under every hash algorithm: the
 *     same answers, statuses, counts and file bytes;
 *   - bk_hash_u64 is bk_hash_key of those bytes; MIX64 is the mixer of
 *     src/hash.c (recomputed here from its formula) for 8-byte keys and
 *     XXH3-128 for every other length;
 *   - the mixer's statistics: h1 distinct for distinct keys, avalanche,
 *     joint uniformity of h1 and h2 on sequential keys, and the FPR of a
 *     blocked and a bloom filter holding the keys 0..n-1, each within a
 *     binomial (or chi-square) bound, fixed seeds;
 *   - MIX64 filters save, load and answer the same; the inline views of
 *     bloom and fuse serve them; Parquet export refuses them.
 */
#define _GNU_SOURCE /* mkdtemp (tests/support/roundtrip.h) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "bloomkit/bloom_inline.h"
#include "bloomkit/fuse_inline.h"
#include "bloomkit/hash_inline.h"
#include "bloomkit/sbbf_inline.h"
#include "roundtrip.h"

static const uint8_t test_key[BK_SECRET_KEY_BYTES] = { 0, 1, 2,  3,  4,  5,  6,  7,
                                                       8, 9, 10, 11, 12, 13, 14, 15 };

static const bk_hash_algorithm algorithms[] = { BK_HASH_XXH3, BK_HASH_SIPHASH, BK_HASH_XXH64,
                                                BK_HASH_MIX64 };
#define ALGORITHM_COUNT (sizeof algorithms / sizeof algorithms[0])

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t x = *state;
    return x ^ (x >> 29) ^ (x << 17);
}

/* The 8 little-endian bytes of `value`, whatever the host's byte order. */
static void le_bytes(uint64_t value, uint8_t out[8])
{
    for (unsigned i = 0; i < 8; i++)
        out[i] = (uint8_t)(value >> (8 * i));
}

static bk_params params_for(bk_hash_algorithm algorithm, uint64_t capacity)
{
    bk_params params = { .capacity = capacity,
                         .fpr = 0.01,
                         .window_keys = capacity,
                         .hash_algorithm = algorithm,
                         .seed = 0x5eedULL };
    if (algorithm == BK_HASH_SIPHASH)
        params.secret_key = test_key;
    return params;
}

/* ------------------------------------------------------------------------ */
/* The _u64 calls are the byte-key calls                                   */
/* ------------------------------------------------------------------------ */

enum { KEYS = 1500, PROBES = 3000 };

static void key_values(uint64_t *values, size_t count)
{
    uint64_t rng = 99;
    for (size_t i = 0; i < count; i++)
        values[i] = i % 3 == 0 ? i : next_random(&rng); /* small and large ids */
}

/* Every probe (the keys, then as many others) answers alike both ways. */
static void assert_same_answers(const bk_filter *filter, const uint64_t *values)
{
    uint64_t rng = 5;
    for (size_t i = 0; i < PROBES; i++) {
        uint64_t value = i < KEYS ? values[i] : next_random(&rng);
        uint8_t bytes[8];
        le_bytes(value, bytes);
        assert_int_equal(bk_filter_contains_u64(filter, value),
                         bk_filter_contains(filter, bytes, 8));
        uint64_t by_value = 7, by_bytes = 7;
        bk_status status = bk_filter_count(filter, bytes, 8, &by_bytes);
        assert_int_equal(bk_filter_count_u64(filter, value, &by_value), status);
        assert_true(by_value == by_bytes);
    }
}

/* A dynamic kind: filled by value and by bytes, the two filters are the
 * same bytes and answer alike; then removes agree (where the kind has them). */
static void check_dynamic(bk_kind kind, bk_hash_algorithm algorithm, const uint64_t *values)
{
    bk_params params = params_for(algorithm, KEYS);
    bk_filter *by_value, *by_bytes;
    assert_int_equal(bk_filter_create(kind, &params, &by_value), BK_OK);
    assert_int_equal(bk_filter_create(kind, &params, &by_bytes), BK_OK);
    for (size_t i = 0; i < KEYS; i++) {
        uint8_t bytes[8];
        le_bytes(values[i], bytes);
        bool new_by_value = false, new_by_bytes = false;
        bk_status status = bk_filter_add(by_bytes, bytes, 8, &new_by_bytes);
        assert_int_equal(bk_filter_add_u64(by_value, values[i], &new_by_value), status);
        assert_int_equal(new_by_value, new_by_bytes);
    }
    bk_rt_assert_same_bytes(by_value, by_bytes);
    assert_same_answers(by_value, values);
    for (size_t i = 0; i < KEYS; i += 4) {
        uint8_t bytes[8];
        le_bytes(values[i], bytes);
        bk_status status = bk_filter_remove(by_bytes, bytes, 8);
        assert_int_equal(bk_filter_remove_u64(by_value, values[i]), status);
    }
    bk_rt_assert_same_bytes(by_value, by_bytes);
    assert_same_answers(by_value, values);
    bk_filter_free(by_value);
    bk_filter_free(by_bytes);
}

/* A static kind: built from the keys' bytes, it answers alike both ways,
 * and refuses adds and removes both ways with the same status. */
static void check_static(bk_kind kind, bk_hash_algorithm algorithm, const uint64_t *values)
{
    static uint8_t bytes[KEYS][8];
    static bk_key keys[KEYS];
    for (size_t i = 0; i < KEYS; i++) {
        le_bytes(values[i], bytes[i]);
        keys[i] = (bk_key){ bytes[i], 8 };
    }
    bk_params params = params_for(algorithm, KEYS);
    bk_filter *filter;
    assert_int_equal(bk_filter_build(kind, &params, keys, KEYS, &filter), BK_OK);
    assert_same_answers(filter, values);
    for (size_t i = 0; i < KEYS; i++)
        assert_true(bk_filter_contains_u64(filter, values[i]));
    assert_int_equal(bk_filter_add_u64(filter, 1, NULL),
                     bk_filter_add(filter, bytes[1], 8, NULL));
    assert_int_equal(bk_filter_remove_u64(filter, values[0]),
                     bk_filter_remove(filter, bytes[0], 8));
    bk_filter_free(filter);
}

static void test_u64_calls_equal_byte_calls(void **state)
{
    (void)state;
    static uint64_t values[KEYS];
    key_values(values, KEYS);
    bk_kind kinds[64];
    size_t kind_count = bk_kind_list(kinds, 64);
    assert_true(kind_count > 0);
    for (size_t k = 0; k < kind_count; k++) {
        for (size_t a = 0; a < ALGORITHM_COUNT; a++) {
            if (bk_kind_is_static(kinds[k]))
                check_static(kinds[k], algorithms[a], values);
            else
                check_dynamic(kinds[k], algorithms[a], values);
        }
    }
}

/* A filter read from a file in place (mapped, on a little-endian host)
 * refuses an integer-key add as it refuses a byte-key add, and changes
 * nothing: every dynamic kind's own integer-key add checks it too. */
static void test_u64_add_refused_by_mapped_filter(void **state)
{
    (void)state;
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe != 1)
        return; /* a big-endian host maps a private, writable copy */
    static uint64_t values[1000];
    key_values(values, 1000);
    bk_kind kinds[64];
    size_t kind_count = bk_kind_list(kinds, 64);
    char *dir = bk_rt_make_temp_dir();
    char *path = bk_rt_join(dir, "mapped.bkf");
    for (size_t k = 0; k < kind_count; k++) {
        if (bk_kind_is_static(kinds[k]))
            continue;
        bk_params params = params_for(BK_HASH_MIX64, 2000);
        bk_filter *filter = NULL, *mapped = NULL;
        assert_int_equal(bk_filter_create(kinds[k], &params, &filter), BK_OK);
        for (size_t i = 0; i < 500; i++)
            assert_int_equal(bk_filter_add_u64(filter, values[i], NULL), BK_OK);
        assert_int_equal(bk_filter_save(filter, path), BK_OK);
        assert_int_equal(bk_filter_map(path, NULL, &mapped), BK_OK);
        bk_stats before, after;
        bk_filter_stats(mapped, &before);
        bool was_new = true;
        for (size_t i = 500; i < 1000; i++) {
            bool expected = bk_filter_contains_u64(mapped, values[i]);
            assert_int_equal(bk_filter_add_u64(mapped, values[i], &was_new), BK_EIMMUTABLE);
            assert_int_equal(bk_filter_contains_u64(mapped, values[i]), expected);
        }
        assert_int_equal(bk_filter_add(mapped, "byte key", 8, NULL), BK_EIMMUTABLE);
        bk_filter_stats(mapped, &after);
        assert_int_equal(after.keys_added, before.keys_added);
        for (size_t i = 0; i < 500; i++)
            assert_true(bk_filter_contains_u64(mapped, values[i]));
        bk_filter_free(mapped);
        bk_filter_free(filter);
        assert_int_equal(unlink(path), 0);
    }
    assert_int_equal(rmdir(dir), 0);
    free(path);
    free(dir);
}

static void test_u64_calls_refuse_null(void **state)
{
    (void)state;
    uint64_t count = 5;
    assert_int_equal(bk_filter_add_u64(NULL, 1, NULL), BK_EINVAL);
    assert_false(bk_filter_contains_u64(NULL, 1));
    assert_int_equal(bk_filter_remove_u64(NULL, 1), BK_EINVAL);
    assert_int_equal(bk_filter_count_u64(NULL, 1, &count), BK_EINVAL);
    bk_params params = params_for(BK_HASH_MIX64, 100);
    bk_filter *filter;
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &params, &filter), BK_OK);
    assert_int_equal(bk_filter_count_u64(filter, 1, NULL), BK_EINVAL);
    assert_int_equal(count, 5);
    bk_filter_free(filter);
}

/* ------------------------------------------------------------------------ */
/* bk_hash_u64 and the definition of MIX64                                  */
/* ------------------------------------------------------------------------ */

/* The mixer of src/hash.c, from its formula. */
static bk_hash mix64_by_formula(uint64_t v, uint64_t seed)
{
    const uint64_t golden = 0x9E3779B97F4A7C15ULL, sqrt2 = 0x6A09E667F3BCC909ULL;
    const uint64_t m = 0xD6E8FEB86659FD93ULL;
    uint64_t z = v ^ seed ^ golden;
    z = (z ^ (z >> 32)) * m;
    z ^= z >> 32;
    uint64_t h1 = z * m;
    uint64_t h2 = (z + sqrt2) * 0x94D049BB133111EBULL;
    return (bk_hash){ h1 ^ (h1 >> 32), h2 ^ (h2 >> 31) };
}

static void test_hash_u64_is_hash_of_le_bytes(void **state)
{
    (void)state;
    const uint64_t seeds[] = { 0, 1, 0x9e3779b97f4a7c15ULL, ~0ULL };
    uint64_t rng = 17;
    for (size_t a = 0; a < ALGORITHM_COUNT; a++) {
        for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
            bk_hasher hasher;
            assert_int_equal(bk_hasher_init(&hasher, algorithms[a], seeds[s],
                                            algorithms[a] == BK_HASH_SIPHASH ? test_key : NULL),
                             BK_OK);
            for (int i = 0; i < 2000; i++) {
                uint64_t value = i < 64 ? (uint64_t)i : next_random(&rng);
                uint8_t bytes[8];
                le_bytes(value, bytes);
                bk_hash by_value = bk_hash_u64(&hasher, value);
                bk_hash by_bytes = bk_hash_key(&hasher, bytes, 8);
                bk_hash inlined = bk_hash_inline(&hasher, bytes, 8);
                assert_true(by_value.h1 == by_bytes.h1 && by_value.h2 == by_bytes.h2);
                assert_true(inlined.h1 == by_bytes.h1 && inlined.h2 == by_bytes.h2);
                if (algorithms[a] == BK_HASH_MIX64) {
                    bk_hash formula = mix64_by_formula(value, seeds[s]);
                    assert_true(formula.h1 == by_value.h1 && formula.h2 == by_value.h2);
                }
            }
        }
    }
}

/* Keys of any other length hash under MIX64 as under XXH3. */
static void test_mix64_other_lengths_are_xxh3(void **state)
{
    (void)state;
    uint8_t bytes[40];
    uint64_t rng = 3;
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t)next_random(&rng);
    bk_hasher mix, xxh3;
    assert_int_equal(bk_hasher_init(&mix, BK_HASH_MIX64, 42, NULL), BK_OK);
    assert_int_equal(bk_hasher_init(&xxh3, BK_HASH_XXH3, 42, NULL), BK_OK);
    for (size_t len = 0; len <= sizeof bytes; len++) {
        bk_hash a = bk_hash_key(&mix, bytes, len), b = bk_hash_key(&xxh3, bytes, len);
        bk_hash c = bk_hash_inline(&mix, bytes, len);
        assert_true(a.h1 == c.h1 && a.h2 == c.h2);
        if (len == 8)
            assert_false(a.h1 == b.h1 && a.h2 == b.h2);
        else
            assert_true(a.h1 == b.h1 && a.h2 == b.h2);
    }
    assert_true(strcmp(bk_hash_algorithm_name(BK_HASH_MIX64), "mix64") == 0);
    assert_int_equal(bk_hasher_init(&mix, BK_HASH_MIX64, 0, test_key), BK_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* The mixer's statistics                                                   */
/* ------------------------------------------------------------------------ */

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* h1 is a bijection of the key: no two of 2^20 sequential keys and 2^20
 * scattered ones share it (a birthday collision among 2^21 uniform 64-bit
 * words has probability 2^-24; for the mixer it is impossible). */
static void test_mix64_h1_distinct_for_distinct_keys(void **state)
{
    (void)state;
    enum { N = 1 << 20 };
    uint64_t *h1 = malloc(2 * N * sizeof *h1);
    assert_non_null(h1);
    bk_hasher hasher;
    assert_int_equal(bk_hasher_init(&hasher, BK_HASH_MIX64, 0, NULL), BK_OK);
    uint64_t rng = 11;
    for (uint64_t i = 0; i < N; i++) {
        h1[i] = bk_hash_u64(&hasher, i).h1;
        /* i in the top 20 bits, 43 random bits below bit 43: distinct, >= N */
        uint64_t scattered = i << 44 | 1ULL << 43 | (next_random(&rng) >> 21);
        h1[N + i] = bk_hash_u64(&hasher, scattered).h1;
    }
    qsort(h1, 2 * N, sizeof *h1, compare_u64);
    for (size_t i = 1; i < 2 * N; i++)
        assert_true(h1[i] != h1[i - 1]);
    free(h1);
}

/* Strict avalanche: flipping any one key bit flips each of the 128 output
 * bits with probability 1/2.  4096 random keys per input bit, so each of
 * the 64 x 128 cells is Binomial(4096, 1/2): sigma = 32.  Bound 5.5 sigma
 * (chance 3.8e-8 per cell, 3e-4 for some cell of a good mixer); a mixer
 * missing one round leaves cells near 0 or 4096. */
static void test_mix64_avalanche(void **state)
{
    (void)state;
    enum { N = 4096 };
    static uint32_t flips[64][128];
    memset(flips, 0, sizeof flips);
    bk_hasher hasher;
    assert_int_equal(bk_hasher_init(&hasher, BK_HASH_MIX64, 7, NULL), BK_OK);
    uint64_t rng = 23;
    for (int n = 0; n < N; n++) {
        uint64_t key = next_random(&rng);
        bk_hash base = bk_hash_u64(&hasher, key);
        for (int bit = 0; bit < 64; bit++) {
            bk_hash other = bk_hash_u64(&hasher, key ^ (1ULL << bit));
            uint64_t d1 = base.h1 ^ other.h1, d2 = base.h2 ^ other.h2;
            for (int out = 0; out < 64; out++) {
                flips[bit][out] += (uint32_t)((d1 >> out) & 1);
                flips[bit][64 + out] += (uint32_t)((d2 >> out) & 1);
            }
        }
    }
    const double sigma = sqrt(N * 0.25);
    for (int bit = 0; bit < 64; bit++)
        for (int out = 0; out < 128; out++)
            assert_true(fabs(flips[bit][out] - N / 2.0) <= 5.5 * sigma);
}

/* Pearson's chi-square of `cells` counts against a uniform total. */
static double chi_square(const uint32_t *counts, size_t cells, double total)
{
    double expected = total / (double)cells, sum = 0;
    for (size_t i = 0; i < cells; i++)
        sum += (counts[i] - expected) * (counts[i] - expected) / expected;
    return sum;
}

/* Sequential keys 0..2^20-1 (the hard case for a weak mixer) spread
 * uniformly over the joint buckets of h1 and h2: the top 6 bits of each
 * (where multiply-shift reduction picks a block or a slot), and the low 6
 * bits of each (where bit positions are taken).  4096 cells, 256 keys
 * each expected: chi-square with 4095 degrees of freedom, mean 4095 and
 * sigma 90.5; bound mean + 6 sigma.  Also under a non-zero seed. */
static void test_mix64_sequential_keys_uniform(void **state)
{
    (void)state;
    enum { N = 1 << 20, CELLS = 4096 };
    static uint32_t high[CELLS], low[CELLS];
    const uint64_t seeds[] = { 0, 0xabcdef };
    const double bound = 4095 + 6 * sqrt(2 * 4095.0);
    for (size_t s = 0; s < 2; s++) {
        memset(high, 0, sizeof high);
        memset(low, 0, sizeof low);
        bk_hasher hasher;
        assert_int_equal(bk_hasher_init(&hasher, BK_HASH_MIX64, seeds[s], NULL), BK_OK);
        for (uint64_t i = 0; i < N; i++) {
            bk_hash h = bk_hash_u64(&hasher, i);
            high[(h.h1 >> 58) << 6 | h.h2 >> 58]++;
            low[(h.h1 & 63) << 6 | (h.h2 & 63)]++;
        }
        assert_true(chi_square(high, CELLS, N) <= bound);
        assert_true(chi_square(low, CELLS, N) <= bound);
    }
}

/* False positives of a filter holding the keys 0..n-1, queried with the
 * next q integers: Binomial(q, p) with p the design FPR of the filter's
 * exact size, so within p q +- 5 sigma (plus 2% of p for the model). */
static void check_sequential_fpr(bk_kind kind, double model_fpr(const bk_stats *, uint64_t))
{
    enum { N = 200000, Q = 2000000 };
    bk_params params = params_for(BK_HASH_MIX64, N);
    bk_filter *filter;
    assert_int_equal(bk_filter_create(kind, &params, &filter), BK_OK);
    for (uint64_t i = 0; i < N; i++)
        assert_int_equal(bk_filter_add_u64(filter, i, NULL), BK_OK);
    size_t positives = 0;
    for (uint64_t i = N; i < N + Q; i++)
        positives += bk_filter_contains_u64(filter, i);
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    double p = model_fpr(&stats, N);
    double sigma = sqrt(Q * p * (1 - p));
    assert_true(fabs((double)positives - Q * p) <= 5 * sigma + 0.02 * p * Q);
    bk_filter_free(filter);
}

static double bloom_model(const bk_stats *stats, uint64_t n)
{
    return bk_predicted_fpr(n, stats->bits, stats->hashes);
}

static double blocked_model(const bk_stats *stats, uint64_t n)
{
    return bk_blocked_predicted_fpr((double)stats->bits / (double)n, stats->hashes, 512);
}

static void test_mix64_sequential_keys_fpr(void **state)
{
    (void)state;
    check_sequential_fpr(BK_KIND_BLOOM, bloom_model);
    check_sequential_fpr(BK_KIND_BLOCKED, blocked_model);
}

/* ------------------------------------------------------------------------ */
/* Files, views, Parquet                                                    */
/* ------------------------------------------------------------------------ */

/* A MIX64 filter of every dynamic kind survives the file round trip
 * (buffer, file, mapping) with its algorithm, seed and every answer; its
 * keys are "key:<i>" strings (lengths 5 to 8: some mixed, some XXH3). */
static void test_mix64_files_round_trip(void **state)
{
    (void)state;
    bk_kind kinds[64];
    size_t kind_count = bk_kind_list(kinds, 64);
    for (size_t k = 0; k < kind_count; k++) {
        bk_params params = params_for(BK_HASH_MIX64, 500);
        bk_filter *filter;
        if (bk_kind_is_static(kinds[k])) {
            static char text[400][16];
            bk_key keys[400];
            for (size_t i = 0; i < 400; i++)
                keys[i] = (bk_key){ text[i], (size_t)snprintf(text[i], 16, "key:%zu", i) };
            assert_int_equal(bk_filter_build(kinds[k], &params, keys, 400, &filter), BK_OK);
        } else {
            assert_int_equal(bk_filter_create(kinds[k], &params, &filter), BK_OK);
            for (size_t i = 0; i < 400; i++) {
                char key[16];
                int len = snprintf(key, sizeof key, "key:%zu", i);
                assert_int_equal(bk_filter_add(filter, key, (size_t)len, NULL), BK_OK);
            }
        }
        bk_stats stats;
        bk_filter_stats(filter, &stats);
        assert_int_equal(stats.hash_algorithm, BK_HASH_MIX64);
        bk_roundtrip_check(filter, NULL, 1000);
        bk_filter_free(filter);
    }
}

/* The bloom and fuse views serve MIX64 filters and answer as the library;
 * the sbbf view (XXH64 only) refuses them, changing nothing. */
static void test_mix64_views(void **state)
{
    (void)state;
    enum { N = 2000 };
    static uint64_t values[N];
    static bk_key keys[N];
    key_values(values, N);
    static uint8_t bytes[N][8];
    for (size_t i = 0; i < N; i++) {
        le_bytes(values[i], bytes[i]);
        keys[i] = (bk_key){ bytes[i], 8 };
    }
    bk_params params = params_for(BK_HASH_MIX64, N);
    bk_filter *bloom, *fuse, *sbbf;
    assert_int_equal(bk_filter_build(BK_KIND_BLOOM, &params, keys, N, &bloom), BK_OK);
    assert_int_equal(bk_filter_build(BK_KIND_FUSE8, &params, keys, N, &fuse), BK_OK);
    assert_int_equal(bk_filter_build(BK_KIND_SBBF, &params, keys, N, &sbbf), BK_OK);
    struct bk_bloom_view bloom_view;
    struct bk_fuse_view fuse_view;
    assert_int_equal(bk_bloom_view(bloom, &bloom_view), BK_OK);
    assert_int_equal(bk_fuse_view(fuse, &fuse_view), BK_OK);
    uint64_t rng = 8;
    for (size_t i = 0; i < 2 * N; i++) {
        uint8_t probe[8];
        le_bytes(i < N ? values[i] : next_random(&rng), probe);
        assert_int_equal(bk_bloom_view_contains(&bloom_view, probe, 8),
                         bk_filter_contains(bloom, probe, 8));
        assert_int_equal(bk_fuse_view_contains(&fuse_view, probe, 8),
                         bk_filter_contains(fuse, probe, 8));
        if (i < N) {
            assert_true(bk_bloom_view_contains(&bloom_view, probe, 8));
            assert_true(bk_fuse_view_contains(&fuse_view, probe, 8));
        }
    }
    struct bk_sbbf_view sbbf_view;
    memset(&sbbf_view, 0x5a, sizeof sbbf_view);
    assert_int_equal(bk_sbbf_view(sbbf, &sbbf_view), BK_EUNSUPPORTED);
    assert_int_equal(sbbf_view.block_count, 0x5a5a5a5a5a5a5a5aULL);
    bk_filter_free(bloom);
    bk_filter_free(fuse);
    bk_filter_free(sbbf);
}

/* Parquet requires XXH64: an sbbf filter hashed with MIX64 is not exported. */
static void test_mix64_sbbf_not_parquet(void **state)
{
    (void)state;
    bk_params params = params_for(BK_HASH_MIX64, 1000);
    params.seed = 0;
    params.flags = BK_FLAG_PARQUET_SIZE;
    bk_filter *filter;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &params, &filter), BK_OK);
    assert_int_equal(bk_filter_add_u64(filter, 12345, NULL), BK_OK);
    size_t written = 1;
    assert_int_equal(bk_sbbf_to_parquet(filter, BK_PARQUET_BITSET, NULL, 0, &written),
                     BK_EUNSUPPORTED);
    assert_int_equal(written, 1);
    bk_filter_free(filter);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64_calls_equal_byte_calls),
        cmocka_unit_test(test_u64_calls_refuse_null),
        cmocka_unit_test(test_u64_add_refused_by_mapped_filter),
        cmocka_unit_test(test_hash_u64_is_hash_of_le_bytes),
        cmocka_unit_test(test_mix64_other_lengths_are_xxh3),
        cmocka_unit_test(test_mix64_h1_distinct_for_distinct_keys),
        cmocka_unit_test(test_mix64_avalanche),
        cmocka_unit_test(test_mix64_sequential_keys_uniform),
        cmocka_unit_test(test_mix64_sequential_keys_fpr),
        cmocka_unit_test(test_mix64_files_round_trip),
        cmocka_unit_test(test_mix64_views),
        cmocka_unit_test(test_mix64_sbbf_not_parquet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
