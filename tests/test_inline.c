/*
 * tests/test_inline.c -- the inline views of bloomkit/sbbf_inline.h,
 * bloomkit/fuse_inline.h and bloomkit/bloom_inline.h answer exactly as the
 * library's one-key queries.
 * sbbf: on random filters of several
 * sizes and XXH64 seeds, keys of every length from 0 to 40 bytes, present
 * and absent, the length passed as a run-time value and as a constant;
 * with the view compiled for the baseline (this file) and with -mavx2
 * (tests/inline_avx2.c), when the CPU has AVX2; for filters on the
 * portable path, concurrent filters, loaded copies, and adds made after
 * the view was taken.  (Without BK_TEST_AVX2_VIEWS, on other processors,
 * only the baseline form.)  Static kinds: xor8, fuse8, fuse16 and fuse8_4
 * from 0 to 10^5 keys under XXH3 and XXH64, from the key and from its
 * hash, and loaded copies.  Classic bloom: several sizes, k (1 to 255,
 * across the gather form's rounds of eight) and hashes, filters past the
 * early-exit size, concurrent filters, later adds, loaded copies; with the
 * view compiled for the baseline and with -mavx512f -mavx512dq
 * (tests/inline_avx512.c: the gather form) when the CPU has those, and
 * that form's range reduction and probe walk against the scalar ones.
 * Blocked: several sizes and seeds, k from 1 to 7 (the designs the view
 * serves; the others, XXH64, concurrent filters and the portable path are
 * refused), later adds, loaded copies; with the view compiled for the
 * baseline, with -mavx2 (tests/inline_avx2.c: the AVX2 round) and with
 * -mavx512f -mavx512dq (tests/inline_avx512.c: the AVX-512 one; both
 * finish the key's hash in the vector unit, and that step is checked
 * against the scalar one) when the CPU has them.
 * The sbbf and blocked views compiled here, without AVX2, call SIMD
 * tests compiled into this file where the CPU has them
 * (bloomkit/detail/view_simd.h): every check forces each path from the
 * one the getter chose (checked against the library's CPU detection) down
 * to the portable test, and tests/inline_no_simd_calls.c compiles the
 * views with BK_VIEW_NO_SIMD_CALLS.
 * SipHash filters have no view.  The sbbf and blocked views' integer-key
 * queries (bk_*_view_contains_u64) answer as bk_filter_contains_u64, in
 * every compiled form, and an 8-byte key's integer as the key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "bloomkit/sbbf_inline.h"
#include "inline_paths.h"
#include "blocked.h"
#include "cpu.h"
#include "filter.h"
#include "sbbf.h"

#define MAX_KEY_BYTES 40
#define ABSENT_KEYS 20000

static const uint8_t secret_key[BK_SECRET_KEY_BYTES] = { 1, 2,  3,  4,  5,  6,  7,  8,
                                                         9, 10, 11, 12, 13, 14, 15, 16 };

/* The integer a key stands for in the integer-key checks: an 8-byte key's
 * little-endian value (so that bk_filter_contains_u64 of it is the key's
 * own answer), another key's first bytes mixed with its length. */
static uint64_t key_value(const bk_key *key)
{
    const uint8_t *bytes = key->data;
    uint64_t value = 0;
    for (size_t b = 0; b < key->len && b < 8; b++)
        value |= (uint64_t)bytes[b] << (8 * b);
    return key->len == 8 ? value : (value + key->len) * 0x9e3779b97f4a7c15ULL;
}

/* splitmix64: the test's own reproducible random numbers */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* count keys of random bytes; lengths cycle through 0..MAX_KEY_BYTES with
 * 8 and 16 (the lengths with their own inline code) twice as often. */
typedef struct key_list {
    uint8_t *bytes;
    bk_key *keys;
    size_t count;
} key_list;

static key_list random_keys(size_t count, uint64_t seed)
{
    key_list list = { malloc(count * MAX_KEY_BYTES + 1), malloc((count + 1) * sizeof(bk_key)),
                      count };
    assert_non_null(list.bytes);
    assert_non_null(list.keys);
    uint64_t state = seed;
    for (size_t i = 0; i < count; i++) {
        uint8_t *key = list.bytes + i * MAX_KEY_BYTES;
        size_t pick = i % (MAX_KEY_BYTES + 3);
        size_t len = pick == MAX_KEY_BYTES + 1 ? 8 : pick == MAX_KEY_BYTES + 2 ? 16 : pick;
        for (size_t b = 0; b < len; b++)
            key[b] = (uint8_t)next_random(&state);
        list.keys[i].data = len > 0 ? key : NULL;
        list.keys[i].len = len;
    }
    return list;
}

static void free_keys(key_list *list)
{
    free(list->bytes);
    free(list->keys);
}

/* An XXH64 filter (the only hash an sbbf view serves) with `seed`. */
static bk_params params_for(uint64_t seed, uint64_t capacity)
{
    bk_params p = {
        .capacity = capacity, .fpr = 0.01, .hash_algorithm = BK_HASH_XXH64, .seed = seed
    };
    return p;
}

static const uint64_t seeds[] = { 0, 0x5eed, UINT64_MAX };
#define SEEDS (sizeof seeds / sizeof seeds[0])

/* A copy of `filter` read back from its serialized bytes. */
static bk_filter *loaded_copy(const bk_filter *filter)
{
    size_t size = 0;
    assert_int_equal(bk_filter_serialized_size(filter, &size), BK_OK);
    void *buffer = malloc(size);
    assert_non_null(buffer);
    assert_int_equal(bk_filter_serialize(filter, buffer, size, NULL), BK_OK);
    bk_filter *copy = NULL;
    assert_int_equal(bk_filter_deserialize(buffer, size, NULL, &copy), BK_OK);
    free(buffer);
    return copy;
}

