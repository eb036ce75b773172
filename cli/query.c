/*
 * cli/query.c -- `bloomkit query FILE [KEY...]`, `bloomkit count FILE
 * [KEY...]` and `bloomkit info FILE`.
 *
 * query: keys in batches of CLI_BATCH through bk_filter_contains_batch
 * (hash all, then probe with prefetch); the selected keys (present, or
 * absent with -v) are written to a 256 KiB-buffered stdout, each followed
 * by the input's delimiter.  Exit status as grep: 0 if any key may be
 * present, 1 if none is, 2 on error.  --mmap maps the file instead of
 * reading it: the first answer comes without reading a multi-gigabyte
 * file, but the checksum is not verified.  With --field N the records are
 * rows: the N-th field of each (cut with memchr, no copy) is the key, and
 * the whole row is printed -- a semi-join of a table against a filter of
 * another table's keys (examples/semijoin/).
 *
 * count: for the kinds that count (counting, cuckoo, quotient), one line
 * "COUNT<TAB>KEY" per key, through bk_filter_count.
 *
 * info: the bk_stats of the filter, as "name: value" lines or one JSON
 * object whose field names are the bk_stats names (plus a quotient
 * filter's shape and counts, bloomkit/quotient.h).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char query_usage[] =
    "usage: bloomkit query FILE [-v] [-c] [-0] [-q] [--mmap] [--key-file F] [KEY...] [< KEYS]\n"
    "       bloomkit query FILE --field N [--delimiter C] [-v] [-c] [-0] [< ROWS]\n"
    "\n"
    "Prints the keys (the KEY operands, or else the lines of standard input; -0:\n"
    "NUL-terminated) that may be in the filter in FILE.  -v (--absent) prints\n"
    "the keys that are certainly absent instead; -c (--count) prints only how\n"
    "many keys would have been printed.  Exit status 0 if any key may be present,\n"
    "1 if none is, 2 on error.  --mmap maps FILE instead of reading it (fast\n"
    "first answer, checksum not verified).  FILE '-' reads the filter from\n"
    "standard input (keys then as operands).\n"
    "--field N: the input lines (or -0 records) are rows, and their N-th field\n"
    "(from 1; fields separated by tabs, or by C with --delimiter C; 'tab' for\n"
    "a tab) is the key: prints the whole rows whose key may be present (-v:\n"
    "certainly absent; a row with fewer than N fields has no key, so it counts\n"
    "as absent).\n";

static const char count_usage[] =
    "usage: bloomkit count FILE [-0] [-q] [--key-file F] [KEY...] [< KEYS]\n"
    "\n"
    "Prints, for each key (the KEY operands, or else the lines of standard input;\n"
    "-0: NUL-terminated), how many times the filter in FILE holds it, as\n"
    "COUNT<TAB>KEY: at least the times it was added (more when another key shares\n"
    "its fingerprint).  For the kinds that count: counting, cuckoo, quotient.\n"
    "Exit status 0 if any count is above zero, 1 if none is, 2 on error.\n";

static const char info_usage[] =
    "usage: bloomkit info FILE [--json] [--key-file F]\n"
    "       bloomkit info --prometheus FILE... [--key-file F]\n"
    "\n"
    "Describes the filter in FILE: kind, m, k, bytes, capacity, design FPR, keys\n"
    "added, keys estimated from the fill, fill ratio, current estimated FPR,\n"
    "bits per key, and status: ok, or past design point (the FPR is above its\n"
    "design and rising).  --json prints one JSON object with the fields kind,\n"
    "bits, hashes, bytes, capacity, target_fpr, keys_added, keys_estimated,\n"
    "fill_ratio, design_fill_ratio, current_fpr, bits_per_key, status,\n"
    "hash_algorithm, seed (or key_id) and the kind's own fields.\n"
    "--prometheus prints the statistics of every FILE in the Prometheus text\n"
    "format (gauges bloomkit_filter_* labelled by file and kind), for\n"
    "node_exporter's textfile collector.\n";

/* ------------------------------------------------------------------------ */
/* query                                                                    */
/* ------------------------------------------------------------------------ */

/* Marks a record without the field asked for (its key is certainly absent). */
#define NO_FIELD SIZE_MAX

/* The field-th field (1-based) of `record`, fields separated by
 * `delimiter`; false when the record has fewer fields. */
