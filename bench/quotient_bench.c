/*
 * bench/quotient_bench.c -- the quotient filter beside the cuckoo filter,
 * the two deletable fingerprint filters, in one run (docs/PERFORMANCE.md,
 * "The quotient filter").
 *
 * For each table of 2^20, 2^24 and 2^26 slots, filled to 90% and 95%, at
 * about 1% and 0.1% FPR, both kinds get the same slot count and load:
 *
 *   quotient  2^q home slots, r = ceil(log2(load / p)) remainder bits
 *   cuckoo    2^q / 4 buckets of the narrowest fingerprint (8, 12, 16
 *             bits) whose FPR at that load is at most p
 *
 * and are filled with random 8-byte keys (splitmix64 of an index; absent
 * keys from another range), through the generic handle:
 *
 *   insert        bk_filter_add, one key per call
 *   insert batch  bk_filter_add_packed, 1024 keys per call (a second fill)
 *   present, absent
 *                 bk_filter_contains one key per call, and
 *                 bk_filter_contains_packed 1024 keys per call
 *
 * each reported in ns per key: the median over slices of 4096 keys (on a
 * shared machine a slice during which the process was preempted is an
 * outlier the median ignores), with bits per key and the measured FPR.  Then, on 2^24 home slots: merge of two
 * filters each holding 45% (bk_quotient_merge) against adding both key
 * sets to a new filter, and resize 2^24 -> 2^25 of a 90% full filter
 * (bk_quotient_resize) against adding its keys to a 2^25 filter, in ns
 * per stored fingerprint, in wall-clock time and in the process's CPU
 * time (the re-inserts' CPU time per key over the whole fill).
 *
 *     quotient-bench [--quick] [--sizes 20,24,26] [--hashed] [--no-cuckoo]
 *                    [--no-rebuilds] [--cqf LIBRARY] [--vqf LIBRARY]...
 *
 * --quick: 2^16 and 2^18 slots and the rebuilds at 2^18 (the smoke test).
 * --hashed: a row `qf-hash` after ours, one key per call from hashes
 * computed before each slice is timed (bk_filter_add_hash,
 * bk_filter_contains_hash): the one-key paths without the key's hash
 * (XXH3-128), which the VQF, taking the key as its hash, does not pay.
 * --no-cuckoo, --no-rebuilds: leave out the cuckoo rows, the merge and
 * resize lines (for a quicker run of the one-key comparison).
 * --cqf: a shared library the user built from the authors' counting
 * quotient filter (github.com/splatlab/cqf; nothing of it is in bloomkit),
 * loaded with dlopen: qf_malloc (then qf_reset, since qf_malloc leaves the
 * table uninitialised), qf_insert, qf_count_key_value,
 * qf_get_total_size_in_bytes and qf_free are timed on the same keys,
 * table size (2^q slots) and remainder width (key bits q + r), one key per
 * call (it has no batch calls).
 * --vqf (up to twice): a shared library the user built from the authors'
 * vector quotient filter (github.com/splatlab/vqf; its tag width, 8 or 16
 * bits, is fixed when it is built, so one library per width), loaded the
 * same way: vqf_init, vqf_insert and vqf_is_present on the same keys
 * (which are already random 64-bit words, its expected input) and slot
 * count, one key per call; a refused insert (a full block: it has no
 * overflow) is counted and shown, not fatal.  Peers' rows follow ours for
 * each table, in the same process, so that a busy machine slows both.
 */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bloomkit.h"

#define BATCH 1024
#define SLICE 4096
#define ABSENT_BASE 0x4000000000000000ULL

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The process's CPU time: what a one-shot merge or resize costs on a
 * shared machine, where its wall-clock time also counts the time slices
 * other processes took (the sliced medians skip those). */
