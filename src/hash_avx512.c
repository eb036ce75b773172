/*
 * src/hash_avx512.c -- XXH3-128 and XXH64 of eight 8- or 16-byte keys at
 * once (compiled with -mavx512f -mavx512dq -mavx512bw; called from
 * bk_hash_keys only when bk_cpu()->avx512dqbw).
 *
 * Batches of 8-byte keys (integers, ids) and 16-byte keys (UUIDs, pairs)
 * are the common cases, and their hashing was half of a batch query's
 * instructions.  For a key of 4 to 8 bytes XXH3-128 (xxHash 0.8,
 * "XXH3_len_4to8_128b") is a short chain of 64-bit operations on the key
 * read as a little-endian word v:
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
 * AVX-512 lacks: bk_multiply_high_x8 (bloomkit/hash_inline.h) assembles
 * it from four 32 x 32 -> 64-bit products (VPMULUDQ), schoolbook style.
 *
 * 16-byte keys take XXH3's 9-to-16-byte branch the same way (hash_sixteen
 * below: two 128-bit products and a byte swap, VPSHUFB).
 *
 * Keys of other lengths in the same two branches (4 to 8 bytes, 9 to 16:
 * names, ids with a prefix, the items of a Redis command) run the same
 * vector code, eight keys of one branch at a time.  The length enters a
 * branch in two places only, both taken lane by lane: from 4 to 8 bytes
 * the word is the key's first and last 4 bytes, v = lo32 + (hi32 << 32),
 * and the multiplier PRIME64_1 + 4 len; from 9 to 16 the words are its
 * first and last 8 bytes, and (len - 1) << 54 is added.  Hashed one at a
 * time, such keys cost a call to libxxhash each and a store-forwarding
 * stall on its 128-bit result.
 *
 * XXH64 (the Parquet hash, bk_hasher BK_HASH_XXH64) takes the same eight
 * keys at a time.  Below 32 bytes XXH64 skips its four-lane loop and runs
 * its tail, one step per 8-byte word w, then its final mix:
 *
 *     acc = seed + PRIME64_5 + len
 *     for each word w:  acc ^= rotl(w * PRIME64_2, 31) * PRIME64_1
 *                       acc  = rotl(acc, 27) * PRIME64_1 + PRIME64_4
 *     acc ^= acc >> 33;  acc *= PRIME64_2;  acc ^= acc >> 29
 *     acc *= PRIME64_3;  acc ^= acc >> 32
 *     hash = (h1, h2) = (acc, mix64(acc))                 (src/hash.h)
 *
 * Only low 64-bit products (VPMULLQ) and rotations (VPROLQ): eight keys
 * cost little more than one does in scalar code.  Eight keys under 32
 * bytes with as many whole words (lengths otherwise mixed) take the same
 * word steps, then the tail's 4-byte step and up to three one-byte steps
 * (acc ^= half * PRIME64_1, rotl 23, * PRIME64_2 + PRIME64_3; acc ^=
 * byte * PRIME64_5, rotl 11, * PRIME64_1), each kept by a lane mask only
 * where the key has that part.
 *
 * The results are xxHash's own, bit for bit: tests/test_hash.c compares
 * them with bk_hash_key (xxHash's code) for random keys, seeds and batch
 * shapes, each key in a buffer of its own length.  Other groups of eight
 * (XXH3 branches mixed, XXH64 word counts mixed, keys of 32 bytes or more)
 * are hashed one key at a time.  Speed: docs/PERFORMANCE.md.
 *
 * MIX64 (bk_hasher BK_HASH_MIX64) of packed 8-byte keys is its mixer
 * lane by lane: three VPMULLQ per eight keys.
 */
#include "hash.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__)
#include <immintrin.h>
#include <string.h>

#define LANES 8

static inline __m512i xorshift(__m512i x, unsigned shift)
{
    return _mm512_xor_si512(x, _mm512_srli_epi64(x, shift));
}

/* hashes[j] = (h1[j], h2[j]) for the eight lanes. */
static inline void store_pairs(__m512i h1, __m512i h2, bk_hash *hashes)
{
    const __m512i first = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
    const __m512i second = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
    _mm512_storeu_si512((void *)hashes, _mm512_permutex2var_epi64(h1, first, h2));
    _mm512_storeu_si512((void *)(hashes + 4), _mm512_permutex2var_epi64(h1, second, h2));
}

