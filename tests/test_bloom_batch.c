/*
 * tests/test_bloom_batch.c -- the classic filter's hot path: the batch forms
 * (a software pipeline above one core's L2 cache, a plain loop below,
 * src/bloom.c) and the branch-free single query give exactly the answers
 * and the bits of the plain one-key-at-a-time forms, in each build of the
 * one-key query (portable, BMI2, AVX-512 gather).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "filter_figures.h"
#include "hash.h"

#define KEY_COUNT 5000

/* Keys 8 bytes wide from splitmix64 of the index (first..first+count). */
static uint64_t *make_keys(uint64_t first, size_t count, bk_key *keys)
{
    uint64_t *values = malloc(count * sizeof *values + 1);
    assert_non_null(values);
    for (size_t i = 0; i < count; i++) {
        values[i] = bk_mix64((first + i + 1) * 0x9e3779b97f4a7c15ULL);
        keys[i].data = &values[i];
        keys[i].len = sizeof values[i];
    }
    return values;
}

/* The L2 size the pipelines are sized by: the system's figure when it is
 * plausible, else the 1 MiB default; never 0 (every filter would prefetch)
 * nor absurd (none would). */
static void test_l2_size_is_plausible(void **state)
{
    (void)state;
    uint64_t l2 = bk_cpu()->l2_bytes;
    assert_true(l2 >= ((uint64_t)64 << 10));
    assert_true(l2 <= ((uint64_t)64 << 20));
}

/* Bits per key that make a filter of KEY_COUNT keys twice this machine's
 * L2 (src/cpu.h), so that its batches take the prefetching pipeline. */
static double pipelined_bits_per_key(void)
{
    return (double)(2 * bk_cpu()->l2_bytes * 8) / KEY_COUNT;
}

static bk_filter *new_filter(uint64_t capacity, double bits_per_key, unsigned hashes,
                             unsigned flags)
{
    bk_params p = { .capacity = capacity, .flags = flags };
    if (hashes != 0) {
        p.bits = (uint64_t)(capacity * bits_per_key);
        p.hashes = hashes;
    } else {
        p.bits_per_key = bits_per_key;
    }
    bk_filter *filter;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &p, &filter), BK_OK);
    return filter;
}

static void assert_same_bits(const bk_filter *a, const bk_filter *b)
{
    assert_int_equal(word_count_of(a), word_count_of(b));
    assert_memory_equal(words_of(a), words_of(b), word_count_of(a) * sizeof(uint64_t));
    assert_int_equal(stats_of(a).keys_added, stats_of(b).keys_added);
}

/* Batch adds of every size around the pipeline's distance set exactly the
 * bits that single adds set, and count the same new keys. */
static void check_batch_add_matches_single(unsigned hashes, double bits_per_key, unsigned flags)
{
    static const size_t batch_sizes[] = { 0, 1, 2, 7, 8, 9, 63, 64, 65, 1000 };
    bk_key keys[KEY_COUNT];
    uint64_t *values = make_keys(0, KEY_COUNT, keys);
    for (size_t i = 9; i < KEY_COUNT; i += 10)
        keys[i] = keys[i - 1]; /* duplicates, some inside one batch */
    for (size_t s = 0; s < sizeof batch_sizes / sizeof batch_sizes[0]; s++) {
        bk_filter *single = new_filter(KEY_COUNT, bits_per_key, hashes, flags);
        bk_filter *by_key = new_filter(KEY_COUNT, bits_per_key, hashes, flags);
        bk_filter *by_hash = new_filter(KEY_COUNT, bits_per_key, hashes, flags);
        size_t single_new = 0, key_new = 0, hash_new = 0;
        for (size_t i = 0; i < KEY_COUNT; i++) {
            bool was_new;
            assert_int_equal(bk_filter_add(single, keys[i].data, keys[i].len, &was_new), BK_OK);
            single_new += was_new;
        }
        for (size_t start = 0; start < KEY_COUNT;) {
            size_t n = batch_sizes[s] ? batch_sizes[s] : 1;
            if (n > KEY_COUNT - start)
                n = KEY_COUNT - start;
            size_t fresh;
            assert_int_equal(bk_filter_add_batch(by_key, keys + start, n, &fresh), BK_OK);
            key_new += fresh;
            bk_hash hashes_of[1000];
            for (size_t i = 0; i < n; i++)
                hashes_of[i] = bk_filter_hash(by_hash, keys[start + i].data,
                                              keys[start + i].len);
            assert_int_equal(bk_filter_add_hash_batch(by_hash, hashes_of, n, &fresh), BK_OK);
            hash_new += fresh;
            start += n;
        }
        assert_int_equal(key_new, single_new);
        assert_int_equal(hash_new, single_new);
        assert_same_bits(single, by_key);
        assert_same_bits(single, by_hash);
        bk_filter_free(single);
        bk_filter_free(by_key);
        bk_filter_free(by_hash);
    }
    free(values);
}