/* ---- sbbf ---------------------------------------------------------------- */

/* Every key of `keys` answers as bk_filter_contains says, in every
 * compiled form of the view; returns how many were present. */
static size_t check_sbbf_view(const bk_filter *filter, const key_list *keys)
{
    struct bk_sbbf_view view;
    assert_int_equal(bk_sbbf_view(filter, &view), BK_OK);
    size_t present = 0;
    for (size_t i = 0; i < keys->count; i++) {
        const bk_key *key = &keys->keys[i];
        bool expected = bk_filter_contains(filter, key->data, key->len);
        bk_hash hash = bk_filter_hash(filter, key->data, key->len);
        uint64_t value = key_value(key);
        bool expected_u64 = bk_filter_contains_u64(filter, value);
        if (key->len == 8)
            assert_int_equal(expected_u64, expected);
        /* the SIMD test the getter chose and every narrower one, forced */
        for (unsigned path = BK_VIEW_SIMD_NONE; path <= view.simd_call; path++) {
            struct bk_sbbf_view forced = view;
            forced.simd_call = path;
            assert_int_equal(bk_sbbf_view_contains(&forced, key->data, key->len), expected);
            assert_int_equal(view_contains_constant_length(&forced, key->data, key->len),
                             expected);
            assert_int_equal(bk_sbbf_view_contains_hash64(&forced, hash.h1), expected);
            assert_int_equal(bk_sbbf_view_contains_u64(&forced, value), expected_u64);
        }
#ifdef BK_TEST_NO_SIMD_CALLS
        assert_int_equal(no_simd_calls_sbbf_view_contains(&view, key->data, key->len), expected);
        assert_int_equal(no_simd_calls_sbbf_view_contains_u64(&view, value), expected_u64);
#endif
#ifdef BK_TEST_AVX2_VIEWS
        if (__builtin_cpu_supports("avx2")) {
            assert_int_equal(avx2_sbbf_view_contains(&view, key->data, key->len), expected);
            assert_int_equal(avx2_sbbf_view_contains_constant_length(&view, key->data, key->len),
                             expected);
            assert_int_equal(avx2_sbbf_view_contains_u64(&view, value), expected_u64);
        }
#endif
        present += expected;
    }
    return present;
}

static void check_sbbf_filter(bk_filter *filter, size_t count, uint64_t seed)
{
    key_list added = random_keys(count, seed), absent = random_keys(ABSENT_KEYS, seed + 1);
    assert_int_equal(bk_filter_add_batch(filter, added.keys, added.count, NULL), BK_OK);
    assert_int_equal(check_sbbf_view(filter, &added), count);
    size_t false_positives = check_sbbf_view(filter, &absent);
    /* a full filter still leaves most absent keys absent: the comparison
     * above saw both answers */
    assert_true(count == 0 || false_positives < ABSENT_KEYS / 2);
    free_keys(&added);
    free_keys(&absent);
}

static bk_filter *create_sbbf(const bk_params *params)
{
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, params, &filter), BK_OK);
    return filter;
}

static void test_sbbf_view_matches_library(void **state)
{
    (void)state;
    static const uint64_t sizes[] = { 1, 100, 5000, 100000 };
    for (size_t a = 0; a < SEEDS; a++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            bk_params p = params_for(seeds[a], sizes[s]);
            bk_filter *filter = create_sbbf(&p);
            check_sbbf_filter(filter, (size_t)sizes[s], 1000 * a + s);
            bk_filter_free(filter);
        }
}

/* A filter on the portable path (as BLOOMKIT_PORTABLE=1 or a CPU without
 * AVX2 leaves it; chosen here through the internal src/sbbf.h) and a
 * concurrent one give views that test word by word. */
static void test_sbbf_view_word_by_word(void **state)
{
    (void)state;
    bk_params p = params_for(0, 20000);
    bk_params concurrent = p;
    concurrent.flags = BK_FLAG_CONCURRENT;
    bk_filter *filters[2] = { create_sbbf(&p), create_sbbf(&concurrent) };
    assert_int_equal(bk_sbbf_set_simd(bk_filter_object_of(filters[0], BK_KIND_SBBF), false),
                     BK_OK);
    for (int f = 0; f < 2; f++) {
        struct bk_sbbf_view view;
        assert_int_equal(bk_sbbf_view(filters[f], &view), BK_OK);
        assert_true(view.word_by_word);
        check_sbbf_filter(filters[f], 20000, 77 + (uint64_t)f);
        bk_filter_free(filters[f]);
    }
}

/* The block checks a view compiles to -- word by word, the 64-bit scalar
 * one (callers built without SSE2), the SSE2 one (x86-64 callers built
 * without AVX2) -- agree on random blocks of every density and random
 * keys, and on blocks holding exactly the key's bits, or all but one. */
