/*
 * tests/test_scalable.c -- the scalable Bloom filter: growth, the chain's
 * FPR near its target from 1x to 1000x growth, no false negatives, limits, independence of
 * the levels, the generic handle and the file-format hooks.
 *
 * Statistical checks use fixed keys and binomial bounds: a count of events
 * of probability p among N trials stays below N p + 4 sqrt(N p (1 - p)).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, in tests/roundtrip.h */
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
#include "growth_golden.h"
#include "endian.h"
#include "scalable.h" /* src/scalable.h: one level alone, for the independence test */

static size_t make_key(char *buffer, const char *prefix, unsigned i)
{
    return (size_t)snprintf(buffer, 32, "%s:%u", prefix, i);
}

static double binomial_upper(double trials, double p)
{
    return trials * p + 4 * sqrt(trials * p * (1 - p));
}

static bk_filter *create_or_fail(const bk_params *p)
{
    bk_filter *f = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_SCALABLE, p, &f), BK_OK);
    assert_non_null(f);
    return f;
}

static bk_stats stats_of(const bk_filter *f)
{
    bk_stats s;
    bk_filter_stats(f, &s);
    return s;
}

static uint64_t keys_added_of(const bk_filter *f) { return stats_of(f).keys_added; }

static unsigned sub_count(const bk_filter *f)
{
    size_t count = 0;
    assert_int_equal(bk_scalable_sub_count(f, &count), BK_OK);
    return (unsigned)count;
}

static double fpr_bound_of(const bk_filter *f)
{
    double bound = -1;
    assert_int_equal(bk_scalable_fpr_bound(f, &bound), BK_OK);
    return bound;
}

static const bk_scalable *object_of(const bk_filter *f)
{
    const bk_scalable *object = bk_filter_object_of(f, BK_KIND_SCALABLE);
    assert_non_null(object);
    return object;
}

static void test_defaults(void **state)
{
    (void)state;
    bk_params p = { .capacity = 1000 };
    bk_filter *f = create_or_fail(&p);
    assert_int_equal(sub_count(f), 1);
    assert_true(stats_of(f).target_fpr == 0.01);
    /* s, r, the limit and q are in the parameter block (docs/FORMAT.md). */
    uint8_t chain[40 + 32 + 8];
    assert_int_equal(bk_scalable_ops.params_size(object_of(f)), sizeof chain);
    bk_scalable_ops.write_params(object_of(f), chain);
    assert_true(bk_load_le_double(chain + 16) == 2.0);
    assert_true(bk_load_le_double(chain + 24) == 0.75);
    assert_int_equal(bk_load_le32(chain + 32), BK_SCALABLE_MAX_FILTERS);
    assert_true(bk_load_le_double(chain + 72) == 0.7);
    bk_stats first;
    assert_int_equal(bk_scalable_sub_stats(f, 0, &first), BK_OK);
    assert_int_equal(first.capacity, 1000);
    /* p0 = q p, used nearly whole (m is the smallest meeting it at k) */
    assert_true(first.target_fpr <= 0.01 * 0.7 && first.target_fpr > 0.01 * 0.7 * 0.99);
    assert_int_equal(bk_scalable_sub_stats(f, 1, &first), BK_ERANGE);
    bk_filter_free(f);
}

/* bk_size_for_fpr_at_most (src/sizing.c): the classic sizing, widened at
 * its k only when rounding k left the prediction above p, to the smallest
 * m that meets p. */
static void test_sizing_at_most(void **state)
{
    (void)state;
    const double rates[] = { 0.5, 0.1, 0.05, 0.01, 0.005, 0.0123, 0.001, 1e-4, 1e-6 };
    const uint64_t counts[] = { 1, 10, 1000, 1000000 };
    unsigned widened = 0;
    for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            bk_sizing classic, at_most;
            assert_int_equal(bk_size_for_fpr(counts[c], rates[r], &classic), BK_OK);
            assert_int_equal(bk_size_for_fpr_at_most(counts[c], rates[r], &at_most), BK_OK);
            assert_true(at_most.predicted_fpr <= rates[r]);
            assert_int_equal(at_most.hashes, classic.hashes);
            if (classic.predicted_fpr <= rates[r]) {
                assert_int_equal(at_most.bits, classic.bits);
            } else {
                widened++;
                assert_true(at_most.bits > classic.bits);
                assert_true(bk_predicted_fpr(counts[c], at_most.bits - 1, at_most.hashes) >
                            rates[r]);
            }
        }
    }
    assert_true(widened > 0); /* 1% is one of them: 0.01003 before */
    bk_sizing unused;
    assert_int_equal(bk_size_for_fpr_at_most(0, 0.01, &unused), BK_EINVAL);
    assert_int_equal(bk_size_for_fpr_at_most(10, 0, &unused), BK_EINVAL);
    assert_int_equal(bk_size_for_fpr_at_most(10, 0.01, NULL), BK_EINVAL);
}

