/*
 * examples/cache_admission.c -- admit an object into a cache only on its
 * second request, remembering the first ones in a window filter.
 *
 *     cache_admission [--requests N] [--objects M] [--one-hit F] [--seed S]
 *                     [--data FILE] [--check]
 *
 * A byte-capacity LRU cache sits in front of an origin.  Many requests are
 * for objects nobody asks for again ("one-hit wonders"); caching them
 * evicts objects that would have been hit.  A doorkeeper, as in TinyLFU
 * (Einziger, Friedman & Manes, "TinyLFU: A Highly Efficient Cache Admission
 * Policy", ACM ToS 2017), remembers the objects that missed recently and
 * admits an object only when it misses a second time:
 *
 *     request ─> LRU hit? ── yes ─> serve from the cache
 *                  │ no: fetch from the origin
 *                  v
 *             seen recently? ── no ─> remember it, do not cache
 *                  │ yes
 *                  v
 *             cache it (evicting the least recently used)
 *
 * Three policies, on the same trace and cache sizes:
 *   none    every miss is cached;
 *   window  the doorkeeper is a bloomkit `window` filter of the last W
 *           misses (bk_filter_create(BK_KIND_WINDOW, .window_keys = W,
 *           .fpr = 1%)): old misses age out, as TinyLFU's doorkeeper is
 *           reset, and its memory is fixed;
 *   exact   the same generations held exactly: g = 4 hash sets of 64-bit
 *           ids rotated every ceil(W / 3) misses, exactly the window
 *           filter's ageing (window.h) without false positives.
 *
 * The trace: a fraction F of the requests (default 0.4) are one-hit wonders
 * (a fresh id each); the others draw from M objects (default 1,000,000)
 * with Zipf popularity, P(rank r) proportional to r^-0.8.  Object sizes are
 * log-normal, median 16 KiB, sigma 1.2 (in natural log), clamped to
 * [256 B, 4 MiB], fixed per object by a hash of its id.  All from a
 * SplitMix64 sequence seeded with S (default 1): the same arguments give
 * the same table.  Cache sizes: 0.1% to 10% of the M objects' total bytes;
 * W = 4 times the objects the cache holds at the mean size.
 *
 * Reported per cache size and policy: hit ratio (requests served from the
 * cache), byte hit ratio, origin traffic, bytes written into the cache, and
 * the doorkeeper's memory (the filter's bytes against the exact sets'
 * tables).  --data FILE writes the same as columns for
 * examples/cache_admission.gp.
 *
 * --check (the test) verifies what holds by construction, on every run:
 * hits + misses = requests and origin bytes = requested - hit bytes for
 * each policy; the cache never holds more bytes than its capacity; the
 * exact doorkeeper admits no one-hit wonder; the window filter never
 * forgets a miss fewer than W misses old (window.h's guarantee, checked
 * against a map of each id's last miss); and the one-hit wonders the window
 * filter admits -- only through false positives -- stay within mean + 4
 * standard deviations of Binomial(one-hit misses, 1%).
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit.h"

/* ------------------------------------------------------------------------ */
/* Random numbers and the trace                                             */
/* ------------------------------------------------------------------------ */

/* SplitMix64's output function: a good 64-bit mixer. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t random_state;

static double next_uniform(void) /* in (0, 1) */
{
    random_state += 0x9E3779B97F4A7C15ull;
    return ((double)(mix64(random_state) >> 11) + 0.5) / 9007199254740992.0;
}

#define ONE_HIT_BASE ((uint64_t)1 << 40) /* ids of one-hit wonders start here */
#define MIN_SIZE 256u
#define MAX_SIZE (4u << 20)

static bool is_one_hit(uint64_t id) { return id >= ONE_HIT_BASE; }

/* An object's size: log-normal from two hashes of its id (Box-Muller). */
static uint32_t object_size(uint64_t id)
{
    double u1 = ((double)(mix64(id * 2 + 1) >> 11) + 0.5) / 9007199254740992.0;
    double u2 = ((double)(mix64(id * 2 + 2) >> 11) + 0.5) / 9007199254740992.0;
    double normal = sqrt(-2 * log(u1)) * cos(2 * 3.14159265358979323846 * u2);
    double size = 16384 * exp(1.2 * normal);
    return size < MIN_SIZE ? MIN_SIZE : size > MAX_SIZE ? MAX_SIZE : (uint32_t)size;
}

