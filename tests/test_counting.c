/*
 * tests/test_counting.c -- the counting Bloom filter (src/counting.c).
 *
 * Tests that hold for both layouts run twice: as registered (the default,
 * blocked layout) and again with the "(classic)" suffix, whose setup makes
 * make_filter create the classic layout (BK_FLAG_COUNTING_CLASSIC).
 *
 * Statistical bounds: a count of false positives among N absent queries is
 * Binomial(N, p); we accept |measured - p N| <= 4 sqrt(N p (1-p)) plus the
 * model error stated next to each test.
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
#include "bloomkit/hash_inline.h"
#include "filter.h"
#include "bloom.h" /* bk_bloom_* of the classic filter the counting one exports */
#include "counting_path.h"
#include "roundtrip.h"
#include "golden.h"

static size_t key_of(char *buffer, size_t size, const char *prefix, uint64_t i)
{
    return (size_t)snprintf(buffer, size, "%s%llu", prefix, (unsigned long long)i);
}

/* A deterministic generator for the random sequences (splitmix64). */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The creation flags of make_filter: 0 (blocked layout) or
 * BK_FLAG_COUNTING_CLASSIC, set by the classic variants' setup. */
static unsigned layout_flags;

static int use_classic(void **state)
{
    (void)state;
    layout_flags = BK_FLAG_COUNTING_CLASSIC;
    return 0;
}

static int use_blocked(void **state)
{
    (void)state;
    layout_flags = 0;
    return 0;
}

static bool classic_layout(void) { return layout_flags == BK_FLAG_COUNTING_CLASSIC; }

static bk_filter *make_filter(uint64_t capacity, double fpr)
{
    bk_params p = { .capacity = capacity, .fpr = fpr, .flags = layout_flags };
    bk_filter *f = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &p, &f), BK_OK);
    return f;
}

static bk_stats stats_of(const bk_filter *f)
{
    bk_stats s;
    bk_filter_stats(f, &s);
    return s;
}

static uint64_t counters_of(const bk_filter *f)
{
    return stats_of(f).bits / BK_COUNTING_COUNTER_BITS;
}
static unsigned hashes_of(const bk_filter *f) { return stats_of(f).hashes; }
static uint64_t keys_added_of(const bk_filter *f) { return stats_of(f).keys_added; }
static uint64_t saturated_of(const bk_filter *f) { return stats_of(f).saturated_counters; }

/* Non-zero counters: the fill times m (exact: both are integers below 2^53). */
static uint64_t nonzero_of(const bk_filter *f)
{
    bk_stats s = stats_of(f);
    return (uint64_t)llround(s.fill_ratio * (double)(s.bits / BK_COUNTING_COUNTER_BITS));
}

static unsigned counter_of(const bk_filter *f, uint64_t index)
{
    unsigned value = 99;
    assert_int_equal(bk_counting_counter(f, index, &value), BK_OK);
    return value;
}

/* The serialised filter: lets a test check that nothing changed. */
static uint8_t *payload_of(const bk_filter *f, uint64_t *size)
{
    size_t bytes_size;
    uint8_t *bytes = bk_rt_serialize(f, &bytes_size);
    *size = bytes_size;
    return bytes;
}

static void assert_unchanged(const bk_filter *f, const uint8_t *before, uint64_t size)
{
    uint64_t now_size;
    uint8_t *now = payload_of(f, &now_size);
    assert_int_equal(now_size, size);
    assert_memory_equal(now, before, size);
    free(now);
}

static void test_add_contains_remove_count(void **state)
{
    (void)state;
    bk_filter *f = make_filter(1000, 0.01);
    bool was_new = false;
    uint64_t count = 99;
    assert_false(bk_filter_contains(f, "alice", 5));
    assert_int_equal(bk_filter_count(f, "alice", 5, &count), BK_OK);
    assert_int_equal(count, 0);
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
    assert_int_equal(keys_added_of(f), 0);
    assert_int_equal(nonzero_of(f), 0);
    assert_int_equal(bk_filter_remove(f, "alice", 5), BK_ENOTFOUND);
    bk_filter_free(f);
}

static void test_remove_absent_changes_nothing(void **state)
{
    (void)state;
    bk_filter *f = make_filter(1000, 0.01);
    char key[32];
    for (int i = 0; i < 500; i++)
        assert_int_equal(bk_filter_add(f, key, key_of(key, sizeof key, "k", (uint64_t)i), NULL),
                         BK_OK);
    uint64_t size;
    uint8_t *before = payload_of(f, &size);
    int refused = 0;
    for (int i = 0; i < 1000; i++) {
        size_t len = key_of(key, sizeof key, "absent", (uint64_t)i);
        if (bk_filter_contains(f, key, len))
            continue; /* a false positive: removing it would change counters */
        assert_int_equal(bk_filter_remove(f, key, len), BK_ENOTFOUND);
        refused++;
    }
    assert_true(refused > 900);
    assert_unchanged(f, before, size);
    assert_int_equal(keys_added_of(f), 500);
    free(before);
    bk_filter_free(f);
}

/*
 * Interleaved random adds and removes over a pool of keys, checked against
 * the exact multiset: a key added more times than removed is always
 * present, its count is at least min(true count, 15), and a remove of a key
 * whose true count is zero never "succeeds" unless the key is a false
 * positive (we never issue those: remove is only for present keys).
 */
static void run_multiset_sequence(uint64_t capacity, double fpr, unsigned pool, unsigned steps,
                                  uint64_t seed, bool expect_saturation)
{
    bk_filter *f = make_filter(capacity, fpr);
    unsigned *truth = calloc(pool, sizeof *truth);
    assert_non_null(truth);
    char key[32];
    uint64_t rng = seed;
    for (unsigned step = 0; step < steps; step++) {
        unsigned which = (unsigned)(next_random(&rng) % pool);
        size_t len = key_of(key, sizeof key, "m", which);
        bool add = truth[which] == 0 || next_random(&rng) % 100 < 55;
        if (add) {
            assert_int_equal(bk_filter_add(f, key, len, NULL), BK_OK);
            truth[which]++;
        } else {
            assert_int_equal(bk_filter_remove(f, key, len), BK_OK);
            truth[which]--;
        }
        if (step % 97 == 0 || step == steps - 1) {
            for (unsigned i = 0; i < pool; i++) {
                if (truth[i] == 0)
                    continue;
                len = key_of(key, sizeof key, "m", i);
                assert_true(bk_filter_contains(f, key, len));
                uint64_t count;
                assert_int_equal(bk_filter_count(f, key, len, &count), BK_OK);
                unsigned floor_count = truth[i] < BK_COUNTING_MAX ? truth[i] : BK_COUNTING_MAX;
                assert_true(count >= floor_count);
            }
        }
    }
    if (expect_saturation)
        assert_true(saturated_of(f) > 0);
    free(truth);
    bk_filter_free(f);
}

static void test_random_multiset_no_false_negatives(void **state)
{
    (void)state;
    run_multiset_sequence(2000, 0.01, 1500, 20000, 1, false);
}

/* The blocked layout at twice its capacity (counters shared by many keys
 * of a line), three more seeds. */
static void test_random_multiset_more_seeds(void **state)
{
    (void)state;
    for (uint64_t seed = 11; seed <= 13; seed++)
        run_multiset_sequence(500, 0.02, 1000, 15000, seed, false);
}

