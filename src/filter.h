/*
 * src/filter.h -- the table of operations every kind provides (internal).
 *
 * Each kind's source file ends with one `const bk_kind_ops bk_<kind>_ops`
 * that adapts its functions to these signatures; the registry in
 * src/filter.c lists them and the handle dispatches the public bk_filter_*
 * calls through them; the file container (src/format.c) uses the
 * parameter/payload hooks to save and load any kind.
 *
 * Adding a kind
 * -------------
 *   1. The enum value: BK_KIND_<NAME> = next number in bk_kind
 *      (include/bloomkit/common.h), plus any bk_params / bk_stats fields
 *      the kind needs.
 *   2. The kind's source, src/<name>.c: its object, its operations (static
 *      functions; arguments arrive checked by the handle), and at its end
 *      `const bk_kind_ops bk_<name>_ops` with .kind, .name (the command-line
 *      name, unique) and every operation the handle requires: create (a
 *      dynamic kind) or build (a static kind, with is_static set and no
 *      add_hash), destroy, copy, hasher, contains_hash, contains_hash_batch,
 *      stats, design, params_size, write_params, payload_size,
 *      write_payload and read.  Declare the table below.
 *   3. The kind's header, include/bloomkit/<name>.h (included from
 *      include/bloomkit.h): only what is specific to the kind, each call
 *      taking a bk_filter * and reaching its object with
 *      bk_filter_object_of(filter, BK_KIND_<NAME>).
 *   4. One registry line in src/filter.c.
 *   5. CMake: src/<name>.c in the library's sources (CMakeLists.txt).
 * The handle, file container, tests (tests/test_filter.c checks every
 * registered table), fuzz targets, CLI (`bloomkit size`, --kind, help),
 * Redis INFO and benchmark find the kind through bk_kind_list.  Its
 * parameter block and payload are documented in docs/FORMAT.md, its calls
 * in docs/API.md; a new bk_params field the command line should set is an
 * option in cli/common.c (kind_options names the kinds it applies to).
 *
 * A NULL operation means the kind does not offer it: the dispatcher returns
 * BK_EUNSUPPORTED (BK_EIMMUTABLE for add on a static kind).
 */
#ifndef BK_SRC_FILTER_H
#define BK_SRC_FILTER_H

#include "bloomkit/filter.h"

