/*
 * tests/filter_figures.h -- what the classic and blocked filter tests read
 * from a handle: its figures (bk_filter_stats) and, for the tests of a
 * memory layout or of a SIMD path against the portable one, the kind's own
 * object (src/bloom.h, src/blocked.h: internal, kept to those tests).  The
 * set algebra helpers build the combined filter from a copy, as a caller
 * of the handle does.
 */
#ifndef BK_TESTS_FILTER_FIGURES_H
#define BK_TESTS_FILTER_FIGURES_H

#include "blocked.h"
#include "bloom.h"
#include "filter.h"

/* bk_filter_stats of the filter, as a value. */
static inline bk_stats stats_of(const bk_filter *filter)
{
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    return stats;
}

/* The kinds' objects (NULL for another kind). */
static inline bk_bloom *bloom_of(const bk_filter *filter)
{
    return bk_filter_object_of(filter, BK_KIND_BLOOM);
}
static inline bk_blocked *blocked_of(const bk_filter *filter)
{
    return bk_filter_object_of(filter, BK_KIND_BLOCKED);
}

/* The raw bit array of a classic or blocked filter, its size in 64-bit
 * words, and its set bits. */
static inline const uint64_t *words_of(const bk_filter *filter)
{
    return bk_filter_kind(filter) == BK_KIND_BLOOM ? bk_bloom_words(bloom_of(filter))
                                                   : blocked_of(filter)->words;
}
static inline size_t word_count_of(const bk_filter *filter)
{
    return bk_filter_kind(filter) == BK_KIND_BLOOM
               ? bk_bloom_word_count(bloom_of(filter))
               : (size_t)blocked_of(filter)->block_count * BK_BLOCKED_BLOCK_WORDS;
}
static inline uint64_t bits_set_of(const bk_filter *filter)
{
    const uint64_t *words = words_of(filter);
    uint64_t set = 0;
    for (size_t i = 0; i < word_count_of(filter); i++)
        set += (uint64_t)__builtin_popcountll(__atomic_load_n(&words[i], __ATOMIC_RELAXED));
    return set;
}
static inline uint64_t block_count_of(const bk_filter *filter)
{
    return blocked_of(filter)->block_count;
}

/* A new filter: a copy of a, then combined with b (BK_EINCOMPATIBLE and
 * nothing allocated when they cannot combine). */
static inline bk_status combined_new(const bk_filter *a, const bk_filter *b, bool union_of,
                                     bk_filter **out)
{
    bk_filter *result;
    bk_status status = bk_filter_copy(a, &result);
    if (status != BK_OK)
        return status;
    status = union_of ? bk_filter_union(result, b) : bk_filter_intersect(result, b);
    if (status != BK_OK) {
        bk_filter_free(result);
        return status;
    }
    *out = result;
    return BK_OK;
}
static inline bk_status union_new(const bk_filter *a, const bk_filter *b, bk_filter **out)
{
    return combined_new(a, b, true, out);
}
static inline bk_status intersection_new(const bk_filter *a, const bk_filter *b, bk_filter **out)
{
    return combined_new(a, b, false, out);
}

#endif
