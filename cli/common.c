/*
 * cli/common.c -- what every subcommand shares: the one-line error
 * messages, the option parser with its number checks, and reading and
 * writing filter files.
 *
 * Options: one table (option_specs) lists every option of every
 * subcommand; a subcommand passes the mask of those it accepts.  Each
 * value is checked as it is parsed, and a bad one is reported with the
 * option spelled the way the user spelled it:
 *
 *     bloomkit: -p must be between 0 and 1, got 2
 *
 * Numbers: counts take an optional decimal suffix (k, M, G, T: 10^3 ..
 * 10^12, so `-n 10M`) or scientific notation (`-n 1e6`); rates take an
 * optional '%' (`-p 1%` = 0.01).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */
/* ------------------------------------------------------------------------ */

int cli_error(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    fflush(stdout);
    fputs("bloomkit: ", stderr);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
    va_end(ap);
    return CLI_ERROR;
}

void cli_warning(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    fputs("bloomkit: warning: ", stderr);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_usage(const char *usage)
{
    fputs(usage, stdout);
    return CLI_OK;
}

int cli_usage_error(const char *usage, const char *problem)
{
    const char *end = strchr(usage, '\n');
    int length = end ? (int)(end - usage) : (int)strlen(usage);
    return cli_error("%s (%.*s)", problem, length, usage);
}

/* ------------------------------------------------------------------------ */
/* Numbers                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum whole_result { WHOLE_OK, WHOLE_BAD, WHOLE_TOO_LARGE } whole_result;

/* 1e6, 2.5e3: a real number that is whole. */
static whole_result parse_scientific(const char *text, uint64_t *out)
{
    char *end;
    double value = strtod(text, &end);
    if (*end != '\0' || !(value >= 0) || value != floor(value))
        return WHOLE_BAD;
    if (value >= 18446744073709551616.0) /* 2^64 */
        return WHOLE_TOO_LARGE;
    *out = (uint64_t)value;
    return WHOLE_OK;
}

/* A whole number: decimal with an optional suffix k/M/G/T (10^3..10^12),
 * 0x hexadecimal, or scientific notation with a whole value (1e6). */
static whole_result parse_whole(const char *text, uint64_t *out)
{
    if (text[0] < '0' || text[0] > '9')
        return WHOLE_BAD;
    errno = 0;
    char *end;
    unsigned long long value = strtoull(text, &end, 0);
    if (errno == ERANGE)
        return WHOLE_TOO_LARGE;
    if (*end == '.' || *end == 'e' || *end == 'E')
        return parse_scientific(text, out);
    uint64_t scale = 1;
    switch (*end) {
    case 'k':
    case 'K':
        scale = 1000ull;
        end++;
        break;
    case 'M':
        scale = 1000000ull;
        end++;
        break;
    case 'G':
        scale = 1000000000ull;
        end++;
        break;
    case 'T':
        scale = 1000000000000ull;
        end++;
        break;
    default: break;
    }
    if (*end != '\0')
        return WHOLE_BAD;
    if (value != 0 && scale > UINT64_MAX / value)
        return WHOLE_TOO_LARGE;
    *out = (uint64_t)value * scale;
    return WHOLE_OK;
}

static int parse_count(const char *option, const char *text, uint64_t min, uint64_t max,
                       uint64_t *out)
{
    uint64_t value = 0;
    whole_result parsed = parse_whole(text, &value);
    if (parsed == WHOLE_BAD)
        return cli_error("%s must be a whole number, got '%s'", option, text);
    if (value < min && parsed == WHOLE_OK)
        return cli_error("%s must be at least %llu, got %s", option, (unsigned long long)min,
                         text);
    if (value > max || parsed == WHOLE_TOO_LARGE)
        return cli_error("%s must be at most %llu, got %s", option, (unsigned long long)max,
                         text);
    *out = value;
    return CLI_OK;
}

static int parse_unsigned(const char *option, const char *text, unsigned min, unsigned max,
                          unsigned *out)
{
    uint64_t value;
    int result = parse_count(option, text, min, max, &value);
    if (result == CLI_OK)
        *out = (unsigned)value;
    return result;
}

/* A finite real number, with an optional trailing '%'. */
static int parse_real(const char *option, const char *text, double *out)
{
    errno = 0;
    char *end;
    double value = strtod(text, &end);
    if (end != text && *end == '%') {
        value /= 100;
        end++;
    }
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(value))
        return cli_error("%s must be a number, got '%s'", option, text);
    *out = value;
    return CLI_OK;
}