static uint64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t key_of(uint64_t i)
{
    uint64_t z = i + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Per-slice times of one pass, and their median. */
typedef struct slices {
    double *ns_per_key;
    size_t count;
} slices;

static slices slices_for(uint64_t keys)
{
    slices t = { malloc(((size_t)(keys / SLICE) + 2) * sizeof(double)), 0 };
    if (t.ns_per_key == NULL) {
        fprintf(stderr, "quotient-bench: out of memory\n");
        exit(2);
    }
    return t;
}

static double slices_median(slices *t)
{
    qsort(t->ns_per_key, t->count, sizeof(double), compare_doubles);
    double median = t->count ? t->ns_per_key[t->count / 2] : NAN;
    free(t->ns_per_key);
    return median;
}

static void die(const char *what, bk_status status)
{
    fprintf(stderr, "quotient-bench: %s: %s\n", what, bk_strerror(status));
    exit(2);
}

typedef struct spec {
    unsigned log2_slots;
    double load;
    double fpr;
} spec;

static bk_filter *make(bk_kind kind, const spec *s)
{
    uint64_t slots = (uint64_t)1 << s->log2_slots;
    /* the capacity that gives 2^log2_slots home slots, whatever the load */
    bk_params p = { .capacity = (uint64_t)(0.95 * (double)slots) };
    if (kind == BK_KIND_QUOTIENT) {
        p.remainder_bits = (unsigned)ceil(log2(s->load / s->fpr));
    } else {
        const unsigned widths[] = { 8, 12, 16 };
        p.fingerprint_bits = 16;
        for (int i = 2; i >= 0; i--)
            if (-expm1(8 * s->load * log1p(-1.0 / (ldexp(1.0, (int)widths[i]) - 1))) <= s->fpr)
                p.fingerprint_bits = widths[i];
        p.bits = slots * p.fingerprint_bits;
    }
    bk_filter *f = NULL;
    bk_status status = bk_filter_create(kind, &p, &f);
    if (status != BK_OK)
        die("create", status);
    bk_quotient_info info;
    if (bk_quotient_get_info(f, &info) == BK_OK && info.log2_slots != s->log2_slots)
        die("create: not the slots asked for", BK_ERANGE);
    return f;
}

/* ns per key (median slice) of adding keys [from, to), one per call or in
 * batches. */
static double fill(bk_filter *f, uint64_t from, uint64_t to, bool batched)
{
    static uint64_t packed[BATCH];
    slices t = slices_for(to - from);
    for (uint64_t slice = from; slice < to; slice += SLICE) {
        uint64_t end = to - slice < SLICE ? to : slice + SLICE;
        uint64_t begin = now_ns();
        if (batched) {
            for (uint64_t i = slice; i < end; i += BATCH) {
                size_t n = end - i < BATCH ? (size_t)(end - i) : BATCH;
                for (size_t j = 0; j < n; j++)
                    packed[j] = key_of(i + j);
                bk_status status = bk_filter_add_packed(f, packed, 8, n, NULL);
                if (status != BK_OK)
                    die("add_packed", status);
            }
        } else {
            for (uint64_t i = slice; i < end; i++) {
                uint64_t key = key_of(i);
                bk_status status = bk_filter_add(f, &key, 8, NULL);
                if (status != BK_OK)
                    die("add", status);
            }
        }
        t.ns_per_key[t.count++] = (double)(now_ns() - begin) / (double)(end - slice);
    }
    return slices_median(&t);
}

/* ns per key (median slice) of querying keys [from, to); *hits gets how
 * many were found. */
static double query(const bk_filter *f, uint64_t from, uint64_t to, bool batched, uint64_t *hits)
{
    static uint64_t packed[BATCH];
    static bool results[BATCH];
    uint64_t found = 0;
    slices t = slices_for(to - from);
    for (uint64_t slice = from; slice < to; slice += SLICE) {
        uint64_t end = to - slice < SLICE ? to : slice + SLICE;
        uint64_t begin = now_ns();
        if (batched) {
            for (uint64_t i = slice; i < end; i += BATCH) {
                size_t n = end - i < BATCH ? (size_t)(end - i) : BATCH;
                for (size_t j = 0; j < n; j++)
                    packed[j] = key_of(i + j);
                found += bk_filter_contains_packed(f, packed, 8, n, results);
            }
        } else {
            for (uint64_t i = slice; i < end; i++) {
                uint64_t key = key_of(i);
                found += bk_filter_contains(f, &key, 8);
            }
        }
        t.ns_per_key[t.count++] = (double)(now_ns() - begin) / (double)(end - slice);
    }
    *hits = found;
    return slices_median(&t);
}

/* ns per key (median slice) of one-key calls from hashes computed before
 * each slice is timed: bk_filter_add_hash of keys [from, to) when
 * `insert`, else bk_filter_contains_hash (*hits gets those found) -- the
 * one-key paths without the key's hash. */
static double hashed_pass(bk_filter *f, uint64_t from, uint64_t to, bool insert, uint64_t *hits)
{
    static bk_hash hashes[SLICE];
    uint64_t found = 0;
    slices t = slices_for(to - from);
    for (uint64_t slice = from; slice < to; slice += SLICE) {
        uint64_t end = to - slice < SLICE ? to : slice + SLICE;
        for (uint64_t i = slice; i < end; i++) {
            uint64_t key = key_of(i);
            hashes[i - slice] = bk_filter_hash(f, &key, 8);
        }
        uint64_t begin = now_ns();
        if (insert) {
            for (uint64_t i = slice; i < end; i++) {
                bk_status status = bk_filter_add_hash(f, hashes[i - slice], NULL);
                if (status != BK_OK)
                    die("add_hash", status);
            }
        } else {
            for (uint64_t i = slice; i < end; i++)
                found += bk_filter_contains_hash(f, hashes[i - slice]);
        }
        t.ns_per_key[t.count++] = (double)(now_ns() - begin) / (double)(end - slice);
    }
    *hits = found;
    return slices_median(&t);
}

/* The row `qf-hash`: one key per call from precomputed hashes. */
static void run_hashed(const spec *s)
{
    uint64_t keys = (uint64_t)(s->load * (double)((uint64_t)1 << s->log2_slots));
    uint64_t probes = keys < 4000000 ? keys : 4000000;
    bk_filter *f = make(BK_KIND_QUOTIENT, s);
    uint64_t hits;
    double insert = hashed_pass(f, 0, keys, true, &hits);
    double present = hashed_pass(f, 0, probes, false, &hits);
    if (hits != probes) {
        fprintf(stderr, "quotient-bench: quotient lost keys\n");
        exit(1);
    }
    double absent = hashed_pass(f, ABSENT_BASE, ABSENT_BASE + probes, false, &hits);
    bk_stats st;
    bk_filter_stats(f, &st);
    printf("2^%-2u %4.0f%% %6.3f%%  %-8s %2u %6.2f %8.4f%% %8.1f %8s %8.1f %8s %8.1f %8s\n",
           s->log2_slots, 100 * s->load, 100 * s->fpr, "qf-hash", st.fingerprint_bits,
           (double)st.bits / (double)keys, 100.0 * (double)hits / (double)probes, insert, "-",
           present, "-", absent, "-");
    fflush(stdout);
    bk_filter_free(f);
}

/* The peer's calls (github.com/splatlab/cqf, include/gqf.h), when loaded. */
typedef struct cqf_api {
    bool (*create)(void *qf, uint64_t nslots, uint64_t key_bits, uint64_t value_bits,
                   int hash_mode, uint32_t seed);
    void (*reset)(void *qf);
    int (*insert)(void *qf, uint64_t key, uint64_t value, uint64_t count, uint8_t flags);
    uint64_t (*count)(const void *qf, uint64_t key, uint64_t value, uint8_t flags);
    uint64_t (*size)(const void *qf);
    bool (*destroy)(void *qf);
} cqf_api;

static cqf_api cqf;
static bool cqf_loaded;

#define CQF_NO_LOCK 0x01
#define CQF_HANDLE_BYTES 64 /* its QF: three pointers */

static void *symbol(void *library, const char *name)
{
    void *address = dlsym(library, name);
    if (address == NULL) {
        fprintf(stderr, "quotient-bench: the library has no %s\n", name);
        exit(2);
    }
    return address;
}

static void load_cqf(const char *path)
{
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "quotient-bench: --cqf: %s\n", dlerror());
        exit(2);
    }
    *(void **)&cqf.create = symbol(library, "qf_malloc");
    *(void **)&cqf.reset = symbol(library, "qf_reset");
    *(void **)&cqf.insert = symbol(library, "qf_insert");
    *(void **)&cqf.count = symbol(library, "qf_count_key_value");
    *(void **)&cqf.size = symbol(library, "qf_get_total_size_in_bytes");
    *(void **)&cqf.destroy = symbol(library, "qf_free");
    cqf_loaded = true;
}

