/*
 * examples/counting_delete.c -- the demonstration from the literature of
 * what removing a false positive does to a counting Bloom filter.
 *
 * Insert in0..in99 into a counting filter sized for 100 keys at 5%
 * (m = 768 four-bit counters in 6 lines, k = 4), remove in7 (safe: it was added), then
 * look for the first key among out0, out1, ... that the filter reports
 * present although it was never added -- a false positive -- and remove it.
 * The filter cannot tell it from a real key, so the remove succeeds and
 * decrements counters that belong to keys that are still in the set: some
 * of them are now reported absent.  False negatives, from one bad remove.
 *
 * The lesson, in bloomkit/counting.h: remove only keys known to be present.
 * Which out-key is the false positive depends on the hash (the published
 * demonstration, hashing with OCaml's Hashtbl, found out13; XXH3 with seed
 * 0 finds another one).
 */
#include <stdio.h>
#include <stdlib.h>

#include "bloomkit.h"

#define KEYS 100

static size_t key_of(char *buffer, size_t size, const char *prefix, unsigned i)
{
    return (size_t)snprintf(buffer, size, "%s%u", prefix, i);
}

static bool contains(const bk_filter *filter, const char *prefix, unsigned i)
{
    char key[32];
    return bk_filter_contains(filter, key, key_of(key, sizeof key, prefix, i));
}

int main(void)
{
    bk_params params = { .capacity = KEYS, .fpr = 0.05 };
    bk_filter *filter;
    bk_status status = bk_filter_create(BK_KIND_COUNTING, &params, &filter);
    if (status != BK_OK) {
        fprintf(stderr, "counting_delete: %s\n", bk_strerror(status));
        return 1;
    }
    char key[32];
    for (unsigned i = 0; i < KEYS; i++)
        bk_filter_add(filter, key, key_of(key, sizeof key, "in", i), NULL);

    bk_filter_remove(filter, "in7", 3);
    printf("after removing in7: mem in7 = %s, mem in8 = %s\n",
           contains(filter, "in", 7) ? "true" : "false",
           contains(filter, "in", 8) ? "true" : "false");

    unsigned out = 0;
    while (!contains(filter, "out", out))
        out++;
    printf("false positive out%u; removing it\n", out);
    bk_filter_remove(filter, key, key_of(key, sizeof key, "out", out));

    printf("keys now reported absent:");
    const char *separator = " ";
    for (unsigned i = 0; i < KEYS; i++) {
        if (i != 7 && !contains(filter, "in", i)) {
            printf("%sin%u", separator, i);
            separator = ", ";
        }
    }
    printf("\n");
    bk_filter_free(filter);
    return 0;
}
