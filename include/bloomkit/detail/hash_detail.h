/*
 * bloomkit/detail/hash_detail.h -- the pieces bloomkit/hash_inline.h's
 * inline hashes are built from: XXH3-128 and XXH64 of 8- and 16-byte keys
 * written out, the vector forms of XXH3's last step, the 128-bit products.
 * Included by hash_inline.h; not an interface of the library: names and
 * contracts here may change between versions.
 *
 * Including it needs <xxhash.h> (Debian: libxxhash-dev) on the include
 * path: the secret and primes are libxxhash's, and XXH3 of the other
 * lengths is its XXH3_128bits_withSeed, all taken with XXH_INLINE_ALL,
 * which gives them private (XXH_INLINE_-prefixed) names, so a program
 * that also links libxxhash sees no clash.
 */
#ifndef BLOOMKIT_DETAIL_HASH_DETAIL_H
#define BLOOMKIT_DETAIL_HASH_DETAIL_H

#include "bloomkit/hash.h"

#include <string.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#define BK_UNDEF_XXH_INLINE_ALL
#endif
#include <xxhash.h>
#ifdef BK_UNDEF_XXH_INLINE_ALL
#undef XXH_INLINE_ALL
#undef BK_UNDEF_XXH_INLINE_ALL
#endif

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* Inlined even where the compiler would rather not (a caller built for
 * other target features, such as the BMI2 query of src/bloom.c). */
#if defined(__GNUC__) || defined(__clang__)
#ifndef BK_ALWAYS_INLINE
#define BK_ALWAYS_INLINE inline __attribute__((always_inline))
#endif
#else
#ifndef BK_ALWAYS_INLINE
#define BK_ALWAYS_INLINE inline
#endif
#endif

#include "bloomkit/detail/view_simd.h"

#if defined(__AVX512F__)
#include <immintrin.h>

/* The high 64 bits of the unsigned 128-bit products a * b, lane by lane
 * (AVX-512 has only the low half, VPMULLQ): schoolbook from four
 * 32 x 32 -> 64-bit products (VPMULUDQ), a = a1 2^32 + a0, b = b1 2^32 + b0:
 *     middle = (a0 b0 >> 32) + lo32(a0 b1) + lo32(a1 b0)        (< 2^34)
 *     high   = a1 b1 + (a0 b1 >> 32) + (a1 b0 >> 32) + (middle >> 32)
 * Used by the AVX-512 batch hash (src/hash_avx512.c) and the classic
 * filter's gather query (bloomkit/bloom_inline.h). */
static BK_ALWAYS_INLINE __m512i bk_multiply_high_x8(__m512i a, __m512i b)
{
    const __m512i low32 = _mm512_set1_epi64(0xffffffffLL);
    __m512i a1 = _mm512_srli_epi64(a, 32), b1 = _mm512_srli_epi64(b, 32);
    __m512i p00 = _mm512_mul_epu32(a, b), p01 = _mm512_mul_epu32(a, b1);
    __m512i p10 = _mm512_mul_epu32(a1, b), p11 = _mm512_mul_epu32(a1, b1);
    __m512i middle = _mm512_add_epi64(
        _mm512_srli_epi64(p00, 32),
        _mm512_add_epi64(_mm512_and_si512(p01, low32), _mm512_and_si512(p10, low32)));
    __m512i high = _mm512_add_epi64(
        p11, _mm512_add_epi64(_mm512_srli_epi64(p01, 32), _mm512_srli_epi64(p10, 32)));
    return _mm512_add_epi64(high, _mm512_srli_epi64(middle, 32));
}
#endif

/* The little-endian 64-bit word at p (XXH3 and XXH64 read their input so). */
static BK_ALWAYS_INLINE uint64_t bk_xxh64_read(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* Stores `value` at p as 8 little-endian bytes: the key whose bytes the
 * integer-key calls (bk_filter_*_u64) are defined as.  One move on a
 * little-endian host; gcc -O2 keeps a byte loop a loop, and a load of the
 * bytes right after it then stalls. */
static BK_ALWAYS_INLINE void bk_u64_write_le(void *p, uint64_t value)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    value = __builtin_bswap64(value);
#endif
    memcpy(p, &value, sizeof value);
}

