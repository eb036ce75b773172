/*
 * bench/counting_ab.c -- the counting filter one key per call, for
 * comparing two builds of the library side by side.
 *
 * Built by hand against any build's static library, so that the same
 * program times the counting filter of an older commit and of this one,
 * alternately in one locked run (docs/PERFORMANCE.md, "Counting one key
 * per call against its floor"):
 *
 *     cc -O2 -Iinclude bench/counting_ab.c build/rel/libbloomkit.a -lm \
 *         -o counting-ab                # any commit's library
 *     cc -O2 -Iinclude -DAB_U64 ...     # adds the integer-key rows
 *
 *     counting-ab N QUERIES             # e.g. 10000000 4000000
 *
 * Keys: N distinct random 64-bit integers packed back to back (8 bytes
 * each, splitmix64 of a counter), QUERIES present keys (a random sample)
 * and QUERIES absent ones (other counter values).  Rows, ns per key, the
 * median over 1M-key slices:
 *
 *   ins bytes  bk_filter_add of the key's 8 bytes, default hash, was_new
 *              NULL, into an empty filter until it holds N keys
 *   +/- bytes  bk_filter_contains of the key's 8 bytes
 *   ins u64 / +/- u64 (with AB_U64)  bk_filter_add_u64 /
 *              bk_filter_contains_u64, the filter hashing with BK_HASH_MIX64
 *   rd mix     the floor: splitmix64 of the key, multiply-shift to a line of
 *              a buffer as big as the filter, one 8-byte read of the line
 *              (what any one-line-per-key design must at least do)
 *
 * The buffer of `rd mix` is allocated as the library allocates a filter
 * (mmap, MADV_HUGEPAGE, written in full first); the run prints whether
 * the process holds huge pages.  Uses only calls every version has.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bloomkit/filter.h"

#define SLICE ((size_t)1 << 20)

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The slices' median, ns per key. */
typedef struct slices {
    double ns[1024];
    size_t count;
} slices;

static void slices_add(slices *s, uint64_t begin, uint64_t end, size_t keys)
{
    if (s->count < 1024)
        s->ns[s->count++] = (double)(end - begin) / (double)keys;
}

static double slices_median(slices *s)
{
    qsort(s->ns, s->count, sizeof s->ns[0], compare_doubles);
    return s->count ? s->ns[s->count / 2] : 0;
}

static uint64_t key_at(const uint8_t *keys, size_t i)
{
    uint64_t v;
    memcpy(&v, keys + 8 * i, 8);
    return v;
}

typedef enum form { FORM_BYTES, FORM_U64 } form;

static bk_filter *make_filter(size_t n, form f)
{
    bk_params params;
    memset(&params, 0, sizeof params);
    params.capacity = n;
    params.fpr = 0.01;
#ifdef AB_U64
    if (f == FORM_U64)
        params.hash_algorithm = BK_HASH_MIX64;
#endif
    bk_filter *filter = NULL;
    if (bk_filter_create(BK_KIND_COUNTING, &params, &filter) != BK_OK) {
        fprintf(stderr, "counting filter of %zu keys not created\n", n);
        exit(1);
    }
    (void)f;
    return filter;
}

static double time_inserts(bk_filter *filter, const uint8_t *keys, size_t n, form f)
{
    slices s = { .count = 0 };
    size_t failed = 0;
    for (size_t start = 0; start < n; start += SLICE) {
        size_t count = n - start < SLICE ? n - start : SLICE;
        const uint8_t *batch = keys + 8 * start;
        uint64_t begin = now_ns();
        if (f == FORM_BYTES)
            for (size_t i = 0; i < count; i++)
                failed += bk_filter_add(filter, batch + 8 * i, 8, NULL) != BK_OK;
#ifdef AB_U64
        else
            for (size_t i = 0; i < count; i++)
                failed += bk_filter_add_u64(filter, key_at(batch, i), NULL) != BK_OK;
#endif
        slices_add(&s, begin, now_ns(), count);
    }
    if (failed) {
        fprintf(stderr, "%zu adds failed\n", failed);
        exit(1);
    }
    return slices_median(&s);
}

