/*
 * tests/fuzz/fuzz_operations.c -- libFuzzer target over sequences of
 * operations on a filter of any kind, checked against a model of the keys
 * the filter must hold.
 *
 * The input picks a kind and its parameters (capacity, FPR or bits per key
 * or explicit m and k -- then, for the Bloom family, any capacity up to
 * 2^64 - 1 --, hash algorithm and seed, the concurrent flag, the kind's own
 * options), then up to MAX_STEPS operations: add, batch add
 * (of bk_key descriptors, or packed when the keys share a length), query,
 * batch query, remove, union with another filter of the same
 * parameters, intersection with a copy holding more keys, clear, and a
 * round trip through the file format.  Static kinds (xor, fuse) are built
 * from keys taken from the input, repeats included, and then only queried
 * and round-tripped.  The model lists the keys added,
 * with how many times each (for the kinds that remove) and when it was
 * last added (for the window kind).
 *
 * Properties checked after every step:
 *   - every status is one bloomkit documents (bk_strerror knows it);
 *   - no false negative: each key the model holds is found, one at a time
 *     and in a batch; for the window kind, the keys added within the last
 *     W insertions (the window's guarantee).  A refused add (BK_EFULL)
 *     therefore changes nothing the model can see;
 *   - a batch query answers exactly as the single queries, and so does a
 *     packed batch of the model's keys of one length;
 *   - a round trip through bk_filter_serialize and bk_filter_deserialize
 *     gives a filter that answers every probe as the original did and
 *     serialises to the same bytes; later steps use the reloaded filter;
 *   - no crash, leak or undefined behaviour (ASan, UBSan, LSan).
 *
 * Run: scripts/fuzz-smoke.sh runs it after the loader target; the ordinary
 * test suite replays the committed seeds, tests/fuzz/operations
 * (fuzz_operations_replay).  An injected bug is found within seconds from
 * those seeds: a union that skips half the words, or a counting filter
 * that decrements saturated counters.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_KEYS 128 /* model size; a full model stops tracking new keys */
#define MAX_STEPS 96
#define MAX_KEY_LEN 16
#define MAX_BATCH 24

static const uint8_t secret_key[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6 };

#include "fuzz_model.h"

static void forget_all(model *m)
{
    for (size_t i = 0; i < m->count; i++)
        m->keys[i].count = 0;
}

static bool must_be_present(const model *m, const model_key *key)
{
    if (key->count == 0)
        return false;
    if (m->window != 0)
        return m->insertions - key->last_added <= m->window; /* age < W */
    return true;
}

/* The model's keys of the first key's length, packed back to back, answer
 * as they do one at a time (bk_filter_contains_packed). */
static void check_packed(const bk_filter *filter, const model *m, const bool *single)
{
    if (m->count == 0)
        return;
    static uint8_t packed[MAX_KEYS * MAX_KEY_LEN];
    bool expected[MAX_KEYS], answers[MAX_KEYS];
    size_t width = m->keys[0].len, n = 0, present = 0;
    for (size_t i = 0; i < m->count; i++) {
        if (m->keys[i].len != width)
            continue;
        memcpy(packed + n * width, m->keys[i].bytes, width);
        expected[n] = single[i];
        present += single[i];
        n++;
    }
    CHECK(bk_filter_contains_packed(filter, packed, width, n, answers) == present);
    for (size_t i = 0; i < n; i++)
        CHECK(answers[i] == expected[i]);
}

/* Every key the model holds is found, singly and in batches of every
 * length up to MAX_BATCH, and batch answers equal single answers. */