static void test_sbbf_block_tests_agree(void **state)
{
    (void)state;
    uint64_t random = 31;
    _Alignas(32) uint32_t block[BK_SBBF_WORDS];
    for (int trial = 0; trial < 200000; trial++) {
        uint32_t x = (uint32_t)next_random(&random);
        int shape = trial % 4;
        for (unsigned i = 0; i < BK_SBBF_WORDS; i++) {
            uint32_t r = (uint32_t)next_random(&random);
            block[i] = shape == 0   ? r & (uint32_t)next_random(&random) /* sparse */
                       : shape == 1 ? r | (uint32_t)next_random(&random) /* dense */
                                    : bk_sbbf_word_mask(x, i);           /* the key's bits */
        }
        if (shape == 3) /* all but one of them */
            block[next_random(&random) % BK_SBBF_WORDS] = 0;
        bool expected = bk_sbbf_block_test_portable(block, x);
        assert_int_equal(bk_sbbf_block_test_scalar(block, x), expected);
#if defined(__SSE2__)
        assert_int_equal(bk_sbbf_block_test_sse2(block, x), expected);
#endif
        assert_int_equal(expected, shape == 2 || (shape != 3 && expected));
    }
}

/* A view reads the filter's own words: keys added after it was taken are
 * present through it, and a loaded copy's view answers as the original. */
static void test_sbbf_view_sees_later_adds_and_loaded_copies(void **state)
{
    (void)state;
    bk_params p = params_for(0, 10000);
    bk_filter *filter = create_sbbf(&p);
    struct bk_sbbf_view early;
    assert_int_equal(bk_sbbf_view(filter, &early), BK_OK);
    key_list keys = random_keys(10000, 99);
    assert_int_equal(bk_filter_add_batch(filter, keys.keys, keys.count, NULL), BK_OK);
    for (size_t i = 0; i < keys.count; i++)
        assert_true(bk_sbbf_view_contains(&early, keys.keys[i].data, keys.keys[i].len));

    bk_filter *copy = loaded_copy(filter);
    key_list absent = random_keys(ABSENT_KEYS, 100);
    assert_int_equal(check_sbbf_view(copy, &keys), keys.count);
    check_sbbf_view(copy, &absent);
    bk_filter_free(copy);
    free_keys(&keys);
    free_keys(&absent);
    bk_filter_free(filter);
}

/* NULL arguments and a filter of another kind: an error, *view untouched. */
static void test_view_init_rejects_null(void **state)
{
    (void)state;
    struct bk_sbbf_view view, untouched;
    memset(&view, 0xa5, sizeof view);
    untouched = view;
    assert_int_equal(bk_sbbf_view(NULL, &view), BK_EINVAL);
    bk_params p = params_for(0, 10);
    bk_filter *sbbf = create_sbbf(&p);
    assert_int_equal(bk_sbbf_view(sbbf, NULL), BK_EINVAL);
    bk_filter *other = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_BLOCKED, &p, &other), BK_OK);
    assert_int_equal(bk_sbbf_view(other, &view), BK_EKIND);
    assert_memory_equal(&view, &untouched, sizeof view);
    bk_filter_free(other);
    bk_filter_free(sbbf);
}

/* BK_HASH_XXH3 (the default) asks an sbbf for XXH64, which has a view;
 * SipHash, a library call, has none, and *view is left as it was. */
static void test_view_init_follows_the_hash(void **state)
{
    (void)state;
    bk_params p = params_for(7, 1000);
    p.hash_algorithm = BK_HASH_XXH3;
    bk_filter *sbbf = create_sbbf(&p);
    key_list keys = random_keys(1000, 5);
    assert_int_equal(bk_filter_add_batch(sbbf, keys.keys, keys.count, NULL), BK_OK);
    assert_int_equal(check_sbbf_view(sbbf, &keys), keys.count);
    bk_filter_free(sbbf);
    free_keys(&keys);

    p.hash_algorithm = BK_HASH_SIPHASH;
    p.secret_key = secret_key;
    sbbf = create_sbbf(&p);
    struct bk_sbbf_view view, untouched;
    memset(&view, 0xa5, sizeof view);
    untouched = view;
    assert_int_equal(bk_sbbf_view(sbbf, &view), BK_EUNSUPPORTED);
    assert_memory_equal(&view, &untouched, sizeof view);
    bk_filter_free(sbbf);
}

/* ---- xor and binary fuse ------------------------------------------------- */

static const bk_kind static_kinds[] = { BK_KIND_XOR8, BK_KIND_FUSE8, BK_KIND_FUSE16,
                                        BK_KIND_FUSE8_4 };
#define STATIC_KINDS (sizeof static_kinds / sizeof static_kinds[0])

/* Every key of `keys` answers as bk_filter_contains says, through the
 * view from the key (run-time and constant length) and from its hash. */
static size_t check_fuse_view(const bk_filter *filter, const key_list *keys)
{
    struct bk_fuse_view view;
    assert_int_equal(bk_fuse_view(filter, &view), BK_OK);
    size_t present = 0;
    for (size_t i = 0; i < keys->count; i++) {
        const bk_key *key = &keys->keys[i];
        bool expected = bk_filter_contains(filter, key->data, key->len);
        assert_int_equal(bk_fuse_view_contains(&view, key->data, key->len), expected);
        assert_int_equal(fuse_view_contains_constant_length(&view, key->data, key->len),
                         expected);
        bk_hash hash = bk_filter_hash(filter, key->data, key->len);
        assert_int_equal(bk_fuse_view_contains_hash(&view, hash), expected);
        if (key->len == 8) { /* the integer-key call: the 8 bytes little-endian */
            const uint8_t *b = key->data;
            uint64_t value = 0;
            for (unsigned j = 0; j < 8; j++)
                value |= (uint64_t)b[j] << (8 * j);
            assert_int_equal(bk_filter_contains_u64(filter, value), expected);
        }
        present += expected;
    }
    return present;
}

static bk_filter *build_fuse(bk_kind kind, const bk_params *params, const key_list *keys)
{
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_build(kind, params, keys->keys, keys->count, &filter), BK_OK);
    return filter;
}

