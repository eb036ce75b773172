/*
 * src/sizing.c -- the formulas of the classic Bloom filter, in one place.
 *
 * After n keys are added to m bits with k probes each, a given bit is still
 * zero with probability (1 - 1/m)^{kn} ~ e^{-kn/m}.  A key never added is a
 * false positive when all k of its bits are set:
 *
 *     p ~ (1 - e^{-kn/m})^k                              (Bloom 1970)
 *
 * minimised at k = (m/n) ln 2, where half the bits are set and p = 2^{-k}.
 * Solving for m gives the sizing rule
 *
 *     m = ceil(-n ln p / (ln 2)^2),  k = max(1, round((m/n) ln 2))
 *
 * i.e. m/n = log2(1/p) / ln 2 ~ 1.44 log2(1/p) bits per key: 9.59 bits at
 * 1%, 14.38 at 0.1%, and 4.79 more for every further factor of ten.  The
 * lower bound for any approximate membership structure is log2(1/p) bits
 * per key (Carter, Floyd, Gill, Markowsky, Wegman 1978), so a Bloom filter
 * spends 44% more than the minimum.
 *
 * Counting from the fill: X set bits of m imply (inverting the expected
 * fraction of zero bits, Swamidass & Baldi 2007)
 *
 *     n ~ -(m/k) ln(1 - X/m)
 *
 * and applied to the OR of two filters it estimates the size of the union.
 *
 * Measured (examples/fpr_table.c, 100,000 keys, 1,000,000 absent queries):
 * the formula is within the binomial noise of the measured FPR at every
 * bits-per-key from 4 to 20; see README.md for the table.
 */
#include "bloomkit/sizing.h"

#include <math.h>

static const double LN2 = 0.69314718055994530942;

static bk_status finish(uint64_t capacity, double bits_real, unsigned hashes, bk_sizing *out)
{
    if (!(bits_real <= (double)BK_MAX_BITS) || hashes > BK_MAX_HASHES)
        return BK_ERANGE;
    uint64_t bits = (uint64_t)ceil(bits_real);
    if (bits == 0)
        bits = 1;
    bk_sizing s;
    s.capacity = capacity;
    s.bits = bits;
    s.hashes = hashes;
    s.bits_per_key = (double)bits / (double)capacity;
    s.predicted_fpr = bk_predicted_fpr(capacity, bits, hashes);
    s.lower_bound_bits = bk_lower_bound_bits(s.predicted_fpr);
    s.space_ratio = s.lower_bound_bits > 0 ? s.bits_per_key / s.lower_bound_bits : INFINITY;
    s.design_fill_ratio = bk_expected_fill(capacity, bits, hashes);
    *out = s;
    return BK_OK;
}

unsigned bk_optimal_hashes(double bits_per_key)
{
    double k = round(bits_per_key * LN2);
    if (!(k >= 1))
        return 1;
    if (k > BK_MAX_HASHES + 1.0)
        return BK_MAX_HASHES + 1; /* caller reports BK_ERANGE */
    return (unsigned)k;
}

bk_status bk_size_for_fpr(uint64_t capacity, double fpr, bk_sizing *out)
{
    if (out == NULL || capacity == 0 || !(fpr > 0 && fpr < 1))
        return BK_EINVAL;
    double bits = ceil(-(double)capacity * log(fpr) / (LN2 * LN2));
    if (!(bits <= (double)BK_MAX_BITS))
        return BK_ERANGE;
    return finish(capacity, bits, bk_optimal_hashes(bits / (double)capacity), out);
}

bk_status bk_size_for_bits_per_key(uint64_t capacity, double bits_per_key, bk_sizing *out)
{
    if (out == NULL || capacity == 0 || !(bits_per_key >= 1) || !isfinite(bits_per_key))
        return BK_EINVAL;
    double bits = ceil((double)capacity * bits_per_key);
    return finish(capacity, bits, bk_optimal_hashes(bits_per_key), out);
}

