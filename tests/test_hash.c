/*
 * tests/test_hash.c -- the hashing module: SipHash against the reference
 * vectors, the hasher's algorithms, seeds and key identifiers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "bloomkit/bloom_inline.h" /* the probe walk (bloomkit/detail/bloom_detail.h) */
#include "hash.h"

/* SipHash reference vectors (Aumasson & Bernstein, vectors.h of the
 * reference implementation): key 00 01 .. 0f, message 00 01 .. (len-1).
 * A subset covering every tail length class: 0, 1, 7, 8, 15, 16, 31, 63. */
typedef struct vector {
    size_t len;
    const char *sip64; /* output bytes, hex */
    const char *sip128;
} vector;

static const vector reference_vectors[] = {
    { 0, "310e0edd47db6f72", "a3817f04ba25a8e66df67214c7550293" },
    { 1, "fd67dc93c539f874", "da87c1d86b99af44347659119b22fc45" },
    { 7, "37d1018bf50002ab", "a1f1ebbed8dbc153c0b84aa61ff08239" },
    { 8, "6224939a79f5f593", "3b62a9ba6258f5610f83e264f31497b4" },
    { 15, "e545be4961ca29a1", "5493e99933b0a8117e08ec0f97cfc3d9" },
    { 16, "db9bc2577fcc2a3f", "6ee2a4ca67b054bbfd3315bf85230577" },
    { 31, "42c341d8fa92d832", "2939b0183223fafc1723de4f52c43d35" },
    { 63, "724506eb4c328a95", "5150d1772f50834a503e069a973fbd7c" },
};

static void hex_to_bytes(const char *hex, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void reference_key_and_message(uint8_t key[16], uint8_t message[64])
{
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++)
        message[i] = (uint8_t)i;
}

static void test_siphash64_reference_vectors(void **state)
{
    (void)state;
    uint8_t key[16], message[64], expected[8];
    reference_key_and_message(key, message);
    for (size_t i = 0; i < sizeof reference_vectors / sizeof reference_vectors[0]; i++) {
        hex_to_bytes(reference_vectors[i].sip64, expected, 8);
        assert_int_equal(bk_siphash24(key, message, reference_vectors[i].len), le64(expected));
    }
}

static void test_siphash128_reference_vectors(void **state)
{
    (void)state;
    uint8_t key[16], message[64], expected[16];
    reference_key_and_message(key, message);
    for (size_t i = 0; i < sizeof reference_vectors / sizeof reference_vectors[0]; i++) {
        hex_to_bytes(reference_vectors[i].sip128, expected, 16);
        bk_hash h = bk_siphash24_128(key, message, reference_vectors[i].len);
        assert_int_equal(h.h1, le64(expected));
        assert_int_equal(h.h2, le64(expected + 8));
    }
}

static void test_hasher_siphash_uses_key(void **state)
{
    (void)state;
    uint8_t key_a[16] = { 1 }, key_b[16] = { 2 };
    bk_hasher a, b;
    assert_int_equal(bk_hasher_init(&a, BK_HASH_SIPHASH, 0, key_a), BK_OK);
    assert_int_equal(bk_hasher_init(&b, BK_HASH_SIPHASH, 0, key_b), BK_OK);
    bk_hash ha = bk_hash_key(&a, "alice", 5), hb = bk_hash_key(&b, "alice", 5);
    assert_true(ha.h1 != hb.h1 || ha.h2 != hb.h2);
    bk_hash direct = bk_siphash24_128(key_a, "alice", 5);
    assert_int_equal(ha.h1, direct.h1);
    assert_int_equal(ha.h2, direct.h2);
    /* The recorded "seed" is the key identifier, never the key itself. */
    assert_int_equal(a.seed, bk_secret_key_id(key_a));
    assert_int_not_equal(a.seed, b.seed);
    assert_false(bk_hasher_equal(&a, &b));
}

