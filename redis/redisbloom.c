/*
 * redis/redisbloom.c -- RedisBloom 2.6's BF.* and CF.* commands: the same
 * arguments, options, errors and reply types (RESP2 and RESP3), over a
 * `scalable` filter (BF) and a chain of `cuckoo` filters (CF).  The
 * differences the internals make are listed in docs/REDIS.md; the
 * recordings they are checked against are in tests/redis/reference.
 */
#include "module.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CF_DEFAULT_CAPACITY 1024
#define CF_DEFAULT_BUCKET_SIZE 2
#define CF_DEFAULT_MAX_ITERATIONS 20
#define CF_DEFAULT_EXPANSION 1
/* The width of a CF's fingerprints, the one knob of its memory and FPR
 * (docs/REDIS.md, "CF memory"): 8 x 0.95 / (2^f - 1) false positives at
 * full load in f / (8 x 0.95) bytes per item.  RedisBloom stores 8 bits in
 * 2-slot buckets of a power-of-two table: 1.34 bytes per item and 1.2%
 * FPR at 10^8 items.  f = 10 (1.32 bytes, 0.74%) is the narrowest width
 * at or under both.  Links added by growth keep the width of the first. */
#define CF_FINGERPRINT_BITS 10

/* ------------------------------------------------------------------------ */
/* Creating values                                                          */
/* ------------------------------------------------------------------------ */

typedef struct bf_options {
    uint64_t capacity;
    double error_rate;
    uint64_t expansion; /* 0: NONSCALING */
} bf_options;

static bk_status new_bf(const bf_options *options, bkr_value **out)
{
    uint64_t capacity = options->capacity, expansion = options->expansion;
    double error_rate = options->error_rate;
    bk_params params;
    memset(&params, 0, sizeof params);
    params.capacity = capacity;
    params.fpr = error_rate;
    /* bloomkit grows a chain by at most 1000x per link; the reported
     * expansion stays the one asked for. */
    params.expansion = expansion == 0 ? 2.0 : (expansion > 1000 ? 1000.0 : (double)expansion);
    params.max_filters = expansion == 0 ? 1 : 0;
    /* one cache line per item: blocked links (values loaded from an RDB
     * keep the links they were saved with) */
    params.flags = BK_FLAG_BLOCKED_STAGES;
    bk_filter *filter;
    bk_status status = bk_filter_create(BK_KIND_SCALABLE, &params, &filter);
    if (status != BK_OK)
        return status;
    bkr_value *value = bkr_value_wrap(BKR_BF, filter);
    if (value == NULL)
        return BK_ENOMEM;
    value->meta.expansion = expansion;
    *out = value;
    return BK_OK;
}

typedef struct cf_options {
    long long capacity, bucket_size, max_iterations, expansion;
} cf_options;

