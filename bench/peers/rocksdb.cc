/*
 * bench/peers/rocksdb.cc -- adapter for RocksDB's FastLocalBloomImpl
 * (util/bloom_impl.h: 512-bit cache-line blocks, probes from one 32-bit
 * hash by multiplication, AVX2 test where compiled in), the peer of
 * bloomkit's blocked kind (bench/peers.h).
 *
 * The header comes from the path given to CMake as BLOOMKIT_PEER_ROCKSDB
 * (RocksDB's top directory and include/ are on this file's include path);
 * nothing of it is in bloomkit.  As RocksDB's filter builder and reader do
 * (table/block_based/filter_policy.cc): the key's 64-bit hash is
 * XXH3_64bits with seed 0 (RocksDB's GetSliceHash64; libxxhash here), its
 * lower half picks the cache line and its upper half the bits; the size is
 * bits_per_key * n rounded up to whole 64-byte lines, with num_probes from
 * ChooseNumProbes(millibits per key).  bits_per_key is the textbook
 * -log2(fpr) / ln 2 (9.6 at 1%; RocksDB's users usually give 10).
 *
 *   one key:  PrepareHash + HashMayMatchPrepared (FilterBitsReader::MayMatch)
 *   batch:    all PrepareHash (which prefetch), then all matches, over at
 *             most 32 keys (MayMatch(num_keys, ...), MultiGet's batch limit)
 *   insert:   AddHash, one key per call
 */
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <xxhash.h>

#include "peers.h"
#include "util/bloom_impl.h"

namespace {

using ROCKSDB_NAMESPACE::FastLocalBloomImpl;

const size_t rocksdb_max_batch = 32;

struct rocksdb_filter {
    char *data;
    uint32_t len_bytes;
    int num_probes;
};

inline uint64_t key_hash(const uint8_t *keys, size_t width, size_t i)
{
    return XXH3_64bits(keys + i * width, width);
}

void *blocked_create(uint64_t n, double fpr)
{
    double bits_per_key = -std::log(fpr) / (std::log(2.0) * std::log(2.0));
    double lines = std::ceil(bits_per_key * static_cast<double>(n) / 512.0);
    if (!(lines >= 1) || lines * 64 > 4294967232.0) /* len_bytes is 32-bit */
        return nullptr;
    rocksdb_filter *filter = static_cast<rocksdb_filter *>(std::calloc(1, sizeof *filter));
    if (filter == nullptr)
        return nullptr;
    filter->len_bytes = static_cast<uint32_t>(lines) * 64;
    filter->num_probes =
        FastLocalBloomImpl::ChooseNumProbes(static_cast<int>(bits_per_key * 1000 + 0.5));
    filter->data = static_cast<char *>(std::aligned_alloc(64, filter->len_bytes));
    if (filter->data == nullptr) {
        std::free(filter);
        return nullptr;
    }
    std::memset(filter->data, 0, filter->len_bytes);
    return filter;
}

void blocked_add(void *opaque, const uint8_t *keys, size_t width, size_t count)
{
    rocksdb_filter *filter = static_cast<rocksdb_filter *>(opaque);
    for (size_t i = 0; i < count; i++) {
        uint64_t h = key_hash(keys, width, i);
        FastLocalBloomImpl::AddHash(static_cast<uint32_t>(h), static_cast<uint32_t>(h >> 32),
                                    filter->len_bytes, filter->num_probes, filter->data);
    }
}

uint64_t blocked_hits(const void *opaque, const uint8_t *keys, size_t width, size_t count)
{
    const rocksdb_filter *filter = static_cast<const rocksdb_filter *>(opaque);
    uint64_t hits = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t h = key_hash(keys, width, i);
        uint32_t offset;
        FastLocalBloomImpl::PrepareHash(static_cast<uint32_t>(h), filter->len_bytes,
                                        filter->data, &offset);
        hits += FastLocalBloomImpl::HashMayMatchPrepared(static_cast<uint32_t>(h >> 32),
                                                         filter->num_probes,
                                                         filter->data + offset);
    }
    return hits;
}

uint64_t blocked_batch_hits(const void *opaque, const uint8_t *keys, size_t width,
                            size_t count)
{
    const rocksdb_filter *filter = static_cast<const rocksdb_filter *>(opaque);
    uint32_t offsets[rocksdb_max_batch], upper[rocksdb_max_batch];
    uint64_t hits = 0;
    for (size_t done = 0; done < count; done += rocksdb_max_batch) {
        size_t n = count - done < rocksdb_max_batch ? count - done : rocksdb_max_batch;
        for (size_t i = 0; i < n; i++) {
            uint64_t h = key_hash(keys, width, done + i);
            FastLocalBloomImpl::PrepareHash(static_cast<uint32_t>(h), filter->len_bytes,
                                            filter->data, &offsets[i]);
            upper[i] = static_cast<uint32_t>(h >> 32);
        }
        for (size_t i = 0; i < n; i++)
            hits += FastLocalBloomImpl::HashMayMatchPrepared(upper[i], filter->num_probes,
                                                             filter->data + offsets[i]);
    }
    return hits;
}

uint64_t blocked_bytes(const void *opaque)
{
    return static_cast<const rocksdb_filter *>(opaque)->len_bytes;
}

void blocked_free(void *opaque)
{
    rocksdb_filter *filter = static_cast<rocksdb_filter *>(opaque);
    if (filter != nullptr)
        std::free(filter->data);
    std::free(filter);
}

bench_peer make_peer()
{
    bench_peer peer = {};
    peer.name = "rocksdb";
    peer.against = "blocked";
    peer.filter = "FastLocalBloomImpl";
    peer.commit = BENCH_PEER_COMMIT;
    peer.batch_name = "MayMatch(32)";
    peer.create = blocked_create;
    peer.add = blocked_add;
    peer.hits = blocked_hits;
    peer.batch_hits = blocked_batch_hits;
    peer.bytes = blocked_bytes;
    peer.free = blocked_free;
    return peer;
}

} // namespace

extern "C" const bench_peer bench_peer_rocksdb = make_peer();
