/*
 * tests/test_window.c -- the sliding-window filter: keys inside the window
 * always found, keys past the horizon only at the FPR, deterministic time
 * windows, independence of the generations, the generic handle and the
 * file-format hooks.
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
#include "bloomkit/hash_inline.h"
#include "cpu.h"
#include "endian.h"
#include "window.h" /* src/window.h: the ring's geometry and one generation alone */

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
    assert_int_equal(bk_filter_create(BK_KIND_WINDOW, p, &f), BK_OK);
    assert_non_null(f);
    return f;
}

static bk_stats stats_of(const bk_filter *f)
{
    bk_stats s;
    bk_filter_stats(f, &s);
    return s;
}

static uint64_t clock_of(const bk_filter *f)
{
    uint64_t clock = 0;
    assert_int_equal(bk_window_clock(f, &clock), BK_OK);
    return clock;
}

/* A time window's add at `now`: the clock first, then the add. */
static bk_status add_at(bk_filter *f, const void *key, size_t len, uint64_t now, bool *was_new)
{
    bk_status status = bk_filter_advance_clock(f, now);
    return status != BK_OK ? status : bk_filter_add(f, key, len, was_new);
}

static bool contains_at(const bk_filter *f, const void *key, size_t len, uint64_t now)
{
    bool present = false;
    assert_int_equal(bk_window_contains_at(f, key, len, now, &present), BK_OK);
    return present;
}

static const bk_window *object_of(const bk_filter *f)
{
    const bk_window *object = bk_filter_object_of(f, BK_KIND_WINDOW);
    assert_non_null(object);
    return object;
}

static void test_layout(void **state)
{
    (void)state;
    bk_params p = { .window_keys = 1000 };
    bk_filter *f = create_or_fail(&p);
    assert_false(bk_window_is_timed(object_of(f)));
    assert_int_equal(stats_of(f).filters, BK_WINDOW_DEFAULT_GENERATIONS);
    assert_int_equal(bk_window_span(object_of(f)), 334);     /* ceil(1000 / 3) */
    assert_int_equal(bk_window_horizon(object_of(f)), 1336); /* 4 * 334 <= W (1 + 1/3) + 4 */
    assert_int_equal(stats_of(f).capacity, 1000);            /* defaults to W */
    assert_int_equal(clock_of(f), 0);
    bk_stats gen;
    assert_int_equal(bk_window_generation_stats(f, 0, &gen), BK_OK);
    assert_int_equal(gen.capacity, 334);
    /* g generations at p_g give p: 1 - (1 - p_g)^g <= 0.01 */
    assert_true(1 - pow(1 - gen.target_fpr, 4) <= 0.01);
    assert_int_equal(bk_window_generation_stats(f, 4, &gen), BK_ERANGE);
    assert_false(bk_filter_contains(f, "a", 1)); /* empty */
    bk_filter_free(f);
}

/* The oldest key of the window is found after every insertion; every key
 * of age < (g-1) S is found; keys of age >= g S come back only at the FPR. */
static void test_insertion_window_guarantees(void **state)
{
    (void)state;
    const unsigned window = 1000, stream = 60000;
    bk_params p = { .window_keys = window, .fpr = 0.01 };
    bk_filter *f = create_or_fail(&p);
    const uint64_t span = bk_window_span(object_of(f)),
                   horizon = bk_window_horizon(object_of(f));
    char key[32];
    for (unsigned t = 0; t < stream; t++) {
        bool was_new;
        assert_int_equal(bk_filter_add(f, key, make_key(key, "s", t), &was_new), BK_OK);
        if (t >= window - 1)
            assert_true(bk_filter_contains(f, key, make_key(key, "s", t - (window - 1))));
    }
    assert_int_equal(clock_of(f), stream);
    const unsigned latest = stream - 1;
    for (unsigned age = 0; age < 3 * span; age++)
        assert_true(bk_filter_contains(f, key, make_key(key, "s", latest - age)));
    unsigned old = 0, reported = 0;
    for (unsigned t = 0; latest - t >= horizon; t++, old++)
        reported += bk_filter_contains(f, key, make_key(key, "s", t));
    print_message("window: %u keys older than the horizon, %u reported (%.5f)\n", old, reported,
                  (double)reported / old);
    assert_true(reported <= binomial_upper(old, 0.01));
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_false(s.past_design_point); /* a span never exceeds its capacity */
    assert_true(s.current_fpr <= 0.01);
    bk_filter_free(f);
}