/* Every static kind, from empty to 10^5 keys, XXH3 (two seeds), XXH64 and
 * MIX64. */
static void test_fuse_view_matches_library(void **state)
{
    (void)state;
    static const size_t sizes[] = { 0, 1, 2, 100, 5000, 100000 };
    static const bk_params hashes[] = {
        { .hash_algorithm = BK_HASH_XXH3 },
        { .hash_algorithm = BK_HASH_XXH3, .seed = 0x5eed },
        { .hash_algorithm = BK_HASH_XXH64, .seed = 3 },
        { .hash_algorithm = BK_HASH_MIX64, .seed = 11 },
    };
    for (size_t k = 0; k < STATIC_KINDS; k++)
        for (size_t h = 0; h < sizeof hashes / sizeof hashes[0]; h++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                uint64_t seed = 100 * k + 10 * h + s;
                key_list added = random_keys(sizes[s], seed);
                key_list absent = random_keys(ABSENT_KEYS, seed + 5000);
                bk_filter *filter = build_fuse(static_kinds[k], &hashes[h], &added);
                assert_int_equal(check_fuse_view(filter, &added), added.count);
                /* most "absent" keys are absent (the short ones repeat
                 * added keys): the comparison saw both answers */
                assert_true(check_fuse_view(filter, &absent) < ABSENT_KEYS / 2);
                bk_filter_free(filter);
                free_keys(&added);
                free_keys(&absent);
            }
}

/* Both hash rules (bloomkit/fuse_inline.h): small sets, whose first attempt
 * fails now and then, give filters of each; the view answers as the
 * library on every one. */
static void test_fuse_view_both_hash_rules(void **state)
{
    (void)state;
    bk_params p = { .hash_algorithm = BK_HASH_XXH3, .seed = 17 };
    for (size_t k = 0; k < STATIC_KINDS; k++) {
        bool seen[2] = { false, false };
        for (uint64_t set = 0; set < 400 && !(seen[0] && seen[1]); set++) {
            key_list keys = random_keys(30, 7000 + set), absent = random_keys(200, 9000 + set);
            bk_filter *filter = build_fuse(static_kinds[k], &p, &keys);
            struct bk_fuse_view view;
            assert_int_equal(bk_fuse_view(filter, &view), BK_OK);
            seen[view.mixed] = true;
            assert_int_equal(check_fuse_view(filter, &keys), keys.count);
            check_fuse_view(filter, &absent);
            bk_filter_free(filter);
            free_keys(&keys);
            free_keys(&absent);
        }
        assert_true(seen[0] && seen[1]);
    }
}

/* A filter read back from its bytes gives a view that answers alike. */
static void test_fuse_view_of_loaded_copy(void **state)
{
    (void)state;
    key_list keys = random_keys(20000, 4242), absent = random_keys(ABSENT_KEYS, 4343);
    bk_params p = { .seed = 9 };
    for (size_t k = 0; k < STATIC_KINDS; k++) {
        bk_filter *built = NULL;
        assert_int_equal(bk_filter_build(static_kinds[k], &p, keys.keys, keys.count, &built),
                         BK_OK);
        bk_filter *copy = loaded_copy(built);
        assert_int_equal(check_fuse_view(copy, &keys), keys.count);
        check_fuse_view(copy, &absent);
        bk_filter_free(copy);
        bk_filter_free(built);
    }
    free_keys(&keys);
    free_keys(&absent);
}

/* NULL arguments, SipHash filters and filters of another kind: an error,
 * *view untouched. */
static void test_fuse_view_init_errors(void **state)
{
    (void)state;
    key_list keys = random_keys(100, 1);
    bk_params p = { .hash_algorithm = BK_HASH_SIPHASH, .secret_key = secret_key };
    bk_filter *keyed = build_fuse(BK_KIND_FUSE8, &p, &keys);
    struct bk_fuse_view view, untouched;
    memset(&view, 0xa5, sizeof view);
    untouched = view;
    assert_int_equal(bk_fuse_view(keyed, &view), BK_EUNSUPPORTED);
    assert_memory_equal(&view, &untouched, sizeof view);
    assert_int_equal(bk_fuse_view(NULL, &view), BK_EINVAL);
    assert_int_equal(bk_fuse_view(keyed, NULL), BK_EINVAL);
    bk_params sbbf_params = params_for(0, 100);
    bk_filter *sbbf = create_sbbf(&sbbf_params);
    assert_int_equal(bk_fuse_view(sbbf, &view), BK_EKIND);
    assert_memory_equal(&view, &untouched, sizeof view);
    bk_filter_free(sbbf);
    bk_filter_free(keyed);
    free_keys(&keys);
}

/* ---- classic bloom ------------------------------------------------------- */

#ifdef BK_TEST_AVX512_VIEWS
static bool cpu_has_avx512dq(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}
#endif

/* Every key of `keys` answers as bk_filter_contains says, through the view
 * from the key (run-time and constant length) and from its hash. */
static size_t check_bloom_view(const bk_filter *filter, const key_list *keys)
{
    struct bk_bloom_view view;
    assert_int_equal(bk_bloom_view(filter, &view), BK_OK);
    size_t present = 0;
    for (size_t i = 0; i < keys->count; i++) {
        const bk_key *key = &keys->keys[i];
        bool expected = bk_filter_contains(filter, key->data, key->len);
        assert_int_equal(bk_bloom_view_contains(&view, key->data, key->len), expected);
        assert_int_equal(bloom_view_contains_constant_length(&view, key->data, key->len),
                         expected);
        bk_hash hash = bk_filter_hash(filter, key->data, key->len);
        assert_int_equal(bk_bloom_view_contains_hash(&view, hash), expected);
#ifdef BK_TEST_AVX512_VIEWS
        if (cpu_has_avx512dq()) {
            assert_int_equal(avx512_bloom_view_contains(&view, key->data, key->len), expected);
            assert_int_equal(
                avx512_bloom_view_contains_constant_length(&view, key->data, key->len),
                expected);
            assert_int_equal(avx512_bloom_view_contains_hash(&view, hash), expected);
        }
#endif
        present += expected;
    }
    return present;
}

