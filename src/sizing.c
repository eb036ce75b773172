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
    return fpr >= 1.0 ? 0.0 : -log2(fpr); /* not -0 at p = 1 */
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
 * a term falls below 1e-13 of the total: a hundred terms or so.
 */

/* x^n by squaring: pow() dominated the sizing search's time. */
static double power(double x, unsigned n)
{
    double result = 1.0;
    while (n != 0) {
        if (n & 1)
            result *= x;
        x *= x;
        n >>= 1;
    }
    return result;
}

static double blocked_clear_probability(unsigned hashes, unsigned block_bits)
{
    return pow(1.0 - 1.0 / (double)block_bits, (double)hashes);
}

/*
 * The FPR of one block that received some keys.  A query tests k positions
 * (with replacement) and is positive when all hit set bits: with X bits set
 * of B that is (X/B)^k, and the FPR is its mean E[(X/B)^k], which is larger
 * than (E[X]/B)^k = (1 - s^i)^k (Jensen).  For a 512-bit block the
 * difference is a few percent at k >= 8, so the mean is computed exactly
 * (k <= BLOCKED_EXACT_MAX_HASHES) by expanding powers into falling
 * factorials with Stirling numbers of the second kind S(k, j):
 *
 *     E[(X/B)^k] = sum_{j=1..k} S(k,j) (B)_j / B^k  P(j given bits all set)
 *     P(j given bits all set after t = k i probes)
 *                = sum_{l=0..j} (-1)^l C(j,l) (1 - l/B)^t
 *
 * (the number of ordered j-tuples of distinct set bits is (X)_j).  Beyond
 * that k the alternating sums lose precision and (1 - s^i)^k is used.
 */
#define BLOCKED_EXACT_MAX_HASHES 32u

typedef struct block_model {
    unsigned probes;        /* k */
    double block_bits;      /* B */
    double clear;           /* s: one key leaves a given bit clear */
    bool exact;             /* use the Stirling expansion */
    double weight[BLOCKED_EXACT_MAX_HASHES + 1];  /* S(k,j) (B)_j / B^k */
    double binomial[BLOCKED_EXACT_MAX_HASHES + 1][BLOCKED_EXACT_MAX_HASHES + 1];
} block_model;

static void block_model_init(block_model *model, unsigned probes, unsigned block_bits,
                             double clear, bool exact)
{
    model->probes = probes;
    model->block_bits = (double)block_bits;
    model->clear = clear;
    model->exact = exact && probes <= BLOCKED_EXACT_MAX_HASHES;
    if (!model->exact)
        return;
    double stirling[BLOCKED_EXACT_MAX_HASHES + 1][BLOCKED_EXACT_MAX_HASHES + 1] = { { 0 } };
    stirling[0][0] = 1;
    for (unsigned n = 1; n <= probes; n++)
        for (unsigned j = 1; j <= n; j++)
            stirling[n][j] = j * stirling[n - 1][j] + stirling[n - 1][j - 1];
    double falling = 1.0; /* (B)_j / B^j */
    for (unsigned j = 1; j <= probes; j++) {
        falling *= 1.0 - (double)(j - 1) / block_bits;
        model->weight[j] = stirling[probes][j] * falling * pow(block_bits, (double)j - probes);
    }
    for (unsigned j = 0; j <= probes; j++) {
        model->binomial[j][0] = 1;
        for (unsigned l = 1; l <= j; l++)
            model->binomial[j][l] = model->binomial[j][l - 1] * (double)(j - l + 1) / l;
    }
}

/* FPR of a block holding `keys` keys. */
static double block_fpr(const block_model *model, double keys)
{
    if (!model->exact)
        return power(-expm1(keys * log(model->clear)), model->probes);
    unsigned k = model->probes;
    double t = keys * k; /* probes thrown into the block */
    double untouched[BLOCKED_EXACT_MAX_HASHES + 1]; /* (1 - l/B)^t */
    for (unsigned l = 0; l <= k; l++)
        untouched[l] = l == 0 ? 1.0 : exp(t * log1p(-(double)l / model->block_bits));
    double total = 0.0;
    for (unsigned j = 1; j <= k; j++) {
        double all_set = 0.0;
        for (unsigned l = 0; l <= j; l++)
            all_set += (l & 1 ? -1.0 : 1.0) * model->binomial[j][l] * untouched[l];
        total += model->weight[j] * all_set;
    }
    return total < 0 ? 0.0 : total;
}

