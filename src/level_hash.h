/*
 * src/level_hash.h -- one key hash, many independent-looking probe
 * sequences (internal; used by src/scalable.c and src/window.c).
 *
 * The scalable and window kinds keep several classic Bloom filters (levels,
 * generations) that all see the same 128-bit bk_hash: keys are hashed once.
 * Probing every level with that same (h1, h2) would give every key the same
 * probe pattern in every level (the same positions when two levels have the
 * same m, proportional positions otherwise, since multiply-shift reduction
 * keeps the fraction position/m).  Two keys whose patterns overlap in one
 * level would then overlap in every level, so a query's false positives in
 * different levels would be correlated instead of independent: most visible
 * in the window filter, where a key added again and again sits in every
 * generation.  The chain bounds (sum of the levels' FPRs) would still hold,
 * but the levels would no longer behave as the independent filters the
 * formulas 1 - prod(1 - p_i) describe.
 *
 * So level i > 0 probes with (mix64(h1 ^ salt_i), mix64(h2 + salt_i)),
 * salt_i = i * 2^64/phi.  bk_mix64 is a bijection, so distinct hashes stay
 * distinct; level 0 keeps the hash unchanged, so a one-level chain probes
 * exactly like a plain bk_bloom.  tests/test_scalable.c and
 * tests/test_window.c check that the joint false-positive rate of two
 * levels is the product of their rates.
 */
#ifndef BK_SRC_LEVEL_HASH_H
#define BK_SRC_LEVEL_HASH_H

#include "hash.h"

#define BK_LEVEL_SALT 0x9e3779b97f4a7c15ULL /* 2^64 / golden ratio */

static inline bk_hash bk_level_hash(bk_hash hash, unsigned level)
{
    if (level == 0)
        return hash;
    uint64_t salt = (uint64_t)level * BK_LEVEL_SALT;
    bk_hash out = { bk_mix64(hash.h1 ^ salt), bk_mix64(hash.h2 + salt) };
    return out;
}

#endif
