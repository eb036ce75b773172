/*
 * src/sizing.c -- the formulas of the Bloom filters: the classic filter's
 * (bloom, counting, and scalable's sub-filters) and, in the second half,
 * the blocked and split-block models (blocked, sbbf).  The other kinds'
 * formulas live with them: cuckoo.c, fuse.c, scalable.c, window.c.
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

void bk_estimate_sets(uint64_t bits, unsigned hashes, uint64_t bits_set_a, uint64_t bits_set_b,
                      uint64_t bits_set_union, bk_set_estimate *out)
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
 * The sum stops when a term falls below 1e-13 of the total: a hundred
 * terms or so.  For `blocked` the exact mean per block replaces (1 - s^i)^k
 * (below); the split block needs no correction.
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
 * The FPR of one block that received i keys.  A query tests k positions
 * (with replacement) and is positive when all hit set bits: with X bits set
 * of B that is (X/B)^k, and the FPR is its mean E[(X/B)^k], which is larger
 * than (E[X]/B)^k = (1 - s^i)^k (Jensen).  For a 512-bit block the
 * difference is a few percent at k >= 8, so the mean is computed exactly
 * (k <= BLOCKED_EXACT_MAX_HASHES, B <= BLOCKED_EXACT_MAX_BLOCK_BITS) by
 * splitting on the number j of distinct positions among the k tested:
 *
 *     E[(X/B)^k] = sum_j D_k(j) C_j(k i)
 *
 * D_m(j), the chance that m uniform positions of B take exactly j values,
 * and C_j(t), the chance that j given bits are all set after t probes, are
 * built up one position or probe at a time:
 *
 *     D_{m+1}(j) = D_m(j) j/B + D_m(j-1) (B - j + 1)/B,   D_0(0) = 1
 *     C_j(t+1)   = C_j(t) (1 - j/B) + C_{j-1}(t) j/B,      C_0 = 1, C_j(0) = 0
 *
 * (the first of t+1 probes hits one of the j bits, or none).  Each step
 * mixes probabilities with weights that sum to 1, so rounding does not
 * grow.  The closed forms (Stirling numbers and an alternating
 * inclusion-exclusion sum of binomials) cancel catastrophically: at
 * k >= 20 they lost every digit below an FPR of about 1e-9, and sizing for
 * 1e-9 chose 73 bits per key where 80 are needed.  Cost: k^2 operations
 * per key of the block, so the exact sum walks i upwards from the bottom
 * of the Poisson's range.  Beyond the limits the Jensen form is used.
 */
#define BLOCKED_EXACT_MAX_HASHES 64u
#define BLOCKED_EXACT_MAX_BLOCK_BITS 4096u

typedef struct block_model {
    unsigned probes;                               /* k */
    double block_bits;                             /* B */
    double clear;                                  /* s: one key leaves a given bit clear */
    bool exact;                                    /* E[(X/B)^k] rather than the Jensen form */
    unsigned most_distinct;                        /* min(k, B): D_k(j) = 0 beyond it */
    double distinct[BLOCKED_EXACT_MAX_HASHES + 1]; /* D_k(j) */
} block_model;

static void block_model_init(block_model *model, unsigned probes, unsigned block_bits,
                             double clear, bool exact)
{
    model->probes = probes;
    model->block_bits = (double)block_bits;
    model->clear = clear;
    model->exact = exact && probes <= BLOCKED_EXACT_MAX_HASHES &&
                   block_bits <= BLOCKED_EXACT_MAX_BLOCK_BITS;
    if (!model->exact)
        return;
    model->most_distinct = probes < block_bits ? probes : block_bits;
    double *d = model->distinct;
    d[0] = 1.0;
    for (unsigned j = 1; j <= probes; j++)
        d[j] = 0.0;
    for (unsigned m = 0; m < probes; m++) {
        for (unsigned j = m + 1; j >= 1; j--)
            d[j] = d[j] * j / model->block_bits +
                   d[j - 1] * (model->block_bits - (j - 1)) / model->block_bits;
        d[0] = 0.0; /* one position or more: at least one value */
    }
}

/* The Jensen form (1 - s^i)^k: the FPR of a block of `keys` keys in the
 * plain model, and a lower bound on it in the exact one. */
static double jensen_block_fpr(const block_model *model, double keys)
{
    if (keys == 0)
        return 0.0; /* and not 0 * log(0) when a key sets every bit (B = 1) */
    return power(-expm1(keys * log(model->clear)), model->probes);
}