static void test_random_multiset_with_saturation(void **state)
{
    (void)state;
    /* A tiny pool on a small filter: keys reach 20+ copies and saturate
     * counters; removes still never create a false negative. */
    run_multiset_sequence(64, 0.05, 40, 6000, 7, true);
}

static void test_saturation_sticks(void **state)
{
    (void)state;
    bk_filter *f = make_filter(1000, 0.01);
    unsigned k = hashes_of(f);
    for (int i = 0; i < 20; i++)
        assert_int_equal(bk_filter_add(f, "hot", 3, NULL), BK_OK);
    uint64_t count;
    assert_int_equal(bk_filter_count(f, "hot", 3, &count), BK_OK);
    assert_int_equal(count, BK_COUNTING_MAX);
    /* Every probe of "hot" sits on a saturated counter (k distinct ones
     * unless two probes coincide). */
    uint64_t saturated = saturated_of(f);
    assert_true(saturated >= 1 && saturated <= k);
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_int_equal(s.saturated_counters, saturated);
    for (int i = 0; i < 20; i++)
        assert_int_equal(bk_filter_remove(f, "hot", 3), BK_OK);
    /* Saturated counters were never decremented: the key still looks present. */
    assert_true(bk_filter_contains(f, "hot", 3));
    assert_int_equal(saturated_of(f), saturated);
    assert_int_equal(bk_filter_count(f, "hot", 3, &count), BK_OK);
    assert_int_equal(count, BK_COUNTING_MAX);
    bk_filter_free(f);
}

/*
 * The deletion demonstration: insert in0..in99, remove in7, then remove a
 * false positive and watch keys that were added and never removed vanish.
 * Same parameters as examples/counting_delete.c.
 */
static void test_false_positive_removal_creates_false_negatives(void **state)
{
    (void)state;
    bk_filter *f = make_filter(100, 0.05);
    char key[32];
    for (uint64_t i = 0; i < 100; i++)
        assert_int_equal(bk_filter_add(f, key, key_of(key, sizeof key, "in", i), NULL), BK_OK);
    assert_int_equal(bk_filter_remove(f, "in7", 3), BK_OK);
    bool before[100];
    for (uint64_t i = 0; i < 100; i++)
        before[i] = bk_filter_contains(f, key, key_of(key, sizeof key, "in", i));
    for (uint64_t i = 0; i < 100; i++)
        assert_true(i == 7 || before[i]); /* no false negatives yet */
    uint64_t fp = 0;
    size_t len = 0;
    for (;; fp++) {
        len = key_of(key, sizeof key, "out", fp);
        if (bk_filter_contains(f, key, len))
            break;
        assert_true(fp < 100000);
    }
    /* The filter cannot tell: remove succeeds. */
    assert_int_equal(bk_filter_remove(f, key, len), BK_OK);
    int lost = 0;
    for (uint64_t i = 0; i < 100; i++) {
        bool now = bk_filter_contains(f, key, key_of(key, sizeof key, "in", i));
        lost += before[i] && !now;
    }
    assert_true(lost > 0);
    bk_filter_free(f);
}

/* m = 3 counters and k = 5 probes (classic layout): every key repeats
 * positions.  A remove must never take a counter below zero (which would
 * wrap the nibble to 15 and raise the total), and add-then-remove must
 * restore every counter. */
static void test_repeated_probes_never_underflow(void **state)
{
    (void)state;
    bk_params p = { .capacity = 1, .bits = 3, .hashes = 5, .flags = BK_FLAG_COUNTING_CLASSIC };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &p, &f), BK_OK);
    assert_int_equal(bk_filter_add(f, "a", 1, NULL), BK_OK);
    unsigned total = 0;
    for (uint64_t i = 0; i < 3; i++)
        total += counter_of(f, i);
    assert_int_equal(total, 5);
    assert_int_equal(bk_filter_remove(f, "a", 1), BK_OK);
    for (uint64_t i = 0; i < 3; i++)
        assert_int_equal(counter_of(f, i), 0);

    assert_int_equal(bk_filter_add(f, "a", 1, NULL), BK_OK);
    char key[32];
    int refused = 0, undone = 0;
    for (uint64_t i = 0; i < 200; i++) {
        unsigned before = 0, after = 0;
        for (uint64_t c = 0; c < 3; c++)
            before += counter_of(f, c);
        size_t len = key_of(key, sizeof key, "x", i);
        bool looks_present = bk_filter_contains(f, key, len);
        bk_status status = bk_filter_remove(f, key, len);
        assert_true(status == BK_OK || status == BK_ENOTFOUND);
        refused += status == BK_ENOTFOUND;
        undone += status == BK_ENOTFOUND && looks_present; /* a repeat ran a counter out */
        for (uint64_t c = 0; c < 3; c++)
            after += counter_of(f, c);
        assert_int_equal(after, status == BK_OK ? before - 5 : before);
        if (after == 0)
            assert_int_equal(bk_filter_add(f, "a", 1, NULL), BK_OK);
    }
    assert_true(refused > 0);
    assert_true(undone > 0);
    bk_filter_free(f);
}

/* One line (128 counters) and k = 40 probes (blocked layout): keys repeat
 * counters, an add raises the line's total by exactly k and its remove
 * restores every counter. */
static void test_repeated_line_counters(void **state)
{
    (void)state;
    bk_params p = { .capacity = 1, .bits = 100, .hashes = 40 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &p, &f), BK_OK);
    assert_int_equal(counters_of(f), 128); /* rounded up to one line */
    char key[32];
    unsigned repeated = 0; /* keys with a repeated counter: P(none) = 0.2% per key */
    for (uint64_t i = 0; i < 50; i++) {
        size_t len = key_of(key, sizeof key, "r", i);
        assert_int_equal(bk_filter_add(f, key, len, NULL), BK_OK);
        unsigned total = 0, distinct = 0;
        for (uint64_t c = 0; c < 128; c++) {
            total += counter_of(f, c);
            distinct += counter_of(f, c) != 0;
        }
        assert_int_equal(total, 40);
        repeated += distinct < 40;
        assert_int_equal(bk_filter_remove(f, key, len), BK_OK);
        for (uint64_t c = 0; c < 128; c++)
            assert_int_equal(counter_of(f, c), 0);
    }
    assert_true(repeated > 40);
    bk_filter_free(f);
}

/* Every query of `converted` answers as `f` does, one key per call and in
 * a batch: the added keys and 45,000 others. */
static void assert_same_answers(const bk_filter *f, const bk_filter *converted,
                                const char *prefix, uint64_t added)
{
    enum { QUERIES = 50000 };
    static char storage[QUERIES][24];
    static bk_key keys[QUERIES];
    static bool batch[QUERIES];
    uint64_t positives = 0;
    for (uint64_t i = 0; i < QUERIES; i++) {
        keys[i].len = key_of(storage[i], sizeof storage[i], i < added ? prefix : "q", i);
        keys[i].data = storage[i];
        bool answer = bk_filter_contains(f, keys[i].data, keys[i].len);
        assert_int_equal(bk_filter_contains(converted, keys[i].data, keys[i].len), answer);
        positives += answer;
    }
    assert_int_equal(bk_filter_contains_batch(converted, keys, QUERIES, batch), positives);
    for (uint64_t i = 0; i < QUERIES; i++)
        assert_int_equal(batch[i], bk_filter_contains(f, keys[i].data, keys[i].len));
}

