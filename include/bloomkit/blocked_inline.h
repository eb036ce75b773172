/*
 * bloomkit/blocked_inline.h -- one-key queries of the cache-line blocked
 * filter compiled into the caller's loop.
 *
 * bk_filter_contains is a call.  A loop that asks about one key per step
 * -- a join probing each row, a cache checking each lookup -- can take a
 * view of the filter once and query it with the inline functions below:
 * hash, block address and block test sit in the loop, with no call:
 *
 *     struct bk_blocked_view view;
 *     if (bk_blocked_view(filter, &view) == BK_OK)
 *         for (size_t i = 0; i < n; i++)
 *             hits += bk_blocked_view_contains(&view, &ids[i], sizeof ids[i]);
 *     else
 *         ... bk_filter_contains(filter, &ids[i], sizeof ids[i]) per key
 *
 * bk_blocked_view_contains_hash takes the key's 128-bit hash instead.  Pass
 * a fixed key width as a constant, as above: the compiler then keeps only
 * the hash's code for that length.
 *
 * The view serves every blocked filter but two: one keyed with SipHash
 * (its hash is a library call, which would cost every query of the loop
 * even untaken) and a BK_FLAG_CONCURRENT one (its words need atomic
 * loads); bk_blocked_view returns BK_EUNSUPPORTED for those.  Any k, XXH3
 * and XXH64, and whatever path the library itself takes.  The common
 * design -- k <= 7 (the designs down to 0.4% FPR; 1% has k = 6) with XXH3
 * -- stays one straight run on a SIMD build: one predicted test of a flag
 * the view holds (xxh3_one_round), then the hash, the block and one round
 * of the block test: about 38 instructions per 8-byte key with -mavx512f.
 * An 8-byte key of a MIX64 filter (the integer-key hash) with k <= 7
 * likewise (mix64_one_round, tested first), in every compiled form;
 * bk_blocked_view_contains_u64 is that query of an integer key.
 * The other filters take the rounds' loop (one more predicted branch per
 * round).  An earlier view that served every filter with the cases' code
 * interleaved in the loop was about 35% slower; this layout costs the
 * common design about 4% against a view serving it alone (figures:
 * docs/PERFORMANCE.md).
 *
 * The block of a key and its k bit positions (src/blocked.c draws the
 * layout and derives the accuracy):
 *
 *     block       = words + 8 * bk_reduce(h1, block_count)    (64 bytes)
 *     position_i  = 9-bit slice i of h2 for i < 7, then the slices of
 *                   bk_mix64(h2), bk_mix64(bk_mix64(h2)), ... (the walk)
 *     present  <=>  bit position_i of the block is set for every i < k
 *     bit p of a block: word p >> 6, bit p & 63
 *
 * The block arithmetic, the walk and the tests described below live in
 * bloomkit/detail/blocked_detail.h (src/blocked*.c are built from them
 * too; not an interface).  Four forms of the test, same answers
 * (tests/test_blocked.c runs the library's paths, tests/test_inline.c the
 * view's, each compiled form, on random filters):
 *
 * - Portable (the library's, not the view's): the walk, one relaxed atomic
 *   load per position (a plain move on x86-64, race-free against the
 *   atomic adds of a BK_FLAG_CONCURRENT filter), the k bits ANDed without
 *   a branch on any of them.  Stopping at the first clear bit mispredicts
 *   on absent keys: slower for them.
 *
 * - AVX-512 (chosen at compile time, as the AVX2 form below: the including
 *   file is built with -mavx512f, or -mavx2, or a -march that implies
 *   them; AVX-512 wins where both are there).  The block fits one register,
 *   and one round looks up seven positions at once, the seven 9-bit slices
 *   of one hash word:
 *
 *     lane j:   s_j   = word >> 9 j               VPSRLVQ; p_j = s_j & 511
 *               w_j   = line[p_j >> 6]            VPSRLQ by 6, VPERMQ
 *               bit_j = (w_j >> (p_j & 63)) & 1   VPANDQ, VPSRLVQ
 *     present:  no lane with bit_j = 0            VPTESTNMQ, one test
 *
 *   VPERMQ reads its indices' low three bits, so s_j >> 6 selects lane
 *   p_j >> 6 of the line with no AND: a gather from a register, with no
 *   mask.  Lane 7, and the lanes past k in a round of fewer than
 *   seven positions, test slice 0 again (bk_blocked_round_shifts), a bit
 *   the key needs anyway.  For k > 7 the next round takes the next word
 *   of the walk.  About ten instructions for k <= 7.
 *
 * - AVX2: the same round over the line's sixteen 32-bit words, in two
 *   registers, with VPERMD (bk_blocked_round_test_avx2 draws it).
 *
 * - Scalar: the round as a straight run of k probes entered by a switch
 *   on the round's length (bk_blocked_round_test_scalar), each a shift, a
 *   load from the line and an AND, no branch on the bits; plain loads.  A
 *   loop over the probes (gcc -O2 does not unroll it) or seven probes with
 *   the extra ones masked off were slower.
 *
 * A caller built without AVX2 (plain -O2, what most projects and
 * distributions use) still runs the SIMD test where the CPU has it: GCC
 * and clang on x86-64 compile the AVX-512 and AVX2 tests into the caller's
 * file with the target attribute, and the view calls the one its
 * simd_call field names (filled by bk_blocked_view from the library's own
 * CPU detection) -- a direct call, predicted, no handle
 * (bloomkit/detail/view_simd.h; BK_VIEW_NO_SIMD_CALLS keeps them out).
 * An 8- or 16-byte key of an XXH3 filter with k <= 7 calls the whole
 * query on AVX-512, as the library's path runs it (h2's last step in the
 * vector unit): with the hash in the caller and only the round called it
 * was 0.95x the library call with 16-byte keys, 1.06x now.  The scalar
 * test is left for other CPUs and compilers.  With the call,
 * the -O2 view is faster than the library call at every size measured;
 * the scalar test was 0.6-0.8x the call, the more so past the caches,
 * where a key waits on k loads of its line against the SIMD test's one
 * and fewer keys overlap their waits (figures: docs/PERFORMANCE.md).
 * Alternatives measured and dropped:
 * - A faster scalar round: the variants measured (detail header, at
 *   bk_blocked_round_test_scalar) gain nothing at 10^6 keys, where the
 *   loads, not the instructions, bound it.
 * - The library's own test reached through a function pointer in the view
 *   (any compiler, no AVX code in the caller): with the same inline
 *   fallback, 3% slower than the direct call at 10^6 keys, no faster at
 *   10^8.
 * - The whole query, hash included, in the called function: 2-3% faster
 *   in a driver, within the benchmark's run-to-run spread, for a called
 *   function per hash and key width; not taken.
 * - An SSE2 round (every x86-64 has SSE2): SSE2 has neither a per-lane
 *   variable shift nor a permute by index, both of which the round needs.
 *
 * The library's
 * test tells the compiler that k <= 7 is the likely case (one round,
 * __builtin_expect).  Against the sbbf view, this one pays for a longer
 * hash (XXH3-128 against XXH64 read before its last step) and a larger
 * block test.  Figures: docs/PERFORMANCE.md.
 *
 * A view holds the filter's word pointer: it sees later adds and must not
 * outlive the filter (nor the mapping of a filter read with bk_filter_map).
 */