/* C_j(t) -> C_j(t + probes), for j = 1..min(k, B) (past B the weight
 * 1 - j/B turns negative and C_j would grow without bound). */
static void add_probes(const block_model *model, double *covered, double probes)
{
    double b = model->block_bits;
    for (double t = 0; t < probes; t++)
        for (unsigned j = model->most_distinct; j >= 1; j--)
            covered[j] = covered[j] * (1.0 - j / b) + covered[j - 1] * (j / b);
}

static double exact_block_fpr(const block_model *model, const double *covered)
{
    double total = 0.0;
    for (unsigned j = 1; j <= model->most_distinct; j++)
        total += model->distinct[j] * covered[j];
    return total;
}

/* sum_i Pois(i; lambda) E[(X_i/B)^k], i upwards from lambda - 10
 * sqrt(lambda) (below it the Poisson has mass under e^-50) until the terms
 * stop counting. */
static double poisson_exact_fpr(double lambda, const block_model *model)
{
    double covered[BLOCKED_EXACT_MAX_HASHES + 1] = { 1.0 };
    double first = floor(fmax(0.0, lambda - 10.0 * sqrt(lambda)));
    add_probes(model, covered, first * model->probes);
    double pmf = exp(first * log(lambda) - lambda - lgamma(first + 1.0));
    double total = 0.0;
    for (double i = first;; i++) {
        double term = pmf * exact_block_fpr(model, covered);
        total += term;
        if (pmf < 1e-300 || (term < total * 1e-13 && i > lambda + 1))
            break;
        pmf *= lambda / (i + 1.0);
        add_probes(model, covered, model->probes);
    }
    return total;
}

/* sum_i Pois(i; lambda) (1 - s^i)^k, from the mode outwards */
static double poisson_jensen_fpr(double lambda, const block_model *model)
{
    double mode = floor(lambda);
    double pmf_mode = exp(mode * log(lambda) - lambda - lgamma(mode + 1.0));
    double total = 0.0;
    double pmf = pmf_mode;
    for (double i = mode; i >= 0; i--) { /* downwards from the mode */
        double term = pmf * jensen_block_fpr(model, i);
        total += term;
        if (pmf < 1e-300 || (term < total * 1e-13 && i < mode - 1))
            break;
        pmf *= i / lambda;
    }
    pmf = pmf_mode * lambda / (mode + 1.0);
    for (double i = mode + 1.0;; i++) { /* upwards */
        double term = pmf * jensen_block_fpr(model, i);
        total += term;
        if (pmf < 1e-300 || (term < total * 1e-13 && i > lambda + 1))
            break;
        pmf *= lambda / (i + 1.0);
    }
    return total;
}

/* sum_i Pois(i; lambda) P(positive | i keys).
 *
 * Saturation: the sums take about 15 sqrt(lambda) terms (the exact one
 * also k^2 lambda steps to reach them), and beyond 2^53 keys per block i++
 * no longer moves i, so a filter with far more keys than bits (a huge
 * capacity on a small explicit m, or a full filter's estimate) would never
 * finish.  The Jensen form, a lower bound, is already 1 at
 * lambda - 40 sqrt(lambda) (below which the Poisson has mass under e^-800)
 * from about 37 B / k keys per block on, and then the FPR is 1; this bounds
 * the exact sum to 37 k B steps.  Rounding: with every term about 1 the
 * rounded Poisson weights can sum to 1 + 1e-11; the result is clamped to
 * 1, since a probability above 1 is refused when a file is loaded. */
