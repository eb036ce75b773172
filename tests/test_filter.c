/*
 * tests/test_filter.c -- the bk_filter handle over every kind: names,
 * dispatch, batches against single calls, and refusals that change nothing.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "roundtrip.h"
#include "cpu.h"
#include "filter.h"

/* Every kind of this build, from the registry (filled by make_keys). */
static bk_kind every_kind[64];
static size_t kind_count;
#define KIND_COUNT kind_count

enum { KEYS = 3000, ABSENT = 3000 };

static bk_key keys[KEYS + ABSENT];
static char text[KEYS + ABSENT][24];

static int make_keys(void **state)
{
    (void)state;
    kind_count = bk_kind_list(every_kind, sizeof every_kind / sizeof every_kind[0]);
    if (kind_count > sizeof every_kind / sizeof every_kind[0])
        return -1;
    for (size_t i = 0; i < KEYS + ABSENT; i++) {
        keys[i].data = text[i];
        keys[i].len = (size_t)snprintf(text[i], sizeof text[i], "%s:%zu",
                                       i < KEYS ? "in" : "out", i);
    }
    return 0;
}

/* A filter of `kind` holding keys[0..KEYS). */
static bk_filter *filter_of(bk_kind kind)
{
    bk_params params = { .capacity = KEYS, .fpr = 0.01, .window_keys = KEYS };
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_build(kind, &params, keys, KEYS, &filter), BK_OK);
    assert_int_equal(bk_filter_kind(filter), kind);
    return filter;
}

static void test_names_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < KIND_COUNT; i++) {
        assert_true(bk_kind_available(every_kind[i]));
        bk_kind back = BK_KIND_NONE;
        assert_int_equal(bk_kind_from_name(bk_kind_name(every_kind[i]), &back), BK_OK);
        assert_int_equal(back, every_kind[i]);
    }
    bk_kind untouched = BK_KIND_BLOOM;
    assert_int_equal(bk_kind_from_name("no-such-kind", &untouched), BK_EKIND);
    assert_int_equal(untouched, BK_KIND_BLOOM);
    assert_null(bk_kind_name((bk_kind)999));
    assert_false(bk_kind_available(BK_KIND_NONE));
    assert_true(bk_kind_is_static(BK_KIND_FUSE8));
    assert_false(bk_kind_is_static(BK_KIND_BLOOM));
}

/* bk_kind_list: the registry's kinds, each once, all available, the first
 * `capacity` of them written and the count returned whatever the capacity;
 * bk_kind_name is NULL exactly for a value with no kind in this build. */
static void test_kind_list(void **state)
{
    (void)state;
    assert_true(KIND_COUNT >= 11);
    assert_int_equal(bk_kind_list(NULL, 0), KIND_COUNT);
    bk_kind first[2] = { BK_KIND_NONE, (bk_kind)77 };
    assert_int_equal(bk_kind_list(first, 1), KIND_COUNT);
    assert_int_equal(first[0], every_kind[0]);
    assert_int_equal(first[1], (bk_kind)77); /* beyond the capacity: untouched */
    for (size_t i = 0; i < KIND_COUNT; i++)
        for (size_t j = i + 1; j < KIND_COUNT; j++)
            assert_int_not_equal(every_kind[i], every_kind[j]);
    size_t named = 0;
    for (int value = 0; value < 256; value++) {
        bool listed = false;
        for (size_t i = 0; i < KIND_COUNT; i++)
            listed |= every_kind[i] == (bk_kind)value;
        assert_int_equal(bk_kind_available((bk_kind)value), listed);
        assert_int_equal(bk_kind_name((bk_kind)value) != NULL, listed);
        named += bk_kind_name((bk_kind)value) != NULL;
    }
    assert_int_equal(named, KIND_COUNT);
}

/* Every registered table fills what the handle calls without a NULL check
 * (src/filter.h, "Adding a kind"): create or build, destroy, copy, hasher,
 * contains_hash and its batch, stats, design, the file hooks; a unique
 * name and kind value; is_static exactly when the kind builds, and then no
 * create and no add. */
