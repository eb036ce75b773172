// contrib/rocksdb/example.cc -- a RocksDB database whose SST files carry
// bloomkit filters.
//
//   build/release/contrib/rocksdb/rocksdb_example /tmp/bloomkit-example-db
//
// Writes 1,000,000 keys, closes, reopens, reads 1,000 present and 100,000
// absent keys, and prints what the filters did: the files, the filter
// bytes (table properties) and RocksDB's filter tickers.
#include <cstdio>
#include <memory>
#include <string>

#include <rocksdb/db.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>

#include "bloomkit_rocksdb.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: rocksdb_example DB-DIRECTORY\n");
    return 2;
  }
  rocksdb::BlockBasedTableOptions table;
  // 10 bits per key: bloomkit picks fuse8 (FPR 0.39%, about 9 bits per key).
  table.filter_policy.reset(bloomkit_rocksdb::NewFilterPolicy(10));
  rocksdb::Options options;
  options.create_if_missing = true;
  options.statistics = rocksdb::CreateDBStatistics();
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  rocksdb::DB* raw = nullptr;
  rocksdb::Status status = rocksdb::DB::Open(options, argv[1], &raw);
  if (!status.ok()) {
    std::fprintf(stderr, "rocksdb_example: %s\n", status.ToString().c_str());
    return 1;
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  char key[32];
  for (int i = 0; i < 1000000; i++) {
    std::snprintf(key, sizeof key, "user:%09d", i * 2);
    db->Put(rocksdb::WriteOptions(), key, "some value");
  }
  db->Flush(rocksdb::FlushOptions());
  db.reset();
  status = rocksdb::DB::Open(options, argv[1], &raw);
  if (!status.ok()) {
    std::fprintf(stderr, "rocksdb_example: %s\n", status.ToString().c_str());
    return 1;
  }
  db.reset(raw);

  std::string value;
  int found = 0, absent_found = 0;
  for (int i = 0; i < 1000; i++) {
    std::snprintf(key, sizeof key, "user:%09d", i * 2000);
    found += db->Get(rocksdb::ReadOptions(), key, &value).ok();
  }
  options.statistics->Reset();
  for (int i = 0; i < 100000; i++) {
    std::snprintf(key, sizeof key, "user:%09d", i * 20 + 1);  // odd: never written
    absent_found += db->Get(rocksdb::ReadOptions(), key, &value).ok();
  }
  rocksdb::TablePropertiesCollection tables;
  db->GetPropertiesOfAllTables(&tables);
  unsigned long long filter_bytes = 0, filter_keys = 0;
  for (const auto& entry : tables) {
    filter_bytes += entry.second->filter_size;
    filter_keys += entry.second->num_filter_entries;
  }
  unsigned long long useful = options.statistics->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
  unsigned long long positive =
      options.statistics->getTickerCount(rocksdb::BLOOM_FILTER_FULL_POSITIVE);
  std::printf("present keys found: %d of 1000; absent keys found: %d of 100000\n", found,
              absent_found);
  std::printf("%zu SST files, filter policy %s: %llu filter bytes for %llu keys (%.2f bits/key)\n",
              tables.size(), table.filter_policy->Name(), filter_bytes, filter_keys,
              filter_keys ? 8.0 * filter_bytes / filter_keys : 0.0);
  std::printf("absent-key Gets: the filter said no %llu times, maybe %llu times (FPR %.4f)\n",
              useful, positive, useful + positive ? double(positive) / (useful + positive) : 0.0);
  return found == 1000 && absent_found == 0 ? 0 : 1;
}
