/*
 * bench/run.h -- the parts of bloomkit-bench's program (bench/main.c):
 *
 *   options.c   the command line, and the subjects it names (kinds of
 *               this build, found at run time, and libbloom)
 *   forms.c     the table of what is timed: the insert forms and the query
 *               forms (one key per call, inline view, batches of bk_key
 *               descriptors, packed keys or hashes ...), each with its
 *               table column, its CSV metric and the loop it times
 *   run.c       the measurement: fills, passes in slices, repetitions round
 *               the kinds, medians, the machine's limits
 *   report.c    the run's header, the tables and the CSV rows
 *   one_key.c   after each block, one key per call beside the peers of
 *               bench/peers.h (adapters in bench/peers/, built only when
 *               CMake is given their checkouts)
 *
 * The speed targets are not in the program: scripts/bench-targets.sh reads
 * the CSV and says MET or MISS.
 */
#ifndef BENCH_RUN_H
#define BENCH_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"

#define MAX_SIZES 8
#define MAX_SUBJECTS 40
#define MAX_REPS 15
#define NAME_BYTES 32

/* --------------------------------------------------------------- options */

typedef struct options {
    uint64_t sizes[MAX_SIZES]; /* ascending */
    size_t size_count;
    bool key_types[KEY_TYPE_COUNT];
    char kinds[MAX_SUBJECTS][NAME_BYTES]; /* --kinds, as given */
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
    int cpu;        /* --cpu N; -1: the CPU the run starts on */
    bool hash_cost; /* --hash-cost: the hash table alone (bench/hash_cost.c) */
} options;

/* --hash NAME: the algorithm every filter of the run hashes with (default
 * XXH3); set by parse_options. */
extern bk_hash_algorithm bench_hash_algorithm;

/* `--hash-cost`: prints the side-by-side hash cost table; the exit code. */
int run_hash_cost(void);

/* Fills *opts from the command line (printing the usage and exiting 0 on
 * --help).  0, or -1 after printing what was wrong and the usage. */
int parse_options(int argc, char **argv, options *opts);

/* What is measured: a bloomkit kind (optionally without huge pages) or the
 * libbloom peer. */
typedef struct subject {
    char name[NAME_BYTES];
    bk_kind kind;
    bool is_libbloom;
    bool no_hugepage;
    bool int64_only; /* default :4k variants: the page size's effect does not depend on keys */
    unsigned flags;  /* creation flags: BK_FLAG_COUNTING_CLASSIC for counting:classic */
} subject;

/* The subjects named by --kinds, or by default every kind this build has
 * (bk_kind_list), the :4k variants of bloom and blocked (not with --quick)
 * and libbloom when built.  0, or -1 after
 * saying which name is not in this build. */
int choose_subjects(const options *opts, subject *subjects, size_t *count);

/* ----------------------------------------------------------------- forms */

/* Each query form is timed over present keys (+, CSV pos_) and absent
 * keys (-, CSV neg_). */
typedef enum side { SIDE_PRESENT = 0, SIDE_ABSENT = 1 } side;
#define SIDES 2

typedef enum insert_form {
    INSERT_ONE = 0,   /* bk_filter_add_hash, one precomputed hash per call */
    INSERT_BATCH = 1, /* bk_filter_add_batch on raw keys */
    INSERT_BUILD = 2, /* bk_filter_build: static kinds */
} insert_form;
#define INSERT_FORM_COUNT 3

typedef struct insert_form_info {
    const char *column; /* table heading */
    const char *metric; /* CSV <metric>_ns */
} insert_form_info;

extern const insert_form_info insert_forms[INSERT_FORM_COUNT];

/* The keys of one query pass: descriptors into bytes stored back to back
 * (bench/keys.c), and their hashes under the queried filter's hasher. */
typedef struct query_keys {
    const bk_key *keys;
    const bk_hash *hashes;
} query_keys;

/* How many of keys [start, start + count) `queried` (a bk_filter, or a
 * bench_view for the view forms) reports present. */
typedef uint64_t (*hit_counter)(const void *queried, const query_keys *keys, size_t start,
                                size_t count);

typedef enum query_form {
    FORM_HASH = 0,
    FORM_HASH_VIEW,
    FORM_RAW,
    FORM_VIEW,
    FORM_BATCH,
    FORM_HASH_BATCH,
    FORM_PACKED,
} query_form;
#define QUERY_FORM_COUNT 7