/* hashes[0..8) of the eight words of keys of 4 to 8 bytes (lo32 + (hi32
 * << 32); an 8-byte key read little-endian), factor = PRIME64_1 + 4 len
 * lane by lane. */
static void hash_eight(__m512i words, __m512i bitflip, __m512i factor, bk_hash *hashes)
{
    __m512i keyed = _mm512_xor_si512(words, bitflip);
    __m512i low = _mm512_mullo_epi64(keyed, factor);
    __m512i high = bk_multiply_high_x8(keyed, factor);
    high = _mm512_add_epi64(high, _mm512_slli_epi64(low, 1));
    low = _mm512_xor_si512(low, _mm512_srli_epi64(high, 3));
    low = xorshift(low, 35);
    low = _mm512_mullo_epi64(low, _mm512_set1_epi64((long long)0x9FB21C651E98DF25ULL));
    low = xorshift(low, 28);
    store_pairs(low, bk_xxh3_avalanche_x8(high), hashes);
}

/* Each 64-bit lane byte-reversed (VPSHUFB, AVX-512 BW). */
static inline __m512i byte_swap(__m512i x)
{
    const __m512i reverse = _mm512_set4_epi64(0x08090a0b0c0d0e0fLL, 0x0001020304050607LL,
                                              0x08090a0b0c0d0e0fLL, 0x0001020304050607LL);
    return _mm512_shuffle_epi8(x, reverse);
}

/* XXH3-128 of eight keys of 9 to 16 bytes ("XXH3_len_9to16_128b"),
 * words_lo / words_hi their first and last 8 bytes, len_term (len - 1) << 54
 * lane by lane:
 *
 *     (lo, hi) = (w_lo ^ w_hi ^ flip_lo) * PRIME64_1       128-bit product
 *     lo += (len - 1) << 54
 *     v = w_hi ^ flip_hi;   hi += v + lo32(v) * (PRIME32_2 - 1)
 *     lo ^= bswap64(hi)
 *     (h1, h2) = lo * PRIME64_2 (128-bit), h2 += hi * PRIME64_2
 *     h1 = avalanche(h1);  h2 = avalanche(h2)                           */
static void hash_sixteen(__m512i words_lo, __m512i words_hi, __m512i flip_lo, __m512i flip_hi,
                         __m512i len_term, bk_hash *hashes)
{
    const __m512i prime1 = _mm512_set1_epi64((long long)XXH_PRIME64_1);
    const __m512i prime2 = _mm512_set1_epi64((long long)XXH_PRIME64_2);
    __m512i mixed = _mm512_xor_si512(_mm512_xor_si512(words_lo, words_hi), flip_lo);
    __m512i low = _mm512_mullo_epi64(mixed, prime1);
    __m512i high = bk_multiply_high_x8(mixed, prime1);
    low = _mm512_add_epi64(low, len_term);
    __m512i v = _mm512_xor_si512(words_hi, flip_hi);
    high = _mm512_add_epi64(high, v);
    high = _mm512_add_epi64(high, _mm512_mul_epu32(v, _mm512_set1_epi64(XXH_PRIME32_2 - 1)));
    low = _mm512_xor_si512(low, byte_swap(high));
    __m512i h1 = _mm512_mullo_epi64(low, prime2);
    __m512i h2 = _mm512_add_epi64(bk_multiply_high_x8(low, prime2),
                                  _mm512_mullo_epi64(high, prime2));
    store_pairs(bk_xxh3_avalanche_x8(h1), bk_xxh3_avalanche_x8(h2), hashes);
}

/* The length shared by keys[0..LANES), if it is 8 or 16; else 0. */
static size_t common_width(const bk_key *keys)
{
    size_t len = keys[0].len;
    if (len != 8 && len != 16)
        return 0;
    for (unsigned j = 1; j < LANES; j++)
        if (keys[j].len != len)
            return 0;
    return len;
}

/* XXH3's short-key branch of a key length: 4 to 8 bytes, 9 to 16, or
 * another (SHORT_NONE). */
enum { SHORT_NONE, SHORT_4TO8, SHORT_9TO16 };

static inline unsigned short_branch(size_t len)
{
    if (len >= 4 && len <= 8)
        return SHORT_4TO8;
    return len >= 9 && len <= 16 ? SHORT_9TO16 : SHORT_NONE;
}