/* Keys never added, against a window in steady state. */
static void test_insertion_window_fpr(void **state)
{
    (void)state;
    bk_params p = { .window_keys = 20000, .fpr = 0.01 };
    bk_filter *f = create_or_fail(&p);
    char key[32];
    for (unsigned t = 0; t < 100000; t++)
        bk_filter_add(f, key, make_key(key, "member", t), NULL);
    const unsigned absent = 500000;
    unsigned reported = 0;
    for (unsigned i = 0; i < absent; i++)
        reported += bk_filter_contains(f, key, make_key(key, "stranger", i));
    bk_stats s;
    bk_filter_stats(f, &s);
    print_message("window: FPR %.5f (bound 0.01, from the fill %.5f), %.2f bits per key\n",
                  (double)reported / absent, s.current_fpr, s.bits_per_key);
    assert_true(reported <= binomial_upper(absent, 0.01));
    bk_filter_free(f);
}

/* An add reports a key new exactly when a query at the add's time would
 * not have found it (the add's probe and the query's walk read the same
 * cells), for each cell width (g = 2, 3, 4) and for more cells than one
 * word of h2 gives (k > 9 at 0.01%); integer keys add as their bytes. */
static void test_add_reports_what_query_sees(void **state)
{
    (void)state;
    const struct {
        unsigned generations;
        double fpr;
    } shapes[] = { { 2, 0.01 }, { 3, 0.01 }, { 4, 0.01 }, { 4, 0.0001 } };
    bool wide = false;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        bk_params p = { .window_seconds = 100,
                        .generations = shapes[s].generations,
                        .capacity = 2000,
                        .fpr = shapes[s].fpr };
        bk_filter *f = create_or_fail(&p), *by_value = create_or_fail(&p);
        assert_true(bk_window_is_blocked(object_of(f)));
        uint64_t fresh = 0;
        for (uint64_t t = 0; t < 8000; t++) {
            uint64_t now = t / 20, value = bk_mix64(t % 3000); /* repeats */
            uint8_t key[8];
            bk_store_le64(key, value);
            bool seen = contains_at(f, key, sizeof key, now), was_new, value_new;
            assert_int_equal(add_at(f, key, sizeof key, now, &was_new), BK_OK);
            assert_int_equal(was_new, !seen);
            assert_int_equal(bk_filter_advance_clock(by_value, now), BK_OK);
            assert_int_equal(bk_filter_add_u64(by_value, value, &value_new), BK_OK);
            assert_int_equal(value_new, was_new);
            assert_int_equal(bk_filter_contains_u64(by_value, value), true);
            fresh += was_new;
        }
        bk_stats stats;
        bk_filter_stats(f, &stats);
        assert_int_equal(stats.keys_added, fresh);
        assert_true(fresh < 8000); /* some repeats were found */
        wide |= stats.hashes > 9;
        bk_filter_free(f);
        bk_filter_free(by_value);
    }
    assert_true(wide);
}

/* Adding a key again refreshes it: it is remembered W insertions more. */
static void test_repeats_refresh(void **state)
{
    (void)state;
    bk_params p = { .window_keys = 100, .generations = 2, .fpr = 0.001 };
    bk_filter *f = create_or_fail(&p);
    char key[32];
    bool was_new;
    assert_int_equal(bk_filter_add(f, "hot", 3, &was_new), BK_OK);
    assert_true(was_new);
    for (unsigned t = 0; t < 5000; t++) {
        bk_filter_add(f, key, make_key(key, "cold", t), NULL);
        if (t % 90 == 89) {
            assert_int_equal(bk_filter_add(f, "hot", 3, &was_new), BK_OK);
            assert_false(was_new); /* still inside the window */
        }
        assert_true(bk_filter_contains(f, "hot", 3));
    }
    bk_filter_free(f);
}

/* A time window, with the clock in the caller's hands: T = 60, g = 4, so
 * S = 20 and the horizon is 80 seconds. */
static void test_time_window_is_deterministic(void **state)
{
    (void)state;
    bk_params p = { .window_seconds = 60, .capacity = 1000, .fpr = 0.001 };
    for (uint64_t t0 = 1000; t0 < 1040; t0++) {
        bk_filter *f = create_or_fail(&p);
        assert_true(bk_window_is_timed(object_of(f)));
        assert_int_equal(bk_window_span(object_of(f)), 20);
        assert_int_equal(add_at(f, "a", 1, t0, NULL), BK_OK);
        for (uint64_t now = t0; now < t0 + 120; now++) {
            bool found = contains_at(f, "a", 1, now);
            bool expected = now / 20 - t0 / 20 < 4; /* the key's span is still read */
            assert_int_equal(found, expected);
            if (now - t0 < 60)
                assert_true(found); /* inside the window */
            if (now - t0 >= 80)
                assert_false(found); /* beyond the horizon */
        }
        /* contains_at changes nothing: the clock is still t0 */
        assert_int_equal(clock_of(f), t0);
        assert_true(bk_filter_contains(f, "a", 1));
        bk_filter_free(f);
    }
}