static double time_queries(const bk_filter *filter, const uint8_t *keys, size_t count, form f,
                           uint64_t *hits)
{
    slices s = { .count = 0 };
    uint64_t found = 0;
    for (size_t start = 0; start < count; start += SLICE) {
        size_t slice = count - start < SLICE ? count - start : SLICE;
        const uint8_t *batch = keys + 8 * start;
        uint64_t begin = now_ns();
        if (f == FORM_BYTES)
            for (size_t i = 0; i < slice; i++)
                found += bk_filter_contains(filter, batch + 8 * i, 8);
#ifdef AB_U64
        else
            for (size_t i = 0; i < slice; i++)
                found += bk_filter_contains_u64(filter, key_at(batch, i));
#endif
        slices_add(&s, begin, now_ns(), slice);
    }
    *hits = found;
    return slices_median(&s);
}

/* The floor: one key mixed, its line of `lines` read (8 bytes). */
static double time_floor(const uint64_t *buffer, uint64_t lines, const uint8_t *keys,
                         size_t count)
{
    slices s = { .count = 0 };
    uint64_t sum = 0;
    for (size_t start = 0; start < count; start += SLICE) {
        size_t slice = count - start < SLICE ? count - start : SLICE;
        const uint8_t *batch = keys + 8 * start;
        uint64_t begin = now_ns();
        for (size_t i = 0; i < slice; i++) {
            uint64_t h = splitmix(key_at(batch, i));
            sum += buffer[(uint64_t)(((unsigned __int128)h * lines) >> 64) * 8];
        }
        slices_add(&s, begin, now_ns(), slice);
    }
    sink = sum;
    return slices_median(&s);
}

static uint64_t *floor_buffer(size_t bytes)
{
    void *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    madvise(block, bytes, MADV_HUGEPAGE);
    memset(block, 1, bytes);
    return block;
}

static void print_huge_pages(const char *when)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "AnonHugePages:", 14) == 0)
            printf("# %s %s", when, line);
    if (f != NULL)
        fclose(f);
}

/* One form: a fresh filter of all n keys, then both query sides. */
static void run_form(const char *name, form f, const uint8_t *keys, size_t n,
                     const uint8_t *present, const uint8_t *absent, size_t queries)
{
    bk_filter *filter = make_filter(n, f);
    double insert = time_inserts(filter, keys, n, f);
    uint64_t hits_present, hits_absent;
    double plus = time_queries(filter, present, queries, f, &hits_present);
    double minus = time_queries(filter, absent, queries, f, &hits_absent);
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    printf("ins %-5s %7.2f   + %-5s %7.2f   - %-5s %7.2f   bytes %zu fpr %.3f%%%s\n", name,
           insert, name, plus, name, minus, (size_t)stats.bytes,
           100.0 * (double)hits_absent / (double)queries,
           hits_present == queries ? "" : "  FALSE NEGATIVES");
    print_huge_pages(name);
    bk_filter_free(filter);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s N QUERIES\n", argv[0]);
        return 2;
    }
    size_t n = strtoull(argv[1], NULL, 10), queries = strtoull(argv[2], NULL, 10);
    if (n == 0 || queries == 0 || queries > n) {
        fprintf(stderr, "need 0 < QUERIES <= N\n");
        return 2;
    }
    uint8_t *keys = malloc(8 * n), *present = malloc(8 * queries), *absent = malloc(8 * queries);
    if (keys == NULL || present == NULL || absent == NULL)
        return 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = splitmix(2 * (uint64_t)i);
        memcpy(keys + 8 * i, &v, 8);
    }
    for (size_t i = 0; i < queries; i++) {
        uint64_t pick = splitmix(i ^ 0x5bd1e995u) % n;
        memcpy(present + 8 * i, keys + 8 * pick, 8);
        uint64_t v = splitmix(2 * (uint64_t)i + 1);
        memcpy(absent + 8 * i, &v, 8);
    }
    run_form("bytes", FORM_BYTES, keys, n, present, absent, queries);
#ifdef AB_U64
    run_form("u64", FORM_U64, keys, n, present, absent, queries);
#endif
    bk_filter *probe = make_filter(n, FORM_BYTES);
    bk_stats stats;
    bk_filter_stats(probe, &stats);
    bk_filter_free(probe);
    size_t bytes = ((size_t)stats.bytes + 63) & ~(size_t)63;
    uint64_t *buffer = floor_buffer(bytes);
    printf("rd mix %7.2f  (buffer %zu bytes)\n",
           time_floor(buffer, bytes / 64, present, queries), bytes);
    munmap(buffer, bytes);
    free(keys);
    free(present);
    free(absent);
    return 0;
}