/* The branch keys[0..LANES) share, or SHORT_NONE. */
static unsigned common_short_branch(const bk_key *keys)
{
    unsigned branch = short_branch(keys[0].len);
    for (unsigned j = 1; j < LANES; j++)
        if (short_branch(keys[j].len) != branch)
            return SHORT_NONE;
    return branch;
}

/* What a lane holds of its key.  x86 reads little-endian, as XXH3 and
 * XXH64 do. */
typedef uint64_t (*lane_value)(const bk_key *key);

static inline uint64_t read_word(const bk_key *key, size_t offset)
{
    uint64_t word;
    memcpy(&word, (const char *)key->data + offset, 8);
    return word;
}

static inline uint32_t read_half(const bk_key *key, size_t offset)
{
    uint32_t half;
    memcpy(&half, (const char *)key->data + offset, 4);
    return half;
}

static inline uint64_t first_word(const bk_key *key) { return read_word(key, 0); }
static inline uint64_t second_word(const bk_key *key) { return read_word(key, 8); }
static inline uint64_t last_word(const bk_key *key) { return read_word(key, key->len - 8); }

static inline uint64_t halves_4to8(const bk_key *key)
{
    return read_half(key, 0) + ((uint64_t)read_half(key, key->len - 4) << 32);
}

static inline uint64_t factor_4to8(const bk_key *key) { return XXH_PRIME64_1 + 4 * key->len; }
static inline uint64_t len_term_9to16(const bk_key *key)
{
    return (uint64_t)(key->len - 1) << 54;
}

static inline uint64_t key_length(const bk_key *key) { return key->len; }
static inline uint64_t third_word(const bk_key *key) { return read_word(key, 16); }

/* What XXH64's tail of a key under 32 bytes reads after its whole 8-byte
 * words: a 4-byte word when len & 4, then len & 3 single bytes.  Where the
 * key has no such part the lane reads zeros (and keeps its accumulator),
 * the address chosen by a conditional move rather than a branch, which
 * lengths mixed in a group would mispredict. */
static const uint8_t no_bytes[4];

static inline uint64_t tail_half(const bk_key *key)
{
    const uint8_t *at = key->len & 4 ? (const uint8_t *)key->data + (key->len & ~(size_t)7)
                                     : no_bytes;
    uint32_t half;
    memcpy(&half, at, 4);
    return half;
}

static inline uint64_t tail_byte(const bk_key *key, size_t b)
{
    const uint8_t *at = (key->len & 3) > b
                            ? (const uint8_t *)key->data + (key->len & ~(size_t)3) + b
                            : no_bytes;
    return *at;
}

static inline uint64_t tail_byte_0(const bk_key *key) { return tail_byte(key, 0); }
static inline uint64_t tail_byte_1(const bk_key *key) { return tail_byte(key, 1); }
static inline uint64_t tail_byte_2(const bk_key *key) { return tail_byte(key, 2); }

/* The number of whole 8-byte words keys[0..LANES) share when all are
 * under 32 bytes (XXH64's tail alone), or -1. */
static int common_word_count(const bk_key *keys)
{
    size_t words = keys[0].len / 8;
    for (unsigned j = 0; j < LANES; j++)
        if (keys[j].len >= 32 || keys[j].len / 8 != words)
            return -1;
    return (int)words;
}

/* value(key) of each of the eight keys, assembled in registers.  Eight
 * stores to a stack array and one 64-byte load of it cannot be forwarded,
 * and the load waits for the stores to complete.  A gather (VPGATHERQQ):
 * slower than registers too. */
static inline __attribute__((always_inline)) __m512i lanes_of(const bk_key *keys,
                                                              lane_value value)
{
    __m256i low = _mm256_setr_epi64x((long long)value(keys), (long long)value(keys + 1),
                                     (long long)value(keys + 2), (long long)value(keys + 3));
    __m256i high = _mm256_setr_epi64x((long long)value(keys + 4), (long long)value(keys + 5),
                                      (long long)value(keys + 6), (long long)value(keys + 7));
    return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

/* bk_mix64 (src/hash.h), lane by lane: XXH64's h2 is bk_mix64(h1). */
static inline __m512i mix64(__m512i x)
{
    x = _mm512_mullo_epi64(xorshift(x, 30), _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ULL));
    x = _mm512_mullo_epi64(xorshift(x, 27), _mm512_set1_epi64((long long)0x94d049bb133111ebULL));
    return xorshift(x, 31);
}

