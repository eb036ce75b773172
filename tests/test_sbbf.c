/*
 * tests/test_sbbf.c -- the Parquet split-block Bloom filter: golden vectors
 * worked out from the specification, an independent reference
 * implementation of the spec, portable vs AVX2, Parquet import/export,
 * FPR against the split-block formula, set algebra, bad parameters.
 *
 * Everything goes through the handle (bk_filter_*) and bk_sbbf_*parquet,
 * except two internal details reached through src/sbbf.h: the words in
 * memory (the golden vectors and the reference implementation check the
 * layout itself) and the choice of the portable or AVX2 path.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "batch_lengths.h"
#include "filter.h"
#include "sbbf.h"

/* ---- an independent implementation of the spec, for comparison ---------- */

static const uint32_t spec_salt[8] = { 0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                       0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U };

static void spec_insert(uint32_t *words, uint64_t blocks, uint64_t hash)
{
    uint64_t block = ((hash >> 32) * blocks) >> 32;
    uint32_t x = (uint32_t)hash;
    for (int i = 0; i < 8; i++) {
        uint32_t y = x * spec_salt[i];
        words[block * 8 + (uint64_t)i] |= UINT32_C(1) << (y >> 27);
    }
}

static bool spec_check(const uint32_t *words, uint64_t blocks, uint64_t hash)
{
    uint64_t block = ((hash >> 32) * blocks) >> 32;
    uint32_t x = (uint32_t)hash;
    for (int i = 0; i < 8; i++) {
        uint32_t y = x * spec_salt[i];
        if (!(words[block * 8 + (uint64_t)i] & (UINT32_C(1) << (y >> 27))))
            return false;
    }
    return true;
}

/* splitmix64: the test's own reproducible random numbers */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static bk_filter *make_filter(uint64_t capacity, uint64_t bits)
{
    bk_params p = { .capacity = capacity, .bits = bits };
    bk_filter *f = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &p, &f), BK_OK);
    return f;
}

/* The kind's object behind a handle (internal: src/sbbf.h). */
static bk_sbbf *object_of(const bk_filter *f)
{
    bk_sbbf *object = bk_filter_object_of(f, BK_KIND_SBBF);
    assert_non_null(object);
    return object;
}

/* The words in memory: block_count x 8, host order. */
static const uint32_t *words_of(const bk_filter *f) { return object_of(f)->words; }

static bk_status set_simd(bk_filter *f, bool use_avx2)
{
    return bk_sbbf_set_simd(object_of(f), use_avx2);
}

static bk_stats stats_of(const bk_filter *f)
{
    bk_stats s;
    bk_filter_stats(f, &s);
    return s;
}

static uint64_t block_count_of(const bk_filter *f) { return stats_of(f).bits / 256; }

/* Bits set: the fill ratio times the bits, exact below 2^53 bits. */
static uint64_t bits_set_of(const bk_filter *f)
{
    bk_stats s = stats_of(f);
    return (uint64_t)llround(s.fill_ratio * (double)s.bits);
}

/* The handle's hash whose h1 is the 64-bit value hash (h2 is unused). */
static bk_hash hash64(uint64_t hash) { return (bk_hash){ hash, 0 }; }

/* ---- golden vectors ------------------------------------------------------ */

static void test_xxh64_reference_values(void **state)
{
    (void)state;
    bk_filter *f = make_filter(10, 256);
    /* XXH64 with seed 0, published reference values */
    assert_true(bk_filter_hash(f, "", 0).h1 == 0xef46db3751d8e999ULL);
    assert_true(bk_filter_hash(f, "a", 1).h1 == 0xd24ec4f1a98c6e5bULL);
    assert_true(bk_filter_hash(f, "abc", 3).h1 == 0x44bc2cf5ad770999ULL);
    bk_hash inline_hash = bk_filter_hash(f, "hello", 5);
    bk_hash library_hash = bk_hash_key(bk_filter_hasher(f), "hello", 5);
    assert_true(inline_hash.h1 == library_hash.h1 && inline_hash.h2 == library_hash.h2);
    assert_int_equal(bk_filter_hasher(f)->algorithm, BK_HASH_XXH64);
    assert_true(bk_filter_hasher(f)->seed == 0);
    bk_filter_free(f);
}

/*
 * Four blocks; keys "", "a", "abc".  Worked out from the spec:
 *   ""    hash ef46db37 51d8e999: block (0xef46db37 * 4) >> 32 = 3,
 *         bits (0x51d8e999 * SALT[i]) >> 27 = 29 0 25 28 14 22 29 30
 *   "a"   hash d24ec4f1 a98c6e5b: block 3, bits 18 17 1 12 17 24 27 31
 *   "abc" hash 44bc2cf5 ad770999: block 1, bits 13 11 23 21 6 14 29 29
 */
