/*
 * tests/fuzz/fuzz_redis_value.c -- libFuzzer target over the Redis
 * module's decoders (redis/value.c): the value blob that SCANDUMP streams
 * and LOADCHUNK, RESTORE and the RDB loader accept, and its header alone.
 * No server is needed: the decoders make no Redis call.
 *
 * Properties checked on every input the decoder accepts:
 *   - the value re-encodes, and the re-encoding decodes to a value whose
 *     own encoding is byte-identical (encode o decode is idempotent);
 *   - queries, a CF add and a copy run without fault on the loaded value.
 * Any other input must be refused with an error status; the sanitizers
 * catch out-of-bounds reads and leaks.  Seeds: tests/fuzz/redis_value/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../redis/value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int condition)
{
    if (!condition)
        abort();
}

static void exercise(bkr_value *value)
{
    static const char *const keys[] = { "a", "b", "item:1", "" };
    for (size_t i = 0; i < 4; i++) {
        (void)bkr_value_contains(value, keys[i], strlen(keys[i]));
        (void)bkr_value_count(value, keys[i], strlen(keys[i]));
    }
    bkr_value *copy;
    if (bkr_value_copy(value, &copy) == BK_OK) {
        if (copy->meta.family == BKR_CF) {
            for (int i = 0; i < 4; i++)
                (void)bkr_cf_add(copy, keys[i], strlen(keys[i]), 4);
            (void)bkr_cf_delete(copy, "a", 1);
        }
        bkr_value_free(copy);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bkr_header header;
    size_t header_size;
    if (bkr_header_decode(data, size, &header, &header_size) == BK_OK)
        require(header_size <= size && bkr_header_total(&header) >= header_size);

    bkr_value *value;
    if (bkr_value_decode(data, size, &value) != BK_OK)
        return 0;
    uint8_t *first, *second;
    size_t first_size, second_size;
    require(bkr_value_encode(value, &first, &first_size) == BK_OK);
    bkr_value *again;
    require(bkr_value_decode(first, first_size, &again) == BK_OK);
    require(bkr_value_encode(again, &second, &second_size) == BK_OK);
    require(first_size == second_size && memcmp(first, second, first_size) == 0);
    exercise(value);
    free(first);
    free(second);
    bkr_value_free(again);
    bkr_value_free(value);
    return 0;
}
