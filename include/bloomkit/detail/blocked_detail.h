/*
 * bloomkit/detail/blocked_detail.h -- what bloomkit/blocked_inline.h's view
 * and the library's blocked filter (src/blocked.c, blocked_avx2.c,
 * blocked_avx512.c) are built from: the block of a hash, the walk over a
 * key's positions, and the block tests (portable, AVX2, AVX-512; one round
 * of seven positions, and rounds for k > 7).  blocked_inline.h describes
 * them.  Included by blocked_inline.h; not an interface of the library:
 * names and contracts here may change between versions.
 */
#ifndef BLOOMKIT_DETAIL_BLOCKED_DETAIL_H
#define BLOOMKIT_DETAIL_BLOCKED_DETAIL_H

#include "bloomkit/detail/view_simd.h"
#include "bloomkit/hash_inline.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

#define BK_BLOCKED_BLOCK_BITS 512u       /* one 64-byte cache line */
#define BK_BLOCKED_BLOCK_WORDS 8u        /* 64-bit words per block */
#define BK_BLOCKED_POSITION_BITS 9u      /* log2(512): one slice of h2 */
#define BK_BLOCKED_POSITIONS_PER_WORD 7u /* 7 x 9 = 63 bits of a 64-bit word */

/* The index of the block of a key whose hash has first half h1. */
static inline uint64_t bk_blocked_block_index(uint64_t h1, uint64_t block_count)
{
    return bk_reduce(h1, block_count);
}

/* The block (8 words) of a key whose hash has first half h1. */
static inline const uint64_t *bk_blocked_block_of(const uint64_t *words, uint64_t block_count,
                                                  uint64_t h1)
{
    return words + bk_blocked_block_index(h1, block_count) * BK_BLOCKED_BLOCK_WORDS;
}

/* The walk over a key's positions:
 *
 *     bk_blocked_walk walk = bk_blocked_walk_start(hash.h2);
 *     for (unsigned i = 0; i < k; i++) use(bk_blocked_walk_next(&walk));
 */
typedef struct bk_blocked_walk {
    uint64_t bits; /* unused slices of the current word, lowest first */
    uint64_t word; /* the current word, for the next refill */
    unsigned left; /* slices left in bits */
} bk_blocked_walk;

static inline bk_blocked_walk bk_blocked_walk_start(uint64_t h2)
{
    bk_blocked_walk walk = { h2, h2, BK_BLOCKED_POSITIONS_PER_WORD };
    return walk;
}

static inline unsigned bk_blocked_walk_next(bk_blocked_walk *walk)
{
    if (walk->left == 0) {
        walk->word = bk_mix64(walk->word);
        walk->bits = walk->word;
        walk->left = BK_BLOCKED_POSITIONS_PER_WORD;
    }
    unsigned position = (unsigned)(walk->bits & (BK_BLOCKED_BLOCK_BITS - 1));
    walk->bits >>= BK_BLOCKED_POSITION_BITS;
    walk->left--;
    return position;
}

/* The portable test: the AND of the k bits, without a branch on them.
 * Loads are relaxed atomics. */
static inline bool bk_blocked_block_test_portable(const uint64_t *block, uint64_t h2,
                                                  unsigned hashes)
{
    bk_blocked_walk walk = bk_blocked_walk_start(h2);
    uint64_t all = 1;
    for (unsigned i = 0; i < hashes; i++) {
        unsigned position = bk_blocked_walk_next(&walk);
        all &= __atomic_load_n(&block[position >> 6], __ATOMIC_RELAXED) >> (position & 63);
    }
    return all & 1;
}

/* The positions of the last round of k's test (the only round for k <= 7):
 * 1 to 7. */
static inline unsigned bk_blocked_last_round_positions(unsigned hashes)
{
    return hashes - (hashes - 1) / BK_BLOCKED_POSITIONS_PER_WORD * BK_BLOCKED_POSITIONS_PER_WORD;
}

/* The slice shifts of the last round of a key's test (the only round for
 * k <= 7): 9 j for slice j < the round's positions, 0 past them, so
 * that those lanes test slice 0 again, a bit the key needs anyway.  Lane
 * 7 is always 0.  The view keeps them (bloomkit/blocked_inline.h) for
 * its SIMD tests, which load them as one vector; its scalar test takes
 * the round's length instead (bk_blocked_last_round_positions). */
static inline void bk_blocked_last_round_shifts(unsigned hashes,
                                                uint64_t shifts[BK_BLOCKED_BLOCK_WORDS])
{
    unsigned positions = bk_blocked_last_round_positions(hashes);
    for (unsigned lane = 0; lane < BK_BLOCKED_BLOCK_WORDS; lane++)
        shifts[lane] = lane < positions ? BK_BLOCKED_POSITION_BITS * lane : 0;
}

