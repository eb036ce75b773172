/*
 * tests/test_bloom.c -- the classic Bloom filter: no false negatives, the
 * FPR against the formula within binomial bounds, set algebra, estimates
 * from the fill, batches, and every bad parameter.
 */
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
#include "filter_figures.h"
#include "cpu.h"
#include "hash.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static bk_filter *make_filter(const bk_params *params)
{
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, params, &filter), BK_OK);
    assert_non_null(filter);
    return filter;
}

/* Keys are 8-byte integers: key i of set `tag` is mix(tag, i), so sets with
 * different tags are disjoint in practice and every run uses the same keys. */
static uint64_t key_of(uint64_t tag, uint64_t i)
{
    return bk_mix64(tag * 0x9e3779b97f4a7c15ULL + i);
}

static void add_keys(bk_filter *filter, uint64_t tag, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++) {
        uint64_t key = key_of(tag, i);
        assert_int_equal(bk_filter_add(filter, &key, sizeof key, NULL), BK_OK);
    }
}

static uint64_t count_present(const bk_filter *filter, uint64_t tag, uint64_t from, uint64_t to)
{
    uint64_t present = 0;
    for (uint64_t i = from; i < to; i++) {
        uint64_t key = key_of(tag, i);
        present += bk_filter_contains(filter, &key, sizeof key);
    }
    return present;
}

/*
 * Checks a measured false-positive count against the formula.  Two sources
 * of spread: the binomial noise of `queries` Bernoulli trials, sd
 * sqrt(N p (1-p)); and the fill of this particular filter, which varies
 * around its mean with sd sqrt(m f (1-f))/m (bits are nearly independent),
 * moving p = f^k by k p sd_f / f.  The bound is 4 combined standard
 * deviations.
 */
static void assert_fpr_within_bound(uint64_t false_positives, uint64_t queries, uint64_t keys,
                                    uint64_t bits, unsigned hashes)
{
    double fill = bk_expected_fill(keys, bits, hashes);
    double p = bk_predicted_fpr(keys, bits, hashes);
    double n = (double)queries;
    double sd_binomial = sqrt(n * p * (1 - p));
    double sd_fill = sqrt((double)bits * fill * (1 - fill)) / (double)bits;
    double sd_from_fill = n * hashes * p * sd_fill / fill;
    double bound = 4 * sqrt(sd_binomial * sd_binomial + sd_from_fill * sd_from_fill);
    double expected = n * p;
    if (fabs((double)false_positives - expected) > bound)
        fail_msg("FPR %g measured, %g predicted (m=%llu k=%u n=%llu), bound +-%g",
                 (double)false_positives / n, p, (unsigned long long)bits, hashes,
                 (unsigned long long)keys, bound / n);
}

/* ------------------------------------------------------------------------ */
/* Basic behaviour                                                          */
/* ------------------------------------------------------------------------ */

static void test_add_reports_new_keys(void **state)
{
    (void)state;
    bk_params p = { .capacity = 1000, .fpr = 0.01 };
    bk_filter *f = make_filter(&p);
    bool was_new = false;
    assert_int_equal(bk_filter_add(f, "alice", 5, &was_new), BK_OK);
    assert_true(was_new);
    assert_true(bk_filter_contains(f, "alice", 5));
    assert_int_equal(bk_filter_add(f, "alice", 5, &was_new), BK_OK);
    assert_false(was_new); /* second request: every bit already set */
    assert_int_equal(stats_of(f).keys_added, 1);
    assert_false(bk_filter_contains(f, "bob", 3));
    /* the empty key is a key like any other */
    assert_int_equal(bk_filter_add(f, NULL, 0, &was_new), BK_OK);
    assert_true(was_new);
    assert_true(bk_filter_contains(f, "", 0));
    assert_int_equal(stats_of(f).keys_added, 2);
    bk_filter_free(f);
}

