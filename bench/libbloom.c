/*
 * bench/libbloom.c -- the peer: Jyri Virkki's libbloom as Debian ships it
 * (libbloom-dev, /usr/include/bloom.h).  Compiled with BENCH_HAVE_LIBBLOOM
 * only when CMake found the library; otherwise the peer reports itself
 * absent and the benchmark leaves its columns empty.
 *
 * libbloom sizes itself from (entries, error) with the same textbook
 * formulas as bloomkit's bloom kind: bits = entries * -ln(error) / ln(2)^2
 * (truncated, where bloomkit rounds up), hashes = ceil(bits/entries * ln 2)
 * (bloomkit rounds to nearest).  Given the same n and p both therefore get
 * the same m to within one bit, and the same k whenever bits/entries * ln 2
 * is above x.5 (at p = 1%: 6.64 -> k = 7 for both).  The benchmark prints
 * both (m, k) so the "same m and k" comparison can be checked.
 *
 * Each query hashes the key twice with MurmurHash2 and probes k bits at
 * (a + i*b) mod m -- a division per probe, one cache miss per probe when
 * the filter is bigger than the caches.
 */
#include <math.h>
#include <string.h>

#include "bench.h"

#ifdef BENCH_HAVE_LIBBLOOM
/* By full path: src/bloom.h (on the internal include path) has the same name. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes" /* bloom_version() in bloom.h */
#include BENCH_LIBBLOOM_HEADER
#pragma GCC diagnostic pop

int libbloom_available(void)
{
    return 1;
}

const char *libbloom_version_string(void)
{
    return bloom_version();
}

/* Timed in slices, as bloomkit's kinds are (bench.h). */
static double time_checks(struct bloom *filter, const key_set *keys, uint64_t *hits)
{
    slice_times times;
    slice_times_init(&times, keys->count);
    uint64_t found = 0;
    for (size_t start = 0; start < keys->count; start += BENCH_SLICE_KEYS) {
        size_t end = keys->count - start < BENCH_SLICE_KEYS ? keys->count : start + BENCH_SLICE_KEYS;
        uint64_t begin = bench_now_ns();
        for (size_t i = start; i < end; i++)
            found += bloom_check(filter, keys->keys[i].data, (int)keys->keys[i].len) == 1;
        slice_times_add(&times, begin, bench_now_ns(), end - start);
    }
    *hits = found;
    return slice_times_median(&times);
}

static double time_adds(struct bloom *filter, const key_set *keys)
{
    slice_times times;
    slice_times_init(&times, keys->count);
    for (size_t start = 0; start < keys->count; start += BENCH_SLICE_KEYS) {
        size_t end = keys->count - start < BENCH_SLICE_KEYS ? keys->count : start + BENCH_SLICE_KEYS;
        uint64_t begin = bench_now_ns();
        for (size_t i = start; i < end; i++)
            bloom_add(filter, keys->keys[i].data, (int)keys->keys[i].len);
        slice_times_add(&times, begin, bench_now_ns(), end - start);
    }
    return slice_times_median(&times);
}

int libbloom_run(const key_set *present, const key_set *sample, const key_set *absent,
                 double fpr, int query_reps, peer_result *out)
{
    struct bloom filter;
    memset(&filter, 0, sizeof filter);
    if (present->count > 0x7fffffff || bloom_init(&filter, (int)present->count, fpr) != 0)
        return -1;
    out->insert_ns = time_adds(&filter, present);
    out->bits = (uint64_t)filter.bits;
    out->hashes = (unsigned)filter.hashes;
    out->bytes = (uint64_t)filter.bytes;
    out->false_negatives = 0;
    double pos[16], neg[16];
    if (query_reps < 1)
        query_reps = 1;
    if (query_reps > 16)
        query_reps = 16;
    for (int rep = 0; rep < query_reps; rep++) {
        uint64_t hits;
        pos[rep] = time_checks(&filter, sample, &hits);
        out->false_negatives += sample->count - hits;
        neg[rep] = time_checks(&filter, absent, &hits);
        out->false_positives = hits;
    }
    out->pos_ns = bench_median(pos, (size_t)query_reps);
    out->neg_ns = bench_median(neg, (size_t)query_reps);
    bloom_free(&filter);
    return 0;
}

#else

int libbloom_available(void)
{
    return 0;
}

const char *libbloom_version_string(void)
{
    return "absent";
}

int libbloom_run(const key_set *present, const key_set *sample, const key_set *absent,
                 double fpr, int query_reps, peer_result *out)
{
    (void)present, (void)sample, (void)absent, (void)fpr, (void)query_reps, (void)out;
    return -1;
}

#endif