/* sum_i Pois(i; lambda) block_fpr(i), from the mode outwards.
 *
 * Saturation: the sum takes about 15 sqrt(lambda) terms, and beyond 2^53
 * keys per block i-- no longer moves i, so a filter with far more keys
 * than bits (a huge capacity on a small explicit m, or a full filter's
 * estimate) would never finish.  block_fpr grows with the keys, so when
 * it is already 1 at lambda - 40 sqrt(lambda), below which the Poisson
 * has mass under e^-800, the sum is 1.  For 512-bit blocks that holds from
 * about 37 B / k keys per block on, which bounds the loop to a few
 * thousand terms.  Rounding: with every term about 1 the rounded Poisson
 * weights can sum to 1 + 1e-11; the result is clamped to 1, since a
 * probability above 1 is refused when a file is loaded. */
static double poisson_block_fpr(double lambda, const block_model *model)
{
    if (!(lambda > 0))
        return 0.0;
    double low = lambda - 40.0 * sqrt(lambda);
    if (low > 0 && block_fpr(model, floor(low)) >= 1.0)
        return 1.0;
    double mode = floor(lambda);
    double pmf_mode = exp(mode * log(lambda) - lambda - lgamma(mode + 1.0));
    double total = 0.0;
    double pmf = pmf_mode;
    for (double i = mode; i >= 0; i--) { /* downwards from the mode */
        double term = pmf * block_fpr(model, i);
        total += term;
        if (pmf < 1e-300 || (term < total * 1e-13 && i < mode - 1))
            break;
        pmf *= i / lambda;
    }
    pmf = pmf_mode * lambda / (mode + 1.0);
    for (double i = mode + 1.0;; i++) { /* upwards */
        double term = pmf * block_fpr(model, i);
        total += term;
        if (pmf < 1e-300 || (term < total * 1e-13 && i > lambda + 1))
            break;
        pmf *= lambda / (i + 1.0);
    }
    return total < 1.0 ? total : 1.0;
}

static double blocked_fpr(double bits_per_key, unsigned hashes, unsigned block_bits, bool exact)
{
    if (!(bits_per_key > 0) || hashes == 0 || block_bits == 0)
        return 1.0;
    block_model model;
    block_model_init(&model, hashes, block_bits, blocked_clear_probability(hashes, block_bits),
                     exact);
    return poisson_block_fpr((double)block_bits / bits_per_key, &model);
}

double bk_blocked_predicted_fpr(double bits_per_key, unsigned hashes, unsigned block_bits)
{
    return blocked_fpr(bits_per_key, hashes, block_bits, true);
}

/* Split blocks test one bit per word, so E[X_w / W] is exact per word and
 * the words are independent given the block's keys: no Jensen gap. */
double bk_split_block_predicted_fpr(double bits_per_key, unsigned words, unsigned word_bits)
{
    if (!(bits_per_key > 0) || words == 0 || word_bits == 0)
        return 1.0;
    block_model model;
    block_model_init(&model, words, word_bits, 1.0 - 1.0 / (double)word_bits, false);
    return poisson_block_fpr((double)words * word_bits / bits_per_key, &model);
}

/* Near its minimum the FPR is flat in k (at 10 bits per key k = 6 and 7
 * differ by 0.2%), so the smallest k within this factor of the minimum is
 * taken: one probe fewer costs nothing measurable in accuracy. */
#define BLOCKED_K_TOLERANCE 1.01

