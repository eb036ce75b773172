// contrib/rocksdb/filter_bits_interface.h -- the two interfaces through
// which RocksDB 7 builds and reads a filter block.
//
// A rocksdb::FilterPolicy hands RocksDB a FilterBitsBuilder for each filter
// it writes (the keys of one SST file, or of one partition of it) and a
// FilterBitsReader for each filter block it loads.  RocksDB 7 declares both
// classes in an internal header (table/block_based/filter_policy_internal.h)
// that Debian's librocksdb-dev does not install; the public
// rocksdb/filter_policy.h only names them.  This file declares the same
// two interfaces -- the same virtual functions, in the same order, so the
// same vtable layout under the Itanium C++ ABI -- which is all an adapter
// needs: RocksDB only calls these virtual functions.
//
//   FilterBitsBuilder                          called by RocksDB
//     ~FilterBitsBuilder()                     when the filter is written
//     AddKey(key)                              each key, in sorted order,
//                                              consecutive duplicates possible
//     EstimateEntriesAdded()                   for the table property
//     Finish(buf) / Finish(buf, status)        the filter block's bytes
//     MaybePostVerify(contents)                optional self-check
//     ApproximateNumEntries(bytes)             keys that fit in `bytes`
//                                              (partitioned filters)
//   FilterBitsReader
//     ~FilterBitsReader()
//     MayMatch(key)                            Get
//     MayMatch(count, keys, results)           MultiGet's batch
//
// The layout was checked against RocksDB 7.0 to 7.10 (and 8.0): unchanged.
// CMakeLists.txt builds the adapter only for RocksDB 7.
#pragma once

#include <cstddef>
#include <memory>

#include <rocksdb/slice.h>
#include <rocksdb/status.h>
#include <rocksdb/version.h>

#if ROCKSDB_MAJOR != 7
#error \
    "contrib/rocksdb declares RocksDB 7's FilterBitsBuilder/Reader; check them for this version"
#endif

namespace ROCKSDB_NAMESPACE
{

class FilterBitsBuilder
{
  public:
    virtual ~FilterBitsBuilder() {}
    virtual void AddKey(const Slice &key) = 0;
    virtual size_t EstimateEntriesAdded() = 0;
    virtual Slice Finish(std::unique_ptr<const char[]> *buf) = 0;
    virtual Slice Finish(std::unique_ptr<const char[]> *buf, Status * /*status*/)
    {
        return Finish(buf);
    }
    virtual Status MaybePostVerify(const Slice & /*filter_content*/) { return Status::OK(); }
    virtual size_t ApproximateNumEntries(size_t bytes) = 0;
};

class FilterBitsReader
{
  public:
    virtual ~FilterBitsReader() {}
    virtual bool MayMatch(const Slice &entry) = 0;
    virtual void MayMatch(int num_keys, Slice **keys, bool *may_match)
    {
        for (int i = 0; i < num_keys; ++i)
            may_match[i] = MayMatch(*keys[i]);
    }
};

} // namespace ROCKSDB_NAMESPACE
