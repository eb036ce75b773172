/*
 * cli/design.c -- the commands that make a new filter from design options:
 *
 *   bloomkit size   -n N -p P      the design of every kind, nothing allocated
 *   bloomkit create FILE -n N ...  an empty filter of a dynamic kind
 *   bloomkit build  FILE ...       a filter holding exactly the keys given
 *                                  (the only way to make a static kind)
 *
 * `size` prints, per kind, m, k, bytes, bits per key, the predicted FPR,
 * the lower bound log2(1/FPR) on bits per key of any structure with that
 * FPR (Carter et al. 1978), and bits per key divided by that bound: how far
 * the kind is from the best possible (1.44 for a classic Bloom filter at
 * its optimal k).  The bound is taken at the FPR the kind actually
 * predicts, so kinds whose FPR comes in steps (fingerprint widths) are
 * compared fairly.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define KIND_OPTIONS                                                              \
    "kind options: --fingerprint-bits B (cuckoo), --expansion X --tightening R\n" \
    "  --max-filters M (scalable), --window-keys N --window-seconds S\n"          \
    "  --generations G (window), --remainder-bits R --auto-grow (quotient),\n"    \
    "  --parquet (sbbf: a power of two bytes up to 128 MiB, the sizes every\n"    \
    "  Parquet reader accepts)\n"

static const char size_usage[] =
    "usage: bloomkit size -n N [-p P | --bits-per-key B | --bits M --hashes K] [--kind K]\n"
    "                     [--json] [kind options]\n"
    "\n"
    "The design of a filter for N keys, for every kind this build has (or only\n"
    "--kind K): m (bits), k (hashes per key), bytes, bits per key, predicted\n"
    "false-positive rate, the lower bound log2(1/FPR) on bits per key for that\n"
    "rate, and the ratio of the two.  Nothing is allocated.  -p defaults to 0.01;\n"
    "-n 10M and -p 1% are accepted.\n"
    "\n" KIND_OPTIONS;

static const char create_usage[] =
    "usage: bloomkit create FILE -n N [-p P | --bits-per-key B | --bits M --hashes K]\n"
    "                       [--kind K] [--seed S | --key-file F] [--hash H] [--force] [-q]\n"
    "                       [kind options]\n"
    "\n"
    "Creates an empty filter for N keys with false-positive rate P (default 0.01)\n"
    "and writes it to FILE ('-': standard output).  An existing FILE is refused\n"
    "unless --force.  --kind defaults to bloom ('bloomkit size' lists the kinds).\n"
    "--seed S seeds the hash (xxh3, default 0); --key-file F hashes with SipHash\n"
    "under the secret key in F (16 raw bytes or 32 hex digits), which every later\n"
    "command on FILE then needs too.  Prints a summary unless -q.\n"
    "\n" KIND_OPTIONS;

static const char build_usage[] =
    "usage: bloomkit build FILE [--kind K] [-n N] [-p P | --bits-per-key B] [--seed S |\n"
    "                      --key-file F] [--force] [-0] [-q] [KEY...] [< KEYS]\n"
    "\n"
    "Reads every key (the KEY operands, or else lines of standard input; -0:\n"
    "NUL-terminated), builds a filter holding exactly those keys and writes it to\n"
    "FILE.  Static kinds (xor, fuse) can only be made this way; for the others -n\n"
    "defaults to the number of keys read.\n"
    "\n" KIND_OPTIONS;

/* What a kind needs beyond -n, for the message when its design fails. */
static const char *kind_requirements(bk_kind kind, const bk_params *params)
{
    switch (kind) {
    case BK_KIND_WINDOW:
        if (params->generations == 1 || params->generations > BK_WINDOW_MAX_GENERATIONS)
            return " (a window filter has 2 to 64 --generations)";
        if (params->bits != 0 || params->bits_per_key != 0)
            return " (a window filter is sized by -n and -p, not --bits or --bits-per-key)";
        return " (a window filter needs --window-keys N or --window-seconds S)";
    case BK_KIND_SCALABLE:
        if (params->bits != 0 || params->bits_per_key != 0)
            return " (a scalable filter is sized by -n and -p, not --bits or --bits-per-key)";
        return " (scalable: --expansion >= 1, 0 < --tightening < 1)";
    case BK_KIND_CUCKOO: return " (cuckoo takes --fingerprint-bits 4 to 16)";
    case BK_KIND_QUOTIENT:
        return " (quotient sizes from -p or --bits-per-key; --remainder-bits 4 to 32)";
    default: return "";
    }
}

