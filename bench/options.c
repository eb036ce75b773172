/*
 * bench/options.c -- bloomkit-bench's command line (the usage text below
 * is the reference; docs/PERFORMANCE.md, "Running it", has the same in a
 * table) and the subjects it names.
 *
 * Kinds are found at run time: every kind bk_kind_list gives is measured,
 * so a kind added to the library appears in the next run without a change
 * here.
 */
#define _GNU_SOURCE /* CPU_SETSIZE */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

static void usage(FILE *out)
{
    fputs("usage: bloomkit-bench [options]\n"
          "  --quick           smoke run: n = 1e5, 1 repetition, 1e6 absent keys\n"
          "  --sizes LIST      key counts, e.g. 1e6,1e7,1e8 (default)\n"
          "  --keys LIST       key types: int64,str16 (default both)\n"
          "  --kinds LIST      kinds to run (default every kind in this build, the\n"
          "                    :4k variants of bloom and blocked, and libbloom);\n"
          "                    a kind name, NAME:4k (no huge pages), libbloom, or\n"
          "                    counting:classic (the counting kind's classic layout)\n"
          "  --reps N          repetitions of the query passes, the median is reported\n"
          "                    (default 3); the filter is built once\n"
          "  --rebuild         rebuild (and refill) the filter for every repetition\n"
          "  --fpr P           target false-positive rate (default 0.01)\n"
          "  --absent N        absent keys: the FPR and the batch time are measured\n"
          "                    over all of them (default 10000000)\n"
          "  --queries N       keys per timed pass: present keys (at most n) and the\n"
          "                    absent keys of the one-at-a-time passes (default 4000000)\n"
          "  --csv FILE        write every figure to FILE (long-form CSV), which\n"
          "                    scripts/bench-targets.sh holds against the speed targets\n"
          "  --cpu N           run on CPU N (default: the CPU the run starts on)\n"
          "  --no-pin          let the scheduler move the run between CPUs\n"
          "  --no-mlock        leave memory unlocked (by default every page is locked as\n"
          "                    it is first touched, so memory reclaim such as DAMON's\n"
          "                    pageout cannot evict a filter in the middle of a run)\n"
          "  --hash NAME       the filters' hash: xxh3 (default), xxh64 or mix64 (the\n"
          "                    integer mixer; int64 keys are 8 bytes, so it mixes them)\n"
          "  --hash-cost       only measure one 8-byte key's hash under xxh3, mix64 and\n"
          "                    xxh64 side by side (inline, called, packed, latency)\n"
          "  --help            this text\n"
          "Environment: BLOOMKIT_NO_HUGEPAGE=1 turns off the huge page hint\n"
          "everywhere; BLOOMKIT_PORTABLE=1 forces the portable (non-SIMD) paths.\n"
          "After each block, a one-key table times bloom, blocked, sbbf, counting\n"
          "and fuse8 one key per call and through the inline views built at -O2\n"
          "and at -march=native (kinds that have one), beside the peers this build\n"
          "has (the header's peers line).\n"
          "Peers are compiled in from checkouts named when configuring:\n"
          "  cmake -DBLOOMKIT_PEER_ROCKSDB=DIR -DBLOOMKIT_PEER_FASTFILTER_CPP=DIR\n"
          "        -DBLOOMKIT_PEER_XOR_SINGLEHEADER=DIR ...   (docs/PERFORMANCE.md)\n",
          out);
}

bk_hash_algorithm bench_hash_algorithm = BK_HASH_XXH3;

/* --hash NAME: an algorithm that needs no secret key. */
static bool parse_hash(const char *name)
{
    const bk_hash_algorithm choices[] = { BK_HASH_XXH3, BK_HASH_XXH64, BK_HASH_MIX64 };
    for (size_t i = 0; i < sizeof choices / sizeof choices[0]; i++) {
        if (strcmp(name, bk_hash_algorithm_name(choices[i])) == 0) {
            bench_hash_algorithm = choices[i];
            return true;
        }
    }
    return false;
}

/* A key count such as 1e6 or 4000000: a whole number from 1 to 1e12. */
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

/* take_*: one item of --sizes, --keys or --kinds into *opts; false if bad. */
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

static int compare_sizes(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int parse_options(int argc, char **argv, options *opts)
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
        uint64_t number = 0;
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
        } else if (strcmp(arg, "--hash-cost") == 0) {
            opts->hash_cost = true;
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
        } else if (strcmp(arg, "--hash") == 0) {
            ok = parse_hash(value);
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
    qsort(opts->sizes, opts->size_count, sizeof opts->sizes[0], compare_sizes);
    return 0;
}

/* A kind of this build by its name. */
static bool kind_by_name(const char *name, bk_kind *out)
{
    return bk_kind_from_name(name, out) == BK_OK && bk_kind_available(*out);
}

/* Appends a subject (up to MAX_SUBJECTS). */
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

int choose_subjects(const options *opts, subject *subjects, size_t *count)
{
    *count = 0;
    if (opts->kind_count == 0) {
        bk_kind kinds[MAX_SUBJECTS];
        size_t kind_count = bk_kind_list(kinds, MAX_SUBJECTS);
        for (size_t i = 0; i < kind_count && i < MAX_SUBJECTS; i++)
            add_subject(subjects, count, bk_kind_name(kinds[i]), kinds[i], false, false);
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
        if (strcmp(name, "counting:classic") == 0)
            name[strlen("counting")] = '\0'; /* the classic layout (flags below) */
        bk_kind kind;
        if (!kind_by_name(name, &kind)) {
            fprintf(stderr, "bloomkit-bench: kind '%s' is not in this build\n", name);
            return -1;
        }
        add_subject(subjects, count, opts->kinds[i], kind, false, no_hugepage);
        if (strcmp(opts->kinds[i], "counting:classic") == 0)
            subjects[*count - 1].flags = BK_FLAG_COUNTING_CLASSIC;
    }
    return 0;
}
