/*
 * bloomkit/bloom_inline.h -- one-key queries of the classic Bloom filter
 * compiled into the caller's loop.
 *
 * bk_filter_contains is a call; a loop that asks
 * about one key per step can take a view of the filter once and query it
 * with the inline functions below instead: the key's hash, its k probe
 * positions (enhanced double hashing, bloomkit/hash_inline.h) and their
 * loads all sit in the loop, with no call:
 *
 *     struct bk_bloom_view view;
 *     if (bk_bloom_view(filter, &view) == BK_OK)
 *         for (size_t i = 0; i < n; i++)
 *             hits += bk_bloom_view_contains(&view, &ids[i], sizeof ids[i]);
 *
 * bk_bloom_view_contains_hash takes the key's 128-bit hash instead.
 *
 * The view serves the inline hashes, XXH3 (the default) and XXH64:
 * bk_bloom_view returns BK_EUNSUPPORTED for a filter keyed with
 * SipHash, a library call (a call anywhere in the loop, even one never
 * taken, costs every query).  Pass
 * a fixed key width as a constant, as above: the compiler then keeps only
 * the hash's code for that length.
 *
 * The answers are bk_filter_contains's, bit for bit: src/bloom.c tests its
 * bits with the same bk_bloom_test_probes (bloomkit/detail/bloom_detail.h,
 * with the probe walk and the gather form: not an interface), and tests/test_inline.c compares
 * view and library.  The scalar loop, as the library's portable and BMI2
 * builds, stops after the first two probes of a filter bigger than 32 MiB
 * (read from memory, not a cache) when one of them is 0, and reads all k
 * of a smaller one without a branch (src/bloom.c, test_bits, says why);
 * the gather form reads all k.
 *
 * Above the caches every probe is a memory read, and a loop without calls
 * keeps more queries' reads in flight at once: the view is faster than the
 * call there, and faster than libbloom's bloom_check (docs/PERFORMANCE.md).
 *
 * Compiled with AVX-512 F and DQ, the probe test reads the k words with
 * gathers, eight at a time (the gather form below), same answers.
 *
 * A view holds the filter's word pointer: it sees later adds and must not
 * outlive the filter (nor the mapping of a filter read with bk_filter_map).
 */
#ifndef BLOOMKIT_BLOOM_INLINE_H
#define BLOOMKIT_BLOOM_INLINE_H

#include "bloomkit/bloom.h"
#include "bloomkit/detail/bloom_detail.h"
#include "bloomkit/filter.h"
#include "bloomkit/hash_inline.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* The view type is `struct bk_bloom_view` (the getter below has its name,
 * so there is no typedef). */
struct bk_bloom_view {
    const uint64_t *words;            /* ceil(m / 64) words */
    uint64_t bits;                    /* m */
    unsigned hashes;                  /* k */
    bool exit_early;                  /* more than BK_BLOOM_EXIT_EARLY_BYTES */
    bk_hash_algorithm hash_algorithm; /* XXH3, XXH64 or MIX64 */
    uint64_t hash_seed;
};

/* Fills *view from a classic Bloom filter.  BK_EINVAL if either is NULL;
 * BK_EKIND for a filter of another kind; BK_EUNSUPPORTED for a SipHash
 * filter.  On error *view is untouched. */
bk_status bk_bloom_view(const bk_filter *filter, struct bk_bloom_view *view);

/* bk_filter_contains_hash(filter, hash), inline. */
static BK_ALWAYS_INLINE bool bk_bloom_view_contains_hash(const struct bk_bloom_view *view,
                                                         bk_hash hash)
{
    return bk_bloom_test_probes(view->words, view->bits, view->hashes, view->exit_early, hash);
}

/* bk_filter_contains(filter, key, len), inline; key may be NULL when len is 0. */
static BK_ALWAYS_INLINE bool bk_bloom_view_contains(const struct bk_bloom_view *view,
                                                    const void *key, size_t len)
{
    return bk_bloom_view_contains_hash(
        view, bk_hash_unkeyed(view->hash_algorithm, key, len, view->hash_seed));
}

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_BLOOM_INLINE_H */