typedef struct bk_kind_ops {
    bk_kind kind;
    const char *name;     /* as on the command line: "bloom" */
    bool is_static;       /* built once from a key set; no add */
    bool concurrent_adds; /* add may take BK_FLAG_CONCURRENT (static kinds: queries only,
                             * always concurrent) */
    unsigned kind_flags;  /* the kind's own BK_FLAG_* it accepts (BK_FLAG_PARQUET_SIZE,
                             * BK_FLAG_AUTO_GROW);
                             * another kind's gives BK_EUNSUPPORTED */

    bk_status (*create)(const bk_params *params, void **out);
    /* Static kinds: build from hashes (duplicates allowed). */
    bk_status (*build)(const bk_params *params, const bk_hasher *hasher, const bk_hash *hashes,
                       size_t count, void **out);
    void (*destroy)(void *filter);
    bk_status (*copy)(const void *filter, void **out);
    bk_status (*clear)(void *filter);
    const bk_hasher *(*hasher)(const void *filter);

    bk_status (*add_hash)(void *filter, bk_hash hash, bool *was_new);
    bool (*contains_hash)(const void *filter, bk_hash hash);
    bk_status (*remove_hash)(void *filter, bk_hash hash);
    bk_status (*count_hash)(const void *filter, bk_hash hash, uint64_t *count);
    bk_status (*add_hash_batch)(void *filter, const bk_hash *hashes, size_t count,
                                size_t *new_count);
    /* Required: the handle's batch queries, from hashes and (hashed a chunk
     * at a time) from keys, all come here; `results` may be NULL.  The kind
     * prefetches as its size calls for. */
    size_t (*contains_hash_batch)(const void *filter, const bk_hash *hashes, size_t count,
                                  bool *results);
    /* Optional: the one-key query from the key's bytes, the hash inlined
     * (one indirect call for bk_filter_contains instead of a hash call and
     * a second dispatch).  Same answer as contains_hash of the key's hash. */
    bool (*contains_key)(const void *filter, const void *key, size_t len);
    /* Optional: the one-key add from the key's bytes, likewise (the handle
     * calls it when no fill alarm is armed).  Same effect and result as
     * add_hash of the key's hash. */
    bk_status (*add_key)(void *filter, const void *key, size_t len, bool *was_new);
    /* Optional: the integer-key query and add (bk_filter_contains_u64 /
     * bk_filter_add_u64), the hash of the key's 8 little-endian bytes
     * inlined for the filter's algorithm, one indirect call from the
     * handle.  Same answer (effect, result) as contains_hash (add_hash) of
     * bk_hash_u64(hasher, key); add_u64 is called when no fill alarm is
     * armed.  Without them the handle hashes and calls the _hash ops. */
    bool (*contains_u64)(const void *filter, uint64_t key);
    bk_status (*add_u64)(void *filter, uint64_t key, bool *was_new);
    /* Optional: the contains_u64 function for this object, asked once when
     * the handle wraps it, so that a kind may answer with a copy
     * specialised for what the object fixes (its hash algorithm, its
     * rules) and test none of it per key; NULL: contains_u64 for all. */
    bool (*(*contains_u64_for)(const void *filter))(const void *filter, uint64_t key);

    bk_status (*union_with)(void *dst, const void *src);
    bk_status (*intersect_with)(void *dst, const void *src);
    bk_status (*estimate_sets)(const void *a, const void *b, bk_set_estimate *out);

    void (*stats)(const void *filter, bk_stats *out);
    /* The design a filter created from `params` would have, without
     * creating it: fills kind, bits, hashes, bytes, capacity, target_fpr,
     * bits_per_key (and kind-specific design fields); the rest zero. */
    bk_status (*design)(const bk_params *params, bk_stats *out);

    /*
     * File format (docs/FORMAT.md).  The container (src/format.c) writes
     * the common header (kind, hash algorithm, seed, keys added), then the
     * kind's parameter block and payload, both little-endian byte strings
     * the kind defines and documents in docs/FORMAT.md.
     */
    size_t (*params_size)(const void *filter);
    void (*write_params)(const void *filter, uint8_t *out);
    uint64_t (*payload_size)(const void *filter);
    void (*write_payload)(const void *filter, uint8_t *out);
    /*
     * Rebuilds a filter from a parameter block and payload that passed the
     * container's checks (magic, version, sizes, checksum).  It must check
     * every parameter against the others and against payload_size
     * (BK_ECORRUPT for a contradiction, BK_ERANGE beyond limits) before
     * allocating, and never allocate more than the payload justifies.
     * With `in_place` the payload is 64-byte aligned, outlives the filter,
     * and the host is little-endian: the kind may read it in place, making
     * a read-only filter (BK_EIMMUTABLE on writes).
     */
    bk_status (*read)(const uint8_t *params, size_t params_size, const uint8_t *payload,
                      uint64_t payload_size, const bk_hasher *hasher, uint64_t keys_added,
                      bool in_place, void **out);

    /* Optional: stats.past_design_point computed cheaply (no pass over the
     * memory), for kinds that count their keys exactly.  The fill alarm
     * (filter.c) then tests it after every new key; without it the alarm
     * checks the full stats on a schedule. */
    bool (*past_design_point)(const void *filter);

    /* Optional: moves a clock kept in the caller's time units (a window in
     * seconds) to `now`, as bk_filter_advance_clock documents; a filter of
     * the kind without such a clock answers BK_EUNSUPPORTED. */
    bk_status (*advance_clock)(void *filter, uint64_t now);
} bk_kind_ops;

/* A design FPR read from a parameter block: in [0, 1], or at most 1e-9
 * above 1, which the blocked and sbbf writers of bloomkit 0.1 before the
 * clamp in sizing.c stored for saturated designs (1 + 1.2e-11 at most);
 * such a file still loads and re-serialises to the same bytes.  NaN is
 * refused. */
static inline bool bk_stored_fpr_valid(double fpr) { return fpr >= 0 && fpr <= 1 + 1e-9; }

/* The ops of each kind this build implements. */
extern const bk_kind_ops bk_bloom_ops;
extern const bk_kind_ops bk_counting_ops;
extern const bk_kind_ops bk_cuckoo_ops;
extern const bk_kind_ops bk_scalable_ops;
extern const bk_kind_ops bk_window_ops;
extern const bk_kind_ops bk_blocked_ops;
extern const bk_kind_ops bk_sbbf_ops;
extern const bk_kind_ops bk_xor8_ops;
extern const bk_kind_ops bk_fuse8_ops;
extern const bk_kind_ops bk_fuse16_ops;
extern const bk_kind_ops bk_fuse8_4_ops;
extern const bk_kind_ops bk_quotient_ops;

/* The ops for `kind`, or NULL if this build does not implement it. */
const bk_kind_ops *bk_kind_ops_for(bk_kind kind);

/* A handle owning `object` of the kind `ops` describes (takes ownership
 * only on success). */
bk_status bk_filter_wrap(const bk_kind_ops *ops, void *object, bk_filter **out);

/* The ops of a handle. */
const bk_kind_ops *bk_filter_ops(const bk_filter *filter);

/* The object of `filter` when it is of kind `kind`, else NULL (a NULL
 * filter too): how a kind's own public calls -- its view, Parquet export,
 * sub-filter statistics -- reach their object through a handle, checked. */
void *bk_filter_object_of(const bk_filter *filter, bk_kind kind);


/* Memory the handle's object reads in place (a mapped file): `release`
 * (memory, size) runs in bk_filter_free after the object is destroyed. */
void bk_filter_attach_backing(bk_filter *filter, void *memory, size_t size,
                              void (*release)(void *memory, size_t size));

#endif
