/*
 * tests/test_memory.c -- the huge-page policy of src/memory.c: reading the
 * kernel's free lists (/proc/buddyinfo), the choice to hint before or
 * after populating, the environment's overrides, and zeroed blocks under
 * every policy.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "memory.h"

/* A machine's /proc/buddyinfo: free blocks of order 0..10 per zone. */
static const char buddyinfo[] = "Node 0, zone      DMA      0      0      0      0      0      "
                                "0      0      0      1      1      3 \n"
                                "Node 0, zone    DMA32      0      4      2      2      1      "
                                "2      0      3      3      4    750 \n"
                                "Node 0, zone   Normal  11036   7354   5150   4115   3651   "
                                "1920    791    776    505     61   3607 \n";

static void test_buddyinfo_counts_blocks_of_the_order_and_above(void **state)
{
    (void)state;
    /* order 9: each order-9 block is one, each order-10 block two */
    uint64_t expected = (1 + 4 + 61) + 2 * (3 + 750 + 3607);
    assert_int_equal(bk_buddyinfo_free_blocks(buddyinfo, 9), expected);
    /* order 10 counts only the order-10 blocks */
    assert_int_equal(bk_buddyinfo_free_blocks(buddyinfo, 10), 3 + 750 + 3607);
    /* order 8 counts order 8 once, 9 twice, 10 four times */
    uint64_t order8 = (1 + 3 + 505) + 2 * (1 + 4 + 61) + 4 * (3 + 750 + 3607);
    assert_int_equal(bk_buddyinfo_free_blocks(buddyinfo, 8), order8);
}

static void test_buddyinfo_without_zones_is_unknown(void **state)
{
    (void)state;
    assert_true(bk_buddyinfo_free_blocks("", 9) == UINT64_MAX);
    assert_true(bk_buddyinfo_free_blocks("no such file\n", 9) == UINT64_MAX);
    /* a zone whose counts stop before the order has no such blocks */
    assert_int_equal(bk_buddyinfo_free_blocks("Node 0, zone Normal 5 6\n", 9), 0);
}

static void test_auto_hints_before_populating_only_with_free_blocks_to_spare(void **state)
{
    (void)state;
    size_t ten_pages = 10 * BK_HUGE_THRESHOLD;
    assert_true(bk_huge_hint_at_population(BK_HUGE_AUTO, ten_pages, 20));
    assert_true(bk_huge_hint_at_population(BK_HUGE_AUTO, ten_pages, 1000));
    assert_false(bk_huge_hint_at_population(BK_HUGE_AUTO, ten_pages, 19));
    assert_false(bk_huge_hint_at_population(BK_HUGE_AUTO, ten_pages, 0));
    /* a partial page counts as a page */
    assert_false(bk_huge_hint_at_population(BK_HUGE_AUTO, ten_pages + 1, 21));
    assert_true(bk_huge_hint_at_population(BK_HUGE_AUTO, ten_pages + 1, 22));
    /* the free lists unknown: hint, as before the policy */
    assert_true(bk_huge_hint_at_population(BK_HUGE_AUTO, ten_pages, UINT64_MAX));
    /* the overrides ignore the free lists */
    assert_true(bk_huge_hint_at_population(BK_HUGE_ALWAYS, ten_pages, 0));
    assert_false(bk_huge_hint_at_population(BK_HUGE_NEVER, ten_pages, 1000));
}

static void test_environment_overrides(void **state)
{
    (void)state;
    unsetenv("BLOOMKIT_HUGEPAGE");
    unsetenv("BLOOMKIT_NO_HUGEPAGE");
    assert_int_equal(bk_huge_policy_from_env(), BK_HUGE_AUTO);
    setenv("BLOOMKIT_HUGEPAGE", "always", 1);
    assert_int_equal(bk_huge_policy_from_env(), BK_HUGE_ALWAYS);
    setenv("BLOOMKIT_HUGEPAGE", "never", 1);
    assert_int_equal(bk_huge_policy_from_env(), BK_HUGE_NEVER);
    setenv("BLOOMKIT_HUGEPAGE", "bogus", 1);
    assert_int_equal(bk_huge_policy_from_env(), BK_HUGE_AUTO);
    setenv("BLOOMKIT_HUGEPAGE", "always", 1);
    setenv("BLOOMKIT_NO_HUGEPAGE", "1", 1); /* the older switch wins: never */
    assert_int_equal(bk_huge_policy_from_env(), BK_HUGE_NEVER);
    unsetenv("BLOOMKIT_HUGEPAGE");
    unsetenv("BLOOMKIT_NO_HUGEPAGE");
}

/* Every policy gives a zeroed, writable, 64-byte aligned big block. */
static void test_big_blocks_are_zeroed_under_every_policy(void **state)
{
    (void)state;
    const char *policies[] = { NULL, "always", "never" };
    size_t bytes = 2 * BK_HUGE_THRESHOLD + 4096;
    for (size_t p = 0; p < 3; p++) {
        if (policies[p] != NULL)
            setenv("BLOOMKIT_HUGEPAGE", policies[p], 1);
        else
            unsetenv("BLOOMKIT_HUGEPAGE");
        unsigned char *block = bk_alloc_zeroed(bytes);
        assert_non_null(block);
        assert_int_equal((uintptr_t)block % 64, 0);
        for (size_t i = 0; i < bytes; i += 4093)
            assert_int_equal(block[i], 0);
        assert_int_equal(block[bytes - 1], 0);
        memset(block, 0xa5, bytes);
        bk_free_zeroed(block, bytes);
    }
    unsetenv("BLOOMKIT_HUGEPAGE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buddyinfo_counts_blocks_of_the_order_and_above),
        cmocka_unit_test(test_buddyinfo_without_zones_is_unknown),
        cmocka_unit_test(test_auto_hints_before_populating_only_with_free_blocks_to_spare),
        cmocka_unit_test(test_environment_overrides),
        cmocka_unit_test(test_big_blocks_are_zeroed_under_every_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
