/*
 * bloomkit/bloom_inline.h -- one-key queries of the classic Bloom filter
 * compiled into the caller's loop.
 *
 * bk_bloom_contains and bk_filter_contains are calls; a loop that asks
 * about one key per step can take a view of the filter once and query it
 * with the inline functions below instead: the key's hash, its k probe
 * positions (enhanced double hashing, bloomkit/hash_inline.h) and their
 * loads all sit in the loop, with no call:
 *
 *     bk_bloom_view view;
 *     if (bk_bloom_view_init(filter, &view) == BK_OK)
 *         for (size_t i = 0; i < n; i++)
 *             hits += bk_bloom_view_contains(&view, &ids[i], sizeof ids[i]);
 *
 * bk_bloom_view_contains_hash takes the key's 128-bit hash instead.
 *
 * The view serves the inline hashes, XXH3 (the default) and XXH64:
 * bk_bloom_view_init returns BK_EUNSUPPORTED for a filter keyed with
 * SipHash, a library call (a call anywhere in the loop, even one never
 * taken, costs every query; bloomkit/sbbf_inline.h has the figures).  Pass
 * a fixed key width as a constant, as above: the compiler then keeps only
 * the hash's code for that length.
 *
 * The answers are bk_bloom_contains's, bit for bit: src/bloom.c tests its
 * bits with bk_bloom_test_probes below, and tests/test_inline.c compares
 * view and library.  As the library does, a filter bigger than 32 MiB (read
 * from memory, not a cache) stops after the first two probes when one of
 * them is 0, and a smaller one reads all k without a branch (src/bloom.c,
 * test_bits, has the measurements behind both).
 *
 * Measured on the Zen 5 host (2026-12-03, a driver, k = 7, 8-byte keys,
 * 4e6 queries, best of 5 passes alternating the ways on one filter):
 *     keys     filter   through bk_bloom_contains   view     libbloom
 *     3x10^7   36 MB    111.5 / 84.0 ns             81.5 / 55.9   132.1 / 108.1
 *     10^8    120 MB    146.8 / 96.6                95.6 / 66.8   241.5 / 134.3
 * (present / absent).  In bloomkit-bench (two runs, 3x10^7 and 10^8 keys,
 * int64 and str16, a slow-memory stretch) the view took 111-145 ns present
 * and 84-116 absent against 129-164 and 120-147 through the call: 6-30%
 * less in every pair.  At these sizes every probe is a memory read, and a
 * loop without calls keeps more queries' reads in flight at once.
 *
 * A view holds the filter's word pointer: it sees later adds and must not
 * outlive the filter (nor the mapping of a filter read with bk_filter_map).
 */
#ifndef BLOOMKIT_BLOOM_INLINE_H
#define BLOOMKIT_BLOOM_INLINE_H

#include "bloomkit/bloom.h"
#include "bloomkit/hash_inline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A filter with more bytes than this stops a one-key query after the first
 * BK_BLOOM_EXIT_EARLY_PROBES probes when one of them is 0. */
#define BK_BLOOM_EXIT_EARLY_BYTES ((size_t)32 << 20)
#define BK_BLOOM_EXIT_EARLY_PROBES 2u

typedef struct bk_bloom_view {
    const uint64_t *words;            /* ceil(m / 64) words */
    uint64_t bits;                    /* m */
    unsigned hashes;                  /* k */
    bool exit_early;                  /* more than BK_BLOOM_EXIT_EARLY_BYTES */
    bk_hash_algorithm hash_algorithm; /* BK_HASH_XXH3 or BK_HASH_XXH64 */
    uint64_t hash_seed;
} bk_bloom_view;

/* Fills *view from a filter.  BK_EINVAL if either is NULL; BK_EUNSUPPORTED
 * for a SipHash filter.  On error *view is untouched. */
bk_status bk_bloom_view_init(const bk_bloom *filter, bk_bloom_view *view);

/* Whether all k bits of `hash` are set in words[0..m).  Loads are relaxed
 * atomics: plain moves on x86 and ARM, and race-free against the atomic
 * adds of a BK_FLAG_CONCURRENT filter. */
static BK_ALWAYS_INLINE bool bk_bloom_test_probes(const uint64_t *words, uint64_t bits,
                                                  unsigned hashes, bool exit_early,
                                                  bk_hash hash)
{
    bk_probe probe = bk_probe_start(hash);
    uint64_t all = 1;
    unsigned i = 0;
    if (exit_early) {
        unsigned first =
            hashes < BK_BLOOM_EXIT_EARLY_PROBES ? hashes : BK_BLOOM_EXIT_EARLY_PROBES;
        for (; i < first; i++) {
            uint64_t position = bk_probe_next(&probe, bits);
            all &= __atomic_load_n(&words[position >> 6], __ATOMIC_RELAXED) >> (position & 63);
        }
        if ((all & 1) == 0)
            return false;
    }
#pragma GCC unroll 4 /* gcc and clang: 10-15% off a cache-resident query */
    for (; i < hashes; i++) {
        uint64_t position = bk_probe_next(&probe, bits);
        all &= __atomic_load_n(&words[position >> 6], __ATOMIC_RELAXED) >> (position & 63);
    }
    return all & 1;
}

/* bk_bloom_contains_hash(filter, hash), inline. */
static BK_ALWAYS_INLINE bool bk_bloom_view_contains_hash(const bk_bloom_view *view, bk_hash hash)
{
    return bk_bloom_test_probes(view->words, view->bits, view->hashes, view->exit_early, hash);
}

/* bk_bloom_contains(filter, key, len), inline; key may be NULL when len is 0. */
static BK_ALWAYS_INLINE bool bk_bloom_view_contains(const bk_bloom_view *view, const void *key,
                                                    size_t len)
{
    return bk_bloom_view_contains_hash(
        view, bk_hash_xxh3_or_xxh64(view->hash_algorithm, key, len, view->hash_seed));
}

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_BLOOM_INLINE_H */
