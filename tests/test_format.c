/*
 * tests/test_format.c -- the file format (docs/FORMAT.md): round trips
 * through buffer, file and mapping; the byte layout; one damaged input per
 * error; big-endian misreads; atomic saves; the golden files.
 *
 * `test_format --write-golden DIR` rewrites the golden files (only when the
 * format version changes on purpose: see tests/data/README.md).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "endian.h"
#include "filter.h"
#include "format.h"
#include "bloom.h" /* bk_bloom_* of the typed save/load and the layout checks */
#include "hash.h"
#include "roundtrip.h"

#ifndef BK_TEST_DATA_DIR
#define BK_TEST_DATA_DIR "tests/data"
#endif

#include "golden.h"

static const uint8_t test_key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static void add_keys(bk_filter *filter, const char *format, size_t count)
{
    char key[64];
    for (size_t i = 0; i < count; i++) {
        int len = snprintf(key, sizeof key, format, i);
        assert_int_equal(bk_filter_add(filter, key, (size_t)len, NULL), BK_OK);
    }
}

static bk_filter *make_bloom(const bk_params *params, size_t keys)
{
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, params, &filter), BK_OK);
    add_keys(filter, "key:%zu", keys);
    return filter;
}

/* A small bloom filter's serialised bytes: m = 1000, k = 7, n = 100, 60 keys. */
static uint8_t *small_bloom_bytes(size_t *size)
{
    bk_params p = { .capacity = 100, .bits = 1000, .hashes = 7 };
    bk_filter *filter = make_bloom(&p, 60);
    uint8_t *bytes = bk_rt_serialize(filter, size);
    bk_filter_free(filter);
    return bytes;
}

/* Recomputes the checksum after a deliberate edit, so that only the check
 * under test can fail. */
static void reseal(uint8_t *bytes, size_t size)
{
    bk_store_le64(bytes + BK_FORMAT_OFFSET_CHECKSUM, bk_format_checksum(bytes, size));
}

static bk_filter *const untouched = (bk_filter *)(uintptr_t)0x1234;

/* The input is rejected with `expected` and *out is left alone. */
static void expect_rejected(const uint8_t *bytes, size_t size, const bk_load_options *options,
                            bk_status expected)
{
    bk_filter *out = untouched;
    bk_status status = bk_filter_deserialize(bytes, size, options, &out);
    if (status != expected)
        fail_msg("expected %s, got %s", bk_strerror(expected), bk_strerror(status));
    assert_ptr_equal(out, untouched);
}

/* Copies `bytes`, applies an edit at `offset`, reseals, checks the error. */
static void expect_edit_rejected(const uint8_t *bytes, size_t size, size_t offset,
                                 const void *value, size_t value_size, bk_status expected)
{
    uint8_t *copy = malloc(size);
    assert_non_null(copy);
    memcpy(copy, bytes, size);
    memcpy(copy + offset, value, value_size);
    reseal(copy, size);
    expect_rejected(copy, size, NULL, expected);
    free(copy);
}

static void expect_u16_rejected(const uint8_t *bytes, size_t size, size_t offset, uint16_t v,
                                bk_status expected)
{
    uint8_t le[2];
    bk_store_le16(le, v);
    expect_edit_rejected(bytes, size, offset, le, sizeof le, expected);
}

static void expect_u32_rejected(const uint8_t *bytes, size_t size, size_t offset, uint32_t v,
                                bk_status expected)
{
    uint8_t le[4];
    bk_store_le32(le, v);
    expect_edit_rejected(bytes, size, offset, le, sizeof le, expected);
}

static void expect_u64_rejected(const uint8_t *bytes, size_t size, size_t offset, uint64_t v,
                                bk_status expected)
{
    uint8_t le[8];
    bk_store_le64(le, v);
    expect_edit_rejected(bytes, size, offset, le, sizeof le, expected);
}

static void write_bytes(const char *path, const void *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

static size_t count_directory_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL)
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
            count++;
    closedir(d);
    return count;
}

/* ------------------------------------------------------------------------ */
/* Round trips                                                              */
/* ------------------------------------------------------------------------ */

static void test_roundtrip_bloom(void **state)
{
    (void)state;
    bk_params p = { .capacity = 5000, .fpr = 0.01 };
    bk_filter *filter = make_bloom(&p, 5000);
    bk_roundtrip_check(filter, NULL, 10000);
    bk_filter_free(filter);
}

static void test_roundtrip_bloom_variants(void **state)
{
    (void)state;
    /* Empty; m not a multiple of 64; a seed; XXH64; one bit. */
    bk_params empty = { .capacity = 100, .fpr = 0.01 };
    bk_params odd = {
        .capacity = 300, .bits = 4099, .hashes = 3, .seed = 0xfeedfacecafebeefULL
    };
    bk_params xxh64 = {
        .capacity = 300, .fpr = 0.001, .hash_algorithm = BK_HASH_XXH64, .seed = 7
    };
    bk_params one_bit = { .capacity = 1, .bits = 1, .hashes = 1 };
    const struct {
        const bk_params *params;
        size_t keys;
    } cases[] = {
        { &empty, 0 },
        { &odd, 300 },
        { &xxh64, 300 },
        { &one_bit, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bk_filter *filter = make_bloom(cases[i].params, cases[i].keys);
        bk_roundtrip_check(filter, NULL, 1000);
        bk_filter_free(filter);
    }
}

static void test_roundtrip_bloom_siphash(void **state)
{
    (void)state;
    bk_params p = {
        .capacity = 2000, .fpr = 0.01, .hash_algorithm = BK_HASH_SIPHASH, .secret_key = test_key
    };
    bk_filter *filter = make_bloom(&p, 2000);
    bk_roundtrip_check(filter, test_key, 4000);
    bk_filter_free(filter);
}

/* Designs at the edges of the parameters, for every dynamic kind: capacity
 * from 1 to 2^64 - 1 on explicit sizes from 1 bit, FPRs from 0.999 to
 * 1e-300, bits per key from 0.01 to 1000.  Each is either refused with a
 * parameter error or created with a design FPR in [0, 1], and then its file
 * loads and answers as it does.  This caught two bugs: a saturated block
 * model summed to 1 + 1e-11 and the loader refused the filter's own file
 * (found first by fuzz_operations), and at 2^64 keys per block the model's
 * sum never ended. */
static void check_extreme_design(bk_kind kind, const bk_params *params)
{
    bk_filter *filter = NULL;
    bk_status status = bk_filter_create(kind, params, &filter);
    if (status != BK_OK) {
        assert_true(status == BK_EINVAL || status == BK_ERANGE);
        assert_null(filter);
        return;
    }
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    assert_true(stats.target_fpr >= 0 && stats.target_fpr <= 1);
    char key[32];
    for (int i = 0; i < 50; i++) {
        int len = snprintf(key, sizeof key, "key:%d", i);
        status = bk_filter_add(filter, key, (size_t)len, NULL);
        assert_true(status == BK_OK || status == BK_EFULL);
    }
    bk_roundtrip_check(filter, NULL, 100);
    bk_filter_free(filter);
}

static void test_roundtrip_extreme_designs(void **state)
{
    (void)state;
    bk_kind kinds[64]; /* the dynamic kinds of the registry */
    size_t kind_count = bk_kind_list(kinds, sizeof kinds / sizeof kinds[0]);
    assert_true(kind_count <= sizeof kinds / sizeof kinds[0]);
    const uint64_t capacities[] = { 1, 7, 1285, 1000000000, UINT64_MAX };
    const uint64_t bits[] = { 1, 64, 257, 512, 4096 };
    const unsigned hashes[] = { 1, 8, 33 };
    const double fprs[] = { 0.999, 0.5, 1e-12, 1e-300 };
    const double bits_per_key[] = { 0.01, 1, 64, 1000 };
    for (size_t a = 0; a < kind_count; a++) {
        if (bk_kind_is_static(kinds[a]))
            continue;
        for (size_t c = 0; c < sizeof capacities / sizeof capacities[0]; c++) {
            bk_params p = { .capacity = capacities[c], .window_keys = 1000 };
            for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++)
                for (size_t h = 0; h < sizeof hashes / sizeof hashes[0]; h++) {
                    p.bits = bits[b];
                    p.hashes = hashes[h];
                    check_extreme_design(kinds[a], &p);
                }
            p.bits = 0;
            p.hashes = 0;
            for (size_t f = 0; f < sizeof fprs / sizeof fprs[0] && capacities[c] <= 1285; f++) {
                p.fpr = fprs[f];
                check_extreme_design(kinds[a], &p);
            }
            p.fpr = 0;
            for (size_t b = 0; b < sizeof bits_per_key / sizeof bits_per_key[0]; b++) {
                if ((double)capacities[c] * bits_per_key[b] > 1e7)
                    continue; /* keeps the test's memory small */
                p.bits_per_key = bits_per_key[b];
                check_extreme_design(kinds[a], &p);
            }
        }
    }
}

