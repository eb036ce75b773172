/*
 * examples/semijoin/semijoin.c -- a Bloom-filter semi-join: discard rows
 * before they cross the network.
 *
 *     semijoin DIR [--kind K] [--fpr P] [--year Y] [--priority P] [--check]
 *
 * The query, over the tables semijoin_generate wrote to DIR:
 *
 *     SELECT ... FROM orders JOIN lineitem USING (orderkey)
 *     WHERE year(orderdate) = Y AND orderpriority = P      (1995, 1-URGENT)
 *
 * with orders on one machine and lineitem on another.  Without a filter,
 * every line item travels to the orders' machine to be joined there.  With
 * one, the orders' side builds a filter over the keys of the orders that
 * pass the predicate (a few percent of them) and sends it; the line-item
 * side sends only the rows whose orderkey may be in it:
 *
 *     orders ──predicate──> keys ──build──> filter ──(KB)──┐
 *                                                         v
 *     lineitem (GB) ─────────────────────────────────> contains? ──> rows to send
 *
 * No matching row is ever lost (a filter has no false negatives); the
 * cost is the false positives: rows of other orders whose key the filter
 * wrongly admits.  Every order has at least one line item, so each of the
 * orders that fail the predicate is one independent trial: the number of
 * distinct false-positive keys is Binomial(orders failing, FPR), and
 * --check asserts it is at most mean + 4 standard deviations (a bound
 * exceeded with probability below 1e-4 by a correct filter), and that no
 * matching row was dropped.  The exact join is computed beside it, from a
 * bitmap of the matching keys.
 *
 * The filter (default fuse8, FPR 2^-8 = 0.39% at 9 bits per key) is saved
 * as DIR/orders.bkf, so `bloomkit query DIR/orders.bkf --field 1
 * --delimiter ,` gives the same rows.  Reported: rows and bytes that would
 * cross the network with and without the filter, the false positives
 * against the exact join, the filter's size beside an exact key list's.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bloomkit.h"

#define BATCH 8192
#define KEY_TEXT_BYTES 24 /* a decimal order key and its NUL */

typedef struct options {
    const char *directory;
    bk_kind kind;
    double fpr;
    int year;
    const char *priority;
    bool check;
} options;

/* The orders that pass the predicate: their keys as text (the filter's
 * keys) and as bits (the exact join). */
typedef struct matching_orders {
    char *key_text; /* keys back to back, each NUL-terminated */
    size_t text_used, text_capacity;
    bk_key *keys;
    size_t count, capacity;
    uint8_t *bitmap; /* bit k set: order k passes */
    size_t bitmap_bytes;
    uint64_t orders_total;
} matching_orders;

/* What crossed (or would cross) the network. */
typedef struct tally {
    uint64_t rows, bytes;                   /* all line items */
    uint64_t matching_rows, matching_bytes; /* the exact join */
    uint64_t sent_rows, sent_bytes;         /* admitted by the filter */
    uint64_t lost_rows;                     /* matching but not admitted: must be 0 */
    uint64_t false_positive_keys;           /* distinct keys admitted wrongly */
} tally;

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

static int fail(const char *what)
{
    fprintf(stderr, "semijoin: %s\n", what);
    return 1;
}

/* The n-th comma-separated field (from 1) of line, its length in *length;
 * NULL if the line is shorter. */
static const char *csv_field(const char *line, int n, size_t *length)
{
    for (int i = 1; i < n; i++) {
        line = strchr(line, ',');
        if (line == NULL)
            return NULL;
        line++;
    }
    const char *end = strpbrk(line, ",\n");
    *length = end ? (size_t)(end - line) : strlen(line);
    return line;
}

static bool bitmap_test(const uint8_t *bitmap, size_t bytes, uint64_t key)
{
    return key / 8 < bytes && (bitmap[key / 8] >> (key % 8) & 1);
}

static void bitmap_set(uint8_t *bitmap, uint64_t key)
{
    bitmap[key / 8] |= (uint8_t)(1u << (key % 8));
}

