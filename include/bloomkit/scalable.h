/*
 * bloomkit/scalable.h -- the scalable Bloom filter (Almeida, Baquero,
 * Preguica, Hutchison, "Scalable Bloom Filters", IPL 101(6), 2007).
 *
 * A filter for when the number of keys is not known in advance: a chain of
 * classic Bloom filters.  Keys go into the newest sub-filter; when it holds
 * its capacity, a new one is added, `expansion` times larger and with its
 * target FPR multiplied by `tightening`, so that the FPR of the whole chain
 * stays below the target p however many keys arrive:
 *
 *     sub-filter i:  capacity n0 * s^i,   FPR p_i = p (1 - r) r^i
 *     chain FPR  =  1 - prod_i (1 - p_i)  <=  sum_i p_i  <  p (1 - r) / (1 - r) = p
 *
 * (s = .expansion, default 2; r = .tightening, default 0.5; n0 = .capacity;
 * p = .fpr, default 0.01.)  Memory grows with the keys actually added:
 * sub-filter i costs 1.44 log2(1/p_i) bits per key of its capacity, so the
 * price of not knowing n is about 1.44 log2(n/n0) bits per key.
 *
 *     bk_params params = { .capacity = 1000, .fpr = 0.001 };
 *     bk_scalable *filter;
 *     if (bk_scalable_create(&params, &filter) != BK_OK) ...
 *     for (...) bk_scalable_add(filter, key, len, &was_new);  // never fills up
 *     bk_scalable_free(filter);
 *
 * Guarantees: no false negatives; FPR at most .fpr whatever the number of
 * keys (each sub-filter is used only up to its capacity); `add` looks the
 * key up in the whole chain first, so a key is stored once and `was_new`
 * says whether it was (apparently) absent.
 *
 * Limits: .max_filters = 1 makes a non-scaling filter (BK_EFULL once the
 * first sub-filter holds its capacity); .max_filters = N > 1 allows at most
 * N sub-filters; 0 means BK_SCALABLE_MAX_FILTERS.  When the chain cannot
 * grow, an add of a new key returns BK_EFULL and changes nothing.
 *
 * Sizing comes from .capacity and .fpr only: .bits, .hashes and
 * .bits_per_key are refused (BK_EINVAL), since every sub-filter has its own.
 * BK_FLAG_CONCURRENT is refused too (growing is not thread-safe).
 *
 * Thread safety: const functions may run concurrently with each other; an
 * add must not run concurrently with anything else on the same filter.
 */
#ifndef BLOOMKIT_SCALABLE_H
#define BLOOMKIT_SCALABLE_H

#include "bloomkit/common.h"
#include "bloomkit/hash.h"
#include "bloomkit/sizing.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* Hard limit on sub-filters (0 in .max_filters means this).  With the
 * defaults the 64th sub-filter would hold n0 * 2^63 keys. */
#define BK_SCALABLE_MAX_FILTERS 64u
#define BK_SCALABLE_DEFAULT_EXPANSION 2.0
#define BK_SCALABLE_DEFAULT_TIGHTENING 0.5

typedef struct bk_scalable bk_scalable;

/* Creates a chain holding one empty sub-filter of capacity .capacity and
 * FPR .fpr * (1 - tightening).
 * Errors: BK_EINVAL for .capacity 0, .fpr not in (0,1), .expansion not in
 * [1, 1000] (0 = default), .tightening not in (0,1) (0 = default),
 * .max_filters > BK_SCALABLE_MAX_FILTERS, .bits/.hashes/.bits_per_key set,
 * unknown flags, a bad hash algorithm; BK_EUNSUPPORTED for
 * BK_FLAG_CONCURRENT; BK_EKEY when SipHash has no key; BK_ERANGE when the first sub-filter is too big; BK_ENOMEM.
 * On error *out is untouched. */
bk_status bk_scalable_create(const bk_params *params, bk_scalable **out);

/* Releases the filter; NULL is accepted. */
void bk_scalable_free(bk_scalable *filter);

/* A new, independent filter with the same parameters and contents. */
bk_status bk_scalable_copy(const bk_scalable *filter, bk_scalable **out);