static void test_to_bloom_answers_identically(void **state)
{
    (void)state;
    bk_filter *f = make_filter(5000, 0.01);
    char key[32];
    for (uint64_t i = 0; i < 5000; i++)
        bk_filter_add(f, key, key_of(key, sizeof key, "b", i), NULL);
    for (uint64_t i = 0; i < 1000; i++)
        bk_filter_remove(f, key, key_of(key, sizeof key, "b", i * 5));
    bk_filter *b = NULL;
    assert_int_equal(bk_counting_to_bloom(f, &b), BK_OK);
    bk_stats bs = stats_of(b);
    assert_int_equal(bs.hashes, hashes_of(f));
    assert_int_equal(bs.keys_added, keys_added_of(f));
    assert_int_equal(bs.capacity, 5000);
    assert_true(bs.target_fpr == stats_of(f).target_fpr);
    if (classic_layout()) {
        /* bit i = counter i > 0: a quarter of the memory */
        assert_int_equal(bk_filter_kind(b), BK_KIND_BLOOM);
        assert_int_equal(bs.bits, counters_of(f));
        assert_int_equal((uint64_t)llround(bs.fill_ratio * (double)bs.bits), nonzero_of(f));
        assert_true(bs.keys_estimated == stats_of(f).keys_estimated);
    } else {
        /* four bits per counter: the same memory, four bits per non-zero one */
        assert_int_equal(bk_filter_kind(b), BK_KIND_BLOCKED);
        assert_int_equal(bs.bits, 4 * counters_of(f));
        assert_int_equal(bs.bytes, stats_of(f).bytes);
        assert_int_equal((uint64_t)llround(bs.fill_ratio * (double)bs.bits), 4 * nonzero_of(f));
    }
    assert_same_answers(f, b, "b", 5000);
    bk_filter_free(b);
    bk_filter_free(f);
}

/* The blocked layout's conversion for k within one hash word and beyond
 * (k > 7 takes more words of the walk), for each hash algorithm. */
static void test_to_blocked_every_walk(void **state)
{
    (void)state;
    static const uint8_t secret[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6 };
    const bk_params cases[] = {
        { .capacity = 3000, .fpr = 0.1, .seed = 11 },                        /* k = 3 */
        { .capacity = 3000, .fpr = 0.001, .hash_algorithm = BK_HASH_XXH64 }, /* k = 8 */
        { .capacity = 3000,
          .bits = 30000,
          .hashes = 17,
          .hash_algorithm = BK_HASH_SIPHASH,
          .secret_key = secret },
    };
    char key[32];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bk_filter *f;
        assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &cases[c], &f), BK_OK);
        for (uint64_t i = 0; i < 3000; i++)
            bk_filter_add(f, key, key_of(key, sizeof key, "w", i), NULL);
        bk_filter *b = NULL;
        assert_int_equal(bk_counting_to_bloom(f, &b), BK_OK);
        assert_int_equal(bk_filter_kind(b), BK_KIND_BLOCKED);
        assert_int_equal(hashes_of(b), hashes_of(f));
        assert_int_equal(bk_filter_hasher(b)->algorithm, cases[c].hash_algorithm);
        assert_same_answers(f, b, "w", 3000);
        bk_filter_free(b);
        bk_filter_free(f);
    }
}

static void test_union_saturating_add(void **state)
{
    (void)state;
    bk_filter *a = make_filter(1000, 0.01);
    bk_filter *b = make_filter(1000, 0.01);
    for (int i = 0; i < 10; i++) {
        bk_filter_add(a, "x", 1, NULL);
        bk_filter_add(b, "x", 1, NULL);
    }
    bk_filter_add(b, "y", 1, NULL);
    assert_int_equal(bk_filter_union(a, b), BK_OK);
    uint64_t count;
    bk_filter_count(a, "x", 1, &count);
    assert_int_equal(count, BK_COUNTING_MAX); /* 10 + 10 saturates */
    bk_filter_count(a, "y", 1, &count);
    assert_true(count >= 1);
    assert_int_equal(keys_added_of(a), 21);
    for (uint64_t i = 0; i < counters_of(a); i++)
        assert_true(counter_of(a, i) >= counter_of(b, i));

    bk_filter *other_size = make_filter(2000, 0.01);
    bk_params seeded = { .capacity = 1000, .fpr = 0.01, .seed = 5 };
    bk_filter *other_seed;
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &seeded, &other_seed), BK_OK);
    uint64_t size;
    uint8_t *before = payload_of(a, &size);
    bk_params other_layout_params = { .capacity = 1000,
                                      .fpr = 0.01,
                                      .flags = layout_flags ^ BK_FLAG_COUNTING_CLASSIC };
    bk_filter *other_layout;
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &other_layout_params, &other_layout),
                     BK_OK);
    assert_int_equal(bk_filter_union(a, other_size), BK_EINCOMPATIBLE);
    assert_int_equal(bk_filter_union(a, other_seed), BK_EINCOMPATIBLE);
    assert_int_equal(bk_filter_union(a, other_layout), BK_EINCOMPATIBLE);
    bk_filter_free(other_layout);
    assert_int_equal(bk_filter_union(a, NULL), BK_EINVAL);
    assert_unchanged(a, before, size);
    free(before);
    bk_filter_free(other_seed);
    bk_filter_free(other_size);
    bk_filter_free(b);
    bk_filter_free(a);
}

/*
 * FPR and the fill estimates against the classic formulas.  Given the fill
 * X/m, an absent key is a false positive with probability (X/m)^k when its
 * k probes are distinct; probes coincide with probability < k^2/m, which is
 * the model error allowed beyond 4 sigma.
 */
static void test_fpr_and_estimates(void **state)
{
    (void)state;
    const uint64_t n = 20000, queries = 200000;
    use_classic(NULL);
    bk_filter *f = make_filter(n, 0.01);
    use_blocked(NULL);
    char key[32];
    for (uint64_t i = 0; i < n; i++)
        bk_filter_add(f, key, key_of(key, sizeof key, "user:", i), NULL);
    uint64_t positives = 0;
    for (uint64_t i = 0; i < queries; i++)
        positives += bk_filter_contains(f, key, key_of(key, sizeof key, "guest:", i));
    double m = (double)counters_of(f), k = hashes_of(f);
    double p = stats_of(f).current_fpr;
    double sigma = sqrt((double)queries * p * (1 - p));
    double model = (double)queries * p * k * k / m;
    printf("counting: m=%.0f k=%.0f measured FPR %.6f predicted %.6f (design %.6f)\n", m, k,
           (double)positives / (double)queries, p, stats_of(f).target_fpr);
    assert_true(fabs((double)positives - p * (double)queries) <= 4 * sigma + model);

    /* Swamidass & Baldi: Var(n estimate) ~ m (e^x - 1 - x) / k^2, x = kn/m. */
    double x = k * (double)n / m;
    double estimate_sigma = sqrt(m * (exp(x) - 1 - x)) / k;
    assert_true(fabs(stats_of(f).keys_estimated - (double)n) <= 4 * estimate_sigma);
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_int_equal(s.kind, BK_KIND_COUNTING);
    assert_int_equal(s.bits, counters_of(f) * 4);
    assert_int_equal(s.bytes, (counters_of(f) + 1) / 2);
    assert_int_equal(s.keys_added, n);
    assert_int_equal(s.saturated_counters, 0);
    assert_true(s.keys_estimated == stats_of(f).keys_estimated);
    assert_false(s.past_design_point);
    bk_filter_free(f);
}

