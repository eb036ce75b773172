/*
 * tests/test_fill_alarm.c -- fill status and fill alarms, common to every
 * kind: the polled status agrees with bk_stats.past_design_point and
 * bk_filter_check_fill; the alarm fires exactly once, on the very add after
 * which the polled status first leaves BK_FILL_OK.
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

static size_t make_key(char *buffer, const char *prefix, unsigned i)
{
    return (size_t)snprintf(buffer, 32, "%s:%u", prefix, i);
}

typedef struct alarm_log {
    unsigned calls;
    bk_fill_status status;
    uint64_t keys_at_call; /* stats.keys_added when it fired */
    unsigned add_index;    /* the caller's index of the add in progress */
    const unsigned *current_add;
    bk_filter *filter;
} alarm_log;

static void record_alarm(bk_filter *filter, bk_fill_status status, void *context)
{
    alarm_log *log = context;
    bk_stats s;
    bk_filter_stats(filter, &s);
    log->calls++;
    log->status = status;
    log->keys_at_call = s.keys_added;
    log->add_index = log->current_add != NULL ? *log->current_add : 0;
    log->filter = filter;
}

static bk_fill_status poll_status(const bk_filter *f)
{
    bk_fill_status status = BK_FILL_DEGRADED;
    assert_int_equal(bk_filter_fill_status(f, &status), BK_OK);
    return status;
}

/* Adds keys one by one, polling after each; returns the index of the first
 * add after which the poll is not OK (or `count` if none). */
static unsigned fill_one_by_one(bk_filter *f, unsigned count, alarm_log *log)
{
    char key[32];
    unsigned index = 0, first_past = count;
    log->current_add = &index;
    for (index = 0; index < count; index++) {
        bk_status status = bk_filter_add(f, key, make_key(key, "k", index), NULL);
        assert_true(status == BK_OK || status == BK_EFULL);
        bk_fill_status polled = poll_status(f);
        if (polled != BK_FILL_OK && first_past == count)
            first_past = index;
        /* the three views agree at every step */
        bk_stats s;
        bk_filter_stats(f, &s);
        assert_int_equal(polled != BK_FILL_OK, s.past_design_point);
        assert_int_equal(bk_filter_check_fill(f), polled == BK_FILL_OK ? BK_OK : BK_EFULL);
        assert_int_equal(bk_fill_status_from_stats(&s), polled);
    }
    log->current_add = NULL;
    return first_past;
}

static void test_bloom_alarm_fires_once_at_the_design_point(void **state)
{
    (void)state;
    bk_params params = { .capacity = 1000, .fpr = 0.01 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &params, &f), BK_OK);
    alarm_log log = { 0 };
    assert_int_equal(bk_filter_set_fill_alarm(f, record_alarm, &log), BK_OK);
    unsigned first_past = fill_one_by_one(f, 3000, &log);
    assert_true(first_past < 3000);
    assert_int_equal(log.calls, 1);
    assert_int_equal(log.add_index, first_past); /* the very add that crossed */
    assert_ptr_equal(log.filter, f);
    assert_int_equal(log.status, BK_FILL_PAST_DESIGN_POINT);
    /* the design point is BK_DESIGN_MARGIN x capacity, by the fill estimate */
    bk_stats s;
    bk_filter_stats(f, &s);
    print_message("bloom: alarm at add %u (keys %lu); the fill's threshold is %.0f keys\n",
                  log.add_index, (unsigned long)log.keys_at_call, s.design_point_keys);
    /* 3000 keys in a filter for 1000: ten times the FPR and more */
    assert_int_equal(poll_status(f), BK_FILL_DEGRADED);
    assert_true(s.current_fpr >= BK_FILL_DEGRADED_FACTOR * s.target_fpr);
    bk_filter_free(f);
}