/* The bytes of docs/FORMAT.md's example, field by field. */
static void test_layout_matches_spec(void **state)
{
    (void)state;
    size_t size;
    uint8_t *b = small_bloom_bytes(&size);
    static const uint8_t magic[8] = { 0x89, 0x42, 0x4B, 0x46, 0x0D, 0x0A, 0x1A, 0x0A };
    assert_int_equal(size, 256);
    assert_memory_equal(b, magic, 8);
    assert_int_equal(bk_load_le16(b + 8), 1);              /* version */
    assert_int_equal(bk_load_le16(b + 10), BK_KIND_BLOOM); /* kind */
    assert_int_equal(bk_load_le32(b + 12), 128);           /* header_size */
    assert_int_equal(bk_load_le64(b + 16), 128);           /* payload_size */
    assert_int_equal(b[24], BK_HASH_XXH3);
    assert_int_equal(b[25] | b[26] | b[27], 0);
    assert_int_equal(bk_load_le32(b + 28), 32); /* params_size */
    assert_int_equal(bk_load_le64(b + 32), 0);  /* seed */
    assert_int_equal(bk_load_le64(b + 40), 60); /* keys_added */
    assert_int_equal(bk_load_le64(b + 48), 0);
    /* checksum: XXH3-64 of the file with the field zeroed */
    uint8_t copy[256];
    memcpy(copy, b, size);
    memset(copy + 56, 0, 8);
    assert_int_equal(bk_load_le64(b + 56), XXH3_64bits(copy, size));
    /* bloom parameters */
    assert_int_equal(bk_load_le64(b + 64), 1000);
    assert_int_equal(bk_load_le32(b + 72), 7);
    assert_int_equal(bk_load_le32(b + 76), 0);
    assert_int_equal(bk_load_le64(b + 80), 100);
    double fpr = bk_load_le_double(b + 88);
    assert_true(fpr > 0.001 && fpr < 0.1);
    for (size_t i = 96; i < 128; i++)
        assert_int_equal(b[i], 0);
    /* payload: bit i of the filter is bit i%64 of little-endian word i/64 */
    bk_filter *filter;
    assert_int_equal(bk_filter_deserialize(b, size, NULL, &filter), BK_OK);
    /* a layout check: the object's words (internal) against the payload */
    const bk_bloom *bloom = bk_filter_object_of(filter, BK_KIND_BLOOM);
    const uint64_t *words = bk_bloom_words(bloom);
    for (size_t w = 0; w < 16; w++)
        assert_int_equal(bk_load_le64(b + 128 + 8 * w), words[w]);
    assert_int_equal(bk_load_le64(b + 128 + 8 * 15) >> (1000 - 960), 0); /* bits >= m zero */
    bk_filter_free(filter);
    free(b);
}

/* ------------------------------------------------------------------------ */
/* Big-endian misreads                                                      */
/* ------------------------------------------------------------------------ */

static uint64_t swap64(uint64_t v) { return __builtin_bswap64(v); }

static void test_byte_swapped_rejected(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);

    /* Each 64-bit word of the header swapped: what a loader reading native
     * words on the other byte order would see. */
    uint8_t *swapped = malloc(size);
    assert_non_null(swapped);
    memcpy(swapped, bytes, size);
    for (size_t i = 0; i < BK_FORMAT_HEADER_SIZE; i += 8)
        bk_store_le64(swapped + i, swap64(bk_load_le64(swapped + i)));
    expect_rejected(swapped, size, NULL, BK_EMAGIC);

    /* Every word of the whole file swapped. */
    for (size_t i = BK_FORMAT_HEADER_SIZE; i + 8 <= size; i += 8)
        bk_store_le64(swapped + i, swap64(bk_load_le64(swapped + i)));
    expect_rejected(swapped, size, NULL, BK_EMAGIC);

    /* A writer that kept the magic but stored its fields big-endian. */
    memcpy(swapped, bytes, size);
    uint16_t version = bk_load_le16(bytes + 8);
    swapped[8] = (uint8_t)(version >> 8);
    swapped[9] = (uint8_t)version;
    reseal(swapped, size);
    expect_rejected(swapped, size, NULL, BK_EVERSION);
    free(swapped);
    free(bytes);
}

/* ------------------------------------------------------------------------ */
/* One test per corruption class                                            */
/* ------------------------------------------------------------------------ */

static void test_truncated(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    expect_rejected(NULL, 0, NULL, BK_ETRUNCATED);
    for (size_t prefix = 0; prefix < size; prefix++) {
        uint8_t *copy = malloc(prefix + 1); /* exact size, so ASan sees any overread */
        assert_non_null(copy);
        memcpy(copy, bytes, prefix);
        expect_rejected(copy, prefix, NULL, BK_ETRUNCATED);
        free(copy);
    }
    free(bytes);
}

