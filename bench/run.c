/*
 * bench/run.c -- how bloomkit-bench measures (bench/run.h; what it times is
 * in bench/forms.c).
 *
 * A block is one key type and one n.  Its keys:
 *
 *   present      n keys, all added (counters 0..n-1 of bench/keys.c)
 *   sample       up to --queries of them, evenly spread: the present queries
 *   absent       --absent keys never added (counters from 2^48): the FPR
 *   absent_timed the first --queries of them: the absent queries of every
 *                form but those that run over every absent key
 *
 * Fill.  Every kind gets { .capacity = n, .fpr } (window kinds also
 * .window_keys = n, so nothing ages out).  A dynamic kind takes the n keys
 * in alternating chunks of 4,096: even chunks one precomputed hash per
 * bk_filter_add_hash call, odd chunks through bk_filter_add_batch from raw
 * keys (hashing included), so both insert forms see the same fill.  A
 * static kind is built from the whole key array (bk_filter_build).  A kind
 * that reports BK_EFULL before n keys (cuckoo) is rebuilt with 25% more
 * capacity, at most twice, and its row says so.
 *
 * Timing.  Every pass is timed in slices of 4,096 keys and reports its
 * median slice (bench.h: robust to preemption on a shared machine; for a
 * kind whose insert cost grows with the fill, such as cuckoo, the insert
 * figure is the cost around half fill).  The filters of a block are all
 * built first; then repetition r of every kind runs before repetition r + 1
 * of any, libbloom last in each round, so a stretch of slow memory spoils
 * one repetition of several kinds rather than every repetition of one, and
 * the median over --reps drops it.  Each repetition runs every query form
 * and then times one random line read in the filter's own bit array (bloom,
 * blocked, sbbf), so that a batch can be compared with the read timed right
 * after it.  Inserts are timed on the one fill (with --rebuild on every
 * repetition's fill).
 *
 * Limits.  After a block, one random line read in a fresh buffer of each
 * filter's size (bench/machine.c), dependent and independent, shared by
 * sizes within 10% of each other.  Huge pages: a :4k subject's filter and
 * buffer are allocated with BLOOMKIT_NO_HUGEPAGE set, which src/memory.c
 * reads at each large allocation.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "run.h"
#include "views.h"

#define INSERT_CHUNK BENCH_SLICE_KEYS
#define LIMIT_TOLERANCE 0.10
#define ABSENT_FIRST_INDEX ((uint64_t)1 << 48)
#define MAX_LIMITS (4 * MAX_SUBJECTS)

/* The keys of one block. */
typedef struct workload {
    key_type type;
    uint64_t n;
    key_set present;      /* n keys (a view into the largest set: not owned) */
    key_set sample;       /* up to --queries present keys, evenly spread */
    key_set absent;       /* never added (a view): the FPR is measured over all of them */
    key_set absent_timed; /* the first --queries of them */
} workload;

/* Precomputed hashes of a workload's query keys under one hasher. */
typedef struct hash_cache {
    bool valid;
    bk_hasher hasher;
    bk_hash *sample;
    bk_hash *absent; /* of absent_timed */
} hash_cache;

/* The machine's limits measured so far, by buffer size and page size. */
typedef struct limits_cache {
    memory_limits entries[MAX_LIMITS];
    bool no_hugepage[MAX_LIMITS];
    size_t count;
} limits_cache;

struct run_scratch {
    bool no_hugepage_everywhere; /* BLOOMKIT_NO_HUGEPAGE was set for the whole run */
    limits_cache limits;
    hash_cache hashes;
    bk_hash chunk_hashes[INSERT_CHUNK];
    bench_block block;
};

/* ---------------------------------------------------------------- timing */

static double per_key(uint64_t begin, uint64_t end, size_t count)
{
    return count ? (double)(end - begin) / (double)count : NAN;
}

/* The end of the slice starting at `start`: BENCH_SLICE_KEYS on, but not
 * past `count` nor across `prefix`. */
static size_t slice_end(size_t start, size_t count, size_t prefix)
{
    size_t limit = start < prefix ? prefix : count;
    return limit - start < BENCH_SLICE_KEYS ? limit : start + BENCH_SLICE_KEYS;
}

/* Times one form over keys [0, count) in slices: the median ns per key.
 * *hits gets the hits over all of them, *prefix_hits those among the first
 * `prefix` (to compare with the forms that run over those only). */