/* One step of XXH64's tail: the word w of eight keys into their acc. */
static inline __m512i xxh64_step(__m512i acc, __m512i word)
{
    const __m512i prime1 = _mm512_set1_epi64((long long)XXH_PRIME64_1);
    __m512i round = _mm512_mullo_epi64(word, _mm512_set1_epi64((long long)XXH_PRIME64_2));
    round = _mm512_mullo_epi64(_mm512_rol_epi64(round, 31), prime1);
    acc = _mm512_mullo_epi64(_mm512_rol_epi64(_mm512_xor_si512(acc, round), 27), prime1);
    return _mm512_add_epi64(acc, _mm512_set1_epi64((long long)XXH_PRIME64_4));
}

/* XXH64's final mix of eight accumulators, stored as (h1, mix64(h1)). */
static inline void xxh64_finish(__m512i acc, bk_hash *hashes)
{
    acc = _mm512_mullo_epi64(xorshift(acc, 33), _mm512_set1_epi64((long long)XXH_PRIME64_2));
    acc = _mm512_mullo_epi64(xorshift(acc, 29), _mm512_set1_epi64((long long)XXH_PRIME64_3));
    __m512i h1 = xorshift(acc, 32);
    store_pairs(h1, mix64(h1), hashes);
}

/* XXH64 of eight 8- or 16-byte keys; `second` is NULL for 8-byte keys. */
static void hash_xxh64(__m512i first, const __m512i *second, uint64_t seed, bk_hash *hashes)
{
    uint64_t len = second != NULL ? 16 : 8;
    __m512i acc = _mm512_set1_epi64((long long)(seed + XXH_PRIME64_5 + len));
    acc = xxh64_step(acc, first);
    if (second != NULL)
        acc = xxh64_step(acc, *second);
    xxh64_finish(acc, hashes);
}

/* One single-byte step of XXH64's tail, kept in the lanes of `mask`. */
static inline __m512i xxh64_byte_step(__m512i acc, __m512i bytes, __mmask8 mask)
{
    __m512i one = _mm512_mullo_epi64(bytes, _mm512_set1_epi64((long long)XXH_PRIME64_5));
    __m512i step = _mm512_rol_epi64(_mm512_xor_si512(acc, one), 11);
    step = _mm512_mullo_epi64(step, _mm512_set1_epi64((long long)XXH_PRIME64_1));
    return _mm512_mask_mov_epi64(acc, mask, step);
}

/* XXH64 of eight keys under 32 bytes with the same number of whole 8-byte
 * words (0 to 3), lengths mixed within that: the words' steps for every
 * lane, then the 4-byte step and the one-byte steps of XXH64's tail, each
 * kept only in the lanes whose key has it (a masked move). */
static void hash_xxh64_tails(const bk_key *keys, unsigned words, uint64_t seed, bk_hash *hashes)
{
    __m512i lengths = lanes_of(keys, key_length);
    __m512i acc = _mm512_add_epi64(_mm512_set1_epi64((long long)(seed + XXH_PRIME64_5)),
                                   lengths);
    if (words > 0)
        acc = xxh64_step(acc, lanes_of(keys, first_word));
    if (words > 1)
        acc = xxh64_step(acc, lanes_of(keys, second_word));
    if (words > 2)
        acc = xxh64_step(acc, lanes_of(keys, third_word));
    __mmask8 has_half = _mm512_test_epi64_mask(lengths, _mm512_set1_epi64(4));
    if (has_half != 0) {
        __m512i half = _mm512_mullo_epi64(lanes_of(keys, tail_half),
                                          _mm512_set1_epi64((long long)XXH_PRIME64_1));
        __m512i step = _mm512_rol_epi64(_mm512_xor_si512(acc, half), 23);
        step = _mm512_add_epi64(
            _mm512_mullo_epi64(step, _mm512_set1_epi64((long long)XXH_PRIME64_2)),
            _mm512_set1_epi64((long long)XXH_PRIME64_3));
        acc = _mm512_mask_mov_epi64(acc, has_half, step);
    }
    __m512i bytes = _mm512_and_si512(lengths, _mm512_set1_epi64(3));
    __mmask8 has_byte[3];
    for (unsigned b = 0; b < 3; b++)
        has_byte[b] = _mm512_cmpgt_epu64_mask(bytes, _mm512_set1_epi64(b));
    if (has_byte[0] != 0)
        acc = xxh64_byte_step(acc, lanes_of(keys, tail_byte_0), has_byte[0]);
    if (has_byte[1] != 0)
        acc = xxh64_byte_step(acc, lanes_of(keys, tail_byte_1), has_byte[1]);
    if (has_byte[2] != 0)
        acc = xxh64_byte_step(acc, lanes_of(keys, tail_byte_2), has_byte[2]);
    xxh64_finish(acc, hashes);
}

