/*
 * tests/test_cuckoo.c -- the cuckoo filter (src/cuckoo.c).
 *
 * Statistical bounds: a count of false positives among N absent queries is
 * Binomial(N, p); we accept |measured - p N| <= 4 sqrt(N p (1-p)) plus the
 * model error stated next to the test.
 */
#define _GNU_SOURCE /* mkdtemp, for tests/roundtrip.h */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "filter.h"
#include "roundtrip.h"
#include "golden.h"
#include "hash.h"   /* bk_reduce, bk_mix64 */
#include "cuckoo.h" /* src/cuckoo.h: locate and alternate, for the layout tests */

static size_t key_of(char *buffer, size_t size, const char *prefix, uint64_t i)
{
    return (size_t)snprintf(buffer, size, "%s%llu", prefix, (unsigned long long)i);
}

/* Every fingerprint width, 4 to 16 bits: the byte-sized buckets of 8, 12
 * and 16 bits and the packed ones of odd widths (buckets at half-byte
 * offsets, the last byte padded). */
static const unsigned every_width[] = { 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
#define WIDTHS (sizeof every_width / sizeof every_width[0])

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static bk_stats stats_of(const bk_filter *f)
{
    bk_stats s;
    bk_filter_stats(f, &s);
    return s;
}

static uint64_t slots_of(const bk_filter *f)
{
    bk_stats s = stats_of(f);
    return s.bits / s.fingerprint_bits;
}

static uint64_t buckets_of(const bk_filter *f)
{
    return slots_of(f) / BK_CUCKOO_SLOTS_PER_BUCKET;
}
static uint64_t keys_added_of(const bk_filter *f) { return stats_of(f).keys_added; }
static bool stash_occupied(const bk_filter *f) { return stats_of(f).stash_occupied; }
static double load_factor_of(const bk_filter *f) { return stats_of(f).load_factor; }

/* The kind's object, for the internal layout calls of src/cuckoo.h. */
static const bk_cuckoo *object_of(const bk_filter *f)
{
    const bk_cuckoo *object = bk_filter_object_of(f, BK_KIND_CUCKOO);
    assert_non_null(object);
    return object;
}

/* A filter of exactly `buckets` buckets of `bits`-bit fingerprints. */
static bk_filter *make_exact(uint64_t buckets, unsigned bits, uint64_t seed)
{
    bk_params p = { .capacity = buckets * 4,
                    .bits = buckets * 4 * bits,
                    .fingerprint_bits = bits,
                    .seed = seed };
    bk_filter *f = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &p, &f), BK_OK);
    assert_int_equal(buckets_of(f), buckets);
    return f;
}

/* Payload and parameter block, from the kind's format hooks: lets a test
 * check that nothing changed, down to the stash and the kick state. */
static uint8_t *snapshot(const bk_filter *f, uint64_t *size, uint8_t params[56])
{
    const void *object = object_of(f);
    *size = bk_cuckoo_ops.payload_size(object);
    uint8_t *bytes = malloc(*size);
    assert_non_null(bytes);
    bk_cuckoo_ops.write_payload(object, bytes);
    bk_cuckoo_ops.write_params(object, params);
    return bytes;
}

static void assert_unchanged(const bk_filter *f, const uint8_t *payload, uint64_t size,
                             const uint8_t params[56])
{
    uint64_t now_size;
    uint8_t now_params[56];
    uint8_t *now = snapshot(f, &now_size, now_params);
    assert_int_equal(now_size, size);
    assert_memory_equal(now, payload, size);
    assert_memory_equal(now_params, params, 56);
    free(now);
}

static void test_add_contains_remove_count(void **state)
{
    (void)state;
    bk_params p = { .capacity = 1000, .fpr = 0.001 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &p, &f), BK_OK);
    bool was_new = false;
    uint64_t count = 99;
    assert_false(bk_filter_contains(f, "alice", 5));
    assert_int_equal(bk_filter_remove(f, "alice", 5), BK_ENOTFOUND);
    assert_int_equal(bk_filter_add(f, "alice", 5, &was_new), BK_OK);
    assert_true(was_new);
    assert_int_equal(bk_filter_add(f, "alice", 5, &was_new), BK_OK);
    assert_false(was_new);
    assert_int_equal(bk_filter_count(f, "alice", 5, &count), BK_OK);
    assert_int_equal(count, 2);
    assert_int_equal(keys_added_of(f), 2);
    assert_int_equal(bk_filter_remove(f, "alice", 5), BK_OK);
    assert_true(bk_filter_contains(f, "alice", 5));
    assert_int_equal(bk_filter_remove(f, "alice", 5), BK_OK);
    assert_false(bk_filter_contains(f, "alice", 5));
    assert_int_equal(bk_filter_remove(f, "alice", 5), BK_ENOTFOUND);
    assert_int_equal(keys_added_of(f), 0);
    assert_true(load_factor_of(f) == 0);
    bk_filter_free(f);
}