bk_status bk_size_explicit(uint64_t capacity, uint64_t bits, unsigned hashes, bk_sizing *out)
{
    if (out == NULL || capacity == 0 || bits == 0 || hashes == 0)
        return BK_EINVAL;
    if (bits > BK_MAX_BITS)
        return BK_ERANGE;
    return finish(capacity, (double)bits, hashes, out);
}

bk_status bk_size_from_params(const bk_params *params, bk_sizing *out)
{
    if (params == NULL || out == NULL)
        return BK_EINVAL;
    if (params->bits != 0 || params->hashes != 0) {
        if (params->bits == 0 || params->hashes == 0)
            return BK_EINVAL;
        return bk_size_explicit(params->capacity, params->bits, params->hashes, out);
    }
    if (params->bits_per_key != 0)
        return bk_size_for_bits_per_key(params->capacity, params->bits_per_key, out);
    double fpr = params->fpr == 0 ? 0.01 : params->fpr;
    return bk_size_for_fpr(params->capacity, fpr, out);
}

double bk_predicted_fpr(uint64_t keys, uint64_t bits, unsigned hashes)
{
    return pow(bk_expected_fill(keys, bits, hashes), (double)hashes);
}

double bk_lower_bound_bits(double fpr)
{
    return -log2(fpr);
}

double bk_expected_fill(uint64_t keys, uint64_t bits, unsigned hashes)
{
    if (bits == 0)
        return 1.0;
    return -expm1(-(double)hashes * (double)keys / (double)bits);
}

double bk_estimate_keys(uint64_t bits, unsigned hashes, uint64_t bits_set)
{
    if (bits == 0 || hashes == 0)
        return 0.0;
    double set = bits_set >= bits ? (double)bits - 0.5 : (double)bits_set;
    return -((double)bits / hashes) * log1p(-set / (double)bits);
}

double bk_fpr_from_fill(double fill_ratio, unsigned hashes)
{
    return pow(fill_ratio, (double)hashes);
}

bool bk_fill_past_design_point(double fill_ratio, uint64_t capacity, uint64_t bits,
                               unsigned hashes)
{
    double margin_keys = (double)capacity * BK_DESIGN_MARGIN;
    double threshold = -expm1(-(double)hashes * margin_keys / (double)bits);
    return fill_ratio > threshold;
}

void bk_estimate_sets(uint64_t bits, unsigned hashes, uint64_t bits_set_a,
                      uint64_t bits_set_b, uint64_t bits_set_union, bk_set_estimate *out)
{
    bk_set_estimate e;
    e.a = bk_estimate_keys(bits, hashes, bits_set_a);
    e.b = bk_estimate_keys(bits, hashes, bits_set_b);
    e.union_size = bk_estimate_keys(bits, hashes, bits_set_union);
    e.intersection_size = e.a + e.b - e.union_size;
    if (e.intersection_size < 0)
        e.intersection_size = 0;
    if (e.intersection_size > e.union_size)
        e.intersection_size = e.union_size;
    e.jaccard = e.union_size > 0 ? e.intersection_size / e.union_size : 0.0;
    *out = e;
}

/* ------------------------------------------------------------------------ */
/* Blocked and split-block Bloom filters (src/blocked.c, src/sbbf.c)        */
/* ------------------------------------------------------------------------ */

/*
 * A blocked filter (Putze, Sanders & Singler, "Cache-, Hash- and
 * Space-Efficient Bloom Filters", WEA 2007 / JEA 2009) is m/B small Bloom
 * filters of B bits; each key picks one block and sets its k bits there.
 * With n keys the number of keys a block receives is Binomial(n, B/m),
 * Poisson with mean lambda = B n / m = B / c at c bits per key.  Let s be
 * the probability that one key leaves a given bit of its block clear:
 *
 *     blocked (k positions in B bits, with replacement)  s = (1 - 1/B)^k
 *     split block (one bit in each of k words of W bits) s = 1 - 1/W
 *
 * A block that received i keys has each bit set with probability 1 - s^i,
 * and an absent key tests k bits of one block, so
 *
 *     FPR = sum_i Pois(i; lambda) (1 - s^i)^k                      (PSS 2007)
 *
 * The expected fraction of set bits has a closed form (the Poisson
 * generating function E[z^I] = e^{lambda (z - 1)}):
 *
 *     fill = 1 - e^{-lambda (1 - s)}
 *
 * and inverting it gives the number of keys from the fill:
 *
 *     n ~ -(blocks) ln(1 - fill) / (1 - s)
 *
 * The sum is evaluated from the mode of the Poisson outwards, stopping when
 * the terms no longer change the total: a few hundred terms at most.
 */

