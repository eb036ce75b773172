/*
 * bench/util.c -- clock, median, progress lines, the benchmark's big arrays.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "bench.h"

uint64_t bench_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *values, size_t count)
{
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        if (!isnan(values[i]))
            values[kept++] = values[i];
    if (kept == 0)
        return NAN;
    qsort(values, kept, sizeof *values, compare_doubles);
    return kept % 2 ? values[kept / 2] : (values[kept / 2 - 1] + values[kept / 2]) / 2;
}

#define ARRAY_HUGE_PAGE ((size_t)2 << 20)

void *bench_alloc_array(size_t bytes)
{
    size_t rounded = (bytes + ARRAY_HUGE_PAGE - 1) / ARRAY_HUGE_PAGE * ARRAY_HUGE_PAGE;
    void *memory;
    if (posix_memalign(&memory, ARRAY_HUGE_PAGE, rounded > 0 ? rounded : ARRAY_HUGE_PAGE) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(memory, rounded, MADV_HUGEPAGE); /* a hint: 4 KiB pages otherwise */
#endif
    return memory;
}

void bench_progress(const char *format, ...)
{
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    fprintf(stderr, "[%02d:%02d:%02d] ", utc.tm_hour, utc.tm_min, utc.tm_sec);
    va_list args;
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    fflush(stderr);
}

int slice_times_init(slice_times *times, size_t keys)
{
    times->count = 0;
    times->capacity = keys / BENCH_SLICE_KEYS + 1;
    times->ns_per_key = malloc(times->capacity * sizeof *times->ns_per_key);
    return times->ns_per_key == NULL ? -1 : 0;
}

void slice_times_add(slice_times *times, uint64_t begin_ns, uint64_t end_ns, size_t keys)
{
    if (times->ns_per_key != NULL && times->count < times->capacity && keys > 0)
        times->ns_per_key[times->count++] = (double)(end_ns - begin_ns) / (double)keys;
}

double slice_times_median(slice_times *times)
{
    double median = times->ns_per_key ? bench_median(times->ns_per_key, times->count) : NAN;
    free(times->ns_per_key);
    times->ns_per_key = NULL;
    times->count = 0;
    return median;
}
