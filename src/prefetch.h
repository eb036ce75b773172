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
 * Against the one loop with that test in every step (the two libraries
 * loaded in one process, 21 alternating passes of 4e6 hashes, Zen 5), hash
 * batches at 10^7 keys took 0-10% less (medians, ns per key: `blocked`
 * 2.42 -> 2.43 and 1.85 -> 1.80, `sbbf` 1.86 -> 1.82 and 2.07 -> 1.87);
 * at 10^6 the two were within the host's noise of each other.
 *
 * The requests are PREFETCHT0 (into L1).  The hints for the outer levels
 * were tried (`blocked`, a driver through the handle pinned to one CPU,
 * medians of 11 passes of 4e6 absent keys, two runs each): at 10^8 keys
 * PREFETCHT1, T2 and NTA all took 4-5% less than T0 (hash batches
 * 7.27-7.43 against 7.63-7.66 ns per key, packed keys 8.48-8.69 against
 * 8.93-8.95), but at 10^7 hash batches took 3.0-3.15 against 2.3-2.4 and
 * at 10^6 2.5-2.7 against 1.6-1.9, since the line is then read from L2
 * at its turn.  Switching hints by filter size would need a threshold
 * that depends on the machine's caches: T0 kept for every size.
 */
#ifndef BK_SRC_PREFETCH_H
#define BK_SRC_PREFETCH_H

#include <stddef.h>

#include "hash.h" /* bk_hash, BK_ALWAYS_INLINE */

#define BK_LINE_RING_SIZE 64u

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