/* ns per key (median slice) of the peer's inserts or queries of [from, to). */
static double cqf_pass(void *qf, uint64_t from, uint64_t to, bool insert, uint64_t *hits)
{
    uint64_t found = 0;
    slices t = slices_for(to - from);
    for (uint64_t slice = from; slice < to; slice += SLICE) {
        uint64_t end = to - slice < SLICE ? to : slice + SLICE;
        uint64_t begin = now_ns();
        for (uint64_t i = slice; i < end; i++) {
            if (insert) {
                if (cqf.insert(qf, key_of(i), 0, 1, CQF_NO_LOCK) < 0) {
                    fprintf(stderr, "quotient-bench: the CQF is full\n");
                    exit(1);
                }
            } else {
                found += cqf.count(qf, key_of(i), 0, 0) != 0;
            }
        }
        t.ns_per_key[t.count++] = (double)(now_ns() - begin) / (double)(end - slice);
    }
    *hits = found;
    return slices_median(&t);
}

/* The vector quotient filter's calls (github.com/splatlab/vqf,
 * include/vqf_filter.h), one library per tag width. */
typedef struct vqf_api {
    void *(*create)(uint64_t nslots);
    bool (*insert)(void *filter, uint64_t hash);
    bool (*contains)(void *filter, uint64_t hash);
} vqf_api;

