/*
 * bench/one_key.c -- one key per call, side by side: after each block
 * (key type, n) of the main tables, bloomkit's one-key library calls and
 * inline views beside the fastest peer of the same design (bench/peers.h),
 * in the same rounds of the same process.
 *
 *   kind     peer (when built)                    bloomkit forms
 *   bloom    -                                    call, views, packed batch
 *   blocked  rocksdb FastLocalBloomImpl           (the other kinds meet
 *   sbbf     fastfilter_cpp SimdBlockFilterFixed   libbloom in the main
 *   fuse8    xor_singleheader binary_fuse8         table, as before)
 *   counting -                                    call, packed batch (no view)
 *
 * Forms, in ns per key, present (+) and absent (-) keys:
 *
 *   call     bk_filter_add / bk_filter_contains, one key per call (hashing
 *            included); a static kind's insert is bk_filter_build per key
 *   view O2  the inline view (bench/views.c) compiled at plain -O2, no -m
 *            flag: what a distribution's package gets
 *   view nat the same compiled with -march=native
 *   batch    bk_filter_contains_packed, 1,024 keys per call
 *   peer     the peer's one-key Add / query (Find, contain, MayMatch), its
 *            build per key for a static peer; its batch query where it has
 *            one (RocksDB's MayMatch over 32 keys), else "loop": its
 *            one-key query in a loop (the same figure as its one-key form)
 *
 * ratio = peer ns / bloomkit ns: above 1, bloomkit is faster.
 *
 * Rounds.  Each of --reps rounds builds, for each kind in turn, a fresh
 * bloomkit filter and a fresh peer filter (in alternating order), timing
 * the inserts, then times every query form of both over the same keys,
 * then frees both; each figure is the median over the rounds of a pass's
 * median slice (bench.h).  A present key any form reports absent, or
 * bloomkit forms that disagree, fail the row (exit status 1).
 *
 * Keys.  bloomkit's calls take the key bytes, or for 8-byte keys the
 * integer-key calls where the library has them (bk_key_hits below); every
 * peer hashes the raw key itself (bench/peers.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "peers.h"
#include "run.h"
#include "views.h"

#define PACKED_BATCH 1024

#ifndef BENCH_NATIVE_FLAGS
#define BENCH_NATIVE_FLAGS "unknown"
#endif

/* The inline-view copies (bench/view_copy_names.h). */
bool bench_o2_view_init(const bk_filter *filter, size_t key_bytes, bench_view *out);
uint64_t bench_o2_view_hits(const bench_view *view, const bk_key *keys, size_t count);
bool bench_native_view_init(const bk_filter *filter, size_t key_bytes, bench_view *out);
uint64_t bench_native_view_hits(const bench_view *view, const bk_key *keys, size_t count);

/* The peers of this build, each with the bloomkit kind it meets. */
static const bench_peer *const peers[] = {
#ifdef BENCH_HAVE_PEER_ROCKSDB
    &bench_peer_rocksdb,
#endif
#ifdef BENCH_HAVE_PEER_FASTFILTER_CPP
    &bench_peer_fastfilter_cpp,
#endif
#ifdef BENCH_HAVE_PEER_XOR_SINGLEHEADER
    &bench_peer_xor_singleheader,
#endif
    NULL
};

/* The kinds of the table, in order. */
static const char *const table_kinds[] = { "bloom", "blocked", "sbbf", "fuse8", "counting" };
#define TABLE_KINDS (sizeof table_kinds / sizeof table_kinds[0])

typedef enum ours_form {
    OURS_CALL = 0,
    OURS_VIEW_O2,
    OURS_VIEW_NATIVE,
    OURS_BATCH,
    OURS_FORMS
} ours_form;
static const char *const ours_form_names[OURS_FORMS] = { "call", "view O2", "view nat",
                                                         "batch" };
static const char *const ours_form_metrics[OURS_FORMS] = { "call", "view_o2", "view_native",
                                                           "packed_batch" };
typedef enum peer_form { PEER_ONE = 0, PEER_BATCH, PEER_FORMS } peer_form;

/* One round's figures of one kind and its peer. */
typedef struct round_figures {
    double bk_insert, peer_insert;
    double bk_query[SIDES][OURS_FORMS];
    double peer_query[SIDES][PEER_FORMS];
    double bk_fpr, peer_fpr;
} round_figures;
_Static_assert(sizeof(round_figures) % sizeof(double) == 0, "round_figures: doubles only");