/* The rounds of a key's test: ceil(k / 7). */
static inline unsigned bk_blocked_round_count(unsigned hashes)
{
    return (hashes + BK_BLOCKED_POSITIONS_PER_WORD - 1) / BK_BLOCKED_POSITIONS_PER_WORD;
}

/* One probe of the scalar round: bit (slice & 511) of the line, in bit 0
 * of the result (higher bits are garbage the caller masks off). */
static BK_ALWAYS_INLINE uint64_t bk_blocked_probe_scalar(const uint64_t *block, uint64_t slice)
{
    return block[(slice >> 6) & (BK_BLOCKED_BLOCK_WORDS - 1)] >> (slice & 63);
}

/*
 * The scalar round, for callers built without AVX2: the first `positions`
 * (1 to 7) slices of `word`, 9 j, each bit ANDed in without a branch (a
 * branch per probe mispredicts on absent keys), with plain loads (not for
 * a BK_FLAG_CONCURRENT filter).  The switch enters a straight run of
 * probes at the round's count, each falling through to the next: its jump
 * is predicted (k is fixed per filter), and the probes cost only what k
 * asks.  Per probe: an immediate shift of the word, the word index (bits
 * 6-8 of the slice), a load from the line, a shift by the bit index
 * (x86-64's shifts read only its low 6 bits, so the AND folds away), an
 * AND.  Alternatives measured (plain -O2, MIX64, k = 6, in a caller's
 * loop): each slice shifted straight out of the word, so that no probe
 * waits on another's shift, 4% slower at 10^6 keys and 3% on a filter in
 * L1 (a register more per probe pushes the hash's constants out of
 * registers); bytes or 32-bit words of the line, no faster; the missing
 * bits ORed (NOT, shift, OR) instead of the bits ANDed, 14% slower; seven
 * probes with the extra ones masked off (an OR per probe), slower; a loop:
 * gcc -O2 does not unroll it.  Past the caches the loads a key waits on
 * (k of them, one line), not the instructions, bound this test, where the
 * SIMD test waits on one: a caller without AVX2 calls that test where the
 * CPU has it (bloomkit/detail/view_simd.h).
 */
static BK_ALWAYS_INLINE bool bk_blocked_round_test_scalar(const uint64_t *block, uint64_t word,
                                                          unsigned positions)
{
    uint64_t all = ~(uint64_t)0, slices = word;
/* The fall-through annotated for clang's -Wimplicit-fallthrough too. */
#if defined(__has_attribute)
#if __has_attribute(fallthrough)
#define BK_BLOCKED_FALL_THROUGH __attribute__((fallthrough))
#endif
#endif
#ifndef BK_BLOCKED_FALL_THROUGH
#define BK_BLOCKED_FALL_THROUGH ((void)0)
#endif
#define BK_BLOCKED_NEXT_PROBE                      \
    all &= bk_blocked_probe_scalar(block, slices); \
    slices >>= BK_BLOCKED_POSITION_BITS;           \
    BK_BLOCKED_FALL_THROUGH
    switch (positions) {
    case 7: BK_BLOCKED_NEXT_PROBE;
    case 6: BK_BLOCKED_NEXT_PROBE;
    case 5: BK_BLOCKED_NEXT_PROBE;
    case 4: BK_BLOCKED_NEXT_PROBE;
    case 3: BK_BLOCKED_NEXT_PROBE;
    case 2: BK_BLOCKED_NEXT_PROBE;
    default: all &= bk_blocked_probe_scalar(block, slices);
    }
#undef BK_BLOCKED_NEXT_PROBE
#undef BK_BLOCKED_FALL_THROUGH
    return all & 1;
}

/* The scalar test of any k, in rounds (bk_blocked_round_count), the last
 * of `last_positions` (bk_blocked_last_round_positions). */
static BK_ALWAYS_INLINE bool bk_blocked_block_test_scalar(const uint64_t *block, uint64_t h2,
                                                          unsigned rounds,
                                                          unsigned last_positions)
{
    bool present = true;
    uint64_t word = h2;
    for (unsigned round = 1; round < rounds; round++) {
        present &= bk_blocked_round_test_scalar(block, word, BK_BLOCKED_POSITIONS_PER_WORD);
        word = bk_mix64(word);
    }
    return present & bk_blocked_round_test_scalar(block, word, last_positions);
}

