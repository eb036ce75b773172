/*
 * src/hash.h -- batches of keys to batches of hashes (internal).
 *
 * One key is hashed by bk_hash_inline (include/bloomkit/hash_inline.h,
 * XXH3 and XXH64 inlined from libxxhash-dev, with bk_reduce and the
 * classic filter's probe walk).  This header holds what a batch needs:
 *
 *   bk_hash_key_array                   a chunk of keys -> their hashes,
 *   bk_hash_packed_keys                 from bk_key descriptors or from
 *                                       keys of one width back to back
 *                                       (AVX-512: src/hash_avx512.c)
 *   bk_batch_source, BK_KEY_CHUNK       where a batch's keys are, and the
 *                                       chunk they are hashed by
 *   bk_source_by_chunks                 the loop of every key batch, from
 *                                       either form, into a kind's hash
 *                                       batch, requesting the next chunk's
 *                                       packed keys (bk_source_request_next)
 *   bk_keys_valid                       the check every batch makes first
 */
#ifndef BK_SRC_HASH_H
#define BK_SRC_HASH_H

#include "bloomkit/hash.h"
#include "cpu.h"

#include "bloomkit/hash_inline.h" /* bk_mix64, bk_hash_inline: XXH3/XXH64 inlined */

/* Whether an inline view can hash for this hasher (XXH3, XXH64, MIX64;
 * not the out-of-line SipHash): bk_hash_unkeyed. */
static inline bool bk_hasher_inlinable(const bk_hasher *hasher)
{
    return hasher->algorithm == BK_HASH_XXH3 || hasher->algorithm == BK_HASH_XXH64 ||
           hasher->algorithm == BK_HASH_MIX64;
}

#ifdef BK_HAVE_AVX512_SOURCES
/* bk_hash_key_array for XXH3 and XXH64, eight keys per step where they
 * share a width or (XXH3) a short-key branch (hash_avx512.c). */
void bk_hash_keys_xxh3_avx512(const bk_key *keys, size_t count, uint64_t seed, bk_hash *hashes);
void bk_hash_keys_xxh64_avx512(const bk_key *keys, size_t count, uint64_t seed, bk_hash *hashes);
/* bk_hash_packed_keys for XXH3 and XXH64 when key_len is 8 or 16. */
void bk_hash_packed_xxh3_avx512(const void *keys, size_t key_len, size_t count, uint64_t seed,
                                bk_hash *hashes);
void bk_hash_packed_xxh64_avx512(const void *keys, size_t key_len, size_t count, uint64_t seed,
                                 bk_hash *hashes);
/* bk_hash_packed_keys for MIX64 when key_len is 8. */
void bk_hash_packed_mix64_avx512(const void *keys, size_t count, uint64_t seed, bk_hash *hashes);
#endif

/* Hashes keys[0..count) into hashes[0..count): the first step of every
 * batch call (hash a chunk, then probe it).  The algorithm is chosen once
 * per call, not once per key. */
static inline void bk_hash_key_array(const bk_hasher *hasher, const bk_key *keys, size_t count,
                                     bk_hash *hashes)
{
    const uint64_t seed = hasher->seed;
    if (hasher->algorithm == BK_HASH_XXH3) {
#ifdef BK_HAVE_AVX512_SOURCES
        if (count >= 8 && bk_cpu()->avx512dqbw) {
            bk_hash_keys_xxh3_avx512(keys, count, seed, hashes);
            return;
        }
#endif
        for (size_t i = 0; i < count; i++)
            hashes[i] = bk_hash_xxh3(keys[i].data, keys[i].len, seed);
    } else if (hasher->algorithm == BK_HASH_XXH64) {
#ifdef BK_HAVE_AVX512_SOURCES
        if (count >= 8 && bk_cpu()->avx512dqbw) {
            bk_hash_keys_xxh64_avx512(keys, count, seed, hashes);
            return;
        }
#endif
        for (size_t i = 0; i < count; i++)
            hashes[i] = bk_hash_xxh64(keys[i].data, keys[i].len, seed);
    } else if (hasher->algorithm == BK_HASH_MIX64) {
        for (size_t i = 0; i < count; i++)
            hashes[i] = bk_hash_mix64(keys[i].data, keys[i].len, seed);
    } else {
        for (size_t i = 0; i < count; i++)
            hashes[i] = bk_hash_key(hasher, keys[i].data, keys[i].len);
    }
}

/* The scalar loop of bk_hash_packed_keys: the algorithm and the seed
 * read once (hashes[] could alias *hasher, so the compiler would reload
 * them after every store), one loop per algorithm, and the width a
 * constant where the caller passes one (bk_hash_packed_keys does for 8 and
 * 16), so that only the hash's code for that length is in the loop. */
