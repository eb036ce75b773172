/*
 * tests/test_hostile.c -- files with a valid checksum and contents that
 * contradict themselves: the loaders refuse them (BK_ECORRUPT), and a
 * filter the library saved always loads again.
 *
 * Two sources of such files:
 *   - the files of tests/data/hostile, reproducers of loader gaps (a window
 *     whose current generation is marked empty, cuckoo files whose key
 *     count disagrees with their table, a scalable chain whose initial
 *     capacity disagrees with its first sub-filter);
 *   - files written here from valid filters with one field changed and
 *     the checksum recomputed, one per invariant the loaders check
 *     (docs/FORMAT.md, "What each loader checks").
 * And the other direction: filters loaded from edge-of-valid files are
 * added to, removed from and saved, and every save loads again.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, in tests/roundtrip.h */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "endian.h"
#include "format.h"
#include "roundtrip.h"

#ifndef BK_TEST_DATA_DIR
#define BK_TEST_DATA_DIR "tests/data"
#endif
#define HOSTILE_DIR BK_TEST_DATA_DIR "/hostile/"

static const bk_load_options any_kind = { .expected_kind = BK_KIND_NONE };

/* Recomputes the checksum field after an edit, so that only the edited
 * field can make the loader refuse the bytes. */
static void reseal(uint8_t *bytes, size_t size)
{
    bk_store_le64(bytes + BK_FORMAT_OFFSET_CHECKSUM, bk_format_checksum(bytes, size));
}

static bk_status load_status(const uint8_t *bytes, size_t size)
{
    bk_filter *filter = NULL;
    bk_status status = bk_filter_deserialize(bytes, size, &any_kind, &filter);
    assert_true((status == BK_OK) == (filter != NULL));
    bk_filter_free(filter);
    return status;
}

static bk_filter *load_ok(const uint8_t *bytes, size_t size)
{
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_deserialize(bytes, size, &any_kind, &filter), BK_OK);
    return filter;
}

/* Serialises `filter` and requires the bytes to load again, answering the
 * `count` keys "k:0".. as `filter` does. */
static void assert_save_loads(const bk_filter *filter, unsigned count)
{
    size_t size = 0;
    uint8_t *bytes = bk_rt_serialize(filter, &size);
    bk_filter *again = load_ok(bytes, size);
    char key[32];
    for (unsigned i = 0; i < count; i++) {
        int len = snprintf(key, sizeof key, "k:%u", i);
        assert_int_equal(bk_filter_contains(again, key, (size_t)len),
                         bk_filter_contains(filter, key, (size_t)len));
    }
    bk_filter_free(again);
    free(bytes);
}

static void add_keys(bk_filter *filter, unsigned first, unsigned count)
{
    char key[32];
    for (unsigned i = first; i < first + count; i++) {
        int len = snprintf(key, sizeof key, "k:%u", i);
        assert_int_equal(bk_filter_add(filter, key, (size_t)len, NULL), BK_OK);
    }
}

static bk_filter *create(bk_kind kind, const bk_params *params)
{
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_create(kind, params, &filter), BK_OK);
    return filter;
}

/* ------------------------------------------------------------------------ */
/* The reproducers                                                          */
/* ------------------------------------------------------------------------ */

static void assert_file_refused(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", HOSTILE_DIR, name);
    size_t size = 0;
    uint8_t *bytes = bk_rt_read_file(path, &size);
    assert_int_equal(load_status(bytes, size), BK_ECORRUPT);
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_load(path, &any_kind, &filter), BK_ECORRUPT);
    assert_null(filter);
    free(bytes);
}

static void test_window_current_slot_empty_refused(void **state)
{
    (void)state;
    assert_file_refused("R1-window-current-slot-empty.bkf");
}

static void test_cuckoo_key_count_zero_refused(void **state)
{
    (void)state;
    assert_file_refused("R2a-cuckoo-keys_added-0.bkf");
}

static void test_cuckoo_key_count_max_refused(void **state)
{
    (void)state;
    assert_file_refused("R2b-cuckoo-keys_added-max.bkf");
}

static void test_scalable_initial_capacity_refused(void **state)
{
    (void)state;
    assert_file_refused("R3-scalable-n0-2pow27.bkf");
}

/* A mapped file is read in place and its table not scanned: a cuckoo file
 * whose count is wrong but within the table's slots still maps (read-only),
 * and what it saves is counted from its table, so the saved copy loads. */
