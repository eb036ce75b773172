/*
 * bloomkit/counting.h -- the counting Bloom filter (Fan, Cao, Almeida &
 * Broder 2000): a Bloom filter whose bits are 4-bit counters, so that a key
 * can be removed again.  Design, memory layout and measured figures:
 * src/counting.c; the whole story: docs/DELETION.md.
 *
 *     bk_params params = { .capacity = 100000, .fpr = 0.01 };
 *     bk_counting *filter;
 *     if (bk_counting_create(&params, &filter) != BK_OK) ...
 *     bk_counting_add(filter, "alice", 5, NULL);
 *     bk_counting_remove(filter, "alice", 5);          // alice was added: safe
 *     bk_counting_free(filter);
 *
 * READ THIS BEFORE CALLING REMOVE: remove is only safe for keys KNOWN to be
 * present (added more times than removed).  Removing a key that was never
 * added but happens to be a false positive cannot be detected -- all its
 * counters are non-zero -- and it decrements counters that belong to other
 * keys, which can make those keys report absent: false negatives, the one
 * thing a Bloom filter promises never to give.  examples/counting_delete.c
 * shows it happening.  If you cannot know that a key is present, keep the
 * authoritative set elsewhere and do not remove from the filter.
 *
 * Sizing: m counters and k probes exactly as the classic filter with the
 * same parameters (bloomkit/sizing.h), at 4 bits per counter: four times
 * the memory of the equivalent bk_bloom, same false-positive rate.
 *
 * Saturation: a counter that reaches 15 (BK_COUNTING_MAX) stays at 15 for
 * ever; remove never decrements it.  Once saturated the true number of keys
 * on that counter is unknown (15 or more), so decrementing could bring it to
 * zero while keys still use it -- a false negative.  A stuck counter only
 * costs a little false-positive rate.  At the design point (optimal k) a
 * counter reaches 15 with probability below (e ln2 / 15)^15 = 3.1e-14
 * (src/counting.c), so in practice saturation means that some key was added
 * many times.  bk_counting_saturated_counters
 * (and `bloomkit info`) report how many are stuck.
 *
 * keys_added (bk_counting_keys_added, bk_stats.keys_added) is the number of
 * successful adds minus successful removes: the size of the multiset held.
 *
 * Thread safety: const functions may run concurrently with each other;
 * anything that writes needs exclusive access (BK_FLAG_CONCURRENT is not
 * offered: BK_EUNSUPPORTED).
 */
#ifndef BLOOMKIT_COUNTING_H
#define BLOOMKIT_COUNTING_H

#include "bloomkit/bloom.h"
#include "bloomkit/common.h"
#include "bloomkit/hash.h"
#include "bloomkit/sizing.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

typedef struct bk_counting bk_counting;

/* Bits per counter, and the value at which a counter sticks. */
#define BK_COUNTING_COUNTER_BITS 4u
#define BK_COUNTING_MAX 15u

/* Creates an empty filter: m counters and k probes from bk_size_from_params
 * (the classic filter's design), hashed as `params` names.  Errors:
 * BK_EINVAL / BK_ERANGE from sizing (and BK_ERANGE when the counter array
 * would exceed BK_MAX_BITS bits), BK_EINVAL for unknown flags or algorithm,
 * BK_EUNSUPPORTED for BK_FLAG_CONCURRENT, BK_EKEY when SipHash has no key,
 * BK_ENOMEM.  On error *out is untouched and nothing is allocated. */
bk_status bk_counting_create(const bk_params *params, bk_counting **out);

/* Releases the filter; NULL is accepted. */
void bk_counting_free(bk_counting *filter);

/* A new, independent (writable) filter with the same parameters and counters. */
bk_status bk_counting_copy(const bk_counting *filter, bk_counting **out);

/* All counters to zero, keys_added 0.  BK_EIMMUTABLE if read-only. */
bk_status bk_counting_clear(bk_counting *filter);

/* The filter's hash of a key: what the *_hash functions take. */
bk_hash bk_counting_hash(const bk_counting *filter, const void *key, size_t len);

/* Adds one occurrence of a key: increments its k counters (a counter at 15
 * stays at 15).  *was_new (may be NULL) is whether the key was absent
 * before (some counter was 0).  Never fails for lack of room.
 * BK_EINVAL for NULL filter or key (with len > 0); BK_EIMMUTABLE if
 * read-only (mapped). */
bk_status bk_counting_add(bk_counting *filter, const void *key, size_t len, bool *was_new);
bk_status bk_counting_add_hash(bk_counting *filter, bk_hash hash, bool *was_new);