/* --------------------------------------------------------------- timing */

/* A loop over keys [start, start + count) of a key set: hits counted (0
 * for an insert loop). */
typedef uint64_t (*keys_loop)(void *timed, const key_set *keys, size_t start, size_t count);

/* The median slice's ns per key over all of `keys`; *hits gets the total. */
static double time_loop(keys_loop loop, void *timed, const key_set *keys, uint64_t *hits)
{
    slice_times times;
    slice_times_init(&times, keys->count);
    uint64_t found = 0;
    for (size_t start = 0; start < keys->count; start += BENCH_SLICE_KEYS) {
        size_t count = keys->count - start < BENCH_SLICE_KEYS ? keys->count - start
                                                              : BENCH_SLICE_KEYS;
        uint64_t begin = bench_now_ns();
        found += loop(timed, keys, start, count);
        slice_times_add(&times, begin, bench_now_ns(), count);
    }
    if (hits != NULL)
        *hits = found;
    return slice_times_median(&times);
}

/* ------------------------------------------------------ bloomkit's loops */

/*
 * Integer keys.  Where the library has the integer-key calls
 * (BENCH_HAVE_U64_CALLS: bench/CMakeLists.txt finds bk_filter_contains_u64
 * in the public header), an 8-byte key is given to bk_filter_add_u64 /
 * bk_filter_contains_u64 as its value (the benchmark's keys are that value
 * in native byte order; the calls take it little-endian, so this holds on
 * little-endian machines, where the two agree) and the filter hashes with
 * BK_HASH_MIX64 (duel_params); elsewhere, and for 16-byte keys, the key
 * bytes go to bk_filter_add / bk_filter_contains.  This is the one place
 * that chooses.
 */
#if defined(BENCH_HAVE_U64_CALLS) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BENCH_INT_KEYS_AS_U64 1
#else
#define BENCH_INT_KEYS_AS_U64 0
#endif

/* Key i of a packed array of 8-byte keys, as a native-order integer. */
static inline uint64_t packed_u64(const uint8_t *keys, size_t i)
{
    uint64_t value;
    memcpy(&value, keys + i * 8, 8);
    return value;
}

/* One bloomkit one-key query per key (the comment above).  The keys are
 * read from the key set's packed array (key i at bytes + i * width, its
 * width a constant), as the peers' loops read them. */
static uint64_t bk_key_hits(void *filter, const key_set *keys, size_t start, size_t count)
{
    uint64_t hits = 0;
    if (keys->type == KEY_INT64) {
        const uint8_t *batch = keys->bytes + start * 8;
        for (size_t i = 0; i < count; i++)
#if BENCH_INT_KEYS_AS_U64
            hits += bk_filter_contains_u64(filter, packed_u64(batch, i));
#else
            hits += bk_filter_contains(filter, batch + i * 8, 8);
#endif
        return hits;
    }
    size_t width = key_type_bytes(keys->type);
    const uint8_t *batch = keys->bytes + start * width;
    for (size_t i = 0; i < count; i++)
        hits += bk_filter_contains(filter, batch + i * width, width);
    return hits;
}

/* One bloomkit one-key insert per key (as bk_key_hits); the failures. */
static uint64_t bk_key_adds(void *filter, const key_set *keys, size_t start, size_t count)
{
    uint64_t failed = 0;
    if (keys->type == KEY_INT64) {
        const uint8_t *batch = keys->bytes + start * 8;
        for (size_t i = 0; i < count; i++)
#if BENCH_INT_KEYS_AS_U64
            failed += bk_filter_add_u64(filter, packed_u64(batch, i), NULL) != BK_OK;
#else
            failed += bk_filter_add(filter, batch + i * 8, 8, NULL) != BK_OK;
#endif
        return failed;
    }
    size_t width = key_type_bytes(keys->type);
    const uint8_t *batch = keys->bytes + start * width;
    for (size_t i = 0; i < count; i++)
        failed += bk_filter_add(filter, batch + i * width, width, NULL) != BK_OK;
    return failed;
}

static uint64_t bk_packed_hits(void *filter, const key_set *keys, size_t start, size_t count)
{
    size_t width = key_type_bytes(keys->type);
    bool results[PACKED_BATCH];
    uint64_t hits = 0;
    for (size_t done = 0; done < count; done += PACKED_BATCH) {
        size_t n = count - done < PACKED_BATCH ? count - done : PACKED_BATCH;
        hits += bk_filter_contains_packed(filter, keys->bytes + (start + done) * width, width, n,
                                          results);
    }
    return hits;
}