static bool append_key(matching_orders *m, const char *text, size_t length, uint64_t key)
{
    if (m->text_used + length + 1 > m->text_capacity) {
        size_t capacity = m->text_capacity ? 2 * m->text_capacity : 1 << 20;
        char *grown = realloc(m->key_text, capacity);
        if (grown == NULL)
            return false;
        m->key_text = grown;
        m->text_capacity = capacity;
    }
    if (m->count == m->capacity) {
        size_t capacity = m->capacity ? 2 * m->capacity : 1 << 16;
        bk_key *grown = realloc(m->keys, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        m->keys = grown;
        m->capacity = capacity;
    }
    memcpy(m->key_text + m->text_used, text, length);
    m->key_text[m->text_used + length] = '\0';
    /* Offsets for now: the text may move; made pointers in fix_key_pointers. */
    m->keys[m->count].data = (const void *)(uintptr_t)m->text_used;
    m->keys[m->count].len = length;
    m->count++;
    m->text_used += length + 1;
    if (key / 8 >= m->bitmap_bytes) {
        size_t bytes = (size_t)(key / 8 + 1) * 2;
        uint8_t *grown = realloc(m->bitmap, bytes);
        if (grown == NULL)
            return false;
        memset(grown + m->bitmap_bytes, 0, bytes - m->bitmap_bytes);
        m->bitmap = grown;
        m->bitmap_bytes = bytes;
    }
    bitmap_set(m->bitmap, key);
    return true;
}

static void fix_key_pointers(matching_orders *m)
{
    for (size_t i = 0; i < m->count; i++)
        m->keys[i].data = m->key_text + (uintptr_t)m->keys[i].data;
}

/* Scans orders.csv: field 5 is the date, 6 the priority. */
static int select_orders(const options *o, matching_orders *m)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/orders.csv", o->directory);
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return fail("cannot read orders.csv (run semijoin_generate first)");
    char year[8];
    snprintf(year, sizeof year, "%04d-", o->year);
    size_t priority_length = strlen(o->priority);
    char *line = NULL;
    size_t line_capacity = 0;
    int result = 0;
    while (result == 0 && getline(&line, &line_capacity, file) > 0) {
        m->orders_total++;
        size_t key_length, date_length, priority_field_length;
        const char *key = csv_field(line, 1, &key_length);
        const char *date = csv_field(line, 5, &date_length);
        const char *priority = csv_field(line, 6, &priority_field_length);
        if (key == NULL || date == NULL || priority == NULL || key_length >= KEY_TEXT_BYTES) {
            result = fail("orders.csv: a row without its fields");
            break;
        }
        if (strncmp(date, year, 5) != 0 || priority_field_length != priority_length ||
            memcmp(priority, o->priority, priority_length) != 0)
            continue;
        if (!append_key(m, key, key_length, strtoull(key, NULL, 10)))
            result = fail("out of memory");
    }
    free(line);
    fclose(file);
    fix_key_pointers(m);
    return result;
}

/* One batch of line items: the filter's answers against the exact join. */
static void tally_batch(const bk_filter *filter, const matching_orders *m, bk_key *keys,
                        const size_t *row_bytes, size_t count, uint8_t *false_positive_seen,
                        tally *t)
{
    bool admitted[BATCH];
    bk_filter_contains_batch(filter, keys, count, admitted);
    for (size_t i = 0; i < count; i++) {
        uint64_t key = strtoull(keys[i].data, NULL, 10);
        bool matching = bitmap_test(m->bitmap, m->bitmap_bytes, key);
        t->rows++;
        t->bytes += row_bytes[i];
        if (matching) {
            t->matching_rows++;
            t->matching_bytes += row_bytes[i];
        }
        if (admitted[i]) {
            t->sent_rows++;
            t->sent_bytes += row_bytes[i];
        }
        if (matching && !admitted[i])
            t->lost_rows++;
        if (admitted[i] && !matching && !(false_positive_seen[key / 8] >> (key % 8) & 1)) {
            false_positive_seen[key / 8] |= (uint8_t)(1u << (key % 8));
            t->false_positive_keys++;
        }
    }
}