static void test_add_reports_whether_new(void **state)
{
    (void)state;
    bk_params p = { .capacity = 100, .fpr = 0.001 };
    bk_filter *f = create_or_fail(&p);
    bool was_new = false;
    assert_int_equal(bk_filter_add(f, "alice", 5, &was_new), BK_OK);
    assert_true(was_new);
    assert_true(bk_filter_contains(f, "alice", 5));
    assert_int_equal(bk_filter_add(f, "alice", 5, &was_new), BK_OK);
    assert_false(was_new);
    assert_int_equal(keys_added_of(f), 1);
    bk_filter_free(f);
}

/* Sub-filter i's share of the budget p: q p, then (1 - q) p (1 - r) r^(i-1). */
static double share_of(double p, double q, double r, unsigned i)
{
    return i == 0 ? q * p : (1 - q) * p * (1 - r) * pow(r, (double)(i - 1));
}

/* Adds keys "user:from" .. "user:to-1"; returns how many were reported
 * present before their add (false positives of the chain at that moment). */
static unsigned add_users(bk_filter *f, unsigned from, unsigned to)
{
    char key[32];
    unsigned not_new = 0;
    for (unsigned i = from; i < to; i++) {
        bool was_new = false;
        assert_int_equal(bk_filter_add(f, key, make_key(key, "user", i), &was_new), BK_OK);
        not_new += !was_new;
    }
    return not_new;
}

/* The chain lands near the FPR asked for, from below, at every growth:
 * 1x, 10x, 100x and 1000x its initial capacity (n0 = 1000, p = 1%,
 * defaults s = 2, r = 0.75, q = 0.7).  Bounds, over N = 10^6 absent keys:
 * false positives at most N p + 4 sqrt(N p (1 - p)) (binomial at the
 * target), and at least 0.6 N p (the design puts the chain at 0.70 p at 1x
 * and 0.85-0.97 p beyond).  Every sub-filter is sized to its share of p and
 * filled exactly to its capacity, every key added stays present. */
/* The chain's FPR and its bound at 1x, 10x, 100x and 1000x growth, every
 * added key present: with classic sub-filters (flags 0) or blocked ones
 * (BK_FLAG_BLOCKED_STAGES, whose k and 512-bit blocks land each stage a
 * little further below its share). */
static void check_fpr_near_target_over_growth(unsigned flags)
{
    const bool blocked = flags & BK_FLAG_BLOCKED_STAGES;
    /* A blocked filter of few blocks answers at the FPR of its own draw of
     * keys per block: 10,000 keys (at least 200 blocks) make the first
     * stage's FPR its design one within the binomial bound. */
    const unsigned initial = blocked ? 10000 : 1000, absent = 1000000;
    const unsigned growths[] = { 1, 10, 100, 1000 };
    const double p = 0.01, q = BK_SCALABLE_FIRST_SHARE, r = BK_SCALABLE_DEFAULT_TIGHTENING;
    bk_params params = { .capacity = initial, .fpr = p, .flags = flags };
    bk_filter *f = create_or_fail(&params);
    char key[32];
    unsigned added = 0, not_new = 0;
    for (size_t g = 0; g < sizeof growths / sizeof growths[0]; g++) {
        unsigned target = growths[g] * initial;
        not_new += add_users(f, added, target);
        added = target;
        double sum = 0;
        unsigned subs = sub_count(f);
        for (unsigned i = 0; i < subs; i++) {
            bk_stats sub;
            assert_int_equal(bk_scalable_sub_stats(f, i, &sub), BK_OK);
            assert_int_equal(sub.capacity, (uint64_t)initial << i);
            if (i + 1 < subs)
                assert_int_equal(sub.keys_added, sub.capacity); /* filled exactly */
            double share = share_of(p, q, r, i);
            assert_true(sub.target_fpr <= share &&
                        sub.target_fpr > (blocked ? 0.5 : 0.9) * share);
            assert_int_equal(sub.kind, blocked ? BK_KIND_BLOCKED : BK_KIND_BLOOM);
            sum += sub.target_fpr;
        }
        double bound = fpr_bound_of(f);
        assert_true(bound <= sum * (1 + 1e-12) && sum < p); /* 1 - (1 - x) rounds */
        unsigned false_positives = 0;
        for (unsigned i = 0; i < absent; i++)
            false_positives += bk_filter_contains(f, key, make_key(key, "guest", i));
        bk_stats s = stats_of(f);
        print_message(
            "scalable%s %4ux: %u sub-filters, FPR %.5f (bound %.5f), %.2f bits per key "
            "added\n",
            blocked ? " (blocked)" : "", growths[g], subs, (double)false_positives / absent,
            bound, (double)s.bits / (double)s.keys_added);
        assert_true(false_positives <= binomial_upper(absent, p));
        assert_true(false_positives <= binomial_upper(absent, bound));
        assert_true(false_positives >= (blocked ? 0.3 : 0.6) * p * absent);
        if (!blocked) /* the blocked estimate from the fill may pass the design one */
            assert_true(s.current_fpr < bound); /* no sub-filter beyond capacity */
        assert_false(s.past_design_point);
    }
    assert_int_equal(sub_count(f), 10); /* n0 << 0 .. n0 << 9 hold 1023 n0 */
    assert_int_equal(keys_added_of(f), added - not_new);
    assert_true(not_new <= binomial_upper(added, p));
    for (unsigned i = 0; i < added; i++)
        assert_true(bk_filter_contains(f, key, make_key(key, "user", i)));
    bk_filter_free(f);
}

