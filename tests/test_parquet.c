/*
 * tests/test_parquet.c -- sbbf filters in Parquet files: the sizing every
 * Parquet reader accepts (BK_FLAG_PARQUET_SIZE), the exports' refusal of a
 * filter some reader refuses, round trips of both forms
 * (bk_sbbf_to_parquet / bk_sbbf_from_parquet), and the BloomFilterHeader
 * reader against hostile bytes: a table of malformed headers with the
 * error each must give, every truncation and every single-byte change of
 * a valid header (run under ASan by `make test PRESET=asan`).  The golden
 * header bytes are in tests/test_sbbf.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"

static bk_filter *make_sbbf(uint64_t capacity, uint64_t bits, unsigned flags)
{
    bk_params p = { .capacity = capacity, .bits = bits, .flags = flags };
    bk_filter *f = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &p, &f), BK_OK);
    return f;
}

static void add_keys(bk_filter *f, uint64_t first, uint64_t count)
{
    for (uint64_t key = first; key < first + count; key++)
        assert_int_equal(bk_filter_add(f, &key, sizeof key, NULL), BK_OK);
}

/* ---- sizing ------------------------------------------------------------- */

static void test_parquet_size_is_a_power_of_two(void **state)
{
    (void)state;
    /* 100,000 keys at 1%: 4,113 blocks by default, 8,192 for Parquet */
    bk_params p = { .capacity = 100000, .fpr = 0.01 };
    bk_stats plain, parquet, made;
    assert_int_equal(bk_kind_design(BK_KIND_SBBF, &p, &plain), BK_OK);
    assert_int_equal(plain.bytes, 4113 * 32);
    p.flags = BK_FLAG_PARQUET_SIZE;
    assert_int_equal(bk_kind_design(BK_KIND_SBBF, &p, &parquet), BK_OK);
    assert_int_equal(parquet.bytes, 8192 * 32);
    assert_true(parquet.target_fpr <= 0.01);
    bk_filter *f = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &p, &f), BK_OK);
    bk_filter_stats(f, &made);
    assert_int_equal(made.bytes, parquet.bytes);
    bk_filter_free(f);

    /* every size from 1 to 2^12 blocks rounds up to the next power of two */
    for (uint64_t blocks = 1; blocks <= 4096; blocks += blocks / 3 + 1) {
        bk_params q = { .capacity = 10, .bits = blocks * 256, .flags = BK_FLAG_PARQUET_SIZE };
        bk_stats s;
        assert_int_equal(bk_kind_design(BK_KIND_SBBF, &q, &s), BK_OK);
        uint64_t got = s.bytes / 32;
        assert_true(got >= blocks && got < 2 * blocks && (got & (got - 1)) == 0);
    }
    /* the largest Parquet bitset, 128 MiB, and no more */
    bk_params biggest = { .capacity = 10,
                          .bits = (uint64_t)128 << 23,
                          .flags = BK_FLAG_PARQUET_SIZE };
    bk_stats s;
    assert_int_equal(bk_kind_design(BK_KIND_SBBF, &biggest, &s), BK_OK);
    assert_int_equal(s.bytes, BK_SBBF_PARQUET_MAX_BYTES);
    biggest.bits += 256;
    assert_int_equal(bk_kind_design(BK_KIND_SBBF, &biggest, &s), BK_ERANGE);
    bk_params many = { .capacity = 200000000, .fpr = 0.01, .flags = BK_FLAG_PARQUET_SIZE };
    assert_int_equal(bk_kind_design(BK_KIND_SBBF, &many, &s), BK_ERANGE);
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &many, &f), BK_ERANGE);
}

/* ---- export refuses what some reader refuses ------------------------------ */

