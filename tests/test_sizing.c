/*
 * tests/test_sizing.c -- the formulas of src/sizing.c against the figures
 * of the literature, and the rejection of bad parameters.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"

static void test_million_keys_at_one_percent(void **state)
{
    (void)state;
    bk_sizing s;
    assert_int_equal(bk_size_for_fpr(1000000, 0.01, &s), BK_OK);
    assert_int_equal(s.bits, 9585059);
    assert_int_equal(s.hashes, 7);
    assert_true(fabs(s.bits_per_key - 9.585059) < 1e-9);
    assert_true(fabs(s.lower_bound_bits - log2(1 / s.predicted_fpr)) < 1e-12);
    assert_true(fabs(s.space_ratio - 1.44) < 0.01);
    assert_true(fabs(s.design_fill_ratio - (1 - exp(-7.0 / 9.585059))) < 1e-12);
    assert_true(fabs(s.design_fill_ratio - 0.5) < 0.02); /* about half the bits set */
}

static void test_bits_per_key_rule(void **state)
{
    (void)state;
    bk_sizing one, tenth, hundredth;
    assert_int_equal(bk_size_for_fpr(1000000, 0.01, &one), BK_OK);
    assert_int_equal(bk_size_for_fpr(1000000, 0.001, &tenth), BK_OK);
    assert_int_equal(bk_size_for_fpr(1000000, 0.0001, &hundredth), BK_OK);
    assert_true(fabs(one.bits_per_key - 9.6) < 0.05);    /* 9.6 bits at 1% */
    assert_true(fabs(tenth.bits_per_key - 14.4) < 0.05); /* 14.4 bits at 0.1% */
    /* every factor of ten costs 4.8 more bits per key */
    assert_true(fabs(tenth.bits_per_key - one.bits_per_key - 4.79) < 0.01);
    assert_true(fabs(hundredth.bits_per_key - tenth.bits_per_key - 4.79) < 0.01);
}