static void test_fpr_near_target_over_growth(void **state)
{
    (void)state;
    check_fpr_near_target_over_growth(0);
}

static void test_blocked_stages_fpr_over_growth(void **state)
{
    (void)state;
    check_fpr_near_target_over_growth(BK_FLAG_BLOCKED_STAGES);
}

/* A chain from a file without the share field (the schedule before it,
 * p_i = p (1 - r) r^i) keeps that schedule as it grows, and is written
 * back without the field. */
static void test_chain_without_share_keeps_its_schedule(void **state)
{
    (void)state;
    bk_load_options options = { .expected_kind = BK_KIND_SCALABLE };
    bk_filter *f = NULL;
    /* n0 = 50, p = 1%, s = 2, r = 0.5; 200 keys in 3 sub-filters */
    assert_int_equal(bk_filter_load(BK_TEST_DATA_DIR "/scalable-xxh3.bkf", &options, &f), BK_OK);
    assert_int_equal(sub_count(f), 3);
    add_users(f, 0, 1000);
    unsigned subs = sub_count(f);
    assert_true(subs >= 5);
    for (unsigned i = 0; i < subs; i++) {
        bk_stats sub;
        assert_int_equal(bk_scalable_sub_stats(f, i, &sub), BK_OK);
        double share = 0.01 * 0.5 * pow(0.5, (double)i);
        assert_true(sub.target_fpr <= share && sub.target_fpr > 0.9 * share);
    }
    assert_int_equal(bk_scalable_ops.params_size(object_of(f)), 40 + 32 * (size_t)subs);
    bk_filter_free(f);
}

/* A false positive in level 0 tells nothing about level 1: the levels probe
 * with independent sequences (src/level_hash.h), so the joint count is the
 * product of the rates. */
static void test_levels_are_independent(void **state)
{
    (void)state;
    bk_params params = { .capacity = 2000, .fpr = 0.2, .expansion = 1, .tightening = 0.9 };
    bk_filter *f = create_or_fail(&params);
    char key[32];
    for (unsigned i = 0; i < 4000; i++)
        assert_int_equal(bk_filter_add(f, key, make_key(key, "member", i), NULL), BK_OK);
    assert_int_equal(sub_count(f), 2);
    const unsigned absent = 200000;
    unsigned in0 = 0, in1 = 0, both = 0;
    for (unsigned i = 0; i < absent; i++) {
        bk_hash h = bk_filter_hash(f, key, make_key(key, "other", i));
        bool a = bk_scalable_level_contains_hash(object_of(f), 0, h);
        bool b = bk_scalable_level_contains_hash(object_of(f), 1, h);
        in0 += a;
        in1 += b;
        both += a && b;
    }
    double joint = ((double)in0 / absent) * ((double)in1 / absent);
    print_message("levels: FPR %.4f and %.4f, joint %.5f (product %.5f)\n", (double)in0 / absent,
                  (double)in1 / absent, (double)both / absent, joint);
    assert_true(both <= binomial_upper(absent, joint));
    assert_false(bk_scalable_level_contains_hash(object_of(f), 2, bk_filter_hash(f, "x", 1)));
    bk_filter_free(f);
}

/* Every key whose add was accepted is in the chain, whatever its level. */
static void test_no_false_negatives_with_odd_factors(void **state)
{
    (void)state;
    bk_params params = { .capacity = 37, .fpr = 0.05, .expansion = 1.5, .tightening = 0.8 };
    bk_filter *f = create_or_fail(&params);
    char key[32];
    for (unsigned i = 0; i < 20000; i++)
        assert_int_equal(bk_filter_add(f, key, make_key(key, "k", i), NULL), BK_OK);
    for (unsigned i = 0; i < 20000; i++)
        assert_true(bk_filter_contains(f, key, make_key(key, "k", i)));
    assert_true(fpr_bound_of(f) < 0.05);
    bk_filter_free(f);
}

static void test_non_scaling_mode(void **state)
{
    (void)state;
    bk_params params = { .capacity = 100, .fpr = 0.01, .max_filters = 1 };
    bk_filter *f = create_or_fail(&params);
    char key[32];
    unsigned i = 0, accepted = 0;
    bk_status status = BK_OK;
    while (status == BK_OK) {
        bool was_new = false;
        status = bk_filter_add(f, key, make_key(key, "k", i++), &was_new);
        accepted += status == BK_OK && was_new;
    }
    assert_int_equal(status, BK_EFULL);
    assert_int_equal(accepted, 100);
    bk_stats before, after;
    bk_filter_stats(f, &before);
    assert_true(before.past_design_point); /* full and may not grow */
    /* Refused again, nothing changes; a key already there is still fine. */
    assert_int_equal(bk_filter_add(f, "refused", 7, NULL), BK_EFULL);
    bk_filter_stats(f, &after);
    assert_int_equal(after.keys_added, before.keys_added);
    assert_true(after.fill_ratio == before.fill_ratio);
    assert_int_equal(sub_count(f), 1);
    bool was_new = true;
    assert_int_equal(bk_filter_add(f, key, make_key(key, "k", 0), &was_new), BK_OK);
    assert_false(was_new);
    bk_filter_free(f);
}

