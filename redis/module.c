/*
 * redis/module.c -- bloomkit.so, the Redis module: RedisBloom's BF.* and
 * CF.* commands over bloomkit's `scalable` and `cuckoo` kinds, and BK.*
 * for every kind, all on one module data type ("bloomkit-", redis/value.h).
 *
 * Shape of a command handler:
 *
 *     parse arguments        -> the RedisBloom error string on a mistake
 *     open the key           -> WRONGTYPE unless it holds this family
 *     act through bk_filter_* (generic API only)
 *     reply                  -> RESP3 types when the client said HELLO 3
 *     after a write: drop the SCANDUMP cache, notify a design-point
 *     crossing, replicate verbatim
 *
 * Replies match RedisBloom 2.6 byte for byte where the internals allow;
 * docs/REDIS.md lists every difference (sizes, bucket counts, SCANDUMP
 * bytes, BF.DEBUG text).  Persistence: RDB and DUMP/RESTORE write the
 * value's header and each filter's bloomkit file image; AOF rewrite emits
 * the family's LOADCHUNK commands; every byte read back goes through
 * redis/value.c's checks and bk_filter_deserialize.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit/filter.h"
#include "bloomkit/format.h"
#include "rm_api.h"
#include "value.h"

#define MODULE_NAME "bloomkit"
#define MODULE_VERSION 100
#define TYPE_NAME "bloomkit-" /* exactly 9 characters, as Redis requires */
#define TYPE_ENCODING_VERSION 1
#define SCANDUMP_CHUNK ((size_t)16 << 20)
#define CROSSING_EVENT "bloomkit.past-design-point"

static RedisModuleType *value_type;

/* Module arguments (RedisBloom's names and defaults). */
static double config_error_rate = 0.01;
static long long config_initial_size = 100;
static long long config_cf_max_expansions = 32;
#define CF_DEFAULT_CAPACITY 1024
#define CF_DEFAULT_BUCKET_SIZE 2
#define CF_DEFAULT_MAX_ITERATIONS 20
#define CF_DEFAULT_EXPANSION 1
#define CF_FPR 0.01 /* sizes the fingerprints: 12 bits (docs/REDIS.md) */

/* ------------------------------------------------------------------------ */
/* Live values: counted for INFO bloomkit                                   */
/* ------------------------------------------------------------------------ */

static bkr_value *live_values;
static long long past_design_point_count;

static void fill_alarm(bk_filter *filter, bk_fill_status status, void *context)
{
    (void)filter;
    (void)status;
    bkr_value *value = context;
    if (!value->past_design_point) {
        value->past_design_point = true;
        value->crossing_pending = true;
        past_design_point_count++;
    }
}

/* Arms the fill alarm on the newest filter, or counts the value as past
 * its design point already (then no event is sent again). */
static void arm_alarm(bkr_value *value)
{
    if (value->meta.filter_count == 0)
        return;
    bk_filter *newest = bkr_value_newest(value);
    if (bk_filter_check_fill(newest) == BK_OK) {
        bk_filter_set_fill_alarm(newest, fill_alarm, value);
    } else if (!value->past_design_point) {
        value->past_design_point = true;
        past_design_point_count++;
    }
}

/* Enters a value handed to Redis into the live list. */
static bkr_value *track(bkr_value *value)
{
    value->prev = NULL;
    value->next = live_values;
    if (live_values != NULL)
        live_values->prev = value;
    live_values = value;
    value->past_design_point = false;
    arm_alarm(value);
    return value;
}

static void type_free(void *opaque)
{
    bkr_value *value = opaque;
    if (value->prev != NULL)
        value->prev->next = value->next;
    else if (live_values == value)
        live_values = value->next;
    if (value->next != NULL)
        value->next->prev = value->prev;
    if (value->past_design_point)
        past_design_point_count--;
    bkr_value_free(value);
}

/* ------------------------------------------------------------------------ */
/* Replies                                                                  */
/* ------------------------------------------------------------------------ */

static bool is_resp3(RedisModuleCtx *ctx)
{
    return (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_RESP3) != 0;
}

/* #t/#f in RESP3, :1/:0 in RESP2. */
static void reply_bool(RedisModuleCtx *ctx, bool yes)
{
    if (RedisModule_ReplyWithBool != NULL)
        RedisModule_ReplyWithBool(ctx, yes);
    else
        RedisModule_ReplyWithLongLong(ctx, yes);
}

/* A map of `pairs` entries in RESP3, a flat array in RESP2. */
static void reply_map(RedisModuleCtx *ctx, long pairs)
{
    if (RedisModule_ReplyWithMap != NULL)
        RedisModule_ReplyWithMap(ctx, pairs);
    else
        RedisModule_ReplyWithArray(ctx, 2 * pairs);
}

static int reply_wrongtype(RedisModuleCtx *ctx)
{
    return RedisModule_ReplyWithError(ctx, "WRONGTYPE Operation against a key holding the wrong kind of value");
}

