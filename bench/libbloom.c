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
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifdef BENCH_HAVE_LIBBLOOM
/* By full path: src/bloom.h (on the internal include path) has the same name. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes" /* bloom_version() in bloom.h */
#include BENCH_LIBBLOOM_HEADER
#pragma GCC diagnostic pop

int libbloom_available(void) { return 1; }

const char *libbloom_version_string(void) { return bloom_version(); }

/* Timed in slices, as bloomkit's kinds are (bench.h). */
static double time_checks(struct bloom *filter, const key_set *keys, uint64_t *hits)
{
    slice_times times;
    slice_times_init(&times, keys->count);
    uint64_t found = 0;
    for (size_t start = 0; start < keys->count; start += BENCH_SLICE_KEYS) {
        size_t end = keys->count - start < BENCH_SLICE_KEYS ? keys->count
                                                            : start + BENCH_SLICE_KEYS;
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
        size_t end = keys->count - start < BENCH_SLICE_KEYS ? keys->count
                                                            : start + BENCH_SLICE_KEYS;
        uint64_t begin = bench_now_ns();
        for (size_t i = start; i < end; i++)
            bloom_add(filter, keys->keys[i].data, (int)keys->keys[i].len);
        slice_times_add(&times, begin, bench_now_ns(), end - start);
    }
    return slice_times_median(&times);
}

struct peer_filter {
    struct bloom bloom;
};

peer_filter *libbloom_build(const key_set *present, double fpr, peer_result *out)
{
    peer_filter *filter = calloc(1, sizeof *filter);
    if (filter == NULL)
        return NULL;
    if (present->count > 0x7fffffff ||
        bloom_init(&filter->bloom, (int)present->count, fpr) != 0) {
        free(filter);
        return NULL;
    }
    out->insert_ns = time_adds(&filter->bloom, present);
    out->bits = (uint64_t)filter->bloom.bits;
    out->hashes = (unsigned)filter->bloom.hashes;
    out->bytes = (uint64_t)filter->bloom.bytes;
    return filter;
}

void libbloom_query(peer_filter *filter, const key_set *sample, const key_set *absent,
                    peer_result *out)
{
    uint64_t hits;
    out->pos_ns = time_checks(&filter->bloom, sample, &hits);
    out->false_negatives = sample->count - hits;
    out->neg_ns = time_checks(&filter->bloom, absent, &hits);
    out->false_positives = hits;
}

void libbloom_free(peer_filter *filter)
{
    if (filter != NULL)
        bloom_free(&filter->bloom);
    free(filter);
}
#else

int libbloom_available(void) { return 0; }

const char *libbloom_version_string(void) { return "absent"; }

peer_filter *libbloom_build(const key_set *present, double fpr, peer_result *out)
{
    (void)present, (void)fpr, (void)out;
    return NULL;
}

void libbloom_query(peer_filter *filter, const key_set *sample, const key_set *absent,
                    peer_result *out)
{
    (void)filter, (void)sample, (void)absent, (void)out;
}

void libbloom_free(peer_filter *filter) { (void)filter; }
#endif
