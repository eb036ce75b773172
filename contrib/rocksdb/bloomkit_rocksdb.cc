// contrib/rocksdb/bloomkit_rocksdb.cc -- a rocksdb::FilterPolicy whose
// filters are bloomkit's (the format and the choice of kind:
// bloomkit_rocksdb.h; the interfaces RocksDB calls: filter_bits_interface.h).
//
// Building: RocksDB hands the builder the keys of an SST file one at a
// time, each valid only during the call.  The builder keeps only each key's
// 128-bit hash (16 bytes; XXH3, seed 0), skipping a hash equal to the one
// before (RocksDB passes keys in sorted order, with consecutive duplicates),
// and at Finish builds the filter from the hashes (bk_filter_build_hashes)
// and serialises it behind the 8-byte header:
//
//   AddKey ──> bk_hash_key ──> hashes[] ──Finish──> bk_filter_build_hashes
//                                                   ──> [v1|flags|0...|bloomkit file]
//
// Reading: GetFilterBitsReader checks the header and loads the bloomkit
// file (bk_filter_deserialize, which verifies its checksum and copies the
// payload, so the reader holds a second copy of the filter beside the block
// RocksDB keeps).  MayMatch is bk_filter_contains; MultiGet's batch goes to
// bk_filter_contains_batch, which hashes the batch first and then probes
// with the memory of every probe requested ahead.
//
// Failure never loses a key: a build that fails writes a block flagged "no
// filter", and a block that cannot be read gives a reader that answers
// "may match" for every key.
#include "bloomkit_rocksdb.h"

#include <cstring>
#include <vector>

#include "bloomkit/filter.h"
#include "bloomkit/format.h"
#include "bloomkit/hash.h"
#include "filter_bits_interface.h"

namespace bloomkit_rocksdb {

const char kPolicyName[] = "bloomkit.FilterPolicy";

namespace {

constexpr unsigned char kFormatVersion = 1;
constexpr unsigned char kFlagNoFilter = 1;
constexpr size_t kHeaderBytes = 8;
// Keys per bk_filter_contains_batch call in the batched MayMatch.
constexpr int kBatchKeys = 64;

// The params of a filter of `kind` for `keys` keys.
bk_params ParamsFor(bk_kind kind, double bits_per_key, size_t keys) {
  bk_params params{};
  params.capacity = keys > 0 ? keys : 1;
  if (kind == BK_KIND_BLOCKED) params.bits_per_key = bits_per_key;
  return params;
}

// The design (bits per key, FPR) of `kind` for a 10^6-key file.
bool DesignOf(bk_kind kind, double bits_per_key, bk_stats* design) {
  bk_params params = ParamsFor(kind, bits_per_key, 1000000);
  return bk_kind_design(kind, &params, design) == BK_OK;
}

class Builder : public rocksdb::FilterBitsBuilder {
 public:
  Builder(bk_kind kind, double bits_per_key) : kind_(kind), bits_per_key_(bits_per_key) {
    bk_params params{};
    bk_hasher_from_params(&hasher_, &params);  // XXH3, seed 0: cannot fail
    bk_stats design;
    design_bits_per_key_ = DesignOf(kind, bits_per_key, &design) ? design.bits_per_key : 10;
  }

  void AddKey(const rocksdb::Slice& key) override {
    bk_hash hash = bk_hash_key(&hasher_, key.data(), key.size());
    if (!hashes_.empty() && hashes_.back().h1 == hash.h1 && hashes_.back().h2 == hash.h2)
      return;
    hashes_.push_back(hash);
  }

  size_t EstimateEntriesAdded() override { return hashes_.size(); }

  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf) override {
    size_t size = kHeaderBytes;
    char* block = BuildBlock(&size);
    hashes_.clear();  // a partitioned filter reuses the builder
    buf->reset(block);
    return rocksdb::Slice(block, size);
  }

  size_t ApproximateNumEntries(size_t bytes) override {
    return static_cast<size_t>(8.0 * static_cast<double>(bytes) / design_bits_per_key_);
  }

