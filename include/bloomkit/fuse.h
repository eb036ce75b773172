/*
 * bloomkit/fuse.h -- static filters: xor filters and binary fuse filters.
 *
 * A static filter is built once from a complete key set and then only
 * queried: there is no add, no remove and no union.  In exchange it is far
 * smaller than any Bloom filter of the same false-positive rate and answers
 * every query with exactly three (or four) memory accesses:
 *
 *     kind              bits/key (large n)   FPR      accesses
 *     BK_KIND_XOR8      ~9.84  (1.23 x 8)    2^-8     3
 *     BK_KIND_FUSE8     ~9.0   (1.125 x 8)   2^-8     3
 *     BK_KIND_FUSE16    ~18.0  (1.125 x 16)  2^-16    3
 *     BK_KIND_FUSE8_4   ~8.6   (1.075 x 8)   2^-8     4
 *
 * The lower bound is log2(1/p) = 8 or 16 bits per key (Carter et al. 1978).
 * Design, memory layout, formulas and measured figures: src/fuse.c;
 * user's guide and file layout: docs/STATIC.md.  One-key queries compiled
 * into the caller's loop: bloomkit/fuse_inline.h.
 *
 *     bk_params params = { .seed = 0 };            // only the hash is read
 *     bk_fuse *filter;
 *     if (bk_fuse_build(BK_KIND_FUSE8, &params, keys, count, &filter) != BK_OK) ...
 *     if (bk_fuse_contains(filter, "alice", 5)) ...   // true for every built key
 *     bk_fuse_free(filter);
 *
 * Duplicate keys in the input are allowed (they are stored once).  The
 * filter's design FPR is fixed by the kind (2^-fingerprint_bits); the
 * sizing fields of bk_params (.capacity, .fpr, .bits_per_key, ...) are
 * ignored.  Only the hash fields (.hash_algorithm, .seed, .secret_key) and
 * .flags are read.
 *
 * Thread safety: a built filter is immutable; any number of threads may
 * query it at once.
 */
#ifndef BLOOMKIT_FUSE_H
#define BLOOMKIT_FUSE_H

#include "bloomkit/common.h"
#include "bloomkit/hash.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

typedef struct bk_fuse bk_fuse;

/* Peeling fails now and then (more often for tiny sets); each failure
 * retries with a new seed, at most this many attempts in all. */
#define BK_FUSE_MAX_ATTEMPTS 100u

/* Largest key set a static filter accepts (slot indexes are 32-bit). */
#define BK_FUSE_MAX_KEYS ((uint64_t)1 << 31)

/* True for the four static kinds (xor8, fuse8, fuse16, fuse8_4). */
bool bk_fuse_kind_valid(bk_kind kind);

/*
 * Builds a filter of `kind` holding the `count` keys (duplicates allowed;
 * count 0 gives a filter that holds nothing).  Keys are hashed with the hash
 * that `params` names.
 * Errors: BK_EKIND if kind is not a static kind; BK_EINVAL for NULL params
 * or out, keys NULL with count > 0, a key with data NULL and len > 0, or
 * unknown flags; BK_EKEY / BK_EINVAL from the hash parameters; BK_ERANGE if
 * count > BK_FUSE_MAX_KEYS; BK_ENOMEM; BK_EFULL if BK_FUSE_MAX_ATTEMPTS
 * attempts all failed to peel (does not happen for distinct hashes from a
 * good hash function: each attempt succeeds with probability > 1/2).
 * On error *out is untouched and nothing is leaked.
 */
bk_status bk_fuse_build(bk_kind kind, const bk_params *params, const bk_key *keys, size_t count,
                        bk_fuse **out);

/* As bk_fuse_build, from precomputed 128-bit hashes (equal hashes count as
 * one key).  `hasher` (copied) is recorded as the filter's hash, the one
 * bk_fuse_contains applies to keys.  Errors as bk_fuse_build; hasher NULL is
 * BK_EINVAL. */
