/*
 * bench/report.c -- what bloomkit-bench prints (bench/run.h).
 *
 * stdout: a header naming the machine and the settings, the subjects and
 * the design line, then per block (key type, n) two tables:
 *
 *   kind  m (bits)  k  bits/key  FPR %  pred %  <insert forms>  huge MiB  note
 *   kind  +/-<query form>... | rd dep rd ind rd own rd key | +/-<x>/rd... | lb/+/-<x>...
 *
 * The columns come from the tables of bench/forms.c.  x/rd is a batch
 * form's time over one random line read (rd own where measured, else
 * rd ind; docs/PERFORMANCE.md says why each), lb/x libbloom's one key per
 * call over ours.
 *
 * CSV (--csv): the header as # comments, then one line per figure,
 * keytype,n,kind,metric,value, with the metric named as below; a figure
 * not measured has no line.  scripts/bench-targets.sh and
 * scripts/plot-bench.sh read it.
 *
 *   ok m_bits k bytes bits_per_key fpr fpr_predicted false_negatives
 *   <insert metric>_ns                  insert_single, insert_batch, build
 *   pos_<query metric>_ns, neg_...      one per query form
 *   huge_mb read_dependent_ns read_independent_ns read_own_ns read_keyed_ns
 *   pos_<query metric>_per_read, neg_   the batch forms over the read floor
 *   speedup_pos_<query metric>, neg_    libbloom's raw time over ours (raw, batch)
 *   create_us                           the design line (keytype none, n 1000)
 */
#define _POSIX_C_SOURCE 200809L /* gmtime_r, uname, sysconf */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "run.h"

#ifndef BENCH_C_FLAGS
#define BENCH_C_FLAGS "unknown"
#endif

static const char side_sign[SIDES] = { '+', '-' };
static const char *const side_metric[SIDES] = { "pos", "neg" };

void read_first_match(const char *path, const char *prefix, char *out, size_t size)
{
    snprintf(out, size, "unknown");
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, file) != NULL) {
        if (prefix == NULL || strncmp(line, prefix, strlen(prefix)) == 0) {
            char *value = prefix ? strchr(line, ':') : line;
            value = value ? value + (prefix ? 1 : 0) : line;
            while (*value == ' ' || *value == '\t')
                value++;
            size_t length = strcspn(value, "\n");
            if (length >= size)
                length = size - 1;
            memcpy(out, value, length);
            out[length] = '\0';
            break;
        }
    }
    fclose(file);
}

/* ---------------------------------------------------------------- header */

void report_header(const options *opts, FILE *csv, int pinned_cpu, bool memory_locked)
{
    char cpu[256], memory[128], thp[128], date[64];
    read_first_match("/proc/cpuinfo", "model name", cpu, sizeof cpu);
    read_first_match("/proc/meminfo", "MemTotal", memory, sizeof memory);
    read_first_match("/sys/kernel/mm/transparent_hugepage/enabled", NULL, thp, sizeof thp);
    struct utsname uts;
    if (uname(&uts) != 0)
        memset(&uts, 0, sizeof uts);
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &utc);
    char lines[8][1024];
    int n = 0;
    snprintf(lines[n++], sizeof lines[0], "bloomkit-bench %s, %s", BLOOMKIT_VERSION_STRING,
             date);
    char pinned[64] = "not pinned (the scheduler may move it)";
    if (pinned_cpu >= 0)
        snprintf(pinned, sizeof pinned, "run pinned to CPU %d", pinned_cpu);
    snprintf(lines[n++], sizeof lines[0], "cpu: %s; %ld online; %s; memory %s", cpu,
             sysconf(_SC_NPROCESSORS_ONLN), pinned, memory);
    snprintf(lines[n++], sizeof lines[0], "kernel: %s %s; transparent huge pages: %s",
             uts.sysname, uts.release, thp);
    snprintf(lines[n++], sizeof lines[0], "compiler: %s; flags: %s", __VERSION__, BENCH_C_FLAGS);
    snprintf(lines[n++], sizeof lines[0],
             "libbloom: %s; BLOOMKIT_PORTABLE=%s BLOOMKIT_NO_HUGEPAGE=%s",
             libbloom_available() ? libbloom_version_string() : "not built",
             getenv("BLOOMKIT_PORTABLE") ? getenv("BLOOMKIT_PORTABLE") : "(unset)",
             getenv("BLOOMKIT_NO_HUGEPAGE") ? getenv("BLOOMKIT_NO_HUGEPAGE") : "(unset)");
    snprintf(lines[n++], sizeof lines[0],
             "settings: fpr %g, median of %d%s, up to %zu present and %zu absent queries%s",
             opts->fpr, opts->reps, opts->rebuild ? " (rebuilt each time)" : "", opts->queries,
             opts->absent, opts->quick ? ", --quick" : "");
    snprintf(lines[n++], sizeof lines[0], "memory: %s",
             memory_locked ? "locked as touched (mlockall MCL_ONFAULT): reclaim cannot evict it"
                           : "not locked: the kernel may reclaim it between passes");
    for (int i = 0; i < n; i++) {
        printf("%s\n", lines[i]);
        if (csv != NULL)
            fprintf(csv, "# %s\n", lines[i]);
    }
    if (csv != NULL)
        fprintf(csv, "keytype,n,kind,metric,value\n");
}