/*
 * XXH3-128 of 8 and 16 bytes, written out from xxHash 0.8's algorithm for
 * inputs of 4 to 8 and of 9 to 16 bytes (src/hash_avx512.c draws both;
 * `secret` is XXH3's default secret, read little-endian):
 *
 *     8 bytes:   (lo, hi) = (v ^ ((secret[16] ^ secret[24]) + folded seed))
 *                           * (PRIME64_1 + 32)                128-bit product
 *                hi += lo << 1;  lo ^= hi >> 3
 *                h1 = xorshift 28 of (xorshift 35 of lo) * 0x9FB21C651E98DF25
 *                h2 = avalanche(hi)
 *     16 bytes:  (lo, hi) = (a ^ b ^ ((secret[32] ^ secret[40]) - seed))
 *                           * PRIME64_1,  lo += 15 << 54
 *                b' = b ^ ((secret[48] ^ secret[56]) + seed)
 *                hi += b' + low32(b') * (PRIME32_2 - 1);  lo ^= bswap64(hi)
 *                (h1, h2) = lo * PRIME64_2 (128-bit), h2 += hi * PRIME64_2
 *                h1 = avalanche(h1);  h2 = avalanche(h2)
 *     avalanche: h ^= h >> 37;  h *= 0x165667919E3779F9;  h ^= h >> 32
 *
 * libxxhash's XXH3_128bits_withSeed gives the same values
 * (tests/test_hash.c), but whether the compiler inlines it, and its helpers,
 * is its choice: gcc 12 called it out of line in a caller's loop over the
 * blocked view built with -mavx2 (one call, and a VZEROUPPER, per key).
 * A caller built with -mbmi2 gets MULX for the 128-bit products, free of
 * MUL's fixed registers.
 */
static BK_ALWAYS_INLINE void bk_multiply_128(uint64_t a, uint64_t b, uint64_t *low,
                                             uint64_t *high)
{
    __extension__ typedef unsigned __int128 bk_u128; /* no -Wpedantic warning */
    bk_u128 product = (bk_u128)a * b;
    *low = (uint64_t)product;
    *high = (uint64_t)(product >> 64);
}

static BK_ALWAYS_INLINE uint64_t bk_xxh3_avalanche(uint64_t h)
{
    h ^= h >> 37;
    h *= 0x165667919E3779F9ULL;
    return h ^ (h >> 32);
}

static BK_ALWAYS_INLINE uint64_t bk_xxh3_secret_word(size_t offset)
{
    return bk_xxh64_read(XXH3_kSecret + offset);
}

/* The seeded constants of the two branches (the AVX-512 hashing of
 * src/hash_avx512.c takes them too): the 4-to-8-byte branch's bitflip,
 * and the 9-to-16-byte branch's flips of its low and high words. */
static BK_ALWAYS_INLINE uint64_t bk_xxh3_bitflip_4to8(uint64_t seed)
{
    uint64_t folded_seed = seed ^ ((uint64_t)__builtin_bswap32((uint32_t)seed) << 32);
    return (bk_xxh3_secret_word(16) ^ bk_xxh3_secret_word(24)) + folded_seed;
}

static BK_ALWAYS_INLINE uint64_t bk_xxh3_flip_9to16_low(uint64_t seed)
{
    return (bk_xxh3_secret_word(32) ^ bk_xxh3_secret_word(40)) - seed;
}

static BK_ALWAYS_INLINE uint64_t bk_xxh3_flip_9to16_high(uint64_t seed)
{
    return (bk_xxh3_secret_word(48) ^ bk_xxh3_secret_word(56)) + seed;
}

/* XXH3-128 of 8 and 16 bytes but for h2's last step: h1 is finished, h2
 * is the word whose bk_xxh3_avalanche is XXH3's h2.  The SIMD one-key
 * queries of the blocked filter take that last step in the vector unit
 * (bk_xxh3_avalanche_x8 or _x4 below, on h2 broadcast to the lanes that
 * test it), whose pipes sit idle while the integer ones hash.  The integer
 * work is most of such a query: these hashes keep the integer pipes busy at
 * about four instructions per cycle (the bound is the instruction count,
 * not the multiplies as such). */
static BK_ALWAYS_INLINE bk_hash bk_xxh3_128_of_u64_unfinished(uint64_t value, uint64_t seed)
{
    uint64_t low, high;
    bk_multiply_128(value ^ bk_xxh3_bitflip_4to8(seed), XXH_PRIME64_1 + (8 << 2), &low, &high);
    high += low << 1;
    low ^= high >> 3;
    low ^= low >> 35;
    low *= 0x9FB21C651E98DF25ULL;
    low ^= low >> 28;
    bk_hash out = { low, high };
    return out;
}

/* The same of the 8 bytes at key: of the value they hold little-endian. */
static BK_ALWAYS_INLINE bk_hash bk_xxh3_128_of_8_unfinished(const void *key, uint64_t seed)
{
    return bk_xxh3_128_of_u64_unfinished(bk_xxh64_read(key), seed);
}