static void test_mapped_cuckoo_saves_a_loadable_file(void **state)
{
    (void)state;
    bk_filter *mapped = NULL;
    assert_int_equal(
        bk_filter_map(HOSTILE_DIR "R2a-cuckoo-keys_added-0.bkf", &any_kind, &mapped), BK_OK);
    assert_int_equal(bk_filter_remove(mapped, "k", 1), BK_EIMMUTABLE);
    bk_stats stats;
    bk_filter_stats(mapped, &stats);
    assert_true(stats.keys_added > 0);
    assert_save_loads(mapped, 0);
    bk_filter_free(mapped);
    /* a count beyond the slots is refused even when mapping */
    assert_int_equal(
        bk_filter_map(HOSTILE_DIR "R2b-cuckoo-keys_added-max.bkf", &any_kind, &mapped),
        BK_ECORRUPT);
}

/* ------------------------------------------------------------------------ */
/* Cuckoo: the key count is the number of stored fingerprints              */
/* ------------------------------------------------------------------------ */

static uint8_t *cuckoo_file(unsigned keys, size_t *size)
{
    bk_params params = { .capacity = 100 };
    bk_filter *filter = create(BK_KIND_CUCKOO, &params);
    add_keys(filter, 0, keys);
    uint8_t *bytes = bk_rt_serialize(filter, size);
    bk_filter_free(filter);
    return bytes;
}

static void test_cuckoo_key_count_must_match_table(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = cuckoo_file(20, &size);
    assert_int_equal(load_status(bytes, size), BK_OK);
    const uint64_t wrong[] = { 0, 19, 21, 1000, UINT64_MAX };
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        bk_store_le64(bytes + BK_FORMAT_OFFSET_KEYS_ADDED, wrong[i]);
        reseal(bytes, size);
        assert_int_equal(load_status(bytes, size), BK_ECORRUPT);
    }
    free(bytes);
}

/* Fingerprint widths: any of 4 to 16 bits loads; another width, or a
 * payload whose padding bits (odd width, odd bucket count) are not 0, is
 * refused. */
static void test_cuckoo_width_checked(void **state)
{
    (void)state;
    for (unsigned width = BK_CUCKOO_MIN_FINGERPRINT_BITS;
         width <= BK_CUCKOO_MAX_FINGERPRINT_BITS; width++) {
        bk_params params = { .capacity = 100, .fingerprint_bits = width };
        bk_filter *filter = create(BK_KIND_CUCKOO, &params);
        add_keys(filter, 0, 20);
        size_t size = 0;
        uint8_t *bytes = bk_rt_serialize(filter, &size);
        bk_filter_free(filter);
        filter = load_ok(bytes, size);
        assert_save_loads(filter, 20);
        bk_filter_free(filter);
        uint8_t *width_field = bytes + BK_FORMAT_PARAMS_OFFSET + 8;
        const uint32_t wrong[] = { 0, 3, 17, 32, width == 8 ? 9 : 8, UINT32_MAX };
        for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
            bk_store_le32(width_field, wrong[i]);
            reseal(bytes, size);
            assert_int_equal(load_status(bytes, size), BK_ECORRUPT);
        }
        bk_store_le32(width_field, width);
        if (width % 2 == 1) {
            /* 35 buckets of 4 x width bits: the last byte's high half is
             * padding. */
            bytes[size - 1] ^= 0x80;
            reseal(bytes, size);
            assert_int_equal(load_status(bytes, size), BK_ECORRUPT);
        }
        free(bytes);
    }
}

/* Removing every key of a loaded filter, then one more, keeps the count
 * at zero, and each save in between loads. */
static void test_cuckoo_remove_to_empty_saves(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = cuckoo_file(5, &size);
    bk_filter *filter = load_ok(bytes, size);
    char key[32];
    for (unsigned i = 0; i < 5; i++) {
        int len = snprintf(key, sizeof key, "k:%u", i);
        assert_int_equal(bk_filter_remove(filter, key, (size_t)len), BK_OK);
        assert_save_loads(filter, 5);
    }
    assert_int_equal(bk_filter_remove(filter, "k:0", 3), BK_ENOTFOUND);
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    assert_int_equal(stats.keys_added, 0);
    assert_save_loads(filter, 5);
    bk_filter_free(filter);
    free(bytes);
}

