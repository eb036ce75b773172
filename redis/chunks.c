/*
 * redis/chunks.c -- SCANDUMP and LOADCHUNK for the three families: a
 * value streamed as its encoding (redis/value.h) in chunks of at most
 * SCANDUMP_CHUNK bytes, and rebuilt through the validating decoder.
 */
#include "module.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const dump_words bf_words = { BKR_BF,
                                     "ERR Second argument must be numeric",
                                     "ERR received bad data",
                                     "ERR not found",
                                     "ERR received bad data",
                                     false };
static const dump_words cf_words = { BKR_CF,          "Invalid position", "Invalid header",
                                     "ERR not found", "Invalid header",   true };
static const dump_words bk_words = { BKR_BK,          "ERR invalid cursor", "ERR invalid header",
                                     "ERR not found", "ERR invalid data",   false };

static int scandump_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                           const dump_words *words)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key;
    bkr_value *value = open_existing(ctx, argv[1], REDISMODULE_READ, words->family, &key,
                                     "ERR not found");
    if (value == NULL) {
        RedisModule_CloseKey(key);
        return REDISMODULE_OK;
    }
    long long cursor;
    if (!arg_int(argv[2], &cursor) || cursor < 0) {
        RedisModule_CloseKey(key);
        return RedisModule_ReplyWithError(ctx, words->family == BKR_BF
                                                   ? "Second argument must be numeric"
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
        length = value->dump_size - start < SCANDUMP_CHUNK ? value->dump_size - start
                                                           : SCANDUMP_CHUNK;
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
static int loadchunk_header(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey *key,
                            const char *data, size_t len, const dump_words *words)
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
static int loadchunk_data(RedisModuleCtx *ctx, RedisModuleString *name, RedisModuleKey *key,
                          bkr_value *pending, uint64_t offset, const char *data, size_t len,
                          const dump_words *words)
{
    if (offset != pending->loading_size ||
        len > pending->loading_expected - pending->loading_size || len == 0)
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

static int loadchunk_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
                            const dump_words *words)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long cursor;
    if (!arg_int(argv[2], &cursor) || cursor < 0 || (cursor == 0 && words->family == BKR_CF))
        return RedisModule_ReplyWithError(ctx, words->bad_cursor);
    size_t len;
    const char *data = RedisModule_StringPtrLen(argv[3], &len);
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1],
                                              REDISMODULE_READ | REDISMODULE_WRITE);
    int type = RedisModule_KeyType(key);
    bkr_value *existing = NULL;
    if (type == REDISMODULE_KEYTYPE_MODULE && RedisModule_ModuleTypeGetType(key) == value_type)
        existing = RedisModule_ModuleTypeGetValue(key);
    int rc;
    if (type != REDISMODULE_KEYTYPE_EMPTY &&
        (existing == NULL || existing->meta.family != words->family))
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

static const dump_words *words_of(bkr_family family)
{
    return family == BKR_BF ? &bf_words : family == BKR_CF ? &cf_words : &bk_words;
}

int family_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bkr_family family)
{
    return scandump_common(ctx, argv, argc, words_of(family));
}

int family_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, bkr_family family)
{
    return loadchunk_common(ctx, argv, argc, words_of(family));
}