void report_subjects(const subject *subjects, size_t count)
{
    printf("kinds:");
    for (size_t i = 0; i < count; i++)
        printf(" %s", subjects[i].name);
    printf("\n");
}

void report_design_times(const bench_run *run)
{
    printf("design: us per create for %d keys at FPR %g:", DESIGN_KEYS, run->opts->fpr);
    for (size_t i = 0; i < run->subject_count; i++) {
        const subject *s = &run->subjects[i];
        if (s->is_libbloom || s->no_hugepage || bk_kind_is_static(s->kind))
            continue;
        double us = design_us(s, run->opts->fpr);
        printf(" %s %.1f", s->name, us);
        if (run->csv != NULL && !isnan(us))
            fprintf(run->csv, "none,%d,%s,create_us,%.6g\n", DESIGN_KEYS, s->name, us);
    }
    printf("\n");
}

/* ---------------------------------------------------------------- ratios */

static const row *find_row(const bench_block *b, const char *name)
{
    for (size_t i = 0; i < b->count; i++)
        if (strcmp(b->rows[i].name, name) == 0 && b->rows[i].bytes != 0)
            return &b->rows[i];
    return NULL;
}

/* The keyed read limit for the block's key length. */
static double keyed_read_ns(const bench_block *b, const row *r)
{
    return r->limits.keyed_ns[b->type == KEY_INT64 ? 0 : 1];
}

/* A batch form's time over the read floor: with rd own, the median over
 * repetitions of each repetition's time over the read timed right after
 * it (the memory's speed drifts between repetitions; a ratio of two
 * medians can pair a fast pass with a slow read); else the median time
 * over rd ind. */
static double per_read(const row *r, side s, query_form form)
{
    if (r->own_read_ns > 0 && !isnan(r->per_own_read[s][form]))
        return r->per_own_read[s][form];
    return r->query_ns[s][form] / r->limits.independent_ns;
}

/* libbloom's one key per call over our `form`, or NAN without libbloom. */
static double peer_speedup(const row *peer, const row *r, side s, query_form form)
{
    return peer ? peer->query_ns[s][FORM_RAW] / r->query_ns[s][form] : NAN;
}

/* ---------------------------------------------------------------- tables */

static void print_number(double value, int width, int decimals)
{
    if (isnan(value) || isinf(value))
        printf(" %*s", width, "-");
    else
        printf(" %*.*f", width, decimals, value);
}

/* A heading: sign (or none) and text, right-aligned in `width`. */
static void print_heading(const char *prefix, char sign, const char *text, const char *suffix,
                          int width)
{
    char heading[32];
    snprintf(heading, sizeof heading, "%s%c%s%s", prefix, sign, text, suffix);
    printf(" %*s", width, heading);
}

