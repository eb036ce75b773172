/*
 * src/window.c -- the sliding-window filter: a ring of g Bloom filters
 * ("generations") that rotate, so keys older than the window age out.
 *
 * The idea.  A Bloom filter cannot forget one key, but it can forget all
 * of them at once (clear).  Cut the stream into spans of S events and give
 * each span its own filter; keep the filters of the g most recent spans and
 * clear the oldest when a new span starts: the segmented sliding window
 * that Shtul, Baquero & Almeida ("Age-Partitioned Bloom Filters",
 * arXiv:2001.03147, 2020) start from.  Time-based windows follow the same
 * scheme with spans of S seconds, the caller passing the clock (compare the
 * Time-limited Bloom filter, Rodrigues et al., SAC 2023).
 *
 * The cell layout (g <= 4).  The g generations are blocked filters that
 * share their blocks: a key picks one 64-byte line, bk_reduce(h1, lines),
 * and k cells in it; a cell is c bits (c = 2 or 4, the power of two >= g),
 * and bit j of every cell belongs to ring slot j.  Generation j is
 * thus a blocked filter of 512/c-bit blocks, and all g of them answer from
 * the same line with one AND:
 *
 *     one line, c = 4 (g = 4):  128 cells of 4 bits
 *     word 0: [c15 ... c1 c0]   cell = slot3 slot2 slot1 slot0
 *     query:  m = cell[x1] & cell[x2] & ... & cell[xk] & live_slots
 *             present <=> m != 0
 *
 * An add sets bit `slot` of its k cells; starting a span clears bit `slot`
 * of every cell (one pass over the lines, once per S events).  The cells'
 * positions are b-bit slices of h2 (b = log2(512/c)), then of bk_mix64(h2),
 * bk_mix64(bk_mix64(h2)), ...  All generations share the positions, so
 * their false positives are correlated and the union bound is used:
 * each generation is sized by the blocked model (src/sizing.c,
 * bk_blocked_bits_per_key_for_fpr at 512/c-bit blocks) for its capacity at
 * p/g, and P(false positive) <= g (p/g) = p.  Unused cell bits (g < c) stay
 * zero.  With 4-bit cells and k <= 8 the query runs with AVX2 where the CPU
 * has it (src/window_avx2.c, the same answers as the portable walk).
 * Windows of more than 4 generations, and files written before the cell
 * layout, use the ring layout: g classic bk_bloom filters, generation
 * j probing with bk_level_hash(hash, j) (src/level_hash.h), each at
 * p_g = 1 - (1 - p)^{1/g}.
 *
 * Why this layout.  Both designs were prototyped at W = 10^6 and 10^7,
 * p = 1%, g = 4, one key per call (figures: docs/PERFORMANCE.md):
 *   - Age-partitioned slices (k + l slices of m bits, an insert setting one
 *     bit in each of the k newest, a query looking for k consecutive set
 *     slices; best k = 11, l = 46 at 1%) need 19.7 bits per key of the
 *     window against the cells' 20.6, but a query probes up to k + l = 57
 *     slices in different lines: 6-26 times slower than the cells, so it
 *     was not taken.
 *   - The ring of classic filters needs 16.6 bits per key (g = 4) but a
 *     query reads up to g filters of k probes each; it stays for g > 4,
 *     where 8-bit cells would leave 64-bit blocks per generation (25.7
 *     bits per key at g = 8 against the rings' 15.9).
 * Neither design comes within 1.3x of one blocked filter of W keys
 * (9.92 bits per key at 1%): the g/(g-1) span that is always partly stale
 * and the split of p between generations cost 2.07x in the cells (g = 4;
 * 2.42x at g = 2, 2.90x at g = 3 whose cells waste a bit).
 *
 * The clock.  Every event has a clock value c: for an insertion window the
 * index of the insertion (0, 1, 2, ...: every add counts, repeats too); for
 * a time window the caller's timestamp, never going back (an earlier one is
 * taken as the latest one).  The span (epoch) of c is e = floor(c / S).
 * Epoch e lives in ring slot e mod g.
 *
 *     ring slot:   0          1          2          3        (g = 4)
 *     epoch:     [ 8 ]      [ 9 ]      [ 10 ]     [ 7 ]
 *                 full       full      current    oldest: cleared and
 *                                      <- adds    reused for epoch 11
 *
 * A query at clock c reads the slots whose epoch x satisfies c/S - g < x <=
 * c/S (at most g of them).  Adding at clock c first clears the slots of the
 * epochs that c leaves behind, then sets the key in slot (c/S) mod g.
 *
 * Guarantees (age a = c - t for a key last added at clock t):
 *   - found whenever a < (g-1) S: floor(c/S) - floor(t/S) < a/S + 1 < g,
 *     so the key's epoch is still read.  With S = ceil(L/(g-1)), (g-1) S >=
 *     L, so every key of the window (a < L) is found: no false negatives.
 *   - gone whenever a >= g S: floor(c/S) - floor(t/S) > a/S - 1 >= g - 1,
 *     so its slot has been cleared or is no longer read.  Between (g-1) S
 *     and g S it depends on where t and c fall in their spans; g S <=
 *     L g/(g-1) + g: keys linger at most 1/(g-1) of a window (plus rounding).
 *   - FPR at most p while no generation holds more than its capacity
 *     ceil(n S / L) (above).
 *
 * Costs: an add reads and sets the key's k cells in one walk of its line
 * (the cells' AND, before the set, reports was_new), or on the ring probes
 * every live generation and sets k bits in one; a query reads one line
 * (cells) or up to g generations (rings).  An add is about 260
 * instructions with MIX64 keys, k = 7: a one-key add cannot overlap the
 * next one's line miss much further than the core's reorder window
 * reaches, so its instruction count is its speed once the filter leaves
 * the cache (docs/PERFORMANCE.md).
 *
 * Measured (gcc 12 -O2, XXH3 seed 0; W = 100,000, g = 4, p = 0.01;
 * 1,000,000 keys "user:%u" streamed through, then 1,000,000 keys
 * "guest:%u" never added queried; tests/test_window.c):
 *     cells: measured FPR 0.00970 (bound p = 0.01; from the fill 0.00997),
 *     the last 100,000 keys all found, 20.56 bits per key of the window
 *     (k = 7, 128-bit blocks per generation); rings: FPR 0.00999, 16.6
 *     bits per key; a blocked filter of 100,000 keys at 1%: 9.92.
 */
#include "window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bloom.h"
#include "cpu.h"
#include "endian.h"
#include "filter.h"
#include "hash.h"
#include "level_hash.h"
#include "memory.h"
#include "prefetch.h"

#define EMPTY_EPOCH UINT64_MAX
/* The latest clock value an event may have: 2^64 - 1 is refused (a time
 * window's timestamp, or an insertion window's 2^64-th add), so that no
 * epoch ever equals EMPTY_EPOCH. */