static void test_no_false_negatives_many_shapes(void **state)
{
    (void)state;
    /* m deliberately not a power of two, k from 1 to 16, several hashers. */
    const struct {
        uint64_t keys, bits;
        unsigned hashes;
    } shapes[] = {
        { 1, 1, 1 },        { 10, 7, 1 },          { 1000, 9973, 1 }, { 1000, 9973, 7 },
        { 5000, 33331, 3 }, { 20000, 191777, 13 }, { 777, 4099, 16 }, { 100000, 958506, 7 },
    };
    uint8_t secret[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1 };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        for (int algorithm = 0; algorithm < 3; algorithm++) {
            bk_params p = { .capacity = shapes[i].keys,
                            .bits = shapes[i].bits,
                            .hashes = shapes[i].hashes,
                            .hash_algorithm = (bk_hash_algorithm)algorithm,
                            .seed = algorithm == BK_HASH_SIPHASH ? 0 : i,
                            .secret_key = algorithm == BK_HASH_SIPHASH ? secret : NULL };
            bk_filter *f = make_filter(&p);
            add_keys(f, i, 0, shapes[i].keys);
            assert_int_equal(count_present(f, i, 0, shapes[i].keys), shapes[i].keys);
            bk_filter_free(f);
        }
    }
}

static void test_clear_and_copy(void **state)
{
    (void)state;
    bk_params p = { .capacity = 5000, .fpr = 0.01, .seed = 3 };
    bk_filter *f = make_filter(&p);
    add_keys(f, 1, 0, 5000);
    bk_filter *copy = NULL;
    assert_int_equal(bk_filter_copy(f, &copy), BK_OK);
    assert_memory_equal(words_of(copy), words_of(f), word_count_of(f) * 8);
    assert_int_equal(stats_of(copy).keys_added, stats_of(f).keys_added);
    assert_int_equal(bk_filter_clear(f), BK_OK);
    assert_int_equal(bits_set_of(f), 0);
    assert_int_equal(stats_of(f).keys_added, 0);
    assert_int_equal(count_present(f, 1, 0, 5000), 0);
    assert_int_equal(count_present(copy, 1, 0, 5000), 5000); /* independent */
    bk_filter_free(f);
    bk_filter_free(copy);
}

static void test_hash_forms_match_key_forms(void **state)
{
    (void)state;
    bk_params p = { .capacity = 1000, .fpr = 0.001, .seed = 77 };
    bk_filter *by_key = make_filter(&p), *by_hash = make_filter(&p);
    for (uint64_t i = 0; i < 1000; i++) {
        uint64_t key = key_of(5, i);
        bk_filter_add(by_key, &key, sizeof key, NULL);
        bk_hash h = bk_filter_hash(by_hash, &key, sizeof key);
        assert_int_equal(bk_filter_add_hash(by_hash, h, NULL), BK_OK);
        assert_true(bk_filter_contains_hash(by_key, h));
    }
    assert_memory_equal(words_of(by_key), words_of(by_hash), word_count_of(by_key) * 8);
    bk_filter_free(by_key);
    bk_filter_free(by_hash);
}

