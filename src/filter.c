/*
 * src/filter.c -- the bk_filter handle: a kind's ops table and its object.
 *
 *     bk_filter { ops -> bk_kind_ops of the kind,  object -> bk_bloom / ... }
 *
 * Every public bk_filter_* call checks its arguments, then makes one
 * indirect call through the kind's table (src/filter.h); the one-key
 * calls (add, contains and their _u64 forms) through the function the
 * handle chose for them when it was made (choose_one_key_calls).
 */
#include "filter.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit/window.h"
#include "hash.h"
#include "memory.h"

struct bk_filter {
    const bk_kind_ops *ops;
    void *object;
    const bk_hasher *hasher; /* the object's hasher (it never moves): read once */
    /* The integer-key calls' functions and their first arguments, chosen
     * once in bk_filter_wrap: the kind's contains_u64 (the copy its
     * contains_u64_for picks for the object) / add_u64 with the object,
     * or (a kind without them) this file's hash-then-_hash-op functions
     * with the handle; so a call is one indirect jump. */
    bool (*contains_u64)(const void *target, uint64_t key);
    const void *contains_u64_target;
    bk_status (*add_u64)(void *target, uint64_t key, bool *was_new);
    void *add_u64_target;
    /* The same for the byte-key calls (the kind's contains_key / add_key). */
    bool (*contains_key)(const void *target, const void *key, size_t len);
    const void *contains_key_target;
    bk_status (*add_key)(void *target, const void *key, size_t len, bool *was_new);
    void *add_key_target;
    /* Fill alarm (see the end of this file). */
    bk_fill_alarm alarm;
    void *alarm_context;
    uint64_t alarm_countdown; /* new keys until the next check; 0: none armed (or it
                               * fired); ALARM_CHECKING: a check is running.  Atomic,
                               * as the two below: adds may be concurrent */
    uint64_t alarm_missed;    /* new keys added while a check ran, for it to count */
    bool alarm_recheck;       /* an add asked for a check while one ran */
    void *backing;            /* memory the object reads in place (mapped file), or NULL */
    size_t backing_size;
    void (*release_backing)(void *memory, size_t size);
};

static void alarm_after_adds(bk_filter *filter, size_t new_keys, bk_status status);
static void alarm_rearm(bk_filter *filter);
static void choose_one_key_calls(bk_filter *filter);

static inline uint64_t alarm_countdown(const bk_filter *filter)
{
    return __atomic_load_n(&filter->alarm_countdown, __ATOMIC_ACQUIRE);
}

/*
 * The registry: every kind this build implements, one line each, in the
 * order bk_kind_list gives them (`bloomkit size` prints them so: keep it
 * the enum's).  A kind's name, static-ness and every operation come from
 * its ops table; nothing else lists the kinds.
 */
static const bk_kind_ops *const registry[] = {
    &bk_bloom_ops,   &bk_blocked_ops,  &bk_sbbf_ops,   &bk_counting_ops,
    &bk_cuckoo_ops,  &bk_xor8_ops,     &bk_fuse8_ops,  &bk_fuse16_ops,
    &bk_fuse8_4_ops, &bk_scalable_ops, &bk_window_ops, &bk_quotient_ops,
};

#define KIND_COUNT (sizeof registry / sizeof registry[0])

const bk_kind_ops *bk_kind_ops_for(bk_kind kind)
{
    for (size_t i = 0; i < KIND_COUNT; i++)
        if (registry[i]->kind == kind)
            return registry[i];
    return NULL;
}

size_t bk_kind_list(bk_kind *out, size_t capacity)
{
    for (size_t i = 0; i < KIND_COUNT && i < capacity && out != NULL; i++)
        out[i] = registry[i]->kind;
    return KIND_COUNT;
}

const char *bk_kind_name(bk_kind kind)
{
    const bk_kind_ops *ops = bk_kind_ops_for(kind);
    return ops == NULL ? NULL : ops->name;
}

bk_status bk_kind_from_name(const char *name, bk_kind *out)
{
    if (name == NULL || out == NULL)
        return BK_EINVAL;
    for (size_t i = 0; i < KIND_COUNT; i++) {
        if (strcmp(registry[i]->name, name) == 0) {
            *out = registry[i]->kind;
            return BK_OK;
        }
    }
    return BK_EKIND;
}