static void test_every_registered_kind_fills_the_required_ops(void **state)
{
    (void)state;
    for (size_t i = 0; i < KIND_COUNT; i++) {
        const bk_kind_ops *ops = bk_kind_ops_for(every_kind[i]);
        assert_non_null(ops);
        assert_int_equal(ops->kind, every_kind[i]);
        assert_non_null(ops->name);
        assert_true(ops->name[0] != '\0');
        assert_string_equal(bk_kind_name(every_kind[i]), ops->name);
        if ((ops->create == NULL) == (ops->build == NULL))
            fail_msg("%s: needs exactly one of create and build", ops->name);
        assert_int_equal(ops->is_static, ops->build != NULL);
        if (ops->is_static)
            assert_true(ops->add_hash == NULL && ops->add_hash_batch == NULL &&
                        ops->remove_hash == NULL && ops->clear == NULL);
        else
            assert_non_null(ops->add_hash);
        assert_int_equal(bk_kind_is_static(every_kind[i]), ops->is_static);
        assert_non_null(ops->destroy);
        assert_non_null(ops->copy);
        assert_non_null(ops->hasher);
        assert_non_null(ops->contains_hash);
        assert_non_null(ops->contains_hash_batch);
        assert_non_null(ops->stats);
        assert_non_null(ops->design);
        assert_non_null(ops->params_size);
        assert_non_null(ops->write_params);
        assert_non_null(ops->payload_size);
        assert_non_null(ops->write_payload);
        assert_non_null(ops->read);
        for (size_t j = i + 1; j < KIND_COUNT; j++) {
            const bk_kind_ops *other = bk_kind_ops_for(every_kind[j]);
            assert_true(other != ops);
            assert_int_not_equal(other->kind, ops->kind);
            if (strcmp(other->name, ops->name) == 0)
                fail_msg("two kinds named %s", ops->name);
        }
    }
}

/* bk_filter_object_of: the handle's object for its own kind, NULL for any
 * other kind and for a NULL handle. */
static void test_object_of_checks_the_kind(void **state)
{
    (void)state;
    for (size_t i = 0; i < KIND_COUNT; i++) {
        bk_filter *filter = filter_of(every_kind[i]);
        void *object = bk_filter_object_of(filter, every_kind[i]);
        assert_non_null(object);
        assert_ptr_equal(bk_filter_ops(filter)->hasher(object), bk_filter_hasher(filter));
        for (size_t j = 0; j < KIND_COUNT; j++)
            if (j != i)
                assert_null(bk_filter_object_of(filter, every_kind[j]));
        assert_null(bk_filter_object_of(filter, BK_KIND_NONE));
        assert_null(bk_filter_object_of(NULL, every_kind[i]));
        bk_filter_free(filter);
    }
}

static void test_every_kind_finds_its_keys(void **state)
{
    (void)state;
    static bool batch[KEYS + ABSENT];
    for (size_t i = 0; i < KIND_COUNT; i++) {
        bk_filter *filter = filter_of(every_kind[i]);
        size_t present = bk_filter_contains_batch(filter, keys, KEYS + ABSENT, batch);
        size_t false_positives = 0;
        for (size_t j = 0; j < KEYS + ABSENT; j++) {
            bool single = bk_filter_contains(filter, keys[j].data, keys[j].len);
            assert_int_equal(batch[j], single); /* batch and single agree */
            if (j < KEYS)
                assert_true(single); /* no false negatives */
            else
                false_positives += single;
        }
        assert_int_equal(present, KEYS + false_positives);
        /* FPR at most 1% (all kinds are sized for it or better): 4 sigma above */
        if (false_positives > ABSENT * 0.01 + 4 * sqrt(ABSENT * 0.01))
            fail_msg("%s: %zu false positives in %d", bk_kind_name(every_kind[i]),
                     false_positives, ABSENT);
        bk_stats stats;
        bk_filter_stats(filter, &stats);
        assert_int_equal(stats.kind, every_kind[i]);
        assert_true(stats.bytes > 0);
        bk_stats design;
        bk_params params = { .capacity = KEYS, .fpr = 0.01, .window_keys = KEYS };
        assert_int_equal(bk_kind_design(every_kind[i], &params, &design), BK_OK);
        assert_int_equal(design.kind, every_kind[i]);
        bk_filter_free(filter);
    }
}

/* Batches of every length around the kinds' prefetch distances (a ring of
 * 64 lines for blocked and sbbf, src/prefetch.h; 8 or 32 keys elsewhere)
 * answer exactly as single queries, for every kind. */
static void test_batch_lengths_match_single_queries(void **state)
{
    (void)state;
    static bool batch[KEYS + ABSENT];
    const size_t lengths[] = {
        0, 1, 5, 15, 16, 17, 47, 48, 49, 63, 64, 65, 127, 128, 129, 1001
    };
    for (size_t i = 0; i < KIND_COUNT; i++) {
        bk_filter *filter = filter_of(every_kind[i]);
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            /* start inside the present keys so the batch mixes both answers */
            const bk_key *first = keys + KEYS - lengths[l] / 2;
            memset(batch, 0, sizeof batch);
            size_t present = bk_filter_contains_batch(filter, first, lengths[l], batch);
            size_t expected = 0;
            for (size_t j = 0; j < lengths[l]; j++) {
                bool single = bk_filter_contains(filter, first[j].data, first[j].len);
                assert_int_equal(batch[j], single);
                expected += single;
            }
            assert_int_equal(present, expected);
        }
        bk_filter_free(filter);
    }
}

