/*
 * cli/query.c -- `bloomkit query FILE [KEY...]` and `bloomkit info FILE`.
 *
 * query: keys in batches of CLI_BATCH through bk_filter_contains_batch
 * (hash all, then probe with prefetch); the selected keys (present, or
 * absent with -v) are written to a 256 KiB-buffered stdout, each followed
 * by the input's delimiter.  Exit status as grep: 0 if any key may be
 * present, 1 if none is, 2 on error.  --mmap maps the file instead of
 * reading it: the first answer comes without reading a multi-gigabyte
 * file, but the checksum is not verified.
 *
 * info: the bk_stats of the filter, as "name: value" lines or one JSON
 * object whose field names are the bk_stats names.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char query_usage[] =
    "usage: bloomkit query FILE [-v] [-c] [-0] [-q] [--mmap] [--key-file F] [KEY...] [< KEYS]\n"
    "\n"
    "Prints the keys (the KEY operands, or else the lines of standard input; -0:\n"
    "NUL-terminated) that may be in the filter in FILE.  -v (--absent) prints\n"
    "the keys that are certainly absent instead; -c (--count) prints only how\n"
    "many keys would have been printed.  Exit status 0 if any key may be present,\n"
    "1 if none is, 2 on error.  --mmap maps FILE instead of reading it (fast\n"
    "first answer, checksum not verified).  FILE '-' reads the filter from\n"
    "standard input (keys then as operands).\n";

static const char info_usage[] =
    "usage: bloomkit info FILE [--json] [--key-file F]\n"
    "\n"
    "Describes the filter in FILE: kind, m, k, bytes, capacity, design FPR, keys\n"
    "added, keys estimated from the fill, fill ratio, current estimated FPR,\n"
    "bits per key, and status: ok, or past design point (the FPR is above its\n"
    "design and rising).  --json prints one JSON object with the fields kind,\n"
    "bits, hashes, bytes, capacity, target_fpr, keys_added, keys_estimated,\n"
    "fill_ratio, design_fill_ratio, current_fpr, bits_per_key, status,\n"
    "hash_algorithm, seed (or key_id) and the kind's own fields.\n";

/* ------------------------------------------------------------------------ */
/* query                                                                    */
/* ------------------------------------------------------------------------ */

static int query_keys(const cli_args *args, const bk_filter *filter, key_reader *reader,
                      uint64_t *present_total)
{
    bk_key *keys = malloc(CLI_BATCH * sizeof *keys);
    bool *present = malloc(CLI_BATCH * sizeof *present);
    if (keys == NULL || present == NULL) {
        free(keys);
        free(present);
        return cli_error("out of memory");
    }
    progress bar;
    /* Not over keys printed to the same terminal. */
    bool keys_to_terminal = !args->count_only && isatty(STDOUT_FILENO);
    progress_start(&bar, "queried", args->quiet || keys_to_terminal);
    uint64_t selected = 0;
    size_t count;
    while ((count = key_reader_next(reader, keys, CLI_BATCH)) > 0) {
        *present_total += bk_filter_contains_batch(filter, keys, count, present);
        for (size_t i = 0; i < count; i++) {
            if (present[i] == args->invert)
                continue;
            selected++;
            if (!args->count_only)
                output_key(&keys[i], reader->delimiter);
        }
        progress_update(&bar, reader->keys_read);
    }
    progress_finish(&bar);
    free(keys);
    free(present);
    if (reader->failed)
        return key_reader_error(reader);
    if (args->count_only)
        printf("%llu\n", (unsigned long long)selected);
    return output_finish();
}

int cli_query(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(argc, argv,
                           OPT_BIT(OPT_NUL) | OPT_BIT(OPT_QUIET) | OPT_BIT(OPT_INVERT) |
                               OPT_BIT(OPT_COUNT) | OPT_BIT(OPT_MMAP) | OPT_BIT(OPT_KEY_FILE),
                           &args);
    if (result < 0)
        return cli_usage(query_usage);
    if (result != CLI_OK)
        return result;
    const char *path = args.positional_count > 0 ? args.positional[0] : NULL;
    size_t operand_count = args.positional_count > 0 ? (size_t)args.positional_count - 1 : 0;
    bk_filter *filter = NULL;
    if (path == NULL)
        result = cli_usage_error(query_usage, "query needs a FILE");
    else if (strcmp(path, "-") == 0 && keys_from_stdin(args.positional + 1, operand_count))
        result = cli_error("the filter comes from standard input ('-'), so the keys must be "
                           "given as arguments");
    else
        result = cli_load(&args, path, args.mmap, &filter);
    if (result == CLI_OK) {
        output_init();
        key_reader reader;
        key_reader_init(&reader, args.positional + 1, operand_count, args.nul, args.quiet);
        uint64_t present = 0;
        result = query_keys(&args, filter, &reader, &present);
        key_reader_free(&reader);
        if (result == CLI_OK && present == 0)
            result = CLI_NO;
    }
    bk_filter_free(filter);
    cli_args_free(&args);
    return result;
}

