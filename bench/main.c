/*
 * bench/main.c -- bloomkit-bench: how fast is each kind of filter, next to
 * the machine's own limits and next to a peer library?
 *
 * For each key type (8-byte integers, 16-byte strings), each size n and each
 * filter kind this build implements (found through bk_kind_available, so
 * kinds merged later are measured without touching this file), plus
 * Debian's libbloom when the build found it:
 *
 *   insert     n keys into a filter made for n keys at the target FPR (1%),
 *              in alternating chunks of 4,096 keys: even chunks one key at
 *              a time from precomputed hashes (bk_filter_add_hash), odd
 *              chunks through the batch API from raw keys
 *              (bk_filter_add_batch, hashing included).  Both methods see
 *              the same fill, so one fill gives both figures.  Static kinds
 *              (xor, fuse) are built from the whole key array instead
 *              (bk_filter_build, hashing included): "build".
 *   query      a sample of present keys (all of them up to --queries) and
 *              keys that were never added (--absent of them for the batch
 *              pass, which gives the FPR; the first --queries of them for
 *              the one-at-a-time passes), in these forms:
 *                hash   bk_filter_contains_hash on precomputed hashes
 *                hview  the same through the kind's inline view, compiled
 *                       into the loop (bloom, sbbf and the static kinds;
 *                       bench/views.h)
 *                raw    bk_filter_contains on the key bytes (hash included)
 *                view   the same through the inline view
 *                batch  bk_filter_contains_batch, 1024 keys per call
 *                hbat   bk_filter_contains_hash_batch on the hashes
 *                pack   bk_filter_contains_packed on the same keys read as
 *                       one packed array (no bk_key), 1024 per call
 *              A present key reported absent is a false negative: counted,
 *              and an error.  The forms must agree on the counts; a
 *              disagreement is flagged.
 *   accuracy   measured FPR over the absent keys; bits per key = the
 *              filter's bytes * 8 / n.
 *   limits     the time of one random cache-line read in a buffer of the
 *              filter's size, dependent and independent (bench/machine.c);
 *              the tables print query times as ratios to them and to
 *              libbloom.
 *   design     once per run, before the blocks: microseconds per
 *              bk_filter_create of each dynamic kind for 1,000 keys at the
 *              target FPR, its sizing search (report_design_times).
 *
 * Every pass is timed in slices of 4,096 keys and reports its median slice
 * (bench.h: robust to preemption on a shared machine; for a kind whose
 * insert cost grows with the fill, such as cuckoo, the insert figure is
 * thus the cost around half fill).  The query passes are repeated --reps
 * times on one filter and each query figure is the median of those; the
 * insert figures come from the one fill (with --rebuild every repetition
 * rebuilds and refills the filter, and they too are medians of --reps: that
 * triples the time of a full run, which the fills dominate at n = 1e8).
 * Within a block (key type, n) every kind's filter is built first, then
 * the repetitions go round the kinds (rep 1 of each, rep 2 of each, ...),
 * so that a stretch of slow memory spoils one repetition of several kinds
 * instead of every repetition of one; libbloom runs after them.
 *
 * One CPU: the run pins itself (sched_setaffinity) to the CPU it starts on,
 * or to --cpu N, so that a kind, its peer and the machine's limits in one
 * block are all timed on the same core (--no-pin leaves the scheduler
 * free).  On the two-CPU virtual machine of docs/PERFORMANCE.md the two
 * CPUs differed by up to 1.6x in the same minute (blocked at
 * 10^6 keys, one key per call, 8.2-8.3 ns pinned to one CPU against
 * 13.5-13.9 on the other), and a run that migrated mid-block compared
 * figures taken on different cores.
 * Huge pages: how much of each filter the kernel backed with 2 MiB pages is
 * reported; the kinds "bloom:4k" and "blocked:4k" (int64 keys only, by
 * default) rerun those kinds with BLOOMKIT_NO_HUGEPAGE set, which src/memory.c
 * reads at each large allocation, to show what MADV_HUGEPAGE gives.
 *
 * Parameters: every kind gets { .capacity = n, .fpr }, and window kinds
 * .window_keys = n so that nothing ages out during the run (params_for).  A
 * kind that reports BK_EFULL while being filled to n (cuckoo) is rebuilt
 * with 25% more capacity, at most twice, and its row says so.
 *
 * Output: a table per (key type, n) on stdout, a summary against the
 * project's speed targets, progress on stderr, and with --csv FILE a long-form
 * CSV (keytype,n,kind,metric,value) that scripts/plot-bench.sh plots.
 */
#define _GNU_SOURCE /* MCL_ONFAULT, sched_setaffinity, sched_getcpu */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "views.h"
#include "memory.h"

#ifndef BENCH_C_FLAGS
#define BENCH_C_FLAGS "unknown"
#endif

#define MAX_SIZES 8
#define MAX_SUBJECTS 40
#define MAX_REPS 15
#define NAME_BYTES 32
#define INSERT_CHUNK BENCH_SLICE_KEYS
#define QUERY_BATCH 1024
#define LIMIT_TOLERANCE 0.10
#define ABSENT_FIRST_INDEX ((uint64_t)1 << 48)

/* ---------------------------------------------------------------- options */

typedef struct options {
    uint64_t sizes[MAX_SIZES];
    size_t size_count;
    bool key_types[KEY_TYPE_COUNT];
    char kinds[MAX_SUBJECTS][NAME_BYTES];
    size_t kind_count;
    int reps;
    double fpr;
    size_t absent;
    size_t queries;
    const char *csv_path;
    bool quick;
    bool rebuild;
    bool no_mlock;
    bool no_pin;
    int cpu; /* --cpu N; -1: the CPU the run starts on */
} options;

/* What is measured: a bloomkit kind (optionally without huge pages) or
 * the libbloom peer. */
typedef struct subject {
    char name[NAME_BYTES];
    bk_kind kind;
    bool is_libbloom;
    bool no_hugepage;
    bool int64_only; /* default :4k variants: the page size's effect does not depend on keys */
} subject;

/* One line of a table: medians over the repetitions. */
/* The batch columns compared with the read floor: +batch, -batch, +hbat,
 * -hbat, +pack, -pack. */
#define BATCH_FORMS 6

typedef struct row {
    char name[NAME_BYTES];
    bool ok;
    char note[160];
    bool is_libbloom;
    bool is_static;
    uint64_t bits;
    unsigned hashes;
    uint64_t bytes;
    double bits_per_key;
    double fpr;
    double predicted_fpr; /* the kind's own prediction at n keys (its design FPR) */
    uint64_t false_negatives;
    bool forms_disagree;
    double insert_single_ns, insert_batch_ns, build_ns;
    double pos_hash_ns, neg_hash_ns, pos_raw_ns, neg_raw_ns, pos_batch_ns, neg_batch_ns;
    double pos_hbatch_ns, neg_hbatch_ns;
    double pos_packed_ns, neg_packed_ns; /* bk_filter_contains_packed */
    double pos_view_ns, neg_view_ns;   /* inline view (bench/views.h) from the key: bloom, */
    double pos_hview_ns, neg_hview_ns; /* sbbf, static kinds, else NAN; from the hash */
    double own_read_ns; /* independent line read in the filter's own bit array, or NAN */
    /* +batch, -batch, +hbat, -hbat, +pack, -pack over own_read, repetition
     * by repetition (the median of the ratios), or NAN where own_read is not
     * measured */
    double per_own_read[BATCH_FORMS];
    double huge_mb;
    memory_limits limits;
} row;

/* The keys of one (key type, n) measurement. */
typedef struct workload {
    key_type type;
    uint64_t n;
    key_set present; /* n keys (a view into the largest set: not owned) */
    key_set sample;  /* up to --queries present keys, evenly spread */
    key_set absent;  /* never added (a view): the FPR is measured over all of them */
    key_set absent_timed; /* the first --queries of them: timed one key at a time */
} workload;

/* Precomputed hashes of a workload's query keys under one hasher. */
typedef struct hash_cache {
    bool valid;
    bk_hasher hasher;
    bk_hash *sample;
    bk_hash *absent;
} hash_cache;

static void usage(FILE *out)
{
    fputs("usage: bloomkit-bench [options]\n"
          "  --quick           smoke run: n = 1e5, 1 repetition, 1e6 absent keys\n"
          "  --sizes LIST      key counts, e.g. 1e6,1e7,1e8 (default)\n"
          "  --keys LIST       key types: int64,str16 (default both)\n"
          "  --kinds LIST      kinds to run (default every kind in this build, the\n"
          "                    :4k variants of bloom and blocked, and libbloom);\n"
          "                    a kind name, NAME:4k (no huge pages), or libbloom\n"
          "  --reps N          repetitions of the query passes, the median is reported\n"
          "                    (default 3); the filter is built once\n"
          "  --rebuild         rebuild (and refill) the filter for every repetition\n"
          "  --fpr P           target false-positive rate (default 0.01)\n"
          "  --absent N        absent keys: the FPR and the batch time are measured\n"
          "                    over all of them (default 10000000)\n"
          "  --queries N       keys per timed pass: present keys (at most n) and the\n"
          "                    absent keys of the one-at-a-time passes (default 4000000)\n"
          "  --csv FILE        write every figure to FILE (long-form CSV)\n"
          "  --cpu N           run on CPU N (default: the CPU the run starts on)\n"
          "  --no-pin          let the scheduler move the run between CPUs\n"
          "  --no-mlock        leave memory unlocked (by default every page is locked as\n"
          "                    it is first touched, so memory reclaim such as DAMON's\n"
          "                    pageout cannot evict a filter in the middle of a run)\n"
          "  --help            this text\n"
          "Environment: BLOOMKIT_NO_HUGEPAGE=1 turns off the huge page hint\n"
          "everywhere; BLOOMKIT_PORTABLE=1 forces the portable (non-SIMD) paths.\n",
          out);
}