static void test_hasher_xxh3_seed(void **state)
{
    (void)state;
    bk_hasher zero, one;
    assert_int_equal(bk_hasher_init(&zero, BK_HASH_XXH3, 0, NULL), BK_OK);
    assert_int_equal(bk_hasher_init(&one, BK_HASH_XXH3, 1, NULL), BK_OK);
    bk_hash a = bk_hash_key(&zero, "alice", 5), b = bk_hash_key(&one, "alice", 5);
    assert_true(a.h1 != b.h1);
    XXH128_hash_t reference = XXH3_128bits_withSeed("alice", 5, 0);
    assert_int_equal(a.h1, reference.low64);
    assert_int_equal(a.h2, reference.high64);
    /* The inline path and the out-of-line path agree. */
    bk_hash inline_hash = bk_hash_inline(&one, "alice", 5);
    assert_int_equal(inline_hash.h1, b.h1);
    assert_int_equal(inline_hash.h2, b.h2);
    /* Empty keys hash without touching memory. */
    bk_hash empty = bk_hash_key(&zero, NULL, 0);
    assert_int_equal(empty.h1, XXH3_128bits_withSeed("", 0, 0).low64);
}

static void test_hasher_xxh64(void **state)
{
    (void)state;
    bk_hasher h;
    assert_int_equal(bk_hasher_init(&h, BK_HASH_XXH64, 0, NULL), BK_OK);
    bk_hash a = bk_hash_key(&h, "alice", 5);
    assert_int_equal(a.h1, XXH64("alice", 5, 0));
    assert_int_equal(a.h2, bk_mix64(a.h1));
}

/* bk_hash_inline's own XXH64 of 8- and 16-byte keys (bloomkit/hash_inline.h)
 * against libxxhash's XXH64, and the other lengths' path, over random keys,
 * unaligned addresses and seeds. */
static void test_inline_xxh64_matches_libxxhash(void **state)
{
    (void)state;
    static const uint64_t seeds[] = { 0, 1, 0x5eed, 0xffffffffffffffffULL };
    uint8_t bytes[64];
    uint64_t x = 12345;
    for (int round = 0; round < 2000; round++) {
        for (size_t b = 0; b < sizeof bytes; b++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            bytes[b] = (uint8_t)(x >> 56);
        }
        const uint8_t *key = bytes + round % 8; /* every alignment */
        size_t len = (size_t)round % 41;
        if (round % 3 == 0)
            len = round % 2 ? 8 : 16;
        for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
            bk_hasher h;
            assert_int_equal(bk_hasher_init(&h, BK_HASH_XXH64, seeds[s], NULL), BK_OK);
            uint64_t expected = XXH64(key, len, seeds[s]);
            assert_int_equal(bk_hash_inline(&h, key, len).h1, expected);
            assert_int_equal(bk_hash_key(&h, key, len).h1, expected);
        }
    }
}

/* bk_hash_inline's own XXH3-128 of 8- and 16-byte keys
 * (bloomkit/hash_inline.h) against libxxhash's, and the other lengths'
 * path, over random keys, unaligned addresses and seeds (those that fold
 * into the high half, and all ones). */
static void test_inline_xxh3_matches_libxxhash(void **state)
{
    (void)state;
    static const uint64_t seeds[] = {
        0, 1, 0x5eed, 0x80000000ULL, 0xffffffff00000000ULL, 0xffffffffffffffffULL
    };
    uint8_t bytes[64];
    uint64_t x = 54321;
    for (int round = 0; round < 3000; round++) {
        for (size_t b = 0; b < sizeof bytes; b++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            bytes[b] = (uint8_t)(x >> 56);
        }
        const uint8_t *key = bytes + round % 8; /* every alignment */
        size_t len = round % 3 == 0 ? (size_t)round % 41 : (round % 2 ? 8 : 16);
        for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
            bk_hasher h;
            assert_int_equal(bk_hasher_init(&h, BK_HASH_XXH3, seeds[s], NULL), BK_OK);
            XXH128_hash_t expected = XXH3_128bits_withSeed(key, len, seeds[s]);
            bk_hash inline_hash = bk_hash_inline(&h, key, len);
            bk_hash library_hash = bk_hash_key(&h, key, len);
            assert_int_equal(inline_hash.h1, expected.low64);
            assert_int_equal(inline_hash.h2, expected.high64);
            assert_int_equal(library_hash.h1, expected.low64);
            assert_int_equal(library_hash.h2, expected.high64);
        }
    }
}

