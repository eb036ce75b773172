/*
 * bloomkit/fuse_inline.h -- one-key queries of the static filters (xor8,
 * fuse8, fuse16, fuse8_4) compiled into the caller's loop.
 *
 * bk_filter_contains is a call; a loop that asks about one key per step --
 * an SSTable reader checking each point lookup, a password checker -- can
 * take a view of the filter once and query it with the inline functions
 * below instead.  The whole query then sits in the
 * loop: the 64-bit hash taken from the 128-bit one, the three (four) slots,
 * their loads and the compare, with no call:
 *
 *     struct bk_fuse_view view;
 *     if (bk_fuse_view(filter, &view) == BK_OK)
 *         for (size_t i = 0; i < n; i++)
 *             hits += bk_fuse_view_contains(&view, &ids[i], sizeof ids[i]);
 *
 * bk_fuse_view_contains_hash takes the key's 128-bit hash (bk_filter_hash,
 * or bk_hash_inline of bloomkit/hash_inline.h) instead of its bytes, and
 * bk_fuse_view_contains_u64 an integer key (bk_filter_contains_u64's).
 * An integer key (or any 8-byte key) of a fuse8 filter hashed with MIX64
 * whose first attempt peeled -- what bloomkit builds for integer keys --
 * takes one test of the view (mix64_fuse8) to a straight path: the
 * mixer's h1 (that first attempt's seed is 0), the slots, three loads.
 *
 * The view serves the inline hashes, XXH3 (the default), XXH64 and MIX64:
 * bk_fuse_view returns BK_EUNSUPPORTED for a filter keyed with
 * SipHash, a library call (a call anywhere in the loop, even one never
 * taken, costs every query; see bloomkit/sbbf_inline.h).  For the same
 * reason pass a fixed key width as a constant, as above: the compiler keeps
 * only the hash's code for that length.
 *
 * The answers are bk_filter_contains's, bit for bit: src/fuse.c builds and
 * queries its filters with the functions below, and tests/test_inline.c
 * compares view and library on every static kind.  What the functions
 * compute is drawn in src/fuse.c: the 64-bit hash of a key under the
 * filter's attempt seed a and hash rule,
 *
 *     h    = h1 + a                             unmixed (a first attempt)
 *     h    = mix64((h1 ^ rotl(h2, 32)) + a)     mixed (retries; older files)
 *     f    = low 8 (16) bits of h ^ (h >> 32)
 *     xor8:  slot_i = reduce(rotl(h, 21 i), s/3) + i s/3           i < 3
 *     fuse:  slot_0 = reduce(h, segment_count L)
 *            slot_i = (slot_0 + i L) ^ (offset_i(h) & (L - 1))      i < d
 *     present  <=>  f == F[slot_0] ^ F[slot_1] ^ F[slot_2] (^ F[slot_3])
 *
 * Inline, a query saves the call of bk_filter_contains_hash or
 * bk_filter_contains (docs/PERFORMANCE.md).
 *
 * A view holds the filter's fingerprint pointer: it must not outlive the
 * filter (nor, for a filter read from a mapped file, the mapping).
 */
#ifndef BLOOMKIT_FUSE_INLINE_H
#define BLOOMKIT_FUSE_INLINE_H

#include "bloomkit/filter.h"
#include "bloomkit/fuse.h"
#include "bloomkit/hash_inline.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* The multiplier of fuse8_4's fourth offset (2^64 / golden ratio). */
#define BK_FUSE_GOLDEN_64 0x9E3779B97F4A7C15ULL

/* One view type for the four kinds: `struct bk_fuse_view` (the getter
 * below has its name, as struct stat and stat() share theirs). */
struct bk_fuse_view {
    const void *fingerprints;  /* s entries: uint8_t, uint16_t for fuse16 */
    uint64_t first_slot_range; /* fuse: segment_count * L; xor8: s/3 */
    uint32_t segment_length;   /* fuse: L, a power of two; xor8: s/3 */
    uint32_t segment_mask;     /* fuse: L - 1; xor8: 0 */
    uint64_t attempt_seed;     /* the seed of the attempt that peeled */
    uint64_t mix64_key;        /* bk_fuse_mix64_key(hash_seed) */
    bk_kind kind;
    bk_hash_algorithm hash_algorithm; /* XXH3, XXH64 or MIX64 */
    uint64_t hash_seed;
    bool mixed;       /* the hash rule (bk_fuse_query_hash) */
    bool mix64_fuse8; /* fuse8, MIX64, unmixed, attempt seed 0: an integer
                         key's straight path */
};