static void test_same_key_many_times(void **state)
{
    (void)state;
    bk_filter *f = make_exact(64, 16, 0);
    /* Find a key whose two buckets differ: 8 copies fit in the table, the
     * 9th goes to the stash, the 10th is refused. */
    char key[32];
    size_t len = 0;
    for (uint64_t i = 0;; i++) {
        len = key_of(key, sizeof key, "same", i);
        uint32_t fp;
        uint64_t b1, b2;
        bk_cuckoo_locate(object_of(f), bk_filter_hash(f, key, len), &fp, &b1, &b2);
        if (b1 != b2)
            break;
    }
    for (int i = 0; i < 9; i++)
        assert_int_equal(bk_filter_add(f, key, len, NULL), BK_OK);
    assert_true(stash_occupied(f));
    assert_int_equal(bk_filter_add(f, key, len, NULL), BK_EFULL);
    assert_int_equal(bk_filter_add(f, "other", 5, NULL), BK_EFULL);
    uint64_t count;
    assert_int_equal(bk_filter_count(f, key, len, &count), BK_OK);
    assert_int_equal(count, 9);
    for (int i = 9; i > 0; i--) {
        assert_true(bk_filter_contains(f, key, len));
        assert_int_equal(bk_filter_remove(f, key, len), BK_OK);
        assert_false(stash_occupied(f));
        assert_int_equal(bk_filter_count(f, key, len, &count), BK_OK);
        assert_int_equal(count, (uint64_t)i - 1);
    }
    assert_false(bk_filter_contains(f, key, len));
    assert_int_equal(keys_added_of(f), 0);
    bk_filter_free(f);
}

/* The alternate is (t(f) - i) mod B with t(f) = reduce(mix64(f), B),
 * whether the filter looks t(f) up in its table (large tables, f <= 12)
 * or computes it: checked for every fingerprint of widths 4, 8, 10, 12
 * (table) and 13 (computed), at the first, a middle and the last bucket. */
static void test_alternate_formula(void **state)
{
    (void)state;
    const unsigned widths[] = { 4, 8, 10, 12, 13 };
    const uint64_t buckets = 300007;
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        bk_filter *f = make_exact(buckets, widths[w], 0);
        const uint64_t from[] = { 0, buckets / 2, buckets - 1 };
        for (uint32_t fp = 1; fp < (1u << widths[w]); fp++) {
            uint64_t target = bk_reduce(bk_mix64(fp), buckets);
            for (size_t b = 0; b < 3; b++) {
                uint64_t expected = (target + buckets - from[b]) % buckets;
                assert_int_equal(bk_cuckoo_alternate(object_of(f), from[b], fp), expected);
            }
        }
        bk_filter_free(f);
    }
}

static void test_alternate_is_an_involution(void **state)
{
    (void)state;
    const uint64_t sizes[] = { 1, 2, 3, 7, 1000, 1024, 12345 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        bk_filter *f = make_exact(sizes[s], 16, 0);
        uint64_t rng = sizes[s];
        for (int trial = 0; trial < 20000; trial++) {
            uint64_t bucket = next_random(&rng) % sizes[s];
            uint32_t fp = 1 + (uint32_t)(next_random(&rng) % 65535);
            uint64_t other = bk_cuckoo_alternate(object_of(f), bucket, fp);
            assert_true(other < sizes[s]);
            assert_int_equal(bk_cuckoo_alternate(object_of(f), other, fp), bucket);
        }
        bk_filter_free(f);
    }
}

static void test_fingerprint_never_zero(void **state)
{
    (void)state;
    const unsigned *widths = every_width;
    for (size_t w = 0; w < WIDTHS; w++) {
        bk_filter *f = make_exact(100, widths[w], 0);
        uint64_t rng = widths[w];
        uint64_t seen_max = 0;
        for (int trial = 0; trial < 200000; trial++) {
            bk_hash h = { next_random(&rng), next_random(&rng) };
            if (trial < 4) { /* the extremes of h2 */
                h.h2 = trial < 2 ? 0 : UINT64_MAX;
                h.h1 = trial & 1 ? UINT64_MAX : 0;
            }
            uint32_t fp;
            uint64_t b1, b2;
            bk_cuckoo_locate(object_of(f), h, &fp, &b1, &b2);
            assert_true(fp >= 1 && fp < (1u << widths[w]));
            assert_true(b1 < 100 && b2 < 100);
            assert_int_equal(bk_cuckoo_alternate(object_of(f), b1, fp), b2);
            if (fp > seen_max)
                seen_max = fp;
        }
        assert_int_equal(seen_max, (1u << widths[w]) - 1);
        bk_filter_free(f);
    }
}