/* The AVX-512 and AVX2 tests below are compiled where the file's target
 * has those instruction sets, and, marked for them, where a view calls
 * them from a file without (bloomkit/detail/view_simd.h). */
#if defined(__AVX512F__) || defined(BK_VIEW_SIMD_CALLS)
/*
 * The slice shifts of a round of `positions` slices (1 to 7): 9 j in lane
 * j < positions, 0 in the other lanes, which thus test slice 0 again, so
 * the round's test takes no lane mask.  A mask costs more than the lane it
 * saves: gcc 12 moves it from a general register into a mask register
 * (KMOVW) on every key of a batch.
 */
static BK_VIEW_TARGET_AVX512 BK_ALWAYS_INLINE __m512i bk_blocked_round_shifts(unsigned positions)
{
    const __m512i every_slice = _mm512_setr_epi64(0, 9, 18, 27, 36, 45, 54, 0);
    return _mm512_maskz_mov_epi64((__mmask8)((1u << positions) - 1), every_slice);
}

/* One round: whether the line has the bits of hash word `word` (in every
 * lane of word_in_lanes) at the lanes' slice shifts
 * (bk_blocked_round_shifts).  The word index is the slice shifted right by
 * 6, a VPSRLQ by an immediate, so the round needs no second vector of
 * shifts (9 j + 6), which a one-key call would build on every query. */
static BK_VIEW_TARGET_AVX512 BK_ALWAYS_INLINE bool
bk_blocked_round_test_lanes(__m512i line, __m512i word_in_lanes, __m512i slice_shifts)
{
    const __m512i slices = _mm512_srlv_epi64(word_in_lanes, slice_shifts);
    __m512i words = _mm512_permutexvar_epi64(_mm512_srli_epi64(slices, 6), line);
    __m512i bit_in_word = _mm512_and_si512(slices, _mm512_set1_epi64(63));
    __m512i bits = _mm512_srlv_epi64(words, bit_in_word);
    /* VPTESTNMQ and a test of the mask for zero: two instructions fewer per
     * key than comparing the set lanes with a lane mask */
    return _mm512_testn_epi64_mask(bits, _mm512_set1_epi64(1)) == 0;
}

static BK_VIEW_TARGET_AVX512 BK_ALWAYS_INLINE bool
bk_blocked_round_test(__m512i line, uint64_t word, __m512i slice_shifts)
{
    return bk_blocked_round_test_lanes(line, _mm512_set1_epi64((long long)word), slice_shifts);
}

/* The AVX-512 test: rounds of seven positions, then the last round with
 * the rest (k <= 7: that round alone).  The last round's shifts depend on
 * k only, so a loop over keys computes them once; the library's one-key
 * queries keep them in the filter (src/blocked_avx512.c).  This test
 * computes them on every call: k <= 7 is tested with one compare and the
 * division by seven left to the rounds' path.
 * bk_blocked_one_round_test_avx512 is the test of k <= 7 alone, one
 * round. */
static BK_VIEW_TARGET_AVX512 BK_ALWAYS_INLINE bool
bk_blocked_one_round_test_avx512(const uint64_t *block, uint64_t h2, unsigned hashes)
{
    return bk_blocked_round_test(_mm512_load_si512((const void *)block), h2,
                                 bk_blocked_round_shifts(hashes));
}

static BK_VIEW_TARGET_AVX512 BK_ALWAYS_INLINE bool
bk_blocked_block_test_avx512(const uint64_t *block, uint64_t h2, unsigned hashes)
{
    if (__builtin_expect(hashes <= BK_BLOCKED_POSITIONS_PER_WORD,
                         1)) /* the 1% to 0.4% designs */
        return bk_blocked_one_round_test_avx512(block, h2, hashes);
    const __m512i line = _mm512_load_si512((const void *)block);
    const unsigned full_rounds = (hashes - 1) / BK_BLOCKED_POSITIONS_PER_WORD;
    const __m512i last_shifts = bk_blocked_round_shifts(
        hashes - full_rounds * BK_BLOCKED_POSITIONS_PER_WORD);
    uint64_t word = h2;
    bool present = true;
    for (unsigned round = 0; round < full_rounds; round++) {
        present &= bk_blocked_round_test(line, word,
                                         bk_blocked_round_shifts(BK_BLOCKED_POSITIONS_PER_WORD));
        word = bk_mix64(word);
    }
    return present & bk_blocked_round_test(line, word, last_shifts);
}
#endif

#if defined(__AVX2__) || defined(BK_VIEW_SIMD_CALLS)
/* The slice shifts of an AVX2 round of `positions` slices (1 to 7), in two
 * vectors of four 64-bit lanes: slices 0-3 and slices 4-6 with lane 7, the
 * lanes at and past `positions` shifted by 0 (slice 0 again). */