static double time_form(const query_form_info *form, const void *queried, const query_keys *keys,
                        size_t count, size_t prefix, uint64_t *hits, uint64_t *prefix_hits)
{
    slice_times times;
    slice_times_init(&times, count);
    uint64_t found = 0, found_in_prefix = 0;
    for (size_t start = 0; start < count; start = slice_end(start, count, prefix)) {
        size_t end = slice_end(start, count, prefix);
        uint64_t begin = bench_now_ns();
        uint64_t slice_found = form->count_hits(queried, keys, start, end - start);
        slice_times_add(&times, begin, bench_now_ns(), end - start);
        found += slice_found;
        if (end <= prefix)
            found_in_prefix += slice_found;
    }
    *hits = found;
    *prefix_hits = found_in_prefix;
    return slice_times_median(&times);
}

/* ----------------------------------------------------------------- fills */

static bk_params params_for(uint64_t capacity, double fpr)
{
    /* window: nothing ages out during the run */
    return (bk_params){ .capacity = capacity,
                        .fpr = fpr,
                        .window_keys = capacity,
                        .hash_algorithm = bench_hash_algorithm };
}

/* Adds the keys in alternating chunks (the opening comment): the median
 * ns per key of each insert form. */
static bk_status fill_dynamic(bk_filter *filter, const key_set *keys, bk_hash *chunk_hashes,
                              double insert_ns[INSERT_FORM_COUNT])
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
    insert_ns[INSERT_ONE] = slice_times_median(&single);
    insert_ns[INSERT_BATCH] = slice_times_median(&batch);
    return status;
}

/* A filter of the kind holding every present key, and its insert times;
 * *capacity_scale > 1 when the kind needed room beyond n. */
