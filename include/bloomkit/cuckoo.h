/*
 * bloomkit/cuckoo.h -- the cuckoo filter (Fan, Andersen, Kaminsky &
 * Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom", CoNEXT
 * 2014): short fingerprints of the keys in a cuckoo hash table of 4-slot
 * buckets.  Supports remove, and beats a Bloom filter on space below about
 * 0.4% false positives (fingerprints of 4 to 16 bits: 2.9% at 8.4 bits per
 * key, 0.74% at 10.5, 0.19% at 12.6; the table in src/cuckoo.c).  Design, layout and measured figures: src/cuckoo.c;
 * the whole story: docs/DELETION.md.
 *
 * It is used through the bk_filter handle (bloomkit/filter.h); this header
 * holds what only this kind has (bk_cuckoo_add_unique):
 *
 *     bk_params params = { .capacity = 100000, .fpr = 0.001 };
 *     bk_filter *filter;
 *     if (bk_filter_create(BK_KIND_CUCKOO, &params, &filter) != BK_OK) ...
 *     if (bk_filter_add(filter, "alice", 5, NULL) == BK_EFULL) ...  // see below
 *     bk_filter_remove(filter, "alice", 5);     // alice was added: safe
 *     bk_filter_free(filter);
 *
 * Nothing is ever lost.  An insert that finds both of its buckets full
 * relocates ("kicks") stored fingerprints at most 500 times; if that does not
 * free a slot, the last fingerprint evicted is kept in a one-entry victim
 * stash, and the insert still succeeds.  While the stash is occupied the
 * filter is full (bk_stats.stash_occupied): add returns BK_EFULL and
 * changes nothing.  Every key
 * stored is reported present whatever the load (contains also looks at the
 * stash); a remove frees room, and the stashed fingerprint is put back into
 * the table then.
 *
 * Multiset, like the counting filter: bk_filter_add stores one more copy of
 * the key's fingerprint each time (at most 8 copies fit, 2 buckets x 4
 * slots; was_new: the key was reported absent before), bk_filter_remove
 * deletes one copy (BK_ENOTFOUND if none; a stashed fingerprint then moves
 * back into the table), bk_filter_count counts the copies in the key's
 * buckets and the stash (an upper bound on adds minus removes).  Batch
 * adds stop at the first BK_EFULL.
 *
 * bk_cuckoo_add_unique adds only if the key is not already reported
 * present.  It saves slots when keys repeat, but do not combine it with
 * remove: if the key was skipped because it collided with another key's
 * fingerprint (a false positive), removing that other key removes the
 * shared fingerprint and the skipped key becomes absent -- a false
 * negative.
 *
 * READ THIS BEFORE CALLING REMOVE: remove is only safe for keys KNOWN to be
 * present.  A key never added that is a false positive (its fingerprint
 * matches another key's in one of its buckets) is indistinguishable from a
 * present key, and removing it deletes the other key's fingerprint: that
 * key becomes absent, a false negative.
 *
 * keys_added (bk_stats.keys_added) is the number of fingerprints stored
 * (adds minus removes), table and stash.  Stats: bits = slots x fingerprint
 * bits (the table's memory), hashes 0, load_factor and fill_ratio = stored
 * / slots, keys_estimated = stored (exact), fingerprint_bits,
 * current_fpr = the predicted FPR at the current load (below),
 * stash_occupied; past_design_point once more keys than the capacity are
 * stored or the stash is occupied.
 *
 * Thread safety: const functions may run concurrently with each other;
 * anything that writes needs exclusive access (BK_FLAG_CONCURRENT is not
 * offered: BK_EUNSUPPORTED).
 */
#ifndef BLOOMKIT_CUCKOO_H
#define BLOOMKIT_CUCKOO_H

#include "bloomkit/common.h"
#include "bloomkit/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

#define BK_CUCKOO_SLOTS_PER_BUCKET 4u
#define BK_CUCKOO_MAX_KICKS 500u
/* Fingerprint widths, in bits: any from 4 to 16. */
#define BK_CUCKOO_MIN_FINGERPRINT_BITS 4u
#define BK_CUCKOO_MAX_FINGERPRINT_BITS 16u
/* The load factor the sizing aims at, at capacity (the paper's 95% for
 * 4-slot buckets), reached by capacity + BK_CUCKOO_SLACK_SIGMAS sqrt(capacity)
 * keys: the slack absorbs the Poisson fluctuation of small tables (see
 * the sizing below). */
#define BK_CUCKOO_DESIGN_LOAD 0.95
#define BK_CUCKOO_SLACK_SIGMAS 3.0

/*
 * bk_filter_create(BK_KIND_CUCKOO, ...) sizes the filter so:
 *   fingerprint bits: .fingerprint_bits if set (4 to 16, else BK_EINVAL);
 *     else, with .bits_per_key, the widest f <= 16 with f <= bits_per_key *
 *     0.95 (BK_ERANGE below 4); else the narrowest f whose predicted FPR at
 *     95% load, p(0.95, f), is at most .fpr (default 0.01), where
 *     p(load, f) = 1 - (1 - 1/(2^f - 1))^(8 load) ~ 8 load / 2^f
 *     (a query compares its fingerprint with the 2 x 4 slots of its
 *     buckets; 2b/2^f at full load, Fan et al. 2014, for b = 4): each bit
 *     halves it, 8 bits down to p = 2.94%, 9 to 1.48%, 10 to 0.741% (the
 *     default 1%), 12 to 0.185%, 16 to 1.16e-4.  A smaller .fpr is
 *     BK_ERANGE (use a Bloom or fuse filter).
 *   buckets: floor(.bits / (4 f)) when .bits is set (.hashes is ignored);
 *     else ceil((n + 3 sqrt(n)) / (4 * 0.95)) for capacity n: 95% load
 *     with three standard deviations of slack, so that adding n keys
 *     succeeds (measured: no BK_EFULL in 24,400 filters of 1 to 20,000
 *     keys; without the slack 0.35-0.95% of filters of 10-500 keys filled
 *     early).  Load at capacity: 0.71 for n = 100, 0.87 for 1,000, 0.92
 *     for 10,000, 0.947 for 10^6.  Any count from 1 up (not only powers
 *     of two); BK_ERANGE beyond BK_MAX_BITS bits.
 * Other errors: BK_EINVAL for capacity 0, BK_ENOMEM, and the handle's.
 */

/* Stores the key only if it is not reported present (*was_new, may be
 * NULL, says which).  See the warning at the top about combining this with
 * remove.  Errors: BK_EINVAL for a NULL filter or key (with len > 0),
 * BK_EKIND for a filter of another kind, BK_EIMMUTABLE if read-only,
 * BK_EFULL when the stash is occupied (nothing changes); a key already
 * present gives BK_OK even when full.  The handle's fill alarm does not see
 * these adds. */
bk_status bk_cuckoo_add_unique(bk_filter *filter, const void *key, size_t len, bool *was_new);
bk_status bk_cuckoo_add_unique_hash(bk_filter *filter, bk_hash hash, bool *was_new);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_CUCKOO_H */