/* ------------------------------------------------------------------------ */
/* Scalable: every sub-filter is the one the chain's rule makes            */
/* ------------------------------------------------------------------------ */

#define CHAIN_PARAMS(bytes) ((bytes) + BK_FORMAT_PARAMS_OFFSET)
#define LEVEL_RECORD(bytes, i) (CHAIN_PARAMS(bytes) + 40 + 32 * (i))

static uint8_t *scalable_file(unsigned keys, size_t *size)
{
    bk_params params = { .capacity = 50, .fpr = 0.01 };
    bk_filter *filter = create(BK_KIND_SCALABLE, &params);
    add_keys(filter, 0, keys);
    uint8_t *bytes = bk_rt_serialize(filter, size);
    bk_filter_free(filter);
    return bytes;
}

/* The chain's header edited, its records left: refused. */
static void test_scalable_header_must_match_records(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = scalable_file(120, &size); /* three sub-filters: 50, 100, 200 */
    assert_int_equal(load_status(bytes, size), BK_OK);
    uint8_t *edited = malloc(size);
    assert_non_null(edited);
    /* n0 */
    memcpy(edited, bytes, size);
    bk_store_le64(CHAIN_PARAMS(edited), (uint64_t)1 << 27);
    reseal(edited, size);
    assert_int_equal(load_status(edited, size), BK_ECORRUPT);
    /* expansion s = 4 instead of 2 */
    memcpy(edited, bytes, size);
    bk_store_le_double(CHAIN_PARAMS(edited) + 16, 4.0);
    reseal(edited, size);
    assert_int_equal(load_status(edited, size), BK_ECORRUPT);
    /* tightening r = 0.9 instead of 0.5 */
    memcpy(edited, bytes, size);
    bk_store_le_double(CHAIN_PARAMS(edited) + 24, 0.9);
    reseal(edited, size);
    assert_int_equal(load_status(edited, size), BK_ECORRUPT);
    /* the target FPR */
    memcpy(edited, bytes, size);
    bk_store_le_double(CHAIN_PARAMS(edited) + 8, 0.3);
    reseal(edited, size);
    assert_int_equal(load_status(edited, size), BK_ECORRUPT);
    free(edited);
    free(bytes);
}

/* A record edited (capacity or k of the newest sub-filter): refused. */
static void test_scalable_records_must_follow_the_rule(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = scalable_file(120, &size);
    uint8_t *edited = malloc(size);
    assert_non_null(edited);
    memcpy(edited, bytes, size);
    bk_store_le64(LEVEL_RECORD(edited, 2) + 16, 1000); /* capacity 200 -> 1000 */
    reseal(edited, size);
    assert_int_equal(load_status(edited, size), BK_ECORRUPT);
    memcpy(edited, bytes, size);
    uint32_t hashes = bk_load_le32(LEVEL_RECORD(edited, 2) + 8);
    bk_store_le32(LEVEL_RECORD(edited, 2) + 8, hashes + 5);
    reseal(edited, size);
    assert_int_equal(load_status(edited, size), BK_ECORRUPT);
    free(edited);
    free(bytes);
}

/* Growing a loaded chain allocates what the rule gives: after 200 more
 * keys the chain is what a chain that never left memory would be. */
static void test_scalable_loaded_chain_grows_by_the_rule(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = scalable_file(120, &size);
    bk_filter *loaded = load_ok(bytes, size);
    bk_params params = { .capacity = 50, .fpr = 0.01 };
    bk_filter *fresh = create(BK_KIND_SCALABLE, &params);
    add_keys(fresh, 0, 120);
    add_keys(loaded, 120, 200);
    add_keys(fresh, 120, 200);
    bk_stats a, b;
    bk_filter_stats(loaded, &a);
    bk_filter_stats(fresh, &b);
    assert_int_equal(a.filters, b.filters);
    assert_int_equal(a.bytes, b.bytes);
    assert_int_equal(a.bits, b.bits);
    assert_save_loads(loaded, 320);
    bk_filter_free(fresh);
    bk_filter_free(loaded);
    free(bytes);
}

/* ------------------------------------------------------------------------ */
/* Window: the clock against the slots                                      */
/* ------------------------------------------------------------------------ */

