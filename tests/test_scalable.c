/*
 * tests/test_scalable.c -- the scalable Bloom filter: growth, the chain's
 * FPR bound over 100x growth, no false negatives, limits, independence of
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

static size_t make_key(char *buffer, const char *prefix, unsigned i)
{
    return (size_t)snprintf(buffer, 32, "%s:%u", prefix, i);
}

static double binomial_upper(double trials, double p)
{
    return trials * p + 4 * sqrt(trials * p * (1 - p));
}

static bk_scalable *create_or_fail(const bk_params *p)
{
    bk_scalable *f = NULL;
    assert_int_equal(bk_scalable_create(p, &f), BK_OK);
    assert_non_null(f);
    return f;
}

static void test_defaults(void **state)
{
    (void)state;
    bk_params p = { .capacity = 1000 };
    bk_scalable *f = create_or_fail(&p);
    assert_int_equal(bk_scalable_filter_count(f), 1);
    assert_true(bk_scalable_target_fpr(f) == 0.01);
    assert_true(bk_scalable_expansion(f) == 2.0);
    assert_true(bk_scalable_tightening(f) == 0.5);
    assert_int_equal(bk_scalable_max_filters(f), BK_SCALABLE_MAX_FILTERS);
    bk_stats first;
    assert_int_equal(bk_scalable_filter_stats(f, 0, &first), BK_OK);
    assert_int_equal(first.capacity, 1000);
    assert_true(first.target_fpr <= 0.01 * 0.5); /* p0 = p (1 - r) */
    assert_int_equal(bk_scalable_filter_stats(f, 1, &first), BK_ERANGE);
    bk_scalable_free(f);
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
    bk_scalable *f = create_or_fail(&p);
    bool was_new = false;
    assert_int_equal(bk_scalable_add(f, "alice", 5, &was_new), BK_OK);
    assert_true(was_new);
    assert_true(bk_scalable_contains(f, "alice", 5));
    assert_int_equal(bk_scalable_add(f, "alice", 5, &was_new), BK_OK);
    assert_false(was_new);
    assert_int_equal(bk_scalable_keys_added(f), 1);
    bk_scalable_free(f);
}

/* The paper's claim, checked: 100 x the initial capacity, every key still
 * found, the chain's FPR below its bound 1 - prod(1 - p_i) <= p0/(1-r). */
static void test_fpr_bound_over_100x_growth(void **state)
{
    (void)state;
    const unsigned initial = 1000, added = 100 * initial, absent = 1000000;
    const double p = 0.01, r = 0.5;
    bk_params params = { .capacity = initial, .fpr = p };
    bk_scalable *f = create_or_fail(&params);
    char key[32];
    unsigned not_new = 0;
    for (unsigned i = 0; i < added; i++) {
        bool was_new = false;
        assert_int_equal(bk_scalable_add(f, key, make_key(key, "user", i), &was_new), BK_OK);
        not_new += !was_new; /* a false positive of the chain at that moment */
    }
    /* Capacities 1000, 2000, ... 64000: seven sub-filters hold 127,000. */
    assert_int_equal(bk_scalable_filter_count(f), 7);
    double none = 1, sum = 0;
    for (unsigned i = 0; i < 7; i++) {
        bk_stats sub;
        assert_int_equal(bk_scalable_filter_stats(f, i, &sub), BK_OK);
        assert_int_equal(sub.capacity, (uint64_t)initial << i);
        if (i < 6)
            assert_int_equal(sub.keys_added, sub.capacity); /* filled exactly */
        double p_i = p * (1 - r) * pow(r, i);
        assert_true(sub.target_fpr <= p_i); /* each sub-filter within its share */
        none *= 1 - sub.target_fpr;
        sum += sub.target_fpr;
    }
    double bound = bk_scalable_fpr_bound(f);
    assert_true(fabs(bound - (1 - none)) < 1e-15);
    assert_true(bound <= sum && sum <= p * (1 - r) / (1 - r));
    assert_true(bound < p);
    assert_int_equal(bk_scalable_keys_added(f), added - not_new);
    assert_true(not_new <= binomial_upper(added, p));

    for (unsigned i = 0; i < added; i++)
        assert_true(bk_scalable_contains(f, key, make_key(key, "user", i)));
    unsigned false_positives = 0;
    for (unsigned i = 0; i < absent; i++)
        false_positives += bk_scalable_contains(f, key, make_key(key, "guest", i));
    print_message("scalable: %u keys, %u sub-filters, FPR %.5f, bound %.5f\n", added,
                  bk_scalable_filter_count(f), (double)false_positives / absent, bound);
    assert_true(false_positives <= binomial_upper(absent, bound));
    bk_stats s;
    bk_scalable_stats(f, &s);
    assert_int_equal(s.kind, BK_KIND_SCALABLE);
    assert_int_equal(s.filters, 7);
    assert_int_equal(s.capacity, 127 * initial);
    assert_true(s.current_fpr < bound);           /* no sub-filter beyond capacity */
    assert_false(s.past_design_point);
    print_message("scalable: estimated from the fill %.5f, %.2f bits per key added\n",
                  s.current_fpr, (double)s.bits / (double)s.keys_added);
    bk_scalable_free(f);
}

