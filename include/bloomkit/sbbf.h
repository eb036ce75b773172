/*
 * bloomkit/sbbf.h -- the split-block Bloom filter of Apache Parquet.
 *
 * Bit for bit the filter of the Parquet specification (parquet-format,
 * BloomFilter.md): 256-bit blocks of eight 32-bit words, a key sets one bit
 * in each word of one block, the block chosen by the upper 32 bits of the
 * key's XXH64 hash (seed 0) and the bits by the lower 32 bits times eight
 * fixed odd "salt" constants.  A filter built here can be handed to any
 * Parquet reader (bk_sbbf_export_parquet), and the bitset of a Parquet
 * column chunk can be loaded and queried here (bk_sbbf_import_parquet).
 * Design, formulas and measured figures: src/sbbf.c and docs/BLOCKED.md.
 *
 *     bk_params params = { .capacity = 1000000, .fpr = 0.01 };
 *     bk_sbbf *filter;
 *     if (bk_sbbf_create(&params, &filter) != BK_OK) ...
 *     bk_sbbf_add(filter, "alice", 5, NULL);
 *     bk_sbbf_contains(filter, "alice", 5);   // true
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
 * and a design beyond 128 MiB is BK_ERANGE.  The exports below refuse a
 * filter some reader would refuse.
 *
 * Hash: .hash_algorithm BK_HASH_XXH64 or the default (0) both mean XXH64
 * with .seed (0 for Parquet); BK_HASH_SIPHASH (keyed, first 64 output bits)
 * is allowed for adversarial keys but is not readable by Parquet.
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

typedef struct bk_sbbf bk_sbbf;

#define BK_SBBF_BLOCK_BYTES 32u
#define BK_SBBF_MAX_BLOCKS ((uint64_t)1 << 32)
#define BK_SBBF_PARQUET_MAX_BYTES ((size_t)128 << 20) /* the largest Parquet bitset */

/* Creates an empty filter (see above for sizing and hashing).  Errors:
 * BK_EINVAL for NULL arguments, zero capacity, an fpr outside (0,1),
 * bits_per_key below 1, .hashes other than 0 or 8, unknown flags or hash
 * algorithm; BK_EKEY for SipHash without a key; BK_ERANGE for more than
 * 2^32 blocks; BK_ENOMEM.  On error *out is untouched. */
bk_status bk_sbbf_create(const bk_params *params, bk_sbbf **out);

void bk_sbbf_free(bk_sbbf *filter);
bk_status bk_sbbf_copy(const bk_sbbf *filter, bk_sbbf **out);
bk_status bk_sbbf_clear(bk_sbbf *filter); /* BK_EIMMUTABLE if read-only */

/* The filter's hash of a key; h1 is the 64-bit hash Parquet specifies (the
 * only word the filter uses). */
bk_hash bk_sbbf_hash(const bk_sbbf *filter, const void *key, size_t len);

/* Adds a key; *was_new (may be NULL): whether a bit flipped.  BK_EINVAL
 * for NULL filter or NULL key with len > 0; BK_EIMMUTABLE if read-only. */
bk_status bk_sbbf_add(bk_sbbf *filter, const void *key, size_t len, bool *was_new);
bk_status bk_sbbf_add_hash(bk_sbbf *filter, bk_hash hash, bool *was_new);
/* Takes the 64-bit value hash directly (as a Parquet writer computes it). */
bk_status bk_sbbf_add_hash64(bk_sbbf *filter, uint64_t hash, bool *was_new);

/* False if the key was certainly never added (and for a NULL filter). */
bool bk_sbbf_contains(const bk_sbbf *filter, const void *key, size_t len);
bool bk_sbbf_contains_hash(const bk_sbbf *filter, bk_hash hash);
bool bk_sbbf_contains_hash64(const bk_sbbf *filter, uint64_t hash);

/* Batch forms, with prefetch; same answers as the single forms.  Invalid
 * arguments as bloomkit/blocked.h: BK_EINVAL (nothing added) or 0. */
bk_status bk_sbbf_add_batch(bk_sbbf *filter, const bk_key *keys, size_t count,
                            size_t *new_count);
