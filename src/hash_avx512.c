/*
 * src/hash_avx512.c -- XXH3-128 of eight 8-byte keys at once (compiled with
 * -mavx512f -mavx512dq; called from bk_hash_keys only when
 * bk_cpu()->avx512dq).
 *
 * Batches of 8-byte keys (integers, ids) are the common case, and their
 * hashing was half of a batch query's instructions.  For a key of 4 to 8
 * bytes XXH3-128 (xxHash 0.8, "XXH3_len_4to8_128b") is a short chain of
 * 64-bit operations on the key read as a little-endian word v:
 *
 *     keyed = v ^ bitflip            bitflip = (secret[16..23] ^ secret[24..31])
 *                                              + (seed ^ (bswap32(seed) << 32))
 *     (lo, hi) = keyed * (PRIME64_1 + 4 len)      64 x 64 -> 128-bit product
 *     hi += lo << 1;   lo ^= hi >> 3
 *     lo ^= lo >> 35;  lo *= 0x9FB21C651E98DF25;  lo ^= lo >> 28
 *     hi ^= hi >> 37;  hi *= 0x165667919E3779F9;  hi ^= hi >> 32
 *     hash = (h1, h2) = (lo, hi)
 *
 * Every step maps to one AVX-512 instruction on eight keys (VPMULLQ for the
 * low 64-bit products), except the high half of the 128-bit product, which
 * AVX-512 lacks: it is assembled from four 32 x 32 -> 64-bit products
 * (VPMULUDQ), schoolbook style:
 *
 *     a = a1 2^32 + a0,  b = b1 2^32 + b0
 *     mid = (a0 b0 >> 32) + lo32(a0 b1) + lo32(a1 b0)        (< 2^34)
 *     hi  = a1 b1 + (a0 b1 >> 32) + (a1 b0 >> 32) + (mid >> 32)
 *
 * The results are XXH3's own, bit for bit: tests/test_hash.c compares them
 * with libxxhash for random keys, seeds and batch shapes.  Groups of eight
 * that hold a key of another length are hashed one key at a time.
 *
 * Measured (blocked filter, 1e5 8-byte keys, bk_filter_contains_batch):
 * see docs/PERFORMANCE.md.
 */
#include "hash.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>
#include <string.h>

#define LANES 8

/* The high 64 bits of the unsigned products a * b, lane by lane. */
static inline __m512i multiply_high(__m512i a, __m512i b)
{
    const __m512i low32 = _mm512_set1_epi64(0xffffffffLL);
    __m512i a1 = _mm512_srli_epi64(a, 32), b1 = _mm512_srli_epi64(b, 32);
    __m512i p00 = _mm512_mul_epu32(a, b);
    __m512i p01 = _mm512_mul_epu32(a, b1);
    __m512i p10 = _mm512_mul_epu32(a1, b);
    __m512i p11 = _mm512_mul_epu32(a1, b1);
    __m512i mid = _mm512_add_epi64(_mm512_srli_epi64(p00, 32),
                                   _mm512_add_epi64(_mm512_and_si512(p01, low32),
                                                    _mm512_and_si512(p10, low32)));
    __m512i high = _mm512_add_epi64(p11, _mm512_srli_epi64(p01, 32));
    high = _mm512_add_epi64(high, _mm512_srli_epi64(p10, 32));
    return _mm512_add_epi64(high, _mm512_srli_epi64(mid, 32));
}

static inline __m512i xorshift(__m512i x, unsigned shift)
{
    return _mm512_xor_si512(x, _mm512_srli_epi64(x, shift));
}

/* hashes[0..8) of the eight words (8-byte keys read little-endian). */
static void hash_eight(__m512i words, __m512i bitflip, bk_hash *hashes)
{
    const __m512i factor = _mm512_set1_epi64((long long)(XXH_PRIME64_1 + 4 * 8));
    __m512i keyed = _mm512_xor_si512(words, bitflip);
    __m512i low = _mm512_mullo_epi64(keyed, factor);
    __m512i high = multiply_high(keyed, factor);
    high = _mm512_add_epi64(high, _mm512_slli_epi64(low, 1));
    low = _mm512_xor_si512(low, _mm512_srli_epi64(high, 3));
    low = xorshift(low, 35);
    low = _mm512_mullo_epi64(low, _mm512_set1_epi64((long long)0x9FB21C651E98DF25ULL));
    low = xorshift(low, 28);
    high = xorshift(high, 37);
    high = _mm512_mullo_epi64(high, _mm512_set1_epi64((long long)0x165667919E3779F9ULL));
    high = xorshift(high, 32);
    /* interleave into (h1, h2) pairs: lanes 0-3, then 4-7 */
    const __m512i first = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
    const __m512i second = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
    _mm512_storeu_si512((void *)hashes, _mm512_permutex2var_epi64(low, first, high));
    _mm512_storeu_si512((void *)(hashes + 4), _mm512_permutex2var_epi64(low, second, high));
}

/* XXH3's bitflip for 4- to 8-byte keys under `seed`. */
static uint64_t bitflip_for(uint64_t seed)
{
    uint64_t s16, s24;
    memcpy(&s16, XXH3_kSecret + 16, 8);
    memcpy(&s24, XXH3_kSecret + 24, 8);
    uint64_t folded = seed ^ ((uint64_t)__builtin_bswap32((uint32_t)seed) << 32);
    return (s16 ^ s24) + folded;
}

void bk_hash_keys_xxh3_avx512(const bk_key *keys, size_t count, uint64_t seed, bk_hash *hashes)
{
    const __m512i bitflip = _mm512_set1_epi64((long long)bitflip_for(seed));
    size_t i = 0;
    for (; i + LANES <= count; i += LANES) {
        uint64_t words[LANES];
        bool all_eight = true;
        for (unsigned j = 0; j < LANES; j++) {
            all_eight &= keys[i + j].len == 8;
            if (keys[i + j].len == 8)
                memcpy(&words[j], keys[i + j].data, 8); /* x86: little-endian */
        }
        if (all_eight) {
            hash_eight(_mm512_loadu_si512((const void *)words), bitflip, hashes + i);
        } else {
            for (unsigned j = 0; j < LANES; j++)
                hashes[i + j] = bk_hash_xxh3(keys[i + j].data, keys[i + j].len, seed);
        }
    }
    for (; i < count; i++)
        hashes[i] = bk_hash_xxh3(keys[i].data, keys[i].len, seed);
}

#endif /* __AVX512F__ && __AVX512DQ__ */
