/*
 * bloomkit/fuse_inline.h -- one-key xor and binary fuse queries compiled
 * into the caller's loop.
 *
 * As bloomkit/sbbf_inline.h for the split-block filter: take a view of a
 * built filter once, then query it with bk_fuse_view_contains, which the
 * compiler folds into the loop (hash, three or four slot loads, one
 * compare) instead of the one or two calls per key of bk_fuse_contains and
 * bk_filter_contains.
 *
 *     bk_fuse_view view;
 *     if (bk_fuse_view_init(filter, &view) == BK_OK)
 *         for (size_t i = 0; i < n; i++)
 *             hits += bk_fuse_view_contains(&view, keys[i].data, keys[i].len);
 *
 * The functions below are the query of src/fuse.c itself (it includes this
 * header; its opening comment derives the formulas), so the answers are
 * bk_fuse_contains's, bit for bit; tests/test_inline.c checks them on every
 * kind.  For the hash of attempt seed a and slot geometry (L, mask, range):
 *
 *     h   = mix64((h1 ^ rotl(h2, 32)) + a)
 *     fuse:  h_0 = reduce(h, range), h_1 = (h_0 + L) ^ ((h >> 18) & mask),
 *            h_2 = (h_0 + 2L) ^ (h & mask),
 *            h_3 = (h_0 + 3L) ^ (((h * 0x9E3779B97F4A7C15) >> 46) & mask)  (4-wise)
 *     xor8:  h_i = reduce(rotl(h, 21 i), L) + i L    (L = s/3, range = L)
 *     present  <=>  low w bits of h ^ (h >> 32) == F[h_0] ^ F[h_1] ^ F[h_2] (^ F[h_3])
 *
 * Measured on the Zen 5 host (2026-12-03, fuse8, 8-byte keys): docs/STATIC.md.
 *
 * A view holds the filter's fingerprint pointer: valid while the filter
 * lives (a built filter never changes); it must not outlive it.
 */
#ifndef BLOOMKIT_FUSE_INLINE_H
#define BLOOMKIT_FUSE_INLINE_H

#include "bloomkit/fuse.h"
#include "bloomkit/hash_inline.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bk_fuse_view {
    const void *fingerprints;      /* uint8_t, or uint16_t for fuse16 */
    uint64_t seed;                 /* seed of the attempt that peeled */
    uint64_t segment_count_length; /* fuse: range of h_0; xor8: s/3 */
    uint32_t segment_length;       /* fuse: L, a power of two; xor8: s/3 */
    uint32_t segment_mask;         /* fuse: L - 1; xor8: 0 */
    bk_kind kind;                  /* xor8, fuse8, fuse16 or fuse8_4 */
    bk_hasher hasher;
} bk_fuse_view;

/* Fills *view from a built filter.  BK_EINVAL if either is NULL. */
bk_status bk_fuse_view_init(const bk_fuse *filter, bk_fuse_view *view);

static inline uint64_t bk_fuse_rotl64(uint64_t x, unsigned r)
{
    return (x << r) | (x >> ((64 - r) & 63));
}

/* The 64-bit hash of a key under attempt seed `seed`: all 128 bits folded,
 * then mixed, so a caller's hashes need randomness in either half only. */
static BK_ALWAYS_INLINE uint64_t bk_fuse_attempt_hash(bk_hash hash, uint64_t seed)
{
    return bk_mix64((hash.h1 ^ bk_fuse_rotl64(hash.h2, 32)) + seed);
}

static BK_ALWAYS_INLINE uint32_t bk_fuse_fingerprint(uint64_t hash, bk_kind kind)
{
    uint64_t folded = hash ^ (hash >> 32);
    return (uint32_t)(kind == BK_KIND_FUSE16 ? (uint16_t)folded : (uint8_t)folded);
}

/* The d slots of a 64-bit hash; where `kind` is a constant the compiler
 * keeps only that kind's code.  slot[3] is 0 for 3-wise kinds. */
static BK_ALWAYS_INLINE void bk_fuse_slots_of(uint64_t hash, uint32_t segment_length,
                                           uint32_t segment_mask,
                                           uint64_t segment_count_length, bk_kind kind,
                                           uint64_t slot[4])
{
    if (kind == BK_KIND_XOR8) {
        uint64_t block = segment_length;
        slot[0] = bk_reduce(hash, block);
        slot[1] = bk_reduce(bk_fuse_rotl64(hash, 21), block) + block;
        slot[2] = bk_reduce(bk_fuse_rotl64(hash, 42), block) + 2 * block;
        slot[3] = 0;
        return;
    }
    uint64_t length = segment_length, mask = segment_mask;
    uint64_t first = bk_reduce(hash, segment_count_length);
    slot[0] = first;
    slot[1] = (first + length) ^ ((hash >> 18) & mask);
    slot[2] = (first + 2 * length) ^ (hash & mask);
    slot[3] = kind == BK_KIND_FUSE8_4
                  ? (first + 3 * length) ^ (((hash * 0x9E3779B97F4A7C15ULL) >> 46) & mask)
                  : 0;
}

/* F[h_0] ^ F[h_1] ^ F[h_2] (^ F[h_3]). */
static BK_ALWAYS_INLINE uint32_t bk_fuse_stored_xor(const void *fingerprints,
                                                    const uint64_t slot[4], bk_kind kind)
{
    if (kind == BK_KIND_FUSE16) {
        const uint16_t *f = (const uint16_t *)fingerprints;
        return (uint32_t)(f[slot[0]] ^ f[slot[1]] ^ f[slot[2]]);
    }
    const uint8_t *f = (const uint8_t *)fingerprints;
    uint32_t x = (uint32_t)(f[slot[0]] ^ f[slot[1]] ^ f[slot[2]]);
    if (kind == BK_KIND_FUSE8_4)
        x ^= f[slot[3]];
    return x;
}

/* The query of one kind (a constant where inlined). */
static BK_ALWAYS_INLINE bool bk_fuse_view_contains_kind(const bk_fuse_view *view,
                                                        bk_hash hash, bk_kind kind)
{
    uint64_t h = bk_fuse_attempt_hash(hash, view->seed);
    uint64_t slot[4];
    bk_fuse_slots_of(h, view->segment_length, view->segment_mask, view->segment_count_length,
                  kind, slot);
    return bk_fuse_fingerprint(h, kind) == bk_fuse_stored_xor(view->fingerprints, slot, kind);
}

/* bk_fuse_contains_hash(filter, hash), inline. */
static BK_ALWAYS_INLINE bool bk_fuse_view_contains_hash(const bk_fuse_view *view, bk_hash hash)
{
    switch (view->kind) {
    case BK_KIND_XOR8: return bk_fuse_view_contains_kind(view, hash, BK_KIND_XOR8);
    case BK_KIND_FUSE16: return bk_fuse_view_contains_kind(view, hash, BK_KIND_FUSE16);
    case BK_KIND_FUSE8_4: return bk_fuse_view_contains_kind(view, hash, BK_KIND_FUSE8_4);
    default: return bk_fuse_view_contains_kind(view, hash, BK_KIND_FUSE8);
    }
}

/* bk_fuse_contains(filter, key, len), inline; key may be NULL when len is 0. */
static BK_ALWAYS_INLINE bool bk_fuse_view_contains(const bk_fuse_view *view, const void *key,
                                                   size_t len)
{
    return bk_fuse_view_contains_hash(view, bk_hash_inline(&view->hasher, key, len));
}

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_FUSE_INLINE_H */