/* The head of its filter: total_size_in_bytes, key_remainder_bits, ... */
typedef struct vqf_head {
    uint64_t total_bytes;
    uint64_t tag_bits;
} vqf_head;

#define MAX_VQF 2
static vqf_api vqf[MAX_VQF];
static size_t vqf_count;

static void load_vqf(const char *path)
{
    if (vqf_count == MAX_VQF) {
        fprintf(stderr, "quotient-bench: --vqf at most %d times\n", MAX_VQF);
        exit(2);
    }
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "quotient-bench: --vqf: %s\n", dlerror());
        exit(2);
    }
    vqf_api *v = &vqf[vqf_count++];
    *(void **)&v->create = symbol(library, "vqf_init");
    *(void **)&v->insert = symbol(library, "vqf_insert");
    *(void **)&v->contains = symbol(library, "vqf_is_present");
}

/* ns per key (median slice) of a VQF's inserts or queries of [from, to);
 * *hits gets the queries found, or the inserts refused. */
static double vqf_pass(const vqf_api *v, void *filter, uint64_t from, uint64_t to, bool insert,
                       uint64_t *hits)
{
    uint64_t counted = 0;
    slices t = slices_for(to - from);
    for (uint64_t slice = from; slice < to; slice += SLICE) {
        uint64_t end = to - slice < SLICE ? to : slice + SLICE;
        uint64_t begin = now_ns();
        if (insert)
            for (uint64_t i = slice; i < end; i++)
                counted += !v->insert(filter, key_of(i));
        else
            for (uint64_t i = slice; i < end; i++)
                counted += v->contains(filter, key_of(i));
        t.ns_per_key[t.count++] = (double)(now_ns() - begin) / (double)(end - slice);
    }
    *hits = counted;
    return slices_median(&t);
}

/* Sends standard output and error to /dev/null while a peer prints its
 * own messages (the VQF prints its size, and a message per refused
 * insert); saved[] gets the descriptors to give back to quiet_end. */