bool bk_kind_available(bk_kind kind) { return bk_kind_ops_for(kind) != NULL; }

bool bk_kind_is_static(bk_kind kind)
{
    const bk_kind_ops *ops = bk_kind_ops_for(kind);
    return ops != NULL && ops->is_static;
}

bk_status bk_filter_wrap(const bk_kind_ops *ops, void *object, bk_filter **out)
{
    if (ops == NULL || object == NULL || out == NULL)
        return BK_EINVAL;
    bk_filter *filter = calloc(1, sizeof *filter);
    if (filter == NULL)
        return BK_ENOMEM;
    filter->ops = ops;
    filter->object = object;
    filter->hasher = ops->hasher(object);
    choose_one_key_calls(filter);
    filter->backing = NULL;
    filter->backing_size = 0;
    filter->release_backing = NULL;
    *out = filter;
    return BK_OK;
}

void bk_filter_attach_backing(bk_filter *filter, void *memory, size_t size,
                              void (*release)(void *memory, size_t size))
{
    filter->backing = memory;
    filter->backing_size = size;
    filter->release_backing = release;
}

const bk_kind_ops *bk_filter_ops(const bk_filter *filter) { return filter->ops; }

void *bk_filter_object_of(const bk_filter *filter, bk_kind kind)
{
    return filter != NULL && filter->ops->kind == kind ? filter->object : NULL;
}

static bk_status wrap_or_destroy(const bk_kind_ops *ops, void *object, bk_filter **out)
{
    bk_status status = bk_filter_wrap(ops, object, out);
    if (status != BK_OK)
        ops->destroy(object);
    return status;
}

/* The checks every kind's create, build and design share, made before the
 * kind's own (so that bk_kind_design and bk_filter_create / _build report
 * the same first error): flags bloomkit does not know (BK_EINVAL),
 * BK_FLAG_CONCURRENT on a kind whose adds cannot take it
 * (BK_EUNSUPPORTED), then the hash algorithm, seed and key
 * (bk_hasher_init: BK_EINVAL, or BK_EKEY for SipHash without a key). */
static bk_status check_common_params(const bk_kind_ops *ops, const bk_params *params)
{
    if (params->flags & ~(BK_FLAG_CONCURRENT | BK_FLAG_PARQUET_SIZE | BK_FLAG_AUTO_GROW |
                          BK_FLAG_COUNTING_CLASSIC | BK_FLAG_BLOCKED_STAGES))
        return BK_EINVAL;
    if (params->flags & ~BK_FLAG_CONCURRENT & ~ops->kind_flags)
        return BK_EUNSUPPORTED;
    if ((params->flags & BK_FLAG_CONCURRENT) && !ops->is_static && !ops->concurrent_adds)
        return BK_EUNSUPPORTED;
    bk_hasher hasher;
    bk_status status = bk_hasher_from_params(&hasher, params);
    memset(&hasher, 0, sizeof hasher); /* do not leave the key behind */
    return status;
}

bk_status bk_filter_create(bk_kind kind, const bk_params *params, bk_filter **out)
{
    const bk_kind_ops *ops = bk_kind_ops_for(kind);
    if (ops == NULL)
        return BK_EKIND;
    if (params == NULL || out == NULL)
        return BK_EINVAL;
    if (ops->is_static || ops->create == NULL)
        return BK_EIMMUTABLE;
    bk_status status = check_common_params(ops, params);
    if (status != BK_OK)
        return status;
    void *object;
    status = ops->create(params, &object);
    if (status != BK_OK)
        return status;
    return wrap_or_destroy(ops, object, out);
}

static bk_status add_in_chunks(bk_filter *filter, const bk_batch_source *source, size_t count,
                               size_t *new_count);

/* The hashes of a static kind's keys, hashed BK_KEY_CHUNK at a time as the
 * batches hash them. */
