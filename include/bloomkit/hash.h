/*
 * bloomkit/hash.h -- turning key bytes into the 128-bit bk_hash.
 *
 * A bk_hasher names the algorithm and its seed or secret key.  Every filter
 * owns one and records its algorithm and seed (never the secret key, only
 * an identifier of it) so that a filter answers identically wherever it is
 * loaded.  Implementation and the reasoning behind the choices: src/hash.c.
 */
#ifndef BLOOMKIT_HASH_H
#define BLOOMKIT_HASH_H

#include "bloomkit/common.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

#define BK_SECRET_KEY_BYTES 16

typedef struct bk_hasher {
    bk_hash_algorithm algorithm;
    uint64_t seed; /* XXH3/XXH64/MIX64: the seed.  SipHash: the key identifier. */
    bool has_key;  /* SipHash: secret_key holds the key */
    uint8_t secret_key[BK_SECRET_KEY_BYTES];
} bk_hasher;

/*
 * Prepares a hasher.  `secret_key` (16 bytes) is required for
 * BK_HASH_SIPHASH and must be NULL otherwise; for SipHash `seed` is ignored
 * and replaced by the key's identifier (bk_secret_key_id).
 * Returns BK_EINVAL for an unknown algorithm or a missing/unexpected key.
 */
bk_status bk_hasher_init(bk_hasher *hasher, bk_hash_algorithm algorithm, uint64_t seed,
                         const uint8_t *secret_key);

/* The hasher that bk_params asks for (algorithm, seed, secret_key). */
bk_status bk_hasher_from_params(bk_hasher *hasher, const bk_params *params);

/* Hashes `len` bytes at `key` (key may be NULL when len is 0). */
bk_hash bk_hash_key(const bk_hasher *hasher, const void *key, size_t len);

/* Hashes `count` keys given by descriptors: hashes[i] =
 * bk_hash_key(hasher, keys[i].data, keys[i].len), eight keys at a time on
 * AVX-512 machines (XXH3: groups of keys of 4 to 8 or of 9 to 16 bytes;
 * XXH64: of keys under 32 bytes with as many whole 8-byte words).  For a
 * caller that keeps the hashes, say to query a batch by hash and then add
 * the absent keys by hash.  BK_EINVAL when hasher is NULL, when keys or
 * hashes is NULL with count > 0, or when a key's data is NULL with len >
 * 0; hashes is then untouched. */
bk_status bk_hash_keys(const bk_hasher *hasher, const bk_key *keys, size_t count,
                       bk_hash *hashes);

/* Hashes `count` keys of `key_len` bytes each stored back to back at
 * `keys` (packed: a column of 64-bit ids, of UUIDs, ...):
 * hashes[i] = bk_hash_key(hasher, keys + i * key_len, key_len), eight keys
 * at a time on AVX-512 machines for 8- and 16-byte keys.  Handed to a
 * hash batch (bk_filter_contains_hash_batch), it makes the key batch
 * without a bk_key per key; bk_filter_contains_packed does both.  BK_EINVAL when hasher is NULL, when hashes is NULL with
 * count > 0, when keys is NULL with bytes to read, or when count * key_len
 * overflows a size_t. */
bk_status bk_hash_packed(const bk_hasher *hasher, const void *keys, size_t key_len, size_t count,
                         bk_hash *hashes);
/* True when two hashers map every key to the same hash (same algorithm and
 * seed or key identifier). */
bool bk_hasher_equal(const bk_hasher *a, const bk_hasher *b);

/* SipHash-2-4 with 64-bit output, as in the reference implementation. */
uint64_t bk_siphash24(const uint8_t key[BK_SECRET_KEY_BYTES], const void *data, size_t len);

/* SipHash-2-4 with 128-bit output (the reference "SipHash128"): h1 holds
 * the first eight output bytes read little-endian, h2 the last eight. */
bk_hash bk_siphash24_128(const uint8_t key[BK_SECRET_KEY_BYTES], const void *data, size_t len);

/* A 64-bit identifier of a secret key: SipHash-2-4 of a fixed label under
 * the key.  Stored in files in place of the key, so a loader given the
 * wrong key can say so (BK_EKEY) without the file revealing the key. */
uint64_t bk_secret_key_id(const uint8_t key[BK_SECRET_KEY_BYTES]);

/* Name of an algorithm ("xxh3", "siphash", "xxh64", "mix64"), or "unknown". */
const char *bk_hash_algorithm_name(bk_hash_algorithm algorithm);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_HASH_H */