/* An error reply for a library status (BK.* commands). */
static int reply_status(RedisModuleCtx *ctx, bk_status status)
{
    char message[160];
    snprintf(message, sizeof message, "ERR %s", bk_strerror(status));
    return RedisModule_ReplyWithError(ctx, message);
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */
/* ------------------------------------------------------------------------ */

static bool arg_is(RedisModuleString *arg, const char *word)
{
    size_t len;
    const char *text = RedisModule_StringPtrLen(arg, &len);
    if (len != strlen(word))
        return false;
    for (size_t i = 0; i < len; i++)
        if (toupper((unsigned char)text[i]) != toupper((unsigned char)word[i]))
            return false;
    return true;
}

static bool arg_int(RedisModuleString *arg, long long *out)
{
    return RedisModule_StringToLongLong(arg, out) == REDISMODULE_OK;
}

static bool arg_double(RedisModuleString *arg, double *out)
{
    return RedisModule_StringToDouble(arg, out) == REDISMODULE_OK;
}

static bk_key arg_key(RedisModuleString *arg)
{
    bk_key key;
    key.data = RedisModule_StringPtrLen(arg, &key.len);
    return key;
}

/* argv[first..argc) as keys, with room for one answer each, in one
 * allocation the caller frees (*keys); NULL on allocation failure. */
static bk_key *items_with_answers(RedisModuleString **argv, int first, int argc, bool **answers)
{
    size_t count = (size_t)(argc - first);
    bk_key *keys = calloc(1, count * (sizeof *keys + sizeof **answers) + 1);
    if (keys == NULL)
        return NULL;
    for (size_t i = 0; i < count; i++)
        keys[i] = arg_key(argv[first + (int)i]);
    *answers = (bool *)(keys + count);
    return keys;
}

/* MEXISTS: one answer per item, through the batch queries. */
static void reply_mexists(RedisModuleCtx *ctx, const bkr_value *value, RedisModuleString **argv, int first,
                          int argc)
{
    bool *answers = NULL;
    bk_key *keys = value != NULL ? items_with_answers(argv, first, argc, &answers) : NULL;
    if (keys != NULL && bkr_value_contains_batch(value, keys, (size_t)(argc - first), answers) != BK_OK) {
        free(keys);
        keys = NULL;
    }
    RedisModule_ReplyWithArray(ctx, argc - first);
    for (int i = first; i < argc; i++) {
        bk_key k = arg_key(argv[i]);
        reply_bool(ctx, value != NULL &&
                            (keys != NULL ? answers[i - first] : bkr_value_contains(value, k.data, k.len)));
    }
    free(keys);
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                     */
/* ------------------------------------------------------------------------ */

typedef enum lookup_result { KEY_EMPTY, KEY_OURS, KEY_WRONGTYPE } lookup_result;

/* Opens `name`; KEY_OURS when it holds a complete value of `family`
 * (BKR_BK: any family), KEY_WRONGTYPE for any other value (or one that a
 * LOADCHUNK is still filling). */
static lookup_result open_value(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                                bkr_family family, RedisModuleKey **key, bkr_value **value)
{
    *key = RedisModule_OpenKey(ctx, name, mode);
    *value = NULL;
    int type = RedisModule_KeyType(*key);
    if (type == REDISMODULE_KEYTYPE_EMPTY)
        return KEY_EMPTY;
    if (type != REDISMODULE_KEYTYPE_MODULE || RedisModule_ModuleTypeGetType(*key) != value_type)
        return KEY_WRONGTYPE;
    bkr_value *found = RedisModule_ModuleTypeGetValue(*key);
    if (found->loading != NULL || (family != BKR_BK && found->meta.family != family))
        return KEY_WRONGTYPE;
    *value = found;
    return KEY_OURS;
}

/* The newest filter's statistics, computed (a pass over its memory for
 * the bit-array kinds) at most once between two writes. */
static const bk_stats *newest_stats(bkr_value *value)
{
    if (!value->newest_stats_valid) {
        bk_filter_stats(bkr_value_newest(value), &value->newest_stats);
        value->newest_stats_valid = true;
    }
    return &value->newest_stats;
}

/* Bytes a value holds: the newest filter's memory (from its statistics)
 * plus the older links' and the value's own (bkr_value_memory counts
 * every filter by its serialised size, a header more). */
static size_t value_memory(bkr_value *value)
{
    if (value->meta.filter_count == 0)
        return bkr_value_memory(value);
    size_t newest_image = 0;
    bk_filter_serialized_size(bkr_value_newest(value), &newest_image);
    return bkr_value_memory(value) - newest_image + (size_t)newest_stats(value)->bytes;
}

/* What every write does after changing a value. */
static void after_write(RedisModuleCtx *ctx, RedisModuleString *name, bkr_value *value)
{
    if (value != NULL) {
        value->newest_stats_valid = false;
        free(value->dump);
        value->dump = NULL;
        value->dump_size = 0;
        if (value->crossing_pending) {
            value->crossing_pending = false;
            RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, CROSSING_EVENT, name);
        }
    }
    RedisModule_ReplicateVerbatim(ctx);
}

static bkr_value *install(RedisModuleKey *key, bkr_value *value)
{
    RedisModule_ModuleTypeSetValue(key, value_type, track(value));
    return value;
}

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
    params.fpr = CF_FPR;
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
            return RedisModule_ReplyWithError(ctx, "ERR expansion should be greater or equal to 1");
        if (nonscaling)
            return RedisModule_ReplyWithError(ctx, "Nonscaling filters cannot expand");
    }
    RedisModuleKey *key;
    bkr_value *value;
    lookup_result found = open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_BF, &key, &value);
    int rc;
    if (found == KEY_WRONGTYPE) {
        rc = reply_wrongtype(ctx);
    } else if (found == KEY_OURS) {
        rc = RedisModule_ReplyWithError(ctx, "ERR item exists");
    } else if (new_bf(&(bf_options){ (uint64_t)capacity, error_rate, nonscaling ? 0 : (uint64_t)expansion },
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

/* Adds one item to a BF, replying with its answer (an array element). */
static void bf_add_reply(RedisModuleCtx *ctx, bkr_value *value, RedisModuleString *item, bool *failed)
{
    bk_key k = arg_key(item);
    bool was_new = false;
    bk_status status = bk_filter_add(value->filters[0], k.data, k.len, &was_new);
    if (status == BK_OK) {
        reply_bool(ctx, was_new);
    } else {
        RedisModule_ReplyWithError(ctx, value->meta.expansion == 0 ? "ERR non scaling filter is full"
                                                                    : "ERR filter cannot grow further");
        *failed = true;
    }
}

/* Opens `name` for adding to a value of `family`, creating it with
 * create(options) when missing (unless nocreate).  Replies and returns
 * NULL on an error (WRONGTYPE, "ERR not found", creation failure). */
static bkr_value *open_for_add(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey **key,
                               bkr_family family, bool nocreate,
                               bk_status (*create)(const void *options, bkr_value **out), const void *options)
{
    bkr_value *value;
    lookup_result found = open_value(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE, family, key, &value);
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

static bk_status create_bf(const void *options, bkr_value **out)
{
    return new_bf(options, out);
}

static bk_status create_cf(const void *options, bkr_value **out)
{
    return new_cf(options, out);
}

/* The items argv[first..argc) added to a BF, as an array (stopping at the
 * first error, as RedisBloom does).  The items are first queried as one
 * batch (hashed and their memory requested ahead): one already present
 * answers 0 without an add, and the adds of the others find their words
 * in the cache.  The answers are those of adding one item after another. */
static void bf_add_items(RedisModuleCtx *ctx, bkr_value *value, RedisModuleString **argv, int first, int argc)
{
    bool *present = NULL;
    bk_key *keys = argc - first > 1 ? items_with_answers(argv, first, argc, &present) : NULL;
    if (keys != NULL)
        bkr_value_contains_batch(value, keys, (size_t)(argc - first), present);
    RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
    long replied = 0;
    bool failed = false;
    for (int i = first; i < argc && !failed; i++, replied++) {
        if (keys != NULL && present[i - first])
            reply_bool(ctx, false);
        else
            bf_add_reply(ctx, value, argv[i], &failed);
    }
    RedisModule_ReplySetArrayLength(ctx, replied);
    free(keys);
}

static int bf_add_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool multi)
{
    if (multi ? argc < 3 : argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bf_options defaults = { (uint64_t)config_initial_size, config_error_rate, 2 };
    bkr_value *value = open_for_add(ctx, argv[1], &key, BKR_BF, false, create_bf, &defaults);
    if (value != NULL) {
        if (multi) {
            bf_add_items(ctx, value, argv, 2, argc);
        } else {
            bool failed = false;
            bf_add_reply(ctx, value, argv[2], &failed);
        }
        after_write(ctx, argv[1], value);
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
        } else if (arg_is(argv[i], "CAPACITY") || arg_is(argv[i], "ERROR") || arg_is(argv[i], "EXPANSION")) {
            return RedisModule_WrongArity(ctx);
        } else {
            return RedisModule_ReplyWithError(ctx, "Unknown argument received");
        }
    }
    if (items_at < 0 || items_at >= argc)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bf_options options = { (uint64_t)capacity, error_rate, nonscaling ? 0 : (uint64_t)expansion };
    bkr_value *value = open_for_add(ctx, argv[1], &key, BKR_BF, nocreate, create_bf, &options);
    if (value != NULL) {
        bf_add_items(ctx, value, argv, items_at, argc);
        after_write(ctx, argv[1], value);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* EXISTS/MEXISTS for BF and CF: a missing key or one of another type
 * answers "no", as RedisBloom does. */
static int exists_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bkr_family family, bool multi)
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

/* Opens an existing value for a read that needs it: replies "ERR not
 * found" / WRONGTYPE and returns NULL otherwise. */
static bkr_value *open_existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode, bkr_family family,
                                RedisModuleKey **key, const char *not_found)
{
    bkr_value *value;
    lookup_result found = open_value(ctx, name, mode, family, key, &value);
    if (found == KEY_WRONGTYPE)
        reply_wrongtype(ctx);
    else if (found == KEY_EMPTY)
        RedisModule_ReplyWithError(ctx, not_found);
    return value;
}

static const char *const bf_info_names[] = { "Capacity", "Size", "Number of filters",
                                             "Number of items inserted", "Expansion rate" };
static const char *const bf_info_words[] = { "CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION" };

static void bf_info_field(RedisModuleCtx *ctx, bkr_value *value, const bk_stats *stats, int field)
{
    switch (field) {
    case 0: RedisModule_ReplyWithLongLong(ctx, (long long)stats->capacity); break;
    case 1: RedisModule_ReplyWithLongLong(ctx, (long long)value_memory(value)); break;
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
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_BF, &key, "ERR not found");
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
        RedisModule_ReplyWithLongLong(ctx, value == NULL ? 0 : (long long)newest_stats(value)->keys_added);
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
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_BF, &key, "ERR not found");
    if (value != NULL) {
        bk_stats s = *newest_stats(value);
        char line[256];
        RedisModule_ReplyWithArray(ctx, 2);
        snprintf(line, sizeof line, "size:%llu", (unsigned long long)s.keys_added);
        RedisModule_ReplyWithCString(ctx, line);
        snprintf(line, sizeof line, "bytes:%llu bits:%llu filters:%u capacity:%llu size:%llu ratio:%g",
                 (unsigned long long)s.bytes, (unsigned long long)s.bits, s.filters,
                 (unsigned long long)s.capacity, (unsigned long long)s.keys_added, s.target_fpr);
        RedisModule_ReplyWithCString(ctx, line);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------------------ */
/* SCANDUMP / LOADCHUNK, shared by the three families                       */
/* ------------------------------------------------------------------------ */

/*
 * Cursors: SCANDUMP key 0 answers (1, header); every later answer is
 * (offset + 1, the bytes at offset), chunks of SCANDUMP_CHUNK bytes after
 * the header, and (0, "") once past the end.  A cursor c > 0 names the
 * chunk the previous call returned, so the next one starts after it.
 * LOADCHUNK key c bytes takes the chunks in that order: the header (c = 1)
 * starts a new key that no command can use until the last chunk has
 * arrived and the whole value has passed bkr_value_decode.
 */
typedef struct dump_words {
    bkr_family family;
    const char *bad_cursor, *bad_header, *not_found_chunk, *bad_data;
    bool end_is_null;
} dump_words;

static const dump_words bf_words = { BKR_BF, "ERR Second argument must be numeric", "ERR received bad data",
                                     "ERR not found", "ERR received bad data", false };
static const dump_words cf_words = { BKR_CF, "Invalid position", "Invalid header", "ERR not found",
                                     "Invalid header", true };
static const dump_words bk_words = { BKR_BK, "ERR invalid cursor", "ERR invalid header", "ERR not found",
                                     "ERR invalid data", false };

static int scandump_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const dump_words *words)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, words->family, &key, "ERR not found");
    if (value == NULL) {
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    long long cursor;
    if (!arg_int(argv[2], &cursor) || cursor < 0) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, words->family == BKR_BF ? "Second argument must be numeric"
                                                                         : words->bad_cursor);
    }
    if (cursor == 0 || value->dump == NULL) {
        free(value->dump);
        value->dump = NULL;
        value->dump_size = 0;
        if (bkr_value_encode(value, &value->dump, &value->dump_size) != BK_OK) {
            RedisModule_CloseKey(key);
            return RedisModule_ReplyWithError(ctx, "ERR out of memory");
        }
    }
    bkr_header header;
    size_t header_size;
    bkr_header_decode(value->dump, value->dump_size, &header, &header_size);
    size_t start, length;
    if (cursor == 0) {
        start = 0;
        length = header_size;
    } else {
        uint64_t previous = (uint64_t)cursor - 1;
        start = previous == 0 ? header_size : (size_t)(previous + SCANDUMP_CHUNK);
        if (previous > value->dump_size || start >= value->dump_size)
            start = value->dump_size;
        length = value->dump_size - start < SCANDUMP_CHUNK ? value->dump_size - start : SCANDUMP_CHUNK;
    }
    RedisModule_ReplyWithArray(ctx, 2);
    if (length == 0) {
        RedisModule_ReplyWithLongLong(ctx, 0);
        if (words->end_is_null)
            RedisModule_ReplyWithNull(ctx);
        else
            RedisModule_ReplyWithStringBuffer(ctx, "", 0);
        free(value->dump);
        value->dump = NULL;
        value->dump_size = 0;
    } else {
        RedisModule_ReplyWithLongLong(ctx, (long long)start + 1);
        RedisModule_ReplyWithStringBuffer(ctx, (const char *)value->dump + start, length);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* Starts a load from a header chunk: a placeholder value, key replaced. */
static int loadchunk_header(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey *key, const char *data,
                            size_t len, const dump_words *words)
{
    bkr_header header;
    size_t header_size;
    if (bkr_header_decode(data, len, &header, &header_size) != BK_OK || header_size != len ||
        header.meta.family != words->family)
        return RedisModule_ReplyWithError(ctx, words->bad_header);
    uint64_t total = bkr_header_total(&header);
    if (total > SIZE_MAX)
        return RedisModule_ReplyWithError(ctx, words->bad_header);
    bkr_value *value = calloc(1, sizeof *value);
    if (value != NULL)
        value->loading = malloc(len);
    if (value == NULL || value->loading == NULL) {
        free(value);
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    }
    memcpy(value->loading, data, len);
    value->loading_size = len;
    value->loading_expected = (size_t)total;
    value->meta.family = words->family;
    install(key, value);
    after_write(ctx, name, NULL);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* Appends a chunk; the last one turns the placeholder into the value. */
static int loadchunk_data(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey *key, bkr_value *pending,
                          uint64_t offset, const char *data, size_t len, const dump_words *words)
{
    if (offset != pending->loading_size || len > pending->loading_expected - pending->loading_size || len == 0)
        return RedisModule_ReplyWithError(ctx, words->bad_data);
    uint8_t *grown = realloc(pending->loading, pending->loading_size + len);
    if (grown == NULL)
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    memcpy(grown + pending->loading_size, data, len);
    pending->loading = grown;
    pending->loading_size += len;
    if (pending->loading_size < pending->loading_expected) {
        after_write(ctx, name, NULL);
        return RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    bkr_value *value;
    bk_status status = bkr_value_decode(pending->loading, pending->loading_size, &value);
    if (status != BK_OK) {
        RedisModule_DeleteKey(key);
        after_write(ctx, name, NULL);
        return RedisModule_ReplyWithError(ctx, words->bad_data);
    }
    install(key, value); /* frees the placeholder through type_free */
    after_write(ctx, name, value);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

static int loadchunk_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, const dump_words *words)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long cursor;
    if (!arg_int(argv[2], &cursor) || cursor < 0 || (cursor == 0 && words->family == BKR_CF))
        return RedisModule_ReplyWithError(ctx, words->bad_cursor);
    size_t len;
    const char *data = RedisModule_StringPtrLen(argv[3], &len);
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
    int type = RedisModule_KeyType(key);
    bkr_value *existing = NULL;
    if (type == REDISMODULE_KEYTYPE_MODULE && RedisModule_ModuleTypeGetType(key) == value_type)
        existing = RedisModule_ModuleTypeGetValue(key);
    int rc;
    if (type != REDISMODULE_KEYTYPE_EMPTY && (existing == NULL || existing->meta.family != words->family))
        rc = reply_wrongtype(ctx);
    else if (cursor == 1)
        rc = loadchunk_header(ctx, argv[1], key, data, len, words);
    else if (cursor == 0 || existing == NULL || existing->loading == NULL)
        rc = RedisModule_ReplyWithError(ctx, words->not_found_chunk);
    else
        rc = loadchunk_data(ctx, argv[1], key, existing, (uint64_t)cursor - 1, data, len, words);
    RedisModule_CloseKey(key);
    return rc;
}

static int bf_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return scandump_common(ctx, argv, argc, &bf_words);
}

static int bf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return loadchunk_common(ctx, argv, argc, &bf_words);
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
static int cf_option(RedisModuleCtx *ctx, RedisModuleString *value, const char *name, long long low,
                     long long high, long long *out)
{
    char message[96];
    if (!arg_int(value, out)) {
        snprintf(message, sizeof message, "Couldn't parse %s", name);
        RedisModule_ReplyWithError(ctx, message);
        return REDISMODULE_ERR;
    }
    if (*out < low || *out > high) {
        snprintf(message, sizeof message, "%s: value must be an integer between %lld and %lld, inclusive.", name,
                 low, high);
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
    cf_options o = { 0, CF_DEFAULT_BUCKET_SIZE, CF_DEFAULT_MAX_ITERATIONS, CF_DEFAULT_EXPANSION };
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
    lookup_result found = open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_CF, &key, &value);
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
    return bkr_cf_add(value, k.data, k.len, (unsigned)config_cf_max_expansions) == BK_OK ? 1 : -1;
}

static int cf_add_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool nx)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    cf_options defaults = { CF_DEFAULT_CAPACITY, CF_DEFAULT_BUCKET_SIZE, CF_DEFAULT_MAX_ITERATIONS,
                            CF_DEFAULT_EXPANSION };
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
    RedisModule_ReplyWithLongLong(ctx, value == NULL ? 0 : (long long)bkr_value_count(value, k.data, k.len));
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
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_CF, &key, "ERR not found");
    if (value != NULL) {
        uint64_t buckets = 0;
        for (uint32_t i = 0; i < value->meta.filter_count; i++) {
            bk_stats s;
            bk_filter_stats(value->filters[i], &s);
            buckets += s.fingerprint_bits == 0 ? 0 : s.bits / (4u * s.fingerprint_bits);
        }
        const char *names[] = { "Size", "Number of buckets", "Number of filters", "Number of items inserted",
                                "Number of items deleted", "Bucket size", "Expansion rate", "Max iterations" };
        long long values[] = { (long long)value_memory(value), (long long)buckets,
                               (long long)value->meta.filter_count, (long long)value->meta.items,
                               (long long)value->meta.deletes, 4, (long long)value->meta.expansion,
                               (long long)value->meta.max_iterations };
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
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_CF, &key, "ERR not found");
    if (value != NULL) {
        char line[256];
        snprintf(line, sizeof line, "bktsize:4 items:%llu deletes:%llu filters:%u max_iterations:%llu expansion:%llu",
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
    return scandump_common(ctx, argv, argc, &cf_words);
}

static int cf_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return loadchunk_common(ctx, argv, argc, &cf_words);
}

