/*
 * redis/rm_api.c -- defines and resolves the module API function pointers
 * declared in redis/rm_api.h (the lookup protocol is described there).
 */
#include "rm_api.h"

#include <stdbool.h>

#define BKR_DEFINE_CALL(ret, name, args, required) ret(*RedisModule_##name) args = NULL;
BKR_API_CALLS(BKR_DEFINE_CALL)
#undef BKR_DEFINE_CALL

typedef int (*rm_get_api)(const char *name, void *out);

int rm_api_resolve(RedisModuleCtx *ctx, const char **missing)
{
    rm_get_api get_api = *(rm_get_api *)(void *)ctx;
#define BKR_RESOLVE_CALL(ret, name, args, required)                                     \
    if (get_api("RedisModule_" #name, (void *)&RedisModule_##name) != REDISMODULE_OK && \
        (required)) {                                                                   \
        *missing = "RedisModule_" #name;                                                \
        return REDISMODULE_ERR;                                                         \
    }
    BKR_API_CALLS(BKR_RESOLVE_CALL)
#undef BKR_RESOLVE_CALL
    return REDISMODULE_OK;
}
