// contrib/rocksdb/bench_rocksdb_filter.cc -- bloomkit's filters against
// RocksDB's own Bloom and Ribbon filters, inside RocksDB, in one run.
//
//   bench_rocksdb_filter [--keys N] [--lookups L] [--rounds R] [--dir D]
//                        [--policies ID,...]
//
// For each policy: a fresh DB under D (default /tmp/bloomkit-rocksdb-bench) is
// loaded with N keys (default 10^6; "key" + 12 digits, even numbers, in a
// shuffled order, 100-byte values, no compression, no WAL), flushed, and
// left until compactions finish (the load time, which includes building
// every SST file's filter); it is reopened with an 8 MiB block cache (the
// data is 125 bytes a key, so the cache is far smaller than the data;
// filters are held by the table readers, outside the cache, RocksDB's
// default).  All the DBs are loaded first and stay open.  A warm-up pass
// of L absent keys (odd numbers, default 200,000) with Get measures the
// in-engine FPR; then R rounds (default 7) go round the policies in turn,
// A B C ... A B C ..., each round taking from every policy one pass of L
// Gets and one of L MultiGets (batches of 32) of fresh absent keys (new
// each round and other for MultiGet than for Get, so that the data blocks
// a false positive reads are not left in the cache by an earlier pass),
// and one filter build.  Reported:
//
//   filter bytes   sum of the table property filter_size, and bits per key
//   FPR            inside the engine, over the warm-up Gets:
//                  (FULL_POSITIVE - FULL_TRUE_POSITIVE) / (USEFUL + that),
//                  from the BLOOM_FILTER_* statistics tickers
//   work           per absent key, mean over the rounds, for Get and
//                  MultiGet: filter checks (USEFUL + FULL_POSITIVE), data
//                  blocks missed in the block cache (BLOCK_CACHE_DATA_MISS),
//                  blocks read and bytes read from the files (perf context
//                  block_read_count, block_read_byte).  These count work,
//                  not time: the machine's load does not move them.
//   Get, MultiGet  nanoseconds per absent key, wall clock and the thread's
//                  CPU time (CLOCK_THREAD_CPUTIME_ID: not counting time
//                  spent waiting for a core), median and extremes of the
//                  rounds; and the CPU time in per cent of the first
//                  policy's in the same round (median and extremes), a
//                  paired comparison that a slow spell lasting a round
//                  cancels out of
//   load           seconds to write, flush and compact the N keys, once
//   build          nanoseconds per key to build one filter of 10^6 keys
//                  alone (the policy's builder: AddKey then Finish), median
//                  of the rounds
//
// The policies: RocksDB's Bloom (NewBloomFilterPolicy) and Ribbon
// (NewRibbonFilterPolicy, bloom_before_level -1: Ribbon on every level) at
// 10, 12 and 20 bits per key, and bloomkit's at 10 bits per key (fuse8 and
// blocked) and 20 (fuse16); --policies keeps the listed ones, in that
// order (the first is the reference of the CPU ratios).  Figures, and what
// they mean:
// contrib/rocksdb/README.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include "bloomkit_rocksdb.h"
#include "filter_bits_interface.h"

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string Key(uint64_t n) {
  char text[24];
  std::snprintf(text, sizeof text, "key%012llu", static_cast<unsigned long long>(n));
  return text;
}

struct Config {
  const char* id;  // for --policies
  const char* name;
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
};

struct Result {
  double filter_bytes = 0, bits_per_key = 0, fpr = 0, load_seconds = 0;
  uint64_t files = 0;
};

void WaitForCompactions(rocksdb::DB* db) {
  for (;;) {
    uint64_t pending = 0, running = 0;
    db->GetIntProperty("rocksdb.compaction-pending", &pending);
    db->GetIntProperty("rocksdb.num-running-compactions", &running);
    if (pending == 0 && running == 0) return;
    rocksdb::Env::Default()->SleepForMicroseconds(50000);
  }
}

rocksdb::Options MakeOptions(const Config& config, std::shared_ptr<rocksdb::Cache> cache) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.compression = rocksdb::kNoCompression;
  options.statistics = rocksdb::CreateDBStatistics();
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy = config.policy;
  table.block_cache = cache;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

