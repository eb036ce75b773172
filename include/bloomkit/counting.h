/*
 * bloomkit/counting.h -- the counting Bloom filter (Fan, Cao, Almeida &
 * Broder 2000): a Bloom filter whose bits are 4-bit counters, so that a key
 * can be removed again.  By default all of a key's counters are in one
 * 64-byte cache line (the blocked layout: one memory access per query or
 * add); BK_FLAG_COUNTING_CLASSIC gives the classic layout (counters
 * anywhere in the array, the layout of files written before the blocked
 * one, which still load and answer as they did).  Design, memory layout
 * and measured figures: src/counting.c; the whole story: docs/DELETION.md.
 *
 * It is used through the bk_filter handle (bloomkit/filter.h); this header
 * holds what only this kind has:
 *
 *     bk_params params = { .capacity = 100000, .fpr = 0.01 };
 *     bk_filter *filter;
 *     if (bk_filter_create(BK_KIND_COUNTING, &params, &filter) != BK_OK) ...
 *     bk_filter_add(filter, "alice", 5, NULL);
 *     bk_filter_remove(filter, "alice", 5);          // alice was added: safe
 *     bk_filter_free(filter);
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
 * Sizing, blocked layout (the default): m counters in lines of 128 and k
 * chosen for the FPR of a 128-counter block (the blocked kind's model,
 * bk_blocked_bits_per_key_for_fpr with 128 cells): 10.85 counters per key
 * and k = 6 for 1% (43.4 bits per key), 19.0 and k = 8 for 0.1%; an
 * explicit m (.bits) is rounded up to whole lines, .bits_per_key means
 * counters per key.  Sized from an FPR whose blocked design would need more
 * than twice the classic counters (below about 1e-5), a filter takes the
 * classic layout instead (bk_counting_layout_of tells).  Classic layout: m
 * counters and k probes exactly as the classic filter with the same
 * parameters (bloomkit/sizing.h), at 4 bits per counter: four times the
 * memory of the equivalent bk_bloom, same false-positive rate.
 *
 * Saturation: a counter that reaches 15 (BK_COUNTING_MAX) stays at 15 for
 * ever; remove never decrements it.  Once saturated the true number of keys
 * on that counter is unknown (15 or more), so decrementing could bring it to
 * zero while keys still use it -- a false negative.  A stuck counter only
 * costs a little false-positive rate.  At the design point a counter
 * reaches 16 with probability about 3e-16 in the blocked layout at 1%, and
 * reaches 15 below (e ln2 / 15)^15 = 3.1e-14 in the classic one (formulas
 * in src/counting.c), so in practice saturation means that some key was
 * added many times.  bk_stats.saturated_counters
 * (and `bloomkit info`) report how many are stuck.
 *
 * On the handle: bk_filter_add increments the key's k counters (a counter
 * at 15 stays at 15; was_new: some counter was 0) and never fails for lack
 * of room; bk_filter_remove decrements them, except saturated ones, or
 * changes nothing and returns BK_ENOTFOUND when one is 0 (the key is
 * certainly absent); bk_filter_count gives the minimum of the key's
 * counters (an upper bound on adds minus removes, BK_COUNTING_MAX meaning
 * "15 or more"); bk_filter_union adds counter by counter, saturating at 15
 * (same m, k, layout, hash algorithm and seed, else BK_EINCOMPATIBLE).
 * Stats: bits and bytes are the counters' memory (bits = 4m), bits_per_key
 * = 4m/n, fill_ratio = non-zero counters / m, saturated_counters.  Creation
 * sizes as above (BK_ERANGE when the counter array would exceed
 * BK_MAX_BITS bits).
 *
 * keys_added (bk_stats.keys_added) is the number of
 * successful adds minus successful removes: the size of the multiset held.
 *
 * Thread safety: const functions may run concurrently with each other;
 * anything that writes needs exclusive access (BK_FLAG_CONCURRENT is not
 * offered: BK_EUNSUPPORTED).
 */
#ifndef BLOOMKIT_COUNTING_H
#define BLOOMKIT_COUNTING_H

#include "bloomkit/common.h"
#include "bloomkit/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* Bits per counter, and the value at which a counter sticks. */
#define BK_COUNTING_COUNTER_BITS 4u
#define BK_COUNTING_MAX 15u

/* Where a filter keeps a key's counters.  The values are written into
 * files. */
typedef enum bk_counting_layout {
    BK_COUNTING_CLASSIC = 0, /* k counters anywhere in the array (BK_FLAG_COUNTING_CLASSIC) */
    BK_COUNTING_BLOCKED = 1  /* k counters in one line of 128 (default) */
} bk_counting_layout;

/* *value gets counter `index` (< m = stats.bits / 4), 0..15; in the blocked
 * layout counter c of line j has index 128 j + c.  BK_EINVAL for NULL
 * arguments, BK_EKIND for a filter of another kind, BK_ERANGE for an
 * index >= m. */
bk_status bk_counting_counter(const bk_filter *filter, uint64_t index, unsigned *value);

/* *layout gets the filter's layout.  BK_EINVAL for NULL arguments,
 * BK_EKIND for a filter of another kind. */
bk_status bk_counting_layout_of(const bk_filter *filter, bk_counting_layout *layout);

/* A new Bloom filter that answers contains exactly as this one does (bit
 * set where a counter is non-zero) but cannot remove; the caller frees it
 * with bk_filter_free.  Its keys_added, capacity, design FPR and hasher are
 * this filter's.
 *   - Classic layout: a classic Bloom filter (BK_KIND_BLOOM) of the same m
 *     and k, bit i set when counter i is non-zero: a quarter of the memory.
 *   - Blocked layout: a `blocked` filter (BK_KIND_BLOCKED) with one 512-bit
 *     block per line and the same k, in which bits 4c .. 4c+3 of block j
 *     are set when counter c of line j is non-zero; the blocked kind's
 *     probes land on exactly those groups, so it answers identically (and
 *     gets that kind's SIMD queries and inline view), in the same memory as
 *     the counting filter.  No classic filter can: the blocked layout's
 *     probes are not the classic ones, and re-placing keys needs the keys.
 * BK_EINVAL for NULL arguments, BK_EKIND for a filter of another kind,
 * BK_ENOMEM. */
bk_status bk_counting_to_bloom(const bk_filter *filter, bk_filter **out);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_COUNTING_H */
