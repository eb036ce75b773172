/*
 * bloomkit/sbbf.h -- the split-block Bloom filter of Apache Parquet.
 *
 * Bit for bit the filter of the Parquet specification (parquet-format,
 * BloomFilter.md): 256-bit blocks of eight 32-bit words, a key sets one bit
 * in each word of one block, the block chosen by the upper 32 bits of the
 * key's XXH64 hash (seed 0) and the bits by the lower 32 bits times eight
 * fixed odd "salt" constants.  A filter built here can be handed to any
 * Parquet reader (bk_sbbf_to_parquet), and the bitset of a Parquet column
 * chunk can be loaded and queried here (bk_sbbf_from_parquet).  Every other
 * operation is the generic handle's (bloomkit/filter.h); one-key queries
 * compiled into the caller's loop: bloomkit/sbbf_inline.h.  Design,
 * formulas and measured figures: src/sbbf.c and docs/BLOCKED.md.
 *
 *     bk_params params = { .capacity = 1000000, .fpr = 0.01 };
 *     bk_filter *filter;
 *     if (bk_filter_create(BK_KIND_SBBF, &params, &filter) != BK_OK) ...
 *     bk_filter_add(filter, "alice", 5, NULL);
 *     bk_filter_contains(filter, "alice", 5);   // true
 *
 * Keys are the bytes Parquet hashes: a value's plain encoding (an INT64 is
 * its 8 little-endian bytes, a BYTE_ARRAY its bytes without the length).
 *
 * Sizing (bk_params): k is always 8 (.hashes may be 0 or 8, anything else
 * is BK_EINVAL).  .bits: rounded up to whole 256-bit blocks;
 * .bits_per_key: that budget; otherwise .fpr (default 0.01): the smallest
 * size reaching it by the split-block formula (bloomkit/sizing.h), e.g.
 * 10.53 bits per key at 1% (the spec's own rule of thumb, derived from the
 * classic formula, gives 9.68 and is optimistic).  The block count may be
 * any number from 1 to 2^32.
 *
 * Parquet sizing: Parquet readers accept a bitset of a power of two bytes
 * from 32 B to 128 MiB (Arrow C++ -- and so pyarrow -- and Velox refuse
 * any other size), which is what Parquet writers (parquet-mr, Arrow) make.
 * A filter meant for a Parquet file is created with .flags |=
 * BK_FLAG_PARQUET_SIZE: the block count of the sizing above is rounded up
 * to a power of two (so the FPR is at most the one asked for, often lower),
 * and a design beyond 128 MiB is BK_ERANGE.  bk_sbbf_to_parquet refuses a
 * filter some reader would refuse.
 *
 * Hash: .hash_algorithm BK_HASH_XXH64 or the default (0) both mean XXH64
 * with .seed (0 for Parquet); BK_HASH_SIPHASH (keyed, first 64 output bits)
 * is allowed for adversarial keys, and BK_HASH_MIX64 for integer keys, but
 * neither is readable by Parquet.
 *
 * Thread safety: as bloomkit/blocked.h (BK_FLAG_CONCURRENT: atomic OR per
 * word on add).
 */
#ifndef BLOOMKIT_SBBF_H
#define BLOOMKIT_SBBF_H

#include "bloomkit/common.h"
#include "bloomkit/filter.h"
#include "bloomkit/hash.h"
#include "bloomkit/sizing.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

#define BK_SBBF_BLOCK_BYTES 32u
#define BK_SBBF_MAX_BLOCKS ((uint64_t)1 << 32)
#define BK_SBBF_PARQUET_MAX_BYTES ((size_t)128 << 20) /* the largest Parquet bitset */

/* ---- Parquet interchange ------------------------------------------------ */

/* The two forms of a filter in Parquet. */
typedef enum bk_parquet_form {
    BK_PARQUET_BITSET = 0,     /* the bitset alone */
    BK_PARQUET_WITH_HEADER = 1 /* the bytes at a column chunk's bloom_filter_offset:
                                * the BloomFilterHeader (Thrift compact protocol:
                                * numBytes, algorithm BLOCK, hash XXHASH,
                                * compression UNCOMPRESSED) then the bitset */
} bk_parquet_form;

/*
 * Writes an sbbf filter in `form` into buffer; *written gets the byte count
 * (header 15 to 19 bytes, plus the bitset).  With buffer NULL nothing is
 * written and *written gets the size needed.  Errors (nothing written):
 * BK_EINVAL for NULL filter or written, or an unknown form; BK_EKIND for a
 * filter of another kind; BK_EUNSUPPORTED for a filter some Parquet reader
 * refuses: a hash other than XXH64 with seed 0, or a size that is not a
 * power of two bytes up to 128 MiB (create it with BK_FLAG_PARQUET_SIZE);
 * BK_ERANGE if `size` is too small.  The bitset is each 32-bit word
 * little-endian, blocks in order: the bytes that follow the
 * BloomFilterHeader in a Parquet file.
 */
bk_status bk_sbbf_to_parquet(const bk_filter *filter, bk_parquet_form form, void *buffer,
                             size_t size, size_t *written);

/*
 * An sbbf filter (XXH64 seed 0) from Parquet bytes in `form`: the bitset
 * alone is all of `size` bytes (a multiple of 32 from 32 B to 128 MiB, else
 * BK_EINVAL); with the header, `size` may run past the filter (the rest of
 * a file read from bloom_filter_offset) and *consumed (may be NULL) gets
 * the bytes header and bitset take.  `capacity` is the design number of
 * keys for statistics; 0 means "estimate it from the fill" (at least 1).
 * The header is read as untrusted input: BK_ETRUNCATED when the bytes end
 * before the header or the bitset it declares; BK_ECORRUPT for a malformed
 * header (a bad varint or type, a missing or repeated field, nesting deeper
 * than 8, numBytes not a multiple of 32 from 32 B to 128 MiB);
 * BK_EUNSUPPORTED for an algorithm, hash or compression other than BLOCK,
 * XXHASH and UNCOMPRESSED.  Fields a later format may add are skipped.
 * On error *out is untouched.
 */
bk_status bk_sbbf_from_parquet(const void *bytes, size_t size, bk_parquet_form form,
                               uint64_t capacity, bk_filter **out, size_t *consumed);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_SBBF_H */