typedef struct trace_params {
    uint64_t requests, objects;
    double one_hit_fraction, zipf_exponent;
    uint64_t seed;
} trace_params;

/* The request sequence: ids 1..objects by Zipf rank, one-hit wonders above. */
static uint64_t *make_trace(const trace_params *p)
{
    uint64_t *trace = malloc(p->requests * sizeof *trace);
    double *cdf = malloc(p->objects * sizeof *cdf);
    if (trace == NULL || cdf == NULL) {
        free(trace);
        free(cdf);
        return NULL;
    }
    double total = 0;
    for (uint64_t r = 0; r < p->objects; r++)
        cdf[r] = total += pow((double)(r + 1), -p->zipf_exponent);
    random_state = p->seed;
    uint64_t next_one_hit = ONE_HIT_BASE;
    for (uint64_t i = 0; i < p->requests; i++) {
        if (next_uniform() < p->one_hit_fraction) {
            trace[i] = next_one_hit++;
            continue;
        }
        double target = next_uniform() * total;
        uint64_t low = 0, high = p->objects - 1;
        while (low < high) {
            uint64_t middle = (low + high) / 2;
            if (cdf[middle] < target)
                low = middle + 1;
            else
                high = middle;
        }
        trace[i] = low + 1;
    }
    free(cdf);
    return trace;
}

/* ------------------------------------------------------------------------ */
/* A map of 64-bit ids (never 0) to 64-bit values: linear probing           */
/* ------------------------------------------------------------------------ */

typedef struct id_map {
    uint64_t *ids; /* 0: empty slot */
    uint64_t *values;
    size_t mask, count;
} id_map;

static bool map_init(id_map *map, size_t expected)
{
    size_t slots = 16;
    while (slots < 2 * expected)
        slots *= 2;
    map->ids = calloc(slots, sizeof *map->ids);
    map->values = malloc(slots * sizeof *map->values);
    map->mask = slots - 1;
    map->count = 0;
    return map->ids != NULL && map->values != NULL;
}

static void map_free(id_map *map)
{
    free(map->ids);
    free(map->values);
}

static size_t map_bytes(const id_map *map)
{
    return (map->mask + 1) * sizeof *map->ids; /* a set: the ids only */
}

static size_t map_slot(const id_map *map, uint64_t id)
{
    size_t slot = (size_t)mix64(id) & map->mask;
    while (map->ids[slot] != 0 && map->ids[slot] != id)
        slot = (slot + 1) & map->mask;
    return slot;
}

static uint64_t *map_find(const id_map *map, uint64_t id)
{
    size_t slot = map_slot(map, id);
    return map->ids[slot] == id ? &map->values[slot] : NULL;
}

static bool map_grow(id_map *map);

static bool map_put(id_map *map, uint64_t id, uint64_t value)
{
    if (2 * (map->count + 1) > map->mask + 1 && !map_grow(map))
        return false;
    size_t slot = map_slot(map, id);
    map->count += map->ids[slot] == 0;
    map->ids[slot] = id;
    map->values[slot] = value;
    return true;
}

static bool map_grow(id_map *map)
{
    id_map bigger;
    if (!map_init(&bigger, map->mask + 1))
        return false;
    for (size_t i = 0; i <= map->mask; i++)
        if (map->ids[i] != 0)
            map_put(&bigger, map->ids[i], map->values[i]);
    map_free(map);
    *map = bigger;
    return true;
}

/* Removes id (present) and shifts the probe chain back over the hole. */
static void map_remove(id_map *map, uint64_t id)
{
    size_t hole = map_slot(map, id);
    map->ids[hole] = 0;
    map->count--;
    for (size_t next = (hole + 1) & map->mask; map->ids[next] != 0;
         next = (next + 1) & map->mask) {
        size_t home = (size_t)mix64(map->ids[next]) & map->mask;
        /* Move next into the hole unless its home lies in (hole, next]. */
        bool stays = hole <= next ? (home > hole && home <= next)
                                  : (home > hole || home <= next);
        if (stays)
            continue;
        map->ids[hole] = map->ids[next];
        map->values[hole] = map->values[next];
        map->ids[next] = 0;
        hole = next;
    }
}

