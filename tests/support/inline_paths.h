/*
 * tests/support/inline_paths.h -- the inline views (sbbf, static kinds, classic
 * bloom) as tests/test_inline.c calls them: with the key length a run-time value, and with it a constant
 * (what a caller with fixed-width keys compiles: only that length's XXH64
 * code is left).  tests/inline_avx2.c compiles the sbbf and blocked ones
 * with -mavx2,
 * tests/inline_avx512.c the classic bloom and blocked ones with -mavx512f
 * -mavx512dq (the static kinds' views have no SIMD path).
 */
#ifndef BK_TESTS_INLINE_PATHS_H
#define BK_TESTS_INLINE_PATHS_H

#include "bloomkit/blocked_inline.h"
#include "bloomkit/bloom_inline.h"
#include "bloomkit/fuse_inline.h"
#include "bloomkit/sbbf_inline.h"

/* name(view, key, len): contains(view, key, len) with len a compile-time
 * constant for 8 and 16, one per view type. */
#define DEFINE_CONSTANT_LENGTH(name, view_type, contains)                       \
    static inline bool name(const view_type *view, const void *key, size_t len) \
    {                                                                           \
        switch (len) {                                                          \
        case 8: return contains(view, key, 8);                                  \
        case 16: return contains(view, key, 16);                                \
        default: return contains(view, key, len);                               \
        }                                                                       \
    }

DEFINE_CONSTANT_LENGTH(view_contains_constant_length, struct bk_sbbf_view, bk_sbbf_view_contains)
DEFINE_CONSTANT_LENGTH(fuse_view_contains_constant_length, struct bk_fuse_view,
                       bk_fuse_view_contains)
DEFINE_CONSTANT_LENGTH(bloom_view_contains_constant_length, struct bk_bloom_view,
                       bk_bloom_view_contains)
DEFINE_CONSTANT_LENGTH(blocked_view_contains_constant_length, struct bk_blocked_view,
                       bk_blocked_view_contains)
#undef DEFINE_CONSTANT_LENGTH

/* The two sbbf calls above, compiled with -mavx2 (x86-64 only). */
bool avx2_sbbf_view_contains(const struct bk_sbbf_view *view, const void *key, size_t len);
bool avx2_sbbf_view_contains_constant_length(const struct bk_sbbf_view *view, const void *key,
                                             size_t len);

/* The bloom view compiled with -mavx512f -mavx512dq (the gather form of
 * bk_bloom_test_probes), and that form's range reduction and probe walk
 * over eight lanes, stored to arrays (x86-64 only). */
bool avx512_bloom_view_contains(const struct bk_bloom_view *view, const void *key, size_t len);
bool avx512_bloom_view_contains_constant_length(const struct bk_bloom_view *view,
                                                const void *key, size_t len);
bool avx512_bloom_view_contains_hash(const struct bk_bloom_view *view, bk_hash hash);
void avx512_reduce_x8(const uint64_t x[8], uint64_t range, uint64_t out[8]);
void avx512_probe_hashes_x8(bk_hash hash, unsigned first, uint64_t out[8]);

/* The blocked view compiled with -mavx2 (its AVX2 block test), from the
 * key and from the hash (x86-64 only). */
bool avx2_blocked_view_contains(const struct bk_blocked_view *view, const void *key, size_t len);
bool avx2_blocked_view_contains_constant_length(const struct bk_blocked_view *view,
                                                const void *key, size_t len);
bool avx2_blocked_view_contains_hash(const struct bk_blocked_view *view, bk_hash hash);
bool avx2_blocked_view_contains_u64(const struct bk_blocked_view *view, uint64_t value);
bool avx2_sbbf_view_contains_u64(const struct bk_sbbf_view *view, uint64_t value);

/* The blocked view compiled with -mavx512f -mavx512dq (its AVX-512 block
 * test), from the key and from the hash (x86-64 only). */
bool avx512_blocked_view_contains(const struct bk_blocked_view *view, const void *key,
                                  size_t len);
bool avx512_blocked_view_contains_constant_length(const struct bk_blocked_view *view,
                                                  const void *key, size_t len);
bool avx512_blocked_view_contains_hash(const struct bk_blocked_view *view, bk_hash hash);
bool avx512_blocked_view_contains_u64(const struct bk_blocked_view *view, uint64_t value);

/* The sbbf and blocked views compiled with BK_VIEW_NO_SIMD_CALLS: their
 * portable tests whatever the view's simd_call (every target). */
bool no_simd_calls_sbbf_view_contains(const struct bk_sbbf_view *view, const void *key,
                                      size_t len);
bool no_simd_calls_sbbf_view_contains_u64(const struct bk_sbbf_view *view, uint64_t value);
bool no_simd_calls_blocked_view_contains(const struct bk_blocked_view *view, const void *key,
                                         size_t len);
bool no_simd_calls_blocked_view_contains_hash(const struct bk_blocked_view *view, bk_hash hash);
bool no_simd_calls_blocked_view_contains_u64(const struct bk_blocked_view *view, uint64_t value);

/* bk_xxh3_avalanche_x4 (-mavx2) and _x8 (-mavx512f -mavx512dq) over
 * arrays, lane by lane (x86-64 only). */
void avx2_xxh3_avalanche_x4(const uint64_t in[4], uint64_t out[4]);
void avx512_xxh3_avalanche_x8(const uint64_t in[8], uint64_t out[8]);

#endif
