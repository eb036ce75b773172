/*
 * bloomkit/sizing.h -- the formulas: how big a filter must be, what rate of
 * false positives it will give, and what its fill says about its contents.
 *
 * Everything here is pure arithmetic: no allocation, no state.  Each formula
 * and its source is stated in src/sizing.c next to the code.
 */
#ifndef BLOOMKIT_SIZING_H
#define BLOOMKIT_SIZING_H

#include "bloomkit/common.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* Largest filter, in bits, any kind will create: 2^56 bits (8 PiB).  Far
 * beyond any machine today, yet small enough that bits, bytes and word
 * counts never overflow 64-bit or size_t arithmetic. */
#define BK_MAX_BITS ((uint64_t)1 << 56)
/* Largest k accepted (probes per key). */
#define BK_MAX_HASHES 255u

/* The design of a classic Bloom filter. */
typedef struct bk_sizing {
    uint64_t capacity;        /* n */
    uint64_t bits;            /* m */
    unsigned hashes;          /* k */
    double bits_per_key;      /* m / n */
    double predicted_fpr;     /* (1 - e^{-kn/m})^k */
    double lower_bound_bits;  /* log2(1/p): bits per key any filter needs for this FPR */
    double space_ratio;       /* bits_per_key / lower_bound_bits (about 1.44 at the optimum) */
    double design_fill_ratio; /* 1 - e^{-kn/m}: the fraction of bits set at capacity */
} bk_sizing;

/* m = ceil(-n ln p / (ln 2)^2), k = max(1, round(m/n ln 2)).
 * BK_EINVAL: n = 0, p not in (0,1) or NaN.  BK_ERANGE: m > BK_MAX_BITS or
 * k > BK_MAX_HASHES. */
bk_status bk_size_for_fpr(uint64_t capacity, double fpr, bk_sizing *out);

/* m = ceil(n * bits_per_key), k = max(1, round(bits_per_key ln 2)).
 * BK_EINVAL: n = 0, bits_per_key not finite or < 1.  BK_ERANGE as above. */
bk_status bk_size_for_bits_per_key(uint64_t capacity, double bits_per_key, bk_sizing *out);

/* Exactly m bits and k probes for n keys.
 * BK_EINVAL: n, m or k zero.  BK_ERANGE: m > BK_MAX_BITS or k > BK_MAX_HASHES. */
bk_status bk_size_explicit(uint64_t capacity, uint64_t bits, unsigned hashes, bk_sizing *out);

/* Sizing from a bk_params, by its precedence: explicit .bits and .hashes;
 * else .bits_per_key; else .fpr (0 means 0.01).  Setting only one of .bits
 * and .hashes is BK_EINVAL. */
bk_status bk_size_from_params(const bk_params *params, bk_sizing *out);

/* (1 - e^{-kn/m})^k: the classic prediction (Bloom 1970; Broder &
 * Mitzenmacher 2004).  Slightly optimistic for small m (Bose et al. 2008). */
double bk_predicted_fpr(uint64_t keys, uint64_t bits, unsigned hashes);

/* round(bits_per_key * ln 2), at least 1: the k that minimises the FPR. */
unsigned bk_optimal_hashes(double bits_per_key);

/* log2(1/p): the information-theoretic lower bound on bits per key for an
 * approximate membership structure with FPR p (Carter et al. 1978); 0 for
 * p >= 1. */
double bk_lower_bound_bits(double fpr);

/* 1 - e^{-kn/m}: the expected fraction of bits set after n keys. */
double bk_expected_fill(uint64_t keys, uint64_t bits, unsigned hashes);

/* n ~ -(m/k) ln(1 - X/m) (Swamidass & Baldi 2007): keys estimated from X set
 * bits.  When every bit is set the count is unbounded; the estimate for
 * X = m - 1/2 is returned, a lower bound. */
double bk_estimate_keys(uint64_t bits, unsigned hashes, uint64_t bits_set);

/* fill^k: the false-positive rate a filter with this fill gives now. */
double bk_fpr_from_fill(double fill_ratio, unsigned hashes);

/* Design point.  At capacity a filter at the optimal k has half its bits
 * set.  A filter is "past its design point" when its fill exceeds the fill
 * that BK_DESIGN_MARGIN times its capacity would give, plus
 * BK_DESIGN_NOISE_SIGMAS standard deviations of the fill of a filter at
 * capacity, sqrt(f (1 - f) / m), so that the random spread of a small
 * filter's fill does not raise false alarms (the term is below 0.002 for
 * m >= 10^5).  Past that point the FPR is measurably above the one the
 * filter was built for, and keeps rising. */