static const uint32_t golden_words[32] = {
    0,          0,          0,          0,          0,          0,          0,
    0,          0x00002000, 0x00000800, 0x00800000, 0x00200000, 0x00000040, 0x00004000,
    0x20000000, 0x20000000, 0,          0,          0,          0,          0,
    0,          0,          0,          0x20040000, 0x00020001, 0x02000002, 0x10001000,
    0x00024000, 0x01400000, 0x28000000, 0xc0000000,
};

static void check_golden(bool use_avx2)
{
    bk_filter *f = make_filter(3, 4 * 256);
    if (set_simd(f, use_avx2) != BK_OK) {
        bk_filter_free(f);
        skip();
    }
    assert_int_equal(block_count_of(f), 4);
    assert_int_equal(bk_filter_add(f, "", 0, NULL), BK_OK);
    assert_int_equal(bk_filter_add(f, "a", 1, NULL), BK_OK);
    assert_int_equal(bk_filter_add(f, "abc", 3, NULL), BK_OK);
    assert_memory_equal(words_of(f), golden_words, sizeof golden_words);
    /* the Parquet bitset: little-endian words; block 3 begins 00 00 04 20 01 00 02 00 */
    uint8_t bytes[128];
    size_t written = 0;
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_BITSET, bytes, sizeof bytes, &written),
                     BK_OK);
    assert_int_equal(written, 128);
    const uint8_t block3_start[8] = { 0x00, 0x00, 0x04, 0x20, 0x01, 0x00, 0x02, 0x00 };
    assert_memory_equal(bytes + 96, block3_start, 8);
    assert_int_equal(bits_set_of(f), 24); /* 3 keys x 8 words, no collision */
    bk_filter_free(f);
}

static void test_golden_words_portable(void **state)
{
    (void)state;
    check_golden(false);
}

static void test_golden_words_avx2(void **state)
{
    (void)state;
    check_golden(true);
}

/* The golden filter as a Parquet file stores it at bloom_filter_offset:
 * the BloomFilterHeader for numBytes = 128 (the bytes Apache Thrift's own
 * compact protocol writer produces for it), then the golden bitset. */
static void test_golden_parquet_with_header(void **state)
{
    (void)state;
    bk_params p = { .capacity = 3, .bits = 4 * 256, .hash_algorithm = BK_HASH_XXH64 };
    bk_filter *f = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &p, &f), BK_OK);
    assert_int_equal(bk_filter_add(f, "", 0, NULL), BK_OK);
    assert_int_equal(bk_filter_add(f, "a", 1, NULL), BK_OK);
    assert_int_equal(bk_filter_add(f, "abc", 3, NULL), BK_OK);
    static const uint8_t header[16] = { 0x15, 0x80, 0x02, 0x1c, 0x1c, 0x00, 0x00, 0x1c,
                                        0x1c, 0x00, 0x00, 0x1c, 0x1c, 0x00, 0x00, 0x00 };
    uint8_t golden_bitset[128];
    for (size_t i = 0; i < 32; i++)
        for (unsigned byte = 0; byte < 4; byte++)
            golden_bitset[4 * i + byte] = (uint8_t)(golden_words[i] >> (8 * byte));
    uint8_t bytes[16 + 128];
    size_t written = 0;
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_WITH_HEADER, NULL, 0, &written), BK_OK);
    assert_int_equal(written, sizeof bytes);
    assert_int_equal(
        bk_sbbf_to_parquet(f, BK_PARQUET_WITH_HEADER, bytes, sizeof bytes, &written), BK_OK);
    assert_memory_equal(bytes, header, sizeof header);
    assert_memory_equal(bytes + 16, golden_bitset, sizeof golden_bitset);
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_BITSET, bytes, sizeof bytes, &written),
                     BK_OK);
    assert_int_equal(written, 128);
    assert_memory_equal(bytes, golden_bitset, sizeof golden_bitset);
    bk_filter_free(f);

    /* read back from the header form: the golden keys are there */
    uint8_t stored[16 + 128];
    memcpy(stored, header, sizeof header);
    memcpy(stored + 16, golden_bitset, sizeof golden_bitset);
    size_t consumed = 0;
    assert_int_equal(
        bk_sbbf_from_parquet(stored, sizeof stored, BK_PARQUET_WITH_HEADER, 3, &f, &consumed),
        BK_OK);
    assert_int_equal(consumed, sizeof stored);
    assert_true(bk_filter_contains(f, "", 0));
    assert_true(bk_filter_contains(f, "a", 1));
    assert_true(bk_filter_contains(f, "abc", 3));
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_int_equal(s.bits, 4 * 256);
    assert_int_equal(s.capacity, 3);
    bk_filter_free(f);
}

