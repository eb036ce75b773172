/*
 * bench/peers/fastfilter_cpp.cc -- adapter for fastfilter_cpp's
 * SimdBlockFilterFixed (src/bloom/simd-block-fixed-fpp.h: the split block
 * Bloom filter of Apache Impala, 256-bit blocks, 8 bits set per key, AVX2),
 * the peer of bloomkit's sbbf (bench/peers.h).
 *
 * The header comes from the path given to CMake as
 * BLOOMKIT_PEER_FASTFILTER_CPP (its src/ directory is on this file's
 * include path); nothing of it is in bloomkit.  Sized as fastfilter_cpp's
 * own benchmark sizes it, SimdBlockFilterFixed(n): one block per 24 keys
 * (10.7 bits per key, 0.98% false positives by its header's table), so the
 * `fpr` asked for is not used.  Keys as bench/peers.h says (SimpleMixSplit,
 * a seeded murmur64 finaliser, on the 64-bit key).  Without AVX2 at
 * compile time the peer does not exist and create() answers NULL.
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

inline uint64_t peer_key(const uint8_t *keys, size_t width, size_t i)
{
    if (width == 8) {
        uint64_t value;
        std::memcpy(&value, keys + i * 8, 8);
        return value;
    }
    return XXH3_64bits(keys + i * width, width);
}

#ifdef __AVX2__
typedef SimdBlockFilterFixed<> filter_type;

void *sbbf_create(uint64_t n, double)
{
    if (n > INT_MAX)
        return nullptr;
    try {
        return new filter_type(static_cast<int>(n));
    } catch (...) { /* bad_alloc, or no AVX2 on this CPU */
        return nullptr;
    }
}

void sbbf_add(void *filter, const uint8_t *keys, size_t width, size_t count)
{
    filter_type *sbbf = static_cast<filter_type *>(filter);
    if (width == 8)
        for (size_t i = 0; i < count; i++)
            sbbf->Add(peer_key(keys, 8, i));
    else
        for (size_t i = 0; i < count; i++)
            sbbf->Add(peer_key(keys, width, i));
}

uint64_t sbbf_hits(const void *filter, const uint8_t *keys, size_t width, size_t count)
{
    const filter_type *sbbf = static_cast<const filter_type *>(filter);
    uint64_t hits = 0;
    if (width == 8)
        for (size_t i = 0; i < count; i++)
            hits += sbbf->Find(peer_key(keys, 8, i));
    else
        for (size_t i = 0; i < count; i++)
            hits += sbbf->Find(peer_key(keys, width, i));
    return hits;
}

uint64_t sbbf_bytes(const void *filter)
{
    return static_cast<const filter_type *>(filter)->SizeInBytes();
}

void sbbf_free(void *filter) { delete static_cast<filter_type *>(filter); }
#else
void *sbbf_create(uint64_t, double) { return nullptr; }
void sbbf_add(void *, const uint8_t *, size_t, size_t) {}
uint64_t sbbf_hits(const void *, const uint8_t *, size_t, size_t) { return 0; }
uint64_t sbbf_bytes(const void *) { return 0; }
void sbbf_free(void *) {}
#endif

bench_peer make_peer()
{
    bench_peer peer = {};
    peer.name = "fastfilter_cpp";
    peer.against = "sbbf";
    peer.filter = "SimdBlockFilterFixed";
    peer.commit = BENCH_PEER_COMMIT;
    peer.create = sbbf_create;
    peer.add = sbbf_add;
    peer.hits = sbbf_hits;
    peer.bytes = sbbf_bytes;
    peer.free = sbbf_free;
    return peer;
}

} // namespace

extern "C" const bench_peer bench_peer_fastfilter_cpp = make_peer();