static void test_batches_match_single_calls(void **state)
{
    (void)state;
    enum { KEYS = 1000, QUERIES = 5003 };
    bk_params p = { .capacity = KEYS, .bits_per_key = 6 };
    bk_filter *single = make_filter(&p), *batch = make_filter(&p);
    static uint64_t values[QUERIES];
    static bk_key keys[QUERIES];
    static bk_hash hashes[QUERIES];
    static bool results[QUERIES], hash_results[QUERIES];
    for (size_t i = 0; i < QUERIES; i++) {
        values[i] = key_of(8, i);
        keys[i].data = &values[i];
        keys[i].len = sizeof values[i];
        hashes[i] = bk_filter_hash(batch, &values[i], sizeof values[i]);
    }
    size_t fresh = 0;
    assert_int_equal(bk_filter_add_batch(batch, keys, KEYS, &fresh), BK_OK);
    assert_int_equal(fresh, stats_of(batch).keys_added);
    add_keys(single, 8, 0, KEYS);
    assert_memory_equal(words_of(single), words_of(batch), word_count_of(batch) * 8);
    size_t present = bk_filter_contains_batch(batch, keys, QUERIES, results);
    size_t present_by_hash = bk_filter_contains_hash_batch(batch, hashes, QUERIES, hash_results);
    assert_int_equal(present, present_by_hash);
    size_t expected = 0;
    for (size_t i = 0; i < QUERIES; i++) {
        bool one = bk_filter_contains(single, &values[i], sizeof values[i]);
        assert_int_equal(results[i], one);
        assert_int_equal(hash_results[i], one);
        expected += one;
    }
    assert_int_equal(present, expected);
    assert_true(present >= KEYS);
    /* the hash batch insert gives the same bits */
    bk_filter *by_hash = make_filter(&p);
    assert_int_equal(bk_filter_add_hash_batch(by_hash, hashes, KEYS, NULL), BK_OK);
    assert_memory_equal(words_of(by_hash), words_of(batch), word_count_of(batch) * 8);
    bk_filter_free(single);
    bk_filter_free(batch);
    bk_filter_free(by_hash);
}

static void test_popcount_paths_agree(void **state)
{
    (void)state;
    uint64_t words[257];
    for (size_t i = 0; i < 257; i++)
        words[i] = bk_mix64(i) & bk_mix64(i + 1000);
    words[0] = 0;
    words[1] = UINT64_MAX;
    uint64_t expected = 0;
    for (size_t i = 0; i < 257; i++)
        for (int b = 0; b < 64; b++)
            expected += (words[i] >> b) & 1;
    assert_int_equal(bk_popcount_words_portable(words, 257), expected);
    assert_int_equal(bk_popcount_words(words, 257), expected);
    assert_int_equal(bk_popcount_words(words + 3, 5), bk_popcount_words_portable(words + 3, 5));
}

/* ------------------------------------------------------------------------ */
/* False-positive rate against the formula                                  */
/* ------------------------------------------------------------------------ */

static void measure_fpr(bk_hash_algorithm algorithm, double bits_per_key, uint64_t keys,
                        uint64_t queries)
{
    uint8_t secret[16] = { 0x42, 1, 2, 3 };
    bk_params p = { .capacity = keys,
                    .bits_per_key = bits_per_key,
                    .hash_algorithm = algorithm,
                    .secret_key = algorithm == BK_HASH_SIPHASH ? secret : NULL };
    bk_filter *f = make_filter(&p);
    add_keys(f, 100, 0, keys);
    uint64_t false_positives = count_present(f, 200, 0, queries);
    assert_fpr_within_bound(false_positives, queries, keys, stats_of(f).bits,
                            stats_of(f).hashes);
    bk_filter_free(f);
}

static void test_fpr_matches_formula_xxh3(void **state)
{
    (void)state;
    const double bits_per_key[] = { 4, 6, 8, 10, 12, 16 };
    for (size_t i = 0; i < sizeof bits_per_key / sizeof bits_per_key[0]; i++)
        measure_fpr(BK_HASH_XXH3, bits_per_key[i], 100000, 1000000);
}

static void test_fpr_matches_formula_siphash(void **state)
{
    (void)state;
    measure_fpr(BK_HASH_SIPHASH, 8, 50000, 500000);
    measure_fpr(BK_HASH_SIPHASH, 12, 50000, 500000);
}

static void test_fpr_with_k_one(void **state)
{
    (void)state;
    bk_params p = { .capacity = 20000, .bits = 100003, .hashes = 1 };
    bk_filter *f = make_filter(&p);
    add_keys(f, 300, 0, 20000);
    uint64_t false_positives = count_present(f, 301, 0, 200000);
    assert_fpr_within_bound(false_positives, 200000, 20000, 100003, 1);
    bk_filter_free(f);
}

/* ------------------------------------------------------------------------ */
/* Fill, estimates, design point                                            */
/* ------------------------------------------------------------------------ */