/* ---- the spec, at random ------------------------------------------------- */

static void test_matches_reference_implementation(void **state)
{
    (void)state;
    const uint64_t block_counts[] = { 1, 3, 64, 1000, 4097 };
    uint64_t rng = 12345;
    for (size_t b = 0; b < sizeof block_counts / sizeof block_counts[0]; b++) {
        uint64_t blocks = block_counts[b];
        bk_filter *f = make_filter(blocks * 20, blocks * 256);
        uint32_t *reference = calloc(blocks * 8, sizeof *reference);
        assert_non_null(reference);
        for (uint64_t i = 0; i < blocks * 20; i++) {
            uint64_t hash = next_random(&rng);
            spec_insert(reference, blocks, hash);
            assert_int_equal(bk_filter_add_hash(f, hash64(hash), NULL), BK_OK);
        }
        assert_memory_equal(words_of(f), reference, blocks * 8 * sizeof *reference);
        for (int i = 0; i < 20000; i++) {
            uint64_t hash = next_random(&rng);
            assert_int_equal(bk_filter_contains_hash(f, hash64(hash)),
                             spec_check(reference, blocks, hash));
        }
        free(reference);
        bk_filter_free(f);
    }
}

/* One-key adds from key bytes (bk_filter_add: the AVX2 path hashes and
 * sets in one function) agree with the portable path: the same was_new
 * for every key, bits and key counts, for 8-byte keys and others. */
static void test_one_key_adds_agree(void **state)
{
    (void)state;
    bk_filter *portable = make_filter(6000, 6000 * 16);
    bk_filter *simd = make_filter(6000, 6000 * 16);
    assert_int_equal(set_simd(portable, false), BK_OK);
    if (set_simd(simd, true) != BK_OK) {
        bk_filter_free(portable);
        bk_filter_free(simd);
        skip();
    }
    uint64_t rng = 4242;
    size_t fresh = 0;
    for (int i = 0; i < 6000; i++) {
        uint8_t key[24];
        for (size_t b = 0; b < sizeof key; b++)
            key[b] = (uint8_t)next_random(&rng);
        size_t len = (size_t)i % 3 == 0 ? 8 : (size_t)i % 3 == 1 ? 16 : 5 + (size_t)i % 19;
        bool was_new_p, was_new_s;
        assert_int_equal(bk_filter_add(portable, key, len, &was_new_p), BK_OK);
        assert_int_equal(bk_filter_add(simd, key, len, &was_new_s), BK_OK);
        assert_int_equal(was_new_p, was_new_s);
        fresh += was_new_s;
        assert_true(bk_filter_contains(simd, key, len));
        assert_int_equal(bk_filter_add(simd, key, len, &was_new_s), BK_OK); /* again: not new */
        assert_false(was_new_s);
    }
    assert_true(fresh > 5000); /* most keys were new: both answers seen */
    assert_memory_equal(words_of(portable), words_of(simd), stats_of(simd).bits / 8);
    assert_int_equal(stats_of(portable).keys_added, fresh);
    assert_int_equal(stats_of(simd).keys_added, fresh);
    bk_filter_free(portable);
    bk_filter_free(simd);
}

/* The integer-key calls (bk_filter_add_u64, bk_filter_contains_u64: one
 * straight run on the AVX2 path for XXH64, the hash and the _hash ops
 * otherwise) on both paths, under every hash algorithm: the same was_new,
 * bits and key counts as bk_filter_add_hash of bk_hash_u64's hash on the
 * portable path, the same answers as bk_filter_contains_hash of it. */
