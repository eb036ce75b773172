// contrib/rocksdb/bloomkit_rocksdb.h -- bloomkit filters for RocksDB's SST
// files: a rocksdb::FilterPolicy over the bloomkit C library.
//
//   rocksdb::BlockBasedTableOptions table;
//   table.filter_policy.reset(bloomkit_rocksdb::NewFilterPolicy(10));
//   options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
//
// An SST file is written once and never changed, so a static filter --
// built once from the file's whole key set -- fits it exactly: binary fuse
// filters (fuse8: 9.0-9.8 bits per key for an FPR of 2^-8 = 0.39%; fuse16:
// 18-19.6 bits per key for 2^-16 = 0.0015%).  A blocked Bloom filter (one
// 512-bit block per key) takes any bits per key.  NewFilterPolicy chooses
// by bits per key (KindFor below) or takes the kind it is told.
//
// Each filter block is
//
//   byte 0      format version (1)
//   byte 1      flags: bit 0 = "no filter: every key may match"
//   bytes 2-7   zero
//   bytes 8..   the filter as a bloomkit file (docs/FORMAT.md): kind, hash,
//               seed and checksum travel with it
//
// under the meta-block name "fullfilter.bloomkit.FilterPolicy" (RocksDB
// prefixes the policy's CompatibilityName).  A reader that meets a version
// it does not know, or a block it cannot load, answers "may match" for
// every key: the file is read as if it had no filter, never wrongly.
// Later versions of the adapter keep reading version 1.
#pragma once

#include <rocksdb/filter_policy.h>

#include "bloomkit/common.h"

namespace bloomkit_rocksdb
{

// The name RocksDB records for the filters (Name and CompatibilityName).
extern const char kPolicyName[];

// The kind NewFilterPolicy(bits_per_key) uses: of fuse16, fuse8 and
// blocked, the one with the lowest design FPR among those whose design
// bits per key (for a 10^6-key file) are at most bits_per_key; blocked
// when none is.  So: below 9.04 bits per key blocked; up to about 12.3
// fuse8 (0.39%, which a blocked filter only beats beyond that size); then
// blocked (0.33% at 12.5, 0.27% at 13); from 18.09 fuse16 (0.0015%).
bk_kind KindFor(double bits_per_key);

// A new policy (the caller owns it, as with rocksdb::NewBloomFilterPolicy).
// kind: BK_KIND_FUSE8, BK_KIND_FUSE16 or BK_KIND_BLOCKED, or BK_KIND_NONE
// for KindFor(bits_per_key); bits_per_key sizes only the blocked kind (the
// fuse kinds' sizes follow from their fingerprints).  NULL for another
// kind or bits_per_key < 1.
const rocksdb::FilterPolicy *NewFilterPolicy(double bits_per_key, bk_kind kind = BK_KIND_NONE);

} // namespace bloomkit_rocksdb