static void quiet_begin(int saved[2])
{
    fflush(stdout);
    fflush(stderr);
    int null = open("/dev/null", O_WRONLY);
    for (int fd = 0; fd < 2; fd++) {
        saved[fd] = dup(STDOUT_FILENO + fd);
        if (saved[fd] >= 0 && null >= 0)
            dup2(null, STDOUT_FILENO + fd);
    }
    if (null >= 0)
        close(null);
}

static void quiet_end(const int saved[2])
{
    fflush(stdout);
    fflush(stderr);
    for (int fd = 0; fd < 2; fd++)
        if (saved[fd] >= 0) {
            dup2(saved[fd], STDOUT_FILENO + fd);
            close(saved[fd]);
        }
}

/* A VQF of 2^log2_slots slots on the same keys: its row (its FPR is its
 * tag width's, shown measured; refused inserts after the kind's name). */
static void run_vqf(const vqf_api *v, const spec *s)
{
    uint64_t slots = (uint64_t)1 << s->log2_slots;
    uint64_t keys = (uint64_t)(s->load * (double)slots);
    uint64_t probes = keys < 4000000 ? keys : 4000000;
    int saved[2];
    quiet_begin(saved);
    void *filter = v->create(slots);
    if (filter == NULL) {
        quiet_end(saved);
        fprintf(stderr, "quotient-bench: vqf_init failed\n");
        exit(2);
    }
    const vqf_head *head = filter;
    uint64_t refused, hits, found;
    double insert = vqf_pass(v, filter, 0, keys, true, &refused);
    quiet_end(saved);
    double present = vqf_pass(v, filter, 0, probes, false, &found);
    if (found + refused < probes) {
        fprintf(stderr, "quotient-bench: the VQF lost keys\n");
        exit(1);
    }
    double absent = vqf_pass(v, filter, ABSENT_BASE, ABSENT_BASE + probes, false, &hits);
    char name[32];
    snprintf(name, sizeof name, "VQF%u%s", (unsigned)head->tag_bits, refused ? "!" : "");
    printf("2^%-2u %4.0f%% %6.3f%%  %-8s %2u %6.2f %8.4f%% %8.1f %8s %8.1f %8s %8.1f %8s",
           s->log2_slots, 100 * s->load, 100 * s->fpr, name, (unsigned)head->tag_bits,
           8.0 * (double)head->total_bytes / (double)keys, 100.0 * (double)hits / (double)probes,
           insert, "-", present, "-", absent, "-");
    if (refused)
        printf("  (! %llu inserts refused)", (unsigned long long)refused);
    printf("\n");
    fflush(stdout);
    free(filter);
}

/* The peer on the same keys, slots and remainder width. */
static void run_cqf(const spec *s, unsigned remainder_bits)
{
    uint64_t slots = (uint64_t)1 << s->log2_slots;
    uint64_t keys = (uint64_t)(s->load * (double)slots);
    uint64_t probes = keys < 4000000 ? keys : 4000000;
    void *qf = calloc(1, CQF_HANDLE_BYTES);
    if (qf == NULL || !cqf.create(qf, slots, s->log2_slots + remainder_bits, 0, 0, 0)) {
        fprintf(stderr, "quotient-bench: qf_malloc failed\n");
        exit(2);
    }
    cqf.reset(qf);
    uint64_t hits;
    double insert = cqf_pass(qf, 0, keys, true, &hits);
    double present = cqf_pass(qf, 0, probes, false, &hits);
    if (hits != probes) {
        fprintf(stderr, "quotient-bench: the CQF lost keys\n");
        exit(1);
    }
    double absent = cqf_pass(qf, ABSENT_BASE, ABSENT_BASE + probes, false, &hits);
    printf("2^%-2u %4.0f%% %6.3f%%  %-8s %2u %6.2f %8.4f%% %8.1f %8s %8.1f %8s %8.1f %8s\n",
           s->log2_slots, 100 * s->load, 100 * s->fpr, "CQF", remainder_bits,
           8.0 * (double)cqf.size(qf) / (double)keys, 100.0 * (double)hits / (double)probes,
           insert, "-", present, "-", absent, "-");
    fflush(stdout);
    cqf.destroy(qf);
    free(qf);
}