static void check_u64_calls_agree(bk_hash_algorithm algorithm)
{
    static const uint8_t secret[BK_SECRET_KEY_BYTES] = { 3, 1, 4, 1, 5, 9, 2, 6 };
    enum { KEYS = 3000 };
    bk_params p = { .capacity = KEYS,
                    .bits = KEYS * 12,
                    .hash_algorithm = algorithm,
                    .seed = 77,
                    .secret_key = algorithm == BK_HASH_SIPHASH ? secret : NULL };
    bk_filter *by_hash, *by_value;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &p, &by_hash), BK_OK);
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &p, &by_value), BK_OK);
    assert_int_equal(set_simd(by_hash, false), BK_OK);
    bool simd = set_simd(by_value, true) == BK_OK;
    uint64_t rng = 1234 + (uint64_t)algorithm;
    size_t fresh = 0;
    for (int i = 0; i < KEYS; i++) {
        uint64_t value = next_random(&rng);
        bk_hash hash = bk_hash_u64(bk_filter_hasher(by_hash), value);
        bool was_new_h, was_new_v;
        assert_int_equal(bk_filter_add_hash(by_hash, hash, &was_new_h), BK_OK);
        assert_int_equal(bk_filter_add_u64(by_value, value, &was_new_v), BK_OK);
        assert_int_equal(was_new_h, was_new_v);
        fresh += was_new_v;
        assert_int_equal(bk_filter_add_u64(by_value, value, &was_new_v), BK_OK);
        assert_false(was_new_v); /* again: not new */
    }
    assert_true(fresh > KEYS * 9 / 10);
    assert_memory_equal(words_of(by_hash), words_of(by_value), stats_of(by_value).bits / 8);
    assert_int_equal(stats_of(by_value).keys_added, fresh);
    size_t absent = 0;
    for (int i = 0; i < 2 * KEYS; i++) {
        uint64_t value = i < KEYS / 2 ? (uint64_t)i : next_random(&rng);
        bool expected = bk_filter_contains_hash(by_hash,
                                                bk_hash_u64(bk_filter_hasher(by_hash), value));
        absent += !expected;
        assert_int_equal(bk_filter_contains_u64(by_value, value), expected);
        assert_int_equal(bk_filter_contains_u64(by_hash, value), expected);
        if (simd) { /* and back on the portable path */
            assert_int_equal(set_simd(by_value, false), BK_OK);
            assert_int_equal(bk_filter_contains_u64(by_value, value), expected);
            assert_int_equal(set_simd(by_value, true), BK_OK);
        }
    }
    assert_true(absent > KEYS); /* both answers seen */
    bk_filter_free(by_hash);
    bk_filter_free(by_value);
}

static void test_u64_calls_agree(void **state)
{
    (void)state;
    check_u64_calls_agree(BK_HASH_XXH64);
    check_u64_calls_agree(BK_HASH_XXH3);
    check_u64_calls_agree(BK_HASH_SIPHASH);
    check_u64_calls_agree(BK_HASH_MIX64);
}

static void test_portable_and_avx2_agree(void **state)
{
    (void)state;
    uint64_t rng = 777;
    for (int round = 0; round < 4; round++) {
        uint64_t blocks = 1 + next_random(&rng) % 5000;
        bk_filter *portable = make_filter(blocks * 24, blocks * 256);
        bk_filter *simd = make_filter(blocks * 24, blocks * 256);
        assert_int_equal(set_simd(portable, false), BK_OK);
        if (set_simd(simd, true) != BK_OK) {
            bk_filter_free(portable);
            bk_filter_free(simd);
            skip();
        }
        size_t count = (size_t)blocks * 24;
        bk_hash *hashes = malloc(count * sizeof *hashes);
        assert_non_null(hashes);
        for (size_t i = 0; i < count; i++)
            hashes[i] = (bk_hash){ next_random(&rng), 0 };
        size_t half = count / 2, fresh_single = 0, fresh_batch = 0;
        for (size_t i = 0; i < half; i++) { /* single adds on one, batch on the other */
            bool was_new_p, was_new_s;
            bk_filter_add_hash(portable, hashes[i], &was_new_p);
            bk_filter_add_hash(simd, hashes[i], &was_new_s);
            assert_int_equal(was_new_p, was_new_s);
        }
        bk_filter_add_hash_batch(portable, hashes + half, count - half, &fresh_single);
        bk_filter_add_hash_batch(simd, hashes + half, count - half, &fresh_batch);
        assert_int_equal(fresh_single, fresh_batch);
        assert_memory_equal(words_of(portable), words_of(simd), blocks * 32);
        assert_int_equal(stats_of(portable).keys_added, stats_of(simd).keys_added);
        for (size_t i = 0; i < count; i++)
            hashes[i] = (bk_hash){ next_random(&rng), 0 };
        bool *answers_p = malloc(count), *answers_s = malloc(count);
        assert_non_null(answers_p);
        assert_non_null(answers_s);
        size_t present_p = bk_filter_contains_hash_batch(portable, hashes, count, answers_p);
        size_t present_s = bk_filter_contains_hash_batch(simd, hashes, count, answers_s);
        assert_int_equal(present_p, present_s);
        assert_memory_equal(answers_p, answers_s, count);
        for (size_t i = 0; i < count; i++)
            assert_int_equal(bk_filter_contains_hash(simd, hashes[i]), answers_p[i]);
        free(answers_p);
        free(answers_s);
        free(hashes);
        bk_filter_free(portable);
        bk_filter_free(simd);
    }
}

/* The one-key queries of both paths agree, from the key and from its
 * hash, for keys of every length and each hash the filter can use. */
