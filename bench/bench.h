/*
 * bench/bench.h -- shared pieces of bloomkit-bench (see bench/main.c for the
 * program and docs/PERFORMANCE.md for what it measures and why).
 *
 *   keys.c      deterministic key sets (splitmix64), stored compactly
 *   machine.c   the machine's own limits: one random cache-line read,
 *               dependent (pointer chase) and independent (prefetched)
 *   libbloom.c  the peer: Debian's libbloom, when the build found it
 *   main.c      the program (bench/run.h lists its parts: options.c,
 *               forms.c, run.c, report.c, one_key.c)
 *   first_build.c  bloomkit-bench-first-build: a build in a fresh process
 */
#ifndef BK_BENCH_H
#define BK_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "bloomkit.h"

/* ------------------------------------------------------------------ time */

/* Monotonic nanoseconds. */
uint64_t bench_now_ns(void);

/* The median of `count` values (sorts them in place); NaN for count 0 or
 * when every value is NaN (NaN values are ignored). */
double bench_median(double *values, size_t count);

/*
 * Timing in slices.  A pass over many keys is timed in slices of
 * BENCH_SLICE_KEYS keys and the figure is the median slice's time per key:
 * on a shared machine a slice during which the process was preempted is an
 * outlier, and the median ignores it, where a single total would not.
 */
#define BENCH_SLICE_KEYS 4096

typedef struct slice_times {
    double *ns_per_key;
    size_t count;
    size_t capacity;
} slice_times;

/* Room for the slices of `keys` keys; 0, or -1 when memory ran out. */
int slice_times_init(slice_times *times, size_t keys);
void slice_times_add(slice_times *times, uint64_t begin_ns, uint64_t end_ns, size_t keys);
/* The median slice (NaN if none), and frees the slices. */
double slice_times_median(slice_times *times);

/* ---------------------------------------------------------------- arrays */

/*
 * The benchmark's own big arrays (keys, bk_key descriptors, hashes), which
 * every batch pass streams: 2 MiB-aligned with the transparent-huge-page
 * hint, as the filters are.  On the Zen 5 virtual machine of
 * docs/PERFORMANCE.md, streaming the same 10^7-key arrays on 4 KiB pages
 * took 4.7 to 23 ns per key from one pass to the next while the filter's
 * own reads stayed within 2%; on 2 MiB pages the passes repeat to within
 * about 10%.  NULL when memory ran out; release with free().
 */
void *bench_alloc_array(size_t bytes);

/* Progress line on stderr, prefixed with the wall-clock time. */
void bench_progress(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------------ keys */

typedef enum key_type {
    KEY_INT64 = 0, /* 8 bytes: splitmix64 output, native byte order */
    KEY_STR16 = 1  /* 16 bytes: the same value as 16 lower-case hex digits */
} key_type;

#define KEY_TYPE_COUNT 2

/* "int64" / "str16". */
const char *key_type_name(key_type type);
size_t key_type_bytes(key_type type);

/*
 * A set of `count` keys stored back to back (count * key_type_bytes bytes,
 * no separators), and a bk_key array pointing into it.  Key i of the stream
 * starting at `first_index` is derived from splitmix64's counter
 * first_index + i, so two streams whose index ranges do not overlap share
 * no key (splitmix64's output is a bijection of its counter).
 */
typedef struct key_set {
    key_type type;
    size_t count;
    uint8_t *bytes;
    bk_key *keys;
} key_set;

/* Fills `set`; returns 0, or -1 when memory ran out (set is then empty). */
int key_set_generate(key_set *set, key_type type, uint64_t first_index, size_t count);

/* `count` keys of `source` evenly spread over it (stride source->count/count),
 * copied into a compact array of their own (bytes and keys allocated). */
int key_set_sample(key_set *sample, const key_set *source, size_t count);

void key_set_free(key_set *set);

/* --------------------------------------------------------------- machine */

typedef struct memory_limits {
    uint64_t bytes;        /* buffer size measured */
    double dependent_ns;   /* one random line read when each address depends on the last */
    double independent_ns; /* one random line read when addresses are known ahead */
    double keyed_ns[2];    /* one key hashed (XXH3-128 of 8 / 16 bytes) and its line read */
    double huge_mb;        /* of which backed by transparent huge pages (MiB) */
} memory_limits;

/* Measures both read times in a buffer of `bytes` allocated as bloomkit
 * allocates filters (src/memory.c, with or without the huge page hint as
 * BLOOMKIT_NO_HUGEPAGE says); the median of `reps` repetitions.  Returns 0,
 * -1 when memory ran out. */
int measure_memory_limits(uint64_t bytes, int reps, memory_limits *out);

/* One random line read with addresses known ahead (the fastest way, as
 * above) in memory[0..bytes) that the caller owns, read only: a filter's
 * own bit array.  `seed` picks the lines.  NAN below two lines. */
double measure_independent_read_in(const void *memory, uint64_t bytes, uint64_t seed);

/* MiB of this process's anonymous memory in transparent huge pages now
 * (/proc/self/smaps_rollup), or NaN when the kernel does not say. */
double process_huge_mb(void);

/* ---------------------------------------------------------------- peers */

/* One peer measurement: NaN where the peer has no such operation. */
typedef struct peer_result {
    uint64_t bits;
    unsigned hashes;
    uint64_t bytes;
    double insert_ns;
    double pos_ns;
    double neg_ns;
    uint64_t false_positives;
    uint64_t false_negatives;
} peer_result;

/* True when this build links Debian's libbloom. */
int libbloom_available(void);
const char *libbloom_version_string(void);

/* A libbloom filter under measurement. */
typedef struct peer_filter peer_filter;

/* Builds libbloom from (entries = present->count, error = fpr) and adds
 * every present key: out->insert_ns, bits, hashes and bytes.  NULL if
 * libbloom refused the parameters (or is absent). */
peer_filter *libbloom_build(const key_set *present, double fpr, peer_result *out);

/* One repetition of the query passes: bloom_check over `sample` (present
 * keys) and `absent`: out->pos_ns, neg_ns, false_negatives, false_positives. */
void libbloom_query(peer_filter *filter, const key_set *sample, const key_set *absent,
                    peer_result *out);

void libbloom_free(peer_filter *filter);

#endif