static void print_count(uint64_t n)
{
    char digits[32], grouped[48];
    int length = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    int out = 0;
    for (int i = 0; i < length; i++) {
        if (i > 0 && (length - i) % 3 == 0)
            grouped[out++] = ',';
        grouped[out++] = digits[i];
    }
    grouped[out] = '\0';
    printf("%s", grouped);
}

/* Width of a ratio column: its heading, at least 6. */
static int ratio_width(const char *heading_prefix, const char *abbrev, const char *suffix)
{
    int width = (int)(strlen(heading_prefix) + 1 + strlen(abbrev) + strlen(suffix));
    return width < 6 ? 6 : width;
}

/* The first table: size, accuracy, inserts. */
static void print_size_table(const bench_block *b)
{
    printf("%-12s %12s %3s %8s %7s %7s", "kind", "m (bits)", "k", "bits/key", "FPR %", "pred %");
    for (int f = 0; f < INSERT_FORM_COUNT; f++)
        printf(" %8s", insert_forms[f].column);
    printf(" %8s  %s\n", "huge MiB", "note");
    for (size_t i = 0; i < b->count; i++) {
        const row *r = &b->rows[i];
        printf("%-12s %12llu %3u", r->name, (unsigned long long)r->bits, r->hashes);
        print_number(r->bits_per_key, 8, 2);
        print_number(r->fpr * 100, 7, 3);
        print_number(r->predicted_fpr * 100, 7, 3);
        for (int f = 0; f < INSERT_FORM_COUNT; f++)
            print_number(r->insert_ns[f], 8, 1);
        print_number(r->huge_mb, 8, 0);
        printf("  %s\n", r->note);
    }
}

/* The second table: every query form, the limits, the ratios. */
static void print_query_table(const bench_block *b)
{
    const row *peer = find_row(b, "libbloom");
    printf("\nns per query%s; rd dep/ind: one random line read in a buffer of the filter's size;"
           " rd own: the same\nindependent read in the filter's own bit array, between its"
           " query passes; rd key: one key hashed and\nits line read; x/rd: batch time over"
           " rd own (rd ind where rd own is -)\n",
           peer ? "; lb/x: libbloom's time over ours (x faster)" : "");
    printf("%-12s", "kind");
    for (int f = 0; f < QUERY_FORM_COUNT; f++)
        for (int s = 0; s < SIDES; s++)
            print_heading("", side_sign[s], query_forms[f].column, "", query_forms[f].width);
    printf(" | %7s %7s %6s %6s |", "rd dep", "rd ind", "rd own", "rd key");
    for (int f = 0; f < QUERY_FORM_COUNT; f++)
        if (query_forms[f].per_read)
            for (int s = 0; s < SIDES; s++)
                print_heading("", side_sign[s], query_forms[f].abbrev, "/rd",
                              ratio_width("", query_forms[f].abbrev, "/rd"));
    printf(" |");
    for (int f = 0; f < QUERY_FORM_COUNT; f++)
        if (query_forms[f].vs_peer)
            for (int s = 0; s < SIDES; s++)
                print_heading("lb/", side_sign[s], query_forms[f].abbrev, "",
                              ratio_width("lb/", query_forms[f].abbrev, ""));
    printf("\n");
    for (size_t i = 0; i < b->count; i++) {
        const row *r = &b->rows[i];
        printf("%-12s", r->name);
        for (int f = 0; f < QUERY_FORM_COUNT; f++)
            for (int s = 0; s < SIDES; s++)
                print_number(r->query_ns[s][f], query_forms[f].width, 1);
        printf(" |");
        print_number(r->limits.dependent_ns, 7, 1);
        print_number(r->limits.independent_ns, 7, 1);
        print_number(r->own_read_ns, 6, 1);
        print_number(keyed_read_ns(b, r), 6, 1);
        printf(" |");
        for (int f = 0; f < QUERY_FORM_COUNT; f++)
            if (query_forms[f].per_read)
                for (int s = 0; s < SIDES; s++)
                    print_number(per_read(r, (side)s, (query_form)f),
                                 ratio_width("", query_forms[f].abbrev, "/rd"), 2);
        printf(" |");
        for (int f = 0; f < QUERY_FORM_COUNT; f++)
            if (query_forms[f].vs_peer)
                for (int s = 0; s < SIDES; s++)
                    print_number(peer_speedup(peer, r, (side)s, (query_form)f),
                                 ratio_width("lb/", query_forms[f].abbrev, ""), 2);
        printf("\n");
    }
}

