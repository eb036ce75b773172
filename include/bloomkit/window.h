/*
 * bloomkit/window.h -- the sliding-window filter: keys age out.
 *
 * Answers "was this key added within the last W insertions?" (.window_keys
 * = W) or "within the last T seconds?" (.window_seconds = T), so old keys
 * are forgotten without rebuilding anything.  The design is a ring of g
 * generations of classic Bloom filters that rotate: the segmented scheme
 * that the age-partitioned Bloom filter (Shtul, Baquero & Almeida, "Age-
 * Partitioned Bloom Filters", arXiv:2001.03147, 2020) starts from, with
 * whole filters as segments (details and trade-offs: src/window.c,
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
 *   - FPR: each generation is sized for the keys of one span at FPR
 *     p_g = 1 - (1 - p)^{1/g} (p = .fpr), and a query ORs at most g of them,
 *     so the FPR is at most 1 - (1 - p_g)^g = p as long as no span receives
 *     more than its share of distinct keys (the generation capacity
 *     ceil(n S / L), with n = .capacity, L = W or T).  With an insertion
 *     window and n = W (the default) this always holds: a span has S
 *     insertions.  A time window whose spans overflow (a burst) reports
 *     it through the fill alarm (stats.past_design_point).
 *
 * Time windows take the clock from the caller, in whole seconds (or any
 * integer unit used consistently with .window_seconds): bk_window_add_at
 * and bk_window_contains_at.  A timestamp earlier than the latest one seen
 * is treated as the latest one (clocks that step back never lose keys).
 * The calls without a timestamp (bk_window_add, bk_window_contains and the
 * generic bk_filter_* handle) use the latest timestamp seen (0 before the
 * first): on a time window they never advance time.
 *
 *     bk_params params = { .window_seconds = 3600, .capacity = 100000, .fpr = 0.001 };
 *     bk_window *recent;
 *     bk_window_create(&params, &recent);
 *     bk_window_add_at(recent, ip, ip_len, time(NULL), NULL);
 *     if (bk_window_contains_at(recent, ip, ip_len, time(NULL))) ...  // seen this hour
 *
 * Memory: g generations of m(ceil(n S / L), p_g) bits: about
 * g/(g-1) * 1.44 log2(g/p) bits per key of the window.
 *
 * Thread safety: const functions may run concurrently with each other;
 * adds and bk_window_advance must not run concurrently with anything else.
 */
#ifndef BLOOMKIT_WINDOW_H
#define BLOOMKIT_WINDOW_H

#include "bloomkit/common.h"
#include "bloomkit/hash.h"
#include "bloomkit/sizing.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

#define BK_WINDOW_DEFAULT_GENERATIONS 4u
#define BK_WINDOW_MAX_GENERATIONS 64u

typedef struct bk_window bk_window;

/* Creates an empty window filter.  Exactly one of .window_keys (W) and
 * .window_seconds (T) must be set.  .capacity: distinct keys expected per
 * window (default W for an insertion window; required for a time window).
 * .generations: g, 2..BK_WINDOW_MAX_GENERATIONS (0 = 4).  .fpr: p (0 = 0.01).
 * Errors: BK_EINVAL for a missing or doubled window, .capacity 0 on a time
 * window, g out of range, p not in (0,1), .bits/.hashes/.bits_per_key set,
 * unknown flags, a bad hash algorithm; BK_EUNSUPPORTED for
 * BK_FLAG_CONCURRENT; BK_EKEY for SipHash without a key;
 * BK_ERANGE when a generation would be too big; BK_ENOMEM.  On error *out
 * is untouched. */
bk_status bk_window_create(const bk_params *params, bk_window **out);

/* Releases the filter; NULL is accepted. */
void bk_window_free(bk_window *filter);

/* A new, independent filter with the same parameters, contents and clock. */
bk_status bk_window_copy(const bk_window *filter, bk_window **out);

/* Empties every generation and resets the clock.  BK_EIMMUTABLE if
 * read-only. */
bk_status bk_window_clear(bk_window *filter);

/* The filter's hash of a key: what the *_hash functions take. */
bk_hash bk_window_hash(const bk_window *filter, const void *key, size_t len);

/* Adds a key as the newest event: an insertion window counts it (repeats
 * too: a key added again is remembered for another W insertions); a time
 * window stamps it with the latest timestamp seen.  *was_new (may be NULL):
 * whether the key was absent from the window just before.
 * Errors: BK_EINVAL for NULL arguments; BK_EIMMUTABLE if read-only. */