#ifndef BLOOMKIT_BLOCKED_INLINE_H
#define BLOOMKIT_BLOCKED_INLINE_H

#include "bloomkit/blocked.h"
#include "bloomkit/detail/blocked_detail.h"
#include "bloomkit/filter.h"
#include "bloomkit/hash_inline.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* The view of a filter (see above).  The type is `struct bk_blocked_view`
 * (the getter below has its name, so there is no typedef). */
struct bk_blocked_view {
    const uint64_t *words; /* block_count * 8 words, 64-byte aligned */
    uint64_t block_count;
    /* The last round's slice shifts (bk_blocked_last_round_shifts): the
     * only round's for k <= 7.  One vector for the SIMD tests. */
    uint64_t last_round_shifts[BK_BLOCKED_BLOCK_WORDS];
    unsigned hashes;                  /* k */
    unsigned rounds;                  /* ceil(k / 7): 1 for k <= 7 */
    unsigned last_round_positions;    /* 1 to 7: k for k <= 7 */
    bk_hash_algorithm hash_algorithm; /* XXH3, XXH64 or MIX64 */
    uint64_t hash_seed;
    /* XXH3 and k <= 7: the SIMD key query finishes h2 in the vector unit
     * (bk_blocked_one_round_test_key_*); one flag, tested before the hash,
     * so the common filter's query is one straight run. */
    bool xxh3_one_round;
    /* MIX64 (the integer-key hash) and k <= 7: an 8-byte key's query is
     * the mixer and one round, likewise one straight run. */
    bool mix64_one_round;
    /* The SIMD test a caller compiled without AVX2 calls
     * (bloomkit/detail/view_simd.h): BK_VIEW_SIMD_AVX512, _AVX2 or _NONE,
     * the widest block test the library runs on this CPU. */
    unsigned simd_call;
};