static void check_key_lengths_agree(bk_hash_algorithm algorithm)
{
    static const size_t lengths[] = { 0, 1, 7, 8, 9, 15, 16, 17, 40 };
    static const uint8_t secret[BK_SECRET_KEY_BYTES] = { 9, 8, 7, 6, 5, 4, 3, 2, 1 };
    enum { PER_LENGTH = 100 };
    /* 32 blocks for 900 keys: about 75% of each block's words hold the
     * bit a key tests, so a wrong hash or block changes many answers */
    bk_params p = { .capacity = 1000,
                    .bits = 32 * 256,
                    .hash_algorithm = algorithm,
                    .seed = 4321,
                    .secret_key = algorithm == BK_HASH_SIPHASH ? secret : NULL };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &p, &f), BK_OK);
    uint8_t bytes[2 * PER_LENGTH][40];
    uint64_t rng = 99;
    for (size_t i = 0; i < 2 * PER_LENGTH; i++)
        for (size_t j = 0; j < sizeof bytes[i]; j++)
            bytes[i][j] = (uint8_t)next_random(&rng);
    size_t answered_absent = 0;
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        for (size_t i = 0; i < PER_LENGTH; i++)
            assert_int_equal(bk_filter_add(f, bytes[i], lengths[l], NULL), BK_OK);
        for (size_t i = 0; i < 2 * PER_LENGTH; i++) {
            uint64_t hash = bk_filter_hash(f, bytes[i], lengths[l]).h1;
            assert_int_equal(set_simd(f, false), BK_OK);
            bool portable = bk_filter_contains(f, bytes[i], lengths[l]);
            assert_int_equal(bk_filter_contains_hash(f, hash64(hash)), portable);
            if (i < PER_LENGTH)
                assert_true(portable); /* added */
            answered_absent += !portable;
            if (set_simd(f, true) == BK_OK) {
                assert_int_equal(bk_filter_contains(f, bytes[i], lengths[l]), portable);
                assert_int_equal(bk_filter_contains_hash(f, hash64(hash)), portable);
            }
        }
    }
    assert_true(answered_absent > 0); /* the filter is not all ones */
    bk_filter_free(f);
}

static void test_key_lengths_agree(void **state)
{
    (void)state;
    check_key_lengths_agree(BK_HASH_XXH64);
    check_key_lengths_agree(BK_HASH_XXH3);
    check_key_lengths_agree(BK_HASH_SIPHASH);
}

static size_t batch_query(const void *f, const bk_hash *hashes, size_t count, bool *results)
{
    return bk_filter_contains_hash_batch(f, hashes, count, results);
}

static bool single_query(const void *f, bk_hash hash)
{
    return bk_filter_contains_hash(f, hash);
}

/* Batches of every length from 0 to past twice the prefetch ring
 * (src/prefetch.h), on both paths: each answer is the one-key answer, and
 * the count, with or without an answer array, is the number true. */
static void test_batch_lengths(void **state)
{
    (void)state;
    enum { HASHES = 2 * BK_LINE_RING_SIZE + 3 };
    uint64_t rng = 32;
    for (int simd = 0; simd <= 1; simd++) {
        bk_filter *f = make_filter(300, 16 * 256);
        if (set_simd(f, simd) != BK_OK) { /* no AVX2: the portable path was checked */
            bk_filter_free(f);
            continue;
        }
        bk_hash hashes[HASHES];
        for (size_t i = 0; i < HASHES; i++) {
            hashes[i] = (bk_hash){ next_random(&rng), 0 };
            if (i % 3 == 0) /* a third present, the rest mostly absent */
                assert_int_equal(bk_filter_add_hash(f, hashes[i], NULL), BK_OK);
        }
        check_batch_lengths_against_single(f, hashes, HASHES, batch_query, single_query);
        bk_filter_free(f);
    }
}

/* ---- behaviour ----------------------------------------------------------- */

static void test_no_false_negatives_and_batch_equals_single(void **state)
{
    (void)state;
    enum { N = 20000 };
    bk_params p = { .capacity = N, .fpr = 0.01 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &p, &f), BK_OK);
    static uint64_t values[2 * N];
    static bk_key keys[2 * N];
    for (int i = 0; i < 2 * N; i++) {
        values[i] = (uint64_t)i * 0x9e3779b97f4a7c15ULL;
        keys[i] = (bk_key){ &values[i], sizeof values[i] };
    }
    size_t fresh = 0;
    assert_int_equal(bk_filter_add_batch(f, keys, N, &fresh), BK_OK);
    assert_int_equal(fresh, stats_of(f).keys_added);
    static bool answers[2 * N];
    assert_int_equal(bk_filter_contains_batch(f, keys, N, answers), N);
    for (int i = 0; i < 2 * N; i++) {
        bool single = bk_filter_contains(f, &values[i], sizeof values[i]);
        if (i < N)
            assert_true(single);
        else
            answers[i] = single;
    }
    static bool batch[N];
    size_t positives = bk_filter_contains_batch(f, keys + N, N, batch);
    assert_memory_equal(batch, answers + N, N);
    size_t counted = 0;
    for (int i = 0; i < N; i++)
        counted += batch[i];
    assert_int_equal(positives, counted);
    bk_filter_free(f);
}

