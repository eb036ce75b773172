/*
 * src/blocked_one_hot.c -- the blocked filter's table of one-hot blocks,
 * for its AVX2 and AVX-512 paths (src/blocked_avx2.c, blocked_avx512.c).
 *
 * Row p (0 <= p < 512) is a 64-byte block with only bit p set: word p / 64,
 * bit p % 64.  A key's 512-bit mask is the OR of its k rows, one aligned
 * load each, instead of k variable shifts and inserts into a vector:
 *
 *     row 0:   [ 1 0 0 0 0 0 0 0 ]      row 64:  [ 0 1 0 0 0 0 0 0 ]
 *     row 1:   [ 2 0 0 0 0 0 0 0 ]      row 511: [ 0 0 0 0 0 0 0 2^63 ]
 *
 * 32 KiB, built by the preprocessor.
 */
#include "blocked.h"

/* The table (src/blocked.h), built by the preprocessor. */
#define ONE_HOT_WORD(p, w) ((p) >> 6 == (w) ? (uint64_t)1 << ((p)&63) : 0)
#define ONE_HOT_ROW(p)                                                                     \
    {                                                                                      \
        ONE_HOT_WORD(p, 0), ONE_HOT_WORD(p, 1), ONE_HOT_WORD(p, 2), ONE_HOT_WORD(p, 3),    \
            ONE_HOT_WORD(p, 4), ONE_HOT_WORD(p, 5), ONE_HOT_WORD(p, 6), ONE_HOT_WORD(p, 7) \
    }
#define ONE_HOT_ROWS_8(p)                                                       \
    ONE_HOT_ROW(p), ONE_HOT_ROW(p + 1), ONE_HOT_ROW(p + 2), ONE_HOT_ROW(p + 3), \
        ONE_HOT_ROW(p + 4), ONE_HOT_ROW(p + 5), ONE_HOT_ROW(p + 6), ONE_HOT_ROW(p + 7)
#define ONE_HOT_ROWS_64(p)                                                                    \
    ONE_HOT_ROWS_8(p), ONE_HOT_ROWS_8(p + 8), ONE_HOT_ROWS_8(p + 16), ONE_HOT_ROWS_8(p + 24), \
        ONE_HOT_ROWS_8(p + 32), ONE_HOT_ROWS_8(p + 40), ONE_HOT_ROWS_8(p + 48),               \
        ONE_HOT_ROWS_8(p + 56)
const uint64_t bk_blocked_one_hot[BK_BLOCKED_BLOCK_BITS][BK_BLOCKED_BLOCK_WORDS]
    __attribute__((aligned(64))) = {
        ONE_HOT_ROWS_64(0),   ONE_HOT_ROWS_64(64),  ONE_HOT_ROWS_64(128), ONE_HOT_ROWS_64(192),
        ONE_HOT_ROWS_64(256), ONE_HOT_ROWS_64(320), ONE_HOT_ROWS_64(384), ONE_HOT_ROWS_64(448),
    };