/* ------------------------------------------------------------------------ */
/* BK.*: every kind                                                         */
/* ------------------------------------------------------------------------ */

/* The server clock in seconds, for time windows. */
static uint64_t server_seconds(void)
{
    return (uint64_t)(RedisModule_Milliseconds() / 1000);
}

/* Parses a kind name; replies and returns false on an unknown one. */
static bool parse_kind(RedisModuleCtx *ctx, RedisModuleString *arg, bk_kind *kind)
{
    char name[32];
    size_t len;
    const char *text = RedisModule_StringPtrLen(arg, &len);
    if (len < sizeof name) {
        memcpy(name, text, len);
        name[len] = '\0';
    }
    if (len >= sizeof name || bk_kind_from_name(name, kind) != BK_OK) {
        RedisModule_ReplyWithError(ctx, "ERR unknown kind (bloom, blocked, sbbf, counting, cuckoo, xor8, "
                                        "fuse8, fuse16, fuse8_4, scalable, window)");
        return false;
    }
    return true;
}

/* Options after BK.RESERVE's fpr: EXPANSION x, NONSCALING, WINDOW n,
 * SECONDS s, GENERATIONS g, FINGERPRINT f, SEED s. */
static bool parse_bk_options(RedisModuleCtx *ctx, RedisModuleString **argv, int at, int argc, bk_params *p)
{
    for (int i = at; i < argc; i++) {
        long long n = 0;
        double x = 0;
        if (arg_is(argv[i], "NONSCALING")) {
            p->max_filters = 1;
            continue;
        }
        bool has_value = i + 1 < argc;
        if (has_value && arg_is(argv[i], "EXPANSION") && arg_double(argv[i + 1], &x) && x >= 1)
            p->expansion = x;
        else if (has_value && arg_is(argv[i], "WINDOW") && arg_int(argv[i + 1], &n) && n > 0)
            p->window_keys = (uint64_t)n;
        else if (has_value && arg_is(argv[i], "SECONDS") && arg_int(argv[i + 1], &n) && n > 0)
            p->window_seconds = (uint64_t)n;
        else if (has_value && arg_is(argv[i], "GENERATIONS") && arg_int(argv[i + 1], &n) && n > 1 && n < 256)
            p->generations = (unsigned)n;
        else if (has_value && arg_is(argv[i], "FINGERPRINT") && arg_int(argv[i + 1], &n) && n > 0 && n <= 16)
            p->fingerprint_bits = (unsigned)n;
        else if (has_value && arg_is(argv[i], "SEED") && arg_int(argv[i + 1], &n))
            p->seed = (uint64_t)n;
        else {
            RedisModule_ReplyWithError(ctx, "ERR bad option (EXPANSION x, NONSCALING, WINDOW n, SECONDS s, "
                                            "GENERATIONS g, FINGERPRINT f, SEED s)");
            return false;
        }
        i++;
    }
    return true;
}