static BK_ALWAYS_INLINE bk_hash bk_xxh3_128_of_16_unfinished(const void *key, uint64_t seed)
{
    uint64_t first = bk_xxh64_read(key), second = bk_xxh64_read((const char *)key + 8);
    uint64_t low, high;
    bk_multiply_128(first ^ second ^ bk_xxh3_flip_9to16_low(seed), XXH_PRIME64_1, &low, &high);
    low += (uint64_t)(16 - 1) << 54;
    second ^= bk_xxh3_flip_9to16_high(seed);
    high += second + (uint64_t)(uint32_t)second * (XXH_PRIME32_2 - 1);
    low ^= __builtin_bswap64(high);
    uint64_t h1, h2;
    bk_multiply_128(low, XXH_PRIME64_2, &h1, &h2);
    h2 += high * XXH_PRIME64_2;
    bk_hash out = { bk_xxh3_avalanche(h1), h2 };
    return out;
}

/* The unfinished hash of an 8- or 16-byte key (len one of the two). */
static BK_ALWAYS_INLINE bk_hash bk_xxh3_128_unfinished(const void *key, size_t len,
                                                       uint64_t seed)
{
    return len == 8 ? bk_xxh3_128_of_8_unfinished(key, seed)
                    : bk_xxh3_128_of_16_unfinished(key, seed);
}

/* XXH3-128 of the 8 bytes that hold `value` little-endian. */
static BK_ALWAYS_INLINE bk_hash bk_xxh3_128_of_u64(uint64_t value, uint64_t seed)
{
    bk_hash hash = bk_xxh3_128_of_u64_unfinished(value, seed);
    hash.h2 = bk_xxh3_avalanche(hash.h2);
    return hash;
}

static BK_ALWAYS_INLINE bk_hash bk_xxh3_128_of_8(const void *key, uint64_t seed)
{
    bk_hash hash = bk_xxh3_128_of_8_unfinished(key, seed);
    hash.h2 = bk_xxh3_avalanche(hash.h2);
    return hash;
}

static BK_ALWAYS_INLINE bk_hash bk_xxh3_128_of_16(const void *key, uint64_t seed)
{
    bk_hash hash = bk_xxh3_128_of_16_unfinished(key, seed);
    hash.h2 = bk_xxh3_avalanche(hash.h2);
    return hash;
}

#if defined(__AVX2__)
#include <immintrin.h>

/* bk_xxh3_avalanche of each 64-bit lane of an AVX2 register.  AVX2 has no
 * 64-bit multiply; the low 64 bits of h c, with h = h1 2^32 + h0 and
 * c = c1 2^32 + c0, are h0 c0 + ((h1 c0 + h0 c1) << 32): three VPMULUDQ. */
static BK_ALWAYS_INLINE __m256i bk_xxh3_avalanche_x4(__m256i h)
{
    const __m256i c0 = _mm256_set1_epi64x(0x9E3779F9LL), c1 = _mm256_set1_epi64x(0x16566791LL);
    h = _mm256_xor_si256(h, _mm256_srli_epi64(h, 37));
    __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(h, 32), c0),
                                     _mm256_mul_epu32(h, c1));
    h = _mm256_add_epi64(_mm256_mul_epu32(h, c0), _mm256_slli_epi64(cross, 32));
    return _mm256_xor_si256(h, _mm256_srli_epi64(h, 32));
}
#endif

#if defined(__AVX512F__) && defined(__AVX512DQ__) || defined(BK_VIEW_SIMD_CALLS)
/* bk_xxh3_avalanche of each 64-bit lane (VPMULLQ: AVX-512 DQ); the batch
 * hashes of src/hash_avx512.c finish with it too, and so does the blocked
 * view's AVX-512 test, called from files without AVX2
 * (bloomkit/detail/view_simd.h). */
static BK_VIEW_TARGET_AVX512 BK_ALWAYS_INLINE __m512i bk_xxh3_avalanche_x8(__m512i h)
{
    h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 37));
    h = _mm512_mullo_epi64(h, _mm512_set1_epi64((long long)0x165667919E3779F9ULL));
    return _mm512_xor_si512(h, _mm512_srli_epi64(h, 32));
}
#endif

/*
 * XXH64 of 8 and 16 bytes, written out from the XXH64 specification
 * (xxhash_spec.md: inputs shorter than 32 bytes).  libxxhash's XXH64()
 * gives the same values (tests/test_hash.c) but leaves its tail loop
 * (XXH64_finalize) out of line: gcc 12 compiled 24 calls to it into the
 * library, one per key in bk_sbbf_contains, bk_sbbf_hash and the scalar
 * hash loops, and one per key in a caller's loop over the sbbf view.  With
 * the code below there are none.
 *
 *     acc   = seed + P5 + len
 *     lane  : acc ^= rotl(lane * P2, 31) * P1;  acc = rotl(acc, 27) * P1 + P4
 *     final : acc ^= acc >> 33; acc *= P2; acc ^= acc >> 29; acc *= P3;
 *             acc ^= acc >> 32   (the last step: bk_xxh64_finish)
 * with the lanes read little-endian.
 */
