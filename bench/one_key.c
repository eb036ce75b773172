/*
 * bench/one_key.c -- one key per call, side by side: after each block
 * (key type, n) of the main tables, bloomkit's one-key library calls and
 * inline views beside the fastest peers of the same design
 * (bench/peers.h), in the same rounds of the same process.
 *
 *   kind     peers (when built)                   bloomkit forms
 *   bloom    -                                    call, views, packed batch
 *   blocked  rocksdb FastLocalBloomImpl           (the other kinds meet
 *   sbbf     fastfilter_cpp SimdBlockFilterFixed   libbloom in the main
 *            fastfilter_cpp_xxh64 (XXH64 keys)     table, as before)
 *   fuse8    xor_singleheader binary_fuse8
 *   counting -                                    call, packed batch (no view)
 *
 * A kind with several peers gets its four form rows once per peer, each
 * beside the same bloomkit figures (timed once per round).
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
 * bloomkit filter and a fresh filter of each peer (the order rotating from
 * round to round), timing the inserts, then times every query form of
 * each over the same keys, then frees them; each figure is the median over
 * the rounds of a pass's median slice (bench.h).  A present key any form
 * reports absent, or bloomkit forms that disagree, fail the row (exit
 * status 1).  In its first round a kind's peer that computes bloomkit's
 * own function (bench_peer.same_bits: fastfilter_cpp_xxh64 against sbbf)
 * is built once more with bloomkit's block count from the same keys, and
 * its bits must equal bloomkit's, or the row fails; the line under the
 * rows says "same bits as sbbf".
 *
 * CSV: under the kind's name, bloomkit's figures (pos_onekey_<form>_ns,
 * neg_..., onekey_insert_ns) and the ratios to its first peer
 * (pos_peer_<form>_ratio, neg_..., peer_insert_ratio); a further peer's
 * ratios carry its name instead of "peer" (pos_fastfilter_cpp_xxh64_call_ratio,
 * fastfilter_cpp_xxh64_insert_ratio).  Each peer's own figures under its
 * name (insert_single_ns, pos_raw_ns, pos_batch_ns, bits_per_key, fpr).
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
    &bench_peer_fastfilter_cpp,       /* its own hash */
    &bench_peer_fastfilter_cpp_xxh64, /* Parquet's: sbbf's function */
#endif
#ifdef BENCH_HAVE_PEER_XOR_SINGLEHEADER
    &bench_peer_xor_singleheader,
#endif
    NULL
};
/* At most this many peers meet one kind (all of them, at worst). */
#define MAX_KIND_PEERS (sizeof peers / sizeof peers[0])

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

/* One round's figures of one peer. */
typedef struct peer_figures {
    double insert;
    double query[SIDES][PEER_FORMS];
    double fpr;
} peer_figures;