/* The hash-batch forms answer as the key forms, for every kind and for
 * every batch length around the pipeline's stages; results may be NULL. */
static void test_hash_batches_match_key_batches(void **state)
{
    (void)state;
    static bool by_key[KEYS + ABSENT], by_hash[KEYS + ABSENT];
    static bk_hash hashes[KEYS + ABSENT];
    const size_t lengths[] = { 0, 1, 16, 17, 48, 49, 65, 1001 };
    for (size_t i = 0; i < KIND_COUNT; i++) {
        bk_filter *filter = filter_of(every_kind[i]);
        for (size_t j = 0; j < KEYS + ABSENT; j++)
            hashes[j] = bk_filter_hash(filter, keys[j].data, keys[j].len);
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            size_t first = KEYS - lengths[l] / 2;
            size_t present = bk_filter_contains_batch(filter, keys + first, lengths[l], by_key);
            memset(by_hash, 0, sizeof by_hash);
            assert_int_equal(
                bk_filter_contains_hash_batch(filter, hashes + first, lengths[l], by_hash),
                present);
            assert_memory_equal(by_key, by_hash, lengths[l]);
            assert_int_equal(
                bk_filter_contains_hash_batch(filter, hashes + first, lengths[l], NULL),
                present);
        }
        bk_filter_free(filter);
    }
}

/* Batches of every length around the kinds' prefetch distances and the
 * key chunk (BK_KEY_CHUNK, 1024) answer as single queries do, from keys and
 * from hashes. */
static void check_batch_lengths(const bk_filter *filter, const bk_key *probe,
                                const bk_hash *hashes, size_t count)
{
    static bool by_key[2048], by_hash[2048];
    const size_t lengths[] = { 1, 16, 47, 48, 49, 63, 64, 65, 1001, 1023, 1024, 1025, 2048 };
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0] && lengths[l] <= count; l++) {
        size_t present = bk_filter_contains_batch(filter, probe, lengths[l], by_key);
        assert_int_equal(bk_filter_contains_hash_batch(filter, hashes, lengths[l], by_hash),
                         present);
        size_t expected = 0;
        for (size_t j = 0; j < lengths[l]; j++) {
            bool single = bk_filter_contains(filter, probe[j].data, probe[j].len);
            assert_int_equal(by_key[j], single);
            assert_int_equal(by_hash[j], single);
            expected += single;
        }
        assert_int_equal(present, expected);
    }
}

/* Filters of more than 1 MiB, beyond the caches of small cores: batches
 * answer as single queries do there too. */
static void check_batches_match_single(bk_filter *filter, const bk_key *probe, size_t count)
{
    static bk_hash hashes[2048];
    assert_true(count <= 2048);
    for (size_t i = 0; i < count; i++)
        hashes[i] = bk_filter_hash(filter, probe[i].data, probe[i].len);
    check_batch_lengths(filter, probe, hashes, count);
}

static void test_batches_of_big_filters(void **state)
{
    (void)state;
    /* fuse8 takes 1.13 bytes per key: more than the core's L2, where its
     * batches prefetch (src/fuse.c) */
    const size_t big_count = 2 * bk_cpu()->l2_bytes;
    /* probe: keys[KEYS - 1024 .. KEYS + 1024), half present, half absent */
    const bk_key *probe = keys + KEYS - 1024;
    const bk_kind sized[] = { BK_KIND_BLOCKED, BK_KIND_SBBF };
    for (size_t i = 0; i < sizeof sized / sizeof sized[0]; i++) {
        bk_params params = { .capacity = KEYS, .bits = (uint64_t)1 << 24, .hashes = 8 };
        bk_filter *filter;
        assert_int_equal(bk_filter_create(sized[i], &params, &filter), BK_OK);
        bk_stats stats;
        bk_filter_stats(filter, &stats);
        assert_true(stats.bytes >= ((uint64_t)1 << 20));
        assert_int_equal(bk_filter_add_batch(filter, keys, KEYS, NULL), BK_OK);
        check_batches_match_single(filter, probe, 2048);
        bk_filter_free(filter);
    }
    uint64_t *values = malloc(big_count * sizeof *values);
    bk_key *big = malloc(big_count * sizeof *big);
    assert_non_null(values);
    assert_non_null(big);
    for (size_t i = 0; i < big_count; i++) {
        values[i] = i * 0x9e3779b97f4a7c15ULL;
        big[i] = (bk_key){ &values[i], sizeof values[i] };
    }
    bk_params params = { .capacity = big_count };
    bk_filter *fuse;
    assert_int_equal(bk_filter_build(BK_KIND_FUSE8, &params, big, big_count - 1024, &fuse),
                     BK_OK);
    bk_stats stats;
    bk_filter_stats(fuse, &stats);
    assert_true(stats.bytes > bk_cpu()->l2_bytes);
    check_batches_match_single(fuse, big + big_count - 2048, 2048);
    bk_filter_free(fuse);
    free(big);
    free(values);
}