static bk_status new_cf(const cf_options *options, bkr_value **out)
{
    bk_params params;
    memset(&params, 0, sizeof params);
    params.capacity = (uint64_t)options->capacity;
    params.fingerprint_bits = CF_FINGERPRINT_BITS;
    bk_filter *filter;
    bk_status status = bk_filter_create(BK_KIND_CUCKOO, &params, &filter);
    if (status != BK_OK)
        return status;
    bkr_value *value = bkr_value_wrap(BKR_CF, filter);
    if (value == NULL)
        return BK_ENOMEM;
    value->meta.bucket_size = (uint64_t)options->bucket_size;
    value->meta.max_iterations = (uint64_t)options->max_iterations;
    value->meta.expansion = (uint64_t)options->expansion;
    *out = value;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* BF.*                                                                     */
/* ------------------------------------------------------------------------ */

/* BF.RESERVE key error_rate capacity [EXPANSION e] [NONSCALING] */
static int bf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4 || argc > 7)
        return RedisModule_WrongArity(ctx);
    double error_rate;
    long long capacity;
    if (!arg_double(argv[2], &error_rate))
        return RedisModule_ReplyWithError(ctx, "ERR bad error rate");
    if (!(error_rate > 0 && error_rate < 1))
        return RedisModule_ReplyWithError(ctx, "ERR (0 < error rate range < 1) ");
    if (!arg_int(argv[3], &capacity))
        return RedisModule_ReplyWithError(ctx, "ERR bad capacity");
    if (capacity <= 0)
        return RedisModule_ReplyWithError(ctx, "ERR (capacity should be larger than 0)");
    bool nonscaling = false;
    long long expansion = 2;
    int expansion_at = -1;
    for (int i = 4; i < argc; i++) {
        if (arg_is(argv[i], "NONSCALING"))
            nonscaling = true;
        else if (arg_is(argv[i], "EXPANSION") && expansion_at < 0)
            expansion_at = i;
    }
    if (expansion_at >= 0) {
        if (expansion_at + 1 >= argc)
            return RedisModule_ReplyWithError(ctx, "ERR no expansion");
        if (!arg_int(argv[expansion_at + 1], &expansion))
            return RedisModule_ReplyWithError(ctx, "ERR bad expansion");
        if (expansion < 1)
            return RedisModule_ReplyWithError(ctx,
                                              "ERR expansion should be greater or equal to 1");
        if (nonscaling)
            return RedisModule_ReplyWithError(ctx, "Nonscaling filters cannot expand");
    }
    RedisModuleKey *key;
    bkr_value *value;
    lookup_result found = open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_BF,
                                     &key, &value);
    int rc;
    if (found == KEY_WRONGTYPE) {
        rc = reply_wrongtype(ctx);
    } else if (found == KEY_OURS) {
        rc = RedisModule_ReplyWithError(ctx, "ERR item exists");
    } else if (new_bf(&(bf_options){ (uint64_t)capacity, error_rate,
                                     nonscaling ? 0 : (uint64_t)expansion },
                      &value) != BK_OK) {
        rc = RedisModule_ReplyWithError(ctx, "ERR could not create filter");
    } else {
        install(key, value);
        after_write(ctx, argv[1], value);
        rc = RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    RedisModule_CloseKey(key);
    return rc;
}

/* The error reply of a BF add that failed (the chain may not grow). */
static int bf_full_error(RedisModuleCtx *ctx, const bkr_value *value)
{
    return RedisModule_ReplyWithError(ctx, value->meta.expansion == 0
                                               ? "ERR non scaling filter is full"
                                               : "ERR filter cannot grow further");
}

/* Opens `name` for adding to a value of `family`, creating it with
 * create(options) when missing (unless nocreate).  Replies and returns
 * NULL on an error (WRONGTYPE, "ERR not found", creation failure). */
static bkr_value *open_for_add(RedisModuleCtx *ctx, RedisModuleString *name,
                               RedisModuleKey **key, bkr_family family, bool nocreate,
                               bk_status (*create)(const void *options, bkr_value **out),
                               const void *options)
{
    bkr_value *value;
    lookup_result found = open_value(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE, family,
                                     key, &value);
    if (found == KEY_WRONGTYPE) {
        reply_wrongtype(ctx);
        return NULL;
    }
    if (found == KEY_OURS)
        return value;
    if (nocreate) {
        RedisModule_ReplyWithError(ctx, "ERR not found");
        return NULL;
    }
    if (create(options, &value) != BK_OK) {
        RedisModule_ReplyWithError(ctx, "ERR could not create filter");
        return NULL;
    }
    return install(*key, value);
}

static bk_status create_bf(const void *options, bkr_value **out) { return new_bf(options, out); }

static bk_status create_cf(const void *options, bkr_value **out) { return new_cf(options, out); }

/* Items per step of bf_add_items (hashes and answers on the stack). */
#define ADD_CHUNK 128

/* What an add answered, kept until the reply is written. */
enum { ADD_PRESENT, ADD_NEW, ADD_FAILED };

/* The items argv[first..argc) added to a BF, as an array (stopping at the
 * first error, as RedisBloom does).  ADD_CHUNK items at a time are hashed
 * once (bk_hash_keys: eight at a time where it can) and queried as one
 * batch (their memory requested ahead of the probes): an item already
 * present answers 0 without an add, and the adds of the others find their
 * lines in the cache.  The answers are those of adding one item after
 * another (an add reports a repeat within the batch itself).  They are kept (a byte per item) and replied after the adds, so
 * the array's length is known when it starts: Redis then needs no
 * placeholder for it in its reply list.  Returns the number of new keys. */
