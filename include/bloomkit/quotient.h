/*
 * bloomkit/quotient.h -- what only the quotient filter offers, on a
 * bk_filter handle of kind BK_KIND_QUOTIENT.
 *
 * The quotient filter (kind "quotient"; design and layout in
 * src/quotient.c, the whole story in docs/DELETION.md) is used like every
 * other kind through bloomkit/filter.h: bk_filter_create, _add, _contains,
 * _remove, _count, _union (a merge), _stats, and the file functions of
 * bloomkit/format.h.  It is a counting multiset of fingerprints: adding a
 * key k times makes bk_filter_count report at least k, and removing a key
 * that was added takes exactly one copy away.
 *
 *     bk_params params = { .capacity = 1000000, .fpr = 0.001 };
 *     bk_filter *filter;
 *     bk_filter_create(BK_KIND_QUOTIENT, &params, &filter);
 *     bk_filter_add(filter, "alice", 5, NULL);
 *     bk_quotient_resize(filter, 22);          // 2^22 home slots
 *
 * A count that reached 2^64 - 1 stays there (remove leaves it).  The
 * functions below take the handle and return BK_EKIND when it is not a
 * quotient filter, BK_EINVAL for NULL arguments, BK_EIMMUTABLE for a
 * filter mapped from a file when they would change it; on any error
 * nothing changes.
 */
#ifndef BLOOMKIT_QUOTIENT_H
#define BLOOMKIT_QUOTIENT_H

#include "bloomkit/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* Remainder widths a quotient filter accepts (bk_params.remainder_bits). */
#define BK_QUOTIENT_MIN_REMAINDER_BITS 4u
#define BK_QUOTIENT_MAX_REMAINDER_BITS 32u
/* The largest number of home slots, as a power of two. */
#define BK_QUOTIENT_MAX_LOG2_SLOTS 40u
/* The load the sizing aims at, and at which BK_FLAG_AUTO_GROW doubles. */
#define BK_QUOTIENT_DESIGN_LOAD 0.95

/* The shape and contents of a quotient filter (what `bloomkit info` shows
 * beside bk_stats). */
typedef struct bk_quotient_info {
    unsigned log2_slots;       /* q: 2^q home slots, one per quotient */
    unsigned remainder_bits;   /* r: bits stored per slot */
    unsigned fingerprint_bits; /* q + r: the stored part of each key's hash */
    uint64_t home_slots;       /* 2^q */
    uint64_t slots;            /* home slots plus the overflow slots after them */
    uint64_t used_slots;       /* slots holding remainders and counters */
    uint64_t fingerprints;     /* distinct fingerprints stored */
    uint64_t counted;          /* sum of their counts (saturates at 2^64 - 1) */
    double load;               /* used_slots / home_slots */
    bool auto_grow;            /* created with BK_FLAG_AUTO_GROW */
} bk_quotient_info;

bk_status bk_quotient_get_info(const bk_filter *filter, bk_quotient_info *out);

/*
 * A new filter holding the union of a and b, as multisets (counts add,
 * saturating at 2^64 - 1), made in one linear pass over both in
 * fingerprint order, without the original keys.  a and b must have the
 * same hasher and the same fingerprint width q + r (BK_EINCOMPATIBLE
 * otherwise); the result has the larger q of the two, or more when
 * growing is needed to keep the load at most BK_QUOTIENT_DESIGN_LOAD (each
 * doubling takes one bit from the remainder; BK_EFULL when the remainder
 * would drop below BK_QUOTIENT_MIN_REMAINDER_BITS).  bk_filter_union(dst,
 * src) merges src into dst the same way, growing dst only with
 * BK_FLAG_AUTO_GROW (else BK_EFULL when the union does not fit).
 */
bk_status bk_quotient_merge(const bk_filter *a, const bk_filter *b, bk_filter **out);

/*
 * Re-lays the filter into 2^new_log2_slots home slots, in one linear pass.
 * Each fingerprint keeps its q + r bits: growing by one doubling moves the
 * top bit of every remainder into its quotient (r drops by one), shrinking
 * moves the low quotient bit back into the remainder.  Every stored key
 * stays present with its count, and the false-positive rate for the keys
 * stored does not change (it is fingerprints / 2^(q+r)); the design
 * capacity scales with the slots.  BK_ERANGE when the new remainder would
 * leave [BK_QUOTIENT_MIN_REMAINDER_BITS, BK_QUOTIENT_MAX_REMAINDER_BITS]
 * or the table the size limits; BK_EFULL when the fingerprints do not fit
 * the smaller table; BK_ENOMEM.  Equal to q: nothing to do.
 */
bk_status bk_quotient_resize(bk_filter *filter, unsigned new_log2_slots);

/* Called with each stored fingerprint (its q + r bits, the quotient in the
 * high bits) and its count, in increasing fingerprint order; return false
 * to stop. */
typedef bool (*bk_quotient_visitor)(uint64_t fingerprint, uint64_t count, void *context);

/* Visits every stored fingerprint in order. */
bk_status bk_quotient_iterate(const bk_filter *filter, bk_quotient_visitor visit, void *context);

/* The fingerprint a key's hash gives in this filter (for comparing with
 * what bk_quotient_iterate reports). */
bk_status bk_quotient_fingerprint(const bk_filter *filter, bk_hash hash, uint64_t *out);

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_QUOTIENT_H */