#define BK_DESIGN_MARGIN 1.05
#define BK_DESIGN_NOISE_SIGMAS 3.0
bool bk_fill_past_design_point(double fill_ratio, uint64_t capacity, uint64_t bits,
                               unsigned hashes);

/* The same threshold as a number of keys (as bk_estimate_keys counts them):
 * a filter is past its design point exactly when the keys estimated from
 * its fill exceed this.  capacity * BK_DESIGN_MARGIN when bits or hashes is 0. */
double bk_design_point_keys(uint64_t capacity, uint64_t bits, unsigned hashes);

/* Estimated sizes of two sets from their filters (same m and k) and the
 * filter of their union (the bitwise OR):
 *   |A|, |B|, |A u B| by bk_estimate_keys; |A n B| = |A| + |B| - |A u B|,
 *   clamped at 0; Jaccard = |A n B| / |A u B|. */
typedef struct bk_set_estimate {
    double a;
    double b;
    double union_size;
    double intersection_size;
    double jaccard;
} bk_set_estimate;

void bk_estimate_sets(uint64_t bits, unsigned hashes, uint64_t bits_set_a, uint64_t bits_set_b,
                      uint64_t bits_set_union, bk_set_estimate *out);


/* Sizing with a guarantee: the classic m and k for (n, p), then, if rounding
 * k to an integer left the predicted FPR (1 - e^{-kn/m})^k above p (it
 * gives 0.01003 for p = 0.01), m widened at that k to the smallest m whose
 * prediction is <= p: m = ceil(-k n / ln(1 - p^{1/k})).  Used where FPRs of
 * several filters are summed against a bound (scalable, window).
 * Errors as bk_size_for_fpr. */
bk_status bk_size_for_fpr_at_most(uint64_t capacity, double fpr, bk_sizing *out);
/* ------------------------------------------------------------------------ */
/* Blocked and split-block Bloom filters (formulas in src/sizing.c)         */
/* ------------------------------------------------------------------------ */

/* FPR of a blocked Bloom filter with `block_bits`-bit blocks, k probes
 * (positions with replacement) inside the key's block, at `bits_per_key`:
 * sum_i Pois(i; B/c) E[(X_i/B)^k], X_i the bits set by i keys' k i probes
 * (Putze, Sanders, Singler 2007; the mean computed exactly for k <= 64 and
 * B <= 4096, to about 1e-12 relative, docs/BLOCKED.md).  Always in [0, 1];
 * 1.0 for a non-positive bits_per_key or zero k or B. */
double bk_blocked_predicted_fpr(double bits_per_key, unsigned hashes, unsigned block_bits);

/* FPR of a split-block filter (blocks of `words` words of `word_bits` bits,
 * one bit set per word per key: the Parquet SBBF is 8 x 32):
 * sum_i Pois(i; w W / c) (1 - (1 - 1/W)^i)^w.  Always in [0, 1]. */
double bk_split_block_predicted_fpr(double bits_per_key, unsigned words, unsigned word_bits);

/* The k minimising bk_blocked_predicted_fpr at this bits_per_key (lower
 * than the classic round(c ln 2): 6 rather than 7 at 10 bits per key). */
unsigned bk_blocked_best_hashes(double bits_per_key, unsigned block_bits);

/* Smallest bits per key at which a blocked filter (at its best k, returned
 * in *hashes if not NULL) reaches `fpr`.  BK_EINVAL: fpr not in (0,1),
 * block_bits 0 or NULL output.  BK_ERANGE: not reachable below 1024 bits
 * per key. */
bk_status bk_blocked_bits_per_key_for_fpr(double fpr, unsigned block_bits, double *bits_per_key,
                                          unsigned *hashes);

/* The same for the Parquet split-block filter (8 words of 32 bits). */
bk_status bk_split_block_bits_per_key_for_fpr(double fpr, double *bits_per_key);

/* Expected fraction of set bits with `keys_per_block` keys per block on
 * average: 1 - e^{-lambda (1 - s)}, s = (1 - 1/B)^k (blocked) or 1 - 1/W
 * (split block). */
double bk_blocked_expected_fill(double keys_per_block, unsigned hashes, unsigned block_bits);
double bk_split_block_expected_fill(double keys_per_block, unsigned word_bits);

/* Keys estimated from the fill ratio of `blocks` blocks (inverse of the
 * above; unbiased only on average over the Poisson block loads, so an
 * approximation -- within about 1% of the truth up to the design fill). */
double bk_blocked_estimate_keys(uint64_t blocks, unsigned hashes, unsigned block_bits,
                                double fill_ratio);
double bk_split_block_estimate_keys(uint64_t blocks, unsigned word_bits, double fill_ratio);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_SIZING_H */