/*
 * The blocked layout's FPR against its model (src/sizing.c,
 * bk_blocked_predicted_fpr with 128-counter lines): the design FPR at
 * capacity, and the FPR estimated from the fill.  The count of false
 * positives is Binomial(N, p) given the filter; one filter's line loads add
 * a spread of their own around the model's mean, about 2% of p for 1,696
 * lines (the Poisson line loads' effect, measured over seeds), allowed as
 * 4 times that on top of 4 binomial sigmas.
 */
static void test_blocked_fpr_matches_model(void **state)
{
    (void)state;
    const uint64_t n = 20000, queries = 400000;
    bk_filter *f = make_filter(n, 0.01);
    bk_counting_layout layout;
    assert_int_equal(bk_counting_layout_of(f, &layout), BK_OK);
    assert_int_equal(layout, BK_COUNTING_BLOCKED);
    char key[32];
    for (uint64_t i = 0; i < n; i++)
        bk_filter_add(f, key, key_of(key, sizeof key, "user:", i), NULL);
    for (uint64_t i = 0; i < n; i++)
        assert_true(bk_filter_contains(f, key, key_of(key, sizeof key, "user:", i)));
    uint64_t positives = 0;
    for (uint64_t i = 0; i < queries; i++)
        positives += bk_filter_contains(f, key, key_of(key, sizeof key, "guest:", i));
    bk_stats s = stats_of(f);
    double p = s.target_fpr;
    double sigma = sqrt((double)queries * p * (1 - p));
    printf("counting (blocked): m=%llu k=%u measured FPR %.6f design %.6f from fill %.6f\n",
           (unsigned long long)counters_of(f), s.hashes, (double)positives / (double)queries, p,
           s.current_fpr);
    assert_int_equal(counters_of(f) % 128, 0);
    assert_true(p <= 0.01 && p > 0.0099);
    assert_true(fabs((double)positives - p * (double)queries) <=
                4 * sigma + 0.08 * p * (double)queries);
    assert_true(fabs(s.current_fpr - p) <= 0.08 * p);
    assert_true(fabs(s.keys_estimated - (double)n) <= 0.02 * (double)n);
    assert_false(s.past_design_point);
    assert_int_equal(s.bytes, counters_of(f) / 2);
    bk_filter_free(f);
}

static void test_batch_matches_single(void **state)
{
    (void)state;
    bk_filter *single = make_filter(3000, 0.02);
    bk_filter *batched = make_filter(3000, 0.02);
    enum { N = 3000 };
    static char storage[N][16];
    static bk_key keys[N];
    for (int i = 0; i < N; i++) {
        keys[i].len = key_of(storage[i], sizeof storage[i], "z", (uint64_t)(i % 2500));
        keys[i].data = storage[i];
        bk_filter_add(single, keys[i].data, keys[i].len, NULL);
    }
    size_t fresh = 0;
    assert_int_equal(bk_filter_add_batch(batched, keys, N, &fresh), BK_OK);
    assert_true(fresh <= 2500 && fresh > 2400);
    uint64_t s1, s2;
    uint8_t *p1 = payload_of(single, &s1);
    uint8_t *p2 = payload_of(batched, &s2);
    assert_memory_equal(p1, p2, s1);
    free(p1);
    free(p2);
    static bool results[N];
    for (int i = 0; i < N; i++)
        keys[i].len = key_of(storage[i], sizeof storage[i], i % 2 ? "z" : "w", (uint64_t)i);
    size_t present = bk_filter_contains_batch(batched, keys, N, results);
    size_t expected = 0;
    for (int i = 0; i < N; i++) {
        assert_int_equal(results[i], bk_filter_contains(batched, keys[i].data, keys[i].len));
        expected += results[i];
    }
    assert_int_equal(present, expected);
    bk_filter_free(single);
    bk_filter_free(batched);
}

/* A blocked filter of `lines` lines and k probes holding `keys` random
 * hashes (seeded), for the path tests. */
static bk_filter *filled_filter(uint64_t lines, unsigned k, unsigned keys, uint64_t seed)
{
    bk_params p = { .capacity = keys,
                    .bits = lines * 128 * BK_COUNTING_COUNTER_BITS,
                    .hashes = k };
    bk_filter *f = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &p, &f), BK_OK);
    for (unsigned i = 0; i < keys; i++) {
        bk_hash hash = { next_random(&seed), next_random(&seed) };
        assert_int_equal(bk_filter_add_hash(f, hash, NULL), BK_OK);
    }
    return f;
}

/* The queries of every path, one key per call and in a batch, against the
 * portable one-key answers in `expected`; returns how many SIMD paths ran. */
static unsigned check_paths(bk_filter *f, const bk_hash *hashes, const bool *expected,
                            size_t count)
{
    static bool results[20000];
    unsigned simd_paths_run = 0;
    for (int path = BK_COUNTING_PATH_PORTABLE; path <= BK_COUNTING_PATH_AVX512; path++) {
        if (bk_counting_set_path(f, (bk_counting_path)path) != BK_OK)
            continue;
        simd_paths_run += path != BK_COUNTING_PATH_PORTABLE;
        size_t present = bk_filter_contains_hash_batch(f, hashes, count, results);
        size_t expected_present = 0;
        for (size_t i = 0; i < count; i++) {
            assert_int_equal(bk_filter_contains_hash(f, hashes[i]), expected[i]);
            assert_int_equal(results[i], expected[i]);
            expected_present += expected[i];
        }
        assert_int_equal(present, expected_present);
    }
    return simd_paths_run;
}

/* The AVX2 and AVX-512 queries (one key per call and batched) answer
 * exactly as the portable one-key query: k from 1 to 16 (one to three
 * rounds of seven positions), lines from nearly empty to saturated
 * counters, 20,000 queries each, half of them added keys (which every path
 * must find), half random. */
static void test_simd_paths_match_portable(void **state)
{
    (void)state;
    enum { QUERIES = 20000 };
    static const unsigned fills[] = { 40, 400, 4000 }; /* keys in 16 lines */
    static bk_hash hashes[QUERIES];
    static bool expected[QUERIES];
    unsigned simd_paths_run = 0;
    for (unsigned k = 1; k <= 16; k++) {
        for (size_t fill = 0; fill < sizeof fills / sizeof fills[0]; fill++) {
            bk_filter *f = filled_filter(16, k, fills[fill], 1000 + k);
            assert_int_equal(bk_counting_set_path(f, BK_COUNTING_PATH_PORTABLE), BK_OK);
            uint64_t present_seed = 1000 + k, absent_seed = 7000 + k;
            unsigned positives = 0;
            for (unsigned q = 0; q < QUERIES; q++) {
                bool added = q % 2 == 0 && q / 2 < fills[fill];
                uint64_t *seed = added ? &present_seed : &absent_seed;
                hashes[q].h1 = next_random(seed);
                hashes[q].h2 = next_random(seed);
                expected[q] = bk_filter_contains_hash(f, hashes[q]);
                positives += expected[q];
                if (added)
                    assert_true(expected[q]);
            }
            /* Both answers occur, except on the saturated lines. */
            assert_true(positives > 0);
            if (fills[fill] < 4000)
                assert_true(positives < QUERIES);
            simd_paths_run += check_paths(f, hashes, expected, QUERIES);
            bk_filter_free(f);
        }
    }
    if (simd_paths_run == 0)
        print_message("no SIMD path on this CPU: only the portable one ran\n");
}

/* The filter of test_simd_adds_match_portable on `path` (false when this
 * CPU has not got it): 16 lines, k probes, hashing with `algorithm`. */