static void test_fpr_within_binomial_bound(void **state)
{
    (void)state;
    enum { N = 100000, ABSENT = 2000000 };
    bk_params p = { .capacity = N, .bits_per_key = 10 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &p, &f), BK_OK);
    for (uint64_t i = 0; i < N; i++)
        bk_filter_add(f, &i, sizeof i, NULL);
    uint64_t positives = 0;
    for (uint64_t i = N; i < N + ABSENT; i++)
        positives += bk_filter_contains(f, &i, sizeof i);
    double c = (double)stats_of(f).bits / N;
    double expected = bk_split_block_predicted_fpr(c, 8, 32);
    assert_true(fabs(expected - 0.01265) < 0.0002); /* the formula at 10 bits per key */
    /* 4 sigma of the binomial, plus 2% for the formula's Poisson model
     * (measured agreement: within 0.3% at this size, docs/BLOCKED.md) */
    double sigma = sqrt(ABSENT * expected * (1 - expected));
    double tolerance = 4 * sigma + 0.02 * expected * ABSENT;
    assert_true(fabs((double)positives - expected * ABSENT) <= tolerance);
    /* fill and count estimates: the design fill, and the count within 2% */
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_int_equal(s.kind, BK_KIND_SBBF);
    assert_int_equal(s.hashes, 8);
    double expected_fill = bk_split_block_expected_fill((double)N / block_count_of(f), 32);
    assert_true(fabs(s.fill_ratio - expected_fill) < 0.005);
    assert_true(fabs(s.keys_estimated - N) < 0.02 * N);
    assert_false(s.past_design_point);
    bk_filter_free(f);
}

static void test_sizing_from_fpr(void **state)
{
    (void)state;
    bk_params p = { .capacity = 1000000, .fpr = 0.01 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &p, &f), BK_OK);
    bk_stats s = stats_of(f);
    double c = (double)s.bits / 1000000;
    assert_true(c > 10.4 && c < 10.6);
    assert_true(s.target_fpr <= 0.01);
    assert_true(s.target_fpr > 0.0099);
    bk_stats design;
    assert_int_equal(bk_kind_design(BK_KIND_SBBF, &p, &design), BK_OK);
    assert_int_equal(design.bits, s.bits);
    assert_int_equal(design.hashes, 8);
    assert_int_equal(design.hash_algorithm, BK_HASH_XXH64);
    bk_filter_free(f);
}

static void test_parquet_round_trip(void **state)
{
    (void)state;
    bk_filter *f = make_filter(1000, 64 * 256);
    for (uint64_t i = 0; i < 1000; i++)
        bk_filter_add(f, &i, sizeof i, NULL);
    size_t size = 0;
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_BITSET, NULL, 0, &size), BK_OK);
    assert_int_equal(size, 64 * 32);
    uint8_t *bytes = malloc(size);
    assert_non_null(bytes);
    size_t written = 0;
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_BITSET, bytes, size - 1, &written),
                     BK_ERANGE);
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_BITSET, bytes, size, &written), BK_OK);
    assert_int_equal(written, size);
    bk_filter *g = NULL;
    assert_int_equal(bk_sbbf_from_parquet(bytes, size, BK_PARQUET_BITSET, 0, &g, NULL), BK_OK);
    assert_memory_equal(words_of(g), words_of(f), size);
    for (uint64_t i = 0; i < 1000; i++)
        assert_true(bk_filter_contains(g, &i, sizeof i));
    assert_true(fabs((double)stats_of(g).capacity - 1000) < 50); /* estimated from the fill */
    bk_filter_free(g);
    bk_filter *untouched = (bk_filter *)0x1;
    assert_int_equal(bk_sbbf_from_parquet(bytes, 0, BK_PARQUET_BITSET, 0, &untouched, NULL),
                     BK_EINVAL);
    assert_int_equal(bk_sbbf_from_parquet(bytes, 33, BK_PARQUET_BITSET, 0, &untouched, NULL),
                     BK_EINVAL);
    assert_int_equal(bk_sbbf_from_parquet(NULL, 32, BK_PARQUET_BITSET, 0, &untouched, NULL),
                     BK_EINVAL);
    assert_ptr_equal(untouched, (bk_filter *)0x1);
    free(bytes);
    bk_filter_free(f);
}