static void test_oversize(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    uint8_t *longer = calloc(1, size + 64);
    assert_non_null(longer);
    memcpy(longer, bytes, size);
    expect_rejected(longer, size + 1, NULL, BK_EOVERSIZE);
    expect_rejected(longer, size + 64, NULL, BK_EOVERSIZE);
    free(longer);
    free(bytes);
}

static void test_bad_magic(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    for (size_t i = 0; i < 8; i++) {
        uint8_t flipped = bytes[i] ^ 0x20;
        expect_edit_rejected(bytes, size, i, &flipped, 1, BK_EMAGIC);
    }
    /* Text-mode damage: LF -> CRLF, CRLF -> LF, high bit stripped. */
    uint8_t *mangled = malloc(size + 1);
    assert_non_null(mangled);
    memcpy(mangled, bytes, 7);
    mangled[7] = '\r';
    memcpy(mangled + 8, bytes + 7, size - 7);
    expect_rejected(mangled, size + 1, NULL, BK_EMAGIC);
    memcpy(mangled, bytes, 4);
    memcpy(mangled + 4, bytes + 5, size - 5);
    expect_rejected(mangled, size - 1, NULL, BK_EMAGIC);
    memcpy(mangled, bytes, size);
    mangled[0] &= 0x7f;
    expect_rejected(mangled, size, NULL, BK_EMAGIC);
    free(mangled);
    /* Short non-filters. */
    expect_rejected((const uint8_t *)"hello", 5, NULL, BK_EMAGIC);
    expect_rejected((const uint8_t *)"\x89"
                                     "BKX",
                    4, NULL, BK_EMAGIC);
    free(bytes);
}

static void test_bad_version(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    expect_u16_rejected(bytes, size, BK_FORMAT_OFFSET_VERSION, 0, BK_EVERSION);
    expect_u16_rejected(bytes, size, BK_FORMAT_OFFSET_VERSION, 2, BK_EVERSION);
    expect_u16_rejected(bytes, size, BK_FORMAT_OFFSET_VERSION, 0xffff, BK_EVERSION);
    free(bytes);
}

static void test_bad_kind(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    expect_u16_rejected(bytes, size, BK_FORMAT_OFFSET_KIND, BK_KIND_NONE, BK_EKIND);
    expect_u16_rejected(bytes, size, BK_FORMAT_OFFSET_KIND, 99, BK_EKIND);
    expect_u16_rejected(bytes, size, BK_FORMAT_OFFSET_KIND, 0xffff, BK_EKIND);
    /* Kind values this build does not implement. */
    for (unsigned kind = BK_KIND_BLOCKED; kind < 256; kind++)
        if (!bk_kind_available((bk_kind)kind))
            expect_u16_rejected(bytes, size, BK_FORMAT_OFFSET_KIND, (uint16_t)kind, BK_EKIND);
    /* A good file of another kind than asked for. */
    bk_load_options want_cuckoo = { .expected_kind = BK_KIND_CUCKOO };
    expect_rejected(bytes, size, &want_cuckoo, BK_EKIND);
    bk_load_options want_bloom = { .expected_kind = BK_KIND_BLOOM };
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_deserialize(bytes, size, &want_bloom, &filter), BK_OK);
    bk_filter_free(filter);
    free(bytes);
}

static void test_reserved_and_algorithm(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    uint8_t one = 1;
    for (size_t i = 0; i < 3; i++)
        expect_edit_rejected(bytes, size, BK_FORMAT_OFFSET_RESERVED_A + i, &one, 1, BK_ECORRUPT);
    for (size_t i = 0; i < 8; i++)
        expect_edit_rejected(bytes, size, BK_FORMAT_OFFSET_RESERVED_B + i, &one, 1, BK_ECORRUPT);
    uint8_t algorithms[] = { 4, 0x80, 0xff }; /* 0 to 3 are the four algorithms */
    for (size_t i = 0; i < sizeof algorithms; i++)
        expect_edit_rejected(bytes, size, BK_FORMAT_OFFSET_HASH_ALGORITHM, &algorithms[i], 1,
                             BK_ECORRUPT);
    /* Padding between the parameter block and the payload. */
    expect_edit_rejected(bytes, size, 64 + 32, &one, 1, BK_ECORRUPT);
    expect_edit_rejected(bytes, size, 127, &one, 1, BK_ECORRUPT);
    free(bytes);
}

static void test_inconsistent_sizes(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    const size_t hs = BK_FORMAT_OFFSET_HEADER_SIZE, ps = BK_FORMAT_OFFSET_PARAMS_SIZE;
    const size_t pl = BK_FORMAT_OFFSET_PAYLOAD_SIZE;
    /* header_size not a multiple of 64, too small, or not matching params_size */
    expect_u32_rejected(bytes, size, hs, 0, BK_ECORRUPT);
    expect_u32_rejected(bytes, size, hs, 63, BK_ECORRUPT);
    expect_u32_rejected(bytes, size, hs, 129, BK_ECORRUPT);
    expect_u32_rejected(bytes, size, hs, 64, BK_ECORRUPT);
    expect_u32_rejected(bytes, size, hs, 192, BK_ECORRUPT);
    expect_u32_rejected(bytes, size, ps, 0, BK_ECORRUPT);
    expect_u32_rejected(bytes, size, ps, 65, BK_ECORRUPT);
    expect_u32_rejected(bytes, size, ps, 0xffffffffu, BK_ECORRUPT);
    /* params_size that still rounds to 128 but disagrees with the kind */
    expect_u32_rejected(bytes, size, ps, 31, BK_ECORRUPT);
    expect_u32_rejected(bytes, size, ps, 64, BK_ECORRUPT);
    /* beyond the format's limits */
    expect_u32_rejected(bytes, size, hs, (uint32_t)BK_FORMAT_MAX_HEADER_SIZE + 64, BK_ERANGE);
    expect_u32_rejected(bytes, size, hs, 0xffffffc0u, BK_ERANGE);
    /* payload_size: overflowing the sum, or promising far more than present
     * (and nothing is allocated for it: ASan would abort on a huge malloc) */
    expect_u64_rejected(bytes, size, pl, UINT64_MAX, BK_ERANGE);
    expect_u64_rejected(bytes, size, pl, UINT64_MAX - 127, BK_ERANGE);
    expect_u64_rejected(bytes, size, pl, (uint64_t)1 << 40, BK_ETRUNCATED);
    expect_u64_rejected(bytes, size, pl, 129, BK_ETRUNCATED);
    /* a shorter payload_size leaves bytes over */
    expect_u64_rejected(bytes, size, pl, 120, BK_EOVERSIZE);
    free(bytes);
}

/* A payload that is consistent with the header but not with the kind:
 * only the kind can tell (step 16). */