static bk_status hash_all(const bk_hasher *hasher, const bk_batch_source *source, size_t count,
                          bk_hash **out)
{
    if (count > SIZE_MAX / sizeof(bk_hash))
        return BK_ERANGE;
    /* Whole huge pages for a big set (a 4 KiB page fault costs microseconds
     * on a virtual machine: 4096 of them for 10^6 keys). */
    bk_hash *hashes = bk_alloc_zeroed(bk_huge_round(count * sizeof *hashes));
    if (hashes == NULL)
        return BK_ENOMEM;
    for (size_t start = 0; start < count; start += BK_KEY_CHUNK) {
        size_t n = count - start < BK_KEY_CHUNK ? count - start : BK_KEY_CHUNK;
        bk_source_hashes(hasher, source, start, n, hashes + start);
    }
    *out = hashes;
    return BK_OK;
}

static bk_status build_static(const bk_kind_ops *ops, const bk_params *params,
                              const bk_batch_source *source, size_t count, void **object)
{
    bk_hasher hasher;
    bk_status status = bk_hasher_from_params(&hasher, params);
    if (status != BK_OK)
        return status;
    if (source->hashes != NULL)
        return ops->build(params, &hasher, source->hashes, count, object);
    bk_hash *hashes;
    status = hash_all(&hasher, source, count, &hashes);
    if (status != BK_OK)
        return status;
    status = ops->build(params, &hasher, hashes, count, object);
    bk_free_zeroed(hashes, bk_huge_round(count * sizeof *hashes));
    return status;
}

/* True when hashes made with the hasher `params` asks for are the ones
 * `filter` (created from them) hashes its keys to. */
static bool hashes_are_the_filters(const bk_params *params, const bk_filter *filter)
{
    bk_hasher asked;
    if (bk_hasher_from_params(&asked, params) != BK_OK)
        return false;
    const bk_hasher *used = bk_filter_hasher(filter);
    bool same = used->algorithm == asked.algorithm && used->seed == asked.seed;
    memset(&asked, 0, sizeof asked); /* do not leave a secret key behind */
    return same;
}

/* bk_filter_build, _build_packed and _build_hashes once their arguments are
 * checked: a static kind built from the source's hashes; a dynamic kind
 * created (.capacity defaulting to count) and filled from the source. */
static bk_status build_from_source(const bk_kind_ops *ops, const bk_params *params,
                                   const bk_batch_source *source, size_t count, bk_filter **out)
{
    bk_status status = check_common_params(ops, params);
    if (status != BK_OK)
        return status;
    if (ops->build != NULL) {
        void *object;
        status = build_static(ops, params, source, count, &object);
        if (status != BK_OK)
            return status;
        return wrap_or_destroy(ops, object, out);
    }
    bk_params sized = *params;
    if (sized.capacity == 0)
        sized.capacity = count ? count : 1;
    bk_filter *filter;
    status = bk_filter_create(ops->kind, &sized, &filter);
    if (status != BK_OK)
        return status;
    if (source->hashes != NULL && !hashes_are_the_filters(params, filter))
        status = BK_EINVAL; /* sbbf hashes with XXH64 unless told otherwise */
    else
        status = add_in_chunks(filter, source, count, NULL);
    if (status != BK_OK) {
        bk_filter_free(filter);
        return status;
    }
    *out = filter;
    return BK_OK;
}

bk_status bk_filter_build(bk_kind kind, const bk_params *params, const bk_key *keys,
                          size_t count, bk_filter **out)
{
    const bk_kind_ops *ops = bk_kind_ops_for(kind);
    if (ops == NULL)
        return BK_EKIND;
    if (count > SIZE_MAX / sizeof(bk_hash))
        return BK_ERANGE;
    if (params == NULL || out == NULL || !bk_keys_valid(keys, count))
        return BK_EINVAL;
    bk_batch_source source = { .keys = keys };
    return build_from_source(ops, params, &source, count, out);
}

bk_status bk_filter_build_packed(bk_kind kind, const bk_params *params, const void *keys,
                                 size_t key_len, size_t count, bk_filter **out)
{
    const bk_kind_ops *ops = bk_kind_ops_for(kind);
    if (ops == NULL)
        return BK_EKIND;
    if (count > SIZE_MAX / sizeof(bk_hash))
        return BK_ERANGE;
    if (params == NULL || out == NULL || !bk_packed_valid(keys, key_len, count))
        return BK_EINVAL;
    bk_batch_source source = { .packed = keys, .key_len = key_len };
    return build_from_source(ops, params, &source, count, out);
}