/* ------------------------------------------------------------------------ */
/* info                                                                     */
/* ------------------------------------------------------------------------ */

/* Which kind-specific fields mean something for a kind (or are set). */
static bool has_load_factor(const bk_stats *s)
{
    return s->kind == BK_KIND_CUCKOO || s->load_factor != 0;
}
static bool has_saturated_counters(const bk_stats *s)
{
    return s->kind == BK_KIND_COUNTING || s->saturated_counters != 0;
}
static bool has_filters(const bk_stats *s)
{
    return s->kind == BK_KIND_SCALABLE || s->kind == BK_KIND_WINDOW || s->filters != 0;
}
static bool has_fingerprint_bits(const bk_stats *s)
{
    return s->fingerprint_bits != 0;
}

static const char *status_word(const bk_stats *s)
{
    return s->past_design_point ? "past_design_point" : "ok";
}

/* A scalable filter's chain: one line (or JSON object) per sub-filter,
 * oldest first.  Other kinds have none. */
static unsigned sub_filter_count(const bk_filter *filter)
{
    size_t count;
    return bk_scalable_sub_count(filter, &count) == BK_OK ? (unsigned)count : 0;
}

static bool sub_filter_stats(const bk_filter *filter, unsigned index, bk_stats *out)
{
    return bk_scalable_sub_stats(filter, index, out) == BK_OK;
}

static void print_sub_filters_text(const bk_filter *filter)
{
    unsigned count = sub_filter_count(filter);
    if (count == 0)
        return;
    printf("sub-filters:       %u (oldest first)\n", count);
    printf("  %3s %14s %4s %12s %12s %9s %11s\n", "#", "bits", "k", "capacity", "keys added",
           "fill", "design FPR");
    for (unsigned i = 0; i < count; i++) {
        bk_stats sub;
        if (!sub_filter_stats(filter, i, &sub))
            continue;
        printf("  %3u %14llu %4u %12llu %12llu %9.6f %11.4g\n", i, (unsigned long long)sub.bits,
               sub.hashes, (unsigned long long)sub.capacity, (unsigned long long)sub.keys_added,
               sub.fill_ratio, sub.target_fpr);
    }
}

static void print_sub_filters_json(const bk_filter *filter)
{
    unsigned count = sub_filter_count(filter);
    if (count == 0)
        return;
    printf(",\n  \"sub_filters\": [");
    for (unsigned i = 0; i < count; i++) {
        bk_stats sub;
        if (!sub_filter_stats(filter, i, &sub))
            continue;
        printf("%s\n    { \"bits\": %llu, \"hashes\": %u, \"capacity\": %llu, \"keys_added\": %llu, "
               "\"fill_ratio\": ", i ? "," : "", (unsigned long long)sub.bits, sub.hashes,
               (unsigned long long)sub.capacity, (unsigned long long)sub.keys_added);
        json_number(stdout, sub.fill_ratio);
        printf(", \"target_fpr\": ");
        json_number(stdout, sub.target_fpr);
        printf(" }");
    }
    printf("\n  ]");
}

/* Bits per key over log2(1/p), the least any filter with this FPR needs. */
static double space_ratio(const bk_stats *s)
{
    double bound = bk_lower_bound_bits(s->target_fpr);
    return bound > 0 ? s->bits_per_key / bound : 0.0;
}

