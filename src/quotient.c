/*
 * src/quotient.c -- the rank-and-select counting quotient filter.
 *
 * The idea (Bender et al., "Don't Thrash: How to Cache Your Hash on
 * Flash", VLDB 2012; the rank-and-select form of Pandey, Bender, Johnson &
 * Patro, "A General-Purpose Counting Filter: Making Every Bit Count",
 * SIGMOD 2017): keep F = q + r bits of each key's hash, its fingerprint.
 * The high q bits, the QUOTIENT, name a home slot among 2^q; only the low
 * r bits, the REMAINDER, are stored.  The remainders of one quotient form
 * a RUN of consecutive slots, sorted, starting at the home slot or, when
 * earlier runs spill over it, right after them (linear probing that keeps
 * the runs in quotient order).  Two bits per slot find a run:
 *
 *     occupieds[x] = 1   some fingerprint has quotient x
 *     runends[s]   = 1   slot s ends a run
 *
 * The run of x is the one ending at the rank(occupieds, x)-th runend, so a
 * lookup is a rank then a select.  To keep both local, slots are grouped in
 * blocks of 64 with an OFFSET per block: the number of the block's first
 * slots taken by runs of earlier quotients.  The run of x (in block b,
 * t = one bits of block b's occupieds up to x) ends at the t-th runend at
 * or after 64b + offset[b]; the run before it at the (t-1)-th.
 *
 *     fingerprint = h1 >> (64 - F)          (the high F bits of the hash)
 *     quotient    = fingerprint >> r        home slot, in [0, 2^q)
 *     remainder   = fingerprint & (2^r - 1)
 *
 * Memory layout: blocks of 64 slots, each 17 + 8r bytes, every word
 * little-endian (src/endian.h), so the table is the file's payload on any
 * host:
 *
 *     block: [ occupieds u64 | runends u64 | offset u8 | 64 x r-bit remainders ]
 *             bit i = slot i   bit i = slot i            slot i at bits [i r, (i+1) r)
 *
 * 2.125 bits of metadata per slot.  The offset byte holds min(offset, 255);
 * 255 means "255 or more", and the exact answer then comes from an anchor:
 * the nearest earlier block b' whose byte is below 255 (block 0's is
 * always 0).  The runs of the quotients in [64 b', x) are counted by
 * popcounts of the occupieds between, and the select starts at
 * 64 b' + offset[b'] instead -- the same rank and select, over a longer
 * stretch, so answers stay exact and no cluster length is refused.
 * With random keys offsets stay far below 255 even at 95% load (the
 * largest measured: 102, 123 and 151 in tables of 2^20, 2^24 and 2^26
 * slots), so the fallback serves crowded quotients -- a skewed or hostile
 * key set, or many large counters -- and costs one compare otherwise.
 * Runs may spill past the last home slot into
 * 10 sqrt(2^q) (at least 64) overflow slots after it, rounded up to a whole
 * block; the table does not wrap around.
 *
 * Counts.  A run is a sorted sequence of ENTRIES, one per distinct
 * remainder v, each encoding its count c:
 *
 *     c = 1            [v]
 *     2 <= c <= 2^r    [v, v, c - 2]
 *     c > 2^r          [v, v, 2^r - 1, L - 2, d0, d1, ..., d(L-1)]
 *                      c = sum di 2^(r i), L minimal (d(L-1) != 0)
 *
 * Remainders of successive entries strictly increase, so a reader meeting
 * v twice knows a counter follows, in a position fixed by the grammar, not
 * by the values (the paper's encoding tells digits from remainders by
 * their values, which needs special cases for small v): any slot content
 * is a valid digit, and parsing goes forward only.  The price is one or
 * two slots per counted key: a count of c costs 1, 3, or
 * 4 + ceil(log2(c + 1) / r) slots -- a key added twice 3 (the paper's: 2),
 * a million times 7 at r = 8 -- so a skewed multiset still costs
 * O(1 + log c / r) slots per key, not c.
 *
 * Operations.  Insert finds the run, then the entry (a forward parse: a
 * backward scan could take a counter digit for a remainder), re-encodes it
 * and opens the slots it needs by shifting the rest of the cluster right
 * into the first free slots after it.  Remove re-encodes the entry with
 * one less and closes the slots it frees by shifting every later run of
 * the cluster left, no run moving before its home slot, so that removing
 * what was added restores the very bytes of before.  After either, the
 * offsets of the blocks whose start lies in the changed range are
 * recomputed, each from the block before.  Merge and resize are one linear
 * pass: the fingerprints of the sources are read in order (quotient, then
 * remainder) and laid into a fresh table, runs placed left to right.
 * Resize to 2^(q+1) slots keeps F: the remainder's top bit joins the
 * quotient, so r drops by one (never below 4) and the false-positive rate
 * of the keys stored does not change.
 *
 * False positives.  An absent key matches when its F-bit fingerprint
 * equals one of the n distinct fingerprints stored:
 *
 *     p = 1 - (1 - 2^-F)^n  ~  n / 2^F  =  alpha 2^-r   (alpha = n / 2^q)
 *
 * Sizing from (n, p): q = ceil(log2(n / 0.95)), so the load at capacity,
 * alpha = n / 2^q, is at most 95% (and, 2^q being a power of two, at
 * least 47.5%); r = ceil(log2(alpha / p)), between 4 and 32.  Bits per key:
 * (r + 2.125) / alpha, plus 1-3% of overflow slots; at 95% load e.g. r = 7
 * (p = 1%): 9.6; r = 10 (0.1%): 12.8, before the overflow slots --
 * against 1.44 log2(1/p) = 9.6 and 14.4 for a Bloom filter; at 47.5% load
 * twice as much.
 * Without BK_FLAG_AUTO_GROW the filter refuses an insert (BK_EFULL,
 * nothing lost) once its used slots would exceed its home slots, or when
 * the overflow slots run out; with it, the filter doubles (resize) before
 * its used slots pass 95% of its home slots.
 *
 * Measured (tests/test_quotient.c, fixed seeds, 400,000 absent keys per
 * figure, each within 4 binomial standard deviations of the prediction):
 *   - 2^16 home slots, r = 8 (F = 24): FPR 0.001235 / 0.002377 / 0.003498
 *     at loads 0.3 / 0.6 / 0.9 against 0.001170 / 0.002338 / 0.003503;
 *   - 40,000 keys in 2^16 slots, r = 9: 0.001228 against 0.001191, and
 *     the very same answers after a resize to 2^17 slots (r = 8);
 *   - counts are exact per fingerprint (the model test: 20,000 random adds
 *     and removes over crowded quotients, every count checked).
 *
 * The one-key paths.  Most runs lie inside their home block (offset byte
 * below 64, the run's end among the block's runends), and for them a
 * query reads the block's two words -- one rank, one or two selects give
 * the run -- and one 8-byte window of its remainders, compared with the
 * wanted remainder all at once (a zero-field test on r-bit fields, exact
 * while the run holds no counter: outside counters a run's remainders
 * strictly increase, so two equal neighbours mark one and send the query
 * to the forward parse).  The remainder line is requested before the
 * metadata is read.  An insert of a new fingerprint whose shift ends
 * inside its home block moves the slots within the block and changes no
 * offset.  Everything else -- a run or a shift reaching a later block, a
 * saturated offset, a counter -- takes the general walk above, which the
 * tests hold both paths to (a table made by one-key adds equals, byte for
 * byte, the same fingerprints laid out by a merge).
 *
 * What sets the floor against the vector quotient filter (Pandey, Conway,
 * Durie, Bender, Farach-Colton & Johnson, SIGMOD 2021), which keeps no
 * counts and neither merges nor resizes: its block is one 64-byte line
 * holding a fixed number of tags and their metadata, so a query reads one
 * line and a full block refuses the insert; here a block of 64 slots is
 * 17 + 8r bytes (73 at r = 7, 97 at r = 10), not aligned to lines, and a
 * query reads its header and a remainder window -- 1.8 lines at r = 7 and
 * 2.0 at r = 10 on average over the blocks' placements -- while at 95%
 * load clusters often cross blocks: filling 2^20 slots to 95% at r = 7,
 * one insert in eleven and one query in seven took the general walk (one
 * in seventeen of each at 90%, r = 10).  Alternatives weighed and left:
 *   - line-sized blocks of their own tags (the VQF's layout) would need a
 *     new payload and would bound what a block holds, so a pile of
 *     counters or crowded quotients would refuse inserts where linear
 *     probing spills into the next block, and resize and merge would lose
 *     their single ordered pass over one global run order;
 *   - padding each block to whole lines (73 to 128 bytes at r = 7) would
 *     read one line less but cost 75% more space, above the CQF's bits per
 *     key at the same FPR;
 *   - the metadata in an array of its own, apart from the remainders,
 *     still reads two lines (one in each array) per query;
 *   - the key as its own hash (what the VQF does with random keys) is the
 *     hasher's choice, not the kind's: bk_filter_contains_hash and the
 *     benchmark's qf-hash row show the paths without the XXH3-128 hash.
 * Speed: docs/PERFORMANCE.md and docs/DELETION.md.
 */
#include "bloomkit/quotient.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "endian.h"
#include "filter.h"
#include "hash.h"
#include "memory.h"
#include "quotient_bits.h"

#define MIN_R BK_QUOTIENT_MIN_REMAINDER_BITS
#define MAX_R BK_QUOTIENT_MAX_REMAINDER_BITS
#define BLOCK_SLOTS 64u
#define HEADER_BYTES 17u /* occupieds, runends, offset */
#define SATURATED 255u   /* an offset byte meaning "255 or more" */
#define MAX_DIGITS 16u   /* ceil(64 / MIN_R) */
#define MAX_ENTRY_SLOTS (4u + MAX_DIGITS)
#define TAIL_PADDING 8u /* remainder loads read up to 8 bytes past a block */
#define NOWHERE UINT64_MAX
#define PREFETCH_DISTANCE 16 /* batch queries: blocks requested this many keys ahead */

