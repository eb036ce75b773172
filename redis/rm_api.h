/*
 * redis/rm_api.h -- the module's own declarations of the Redis module API
 * calls it uses, written for bloomkit (no copy of Redis's redismodule.h).
 *
 * How a module reaches the server.  Redis loads the shared object and calls
 * RedisModule_OnLoad(ctx, argv, argc).  The first word of the context is a
 * pointer to the server's lookup function
 *
 *     int GetApi(const char *name, void *function_pointer_out);
 *
 * which fills in the address of the named API call (REDISMODULE_OK) or
 * leaves it untouched when the server lacks it (REDISMODULE_ERR).  Every
 * call below is therefore a function POINTER, defined once in
 * redis/rm_api.c and resolved by rm_api_resolve() before anything else
 * runs.  The names, argument lists and constant values are the module ABI
 * that Redis documents (redis.io, "Modules API reference"); they are stable
 * across releases, which is what lets one binary load into Redis 6.2 to 7.x.
 *
 * Calls marked OPTIONAL are RESP3-era additions (Redis 7.0); the module
 * checks them for NULL and falls back to RESP2 replies when absent.
 */
#ifndef BLOOMKIT_REDIS_RM_API_H
#define BLOOMKIT_REDIS_RM_API_H

#include <stddef.h>
#include <stdint.h>

#define REDISMODULE_OK 0
#define REDISMODULE_ERR 1
#define REDISMODULE_APIVER_1 1

/* OpenKey modes */
#define REDISMODULE_READ (1 << 0)
#define REDISMODULE_WRITE (1 << 1)

/* KeyType answers */
#define REDISMODULE_KEYTYPE_EMPTY 0
#define REDISMODULE_KEYTYPE_STRING 1
#define REDISMODULE_KEYTYPE_LIST 2
#define REDISMODULE_KEYTYPE_HASH 3
#define REDISMODULE_KEYTYPE_SET 4
#define REDISMODULE_KEYTYPE_ZSET 5
#define REDISMODULE_KEYTYPE_MODULE 6

/* Reply length decided after the elements (ReplySetArrayLength) */
#define REDISMODULE_POSTPONED_LEN -1L

/* GetContextFlags bits used here */
#define REDISMODULE_CTX_FLAGS_LOADING (1 << 13)
#define REDISMODULE_CTX_FLAGS_RESP3 (1 << 22)

/* SetModuleOptions: the module checks IsIOError after every RDB read, so
 * a damaged RDB or RESTORE payload is refused instead of stopping the
 * server. */
#define REDISMODULE_OPTIONS_HANDLE_IO_ERRORS (1 << 0)

/* Keyspace notification classes */
#define REDISMODULE_NOTIFY_GENERIC (1 << 2)

/* CallReply types */
#define REDISMODULE_REPLY_STRING 0
#define REDISMODULE_REPLY_ARRAY 3

/* Data type method table: version 1 is rdb_load .. aux_save, version 2
 * adds aux_save_triggers, version 3 (Redis 6.2) free_effort, unlink, copy
 * and defrag -- the last fields declared here. */
#define BKR_TYPE_METHOD_VERSION 3

typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleInfoCtx RedisModuleInfoCtx;
typedef struct RedisModuleCallReply RedisModuleCallReply;
typedef struct RedisModuleDefragCtx RedisModuleDefragCtx;

typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
typedef void (*RedisModuleInfoFunc)(RedisModuleInfoCtx *ctx, int for_crash_report);

typedef struct RedisModuleTypeMethods {
    uint64_t version;
    void *(*rdb_load)(RedisModuleIO *rdb, int encver);
    void (*rdb_save)(RedisModuleIO *rdb, void *value);
    void (*aof_rewrite)(RedisModuleIO *aof, RedisModuleString *key, void *value);
    size_t (*mem_usage)(const void *value);
    void (*digest)(RedisModuleDigest *digest, void *value);
    void (*free)(void *value);
    int (*aux_load)(RedisModuleIO *rdb, int encver, int when);
    void (*aux_save)(RedisModuleIO *rdb, int when);
    int aux_save_triggers; /* version 2 */
    /* version 3 */
    size_t (*free_effort)(RedisModuleString *key, const void *value);
    void (*unlink)(RedisModuleString *key, const void *value);
    void *(*copy)(RedisModuleString *fromkey, RedisModuleString *tokey, const void *value);
    int (*defrag)(RedisModuleDefragCtx *ctx, RedisModuleString *key, void **value);
} RedisModuleTypeMethods;

/* X(return type, name, argument list): every call the module resolves.
 * The last column says whether the module can run without it. */
