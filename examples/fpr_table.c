/*
 * examples/fpr_table.c -- the FPR table of Bloom's formulas: the predicted
 * false-positive rate at each bits-per-key, measured with bloomkit.
 *
 * 100,000 keys "user:0".."user:99999" go into a filter of m = n * bits/key
 * bits with the best k = round(bits/key * ln 2); then 1,000,000 keys that
 * were never added, "guest:0".."guest:999999", are queried.  The measured
 * rate is printed beside the prediction (1 - e^{-kn/m})^k.
 *
 * Build and run:  build/release/examples/fpr_table
 */
#include <stdio.h>

#include "bloomkit.h"

#define KEYS 100000
#define QUERIES 1000000

static size_t key_text(char *buffer, size_t size, const char *prefix, int i)
{
    return (size_t)snprintf(buffer, size, "%s:%d", prefix, i);
}

static int trial(int bits_per_key)
{
    bk_params params = { .capacity = KEYS, .bits_per_key = bits_per_key };
    bk_filter *filter;
    bk_status status = bk_filter_create(BK_KIND_BLOOM, &params, &filter);
    if (status != BK_OK) {
        fprintf(stderr, "fpr_table: %s\n", bk_strerror(status));
        return 1;
    }
    char key[32];
    for (int i = 0; i < KEYS; i++)
        bk_filter_add(filter, key, key_text(key, sizeof key, "user", i), NULL);
    long false_positives = 0;
    for (int i = 0; i < QUERIES; i++)
        false_positives += bk_filter_contains(filter, key,
                                              key_text(key, sizeof key, "guest", i));
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    unsigned k = stats.hashes;
    double predicted = bk_predicted_fpr(KEYS, stats.bits, k);
    printf("%8d %3u %11.6f %11.6f\n", bits_per_key, k, (double)false_positives / QUERIES,
           predicted);
    bk_filter_free(filter);
    return 0;
}

int main(void)
{
    const int bits_per_key[] = { 4, 6, 8, 10, 12, 16, 20 };
    printf("bits/key   k    measured   predicted\n");
    for (size_t i = 0; i < sizeof bits_per_key / sizeof bits_per_key[0]; i++)
        if (trial(bits_per_key[i]) != 0)
            return 1;
    return 0;
}