static void test_sizing(void **state)
{
    (void)state;
    struct {
        double fpr;
        unsigned bits;
    } cases[] = {
        /* p(0.95, f): f = 7: 5.83%, 8: 2.94%, 9: 1.48%, 10: 0.741%,
         * 11: 0.371%, 12: 0.185%, 13: 0.0927%, 15: 0.0232%, 16: 0.0116% */
        { 0.5, 4 },    { 0.06, 7 },    { 0.03, 8 },     { 0.0295, 8 },
        { 0.029, 9 },  { 0.016, 9 },   { 0.01, 10 },    { 0.0074, 11 },
        { 0.002, 12 }, { 0.0018, 13 }, { 0.00024, 15 }, { 0.0002, 16 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bk_params p = { .capacity = 100000, .fpr = cases[c].fpr };
        bk_stats d;
        assert_int_equal(bk_kind_design(BK_KIND_CUCKOO, &p, &d), BK_OK);
        assert_int_equal(d.fingerprint_bits, cases[c].bits);
        assert_true(d.target_fpr <= cases[c].fpr);
        /* ceil((100000 + 3 sqrt(100000)) / 3.8) = 26566 buckets */
        assert_int_equal(d.bits, 26566ULL * 4 * cases[c].bits);
        assert_true(fabs(d.design_fill_ratio - 100000.0 / (26566.0 * 4)) < 1e-12);
        bk_filter *f;
        assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &p, &f), BK_OK);
        bk_stats s;
        bk_filter_stats(f, &s);
        assert_int_equal(s.bits, d.bits);
        assert_int_equal(s.bytes, d.bytes);
        assert_true(s.target_fpr == d.target_fpr);
        assert_int_equal(s.fingerprint_bits, d.fingerprint_bits);
        bk_filter_free(f);
    }
    bk_params too_small = { .capacity = 1000, .fpr = 1e-5 };
    bk_params bpk = { .capacity = 1000, .bits_per_key = 13 };
    bk_params bpk_odd = { .capacity = 1000, .bits_per_key = 10 };
    bk_params bpk_wide = { .capacity = 1000, .bits_per_key = 40 };
    bk_params bpk_small = { .capacity = 1000, .bits_per_key = 4 };
    bk_params explicit_bits = { .capacity = 1000, .bits = 12000, .fingerprint_bits = 12 };
    bk_params odd_width = { .capacity = 1000, .fingerprint_bits = 9 };
    bk_params too_narrow = { .capacity = 1000, .fingerprint_bits = 3 };
    bk_params bad_width = { .capacity = 1000, .fingerprint_bits = 17 };
    bk_stats d;
    assert_int_equal(bk_kind_design(BK_KIND_CUCKOO, &too_small, &d), BK_ERANGE);
    assert_int_equal(bk_kind_design(BK_KIND_CUCKOO, &bpk, &d), BK_OK);
    assert_int_equal(d.fingerprint_bits, 12); /* floor(13 x 0.95) */
    assert_int_equal(bk_kind_design(BK_KIND_CUCKOO, &bpk_odd, &d), BK_OK);
    assert_int_equal(d.fingerprint_bits, 9);
    assert_int_equal(bk_kind_design(BK_KIND_CUCKOO, &bpk_wide, &d), BK_OK);
    assert_int_equal(d.fingerprint_bits, 16);
    assert_int_equal(bk_kind_design(BK_KIND_CUCKOO, &bpk_small, &d), BK_ERANGE);
    assert_int_equal(bk_kind_design(BK_KIND_CUCKOO, &explicit_bits, &d), BK_OK);
    assert_int_equal(d.bits, 12000);
    assert_int_equal(bk_kind_design(BK_KIND_CUCKOO, &odd_width, &d), BK_OK);
    assert_int_equal(d.fingerprint_bits, 9);
    assert_int_equal(d.bytes, (d.bits + 7) / 8);
    assert_int_equal(bk_kind_design(BK_KIND_CUCKOO, &too_narrow, &d), BK_EINVAL);
    assert_int_equal(bk_kind_design(BK_KIND_CUCKOO, &bad_width, &d), BK_EINVAL);
}

/*
 * Attempted load 100% and beyond: keep adding distinct keys.  Every add
 * that returned BK_OK must stay present whatever happens after; once the
 * stash is taken, every add is BK_EFULL and changes nothing.  Then removes
 * free the stash and adds work again.
 */
static void fill_to_the_brim(unsigned bits, uint64_t buckets, uint64_t seed)
{
    bk_filter *f = make_exact(buckets, bits, seed);
    uint64_t slots = slots_of(f);
    /* 100% attempted load (one add per slot), then on until the first
     * BK_EFULL (a tiny table may take every key and the stash). */
    uint64_t limit = slots + 2;
    bool *stored = calloc(limit + 100, sizeof *stored);
    assert_non_null(stored);
    char key[32];
    uint64_t accepted = 0, attempts = 0;
    bk_status status = BK_OK;
    for (; attempts < slots || (status == BK_OK && attempts < limit); attempts++) {
        status = bk_filter_add(f, key, key_of(key, sizeof key, "full", attempts), NULL);
        assert_true(status == BK_OK || status == BK_EFULL);
        stored[attempts] = status == BK_OK;
        accepted += stored[attempts];
    }
    assert_int_equal(status, BK_EFULL); /* a full table was reached */
    assert_true(stash_occupied(f));
    double load = load_factor_of(f);
    printf("cuckoo f=%u B=%llu: %llu of %llu adds accepted, load %.4f when full\n", bits,
           (unsigned long long)buckets, (unsigned long long)accepted,
           (unsigned long long)attempts, load);
    assert_int_equal(keys_added_of(f), accepted);
    assert_true(fabs(load - (double)accepted / (double)slots) < 1e-12);
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_true(s.load_factor == load);
    assert_true(s.past_design_point);

    /* ... and beyond: refused, and nothing changes. */
    uint64_t size;
    uint8_t params[56];
    uint8_t *before = snapshot(f, &size, params);
    for (uint64_t i = attempts; i < attempts + 100; i++)
        assert_int_equal(bk_filter_add(f, key, key_of(key, sizeof key, "full", i), NULL),
                         BK_EFULL);
    assert_unchanged(f, before, size, params);
    free(before);

    for (uint64_t i = 0; i < attempts; i++)
        if (stored[i])
            assert_true(bk_filter_contains(f, key, key_of(key, sizeof key, "full", i)));

    /* Removing stored keys frees the stash; nothing else is lost. */
    uint64_t removed = 0;
    for (uint64_t i = 0; i < attempts && stash_occupied(f); i++) {
        if (!stored[i])
            continue;
        assert_int_equal(bk_filter_remove(f, key, key_of(key, sizeof key, "full", i)), BK_OK);
        stored[i] = false;
        removed++;
    }
    assert_false(stash_occupied(f));
    assert_true(removed <= 10);
    assert_int_equal(keys_added_of(f), accepted - removed);
    for (uint64_t i = 0; i < attempts; i++)
        if (stored[i])
            assert_true(bk_filter_contains(f, key, key_of(key, sizeof key, "full", i)));
    assert_int_equal(bk_filter_add(f, "again", 5, NULL), BK_OK);
    assert_true(bk_filter_contains(f, "again", 5));
    free(stored);
    bk_filter_free(f);
}