static bk_filter *create_bloom(const bk_params *params)
{
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, params, &filter), BK_OK);
    return filter;
}

static void check_bloom_filter(bk_filter *filter, size_t count, uint64_t seed)
{
    key_list added = random_keys(count, seed), absent = random_keys(ABSENT_KEYS, seed + 1);
    assert_int_equal(bk_filter_add_batch(filter, added.keys, added.count, NULL), BK_OK);
    assert_int_equal(check_bloom_view(filter, &added), count);
    assert_true(check_bloom_view(filter, &absent) < ABSENT_KEYS / 2);
    free_keys(&added);
    free_keys(&absent);
}

/* Several sizes, k and hashes, and a filter over BK_BLOOM_EXIT_EARLY_BYTES
 * (whose queries stop after two probes), full and half full. */
static void test_bloom_view_matches_library(void **state)
{
    (void)state;
    const bk_params filters[] = {
        { .capacity = 1, .fpr = 0.01 },
        { .capacity = 5000, .fpr = 0.01, .seed = 0x5eed },
        { .capacity = 100000, .fpr = 0.001, .hash_algorithm = BK_HASH_XXH64, .seed = 3 },
        { .bits = 8 * (uint64_t)BK_BLOOM_EXIT_EARLY_BYTES + 4096,
          .hashes = 7,
          .capacity = 100000 },
        { .bits = 8 * (uint64_t)BK_BLOOM_EXIT_EARLY_BYTES + 4096,
          .hashes = 1,
          .capacity = 100000,
          .flags = BK_FLAG_CONCURRENT },
        /* k at and past the gather form's rounds of eight probes */
        { .bits = 200000, .hashes = 8, .capacity = 10000 },
        { .bits = 200000, .hashes = 9, .capacity = 10000, .seed = 9 },
        { .bits = (uint64_t)1 << 21, .hashes = 16, .capacity = 20000 },
        { .bits = (uint64_t)1 << 21, .hashes = 17, .capacity = 20000 },
        { .bits = (uint64_t)1 << 22, .hashes = BK_MAX_HASHES, .capacity = 1000 },
    };
    for (size_t f = 0; f < sizeof filters / sizeof filters[0]; f++) {
        bk_filter *filter = create_bloom(&filters[f]);
        struct bk_bloom_view view;
        assert_int_equal(bk_bloom_view(filter, &view), BK_OK);
        assert_int_equal(view.exit_early, f == 3 || f == 4);
        check_bloom_filter(filter,
                           (size_t)(filters[f].capacity < 50000 ? filters[f].capacity : 50000),
                           700 + f);
        bk_filter_free(filter);
    }
}

#ifdef BK_TEST_AVX512_VIEWS
/* The gather form's walk, g_i = h1 + i h2 + (i^3 - i) / 6, is the scalar
 * walk's g_i for every i up to BK_MAX_HASHES, on random hashes and on
 * hashes whose sums wrap around 2^64. */
static void test_bloom_gather_walk_matches_scalar(void **state)
{
    (void)state;
    if (!cpu_has_avx512dq())
        skip();
    uint64_t random = 77;
    for (int trial = 0; trial < 200; trial++) {
        bk_hash hash = { next_random(&random), next_random(&random) };
        if (trial == 0)
            hash = (bk_hash){ UINT64_MAX, UINT64_MAX };
        bk_probe walk = bk_probe_start(hash);
        for (unsigned first = 0; first < BK_MAX_HASHES; first += 8) {
            uint64_t lanes[8];
            avx512_probe_hashes_x8(hash, first, lanes);
            for (unsigned j = 0; j < 8 && first + j < BK_MAX_HASHES; j++) {
                assert_int_equal(lanes[j], walk.position_hash);
                bk_probe_next(&walk, 1);
            }
        }
    }
}

/* The gather form's range reduction is bk_reduce's, lane by lane, for
 * ranges below 2^32 (its short form), at the boundary and above (the
 * 128-bit product), and for the extreme inputs. */
static void test_bloom_gather_reduce_matches_scalar(void **state)
{
    (void)state;
    if (!cpu_has_avx512dq())
        skip();
    const uint64_t ranges[] = { 1,
                                2,
                                63,
                                64,
                                95851,
                                958505838,
                                UINT32_MAX - 1,
                                UINT32_MAX,
                                (uint64_t)UINT32_MAX + 1,
                                (uint64_t)1 << 40,
                                (uint64_t)1 << 56,
                                UINT64_MAX };
    uint64_t random = 5;
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0] + 100; r++) {
        uint64_t range = r < sizeof ranges / sizeof ranges[0] ? ranges[r]
                                                              : next_random(&random) >> (r % 64);
        if (range == 0)
            range = 1;
        for (int trial = 0; trial < 100; trial++) {
            uint64_t x[8], reduced[8];
            for (int j = 0; j < 8; j++)
                x[j] = next_random(&random);
            if (trial == 0)
                x[0] = UINT64_MAX, x[1] = 0, x[2] = (uint64_t)UINT32_MAX << 32;
            avx512_reduce_x8(x, range, reduced);
            for (int j = 0; j < 8; j++)
                assert_int_equal(reduced[j], bk_reduce(x[j], range));
        }
    }
}
#endif

