/*
 * src/cuckoo.h -- the cuckoo filter's internals that its tests check
 * (src/cuckoo.c): where a key's fingerprint lives, and the FPR formula.
 * Programs use the bk_filter handle and bloomkit/cuckoo.h.
 */
#ifndef BK_SRC_CUCKOO_H
#define BK_SRC_CUCKOO_H

#include "bloomkit/cuckoo.h"

typedef struct bk_cuckoo bk_cuckoo;

/* Where a key lives: its fingerprint (never 0) and its two buckets
 * (bucket2 = bk_cuckoo_alternate(filter, bucket1, fingerprint)). */
void bk_cuckoo_locate(const bk_cuckoo *filter, bk_hash hash, uint32_t *fingerprint,
                      uint64_t *bucket1, uint64_t *bucket2);

/* The other bucket of `fingerprint` when it is in `bucket`; applying it
 * twice gives `bucket` back. */
uint64_t bk_cuckoo_alternate(const bk_cuckoo *filter, uint64_t bucket, uint32_t fingerprint);

/* The false-positive rate at a load factor (0..1) with f-bit fingerprints:
 * a query compares its fingerprint with the 2 x 4 slots of its buckets,
 * each occupied with probability `load` and then matching with probability
 * 1/(2^f - 1):   p = 1 - (1 - 1/(2^f - 1))^(8 load)  ~  8 load / 2^f,
 * i.e. 2b/2^f at full load (Fan et al. 2014, eq. for b = 4).  What
 * bk_stats.current_fpr (at the current load) and target_fpr (at the design
 * load) report. */
double bk_cuckoo_predicted_fpr(double load, unsigned fingerprint_bits);

#endif