typedef struct bk_blocked_round_shifts_avx2 {
    __m256i first;  /* slices 0-3: 0, 9, 18, 27 */
    __m256i second; /* slices 4-6 and a repeat of slice 0: 36, 45, 54, 0 */
} bk_blocked_round_shifts_avx2;

static BK_VIEW_TARGET_AVX2 BK_ALWAYS_INLINE bk_blocked_round_shifts_avx2
bk_blocked_round_shifts_for_avx2(unsigned positions)
{
    const __m256i count = _mm256_set1_epi64x((long long)positions);
    const __m256i first_lanes = _mm256_cmpgt_epi64(count, _mm256_setr_epi64x(0, 1, 2, 3));
    const __m256i second_lanes = _mm256_cmpgt_epi64(count, _mm256_setr_epi64x(4, 5, 6, 7));
    bk_blocked_round_shifts_avx2 shifts = {
        _mm256_and_si256(first_lanes, _mm256_setr_epi64x(0, 9, 18, 27)),
        _mm256_and_si256(second_lanes, _mm256_setr_epi64x(36, 45, 54, 0)),
    };
    return shifts;
}

/*
 * One AVX2 round (hash word `word`, or `repeated` in each 64-bit lane).
 * The block is two registers of eight 32-bit words, and
 * bit p of the block is bit p & 31 of 32-bit word p >> 5 (the 64-bit
 * words are little-endian).  The seven slices go one per 32-bit lane:
 *
 *     slice    = the low 32 bits of word >> 9 j    VPSRLVQ twice, VPSLLQ, VPBLENDD
 *     dword    = low or high [(slice >> 5) & 7]    VPSRLD, VPERMD from each half
 *                 (bit 8 of the slice picks the half: VPSLLD by 23 moves
 *                 it to the sign bit, which BLENDVPS reads)
 *     present  = every lane has bit (slice & 31)   VPAND, VPSLLVD of ones, VPTEST
 *
 * VPERMD reads its indices' low three bits, as VPERMQ does in the AVX-512
 * round.  Testing against the 512-bit mask ORed from k rows of a table
 * (what the AVX2 insert ORs in, src/blocked_avx2.c): slower on this path.
 */
static BK_VIEW_TARGET_AVX2 BK_ALWAYS_INLINE bool
bk_blocked_round_test_avx2_lanes(__m256i low, __m256i high, __m256i repeated,
                                 bk_blocked_round_shifts_avx2 shifts)
{
    __m256i slices = _mm256_blend_epi32(
        _mm256_srlv_epi64(repeated, shifts.first),
        _mm256_slli_epi64(_mm256_srlv_epi64(repeated, shifts.second), 32), 0xAA);
    __m256i dword_index = _mm256_srli_epi32(slices, 5);
    __m256i from_low = _mm256_permutevar8x32_epi32(low, dword_index);
    __m256i from_high = _mm256_permutevar8x32_epi32(high, dword_index);
    __m256i dwords = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(from_low), _mm256_castsi256_ps(from_high),
                         _mm256_castsi256_ps(_mm256_slli_epi32(slices, 23))));
    __m256i bits = _mm256_sllv_epi32(_mm256_set1_epi32(1),
                                     _mm256_and_si256(slices, _mm256_set1_epi32(31)));
    return _mm256_testc_si256(dwords, bits);
}

static BK_VIEW_TARGET_AVX2 BK_ALWAYS_INLINE bool
bk_blocked_round_test_avx2(__m256i low, __m256i high, uint64_t word,
                           bk_blocked_round_shifts_avx2 shifts)
{
    return bk_blocked_round_test_avx2_lanes(low, high, _mm256_set1_epi64x((long long)word),
                                            shifts);
}

/* One AVX2 round over the block's line. */
static BK_VIEW_TARGET_AVX2 BK_ALWAYS_INLINE bool
bk_blocked_line_round_test_avx2(const uint64_t *block, uint64_t h2,
                                bk_blocked_round_shifts_avx2 shifts)
{
    return bk_blocked_round_test_avx2(
        _mm256_load_si256((const __m256i *)(const void *)block),
        _mm256_load_si256((const __m256i *)(const void *)(block + 4)), h2, shifts);
}

/* The AVX2 test of k <= 7, one round. */
static BK_VIEW_TARGET_AVX2 BK_ALWAYS_INLINE bool
bk_blocked_one_round_test_avx2(const uint64_t *block, uint64_t h2, unsigned hashes)
{
    return bk_blocked_line_round_test_avx2(block, h2, bk_blocked_round_shifts_for_avx2(hashes));
}

