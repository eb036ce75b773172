/*
 * bench/views.c -- the inline-view query loop (bench/views.h).  Compiled
 * as is for the baseline, and included by bench/views_avx2.c with
 * BENCH_VIEWS_AVX2 defined to make the -mavx2 copy.
 */
#include "views.h"

#include "cpu.h"

#ifdef BENCH_VIEWS_AVX2
#define VIEW_LOOP bench_view_hits_avx2
#else
#define VIEW_LOOP bench_view_hits_portable
#endif

/* `key_bytes` is a constant where this is inlined below, 0 for keys of
 * mixed lengths. */
static BK_ALWAYS_INLINE uint64_t count_hits(const bk_sbbf_view *view, const bk_key *keys,
                                            size_t count, size_t key_bytes)
{
    const bk_sbbf_view local = *view;
    uint64_t hits = 0;
    for (size_t i = 0; i < count; i++)
        hits += bk_sbbf_view_contains(&local, keys[i].data, key_bytes ? key_bytes : keys[i].len);
    return hits;
}

uint64_t VIEW_LOOP(const bench_view *view, const bk_key *keys, size_t count)
{
    switch (view->key_bytes) {
    case 8: return count_hits(&view->view, keys, count, 8);
    case 16: return count_hits(&view->view, keys, count, 16);
    default: return count_hits(&view->view, keys, count, 0);
    }
}

#ifndef BENCH_VIEWS_AVX2
bool bench_view_init(const bk_filter *filter, size_t key_bytes, bench_view *out)
{
    out->key_bytes = key_bytes;
    return bk_filter_kind(filter) == BK_KIND_SBBF &&
           bk_sbbf_view_init(bk_filter_object(filter), &out->view) == BK_OK;
}

uint64_t bench_view_hits(const bench_view *view, const bk_key *keys, size_t count)
{
#ifdef BENCH_HAVE_AVX2_VIEWS
    if (bk_cpu()->avx2) /* false under BLOOMKIT_PORTABLE */
        return bench_view_hits_avx2(view, keys, count);
#endif
    return bench_view_hits_portable(view, keys, count);
}
#endif