static void test_max_filters(void **state)
{
    (void)state;
    bk_params params = { .capacity = 10, .fpr = 0.01, .max_filters = 3 };
    bk_filter *f = create_or_fail(&params);
    char key[32];
    unsigned i = 0;
    while (bk_filter_add(f, key, make_key(key, "k", i++), NULL) == BK_OK)
        ;
    assert_int_equal(sub_count(f), 3);
    assert_int_equal(keys_added_of(f), 10 + 20 + 40);
    bk_filter_free(f);
}

static void test_bad_parameters(void **state)
{
    (void)state;
    static const uint8_t secret[16] = { 1 };
    const struct {
        bk_params params;
        bk_status expected;
    } cases[] = {
        { { .capacity = 0 }, BK_EINVAL },
        { { .capacity = 10, .fpr = 1 }, BK_EINVAL },
        { { .capacity = 10, .fpr = -0.1 }, BK_EINVAL },
        { { .capacity = 10, .fpr = NAN }, BK_EINVAL },
        { { .capacity = 10, .expansion = 0.5 }, BK_EINVAL },
        { { .capacity = 10, .expansion = NAN }, BK_EINVAL },
        { { .capacity = 10, .expansion = 1e9 }, BK_EINVAL },
        { { .capacity = 10, .tightening = 1 }, BK_EINVAL },
        { { .capacity = 10, .tightening = -0.5 }, BK_EINVAL },
        { { .capacity = 10, .max_filters = BK_SCALABLE_MAX_FILTERS + 1 }, BK_EINVAL },
        { { .capacity = 10, .bits = 100, .hashes = 3 }, BK_EINVAL },
        { { .capacity = 10, .bits_per_key = 10 }, BK_EINVAL },
        { { .capacity = 10, .flags = BK_FLAG_CONCURRENT }, BK_EUNSUPPORTED },
        { { .capacity = 10, .hash_algorithm = BK_HASH_SIPHASH }, BK_EKEY },
        { { .capacity = 10, .hash_algorithm = BK_HASH_XXH3, .secret_key = secret }, BK_EINVAL },
        { { .capacity = UINT64_C(1) << 60 }, BK_ERANGE },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bk_filter *f = (bk_filter *)&cases[i]; /* sentinel: must stay untouched */
        bk_status status = bk_filter_create(BK_KIND_SCALABLE, &cases[i].params, &f);
        if (status != cases[i].expected)
            print_error("case %zu: %d\n", i, status);
        assert_int_equal(status, cases[i].expected);
        assert_ptr_equal(f, (bk_filter *)&cases[i]);
        bk_stats design;
        assert_int_equal(bk_kind_design(BK_KIND_SCALABLE, &cases[i].params, &design),
                         cases[i].expected);
    }
    assert_int_equal(bk_filter_create(BK_KIND_SCALABLE, NULL, &(bk_filter *){ NULL }),
                     BK_EINVAL);
    bk_params ok = { .capacity = 10 };
    assert_int_equal(bk_filter_create(BK_KIND_SCALABLE, &ok, NULL), BK_EINVAL);
}

static void test_bad_input(void **state)
{
    (void)state;
    bk_params params = { .capacity = 10 };
    bk_filter *f = create_or_fail(&params);
    assert_int_equal(bk_filter_add(NULL, "a", 1, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_add(f, NULL, 3, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_add_hash(NULL, (bk_hash){ 1, 2 }, NULL), BK_EINVAL);
    assert_false(bk_filter_contains(NULL, "a", 1));
    assert_false(bk_filter_contains(f, NULL, 3));
    bk_key bad[2] = { { "a", 1 }, { NULL, 4 } };
    size_t fresh = 99;
    assert_int_equal(bk_filter_add_batch(f, bad, 2, &fresh), BK_EINVAL);
    assert_int_equal(fresh, 99);
    assert_int_equal(keys_added_of(f), 0); /* nothing changed */
    assert_int_equal(bk_filter_contains_batch(f, bad, 2, NULL), 0);
    assert_int_equal(bk_scalable_sub_stats(f, 0, NULL), BK_EINVAL);
    size_t count = 7;
    double bound = 7;
    bk_stats sub;
    assert_int_equal(bk_scalable_sub_count(f, NULL), BK_EINVAL);
    assert_int_equal(bk_scalable_sub_count(NULL, &count), BK_EINVAL);
    assert_int_equal(bk_scalable_fpr_bound(f, NULL), BK_EINVAL);
    assert_int_equal(bk_scalable_fpr_bound(NULL, &bound), BK_EINVAL);
    assert_int_equal(bk_scalable_sub_stats(NULL, 0, &sub), BK_EINVAL);
    bk_filter *bloom;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &params, &bloom), BK_OK);
    assert_int_equal(bk_scalable_sub_count(bloom, &count), BK_EKIND);
    assert_int_equal(bk_scalable_sub_stats(bloom, 0, &sub), BK_EKIND);
    assert_int_equal(bk_scalable_fpr_bound(bloom, &bound), BK_EKIND);
    assert_true(count == 7 && bound == 7);
    bk_filter_free(bloom);
    assert_int_equal(bk_filter_copy(NULL, &(bk_filter *){ NULL }), BK_EINVAL);
    assert_int_equal(bk_filter_clear(NULL), BK_EINVAL);
    bk_filter_free(NULL);
    bk_filter_free(f);
}