static bool path_filter(unsigned k, bk_hash_algorithm algorithm, bk_counting_path path,
                        bk_filter **out)
{
    bk_params p = { .capacity = 1000,
                    .bits = 16 * 128 * BK_COUNTING_COUNTER_BITS,
                    .hashes = k,
                    .hash_algorithm = algorithm };
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &p, out), BK_OK);
    if (bk_counting_set_path(*out, path) == BK_OK)
        return true;
    bk_filter_free(*out);
    return false;
}

/* Key i of test_simd_adds_match_portable (keys repeat: DISTINCT of them). */
static uint64_t path_key(unsigned i, unsigned distinct)
{
    uint64_t seed = 77 + i % distinct;
    return next_random(&seed);
}

/* One add of `key` to f in form 0 (from its hash), 1 (integer key) or 2
 * (its 8 little-endian bytes). */
static bk_status add_in_form(bk_filter *f, int form, uint64_t key, bool *was_new)
{
    uint8_t bytes[8];
    for (unsigned b = 0; b < 8; b++)
        bytes[b] = (uint8_t)(key >> (8 * b));
    if (form == 0)
        return bk_filter_add_hash(f, bk_hash_u64(bk_filter_hasher(f), key), was_new);
    return form == 1 ? bk_filter_add_u64(f, key, was_new)
                     : bk_filter_add(f, bytes, sizeof bytes, was_new);
}

/* The AVX2 and AVX-512 adds (the whole line at once) leave exactly the
 * portable add's counters and say the same was_new, one key per call from
 * a hash, from an integer key and from its 8 bytes (the hash inlined, for
 * MIX64 and XXH3), k from 1 to 16 (16: the portable add on every path),
 * from empty lines to saturated counters: keys repeat, and 16 lines of 128
 * counters take 4,000 adds of up to 16 probes.  Every path's integer-key
 * and 8-byte-key queries then agree with the portable query of the key's
 * hash. */
static void test_simd_adds_match_portable(void **state)
{
    (void)state;
    enum { ADDS = 4000, DISTINCT = 1500 };
    static const bk_hash_algorithm algorithms[] = { BK_HASH_MIX64, BK_HASH_XXH3 };
    unsigned simd_paths_run = 0;
    for (unsigned k = 1; k <= 16; k++) {
        for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; a++) {
            bk_filter *reference;
            assert_true(path_filter(k, algorithms[a], BK_COUNTING_PATH_PORTABLE, &reference));
            static bool reference_new[ADDS];
            for (unsigned i = 0; i < ADDS; i++)
                assert_int_equal(
                    add_in_form(reference, 0, path_key(i, DISTINCT), &reference_new[i]), BK_OK);
            uint64_t reference_size;
            uint8_t *reference_bytes = payload_of(reference, &reference_size);
            bk_stats stats;
            bk_filter_stats(reference, &stats);
            if (k >= 4)
                assert_true(stats.saturated_counters > 0);
            for (int path = BK_COUNTING_PATH_PORTABLE; path <= BK_COUNTING_PATH_AVX512; path++) {
                for (int form = 0; form <= 2; form++) {
                    bk_filter *f;
                    if (!path_filter(k, algorithms[a], (bk_counting_path)path, &f))
                        continue;
                    simd_paths_run += path != BK_COUNTING_PATH_PORTABLE;
                    for (unsigned i = 0; i < ADDS; i++) {
                        bool fresh = !reference_new[i];
                        bool *asked = i % 3 == 2 ? NULL : &fresh; /* every third: not asked */
                        assert_int_equal(add_in_form(f, form, path_key(i, DISTINCT), asked),
                                         BK_OK);
                        if (asked != NULL)
                            assert_int_equal(fresh, reference_new[i]);
                    }
                    assert_unchanged(f, reference_bytes, reference_size);
                    for (unsigned q = 0; q < 2 * DISTINCT; q++) {
                        uint64_t key = path_key(q, 2 * DISTINCT);
                        uint8_t bytes[8];
                        for (unsigned b = 0; b < 8; b++)
                            bytes[b] = (uint8_t)(key >> (8 * b));
                        bk_hash hash = bk_hash_u64(bk_filter_hasher(reference), key);
                        bk_hash of_bytes = bk_filter_hash(reference, bytes, sizeof bytes);
                        assert_true(hash.h1 == of_bytes.h1 && hash.h2 == of_bytes.h2);
                        bool expected = bk_filter_contains_hash(reference, hash);
                        assert_int_equal(bk_filter_contains_u64(f, key), expected);
                        assert_int_equal(bk_filter_contains(f, bytes, sizeof bytes), expected);
                    }
                    bk_filter_free(f);
                }
            }
            free(reference_bytes);
            bk_filter_free(reference);
        }
    }
    if (simd_paths_run == 0)
        print_message("no SIMD path on this CPU: only the portable one ran\n");
}

/* bk_counting_set_path's refusals. */
static void test_set_path_errors(void **state)
{
    (void)state;
    assert_int_equal(bk_counting_set_path(NULL, BK_COUNTING_PATH_PORTABLE), BK_EINVAL);
    bk_params p = { .capacity = 100, .fpr = 0.01 };
    bk_filter *bloom = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &p, &bloom), BK_OK);
    assert_int_equal(bk_counting_set_path(bloom, BK_COUNTING_PATH_PORTABLE), BK_EKIND);
    bk_filter_free(bloom);
    bk_filter *f = make_filter(100, 0.01);
    assert_int_equal(bk_counting_set_path(f, (bk_counting_path)99), BK_EUNSUPPORTED);
    assert_int_equal(bk_counting_set_path(f, BK_COUNTING_PATH_PORTABLE), BK_OK);
    bk_filter_free(f);
}

static void test_bad_input(void **state)
{
    (void)state;
    bk_filter *f = NULL;
    bk_params zero = { .capacity = 0 };
    bk_params bad_fpr = { .capacity = 10, .fpr = 1.5 };
    bk_params concurrent = { .capacity = 10, .flags = BK_FLAG_CONCURRENT };
    bk_params unknown_flag = { .capacity = 10, .flags = 0x80 };
    bk_params huge = { .capacity = 10, .bits = BK_MAX_BITS, .hashes = 3 };
    bk_params siphash_no_key = { .capacity = 10, .hash_algorithm = BK_HASH_SIPHASH };
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, NULL, &f), BK_EINVAL);
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &zero, &f), BK_EINVAL);
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &bad_fpr, &f), BK_EINVAL);
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &concurrent, &f), BK_EUNSUPPORTED);
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &unknown_flag, &f), BK_EINVAL);
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &huge, &f), BK_ERANGE);
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &siphash_no_key, &f), BK_EKEY);
    assert_null(f);

    f = make_filter(100, 0.01);
    uint64_t count;
    assert_int_equal(bk_filter_add(NULL, "a", 1, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_add(f, NULL, 3, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_remove(f, NULL, 3), BK_EINVAL);
    assert_int_equal(bk_filter_remove(NULL, "a", 1), BK_EINVAL);
    assert_int_equal(bk_filter_count(f, "a", 1, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_count(NULL, "a", 1, &count), BK_EINVAL);
    assert_false(bk_filter_contains(f, NULL, 3));
    assert_false(bk_filter_contains(NULL, "a", 1));
    assert_int_equal(bk_filter_add_batch(f, NULL, 3, NULL), BK_EINVAL);
    assert_int_equal(bk_counting_to_bloom(f, NULL), BK_EINVAL);
    assert_int_equal(keys_added_of(f), 0);
    assert_int_equal(nonzero_of(f), 0);
    unsigned value = 7;
    assert_int_equal(bk_counting_counter(f, counters_of(f), &value), BK_ERANGE);
    assert_int_equal(bk_counting_counter(f, 0, NULL), BK_EINVAL);
    assert_int_equal(bk_counting_counter(NULL, 0, &value), BK_EINVAL);
    assert_int_equal(value, 7);
    bk_filter *bloom;
    bk_params classic = { .capacity = 100 };
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &classic, &bloom), BK_OK);
    assert_int_equal(bk_counting_counter(bloom, 0, &value), BK_EKIND);
    bk_filter *converted = NULL;
    assert_int_equal(bk_counting_to_bloom(bloom, &converted), BK_EKIND);
    assert_null(converted);
    bk_filter_free(bloom);
    /* The empty key is a key like any other. */
    assert_int_equal(bk_filter_add(f, NULL, 0, NULL), BK_OK);
    assert_true(bk_filter_contains(f, "", 0));
    assert_int_equal(bk_filter_clear(f), BK_OK);
    assert_false(bk_filter_contains(f, "", 0));
    bk_filter_free(f);
    bk_filter_free(NULL);
}