/* ------------------------------------------------------------------------ */
/* size                                                                     */
/* ------------------------------------------------------------------------ */

static void print_size_header(const bk_params *params)
{
    printf("design for n = %llu keys", (unsigned long long)params->capacity);
    if (params->bits != 0)
        printf(", m = %llu bits, k = %u", (unsigned long long)params->bits, params->hashes);
    else if (params->bits_per_key != 0)
        printf(", %g bits per key", params->bits_per_key);
    else
        printf(", p = %g", params->fpr != 0 ? params->fpr : 0.01);
    printf("\n\n%-10s %14s %4s %14s %9s %13s %11s %6s\n", "kind", "bits (m)", "k", "bytes",
           "bits/key", "predicted FPR", "log2(1/FPR)", "ratio");
}

static void print_size_row(const bk_stats *design)
{
    double bound = bk_lower_bound_bits(design->target_fpr);
    printf("%-10s %14llu %4u %14llu %9.2f %13.4g %11.2f %6.2f\n", bk_kind_name(design->kind),
           (unsigned long long)design->bits, design->hashes, (unsigned long long)design->bytes,
           design->bits_per_key, design->target_fpr, bound,
           bound > 0 ? design->bits_per_key / bound : 0.0);
}

static void print_size_json(const bk_stats *design, bool first)
{
    double bound = bk_lower_bound_bits(design->target_fpr);
    printf("%s\n  {\"kind\": ", first ? "" : ",");
    json_string(stdout, bk_kind_name(design->kind));
    printf(", \"static\": %s, \"bits\": %llu, \"hashes\": %u, \"bytes\": %llu, "
           "\"bits_per_key\": ",
           bk_kind_is_static(design->kind) ? "true" : "false", (unsigned long long)design->bits,
           design->hashes, (unsigned long long)design->bytes);
    json_number(stdout, design->bits_per_key);
    printf(", \"predicted_fpr\": ");
    json_number(stdout, design->target_fpr);
    printf(", \"lower_bound_bits\": ");
    json_number(stdout, bound);
    printf(", \"space_ratio\": ");
    json_number(stdout, bound > 0 ? design->bits_per_key / bound : 0.0);
    printf("}");
}

static void print_size_json_error(const cli_args *args, bk_kind kind, bk_status status,
                                  bool first)
{
    printf("%s\n  {\"kind\": ", first ? "" : ",");
    json_string(stdout, bk_kind_name(kind));
    printf(", \"static\": %s, \"error\": ", bk_kind_is_static(kind) ? "true" : "false");
    char message[200];
    snprintf(message, sizeof message, "%s%s", bk_strerror(status),
             status == BK_EINVAL ? kind_requirements(kind, &args->params) : "");
    json_string(stdout, message);
    printf("}");
}