/* add_hash_batch fills a filter exactly as add_batch does. */
static void test_add_hash_batch_matches_add_batch(void **state)
{
    (void)state;
    static bk_hash hashes[KEYS];
    const bk_kind kinds[] = { BK_KIND_BLOOM, BK_KIND_BLOCKED, BK_KIND_SBBF, BK_KIND_CUCKOO,
                              BK_KIND_QUOTIENT };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        bk_params params = { .capacity = KEYS, .fpr = 0.01 };
        bk_filter *by_key, *by_hash;
        assert_int_equal(bk_filter_create(kinds[i], &params, &by_key), BK_OK);
        assert_int_equal(bk_filter_create(kinds[i], &params, &by_hash), BK_OK);
        for (size_t j = 0; j < KEYS; j++)
            hashes[j] = bk_filter_hash(by_hash, keys[j].data, keys[j].len);
        size_t fresh_key = 0, fresh_hash = 0;
        assert_int_equal(bk_filter_add_batch(by_key, keys, KEYS, &fresh_key), BK_OK);
        assert_int_equal(bk_filter_add_hash_batch(by_hash, hashes, KEYS, &fresh_hash), BK_OK);
        assert_int_equal(fresh_key, fresh_hash);
        assert_true(fresh_key > KEYS * 9 / 10);
        for (size_t j = 0; j < KEYS + ABSENT; j++)
            assert_int_equal(bk_filter_contains(by_key, keys[j].data, keys[j].len),
                             bk_filter_contains(by_hash, keys[j].data, keys[j].len));
        bk_filter_free(by_key);
        bk_filter_free(by_hash);
    }
    assert_int_equal(bk_filter_add_hash_batch(NULL, hashes, 1, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_contains_hash_batch(NULL, hashes, 1, NULL), 0);
    /* NULL hashes with a count: refused, nothing changes */
    bk_params params = { .capacity = KEYS, .fpr = 0.01 };
    bk_filter *empty;
    assert_int_equal(bk_filter_create(BK_KIND_BLOCKED, &params, &empty), BK_OK);
    size_t untouched = 77;
    assert_int_equal(bk_filter_add_hash_batch(empty, NULL, 5, &untouched), BK_EINVAL);
    assert_int_equal(untouched, 77);
    assert_int_equal(bk_filter_contains_hash_batch(empty, NULL, 5, NULL), 0);
    assert_int_equal(bk_filter_add_hash_batch(empty, NULL, 0, &untouched), BK_OK);
    assert_int_equal(untouched, 0);
    bk_stats stats;
    bk_filter_stats(empty, &stats);
    assert_int_equal(stats.keys_added, 0);
    bk_filter_free(empty);
}

/* Serialises a filter (for byte-for-byte comparisons); the caller frees. */
static uint8_t *serialized(const bk_filter *filter, size_t *size)
{
    assert_int_equal(bk_filter_serialized_size(filter, size), BK_OK);
    uint8_t *bytes = malloc(*size);
    assert_non_null(bytes);
    assert_int_equal(bk_filter_serialize(filter, bytes, *size, NULL), BK_OK);
    return bytes;
}

/* build_hashes over the keys' hashes makes bk_filter_build's filter, byte
 * for byte, for every kind (static: built from the same hashes; dynamic:
 * the same adds), with a seed and with duplicates. */