static void test_filter_handle(void **state)
{
    (void)state;
    bk_params p = { .capacity = 1000, .fpr = 0.01, .flags = layout_flags };
    bk_kind kind;
    assert_int_equal(bk_kind_from_name("counting", &kind), BK_OK);
    assert_int_equal(kind, BK_KIND_COUNTING);
    assert_true(bk_kind_available(BK_KIND_COUNTING));
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &p, &f), BK_OK);
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
    assert_false(bk_filter_contains(f, "k", 1));

    bk_stats made, designed;
    bk_filter_stats(f, &made);
    assert_int_equal(bk_kind_design(BK_KIND_COUNTING, &p, &designed), BK_OK);
    assert_int_equal(designed.bits, made.bits);
    assert_int_equal(designed.hashes, made.hashes);
    assert_int_equal(designed.bytes, made.bytes);
    assert_true(designed.target_fpr == made.target_fpr);
    assert_true(designed.bits_per_key == made.bits_per_key);
    bk_stats classic;
    bk_params bloom_params = { .capacity = 1000, .fpr = 0.01 };
    assert_int_equal(bk_kind_design(BK_KIND_BLOOM, &bloom_params, &classic), BK_OK);
    p.flags = BK_FLAG_COUNTING_CLASSIC;
    assert_int_equal(bk_kind_design(BK_KIND_BLOOM, &p, &classic), BK_EUNSUPPORTED);
    bk_counting_layout layout;
    assert_int_equal(bk_counting_layout_of(f, &layout), BK_OK);
    if (classic_layout()) {
        /* Four times the classic filter's bits, same k. */
        assert_int_equal(layout, BK_COUNTING_CLASSIC);
        assert_int_equal(made.bits, 4 * classic.bits);
        assert_int_equal(made.hashes, classic.hashes);
    } else {
        /* Whole lines of 128 counters, more of them than the classic
         * filter's bits (uneven line loads), k for 128-counter blocks. */
        assert_int_equal(layout, BK_COUNTING_BLOCKED);
        assert_int_equal(made.bits % (128 * 4), 0);
        assert_true(made.bits > 4 * classic.bits && made.bits < 5 * classic.bits);
        assert_int_equal(made.hashes, 6);
    }
    assert_int_equal(bk_counting_layout_of(NULL, &layout), BK_EINVAL);
    assert_int_equal(bk_counting_layout_of(f, NULL), BK_EINVAL);

    bk_filter *copy;
    assert_int_equal(bk_filter_copy(f, &copy), BK_OK);
    assert_int_equal(bk_filter_kind(copy), BK_KIND_COUNTING);
    bk_filter_free(copy);
    bk_filter_free(f);
}

/* Sized from an FPR below about 1e-5 the blocked layout would need more
 * than twice the classic counters (1e-12: beyond a line per key), so the
 * classic layout is taken; an explicit m or counters per key stay blocked. */
static void test_low_fpr_takes_classic(void **state)
{
    (void)state;
    const struct {
        bk_params params;
        bk_counting_layout layout;
    } cases[] = {
        { { .capacity = 1000, .fpr = 1e-4 }, BK_COUNTING_BLOCKED },
        { { .capacity = 1000, .fpr = 1e-5 }, BK_COUNTING_CLASSIC },
        { { .capacity = 1000, .fpr = 1e-12 }, BK_COUNTING_CLASSIC },
        { { .capacity = 1000, .bits_per_key = 300 }, BK_COUNTING_BLOCKED },
        { { .capacity = 1000, .bits = 1000000, .hashes = 30 }, BK_COUNTING_BLOCKED },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bk_filter *f;
        assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &cases[c].params, &f), BK_OK);
        bk_counting_layout layout;
        assert_int_equal(bk_counting_layout_of(f, &layout), BK_OK);
        assert_int_equal(layout, cases[c].layout);
        bk_stats made = stats_of(f), designed;
        assert_int_equal(bk_kind_design(BK_KIND_COUNTING, &cases[c].params, &designed), BK_OK);
        assert_int_equal(designed.bits, made.bits);
        if (cases[c].params.fpr != 0)
            assert_true(made.target_fpr <= 1.01 * cases[c].params.fpr); /* classic: k rounded */
        bk_filter_free(f);
    }
}

/* The file-format hooks, driven directly (write, then read back): an
 * internal test, so it reaches the kind's object (src/filter.h) and wraps
 * what the hooks read back in a handle. */
static bk_filter *roundtrip_hooks(const bk_filter *f, bool in_place, uint8_t **payload_out,
                                  bk_status *status_out)
{
    const bk_kind_ops *ops = &bk_counting_ops;
    const void *object = bk_filter_object_of(f, BK_KIND_COUNTING);
    size_t params_size = ops->params_size(object);
    uint8_t params[64];
    assert_true(params_size <= sizeof params);
    ops->write_params(object, params);
    uint64_t payload_size = ops->payload_size(object);
    uint8_t *payload = aligned_alloc(64, (payload_size + 63) / 64 * 64);
    assert_non_null(payload);
    ops->write_payload(object, payload);
    void *back = NULL;
    *status_out = ops->read(params, params_size, payload, payload_size, ops->hasher(object),
                            keys_added_of(f), in_place, &back);
    *payload_out = payload;
    bk_filter *handle = NULL;
    if (*status_out == BK_OK)
        assert_int_equal(bk_filter_wrap(ops, back, &handle), BK_OK);
    return handle;
}

/* A counting filter of `params` holding "f0".."f699" once and "hot" 16
 * times: what the parameter-block tests round-trip. */
static bk_filter *filled_for_hooks(const bk_params *params)
{
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, params, &f), BK_OK);
    char key[32];
    for (uint64_t i = 0; i < 700; i++)
        bk_filter_add(f, key, key_of(key, sizeof key, "f", i), NULL);
    for (int i = 0; i < 16; i++)
        bk_filter_add(f, "hot", 3, NULL);
    return f;
}

