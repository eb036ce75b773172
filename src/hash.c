/*
 * src/hash.c -- key bytes to a 128-bit bk_hash.
 *
 * Every kind of filter in bloomkit consumes the same 128-bit hash of a key,
 * two 64-bit words h1 and h2, from which it derives its probe positions
 * (each kind in its own way).  Hashing happens once per key; nothing
 * downstream looks at the key bytes again.  Four algorithms are offered:
 *
 *   BK_HASH_XXH3     XXH3-128 (Collet), seeded with 64 bits, default seed 0.
 *                    Fast (about 0.1 ns/byte plus a few ns per call on
 *                    short keys) and of excellent statistical quality, but
 *                    not keyed: anyone who knows the seed can search for
 *                    keys that collide in a filter.
 *
 *   BK_HASH_SIPHASH  SipHash-2-4 with 128-bit output (Aumasson & Bernstein,
 *                    "SipHash: a fast short-input PRF", 2012), keyed with a
 *                    128-bit secret.  Without the key an attacker can
 *                    neither aim false positives at chosen keys nor flood
 *                    chosen bits.  Several times slower than XXH3; use it
 *                    when keys come from an adversary.
 *
 *   BK_HASH_XXH64    XXH64 of the key with a 64-bit seed: the hash the
 *                    Apache Parquet split-block Bloom filter specifies.
 *                    h1 is XXH64; h2 = mix64(h1) so kinds that need two
 *                    words still get them (64 bits of entropy in all).
 *
 *   BK_HASH_MIX64    For keys of exactly 8 bytes (read as a little-endian
 *                    integer: ids, row numbers, 64-bit hashes) a seeded
 *                    integer mixer, three multiplies; every other length
 *                    is hashed as BK_HASH_XXH3 hashes it, so any key works.
 *                    Not adversary-resistant: the mixer is an unkeyed
 *                    bijection, so anyone who knows the seed can invert it
 *                    and choose keys that land in chosen blocks or bits.
 *                    Use SipHash for keys an adversary chooses.
 *
 * The integer mixer (bloomkit/detail/hash_detail.h, bk_mix64_of_u64):
 *
 *     z  = v ^ (seed ^ K1)                      K1 = 0x9E3779B97F4A7C15
 *     z ^= z >> 32;  z *= M;  z ^= z >> 32      M  = 0xD6E8FEB86659FD93
 *     h1 = z * M;  h1 ^= h1 >> 32
 *     h2 = (z + K2) * P;  h2 ^= h2 >> 31        K2 = 0x6A09E667F3BCC909,
 *                                               P  = 0x94D049BB133111EB
 *
 *   v --xor seed^K1--> [xorshift 32, *M, xorshift 32] --z--+--> [*M, xs 32] --> h1
 *                                                         +--> [+K2, *P, xs 31] --> h2
 *
 * h1 is degski's two-round xorshift-multiply hash of v ^ seed ^ K1 (the
 * form of Stafford's mix13 and Murmur3's fmix64, with one constant M); h2
 * takes z through a second last round, with splitmix64's last multiplier.
 * Each step (xor with a constant, xorshift, multiply by an odd constant,
 * add) is a bijection of 64-bit words, so under one seed distinct keys
 * have distinct h1 and distinct h2: no two 8-byte keys collide in the full
 * hash.  After the shared round h1 and h2 are computed side by side: the
 * latency is two multiplies and a few shifts, as XXH3-128's of 8 bytes,
 * with fewer instructions in all (no 128-bit product), so it is the
 * cheapest of the four per key in a loop and in batches (bloomkit-bench
 * --hash-cost; figures in docs/PERFORMANCE.md).
 *
 * Rejected, for the same job:
 *   - two independent full finalisers (moremur for h1, mix13 for h2): the
 *     same statistics below, but four multiplies: no cheaper than XXH3-128
 *     of 8 bytes written out.
 *   - one round, then h1 and h2 from the two halves of one 128-bit product
 *     (two multiplies): h1 and h2 correlate; a classic (double-hashing)
 *     filter holding the keys 0..10^6-1 showed FPR 1.044% against 1.01%,
 *     8 sigma over its model.
 *   - h2 as a fixed function of h1 alone (rotation, XXH64's mix64(h1)):
 *     64 bits of entropy, and a rotation ties the bits chosen within a
 *     block to the block chosen.
 *   - the seed as a multiplier, or a second seeded word: a multiply more
 *     on every key for nothing the statistics can see.
 *
 * Quality (tests/test_u64.c asserts each with a binomial or chi-square
 * bound, fixed seeds): strict avalanche over 2^16 random keys, every one
 * of the 64 x 128 (input bit, output bit) cells flips with probability
 * within 0.0072 of 1/2 (3.7 sigma, the expected extreme of 8192 cells);
 * the keys 0..2^20-1, the hard case for a weak mixer, fill the 4096 joint
 * buckets of (top 6 bits of h1, top 6 of h2) and of the low 6 bits of each
 * with chi-square 4093 and 4012 (4095 degrees of freedom, sigma 90.5);
 * a bloom and a blocked filter of 10^6 sequential keys at 1% answer 10^7
 * further sequential integers with FPR 1.010% and 1.004% against models
 * of 1.004% and 1.000% (XXH3: 1.012%, 0.999%).
 *
 * SipHash, as implemented below (the paper's notation):
 *
 *   v0 = k0 ^ "somepseu"   v1 = k1 ^ "dorandom"  (^ 0xee for 128-bit output)
 *   v2 = k0 ^ "lygenera"   v3 = k1 ^ "tedbytes"
 *   for each 8-byte little-endian word w (the last one padded and carrying
 *   len mod 256 in its top byte):  v3 ^= w; 2 x SipRound; v0 ^= w
 *   v2 ^= 0xff (0xee for 128-bit); 4 x SipRound; out0 = v0^v1^v2^v3
 *   128-bit only: v1 ^= 0xdd; 4 x SipRound; out1 = v0^v1^v2^v3
 *
 * Checked against the reference test vectors (tests/test_hash.c).
 */