static void test_full_table_loses_nothing(void **state)
{
    (void)state;
    fill_to_the_brim(8, 1024, 1);
    fill_to_the_brim(12, 1024, 2);
    fill_to_the_brim(16, 1024, 3);
    fill_to_the_brim(16, 1000, 4); /* not a power of two */
    fill_to_the_brim(8, 3, 5);     /* tiny */
}

/* The design point: adding `capacity` distinct keys to a filter sized by
 * default succeeds (95% load for capacity + 3 sqrt(capacity) keys). */
static void test_capacity_fits(void **state)
{
    (void)state;
    const uint64_t capacities[] = { 1, 2, 5, 10, 20, 50, 100, 1000, 10000, 100000 };
    char key[32];
    for (size_t c = 0; c < sizeof capacities / sizeof capacities[0]; c++) {
        uint64_t seeds = capacities[c] <= 100 ? 200 : 5;
        for (uint64_t seed = 0; seed < seeds; seed++) {
            bk_params p = { .capacity = capacities[c], .fpr = 0.01, .seed = seed };
            bk_filter *f;
            assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &p, &f), BK_OK);
            for (uint64_t i = 0; i < capacities[c]; i++)
                assert_int_equal(bk_filter_add(f, key, key_of(key, sizeof key, "cap", i), NULL),
                                 BK_OK);
            bk_filter_free(f);
        }
    }
}

/*
 * Interleaved random adds and removes checked against the exact multiset,
 * on a small table so that it runs full again and again: a key added more
 * times than removed is always present and counted at least that often.
 */
static void test_random_multiset_no_false_negatives(void **state)
{
    (void)state;
    const unsigned *widths = every_width;
    for (size_t w = 0; w < WIDTHS; w++) {
        bk_filter *f = make_exact(64, widths[w], (uint64_t)w);
        enum { POOL = 400, STEPS = 30000 };
        unsigned truth[POOL] = { 0 };
        uint64_t total = 0, refused = 0;
        uint64_t rng = 1000 + (uint64_t)w;
        char key[32];
        for (unsigned step = 0; step < STEPS; step++) {
            unsigned which = (unsigned)(next_random(&rng) % POOL);
            size_t len = key_of(key, sizeof key, "r", which);
            bool add = truth[which] == 0 || next_random(&rng) % 100 < 50;
            if (add) {
                bk_status status = bk_filter_add(f, key, len, NULL);
                assert_true(status == BK_OK || status == BK_EFULL);
                if (status == BK_OK) {
                    truth[which]++;
                    total++;
                } else {
                    refused++;
                }
            } else {
                assert_int_equal(bk_filter_remove(f, key, len), BK_OK);
                truth[which]--;
                total--;
            }
            if (step % 101 == 0 || step == STEPS - 1) {
                assert_int_equal(keys_added_of(f), total);
                for (unsigned i = 0; i < POOL; i++) {
                    if (truth[i] == 0)
                        continue;
                    len = key_of(key, sizeof key, "r", i);
                    assert_true(bk_filter_contains(f, key, len));
                    uint64_t count;
                    assert_int_equal(bk_filter_count(f, key, len, &count), BK_OK);
                    assert_true(count >= truth[i]);
                }
            }
        }
        assert_true(refused > 0); /* the table did run full */
        bk_filter_free(f);
    }
}

/*
 * FPR beside the prediction.  Given the load a, a query meets 8 slots, and
 * p = 1 - (1 - q)^(8a), q = 1/(2^f - 1).  Model error: the occupancy o of a
 * query's two buckets varies around 8a, and 1 - (1-q)^o lies within
 * o^2 q^2 / 2 <= 32 q^2 of o q; when a query's two buckets coincide
 * (probability 1/B) it meets 4 slots, not 8: at most 8 q / B.
 */