static void test_format_hooks(void **state)
{
    (void)state;
    /* An odd m, so the last byte has an unused nibble. */
    bk_params p = {
        .capacity = 777, .bits = 6327, .hashes = 6, .seed = 42, .flags = BK_FLAG_COUNTING_CLASSIC
    };
    bk_filter *f = filled_for_hooks(&p);
    for (int pass = 0; pass < 2; pass++) {
        bool in_place = pass == 1;
        uint8_t *payload;
        bk_status status;
        bk_filter *back = roundtrip_hooks(f, in_place, &payload, &status);
        assert_int_equal(status, BK_OK);
        assert_int_equal(counters_of(back), counters_of(f));
        assert_int_equal(hashes_of(back), hashes_of(f));
        assert_int_equal(stats_of(back).capacity, 777);
        assert_true(stats_of(back).target_fpr == stats_of(f).target_fpr);
        assert_int_equal(keys_added_of(back), keys_added_of(f));
        assert_int_equal(bk_filter_hasher(back)->seed, 42);
        assert_int_equal(saturated_of(back), saturated_of(f));
        for (uint64_t i = 0; i < counters_of(f); i++)
            assert_int_equal(counter_of(back, i), counter_of(f, i));
        if (in_place) {
            assert_int_equal(bk_filter_add(back, "x", 1, NULL), BK_EIMMUTABLE);
            assert_int_equal(bk_filter_remove(back, "f1", 2), BK_EIMMUTABLE);
            assert_int_equal(bk_filter_clear(back), BK_EIMMUTABLE);
            bk_filter *writable;
            assert_int_equal(bk_filter_copy(back, &writable), BK_OK);
            assert_int_equal(bk_filter_remove(writable, "f1", 2), BK_OK);
            bk_filter_free(writable);
        }
        bk_filter_free(back);
        free(payload);
    }

    /* Contradictory parameter blocks. */
    const bk_kind_ops *ops = &bk_counting_ops;
    const void *object = bk_filter_object_of(f, BK_KIND_COUNTING);
    uint8_t params[32], good[32];
    ops->write_params(object, good);
    uint64_t payload_size = ops->payload_size(object);
    uint8_t *payload = calloc(1, payload_size);
    ops->write_payload(object, payload);
    void *back = NULL;
    const bk_hasher *h = ops->hasher(object);
    struct {
        size_t offset;
        uint8_t value;
        bk_status expected;
    } cases[] = {
        { 0, 0x00, BK_ECORRUPT },  /* m changes: payload size contradicts */
        { 8, 0x00, BK_ECORRUPT },  /* k = 0 */
        { 12, 8, BK_ECORRUPT },    /* counter width 8 */
        { 16, 0x00, BK_OK },       /* capacity low byte 0 (777 -> 768): still valid */
        { 31, 0x7f, BK_ECORRUPT }, /* target FPR NaN / > 1 */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memcpy(params, good, sizeof params);
        params[cases[c].offset] = cases[c].value;
        back = NULL;
        bk_status status = ops->read(params, 32, payload, payload_size, h, 0, false, &back);
        assert_int_equal(status, cases[c].expected);
        if (status == BK_OK)
            ops->destroy(back);
        else
            assert_null(back);
    }
    memcpy(params, good, sizeof params);
    params[8] = 0;
    params[9] = 1; /* k = 256 */
    assert_int_equal(ops->read(params, 32, payload, payload_size, h, 0, false, &back),
                     BK_ERANGE);
    params[8] = 3;
    params[9] = 0;
    params[7] = 0x40; /* m = 2^62 + ...: beyond BK_MAX_BITS / 4 */
    assert_int_equal(ops->read(params, 32, payload, payload_size, h, 0, false, &back),
                     BK_ERANGE);
    assert_int_equal(ops->read(good, 31, payload, payload_size, h, 0, false, &back),
                     BK_ECORRUPT);
    assert_int_equal(ops->read(good, 32, payload, payload_size - 1, h, 0, false, &back),
                     BK_ECORRUPT);
    payload[payload_size - 1] |= 0x10; /* the unused nibble of odd m */
    assert_int_equal(ops->read(good, 32, payload, payload_size, h, 0, false, &back),
                     BK_ECORRUPT);
    assert_null(back);
    free(payload);
    bk_filter_free(f);
}

/* The blocked layout's parameter block: 40 bytes whose layout and line
 * fields must be exactly 1 and 128, m a multiple of 128, the payload m/2
 * bytes; read in place, the filter is read-only. */
static void test_format_hooks_blocked(void **state)
{
    (void)state;
    bk_params p = { .capacity = 700, .fpr = 0.02, .seed = 9 };
    bk_filter *f = filled_for_hooks(&p);
    char key[32];
    for (int pass = 0; pass < 2; pass++) {
        uint8_t *payload;
        bk_status status;
        bk_filter *back = roundtrip_hooks(f, pass == 1, &payload, &status);
        assert_int_equal(status, BK_OK);
        bk_counting_layout layout;
        assert_int_equal(bk_counting_layout_of(back, &layout), BK_OK);
        assert_int_equal(layout, BK_COUNTING_BLOCKED);
        assert_int_equal(counters_of(back), counters_of(f));
        assert_int_equal(saturated_of(back), saturated_of(f));
        for (uint64_t i = 0; i < counters_of(f); i++)
            assert_int_equal(counter_of(back, i), counter_of(f, i));
        for (uint64_t i = 0; i < 2000; i++) {
            size_t len = key_of(key, sizeof key, "f", i);
            assert_int_equal(bk_filter_contains(back, key, len),
                             bk_filter_contains(f, key, len));
        }
        if (pass == 1)
            assert_int_equal(bk_filter_remove(back, "f1", 2), BK_EIMMUTABLE);
        bk_filter_free(back);
        free(payload);
    }

    const bk_kind_ops *ops = &bk_counting_ops;
    const void *object = bk_filter_object_of(f, BK_KIND_COUNTING);
    assert_int_equal(ops->params_size(object), 40);
    uint8_t params[40], good[40];
    ops->write_params(object, good);
    assert_int_equal(good[32], 1);
    assert_int_equal(good[36], 128);
    uint64_t payload_size = ops->payload_size(object);
    uint8_t *payload = calloc(1, payload_size + 64);
    ops->write_payload(object, payload);
    const bk_hasher *h = ops->hasher(object);
    struct {
        size_t offset;
        uint8_t value;
        bk_status expected;
    } cases[] = {
        { 32, 0, BK_ECORRUPT },   /* layout 0 in a 40-byte block: classic has 32 */
        { 32, 2, BK_ECORRUPT },   /* an unknown layout */
        { 35, 1, BK_ECORRUPT },   /* layout 2^24 + 1 */
        { 36, 64, BK_ECORRUPT },  /* 64 counters per line */
        { 37, 1, BK_ECORRUPT },   /* 384 counters per line */
        { 0, 0x40, BK_ECORRUPT }, /* m no longer a multiple of 128 */
        { 12, 8, BK_ECORRUPT },   /* counter width 8 */
        { 8, 0, BK_ECORRUPT },    /* k = 0 */
    };
    void *back = NULL;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memcpy(params, good, sizeof params);
        params[cases[c].offset] = cases[c].value;
        assert_int_equal(ops->read(params, 40, payload, payload_size, h, 0, false, &back),
                         cases[c].expected);
        assert_null(back);
    }
    /* m = 2^54 + 128: beyond BK_MAX_BITS / 4, and a multiple of 128 */
    memcpy(params, good, sizeof params);
    memset(params, 0, 8);
    params[0] = 128;
    params[6] = 0x40;
    assert_int_equal(ops->read(params, 40, payload, payload_size, h, 0, false, &back),
                     BK_ERANGE);
    assert_int_equal(ops->read(good, 36, payload, payload_size, h, 0, false, &back),
                     BK_ECORRUPT);
    assert_int_equal(ops->read(good, 48, payload, payload_size, h, 0, false, &back),
                     BK_ECORRUPT);
    assert_int_equal(ops->read(good, 40, payload, payload_size - 1, h, 0, false, &back),
                     BK_ECORRUPT);
    assert_int_equal(ops->read(good, 40, payload, payload_size + 64, h, 0, false, &back),
                     BK_ECORRUPT);
    assert_null(back);
    free(payload);
    bk_filter_free(f);
}