static void test_build_hashes_matches_build(void **state)
{
    (void)state;
    enum { DUPLICATED = KEYS + 100 };
    static bk_key with_duplicates[DUPLICATED];
    static bk_hash hashes[DUPLICATED];
    memcpy(with_duplicates, keys, KEYS * sizeof *keys);
    memcpy(with_duplicates + KEYS, keys, 100 * sizeof *keys);
    for (size_t i = 0; i < KIND_COUNT; i++) {
        bk_params params = { .capacity = KEYS, .fpr = 0.01, .window_keys = KEYS, .seed = 42 };
        if (every_kind[i] == BK_KIND_SBBF)
            params.hash_algorithm = BK_HASH_XXH64; /* its default: see below */
        bk_hasher hasher;
        assert_int_equal(bk_hasher_from_params(&hasher, &params), BK_OK);
        for (size_t j = 0; j < DUPLICATED; j++)
            hashes[j] = bk_hash_key(&hasher, with_duplicates[j].data, with_duplicates[j].len);
        bk_filter *by_key, *by_hash;
        assert_int_equal(
            bk_filter_build(every_kind[i], &params, with_duplicates, DUPLICATED, &by_key),
            BK_OK);
        assert_int_equal(
            bk_filter_build_hashes(every_kind[i], &params, hashes, DUPLICATED, &by_hash), BK_OK);
        size_t key_size, hash_size;
        uint8_t *key_bytes = serialized(by_key, &key_size);
        uint8_t *hash_bytes = serialized(by_hash, &hash_size);
        assert_int_equal(key_size, hash_size);
        if (memcmp(key_bytes, hash_bytes, key_size) != 0)
            fail_msg("%s: build_hashes differs from build", bk_kind_name(every_kind[i]));
        for (size_t j = 0; j < KEYS; j++)
            assert_true(bk_filter_contains(by_hash, keys[j].data, keys[j].len));
        free(key_bytes);
        free(hash_bytes);
        bk_filter_free(by_key);
        bk_filter_free(by_hash);
    }
    bk_params params = { .capacity = KEYS, .fpr = 0.01 };
    bk_filter *untouched = (bk_filter *)&params;
    assert_int_equal(bk_filter_build_hashes(BK_KIND_FUSE8, &params, NULL, 3, &untouched),
                     BK_EINVAL);
    assert_int_equal(bk_filter_build_hashes(BK_KIND_FUSE8, NULL, hashes, 3, &untouched),
                     BK_EINVAL);
    assert_int_equal(bk_filter_build_hashes((bk_kind)999, &params, hashes, 3, &untouched),
                     BK_EKIND);
    /* sbbf's default hash is XXH64, not the XXH3 the params name */
    assert_int_equal(bk_filter_build_hashes(BK_KIND_SBBF, &params, hashes, 3, &untouched),
                     BK_EINVAL);
    assert_ptr_equal(untouched, (bk_filter *)&params);
    bk_filter *empty;
    assert_int_equal(bk_filter_build_hashes(BK_KIND_FUSE8, &params, NULL, 0, &empty), BK_OK);
    assert_false(bk_filter_contains(empty, "in:1", 4));
    bk_filter_free(empty);
}

static void test_batch_with_a_bad_key_changes_nothing(void **state)
{
    (void)state;
    bk_params params = { .capacity = 100, .fpr = 0.01 };
    bk_filter *filter;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &params, &filter), BK_OK);
    bk_key batch[600];
    for (size_t i = 0; i < 600; i++)
        batch[i] = keys[i];
    batch[599].data = NULL; /* invalid: NULL with a length, in a later chunk */
    size_t fresh = 12345;
    assert_int_equal(bk_filter_add_batch(filter, batch, 600, &fresh), BK_EINVAL);
    assert_int_equal(fresh, 12345);
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    assert_int_equal(stats.keys_added, 0);
    assert_true(stats.fill_ratio == 0.0);
    assert_int_equal(bk_filter_contains_batch(filter, batch, 600, NULL), 0);
    bk_filter *built = (bk_filter *)0x1;
    assert_int_equal(bk_filter_build(BK_KIND_FUSE8, &params, batch, 600, &built), BK_EINVAL);
    assert_int_equal(bk_filter_build(BK_KIND_FUSE8, &params, batch, SIZE_MAX / 4, &built),
                     BK_ERANGE);
    assert_ptr_equal(built, (bk_filter *)0x1);
    bk_filter_free(filter);
}

/* Packed keys for the packed batches: key i is `width` bytes of a mix of
 * i, stored back to back, with a bk_key of each for the key batches. */
enum { PACKED_KEYS = 2 * KEYS, PACKED_MAX_WIDTH = 16 };
static uint8_t packed_bytes[PACKED_KEYS * PACKED_MAX_WIDTH];
static bk_key packed_keys[PACKED_KEYS];

static void make_packed_keys(size_t width)
{
    for (size_t i = 0; i < PACKED_KEYS * width; i++) {
        uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ULL; /* splitmix64's finaliser */
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        packed_bytes[i] = (uint8_t)(x ^ (x >> 31));
    }
    for (size_t i = 0; i < PACKED_KEYS; i++)
        packed_keys[i] = (bk_key){ packed_bytes + i * width, width };
}

/* Packed batches answer as key batches over the same keys, for every kind
 * (filters holding the first KEYS keys), widths that take the vector paths
 * (8, 16) and one that does not (5), and lengths around the eight-key step
 * and the key chunk. */