/* Removes one occurrence of a key ONLY SAFE FOR A KEY KNOWN TO BE PRESENT
 * (see the top of this header).  If any of its counters is zero the key is
 * certainly absent: nothing changes and BK_ENOTFOUND is returned.
 * Otherwise each counter is decremented, except saturated ones (15).
 * BK_EINVAL for NULL arguments; BK_EIMMUTABLE if read-only. */
bk_status bk_counting_remove(bk_counting *filter, const void *key, size_t len);
bk_status bk_counting_remove_hash(bk_counting *filter, bk_hash hash);

/* True if the key may be present (all k counters > 0); false if it is
 * certainly absent.  False for NULL arguments. */
bool bk_counting_contains(const bk_counting *filter, const void *key, size_t len);
bool bk_counting_contains_hash(const bk_counting *filter, bk_hash hash);

/* The minimum of the key's k counters: an upper bound on how many times it
 * was added (minus removed), exact unless other keys share all its
 * counters.  BK_COUNTING_MAX means "15 or more".  BK_EINVAL for NULL
 * arguments. */
bk_status bk_counting_count(const bk_counting *filter, const void *key, size_t len,
                            uint64_t *count);
bk_status bk_counting_count_hash(const bk_counting *filter, bk_hash hash, uint64_t *count);

/* Batch forms: a chunk of keys is hashed, the counters of every key in the
 * chunk are prefetched, then probed.  Same answers as the single forms.
 * `new_count` / the return value count new / present keys; `results` (may
 * be NULL) gets one answer per key.  Invalid arguments: BK_EINVAL / 0. */
bk_status bk_counting_add_batch(bk_counting *filter, const bk_key *keys, size_t count,
                                size_t *new_count);
bk_status bk_counting_add_hash_batch(bk_counting *filter, const bk_hash *hashes, size_t count,
                                     size_t *new_count);
size_t bk_counting_contains_batch(const bk_counting *filter, const bk_key *keys, size_t count,
                                  bool *results);
size_t bk_counting_contains_hash_batch(const bk_counting *filter, const bk_hash *hashes,
                                       size_t count, bool *results);

/* Parameters. */
uint64_t bk_counting_counters(const bk_counting *filter);   /* m (counters, not bits) */
unsigned bk_counting_hashes(const bk_counting *filter);     /* k */
uint64_t bk_counting_capacity(const bk_counting *filter);   /* design n */
double bk_counting_target_fpr(const bk_counting *filter);   /* predicted FPR at capacity */
uint64_t bk_counting_keys_added(const bk_counting *filter); /* adds minus removes */
const bk_hasher *bk_counting_hasher(const bk_counting *filter);

/* The value of counter `index` (< m), 0..15; 0 for an index out of range. */
unsigned bk_counting_counter(const bk_counting *filter, uint64_t index);

/* Fill and what follows from it.  The non-zero counters play the part of the
 * classic filter's set bits, so the classic formulas apply unchanged. */
uint64_t bk_counting_nonzero_counters(const bk_counting *filter);
uint64_t bk_counting_saturated_counters(const bk_counting *filter); /* counters at 15 */
double bk_counting_fill_ratio(const bk_counting *filter);    /* nonzero / m */
double bk_counting_estimate_keys(const bk_counting *filter); /* -(m/k) ln(1 - nonzero/m) */
double bk_counting_current_fpr(const bk_counting *filter);   /* fill^k */

/* Everything `bloomkit info` shows.  bits and bytes are the memory the
 * counters take (4 bits each: bits = 4m), bits_per_key = 4m/n, so the price
 * of deletion shows; hashes = k; saturated_counters is filled in. */
void bk_counting_stats(const bk_counting *filter, bk_stats *out);

/* dst += src, counter by counter, saturating at 15: the counting filter of
 * the multiset union.  Both must have the same m, k, hash algorithm and
 * seed, else BK_EINCOMPATIBLE and nothing changes.  keys_added becomes the
 * sum.  BK_EIMMUTABLE if dst is read-only. */
bk_status bk_counting_union(bk_counting *dst, const bk_counting *src);

/* BK_OK if a and b can be combined, else BK_EINCOMPATIBLE (BK_EINVAL for NULL). */
bk_status bk_counting_compatible(const bk_counting *a, const bk_counting *b);

/* A new classic Bloom filter with the same m, k, hasher and capacity whose
 * bit i is set exactly when counter i is non-zero: it answers contains
 * identically, in a quarter of the memory, but cannot remove.  Its
 * keys_added is this filter's.  The caller frees it with bk_bloom_free. */
bk_status bk_counting_to_bloom(const bk_counting *filter, bk_bloom **out);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_COUNTING_H */
