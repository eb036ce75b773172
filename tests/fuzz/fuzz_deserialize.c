/*
 * tests/fuzz/fuzz_deserialize.c -- libFuzzer target over the buffer loader.
 *
 * Every input goes through bk_filter_deserialize twice: as it is, and with
 * its checksum field recomputed (so that mutations reach the checks behind
 * the checksum: kind, key, the kind's own parameters).  The fixed-up copy
 * is also decoded in place from a 64-byte aligned buffer, the path mapped
 * files take.  Properties checked on every input:
 *   - no crash, no out-of-bounds access, no leak (ASan, UBSan, LSan);
 *   - a status among the documented ones;
 *   - an accepted input answers queries, and serialises back to exactly
 *     the same bytes (the writer and the reader agree on every byte).
 *
 * Run: scripts/fuzz-smoke.sh (30 s), or build the `fuzz` preset and run
 * build/fuzz/tests/fuzz/fuzz_deserialize CORPUS_DIR tests/fuzz/corpus.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit.h"
#include "endian.h"
#include "format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t fuzz_key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

static void check_status(bk_status status)
{
    switch (status) {
    case BK_OK:
    case BK_ERANGE:
    case BK_ENOMEM:
    case BK_ETRUNCATED:
    case BK_EMAGIC:
    case BK_EVERSION:
    case BK_EKIND:
    case BK_ECORRUPT:
    case BK_ECHECKSUM:
    case BK_EKEY:
    case BK_EOVERSIZE: return;
    default: abort(); /* an undocumented status for a buffer loader */
    }
}

/* An accepted filter must answer, report stats, and re-serialise to the
 * very bytes it was read from. */
static void exercise(const bk_filter *filter, const uint8_t *original, size_t size)
{
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    (void)bk_filter_contains(filter, "fuzz", 4);
    bk_hash h = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
    (void)bk_filter_contains_hash(filter, h);

    size_t again_size = 0;
    if (bk_filter_serialized_size(filter, &again_size) != BK_OK || again_size != size)
        abort();
    uint8_t *again = malloc(size);
    if (again == NULL)
        return;
    if (bk_filter_serialize(filter, again, size, NULL) != BK_OK ||
        memcmp(again, original, size) != 0)
        abort();
    free(again);
}

static void load(const uint8_t *bytes, size_t size)
{
    bk_load_options options = { .secret_key = fuzz_key, .expected_kind = BK_KIND_NONE };
    bk_filter *filter = NULL;
    bk_status status = bk_filter_deserialize(bytes, size, &options, &filter);
    check_status(status);
    if (status == BK_OK) {
        exercise(filter, bytes, size);
        bk_filter_free(filter);
    }
}

/* The mapped-file path: decode in place from an aligned copy, no checksum. */
static void load_in_place(const uint8_t *bytes, size_t size)
{
    uint8_t *aligned = aligned_alloc(64, (size + 63) & ~(size_t)63);
    if (aligned == NULL)
        return;
    memcpy(aligned, bytes, size);
    bk_load_options options = { .secret_key = fuzz_key, .expected_kind = BK_KIND_NONE };
    const bk_kind_ops *ops;
    void *object;
    bk_status status = bk_format_decode(aligned, size, &options, false, true, &ops, &object);
    check_status(status);
    if (status == BK_OK) {
        bk_stats stats;
        ops->stats(object, &stats);
        bk_hash h = { 1, 2 };
        (void)ops->contains_hash(object, h);
        ops->destroy(object);
    }
    free(aligned);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load(data, size);
    if (size < BK_FORMAT_HEADER_SIZE)
        return 0;
    uint8_t *fixed = malloc(size);
    if (fixed == NULL)
        return 0;
    memcpy(fixed, data, size);
    bk_store_le64(fixed + BK_FORMAT_OFFSET_CHECKSUM, bk_format_checksum(fixed, size));
    load(fixed, size);
    load_in_place(fixed, size);
    free(fixed);
    return 0;
}