static void test_kind_parameters(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    const size_t params = BK_FORMAT_PARAMS_OFFSET;
    expect_u64_rejected(bytes, size, params + 0, 0, BK_ECORRUPT);    /* m = 0 */
    expect_u64_rejected(bytes, size, params + 0, 2000, BK_ECORRUPT); /* m vs payload */
    expect_u64_rejected(bytes, size, params + 0, 960, BK_ECORRUPT);  /* 15 words */
    expect_u64_rejected(bytes, size, params + 0, (uint64_t)1 << 57, BK_ERANGE);
    expect_u32_rejected(bytes, size, params + 8, 0, BK_ECORRUPT);  /* k = 0 */
    expect_u32_rejected(bytes, size, params + 8, 256, BK_ERANGE);  /* k > 255 */
    expect_u32_rejected(bytes, size, params + 12, 1, BK_ECORRUPT); /* reserved */
    expect_u64_rejected(bytes, size, params + 16, 0, BK_ECORRUPT); /* n = 0 */
    uint8_t le[8];
    bk_store_le_double(le, NAN);
    expect_edit_rejected(bytes, size, params + 24, le, 8, BK_ECORRUPT);
    bk_store_le_double(le, 1.5);
    expect_edit_rejected(bytes, size, params + 24, le, 8, BK_ECORRUPT);
    bk_store_le_double(le, -0.25);
    expect_edit_rejected(bytes, size, params + 24, le, 8, BK_ECORRUPT);
    /* a bit set beyond m = 1000 in the last word */
    uint8_t last = bytes[size - 1] | 0x80;
    expect_edit_rejected(bytes, size, size - 1, &last, 1, BK_ECORRUPT);
    free(bytes);
}

/* bloomkit 0.1 before the clamp in sizing.c wrote saturated blocked and
 * sbbf designs with a target FPR up to 1 + 1.2e-11: such files load, keep
 * their bytes, and keep their keys; further above 1 is corrupt. */
static void test_legacy_saturated_fpr(void **state)
{
    (void)state;
    const bk_kind kinds[] = { BK_KIND_BLOCKED, BK_KIND_SBBF };
    for (size_t i = 0; i < 2; i++) {
        bk_params p = { .capacity = 1285, .bits = 256, .hashes = 8 };
        bk_filter *filter = NULL;
        assert_int_equal(bk_filter_create(kinds[i], &p, &filter), BK_OK);
        assert_int_equal(bk_filter_add(filter, "kept", 4, NULL), BK_OK);
        size_t size;
        uint8_t *bytes = bk_rt_serialize(filter, &size);
        bk_filter_free(filter);
        const size_t fpr_offset = BK_FORMAT_PARAMS_OFFSET + 24;
        bk_store_le_double(bytes + fpr_offset, 1 + 1.2e-11);
        reseal(bytes, size);
        bk_filter *legacy = NULL;
        assert_int_equal(bk_filter_deserialize(bytes, size, NULL, &legacy), BK_OK);
        assert_true(bk_filter_contains(legacy, "kept", 4));
        bk_rt_assert_serializes_to(legacy, bytes, size);
        bk_filter_free(legacy);
        uint8_t le[8];
        bk_store_le_double(le, 1 + 1e-8);
        expect_edit_rejected(bytes, size, fpr_offset, le, 8, BK_ECORRUPT);
        free(bytes);
    }
}

static void test_checksum(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    uint8_t *copy = malloc(size);
    assert_non_null(copy);
    /* Any single-bit flip in the fields no structural check covers --
     * kind, seed, keys added, checksum, parameters, payload -- is caught by
     * the checksum alone.  (Padding flips are caught earlier: ECORRUPT.) */
    const struct {
        size_t start, end;
    } regions[] = {
        { 10, 12 }, { 32, 48 }, { 56, 64 }, { 64, 96 }, { 128, 256 },
    };
    for (size_t r = 0; r < sizeof regions / sizeof regions[0]; r++) {
        for (size_t i = regions[r].start; i < regions[r].end; i++) {
            for (int bit = 0; bit < 8; bit++) {
                memcpy(copy, bytes, size);
                copy[i] ^= (uint8_t)(1u << bit);
                expect_rejected(copy, size, NULL, BK_ECHECKSUM);
            }
        }
    }
    free(copy);
    free(bytes);
}