static uint64_t bf_add_items(RedisModuleCtx *ctx, bkr_value *value, RedisModuleString **argv,
                             int first, int argc)
{
    bk_filter *filter = value->filters[0];
    const bk_hasher *hasher = bk_filter_hasher(filter);
    size_t total = (size_t)(argc - first);
    uint8_t on_stack[ADD_CHUNK];
    uint8_t *answers = total <= ADD_CHUNK ? on_stack : malloc(total);
    if (answers == NULL) {
        RedisModule_ReplyWithError(ctx, "ERR out of memory");
        return 0;
    }
    bk_key keys[ADD_CHUNK];
    bk_hash hashes[ADD_CHUNK];
    bool present[ADD_CHUNK];
    size_t done = 0;
    uint64_t new_keys = 0;
    bool failed = false;
    while (done < total && !failed) {
        size_t count = total - done < ADD_CHUNK ? total - done : ADD_CHUNK;
        for (size_t i = 0; i < count; i++)
            keys[i] = arg_key(argv[first + (int)(done + i)]);
        bk_hash_keys(hasher, keys, count, hashes); /* the keys are valid: no error */
        memset(present, 0, count);
        if (count > 1)
            bk_filter_contains_hash_batch(filter, hashes, count, present);
        for (size_t i = 0; i < count && !failed; i++) {
            bool was_new = false;
            failed = !present[i] && bk_filter_add_hash(filter, hashes[i], &was_new) != BK_OK;
            answers[done++] = failed ? ADD_FAILED : was_new ? ADD_NEW : ADD_PRESENT;
            new_keys += was_new;
        }
    }
    RedisModule_ReplyWithArray(ctx, (long)done);
    for (size_t i = 0; i < done; i++) {
        if (answers[i] == ADD_FAILED)
            bf_full_error(ctx, value);
        else
            reply_bool(ctx, answers[i] == ADD_NEW);
    }
    if (answers != on_stack)
        free(answers);
    return new_keys;
}