static inline __attribute__((always_inline)) void
bk_hash_packed_keys_scalar(const bk_hasher *hasher, const uint8_t *keys, size_t key_len,
                           size_t count, bk_hash *hashes)
{
    const uint64_t seed = hasher->seed;
    if (hasher->algorithm == BK_HASH_XXH3) {
        for (size_t i = 0; i < count; i++)
            hashes[i] = bk_hash_xxh3(keys + i * key_len, key_len, seed);
    } else if (hasher->algorithm == BK_HASH_XXH64) {
        for (size_t i = 0; i < count; i++)
            hashes[i] = bk_hash_xxh64(keys + i * key_len, key_len, seed);
    } else if (hasher->algorithm == BK_HASH_MIX64) {
        for (size_t i = 0; i < count; i++)
            hashes[i] = bk_hash_mix64(keys + i * key_len, key_len, seed);
    } else {
        for (size_t i = 0; i < count; i++)
            hashes[i] = bk_hash_key(hasher, keys + i * key_len, key_len);
    }
}

#ifdef BK_HAVE_AVX512_SOURCES
/* Packed keys of a width the packed vector code does not load but the
 * descriptor path hashes eight at a time (XXH3: 4 to 16 bytes, a 4-byte
 * id or IPv4 address say; XXH64: 1 to 31), through that path, with
 * descriptors built on the stack 64 keys at a time.  False, having done
 * nothing, for the other widths and algorithms. */
static inline bool bk_hash_packed_by_descriptors(const bk_hasher *hasher, const uint8_t *keys,
                                                 size_t key_len, size_t count, bk_hash *hashes)
{
    bool xxh3 = hasher->algorithm == BK_HASH_XXH3 && key_len >= 4 && key_len <= 16;
    bool xxh64 = hasher->algorithm == BK_HASH_XXH64 && key_len >= 1 && key_len < 32;
    if (!xxh3 && !xxh64)
        return false;
    bk_key chunk[64];
    for (size_t start = 0; start < count; start += 64) {
        size_t n = count - start < 64 ? count - start : 64;
        for (size_t i = 0; i < n; i++)
            chunk[i] = (bk_key){ keys + (start + i) * key_len, key_len };
        if (xxh3)
            bk_hash_keys_xxh3_avx512(chunk, n, hasher->seed, hashes + start);
        else
            bk_hash_keys_xxh64_avx512(chunk, n, hasher->seed, hashes + start);
    }
    return true;
}
#endif

/* Hashes `count` keys of `key_len` bytes stored back to back at `keys`
 * (packed: a column of fixed-width values) into hashes[0..count): what
 * bk_hash_key_array gives for the same keys as bk_key descriptors. */
static inline void bk_hash_packed_keys(const bk_hasher *hasher, const uint8_t *keys,
                                       size_t key_len, size_t count, bk_hash *hashes)
{
#ifdef BK_HAVE_AVX512_SOURCES
    if ((key_len == 8 || key_len == 16) && count >= 8 && bk_cpu()->avx512dqbw) {
        if (hasher->algorithm == BK_HASH_XXH3) {
            bk_hash_packed_xxh3_avx512(keys, key_len, count, hasher->seed, hashes);
            return;
        }
        if (hasher->algorithm == BK_HASH_XXH64) {
            bk_hash_packed_xxh64_avx512(keys, key_len, count, hasher->seed, hashes);
            return;
        }
        if (hasher->algorithm == BK_HASH_MIX64 && key_len == 8) {
            bk_hash_packed_mix64_avx512(keys, count, hasher->seed, hashes);
            return;
        }
    }
    if (count >= 8 && bk_cpu()->avx512dqbw &&
        bk_hash_packed_by_descriptors(hasher, keys, key_len, count, hashes))
        return;
#endif
    if (key_len == 8)
        bk_hash_packed_keys_scalar(hasher, keys, 8, count, hashes);
    else if (key_len == 16)
        bk_hash_packed_keys_scalar(hasher, keys, 16, count, hashes);
    else
        bk_hash_packed_keys_scalar(hasher, keys, key_len, count, hashes);
}

/* 1024 keys (16 KiB of hashes) per chunk: the kind's prefetch pipeline
 * restarts at each chunk, and its first lines arrive one memory latency
 * after the chunk starts, so bigger chunks restart it less often.
 * Hashing inside the pipeline instead (the keys hashed ahead into a ring,
 * so that no restart remains): no faster. */
#define BK_KEY_CHUNK 1024

/* Where a batch's keys are: bk_key descriptors, packed keys (key_len bytes
 * each, back to back) or hashes made already.  One of keys, packed and
 * hashes is set. */
typedef struct bk_batch_source {
    const bk_key *keys;
    const uint8_t *packed;
    size_t key_len;
    const bk_hash *hashes;
} bk_batch_source;

/* At most this many bytes of packed keys are requested ahead: a full chunk
 * of 8-byte keys, half a chunk of 16-byte keys. */
#define BK_KEY_REQUEST_BYTES (BK_KEY_CHUNK * 8u)