bk_status bk_filter_build_hashes(bk_kind kind, const bk_params *params, const bk_hash *hashes,
                                 size_t count, bk_filter **out)
{
    const bk_kind_ops *ops = bk_kind_ops_for(kind);
    if (ops == NULL)
        return BK_EKIND;
    if (params == NULL || out == NULL || (hashes == NULL && count > 0))
        return BK_EINVAL;
    bk_batch_source source = { .hashes = hashes };
    return build_from_source(ops, params, &source, count, out);
}

void bk_filter_free(bk_filter *filter)
{
    if (filter == NULL)
        return;
    filter->ops->destroy(filter->object);
    if (filter->release_backing != NULL)
        filter->release_backing(filter->backing, filter->backing_size);
    free(filter);
}

bk_status bk_filter_copy(const bk_filter *filter, bk_filter **out)
{
    if (filter == NULL || out == NULL)
        return BK_EINVAL;
    void *object;
    bk_status status = filter->ops->copy(filter->object, &object);
    if (status != BK_OK)
        return status;
    return wrap_or_destroy(filter->ops, object, out);
}

bk_status bk_filter_clear(bk_filter *filter)
{
    if (filter == NULL)
        return BK_EINVAL;
    if (filter->ops->clear == NULL)
        return filter->ops->is_static ? BK_EIMMUTABLE : BK_EUNSUPPORTED;
    bk_status status = filter->ops->clear(filter->object);
    if (status == BK_OK)
        alarm_rearm(filter);
    return status;
}

bk_kind bk_filter_kind(const bk_filter *filter)
{
    return filter == NULL ? BK_KIND_NONE : filter->ops->kind;
}

const bk_hasher *bk_filter_hasher(const bk_filter *filter) { return filter->hasher; }

bk_hash bk_filter_hash(const bk_filter *filter, const void *key, size_t len)
{
    return bk_hash_inline(filter->hasher, key, len);
}

bk_status bk_filter_add_hash(bk_filter *filter, bk_hash hash, bool *was_new)
{
    if (filter == NULL)
        return BK_EINVAL;
    if (filter->ops->add_hash == NULL)
        return filter->ops->is_static ? BK_EIMMUTABLE : BK_EUNSUPPORTED;
    if (alarm_countdown(filter) == 0)
        return filter->ops->add_hash(filter->object, hash, was_new);
    bool fresh = false;
    bk_status status = filter->ops->add_hash(filter->object, hash, &fresh);
    if (was_new != NULL)
        *was_new = fresh;
    alarm_after_adds(filter, fresh, status);
    return status;
}

/* The byte-key calls of a kind without contains_key / add_key (their
 * target is the handle), and an add while a fill alarm is armed: the
 * hash, then the _hash ops. */
static bk_status add_key_by_hash(void *handle, const void *key, size_t len, bool *was_new)
{
    bk_filter *filter = handle;
    return bk_filter_add_hash(filter, bk_filter_hash(filter, key, len), was_new);
}

static bool contains_key_by_hash(const void *handle, const void *key, size_t len)
{
    const bk_filter *filter = handle;
    return filter->ops->contains_hash(filter->object, bk_filter_hash(filter, key, len));
}

bk_status bk_filter_add(bk_filter *filter, const void *key, size_t len, bool *was_new)
{
    if (filter == NULL || (key == NULL && len != 0))
        return BK_EINVAL;
    if (__builtin_expect(alarm_countdown(filter) != 0, 0))
        return add_key_by_hash(filter, key, len, was_new);
    return filter->add_key(filter->add_key_target, key, len, was_new);
}

bool bk_filter_contains_hash(const bk_filter *filter, bk_hash hash)
{
    return filter != NULL && filter->ops->contains_hash(filter->object, hash);
}

bool bk_filter_contains(const bk_filter *filter, const void *key, size_t len)
{
    if (filter == NULL || (key == NULL && len != 0))
        return false;
    return filter->contains_key(filter->contains_key_target, key, len);
}

bk_status bk_filter_remove(bk_filter *filter, const void *key, size_t len)
{
    if (filter == NULL || (key == NULL && len != 0))
        return BK_EINVAL;
    if (filter->ops->remove_hash == NULL)
        return filter->ops->is_static ? BK_EIMMUTABLE : BK_EUNSUPPORTED;
    return filter->ops->remove_hash(filter->object, bk_filter_hash(filter, key, len));
}

