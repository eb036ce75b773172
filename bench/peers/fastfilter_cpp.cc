/*
 * bench/peers/fastfilter_cpp.cc -- adapter for fastfilter_cpp's
 * SimdBlockFilterFixed (src/bloom/simd-block-fixed-fpp.h: the split block
 * Bloom filter of Apache Impala, 256-bit blocks, 8 bits set per key, AVX2),
 * the peer of bloomkit's sbbf (bench/peers.h), twice:
 *
 *   peer                  hash of the key             its filter
 *   fastfilter_cpp        SimpleMixSplit (its own)    SimdBlockFilterFixed
 *   fastfilter_cpp_xxh64  XXH64, seed 0 (Parquet's)   SimdBlockFilterFixed<XXH64>
 *
 * The class is Parquet's filter but for the hash: the block is the upper
 * 32 bits of the 64-bit hash times the block count >> 32, the mask the
 * lower 32 bits times the eight salt constants >> 27 -- bloomkit's sbbf
 * rule, bit for bit.  Its own hash family, SimpleMixSplit, is a seeded
 * murmur64 finaliser of the 64-bit key (two multiplies).  Parquet fixes
 * XXH64 of the key's bytes instead, so the second peer instantiates the
 * class with a family of ours that passes the key through unchanged
 * (KeyIsHash) and hands Add / Find the key bytes' XXH64: the filter then
 * computes exactly Parquet's function, the work bloomkit's sbbf does, for
 * every key width (an 8-byte key's bytes are its little-endian value on
 * the machines this runs on).  The difference between the two peers is
 * the price of Parquet's hash; what is left between the second and sbbf
 * is bloomkit's own code.  same_bits below checks the "exactly".
 *
 * The header comes from the path given to CMake as
 * BLOOMKIT_PEER_FASTFILTER_CPP (its src/ directory is on this file's
 * include path); nothing of it is in bloomkit.  Sized as fastfilter_cpp's
 * own benchmark sizes it, SimdBlockFilterFixed(n): one block per 24 keys
 * (10.7 bits per key, 0.98% false positives by its header's table), so the
 * `fpr` asked for is not used.  The first peer's keys as bench/peers.h
 * says (an 8-byte key is its value, a longer one its XXH3_64bits, a
 * libxxhash call).  XXH64 is compiled into the second peer's loops
 * (XXH_INLINE_ALL, below, and the loops flattened: gcc would otherwise
 * call xxhash.h's finishing step once per key), as bloomkit's sbbf
 * compiles its own into its query, so neither side pays a call for the
 * hash.  Without AVX2 at compile time the class does not exist and
 * create() answers NULL.
 */
#include <climits>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include <xxhash.h>

using std::vector; /* the header names vector unqualified */
#include "bloom/simd-block-fixed-fpp.h"
#include "peers.h"

namespace {

/* Key i of the back-to-back array as the first peer's 64-bit key. */
inline uint64_t mixer_key(const uint8_t *keys, size_t width, size_t i)
{
    if (width == 8) {
        uint64_t value;
        std::memcpy(&value, keys + i * 8, 8);
        return value;
    }
    return XXH3_64bits(keys + i * width, width);
}

} // namespace