/* Streams lineitem.csv through the filter, BATCH rows at a time. */
static int filter_line_items(const options *o, const bk_filter *filter, const matching_orders *m,
                             tally *t, double *seconds)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/lineitem.csv", o->directory);
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return fail("cannot read lineitem.csv");
    /* Order keys are at most 4 * orders: one bit each for "seen as a false positive". */
    uint8_t *false_positive_seen = calloc((size_t)(m->orders_total * 4 + 64) / 8 + 1, 1);
    static char key_text[BATCH][KEY_TEXT_BYTES];
    bk_key keys[BATCH];
    size_t row_bytes[BATCH], count = 0;
    char *line = NULL;
    size_t line_capacity = 0;
    ssize_t length;
    int result = false_positive_seen ? 0 : fail("out of memory");
    double started = seconds_now();
    while (result == 0 && (length = getline(&line, &line_capacity, file)) > 0) {
        size_t key_length;
        const char *key = csv_field(line, 1, &key_length);
        uint64_t key_value = key ? strtoull(key, NULL, 10) : 0;
        if (key == NULL || key_length >= KEY_TEXT_BYTES ||
            key_value >= m->orders_total * 4 + 64) {
            result = fail("lineitem.csv: a row without a valid order key");
            break;
        }
        memcpy(key_text[count], key, key_length);
        key_text[count][key_length] = '\0';
        keys[count] = (bk_key){ key_text[count], key_length };
        row_bytes[count] = (size_t)length;
        if (++count == BATCH) {
            tally_batch(filter, m, keys, row_bytes, count, false_positive_seen, t);
            count = 0;
        }
    }
    if (result == 0 && count > 0)
        tally_batch(filter, m, keys, row_bytes, count, false_positive_seen, t);
    *seconds = seconds_now() - started;
    free(line);
    free(false_positive_seen);
    fclose(file);
    return result;
}

static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){ .kind = BK_KIND_FUSE8, .fpr = 0.01, .year = 1995, .priority = "1-URGENT" };
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--kind") == 0 && value) {
            if (bk_kind_from_name(value, &o->kind) != BK_OK)
                return fail("unknown --kind");
            i++;
        } else if (strcmp(argv[i], "--fpr") == 0 && value) {
            o->fpr = strtod(value, NULL);
            i++;
        } else if (strcmp(argv[i], "--year") == 0 && value) {
            o->year = atoi(value);
            i++;
        } else if (strcmp(argv[i], "--priority") == 0 && value) {
            o->priority = value;
            i++;
        } else if (strcmp(argv[i], "--check") == 0) {
            o->check = true;
        } else if (argv[i][0] != '-' && o->directory == NULL) {
            o->directory = argv[i];
        } else {
            return fail("usage: semijoin DIR [--kind K] [--fpr P] [--year Y] [--priority P] "
                        "[--check]");
        }
    }
    if (o->directory == NULL)
        return fail(
            "usage: semijoin DIR [--kind K] [--fpr P] [--year Y] [--priority P] [--check]");
    if (!(o->fpr > 0 && o->fpr < 1))
        return fail("--fpr must be between 0 and 1");
    return 0;
}

/* The false-positive keys a correct filter exceeds with probability below
 * about 1e-4: mean + 4 standard deviations of Binomial(trials, fpr). */
static double false_positive_bound(uint64_t trials, double fpr)
{
    double mean = (double)trials * fpr;
    return mean + 4 * sqrt(mean * (1 - fpr));
}