#define WINDOW_PARAMS(bytes) ((bytes) + BK_FORMAT_PARAMS_OFFSET)
#define SLOT_EPOCH(bytes, slot) (WINDOW_PARAMS(bytes) + 72 + 16 * (slot))
#define SLOT_KEYS(bytes, slot) (SLOT_EPOCH(bytes, slot) + 8)
#define EMPTY UINT64_MAX

/* W = 30 insertions, g = 4 generations: S = 10.  `keys` adds. */
static uint8_t *window_file(unsigned keys, size_t *size)
{
    bk_params params = { .window_keys = 30, .generations = 4, .fpr = 0.01 };
    bk_filter *filter = create(BK_KIND_WINDOW, &params);
    add_keys(filter, 0, keys);
    uint8_t *bytes = bk_rt_serialize(filter, size);
    bk_filter_free(filter);
    return bytes;
}

static void expect_window_edit(const uint8_t *original, size_t size, unsigned slot,
                               uint64_t epoch, uint64_t keys, bk_status expected)
{
    uint8_t *edited = malloc(size);
    assert_non_null(edited);
    memcpy(edited, original, size);
    bk_store_le64(SLOT_EPOCH(edited, slot), epoch);
    bk_store_le64(SLOT_KEYS(edited, slot), keys);
    reseal(edited, size);
    assert_int_equal(load_status(edited, size), expected);
    free(edited);
}

static void test_window_slots_must_follow_the_clock(void **state)
{
    (void)state;
    size_t size = 0;
    /* 25 adds: clock 24, epochs 0, 1, 2 in slots 0-2 (10, 10, 5 keys), slot 3 empty */
    uint8_t *bytes = window_file(25, &size);
    assert_int_equal(load_status(bytes, size), BK_OK);
    assert_int_equal(bk_load_le64(SLOT_EPOCH(bytes, 2)), 2);
    assert_int_equal(bk_load_le64(SLOT_EPOCH(bytes, 3)), EMPTY);
    /* the current epoch's slot marked empty: new keys would go unread */
    expect_window_edit(bytes, size, 2, EMPTY, 0, BK_ECORRUPT);
    /* a gap: epoch 1 missing between 0 and 2 */
    expect_window_edit(bytes, size, 1, EMPTY, 0, BK_ECORRUPT);
    /* an empty slot that counts keys */
    expect_window_edit(bytes, size, 3, EMPTY, 1, BK_ECORRUPT);
    /* a generation with more insertions than its span */
    expect_window_edit(bytes, size, 0, 0, 11, BK_ECORRUPT);
    /* the oldest epoch dropped is still a valid ring (as after ageing) */
    expect_window_edit(bytes, size, 0, EMPTY, 0, BK_OK);
    free(bytes);
}

static void test_window_key_count_against_clock(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = window_file(25, &size);
    bk_store_le64(bytes + BK_FORMAT_OFFSET_KEYS_ADDED, 26); /* 25 insertions */
    reseal(bytes, size);
    assert_int_equal(load_status(bytes, size), BK_ECORRUPT);
    free(bytes);
    bytes = window_file(0, &size); /* no event yet */
    bk_store_le64(bytes + BK_FORMAT_OFFSET_KEYS_ADDED, 1);
    reseal(bytes, size);
    assert_int_equal(load_status(bytes, size), BK_ECORRUPT);
    free(bytes);
}

/* A window whose clock is one short of the largest value: it loads,
 * refuses the add that would need the clock to wrap (BK_EFULL, nothing
 * changed), and saves a file that loads.  A clock of 2^64 - 1 is refused. */
static void test_window_clock_at_its_end(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = window_file(1, &size);
    const uint64_t clock = UINT64_MAX - 1, span = 10, epoch = clock / span;
    bk_store_le64(WINDOW_PARAMS(bytes) + 64, clock);
    for (unsigned slot = 0; slot < 4; slot++) {
        bk_store_le64(SLOT_EPOCH(bytes, slot), slot == epoch % 4 ? epoch : EMPTY);
        bk_store_le64(SLOT_KEYS(bytes, slot), slot == epoch % 4);
    }
    reseal(bytes, size);
    bk_filter *filter = load_ok(bytes, size);
    assert_int_equal(bk_filter_add(filter, "late", 4, NULL), BK_EFULL);
    bk_key batch[2] = { { "a", 1 }, { "b", 1 } };
    size_t added = 99;
    assert_int_equal(bk_filter_add_batch(filter, batch, 2, &added), BK_EFULL);
    assert_int_equal(added, 0);
    size_t again_size = 0;
    uint8_t *again = bk_rt_serialize(filter, &again_size);
    assert_int_equal(again_size, size);
    assert_memory_equal(again, bytes, size);
    free(again);
    bk_filter_free(filter);

    bk_store_le64(WINDOW_PARAMS(bytes) + 64, UINT64_MAX);
    reseal(bytes, size);
    assert_int_equal(load_status(bytes, size), BK_ECORRUPT);
    free(bytes);
}