static void test_secret_key(void **state)
{
    (void)state;
    bk_params p = {
        .capacity = 100, .fpr = 0.01, .hash_algorithm = BK_HASH_SIPHASH, .secret_key = test_key
    };
    bk_filter *filter = make_bloom(&p, 100);
    size_t size;
    uint8_t *bytes = bk_rt_serialize(filter, &size);
    /* The key itself is nowhere in the file. */
    assert_null(memmem(bytes, size, test_key, sizeof test_key));
    assert_int_equal(bk_load_le64(bytes + BK_FORMAT_OFFSET_SEED), bk_secret_key_id(test_key));

    expect_rejected(bytes, size, NULL, BK_EKEY);
    bk_load_options no_key = { .secret_key = NULL };
    expect_rejected(bytes, size, &no_key, BK_EKEY);
    uint8_t wrong[16];
    memcpy(wrong, test_key, 16);
    wrong[15] ^= 1;
    bk_load_options wrong_key = { .secret_key = wrong };
    expect_rejected(bytes, size, &wrong_key, BK_EKEY);

    bk_load_options right_key = { .secret_key = test_key };
    bk_filter *loaded = NULL;
    assert_int_equal(bk_filter_deserialize(bytes, size, &right_key, &loaded), BK_OK);
    assert_true(bk_filter_contains(loaded, "key:7", 5));
    bk_filter_free(loaded);
    free(bytes);
    bk_filter_free(filter);

    /* A key offered for an unkeyed filter is ignored. */
    size_t plain_size;
    uint8_t *plain = small_bloom_bytes(&plain_size);
    assert_int_equal(bk_filter_deserialize(plain, plain_size, &right_key, &loaded), BK_OK);
    bk_filter_free(loaded);
    free(plain);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_deserialize(bytes, size, NULL, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_deserialize(NULL, 10, NULL, &filter), BK_EINVAL);
    assert_int_equal(bk_filter_deserialize(bytes, size, NULL, &filter), BK_OK);

    /* A buffer one byte short: BK_ERANGE and not a byte written. */
    uint8_t *target = malloc(size);
    assert_non_null(target);
    memset(target, 0xa5, size);
    size_t written = 12345;
    assert_int_equal(bk_filter_serialize(filter, target, size - 1, &written), BK_ERANGE);
    assert_int_equal(written, 12345);
    for (size_t i = 0; i < size; i++)
        assert_int_equal(target[i], 0xa5);
    assert_int_equal(bk_filter_serialize(filter, target, size, NULL), BK_OK);
    assert_memory_equal(target, bytes, size);
    assert_int_equal(bk_filter_serialize(NULL, target, size, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_serialize(filter, NULL, size, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_serialized_size(filter, NULL), BK_EINVAL);

    assert_int_equal(bk_filter_save(NULL, "x"), BK_EINVAL);
    assert_int_equal(bk_filter_save(filter, NULL), BK_EINVAL);
    assert_int_equal(bk_filter_save(filter, ""), BK_EINVAL);
    assert_int_equal(bk_filter_load(NULL, NULL, &filter), BK_EINVAL);
    assert_int_equal(bk_filter_map(NULL, NULL, &filter), BK_EINVAL);
    assert_int_equal(bk_file_verify(NULL), BK_EINVAL);
    free(target);
    bk_filter_free(filter);
    free(bytes);
}

/* ------------------------------------------------------------------------ */
/* Files                                                                    */
/* ------------------------------------------------------------------------ */

/* Every loader of files gives the buffer loader's answer. */
static void expect_file_rejected(const char *path, bk_status expected)
{
    bk_filter *out = untouched;
    assert_int_equal(bk_filter_load(path, NULL, &out), expected);
    assert_ptr_equal(out, untouched);
    assert_int_equal(bk_filter_map(path, NULL, &out), expected);
    assert_ptr_equal(out, untouched);
    if (expected != BK_ECORRUPT && expected != BK_EKIND && expected != BK_EKEY)
        assert_int_equal(bk_file_verify(path), expected);
}

static void test_file_errors(void **state)
{
    (void)state;
    char *dir = bk_rt_make_temp_dir();
    char *path = bk_rt_join(dir, "f.bkf");
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);

    bk_filter *out = untouched;
    errno = 0;
    assert_int_equal(bk_filter_load(path, NULL, &out), BK_EIO);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(bk_filter_map(path, NULL, &out), BK_EIO);
    assert_int_equal(bk_file_verify(path), BK_EIO);
    assert_ptr_equal(out, untouched);

    write_bytes(path, bytes, 0);
    expect_file_rejected(path, BK_ETRUNCATED);
    write_bytes(path, "just some text\n", 15);
    expect_file_rejected(path, BK_EMAGIC);
    write_bytes(path, bytes, 100);
    expect_file_rejected(path, BK_ETRUNCATED);
    write_bytes(path, bytes, size - 1);
    expect_file_rejected(path, BK_ETRUNCATED);

    uint8_t *longer = calloc(1, size + 1);
    assert_non_null(longer);
    memcpy(longer, bytes, size);
    write_bytes(path, longer, size + 1);
    expect_file_rejected(path, BK_EOVERSIZE);
    free(longer);

    /* A header promising a terabyte: refused from the file's size, nothing
     * allocated for it. */
    uint8_t huge[256];
    memcpy(huge, bytes, size);
    bk_store_le64(huge + BK_FORMAT_OFFSET_PAYLOAD_SIZE, (uint64_t)1 << 40);
    write_bytes(path, huge, size);
    expect_file_rejected(path, BK_ETRUNCATED);

    /* Damaged payload: load and verify see it; map does not read it all. */
    memcpy(huge, bytes, size);
    huge[200] ^= 0x10;
    write_bytes(path, huge, size);
    assert_int_equal(bk_filter_load(path, NULL, &out), BK_ECHECKSUM);
    assert_int_equal(bk_file_verify(path), BK_ECHECKSUM);
    assert_int_equal(bk_filter_map(path, NULL, &out), BK_OK);
    bk_filter_free(out);

    /* Wrong kind asked for. */
    write_bytes(path, bytes, size);
    bk_load_options want_counting = { .expected_kind = BK_KIND_COUNTING };
    out = untouched;
    assert_int_equal(bk_filter_load(path, &want_counting, &out), BK_EKIND);
    assert_int_equal(bk_filter_map(path, &want_counting, &out), BK_EKIND);
    assert_ptr_equal(out, untouched);

    /* A directory is not a filter (and not a regular file to map). */
    assert_int_equal(bk_filter_load(dir, NULL, &out), BK_EIO);
    assert_int_equal(bk_filter_map(dir, NULL, &out), BK_EUNSUPPORTED);

    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    free(bytes);
    free(path);
    free(dir);
}

/* Loading from a pipe: the buffer grows only as bytes arrive. */
static void test_load_from_pipe(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    char path[64];

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_true(write(fds[1], bytes, size) == (ssize_t)size);
    close(fds[1]);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_load(path, NULL, &filter), BK_OK);
    assert_true(bk_filter_contains(filter, "key:1", 5));
    bk_filter_free(filter);
    close(fds[0]);

    /* A pipe whose header promises a terabyte but sends 256 bytes. */
    assert_int_equal(pipe(fds), 0);
    bk_store_le64(bytes + BK_FORMAT_OFFSET_PAYLOAD_SIZE, (uint64_t)1 << 40);
    assert_true(write(fds[1], bytes, size) == (ssize_t)size);
    close(fds[1]);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
    bk_filter *out = untouched;
    assert_int_equal(bk_filter_load(path, NULL, &out), BK_ETRUNCATED);
    assert_ptr_equal(out, untouched);
    close(fds[0]);

    /* Mapping needs a regular file. */
    bk_store_le64(bytes + BK_FORMAT_OFFSET_PAYLOAD_SIZE, 128);
    assert_int_equal(pipe(fds), 0);
    assert_true(write(fds[1], bytes, size) == (ssize_t)size);
    close(fds[1]);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
    assert_int_equal(bk_filter_map(path, NULL, &out), BK_EUNSUPPORTED);
    assert_ptr_equal(out, untouched);
    close(fds[0]);
    free(bytes);
}

static void test_mapped_filter(void **state)
{
    (void)state;
    char *dir = bk_rt_make_temp_dir();
    char *path = bk_rt_join(dir, "m.bkf");
    bk_params p = { .capacity = 20000, .fpr = 0.01 };
    bk_filter *original = make_bloom(&p, 20000);
    assert_int_equal(bk_filter_save(original, path), BK_OK);

    bk_filter *mapped = NULL;
    assert_int_equal(bk_filter_map(path, NULL, &mapped), BK_OK);
    /* On a little-endian host it reads the file in place: the payload is the
     * mapping (64-byte aligned) and the filter is read-only.  A big-endian
     * host converts a private copy instead (docs/FORMAT.md). */
    const uint64_t *words = bk_bloom_words(bk_filter_object_of(mapped, BK_KIND_BLOOM));
    assert_int_equal((uintptr_t)words % 64, 0);
    if (bk_host_is_little_endian()) {
        assert_int_equal(bk_filter_add(mapped, "x", 1, NULL), BK_EIMMUTABLE);
        assert_int_equal(bk_filter_clear(mapped), BK_EIMMUTABLE);
        assert_int_equal(bk_filter_union(mapped, original), BK_EIMMUTABLE);
    }
    for (size_t i = 0; i < 20000; i += 97) {
        char key[32];
        int len = snprintf(key, sizeof key, "key:%zu", i);
        assert_true(bk_filter_contains(mapped, key, (size_t)len));
    }
    /* A copy of a mapped filter is an ordinary, writable one. */
    bk_filter *copy = NULL;
    assert_int_equal(bk_filter_copy(mapped, &copy), BK_OK);
    assert_int_equal(bk_filter_add(copy, "x", 1, NULL), BK_OK);

    /* Saving over the mapped file replaces it; the mapping keeps the old
     * contents (the old inode lives while mapped). */
    assert_int_equal(bk_filter_save(copy, path), BK_OK);
    bk_stats before, after;
    bk_filter_stats(mapped, &before);
    bk_filter_stats(original, &after);
    assert_int_equal(before.keys_added, after.keys_added);
    bk_filter *reloaded = NULL;
    assert_int_equal(bk_filter_load(path, NULL, &reloaded), BK_OK);
    bk_filter_stats(reloaded, &after);
    assert_int_equal(after.keys_added, before.keys_added + 1);

    bk_filter_free(reloaded);
    bk_filter_free(copy);
    bk_filter_free(mapped);
    bk_filter_free(original);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    free(path);
    free(dir);
}

