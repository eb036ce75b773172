/*
 * bloomkit/cuckoo.h -- the cuckoo filter (Fan, Andersen, Kaminsky &
 * Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom", CoNEXT
 * 2014): short fingerprints of the keys in a cuckoo hash table of 4-slot
 * buckets.  Supports remove, and beats a Bloom filter on space below about
 * 3% false positives.  Design, layout and measured figures: src/cuckoo.c;
 * the whole story: docs/DELETION.md.
 *
 *     bk_params params = { .capacity = 100000, .fpr = 0.001 };
 *     bk_cuckoo *filter;
 *     if (bk_cuckoo_create(&params, &filter) != BK_OK) ...
 *     if (bk_cuckoo_add(filter, "alice", 5, NULL) == BK_EFULL) ...  // see below
 *     bk_cuckoo_remove(filter, "alice", 5);     // alice was added: safe
 *     bk_cuckoo_free(filter);
 *
 * Nothing is ever lost.  An insert that finds both of its buckets full
 * relocates ("kicks") stored fingerprints at most 500 times; if that does not
 * free a slot, the last fingerprint evicted is kept in a one-entry victim
 * stash, and the insert still succeeds.  While the stash is occupied the
 * filter is full: add returns BK_EFULL and changes nothing.  Every key
 * stored is reported present whatever the load (contains also looks at the
 * stash); a remove frees room, and the stashed fingerprint is put back into
 * the table then.
 *
 * Multiset, like the counting filter: bk_cuckoo_add stores one more copy of
 * the key's fingerprint each time (at most 8 copies fit, 2 buckets x 4
 * slots), bk_cuckoo_remove deletes one copy, bk_cuckoo_count counts them.
 * bk_filter_add on a cuckoo filter is bk_cuckoo_add.
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
 * keys_added (bk_cuckoo_keys_added, bk_stats.keys_added) is the number of
 * fingerprints stored (adds minus removes), table and stash.
 *
 * Thread safety: const functions may run concurrently with each other;
 * anything that writes needs exclusive access (BK_FLAG_CONCURRENT is not
 * offered: BK_EUNSUPPORTED).
 */
#ifndef BLOOMKIT_CUCKOO_H
#define BLOOMKIT_CUCKOO_H

#include "bloomkit/common.h"
#include "bloomkit/hash.h"
#include "bloomkit/sizing.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

typedef struct bk_cuckoo bk_cuckoo;

#define BK_CUCKOO_SLOTS_PER_BUCKET 4u
#define BK_CUCKOO_MAX_KICKS 500u
/* The load factor the sizing aims at, at capacity (the paper's 95% for
 * 4-slot buckets), reached by capacity + BK_CUCKOO_SLACK_SIGMAS sqrt(capacity)
 * keys: the slack absorbs the Poisson fluctuation of small tables (see
 * bk_cuckoo_create). */
#define BK_CUCKOO_DESIGN_LOAD 0.95
#define BK_CUCKOO_SLACK_SIGMAS 3.0

/*
 * Creates an empty filter.  Sizing:
 *   fingerprint bits: .fingerprint_bits if set (8, 12 or 16, else
 *     BK_EINVAL); else, with .bits_per_key, the widest of 8/12/16 that fits
 *     bits_per_key * 0.95; else the narrowest whose predicted FPR at 95% load,
 *     bk_cuckoo_predicted_fpr(0.95, f), is at most .fpr (default 0.01):
 *     8 bits down to p = 2.94%, 12 bits to 0.185%, 16 bits to 1.16e-4.
 *     A smaller .fpr is BK_ERANGE (use a Bloom or fuse filter).
 *   buckets: floor(.bits / (4 f)) when .bits is set (.hashes is ignored);
 *     else ceil((n + 3 sqrt(n)) / (4 * 0.95)) for capacity n: 95% load
 *     with three standard deviations of slack, so that adding n keys
 *     succeeds (measured: no BK_EFULL in 24,400 filters of 1 to 20,000
 *     keys; without the slack 0.35-0.95% of filters of 10-500 keys filled
 *     early).  Load at capacity: 0.71 for n = 100, 0.87 for 1,000, 0.92
 *     for 10,000, 0.947 for 10^6.  Any count from 1 up (not only powers
 *     of two); BK_ERANGE beyond BK_MAX_BITS bits.
 * Other errors: BK_EINVAL for NULL, capacity 0, unknown flags or
 * algorithm, BK_EUNSUPPORTED for BK_FLAG_CONCURRENT, BK_EKEY for SipHash
 * without a key, BK_ENOMEM.  On error *out is untouched.
 */
bk_status bk_cuckoo_create(const bk_params *params, bk_cuckoo **out);

/* Releases the filter; NULL is accepted. */
void bk_cuckoo_free(bk_cuckoo *filter);

/* A new, independent (writable) filter with the same contents and stash. */
bk_status bk_cuckoo_copy(const bk_cuckoo *filter, bk_cuckoo **out);

/* Empties table and stash.  BK_EIMMUTABLE if read-only. */
bk_status bk_cuckoo_clear(bk_cuckoo *filter);

/* The filter's hash of a key: what the *_hash functions take. */
bk_hash bk_cuckoo_hash(const bk_cuckoo *filter, const void *key, size_t len);

/* Stores one more copy of the key's fingerprint.  *was_new (may be NULL):
 * whether the key was reported absent before.  BK_EFULL when the stash is
 * occupied (nothing changes; every stored key stays present).  BK_EINVAL
 * for NULL filter or key (with len > 0); BK_EIMMUTABLE if read-only. */