/* Opens `name` for a new value: false (key closed, "ERR item exists"
 * replied) when something is already there. */
static bool open_new_key(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey **key)
{
    *key = RedisModule_OpenKey(ctx, name, REDISMODULE_READ | REDISMODULE_WRITE);
    if (RedisModule_KeyType(*key) == REDISMODULE_KEYTYPE_EMPTY)
        return true;
    RedisModule_ReplyWithError(ctx, "ERR item exists");
    RedisModule_CloseKey(*key);
    return false;
}

static int install_new(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey *key, bk_filter *filter)
{
    bkr_value *value = bkr_value_wrap(BKR_BK, filter);
    if (value == NULL)
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    install(key, value);
    after_write(ctx, name, value);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* BK.RESERVE key KIND capacity fpr [options] */
static int bk_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 5)
        return RedisModule_WrongArity(ctx);
    bk_kind kind;
    if (!parse_kind(ctx, argv[2], &kind))
        return REDISMODULE_OK;
    if (bk_kind_is_static(kind))
        return RedisModule_ReplyWithError(ctx, "ERR a static kind is built from its items: use BK.BUILD");
    bk_params params;
    memset(&params, 0, sizeof params);
    long long capacity;
    if (!arg_int(argv[3], &capacity) || capacity <= 0)
        return RedisModule_ReplyWithError(ctx, "ERR bad capacity");
    if (!arg_double(argv[4], &params.fpr) || !(params.fpr > 0 && params.fpr < 1))
        return RedisModule_ReplyWithError(ctx, "ERR bad error rate");
    params.capacity = (uint64_t)capacity;
    if (!parse_bk_options(ctx, argv, 5, argc, &params))
        return REDISMODULE_OK;
    RedisModuleKey *key;
    if (!open_new_key(ctx, argv[1], &key))
        return REDISMODULE_OK;
    bk_filter *filter;
    bk_status status = bk_filter_create(kind, &params, &filter);
    int rc = status == BK_OK ? install_new(ctx, argv[1], key, filter) : reply_status(ctx, status);
    RedisModule_CloseKey(key);
    return rc;
}

