/*
 * bloomkit/window.h -- the sliding-window filter: keys age out.
 *
 * Answers "was this key added within the last W insertions?" (.window_keys
 * = W) or "within the last T seconds?" (.window_seconds = T), so old keys
 * are forgotten without rebuilding anything.  The design is a ring of g
 * generations of Bloom filters that rotate: the segmented scheme that the
 * age-partitioned Bloom filter (Shtul, Baquero & Almeida, "Age-Partitioned
 * Bloom Filters", arXiv:2001.03147, 2020) starts from.  With g <= 4 the
 * generations share one 64-byte line per key (a c-bit cell per probe, one
 * bit per generation), so a query reads one cache line; with g > 4 they
 * are classic filters (details and trade-offs: src/window.c,
 * docs/GROWTH.md).  Time is cut into spans of S = ceil(W/(g-1))
 * insertions (or S = ceil(T/(g-1)) seconds); every span has its own
 * generation; a query asks the generations of the g most recent spans; the
 * generation of a span that is g spans old is cleared and reused.
 *
 * Guarantees, with the age of a key = clock now - clock when it was last
 * added (clock = insertion index, counting every add, repeats included; or
 * the caller's timestamp):
 *   - No false negatives inside the window: a key of age < W (resp. < T)
 *     is always reported.  More precisely every age < (g-1) S is.
 *   - Forgetting: a key of age >= g S is no longer in any generation; it is
 *     reported only as a false positive.  Between (g-1) S and g S it may
 *     still be reported: keys linger up to W (1 + 1/(g-1)) (+ rounding),
 *     e.g. 4/3 W with the default g = 4.
 *   - FPR: each generation is sized for the keys of one span at FPR p/g
 *     (p = .fpr; 1 - (1 - p)^{1/g} for g > 4), and a query ORs at most g
 *     of them, so the FPR is at most p as long as no span receives
 *     more than its share of distinct keys (the generation capacity
 *     ceil(n S / L), with n = .capacity, L = W or T).  With an insertion
 *     window and n = W (the default) this always holds: a span has S
 *     insertions.  A time window whose spans overflow (a burst) reports
 *     it through the fill alarm (stats.past_design_point).
 *
 * It is used through the bk_filter handle (bloomkit/filter.h).  Time
 * windows take the clock from the caller, in whole seconds (or any integer
 * unit used consistently with .window_seconds): bk_filter_advance_clock
 * moves it to `now` (timestamps 0 .. 2^64 - 2; BK_ERANGE for 2^64 - 1),
 * first ageing out the generations `now` leaves behind.  A timestamp
 * earlier than the latest one seen is treated as the latest one (clocks
 * that step back never lose keys).  Adds and queries use the latest
 * timestamp seen (0 before the first): they never advance time themselves.
 * An insertion window counts every add (repeats too: a key added again is
 * remembered for another W insertions); its clock cannot be set
 * (BK_EUNSUPPORTED).  was_new: the key was absent from the window just
 * before.
 *
 *     bk_params params = { .window_seconds = 3600, .capacity = 100000, .fpr = 0.001 };
 *     bk_filter *recent;
 *     bk_filter_create(BK_KIND_WINDOW, &params, &recent);
 *     bk_filter_advance_clock(recent, time(NULL));
 *     bk_filter_add(recent, ip, ip_len, NULL);
 *     if (bk_filter_contains(recent, ip, ip_len)) ...  // seen this hour
 *
 * Creation: exactly one of .window_keys (W) and .window_seconds (T) must be
 * set.  .capacity: distinct keys expected per window (default W for an
 * insertion window; required for a time window).  .generations: g,
 * 2..BK_WINDOW_MAX_GENERATIONS (0 = 4).  .fpr: p (0 = 0.01).  Errors:
 * BK_EINVAL for a missing or doubled window, .capacity 0 on a time window,
 * g out of range, p not in (0,1), .bits/.hashes/.bits_per_key set;
 * BK_ERANGE when a generation would be too big; BK_ENOMEM; and the
 * handle's.  bk_window_generation_stats reports a generation of the cell
 * layout (g <= 4) as a blocked filter (kind BK_KIND_BLOCKED, blocks of
 * 512/c bits).
 *
 * Stats (bk_filter_stats) cover the window as a whole: bits and bytes of
 * all generations, hashes = k, capacity = n, target_fpr = p, filters = g,
 * keys_added = adds that reported a new key, keys_estimated = sum of the
 * live generations' estimates (a key added in several spans counts once in
 * each), fill_ratio over all generations, current_fpr = 1 - prod over live
 * generations (1 - fill_i^k), and past_design_point when some live
 * generation holds more than BK_DESIGN_MARGIN times its capacity of
 * distinct keys (counted, not estimated from the fill).
 *
 * Memory: g generations of m(ceil(n S / L), p/g) bits: about
 * g/(g-1) * 1.44 log2(g/p) bits per key of the window, more with the
 * line-sized blocks of g <= 4: at p = 1%, 24.1 (g = 2), 28.8 (g = 3),
 * 20.6 (g = 4) and 15.9 (g = 8) bits per key.
 *
 * Thread safety: const functions may run concurrently with each other;
 * adds and bk_filter_advance_clock must not run concurrently with anything
 * else.
 */
#ifndef BLOOMKIT_WINDOW_H
#define BLOOMKIT_WINDOW_H

#include "bloomkit/common.h"
#include "bloomkit/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

#define BK_WINDOW_DEFAULT_GENERATIONS 4u
#define BK_WINDOW_MAX_GENERATIONS 64u

/* Each call below returns BK_EINVAL for NULL arguments (a NULL key with
 * len > 0 too) and BK_EKIND for a filter of another kind. */

/* *clock gets the window's clock: on an insertion window the number of
 * adds so far; on a time window the latest timestamp seen (0 before the
 * first). */
bk_status bk_window_clock(const bk_filter *filter, uint64_t *clock);

/* *present gets whether the key may have been added within the window
 * ending at time `now` (time windows; an insertion window ignores `now`).
 * Nothing changes: generations too old at `now` are skipped, not cleared,
 * so this works on a read-only (mapped) filter.  A `now` before the latest
 * timestamp seen is taken as the latest. */
bk_status bk_window_contains_at(const bk_filter *filter, const void *key, size_t len,
                                uint64_t now, bool *present);

/* One generation alone, index 0 .. g-1 in the ring: a blocked filter's
 * stats (kind BK_KIND_BLOCKED) for g <= 4, a classic Bloom filter's (kind
 * BK_KIND_BLOOM) for g > 4 and files of the ring layout.  BK_ERANGE for an
 * index >= g. */
bk_status bk_window_generation_stats(const bk_filter *filter, size_t index, bk_stats *out);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_WINDOW_H */