static void test_time_window_clock_rules(void **state)
{
    (void)state;
    bk_params p = { .window_seconds = 60, .capacity = 1000, .fpr = 0.001 };
    bk_filter *f = create_or_fail(&p);
    assert_int_equal(add_at(f, "a", 1, 1000, NULL), BK_OK);
    /* a clock that steps back is taken as the latest one */
    assert_int_equal(add_at(f, "b", 1, 900, NULL), BK_OK);
    assert_int_equal(clock_of(f), 1000);
    assert_true(contains_at(f, "b", 1, 1059));
    /* a query before the latest time is a query at the latest time */
    assert_true(contains_at(f, "a", 1, 10));
    /* the timestamp-less add uses the latest timestamp seen */
    assert_int_equal(bk_filter_add(f, "c", 1, NULL), BK_OK);
    assert_int_equal(clock_of(f), 1000);
    assert_true(contains_at(f, "c", 1, 1059));
    assert_false(contains_at(f, "c", 1, 1080));
    /* advance ages out without adding */
    assert_int_equal(bk_filter_advance_clock(f, 1070), BK_OK);
    assert_true(bk_filter_contains(f, "a", 1));
    assert_int_equal(bk_filter_advance_clock(f, 1085), BK_OK);
    assert_false(bk_filter_contains(f, "a", 1));
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_true(s.fill_ratio == 0);
    assert_true(s.keys_estimated == 0);
    /* a jump of many windows clears everything at once */
    assert_int_equal(add_at(f, "d", 1, 1000000, NULL), BK_OK);
    assert_true(bk_filter_contains(f, "d", 1));
    assert_false(bk_filter_contains(f, "c", 1));
    /* the last representable timestamp is refused, nothing changes */
    assert_int_equal(add_at(f, "e", 1, UINT64_MAX, NULL), BK_ERANGE);
    assert_int_equal(bk_filter_advance_clock(f, UINT64_MAX), BK_ERANGE);
    assert_int_equal(clock_of(f), 1000000);
    assert_int_equal(add_at(f, "e", 1, UINT64_MAX - 1, NULL), BK_OK);
    assert_true(bk_filter_contains(f, "e", 1));
    assert_false(bk_filter_contains(f, "d", 1));
    /* insertion windows take no timestamps */
    bk_params counted = { .window_keys = 10 };
    bk_filter *g = create_or_fail(&counted);
    assert_int_equal(add_at(g, "a", 1, 5, NULL), BK_EUNSUPPORTED);
    assert_int_equal(bk_filter_advance_clock(g, 5), BK_EUNSUPPORTED);
    assert_false(bk_filter_contains(g, "a", 1));
    assert_int_equal(clock_of(g), 0);
    bk_filter_free(g);
    bk_filter_free(f);
}

/* A burst: more keys in one span than the generation was built for.  The
 * fill alarm of the window says so. */
static void test_time_window_burst_passes_design_point(void **state)
{
    (void)state;
    bk_params p = { .window_seconds = 60, .capacity = 300, .fpr = 0.01 };
    bk_filter *f = create_or_fail(&p);
    bk_stats gen;
    bk_window_generation_stats(f, 0, &gen);
    assert_int_equal(gen.capacity, 100); /* ceil(300 * 20 / 60) */
    char key[32];
    for (unsigned i = 0; i < 100; i++)
        add_at(f, key, make_key(key, "burst", i), 500, NULL);
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_false(s.past_design_point);
    for (unsigned i = 100; i < 300; i++)
        add_at(f, key, make_key(key, "burst", i), 500, NULL);
    bk_filter_stats(f, &s);
    assert_true(s.past_design_point);
    /* once the burst ages out, the window is within design again */
    add_at(f, "calm", 4, 600, NULL);
    bk_filter_stats(f, &s);
    assert_false(s.past_design_point);
    bk_filter_free(f);
}

/* The ring layout (g > 8): every generation holds the same 1000 keys (the
 * stream cycles through them, one cycle per span).  With one probe
 * sequence shared by all generations they would hold identical bits and a
 * false positive of one would be a false positive of all; with
 * per-generation sequences (src/level_hash.h) the joint rate is the
 * product of the rates.  (The cell layout shares the probes on purpose:
 * its FPR bound is the union bound, checked by test_fpr_and_no_false_negatives.) */