/* The members of the SET `name` as keys (pointing into *reply, which the
 * caller frees).  NULL with an error replied when it is not a set. */
static bk_key *set_members(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleCallReply **reply, size_t *count)
{
    *reply = RedisModule_Call(ctx, "SMEMBERS", "s", name);
    if (*reply == NULL || RedisModule_CallReplyType(*reply) != REDISMODULE_REPLY_ARRAY) {
        if (*reply != NULL)
            RedisModule_FreeCallReply(*reply);
        RedisModule_ReplyWithError(ctx, "WRONGTYPE FROMSET needs a SET");
        return NULL;
    }
    *count = RedisModule_CallReplyLength(*reply);
    bk_key *keys = malloc((*count ? *count : 1) * sizeof *keys);
    for (size_t i = 0; keys != NULL && i < *count; i++)
        keys[i].data = RedisModule_CallReplyStringPtr(RedisModule_CallReplyArrayElement(*reply, i), &keys[i].len);
    if (keys == NULL) {
        RedisModule_FreeCallReply(*reply);
        RedisModule_ReplyWithError(ctx, "ERR out of memory");
    }
    return keys;
}

/* BK.BUILD key KIND [FPR p] item... | BK.BUILD key KIND [FPR p] FROMSET setkey */
static int bk_build(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    int items_at = 3;
    if (argc >= 5 && arg_is(argv[3], "FPR"))
        items_at = 5;
    bool from_set = argc == items_at + 2 && arg_is(argv[items_at], "FROMSET");
    if (RedisModule_IsKeysPositionRequest(ctx)) {
        RedisModule_KeyAtPos(ctx, 1);
        if (from_set)
            RedisModule_KeyAtPos(ctx, items_at + 1);
        return REDISMODULE_OK;
    }
    if (argc < items_at + 1)
        return RedisModule_WrongArity(ctx);
    bk_kind kind;
    if (!parse_kind(ctx, argv[2], &kind))
        return REDISMODULE_OK;
    bk_params params;
    memset(&params, 0, sizeof params);
    params.fpr = 0.01;
    if (items_at == 5 && (!arg_double(argv[4], &params.fpr) || !(params.fpr > 0 && params.fpr < 1)))
        return RedisModule_ReplyWithError(ctx, "ERR bad error rate");
    RedisModuleCallReply *reply = NULL;
    size_t count = (size_t)(argc - items_at);
    bk_key *keys = from_set ? set_members(ctx, argv[items_at + 1], &reply, &count)
                            : malloc(count * sizeof *keys);
    if (keys == NULL)
        return from_set ? REDISMODULE_OK : RedisModule_ReplyWithError(ctx, "ERR out of memory");
    for (size_t i = 0; !from_set && i < count; i++)
        keys[i] = arg_key(argv[items_at + (int)i]);
    RedisModuleKey *key;
    int rc = REDISMODULE_OK;
    if (open_new_key(ctx, argv[1], &key)) {
        bk_filter *filter;
        bk_status status = count == 0 ? BK_EINVAL : bk_filter_build(kind, &params, keys, count, &filter);
        rc = status == BK_OK ? install_new(ctx, argv[1], key, filter) : reply_status(ctx, status);
        RedisModule_CloseKey(key);
    }
    free(keys);
    if (reply != NULL)
        RedisModule_FreeCallReply(reply);
    return rc;
}

/* BK.ADD / BK.MADD key item...: 1 (true) for a new item. */
static int bk_add_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool multi)
{
    if (multi ? argc < 3 : argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_BK, &key, "ERR not found");
    if (value != NULL) {
        if (multi)
            RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
        long replied = 0;
        bk_filter *newest = bkr_value_newest(value);
        bk_filter_advance_clock(newest, server_seconds());
        for (int i = 2; i < argc; i++, replied++) {
            bk_key k = arg_key(argv[i]);
            bool was_new = false;
            bk_status status = value->meta.family == BKR_CF
                                   ? bkr_cf_add(value, k.data, k.len, (unsigned)config_cf_max_expansions)
                                   : bk_filter_add(newest, k.data, k.len, &was_new);
            if (status != BK_OK) {
                reply_status(ctx, status);
                replied++;
                break;
            }
            reply_bool(ctx, value->meta.family == BKR_CF || was_new);
        }
        if (multi)
            RedisModule_ReplySetArrayLength(ctx, replied);
        after_write(ctx, argv[1], value);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int bk_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return bk_add_common(ctx, argv, argc, false);
}

static int bk_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return bk_add_common(ctx, argv, argc, true);
}