static bool record_field(const bk_key *record, unsigned field, char delimiter, bk_key *out)
{
    const char *start = record->data, *end = start + record->len;
    for (unsigned i = 1; i < field; i++) {
        const char *next = memchr(start, delimiter, (size_t)(end - start));
        if (next == NULL)
            return false;
        start = next + 1;
    }
    const char *stop = memchr(start, delimiter, (size_t)(end - start));
    out->data = start;
    out->len = (size_t)((stop ? stop : end) - start);
    return true;
}

/* --field: cuts each record's field into fields[] (those that have one,
 * in order) and sets field_index[i] to record i's place there, or
 * NO_FIELD.  Returns how many fields were cut. */
static size_t cut_fields(const cli_args *args, const bk_key *records, size_t count,
                         bk_key *fields, size_t *field_index)
{
    char delimiter = args->given[OPT_DELIMITER] ? args->field_delimiter : '\t';
    size_t cut = 0;
    for (size_t i = 0; i < count; i++) {
        field_index[i] = NO_FIELD;
        if (record_field(&records[i], args->field, delimiter, &fields[cut]))
            field_index[i] = cut++;
    }
    return cut;
}

/* The records (keys, or with --field whole lines) that may be present --
 * or with -v certainly absent -- are printed; *present_total counts the
 * ones that may be present. */
static int query_records(const cli_args *args, const bk_filter *filter, key_reader *reader,
                         uint64_t *present_total)
{
    bk_key *records = malloc(CLI_BATCH * sizeof *records);
    bool *present = malloc(CLI_BATCH * sizeof *present);
    bk_key *fields = args->field ? malloc(CLI_BATCH * sizeof *fields) : NULL;
    size_t *field_index = args->field ? malloc(CLI_BATCH * sizeof *field_index) : NULL;
    if (records == NULL || present == NULL || (args->field && (!fields || !field_index))) {
        free(records);
        free(present);
        free(fields);
        free(field_index);
        return cli_error("out of memory");
    }
    progress bar;
    /* Not over keys printed to the same terminal. */
    bool keys_to_terminal = !args->count_only && isatty(STDOUT_FILENO);
    progress_start(&bar, "queried", args->quiet || keys_to_terminal);
    uint64_t selected = 0;
    size_t count;
    while ((count = key_reader_next(reader, records, CLI_BATCH)) > 0) {
        const bk_key *keys = records;
        size_t key_count = count;
        if (args->field) {
            key_count = cut_fields(args, records, count, fields, field_index);
            keys = fields;
        }
        *present_total += bk_filter_contains_batch(filter, keys, key_count, present);
        for (size_t i = 0; i < count; i++) {
            bool hit = !args->field ? present[i]
                                    : field_index[i] != NO_FIELD && present[field_index[i]];
            if (hit == args->invert)
                continue;
            selected++;
            if (!args->count_only)
                output_key(&records[i], reader->delimiter);
        }
        progress_update(&bar, reader->keys_read);
    }
    progress_finish(&bar);
    free(records);
    free(present);
    free(fields);
    free(field_index);
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
                               OPT_BIT(OPT_COUNT) | OPT_BIT(OPT_MMAP) | OPT_BIT(OPT_KEY_FILE) |
                               OPT_BIT(OPT_FIELD) | OPT_BIT(OPT_DELIMITER),
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
    else if (args.given[OPT_DELIMITER] && !args.field)
        result = cli_usage_error(query_usage, "--delimiter needs --field");
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
        result = query_records(&args, filter, &reader, &present);
        key_reader_free(&reader);
        if (result == CLI_OK && present == 0)
            result = CLI_NO;
    }
    bk_filter_free(filter);
    cli_args_free(&args);
    return result;
}

/* ------------------------------------------------------------------------ */
/* count                                                                    */
/* ------------------------------------------------------------------------ */

static int count_keys(const bk_filter *filter, key_reader *reader, uint64_t *nonzero)
{
    bk_key *keys = malloc(CLI_BATCH * sizeof *keys);
    if (keys == NULL)
        return cli_error("out of memory");
    size_t count;
    int result = CLI_OK;
    while (result == CLI_OK && (count = key_reader_next(reader, keys, CLI_BATCH)) > 0) {
        for (size_t i = 0; i < count; i++) {
            uint64_t times = 0;
            bk_status status = bk_filter_count(filter, keys[i].data, keys[i].len, &times);
            if (status != BK_OK) {
                result = status == BK_EUNSUPPORTED
                             ? cli_error("a %s filter does not count keys (counting, cuckoo "
                                         "and quotient filters do)",
                                         bk_kind_name(bk_filter_kind(filter)))
                             : cli_error("cannot count: %s", bk_strerror(status));
                break;
            }
            *nonzero += times != 0;
            printf("%llu\t", (unsigned long long)times);
            output_key(&keys[i], reader->delimiter);
        }
    }
    free(keys);
    if (result != CLI_OK)
        return result;
    if (reader->failed)
        return key_reader_error(reader);
    return output_finish();
}