#include "hash.h"

#include <string.h>

static const char key_id_label[] = "bloomkit secret-key identifier v1";

static inline uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t load_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

typedef struct sip_state {
    uint64_t v0, v1, v2, v3;
} sip_state;

static inline void sip_round(sip_state *s)
{
    s->v0 += s->v1;
    s->v1 = rotl64(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = rotl64(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl64(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = rotl64(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = rotl64(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = rotl64(s->v2, 32);
}

static inline void sip_absorb(sip_state *s, uint64_t word)
{
    s->v3 ^= word;
    sip_round(s);
    sip_round(s);
    s->v0 ^= word;
}

static inline uint64_t sip_squeeze(sip_state *s, uint64_t marker, int v1_side)
{
    if (v1_side)
        s->v1 ^= marker;
    else
        s->v2 ^= marker;
    for (int i = 0; i < 4; i++)
        sip_round(s);
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* Initialises the state and absorbs the whole message. */
static sip_state sip_compress(const uint8_t key[BK_SECRET_KEY_BYTES], const void *data,
                              size_t len, int wide)
{
    const uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
    sip_state s = { k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
                    k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL };
    if (wide)
        s.v1 ^= 0xee;
    const uint8_t *bytes = data;
    size_t whole = len & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8)
        sip_absorb(&s, load_le64(bytes + i));
    uint64_t last = (uint64_t)(len & 0xff) << 56;
    for (size_t i = 0; i < (len & 7); i++)
        last |= (uint64_t)bytes[whole + i] << (8 * i);
    sip_absorb(&s, last);
    return s;
}

uint64_t bk_siphash24(const uint8_t key[BK_SECRET_KEY_BYTES], const void *data, size_t len)
{
    sip_state s = sip_compress(key, data, len, 0);
    return sip_squeeze(&s, 0xff, 0);
}

bk_hash bk_siphash24_128(const uint8_t key[BK_SECRET_KEY_BYTES], const void *data, size_t len)
{
    sip_state s = sip_compress(key, data, len, 1);
    bk_hash out;
    out.h1 = sip_squeeze(&s, 0xee, 0);
    out.h2 = sip_squeeze(&s, 0xdd, 1);
    return out;
}

uint64_t bk_secret_key_id(const uint8_t key[BK_SECRET_KEY_BYTES])
{
    return bk_siphash24(key, key_id_label, sizeof key_id_label - 1);
}

bk_status bk_hasher_init(bk_hasher *hasher, bk_hash_algorithm algorithm, uint64_t seed,
                         const uint8_t *secret_key)
{
    if (hasher == NULL)
        return BK_EINVAL;
    bk_hasher h;
    memset(&h, 0, sizeof h);
    h.algorithm = algorithm;
    switch (algorithm) {
    case BK_HASH_XXH3:
    case BK_HASH_XXH64:
    case BK_HASH_MIX64:
        if (secret_key != NULL)
            return BK_EINVAL;
        h.seed = seed;
        break;
    case BK_HASH_SIPHASH:
        if (secret_key == NULL)
            return BK_EKEY;
        memcpy(h.secret_key, secret_key, BK_SECRET_KEY_BYTES);
        h.has_key = true;
        h.seed = bk_secret_key_id(secret_key);
        break;
    default: return BK_EINVAL;
    }
    *hasher = h;
    return BK_OK;
}

bk_status bk_hasher_from_params(bk_hasher *hasher, const bk_params *params)
{
    if (params == NULL)
        return BK_EINVAL;
    return bk_hasher_init(hasher, params->hash_algorithm, params->seed, params->secret_key);
}

uint64_t bk_xxh64_any_length(const void *key, size_t len, uint64_t seed)
{
    return XXH64(key, len, seed);
}

bk_hash bk_hash_key(const bk_hasher *hasher, const void *key, size_t len)
{
    bk_hash out = { 0, 0 };
    switch (hasher->algorithm) {
    case BK_HASH_XXH3: {
        XXH128_hash_t h = XXH3_128bits_withSeed(key, len, hasher->seed);
        out.h1 = h.low64;
        out.h2 = h.high64;
        break;
    }
    case BK_HASH_SIPHASH: out = bk_siphash24_128(hasher->secret_key, key, len); break;
    case BK_HASH_XXH64:
        out.h1 = XXH64(key, len, hasher->seed);
        out.h2 = bk_mix64(out.h1);
        break;
    case BK_HASH_MIX64: out = bk_hash_mix64(key, len, hasher->seed); break;
    }
    return out;
}

bk_status bk_hash_keys(const bk_hasher *hasher, const bk_key *keys, size_t count,
                       bk_hash *hashes)
{
    if (hasher == NULL || (hashes == NULL && count != 0) || !bk_keys_valid(keys, count))
        return BK_EINVAL;
    if (count != 0)
        bk_hash_key_array(hasher, keys, count, hashes);
    return BK_OK;
}

bk_status bk_hash_packed(const bk_hasher *hasher, const void *keys, size_t key_len, size_t count,
                         bk_hash *hashes)
{
    if (hasher == NULL || (hashes == NULL && count != 0) ||
        !bk_packed_valid(keys, key_len, count))
        return BK_EINVAL;
    if (count != 0)
        bk_hash_packed_keys(hasher, keys, key_len, count, hashes);
    return BK_OK;
}

bool bk_hasher_equal(const bk_hasher *a, const bk_hasher *b)
{
    return a->algorithm == b->algorithm && a->seed == b->seed;
}

const char *bk_hash_algorithm_name(bk_hash_algorithm algorithm)
{
    switch (algorithm) {
    case BK_HASH_XXH3: return "xxh3";
    case BK_HASH_SIPHASH: return "siphash";
    case BK_HASH_XXH64: return "xxh64";
    case BK_HASH_MIX64: return "mix64";
    }
    return "unknown";
}
