/*
 * bloomkit/bloom.h -- the classic Bloom filter (Bloom 1970).
 *
 * m bits, k probes per key, no false negatives, a false-positive rate set by
 * m/n and k (bloomkit/sizing.h).  Keys cannot be removed.  See src/bloom.c
 * for the design, the memory layout and measured figures.
 *
 *     bk_params params = { .capacity = 1000000, .fpr = 0.01 };
 *     bk_bloom *filter;
 *     if (bk_bloom_create(&params, &filter) != BK_OK) ...
 *     bk_bloom_add(filter, "alice", 5, NULL);
 *     if (bk_bloom_contains(filter, "alice", 5)) ...   // always true
 *     bk_bloom_free(filter);
 *
 * Thread safety: const functions may run concurrently with each other.  A
 * filter created with BK_FLAG_CONCURRENT also allows bk_bloom_add* from many
 * threads at once, concurrently with bk_bloom_contains*; a contains that
 * starts after an add has returned always finds that key.
 */
#ifndef BLOOMKIT_BLOOM_H
#define BLOOMKIT_BLOOM_H

#include "bloomkit/common.h"
#include "bloomkit/hash.h"
#include "bloomkit/sizing.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

typedef struct bk_bloom bk_bloom;

/* Creates an empty filter sized by `params` (bk_size_from_params) with the
 * hash it names.  Errors: BK_EINVAL / BK_ERANGE from sizing, BK_EINVAL for
 * unknown flags or algorithm, BK_EKEY when SipHash has no key, BK_ENOMEM.
 * On error *out is untouched and nothing is allocated. */
bk_status bk_bloom_create(const bk_params *params, bk_bloom **out);

/* Releases the filter; NULL is accepted. */
void bk_bloom_free(bk_bloom *filter);

/* A new, independent filter with the same parameters and contents. */
bk_status bk_bloom_copy(const bk_bloom *filter, bk_bloom **out);

/* Empties the filter (all bits zero, keys_added 0). BK_EIMMUTABLE if read-only. */
bk_status bk_bloom_clear(bk_bloom *filter);

/* The filter's hash of a key: what the *_hash functions take. */
bk_hash bk_bloom_hash(const bk_bloom *filter, const void *key, size_t len);

/* Adds a key.  *was_new (if not NULL) is set to whether any bit flipped from
 * 0 to 1: false means the key was, or looked, present already -- exactly the
 * test for "admit on the second request".  BK_EIMMUTABLE if read-only. */
bk_status bk_bloom_add(bk_bloom *filter, const void *key, size_t len, bool *was_new);
bk_status bk_bloom_add_hash(bk_bloom *filter, bk_hash hash, bool *was_new);

/* True if the key may be present; false if it was certainly never added. */
bool bk_bloom_contains(const bk_bloom *filter, const void *key, size_t len);
bool bk_bloom_contains_hash(const bk_bloom *filter, bk_hash hash);

/* Batch forms: the keys are hashed first, then probed with their memory
 * prefetched ahead.  `new_count` / `present_count` (may be NULL) receive the
 * number of new / present keys; `results` (may be NULL) one answer per key. */
bk_status bk_bloom_add_batch(bk_bloom *filter, const bk_key *keys, size_t count,
                             size_t *new_count);
bk_status bk_bloom_add_hash_batch(bk_bloom *filter, const bk_hash *hashes, size_t count,
                                  size_t *new_count);
size_t bk_bloom_contains_batch(const bk_bloom *filter, const bk_key *keys, size_t count,
                               bool *results);
size_t bk_bloom_contains_hash_batch(const bk_bloom *filter, const bk_hash *hashes,
                                    size_t count, bool *results);

/* Parameters. */
uint64_t bk_bloom_bits(const bk_bloom *filter);       /* m */
unsigned bk_bloom_hashes(const bk_bloom *filter);     /* k */
uint64_t bk_bloom_capacity(const bk_bloom *filter);   /* design n */
double bk_bloom_target_fpr(const bk_bloom *filter);   /* design p: predicted FPR at capacity */
uint64_t bk_bloom_keys_added(const bk_bloom *filter); /* adds that reported a new key */
const bk_hasher *bk_bloom_hasher(const bk_bloom *filter);

/* Fill and what follows from it (bloomkit/sizing.h has the formulas). */
uint64_t bk_bloom_bits_set(const bk_bloom *filter);    /* popcount of the array */
double bk_bloom_fill_ratio(const bk_bloom *filter);    /* bits_set / m */
double bk_bloom_estimate_keys(const bk_bloom *filter); /* -(m/k) ln(1 - X/m) */
double bk_bloom_current_fpr(const bk_bloom *filter);   /* fill^k */
bool bk_bloom_past_design_point(const bk_bloom *filter);

/* Everything `bloomkit info` shows, computed in one pass. */
void bk_bloom_stats(const bk_bloom *filter, bk_stats *out);

/* Set algebra.  Both filters must have equal m, k, hash algorithm and seed
 * (else BK_EINCOMPATIBLE and nothing changes).
 *   union:        dst |= src: exactly the filter of the union of the sets.
 *   intersection: dst &= src: contains every key of both sets, with an FPR
 *                 somewhat above a filter built from the intersection.
 * keys_added becomes the sum (union) or the minimum (intersection).
 * The _new forms leave both inputs unchanged and return a new filter. */
bk_status bk_bloom_union(bk_bloom *dst, const bk_bloom *src);
bk_status bk_bloom_intersect(bk_bloom *dst, const bk_bloom *src);
bk_status bk_bloom_union_new(const bk_bloom *a, const bk_bloom *b, bk_bloom **out);
bk_status bk_bloom_intersection_new(const bk_bloom *a, const bk_bloom *b, bk_bloom **out);

/* BK_OK if a and b can be combined, else BK_EINCOMPATIBLE. */
bk_status bk_bloom_compatible(const bk_bloom *a, const bk_bloom *b);

/* |A|, |B|, |A u B|, |A n B| and Jaccard estimated from two filters,
 * without building the union. BK_EINCOMPATIBLE as above. */
bk_status bk_bloom_estimate_sets(const bk_bloom *a, const bk_bloom *b, bk_set_estimate *out);

/* The raw bit array: ceil(m/64) 64-bit words, bit i of the filter at
 * words[i / 64] bit (i % 64); bits at and beyond m are zero. */
const uint64_t *bk_bloom_words(const bk_bloom *filter);
size_t bk_bloom_word_count(const bk_bloom *filter);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_BLOOM_H */