static void test_count_estimates_within_two_percent(void **state)
{
    (void)state;
    bk_params p = { .capacity = 100000, .fpr = 0.01 };
    bk_filter *f = make_filter(&p);
    uint64_t loaded = 0;
    const uint64_t loads[] = { 5000, 10000, 25000, 50000, 75000, 100000 };
    for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++) {
        add_keys(f, 400, loaded, loads[i]);
        loaded = loads[i];
        double estimate = stats_of(f).keys_estimated;
        assert_true(fabs(estimate - (double)loaded) / (double)loaded < 0.02);
        assert_false(stats_of(f).past_design_point);
        bk_stats s;
        bk_filter_stats(f, &s);
        assert_true(s.keys_estimated == estimate);
        assert_true(fabs(s.current_fpr - pow(s.fill_ratio, s.hashes)) < 1e-15);
        /* keys_added counts adds that flipped a bit: a key whose bits were
         * all set already (a false positive at the time) is not counted. */
        assert_true(s.keys_added <= loaded);
        double expected_missed = (double)loaded * s.current_fpr;
        assert_true((double)(loaded - s.keys_added) <=
                    expected_missed + 4 * sqrt(expected_missed) + 1);
    }
    bk_filter_free(f);
}

static void test_design_point_reported_past_capacity(void **state)
{
    (void)state;
    bk_params p = { .capacity = 50000, .fpr = 0.01 };
    bk_filter *f = make_filter(&p);
    add_keys(f, 500, 0, 50000);
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_false(s.past_design_point);
    assert_true(fabs(s.fill_ratio - s.design_fill_ratio) < 0.01); /* about half the bits */
    add_keys(f, 500, 50000, 60000);                               /* 20% past capacity */
    assert_true(stats_of(f).past_design_point);
    bk_filter_stats(f, &s);
    assert_true(s.past_design_point);
    assert_true(s.current_fpr > s.target_fpr);
    bk_filter_free(f);
}

static void test_small_filters_at_capacity_raise_no_alarm(void **state)
{
    (void)state;
    /* A filter exactly at capacity is at its design point, not past it.  The
     * threshold allows 3 standard deviations of the fill's noise, so the
     * one-sided false-alarm rate per filter is below 0.135% (the margin of
     * 5% more keys only lowers it): over 2000 filters of 67 keys, expect at
     * most 2.7, bound 2.7 + 4 sqrt(2.7). */
    const unsigned trials = 2000, capacity = 67;
    unsigned alarms = 0;
    for (unsigned t = 0; t < trials; t++) {
        bk_params p = { .capacity = capacity, .fpr = 0.01, .seed = t };
        bk_filter *f = make_filter(&p);
        add_keys(f, 2000 + t, 0, capacity);
        alarms += stats_of(f).past_design_point;
        bk_filter_free(f);
    }
    double expected = trials * 0.00135;
    assert_true(alarms <= expected + 4 * sqrt(expected));
}

/* ------------------------------------------------------------------------ */
/* Set algebra                                                              */
/* ------------------------------------------------------------------------ */

static void test_union_is_the_filter_of_the_union(void **state)
{
    (void)state;
    bk_params p = { .capacity = 20000, .fpr = 0.01, .seed = 11 };
    bk_filter *a = make_filter(&p), *b = make_filter(&p), *all = make_filter(&p);
    add_keys(a, 600, 0, 12000);
    add_keys(b, 600, 8000, 20000);
    add_keys(all, 600, 0, 20000);
    bk_filter *u = NULL;
    assert_int_equal(union_new(a, b, &u), BK_OK);
    assert_memory_equal(words_of(u), words_of(all), word_count_of(all) * 8);
    assert_int_equal(bk_filter_union(a, b), BK_OK); /* in place, same bits */
    assert_memory_equal(words_of(a), words_of(all), word_count_of(all) * 8);
    bk_filter_free(a);
    bk_filter_free(b);
    bk_filter_free(all);
    bk_filter_free(u);
}