int cli_count(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(argc, argv,
                           OPT_BIT(OPT_NUL) | OPT_BIT(OPT_QUIET) | OPT_BIT(OPT_KEY_FILE), &args);
    if (result < 0)
        return cli_usage(count_usage);
    if (result != CLI_OK)
        return result;
    size_t operand_count = args.positional_count > 0 ? (size_t)args.positional_count - 1 : 0;
    bk_filter *filter = NULL;
    if (args.positional_count == 0)
        result = cli_usage_error(count_usage, "count needs a FILE");
    else
        result = cli_load(&args, args.positional[0], false, &filter);
    if (result == CLI_OK) {
        output_init();
        key_reader reader;
        key_reader_init(&reader, args.positional + 1, operand_count, args.nul, args.quiet);
        uint64_t nonzero = 0;
        result = count_keys(filter, &reader, &nonzero);
        key_reader_free(&reader);
        if (result == CLI_OK && nonzero == 0)
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
    return s->kind == BK_KIND_CUCKOO || s->kind == BK_KIND_QUOTIENT || s->load_factor != 0;
}
static bool has_saturated_counters(const bk_stats *s)
{
    return s->kind == BK_KIND_COUNTING || s->saturated_counters != 0;
}
static bool has_filters(const bk_stats *s)
{
    return s->kind == BK_KIND_SCALABLE || s->kind == BK_KIND_WINDOW || s->filters != 0;
}
static bool has_fingerprint_bits(const bk_stats *s) { return s->fingerprint_bits != 0; }

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
        printf("%s\n    { \"bits\": %llu, \"hashes\": %u, \"capacity\": %llu, \"keys_added\": "
               "%llu, "
               "\"fill_ratio\": ",
               i ? "," : "", (unsigned long long)sub.bits, sub.hashes,
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
    bk_quotient_info q;
    if (bk_quotient_get_info(filter, &q) == BK_OK) {
        printf("slots:             %llu home (2^%u) + %llu overflow, %llu used\n",
               (unsigned long long)q.home_slots, q.log2_slots,
               (unsigned long long)(q.slots - q.home_slots), (unsigned long long)q.used_slots);
        printf("remainder bits:    %u (fingerprint %u bits)\n", q.remainder_bits,
               q.fingerprint_bits);
        printf("counted keys:      %llu (%llu distinct fingerprints)\n",
               (unsigned long long)q.counted, (unsigned long long)q.fingerprints);
        printf("auto-grow:         %s\n", q.auto_grow ? "yes" : "no");
    }
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
    bk_quotient_info q;
    if (bk_quotient_get_info(filter, &q) == BK_OK) {
        json_field_count("log2_slots", q.log2_slots);
        json_field_count("home_slots", q.home_slots);
        json_field_count("slots", q.slots);
        json_field_count("used_slots", q.used_slots);
        json_field_count("remainder_bits", q.remainder_bits);
        json_field_count("counted_keys", q.counted);
        json_field_count("fingerprints", q.fingerprints);
        printf(",\n  \"auto_grow\": %s", q.auto_grow ? "true" : "false");
    }
    print_sub_filters_json(filter);
    printf("\n}\n");
}

int cli_info(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(
        argc, argv, OPT_BIT(OPT_JSON) | OPT_BIT(OPT_KEY_FILE) | OPT_BIT(OPT_PROMETHEUS), &args);
    if (result < 0)
        return cli_usage(info_usage);
    if (result != CLI_OK)
        return result;
    bk_filter *filter = NULL;
    if (args.prometheus && args.json)
        result = cli_usage_error(info_usage, "give either --json or --prometheus");
    else if (args.prometheus && args.positional_count > 0)
        result = cli_info_prometheus(&args, args.positional, args.positional_count);
    else if (args.positional_count != 1)
        result = cli_usage_error(info_usage, args.positional_count == 0 ? "info needs a FILE"
                                                                        : "info takes one FILE");
    else
        result = cli_load(&args, args.positional[0], false, &filter);
    if (result == CLI_OK && filter != NULL) {
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
