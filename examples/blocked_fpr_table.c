/*
 * examples/blocked_fpr_table.c -- measures the false-positive rate of the
 * blocked and sbbf kinds across bits per key and k, beside the formulas
 * of src/sizing.c.  A program (it prints the table quoted in
 * src/blocked.c, src/sbbf.c and docs/BLOCKED.md):
 *
 *     build/release/examples/blocked_fpr_table [keys] [absent] [xxh3|xxh64]
 *
 * Keys are the 8-byte integers 0..n-1, absent keys n..n+absent-1
 * (little-endian), hashed with the kind's default hash (or the one named),
 * seed 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit.h"

static uint64_t count_false_positives(bk_filter *filter, uint64_t keys, uint64_t absent)
{
    enum { CHUNK = 4096 };
    static uint64_t values[CHUNK];
    static bk_key batch[CHUNK];
    for (uint64_t start = 0; start < keys; start += CHUNK) {
        size_t n = keys - start < CHUNK ? (size_t)(keys - start) : CHUNK;
        for (size_t i = 0; i < n; i++) {
            values[i] = start + i;
            batch[i].data = &values[i];
            batch[i].len = 8;
        }
        bk_filter_add_batch(filter, batch, n, NULL);
    }
    uint64_t positives = 0;
    for (uint64_t start = 0; start < absent; start += CHUNK) {
        size_t n = absent - start < CHUNK ? (size_t)(absent - start) : CHUNK;
        for (size_t i = 0; i < n; i++) {
            values[i] = keys + start + i;
            batch[i].data = &values[i];
            batch[i].len = 8;
        }
        positives += bk_filter_contains_batch(filter, batch, n, NULL);
    }
    return positives;
}

static bk_hash_algorithm algorithm = BK_HASH_XXH3;

static void row(bk_kind kind, double bits_per_key, unsigned k, uint64_t keys, uint64_t absent)
{
    bk_params params = { .capacity = keys };
    params.bits = (uint64_t)(bits_per_key * (double)keys);
    params.hashes = k;
    params.hash_algorithm = algorithm;
    bk_filter *filter;
    if (bk_filter_create(kind, &params, &filter) != BK_OK) {
        fprintf(stderr, "create failed\n");
        exit(1);
    }
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    double measured = (double)count_false_positives(filter, keys, absent) / (double)absent;
    double c = (double)stats.bits / (double)keys;
    double predicted = kind == BK_KIND_SBBF ? bk_split_block_predicted_fpr(c, 8, 32)
                                            : bk_blocked_predicted_fpr(c, k, 512);
    double classic = bk_predicted_fpr(keys, stats.bits, k);
    printf(
        "%-8s %6.2f %3u  %9.4f%%  %9.4f%%  %+6.2f%%   %9.4f%%%s\n", bk_kind_name(kind), c, k,
        100 * measured, 100 * predicted, 100 * (measured / predicted - 1), 100 * classic,
        kind == BK_KIND_BLOCKED && k == bk_blocked_best_hashes(c, 512) ? "  <- chosen k" : "");
    bk_filter_free(filter);
}

int main(int argc, char **argv)
{
    uint64_t keys = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    uint64_t absent = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000;
    if (argc > 3 && strcmp(argv[3], "xxh64") == 0)
        algorithm = BK_HASH_XXH64;
    printf("%llu keys, %llu absent keys per row\n", (unsigned long long)keys,
           (unsigned long long)absent);
    printf("kind     bits/key  k   measured   predicted   m/p-1    classic Bloom\n");
    const double budgets[] = { 6, 8, 10, 12, 16, 20 };
    for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
        unsigned best = bk_blocked_best_hashes(budgets[b], 512);
        for (unsigned k = best > 2 ? best - 2 : 1; k <= best + 2; k++)
            row(BK_KIND_BLOCKED, budgets[b], k, keys, absent);
        row(BK_KIND_SBBF, budgets[b], 8, keys, absent);
    }
    return 0;
}