static void test_packed_batches_match_key_batches(void **state)
{
    (void)state;
    static bool by_key[2 * KEYS], by_packed[2 * KEYS];
    const size_t widths[] = { 5, 8, 16 };
    const size_t lengths[] = { 0, 1, 7, 8, 9, 1023, 1024, 1025, 2 * KEYS - 1, 2 * KEYS };
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        make_packed_keys(widths[w]);
        for (size_t i = 0; i < KIND_COUNT; i++) {
            bk_params params = { .capacity = KEYS, .fpr = 0.01, .window_keys = KEYS };
            bk_filter *filter;
            assert_int_equal(bk_filter_build(every_kind[i], &params, packed_keys, KEYS, &filter),
                             BK_OK);
            for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
                size_t first = (2 * KEYS - lengths[l]) / 2; /* present and absent keys */
                size_t present = bk_filter_contains_batch(filter, packed_keys + first,
                                                          lengths[l], by_key);
                memset(by_packed, 0, sizeof by_packed);
                assert_int_equal(bk_filter_contains_packed(filter, packed_keys[first].data,
                                                           widths[w], lengths[l], by_packed),
                                 present);
                assert_memory_equal(by_key, by_packed, lengths[l]);
                assert_int_equal(bk_filter_contains_packed(filter, packed_keys[first].data,
                                                           widths[w], lengths[l], NULL),
                                 present);
            }
            assert_true(bk_filter_contains_packed(filter, packed_bytes, widths[w], KEYS, NULL) ==
                        KEYS); /* no false negative */
            bk_filter_free(filter);
        }
    }
}

/* bk_filter_build_packed makes the filter bk_filter_build makes of the same
 * keys, byte for byte, for every kind (static ones built from the hashes,
 * dynamic ones created and filled), widths on and off the vector paths,
 * and counts around the key chunk; the same status where build refuses. */
static void test_build_packed_matches_build(void **state)
{
    (void)state;
    const size_t widths[] = { 5, 8, 16 };
    const size_t counts[] = { 0, 1, 1023, 1025, PACKED_KEYS };
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        make_packed_keys(widths[w]);
        for (size_t i = 0; i < KIND_COUNT; i++)
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                bk_params params = {
                    .capacity = PACKED_KEYS, .fpr = 0.01, .window_keys = PACKED_KEYS, .seed = 7
                };
                bk_filter *by_key = NULL, *by_packed = NULL;
                bk_status built = bk_filter_build(every_kind[i], &params, packed_keys, counts[c],
                                                  &by_key);
                assert_int_equal(bk_filter_build_packed(every_kind[i], &params, packed_bytes,
                                                        widths[w], counts[c], &by_packed),
                                 built);
                if (built != BK_OK)
                    continue;
                assert_int_equal(bk_filter_kind(by_packed), every_kind[i]);
                bk_rt_assert_same_bytes(by_key, by_packed);
                for (size_t k = 0; k < counts[c]; k++)
                    assert_true(bk_filter_contains(by_packed, packed_keys[k].data, widths[w]));
                bk_filter_free(by_key);
                bk_filter_free(by_packed);
            }
    }
}

/* bk_filter_build_packed's refusals leave *out untouched: an unknown kind,
 * NULL params or out, NULL keys with bytes to read, count * key_len past
 * a size_t; empty keys need no bytes. */
static void test_build_packed_refusals(void **state)
{
    (void)state;
    bk_params params = { .capacity = 100, .fpr = 0.01 };
    uint64_t values[4] = { 1, 2, 3, 4 };
    bk_filter *out = (bk_filter *)0x1;
    assert_int_equal(bk_filter_build_packed((bk_kind)77, &params, values, 8, 4, &out), BK_EKIND);
    assert_int_equal(bk_filter_build_packed(BK_KIND_FUSE8, NULL, values, 8, 4, &out), BK_EINVAL);
    assert_int_equal(bk_filter_build_packed(BK_KIND_FUSE8, &params, values, 8, 4, NULL),
                     BK_EINVAL);
    assert_int_equal(bk_filter_build_packed(BK_KIND_FUSE8, &params, NULL, 8, 4, &out),
                     BK_EINVAL);
    assert_int_equal(
        bk_filter_build_packed(BK_KIND_BLOOM, &params, values, SIZE_MAX / 2, 4, &out),
        BK_EINVAL);
    assert_int_equal(bk_filter_build_packed(BK_KIND_BLOOM, &params, values, 1, SIZE_MAX, &out),
                     BK_ERANGE);
    bk_params bad_flags = { .capacity = 100, .fpr = 0.01, .flags = 1u << 30 };
    assert_int_equal(bk_filter_build_packed(BK_KIND_FUSE8, &bad_flags, values, 8, 4, &out),
                     BK_EINVAL);
    assert_ptr_equal(out, (bk_filter *)0x1);
    assert_int_equal(bk_filter_build_packed(BK_KIND_XOR8, &params, NULL, 0, 3, &out), BK_OK);
    assert_true(bk_filter_contains(out, "", 0));
    bk_filter_free(out);
}

