/*
 * tests/test_bloom.c -- the classic Bloom filter.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"

static void test_add_then_contains(void **state)
{
    (void)state;
    bk_params p = { .capacity = 1000, .fpr = 0.01 };
    bk_bloom *f;
    assert_int_equal(bk_bloom_create(&p, &f), BK_OK);
    bool was_new = false;
    assert_int_equal(bk_bloom_add(f, "alice", 5, &was_new), BK_OK);
    assert_true(was_new);
    assert_true(bk_bloom_contains(f, "alice", 5));
    assert_int_equal(bk_bloom_add(f, "alice", 5, &was_new), BK_OK);
    assert_false(was_new);
    assert_int_equal(bk_bloom_keys_added(f), 1);
    bk_bloom_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_then_contains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