static int bf_add_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool multi)
{
    if (multi ? argc < 3 : argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bf_options defaults = { (uint64_t)config_initial_size, config_error_rate, 2 };
    bkr_value *value = open_for_add(ctx, argv[1], &key, BKR_BF, false, create_bf, &defaults);
    if (value != NULL) {
        uint64_t new_keys;
        if (multi) {
            new_keys = bf_add_items(ctx, value, argv, 2, argc);
        } else {
            bool was_new = false;
            bk_key k = arg_key(argv[2]);
            if (bk_filter_add(value->filters[0], k.data, k.len, &was_new) == BK_OK)
                reply_bool(ctx, was_new);
            else
                bf_full_error(ctx, value);
            new_keys = was_new;
        }
        after_bf_adds(ctx, argv[1], value, new_keys);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int bf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return bf_add_common(ctx, argv, argc, false);
}

static int bf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return bf_add_common(ctx, argv, argc, true);
}

/* BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item... */
static int bf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    long long capacity = config_initial_size, expansion = 2;
    double error_rate = config_error_rate;
    bool nocreate = false, nonscaling = false;
    int items_at = -1;
    for (int i = 2; i < argc && items_at < 0; i++) {
        bool has_value = i + 1 < argc;
        if (arg_is(argv[i], "ITEMS")) {
            items_at = i + 1;
        } else if (arg_is(argv[i], "NOCREATE")) {
            nocreate = true;
        } else if (arg_is(argv[i], "NONSCALING")) {
            nonscaling = true;
        } else if (arg_is(argv[i], "CAPACITY") && has_value) {
            if (!arg_int(argv[++i], &capacity))
                return RedisModule_ReplyWithError(ctx, "Bad capacity");
            if (capacity <= 0)
                return RedisModule_ReplyWithError(ctx, "Bad argument received");
        } else if (arg_is(argv[i], "ERROR") && has_value) {
            if (!arg_double(argv[++i], &error_rate))
                return RedisModule_ReplyWithError(ctx, "Bad error rate");
            if (!(error_rate > 0 && error_rate < 1))
                return RedisModule_ReplyWithError(ctx, "Bad argument received");
        } else if (arg_is(argv[i], "EXPANSION") && has_value) {
            if (!arg_int(argv[++i], &expansion))
                return RedisModule_ReplyWithError(ctx, "Bad expansion");
            if (expansion < 1)
                return RedisModule_ReplyWithError(ctx, "Bad argument received");
        } else if (arg_is(argv[i], "CAPACITY") || arg_is(argv[i], "ERROR") ||
                   arg_is(argv[i], "EXPANSION")) {
            return RedisModule_WrongArity(ctx);
        } else {
            return RedisModule_ReplyWithError(ctx, "Unknown argument received");
        }
    }
    if (items_at < 0 || items_at >= argc)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bf_options options = { (uint64_t)capacity, error_rate,
                           nonscaling ? 0 : (uint64_t)expansion };
    bkr_value *value = open_for_add(ctx, argv[1], &key, BKR_BF, nocreate, create_bf, &options);
    if (value != NULL)
        after_bf_adds(ctx, argv[1], value, bf_add_items(ctx, value, argv, items_at, argc));
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* EXISTS/MEXISTS for BF and CF: a missing key or one of another type
 * answers "no", as RedisBloom does. */
static int exists_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                         bkr_family family, bool multi)
{
    if (multi ? argc < 3 : argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value;
    open_value(ctx, argv[1], REDISMODULE_READ, family, &key, &value);
    if (multi) {
        reply_mexists(ctx, value, argv, 2, argc);
    } else {
        bk_key k = arg_key(argv[2]);
        reply_bool(ctx, value != NULL && bkr_value_contains(value, k.data, k.len));
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_common(ctx, argv, argc, BKR_BF, false);
}

static int bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_common(ctx, argv, argc, BKR_BF, true);
}

static const char *const bf_info_names[] = { "Capacity", "Size", "Number of filters",
                                             "Number of items inserted", "Expansion rate" };
static const char *const bf_info_words[] = { "CAPACITY", "SIZE", "FILTERS", "ITEMS",
                                             "EXPANSION" };

static void bf_info_field(RedisModuleCtx *ctx, bkr_value *value, const bk_stats *stats,
                          int field)
{
    switch (field) {
    case 0: RedisModule_ReplyWithLongLong(ctx, (long long)stats->capacity); break;
    case 1: RedisModule_ReplyWithLongLong(ctx, (long long)bkr_value_memory(value)); break;
    case 2: RedisModule_ReplyWithLongLong(ctx, stats->filters); break;
    case 3: RedisModule_ReplyWithLongLong(ctx, (long long)stats->keys_added); break;
    default:
        if (value->meta.expansion == 0)
            RedisModule_ReplyWithNull(ctx);
        else
            RedisModule_ReplyWithLongLong(ctx, (long long)value->meta.expansion);
    }
}

/* BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION] */
static int bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_BF, &key,
                                     "ERR not found");
    if (value != NULL) {
        const bk_stats *stats = newest_stats(value);
        if (argc == 2) {
            reply_map(ctx, 5);
            for (int f = 0; f < 5; f++) {
                RedisModule_ReplyWithSimpleString(ctx, bf_info_names[f]);
                bf_info_field(ctx, value, stats, f);
            }
        } else {
            int field = -1;
            for (int f = 0; f < 5; f++)
                if (arg_is(argv[2], bf_info_words[f]))
                    field = f;
            if (field < 0) {
                RedisModule_ReplyWithError(ctx, "Invalid information value");
            } else if (is_resp3(ctx)) {
                reply_map(ctx, 1);
                RedisModule_ReplyWithSimpleString(ctx, bf_info_names[field]);
                bf_info_field(ctx, value, stats, field);
            } else {
                RedisModule_ReplyWithArray(ctx, 1);
                bf_info_field(ctx, value, stats, field);
            }
        }
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value;
    lookup_result found = open_value(ctx, argv[1], REDISMODULE_READ, BKR_BF, &key, &value);
    if (found == KEY_WRONGTYPE) {
        reply_wrongtype(ctx);
    } else {
        RedisModule_ReplyWithLongLong(
            ctx, value == NULL ? 0 : (long long)newest_stats(value)->keys_added);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* BF.DEBUG key: the chain's totals in RedisBloom's words (one line for the
 * whole chain: the generic API reports the chain, not each link). */
static int bf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_BF, &key,
                                     "ERR not found");
    if (value != NULL) {
        bk_stats s = *newest_stats(value);
        char line[256];
        RedisModule_ReplyWithArray(ctx, 2);
        snprintf(line, sizeof line, "size:%llu", (unsigned long long)s.keys_added);
        RedisModule_ReplyWithCString(ctx, line);
        snprintf(line, sizeof line,
                 "bytes:%llu bits:%llu filters:%u capacity:%llu size:%llu ratio:%g",
                 (unsigned long long)s.bytes, (unsigned long long)s.bits, s.filters,
                 (unsigned long long)s.capacity, (unsigned long long)s.keys_added, s.target_fpr);
        RedisModule_ReplyWithCString(ctx, line);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return family_scandump(ctx, argv, argc, BKR_BF);
}

static int bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return family_loadchunk(ctx, argv, argc, BKR_BF);
}