static inline __attribute__((always_inline)) bk_hash one_key(const bk_key *key, uint64_t seed,
                                                             bool xxh64)
{
    return xxh64 ? bk_hash_xxh64(key->data, key->len, seed)
                 : bk_hash_xxh3(key->data, key->len, seed);
}

/* The constants of XXH3's short-key branches under one seed. */
typedef struct xxh3_flips {
    __m512i bitflip;          /* 8-byte keys */
    __m512i flip_lo, flip_hi; /* 16-byte keys */
} xxh3_flips;

static inline xxh3_flips flips_for(uint64_t seed)
{
    xxh3_flips flips;
    flips.bitflip = _mm512_set1_epi64((long long)bk_xxh3_bitflip_4to8(seed));
    flips.flip_lo = _mm512_set1_epi64((long long)bk_xxh3_flip_9to16_low(seed));
    flips.flip_hi = _mm512_set1_epi64((long long)bk_xxh3_flip_9to16_high(seed));
    return flips;
}

/* Eight keys of `width` (8 or 16) bytes, as words: words_lo holds their
 * first 8 bytes, words_hi (16-byte keys only) their second 8. */
static inline __attribute__((always_inline)) void hash_words(__m512i words_lo, __m512i words_hi,
                                                             size_t width, uint64_t seed,
                                                             const xxh3_flips *flips,
                                                             bk_hash *hashes, bool xxh64)
{
    if (width == 8) {
        if (xxh64)
            hash_xxh64(words_lo, NULL, seed, hashes);
        else
            hash_eight(words_lo, flips->bitflip,
                       _mm512_set1_epi64((long long)(XXH_PRIME64_1 + 4 * 8)), hashes);
    } else {
        if (xxh64)
            hash_xxh64(words_lo, &words_hi, seed, hashes);
        else
            hash_sixteen(words_lo, words_hi, flips->flip_lo, flips->flip_hi,
                         _mm512_set1_epi64((long long)((uint64_t)15 << 54)), hashes);
    }
}

/* XXH3-128 of eight keys of one short-key branch, their lengths lane by
 * lane (the opening comment). */
static void hash_xxh3_branch(const bk_key *keys, unsigned branch, const xxh3_flips *flips,
                             bk_hash *hashes)
{
    if (branch == SHORT_4TO8)
        hash_eight(lanes_of(keys, halves_4to8), flips->bitflip, lanes_of(keys, factor_4to8),
                   hashes);
    else
        hash_sixteen(lanes_of(keys, first_word), lanes_of(keys, last_word), flips->flip_lo,
                     flips->flip_hi, lanes_of(keys, len_term_9to16), hashes);
}

/* Eight keys of mixed lengths that still share a vector path (for XXH3
 * one short-key branch, for XXH64 a count of whole words under 32 bytes),
 * hashed eight at a time; false, doing nothing, for any other group. */
static inline __attribute__((always_inline)) bool hash_mixed_lengths(const bk_key *keys,
                                                                     uint64_t seed,
                                                                     const xxh3_flips *flips,
                                                                     bk_hash *hashes, bool xxh64)
{
    if (xxh64) {
        int words = common_word_count(keys);
        if (words < 0)
            return false;
        hash_xxh64_tails(keys, (unsigned)words, seed, hashes);
        return true;
    }
    unsigned branch = common_short_branch(keys);
    if (branch == SHORT_NONE)
        return false;
    hash_xxh3_branch(keys, branch, flips, hashes);
    return true;
}

/* The loop of both algorithms (`xxh64` a constant where it is inlined):
 * each group of eight keys of one width (8 or 16) is read into vectors of
 * words and hashed eight at a time; so is a group of one XXH3 short-key
 * branch, or for XXH64 of keys under 32 bytes with as many whole words;
 * other groups one key at a time. */
