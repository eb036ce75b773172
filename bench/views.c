/*
 * bench/views.c -- the inline-view query loops (bench/views.h).  Compiled
 * as is for the baseline, included by bench/views_avx2.c with
 * BENCH_VIEWS_AVX2 defined to make the -mavx2 copy of the sbbf and blocked
 * loops, and by bench/views_avx512.c with BENCH_VIEWS_AVX512 defined to
 * make the -mavx512f -mavx512dq -mbmi2 copy of the classic bloom and
 * blocked loops.
 */
#include "views.h"

#include <stdlib.h>
#include <string.h>

#include "cpu.h"

#if defined(BENCH_VIEWS_AVX2)
#define SBBF_HITS bench_sbbf_hits_avx2
#define SBBF_HASH_HITS bench_sbbf_hash_hits_avx2
#define BLOCKED_HITS bench_blocked_hits_avx2
#define BLOCKED_HASH_HITS bench_blocked_hash_hits_avx2
#elif defined(BENCH_VIEWS_AVX512)
#define BLOOM_HITS bench_bloom_hits_avx512
#define BLOOM_HASH_HITS bench_bloom_hash_hits_avx512
#define BLOCKED_HITS bench_blocked_hits_avx512
#define BLOCKED_HASH_HITS bench_blocked_hash_hits_avx512
#else
#define SBBF_HITS bench_sbbf_hits_portable
#define SBBF_HASH_HITS bench_sbbf_hash_hits_portable
#define BLOOM_HITS bench_bloom_hits_portable
#define BLOOM_HASH_HITS bench_bloom_hash_hits_portable
#define BLOCKED_HITS bench_blocked_hits_portable
#define BLOCKED_HASH_HITS bench_blocked_hash_hits_portable
#define BENCH_VIEWS_BASELINE
#endif

/* hits(view, keys, count, width) with the width a compile-time constant for
 * 8- and 16-byte keys (0: each key's own length), as a caller with
 * fixed-width keys compiles it.  Fixed-width keys are read as the packed
 * array they are (bench/keys.c lays key i at key 0's bytes + i * width),
 * as the peers' loops read theirs. */
#define WITH_CONSTANT_WIDTH(hits, view, keys, count, key_bytes) \
    ((key_bytes) == 8    ? hits(view, keys, count, 8)           \
     : (key_bytes) == 16 ? hits(view, keys, count, 16)          \
                         : hits(view, keys, count, 0))

/* 8-byte keys are integer ids: their native-order value is the
 * little-endian bytes' integer on little-endian hosts, where the loops
 * give it to the view's integer-key call (bk_<kind>_view_contains_u64),
 * as bench/one_key.c gives it to bk_filter_contains_u64. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BENCH_VIEW_U64_KEYS 1
#else
#define BENCH_VIEW_U64_KEYS 0
#endif

/* The two loops of one view type, as external functions:
 *   key_hits(view, keys, count): `contains` on each key, the width a
 *     constant through WITH_CONSTANT_WIDTH (the loop itself is
 *     key_hits##_loop), or `contains_u64` on an 8-byte key's value;
 *   hash_hits(view, hashes, count): `contains_hash` on each hash.
 * The view is copied to a local, so the compiler keeps its fields in
 * registers. */
