/*
 * bloomkit/filter.h -- one handle over every kind of filter.
 *
 * bk_filter wraps any kind (bloom, blocked, sbbf, counting, cuckoo, xor and
 * fuse, scalable, window) behind one set of calls, so a program -- the
 * `bloomkit` command, the Redis module -- can work with a filter whose kind
 * it learns at run time (for example from a file).  Operations a kind does
 * not offer return BK_EUNSUPPORTED (remove on a Bloom filter) or
 * BK_EIMMUTABLE (add on a static xor/fuse filter).
 *
 * It is the API for every operation the kinds share; a kind's own header
 * keeps only what is specific to it (an inline view, a Parquet export),
 * each call taking a bk_filter and checking its kind.  The kinds of a
 * build: bk_kind_list.
 */
#ifndef BLOOMKIT_FILTER_H
#define BLOOMKIT_FILTER_H

#include "bloomkit/common.h"
#include "bloomkit/hash.h"
#include "bloomkit/sizing.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

typedef struct bk_filter bk_filter;

/* "bloom", "blocked", ... for a kind this build implements; NULL for any
 * other value (an unknown one, or a kind this build lacks). */
const char *bk_kind_name(bk_kind kind);

/* The kinds this build implements, in the library's registry order: writes
 * the first min(count, capacity) of them to out (which may be NULL when
 * capacity is 0) and returns count, how many there are.  A program that
 * serves every kind loops over this list rather than over enum values. */
size_t bk_kind_list(bk_kind *out, size_t capacity);

/* The kind named `name`; BK_EKIND if there is none, or if this build does
 * not implement it. */
bk_status bk_kind_from_name(const char *name, bk_kind *out);

/* True if this build implements `kind`. */
bool bk_kind_available(bk_kind kind);

/* True for static kinds, built once from a key set (xor, fuse). */
bool bk_kind_is_static(bk_kind kind);

/* An empty filter of a dynamic kind.  Static kinds: BK_EIMMUTABLE (use
 * bk_filter_build).  First the checks common to every kind: flags other
 * than BK_FLAG_* (BK_EINVAL); BK_FLAG_CONCURRENT on a kind whose adds
 * cannot take it -- counting, cuckoo, scalable, window -- or a kind's own
 * flag on another kind: BK_FLAG_PARQUET_SIZE except on sbbf, BK_FLAG_AUTO_GROW
 * except on quotient (BK_EUNSUPPORTED);
 * the hash algorithm, seed and key (BK_EINVAL for an unknown algorithm or
 * a key without SipHash, BK_EKEY for SipHash without a key).  Then the
 * kind's own errors, as its create. */
bk_status bk_filter_create(bk_kind kind, const bk_params *params, bk_filter **out);

/* A filter of any kind holding exactly `keys` (static kinds are built;
 * dynamic kinds are created with .capacity defaulting to count and filled). */
bk_status bk_filter_build(bk_kind kind, const bk_params *params, const bk_key *keys,
                          size_t count, bk_filter **out);

/* bk_filter_build over packed keys: `count` keys of `key_len` bytes each,
 * back to back at `keys` (as bk_filter_add_packed takes them), hashed a
 * chunk at a time, with no bk_key per key: the same filter, byte for byte,
 * as bk_filter_build of the same keys.  BK_EINVAL when keys is NULL with
 * bytes to read or count * key_len overflows a size_t; otherwise errors as
 * bk_filter_build's. */
bk_status bk_filter_build_packed(bk_kind kind, const bk_params *params, const void *keys,
                                 size_t key_len, size_t count, bk_filter **out);

/* The same from the keys' hashes, made with the hasher `params` asks for
 * (bk_hasher_from_params, then bk_hash_key or bk_hash_packed): for a
 * program that hashes each key as it arrives and builds once the set is
 * complete (a storage engine's per-file filter, which sees each key only
 * during one call).  Duplicates are allowed.  The filter is the one
 * bk_filter_build makes from the keys, byte for byte.  Errors as
 * bk_filter_build; BK_EINVAL also when hashes is NULL with count > 0, and
 * when the kind would hash with another algorithm than `params` names (sbbf
 * hashes with XXH64 by default: give it .hash_algorithm = BK_HASH_XXH64). */
bk_status bk_filter_build_hashes(bk_kind kind, const bk_params *params, const bk_hash *hashes,
                                 size_t count, bk_filter **out);

void bk_filter_free(bk_filter *filter);
bk_status bk_filter_copy(const bk_filter *filter, bk_filter **out);
bk_status bk_filter_clear(bk_filter *filter);

bk_kind bk_filter_kind(const bk_filter *filter);
const bk_hasher *bk_filter_hasher(const bk_filter *filter);

bk_hash bk_filter_hash(const bk_filter *filter, const void *key, size_t len);

bk_status bk_filter_add(bk_filter *filter, const void *key, size_t len, bool *was_new);
bk_status bk_filter_add_hash(bk_filter *filter, bk_hash hash, bool *was_new);
bool bk_filter_contains(const bk_filter *filter, const void *key, size_t len);
bool bk_filter_contains_hash(const bk_filter *filter, bk_hash hash);

