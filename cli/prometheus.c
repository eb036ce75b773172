/*
 * cli/prometheus.c -- `bloomkit info --prometheus FILE...`: the filters'
 * statistics in the Prometheus text exposition format, for node_exporter's
 * textfile collector (docs/CLI.md shows the cron line and an alert rule).
 *
 * The format (version 0.0.4, "text/plain; version=0.0.4"), as this file
 * writes it:
 *
 *     # HELP bloomkit_filter_fill_ratio Fraction of the filter's bits ...
 *     # TYPE bloomkit_filter_fill_ratio gauge
 *     bloomkit_filter_fill_ratio{file="/srv/a.bkf",kind="bloom"} 0.3935
 *     bloomkit_filter_fill_ratio{file="/srv/b.bkf",kind="fuse8"} 0.8123
 *     # HELP bloomkit_filter_design_fill_ratio ...
 *
 * One family after the other, each opened by its HELP and TYPE lines and
 * then one sample per filter, so that every family's samples are together
 * (the format requires it).  Label values escape backslash, double quote
 * and newline as \\, \" and \n; the format wants UTF-8, so a path's bytes
 * that are not valid UTF-8 are written as U+FFFD.  Values are decimal
 * floats, or NaN / +Inf / -Inf.
 *
 * A file that cannot be loaded is reported on stderr (and the exit status
 * is 2), but the others are still written, and the file gets
 * bloomkit_filter_load_success 0 so that a dashboard sees it.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* One metric family: its name, help text, and how to read it from stats. */
typedef struct metric_family {
    const char *name;
    const char *help;
    double (*value)(const bk_stats *stats);
} metric_family;

static double fill_ratio(const bk_stats *s) { return s->fill_ratio; }
static double design_fill_ratio(const bk_stats *s) { return s->design_fill_ratio; }
static double keys_estimated(const bk_stats *s) { return s->keys_estimated; }
static double keys_added(const bk_stats *s) { return (double)s->keys_added; }
static double capacity(const bk_stats *s) { return (double)s->capacity; }
static double current_fpr(const bk_stats *s) { return s->current_fpr; }
static double design_fpr(const bk_stats *s) { return s->target_fpr; }
static double memory_bytes(const bk_stats *s) { return (double)s->bytes; }
static double past_design_point(const bk_stats *s) { return s->past_design_point ? 1 : 0; }

static const metric_family families[] = {
    { "bloomkit_filter_fill_ratio", "Fraction of the filter's bits (or slots) that are set.",
      fill_ratio },
    { "bloomkit_filter_design_fill_ratio",
      "Fill ratio the filter reaches at its design capacity.", design_fill_ratio },
    { "bloomkit_filter_keys_estimated", "Number of keys estimated from the fill.",
      keys_estimated },
    { "bloomkit_filter_keys_added", "Adds that reported a new key.", keys_added },
    { "bloomkit_filter_capacity_keys", "Number of keys the filter was designed for.", capacity },
    { "bloomkit_filter_fpr", "False-positive rate estimated from the fill.", current_fpr },
    { "bloomkit_filter_design_fpr", "False-positive rate the filter was designed for.",
      design_fpr },
    { "bloomkit_filter_bytes", "Bytes of filter memory.", memory_bytes },
    { "bloomkit_filter_past_design_point",
      "1 when the fill is beyond the design point (the FPR is above its design and rising).",
      past_design_point },
};

#define FAMILY_COUNT (sizeof families / sizeof families[0])

/* Length of the valid UTF-8 sequence at text[0..available), 0 if invalid
 * (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_sequence_length(const unsigned char *text, size_t available)
{
    unsigned char lead = text[0];
    size_t length;
    unsigned char low = 0x80, high = 0xBF; /* allowed range of the second byte */
    if (lead < 0x80)
        return 1;
    else if (lead >= 0xC2 && lead <= 0xDF)
        length = 2;
    else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0)
            low = 0xA0;
        else if (lead == 0xED)
            high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0)
            low = 0x90;
        else if (lead == 0xF4)
            high = 0x8F;
    } else
        return 0;
    if (available < length || text[1] < low || text[1] > high)
        return 0;
    for (size_t i = 2; i < length; i++)
        if (text[i] < 0x80 || text[i] > 0xBF)
            return 0;
    return length;
}

/* A label value between double quotes, escaped as the format requires. */
static void print_label_value(const char *value)
{
    const unsigned char *text = (const unsigned char *)value;
    size_t length = strlen(value);
    putchar('"');
    for (size_t i = 0; i < length;) {
        size_t sequence = utf8_sequence_length(text + i, length - i);
        if (sequence == 0) {
            fputs("\xEF\xBF\xBD", stdout); /* U+FFFD REPLACEMENT CHARACTER */
            i++;
            continue;
        }
        if (text[i] == '\\')
            fputs("\\\\", stdout);
        else if (text[i] == '"')
            fputs("\\\"", stdout);
        else if (text[i] == '\n')
            fputs("\\n", stdout);
        else
            fwrite(text + i, 1, sequence, stdout);
        i += sequence;
    }
    putchar('"');
}

static void print_value(double value)
{
    if (isnan(value))
        fputs(" NaN\n", stdout);
    else if (isinf(value))
        fputs(value > 0 ? " +Inf\n" : " -Inf\n", stdout);
    else
        printf(" %.10g\n", value);
}

static void print_family_header(const char *name, const char *help)
{
    printf("# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void print_sample(const char *name, const char *path, const bk_stats *stats, double value)
{
    printf("%s{file=", name);
    print_label_value(path);
    if (stats != NULL) {
        fputs(",kind=", stdout);
        print_label_value(bk_kind_name(stats->kind));
    }
    putchar('}');
    print_value(value);
}

int cli_info_prometheus(const cli_args *args, char **paths, int path_count)
{
    bk_stats *stats = calloc((size_t)path_count, sizeof *stats);
    bool *loaded = calloc((size_t)path_count, sizeof *loaded);
    if (stats == NULL || loaded == NULL) {
        free(stats);
        free(loaded);
        return cli_error("out of memory");
    }
    int result = CLI_OK;
    for (int i = 0; i < path_count; i++) {
        bk_filter *filter = NULL;
        if (cli_load(args, paths[i], false, &filter) != CLI_OK) {
            result = CLI_ERROR;
            continue;
        }
        bk_filter_stats(filter, &stats[i]);
        loaded[i] = true;
        bk_filter_free(filter);
    }
    print_family_header("bloomkit_filter_load_success",
                        "1 when the filter file was read, 0 when it could not be.");
    for (int i = 0; i < path_count; i++)
        print_sample("bloomkit_filter_load_success", paths[i], NULL, loaded[i] ? 1 : 0);
    for (size_t f = 0; f < FAMILY_COUNT; f++) {
        print_family_header(families[f].name, families[f].help);
        for (int i = 0; i < path_count; i++)
            if (loaded[i])
                print_sample(families[f].name, paths[i], &stats[i],
                             families[f].value(&stats[i]));
    }
    free(stats);
    free(loaded);
    int written = output_finish();
    return result != CLI_OK ? result : written;
}