/* Fills *view from a filter of any of the four static kinds.  BK_EINVAL if
 * either is NULL; BK_EKIND for a filter of another kind; BK_EUNSUPPORTED
 * for a SipHash filter.  On error *view is untouched. */
bk_status bk_fuse_view(const bk_filter *filter, struct bk_fuse_view *view);

static BK_ALWAYS_INLINE uint64_t bk_fuse_rotl64(uint64_t x, unsigned r)
{
    return (x << r) | (x >> ((64 - r) & 63));
}

/* The 64-bit hash of a key under attempt seed `seed` and the filter's hash
 * rule.  Unmixed (a first attempt): h1 + seed -- every library hash makes
 * h1 uniform, so it is used as it is.  Mixed (retries, whose seeds must
 * give independent-looking hypergraphs, and every file written before the
 * rule existed): all 128 bits folded, seeded and mixed, so caller-supplied
 * hashes need randomness in either half only (src/fuse.c builds those with
 * the mixed rule whenever h1 alone tells fewer keys apart). */
static BK_ALWAYS_INLINE uint64_t bk_fuse_query_hash(bk_hash hash, uint64_t seed, bool mixed)
{
    if (!mixed)
        return hash.h1 + seed;
    return bk_mix64((hash.h1 ^ bk_fuse_rotl64(hash.h2, 32)) + seed);
}

/* BK_HASH_MIX64's seed as the mixer's first step takes it, computed once
 * per filter: the step is value ^ (seed ^ BK_MIX64_H1_OFFSET)
 * (bk_mix64_of_u64). */
static BK_ALWAYS_INLINE uint64_t bk_fuse_mix64_key(uint64_t hash_seed)
{
    return hash_seed ^ BK_MIX64_H1_OFFSET;
}

/* h1 of BK_HASH_MIX64's hash of the integer key `value`, given
 * bk_fuse_mix64_key(seed): bk_mix64_of_u64(value, seed).h1 exactly.  The
 * mixer gets value ^ mix64_key with the seed BK_MIX64_H1_OFFSET, whose xor
 * with the same constant folds to nothing, so the first step is one xor;
 * h2 is dead and not computed.  This and the unmixed rule's add are what a
 * fuse query spends on an integer key before its slots: two multiplies. */
static BK_ALWAYS_INLINE uint64_t bk_fuse_mix64_h1(uint64_t value, uint64_t mix64_key)
{
    return bk_mix64_of_u64(value ^ mix64_key, BK_MIX64_H1_OFFSET).h1;
}

/* The fingerprint of a 64-bit hash (8 bits, 16 for fuse16). */
static BK_ALWAYS_INLINE uint32_t bk_fuse_fingerprint(uint64_t hash, bk_kind kind)
{
    uint64_t folded = hash ^ (hash >> 32);
    return (uint32_t)(kind == BK_KIND_FUSE16 ? (uint16_t)folded : (uint8_t)folded);
}

/* The d slots of a 64-bit hash (slot[3] is 0 unless d = 4); `kind` is a
 * constant where this is inlined, so each kind gets straight-line code. */
static BK_ALWAYS_INLINE void bk_fuse_slots_of(uint64_t hash, bk_kind kind,
                                              uint64_t first_slot_range, uint64_t segment_length,
                                              uint64_t segment_mask, uint64_t slot[4])
{
    if (kind == BK_KIND_XOR8) {
        uint64_t block = segment_length;
        slot[0] = bk_reduce(hash, block);
        slot[1] = bk_reduce(bk_fuse_rotl64(hash, 21), block) + block;
        slot[2] = bk_reduce(bk_fuse_rotl64(hash, 42), block) + 2 * block;
        slot[3] = 0;
        return;
    }
    uint64_t first = bk_reduce(hash, first_slot_range);
    slot[0] = first;
    slot[1] = (first + segment_length) ^ ((hash >> 18) & segment_mask);
    slot[2] = (first + 2 * segment_length) ^ (hash & segment_mask);
    uint64_t offset_3 = ((hash * BK_FUSE_GOLDEN_64) >> 46) & segment_mask;
    slot[3] = kind == BK_KIND_FUSE8_4 ? (first + 3 * segment_length) ^ offset_3 : 0;
}

