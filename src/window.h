/*
 * src/window.h -- the window filter's internals that its tests check
 * (src/window.c): the ring's geometry and one generation alone.  Programs
 * use the bk_filter handle and bloomkit/window.h.
 */
#ifndef BK_SRC_WINDOW_H
#define BK_SRC_WINDOW_H

#include "bloomkit/window.h"

typedef struct bk_window bk_window;

bool bk_window_is_timed(const bk_window *filter);    /* window in seconds */
bool bk_window_is_blocked(const bk_window *filter);  /* generations share a line per key */
uint64_t bk_window_span(const bk_window *filter);    /* S = ceil(L / (g-1)) */
uint64_t bk_window_horizon(const bk_window *filter); /* g S: age beyond which keys are gone */

/* Whether generation `index` alone holds the hash (false out of range). */
bool bk_window_generation_contains_hash(const bk_window *filter, unsigned index, bk_hash hash);

/* The cell query of 4-bit cells (g = 3 or 4) with k <= 8: the AND of the
 * key's k cells in `line` (8 words, 64-byte aligned), cells = 7-bit slices
 * of h2 from bit 0.  The portable form and the AVX2 form (src/window_avx2.c,
 * x86-64 builds with BK_HAVE_AVX2_SOURCES, callers check bk_cpu()->avx2)
 * give the same answer. */
unsigned bk_window_cells4_mask_portable(const uint64_t *line, uint64_t h2, unsigned hashes);
unsigned bk_window_cells4_mask_avx2(const uint64_t *line, uint64_t h2, unsigned hashes);

#endif