bk_status bk_filter_count(const bk_filter *filter, const void *key, size_t len, uint64_t *count)
{
    if (filter == NULL || count == NULL || (key == NULL && len != 0))
        return BK_EINVAL;
    if (filter->ops->count_hash == NULL)
        return BK_EUNSUPPORTED;
    return filter->ops->count_hash(filter->object, bk_filter_hash(filter, key, len), count);
}

/* The integer-key calls of a kind without the _u64 ops (their target is
 * the handle), and an add while a fill alarm is armed: the hash, then the
 * _hash ops. */
static bool contains_u64_by_hash(const void *handle, uint64_t key)
{
    const bk_filter *filter = handle;
    return filter->ops->contains_hash(filter->object, bk_hash_u64(filter->hasher, key));
}

static bk_status add_u64_by_hash(void *handle, uint64_t key, bool *was_new)
{
    bk_filter *filter = handle;
    return bk_filter_add_hash(filter, bk_hash_u64(filter->hasher, key), was_new);
}

static void choose_one_key_calls(bk_filter *filter)
{
    const bk_kind_ops *ops = filter->ops;
    bool (*contains_u64)(const void *, uint64_t) = ops->contains_u64;
    if (ops->contains_u64_for != NULL)
        contains_u64 = ops->contains_u64_for(filter->object);
    filter->contains_u64 = contains_u64 != NULL ? contains_u64 : contains_u64_by_hash;
    filter->contains_u64_target = contains_u64 != NULL ? filter->object : filter;
    filter->add_u64 = ops->add_u64 != NULL ? ops->add_u64 : add_u64_by_hash;
    filter->add_u64_target = ops->add_u64 != NULL ? filter->object : filter;
    filter->contains_key = ops->contains_key != NULL ? ops->contains_key : contains_key_by_hash;
    filter->contains_key_target = ops->contains_key != NULL ? filter->object : filter;
    filter->add_key = ops->add_key != NULL ? ops->add_key : add_key_by_hash;
    filter->add_key_target = ops->add_key != NULL ? filter->object : filter;
}

bk_status bk_filter_add_u64(bk_filter *filter, uint64_t key, bool *was_new)
{
    if (filter == NULL)
        return BK_EINVAL;
    if (__builtin_expect(alarm_countdown(filter) != 0, 0))
        return add_u64_by_hash(filter, key, was_new);
    return filter->add_u64(filter->add_u64_target, key, was_new);
}

bool bk_filter_contains_u64(const bk_filter *filter, uint64_t key)
{
    return filter != NULL && filter->contains_u64(filter->contains_u64_target, key);
}

bk_status bk_filter_remove_u64(bk_filter *filter, uint64_t key)
{
    if (filter == NULL)
        return BK_EINVAL;
    if (filter->ops->remove_hash == NULL)
        return filter->ops->is_static ? BK_EIMMUTABLE : BK_EUNSUPPORTED;
    return filter->ops->remove_hash(filter->object, bk_hash_u64(filter->hasher, key));
}

bk_status bk_filter_count_u64(const bk_filter *filter, uint64_t key, uint64_t *count)
{
    if (filter == NULL || count == NULL)
        return BK_EINVAL;
    if (filter->ops->count_hash == NULL)
        return BK_EUNSUPPORTED;
    return filter->ops->count_hash(filter->object, bk_hash_u64(filter->hasher, key), count);
}

/* Adds hashes[0..n), n <= BK_KEY_CHUNK; *added gets how many were new. */
static bk_status add_hash_chunk(bk_filter *filter, const bk_hash *hashes, size_t n,
                                size_t *added)
{
    /* Near a fill alarm's next check, key by key so it fires on time. */
    uint64_t countdown = alarm_countdown(filter);
    bool alarm_due = countdown != 0 &&
                     (countdown <= n || filter->ops->past_design_point != NULL);
    *added = 0;
    if (filter->ops->add_hash_batch != NULL && !alarm_due) {
        bk_status status = filter->ops->add_hash_batch(filter->object, hashes, n, added);
        if (alarm_countdown(filter) != 0)
            alarm_after_adds(filter, *added, status);
        return status;
    }
    bk_status status = BK_OK;
    for (size_t i = 0; i < n && status == BK_OK; i++) {
        bool was_new = false;
        status = bk_filter_add_hash(filter, hashes[i], &was_new);
        *added += was_new;
    }
    return status;
}