static void test_export_refuses_unreadable_filters(void **state)
{
    (void)state;
    uint8_t buffer[64 * 32 + 32];
    size_t written = 12345;
    bk_filter *odd = make_sbbf(100, 11 * 256, 0); /* 11 blocks: not a power of two */
    assert_int_equal(bk_sbbf_to_parquet(odd, BK_PARQUET_BITSET, buffer, sizeof buffer, &written),
                     BK_EUNSUPPORTED);
    assert_int_equal(bk_sbbf_to_parquet(odd, BK_PARQUET_WITH_HEADER, NULL, 0, &written),
                     BK_EUNSUPPORTED);
    assert_int_equal(written, 12345);
    bk_filter_free(odd);

    bk_params seeded = { .capacity = 100, .bits = 8 * 256, .seed = 1 };
    bk_filter *f = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &seeded, &f), BK_OK);
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_BITSET, buffer, sizeof buffer, &written),
                     BK_EUNSUPPORTED); /* Parquet hashes with seed 0 */
    bk_filter_free(f);

    static const uint8_t secret[16] = { 1, 2, 3 };
    bk_params keyed = {
        .capacity = 100, .bits = 8 * 256, .hash_algorithm = BK_HASH_SIPHASH, .secret_key = secret
    };
    assert_int_equal(bk_filter_create(BK_KIND_SBBF, &keyed, &f), BK_OK);
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_BITSET, buffer, sizeof buffer, &written),
                     BK_EUNSUPPORTED);
    bk_filter_free(f);

    bk_params bloom = { .capacity = 100 };
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &bloom, &f), BK_OK);
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_BITSET, buffer, sizeof buffer, &written),
                     BK_EKIND);
    bk_filter_free(f);

    f = make_sbbf(100, 8 * 256, 0);
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_WITH_HEADER, NULL, 0, &written), BK_OK);
    assert_int_equal(written, 16 + 8 * 32); /* numBytes 256: a 2-byte varint */
    memset(buffer, 0xee, sizeof buffer);
    assert_int_equal(
        bk_sbbf_to_parquet(f, BK_PARQUET_WITH_HEADER, buffer, written - 1, &written), BK_ERANGE);
    assert_int_equal(buffer[0], 0xee); /* nothing written */
    assert_int_equal(
        bk_sbbf_to_parquet(NULL, BK_PARQUET_BITSET, buffer, sizeof buffer, &written), BK_EINVAL);
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_BITSET, buffer, sizeof buffer, NULL),
                     BK_EINVAL);
    assert_int_equal(bk_sbbf_to_parquet(f, (bk_parquet_form)7, buffer, sizeof buffer, &written),
                     BK_EINVAL);
    bk_filter_free(f);
}

/* ---- round trips ---------------------------------------------------------- */

static void round_trip(bk_parquet_form form, uint64_t blocks)
{
    bk_filter *f = make_sbbf(1000, blocks * 256, BK_FLAG_PARQUET_SIZE);
    add_keys(f, 0, 1000);
    size_t size = 0;
    assert_int_equal(bk_sbbf_to_parquet(f, form, NULL, 0, &size), BK_OK);
    size_t trailing = form == BK_PARQUET_WITH_HEADER ? 100 : 0; /* the rest of a file */
    uint8_t *bytes = malloc(size + trailing);
    assert_non_null(bytes);
    memset(bytes + size, 0x5a, trailing);
    size_t written = 0;
    assert_int_equal(bk_sbbf_to_parquet(f, form, bytes, size, &written), BK_OK);
    assert_int_equal(written, size);
    bk_filter *g = NULL;
    size_t consumed = 0;
    assert_int_equal(bk_sbbf_from_parquet(bytes, size + trailing, form, 0, &g, &consumed),
                     BK_OK);
    assert_int_equal(consumed, size);
    for (uint64_t key = 0; key < 1000; key++)
        assert_true(bk_filter_contains(g, &key, sizeof key));
    bk_stats a, b;
    bk_filter_stats(f, &a);
    bk_filter_stats(g, &b);
    assert_int_equal(a.bits, b.bits);
    assert_true(a.fill_ratio == b.fill_ratio);
    assert_int_equal(b.kind, BK_KIND_SBBF);
    assert_int_equal(b.hash_algorithm, BK_HASH_XXH64);
    /* written again, the same bytes */
    uint8_t *again = malloc(size);
    assert_non_null(again);
    assert_int_equal(bk_sbbf_to_parquet(g, form, again, size, &written), BK_OK);
    assert_memory_equal(again, bytes, size);
    free(again);
    free(bytes);
    bk_filter_free(g);
    bk_filter_free(f);
}

static void test_round_trips(void **state)
{
    (void)state;
    for (uint64_t blocks = 1; blocks <= 1u << 14; blocks <<= 3) {
        round_trip(BK_PARQUET_BITSET, blocks);
        round_trip(BK_PARQUET_WITH_HEADER, blocks);
    }
}