static void test_hasher_rejects_bad_arguments(void **state)
{
    (void)state;
    uint8_t key[16] = { 0 };
    bk_hasher h;
    memset(&h, 0x5a, sizeof h);
    bk_hasher before = h;
    assert_int_equal(bk_hasher_init(&h, BK_HASH_SIPHASH, 0, NULL), BK_EKEY);
    assert_int_equal(bk_hasher_init(&h, BK_HASH_XXH3, 0, key), BK_EINVAL);
    assert_int_equal(bk_hasher_init(&h, (bk_hash_algorithm)42, 0, NULL), BK_EINVAL);
    assert_int_equal(bk_hasher_init(NULL, BK_HASH_XXH3, 0, NULL), BK_EINVAL);
    assert_memory_equal(&h, &before, sizeof h); /* untouched on error */
}

static void test_reduce_and_probes_cover_range(void **state)
{
    (void)state;
    /* Multiply-shift: the extremes of the input map to the extremes of the range. */
    assert_int_equal(bk_reduce(0, 1000), 0);
    assert_int_equal(bk_reduce(UINT64_MAX, 1000), 999);
    assert_int_equal(bk_reduce(UINT64_MAX, UINT64_MAX), UINT64_MAX - 1);
    /* A 2^36-bit filter: positions stay below m and use the high range. */
    const uint64_t m = (uint64_t)1 << 36;
    bk_hasher h;
    bk_hasher_init(&h, BK_HASH_XXH3, 0, NULL);
    uint64_t highest = 0;
    for (int i = 0; i < 10000; i++) {
        bk_probe probe = bk_probe_start(bk_hash_key(&h, &i, sizeof i));
        for (int j = 0; j < 7; j++) {
            uint64_t position = bk_probe_next(&probe, m);
            assert_true(position < m);
            if (position > highest)
                highest = position;
        }
    }
    assert_true(highest > m - (m >> 10)); /* reached the top 0.1% of the range */
}

static void test_strerror_names_every_code(void **state)
{
    (void)state;
    for (int code = 0; code >= BK_EOVERSIZE; code--) {
        const char *text = bk_strerror((bk_status)code);
        assert_non_null(text);
        assert_string_not_equal(text, "unknown status code");
    }
    assert_string_equal(bk_strerror((bk_status)-1000), "unknown status code");
}

/* Batch hashing (bk_hash_keys, and its AVX-512 paths for 8- and 16-byte
 * keys, for XXH3's 4-to-8 and 9-to-16-byte branches and for XXH64 keys
 * under 32 bytes with as many whole words, where the CPU has one) gives
 * exactly bk_hash_key's hash for every key, for XXH3-128, XXH64 and MIX64:
 * random keys under several seeds, in batches of every length around the
 * eight-key step, of one width or of lengths varying within a group's
 * range, with keys of other lengths mixed into some groups. */
/* A heap copy of len bytes (NULL for none). */
static const void *exact_copy(const void *bytes, size_t len)
{
    if (len == 0)
        return NULL;
    void *copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, bytes, len);
    return copy;
}