/* The add loop of every batch form, a chunk at a time. */
static bk_status add_in_chunks(bk_filter *filter, const bk_batch_source *source, size_t count,
                               size_t *new_count)
{
    size_t fresh = 0;
    bk_status status = BK_OK;
    bk_hash chunk[BK_KEY_CHUNK];
    for (size_t start = 0; start < count && status == BK_OK; start += BK_KEY_CHUNK) {
        size_t n = count - start < BK_KEY_CHUNK ? count - start : BK_KEY_CHUNK;
        const bk_hash *hashes = bk_source_hashes(filter->hasher, source, start, n, chunk);
        size_t added = 0;
        status = add_hash_chunk(filter, hashes, n, &added);
        fresh += added;
    }
    if (new_count != NULL)
        *new_count = fresh;
    return status;
}

/* A chunk of a key batch, hashed (bk_source_by_chunks), to the kind's batch. */
static size_t contains_hash_chunk(const void *handle, const bk_hash *hashes, size_t n,
                                  bool *results)
{
    const bk_filter *filter = handle;
    return filter->ops->contains_hash_batch(filter->object, hashes, n, results);
}

bk_status bk_filter_add_batch(bk_filter *filter, const bk_key *keys, size_t count,
                              size_t *new_count)
{
    if (filter == NULL || !bk_keys_valid(keys, count))
        return BK_EINVAL;
    bk_batch_source source = { .keys = keys };
    return add_in_chunks(filter, &source, count, new_count);
}

bk_status bk_filter_add_packed(bk_filter *filter, const void *keys, size_t key_len, size_t count,
                               size_t *new_count)
{
    if (filter == NULL || !bk_packed_valid(keys, key_len, count))
        return BK_EINVAL;
    bk_batch_source source = { .packed = keys, .key_len = key_len };
    return add_in_chunks(filter, &source, count, new_count);
}

bk_status bk_filter_add_hash_batch(bk_filter *filter, const bk_hash *hashes, size_t count,
                                   size_t *new_count)
{
    if (filter == NULL || (hashes == NULL && count != 0))
        return BK_EINVAL;
    bk_batch_source source = { .hashes = hashes };
    return add_in_chunks(filter, &source, count, new_count);
}

size_t bk_filter_contains_batch(const bk_filter *filter, const bk_key *keys, size_t count,
                                bool *results)
{
    if (filter == NULL || !bk_keys_valid(keys, count))
        return 0;
    bk_batch_source source = { .keys = keys };
    return bk_source_by_chunks(filter, filter->hasher, &source, count, results,
                               contains_hash_chunk);
}

size_t bk_filter_contains_packed(const bk_filter *filter, const void *keys, size_t key_len,
                                 size_t count, bool *results)
{
    if (filter == NULL || !bk_packed_valid(keys, key_len, count))
        return 0;
    bk_batch_source source = { .packed = keys, .key_len = key_len };
    return bk_source_by_chunks(filter, filter->hasher, &source, count, results,
                               contains_hash_chunk);
}

size_t bk_filter_contains_hash_batch(const bk_filter *filter, const bk_hash *hashes,
                                     size_t count, bool *results)
{
    if (filter == NULL || (hashes == NULL && count != 0))
        return 0;
    return filter->ops->contains_hash_batch(filter->object, hashes, count, results);
}

static bk_status same_kind(const bk_filter *a, const bk_filter *b)
{
    if (a == NULL || b == NULL)
        return BK_EINVAL;
    return a->ops == b->ops ? BK_OK : BK_EINCOMPATIBLE;
}

bk_status bk_filter_union(bk_filter *dst, const bk_filter *src)
{
    bk_status status = same_kind(dst, src);
    if (status != BK_OK)
        return status;
    if (dst->ops->union_with == NULL)
        return BK_EUNSUPPORTED;
    return dst->ops->union_with(dst->object, src->object);
}

bk_status bk_filter_intersect(bk_filter *dst, const bk_filter *src)
{
    bk_status status = same_kind(dst, src);
    if (status != BK_OK)
        return status;
    if (dst->ops->intersect_with == NULL)
        return BK_EUNSUPPORTED;
    return dst->ops->intersect_with(dst->object, src->object);
}