/* ------------------------------------------------------------------------ */
/* CF.*                                                                     */
/* ------------------------------------------------------------------------ */

static int cf_check_capacity(RedisModuleCtx *ctx, const cf_options *o)
{
    if (o->capacity < o->bucket_size * 2) {
        RedisModule_ReplyWithError(ctx, "Capacity must be at least (BucketSize * 2)");
        return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

/* One CF.RESERVE option: NAME value within [low, high]. */
static int cf_option(RedisModuleCtx *ctx, RedisModuleString *value, const char *name,
                     long long low, long long high, long long *out)
{
    char message[96];
    if (!arg_int(value, out)) {
        snprintf(message, sizeof message, "Couldn't parse %s", name);
        RedisModule_ReplyWithError(ctx, message);
        return REDISMODULE_ERR;
    }
    if (*out < low || *out > high) {
        snprintf(message, sizeof message,
                 "%s: value must be an integer between %lld and %lld, inclusive.", name, low,
                 high);
        RedisModule_ReplyWithError(ctx, message);
        return REDISMODULE_ERR;
    }
    return REDISMODULE_OK;
}

/* CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e] */
static int cf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 3 || (argc - 3) % 2 != 0)
        return RedisModule_WrongArity(ctx);
    cf_options o = { 0, CF_DEFAULT_BUCKET_SIZE, CF_DEFAULT_MAX_ITERATIONS,
                     CF_DEFAULT_EXPANSION };
    if (!arg_int(argv[2], &o.capacity))
        return RedisModule_ReplyWithError(ctx, "Bad capacity");
    for (int i = 3; i < argc; i += 2) {
        int rc = REDISMODULE_OK;
        if (arg_is(argv[i], "BUCKETSIZE"))
            rc = cf_option(ctx, argv[i + 1], "BUCKETSIZE", 1, 255, &o.bucket_size);
        else if (arg_is(argv[i], "MAXITERATIONS"))
            rc = cf_option(ctx, argv[i + 1], "MAXITERATIONS", 1, 65535, &o.max_iterations);
        else if (arg_is(argv[i], "EXPANSION"))
            rc = cf_option(ctx, argv[i + 1], "EXPANSION", 0, 32768, &o.expansion);
        if (rc != REDISMODULE_OK)
            return REDISMODULE_OK;
    }
    if (cf_check_capacity(ctx, &o) != REDISMODULE_OK)
        return REDISMODULE_OK;
    RedisModuleKey *key;
    bkr_value *value;
    lookup_result found = open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_CF,
                                     &key, &value);
    if (found == KEY_WRONGTYPE) {
        reply_wrongtype(ctx);
    } else if (found == KEY_OURS) {
        RedisModule_ReplyWithError(ctx, "ERR item exists");
    } else if (new_cf(&o, &value) != BK_OK) {
        RedisModule_ReplyWithError(ctx, "ERR could not create filter");
    } else {
        install(key, value);
        after_write(ctx, argv[1], value);
        RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* Adds one item: 1 added, 0 present (nx only), -1 full. */
static int cf_add_one(bkr_value *value, RedisModuleString *item, bool nx)
{
    bk_key k = arg_key(item);
    if (nx && bkr_value_contains(value, k.data, k.len))
        return 0;
    return bkr_cf_add(value, k.data, k.len, (unsigned)config_cf_max_expansions) == BK_OK ? 1
                                                                                         : -1;
}

static int cf_add_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool nx)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    cf_options defaults = { CF_DEFAULT_CAPACITY, CF_DEFAULT_BUCKET_SIZE,
                            CF_DEFAULT_MAX_ITERATIONS, CF_DEFAULT_EXPANSION };
    bkr_value *value = open_for_add(ctx, argv[1], &key, BKR_CF, false, create_cf, &defaults);
    if (value != NULL) {
        int result = cf_add_one(value, argv[2], nx);
        if (result < 0)
            RedisModule_ReplyWithError(ctx, "Filter is full");
        else
            reply_bool(ctx, result == 1);
        after_write(ctx, argv[1], value);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int cf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cf_add_common(ctx, argv, argc, false);
}