/* BK.EXISTS / BK.MEXISTS: a missing key answers "no"; another type WRONGTYPE. */
static int bk_exists_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool multi)
{
    if (multi ? argc < 3 : argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value;
    if (open_value(ctx, argv[1], REDISMODULE_READ, BKR_BK, &key, &value) == KEY_WRONGTYPE) {
        RedisModule_CloseKey(key);
        return reply_wrongtype(ctx);
    }
    if (multi) {
        reply_mexists(ctx, value, argv, 2, argc);
    } else {
        bk_key k = arg_key(argv[2]);
        reply_bool(ctx, value != NULL && bkr_value_contains(value, k.data, k.len));
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static int bk_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return bk_exists_common(ctx, argv, argc, false);
}

static int bk_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return bk_exists_common(ctx, argv, argc, true);
}

/* BK.DEL key item: 1 removed, 0 absent; an error for kinds without removal. */
static int bk_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_BK, &key, "ERR not found");
    if (value != NULL) {
        bk_key k = arg_key(argv[2]);
        bk_status status = value->meta.family == BKR_CF ? bkr_cf_delete(value, k.data, k.len)
                                                        : bk_filter_remove(value->filters[0], k.data, k.len);
        if (status == BK_OK || status == BK_ENOTFOUND) {
            reply_bool(ctx, status == BK_OK);
            if (status == BK_OK)
                after_write(ctx, argv[1], value);
        } else {
            reply_status(ctx, status);
        }
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* BK.COUNT key item: an upper bound on the item's adds (0/1 for kinds
 * that only answer membership). */
