/*
 * redis/value.h -- what a bloomkit key holds, and its byte encoding.
 *
 * One module type holds every filter; the FAMILY says which commands own
 * the key (BF.* on a BF key, CF.* on a CF key, BK.* on any), so that the
 * RedisBloom-compatible commands answer WRONGTYPE across families as
 * RedisBloom does with its two types.
 *
 *   family BF  one `scalable` filter (NONSCALING: a chain of one)
 *   family CF  a chain of 1..BKR_MAX_FILTERS `cuckoo` filters: a full
 *              cuckoo filter (its victim stash taken) is frozen and a new
 *              one, `expansion` times bigger, takes the adds; queries ask
 *              every link, deletes try the newest first
 *   family BK  one filter of any kind (BK.RESERVE, BK.BUILD, BK.LOAD)
 *
 * The encoding ("value blob") is what SCANDUMP streams, LOADCHUNK and the
 * RDB loader accept, and what the fuzz target feeds: a header, then each
 * filter in bloomkit's own file format (docs/FORMAT.md), back to back.
 * All integers little-endian:
 *
 *   offset  size  field
 *        0     4  magic "BKRV"
 *        4     4  encoding version (BKR_ENCODING_VERSION = 1)
 *        8     4  family (1 BF, 2 CF, 3 BK)
 *       12     4  number of filters n (1 .. BKR_MAX_FILTERS; 1 unless CF)
 *       16     8  expansion (BF: 0 = NONSCALING; CF: growth factor)
 *       24     8  bucket size (CF, as requested; reported by CF.INFO)
 *       32     8  max iterations (CF, as requested)
 *       40     8  items (CF: adds minus deletes)
 *       48     8  deletes (CF)
 *       56   8 n  byte size of each filter's file image
 *   56 + 8 n      the n file images
 *
 * Every field is checked before anything is allocated (sizes against
 * BKR_MAX_FILTER_BYTES and against the bytes actually present), and each
 * image goes through bk_filter_deserialize, the library's validating
 * loader, with the kind its family requires.
 */
#ifndef BLOOMKIT_REDIS_VALUE_H
#define BLOOMKIT_REDIS_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomkit/filter.h"
#include "bloomkit/format.h"

#define BKR_ENCODING_VERSION 1
#define BKR_MAX_FILTERS 64u
#define BKR_HEADER_FIXED 56u
/* Largest file image accepted from outside: 64 GiB. */
#define BKR_MAX_FILTER_BYTES ((uint64_t)1 << 36)

typedef enum bkr_family { BKR_BF = 1, BKR_CF = 2, BKR_BK = 3 } bkr_family;

/* The family's fields, saved with the value. */
typedef struct bkr_meta {
    bkr_family family;
    uint32_t filter_count;
    uint64_t expansion;
    uint64_t bucket_size;
    uint64_t max_iterations;
    uint64_t items;
    uint64_t deletes;
} bkr_meta;

/* The header, decoded: the fields and each image's size. */
typedef struct bkr_header {
    bkr_meta meta;
    uint64_t filter_bytes[BKR_MAX_FILTERS];
} bkr_header;

typedef struct bkr_value {
    bkr_meta meta;
    bk_filter **filters; /* meta.filter_count of them, oldest first */
    /* Run-time state, never saved. */
    bool past_design_point; /* counted in INFO bloomkit */
    bool crossing_pending;  /* the fill alarm fired: notify after the command */
    /* CF: adds the newest link takes before it passes its capacity (the
     * module keeps the count instead of a library fill alarm, whose adds
     * would ask each time whether the item was new: a second bucket read),
     * and whether an add took it past its design point (capacity exceeded,
     * or its stash taken: the chain grew or could not). */
    uint64_t cf_room;
    bool cf_crossed;
    bk_stats newest_stats;   /* bk_filter_stats of the newest filter ... */
    bool newest_stats_valid; /* ... until the next write (BF adds within a
                              * link move keys_added on instead) */
    uint8_t *dump;           /* SCANDUMP's encoding, kept between chunks */
    size_t dump_size;
    uint8_t *loading; /* LOADCHUNK bytes received so far (key not usable yet) */
    size_t loading_size, loading_expected;
    struct bkr_value *prev, *next; /* the module's list of live values (INFO bloomkit) */
} bkr_value;