static int parse_fraction(const char *option, const char *text, double *out)
{
    if (parse_real(option, text, out) != CLI_OK)
        return CLI_ERROR;
    if (!(*out > 0 && *out < 1))
        return cli_error("%s must be between 0 and 1, got %s", option, text);
    return CLI_OK;
}

static int parse_at_least_one(const char *option, const char *text, double *out)
{
    if (parse_real(option, text, out) != CLI_OK)
        return CLI_ERROR;
    if (!(*out >= 1))
        return cli_error("%s must be at least 1, got %s", option, text);
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* Secret key file: 16 raw bytes, or 32 hex digits (trailing space allowed) */
/* ------------------------------------------------------------------------ */

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool decode_hex_key(const char *text, size_t length, uint8_t key[BK_SECRET_KEY_BYTES])
{
    while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == '\r' ||
                          text[length - 1] == ' ' || text[length - 1] == '\t'))
        length--;
    if (length != 2 * BK_SECRET_KEY_BYTES)
        return false;
    for (size_t i = 0; i < BK_SECRET_KEY_BYTES; i++) {
        int high = hex_value((unsigned char)text[2 * i]);
        int low = hex_value((unsigned char)text[2 * i + 1]);
        if (high < 0 || low < 0)
            return false;
        key[i] = (uint8_t)(high << 4 | low);
    }
    return true;
}

static int read_key_file(const char *option, const char *path, uint8_t key[BK_SECRET_KEY_BYTES])
{
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return cli_error("cannot read %s %s: %s", option, path, strerror(errno));
    char text[80];
    size_t length = fread(text, 1, sizeof text, file);
    bool read_error = ferror(file);
    fclose(file);
    if (read_error)
        return cli_error("cannot read %s %s", option, path);
    if (length == BK_SECRET_KEY_BYTES) {
        memcpy(key, text, BK_SECRET_KEY_BYTES);
        return CLI_OK;
    }
    if (length < sizeof text && decode_hex_key(text, length, key))
        return CLI_OK;
    return cli_error("%s %s must hold 16 raw bytes or 32 hex digits", option, path);
}

/* ------------------------------------------------------------------------ */
/* The option table                                                         */
/* ------------------------------------------------------------------------ */

typedef struct option_spec {
    cli_option_id id;
    char short_name; /* 0: long form only */
    const char *long_name;
    bool takes_value;
} option_spec;

static const option_spec option_specs[] = {
    { OPT_HELP, 'h', "help", false },
    { OPT_CAPACITY, 'n', "capacity", true },
    { OPT_FPR, 'p', "fpr", true },
    { OPT_BITS_PER_KEY, 0, "bits-per-key", true },
    { OPT_BITS, 'm', "bits", true },
    { OPT_HASHES, 'k', "hashes", true },
    { OPT_KIND, 0, "kind", true },
    { OPT_HASH, 0, "hash", true },
    { OPT_SEED, 0, "seed", true },
    { OPT_KEY_FILE, 0, "key-file", true },
    { OPT_FINGERPRINT_BITS, 0, "fingerprint-bits", true },
    { OPT_EXPANSION, 0, "expansion", true },
    { OPT_TIGHTENING, 0, "tightening", true },
    { OPT_MAX_FILTERS, 0, "max-filters", true },
    { OPT_WINDOW_KEYS, 0, "window-keys", true },
    { OPT_WINDOW_SECONDS, 0, "window-seconds", true },
    { OPT_GENERATIONS, 0, "generations", true },
    { OPT_FORCE, 'f', "force", false },
    { OPT_NUL, '0', "null", false },
    { OPT_QUIET, 'q', "quiet", false },
    { OPT_INVERT, 'v', "absent", false },
    { OPT_COUNT, 'c', "count", false },
    { OPT_JSON, 0, "json", false },
    { OPT_MMAP, 0, "mmap", false },
    { OPT_PARQUET, 0, "parquet", false },
    { OPT_HEADER, 0, "header", false },
    { OPT_OFFSET, 0, "offset", true },
    { OPT_NO_WAIT, 0, "no-wait", false },
    { OPT_REMAINDER_BITS, 0, "remainder-bits", true },
    { OPT_AUTO_GROW, 0, "auto-grow", false },
    { OPT_PROMETHEUS, 0, "prometheus", false },
    { OPT_FIELD, 0, "field", true },
    { OPT_DELIMITER, 0, "delimiter", true },
};

#define OPTION_SPEC_COUNT (sizeof option_specs / sizeof option_specs[0])

