/*
 * bench/peers/xor_singleheader.c -- adapter for xor_singleheader's binary
 * fuse filter with 8-bit fingerprints (binaryfusefilter.h: allocate,
 * populate, contain), the peer of bloomkit's fuse8 (bench/peers.h).
 *
 * The header comes from the path given to CMake as
 * BLOOMKIT_PEER_XOR_SINGLEHEADER (its include/ directory is on this file's
 * include path); nothing of it is in bloomkit.  The filter takes 64-bit
 * keys and mixes them itself (murmur64 finaliser of key + seed): an 8-byte
 * key is passed as its value, a longer one as its XXH3_64bits.
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "binaryfusefilter.h"
#include "peers.h"

/* Key i of the back-to-back array as the peer's 64-bit key. */
static inline uint64_t peer_key(const uint8_t *keys, size_t width, size_t i)
{
    uint64_t value;
    if (width == 8) {
        memcpy(&value, keys + i * 8, 8);
        return value;
    }
    return XXH3_64bits(keys + i * width, width);
}

/* The whole build as a user with keys in hand does it: the 64-bit keys,
 * allocate, populate. */
static void *fuse8_build(const uint8_t *keys, size_t width, size_t count)
{
    if (count < 2 || count > UINT32_MAX)
        return NULL;
    uint64_t *values = malloc(count * sizeof *values);
    binary_fuse8_t *filter = calloc(1, sizeof *filter);
    bool ok = values != NULL && filter != NULL;
    for (size_t i = 0; ok && i < count; i++)
        values[i] = peer_key(keys, width, i);
    ok = ok && binary_fuse8_allocate((uint32_t)count, filter);
    ok = ok && binary_fuse8_populate(values, (uint32_t)count, filter);
    free(values);
    if (!ok && filter != NULL) {
        binary_fuse8_free(filter);
        free(filter);
        filter = NULL;
    }
    return filter;
}

static uint64_t fuse8_hits(const void *filter, const uint8_t *keys, size_t width, size_t count)
{
    const binary_fuse8_t *fuse = filter;
    uint64_t hits = 0;
    if (width == 8) /* the width a constant, as a caller with integer keys compiles it */
        for (size_t i = 0; i < count; i++)
            hits += binary_fuse8_contain(peer_key(keys, 8, i), fuse);
    else
        for (size_t i = 0; i < count; i++)
            hits += binary_fuse8_contain(peer_key(keys, width, i), fuse);
    return hits;
}

static uint64_t fuse8_bytes(const void *filter) { return binary_fuse8_size_in_bytes(filter); }

static void fuse8_free(void *filter)
{
    if (filter != NULL)
        binary_fuse8_free(filter);
    free(filter);
}

const bench_peer bench_peer_xor_singleheader = {
    .name = "xor_singleheader",
    .against = "fuse8",
    .filter = "binary_fuse8",
    .commit = BENCH_PEER_COMMIT,
    .build = fuse8_build,
    .hits = fuse8_hits,
    .bytes = fuse8_bytes,
    .free = fuse8_free,
};