static int bk_count(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_BK, &key, "ERR not found");
    if (value != NULL) {
        bk_key k = arg_key(argv[2]);
        uint64_t count = bkr_value_count(value, k.data, k.len);
        if (count == 0 && bkr_value_contains(value, k.data, k.len))
            count = 1;
        RedisModule_ReplyWithLongLong(ctx, (long long)count);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static void info_double(RedisModuleCtx *ctx, const char *name, double x)
{
    RedisModule_ReplyWithSimpleString(ctx, name);
    RedisModule_ReplyWithDouble(ctx, x);
}

static void info_int(RedisModuleCtx *ctx, const char *name, long long x)
{
    RedisModule_ReplyWithSimpleString(ctx, name);
    RedisModule_ReplyWithLongLong(ctx, x);
}

/* BK.INFO key: a map of the newest filter's statistics (a CF chain's
 * first link stands for the chain's kind and design). */
static int bk_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_BK, &key, "ERR not found");
    if (value != NULL) {
        bk_stats s = *newest_stats(value);
        reply_map(ctx, 13);
        RedisModule_ReplyWithSimpleString(ctx, "kind");
        RedisModule_ReplyWithSimpleString(ctx, bk_kind_name(s.kind));
        info_int(ctx, "capacity", (long long)s.capacity);
        info_int(ctx, "bytes", (long long)value_memory(value));
        info_int(ctx, "bits", (long long)s.bits);
        info_int(ctx, "hashes", s.hashes);
        info_int(ctx, "filters", value->meta.filter_count > 1 ? value->meta.filter_count : s.filters);
        info_int(ctx, "keys_added", (long long)s.keys_added);
        info_double(ctx, "keys_estimated", s.keys_estimated);
        info_double(ctx, "fill_ratio", s.fill_ratio);
        info_double(ctx, "design_fill_ratio", s.design_fill_ratio);
        info_double(ctx, "target_fpr", s.target_fpr);
        info_double(ctx, "current_fpr", s.current_fpr);
        RedisModule_ReplyWithSimpleString(ctx, "status");
        RedisModule_ReplyWithSimpleString(ctx, bk_fill_status_name(bk_fill_status_from_stats(&s)));
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* BK.CARD key: the number of distinct items, estimated from the fill. */
static int bk_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value;
    lookup_result found = open_value(ctx, argv[1], REDISMODULE_READ, BKR_BK, &key, &value);
    if (found == KEY_WRONGTYPE) {
        reply_wrongtype(ctx);
    } else {
        double estimate = 0;
        for (uint32_t i = 0; value != NULL && i < value->meta.filter_count; i++) {
            bk_stats s;
            bk_filter_stats(value->filters[i], &s);
            estimate += s.keys_estimated;
        }
        RedisModule_ReplyWithLongLong(ctx, llround(estimate));
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* Folds one source into *work, which starts as a copy of dest or, when
 * dest is missing, of the first source (folded no further). */
static bk_status fold_source(bkr_value **work, const bkr_value *dest, const bkr_value *src, bool intersect)
{
    if (src->meta.filter_count != 1)
        return BK_EUNSUPPORTED;
    if (*work == NULL) {
        bk_status status = bkr_value_copy(dest != NULL ? dest : src, work);
        if (status != BK_OK || dest == NULL)
            return status;
    }
    if ((*work)->meta.filter_count != 1)
        return BK_EUNSUPPORTED;
    return (intersect ? bk_filter_intersect : bk_filter_union)((*work)->filters[0], src->filters[0]);
}

/* BK.MERGE / BK.INTERSECT dest src...: dest (created as a copy of the
 * first source when missing) becomes the union / intersection.  Single
 * filters only (not CF chains); nothing changes on an error. */
static int bk_combine(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bool intersect)
{
    if (argc < 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *dest_key;
    bkr_value *dest;
    lookup_result found = open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_BK, &dest_key, &dest);
    if (found == KEY_WRONGTYPE) {
        RedisModule_CloseKey(dest_key);
        return reply_wrongtype(ctx);
    }
    bkr_value *work = NULL;
    bk_status status = BK_OK;
    for (int i = 2; i < argc && status == BK_OK; i++) {
        RedisModuleKey *src_key;
        bkr_value *src = open_existing(ctx, argv[i], REDISMODULE_READ, BKR_BK, &src_key, "ERR a source filter does not exist");
        if (src == NULL) {
            RedisModule_CloseKey(src_key);
            bkr_value_free(work);
            RedisModule_CloseKey(dest_key);
            return REDISMODULE_OK;
        }
        status = fold_source(&work, dest, src, intersect);
        RedisModule_CloseKey(src_key);
    }
    int rc;
    if (status != BK_OK) {
        bkr_value_free(work);
        rc = status == BK_EINCOMPATIBLE
                 ? RedisModule_ReplyWithError(ctx, "ERR the filters differ in kind, size or hashing")
                 : reply_status(ctx, status);
    } else {
        install(dest_key, work);
        after_write(ctx, argv[1], work);
        rc = RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    RedisModule_CloseKey(dest_key);
    return rc;
}

static int bk_merge(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return bk_combine(ctx, argv, argc, false);
}

static int bk_intersect(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return bk_combine(ctx, argv, argc, true);
}

/* BK.DUMP key: the filter in bloomkit's file format, byte for byte what
 * bk_filter_save writes (a single filter: BF and BK keys, one-link CFs). */
static int bk_dump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_BK, &key, "ERR not found");
    if (value != NULL) {
        size_t size = 0;
        uint8_t *image = NULL;
        bk_status status = value->meta.filter_count != 1
                               ? BK_EUNSUPPORTED
                               : bk_filter_serialized_size(value->filters[0], &size);
        if (status == BK_OK && (image = malloc(size)) == NULL)
            status = BK_ENOMEM;
        if (status == BK_OK)
            status = bk_filter_serialize(value->filters[0], image, size, NULL);
        if (status == BK_OK)
            RedisModule_ReplyWithStringBuffer(ctx, (const char *)image, size);
        else
            reply_status(ctx, status);
        free(image);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* BK.LOAD key bytes: a new key from a bloomkit file image, through the
 * library's validating loader. */
static int bk_load(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    size_t len;
    const char *bytes = RedisModule_StringPtrLen(argv[2], &len);
    bk_filter *filter;
    bk_status status = bk_filter_deserialize(bytes, len, NULL, &filter);
    if (status != BK_OK)
        return reply_status(ctx, status);
    RedisModuleKey *key;
    if (!open_new_key(ctx, argv[1], &key)) {
        bk_filter_free(filter);
        return REDISMODULE_OK;
    }
    int rc = install_new(ctx, argv[1], key, filter);
    RedisModule_CloseKey(key);
    return rc;
}

static int bk_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return scandump_common(ctx, argv, argc, &bk_words);
}

static int bk_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return loadchunk_common(ctx, argv, argc, &bk_words);
}

#define BK_COMMANDS \
    { "bk.reserve", bk_reserve, WRITE, 1, 1, 1 }, \
    { "bk.build", bk_build, WRITE " getkeys-api", 1, 1, 1 }, \
    { "bk.add", bk_add, WRITE " fast", 1, 1, 1 }, \
    { "bk.madd", bk_madd, WRITE, 1, 1, 1 }, \
    { "bk.exists", bk_exists, READ, 1, 1, 1 }, \
    { "bk.mexists", bk_mexists, READ, 1, 1, 1 }, \
    { "bk.del", bk_del, "write fast", 1, 1, 1 }, \
    { "bk.count", bk_count, READ, 1, 1, 1 }, \
    { "bk.info", bk_info, "readonly", 1, 1, 1 }, \
    { "bk.card", bk_card, "readonly", 1, 1, 1 }, \
    { "bk.merge", bk_merge, WRITE, 1, -1, 1 }, \
    { "bk.intersect", bk_intersect, WRITE, 1, -1, 1 }, \
    { "bk.dump", bk_dump, "readonly", 1, 1, 1 }, \
    { "bk.load", bk_load, WRITE, 1, 1, 1 }, \
    { "bk.scandump", bk_scandump, "readonly", 1, 1, 1 }, \
    { "bk.loadchunk", bk_loadchunk, WRITE, 1, 1, 1 }

/* ------------------------------------------------------------------------ */
/* The data type                                                            */
/* ------------------------------------------------------------------------ */

/*
 * RDB encoding (encoding version 1):
 *   unsigned   state: 0 a value, 1 a LOADCHUNK in progress
 *   state 0:   string  the value's header (redis/value.h)
 *              string  each filter's bloomkit file image, in order
 *   state 1:   unsigned expected total; string the bytes received so far
 */
static void type_rdb_save(RedisModuleIO *io, void *opaque)
{
    bkr_value *value = opaque;
    if (value->loading != NULL) {
        RedisModule_SaveUnsigned(io, 1);
        RedisModule_SaveUnsigned(io, value->loading_expected);
        RedisModule_SaveStringBuffer(io, (const char *)value->loading, value->loading_size);
        return;
    }
    RedisModule_SaveUnsigned(io, 0);
    uint8_t *header;
    size_t size;
    if (bkr_header_encode(value, &header, &size) != BK_OK) {
        RedisModule_LogIOError(io, "warning", "bloomkit: cannot encode a filter");
        return;
    }
    RedisModule_SaveStringBuffer(io, (const char *)header, size);
    free(header);
    for (uint32_t i = 0; i < value->meta.filter_count; i++) {
        size_t bytes = 0;
        bk_filter_serialized_size(value->filters[i], &bytes);
        uint8_t *image = malloc(bytes ? bytes : 1);
        if (image == NULL || bk_filter_serialize(value->filters[i], image, bytes, NULL) != BK_OK) {
            RedisModule_LogIOError(io, "warning", "bloomkit: cannot encode a filter");
            free(image);
            return;
        }
        RedisModule_SaveStringBuffer(io, (const char *)image, bytes);
        free(image);
    }
}

static bkr_value *rdb_load_pending(RedisModuleIO *io)
{
    uint64_t expected = RedisModule_LoadUnsigned(io);
    size_t len = 0;
    char *bytes = RedisModule_LoadStringBuffer(io, &len);
    if (RedisModule_IsIOError(io) || bytes == NULL)
        return NULL;
    bkr_header header;
    size_t header_size;
    bkr_value *value = NULL;
    if (bkr_header_decode(bytes, len, &header, &header_size) == BK_OK && bkr_header_total(&header) == expected &&
        len <= expected && expected <= SIZE_MAX && (value = calloc(1, sizeof *value)) != NULL) {
        value->loading = malloc(len);
        if (value->loading == NULL) {
            free(value);
            value = NULL;
        } else {
            memcpy(value->loading, bytes, len);
            value->loading_size = len;
            value->loading_expected = (size_t)expected;
            value->meta.family = header.meta.family;
        }
    }
    RedisModule_Free(bytes);
    return value;
}

static bkr_value *rdb_load_value(RedisModuleIO *io)
{
    size_t len = 0;
    char *bytes = RedisModule_LoadStringBuffer(io, &len);
    if (RedisModule_IsIOError(io) || bytes == NULL)
        return NULL;
    bkr_header header;
    size_t header_size;
    bk_status status = bkr_header_decode(bytes, len, &header, &header_size);
    RedisModule_Free(bytes);
    if (status != BK_OK || header_size != len)
        return NULL;
    bk_filter *filters[BKR_MAX_FILTERS];
    for (uint32_t i = 0; i < header.meta.filter_count; i++) {
        bytes = RedisModule_LoadStringBuffer(io, &len);
        status = RedisModule_IsIOError(io) || bytes == NULL ? BK_ETRUNCATED
                                                            : bkr_image_decode(&header, i, bytes, len, &filters[i]);
        if (bytes != NULL)
            RedisModule_Free(bytes);
        if (status != BK_OK) {
            while (i-- > 0)
                bk_filter_free(filters[i]);
            return NULL;
        }
    }
    bkr_value *value;
    return bkr_value_assemble(&header, filters, &value) == BK_OK ? value : NULL;
}

static void *type_rdb_load(RedisModuleIO *io, int encver)
{
    if (encver != TYPE_ENCODING_VERSION)
        return NULL;
    uint64_t state = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io))
        return NULL;
    bkr_value *value = state == 0 ? rdb_load_value(io) : state == 1 ? rdb_load_pending(io) : NULL;
    if (value == NULL) {
        RedisModule_LogIOError(io, "warning", "bloomkit: refused a damaged or hostile filter");
        return NULL;
    }
    return track(value);
}

