/*
 * bloomkit/blocked.h -- the cache-line blocked Bloom filter.
 *
 * A Bloom filter cut into 512-bit blocks, one 64-byte cache line each: a key
 * picks one block and sets its k bits there, so a query costs one cache
 * miss however large the filter is (a classic Bloom filter pays up to k).
 * The price is a slightly higher FPR for the same memory: 0.96% instead of
 * 0.82% at 10 bits per key, so 1% takes 9.92 bits per key instead of 9.59;
 * sizing from a target FPR accounts for it.
 * Design, memory layout, formulas and measured figures: src/blocked.c and
 * docs/BLOCKED.md.  Every operation goes through the generic handle
 * (bloomkit/filter.h) with BK_KIND_BLOCKED:
 *
 *     bk_params params = { .capacity = 10000000, .fpr = 0.01 };
 *     bk_filter *filter;
 *     if (bk_filter_create(BK_KIND_BLOCKED, &params, &filter) != BK_OK) ...
 *     bk_filter_add(filter, "alice", 5, NULL);
 *     if (bk_filter_contains(filter, "alice", 5)) ...   // always true
 *     bk_filter_free(filter);
 *
 * Sizing (bk_params): .bits + .hashes: exactly that k, and .bits rounded up
 * to whole 512-bit blocks; .bits_per_key: that budget, k chosen by the
 * blocked FPR formula (bloomkit/sizing.h); otherwise .fpr (default 0.01):
 * the smallest bits per key reaching it.  Any hash algorithm; flags:
 * BK_FLAG_CONCURRENT.  Set algebra needs the same block count, k, hash
 * algorithm and seed.  The key count estimated from the fill inverts the
 * blocked filter's expected fill: right on average, approximate for one
 * filter (docs/BLOCKED.md).  What is specific to the kind is its inline
 * view (bloomkit/blocked_inline.h: bk_blocked_view), which also exposes the
 * raw blocks: block_count x 8 words, block b at words[8b .. 8b+7], bit j of
 * a block at word j / 64, bit j % 64.
 *
 * Thread safety: const functions may run concurrently with each other.  A
 * filter created with BK_FLAG_CONCURRENT also allows adds from many threads
 * at once (atomic OR per word), concurrently with queries; a query that
 * starts after an add has returned always finds that key.
 */
#ifndef BLOOMKIT_BLOCKED_H
#define BLOOMKIT_BLOCKED_H

#include "bloomkit/common.h"
#include "bloomkit/hash.h"
#include "bloomkit/sizing.h"

#endif /* BLOOMKIT_BLOCKED_H */
