/*
 * tests/test_design.c -- bk_kind_design answers as bk_filter_create does.
 *
 * bloomkit/filter.h promises that bk_kind_design reports the errors
 * bk_filter_create would (for a static kind: bk_filter_build, given
 * `capacity` keys).  The sweep starts from a valid parameter set per kind
 * and changes every field, one at a time and two at a time, to values
 * that are valid, invalid or belong to another kind (bad hash algorithms,
 * a missing SipHash key, unknown or unsupported flags, out-of-range FPRs,
 * explicit m and k, the kind options); for each set it requires the same
 * status from both calls.
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

static const uint8_t secret_key[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

enum { FIELDS = 16, VALUES = 6, MAX_KEYS = 1000 };

/* Sets field `field` of `p` to its `choice`-th test value; false when the
 * field has no such value. */
static bool set_field(bk_params *p, int field, int choice)
{
    static const uint64_t capacities[] = { 0, 1, 37, MAX_KEYS };
    static const double fprs[] = { 0, 0.01, 0.5, 1.0, -0.1, NAN };
    static const double bits_per_key[] = { 0, 10, 0.5, -3, INFINITY };
    static const uint64_t bits[] = { 0, 1000, 1, 64 };
    static const unsigned hashes[] = { 0, 5, 1, 40 };
    static const unsigned algorithms[] = { BK_HASH_XXH3, BK_HASH_SIPHASH, BK_HASH_XXH64, 3,
                                           200 };
    static const unsigned flags[] = { 0,
                                      BK_FLAG_CONCURRENT,
                                      BK_FLAG_PARQUET_SIZE,
                                      BK_FLAG_AUTO_GROW,
                                      BK_FLAG_COUNTING_CLASSIC,
                                      0x80000000u };
    static const unsigned fingerprints[] = { 0, 8, 12, 16, 9, 32 };
    static const double expansions[] = { 0, 2, 1, 0.5, 1e6 };
    static const double tightenings[] = { 0, 0.5, 0.99, 1.0, -1 };
    static const unsigned max_filters[] = { 0, 1, 3, 64, 65 };
    static const uint64_t windows[] = { 0, 100, 1, 3 };
    static const unsigned generations[] = { 0, 2, 4, 1, 64, 65 };
#define PICK(array, target)                                  \
    do {                                                     \
        if (choice >= (int)(sizeof array / sizeof array[0])) \
            return false;                                    \
        (target) = array[choice];                            \
    } while (0)
    switch (field) {
    case 0: PICK(capacities, p->capacity); break;
    case 1: PICK(fprs, p->fpr); break;
    case 2: PICK(bits_per_key, p->bits_per_key); break;
    case 3: PICK(bits, p->bits); break;
    case 4: PICK(hashes, p->hashes); break;
    case 5: PICK(algorithms, p->hash_algorithm); break;
    case 6:
        if (choice > 1)
            return false;
        p->secret_key = choice == 0 ? NULL : secret_key;
        break;
    case 7: PICK(flags, p->flags); break;
    case 8: PICK(fingerprints, p->fingerprint_bits); break;
    case 9: PICK(expansions, p->expansion); break;
    case 10: PICK(tightenings, p->tightening); break;
    case 11: PICK(max_filters, p->max_filters); break;
    case 12: PICK(windows, p->window_keys); break;
    case 13: PICK(windows, p->window_seconds); break;
    case 14: PICK(generations, p->generations); break;
    case 15:
        if (choice > 1)
            return false;
        p->seed = choice == 0 ? 0 : 0x9e3779b97f4a7c15ULL;
        break;
    default: return false;
    }
#undef PICK
    return true;
}

/* A valid starting point for `kind`. */
static bk_params base_params(bk_kind kind)
{
    bk_params p = { .capacity = 37 };
    if (kind == BK_KIND_WINDOW)
        p.window_keys = 100;
    return p;
}

static bk_status create_status(bk_kind kind, const bk_params *params)
{
    bk_filter *filter = NULL;
    bk_status status;
    if (bk_kind_is_static(kind)) {
        static uint64_t values[MAX_KEYS];
        static bk_key keys[MAX_KEYS];
        size_t count = params->capacity < MAX_KEYS ? (size_t)params->capacity : MAX_KEYS;
        for (size_t i = 0; i < count; i++) {
            values[i] = i * 0x9e3779b97f4a7c15ULL;
            keys[i] = (bk_key){ &values[i], sizeof values[i] };
        }
        status = bk_filter_build(kind, params, keys, count, &filter);
    } else {
        status = bk_filter_create(kind, params, &filter);
    }
    bk_filter_free(filter);
    return status;
}

static unsigned compared, mismatches;

static void compare(bk_kind kind, const bk_params *params, int f1, int c1, int f2, int c2)
{
    bk_stats stats;
    bk_status designed = bk_kind_design(kind, params, &stats);
    bk_status created = create_status(kind, params);
    compared++;
    if (designed != created) {
        mismatches++;
        print_message("%s: field %d value %d, field %d value %d: design %s, create %s\n",
                      bk_kind_name(kind), f1, c1, f2, c2, bk_strerror(designed),
                      bk_strerror(created));
    }
}

static void sweep(bk_kind kind)
{
    bk_params base = base_params(kind);
    compare(kind, &base, -1, 0, -1, 0);
    assert_int_equal(create_status(kind, &base), BK_OK);
    for (int f1 = 0; f1 < FIELDS; f1++) {
        for (int c1 = 0; c1 < VALUES; c1++) {
            bk_params one = base;
            if (!set_field(&one, f1, c1))
                continue;
            compare(kind, &one, f1, c1, -1, 0);
            for (int f2 = f1 + 1; f2 < FIELDS; f2++) {
                for (int c2 = 0; c2 < VALUES; c2++) {
                    bk_params two = one;
                    if (set_field(&two, f2, c2))
                        compare(kind, &two, f1, c1, f2, c2);
                }
            }
        }
    }
}

static void test_design_errors_match_create(void **state)
{
    (void)state;
    for (int kind = BK_KIND_NONE + 1; kind < 256; kind++) /* every kind this build has */
        if (bk_kind_available((bk_kind)kind))
            sweep((bk_kind)kind);
    assert_true(compared > 10000);
    assert_int_equal(mismatches, 0);
}

/* NULL arguments and unknown kinds: the same errors too. */
static void test_design_argument_errors(void **state)
{
    (void)state;
    bk_params params = { .capacity = 10 };
    bk_stats stats;
    bk_filter *filter = NULL;
    assert_int_equal(bk_kind_design(BK_KIND_NONE, &params, &stats), BK_EKIND);
    assert_int_equal(bk_filter_create(BK_KIND_NONE, &params, &filter), BK_EKIND);
    assert_int_equal(bk_kind_design(BK_KIND_BLOOM, NULL, &stats), BK_EINVAL);
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, NULL, &filter), BK_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_design_errors_match_create),
        cmocka_unit_test(test_design_argument_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