static void check_model(const bk_filter *filter, const model *m)
{
    bk_key batch[MAX_KEYS];
    bool single[MAX_KEYS], batched[MAX_KEYS];
    size_t present = 0;
    for (size_t i = 0; i < m->count; i++) {
        batch[i] = (bk_key){ m->keys[i].bytes, m->keys[i].len };
        single[i] = bk_filter_contains(filter, batch[i].data, batch[i].len);
        present += single[i];
        if (must_be_present(m, &m->keys[i]))
            CHECK(single[i]);
    }
    CHECK(bk_filter_contains_batch(filter, batch, m->count, batched) == present);
    for (size_t i = 0; i < m->count; i++)
        CHECK(batched[i] == single[i]);
    check_packed(filter, m, single);
    size_t step = 1 + m->count % MAX_BATCH;
    for (size_t start = 0; start < m->count; start += step) {
        size_t n = m->count - start < step ? m->count - start : step;
        size_t found = bk_filter_contains_batch(filter, batch + start, n, batched);
        size_t expected = 0;
        for (size_t i = 0; i < n; i++) {
            CHECK(batched[i] == single[start + i]);
            expected += single[start + i];
        }
        CHECK(found == expected);
    }
}

/* Serialises, reloads, and checks that the copy answers as the original
 * and writes the same bytes; returns the copy (the original is freed), or
 * the original if the round trip could not be made (no memory). */
static bk_filter *round_trip(bk_filter *filter, const model *m, input *in)
{
    size_t size = 0;
    bk_status status = bk_filter_serialized_size(filter, &size);
    check_status(status);
    if (status != BK_OK)
        return filter;
    uint8_t *bytes = malloc(size), *again = malloc(size);
    bk_filter *copy = NULL;
    if (bytes == NULL || again == NULL)
        goto done;
    CHECK(bk_filter_serialize(filter, bytes, size, NULL) == BK_OK);
    bk_load_options options = { .secret_key = secret_key, .expected_kind = BK_KIND_NONE };
    status = bk_filter_deserialize(bytes, size, &options, &copy);
    check_status(status);
    if (status == BK_ENOMEM)
        goto done;
    CHECK(status == BK_OK);
    CHECK(bk_filter_serialize(copy, again, size, NULL) == BK_OK);
    CHECK(memcmp(bytes, again, size) == 0);
    for (size_t i = 0; i < m->count; i++)
        CHECK(bk_filter_contains(copy, m->keys[i].bytes, m->keys[i].len) ==
              bk_filter_contains(filter, m->keys[i].bytes, m->keys[i].len));
    for (int probe = 0; probe < 8; probe++) {
        model_key key = take_key(in, m);
        CHECK(bk_filter_contains(copy, key.bytes, key.len) ==
              bk_filter_contains(filter, key.bytes, key.len));
    }
done:
    free(bytes);
    free(again);
    if (copy == NULL)
        return filter;
    bk_filter_free(filter);
    return copy;
}

static void choose_params(input *in, bk_kind kind, bk_params *p)
{
    memset(p, 0, sizeof *p);
    p->capacity = 1 + take_uint(in, 2) % 2048;
    switch (take_byte(in) % 4) {
    case 0: p->fpr = 0.01; break;
    case 1: p->fpr = 1.0 / (double)(2 + take_byte(in)); break;
    case 2: p->bits_per_key = 1 + take_byte(in) % 40; break;
    default:
        p->bits = 1 + take_uint(in, 2);
        p->hashes = take_byte(in) % 20;
        /* the Bloom family sizes from m alone, so any capacity is cheap:
         * up to saturated designs of 2^64 - 1 keys on a few bits */
        if (kind >= BK_KIND_BLOOM && kind <= BK_KIND_COUNTING && p->hashes % 4 == 0)
            p->capacity = take_uint(in, 8) | 1;
    }
    p->hash_algorithm = (bk_hash_algorithm)(take_byte(in) % 4); /* the four algorithms */
    p->seed = take_uint(in, 8);
    p->secret_key = secret_key;
    p->flags = take_byte(in) % 4 == 0 ? BK_FLAG_CONCURRENT : 0;
    if (kind == BK_KIND_COUNTING && take_byte(in) % 2 == 0)
        p->flags |= BK_FLAG_COUNTING_CLASSIC; /* both layouts */
    p->fingerprint_bits = (unsigned[]){ 0, 4, 8, 9, 12, 13, 16, 17 }[take_byte(in) % 8];
    p->expansion = (double[]){ 0, 2, 4 }[take_byte(in) % 3];
    p->tightening = (double[]){ 0, 0.5, 0.8 }[take_byte(in) % 3];
    p->max_filters = take_byte(in) % 4;
    if (kind == BK_KIND_WINDOW) {
        p->window_keys = 1 + take_uint(in, 2) % 512;
        p->generations = take_byte(in) % 8;
    }
    if (kind == BK_KIND_QUOTIENT) {
        p->remainder_bits = take_byte(in) % 36; /* 0: from fpr; under 4 or over 32: refused */
        if (take_byte(in) % 2 == 0)
            p->flags |= BK_FLAG_AUTO_GROW;
        if (p->bits != 0 && take_byte(in) % 2 == 0)
            p->bits = p->hashes = 0; /* it sizes from (n, p) only */
    }
}

