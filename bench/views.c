/*
 * bench/views.c -- the inline-view query loops (bench/views.h).  Compiled
 * as is for the baseline, included by bench/views_avx2.c with
 * BENCH_VIEWS_AVX2 defined to make the -mavx2 copy of the sbbf loops, and
 * by bench/views_avx512.c with BENCH_VIEWS_AVX512 defined to make the
 * -mavx512f -mavx512dq copy of the classic bloom loops.
 */
#include "views.h"

#include "cpu.h"

#if defined(BENCH_VIEWS_AVX2)
#define SBBF_HITS bench_sbbf_hits_avx2
#define SBBF_HASH_HITS bench_sbbf_hash_hits_avx2
#elif defined(BENCH_VIEWS_AVX512)
#define BLOOM_HITS bench_bloom_hits_avx512
#define BLOOM_HASH_HITS bench_bloom_hash_hits_avx512
#else
#define SBBF_HITS bench_sbbf_hits_portable
#define SBBF_HASH_HITS bench_sbbf_hash_hits_portable
#define BLOOM_HITS bench_bloom_hits_portable
#define BLOOM_HASH_HITS bench_bloom_hash_hits_portable
#define BENCH_VIEWS_BASELINE
#endif

/* hits(view, keys, count, width) with the width a compile-time constant for
 * 8- and 16-byte keys (0: each key's own length), as a caller with
 * fixed-width keys compiles it. */
#define WITH_CONSTANT_WIDTH(hits, view, keys, count, key_bytes)                          \
    ((key_bytes) == 8    ? hits(view, keys, count, 8)                                   \
     : (key_bytes) == 16 ? hits(view, keys, count, 16)                                  \
                         : hits(view, keys, count, 0))

/* name(view, keys, count, key_bytes): the one-key loop of a view type over
 * its `contains` (key_bytes 0: each key's own length).  The view is copied
 * to a local, so the compiler keeps its fields in registers. */
#define DEFINE_KEY_HITS(name, view_type, contains)                                        \
    static BK_ALWAYS_INLINE uint64_t name(const view_type *view, const bk_key *keys,     \
                                          size_t count, size_t key_bytes)                \
    {                                                                                    \
        const view_type local = *view;                                                   \
        uint64_t hits = 0;                                                               \
        for (size_t i = 0; i < count; i++)                                               \
            hits += contains(&local, keys[i].data, key_bytes ? key_bytes : keys[i].len); \
        return hits;                                                                     \
    }

#ifdef SBBF_HITS
DEFINE_KEY_HITS(sbbf_hits, bk_sbbf_view, bk_sbbf_view_contains)

uint64_t SBBF_HITS(const bench_view *view, const bk_key *keys, size_t count)
{
    return WITH_CONSTANT_WIDTH(sbbf_hits, &view->sbbf, keys, count, view->key_bytes);
}

uint64_t SBBF_HASH_HITS(const bench_view *view, const bk_hash *hashes, size_t count)
{
    const bk_sbbf_view local = view->sbbf;
    uint64_t hits = 0;
    for (size_t i = 0; i < count; i++)
        hits += bk_sbbf_view_contains_hash64(&local, hashes[i].h1);
    return hits;
}

#endif

#ifdef BLOOM_HITS
DEFINE_KEY_HITS(bloom_hits, bk_bloom_view, bk_bloom_view_contains)

uint64_t BLOOM_HITS(const bench_view *view, const bk_key *keys, size_t count)
{
    return WITH_CONSTANT_WIDTH(bloom_hits, &view->bloom, keys, count, view->key_bytes);
}

uint64_t BLOOM_HASH_HITS(const bench_view *view, const bk_hash *hashes, size_t count)
{
    const bk_bloom_view local = view->bloom;
    uint64_t hits = 0;
    for (size_t i = 0; i < count; i++)
        hits += bk_bloom_view_contains_hash(&local, hashes[i]);
    return hits;
}
#endif

#ifdef BENCH_VIEWS_BASELINE

DEFINE_KEY_HITS(fuse_hits, bk_fuse_view, bk_fuse_view_contains)

bool bench_view_init(const bk_filter *filter, size_t key_bytes, bench_view *out)
{
    const void *object = bk_filter_object(filter);
    out->key_bytes = key_bytes;
    out->kind = bk_filter_kind(filter);
    if (out->kind == BK_KIND_BLOOM)
        return bk_bloom_view_init(object, &out->bloom) == BK_OK;
    if (out->kind == BK_KIND_SBBF)
        return bk_sbbf_view_init(object, &out->sbbf) == BK_OK;
    return bk_fuse_kind_valid(out->kind) && bk_fuse_view_init(object, &out->fuse) == BK_OK;
}

uint64_t bench_view_hits(const bench_view *view, const bk_key *keys, size_t count)
{
    if (view->kind == BK_KIND_BLOOM) {
#ifdef BENCH_HAVE_AVX512_VIEWS
        if (bk_cpu()->avx512dqbw) /* false under BLOOMKIT_PORTABLE, BLOOMKIT_NO_AVX512 */
            return bench_bloom_hits_avx512(view, keys, count);
#endif
        return bench_bloom_hits_portable(view, keys, count);
    }
    if (view->kind != BK_KIND_SBBF)
        return WITH_CONSTANT_WIDTH(fuse_hits, &view->fuse, keys, count, view->key_bytes);
#ifdef BENCH_HAVE_AVX2_VIEWS
    if (bk_cpu()->avx2) /* false under BLOOMKIT_PORTABLE */
        return bench_sbbf_hits_avx2(view, keys, count);
#endif
    return bench_sbbf_hits_portable(view, keys, count);
}

uint64_t bench_view_hash_hits(const bench_view *view, const bk_hash *hashes, size_t count)
{
    if (view->kind == BK_KIND_BLOOM) {
#ifdef BENCH_HAVE_AVX512_VIEWS
        if (bk_cpu()->avx512dqbw)
            return bench_bloom_hash_hits_avx512(view, hashes, count);
#endif
        return bench_bloom_hash_hits_portable(view, hashes, count);
    }
    uint64_t hits = 0;
    if (view->kind != BK_KIND_SBBF) {
        const bk_fuse_view local = view->fuse;
        for (size_t i = 0; i < count; i++)
            hits += bk_fuse_view_contains_hash(&local, hashes[i]);
        return hits;
    }
#ifdef BENCH_HAVE_AVX2_VIEWS
    if (bk_cpu()->avx2)
        return bench_sbbf_hash_hits_avx2(view, hashes, count);
#endif
    return bench_sbbf_hash_hits_portable(view, hashes, count);
}
#endif