static int run_size(const cli_args *args)
{
    bk_kind only = BK_KIND_NONE;
    if (args->kind_name != NULL &&
        (cli_kind(args, &only) != CLI_OK || cli_check_kind_options(args, only) != CLI_OK))
        return CLI_ERROR;
    if (args->json)
        printf("[");
    else
        print_size_header(&args->params);
    int shown = 0, failed = 0;
    bk_kind every[64];
    size_t kinds = bk_kind_list(every, sizeof every / sizeof every[0]);
    for (size_t i = 0; i < kinds && i < sizeof every / sizeof every[0]; i++) {
        bk_kind kind = every[i];
        if (only != BK_KIND_NONE && kind != only)
            continue;
        bk_params params = args->params;
        if (kind != BK_KIND_SBBF) /* --parquet shapes sbbf only */
            params.flags &= ~BK_FLAG_PARQUET_SIZE;
        bk_stats design;
        bk_status status = bk_kind_design(kind, &params, &design);
        if (status != BK_OK) {
            if (args->json)
                print_size_json_error(args, kind, status, shown + failed == 0);
            else
                printf("%-10s (%s%s)\n", bk_kind_name(kind), bk_strerror(status),
                       status == BK_EINVAL ? kind_requirements(kind, &args->params) : "");
            failed++;
            continue;
        }
        if (args->json)
            print_size_json(&design, shown + failed == 0);
        else
            print_size_row(&design);
        shown++;
    }
    if (args->json)
        printf("\n]\n");
    if (output_finish() != CLI_OK)
        return CLI_ERROR;
    if (shown == 0)
        return cli_error("no kind can be built with these parameters");
    return CLI_OK;
}

int cli_size(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(argc, argv, OPT_DESIGN | OPT_BIT(OPT_JSON), &args);
    if (result < 0)
        return cli_usage(size_usage);
    if (result != CLI_OK)
        return result;
    if (args.positional_count > 0)
        result = cli_usage_error(size_usage, "size takes no operands");
    else if (cli_check_design(&args, true) != CLI_OK)
        result = CLI_ERROR;
    else
        result = run_size(&args);
    cli_args_free(&args);
    return result;
}

/* ------------------------------------------------------------------------ */
/* create                                                                   */
/* ------------------------------------------------------------------------ */

static void print_summary(const char *path, const bk_filter *filter, const char *verb)
{
    bk_stats s;
    bk_filter_stats(filter, &s);
    printf("%s: %s %s filter, m = %llu bits (%llu bytes), k = %u, for %llu keys at FPR %.4g\n",
           path, verb, bk_kind_name(s.kind), (unsigned long long)s.bits,
           (unsigned long long)s.bytes, s.hashes, (unsigned long long)s.capacity, s.target_fpr);
}

static int create_filter(const cli_args *args, const char *path)
{
    bk_kind kind;
    if (cli_kind(args, &kind) != CLI_OK)
        return CLI_ERROR;
    if (bk_kind_is_static(kind))
        return cli_error("%s filters are static: make one from its keys with 'bloomkit build'",
                         bk_kind_name(kind));
    if (cli_check_kind_options(args, kind) != CLI_OK || cli_check_output(args, path) != CLI_OK)
        return CLI_ERROR;
    bk_filter *filter;
    bk_status status = bk_filter_create(kind, &args->params, &filter);
    if (status != BK_OK)
        return cli_error("cannot create a %s filter with these parameters: %s%s",
                         bk_kind_name(kind), bk_strerror(status),
                         status == BK_EINVAL ? kind_requirements(kind, &args->params) : "");
    if (cli_check_fpr_reached(args, filter) != CLI_OK ||
        cli_settle_clock(&filter, path) != CLI_OK) {
        bk_filter_free(filter);
        return CLI_ERROR;
    }
    if (!args->quiet && strcmp(path, "-") != 0)
        print_summary(path, filter, "empty");
    int result = output_finish(); /* before the file: a failed command writes nothing */
    if (result == CLI_OK)
        result = cli_save(filter, path);
    bk_filter_free(filter);
    return result;
}

int cli_create(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(argc, argv, OPT_DESIGN | OPT_BIT(OPT_FORCE) | OPT_BIT(OPT_QUIET),
                           &args);
    if (result < 0)
        return cli_usage(create_usage);
    if (result != CLI_OK)
        return result;
    if (args.positional_count != 1)
        result = cli_usage_error(create_usage, args.positional_count == 0
                                                   ? "create needs a FILE"
                                                   : "create takes one FILE");
    else if (cli_check_design(&args, true) != CLI_OK)
        result = CLI_ERROR;
    else
        result = create_filter(&args, args.positional[0]);
    cli_args_free(&args);
    return result;
}

