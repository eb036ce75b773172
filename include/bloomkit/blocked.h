/*
 * bloomkit/blocked.h -- the cache-line blocked Bloom filter.
 *
 * A Bloom filter cut into 512-bit blocks, one 64-byte cache line each: a key
 * picks one block and sets its k bits there, so a query costs one cache
 * miss however large the filter is (a classic Bloom filter pays up to k).
 * The price is a slightly higher FPR for the same memory: 0.96% instead of
 * 0.82% at 10 bits per key, so 1% takes 9.92 bits per key instead of 9.59;
 * sizing from a target FPR accounts for it.
 * Design, memory layout, formulas and measured figures: src/blocked.c and
 * docs/BLOCKED.md.
 *
 *     bk_params params = { .capacity = 10000000, .fpr = 0.01 };
 *     bk_blocked *filter;
 *     if (bk_blocked_create(&params, &filter) != BK_OK) ...
 *     bk_blocked_add(filter, "alice", 5, NULL);
 *     if (bk_blocked_contains(filter, "alice", 5)) ...   // always true
 *     bk_blocked_free(filter);
 *
 * Sizing (bk_params): .bits + .hashes: exactly that k, and .bits rounded up
 * to whole 512-bit blocks; .bits_per_key: that budget, k chosen by the
 * blocked FPR formula (bloomkit/sizing.h); otherwise .fpr (default 0.01):
 * the smallest bits per key reaching it.  Any hash algorithm; flags:
 * BK_FLAG_CONCURRENT.
 *
 * Thread safety: const functions may run concurrently with each other.  A
 * filter created with BK_FLAG_CONCURRENT also allows bk_blocked_add* from
 * many threads at once (atomic OR per word), concurrently with
 * bk_blocked_contains*; a contains that starts after an add has returned
 * always finds that key.
 */
#ifndef BLOOMKIT_BLOCKED_H
#define BLOOMKIT_BLOCKED_H

#include "bloomkit/common.h"
#include "bloomkit/hash.h"
#include "bloomkit/sizing.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

typedef struct bk_blocked bk_blocked;

/* Creates an empty filter sized by `params` (see above).  Errors:
 * BK_EINVAL for NULL arguments, zero capacity, an fpr outside (0,1), only
 * one of .bits/.hashes, unknown flags or hash algorithm; BK_EKEY when
 * SipHash has no key; BK_ERANGE when the size exceeds BK_MAX_BITS or k
 * exceeds BK_MAX_HASHES; BK_ENOMEM.  On error *out is untouched. */
bk_status bk_blocked_create(const bk_params *params, bk_blocked **out);

/* Releases the filter; NULL is accepted. */
void bk_blocked_free(bk_blocked *filter);

/* A new, independent filter with the same parameters and contents. */
bk_status bk_blocked_copy(const bk_blocked *filter, bk_blocked **out);

/* Empties the filter.  BK_EIMMUTABLE if read-only (mapped). */
bk_status bk_blocked_clear(bk_blocked *filter);

/* The filter's hash of a key: what the *_hash functions take. */
bk_hash bk_blocked_hash(const bk_blocked *filter, const void *key, size_t len);

/* Adds a key.  *was_new (if not NULL): whether any bit flipped from 0 to 1.
 * BK_EINVAL for a NULL filter or key with len > 0; BK_EIMMUTABLE if
 * read-only. */
bk_status bk_blocked_add(bk_blocked *filter, const void *key, size_t len, bool *was_new);
bk_status bk_blocked_add_hash(bk_blocked *filter, bk_hash hash, bool *was_new);

/* True if the key may be present; false if it was certainly never added
 * (also false for a NULL filter). */
bool bk_blocked_contains(const bk_blocked *filter, const void *key, size_t len);
bool bk_blocked_contains_hash(const bk_blocked *filter, bk_hash hash);

/* Batch forms: keys are hashed a short distance ahead of the probes and
 * their blocks prefetched, so the memory reads of many keys overlap.
 * *new_count (may be NULL): keys that flipped a bit.  `results` (may be
 * NULL): one answer per key; the return value counts the positives.
 * Answers are identical to the single-key forms.  A NULL filter, or a key
 * with NULL data and len > 0, gives BK_EINVAL (adds: nothing is added) or
 * 0 positives with no results written (queries). */
bk_status bk_blocked_add_batch(bk_blocked *filter, const bk_key *keys, size_t count,
                               size_t *new_count);
bk_status bk_blocked_add_hash_batch(bk_blocked *filter, const bk_hash *hashes, size_t count,
                                    size_t *new_count);
size_t bk_blocked_contains_batch(const bk_blocked *filter, const bk_key *keys, size_t count,
                                 bool *results);
size_t bk_blocked_contains_hash_batch(const bk_blocked *filter, const bk_hash *hashes,
                                      size_t count, bool *results);

/* Parameters. */
uint64_t bk_blocked_bits(const bk_blocked *filter);        /* m = 512 x blocks */
uint64_t bk_blocked_block_count(const bk_blocked *filter);
unsigned bk_blocked_hashes(const bk_blocked *filter);      /* k */
uint64_t bk_blocked_capacity(const bk_blocked *filter);
double bk_blocked_target_fpr(const bk_blocked *filter);    /* predicted FPR at capacity */
uint64_t bk_blocked_keys_added(const bk_blocked *filter);
const bk_hasher *bk_blocked_hasher(const bk_blocked *filter);

/* Fill and what follows from it.  The key count from the fill inverts the
 * blocked filter's expected fill (bk_blocked_estimate_keys): right on
 * average, approximate for one filter (see docs/BLOCKED.md). */
uint64_t bk_blocked_bits_set(const bk_blocked *filter);
double bk_blocked_fill_ratio(const bk_blocked *filter);
double bk_blocked_estimate_keys_now(const bk_blocked *filter);

/* Everything `bloomkit info` shows. */
void bk_blocked_stats(const bk_blocked *filter, bk_stats *out);

/* Set algebra: both filters must have the same block count, k, hash
 * algorithm and seed, else BK_EINCOMPATIBLE and nothing changes.  Union is
 * exactly the filter of the union; intersection contains every key of both
 * sets (FPR somewhat above a filter of the intersection).  keys_added
 * becomes the sum / the minimum.  BK_EIMMUTABLE if dst is read-only. */
bk_status bk_blocked_compatible(const bk_blocked *a, const bk_blocked *b);
bk_status bk_blocked_union(bk_blocked *dst, const bk_blocked *src);
bk_status bk_blocked_intersect(bk_blocked *dst, const bk_blocked *src);

/* |A|, |B|, |A u B|, |A n B| and Jaccard estimated from the fills. */
bk_status bk_blocked_estimate_sets(const bk_blocked *a, const bk_blocked *b,
                                   bk_set_estimate *out);

/* The raw blocks: block_count x 8 words, block b at words[8b .. 8b+7],
 * bit j of a block at word j / 64, bit j % 64. */
const uint64_t *bk_blocked_words(const bk_blocked *filter);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_BLOCKED_H */