/* A failed save leaves the old file byte for byte, and no temporary. */
static void test_save_failure_keeps_old_file(void **state)
{
    (void)state;
    char *dir = bk_rt_make_temp_dir();
    char *path = bk_rt_join(dir, "old.bkf");
    size_t old_size;
    uint8_t *old_bytes = small_bloom_bytes(&old_size);
    write_bytes(path, old_bytes, old_size);

    bk_params p = { .capacity = 100000, .fpr = 0.01 }; /* ~117 KiB */
    bk_filter *big = make_bloom(&p, 1000);

    /* 1. The write fails (file size limit; works even as root). */
    struct rlimit saved_limit, small_limit;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved_limit), 0);
    small_limit = saved_limit;
    small_limit.rlim_cur = 4096;
    void (*saved_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small_limit), 0);
    errno = 0;
    bk_status status = bk_filter_save(big, path);
    int saved_errno = errno;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved_limit), 0);
    signal(SIGXFSZ, saved_handler);
    assert_int_equal(status, BK_EIO);
    assert_int_equal(saved_errno, EFBIG);
    size_t size;
    uint8_t *now = bk_rt_read_file(path, &size);
    assert_int_equal(size, old_size);
    assert_memory_equal(now, old_bytes, size);
    free(now);
    assert_int_equal(count_directory_entries(dir), 1);

    /* 2. The target is a directory: refused before anything is written. */
    char *blocker = bk_rt_join(dir, "blocker");
    char *inside = bk_rt_join(blocker, "file");
    assert_int_equal(mkdir(blocker, 0755), 0);
    write_bytes(inside, "x", 1);
    errno = 0;
    assert_int_equal(bk_filter_save(big, blocker), BK_EUNSUPPORTED);
    assert_int_equal(count_directory_entries(dir), 2);
    assert_int_equal(count_directory_entries(blocker), 1);
    assert_int_equal(unlink(inside), 0);
    assert_int_equal(rmdir(blocker), 0);

    /* 3. The directory does not exist. */
    char *nowhere = bk_rt_join(dir, "missing/f.bkf");
    errno = 0;
    assert_int_equal(bk_filter_save(big, nowhere), BK_EIO);
    assert_int_equal(errno, ENOENT);

    /* 4. The directory is read-only (meaningless as root, who may write). */
    if (geteuid() != 0) {
        assert_int_equal(chmod(dir, 0555), 0);
        assert_int_equal(bk_filter_save(big, path), BK_EIO);
        assert_int_equal(chmod(dir, 0755), 0);
        now = bk_rt_read_file(path, &size);
        assert_memory_equal(now, old_bytes, old_size);
        free(now);
    }

    /* 5. A name as long as the file system allows still saves (the
     * temporary's name is cut to fit). */
    char long_name[256];
    memset(long_name, 'n', 255);
    long_name[255] = '\0';
    char *long_path = bk_rt_join(dir, long_name);
    assert_int_equal(bk_filter_save(big, long_path), BK_OK);
    assert_int_equal(unlink(long_path), 0);
    free(long_path);

    /* And a save that can succeed replaces the file. */
    assert_int_equal(bk_filter_save(big, path), BK_OK);
    assert_int_equal(bk_file_verify(path), BK_OK);
    assert_int_equal(count_directory_entries(dir), 1);

    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    bk_filter_free(big);
    free(old_bytes);
    free(nowhere);
    free(inside);
    free(blocker);
    free(path);
    free(dir);
}

/* Saves racing with loads: a reader never sees a half-written file, only
 * the old filter or the new one. */
typedef struct save_race {
    const char *path;
    bk_filter *filters[2];
    int saves;
    int failures;
} save_race;

static void *race_saver(void *arg)
{
    save_race *race = arg;
    for (int i = 0; i < race->saves; i++)
        if (bk_filter_save(race->filters[i & 1], race->path) != BK_OK)
            race->failures++;
    return NULL;
}

static void test_save_is_atomic_for_readers(void **state)
{
    (void)state;
    char *dir = bk_rt_make_temp_dir();
    char *path = bk_rt_join(dir, "race.bkf");
    bk_params p = { .capacity = 20000, .fpr = 0.01 };
    save_race race = { path, { make_bloom(&p, 100), make_bloom(&p, 5000) }, 40, 0 };
    size_t size[2];
    uint8_t *expected[2] = { bk_rt_serialize(race.filters[0], &size[0]),
                             bk_rt_serialize(race.filters[1], &size[1]) };
    assert_int_equal(bk_filter_save(race.filters[0], path), BK_OK);

    pthread_t saver;
    assert_int_equal(pthread_create(&saver, NULL, race_saver, &race), 0);
    size_t loads = 0;
    for (int i = 0; i < 200; i++) {
        bk_filter *loaded = NULL;
        bk_status status = i % 2 ? bk_filter_load(path, NULL, &loaded)
                                 : bk_filter_map(path, NULL, &loaded);
        if (status != BK_OK)
            fail_msg("load during save: %s", bk_strerror(status));
        size_t got_size;
        uint8_t *got = bk_rt_serialize(loaded, &got_size);
        bool matches_one = (got_size == size[0] && memcmp(got, expected[0], got_size) == 0) ||
                           (got_size == size[1] && memcmp(got, expected[1], got_size) == 0);
        assert_true(matches_one);
        free(got);
        bk_filter_free(loaded);
        loads++;
    }
    assert_int_equal(pthread_join(saver, NULL), 0);
    assert_int_equal(race.failures, 0);
    assert_int_equal(loads, 200);
    assert_int_equal(count_directory_entries(dir), 1); /* no temporary left */

    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    for (int i = 0; i < 2; i++) {
        free(expected[i]);
        bk_filter_free(race.filters[i]);
    }
    free(path);
    free(dir);
}