static void test_generations_are_independent(void **state)
{
    (void)state;
    bk_params p = { .window_keys = 8000, .fpr = 0.05, .generations = 9 };
    bk_filter *f = create_or_fail(&p);
    assert_false(bk_window_is_blocked(object_of(f)));
    assert_int_equal(bk_window_span(object_of(f)), 1000);
    char key[32];
    for (unsigned t = 0; t < 9000; t++)
        bk_filter_add(f, key, make_key(key, "cycle", t % 1000), NULL);
    const unsigned absent = 400000;
    unsigned in[4] = { 0 }, both01 = 0, both23 = 0;
    for (unsigned i = 0; i < absent; i++) {
        bk_hash h = bk_filter_hash(f, key, make_key(key, "probe", i));
        bool found[4];
        for (unsigned g = 0; g < 4; g++) {
            found[g] = bk_window_generation_contains_hash(object_of(f), g, h);
            in[g] += found[g];
        }
        both01 += found[0] && found[1];
        both23 += found[2] && found[3];
    }
    double joint01 = (double)in[0] / absent * in[1] / absent;
    double joint23 = (double)in[2] / absent * in[3] / absent;
    print_message("generations: FPR %.4f %.4f %.4f %.4f; joint(0,1) %.6f (product %.6f)\n",
                  (double)in[0] / absent, (double)in[1] / absent, (double)in[2] / absent,
                  (double)in[3] / absent, (double)both01 / absent, joint01);
    assert_true(in[0] > 0 && in[1] > 0);
    assert_true(both01 <= binomial_upper(absent, joint01));
    assert_true(both23 <= binomial_upper(absent, joint23));
    assert_false(bk_window_generation_contains_hash(object_of(f), 4, bk_filter_hash(f, "x", 1)));
    bk_filter_free(f);
}

/* The AVX2 cell query (src/window_avx2.c) answers as the portable walk, for
 * every k it serves, on lines of random density, where the CPU has AVX2. */
static void test_cell_query_paths_agree(void **state)
{
    (void)state;
#ifdef BK_HAVE_AVX2_SOURCES
    if (!bk_cpu()->avx2)
        skip();
    _Alignas(64) uint64_t line[8];
    uint64_t x = 12345;
    unsigned nonzero = 0;
    for (unsigned round = 0; round < 20000; round++) {
        unsigned density = round % 4; /* AND of 0..3 random words: sparse to dense */
        for (unsigned w = 0; w < 8; w++) {
            uint64_t word = ~(uint64_t)0;
            for (unsigned d = 0; d <= density; d++)
                word &= (x = bk_mix64(x + w + 1));
            line[w] = ~word;
        }
        uint64_t h2 = (x = bk_mix64(x));
        for (unsigned k = 1; k <= 8; k++) {
            unsigned portable = bk_window_cells4_mask_portable(line, h2, k);
            assert_int_equal(bk_window_cells4_mask_avx2(line, h2, k), portable);
            nonzero += portable != 0;
        }
    }
    assert_true(nonzero > 1000); /* both answers occur */
#else
    skip();
#endif
}

static void test_bad_parameters(void **state)
{
    (void)state;
    const struct {
        bk_params params;
        bk_status expected;
    } cases[] = {
        { { .capacity = 10 }, BK_EINVAL },                          /* no window */
        { { .window_keys = 10, .window_seconds = 10 }, BK_EINVAL }, /* two windows */
        { { .window_seconds = 10 }, BK_EINVAL },                    /* no capacity */
        { { .window_keys = 10, .generations = 1 }, BK_EINVAL },
        { { .window_keys = 10, .generations = BK_WINDOW_MAX_GENERATIONS + 1 }, BK_EINVAL },
        { { .window_keys = 10, .fpr = 1.5 }, BK_EINVAL },
        { { .window_keys = 10, .fpr = NAN }, BK_EINVAL },
        { { .window_keys = 10, .bits = 64, .hashes = 2 }, BK_EINVAL },
        { { .window_keys = 10, .bits_per_key = 8 }, BK_EINVAL },
        { { .window_keys = 10, .flags = BK_FLAG_CONCURRENT }, BK_EUNSUPPORTED },
        { { .window_keys = 10, .hash_algorithm = BK_HASH_SIPHASH }, BK_EKEY },
        { { .window_keys = UINT64_C(1) << 58 }, BK_ERANGE },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bk_filter *f = (bk_filter *)&cases[i]; /* sentinel: must stay untouched */
        bk_status status = bk_filter_create(BK_KIND_WINDOW, &cases[i].params, &f);
        if (status != cases[i].expected)
            print_error("case %zu: %d\n", i, status);
        assert_int_equal(status, cases[i].expected);
        assert_ptr_equal(f, (bk_filter *)&cases[i]);
    }
    assert_int_equal(bk_filter_create(BK_KIND_WINDOW, NULL, &(bk_filter *){ NULL }), BK_EINVAL);
}