/* The same keys through add_batch: the alarm fires on the same key. */
static void test_alarm_in_batches(void **state)
{
    (void)state;
    bk_params params = { .capacity = 1000, .fpr = 0.01 };
    bk_filter *single, *batched;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &params, &single), BK_OK);
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &params, &batched), BK_OK);
    alarm_log log_single = { 0 }, log_batched = { 0 };
    bk_filter_set_fill_alarm(single, record_alarm, &log_single);
    bk_filter_set_fill_alarm(batched, record_alarm, &log_batched);
    unsigned first_past = fill_one_by_one(single, 2000, &log_single);
    enum { N = 2000 };
    static char text[N][32];
    bk_key keys[N];
    for (unsigned i = 0; i < N; i++) {
        keys[i].data = text[i];
        keys[i].len = make_key(text[i], "k", i);
    }
    for (unsigned start = 0; start < N; start += 500)
        assert_int_equal(bk_filter_add_batch(batched, keys + start, 500, NULL), BK_OK);
    assert_int_equal(log_batched.calls, 1);
    assert_int_equal(log_batched.keys_at_call, log_single.keys_at_call);
    assert_int_equal(log_single.add_index, first_past);
    bk_filter_free(single);
    bk_filter_free(batched);
}

/* Integer keys: the one-key integer adds (blocked and sbbf have their own,
 * bloom takes the handle's hash-then-add path) fire the alarm once, on the
 * same key and count as the byte-key adds of the keys' little-endian
 * bytes. */
static void test_alarm_with_integer_keys(void **state)
{
    (void)state;
    const bk_kind kinds[] = { BK_KIND_BLOCKED, BK_KIND_SBBF, BK_KIND_BLOOM };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        bk_params params = { .capacity = 1000, .fpr = 0.01 };
        bk_filter *by_value, *by_bytes;
        assert_int_equal(bk_filter_create(kinds[k], &params, &by_value), BK_OK);
        assert_int_equal(bk_filter_create(kinds[k], &params, &by_bytes), BK_OK);
        alarm_log log_value = { 0 }, log_bytes = { 0 };
        bk_filter_set_fill_alarm(by_value, record_alarm, &log_value);
        bk_filter_set_fill_alarm(by_bytes, record_alarm, &log_bytes);
        unsigned index;
        log_value.current_add = log_bytes.current_add = &index;
        for (index = 0; index < 3000; index++) {
            uint64_t value = (uint64_t)index * 0x9e3779b97f4a7c15ULL;
            uint8_t bytes[8];
            for (unsigned b = 0; b < 8; b++)
                bytes[b] = (uint8_t)(value >> (8 * b));
            bk_status status = bk_filter_add(by_bytes, bytes, sizeof bytes, NULL);
            assert_int_equal(bk_filter_add_u64(by_value, value, NULL), status);
        }
        assert_int_equal(log_bytes.calls, 1);
        assert_int_equal(log_value.calls, 1);
        assert_int_equal(log_value.add_index, log_bytes.add_index);
        assert_int_equal(log_value.keys_at_call, log_bytes.keys_at_call);
        bk_filter_free(by_value);
        bk_filter_free(by_bytes);
    }
}

static void test_rearming(void **state)
{
    (void)state;
    bk_params params = { .capacity = 200, .fpr = 0.01 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &params, &f), BK_OK);
    char key[32];
    /* past the design point before any alarm is set: the next new key fires it */
    for (unsigned i = 0; i < 400; i++)
        bk_filter_add(f, key, make_key(key, "a", i), NULL);
    alarm_log log = { 0 };
    assert_int_equal(bk_filter_set_fill_alarm(f, record_alarm, &log), BK_OK);
    assert_int_equal(log.calls, 0); /* setting it does not fire it */
    bool was_new = false;
    assert_int_equal(bk_filter_add(f, key, make_key(key, "a", 0), &was_new), BK_OK);
    assert_false(was_new);
    assert_int_equal(log.calls, 0); /* a key already there changes nothing */
    bk_filter_add(f, "fresh", 5, NULL);
    assert_int_equal(log.calls, 1);
    assert_int_equal(log.status, BK_FILL_DEGRADED);
    /* clear re-arms it */
    assert_int_equal(bk_filter_clear(f), BK_OK);
    assert_int_equal(poll_status(f), BK_FILL_OK);
    unsigned first_past = fill_one_by_one(f, 400, &log);
    assert_int_equal(log.calls, 2);
    assert_int_equal(log.add_index, first_past);
    /* removed: never again */
    assert_int_equal(bk_filter_set_fill_alarm(f, NULL, NULL), BK_OK);
    bk_filter_clear(f);
    fill_one_by_one(f, 400, &log);
    assert_int_equal(log.calls, 2);
    assert_int_equal(bk_filter_set_fill_alarm(NULL, record_alarm, &log), BK_EINVAL);
    assert_int_equal(bk_filter_fill_status(NULL, &(bk_fill_status){ 0 }), BK_EINVAL);
    assert_int_equal(bk_filter_fill_status(f, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_check_fill(NULL), BK_EINVAL);
    bk_filter_free(f);
}