bk_status bk_window_add(bk_window *filter, const void *key, size_t len, bool *was_new);
bk_status bk_window_add_hash(bk_window *filter, bk_hash hash, bool *was_new);

/* Adds a key at time `now` (time windows only: BK_EINVAL on an insertion
 * window), first ageing out the generations `now` leaves behind.
 * Timestamps run from 0 to 2^64 - 2 (BK_ERANGE for 2^64 - 1). */
bk_status bk_window_add_at(bk_window *filter, const void *key, size_t len, uint64_t now,
                           bool *was_new);
bk_status bk_window_add_hash_at(bk_window *filter, bk_hash hash, uint64_t now, bool *was_new);

/* True if the key may have been added within the window ending at the
 * latest event; false if it certainly was not. */
bool bk_window_contains(const bk_window *filter, const void *key, size_t len);
bool bk_window_contains_hash(const bk_window *filter, bk_hash hash);

/* The same question at time `now` (time windows; on an insertion window
 * `now` is ignored).  Nothing changes: generations too old at `now` are
 * skipped, not cleared.  A `now` before the latest timestamp seen is taken
 * as the latest. */
bool bk_window_contains_at(const bk_window *filter, const void *key, size_t len, uint64_t now);
bool bk_window_contains_hash_at(const bk_window *filter, bk_hash hash, uint64_t now);

/* Moves a time window's clock to `now` (if later), clearing the
 * generations that age out, so that stats and saved files reflect `now`.
 * BK_EINVAL on an insertion window; BK_ERANGE for now = 2^64 - 1;
 * BK_EIMMUTABLE if read-only. */
bk_status bk_window_advance(bk_window *filter, uint64_t now);

/* Batch forms at the latest event, as bk_window_add / bk_window_contains.
 * *new_count (may be NULL): keys that were new; `results` (may be NULL):
 * one answer per key; the number present is returned. */
bk_status bk_window_add_batch(bk_window *filter, const bk_key *keys, size_t count,
                              size_t *new_count);
bk_status bk_window_add_hash_batch(bk_window *filter, const bk_hash *hashes, size_t count,
                                   size_t *new_count);
size_t bk_window_contains_batch(const bk_window *filter, const bk_key *keys, size_t count,
                                bool *results);
size_t bk_window_contains_hash_batch(const bk_window *filter, const bk_hash *hashes,
                                     size_t count, bool *results);

/* Parameters and state. */
bool bk_window_is_timed(const bk_window *filter);         /* window in seconds */
uint64_t bk_window_length(const bk_window *filter);       /* W or T */
unsigned bk_window_generations(const bk_window *filter);  /* g */
uint64_t bk_window_span(const bk_window *filter);         /* S = ceil(L / (g-1)) */
uint64_t bk_window_horizon(const bk_window *filter);      /* g S: age beyond which keys are gone */
uint64_t bk_window_capacity(const bk_window *filter);     /* n: distinct keys per window */
double bk_window_target_fpr(const bk_window *filter);     /* p */
uint64_t bk_window_keys_added(const bk_window *filter);   /* adds that reported a new key */
/* Insertion window: number of adds so far.  Time window: the latest
 * timestamp seen (0 before the first). */
uint64_t bk_window_clock(const bk_window *filter);
const bk_hasher *bk_window_hasher(const bk_window *filter);

/* The window as a whole (bloomkit/common.h): bits and bytes of all
 * generations, hashes = k, capacity = n, target_fpr = p, filters = g,
 * keys_estimated = sum of the live generations' estimates (a key added in
 * several spans counts once in each), fill_ratio over all generations,
 * current_fpr = 1 - prod over live generations (1 - fill_i^k), and
 * past_design_point when some live generation holds more than
 * BK_DESIGN_MARGIN times its capacity of distinct keys (counted, not
 * estimated from the fill). */
void bk_window_stats(const bk_window *filter, bk_stats *out);

/* One generation alone (as bk_bloom_stats), index 0 .. g-1 in the ring.
 * BK_EINVAL for NULL arguments, BK_ERANGE for an index >= g. */
bk_status bk_window_generation_stats(const bk_window *filter, unsigned index, bk_stats *out);

/* Whether generation `index` alone holds the key (false out of range). */
bool bk_window_generation_contains_hash(const bk_window *filter, unsigned index, bk_hash hash);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_WINDOW_H */