/* Keys added after the view was taken, and a loaded copy's view. */
static void test_bloom_view_sees_later_adds_and_loaded_copies(void **state)
{
    (void)state;
    bk_params p = { .capacity = 10000, .fpr = 0.01 };
    bk_filter *filter = create_bloom(&p);
    struct bk_bloom_view early;
    assert_int_equal(bk_bloom_view(filter, &early), BK_OK);
    key_list keys = random_keys(10000, 31), absent = random_keys(ABSENT_KEYS, 32);
    assert_int_equal(bk_filter_add_batch(filter, keys.keys, keys.count, NULL), BK_OK);
    for (size_t i = 0; i < keys.count; i++)
        assert_true(bk_bloom_view_contains(&early, keys.keys[i].data, keys.keys[i].len));

    bk_filter *handle = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &p, &handle), BK_OK);
    assert_int_equal(bk_filter_add_batch(handle, keys.keys, keys.count, NULL), BK_OK);
    bk_filter *copy = loaded_copy(handle);
    assert_int_equal(check_bloom_view(copy, &keys), keys.count);
    check_bloom_view(copy, &absent);
    bk_filter_free(copy);
    bk_filter_free(handle);
    bk_filter_free(filter);
    free_keys(&keys);
    free_keys(&absent);
}

/* NULL arguments, SipHash filters and another kind: an error, *view
 * untouched. */
static void test_bloom_view_init_errors(void **state)
{
    (void)state;
    bk_params p = {
        .capacity = 100, .fpr = 0.01, .hash_algorithm = BK_HASH_SIPHASH, .secret_key = secret_key
    };
    bk_filter *keyed = create_bloom(&p);
    struct bk_bloom_view view, untouched;
    memset(&view, 0xa5, sizeof view);
    untouched = view;
    assert_int_equal(bk_bloom_view(keyed, &view), BK_EUNSUPPORTED);
    assert_int_equal(bk_bloom_view(NULL, &view), BK_EINVAL);
    assert_int_equal(bk_bloom_view(keyed, NULL), BK_EINVAL);
    bk_params blocked_params = { .capacity = 100, .fpr = 0.01 };
    bk_filter *blocked = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_BLOCKED, &blocked_params, &blocked), BK_OK);
    assert_int_equal(bk_bloom_view(blocked, &view), BK_EKIND);
    bk_filter_free(blocked);
    assert_memory_equal(&view, &untouched, sizeof view);
    bk_filter_free(keyed);
}

/* ---- blocked ------------------------------------------------------------- */

/* Every key of `keys` answers as bk_filter_contains says, through the view
 * from the key (run-time and constant length) and from its hash, in every
 * compiled form; returns how many were present. */
static size_t check_blocked_view(const bk_filter *filter, const key_list *keys)
{
    struct bk_blocked_view view;
    assert_int_equal(bk_blocked_view(filter, &view), BK_OK);
    size_t present = 0;
    for (size_t i = 0; i < keys->count; i++) {
        const bk_key *key = &keys->keys[i];
        bool expected = bk_filter_contains(filter, key->data, key->len);
        bk_hash hash = bk_filter_hash(filter, key->data, key->len);
        uint64_t value = key_value(key);
        bool expected_u64 = bk_filter_contains_u64(filter, value);
        if (key->len == 8)
            assert_int_equal(expected_u64, expected);
        /* the SIMD test the getter chose and every narrower one, forced */
        for (unsigned path = BK_VIEW_SIMD_NONE; path <= view.simd_call; path++) {
            struct bk_blocked_view forced = view;
            forced.simd_call = path;
            assert_int_equal(bk_blocked_view_contains(&forced, key->data, key->len), expected);
            assert_int_equal(blocked_view_contains_constant_length(&forced, key->data, key->len),
                             expected);
            assert_int_equal(bk_blocked_view_contains_hash(&forced, hash), expected);
            assert_int_equal(bk_blocked_view_contains_u64(&forced, value), expected_u64);
        }
#ifdef BK_TEST_NO_SIMD_CALLS
        assert_int_equal(no_simd_calls_blocked_view_contains(&view, key->data, key->len),
                         expected);
        assert_int_equal(no_simd_calls_blocked_view_contains_hash(&view, hash), expected);
        assert_int_equal(no_simd_calls_blocked_view_contains_u64(&view, value), expected_u64);
#endif
#ifdef BK_TEST_AVX2_VIEWS
        if (__builtin_cpu_supports("avx2")) {
            assert_int_equal(avx2_blocked_view_contains(&view, key->data, key->len), expected);
            assert_int_equal(
                avx2_blocked_view_contains_constant_length(&view, key->data, key->len),
                expected);
            assert_int_equal(avx2_blocked_view_contains_hash(&view, hash), expected);
            assert_int_equal(avx2_blocked_view_contains_u64(&view, value), expected_u64);
        }
#endif
#ifdef BK_TEST_AVX512_VIEWS
        if (cpu_has_avx512dq()) {
            assert_int_equal(avx512_blocked_view_contains(&view, key->data, key->len), expected);
            assert_int_equal(
                avx512_blocked_view_contains_constant_length(&view, key->data, key->len),
                expected);
            assert_int_equal(avx512_blocked_view_contains_hash(&view, hash), expected);
            assert_int_equal(avx512_blocked_view_contains_u64(&view, value), expected_u64);
        }
#endif
        present += expected;
    }
    return present;
}

