/*
 * bench/redis_floor_module.c -- bloomkit-redis-floor.so, a benchmark-only
 * Redis module: the fastest a module's single-item command can be on a
 * given server, to set the module benchmark's figures against
 * (bench/redis_bench.sh, docs/REDIS.md "Speed").  Never installed, never
 * loaded by the project's tests.
 *
 * Its commands have the shape of bloomkit.so's single-item BF.* / CF.*
 * commands with the filter taken out: the same module API calls, in the
 * same order, and no work between them.
 *
 *     FLOOR.RESERVE key        a value of the module's type ("bk-floor-":
 *                              one counter), OK
 *     FLOOR.ADD key item       OpenKey(READ|WRITE), ModuleTypeGetType (a
 *                              missing key is created, as BF.ADD does),
 *                              ModuleTypeGetValue, StringPtrLen(item), the
 *                              counter moved on, a boolean reply,
 *                              ReplicateVerbatim, CloseKey
 *     FLOOR.EXISTS key item    OpenKey(READ), ModuleTypeGetType,
 *                              ModuleTypeGetValue, StringPtrLen(item), a
 *                              boolean reply (false), CloseKey
 *
 * What a server spends on such a command -- reading and parsing it,
 * looking it up, timing it, the module context, the key lookup, the reply
 * and writing it -- is what every module pays; a module's rate over
 * another's can be no more than this module's rate over the other's
 * (bench/redis_bench.sh prints that "ceiling" beside each ratio).
 *
 * The value persists (RDB: the counter; AOF rewrite: FLOOR.RESERVE) so a
 * server holding one can save; the rest of the data type is left out.
 */
#include <stdlib.h>

#include "rm_api.h"

#define FLOOR_TYPE_NAME "bk-floor-" /* exactly 9 characters, as Redis requires */

typedef struct floor_value {
    unsigned long long adds;
} floor_value;

static RedisModuleType *floor_type;

/* The floor value at `key`, created when the key is empty (create) and
 * NULL for any other type or an empty key when !create. */
static floor_value *open_floor(RedisModuleKey *key, int create)
{
    if (RedisModule_ModuleTypeGetType(key) == floor_type)
        return RedisModule_ModuleTypeGetValue(key);
    if (!create || RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_EMPTY)
        return NULL;
    floor_value *value = calloc(1, sizeof *value);
    if (value != NULL)
        RedisModule_ModuleTypeSetValue(key, floor_type, value);
    return value;
}

/* #t/#f in RESP3, :1/:0 in RESP2 (as bloomkit.so replies). */
static void reply_bool(RedisModuleCtx *ctx, int yes)
{
    if (RedisModule_ReplyWithBool != NULL)
        RedisModule_ReplyWithBool(ctx, yes);
    else
        RedisModule_ReplyWithLongLong(ctx, yes);
}

/* FLOOR.RESERVE key: OK, or an error when the key holds a value. */
static int floor_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1],
                                              REDISMODULE_READ | REDISMODULE_WRITE);
    if (RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_EMPTY)
        RedisModule_ReplyWithError(ctx, "ERR item exists");
    else if (open_floor(key, 1) == NULL)
        RedisModule_ReplyWithError(ctx, "ERR out of memory");
    else {
        RedisModule_ReplicateVerbatim(ctx);
        RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* FLOOR.ADD key item: true (the first add) or false; WRONGTYPE on a key
 * of another type. */
static int floor_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1],
                                              REDISMODULE_READ | REDISMODULE_WRITE);
    floor_value *value = open_floor(key, 1);
    if (value == NULL) {
        RedisModule_ReplyWithError(
            ctx, "WRONGTYPE Operation against a key holding the wrong kind of value");
    } else {
        size_t len;
        RedisModule_StringPtrLen(argv[2], &len);
        reply_bool(ctx, value->adds++ == 0);
        RedisModule_ReplicateVerbatim(ctx);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* FLOOR.EXISTS key item: false, whatever the key holds. */
static int floor_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    floor_value *value = open_floor(key, 0);
    size_t len;
    RedisModule_StringPtrLen(argv[2], &len);
    reply_bool(ctx, value != NULL && len == 0);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static void floor_rdb_save(RedisModuleIO *io, void *opaque)
{
    RedisModule_SaveUnsigned(io, ((floor_value *)opaque)->adds);
}

static void *floor_rdb_load(RedisModuleIO *io, int encver)
{
    (void)encver;
    floor_value *value = calloc(1, sizeof *value);
    if (value != NULL)
        value->adds = RedisModule_LoadUnsigned(io);
    return value;
}

static void floor_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *opaque)
{
    (void)opaque;
    RedisModule_EmitAOF(aof, "FLOOR.RESERVE", "s", key);
}

static void floor_free(void *opaque) { free(opaque); }

__attribute__((visibility("default"))) int
RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

/* Loads the module: its type and three commands (no module arguments). */
int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argv;
    const char *missing = NULL;
    if (argc != 0 || rm_api_resolve(ctx, &missing) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    RedisModule_SetModuleAttribs(ctx, "bkfloor", 1, REDISMODULE_APIVER_1);
    RedisModuleTypeMethods methods = { 0 };
    methods.version = BKR_TYPE_METHOD_VERSION;
    methods.rdb_load = floor_rdb_load;
    methods.rdb_save = floor_rdb_save;
    methods.aof_rewrite = floor_aof_rewrite;
    methods.free = floor_free;
    floor_type = RedisModule_CreateDataType(ctx, FLOOR_TYPE_NAME, 0, &methods);
    if (floor_type == NULL ||
        RedisModule_CreateCommand(ctx, "floor.reserve", floor_reserve, "write deny-oom", 1, 1,
                                  1) != REDISMODULE_OK ||
        RedisModule_CreateCommand(ctx, "floor.add", floor_add, "write deny-oom fast", 1, 1, 1) !=
            REDISMODULE_OK ||
        RedisModule_CreateCommand(ctx, "floor.exists", floor_exists, "readonly fast", 1, 1, 1) !=
            REDISMODULE_OK)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