static void test_batch_add_matches_single(void **state)
{
    (void)state;
    check_batch_add_matches_single(0, 10, 0); /* k = 7 */
    check_batch_add_matches_single(1, 10, 0);
    check_batch_add_matches_single(23, 10, 0);
    check_batch_add_matches_single(0, 10, BK_FLAG_CONCURRENT);
    check_batch_add_matches_single(7, pipelined_bits_per_key(), 0);
    check_batch_add_matches_single(7, pipelined_bits_per_key(), BK_FLAG_CONCURRENT);
    check_batch_add_matches_single(3, pipelined_bits_per_key(), 0);
    check_batch_add_matches_single(8, pipelined_bits_per_key(), 0);
}

/* Turns one build of the one-key query on (0 portable, 1 BMI2, 2 AVX-512:
 * src/bloom.c, src/bloom_avx512.c); false, with nothing changed, where the
 * CPU lacks it. */
static bool use_build(bk_filter *filter, int build)
{
    bool was_bmi2 = bloom_of(filter)->use_bmi2, was_avx512 = bloom_of(filter)->use_avx512;
    assert_int_equal(bk_bloom_set_avx512(bloom_of(filter), false), BK_OK);
    assert_int_equal(bk_bloom_set_bmi2(bloom_of(filter), false), BK_OK);
    bk_status status = BK_OK;
    if (build == 1)
        status = bk_bloom_set_bmi2(bloom_of(filter), true);
    else if (build == 2)
        status = bk_bloom_set_avx512(bloom_of(filter), true);
    if (status == BK_OK)
        return true;
    assert_int_equal(status, BK_EUNSUPPORTED);
    /* a refusal changes nothing */
    assert_false(build == 1 ? bloom_of(filter)->use_bmi2 : bloom_of(filter)->use_avx512);
    assert_false(build == 1 ? bk_cpu()->bmi2 : bk_cpu()->avx512dqbw);
    bloom_of(filter)->use_bmi2 = was_bmi2;
    bloom_of(filter)->use_avx512 = was_avx512;
    return false;
}

/* The one-key query of every build the CPU has (portable, BMI2, AVX-512),
 * each reading all k probes and stopping after two (as filters beyond
 * 32 MiB do): from the key and from its hash; all must agree.  Leaves the
 * filter as it found it. */
static bool contains_in_every_build(bk_filter *filter, const bk_key *key, bk_hash hash)
{
    bool was_bmi2 = bloom_of(filter)->use_bmi2, was_avx512 = bloom_of(filter)->use_avx512;
    bool was_early = bloom_of(filter)->exit_early;
    bloom_of(filter)->exit_early = false;
    assert_true(use_build(filter, 0));
    bool portable = bk_filter_contains(filter, key->data, key->len);
    for (int early = 0; early < 2; early++) {
        bloom_of(filter)->exit_early = early;
        for (int build = 0; build < 3; build++) {
            if (!use_build(filter, build))
                continue;
            assert_int_equal(bk_filter_contains(filter, key->data, key->len), portable);
            assert_int_equal(bk_filter_contains_hash(filter, hash), portable);
        }
    }
    bloom_of(filter)->use_bmi2 = was_bmi2;
    bloom_of(filter)->use_avx512 = was_avx512;
    bloom_of(filter)->exit_early = was_early;
    return portable;
}

/* The one-key queries of every build agree for keys of every length and
 * each hash: the AVX-512 build has a straight-line form for 8- and 16-byte
 * keys of XXH3 with k <= 8 and a general form for the rest
 * (src/bloom_avx512.c), and both must give the portable answers. */