/* A false positive in level 0 tells nothing about level 1: the levels probe
 * with independent sequences (src/level_hash.h), so the joint count is the
 * product of the rates. */
static void test_levels_are_independent(void **state)
{
    (void)state;
    bk_params params = { .capacity = 2000, .fpr = 0.2, .expansion = 1, .tightening = 0.9 };
    bk_scalable *f = create_or_fail(&params);
    char key[32];
    for (unsigned i = 0; i < 4000; i++)
        assert_int_equal(bk_scalable_add(f, key, make_key(key, "member", i), NULL), BK_OK);
    assert_int_equal(bk_scalable_filter_count(f), 2);
    const unsigned absent = 200000;
    unsigned in0 = 0, in1 = 0, both = 0;
    for (unsigned i = 0; i < absent; i++) {
        bk_hash h = bk_scalable_hash(f, key, make_key(key, "other", i));
        bool a = bk_scalable_filter_contains_hash(f, 0, h);
        bool b = bk_scalable_filter_contains_hash(f, 1, h);
        in0 += a;
        in1 += b;
        both += a && b;
    }
    double joint = ((double)in0 / absent) * ((double)in1 / absent);
    print_message("levels: FPR %.4f and %.4f, joint %.5f (product %.5f)\n", (double)in0 / absent,
                  (double)in1 / absent, (double)both / absent, joint);
    assert_true(both <= binomial_upper(absent, joint));
    assert_false(bk_scalable_filter_contains_hash(f, 2, bk_scalable_hash(f, "x", 1)));
    bk_scalable_free(f);
}

/* Every key whose add was accepted is in the chain, whatever its level. */
static void test_no_false_negatives_with_odd_factors(void **state)
{
    (void)state;
    bk_params params = { .capacity = 37, .fpr = 0.05, .expansion = 1.5, .tightening = 0.8 };
    bk_scalable *f = create_or_fail(&params);
    char key[32];
    for (unsigned i = 0; i < 20000; i++)
        assert_int_equal(bk_scalable_add(f, key, make_key(key, "k", i), NULL), BK_OK);
    for (unsigned i = 0; i < 20000; i++)
        assert_true(bk_scalable_contains(f, key, make_key(key, "k", i)));
    assert_true(bk_scalable_fpr_bound(f) < 0.05);
    bk_scalable_free(f);
}

static void test_non_scaling_mode(void **state)
{
    (void)state;
    bk_params params = { .capacity = 100, .fpr = 0.01, .max_filters = 1 };
    bk_scalable *f = create_or_fail(&params);
    char key[32];
    unsigned i = 0, accepted = 0;
    bk_status status = BK_OK;
    while (status == BK_OK) {
        bool was_new = false;
        status = bk_scalable_add(f, key, make_key(key, "k", i++), &was_new);
        accepted += status == BK_OK && was_new;
    }
    assert_int_equal(status, BK_EFULL);
    assert_int_equal(accepted, 100);
    bk_stats before, after;
    bk_scalable_stats(f, &before);
    assert_true(before.past_design_point); /* full and may not grow */
    /* Refused again, nothing changes; a key already there is still fine. */
    assert_int_equal(bk_scalable_add(f, "refused", 7, NULL), BK_EFULL);
    bk_scalable_stats(f, &after);
    assert_int_equal(after.keys_added, before.keys_added);
    assert_true(after.fill_ratio == before.fill_ratio);
    assert_int_equal(bk_scalable_filter_count(f), 1);
    bool was_new = true;
    assert_int_equal(bk_scalable_add(f, key, make_key(key, "k", 0), &was_new), BK_OK);
    assert_false(was_new);
    bk_scalable_free(f);
}

