/*
 * cli/sets.c -- set algebra on filter files:
 *
 *   bloomkit merge     OUT A B [C...]   union        (bk_filter_union)
 *   bloomkit intersect OUT A B [C...]   intersection (bk_filter_intersect)
 *   bloomkit estimate  A B              |A|, |B|, |A u B|, |A n B|, Jaccard
 *
 * The filters must have the same kind, size, k, hash algorithm and seed;
 * otherwise the message says which of these differs.  For Bloom filters
 * the union is exact (the OR of the bits is the filter of the union) and
 * the intersection is the AND: it answers at least every key of A n B, with
 * an FPR no lower than the filter of A n B would have (Broder &
 * Mitzenmacher 2004, section 2.2).  The estimates come from the fills
 * (Swamidass & Baldi 2007; src/sizing.c).
 */
#define _POSIX_C_SOURCE 200809L

#include <string.h>

#include "cli.h"

static const char merge_usage[] =
    "usage: bloomkit merge OUT A B [C...] [--force] [--key-file F]\n"
    "\n"
    "Writes to OUT the union of the filters A, B, ...: it answers yes for every\n"
    "key any of them holds.  The filters must have been created with the same\n"
    "parameters (kind, -n/-p or m and k, hash, seed).  An existing OUT is\n"
    "refused unless --force; OUT may be one of the inputs.  '-' as OUT writes to\n"
    "standard output; '-' as one input reads it from standard input.\n";

static const char intersect_usage[] =
    "usage: bloomkit intersect OUT A B [C...] [--force] [--key-file F]\n"
    "\n"
    "Writes to OUT the intersection of the filters A, B, ...: it answers yes\n"
    "for every key all of them hold (and false positives at a rate no lower\n"
    "than a filter built from the common keys).  Same rules as merge.\n";

static const char estimate_usage[] =
    "usage: bloomkit estimate A B [--json] [--key-file F]\n"
    "\n"
    "Estimates, from the fills of two compatible filters, the number of keys in\n"
    "A, in B, in their union and in their intersection, and the Jaccard\n"
    "similarity |A n B| / |A u B|.  --json prints one object with the fields\n"
    "a, b, union, intersection, jaccard.\n";

static int check_one_stdin(char **paths, int count)
{
    int from_stdin = 0;
    for (int i = 0; i < count; i++)
        from_stdin += strcmp(paths[i], "-") == 0;
    if (from_stdin > 1)
        return cli_error("only one filter can come from standard input ('-')");
    return CLI_OK;
}

static int combine_error(const char *verb, const char *path, const bk_filter *into,
                         const bk_filter *other, bk_status status)
{
    if (status == BK_EINCOMPATIBLE) {
        char why[160];
        cli_describe_incompatibility(into, other, why, sizeof why);
        return cli_error("cannot %s %s: the filters are incompatible: %s", verb, path, why);
    }
    if (status == BK_EUNSUPPORTED)
        return cli_error("cannot %s %s filters: the kind does not support it", verb,
                         bk_kind_name(bk_filter_kind(into)));
    return cli_error("cannot %s %s: %s", verb, path, bk_strerror(status));
}

typedef bk_status (*combine_fn)(bk_filter *dst, const bk_filter *src);

static int combine_files(const cli_args *args, const char *verb, combine_fn combine)
{
    const char *out_path = args->positional[0];
    char **inputs = args->positional + 1;
    int input_count = args->positional_count - 1;
    if (check_one_stdin(inputs, input_count) != CLI_OK ||
        cli_check_output(args, out_path) != CLI_OK)
        return CLI_ERROR;
    bk_filter *result;
    if (cli_load(args, inputs[0], false, &result) != CLI_OK)
        return CLI_ERROR;
    int status = CLI_OK;
    for (int i = 1; i < input_count && status == CLI_OK; i++) {
        bk_filter *other;
        if (cli_load(args, inputs[i], false, &other) != CLI_OK) {
            status = CLI_ERROR;
            break;
        }
        bk_status combined = combine(result, other);
        if (combined != BK_OK)
            status = combine_error(verb, inputs[i], result, other, combined);
        bk_filter_free(other);
    }
    if (status == CLI_OK)
        status = cli_save(result, out_path);
    bk_filter_free(result);
    return status;
}

static int run_combine(int argc, char **argv, const char *usage, const char *verb,
                       combine_fn combine)
{
    cli_args args;
    int result = cli_parse(argc, argv, OPT_BIT(OPT_FORCE) | OPT_BIT(OPT_KEY_FILE), &args);
    if (result < 0)
        return cli_usage(usage);
    if (result != CLI_OK)
        return result;
    if (args.positional_count < 3)
        result = cli_usage_error(usage, "needs an OUT file and at least two input filters");
    else
        result = combine_files(&args, verb, combine);
    cli_args_free(&args);
    return result;
}

int cli_merge(int argc, char **argv)
{
    return run_combine(argc, argv, merge_usage, "merge", bk_filter_union);
}

int cli_intersect(int argc, char **argv)
{
    return run_combine(argc, argv, intersect_usage, "intersect", bk_filter_intersect);
}

/* ------------------------------------------------------------------------ */
/* estimate                                                                 */
/* ------------------------------------------------------------------------ */

static void print_estimate(const cli_args *args, const bk_set_estimate *e)
{
    if (args->json) {
        printf("{\"a\": ");
        json_number(stdout, e->a);
        printf(", \"b\": ");
        json_number(stdout, e->b);
        printf(", \"union\": ");
        json_number(stdout, e->union_size);
        printf(", \"intersection\": ");
        json_number(stdout, e->intersection_size);
        printf(", \"jaccard\": ");
        json_number(stdout, e->jaccard);
        printf("}\n");
        return;
    }
    printf("|A|       %12.0f  %s\n", e->a, args->positional[0]);
    printf("|B|       %12.0f  %s\n", e->b, args->positional[1]);
    printf("|A u B|   %12.0f\n", e->union_size);
    printf("|A n B|   %12.0f\n", e->intersection_size);
    printf("Jaccard   %12.4f\n", e->jaccard);
}

static int estimate_files(const cli_args *args)
{
    if (check_one_stdin(args->positional, 2) != CLI_OK)
        return CLI_ERROR;
    bk_filter *a = NULL, *b = NULL;
    int result = cli_load(args, args->positional[0], false, &a);
    if (result == CLI_OK)
        result = cli_load(args, args->positional[1], false, &b);
    if (result == CLI_OK) {
        bk_set_estimate estimate;
        bk_status status = bk_filter_estimate_sets(a, b, &estimate);
        if (status == BK_OK) {
            print_estimate(args, &estimate);
            result = output_finish();
        } else {
            result = combine_error("estimate", args->positional[1], a, b, status);
        }
    }
    bk_filter_free(a);
    bk_filter_free(b);
    return result;
}

int cli_estimate(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(argc, argv, OPT_BIT(OPT_JSON) | OPT_BIT(OPT_KEY_FILE), &args);
    if (result < 0)
        return cli_usage(estimate_usage);
    if (result != CLI_OK)
        return result;
    if (args.positional_count != 2)
        result = cli_usage_error(estimate_usage, "estimate needs two filters A B");
    else
        result = estimate_files(&args);
    cli_args_free(&args);
    return result;
}
