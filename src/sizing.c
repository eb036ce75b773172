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

double bk_design_point_keys(uint64_t capacity, uint64_t bits, unsigned hashes)
{
    double margin_keys = (double)capacity * BK_DESIGN_MARGIN;
    if (bits == 0 || hashes == 0)
        return margin_keys;
    /* The fill of a filter at capacity spreads around its mean with standard
     * deviation ~ sqrt(f (1 - f) / m); on a small filter that noise alone
     * exceeds the 5% margin (capacity 67: 7% false alarms without this term),
     * so the threshold also allows BK_DESIGN_NOISE_SIGMAS of those. */
    double design_fill = bk_expected_fill(capacity, bits, hashes);
    double noise = sqrt(design_fill * (1 - design_fill) / (double)bits);
    double threshold_fill = -expm1(-(double)hashes * margin_keys / (double)bits) +
                            BK_DESIGN_NOISE_SIGMAS * noise;
    if (threshold_fill >= 1)
        return INFINITY;
    return -((double)bits / hashes) * log1p(-threshold_fill);
}

bool bk_fill_past_design_point(double fill_ratio, uint64_t capacity, uint64_t bits,
                               unsigned hashes)
{
    double keys = bk_design_point_keys(capacity, bits, hashes);
    return fill_ratio > -expm1(-(double)hashes * keys / (double)bits);
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

/* Sizing at a fixed k (see sizing.h): solving (1 - e^{-kn/m})^k <= p for m
 * gives m >= -k n / ln(1 - p^{1/k}). */
bk_status bk_size_for_fpr_at_most(uint64_t capacity, double fpr, bk_sizing *out)
{
    if (out == NULL)
        return BK_EINVAL;
    bk_sizing sizing;
    bk_status status = bk_size_for_fpr(capacity, fpr, &sizing);
    if (status != BK_OK)
        return status;
    if (sizing.predicted_fpr > fpr) {
        double per_probe = pow(fpr, 1.0 / sizing.hashes);
        double bits = ceil(-(double)sizing.hashes * (double)capacity / log1p(-per_probe));
        if (!(bits <= (double)BK_MAX_BITS))
            return BK_ERANGE;
        status = bk_size_explicit(capacity, (uint64_t)bits, sizing.hashes, &sizing);
        if (status != BK_OK)
            return status;
    }
    *out = sizing;
    return BK_OK;
}