/*
 * Requests (software prefetch) the next chunk of packed keys, from key
 * `next` on, as many bytes as the chunk just hashed had (n keys; at most
 * BK_KEY_REQUEST_BYTES), while the kind probes that chunk.  The probes read
 * random lines of the filter; the keys are read in order, but the
 * hardware's stream prefetcher, between the two, does not have them ready
 * when hashing starts, and each chunk used to begin with a few memory
 * latencies of waiting for its first keys.
 *
 * The request runs past the end of the caller's array (the last chunk
 * requests keys that may not be there): a caller walking a long column in
 * calls of a thousand keys or so, as column stores and the benchmark do,
 * finds the next call's first keys in the cache.  A prefetch never faults
 * and reads nothing into the program, so an address past the array, even
 * an unmapped one, is harmless; it is computed as an integer, not by
 * pointer arithmetic past the array's end.
 *
 * A call requests as many keys as it hashed last: a full chunk requested
 * after a short call would cost that call more than it saves.  bk_key
 * arrays are left alone: their key bytes sit behind descriptors not yet
 * read, and requesting the descriptors alone gave nothing clear
 * (docs/PERFORMANCE.md has the figures).
 */
static inline void bk_source_request_next(const bk_batch_source *source, size_t next, size_t n)
{
    if (source->packed == NULL)
        return;
    uintptr_t from = (uintptr_t)source->packed + next * source->key_len;
    size_t bytes = n * source->key_len; /* no overflow: n <= count */
    if (bytes > BK_KEY_REQUEST_BYTES)
        bytes = BK_KEY_REQUEST_BYTES;
    for (size_t offset = 0; offset < bytes; offset += 64)
        __builtin_prefetch((const void *)(from + offset), 0, 3);
}

/* The hashes of the source's keys start .. start + n - 1 (n <= BK_KEY_CHUNK):
 * its own when it has them, else hashed into `chunk`, and the next chunk's
 * keys requested. */
static inline const bk_hash *bk_source_hashes(const bk_hasher *hasher,
                                              const bk_batch_source *source, size_t start,
                                              size_t n, bk_hash *chunk)
{
    if (source->hashes != NULL)
        return source->hashes + start;
    if (source->keys != NULL)
        bk_hash_key_array(hasher, source->keys + start, n, chunk);
    else
        bk_hash_packed_keys(hasher, source->packed + start * source->key_len, source->key_len, n,
                            chunk);
    bk_source_request_next(source, start + n, n);
    return chunk;
}

/* The key forms of a kind's hash batch: the source's keys are hashed
 * BK_KEY_CHUNK at a time and each chunk goes to `chunk_fn`, which returns a
 * count (keys present, or keys new) and fills results[0..n) when results
 * != NULL.  Returns the sum of the counts.  An adding chunk_fn receives the
 * filter its caller passed as non-const (the cast back is the caller's). */
typedef size_t (*bk_hash_chunk_fn)(const void *filter, const bk_hash *hashes, size_t n,
                                   bool *results);

static inline size_t bk_source_by_chunks(const void *filter, const bk_hasher *hasher,
                                         const bk_batch_source *source, size_t count,
                                         bool *results, bk_hash_chunk_fn chunk_fn)
{
    bk_hash chunk[BK_KEY_CHUNK];
    size_t total = 0;
    for (size_t start = 0; start < count; start += BK_KEY_CHUNK) {
        size_t n = count - start < BK_KEY_CHUNK ? count - start : BK_KEY_CHUNK;
        total += chunk_fn(filter, bk_source_hashes(hasher, source, start, n, chunk), n,
                          results != NULL ? results + start : NULL);
    }
    return total;
}

/* bk_source_by_chunks over bk_key descriptors: the kinds' key batches. */
static inline size_t bk_keys_by_chunks(const void *filter, const bk_hasher *hasher,
                                       const bk_key *keys, size_t count, bool *results,
                                       bk_hash_chunk_fn chunk_fn)
{
    bk_batch_source source = { .keys = keys };
    return bk_source_by_chunks(filter, hasher, &source, count, results, chunk_fn);
}

/* True when a batch of keys can be hashed: `keys` may be NULL only for an
 * empty batch, and a key's data only when its length is 0.  Every batch
 * function checks this before touching its filter, so a bad key anywhere in
 * a batch changes nothing. */
static inline bool bk_keys_valid(const bk_key *keys, size_t count)
{
    if (keys == NULL)
        return count == 0;
    for (size_t i = 0; i < count; i++)
        if (keys[i].data == NULL && keys[i].len != 0)
            return false;
    return true;
}

/* True when `count` packed keys of `key_len` bytes can be read at `keys`:
 * keys may be NULL only when there are no bytes to read, and count *
 * key_len must fit a size_t. */
static inline bool bk_packed_valid(const void *keys, size_t key_len, size_t count)
{
    if (key_len != 0 && count > SIZE_MAX / key_len)
        return false;
    return keys != NULL || key_len == 0 || count == 0;
}

/* a + b, or 2^64 - 1 if that overflows: key counts read from a file may
 * start anywhere, and adding to them must never wrap to a small count. */
static inline uint64_t bk_saturating_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

#endif /* BK_SRC_HASH_H */