static void map_clear(id_map *map)
{
    memset(map->ids, 0, (map->mask + 1) * sizeof *map->ids);
    map->count = 0;
}

/* ------------------------------------------------------------------------ */
/* The LRU cache: a doubly linked list of entries, an id -> entry map        */
/* ------------------------------------------------------------------------ */

typedef struct lru_entry {
    uint64_t id;
    uint32_t size;
    uint32_t newer, older; /* indexes; NONE at the ends */
} lru_entry;

#define NONE UINT32_MAX

typedef struct lru_cache {
    lru_entry *entries;
    uint32_t entry_capacity, entry_count, free_list;
    uint32_t newest, oldest;
    uint64_t capacity_bytes, used_bytes;
    id_map index; /* id -> entry */
} lru_cache;

static bool lru_init(lru_cache *cache, uint64_t capacity_bytes)
{
    memset(cache, 0, sizeof *cache);
    cache->capacity_bytes = capacity_bytes;
    cache->newest = cache->oldest = cache->free_list = NONE;
    return map_init(&cache->index, 1024);
}

static void lru_free(lru_cache *cache)
{
    free(cache->entries);
    map_free(&cache->index);
}

static void lru_unlink(lru_cache *cache, uint32_t e)
{
    lru_entry *entry = &cache->entries[e];
    if (entry->newer != NONE)
        cache->entries[entry->newer].older = entry->older;
    else
        cache->newest = entry->older;
    if (entry->older != NONE)
        cache->entries[entry->older].newer = entry->newer;
    else
        cache->oldest = entry->newer;
}

static void lru_push_newest(lru_cache *cache, uint32_t e)
{
    cache->entries[e].newer = NONE;
    cache->entries[e].older = cache->newest;
    if (cache->newest != NONE)
        cache->entries[cache->newest].newer = e;
    cache->newest = e;
    if (cache->oldest == NONE)
        cache->oldest = e;
}

/* A hit moves the entry to the front. */
static bool lru_lookup(lru_cache *cache, uint64_t id)
{
    uint64_t *e = map_find(&cache->index, id);
    if (e == NULL)
        return false;
    lru_unlink(cache, (uint32_t)*e);
    lru_push_newest(cache, (uint32_t)*e);
    return true;
}

static void lru_evict_oldest(lru_cache *cache)
{
    uint32_t e = cache->oldest;
    lru_unlink(cache, e);
    cache->used_bytes -= cache->entries[e].size;
    map_remove(&cache->index, cache->entries[e].id);
    cache->entries[e].older = cache->free_list;
    cache->free_list = e;
}

static uint32_t lru_new_entry(lru_cache *cache)
{
    if (cache->free_list != NONE) {
        uint32_t e = cache->free_list;
        cache->free_list = cache->entries[e].older;
        return e;
    }
    if (cache->entry_count == cache->entry_capacity) {
        uint32_t capacity = cache->entry_capacity ? 2 * cache->entry_capacity : 1024;
        lru_entry *grown = realloc(cache->entries, capacity * sizeof *grown);
        if (grown == NULL)
            return NONE;
        cache->entries = grown;
        cache->entry_capacity = capacity;
    }
    return cache->entry_count++;
}

/* Inserts an absent object, evicting from the old end; an object bigger
 * than the whole cache is not inserted.  False when memory ran out. */
static bool lru_insert(lru_cache *cache, uint64_t id, uint32_t size)
{
    if (size > cache->capacity_bytes)
        return true;
    while (cache->used_bytes + size > cache->capacity_bytes)
        lru_evict_oldest(cache);
    uint32_t e = lru_new_entry(cache);
    if (e == NONE || !map_put(&cache->index, id, e))
        return false;
    cache->entries[e].id = id;
    cache->entries[e].size = size;
    cache->used_bytes += size;
    lru_push_newest(cache, e);
    return true;
}

/* ------------------------------------------------------------------------ */
/* Doorkeepers                                                              */
/* ------------------------------------------------------------------------ */

