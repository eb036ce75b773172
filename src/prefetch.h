/*
 * src/prefetch.h -- the pipeline of the one-line kinds' query batches
 * (internal; blocked and sbbf).
 *
 * A batch query of a filter far bigger than the caches costs about one
 * overlapped memory read per key if the line of key i + D is requested
 * (software prefetch) while key i is probed: D requests stay in flight, and
 * each line has arrived by its key's turn.  The address of a key's line,
 * computed for its request, waits in a ring of D slots until that turn, so
 * the kind's multiply-shift runs once per key rather than twice:
 *
 *     ring slot:    i mod D
 *     holds:        line of key i, requested while key i - D was probed
 *     at step i:    take slot i mod D (key i's line), put the line of
 *                   key i + D there and request it
 *
 * D = BK_LINE_RING_SIZE = 64: Little's law at 10^8 keys on the Zen 5 of
 * docs/PERFORMANCE.md (220 ns of latency over 5.7 ns per line is about 40
 * lines); the measured distances are in src/blocked.h and src/sbbf.h.
 *
 *     bk_line_ring ring;
 *     bk_line_ring_start(&ring, filter, hashes, count, line_of);
 *     for (size_t i = 0; i < count; i++) {
 *         const void *line = bk_line_ring_next(&ring, filter, hashes, count, i, line_of);
 *         ... probe line for hashes[i] ...
 *     }
 *
 * `line_of` is a static function of the kind (filter, hash -> line); the
 * helpers are always inlined, and so is it.
 */
#ifndef BK_SRC_PREFETCH_H
#define BK_SRC_PREFETCH_H

#include <stddef.h>

#include "hash.h" /* bk_hash, BK_ALWAYS_INLINE */

#define BK_LINE_RING_SIZE 64u

typedef struct bk_line_ring {
    const void *lines[BK_LINE_RING_SIZE];
} bk_line_ring;

typedef const void *(*bk_line_of_fn)(const void *filter, const bk_hash *hash);

/* Requests the lines of the batch's first keys. */
static BK_ALWAYS_INLINE void bk_line_ring_start(bk_line_ring *ring, const void *filter,
                                                const bk_hash *hashes, size_t count,
                                                bk_line_of_fn line_of)
{
    for (size_t i = 0; i < count && i < BK_LINE_RING_SIZE; i++) {
        ring->lines[i] = line_of(filter, &hashes[i]);
        __builtin_prefetch(ring->lines[i], 0);
    }
}

/* The line of key i; requests the line of key i + BK_LINE_RING_SIZE. */
static BK_ALWAYS_INLINE const void *bk_line_ring_next(bk_line_ring *ring, const void *filter,
                                                      const bk_hash *hashes, size_t count,
                                                      size_t i, bk_line_of_fn line_of)
{
    const void **slot = &ring->lines[i % BK_LINE_RING_SIZE];
    const void *line = *slot;
    if (i + BK_LINE_RING_SIZE < count) {
        *slot = line_of(filter, &hashes[i + BK_LINE_RING_SIZE]);
        __builtin_prefetch(*slot, 0);
    }
    return line;
}

#endif /* BK_SRC_PREFETCH_H */