static void test_intersection_contains_common_keys(void **state)
{
    (void)state;
    bk_params p = { .capacity = 20000, .fpr = 0.01 };
    bk_filter *a = make_filter(&p), *b = make_filter(&p);
    add_keys(a, 700, 0, 12000);
    add_keys(b, 700, 8000, 20000);
    bk_filter *both = NULL;
    assert_int_equal(intersection_new(a, b, &both), BK_OK);
    assert_int_equal(count_present(both, 700, 8000, 12000), 4000);
    /* keys in only one set mostly drop out */
    assert_true(count_present(both, 700, 0, 8000) < 8000 / 10);
    assert_int_equal(bk_filter_intersect(a, b), BK_OK);
    assert_memory_equal(words_of(a), words_of(both), word_count_of(a) * 8);
    bk_filter_free(a);
    bk_filter_free(b);
    bk_filter_free(both);
}

static void test_set_estimates(void **state)
{
    (void)state;
    bk_params p = { .capacity = 20000, .fpr = 0.01 };
    bk_filter *a = make_filter(&p), *b = make_filter(&p);
    add_keys(a, 800, 0, 12000);
    add_keys(b, 800, 8000, 20000);
    bk_set_estimate e;
    assert_int_equal(bk_filter_estimate_sets(a, b, &e), BK_OK);
    assert_true(fabs(e.a - 12000) < 240);
    assert_true(fabs(e.b - 12000) < 240);
    assert_true(fabs(e.union_size - 20000) < 400);
    assert_true(fabs(e.intersection_size - 4000) < 600);
    assert_true(fabs(e.jaccard - 0.2) < 0.03);
    bk_filter_free(a);
    bk_filter_free(b);
}

static void test_incompatible_filters_refused(void **state)
{
    (void)state;
    uint8_t secret_a[16] = { 1 }, secret_b[16] = { 2 };
    bk_params base = { .capacity = 1000, .bits = 10000, .hashes = 7 };
    bk_params other_bits = base, other_hashes = base, other_seed = base, other_algorithm = base,
              keyed_a = base, keyed_b = base;
    other_bits.bits = 10001;
    other_hashes.hashes = 6;
    other_seed.seed = 1;
    other_algorithm.hash_algorithm = BK_HASH_XXH64;
    keyed_a.hash_algorithm = keyed_b.hash_algorithm = BK_HASH_SIPHASH;
    keyed_a.secret_key = secret_a;
    keyed_b.secret_key = secret_b;
    const bk_params *others[] = { &other_bits, &other_hashes, &other_seed, &other_algorithm,
                                  &keyed_a };
    bk_filter *a = make_filter(&base);
    add_keys(a, 900, 0, 500);
    bk_filter *snapshot = NULL;
    assert_int_equal(bk_filter_copy(a, &snapshot), BK_OK);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        bk_filter *b = make_filter(others[i]);
        add_keys(b, 901, 0, 500);
        bk_filter *out = (bk_filter *)0x1;
        bk_set_estimate e;
        assert_int_equal(bk_filter_union(a, b), BK_EINCOMPATIBLE);
        assert_int_equal(bk_filter_intersect(a, b), BK_EINCOMPATIBLE);
        assert_int_equal(union_new(a, b, &out), BK_EINCOMPATIBLE);
        assert_int_equal(intersection_new(a, b, &out), BK_EINCOMPATIBLE);
        assert_int_equal(bk_filter_estimate_sets(a, b, &e), BK_EINCOMPATIBLE);
        assert_ptr_equal(out, (bk_filter *)0x1);
        bk_filter_free(b);
    }
    bk_filter *ka = make_filter(&keyed_a), *kb = make_filter(&keyed_b);
    assert_int_equal(bk_filter_union(ka, kb), BK_EINCOMPATIBLE); /* different secret keys */
    assert_memory_equal(words_of(a), words_of(snapshot), word_count_of(a) * 8);
    assert_int_equal(stats_of(a).keys_added, stats_of(snapshot).keys_added);
    bk_filter_free(ka);
    bk_filter_free(kb);
    bk_filter_free(a);
    bk_filter_free(snapshot);
}