static void test_seed_table_k_values(void **state)
{
    (void)state;
    /* The textbook table of the best k for bits per key 4..20. */
    const struct {
        double bits_per_key;
        unsigned k;
    } rows[] = {
        { 4, 3 }, { 6, 4 }, { 8, 6 }, { 10, 7 }, { 12, 8 }, { 16, 11 }, { 20, 14 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bk_sizing s;
        assert_int_equal(bk_size_for_bits_per_key(100000, rows[i].bits_per_key, &s), BK_OK);
        assert_int_equal(s.hashes, rows[i].k);
        assert_int_equal(s.bits, (uint64_t)(100000 * rows[i].bits_per_key));
    }
    /* and the predicted column of that table */
    assert_true(fabs(bk_predicted_fpr(100000, 400000, 3) - 0.146892) < 5e-7);
    assert_true(fabs(bk_predicted_fpr(100000, 1000000, 7) - 0.008194) < 5e-7);
    assert_true(fabs(bk_predicted_fpr(100000, 2000000, 14) - 0.000067) < 5e-7);
}

static void test_explicit_and_params(void **state)
{
    (void)state;
    bk_sizing s;
    assert_int_equal(bk_size_explicit(1000, 12345, 3, &s), BK_OK);
    assert_int_equal(s.bits, 12345);
    assert_int_equal(s.hashes, 3);
    bk_params p = { .capacity = 1000, .bits = 777, .hashes = 2 };
    assert_int_equal(bk_size_from_params(&p, &s), BK_OK);
    assert_int_equal(s.bits, 777);
    bk_params only_bits = { .capacity = 1000, .bits = 777 };
    assert_int_equal(bk_size_from_params(&only_bits, &s), BK_EINVAL);
    bk_params by_default = { .capacity = 1000000 };
    assert_int_equal(bk_size_from_params(&by_default, &s), BK_OK);
    assert_int_equal(s.bits, 9585059); /* fpr defaults to 1% */
    bk_params by_bpk = { .capacity = 1000, .bits_per_key = 10 };
    assert_int_equal(bk_size_from_params(&by_bpk, &s), BK_OK);
    assert_int_equal(s.bits, 10000);
    assert_int_equal(s.hashes, 7);
}

static void test_rejects_bad_parameters(void **state)
{
    (void)state;
    bk_sizing s;
    memset(&s, 0x77, sizeof s);
    bk_sizing before = s;
    assert_int_equal(bk_size_for_fpr(0, 0.01, &s), BK_EINVAL);
    assert_int_equal(bk_size_for_fpr(1000, 0, &s), BK_EINVAL);
    assert_int_equal(bk_size_for_fpr(1000, 1, &s), BK_EINVAL);
    assert_int_equal(bk_size_for_fpr(1000, -0.5, &s), BK_EINVAL);
    assert_int_equal(bk_size_for_fpr(1000, 2, &s), BK_EINVAL);
    assert_int_equal(bk_size_for_fpr(1000, NAN, &s), BK_EINVAL);
    assert_int_equal(bk_size_for_fpr(1000, 0.01, NULL), BK_EINVAL);
    assert_int_equal(bk_size_for_bits_per_key(1000, NAN, &s), BK_EINVAL);
    assert_int_equal(bk_size_for_bits_per_key(1000, INFINITY, &s), BK_EINVAL);
    assert_int_equal(bk_size_for_bits_per_key(1000, 0.5, &s), BK_EINVAL);
    assert_int_equal(bk_size_explicit(1000, 0, 3, &s), BK_EINVAL);
    assert_int_equal(bk_size_explicit(1000, 100, 0, &s), BK_EINVAL);
    /* m that overflows the supported range */
    assert_int_equal(bk_size_for_fpr(UINT64_MAX, 0.01, &s), BK_ERANGE);
    assert_int_equal(bk_size_for_fpr((uint64_t)1 << 53, 1e-9, &s), BK_ERANGE);
    assert_int_equal(bk_size_for_bits_per_key(UINT64_MAX / 2, 64, &s), BK_ERANGE);
    assert_int_equal(bk_size_explicit(1000, BK_MAX_BITS + 1, 3, &s), BK_ERANGE);
    assert_int_equal(bk_size_explicit(1000, 100, BK_MAX_HASHES + 1, &s), BK_ERANGE);
    assert_int_equal(bk_size_for_fpr(10, 1e-300, &s), BK_ERANGE); /* k would exceed 255 */
    assert_memory_equal(&s, &before, sizeof s);
    /* the largest accepted size still works: 2^36 bits and beyond */
    assert_int_equal(bk_size_explicit(1000, (uint64_t)1 << 36, 7, &s), BK_OK);
    assert_int_equal(s.bits, (uint64_t)1 << 36);
    assert_int_equal(bk_size_explicit(1000, BK_MAX_BITS, 7, &s), BK_OK);
}

static void test_estimates_invert_the_fill(void **state)
{
    (void)state;
    const uint64_t m = 1000000;
    const unsigned k = 7;
    /* the expected number of set bits after n keys maps back to n */
    for (uint64_t n = 1000; n <= 200000; n *= 2) {
        double set_bits = (double)m * bk_expected_fill(n, m, k);
        double estimate = bk_estimate_keys(m, k, (uint64_t)llround(set_bits));
        assert_true(fabs(estimate - (double)n) / (double)n < 0.001);
    }
    assert_true(bk_estimate_keys(m, k, 0) == 0.0);
    assert_true(isfinite(bk_estimate_keys(m, k, m))); /* saturated: finite lower bound */
    assert_true(fabs(bk_fpr_from_fill(0.5, 7) - 0.0078125) < 1e-12);
    assert_true(fabs(bk_lower_bound_bits(0.01) - 6.643856) < 1e-6);
    assert_false(signbit(bk_lower_bound_bits(1.0))); /* "0.00", not "-0.00" */
    assert_true(bk_lower_bound_bits(1.0) == 0.0);
}

static void test_design_point(void **state)
{
    (void)state;
    const uint64_t n = 100000, m = 958506;
    const unsigned k = 7;
    assert_false(bk_fill_past_design_point(bk_expected_fill(n, m, k), n, m, k));
    assert_false(bk_fill_past_design_point(bk_expected_fill(n * 104 / 100, m, k), n, m, k));
    assert_true(bk_fill_past_design_point(bk_expected_fill(n * 106 / 100, m, k), n, m, k));
    assert_true(bk_fill_past_design_point(bk_expected_fill(2 * n, m, k), n, m, k));
    /* the threshold in keys agrees with the fill test on both sides */
    double keys = bk_design_point_keys(n, m, k);
    assert_true(keys > 1.05 * n && keys < 1.06 * n);
    assert_false(
        bk_fill_past_design_point(-expm1(-(double)k * (keys - 1) / (double)m), n, m, k));
    assert_true(bk_fill_past_design_point(-expm1(-(double)k * (keys + 1) / (double)m), n, m, k));
    assert_true(bk_design_point_keys(n, 0, 0) == n * BK_DESIGN_MARGIN);
}

static void test_set_estimates(void **state)
{
    (void)state;
    const uint64_t m = 200000;
    const unsigned k = 7;
    uint64_t a = (uint64_t)llround(m * bk_expected_fill(12000, m, k));
    uint64_t u = (uint64_t)llround(m * bk_expected_fill(20000, m, k));
    bk_set_estimate e;
    bk_estimate_sets(m, k, a, a, u, &e);
    assert_true(fabs(e.a - 12000) < 12);
    assert_true(fabs(e.union_size - 20000) < 20);
    assert_true(fabs(e.intersection_size - 4000) < 40);
    assert_true(fabs(e.jaccard - 0.2) < 0.003);
    /* disjoint sets never give a negative intersection */
    bk_estimate_sets(m, k, a, a, m - 1, &e);
    assert_true(e.intersection_size == 0.0 && e.jaccard == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_million_keys_at_one_percent),
        cmocka_unit_test(test_bits_per_key_rule),
        cmocka_unit_test(test_seed_table_k_values),
        cmocka_unit_test(test_explicit_and_params),
        cmocka_unit_test(test_rejects_bad_parameters),
        cmocka_unit_test(test_estimates_invert_the_fill),
        cmocka_unit_test(test_design_point),
        cmocka_unit_test(test_set_estimates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