static inline __attribute__((always_inline)) void
hash_keys(const bk_key *keys, size_t count, uint64_t seed, bk_hash *hashes, bool xxh64)
{
    const xxh3_flips flips = flips_for(seed);
    size_t i = 0;
    for (; i + LANES <= count; i += LANES) {
        size_t width = common_width(keys + i);
        if (width == 0) {
            if (hash_mixed_lengths(keys + i, seed, &flips, hashes + i, xxh64))
                continue;
            for (unsigned j = 0; j < LANES; j++)
                hashes[i + j] = one_key(&keys[i + j], seed, xxh64);
            continue;
        }
        __m512i words_lo = lanes_of(keys + i, first_word);
        __m512i words_hi = width == 16 ? lanes_of(keys + i, second_word) : words_lo;
        hash_words(words_lo, words_hi, width, seed, &flips, hashes + i, xxh64);
    }
    for (; i < count; i++)
        hashes[i] = one_key(&keys[i], seed, xxh64);
}

void bk_hash_keys_xxh3_avx512(const bk_key *keys, size_t count, uint64_t seed, bk_hash *hashes)
{
    hash_keys(keys, count, seed, hashes, false);
}

void bk_hash_keys_xxh64_avx512(const bk_key *keys, size_t count, uint64_t seed, bk_hash *hashes)
{
    hash_keys(keys, count, seed, hashes, true);
}

/* Packed keys (bk_hash_packed): eight 8-byte keys are one 64-byte load;
 * eight 16-byte keys are two, their first and second halves separated by
 * two VPERMT2Q.  No descriptor to read, no word assembled lane by lane. */
static inline __attribute__((always_inline)) void hash_packed(const uint8_t *keys, size_t width,
                                                              size_t count, uint64_t seed,
                                                              bk_hash *hashes, bool xxh64)
{
    const xxh3_flips flips = flips_for(seed);
    const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    const __m512i odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
    size_t i = 0;
    for (; i + LANES <= count; i += LANES) {
        const uint8_t *group = keys + i * width;
        __m512i first = _mm512_loadu_si512((const void *)group);
        if (width == 8) {
            hash_words(first, first, 8, seed, &flips, hashes + i, xxh64);
        } else {
            __m512i second = _mm512_loadu_si512((const void *)(group + 64));
            hash_words(_mm512_permutex2var_epi64(first, even, second),
                       _mm512_permutex2var_epi64(first, odd, second), 16, seed, &flips,
                       hashes + i, xxh64);
        }
    }
    for (; i < count; i++)
        hashes[i] = xxh64 ? bk_hash_xxh64(keys + i * width, width, seed)
                          : bk_hash_xxh3(keys + i * width, width, seed);
}

void bk_hash_packed_xxh3_avx512(const void *keys, size_t width, size_t count, uint64_t seed,
                                bk_hash *hashes)
{
    if (width == 8)
        hash_packed(keys, 8, count, seed, hashes, false);
    else
        hash_packed(keys, 16, count, seed, hashes, false);
}

void bk_hash_packed_xxh64_avx512(const void *keys, size_t width, size_t count, uint64_t seed,
                                 bk_hash *hashes)
{
    if (width == 8)
        hash_packed(keys, 8, count, seed, hashes, true);
    else
        hash_packed(keys, 16, count, seed, hashes, true);
}

void bk_hash_packed_mix64_avx512(const void *keys, size_t count, uint64_t seed, bk_hash *hashes)
{
    const __m512i offset1 = _mm512_set1_epi64((long long)(seed ^ BK_MIX64_H1_OFFSET));
    const __m512i offset2 = _mm512_set1_epi64((long long)BK_MIX64_H2_OFFSET);
    const __m512i round = _mm512_set1_epi64((long long)BK_MIX64_ROUND);
    const __m512i factor2 = _mm512_set1_epi64((long long)BK_MIX64_H2_FACTOR);
    const uint8_t *bytes = keys;
    size_t i = 0;
    for (; i + LANES <= count; i += LANES) {
        __m512i z = _mm512_loadu_si512((const void *)(bytes + i * 8));
        z = xorshift(_mm512_mullo_epi64(xorshift(_mm512_xor_si512(z, offset1), 32), round), 32);
        __m512i h1 = _mm512_mullo_epi64(z, round);
        __m512i h2 = _mm512_mullo_epi64(_mm512_add_epi64(z, offset2), factor2);
        store_pairs(xorshift(h1, 32), xorshift(h2, 31), hashes + i);
    }
    for (; i < count; i++)
        hashes[i] = bk_hash_mix64(bytes + i * 8, 8, seed);
}

#endif /* __AVX512F__ && __AVX512DQ__ && __AVX512BW__ */