static bk_filter *create_blocked(const bk_params *params)
{
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_BLOCKED, params, &filter), BK_OK);
    return filter;
}

/* Adds `count` keys, then checks them and absent keys through the view:
 * every added key present, and both answers seen. */
static void check_blocked_filter(bk_filter *filter, size_t count, uint64_t seed)
{
    key_list added = random_keys(count, seed), absent = random_keys(ABSENT_KEYS, seed + 1);
    assert_int_equal(bk_filter_add_batch(filter, added.keys, added.count, NULL), BK_OK);
    assert_int_equal(check_blocked_view(filter, &added), count);
    assert_true(check_blocked_view(filter, &absent) < ABSENT_KEYS / 2);
    free_keys(&added);
    free_keys(&absent);
}

/* The view of every blocked filter but a SipHash or concurrent one, in
 * every compiled form (scalar, AVX2, AVX-512), answers as the library:
 * k from 1 to 7 (one round), 8 to 15 (two and three rounds, the last of
 * every length), 21 (three full rounds) and the largest k; the 1% design;
 * XXH64; MIX64 (8-byte keys mixed, the others XXH3); a one-block filter;
 * a seeded filter; and with the library on its portable path. */
static void test_blocked_view_matches_library(void **state)
{
    (void)state;
    const unsigned ks[] = {
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 21, BK_MAX_HASHES
    };
    const size_t k_count = sizeof ks / sizeof ks[0];
    for (size_t c = 0; c < k_count + 6; c++) {
        bk_params p = { .capacity = 5000, .fpr = 0.01 };
        if (c < k_count)
            p = (bk_params){ .bits = 512 * (100 + 40 * (uint64_t)(ks[c] % 32)),
                             .hashes = ks[c],
                             .capacity = 5000,
                             .seed = ks[c] };
        else if (c == k_count) /* the 1% design, k = 6 */
            p = (bk_params){ .capacity = 20000, .fpr = 0.01 };
        else if (c == k_count + 1)
            p = (bk_params){ .capacity = 1, .fpr = 0.01 };
        else if (c == k_count + 2)
            p = (bk_params){ .capacity = 5000, .fpr = 0.01, .seed = 0x5eed };
        else if (c == k_count + 3)
            p = (bk_params){ .capacity = 5000, .fpr = 0.001, .hash_algorithm = BK_HASH_XXH64 };
        else if (c == k_count + 5)
            p = (bk_params){ .capacity = 5000, .fpr = 0.01, .hash_algorithm = BK_HASH_MIX64 };
        bk_filter *filter = create_blocked(&p);
        if (c == k_count + 4) { /* the library's portable path: the same view */
            bk_status status = bk_blocked_set_path(bk_filter_object_of(filter, BK_KIND_BLOCKED),
                                                   BK_BLOCKED_PORTABLE);
            assert_int_equal(status, BK_OK);
        }
        struct bk_blocked_view view;
        assert_int_equal(bk_blocked_view(filter, &view), BK_OK);
        bk_stats stats;
        bk_filter_stats(filter, &stats);
        assert_int_equal(view.hashes, stats.hashes);
        assert_int_equal(view.rounds, (stats.hashes + 6) / 7);
        assert_int_equal(view.block_count, stats.bits / BK_BLOCKED_BLOCK_BITS);
        check_blocked_filter(filter, (size_t)p.capacity, 1300 + c);
        bk_filter_free(filter);
    }
}

/* Keys added after the view was taken, and a loaded copy's view. */
static void test_blocked_view_sees_later_adds_and_loaded_copies(void **state)
{
    (void)state;
    bk_params p = { .capacity = 10000, .fpr = 0.01 };
    bk_filter *filter = create_blocked(&p);
    struct bk_blocked_view early;
    assert_int_equal(bk_blocked_view(filter, &early), BK_OK);
    key_list keys = random_keys(10000, 41), absent = random_keys(ABSENT_KEYS, 42);
    assert_int_equal(bk_filter_add_batch(filter, keys.keys, keys.count, NULL), BK_OK);
    for (size_t i = 0; i < keys.count; i++)
        assert_true(bk_blocked_view_contains(&early, keys.keys[i].data, keys.keys[i].len));

    bk_filter *copy = loaded_copy(filter);
    assert_int_equal(check_blocked_view(copy, &keys), keys.count);
    check_blocked_view(copy, &absent);
    bk_filter_free(copy);
    bk_filter_free(filter);
    free_keys(&keys);
    free_keys(&absent);
}

/* The SIMD test the getters choose for a caller without AVX2
 * (bloomkit/detail/view_simd.h) is the widest the library itself runs
 * here: AVX-512 F and DQ for blocked where the library's AVX-512 path runs
 * (AVX2 and AVX-512 F, DQ, BW), AVX2 where only AVX2 does, none on the
 * portable path (BLOOMKIT_PORTABLE=1, other processors); sbbf's AVX2 test
 * where its filter runs its own, never for a concurrent filter. */