static uint64_t o2_view_hits(void *view, const key_set *keys, size_t start, size_t count)
{
    return bench_o2_view_hits(view, keys->keys + start, count);
}

static uint64_t native_view_hits(void *view, const key_set *keys, size_t start, size_t count)
{
    return bench_native_view_hits(view, keys->keys + start, count);
}

/* ---------------------------------------------------------- peer's loops */

typedef struct peer_subject {
    const bench_peer *peer;
    void *filter;
} peer_subject;

static uint64_t peer_hits(void *timed, const key_set *keys, size_t start, size_t count)
{
    const peer_subject *p = timed;
    size_t width = key_type_bytes(keys->type);
    return p->peer->hits(p->filter, keys->bytes + start * width, width, count);
}

static uint64_t peer_batch_hits(void *timed, const key_set *keys, size_t start, size_t count)
{
    const peer_subject *p = timed;
    size_t width = key_type_bytes(keys->type);
    return p->peer->batch_hits(p->filter, keys->bytes + start * width, width, count);
}

static uint64_t peer_adds(void *timed, const key_set *keys, size_t start, size_t count)
{
    const peer_subject *p = timed;
    size_t width = key_type_bytes(keys->type);
    p->peer->add(p->filter, keys->bytes + start * width, width, count);
    return 0;
}

/* ---------------------------------------------------------------- rounds */

/* What one kind's rounds share. */
typedef struct kind_duel {
    const char *kind_name;
    bk_kind kind;
    const bench_peer *peer; /* or NULL */
    round_figures rounds[MAX_REPS];
    int done;
    uint64_t bk_bytes, peer_bytes;
    bool failed; /* a bloomkit filter not built, false negatives, forms disagreeing */
    char note[160];
} kind_duel;

/* The keys of one block. */
typedef struct duel_keys {
    const key_set *present, *sample, *absent;
} duel_keys;

/* The parameters of bloomkit's filter of `kind` for n keys of `type`:
 * integer keys hash with BK_HASH_MIX64 where the integer-key calls are
 * used (bk_key_hits), except in sbbf, whose hash Parquet fixes (XXH64). */
static bk_params duel_params(const options *opts, bk_kind kind, key_type type, uint64_t n)
{
    bk_params params = { .capacity = n, .fpr = opts->fpr };
#if BENCH_INT_KEYS_AS_U64
    if (type == KEY_INT64 && kind != BK_KIND_SBBF)
        params.hash_algorithm = BK_HASH_MIX64;
#else
    (void)kind, (void)type;
#endif
    return params;
}

/* A fresh bloomkit filter holding every present key: *insert_ns per key. */
static bk_filter *bk_build(const kind_duel *d, const options *opts, const duel_keys *k,
                           double *insert_ns)
{
    bk_params params = duel_params(opts, d->kind, k->present->type, k->present->count);
    bk_filter *filter = NULL;
    if (bk_kind_is_static(d->kind)) {
        uint64_t begin = bench_now_ns();
        bk_status status = bk_filter_build(d->kind, &params, k->present->keys, k->present->count,
                                           &filter);
        *insert_ns = (double)(bench_now_ns() - begin) / (double)k->present->count;
        return status == BK_OK ? filter : NULL;
    }
    if (bk_filter_create(d->kind, &params, &filter) != BK_OK)
        return NULL;
    uint64_t failed = 0;
    *insert_ns = time_loop(bk_key_adds, filter, k->present, &failed);
    if (failed != 0) {
        bk_filter_free(filter);
        return NULL;
    }
    return filter;
}

/* A fresh peer filter holding every present key, or NULL. */
static void *peer_build(const bench_peer *peer, const options *opts, const duel_keys *k,
                        double *insert_ns)
{
    size_t width = key_type_bytes(k->present->type);
    if (peer->build != NULL) {
        uint64_t begin = bench_now_ns();
        void *filter = peer->build(k->present->bytes, width, k->present->count);
        *insert_ns = (double)(bench_now_ns() - begin) / (double)k->present->count;
        return filter;
    }
    peer_subject p = { .peer = peer, .filter = peer->create(k->present->count, opts->fpr) };
    if (p.filter != NULL)
        *insert_ns = time_loop(peer_adds, &p, k->present, NULL);
    return p.filter;
}

/* Times one bloomkit form over `keys` into *ns.  *hits holds the hits of
 * the forms timed before on these keys (UINT64_MAX: none yet) and gets
 * this form's; false when the two differ. */