/* Empties the filter: back to one empty sub-filter.  BK_EIMMUTABLE if
 * read-only (a mapped file). */
bk_status bk_scalable_clear(bk_scalable *filter);

/* The filter's hash of a key: what the *_hash functions take. */
bk_hash bk_scalable_hash(const bk_scalable *filter, const void *key, size_t len);

/* Adds a key unless the chain already reports it.  *was_new (may be NULL)
 * says whether it was added.  Errors (nothing changed): BK_EINVAL for NULL
 * arguments; BK_EFULL when the newest sub-filter is at capacity and no
 * other may be added (max_filters reached); BK_ERANGE / BK_ENOMEM when the
 * next sub-filter cannot be sized or allocated; BK_EIMMUTABLE if read-only. */
bk_status bk_scalable_add(bk_scalable *filter, const void *key, size_t len, bool *was_new);
bk_status bk_scalable_add_hash(bk_scalable *filter, bk_hash hash, bool *was_new);

/* True if the key may be present; false if it was certainly never added. */
bool bk_scalable_contains(const bk_scalable *filter, const void *key, size_t len);
bool bk_scalable_contains_hash(const bk_scalable *filter, bk_hash hash);

/* Batch forms.  Adds stop at the first error, with *new_count (may be
 * NULL) counting the keys added before it; `results` (may be NULL) gets one
 * answer per key and the number present is returned. */
bk_status bk_scalable_add_batch(bk_scalable *filter, const bk_key *keys, size_t count,
                                size_t *new_count);
bk_status bk_scalable_add_hash_batch(bk_scalable *filter, const bk_hash *hashes, size_t count,
                                     size_t *new_count);
size_t bk_scalable_contains_batch(const bk_scalable *filter, const bk_key *keys, size_t count,
                                  bool *results);
size_t bk_scalable_contains_hash_batch(const bk_scalable *filter, const bk_hash *hashes,
                                       size_t count, bool *results);

/* Parameters and state. */
uint64_t bk_scalable_initial_capacity(const bk_scalable *filter); /* n0 */
double bk_scalable_target_fpr(const bk_scalable *filter);         /* p: bound for the chain */
double bk_scalable_expansion(const bk_scalable *filter);          /* s */
double bk_scalable_tightening(const bk_scalable *filter);         /* r */
unsigned bk_scalable_max_filters(const bk_scalable *filter);      /* limit on sub-filters */
uint64_t bk_scalable_keys_added(const bk_scalable *filter);       /* keys added (new) */
const bk_hasher *bk_scalable_hasher(const bk_scalable *filter);

/* The FPR bound of the chain as it stands: 1 - prod_i (1 - p_i) over its
 * sub-filters' design FPRs, always below the target p. */
double bk_scalable_fpr_bound(const bk_scalable *filter);

/* The whole chain (bloomkit/common.h): bits, bytes, capacity (sum over the
 * sub-filters allocated so far), keys, fill, current_fpr = 1 - prod (1 -
 * fill_i^k_i), filters = sub-filter count, hashes = k of the newest, and
 * past_design_point: the chain is at capacity and may not grow (an add of a
 * new key would fail).  The chain counts the keys of every sub-filter and
 * never fills one beyond its capacity, so it needs no fill-based test
 * (which is noisy for small sub-filters: see docs/GROWTH.md). */
void bk_scalable_stats(const bk_scalable *filter, bk_stats *out);

/* Sub-filters, oldest (index 0) to newest (count - 1): what `info` lists. */
unsigned bk_scalable_filter_count(const bk_scalable *filter);

/* The stats of sub-filter `index` alone (as bk_bloom_stats).  BK_EINVAL for
 * NULL arguments, BK_ERANGE for an index >= bk_scalable_filter_count. */
bk_status bk_scalable_filter_stats(const bk_scalable *filter, unsigned index, bk_stats *out);

/* Whether sub-filter `index` alone reports the key (false for an index out
 * of range): for diagnostics and tests of the levels' independence. */
bool bk_scalable_filter_contains_hash(const bk_scalable *filter, unsigned index, bk_hash hash);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_SCALABLE_H */