static void test_bad_params_rejected(void **state)
{
    (void)state;
    bk_filter *out = (bk_filter *)0x1;
    const uint8_t key[16] = { 1 };
    struct {
        bk_params p;
        bk_status expected;
    } cases[] = {
        { { .capacity = 0 }, BK_EINVAL },
        { { .capacity = 10, .fpr = 1.5 }, BK_EINVAL },
        { { .capacity = 10, .fpr = -0.1 }, BK_EINVAL },
        { { .capacity = 10, .bits_per_key = 0.5 }, BK_EINVAL },
        { { .capacity = 10, .bits = 1024, .hashes = 7 }, BK_EINVAL },
        { { .capacity = 10, .flags = 0x80 }, BK_EINVAL },
        { { .capacity = 10, .hash_algorithm = (bk_hash_algorithm)9 }, BK_EINVAL },
        { { .capacity = 10, .hash_algorithm = BK_HASH_SIPHASH }, BK_EKEY },
        { { .capacity = 10, .hash_algorithm = BK_HASH_XXH64, .secret_key = key }, BK_EINVAL },
        { { .capacity = 10, .bits = ((uint64_t)1 << 40) + 256 }, BK_ERANGE },
        { { .capacity = 10, .fpr = 1e-300 }, BK_ERANGE },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(bk_filter_create(BK_KIND_SBBF, &cases[i].p, &out), cases[i].expected);
        assert_ptr_equal(out, (bk_filter *)0x1);
    }
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, NULL, &out), BK_EINVAL);
    bk_params ok = { .capacity = 10 };
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &ok, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_add(NULL, "a", 1, NULL), BK_EINVAL);
    assert_false(bk_filter_contains(NULL, "a", 1));
    bk_filter *f = make_filter(10, 256);
    assert_int_equal(bk_filter_add(f, NULL, 3, NULL), BK_EINVAL);
    bk_key bad[2] = { { "a", 1 }, { NULL, 4 } };
    assert_int_equal(bk_filter_add_batch(f, bad, 2, NULL), BK_EINVAL);
    assert_int_equal(bits_set_of(f), 0); /* nothing changed */
    bk_filter_free(f);
}

static void test_union_and_intersection(void **state)
{
    (void)state;
    bk_filter *a = make_filter(2000, 128 * 256), *b = make_filter(2000, 128 * 256);
    bk_filter *other = make_filter(2000, 64 * 256);
    for (uint64_t i = 0; i < 1000; i++)
        bk_filter_add(a, &i, sizeof i, NULL);
    for (uint64_t i = 500; i < 1500; i++)
        bk_filter_add(b, &i, sizeof i, NULL);
    uint64_t a_bits = bits_set_of(a);
    assert_int_equal(bk_filter_union(a, other), BK_EINCOMPATIBLE);
    assert_int_equal(bits_set_of(a), a_bits);
    bk_set_estimate e;
    assert_int_equal(bk_filter_estimate_sets(a, b, &e), BK_OK);
    assert_true(fabs(e.union_size - 1500) < 75);
    assert_true(fabs(e.intersection_size - 500) < 100);
    bk_filter *c;
    assert_int_equal(bk_filter_copy(a, &c), BK_OK);
    assert_int_equal(bk_filter_intersect(c, b), BK_OK);
    assert_int_equal(bk_filter_union(a, b), BK_OK);
    for (uint64_t i = 0; i < 1500; i++)
        assert_true(bk_filter_contains(a, &i, sizeof i));
    for (uint64_t i = 500; i < 1000; i++)
        assert_true(bk_filter_contains(c, &i, sizeof i));
    bk_filter_free(a);
    bk_filter_free(b);
    bk_filter_free(c);
    bk_filter_free(other);
}

static void test_generic_handle(void **state)
{
    (void)state;
    bk_kind kind;
    assert_int_equal(bk_kind_from_name("sbbf", &kind), BK_OK);
    assert_int_equal(kind, BK_KIND_SBBF);
    bk_params p = { .capacity = 1000 };
    bk_filter *f;
    assert_int_equal(bk_filter_create(kind, &p, &f), BK_OK);
    assert_int_equal(bk_filter_add(f, "parquet", 7, NULL), BK_OK);
    assert_true(bk_filter_contains(f, "parquet", 7));
    /* the handle hashes as the kind does: XXH64 of the bytes */
    assert_true(bk_filter_hash(f, "abc", 3).h1 == 0x44bc2cf5ad770999ULL);
    bk_filter *g;
    assert_int_equal(bk_filter_copy(f, &g), BK_OK);
    assert_true(bk_filter_contains(g, "parquet", 7));
    assert_int_equal(bk_filter_clear(g), BK_OK);
    assert_false(bk_filter_contains(g, "parquet", 7));
    bk_filter_free(f);
    bk_filter_free(g);
}

