/*
 * redis/module.c -- bloomkit.so, the Redis module: RedisBloom's BF.* and
 * CF.* commands over bloomkit's `scalable` and `cuckoo` kinds, and BK.*
 * for every kind, all on one module data type ("bloomkit-", redis/value.h).
 *
 * The files:
 *     module.c      loading, the data type (RDB, AOF, digest, copy, memory),
 *                   INFO bloomkit, and the helpers every command uses
 *     redisbloom.c  BF.* and CF.*          bk.c      BK.*
 *     chunks.c      SCANDUMP / LOADCHUNK   value.c   the value and its encoding
 *     rm_api.c/.h   the module API calls, resolved at load
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
#include "bloomkit/scalable.h"
#include "module.h"

#define MODULE_NAME "bloomkit"
#define MODULE_VERSION 100
#define TYPE_NAME "bloomkit-" /* exactly 9 characters, as Redis requires */
#define TYPE_ENCODING_VERSION 1
#define CROSSING_EVENT "bloomkit.past-design-point"

RedisModuleType *value_type;

/* Module arguments (RedisBloom's names and defaults). */
double config_error_rate = 0.01;
long long config_initial_size = 100;
long long config_cf_max_expansions = 32;

/* ------------------------------------------------------------------------ */
/* Live values: counted for INFO bloomkit                                   */
/* ------------------------------------------------------------------------ */

static bkr_value *live_values;
static long long past_design_point_count;

/* The value passed its design point: counted, and announced after the
 * command (once). */
static void note_crossing(bkr_value *value)
{
    if (!value->past_design_point) {
        value->past_design_point = true;
        value->crossing_pending = true;
        past_design_point_count++;
    }
}

static void fill_alarm(bk_filter *filter, bk_fill_status status, void *context)
{
    (void)filter;
    (void)status;
    note_crossing(context);
}

/* Arms the fill alarm on the newest filter (for a CF: counts the room its
 * newest link has, redis/value.h), or counts the value as past its design
 * point already (then no event is sent again). */