// Nanoseconds per key to build one filter of `count` sorted keys.
double FilterBuildNs(const rocksdb::FilterPolicy& policy, uint64_t count) {
  rocksdb::BlockBasedTableOptions table;
  rocksdb::FilterBuildingContext context(table);
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < count; i++) keys.push_back(Key(2 * i));
  Clock::time_point start = Clock::now();
  std::unique_ptr<rocksdb::FilterBitsBuilder> builder(policy.GetBuilderWithContext(context));
  for (const std::string& key : keys) builder->AddKey(key);
  std::unique_ptr<const char[]> bytes;
  builder->Finish(&bytes);
  return 1e9 * SecondsSince(start) / static_cast<double>(count);
}

bool Load(const rocksdb::Options& options, const std::string& path, uint64_t keys,
          Result* result) {
  rocksdb::DestroyDB(path, options);
  rocksdb::DB* raw = nullptr;
  if (!rocksdb::DB::Open(options, path, &raw).ok()) return false;
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string value(100, 'v');
  rocksdb::WriteOptions write;
  write.disableWAL = true;
  Clock::time_point start = Clock::now();
  rocksdb::WriteBatch batch;
  uint64_t step = 0x9E3779B97F4A7C15ull % keys | 1;  // odd, so coprime with a power of 2 ...
  while (std::gcd(step, keys) != 1) step += 2;  // ... and with keys
  for (uint64_t i = 0; i < keys; i++) {
    batch.Put(Key(2 * ((i * step) % keys)), value);
    if (batch.Count() == 1000) {
      db->Write(write, &batch);
      batch.Clear();
    }
  }
  db->Write(write, &batch);
  db->Flush(rocksdb::FlushOptions());
  WaitForCompactions(db.get());
  result->load_seconds = SecondsSince(start);
  return true;
}

// Rounds of timings (Get, MultiGet, filter build); --rounds sets it.
int rounds = 7;

// The calling thread's CPU time in seconds: unlike the wall clock, it does
// not run while the thread waits for a core, so other work on a shared
// machine inflates it less (cache and memory-bandwidth contention remain).
double ThreadCpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Wall and CPU nanoseconds per key of one pass of lookups.
struct Timing {
  double wall_ns = 0, cpu_ns = 0;
};

// Counts of work done per lookup, from the statistics tickers and the
// thread's perf context: independent of time, so they hold when the clock
// is noisy.
struct Work {
  double filter_checks = 0;  // BLOOM_FILTER_USEFUL + BLOOM_FILTER_FULL_POSITIVE
  double cache_misses = 0;   // BLOCK_CACHE_DATA_MISS: data blocks not in the cache
  double block_reads = 0;    // perf context block_read_count: blocks read from files
  double bytes_read = 0;     // perf context block_read_byte
};

// Runs `pass` over `keys` lookups, returns its timing and adds its work
// (per lookup) to *work.
template <typename Pass>
Timing Measure(rocksdb::Statistics* statistics, size_t keys, Work* work, Pass pass) {
  statistics->Reset();
  rocksdb::get_perf_context()->Reset();
  Clock::time_point start = Clock::now();
  double cpu_start = ThreadCpuSeconds();
  pass();
  Timing timing;
  timing.cpu_ns = 1e9 * (ThreadCpuSeconds() - cpu_start) / static_cast<double>(keys);
  timing.wall_ns = 1e9 * SecondsSince(start) / static_cast<double>(keys);
  double n = static_cast<double>(keys);
  work->filter_checks += (statistics->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL) +
                          statistics->getTickerCount(rocksdb::BLOOM_FILTER_FULL_POSITIVE)) / n;
  work->cache_misses += statistics->getTickerCount(rocksdb::BLOCK_CACHE_DATA_MISS) / n;
  work->block_reads += rocksdb::get_perf_context()->block_read_count / n;
  work->bytes_read += rocksdb::get_perf_context()->block_read_byte / n;
  return timing;
}

// Gets of `keys`; *found counts the keys found.
void Gets(rocksdb::DB* db, const std::vector<std::string>& keys, uint64_t* found) {
  rocksdb::ReadOptions read;
  std::string value;
  for (const std::string& key : keys) *found += db->Get(read, key, &value).ok();
}