static bool parse_count(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(value >= 1) || value > 1e12 ||
        value != floor(value))
        return false;
    *out = (uint64_t)value;
    return true;
}

/* Splits a comma-separated list in place; calls `take` on each item. */
static bool for_each_item(char *list, bool (*take)(const char *item, options *opts),
                          options *opts)
{
    for (char *item = strtok(list, ","); item != NULL; item = strtok(NULL, ","))
        if (!take(item, opts))
            return false;
    return true;
}

static bool take_size(const char *item, options *opts)
{
    if (opts->size_count == MAX_SIZES || !parse_count(item, &opts->sizes[opts->size_count]))
        return false;
    opts->size_count++;
    return true;
}

static bool take_key_type(const char *item, options *opts)
{
    for (int t = 0; t < KEY_TYPE_COUNT; t++) {
        if (strcmp(item, key_type_name((key_type)t)) == 0) {
            opts->key_types[t] = true;
            return true;
        }
    }
    return false;
}

static bool take_kind(const char *item, options *opts)
{
    if (opts->kind_count == MAX_SUBJECTS || strlen(item) >= NAME_BYTES)
        return false;
    strcpy(opts->kinds[opts->kind_count++], item);
    return true;
}

static int parse_options(int argc, char **argv, options *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->reps = 3;
    opts->fpr = 0.01;
    opts->absent = 10000000;
    opts->queries = 4000000;
    opts->cpu = -1;
    bool sizes_given = false, keys_given = false, reps_given = false, absent_given = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t number;
        bool ok = true;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(arg, "--quick") == 0) {
            opts->quick = true;
            continue;
        } else if (strcmp(arg, "--rebuild") == 0) {
            opts->rebuild = true;
            continue;
        } else if (strcmp(arg, "--no-mlock") == 0) {
            opts->no_mlock = true;
            continue;
        } else if (strcmp(arg, "--no-pin") == 0) {
            opts->no_pin = true;
            continue;
        } else if (value == NULL) {
            ok = false;
        } else if (strcmp(arg, "--sizes") == 0) {
            ok = for_each_item(argv[i + 1], take_size, opts);
            sizes_given = true;
        } else if (strcmp(arg, "--keys") == 0) {
            ok = for_each_item(argv[i + 1], take_key_type, opts);
            keys_given = true;
        } else if (strcmp(arg, "--kinds") == 0) {
            ok = for_each_item(argv[i + 1], take_kind, opts);
        } else if (strcmp(arg, "--reps") == 0) {
            ok = parse_count(value, &number) && number <= MAX_REPS;
            opts->reps = (int)number;
            reps_given = true;
        } else if (strcmp(arg, "--fpr") == 0) {
            char *end;
            opts->fpr = strtod(value, &end);
            ok = *end == '\0' && opts->fpr > 0 && opts->fpr < 1;
        } else if (strcmp(arg, "--absent") == 0) {
            ok = parse_count(value, &number);
            opts->absent = (size_t)number;
            absent_given = true;
        } else if (strcmp(arg, "--queries") == 0) {
            ok = parse_count(value, &number);
            opts->queries = (size_t)number;
        } else if (strcmp(arg, "--cpu") == 0) {
            char *end;
            errno = 0;
            long cpu = strtol(value, &end, 10);
            ok = errno == 0 && end != value && *end == '\0' && cpu >= 0 && cpu < CPU_SETSIZE;
            opts->cpu = (int)cpu;
        } else if (strcmp(arg, "--csv") == 0) {
            opts->csv_path = value;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "bloomkit-bench: bad option or value: %s%s%s\n", arg,
                    value ? " " : "", value ? value : "");
            usage(stderr);
            return -1;
        }
        i++;
    }
    if (!sizes_given) {
        if (opts->quick) {
            opts->sizes[opts->size_count++] = 100000;
        } else {
            opts->sizes[opts->size_count++] = 1000000;
            opts->sizes[opts->size_count++] = 10000000;
            opts->sizes[opts->size_count++] = 100000000;
        }
    }
    if (!keys_given)
        for (int t = 0; t < KEY_TYPE_COUNT; t++)
            opts->key_types[t] = true;
    if (opts->quick && !reps_given)
        opts->reps = 1;
    if (opts->quick && !absent_given)
        opts->absent = 1000000;
    return 0;
}

/* -------------------------------------------------------------- subjects */

static bool kind_by_name(const char *name, bk_kind *out)
{
    return bk_kind_from_name(name, out) == BK_OK && bk_kind_available(*out);
}

