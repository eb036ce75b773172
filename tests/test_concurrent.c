/*
 * tests/test_concurrent.c -- BK_FLAG_CONCURRENT on bloom and the blocked kinds:
 * several threads add keys at once while others query, and a query never
 * misses a key whose add has completed.  Run it under ThreadSanitizer:
 *
 *     cmake --preset tsan && cmake --build --preset tsan -j2 &&
 *     ctest --preset tsan -R concurrent
 *
 * The classic filter runs twice, at 1% and at 8 MiB (past one core's L2,
 * where its one-key queries gather their words with AVX-512 where the CPU
 * has it).  Each writer adds its own keys in order (singly, or in batches
 * of 32) and after each add (batch) publishes how many it has finished
 * with a release store; readers load that count with acquire and check
 * keys below it: one reader through bk_filter_contains, the other through
 * the kind's inline view (bloomkit/bloom_inline.h, blocked_inline.h,
 * sbbf_inline.h), whose loads must be as race-free as the library's.
 * And a fill alarm set on such a filter fires exactly once while all the
 * writers push it past its design point.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "bloomkit/blocked_inline.h"
#include "bloomkit/bloom_inline.h"
#include "bloomkit/sbbf_inline.h"

enum { WRITERS = 4, READERS = 2, KEYS_PER_WRITER = 6000, BATCH = 32 };

/* The inline view of a bloom or sbbf filter; a concurrent blocked filter
 * has none (its words are read with atomic loads), so its readers
 * take the handle. */
typedef struct kind_view {
    bk_kind kind;
    const bk_filter *filter;
    struct bk_bloom_view bloom;
    struct bk_sbbf_view sbbf;
} kind_view;

static void view_init(const bk_filter *filter, kind_view *view)
{
    view->kind = bk_filter_kind(filter);
    view->filter = filter;
    struct bk_blocked_view blocked;
    switch (view->kind) {
    case BK_KIND_BLOOM: assert_int_equal(bk_bloom_view(filter, &view->bloom), BK_OK); break;
    case BK_KIND_BLOCKED:
        assert_int_equal(bk_blocked_view(filter, &blocked), BK_EUNSUPPORTED); /* concurrent */
        break;
    default:
        assert_int_equal(bk_sbbf_view(filter, &view->sbbf), BK_OK);
        assert_true(view->sbbf.word_by_word);
    }
}

static bool view_contains(const kind_view *view, const void *key, size_t len)
{
    switch (view->kind) {
    case BK_KIND_BLOOM: return bk_bloom_view_contains(&view->bloom, key, len);
    case BK_KIND_BLOCKED: return bk_filter_contains(view->filter, key, len);
    default: return bk_sbbf_view_contains(&view->sbbf, key, len);
    }
}

typedef struct shared {
    bk_filter *filter;
    kind_view view;
    bool batched;
    uint64_t finished[WRITERS]; /* keys of writer w whose add returned */
    int writers_done;
    uint64_t false_negatives;
    uint64_t checks;
} shared;

static uint64_t key_of(unsigned writer, uint64_t index)
{
    return ((uint64_t)writer << 40) | index;
}

typedef struct writer_arg {
    shared *shared;
    unsigned writer;
} writer_arg;