// The same with MultiGet in batches of 32 (the filters' batch path).
void MultiGets(rocksdb::DB* db, const std::vector<std::string>& keys, uint64_t* found) {
  rocksdb::ReadOptions read;
  std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
  std::vector<rocksdb::PinnableSlice> values(32);
  std::vector<rocksdb::Status> statuses(32);
  for (size_t i = 0; i < slices.size(); i += 32) {
    size_t count = std::min<size_t>(32, slices.size() - i);
    db->MultiGet(read, db->DefaultColumnFamily(), count, &slices[i], values.data(),
                 statuses.data());
    for (size_t j = 0; j < count; j++) {
      *found += statuses[j].ok();
      values[j].Reset();
    }
  }
}

// One policy's database, open, and what was measured on it: one sample
// per round of each timing, and the work summed over the rounds.
struct Bench {
  Config config;
  rocksdb::Options options;
  std::string path;
  std::unique_ptr<rocksdb::DB> db;
  Result result;
  std::vector<double> get_wall, get_cpu, multiget_wall, multiget_cpu, build;
  Work get_work, multiget_work;
};

// Loads the policy's database, reopens it and reads its table properties.
void LoadAndOpen(Bench* bench, uint64_t keys) {
  bench->options = MakeOptions(bench->config, rocksdb::NewLRUCache(8 << 20));
  rocksdb::DB* raw = nullptr;
  if (!Load(bench->options, bench->path, keys, &bench->result) ||
      !rocksdb::DB::Open(bench->options, bench->path, &raw).ok()) {
    std::fprintf(stderr, "bench_rocksdb_filter: cannot open %s\n", bench->path.c_str());
    std::exit(1);
  }
  bench->db.reset(raw);
  rocksdb::TablePropertiesCollection tables;
  bench->db->GetPropertiesOfAllTables(&tables);
  for (const auto& entry : tables) bench->result.filter_bytes += entry.second->filter_size;
  bench->result.files = tables.size();
  bench->result.bits_per_key = 8 * bench->result.filter_bytes / static_cast<double>(keys);
}

// The in-engine FPR over one pass of Gets of absent keys (the warm-up).
void MeasureFpr(Bench* bench, const std::vector<std::string>& absent, uint64_t* found) {
  rocksdb::Statistics* statistics = bench->options.statistics.get();
  statistics->Reset();
  Gets(bench->db.get(), absent, found);
  double useful = statistics->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
  double positive = statistics->getTickerCount(rocksdb::BLOOM_FILTER_FULL_POSITIVE);
  double true_positive = statistics->getTickerCount(rocksdb::BLOOM_FILTER_FULL_TRUE_POSITIVE);
  double false_positive = positive - true_positive;
  bench->result.fpr =
      useful + false_positive > 0 ? false_positive / (useful + false_positive) : 0;
}

// One round on one policy: a pass of Gets, a pass of MultiGets (of other
// keys, so that neither finds the other's blocks cached), one build.
void MeasureRound(Bench* bench, const std::vector<std::string>& for_get,
                  const std::vector<std::string>& for_multiget, uint64_t* found) {
  rocksdb::DB* db = bench->db.get();
  rocksdb::Statistics* statistics = bench->options.statistics.get();
  Timing get = Measure(statistics, for_get.size(), &bench->get_work,
                       [&] { Gets(db, for_get, found); });
  Timing multiget = Measure(statistics, for_multiget.size(), &bench->multiget_work,
                            [&] { MultiGets(db, for_multiget, found); });
  bench->get_wall.push_back(get.wall_ns);
  bench->get_cpu.push_back(get.cpu_ns);
  bench->multiget_wall.push_back(multiget.wall_ns);
  bench->multiget_cpu.push_back(multiget.cpu_ns);
  bench->build.push_back(FilterBuildNs(*bench->config.policy, 1000000));
}

// `lookups` absent keys (odd numbers below 2 * keys) drawn with `seed`: a
// fresh set each round, so that the data blocks a round's false positives
// read are not still in the block cache from the previous round.
std::vector<std::string> AbsentKeys(uint64_t keys, uint64_t lookups, uint64_t seed) {
  std::vector<std::string> absent;
  uint64_t state = 12345 + seed * 0x9E3779B97F4A7C15ull;
  for (uint64_t i = 0; i < lookups; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    absent.push_back(Key(2 * ((state >> 20) % keys) + 1));
  }
  return absent;
}

