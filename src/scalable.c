/*
 * src/scalable.c -- the scalable Bloom filter: a chain of classic Bloom
 * filters that grows with the keys.
 *
 * The idea (Almeida, Baquero, Preguica, Hutchison, "Scalable Bloom Filters",
 * Information Processing Letters 101(6), 2007): a classic filter sized for n
 * keys quietly degrades when given 2n.  Instead of guessing n, start with a
 * filter for n0 keys; when it holds n0 keys, freeze it and open a new one,
 * s times larger (s = expansion) and with a tighter target FPR.  A query
 * asks every sub-filter; an add asks the older sub-filters and, if none
 * holds the key, sets it in the newest only (in one pass: a bit flipped
 * there says the key was new).
 *
 * Memory layout: a fixed array of up to 64 pointers to ordinary bk_bloom
 * filters (src/bloom.h), each with its own word array:
 *
 *     chain: [ 0 ] -> bk_bloom  n0 keys,     FPR p_0          (full, frozen)
 *            [ 1 ] -> bk_bloom  n0 s keys,   FPR p_1          (full, frozen)
 *            [ 2 ] -> bk_bloom  n0 s^2 keys, FPR p_2 = p_1 r  <- keys go here
 *            [ 3 .. 63 ] unused
 *
 * The FPR bound (section 4 of the paper).  A key absent from the set is a
 * false positive of the chain when any sub-filter reports it.  With p_i the
 * FPR of sub-filter i at its capacity and independent sub-filters,
 *
 *     P = 1 - prod_{i<c} (1 - p_i)  <=  sum_{i<c} p_i          (union bound)
 *
 * The union bound needs no independence, but the product form does;
 * src/level_hash.h gives each sub-filter its own probe sequence derived
 * from the one key hash.
 *
 * The schedule.  The paper's p_i = p (1 - r) r^i sums to p, but gives the
 * first sub-filter only p (1 - r): with its r = 0.5 a chain that never
 * grows answers at p/2, paying 1.44 bits per key for accuracy nobody asked
 * for (11.0 bits per key at 1% where a classic filter needs 9.6).  Here the
 * first sub-filter takes a share q of the budget and the others split the
 * rest geometrically:
 *
 *     p_0 = q p,    p_i = (1 - q) p (1 - r) r^(i-1)   (i >= 1)
 *     sum_{i<c} p_i = q p + (1 - q) p (1 - r^(c-1))  <  p
 *
 * so the chain's FPR starts at q p and climbs towards p from below as it
 * grows.  q = 0.7 and r = 0.75 (the defaults) were chosen with the model
 * of these sums and the Bloom sizes over growths of 1 to 1000 n0 (s = 2):
 * a larger q makes every later sub-filter dearer (their share 1 - q
 * shrinks), a smaller r makes the late, large sub-filters dearer, a larger
 * r the early ones.  q = 1 is impossible: the chain would pass p at its
 * first growth.  A chain read from a file without q (the earlier layout)
 * keeps the paper's rule, which is this one with q = 1 - r.
 *
 * Two details make the bound hold exactly, not just asymptotically:
 *   - a sub-filter is never filled beyond its capacity (the next key goes
 *     to a new sub-filter), so its FPR never exceeds its design FPR;
 *   - bk_size_for_fpr_at_most sizes each sub-filter to use its share
 *     fully: the classic m and k, and when rounding k left the prediction
 *     (1 - e^{-kn/m})^k a little above p_i (0.01003 for p_i = 0.01), the
 *     smallest m at that k that meets it:
 *         m = ceil(-k n / ln(1 - p_i^{1/k}))            (src/sizing.c)
 *
 * Sizes: sub-filter i has n0 s^i keys at 1.44 log2(1/p_i) bits per key:
 * with the defaults 1.44 (log2(1/p) + 0.51) for the first and
 * 1.44 (log2(1/p) + 3.74 + 0.42 (i - 1)) for the others, plus the unused
 * part of the newest sub-filter (up to half the memory just after it
 * opens).
 *
 * Costs: an add of a new key and a query of an absent key probe every
 * sub-filter (each usually stops at its first or second zero bit); a query
 * of a present key probes newest first, where most keys are.
 *
 * Blocked stages (BK_FLAG_BLOCKED_STAGES): the same chain and schedule,
 * but each sub-filter is a cache-line blocked filter (src/blocked.h: a
 * key's k bits in one 512-bit block), sized by the blocked kind's own rule
 * at 0.9 p_i (BLOCKED_STAGE_MARGIN below), kept in blocks[] instead of
 * filters[]:
 *
 *     chain: blocks[0] -> bk_blocked  n0 keys,   k_0, m_0 = 512 b_0 bits
 *            blocks[1] -> bk_blocked  n0 s keys, k_1, m_1 = 512 b_1 bits
 *
 * A probe of a stage is one cache line, so a chain that has not grown
 * answers with one line per key where classic stages touch k.  The file
 * records the stage kind in each sub-filter record (see the parameter
 * block below).  Measured with n0 = 10,000 (docs/GROWTH.md): FPR 0.00635
 * at 1x, 0.00885 at 1000x for p = 0.01, 7-17% more bits than classic
 * stages.
 *
 * Measured (tests/test_scalable.c, test_fpr_near_target_over_growth: XXH3
 * seed 0, n0 = 1000, p = 0.01, keys "user:0".. added, 1,000,000 absent
 * keys "guest:%u" queried at each growth):
 *     growth   sub-filters   measured FPR   bound 1 - prod(1 - p_i)   bits per key added
 *     1x       1             0.00659        0.00700                   10.34
 *     10x      4             0.00795        0.00872                   23.36
 *     100x     7             0.00894        0.00944                   22.26
 *     1000x    10            0.00939        0.00975                   19.79
 * (a classic filter for exactly n keys at 1% needs 9.6 bits per key).  The
 * measured FPR sits below the bound by the newest sub-filter's unused part;
 * every other sub-filter is filled to exactly its design point.
 */
