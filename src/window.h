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
bool bk_window_is_blocked(const bk_window *filter);   /* generations share a line per key */
uint64_t bk_window_span(const bk_window *filter);    /* S = ceil(L / (g-1)) */
uint64_t bk_window_horizon(const bk_window *filter); /* g S: age beyond which keys are gone */

/* Whether generation `index` alone holds the hash (false out of range). */
bool bk_window_generation_contains_hash(const bk_window *filter, unsigned index, bk_hash hash);

#endif