static void print_info_text(const char *path, const bk_filter *filter, const bk_stats *s)
{
    printf("file:              %s\n", strcmp(path, "-") == 0 ? "(standard input)" : path);
    printf("kind:              %s%s\n", bk_kind_name(s->kind),
           bk_kind_is_static(s->kind) ? " (static)" : "");
    printf("bits (m):          %llu\n", (unsigned long long)s->bits);
    printf("hashes (k):        %u\n", s->hashes);
    printf("bytes:             %llu\n", (unsigned long long)s->bytes);
    printf("capacity:          %llu keys\n", (unsigned long long)s->capacity);
    printf("design FPR:        %.6g\n", s->target_fpr);
    printf("keys added:        %llu\n", (unsigned long long)s->keys_added);
    printf("keys estimated:    %.0f\n", s->keys_estimated);
    printf("fill ratio:        %.6f (%.6f at capacity)\n", s->fill_ratio, s->design_fill_ratio);
    printf("current FPR:       %.6g\n", s->current_fpr);
    printf("bits per key:      %.3f (%.2f x the lower bound log2(1/FPR) = %.2f)\n",
           s->bits_per_key, space_ratio(s), bk_lower_bound_bits(s->target_fpr));
    if (has_load_factor(s))
        printf("load factor:       %.6f\n", s->load_factor);
    if (has_saturated_counters(s))
        printf("saturated counters: %llu\n", (unsigned long long)s->saturated_counters);
    if (has_filters(s))
        printf("filters:           %u\n", s->filters);
    if (has_fingerprint_bits(s))
        printf("fingerprint bits:  %u\n", s->fingerprint_bits);
    if (s->hash_algorithm == BK_HASH_SIPHASH)
        printf("hash:              siphash (secret key id %016llx)\n",
               (unsigned long long)s->seed);
    else
        printf("hash:              %s, seed %llu\n", bk_hash_algorithm_name(s->hash_algorithm),
               (unsigned long long)s->seed);
    printf("status:            %s\n",
           s->past_design_point ? "past design point (the FPR is above its design and rising)"
                                : "ok");
    print_sub_filters_text(filter);
}

static void json_field_number(const char *name, double value)
{
    printf(",\n  \"%s\": ", name);
    json_number(stdout, value);
}

static void json_field_count(const char *name, unsigned long long value)
{
    printf(",\n  \"%s\": %llu", name, value);
}

static void print_info_json(const char *path, const bk_filter *filter, const bk_stats *s)
{
    printf("{\n  \"file\": ");
    json_string(stdout, path);
    printf(",\n  \"kind\": \"%s\"", bk_kind_name(s->kind));
    printf(",\n  \"static\": %s", bk_kind_is_static(s->kind) ? "true" : "false");
    json_field_count("bits", s->bits);
    json_field_count("hashes", s->hashes);
    json_field_count("bytes", s->bytes);
    json_field_count("capacity", s->capacity);
    json_field_number("target_fpr", s->target_fpr);
    json_field_count("keys_added", s->keys_added);
    json_field_number("keys_estimated", s->keys_estimated);
    json_field_number("fill_ratio", s->fill_ratio);
    json_field_number("design_fill_ratio", s->design_fill_ratio);
    json_field_number("current_fpr", s->current_fpr);
    json_field_number("bits_per_key", s->bits_per_key);
    json_field_number("lower_bound_bits", bk_lower_bound_bits(s->target_fpr));
    json_field_number("space_ratio", space_ratio(s));
    printf(",\n  \"status\": \"%s\"", status_word(s));
    if (has_load_factor(s))
        json_field_number("load_factor", s->load_factor);
    if (has_saturated_counters(s))
        json_field_count("saturated_counters", s->saturated_counters);
    if (has_filters(s))
        json_field_count("filters", s->filters);
    if (has_fingerprint_bits(s))
        json_field_count("fingerprint_bits", s->fingerprint_bits);
    printf(",\n  \"hash_algorithm\": \"%s\"", bk_hash_algorithm_name(s->hash_algorithm));
    if (s->hash_algorithm == BK_HASH_SIPHASH)
        printf(",\n  \"key_id\": \"%016llx\"", (unsigned long long)s->seed);
    else
        json_field_count("seed", s->seed);
    print_sub_filters_json(filter);
    printf("\n}\n");
}

int cli_info(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(argc, argv, OPT_BIT(OPT_JSON) | OPT_BIT(OPT_KEY_FILE), &args);
    if (result < 0)
        return cli_usage(info_usage);
    if (result != CLI_OK)
        return result;
    bk_filter *filter = NULL;
    if (args.positional_count != 1)
        result = cli_usage_error(info_usage, args.positional_count == 0 ? "info needs a FILE"
                                                                        : "info takes one FILE");
    else
        result = cli_load(&args, args.positional[0], false, &filter);
    if (result == CLI_OK) {
        bk_stats stats;
        bk_filter_stats(filter, &stats);
        if (args.json)
            print_info_json(args.positional[0], filter, &stats);
        else
            print_info_text(args.positional[0], filter, &stats);
        result = output_finish();
    }
    bk_filter_free(filter);
    cli_args_free(&args);
    return result;
}
