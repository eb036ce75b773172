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
 *     FLOOR.RESERVE key [BYTES n [LINES k]]
 *                              a value of the module's type ("bk-floor-":
 *                              a counter, and with BYTES a table of n / 64
 *                              zeroed cache lines, k = 1..4 of them read or
 *                              set per item, 1 by default), OK
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
 * With a table, the item also picks k of its lines (a multiply-xorshift
 * hash of its 8-byte words, one multiply per word -- two for a 14-byte
 * item, cheaper than any filter's hash -- remixed for each line, reduced
 * by multiply-shift):
 * EXISTS reads a word of each and answers the AND of their lowest bits,
 * ADD sets those bits.  That is the least a filter can do -- k cache lines
 * per item, no hash worth the name -- so the rate with a table the size
 * of a filter is the most a filter's single-item command reaches at that
 * size: k = 1 for one filter, k = 2 for a chain of two links, each
 * reading its own line.
 *
 * A table of 2 MiB or more is mapped on whole, aligned 2 MiB pages
 * (MADV_HUGEPAGE, then populated at once): the best pages a filter can
 * have (bloomkit's get 2 MiB pages when the kernel has them free,
 * src/memory.c), so the floor bounds a filter on any pages.  On 4 KiB
 * pages nearly every probe of a 120 MB table would also walk the page
 * tables, and the floor would be no bound at 10^8 items.
 *
 * The value persists (RDB: the counter and the table's size; AOF rewrite:
 * FLOOR.RESERVE) so a server holding one can save; the table's bits are
 * not kept, and the rest of the data type is left out.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rm_api.h"

#define FLOOR_TYPE_NAME "bk-floor-" /* exactly 9 characters, as Redis requires */
#define LINE_WORDS 8                /* 64-byte cache lines */
#define HUGE_PAGE_BYTES (2u << 20)

#define MAX_LINES_PER_ITEM 4

typedef struct floor_value {
    unsigned long long adds;
    uint64_t *lines; /* line_count * LINE_WORDS words, or NULL */
    uint64_t line_count;
    unsigned lines_per_item; /* k, 1..MAX_LINES_PER_ITEM */
} floor_value;

static RedisModuleType *floor_type;

/* The bytes a table of `bytes` maps: whole 2 MiB pages from 2 MiB on. */
static size_t mapped_bytes(size_t bytes)
{
    return (bytes + HUGE_PAGE_BYTES - 1) & ~(size_t)(HUGE_PAGE_BYTES - 1);
}

/* A zeroed table of `bytes`: aligned_alloc below 2 MiB, else whole 2 MiB
 * pages, aligned to them (an unaligned mapping keeps its ends on 4 KiB
 * pages), where the kernel has them; NULL when memory runs out.
 * unmap_table() releases it. */
static uint64_t *map_table(size_t bytes)
{
    if (bytes < HUGE_PAGE_BYTES) {
        uint64_t *lines = aligned_alloc(64, bytes);
        if (lines != NULL)
            memset(lines, 0, bytes);
        return lines;
    }
    size_t length = mapped_bytes(bytes), span = length + HUGE_PAGE_BYTES;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *block = raw + (-(uintptr_t)raw & (HUGE_PAGE_BYTES - 1));
    if (block > raw)
        munmap(raw, (size_t)(block - raw));
    if (raw + span > block + length)
        munmap(block + length, (size_t)(raw + span - (block + length)));
    (void)madvise(block, length, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
    (void)madvise(block, length, MADV_POPULATE_WRITE);
#endif
    return (uint64_t *)(void *)block;
}

/* The bytes of the value's table. */
static size_t table_bytes(const floor_value *value)
{
    return (size_t)value->line_count * LINE_WORDS * sizeof(uint64_t);
}

/* Releases a table of map_table(). */
static void unmap_table(floor_value *value)
{
    if (value->lines == NULL)
        return;
    if (table_bytes(value) < HUGE_PAGE_BYTES)
        free(value->lines);
    else
        munmap(value->lines, mapped_bytes(table_bytes(value)));
}

/* A value with a zeroed table of line_count lines (0: none), k of them per
 * item; NULL when memory runs out. */
static floor_value *new_floor(uint64_t line_count, unsigned lines_per_item)
{
    floor_value *value = calloc(1, sizeof *value);
    if (value == NULL)
        return NULL;
    value->lines_per_item = lines_per_item;
    if (line_count == 0)
        return value;
    size_t line_bytes = LINE_WORDS * sizeof(uint64_t);
    if (line_count > SIZE_MAX / line_bytes ||
        (value->lines = map_table(line_count * line_bytes)) == NULL) {
        free(value);
        return NULL;
    }
    value->line_count = line_count;
    return value;
}

/* The hash of the item's bytes, a word at a time (a byte at a time would
 * be a chain of a multiply per byte, slower than XXH3). */
static uint64_t item_hash(RedisModuleString *item)
{
    size_t len;
    const unsigned char *bytes = (const unsigned char *)RedisModule_StringPtrLen(item, &len);
    uint64_t hash = len, tail = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t word;
        memcpy(&word, bytes + i, 8);
        hash = (hash ^ word) * 0x9e3779b97f4a7c15u;
    }
    for (unsigned shift = 0; i < len; i++, shift += 8)
        tail |= (uint64_t)bytes[i] << shift;
    hash = (hash ^ tail) * 0x9e3779b97f4a7c15u;
    return hash ^ (hash >> 29);
}

/* The first word of the item's line `line` (0 .. k-1) in the value's table. */
static uint64_t *item_word(const floor_value *value, uint64_t hash, unsigned line)
{
    uint64_t h = (hash + line * 0x9e3779b97f4a7c15u) * 0xbf58476d1ce4e5b9u;
    h ^= h >> 31;
    __extension__ typedef unsigned __int128 u128;
    return value->lines + (uint64_t)(((u128)h * value->line_count) >> 64) * LINE_WORDS;
}