static bool with_cuckoo = true, with_hashed = false, with_rebuilds = true;

static void run_spec(const spec *s)
{
    const bk_kind kinds[] = { BK_KIND_QUOTIENT, BK_KIND_CUCKOO };
    uint64_t keys = (uint64_t)(s->load * (double)((uint64_t)1 << s->log2_slots));
    uint64_t probes = keys < 4000000 ? keys : 4000000;
    for (int k = 0; k < (with_cuckoo ? 2 : 1); k++) {
        bk_filter *f = make(kinds[k], s);
        double insert = fill(f, 0, keys, false);
        bk_filter *g = make(kinds[k], s);
        double insert_batch = fill(g, 0, keys, true);
        bk_filter_free(g);
        uint64_t hits;
        double present = query(f, 0, probes, false, &hits);
        if (hits != probes) {
            fprintf(stderr, "quotient-bench: %s lost keys\n", bk_kind_name(kinds[k]));
            exit(1);
        }
        double present_batch = query(f, 0, probes, true, &hits);
        double absent = query(f, ABSENT_BASE, ABSENT_BASE + probes, false, &hits);
        double absent_batch = query(f, ABSENT_BASE, ABSENT_BASE + probes, true, &hits);
        bk_stats st;
        bk_filter_stats(f, &st);
        printf("2^%-2u %4.0f%% %6.3f%%  %-8s %2u %6.2f %8.4f%% %8.1f %8.1f %8.1f %8.1f %8.1f "
               "%8.1f\n",
               s->log2_slots, 100 * s->load, 100 * s->fpr, bk_kind_name(kinds[k]),
               st.fingerprint_bits, (double)st.bits / (double)keys,
               100.0 * (double)hits / (double)probes, insert, insert_batch, present,
               present_batch, absent, absent_batch);
        fflush(stdout);
        bk_filter_free(f);
        if (kinds[k] == BK_KIND_QUOTIENT && with_hashed)
            run_hashed(s);
        if (kinds[k] == BK_KIND_QUOTIENT && cqf_loaded)
            run_cqf(s, st.fingerprint_bits);
        for (size_t v = 0; kinds[k] == BK_KIND_QUOTIENT && v < vqf_count; v++)
            run_vqf(&vqf[v], s);
    }
}