#define BKR_API_CALLS(X)                                                                       \
    X(void, SetModuleAttribs, (RedisModuleCtx *, const char *, int, int), 1)                   \
    X(int, IsModuleNameBusy, (const char *), 0)                                                \
    X(void, SetModuleOptions, (RedisModuleCtx *, int), 1)                                      \
    X(int, CreateCommand,                                                                      \
      (RedisModuleCtx *, const char *, RedisModuleCmdFunc, const char *, int, int, int), 1)    \
    X(RedisModuleType *, CreateDataType,                                                       \
      (RedisModuleCtx *, const char *, int, RedisModuleTypeMethods *), 1)                      \
    X(int, ModuleTypeSetValue, (RedisModuleKey *, RedisModuleType *, void *), 1)               \
    X(RedisModuleType *, ModuleTypeGetType, (RedisModuleKey *), 1)                             \
    X(void *, ModuleTypeGetValue, (RedisModuleKey *), 1)                                       \
    X(RedisModuleKey *, OpenKey, (RedisModuleCtx *, RedisModuleString *, int), 1)              \
    X(void, CloseKey, (RedisModuleKey *), 1)                                                   \
    X(int, KeyType, (RedisModuleKey *), 1)                                                     \
    X(int, DeleteKey, (RedisModuleKey *), 1)                                                   \
    X(int, WrongArity, (RedisModuleCtx *), 1)                                                  \
    X(int, ReplyWithError, (RedisModuleCtx *, const char *), 1)                                \
    X(int, ReplyWithSimpleString, (RedisModuleCtx *, const char *), 1)                         \
    X(int, ReplyWithLongLong, (RedisModuleCtx *, long long), 1)                                \
    X(int, ReplyWithDouble, (RedisModuleCtx *, double), 1)                                     \
    X(int, ReplyWithArray, (RedisModuleCtx *, long), 1)                                        \
    X(void, ReplySetArrayLength, (RedisModuleCtx *, long), 1)                                  \
    X(int, ReplyWithNull, (RedisModuleCtx *), 1)                                               \
    X(int, ReplyWithStringBuffer, (RedisModuleCtx *, const char *, size_t), 1)                 \
    X(int, ReplyWithCString, (RedisModuleCtx *, const char *), 1)                              \
    X(int, ReplyWithMap, (RedisModuleCtx *, long), 0)                                          \
    X(int, ReplyWithBool, (RedisModuleCtx *, int), 0)                                          \
    X(const char *, StringPtrLen, (const RedisModuleString *, size_t *), 1)                    \
    X(int, StringToLongLong, (const RedisModuleString *, long long *), 1)                      \
    X(int, StringToDouble, (const RedisModuleString *, double *), 1)                           \
    X(int, ReplicateVerbatim, (RedisModuleCtx *), 1)                                           \
    X(int, GetContextFlags, (RedisModuleCtx *), 1)                                             \
    X(void, Free, (void *), 1)                                                                 \
    X(void, SaveUnsigned, (RedisModuleIO *, uint64_t), 1)                                      \
    X(uint64_t, LoadUnsigned, (RedisModuleIO *), 1)                                            \
    X(void, SaveStringBuffer, (RedisModuleIO *, const char *, size_t), 1)                      \
    X(char *, LoadStringBuffer, (RedisModuleIO *, size_t *), 1)                                \
    X(int, IsIOError, (RedisModuleIO *), 1)                                                    \
    X(void, EmitAOF, (RedisModuleIO *, const char *, const char *, ...), 1)                    \
    X(void, DigestAddStringBuffer, (RedisModuleDigest *, const char *, size_t), 1)             \
    X(void, DigestEndSequence, (RedisModuleDigest *), 1)                                       \
    X(void, Log, (RedisModuleCtx *, const char *, const char *, ...), 1)                       \
    X(void, LogIOError, (RedisModuleIO *, const char *, const char *, ...), 1)                 \
    X(int, RegisterInfoFunc, (RedisModuleCtx *, RedisModuleInfoFunc), 1)                       \
    X(int, InfoAddSection, (RedisModuleInfoCtx *, const char *), 1)                            \
    X(int, InfoAddFieldLongLong, (RedisModuleInfoCtx *, const char *, long long), 1)           \
    X(int, NotifyKeyspaceEvent, (RedisModuleCtx *, int, const char *, RedisModuleString *), 1) \
    X(long long, Milliseconds, (void), 1)                                                      \
    X(int, IsKeysPositionRequest, (RedisModuleCtx *), 1)                                       \
    X(void, KeyAtPos, (RedisModuleCtx *, int), 1)                                              \
    X(RedisModuleCallReply *, Call, (RedisModuleCtx *, const char *, const char *, ...), 1)    \
    X(int, CallReplyType, (RedisModuleCallReply *), 1)                                         \
    X(size_t, CallReplyLength, (RedisModuleCallReply *), 1)                                    \
    X(RedisModuleCallReply *, CallReplyArrayElement, (RedisModuleCallReply *, size_t), 1)      \
    X(const char *, CallReplyStringPtr, (RedisModuleCallReply *, size_t *), 1)                 \
    X(void, FreeCallReply, (RedisModuleCallReply *), 1)

#define BKR_DECLARE_CALL(ret, name, args, required) extern ret(*RedisModule_##name) args;
BKR_API_CALLS(BKR_DECLARE_CALL)
#undef BKR_DECLARE_CALL

/* Resolves every call through the lookup function in ctx's first word.
 * REDISMODULE_ERR (and *missing names the call) if a required one is
 * absent; optional ones are left NULL. */
int rm_api_resolve(RedisModuleCtx *ctx, const char **missing);

#endif /* BLOOMKIT_REDIS_RM_API_H */