static void check_key_lengths_agree(unsigned hashes, bk_hash_algorithm algorithm)
{
    static const size_t lengths[] = { 0, 1, 7, 8, 9, 15, 16, 17, 40 };
    static const uint8_t secret[BK_SECRET_KEY_BYTES] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    enum { PER_LENGTH = 100 };
    /* m = 750 k: the 900 keys added fill 70% of the bits, so a probe
     * skipped or misplaced changes many absent keys' answers */
    bk_params p = { .capacity = 1000,
                    .bits = 750 * (uint64_t)hashes,
                    .hashes = hashes,
                    .hash_algorithm = algorithm,
                    .seed = 12345,
                    .secret_key = algorithm == BK_HASH_SIPHASH ? secret : NULL };
    bk_filter *filter;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &p, &filter), BK_OK);
    uint8_t bytes[2 * PER_LENGTH][40];
    for (size_t i = 0; i < 2 * PER_LENGTH; i++)
        for (size_t j = 0; j < sizeof bytes[i]; j++)
            bytes[i][j] = (uint8_t)bk_mix64(i * 41 + j + 1);
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        for (size_t i = 0; i < PER_LENGTH; i++)
            assert_int_equal(bk_filter_add(filter, bytes[i], lengths[l], NULL), BK_OK);
        for (size_t i = 0; i < 2 * PER_LENGTH; i++) {
            bk_key key = { .data = bytes[i], .len = lengths[l] };
            bool found = contains_in_every_build(filter, &key,
                                                 bk_filter_hash(filter, key.data, key.len));
            if (i < PER_LENGTH)
                assert_true(found); /* added */
        }
    }
    bk_filter_free(filter);
}

static void test_key_lengths_agree(void **state)
{
    (void)state;
    const bk_hash_algorithm algorithms[] = { BK_HASH_XXH3, BK_HASH_XXH64, BK_HASH_SIPHASH };
    const unsigned ks[] = { 1, 2, 7, 8, 9, 16, 17 };
    for (size_t a = 0; a < 3; a++)
        for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
            check_key_lengths_agree(ks[k], algorithms[a]);
}

/* Only filters beyond BK_BLOOM_EXIT_EARLY_BYTES stop after two probes. */
static void test_exit_early_by_size(void **state)
{
    (void)state;
    bk_filter *small = new_filter(1000, 10, 0, 0);
    assert_false(bloom_of(small)->exit_early);
    bk_params p = { .bits = 8 * (uint64_t)BK_BLOOM_EXIT_EARLY_BYTES + 64 * 8,
                    .hashes = 3,
                    .capacity = 1000 };
    bk_filter *big = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &p, &big), BK_OK);
    assert_true(bloom_of(big)->exit_early);
    bk_filter_free(small);
    bk_filter_free(big);
}

/* The batch queries of every build (the AVX-512 build has its own
 * pipeline, src/bloom_avx512.c) give `expected`, whole and in short
 * batches around the pipelines' distances, with and without an answer
 * array.  Leaves the filter as it found it. */
static void check_batches_in_every_build(bk_filter *filter, const bk_key *keys,
                                         const bk_hash *hashes_of, const bool *expected,
                                         size_t found)
{
    bool was_bmi2 = bloom_of(filter)->use_bmi2, was_avx512 = bloom_of(filter)->use_avx512;
    static bool answers[KEY_COUNT];
    for (int build = 0; build < 3; build++) {
        if (!use_build(filter, build))
            continue;
        assert_int_equal(bk_filter_contains_hash_batch(filter, hashes_of, KEY_COUNT, answers),
                         found);
        assert_memory_equal(answers, expected, KEY_COUNT);
        assert_int_equal(bk_filter_contains_batch(filter, keys, KEY_COUNT, NULL), found);
        for (size_t n = 0; n < 20; n++) {
            bool few[20];
            size_t got = bk_filter_contains_batch(filter, keys + 100, n, few);
            size_t expected_count = 0;
            for (size_t i = 0; i < n; i++) {
                assert_int_equal(few[i], expected[100 + i]);
                expected_count += few[i];
            }
            assert_int_equal(got, expected_count);
        }
    }
    bloom_of(filter)->use_bmi2 = was_bmi2;
    bloom_of(filter)->use_avx512 = was_avx512;
}

/* Every query form gives the same answer for every key, present or absent,
 * and no present key is missed. */