static void test_bad_input(void **state)
{
    (void)state;
    bk_params p = { .window_keys = 10 };
    bk_filter *f = create_or_fail(&p);
    assert_int_equal(bk_filter_add(NULL, "a", 1, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_add(f, NULL, 2, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_add_hash(NULL, (bk_hash){ 1, 2 }, NULL), BK_EINVAL);
    assert_false(bk_filter_contains(NULL, "a", 1));
    assert_false(bk_filter_contains(f, NULL, 2));
    bk_key bad[2] = { { "a", 1 }, { NULL, 4 } };
    assert_int_equal(bk_filter_add_batch(f, bad, 2, NULL), BK_EINVAL);
    assert_int_equal(clock_of(f), 0); /* nothing changed */
    assert_int_equal(bk_filter_contains_batch(f, bad, 2, NULL), 0);
    assert_int_equal(bk_window_generation_stats(f, 0, NULL), BK_EINVAL);
    uint64_t clock = 7;
    bool present = true;
    bk_stats gen;
    assert_int_equal(bk_window_clock(f, NULL), BK_EINVAL);
    assert_int_equal(bk_window_clock(NULL, &clock), BK_EINVAL);
    assert_int_equal(bk_window_contains_at(f, NULL, 2, 0, &present), BK_EINVAL);
    assert_int_equal(bk_window_contains_at(f, "a", 1, 0, NULL), BK_EINVAL);
    assert_int_equal(bk_window_contains_at(NULL, "a", 1, 0, &present), BK_EINVAL);
    assert_int_equal(bk_window_generation_stats(NULL, 0, &gen), BK_EINVAL);
    bk_filter *bloom;
    bk_params classic = { .capacity = 10 };
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &classic, &bloom), BK_OK);
    assert_int_equal(bk_window_clock(bloom, &clock), BK_EKIND);
    assert_int_equal(bk_window_contains_at(bloom, "a", 1, 0, &present), BK_EKIND);
    assert_int_equal(bk_window_generation_stats(bloom, 0, &gen), BK_EKIND);
    assert_true(clock == 7 && present);
    bk_filter_free(bloom);
    assert_int_equal(bk_filter_clear(NULL), BK_EINVAL);
    assert_int_equal(bk_filter_copy(f, NULL), BK_EINVAL);
    bk_filter_free(NULL);
    bk_filter_free(f);
}

static void test_batches_copy_clear(void **state)
{
    (void)state;
    bk_params p = { .window_keys = 500, .fpr = 0.01 };
    bk_filter *one = create_or_fail(&p), *batch = create_or_fail(&p);
    enum { N = 2000 };
    static char text[N][32];
    bk_key keys[N];
    size_t single_new = 0;
    for (unsigned i = 0; i < N; i++) {
        keys[i].data = text[i];
        keys[i].len = make_key(text[i], "b", i % 1500);
        bool was_new;
        bk_filter_add(one, keys[i].data, keys[i].len, &was_new);
        single_new += was_new;
    }
    size_t batch_new = 0;
    assert_int_equal(bk_filter_add_batch(batch, keys, N, &batch_new), BK_OK);
    assert_int_equal(batch_new, single_new);
    bool results[N], expected[N];
    size_t present = bk_filter_contains_batch(batch, keys, N, results);
    assert_int_equal(present, bk_filter_contains_batch(one, keys, N, expected));
    assert_memory_equal(results, expected, sizeof results);
    for (unsigned i = N - 500; i < N; i++)
        assert_true(results[i]);
    bk_filter *copy;
    assert_int_equal(bk_filter_copy(batch, &copy), BK_OK);
    assert_int_equal(bk_filter_clear(batch), BK_OK);
    assert_int_equal(clock_of(batch), 0);
    assert_int_equal(bk_filter_contains_batch(batch, keys, N, NULL), 0);
    assert_int_equal(bk_filter_contains_batch(copy, keys, N, results), present);
    bk_filter_free(copy);
    bk_filter_free(one);
    bk_filter_free(batch);
}

static void test_generic_handle(void **state)
{
    (void)state;
    bk_kind kind;
    assert_int_equal(bk_kind_from_name("window", &kind), BK_OK);
    assert_int_equal(kind, BK_KIND_WINDOW);
    bk_params p = { .window_keys = 100, .generations = 5, .fpr = 0.01 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_WINDOW, &p, &f), BK_OK);
    char key[32];
    for (unsigned i = 0; i < 1000; i++)
        assert_int_equal(bk_filter_add(f, key, make_key(key, "h", i), NULL), BK_OK);
    assert_true(bk_filter_contains(f, "h:999", 5));
    bk_stats s, design;
    bk_filter_stats(f, &s);
    assert_int_equal(s.kind, BK_KIND_WINDOW);
    assert_int_equal(s.filters, 5);
    assert_int_equal(bk_kind_design(BK_KIND_WINDOW, &p, &design), BK_OK);
    assert_int_equal(design.bits, s.bits);
    assert_int_equal(design.bytes, s.bytes);
    assert_int_equal(design.filters, 5);
    bk_filter_free(f);
}