/* F[slot_0] ^ F[slot_1] ^ F[slot_2] (^ F[slot_3]). */
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

/* The query of one kind (a constant where this is inlined) for the 64-bit
 * hash h of bk_fuse_query_hash. */
static BK_ALWAYS_INLINE bool bk_fuse_view_test(const struct bk_fuse_view *view, uint64_t h,
                                               bk_kind kind)
{
    uint64_t slot[4];
    bk_fuse_slots_of(h, kind, view->first_slot_range, view->segment_length, view->segment_mask,
                     slot);
    return bk_fuse_fingerprint(h, kind) == bk_fuse_stored_xor(view->fingerprints, slot, kind);
}

/* The query of the view's kind for the 64-bit hash h (fuse8, the common
 * kind, tested first and laid out as the straight path). */
static BK_ALWAYS_INLINE bool bk_fuse_view_test_any(const struct bk_fuse_view *view, uint64_t h)
{
    if (__builtin_expect(view->kind == BK_KIND_FUSE8, 1))
        return bk_fuse_view_test(view, h, BK_KIND_FUSE8);
    switch (view->kind) {
    case BK_KIND_XOR8: return bk_fuse_view_test(view, h, BK_KIND_XOR8);
    case BK_KIND_FUSE16: return bk_fuse_view_test(view, h, BK_KIND_FUSE16);
    default: return bk_fuse_view_test(view, h, BK_KIND_FUSE8_4);
    }
}

/* bk_filter_contains_hash(filter, hash), inline. */
static BK_ALWAYS_INLINE bool bk_fuse_view_contains_hash(const struct bk_fuse_view *view,
                                                        bk_hash hash)
{
    return bk_fuse_view_test_any(view,
                                 bk_fuse_query_hash(hash, view->attempt_seed, view->mixed));
}

/* The query of the integer key `value` for a view of mix64_fuse8: the
 * mixer's h1 is the query hash (the unmixed rule with attempt seed 0),
 * then fuse8's slots; nothing left to test. */
static BK_ALWAYS_INLINE bool bk_fuse_view_mix64_fuse8(const struct bk_fuse_view *view,
                                                      uint64_t value)
{
    return bk_fuse_view_test(view, bk_fuse_mix64_h1(value, view->mix64_key), BK_KIND_FUSE8);
}

/* bk_filter_contains(filter, key, len), inline; key may be NULL when len is
 * 0.  The rule is tested before the key is hashed, so the unmixed rule's
 * copy computes h1 alone (h2's arithmetic is dead there); that copy, the
 * rule of every filter whose first attempt peeled, is the likely path.
 * Inside it an 8-byte key of a mix64_fuse8 view (the integer-key filter)
 * takes one more test to its straight path.  That test first and marked
 * likely moved the default hash's (XXH3's) path out of line: 6.0 against
 * 5.4 ns per 8-byte key at 10^6 keys; here both keep their speed. */
static BK_ALWAYS_INLINE bool bk_fuse_view_contains(const struct bk_fuse_view *view,
                                                   const void *key, size_t len)
{
    if (__builtin_expect(!view->mixed, 1)) {
        if (len == 8 && view->mix64_fuse8)
            return bk_fuse_view_mix64_fuse8(view, bk_xxh64_read(key));
        return bk_fuse_view_test_any(
            view, bk_hash_unkeyed(view->hash_algorithm, key, len, view->hash_seed).h1 +
                      view->attempt_seed);
    }
    return bk_fuse_view_contains_hash(
        view, bk_hash_unkeyed(view->hash_algorithm, key, len, view->hash_seed));
}

/* bk_filter_contains_u64(filter, value), inline: the query of the key's 8
 * little-endian bytes. */
static BK_ALWAYS_INLINE bool bk_fuse_view_contains_u64(const struct bk_fuse_view *view,
                                                       uint64_t value)
{
    if (__builtin_expect(view->mix64_fuse8, 1))
        return bk_fuse_view_mix64_fuse8(view, value);
    uint8_t bytes[8];
    bk_u64_write_le(bytes, value);
    return bk_fuse_view_contains(view, bytes, sizeof bytes);
}

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_FUSE_INLINE_H */
