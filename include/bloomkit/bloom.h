/*
 * bloomkit/bloom.h -- the classic Bloom filter (Bloom 1970).
 *
 * m bits, k probes per key, no false negatives, a false-positive rate set by
 * m/n and k (bloomkit/sizing.h).  Keys cannot be removed.  See src/bloom.c
 * for the design, the memory layout and measured figures.  Every operation
 * goes through the generic handle (bloomkit/filter.h) with BK_KIND_BLOOM:
 *
 *     bk_params params = { .capacity = 1000000, .fpr = 0.01 };
 *     bk_filter *filter;
 *     if (bk_filter_create(BK_KIND_BLOOM, &params, &filter) != BK_OK) ...
 *     bk_filter_add(filter, "alice", 5, NULL);
 *     if (bk_filter_contains(filter, "alice", 5)) ...   // always true
 *     bk_filter_free(filter);
 *
 * bk_filter_add's *was_new tells whether any bit flipped from 0 to 1: false
 * means the key was, or looked, present already -- exactly the test for
 * "admit on the second request".  Set algebra needs equal m, k, hash
 * algorithm and seed; the union is exactly the filter of the union, the
 * intersection contains every key of both sets.  What is specific to the
 * kind is its inline view (bloomkit/bloom_inline.h: bk_bloom_view), which
 * also exposes the raw bit array: ceil(m/64) 64-bit words, bit i at
 * words[i / 64] bit (i % 64), bits at and beyond m zero.
 *
 * Thread safety: const functions may run concurrently with each other.  A
 * filter created with BK_FLAG_CONCURRENT also allows adds from many
 * threads at once, concurrently with queries; a query that starts after an
 * add has returned always finds that key.
 */
#ifndef BLOOMKIT_BLOOM_H
#define BLOOMKIT_BLOOM_H

#include "bloomkit/common.h"
#include "bloomkit/hash.h"
#include "bloomkit/sizing.h"

#endif /* BLOOMKIT_BLOOM_H */
