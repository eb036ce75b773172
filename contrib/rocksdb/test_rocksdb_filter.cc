// contrib/rocksdb/test_rocksdb_filter.cc -- the bloomkit FilterPolicy, alone
// and inside RocksDB (CTest test_rocksdb_filter; built with librocksdb-dev).
//
// 1. Builder and reader alone, for fuse8, fuse16, blocked and the kind
//    chosen for 10 bits per key: every added key matches, the batched
//    MayMatch gives the single answers, false positives among 20,000 absent
//    keys stay within mean + 4 standard deviations of Binomial(20000, the
//    design FPR); the block starts with version 1; a block of an unknown
//    version, a truncated one, a damaged one and an empty one each give a
//    reader that matches every key (no false negative, ever).
// 2. Inside RocksDB, for fuse8 and blocked: a DB with the policy and one
//    without filters, small write buffers and target file sizes, no
//    compression (7 MB of data: about 110 SST files on 3 levels; at least
//    50 files on 2 levels required), the same 60,000 keys written in a shuffled
//    order to both, background work finished, both reopened; then every
//    present key and 60,000 absent keys read with Get and MultiGet: every
//    present key is found with its value, and every answer is the one the
//    DB without filters gives.  The statistics tickers show the filter at
//    work (useful > 0) and its in-engine FPR within the binomial bound.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>

#include "bloomkit/filter.h"
#include "bloomkit_rocksdb.h"
#include "filter_bits_interface.h"

namespace {

int failures = 0;

#define CHECK(condition, ...)                                    \
  do {                                                           \
    if (!(condition)) {                                          \
      std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                         \
      std::fputc('\n', stderr);                                  \
      failures++;                                                \
    }                                                            \
  } while (0)

std::string Key(const char* prefix, uint64_t i) {
  char text[40];
  std::snprintf(text, sizeof text, "%s%012llu", prefix, static_cast<unsigned long long>(i));
  return text;
}

// The value stored under `key`: 100 bytes that do not compress much.
std::string Value(const std::string& key) {
  std::string value = "value-" + key + "-";
  uint64_t state = std::hash<std::string>()(key);
  while (value.size() < 100) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    value.push_back(static_cast<char>('a' + (state >> 59)));
  }
  return value;
}

// mean + 4 standard deviations of Binomial(trials, p).
double Bound(double trials, double p) { return trials * p + 4 * std::sqrt(trials * p * (1 - p)); }

double DesignFpr(bk_kind kind, size_t keys) {
  bk_params params{};
  params.capacity = keys;
  if (kind == BK_KIND_BLOCKED) params.bits_per_key = 10;
  bk_stats design;
  return bk_kind_design(kind, &params, &design) == BK_OK ? design.target_fpr : 1.0;
}

struct Block {
  std::unique_ptr<const char[]> bytes;
  rocksdb::Slice contents;
};

Block BuildBlock(const rocksdb::FilterPolicy& policy, const std::vector<std::string>& keys) {
  rocksdb::BlockBasedTableOptions table;
  rocksdb::FilterBuildingContext context(table);
  std::unique_ptr<rocksdb::FilterBitsBuilder> builder(policy.GetBuilderWithContext(context));
  for (const std::string& key : keys) {
    builder->AddKey(key);
    builder->AddKey(key);  // consecutive duplicates, as RocksDB may pass
  }
  CHECK(builder->EstimateEntriesAdded() == keys.size(), "EstimateEntriesAdded %zu",
        builder->EstimateEntriesAdded());
  Block block;
  block.contents = builder->Finish(&block.bytes);
  return block;
}

// A reader over `contents` that must match every key.
void CheckMatchesEverything(const rocksdb::FilterPolicy& policy, const rocksdb::Slice& contents,
                            const char* what) {
  std::unique_ptr<rocksdb::FilterBitsReader> reader(policy.GetFilterBitsReader(contents));
  bool all = true;
  for (uint64_t i = 0; i < 1000; i++) all = all && reader->MayMatch(Key("absent", i));
  CHECK(all, "%s: a reader without a filter said no", what);
}