/* bk_filter_advance_clock: the handle's way to give a time window its time;
 * without it the handle's adds and queries never age a key out. */
static void test_generic_handle_advances_time(void **state)
{
    (void)state;
    bk_params p = { .window_seconds = 2, .generations = 3, .capacity = 100 }; /* S = 1 s */
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_WINDOW, &p, &f), BK_OK);
    assert_int_equal(bk_filter_advance_clock(f, 1000), BK_OK);
    assert_int_equal(bk_filter_add(f, "old", 3, NULL), BK_OK);
    assert_int_equal(bk_filter_advance_clock(f, 1001), BK_OK); /* age 1 < T */
    assert_true(bk_filter_contains(f, "old", 3));
    assert_int_equal(bk_filter_advance_clock(f, 999), BK_OK); /* back in time: no change */
    assert_true(bk_filter_contains(f, "old", 3));
    assert_int_equal(bk_filter_advance_clock(f, 1003), BK_OK); /* age 3 = g S: forgotten */
    assert_false(bk_filter_contains(f, "old", 3));
    assert_int_equal(bk_filter_add(f, "new", 3, NULL), BK_OK);
    assert_true(bk_filter_contains(f, "new", 3));
    assert_int_equal(clock_of(f), 1003);
    assert_int_equal(bk_filter_advance_clock(f, UINT64_MAX), BK_ERANGE);
    assert_int_equal(bk_filter_advance_clock(NULL, 1), BK_EINVAL);
    bk_filter_free(f);

    bk_params counted = { .window_keys = 100 };
    assert_int_equal(bk_filter_create(BK_KIND_WINDOW, &counted, &f), BK_OK);
    assert_int_equal(bk_filter_advance_clock(f, 1000), BK_EUNSUPPORTED);
    bk_filter_free(f);
    bk_params bloom = { .capacity = 100 };
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &bloom, &f), BK_OK);
    assert_int_equal(bk_filter_advance_clock(f, 1000), BK_EUNSUPPORTED);
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

static encoded encode(const void *object)
{
    encoded e;
    e.params_size = bk_window_ops.params_size(object);
    e.params = malloc(e.params_size);
    bk_window_ops.write_params(object, e.params);
    e.payload_size = bk_window_ops.payload_size(object);
    e.payload = aligned_alloc(64, ((size_t)e.payload_size + 63) & ~(size_t)63);
    bk_window_ops.write_payload(object, e.payload);
    return e;
}

static void release(encoded *e)
{
    free(e->params);
    free(e->payload);
}

/* The kind's read hook, its window wrapped in a handle; on an error the
 * hook must leave *out as it was. */
static bk_status decode(const encoded *e, const bk_filter *like, bool in_place, bk_filter **out)
{
    void *object = *out;
    /* in place only where the container allows it (src/format.c) */
    in_place = in_place && bk_host_is_little_endian();
    bk_status status = bk_window_ops.read(e->params, e->params_size, e->payload, e->payload_size,
                                          bk_window_ops.hasher(object_of(like)),
                                          stats_of(like).keys_added, in_place, &object);
    if (status != BK_OK) {
        assert_ptr_equal(object, *out);
        return status;
    }
    assert_int_equal(bk_filter_wrap(&bk_window_ops, object, out), BK_OK);
    return BK_OK;
}

static void test_format_round_trip(void **state)
{
    (void)state;
    bk_params p = { .window_seconds = 3600, .capacity = 2000, .generations = 6, .seed = 7 };
    bk_filter *f = create_or_fail(&p);
    char key[32];
    for (unsigned i = 0; i < 5000; i++)
        add_at(f, key, make_key(key, "t", i), 100000 + i, NULL);
    encoded e = encode(object_of(f));
    assert_int_equal(e.params_size, 72 + 16 * 6);
    bk_filter *copy;
    assert_int_equal(bk_filter_copy(f, &copy), BK_OK); /* the original goes on below */
    /* mapped in place (little-endian hosts only), then copied */
    for (int in_place = bk_host_is_little_endian(); in_place >= 0; in_place--) {
        bk_filter *g = NULL;
        assert_int_equal(decode(&e, copy, in_place, &g), BK_OK);
        bk_stats a, b;
        bk_filter_stats(copy, &a);
        bk_filter_stats(g, &b);
        assert_memory_equal(&a, &b, sizeof a);
        assert_int_equal(clock_of(g), clock_of(copy));
        for (unsigned i = 0; i < 6000; i++) {
            size_t len = make_key(key, "t", i);
            assert_int_equal(contains_at(g, key, len, 106000),
                             contains_at(copy, key, len, 106000));
        }
        if (in_place) {
            assert_int_equal(bk_filter_add(g, "x", 1, NULL), BK_EIMMUTABLE);
            assert_int_equal(bk_filter_advance_clock(g, 200000), BK_EIMMUTABLE);
        } else {
            /* the loaded window ages and fills exactly as the original */
            for (unsigned i = 5000; i < 9000; i++) {
                size_t len = make_key(key, "t", i);
                bool new_f, new_g;
                add_at(f, key, len, 100000 + 2 * i, &new_f);
                add_at(g, key, len, 100000 + 2 * i, &new_g);
                assert_int_equal(new_f, new_g);
            }
            for (unsigned i = 0; i < 9000; i++) {
                size_t len = make_key(key, "t", i);
                assert_int_equal(bk_filter_contains(g, key, len),
                                 bk_filter_contains(f, key, len));
            }
        }
        bk_filter_free(g);
    }
    bk_filter_free(copy);
    release(&e);
    bk_filter_free(f);
}