#include "scalable.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blocked.h"
#include "bloom.h"
#include "endian.h"
#include "filter.h"
#include "hash.h"
#include "level_hash.h"

#define MAX_EXPANSION 1000.0

struct bk_scalable {
    bk_bloom *filters[BK_SCALABLE_MAX_FILTERS];  /* oldest first (classic stages) */
    bk_blocked *blocks[BK_SCALABLE_MAX_FILTERS]; /* oldest first (blocked stages) */
    bool blocked_stages; /* BK_FLAG_BLOCKED_STAGES: blocks[] is used, not filters[] */
    unsigned filter_count;
    unsigned max_filters;      /* 1 .. BK_SCALABLE_MAX_FILTERS */
    uint64_t initial_capacity; /* n0 */
    double target_fpr;         /* p: bound on the chain's FPR */
    double expansion;          /* s */
    double tightening;         /* r */
    double first_share;        /* q: p_0 = q p */
    bool share_implicit;       /* q = 1 - r, from a file without the field */
    uint64_t keys_added;
    bk_hasher hasher;
    bool read_only; /* sub-filters read a mapped file in place */
};

/* ------------------------------------------------------------------------ */
/* The chain's sizing rule                                                  */
/* ------------------------------------------------------------------------ */

typedef struct chain_params {
    uint64_t initial_capacity;
    double target_fpr, expansion, tightening, first_share;
    bool share_implicit; /* the legacy schedule p_i = p (1 - r) r^i */
    bool blocked_stages; /* blocked sub-filters (BK_FLAG_BLOCKED_STAGES) */
    unsigned max_filters;
} chain_params;

/* The design FPR of sub-filter i: p_0 = q p, then p_i = (1 - q) p (1 - r)
 * r^(i-1); for a chain whose file has no q, p_i = p (1 - r) r^i (the same
 * schedule with q = 1 - r, computed as it was written). */
static double level_fpr(const chain_params *c, unsigned level)
{
    double p = c->target_fpr, r = c->tightening, q = c->first_share;
    if (c->share_implicit)
        return p * (1 - r) * pow(r, (double)level);
    if (level == 0)
        return p * q;
    return p * (1 - q) * (1 - r) * pow(r, (double)(level - 1));
}

/* n_i = ceil(n0 s^i). */
static bk_status level_capacity(uint64_t initial_capacity, double expansion, unsigned level,
                                uint64_t *out)
{
    double capacity = ceil((double)initial_capacity * pow(expansion, (double)level));
    if (!(capacity <= (double)BK_MAX_BITS))
        return BK_ERANGE;
    *out = (uint64_t)capacity;
    return BK_OK;
}

/* A blocked filter's FPR follows its own draw of keys per block: one of
 * 20 blocks (n0 = 1000 at 1%) lands up to ~10% above the prediction, as
 * the keys happen to fall, where a classic filter's bits average out.
 * Blocked stages are therefore sized for BLOCKED_STAGE_MARGIN p_i, so a
 * chain with a small n0 stays under its bound too (about 0.2 bits per key
 * more). */
#define BLOCKED_STAGE_MARGIN 0.9

/* A blocked stage's size for n keys at FPR at most p: the blocked kind's
 * own design (its k and bits per key from its measured FPR curve) at
 * BLOCKED_STAGE_MARGIN p, in a bk_sizing (bits = 512 x blocks;
 * bits_per_key and design_fill_ratio as the blocked kind reports them). */
static bk_status blocked_level_sizing(uint64_t capacity, double fpr, bk_sizing *out)
{
    bk_params params;
    memset(&params, 0, sizeof params);
    params.capacity = capacity;
    params.fpr = fpr * BLOCKED_STAGE_MARGIN;
    bk_stats design;
    bk_status status = bk_blocked_ops.design(&params, &design);
    if (status != BK_OK)
        return status;
    memset(out, 0, sizeof *out);
    out->bits = design.bits;
    out->hashes = design.hashes;
    out->capacity = design.capacity;
    out->bits_per_key = design.bits_per_key;
    out->design_fill_ratio = design.design_fill_ratio;
    return BK_OK;
}

static bk_status level_sizing(const chain_params *c, unsigned level, bk_sizing *out)
{
    uint64_t capacity;
    bk_status status = level_capacity(c->initial_capacity, c->expansion, level, &capacity);
    if (status != BK_OK)
        return status;
    double fpr = level_fpr(c, level);
    if (!(fpr > 0))
        return BK_ERANGE; /* the tightened FPR underflowed */
    if (c->blocked_stages)
        return blocked_level_sizing(capacity, fpr, out);
    return bk_size_for_fpr_at_most(capacity, fpr, out);
}

static chain_params params_of(const bk_scalable *filter)
{
    chain_params c = { filter->initial_capacity, filter->target_fpr,  filter->expansion,
                       filter->tightening,       filter->first_share, filter->share_implicit,
                       filter->blocked_stages,   filter->max_filters };
    return c;
}