bk_status bk_fuse_build_hashes(bk_kind kind, const bk_hasher *hasher, unsigned flags,
                               const bk_hash *hashes, size_t count, bk_fuse **out);

/* Releases the filter; NULL is accepted. */
void bk_fuse_free(bk_fuse *filter);

/* A new, independent filter with the same contents. */
bk_status bk_fuse_copy(const bk_fuse *filter, bk_fuse **out);

/* The filter's hash of a key: what the *_hash functions take. */
bk_hash bk_fuse_hash(const bk_fuse *filter, const void *key, size_t len);

/* True for every key the filter was built from; for any other key true with
 * probability 2^-fingerprint_bits.  False for a NULL filter or key NULL with
 * len > 0.  No branches: three (four) loads. */
bool bk_fuse_contains(const bk_fuse *filter, const void *key, size_t len);
bool bk_fuse_contains_hash(const bk_fuse *filter, bk_hash hash);

/* Batch queries: results[i] (if results is not NULL) for each key; returns
 * the number found.  The fingerprint slots of a chunk of keys are
 * prefetched before any is read, so cache misses overlap.  0 for a NULL
 * filter, NULL keys/hashes with count > 0 (or any key data NULL with
 * len > 0). */
size_t bk_fuse_contains_hash_batch(const bk_fuse *filter, const bk_hash *hashes, size_t count,
                                   bool *results);
size_t bk_fuse_contains_batch(const bk_fuse *filter, const bk_key *keys, size_t count,
                              bool *results);

bk_kind bk_fuse_kind(const bk_fuse *filter);
const bk_hasher *bk_fuse_hasher(const bk_fuse *filter);
/* Distinct hashes stored (duplicates removed). */
uint64_t bk_fuse_keys(const bk_fuse *filter);
/* Number of peeling attempts the build took (1 when the first succeeded). */
unsigned bk_fuse_build_attempts(const bk_fuse *filter);
/* The seed of the attempt that succeeded (derived from the hash seed). */
uint64_t bk_fuse_seed(const bk_fuse *filter);
/* 8 or 16. */
unsigned bk_fuse_fingerprint_bits(const bk_fuse *filter);
/* Fingerprint slots, and bytes of fingerprint memory. */
uint64_t bk_fuse_slots(const bk_fuse *filter);
uint64_t bk_fuse_bytes(const bk_fuse *filter);

/* Statistics for `info`: bits = slots * fingerprint_bits, hashes = the
 * number of memory accesses (3 or 4), capacity = keys_added = distinct keys
 * stored, target_fpr = current_fpr = 2^-fingerprint_bits, bits_per_key =
 * bits / keys (0 for an empty filter), load_factor = keys / slots.  The
 * ratio of bits per key to the lower bound is
 * bits_per_key / log2(1 / target_fpr). */
void bk_fuse_stats(const bk_fuse *filter, bk_stats *out);

/* The size a filter of `kind` for `keys` distinct keys will have, without
 * building it (fills kind, bits, hashes, bytes, capacity, target_fpr,
 * bits_per_key, fingerprint_bits).  BK_EKIND / BK_EINVAL (out NULL) /
 * BK_ERANGE (keys > BK_FUSE_MAX_KEYS). */
bk_status bk_fuse_design(bk_kind kind, uint64_t keys, bk_stats *out);

/* Peak scratch memory, in bytes, that building a filter of `kind` from
 * `keys` hashes allocates besides the filter itself and the caller's hash
 * array (about 21 bytes per key for fuse at 10^6 keys, 24 for xor8).  One
 * part, the peel's stack of slots waiting to be peeled, starts at a size
 * that covers what random sets of more than about 10^6 keys need and
 * doubles when a peel goes deeper (below 10^6 keys, by tens of KiB at most).
 * Errors as bk_fuse_design. */
bk_status bk_fuse_build_scratch_bytes(bk_kind kind, uint64_t keys, uint64_t *bytes);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_FUSE_H */
