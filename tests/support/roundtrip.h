/*
 * tests/support/roundtrip.h -- the file-format round trip, shared by every kind's
 * tests.  Include it after <cmocka.h> and "bloomkit.h", then call
 *
 *     bk_roundtrip_check(filter, secret_key_or_NULL, probes);
 *
 * with a filter holding some keys.  It serialises the filter to a buffer,
 * reads it back, saves it to a file, loads it, maps it, and checks for each
 * copy that
 *   - the statistics that define it (kind, bits, hashes, bytes, capacity,
 *     keys added, hash algorithm, seed, fill) are equal to the original's;
 *   - every probe answers exactly as the original: the keys "key:0" ..
 *     "key:<probes-1>" (so add keys named "key:<i>" for i below probes to
 *     cover present keys too) and `probes` pseudo-random 128-bit hashes;
 *   - serialising the copy gives the same bytes as serialising the original;
 *   - the mapped copy of a dynamic kind refuses adds (BK_EIMMUTABLE) on a
 *     little-endian host, where it reads the file in place.
 * Files go to a fresh directory under $TMPDIR (default /tmp), removed after.
 */
#ifndef BK_TESTS_ROUNDTRIP_H
#define BK_TESTS_ROUNDTRIP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomkit.h"

#define BK_RT_UNUSED __attribute__((unused))

/* A fresh directory for test files; free() the result, rmdir it after. */
static BK_RT_UNUSED char *bk_rt_make_temp_dir(void)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || *base == '\0')
        base = "/tmp";
    size_t room = strlen(base) + 32;
    char *dir = malloc(room);
    assert_non_null(dir);
    snprintf(dir, room, "%s/bloomkit-test-XXXXXX", base);
    assert_non_null(mkdtemp(dir));
    return dir;
}

static BK_RT_UNUSED char *bk_rt_join(const char *dir, const char *name)
{
    size_t room = strlen(dir) + strlen(name) + 2;
    char *path = malloc(room);
    assert_non_null(path);
    snprintf(path, room, "%s/%s", dir, name);
    return path;
}

/* The whole of a file, for byte comparisons. */
static BK_RT_UNUSED uint8_t *bk_rt_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long length = ftell(f);
    assert_true(length >= 0);
    rewind(f);
    uint8_t *bytes = malloc((size_t)length + 1);
    assert_non_null(bytes);
    assert_int_equal(fread(bytes, 1, (size_t)length, f), (size_t)length);
    fclose(f);
    *size = (size_t)length;
    return bytes;
}

static BK_RT_UNUSED uint8_t *bk_rt_serialize(const bk_filter *filter, size_t *size)
{
    assert_int_equal(bk_filter_serialized_size(filter, size), BK_OK);
    uint8_t *bytes = malloc(*size);
    assert_non_null(bytes);
    size_t written = 0;
    assert_int_equal(bk_filter_serialize(filter, bytes, *size, &written), BK_OK);
    assert_int_equal(written, *size);
    return bytes;
}

/* Checks that serialising `filter` gives exactly bytes[0..size). */
static BK_RT_UNUSED void bk_rt_assert_serializes_to(const bk_filter *filter,
                                                    const uint8_t *bytes, size_t size)
{
    size_t again_size;
    uint8_t *again = bk_rt_serialize(filter, &again_size);
    assert_int_equal(again_size, size);
    assert_memory_equal(again, bytes, size);
    free(again);
}

/* Checks that two filters serialise to the same bytes. */
static BK_RT_UNUSED void bk_rt_assert_same_bytes(const bk_filter *a, const bk_filter *b)
{
    size_t size;
    uint8_t *bytes = bk_rt_serialize(b, &size);
    bk_rt_assert_serializes_to(a, bytes, size);
    free(bytes);
}

static BK_RT_UNUSED uint64_t bk_rt_next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Same definition, same answers, same bytes. */
static BK_RT_UNUSED void bk_rt_assert_same(const bk_filter *original, const bk_filter *copy,
                                           const uint8_t *original_bytes, size_t original_size,
                                           size_t probes)
{
    bk_stats a, b;
    bk_filter_stats(original, &a);
    bk_filter_stats(copy, &b);
    assert_int_equal(a.kind, b.kind);
    assert_int_equal(a.bits, b.bits);
    assert_int_equal(a.hashes, b.hashes);
    assert_int_equal(a.bytes, b.bytes);
    assert_int_equal(a.capacity, b.capacity);
    assert_int_equal(a.keys_added, b.keys_added);
    assert_int_equal(a.hash_algorithm, b.hash_algorithm);
    assert_int_equal(a.seed, b.seed);
    assert_true(a.fill_ratio == b.fill_ratio);
    assert_true(a.target_fpr == b.target_fpr);

    char key[32];
    for (size_t i = 0; i < probes; i++) {
        int len = snprintf(key, sizeof key, "key:%zu", i);
        assert_int_equal(bk_filter_contains(original, key, (size_t)len),
                         bk_filter_contains(copy, key, (size_t)len));
    }
    uint64_t state = 0x5eed;
    for (size_t i = 0; i < probes; i++) {
        bk_hash h = { bk_rt_next_random(&state), bk_rt_next_random(&state) };
        assert_int_equal(bk_filter_contains_hash(original, h), bk_filter_contains_hash(copy, h));
    }

    bk_rt_assert_serializes_to(copy, original_bytes, original_size);
}

static BK_RT_UNUSED void bk_roundtrip_check(const bk_filter *original, const uint8_t *secret_key,
                                            size_t probes)
{
    bk_load_options options = { .secret_key = secret_key,
                                .expected_kind = bk_filter_kind(original) };
    size_t size;
    uint8_t *bytes = bk_rt_serialize(original, &size);

    /* Buffer. */
    bk_filter *copy = NULL;
    assert_int_equal(bk_filter_deserialize(bytes, size, &options, &copy), BK_OK);
    bk_rt_assert_same(original, copy, bytes, size, probes);
    bk_filter_free(copy);

    /* File: saved bytes are the serialised bytes; load and map read them. */
    char *dir = bk_rt_make_temp_dir();
    char *path = bk_rt_join(dir, "filter.bkf");
    assert_int_equal(bk_filter_save(original, path), BK_OK);
    size_t file_size;
    uint8_t *file_bytes = bk_rt_read_file(path, &file_size);
    assert_int_equal(file_size, size);
    assert_memory_equal(file_bytes, bytes, size);
    free(file_bytes);
    assert_int_equal(bk_file_verify(path), BK_OK);

    copy = NULL;
    assert_int_equal(bk_filter_load(path, &options, &copy), BK_OK);
    bk_rt_assert_same(original, copy, bytes, size, probes);
    bk_filter_free(copy);

    copy = NULL;
    assert_int_equal(bk_filter_map(path, &options, &copy), BK_OK);
    bk_rt_assert_same(original, copy, bytes, size, probes);
    const uint16_t probe = 1;
    bool little_endian = *(const uint8_t *)&probe == 1;
    if (little_endian && !bk_kind_is_static(bk_filter_kind(copy)))
        assert_int_equal(bk_filter_add(copy, "new key", 7, NULL), BK_EIMMUTABLE);
    bk_filter_free(copy);

    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0); /* also proves no temporary file was left */
    free(path);
    free(dir);
    free(bytes);
}

#endif
