/*
 * cli/demo.c -- `bloomkit demo`: the library's main job on an embedded
 * default data set, with every figure measured as it runs.
 *
 *   1. size a filter for 100,000 keys at 1%, add "user:0".."user:99999",
 *      check that every key is found, and measure the FPR on 1,000,000
 *      keys never added ("guest:0".."guest:999999");
 *   2. read the fill: estimated key count, current FPR, design point;
 *   3. keep adding to twice the capacity: the FPR degrades silently, and
 *      the design-point check is what notices;
 *   4. union and intersection estimates for two overlapping sets;
 *   5. "admit on the second request" with the add() return value;
 *   6. save the filter to a file (the portable format, docs/FORMAT.md),
 *      load it and map it: both answer every key exactly as the original.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bloomkit.h"
#include "cli.h"

#define DEMO_KEYS 100000
#define DEMO_QUERIES 1000000

static size_t key_text(char *buffer, size_t size, const char *prefix, long i)
{
    int n = snprintf(buffer, size, "%s:%ld", prefix, i);
    return n < 0 ? 0 : (size_t)n;
}

static void add_range(bk_filter *filter, const char *prefix, long from, long to)
{
    char key[64];
    for (long i = from; i < to; i++)
        bk_filter_add(filter, key, key_text(key, sizeof key, prefix, i), NULL);
}

static long count_present(const bk_filter *filter, const char *prefix, long from, long to)
{
    char key[64];
    long present = 0;
    for (long i = from; i < to; i++)
        present += bk_filter_contains(filter, key, key_text(key, sizeof key, prefix, i));
    return present;
}

static void print_fill(const bk_filter *filter)
{
    bk_stats s;
    bk_filter_stats(filter, &s);
    printf("  fill ratio %.4f (design %.4f), estimated keys %.0f, current FPR %.4f%% -> %s\n",
           s.fill_ratio, s.design_fill_ratio, s.keys_estimated, 100 * s.current_fpr,
           s.past_design_point ? "PAST DESIGN POINT" : "ok");
}

static int demo_sizing_and_fpr(bk_filter *filter)
{
    bk_stats design;
    bk_filter_stats(filter, &design);
    printf("1. A filter for %d keys at 1%%: m = %llu bits (%.2f bits/key), k = %u\n", DEMO_KEYS,
           (unsigned long long)design.bits, (double)design.bits / DEMO_KEYS, design.hashes);
    add_range(filter, "user", 0, DEMO_KEYS);
    long found = count_present(filter, "user", 0, DEMO_KEYS);
    long false_positives = count_present(filter, "guest", 0, DEMO_QUERIES);
    printf("  added user:0..user:%d; found %ld of %d (no false negatives)\n", DEMO_KEYS - 1,
           found, DEMO_KEYS);
    printf("  guest:0..guest:%d, never added: %ld reported present, FPR %.4f%% (predicted "
           "%.4f%%)\n",
           DEMO_QUERIES - 1, false_positives, 100.0 * false_positives / DEMO_QUERIES,
           100 * design.target_fpr);
    return found == DEMO_KEYS ? 0 : 2;
}

static void demo_degradation(bk_filter *filter)
{
    printf("\n2. The fill at capacity\n");
    print_fill(filter);
    printf("\n3. Twice the keys it was sized for: nothing fails, the FPR quietly rises\n");
    add_range(filter, "user", DEMO_KEYS, 2 * DEMO_KEYS);
    long false_positives = count_present(filter, "guest", 0, DEMO_QUERIES);
    printf("  measured FPR now %.4f%%\n", 100.0 * false_positives / DEMO_QUERIES);
    print_fill(filter);
}

static int demo_set_estimates(void)
{
    bk_params params = { .capacity = 20000, .fpr = 0.01 };
    bk_filter *a, *b;
    if (bk_filter_create(BK_KIND_BLOOM, &params, &a) != BK_OK)
        return 2;
    if (bk_filter_create(BK_KIND_BLOOM, &params, &b) != BK_OK) {
        bk_filter_free(a);
        return 2;
    }
    add_range(a, "k", 0, 12000);    /* a = k:0..k:11999 */
    add_range(b, "k", 8000, 20000); /* b = k:8000..k:19999, 4,000 shared */
    bk_set_estimate e;
    bk_filter_estimate_sets(a, b, &e);
    printf("\n4. Two sets of 12,000 keys sharing 4,000, estimated from their filters\n");
    printf("  |a| %.0f, |b| %.0f, |a u b| %.0f (true 20000), |a n b| %.0f (true 4000), Jaccard "
           "%.3f (true 0.200)\n",
           e.a, e.b, e.union_size, e.intersection_size, e.jaccard);
    bk_filter_free(a);
    bk_filter_free(b);
    return 0;
}