/* Damage to each field of a window with `generations` generations: g = 3
 * gives the cell layout with an unused bit per cell, g = 9 the rings. */
static void check_rejects_inconsistent_data(unsigned generations)
{
    bk_params p = { .window_keys = 300, .fpr = 0.01, .generations = generations };
    bk_filter *f = create_or_fail(&p);
    bool blocked = bk_window_is_blocked(object_of(f));
    assert_int_equal(blocked, generations <= 4);
    char key[32];
    for (unsigned i = 0; i < 1000; i++)
        bk_filter_add(f, key, make_key(key, "w", i), NULL);
    encoded e = encode(object_of(f));
    bk_filter *g = (bk_filter *)&e; /* sentinel */
    assert_int_equal(
        bk_window_ops.read(e.params, e.params_size - 1, e.payload, e.payload_size,
                           bk_window_ops.hasher(object_of(f)), 0, false, (void **)&g),
        BK_ECORRUPT);
    assert_int_equal(
        bk_window_ops.read(e.params, e.params_size, e.payload, e.payload_size - 64,
                           bk_window_ops.hasher(object_of(f)), 0, false, (void **)&g),
        BK_ECORRUPT);
    const struct {
        size_t offset;
        uint64_t value;
        int width;
        bk_status expected;
    } damage[] = {
        { 0, 0, 8, BK_ECORRUPT },                /* window length 0 */
        { 8, 99, 8, BK_ECORRUPT },               /* span != ceil(L / (g-1)) */
        { 16, 0, 8, BK_ECORRUPT },               /* capacity 0 */
        { 32, 7, 8, BK_ECORRUPT },               /* generation capacity wrong */
        { 40, UINT64_C(1) << 57, 8, BK_ERANGE }, /* m too large */
        { 40, 1, 8, BK_ECORRUPT },               /* m contradicts the payload */
        { 48, 0, 4, BK_ECORRUPT },               /* k = 0 */
        { 52, 1, 4, BK_ECORRUPT },               /* one generation */
        { 52, 5, 4, BK_ECORRUPT },               /* g != records */
        { 56, 2, 4, BK_ECORRUPT },               /* unknown mode */
        { 58, 2, 2, BK_ECORRUPT },               /* unknown layout */
        { 58, !blocked, 2, BK_ECORRUPT },        /* the other layout */
        { 60, 0, 4, BK_ECORRUPT },               /* not started, yet a clock */
        { 72, 1, 8, BK_ECORRUPT },               /* slot 0 holding epoch 1 */
        { 72, 4000, 8, BK_ECORRUPT },            /* an epoch in the future */
    };
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        uint8_t saved[8];
        memcpy(saved, e.params + damage[i].offset, 8);
        for (int b = 0; b < damage[i].width; b++)
            e.params[damage[i].offset + b] = (uint8_t)(damage[i].value >> (8 * b));
        bk_status status = decode(&e, f, false, &g);
        if (status != damage[i].expected)
            print_error("damage %zu: %d\n", i, status);
        assert_int_equal(status, damage[i].expected);
        memcpy(e.params + damage[i].offset, saved, 8);
    }
    /* rings: padding of the last generation; cells: a cell's unused bit 3 */
    size_t stray_byte = blocked ? 0 : e.payload_size - 1;
    uint8_t stray_bit = blocked ? 0x08 : 0x01, saved_byte = e.payload[stray_byte];
    e.payload[stray_byte] |= stray_bit;
    assert_int_equal(decode(&e, f, false, &g), BK_ECORRUPT);
    e.payload[stray_byte] = saved_byte;
    assert_ptr_equal(g, (bk_filter *)&e);
    assert_int_equal(decode(&e, f, false, &g), BK_OK);
    bk_filter_free(g);
    release(&e);
    bk_filter_free(f);
}

static void test_format_rejects_inconsistent_data(void **state)
{
    (void)state;
    check_rejects_inconsistent_data(3);
    check_rejects_inconsistent_data(9);
}