static void test_fpr_matches_prediction(void **state)
{
    (void)state;
    const unsigned *widths = every_width;
    const uint64_t queries = 1000000;
    char key[32];
    for (size_t w = 0; w < WIDTHS; w++) {
        /* 13,000 buckets at the paper's 95% load: 49,400 keys. */
        bk_filter *f = make_exact(13000, widths[w], 0);
        for (uint64_t i = 0; i < 49400; i++)
            assert_int_equal(bk_filter_add(f, key, key_of(key, sizeof key, "user:", i), NULL),
                             BK_OK);
        uint64_t positives = 0;
        for (uint64_t i = 0; i < queries; i++)
            positives += bk_filter_contains(f, key, key_of(key, sizeof key, "guest:", i));
        double load = load_factor_of(f);
        double predicted = stats_of(f).current_fpr;
        double q = 1.0 / (ldexp(1.0, (int)widths[w]) - 1);
        double sigma = sqrt((double)queries * predicted * (1 - predicted));
        double model = (double)queries * (32 * q * q + 8 * q / (double)buckets_of(f));
        double measured = (double)positives / (double)queries;
        printf("cuckoo f=%2u load %.4f: measured FPR %.6f predicted %.6f (2b/2^f = %.6f)\n",
               widths[w], load, measured, predicted, 8.0 / ldexp(1.0, (int)widths[w]));
        assert_true(fabs((double)positives - predicted * (double)queries) <= 4 * sigma + model);
        bk_filter_free(f);
    }
}

/* contains tests a whole bucket at once (src/cuckoo.c, matching_slots); count
 * walks its slots one by one.  On full tables of every width, with many
 * false positives among the absent hashes (f = 8: about 3%), the two
 * agree on every hash, and present hashes are found. */
static void test_contains_agrees_with_slot_by_slot_count(void **state)
{
    (void)state;
    const unsigned *widths = every_width;
    enum { BUCKETS = 4096, QUERIES = 200000 };
    for (size_t w = 0; w < WIDTHS; w++) {
        bk_filter *f = make_exact(BUCKETS, widths[w], 0);
        uint64_t rng = 1000 + w, added = 0;
        uint64_t target = BUCKETS * 4 * 95 / 100;
        while (keys_added_of(f) < target && !stash_occupied(f)) {
            bk_hash h = { next_random(&rng), next_random(&rng) };
            assert_int_equal(bk_filter_add_hash(f, h, NULL), BK_OK);
            added++;
        }
        uint64_t replay = 1000 + w, found = 0;
        for (uint64_t i = 0; i < added; i++) {
            bk_hash h = { next_random(&replay), next_random(&replay) };
            found += bk_filter_contains_hash(f, h);
        }
        assert_int_equal(found, added);
        uint64_t positives = 0;
        for (unsigned q = 0; q < QUERIES; q++) {
            bk_hash h = { next_random(&rng), next_random(&rng) };
            uint64_t copies = 0;
            /* count_hash is not on the handle (it counts keys): the kind's op */
            assert_int_equal(bk_cuckoo_ops.count_hash(object_of(f), h, &copies), BK_OK);
            bool contained = bk_filter_contains_hash(f, h);
            assert_int_equal(contained, copies > 0);
            positives += contained;
        }
        assert_true(positives > 0);
        bk_filter_free(f);
    }
}

static void test_batch_matches_single(void **state)
{
    (void)state;
    bk_params p = { .capacity = 3000, .fingerprint_bits = 8 };
    bk_filter *f, *g;
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &p, &f), BK_OK);
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &p, &g), BK_OK);
    enum { N = 3000 };
    static char storage[N][16];
    static bk_key keys[N];
    static bool results[N];
    for (int i = 0; i < N; i++) {
        keys[i].len = key_of(storage[i], sizeof storage[i], "z", (uint64_t)(i % 2500));
        keys[i].data = storage[i];
        assert_int_equal(bk_filter_add(f, keys[i].data, keys[i].len, NULL), BK_OK);
    }
    size_t fresh;
    assert_int_equal(bk_filter_add_batch(g, keys, N, &fresh), BK_OK);
    assert_true(fresh <= 2500 && fresh > 2400);
    uint64_t s1, s2;
    uint8_t p1[56], p2[56];
    uint8_t *a = snapshot(f, &s1, p1);
    uint8_t *b = snapshot(g, &s2, p2);
    assert_memory_equal(a, b, s1);
    free(a);
    free(b);
    for (int i = 0; i < N; i++)
        keys[i].len = key_of(storage[i], sizeof storage[i], i % 2 ? "z" : "w", (uint64_t)i);
    size_t present = bk_filter_contains_batch(f, keys, N, results);
    size_t expected = 0;
    for (int i = 0; i < N; i++) {
        assert_int_equal(results[i], bk_filter_contains(f, keys[i].data, keys[i].len));
        expected += results[i];
    }
    assert_int_equal(present, expected);
    assert_true(present >= 1250); /* the odd i < 2500 */
    bk_filter_free(f);
    bk_filter_free(g);
}

static void test_add_unique(void **state)
{
    (void)state;
    bk_params p = { .capacity = 100, .fpr = 0.01 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &p, &f), BK_OK);
    bool was_new = false;
    assert_int_equal(bk_cuckoo_add_unique(f, "u", 1, &was_new), BK_OK);
    assert_true(was_new);
    assert_int_equal(bk_cuckoo_add_unique(f, "u", 1, &was_new), BK_OK);
    assert_false(was_new);
    uint64_t count;
    bk_filter_count(f, "u", 1, &count);
    assert_int_equal(count, 1);
    assert_int_equal(keys_added_of(f), 1);
    assert_int_equal(bk_filter_remove(f, "u", 1), BK_OK);
    assert_false(bk_filter_contains(f, "u", 1));
    bk_hash v = bk_filter_hash(f, "v", 1);
    assert_int_equal(bk_cuckoo_add_unique_hash(f, v, &was_new), BK_OK);
    assert_true(was_new);
    assert_int_equal(bk_cuckoo_add_unique_hash(f, v, &was_new), BK_OK);
    assert_false(was_new);
    assert_true(bk_filter_contains(f, "v", 1));
    assert_int_equal(keys_added_of(f), 1);
    bk_filter_free(f);
}