static void check_batches_match_single_calls(unsigned flags)
{
    bk_params params = { .capacity = 50, .fpr = 0.01, .flags = flags };
    bk_filter *one = create_or_fail(&params), *batch = create_or_fail(&params);
    enum { N = 1000 };
    static char text[N][32];
    bk_key keys[N];
    size_t single_new = 0;
    for (unsigned i = 0; i < N; i++) {
        keys[i].data = text[i];
        keys[i].len = make_key(text[i], "b", i % 700); /* with repeats */
        bool was_new;
        assert_int_equal(bk_filter_add(one, keys[i].data, keys[i].len, &was_new), BK_OK);
        single_new += was_new;
    }
    size_t batch_new = 0;
    assert_int_equal(bk_filter_add_batch(batch, keys, N, &batch_new), BK_OK);
    assert_int_equal(batch_new, single_new);
    assert_int_equal(sub_count(one), sub_count(batch));
    bool results[N];
    assert_int_equal(bk_filter_contains_batch(batch, keys, N, results), N);
    for (unsigned i = 0; i < N; i++)
        assert_true(results[i]);
    /* Absent keys over several sub-filters and batch chunks: the batch
     * answers (false positives included) are the single queries'. */
    assert_true(sub_count(batch) > 3);
    size_t single_present = 0;
    for (unsigned i = 0; i < N; i++) {
        keys[i].len = make_key(text[i], "absent", i);
        single_present += bk_filter_contains(batch, keys[i].data, keys[i].len);
    }
    assert_int_equal(bk_filter_contains_batch(batch, keys, N, results), single_present);
    for (unsigned i = 0; i < N; i++)
        assert_int_equal(results[i], bk_filter_contains(batch, keys[i].data, keys[i].len));
    bk_filter_free(one);
    bk_filter_free(batch);
}

static void test_batches_match_single_calls(void **state)
{
    (void)state;
    check_batches_match_single_calls(0);
    check_batches_match_single_calls(BK_FLAG_BLOCKED_STAGES);
}

static void test_copy_and_clear(void **state)
{
    (void)state;
    bk_params params = { .capacity = 20, .fpr = 0.01 };
    bk_filter *f = create_or_fail(&params);
    char key[32];
    for (unsigned i = 0; i < 200; i++)
        bk_filter_add(f, key, make_key(key, "c", i), NULL);
    bk_filter *copy;
    assert_int_equal(bk_filter_copy(f, &copy), BK_OK);
    assert_int_equal(sub_count(copy), sub_count(f));
    assert_int_equal(keys_added_of(copy), keys_added_of(f));
    assert_int_equal(bk_filter_clear(f), BK_OK);
    assert_int_equal(sub_count(f), 1);
    assert_int_equal(keys_added_of(f), 0);
    unsigned still = 0;
    for (unsigned i = 0; i < 200; i++) {
        assert_true(bk_filter_contains(copy, key, make_key(key, "c", i)));
        still += bk_filter_contains(f, key, make_key(key, "c", i));
    }
    assert_int_equal(still, 0); /* an empty filter reports nothing */
    bk_filter_free(copy);
    bk_filter_free(f);
}

static void test_generic_handle(void **state)
{
    (void)state;
    bk_kind kind;
    assert_int_equal(bk_kind_from_name("scalable", &kind), BK_OK);
    assert_int_equal(kind, BK_KIND_SCALABLE);
    assert_true(bk_kind_available(BK_KIND_SCALABLE));
    bk_params params = { .capacity = 100, .fpr = 0.01, .max_filters = 4 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_SCALABLE, &params, &f), BK_OK);
    char key[32];
    for (unsigned i = 0; i < 500; i++)
        assert_int_equal(bk_filter_add(f, key, make_key(key, "h", i), NULL), BK_OK);
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_int_equal(s.kind, BK_KIND_SCALABLE);
    assert_int_equal(s.filters, 3); /* 100 + 200 + 400 */
    assert_true(s.target_fpr == 0.01);
    assert_int_equal(bk_filter_remove(f, "h:1", 3), BK_EUNSUPPORTED);
    bk_filter *copy;
    assert_int_equal(bk_filter_copy(f, &copy), BK_OK);
    assert_true(bk_filter_contains(copy, "h:499", 5));
    bk_stats design;
    assert_int_equal(bk_kind_design(BK_KIND_SCALABLE, &params, &design), BK_OK);
    assert_int_equal(design.capacity, 100);
    assert_int_equal(design.filters, 1);
    bk_filter_free(copy);
    bk_filter_free(f);
}