 private:
  // The filter block for the hashes so far (*size: its bytes); a block
  // flagged "no filter" if the filter cannot be built.
  char* BuildBlock(size_t* size) {
    bk_params params = ParamsFor(kind_, bits_per_key_, hashes_.size());
    bk_filter* filter = nullptr;
    size_t filter_bytes = 0;
    char* block = nullptr;
    if (bk_filter_build_hashes(kind_, &params, hashes_.data(), hashes_.size(), &filter) ==
            BK_OK &&
        bk_filter_serialized_size(filter, &filter_bytes) == BK_OK) {
      block = new char[kHeaderBytes + filter_bytes];
      if (bk_filter_serialize(filter, block + kHeaderBytes, filter_bytes, nullptr) == BK_OK)
        *size = kHeaderBytes + filter_bytes;
    }
    bk_filter_free(filter);
    if (block == nullptr) block = new char[kHeaderBytes];
    std::memset(block, 0, kHeaderBytes);
    block[0] = static_cast<char>(kFormatVersion);
    if (*size == kHeaderBytes) block[1] = static_cast<char>(kFlagNoFilter);
    return block;
  }

  bk_kind kind_;
  double bits_per_key_;
  double design_bits_per_key_;
  bk_hasher hasher_;
  std::vector<bk_hash> hashes_;
};

// Answers from a loaded filter, or "may match" for every key when there is
// none (filter_ == nullptr).
class Reader : public rocksdb::FilterBitsReader {
 public:
  explicit Reader(bk_filter* filter) : filter_(filter) {}
  ~Reader() override { bk_filter_free(filter_); }

  bool MayMatch(const rocksdb::Slice& key) override {
    return filter_ == nullptr || bk_filter_contains(filter_, key.data(), key.size());
  }

  void MayMatch(int num_keys, rocksdb::Slice** keys, bool* may_match) override {
    if (filter_ == nullptr) {
      for (int i = 0; i < num_keys; i++) may_match[i] = true;
      return;
    }
    bk_key batch[kBatchKeys];
    for (int start = 0; start < num_keys; start += kBatchKeys) {
      int count = num_keys - start < kBatchKeys ? num_keys - start : kBatchKeys;
      for (int i = 0; i < count; i++) {
        batch[i].data = keys[start + i]->data();
        batch[i].len = keys[start + i]->size();
      }
      bk_filter_contains_batch(filter_, batch, static_cast<size_t>(count), may_match + start);
    }
  }

 private:
  bk_filter* filter_;
};

class Policy : public rocksdb::FilterPolicy {
 public:
  Policy(bk_kind kind, double bits_per_key) : kind_(kind), bits_per_key_(bits_per_key) {}

  const char* Name() const override { return kPolicyName; }
  const char* CompatibilityName() const override { return kPolicyName; }

  rocksdb::FilterBitsBuilder* GetBuilderWithContext(
      const rocksdb::FilterBuildingContext&) const override {
    return new Builder(kind_, bits_per_key_);
  }

  rocksdb::FilterBitsReader* GetFilterBitsReader(const rocksdb::Slice& contents) const override {
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(contents.data());
    bk_filter* filter = nullptr;
    if (contents.size() > kHeaderBytes && bytes[0] == kFormatVersion &&
        (bytes[1] & kFlagNoFilter) == 0) {
      if (bk_filter_deserialize(bytes + kHeaderBytes, contents.size() - kHeaderBytes, nullptr,
                                &filter) != BK_OK)
        filter = nullptr;
    }
    return new Reader(filter);
  }

 private:
  bk_kind kind_;
  double bits_per_key_;
};

}  // namespace

bk_kind KindFor(double bits_per_key) {
  bk_kind best = BK_KIND_BLOCKED;
  bk_stats best_design;
  if (!DesignOf(BK_KIND_BLOCKED, bits_per_key, &best_design)) return BK_KIND_BLOCKED;
  for (bk_kind kind : {BK_KIND_FUSE8, BK_KIND_FUSE16}) {
    bk_stats design;
    if (DesignOf(kind, bits_per_key, &design) && design.bits_per_key <= bits_per_key &&
        design.target_fpr < best_design.target_fpr) {
      best = kind;
      best_design = design;
    }
  }
  return best;
}

const rocksdb::FilterPolicy* NewFilterPolicy(double bits_per_key, bk_kind kind) {
  if (!(bits_per_key >= 1)) return nullptr;
  if (kind == BK_KIND_NONE) kind = KindFor(bits_per_key);
  if (kind != BK_KIND_FUSE8 && kind != BK_KIND_FUSE16 && kind != BK_KIND_BLOCKED) return nullptr;
  return new Policy(kind, bits_per_key);
}

}  // namespace bloomkit_rocksdb