/* A Bloom filter saved and loaded through the handle, the kind asked for
 * in bk_load_options: the key is required, another expected kind refused
 * with the output untouched, and the loaded filter (not mapped) writable. */
static void test_bloom_save_load_by_kind(void **state)
{
    (void)state;
    char *dir = bk_rt_make_temp_dir();
    char *path = bk_rt_join(dir, "b.bkf");
    bk_params p = {
        .capacity = 1000, .fpr = 0.01, .hash_algorithm = BK_HASH_SIPHASH, .secret_key = test_key
    };
    bk_filter *bloom;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &p, &bloom), BK_OK);
    assert_int_equal(bk_filter_add(bloom, "alice", 5, NULL), BK_OK);
    assert_int_equal(bk_filter_save(bloom, path), BK_OK);

    bk_filter *loaded = (bk_filter *)(uintptr_t)0x1234;
    bk_load_options no_key = { .expected_kind = BK_KIND_BLOOM };
    assert_int_equal(bk_filter_load(path, &no_key, &loaded), BK_EKEY);
    assert_ptr_equal(loaded, (bk_filter *)(uintptr_t)0x1234);
    bk_load_options other = { .secret_key = test_key, .expected_kind = BK_KIND_CUCKOO };
    assert_int_equal(bk_filter_load(path, &other, &loaded), BK_EKIND);
    assert_ptr_equal(loaded, (bk_filter *)(uintptr_t)0x1234);
    bk_load_options options = { .secret_key = test_key, .expected_kind = BK_KIND_BLOOM };
    assert_int_equal(bk_filter_load(path, &options, &loaded), BK_OK);
    assert_int_equal(bk_filter_kind(loaded), BK_KIND_BLOOM);
    assert_true(bk_filter_contains(loaded, "alice", 5));
    bk_stats original_stats, loaded_stats;
    bk_filter_stats(bloom, &original_stats);
    bk_filter_stats(loaded, &loaded_stats);
    assert_int_equal(loaded_stats.bits, original_stats.bits);
    assert_int_equal(loaded_stats.keys_added, 1);
    assert_int_equal(bk_filter_add(loaded, "bob", 3, NULL), BK_OK); /* loaded, not mapped */

    /* The same file with no kind asked for. */
    bk_filter *filter = NULL;
    bk_load_options any_kind = { .secret_key = test_key };
    assert_int_equal(bk_filter_load(path, &any_kind, &filter), BK_OK);
    assert_true(bk_filter_contains(filter, "alice", 5));
    bk_filter_free(filter);

    bk_filter_free(loaded);
    bk_filter_free(bloom);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    free(path);
    free(dir);
}

static void test_inspect(void **state)
{
    (void)state;
    bk_params p = {
        .capacity = 100, .fpr = 0.01, .hash_algorithm = BK_HASH_SIPHASH, .secret_key = test_key
    };
    bk_filter *filter = make_bloom(&p, 40);
    size_t size;
    uint8_t *bytes = bk_rt_serialize(filter, &size);
    bk_stats stats;
    bk_filter_stats(filter, &stats);

    /* No key needed to read the header. */
    bk_file_info info;
    assert_int_equal(bk_buffer_inspect(bytes, size, &info), BK_OK);
    assert_int_equal(info.version, BK_FORMAT_VERSION);
    assert_int_equal(info.kind, BK_KIND_BLOOM);
    assert_int_equal(info.hash_algorithm, BK_HASH_SIPHASH);
    assert_int_equal(info.seed, bk_secret_key_id(test_key));
    assert_int_equal(info.keys_added, stats.keys_added);
    assert_int_equal(info.params_size, 32);
    assert_int_equal(info.payload_offset, 128);
    assert_int_equal(info.payload_size, stats.bytes);
    assert_int_equal(info.total_size, size);

    char *dir = bk_rt_make_temp_dir();
    char *path = bk_rt_join(dir, "i.bkf");
    write_bytes(path, bytes, size);
    bk_file_info from_file;
    assert_int_equal(bk_file_inspect(path, &from_file), BK_OK);
    assert_memory_equal(&from_file, &info, sizeof info);

    /* Header damage is reported as by the loaders; the checksum is not read. */
    bytes[100] ^= 1; /* padding */
    assert_int_equal(bk_buffer_inspect(bytes, size, &info), BK_ECORRUPT);
    write_bytes(path, bytes, size);
    assert_int_equal(bk_file_inspect(path, &info), BK_ECORRUPT);
    bytes[100] ^= 1;
    bytes[200] ^= 1; /* payload: only the checksum would see it */
    assert_int_equal(bk_buffer_inspect(bytes, size, &info), BK_OK);
    assert_int_equal(bk_buffer_inspect(bytes, size - 1, &info), BK_ETRUNCATED);
    write_bytes(path, bytes, size - 1);
    assert_int_equal(bk_file_inspect(path, &info), BK_ETRUNCATED);
    assert_int_equal(bk_buffer_inspect(bytes, size, NULL), BK_EINVAL);
    assert_int_equal(bk_file_inspect(NULL, &info), BK_EINVAL);

    assert_int_equal(unlink(path), 0);
    assert_int_equal(bk_file_inspect(path, &info), BK_EIO);
    assert_int_equal(rmdir(dir), 0);
    free(path);
    free(dir);
    free(bytes);
    bk_filter_free(filter);
}

/* In-place decoding is only offered to the kind for an aligned payload on a
 * little-endian host; otherwise the kind copies and the filter is writable. */
static void test_in_place_needs_alignment(void **state)
{
    (void)state;
    size_t size;
    uint8_t *bytes = small_bloom_bytes(&size);
    uint8_t *block = aligned_alloc(64, size + 64);
    assert_non_null(block);
    for (size_t shift = 0; shift < 64; shift += 8) {
        memcpy(block + shift, bytes, size);
        const bk_kind_ops *ops;
        void *object;
        assert_int_equal(bk_format_decode(block + shift, size, NULL, true, true, &ops, &object),
                         BK_OK);
        bool borrowed = bk_bloom_words(object) == (const uint64_t *)(block + shift + 128);
        assert_int_equal(borrowed, shift == 0 && bk_host_is_little_endian());
        bk_status expected = borrowed ? BK_EIMMUTABLE : BK_OK;
        assert_int_equal(bk_bloom_add(object, "x", 1, NULL), expected);
        ops->destroy(object);
    }
    free(block);
    free(bytes);
}

/* ------------------------------------------------------------------------ */
/* Golden files (tests/data/README.md)                                      */
/* ------------------------------------------------------------------------ */

typedef struct golden {
    const char *name;
    bk_params params;
    size_t keys;   /* "golden:0" .. "golden:<keys-1>" added */
    size_t probes; /* "golden:0" .. "golden:<probes-1>" recorded */
    bool keyed;
} golden;