/* One round's figures of one kind and its peers. */
typedef struct round_figures {
    double bk_insert;
    double bk_query[SIDES][OURS_FORMS];
    double bk_fpr;
    peer_figures of_peer[MAX_KIND_PEERS];
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

/* The outcome of a peer's bench_peer.same_bits check. */
typedef enum bits_check {
    BITS_NOT_ASKED = 0,
    BITS_NOT_CHECKED,
    BITS_SAME,
    BITS_DIFFER
} bits_check;

/* What one kind's rounds share. */
typedef struct kind_duel {
    const char *kind_name;
    bk_kind kind;
    const bench_peer *peer[MAX_KIND_PEERS]; /* its peers, peer_count of them */
    size_t peer_count;
    bool peer_out[MAX_KIND_PEERS]; /* it refused a filter: left out of later rounds */
    bits_check same_bits[MAX_KIND_PEERS];
    round_figures rounds[MAX_REPS];
    int done;
    uint64_t bk_bytes, peer_bytes[MAX_KIND_PEERS];
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

/* Every query form of each peer's filter on one side's keys (false: a
 * present key missed, d->note says whose). */
static bool time_peer_queries(kind_duel *d, peer_subject *p, const key_set *keys, side s,
                              round_figures *fig)
{
    bool wrong = false;
    for (size_t j = 0; j < d->peer_count; j++) {
        if (p[j].filter == NULL)
            continue;
        peer_figures *pf = &fig->of_peer[j];
        uint64_t found = 0;
        pf->query[s][PEER_ONE] = time_loop(peer_hits, &p[j], keys, &found);
        pf->query[s][PEER_BATCH] = pf->query[s][PEER_ONE];
        if (p[j].peer->batch_hits != NULL)
            pf->query[s][PEER_BATCH] = time_loop(peer_batch_hits, &p[j], keys, NULL);
        if (s == SIDE_PRESENT && found != keys->count) {
            snprintf(d->note, sizeof d->note, "FALSE NEGATIVES (%s)", p[j].peer->name);
            wrong = true;
        }
        if (s == SIDE_ABSENT)
            pf->fpr = (double)found / (double)keys->count;
    }
    return !wrong;
}

/* Every query form of bloomkit's and the peers' filters on both sides;
 * false when a present key was missed or bloomkit's forms disagree
 * (d->note says which). */
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
        wrong |= !time_peer_queries(d, p, sides[s], (side)s, fig);
    }
    return !wrong;
}

/* Peer j's same_bits check against bloomkit's filter of the present keys
 * (bench_peer.same_bits): d->same_bits[j], which report_peer prints;
 * false when the bits differ. */
static bool check_same_bits(kind_duel *d, size_t j, const bk_filter *filter, const duel_keys *k)
{
    bench_view view;
    const void *words;
    uint64_t bytes;
    size_t width = key_type_bytes(k->present->type);
    d->same_bits[j] = BITS_NOT_CHECKED;
    if (!bench_view_init(filter, width, &view) || !bench_view_bit_array(&view, &words, &bytes))
        return true;
    int same = d->peer[j]->same_bits(k->present->bytes, width, k->present->count, words, bytes);
    d->same_bits[j] = same < 0 ? BITS_NOT_CHECKED : same ? BITS_SAME : BITS_DIFFER;
    return same != 0;
}

/* One round of one kind: fresh filters (the first built rotating from
 * round to round), every form, all freed; in the first round, the bits
 * checks.  False when the round failed (d->note). */