#define DEFINE_VIEW_LOOPS(key_hits, hash_hits, member, view_type, contains, contains_u64,       \
                          contains_hash)                                                        \
    static BK_ALWAYS_INLINE uint64_t key_hits##_loop(const view_type *view, const bk_key *keys, \
                                                     size_t count, size_t key_bytes)            \
    {                                                                                           \
        const view_type local = *view;                                                          \
        uint64_t hits = 0;                                                                      \
        if (key_bytes == 8 && BENCH_VIEW_U64_KEYS && count != 0) {                              \
            const uint8_t *packed = keys[0].data;                                               \
            for (size_t i = 0; i < count; i++) {                                                \
                uint64_t value;                                                                 \
                memcpy(&value, packed + i * 8, 8);                                              \
                hits += contains_u64(&local, value);                                            \
            }                                                                                   \
            return hits;                                                                        \
        }                                                                                       \
        if (key_bytes != 0 && count != 0) {                                                     \
            const uint8_t *packed = keys[0].data;                                               \
            for (size_t i = 0; i < count; i++)                                                  \
                hits += contains(&local, packed + i * key_bytes, key_bytes);                    \
            return hits;                                                                        \
        }                                                                                       \
        for (size_t i = 0; i < count; i++)                                                      \
            hits += contains(&local, keys[i].data, keys[i].len);                                \
        return hits;                                                                            \
    }                                                                                           \
    uint64_t key_hits(const bench_view *view, const bk_key *keys, size_t count)                 \
    {                                                                                           \
        return WITH_CONSTANT_WIDTH(key_hits##_loop, &view->member, keys, count,                 \
                                   view->key_bytes);                                            \
    }                                                                                           \
    uint64_t hash_hits(const bench_view *view, const bk_hash *hashes, size_t count)             \
    {                                                                                           \
        const view_type local = view->member;                                                   \
        uint64_t hits = 0;                                                                      \
        for (size_t i = 0; i < count; i++)                                                      \
            hits += contains_hash(&local, hashes[i]);                                           \
        return hits;                                                                            \
    }

#ifdef SBBF_HITS
/* The sbbf view takes the 64-bit hash (Parquet's XXH64): h1. */
static BK_ALWAYS_INLINE bool sbbf_contains_hash(const struct bk_sbbf_view *view, bk_hash hash)
{
    return bk_sbbf_view_contains_hash64(view, hash.h1);
}

DEFINE_VIEW_LOOPS(SBBF_HITS, SBBF_HASH_HITS, sbbf, struct bk_sbbf_view, bk_sbbf_view_contains,
                  bk_sbbf_view_contains_u64, sbbf_contains_hash)
#endif

#ifdef BLOOM_HITS
/* The classic view has no integer-key call: the value's bytes (little-
 * endian where BENCH_VIEW_U64_KEYS uses this). */
static BK_ALWAYS_INLINE bool bloom_contains_u64(const struct bk_bloom_view *view, uint64_t value)
{
    uint8_t bytes[8];
    memcpy(bytes, &value, 8);
    return bk_bloom_view_contains(view, bytes, 8);
}

DEFINE_VIEW_LOOPS(BLOOM_HITS, BLOOM_HASH_HITS, bloom, struct bk_bloom_view,
                  bk_bloom_view_contains, bloom_contains_u64, bk_bloom_view_contains_hash)
#endif

#ifdef BLOCKED_HITS
DEFINE_VIEW_LOOPS(BLOCKED_HITS, BLOCKED_HASH_HITS, blocked, struct bk_blocked_view,
                  bk_blocked_view_contains, bk_blocked_view_contains_u64,
                  bk_blocked_view_contains_hash)
#endif

#ifdef BENCH_VIEWS_BASELINE
DEFINE_VIEW_LOOPS(bench_fuse_hits, bench_fuse_hash_hits, fuse, struct bk_fuse_view,
                  bk_fuse_view_contains, bk_fuse_view_contains_u64, bk_fuse_view_contains_hash)

/* A kind's two loops in the compiled copy this CPU runs, as a program
 * built for its own machine would: the bk_cpu() flags are false under
 * BLOOMKIT_PORTABLE, and the AVX-512 ones under BLOOMKIT_NO_AVX512. */