static bool time_bk_form(keys_loop loop, void *timed, const key_set *keys, double *ns,
                         uint64_t *hits)
{
    uint64_t found;
    *ns = time_loop(loop, timed, keys, &found);
    bool agrees = *hits == UINT64_MAX || found == *hits;
    *hits = found;
    return agrees;
}

/* Every query form of both filters on both sides; false when a present key
 * was missed or bloomkit's forms disagree (d->note says which). */
static bool time_queries(kind_duel *d, bk_filter *filter, peer_subject *p, const duel_keys *k,
                         round_figures *fig)
{
    bench_view o2, native;
    bool has_view = bench_o2_view_init(filter, key_type_bytes(k->sample->type), &o2) &&
                    bench_native_view_init(filter, key_type_bytes(k->sample->type), &native);
    const key_set *sides[SIDES] = { k->sample, k->absent };
    bool wrong = false;
    for (int s = 0; s < SIDES; s++) {
        uint64_t hits = UINT64_MAX;
        bool agree = time_bk_form(bk_key_hits, filter, sides[s], &fig->bk_query[s][OURS_CALL],
                                  &hits);
        if (has_view) {
            agree &= time_bk_form(o2_view_hits, &o2, sides[s], &fig->bk_query[s][OURS_VIEW_O2],
                                  &hits);
            agree &= time_bk_form(native_view_hits, &native, sides[s],
                                  &fig->bk_query[s][OURS_VIEW_NATIVE], &hits);
        }
        agree &= time_bk_form(bk_packed_hits, filter, sides[s], &fig->bk_query[s][OURS_BATCH],
                              &hits);
        if (!agree) {
            snprintf(d->note, sizeof d->note, "bloomkit's forms disagree");
            wrong = true;
        }
        if (s == SIDE_PRESENT && hits != sides[s]->count) {
            snprintf(d->note, sizeof d->note, "FALSE NEGATIVES (bloomkit)");
            wrong = true;
        }
        if (s == SIDE_ABSENT)
            fig->bk_fpr = (double)hits / (double)sides[s]->count;
        if (p->filter == NULL)
            continue;
        uint64_t peer_found = 0;
        fig->peer_query[s][PEER_ONE] = time_loop(peer_hits, p, sides[s], &peer_found);
        fig->peer_query[s][PEER_BATCH] = fig->peer_query[s][PEER_ONE];
        if (p->peer->batch_hits != NULL)
            fig->peer_query[s][PEER_BATCH] = time_loop(peer_batch_hits, p, sides[s], NULL);
        if (s == SIDE_PRESENT && peer_found != sides[s]->count) {
            snprintf(d->note, sizeof d->note, "FALSE NEGATIVES (%s)", p->peer->name);
            wrong = true;
        }
        if (s == SIDE_ABSENT)
            fig->peer_fpr = (double)peer_found / (double)sides[s]->count;
    }
    return !wrong;
}

/* One round of one kind: fresh filters (alternating which is built first),
 * every form, both freed.  False when the round failed (d->note). */
static bool duel_round(kind_duel *d, int round, const options *opts, const duel_keys *k)
{
    round_figures *fig = &d->rounds[d->done];
    for (size_t i = 0; i < sizeof *fig / sizeof(double); i++)
        ((double *)fig)[i] = NAN;
    peer_subject p = { .peer = d->peer, .filter = NULL };
    bk_filter *filter = NULL;
    for (int turn = 0; turn < 2; turn++) {
        if ((turn + round) % 2 == 0)
            filter = bk_build(d, opts, k, &fig->bk_insert);
        else if (d->peer != NULL)
            p.filter = peer_build(d->peer, opts, k, &fig->peer_insert);
    }
    if (d->peer != NULL && p.filter == NULL) { /* not a fault of ours: its columns stay empty */
        snprintf(d->note, sizeof d->note, "%s refused n=%zu (or no memory)", d->peer->name,
                 k->present->count);
        d->peer = NULL;
    }
    if (filter == NULL) {
        snprintf(d->note, sizeof d->note, "bloomkit's %s was not built", d->kind_name);
        d->failed = true;
    } else {
        d->failed = !time_queries(d, filter, &p, k, fig);
        bk_stats stats;
        bk_filter_stats(filter, &stats);
        d->bk_bytes = stats.bytes;
        d->peer_bytes = p.filter != NULL ? d->peer->bytes(p.filter) : d->peer_bytes;
        d->done++;
    }
    bk_filter_free(filter);
    if (p.filter != NULL)
        d->peer->free(p.filter);
    return !d->failed;
}