static void *writer_main(void *argument)
{
    writer_arg *arg = argument;
    shared *s = arg->shared;
    uint64_t values[BATCH];
    bk_key keys[BATCH];
    for (uint64_t i = 0; i < KEYS_PER_WRITER;) {
        size_t n = s->batched ? BATCH : 1;
        if (i + n > KEYS_PER_WRITER)
            n = KEYS_PER_WRITER - i;
        for (size_t j = 0; j < n; j++) {
            values[j] = key_of(arg->writer, i + j);
            keys[j] = (bk_key){ &values[j], sizeof values[j] };
        }
        bk_status status = s->batched ? bk_filter_add_batch(s->filter, keys, n, NULL)
                                      : bk_filter_add(s->filter, &values[0], 8, NULL);
        if (status != BK_OK)
            __atomic_fetch_add(&s->false_negatives, 1000000, __ATOMIC_RELAXED);
        i += n;
        __atomic_store_n(&s->finished[arg->writer], i, __ATOMIC_RELEASE);
    }
    __atomic_fetch_add(&s->writers_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

typedef struct reader_arg {
    shared *shared;
    bool through_view;
} reader_arg;

static void *reader_main(void *argument)
{
    const reader_arg *arg = argument;
    shared *s = arg->shared;
    uint64_t rng = 0x1234567 ^ (uint64_t)(uintptr_t)&rng;
    uint64_t misses = 0, checks = 0;
    for (;;) {
        bool last_round = __atomic_load_n(&s->writers_done, __ATOMIC_ACQUIRE) == WRITERS;
        for (unsigned w = 0; w < WRITERS; w++) {
            uint64_t finished = __atomic_load_n(&s->finished[w], __ATOMIC_ACQUIRE);
            if (finished == 0)
                continue;
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            uint64_t probes[2] = { finished - 1, (rng >> 33) % finished };
            for (int p = 0; p < 2; p++) {
                uint64_t value = key_of(w, probes[p]);
                misses += arg->through_view
                              ? !view_contains(&s->view, &value, sizeof value)
                              : !bk_filter_contains(s->filter, &value, sizeof value);
                checks++;
            }
        }
        if (last_round)
            break;
    }
    __atomic_fetch_add(&s->false_negatives, misses, __ATOMIC_RELAXED);
    __atomic_fetch_add(&s->checks, checks, __ATOMIC_RELAXED);
    return NULL;
}

/* bits: 0 for the size of a 1% filter, else m (with k = 7). */
static void hammer(const char *kind_name, bool batched, uint64_t bits)
{
    bk_kind kind;
    assert_int_equal(bk_kind_from_name(kind_name, &kind), BK_OK);
    bk_params params = { .capacity = WRITERS * KEYS_PER_WRITER,
                         .fpr = 0.01,
                         .flags = BK_FLAG_CONCURRENT };
    if (bits != 0) {
        params.bits = bits;
        params.hashes = 7;
    }
    static shared s;
    memset(&s, 0, sizeof s);
    s.batched = batched;
    assert_int_equal(bk_filter_create(kind, &params, &s.filter), BK_OK);
    view_init(s.filter, &s.view);
    pthread_t writers[WRITERS], readers[READERS];
    writer_arg args[WRITERS];
    reader_arg reader_args[READERS];
    for (unsigned r = 0; r < READERS; r++) {
        reader_args[r] = (reader_arg){ &s, r % 2 == 1 };
        assert_int_equal(pthread_create(&readers[r], NULL, reader_main, &reader_args[r]), 0);
    }
    for (unsigned w = 0; w < WRITERS; w++) {
        args[w] = (writer_arg){ &s, w };
        assert_int_equal(pthread_create(&writers[w], NULL, writer_main, &args[w]), 0);
    }
    for (unsigned w = 0; w < WRITERS; w++)
        pthread_join(writers[w], NULL);
    for (unsigned r = 0; r < READERS; r++)
        pthread_join(readers[r], NULL);
    assert_int_equal(s.false_negatives, 0);
    assert_true(s.checks >= 2 * WRITERS); /* the readers did look */
    /* afterwards every key is there, and the count of new keys is sane */
    for (unsigned w = 0; w < WRITERS; w++) {
        for (uint64_t i = 0; i < KEYS_PER_WRITER; i++) {
            uint64_t value = key_of(w, i);
            assert_true(bk_filter_contains(s.filter, &value, sizeof value));
        }
    }
    bk_stats stats;
    bk_filter_stats(s.filter, &stats);
    assert_true(stats.keys_added <= WRITERS * KEYS_PER_WRITER);
    /* keys that looked old when added: at most the FPR at capacity (4 sigma) */
    double total = WRITERS * KEYS_PER_WRITER, p = stats.target_fpr;
    assert_true(total - (double)stats.keys_added <= total * p + 4 * sqrt(total * p));
    bk_filter_free(s.filter);
}

/* 8 MiB: bigger than one core's L2, where one-key queries of the classic
 * filter take the AVX-512 gather build on CPUs that have it. */
#define BIGGER_THAN_L2_BITS ((uint64_t)64 << 20)

static void test_bloom_single_adds(void **state)
{
    (void)state;
    hammer("bloom", false, 0);
}
static void test_bloom_batch_adds(void **state)
{
    (void)state;
    hammer("bloom", true, 0);
}
static void test_big_bloom_single_adds(void **state)
{
    (void)state;
    hammer("bloom", false, BIGGER_THAN_L2_BITS);
}
static void test_blocked_single_adds(void **state)
{
    (void)state;
    hammer("blocked", false, 0);
}
static void test_blocked_batch_adds(void **state)
{
    (void)state;
    hammer("blocked", true, 0);
}
static void test_sbbf_single_adds(void **state)
{
    (void)state;
    hammer("sbbf", false, 0);
}
static void test_sbbf_batch_adds(void **state)
{
    (void)state;
    hammer("sbbf", true, 0);
}

/* ------------------------------------------------------------------------ */
/* The fill alarm under concurrent adds: it fires exactly once              */
/* ------------------------------------------------------------------------ */

typedef struct alarm_shared {
    bk_filter *filter;
    bool batched;
    unsigned fired;        /* atomic */
    bk_fill_status status; /* written by the one alarm call */
} alarm_shared;

typedef struct alarm_writer {
    alarm_shared *shared;
    unsigned writer;
} alarm_writer;

/* The alarm may read the filter: the stats pass runs while other threads
 * still add (under TSan, a race there would be reported). */
static void count_alarm(bk_filter *filter, bk_fill_status status, void *context)
{
    alarm_shared *s = context;
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    s->status = status;
    __atomic_fetch_add(&s->fired, 1, __ATOMIC_RELAXED);
}

static void *alarm_writer_main(void *argument)
{
    alarm_writer *arg = argument;
    alarm_shared *s = arg->shared;
    uint64_t values[BATCH];
    bk_key keys[BATCH];
    for (uint64_t i = 0; i < KEYS_PER_WRITER;) {
        size_t n = s->batched ? BATCH : 1;
        if (i + n > KEYS_PER_WRITER)
            n = KEYS_PER_WRITER - i;
        for (size_t j = 0; j < n; j++) {
            values[j] = key_of(arg->writer, i + j);
            keys[j] = (bk_key){ &values[j], sizeof values[j] };
        }
        bk_status status = s->batched ? bk_filter_add_batch(s->filter, keys, n, NULL)
                                      : bk_filter_add(s->filter, &values[0], 8, NULL);
        assert_int_equal(status, BK_OK);
        i += n;
    }
    return NULL;
}

/* WRITERS threads add 4 x 6000 distinct keys to a filter built for 2,000:
 * it passes its design point while all of them add, and the alarm must
 * fire once, not once per thread that saw the countdown run out. */
static void alarm_once(const char *kind_name, bool batched)
{
    bk_kind kind;
    assert_int_equal(bk_kind_from_name(kind_name, &kind), BK_OK);
    bk_params params = { .capacity = 2000, .fpr = 0.01, .flags = BK_FLAG_CONCURRENT };
    for (int round = 0; round < 4; round++) {
        static alarm_shared s;
        memset(&s, 0, sizeof s);
        s.batched = batched;
        assert_int_equal(bk_filter_create(kind, &params, &s.filter), BK_OK);
        assert_int_equal(bk_filter_set_fill_alarm(s.filter, count_alarm, &s), BK_OK);
        pthread_t writers[WRITERS];
        alarm_writer args[WRITERS];
        for (unsigned w = 0; w < WRITERS; w++) {
            args[w] = (alarm_writer){ &s, w };
            assert_int_equal(pthread_create(&writers[w], NULL, alarm_writer_main, &args[w]), 0);
        }
        for (unsigned w = 0; w < WRITERS; w++)
            pthread_join(writers[w], NULL);
        assert_int_equal(__atomic_load_n(&s.fired, __ATOMIC_RELAXED), 1);
        assert_true(s.status != BK_FILL_OK);
        bk_fill_status now;
        assert_int_equal(bk_filter_fill_status(s.filter, &now), BK_OK);
        assert_true(now != BK_FILL_OK);
        bk_filter_free(s.filter);
    }
}

static void test_bloom_alarm_fires_once(void **state)
{
    (void)state;
    alarm_once("bloom", false);
}
static void test_bloom_batch_alarm_fires_once(void **state)
{
    (void)state;
    alarm_once("bloom", true);
}
static void test_blocked_alarm_fires_once(void **state)
{
    (void)state;
    alarm_once("blocked", false);
}
static void test_sbbf_batch_alarm_fires_once(void **state)
{
    (void)state;
    alarm_once("sbbf", true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bloom_single_adds),
        cmocka_unit_test(test_bloom_batch_adds),
        cmocka_unit_test(test_big_bloom_single_adds),
        cmocka_unit_test(test_blocked_single_adds),
        cmocka_unit_test(test_blocked_batch_adds),
        cmocka_unit_test(test_sbbf_single_adds),
        cmocka_unit_test(test_sbbf_batch_adds),
        cmocka_unit_test(test_bloom_alarm_fires_once),
        cmocka_unit_test(test_bloom_batch_alarm_fires_once),
        cmocka_unit_test(test_blocked_alarm_fires_once),
        cmocka_unit_test(test_sbbf_batch_alarm_fires_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