typedef struct query_form_info {
    const char *column; /* table heading after its + or - */
    int width;          /* table column width */
    const char *metric; /* CSV pos_<metric>_ns, neg_<metric>_ns */
    const char *abbrev; /* in the ratio columns: "+<abbrev>/rd", "lb/+<abbrev>" */
    bool through_view;  /* queries the kind's inline view (bench/views.h) */
    bool every_absent;  /* over all --absent keys (the FPR), not the first --queries */
    bool per_read;      /* compared with one random line read (x/rd) */
    bool vs_peer;       /* compared with libbloom's one key per call (lb/x) */
    hit_counter count_hits;
} query_form_info;

/* In table order; the counter loops are the forms' definitions. */
extern const query_form_info query_forms[QUERY_FORM_COUNT];

/* ------------------------------------------------------------------ rows */

/* One line of a table: medians over the repetitions, NAN where not
 * measured. */
typedef struct row {
    char name[NAME_BYTES];
    bool ok;
    char note[160];
    uint64_t bits;
    unsigned hashes;
    uint64_t bytes;
    double bits_per_key;
    double fpr;
    double predicted_fpr; /* the kind's own prediction at n keys (its design FPR) */
    uint64_t false_negatives;
    bool forms_disagree;
    double insert_ns[INSERT_FORM_COUNT];
    double query_ns[SIDES][QUERY_FORM_COUNT];
    /* per_read forms: each repetition's time over the own read timed right
     * after it, the median of those ratios (NAN without own_read_ns) */
    double per_own_read[SIDES][QUERY_FORM_COUNT];
    double own_read_ns; /* independent line read in the filter's own bit array, or NAN */
    double huge_mb;
    memory_limits limits;
} row;

/* Every row of one key type and n. */
typedef struct bench_block {
    key_type type;
    uint64_t n;
    size_t sample_count;
    size_t absent_count;
    row rows[MAX_SUBJECTS];
    size_t count;
} bench_block;

/* ------------------------------------------------------------------- run */

/* The whole run's state; zero it, then set the first four fields. */
typedef struct bench_run {
    const options *opts;
    const subject *subjects;
    size_t subject_count;
    FILE *csv;                   /* or NULL */
    int exit_code;               /* 1 once a row is not ok (false negatives, forms disagree) */
    struct run_scratch *scratch; /* run.c's */
} bench_run;

/* Microseconds per bk_filter_create of a dynamic kind's subject for 1,000
 * keys at `fpr`, or NAN if the kind refused. */
#define DESIGN_KEYS 1000
double design_us(const subject *s, double fpr);

/* Measures every size of one key type, printing each block (and its CSV
 * rows) as it is done.  0, or -1 when memory ran out. */
int run_key_type(bench_run *run, key_type type);

/* Frees what run_key_type kept between calls. */
void run_free(bench_run *run);

/* -------------------------------------------------------------- one key */

/* bench/one_key.c: after a block, one key per call side by side -- the
 * library calls, the inline views compiled at -O2 and at -march=native,
 * and the peers of bench/peers.h -- for the kinds of the run that have
 * them; its table on stdout and its CSV rows.  `absent` is the timed
 * absent keys.  0, or 1 when a row failed (false negatives, forms that
 * disagree, a filter not built). */
int one_key_block(const bench_run *run, const key_set *present, const key_set *sample,
                  const key_set *absent);

/* The peers line of the header (names, commits, the kind each meets), on
 * stdout and as a # comment in the CSV. */
void report_peers(FILE *csv);

/* ---------------------------------------------------------------- report */

/* The run's header (machine and settings) to stdout and, as # comments,
 * with the column names, to the CSV. */
void report_header(const options *opts, FILE *csv, int pinned_cpu, bool memory_locked);

/* The subjects line, and the design line (timing each dynamic kind). */
void report_subjects(const subject *subjects, size_t count);
void report_design_times(const bench_run *run);

/* A block's two tables on stdout, and its CSV rows. */
void report_block(const bench_block *b, FILE *csv);

/* First line of `path` (after "prefix:" when prefix is not NULL), or
 * "unknown". */
void read_first_match(const char *path, const char *prefix, char *out, size_t size);

#endif