/* A value of `family` owning `filter` (NULL on allocation failure, and then
 * the filter is freed). */
bkr_value *bkr_value_wrap(bkr_family family, bk_filter *filter);
/* Frees the value and its filters; NULL is ignored. */
void bkr_value_free(bkr_value *value);
/* An independent copy (filters, meta; no run-time state).  BK_ENOMEM. */
bk_status bkr_value_copy(const bkr_value *value, bkr_value **out);
/* The newest filter (where adds go). */
bk_filter *bkr_value_newest(const bkr_value *value);
/* Bytes of filter memory (each filter's serialised size: its memory and
 * a small header) plus the value's own; constant time per filter. */
size_t bkr_value_memory(const bkr_value *value);

/* Header bytes for value (BKR_HEADER_FIXED + 8 n), into a new buffer;
 * BK_ENOMEM or the library's serialized_size errors. */
bk_status bkr_header_encode(const bkr_value *value, uint8_t **out, size_t *size);
/* Checks and decodes header bytes; BK_ETRUNCATED when fewer than the
 * header declares, BK_EMAGIC, BK_EVERSION, BK_ECORRUPT (family, count,
 * sizes), BK_ERANGE (a size above BKR_MAX_FILTER_BYTES).  *header_size
 * receives the header's length. */
bk_status bkr_header_decode(const void *bytes, size_t size, bkr_header *out,
                            size_t *header_size);
/* Sum of the header and every image: the blob's total length. */
uint64_t bkr_header_total(const bkr_header *header);
/* Loads one image for filter `index` of a value described by header,
 * through bk_filter_deserialize with the family's kind. */
bk_status bkr_image_decode(const bkr_header *header, unsigned index, const void *bytes,
                           size_t size, bk_filter **out);
/* A value from its header and loaded filters (takes the filters, freeing
 * them on failure); checks family invariants. */
bk_status bkr_value_assemble(const bkr_header *header, bk_filter **filters, bkr_value **out);

/* The whole blob (header + images) in a new malloc'd buffer. */
bk_status bkr_value_encode(const bkr_value *value, uint8_t **out, size_t *size);
/* A value from a whole blob; any error of the steps above, BK_EOVERSIZE
 * for trailing bytes. */
bk_status bkr_value_decode(const void *bytes, size_t size, bkr_value **out);

/* ---- family operations ------------------------------------------------ */

/* CF chain: add (duplicates allowed), growing the chain by `expansion`
 * when the newest link's stash is taken (BK_EFULL when it may not grow:
 * expansion 0 or max_links reached).  Items counted; cf_room and
 * cf_crossed kept. */
bk_status bkr_cf_add(bkr_value *value, const void *item, size_t len, unsigned max_links);
/* True if any link may hold the item. */
bool bkr_value_contains(const bkr_value *value, const void *item, size_t len);
/* results[i]: true if any link may hold keys[i], through the library's
 * batch queries (hashed and prefetched ahead of the probes).  BK_ENOMEM
 * (results untouched) if a link's scratch array cannot be allocated. */
bk_status bkr_value_contains_batch(const bkr_value *value, const bk_key *keys, size_t count,
                                   bool *results);
/* Sum of the links' counts. */
uint64_t bkr_value_count(const bkr_value *value, const void *item, size_t len);
/* Deletes one copy, newest link first: BK_OK, BK_ENOTFOUND (cf_room
 * grows back when the copy was in the newest link). */
bk_status bkr_cf_delete(bkr_value *value, const void *item, size_t len);

#endif /* BLOOMKIT_REDIS_VALUE_H */
