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
 * A static filter is a bk_filter (bloomkit/filter.h) built with
 * bk_filter_build; every query, statistic and file operation is the
 * handle's, and bk_filter_add / _remove / _clear answer BK_EIMMUTABLE:
 *
 *     bk_params params = { .seed = 0 };            // only the hash is read
 *     bk_filter *filter;
 *     if (bk_filter_build(BK_KIND_FUSE8, &params, keys, count, &filter) != BK_OK) ...
 *     if (bk_filter_contains(filter, "alice", 5)) ...   // true for every built key
 *     bk_filter_free(filter);
 *
 * Duplicate keys in the input are allowed (they are stored once).  The
 * filter's design FPR is fixed by the kind (2^-fingerprint_bits); the
 * sizing fields of bk_params (.capacity, .fpr, .bits_per_key, ...) are
 * ignored.  Only the hash fields (.hash_algorithm, .seed, .secret_key) and
 * .flags are read (bk_kind_design reads .capacity as the number of
 * distinct keys).  bk_filter_build's errors for these kinds, besides the
 * handle's own: BK_ERANGE for more than BK_FUSE_MAX_KEYS keys; BK_EFULL if
 * BK_FUSE_MAX_ATTEMPTS attempts all failed to peel (does not happen for
 * distinct hashes from a good hash function: each attempt succeeds with
 * probability > 1/2).
 *
 * bk_stats of a built filter: bits = slots * fingerprint_bits, hashes =
 * the number of memory accesses (3 or 4), capacity = keys_added = distinct
 * keys stored, target_fpr = current_fpr = 2^-fingerprint_bits,
 * bits_per_key = bits / keys (0 for an empty filter), load_factor = keys /
 * slots.  The ratio of bits per key to the lower bound is
 * bits_per_key / log2(1 / target_fpr).
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

/* Peeling fails now and then (more often for tiny sets); each failure
 * retries with a new seed, at most this many attempts in all. */
#define BK_FUSE_MAX_ATTEMPTS 100u

/* Largest key set a static filter accepts (slot indexes are 32-bit). */
#define BK_FUSE_MAX_KEYS ((uint64_t)1 << 31)

/* Peak scratch memory, in bytes, that building a filter of `kind` from
 * `keys` hashes allocates besides the filter itself and the caller's hash
 * array (about 21 bytes per key for fuse at 10^6 keys, 24 for xor8).  One
 * part, the peel's stack of slots waiting to be peeled, starts at a size
 * that covers what random sets of more than about 10^6 keys need and
 * doubles when a peel goes deeper (below 10^6 keys, by tens of KiB at most).
 * BK_EKIND for a kind other than the four static ones; BK_EINVAL for bytes
 * NULL; BK_ERANGE for keys > BK_FUSE_MAX_KEYS. */
bk_status bk_fuse_build_scratch_bytes(bk_kind kind, uint64_t keys, uint64_t *bytes);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_FUSE_H */