static const option_spec *find_short(char name, uint64_t allowed)
{
    for (size_t i = 0; i < OPTION_SPEC_COUNT; i++)
        if (option_specs[i].short_name == name && (allowed & OPT_BIT(option_specs[i].id)))
            return &option_specs[i];
    return NULL;
}

static const option_spec *find_long(const char *name, size_t length, uint64_t allowed)
{
    for (size_t i = 0; i < OPTION_SPEC_COUNT; i++)
        if (strlen(option_specs[i].long_name) == length &&
            strncmp(option_specs[i].long_name, name, length) == 0 &&
            (allowed & OPT_BIT(option_specs[i].id)))
            return &option_specs[i];
    return NULL;
}

static int apply_hash_name(const char *option, const char *value, bk_params *params)
{
    if (strcmp(value, "xxh3") == 0)
        params->hash_algorithm = BK_HASH_XXH3;
    else if (strcmp(value, "siphash") == 0)
        params->hash_algorithm = BK_HASH_SIPHASH;
    else if (strcmp(value, "xxh64") == 0)
        params->hash_algorithm = BK_HASH_XXH64;
    else if (strcmp(value, "mix64") == 0)
        params->hash_algorithm = BK_HASH_MIX64;
    else
        return cli_error("%s must be xxh3, siphash, xxh64 or mix64, got '%s'", option, value);
    return CLI_OK;
}

/* --delimiter: one byte, or "\\t" / "tab" for a tab (hard to type in a shell). */
static int parse_delimiter(const char *option, const char *value, char *out)
{
    if (strcmp(value, "\\t") == 0 || strcmp(value, "tab") == 0)
        *out = '\t';
    else if (strlen(value) == 1)
        *out = value[0];
    else
        return cli_error("%s must be one character (or 'tab'), got '%s'", option, value);
    return CLI_OK;
}

/* Applies one option; `option` is its spelling for messages. */
static int apply_option(cli_args *out, cli_option_id id, const char *option, const char *value)
{
    bk_params *params = &out->params;
    out->given[id] = true;
    switch (id) {
    case OPT_HELP: return CLI_OK;
    case OPT_CAPACITY: return parse_count(option, value, 1, BK_MAX_BITS, &params->capacity);
    case OPT_FPR: return parse_fraction(option, value, &params->fpr);
    case OPT_BITS_PER_KEY: return parse_at_least_one(option, value, &params->bits_per_key);
    case OPT_BITS: return parse_count(option, value, 1, BK_MAX_BITS, &params->bits);
    case OPT_HASHES: return parse_unsigned(option, value, 1, BK_MAX_HASHES, &params->hashes);
    case OPT_KIND: out->kind_name = value; return CLI_OK;
    case OPT_HASH: return apply_hash_name(option, value, params);
    case OPT_SEED: return parse_count(option, value, 0, UINT64_MAX, &params->seed);
    case OPT_KEY_FILE: return read_key_file(option, value, out->secret_key);
    case OPT_FINGERPRINT_BITS:
        return parse_unsigned(option, value, 1, 64, &params->fingerprint_bits);
    case OPT_EXPANSION: return parse_at_least_one(option, value, &params->expansion);
    case OPT_TIGHTENING: return parse_fraction(option, value, &params->tightening);
    case OPT_MAX_FILTERS:
        return parse_unsigned(option, value, 0, UINT_MAX, &params->max_filters);
    case OPT_WINDOW_KEYS: return parse_count(option, value, 1, UINT64_MAX, &params->window_keys);
    case OPT_WINDOW_SECONDS:
        return parse_count(option, value, 1, UINT64_MAX, &params->window_seconds);
    case OPT_GENERATIONS:
        return parse_unsigned(option, value, 1, UINT_MAX, &params->generations);
    case OPT_FORCE: out->force = true; return CLI_OK;
    case OPT_NUL: out->nul = true; return CLI_OK;
    case OPT_QUIET: out->quiet = true; return CLI_OK;
    case OPT_INVERT: out->invert = true; return CLI_OK;
    case OPT_COUNT: out->count_only = true; return CLI_OK;
    case OPT_JSON: out->json = true; return CLI_OK;
    case OPT_MMAP: out->mmap = true; return CLI_OK;
    case OPT_PARQUET: params->flags |= BK_FLAG_PARQUET_SIZE; return CLI_OK;
    case OPT_HEADER: return CLI_OK;
    case OPT_OFFSET: return parse_count(option, value, 0, UINT64_MAX, &out->offset);
    case OPT_NO_WAIT: out->no_wait = true; return CLI_OK;
    case OPT_REMAINDER_BITS:
        return parse_unsigned(option, value, 1, 64, &params->remainder_bits);
    case OPT_AUTO_GROW: params->flags |= BK_FLAG_AUTO_GROW; return CLI_OK;
    case OPT_PROMETHEUS: out->prometheus = true; return CLI_OK;
    case OPT_FIELD: return parse_unsigned(option, value, 1, UINT_MAX, &out->field);
    case OPT_DELIMITER: return parse_delimiter(option, value, &out->field_delimiter);
    case OPT_COUNT_OF_IDS: break;
    }
    return cli_error("internal error: option %s", option);
}