static void check_batch_hashing(bk_hash_algorithm algorithm)
{
    enum { MAX_BATCH = 67 };
    static uint64_t values[MAX_BATCH][4]; /* keys of up to 31 bytes */
    static char text[MAX_BATCH][16];
    bk_key keys[MAX_BATCH];
    bk_hash batch[MAX_BATCH];
    const uint64_t seeds[] = { 0, 1, 0x9e3779b97f4a7c15ULL, 0xffffffff00000000ULL, ~0ULL };
    uint64_t rng = 12345;
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        bk_hasher hasher;
        bk_params params = { .capacity = 1, .seed = seeds[s], .hash_algorithm = algorithm };
        assert_int_equal(bk_hasher_from_params(&hasher, &params), BK_OK);
        for (size_t count = 0; count <= MAX_BATCH; count++) {
            for (size_t i = 0; i < count; i++) {
                rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                values[i][0] = rng ^ (rng >> 29);
                values[i][1] = rng * 0x9e3779b97f4a7c15ULL;
                values[i][2] = rng * 0xbf58476d1ce4e5b9ULL;
                values[i][3] = ~rng;
                size_t r = (size_t)(rng >> 32), width;
                switch (count % 6) {
                case 0: width = 8; break; /* both vector widths */
                case 1: width = 16; break;
                case 2: width = 4 + r % 5; break;             /* XXH3's 4-8-byte branch */
                case 3: width = 9 + r % 8; break;             /* its 9-16-byte branch */
                default: width = 8 * (count / 6 % 4) + r % 8; /* XXH64: as many whole words */
                }
                keys[i] = (bk_key){ values[i], width };
                if (count % 5 == 3 && i % 11 == 4) {  /* another length in the group */
                    size_t len = (size_t)(rng >> 60); /* 0..15 bytes */
                    memcpy(text[i], values[i], sizeof text[i]);
                    keys[i] = (bk_key){ text[i], len };
                }
                /* in a buffer of exactly its length: a read past the key's
                 * end is an error under AddressSanitizer */
                keys[i].data = exact_copy(keys[i].data, keys[i].len);
            }
            assert_int_equal(bk_hash_keys(&hasher, keys, count, batch), BK_OK);
            for (size_t i = 0; i < count; i++) {
                bk_hash single = bk_hash_key(&hasher, keys[i].data, keys[i].len);
                assert_int_equal(batch[i].h1, single.h1);
                assert_int_equal(batch[i].h2, single.h2);
            }
#ifdef BK_HAVE_AVX512_SOURCES
            if (bk_cpu()->avx512dqbw && algorithm != BK_HASH_MIX64) {
                memset(batch, 0, sizeof batch);
                if (algorithm == BK_HASH_XXH64)
                    bk_hash_keys_xxh64_avx512(keys, count, seeds[s], batch);
                else
                    bk_hash_keys_xxh3_avx512(keys, count, seeds[s], batch);
                for (size_t i = 0; i < count; i++) {
                    bk_hash single = bk_hash_key(&hasher, keys[i].data, keys[i].len);
                    assert_int_equal(batch[i].h1, single.h1);
                    assert_int_equal(batch[i].h2, single.h2);
                }
            }
#endif
            for (size_t i = 0; i < count; i++)
                free((void *)keys[i].data);
        }
    }
}

static void test_batch_hashing_matches_single(void **state)
{
    (void)state;
    check_batch_hashing(BK_HASH_XXH3);
    check_batch_hashing(BK_HASH_XXH64);
    check_batch_hashing(BK_HASH_MIX64);
}

/* Packed hashing (bk_hash_packed, and its AVX-512 paths for 8- and 16-byte
 * keys) gives bk_hash_key's hash of every key: keys of lengths around the
 * two vector widths, every count around the eight-key step, all four
 * algorithms under several seeds, from an aligned and an unaligned start. */
static void check_packed_hashing(bk_hash_algorithm algorithm)
{
    enum { MAX_COUNT = 35, MAX_LEN = 33 };
    static uint8_t bytes[MAX_COUNT * MAX_LEN + 1];
    bk_hash packed[MAX_COUNT];
    const size_t lengths[] = { 0, 1, 7, 8, 9, 15, 16, 17, 24, 33 };
    const uint64_t seeds[] = { 0, 1, 0x9e3779b97f4a7c15ULL, ~0ULL };
    const uint8_t secret[BK_SECRET_KEY_BYTES] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    uint64_t rng = 777;
    for (size_t i = 0; i < sizeof bytes; i++) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        bytes[i] = (uint8_t)(rng >> 56);
    }
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        bk_hasher hasher;
        assert_int_equal(bk_hasher_init(&hasher, algorithm, seeds[s],
                                        algorithm == BK_HASH_SIPHASH ? secret : NULL),
                         BK_OK);
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            for (size_t count = 0; count <= MAX_COUNT; count++) {
                const uint8_t *start = bytes + (count % 2); /* unaligned when odd */
                memset(packed, 0, sizeof packed);
                assert_int_equal(bk_hash_packed(&hasher, start, lengths[l], count, packed),
                                 BK_OK);
                for (size_t i = 0; i < count; i++) {
                    bk_hash single = bk_hash_key(&hasher, start + i * lengths[l], lengths[l]);
                    assert_int_equal(packed[i].h1, single.h1);
                    assert_int_equal(packed[i].h2, single.h2);
                }
            }
        }
    }
}