/* The file-format hooks: the payload is the Parquet bitset itself. */
static void test_format_hooks_round_trip(void **state)
{
    (void)state;
    const bk_kind_ops *ops = bk_kind_ops_for(BK_KIND_SBBF);
    assert_non_null(ops);
    bk_filter *handle = make_filter(300, 11 * 256);
    for (uint64_t i = 0; i < 300; i++)
        bk_filter_add(handle, &i, sizeof i, NULL);
    const bk_sbbf *f = object_of(handle);
    const bk_hasher *hasher = bk_filter_hasher(handle);
    assert_int_equal(ops->params_size(f), 32);
    uint64_t payload_size = ops->payload_size(f);
    assert_int_equal(payload_size, 11 * 32);
    uint8_t params[32];
    uint8_t *payload = aligned_alloc(64, 384);
    uint8_t parquet[11 * 32];
    assert_non_null(payload);
    ops->write_params(f, params);
    ops->write_payload(f, payload);
    for (size_t i = 0; i < 11 * 8; i++) /* the bitset: little-endian words */
        for (unsigned byte = 0; byte < 4; byte++)
            parquet[4 * i + byte] = (uint8_t)(f->words[i] >> (8 * byte));
    assert_memory_equal(payload, parquet, sizeof parquet);
    /* 11 blocks: a size Arrow's reader refuses, so not exported */
    size_t written = 0;
    assert_int_equal(
        bk_sbbf_to_parquet(handle, BK_PARQUET_BITSET, parquet, sizeof parquet, &written),
        BK_EUNSUPPORTED);
    void *object = NULL;
    assert_int_equal(ops->read(params, 32, payload, payload_size, hasher, 300, false, &object),
                     BK_OK);
    bk_filter *g;
    assert_int_equal(bk_filter_wrap(ops, object, &g), BK_OK);
    assert_memory_equal(words_of(g), f->words, payload_size);
    assert_int_equal(stats_of(g).capacity, 300);
    assert_int_equal(stats_of(g).keys_added, 300);
    bk_filter_free(g);
    assert_int_equal(ops->read(params, 32, payload, payload_size, hasher, 0, true, &object),
                     BK_OK);
    assert_int_equal(bk_filter_wrap(ops, object, &g), BK_OK);
    uint64_t key = 9;
    assert_true(bk_filter_contains(g, &key, sizeof key));
    assert_int_equal(bk_filter_add(g, &key, sizeof key, NULL), BK_EIMMUTABLE);
    assert_int_equal(bk_filter_add_u64(g, key, NULL), BK_EIMMUTABLE);
    bk_filter_free(g);
    struct {
        size_t offset;
        unsigned width;
        uint64_t value;
        bk_status expected;
    } damage[] = {
        { 8, 4, 7, BK_ECORRUPT },                      /* k must be 8 */
        { 12, 4, 512, BK_ECORRUPT },                   /* block bits must be 256 */
        { 0, 8, 0, BK_ECORRUPT },                      /* no blocks */
        { 0, 8, 12, BK_ECORRUPT },                     /* payload size mismatch */
        { 0, 8, ((uint64_t)1 << 32) + 1, BK_ERANGE },  /* beyond 2^32 blocks */
        { 16, 8, 0, BK_ECORRUPT },                     /* capacity 0 */
        { 24, 8, 0xbff0000000000000ULL, BK_ECORRUPT }, /* FPR -1 */
    };
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        uint8_t bad[32];
        memcpy(bad, params, 32);
        for (unsigned byte = 0; byte < damage[i].width; byte++)
            bad[damage[i].offset + byte] = (uint8_t)(damage[i].value >> (8 * byte));
        object = (void *)0x1;
        assert_int_equal(ops->read(bad, 32, payload, payload_size, hasher, 0, false, &object),
                         damage[i].expected);
        assert_ptr_equal(object, (void *)0x1);
    }
    free(payload);
    bk_filter_free(handle);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xxh64_reference_values),
        cmocka_unit_test(test_golden_words_portable),
        cmocka_unit_test(test_golden_words_avx2),
        cmocka_unit_test(test_golden_parquet_with_header),
        cmocka_unit_test(test_matches_reference_implementation),
        cmocka_unit_test(test_portable_and_avx2_agree),
        cmocka_unit_test(test_one_key_adds_agree),
        cmocka_unit_test(test_u64_calls_agree),
        cmocka_unit_test(test_key_lengths_agree),
        cmocka_unit_test(test_batch_lengths),
        cmocka_unit_test(test_no_false_negatives_and_batch_equals_single),
        cmocka_unit_test(test_fpr_within_binomial_bound),
        cmocka_unit_test(test_sizing_from_fpr),
        cmocka_unit_test(test_parquet_round_trip),
        cmocka_unit_test(test_bad_params_rejected),
        cmocka_unit_test(test_union_and_intersection),
        cmocka_unit_test(test_generic_handle),
        cmocka_unit_test(test_format_hooks_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