static double poisson_block_fpr(double lambda, const block_model *model)
{
    if (!(lambda > 0))
        return 0.0;
    double low = lambda - 40.0 * sqrt(lambda);
    if (low > 0 && jensen_block_fpr(model, floor(low)) >= 1.0)
        return 1.0;
    double total = model->exact ? poisson_exact_fpr(lambda, model)
                                : poisson_jensen_fpr(lambda, model);
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

/* What the search evaluates: the FPR at c bits per key of a blocked filter
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

/* How far log FPR(c) is above log fpr: positive where c is too small. */
static double excess(const fpr_model *model, double bits_per_key, double log_fpr)
{
    return log(model_fpr(model, bits_per_key)) - log_fpr;
}

/* The bits per key a classic filter needs at its best (real) k:
 * FPR = e^{-c (ln 2)^2}.  Blocks and whole k only add false positives, so
 * no blocked design reaches `fpr` with fewer. */
static double classic_bits_per_key(double fpr) { return -log(fpr) / (LN2 * LN2); }

/* Smallest c >= low with FPR(c) <= fpr (the FPR falls as c grows), to
 * within `precision` of c, or `low` itself if it already reaches fpr;
 * BK_ERANGE if even `limit` does not, or low is past it.
 *
 * The bracket's upper end starts at 1.25 low and grows by that factor.
 * Inside it, log FPR is close to linear in c (each bit per key multiplies
 * the FPR by about 0.6), so each step interpolates it between the ends
 * (regula falsi) rather than halving: the Illinois rule halves the excess
 * of an end that stayed put twice, so the root is passed and the bracket
 * closes from both sides.  A point is kept a quarter of the precision
 * inside the bracket, so a root next to an end closes it in one more step;
 * a non-finite excess (an FPR that underflowed) falls back to halving.
 * Measured at FPRs from 30% to 0.01%: 7-9 model evaluations for the split
 * block and 11-12 for the two blocked searches (up to 16 at 1e-12),
 * against 28-30 and 41-44 when each search halved from [0.5, 1024]. */
static bk_status search_bits_per_key(const fpr_model *model, double fpr, double low,
                                     double limit, double precision, double *out)
{
    if (low > limit)
        return BK_ERANGE; /* low is below the answer */
    double log_fpr = log(fpr);
    double low_excess = excess(model, low, log_fpr);
    if (low_excess <= 0) {
        *out = low;
        return BK_OK;
    }
    double high, high_excess;
    for (high = low;;) {
        high = 1.25 * high < limit ? 1.25 * high : limit;
        high_excess = excess(model, high, log_fpr);
        if (high_excess <= 0)
            break;
        if (high >= limit)
            return BK_ERANGE;
        low = high;
        low_excess = high_excess;
    }
    int last_moved = 0; /* -1 low, +1 high */
    while (high - low > precision * high) {
        double margin = 0.25 * precision * high;
        double next = high - high_excess * (high - low) / (high_excess - low_excess);
        if (!isfinite(next))
            next = 0.5 * (low + high);
        next = fmin(fmax(next, low + margin), high - margin);
        double next_excess = excess(model, next, log_fpr);
        if (next_excess <= 0) {
            high = next;
            high_excess = next_excess;
            if (last_moved == 1)
                low_excess *= 0.5;
            last_moved = 1;
        } else {
            low = next;
            low_excess = next_excess;
            if (last_moved == -1)
                high_excess *= 0.5;
            last_moved = -1;
        }
    }
    *out = high;
    return BK_OK;
}

static double at_least_half(double bits_per_key)
{
    return bits_per_key > 0.5 ? bits_per_key : 0.5;
}

/* Two stages, for speed: the cheap (Jensen) model finds the neighbourhood
 * and k; the exact model, at that k only, finds c.  The exact FPR is above
 * the Jensen one, but the first stage's k is the smallest within 1% of the
 * best (a few tenths of a percent of c), so the exact search starts 2%
 * below the estimate. */
bk_status bk_blocked_bits_per_key_for_fpr(double fpr, unsigned block_bits, double *bits_per_key,
                                          unsigned *hashes)
{
    if (block_bits == 0 || !(fpr > 0 && fpr < 1) || bits_per_key == NULL)
        return BK_EINVAL;
    fpr_model rough = { block_bits, 0, false, false };
    double estimate;
    bk_status status = search_bits_per_key(&rough, fpr, at_least_half(classic_bits_per_key(fpr)),
                                           BLOCKED_MAX_BITS_PER_KEY, 1e-3, &estimate);
    if (status != BK_OK)
        return status;
    fpr_model exact = { block_bits, best_hashes(estimate, block_bits, true), true, false };
    status = search_bits_per_key(&exact, fpr, estimate * 0.98, BLOCKED_MAX_BITS_PER_KEY, 1e-6,
                                 bits_per_key);
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
    return search_bits_per_key(&split, fpr, at_least_half(classic_bits_per_key(fpr)),
                               BLOCKED_MAX_BITS_PER_KEY, 1e-6, bits_per_key);
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
    return keys_from_fill(blocks, block_bits, fill_ratio,
                          -expm1(hashes * log1p(-1.0 / block_bits)));
}

double bk_split_block_estimate_keys(uint64_t blocks, unsigned word_bits, double fill_ratio)
{
    if (word_bits == 0)
        return 0.0;
    return keys_from_fill(blocks, 8 * word_bits, fill_ratio, 1.0 / (double)word_bits);
}