bk_status bk_filter_estimate_sets(const bk_filter *a, const bk_filter *b, bk_set_estimate *out)
{
    bk_status status = same_kind(a, b);
    if (status != BK_OK)
        return status;
    if (out == NULL)
        return BK_EINVAL;
    if (a->ops->estimate_sets == NULL)
        return BK_EUNSUPPORTED;
    return a->ops->estimate_sets(a->object, b->object, out);
}

void bk_filter_stats(const bk_filter *filter, bk_stats *out)
{
    filter->ops->stats(filter->object, out);
}

bk_status bk_kind_design(bk_kind kind, const bk_params *params, bk_stats *out)
{
    const bk_kind_ops *ops = bk_kind_ops_for(kind);
    if (ops == NULL)
        return BK_EKIND;
    if (params == NULL || out == NULL)
        return BK_EINVAL;
    if (ops->design == NULL)
        return BK_EUNSUPPORTED;
    bk_status status = check_common_params(ops, params);
    if (status != BK_OK)
        return status;
    return ops->design(params, out);
}

bk_status bk_filter_check_fill(const bk_filter *filter)
{
    bk_fill_status fill;
    bk_status status = bk_filter_fill_status(filter, &fill);
    if (status != BK_OK)
        return status;
    return fill == BK_FILL_OK ? BK_OK : BK_EFULL;
}

bk_status bk_filter_advance_clock(bk_filter *filter, uint64_t now)
{
    if (filter == NULL)
        return BK_EINVAL;
    if (filter->ops->advance_clock == NULL)
        return BK_EUNSUPPORTED;
    return filter->ops->advance_clock(filter->object, now);
}

/* ------------------------------------------------------------------------ */
/* Fill alarms (contract in bloomkit/filter.h)                              */
/* ------------------------------------------------------------------------ */

bk_fill_status bk_fill_status_from_stats(const bk_stats *stats)
{
    if (stats == NULL || !stats->past_design_point)
        return BK_FILL_OK;
    if (stats->target_fpr > 0 &&
        stats->current_fpr >= BK_FILL_DEGRADED_FACTOR * stats->target_fpr)
        return BK_FILL_DEGRADED;
    return BK_FILL_PAST_DESIGN_POINT;
}

const char *bk_fill_status_name(bk_fill_status status)
{
    switch (status) {
    case BK_FILL_OK: return "ok";
    case BK_FILL_PAST_DESIGN_POINT: return "past design point";
    case BK_FILL_DEGRADED: return "degraded";
    }
    return "unknown";
}

bk_status bk_filter_fill_status(const bk_filter *filter, bk_fill_status *out)
{
    if (filter == NULL || out == NULL)
        return BK_EINVAL;
    bk_stats stats;
    filter->ops->stats(filter->object, &stats);
    *out = bk_fill_status_from_stats(&stats);
    return BK_OK;
}

static void alarm_rearm(bk_filter *filter)
{
    __atomic_store_n(&filter->alarm_missed, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&filter->alarm_recheck, false, __ATOMIC_SEQ_CST);
    __atomic_store_n(&filter->alarm_countdown, filter->alarm != NULL ? 1 : 0, __ATOMIC_SEQ_CST);
}

bk_status bk_filter_set_fill_alarm(bk_filter *filter, bk_fill_alarm alarm, void *context)
{
    if (filter == NULL)
        return BK_EINVAL;
    filter->alarm = alarm;
    filter->alarm_context = context;
    alarm_rearm(filter);
    return BK_OK;
}

/* New keys until the next check: a quarter of the smallest positive
 * distance from a load measure (the fill's key estimate, and the keys
 * added) to a threshold (the capacity, and the design point in keys:
 * stats.design_point_keys, or BK_DESIGN_MARGIN times the capacity), so
 * neither measure can jump a threshold between two checks.  A filter beyond
 * every threshold yet not past its design point (a kind whose test is not a
 * key count, e.g. a window holding more than one window of keys) is checked
 * every capacity/64 new keys. */
