/*
 * bench/peers.h -- the fastest filters of other projects, beside bloomkit's
 * kind of the same design (bench/one_key.c times them in the same rounds):
 *
 *   peer                  its filter                          against
 *   xor_singleheader      binary_fuse8 (binaryfusefilter.h)    fuse8
 *   fastfilter_cpp        SimdBlockFilterFixed (AVX2)          sbbf
 *   fastfilter_cpp_xxh64  the same, hashing with XXH64         sbbf
 *   rocksdb               FastLocalBloomImpl (bloom_impl.h)    blocked
 *
 * A kind may have several peers; bench/one_key.c times them all.
 * fastfilter_cpp_xxh64 is the one peer computing bloomkit's own function
 * (Parquet's filter, XXH64 of the key bytes with seed 0, for every key
 * width): the same work, so the gap to it is bloomkit's code, and
 * same_bits checks that its bits are sbbf's.
 *
 * None of their code is in bloomkit.  They are header-only, so an adapter
 * of ours (bench/peers/<name>.c or .cc) includes the peer's header from the
 * path given to CMake (BLOOMKIT_PEER_XOR_SINGLEHEADER, _FASTFILTER_CPP,
 * _ROCKSDB: docs/PERFORMANCE.md) and is compiled into bloomkit-bench with
 * -O3 -march=native, as a program using the peer would compile its inline
 * calls.  Without a path, no adapter is built and the peer's columns are
 * left out.  CMake passes the checkout's commit (git rev-parse HEAD) as
 * BENCH_PEER_COMMIT, which the run's header prints.
 *
 * Keys are the benchmark's own (bench/keys.c): `count` keys of `width`
 * bytes back to back.  Each peer hashes the raw key as its users do: an
 * 8-byte key is its uint64 value, which xor_singleheader and
 * fastfilter_cpp mix with their own seeded mixers; a key of another width
 * (and every RocksDB key, as RocksDB hashes every key) goes through
 * libxxhash's XXH3_64bits first.  fastfilter_cpp_xxh64 takes XXH64 of
 * the key bytes, whatever their width.  The loops live in the adapter, so
 * the peer's one-key call is inlined into them as in its users' code.
 */
#ifndef BENCH_PEERS_H
#define BENCH_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef BENCH_PEER_COMMIT
#define BENCH_PEER_COMMIT "unknown"
#endif

typedef struct bench_peer {
    const char *name;    /* "rocksdb" */
    const char *against; /* the bloomkit kind of the same design: "blocked" */
    const char *filter;  /* what is timed: "FastLocalBloomImpl" */
    const char *commit;  /* the peer's git commit, as CMake found it (or "unknown") */
    /* batch: the peer's own batch query, NULL where it has none (the table
     * then shows a loop of its one-key call, labelled so) */
    const char *batch_name;

    /* A filter for n keys at about `fpr` (the peer's own sizing), empty;
     * NULL when the peer refuses or memory ran out.  Dynamic peers only. */
    void *(*create)(uint64_t n, double fpr);
    /* Adds keys one per call. */
    void (*add)(void *filter, const uint8_t *keys, size_t width, size_t count);
    /* A static peer's filter built from all `count` keys (distinct), or
     * NULL; the time includes hashing the keys. */
    void *(*build)(const uint8_t *keys, size_t width, size_t count);
    /* How many of the keys the filter reports present, one per call. */
    uint64_t (*hits)(const void *filter, const uint8_t *keys, size_t width, size_t count);
    /* The same through the peer's batch query (NULL: none). */
    uint64_t (*batch_hits)(const void *filter, const uint8_t *keys, size_t width, size_t count);
    uint64_t (*bytes)(const void *filter);
    void (*free)(void *filter);
    /* Peers computing bloomkit's function only (else NULL): builds a
     * filter of exactly `bytes` bytes (bloomkit's size) from the `count`
     * keys and compares its bits with `bits`, bloomkit's filter of the
     * same keys.  1: the same, 0: they differ, -1: not checked (a size the
     * peer cannot make, no memory). */
    int (*same_bits)(const uint8_t *keys, size_t width, size_t count, const void *bits,
                     uint64_t bytes);
} bench_peer;

/* The adapters this build has (each defined only when its path was given
 * to CMake). */
extern const bench_peer bench_peer_xor_singleheader;
extern const bench_peer bench_peer_fastfilter_cpp;
extern const bench_peer bench_peer_fastfilter_cpp_xxh64;
extern const bench_peer bench_peer_rocksdb;

#ifdef __cplusplus
}
#endif

#endif