static void check_queries_agree(unsigned hashes, double bits_per_key)
{
    bk_key present[KEY_COUNT], absent[KEY_COUNT];
    uint64_t *present_values = make_keys(0, KEY_COUNT, present);
    uint64_t *absent_values = make_keys((uint64_t)1 << 40, KEY_COUNT, absent);
    bk_filter *filter = new_filter(KEY_COUNT, bits_per_key, hashes, 0);
    assert_int_equal(bk_filter_add_batch(filter, present, KEY_COUNT, NULL), BK_OK);
    const bk_key *sets[2] = { present, absent };
    static bool batch_results[KEY_COUNT], hash_results[KEY_COUNT];
    static bk_hash hashes_of[KEY_COUNT];
    for (int set = 0; set < 2; set++) {
        const bk_key *keys = sets[set];
        for (size_t i = 0; i < KEY_COUNT; i++)
            hashes_of[i] = bk_filter_hash(filter, keys[i].data, keys[i].len);
        size_t found = bk_filter_contains_batch(filter, keys, KEY_COUNT, batch_results);
        size_t found_hash = bk_filter_contains_hash_batch(filter, hashes_of, KEY_COUNT,
                                                          hash_results);
        assert_int_equal(found, found_hash);
        size_t counted = 0;
        for (size_t i = 0; i < KEY_COUNT; i++) {
            bool single = bk_filter_contains(filter, keys[i].data, keys[i].len);
            assert_int_equal(single, bk_filter_contains_hash(filter, hashes_of[i]));
            assert_int_equal(single, contains_in_every_build(filter, &keys[i], hashes_of[i]));
            assert_int_equal(single, batch_results[i]);
            assert_int_equal(single, hash_results[i]);
            counted += single;
            if (set == 0)
                assert_true(single);
        }
        assert_int_equal(counted, found);
        check_batches_in_every_build(filter, keys, hashes_of, batch_results, found);
    }
    bk_filter_free(filter);
    free(present_values);
    free(absent_values);
}

static void test_queries_agree(void **state)
{
    (void)state;
    check_queries_agree(0, 10);
    check_queries_agree(1, 8);
    check_queries_agree(23, 30);
    check_queries_agree(8, 12); /* k at and past the AVX-512 build's eight lanes */
    check_queries_agree(16, 24);
    check_queries_agree(17, 24);
    check_queries_agree(0, 2); /* an overfull filter: many false positives */
    check_queries_agree(7, pipelined_bits_per_key());
    check_queries_agree(1, pipelined_bits_per_key());
    check_queries_agree(3, pipelined_bits_per_key());
    check_queries_agree(8, pipelined_bits_per_key());
    check_queries_agree(9, pipelined_bits_per_key());
}

/* Bad arguments to the batch forms: rejected, nothing changed. */
static void test_batch_bad_input(void **state)
{
    (void)state;
    bk_filter *filter = new_filter(1000, 10, 0, 0);
    bk_key bad[2] = { { "a", 1 }, { NULL, 3 } };
    size_t fresh = 99;
    assert_int_equal(bk_filter_add_batch(filter, bad, 2, &fresh), BK_EINVAL);
    assert_int_equal(fresh, 99);
    assert_int_equal(bits_set_of(filter), 0);
    assert_int_equal(bk_filter_add_batch(NULL, bad, 1, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_add_hash_batch(filter, NULL, 3, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_add_batch(filter, NULL, 0, &fresh), BK_OK);
    assert_int_equal(fresh, 0);
    assert_int_equal(bk_filter_contains_batch(filter, bad, 2, NULL), 0);
    assert_int_equal(bk_filter_contains_hash_batch(filter, NULL, 2, NULL), 0);
    assert_int_equal(stats_of(filter).keys_added, 0);
    assert_int_equal(bk_bloom_set_bmi2(bloom_of(NULL), false), BK_EINVAL);
    assert_int_equal(bk_bloom_set_avx512(bloom_of(NULL), false), BK_EINVAL);
    bk_filter_free(filter);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_l2_size_is_plausible),
        cmocka_unit_test(test_batch_add_matches_single),
        cmocka_unit_test(test_queries_agree),
        cmocka_unit_test(test_key_lengths_agree),
        cmocka_unit_test(test_exit_early_by_size),
        cmocka_unit_test(test_batch_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