/* A scalable chain that may not grow is past its design point the moment it
 * holds its capacity; one that may grow never is. */
static void test_scalable_alarms(void **state)
{
    (void)state;
    bk_params fixed = { .capacity = 300, .fpr = 0.01, .max_filters = 1 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_SCALABLE, &fixed, &f), BK_OK);
    alarm_log log = { 0 };
    bk_filter_set_fill_alarm(f, record_alarm, &log);
    unsigned first_past = fill_one_by_one(f, 400, &log);
    assert_int_equal(log.calls, 1);
    assert_int_equal(log.add_index, first_past);
    assert_int_equal(log.keys_at_call, 300); /* exactly at capacity */
    bk_filter_free(f);

    bk_params growing = { .capacity = 300, .fpr = 0.01 };
    assert_int_equal(bk_filter_create(BK_KIND_SCALABLE, &growing, &f), BK_OK);
    log = (alarm_log){ 0 };
    bk_filter_set_fill_alarm(f, record_alarm, &log);
    assert_int_equal(fill_one_by_one(f, 3000, &log), 3000);
    assert_int_equal(log.calls, 0);
    bk_filter_free(f);
}

/* An insertion window streams forever within its design; a time window fed
 * a burst passes it, once. */
static void test_window_alarms(void **state)
{
    (void)state;
    bk_params counted = { .window_keys = 200, .fpr = 0.01 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_WINDOW, &counted, &f), BK_OK);
    alarm_log log = { 0 };
    bk_filter_set_fill_alarm(f, record_alarm, &log);
    assert_int_equal(fill_one_by_one(f, 5000, &log), 5000);
    assert_int_equal(log.calls, 0);
    bk_filter_free(f);

    bk_params timed = { .window_seconds = 60, .capacity = 300, .fpr = 0.01 };
    assert_int_equal(bk_filter_create(BK_KIND_WINDOW, &timed, &f), BK_OK);
    log = (alarm_log){ 0 };
    bk_filter_set_fill_alarm(f, record_alarm, &log);
    /* all at the latest timestamp (0): one span takes the whole burst */
    unsigned first_past = fill_one_by_one(f, 1000, &log);
    assert_true(first_past < 1000);
    assert_int_equal(log.calls, 1);
    assert_int_equal(log.add_index, first_past);
    bk_filter_free(f);
}

static void test_status_names_and_thresholds(void **state)
{
    (void)state;
    assert_string_equal(bk_fill_status_name(BK_FILL_OK), "ok");
    assert_string_equal(bk_fill_status_name(BK_FILL_PAST_DESIGN_POINT), "past design point");
    assert_string_equal(bk_fill_status_name(BK_FILL_DEGRADED), "degraded");
    assert_string_equal(bk_fill_status_name((bk_fill_status)42), "unknown");
    bk_stats s = { .past_design_point = false, .current_fpr = 1, .target_fpr = 0.01 };
    assert_int_equal(bk_fill_status_from_stats(&s), BK_FILL_OK);
    s.past_design_point = true;
    s.current_fpr = 0.099;
    assert_int_equal(bk_fill_status_from_stats(&s), BK_FILL_PAST_DESIGN_POINT);
    s.current_fpr = 0.1;
    assert_int_equal(bk_fill_status_from_stats(&s), BK_FILL_DEGRADED);
    s.target_fpr = 0; /* a kind without a target FPR is never "degraded" */
    assert_int_equal(bk_fill_status_from_stats(&s), BK_FILL_PAST_DESIGN_POINT);
    assert_int_equal(bk_fill_status_from_stats(NULL), BK_FILL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bloom_alarm_fires_once_at_the_design_point),
        cmocka_unit_test(test_alarm_in_batches),
        cmocka_unit_test(test_alarm_with_integer_keys),
        cmocka_unit_test(test_rearming),
        cmocka_unit_test(test_scalable_alarms),
        cmocka_unit_test(test_window_alarms),
        cmocka_unit_test(test_status_names_and_thresholds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