typedef enum policy { POLICY_NONE, POLICY_WINDOW, POLICY_EXACT, POLICY_COUNT } policy;
static const char *const policy_names[POLICY_COUNT] = { "none", "window", "exact" };

#define GENERATIONS 4
#define DOORKEEPER_FPR 0.01

/* The exact doorkeeper: g sets of ids, the current one takes the adds and
 * the oldest is emptied every span of ceil(W / (g - 1)) adds. */
typedef struct exact_generations {
    id_map sets[GENERATIONS];
    unsigned current;
    uint64_t span, adds_in_span;
} exact_generations;

typedef struct doorkeeper {
    policy kind;
    bk_filter *filter;       /* window */
    exact_generations exact; /* exact */
    uint64_t window;         /* W */
} doorkeeper;

static bool doorkeeper_init(doorkeeper *d, policy kind, uint64_t window)
{
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->window = window;
    if (kind == POLICY_WINDOW) {
        bk_params params = { .window_keys = window,
                             .fpr = DOORKEEPER_FPR,
                             .generations = GENERATIONS };
        return bk_filter_create(BK_KIND_WINDOW, &params, &d->filter) == BK_OK;
    }
    if (kind == POLICY_EXACT) {
        d->exact.span = (window + GENERATIONS - 2) / (GENERATIONS - 1);
        for (unsigned g = 0; g < GENERATIONS; g++)
            if (!map_init(&d->exact.sets[g], (size_t)d->exact.span))
                return false;
    }
    return true;
}

static void doorkeeper_free(doorkeeper *d)
{
    bk_filter_free(d->filter);
    if (d->kind == POLICY_EXACT)
        for (unsigned g = 0; g < GENERATIONS; g++)
            map_free(&d->exact.sets[g]);
}

static size_t doorkeeper_bytes(const doorkeeper *d)
{
    size_t bytes = 0;
    if (d->kind == POLICY_WINDOW) {
        bk_stats stats;
        bk_filter_stats(d->filter, &stats);
        bytes = (size_t)stats.bytes;
    } else if (d->kind == POLICY_EXACT) {
        for (unsigned g = 0; g < GENERATIONS; g++)
            bytes += map_bytes(&d->exact.sets[g]);
    }
    return bytes;
}

/* Records a miss of `id`; true if it had missed recently (admit it). */
static bool doorkeeper_seen(doorkeeper *d, uint64_t id)
{
    if (d->kind == POLICY_NONE)
        return true;
    if (d->kind == POLICY_WINDOW) {
        bool was_new = true;
        bk_filter_add(d->filter, &id, sizeof id, &was_new);
        return !was_new;
    }
    exact_generations *e = &d->exact;
    bool seen = false;
    for (unsigned g = 0; g < GENERATIONS; g++)
        seen = seen || map_find(&e->sets[g], id) != NULL;
    if (e->adds_in_span == e->span) {
        e->current = (e->current + 1) % GENERATIONS;
        map_clear(&e->sets[e->current]);
        e->adds_in_span = 0;
    }
    map_put(&e->sets[e->current], id, 0);
    e->adds_in_span++;
    return seen;
}

/* ------------------------------------------------------------------------ */
/* The simulation                                                           */
/* ------------------------------------------------------------------------ */

typedef struct result {
    uint64_t hits, misses, hit_bytes, requested_bytes, origin_bytes, written_bytes;
    uint64_t one_hit_misses, one_hit_admitted;
    size_t doorkeeper_bytes;
    uint64_t check_failures; /* --check: broken invariants */
} result;

/* --check for the window filter: every miss fewer than W misses old must
 * be remembered.  last_miss: id -> index of its latest miss. */
static void check_window_memory(id_map *last_miss, uint64_t id, uint64_t miss_index,
                                uint64_t window, bool seen, result *r)
{
    uint64_t *previous = map_find(last_miss, id);
    if (previous != NULL && miss_index - *previous < window && !seen)
        r->check_failures++;
    map_put(last_miss, id, miss_index);
}