static void test_packed_hashing_matches_single(void **state)
{
    (void)state;
    check_packed_hashing(BK_HASH_XXH3);
    check_packed_hashing(BK_HASH_XXH64);
    check_packed_hashing(BK_HASH_SIPHASH);
    check_packed_hashing(BK_HASH_MIX64);
}

/* bk_hash_packed refuses what it cannot read or write, writing nothing. */
static void test_packed_hashing_rejects_bad_arguments(void **state)
{
    (void)state;
    bk_hasher hasher;
    assert_int_equal(bk_hasher_init(&hasher, BK_HASH_XXH3, 0, NULL), BK_OK);
    uint64_t keys[2] = { 1, 2 };
    bk_hash out[2] = { { 7, 7 }, { 7, 7 } };
    assert_int_equal(bk_hash_packed(NULL, keys, 8, 2, out), BK_EINVAL);
    assert_int_equal(bk_hash_packed(&hasher, NULL, 8, 2, out), BK_EINVAL);
    assert_int_equal(bk_hash_packed(&hasher, keys, 8, 2, NULL), BK_EINVAL);
    assert_int_equal(bk_hash_packed(&hasher, keys, 16, SIZE_MAX / 8, out), BK_EINVAL);
    assert_int_equal(out[0].h1, 7);
    assert_int_equal(out[1].h2, 7);
    /* nothing to read: NULL keys are fine for empty keys or an empty batch */
    assert_int_equal(bk_hash_packed(&hasher, NULL, 8, 0, NULL), BK_OK);
    assert_int_equal(bk_hash_packed(&hasher, NULL, 0, 2, out), BK_OK);
    bk_hash empty = bk_hash_key(&hasher, "", 0);
    assert_int_equal(out[1].h1, empty.h1);
    assert_int_equal(out[1].h2, empty.h2);
}

/* bk_hash_keys refuses what it cannot hash and then writes nothing. */
static void test_key_hashing_rejects_bad_arguments(void **state)
{
    (void)state;
    bk_hasher hasher;
    assert_int_equal(bk_hasher_init(&hasher, BK_HASH_XXH3, 0, NULL), BK_OK);
    bk_key keys[2] = { { "ab", 2 }, { NULL, 3 } }; /* the second: no bytes behind it */
    bk_hash out[2] = { { 7, 7 }, { 7, 7 } };
    assert_int_equal(bk_hash_keys(NULL, keys, 1, out), BK_EINVAL);
    assert_int_equal(bk_hash_keys(&hasher, NULL, 1, out), BK_EINVAL);
    assert_int_equal(bk_hash_keys(&hasher, keys, 1, NULL), BK_EINVAL);
    assert_int_equal(bk_hash_keys(&hasher, keys, 2, out), BK_EINVAL);
    assert_int_equal(out[0].h1, 7);
    assert_int_equal(out[1].h2, 7);
    assert_int_equal(bk_hash_keys(&hasher, NULL, 0, NULL), BK_OK);
    keys[1] = (bk_key){ NULL, 0 }; /* an empty key may have no data */
    assert_int_equal(bk_hash_keys(&hasher, keys, 2, out), BK_OK);
    bk_hash ab = bk_hash_key(&hasher, "ab", 2), empty = bk_hash_key(&hasher, "", 0);
    assert_int_equal(out[0].h1, ab.h1);
    assert_int_equal(out[1].h2, empty.h2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_siphash64_reference_vectors),
        cmocka_unit_test(test_siphash128_reference_vectors),
        cmocka_unit_test(test_hasher_siphash_uses_key),
        cmocka_unit_test(test_hasher_xxh3_seed),
        cmocka_unit_test(test_hasher_xxh64),
        cmocka_unit_test(test_inline_xxh64_matches_libxxhash),
        cmocka_unit_test(test_inline_xxh3_matches_libxxhash),
        cmocka_unit_test(test_hasher_rejects_bad_arguments),
        cmocka_unit_test(test_reduce_and_probes_cover_range),
        cmocka_unit_test(test_strerror_names_every_code),
        cmocka_unit_test(test_batch_hashing_matches_single),
        cmocka_unit_test(test_packed_hashing_matches_single),
        cmocka_unit_test(test_packed_hashing_rejects_bad_arguments),
        cmocka_unit_test(test_key_hashing_rejects_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