static bk_status make_filter(bk_kind kind, unsigned flags, const workload *w, double fpr,
                             bk_hash *chunk_hashes, bk_filter **out,
                             double insert_ns[INSERT_FORM_COUNT], double *capacity_scale)
{
    *capacity_scale = 1.0;
    for (int attempt = 0; attempt < 3; attempt++) {
        bk_params params = params_for((uint64_t)(w->n * *capacity_scale), fpr);
        params.flags = flags;
        bk_status status;
        if (bk_kind_is_static(kind)) {
            uint64_t begin = bench_now_ns();
            status = bk_filter_build(kind, &params, w->present.keys, w->present.count, out);
            insert_ns[INSERT_BUILD] = per_key(begin, bench_now_ns(), w->present.count);
            return status;
        }
        status = bk_filter_create(kind, &params, out);
        if (status != BK_OK)
            return status;
        status = fill_dynamic(*out, &w->present, chunk_hashes, insert_ns);
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

/* The cache's hashes are those of the workload's query keys under `hasher`. */
static void ensure_hashes(hash_cache *cache, const bk_hasher *hasher, const workload *w)
{
    if (cache->valid && bk_hasher_equal(&cache->hasher, hasher))
        return;
    hash_keys(hasher, &w->sample, cache->sample);
    hash_keys(hasher, &w->absent_timed, cache->absent);
    cache->hasher = *hasher;
    cache->valid = true;
}

/* src/memory.c reads BLOOMKIT_NO_HUGEPAGE at each large allocation. */
static void set_hugepage_env(const struct run_scratch *scratch, bool no_hugepage)
{
    if (no_hugepage || scratch->no_hugepage_everywhere)
        setenv("BLOOMKIT_NO_HUGEPAGE", "1", 1);
    else
        unsetenv("BLOOMKIT_NO_HUGEPAGE");
}

/* ------------------------------------------------------- one repetition */

/* The figures of one repetition of one kind. */
typedef struct rep_figures {
    double insert_ns[INSERT_FORM_COUNT];
    double query_ns[SIDES][QUERY_FORM_COUNT];
    double own_read, fpr, huge_mb;
} rep_figures;

static void set_all_nan(double *values, size_t count)
{
    for (size_t i = 0; i < count; i++)
        values[i] = NAN;
}

/* Every figure NAN: what a repetition does not measure stays so. */
static void clear_figures(rep_figures *fig)
{
    set_all_nan(fig->insert_ns, INSERT_FORM_COUNT);
    set_all_nan(&fig->query_ns[0][0], SIDES * QUERY_FORM_COUNT);
    fig->own_read = fig->fpr = fig->huge_mb = NAN;
}

/* Every query form over the present and the absent keys: their times into
 * *fig, the FPR, and in *out the false negatives and whether the forms
 * disagree.  The forms on the handle run first, then those through the
 * view (where the kind has one). */
static void query_passes(const bk_filter *filter, const bench_view *view, const workload *w,
                         const hash_cache *hashes, rep_figures *fig, row *out)
{
    const query_keys present = { w->sample.keys, hashes->sample };
    const query_keys absent = { w->absent.keys, hashes->absent };
    uint64_t pos[QUERY_FORM_COUNT], neg[QUERY_FORM_COUNT];
    bool ran[QUERY_FORM_COUNT] = { false };
    for (int through_view = 0; through_view < 2; through_view++) {
        for (int f = 0; f < QUERY_FORM_COUNT; f++) {
            const query_form_info *form = &query_forms[f];
            if (form->through_view != (through_view != 0))
                continue;
            const void *queried = form->through_view ? (const void *)view : filter;
            if (queried == NULL)
                continue;
            uint64_t all;
            size_t absent_count = form->every_absent ? w->absent.count : w->absent_timed.count;
            fig->query_ns[SIDE_PRESENT][f] = time_form(form, queried, &present, w->sample.count,
                                                       w->sample.count, &all, &pos[f]);
            fig->query_ns[SIDE_ABSENT][f] = time_form(form, queried, &absent, absent_count,
                                                      w->absent_timed.count, &all, &neg[f]);
            if (form->every_absent)
                fig->fpr = (double)all / (double)w->absent.count;
            ran[f] = true;
        }
    }
    for (int f = 0; f < QUERY_FORM_COUNT; f++)
        if (ran[f] && (pos[f] != pos[FORM_HASH] || neg[f] != neg[FORM_HASH]))
            out->forms_disagree = true;
    out->false_negatives += w->sample.count - pos[FORM_HASH];
}

/* One independent random line read in the filter's own bit array, timed
 * between its query passes (bench/machine.c says why); NAN for kinds whose
 * view exposes no bit array. */
static double own_read_ns(const bench_view *view, int rep)
{
    const void *words;
    uint64_t bytes;
    if (view == NULL || !bench_view_bit_array(view, &words, &bytes))
        return NAN;
    return measure_independent_read_in(words, bytes, (uint64_t)rep + 2);
}

/* The median over repetitions of the double at `offset` in rep_figures. */
static double median_of(const rep_figures *figs, int count, size_t offset)
{
    double column[MAX_REPS];
    for (int r = 0; r < count; r++)
        memcpy(&column[r], (const char *)&figs[r] + offset, sizeof column[r]);
    return bench_median(column, (size_t)count);
}

#define QUERY_OFFSET(s, f) \
    (offsetof(rep_figures, query_ns) + sizeof(double) * ((size_t)(s)*QUERY_FORM_COUNT + (f)))

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
static bool fill_kind(kind_run *k, const workload *w, struct run_scratch *scratch, double fpr,
                      rep_figures *fig)
{
    bk_filter_free(k->filter);
    k->filter = NULL;
    set_hugepage_env(scratch, k->subject->no_hugepage);
    double huge_before = process_huge_mb();
    double scale;
    bk_status status = make_filter(k->subject->kind, k->subject->flags, w, fpr,
                                   scratch->chunk_hashes, &k->filter, fig->insert_ns, &scale);
    set_hugepage_env(scratch, false);
    if (status != BK_OK) {
        snprintf(k->out->note, sizeof k->out->note, "could not fill: %s", bk_strerror(status));
        k->out->ok = false;
        k->failed = true;
        return false;
    }
    if (scale != 1.0)
        snprintf(k->out->note, sizeof k->out->note, "BK_EFULL at capacity n: sized for %.2f n",
                 scale);
    k->huge_mb = process_huge_mb() - huge_before;
    return true;
}

/* One repetition: the query passes, then the read in the filter's own
 * memory (the filter is built on the first, or on each with --rebuild). */
static void repeat_kind(kind_run *k, int rep, const workload *w, const options *opts,
                        struct run_scratch *scratch)
{
    bench_progress("%s n=%llu %s: repetition %d/%d", key_type_name(w->type),
                   (unsigned long long)w->n, k->subject->name, rep + 1, opts->reps);
    rep_figures *fig = &k->figs[k->done];
    clear_figures(fig);
    if ((k->filter == NULL || opts->rebuild) && !fill_kind(k, w, scratch, opts->fpr, fig))
        return;
    k->done++;
    fig->huge_mb = k->huge_mb;
    ensure_hashes(&scratch->hashes, bk_filter_hasher(k->filter), w);
    bench_view view;
    bool has_view = bench_view_init(k->filter, key_type_bytes(w->type), &view);
    query_passes(k->filter, has_view ? &view : NULL, w, &scratch->hashes, fig, k->out);
    fig->own_read = own_read_ns(has_view ? &view : NULL, rep);
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
    for (int f = 0; f < INSERT_FORM_COUNT; f++)
        out->insert_ns[f] = median_of(
            figs, done, offsetof(rep_figures, insert_ns) + sizeof(double) * (size_t)f);
    out->own_read_ns = median_of(figs, done, offsetof(rep_figures, own_read));
    for (int s = 0; s < SIDES; s++) {
        for (int f = 0; f < QUERY_FORM_COUNT; f++) {
            out->query_ns[s][f] = median_of(figs, done, QUERY_OFFSET(s, f));
            if (!query_forms[f].per_read)
                continue;
            double ratios[MAX_REPS];
            for (int r = 0; r < done; r++)
                ratios[r] = figs[r].query_ns[s][f] / figs[r].own_read;
            out->per_own_read[s][f] = bench_median(ratios, (size_t)done);
        }
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

/* The row: medians over the repetitions (libbloom has one insert form and
 * one query form: one key per call); frees the filter. */
static void finish_libbloom(peer_run *p, const workload *w)
{
    row *out = p->out;
    libbloom_free(p->filter);
    p->filter = NULL;
    out->ok = true;
    if (p->failed)
        return;
    out->predicted_fpr = bk_predicted_fpr(w->n, out->bits, out->hashes);
    out->bits_per_key = (double)out->bytes * 8.0 / (double)w->n;
    out->insert_ns[INSERT_ONE] = bench_median(p->insert, (size_t)p->builds);
    out->query_ns[SIDE_PRESENT][FORM_RAW] = bench_median(p->pos, (size_t)p->done);
    out->query_ns[SIDE_ABSENT][FORM_RAW] = bench_median(p->neg, (size_t)p->done);
    out->fpr = bench_median(p->fpr, (size_t)p->done);
    out->ok = out->false_negatives == 0;
    if (!out->ok)
        snprintf(out->note, sizeof out->note, "FALSE NEGATIVES: %llu",
                 (unsigned long long)out->false_negatives);
}

/* ------------------------------------------------------- machine limits */

static const memory_limits no_limits = {
    .dependent_ns = NAN, .independent_ns = NAN, .keyed_ns = { NAN, NAN }, .huge_mb = NAN
};

/* The limits for a buffer of `bytes`, measured once per size (sizes within
 * LIMIT_TOLERANCE of one already measured share its figures). */
static memory_limits limits_for(struct run_scratch *scratch, uint64_t bytes, bool no_hugepage,
                                int reps)
{
    limits_cache *cache = &scratch->limits;
    for (size_t i = 0; i < cache->count; i++) {
        double ratio = (double)bytes / (double)cache->entries[i].bytes;
        if (cache->no_hugepage[i] == no_hugepage && ratio > 1 - LIMIT_TOLERANCE &&
            ratio < 1 + LIMIT_TOLERANCE)
            return cache->entries[i];
    }
    memory_limits limits = no_limits;
    limits.bytes = bytes;
    bench_progress("random-read limits in %.1f MiB%s", (double)bytes / 1048576.0,
                   no_hugepage ? " (4 KiB pages)" : "");
    set_hugepage_env(scratch, no_hugepage);
    int failed = measure_memory_limits(bytes, reps, &limits);
    set_hugepage_env(scratch, false);
    if (failed == 0 && cache->count < MAX_LIMITS) {
        cache->no_hugepage[cache->count] = no_hugepage;
        cache->entries[cache->count++] = limits;
    }
    return limits;
}

/* ---------------------------------------------------------------- blocks */

/*
 * Touches, then frees, memory for about 40 bits per key before the first
 * filter of a workload is made: the first filter a process places in
 * memory it never used can answer far slower than the same filter made
 * after another was freed (docs/PERFORMANCE.md, "Statistics").  This
 * narrows that effect; it does not remove it.
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

/* A row named after its subject, every figure NAN. */
static void init_row(row *r, const subject *s)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", s->name);
    r->bits_per_key = r->fpr = r->predicted_fpr = r->own_read_ns = r->huge_mb = NAN;
    set_all_nan(r->insert_ns, INSERT_FORM_COUNT);
    set_all_nan(&r->query_ns[0][0], SIDES * QUERY_FORM_COUNT);
    set_all_nan(&r->per_own_read[0][0], SIDES * QUERY_FORM_COUNT);
    r->limits = no_limits;
}

/* Every subject on one workload (the opening comment), then the block's
 * tables and CSV rows. */
static void measure_workload(bench_run *run, const workload *w)
{
    struct run_scratch *scratch = run->scratch;
    bench_block *b = &scratch->block;
    memset(b, 0, sizeof *b);
    b->type = w->type;
    b->n = w->n;
    b->sample_count = w->sample.count;
    b->absent_count = w->absent.count;
    scratch->hashes.valid = false;
    warm_memory(w->n);
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
        init_row(r, s);
        if (s->is_libbloom)
            peer.out = r;
        else
            kinds[kind_count++] = (kind_run){ .subject = s, .out = r, .huge_mb = NAN };
    }
    for (int rep = 0; rep < run->opts->reps; rep++) {
        for (size_t k = 0; k < kind_count; k++)
            if (!kinds[k].failed)
                repeat_kind(&kinds[k], rep, w, run->opts, scratch);
        if (peer.out != NULL && !peer.failed)
            repeat_libbloom(&peer, rep, w, run->opts);
    }
    for (size_t k = 0; k < kind_count; k++)
        finish_kind(&kinds[k], w);
    if (peer.out != NULL)
        finish_libbloom(&peer, w);
    for (size_t i = 0; i < b->count; i++) {
        row *r = &b->rows[i];
        if (r->bytes != 0)
            r->limits = limits_for(scratch, r->bytes, subjects[i]->no_hugepage, run->opts->reps);
        if (!r->ok) {
            bench_progress("%s: %s", r->name, r->note);
            run->exit_code = 1;
        }
    }
    report_block(b, run->csv);
    if (one_key_block(run, &w->present, &w->sample, &w->absent_timed) != 0)
        run->exit_code = 1;
}

static struct run_scratch *scratch_for(bench_run *run)
{
    if (run->scratch == NULL) {
        run->scratch = calloc(1, sizeof *run->scratch);
        if (run->scratch != NULL)
            run->scratch->no_hugepage_everywhere = getenv("BLOOMKIT_NO_HUGEPAGE") != NULL;
    }
    return run->scratch;
}

int run_key_type(bench_run *run, key_type type)
{
    const options *opts = run->opts;
    struct run_scratch *scratch = scratch_for(run);
    if (scratch == NULL)
        return -1;
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
    hash_cache *hashes = &scratch->hashes;
    hashes->sample = bench_alloc_array((max_sample + 1) * sizeof(bk_hash));
    size_t absent_timed = opts->absent < opts->queries ? opts->absent : opts->queries;
    hashes->absent = bench_alloc_array((absent_timed + 1) * sizeof(bk_hash));
    int result = hashes->sample && hashes->absent ? 0 : -1;
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
    free(hashes->sample);
    free(hashes->absent);
    hashes->sample = hashes->absent = NULL;
    key_set_free(&present);
    key_set_free(&absent);
    return result;
}

void run_free(bench_run *run)
{
    free(run->scratch);
    run->scratch = NULL;
}

/* ---------------------------------------------------------------- design */

/*
 * Designing a filter: microseconds per bk_filter_create for 1,000 keys at
 * the run's FPR (its sizing search and a small allocation, freed at once),
 * the median of 7 passes of 101 creates.  A storage engine makes a filter
 * per file; this is what the design costs apart from the memory.
 */
#define DESIGN_CREATES 101
#define DESIGN_PASSES 7

double design_us(const subject *s, double fpr)
{
    double pass_us[DESIGN_PASSES];
    for (int pass = 0; pass < DESIGN_PASSES; pass++) {
        uint64_t begin = bench_now_ns();
        for (int i = 0; i < DESIGN_CREATES; i++) {
            bk_params params = params_for(DESIGN_KEYS + (uint64_t)i, fpr);
            bk_filter *filter = NULL;
            if (bk_filter_create(s->kind, &params, &filter) != BK_OK)
                return NAN;
            bk_filter_free(filter);
        }
        pass_us[pass] = (double)(bench_now_ns() - begin) / 1e3 / DESIGN_CREATES;
    }
    return bench_median(pass_us, DESIGN_PASSES);
}