/* The hash algorithm follows from --hash, --seed and --key-file. */
static int settle_hashing(cli_args *out)
{
    bk_params *params = &out->params;
    if (out->given[OPT_KEY_FILE]) {
        if (out->given[OPT_SEED])
            return cli_error("give either --seed or --key-file, not both");
        if (out->given[OPT_HASH] && params->hash_algorithm != BK_HASH_SIPHASH)
            return cli_error("--key-file is for --hash siphash");
        params->hash_algorithm = BK_HASH_SIPHASH;
        params->secret_key = out->secret_key;
    } else if (out->given[OPT_HASH] && params->hash_algorithm == BK_HASH_SIPHASH) {
        return cli_error("--hash siphash needs its secret key: --key-file FILE");
    }
    if (out->given[OPT_PARQUET] && params->hash_algorithm == BK_HASH_MIX64)
        return cli_error("--parquet needs xxh64, not --hash mix64: Parquet readers hash with "
                         "XXH64 and seed 0");
    return CLI_OK;
}

static int parse_long_option(int argc, char **argv, int *index, uint64_t allowed, cli_args *out)
{
    const char *name = argv[*index] + 2;
    const char *equals = strchr(name, '=');
    size_t length = equals ? (size_t)(equals - name) : strlen(name);
    const option_spec *spec = find_long(name, length, allowed);
    if (spec == NULL)
        return cli_error("unknown option --%.*s for '%s' (try 'bloomkit %s --help')",
                         (int)length, name, argv[0], argv[0]);
    char option[48];
    snprintf(option, sizeof option, "--%s", spec->long_name);
    const char *value = NULL;
    if (spec->takes_value) {
        if (equals)
            value = equals + 1;
        else if (*index + 1 < argc)
            value = argv[++*index];
        else
            return cli_error("%s needs a value", option);
    } else if (equals) {
        return cli_error("%s takes no value", option);
    }
    return apply_option(out, spec->id, option, value);
}

/* "-qv", "-n100", "-n 100". */
static int parse_short_options(int argc, char **argv, int *index, uint64_t allowed,
                               cli_args *out)
{
    const char *cluster = argv[*index] + 1;
    for (size_t j = 0; cluster[j] != '\0'; j++) {
        const option_spec *spec = find_short(cluster[j], allowed);
        if (spec == NULL)
            return cli_error("unknown option -%c for '%s' (try 'bloomkit %s --help')",
                             cluster[j], argv[0], argv[0]);
        char option[3] = { '-', cluster[j], '\0' };
        if (!spec->takes_value) {
            if (apply_option(out, spec->id, option, NULL) != CLI_OK)
                return CLI_ERROR;
            continue;
        }
        const char *value = cluster + j + 1;
        if (*value == '\0') {
            if (*index + 1 >= argc)
                return cli_error("%s needs a value", option);
            value = argv[++*index];
        }
        return apply_option(out, spec->id, option, value);
    }
    return CLI_OK;
}

int cli_parse(int argc, char **argv, uint64_t allowed, cli_args *out)
{
    memset(out, 0, sizeof *out);
    allowed |= OPT_BIT(OPT_HELP);
    out->positional = calloc((size_t)argc + 1, sizeof *out->positional);
    if (out->positional == NULL)
        return cli_error("out of memory");
    bool options_ended = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int result = CLI_OK;
        if (options_ended || arg[0] != '-' || arg[1] == '\0')
            out->positional[out->positional_count++] = argv[i];
        else if (strcmp(arg, "--") == 0)
            options_ended = true;
        else if (arg[1] == '-')
            result = parse_long_option(argc, argv, &i, allowed, out);
        else
            result = parse_short_options(argc, argv, &i, allowed, out);
        if (result != CLI_OK) {
            cli_args_free(out);
            return result;
        }
    }
    if (out->given[OPT_HELP]) {
        cli_args_free(out);
        return -1;
    }
    if (settle_hashing(out) != CLI_OK) {
        cli_args_free(out);
        return CLI_ERROR;
    }
    return CLI_OK;
}