/* ------------------------------------------------------------------------ */
/* File-format hooks, called directly (the container is src/format.c)       */
/* ------------------------------------------------------------------------ */

typedef struct encoded {
    uint8_t *params;
    size_t params_size;
    uint8_t *payload; /* 64-byte aligned */
    uint64_t payload_size;
} encoded;

static encoded encode(const bk_kind_ops *ops, const void *object)
{
    encoded e;
    e.params_size = ops->params_size(object);
    e.params = malloc(e.params_size);
    ops->write_params(object, e.params);
    e.payload_size = ops->payload_size(object);
    e.payload = aligned_alloc(64, ((size_t)e.payload_size + 63) & ~(size_t)63);
    ops->write_payload(object, e.payload);
    return e;
}

static void release(encoded *e)
{
    free(e->params);
    free(e->payload);
}

/* The kind's read hook, its chain wrapped in a handle; on an error the
 * hook must leave *out as it was. */
static bk_status decode(const encoded *e, const bk_filter *like, uint64_t keys, bool in_place,
                        bk_filter **out)
{
    void *object = *out;
    bk_status status = bk_scalable_ops.read(
        e->params, e->params_size, e->payload, e->payload_size,
        bk_scalable_ops.hasher(object_of(like)), keys, in_place, &object);
    if (status != BK_OK) {
        assert_ptr_equal(object, *out);
        return status;
    }
    assert_int_equal(bk_filter_wrap(&bk_scalable_ops, object, out), BK_OK);
    return BK_OK;
}

static void check_format_round_trip(unsigned flags)
{
    bk_params params = { .capacity = 100, .fpr = 0.01, .seed = 42, .flags = flags };
    bk_filter *f = create_or_fail(&params);
    char key[32];
    for (unsigned i = 0; i < 1234; i++)
        bk_filter_add(f, key, make_key(key, "r", i), NULL);
    assert_int_equal(sub_count(f), 4);
    encoded e = encode(&bk_scalable_ops, object_of(f));
    assert_int_equal(e.params_size, 40 + 32 * 4 + 8);
    assert_int_equal(e.payload_size % 64, 0);
    const uint64_t keys = keys_added_of(f);
    for (int in_place = 1; in_place >= 0; in_place--) {
        bk_filter *g = NULL;
        assert_int_equal(decode(&e, f, keys, in_place, &g), BK_OK);
        bk_stats a, b;
        bk_filter_stats(f, &a);
        bk_filter_stats(g, &b);
        assert_memory_equal(&a, &b, sizeof a);
        for (unsigned i = 0; i < 3000; i++) {
            size_t len = make_key(key, "r", i);
            assert_int_equal(bk_filter_contains(f, key, len), bk_filter_contains(g, key, len));
        }
        if (in_place) {
            assert_int_equal(bk_filter_add(g, "new", 3, NULL), BK_EIMMUTABLE);
            assert_int_equal(bk_filter_clear(g), BK_EIMMUTABLE);
        } else {
            /* A loaded chain grows on as the original would. */
            for (unsigned i = 1234; i < 2000; i++) {
                size_t len = make_key(key, "r", i);
                bool new_f, new_g;
                bk_filter_add(f, key, len, &new_f);
                bk_filter_add(g, key, len, &new_g);
                assert_int_equal(new_f, new_g);
            }
            assert_int_equal(sub_count(g), sub_count(f));
        }
        bk_filter_free(g);
    }
    release(&e);
    bk_filter_free(f);
}

static void test_format_round_trip_several_sub_filters(void **state)
{
    (void)state;
    check_format_round_trip(0);
    check_format_round_trip(BK_FLAG_BLOCKED_STAGES);
}

/* A blocked chain's records name their kind (1), all alike, with m a
 * whole number of 512-bit blocks; anything else is refused. */