/* add_packed fills a filter exactly as add_batch does (the same bytes and
 * the same count of new keys), for the dynamic kinds, small and past the
 * caches (bloom's gather batches, the one-line kinds' prefetch). */
static void test_add_packed_matches_add_batch(void **state)
{
    (void)state;
    const bk_kind bit_sized[] = { BK_KIND_BLOOM, BK_KIND_BLOCKED, BK_KIND_SBBF };
    const uint64_t bits[] = { 0, (uint64_t)1 << 24 };
    make_packed_keys(8);
    for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++) {
        /* every dynamic kind; sized by bits: the three Bloom kinds */
        const bk_kind *kinds = bits[b] != 0 ? bit_sized : every_kind;
        size_t kinds_count = bits[b] != 0 ? sizeof bit_sized / sizeof bit_sized[0] : KIND_COUNT;
        for (size_t i = 0; i < kinds_count; i++) {
            if (bk_kind_is_static(kinds[i]))
                continue;
            bk_params params = { .capacity = PACKED_KEYS,
                                 .fpr = 0.01,
                                 .window_keys = PACKED_KEYS };
            if (bits[b] != 0)
                params = (bk_params){ .capacity = PACKED_KEYS, .bits = bits[b], .hashes = 8 };
            bk_filter *by_key, *by_packed;
            assert_int_equal(bk_filter_create(kinds[i], &params, &by_key), BK_OK);
            assert_int_equal(bk_filter_create(kinds[i], &params, &by_packed), BK_OK);
            size_t fresh_key = 0, fresh_packed = 0;
            assert_int_equal(bk_filter_add_batch(by_key, packed_keys, PACKED_KEYS, &fresh_key),
                             BK_OK);
            assert_int_equal(
                bk_filter_add_packed(by_packed, packed_bytes, 8, PACKED_KEYS, &fresh_packed),
                BK_OK);
            assert_int_equal(fresh_key, fresh_packed);
            assert_true(fresh_key > PACKED_KEYS * 9 / 10);
            bk_rt_assert_same_bytes(by_key, by_packed);
            bk_filter_free(by_key);
            bk_filter_free(by_packed);
        }
    }
}

/* A packed batch reads no byte past its keys.  The batches request the
 * memory after the keys ahead of time (src/hash.h,
 * bk_source_request_next); a request is a prefetch, which never faults, so
 * keys that end right before a page the process may not touch are
 * answered as anywhere else, by every kind, for 8- and 16-byte keys and
 * for batches of one chunk and of more. */
static void test_packed_batches_at_the_end_of_a_mapping(void **state)
{
    (void)state;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data_pages = (PACKED_KEYS * PACKED_MAX_WIDTH + page - 1) / page;
    uint8_t *mapping = mmap(NULL, (data_pages + 1) * page, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(mapping != MAP_FAILED);
    uint8_t *guard = mapping + data_pages * page;
    assert_int_equal(mprotect(guard, page, PROT_NONE), 0);
    const size_t widths[] = { 8, 16 };
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        make_packed_keys(widths[w]);
        const size_t bytes = PACKED_KEYS * widths[w];
        uint8_t *at_end = guard - bytes;
        memcpy(at_end, packed_bytes, bytes);
        for (size_t i = 0; i < KIND_COUNT; i++) {
            bk_params params = { .capacity = PACKED_KEYS,
                                 .fpr = 0.01,
                                 .window_keys = PACKED_KEYS };
            bk_filter *filter;
            if (bk_kind_is_static(every_kind[i])) {
                assert_int_equal(
                    bk_filter_build(every_kind[i], &params, packed_keys, PACKED_KEYS, &filter),
                    BK_OK);
            } else {
                assert_int_equal(bk_filter_create(every_kind[i], &params, &filter), BK_OK);
                assert_int_equal(
                    bk_filter_add_packed(filter, at_end, widths[w], PACKED_KEYS, NULL), BK_OK);
            }
            assert_int_equal(
                bk_filter_contains_packed(filter, at_end, widths[w], PACKED_KEYS, NULL),
                PACKED_KEYS);
            assert_int_equal(
                bk_filter_contains_packed(filter, guard - 8 * widths[w], widths[w], 8, NULL), 8);
            bk_filter_free(filter);
        }
    }
    assert_int_equal(munmap(mapping, (data_pages + 1) * page), 0);
}

/* Packed batches refuse what they cannot read, changing nothing; a static
 * kind refuses adds as for every other form. */