static const golden goldens[] = {
    { "bloom-xxh3.bkf", { .capacity = 200, .fpr = 0.01 }, 200, 2000, false },
    { "bloom-xxh3-seeded.bkf",
      { .capacity = 150, .bits = 1000, .hashes = 5, .seed = 0x9e3779b97f4a7c15ULL },
      150,
      2000,
      false },
    { "bloom-siphash.bkf",
      { .capacity = 100,
        .fpr = 0.001,
        .hash_algorithm = BK_HASH_SIPHASH,
        .secret_key = test_key },
      100,
      2000,
      true },
    { "bloom-xxh64-empty.bkf",
      { .capacity = 50, .fpr = 0.05, .hash_algorithm = BK_HASH_XXH64, .seed = 42 },
      0,
      500,
      false },
    { "bloom-mix64.bkf",
      { .capacity = 200, .fpr = 0.01, .hash_algorithm = BK_HASH_MIX64, .seed = 7 },
      200,
      2000,
      false },
};

#define GOLDEN_COUNT (sizeof goldens / sizeof goldens[0])

static int write_golden(const char *dir)
{
    for (size_t g = 0; g < GOLDEN_COUNT; g++) {
        bk_filter *filter;
        if (bk_filter_create(BK_KIND_BLOOM, &goldens[g].params, &filter) != BK_OK)
            return 1;
        char key[32];
        for (size_t i = 0; i < goldens[g].keys; i++) {
            int len = snprintf(key, sizeof key, "golden:%zu", i);
            bk_filter_add(filter, key, (size_t)len, NULL);
        }
        int failed = bk_golden_save(filter, dir, goldens[g].name, goldens[g].probes);
        bk_filter_free(filter);
        if (failed)
            return 1;
    }
    return 0;
}

static void check_golden(const golden *g)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.answers", BK_TEST_DATA_DIR, g->name);
    size_t file_size;
    uint8_t *answers_file = bk_rt_read_file(path, &file_size);
    answers_file[file_size] = '\0';
    unsigned long long keys_added;
    int consumed = 0;
    assert_int_equal(sscanf((char *)answers_file, "keys_added %llu\n%n", &keys_added, &consumed),
                     1);
    assert_true(consumed > 0 && keys_added <= g->keys);
    const uint8_t *answers = answers_file + consumed;
    assert_int_equal(file_size - (size_t)consumed, g->probes + 1);

    snprintf(path, sizeof path, "%s/%s", BK_TEST_DATA_DIR, g->name);
    size_t size;
    uint8_t *bytes = bk_rt_read_file(path, &size);
    bk_load_options options = { .secret_key = g->keyed ? test_key : NULL,
                                .expected_kind = BK_KIND_BLOOM };
    if (g->keyed) {
        expect_rejected(bytes, size, NULL, BK_EKEY);
        bk_filter *out = untouched;
        assert_int_equal(bk_filter_map(path, NULL, &out), BK_EKEY);
    }
    assert_int_equal(bk_file_verify(path), BK_OK);

    bk_filter *loaded[3] = { NULL, NULL, NULL };
    assert_int_equal(bk_filter_deserialize(bytes, size, &options, &loaded[0]), BK_OK);
    assert_int_equal(bk_filter_load(path, &options, &loaded[1]), BK_OK);
    assert_int_equal(bk_filter_map(path, &options, &loaded[2]), BK_OK);
    for (size_t c = 0; c < 3; c++) {
        bk_stats s;
        bk_filter_stats(loaded[c], &s);
        assert_int_equal(s.kind, BK_KIND_BLOOM);
        assert_int_equal(s.capacity, g->params.capacity);
        assert_int_equal(s.keys_added, keys_added);
        assert_int_equal(s.hash_algorithm, g->params.hash_algorithm);
        if (g->params.bits != 0) {
            assert_int_equal(s.bits, g->params.bits);
            assert_int_equal(s.hashes, g->params.hashes);
        }
        for (size_t i = 0; i < g->probes; i++)
            assert_int_equal(bk_golden_probe(loaded[c], i), answers[i] == '1');
        for (size_t i = 0; i < g->keys; i++)
            assert_int_equal(answers[i], '1'); /* no false negatives */
        /* Today's writer produces the golden bytes from what it read. */
        bk_rt_assert_serializes_to(loaded[c], bytes, size);
        bk_filter_free(loaded[c]);
    }

    /* Today's code builds the same filter from the same recipe (where the
     * recipe fixes m and k, so that a change of sizing formula is not taken
     * for a change of format). */
    if (g->params.bits == 0) {
        free(bytes);
        free(answers_file);
        return;
    }
    bk_filter *rebuilt;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &g->params, &rebuilt), BK_OK);
    char key[32];
    for (size_t i = 0; i < g->keys; i++) {
        int len = snprintf(key, sizeof key, "golden:%zu", i);
        assert_int_equal(bk_filter_add(rebuilt, key, (size_t)len, NULL), BK_OK);
    }
    for (size_t i = 0; i < g->probes; i++)
        assert_int_equal(bk_golden_probe(rebuilt, i), answers[i] == '1');
    bk_stats s;
    bk_filter_stats(rebuilt, &s);
    assert_int_equal(s.keys_added, keys_added);
    bk_filter_free(rebuilt);
    free(bytes);
    free(answers_file);
}

static void test_golden_files(void **state)
{
    (void)state;
    for (size_t g = 0; g < GOLDEN_COUNT; g++)
        check_golden(&goldens[g]);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-golden") == 0)
        return write_golden(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_bloom),
        cmocka_unit_test(test_roundtrip_bloom_variants),
        cmocka_unit_test(test_roundtrip_bloom_siphash),
        cmocka_unit_test(test_roundtrip_extreme_designs),
        cmocka_unit_test(test_layout_matches_spec),
        cmocka_unit_test(test_byte_swapped_rejected),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_oversize),
        cmocka_unit_test(test_bad_magic),
        cmocka_unit_test(test_bad_version),
        cmocka_unit_test(test_bad_kind),
        cmocka_unit_test(test_reserved_and_algorithm),
        cmocka_unit_test(test_inconsistent_sizes),
        cmocka_unit_test(test_kind_parameters),
        cmocka_unit_test(test_legacy_saturated_fpr),
        cmocka_unit_test(test_checksum),
        cmocka_unit_test(test_secret_key),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_load_from_pipe),
        cmocka_unit_test(test_mapped_filter),
        cmocka_unit_test(test_save_failure_keeps_old_file),
        cmocka_unit_test(test_save_is_atomic_for_readers),
        cmocka_unit_test(test_bloom_save_load_by_kind),
        cmocka_unit_test(test_inspect),
        cmocka_unit_test(test_in_place_needs_alignment),
        cmocka_unit_test(test_golden_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