/* A static kind: built from keys of the input, then queried. */
static bk_filter *build_static(input *in, bk_kind kind, const bk_params *params, model *m)
{
    size_t count = take_byte(in) % (MAX_KEYS + 1);
    bk_key keys[MAX_KEYS];
    model_key taken[MAX_KEYS];
    for (size_t i = 0; i < count; i++) {
        taken[i] = take_key(in, m);
        keys[i] = (bk_key){ taken[i].bytes, taken[i].len };
        record_add(m, &taken[i]);
    }
    bk_filter *filter = NULL;
    bk_status status = bk_filter_build(kind, params, keys, count, &filter);
    check_status(status);
    CHECK(status == BK_OK || filter == NULL);
    return filter;
}

static void add_one(bk_filter *filter, model *m, const model_key *key)
{
    bk_status status = bk_filter_add(filter, key->bytes, key->len, NULL);
    check_status(status);
    if (status == BK_OK)
        record_add(m, key);
}

static void add_batch(bk_filter *filter, model *m, input *in)
{
    size_t n = take_byte(in) % (MAX_BATCH + 1);
    model_key taken[MAX_BATCH];
    bk_key keys[MAX_BATCH];
    for (size_t i = 0; i < n; i++) {
        taken[i] = take_key(in, m);
        keys[i] = (bk_key){ taken[i].bytes, taken[i].len };
    }
    /* keys of one length and an odd count: the packed form */
    bool one_length = true;
    static uint8_t packed[MAX_BATCH * MAX_KEY_LEN];
    for (size_t i = 0; i < n; i++) {
        one_length = one_length && keys[i].len == keys[0].len;
        if (one_length)
            memcpy(packed + i * keys[0].len, keys[i].data, keys[0].len);
    }
    size_t fresh = 0;
    bk_status status = n % 2 == 1 && one_length
                           ? bk_filter_add_packed(filter, packed, keys[0].len, n, &fresh)
                           : bk_filter_add_batch(filter, keys, n, &fresh);
    check_status(status);
    /* On an error the keys before the failing one are in; which one failed
     * is not reported, so the model takes none of them (fewer checks). */
    if (status == BK_OK)
        for (size_t i = 0; i < n; i++)
            record_add(m, &taken[i]);
}

static void remove_one(bk_filter *filter, model *m, input *in)
{
    if (m->count == 0)
        return;
    model_key *key = &m->keys[take_byte(in) % m->count];
    if (key->count == 0)
        return; /* remove is only defined for keys known to be present */
    bk_status status = bk_filter_remove(filter, key->bytes, key->len);
    check_status(status);
    if (status == BK_OK)
        key->count--;
    else
        CHECK(status == BK_EUNSUPPORTED || status == BK_EIMMUTABLE);
}

/* Union with a second filter of the same parameters holding other keys
 * from the input: afterwards both key sets must be found. */
static void union_with_other(bk_filter *filter, const bk_params *params, model *m, input *in)
{
    bk_filter *other = NULL;
    bk_status status = bk_filter_create(m->kind, params, &other);
    check_status(status);
    if (status != BK_OK)
        return;
    size_t n = take_byte(in) % (MAX_BATCH + 1);
    model_key taken[MAX_BATCH];
    size_t added = 0;
    for (size_t i = 0; i < n; i++) {
        taken[added] = take_key(in, m);
        status = bk_filter_add(other, taken[added].bytes, taken[added].len, NULL);
        check_status(status);
        added += status == BK_OK;
    }
    status = bk_filter_union(filter, other);
    check_status(status);
    if (status == BK_OK)
        for (size_t i = 0; i < added; i++)
            record_add(m, &taken[i]);
    bk_filter_free(other);
}