#define MAX_CLOCK (UINT64_MAX - 1)

/* The two layouts of the generations (the parameter block's `layout`). */
#define LAYOUT_RINGS 0 /* g classic Bloom filters (g > 4, and older files) */
#define LAYOUT_CELLS 1 /* one cache line per key, a g-bit cell per probe */
#define CELLS_MAX_GENERATIONS 4u
#define LINE_BITS 512u
#define LINE_WORDS 8u

struct bk_window {
    unsigned layout;
    /* LAYOUT_RINGS: one classic filter per ring slot */
    bk_bloom *generations[BK_WINDOW_MAX_GENERATIONS];
    /* LAYOUT_CELLS: lines of 512 bits, cells of c bits, bit j of a cell
     * belonging to ring slot j */
    uint64_t *words;
    uint64_t lines;
    unsigned cell_bits; /* c = 2 or 4, the power of two >= g */
    unsigned hashes;    /* k cells per key */
    uint64_t generation_capacity;
    uint64_t slot_keys[BK_WINDOW_MAX_GENERATIONS]; /* keys each slot counts */
    unsigned live_slots;                           /* bit j: slot j is read at the clock */
    bool avx2_cells;                               /* queries take bk_window_cells4_mask_avx2 */

    uint64_t epochs[BK_WINDOW_MAX_GENERATIONS]; /* epoch held, or EMPTY_EPOCH */
    unsigned generation_count;                  /* g */
    bool timed;            /* clock = caller's seconds, else insertion index */
    uint64_t length;       /* L: W insertions or T seconds */
    uint64_t span;         /* S = ceil(L / (g-1)) */
    uint64_t capacity;     /* n: distinct keys per window */
    double target_fpr;     /* p */
    bool started;          /* an event has set the clock */
    uint64_t clock;        /* clock value of the latest event */
    uint64_t epoch_start;  /* once started: the first clock of the clock's epoch */
    unsigned current_slot; /* once started: the clock's ring slot */
    uint64_t keys_added;
    bk_hasher hasher;
    bool read_only; /* generations read a mapped file in place */
};

/* ------------------------------------------------------------------------ */
/* The window's design                                                      */
/* ------------------------------------------------------------------------ */

typedef struct window_design {
    bool timed;
    unsigned layout;
    uint64_t length, span, capacity, generation_capacity;
    unsigned generation_count;
    double target_fpr;
    bk_sizing sizing; /* one generation (LAYOUT_RINGS) */
    uint64_t lines;   /* LAYOUT_CELLS: cache lines and cells per key */
    unsigned hashes;
} window_design;

/* c: the cell width of LAYOUT_CELLS, the power of two >= g. */
static unsigned cell_bits_for(unsigned generations) { return generations <= 2 ? 2 : 4; }

static unsigned cells_per_line(unsigned cell_bits) { return LINE_BITS / cell_bits; }

/* LAYOUT_CELLS: each generation is a blocked filter whose blocks are the
 * 512 / c cells of one line, sized by src/sizing.c's blocked model for its
 * capacity at p / g (the union bound over the g generations). */
static bk_status design_cells(window_design *d)
{
    unsigned block_bits = cells_per_line(cell_bits_for(d->generation_count));
    double bits_per_key;
    unsigned hashes;
    bk_status status = bk_blocked_bits_per_key_for_fpr(d->target_fpr / d->generation_count,
                                                       block_bits, &bits_per_key, &hashes);
    if (status != BK_OK)
        return status == BK_EINVAL ? BK_ERANGE : status;
    double lines = ceil((double)d->generation_capacity * bits_per_key / block_bits);
    if (!(lines * LINE_BITS <= (double)BK_MAX_BITS))
        return BK_ERANGE;
    d->lines = lines < 1 ? 1 : (uint64_t)lines;
    d->hashes = hashes;
    return BK_OK;
}

/* ceil(n S / L) without overflow (S <= L, so the result is <= n). */
static uint64_t generation_capacity(uint64_t capacity, uint64_t span, uint64_t length)
{
    unsigned __int128 product = (unsigned __int128)capacity * span;
    return (uint64_t)((product + length - 1) / length);
}

/* p_g = 1 - (1 - p)^{1/g}: g generations at p_g give p. */
static double generation_fpr(double target_fpr, unsigned generations)
{
    return -expm1(log1p(-target_fpr) / generations);
}