static void add_subject(subject *subjects, size_t *count, const char *name, bk_kind kind,
                        bool is_libbloom, bool no_hugepage)
{
    if (*count == MAX_SUBJECTS)
        return;
    subject *s = &subjects[(*count)++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->kind = kind;
    s->is_libbloom = is_libbloom;
    s->no_hugepage = no_hugepage;
}

/* The subjects named by --kinds, or the default list. */
static int choose_subjects(const options *opts, subject *subjects, size_t *count)
{
    *count = 0;
    if (opts->kind_count == 0) {
        for (int k = 1; k < 256; k++) {
            const char *name = bk_kind_name((bk_kind)k);
            if (name != NULL && bk_kind_available((bk_kind)k))
                add_subject(subjects, count, name, (bk_kind)k, false, false);
        }
        if (!opts->quick) {
            bk_kind kind;
            if (kind_by_name("bloom", &kind))
                add_subject(subjects, count, "bloom:4k", kind, false, true);
            if (kind_by_name("blocked", &kind))
                add_subject(subjects, count, "blocked:4k", kind, false, true);
            for (size_t i = 0; i < *count; i++)
                subjects[i].int64_only = subjects[i].no_hugepage;
        }
        if (libbloom_available())
            add_subject(subjects, count, "libbloom", BK_KIND_NONE, true, false);
        return 0;
    }
    for (size_t i = 0; i < opts->kind_count; i++) {
        char name[NAME_BYTES];
        snprintf(name, sizeof name, "%s", opts->kinds[i]);
        if (strcmp(name, "libbloom") == 0) {
            if (!libbloom_available()) {
                fprintf(stderr, "bloomkit-bench: libbloom was not found at build time\n");
                return -1;
            }
            add_subject(subjects, count, name, BK_KIND_NONE, true, false);
            continue;
        }
        char *suffix = strstr(name, ":4k");
        bool no_hugepage = suffix != NULL && suffix[3] == '\0';
        if (no_hugepage)
            *suffix = '\0';
        bk_kind kind;
        if (!kind_by_name(name, &kind)) {
            fprintf(stderr, "bloomkit-bench: kind '%s' is not in this build\n", name);
            return -1;
        }
        add_subject(subjects, count, opts->kinds[i], kind, false, no_hugepage);
    }
    return 0;
}

/* ----------------------------------------------------- timing the passes */

static volatile uint64_t sink;

static double per_key(uint64_t begin, uint64_t end, size_t count)
{
    return count ? (double)(end - begin) / (double)count : NAN;
}

_Static_assert(BENCH_SLICE_KEYS % QUERY_BATCH == 0, "slices hold whole batch calls");

static size_t slice_end(size_t start, size_t count)
{
    return count - start < BENCH_SLICE_KEYS ? count : start + BENCH_SLICE_KEYS;
}

typedef uint64_t (*hash_slice_counter)(const void *queried, const bk_hash *hashes,
                                        size_t count);

static double time_hash_slices(const void *queried, const bk_hash *hashes, size_t count,
                               hash_slice_counter count_slice, uint64_t *hits)
{
    slice_times times;
    slice_times_init(&times, count);
    uint64_t found = 0;
    for (size_t start = 0; start < count; start = slice_end(start, count)) {
        size_t end = slice_end(start, count);
        uint64_t begin = bench_now_ns();
        found += count_slice(queried, hashes + start, end - start);
        slice_times_add(&times, begin, bench_now_ns(), end - start);
    }
    *hits = found;
    return slice_times_median(&times);
}

/* One precomputed hash per bk_filter_contains_hash call. */
static uint64_t count_hash_calls(const void *filter, const bk_hash *hashes, size_t count)
{
    uint64_t found = 0;
    for (size_t i = 0; i < count; i++)
        found += bk_filter_contains_hash(filter, hashes[i]);
    return found;
}

/* One precomputed hash per step through the filter's inline view. */
static uint64_t count_hash_view(const void *view, const bk_hash *hashes, size_t count)
{
    return bench_view_hash_hits(view, hashes, count);
}

/* bk_filter_contains_hash_batch over a slice of hashes, QUERY_BATCH per call. */
static uint64_t count_hash_batches(const void *filter, const bk_hash *hashes, size_t count)
{
    uint64_t found = 0;
    for (size_t start = 0; start < count; start += QUERY_BATCH) {
        size_t n = count - start < QUERY_BATCH ? count - start : QUERY_BATCH;
        found += bk_filter_contains_hash_batch(filter, hashes + start, n, NULL);
    }
    return found;
}

/* Times `count_slice` over keys->keys in slices: the median ns per key;
 * *hits gets the total it counted. */
typedef uint64_t (*slice_counter)(const void *queried, const bk_key *keys, size_t count);

static double time_key_slices(const void *queried, const key_set *keys,
                              slice_counter count_slice, uint64_t *hits)
{
    slice_times times;
    slice_times_init(&times, keys->count);
    uint64_t found = 0;
    for (size_t start = 0; start < keys->count; start = slice_end(start, keys->count)) {
        size_t end = slice_end(start, keys->count);
        uint64_t begin = bench_now_ns();
        found += count_slice(queried, keys->keys + start, end - start);
        slice_times_add(&times, begin, bench_now_ns(), end - start);
    }
    *hits = found;
    return slice_times_median(&times);
}

/* One raw key per bk_filter_contains call. */
static uint64_t count_raw(const void *filter, const bk_key *keys, size_t count)
{
    uint64_t found = 0;
    for (size_t i = 0; i < count; i++)
        found += bk_filter_contains(filter, keys[i].data, keys[i].len);
    return found;
}

/* One key per step through the filter's inline view (bench/views.h). */
static uint64_t count_view(const void *view, const bk_key *keys, size_t count)
{
    return bench_view_hits(view, keys, count);
}

/* bk_filter_contains_packed over a slice of keys, QUERY_BATCH per call: the
 * keys sit back to back (bench/keys.c), so the first one's bytes and
 * length are the packed array and its width. */
static uint64_t count_packed_batches(const void *filter, const bk_key *keys, size_t count)
{
    const uint8_t *bytes = keys[0].data;
    size_t width = keys[0].len;
    bool results[QUERY_BATCH];
    uint64_t found = 0;
    for (size_t start = 0; start < count; start += QUERY_BATCH) {
        size_t n = count - start < QUERY_BATCH ? count - start : QUERY_BATCH;
        found += bk_filter_contains_packed(filter, bytes + start * width, width, n, results);
    }
    sink += results[0];
    return found;
}

/* Also counts the hits among the first `prefix` keys (to compare with the
 * one-key-at-a-time passes over that prefix).  BENCH_SLICE_KEYS is a
 * multiple of QUERY_BATCH, so slices hold whole calls. */
static double time_contains_batch(const bk_filter *filter, const key_set *keys, uint64_t *hits,
                                  size_t prefix, uint64_t *prefix_hits)
{
    bool results[QUERY_BATCH];
    slice_times times;
    slice_times_init(&times, keys->count);
    uint64_t found = 0, found_in_prefix = 0;
    for (size_t slice = 0; slice < keys->count; slice = slice_end(slice, keys->count)) {
        size_t slice_stop = slice_end(slice, keys->count);
        uint64_t begin = bench_now_ns();
        for (size_t start = slice; start < slice_stop; start += QUERY_BATCH) {
            size_t n = slice_stop - start < QUERY_BATCH ? slice_stop - start : QUERY_BATCH;
            size_t chunk_found = bk_filter_contains_batch(filter, keys->keys + start, n, results);
            found += chunk_found;
            if (start + n <= prefix) {
                found_in_prefix += chunk_found;
            } else if (start < prefix) {
                for (size_t i = 0; i < prefix - start; i++)
                    found_in_prefix += results[i];
            }
        }
        slice_times_add(&times, begin, bench_now_ns(), slice_stop - slice);
    }
    sink += results[0];
    *hits = found;
    *prefix_hits = found_in_prefix;
    return slice_times_median(&times);
}

/* ---------------------------------------------------------- filling */

static bk_params params_for(const subject *s, uint64_t capacity, double fpr)
{
    bk_params params = { .capacity = capacity, .fpr = fpr };
    (void)s;
    params.window_keys = capacity; /* window: nothing ages out during the run */
    return params;
}

typedef struct fill_timing {
    double single_ns;
    double batch_ns;
    double build_ns;
} fill_timing;

/* Adds the workload's keys in alternating chunks (see the opening comment). */
static bk_status fill_dynamic(bk_filter *filter, const key_set *keys, bk_hash *chunk_hashes,
                              fill_timing *timing)
{
    const bk_hasher *hasher = bk_filter_hasher(filter);
    slice_times single, batch;
    slice_times_init(&single, keys->count);
    slice_times_init(&batch, keys->count);
    bk_status status = BK_OK;
    for (size_t start = 0, chunk = 0; start < keys->count; start += INSERT_CHUNK, chunk++) {
        size_t n = keys->count - start < INSERT_CHUNK ? keys->count - start : INSERT_CHUNK;
        const bk_key *chunk_keys = keys->keys + start;
        if (chunk % 2 == 0) {
            for (size_t i = 0; i < n; i++)
                chunk_hashes[i] = bk_hash_key(hasher, chunk_keys[i].data, chunk_keys[i].len);
            uint64_t begin = bench_now_ns();
            for (size_t i = 0; i < n && status == BK_OK; i++)
                status = bk_filter_add_hash(filter, chunk_hashes[i], NULL);
            slice_times_add(&single, begin, bench_now_ns(), n);
        } else {
            uint64_t begin = bench_now_ns();
            status = bk_filter_add_batch(filter, chunk_keys, n, NULL);
            slice_times_add(&batch, begin, bench_now_ns(), n);
        }
        if (status != BK_OK)
            break;
    }
    timing->single_ns = slice_times_median(&single);
    timing->batch_ns = slice_times_median(&batch);
    timing->build_ns = NAN;
    return status;
}

/* A filter of the subject's kind holding every present key. */
static bk_status make_filter(const subject *s, const workload *w, const options *opts,
                             bk_hash *chunk_hashes, bk_filter **out, fill_timing *timing,
                             double *capacity_scale)
{
    *capacity_scale = 1.0;
    for (int attempt = 0; attempt < 3; attempt++) {
        bk_params params = params_for(s, (uint64_t)(w->n * *capacity_scale), opts->fpr);
        bk_status status;
        if (bk_kind_is_static(s->kind)) {
            uint64_t begin = bench_now_ns();
            status = bk_filter_build(s->kind, &params, w->present.keys, w->present.count, out);
            timing->build_ns = per_key(begin, bench_now_ns(), w->present.count);
            timing->single_ns = timing->batch_ns = NAN;
            return status;
        }
        status = bk_filter_create(s->kind, &params, out);
        if (status != BK_OK)
            return status;
        status = fill_dynamic(*out, &w->present, chunk_hashes, timing);
        if (status == BK_OK)
            return BK_OK;
        bk_filter_free(*out);
        *out = NULL;
        if (status != BK_EFULL)
            return status;
        *capacity_scale *= 1.25; /* filled up early (cuckoo): give it room */
    }
    return BK_EFULL;
}

static void hash_keys(const bk_hasher *hasher, const key_set *keys, bk_hash *out)
{
    for (size_t i = 0; i < keys->count; i++)
        out[i] = bk_hash_key(hasher, keys->keys[i].data, keys->keys[i].len);
}

static void ensure_hashes(hash_cache *cache, const bk_hasher *hasher, const workload *w)
{
    if (cache->valid && bk_hasher_equal(&cache->hasher, hasher))
        return;
    hash_keys(hasher, &w->sample, cache->sample);
    hash_keys(hasher, &w->absent_timed, cache->absent);
    cache->hasher = *hasher;
    cache->valid = true;
}

/* ------------------------------------------------------ one measurement */

typedef struct rep_figures {
    double insert_single, insert_batch, build;
    double pos_hash, neg_hash, pos_raw, neg_raw, pos_batch, neg_batch, pos_hbatch, neg_hbatch;
    double pos_packed, neg_packed;
    double pos_view, neg_view, pos_hview, neg_hview;
    double own_read, fpr, huge_mb;
} rep_figures;

/* True when BLOOMKIT_NO_HUGEPAGE was set for the whole run. */
static bool no_hugepage_everywhere;

/* src/memory.c reads BLOOMKIT_NO_HUGEPAGE at each large allocation. */
static void set_hugepage_env(bool no_hugepage)
{
    if (no_hugepage || no_hugepage_everywhere)
        setenv("BLOOMKIT_NO_HUGEPAGE", "1", 1);
    else
        unsetenv("BLOOMKIT_NO_HUGEPAGE");
}

static void query_passes(const bk_filter *filter, const workload *w, const hash_cache *hashes,
                         rep_figures *fig, row *out)
{
    uint64_t pos[7], neg[7], pos_all, neg_all;
    fig->pos_hash = time_hash_slices(filter, hashes->sample, w->sample.count, count_hash_calls,
                                     &pos[0]);
    fig->neg_hash = time_hash_slices(filter, hashes->absent, w->absent_timed.count,
                                     count_hash_calls, &neg[0]);
    fig->pos_raw = time_key_slices(filter, &w->sample, count_raw, &pos[1]);
    fig->neg_raw = time_key_slices(filter, &w->absent_timed, count_raw, &neg[1]);
    fig->pos_batch = time_contains_batch(filter, &w->sample, &pos_all, w->sample.count, &pos[2]);
    fig->neg_batch = time_contains_batch(filter, &w->absent, &neg_all, w->absent_timed.count,
                                         &neg[2]);
    fig->pos_hbatch = time_hash_slices(filter, hashes->sample, w->sample.count,
                                       count_hash_batches, &pos[3]);
    fig->neg_hbatch = time_hash_slices(filter, hashes->absent, w->absent_timed.count,
                                       count_hash_batches, &neg[3]);
    fig->pos_packed = time_key_slices(filter, &w->sample, count_packed_batches, &pos[6]);
    fig->neg_packed = time_key_slices(filter, &w->absent_timed, count_packed_batches, &neg[6]);
    bench_view view;
    fig->pos_view = fig->neg_view = fig->pos_hview = fig->neg_hview = NAN;
    pos[4] = pos[5] = pos[0];
    neg[4] = neg[5] = neg[0];
    if (bench_view_init(filter, key_type_bytes(w->type), &view)) {
        fig->pos_view = time_key_slices(&view, &w->sample, count_view, &pos[4]);
        fig->neg_view = time_key_slices(&view, &w->absent_timed, count_view, &neg[4]);
        fig->pos_hview = time_hash_slices(&view, hashes->sample, w->sample.count,
                                          count_hash_view, &pos[5]);
        fig->neg_hview = time_hash_slices(&view, hashes->absent, w->absent_timed.count,
                                          count_hash_view, &neg[5]);
    }
    for (int form = 1; form < 7; form++)
        if (pos[form] != pos[0] || neg[form] != neg[0])
            out->forms_disagree = true;
    out->false_negatives += w->sample.count - pos[0];
    fig->fpr = (double)neg_all / (double)w->absent.count;
}

/* One independent random line read in the filter's own bit array, timed
 * between its query passes (bench/machine.c says why): the kinds whose
 * words the library exposes; NAN for the others. */
static double own_read_ns(const bk_filter *filter, int rep)
{
    const void *object = bk_filter_object(filter);
    uint64_t seed = (uint64_t)rep + 2;
    switch (bk_filter_kind(filter)) {
    case BK_KIND_BLOOM:
        return measure_independent_read_in(bk_bloom_words(object),
                                           bk_bloom_word_count(object) * 8, seed);
    case BK_KIND_BLOCKED:
        return measure_independent_read_in(bk_blocked_words(object),
                                           bk_blocked_block_count(object) * 64, seed);
    case BK_KIND_SBBF:
        return measure_independent_read_in(bk_sbbf_words(object),
                                           bk_sbbf_block_count(object) * 32, seed);
    default:
        return NAN;
    }
}

/* The median over repetitions of the double at `offset` in rep_figures. */
static double median_of(const rep_figures *figs, int count, size_t offset)
{
    double column[MAX_REPS];
    for (int r = 0; r < count; r++)
        memcpy(&column[r], (const char *)&figs[r] + offset, sizeof column[r]);
    return bench_median(column, (size_t)count);
}

/* A kind under measurement: its filter, alive across the repetitions, and
 * the figures of each repetition. */
typedef struct kind_run {
    const subject *subject;
    row *out;
    bk_filter *filter;
    rep_figures figs[MAX_REPS];
    int done;
    double huge_mb;
    bool failed;
} kind_run;

/* (Re)builds and fills the filter, timing the inserts into `fig`. */
static bool fill_kind(kind_run *k, const workload *w, const options *opts,
                      bk_hash *chunk_hashes, rep_figures *fig)
{
    bk_filter_free(k->filter);
    k->filter = NULL;
    set_hugepage_env(k->subject->no_hugepage);
    double huge_before = process_huge_mb();
    fill_timing timing = { NAN, NAN, NAN };
    double scale;
    bk_status status = make_filter(k->subject, w, opts, chunk_hashes, &k->filter, &timing, &scale);
    set_hugepage_env(false);
    if (status != BK_OK) {
        snprintf(k->out->note, sizeof k->out->note, "could not fill: %s", bk_strerror(status));
        k->out->ok = false;
        k->failed = true;
        return false;
    }
    if (scale != 1.0)
        snprintf(k->out->note, sizeof k->out->note, "BK_EFULL at capacity n: sized for %.2f n",
                 scale);
    fig->insert_single = timing.single_ns;
    fig->insert_batch = timing.batch_ns;
    fig->build = timing.build_ns;
    k->huge_mb = process_huge_mb() - huge_before;
    return true;
}

/* One repetition: the query passes, then the read floor in the filter's
 * own memory (the filter is built on the first, or on each with
 * --rebuild). */
static void repeat_kind(kind_run *k, int rep, const workload *w, const options *opts,
                        hash_cache *hashes, bk_hash *chunk_hashes)
{
    bench_progress("%s n=%llu %s: repetition %d/%d", key_type_name(w->type),
                   (unsigned long long)w->n, k->subject->name, rep + 1, opts->reps);
    rep_figures *fig = &k->figs[k->done];
    fig->insert_single = fig->insert_batch = fig->build = NAN;
    if ((k->filter == NULL || opts->rebuild) && !fill_kind(k, w, opts, chunk_hashes, fig))
        return;
    k->done++;
    fig->huge_mb = k->huge_mb;
    ensure_hashes(hashes, bk_filter_hasher(k->filter), w);
    query_passes(k->filter, w, hashes, fig, k->out);
    fig->own_read = own_read_ns(k->filter, rep);
}

/* The row: medians over the repetitions; frees the filter. */
static void finish_kind(kind_run *k, const workload *w)
{
    row *out = k->out;
    const rep_figures *figs = k->figs;
    int done = k->done;
    if (k->failed || k->filter == NULL)
        return;
    bk_stats stats;
    bk_filter_stats(k->filter, &stats);
    out->bits = stats.bits;
    out->hashes = stats.hashes;
    out->bytes = stats.bytes;
    out->predicted_fpr = stats.target_fpr;
    bk_filter_free(k->filter);
    k->filter = NULL;
    out->insert_single_ns = median_of(figs, done, offsetof(rep_figures, insert_single));
    out->insert_batch_ns = median_of(figs, done, offsetof(rep_figures, insert_batch));
    out->build_ns = median_of(figs, done, offsetof(rep_figures, build));
    out->pos_hash_ns = median_of(figs, done, offsetof(rep_figures, pos_hash));
    out->neg_hash_ns = median_of(figs, done, offsetof(rep_figures, neg_hash));
    out->pos_raw_ns = median_of(figs, done, offsetof(rep_figures, pos_raw));
    out->neg_raw_ns = median_of(figs, done, offsetof(rep_figures, neg_raw));
    out->pos_batch_ns = median_of(figs, done, offsetof(rep_figures, pos_batch));
    out->neg_batch_ns = median_of(figs, done, offsetof(rep_figures, neg_batch));
    out->pos_hbatch_ns = median_of(figs, done, offsetof(rep_figures, pos_hbatch));
    out->neg_hbatch_ns = median_of(figs, done, offsetof(rep_figures, neg_hbatch));
    out->pos_packed_ns = median_of(figs, done, offsetof(rep_figures, pos_packed));
    out->neg_packed_ns = median_of(figs, done, offsetof(rep_figures, neg_packed));
    out->pos_view_ns = median_of(figs, done, offsetof(rep_figures, pos_view));
    out->neg_view_ns = median_of(figs, done, offsetof(rep_figures, neg_view));
    out->pos_hview_ns = median_of(figs, done, offsetof(rep_figures, pos_hview));
    out->neg_hview_ns = median_of(figs, done, offsetof(rep_figures, neg_hview));
    out->own_read_ns = median_of(figs, done, offsetof(rep_figures, own_read));
    for (int column = 0; column < BATCH_FORMS; column++) {
        double ratios[MAX_REPS];
        for (int r = 0; r < done; r++) {
            const double batch[BATCH_FORMS] = { figs[r].pos_batch,  figs[r].neg_batch,
                                                figs[r].pos_hbatch, figs[r].neg_hbatch,
                                                figs[r].pos_packed, figs[r].neg_packed };
            ratios[r] = batch[column] / figs[r].own_read;
        }
        out->per_own_read[column] = bench_median(ratios, (size_t)done);
    }
    out->fpr = median_of(figs, done, offsetof(rep_figures, fpr));
    out->huge_mb = median_of(figs, done, offsetof(rep_figures, huge_mb));
    out->bits_per_key = (double)out->bytes * 8.0 / (double)w->n;
    out->ok = out->false_negatives == 0 && !out->forms_disagree;
    if (out->false_negatives != 0)
        snprintf(out->note, sizeof out->note, "FALSE NEGATIVES: %llu",
                 (unsigned long long)out->false_negatives);
    else if (out->forms_disagree)
        snprintf(out->note, sizeof out->note, "hash/raw/view/batch/packed answers disagree");
}

/* libbloom under measurement, in the same rotation of repetitions as the
 * kinds: built on the first repetition (on each with --rebuild). */
typedef struct peer_run {
    row *out;
    peer_filter *filter;
    double insert[MAX_REPS], pos[MAX_REPS], neg[MAX_REPS], fpr[MAX_REPS];
    int builds, done;
    bool failed;
} peer_run;

static void repeat_libbloom(peer_run *p, int rep, const workload *w, const options *opts)
{
    bench_progress("%s n=%llu libbloom: repetition %d/%d", key_type_name(w->type),
                   (unsigned long long)w->n, rep + 1, opts->reps);
    row *out = p->out;
    peer_result result;
    if (p->filter == NULL || opts->rebuild) {
        libbloom_free(p->filter);
        p->filter = libbloom_build(&w->present, opts->fpr, &result);
        if (p->filter == NULL) {
            snprintf(out->note, sizeof out->note, "libbloom refused n=%llu",
                     (unsigned long long)w->n);
            p->failed = true; /* not a fault of ours: the row stays empty */
            return;
        }
        p->insert[p->builds++] = result.insert_ns;
        out->bits = result.bits;
        out->hashes = result.hashes;
        out->bytes = result.bytes;
    }
    libbloom_query(p->filter, &w->sample, &w->absent, &result);
    p->pos[p->done] = result.pos_ns;
    p->neg[p->done] = result.neg_ns;
    p->fpr[p->done] = (double)result.false_positives / (double)w->absent.count;
    p->done++;
    out->false_negatives += result.false_negatives;
}

/* The row: medians over the repetitions; frees the filter. */
static void finish_libbloom(peer_run *p, const workload *w)
{
    row *out = p->out;
    libbloom_free(p->filter);
    p->filter = NULL;
    out->is_libbloom = true;
    out->own_read_ns = NAN;
    out->ok = true;
    if (p->failed)
        return;
    out->predicted_fpr = bk_predicted_fpr(w->n, out->bits, out->hashes);
    out->bits_per_key = (double)out->bytes * 8.0 / (double)w->n;
    out->insert_single_ns = bench_median(p->insert, (size_t)p->builds);
    out->pos_raw_ns = bench_median(p->pos, (size_t)p->done);
    out->neg_raw_ns = bench_median(p->neg, (size_t)p->done);
    out->fpr = bench_median(p->fpr, (size_t)p->done);
    out->insert_batch_ns = out->build_ns = NAN;
    out->pos_hash_ns = out->neg_hash_ns = out->pos_batch_ns = out->neg_batch_ns = NAN;
    out->pos_hbatch_ns = out->neg_hbatch_ns = out->pos_view_ns = out->neg_view_ns = NAN;
    out->pos_packed_ns = out->neg_packed_ns = NAN;
    out->pos_hview_ns = out->neg_hview_ns = out->huge_mb = NAN;
    out->ok = out->false_negatives == 0;
    if (!out->ok)
        snprintf(out->note, sizeof out->note, "FALSE NEGATIVES: %llu",
                 (unsigned long long)out->false_negatives);
}

/* ------------------------------------------------------- machine limits */

typedef struct limits_cache {
    memory_limits entries[4 * MAX_SUBJECTS];
    bool no_hugepage[4 * MAX_SUBJECTS];
    size_t count;
} limits_cache;

/* The limits for a buffer of `bytes`, measured once per size (sizes within
 * LIMIT_TOLERANCE of one already measured share its figures). */
static memory_limits limits_for(limits_cache *cache, uint64_t bytes, bool no_hugepage, int reps)
{
    for (size_t i = 0; i < cache->count; i++) {
        double ratio = (double)bytes / (double)cache->entries[i].bytes;
        if (cache->no_hugepage[i] == no_hugepage && ratio > 1 - LIMIT_TOLERANCE &&
            ratio < 1 + LIMIT_TOLERANCE)
            return cache->entries[i];
    }
    memory_limits limits = { .bytes = bytes, .dependent_ns = NAN, .independent_ns = NAN,
                             .keyed_ns = { NAN, NAN }, .huge_mb = NAN };
    bench_progress("random-read limits in %.1f MiB%s", (double)bytes / 1048576.0,
                   no_hugepage ? " (4 KiB pages)" : "");
    set_hugepage_env(no_hugepage);
    int failed = measure_memory_limits(bytes, reps, &limits);
    set_hugepage_env(false);
    if (failed == 0 && cache->count < sizeof cache->entries / sizeof cache->entries[0]) {
        cache->no_hugepage[cache->count] = no_hugepage;
        cache->entries[cache->count++] = limits;
    }
    return limits;
}

/* --------------------------------------------------------------- output */

typedef struct block {
    key_type type;
    uint64_t n;
    size_t sample_count;
    size_t absent_count;
    row rows[MAX_SUBJECTS];
    size_t count;
} block;

/* The keyed read limit for the block's key length. */
static double keyed_read_ns(const block *b, const row *r)
{
    return r->limits.keyed_ns[b->type == KEY_INT64 ? 0 : 1];
}

static const row *find_row(const block *b, const char *name)
{
    for (size_t i = 0; i < b->count; i++)
        if (strcmp(b->rows[i].name, name) == 0 && b->rows[i].bytes != 0)
            return &b->rows[i];
    return NULL;
}

static double ratio(double numerator, double denominator)
{
    return numerator / denominator; /* NaN propagates to "-" in the tables */
}

static void print_number(double value, int width, int decimals)
{
    if (isnan(value) || isinf(value))
        printf(" %*s", width, "-");
    else
        printf(" %*.*f", width, decimals, value);
}

static void print_count(uint64_t n)
{
    char digits[32], grouped[48];
    int length = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    int out = 0;
    for (int i = 0; i < length; i++) {
        if (i > 0 && (length - i) % 3 == 0)
            grouped[out++] = ',';
        grouped[out++] = digits[i];
    }
    grouped[out] = '\0';
    printf("%s", grouped);
}

/* The read floor a kind's batches are compared with: one independent line
 * read in its own bit array where measured, else in a fresh buffer of its
 * size. */
static double read_floor_ns(const row *r)
{
    return isnan(r->own_read_ns) ? r->limits.independent_ns : r->own_read_ns;
}

/* A batch time over the read floor; column 0-5: +batch, -batch, +hbat,
 * -hbat, +pack, -pack.  With rd own, the median over repetitions of each repetition's
 * time over the read timed right after it (the memory's speed drifts
 * between repetitions; a ratio of two medians can pair a fast pass with a
 * slow read); else the median time over rd ind. */
static double batch_per_read(const row *r, int column)
{
    const double batch[BATCH_FORMS] = { r->pos_batch_ns,  r->neg_batch_ns,  r->pos_hbatch_ns,
                                        r->neg_hbatch_ns, r->pos_packed_ns, r->neg_packed_ns };
    if (r->own_read_ns > 0 && !isnan(r->per_own_read[column]))
        return r->per_own_read[column];
    return ratio(batch[column], r->limits.independent_ns);
}

static void print_block(const block *b)
{
    const row *peer = find_row(b, "libbloom");
    printf("\n== %s keys, n = ", key_type_name(b->type));
    print_count(b->n);
    printf(" (queries: ");
    print_count(b->sample_count);
    printf(" present, ");
    print_count(b->absent_count);
    printf(" absent)\n\n");
    printf("%-12s %12s %3s %8s %7s %7s %8s %8s %8s %8s  %s\n", "kind", "m (bits)", "k",
           "bits/key", "FPR %", "pred %", "ins one", "ins bat", "build", "huge MiB", "note");
    for (size_t i = 0; i < b->count; i++) {
        const row *r = &b->rows[i];
        printf("%-12s %12llu %3u", r->name, (unsigned long long)r->bits, r->hashes);
        print_number(r->bits_per_key, 8, 2);
        print_number(r->fpr * 100, 7, 3);
        print_number(r->predicted_fpr * 100, 7, 3);
        print_number(r->insert_single_ns, 8, 1);
        print_number(r->insert_batch_ns, 8, 1);
        print_number(r->build_ns, 8, 1);
        print_number(r->huge_mb, 8, 0);
        printf("  %s\n", r->note);
    }
    printf("\nns per query%s; rd dep/ind: one random line read in a buffer of the filter's size;"
           " rd own: the same\nindependent read in the filter's own bit array, between its"
           " query passes; rd key: one key hashed and\nits line read; x/rd: batch time over"
           " rd own (rd ind where rd own is -)\n",
           peer ? "; lb/x: libbloom's time over ours (x faster)" : "");
    printf("%-12s %7s %7s %6s %6s %7s %7s %6s %6s %7s %7s %6s %6s %6s %6s | %7s %7s %6s %6s |"
           " %6s %6s %6s %6s %6s %6s | %6s %6s %6s %6s\n",
           "kind", "+hash", "-hash", "+hview", "-hview", "+raw", "-raw", "+view", "-view",
           "+batch", "-batch", "+hbat", "-hbat", "+pack", "-pack",
           "rd dep", "rd ind", "rd own", "rd key", "+B/rd", "-B/rd", "+hB/rd", "-hB/rd",
           "+pB/rd", "-pB/rd", "lb/+raw", "lb/-raw", "lb/+B", "lb/-B");
    for (size_t i = 0; i < b->count; i++) {
        const row *r = &b->rows[i];
        printf("%-12s", r->name);
        print_number(r->pos_hash_ns, 7, 1);
        print_number(r->neg_hash_ns, 7, 1);
        print_number(r->pos_hview_ns, 6, 1);
        print_number(r->neg_hview_ns, 6, 1);
        print_number(r->pos_raw_ns, 7, 1);
        print_number(r->neg_raw_ns, 7, 1);
        print_number(r->pos_view_ns, 6, 1);
        print_number(r->neg_view_ns, 6, 1);
        print_number(r->pos_batch_ns, 7, 1);
        print_number(r->neg_batch_ns, 7, 1);
        print_number(r->pos_hbatch_ns, 6, 1);
        print_number(r->neg_hbatch_ns, 6, 1);
        print_number(r->pos_packed_ns, 6, 1);
        print_number(r->neg_packed_ns, 6, 1);
        printf(" |");
        print_number(r->limits.dependent_ns, 7, 1);
        print_number(r->limits.independent_ns, 7, 1);
        print_number(r->own_read_ns, 6, 1);
        print_number(keyed_read_ns(b, r), 6, 1);
        printf(" |");
        for (int column = 0; column < BATCH_FORMS; column++)
            print_number(batch_per_read(r, column), 6, 2);
        printf(" |");
        double lb_pos = peer ? peer->pos_raw_ns : NAN, lb_neg = peer ? peer->neg_raw_ns : NAN;
        print_number(ratio(lb_pos, r->pos_raw_ns), 7, 2);
        print_number(ratio(lb_neg, r->neg_raw_ns), 7, 2);
        print_number(ratio(lb_pos, r->pos_batch_ns), 6, 2);
        print_number(ratio(lb_neg, r->neg_batch_ns), 6, 2);
        printf("\n");
    }
    fflush(stdout);
}

static void csv_value(FILE *csv, const block *b, const char *kind, const char *metric,
                      double value)
{
    if (csv == NULL || isnan(value) || isinf(value))
        return;
    fprintf(csv, "%s,%llu,%s,%s,%.6g\n", key_type_name(b->type), (unsigned long long)b->n, kind,
            metric, value);
}

static void csv_block(FILE *csv, const block *b)
{
    if (csv == NULL)
        return;
    const row *peer = find_row(b, "libbloom");
    for (size_t i = 0; i < b->count; i++) {
        const row *r = &b->rows[i];
        const char *k = r->name;
        csv_value(csv, b, k, "ok", r->ok);
        csv_value(csv, b, k, "m_bits", (double)r->bits);
        csv_value(csv, b, k, "k", r->hashes);
        csv_value(csv, b, k, "bytes", (double)r->bytes);
        csv_value(csv, b, k, "bits_per_key", r->bits_per_key);
        csv_value(csv, b, k, "fpr", r->fpr);
        csv_value(csv, b, k, "fpr_predicted", r->predicted_fpr);
        csv_value(csv, b, k, "false_negatives", (double)r->false_negatives);
        csv_value(csv, b, k, "insert_single_ns", r->insert_single_ns);
        csv_value(csv, b, k, "insert_batch_ns", r->insert_batch_ns);
        csv_value(csv, b, k, "build_ns", r->build_ns);
        csv_value(csv, b, k, "pos_hash_ns", r->pos_hash_ns);
        csv_value(csv, b, k, "neg_hash_ns", r->neg_hash_ns);
        csv_value(csv, b, k, "pos_raw_ns", r->pos_raw_ns);
        csv_value(csv, b, k, "neg_raw_ns", r->neg_raw_ns);
        csv_value(csv, b, k, "pos_view_ns", r->pos_view_ns);
        csv_value(csv, b, k, "neg_view_ns", r->neg_view_ns);
        csv_value(csv, b, k, "pos_hview_ns", r->pos_hview_ns);
        csv_value(csv, b, k, "neg_hview_ns", r->neg_hview_ns);
        csv_value(csv, b, k, "pos_batch_ns", r->pos_batch_ns);
        csv_value(csv, b, k, "neg_batch_ns", r->neg_batch_ns);
        csv_value(csv, b, k, "pos_hash_batch_ns", r->pos_hbatch_ns);
        csv_value(csv, b, k, "neg_hash_batch_ns", r->neg_hbatch_ns);
        csv_value(csv, b, k, "pos_packed_batch_ns", r->pos_packed_ns);
        csv_value(csv, b, k, "neg_packed_batch_ns", r->neg_packed_ns);
        csv_value(csv, b, k, "huge_mb", r->huge_mb);
        csv_value(csv, b, k, "read_dependent_ns", r->limits.dependent_ns);
        csv_value(csv, b, k, "read_independent_ns", r->limits.independent_ns);
        csv_value(csv, b, k, "read_own_ns", r->own_read_ns);
        csv_value(csv, b, k, "read_keyed_ns", keyed_read_ns(b, r));
        csv_value(csv, b, k, "pos_batch_per_read", batch_per_read(r, 0));
        csv_value(csv, b, k, "neg_batch_per_read", batch_per_read(r, 1));
        csv_value(csv, b, k, "pos_hash_batch_per_read", batch_per_read(r, 2));
        csv_value(csv, b, k, "neg_hash_batch_per_read", batch_per_read(r, 3));
        csv_value(csv, b, k, "pos_packed_batch_per_read", batch_per_read(r, 4));
        csv_value(csv, b, k, "neg_packed_batch_per_read", batch_per_read(r, 5));
        if (peer != NULL) {
            csv_value(csv, b, k, "speedup_pos_raw", ratio(peer->pos_raw_ns, r->pos_raw_ns));
            csv_value(csv, b, k, "speedup_neg_raw", ratio(peer->neg_raw_ns, r->neg_raw_ns));
            csv_value(csv, b, k, "speedup_pos_batch", ratio(peer->pos_raw_ns, r->pos_batch_ns));
            csv_value(csv, b, k, "speedup_neg_batch", ratio(peer->neg_raw_ns, r->neg_batch_ns));
        }
    }
    fflush(csv);
}

/* ------------------------------------------------------ the speed targets */

static const char *verdict(bool met)
{
    return met ? "MET " : "MISS";
}

static void summarise_bloom_vs_libbloom(const block *b)
{
    const row *ours = find_row(b, "bloom"), *peer = find_row(b, "libbloom");
    if (ours == NULL || peer == NULL)
        return;
    double pos = peer->pos_raw_ns / ours->pos_raw_ns, neg = peer->neg_raw_ns / ours->neg_raw_ns;
    /* one key per step through the inline view counts as a single query */
    double view_pos = peer->pos_raw_ns / ours->pos_view_ns;
    double view_neg = peer->neg_raw_ns / ours->neg_view_ns;
    bool met = (pos >= 1.5 && neg >= 1.5) || (view_pos >= 1.5 && view_neg >= 1.5);
    printf("  [%s] bloom >= 1.5x libbloom, %s n=%-9llu  m,k ours %llu,%u libbloom %llu,%u:"
           " +%.2fx -%.2fx single (call), +%.2fx -%.2fx (view); +%.2fx -%.2fx batch;"
           " insert (batch, raw keys) %.2fx\n",
           verdict(met), key_type_name(b->type), (unsigned long long)b->n,
           (unsigned long long)ours->bits, ours->hashes, (unsigned long long)peer->bits,
           peer->hashes, pos, neg, view_pos, view_neg, peer->pos_raw_ns / ours->pos_batch_ns,
           peer->neg_raw_ns / ours->neg_batch_ns, peer->insert_single_ns / ours->insert_batch_ns);
}

static void summarise_blocked(const block *b, const char *name)
{
    const row *ours = find_row(b, name), *peer = find_row(b, "libbloom");
    if (ours == NULL || b->n < 10000000)
        return;
    /* one line per batch form: bk_key descriptors, packed keys, hashes */
    static const char *const forms[] = { "keys", "packed keys", "hashes" };
    static const int columns[] = { 0, 4, 2 };
    for (int f = 0; f < 3; f++) {
        double pos = batch_per_read(ours, columns[f]), neg = batch_per_read(ours, columns[f] + 1);
        printf("  [%s] %-7s batch <= 1.1x random read, %s n=%-9llu: %-11s +%.2fx -%.2fx of"
               " %.1f ns (rd own; rd ind %.1f)\n",
               verdict(pos <= 1.1 && neg <= 1.1), name, key_type_name(b->type),
               (unsigned long long)b->n, forms[f], pos, neg, read_floor_ns(ours),
               ours->limits.independent_ns);
    }
    if (peer != NULL && b->n >= 100000000) {
        double sp = peer->pos_raw_ns / ours->pos_batch_ns, sn = peer->neg_raw_ns / ours->neg_batch_ns;
        printf("  [%s] %-7s >= 6x libbloom, %s n=%-9llu: +%.2fx -%.2fx (batch)\n",
               verdict(sp >= 6 && sn >= 6), name, key_type_name(b->type),
               (unsigned long long)b->n, sp, sn);
    }
}

static void summarise_single_queries(const block *b)
{
    const row *peer = find_row(b, "libbloom");
    if (peer == NULL || b->n != 1000000)
        return;
    for (size_t i = 0; i < b->count; i++) {
        const row *r = &b->rows[i];
        if (r->is_libbloom || r->bytes == 0 || strchr(r->name, ':') != NULL)
            continue;
        double pos = peer->pos_raw_ns / r->pos_raw_ns, neg = peer->neg_raw_ns / r->neg_raw_ns;
        /* the inline view, where the kind has one, is a one-key query too */
        double view_pos = peer->pos_raw_ns / r->pos_view_ns;
        double view_neg = peer->neg_raw_ns / r->neg_view_ns;
        bool has_view = !isnan(view_pos) && !isnan(view_neg);
        /* "same or better FPR": not above libbloom's by more than three
         * standard deviations of the difference of two binomial estimates */
        double p = peer->fpr, noise = 3 * sqrt(2 * p * (1 - p) / (double)b->absent_count);
        bool accurate = r->fpr <= p + noise;
        bool fast = (pos >= 5 && neg >= 5) || (has_view && view_pos >= 5 && view_neg >= 5);
        char view[64] = "";
        if (has_view)
            snprintf(view, sizeof view, " (call), +%.2fx -%.2fx (view)", view_pos, view_neg);
        printf("  [%s] %-9s single query >= 5x libbloom, %s n=1e6: +%.2fx -%.2fx%s, FPR %.3f%% %s"
               " libbloom's %.3f%% (+-%.3f); 5x needs %.1f / %.1f ns, one hashed key and its"
               " line read take %.1f ns here\n",
               verdict(fast && accurate), r->name, key_type_name(b->type), pos, neg, view,
               r->fpr * 100, accurate ? "~<=" : ">", p * 100, noise * 100,
               peer->pos_raw_ns / 5, peer->neg_raw_ns / 5, keyed_read_ns(b, r));
    }
}

static void summarise_inserts(const block *b)
{
    const row *r = find_row(b, "blocked");
    if (r == NULL || b->n != 10000000)
        return;
    double best = r->insert_single_ns < r->insert_batch_ns ? r->insert_single_ns
                                                           : r->insert_batch_ns;
    printf("  [%s] blocked insert <= 12 ns, %s n=1e7: %.1f ns one at a time (hashed),"
           " %.1f ns batch (raw keys)\n",
           verdict(best <= 12), key_type_name(b->type), r->insert_single_ns, r->insert_batch_ns);
}

static void summarise_hugepages(const block *b)
{
    static const char *const names[] = { "bloom", "blocked" };
    for (size_t i = 0; i < 2; i++) {
        char small[NAME_BYTES];
        snprintf(small, sizeof small, "%s:4k", names[i]);
        const row *huge = find_row(b, names[i]), *four = find_row(b, small);
        if (huge == NULL || four == NULL)
            continue;
        printf("  [info] MADV_HUGEPAGE, %-7s %s n=%-9llu: -batch %.1f -> %.1f ns (%.2fx),"
               " +batch %.1f -> %.1f ns, random read dep %.1f -> %.1f, ind %.1f -> %.1f ns"
               " (%.0f MiB huge)\n",
               names[i], key_type_name(b->type), (unsigned long long)b->n, four->neg_batch_ns,
               huge->neg_batch_ns, four->neg_batch_ns / huge->neg_batch_ns, four->pos_batch_ns,
               huge->pos_batch_ns, four->limits.dependent_ns, huge->limits.dependent_ns,
               four->limits.independent_ns, huge->limits.independent_ns, huge->huge_mb);
    }
}

static void print_summary(const block *blocks, size_t count)
{
    printf("\n== Speed targets; MET/MISS as measured in this run.  single = one raw key per\n"
           "   call (hashing included, as libbloom's bloom_check); batch = bk_filter_contains_batch\n"
           "   (keys: bk_key array; packed keys: bk_filter_contains_packed; hashes: precomputed)\n");
    for (size_t i = 0; i < count; i++)
        summarise_bloom_vs_libbloom(&blocks[i]);
    for (size_t i = 0; i < count; i++) {
        summarise_blocked(&blocks[i], "blocked");
        summarise_blocked(&blocks[i], "sbbf");
    }
    for (size_t i = 0; i < count; i++)
        summarise_single_queries(&blocks[i]);
    for (size_t i = 0; i < count; i++)
        summarise_inserts(&blocks[i]);
    for (size_t i = 0; i < count; i++)
        summarise_hugepages(&blocks[i]);
}

/* ---------------------------------------------------- machine description */

static void read_first_match(const char *path, const char *prefix, char *out, size_t size)
{
    snprintf(out, size, "unknown");
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, file) != NULL) {
        if (prefix == NULL || strncmp(line, prefix, strlen(prefix)) == 0) {
            char *value = prefix ? strchr(line, ':') : line;
            value = value ? value + (prefix ? 1 : 0) : line;
            while (*value == ' ' || *value == '\t')
                value++;
            size_t length = strcspn(value, "\n");
            if (length >= size)
                length = size - 1;
            memcpy(out, value, length);
            out[length] = '\0';
            break;
        }
    }
    fclose(file);
}