static void arm_alarm(bkr_value *value)
{
    if (value->meta.filter_count == 0)
        return;
    bk_filter *newest = bkr_value_newest(value);
    bool past;
    if (value->meta.family == BKR_CF) {
        bk_stats s;
        bk_filter_stats(newest, &s);
        value->cf_room = s.capacity > s.keys_added ? s.capacity - s.keys_added : 0;
        value->cf_crossed = false;
        past = s.past_design_point;
    } else {
        past = bk_filter_check_fill(newest) != BK_OK;
        if (!past)
            bk_filter_set_fill_alarm(newest, fill_alarm, value);
    }
    if (past && !value->past_design_point) {
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

bool is_resp3(RedisModuleCtx *ctx)
{
    return (RedisModule_GetContextFlags(ctx) & REDISMODULE_CTX_FLAGS_RESP3) != 0;
}

/* #t/#f in RESP3, :1/:0 in RESP2. */
void reply_bool(RedisModuleCtx *ctx, bool yes)
{
    if (RedisModule_ReplyWithBool != NULL)
        RedisModule_ReplyWithBool(ctx, yes);
    else
        RedisModule_ReplyWithLongLong(ctx, yes);
}

/* A map of `pairs` entries in RESP3, a flat array in RESP2. */
void reply_map(RedisModuleCtx *ctx, long pairs)
{
    if (RedisModule_ReplyWithMap != NULL)
        RedisModule_ReplyWithMap(ctx, pairs);
    else
        RedisModule_ReplyWithArray(ctx, 2 * pairs);
}

int reply_wrongtype(RedisModuleCtx *ctx)
{
    return RedisModule_ReplyWithError(
        ctx, "WRONGTYPE Operation against a key holding the wrong kind of value");
}

/* An error reply for a library status (BK.* commands). */
int reply_status(RedisModuleCtx *ctx, bk_status status)
{
    char message[160];
    snprintf(message, sizeof message, "ERR %s", bk_strerror(status));
    return RedisModule_ReplyWithError(ctx, message);
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */
/* ------------------------------------------------------------------------ */

bool arg_is(RedisModuleString *arg, const char *word)
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

bool arg_int(RedisModuleString *arg, long long *out)
{
    return RedisModule_StringToLongLong(arg, out) == REDISMODULE_OK;
}

bool arg_double(RedisModuleString *arg, double *out)
{
    return RedisModule_StringToDouble(arg, out) == REDISMODULE_OK;
}

bk_key arg_key(RedisModuleString *arg)
{
    bk_key key;
    key.data = RedisModule_StringPtrLen(arg, &key.len);
    return key;
}

/* MEXISTS: one answer per item, MEXISTS_CHUNK items at a time through the
 * batch queries (hashed, their memory requested ahead of the probes). */
#define MEXISTS_CHUNK 128

void reply_mexists(RedisModuleCtx *ctx, const bkr_value *value, RedisModuleString **argv,
                   int first, int argc)
{
    RedisModule_ReplyWithArray(ctx, argc - first);
    bk_key keys[MEXISTS_CHUNK];
    bool answers[MEXISTS_CHUNK];
    for (int at = first; at < argc; at += MEXISTS_CHUNK) {
        size_t count = (size_t)(argc - at) < MEXISTS_CHUNK ? (size_t)(argc - at) : MEXISTS_CHUNK;
        for (size_t i = 0; i < count; i++)
            keys[i] = arg_key(argv[at + (int)i]);
        bool batched = value != NULL &&
                       bkr_value_contains_batch(value, keys, count, answers) == BK_OK;
        for (size_t i = 0; i < count; i++)
            reply_bool(ctx, value != NULL && (batched ? answers[i]
                                                      : bkr_value_contains(value, keys[i].data,
                                                                           keys[i].len)));
    }
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                     */
/* ------------------------------------------------------------------------ */

/* Opens `name`; KEY_OURS when it holds a complete value of `family`
 * (BKR_BK: any family), KEY_WRONGTYPE for any other value (or one that a
 * LOADCHUNK is still filling). */
lookup_result open_value(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                         bkr_family family, RedisModuleKey **key, bkr_value **value)
{
    *key = RedisModule_OpenKey(ctx, name, mode);
    *value = NULL;
    /* ModuleTypeGetType answers NULL for an empty key or one of a core
     * type: one call on the common path, KeyType only to tell those apart */
    if (RedisModule_ModuleTypeGetType(*key) != value_type)
        return RedisModule_KeyType(*key) == REDISMODULE_KEYTYPE_EMPTY ? KEY_EMPTY
                                                                      : KEY_WRONGTYPE;
    bkr_value *found = RedisModule_ModuleTypeGetValue(*key);
    if (found->loading != NULL || (family != BKR_BK && found->meta.family != family))
        return KEY_WRONGTYPE;
    *value = found;
    return KEY_OURS;
}

/* The newest filter's statistics, computed (a pass over its memory for
 * the bit-array kinds) at most once between two writes that change more
 * than the count of keys (after_bf_adds keeps them). */
const bk_stats *newest_stats(bkr_value *value)
{
    if (!value->newest_stats_valid) {
        bk_filter_stats(bkr_value_newest(value), &value->newest_stats);
        value->newest_stats_valid = true;
    }
    return &value->newest_stats;
}

/* What every write does after changing a value. */
void after_write(RedisModuleCtx *ctx, RedisModuleString *name, bkr_value *value)
{
    if (value != NULL) {
        if (value->cf_crossed)
            note_crossing(value);
        value->newest_stats_valid = false;
        free(value->dump);
        value->dump = NULL;
        value->dump_size = 0;
        if (value->crossing_pending) {
            value->crossing_pending = false;
            RedisModule_NotifyKeyspaceEvent(ctx, REDISMODULE_NOTIFY_GENERIC, CROSSING_EVENT,
                                            name);
        }
    }
    RedisModule_ReplicateVerbatim(ctx);
}

/* After BF adds that took `new_keys` new keys: what after_write does, but
 * the statistics cache survives with its key count moved on, unless the
 * chain grew (a new link changes the capacity, bytes and link count).  So
 * BF.INFO and BF.CARD answer in constant time between growths, with the
 * design figures they report (capacity, links, keys, bytes; the fill
 * figures, which BF.* never reports, are those of the last full pass). */
void after_bf_adds(RedisModuleCtx *ctx, RedisModuleString *name, bkr_value *value,
                   uint64_t new_keys)
{
    size_t links = 0;
    bool keep = value->newest_stats_valid &&
                bk_scalable_sub_count(value->filters[0], &links) == BK_OK &&
                links == value->newest_stats.filters;
    after_write(ctx, name, value);
    if (keep) {
        value->newest_stats_valid = true;
        value->newest_stats.keys_added += new_keys;
    }
}

bkr_value *install(RedisModuleKey *key, bkr_value *value)
{
    RedisModule_ModuleTypeSetValue(key, value_type, track(value));
    return value;
}

/* Opens an existing value for a read that needs it: replies "ERR not
 * found" / WRONGTYPE and returns NULL otherwise. */
bkr_value *open_existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                         bkr_family family, RedisModuleKey **key, const char *not_found)
{
    bkr_value *value;
    lookup_result found = open_value(ctx, name, mode, family, key, &value);
    if (found == KEY_WRONGTYPE)
        reply_wrongtype(ctx);
    else if (found == KEY_EMPTY)
        RedisModule_ReplyWithError(ctx, not_found);
    return value;
}

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
        if (image == NULL ||
            bk_filter_serialize(value->filters[i], image, bytes, NULL) != BK_OK) {
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
    if (bkr_header_decode(bytes, len, &header, &header_size) == BK_OK &&
        bkr_header_total(&header) == expected && len <= expected && expected <= SIZE_MAX &&
        (value = calloc(1, sizeof *value)) != NULL) {
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
        status = RedisModule_IsIOError(io) || bytes == NULL
                     ? BK_ETRUNCATED
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
    bkr_value *value = state == 0   ? rdb_load_value(io)
                       : state == 1 ? rdb_load_pending(io)
                                    : NULL;
    if (value == NULL) {
        RedisModule_LogIOError(io, "warning", "bloomkit: refused a damaged or hostile filter");
        return NULL;
    }
    return track(value);
}

static const char *loadchunk_command(bkr_family family)
{
    return family == BKR_BF   ? "BF.LOADCHUNK"
           : family == BKR_CF ? "CF.LOADCHUNK"
                              : "BK.LOADCHUNK";
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
        RedisModule_EmitAOF(aof, command, "slb", key, (long long)at + 1, (const char *)blob + at,
                            length);
    }
    if (blob != value->loading)
        free(blob);
}

/* Constant time per filter (bkr_value_memory: serialised sizes), never a
 * pass over the filter's memory. */
static size_t type_mem_usage(const void *opaque) { return bkr_value_memory(opaque); }

static void type_digest(RedisModuleDigest *digest, void *opaque)
{
    bkr_value *value = opaque;
    uint8_t *blob;
    size_t size;
    if (value->loading != NULL) {
        RedisModule_DigestAddStringBuffer(digest, (const char *)value->loading,
                                          value->loading_size);
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
    bk_kind kinds[64]; /* the kinds this build has, in registry order */
    size_t kind_count = bk_kind_list(kinds, sizeof kinds / sizeof kinds[0]);
    if (kind_count > sizeof kinds / sizeof kinds[0])
        kind_count = sizeof kinds / sizeof kinds[0];
    long long per_kind[sizeof kinds / sizeof kinds[0]] = { 0 };
    long long total = 0, bytes = 0;
    for (const bkr_value *v = live_values; v != NULL; v = v->next) {
        total++;
        bytes += (long long)bkr_value_memory(v);
        if (v->meta.filter_count > 0) {
            bk_kind kind = bk_filter_kind(v->filters[0]);
            for (size_t i = 0; i < kind_count; i++)
                per_kind[i] += kinds[i] == kind;
        }
    }
    RedisModule_InfoAddSection(ctx, "");
    RedisModule_InfoAddFieldLongLong(ctx, "filters", total);
    RedisModule_InfoAddFieldLongLong(ctx, "filters_past_design_point", past_design_point_count);
    RedisModule_InfoAddFieldLongLong(ctx, "bytes", bytes);
    for (size_t i = 0; i < kind_count; i++) {
        char field[64];
        snprintf(field, sizeof field, "filters_%s", bk_kind_name(kinds[i]));
        RedisModule_InfoAddFieldLongLong(ctx, field, per_kind[i]);
    }
}

/* ------------------------------------------------------------------------ */
/* Loading the module                                                       */
/* ------------------------------------------------------------------------ */


/* Module arguments: ERROR_RATE r, INITIAL_SIZE n, CF_MAX_EXPANSIONS n. */
static int parse_module_args(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    for (int i = 0; i < argc; i += 2) {
        bool ok = i + 1 < argc;
        if (ok && arg_is(argv[i], "ERROR_RATE"))
            ok = arg_double(argv[i + 1], &config_error_rate) && config_error_rate > 0 &&
                 config_error_rate < 1;
        else if (ok && arg_is(argv[i], "INITIAL_SIZE"))
            ok = arg_int(argv[i + 1], &config_initial_size) && config_initial_size > 0;
        else if (ok && arg_is(argv[i], "CF_MAX_EXPANSIONS"))
            ok = arg_int(argv[i + 1], &config_cf_max_expansions) &&
                 config_cf_max_expansions >= 1 &&
                 config_cf_max_expansions <= (long long)BKR_MAX_FILTERS;
        else
            ok = false;
        if (!ok) {
            RedisModule_Log(ctx, "warning",
                            "bloomkit: bad module argument '%s' (expected ERROR_RATE r, "
                            "INITIAL_SIZE n or CF_MAX_EXPANSIONS 1..64)",
                            RedisModule_StringPtrLen(argv[i], NULL));
            return REDISMODULE_ERR;
        }
    }
    return REDISMODULE_OK;
}

__attribute__((visibility("default"))) int
RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

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
    const command_spec *tables[] = { redisbloom_commands, bk_commands };
    for (size_t t = 0; t < 2; t++)
        for (const command_spec *c = tables[t]; c->name != NULL; c++)
            if (RedisModule_CreateCommand(ctx, c->name, c->handler, c->flags, c->first_key,
                                          c->last_key, c->key_step) != REDISMODULE_OK)
                return REDISMODULE_ERR;
    RedisModule_RegisterInfoFunc(ctx, info_func);
    return REDISMODULE_OK;
}
