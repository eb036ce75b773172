/*
 * redis/bk.c -- the BK.* commands: every bloomkit kind, static kinds built
 * from items or a SET, set algebra, the library's own file format in and
 * out (BK.DUMP / BK.LOAD), statistics against the design point.
 */
#include "module.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* BK.*: every kind                                                         */
/* ------------------------------------------------------------------------ */

/* The server clock in seconds, for time windows. */
static uint64_t server_seconds(void) { return (uint64_t)(RedisModule_Milliseconds() / 1000); }

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
        RedisModule_ReplyWithError(
            ctx, "ERR unknown kind (bloom, blocked, sbbf, counting, cuckoo, xor8, "
                 "fuse8, fuse16, fuse8_4, scalable, window)");
        return false;
    }
    return true;
}

/* Options after BK.RESERVE's fpr: EXPANSION x, NONSCALING, WINDOW n,
 * SECONDS s, GENERATIONS g, FINGERPRINT f, SEED s. */
static bool parse_bk_options(RedisModuleCtx *ctx, RedisModuleString **argv, int at, int argc,
                             bk_params *p)
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
        else if (has_value && arg_is(argv[i], "GENERATIONS") && arg_int(argv[i + 1], &n) &&
                 n > 1 && n < 256)
            p->generations = (unsigned)n;
        else if (has_value && arg_is(argv[i], "FINGERPRINT") && arg_int(argv[i + 1], &n) &&
                 n > 0 && n <= 16)
            p->fingerprint_bits = (unsigned)n;
        else if (has_value && arg_is(argv[i], "SEED") && arg_int(argv[i + 1], &n))
            p->seed = (uint64_t)n;
        else {
            RedisModule_ReplyWithError(
                ctx, "ERR bad option (EXPANSION x, NONSCALING, WINDOW n, SECONDS s, "
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

static int install_new(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey *key,
                       bk_filter *filter)
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
        return RedisModule_ReplyWithError(
            ctx, "ERR a static kind is built from its items: use BK.BUILD");
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
    int rc = status == BK_OK ? install_new(ctx, argv[1], key, filter)
                             : reply_status(ctx, status);
    RedisModule_CloseKey(key);
    return rc;
}

/* The members of the SET `name` as keys (pointing into *reply, which the
 * caller frees).  NULL with an error replied when it is not a set. */
static bk_key *set_members(RedisModuleCtx *ctx, RedisModuleString *name,
                           RedisModuleCallReply **reply, size_t *count)
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
        keys[i].data = RedisModule_CallReplyStringPtr(
            RedisModule_CallReplyArrayElement(*reply, i), &keys[i].len);
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
    if (items_at == 5 &&
        (!arg_double(argv[4], &params.fpr) || !(params.fpr > 0 && params.fpr < 1)))
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
        bk_status status = count == 0 ? BK_EINVAL
                                      : bk_filter_build(kind, &params, keys, count, &filter);
        rc = status == BK_OK ? install_new(ctx, argv[1], key, filter)
                             : reply_status(ctx, status);
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
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_BK,
                                     &key, "ERR not found");
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
                                   ? bkr_cf_add(value, k.data, k.len,
                                                (unsigned)config_cf_max_expansions)
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
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_BK,
                                     &key, "ERR not found");
    if (value != NULL) {
        bk_key k = arg_key(argv[2]);
        bk_status status = value->meta.family == BKR_CF
                               ? bkr_cf_delete(value, k.data, k.len)
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
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_BK, &key,
                                     "ERR not found");
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
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_BK, &key,
                                     "ERR not found");
    if (value != NULL) {
        bk_stats s; /* fresh: the fill figures too */
        bk_filter_stats(bkr_value_newest(value), &s);
        reply_map(ctx, 13);
        RedisModule_ReplyWithSimpleString(ctx, "kind");
        RedisModule_ReplyWithSimpleString(ctx, bk_kind_name(s.kind));
        info_int(ctx, "capacity", (long long)s.capacity);
        info_int(ctx, "bytes", (long long)bkr_value_memory(value));
        info_int(ctx, "bits", (long long)s.bits);
        info_int(ctx, "hashes", s.hashes);
        info_int(ctx, "filters",
                 value->meta.filter_count > 1 ? value->meta.filter_count : s.filters);
        info_int(ctx, "keys_added", (long long)s.keys_added);
        info_double(ctx, "keys_estimated", s.keys_estimated);
        info_double(ctx, "fill_ratio", s.fill_ratio);
        info_double(ctx, "design_fill_ratio", s.design_fill_ratio);
        info_double(ctx, "target_fpr", s.target_fpr);
        info_double(ctx, "current_fpr", s.current_fpr);
        RedisModule_ReplyWithSimpleString(ctx, "status");
        RedisModule_ReplyWithSimpleString(ctx,
                                          bk_fill_status_name(bk_fill_status_from_stats(&s)));
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
static bk_status fold_source(bkr_value **work, const bkr_value *dest, const bkr_value *src,
                             bool intersect)
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
    return (intersect ? bk_filter_intersect : bk_filter_union)((*work)->filters[0],
                                                               src->filters[0]);
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
    lookup_result found = open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, BKR_BK,
                                     &dest_key, &dest);
    if (found == KEY_WRONGTYPE) {
        RedisModule_CloseKey(dest_key);
        return reply_wrongtype(ctx);
    }
    bkr_value *work = NULL;
    bk_status status = BK_OK;
    for (int i = 2; i < argc && status == BK_OK; i++) {
        RedisModuleKey *src_key;
        bkr_value *src = open_existing(ctx, argv[i], REDISMODULE_READ, BKR_BK, &src_key,
                                       "ERR a source filter does not exist");
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
                 ? RedisModule_ReplyWithError(ctx,
                                              "ERR the filters differ in kind, size or hashing")
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
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, BKR_BK, &key,
                                     "ERR not found");
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
    return family_scandump(ctx, argv, argc, BKR_BK);
}

static int bk_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return family_loadchunk(ctx, argv, argc, BKR_BK);
}

const command_spec bk_commands[] = { { "bk.reserve", bk_reserve, WRITE, 1, 1, 1 },
                                     { "bk.build", bk_build, WRITE " getkeys-api", 1, 1, 1 },
                                     { "bk.add", bk_add, WRITE " fast", 1, 1, 1 },
                                     { "bk.madd", bk_madd, WRITE, 1, 1, 1 },
                                     { "bk.exists", bk_exists, READ, 1, 1, 1 },
                                     { "bk.mexists", bk_mexists, READ, 1, 1, 1 },
                                     { "bk.del", bk_del, "write fast", 1, 1, 1 },
                                     { "bk.count", bk_count, READ, 1, 1, 1 },
                                     { "bk.info", bk_info, "readonly", 1, 1, 1 },
                                     { "bk.card", bk_card, "readonly", 1, 1, 1 },
                                     { "bk.merge", bk_merge, WRITE, 1, -1, 1 },
                                     { "bk.intersect", bk_intersect, WRITE, 1, -1, 1 },
                                     { "bk.dump", bk_dump, "readonly", 1, 1, 1 },
                                     { "bk.load", bk_load, WRITE, 1, 1, 1 },
                                     { "bk.scandump", bk_scandump, "readonly", 1, 1, 1 },
                                     { "bk.loadchunk", bk_loadchunk, WRITE, 1, 1, 1 },
                                     { NULL, NULL, NULL, 0, 0, 0 } };