static void test_bad_input(void **state)
{
    (void)state;
    bk_filter *f = NULL;
    bk_params zero = { .capacity = 0 };
    bk_params bad_fpr = { .capacity = 10, .fpr = -1 };
    bk_params concurrent = { .capacity = 10, .flags = BK_FLAG_CONCURRENT };
    bk_params unknown_flag = { .capacity = 10, .flags = 0x40 };
    bk_params hashes_only = { .capacity = 10, .hashes = 3 };
    bk_params huge = { .capacity = UINT64_MAX, .fpr = 0.01 };
    bk_params huge_bits = { .capacity = 10, .bits = UINT64_MAX, .fingerprint_bits = 8 };
    bk_params tiny_bits = { .capacity = 10, .bits = 31, .fingerprint_bits = 8 };
    bk_params siphash_no_key = { .capacity = 10, .hash_algorithm = BK_HASH_SIPHASH };
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, NULL, &f), BK_EINVAL);
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &zero, &f), BK_EINVAL);
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &bad_fpr, &f), BK_EINVAL);
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &concurrent, &f), BK_EUNSUPPORTED);
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &unknown_flag, &f), BK_EINVAL);
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &hashes_only, &f), BK_EINVAL);
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &huge, &f), BK_ERANGE);
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &huge_bits, &f), BK_ERANGE);
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &tiny_bits, &f), BK_ERANGE);
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &siphash_no_key, &f), BK_EKEY);
    assert_null(f);

    bk_params p = { .capacity = 100 };
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &p, &f), BK_OK);
    uint64_t count;
    assert_int_equal(bk_filter_add(NULL, "a", 1, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_add(f, NULL, 2, NULL), BK_EINVAL);
    assert_int_equal(bk_cuckoo_add_unique(f, NULL, 2, NULL), BK_EINVAL);
    assert_int_equal(bk_cuckoo_add_unique(NULL, "a", 1, NULL), BK_EINVAL);
    bk_filter *other;
    bk_params classic = { .capacity = 100 };
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &classic, &other), BK_OK);
    assert_int_equal(bk_cuckoo_add_unique(other, "a", 1, NULL), BK_EKIND);
    assert_false(bk_filter_contains(other, "a", 1));
    bk_filter_free(other);
    assert_int_equal(bk_filter_remove(f, NULL, 2), BK_EINVAL);
    assert_int_equal(bk_filter_count(f, "a", 1, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_count(NULL, "a", 1, &count), BK_EINVAL);
    assert_false(bk_filter_contains(f, NULL, 2));
    assert_int_equal(bk_filter_add_batch(f, NULL, 2, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_contains_batch(f, NULL, 2, NULL), 0);
    assert_int_equal(keys_added_of(f), 0);
    assert_int_equal(bk_filter_add(f, NULL, 0, NULL), BK_OK); /* the empty key */
    assert_true(bk_filter_contains(f, "", 0));
    assert_int_equal(bk_filter_clear(f), BK_OK);
    assert_false(bk_filter_contains(f, "", 0));
    bk_filter_free(f);
    bk_filter_free(NULL);
}

static void test_filter_handle(void **state)
{
    (void)state;
    bk_kind kind;
    assert_int_equal(bk_kind_from_name("cuckoo", &kind), BK_OK);
    assert_int_equal(kind, BK_KIND_CUCKOO);
    bk_params p = { .capacity = 1000, .fpr = 0.001 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &p, &f), BK_OK);
    bool was_new;
    assert_int_equal(bk_filter_add(f, "k", 1, &was_new), BK_OK);
    assert_true(was_new);
    assert_int_equal(bk_filter_add(f, "k", 1, &was_new), BK_OK);
    assert_false(was_new);
    uint64_t count;
    assert_int_equal(bk_filter_count(f, "k", 1, &count), BK_OK);
    assert_int_equal(count, 2);
    assert_int_equal(bk_filter_remove(f, "k", 1), BK_OK);
    assert_int_equal(bk_filter_remove(f, "k", 1), BK_OK);
    assert_int_equal(bk_filter_remove(f, "k", 1), BK_ENOTFOUND);
    bk_stats s, d;
    bk_filter_stats(f, &s);
    assert_int_equal(bk_kind_design(BK_KIND_CUCKOO, &p, &d), BK_OK);
    assert_int_equal(s.bits, d.bits);
    assert_int_equal(s.fingerprint_bits, 13); /* the narrowest width for 0.1% */
    assert_true(s.load_factor == 0);
    assert_int_equal(bk_filter_union(f, f), BK_EUNSUPPORTED);
    bk_filter_free(f);
}