typedef struct bk_quotient quotient;

/* The walks over the metadata, compiled twice: with POPCNT/BMI2 and
 * portable (chosen per filter at creation from bk_cpu()). */
typedef struct walk_ops {
    uint64_t (*select_from)(const quotient *f, uint64_t start, uint64_t k);
    uint64_t (*end_bound)(const quotient *f, uint64_t position);
    void (*run_of)(const quotient *f, uint64_t x, uint64_t *start, uint64_t *end);
    /* The query and the count of a fingerprint (0: absent), and the query
     * from a key's bytes and from an integer key, the hash inlined. */
    bool (*contains)(const quotient *f, uint64_t fingerprint);
    bool (*contains_key)(const quotient *f, const void *key, size_t len);
    bool (*contains_u64)(const quotient *f, uint64_t key);
    uint64_t (*count_of)(const quotient *f, uint64_t fingerprint);
    /* Adds a fingerprint not stored yet when everything the insert moves
     * lies in its home block; false, changing nothing, otherwise. */
    bool (*insert_in_block)(quotient *f, uint64_t fingerprint);
} walk_ops;

struct bk_quotient {
    uint8_t *table;          /* blocks x block_bytes, then TAIL_PADDING zero bytes */
    size_t table_bytes;      /* allocated, padding included */
    unsigned log2_slots;     /* q */
    unsigned remainder_bits; /* r */
    uint64_t home_slots;     /* 2^q */
    uint64_t blocks;
    uint64_t slots;          /* blocks x 64: home slots, then overflow */
    size_t block_bytes;      /* 18 + 8 r */
    uint64_t remainder_mask; /* 2^r - 1 */
    uint64_t capacity;       /* design n */
    double target_fpr;       /* predicted FPR at capacity */
    uint64_t used_slots;
    uint64_t distinct; /* entries */
    uint64_t counted;  /* sum of counts, saturating */
    unsigned flags;    /* BK_FLAG_AUTO_GROW or 0 */
    bool read_only;    /* loaded from a mapped file: BK_EIMMUTABLE on writes */
    const walk_ops *walk;
    bk_hasher hasher;
    unsigned window_fields; /* r-bit fields a query reads in one 8-byte load: 57 / r */
    uint64_t field_lows;    /* bit 0 of each of those fields */
};

/* One decoded entry of a run. */
typedef struct entry {
    uint64_t value;
    uint64_t count;
    unsigned length; /* slots */
} entry;

typedef struct quotient_design {
    uint64_t capacity;
    unsigned log2_slots;
    unsigned remainder_bits;
    uint64_t blocks;
    double target_fpr;
} quotient_design;

/* ------------------------------------------------------------------------ */
/* Formulas                                                                 */
/* ------------------------------------------------------------------------ */

/* p = 1 - (1 - 2^-F)^n: some of n distinct F-bit fingerprints matches. */
static double predicted_fpr(double fingerprints, unsigned fingerprint_bits)
{
    if (!(fingerprints > 0))
        return 0.0;
    return -expm1(fingerprints * log1p(-ldexp(1.0, -(int)fingerprint_bits)));
}

static uint64_t overflow_slots(unsigned log2_slots)
{
    double extra = ceil(10.0 * sqrt(ldexp(1.0, (int)log2_slots)));
    return extra < BLOCK_SLOTS ? BLOCK_SLOTS : (uint64_t)extra;
}

static uint64_t blocks_for(unsigned log2_slots)
{
    uint64_t slots = ((uint64_t)1 << log2_slots) + overflow_slots(log2_slots);
    return (slots + BLOCK_SLOTS - 1) / BLOCK_SLOTS;
}

static uint64_t design_bits(const quotient_design *d)
{
    return d->blocks * (HEADER_BYTES + 8u * d->remainder_bits) * 8u;
}

static bool valid_shape(unsigned log2_slots, unsigned remainder_bits)
{
    return log2_slots <= BK_QUOTIENT_MAX_LOG2_SLOTS && remainder_bits >= MIN_R &&
           remainder_bits <= MAX_R && log2_slots + remainder_bits <= 64;
}

/* r for a design whose load at capacity is `load`: explicit, or the most
 * that bits_per_key pays for ((r + 2.125) / load bits per key), or the
 * fewest giving load 2^-r <= p. */
static bk_status remainder_bits_for(const bk_params *params, double load, unsigned *out)
{
    if (params->remainder_bits != 0) {
        if (params->remainder_bits < MIN_R || params->remainder_bits > MAX_R)
            return BK_EINVAL;
        *out = params->remainder_bits;
        return BK_OK;
    }
    double bits;
    if (params->bits_per_key != 0) {
        if (!(params->bits_per_key > 0) || !isfinite(params->bits_per_key))
            return BK_EINVAL;
        bits = floor(params->bits_per_key * load - 2.125);
    } else {
        double fpr = params->fpr == 0 ? 0.01 : params->fpr;
        if (!(fpr > 0 && fpr < 1))
            return BK_EINVAL;
        bits = ceil(log2(load / fpr));
        if (bits < MIN_R)
            bits = MIN_R;
    }
    if (!(bits >= MIN_R && bits <= MAX_R))
        return BK_ERANGE;
    *out = (unsigned)bits;
    return BK_OK;
}

static void finish_design(quotient_design *d)
{
    d->blocks = blocks_for(d->log2_slots);
    d->target_fpr = predicted_fpr((double)d->capacity, d->log2_slots + d->remainder_bits);
}