/* The cell layout (g <= 4): the layout field must match the payload, and a
 * cell's unused bit (g = 3 leaves bit 3 of every 4-bit cell) must be zero. */
static void test_window_cell_layout_checked(void **state)
{
    (void)state;
    bk_params params = { .window_keys = 30, .generations = 3, .fpr = 0.01 };
    bk_filter *filter = create(BK_KIND_WINDOW, &params);
    add_keys(filter, 0, 25);
    size_t size = 0;
    uint8_t *bytes = bk_rt_serialize(filter, &size);
    bk_filter_free(filter);
    assert_int_equal(load_status(bytes, size), BK_OK);
    assert_int_equal(bk_load_le16(WINDOW_PARAMS(bytes) + 58), 1); /* cells */
    bk_store_le16(WINDOW_PARAMS(bytes) + 58, 0);                  /* claimed rings */
    reseal(bytes, size);
    assert_int_equal(load_status(bytes, size), BK_ECORRUPT);
    bk_store_le16(WINDOW_PARAMS(bytes) + 58, 1);
    bk_file_info info;
    assert_int_equal(bk_buffer_inspect(bytes, size, &info), BK_OK);
    bytes[info.payload_offset] |= 0x08; /* bit 3 of cell 0 */
    reseal(bytes, size);
    assert_int_equal(load_status(bytes, size), BK_ECORRUPT);
    bytes[info.payload_offset] &= (uint8_t)~0x08;
    reseal(bytes, size);
    assert_int_equal(load_status(bytes, size), BK_OK);
    free(bytes);
}

/* Keys added to a loaded window are found, and its saves load. */
static void test_window_loaded_then_added(void **state)
{
    (void)state;
    size_t size = 0;
    uint8_t *bytes = window_file(25, &size);
    bk_filter *filter = load_ok(bytes, size);
    char key[32];
    for (unsigned i = 100; i < 140; i++) {
        int len = snprintf(key, sizeof key, "k:%u", i);
        assert_int_equal(bk_filter_add(filter, key, (size_t)len, NULL), BK_OK);
        assert_true(bk_filter_contains(filter, key, (size_t)len));
        assert_save_loads(filter, 140);
    }
    bk_filter_free(filter);
    free(bytes);
}

/* ------------------------------------------------------------------------ */
/* Counts that operations on loaded filters must not wrap                   */
/* ------------------------------------------------------------------------ */

/* A Bloom-family file whose key count is the largest value: adds and a
 * union saturate the count instead of wrapping it to a small number. */
static void test_key_counts_saturate(void **state)
{
    (void)state;
    const bk_kind kinds[] = { BK_KIND_BLOOM, BK_KIND_BLOCKED, BK_KIND_SBBF, BK_KIND_COUNTING };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        bk_params params = { .capacity = 100 };
        bk_filter *filter = create(kinds[i], &params);
        add_keys(filter, 0, 3);
        size_t size = 0;
        uint8_t *bytes = bk_rt_serialize(filter, &size);
        bk_store_le64(bytes + BK_FORMAT_OFFSET_KEYS_ADDED, UINT64_MAX);
        reseal(bytes, size);
        bk_filter *loaded = load_ok(bytes, size);
        add_keys(loaded, 10, 3);
        assert_int_equal(bk_filter_union(loaded, filter), BK_OK);
        bk_stats stats;
        bk_filter_stats(loaded, &stats);
        assert_true(stats.keys_added == UINT64_MAX);
        assert_save_loads(loaded, 13);
        bk_filter_free(loaded);
        bk_filter_free(filter);
        free(bytes);
    }
}

/* ------------------------------------------------------------------------ */
/* The counting filter's blocked layout                                     */
/* ------------------------------------------------------------------------ */

#define COUNTING_PARAMS BK_FORMAT_HEADER_SIZE /* the parameter block's offset */

/* A blocked-layout counting file with one field of its 40-byte parameter
 * block (or the header's params_size) changed and the checksum redone. */