static void test_packed_refusals_change_nothing(void **state)
{
    (void)state;
    bk_params params = { .capacity = 100, .fpr = 0.01 };
    bk_filter *filter;
    assert_int_equal(bk_filter_create(BK_KIND_BLOCKED, &params, &filter), BK_OK);
    uint64_t values[4] = { 1, 2, 3, 4 };
    size_t fresh = 12345;
    assert_int_equal(bk_filter_add_packed(NULL, values, 8, 4, &fresh), BK_EINVAL);
    assert_int_equal(bk_filter_add_packed(filter, NULL, 8, 4, &fresh), BK_EINVAL);
    assert_int_equal(bk_filter_add_packed(filter, values, 16, SIZE_MAX / 8, &fresh), BK_EINVAL);
    assert_int_equal(fresh, 12345);
    bool results[4] = { true, true, true, true };
    assert_int_equal(bk_filter_contains_packed(NULL, values, 8, 4, results), 0);
    assert_int_equal(bk_filter_contains_packed(filter, NULL, 8, 4, results), 0);
    assert_int_equal(bk_filter_contains_packed(filter, values, 16, SIZE_MAX / 8, results), 0);
    assert_true(results[0] && results[3]);
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    assert_int_equal(stats.keys_added, 0);
    assert_true(stats.fill_ratio == 0.0);
    /* empty keys need no bytes: NULL keys with key_len 0 add the empty key */
    assert_int_equal(bk_filter_add_packed(filter, NULL, 0, 3, &fresh), BK_OK);
    assert_int_equal(fresh, 1);
    assert_true(bk_filter_contains(filter, "", 0));
    assert_int_equal(bk_filter_contains_packed(filter, NULL, 0, 2, results), 2);
    bk_filter_free(filter);
    bk_filter *fuse = filter_of(BK_KIND_FUSE8);
    assert_int_equal(bk_filter_add_packed(fuse, values, 8, 4, NULL), BK_EIMMUTABLE);
    bk_filter_free(fuse);
}

static void test_refusals_by_kind(void **state)
{
    (void)state;
    bk_filter *bloom = filter_of(BK_KIND_BLOOM), *fuse = filter_of(BK_KIND_FUSE8),
              *other_bloom = filter_of(BK_KIND_BLOOM), *blocked = filter_of(BK_KIND_BLOCKED);
    assert_int_equal(bk_filter_remove(bloom, "in:1", 4), BK_EUNSUPPORTED);
    assert_int_equal(bk_filter_add(fuse, "x", 1, NULL), BK_EIMMUTABLE);
    assert_int_equal(bk_filter_remove(fuse, "in:1", 4), BK_EIMMUTABLE);
    assert_int_equal(bk_filter_union(bloom, blocked), BK_EINCOMPATIBLE); /* kinds differ */
    assert_int_equal(bk_filter_union(fuse, fuse), BK_EUNSUPPORTED);
    assert_int_equal(bk_filter_union(bloom, other_bloom), BK_OK);
    bk_filter *created = (bk_filter *)0x1;
    bk_params params = { .capacity = 10 };
    assert_int_equal(bk_filter_create(BK_KIND_FUSE8, &params, &created), BK_EIMMUTABLE);
    assert_int_equal(bk_filter_create((bk_kind)77, &params, &created), BK_EKIND);
    assert_ptr_equal(created, (bk_filter *)0x1);
    uint64_t count = 0;
    assert_int_equal(bk_filter_count(bloom, "in:1", 4, &count), BK_EUNSUPPORTED);
    bk_filter_free(bloom);
    bk_filter_free(fuse);
    bk_filter_free(other_bloom);
    bk_filter_free(blocked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_kind_list),
        cmocka_unit_test(test_every_registered_kind_fills_the_required_ops),
        cmocka_unit_test(test_object_of_checks_the_kind),
        cmocka_unit_test(test_every_kind_finds_its_keys),
        cmocka_unit_test(test_batch_lengths_match_single_queries),
        cmocka_unit_test(test_hash_batches_match_key_batches),
        cmocka_unit_test(test_add_hash_batch_matches_add_batch),
        cmocka_unit_test(test_build_hashes_matches_build),
        cmocka_unit_test(test_batches_of_big_filters),
        cmocka_unit_test(test_batch_with_a_bad_key_changes_nothing),
        cmocka_unit_test(test_refusals_by_kind),
        cmocka_unit_test(test_packed_batches_match_key_batches),
        cmocka_unit_test(test_add_packed_matches_add_batch),
        cmocka_unit_test(test_packed_batches_at_the_end_of_a_mapping),
        cmocka_unit_test(test_packed_refusals_change_nothing),
        cmocka_unit_test(test_build_packed_matches_build),
        cmocka_unit_test(test_build_packed_refusals),
    };
    return cmocka_run_group_tests(tests, make_keys, NULL);
}