static void test_bitset_form_bounds(void **state)
{
    (void)state;
    uint8_t bytes[64] = { 0 };
    bk_filter *untouched = (bk_filter *)0x1;
    assert_int_equal(bk_sbbf_from_parquet(bytes, 0, BK_PARQUET_BITSET, 0, &untouched, NULL),
                     BK_EINVAL);
    assert_int_equal(bk_sbbf_from_parquet(bytes, 33, BK_PARQUET_BITSET, 0, &untouched, NULL),
                     BK_EINVAL);
    assert_int_equal(bk_sbbf_from_parquet(NULL, 32, BK_PARQUET_BITSET, 0, &untouched, NULL),
                     BK_EINVAL);
    assert_int_equal(bk_sbbf_from_parquet(bytes, 32, (bk_parquet_form)2, 0, &untouched, NULL),
                     BK_EINVAL);
    assert_int_equal(bk_sbbf_from_parquet(bytes, BK_SBBF_PARQUET_MAX_BYTES + 32,
                                          BK_PARQUET_BITSET, 0, &untouched, NULL),
                     BK_EINVAL);
    assert_ptr_equal(untouched, (bk_filter *)0x1);
}

/* ---- hostile headers ------------------------------------------------------ */

/* The valid header of a 32-byte bitset, and its parts. */
#define NUM_BYTES_32 0x15, 0x40
#define BLOCK 0x1c, 0x1c, 0x00, 0x00
#define XXHASH 0x1c, 0x1c, 0x00, 0x00
#define UNCOMPRESSED 0x1c, 0x1c, 0x00, 0x00

typedef struct hostile {
    const char *what;
    uint8_t bytes[40];
    size_t length;
    bk_status expected;
} hostile;

#define CASE(what, expected, ...)                                           \
    {                                                                       \
        what, { __VA_ARGS__ }, sizeof((uint8_t[]){ __VA_ARGS__ }), expected \
    }