// Every policy is loaded first; then the rounds go round the policies in
// turn (A B C ... A B C ...), each round taking one sample of every
// timing from every policy, so that a slow spell of a shared machine
// falls on neighbouring samples of all policies rather than on one.
void MeasureAll(std::vector<Bench>* benches, uint64_t keys, uint64_t lookups) {
  for (Bench& bench : *benches) LoadAndOpen(&bench, keys);
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  uint64_t found = 0;
  std::vector<std::string> warm_up = AbsentKeys(keys, lookups, 0);
  for (Bench& bench : *benches) MeasureFpr(&bench, warm_up, &found);
  for (int round = 0; round < rounds; round++) {
    std::vector<std::string> for_get = AbsentKeys(keys, lookups, 2 * round + 1);
    std::vector<std::string> for_multiget = AbsentKeys(keys, lookups, 2 * round + 2);
    for (Bench& bench : *benches) MeasureRound(&bench, for_get, for_multiget, &found);
  }
  if (found != 0) std::fprintf(stderr, "bench_rocksdb_filter: absent keys were found\n");
  for (Bench& bench : *benches) {
    bench.db.reset();
    rocksdb::DestroyDB(bench.path, bench.options);
  }
}

// The median of the samples and their extremes.
struct Summary {
  double median = 0, min = 0, max = 0;
};

Summary Summarise(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  Summary summary;
  summary.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  summary.min = samples[0];
  summary.max = samples[n - 1];
  return summary;
}

// "median [min-max]" in a column of `width`.
void PrintSummary(const std::vector<double>& samples, int width) {
  Summary summary = Summarise(samples);
  char text[64];
  std::snprintf(text, sizeof text, "%.0f [%.0f-%.0f]", summary.median, summary.min, summary.max);
  std::printf(" %*s", width, text);
}

void PrintWorkTable(const std::vector<Bench>& benches) {
  double samples = rounds;
  std::printf("\nWork per absent key (mean over the %d rounds; independent of time):\n", rounds);
  std::printf("%-22s %6s %12s %9s %10s | %8s %9s %9s %9s | %8s %9s %9s %9s\n", "policy",
              "files", "filter bytes", "bits/key", "FPR", "Get:chk", "cachemiss", "reads",
              "bytes", "MGet:chk", "cachemiss", "reads", "bytes");
  for (const Bench& bench : benches) {
    const Result& r = bench.result;
    const Work& g = bench.get_work;
    const Work& m = bench.multiget_work;
    std::printf("%-22s %6llu %12.0f %9.2f %10.6f | %8.3f %9.5f %9.5f %9.1f | %8.3f %9.5f %9.5f %9.1f\n",
                bench.config.name, static_cast<unsigned long long>(r.files), r.filter_bytes,
                r.bits_per_key, r.fpr, g.filter_checks / samples, g.cache_misses / samples,
                g.block_reads / samples, g.bytes_read / samples, m.filter_checks / samples,
                m.cache_misses / samples, m.block_reads / samples, m.bytes_read / samples);
  }
}

// Each round's sample of `samples` divided by the same round's sample of
// `reference`: the two were taken seconds apart, so a slow spell of the
// machine that lasts a round cancels out of the ratio.
std::vector<double> Ratios(const std::vector<double>& samples, const std::vector<double>& reference) {
  std::vector<double> ratios;
  for (size_t i = 0; i < samples.size(); i++) ratios.push_back(100 * samples[i] / reference[i]);
  return ratios;
}