/* The floor value at `key`, created (without a table) when the key is
 * empty and create is set; NULL for any other type, or an empty key when
 * !create. */
static floor_value *open_floor(RedisModuleKey *key, int create)
{
    if (RedisModule_ModuleTypeGetType(key) == floor_type)
        return RedisModule_ModuleTypeGetValue(key);
    if (!create || RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_EMPTY)
        return NULL;
    floor_value *value = new_floor(0, 1);
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

/* Whether argv[at] is `name` and argv[at + 1] a number in [least, most]
 * (into *number). */
static int named_number(RedisModuleString **argv, int at, const char *name, long long least,
                        long long most, long long *number)
{
    size_t len;
    const char *word = RedisModule_StringPtrLen(argv[at], &len);
    return len == strlen(name) && strncmp(word, name, len) == 0 &&
           RedisModule_StringToLongLong(argv[at + 1], number) == REDISMODULE_OK &&
           *number >= least && *number <= most;
}

/* FLOOR.RESERVE key [BYTES n [LINES k]]: OK, or an error when the key
 * holds a value, n is below 64 or k outside 1..MAX_LINES_PER_ITEM. */
static int floor_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 4 && argc != 6)
        return RedisModule_WrongArity(ctx);
    long long bytes = 0, lines_per_item = 1;
    if (argc >= 4 && !named_number(argv, 2, "BYTES", 64, LLONG_MAX, &bytes))
        return RedisModule_ReplyWithError(ctx, "ERR expected BYTES n, n >= 64");
    if (argc == 6 && !named_number(argv, 4, "LINES", 1, MAX_LINES_PER_ITEM, &lines_per_item))
        return RedisModule_ReplyWithError(ctx, "ERR expected LINES k, k from 1 to 4");
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1],
                                              REDISMODULE_READ | REDISMODULE_WRITE);
    floor_value *value = NULL;
    if (RedisModule_KeyType(key) != REDISMODULE_KEYTYPE_EMPTY) {
        RedisModule_ReplyWithError(ctx, "ERR item exists");
    } else if ((value = new_floor((uint64_t)bytes / 64, (unsigned)lines_per_item)) == NULL) {
        RedisModule_ReplyWithError(ctx, "ERR out of memory");
    } else {
        RedisModule_ModuleTypeSetValue(key, floor_type, value);
        RedisModule_ReplicateVerbatim(ctx);
        RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* FLOOR.ADD key item: true or false (without a table: true for the
 * key's first add; with one: whether the item's bit was clear);
 * WRONGTYPE on a key of another type. */
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
        int fresh = value->adds++ == 0;
        if (value->lines != NULL) {
            uint64_t hash = item_hash(argv[2]);
            fresh = 0;
            for (unsigned line = 0; line < value->lines_per_item; line++) {
                uint64_t *word = item_word(value, hash, line);
                fresh |= (*word & 1) == 0;
                *word |= 1;
            }
        } else {
            size_t len;
            RedisModule_StringPtrLen(argv[2], &len);
        }
        reply_bool(ctx, fresh);
        RedisModule_ReplicateVerbatim(ctx);
    }
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

/* FLOOR.EXISTS key item: without a table false, whatever the key holds;
 * with one, the item's bit. */
static int floor_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *key = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
    floor_value *value = open_floor(key, 0);
    int yes;
    if (value != NULL && value->lines != NULL) {
        uint64_t hash = item_hash(argv[2]);
        yes = 1;
        for (unsigned line = 0; line < value->lines_per_item; line++)
            yes &= (int)(*item_word(value, hash, line) & 1);
    } else {
        size_t len;
        RedisModule_StringPtrLen(argv[2], &len);
        yes = value != NULL && len == 0;
    }
    reply_bool(ctx, yes);
    RedisModule_CloseKey(key);
    return REDISMODULE_OK;
}

static void floor_rdb_save(RedisModuleIO *io, void *opaque)
{
    const floor_value *value = opaque;
    RedisModule_SaveUnsigned(io, value->adds);
    RedisModule_SaveUnsigned(io, value->line_count);
    RedisModule_SaveUnsigned(io, value->lines_per_item);
}

/* Encoding 1 adds k to encoding 0's counter and table size. */
#define FLOOR_ENCODING 1

static void *floor_rdb_load(RedisModuleIO *io, int encver)
{
    uint64_t adds = RedisModule_LoadUnsigned(io);
    uint64_t line_count = RedisModule_LoadUnsigned(io);
    uint64_t lines_per_item = encver >= 1 ? RedisModule_LoadUnsigned(io) : 1;
    if (lines_per_item < 1 || lines_per_item > MAX_LINES_PER_ITEM)
        return NULL;
    floor_value *value = new_floor(line_count, (unsigned)lines_per_item);
    if (value != NULL)
        value->adds = adds;
    return value;
}

static void floor_aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *opaque)
{
    const floor_value *value = opaque;
    if (value->line_count == 0)
        RedisModule_EmitAOF(aof, "FLOOR.RESERVE", "s", key);
    else
        RedisModule_EmitAOF(aof, "FLOOR.RESERVE", "sclcl", key, "BYTES",
                            (long long)(value->line_count * 64), "LINES",
                            (long long)value->lines_per_item);
}

static void floor_free(void *opaque)
{
    floor_value *value = opaque;
    unmap_table(value);
    free(value);
}

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
    floor_type = RedisModule_CreateDataType(ctx, FLOOR_TYPE_NAME, FLOOR_ENCODING, &methods);
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