static long sysconf_cpus(void)
{
    return sysconf(_SC_NPROCESSORS_ONLN);
}

/* Prints the machine and the run's settings, to stdout and (as comments)
 * to the CSV. */
/* Locks every page as it is first touched (MCL_ONFAULT: nothing is
 * populated early, so huge pages still form).  Virtual machines here run
 * memory reclaim (DAMON "pageout") that otherwise evicts a filter between
 * two passes, and the next pass then times page faults, not the filter. */
static bool memory_locked;

static void lock_memory(const options *opts)
{
#ifdef MCL_ONFAULT
    if (!opts->no_mlock)
        memory_locked = mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == 0;
#else
    (void)opts;
#endif
}

/* The CPU the run is pinned to, or -1. */
static int pinned_cpu = -1;

/* Pins the run to one CPU (the opening comment says why).  False when
 * --cpu N was asked for and cannot be had; without --cpu, a failure to pin
 * leaves the run free and the header says so. */
static bool pin_to_cpu(const options *opts)
{
    if (opts->no_pin)
        return true;
    int cpu = opts->cpu >= 0 ? opts->cpu : sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return opts->cpu < 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        if (opts->cpu >= 0)
            fprintf(stderr, "bloomkit-bench: cannot run on CPU %d: %s\n", cpu, strerror(errno));
        return opts->cpu < 0;
    }
    pinned_cpu = cpu;
    return true;
}