static bool duel_round(kind_duel *d, int round, const options *opts, const duel_keys *k)
{
    round_figures *fig = &d->rounds[d->done];
    for (size_t i = 0; i < sizeof *fig / sizeof(double); i++)
        ((double *)fig)[i] = NAN;
    peer_subject p[MAX_KIND_PEERS] = { { 0 } };
    bk_filter *filter = NULL;
    size_t builders = 1 + d->peer_count; /* bloomkit, then the peers */
    for (size_t turn = 0; turn < builders; turn++) {
        size_t who = (turn + (size_t)round) % builders;
        if (who == 0) {
            filter = bk_build(d, opts, k, &fig->bk_insert);
            continue;
        }
        size_t j = who - 1;
        if (d->peer_out[j])
            continue;
        p[j].peer = d->peer[j];
        p[j].filter = peer_build(d->peer[j], opts, k, &fig->of_peer[j].insert);
        if (p[j].filter == NULL) { /* not a fault of ours: its columns stay empty */
            snprintf(d->note, sizeof d->note, "%s refused n=%zu (or no memory)",
                     d->peer[j]->name, k->present->count);
            d->peer_out[j] = true;
        }
    }
    if (filter == NULL) {
        snprintf(d->note, sizeof d->note, "bloomkit's %s was not built", d->kind_name);
        d->failed = true;
    } else {
        d->failed = !time_queries(d, filter, p, k, fig);
        for (size_t j = 0; round == 0 && j < d->peer_count; j++)
            if (d->peer[j]->same_bits != NULL && !check_same_bits(d, j, filter, k))
                d->failed = true;
        bk_stats stats;
        bk_filter_stats(filter, &stats);
        d->bk_bytes = stats.bytes;
        for (size_t j = 0; j < d->peer_count; j++)
            if (p[j].filter != NULL)
                d->peer_bytes[j] = d->peer[j]->bytes(p[j].filter);
        d->done++;
    }
    bk_filter_free(filter);
    for (size_t j = 0; j < d->peer_count; j++)
        if (p[j].filter != NULL)
            d->peer[j]->free(p[j].filter);
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

/* bloomkit's medians of one kind. */
typedef struct bk_medians {
    double insert;
    double query[SIDES][OURS_FORMS];
} bk_medians;

/* The kind's four form rows, bloomkit's forms beside peer j's matching
 * ones (j == d->peer_count: no peer), and the ratios' CSV rows: the first
 * peer's named "peer", a further one's by its name. */
static void report_rows(const kind_duel *d, size_t j, const bk_medians *bk, const duel_keys *k,
                        FILE *csv)
{
    const bench_peer *peer = j < d->peer_count ? d->peer[j] : NULL;
    double peer_insert = peer != NULL ? FIGURE(of_peer[j].insert) : NAN;
    double peer_ns[SIDES][PEER_FORMS];
    for (int s = 0; s < SIDES; s++)
        for (int f = 0; f < PEER_FORMS; f++)
            peer_ns[s][f] = peer != NULL ? FIGURE(of_peer[j].query[s][f]) : NAN;
    const char *ratio_tag = j == 0 || peer == NULL ? "peer" : peer->name;
    char metric[96];
    for (int f = 0; f < OURS_FORMS; f++) {
        peer_form pf = f == OURS_BATCH ? PEER_BATCH : PEER_ONE;
        const char *peer_form_name = peer == NULL       ? "-"
                                     : pf == PEER_ONE   ? "one key"
                                     : peer->batch_name ? peer->batch_name
                                                        : "loop";
        double ins = f == OURS_CALL ? bk->insert : NAN;
        double pins = f == OURS_CALL ? peer_insert : NAN;
        printf("%-8s %-9s", d->kind_name, ours_form_names[f]);
        print_ns(ins);
        print_ns(bk->query[SIDE_PRESENT][f]);
        print_ns(bk->query[SIDE_ABSENT][f]);
        if (peers[0] != NULL) { /* the peer columns, when this build has a peer */
            printf("  %-20s %-12s", peer != NULL ? peer->name : "-", peer_form_name);
            print_ns(pins);
            print_ns(peer_ns[SIDE_PRESENT][pf]);
            print_ns(peer_ns[SIDE_ABSENT][pf]);
            print_ratio(pins, ins);
            print_ratio(peer_ns[SIDE_PRESENT][pf], bk->query[SIDE_PRESENT][f]);
            print_ratio(peer_ns[SIDE_ABSENT][pf], bk->query[SIDE_ABSENT][f]);
        }
        printf("\n");
        for (int s = 0; s < SIDES; s++) {
            snprintf(metric, sizeof metric, "%s_%s_%s_ratio", s == SIDE_PRESENT ? "pos" : "neg",
                     ratio_tag, ours_form_metrics[f]);
            csv_figure(csv, k, d->kind_name, metric, peer_ns[s][pf] / bk->query[s][f]);
        }
    }
    snprintf(metric, sizeof metric, "%s_insert_ratio", ratio_tag);
    csv_figure(csv, k, d->kind_name, metric, peer_insert / bk->insert);
}

/* Peer j's figures after the rows: size, FPR, its bits check; and its
 * own CSV rows. */
static void report_peer(const kind_duel *d, size_t j, const duel_keys *k, FILE *csv)
{
    const bench_peer *peer = d->peer[j];
    if (d->peer_bytes[j] == 0)
        return;
    double n = (double)k->present->count;
    static const char *const checks[] = { [BITS_NOT_ASKED] = "",
                                          [BITS_NOT_CHECKED] = ", bits not compared",
                                          [BITS_SAME] = ", same bits as ",
                                          [BITS_DIFFER] = ", BITS DIFFER from " };
    bits_check check = d->same_bits[j];
    printf("; %s %s: %.2f bits/key, FPR %.3f%%%s%s", peer->name, peer->filter,
           (double)d->peer_bytes[j] * 8 / n, FIGURE(of_peer[j].fpr) * 100, checks[check],
           check == BITS_SAME || check == BITS_DIFFER ? d->kind_name : "");
    csv_figure(csv, k, peer->name, "insert_single_ns", FIGURE(of_peer[j].insert));
    csv_figure(csv, k, peer->name, "pos_raw_ns",
               FIGURE(of_peer[j].query[SIDE_PRESENT][PEER_ONE]));
    csv_figure(csv, k, peer->name, "neg_raw_ns",
               FIGURE(of_peer[j].query[SIDE_ABSENT][PEER_ONE]));
    csv_figure(csv, k, peer->name, "pos_batch_ns",
               FIGURE(of_peer[j].query[SIDE_PRESENT][PEER_BATCH]));
    csv_figure(csv, k, peer->name, "neg_batch_ns",
               FIGURE(of_peer[j].query[SIDE_ABSENT][PEER_BATCH]));
    csv_figure(csv, k, peer->name, "bits_per_key", (double)d->peer_bytes[j] * 8 / n);
    csv_figure(csv, k, peer->name, "fpr", FIGURE(of_peer[j].fpr));
}

/* The kind's lines: its form rows beside each peer in turn (bloomkit's
 * figures repeated), then one line of sizes, FPRs and the note. */
static void report_duel(const kind_duel *d, const duel_keys *k, FILE *csv)
{
    bk_medians bk = { .insert = FIGURE(bk_insert) };
    char metric[64];
    for (int s = 0; s < SIDES; s++)
        for (int f = 0; f < OURS_FORMS; f++) {
            bk.query[s][f] = FIGURE(bk_query[s][f]);
            snprintf(metric, sizeof metric, "%s_onekey_%s_ns", s == SIDE_PRESENT ? "pos" : "neg",
                     ours_form_metrics[f]);
            csv_figure(csv, k, d->kind_name, metric, bk.query[s][f]);
        }
    csv_figure(csv, k, d->kind_name, "onekey_insert_ns", bk.insert);
    size_t j = 0;
    do
        report_rows(d, j, &bk, k, csv);
    while (++j < d->peer_count);
    printf("%-8s %.2f bits/key, FPR %.3f%%", d->kind_name,
           (double)d->bk_bytes * 8 / (double)k->present->count, FIGURE(bk_fpr) * 100);
    for (j = 0; j < d->peer_count; j++)
        report_peer(d, j, k, csv);
    printf("%s%s\n", d->note[0] ? "; " : "", d->note);
}

/* ------------------------------------------------------------------ entry */

/* A duel of the kind against every peer of the build that meets it. */
static kind_duel new_duel(const char *kind_name, bk_kind kind)
{
    kind_duel d = { .kind_name = kind_name, .kind = kind };
    for (size_t i = 0; peers[i] != NULL; i++)
        if (strcmp(peers[i]->against, kind_name) == 0)
            d.peer[d.peer_count++] = peers[i];
    return d;
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
        duels[count++] = new_duel(table_kinds[i], kind);
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
        printf("  %-20s %-12s %7s %7s %7s %6s %6s %6s", "peer", "form", "ins", "+", "-", "r ins",
               "r +", "r -");
    printf("\n");
    for (size_t i = 0; i < count; i++)
        report_duel(&duels[i], &k, run->csv);
    return failed;
}
