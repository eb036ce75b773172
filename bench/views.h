/*
 * bench/views.h -- one-key queries through the inline views of
 * bloomkit/sbbf_inline.h, bloomkit/fuse_inline.h, bloomkit/bloom_inline.h
 * and bloomkit/blocked_inline.h: the cost of a query compiled into the caller's
 * loop, from the key (`+view -view` columns) and from its precomputed hash
 * (`+hview -hview`).
 *
 * The key loop is the one a caller with fixed-width keys writes: an 8-byte
 * key is an integer id, given as its value to the view's integer-key call
 * (bk_<kind>_view_contains_u64; on little-endian hosts, where that value's
 * bytes are the key's), and a 16-byte key's length is a constant at the
 * call, so the compiler keeps only the hash's code for that length.  The
 * sbbf loops are compiled twice (bench/views.c for the baseline, and with
 * -mavx2 on x86-64 through bench/views_avx2.c) and the run takes the AVX2
 * copy when the CPU has AVX2 and BLOOMKIT_PORTABLE is not set, as a
 * program built for its own machine would.  The classic bloom loops likewise, with
 * -mavx512f -mavx512dq (bench/views_avx512.c: the gather form of
 * bloomkit/bloom_inline.h) where the CPU has AVX-512 F, DQ and BW and
 * neither BLOOMKIT_PORTABLE nor BLOOMKIT_NO_AVX512 is set.  The blocked
 * loops are compiled three times (baseline, -mavx2, -mavx512f) and the run
 * takes the best the CPU has, under the library's own conditions for its
 * block tests; the blocked view serves every filter of the run.  The
 * static kinds' views have no SIMD code.  BENCH_BASELINE_VIEWS set (to
 * anything) takes the baseline copies -- a caller built with plain -O2 --
 * while the library keeps its best path.  Copies built without AVX2 call
 * the SIMD block tests compiled into them where the CPU has those
 * (bloomkit/detail/view_simd.h); BENCH_VIEW_NO_SIMD_CALLS set (to
 * anything) keeps them on their portable tests (scalar blocked, SSE2
 * sbbf), as on a CPU without AVX2 or a caller built with
 * BK_VIEW_NO_SIMD_CALLS.
 */
#ifndef BENCH_VIEWS_H
#define BENCH_VIEWS_H

#include "bloomkit.h"
#include "bloomkit/blocked_inline.h"
#include "bloomkit/bloom_inline.h"
#include "bloomkit/fuse_inline.h"
#include "bloomkit/sbbf_inline.h"

struct bench_view;
typedef uint64_t (*bench_key_loop)(const struct bench_view *view, const bk_key *keys,
                                   size_t count);
typedef uint64_t (*bench_hash_loop)(const struct bench_view *view, const bk_hash *hashes,
                                    size_t count);

/* A view of a classic, blocked, sbbf or static filter, the length of every
 * key it will be asked about, and the kind's two loops in the compiled copy
 * this CPU runs. */
typedef struct bench_view {
    bk_kind kind;
    struct bk_bloom_view bloom;
    struct bk_blocked_view blocked;
    struct bk_sbbf_view sbbf;
    struct bk_fuse_view fuse;
    size_t key_bytes; /* 8 or 16: a constant in the loop; else each key's own */
    bench_key_loop key_loop;
    bench_hash_loop hash_loop;
} bench_view;

/* False for kinds without an inline view. */
bool bench_view_init(const bk_filter *filter, size_t key_bytes, bench_view *out);

/* The filter's bit array, where the kind's view exposes one (bloom,
 * blocked, sbbf): its words and size in bytes.  False for the others. */
bool bench_view_bit_array(const bench_view *view, const void **words, uint64_t *bytes);

/* How many of keys[0..count) (hashes[0..count)) the view reports present. */
uint64_t bench_view_hits(const bench_view *view, const bk_key *keys, size_t count);
uint64_t bench_view_hash_hits(const bench_view *view, const bk_hash *hashes, size_t count);

/* The sbbf loops, as compiled for the baseline and with -mavx2 (the second
 * on x86-64 only). */
uint64_t bench_sbbf_hits_portable(const bench_view *view, const bk_key *keys, size_t count);
uint64_t bench_sbbf_hits_avx2(const bench_view *view, const bk_key *keys, size_t count);
uint64_t bench_sbbf_hash_hits_portable(const bench_view *view, const bk_hash *hashes,
                                       size_t count);
uint64_t bench_sbbf_hash_hits_avx2(const bench_view *view, const bk_hash *hashes, size_t count);

/* The classic bloom loops, for the baseline and with -mavx512f -mavx512dq
 * (the second on x86-64 only). */
uint64_t bench_bloom_hits_portable(const bench_view *view, const bk_key *keys, size_t count);
uint64_t bench_bloom_hits_avx512(const bench_view *view, const bk_key *keys, size_t count);
uint64_t bench_bloom_hash_hits_portable(const bench_view *view, const bk_hash *hashes,
                                        size_t count);
uint64_t bench_bloom_hash_hits_avx512(const bench_view *view, const bk_hash *hashes,
                                      size_t count);

/* The blocked loops, for the baseline, with -mavx2 and with -mavx512f
 * -mavx512dq (the last two on x86-64 only). */
uint64_t bench_blocked_hits_portable(const bench_view *view, const bk_key *keys, size_t count);
uint64_t bench_blocked_hits_avx2(const bench_view *view, const bk_key *keys, size_t count);
uint64_t bench_blocked_hash_hits_avx2(const bench_view *view, const bk_hash *hashes,
                                      size_t count);
uint64_t bench_blocked_hits_avx512(const bench_view *view, const bk_key *keys, size_t count);
uint64_t bench_blocked_hash_hits_portable(const bench_view *view, const bk_hash *hashes,
                                          size_t count);
uint64_t bench_blocked_hash_hits_avx512(const bench_view *view, const bk_hash *hashes,
                                        size_t count);

/* The static kinds' loops (no SIMD copy). */
uint64_t bench_fuse_hits(const bench_view *view, const bk_key *keys, size_t count);
uint64_t bench_fuse_hash_hits(const bench_view *view, const bk_hash *hashes, size_t count);

#endif