/* BK_ENOTFOUND if the key is definitely absent (nothing changes). */
bk_status bk_filter_remove(bk_filter *filter, const void *key, size_t len);
/* Upper bound on how many times the key was added. */
bk_status bk_filter_count(const bk_filter *filter, const void *key, size_t len, uint64_t *count);

/* Integer keys: each call is its byte-key sibling on the 8 bytes that hold
 * `key` little-endian (bk_filter_add_u64(f, k, w) is bk_filter_add(f, le, 8,
 * w) with le those bytes), for every hash algorithm and every kind, on
 * every machine; so either form finds what the other added, and a file
 * moves between little- and big-endian machines.  No key bytes are stored
 * or read: the hash is bk_hash_u64 (bloomkit/hash_inline.h) inline, then
 * the kind's operation.  Fastest with BK_HASH_MIX64, the integer mixer.
 * Errors as the byte-key calls': BK_EINVAL for a NULL filter (contains:
 * false), BK_EIMMUTABLE / BK_EUNSUPPORTED where the kind has no such
 * operation, BK_ENOTFOUND from remove for a key definitely absent. */
bk_status bk_filter_add_u64(bk_filter *filter, uint64_t key, bool *was_new);
bool bk_filter_contains_u64(const bk_filter *filter, uint64_t key);
bk_status bk_filter_remove_u64(bk_filter *filter, uint64_t key);
bk_status bk_filter_count_u64(const bk_filter *filter, uint64_t key, uint64_t *count);

/* Batches: count keys at once, hashed and their memory requested ahead of
 * the probes, so that a filter bigger than the caches overlaps its misses.
 * add: *new_count (may be NULL) gets the number of keys that were new; on
 * an error (BK_EFULL, ...) the keys before the failing one are in and
 * *new_count counts them.  contains: results (may be NULL) gets one answer
 * per key; returns how many were present.  BK_EINVAL / 0 when keys is NULL
 * with count > 0, or a key has NULL data and a non-zero length (then
 * nothing changes). */
bk_status bk_filter_add_batch(bk_filter *filter, const bk_key *keys, size_t count,
                              size_t *new_count);
size_t bk_filter_contains_batch(const bk_filter *filter, const bk_key *keys, size_t count,
                                bool *results);

/* The same over packed keys: `count` keys of `key_len` bytes each, stored
 * back to back at `keys` (a column of fixed-width values: 64-bit ids,
 * UUIDs, ...), with no bk_key per key.  Answers and adds exactly as the
 * bk_key batches over the same keys; hashing reads eight 8- or 16-byte
 * keys with one or two vector loads on AVX-512 machines.  While it probes
 * one chunk of keys it asks the CPU to fetch as many bytes after it (a
 * prefetch hint, which never faults; at most 8 KiB), past the end of the
 * array too: a program that walks a long column in calls of a thousand
 * keys or so finds the next call's keys in the cache.  No byte outside
 * the array is read.
 * BK_EINVAL / 0 when keys is NULL with bytes to read, or count * key_len
 * overflows a size_t (then nothing changes). */
bk_status bk_filter_add_packed(bk_filter *filter, const void *keys, size_t key_len, size_t count,
                               size_t *new_count);
size_t bk_filter_contains_packed(const bk_filter *filter, const void *keys, size_t key_len,
                                 size_t count, bool *results);

/* The same over hashes made by bk_filter_hash (or bk_hash_key with this
 * filter's hasher): for a program that hashes each key once and probes
 * several filters with it, or stores hashes instead of keys. */
bk_status bk_filter_add_hash_batch(bk_filter *filter, const bk_hash *hashes, size_t count,
                                   size_t *new_count);
size_t bk_filter_contains_hash_batch(const bk_filter *filter, const bk_hash *hashes,
                                     size_t count, bool *results);

/* dst = dst u src / dst n src.  BK_EINCOMPATIBLE unless same kind and
 * parameters; BK_EUNSUPPORTED where the kind has no set algebra. */
bk_status bk_filter_union(bk_filter *dst, const bk_filter *src);
bk_status bk_filter_intersect(bk_filter *dst, const bk_filter *src);
bk_status bk_filter_estimate_sets(const bk_filter *a, const bk_filter *b, bk_set_estimate *out);

void bk_filter_stats(const bk_filter *filter, bk_stats *out);

/* The design (bits, hashes, bytes, target FPR, bits per key) that
 * bk_filter_create(kind, params) would produce, computed without allocating:
 * what `bloomkit size` prints for each kind.  Errors exactly as create's
 * (for a static kind, as bk_filter_build's given .capacity keys): the same
 * common checks, then the kind's own. */
bk_status bk_kind_design(bk_kind kind, const bk_params *params, bk_stats *out);

/* Fill alarm, common to every kind: BK_OK while the filter is within its
 * design point, BK_EFULL once it is past it, i.e. exactly when
 * bk_filter_fill_status reports anything but BK_FILL_OK. */
bk_status bk_filter_check_fill(const bk_filter *filter);