static int cf_addnx(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cf_add_common(ctx, argv, argc, true);
}

/* CF.INSERT / CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item... */
static int cf_insert_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool nx)
{
    cf_options o = { CF_DEFAULT_CAPACITY, CF_DEFAULT_BUCKET_SIZE, CF_DEFAULT_MAX_ITERATIONS,
                     CF_DEFAULT_EXPANSION };
    bool nocreate = false;
    int items_at = -1;
    for (int i = 2; i < argc && items_at < 0; i++) {
        if (arg_is(argv[i], "ITEMS")) {
            items_at = i + 1;
        } else if (arg_is(argv[i], "NOCREATE")) {
            nocreate = true;
        } else if (arg_is(argv[i], "CAPACITY")) {
            if (i + 1 >= argc)
                return RedisModule_WrongArity(ctx);
            if (!arg_int(argv[++i], &o.capacity))
                return RedisModule_ReplyWithError(ctx, "Bad capacity");
            if (cf_check_capacity(ctx, &o) != REDISMODULE_OK)
                return REDISMODULE_OK;
        } else {
            return RedisModule_ReplyWithError(ctx, "Unknown argument received");
        }
    }
    if (items_at < 0 || items_at >= argc)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_for_add(ctx, argv[1], &key, BKR_CF, nocreate, create_cf, &o);
    if (value != NULL) {
        bool resp3 = is_resp3(ctx);
        RedisModule_ReplyWithArray(ctx, argc - items_at);
        for (int i = items_at; i < argc; i++) {
            int result = cf_add_one(value, argv[i], nx);
            if (!nx && resp3)
                reply_bool(ctx, result == 1);
            else
                RedisModule_ReplyWithLongLong(ctx, result);
        }
        after_write(ctx, argv[1], value);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int cf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cf_insert_common(ctx, argv, argc, false);
}

static int cf_insertnx(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return cf_insert_common(ctx, argv, argc, true);
}

static int cf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_common(ctx, argv, argc, BKR_CF, false);
}

static int cf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_common(ctx, argv, argc, BKR_CF, true);
}