/* Through the real format (tests/roundtrip.h): buffer, file, load and map,
 * with saturated counters, an odd m, and a SipHash-keyed filter. */
static void test_format_roundtrip(void **state)
{
    (void)state;
    static const uint8_t secret[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    bk_params plain = {
        .capacity = 500, .bits = 4001, .hashes = 5, .seed = 3, .flags = layout_flags
    };
    bk_params keyed = { .capacity = 500,
                        .fpr = 0.01,
                        .hash_algorithm = BK_HASH_SIPHASH,
                        .secret_key = secret,
                        .flags = layout_flags };
    const bk_params *cases[] = { &plain, &keyed };
    char key[32];
    for (int c = 0; c < 2; c++) {
        bk_filter *f;
        assert_int_equal(bk_filter_create(BK_KIND_COUNTING, cases[c], &f), BK_OK);
        for (uint64_t i = 0; i < 400; i++)
            assert_int_equal(bk_filter_add(f, key, key_of(key, sizeof key, "key:", i), NULL),
                             BK_OK);
        for (int i = 0; i < 20; i++)
            bk_filter_add(f, "key:1", 5, NULL);
        for (uint64_t i = 0; i < 400; i += 3)
            assert_int_equal(bk_filter_remove(f, key, key_of(key, sizeof key, "key:", i)),
                             BK_OK);
        bk_stats s;
        bk_filter_stats(f, &s);
        assert_true(s.saturated_counters > 0);
        bk_roundtrip_check(f, c == 1 ? secret : NULL, 1000);

        size_t size;
        uint8_t *bytes = bk_rt_serialize(f, &size);
        bk_filter *back;
        bk_load_options options = { .secret_key = c == 1 ? secret : NULL };
        assert_int_equal(bk_filter_deserialize(bytes, size, &options, &back), BK_OK);
        bk_stats t;
        bk_filter_stats(back, &t);
        assert_int_equal(t.saturated_counters, s.saturated_counters);
        /* A loaded filter removes like the original. */
        assert_int_equal(bk_filter_remove(back, "key:2", 5), BK_OK);
        assert_int_equal(bk_filter_remove(f, "key:2", 5), BK_OK);
        size_t size2, size3;
        uint8_t *after_back = bk_rt_serialize(back, &size2);
        uint8_t *after_original = bk_rt_serialize(f, &size3);
        assert_memory_equal(after_back, after_original, size2);
        free(after_back);
        free(after_original);
        free(bytes);
        bk_filter_free(back);
        bk_filter_free(f);
    }
}

/* Golden files (tests/golden.h, tests/data/): the format and the algorithm
 * pinned, on every host. */
static const bk_golden goldens[] = {
    { "counting-xxh3.bkf",
      BK_KIND_COUNTING,
      { .capacity = 200, .bits = 1999, .hashes = 5, .flags = BK_FLAG_COUNTING_CLASSIC },
      200,
      3,
      2000 },
    { "counting-xxh64-saturated.bkf",
      BK_KIND_COUNTING,
      { .capacity = 20,
        .bits = 61,
        .hashes = 4,
        .hash_algorithm = BK_HASH_XXH64,
        .seed = 42,
        .flags = BK_FLAG_COUNTING_CLASSIC },
      200,
      7,
      500 },
    { "counting-blocked-xxh3.bkf",
      BK_KIND_COUNTING,
      { .capacity = 300, .fpr = 0.01 },
      300,
      4,
      3000 },
    { "counting-blocked-xxh64-saturated.bkf",
      BK_KIND_COUNTING,
      { .capacity = 20, .bits = 256, .hashes = 9, .hash_algorithm = BK_HASH_XXH64, .seed = 42 },
      200,
      7,
      500 },
};

#define GOLDEN_COUNT (sizeof goldens / sizeof goldens[0])

static void test_golden_files(void **state)
{
    (void)state;
    for (size_t g = 0; g < GOLDEN_COUNT; g++)
        bk_golden_check(&goldens[g]);
    static const size_t saturated_goldens[] = { 1, 3 };
    for (size_t i = 0; i < 2; i++) {
        /* the file's bytes, as checked */
        bk_filter *saturated = bk_golden_build(&goldens[saturated_goldens[i]]);
        bk_stats s;
        bk_filter_stats(saturated, &s);
        assert_true(s.saturated_counters > 0);
        bk_counting_layout layout;
        assert_int_equal(bk_counting_layout_of(saturated, &layout), BK_OK);
        assert_int_equal(layout, i == 0 ? BK_COUNTING_CLASSIC : BK_COUNTING_BLOCKED);
        bk_filter_free(saturated);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-golden") == 0)
        return bk_golden_write(goldens, GOLDEN_COUNT, argv[2]);
/* A test of both layouts, run for the classic one. */
#define CLASSIC_TEST(f)                                    \
    {                                                      \
#f " (classic)", f, use_classic, use_blocked, NULL \
    }

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_contains_remove_count),
        CLASSIC_TEST(test_add_contains_remove_count),
        cmocka_unit_test(test_remove_absent_changes_nothing),
        CLASSIC_TEST(test_remove_absent_changes_nothing),
        cmocka_unit_test(test_random_multiset_no_false_negatives),
        CLASSIC_TEST(test_random_multiset_no_false_negatives),
        cmocka_unit_test(test_random_multiset_more_seeds),
        cmocka_unit_test(test_random_multiset_with_saturation),
        CLASSIC_TEST(test_random_multiset_with_saturation),
        cmocka_unit_test(test_saturation_sticks),
        CLASSIC_TEST(test_saturation_sticks),
        cmocka_unit_test(test_false_positive_removal_creates_false_negatives),
        CLASSIC_TEST(test_false_positive_removal_creates_false_negatives),
        cmocka_unit_test(test_repeated_probes_never_underflow),
        cmocka_unit_test(test_repeated_line_counters),
        cmocka_unit_test(test_to_bloom_answers_identically),
        CLASSIC_TEST(test_to_bloom_answers_identically),
        cmocka_unit_test(test_to_blocked_every_walk),
        cmocka_unit_test(test_union_saturating_add),
        CLASSIC_TEST(test_union_saturating_add),
        cmocka_unit_test(test_fpr_and_estimates),
        cmocka_unit_test(test_blocked_fpr_matches_model),
        cmocka_unit_test(test_batch_matches_single),
        CLASSIC_TEST(test_batch_matches_single),
        cmocka_unit_test(test_simd_paths_match_portable),
        cmocka_unit_test(test_simd_adds_match_portable),
        cmocka_unit_test(test_set_path_errors),
        cmocka_unit_test(test_bad_input),
        CLASSIC_TEST(test_bad_input),
        cmocka_unit_test(test_filter_handle),
        CLASSIC_TEST(test_filter_handle),
        cmocka_unit_test(test_low_fpr_takes_classic),
        cmocka_unit_test(test_format_hooks),
        cmocka_unit_test(test_format_hooks_blocked),
        cmocka_unit_test(test_format_roundtrip),
        CLASSIC_TEST(test_format_roundtrip),
        cmocka_unit_test(test_golden_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
