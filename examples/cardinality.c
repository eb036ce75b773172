/*
 * examples/cardinality.c -- counting keys from the fill (the second seed,
 * §03), reproduced with bloomkit.
 *
 * Two sets of 12,000 keys overlapping in 4,000 (a = 0..11999,
 * b = 8000..19999) go into two filters of the same size and hashes.  The
 * number of keys is estimated from each filter's set bits,
 * n ~ -(m/k) ln(1 - X/m), and from their union (the bitwise OR), which is
 * exactly the filter of a u b.  The intersection follows as
 * |a| + |b| - |a u b|.
 *
 * Build and run:  build/release/examples/cardinality
 */
#include <stdio.h>

#include "bloomkit.h"

static void add_range(bk_filter *filter, int from, int to)
{
    char key[16];
    for (int i = from; i < to; i++)
        bk_filter_add(filter, key, (size_t)snprintf(key, sizeof key, "%d", i), NULL);
}

/* The number of keys estimated from a filter's fill. */
static double estimated_keys(const bk_filter *filter)
{
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    return stats.keys_estimated;
}

static const char *yes_no(bool value) { return value ? "true" : "false"; }

int main(void)
{
    bk_params params = { .capacity = 20000, .fpr = 0.01 };
    bk_filter *a, *b, *u;
    if (bk_filter_create(BK_KIND_BLOOM, &params, &a) != BK_OK ||
        bk_filter_create(BK_KIND_BLOOM, &params, &b) != BK_OK) {
        fprintf(stderr, "cardinality: out of memory\n");
        return 1;
    }
    add_range(a, 0, 12000);
    add_range(b, 8000, 20000);
    /* u = a copy of a, then a | b: the filter of the union */
    if (bk_filter_copy(a, &u) != BK_OK || bk_filter_union(u, b) != BK_OK) {
        fprintf(stderr, "cardinality: union failed\n");
        return 1;
    }
    bk_set_estimate e;
    bk_filter_estimate_sets(a, b, &e);
    printf("estimated size of a:     %.0f (true 12000)\n", estimated_keys(a));
    printf("estimated size of b:     %.0f (true 12000)\n", estimated_keys(b));
    printf("estimated size of a + b: %.0f (true 20000)\n", estimated_keys(u));
    printf("estimated size of a * b: %.0f (true 4000), Jaccard %.3f (true 0.200)\n",
           e.intersection_size, e.jaccard);
    printf("u contains 3 and 19999:  %s %s\n", yes_no(bk_filter_contains(u, "3", 1)),
           yes_no(bk_filter_contains(u, "19999", 5)));
    bk_filter_free(a);
    bk_filter_free(b);
    bk_filter_free(u);
    return 0;
}