/* Fills *view from a blocked filter.  BK_EINVAL if either is NULL; BK_EKIND
 * for a filter of another kind; BK_EUNSUPPORTED for a filter keyed with
 * SipHash (its hash is a library call) and for a BK_FLAG_CONCURRENT filter
 * (its words are read with atomic loads): query those with
 * bk_filter_contains.  On error *view is untouched. */
bk_status bk_blocked_view(const bk_filter *filter, struct bk_blocked_view *view);

#if defined(__AVX512F__) || defined(BK_VIEW_SIMD_CALLS)
/* The AVX-512 test of the key of `hash`, any k. */
static BK_VIEW_TARGET_AVX512 BK_ALWAYS_INLINE bool
bk_blocked_view_test_avx512(const struct bk_blocked_view *view, bk_hash hash)
{
    const uint64_t *block = bk_blocked_block_of(view->words, view->block_count, hash.h1);
    const __m512i line = _mm512_load_si512((const void *)block);
    uint64_t word = hash.h2;
    bool present = true;
    for (unsigned round = 1; round < view->rounds; round++) {
        present &= bk_blocked_round_test(line, word,
                                         bk_blocked_round_shifts(BK_BLOCKED_POSITIONS_PER_WORD));
        word = bk_mix64(word);
    }
    return present & bk_blocked_round_test(
                         line, word, _mm512_loadu_si512((const void *)view->last_round_shifts));
}

/* The AVX-512 test of k <= 7: one round. */
static BK_VIEW_TARGET_AVX512 BK_ALWAYS_INLINE bool
bk_blocked_view_one_round_avx512(const struct bk_blocked_view *view, bk_hash hash)
{
    const uint64_t *block = bk_blocked_block_of(view->words, view->block_count, hash.h1);
    return bk_blocked_round_test(_mm512_load_si512((const void *)block), hash.h2,
                                 _mm512_loadu_si512((const void *)view->last_round_shifts));
}
#endif

#if defined(__AVX2__) || defined(BK_VIEW_SIMD_CALLS)
/* The last round's shifts, for the AVX2 round. */
static BK_VIEW_TARGET_AVX2 BK_ALWAYS_INLINE bk_blocked_round_shifts_avx2
bk_blocked_view_last_shifts_avx2(const struct bk_blocked_view *view)
{
    const bk_blocked_round_shifts_avx2 last = {
        _mm256_loadu_si256((const __m256i *)(const void *)view->last_round_shifts),
        _mm256_loadu_si256((const __m256i *)(const void *)(view->last_round_shifts + 4)),
    };
    return last;
}

/* The AVX2 test of the key of `hash`, any k. */
static BK_VIEW_TARGET_AVX2 BK_ALWAYS_INLINE bool
bk_blocked_view_test_avx2(const struct bk_blocked_view *view, bk_hash hash)
{
    const uint64_t *block = bk_blocked_block_of(view->words, view->block_count, hash.h1);
    const __m256i low = _mm256_load_si256((const __m256i *)(const void *)block);
    const __m256i high = _mm256_load_si256((const __m256i *)(const void *)(block + 4));
    uint64_t word = hash.h2;
    bool present = true;
    for (unsigned round = 1; round < view->rounds; round++) {
        present &= bk_blocked_round_test_avx2(
            low, high, word, bk_blocked_round_shifts_for_avx2(BK_BLOCKED_POSITIONS_PER_WORD));
        word = bk_mix64(word);
    }
    return present &
           bk_blocked_round_test_avx2(low, high, word, bk_blocked_view_last_shifts_avx2(view));
}

