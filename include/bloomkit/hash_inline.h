/*
 * bloomkit/hash_inline.h -- the key hash, inlined into the caller.
 *
 * bk_hash_inline(hasher, key, len) returns exactly what bk_hash_key returns
 * (src/hash.c describes the four algorithms), but its XXH3, XXH64 and
 * MIX64 code is compiled into the caller, so a loop that queries one key
 * per step pays no call for the hash.  The library's own one-key queries
 * use it; bk_hash_u64(hasher, value) is the same for an integer key (its
 * 8 little-endian bytes).  SipHash, several times slower anyway, stays an
 * out-of-line call; the inline views (bloomkit/bloom_inline.h,
 * blocked_inline.h, sbbf_inline.h, fuse_inline.h) therefore serve the
 * other algorithms only (each view says which), through
 * bk_hash_unkeyed, which holds no call.  The pieces they are built from (XXH3-128 and
 * XXH64 of 8- and 16-byte keys written out, their vector finishing steps)
 * are in bloomkit/detail/hash_detail.h: not an interface, they may change.
 *
 * Including this header needs <xxhash.h> (Debian: libxxhash-dev) on the
 * include path: XXH3 and XXH64 are taken from it with XXH_INLINE_ALL, which
 * gives them private (XXH_INLINE_-prefixed) names, so a program that also
 * links libxxhash sees no clash.  Nothing else needs xxhash.h.
 *
 * Why inline: one XXH3-128 of an 8-byte key costs about as much as the
 * calls that would reach it, so a query inlined whole, hash included, and
 * with the key width a compile-time constant, is much faster than one
 * through bk_filter_contains (docs/PERFORMANCE.md).
 */
#ifndef BLOOMKIT_HASH_INLINE_H
#define BLOOMKIT_HASH_INLINE_H

#include "bloomkit/detail/hash_detail.h"
#include "bloomkit/hash.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* Multiply-shift range reduction (Lemire 2019): floor(x * range / 2^64),
 * uniform on [0, range) for uniform 64-bit x, without a division. */
static BK_ALWAYS_INLINE uint64_t bk_reduce(uint64_t x, uint64_t range)
{
    __extension__ typedef unsigned __int128 bk_u128; /* no -Wpedantic warning */
    return (uint64_t)(((bk_u128)x * range) >> 64);
}

/* splitmix64's finaliser (Stafford's mix13): a bijective 64-bit mixer. */
static BK_ALWAYS_INLINE uint64_t bk_mix64(uint64_t x) { return bk_mix13(x); }

/* XXH3-128 of the key: 8- and 16-byte keys written out
 * (bloomkit/detail/hash_detail.h), the other lengths by libxxhash. */
static BK_ALWAYS_INLINE bk_hash bk_hash_xxh3(const void *key, size_t len, uint64_t seed)
{
    if (len == 8)
        return bk_xxh3_128_of_8(key, seed);
    if (len == 16)
        return bk_xxh3_128_of_16(key, seed);
    XXH128_hash_t h = XXH3_128bits_withSeed(key, len, seed);
    bk_hash out = { h.low64, h.high64 };
    return out;
}

/* XXH64 of a key of any length, out of line (the library's): the 8- and
 * 16-byte forms of bloomkit/detail/hash_detail.h stay small enough to
 * inline into a one-key query without spilling registers. */
uint64_t bk_xxh64_any_length(const void *key, size_t len, uint64_t seed);

/* XXH64 of the key (the Parquet hash), h2 derived by mixing. */
static BK_ALWAYS_INLINE bk_hash bk_hash_xxh64(const void *key, size_t len, uint64_t seed)
{
    uint64_t h1 = len == 8 || len == 16
                      ? bk_xxh64_finish(bk_xxh64_unfinished_8_or_16(key, len, seed))
                      : bk_xxh64_any_length(key, len, seed);
    bk_hash out = { h1, bk_mix64(h1) };
    return out;
}

/* BK_HASH_MIX64's hash of the key: the integer mixer for an 8-byte key
 * (read little-endian), XXH3-128 for any other length. */
static BK_ALWAYS_INLINE bk_hash bk_hash_mix64(const void *key, size_t len, uint64_t seed)
{
    return len == 8 ? bk_mix64_of_u64(bk_xxh64_read(key), seed) : bk_hash_xxh3(key, len, seed);
}

/* XXH3-128, XXH64 (+ mix) or MIX64 of the key, as bk_hash_key gives them:
 * the hash of the inline views (every algorithm but SipHash; the name
 * predates MIX64).  XXH3 is the likely branch (the default). */
static BK_ALWAYS_INLINE bk_hash bk_hash_unkeyed(bk_hash_algorithm algorithm, const void *key,
                                                size_t len, uint64_t seed)
{
    if (__builtin_expect(algorithm == BK_HASH_XXH3, 1))
        return bk_hash_xxh3(key, len, seed);
    return algorithm == BK_HASH_MIX64 ? bk_hash_mix64(key, len, seed)
                                      : bk_hash_xxh64(key, len, seed);
}

/* bk_hash_key(hasher, key, len), inline for XXH3, XXH64 and MIX64. */
static BK_ALWAYS_INLINE bk_hash bk_hash_inline(const bk_hasher *hasher, const void *key,
                                               size_t len)
{
    if (hasher->algorithm == BK_HASH_XXH3)
        return bk_hash_xxh3(key, len, hasher->seed);
    if (hasher->algorithm == BK_HASH_MIX64)
        return bk_hash_mix64(key, len, hasher->seed);
    if (hasher->algorithm == BK_HASH_XXH64)
        return bk_hash_xxh64(key, len, hasher->seed);
    return bk_hash_key(hasher, key, len);
}

/*
 * bk_hash_key(hasher, &le, 8) where le holds `value` little-endian: the
 * hash of an integer key (bk_filter_add_u64 and its siblings), with no
 * bytes stored or read.  MIX64: the mixer alone (three multiplies).  XXH3:
 * XXH3-128 of 8 bytes written out.  XXH64: one lane and the avalanche,
 * h2 mixed from it as bk_hash_xxh64 does.  SipHash: a library call.
 */
static BK_ALWAYS_INLINE bk_hash bk_hash_u64(const bk_hasher *hasher, uint64_t value)
{
    const uint64_t seed = hasher->seed;
    if (hasher->algorithm == BK_HASH_MIX64)
        return bk_mix64_of_u64(value, seed);
    if (hasher->algorithm == BK_HASH_XXH3)
        return bk_xxh3_128_of_u64(value, seed);
    if (hasher->algorithm == BK_HASH_XXH64) {
        uint64_t h1 = bk_xxh64_finish(bk_xxh64_unfinished_of_u64(value, seed));
        bk_hash out = { h1, bk_mix64(h1) };
        return out;
    }
    uint8_t bytes[8];
    bk_u64_write_le(bytes, value);
    return bk_hash_key(hasher, bytes, sizeof bytes);
}

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_HASH_INLINE_H */