void cli_args_free(cli_args *args)
{
    free(args->positional);
    args->positional = NULL;
    args->positional_count = 0;
}

int cli_check_design(const cli_args *args, bool need_capacity)
{
    const bool *given = args->given;
    if (need_capacity && !given[OPT_CAPACITY])
        return cli_error("-n (the number of keys the filter is for) is required");
    if (given[OPT_BITS] != given[OPT_HASHES])
        return cli_error("--bits and --hashes go together (exactly m bits and k hashes)");
    int sizings = given[OPT_FPR] + given[OPT_BITS_PER_KEY] + given[OPT_BITS];
    if (sizings > 1)
        return cli_error("give one of -p, --bits-per-key or --bits with --hashes");
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* Kinds                                                                    */
/* ------------------------------------------------------------------------ */

#define KIND_BIT(kind) ((unsigned)(kind) < 32 ? 1u << (kind) : 0u)
#define SIZED_KINDS                                                                 \
    (KIND_BIT(BK_KIND_BLOOM) | KIND_BIT(BK_KIND_BLOCKED) | KIND_BIT(BK_KIND_SBBF) | \
     KIND_BIT(BK_KIND_COUNTING) | KIND_BIT(BK_KIND_CUCKOO))

/* The options that shape only some kinds, and those kinds. */
static const struct kind_option {
    cli_option_id id;
    const char *name;
    unsigned kinds; /* KIND_BIT mask */
} kind_options[] = {
    { OPT_BITS_PER_KEY, "--bits-per-key", SIZED_KINDS | KIND_BIT(BK_KIND_QUOTIENT) },
    { OPT_BITS, "--bits", SIZED_KINDS },
    { OPT_HASHES, "--hashes", SIZED_KINDS },
    { OPT_FINGERPRINT_BITS, "--fingerprint-bits", KIND_BIT(BK_KIND_CUCKOO) },
    { OPT_EXPANSION, "--expansion", KIND_BIT(BK_KIND_SCALABLE) },
    { OPT_TIGHTENING, "--tightening", KIND_BIT(BK_KIND_SCALABLE) },
    { OPT_MAX_FILTERS, "--max-filters", KIND_BIT(BK_KIND_SCALABLE) },
    { OPT_WINDOW_KEYS, "--window-keys", KIND_BIT(BK_KIND_WINDOW) },
    { OPT_WINDOW_SECONDS, "--window-seconds", KIND_BIT(BK_KIND_WINDOW) },
    { OPT_GENERATIONS, "--generations", KIND_BIT(BK_KIND_WINDOW) },
    { OPT_PARQUET, "--parquet", KIND_BIT(BK_KIND_SBBF) },
    { OPT_REMAINDER_BITS, "--remainder-bits", KIND_BIT(BK_KIND_QUOTIENT) },
    { OPT_AUTO_GROW, "--auto-grow", KIND_BIT(BK_KIND_QUOTIENT) },
};

/* The names of the kinds this build has whose bit is set in `kinds`, in
 * registry order (every kind for ALL_KINDS), comma-separated into
 * `buffer` (cut at `size`). */
#define ALL_KINDS (~0u)
static void list_kinds(unsigned kinds, char *buffer, size_t size)
{
    bk_kind every[64];
    size_t count = bk_kind_list(every, sizeof every / sizeof every[0]);
    size_t used = 0;
    buffer[0] = '\0';
    for (size_t i = 0; i < count && i < sizeof every / sizeof every[0]; i++) {
        if (kinds != ALL_KINDS && !(kinds & KIND_BIT(every[i])))
            continue;
        int n = snprintf(buffer + used, size - used, "%s%s", used ? ", " : "",
                         bk_kind_name(every[i]));
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

void cli_list_kinds(char *buffer, size_t size) { list_kinds(ALL_KINDS, buffer, size); }

int cli_check_kind_options(const cli_args *args, bk_kind kind)
{
    for (size_t i = 0; i < sizeof kind_options / sizeof kind_options[0]; i++) {
        const struct kind_option *option = &kind_options[i];
        if (!args->given[option->id] || (option->kinds & KIND_BIT(kind)))
            continue;
        char kinds[128];
        list_kinds(option->kinds, kinds, sizeof kinds);
        return cli_error("%s applies to %s filters, not to %s (choose the kind with --kind)",
                         option->name, kinds, bk_kind_name(kind));
    }
    if (kind == BK_KIND_WINDOW) {
        const bk_params *params = &args->params;
        if (args->given[OPT_WINDOW_KEYS] && args->given[OPT_WINDOW_SECONDS])
            return cli_error("give --window-keys or --window-seconds, not both");
        if (args->given[OPT_GENERATIONS] &&
            (params->generations < 2 || params->generations > BK_WINDOW_MAX_GENERATIONS))
            return cli_error("--generations must be between 2 and %u, got %u",
                             BK_WINDOW_MAX_GENERATIONS, params->generations);
    }
    return CLI_OK;
}

/* Above this factor of -p, a filter's rate is not what was asked (a Bloom
 * filter's whole k puts it up to half a percent above). */
#define FPR_TOLERANCE 1.1

int cli_check_fpr_reached(const cli_args *args, const bk_filter *filter)
{
    if (!args->given[OPT_FPR])
        return CLI_OK;
    bk_stats s;
    bk_filter_stats(filter, &s);
    double asked = args->params.fpr;
    const char *kind = bk_kind_name(s.kind);
    if (s.target_fpr > asked * FPR_TOLERANCE)
        return cli_error("a %s filter cannot reach -p %g: its false-positive rate is %.3g "
                         "(nothing written; 'bloomkit size -n N -p P' shows what each kind "
                         "gives)",
                         kind, asked, s.target_fpr);
    if (bk_kind_is_static(s.kind) && s.target_fpr * 2 < asked)
        cli_warning("a %s filter's false-positive rate is fixed at %.3g: -p %g did not size it",
                    kind, s.target_fpr, asked);
    return CLI_OK;
}

void cli_warn_if_past_design_point(const bk_filter *filter, const char *name)
{
    bk_stats s;
    bk_filter_stats(filter, &s);
    if (!s.past_design_point)
        return;
    cli_warning("%s is past its design point: %llu keys added (about %.0f by its fill) for a "
                "capacity of %llu; its false-positive rate is now about %.3g, designed for %.3g",
                name, (unsigned long long)s.keys_added, s.keys_estimated,
                (unsigned long long)s.capacity, s.current_fpr, s.target_fpr);
}

int cli_kind(const cli_args *args, bk_kind *out)
{
    if (args->kind_name == NULL) {
        *out = BK_KIND_BLOOM;
        return CLI_OK;
    }
    if (bk_kind_from_name(args->kind_name, out) == BK_OK)
        return CLI_OK;
    char available[256];
    cli_list_kinds(available, sizeof available);
    return cli_error("unknown --kind '%s' (available: %s)", args->kind_name, available);
}

/* ------------------------------------------------------------------------ */
/* Filter files                                                             */
/* ------------------------------------------------------------------------ */

int cli_filter_error(const char *path, const char *doing, bk_status status)
{
    int saved_errno = errno;
    const char *name = strcmp(path, "-") == 0 ? "standard input" : path;
    switch (status) {
    case BK_EIO:
        return cli_error("cannot %s %s: %s", doing, name,
                         saved_errno ? strerror(saved_errno) : bk_strerror(status));
    case BK_EKEY:
        return cli_error("%s: secret key missing or wrong for this filter (give it with "
                         "--key-file)",
                         name);
    case BK_ENOMEM: return cli_error("cannot %s %s: out of memory", doing, name);
    default: return cli_error("%s: %s", name, bk_strerror(status));
    }
}

/* Reads all of standard input into memory. */
static int read_stdin(unsigned char **data, size_t *size)
{
    size_t capacity = 1 << 16, used = 0;
    unsigned char *buffer = malloc(capacity);
    if (buffer == NULL)
        return cli_error("out of memory");
    for (;;) {
        if (used == capacity) {
            unsigned char *grown = capacity <= SIZE_MAX / 2 ? realloc(buffer, capacity * 2)
                                                            : NULL;
            if (grown == NULL) {
                free(buffer);
                return cli_error("standard input: out of memory");
            }
            buffer = grown;
            capacity *= 2;
        }
        size_t n = fread(buffer + used, 1, capacity - used, stdin);
        used += n;
        if (n == 0)
            break;
    }
    if (ferror(stdin)) {
        free(buffer);
        return cli_error("cannot read standard input: %s", strerror(errno));
    }
    *data = buffer;
    *size = used;
    return CLI_OK;
}

static int settle_loaded(const cli_args *args, const char *path, bk_filter **out);

int cli_load(const cli_args *args, const char *path, bool map, bk_filter **out)
{
    bk_load_options options = { 0 };
    if (args->given[OPT_KEY_FILE])
        options.secret_key = args->secret_key;
    bk_status status;
    if (strcmp(path, "-") == 0) {
        unsigned char *data = NULL;
        size_t size = 0;
        if (read_stdin(&data, &size) != CLI_OK)
            return CLI_ERROR;
        status = bk_filter_deserialize(data, size, &options, out);
        free(data);
    } else {
        struct stat info;
        if (stat(path, &info) == 0 && S_ISDIR(info.st_mode))
            return cli_error("%s is a directory, not a filter file", path);
        status = map ? bk_filter_map(path, &options, out) : BK_EUNSUPPORTED;
        if (status == BK_EUNSUPPORTED)
            status = bk_filter_load(path, &options, out);
    }
    if (status != BK_OK)
        return cli_filter_error(path, "read", status);
    return settle_loaded(args, path, out);
}

/* What every command does with a filter it has just read: refuses
 * --key-file on a filter that is not keyed, and brings a filter whose keys
 * age out by the clock to the current time.  Frees it on error. */
static int settle_loaded(const cli_args *args, const char *path, bk_filter **out)
{
    if (args->given[OPT_KEY_FILE] && bk_filter_hasher(*out)->algorithm != BK_HASH_SIPHASH) {
        bk_hash_algorithm algorithm = bk_filter_hasher(*out)->algorithm;
        bk_filter_free(*out);
        *out = NULL;
        return cli_error("%s is not keyed (it hashes with %s): --key-file does not apply to it",
                         strcmp(path, "-") == 0 ? "standard input" : path,
                         bk_hash_algorithm_name(algorithm));
    }
    if (cli_settle_clock(out, path) != CLI_OK) {
        bk_filter_free(*out);
        *out = NULL;
        return CLI_ERROR;
    }
    return CLI_OK;
}

int cli_now(uint64_t *out)
{
    const char *fixed = getenv("BLOOMKIT_NOW");
    if (fixed == NULL || fixed[0] == '\0') {
        time_t now = time(NULL);
        if (now < 0)
            return cli_error("cannot read the clock");
        *out = (uint64_t)now;
        return CLI_OK;
    }
    if (parse_whole(fixed, out) != WHOLE_OK || *out == UINT64_MAX)
        return cli_error("BLOOMKIT_NOW must be a whole number of seconds, got '%s'", fixed);
    return CLI_OK;
}

int cli_settle_clock(bk_filter **filter, const char *path)
{
    uint64_t now;
    if (cli_now(&now) != CLI_OK)
        return CLI_ERROR;
    bk_status status = bk_filter_advance_clock(*filter, now);
    if (status == BK_EIMMUTABLE) { /* mapped in place: age a private copy */
        bk_filter *copy;
        status = bk_filter_copy(*filter, &copy);
        if (status != BK_OK)
            return cli_filter_error(path, "read", status);
        bk_filter_free(*filter);
        *filter = copy;
        status = bk_filter_advance_clock(*filter, now);
    }
    if (status != BK_OK && status != BK_EUNSUPPORTED)
        return cli_filter_error(path, "age", status);
    return CLI_OK;
}

/* The status of an existing output `path`, symbolic links followed:
 * CLI_OK and *exists; CLI_ERROR after a message for anything the commands
 * never write over. */
static int inspect_target(const char *path, struct stat *info, bool *exists)
{
    struct stat link;
    *exists = stat(path, info) == 0;
    if (!*exists) {
        if (lstat(path, &link) == 0 && S_ISLNK(link.st_mode))
            return cli_error("%s is a symbolic link to nothing (%s): not writing through it",
                             path, strerror(errno));
        return CLI_OK;
    }
    if (S_ISDIR(info->st_mode))
        return cli_error("%s is a directory", path);
    if (!S_ISREG(info->st_mode))
        return cli_error("%s is not a regular file (a device, FIFO or socket): not writing a "
                         "filter over it",
                         path);
    return CLI_OK;
}

/* Whether this process may change the file: as root, any write bit set. */
static bool may_write(const char *path, const struct stat *info)
{
    if (geteuid() == 0)
        return (info->st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) != 0;
    return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0;
}

int cli_check_output(const cli_args *args, const char *path)
{
    if (strcmp(path, "-") == 0) {
        if (isatty(STDOUT_FILENO))
            return cli_error("not writing a binary filter to a terminal (redirect standard "
                             "output, or give a file name)");
        return CLI_OK;
    }
    struct stat info;
    bool exists;
    if (inspect_target(path, &info, &exists) != CLI_OK)
        return CLI_ERROR;
    if (!exists)
        return CLI_OK;
    if (!args->force)
        return cli_error("%s already exists (use --force to replace it)", path);
    if (info.st_nlink > 1)
        return cli_error("%s has %llu hard links: replacing it would leave the other names on "
                         "the old filter (remove it first)",
                         path, (unsigned long long)info.st_nlink);
    return CLI_OK;
}

int cli_update_begin(const cli_args *args, const char *path, bk_file_update **update,
                     bk_filter **filter)
{
    struct stat info;
    bool exists;
    if (inspect_target(path, &info, &exists) != CLI_OK)
        return CLI_ERROR;
    if (exists && !args->force && !may_write(path, &info))
        return cli_error("%s is read-only (use --force to change it anyway)", path);
    bk_load_options options = { 0 };
    if (args->given[OPT_KEY_FILE])
        options.secret_key = args->secret_key;
    errno = 0;
    bk_status status = bk_file_update_begin(path, &options, !args->no_wait, update, filter);
    if (status == BK_EIO && (errno == EWOULDBLOCK || errno == EAGAIN))
        return cli_error("%s is being changed by another command (it holds the file's lock); "
                         "not waiting (--no-wait)",
                         path);
    if (status == BK_EUNSUPPORTED)
        return cli_error("%s is not a regular file: cannot update it", path);
    if (status != BK_OK)
        return cli_filter_error(path, "read", status);
    if (settle_loaded(args, path, filter) != CLI_OK) {
        bk_file_update_end(*update);
        *update = NULL;
        return CLI_ERROR;
    }
    return CLI_OK;
}

int cli_update_commit(bk_file_update *update, const bk_filter *filter, const char *path)
{
    errno = 0;
    bk_status status = bk_file_update_commit(update, filter);
    if (status != BK_OK)
        return cli_filter_error(path, "write", status);
    return CLI_OK;
}

void cli_guard_standard_descriptors(void)
{
    static const int flags[3] = { O_WRONLY, O_RDONLY, O_RDONLY };
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        (void)open("/dev/null", flags[fd]); /* takes the lowest free number: fd */
    }
}

static int write_stdout(const bk_filter *filter)
{
    size_t size;
    bk_status status = bk_filter_serialized_size(filter, &size);
    if (status != BK_OK)
        return cli_filter_error("-", "serialise", status);
    void *buffer = malloc(size ? size : 1);
    if (buffer == NULL)
        return cli_error("out of memory");
    status = bk_filter_serialize(filter, buffer, size, NULL);
    if (status != BK_OK) {
        free(buffer);
        return cli_filter_error("-", "serialise", status);
    }
    size_t written = fwrite(buffer, 1, size, stdout);
    free(buffer);
    if (written != size || fflush(stdout) != 0)
        return cli_error("cannot write standard output: %s", strerror(errno));
    return CLI_OK;
}

int cli_save(const bk_filter *filter, const char *path)
{
    if (strcmp(path, "-") == 0)
        return write_stdout(filter);
    bk_status status = bk_filter_save(filter, path);
    if (status != BK_OK)
        return cli_filter_error(path, "write", status);
    return CLI_OK;
}

void cli_describe_incompatibility(const bk_filter *a, const bk_filter *b, char *buffer,
                                  size_t size)
{
    bk_stats x, y;
    bk_filter_stats(a, &x);
    bk_filter_stats(b, &y);
    if (x.kind != y.kind)
        snprintf(buffer, size, "kinds differ (%s, %s)", bk_kind_name(x.kind),
                 bk_kind_name(y.kind));
    else if (x.bits != y.bits)
        snprintf(buffer, size, "sizes differ (m = %llu, %llu bits)", (unsigned long long)x.bits,
                 (unsigned long long)y.bits);
    else if (x.hashes != y.hashes)
        snprintf(buffer, size, "hash counts differ (k = %u, %u)", x.hashes, y.hashes);
    else if (x.hash_algorithm != y.hash_algorithm)
        snprintf(buffer, size, "hash algorithms differ (%s, %s)",
                 bk_hash_algorithm_name(x.hash_algorithm),
                 bk_hash_algorithm_name(y.hash_algorithm));
    else if (x.seed != y.seed)
        snprintf(buffer, size, "seeds or secret keys differ");
    else
        snprintf(buffer, size, "their parameters differ");
}

/* ------------------------------------------------------------------------ */
/* JSON output                                                              */
/* ------------------------------------------------------------------------ */

void json_string(FILE *out, const char *text)
{
    putc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            putc(*c, out);
    }
    putc('"', out);
}

void json_number(FILE *out, double value)
{
    if (isfinite(value))
        fprintf(out, "%.10g", value);
    else
        fputs("null", out);
}