static double blocked_clear_probability(unsigned hashes, unsigned block_bits)
{
    return pow(1.0 - 1.0 / (double)block_bits, (double)hashes);
}

static double split_clear_probability(unsigned word_bits)
{
    return 1.0 - 1.0 / (double)word_bits;
}

/* sum_i Pois(i; lambda) (1 - clear^i)^probes */
static double poisson_block_fpr(double lambda, double clear, unsigned probes)
{
    if (!(lambda > 0))
        return 0.0;
    double mode = floor(lambda);
    double log_pmf_mode = mode * log(lambda) - lambda - lgamma(mode + 1.0);
    double pmf_mode = exp(log_pmf_mode);
    double total = 0.0;
    double pmf = pmf_mode;
    for (double i = mode; i >= 0; i--) { /* downwards from the mode */
        double term = pmf * pow(-expm1(i * log(clear)), (double)probes);
        total += term;
        if (pmf < 1e-300 || (term < total * 1e-17 && i < mode - 1))
            break;
        pmf *= i / lambda;
    }
    pmf = pmf_mode * lambda / (mode + 1.0);
    for (double i = mode + 1.0;; i++) { /* upwards */
        double term = pmf * pow(-expm1(i * log(clear)), (double)probes);
        total += term;
        if (pmf < 1e-300 || (term < total * 1e-17 && i > lambda + 1))
            break;
        pmf *= lambda / (i + 1.0);
    }
    return total;
}

double bk_blocked_predicted_fpr(double bits_per_key, unsigned hashes, unsigned block_bits)
{
    if (!(bits_per_key > 0) || hashes == 0 || block_bits == 0)
        return 1.0;
    return poisson_block_fpr((double)block_bits / bits_per_key,
                             blocked_clear_probability(hashes, block_bits), hashes);
}

double bk_split_block_predicted_fpr(double bits_per_key, unsigned words, unsigned word_bits)
{
    if (!(bits_per_key > 0) || words == 0 || word_bits == 0)
        return 1.0;
    return poisson_block_fpr((double)words * word_bits / bits_per_key,
                             split_clear_probability(word_bits), words);
}

/* Near its minimum the FPR is flat in k (at 10 bits per key k = 6 and 7
 * differ by 0.05%), so the smallest k within this factor of the minimum is
 * taken: one probe fewer costs nothing measurable in accuracy. */
#define BLOCKED_K_TOLERANCE 1.01

unsigned bk_blocked_best_hashes(double bits_per_key, unsigned block_bits)
{
    double fpr_of[BK_MAX_HASHES + 1];
    unsigned best = 1;
    fpr_of[1] = bk_blocked_predicted_fpr(bits_per_key, 1, block_bits);
    unsigned k = 2;
    for (; k <= BK_MAX_HASHES; k++) { /* the FPR is unimodal in k */
        fpr_of[k] = bk_blocked_predicted_fpr(bits_per_key, k, block_bits);
        if (!(fpr_of[k] < fpr_of[best]))
            break;
        best = k;
    }
    unsigned smallest = best;
    while (smallest > 1 && fpr_of[smallest - 1] <= fpr_of[best] * BLOCKED_K_TOLERANCE)
        smallest--;
    return smallest;
}