static bk_status design_window(const bk_params *params, window_design *out)
{
    if (params->bits != 0 || params->hashes != 0 || params->bits_per_key != 0)
        return BK_EINVAL;
    if ((params->window_keys == 0) == (params->window_seconds == 0))
        return BK_EINVAL; /* exactly one of the two */
    window_design d;
    d.timed = params->window_seconds != 0;
    d.length = d.timed ? params->window_seconds : params->window_keys;
    d.capacity = params->capacity != 0 ? params->capacity : d.timed ? 0 : d.length;
    d.generation_count = params->generations == 0 ? BK_WINDOW_DEFAULT_GENERATIONS
                                                  : params->generations;
    d.target_fpr = params->fpr == 0 ? 0.01 : params->fpr;
    if (d.capacity == 0 || d.generation_count < 2 ||
        d.generation_count > BK_WINDOW_MAX_GENERATIONS ||
        !(d.target_fpr > 0 && d.target_fpr < 1))
        return BK_EINVAL;
    d.span = d.length / (d.generation_count - 1) + (d.length % (d.generation_count - 1) != 0);
    d.generation_capacity = generation_capacity(d.capacity, d.span, d.length);
    d.layout = d.generation_count <= CELLS_MAX_GENERATIONS ? LAYOUT_CELLS : LAYOUT_RINGS;
    if (d.layout == LAYOUT_CELLS) {
        bk_status status = design_cells(&d);
        if (status == BK_OK)
            *out = d;
        return status;
    }
    bk_status status = bk_size_for_fpr_at_most(
        d.generation_capacity, generation_fpr(d.target_fpr, d.generation_count), &d.sizing);
    if (status != BK_OK)
        return status == BK_EINVAL ? BK_ERANGE : status;
    if ((unsigned __int128)d.sizing.bits * d.generation_count > BK_MAX_BITS)
        return BK_ERANGE;
    *out = d;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

static bk_window *new_window(const window_design *d, const bk_hasher *hasher)
{
    bk_window *filter = calloc(1, sizeof *filter);
    if (filter == NULL)
        return NULL;
    filter->timed = d->timed;
    filter->layout = d->layout;
    filter->generation_count = d->layout == LAYOUT_CELLS ? d->generation_count : 0;
    filter->cell_bits = cell_bits_for(d->generation_count);
    filter->lines = d->lines;
    filter->hashes = d->hashes;
#ifdef BK_HAVE_AVX2_SOURCES
    filter->avx2_cells = d->layout == LAYOUT_CELLS && filter->cell_bits == 4 && d->hashes <= 8 &&
                         bk_cpu()->avx2;
#endif
    filter->generation_capacity = d->generation_capacity;
    filter->length = d->length;
    filter->span = d->span;
    filter->capacity = d->capacity;
    filter->target_fpr = d->target_fpr;
    filter->hasher = *hasher;
    for (unsigned i = 0; i < BK_WINDOW_MAX_GENERATIONS; i++)
        filter->epochs[i] = EMPTY_EPOCH;
    return filter;
}

static size_t cells_bytes(const bk_window *filter) { return (size_t)filter->lines * 64; }

static void ops_destroy(void *object)
{
    bk_window *filter = object;
    if (filter->layout == LAYOUT_RINGS)
        bk_bloom_array_free(filter->generations, filter->generation_count);
    else if (!filter->read_only && filter->words != NULL)
        bk_free_zeroed(filter->words, cells_bytes(filter));
    memset(&filter->hasher, 0, sizeof filter->hasher); /* do not leave the key behind */
    free(filter);
}

static bk_status ops_create(const bk_params *params, void **out)
{
    window_design d;
    bk_status status = design_window(params, &d);
    if (status != BK_OK)
        return status;
    bk_hasher hasher;
    status = bk_hasher_from_params(&hasher, params);
    if (status != BK_OK)
        return status;
    bk_window *filter = new_window(&d, &hasher);
    if (filter == NULL)
        return BK_ENOMEM;
    if (d.layout == LAYOUT_CELLS) {
        filter->words = bk_alloc_zeroed(cells_bytes(filter));
        if (filter->words == NULL) {
            ops_destroy(filter);
            return BK_ENOMEM;
        }
        *out = filter;
        return BK_OK;
    }
    for (unsigned i = 0; i < d.generation_count; i++) {
        status = bk_bloom_create_from_sizing(&d.sizing, &hasher, 0, NULL,
                                             &filter->generations[i]);
        if (status != BK_OK) {
            ops_destroy(filter);
            return status;
        }
        filter->generation_count++;
    }
    *out = filter;
    return BK_OK;
}

static bk_status ops_copy(const void *object, void **out)
{
    const bk_window *filter = object;
    bk_window *copy = calloc(1, sizeof *copy);
    if (copy == NULL)
        return BK_ENOMEM;
    *copy = *filter;
    copy->read_only = false;
    if (filter->layout == LAYOUT_CELLS) {
        copy->words = bk_alloc_zeroed(cells_bytes(filter));
        if (copy->words == NULL) {
            free(copy);
            return BK_ENOMEM;
        }
        memcpy(copy->words, filter->words, cells_bytes(filter));
        *out = copy;
        return BK_OK;
    }
    bk_status status = bk_bloom_array_copy(filter->generations, filter->generation_count,
                                           copy->generations);
    if (status != BK_OK) {
        copy->generation_count = 0;
        ops_destroy(copy);
        return status;
    }
    *out = copy;
    return BK_OK;
}

static bk_status ops_clear(void *object)
{
    bk_window *filter = object;
    if (filter->read_only)
        return BK_EIMMUTABLE;
    for (unsigned i = 0; i < filter->generation_count; i++) {
        if (filter->layout == LAYOUT_RINGS)
            bk_bloom_clear(filter->generations[i]);
        filter->epochs[i] = EMPTY_EPOCH;
        filter->slot_keys[i] = 0;
    }
    if (filter->layout == LAYOUT_CELLS)
        memset(filter->words, 0, cells_bytes(filter));
    filter->live_slots = 0;
    filter->started = false;
    filter->clock = 0;
    filter->keys_added = 0;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* The clock and the ring                                                   */
/* ------------------------------------------------------------------------ */

/* The clock value a query or a timestamp-less add refers to, and the one an
 * add at `now` gets (never before the latest event). */
static uint64_t clock_at(const bk_window *filter, uint64_t now)
{
    if (!filter->started)
        return now;
    return now > filter->clock ? now : filter->clock;
}

static uint64_t next_insertion_clock(const bk_window *filter)
{
    return filter->started ? filter->clock + 1 : 0;
}

/* Slot `slot` holds an epoch that a query at `epoch` reads. */
static inline bool slot_live(const bk_window *filter, unsigned slot, uint64_t epoch)
{
    uint64_t held = filter->epochs[slot];
    return held != EMPTY_EPOCH && held <= epoch && epoch - held < filter->generation_count;
}

/* The slots a query at `epoch` reads, as a bit mask. */
static unsigned live_slots_at(const bk_window *filter, uint64_t epoch)
{
    unsigned live = 0;
    for (unsigned slot = 0; slot < filter->generation_count; slot++)
        live |= (unsigned)slot_live(filter, slot, epoch) << slot;
    return live;
}

/* The word pattern with bit j of every c-bit cell set, for each j in `slots`. */
static uint64_t cell_pattern(unsigned cell_bits, unsigned slots)
{
    uint64_t one_cell = slots, pattern = 0;
    for (unsigned shift = 0; shift < 64; shift += cell_bits)
        pattern |= one_cell << shift;
    return pattern;
}

/* LAYOUT_CELLS: empties the generations of `slots` in one pass. */
static void clear_cell_slots(bk_window *filter, unsigned slots)
{
    uint64_t keep = ~cell_pattern(filter->cell_bits, slots);
    for (size_t i = 0; i < (size_t)filter->lines * LINE_WORDS; i++)
        filter->words[i] &= keep;
}

/* LAYOUT_CELLS probes.  The key's line is bk_reduce(h1, lines); its k cells
 * are b-bit slices of h2 (b = log2 of the cells per line: 8 or 7), low
 * bits first, then of bk_mix64(h2), bk_mix64(bk_mix64(h2)), ... when h2
 * runs out.  cells_walk returns the AND of the k cells in `line` as it
 * read them: bit j is set when generation j holds all of the key's bits;
 * with `set` it also sets the key's bit of generation `slot` in each cell
 * (an add: each word read once per cell, for the probe and the set).
 * Inlined with the width and `set` constants, so each use gets straight
 * code; the cells one 64-bit value gives are read without a branch
 * between them. */
static inline __attribute__((always_inline)) unsigned cells_walk(uint64_t *line, uint64_t h2,
                                                                 unsigned k,
                                                                 const unsigned cell_bits,
                                                                 const bool set, unsigned slot)
{
    const unsigned width = cell_bits == 2 ? 8 : 7; /* log2 of the cells a line */
    const unsigned per_word_log = width - 3;       /* log2(64 / c): cells a word */
    uint64_t state = h2, stream = state, all = ~(uint64_t)0;
    unsigned first = k < 64 / width ? k : 64 / width;
    for (unsigned i = 0; i < k;) {
        for (unsigned j = 0; j < first; j++, i++) {
            unsigned cell = (unsigned)stream & ((1u << width) - 1);
            stream >>= width;
            uint64_t *word = &line[cell >> per_word_log];
            unsigned shift = (cell & ((1u << per_word_log) - 1)) * cell_bits;
            uint64_t value = *word;
            all &= value >> shift;
            if (set)
                *word = value | (uint64_t)1 << (shift + slot);
        }
        if (i == k)
            break;
        state = bk_mix64(state);
        stream = state;
        first = k - i < 64 / width ? k - i : 64 / width;
    }
    return (unsigned)all & ((1u << cell_bits) - 1);
}

/* The query's walk: nothing is written through `line`. */
static inline __attribute__((always_inline)) unsigned
cells_and(const uint64_t *line, uint64_t h2, unsigned k, const unsigned cell_bits)
{
    return cells_walk((uint64_t *)line, h2, k, cell_bits, false, 0);
}

unsigned bk_window_cells4_mask_portable(const uint64_t *line, uint64_t h2, unsigned hashes)
{
    return cells_and(line, h2, hashes, 4);
}

/* The portable cell query, out of line so that the AVX2 caller stays small. */
static BK_NOINLINE unsigned cells_and_portable(const uint64_t *line, uint64_t h2, unsigned k,
                                               unsigned cell_bits)
{
    return cell_bits == 2 ? cells_and(line, h2, k, 2) : cells_and(line, h2, k, 4);
}

/* The key's line (LAYOUT_CELLS). */
static inline const uint64_t *cells_line(const bk_window *filter, uint64_t h1)
{
    return filter->words + bk_reduce(h1, filter->lines) * LINE_WORDS;
}

/* Bit j set: generation j holds all of the key's bits in its line. */
static inline unsigned line_cells_mask(const bk_window *filter, const uint64_t *line,
                                       uint64_t h2)
{
#ifdef BK_HAVE_AVX2_SOURCES
    if (filter->avx2_cells)
        return bk_window_cells4_mask_avx2(line, h2, filter->hashes);
#endif
    return cells_and_portable(line, h2, filter->hashes, filter->cell_bits);
}

static inline unsigned cell_probe_mask(const bk_window *filter, bk_hash hash)
{
    return line_cells_mask(filter, cells_line(filter, hash.h1), hash.h2);
}

/* The add's probe and set (cells_walk): the cells' AND before the add, as
 * cell_probe_mask answers. */
static unsigned cell_probe_and_set(bk_window *filter, bk_hash hash, unsigned slot)
{
    uint64_t *line = (uint64_t *)cells_line(filter, hash.h1);
    if (filter->cell_bits == 4)
        return cells_walk(line, hash.h2, filter->hashes, 4, true, slot);
    return cells_walk(line, hash.h2, filter->hashes, 2, true, slot);
}

/* Records the epoch of the clock (after it was set): its first clock and
 * slot, so that events within the epoch need no division. */
static void note_epoch(bk_window *filter)
{
    uint64_t epoch = filter->clock / filter->span;
    filter->epoch_start = epoch * filter->span;
    filter->current_slot = (unsigned)(epoch % filter->generation_count);
}

/* Moves the clock to `clock` (>= the latest) in a new epoch, or the first
 * event's, clearing the slots of the epochs it passes: at most g of them. */
static BK_NOINLINE void advance_to_new_epoch(bk_window *filter, uint64_t clock)
{
    uint64_t epoch = clock / filter->span;
    uint64_t g = filter->generation_count;
    uint64_t first = filter->started ? filter->clock / filter->span + 1 : epoch;
    if (epoch >= g && first < epoch - (g - 1))
        first = epoch - (g - 1);
    unsigned cleared = 0;
    for (uint64_t x = first; x <= epoch && x >= first; x++) {
        unsigned slot = (unsigned)(x % g);
        if (filter->layout == LAYOUT_RINGS)
            bk_bloom_clear(filter->generations[slot]);
        else
            cleared |= 1u << slot;
        filter->epochs[slot] = x;
        filter->slot_keys[slot] = 0;
    }
    if (cleared != 0)
        clear_cell_slots(filter, cleared);
    filter->clock = clock;
    filter->started = true;
    note_epoch(filter);
    if (filter->layout == LAYOUT_CELLS)
        filter->live_slots = live_slots_at(filter, epoch);
}

/* Moves the clock to `clock` (>= the latest): within the epoch nothing to
 * clear (once per S events the slow path). */
static inline void advance_to(bk_window *filter, uint64_t clock)
{
    if (__builtin_expect(filter->started && clock - filter->epoch_start < filter->span, 1))
        filter->clock = clock;
    else
        advance_to_new_epoch(filter, clock);
}

static bool contains_at_clock(const bk_window *filter, bk_hash hash, uint64_t clock)
{
    if (!filter->started)
        return false;
    if (filter->layout == LAYOUT_CELLS) {
        unsigned live = clock == filter->clock ? filter->live_slots
                                               : live_slots_at(filter, clock / filter->span);
        return (cell_probe_mask(filter, hash) & live) != 0;
    }
    uint64_t epoch = clock / filter->span;
    for (unsigned slot = 0; slot < filter->generation_count; slot++)
        if (slot_live(filter, slot, epoch) &&
            bk_bloom_contains_hash(filter->generations[slot], bk_level_hash(hash, slot)))
            return true;
    return false;
}

/* The add itself, at a clock already validated (>= the latest). */
static void add_at_clock(bk_window *filter, bk_hash hash, uint64_t clock, bool *was_new)
{
    advance_to(filter, clock);
    unsigned slot = filter->current_slot;
    bool present;
    if (filter->layout == LAYOUT_RINGS) {
        present = contains_at_clock(filter, hash, clock);
        bk_bloom_add_hash(filter->generations[slot], bk_level_hash(hash, slot), NULL);
    } else {
        unsigned held = cell_probe_and_set(filter, hash, slot);
        present = (held & filter->live_slots) != 0;
        filter->slot_keys[slot] += !((held >> slot) & 1);
    }
    if (!present)
        filter->keys_added = bk_saturating_add(filter->keys_added, 1);
    if (was_new != NULL)
        *was_new = !present;
}

/* ------------------------------------------------------------------------ */
/* Operations                                                               */
/* ------------------------------------------------------------------------ */

/* An insertion window counts the add; a time window stamps it with the
 * latest timestamp seen (bk_filter_advance_clock moves it). */
static bk_status ops_add_hash(void *object, bk_hash hash, bool *was_new)
{
    bk_window *filter = object;
    if (filter->read_only)
        return BK_EIMMUTABLE;
    if (!filter->timed && filter->started && filter->clock >= MAX_CLOCK)
        return BK_EFULL; /* 2^64 - 1 insertions: the clock cannot move on */
    uint64_t clock = filter->timed ? clock_at(filter, 0) : next_insertion_clock(filter);
    add_at_clock(filter, hash, clock, was_new);
    return BK_OK;
}

/* A query at the latest clock: on the cell layout one line and the live
 * slots cached by advance_to (none before the first event). */
static inline bool contains_now(const bk_window *filter, bk_hash hash)
{
    if (filter->layout == LAYOUT_CELLS)
        return (cell_probe_mask(filter, hash) & filter->live_slots) != 0;
    return contains_at_clock(filter, hash, filter->clock);
}

static bool ops_contains_hash(const void *object, bk_hash hash)
{
    return contains_now(object, hash);
}

static bool ops_contains_key(const void *object, const void *key, size_t len)
{
    const bk_window *filter = object;
    return contains_now(filter, bk_hash_inline(&filter->hasher, key, len));
}

/* The integer-key calls: the hash inline (bk_hash_u64), then as above. */
static bool ops_contains_u64(const void *object, uint64_t key)
{
    const bk_window *filter = object;
    return contains_now(filter, bk_hash_u64(&filter->hasher, key));
}

static bk_status ops_add_u64(void *object, uint64_t key, bool *was_new)
{
    bk_window *filter = object;
    return ops_add_hash(filter, bk_hash_u64(&filter->hasher, key), was_new);
}

/* Only a time window has a clock the caller sets. */
static bk_status ops_advance_clock(void *object, uint64_t now)
{
    bk_window *filter = object;
    if (!filter->timed)
        return BK_EUNSUPPORTED;
    if (now == UINT64_MAX)
        return BK_ERANGE; /* its epoch could collide with EMPTY_EPOCH */
    if (filter->read_only)
        return BK_EIMMUTABLE;
    advance_to(filter, clock_at(filter, now));
    return BK_OK;
}

/* Adds in order, stopping at the first error with *new_count counting the
 * keys reported new before it.  On the cell layout the line of the key
 * BK_ADD_PREFETCH_DISTANCE ahead is requested (for writing) before each
 * add, so the lines of a batch arrive together rather than one by one. */
static bk_status ops_add_hash_batch(void *object, const bk_hash *hashes, size_t count,
                                    size_t *new_count)
{
    bk_window *filter = object;
    bool cells = filter->layout == LAYOUT_CELLS;
    size_t fresh = 0;
    bk_status status = BK_OK;
    for (size_t i = 0; i < count && status == BK_OK; i++) {
        if (cells && i + BK_ADD_PREFETCH_DISTANCE < count)
            __builtin_prefetch(cells_line(filter, hashes[i + BK_ADD_PREFETCH_DISTANCE].h1), 1);
        bool was_new = false;
        status = ops_add_hash(filter, hashes[i], &was_new);
        fresh += status == BK_OK && was_new;
    }
    *new_count = fresh;
    return status;
}

/* The cell layout's batch: the blocked kinds' ring of line requests
 * (src/prefetch.h), each key tested against its line at the latest
 * clock. */
static const void *cells_line_of(const void *object, const bk_hash *hash)
{
    return cells_line(object, hash->h1);
}

static bool cells_line_probe(const void *context, const void *line, const bk_hash *hash)
{
    const bk_window *filter = context;
    return (line_cells_mask(filter, line, hash->h2) & filter->live_slots) != 0;
}

static size_t ops_contains_hash_batch(const void *object, const bk_hash *hashes, size_t count,
                                      bool *results)
{
    const bk_window *filter = object;
    if (filter->layout == LAYOUT_CELLS)
        return bk_line_ring_probe(filter, hashes, count, results, cells_line_of,
                                  cells_line_probe, filter);
    size_t present = 0;
    for (size_t i = 0; i < count; i++) {
        bool found = contains_now(filter, hashes[i]);
        present += found;
        if (results != NULL)
            results[i] = found;
    }
    return present;
}

/* ------------------------------------------------------------------------ */
/* Parameters and statistics                                                */
/* ------------------------------------------------------------------------ */

bool bk_window_is_timed(const bk_window *filter) { return filter->timed; }
uint64_t bk_window_span(const bk_window *filter) { return filter->span; }

uint64_t bk_window_horizon(const bk_window *filter)
{
    return filter->span * filter->generation_count;
}

/* LAYOUT_CELLS: the bits generation `slot` has set (bit `slot` of each cell). */
static uint64_t cell_bits_set(const bk_window *filter, unsigned slot)
{
    uint64_t pattern = cell_pattern(filter->cell_bits, 1u << slot), count = 0;
    for (size_t i = 0; i < (size_t)filter->lines * LINE_WORDS; i++)
        count += (uint64_t)__builtin_popcountll(filter->words[i] & pattern);
    return count;
}

/* LAYOUT_CELLS: one generation as a blocked filter of its own (kind
 * BK_KIND_BLOCKED: blocks of 512 / c bits, m = lines * 512 / c). */
static void cell_generation_stats(const bk_window *filter, unsigned slot, bk_stats *out)
{
    unsigned block_bits = cells_per_line(filter->cell_bits);
    uint64_t bits = filter->lines * block_bits, set = cell_bits_set(filter, slot);
    bk_stats s;
    memset(&s, 0, sizeof s);
    s.kind = BK_KIND_BLOCKED;
    s.bits = bits;
    s.hashes = filter->hashes;
    s.bytes = bits / 8;
    s.capacity = filter->generation_capacity;
    s.target_fpr = filter->target_fpr / filter->generation_count;
    s.keys_added = filter->slot_keys[slot];
    s.fill_ratio = (double)set / (double)bits;
    s.keys_estimated = bk_blocked_estimate_keys(filter->lines, filter->hashes, block_bits,
                                                s.fill_ratio);
    s.design_fill_ratio = bk_blocked_expected_fill(
        (double)filter->generation_capacity / (double)filter->lines, filter->hashes, block_bits);
    s.current_fpr = s.keys_estimated > 0
                        ? bk_blocked_predicted_fpr((double)bits / s.keys_estimated,
                                                   filter->hashes, block_bits)
                        : 0;
    s.bits_per_key = (double)bits / (double)filter->generation_capacity;
    s.design_point_keys = (double)filter->generation_capacity;
    s.past_design_point = (double)s.keys_added >
                          BK_DESIGN_MARGIN * (double)filter->generation_capacity;
    s.hash_algorithm = filter->hasher.algorithm;
    s.seed = filter->hasher.seed;
    *out = s;
}

/* The window behind a handle, or NULL with *status set: BK_EINVAL for a
 * NULL handle, BK_EKIND for another kind. */
static const bk_window *window_of(const bk_filter *handle, bk_status *status)
{
    const bk_window *filter = bk_filter_object_of(handle, BK_KIND_WINDOW);
    *status = handle == NULL ? BK_EINVAL : filter == NULL ? BK_EKIND : BK_OK;
    return filter;
}

bk_status bk_window_clock(const bk_filter *handle, uint64_t *clock)
{
    bk_status status;
    const bk_window *filter = window_of(handle, &status);
    if (filter == NULL || clock == NULL)
        return filter == NULL ? status : BK_EINVAL;
    if (filter->timed)
        *clock = filter->clock;
    else
        *clock = filter->started ? filter->clock + 1 : 0;
    return BK_OK;
}

bk_status bk_window_contains_at(const bk_filter *handle, const void *key, size_t len,
                                uint64_t now, bool *present)
{
    bk_status status;
    const bk_window *filter = window_of(handle, &status);
    if (filter == NULL || present == NULL || (key == NULL && len != 0))
        return filter == NULL ? status : BK_EINVAL;
    uint64_t clock = filter->timed ? clock_at(filter, now) : filter->clock;
    *present = contains_at_clock(filter, bk_hash_inline(&filter->hasher, key, len), clock);
    return BK_OK;
}

bk_status bk_window_generation_stats(const bk_filter *handle, size_t index, bk_stats *out)
{
    bk_status status;
    const bk_window *filter = window_of(handle, &status);
    if (filter == NULL || out == NULL)
        return filter == NULL ? status : BK_EINVAL;
    if (index >= filter->generation_count)
        return BK_ERANGE;
    if (filter->layout == LAYOUT_RINGS)
        bk_bloom_stats(filter->generations[index], out);
    else
        cell_generation_stats(filter, (unsigned)index, out);
    return BK_OK;
}

bool bk_window_generation_contains_hash(const bk_window *filter, unsigned index, bk_hash hash)
{
    if (index >= filter->generation_count)
        return false;
    if (filter->layout == LAYOUT_CELLS)
        return (cell_probe_mask(filter, hash) >> index) & 1;
    return bk_bloom_contains_hash(filter->generations[index], bk_level_hash(hash, index));
}

bool bk_window_is_blocked(const bk_window *filter) { return filter->layout == LAYOUT_CELLS; }

/* A generation holds more distinct keys than BK_DESIGN_MARGIN times its
 * capacity.  A count, not the fill test of bk_fill_past_design_point: the
 * window knows its keys per generation exactly, and for generations of a
 * few hundred keys the fill's random spread is as large as the margin. */
static bool generation_overfull(const bk_bloom *generation)
{
    return (double)generation->keys_added > BK_DESIGN_MARGIN * (double)generation->capacity;
}

static bool some_live_generation_overfull(const bk_window *filter)
{
    uint64_t epoch = filter->clock / filter->span;
    for (unsigned slot = 0; slot < filter->generation_count; slot++) {
        if (!slot_live(filter, slot, epoch))
            continue;
        if (filter->layout == LAYOUT_RINGS
                ? generation_overfull(filter->generations[slot])
                : (double)filter->slot_keys[slot] >
                      BK_DESIGN_MARGIN * (double)filter->generation_capacity)
            return true;
    }
    return false;
}

static void generation_stats_of(const bk_window *filter, unsigned slot, bk_stats *out)
{
    if (filter->layout == LAYOUT_RINGS)
        bk_bloom_stats(filter->generations[slot], out);
    else
        cell_generation_stats(filter, slot, out);
}

static void ops_stats(const void *object, bk_stats *out)
{
    const bk_window *filter = object;
    bk_stats s;
    memset(&s, 0, sizeof s);
    double bits_set = 0, none_positive = 1;
    uint64_t epoch = filter->clock / filter->span;
    for (unsigned slot = 0; slot < filter->generation_count; slot++) {
        bk_stats gen;
        generation_stats_of(filter, slot, &gen);
        s.bits += gen.bits;
        s.bytes += gen.bytes;
        s.hashes = gen.hashes;
        s.design_fill_ratio = gen.design_fill_ratio;
        bits_set += gen.fill_ratio * (double)gen.bits;
        if (!slot_live(filter, slot, epoch))
            continue;
        s.keys_estimated += gen.keys_estimated;
        none_positive *= 1 - gen.current_fpr;
    }
    s.past_design_point = some_live_generation_overfull(filter);
    s.kind = BK_KIND_WINDOW;
    s.capacity = filter->capacity;
    s.target_fpr = filter->target_fpr;
    s.keys_added = filter->keys_added;
    if (filter->layout == LAYOUT_CELLS) { /* the cells' unused bits too */
        s.bits = filter->lines * LINE_BITS;
        s.bytes = cells_bytes(filter);
    }
    s.fill_ratio = bits_set / (double)s.bits;
    s.current_fpr = 1 - none_positive;
    s.bits_per_key = (double)s.bits / (double)filter->capacity;
    s.filters = filter->generation_count;
    s.hash_algorithm = filter->hasher.algorithm;
    s.seed = filter->hasher.seed;
    *out = s;
}

/* ------------------------------------------------------------------------ */
/* The kind's adapter: bk_filter dispatch and the file format               */
/* ------------------------------------------------------------------------ */

/*
 * Parameter block (72 + 16 g bytes, little-endian; docs/FORMAT.md):
 *     0  u64  window length L (insertions or seconds)
 *     8  u64  span S = ceil(L / (g-1))
 *    16  u64  capacity n (distinct keys per window)
 *    24  f64  target FPR p
 *    32  u64  generation capacity ceil(n S / L)
 *    40  u64  bits per generation m     48  u32  hashes k
 *    52  u32  generations g (2..64)     56  u16  mode: 0 insertions, 1 seconds
 *    58  u16  layout: 0 rings (g classic filters), 1 cells (one line per key)
 *    60  u32  started: 1 once an event has set the clock, else 0
 *    64  u64  clock of the latest event (insertion index or timestamp)
 *    72  g records of 16 bytes, ring slot order:
 *        +0 u64 epoch held (2^64-1 = empty)   +8 u64 keys in the generation
 * Payload, rings: each generation's ceil(m/64) little-endian words,
 * zero-padded to a multiple of 64 bytes, in ring slot order.  Cells: the
 * m c / 512 lines of 8 little-endian words (m = lines * 512 / c).
 */
#define WINDOW_HEADER_SIZE 72
#define SLOT_RECORD_SIZE 16

static size_t padded_words(uint64_t bits)
{
    return (bk_bloom_words_for_bits(bits) + 7) & ~(size_t)7;
}

/* LAYOUT_CELLS: m, the cells of all lines (each generation's bits). */
static uint64_t cell_count(const bk_window *filter)
{
    return filter->lines * cells_per_line(filter->cell_bits);
}

static size_t ops_params_size(const void *object)
{
    const bk_window *filter = object;
    return WINDOW_HEADER_SIZE + (size_t)SLOT_RECORD_SIZE * filter->generation_count;
}

static void ops_write_params(const void *object, uint8_t *out)
{
    const bk_window *filter = object;
    bool rings = filter->layout == LAYOUT_RINGS;
    bk_store_le64(out, filter->length);
    bk_store_le64(out + 8, filter->span);
    bk_store_le64(out + 16, filter->capacity);
    bk_store_le_double(out + 24, filter->target_fpr);
    bk_store_le64(out + 32, filter->generation_capacity);
    bk_store_le64(out + 40, rings ? filter->generations[0]->bits : cell_count(filter));
    bk_store_le32(out + 48, rings ? filter->generations[0]->hashes : filter->hashes);
    bk_store_le32(out + 52, filter->generation_count);
    bk_store_le16(out + 56, filter->timed);
    bk_store_le16(out + 58, (uint16_t)filter->layout);
    bk_store_le32(out + 60, filter->started);
    bk_store_le64(out + 64, filter->clock);
    for (unsigned i = 0; i < filter->generation_count; i++) {
        uint8_t *record = out + WINDOW_HEADER_SIZE + (size_t)SLOT_RECORD_SIZE * i;
        bk_store_le64(record, filter->epochs[i]);
        bk_store_le64(record + 8,
                      rings ? filter->generations[i]->keys_added : filter->slot_keys[i]);
    }
}

static uint64_t ops_payload_size(const void *object)
{
    const bk_window *filter = object;
    if (filter->layout == LAYOUT_CELLS)
        return cells_bytes(filter);
    return (uint64_t)padded_words(filter->generations[0]->bits) * 8 * filter->generation_count;
}

static void ops_write_payload(const void *object, uint8_t *out)
{
    const bk_window *filter = object;
    if (filter->layout == LAYOUT_CELLS) {
        bk_store_le64_array(out, filter->words, (size_t)filter->lines * LINE_WORDS);
        return;
    }
    for (unsigned i = 0; i < filter->generation_count; i++) {
        const bk_bloom *gen = filter->generations[i];
        size_t padded = padded_words(gen->bits);
        bk_store_le64_array(out, gen->words, gen->word_count);
        memset(out + gen->word_count * 8, 0, (padded - gen->word_count) * 8);
        out += padded * 8;
    }
}

typedef struct window_header {
    window_design design;
    bool started;
    uint64_t clock;
} window_header;

/* LAYOUT_CELLS: m a whole number of lines, at most 2^56 bits in all. */
static bk_status read_cells_geometry(uint64_t bits, unsigned hashes, window_design *d)
{
    uint64_t per_line = cells_per_line(cell_bits_for(d->generation_count));
    if (bits % per_line != 0)
        return BK_ECORRUPT;
    if (bits / per_line > BK_MAX_BITS / LINE_BITS || hashes > BK_MAX_HASHES)
        return BK_ERANGE;
    d->lines = bits / per_line;
    d->hashes = hashes;
    return BK_OK;
}

static bk_status read_window_header(const uint8_t *params, size_t params_size, window_header *h)
{
    if (params_size < WINDOW_HEADER_SIZE)
        return BK_ECORRUPT;
    window_design *d = &h->design;
    d->length = bk_load_le64(params);
    d->span = bk_load_le64(params + 8);
    d->capacity = bk_load_le64(params + 16);
    d->target_fpr = bk_load_le_double(params + 24);
    d->generation_capacity = bk_load_le64(params + 32);
    uint64_t bits = bk_load_le64(params + 40);
    unsigned hashes = bk_load_le32(params + 48);
    d->generation_count = bk_load_le32(params + 52);
    uint32_t mode = bk_load_le16(params + 56), started = bk_load_le32(params + 60);
    d->layout = bk_load_le16(params + 58);
    h->clock = bk_load_le64(params + 64);
    d->timed = mode == 1;
    h->started = started == 1;
    if (d->length == 0 || d->capacity == 0 || d->generation_count < 2 ||
        d->generation_count > BK_WINDOW_MAX_GENERATIONS || mode > 1 || started > 1 ||
        d->layout > LAYOUT_CELLS ||
        (d->layout == LAYOUT_CELLS && d->generation_count > CELLS_MAX_GENERATIONS) ||
        !(d->target_fpr > 0 && d->target_fpr < 1) || bits == 0 || hashes == 0 ||
        (!h->started && h->clock != 0) || h->clock > MAX_CLOCK)
        return BK_ECORRUPT;
    if (params_size != WINDOW_HEADER_SIZE + (size_t)SLOT_RECORD_SIZE * d->generation_count)
        return BK_ECORRUPT;
    uint64_t span = d->length / (d->generation_count - 1) +
                    (d->length % (d->generation_count - 1) != 0);
    if (d->span != span ||
        d->generation_capacity != generation_capacity(d->capacity, d->span, d->length))
        return BK_ECORRUPT;
    if (d->layout == LAYOUT_CELLS)
        return read_cells_geometry(bits, hashes, d);
    if (bits > BK_MAX_BITS || hashes > BK_MAX_HASHES ||
        (unsigned __int128)bits * d->generation_count > BK_MAX_BITS)
        return BK_ERANGE;
    return bk_size_explicit(d->generation_capacity, bits, hashes, &d->sizing);
}

static const uint8_t *slot_record(const uint8_t *params, unsigned slot)
{
    return params + WINDOW_HEADER_SIZE + (size_t)SLOT_RECORD_SIZE * slot;
}

/* The ring as the clock leaves it (advance_to): before the first event
 * every slot is empty; after it the slots hold the epochs E - j + 1 .. E
 * for some j in 1..g, E = clock / S the current epoch, each in slot
 * epoch mod g, and the other slots are empty.  An empty slot counts no
 * keys; in an insertion window a generation counts at most its S
 * insertions.  A file whose current slot is marked empty would take new
 * keys into a generation no query reads: false negatives. */
static bk_status check_slots(const uint8_t *params, const window_header *h)
{
    unsigned g = h->design.generation_count;
    uint64_t epoch = h->clock / h->design.span;
    unsigned held_count = 0;
    for (unsigned slot = 0; slot < g; slot++) {
        uint64_t held = bk_load_le64(slot_record(params, slot));
        uint64_t keys = bk_load_le64(slot_record(params, slot) + 8);
        if (held == EMPTY_EPOCH) {
            if (keys != 0)
                return BK_ECORRUPT;
            continue;
        }
        if (!h->started || held % g != slot || held > epoch || epoch - held >= g ||
            (!h->design.timed && keys > h->design.span))
            return BK_ECORRUPT;
        held_count++;
    }
    if (!h->started)
        return BK_OK;
    /* the held epochs are exactly E - held_count + 1 .. E */
    for (unsigned back = 0; back < held_count; back++) {
        if (back > epoch)
            return BK_ECORRUPT;
        if (bk_load_le64(slot_record(params, (unsigned)((epoch - back) % g))) != epoch - back)
            return BK_ECORRUPT;
    }
    return held_count > 0 ? BK_OK : BK_ECORRUPT;
}

/* The window's own key count: nothing before the first event; in an
 * insertion window at most one new key per insertion (clock + 1 of them). */
static bool keys_added_valid(const window_header *h, uint64_t keys_added)
{
    if (!h->started)
        return keys_added == 0;
    return h->design.timed || keys_added <= h->clock + 1;
}

static bk_status read_generation(bk_window *filter, unsigned slot, const uint8_t *params,
                                 const uint8_t *slice, const bk_sizing *sizing, bool in_place)
{
    const uint8_t *record = slot_record(params, slot);
    size_t words = bk_bloom_words_for_bits(sizing->bits);
    size_t padded = padded_words(sizing->bits);
    uint64_t last;
    bk_load_le64_array(&last, slice + (words - 1) * 8, 1);
    unsigned used = (unsigned)(sizing->bits & 63);
    if (used != 0 && (last >> used) != 0)
        return BK_ECORRUPT;
    for (size_t i = words * 8; i < padded * 8; i++)
        if (slice[i] != 0)
            return BK_ECORRUPT;
    uint64_t *borrowed = in_place ? (uint64_t *)(uintptr_t)slice : NULL;
    bk_bloom *gen;
    bk_status status = bk_bloom_create_from_sizing(sizing, &filter->hasher, 0, borrowed, &gen);
    if (status != BK_OK)
        return status;
    if (!in_place)
        bk_load_le64_array(gen->words, slice, words);
    gen->keys_added = bk_load_le64(record + 8);
    filter->epochs[slot] = bk_load_le64(record);
    filter->generations[slot] = gen;
    filter->generation_count++;
    return BK_OK;
}

/* LAYOUT_CELLS: the lines, after checking that the unused cell bits
 * g .. c-1 are zero, and the per-slot key counts.  (An empty slot's bits
 * are never read and are cleared before the slot takes an epoch, as in
 * the ring layout.) */
static bk_status read_cells(bk_window *filter, const uint8_t *params, const uint8_t *payload,
                            bool in_place)
{
    for (unsigned slot = 0; slot < filter->generation_count; slot++) {
        filter->epochs[slot] = bk_load_le64(slot_record(params, slot));
        filter->slot_keys[slot] = bk_load_le64(slot_record(params, slot) + 8);
    }
    uint64_t stray = ~cell_pattern(filter->cell_bits, (1u << filter->generation_count) - 1);
    size_t words = (size_t)filter->lines * LINE_WORDS;
    for (size_t i = 0; i < words; i++)
        if ((bk_load_le64(payload + 8 * i) & stray) != 0)
            return BK_ECORRUPT;
    if (in_place) {
        filter->words = (uint64_t *)(uintptr_t)payload;
    } else {
        filter->words = bk_alloc_zeroed(cells_bytes(filter));
        if (filter->words == NULL)
            return BK_ENOMEM;
        bk_load_le64_array(filter->words, payload, words);
    }
    if (filter->started)
        filter->live_slots = live_slots_at(filter, filter->clock / filter->span);
    return BK_OK;
}

static bk_status read_cells_window(const window_header *h, const uint8_t *params,
                                   const uint8_t *payload, uint64_t payload_size,
                                   const bk_hasher *hasher, uint64_t keys_added, bool in_place,
                                   void **out)
{
    if (payload_size != h->design.lines * 64)
        return BK_ECORRUPT;
    bk_window *filter = new_window(&h->design, hasher);
    if (filter == NULL)
        return BK_ENOMEM;
    filter->started = h->started;
    filter->clock = h->clock;
    if (h->started)
        note_epoch(filter);
    filter->keys_added = keys_added;
    bk_status status = read_cells(filter, params, payload, in_place);
    filter->read_only = in_place && status == BK_OK;
    if (status != BK_OK) {
        ops_destroy(filter);
        return status;
    }
    *out = filter;
    return BK_OK;
}

static bk_status ops_read(const uint8_t *params, size_t params_size, const uint8_t *payload,
                          uint64_t payload_size, const bk_hasher *hasher, uint64_t keys_added,
                          bool in_place, void **out)
{
    window_header h;
    bk_status status = read_window_header(params, params_size, &h);
    if (status != BK_OK)
        return status;
    status = check_slots(params, &h);
    if (status != BK_OK)
        return status;
    if (!keys_added_valid(&h, keys_added))
        return BK_ECORRUPT;
    if (h.design.layout == LAYOUT_CELLS)
        return read_cells_window(&h, params, payload, payload_size, hasher, keys_added, in_place,
                                 out);
    uint64_t slice_bytes = (uint64_t)padded_words(h.design.sizing.bits) * 8;
    if (payload_size != slice_bytes * h.design.generation_count)
        return BK_ECORRUPT;
    bk_window *filter = new_window(&h.design, hasher);
    if (filter == NULL)
        return BK_ENOMEM;
    filter->started = h.started;
    filter->clock = h.clock;
    filter->keys_added = keys_added;
    filter->read_only = in_place;
    for (unsigned slot = 0; slot < h.design.generation_count; slot++) {
        status = read_generation(filter, slot, params, payload + slice_bytes * slot,
                                 &h.design.sizing, in_place);
        if (status != BK_OK) {
            ops_destroy(filter);
            return status;
        }
    }
    if (h.started)
        note_epoch(filter); /* the ring is complete: g is known */
    *out = filter;
    return BK_OK;
}

static const bk_hasher *ops_hasher(const void *filter)
{
    return &((const bk_window *)filter)->hasher;
}

static bool ops_past_design_point(const void *filter)
{
    return some_live_generation_overfull(filter);
}

/* The whole ring: bits and bytes of all g generations. */
static bk_status ops_design(const bk_params *params, bk_stats *out)
{
    window_design d;
    bk_status status = design_window(params, &d);
    if (status != BK_OK)
        return status;
    memset(out, 0, sizeof *out);
    out->kind = BK_KIND_WINDOW;
    out->bits = d.sizing.bits * d.generation_count;
    out->hashes = d.sizing.hashes;
    out->bytes = (uint64_t)bk_bloom_words_for_bits(d.sizing.bits) * 8 * d.generation_count;
    out->design_fill_ratio = d.sizing.design_fill_ratio;
    if (d.layout == LAYOUT_CELLS) {
        unsigned block_bits = cells_per_line(cell_bits_for(d.generation_count));
        out->bits = d.lines * LINE_BITS;
        out->hashes = d.hashes;
        out->bytes = d.lines * 64;
        out->design_fill_ratio = bk_blocked_expected_fill(
            (double)d.generation_capacity / (double)d.lines, d.hashes, block_bits);
    }
    out->capacity = d.capacity;
    out->target_fpr = d.target_fpr;
    out->bits_per_key = (double)out->bits / (double)d.capacity;
    out->filters = d.generation_count;
    out->hash_algorithm = params->hash_algorithm;
    return BK_OK;
}

const bk_kind_ops bk_window_ops = {
    .kind = BK_KIND_WINDOW,
    .name = "window",
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
    .advance_clock = ops_advance_clock,
};
