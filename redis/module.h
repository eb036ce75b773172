/*
 * redis/module.h -- what the module's files share (internal): the key
 * lookup, reply and argument helpers of redis/module.c, the SCANDUMP /
 * LOADCHUNK pair of redis/chunks.c, and the command tables that
 * redis/redisbloom.c (BF.*, CF.*) and redis/bk.c (BK.*) hand to
 * RedisModule_OnLoad.  The map of the module is in redis/module.c.
 */
#ifndef BLOOMKIT_REDIS_MODULE_H
#define BLOOMKIT_REDIS_MODULE_H

#include <stdbool.h>

#include "bloomkit/filter.h"
#include "bloomkit/format.h"
#include "rm_api.h"
#include "value.h"

/* The data type (RedisModule_CreateDataType in RedisModule_OnLoad). */
extern RedisModuleType *value_type;

/* Module arguments. */
extern double config_error_rate;
extern long long config_initial_size;
extern long long config_cf_max_expansions;

/* SCANDUMP chunks after the header are at most this long. */
#define SCANDUMP_CHUNK ((size_t)16 << 20)

/* Command flags. */
#define WRITE "write deny-oom"
#define READ "readonly fast"

/* A command table entry; a table ends with an entry whose name is NULL. */
typedef struct command_spec {
    const char *name;
    RedisModuleCmdFunc handler;
    const char *flags;
    int first_key, last_key, key_step;
} command_spec;

extern const command_spec redisbloom_commands[]; /* redis/redisbloom.c */
extern const command_spec bk_commands[];         /* redis/bk.c */

/* ---- replies (redis/module.c) ---- */
bool is_resp3(RedisModuleCtx *ctx);
/* #t/#f in RESP3, :1/:0 in RESP2. */
void reply_bool(RedisModuleCtx *ctx, bool yes);
/* A map of `pairs` entries in RESP3, a flat array in RESP2. */
void reply_map(RedisModuleCtx *ctx, long pairs);
int reply_wrongtype(RedisModuleCtx *ctx);
/* "ERR <bk_strerror(status)>". */
int reply_status(RedisModuleCtx *ctx, bk_status status);
/* MEXISTS: one boolean per item argv[first..argc) (value may be NULL). */
void reply_mexists(RedisModuleCtx *ctx, const bkr_value *value, RedisModuleString **argv,
                   int first, int argc);

/* ---- arguments ---- */
/* Case-insensitive comparison with an upper-case keyword. */
bool arg_is(RedisModuleString *arg, const char *word);
bool arg_int(RedisModuleString *arg, long long *out);
bool arg_double(RedisModuleString *arg, double *out);
bk_key arg_key(RedisModuleString *arg);

/* ---- keys and values ---- */
typedef enum lookup_result { KEY_EMPTY, KEY_OURS, KEY_WRONGTYPE } lookup_result;
/* Opens `name`; KEY_OURS when it holds a complete value of `family`
 * (BKR_BK: any family), KEY_WRONGTYPE for any other value or a value a
 * LOADCHUNK is still filling.  The caller closes *key. */
lookup_result open_value(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                         bkr_family family, RedisModuleKey **key, bkr_value **value);
/* open_value for a command that needs the value: replies `not_found` or
 * WRONGTYPE and returns NULL otherwise.  The caller closes *key. */
bkr_value *open_existing(RedisModuleCtx *ctx, RedisModuleString *name, int mode,
                         bkr_family family, RedisModuleKey **key, const char *not_found);
/* Sets the key to value (tracked for INFO bloomkit, fill alarm armed). */
bkr_value *install(RedisModuleKey *key, bkr_value *value);
/* After a write: drops the caches, sends a design-point event, replicates. */
void after_write(RedisModuleCtx *ctx, RedisModuleString *name, bkr_value *value);
/* After BF adds (BF.ADD, BF.MADD, BF.INSERT) that took new_keys new keys:
 * after_write, keeping the statistics cache unless the chain grew. */
void after_bf_adds(RedisModuleCtx *ctx, RedisModuleString *name, bkr_value *value,
                   uint64_t new_keys);
/* The newest filter's statistics, computed at most once between writes;
 * after BF adds only the design figures and the key count are current
 * (callers that report the fill compute bk_filter_stats themselves). */
const bk_stats *newest_stats(bkr_value *value);

/* ---- SCANDUMP / LOADCHUNK for a family (redis/chunks.c) ---- */
int family_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bkr_family family);
int family_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bkr_family family);

#endif /* BLOOMKIT_REDIS_MODULE_H */
