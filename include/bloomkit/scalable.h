/*
 * bloomkit/scalable.h -- the scalable Bloom filter (Almeida, Baquero,
 * Preguica, Hutchison, "Scalable Bloom Filters", IPL 101(6), 2007).
 *
 * A filter for when the number of keys is not known in advance: a chain of
 * classic Bloom filters.  Keys go into the newest sub-filter; when it holds
 * its capacity, a new one is added, `expansion` times larger and with a
 * smaller target FPR, so that the FPR of the whole chain approaches the
 * target p from below however many keys arrive.  The first sub-filter
 * takes the share q = BK_SCALABLE_FIRST_SHARE (0.7) of p, the others share
 * the rest, each `tightening` times the one before:
 *
 *     sub-filter 0:  capacity n0,         FPR p_0 = q p
 *     sub-filter i:  capacity n0 * s^i,   FPR p_i = (1 - q) p (1 - r) r^(i-1)
 *     chain FPR  =  1 - prod_i (1 - p_i)  <=  sum_i p_i  <  q p + (1 - q) p = p
 *
 * (s = .expansion, default 2; r = .tightening, default 0.75; n0 = .capacity;
 * p = .fpr, default 0.01.)  Measured at 1%: 0.66% at n0 keys (10.3 bits per
 * key), 0.80% at 10 n0, 0.89% at 100 n0, 0.94% at 1000 n0 (19.8 bits per
 * key); src/scalable.c.  Memory grows with the keys actually added:
 * sub-filter i costs 1.44 log2(1/p_i) bits per key of its capacity.
 *
 * It is used through the bk_filter handle (bloomkit/filter.h); this header
 * holds what only this kind has, its sub-filters:
 *
 *     bk_params params = { .capacity = 1000, .fpr = 0.001 };
 *     bk_filter *filter;
 *     if (bk_filter_create(BK_KIND_SCALABLE, &params, &filter) != BK_OK) ...
 *     for (...) bk_filter_add(filter, key, len, &was_new);  // never fills up
 *     bk_filter_free(filter);
 *
 * Guarantees: no false negatives; FPR at most .fpr whatever the number of
 * keys (each sub-filter is used only up to its capacity); `add` looks the
 * key up in the whole chain first, so a key is stored once and `was_new`
 * says whether it was (apparently) absent.
 *
 * Creation: one empty sub-filter of capacity .capacity and FPR
 * .fpr * BK_SCALABLE_FIRST_SHARE.  Errors: BK_EINVAL for .capacity 0, .fpr not in
 * (0,1), .expansion not in [1, 1000] (0 = default), .tightening not in
 * (0,1) (0 = default), .max_filters > BK_SCALABLE_MAX_FILTERS,
 * .bits/.hashes/.bits_per_key set; BK_ERANGE when the first sub-filter is
 * too big; BK_ENOMEM; and the handle's.  An add of a new key fails, changing
 * nothing, with BK_EFULL when the newest sub-filter is at capacity and no
 * other may be added, BK_ERANGE / BK_ENOMEM when the next one cannot be
 * sized or allocated.  Batch adds stop at the first error.
 *
 * Stats (bk_filter_stats) cover the whole chain: bits, bytes, capacity
 * (sum over the sub-filters allocated so far), keys, fill, current_fpr =
 * 1 - prod (1 - fill_i^k_i), filters = sub-filter count, hashes = k of the
 * newest, and past_design_point: the chain is at capacity and may not
 * grow (an add of a new key would fail).  The chain counts the keys of
 * every sub-filter and never fills one beyond its capacity, so it needs no
 * fill-based test (which is noisy for small sub-filters: docs/GROWTH.md).
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
 * BK_FLAG_BLOCKED_STAGES (in .flags): every sub-filter is a cache-line
 * blocked filter (bloomkit/blocked.h; one 512-bit block per key) sized by
 * the blocked rule for its share of .fpr, instead of a classic Bloom
 * filter: one cache line per add or query of a chain that has not grown,
 * 7-17% more memory (docs/GROWTH.md); the same schedule and FPR bound.  Sub-filter
 * stats then report kind BK_KIND_BLOCKED.  Off by default; files record
 * the choice (docs/FORMAT.md), so chains keep their stages when loaded.
 *
 * Thread safety: const functions may run concurrently with each other; an
 * add must not run concurrently with anything else on the same filter.
 */
#ifndef BLOOMKIT_SCALABLE_H
#define BLOOMKIT_SCALABLE_H

#include "bloomkit/common.h"
#include "bloomkit/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* Hard limit on sub-filters (0 in .max_filters means this).  With the
 * defaults the 64th sub-filter would hold n0 * 2^63 keys. */
#define BK_SCALABLE_MAX_FILTERS 64u
#define BK_SCALABLE_DEFAULT_EXPANSION 2.0
#define BK_SCALABLE_DEFAULT_TIGHTENING 0.75
/* q: the share of the FPR budget p given to the first sub-filter (p_0 = q p);
 * the others share the rest, (1 - q) p. */
#define BK_SCALABLE_FIRST_SHARE 0.7

/* Sub-filters, oldest (index 0) to newest (count - 1): what `info` lists.
 * Each call returns BK_EINVAL for NULL arguments and BK_EKIND for a filter
 * of another kind. */

/* *count gets the number of sub-filters (1 .. max_filters). */
bk_status bk_scalable_sub_count(const bk_filter *filter, size_t *count);

/* The stats of sub-filter `index` alone (a classic Bloom filter's, kind
 * BK_KIND_BLOOM).  BK_ERANGE for an index >= the sub-filter count. */
bk_status bk_scalable_sub_stats(const bk_filter *filter, size_t index, bk_stats *out);

/* *bound gets the FPR bound of the chain as it stands: 1 - prod_i (1 - p_i)
 * over its sub-filters' design FPRs, always below the target p. */
bk_status bk_scalable_fpr_bound(const bk_filter *filter, double *bound);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_SCALABLE_H */