/* Merge and resize against re-inserting, on 2^log2_slots home slots. */
static void run_rebuilds(unsigned log2_slots)
{
    spec half = { log2_slots, 0.45, 0.01 };
    uint64_t keys = (uint64_t)(0.45 * (double)((uint64_t)1 << log2_slots));
    bk_filter *a = make(BK_KIND_QUOTIENT, &half);
    bk_filter *b = make(BK_KIND_QUOTIENT, &half);
    fill(a, 0, keys, true);
    fill(b, keys, 2 * keys, true);
    bk_filter *merged = NULL;
    uint64_t begin = now_ns(), begin_cpu = cpu_ns();
    bk_status status = bk_quotient_merge(a, b, &merged);
    double merge_ns = (double)(now_ns() - begin), merge_cpu = (double)(cpu_ns() - begin_cpu);
    if (status != BK_OK)
        die("merge", status);
    bk_quotient_info info;
    bk_quotient_get_info(merged, &info);
    spec full = { log2_slots, 0.90, 0.01 };
    bk_filter *again = make(BK_KIND_QUOTIENT, &full);
    begin_cpu = cpu_ns();
    double reinsert = fill(again, 0, 2 * keys, true);
    double reinsert_cpu = (double)(cpu_ns() - begin_cpu) / (double)(2 * keys);
    printf("merge  2 x 2^%u slots at 45%%: %.2f ns per fingerprint (%llu fingerprints, into "
           "2^%u slots); re-inserting the keys: %.2f ns per key; CPU time: %.2f against %.2f\n",
           log2_slots, merge_ns / (double)info.fingerprints,
           (unsigned long long)info.fingerprints, info.log2_slots, reinsert,
           merge_cpu / (double)info.fingerprints, reinsert_cpu);

    begin = now_ns();
    begin_cpu = cpu_ns();
    status = bk_quotient_resize(again, log2_slots + 1);
    double resize_ns = (double)(now_ns() - begin), resize_cpu = (double)(cpu_ns() - begin_cpu);
    if (status != BK_OK)
        die("resize", status);
    bk_quotient_get_info(again, &info);
    spec bigger = { log2_slots + 1, 0.45, 0.01 };
    bk_filter *fresh = make(BK_KIND_QUOTIENT, &bigger);
    begin_cpu = cpu_ns();
    double reinsert_bigger = fill(fresh, 0, 2 * keys, true);
    double reinsert_bigger_cpu = (double)(cpu_ns() - begin_cpu) / (double)(2 * keys);
    printf("resize 2^%u -> 2^%u slots at 90%%: %.2f ns per fingerprint; re-inserting the keys: "
           "%.2f ns per key; CPU time: %.2f against %.2f\n",
           log2_slots, log2_slots + 1, resize_ns / (double)info.fingerprints, reinsert_bigger,
           resize_cpu / (double)info.fingerprints, reinsert_bigger_cpu);
    uint64_t hits;
    query(again, 0, 2 * keys, true, &hits);
    if (hits != 2 * keys) {
        fprintf(stderr, "quotient-bench: resize lost keys\n");
        exit(1);
    }
    bk_filter_free(fresh);
    bk_filter_free(again);
    bk_filter_free(merged);
    bk_filter_free(a);
    bk_filter_free(b);
}

int main(int argc, char **argv)
{
    unsigned sizes[8] = { 20, 24, 26 };
    size_t size_count = 3;
    unsigned rebuild_size = 24;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            sizes[0] = 16;
            sizes[1] = 18;
            size_count = 2;
            rebuild_size = 18;
        } else if (strcmp(argv[i], "--no-cuckoo") == 0) {
            with_cuckoo = false;
        } else if (strcmp(argv[i], "--no-rebuilds") == 0) {
            with_rebuilds = false;
        } else if (strcmp(argv[i], "--hashed") == 0) {
            with_hashed = true;
        } else if (strcmp(argv[i], "--cqf") == 0 && i + 1 < argc) {
            load_cqf(argv[++i]);
        } else if (strcmp(argv[i], "--vqf") == 0 && i + 1 < argc) {
            load_vqf(argv[++i]);
        } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            size_count = 0;
            for (char *p = argv[++i]; *p != '\0' && size_count < 8;) {
                char *end;
                unsigned long v = strtoul(p, &end, 10);
                if (end == p || v < 10 || v > 30) {
                    fprintf(stderr,
                            "quotient-bench: --sizes takes log2 slot counts, 10 to 30\n");
                    return 2;
                }
                sizes[size_count++] = (unsigned)v;
                p = *end == ',' ? end + 1 : end;
            }
        } else {
            fprintf(stderr,
                    "usage: quotient-bench [--quick] [--sizes 20,24,26] [--hashed] "
                    "[--no-cuckoo] [--no-rebuilds] [--cqf LIBRARY] [--vqf LIBRARY]...\n");
            return 2;
        }
    }
    printf("slots load  target   kind      f  bits/key     FPR   insert  ins.bat  present "
           "pres.bat   absent  abs.bat   (ns per key)\n");
    const double loads[] = { 0.90, 0.95 };
    const double fprs[] = { 0.01, 0.001 };
    for (size_t z = 0; z < size_count; z++)
        for (int l = 0; l < 2; l++)
            for (int p = 0; p < 2; p++) {
                spec s = { sizes[z], loads[l], fprs[p] };
                run_spec(&s);
            }
    if (with_rebuilds)
        run_rebuilds(rebuild_size);
    return 0;
}