static void describe_run(const options *opts, FILE *csv)
{
    char cpu[256], memory[128], thp[128], date[64];
    read_first_match("/proc/cpuinfo", "model name", cpu, sizeof cpu);
    read_first_match("/proc/meminfo", "MemTotal", memory, sizeof memory);
    read_first_match("/sys/kernel/mm/transparent_hugepage/enabled", NULL, thp, sizeof thp);
    struct utsname uts;
    if (uname(&uts) != 0)
        memset(&uts, 0, sizeof uts);
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &utc);
    char lines[8][1024];
    int n = 0;
    snprintf(lines[n++], sizeof lines[0], "bloomkit-bench %s, %s", BLOOMKIT_VERSION_STRING, date);
    char pinned[64] = "not pinned (the scheduler may move it)";
    if (pinned_cpu >= 0)
        snprintf(pinned, sizeof pinned, "run pinned to CPU %d", pinned_cpu);
    snprintf(lines[n++], sizeof lines[0], "cpu: %s; %ld online; %s; memory %s", cpu,
             sysconf_cpus(), pinned, memory);
    snprintf(lines[n++], sizeof lines[0], "kernel: %s %s; transparent huge pages: %s",
             uts.sysname, uts.release, thp);
    snprintf(lines[n++], sizeof lines[0], "compiler: %s; flags: %s", __VERSION__, BENCH_C_FLAGS);
    snprintf(lines[n++], sizeof lines[0], "libbloom: %s; BLOOMKIT_PORTABLE=%s BLOOMKIT_NO_HUGEPAGE=%s",
             libbloom_available() ? libbloom_version_string() : "not built",
             getenv("BLOOMKIT_PORTABLE") ? getenv("BLOOMKIT_PORTABLE") : "(unset)",
             getenv("BLOOMKIT_NO_HUGEPAGE") ? getenv("BLOOMKIT_NO_HUGEPAGE") : "(unset)");
    snprintf(lines[n++], sizeof lines[0],
             "settings: fpr %g, median of %d%s, up to %zu present and %zu absent queries%s",
             opts->fpr, opts->reps, opts->rebuild ? " (rebuilt each time)" : "", opts->queries,
             opts->absent, opts->quick ? ", --quick" : "");
    snprintf(lines[n++], sizeof lines[0], "memory: %s",
             memory_locked ? "locked as touched (mlockall MCL_ONFAULT): reclaim cannot evict it"
                           : "not locked: the kernel may reclaim it between passes");
    for (int i = 0; i < n; i++) {
        printf("%s\n", lines[i]);
        if (csv != NULL)
            fprintf(csv, "# %s\n", lines[i]);
    }
    if (csv != NULL)
        fprintf(csv, "keytype,n,kind,metric,value\n");
}