/* The AVX2 test of k <= 7: one round. */
static BK_VIEW_TARGET_AVX2 BK_ALWAYS_INLINE bool
bk_blocked_view_one_round_avx2(const struct bk_blocked_view *view, bk_hash hash)
{
    const uint64_t *block = bk_blocked_block_of(view->words, view->block_count, hash.h1);
    return bk_blocked_line_round_test_avx2(block, hash.h2,
                                           bk_blocked_view_last_shifts_avx2(view));
}
#endif

#if defined(BK_VIEW_SIMD_CALLS)
#if defined(__cplusplus) && !defined(__clang__)
/* g++ 12 takes the self-initialised placeholder of the AVX-512 intrinsics
 * (_mm512_undefined_epi32) for an uninitialised read */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* The tests above as functions of the caller's file compiled for AVX-512
 * and AVX2, which its code without AVX2 calls
 * (bloomkit/detail/view_simd.h). */
static BK_VIEW_SIMD_CALL BK_VIEW_TARGET_AVX512 bool
bk_blocked_view_call_test_avx512(const struct bk_blocked_view *view, bk_hash hash)
{
    return bk_blocked_view_test_avx512(view, hash);
}

static BK_VIEW_SIMD_CALL BK_VIEW_TARGET_AVX512 bool
bk_blocked_view_call_one_round_avx512(const struct bk_blocked_view *view, bk_hash hash)
{
    return bk_blocked_view_one_round_avx512(view, hash);
}

/* The query of an 8- (16-) byte key of an XXH3 filter with k <= 7, the
 * hash included: its last step in the vector unit, as the library's
 * AVX-512 path takes it. */
static BK_VIEW_SIMD_CALL BK_VIEW_TARGET_AVX512 bool
bk_blocked_view_call_xxh3_8_avx512(const struct bk_blocked_view *view, const void *key)
{
    return bk_blocked_one_round_test_key_avx512(
        view->words, view->block_count,
        _mm512_loadu_si512((const void *)view->last_round_shifts), key, 8, view->hash_seed);
}

static BK_VIEW_SIMD_CALL BK_VIEW_TARGET_AVX512 bool
bk_blocked_view_call_xxh3_16_avx512(const struct bk_blocked_view *view, const void *key)
{
    return bk_blocked_one_round_test_key_avx512(
        view->words, view->block_count,
        _mm512_loadu_si512((const void *)view->last_round_shifts), key, 16, view->hash_seed);
}

static BK_VIEW_SIMD_CALL BK_VIEW_TARGET_AVX2 bool
bk_blocked_view_call_test_avx2(const struct bk_blocked_view *view, bk_hash hash)
{
    return bk_blocked_view_test_avx2(view, hash);
}

static BK_VIEW_SIMD_CALL BK_VIEW_TARGET_AVX2 bool
bk_blocked_view_call_one_round_avx2(const struct bk_blocked_view *view, bk_hash hash)
{
    return bk_blocked_view_one_round_avx2(view, hash);
}
#if defined(__cplusplus) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

/* bk_filter_contains_hash(filter, hash), inline. */
static BK_ALWAYS_INLINE bool bk_blocked_view_contains_hash(const struct bk_blocked_view *view,
                                                           bk_hash hash)
{
#if defined(__AVX512F__)
    return bk_blocked_view_test_avx512(view, hash);
#elif defined(__AVX2__)
    return bk_blocked_view_test_avx2(view, hash);
#else
#if defined(BK_VIEW_SIMD_CALLS)
    if (view->simd_call == BK_VIEW_SIMD_AVX512)
        return bk_blocked_view_call_test_avx512(view, hash);
    if (view->simd_call == BK_VIEW_SIMD_AVX2)
        return bk_blocked_view_call_test_avx2(view, hash);
#endif
    const uint64_t *block = bk_blocked_block_of(view->words, view->block_count, hash.h1);
    return bk_blocked_block_test_scalar(block, hash.h2, view->rounds,
                                        view->last_round_positions);
#endif
}