/* ------------------------------------------------------------------------ */
/* Big filters and bad parameters                                           */
/* ------------------------------------------------------------------------ */

static void test_filter_of_two_to_the_36_bits(void **state)
{
    (void)state;
    /* An 8 GiB filter: big payloads are committed when they are allocated
     * (src/memory.c), so this needs 8 GiB of RAM and runs only when
     * BLOOMKIT_BIG_TESTS is set (.ci/run sets it; `make test` must fit in
     * 4 GiB). */
    const char *big_tests = getenv("BLOOMKIT_BIG_TESTS");
    if (big_tests == NULL || big_tests[0] == '\0' || strcmp(big_tests, "0") == 0)
        skip();
    const uint64_t m = (uint64_t)1 << 36;
    bk_params p = { .capacity = 1000, .bits = m, .hashes = 4 };
    bk_filter *f = NULL;
    bk_status status = bk_filter_create(BK_KIND_BLOOM, &p, &f);
    if (status == BK_ENOMEM)
        skip(); /* the machine cannot even reserve the address space */
    assert_int_equal(status, BK_OK);
    uint64_t highest = 0;
    for (uint64_t i = 0; i < 16; i++) {
        uint64_t key = key_of(1000, i);
        bk_filter_add(f, &key, sizeof key, NULL);
        bk_probe probe = bk_probe_start(bk_filter_hash(f, &key, sizeof key));
        for (unsigned j = 0; j < 4; j++) {
            uint64_t position = bk_probe_next(&probe, m);
            assert_true(position < m);
            /* each probe's bit is set in the word at position / 64, beyond 2^32 bits too */
            assert_true((words_of(f)[position >> 6] >> (position & 63)) & 1);
            if (position > highest)
                highest = position;
        }
    }
    assert_true(highest > ((uint64_t)1 << 35));
    assert_int_equal(count_present(f, 1000, 0, 16), 16);
    assert_int_equal(count_present(f, 1001, 0, 1000), 0); /* FPR ~ (64/2^36)^4 */
    bk_filter_free(f);
}

static void test_bad_parameters_rejected(void **state)
{
    (void)state;
    uint8_t secret[16] = { 0 };
    const struct {
        bk_params params;
        bk_status expected;
    } cases[] = {
        { { .capacity = 0, .fpr = 0.01 }, BK_EINVAL },
        { { .capacity = 100, .fpr = 1.0 }, BK_EINVAL },
        { { .capacity = 100, .fpr = -0.1 }, BK_EINVAL },
        { { .capacity = 100, .fpr = 1.5 }, BK_EINVAL },
        { { .capacity = 100, .fpr = NAN }, BK_EINVAL },
        { { .capacity = 100, .bits_per_key = NAN }, BK_EINVAL },
        { { .capacity = 100, .bits = 1000 }, BK_EINVAL },
        { { .capacity = 100, .hashes = 3 }, BK_EINVAL },
        { { .capacity = UINT64_MAX, .fpr = 0.01 }, BK_ERANGE },
        { { .capacity = 100, .bits = BK_MAX_BITS + 1, .hashes = 3 }, BK_ERANGE },
        { { .capacity = 100, .bits = 1000, .hashes = BK_MAX_HASHES + 1 }, BK_ERANGE },
        { { .capacity = 100, .fpr = 0.01, .flags = 0x80 }, BK_EINVAL },
        { { .capacity = 100, .fpr = 0.01, .hash_algorithm = (bk_hash_algorithm)9 }, BK_EINVAL },
        { { .capacity = 100, .fpr = 0.01, .hash_algorithm = BK_HASH_SIPHASH }, BK_EKEY },
        { { .capacity = 100, .fpr = 0.01, .secret_key = secret }, BK_EINVAL },
        /* 2^55 bits = 4 PiB: beyond any address space, so the allocation fails */
        { { .capacity = 100, .bits = (uint64_t)1 << 55, .hashes = 3 }, BK_ENOMEM },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bk_filter *f = (bk_filter *)0x1;
        bk_status status = bk_filter_create(BK_KIND_BLOOM, &cases[i].params, &f);
        if (status != cases[i].expected)
            fail_msg("case %zu: %s, expected %s", i, bk_strerror(status),
                     bk_strerror(cases[i].expected));
        assert_ptr_equal(f, (bk_filter *)0x1); /* untouched on error */
    }
    bk_params good = { .capacity = 100 };
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, NULL, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &good, NULL), BK_EINVAL);
    bk_filter *f = make_filter(&good);
    assert_int_equal(bk_filter_add(f, NULL, 3, NULL), BK_EINVAL);
    assert_false(bk_filter_contains(f, NULL, 3));
    assert_int_equal(bk_filter_add(NULL, "x", 1, NULL), BK_EINVAL);
    assert_false(bk_filter_contains(NULL, "x", 1));
    assert_int_equal(bk_filter_add_batch(f, NULL, 5, NULL), BK_EINVAL);
    bk_key bad_key = { NULL, 4 };
    assert_int_equal(bk_filter_add_batch(f, &bad_key, 1, NULL), BK_EINVAL);
    assert_int_equal(bits_set_of(f), 0); /* nothing was added by the failures */
    assert_int_equal(bk_filter_union(f, NULL), BK_EINVAL);
    bk_filter_free(f);
    bk_filter_free(NULL);
}