/* Through the container (src/format.c): buffer, file, load, map; and a
 * loaded window keeps its clock. */
static void test_file_round_trip(void **state)
{
    (void)state;
    static const uint8_t secret[BK_SECRET_KEY_BYTES] = { 1, 2, 3 };
    const bk_params cases[] = {
        { .window_keys = 300, .fpr = 0.01 },
        { .window_keys = 1000, .generations = 7, .fpr = 0.001, .seed = 11 },
        { .window_seconds = 60,
          .capacity = 500,
          .hash_algorithm = BK_HASH_SIPHASH,
          .secret_key = secret },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bk_filter *f;
        assert_int_equal(bk_filter_create(BK_KIND_WINDOW, &cases[c], &f), BK_OK);
        char key[32];
        for (unsigned i = 0; i < 1500; i++) {
            size_t len = make_key(key, "key", i);
            if (bk_window_is_timed(object_of(f)))
                assert_int_equal(add_at(f, key, len, 5000 + i / 10, NULL), BK_OK);
            else
                assert_int_equal(bk_filter_add(f, key, len, NULL), BK_OK);
        }
        bk_roundtrip_check(f, cases[c].secret_key, 2000);

        size_t size;
        uint8_t *bytes = bk_rt_serialize(f, &size);
        bk_load_options options = { .secret_key = cases[c].secret_key };
        bk_filter *loaded;
        assert_int_equal(bk_filter_deserialize(bytes, size, &options, &loaded), BK_OK);
        assert_int_equal(clock_of(loaded), clock_of(f));
        assert_int_equal(bk_window_span(object_of(loaded)), bk_window_span(object_of(f)));
        assert_int_equal(bk_window_is_timed(object_of(loaded)),
                         bk_window_is_timed(object_of(f)));
        free(bytes);
        bk_filter_free(loaded);
        bk_filter_free(f);
    }
}

/* Files of the ring layout (all windows were rings when they were written):
 * checked, never rewritten. */
static const growth_golden ring_goldens[] = {
    { "window-keys.bkf",
      BK_KIND_WINDOW,
      { .window_keys = 100, .fpr = 0.01 },
      250,
      1000,
      0,
      100 },
    { "window-seconds-siphash.bkf",
      BK_KIND_WINDOW,
      { .window_seconds = 20,
        .capacity = 100,
        .generations = 5,
        .fpr = 0.01,
        .hash_algorithm = BK_HASH_SIPHASH,
        .secret_key = growth_golden_key },
      200,
      600,
      1000000,
      100 }, /* 5 keys a second: the last 20 s = 100 keys */
};

/* Files of the cell layout, written by --write-golden. */
static const growth_golden goldens[] = {
    { "window-cells-keys.bkf",
      BK_KIND_WINDOW,
      { .window_keys = 100, .fpr = 0.01 },
      250,
      1000,
      0,
      100 },
    { "window-cells-seconds-siphash.bkf",
      BK_KIND_WINDOW,
      { .window_seconds = 20,
        .capacity = 100,
        .generations = 3,
        .fpr = 0.01,
        .hash_algorithm = BK_HASH_SIPHASH,
        .secret_key = growth_golden_key },
      200,
      600,
      1000000,
      100 }, /* 5 keys a second: the last 20 s = 100 keys; cells with an unused bit */
};

/* Files written when the format of this kind was fixed still load and
 * answer as they did (tests/data/README.md). */
static void test_golden_files(void **state)
{
    (void)state;
    for (size_t g = 0; g < sizeof ring_goldens / sizeof ring_goldens[0]; g++)
        growth_golden_check(&ring_goldens[g]);
    for (size_t g = 0; g < sizeof goldens / sizeof goldens[0]; g++)
        growth_golden_check(&goldens[g]);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-golden") == 0)
        return growth_golden_write(argv[2], goldens, sizeof goldens / sizeof goldens[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_insertion_window_guarantees),
        cmocka_unit_test(test_insertion_window_fpr),
        cmocka_unit_test(test_add_reports_what_query_sees),
        cmocka_unit_test(test_repeats_refresh),
        cmocka_unit_test(test_time_window_is_deterministic),
        cmocka_unit_test(test_time_window_clock_rules),
        cmocka_unit_test(test_time_window_burst_passes_design_point),
        cmocka_unit_test(test_generations_are_independent),
        cmocka_unit_test(test_cell_query_paths_agree),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_batches_copy_clear),
        cmocka_unit_test(test_generic_handle),
        cmocka_unit_test(test_generic_handle_advances_time),
        cmocka_unit_test(test_format_round_trip),
        cmocka_unit_test(test_format_rejects_inconsistent_data),
        cmocka_unit_test(test_file_round_trip),
        cmocka_unit_test(test_golden_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
