/*
 * bench/keys.c -- deterministic key sets for the benchmark.
 *
 * Key i is splitmix64's output for counter i: x = mix64((i + 1) * gamma),
 * gamma = 0x9e3779b97f4a7c15 (odd, so i -> (i + 1) * gamma is a bijection
 * of 64-bit integers, and mix64 is one too).  Distinct counters therefore
 * give distinct keys, which is how the absent keys are guaranteed absent:
 * they come from counters far beyond the present ones.
 *
 *   int64: the 8 bytes of x as stored in memory (little-endian here);
 *   str16: x as 16 lower-case hex digits, e.g. "3a9f01c27be45d10" --
 *          printable, fixed length, and still distinct.
 *
 * Keys are stored back to back (8 or 16 bytes each): 10^8 string keys take
 * 1.6 GB, plus 1.6 GB for the bk_key array the batch API reads.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "hash.h"

#define SPLITMIX_GAMMA 0x9e3779b97f4a7c15ULL

const char *key_type_name(key_type type) { return type == KEY_INT64 ? "int64" : "str16"; }

size_t key_type_bytes(key_type type) { return type == KEY_INT64 ? 8 : 16; }

static uint64_t splitmix64_at(uint64_t index) { return bk_mix64((index + 1) * SPLITMIX_GAMMA); }

static void write_hex16(uint8_t *out, uint64_t value)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--) {
        out[i] = (uint8_t)digits[value & 15];
        value >>= 4;
    }
}

int key_set_generate(key_set *set, key_type type, uint64_t first_index, size_t count)
{
    size_t width = key_type_bytes(type);
    memset(set, 0, sizeof *set);
    set->bytes = bench_alloc_array(count * width + 1);
    set->keys = bench_alloc_array((count + 1) * sizeof *set->keys);
    if (set->bytes == NULL || set->keys == NULL) {
        key_set_free(set);
        return -1;
    }
    set->type = type;
    set->count = count;
    for (size_t i = 0; i < count; i++) {
        uint64_t value = splitmix64_at(first_index + i);
        uint8_t *key = set->bytes + i * width;
        if (type == KEY_INT64)
            memcpy(key, &value, sizeof value);
        else
            write_hex16(key, value);
        set->keys[i].data = key;
        set->keys[i].len = width;
    }
    return 0;
}

int key_set_sample(key_set *sample, const key_set *source, size_t count)
{
    memset(sample, 0, sizeof *sample);
    if (count > source->count)
        count = source->count;
    size_t width = key_type_bytes(source->type);
    sample->bytes = bench_alloc_array(count * width + 1);
    sample->keys = bench_alloc_array((count + 1) * sizeof *sample->keys);
    if (sample->bytes == NULL || sample->keys == NULL) {
        key_set_free(sample);
        return -1;
    }
    sample->type = source->type;
    sample->count = count;
    /* The sampled keys are copied next to each other, as the absent keys
     * are, so that reading the keys costs the same in both query passes and
     * the timings compare the filter, not the key array's cache misses. */
    for (size_t i = 0; i < count; i++) {
        const bk_key *from =
            &source->keys[(size_t)((unsigned __int128)i * source->count / count)];
        memcpy(sample->bytes + i * width, from->data, width);
        sample->keys[i].data = sample->bytes + i * width;
        sample->keys[i].len = width;
    }
    return 0;
}

void key_set_free(key_set *set)
{
    free(set->bytes);
    free(set->keys);
    memset(set, 0, sizeof *set);
}
