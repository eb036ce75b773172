/*
 * bench/machine.c -- what one random cache-line read costs on this machine,
 * in a buffer as big as the filter under test.
 *
 * A filter query far bigger than the caches is bounded by memory: at best
 * one cache line per key (blocked kinds), fetched either one after another
 * or many in flight at once.  Both bounds are measured here, in a buffer
 * allocated exactly as filters are (src/memory.c: mmap + MADV_HUGEPAGE
 * above 2 MiB, unless BLOOMKIT_NO_HUGEPAGE is set), and written in full
 * first so that every page is real (an untouched anonymous page reads as
 * the kernel's shared zero page, which would always hit in cache).
 *
 *   dependent:   a pointer chase.  C slots (C = min(lines, 2^20)) sit on
 *                distinct lines spread over the whole buffer (slot j on
 *                line j * P mod lines, P coprime to lines), linked in one
 *                random cycle (Sattolo's algorithm), so the address of each
 *                read is the value of the previous one: pure latency.
 *
 *   independent: reads whose addresses come from a counter (splitmix64
 *                mixed, multiply-shift reduced), so the core can keep many
 *                misses in flight.  Four ways, the fastest taken: plain
 *                loads; a software prefetch 16 and 64 reads ahead; and
 *                staged (the addresses of 16 reads computed and
 *                prefetched, the reads done three such stages later).  The
 *                last was the fastest at 1e8-key sizes on the Xeon of
 *                docs/PERFORMANCE.md, where a prefetch 16 ahead left a
 *                third of the memory's overlap unused (8.5 against ~5.5 ns
 *                per line).  This is the floor for a batch of filter
 *                queries that each need one line.  The same reads are also
 *                timed in a filter's own bit array, between its query
 *                passes (measure_independent_read_in): on a virtual
 *                machine whose memory is slow for a while after it is
 *                allocated, and changes speed from minute to minute, that
 *                is the floor the queries had at the time.
 *
 *   keyed:       one key per step, as the benchmark calls
 *                bk_filter_contains: key i read through its bk_key from an
 *                array of 8- or 16-byte keys stored back to back, hashed
 *                with XXH3-128 (bloomkit's default hash), and the line that
 *                the hash's low half picks read; no prefetch, nothing
 *                carried from one step to the next, so the core overlaps
 *                what it can by itself.  The least a one-key query of a
 *                kind that reads one line can cost in the benchmark (a
 *                blocked filter also tests its k bits, and a call goes
 *                through the bk_filter handle).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "hash.h"
#include "memory.h"

#define LINE_WORDS 8
#define CHASE_SLOTS_MAX ((size_t)1 << 20)
#define CHASE_STEPS ((size_t)1 << 21)
#define CHASE_SLICE ((size_t)1024) /* ~0.1 ms per slice even from DRAM */
#define INDEPENDENT_READS ((size_t)1 << 22)
#define STAGE_READS 16
#define STAGES_AHEAD 3
#define MAX_REPS 15

static volatile uint64_t sink;

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* An odd stride near lines * 0.618 that is coprime to `lines`, so
 * j -> j * stride mod lines visits distinct lines spread over the buffer. */
static uint64_t spread_stride(uint64_t lines)
{
    uint64_t stride = (uint64_t)((double)lines * 0.6180339887) | 1;
    while (gcd(stride, lines) != 1)
        stride += 2;
    return stride % lines == 0 ? 1 : stride;
}