/* ------------------------------------------------------------------------ */
/* build                                                                    */
/* ------------------------------------------------------------------------ */

static int build_error(const cli_args *args, bk_kind kind, size_t count, bk_status status)
{
    return cli_error("cannot build a %s filter of %zu keys: %s%s", bk_kind_name(kind), count,
                     bk_strerror(status),
                     status == BK_EINVAL ? kind_requirements(kind, &args->params) : "");
}

/*
 * The filter holding exactly `keys`: a static kind is built from them; a
 * dynamic kind is created (for -n keys, by default as many as were read),
 * brought to the current time (a window in seconds stamps the keys with
 * it) and filled.  Then the checks that -p and -n were honoured: a rate
 * above -p is an error, -n on a static kind and a filter past its design
 * point get a warning.  CLI_ERROR after a message.
 */
static int make_filter(const cli_args *args, bk_kind kind, const bk_key *keys, size_t count,
                       const char *path, bk_filter **out)
{
    bk_filter *filter;
    bk_status status;
    if (bk_kind_is_static(kind)) {
        status = bk_filter_build(kind, &args->params, keys, count, &filter);
        if (status != BK_OK)
            return build_error(args, kind, count, status);
    } else {
        bk_params sized = args->params;
        if (sized.capacity == 0)
            sized.capacity = count ? count : 1;
        status = bk_filter_create(kind, &sized, &filter);
        if (status != BK_OK)
            return build_error(args, kind, count, status);
        if (cli_settle_clock(&filter, "the new filter") != CLI_OK) {
            bk_filter_free(filter);
            return CLI_ERROR;
        }
        status = bk_filter_add_batch(filter, keys, count, NULL);
        if (status != BK_OK) {
            bk_filter_free(filter);
            return build_error(args, kind, count, status);
        }
    }
    if (cli_check_fpr_reached(args, filter) != CLI_OK) {
        bk_filter_free(filter);
        return CLI_ERROR;
    }
    if (bk_kind_is_static(kind) && args->given[OPT_CAPACITY] && args->params.capacity != count)
        cli_warning("-n %llu is not used: a %s filter is sized for the %zu keys it holds",
                    (unsigned long long)args->params.capacity, bk_kind_name(kind), count);
    cli_warn_if_past_design_point(filter, strcmp(path, "-") == 0 ? "the filter" : path);
    *out = filter;
    return CLI_OK;
}

static int build_filter(const cli_args *args, const char *path)
{
    bk_kind kind;
    if (cli_kind(args, &kind) != CLI_OK || cli_check_kind_options(args, kind) != CLI_OK ||
        cli_check_output(args, path) != CLI_OK)
        return CLI_ERROR;
    key_reader reader;
    key_reader_init(&reader, args->positional + 1, (size_t)args->positional_count - 1, args->nul,
                    args->quiet);
    bk_key *keys = NULL;
    size_t count = 0;
    int result = key_reader_all(&reader, &keys, &count);
    if (result == CLI_OK) {
        bk_filter *filter = NULL;
        result = make_filter(args, kind, keys, count, path, &filter);
        if (result == CLI_OK) {
            if (!args->quiet && strcmp(path, "-") != 0)
                print_summary(path, filter, "built");
            result = output_finish(); /* before the file, as in create */
            if (result == CLI_OK)
                result = cli_save(filter, path);
            bk_filter_free(filter);
        }
    }
    free(keys);
    key_reader_free(&reader);
    return result;
}

int cli_build(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(
        argc, argv, OPT_DESIGN | OPT_BIT(OPT_FORCE) | OPT_BIT(OPT_QUIET) | OPT_BIT(OPT_NUL),
        &args);
    if (result < 0)
        return cli_usage(build_usage);
    if (result != CLI_OK)
        return result;
    if (args.positional_count < 1)
        result = cli_usage_error(build_usage, "build needs a FILE");
    else if (cli_check_design(&args, false) != CLI_OK)
        result = CLI_ERROR;
    else
        result = build_filter(&args, args.positional[0]);
    cli_args_free(&args);
    return result;
}
