/*
 * src/window_avx2.c -- the window filter's cell query with AVX2 (src/window.c).
 *
 * For the cell layout with 4-bit cells (g = 3 or 4) and k <= 8 cells per
 * key, the k cells are the 7-bit slices of h2 at bits 0, 7, .., 49 of the
 * key's 64-byte line.  Seen as 16 32-bit words, cell x is bits 4 (x mod 8)
 * .. + 3 of word x / 8.  The eight slices are cut into eight 32-bit lanes
 * (two 64-bit variable shifts, one blend); each lane's word is picked from
 * the line held in two registers by a permute of each half and a blend on
 * bit 3 of the word index; a variable shift brings the cell to bits 0..3;
 * lanes past k are set to all ones (a table by k); the lanes are ANDed.
 * The answer equals the portable walk's (bk_window_cells4_mask_portable;
 * tests/test_window.c checks them against each other).
 */
#include "window.h"

#ifdef BK_HAVE_AVX2_SOURCES
#include <immintrin.h>

/* Lanes at or past k: all ones, so they leave the AND unchanged. */
static const int32_t past_k[9][8] __attribute__((aligned(32))) = {
    { -1, -1, -1, -1, -1, -1, -1, -1 }, { 0, -1, -1, -1, -1, -1, -1, -1 },
    { 0, 0, -1, -1, -1, -1, -1, -1 },   { 0, 0, 0, -1, -1, -1, -1, -1 },
    { 0, 0, 0, 0, -1, -1, -1, -1 },     { 0, 0, 0, 0, 0, -1, -1, -1 },
    { 0, 0, 0, 0, 0, 0, -1, -1 },       { 0, 0, 0, 0, 0, 0, 0, -1 },
    { 0, 0, 0, 0, 0, 0, 0, 0 },
};

unsigned bk_window_cells4_mask_avx2(const uint64_t *line, uint64_t h2, unsigned hashes)
{
    __m256i key = _mm256_set1_epi64x((long long)h2);
    /* lanes 0..7 (32-bit) get h2 >> 0, 7, 14, .., 49 */
    __m256i even = _mm256_srlv_epi64(key, _mm256_setr_epi64x(0, 14, 28, 42));
    __m256i odd = _mm256_srlv_epi64(key, _mm256_setr_epi64x(7, 21, 35, 49));
    __m256i cells = _mm256_and_si256(_mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA),
                                     _mm256_set1_epi32(127));
    __m256i word = _mm256_srli_epi32(cells, 3);
    __m256i shift = _mm256_slli_epi32(_mm256_and_si256(cells, _mm256_set1_epi32(7)), 2);
    __m256i low = _mm256_permutevar8x32_epi32(_mm256_load_si256((const __m256i *)line), word);
    __m256i high = _mm256_permutevar8x32_epi32(_mm256_load_si256((const __m256i *)(line + 4)),
                                               word);
    __m256 in_high = _mm256_castsi256_ps(_mm256_slli_epi32(word, 28)); /* bit 3 to the sign */
    __m256i picked = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(low), _mm256_castsi256_ps(high), in_high));
    __m256i all = _mm256_or_si256(_mm256_srlv_epi32(picked, shift),
                                  _mm256_load_si256((const __m256i *)past_k[hashes]));
    __m128i four = _mm_and_si128(_mm256_castsi256_si128(all), _mm256_extracti128_si256(all, 1));
    __m128i two = _mm_and_si128(four, _mm_shuffle_epi32(four, 0x4E));
    __m128i one = _mm_and_si128(two, _mm_shuffle_epi32(two, 0xB1));
    return (unsigned)_mm_cvtsi128_si32(one) & 15u;
}
#endif
