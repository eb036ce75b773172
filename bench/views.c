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

uint64_t VIEW_LOOP(const bench_view *view, const bk_key *keys, size_t count)
{
    uint64_t hits = 0;
    if (view->is_sbbf) {
        const bk_sbbf_view sbbf = view->sbbf;
        for (size_t i = 0; i < count; i++)
            hits += bk_sbbf_view_contains(&sbbf, keys[i].data, keys[i].len);
    } else {
        const bk_fuse_view fuse = view->fuse;
        for (size_t i = 0; i < count; i++)
            hits += bk_fuse_view_contains(&fuse, keys[i].data, keys[i].len);
    }
    return hits;
}

#ifndef BENCH_VIEWS_AVX2
bool bench_view_init(const bk_filter *filter, bench_view *view)
{
    bk_kind kind = bk_filter_kind(filter);
    view->is_sbbf = kind == BK_KIND_SBBF;
    if (view->is_sbbf)
        return bk_sbbf_view_init(bk_filter_object(filter), &view->sbbf) == BK_OK;
    if (bk_fuse_kind_valid(kind))
        return bk_fuse_view_init(bk_filter_object(filter), &view->fuse) == BK_OK;
    return false;
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