static uint64_t keys_until_next_check(const bk_stats *stats)
{
    const double loads[2] = { stats->keys_estimated, (double)stats->keys_added };
    const double capacity = (double)stats->capacity;
    const double design_point = stats->design_point_keys > 0 ? stats->design_point_keys
                                                             : capacity * BK_DESIGN_MARGIN;
    const double thresholds[2] = { capacity, design_point };
    double nearest = INFINITY;
    for (int l = 0; l < 2; l++)
        for (int t = 0; t < 2; t++)
            if (thresholds[t] > loads[l] && thresholds[t] - loads[l] < nearest)
                nearest = thresholds[t] - loads[l];
    if (nearest == INFINITY)
        return stats->capacity >= 128 ? stats->capacity / 64 : 1;
    return nearest >= 8 ? (uint64_t)(nearest / 4) : 1;
}

/* The countdown's value while a check runs. */
#define ALARM_CHECKING UINT64_MAX

/* Takes *new_keys off the countdown.  True when the caller has claimed the
 * check: the countdown ran out (or *check_now) and this call moved it to
 * ALARM_CHECKING, which no other thread can then do until the check ends.
 * While another thread's check runs, the keys (and a forced check) are left
 * in alarm_missed / alarm_recheck for it; if that check ended meanwhile,
 * the caller takes back whatever is left there and goes on counting, so no
 * new key escapes the count, however the threads interleave.  Every step is
 * an atomic read-modify-write or a sequentially consistent load or store
 * (BK_FLAG_CONCURRENT). */
static bool alarm_claim_check(bk_filter *filter, uint64_t *new_keys, bool *check_now)
{
    for (;;) {
        uint64_t countdown = __atomic_load_n(&filter->alarm_countdown, __ATOMIC_SEQ_CST);
        if (countdown == 0)
            return false; /* none armed, or it fired */
        if (countdown == ALARM_CHECKING) {
            if (*new_keys != 0)
                __atomic_fetch_add(&filter->alarm_missed, *new_keys, __ATOMIC_SEQ_CST);
            if (*check_now)
                __atomic_store_n(&filter->alarm_recheck, true, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&filter->alarm_countdown, __ATOMIC_SEQ_CST) == ALARM_CHECKING)
                return false; /* the running check collects them when it ends */
            *new_keys = __atomic_exchange_n(&filter->alarm_missed, 0, __ATOMIC_SEQ_CST);
            *check_now = __atomic_exchange_n(&filter->alarm_recheck, false, __ATOMIC_SEQ_CST);
            if (*new_keys == 0 && !*check_now)
                return false;
            continue;
        }
        bool claims = *check_now || *new_keys >= countdown;
        uint64_t next = claims ? ALARM_CHECKING : countdown - *new_keys;
        if (__atomic_compare_exchange_n(&filter->alarm_countdown, &countdown, next, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            return claims;
    }
}

/* After adds that made `new_keys` new keys (status: the add's).  The thread
 * that claims a check computes the stats while the countdown says
 * ALARM_CHECKING.  Still OK: it re-arms the countdown, then counts the keys
 * other threads added meanwhile as its own, which may claim the next check
 * at once.  Not OK: the countdown goes to 0 for good and it calls the
 * alarm, so the alarm fires once. */
static void alarm_after_adds(bk_filter *filter, size_t new_keys, bk_status status)
{
    bool check_now = status == BK_EFULL;
    if (filter->ops->past_design_point != NULL) {
        /* a cheap exact test: after every new key */
        if ((new_keys == 0 && !check_now) || !filter->ops->past_design_point(filter->object))
            return;
        check_now = true;
    }
    uint64_t keys = new_keys;
    while (alarm_claim_check(filter, &keys, &check_now)) {
        bk_stats stats;
        filter->ops->stats(filter->object, &stats);
        bk_fill_status fill = bk_fill_status_from_stats(&stats);
        if (fill != BK_FILL_OK) {
            __atomic_store_n(&filter->alarm_countdown, 0, __ATOMIC_SEQ_CST);
            filter->alarm(filter, fill, filter->alarm_context); /* once */
            return;
        }
        __atomic_store_n(&filter->alarm_countdown, keys_until_next_check(&stats),
                         __ATOMIC_SEQ_CST);
        keys = __atomic_exchange_n(&filter->alarm_missed, 0, __ATOMIC_SEQ_CST);
        check_now = __atomic_exchange_n(&filter->alarm_recheck, false, __ATOMIC_SEQ_CST);
        if (keys == 0 && !check_now)
            return;
    }
}