static void test_format_rejects_bad_stage_kind(void **state)
{
    (void)state;
    bk_params params = { .capacity = 100, .fpr = 0.01, .flags = BK_FLAG_BLOCKED_STAGES };
    bk_filter *f = create_or_fail(&params);
    bk_filter *other = NULL; /* the flag is the scalable kind's alone */
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &params, &other), BK_EUNSUPPORTED);
    assert_null(other);
    char key[32];
    for (unsigned i = 0; i < 250; i++)
        bk_filter_add(f, key, make_key(key, "r", i), NULL);
    assert_int_equal(sub_count(f), 2);
    uint64_t keys = keys_added_of(f);
    encoded e = encode(&bk_scalable_ops, object_of(f));
    assert_int_equal(bk_load_le32(e.params + 40 + 12), 1);
    assert_int_equal(bk_load_le32(e.params + 72 + 12), 1);
    const struct {
        size_t offset;
        uint32_t value;
    } damage[] = {
        { 40 + 12, 2 }, /* unknown kind */
        { 40 + 12, 0 }, /* first record classic, second blocked */
        { 72 + 12, 0 }, /* first blocked, second classic */
        { 72 + 12, 2 }, /* unknown kind in a later record */
    };
    bk_filter *g = NULL;
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        uint8_t saved[4];
        memcpy(saved, e.params + damage[i].offset, 4);
        bk_store_le32(e.params + damage[i].offset, damage[i].value);
        assert_int_equal(decode(&e, f, keys, false, &g), BK_ECORRUPT);
        memcpy(e.params + damage[i].offset, saved, 4);
    }
    /* m not a whole number of blocks (payload size kept consistent) */
    uint64_t bits = bk_load_le64(e.params + 40);
    bk_store_le64(e.params + 40, bits - 64);
    assert_int_equal(decode(&e, f, keys, false, &g), BK_ECORRUPT);
    bk_store_le64(e.params + 40, bits);
    assert_int_equal(decode(&e, f, keys, false, &g), BK_OK);
    bk_filter_free(g);
    release(&e);
    bk_filter_free(f);
}

static void test_format_rejects_inconsistent_data(void **state)
{
    (void)state;
    bk_params params = { .capacity = 100, .fpr = 0.01 };
    bk_filter *f = create_or_fail(&params);
    char key[32];
    for (unsigned i = 0; i < 250; i++)
        bk_filter_add(f, key, make_key(key, "r", i), NULL);
    assert_int_equal(sub_count(f), 2);
    uint64_t keys = keys_added_of(f);
    encoded e = encode(&bk_scalable_ops, object_of(f));
    bk_filter *g = (bk_filter *)&e; /* sentinel */
    /* truncated parameter block */
    assert_int_equal(
        bk_scalable_ops.read(e.params, e.params_size - 1, e.payload, e.payload_size,
                             bk_scalable_ops.hasher(object_of(f)), keys, false, (void **)&g),
        BK_ECORRUPT);
    /* payload size that contradicts the sub-filters */
    assert_int_equal(
        bk_scalable_ops.read(e.params, e.params_size, e.payload, e.payload_size - 64,
                             bk_scalable_ops.hasher(object_of(f)), keys, false, (void **)&g),
        BK_ECORRUPT);
    /* keys in the header that contradict the sub-filters */
    assert_int_equal(decode(&e, f, keys + 1, false, &g), BK_ECORRUPT);
    /* each field damaged in turn */
    const struct {
        size_t offset;
        uint64_t value;
        int width;
        bk_status expected;
    } damage[] = {
        { 0, 0, 8, BK_ECORRUPT },                              /* initial capacity 0 */
        { 32, 0, 4, BK_ECORRUPT },                             /* max sub-filters 0 */
        { 32, 65, 4, BK_ECORRUPT },                            /* max beyond the limit */
        { 36, 3, 4, BK_ECORRUPT },                             /* count != records */
        { 36, 0, 4, BK_ECORRUPT },                             /* no sub-filter */
        { 40 + 8, 0, 4, BK_ECORRUPT },                         /* k = 0 */
        { 40 + 8, 256, 4, BK_ERANGE },                         /* k too large */
        { 40 + 12, 1, 4, BK_ECORRUPT },                        /* reserved field */
        { 40 + 24, 99, 8, BK_ECORRUPT },                       /* older sub-filter not full */
        { 40, UINT64_C(1) << 57, 8, BK_ERANGE },               /* m too large */
        { 40, 1, 8, BK_ECORRUPT },                             /* m contradicts the payload */
        { 72 + 24, 201, 8, BK_ECORRUPT },                      /* keys above capacity */
        { 104, 0, 8, BK_ECORRUPT },                            /* first share q = 0 */
        { 104, UINT64_C(0x3ff0000000000000), 8, BK_ECORRUPT }, /* q = 1 */
        { 104, UINT64_C(0x7ff8000000000000), 8, BK_ECORRUPT }, /* q NaN */
        { 104, UINT64_C(0x3fe0000000000000), 8, BK_ECORRUPT }, /* q = 0.5: contradicts m_0 */
    };
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        uint8_t saved[8];
        memcpy(saved, e.params + damage[i].offset, 8);
        for (int b = 0; b < damage[i].width; b++)
            e.params[damage[i].offset + b] = (uint8_t)(damage[i].value >> (8 * b));
        bk_status status = decode(&e, f, keys, false, &g);
        if (status != damage[i].expected)
            print_error("damage %zu: %d\n", i, status);
        assert_int_equal(status, damage[i].expected);
        memcpy(e.params + damage[i].offset, saved, 8);
    }
    /* a bit set beyond m in the padding */
    bk_stats first;
    bk_scalable_sub_stats(f, 0, &first);
    size_t padded = ((first.bits + 63) / 64 + 7) / 8 * 64;
    e.payload[padded - 1] ^= 0x80;
    assert_int_equal(decode(&e, f, keys, false, &g), BK_ECORRUPT);
    e.payload[padded - 1] ^= 0x80;
    assert_ptr_equal(g, (bk_filter *)&e);
    assert_int_equal(decode(&e, f, keys, false, &g), BK_OK);
    bk_filter_free(g);
    release(&e);
    bk_filter_free(f);
}