#define BK_XXH64_P1 0x9E3779B185EBCA87ULL
#define BK_XXH64_P2 0xC2B2AE3D27D4EB4FULL
#define BK_XXH64_P3 0x165667B19E3779F9ULL
#define BK_XXH64_P4 0x85EBCA77C2B2AE63ULL
#define BK_XXH64_P5 0x27D4EB2F165667C5ULL

static BK_ALWAYS_INLINE uint64_t bk_xxh64_lane(uint64_t acc, uint64_t lane)
{
    uint64_t product = lane * BK_XXH64_P2;
    acc ^= ((product << 31) | (product >> 33)) * BK_XXH64_P1;
    return ((acc << 27) | (acc >> 37)) * BK_XXH64_P1 + BK_XXH64_P4;
}

/* The avalanche but for its last step, acc ^= acc >> 32. */
static BK_ALWAYS_INLINE uint64_t bk_xxh64_avalanche(uint64_t acc)
{
    acc ^= acc >> 33;
    acc *= BK_XXH64_P2;
    acc ^= acc >> 29;
    return acc * BK_XXH64_P3;
}

/* The last step.  It leaves the upper half as it is, so a caller that needs
 * that half first (the sbbf's block, bloomkit/sbbf_inline.h) can take it from
 * the unfinished hash without waiting for the xor: gcc 12 does not see this
 * by itself. */
static BK_ALWAYS_INLINE uint64_t bk_xxh64_finish(uint64_t unfinished)
{
    return unfinished ^ (unfinished >> 32);
}

/* XXH64 of the 8 bytes that hold `value` little-endian, but for the last
 * step: one lane and the avalanche, nothing read from memory. */
static BK_ALWAYS_INLINE uint64_t bk_xxh64_unfinished_of_u64(uint64_t value, uint64_t seed)
{
    return bk_xxh64_avalanche(bk_xxh64_lane(seed + BK_XXH64_P5 + 8, value));
}

/* XXH64 of an 8- or 16-byte key (len 8 or 16), but for the last step. */
static BK_ALWAYS_INLINE uint64_t bk_xxh64_unfinished_8_or_16(const void *key, size_t len,
                                                             uint64_t seed)
{
    uint64_t acc = bk_xxh64_lane(seed + BK_XXH64_P5 + len, bk_xxh64_read(key));
    if (len == 16)
        acc = bk_xxh64_lane(acc, bk_xxh64_read((const char *)key + 8));
    return bk_xxh64_avalanche(acc);
}

/*
 * The integer mixer of BK_HASH_MIX64 (src/hash.c explains the choice and
 * gives its statistics).  With v the key, M = 0xD6E8FEB86659FD93 and
 * K1, K2 the fractional parts of the golden ratio and of sqrt 2:
 *
 *     z  = v ^ (seed ^ K1)
 *     z ^= z >> 32;  z *= M;  z ^= z >> 32          one shared round
 *     h1 = z * M;                  h1 ^= h1 >> 32   (degski's hash of v ^ seed ^ K1)
 *     h2 = (z + K2) * 0x94D049BB133111EB;  h2 ^= h2 >> 31
 *
 * Every step is a bijection of 64-bit words, so h1 (and h2) differ for
 * different keys under one seed.  Three multiplies, h1 and h2 computed side
 * by side after the shared round.
 */
#define BK_MIX64_H1_OFFSET 0x9E3779B97F4A7C15ULL
#define BK_MIX64_H2_OFFSET 0x6A09E667F3BCC909ULL
#define BK_MIX64_ROUND 0xD6E8FEB86659FD93ULL
#define BK_MIX64_H2_FACTOR 0x94D049BB133111EBULL

/* Stafford's mix13, splitmix64's finaliser. */
static BK_ALWAYS_INLINE uint64_t bk_mix13(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* BK_HASH_MIX64's hash of the 8-byte key holding `value` little-endian. */
static BK_ALWAYS_INLINE bk_hash bk_mix64_of_u64(uint64_t value, uint64_t seed)
{
    uint64_t z = value ^ (seed ^ BK_MIX64_H1_OFFSET);
    z ^= z >> 32;
    z *= BK_MIX64_ROUND;
    z ^= z >> 32;
    uint64_t h1 = z * BK_MIX64_ROUND, h2 = (z + BK_MIX64_H2_OFFSET) * BK_MIX64_H2_FACTOR;
    bk_hash out = { h1 ^ (h1 >> 32), h2 ^ (h2 >> 31) };
    return out;
}

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_DETAIL_HASH_DETAIL_H */