static void print_report(const options *o, const matching_orders *m, const bk_stats *s,
                         size_t filter_file_bytes, const tally *t, double seconds)
{
    uint64_t trials = m->orders_total - m->count;
    double p = s->current_fpr;
    double mean = (double)trials * p;
    double bound = false_positive_bound(trials, p);
    double key_list_bytes = (double)(m->text_used); /* each key and a separator */
    printf("predicate: year(orderdate) = %d AND orderpriority = '%s'\n", o->year, o->priority);
    printf("orders: %" PRIu64 ", passing: %zu (%.2f%%)\n", m->orders_total, m->count,
           100.0 * (double)m->count / (double)m->orders_total);
    printf("filter: %s, %zu keys, %" PRIu64 " bytes of memory, %zu bytes as a file, "
           "%.2f bits/key, FPR %.4g\n",
           bk_kind_name(s->kind), m->count, s->bytes, filter_file_bytes,
           8.0 * (double)s->bytes / (double)(m->count ? m->count : 1), p);
    printf("exact key list (decimal text): %.0f bytes\n", key_list_bytes);
    printf("\n%-34s %12s %16s\n", "line items", "rows", "bytes");
    printf("%-34s %12" PRIu64 " %16" PRIu64 "\n", "sent without a filter", t->rows, t->bytes);
    printf("%-34s %12" PRIu64 " %16" PRIu64 "\n", "sent with the filter (rows)", t->sent_rows,
           t->sent_bytes);
    printf("%-34s %12s %16" PRIu64 "\n", "  + the filter itself", "",
           t->sent_bytes + filter_file_bytes);
    printf("%-34s %12" PRIu64 " %16" PRIu64 "\n", "the exact join (ideal)", t->matching_rows,
           t->matching_bytes);
    printf("%-34s %12" PRIu64 " %16" PRIu64 "\n", "false positives",
           t->sent_rows - t->matching_rows, t->sent_bytes - t->matching_bytes);
    printf("%-34s %12" PRIu64 "\n", "matching rows lost", t->lost_rows);
    printf("\nnetwork bytes with the filter: %.2f%% of without\n",
           100.0 * (double)(t->sent_bytes + filter_file_bytes) / (double)t->bytes);
    printf("false-positive keys: %" PRIu64 " of %" PRIu64 " orders failing the predicate "
           "(expected %.1f, 4-sigma bound %.1f)\n",
           t->false_positive_keys, trials, mean, bound);
    printf("filter pass over lineitem.csv: %.2f s, %.0f MB/s (parse, copy key, probe, tally)\n",
           seconds, 1e-6 * (double)t->bytes / seconds);
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    matching_orders m = { 0 };
    bk_filter *filter = NULL;
    tally t = { 0 };
    double seconds = 0;
    int result = select_orders(&o, &m);
    if (result == 0 && m.count == 0)
        result = fail("no order passes the predicate");
    if (result == 0) {
        bk_params params = { .capacity = m.count, .fpr = o.fpr };
        bk_status status = bk_filter_build(o.kind, &params, m.keys, m.count, &filter);
        if (status != BK_OK)
            result = fail(bk_strerror(status));
    }
    char filter_path[4096];
    snprintf(filter_path, sizeof filter_path, "%s/orders.bkf", o.directory);
    if (result == 0 && bk_filter_save(filter, filter_path) != BK_OK)
        result = fail("cannot save orders.bkf");
    size_t filter_file_bytes = 0;
    if (result == 0 && bk_filter_serialized_size(filter, &filter_file_bytes) != BK_OK)
        result = fail("cannot size the filter");
    if (result == 0)
        result = filter_line_items(&o, filter, &m, &t, &seconds);
    if (result == 0) {
        bk_stats stats;
        bk_filter_stats(filter, &stats);
        print_report(&o, &m, &stats, filter_file_bytes, &t, seconds);
        double bound = false_positive_bound(m.orders_total - m.count, stats.current_fpr);
        if (o.check && t.lost_rows != 0)
            result = fail("CHECK FAILED: matching rows were dropped");
        if (o.check && (double)t.false_positive_keys > bound)
            result = fail("CHECK FAILED: more false positives than the binomial bound");
        if (o.check && t.matching_rows == 0)
            result = fail("CHECK FAILED: the join is empty");
    }
    bk_filter_free(filter);
    free(m.key_text);
    free(m.keys);
    free(m.bitmap);
    return result;
}