static bk_status counting_edit_status(const uint8_t *original, size_t size, size_t offset,
                                      uint32_t value)
{
    uint8_t *bytes = malloc(size);
    assert_non_null(bytes);
    memcpy(bytes, original, size);
    bk_store_le32(bytes + offset, value);
    reseal(bytes, size);
    bk_status status = load_status(bytes, size);
    free(bytes);
    return status;
}

static void test_counting_blocked_layout_fields(void **state)
{
    (void)state;
    bk_params params = { .capacity = 300 };
    bk_filter *filter = create(BK_KIND_COUNTING, &params);
    add_keys(filter, 0, 300);
    for (int i = 0; i < 20; i++)
        add_keys(filter, 7, 1); /* saturated counters */
    size_t size = 0;
    uint8_t *bytes = bk_rt_serialize(filter, &size);
    assert_int_equal(bk_load_le32(bytes + BK_FORMAT_OFFSET_PARAMS_SIZE), 40);
    uint64_t counters = bk_load_le64(bytes + COUNTING_PARAMS);
    assert_int_equal(counters % 128, 0);
    const struct {
        size_t offset;
        uint32_t value;
        bk_status expected;
    } cases[] = {
        { COUNTING_PARAMS + 32, 0, BK_ECORRUPT },  /* layout 0 (classic) in 40 bytes */
        { COUNTING_PARAMS + 32, 7, BK_ECORRUPT },  /* unknown layout */
        { COUNTING_PARAMS + 36, 64, BK_ECORRUPT }, /* 64 counters per line */
        { COUNTING_PARAMS + 36, 0, BK_ECORRUPT },  /* no counters per line */
        { COUNTING_PARAMS, (uint32_t)counters + 1, BK_ECORRUPT },   /* m not whole lines */
        { COUNTING_PARAMS, (uint32_t)counters - 128, BK_ECORRUPT }, /* one line short */
        { COUNTING_PARAMS, (uint32_t)counters + 128, BK_ECORRUPT }, /* one line more */
        { COUNTING_PARAMS + 8, 0, BK_ECORRUPT },                    /* k = 0 */
        { COUNTING_PARAMS + 8, 256, BK_ERANGE },                    /* k = 256 */
        { BK_FORMAT_OFFSET_PARAMS_SIZE, 36, BK_ECORRUPT },
        { BK_FORMAT_OFFSET_PARAMS_SIZE, 48, BK_ECORRUPT },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        assert_int_equal(counting_edit_status(bytes, size, cases[c].offset, cases[c].value),
                         cases[c].expected);
    /* The unchanged file loads, removes, adds, and saves a file that loads. */
    bk_filter *loaded = load_ok(bytes, size);
    char key[32];
    for (unsigned i = 0; i < 300; i += 2) {
        int len = snprintf(key, sizeof key, "k:%u", i);
        assert_int_equal(bk_filter_remove(loaded, key, (size_t)len), BK_OK);
    }
    add_keys(loaded, 1000, 50);
    assert_save_loads(loaded, 1050);
    bk_filter_free(loaded);
    free(bytes);
    bk_filter_free(filter);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_current_slot_empty_refused),
        cmocka_unit_test(test_counting_blocked_layout_fields),
        cmocka_unit_test(test_cuckoo_key_count_zero_refused),
        cmocka_unit_test(test_cuckoo_key_count_max_refused),
        cmocka_unit_test(test_scalable_initial_capacity_refused),
        cmocka_unit_test(test_mapped_cuckoo_saves_a_loadable_file),
        cmocka_unit_test(test_cuckoo_key_count_must_match_table),
        cmocka_unit_test(test_cuckoo_width_checked),
        cmocka_unit_test(test_cuckoo_remove_to_empty_saves),
        cmocka_unit_test(test_scalable_header_must_match_records),
        cmocka_unit_test(test_scalable_records_must_follow_the_rule),
        cmocka_unit_test(test_scalable_loaded_chain_grows_by_the_rule),
        cmocka_unit_test(test_window_slots_must_follow_the_clock),
        cmocka_unit_test(test_window_cell_layout_checked),
        cmocka_unit_test(test_window_key_count_against_clock),
        cmocka_unit_test(test_window_clock_at_its_end),
        cmocka_unit_test(test_window_loaded_then_added),
        cmocka_unit_test(test_key_counts_saturate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