/* From here on XXH64 (and every XXH name) is xxhash.h's inline copy, under
 * XXH_INLINE_-prefixed names: xxhash.h allows this second inclusion, and
 * mixer_key above keeps the library's XXH3_64bits. */
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace {

/* Key i as the second peer's 64-bit key: XXH64 (seed 0) of its bytes,
 * Parquet's hash; the width a constant where it is 8. */
inline uint64_t parquet_key(const uint8_t *keys, size_t width, size_t i)
{
    if (width == 8)
        return XXH64(keys + i * 8, 8, 0);
    return XXH64(keys + i * width, width, 0);
}

/* A hash family (the interface of fastfilter_cpp's hashutil.h: default
 * constructed, called with the 64-bit key) for keys that are hashes
 * already. */
struct KeyIsHash {
    uint64_t operator()(uint64_t key) const { return key; }
};

#ifdef __AVX2__
typedef SimdBlockFilterFixed<> mixer_filter;
typedef SimdBlockFilterFixed<KeyIsHash> parquet_filter;

/* One peer's calls: Filter holds the keys as key_of makes them.  Each loop
 * is written twice so that an 8-byte key's width is a constant in one, and
 * is flattened: everything it calls is compiled into it (the first peer's
 * XXH3_64bits, a library call, stays a call). */
template <typename Filter, uint64_t (*key_of)(const uint8_t *, size_t, size_t)>
struct sbbf_calls {
    /* A filter of max(1, bits / 24) blocks, or NULL. */
    static Filter *make(uint64_t bits)
    {
        if (bits > INT_MAX)
            return nullptr;
        try {
            return new Filter(static_cast<int>(bits));
        } catch (...) { /* bad_alloc, or no AVX2 on this CPU */
            return nullptr;
        }
    }

    static void *create(uint64_t n, double) { return make(n); }

    __attribute__((flatten)) static void add(void *filter, const uint8_t *keys, size_t width,
                                             size_t count)
    {
        Filter *sbbf = static_cast<Filter *>(filter);
        if (width == 8)
            for (size_t i = 0; i < count; i++)
                sbbf->Add(key_of(keys, 8, i));
        else
            for (size_t i = 0; i < count; i++)
                sbbf->Add(key_of(keys, width, i));
    }

    __attribute__((flatten)) static uint64_t hits(const void *filter, const uint8_t *keys,
                                                  size_t width, size_t count)
    {
        const Filter *sbbf = static_cast<const Filter *>(filter);
        uint64_t found = 0;
        if (width == 8)
            for (size_t i = 0; i < count; i++)
                found += sbbf->Find(key_of(keys, 8, i));
        else
            for (size_t i = 0; i < count; i++)
                found += sbbf->Find(key_of(keys, width, i));
        return found;
    }

    static uint64_t bytes(const void *filter)
    {
        return static_cast<const Filter *>(filter)->SizeInBytes();
    }

    static void destroy(void *filter) { delete static_cast<Filter *>(filter); }
};

typedef sbbf_calls<mixer_filter, mixer_key> mixer_calls;
typedef sbbf_calls<parquet_filter, parquet_key> parquet_calls;

/* The second peer's block directory, a private member: an explicit
 * instantiation may name private members (C++ [temp.explicit]), and this
 * one hands the member pointer to a friend function declared here, so the
 * check below reads the peer's bits without touching its header. */
typedef uint32_t block_words[8]; /* the class's Bucket */
typedef block_words *parquet_filter::*directory_member;
directory_member parquet_directory();
template <directory_member member> struct expose_directory {
    friend directory_member parquet_directory() { return member; }
};
template struct expose_directory<&parquet_filter::directory_>;

/* bench_peer.same_bits: the second peer built with bloomkit's block count
 * (bits = 24 per block) from the same keys, its directory compared with
 * bloomkit's sbbf bit array. */
int parquet_same_bits(const uint8_t *keys, size_t width, size_t count, const void *bits,
                      uint64_t bytes)
{
    if (bytes == 0 || bytes % 32 != 0 || bytes / 32 > INT_MAX / 24)
        return -1;
    parquet_filter *filter = parquet_calls::make(bytes / 32 * 24);
    if (filter == nullptr)
        return -1;
    parquet_calls::add(filter, keys, width, count);
    bool same = filter->SizeInBytes() == bytes &&
                std::memcmp(filter->*parquet_directory(), bits, bytes) == 0;
    delete filter;
    return same;
}
#else
struct no_calls {
    static void *create(uint64_t, double) { return nullptr; }
    static void add(void *, const uint8_t *, size_t, size_t) {}
    static uint64_t hits(const void *, const uint8_t *, size_t, size_t) { return 0; }
    static uint64_t bytes(const void *) { return 0; }
    static void destroy(void *) {}
};
typedef no_calls mixer_calls;
typedef no_calls parquet_calls;
int parquet_same_bits(const uint8_t *, size_t, size_t, const void *, uint64_t) { return -1; }
#endif

template <typename Calls> bench_peer make_peer(const char *name, const char *filter)
{
    bench_peer peer = {};
    peer.name = name;
    peer.against = "sbbf";
    peer.filter = filter;
    peer.commit = BENCH_PEER_COMMIT;
    peer.create = Calls::create;
    peer.add = Calls::add;
    peer.hits = Calls::hits;
    peer.bytes = Calls::bytes;
    peer.free = Calls::destroy;
    return peer;
}

bench_peer make_parquet_peer()
{
    bench_peer peer = make_peer<parquet_calls>("fastfilter_cpp_xxh64",
                                               "SimdBlockFilterFixed<XXH64>");
    peer.same_bits = parquet_same_bits;
    return peer;
}

} // namespace

extern "C" const bench_peer bench_peer_fastfilter_cpp =
    make_peer<mixer_calls>("fastfilter_cpp", "SimdBlockFilterFixed");
extern "C" const bench_peer bench_peer_fastfilter_cpp_xxh64 = make_parquet_peer();