/* The AVX2 test, in rounds as the AVX-512 one. */
static BK_VIEW_TARGET_AVX2 BK_ALWAYS_INLINE bool
bk_blocked_block_test_avx2(const uint64_t *block, uint64_t h2, unsigned hashes)
{
    if (__builtin_expect(hashes <= BK_BLOCKED_POSITIONS_PER_WORD, 1))
        return bk_blocked_one_round_test_avx2(block, h2, hashes);
    const __m256i low = _mm256_load_si256((const __m256i *)(const void *)block);
    const __m256i high = _mm256_load_si256((const __m256i *)(const void *)(block + 4));
    const unsigned full_rounds = (hashes - 1) / BK_BLOCKED_POSITIONS_PER_WORD;
    const bk_blocked_round_shifts_avx2 last_shifts = bk_blocked_round_shifts_for_avx2(
        hashes - full_rounds * BK_BLOCKED_POSITIONS_PER_WORD);
    uint64_t word = h2;
    bool present = true;
    for (unsigned round = 0; round < full_rounds; round++) {
        present &= bk_blocked_round_test_avx2(
            low, high, word, bk_blocked_round_shifts_for_avx2(BK_BLOCKED_POSITIONS_PER_WORD));
        word = bk_mix64(word);
    }
    return present & bk_blocked_round_test_avx2(low, high, word, last_shifts);
}
#endif

/*
 * The one round of an 8- or 16-byte key from its unfinished XXH3-128
 * (bk_xxh3_128_of_8_unfinished): h1 picks the block, and h2's last step,
 * bk_xxh3_avalanche, runs in the vector unit on h2 broadcast to the
 * lanes that test it, instead of among the integer instructions that the
 * rest of the hash and the block index keep the core busy with.  Moving
 * h1's avalanche there too, the word brought back for the block address:
 * slower, it lengthens the path to the line.  The library's SIMD key
 * queries are these functions (src/blocked_avx512.c, src/blocked_avx2.c).
 */
#if defined(__AVX512F__) && defined(__AVX512DQ__) || defined(BK_VIEW_SIMD_CALLS)
/* The round from the unfinished XXH3-128 of the key (bk_xxh3_128_*_unfinished). */
static BK_VIEW_TARGET_AVX512 BK_ALWAYS_INLINE bool
bk_blocked_one_round_test_unfinished_avx512(const uint64_t *words, uint64_t block_count,
                                            __m512i slice_shifts, bk_hash unfinished)
{
    const uint64_t *block = bk_blocked_block_of(words, block_count, unfinished.h1);
    return bk_blocked_round_test_lanes(
        _mm512_load_si512((const void *)block),
        bk_xxh3_avalanche_x8(_mm512_set1_epi64((long long)unfinished.h2)), slice_shifts);
}

static BK_VIEW_TARGET_AVX512 BK_ALWAYS_INLINE bool
bk_blocked_one_round_test_key_avx512(const uint64_t *words, uint64_t block_count,
                                     __m512i slice_shifts, const void *key, size_t len,
                                     uint64_t seed)
{
    return bk_blocked_one_round_test_unfinished_avx512(words, block_count, slice_shifts,
                                                       bk_xxh3_128_unfinished(key, len, seed));
}
#endif

#if defined(__AVX2__)
static BK_ALWAYS_INLINE bool
bk_blocked_one_round_test_unfinished_avx2(const uint64_t *words, uint64_t block_count,
                                          bk_blocked_round_shifts_avx2 shifts,
                                          bk_hash unfinished)
{
    const uint64_t *block = bk_blocked_block_of(words, block_count, unfinished.h1);
    return bk_blocked_round_test_avx2_lanes(
        _mm256_load_si256((const __m256i *)(const void *)block),
        _mm256_load_si256((const __m256i *)(const void *)(block + 4)),
        bk_xxh3_avalanche_x4(_mm256_set1_epi64x((long long)unfinished.h2)), shifts);
}

static BK_ALWAYS_INLINE bool
bk_blocked_one_round_test_key_avx2(const uint64_t *words, uint64_t block_count,
                                   bk_blocked_round_shifts_avx2 shifts, const void *key,
                                   size_t len, uint64_t seed)
{
    return bk_blocked_one_round_test_unfinished_avx2(words, block_count, shifts,
                                                     bk_xxh3_128_unfinished(key, len, seed));
}
#endif

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_DETAIL_BLOCKED_DETAIL_H */