/* ------------------------------------------------------------------- CSV */

static void csv_value(FILE *csv, const bench_block *b, const char *kind, const char *metric,
                      double value)
{
    if (isnan(value) || isinf(value))
        return;
    fprintf(csv, "%s,%llu,%s,%s,%.6g\n", key_type_name(b->type), (unsigned long long)b->n, kind,
            metric, value);
}

/* A whole number, every digit. */
static void csv_count(FILE *csv, const bench_block *b, const char *kind, const char *metric,
                      uint64_t value)
{
    fprintf(csv, "%s,%llu,%s,%s,%llu\n", key_type_name(b->type), (unsigned long long)b->n, kind,
            metric, (unsigned long long)value);
}

/* `format` with one %s (the side) and one %s (the form's metric). */
static void csv_side_value(FILE *csv, const bench_block *b, const char *kind, const char *format,
                           side s, query_form form, double value)
{
    char metric[64];
    snprintf(metric, sizeof metric, format, side_metric[s], query_forms[form].metric);
    csv_value(csv, b, kind, metric, value);
}

static void csv_row(FILE *csv, const bench_block *b, const row *r, const row *peer)
{
    const char *k = r->name;
    csv_count(csv, b, k, "ok", r->ok);
    csv_count(csv, b, k, "m_bits", r->bits);
    csv_count(csv, b, k, "k", r->hashes);
    csv_count(csv, b, k, "bytes", r->bytes);
    csv_value(csv, b, k, "bits_per_key", r->bits_per_key);
    csv_value(csv, b, k, "fpr", r->fpr);
    csv_value(csv, b, k, "fpr_predicted", r->predicted_fpr);
    csv_count(csv, b, k, "false_negatives", r->false_negatives);
    for (int f = 0; f < INSERT_FORM_COUNT; f++) {
        char metric[64];
        snprintf(metric, sizeof metric, "%s_ns", insert_forms[f].metric);
        csv_value(csv, b, k, metric, r->insert_ns[f]);
    }
    for (int f = 0; f < QUERY_FORM_COUNT; f++)
        for (int s = 0; s < SIDES; s++)
            csv_side_value(csv, b, k, "%s_%s_ns", (side)s, (query_form)f, r->query_ns[s][f]);
    csv_value(csv, b, k, "huge_mb", r->huge_mb);
    csv_value(csv, b, k, "read_dependent_ns", r->limits.dependent_ns);
    csv_value(csv, b, k, "read_independent_ns", r->limits.independent_ns);
    csv_value(csv, b, k, "read_own_ns", r->own_read_ns);
    csv_value(csv, b, k, "read_keyed_ns", keyed_read_ns(b, r));
    for (int f = 0; f < QUERY_FORM_COUNT; f++)
        if (query_forms[f].per_read)
            for (int s = 0; s < SIDES; s++)
                csv_side_value(csv, b, k, "%s_%s_per_read", (side)s, (query_form)f,
                               per_read(r, (side)s, (query_form)f));
    for (int f = 0; f < QUERY_FORM_COUNT; f++)
        if (query_forms[f].vs_peer)
            for (int s = 0; s < SIDES; s++)
                csv_side_value(csv, b, k, "speedup_%s_%s", (side)s, (query_form)f,
                               peer_speedup(peer, r, (side)s, (query_form)f));
}

void report_block(const bench_block *b, FILE *csv)
{
    printf("\n== %s keys, n = ", key_type_name(b->type));
    print_count(b->n);
    printf(" (queries: ");
    print_count(b->sample_count);
    printf(" present, ");
    print_count(b->absent_count);
    printf(" absent)\n\n");
    print_size_table(b);
    print_query_table(b);
    fflush(stdout);
    if (csv == NULL)
        return;
    const row *peer = find_row(b, "libbloom");
    for (size_t i = 0; i < b->count; i++)
        csv_row(csv, b, &b->rows[i], peer);
    fflush(csv);
}