static void test_max_filters(void **state)
{
    (void)state;
    bk_params params = { .capacity = 10, .fpr = 0.01, .max_filters = 3 };
    bk_scalable *f = create_or_fail(&params);
    char key[32];
    unsigned i = 0;
    while (bk_scalable_add(f, key, make_key(key, "k", i++), NULL) == BK_OK)
        ;
    assert_int_equal(bk_scalable_filter_count(f), 3);
    assert_int_equal(bk_scalable_keys_added(f), 10 + 20 + 40);
    bk_scalable_free(f);
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
        bk_scalable *f = (bk_scalable *)&cases[i]; /* sentinel: must stay untouched */
        bk_status status = bk_scalable_create(&cases[i].params, &f);
        if (status != cases[i].expected)
            print_error("case %zu: %d\n", i, status);
        assert_int_equal(status, cases[i].expected);
        assert_ptr_equal(f, (bk_scalable *)&cases[i]);
        bk_stats design;
        assert_int_equal(bk_kind_design(BK_KIND_SCALABLE, &cases[i].params, &design),
                         cases[i].expected);
    }
    assert_int_equal(bk_scalable_create(NULL, &(bk_scalable *){ NULL }), BK_EINVAL);
    bk_params ok = { .capacity = 10 };
    assert_int_equal(bk_scalable_create(&ok, NULL), BK_EINVAL);
}

static void test_bad_input(void **state)
{
    (void)state;
    bk_params params = { .capacity = 10 };
    bk_scalable *f = create_or_fail(&params);
    assert_int_equal(bk_scalable_add(NULL, "a", 1, NULL), BK_EINVAL);
    assert_int_equal(bk_scalable_add(f, NULL, 3, NULL), BK_EINVAL);
    assert_int_equal(bk_scalable_add_hash(NULL, (bk_hash){ 1, 2 }, NULL), BK_EINVAL);
    assert_false(bk_scalable_contains(NULL, "a", 1));
    assert_false(bk_scalable_contains(f, NULL, 3));
    bk_key bad[2] = { { "a", 1 }, { NULL, 4 } };
    size_t fresh = 99;
    assert_int_equal(bk_scalable_add_batch(f, bad, 2, &fresh), BK_EINVAL);
    assert_int_equal(fresh, 99);
    assert_int_equal(bk_scalable_keys_added(f), 0); /* nothing changed */
    assert_int_equal(bk_scalable_contains_batch(f, bad, 2, NULL), 0);
    assert_int_equal(bk_scalable_filter_stats(f, 0, NULL), BK_EINVAL);
    assert_int_equal(bk_scalable_copy(NULL, &(bk_scalable *){ NULL }), BK_EINVAL);
    assert_int_equal(bk_scalable_clear(NULL), BK_EINVAL);
    bk_scalable_free(NULL);
    bk_scalable_free(f);
}

static void test_batches_match_single_calls(void **state)
{
    (void)state;
    bk_params params = { .capacity = 50, .fpr = 0.01 };
    bk_scalable *one = create_or_fail(&params), *batch = create_or_fail(&params);
    enum { N = 1000 };
    static char text[N][32];
    bk_key keys[N];
    size_t single_new = 0;
    for (unsigned i = 0; i < N; i++) {
        keys[i].data = text[i];
        keys[i].len = make_key(text[i], "b", i % 700); /* with repeats */
        bool was_new;
        assert_int_equal(bk_scalable_add(one, keys[i].data, keys[i].len, &was_new), BK_OK);
        single_new += was_new;
    }
    size_t batch_new = 0;
    assert_int_equal(bk_scalable_add_batch(batch, keys, N, &batch_new), BK_OK);
    assert_int_equal(batch_new, single_new);
    assert_int_equal(bk_scalable_filter_count(one), bk_scalable_filter_count(batch));
    bool results[N];
    assert_int_equal(bk_scalable_contains_batch(batch, keys, N, results), N);
    for (unsigned i = 0; i < N; i++)
        assert_true(results[i]);
    bk_scalable_free(one);
    bk_scalable_free(batch);
}