/* Links `slots` lines into one random cycle; returns the first word index. */
static size_t build_chase(uint64_t *buffer, uint64_t lines, size_t slots, uint64_t seed)
{
    uint32_t *order = malloc(slots * sizeof *order);
    if (order == NULL)
        return SIZE_MAX;
    for (size_t i = 0; i < slots; i++)
        order[i] = (uint32_t)i;
    for (size_t i = slots - 1; i > 0; i--) { /* Sattolo: one cycle through every slot */
        size_t j = (size_t)bk_reduce(bk_mix64(seed + i), i);
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    uint64_t stride = spread_stride(lines);
    for (size_t i = 0; i < slots; i++) {
        uint64_t from = ((uint64_t)order[i] * stride) % lines;
        uint64_t to = ((uint64_t)order[(i + 1) % slots] * stride) % lines;
        buffer[from * LINE_WORDS] = to * LINE_WORDS;
    }
    size_t start = (size_t)(((uint64_t)order[0] * stride) % lines) * LINE_WORDS;
    free(order);
    return start;
}

/* Both loops are timed in slices (bench.h), the median slice reported. */
static double time_dependent(const uint64_t *buffer, size_t start)
{
    slice_times times;
    slice_times_init(&times, CHASE_STEPS / CHASE_SLICE * BENCH_SLICE_KEYS);
    uint64_t position = start;
    for (size_t done = 0; done < CHASE_STEPS; done += CHASE_SLICE) {
        uint64_t begin = bench_now_ns();
        for (size_t i = 0; i < CHASE_SLICE; i++)
            position = buffer[position];
        slice_times_add(&times, begin, bench_now_ns(), CHASE_SLICE);
    }
    sink += position;
    return slice_times_median(&times);
}

static inline size_t read_line(uint64_t seed, size_t i, uint64_t lines)
{
    return (size_t)bk_reduce(bk_mix64(seed + i), lines) * LINE_WORDS;
}

/* One slice of reads i in [from, from + BENCH_SLICE_KEYS), with a prefetch
 * `distance` reads ahead (0: none). */
static uint64_t read_with_distance(const uint64_t *buffer, uint64_t lines, uint64_t seed,
                                   size_t from, size_t distance)
{
    uint64_t sum = 0;
    for (size_t i = from; i < from + BENCH_SLICE_KEYS; i++) {
        if (distance != 0)
            __builtin_prefetch(&buffer[read_line(seed, i + distance, lines)]);
        sum += buffer[read_line(seed, i, lines)];
    }
    return sum;
}

/* One slice read in stages: a stage's addresses are computed and prefetched
 * STAGES_AHEAD stages before they are read. */
static uint64_t read_in_stages(const uint64_t *buffer, uint64_t lines, uint64_t seed,
                               size_t from)
{
    size_t ring[STAGES_AHEAD + 1][STAGE_READS];
    const size_t stages = BENCH_SLICE_KEYS / STAGE_READS;
    uint64_t sum = 0;
    for (size_t s = 0; s < stages + STAGES_AHEAD; s++) {
        if (s < stages) {
            size_t *stage = ring[s % (STAGES_AHEAD + 1)];
            for (size_t j = 0; j < STAGE_READS; j++) {
                stage[j] = read_line(seed, from + s * STAGE_READS + j, lines);
                __builtin_prefetch(&buffer[stage[j]]);
            }
        }
        if (s >= STAGES_AHEAD) {
            const size_t *stage = ring[(s - STAGES_AHEAD) % (STAGES_AHEAD + 1)];
            for (size_t j = 0; j < STAGE_READS; j++)
                sum += buffer[stage[j]];
        }
    }
    return sum;
}

/* Keys as the benchmark stores them: `count` keys of `key_len` bytes back
 * to back, and their bk_key descriptors; NULL when memory ran out. */
static bk_key *make_keys(size_t count, size_t key_len, uint64_t seed, uint8_t **bytes)
{
    *bytes = bench_alloc_array(count * key_len);
    bk_key *keys = bench_alloc_array(count * sizeof *keys);
    if (*bytes == NULL || keys == NULL) {
        free(*bytes);
        free(keys);
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        uint64_t words[2] = { bk_mix64(seed + i), bk_mix64(~(seed + i)) };
        memcpy(*bytes + i * key_len, words, key_len);
        keys[i] = (bk_key){ *bytes + i * key_len, key_len };
    }
    return keys;
}

static double time_keyed(const uint64_t *buffer, uint64_t lines, uint64_t seed, size_t key_len)
{
    uint8_t *bytes;
    bk_key *keys = make_keys(INDEPENDENT_READS, key_len, seed, &bytes);
    if (keys == NULL)
        return NAN;
    slice_times times;
    slice_times_init(&times, INDEPENDENT_READS);
    uint64_t sum = 0;
    for (size_t done = 0; done < INDEPENDENT_READS; done += BENCH_SLICE_KEYS) {
        uint64_t begin = bench_now_ns();
        for (size_t i = done; i < done + BENCH_SLICE_KEYS; i++) {
            bk_hash hash = bk_hash_xxh3(keys[i].data, keys[i].len, 0);
            sum += buffer[bk_reduce(hash.h1, lines) * LINE_WORDS];
        }
        slice_times_add(&times, begin, bench_now_ns(), BENCH_SLICE_KEYS);
    }
    sink += sum;
    free(keys);
    free(bytes);
    return slice_times_median(&times);
}

enum { READ_PLAIN, READ_AHEAD_16, READ_AHEAD_64, READ_STAGED, READ_WAYS };

static double time_independent(const uint64_t *buffer, uint64_t lines, uint64_t seed, int way)
{
    slice_times times;
    slice_times_init(&times, INDEPENDENT_READS);
    uint64_t sum = 0;
    for (size_t done = 0; done < INDEPENDENT_READS; done += BENCH_SLICE_KEYS) {
        uint64_t begin = bench_now_ns();
        if (way == READ_STAGED)
            sum += read_in_stages(buffer, lines, seed, done);
        else
            sum += read_with_distance(buffer, lines, seed, done,
                                      way == READ_PLAIN      ? 0
                                      : way == READ_AHEAD_16 ? 16
                                                             : 64);
        slice_times_add(&times, begin, bench_now_ns(), BENCH_SLICE_KEYS);
    }
    sink += sum;
    return slice_times_median(&times);
}

/* The fastest of the ways, each over its own sequence of lines. */
static double fastest_independent(const uint64_t *buffer, uint64_t lines, uint64_t seed)
{
    double best = INFINITY;
    for (int way = 0; way < READ_WAYS; way++) {
        double t = time_independent(buffer, lines, seed + ((uint64_t)way << 32), way);
        if (t < best)
            best = t;
    }
    return best;
}

double measure_independent_read_in(const void *memory, uint64_t bytes, uint64_t seed)
{
    uint64_t lines = bytes / 64;
    if (memory == NULL || lines < 2)
        return NAN;
    return fastest_independent(memory, lines, seed << 40);
}

int measure_memory_limits(uint64_t bytes, int reps, memory_limits *out)
{
    uint64_t lines = bytes / 64 < 2 ? 2 : bytes / 64;
    size_t size = (size_t)(lines * 64);
    if (reps < 1)
        reps = 1;
    if (reps > MAX_REPS)
        reps = MAX_REPS;
    double huge_before = process_huge_mb();
    uint64_t *buffer = bk_alloc_zeroed(size);
    if (buffer == NULL)
        return -1;
    memset(buffer, 0x5a, size);
    size_t slots = lines < CHASE_SLOTS_MAX ? (size_t)lines : CHASE_SLOTS_MAX;
    size_t start = build_chase(buffer, lines, slots, 0x243f6a8885a308d3ULL);
    if (start == SIZE_MAX) {
        bk_free_zeroed(buffer, size);
        return -1;
    }
    double dependent[MAX_REPS], independent[MAX_REPS], keyed8[MAX_REPS], keyed16[MAX_REPS];
    time_independent(buffer, lines, 1, READ_AHEAD_16); /* warm the TLB and page tables */
    for (int r = 0; r < reps; r++) {
        dependent[r] = time_dependent(buffer, start);
        keyed8[r] = time_keyed(buffer, lines, (uint64_t)(r + 2) << 36, 8);
        keyed16[r] = time_keyed(buffer, lines, (uint64_t)(r + 2) << 36, 16);
        independent[r] = fastest_independent(buffer, lines, (uint64_t)(r + 2) << 40);
    }
    out->bytes = size;
    out->dependent_ns = bench_median(dependent, (size_t)reps);
    out->independent_ns = bench_median(independent, (size_t)reps);
    out->keyed_ns[0] = bench_median(keyed8, (size_t)reps);
    out->keyed_ns[1] = bench_median(keyed16, (size_t)reps);
    out->huge_mb = process_huge_mb() - huge_before;
    bk_free_zeroed(buffer, size);
    return 0;
}

double process_huge_mb(void)
{
    FILE *file = fopen("/proc/self/smaps_rollup", "r");
    if (file == NULL)
        return NAN;
    char line[256];
    double result = NAN;
    while (fgets(line, sizeof line, file) != NULL) {
        unsigned long long kib;
        if (sscanf(line, "AnonHugePages: %llu kB", &kib) == 1) {
            result = (double)kib / 1024.0;
            break;
        }
    }
    fclose(file);
    return result;
}