void TestBuilderAndReader(bk_kind kind) {
  const char* name = kind == BK_KIND_NONE ? "auto(10)" : bk_kind_name(kind);
  std::unique_ptr<const rocksdb::FilterPolicy> policy(bloomkit_rocksdb::NewFilterPolicy(10, kind));
  bk_kind used = kind == BK_KIND_NONE ? bloomkit_rocksdb::KindFor(10) : kind;
  std::vector<std::string> keys, absent;
  for (uint64_t i = 0; i < 20000; i++) keys.push_back(Key("key", i));
  for (uint64_t i = 0; i < 20000; i++) absent.push_back(Key("absent", i));
  Block block = BuildBlock(*policy, keys);
  CHECK(block.contents.size() > 8 && block.contents[0] == 1 && block.contents[1] == 0,
        "%s: the block does not start with version 1 and a filter", name);
  std::unique_ptr<rocksdb::FilterBitsReader> reader(policy->GetFilterBitsReader(block.contents));
  size_t missed = 0, false_positives = 0;
  for (const std::string& key : keys) missed += !reader->MayMatch(key);
  std::vector<rocksdb::Slice> slices(absent.begin(), absent.end());
  std::vector<rocksdb::Slice*> pointers;
  for (rocksdb::Slice& slice : slices) pointers.push_back(&slice);
  std::unique_ptr<bool[]> batch(new bool[slices.size()]);
  reader->MayMatch(static_cast<int>(slices.size()), pointers.data(), batch.get());
  size_t disagreements = 0;
  for (size_t i = 0; i < absent.size(); i++) {
    bool single = reader->MayMatch(absent[i]);
    false_positives += single;
    disagreements += single != batch[i];
  }
  CHECK(missed == 0, "%s: %zu added keys do not match", name, missed);
  CHECK(disagreements == 0, "%s: the batch disagrees with single MayMatch %zu times", name,
        disagreements);
  double bound = Bound(20000, DesignFpr(used, keys.size()));
  CHECK(false_positives <= bound, "%s: %zu false positives, bound %.1f", name, false_positives,
        bound);

  std::string unknown(block.contents.data(), block.contents.size());
  unknown[0] = 2;
  CheckMatchesEverything(*policy, unknown, "version 2");
  CheckMatchesEverything(*policy, rocksdb::Slice(block.contents.data(), block.contents.size() / 2),
                         "truncated block");
  std::string damaged(block.contents.data(), block.contents.size());
  damaged[damaged.size() - 1] ^= 0x55;
  CheckMatchesEverything(*policy, damaged, "damaged block");
  CheckMatchesEverything(*policy, rocksdb::Slice(), "empty block");
}

// ---------------------------------------------------------------- in RocksDB

rocksdb::Options SmallLsmOptions(std::shared_ptr<const rocksdb::FilterPolicy> policy) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.write_buffer_size = 64 << 10;
  options.target_file_size_base = 64 << 10;
  options.max_bytes_for_level_base = 256 << 10;
  options.level0_file_num_compaction_trigger = 2;
  options.compression = rocksdb::kNoCompression;
  options.statistics = rocksdb::CreateDBStatistics();
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy = policy;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

std::unique_ptr<rocksdb::DB> Open(const rocksdb::Options& options, const std::string& path) {
  rocksdb::DB* db = nullptr;
  rocksdb::Status status = rocksdb::DB::Open(options, path, &db);
  CHECK(status.ok(), "open %s: %s", path.c_str(), status.ToString().c_str());
  return std::unique_ptr<rocksdb::DB>(db);
}

void WaitForBackgroundWork(rocksdb::DB* db) {
  db->Flush(rocksdb::FlushOptions());
  for (;;) {
    uint64_t pending = 0, running = 0;
    db->GetIntProperty("rocksdb.compaction-pending", &pending);
    db->GetIntProperty("rocksdb.num-running-compactions", &running);
    if (pending == 0 && running == 0) return;
    rocksdb::Env::Default()->SleepForMicroseconds(20000);
  }
}

// Every answer of `db` for `keys` against `reference`'s, by Get and by MultiGet.
size_t CompareAnswers(rocksdb::DB* db, rocksdb::DB* reference, const std::vector<std::string>& keys,
                      bool present, bool use_multiget) {
  size_t wrong = 0;
  rocksdb::ReadOptions read;
  for (size_t start = 0; start < keys.size(); start += 32) {
    size_t count = std::min<size_t>(32, keys.size() - start);
    std::vector<rocksdb::Slice> batch(keys.begin() + start, keys.begin() + start + count);
    std::vector<std::string> values, expected;
    std::vector<rocksdb::Status> statuses, expected_statuses;
    if (use_multiget) {
      statuses = db->MultiGet(read, batch, &values);
    } else {
      for (const rocksdb::Slice& key : batch) {
        values.emplace_back();
        statuses.push_back(db->Get(read, key, &values.back()));
      }
    }
    expected_statuses = reference->MultiGet(read, batch, &expected);
    for (size_t i = 0; i < count; i++) {
      bool same = statuses[i].code() == expected_statuses[i].code() &&
                  (!statuses[i].ok() || values[i] == expected[i]);
      bool right = present ? statuses[i].ok() && values[i] == Value(batch[i].ToString())
                           : statuses[i].IsNotFound();
      wrong += !same || !right;
    }
  }
  return wrong;
}