static const hostile hostile_headers[] = {
    CASE("numBytes 0", BK_ECORRUPT, 0x15, 0x00, BLOCK, XXHASH, UNCOMPRESSED, 0x00),
    CASE("numBytes -1", BK_ECORRUPT, 0x15, 0x01, BLOCK, XXHASH, UNCOMPRESSED, 0x00),
    CASE("numBytes 33", BK_ECORRUPT, 0x15, 0x42, BLOCK, XXHASH, UNCOMPRESSED, 0x00),
    CASE("numBytes 256 MiB", BK_ECORRUPT, 0x15, 0x80, 0x80, 0x80, 0x80, 0x02, BLOCK, XXHASH,
         UNCOMPRESSED, 0x00),
    CASE("numBytes: a varint of six bytes", BK_ECORRUPT, 0x15, 0xc0, 0x80, 0x80, 0x80, 0x80,
         0x00, BLOCK, XXHASH, UNCOMPRESSED, 0x00),
    CASE("numBytes: a varint past 32 bits", BK_ECORRUPT, 0x15, 0xff, 0xff, 0xff, 0xff, 0x1f,
         BLOCK, XXHASH, UNCOMPRESSED, 0x00),
    CASE("numBytes as i64", BK_ECORRUPT, 0x16, 0x40, BLOCK, XXHASH, UNCOMPRESSED, 0x00),
    CASE("numBytes twice", BK_ECORRUPT, NUM_BYTES_32, 0x05, 0x02, 0x40, BLOCK, XXHASH,
         UNCOMPRESSED, 0x00),
    CASE("no numBytes", BK_ECORRUPT, 0x2c, 0x1c, 0x00, 0x00, XXHASH, UNCOMPRESSED, 0x00),
    CASE("no compression", BK_ECORRUPT, NUM_BYTES_32, BLOCK, XXHASH, 0x00),
    CASE("algorithm not a struct", BK_ECORRUPT, NUM_BYTES_32, 0x15, 0x02, XXHASH, UNCOMPRESSED,
         0x00),
    CASE("an empty algorithm union", BK_ECORRUPT, NUM_BYTES_32, 0x1c, 0x00, XXHASH, UNCOMPRESSED,
         0x00),
    CASE("two algorithms", BK_ECORRUPT, NUM_BYTES_32, 0x1c, 0x1c, 0x00, 0x1c, 0x00, 0x00, XXHASH,
         UNCOMPRESSED, 0x00),
    CASE("algorithm BLOCK not a struct", BK_ECORRUPT, NUM_BYTES_32, 0x1c, 0x15, 0x02, 0x00,
         XXHASH, UNCOMPRESSED, 0x00),
    CASE("an unknown algorithm", BK_EUNSUPPORTED, NUM_BYTES_32, 0x1c, 0x2c, 0x00, 0x00, XXHASH,
         UNCOMPRESSED, 0x00),
    CASE("an unknown hash", BK_EUNSUPPORTED, NUM_BYTES_32, BLOCK, 0x1c, 0x2c, 0x00, 0x00,
         UNCOMPRESSED, 0x00),
    CASE("an unknown compression", BK_EUNSUPPORTED, NUM_BYTES_32, BLOCK, XXHASH, 0x1c, 0x2c,
         0x00, 0x00, 0x00),
    CASE("compression by a long field id", BK_EUNSUPPORTED, NUM_BYTES_32, BLOCK, XXHASH, 0x1c,
         0x0c, 0x04, 0x00, 0x00, 0x00),
    CASE("a field of type 13", BK_ECORRUPT, NUM_BYTES_32, 0x1d, BLOCK, XXHASH, UNCOMPRESSED,
         0x00),
    CASE("a stop byte with an id", BK_ECORRUPT, NUM_BYTES_32, BLOCK, XXHASH, UNCOMPRESSED, 0x10),
    CASE("a long field id past 16 bits", BK_ECORRUPT, NUM_BYTES_32, 0x08, 0x80, 0x80, 0x04, 0x00,
         BLOCK, XXHASH, UNCOMPRESSED, 0x00),
    CASE("nesting deeper than 8", BK_ECORRUPT, NUM_BYTES_32, BLOCK, XXHASH, UNCOMPRESSED, 0x1c,
         0x1c, 0x1c, 0x1c, 0x1c, 0x1c, 0x1c, 0x1c, 0x1c, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x00,
         0x00, 0x00, 0x00, 0x00, 0x00, 0x00),
    CASE("a binary longer than the input", BK_ETRUNCATED, NUM_BYTES_32, BLOCK, XXHASH,
         UNCOMPRESSED, 0x18, 0xff, 0xff, 0xff, 0xff, 0x07),
    CASE("a list of 2^31 i32 in a few bytes", BK_ETRUNCATED, NUM_BYTES_32, BLOCK, XXHASH,
         UNCOMPRESSED, 0x19, 0xf5, 0x80, 0x80, 0x80, 0x80, 0x08, 0x02, 0x02),
    CASE("a map of 2^31 booleans in a few bytes", BK_ETRUNCATED, NUM_BYTES_32, BLOCK, XXHASH,
         UNCOMPRESSED, 0x1b, 0x80, 0x80, 0x80, 0x80, 0x08, 0x11, 0x01),
    CASE("a map with a stop type", BK_ECORRUPT, NUM_BYTES_32, BLOCK, XXHASH, UNCOMPRESSED, 0x1b,
         0x01, 0x50, 0x02, 0x00),
    CASE("nothing after numBytes", BK_ETRUNCATED, NUM_BYTES_32),
    CASE("no stop byte", BK_ETRUNCATED, NUM_BYTES_32, BLOCK, XXHASH, UNCOMPRESSED),
    CASE("a header and no bitset", BK_ETRUNCATED, NUM_BYTES_32, BLOCK, XXHASH, UNCOMPRESSED,
         0x00),
    CASE("128 MiB declared, none there", BK_ETRUNCATED, 0x15, 0x80, 0x80, 0x80, 0x80, 0x01,
         BLOCK, XXHASH, UNCOMPRESSED, 0x00),
};