/* Through the container (src/format.c): buffer, file, load, map. */
static void test_file_round_trip_several_sub_filters(void **state)
{
    (void)state;
    static const uint8_t secret[BK_SECRET_KEY_BYTES] = { 9, 8, 7, 6, 5, 4, 3, 2, 1 };
    const bk_params cases[] = {
        { .capacity = 100, .fpr = 0.01, .seed = 3 },
        { .capacity = 64, .fpr = 0.001, .expansion = 3, .tightening = 0.7, .max_filters = 5 },
        { .capacity = 50, .hash_algorithm = BK_HASH_SIPHASH, .secret_key = secret },
        { .capacity = 1000, .max_filters = 1 }, /* one sub-filter, padded payload */
        { .capacity = 100, .fpr = 0.001, .seed = 5, .flags = BK_FLAG_BLOCKED_STAGES },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bk_filter *f;
        assert_int_equal(bk_filter_create(BK_KIND_SCALABLE, &cases[c], &f), BK_OK);
        char key[32];
        for (unsigned i = 0; i < 1500; i++)
            if (bk_filter_add(f, key, make_key(key, "key", i), NULL) != BK_OK)
                break;
        bk_stats s;
        bk_filter_stats(f, &s);
        assert_true(c == 3 ? s.filters == 1 : s.filters >= 3);
        bk_roundtrip_check(f, cases[c].secret_key, 3000);
        bk_filter_free(f);
    }
}

static const growth_golden goldens[] = {
    { "scalable-xxh3.bkf",
      BK_KIND_SCALABLE,
      { .capacity = 50, .fpr = 0.01 },
      200,
      1000,
      0,
      200 },
    { "scalable-siphash.bkf",
      BK_KIND_SCALABLE,
      { .capacity = 30,
        .fpr = 0.001,
        .expansion = 3,
        .tightening = 0.6,
        .max_filters = 8,
        .hash_algorithm = BK_HASH_SIPHASH,
        .secret_key = growth_golden_key },
      150,
      600,
      0,
      150 },
    { "scalable-blocked.bkf",
      BK_KIND_SCALABLE,
      { .capacity = 40, .fpr = 0.01, .seed = 7, .flags = BK_FLAG_BLOCKED_STAGES },
      300,
      1000,
      0,
      300 },
};

/* Files written when the format of this kind was fixed still load and
 * answer as they did (tests/data/README.md). */
static void test_golden_files(void **state)
{
    (void)state;
    for (size_t g = 0; g < sizeof goldens / sizeof goldens[0]; g++)
        growth_golden_check(&goldens[g]);
}

/* BK_FLAG_BLOCKED_STAGES belongs to the scalable kind: every other kind
 * refuses it (BK_EUNSUPPORTED, nothing created), and so does its design. */
static void test_blocked_stages_flag_is_scalable_only(void **state)
{
    (void)state;
    bk_kind kinds[32];
    size_t count = bk_kind_list(kinds, 32);
    assert_true(count <= 32);
    for (size_t i = 0; i < count; i++) {
        if (kinds[i] == BK_KIND_SCALABLE)
            continue;
        bk_params p = { .capacity = 1000, .fpr = 0.01, .flags = BK_FLAG_BLOCKED_STAGES };
        bk_filter *f = NULL;
        bk_status status = bk_filter_create(kinds[i], &p, &f);
        if (status == BK_EIMMUTABLE) /* a static kind is built, not created */
            status = bk_filter_build(kinds[i], &p, NULL, 0, &f);
        assert_int_equal(status, BK_EUNSUPPORTED);
        assert_null(f);
        bk_stats design;
        assert_int_equal(bk_kind_design(kinds[i], &p, &design), BK_EUNSUPPORTED);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-golden") == 0)
        return growth_golden_write(argv[2], goldens, sizeof goldens / sizeof goldens[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_sizing_at_most),
        cmocka_unit_test(test_add_reports_whether_new),
        cmocka_unit_test(test_fpr_near_target_over_growth),
        cmocka_unit_test(test_blocked_stages_fpr_over_growth),
        cmocka_unit_test(test_chain_without_share_keeps_its_schedule),
        cmocka_unit_test(test_levels_are_independent),
        cmocka_unit_test(test_no_false_negatives_with_odd_factors),
        cmocka_unit_test(test_non_scaling_mode),
        cmocka_unit_test(test_max_filters),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_batches_match_single_calls),
        cmocka_unit_test(test_copy_and_clear),
        cmocka_unit_test(test_generic_handle),
        cmocka_unit_test(test_format_round_trip_several_sub_filters),
        cmocka_unit_test(test_format_rejects_inconsistent_data),
        cmocka_unit_test(test_format_rejects_bad_stage_kind),
        cmocka_unit_test(test_file_round_trip_several_sub_filters),
        cmocka_unit_test(test_golden_files),
        cmocka_unit_test(test_blocked_stages_flag_is_scalable_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