static void test_copy_and_clear(void **state)
{
    (void)state;
    bk_params params = { .capacity = 20, .fpr = 0.01 };
    bk_scalable *f = create_or_fail(&params);
    char key[32];
    for (unsigned i = 0; i < 200; i++)
        bk_scalable_add(f, key, make_key(key, "c", i), NULL);
    bk_scalable *copy;
    assert_int_equal(bk_scalable_copy(f, &copy), BK_OK);
    assert_int_equal(bk_scalable_filter_count(copy), bk_scalable_filter_count(f));
    assert_int_equal(bk_scalable_keys_added(copy), bk_scalable_keys_added(f));
    assert_int_equal(bk_scalable_clear(f), BK_OK);
    assert_int_equal(bk_scalable_filter_count(f), 1);
    assert_int_equal(bk_scalable_keys_added(f), 0);
    unsigned still = 0;
    for (unsigned i = 0; i < 200; i++) {
        assert_true(bk_scalable_contains(copy, key, make_key(key, "c", i)));
        still += bk_scalable_contains(f, key, make_key(key, "c", i));
    }
    assert_int_equal(still, 0); /* an empty filter reports nothing */
    bk_scalable_free(copy);
    bk_scalable_free(f);
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

static bk_status decode(const encoded *e, const bk_scalable *like, uint64_t keys, bool in_place,
                        bk_scalable **out)
{
    return bk_scalable_ops.read(e->params, e->params_size, e->payload, e->payload_size,
                                bk_scalable_hasher(like), keys, in_place, (void **)out);
}

static void test_format_round_trip_several_sub_filters(void **state)
{
    (void)state;
    bk_params params = { .capacity = 100, .fpr = 0.01, .seed = 42 };
    bk_scalable *f = create_or_fail(&params);
    char key[32];
    for (unsigned i = 0; i < 1234; i++)
        bk_scalable_add(f, key, make_key(key, "r", i), NULL);
    assert_int_equal(bk_scalable_filter_count(f), 4);
    encoded e = encode(&bk_scalable_ops, f);
    assert_int_equal(e.params_size, 40 + 32 * 4);
    assert_int_equal(e.payload_size % 64, 0);
    const uint64_t keys = bk_scalable_keys_added(f);
    for (int in_place = 1; in_place >= 0; in_place--) {
        bk_scalable *g = NULL;
        assert_int_equal(decode(&e, f, keys, in_place, &g), BK_OK);
        bk_stats a, b;
        bk_scalable_stats(f, &a);
        bk_scalable_stats(g, &b);
        assert_memory_equal(&a, &b, sizeof a);
        for (unsigned i = 0; i < 3000; i++) {
            size_t len = make_key(key, "r", i);
            assert_int_equal(bk_scalable_contains(f, key, len), bk_scalable_contains(g, key, len));
        }
        if (in_place) {
            assert_int_equal(bk_scalable_add(g, "new", 3, NULL), BK_EIMMUTABLE);
            assert_int_equal(bk_scalable_clear(g), BK_EIMMUTABLE);
        } else {
            /* A loaded chain grows on as the original would. */
            for (unsigned i = 1234; i < 2000; i++) {
                size_t len = make_key(key, "r", i);
                bool new_f, new_g;
                bk_scalable_add(f, key, len, &new_f);
                bk_scalable_add(g, key, len, &new_g);
                assert_int_equal(new_f, new_g);
            }
            assert_int_equal(bk_scalable_filter_count(g), bk_scalable_filter_count(f));
        }
        bk_scalable_free(g);
    }
    release(&e);
    bk_scalable_free(f);
}

static void test_format_rejects_inconsistent_data(void **state)
{
    (void)state;
    bk_params params = { .capacity = 100, .fpr = 0.01 };
    bk_scalable *f = create_or_fail(&params);
    char key[32];
    for (unsigned i = 0; i < 250; i++)
        bk_scalable_add(f, key, make_key(key, "r", i), NULL);
    assert_int_equal(bk_scalable_filter_count(f), 2);
    uint64_t keys = bk_scalable_keys_added(f);
    encoded e = encode(&bk_scalable_ops, f);
    bk_scalable *g = (bk_scalable *)&e; /* sentinel */
    /* truncated parameter block */
    assert_int_equal(bk_scalable_ops.read(e.params, e.params_size - 1, e.payload, e.payload_size,
                                          bk_scalable_hasher(f), keys, false, (void **)&g),
                     BK_ECORRUPT);
    /* payload size that contradicts the sub-filters */
    assert_int_equal(bk_scalable_ops.read(e.params, e.params_size, e.payload, e.payload_size - 64,
                                          bk_scalable_hasher(f), keys, false, (void **)&g),
                     BK_ECORRUPT);
    /* keys in the header that contradict the sub-filters */
    assert_int_equal(decode(&e, f, keys + 1, false, &g), BK_ECORRUPT);
    /* each field damaged in turn */
    const struct { size_t offset; uint64_t value; int width; bk_status expected; } damage[] = {
        { 0, 0, 8, BK_ECORRUPT },                       /* initial capacity 0 */
        { 32, 0, 4, BK_ECORRUPT },                      /* max sub-filters 0 */
        { 32, 65, 4, BK_ECORRUPT },                     /* max beyond the limit */
        { 36, 3, 4, BK_ECORRUPT },                      /* count != records */
        { 36, 0, 4, BK_ECORRUPT },                      /* no sub-filter */
        { 40 + 8, 0, 4, BK_ECORRUPT },                  /* k = 0 */
        { 40 + 8, 256, 4, BK_ERANGE },                  /* k too large */
        { 40 + 12, 1, 4, BK_ECORRUPT },                 /* reserved field */
        { 40 + 24, 99, 8, BK_ECORRUPT },                /* older sub-filter not full */
        { 40, UINT64_C(1) << 57, 8, BK_ERANGE },        /* m too large */
        { 40, 1, 8, BK_ECORRUPT },                      /* m contradicts the payload */
        { 72 + 24, 201, 8, BK_ECORRUPT },               /* keys above capacity */
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
    bk_scalable_filter_stats(f, 0, &first);
    size_t padded = ((first.bits + 63) / 64 + 7) / 8 * 64;
    e.payload[padded - 1] ^= 0x80;
    assert_int_equal(decode(&e, f, keys, false, &g), BK_ECORRUPT);
    e.payload[padded - 1] ^= 0x80;
    assert_ptr_equal(g, (bk_scalable *)&e);
    assert_int_equal(decode(&e, f, keys, false, &g), BK_OK);
    bk_scalable_free(g);
    release(&e);
    bk_scalable_free(f);
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
    { "scalable-xxh3.bkf", BK_KIND_SCALABLE, { .capacity = 50, .fpr = 0.01 }, 200, 1000, 0, 200 },
    { "scalable-siphash.bkf", BK_KIND_SCALABLE,
      { .capacity = 30, .fpr = 0.001, .expansion = 3, .tightening = 0.6, .max_filters = 8,
        .hash_algorithm = BK_HASH_SIPHASH, .secret_key = growth_golden_key },
      150, 600, 0, 150 },
};

/* Files written when the format of this kind was fixed still load and
 * answer as they did (tests/data/README.md). */
static void test_golden_files(void **state)
{
    (void)state;
    for (size_t g = 0; g < sizeof goldens / sizeof goldens[0]; g++)
        growth_golden_check(&goldens[g]);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-golden") == 0)
        return growth_golden_write(argv[2], goldens, sizeof goldens / sizeof goldens[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_sizing_at_most),
        cmocka_unit_test(test_add_reports_whether_new),
        cmocka_unit_test(test_fpr_bound_over_100x_growth),
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
        cmocka_unit_test(test_file_round_trip_several_sub_filters),
        cmocka_unit_test(test_golden_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