void TestInsideRocksDB(bk_kind kind, const std::string& directory) {
  const char* name = bk_kind_name(kind);
  std::shared_ptr<const rocksdb::FilterPolicy> policy(bloomkit_rocksdb::NewFilterPolicy(10, kind));
  rocksdb::Options with = SmallLsmOptions(policy), without = SmallLsmOptions(nullptr);
  std::string path = directory + "/" + name, reference_path = directory + "/" + name + "-nofilter";
  rocksdb::DestroyDB(path, with);
  rocksdb::DestroyDB(reference_path, without);
  const uint64_t count = 60000;
  std::vector<std::string> present, absent;
  {
    std::unique_ptr<rocksdb::DB> db = Open(with, path), reference = Open(without, reference_path);
    if (!db || !reference) return;
    for (uint64_t i = 0; i < count; i++) {
      uint64_t shuffled = (i * 40507u) % count;  // 40507 is coprime with count: a permutation
      std::string key = Key("key", shuffled), value = Value(key);
      db->Put(rocksdb::WriteOptions(), key, value);
      reference->Put(rocksdb::WriteOptions(), key, value);
    }
    WaitForBackgroundWork(db.get());
    WaitForBackgroundWork(reference.get());
  }
  for (uint64_t i = 0; i < count; i++) present.push_back(Key("key", i));
  for (uint64_t i = 0; i < count; i++) absent.push_back(Key("key", i) + "x");  // between keys
  std::unique_ptr<rocksdb::DB> db = Open(with, path), reference = Open(without, reference_path);
  if (!db || !reference) return;
  int levels_used = 0;
  uint64_t files = 0;
  for (int level = 0; level < 7; level++) {
    std::string value;
    db->GetProperty("rocksdb.num-files-at-level" + std::to_string(level), &value);
    files += std::stoull(value);
    levels_used += std::stoull(value) > 0;
  }
  CHECK(files >= 50 && levels_used >= 2, "%s: only %llu SST files on %d levels", name,
        static_cast<unsigned long long>(files), levels_used);

  rocksdb::Statistics* stats = with.statistics.get();
  stats->Reset();
  size_t wrong = CompareAnswers(db.get(), reference.get(), absent, false, false);
  CHECK(wrong == 0, "%s: %zu absent keys answered differently by Get", name, wrong);
  uint64_t useful = stats->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
  uint64_t positive = stats->getTickerCount(rocksdb::BLOOM_FILTER_FULL_POSITIVE);
  uint64_t true_positive = stats->getTickerCount(rocksdb::BLOOM_FILTER_FULL_TRUE_POSITIVE);
  uint64_t false_positive = positive - true_positive;
  double checks = static_cast<double>(useful + false_positive);
  double bound = Bound(checks, DesignFpr(kind, 2000));
  CHECK(useful > 0, "%s: the filter never said no (is it read?)", name);
  CHECK(true_positive == 0, "%s: %llu true positives for absent keys", name,
        static_cast<unsigned long long>(true_positive));
  CHECK(false_positive <= bound, "%s: %llu false positives in %.0f checks, bound %.1f", name,
        static_cast<unsigned long long>(false_positive), checks, bound);
  std::printf("%s: %llu SST files on %d levels; absent-key Gets: %.0f filter checks, "
              "%llu false positives (FPR %.5f)\n",
              name, static_cast<unsigned long long>(files), levels_used, checks,
              static_cast<unsigned long long>(false_positive),
              checks > 0 ? static_cast<double>(false_positive) / checks : 0.0);

  wrong = CompareAnswers(db.get(), reference.get(), absent, false, true);
  CHECK(wrong == 0, "%s: %zu absent keys answered differently by MultiGet", name, wrong);
  wrong = CompareAnswers(db.get(), reference.get(), present, true, false);
  CHECK(wrong == 0, "%s: %zu present keys not found (or differently) by Get", name, wrong);
  wrong = CompareAnswers(db.get(), reference.get(), present, true, true);
  CHECK(wrong == 0, "%s: %zu present keys not found (or differently) by MultiGet", name, wrong);

  db.reset();
  reference.reset();
  rocksdb::DestroyDB(path, with);
  rocksdb::DestroyDB(reference_path, without);
}

}  // namespace

int main(int argc, char** argv) {
  std::string directory = argc > 1 ? argv[1] : "/tmp";
  for (bk_kind kind : {BK_KIND_FUSE8, BK_KIND_FUSE16, BK_KIND_BLOCKED, BK_KIND_NONE})
    TestBuilderAndReader(kind);
  CHECK(bloomkit_rocksdb::NewFilterPolicy(10, BK_KIND_BLOOM) == nullptr, "bloom is refused");
  CHECK(bloomkit_rocksdb::NewFilterPolicy(0.5) == nullptr, "0.5 bits per key is refused");
  CHECK(bloomkit_rocksdb::KindFor(10) == BK_KIND_FUSE8, "10 bits per key is not fuse8");
  CHECK(bloomkit_rocksdb::KindFor(20) == BK_KIND_FUSE16, "20 bits per key is not fuse16");
  CHECK(bloomkit_rocksdb::KindFor(6) == BK_KIND_BLOCKED, "6 bits per key is not blocked");
  for (bk_kind kind : {BK_KIND_FUSE8, BK_KIND_BLOCKED}) TestInsideRocksDB(kind, directory);
  if (failures != 0) {
    std::fprintf(stderr, "test_rocksdb_filter: %d failures\n", failures);
    return 1;
  }
  std::printf("test_rocksdb_filter: all checks passed\n");
  return 0;
}
