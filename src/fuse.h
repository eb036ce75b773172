/*
 * src/fuse.h -- the static filters' object (xor8, fuse8, fuse16, fuse8_4),
 * internal.  The handle (bloomkit/filter.h) is the API; this header lets
 * tests check what only the object knows (how many attempts a build took)
 * by reaching it with bk_filter_object_of.  Design and layout: src/fuse.c.
 */
#ifndef BK_SRC_FUSE_H
#define BK_SRC_FUSE_H

#include "bloomkit/fuse.h"
#include "bloomkit/hash.h"

/* Where a kind's slots are and how wide its fingerprints are. */
typedef struct fuse_geometry {
    unsigned arity;                /* d: 3 or 4 slots per key */
    uint32_t segment_length;       /* fuse: L, a power of two; xor: block length s/3 */
    uint32_t segment_mask;         /* fuse: L - 1; xor: 0 */
    uint32_t segment_count;        /* fuse: segments a key may start in; xor: 3 blocks */
    uint64_t segment_count_length; /* fuse: segment_count * L (range of h_0); xor: s/3 */
    uint64_t slots;                /* s */
} fuse_geometry;

/* The object is 64-byte aligned (fuse_object_alloc) and begins with what a
 * one-key query reads: fingerprints, geometry, seed and mix64_key, 56
 * bytes, one cache line. */
typedef struct bk_fuse {
    _Alignas(64) void *fingerprints; /* s entries of 1 or 2 bytes, 64-byte aligned */
    fuse_geometry geometry;
    uint64_t seed;      /* of the attempt that peeled */
    uint64_t mix64_key; /* bk_fuse_mix64_key(hasher.seed) */
    bool mixed;         /* the hash rule (bk_fuse_query_hash): false for a first attempt */
    uint64_t keys;      /* distinct hashes stored */
    bk_kind kind;
    unsigned fingerprint_bits;
    unsigned attempts; /* peeling attempts the build took (1 when the first peeled) */
    bk_hasher hasher;
    bool borrowed; /* fingerprints belong to a mapped file */
} bk_fuse;

#endif