/* The file-format hooks, driven directly: write, read back, compare. */
static void test_format_hooks(void **state)
{
    (void)state;
    const bk_kind_ops *ops = &bk_cuckoo_ops;
    const unsigned *widths = every_width;
    char key[32];
    for (size_t w = 0; w < WIDTHS; w++) {
        bk_filter *f = make_exact(37, widths[w], 9);
        const void *object = object_of(f);
        uint64_t accepted = 0;
        for (uint64_t i = 0; i < 200; i++)
            accepted += bk_filter_add(f, key, key_of(key, sizeof key, "s", i), NULL) == BK_OK;
        assert_true(stash_occupied(f)); /* the stash travels too */
        uint8_t params[56];
        assert_int_equal(ops->params_size(object), 56);
        ops->write_params(object, params);
        uint64_t size = ops->payload_size(object);
        assert_int_equal(size, (37 * 4 * widths[w] + 7) / 8); /* 4f bits a bucket, packed */
        uint8_t *payload = aligned_alloc(64, (size + 63) / 64 * 64);
        ops->write_payload(object, payload);
        for (int pass = 0; pass < 2; pass++) {
            bool in_place = pass == 0;
            void *read = NULL;
            assert_int_equal(ops->read(params, 56, payload, size, ops->hasher(object), accepted,
                                       in_place, &read),
                             BK_OK);
            bk_filter *back = NULL;
            assert_int_equal(bk_filter_wrap(ops, read, &back), BK_OK);
            assert_int_equal(buckets_of(back), 37);
            assert_int_equal(stats_of(back).fingerprint_bits, widths[w]);
            assert_int_equal(keys_added_of(back), accepted);
            assert_true(stash_occupied(back));
            assert_true(load_factor_of(back) == load_factor_of(f));
            assert_int_equal(bk_filter_hasher(back)->seed, 9);
            for (uint64_t i = 0; i < 400; i++) {
                size_t len = key_of(key, sizeof key, "s", i);
                assert_int_equal(bk_filter_contains(back, key, len),
                                 bk_filter_contains(f, key, len));
            }
            if (in_place) {
                assert_int_equal(bk_filter_remove(back, "s1", 2), BK_EIMMUTABLE);
                assert_int_equal(bk_filter_add(back, "s1", 2, NULL), BK_EIMMUTABLE);
                assert_int_equal(bk_filter_clear(back), BK_EIMMUTABLE);
            } else {
                /* The copy behaves exactly as the original from here on. */
                assert_int_equal(bk_filter_remove(back, "s1", 2), BK_OK);
                assert_int_equal(bk_filter_remove(f, "s1", 2), BK_OK);
                uint8_t p1[56], p2[56];
                uint64_t s1, s2;
                uint8_t *a = snapshot(f, &s1, p1), *b = snapshot(back, &s2, p2);
                assert_memory_equal(a, b, s1);
                assert_memory_equal(p1, p2, 56);
                free(a);
                free(b);
                ops->write_params(object, params);
                ops->write_payload(object, payload);
                accepted--;
            }
            bk_filter_free(back);
        }

        /* Contradictions, each refused with its code. */
        const bk_hasher *h = ops->hasher(object);
        struct {
            size_t offset;
            uint8_t value;
            bk_status expected;
        } cases[] = {
            { 0, 38, BK_ECORRUPT },    /* buckets: payload size contradicts */
            { 0, 0, BK_ECORRUPT },     /* zero buckets */
            { 8, 3, BK_ECORRUPT },     /* fingerprint width 3 */
            { 8, 17, BK_ECORRUPT },    /* fingerprint width 17 */
            { 12, 8, BK_ECORRUPT },    /* 8 slots per bucket */
            { 16, 0, BK_ECORRUPT },    /* capacity 0 */
            { 31, 0xff, BK_ECORRUPT }, /* target FPR NaN */
            { 32, 37, BK_ECORRUPT },   /* stash bucket out of range */
            { 44, 1, BK_ECORRUPT },    /* reserved */
            { 7, 0x10, BK_ERANGE },    /* buckets 2^60+: beyond BK_MAX_BITS */
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            uint8_t bad[56];
            memcpy(bad, params, 56);
            bad[cases[c].offset] = cases[c].value;
            void *back = NULL;
            assert_int_equal(ops->read(bad, 56, payload, size, h, accepted, false, &back),
                             cases[c].expected);
            assert_null(back);
        }
        if (widths[w] % 2 == 1) {
            /* 37 buckets of 4f bits, f odd: the last byte's high 4 bits are
             * padding and must be 0. */
            payload[size - 1] ^= 0x80;
            void *back = NULL;
            assert_int_equal(ops->read(params, 56, payload, size, h, accepted, false, &back),
                             BK_ECORRUPT);
            assert_null(back);
            payload[size - 1] ^= 0x80;
        }
        uint8_t bad[56];
        memcpy(bad, params, 56);
        bad[40] = 0;
        bad[41] = 0;
        bad[42] = 0;
        bad[43] = 0; /* stash empty but bucket set */
        bad[32] = 5;
        void *back = NULL;
        assert_int_equal(ops->read(bad, 56, payload, size, h, accepted, false, &back),
                         BK_ECORRUPT);
        memcpy(bad, params, 56);
        bad[41] = 0xff;
        bad[42] = 0xff; /* stash fingerprint beyond 2^f */
        assert_int_equal(ops->read(bad, 56, payload, size, h, accepted, false, &back),
                         BK_ECORRUPT);
        assert_int_equal(ops->read(params, 55, payload, size, h, accepted, false, &back),
                         BK_ECORRUPT);
        assert_int_equal(ops->read(params, 56, payload, size - 1, h, accepted, false, &back),
                         BK_ECORRUPT);
        assert_int_equal(ops->read(params, 56, payload, size, h, 37 * 4 + 2, false, &back),
                         BK_ECORRUPT);
        assert_null(back);
        free(payload);
        bk_filter_free(f);
    }
}