static bool simulate(const uint64_t *trace, uint64_t requests, uint64_t cache_bytes, policy kind,
                     uint64_t window, bool check, result *r)
{
    memset(r, 0, sizeof *r);
    lru_cache cache;
    doorkeeper keeper;
    id_map last_miss = { 0 };
    bool ok = lru_init(&cache, cache_bytes) && doorkeeper_init(&keeper, kind, window) &&
              (!check || map_init(&last_miss, 1024));
    for (uint64_t i = 0; ok && i < requests; i++) {
        uint64_t id = trace[i];
        uint32_t size = object_size(id);
        r->requested_bytes += size;
        if (lru_lookup(&cache, id)) {
            r->hits++;
            r->hit_bytes += size;
            continue;
        }
        r->misses++;
        r->origin_bytes += size;
        r->one_hit_misses += is_one_hit(id);
        bool admit = doorkeeper_seen(&keeper, id);
        if (check && kind == POLICY_WINDOW)
            check_window_memory(&last_miss, id, r->misses, window, admit, r);
        if (!admit)
            continue;
        r->one_hit_admitted += is_one_hit(id);
        if (size <= cache_bytes)
            r->written_bytes += size;
        ok = lru_insert(&cache, id, size);
        if (check && cache.used_bytes > cache.capacity_bytes)
            r->check_failures++;
    }
    r->doorkeeper_bytes = doorkeeper_bytes(&keeper);
    doorkeeper_free(&keeper);
    lru_free(&cache);
    map_free(&last_miss);
    return ok;
}

/* The invariants of --check for one run; prints each broken one. */
static unsigned check_result(const result *r, policy kind, uint64_t requests)
{
    unsigned failures = 0;
    double mean = (double)r->one_hit_misses * DOORKEEPER_FPR;
    double bound = mean + 4 * sqrt(mean * (1 - DOORKEEPER_FPR));
    const char *problems[] = {
        r->hits + r->misses != requests ? "hits + misses != requests" : NULL,
        r->origin_bytes != r->requested_bytes - r->hit_bytes ? "origin != requested - hits"
                                                             : NULL,
        r->check_failures ? "the cache overflowed or the window forgot a recent miss" : NULL,
        kind == POLICY_EXACT && r->one_hit_admitted ? "exact admitted a one-hit wonder" : NULL,
        kind == POLICY_WINDOW && (double)r->one_hit_admitted > bound
            ? "window admitted more one-hit wonders than the binomial bound"
            : NULL,
    };
    for (size_t i = 0; i < sizeof problems / sizeof problems[0]; i++)
        if (problems[i] != NULL) {
            fprintf(stderr, "cache_admission: CHECK FAILED (%s): %s\n", policy_names[kind],
                    problems[i]);
            failures++;
        }
    return failures;
}

/* ------------------------------------------------------------------------ */
/* Main                                                                     */
/* ------------------------------------------------------------------------ */

static const double cache_fractions[] = { 0.001, 0.003, 0.01, 0.03, 0.1 };
#define CACHE_SIZES (sizeof cache_fractions / sizeof cache_fractions[0])

static int parse_arguments(int argc, char **argv, trace_params *p, const char **data_path,
                           bool *check)
{
    *p = (trace_params){ .requests = 10000000,
                         .objects = 1000000,
                         .one_hit_fraction = 0.4,
                         .zipf_exponent = 0.8,
                         .seed = 1 };
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i];
        if (strcmp(option, "--check") == 0) {
            *check = true;
            continue;
        }
        if (i + 1 == argc)
            return -1;
        const char *value = argv[++i];
        if (strcmp(option, "--requests") == 0)
            p->requests = strtoull(value, NULL, 10);
        else if (strcmp(option, "--objects") == 0)
            p->objects = strtoull(value, NULL, 10);
        else if (strcmp(option, "--one-hit") == 0)
            p->one_hit_fraction = strtod(value, NULL);
        else if (strcmp(option, "--seed") == 0)
            p->seed = strtoull(value, NULL, 10);
        else if (strcmp(option, "--data") == 0)
            *data_path = value;
        else
            return -1;
    }
    if (p->requests == 0 || p->objects == 0 || !(p->one_hit_fraction >= 0) ||
        !(p->one_hit_fraction < 1))
        return -1;
    return 0;
}