static int cf_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value;
    open_value(ctx, argv[1], REDISMODULE_READ, BKR_CF, &key, &value);
    bk_key k = arg_key(argv[2]);
    RedisModule_ReplyWithLongLong(
        ctx, value == NULL ? 0 : (long long)bkr_value_count(value, k.data, k.len));
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int cf_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value;
    open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_CF, &key, &value);
    if (value == NULL) {
        RedisModule_ReplyWithError(ctx, "Not found");
    } else {
        bk_key k = arg_key(argv[2]);
        bool deleted = bkr_cf_delete(value, k.data, k.len) == BK_OK;
        reply_bool(ctx, deleted);
        if (deleted)
            after_write(ctx, argv[1], value);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int cf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_CF, &key,
                                     "ERR not found");
    if (value != NULL) {
        uint64_t buckets = 0;
        for (uint32_t i = 0; i < value->meta.filter_count; i++) {
            bk_stats s;
            bk_filter_stats(value->filters[i], &s);
            buckets += s.fingerprint_bits == 0 ? 0 : s.bits / (4u * s.fingerprint_bits);
        }
        const char *names[] = { "Size",
                                "Number of buckets",
                                "Number of filters",
                                "Number of items inserted",
                                "Number of items deleted",
                                "Bucket size",
                                "Expansion rate",
                                "Max iterations" };
        long long values[] = {
            (long long)bkr_value_memory(value),  (long long)buckets,
            (long long)value->meta.filter_count, (long long)value->meta.items,
            (long long)value->meta.deletes,      4,
            (long long)value->meta.expansion,    (long long)value->meta.max_iterations
        };
        reply_map(ctx, 8);
        for (int f = 0; f < 8; f++) {
            RedisModule_ReplyWithSimpleString(ctx, names[f]);
            RedisModule_ReplyWithLongLong(ctx, values[f]);
        }
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* CF.DEBUG key: the chain's counters in RedisBloom's words. */
static int cf_debug(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_CF, &key,
                                     "ERR not found");
    if (value != NULL) {
        char line[256];
        snprintf(
            line, sizeof line,
            "bktsize:4 items:%llu deletes:%llu filters:%u max_iterations:%llu expansion:%llu",
            (unsigned long long)value->meta.items, (unsigned long long)value->meta.deletes,
            value->meta.filter_count, (unsigned long long)value->meta.max_iterations,
            (unsigned long long)value->meta.expansion);
        RedisModule_ReplyWithCString(ctx, line);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* CF.COMPACT key: every link keeps its items (none is ever dropped), so
 * there is nothing to move; answers as RedisBloom does. */
static int cf_compact(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value;
    open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_CF, &key, &value);
    if (value == NULL)
        RedisModule_ReplyWithError(ctx, "Cuckoo filter was not found");
    else
        RedisModule_ReplyWithSimpleString(ctx, "OK");
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int cf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return family_scandump(ctx, argv, argc, BKR_CF);
}

static int cf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return family_loadchunk(ctx, argv, argc, BKR_CF);
}

const command_spec redisbloom_commands[] = { { "bf.reserve", bf_reserve, WRITE, 1, 1, 1 },
                                             { "bf.add", bf_add, WRITE " fast", 1, 1, 1 },
                                             { "bf.madd", bf_madd, WRITE, 1, 1, 1 },
                                             { "bf.insert", bf_insert, WRITE, 1, 1, 1 },
                                             { "bf.exists", bf_exists, READ, 1, 1, 1 },
                                             { "bf.mexists", bf_mexists, READ, 1, 1, 1 },
                                             { "bf.info", bf_info, READ, 1, 1, 1 },
                                             { "bf.card", bf_card, READ, 1, 1, 1 },
                                             { "bf.debug", bf_debug, READ, 1, 1, 1 },
                                             { "bf.scandump", bf_scandump, "readonly", 1, 1, 1 },
                                             { "bf.loadchunk", bf_loadchunk, WRITE, 1, 1, 1 },
                                             { "cf.reserve", cf_reserve, WRITE, 1, 1, 1 },
                                             { "cf.add", cf_add, WRITE " fast", 1, 1, 1 },
                                             { "cf.addnx", cf_addnx, WRITE " fast", 1, 1, 1 },
                                             { "cf.insert", cf_insert, WRITE, 1, 1, 1 },
                                             { "cf.insertnx", cf_insertnx, WRITE, 1, 1, 1 },
                                             { "cf.exists", cf_exists, READ, 1, 1, 1 },
                                             { "cf.mexists", cf_mexists, READ, 1, 1, 1 },
                                             { "cf.count", cf_count, READ, 1, 1, 1 },
                                             { "cf.del", cf_del, "write fast", 1, 1, 1 },
                                             { "cf.info", cf_info, READ, 1, 1, 1 },
                                             { "cf.debug", cf_debug, READ, 1, 1, 1 },
                                             { "cf.compact", cf_compact, "write", 1, 1, 1 },
                                             { "cf.scandump", cf_scandump, "readonly", 1, 1, 1 },
                                             { "cf.loadchunk", cf_loadchunk, WRITE, 1, 1, 1 },
                                             { NULL, NULL, NULL, 0, 0, 0 } };
