/*
 * tests/fuzz/fuzz_parquet.c -- libFuzzer target over the reader of a
 * Parquet-stored sbbf filter (BloomFilterHeader in Thrift's compact
 * protocol, then the bitset: bk_sbbf_from_parquet).
 *
 * Properties checked on every input:
 *   - no crash, no out-of-bounds access, no leak (ASan, UBSan, LSan), and
 *     nesting or counts in the header never make the reader run long;
 *   - a status among the documented ones, *consumed within the input;
 *   - an accepted input whose size Parquet writers use (a power of two)
 *     writes back as the canonical header and exactly the bitset read, and
 *     that reads back to the same filter; any other size is refused by the
 *     writer with BK_EUNSUPPORTED.
 *
 * Run: scripts/fuzz-smoke.sh (30 s), or build the `fuzz` preset and run
 * build/fuzz/tests/fuzz/fuzz_parquet CORPUS_DIR tests/fuzz/parquet.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_status(bk_status status)
{
    if (status != BK_OK && status != BK_ETRUNCATED && status != BK_ECORRUPT &&
        status != BK_EUNSUPPORTED && status != BK_ENOMEM)
        abort(); /* undocumented */
}

/* Writes `filter` back; it must be the canonical header and `bitset`. */
static void check_written_back(const bk_filter *filter, const uint8_t *bitset,
                               size_t bitset_size)
{
    size_t size = 0;
    bk_status status = bk_sbbf_to_parquet(filter, BK_PARQUET_WITH_HEADER, NULL, 0, &size);
    if ((bitset_size & (bitset_size - 1)) != 0) {
        if (status != BK_EUNSUPPORTED)
            abort(); /* a size Arrow refuses was exported */
        return;
    }
    if (status != BK_OK || size < bitset_size)
        abort();
    uint8_t *bytes = malloc(size);
    if (bytes == NULL)
        return;
    size_t written = 0;
    if (bk_sbbf_to_parquet(filter, BK_PARQUET_WITH_HEADER, bytes, size, &written) != BK_OK ||
        written != size || memcmp(bytes + size - bitset_size, bitset, bitset_size) != 0)
        abort();
    bk_filter *again = NULL;
    size_t consumed = 0;
    if (bk_sbbf_from_parquet(bytes, size, BK_PARQUET_WITH_HEADER, 1, &again, &consumed) !=
            BK_OK ||
        consumed != size)
        abort();
    bk_filter_free(again);
    free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1); /* exactly `size` bytes: ASan sees overreads */
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    bk_filter *filter = NULL;
    size_t consumed = 0;
    bk_status status = bk_sbbf_from_parquet(copy, size, BK_PARQUET_WITH_HEADER, 0, &filter,
                                            &consumed);
    check_status(status);
    if (status == BK_OK) {
        bk_stats stats;
        bk_filter_stats(filter, &stats);
        size_t bitset_size = (size_t)(stats.bits / 8);
        if (consumed > size || consumed < bitset_size || stats.kind != BK_KIND_SBBF)
            abort();
        (void)bk_filter_contains(filter, copy, size);
        check_written_back(filter, copy + consumed - bitset_size, bitset_size);
        bk_filter_free(filter);
    }
    free(copy);
    return 0;
}