/* A filter over borrowed words (a mapped file's) is read-only: an internal
 * detail, so the object's own functions (src/bloom.h) and ops table. */
static void test_borrowed_words_are_read_only(void **state)
{
    (void)state;
    bk_sizing sizing;
    assert_int_equal(bk_size_for_fpr(100, 0.01, &sizing), BK_OK);
    bk_hasher hasher;
    bk_hasher_init(&hasher, BK_HASH_XXH3, 0, NULL);
    uint64_t words[32] = { 0 };
    bk_bloom *f = NULL;
    assert_int_equal(bk_bloom_create_from_sizing(&sizing, &hasher, 0, words, &f), BK_OK);
    assert_int_equal(bk_bloom_add(f, "a", 1, NULL), BK_EIMMUTABLE);
    assert_int_equal(bk_bloom_clear(f), BK_EIMMUTABLE);
    bk_bloom *copy = NULL;
    assert_int_equal(bk_bloom_copy(f, &copy), BK_OK); /* a copy is writable */
    assert_int_equal(bk_bloom_add(copy, "a", 1, NULL), BK_OK);
    assert_int_equal(bk_bloom_ops.union_with(f, copy), BK_EIMMUTABLE);
    bk_bloom_free(copy);
    bk_bloom_free(f); /* does not free the borrowed words */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_reports_new_keys),
        cmocka_unit_test(test_no_false_negatives_many_shapes),
        cmocka_unit_test(test_clear_and_copy),
        cmocka_unit_test(test_hash_forms_match_key_forms),
        cmocka_unit_test(test_batches_match_single_calls),
        cmocka_unit_test(test_popcount_paths_agree),
        cmocka_unit_test(test_fpr_matches_formula_xxh3),
        cmocka_unit_test(test_fpr_matches_formula_siphash),
        cmocka_unit_test(test_fpr_with_k_one),
        cmocka_unit_test(test_count_estimates_within_two_percent),
        cmocka_unit_test(test_design_point_reported_past_capacity),
        cmocka_unit_test(test_small_filters_at_capacity_raise_no_alarm),
        cmocka_unit_test(test_union_is_the_filter_of_the_union),
        cmocka_unit_test(test_intersection_contains_common_keys),
        cmocka_unit_test(test_set_estimates),
        cmocka_unit_test(test_incompatible_filters_refused),
        cmocka_unit_test(test_filter_of_two_to_the_36_bits),
        cmocka_unit_test(test_bad_parameters_rejected),
        cmocka_unit_test(test_borrowed_words_are_read_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