/* ---------------------------------------------------------------- report */

static double median_at(const kind_duel *d, size_t offset)
{
    double values[MAX_REPS];
    for (int r = 0; r < d->done; r++)
        values[r] = *(const double *)((const char *)&d->rounds[r] + offset);
    return bench_median(values, (size_t)d->done);
}

#define FIGURE(member) median_at(d, offsetof(round_figures, member))

static void print_ns(double value)
{
    if (isnan(value))
        printf(" %7s", "-");
    else
        printf(" %7.2f", value);
}

static void print_ratio(double peer, double ours)
{
    if (isnan(peer) || isnan(ours))
        printf(" %6s", "-");
    else
        printf(" %6.2f", peer / ours);
}

static void csv_figure(FILE *csv, const duel_keys *k, const char *name, const char *metric,
                       double value)
{
    if (csv != NULL && !isnan(value))
        fprintf(csv, "%s,%zu,%s,%s,%.6g\n", key_type_name(k->present->type), k->present->count,
                name, metric, value);
}

/* The kind's lines: one per bloomkit form beside the peer's matching form. */
static void report_duel(const kind_duel *d, const duel_keys *k, FILE *csv)
{
    double peer_insert = FIGURE(peer_insert);
    double bk_insert = FIGURE(bk_insert);
    double peer_ns[SIDES][PEER_FORMS], bk_ns[SIDES][OURS_FORMS];
    for (int s = 0; s < SIDES; s++) {
        for (int f = 0; f < PEER_FORMS; f++)
            peer_ns[s][f] = FIGURE(peer_query[s][f]);
        for (int f = 0; f < OURS_FORMS; f++)
            bk_ns[s][f] = FIGURE(bk_query[s][f]);
    }
    const char *peer_name = d->peer != NULL ? d->peer->name : "-";
    for (int f = 0; f < OURS_FORMS; f++) {
        peer_form pf = f == OURS_BATCH ? PEER_BATCH : PEER_ONE;
        char peer_form_name[48] = "-";
        if (d->peer != NULL)
            snprintf(peer_form_name, sizeof peer_form_name, "%s",
                     pf == PEER_ONE        ? "one key"
                     : d->peer->batch_name ? d->peer->batch_name
                                           : "loop");
        double ins = f == OURS_CALL ? bk_insert : NAN;
        double pins = f == OURS_CALL ? peer_insert : NAN;
        printf("%-8s %-9s", d->kind_name, ours_form_names[f]);
        print_ns(ins);
        print_ns(bk_ns[SIDE_PRESENT][f]);
        print_ns(bk_ns[SIDE_ABSENT][f]);
        if (peers[0] != NULL) { /* the peer columns, when this build has a peer */
            printf("  %-16s %-12s", peer_name, peer_form_name);
            print_ns(pins);
            print_ns(peer_ns[SIDE_PRESENT][pf]);
            print_ns(peer_ns[SIDE_ABSENT][pf]);
            print_ratio(pins, ins);
            print_ratio(peer_ns[SIDE_PRESENT][pf], bk_ns[SIDE_PRESENT][f]);
            print_ratio(peer_ns[SIDE_ABSENT][pf], bk_ns[SIDE_ABSENT][f]);
        }
        printf("\n");
        char metric[64];
        for (int s = 0; s < SIDES; s++) {
            snprintf(metric, sizeof metric, "%s_onekey_%s_ns", s == SIDE_PRESENT ? "pos" : "neg",
                     ours_form_metrics[f]);
            csv_figure(csv, k, d->kind_name, metric, bk_ns[s][f]);
            snprintf(metric, sizeof metric, "%s_peer_%s_ratio",
                     s == SIDE_PRESENT ? "pos" : "neg", ours_form_metrics[f]);
            csv_figure(csv, k, d->kind_name, metric, peer_ns[s][pf] / bk_ns[s][f]);
        }
    }
    csv_figure(csv, k, d->kind_name, "onekey_insert_ns", bk_insert);
    csv_figure(csv, k, d->kind_name, "peer_insert_ratio", peer_insert / bk_insert);
    double n = (double)k->present->count;
    printf("%-8s %.2f bits/key, FPR %.3f%%", d->kind_name, (double)d->bk_bytes * 8 / n,
           FIGURE(bk_fpr) * 100);
    if (d->peer != NULL && d->peer_bytes != 0) {
        printf("; %s %s: %.2f bits/key, FPR %.3f%%", d->peer->name, d->peer->filter,
               (double)d->peer_bytes * 8 / n, FIGURE(peer_fpr) * 100);
        csv_figure(csv, k, d->peer->name, "insert_single_ns", peer_insert);
        csv_figure(csv, k, d->peer->name, "pos_raw_ns", peer_ns[SIDE_PRESENT][PEER_ONE]);
        csv_figure(csv, k, d->peer->name, "neg_raw_ns", peer_ns[SIDE_ABSENT][PEER_ONE]);
        csv_figure(csv, k, d->peer->name, "pos_batch_ns", peer_ns[SIDE_PRESENT][PEER_BATCH]);
        csv_figure(csv, k, d->peer->name, "neg_batch_ns", peer_ns[SIDE_ABSENT][PEER_BATCH]);
        csv_figure(csv, k, d->peer->name, "bits_per_key", (double)d->peer_bytes * 8 / n);
        csv_figure(csv, k, d->peer->name, "fpr", FIGURE(peer_fpr));
    }
    printf("%s%s\n", d->note[0] ? "; " : "", d->note);
}

