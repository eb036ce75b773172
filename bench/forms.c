/*
 * bench/forms.c -- what bloomkit-bench times: the table of insert forms and
 * the table of query forms.  A query form is a loop over keys that counts
 * the hits; run.c times it in slices over present and absent keys, and
 * report.c prints its columns and CSV metrics from this table.
 *
 *   form    column  CSV metric       what one step does
 *   hash    hash    hash             bk_filter_contains_hash, precomputed hash
 *   hview   hview   hview            the kind's inline view on that hash
 *   raw     raw     raw              bk_filter_contains on the key bytes
 *                                    (hashing included: libbloom's bloom_check)
 *   view    view    view             the inline view on the key bytes
 *   batch   batch   batch            bk_filter_contains_batch, 1,024 bk_key per
 *                                    call; over every absent key (the FPR)
 *   hbat    hbat    hash_batch       bk_filter_contains_hash_batch, 1,024
 *                                    hashes per call
 *   pack    pack    packed_batch     bk_filter_contains_packed, 1,024 keys per
 *                                    call read straight from the key array
 *
 * The views (bench/views.h) exist for bloom, blocked, sbbf and the static
 * kinds; elsewhere those columns are "-".  Every form must count the same
 * hits on the same keys (run.c checks).  A new form is a line here and a
 * counting loop.
 */
#include "run.h"
#include "views.h"

#define QUERY_BATCH 1024

_Static_assert(BENCH_SLICE_KEYS % QUERY_BATCH == 0, "slices hold whole batch calls");

/* Keeps a batch's results alive: the compiler may not drop the stores. */
static volatile bool sink;

const insert_form_info insert_forms[INSERT_FORM_COUNT] = {
    [INSERT_ONE] = { "ins one", "insert_single" },
    [INSERT_BATCH] = { "ins bat", "insert_batch" },
    [INSERT_BUILD] = { "build", "build" },
};

/* One precomputed hash per bk_filter_contains_hash call. */
static uint64_t count_hash_calls(const void *filter, const query_keys *keys, size_t start,
                                 size_t count)
{
    const bk_hash *hashes = keys->hashes + start;
    uint64_t found = 0;
    for (size_t i = 0; i < count; i++)
        found += bk_filter_contains_hash(filter, hashes[i]);
    return found;
}

/* One precomputed hash per step through the filter's inline view. */
static uint64_t count_hash_view(const void *view, const query_keys *keys, size_t start,
                                size_t count)
{
    return bench_view_hash_hits(view, keys->hashes + start, count);
}

/* One raw key per bk_filter_contains call. */
static uint64_t count_raw_calls(const void *filter, const query_keys *keys, size_t start,
                                size_t count)
{
    const bk_key *batch = keys->keys + start;
    uint64_t found = 0;
    for (size_t i = 0; i < count; i++)
        found += bk_filter_contains(filter, batch[i].data, batch[i].len);
    return found;
}

/* One key per step through the filter's inline view. */
static uint64_t count_key_view(const void *view, const query_keys *keys, size_t start,
                               size_t count)
{
    return bench_view_hits(view, keys->keys + start, count);
}

/* bk_filter_contains_batch, QUERY_BATCH keys per call. */
static uint64_t count_key_batches(const void *filter, const query_keys *keys, size_t start,
                                  size_t count)
{
    bool results[QUERY_BATCH];
    uint64_t found = 0;
    for (size_t done = 0; done < count; done += QUERY_BATCH) {
        size_t n = count - done < QUERY_BATCH ? count - done : QUERY_BATCH;
        found += bk_filter_contains_batch(filter, keys->keys + start + done, n, results);
    }
    sink = results[0];
    return found;
}

/* bk_filter_contains_hash_batch, QUERY_BATCH hashes per call. */
static uint64_t count_hash_batches(const void *filter, const query_keys *keys, size_t start,
                                   size_t count)
{
    uint64_t found = 0;
    for (size_t done = 0; done < count; done += QUERY_BATCH) {
        size_t n = count - done < QUERY_BATCH ? count - done : QUERY_BATCH;
        found += bk_filter_contains_hash_batch(filter, keys->hashes + start + done, n, NULL);
    }
    return found;
}

/* bk_filter_contains_packed, QUERY_BATCH keys per call: the keys sit back
 * to back (bench/keys.c), so the first one's bytes and length are the
 * packed array and its width. */
static uint64_t count_packed_batches(const void *filter, const query_keys *keys, size_t start,
                                     size_t count)
{
    const uint8_t *bytes = keys->keys[start].data;
    size_t width = keys->keys[start].len;
    bool results[QUERY_BATCH];
    uint64_t found = 0;
    for (size_t done = 0; done < count; done += QUERY_BATCH) {
        size_t n = count - done < QUERY_BATCH ? count - done : QUERY_BATCH;
        found += bk_filter_contains_packed(filter, bytes + done * width, width, n, results);
    }
    sink = results[0];
    return found;
}

const query_form_info query_forms[QUERY_FORM_COUNT] = {
    [FORM_HASH] = { .column = "hash",
                    .width = 7,
                    .metric = "hash",
                    .count_hits = count_hash_calls },
    [FORM_HASH_VIEW] = { .column = "hview",
                         .width = 6,
                         .metric = "hview",
                         .through_view = true,
                         .count_hits = count_hash_view },
    [FORM_RAW] = { .column = "raw",
                   .width = 7,
                   .metric = "raw",
                   .abbrev = "raw",
                   .vs_peer = true,
                   .count_hits = count_raw_calls },
    [FORM_VIEW] = { .column = "view",
                    .width = 6,
                    .metric = "view",
                    .through_view = true,
                    .count_hits = count_key_view },
    [FORM_BATCH] = { .column = "batch",
                     .width = 7,
                     .metric = "batch",
                     .abbrev = "B",
                     .every_absent = true,
                     .per_read = true,
                     .vs_peer = true,
                     .count_hits = count_key_batches },
    [FORM_HASH_BATCH] = { .column = "hbat",
                          .width = 6,
                          .metric = "hash_batch",
                          .abbrev = "hB",
                          .per_read = true,
                          .count_hits = count_hash_batches },
    [FORM_PACKED] = { .column = "pack",
                      .width = 6,
                      .metric = "packed_batch",
                      .abbrev = "pB",
                      .per_read = true,
                      .count_hits = count_packed_batches },
};