static void test_views_choose_the_library_simd_test(void **state)
{
    (void)state;
    const bk_cpu_features *cpu = bk_cpu();
#ifdef BK_TEST_AVX2_VIEWS /* x86-64: the library has its AVX sources */
    const unsigned widest = cpu->avx2 && cpu->avx512dqbw ? BK_VIEW_SIMD_AVX512
                            : cpu->avx2                  ? BK_VIEW_SIMD_AVX2
                                                         : BK_VIEW_SIMD_NONE;
#else
    const unsigned widest = BK_VIEW_SIMD_NONE;
    (void)cpu;
#endif
    bk_params p = { .capacity = 1000, .fpr = 0.01 };
    bk_filter *blocked = create_blocked(&p);
    struct bk_blocked_view blocked_view;
    assert_int_equal(bk_blocked_view(blocked, &blocked_view), BK_OK);
    assert_int_equal(blocked_view.simd_call, widest);
    bk_filter_free(blocked);

    bk_params concurrent = p;
    concurrent.flags = BK_FLAG_CONCURRENT;
    bk_filter *sbbf[2] = { create_sbbf(&p), create_sbbf(&concurrent) };
    for (int f = 0; f < 2; f++) {
        struct bk_sbbf_view sbbf_view;
        assert_int_equal(bk_sbbf_view(sbbf[f], &sbbf_view), BK_OK);
        assert_int_equal(sbbf_view.simd_call, f == 0 && widest != BK_VIEW_SIMD_NONE
                                                  ? BK_VIEW_SIMD_AVX2
                                                  : BK_VIEW_SIMD_NONE);
        bk_filter_free(sbbf[f]);
    }
}

/* A SipHash filter (its hash is a call) and a concurrent filter (atomic
 * loads) are refused, *view untouched; so are NULL arguments and a filter
 * of another kind. */
static void test_blocked_view_errors(void **state)
{
    (void)state;
    const bk_params refused[] = {
        { .capacity = 1000,
          .fpr = 0.01,
          .hash_algorithm = BK_HASH_SIPHASH,
          .secret_key = secret_key },
        { .capacity = 1000, .fpr = 0.01, .flags = BK_FLAG_CONCURRENT },
        { .bits = 512 * 100, .hashes = 9, .capacity = 1000, .flags = BK_FLAG_CONCURRENT },
    };
    struct bk_blocked_view view, untouched;
    memset(&view, 0xa5, sizeof view);
    untouched = view;
    for (size_t f = 0; f < sizeof refused / sizeof refused[0]; f++) {
        bk_filter *filter = create_blocked(&refused[f]);
        assert_int_equal(bk_blocked_view(filter, &view), BK_EUNSUPPORTED);
        bk_filter_free(filter);
    }
    bk_params p = { .capacity = 1000, .fpr = 0.01 };
    bk_filter *blocked = create_blocked(&p);
    assert_int_equal(bk_blocked_view(NULL, &view), BK_EINVAL);
    assert_int_equal(bk_blocked_view(blocked, NULL), BK_EINVAL);
    bk_filter *bloom = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &p, &bloom), BK_OK);
    assert_int_equal(bk_blocked_view(bloom, &view), BK_EKIND);
    assert_memory_equal(&view, &untouched, sizeof view);
    bk_filter_free(bloom);
    bk_filter_free(blocked);
}

#if defined(BK_TEST_AVX2_VIEWS) && defined(BK_TEST_AVX512_VIEWS)
/* The vector forms of XXH3's avalanche, with which the blocked view and
 * the library's SIMD key queries finish h2, give bk_xxh3_avalanche's word
 * in every lane: random words, words with one bit set, and the extremes. */
static void test_vector_avalanche_matches_scalar(void **state)
{
    (void)state;
    uint64_t random = 2024;
    for (int trial = 0; trial < 2000; trial++) {
        uint64_t in[8], out[8];
        for (int j = 0; j < 8; j++)
            in[j] = trial < 8 ? (uint64_t)1 << (8 * trial + j) : next_random(&random);
        if (trial == 8)
            in[0] = 0, in[1] = UINT64_MAX, in[2] = UINT32_MAX,
            in[3] = (uint64_t)UINT32_MAX << 32;
        if (__builtin_cpu_supports("avx2")) {
            avx2_xxh3_avalanche_x4(in, out);
            for (int j = 0; j < 4; j++)
                assert_int_equal(out[j], bk_xxh3_avalanche(in[j]));
        }
        if (cpu_has_avx512dq()) {
            avx512_xxh3_avalanche_x8(in, out);
            for (int j = 0; j < 8; j++)
                assert_int_equal(out[j], bk_xxh3_avalanche(in[j]));
        }
    }
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sbbf_view_matches_library),
        cmocka_unit_test(test_sbbf_view_word_by_word),
        cmocka_unit_test(test_sbbf_block_tests_agree),
        cmocka_unit_test(test_sbbf_view_sees_later_adds_and_loaded_copies),
        cmocka_unit_test(test_view_init_rejects_null),
        cmocka_unit_test(test_view_init_follows_the_hash),
        cmocka_unit_test(test_fuse_view_matches_library),
        cmocka_unit_test(test_fuse_view_both_hash_rules),
        cmocka_unit_test(test_fuse_view_of_loaded_copy),
        cmocka_unit_test(test_fuse_view_init_errors),
        cmocka_unit_test(test_bloom_view_matches_library),
#ifdef BK_TEST_AVX512_VIEWS
        cmocka_unit_test(test_bloom_gather_walk_matches_scalar),
        cmocka_unit_test(test_bloom_gather_reduce_matches_scalar),
#endif
        cmocka_unit_test(test_bloom_view_sees_later_adds_and_loaded_copies),
        cmocka_unit_test(test_bloom_view_init_errors),
        cmocka_unit_test(test_blocked_view_matches_library),
        cmocka_unit_test(test_blocked_view_sees_later_adds_and_loaded_copies),
        cmocka_unit_test(test_blocked_view_errors),
        cmocka_unit_test(test_views_choose_the_library_simd_test),
#if defined(BK_TEST_AVX2_VIEWS) && defined(BK_TEST_AVX512_VIEWS)
        cmocka_unit_test(test_vector_avalanche_matches_scalar),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