static bk_status design_from_params(const bk_params *params, quotient_design *out)
{
    if (params->capacity == 0 || params->hashes != 0 || params->bits != 0)
        return BK_EINVAL;
    quotient_design d = { .capacity = params->capacity };
    double home = ceil(log2((double)params->capacity / BK_QUOTIENT_DESIGN_LOAD));
    d.log2_slots = home < 0 ? 0 : home > 63 ? 63 : (unsigned)home;
    while (d.log2_slots < 63 &&
           ldexp(BK_QUOTIENT_DESIGN_LOAD, (int)d.log2_slots) < (double)params->capacity)
        d.log2_slots++;
    double load = (double)params->capacity / ldexp(1.0, (int)d.log2_slots);
    bk_status status = remainder_bits_for(params, load, &d.remainder_bits);
    if (status != BK_OK)
        return status;
    if (!valid_shape(d.log2_slots, d.remainder_bits))
        return BK_ERANGE;
    finish_design(&d);
    if (design_bits(&d) > BK_MAX_BITS)
        return BK_ERANGE;
    *out = d;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Blocks, bits and slots                                                   */
/* ------------------------------------------------------------------------ */

static inline uint8_t *block_at(const quotient *f, uint64_t block)
{
    return f->table + block * f->block_bytes;
}

static inline uint64_t occupieds(const quotient *f, uint64_t block)
{
    return bk_load_le64(block_at(f, block));
}

static inline uint64_t runends(const quotient *f, uint64_t block)
{
    return bk_load_le64(block_at(f, block) + 8);
}

/* The stored offset byte of a block: its offset, or SATURATED for 255 or
 * more (the exact value is then found from an earlier block: the walks'
 * anchor). */
static inline unsigned offset_byte(const quotient *f, uint64_t block)
{
    return block_at(f, block)[16];
}

static inline void set_offset(quotient *f, uint64_t block, uint64_t offset)
{
    block_at(f, block)[16] = (uint8_t)(offset < SATURATED ? offset : SATURATED);
}

static inline void put_bit(quotient *f, unsigned word, uint64_t slot, bool on)
{
    uint8_t *at = block_at(f, slot / BLOCK_SLOTS) + 8 * word;
    uint64_t bits = bk_load_le64(at);
    uint64_t bit = (uint64_t)1 << (slot % BLOCK_SLOTS);
    bk_store_le64(at, on ? bits | bit : bits & ~bit);
}

static inline bool is_occupied(const quotient *f, uint64_t x)
{
    return (occupieds(f, x / BLOCK_SLOTS) >> (x % BLOCK_SLOTS)) & 1;
}

static inline void set_occupied(quotient *f, uint64_t x, bool on) { put_bit(f, 0, x, on); }
static inline void set_runend(quotient *f, uint64_t slot, bool on) { put_bit(f, 1, slot, on); }

/* Slot i's remainder in a block's remainders, and its store. */
static inline uint64_t remainder_in(const uint8_t *remainders, unsigned i, unsigned r,
                                    uint64_t mask)
{
    return (bk_load_le64(remainders + i * r / 8) >> (i * r % 8)) & mask;
}

static inline void put_remainder_in(uint8_t *remainders, unsigned i, unsigned r, uint64_t mask,
                                    uint64_t value)
{
    uint8_t *at = remainders + i * r / 8;
    bk_store_le64(at, (bk_load_le64(at) & ~(mask << (i * r % 8))) | (value << (i * r % 8)));
}

static inline uint64_t remainder_at(const quotient *f, uint64_t slot)
{
    uint64_t bit = (slot % BLOCK_SLOTS) * f->remainder_bits;
    const uint8_t *at = block_at(f, slot / BLOCK_SLOTS) + HEADER_BYTES + bit / 8;
    return (bk_load_le64(at) >> (bit % 8)) & f->remainder_mask;
}

static inline void set_remainder(quotient *f, uint64_t slot, uint64_t value)
{
    uint64_t bit = (slot % BLOCK_SLOTS) * f->remainder_bits;
    uint8_t *at = block_at(f, slot / BLOCK_SLOTS) + HEADER_BYTES + bit / 8;
    uint64_t mask = f->remainder_mask << (bit % 8);
    bk_store_le64(at, (bk_load_le64(at) & ~mask) | (value << (bit % 8)));
}

/*
 * Copies `count` bits from bit `from_bit` of `from` to bit `to_bit` of `to`
 * (little-endian bit strings), in chunks of at most 56 bits, each read and
 * written with one 8-byte load or read-modify-write (so 8 bytes past the
 * last byte touched must be addressable).  `descending`: the highest chunk
 * first, for a copy to higher addresses over its own source; ascending
 * otherwise.
 */
static void copy_bits(uint8_t *to, uint64_t to_bit, const uint8_t *from, uint64_t from_bit,
                      uint64_t count, bool descending)
{
    for (uint64_t done = 0; done < count;) {
        unsigned length = count - done < 56 ? (unsigned)(count - done) : 56;
        uint64_t at = descending ? count - done - length : done;
        uint64_t source = from_bit + at, target = to_bit + at;
        uint64_t mask = ((uint64_t)1 << length) - 1;
        uint64_t bits = (bk_load_le64(from + source / 8) >> (source % 8)) & mask;
        uint8_t *word = to + target / 8;
        uint64_t place = mask << (target % 8);
        bk_store_le64(word, (bk_load_le64(word) & ~place) | (bits << (target % 8)));
        done += length;
    }
}

/* Moves the remainders and runend bits of slots [from, from + count) to
 * [to, to + count), as memmove would (occupieds stay: they belong to
 * quotients, not slots).  Block by block, each piece within one source
 * and one target block. */
static void move_slots(quotient *f, uint64_t from, uint64_t to, uint64_t count)
{
    bool up = to > from;
    for (uint64_t done = 0; done < count;) {
        uint64_t left = count - done;
        /* the piece: the last slots when moving up, the first otherwise */
        uint64_t source = up ? from + left - 1 : from + done;
        uint64_t target = up ? to + left - 1 : to + done;
        uint64_t room = up ? 1 + (source % BLOCK_SLOTS < target % BLOCK_SLOTS
                                      ? source % BLOCK_SLOTS
                                      : target % BLOCK_SLOTS)
                           : BLOCK_SLOTS - (source % BLOCK_SLOTS > target % BLOCK_SLOTS
                                                ? source % BLOCK_SLOTS
                                                : target % BLOCK_SLOTS);
        uint64_t length = room < left ? room : left;
        uint64_t first_source = up ? source + 1 - length : source;
        uint64_t first_target = up ? target + 1 - length : target;
        uint8_t *from_block = block_at(f, first_source / BLOCK_SLOTS);
        uint8_t *to_block = block_at(f, first_target / BLOCK_SLOTS);
        unsigned r = f->remainder_bits;
        copy_bits(to_block + HEADER_BYTES, (first_target % BLOCK_SLOTS) * r,
                  from_block + HEADER_BYTES, (first_source % BLOCK_SLOTS) * r, length * r, up);
        copy_bits(to_block + 8, first_target % BLOCK_SLOTS, from_block + 8,
                  first_source % BLOCK_SLOTS, length, up);
        done += length;
    }
}

static inline void clear_slot(quotient *f, uint64_t slot)
{
    set_remainder(f, slot, 0);
    set_runend(f, slot, false);
}

/* ------------------------------------------------------------------------ */
/* Rank and select over the metadata                                        */
/* ------------------------------------------------------------------------ */

/* The first one bit at or after `from` in the occupieds (word 0) or
 * runends (word 1), not past `limit`; NOWHERE if none. */
static uint64_t next_bit(const quotient *f, unsigned word_index, uint64_t from, uint64_t limit)
{
    if (limit >= f->slots)
        limit = f->slots - 1;
    if (from > limit)
        return NOWHERE;
    uint64_t block = from / BLOCK_SLOTS;
    uint64_t word = bk_load_le64(block_at(f, block) + 8 * word_index) &
                    (~(uint64_t)0 << (from % BLOCK_SLOTS));
    while (word == 0) {
        if (++block > limit / BLOCK_SLOTS)
            return NOWHERE;
        word = bk_load_le64(block_at(f, block) + 8 * word_index);
    }
    uint64_t found = block * BLOCK_SLOTS + (uint64_t)__builtin_ctzll(word);
    return found <= limit ? found : NOWHERE;
}

static uint64_t count_in_run(const quotient *f, uint64_t fingerprint, uint64_t slot,
                             uint64_t run_end);
static uint64_t lookup(const quotient *f, uint64_t fingerprint);
static bool contains_generally(const quotient *f, uint64_t fingerprint);

/* The high q + r bits of h1. */
static inline uint64_t fingerprint_of(const quotient *f, bk_hash hash)
{
    return hash.h1 >> (64 - (f->log2_slots + f->remainder_bits));
}

/* The high bit of each r-bit field of t (fields marked by `lows`, their
 * bit 0) that is zero, or of a field above a zero one: nonzero exactly
 * when some field is zero (a borrow starts only at a zero field). */
static inline uint64_t zero_fields(uint64_t t, uint64_t lows, unsigned r)
{
    return (t - lows) & ~t & (lows << (r - 1));
}

/* Whether the run in slots [start, end] of a block (its remainders at
 * `remainders`) holds `value`, read as one window of fields compared all
 * at once: 1 or 0, or -1 when the window cannot tell -- a run longer than
 * the window, or one holding a counter (two equal neighbours: outside
 * counters a run's remainders strictly increase, so without such a pair
 * every slot is an entry's remainder). */
static inline int window_holds(const quotient *f, const uint8_t *remainders, unsigned start,
                               unsigned end, uint64_t value)
{
    unsigned length = end - start + 1, r = f->remainder_bits, at = start * r;
    if (length > f->window_fields)
        return -1;
    uint64_t used = ((uint64_t)1 << (length * r)) - 1;
    uint64_t lows = f->field_lows & used;
    uint64_t window = (bk_load_le64(remainders + at / 8) >> (at % 8)) & used;
    if (zero_fields(window ^ (window >> r), lows >> r, r) != 0)
        return -1;
    return zero_fields(window ^ (value * lows), lows, r) != 0;
}

/*
 * select_from(start, k), k >= 1: the slot of the k-th runend at or after
 * `start`; NOWHERE if the table has fewer.
 * end_bound(p): one past the last slot used by the runs of quotients <= p
 * (at most p when slot p is free: then no run covers it).
 */
#define DEFINE_WALK(SUFFIX, ATTRIBUTE, RANK, SELECT)                                            \
    /* The runs of quotients < 64 block end at the runs_before-th runend at \
     * or after *start (or, when runs_before is 0, right before *start):   \
     * from the block's own offset, or, when that saturated, from the     \
     * nearest earlier block whose offset did not (block 0's is 0), the    \
     * quotients of the blocks between counted into runs_before. */                   \
    ATTRIBUTE static inline uint64_t anchor_##SUFFIX(const quotient *f, uint64_t block,         \
                                                     uint64_t *runs_before)                     \
    {                                                                                           \
        unsigned offset = offset_byte(f, block);                                                \
        *runs_before = 0;                                                                       \
        if (__builtin_expect(offset == SATURATED, 0))                                           \
            do {                                                                                \
                block--;                                                                        \
                *runs_before += RANK(occupieds(f, block));                                      \
                offset = offset_byte(f, block);                                                 \
            } while (offset == SATURATED);                                                      \
        return block * BLOCK_SLOTS + offset;                                                    \
    }                                                                                           \
    ATTRIBUTE static uint64_t select_from_##SUFFIX(const quotient *f, uint64_t start,           \
                                                   uint64_t k)                                  \
    {                                                                                           \
        uint64_t block = start / BLOCK_SLOTS;                                                   \
        if (block >= f->blocks)                                                                 \
            return NOWHERE;                                                                     \
        uint64_t word = runends(f, block) & (~(uint64_t)0 << (start % BLOCK_SLOTS));            \
        for (;;) {                                                                              \
            uint64_t ones = RANK(word);                                                         \
            if (ones >= k)                                                                      \
                return block * BLOCK_SLOTS + SELECT(word, (unsigned)(k - 1));                   \
            k -= ones;                                                                          \
            if (++block >= f->blocks)                                                           \
                return NOWHERE;                                                                 \
            word = runends(f, block);                                                           \
        }                                                                                       \
    }                                                                                           \
    ATTRIBUTE static uint64_t end_bound_##SUFFIX(const quotient *f, uint64_t position)          \
    {                                                                                           \
        uint64_t block = position / BLOCK_SLOTS;                                                \
        unsigned bit = position % BLOCK_SLOTS;                                                  \
        uint64_t below = occupieds(f, block) & (((uint64_t)2 << bit) - 1);                      \
        uint64_t runs;                                                                          \
        uint64_t start = anchor_##SUFFIX(f, block, &runs);                                      \
        runs += RANK(below);                                                                    \
        if (runs == 0)                                                                          \
            return start;                                                                       \
        uint64_t end = select_from_##SUFFIX(f, start, runs);                                    \
        return end == NOWHERE ? NOWHERE : end + 1;                                              \
    }                                                                                           \
    /* The slots [*start, *end] of occupied x's run: one select for the end \
     * of the run before it, then the next runend. */                   \
    ATTRIBUTE static void run_of_##SUFFIX(const quotient *f, uint64_t x, uint64_t *start,       \
                                          uint64_t *end)                                        \
    {                                                                                           \
        uint64_t block = x / BLOCK_SLOTS;                                                       \
        unsigned bit = x % BLOCK_SLOTS;                                                         \
        uint64_t earlier;                                                                       \
        uint64_t after = anchor_##SUFFIX(f, block, &earlier);                                   \
        earlier += RANK(occupieds(f, block) & (((uint64_t)1 << bit) - 1));                      \
        if (earlier != 0)                                                                       \
            after = select_from_##SUFFIX(f, after, earlier) + 1;                                \
        *start = after > x ? after : x;                                                         \
        *end = next_bit(f, 1, *start, f->slots - 1);                                            \
    }                                                                                           \
    /* Where occupied x's run lies when it lies inside x's own block (the    \
     * block's offset byte below 64, the run's end among its runends): the   \
     * run's first and last slot in the block, from one rank and one or two  \
     * selects on the block's two words; false otherwise (a run reaching     \
     * into later blocks, a saturated offset: the general walk's cases). */                  \
    ATTRIBUTE static inline bool block_run_##SUFFIX(const uint8_t *block, unsigned bit,         \
                                                    unsigned *first, unsigned *last)            \
    {                                                                                           \
        unsigned offset = block[16];                                                            \
        uint64_t ends = offset < BLOCK_SLOTS ? bk_load_le64(block + 8) >> offset : 0;           \
        unsigned runs = RANK(bk_load_le64(block) & (((uint64_t)2 << bit) - 1));                 \
        unsigned end = SELECT(ends, runs - 1);                                                  \
        if (end >= BLOCK_SLOTS)                                                                 \
            return false;                                                                       \
        unsigned start = runs == 1 ? 0 : SELECT(ends, runs - 2) + 1;                            \
        *first = start + offset > bit ? start + offset : bit;                                   \
        *last = end + offset;                                                                   \
        return true;                                                                            \
    }                                                                                           \
    /* The query: x's block's words and one window of its remainders (the  \
     * remainder line requested before the metadata is read), the general  \
     * walk only when those cannot tell. */                    \
    ATTRIBUTE static bool contains_##SUFFIX(const quotient *f, uint64_t fingerprint)            \
    {                                                                                           \
        unsigned r = f->remainder_bits;                                                         \
        uint64_t x = fingerprint >> r;                                                          \
        unsigned bit = x % BLOCK_SLOTS, first, last;                                            \
        const uint8_t *block = block_at(f, x / BLOCK_SLOTS);                                    \
        __builtin_prefetch(block + HEADER_BYTES + bit * r / 8);                                 \
        if (!((bk_load_le64(block) >> bit) & 1))                                                \
            return false;                                                                       \
        int held = block_run_##SUFFIX(block, bit, &first, &last)                                \
                       ? window_holds(f, block + HEADER_BYTES, first, last,                     \
                                      fingerprint & f->remainder_mask)                          \
                       : -1;                                                                    \
        if (held >= 0)                                                                          \
            return held;                                                                        \
        return contains_generally(f, fingerprint);                                              \
    }                                                                                           \
    ATTRIBUTE static bool contains_key_##SUFFIX(const quotient *f, const void *key, size_t len) \
    {                                                                                           \
        return contains_##SUFFIX(f, fingerprint_of(f, bk_hash_inline(&f->hasher, key, len)));   \
    }                                                                                           \
    ATTRIBUTE static bool contains_u64_##SUFFIX(const quotient *f, uint64_t key)                \
    {                                                                                           \
        return contains_##SUFFIX(f, fingerprint_of(f, bk_hash_u64(&f->hasher, key)));           \
    }                                                                                           \
    /* The count: the run found as the query finds it, then parsed. */                          \
    ATTRIBUTE static uint64_t count_of_##SUFFIX(const quotient *f, uint64_t fingerprint)        \
    {                                                                                           \
        uint64_t x = fingerprint >> f->remainder_bits;                                          \
        unsigned bit = x % BLOCK_SLOTS, first, last;                                            \
        const uint8_t *block = block_at(f, x / BLOCK_SLOTS);                                    \
        if (!((bk_load_le64(block) >> bit) & 1))                                                \
            return 0;                                                                           \
        if (!block_run_##SUFFIX(block, bit, &first, &last))                                     \
            return lookup(f, fingerprint);                                                      \
        return count_in_run(f, fingerprint, x - bit + first, x - bit + last);                   \
    }                                                                                           \
    /* The insert of a new fingerprint whose run (or where it would start),  \
     * its place in the run and the first free slot after it all lie in x's  \
     * block: the slots from that place to the free slot shift up by one    \
     * within the block, and no other block's offset changes.  False,       \
     * changing nothing, for anything else (a saturated or large offset, a  \
     * counter in the run, the fingerprint already stored, a shift leaving  \
     * the block): the general insert's cases. */                  \
    ATTRIBUTE static bool insert_in_block_##SUFFIX(quotient *f, uint64_t fingerprint)           \
    {                                                                                           \
        unsigned r = f->remainder_bits;                                                         \
        uint64_t x = fingerprint >> r, value = fingerprint & f->remainder_mask;                 \
        unsigned bit = x % BLOCK_SLOTS;                                                         \
        uint8_t *block = f->table + (x / BLOCK_SLOTS) * f->block_bytes;                         \
        uint8_t *remainders = block + HEADER_BYTES;                                             \
        unsigned offset = block[16];                                                            \
        if (offset >= BLOCK_SLOTS)                                                              \
            return false;                                                                       \
        uint64_t occupied = bk_load_le64(block), ends = bk_load_le64(block + 8);                \
        uint64_t relative = ends >> offset;                                                     \
        bool run_exists = (occupied >> bit) & 1;                                                \
        unsigned before = RANK(occupied & (((uint64_t)1 << bit) - 1));                          \
        unsigned at = before == 0 ? offset : SELECT(relative, before - 1) + 1 + offset;         \
        if (at < bit)                                                                           \
            at = bit;                                                                           \
        unsigned last = 0;                                                                      \
        if (run_exists) {                                                                       \
            last = SELECT(relative, before) + offset;                                           \
            if (last >= BLOCK_SLOTS)                                                            \
                return false;                                                                   \
            for (;; at++) {                                                                     \
                uint64_t stored = remainder_in(remainders, at, r, f->remainder_mask);           \
                if (stored >= value) {                                                          \
                    if (stored == value)                                                        \
                        return false;                                                           \
                    break;                                                                      \
                }                                                                               \
                if (at == last) {                                                               \
                    at++;                                                                       \
                    break;                                                                      \
                }                                                                               \
                if (remainder_in(remainders, at + 1, r, f->remainder_mask) == stored)           \
                    return false; /* a counter */                                               \
            }                                                                                   \
        }                                                                                       \
        unsigned free_slot = at;                                                                \
        for (;;) {                                                                              \
            if (free_slot >= BLOCK_SLOTS)                                                       \
                return false;                                                                   \
            unsigned runs = RANK(occupied & (((uint64_t)2 << free_slot) - 1));                  \
            unsigned bound = runs == 0 ? offset : SELECT(relative, runs - 1) + 1 + offset;      \
            if (bound <= free_slot)                                                             \
                break;                                                                          \
            free_slot = bound;                                                                  \
        }                                                                                       \
        if (free_slot > at) {                                                                   \
            copy_bits(remainders, (at + 1) * r, remainders, at * r, (free_slot - at) * r,       \
                      true);                                                                    \
            uint64_t moving = (((uint64_t)1 << free_slot) - 1) & ~(((uint64_t)1 << at) - 1);    \
            ends = (ends & ~moving) | ((ends & moving) << 1);                                   \
        }                                                                                       \
        put_remainder_in(remainders, at, r, f->remainder_mask, value);                          \
        if (!run_exists) {                                                                      \
            occupied |= (uint64_t)1 << bit;                                                     \
            ends |= (uint64_t)1 << at;                                                          \
        } else if (at == last + 1) {                                                            \
            ends = (ends & ~((uint64_t)1 << last)) | ((uint64_t)1 << at);                       \
        }                                                                                       \
        bk_store_le64(block, occupied);                                                         \
        bk_store_le64(block + 8, ends);                                                         \
        return true;                                                                            \
    }                                                                                           \
    static const walk_ops walk_##SUFFIX = { select_from_##SUFFIX,  end_bound_##SUFFIX,          \
                                            run_of_##SUFFIX,       contains_##SUFFIX,           \
                                            contains_key_##SUFFIX, contains_u64_##SUFFIX,       \
                                            count_of_##SUFFIX,     insert_in_block_##SUFFIX };

DEFINE_WALK(portable, , bk_rank64_portable, bk_select64_portable)
#ifdef BK_QUOTIENT_HAVE_BMI2
DEFINE_WALK(hardware, __attribute__((target("popcnt,bmi,bmi2"))), bk_rank64_hardware,
            bk_select64_hardware)
#endif

static const walk_ops *choose_walk(void)
{
#ifdef BK_QUOTIENT_HAVE_BMI2
    if (bk_cpu()->popcnt && bk_cpu()->bmi2)
        return &walk_hardware;
#endif
    return &walk_portable;
}

/* The first slot of x's run (or where it would start). */
static inline uint64_t run_start(const quotient *f, uint64_t x)
{
    if (x == 0)
        return 0;
    uint64_t after_earlier = f->walk->end_bound(f, x - 1);
    return after_earlier > x ? after_earlier : x;
}

/* The first free slot at or after `slot`; NOWHERE past the table. */
static uint64_t first_free(const quotient *f, uint64_t slot)
{
    for (;;) {
        if (slot >= f->slots)
            return NOWHERE;
        uint64_t bound = f->walk->end_bound(f, slot);
        if (bound == NOWHERE)
            return NOWHERE;
        if (bound <= slot)
            return slot;
        slot = bound;
    }
}

/* Offset of block c (c >= 1) from the exact offset of block c - 1;
 * NOWHERE if the runends run out (a corrupt table). */
static uint64_t offset_after(const quotient *f, uint64_t c, uint64_t previous_offset)
{
    uint64_t start = (c - 1) * BLOCK_SLOTS + previous_offset;
    uint64_t runs = bk_rank64_portable(occupieds(f, c - 1));
    uint64_t bound = start;
    if (runs != 0) {
        uint64_t end = f->walk->select_from(f, start, runs);
        if (end == NOWHERE)
            return NOWHERE;
        bound = end + 1;
    }
    return bound > c * BLOCK_SLOTS ? bound - c * BLOCK_SLOTS : 0;
}

/* The exact offset of a block (its stored byte may have saturated). */
static uint64_t exact_offset(const quotient *f, uint64_t block)
{
    if (block == 0)
        return 0;
    uint64_t bound = f->walk->end_bound(f, block * BLOCK_SLOTS - 1);
    return bound > block * BLOCK_SLOTS ? bound - block * BLOCK_SLOTS : 0;
}

/* Recomputes the offsets of the blocks starting in (x, last], after a
 * change to the runs of quotients >= x only. */
static void refresh_offsets(quotient *f, uint64_t x, uint64_t last)
{
    uint64_t c = x / BLOCK_SLOTS + 1;
    if (c >= f->blocks || c * BLOCK_SLOTS > last)
        return;
    uint64_t offset = offset_byte(f, c - 1);
    if (offset == SATURATED)
        offset = exact_offset(f, c - 1);
    for (; c < f->blocks && c * BLOCK_SLOTS <= last; c++) {
        offset = offset_after(f, c, offset);
        set_offset(f, c, offset);
    }
}

/* ------------------------------------------------------------------------ */
/* Entries: a remainder and its count                                       */
/* ------------------------------------------------------------------------ */

static unsigned digits_of(uint64_t count, unsigned r)
{
    unsigned digits = 0;
    for (; count != 0; count = r >= 64 ? 0 : count >> r)
        digits++;
    return digits;
}

/* Writes the slots of (value, count), count >= 1, to out; their number. */
static unsigned encode_entry(const quotient *f, uint64_t value, uint64_t count,
                             uint64_t out[MAX_ENTRY_SLOTS])
{
    out[0] = value;
    if (count == 1)
        return 1;
    out[1] = value;
    if (count - 2 < f->remainder_mask) {
        out[2] = count - 2;
        return 3;
    }
    unsigned digits = digits_of(count, f->remainder_bits);
    out[2] = f->remainder_mask;
    out[3] = digits - 2;
    for (unsigned i = 0; i < digits; i++, count >>= f->remainder_bits)
        out[4 + i] = count & f->remainder_mask;
    return 4 + digits;
}

/* Decodes the entry at `slot` of a run ending at `run_end`; false when the
 * slots do not follow the grammar (only a corrupt file's can fail). */
static bool read_entry(const quotient *f, uint64_t slot, uint64_t run_end, entry *out)
{
    uint64_t value = remainder_at(f, slot);
    *out = (entry){ value, 1, 1 };
    if (slot == run_end || remainder_at(f, slot + 1) != value)
        return true;
    if (run_end - slot < 2)
        return false;
    uint64_t small = remainder_at(f, slot + 2);
    if (small != f->remainder_mask) {
        *out = (entry){ value, small + 2, 3 };
        return true;
    }
    if (run_end - slot < 3)
        return false;
    uint64_t digits = remainder_at(f, slot + 3) + 2;
    unsigned r = f->remainder_bits;
    if (digits * r > 64 + r - 1 || run_end - slot < 3 + digits)
        return false;
    uint64_t count = 0;
    for (uint64_t i = 0; i < digits; i++) {
        uint64_t digit = remainder_at(f, slot + 4 + i);
        if (i * r + (64 - (unsigned)__builtin_clzll(digit | 1)) > 64 && digit != 0)
            return false; /* beyond 64 bits */
        count |= digit << (i * r);
        if (i == digits - 1 && digit == 0)
            return false; /* not minimal */
    }
    if (count - 2 < f->remainder_mask)
        return false; /* should have been short */
    *out = (entry){ value, count, (unsigned)(4 + digits) };
    return true;
}

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */
/* ------------------------------------------------------------------------ */

static bk_status allocate(const quotient_design *d, const bk_hasher *hasher, unsigned flags,
                          quotient **out)
{
    quotient *f = calloc(1, sizeof *f);
    if (f == NULL)
        return BK_ENOMEM;
    f->log2_slots = d->log2_slots;
    f->remainder_bits = d->remainder_bits;
    f->home_slots = (uint64_t)1 << d->log2_slots;
    f->blocks = d->blocks;
    f->slots = d->blocks * BLOCK_SLOTS;
    f->block_bytes = HEADER_BYTES + 8u * d->remainder_bits;
    f->remainder_mask = ((uint64_t)1 << d->remainder_bits) - 1;
    f->capacity = d->capacity;
    f->target_fpr = d->target_fpr;
    f->flags = flags;
    f->walk = choose_walk();
    f->window_fields = (64 - 7) / d->remainder_bits;
    for (unsigned i = 0; i < f->window_fields; i++)
        f->field_lows |= (uint64_t)1 << (i * d->remainder_bits);
    f->hasher = *hasher;
    if (d->blocks > (SIZE_MAX - TAIL_PADDING) / f->block_bytes) {
        free(f);
        return BK_ERANGE;
    }
    f->table_bytes = (size_t)d->blocks * f->block_bytes + TAIL_PADDING;
    f->table = bk_alloc_zeroed(f->table_bytes);
    if (f->table == NULL) {
        free(f);
        return BK_ENOMEM;
    }
    *out = f;
    return BK_OK;
}

static void destroy(quotient *f)
{
    if (f == NULL)
        return;
    bk_free_zeroed(f->table, f->table_bytes);
    free(f);
}

static quotient_design design_of(const quotient *f)
{
    return (quotient_design){ f->capacity, f->log2_slots, f->remainder_bits, f->blocks,
                              f->target_fpr };
}

/* Moves the table and contents of `from` (then freed) into `into`. */
static void adopt(quotient *into, quotient *from)
{
    bk_free_zeroed(into->table, into->table_bytes);
    *into = *from;
    free(from);
}

/* ------------------------------------------------------------------------ */
/* Ordered reading: the cursor under iterate, merge and resize              */
/* ------------------------------------------------------------------------ */

typedef struct cursor {
    const quotient *f;
    uint64_t next_quotient; /* the next occupied quotient is at least this */
    uint64_t next_free;     /* first slot after the last run read */
    uint64_t quotient;      /* of the run being read */
    uint64_t slot;          /* next entry's slot in it */
    uint64_t run_end;       /* NOWHERE: between runs */
} cursor;

static void cursor_open(cursor *c, const quotient *f)
{
    *c = (cursor){ f, 0, 0, 0, 0, NOWHERE };
}

/* The next fingerprint and its count; false at the end (or, never for a
 * table this code wrote or a loader accepted, where the slots do not
 * parse). */
static bool cursor_next(cursor *c, uint64_t *fingerprint, uint64_t *count)
{
    const quotient *f = c->f;
    if (c->run_end == NOWHERE) {
        uint64_t x = next_bit(f, 0, c->next_quotient, f->slots - 1);
        if (x == NOWHERE)
            return false;
        uint64_t start = x > c->next_free ? x : c->next_free;
        uint64_t end = next_bit(f, 1, c->next_free, f->slots - 1);
        if (x >= f->home_slots || end == NOWHERE || end < start)
            return false;
        c->quotient = x;
        c->slot = start;
        c->run_end = end;
    }
    entry e;
    if (!read_entry(f, c->slot, c->run_end, &e))
        return false;
    *fingerprint = (c->quotient << f->remainder_bits) | e.value;
    *count = e.count;
    c->slot += e.length;
    if (c->slot > c->run_end) {
        c->next_free = c->run_end + 1;
        c->next_quotient = c->quotient + 1;
        c->run_end = NOWHERE;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Writing a table in order (merge, resize)                                 */
/* ------------------------------------------------------------------------ */

typedef struct writer {
    quotient *f; /* empty, of the target shape */
    uint64_t next_free;
    uint64_t last_quotient;
    bool any;
    bool full;
} writer;

/* Appends (fingerprint, count); fingerprints must come in increasing order. */
static void writer_put(writer *w, uint64_t fingerprint, uint64_t count)
{
    quotient *f = w->f;
    uint64_t x = fingerprint >> f->remainder_bits;
    uint64_t slots[MAX_ENTRY_SLOTS];
    unsigned length = encode_entry(f, fingerprint & f->remainder_mask, count, slots);
    bool same_run = w->any && x == w->last_quotient;
    uint64_t at = same_run || w->next_free > x ? w->next_free : x;
    if (w->full || x >= f->home_slots || at + length > f->slots ||
        f->used_slots + length > f->home_slots) {
        w->full = true;
        return;
    }
    if (same_run)
        set_runend(f, at - 1, false);
    else
        set_occupied(f, x, true);
    for (unsigned i = 0; i < length; i++)
        set_remainder(f, at + i, slots[i]);
    set_runend(f, at + length - 1, true);
    w->next_free = at + length;
    w->last_quotient = x;
    w->any = true;
    f->used_slots += length;
    f->distinct++;
    f->counted = f->counted + count < count ? UINT64_MAX : f->counted + count;
}

/* Sets every offset from the runs written. */
static void write_all_offsets(quotient *f)
{
    uint64_t offset = 0;
    for (uint64_t c = 1; c < f->blocks; c++) {
        offset = offset_after(f, c, offset);
        set_offset(f, c, offset);
    }
}

/* ------------------------------------------------------------------------ */
/* Insert and remove                                                        */
/* ------------------------------------------------------------------------ */

/* Where a fingerprint's entry is, or would go. */
typedef struct place {
    uint64_t quotient;
    uint64_t value;
    bool occupied;
    uint64_t run_start;
    uint64_t run_end; /* when occupied */
    uint64_t slot;    /* of the entry, or where a new one goes */
    entry found;      /* count 0: not stored */
} place;

/* The run of the fingerprint's quotient and, in it, its entry or the slot
 * where a new entry for it would go (for insert and remove). */
static place find(const quotient *f, uint64_t fingerprint)
{
    place p = { .quotient = fingerprint >> f->remainder_bits,
                .value = fingerprint & f->remainder_mask };
    p.occupied = is_occupied(f, p.quotient);
    if (!p.occupied) {
        p.run_start = p.slot = run_start(f, p.quotient);
        return p;
    }
    f->walk->run_of(f, p.quotient, &p.run_start, &p.run_end);
    p.slot = p.run_start;
    while (p.slot <= p.run_end) {
        entry e;
        read_entry(f, p.slot, p.run_end, &e);
        if (e.value >= p.value) {
            if (e.value == p.value)
                p.found = e;
            break;
        }
        p.slot += e.length;
    }
    return p;
}

/* The count of a fingerprint in the run [slot, run_end] of its quotient
 * (0: absent), parsed forward entry by entry. */
static uint64_t count_in_run(const quotient *f, uint64_t fingerprint, uint64_t slot,
                             uint64_t run_end)
{
    uint64_t value = fingerprint & f->remainder_mask;
    while (slot <= run_end) {
        uint64_t stored = remainder_at(f, slot);
        if (stored > value)
            return 0;
        entry e;
        read_entry(f, slot, run_end, &e);
        if (stored == value)
            return e.count;
        slot += e.length;
    }
    return 0;
}

/* The count of a fingerprint (0: absent) by the general walk, for any run
 * and any offset. */
static uint64_t lookup(const quotient *f, uint64_t fingerprint)
{
    uint64_t x = fingerprint >> f->remainder_bits;
    if (!is_occupied(f, x))
        return 0;
    uint64_t slot, run_end;
    f->walk->run_of(f, x, &slot, &run_end);
    return count_in_run(f, fingerprint, slot, run_end);
}

/* The query's answer by the general walk (out of line: the block path
 * stays small). */
static BK_NOINLINE bool contains_generally(const quotient *f, uint64_t fingerprint)
{
    return lookup(f, fingerprint) != 0;
}

/*
 * Opens `gap` free slots at `at` (x's run or where it starts): the slots
 * from `at` on shift right into the first `gap` free slots after them.
 * BK_EFULL, changing nothing, when the table has too few free slots after
 * `at`.  *last gets the last slot written.
 */
static bk_status open_gap(quotient *f, uint64_t at, unsigned gap, uint64_t *last)
{
    uint64_t free_slots[MAX_ENTRY_SLOTS];
    uint64_t from = at;
    for (unsigned j = 0; j < gap; j++) {
        free_slots[j] = first_free(f, from);
        if (free_slots[j] == NOWHERE)
            return BK_EFULL;
        from = free_slots[j] + 1;
    }
    *last = free_slots[gap - 1];
    for (unsigned j = gap; j-- > 0;) {
        uint64_t low = j == 0 ? at : free_slots[j - 1] + 1;
        move_slots(f, low, low + (gap - j), free_slots[j] - low);
    }
    for (unsigned i = 0; i < gap; i++)
        clear_slot(f, at + i);
    return BK_OK;
}

static bk_status reshape(quotient *f, unsigned new_log2_slots);

/* Whether automatic growth should double the table before `more` slots. */
static bool wants_growth(const quotient *f, unsigned more)
{
    return (f->flags & BK_FLAG_AUTO_GROW) && f->remainder_bits > MIN_R &&
           f->log2_slots < BK_QUOTIENT_MAX_LOG2_SLOTS &&
           (double)(f->used_slots + more) > BK_QUOTIENT_DESIGN_LOAD * (double)f->home_slots;
}

/* Adds `delta` >= 1 to the fingerprint's count. */
static bk_status insert(quotient *f, uint64_t fingerprint, uint64_t delta, bool *was_new)
{
    if (delta == 1 && f->used_slots < f->home_slots && !wants_growth(f, 1) &&
        f->walk->insert_in_block(f, fingerprint)) {
        f->used_slots++;
        f->distinct++;
        f->counted += f->counted != UINT64_MAX;
        if (was_new != NULL)
            *was_new = true;
        return BK_OK;
    }
    place p = find(f, fingerprint);
    uint64_t count = p.found.count + delta < delta ? UINT64_MAX : p.found.count + delta;
    uint64_t slots[MAX_ENTRY_SLOTS];
    unsigned length = encode_entry(f, p.value, count, slots);
    unsigned gap = length - p.found.length;
    if (gap != 0 && wants_growth(f, gap)) {
        bk_status status = reshape(f, f->log2_slots + 1);
        if (status == BK_ENOMEM)
            return status;
        if (status == BK_OK)
            return insert(f, fingerprint, delta, was_new);
    }
    if (gap != 0) {
        if (f->used_slots + gap > f->home_slots)
            return BK_EFULL;
        uint64_t at = p.slot + p.found.length;
        uint64_t last = at;
        /* A new quotient whose run would start at its home slot finds that
         * slot free (earlier runs end before it, later ones start after
         * it): nothing to move. */
        bool home_free = !p.occupied && p.slot == p.quotient && gap == 1;
        bk_status status = home_free ? BK_OK : open_gap(f, at, gap, &last);
        if (status != BK_OK)
            return status;
        if (!p.occupied) {
            set_occupied(f, p.quotient, true);
            set_runend(f, p.slot + length - 1, true);
        } else if (at == p.run_end + 1) {
            set_runend(f, p.run_end, false);
            set_runend(f, p.run_end + gap, true);
        }
        refresh_offsets(f, p.quotient, last);
        f->used_slots += gap;
    }
    for (unsigned i = 0; i < length; i++)
        set_remainder(f, p.slot + i, slots[i]);
    f->distinct += p.found.count == 0;
    f->counted = f->counted + delta < delta ? UINT64_MAX : f->counted + delta;
    if (was_new != NULL)
        *was_new = p.found.count == 0;
    return BK_OK;
}

/*
 * Closes `gap` slots at `hole` inside x's run [start, end]: the rest of the
 * run and then each later run of the cluster shift left, none before its
 * home slot, until a run stays where it is or the cluster ends.
 */
static void close_gap(quotient *f, uint64_t x, uint64_t start, uint64_t end, uint64_t hole,
                      unsigned gap)
{
    if (hole + gap <= end)
        move_slots(f, hole + gap, hole, end + 1 - hole - gap);
    uint64_t write = start;
    if (end - gap + 1 > start) {
        set_runend(f, end - gap, true);
        write = end - gap + 1;
    } else {
        set_occupied(f, x, false);
    }
    uint64_t read = end + 1;
    uint64_t y = x;
    while (read < f->slots) {
        y = next_bit(f, 0, y + 1, read);
        if (y == NOWHERE)
            break;
        uint64_t to = y > write ? y : write;
        if (to == read)
            break;
        uint64_t run_end = next_bit(f, 1, read, f->slots - 1);
        for (uint64_t slot = write; slot < to; slot++)
            clear_slot(f, slot); /* left behind: this run stops at its home */
        move_slots(f, read, to, run_end + 1 - read);
        write = to + (run_end - read) + 1;
        read = run_end + 1;
    }
    for (uint64_t slot = write; slot < read; slot++)
        clear_slot(f, slot);
    refresh_offsets(f, x, read);
}

/* Takes one from the fingerprint's count. */
static bk_status remove_one(quotient *f, uint64_t fingerprint)
{
    place p = find(f, fingerprint);
    if (p.found.count == 0)
        return BK_ENOTFOUND;
    uint64_t slots[MAX_ENTRY_SLOTS];
    unsigned length = 0;
    if (p.found.count != UINT64_MAX) {
        if (p.found.count > 1)
            length = encode_entry(f, p.value, p.found.count - 1, slots);
        for (unsigned i = 0; i < length; i++)
            set_remainder(f, p.slot + i, slots[i]);
        unsigned gap = p.found.length - length;
        if (gap != 0) {
            close_gap(f, p.quotient, p.run_start, p.run_end, p.slot + length, gap);
            f->used_slots -= gap;
        }
        f->distinct -= p.found.count == 1;
    }
    if (f->counted != UINT64_MAX)
        f->counted--;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Rebuilding in order: resize and merge                                    */
/* ------------------------------------------------------------------------ */

/* A new empty filter of `f`'s hasher and flags with 2^log2_slots home
 * slots and the same fingerprint width (so a remainder of q + r -
 * log2_slots bits); its capacity is f's scaled with the slots.
 * BK_ERANGE when that remainder or table is out of range. */
static bk_status reshaped(const quotient *f, unsigned log2_slots, quotient **out)
{
    unsigned width = f->log2_slots + f->remainder_bits;
    if (log2_slots > width || !valid_shape(log2_slots, width - log2_slots))
        return BK_ERANGE;
    quotient_design d = { .log2_slots = log2_slots, .remainder_bits = width - log2_slots };
    double capacity = ldexp((double)f->capacity, (int)log2_slots - (int)f->log2_slots);
    d.capacity = capacity >= 0x1p64 ? UINT64_MAX : capacity < 1 ? 1 : (uint64_t)capacity;
    finish_design(&d);
    if (design_bits(&d) > BK_MAX_BITS)
        return BK_ERANGE;
    return allocate(&d, &f->hasher, f->flags, out);
}

/* Lays the union of up to two sources, in fingerprint order, into `into`
 * (empty); BK_EFULL if it does not fit. */
static bk_status lay_out(quotient *into, const quotient *a, const quotient *b)
{
    cursor ca, cb;
    cursor_open(&ca, a);
    cursor_open(&cb, b != NULL ? b : a);
    uint64_t fa = 0, na = 0, fb = 0, nb = 0;
    bool has_a = cursor_next(&ca, &fa, &na);
    bool has_b = b != NULL && cursor_next(&cb, &fb, &nb);
    writer w = { .f = into };
    while ((has_a || has_b) && !w.full) {
        if (has_a && (!has_b || fa < fb)) {
            writer_put(&w, fa, na);
            has_a = cursor_next(&ca, &fa, &na);
        } else if (has_b && (!has_a || fb < fa)) {
            writer_put(&w, fb, nb);
            has_b = cursor_next(&cb, &fb, &nb);
        } else {
            writer_put(&w, fa, na + nb < na ? UINT64_MAX : na + nb);
            has_a = cursor_next(&ca, &fa, &na);
            has_b = cursor_next(&cb, &fb, &nb);
        }
    }
    if (w.full)
        return BK_EFULL;
    write_all_offsets(into);
    return BK_OK;
}

/* Re-lays f's fingerprints into 2^new_log2_slots home slots (one linear
 * pass); BK_EFULL if they do not fit, BK_ERANGE for a remainder out of
 * range. */
static bk_status reshape(quotient *f, unsigned new_log2_slots)
{
    quotient *result;
    bk_status status = reshaped(f, new_log2_slots, &result);
    if (status != BK_OK)
        return status;
    status = lay_out(result, f, NULL);
    if (status != BK_OK) {
        destroy(result);
        return status;
    }
    adopt(f, result);
    return BK_OK;
}

static bool load_fits(uint64_t used_slots, unsigned log2_slots)
{
    return (double)used_slots <= BK_QUOTIENT_DESIGN_LOAD * ldexp(1.0, (int)log2_slots);
}

/* The union of a and b (same hasher and width) in a new filter shaped
 * like a (reshaped) with 2^log2_slots home slots or, with `grow_freely`,
 * as many more as keep it under the design load; BK_EFULL when it does not
 * fit. */
static bk_status merged(const quotient *a, const quotient *b, unsigned log2_slots,
                        bool grow_freely, quotient **out)
{
    if (grow_freely)
        while (!load_fits(a->used_slots + b->used_slots, log2_slots))
            log2_slots++;
    for (;;) {
        quotient *result;
        bk_status status = reshaped(a, log2_slots, &result);
        if (status != BK_OK)
            return grow_freely && status == BK_ERANGE ? BK_EFULL : status;
        status = lay_out(result, a, b);
        if (status == BK_OK) {
            *out = result;
            return BK_OK;
        }
        destroy(result);
        if (status != BK_EFULL || !grow_freely)
            return status;
        log2_slots++;
    }
}

static bk_status compatible(const quotient *a, const quotient *b)
{
    if (!bk_hasher_equal(&a->hasher, &b->hasher) ||
        a->log2_slots + a->remainder_bits != b->log2_slots + b->remainder_bits)
        return BK_EINCOMPATIBLE;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

static void fill_design(const quotient_design *d, bk_hash_algorithm algorithm, bk_stats *out)
{
    memset(out, 0, sizeof *out);
    out->kind = BK_KIND_QUOTIENT;
    out->bits = design_bits(d);
    out->bytes = out->bits / 8;
    out->capacity = d->capacity;
    out->target_fpr = d->target_fpr;
    out->bits_per_key = (double)out->bits / (double)d->capacity;
    out->design_fill_ratio = (double)d->capacity / ldexp(1.0, (int)d->log2_slots);
    out->fingerprint_bits = d->remainder_bits;
    out->hash_algorithm = algorithm;
}

static bool past_design_point(const quotient *f)
{
    return f->distinct > f->capacity ||
           (double)f->used_slots > BK_QUOTIENT_DESIGN_LOAD * (double)f->home_slots;
}

static void stats(const quotient *f, bk_stats *out)
{
    quotient_design d = design_of(f);
    bk_stats s;
    fill_design(&d, f->hasher.algorithm, &s);
    s.keys_added = f->distinct;
    s.keys_estimated = (double)f->distinct;
    s.load_factor = (double)f->used_slots / (double)f->home_slots;
    s.fill_ratio = s.load_factor;
    s.current_fpr = predicted_fpr((double)f->distinct, f->log2_slots + f->remainder_bits);
    s.past_design_point = past_design_point(f);
    s.seed = f->hasher.seed;
    *out = s;
}

/* ------------------------------------------------------------------------ */
/* Loading: every structural invariant, checked                             */
/* ------------------------------------------------------------------------ */

/* Whether the table's bits, runs, entries, offsets and counters are what
 * this code writes, and agree with the counters in `expected`. */
static bool table_valid(const quotient *f, const quotient *expected)
{
    uint64_t occupied_total = 0, runend_total = 0;
    for (uint64_t b = 0; b < f->blocks; b++) {
        occupied_total += bk_rank64_portable(occupieds(f, b));
        runend_total += bk_rank64_portable(runends(f, b));
    }
    if (occupied_total != runend_total || offset_byte(f, 0) != 0)
        return false;
    /* Walk the runs: each starts where it must, and unused slots hold 0. */
    uint64_t next_free = 0, used = 0, distinct = 0, counted = 0;
    for (uint64_t x = next_bit(f, 0, 0, f->slots - 1); x != NOWHERE;
         x = x + 1 < f->slots ? next_bit(f, 0, x + 1, f->slots - 1) : NOWHERE) {
        uint64_t start = x > next_free ? x : next_free;
        uint64_t end = next_bit(f, 1, next_free, f->slots - 1);
        if (x >= f->home_slots || end == NOWHERE || end < start)
            return false;
        for (uint64_t slot = next_free; slot < start; slot++)
            if (remainder_at(f, slot) != 0)
                return false;
        uint64_t previous = 0;
        for (uint64_t slot = start; slot <= end;) {
            entry e;
            if (!read_entry(f, slot, end, &e) || (slot != start && e.value <= previous))
                return false;
            previous = e.value;
            slot += e.length;
            distinct++;
            counted = counted + e.count < e.count ? UINT64_MAX : counted + e.count;
        }
        used += end - start + 1;
        next_free = end + 1;
    }
    for (uint64_t slot = next_free; slot < f->slots; slot++)
        if (remainder_at(f, slot) != 0)
            return false;
    if (used != expected->used_slots || distinct != expected->distinct ||
        counted != expected->counted || used > f->home_slots)
        return false;
    uint64_t offset = 0;
    for (uint64_t c = 1; c < f->blocks; c++) {
        offset = offset_after(f, c, offset);
        if (offset == NOWHERE || (offset < SATURATED ? offset : SATURATED) != offset_byte(f, c))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* The kind's adapter: bk_filter dispatch and the file format               */
/* ------------------------------------------------------------------------ */

/*
 * Parameter block (64 bytes, little-endian; docs/FORMAT.md "quotient"):
 *     0  u32  q (log2 home slots)     4  u32  r (remainder bits)
 *     8  u64  blocks                 16  u64  capacity
 *    24  f64  target FPR             32  u64  used slots
 *    40  u64  distinct fingerprints  48  u64  sum of counts
 *    56  u32  flags (BK_FLAG_AUTO_GROW or 0)    60  u32  reserved, 0
 * Payload: the blocks, 17 + 8r bytes each, as in memory (see the top).
 */
#define QUOTIENT_PARAMS_SIZE 64

static size_t ops_params_size(const void *filter)
{
    (void)filter;
    return QUOTIENT_PARAMS_SIZE;
}

static void ops_write_params(const void *object, uint8_t *out)
{
    const quotient *f = object;
    bk_store_le32(out, f->log2_slots);
    bk_store_le32(out + 4, f->remainder_bits);
    bk_store_le64(out + 8, f->blocks);
    bk_store_le64(out + 16, f->capacity);
    bk_store_le_double(out + 24, f->target_fpr);
    bk_store_le64(out + 32, f->used_slots);
    bk_store_le64(out + 40, f->distinct);
    bk_store_le64(out + 48, f->counted);
    bk_store_le32(out + 56, f->flags);
    bk_store_le32(out + 60, 0);
}

static uint64_t ops_payload_size(const void *object)
{
    const quotient *f = object;
    return f->table_bytes - TAIL_PADDING;
}

static void ops_write_payload(const void *object, uint8_t *out)
{
    const quotient *f = object;
    memcpy(out, f->table, f->table_bytes - TAIL_PADDING);
}

static bk_status ops_read(const uint8_t *params, size_t params_size, const uint8_t *payload,
                          uint64_t payload_size, const bk_hasher *hasher, uint64_t keys_added,
                          bool in_place, void **out)
{
    /* Always copied (remainder loads read 8 bytes past the table); a
     * mapped file still gives a read-only filter, as with every kind. */
    if (params_size != QUOTIENT_PARAMS_SIZE)
        return BK_ECORRUPT;
    quotient_design d;
    d.log2_slots = bk_load_le32(params);
    d.remainder_bits = bk_load_le32(params + 4);
    d.blocks = bk_load_le64(params + 8);
    d.capacity = bk_load_le64(params + 16);
    d.target_fpr = bk_load_le_double(params + 24);
    quotient counters = { .used_slots = bk_load_le64(params + 32),
                          .distinct = bk_load_le64(params + 40),
                          .counted = bk_load_le64(params + 48) };
    unsigned flags = bk_load_le32(params + 56);
    if (d.log2_slots > BK_QUOTIENT_MAX_LOG2_SLOTS || d.remainder_bits < MIN_R ||
        d.remainder_bits > MAX_R || (flags & ~BK_FLAG_AUTO_GROW) != 0 ||
        bk_load_le32(params + 60) != 0 || d.capacity == 0 || !bk_stored_fpr_valid(d.target_fpr))
        return BK_ECORRUPT;
    if (d.blocks != blocks_for(d.log2_slots) ||
        payload_size != d.blocks * (HEADER_BYTES + 8u * d.remainder_bits) ||
        counters.distinct != keys_added || counters.used_slots > ((uint64_t)1 << d.log2_slots) ||
        counters.distinct > counters.used_slots || counters.counted < counters.distinct)
        return BK_ECORRUPT;
    if (design_bits(&d) > BK_MAX_BITS)
        return BK_ERANGE;
    quotient *f;
    bk_status status = allocate(&d, hasher, flags, &f);
    if (status != BK_OK)
        return status;
    memcpy(f->table, payload, (size_t)payload_size);
    if (!table_valid(f, &counters)) {
        destroy(f);
        return BK_ECORRUPT;
    }
    f->used_slots = counters.used_slots;
    f->distinct = counters.distinct;
    f->counted = counters.counted;
    f->read_only = in_place;
    *out = f;
    return BK_OK;
}

static bk_status ops_create(const bk_params *params, void **out)
{
    if (params->flags & BK_FLAG_CONCURRENT)
        return BK_EUNSUPPORTED;
    if ((params->flags & ~BK_FLAG_AUTO_GROW) != 0)
        return BK_EINVAL;
    quotient_design d;
    bk_status status = design_from_params(params, &d);
    if (status != BK_OK)
        return status;
    bk_hasher hasher;
    status = bk_hasher_from_params(&hasher, params);
    if (status != BK_OK)
        return status;
    return allocate(&d, &hasher, params->flags, (quotient **)out);
}

static void ops_destroy(void *filter) { destroy(filter); }

static bk_status ops_copy(const void *object, void **out)
{
    const quotient *f = object;
    quotient_design d = design_of(f);
    quotient *copy;
    bk_status status = allocate(&d, &f->hasher, f->flags, &copy);
    if (status != BK_OK)
        return status;
    memcpy(copy->table, f->table, f->table_bytes);
    copy->used_slots = f->used_slots;
    copy->distinct = f->distinct;
    copy->counted = f->counted;
    *out = copy;
    return BK_OK;
}

static bk_status ops_clear(void *object)
{
    quotient *f = object;
    if (f->read_only)
        return BK_EIMMUTABLE;
    memset(f->table, 0, f->table_bytes);
    f->used_slots = f->distinct = f->counted = 0;
    return BK_OK;
}

static const bk_hasher *ops_hasher(const void *object)
{
    return &((const quotient *)object)->hasher;
}

static bk_status ops_add_hash(void *object, bk_hash hash, bool *was_new)
{
    quotient *f = object;
    if (f->read_only)
        return BK_EIMMUTABLE;
    return insert(f, fingerprint_of(f, hash), 1, was_new);
}

static bk_status ops_add_u64(void *object, uint64_t key, bool *was_new)
{
    quotient *f = object;
    return ops_add_hash(f, bk_hash_u64(&f->hasher, key), was_new);
}

static bk_status ops_count_hash(const void *object, bk_hash hash, uint64_t *count)
{
    const quotient *f = object;
    *count = f->walk->count_of(f, fingerprint_of(f, hash));
    return BK_OK;
}

/* Adds in order, requesting each key's block PREFETCH_DISTANCE keys ahead;
 * stops at the first error (the keys before it are in). */
static bk_status ops_add_hash_batch(void *object, const bk_hash *hashes, size_t count,
                                    size_t *new_count)
{
    quotient *f = object;
    size_t fresh = 0;
    bk_status status = f->read_only ? BK_EIMMUTABLE : BK_OK;
    for (size_t i = 0; i < count && status == BK_OK; i++) {
        if (i + PREFETCH_DISTANCE < count) {
            uint64_t ahead = fingerprint_of(f, hashes[i + PREFETCH_DISTANCE]) >>
                             f->remainder_bits;
            __builtin_prefetch(block_at(f, ahead / BLOCK_SLOTS), 1);
        }
        bool was_new = false;
        status = insert(f, fingerprint_of(f, hashes[i]), 1, &was_new);
        fresh += status == BK_OK && was_new;
    }
    if (new_count != NULL)
        *new_count = fresh;
    return status;
}

static bool ops_contains_hash(const void *object, bk_hash hash)
{
    const quotient *f = object;
    return f->walk->contains(f, fingerprint_of(f, hash));
}

static bool ops_contains_key(const void *object, const void *key, size_t len)
{
    const quotient *f = object;
    return f->walk->contains_key(f, key, len);
}

static bool ops_contains_u64(const void *object, uint64_t key)
{
    const quotient *f = object;
    return f->walk->contains_u64(f, key);
}

static bk_status ops_remove_hash(void *object, bk_hash hash)
{
    quotient *f = object;
    if (f->read_only)
        return BK_EIMMUTABLE;
    return remove_one(f, fingerprint_of(f, hash));
}

static size_t ops_contains_hash_batch(const void *object, const bk_hash *hashes, size_t count,
                                      bool *results)
{
    const quotient *f = object;
    size_t present = 0;
    for (size_t i = 0; i < count; i++) {
        if (i + PREFETCH_DISTANCE < count) {
            uint64_t ahead = fingerprint_of(f, hashes[i + PREFETCH_DISTANCE]) >>
                             f->remainder_bits;
            __builtin_prefetch(block_at(f, ahead / BLOCK_SLOTS), 0);
        }
        bool hit = ops_contains_hash(object, hashes[i]);
        present += hit;
        if (results != NULL)
            results[i] = hit;
    }
    return present;
}

static bk_status ops_union_with(void *dst_object, const void *src_object)
{
    quotient *dst = dst_object;
    const quotient *src = src_object;
    if (dst->read_only)
        return BK_EIMMUTABLE;
    bk_status status = compatible(dst, src);
    if (status != BK_OK)
        return status;
    quotient *result;
    status = merged(dst, src, dst->log2_slots, (dst->flags & BK_FLAG_AUTO_GROW) != 0, &result);
    if (status != BK_OK)
        return status;
    adopt(dst, result);
    return BK_OK;
}

static void ops_stats(const void *filter, bk_stats *out) { stats(filter, out); }

static bk_status ops_design(const bk_params *params, bk_stats *out)
{
    quotient_design d;
    bk_status status = design_from_params(params, &d);
    if (status != BK_OK)
        return status;
    fill_design(&d, params->hash_algorithm, out);
    return BK_OK;
}

static bool ops_past_design_point(const void *filter) { return past_design_point(filter); }

const bk_kind_ops bk_quotient_ops = {
    .kind = BK_KIND_QUOTIENT,
    .name = "quotient",
    .kind_flags = BK_FLAG_AUTO_GROW,
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
    .remove_hash = ops_remove_hash,
    .count_hash = ops_count_hash,
    .add_hash_batch = ops_add_hash_batch,
    .contains_hash_batch = ops_contains_hash_batch,
    .union_with = ops_union_with,
    .stats = ops_stats,
    .design = ops_design,
    .params_size = ops_params_size,
    .write_params = ops_write_params,
    .payload_size = ops_payload_size,
    .write_payload = ops_write_payload,
    .read = ops_read,
    .past_design_point = ops_past_design_point,
};

/* ------------------------------------------------------------------------ */
/* The kind's own functions (bloomkit/quotient.h)                           */
/* ------------------------------------------------------------------------ */

static quotient *object_of(const bk_filter *filter)
{
    return bk_filter_object_of(filter, BK_KIND_QUOTIENT);
}

bk_status bk_quotient_get_info(const bk_filter *filter, bk_quotient_info *out)
{
    if (filter == NULL || out == NULL)
        return BK_EINVAL;
    const quotient *f = object_of(filter);
    if (f == NULL)
        return BK_EKIND;
    *out = (bk_quotient_info){
        .log2_slots = f->log2_slots,
        .remainder_bits = f->remainder_bits,
        .fingerprint_bits = f->log2_slots + f->remainder_bits,
        .home_slots = f->home_slots,
        .slots = f->slots,
        .used_slots = f->used_slots,
        .fingerprints = f->distinct,
        .counted = f->counted,
        .load = (double)f->used_slots / (double)f->home_slots,
        .auto_grow = (f->flags & BK_FLAG_AUTO_GROW) != 0,
    };
    return BK_OK;
}

bk_status bk_quotient_merge(const bk_filter *a, const bk_filter *b, bk_filter **out)
{
    if (a == NULL || b == NULL || out == NULL)
        return BK_EINVAL;
    const quotient *fa = object_of(a), *fb = object_of(b);
    if (fa == NULL || fb == NULL)
        return BK_EKIND;
    bk_status status = compatible(fa, fb);
    if (status != BK_OK)
        return status;
    unsigned log2_slots = fa->log2_slots > fb->log2_slots ? fa->log2_slots : fb->log2_slots;
    quotient *result;
    status = merged(fa, fb, log2_slots, true, &result);
    if (status != BK_OK)
        return status;
    uint64_t sum = fa->capacity + fb->capacity < fa->capacity ? UINT64_MAX
                                                              : fa->capacity + fb->capacity;
    if (sum > result->capacity) {
        result->capacity = sum;
        result->target_fpr = predicted_fpr((double)sum,
                                           result->log2_slots + result->remainder_bits);
    }
    status = bk_filter_wrap(&bk_quotient_ops, result, out);
    if (status != BK_OK)
        destroy(result);
    return status;
}

bk_status bk_quotient_resize(bk_filter *filter, unsigned new_log2_slots)
{
    if (filter == NULL)
        return BK_EINVAL;
    quotient *f = object_of(filter);
    if (f == NULL)
        return BK_EKIND;
    if (f->read_only)
        return BK_EIMMUTABLE;
    if (new_log2_slots == f->log2_slots)
        return BK_OK;
    return reshape(f, new_log2_slots);
}

bk_status bk_quotient_iterate(const bk_filter *filter, bk_quotient_visitor visit, void *context)
{
    if (filter == NULL || visit == NULL)
        return BK_EINVAL;
    const quotient *f = object_of(filter);
    if (f == NULL)
        return BK_EKIND;
    cursor c;
    cursor_open(&c, f);
    uint64_t fingerprint, count;
    while (cursor_next(&c, &fingerprint, &count))
        if (!visit(fingerprint, count, context))
            break;
    return BK_OK;
}

bk_status bk_quotient_fingerprint(const bk_filter *filter, bk_hash hash, uint64_t *out)
{
    if (filter == NULL || out == NULL)
        return BK_EINVAL;
    const quotient *f = object_of(filter);
    if (f == NULL)
        return BK_EKIND;
    *out = fingerprint_of(f, hash);
    return BK_OK;
}