/* Time for filters whose keys age out by the caller's clock (a window
 * filter created with .window_seconds): moves the filter's clock to `now`
 * (whole seconds, or the unit the window was made in; a `now` before the
 * latest one seen changes nothing), clearing the generations that age out.
 * Later adds are stamped with it, queries and stats answer as of it, and a
 * saved file keeps it.  The library never reads a clock itself: a program
 * that keeps such a filter calls this with its own time before adding or
 * querying (the `bloomkit` command passes the wall clock).
 * BK_EUNSUPPORTED for a filter without such a clock (every other kind, and
 * a window counted in insertions); BK_EIMMUTABLE for a filter read in place
 * from a mapped file (copy it first); BK_ERANGE for now = 2^64 - 1;
 * BK_EINVAL for NULL. */
bk_status bk_filter_advance_clock(bk_filter *filter, uint64_t now);

/* ------------------------------------------------------------------------ */
/* Fill alarms, common to every kind                                        */
/* ------------------------------------------------------------------------ */

/*
 * How full a filter is, relative to what it was built for.  Thresholds:
 *   BK_FILL_OK                 within the design point.
 *   BK_FILL_PAST_DESIGN_POINT  bk_stats.past_design_point: the kind's fill
 *       is beyond what BK_DESIGN_MARGIN (1.05, bloomkit/sizing.h) times its
 *       capacity gives -- for the bit-array kinds, a fill above
 *       1 - e^{-k 1.05 n / m}, i.e. more than 5% more keys than designed;
 *       each kind documents its own test (a scalable chain: when it is at
 *       capacity and may not grow; a window: when a live generation holds
 *       more than 1.05 times its capacity).  The FPR is above the one the
 *       filter was built for, and rising.
 *   BK_FILL_DEGRADED           past the design point AND the FPR estimated
 *       from the fill (bk_stats.current_fpr) is at least
 *       BK_FILL_DEGRADED_FACTOR (10) times the target FPR: rebuild it bigger.
 * While keys are only added the status never goes down, except in a
 * window filter, whose old generations age out (and clear can reset any).
 * `bloomkit info` prints the same test (bk_stats.past_design_point).
 */
typedef enum bk_fill_status {
    BK_FILL_OK = 0,
    BK_FILL_PAST_DESIGN_POINT = 1,
    BK_FILL_DEGRADED = 2
} bk_fill_status;

#define BK_FILL_DEGRADED_FACTOR 10.0

/* The status that a filter's statistics imply (the thresholds above). */
bk_fill_status bk_fill_status_from_stats(const bk_stats *stats);

/* "ok", "past design point", "degraded"; "unknown" otherwise. */
const char *bk_fill_status_name(bk_fill_status status);

/* Polled form: computes the filter's stats (a pass over its memory) and
 * their status.  BK_EINVAL for NULL arguments. */
bk_status bk_filter_fill_status(const bk_filter *filter, bk_fill_status *out);

/*
 * Callback form.  `alarm(filter, status, context)` is called once, from
 * inside the add (bk_filter_add, _add_hash, _add_batch) after which the
 * filter's status first leaves BK_FILL_OK, or from an add that fails with
 * BK_EFULL; `status` is the new status.  The alarm must not free the filter
 * or add to it; it may read it (stats, contains).
 *
 * Cost: kinds that count their keys exactly (scalable, window) answer the
 * test in O(1) and it is made after every new key.  For the others the
 * handle does not recompute the stats (a pass over the memory) after every
 * add: it counts new keys (adds that report was_new) and checks after
 * max(1, floor(d / 4)) of them, d being the smallest distance in keys from
 * the load (the fill's key estimate, or the keys added) to a threshold (the
 * capacity, then BK_DESIGN_MARGIN times it).  A new key raises a bit-array
 * filter's fill estimate by at most 1/(1 - fill) (about 2 near the design
 * point), so the check lands on the very add that crosses the threshold;
 * near it every new key is checked.
 *
 * Setting an alarm (or NULL to remove it) re-arms it: the next new key is
 * checked, and an alarm set on a filter already past its design point
 * fires then.  bk_filter_clear re-arms it too.  BK_EINVAL for a NULL filter.
 *
 * Concurrent adds (BK_FLAG_CONCURRENT): the alarm still fires exactly
 * once.  The countdown is an atomic counter; the thread whose new keys run
 * it out claims the check with a compare-and-swap (setting it to 0, so no
 * other thread can claim it), computes the stats with atomic loads, and
 * either re-arms the countdown or calls the alarm, from its own add, while
 * other threads may still be adding.  During that check other threads'
 * new keys are not counted, so under contention the alarm may come a few
 * keys after the threshold rather than on the very add that crossed it.
 * bk_filter_set_fill_alarm and bk_filter_clear must not run concurrently
 * with adds.
 */
typedef void (*bk_fill_alarm)(bk_filter *filter, bk_fill_status status, void *context);
bk_status bk_filter_set_fill_alarm(bk_filter *filter, bk_fill_alarm alarm, void *context);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_FILTER_H */