/* ------------------------------------------------------------------ main */

static int compare_sizes(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

typedef struct run_state {
    const options *opts;
    const subject *subjects;
    size_t subject_count;
    block *blocks;
    size_t block_count;
    limits_cache *limits;
    bk_hash *chunk_hashes;
    hash_cache hashes;
    FILE *csv;
    int exit_code;
} run_state;

/*
 * Touches, then frees, memory for about 40 bits per key before the first
 * filter of a workload is made.  On the virtual machine this benchmark was
 * developed on, the first filter a process placed in memory it had never
 * used before answered batch queries at 1e8 keys 2-3x slower than the same
 * filter made after another had been freed (46 against 16-18 ns for
 * `blocked`); with this warm-up, 14-30 ns.  It narrows that effect but
 * does not remove it: freshly written key arrays still read slowly for the
 * first kinds of a block (docs/PERFORMANCE.md, "Statistics").
 */
static void warm_memory(uint64_t n)
{
    size_t bytes = (size_t)(n * 5);
    if (bytes < ((size_t)4 << 20))
        return;
    void *buffer = bk_alloc_zeroed(bytes);
    if (buffer == NULL)
        return;
    memset(buffer, 1, bytes);
    bk_free_zeroed(buffer, bytes);
}

static void measure_workload(run_state *run, const workload *w)
{
    block *b = &run->blocks[run->block_count++];
    b->type = w->type;
    b->n = w->n;
    b->sample_count = w->sample.count;
    b->absent_count = w->absent.count;
    run->hashes.valid = false;
    warm_memory(w->n);
    /* Every filter of the block is built first and kept; then repetition r
     * of every kind runs before repetition r + 1 of any, so that a stretch
     * of slow memory (minutes long on the Zen 5 host) spoils one repetition
     * of several kinds rather than all repetitions of one, and the median
     * drops it.  libbloom takes its turn last in each round. */
    static kind_run kinds[MAX_SUBJECTS];
    size_t kind_count = 0;
    peer_run peer = { .out = NULL };
    const subject *subjects[MAX_SUBJECTS];
    for (size_t i = 0; i < run->subject_count; i++) {
        const subject *s = &run->subjects[i];
        if (s->int64_only && w->type != KEY_INT64)
            continue;
        subjects[b->count] = s;
        row *r = &b->rows[b->count++];
        snprintf(r->name, sizeof r->name, "%s", s->name);
        if (s->is_libbloom) {
            peer.out = r;
        } else {
            r->is_static = bk_kind_is_static(s->kind);
            kinds[kind_count++] = (kind_run){ .subject = s, .out = r, .huge_mb = NAN };
        }
    }
    for (int rep = 0; rep < run->opts->reps; rep++) {
        for (size_t k = 0; k < kind_count; k++)
            if (!kinds[k].failed)
                repeat_kind(&kinds[k], rep, w, run->opts, &run->hashes, run->chunk_hashes);
        if (peer.out != NULL && !peer.failed)
            repeat_libbloom(&peer, rep, w, run->opts);
    }
    for (size_t k = 0; k < kind_count; k++)
        finish_kind(&kinds[k], w);
    if (peer.out != NULL)
        finish_libbloom(&peer, w);
    for (size_t i = 0; i < b->count; i++) {
        const subject *s = subjects[i];
        row *r = &b->rows[i];
        if (r->bytes != 0)
            r->limits = limits_for(run->limits, r->bytes, s->no_hugepage, run->opts->reps);
        else
            r->limits = (memory_limits){ .dependent_ns = NAN, .independent_ns = NAN,
                                         .keyed_ns = { NAN, NAN }, .huge_mb = NAN };
        if (!r->ok) {
            bench_progress("%s: %s", r->name, r->note);
            run->exit_code = 1;
        }
    }
    print_block(b);
    csv_block(run->csv, b);
}

static int measure_key_type(run_state *run, key_type type)
{
    const options *opts = run->opts;
    uint64_t max_n = opts->sizes[opts->size_count - 1];
    size_t max_sample = max_n < opts->queries ? (size_t)max_n : opts->queries;
    key_set present, absent;
    bench_progress("generating %llu present and %zu absent %s keys", (unsigned long long)max_n,
                   opts->absent, key_type_name(type));
    if (key_set_generate(&present, type, 0, (size_t)max_n) != 0)
        return -1;
    if (key_set_generate(&absent, type, ABSENT_FIRST_INDEX, opts->absent) != 0) {
        key_set_free(&present);
        return -1;
    }
    run->hashes.sample = bench_alloc_array((max_sample + 1) * sizeof(bk_hash));
    size_t absent_timed = opts->absent < opts->queries ? opts->absent : opts->queries;
    run->hashes.absent = bench_alloc_array((absent_timed + 1) * sizeof(bk_hash));
    int result = run->hashes.sample && run->hashes.absent ? 0 : -1;
    for (size_t i = 0; i < opts->size_count && result == 0; i++) {
        workload w;
        memset(&w, 0, sizeof w);
        w.type = type;
        w.n = opts->sizes[i];
        w.present = present;
        w.present.count = (size_t)w.n;
        w.absent = absent;
        w.absent_timed = absent;
        w.absent_timed.count = absent_timed;
        size_t sample = w.n < opts->queries ? (size_t)w.n : opts->queries;
        if (key_set_sample(&w.sample, &w.present, sample) != 0) {
            result = -1;
            break;
        }
        measure_workload(run, &w);
        key_set_free(&w.sample);
    }
    free(run->hashes.sample);
    free(run->hashes.absent);
    run->hashes.sample = run->hashes.absent = NULL;
    key_set_free(&present);
    key_set_free(&absent);
    return result;
}

/*
 * Designing a filter: microseconds per bk_filter_create for 1,000 keys at
 * the run's FPR, each dynamic kind (its sizing search and a small
 * allocation, freed at once), the median of 7 passes of 101 creates.  A
 * storage engine makes a filter per file; this is what the design costs
 * apart from the memory.  Printed once per run, and in the CSV as
 * keytype "none", n 1000, metric create_us.
 */
#define DESIGN_KEYS 1000
#define DESIGN_CREATES 101
#define DESIGN_PASSES 7

static double design_us(const subject *s, double fpr)
{
    double pass_us[DESIGN_PASSES];
    for (int pass = 0; pass < DESIGN_PASSES; pass++) {
        uint64_t begin = bench_now_ns();
        for (int i = 0; i < DESIGN_CREATES; i++) {
            bk_params params = params_for(s, DESIGN_KEYS + (uint64_t)i, fpr);
            bk_filter *filter = NULL;
            if (bk_filter_create(s->kind, &params, &filter) != BK_OK)
                return NAN;
            bk_filter_free(filter);
        }
        pass_us[pass] = (double)(bench_now_ns() - begin) / 1e3 / DESIGN_CREATES;
    }
    return bench_median(pass_us, DESIGN_PASSES);
}

static void report_design_times(const run_state *run)
{
    printf("design: us per create for %d keys at FPR %g:", DESIGN_KEYS, run->opts->fpr);
    for (size_t i = 0; i < run->subject_count; i++) {
        const subject *s = &run->subjects[i];
        if (s->is_libbloom || s->no_hugepage || bk_kind_is_static(s->kind))
            continue;
        double us = design_us(s, run->opts->fpr);
        printf(" %s %.1f", s->name, us);
        if (run->csv != NULL && !isnan(us))
            fprintf(run->csv, "none,%d,%s,create_us,%.6g\n", DESIGN_KEYS, s->name, us);
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    options opts;
    if (parse_options(argc, argv, &opts) != 0)
        return 2;
    no_hugepage_everywhere = getenv("BLOOMKIT_NO_HUGEPAGE") != NULL;
    if (!pin_to_cpu(&opts))
        return 2;
    lock_memory(&opts);
    subject subjects[MAX_SUBJECTS];
    size_t subject_count;
    if (choose_subjects(&opts, subjects, &subject_count) != 0)
        return 2;
    qsort(opts.sizes, opts.size_count, sizeof opts.sizes[0], compare_sizes);
    run_state run;
    memset(&run, 0, sizeof run);
    run.opts = &opts;
    run.subjects = subjects;
    run.subject_count = subject_count;
    if (opts.csv_path != NULL && (run.csv = fopen(opts.csv_path, "w")) == NULL) {
        fprintf(stderr, "bloomkit-bench: cannot write %s: %s\n", opts.csv_path, strerror(errno));
        return 2;
    }
    run.blocks = calloc(KEY_TYPE_COUNT * opts.size_count, sizeof *run.blocks);
    run.limits = calloc(1, sizeof *run.limits);
    run.chunk_hashes = malloc(INSERT_CHUNK * sizeof *run.chunk_hashes);
    if (run.blocks == NULL || run.limits == NULL || run.chunk_hashes == NULL) {
        fprintf(stderr, "bloomkit-bench: out of memory\n");
        return 2;
    }
    describe_run(&opts, run.csv);
    printf("kinds:");
    for (size_t i = 0; i < subject_count; i++)
        printf(" %s", subjects[i].name);
    printf("\n");
    report_design_times(&run);
    uint64_t begin = bench_now_ns();
    for (int t = 0; t < KEY_TYPE_COUNT; t++) {
        if (opts.key_types[t] && measure_key_type(&run, (key_type)t) != 0) {
            fprintf(stderr, "bloomkit-bench: out of memory generating keys\n");
            run.exit_code = 2;
            break;
        }
    }
    print_summary(run.blocks, run.block_count);
    char peak[64];
    read_first_match("/proc/self/status", "VmHWM", peak, sizeof peak);
    printf("\nwall time: %.1f s; peak memory: %s\n", (double)(bench_now_ns() - begin) / 1e9, peak);
    if (run.csv != NULL)
        fclose(run.csv);
    free(run.blocks);
    free(run.limits);
    free(run.chunk_hashes);
    return run.exit_code;
}