static unsigned best_hashes(double bits_per_key, unsigned block_bits, bool exact)
{
    double fpr_of[BK_MAX_HASHES + 1];
    unsigned best = 1;
    fpr_of[1] = blocked_fpr(bits_per_key, 1, block_bits, exact);
    for (unsigned k = 2; k <= BK_MAX_HASHES; k++) { /* the FPR is unimodal in k */
        fpr_of[k] = blocked_fpr(bits_per_key, k, block_bits, exact);
        if (!(fpr_of[k] < fpr_of[best]))
            break;
        best = k;
    }
    unsigned smallest = best;
    while (smallest > 1 && fpr_of[smallest - 1] <= fpr_of[best] * BLOCKED_K_TOLERANCE)
        smallest--;
    return smallest;
}

unsigned bk_blocked_best_hashes(double bits_per_key, unsigned block_bits)
{
    return best_hashes(bits_per_key, block_bits, true);
}

/* Largest bits per key the blocked sizing searches: beyond it a 512-bit
 * block holds about one key and more memory buys almost nothing. */
#define BLOCKED_MAX_BITS_PER_KEY 1024.0

/* What a bisection evaluates: the FPR at c bits per key of a blocked filter
 * (at its best k when hashes is 0) or of the Parquet split block. */
typedef struct fpr_model {
    unsigned block_bits;
    unsigned hashes;
    bool exact;
    bool split;
} fpr_model;

static double model_fpr(const fpr_model *model, double bits_per_key)
{
    if (model->split)
        return bk_split_block_predicted_fpr(bits_per_key, 8, 32);
    unsigned k = model->hashes != 0 ? model->hashes
                                    : best_hashes(bits_per_key, model->block_bits, model->exact);
    return blocked_fpr(bits_per_key, k, model->block_bits, model->exact);
}

/* Smallest c in (low, high] with FPR(c) <= fpr (the FPR falls as c grows);
 * BK_ERANGE if even `high` does not reach it. */
static bk_status bisect_bits_per_key(const fpr_model *model, double fpr, double low, double high,
                                     double precision, double *out)
{
    if (model_fpr(model, high) > fpr)
        return BK_ERANGE;
    if (model_fpr(model, low) <= fpr) {
        *out = low;
        return BK_OK;
    }
    while (high - low > precision * high) {
        double mid = 0.5 * (low + high);
        if (model_fpr(model, mid) <= fpr)
            high = mid;
        else
            low = mid;
    }
    *out = high;
    return BK_OK;
}

/* Two stages, for speed: the cheap (Jensen) model finds the neighbourhood
 * and k; the exact model, at that k only, finds c. */
bk_status bk_blocked_bits_per_key_for_fpr(double fpr, unsigned block_bits, double *bits_per_key,
                                          unsigned *hashes)
{
    if (block_bits == 0 || !(fpr > 0 && fpr < 1) || bits_per_key == NULL)
        return BK_EINVAL;
    fpr_model rough = { block_bits, 0, false, false };
    double estimate;
    bk_status status = bisect_bits_per_key(&rough, fpr, 0.5, BLOCKED_MAX_BITS_PER_KEY, 1e-3,
                                           &estimate);
    if (status != BK_OK)
        return status;
    fpr_model exact = { block_bits, best_hashes(estimate, block_bits, true), true, false };
    double high = 2 * estimate < BLOCKED_MAX_BITS_PER_KEY ? 2 * estimate : BLOCKED_MAX_BITS_PER_KEY;
    status = bisect_bits_per_key(&exact, fpr, 0.5 * estimate, high, 1e-6, bits_per_key);
    if (status != BK_OK)
        return status;
    if (hashes != NULL)
        *hashes = exact.hashes;
    return BK_OK;
}

bk_status bk_split_block_bits_per_key_for_fpr(double fpr, double *bits_per_key)
{
    if (!(fpr > 0 && fpr < 1) || bits_per_key == NULL)
        return BK_EINVAL;
    fpr_model split = { 256, 8, false, true };
    return bisect_bits_per_key(&split, fpr, 0.5, BLOCKED_MAX_BITS_PER_KEY, 1e-6, bits_per_key);
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