/* ------------------------------------------------------------------ entry */

static const bench_peer *peer_against(const char *kind_name)
{
    for (size_t i = 0; peers[i] != NULL; i++)
        if (strcmp(peers[i]->against, kind_name) == 0)
            return peers[i];
    return NULL;
}

/* True when the run's subjects include the kind (not a :4k variant). */
static bool subject_has(const subject *subjects, size_t count, const char *kind_name)
{
    for (size_t i = 0; i < count; i++)
        if (!subjects[i].is_libbloom && !subjects[i].no_hugepage &&
            strcmp(subjects[i].name, kind_name) == 0)
            return true;
    return false;
}

void report_peers(FILE *csv)
{
    char line[512] = "peers:";
    size_t used = strlen(line);
    for (size_t i = 0; peers[i] != NULL; i++)
        used += (size_t)snprintf(line + used, sizeof line - used, "%s %s %s (%s) vs %s",
                                 i ? ";" : "", peers[i]->name, peers[i]->filter,
                                 peers[i]->commit, peers[i]->against);
    if (peers[0] == NULL)
        snprintf(line + used, sizeof line - used,
                 " none built (BLOOMKIT_PEER_* paths: docs/PERFORMANCE.md)");
    printf("%s\n", line);
    if (csv != NULL)
        fprintf(csv, "# %s\n", line);
}

int one_key_block(const bench_run *run, const key_set *present, const key_set *sample,
                  const key_set *absent)
{
    const options *opts = run->opts;
    duel_keys k = { present, sample, absent };
    static kind_duel duels[TABLE_KINDS];
    size_t count = 0;
    for (size_t i = 0; i < TABLE_KINDS; i++) {
        bk_kind kind;
        if (!subject_has(run->subjects, run->subject_count, table_kinds[i]) ||
            bk_kind_from_name(table_kinds[i], &kind) != BK_OK)
            continue;
        duels[count++] = (kind_duel){ .kind_name = table_kinds[i],
                                      .kind = kind,
                                      .peer = peer_against(table_kinds[i]) };
    }
    if (count == 0)
        return 0;
    int failed = 0;
    for (int round = 0; round < opts->reps; round++) {
        for (size_t i = 0; i < count; i++) {
            bench_progress("%s n=%zu one key per call: %s, round %d/%d",
                           key_type_name(present->type), present->count, duels[i].kind_name,
                           round + 1, opts->reps);
            if (!duels[i].failed && !duel_round(&duels[i], round, opts, &k))
                failed = 1;
        }
    }
    printf("\none key per call, %s keys, n = %zu: ns per key, median of %d rounds; "
           "view nat: %s; r = peer / bloomkit\n",
           key_type_name(present->type), present->count, opts->reps,
           BENCH_NATIVE_FLAGS[0] ? BENCH_NATIVE_FLAGS : "no flags");
    printf("%-8s %-9s %7s %7s %7s", "kind", "form", "ins", "+", "-");
    if (peers[0] != NULL)
        printf("  %-16s %-12s %7s %7s %7s %6s %6s %6s", "peer", "form", "ins", "+", "-", "r ins",
               "r +", "r -");
    printf("\n");
    for (size_t i = 0; i < count; i++)
        report_duel(&duels[i], &k, run->csv);
    return failed;
}
