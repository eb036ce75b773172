/*
 * src/prefetch.h -- the pipeline of the one-line kinds' query batches
 * (internal; blocked, sbbf and window), and their adds' prefetch distance.
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
 * D = BK_LINE_RING_SIZE = 64: by Little's law the lines in flight must
 * cover a memory latency over the time per line, about 40 on the hosts
 * measured; 32 was slower and 128 no better (docs/PERFORMANCE.md).
 *
 * The whole loop is bk_line_ring_probe: the kind gives the address of a
 * key's line (`line_of`) and the test of a key against its line (`probe`),
 * and gets the number of keys present, with one answer per key in
 * `results` when that is not NULL:
 *
 *     static bool probe(const void *context, const void *line, const bk_hash *hash);
 *     return bk_line_ring_probe(filter, hashes, count, results,
 *                               line_of, probe, &context);
 *
 * `line_of` and `probe` are static functions of the kind and `context`
 * (what the probe needs beyond the line and the hash, such as k) a local
 * of the caller: the helper is always inlined, and so are they.  The loop
 * runs in two parts, the keys that still have a key D ahead to request and
 * the last D, so that the steady part tests no bound besides its own.
 *
 * The requests are PREFETCHT0 (into L1).  The hints for the outer levels
 * (PREFETCHT1, T2, NTA): a little faster far above the caches, much slower
 * within them, where the line is then read from L2 at its turn; switching
 * hints by filter size would need a threshold that depends on the
 * machine's caches.
 */
#ifndef BK_SRC_PREFETCH_H
#define BK_SRC_PREFETCH_H

#include <stddef.h>

#include "hash.h" /* bk_hash, BK_ALWAYS_INLINE */

#define BK_LINE_RING_SIZE 64u

/* The batch adds of the one-line kinds (blocked, counting, window) request
 * the line of the key this many keys ahead, for writing: enough lines in
 * flight to cover a memory latency at a few ns of work per key (Little's
 * law, as above).  8 and 16 were slower, 64 no better. */
#define BK_ADD_PREFETCH_DISTANCE 32u

typedef const void *(*bk_line_of_fn)(const void *filter, const bk_hash *hash);
typedef bool (*bk_line_probe_fn)(const void *context, const void *line, const bk_hash *hash);

/* Tests key i against its line; stores the answer when results != NULL. */
static BK_ALWAYS_INLINE bool bk_line_ring_answer(const void *context, const void *line,
                                                 const bk_hash *hashes, size_t i, bool *results,
                                                 bk_line_probe_fn probe)
{
    bool found = probe(context, line, &hashes[i]);
    if (results != NULL)
        results[i] = found;
    return found;
}

/* The batch query: hashes[0..count) tested against their lines, each line
 * requested BK_LINE_RING_SIZE keys before its turn.  Returns how many keys
 * were present; results (may be NULL) gets one answer per key. */
static BK_ALWAYS_INLINE size_t bk_line_ring_probe(const void *filter, const bk_hash *hashes,
                                                  size_t count, bool *results,
                                                  bk_line_of_fn line_of, bk_line_probe_fn probe,
                                                  const void *context)
{
    const void *lines[BK_LINE_RING_SIZE];
    size_t first = count < BK_LINE_RING_SIZE ? count : BK_LINE_RING_SIZE;
    for (size_t i = 0; i < first; i++) {
        lines[i] = line_of(filter, &hashes[i]);
        __builtin_prefetch(lines[i], 0);
    }
    size_t present = 0;
    size_t i = 0;
    /* keys with a key D ahead: take the slot's line, request the next one */
    for (; i < count - first; i++) {
        const void **slot = &lines[i % BK_LINE_RING_SIZE];
        const void *line = *slot;
        *slot = line_of(filter, &hashes[i + BK_LINE_RING_SIZE]);
        __builtin_prefetch(*slot, 0);
        present += bk_line_ring_answer(context, line, hashes, i, results, probe);
    }
    /* the last D keys: their lines are requested already */
    for (; i < count; i++)
        present += bk_line_ring_answer(context, lines[i % BK_LINE_RING_SIZE], hashes, i, results,
                                       probe);
    return present;
}

#endif /* BK_SRC_PREFETCH_H */