/* Through the real format (tests/roundtrip.h): buffer, file, load and map,
 * each width, a non-power-of-two table, with and without the stash taken. */
static void test_format_roundtrip(void **state)
{
    (void)state;
    const unsigned *widths = every_width;
    char key[32];
    for (size_t w = 0; w < WIDTHS; w++) {
        for (int full = 0; full < 2; full++) {
            bk_params p = { .capacity = 300, .fingerprint_bits = widths[w], .seed = 11 };
            bk_filter *f;
            assert_int_equal(bk_filter_create(BK_KIND_CUCKOO, &p, &f), BK_OK);
            uint64_t keys = full ? 400 : 250;
            for (uint64_t i = 0; i < keys; i++) {
                bk_status status = bk_filter_add(f, key, key_of(key, sizeof key, "key:", i),
                                                 NULL);
                assert_true(status == BK_OK || (full && status == BK_EFULL));
            }
            assert_int_equal(stash_occupied(f), full);
            bk_roundtrip_check(f, NULL, 1000);

            size_t size;
            uint8_t *bytes = bk_rt_serialize(f, &size);
            bk_filter *back;
            assert_int_equal(bk_filter_deserialize(bytes, size, NULL, &back), BK_OK);
            bk_stats a, b;
            bk_filter_stats(f, &a);
            bk_filter_stats(back, &b);
            assert_true(a.load_factor == b.load_factor);
            assert_int_equal(b.fingerprint_bits, widths[w]);
            /* The loaded filter continues exactly as the original would. */
            for (uint64_t i = 0; i < 40; i++) {
                size_t len = key_of(key, sizeof key, "key:", i * 7);
                assert_int_equal(bk_filter_remove(back, key, len),
                                 bk_filter_remove(f, key, len));
                len = key_of(key, sizeof key, "more:", i);
                assert_int_equal(bk_filter_add(back, key, len, NULL),
                                 bk_filter_add(f, key, len, NULL));
            }
            size_t size2, size3;
            uint8_t *after_back = bk_rt_serialize(back, &size2);
            uint8_t *after_original = bk_rt_serialize(f, &size3);
            assert_int_equal(size2, size3);
            assert_memory_equal(after_back, after_original, size2);
            free(after_back);
            free(after_original);
            free(bytes);
            bk_filter_free(back);
            bk_filter_free(f);
        }
    }
}

/* Golden files (tests/golden.h, tests/data/): the format and the algorithm
 * pinned, on every host. */
static const bk_golden goldens[] = {
    { "cuckoo12-stash.bkf",
      BK_KIND_CUCKOO,
      { .capacity = 100, .bits = 29 * 4 * 12, .fingerprint_bits = 12, .seed = 7 },
      200,
      0,
      2000 },
    { "cuckoo8-removed.bkf",
      BK_KIND_CUCKOO,
      { .capacity = 300, .bits = 83 * 4 * 8, .fingerprint_bits = 8 },
      300,
      4,
      2000 },
    { "cuckoo16-seeded.bkf",
      BK_KIND_CUCKOO,
      { .capacity = 100,
        .bits = 27 * 4 * 16,
        .fingerprint_bits = 16,
        .seed = 0x9e3779b97f4a7c15ULL },
      90,
      5,
      2000 },
};

#define GOLDEN_COUNT (sizeof goldens / sizeof goldens[0])

static void test_golden_files(void **state)
{
    (void)state;
    for (size_t g = 0; g < GOLDEN_COUNT; g++)
        bk_golden_check(&goldens[g]);
    bk_filter *stashed = bk_golden_build(&goldens[0]); /* the file's bytes, as checked */
    assert_true(stash_occupied(stashed));
    bk_filter_free(stashed);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-golden") == 0)
        return bk_golden_write(goldens, GOLDEN_COUNT, argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_contains_remove_count),
        cmocka_unit_test(test_same_key_many_times),
        cmocka_unit_test(test_alternate_formula),
        cmocka_unit_test(test_alternate_is_an_involution),
        cmocka_unit_test(test_fingerprint_never_zero),
        cmocka_unit_test(test_sizing),
        cmocka_unit_test(test_full_table_loses_nothing),
        cmocka_unit_test(test_capacity_fits),
        cmocka_unit_test(test_random_multiset_no_false_negatives),
        cmocka_unit_test(test_fpr_matches_prediction),
        cmocka_unit_test(test_contains_agrees_with_slot_by_slot_count),
        cmocka_unit_test(test_batch_matches_single),
        cmocka_unit_test(test_add_unique),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_filter_handle),
        cmocka_unit_test(test_format_hooks),
        cmocka_unit_test(test_format_roundtrip),
        cmocka_unit_test(test_golden_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