/* One line of the table (percent_sign: "%" for people, "" for gnuplot). */
static void print_row(FILE *out, const char *percent_sign, double fraction, uint64_t cache_bytes,
                      uint64_t window, policy kind, const result *r)
{
    double requested = (double)r->requested_bytes;
    fprintf(out,
            "%6.1f%-1s %9.1f %9" PRIu64 " %-7s %8.4f %8.4f %10.2f %10.2f %11.1f %8" PRIu64 "\n",
            100 * fraction, percent_sign, (double)cache_bytes / 1048576.0, window,
            policy_names[kind], (double)r->hits / (double)(r->hits + r->misses),
            (double)r->hit_bytes / requested, (double)r->origin_bytes / 1e9,
            (double)r->written_bytes / 1e9, (double)r->doorkeeper_bytes / 1024.0,
            r->one_hit_admitted);
}

int main(int argc, char **argv)
{
    trace_params p;
    const char *data_path = NULL;
    bool check = false;
    if (parse_arguments(argc, argv, &p, &data_path, &check) != 0) {
        fprintf(stderr, "usage: cache_admission [--requests N] [--objects M] [--one-hit F] "
                        "[--seed S] [--data FILE] [--check]\n");
        return 2;
    }
    uint64_t *trace = make_trace(&p);
    if (trace == NULL) {
        fprintf(stderr, "cache_admission: out of memory\n");
        return 1;
    }
    double catalogue_bytes = 0;
    for (uint64_t id = 1; id <= p.objects; id++)
        catalogue_bytes += object_size(id);
    double mean_size = catalogue_bytes / (double)p.objects;
    printf("trace: %" PRIu64 " requests, seed %" PRIu64
           "; %.0f%% one-hit wonders; the rest Zipf "
           "(exponent %.2f) over %" PRIu64 " objects of %.1f GB (mean %.1f KiB; log-normal, "
           "median 16 KiB, sigma 1.2, in [256 B, 4 MiB])\n",
           p.requests, p.seed, 100 * p.one_hit_fraction, p.zipf_exponent, p.objects,
           catalogue_bytes / 1e9, mean_size / 1024);
    printf("doorkeepers: window filter of W misses (4 x the objects the cache holds at the "
           "mean size), g = %d, FPR %.2f; exact: the same %d generations as hash sets of "
           "64-bit ids\n\n",
           GENERATIONS, DOORKEEPER_FPR, GENERATIONS);
    const char *header = "%7s %9s %9s %-7s %8s %8s %10s %10s %11s %8s\n";
    printf(header, "cache", "MiB", "W", "policy", "hits", "bytehits", "origin GB", "writes GB",
           "keeper KiB", "1-hit in");
    FILE *data = data_path ? fopen(data_path, "w") : NULL;
    if (data_path && data == NULL) {
        fprintf(stderr, "cache_admission: cannot write %s\n", data_path);
        free(trace);
        return 1;
    }
    if (data)
        fprintf(data, "# cache%% MiB W policy hit_ratio byte_hit_ratio origin_GB writes_GB "
                      "doorkeeper_KiB one_hit_admitted\n");
    unsigned failures = 0;
    for (size_t c = 0; c < CACHE_SIZES; c++) {
        uint64_t cache_bytes = (uint64_t)(cache_fractions[c] * catalogue_bytes);
        uint64_t window = (uint64_t)(4 * (double)cache_bytes / mean_size);
        if (window < 1000)
            window = 1000;
        for (policy kind = 0; kind < POLICY_COUNT; kind++) {
            result r;
            if (!simulate(trace, p.requests, cache_bytes, kind, window, check, &r)) {
                fprintf(stderr, "cache_admission: out of memory\n");
                free(trace);
                return 1;
            }
            print_row(stdout, "%", cache_fractions[c], cache_bytes, window, kind, &r);
            if (data)
                print_row(data, "", cache_fractions[c], cache_bytes, window, kind, &r);
            if (check)
                failures += check_result(&r, kind, p.requests);
        }
    }
    if (data)
        fclose(data);
    free(trace);
    if (check)
        printf("\ncheck: %s\n", failures ? "FAILED" : "all invariants hold");
    return failures != 0;
}