/* The one round of a filter with k <= 7: the test of the key of `hash`. */
static BK_ALWAYS_INLINE bool bk_blocked_view_one_round(const struct bk_blocked_view *view,
                                                       bk_hash hash)
{
#if defined(__AVX512F__)
    return bk_blocked_view_one_round_avx512(view, hash);
#elif defined(__AVX2__)
    return bk_blocked_view_one_round_avx2(view, hash);
#else
#if defined(BK_VIEW_SIMD_CALLS)
    if (view->simd_call == BK_VIEW_SIMD_AVX512)
        return bk_blocked_view_call_one_round_avx512(view, hash);
    if (view->simd_call == BK_VIEW_SIMD_AVX2)
        return bk_blocked_view_call_one_round_avx2(view, hash);
#endif
    const uint64_t *block = bk_blocked_block_of(view->words, view->block_count, hash.h1);
    return bk_blocked_round_test_scalar(block, hash.h2, view->last_round_positions);
#endif
}

/* bk_filter_contains(filter, key, len), inline; key may be NULL when len
 * is 0. */
static BK_ALWAYS_INLINE bool bk_blocked_view_contains(const struct bk_blocked_view *view,
                                                      const void *key, size_t len)
{
    if (len == 8 && __builtin_expect(view->mix64_one_round, 1))
        return bk_blocked_view_one_round(view,
                                         bk_mix64_of_u64(bk_xxh64_read(key), view->hash_seed));
#if defined(__AVX512F__) && defined(__AVX512DQ__)
    if ((len == 8 || len == 16) && __builtin_expect(view->xxh3_one_round, 1))
        return bk_blocked_one_round_test_key_avx512(
            view->words, view->block_count,
            _mm512_loadu_si512((const void *)view->last_round_shifts), key, len,
            view->hash_seed);
#elif defined(__AVX2__) && !defined(__AVX512F__)
    if ((len == 8 || len == 16) && __builtin_expect(view->xxh3_one_round, 1)) {
        const bk_blocked_round_shifts_avx2 shifts = {
            _mm256_loadu_si256((const __m256i *)(const void *)view->last_round_shifts),
            _mm256_loadu_si256((const __m256i *)(const void *)(view->last_round_shifts + 4)),
        };
        return bk_blocked_one_round_test_key_avx2(view->words, view->block_count, shifts, key,
                                                  len, view->hash_seed);
    }
#elif defined(BK_VIEW_SIMD_CALLS)
    if ((len == 8 || len == 16) && __builtin_expect(view->xxh3_one_round, 1) &&
        view->simd_call == BK_VIEW_SIMD_AVX512)
        return len == 8 ? bk_blocked_view_call_xxh3_8_avx512(view, key)
                        : bk_blocked_view_call_xxh3_16_avx512(view, key);
#endif
    return bk_blocked_view_contains_hash(
        view, bk_hash_unkeyed(view->hash_algorithm, key, len, view->hash_seed));
}

/* bk_filter_contains_u64(filter, value), inline: the key of the 8 bytes
 * holding `value` little-endian.  A MIX64 filter's value goes to the mixer
 * as it is; the other hashes read the bytes, stored with one move where
 * the host is little-endian (eight byte stores read back as one word stall
 * the load: gcc -O2 keeps them a loop). */
static BK_ALWAYS_INLINE bool bk_blocked_view_contains_u64(const struct bk_blocked_view *view,
                                                          uint64_t value)
{
    if (__builtin_expect(view->mix64_one_round, 1))
        return bk_blocked_view_one_round(view, bk_mix64_of_u64(value, view->hash_seed));
    uint8_t bytes[8];
    bk_u64_write_le(bytes, value);
    return bk_blocked_view_contains(view, bytes, sizeof bytes);
}

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_BLOCKED_INLINE_H */