static void choose_loops(bench_view *view)
{
    const bk_cpu_features *cpu = bk_cpu();
    (void)cpu; /* unused in a build without the SIMD copies */
    /* BENCH_BASELINE_VIEWS set: the baseline copies (a caller built with
     * plain -O2) beside the library on its best path */
    bool baseline_only = getenv("BENCH_BASELINE_VIEWS") != NULL;
    (void)baseline_only; /* unused in a copy without the SIMD loops */
    bench_key_loop key_loop;
    bench_hash_loop hash_loop;
#define SET_LOOPS(kind, copy) \
    (key_loop = bench_##kind##_hits_##copy, hash_loop = bench_##kind##_hash_hits_##copy)
#ifdef BENCH_HAVE_AVX2_VIEWS
#define IF_AVX2_SET_LOOPS(kind) \
    (cpu->avx2 && !baseline_only ? (void)SET_LOOPS(kind, avx2) : (void)0)
#else
#define IF_AVX2_SET_LOOPS(kind) ((void)0)
#endif
#ifdef BENCH_HAVE_AVX512_VIEWS
/* the AVX-512 copies are built with -mavx512f -mavx512dq -mbmi2, as for a
 * CPU with those (every one with AVX-512 DQ has BMI2) */
#define IF_AVX512_SET_LOOPS(kind) \
    (cpu->avx512dqbw && cpu->bmi2 && !baseline_only ? (void)SET_LOOPS(kind, avx512) : (void)0)
#else
#define IF_AVX512_SET_LOOPS(kind) ((void)0)
#endif
    switch (view->kind) {
    case BK_KIND_BLOOM:
        SET_LOOPS(bloom, portable);
        IF_AVX512_SET_LOOPS(bloom);
        break;
    case BK_KIND_BLOCKED:
        /* portable, then the widest copy the CPU runs */
        SET_LOOPS(blocked, portable);
        IF_AVX2_SET_LOOPS(blocked);
        IF_AVX512_SET_LOOPS(blocked);
        break;
    case BK_KIND_SBBF:
        SET_LOOPS(sbbf, portable);
        IF_AVX2_SET_LOOPS(sbbf);
        break;
    default: key_loop = bench_fuse_hits; hash_loop = bench_fuse_hash_hits;
    }
#undef IF_AVX512_SET_LOOPS
#undef IF_AVX2_SET_LOOPS
#undef SET_LOOPS
    view->key_loop = key_loop;
    view->hash_loop = hash_loop;
}

bool bench_view_init(const bk_filter *filter, size_t key_bytes, bench_view *out)
{
    out->key_bytes = key_bytes;
    out->kind = bk_filter_kind(filter);
    choose_loops(out);
    /* BENCH_VIEW_NO_SIMD_CALLS set: the copies without AVX2 take their
     * portable block tests, not the SIMD ones they call where the CPU has
     * them (bloomkit/detail/view_simd.h) */
    bool portable_tests = getenv("BENCH_VIEW_NO_SIMD_CALLS") != NULL;
    if (out->kind == BK_KIND_BLOOM)
        return bk_bloom_view(filter, &out->bloom) == BK_OK;
    if (out->kind == BK_KIND_BLOCKED) {
        bool ok = bk_blocked_view(filter, &out->blocked) == BK_OK;
        if (portable_tests)
            out->blocked.simd_call = BK_VIEW_SIMD_NONE;
        return ok;
    }
    if (out->kind == BK_KIND_SBBF) {
        bool ok = bk_sbbf_view(filter, &out->sbbf) == BK_OK;
        if (portable_tests)
            out->sbbf.simd_call = BK_VIEW_SIMD_NONE;
        return ok;
    }
    return bk_fuse_view(filter, &out->fuse) == BK_OK; /* BK_EKIND for the other kinds */
}

bool bench_view_bit_array(const bench_view *view, const void **words, uint64_t *bytes)
{
    switch (view->kind) {
    case BK_KIND_BLOOM:
        *words = view->bloom.words;
        *bytes = (view->bloom.bits + 63) / 64 * 8;
        return true;
    case BK_KIND_BLOCKED:
        *words = view->blocked.words;
        *bytes = view->blocked.block_count * 64;
        return true;
    case BK_KIND_SBBF:
        *words = view->sbbf.words;
        *bytes = view->sbbf.block_count * 32;
        return true;
    default: return false;
    }
}

uint64_t bench_view_hits(const bench_view *view, const bk_key *keys, size_t count)
{
    return view->key_loop(view, keys, count);
}

uint64_t bench_view_hash_hits(const bench_view *view, const bk_hash *hashes, size_t count)
{
    return view->hash_loop(view, hashes, count);
}
#endif