void PrintTimeTable(const std::vector<Bench>& benches) {
  std::printf("\nTimes, ns per absent key: median [min-max] of %d interleaved rounds;\n"
              "cpu/ref: the thread CPU time in %% of %s's in the same round, median [min-max]:\n",
              rounds, benches[0].config.name);
  std::printf("%-22s %18s %16s %13s %18s %16s %13s %15s %8s\n", "policy", "Get wall", "Get cpu",
              "Get cpu/ref", "MultiGet wall", "MultiGet cpu", "MGet cpu/ref", "build ns/key",
              "load s");
  const Bench& reference = benches[0];
  for (const Bench& bench : benches) {
    std::printf("%-22s", bench.config.name);
    PrintSummary(bench.get_wall, 18);
    PrintSummary(bench.get_cpu, 16);
    PrintSummary(Ratios(bench.get_cpu, reference.get_cpu), 13);
    PrintSummary(bench.multiget_wall, 18);
    PrintSummary(bench.multiget_cpu, 16);
    PrintSummary(Ratios(bench.multiget_cpu, reference.multiget_cpu), 13);
    PrintSummary(bench.build, 15);
    std::printf(" %8.2f\n", bench.result.load_seconds);
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t keys = 1000000, lookups = 200000;
  std::string selected;  // ",id,id,...," or empty for every policy
  std::string directory = "/tmp/bloomkit-rocksdb-bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--keys") == 0)
      keys = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--lookups") == 0)
      lookups = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--dir") == 0)
      directory = argv[i + 1];
    else if (std::strcmp(argv[i], "--rounds") == 0)
      rounds = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--policies") == 0)
      selected = std::string(",") + argv[i + 1] + ",";
  }
  if (keys == 0 || lookups == 0 || rounds < 1 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: bench_rocksdb_filter [--keys N] [--lookups L] [--rounds R] [--dir D]\n"
                 "         [--policies ID,...]  (bloom10 ribbon10 fuse8 blocked10 bloom12\n"
                 "          ribbon12 fuse16 bloom20 ribbon20; the first is the reference)\n");
    return 2;
  }
  using bloomkit_rocksdb::NewFilterPolicy;
  std::vector<Config> configs = {
      {"bloom10", "rocksdb bloom 10", std::shared_ptr<const rocksdb::FilterPolicy>(rocksdb::NewBloomFilterPolicy(10))},
      {"ribbon10", "rocksdb ribbon 10", std::shared_ptr<const rocksdb::FilterPolicy>(rocksdb::NewRibbonFilterPolicy(10, -1))},
      {"fuse8", "bloomkit fuse8 (10)", std::shared_ptr<const rocksdb::FilterPolicy>(NewFilterPolicy(10))},
      {"blocked10", "bloomkit blocked 10", std::shared_ptr<const rocksdb::FilterPolicy>(NewFilterPolicy(10, BK_KIND_BLOCKED))},
      {"bloom12", "rocksdb bloom 12", std::shared_ptr<const rocksdb::FilterPolicy>(rocksdb::NewBloomFilterPolicy(12))},
      {"ribbon12", "rocksdb ribbon 12", std::shared_ptr<const rocksdb::FilterPolicy>(rocksdb::NewRibbonFilterPolicy(12, -1))},
      {"fuse16", "bloomkit fuse16 (20)", std::shared_ptr<const rocksdb::FilterPolicy>(NewFilterPolicy(20))},
      {"bloom20", "rocksdb bloom 20", std::shared_ptr<const rocksdb::FilterPolicy>(rocksdb::NewBloomFilterPolicy(20))},
      {"ribbon20", "rocksdb ribbon 20", std::shared_ptr<const rocksdb::FilterPolicy>(rocksdb::NewRibbonFilterPolicy(20, -1))},
  };
  if (!selected.empty()) {  // keep the listed policies, in the order listed
    std::vector<Config> chosen;
    for (size_t start = 1; start < selected.size(); start = selected.find(',', start) + 1) {
      std::string id = selected.substr(start, selected.find(',', start) - start);
      auto match = std::find_if(configs.begin(), configs.end(),
                                [&](const Config& c) { return id == c.id; });
      if (match == configs.end()) {
        std::fprintf(stderr, "bench_rocksdb_filter: no policy \"%s\"\n", id.c_str());
        return 2;
      }
      chosen.push_back(*match);
    }
    configs = chosen;
  }
  std::printf("%llu keys (125 bytes each with the value), %llu absent-key lookups, 8 MiB block "
              "cache, no compression\n\n",
              static_cast<unsigned long long>(keys), static_cast<unsigned long long>(lookups));
  rocksdb::Env::Default()->CreateDirIfMissing(directory);
  std::vector<Bench> benches(configs.size());
  for (size_t i = 0; i < configs.size(); i++) {
    benches[i].config = configs[i];
    benches[i].path = directory + "/" + std::to_string(i);
  }
  MeasureAll(&benches, keys, lookups);
  PrintWorkTable(benches);
  PrintTimeTable(benches);
  return 0;
}