static bk_status next_level_sizing(const bk_scalable *filter, bk_sizing *out)
{
    chain_params c = params_of(filter);
    return level_sizing(&c, filter->filter_count, out);
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

static bk_status check_params(const bk_params *params, chain_params *out)
{
    if (params->bits != 0 || params->hashes != 0 || params->bits_per_key != 0)
        return BK_EINVAL;
    if (params->capacity == 0)
        return BK_EINVAL;
    chain_params c;
    c.initial_capacity = params->capacity;
    c.target_fpr = params->fpr == 0 ? 0.01 : params->fpr;
    c.expansion = params->expansion == 0 ? BK_SCALABLE_DEFAULT_EXPANSION : params->expansion;
    c.tightening = params->tightening == 0 ? BK_SCALABLE_DEFAULT_TIGHTENING : params->tightening;
    c.max_filters = params->max_filters == 0 ? BK_SCALABLE_MAX_FILTERS : params->max_filters;
    c.first_share = BK_SCALABLE_FIRST_SHARE;
    c.share_implicit = false;
    c.blocked_stages = (params->flags & BK_FLAG_BLOCKED_STAGES) != 0;
    if (params->flags & ~BK_FLAG_BLOCKED_STAGES)
        return BK_EUNSUPPORTED;
    if (!(c.target_fpr > 0 && c.target_fpr < 1) ||
        !(c.expansion >= 1 && c.expansion <= MAX_EXPANSION) ||
        !(c.tightening > 0 && c.tightening < 1) || c.max_filters > BK_SCALABLE_MAX_FILTERS)
        return BK_EINVAL;
    *out = c;
    return BK_OK;
}

static bk_scalable *new_chain(const chain_params *c, const bk_hasher *hasher)
{
    bk_scalable *filter = calloc(1, sizeof *filter);
    if (filter == NULL)
        return NULL;
    filter->initial_capacity = c->initial_capacity;
    filter->target_fpr = c->target_fpr;
    filter->expansion = c->expansion;
    filter->tightening = c->tightening;
    filter->first_share = c->first_share;
    filter->share_implicit = c->share_implicit;
    filter->blocked_stages = c->blocked_stages;
    filter->max_filters = c->max_filters;
    filter->hasher = *hasher;
    return filter;
}

/* A blocked stage of the given size (from blocked_level_sizing or a file's
 * record), on the chain's hasher: empty when `payload` is NULL, else
 * holding the blocks of a file's payload slice (read in place when
 * `in_place`), through the blocked kind's reader, which builds a filter
 * from its own parameter block (src/blocked.c). */
static bk_status new_blocked_stage(const bk_sizing *sizing, const bk_hasher *hasher,
                                   const uint8_t *payload, bool in_place, bk_blocked **out)
{
    uint64_t blocks = sizing->bits / BK_BLOCKED_BLOCK_BITS;
    if (sizing->bits % BK_BLOCKED_BLOCK_BITS != 0 || blocks == 0)
        return BK_ECORRUPT;
    uint8_t params[32];
    bk_store_le64(params, blocks);
    bk_store_le32(params + 8, sizing->hashes);
    bk_store_le32(params + 12, BK_BLOCKED_BLOCK_BITS);
    bk_store_le64(params + 16, sizing->capacity);
    bk_store_le_double(params + 24,
                       bk_blocked_predicted_fpr((double)sizing->bits / (double)sizing->capacity,
                                                sizing->hashes, BK_BLOCKED_BLOCK_BITS));
    uint64_t bytes = blocks * (BK_BLOCKED_BLOCK_BITS / 8);
    void *object;
    bk_status status;
    if (payload != NULL) {
        status = bk_blocked_ops.read(params, sizeof params, payload, bytes, hasher, 0, in_place,
                                     &object);
    } else {
        bk_params create;
        memset(&create, 0, sizeof create);
        create.capacity = sizing->capacity;
        create.bits = sizing->bits;
        create.hashes = sizing->hashes;
        status = bk_blocked_ops.create(&create, &object);
        if (status == BK_OK)
            ((bk_blocked *)object)->hasher = *hasher;
    }
    if (status == BK_OK)
        *out = object;
    return status;
}

static void free_stages(bk_scalable *filter, unsigned from)
{
    while (filter->filter_count > from) {
        unsigned i = --filter->filter_count;
        if (filter->blocked_stages)
            bk_blocked_ops.destroy(filter->blocks[i]);
        else
            bk_bloom_free(filter->filters[i]);
    }
}

/* Appends a new, empty newest sub-filter.  BK_EFULL at max_filters. */
static bk_status grow(bk_scalable *filter)
{
    if (filter->filter_count >= filter->max_filters)
        return BK_EFULL;
    bk_sizing sizing;
    bk_status status = next_level_sizing(filter, &sizing);
    if (status != BK_OK)
        return status;
    if (filter->blocked_stages) {
        status = new_blocked_stage(&sizing, &filter->hasher, NULL, false,
                                   &filter->blocks[filter->filter_count]);
        if (status == BK_OK)
            filter->filter_count++;
        return status;
    }
    bk_bloom *sub;
    status = bk_bloom_create_from_sizing(&sizing, &filter->hasher, 0, NULL, &sub);
    if (status != BK_OK)
        return status;
    filter->filters[filter->filter_count++] = sub;
    return BK_OK;
}

static void ops_destroy(void *object)
{
    bk_scalable *filter = object;
    free_stages(filter, 0);
    memset(&filter->hasher, 0, sizeof filter->hasher); /* do not leave the key behind */
    free(filter);
}

static bk_status ops_create(const bk_params *params, void **out)
{
    chain_params c;
    bk_status status = check_params(params, &c);
    if (status != BK_OK)
        return status;
    bk_hasher hasher;
    status = bk_hasher_from_params(&hasher, params);
    if (status != BK_OK)
        return status;
    bk_scalable *filter = new_chain(&c, &hasher);
    if (filter == NULL)
        return BK_ENOMEM;
    status = grow(filter);
    if (status != BK_OK) {
        ops_destroy(filter);
        return status;
    }
    *out = filter;
    return BK_OK;
}

static bk_status ops_copy(const void *object, void **out)
{
    const bk_scalable *filter = object;
    bk_scalable *copy = calloc(1, sizeof *copy);
    if (copy == NULL)
        return BK_ENOMEM;
    *copy = *filter;
    copy->read_only = false;
    bk_status status = BK_OK;
    if (filter->blocked_stages) {
        /* on failure, copy holds (and ops_destroy frees) the copies made */
        copy->filter_count = 0;
        for (unsigned i = 0; i < filter->filter_count && status == BK_OK; i++) {
            void *stage;
            status = bk_blocked_ops.copy(filter->blocks[i], &stage);
            if (status == BK_OK)
                copy->blocks[copy->filter_count++] = stage;
        }
    } else {
        status = bk_bloom_array_copy(filter->filters, filter->filter_count, copy->filters);
        if (status != BK_OK)
            copy->filter_count = 0; /* the array copy freed its partial copies */
    }
    if (status != BK_OK) {
        ops_destroy(copy);
        return status;
    }
    *out = copy;
    return BK_OK;
}

static bk_status ops_clear(void *object)
{
    bk_scalable *filter = object;
    if (filter->read_only)
        return BK_EIMMUTABLE;
    free_stages(filter, 1);
    filter->keys_added = 0;
    if (filter->blocked_stages)
        return bk_blocked_ops.clear(filter->blocks[0]);
    return bk_bloom_clear(filter->filters[0]);
}

/* ------------------------------------------------------------------------ */
/* The hot path                                                             */
/* ------------------------------------------------------------------------ */

/* Whether sub-filter i reports the key, given the level's hash. */
static inline bool stage_contains(const bk_scalable *filter, unsigned i, bk_hash level_hash)
{
    if (filter->blocked_stages) {
        const bk_blocked *stage = filter->blocks[i];
        return stage->path.contains_hash(stage, level_hash);
    }
    return bk_bloom_contains_hash(filter->filters[i], level_hash);
}

/* Sets the key in sub-filter i; *fresh: whether a bit flipped (the
 * sub-filter then counts the key). */
static inline void stage_add(bk_scalable *filter, unsigned i, bk_hash level_hash, bool *fresh)
{
    if (filter->blocked_stages) {
        bk_blocked *stage = filter->blocks[i];
        *fresh = stage->path.set_bits(stage, level_hash);
        stage->keys_added += *fresh;
    } else {
        bk_bloom_add_hash(filter->filters[i], level_hash, fresh);
    }
}

/* Requests the lines sub-filter i will write for the key. */
static inline void stage_prefetch_for_add(const bk_scalable *filter, unsigned i,
                                          bk_hash level_hash)
{
    if (filter->blocked_stages)
        __builtin_prefetch(bk_blocked_block(filter->blocks[i], level_hash), 1);
    else
        bk_bloom_prefetch_hash(filter->filters[i], level_hash, true);
}

static inline uint64_t stage_keys(const bk_scalable *filter, unsigned i)
{
    return filter->blocked_stages ? filter->blocks[i]->keys_added
                                  : filter->filters[i]->keys_added;
}

static inline uint64_t stage_capacity(const bk_scalable *filter, unsigned i)
{
    return filter->blocked_stages ? filter->blocks[i]->capacity : filter->filters[i]->capacity;
}

static inline double stage_target_fpr(const bk_scalable *filter, unsigned i)
{
    return filter->blocked_stages ? filter->blocks[i]->target_fpr
                                  : filter->filters[i]->target_fpr;
}

static void stage_stats(const bk_scalable *filter, unsigned i, bk_stats *out)
{
    if (filter->blocked_stages)
        bk_blocked_ops.stats(filter->blocks[i], out);
    else
        bk_bloom_stats(filter->filters[i], out);
}

/* Newest first: it holds the largest share of the keys. */
static inline bool chain_contains(const bk_scalable *filter, bk_hash hash)
{
    for (unsigned i = filter->filter_count; i-- > 0;)
        if (stage_contains(filter, i, bk_level_hash(hash, i)))
            return true;
    return false;
}

static inline bool newest_is_full(const bk_scalable *filter)
{
    unsigned newest = filter->filter_count - 1;
    return stage_keys(filter, newest) >= stage_capacity(filter, newest);
}

/* True if a sub-filter older than the newest may hold the key. */
static inline bool older_contain(const bk_scalable *filter, bk_hash hash)
{
    for (unsigned i = filter->filter_count - 1; i-- > 0;)
        if (stage_contains(filter, i, bk_level_hash(hash, i)))
            return true;
    return false;
}

/* One pass over the newest sub-filter: setting the key's bits there flips
 * one exactly when the newest did not hold the key, so the set answers the
 * query too (and the bloom counts the key only then).  Only a full newest
 * sub-filter is queried first, to decide whether a new one must open. */
static bk_status ops_add_hash(void *object, bk_hash hash, bool *was_new)
{
    bk_scalable *filter = object;
    if (filter->read_only)
        return BK_EIMMUTABLE;
    bool fresh = false;
    if (!older_contain(filter, hash)) {
        unsigned level = filter->filter_count - 1;
        bk_hash level_hash = bk_level_hash(hash, level);
        if (newest_is_full(filter) && !stage_contains(filter, level, level_hash)) {
            bk_status status = grow(filter);
            if (status != BK_OK)
                return status;
            level = filter->filter_count - 1;
            level_hash = bk_level_hash(hash, level);
        }
        stage_add(filter, level, level_hash, &fresh);
        filter->keys_added += fresh;
    }
    if (was_new != NULL)
        *was_new = fresh;
    return BK_OK;
}

static bool ops_contains_hash(const void *filter, bk_hash hash)
{
    return chain_contains(filter, hash);
}

static bool ops_contains_key(const void *object, const void *key, size_t len)
{
    const bk_scalable *filter = object;
    return chain_contains(filter, bk_hash_inline(&filter->hasher, key, len));
}

/* The integer-key calls: the hash inline (bk_hash_u64), then as above. */
static bool ops_contains_u64(const void *object, uint64_t key)
{
    const bk_scalable *filter = object;
    return chain_contains(filter, bk_hash_u64(&filter->hasher, key));
}

static bk_status ops_add_u64(void *object, uint64_t key, bool *was_new)
{
    bk_scalable *filter = object;
    return ops_add_hash(filter, bk_hash_u64(&filter->hasher, key), was_new);
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                  */
/* ------------------------------------------------------------------------ */

/* Batches go a chunk of keys at a time.  Adds go in order, stopping at
 * the first error with *new_count counting the keys added before it; the
 * newest sub-filter's lines of key i + ADD_DISTANCE are requested while
 * key i is added, so a chain bigger than the caches overlaps its misses. */
#define BATCH_CHUNK 128
#define ADD_DISTANCE 8

static bk_status ops_add_hash_batch(void *object, const bk_hash *hashes, size_t count,
                                    size_t *new_count)
{
    bk_scalable *filter = object;
    size_t fresh = 0;
    bk_status status = BK_OK;
    for (size_t i = 0; i < count && i < ADD_DISTANCE; i++) {
        unsigned level = filter->filter_count - 1;
        stage_prefetch_for_add(filter, level, bk_level_hash(hashes[i], level));
    }
    for (size_t i = 0; i < count && status == BK_OK; i++) {
        if (i + ADD_DISTANCE < count) {
            unsigned level = filter->filter_count - 1;
            stage_prefetch_for_add(filter, level,
                                   bk_level_hash(hashes[i + ADD_DISTANCE], level));
        }
        bool was_new = false;
        status = ops_add_hash(filter, hashes[i], &was_new);
        fresh += was_new;
    }
    *new_count = fresh;
    return status;
}

/* Queries of one chunk: every key asks the newest sub-filter (the bloom
 * batch query, prefetched), the keys it lacks ask the next older one, and
 * so on -- the answers of chain_contains, sub-filter by sub-filter. */
static size_t contains_chunk(const bk_scalable *filter, const bk_hash *hashes, size_t count,
                             bool *results)
{
    bk_hash level_hashes[BATCH_CHUNK];
    bool found[BATCH_CHUNK];
    uint8_t pending[BATCH_CHUNK]; /* indexes of keys no sub-filter held yet */
    size_t pending_count = count, present = 0;
    for (size_t j = 0; j < count; j++) {
        pending[j] = (uint8_t)j;
        results[j] = false;
    }
    for (unsigned level = filter->filter_count; level-- > 0 && pending_count > 0;) {
        for (size_t j = 0; j < pending_count; j++)
            level_hashes[j] = bk_level_hash(hashes[pending[j]], level);
        if (filter->blocked_stages)
            bk_blocked_ops.contains_hash_batch(filter->blocks[level], level_hashes,
                                               pending_count, found);
        else
            bk_bloom_contains_hash_batch(filter->filters[level], level_hashes, pending_count,
                                         found);
        size_t still = 0;
        for (size_t j = 0; j < pending_count; j++) {
            if (found[j]) {
                results[pending[j]] = true;
                present++;
            } else {
                pending[still++] = pending[j];
            }
        }
        pending_count = still;
    }
    return present;
}

static size_t ops_contains_hash_batch(const void *filter, const bk_hash *hashes, size_t count,
                                      bool *results)
{
    bool chunk_results[BATCH_CHUNK];
    size_t present = 0;
    for (size_t at = 0; at < count; at += BATCH_CHUNK) {
        size_t n = count - at < BATCH_CHUNK ? count - at : BATCH_CHUNK;
        present += contains_chunk(filter, hashes + at, n, chunk_results);
        if (results != NULL)
            memcpy(results + at, chunk_results, n * sizeof *results);
    }
    return present;
}

/* ------------------------------------------------------------------------ */
/* Parameters, fill and statistics                                          */
/* ------------------------------------------------------------------------ */

/* The chain behind a handle, or NULL with *status set: BK_EINVAL for a NULL
 * handle, BK_EKIND for another kind. */
static const bk_scalable *chain_of(const bk_filter *handle, bk_status *status)
{
    const bk_scalable *filter = bk_filter_object_of(handle, BK_KIND_SCALABLE);
    *status = handle == NULL ? BK_EINVAL : filter == NULL ? BK_EKIND : BK_OK;
    return filter;
}

bk_status bk_scalable_sub_count(const bk_filter *handle, size_t *count)
{
    bk_status status;
    const bk_scalable *filter = chain_of(handle, &status);
    if (filter == NULL || count == NULL)
        return filter == NULL ? status : BK_EINVAL;
    *count = filter->filter_count;
    return BK_OK;
}

bk_status bk_scalable_sub_stats(const bk_filter *handle, size_t index, bk_stats *out)
{
    bk_status status;
    const bk_scalable *filter = chain_of(handle, &status);
    if (filter == NULL || out == NULL)
        return filter == NULL ? status : BK_EINVAL;
    if (index >= filter->filter_count)
        return BK_ERANGE;
    stage_stats(filter, (unsigned)index, out);
    return BK_OK;
}

bk_status bk_scalable_fpr_bound(const bk_filter *handle, double *bound)
{
    bk_status status;
    const bk_scalable *filter = chain_of(handle, &status);
    if (filter == NULL || bound == NULL)
        return filter == NULL ? status : BK_EINVAL;
    double none = 1;
    for (unsigned i = 0; i < filter->filter_count; i++)
        none *= 1 - stage_target_fpr(filter, i);
    *bound = 1 - none;
    return BK_OK;
}

bool bk_scalable_level_contains_hash(const bk_scalable *filter, unsigned index, bk_hash hash)
{
    if (index >= filter->filter_count)
        return false;
    return stage_contains(filter, index, bk_level_hash(hash, index));
}

/* True when the next new key would be refused (BK_EFULL, or a sub-filter
 * that cannot be sized). */
static bool cannot_take_new_key(const bk_scalable *filter)
{
    if (!newest_is_full(filter))
        return false;
    bk_sizing sizing;
    return filter->filter_count >= filter->max_filters ||
           next_level_sizing(filter, &sizing) != BK_OK;
}

static void ops_stats(const void *object, bk_stats *out)
{
    const bk_scalable *filter = object;
    bk_stats s;
    memset(&s, 0, sizeof s);
    double bits_set = 0, design_bits_set = 0, none_positive = 1;
    for (unsigned i = 0; i < filter->filter_count; i++) {
        bk_stats sub;
        stage_stats(filter, i, &sub);
        s.bits += sub.bits;
        s.bytes += sub.bytes;
        s.capacity += sub.capacity;
        s.keys_estimated += sub.keys_estimated;
        s.hashes = sub.hashes;
        bits_set += sub.fill_ratio * (double)sub.bits;
        design_bits_set += sub.design_fill_ratio * (double)sub.bits;
        none_positive *= 1 - sub.current_fpr;
    }
    s.kind = BK_KIND_SCALABLE;
    s.target_fpr = filter->target_fpr;
    s.keys_added = filter->keys_added;
    s.fill_ratio = bits_set / (double)s.bits;
    s.design_fill_ratio = design_bits_set / (double)s.bits;
    s.current_fpr = 1 - none_positive;
    s.bits_per_key = (double)s.bits / (double)s.capacity;
    s.past_design_point = cannot_take_new_key(filter);
    s.filters = filter->filter_count;
    s.hash_algorithm = filter->hasher.algorithm;
    s.seed = filter->hasher.seed;
    *out = s;
}

/* ------------------------------------------------------------------------ */
/* The kind's adapter: bk_filter dispatch and the file format               */
/* ------------------------------------------------------------------------ */

/*
 * Parameter block (40 + 32 c + 8 bytes, little-endian; docs/FORMAT.md):
 *     0  u64  initial capacity n0       8  f64  target FPR p (chain bound)
 *    16  f64  expansion s              24  f64  tightening r
 *    32  u32  max sub-filters (1..64)  36  u32  sub-filter count c (1..max)
 *    40  c records of 32 bytes, oldest first:
 *        +0 u64 bits m_i   +8 u32 hashes k_i
 *        +12 u32 sub-filter kind: 0 classic Bloom, 1 blocked (512-bit
 *            blocks, m_i a multiple of 512); the same in every record
 *        +16 u64 capacity n_i   +24 u64 keys in sub-filter i
 *    40 + 32 c  f64  first-stage share q (0 < q < 1)
 * A block of 40 + 32 c bytes (no q) is a chain of the schedule
 * p_i = p (1 - r) r^i, i.e. q = 1 - r; it is written back the same way.
 * Payload: each sub-filter's ceil(m_i/64) little-endian words, in order
 * (a blocked sub-filter's blocks, 8 words each, as the blocked kind writes them),
 * each zero-padded to a multiple of 64 bytes so every sub-filter starts
 * 64-byte aligned (mapped files are queried in place).
 */
#define CHAIN_HEADER_SIZE 40
#define LEVEL_RECORD_SIZE 32
#define SHARE_FIELD_SIZE 8
#define STAGE_CLASSIC 0u
#define STAGE_BLOCKED 1u

static size_t padded_words(uint64_t bits)
{
    return (bk_bloom_words_for_bits(bits) + 7) & ~(size_t)7;
}

static size_t ops_params_size(const void *object)
{
    const bk_scalable *filter = object;
    return CHAIN_HEADER_SIZE + (size_t)LEVEL_RECORD_SIZE * filter->filter_count +
           (filter->share_implicit ? 0 : SHARE_FIELD_SIZE);
}

static void ops_write_params(const void *object, uint8_t *out)
{
    const bk_scalable *filter = object;
    bk_store_le64(out, filter->initial_capacity);
    bk_store_le_double(out + 8, filter->target_fpr);
    bk_store_le_double(out + 16, filter->expansion);
    bk_store_le_double(out + 24, filter->tightening);
    bk_store_le32(out + 32, filter->max_filters);
    bk_store_le32(out + 36, filter->filter_count);
    for (unsigned i = 0; i < filter->filter_count; i++) {
        uint8_t *record = out + CHAIN_HEADER_SIZE + (size_t)LEVEL_RECORD_SIZE * i;
        if (filter->blocked_stages) {
            const bk_blocked *sub = filter->blocks[i];
            bk_store_le64(record, sub->block_count * BK_BLOCKED_BLOCK_BITS);
            bk_store_le32(record + 8, sub->hashes);
            bk_store_le32(record + 12, STAGE_BLOCKED);
        } else {
            const bk_bloom *sub = filter->filters[i];
            bk_store_le64(record, sub->bits);
            bk_store_le32(record + 8, sub->hashes);
            bk_store_le32(record + 12, STAGE_CLASSIC);
        }
        bk_store_le64(record + 16, stage_capacity(filter, i));
        bk_store_le64(record + 24, stage_keys(filter, i));
    }
    if (!filter->share_implicit)
        bk_store_le_double(
            out + CHAIN_HEADER_SIZE + (size_t)LEVEL_RECORD_SIZE * filter->filter_count,
            filter->first_share);
}

static uint64_t ops_payload_size(const void *object)
{
    const bk_scalable *filter = object;
    uint64_t bytes = 0;
    for (unsigned i = 0; i < filter->filter_count; i++)
        bytes += filter->blocked_stages
                     ? filter->blocks[i]->block_count * (BK_BLOCKED_BLOCK_BITS / 8)
                     : (uint64_t)padded_words(filter->filters[i]->bits) * 8;
    return bytes;
}

static void ops_write_payload(const void *object, uint8_t *out)
{
    const bk_scalable *filter = object;
    for (unsigned i = 0; i < filter->filter_count; i++) {
        if (filter->blocked_stages) {
            bk_blocked_ops.write_payload(filter->blocks[i], out);
            out += filter->blocks[i]->block_count * (BK_BLOCKED_BLOCK_BITS / 8);
            continue;
        }
        const bk_bloom *sub = filter->filters[i];
        size_t padded = padded_words(sub->bits);
        bk_store_le64_array(out, sub->words, sub->word_count);
        memset(out + sub->word_count * 8, 0, (padded - sub->word_count) * 8);
        out += padded * 8;
    }
}

typedef struct level_record {
    bk_sizing sizing;
    uint64_t keys;
} level_record;

static bk_status read_chain_header(const uint8_t *params, size_t params_size, chain_params *c,
                                   unsigned *count)
{
    if (params_size < CHAIN_HEADER_SIZE)
        return BK_ECORRUPT;
    c->initial_capacity = bk_load_le64(params);
    c->target_fpr = bk_load_le_double(params + 8);
    c->expansion = bk_load_le_double(params + 16);
    c->tightening = bk_load_le_double(params + 24);
    c->max_filters = bk_load_le32(params + 32);
    *count = bk_load_le32(params + 36);
    if (c->initial_capacity == 0 || !(c->target_fpr > 0 && c->target_fpr < 1) ||
        !(c->expansion >= 1 && c->expansion <= MAX_EXPANSION) ||
        !(c->tightening > 0 && c->tightening < 1) || c->max_filters == 0 ||
        c->max_filters > BK_SCALABLE_MAX_FILTERS || *count == 0 || *count > c->max_filters)
        return BK_ECORRUPT;
    size_t records_end = CHAIN_HEADER_SIZE + (size_t)LEVEL_RECORD_SIZE * *count;
    if (params_size < records_end)
        return BK_ECORRUPT;
    /* the first record's kind is the chain's; read_level checks the others */
    c->blocked_stages = bk_load_le32(params + CHAIN_HEADER_SIZE + 12) == STAGE_BLOCKED;
    c->share_implicit = params_size == records_end;
    if (c->share_implicit) {
        c->first_share = 1 - c->tightening;
        return BK_OK;
    }
    if (params_size != records_end + SHARE_FIELD_SIZE)
        return BK_ECORRUPT;
    c->first_share = bk_load_le_double(params + records_end);
    if (!(c->first_share > 0 && c->first_share < 1))
        return BK_ECORRUPT;
    return BK_OK;
}

/* Reads record i and checks it against the chain: sizes in range, keys
 * within capacity, every sub-filter but the newest exactly full. */
static bk_status read_level(const uint8_t *params, unsigned index, unsigned count,
                            bool blocked_stages, level_record *out)
{
    const uint8_t *record = params + CHAIN_HEADER_SIZE + (size_t)LEVEL_RECORD_SIZE * index;
    uint64_t bits = bk_load_le64(record);
    unsigned hashes = bk_load_le32(record + 8);
    uint64_t capacity = bk_load_le64(record + 16);
    out->keys = bk_load_le64(record + 24);
    uint32_t kind = bk_load_le32(record + 12);
    if (kind != (blocked_stages ? STAGE_BLOCKED : STAGE_CLASSIC) ||
        (blocked_stages && bits % BK_BLOCKED_BLOCK_BITS != 0) || bits == 0 || hashes == 0 ||
        capacity == 0 || out->keys > capacity || (index + 1 < count && out->keys != capacity))
        return BK_ECORRUPT;
    if (bits > BK_MAX_BITS || hashes > BK_MAX_HASHES || capacity > BK_MAX_BITS)
        return BK_ERANGE;
    return bk_size_explicit(capacity, bits, hashes, &out->sizing);
}

static bool padding_clear(const uint8_t *payload, size_t used_bytes, size_t padded_bytes)
{
    for (size_t i = used_bytes; i < padded_bytes; i++)
        if (payload[i] != 0)
            return false;
    return true;
}

/* Loads sub-filter `sub` from its slice of the payload. */
/* Loads blocked stage from its slice of the payload. */
static bk_status read_blocked_stage(const level_record *record, const uint8_t *slice,
                                    const bk_hasher *hasher, bool in_place, bk_blocked **out)
{
    bk_status status = new_blocked_stage(&record->sizing, hasher, slice, in_place, out);
    if (status == BK_OK)
        (*out)->keys_added = record->keys;
    return status;
}

static bk_status read_sub_filter(const level_record *record, const uint8_t *slice,
                                 const bk_hasher *hasher, bool in_place, bk_bloom **out)
{
    size_t words = bk_bloom_words_for_bits(record->sizing.bits);
    uint64_t last;
    bk_load_le64_array(&last, slice + (words - 1) * 8, 1);
    unsigned used = (unsigned)(record->sizing.bits & 63);
    if ((used != 0 && (last >> used) != 0) ||
        !padding_clear(slice, words * 8, padded_words(record->sizing.bits) * 8))
        return BK_ECORRUPT;
    uint64_t *borrowed = in_place ? (uint64_t *)(uintptr_t)slice : NULL;
    bk_bloom *sub;
    bk_status status = bk_bloom_create_from_sizing(&record->sizing, hasher, 0, borrowed, &sub);
    if (status != BK_OK)
        return status;
    if (!in_place)
        bk_load_le64_array(sub->words, slice, words);
    sub->keys_added = record->keys;
    *out = sub;
    return BK_OK;
}

/* |a - b| <= slack */
static bool within(uint64_t a, uint64_t b, uint64_t slack)
{
    return a > b ? a - b <= slack : b - a <= slack;
}

/* Sub-filter `level` is the one grow() makes for the chain `c`: its
 * capacity n0 s^i, and m and k of bk_size_for_fpr_at_most at p (1-r) r^i.
 * The next sub-filter is sized from the same rule, so a chain whose
 * records disagree with its header (a huge n0 over a tiny first
 * sub-filter) would make its next add allocate what no payload justified.
 * The comparison leaves room for the last bits of floating point that
 * another C library may round differently: capacity and k within 1, m
 * within one part in 10^6 (plus one word). */
static bk_status check_level_design(const chain_params *c, unsigned level,
                                    const bk_sizing *stored)
{
    bk_sizing expected;
    if (level_sizing(c, level, &expected) != BK_OK)
        return BK_ECORRUPT;
    if (!within(stored->capacity, expected.capacity, 1) ||
        !within(stored->hashes, expected.hashes, 1) ||
        !within(stored->bits, expected.bits,
                expected.bits / 1000000 + (c->blocked_stages ? BK_BLOCKED_BLOCK_BITS : 64)))
        return BK_ECORRUPT;
    return BK_OK;
}

static bk_status check_levels(const uint8_t *params, const chain_params *c, unsigned count,
                              uint64_t payload_size, uint64_t keys_added, level_record *records)
{
    uint64_t bytes = 0, keys = 0;
    for (unsigned i = 0; i < count; i++) {
        bk_status status = read_level(params, i, count, c->blocked_stages, &records[i]);
        if (status == BK_OK)
            status = check_level_design(c, i, &records[i].sizing);
        if (status != BK_OK)
            return status;
        bytes += (uint64_t)padded_words(records[i].sizing.bits) * 8;
        keys += records[i].keys;
    }
    if (bytes != payload_size || keys != keys_added)
        return BK_ECORRUPT;
    return BK_OK;
}

static bk_status ops_read(const uint8_t *params, size_t params_size, const uint8_t *payload,
                          uint64_t payload_size, const bk_hasher *hasher, uint64_t keys_added,
                          bool in_place, void **out)
{
    chain_params c;
    unsigned count;
    bk_status status = read_chain_header(params, params_size, &c, &count);
    if (status != BK_OK)
        return status;
    level_record records[BK_SCALABLE_MAX_FILTERS];
    status = check_levels(params, &c, count, payload_size, keys_added, records);
    if (status != BK_OK)
        return status;
    bk_scalable *filter = new_chain(&c, hasher);
    if (filter == NULL)
        return BK_ENOMEM;
    filter->keys_added = keys_added;
    filter->read_only = in_place;
    for (unsigned i = 0; i < count; i++) {
        status =
            c.blocked_stages
                ? read_blocked_stage(&records[i], payload, hasher, in_place, &filter->blocks[i])
                : read_sub_filter(&records[i], payload, hasher, in_place, &filter->filters[i]);
        if (status != BK_OK) {
            ops_destroy(filter);
            return status;
        }
        filter->filter_count++;
        payload += padded_words(records[i].sizing.bits) * 8;
    }
    *out = filter;
    return BK_OK;
}

static const bk_hasher *ops_hasher(const void *filter)
{
    return &((const bk_scalable *)filter)->hasher;
}

static bool ops_past_design_point(const void *filter) { return cannot_take_new_key(filter); }

/* The design of the first sub-filter, with the chain's bound as target. */
static bk_status ops_design(const bk_params *params, bk_stats *out)
{
    chain_params c;
    bk_status status = check_params(params, &c);
    if (status != BK_OK)
        return status;
    bk_sizing sizing;
    status = level_sizing(&c, 0, &sizing);
    if (status != BK_OK)
        return status;
    memset(out, 0, sizeof *out);
    out->kind = BK_KIND_SCALABLE;
    out->bits = sizing.bits;
    out->hashes = sizing.hashes;
    out->bytes = c.blocked_stages ? sizing.bits / 8
                                  : (uint64_t)bk_bloom_words_for_bits(sizing.bits) * 8;
    out->capacity = sizing.capacity;
    out->target_fpr = c.target_fpr;
    out->bits_per_key = sizing.bits_per_key;
    out->design_fill_ratio = sizing.design_fill_ratio;
    out->filters = 1;
    out->hash_algorithm = params->hash_algorithm;
    return BK_OK;
}

const bk_kind_ops bk_scalable_ops = {
    .kind = BK_KIND_SCALABLE,
    .name = "scalable",
    .kind_flags = BK_FLAG_BLOCKED_STAGES,
    .create = ops_create,
    .destroy = ops_destroy,
    .copy = ops_copy,
    .clear = ops_clear,
    .hasher = ops_hasher,
    .add_hash = ops_add_hash,
    .contains_hash = ops_contains_hash,
    .contains_key = ops_contains_key,
    .contains_u64 = ops_contains_u64,
    .add_u64 = ops_add_u64,
    .add_hash_batch = ops_add_hash_batch,
    .contains_hash_batch = ops_contains_hash_batch,
    .stats = ops_stats,
    .design = ops_design,
    .params_size = ops_params_size,
    .write_params = ops_write_params,
    .payload_size = ops_payload_size,
    .write_payload = ops_write_payload,
    .read = ops_read,
    .past_design_point = ops_past_design_point,
};
