/*
 * bloomkit/hash_inline.h -- the key hash, inlined into the caller.
 *
 * bk_hash_inline(hasher, key, len) returns exactly what bk_hash_key returns
 * (src/hash.c describes the three algorithms), but its XXH3 and XXH64 code
 * is compiled into the caller, so a loop that queries one key per step pays
 * no call for the hash.  The library's own one-key queries use it.
 * SipHash, several times slower anyway, stays an out-of-line call; the
 * inline views (bloomkit/bloom_inline.h, blocked_inline.h, sbbf_inline.h,
 * fuse_inline.h)
 * therefore serve XXH3 and XXH64 only, through bk_hash_xxh3_or_xxh64,
 * which holds no call.  Also here: the probe sequence of the classic
 * filters (bk_probe_*).
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
#define BK_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define BK_ALWAYS_INLINE inline
#endif

/* Multiply-shift range reduction (Lemire 2019): floor(x * range / 2^64),
 * uniform on [0, range) for uniform 64-bit x, without a division. */
static BK_ALWAYS_INLINE uint64_t bk_reduce(uint64_t x, uint64_t range)
{
    __extension__ typedef unsigned __int128 bk_u128; /* no -Wpedantic warning */
    return (uint64_t)(((bk_u128)x * range) >> 64);
}

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
    __m512i middle = _mm512_add_epi64(_mm512_srli_epi64(p00, 32),
                                      _mm512_add_epi64(_mm512_and_si512(p01, low32),
                                                       _mm512_and_si512(p10, low32)));
    __m512i high = _mm512_add_epi64(p11, _mm512_add_epi64(_mm512_srli_epi64(p01, 32),
                                                          _mm512_srli_epi64(p10, 32)));
    return _mm512_add_epi64(high, _mm512_srli_epi64(middle, 32));
}
#endif

/*
 * The k probe positions of a classic filter's key: enhanced double hashing
 * (Dillinger & Manolios 2004; the plain form is Kirsch & Mitzenmacher 2006)
 *
 *     g_0 = h1, g_{i+1} = g_i + d_i, d_0 = h2, d_{i+1} = d_i + i + 1  (mod 2^64)
 *     position_i = bk_reduce(g_i, m)
 *
 * The quadratic term stops the sequence from collapsing when h2 is close to
 * 0 modulo the reduction, which plain h1 + i*h2 suffers.  Reduction is
 * applied to the 64-bit sum, so m need not be a power of two and m up to
 * 2^64 - 1 is addressable.
 */
typedef struct bk_probe {
    uint64_t position_hash; /* g_i */
    uint64_t step;          /* d_i */
    uint64_t index;         /* i */
} bk_probe;

static BK_ALWAYS_INLINE bk_probe bk_probe_start(bk_hash hash)
{
    bk_probe probe = { hash.h1, hash.h2, 0 };
    return probe;
}

/* The next probe position in [0, range). */
static BK_ALWAYS_INLINE uint64_t bk_probe_next(bk_probe *probe, uint64_t range)
{
    uint64_t position = bk_reduce(probe->position_hash, range);
    probe->position_hash += probe->step;
    probe->index++;
    probe->step += probe->index;
    return position;
}

/* splitmix64's finaliser: a bijective 64-bit mixer. */
static BK_ALWAYS_INLINE uint64_t bk_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

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
static BK_ALWAYS_INLINE bk_hash bk_xxh3_128_of_8_unfinished(const void *key, uint64_t seed)
{
    uint64_t low, high;
    bk_multiply_128(bk_xxh64_read(key) ^ bk_xxh3_bitflip_4to8(seed), XXH_PRIME64_1 + (8 << 2),
                    &low, &high);
    high += low << 1;
    low ^= high >> 3;
    low ^= low >> 35;
    low *= 0x9FB21C651E98DF25ULL;
    low ^= low >> 28;
    bk_hash out = { low, high };
    return out;
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

#if defined(__AVX512F__) && defined(__AVX512DQ__)
/* bk_xxh3_avalanche of each 64-bit lane (VPMULLQ: AVX-512 DQ); the batch
 * hashes of src/hash_avx512.c finish with it too. */
static BK_ALWAYS_INLINE __m512i bk_xxh3_avalanche_x8(__m512i h)
{
    h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 37));
    h = _mm512_mullo_epi64(h, _mm512_set1_epi64((long long)0x165667919E3779F9ULL));
    return _mm512_xor_si512(h, _mm512_srli_epi64(h, 32));
}
#endif

/* XXH3-128 of the key: 8- and 16-byte keys by the code above, the other
 * lengths by libxxhash. */
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

/* XXH64 of a key of any length, out of line: the fast paths below stay
 * small enough to inline into a one-key query without spilling registers. */
uint64_t bk_xxh64_any_length(const void *key, size_t len, uint64_t seed);

/*
 * XXH64 of 8 and 16 bytes, written out from the XXH64 specification
 * (xxhash_spec.md: inputs shorter than 32 bytes).  libxxhash's XXH64()
 * gives the same values (tests/test_hash.c) but leaves its tail loop
 * (XXH64_finalize) out of line: gcc 12 compiled 24 calls to it into the
 * library, one per key in the sbbf one-key query, the handle's hash and
 * the scalar hash loops, and one per key in a caller's loop over the sbbf view.  With
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

/* XXH64 of an 8- or 16-byte key (len 8 or 16), but for the last step. */
static BK_ALWAYS_INLINE uint64_t bk_xxh64_unfinished_8_or_16(const void *key, size_t len,
                                                            uint64_t seed)
{
    uint64_t acc = bk_xxh64_lane(seed + BK_XXH64_P5 + len, bk_xxh64_read(key));
    if (len == 16)
        acc = bk_xxh64_lane(acc, bk_xxh64_read((const char *)key + 8));
    return bk_xxh64_avalanche(acc);
}

/* XXH64 of the key (the Parquet hash), h2 derived by mixing. */
static BK_ALWAYS_INLINE bk_hash bk_hash_xxh64(const void *key, size_t len, uint64_t seed)
{
    uint64_t h1 = len == 8 || len == 16
                      ? bk_xxh64_finish(bk_xxh64_unfinished_8_or_16(key, len, seed))
                      : bk_xxh64_any_length(key, len, seed);
    bk_hash out = { h1, bk_mix64(h1) };
    return out;
}

/* XXH3-128 or XXH64 (+ mix) of the key, as bk_hash_key gives them: the
 * hash of the inline views.  XXH3 is the likely branch (the default). */
static BK_ALWAYS_INLINE bk_hash bk_hash_xxh3_or_xxh64(bk_hash_algorithm algorithm,
                                                     const void *key, size_t len, uint64_t seed)
{
    return __builtin_expect(algorithm == BK_HASH_XXH3, 1) ? bk_hash_xxh3(key, len, seed)
                                                          : bk_hash_xxh64(key, len, seed);
}

/* bk_hash_key(hasher, key, len), inline for XXH3 and XXH64. */
static BK_ALWAYS_INLINE bk_hash bk_hash_inline(const bk_hasher *hasher, const void *key,
                                               size_t len)
{
    if (hasher->algorithm == BK_HASH_XXH3)
        return bk_hash_xxh3(key, len, hasher->seed);
    if (hasher->algorithm == BK_HASH_XXH64)
        return bk_hash_xxh64(key, len, hasher->seed);
    return bk_hash_key(hasher, key, len);
}

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_HASH_INLINE_H */