bk_status bk_sbbf_add_hash_batch(bk_sbbf *filter, const bk_hash *hashes, size_t count,
                                 size_t *new_count);
size_t bk_sbbf_contains_batch(const bk_sbbf *filter, const bk_key *keys, size_t count,
                              bool *results);
size_t bk_sbbf_contains_hash_batch(const bk_sbbf *filter, const bk_hash *hashes, size_t count,
                                   bool *results);

/* Parameters. */
uint64_t bk_sbbf_bits(const bk_sbbf *filter);         /* 256 x blocks */
uint64_t bk_sbbf_block_count(const bk_sbbf *filter);
uint64_t bk_sbbf_capacity(const bk_sbbf *filter);
double bk_sbbf_target_fpr(const bk_sbbf *filter);
uint64_t bk_sbbf_keys_added(const bk_sbbf *filter);
const bk_hasher *bk_sbbf_hasher(const bk_sbbf *filter);

/* Fill; the key count from it inverts 1 - e^{-lambda/32} (approximate). */
uint64_t bk_sbbf_bits_set(const bk_sbbf *filter);
double bk_sbbf_fill_ratio(const bk_sbbf *filter);
double bk_sbbf_estimate_keys_now(const bk_sbbf *filter);
void bk_sbbf_stats(const bk_sbbf *filter, bk_stats *out);

/* Set algebra: same block count, hash algorithm and seed, else
 * BK_EINCOMPATIBLE (nothing changes). */
bk_status bk_sbbf_compatible(const bk_sbbf *a, const bk_sbbf *b);
bk_status bk_sbbf_union(bk_sbbf *dst, const bk_sbbf *src);
bk_status bk_sbbf_intersect(bk_sbbf *dst, const bk_sbbf *src);
bk_status bk_sbbf_estimate_sets(const bk_sbbf *a, const bk_sbbf *b, bk_set_estimate *out);

/* The words: block_count x 8 32-bit words, in host order. */
const uint32_t *bk_sbbf_words(const bk_sbbf *filter);

/* ---- Parquet interchange ------------------------------------------------ */

/* Bytes of the Parquet bitset: 32 x block count. */
size_t bk_sbbf_parquet_size(const bk_sbbf *filter);

/* Writes the bitset as Parquet stores it (each word little-endian, blocks
 * in order): the bytes that follow the BloomFilterHeader in a Parquet
 * file.  BK_EUNSUPPORTED (nothing written) for a filter some Parquet reader
 * refuses: a hash other than XXH64 with seed 0, or a size that is not a
 * power of two bytes up to 128 MiB (create it with BK_FLAG_PARQUET_SIZE).
 * BK_ERANGE if `size` is too small (nothing written); *written (may be
 * NULL) receives the byte count. */
bk_status bk_sbbf_export_parquet(const bk_sbbf *filter, void *buffer, size_t size,
                                 size_t *written);

/* A filter holding a copy of a Parquet bitset (`size` bytes: a non-zero
 * multiple of 32, else BK_EINVAL; more than 2^32 blocks: BK_ERANGE), hashed
 * with XXH64 seed 0 as Parquet does.  `capacity` is the design number of
 * keys for statistics; 0 means "estimate it from the fill" (at least 1). */
bk_status bk_sbbf_import_parquet(const void *bitset, size_t size, uint64_t capacity,
                                 bk_sbbf **out);

/* ---- Parquet interchange through the generic handle --------------------- */

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
 * refuses (as bk_sbbf_export_parquet); BK_ERANGE if `size` is too small.
 */
bk_status bk_sbbf_to_parquet(const bk_filter *filter, bk_parquet_form form, void *buffer,
                             size_t size, size_t *written);

/*
 * An sbbf filter (XXH64 seed 0) from Parquet bytes in `form`: the bitset
 * alone is all of `size` bytes (a multiple of 32 from 32 B to 128 MiB, else
 * BK_EINVAL); with the header, `size` may run past the filter (the rest of
 * a file read from bloom_filter_offset) and *consumed (may be NULL) gets
 * the bytes header and bitset take.  `capacity` as bk_sbbf_import_parquet.
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