static void test_hostile_headers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof hostile_headers / sizeof hostile_headers[0]; i++) {
        const hostile *h = &hostile_headers[i];
        bk_filter *untouched = (bk_filter *)0x1;
        size_t consumed = 777;
        bk_status status = bk_sbbf_from_parquet(h->bytes, h->length, BK_PARQUET_WITH_HEADER, 0,
                                                &untouched, &consumed);
        if (status != h->expected)
            fail_msg("%s: %s, expected %s", h->what, bk_strerror(status),
                     bk_strerror(h->expected));
        assert_ptr_equal(untouched, (bk_filter *)0x1);
        assert_int_equal(consumed, 777);
    }
    bk_filter *untouched = (bk_filter *)0x1;
    assert_int_equal(bk_sbbf_from_parquet("", 0, BK_PARQUET_WITH_HEADER, 0, &untouched, NULL),
                     BK_ETRUNCATED);
    assert_ptr_equal(untouched, (bk_filter *)0x1);
}

/* Fields a later format may add are skipped, wherever they are. */
static void test_unknown_fields_skipped(void **state)
{
    (void)state;
    uint8_t bytes[64 + 32];
    size_t length = 0;
    const uint8_t prefix[] = {
        0x08,  0x00,   0x02,
        'h',   'i',  /* field 0 (long form), binary "hi" */
        0x15,  0x40, /* numBytes 32 */
        BLOCK, XXHASH, UNCOMPRESSED,
        0x11, /* field 5: true */
        0x19,  0x35,   0x02,
        0x04,  0x06, /* field 6: list of 3 i32 */
        0x1b,  0x01,   0x58,
        0x02,  0x02,   'k',
        'v', /* field 7: map {1: "kv"} */
        0x17,  1,      2,
        3,     4,      5,
        6,     7,      8, /* field 8: double */
        0x1c,  0x13,   0x07,
        0x00, /* field 9: struct { 1: byte 7 } */
        0x00,
    };
    memcpy(bytes, prefix, sizeof prefix);
    length = sizeof prefix;
    memset(bytes + length, 0xff, 32);
    length += 32;
    bk_filter *f = NULL;
    size_t consumed = 0;
    assert_int_equal(
        bk_sbbf_from_parquet(bytes, length, BK_PARQUET_WITH_HEADER, 5, &f, &consumed), BK_OK);
    assert_int_equal(consumed, length);
    assert_true(bk_filter_contains(f, "any key", 7)); /* every bit set */
    bk_filter_free(f);
}

/* Every prefix of a valid stored filter is refused; every change of one
 * header byte gives a filter or an error, never a read out of bounds. */
static void test_truncations_and_byte_changes(void **state)
{
    (void)state;
    bk_filter *f = make_sbbf(100, 4 * 256, 0);
    add_keys(f, 0, 100);
    uint8_t bytes[16 + 128];
    size_t size = 0;
    assert_int_equal(bk_sbbf_to_parquet(f, BK_PARQUET_WITH_HEADER, bytes, sizeof bytes, &size),
                     BK_OK);
    assert_int_equal(size, sizeof bytes);
    bk_filter_free(f);
    for (size_t length = 0; length < size; length++) {
        uint8_t *copy = malloc(length ? length : 1); /* exactly `length`: ASan sees overreads */
        assert_non_null(copy);
        memcpy(copy, bytes, length);
        bk_filter *g = (bk_filter *)0x1;
        assert_int_equal(bk_sbbf_from_parquet(copy, length, BK_PARQUET_WITH_HEADER, 0, &g, NULL),
                         BK_ETRUNCATED);
        free(copy);
    }
    for (size_t position = 0; position < 16; position++) {
        for (unsigned value = 0; value < 256; value++) {
            uint8_t *copy = malloc(size);
            assert_non_null(copy);
            memcpy(copy, bytes, size);
            copy[position] = (uint8_t)value;
            bk_filter *g = NULL;
            size_t consumed = 0;
            bk_status status = bk_sbbf_from_parquet(copy, size, BK_PARQUET_WITH_HEADER, 0, &g,
                                                    &consumed);
            if (status == BK_OK) {
                assert_true(consumed <= size);
                bk_filter_free(g);
            } else {
                assert_true(status == BK_ECORRUPT || status == BK_ETRUNCATED ||
                            status == BK_EUNSUPPORTED);
            }
            free(copy);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_size_is_a_power_of_two),
        cmocka_unit_test(test_export_refuses_unreadable_filters),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_bitset_form_bounds),
        cmocka_unit_test(test_hostile_headers),
        cmocka_unit_test(test_unknown_fields_skipped),
        cmocka_unit_test(test_truncations_and_byte_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