static void demo_second_request(void)
{
    bk_params params = { .capacity = 1000, .fpr = 0.001 };
    bk_filter *seen;
    if (bk_filter_create(BK_KIND_BLOOM, &params, &seen) != BK_OK)
        return;
    const char *requests[] = { "/index.html", "/logo.png", "/index.html", "/about",
                               "/logo.png" };
    printf(
        "\n5. Cache admission on the second request (add() reports whether the key was new)\n");
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
        bool first_time;
        bk_filter_add(seen, requests[i], strlen(requests[i]), &first_time);
        printf("  GET %-12s %s\n", requests[i],
               first_time ? "first request: not cached" : "seen before: admit to cache");
    }
    bk_filter_free(seen);
}

/* How many of prefix:0..count-1 the two filters answer differently. */
static long count_disagreements(const bk_filter *a, const bk_filter *b, const char *prefix,
                                long count)
{
    char key[64];
    long differ = 0;
    for (long i = 0; i < count; i++) {
        size_t len = key_text(key, sizeof key, prefix, i);
        differ += bk_filter_contains(a, key, len) != bk_filter_contains(b, key, len);
    }
    return differ;
}

static double milliseconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return 1e3 * (double)(now.tv_sec - start->tv_sec) +
           1e-6 * (double)(now.tv_nsec - start->tv_nsec);
}

/* Opens (load or map) the file, timing it, and compares its answers. */
static int compare_reopened(const bk_filter *original, const char *path, bool map)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    bk_filter *reopened;
    bk_status status = map ? bk_filter_map(path, NULL, &reopened)
                           : bk_filter_load(path, NULL, &reopened);
    double milliseconds = milliseconds_since(&start);
    if (status != BK_OK) {
        fprintf(stderr, "bloomkit: %s: %s\n", path, bk_strerror(status));
        return 2;
    }
    long differ = count_disagreements(original, reopened, "user", DEMO_KEYS) +
                  count_disagreements(original, reopened, "guest", DEMO_QUERIES);
    printf("  %-6s in %.2f ms: %ld of %d answers differ from the original\n",
           map ? "mapped" : "loaded", milliseconds, differ, DEMO_KEYS + DEMO_QUERIES);
    bk_filter_free(reopened);
    return differ == 0 ? 0 : 2;
}

static int demo_file_round_trip(void)
{
    bk_params params = { .capacity = DEMO_KEYS, .fpr = 0.01 };
    bk_filter *filter;
    if (bk_filter_create(BK_KIND_BLOOM, &params, &filter) != BK_OK)
        return 2;
    add_range(filter, "user", 0, DEMO_KEYS);
    const char *directory = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/bloomkit-demo-XXXXXX", directory ? directory : "/tmp");
    int fd = mkstemp(path);
    int result = 2;
    if (fd >= 0) {
        close(fd);
        struct stat info;
        if (bk_filter_save(filter, path) == BK_OK && stat(path, &info) == 0) {
            printf("\n6. Saved to a file (%lld bytes: little-endian, checksummed, payload"
                   " 64-byte aligned), then reopened\n",
                   (long long)info.st_size);
            result = compare_reopened(filter, path, false);
            if (result == 0)
                result = compare_reopened(filter, path, true);
        }
        unlink(path);
    }
    bk_filter_free(filter);
    return result;
}

int cli_demo(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        printf("usage: bloomkit demo\n\nRuns the library's main job on an embedded data set and "
               "prints what it measured.\n");
        return argc == 2 && strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
    bk_params params = { .capacity = DEMO_KEYS, .fpr = 0.01 };
    bk_filter *filter;
    bk_status status = bk_filter_create(BK_KIND_BLOOM, &params, &filter);
    if (status != BK_OK) {
        fprintf(stderr, "bloomkit: %s\n", bk_strerror(status));
        return 2;
    }
    int result = demo_sizing_and_fpr(filter);
    demo_degradation(filter);
    bk_filter_free(filter);
    if (result == 0)
        result = demo_set_estimates();
    demo_second_request();
    if (result == 0)
        result = demo_file_round_trip();
    return result;
}