/* Largest bits per key the blocked sizing searches: beyond it a 512-bit
 * block holds less than one key and the FPR floor is the hash's own. */
#define BLOCKED_MAX_BITS_PER_KEY 1024.0

typedef double (*block_fpr_fn)(double bits_per_key, unsigned block_bits, unsigned *hashes);

static double blocked_best_fpr(double bits_per_key, unsigned block_bits, unsigned *hashes)
{
    unsigned k = bk_blocked_best_hashes(bits_per_key, block_bits);
    if (hashes != NULL)
        *hashes = k;
    return bk_blocked_predicted_fpr(bits_per_key, k, block_bits);
}

static double split_fpr(double bits_per_key, unsigned word_bits, unsigned *hashes)
{
    if (hashes != NULL)
        *hashes = 8;
    return bk_split_block_predicted_fpr(bits_per_key, 8, word_bits);
}

/* Smallest bits per key whose FPR is at most `fpr` (bisection: the FPR
 * falls as bits per key grow). */
static bk_status bits_per_key_for(double fpr, unsigned bits, block_fpr_fn model,
                                  double *bits_per_key, unsigned *hashes)
{
    if (!(fpr > 0 && fpr < 1) || bits_per_key == NULL)
        return BK_EINVAL;
    double low = 0.5, high = BLOCKED_MAX_BITS_PER_KEY;
    if (model(high, bits, NULL) > fpr)
        return BK_ERANGE;
    if (model(low, bits, NULL) <= fpr)
        high = low;
    while (high - low > 1e-7 * high) {
        double mid = 0.5 * (low + high);
        if (model(mid, bits, NULL) <= fpr)
            high = mid;
        else
            low = mid;
    }
    *bits_per_key = high;
    unsigned k;
    model(high, bits, &k);
    if (hashes != NULL)
        *hashes = k;
    return BK_OK;
}

bk_status bk_blocked_bits_per_key_for_fpr(double fpr, unsigned block_bits, double *bits_per_key,
                                          unsigned *hashes)
{
    if (block_bits == 0)
        return BK_EINVAL;
    return bits_per_key_for(fpr, block_bits, blocked_best_fpr, bits_per_key, hashes);
}

bk_status bk_split_block_bits_per_key_for_fpr(double fpr, double *bits_per_key)
{
    return bits_per_key_for(fpr, 32, split_fpr, bits_per_key, NULL);
}

double bk_blocked_expected_fill(double keys_per_block, unsigned hashes, unsigned block_bits)
{
    if (hashes == 0 || block_bits == 0)
        return 0.0;
    return -expm1(-keys_per_block * -expm1(hashes * log1p(-1.0 / block_bits)));
}

double bk_split_block_expected_fill(double keys_per_block, unsigned word_bits)
{
    if (word_bits == 0)
        return 0.0;
    return -expm1(-keys_per_block / (double)word_bits);
}

/* When every bit is set the count is unbounded: the fill of all bits but
 * half of one is used instead (a lower bound), as bk_estimate_keys does. */
static double keys_from_fill(uint64_t blocks, unsigned block_bits, double fill,
                             double per_key_set)
{
    if (blocks == 0 || !(per_key_set > 0) || !(fill > 0))
        return 0.0;
    if (fill >= 1.0)
        fill = 1.0 - 0.5 / ((double)blocks * block_bits);
    return -(double)blocks * log1p(-fill) / per_key_set;
}

double bk_blocked_estimate_keys(uint64_t blocks, unsigned hashes, unsigned block_bits,
                                double fill_ratio)
{
    if (hashes == 0 || block_bits == 0)
        return 0.0;
    return keys_from_fill(blocks, block_bits, fill_ratio, -expm1(hashes * log1p(-1.0 / block_bits)));
}

double bk_split_block_estimate_keys(uint64_t blocks, unsigned word_bits, double fill_ratio)
{
    if (word_bits == 0)
        return 0.0;
    return keys_from_fill(blocks, 8 * word_bits, fill_ratio, 1.0 / (double)word_bits);
}