static const char *loadchunk_command(bkr_family family)
{
    return family == BKR_BF ? "BF.LOADCHUNK" : family == BKR_CF ? "CF.LOADCHUNK" : "BK.LOADCHUNK";
}

/* AOF rewrite: the family's LOADCHUNK commands, header first, then chunks
 * of SCANDUMP_CHUNK bytes, exactly what SCANDUMP would hand a client. */
static void type_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *opaque)
{
    bkr_value *value = opaque;
    const char *command = loadchunk_command(value->meta.family);
    uint8_t *blob;
    size_t size;
    if (value->loading != NULL) {
        blob = value->loading;
        size = value->loading_size;
    } else if (bkr_value_encode(value, &blob, &size) != BK_OK) {
        RedisModule_LogIOError(aof, "warning", "bloomkit: cannot encode a filter");
        return;
    }
    bkr_header header;
    size_t header_size;
    bkr_header_decode(blob, size, &header, &header_size);
    RedisModule_EmitAOF(aof, command, "slb", key, 1LL, (const char *)blob, header_size);
    for (size_t at = header_size; at < size; at += SCANDUMP_CHUNK) {
        size_t length = size - at < SCANDUMP_CHUNK ? size - at : SCANDUMP_CHUNK;
        RedisModule_EmitAOF(aof, command, "slb", key, (long long)at + 1, (const char *)blob + at, length);
    }
    if (blob != value->loading)
        free(blob);
}

/* (The statistics cache is refreshed through a const pointer: Redis
 * gives the callback a const value, and the cache is not part of it.) */
static size_t type_mem_usage(const void *opaque)
{
    return value_memory((bkr_value *)(uintptr_t)opaque);
}

static void type_digest(RedisModuleDigest *digest, void *opaque)
{
    bkr_value *value = opaque;
    uint8_t *blob;
    size_t size;
    if (value->loading != NULL) {
        RedisModule_DigestAddStringBuffer(digest, (const char *)value->loading, value->loading_size);
    } else if (bkr_value_encode(value, &blob, &size) == BK_OK) {
        RedisModule_DigestAddStringBuffer(digest, (const char *)blob, size);
        free(blob);
    }
    RedisModule_DigestEndSequence(digest);
}

static void *type_copy(RedisModuleString *from, RedisModuleString *to, const void *opaque)
{
    (void)from;
    (void)to;
    bkr_value *copy;
    return bkr_value_copy(opaque, &copy) == BK_OK ? track(copy) : NULL;
}

/* ------------------------------------------------------------------------ */
/* INFO bloomkit                                                            */
/* ------------------------------------------------------------------------ */

static void info_func(RedisModuleInfoCtx *ctx, int for_crash_report)
{
    (void)for_crash_report;
    long long per_kind[BK_KIND_WINDOW + 1] = { 0 };
    long long total = 0, bytes = 0;
    for (const bkr_value *v = live_values; v != NULL; v = v->next) {
        total++;
        bytes += (long long)bkr_value_memory(v);
        if (v->meta.filter_count > 0) {
            bk_kind kind = bk_filter_kind(v->filters[0]);
            if ((unsigned)kind <= BK_KIND_WINDOW)
                per_kind[kind]++;
        }
    }
    RedisModule_InfoAddSection(ctx, "");
    RedisModule_InfoAddFieldLongLong(ctx, "filters", total);
    RedisModule_InfoAddFieldLongLong(ctx, "filters_past_design_point", past_design_point_count);
    RedisModule_InfoAddFieldLongLong(ctx, "bytes", bytes);
    for (int kind = BK_KIND_BLOOM; kind <= BK_KIND_WINDOW; kind++) {
        char field[64];
        snprintf(field, sizeof field, "filters_%s", bk_kind_name((bk_kind)kind));
        RedisModule_InfoAddFieldLongLong(ctx, field, per_kind[kind]);
    }
}

/* ------------------------------------------------------------------------ */
/* Loading the module                                                       */
/* ------------------------------------------------------------------------ */

typedef struct command_spec {
    const char *name;
    RedisModuleCmdFunc handler;
    const char *flags;
    int first_key, last_key, key_step;
} command_spec;

#define WRITE "write deny-oom"
#define READ "readonly fast"
static const command_spec commands[] = {
    { "bf.reserve", bf_reserve, WRITE, 1, 1, 1 },
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
    BK_COMMANDS
};

/* Module arguments: ERROR_RATE r, INITIAL_SIZE n, CF_MAX_EXPANSIONS n. */
static int parse_module_args(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    for (int i = 0; i < argc; i += 2) {
        bool ok = i + 1 < argc;
        if (ok && arg_is(argv[i], "ERROR_RATE"))
            ok = arg_double(argv[i + 1], &config_error_rate) && config_error_rate > 0 && config_error_rate < 1;
        else if (ok && arg_is(argv[i], "INITIAL_SIZE"))
            ok = arg_int(argv[i + 1], &config_initial_size) && config_initial_size > 0;
        else if (ok && arg_is(argv[i], "CF_MAX_EXPANSIONS"))
            ok = arg_int(argv[i + 1], &config_cf_max_expansions) && config_cf_max_expansions >= 1 &&
                 config_cf_max_expansions <= (long long)BKR_MAX_FILTERS;
        else
            ok = false;
        if (!ok) {
            RedisModule_Log(ctx, "warning", "bloomkit: bad module argument '%s' (expected ERROR_RATE r, "
                                            "INITIAL_SIZE n or CF_MAX_EXPANSIONS 1..64)",
                            RedisModule_StringPtrLen(argv[i], NULL));
            return REDISMODULE_ERR;
        }
    }
    return REDISMODULE_OK;
}

__attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    const char *missing = NULL;
    if (rm_api_resolve(ctx, &missing) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (RedisModule_IsModuleNameBusy != NULL && RedisModule_IsModuleNameBusy(MODULE_NAME))
        return REDISMODULE_ERR;
    RedisModule_SetModuleAttribs(ctx, MODULE_NAME, MODULE_VERSION, REDISMODULE_APIVER_1);
    RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
    if (parse_module_args(ctx, argv, argc) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    RedisModuleTypeMethods methods;
    memset(&methods, 0, sizeof methods);
    methods.version = BKR_TYPE_METHOD_VERSION;
    methods.rdb_load = type_rdb_load;
    methods.rdb_save = type_rdb_save;
    methods.aof_rewrite = type_aof_rewrite;
    methods.mem_usage = type_mem_usage;
    methods.digest = type_digest;
    methods.free = type_free;
    methods.copy = type_copy;
    value_type = RedisModule_CreateDataType(ctx, TYPE_NAME, TYPE_ENCODING_VERSION, &methods);
    if (value_type == NULL)
        return REDISMODULE_ERR;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const command_spec *c = &commands[i];
        if (RedisModule_CreateCommand(ctx, c->name, c->handler, c->flags, c->first_key, c->last_key,
                                      c->key_step) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    }
    RedisModule_RegisterInfoFunc(ctx, info_func);
    return REDISMODULE_OK;
}