/* Intersection with a copy that holds more keys: the filter's own keys
 * are in both, so all of them must stay. */
static void intersect_with_superset(bk_filter *filter, const model *m, input *in)
{
    bk_filter *other = NULL;
    bk_status status = bk_filter_copy(filter, &other);
    check_status(status);
    if (status != BK_OK)
        return;
    size_t n = take_byte(in) % (MAX_BATCH + 1);
    for (size_t i = 0; i < n; i++) {
        model_key key = take_key(in, m);
        check_status(bk_filter_add(other, key.bytes, key.len, NULL));
    }
    check_status(bk_filter_intersect(filter, other));
    bk_filter_free(other);
}

/* One key queried alone and as a batch of one: the same answer. */
static void query_one(const bk_filter *filter, const model *m, input *in)
{
    model_key key = take_key(in, m);
    bool once = bk_filter_contains(filter, key.bytes, key.len);
    bk_key as_batch = { key.bytes, key.len };
    bool batched = !once;
    CHECK(bk_filter_contains_batch(filter, &as_batch, 1, &batched) == (size_t)once);
    CHECK(batched == once);
}

static void clear_sometimes(bk_filter *filter, model *m, input *in)
{
    if (take_byte(in) % 4 != 0)
        return;
    bk_status status = bk_filter_clear(filter);
    check_status(status);
    if (status == BK_OK)
        forget_all(m);
}

/* One operation chosen by the input; returns the filter to go on with (a
 * round trip replaces it with its reloaded copy). */
static bk_filter *run_step(bk_filter *filter, const bk_params *params, model *m, input *in)
{
    bool is_static = bk_kind_is_static(m->kind);
    switch (take_byte(in) % 10) {
    case 0:
    case 1: {
        model_key key = take_key(in, m);
        if (is_static)
            CHECK(bk_filter_add(filter, key.bytes, key.len, NULL) == BK_EIMMUTABLE);
        else
            add_one(filter, m, &key);
        break;
    }
    case 2:
        if (!is_static)
            add_batch(filter, m, in);
        break;
    case 3: query_one(filter, m, in); break;
    case 4: remove_one(filter, m, in); break;
    case 5:
        if (!is_static)
            union_with_other(filter, params, m, in);
        break;
    case 6:
        if (!is_static)
            intersect_with_superset(filter, m, in);
        break;
    case 7: clear_sometimes(filter, m, in); break;
    default: filter = round_trip(filter, m, in);
    }
    return filter;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = { data, size, 0 };
    static model m;
    memset(&m, 0, sizeof m);
    /* Every kind of the registry: byte b picks the (b mod count)-th. */
    bk_kind kinds[64];
    size_t kind_count = bk_kind_list(kinds, sizeof kinds / sizeof kinds[0]);
    if (kind_count > sizeof kinds / sizeof kinds[0])
        kind_count = sizeof kinds / sizeof kinds[0];
    m.kind = kinds[take_byte(&in) % kind_count];
    bk_params params;
    choose_params(&in, m.kind, &params);
    bk_filter *filter = NULL;
    if (bk_kind_is_static(m.kind)) {
        filter = build_static(&in, m.kind, &params, &m);
    } else {
        bk_status status = bk_filter_create(m.kind, &params, &filter);
        check_status(status);
    }
    if (filter == NULL)
        return 0;
    if (m.kind == BK_KIND_WINDOW)
        m.window = params.window_keys;
    check_model(filter, &m);
    for (int step = 0; step < MAX_STEPS && !used_up(&in); step++) {
        filter = run_step(filter, &params, &m, &in);
        check_model(filter, &m);
    }
    bk_filter_free(filter);
    return 0;
}