bk_status bk_cuckoo_add(bk_cuckoo *filter, const void *key, size_t len, bool *was_new);
bk_status bk_cuckoo_add_hash(bk_cuckoo *filter, bk_hash hash, bool *was_new);

/* Stores the key only if it is not reported present (*was_new says which).
 * See the warning at the top about combining this with remove.  Errors as
 * bk_cuckoo_add; a key already present gives BK_OK even when full. */
bk_status bk_cuckoo_add_unique(bk_cuckoo *filter, const void *key, size_t len, bool *was_new);
bk_status bk_cuckoo_add_unique_hash(bk_cuckoo *filter, bk_hash hash, bool *was_new);

/* Removes one copy of the key's fingerprint.  ONLY SAFE FOR A KEY KNOWN TO
 * BE PRESENT (see the top of this header).  BK_ENOTFOUND if no copy is
 * stored (nothing changes).  If the stash was occupied, its fingerprint is
 * moved back into the table, which makes room for adds again. */
bk_status bk_cuckoo_remove(bk_cuckoo *filter, const void *key, size_t len);
bk_status bk_cuckoo_remove_hash(bk_cuckoo *filter, bk_hash hash);

/* True if the key's fingerprint is in one of its two buckets or the stash. */
bool bk_cuckoo_contains(const bk_cuckoo *filter, const void *key, size_t len);
bool bk_cuckoo_contains_hash(const bk_cuckoo *filter, bk_hash hash);

/* Copies of the key's fingerprint stored in its buckets and the stash: an
 * upper bound on adds minus removes of the key (exact unless other keys
 * share its fingerprint and a bucket). */
bk_status bk_cuckoo_count(const bk_cuckoo *filter, const void *key, size_t len, uint64_t *count);
bk_status bk_cuckoo_count_hash(const bk_cuckoo *filter, bk_hash hash, uint64_t *count);

/* Batch forms.  contains: a chunk of keys is hashed, both buckets of each
 * key prefetched, then probed; same answers as bk_cuckoo_contains.
 * add_batch adds in order and stops at the first error (BK_EFULL), having
 * added the keys before it; *new_count counts the keys reported new. */
bk_status bk_cuckoo_add_batch(bk_cuckoo *filter, const bk_key *keys, size_t count,
                              size_t *new_count);
bk_status bk_cuckoo_add_hash_batch(bk_cuckoo *filter, const bk_hash *hashes, size_t count,
                                   size_t *new_count);
size_t bk_cuckoo_contains_batch(const bk_cuckoo *filter, const bk_key *keys, size_t count,
                                bool *results);
size_t bk_cuckoo_contains_hash_batch(const bk_cuckoo *filter, const bk_hash *hashes,
                                     size_t count, bool *results);

/* Where a key lives: its fingerprint (never 0) and its two buckets
 * (bucket2 = bk_cuckoo_alternate(filter, bucket1, fingerprint)). */
void bk_cuckoo_locate(const bk_cuckoo *filter, bk_hash hash, uint32_t *fingerprint,
                      uint64_t *bucket1, uint64_t *bucket2);
/* The other bucket of `fingerprint` when it is in `bucket`; applying it
 * twice gives `bucket` back. */
uint64_t bk_cuckoo_alternate(const bk_cuckoo *filter, uint64_t bucket, uint32_t fingerprint);

/* Parameters and state. */
uint64_t bk_cuckoo_buckets(const bk_cuckoo *filter);
uint64_t bk_cuckoo_slots(const bk_cuckoo *filter);           /* 4 x buckets */
unsigned bk_cuckoo_fingerprint_bits(const bk_cuckoo *filter); /* 8, 12 or 16 */
uint64_t bk_cuckoo_capacity(const bk_cuckoo *filter);
double bk_cuckoo_target_fpr(const bk_cuckoo *filter);   /* predicted FPR at capacity */
uint64_t bk_cuckoo_keys_added(const bk_cuckoo *filter); /* fingerprints stored */
const bk_hasher *bk_cuckoo_hasher(const bk_cuckoo *filter);
bool bk_cuckoo_stash_occupied(const bk_cuckoo *filter);  /* full: adds give BK_EFULL */
double bk_cuckoo_load_factor(const bk_cuckoo *filter);   /* stored / slots */
double bk_cuckoo_current_fpr(const bk_cuckoo *filter);   /* predicted at the current load */

/* Everything `bloomkit info` shows: bits = slots x fingerprint bits (the
 * table's memory), hashes 0, load_factor and fill_ratio = stored / slots,
 * keys_estimated = stored (exact), fingerprint_bits; past_design_point
 * once more keys than the capacity are stored or the stash is occupied. */
void bk_cuckoo_stats(const bk_cuckoo *filter, bk_stats *out);

/* The false-positive rate at a load factor (0..1) with f-bit fingerprints:
 * a query compares its fingerprint with the 2 x 4 slots of its buckets,
 * each occupied with probability `load` and then matching with probability
 * 1/(2^f - 1):   p = 1 - (1 - 1/(2^f - 1))^(8 load)  ~  8 load / 2^f,
 * i.e. 2b/2^f at full load (Fan et al. 2014, eq. for b = 4). */
double bk_cuckoo_predicted_fpr(double load, unsigned fingerprint_bits);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_CUCKOO_H */
