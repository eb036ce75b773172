/*
 * tests/cross/cmocka.h -- just enough of cmocka's interface to run a test
 * file on a cross-compiled target (s390x under qemu-user) where Debian has
 * no cmocka library.  Used only by scripts/cross-s390x.sh, which puts this
 * directory first on the include path; the native builds use real cmocka.
 * A failed assertion prints the place and exits 1.
 */
#ifndef BK_CROSS_CMOCKA_SHIM_H
#define BK_CROSS_CMOCKA_SHIM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define bk_shim_fail(...)                                       \
    do {                                                        \
        fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                           \
        fputc('\n', stderr);                                    \
        exit(1);                                                \
    } while (0)

#define fail_msg(...) bk_shim_fail(__VA_ARGS__)
#define assert_true(c)                           \
    do {                                         \
        if (!(c))                                \
            bk_shim_fail("assert_true(%s)", #c); \
    } while (0)
#define assert_false(c) assert_true(!(c))
#define assert_int_equal(a, b)                                                         \
    do {                                                                               \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
        if (a_ != b_)                                                                  \
            bk_shim_fail("%s == %s: %llu != %llu", #a, #b, a_, b_);                    \
    } while (0)
#define assert_ptr_equal(a, b) assert_true((const void *)(a) == (const void *)(b))
#define assert_non_null(p) assert_true((p) != NULL)
#define assert_null(p) assert_true((p) == NULL)
#define assert_memory_equal(a, b, n) assert_true(memcmp((a), (b), (n)) == 0)
#define print_message(...) printf(__VA_ARGS__)
#define print_error(...) fprintf(stderr, __VA_ARGS__)
#define skip()                    \
    do {                          \
        printf("[  SKIPPED ]\n"); \
        return;                   \
    } while (0)

struct CMUnitTest {
    const char *name;
    void (*test_func)(void **state);
    int (*setup_func)(void **state);    /* may be NULL */
    int (*teardown_func)(void **state); /* may be NULL */
    void *initial_state;
};

#define cmocka_unit_test(f)     \
    {                           \
#f, f, NULL, NULL, NULL \
    }
#define cmocka_run_group_tests(tests, setup, teardown) \
    bk_shim_run((tests), sizeof(tests) / sizeof((tests)[0]))

static inline int bk_shim_run(const struct CMUnitTest *tests, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        printf("[ RUN      ] %s\n", tests[i].name);
        fflush(stdout);
        void *state = tests[i].initial_state;
        if (tests[i].setup_func != NULL)
            tests[i].setup_func(&state);
        tests[i].test_func(&state);
        if (tests[i].teardown_func != NULL)
            tests[i].teardown_func(&state);
        printf("[       OK ] %s\n", tests[i].name);
    }
    printf("[  PASSED  ] %zu test(s).\n", count);
    return 0;
}

#endif
