/*
 * cli/parquet.c -- sbbf filters in and out of Apache Parquet files:
 *
 *   bloomkit parquet-export FILE [--header] > BYTES
 *   bloomkit parquet-import OUT IN [--header] [--offset B] [-n N]
 *
 * A Parquet file keeps a column chunk's split-block filter at its
 * bloom_filter_offset as a BloomFilterHeader (Thrift compact protocol:
 * numBytes, algorithm BLOCK, hash XXHASH, compression UNCOMPRESSED) and
 * then the bitset (docs/BLOCKED.md, "Parquet interchange").  The export
 * writes the bitset, or with --header the header and the bitset, to
 * standard output: the bytes a writer splices into a file.  The import
 * reads either form, from offset B of IN ('-': standard input) -- with
 * --header the rest of the file may follow, so IN can be the Parquet file
 * itself and B its bloom_filter_offset -- and saves it as a filter file.
 * Both go through the generic handle (bk_sbbf_to_parquet,
 * bk_sbbf_from_parquet); the export refuses a filter some Parquet reader
 * would refuse, with the reason.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char export_usage[] =
    "usage: bloomkit parquet-export FILE [--header] > BYTES\n"
    "\n"
    "Writes the sbbf filter in FILE as Parquet stores it, to standard output:\n"
    "the bitset, or with --header the BloomFilterHeader (Thrift compact\n"
    "protocol) and then the bitset, the bytes found at a column chunk's\n"
    "bloom_filter_offset.  Every Parquet reader accepts the result: FILE must\n"
    "hash with XXH64 and seed 0 and be a power of two bytes from 32 B to\n"
    "128 MiB (create it with --kind sbbf --parquet).\n";

static const char import_usage[] =
    "usage: bloomkit parquet-import OUT IN [--header] [--offset B] [-n N] [--force] [-q]\n"
    "\n"
    "Reads a Parquet split-block filter from IN ('-': standard input), from\n"
    "byte B on (default 0), and writes it to the filter file OUT.  Without\n"
    "--header the rest of IN is the bitset; with --header a BloomFilterHeader\n"
    "comes first and IN may go on after the filter (a Parquet file, with B its\n"
    "bloom_filter_offset).  -n: the number of keys it was made for (default:\n"
    "estimated from its fill).  Query it like any filter: the keys are the\n"
    "values' plain encodings (an INT64 is its 8 little-endian bytes).\n";

/* The most bytes an import reads: the largest bitset and room for the
 * longest header (19 bytes); a bitset alone that fills it all is too long. */
#define IMPORT_LIMIT (BK_SBBF_PARQUET_MAX_BYTES + 32)

/* ------------------------------------------------------------------------ */
/* export                                                                   */
/* ------------------------------------------------------------------------ */

/* Why Parquet readers would refuse `filter` (bk_sbbf_to_parquet said so). */
static int unreadable_error(const char *path, const bk_filter *filter)
{
    bk_stats s;
    bk_filter_stats(filter, &s);
    const bk_hasher *hasher = bk_filter_hasher(filter);
    if (hasher->algorithm != BK_HASH_XXH64 || hasher->seed != 0)
        return cli_error("%s hashes with %s%s: Parquet readers hash with XXH64 and seed 0", path,
                         bk_hash_algorithm_name(hasher->algorithm),
                         hasher->algorithm == BK_HASH_XXH64 ? " and another seed" : "");
    return cli_error("%s is %llu bytes: Parquet readers need a power of two from 32 B to "
                     "128 MiB (create it with --kind sbbf --parquet)",
                     path, (unsigned long long)s.bytes);
}

static int export_filter(const cli_args *args, const char *path)
{
    if (isatty(STDOUT_FILENO))
        return cli_error("not writing binary data to a terminal (redirect standard output)");
    bk_filter *filter;
    if (cli_load(args, path, false, &filter) != CLI_OK)
        return CLI_ERROR;
    bk_parquet_form form = args->given[OPT_HEADER] ? BK_PARQUET_WITH_HEADER : BK_PARQUET_BITSET;
    size_t size = 0;
    bk_status status = bk_sbbf_to_parquet(filter, form, NULL, 0, &size);
    int result = CLI_OK;
    unsigned char *bytes = status == BK_OK ? malloc(size) : NULL;
    if (status == BK_EKIND)
        result = cli_error("%s is a %s filter: Parquet stores sbbf filters (--kind sbbf)", path,
                           bk_kind_name(bk_filter_kind(filter)));
    else if (status == BK_EUNSUPPORTED)
        result = unreadable_error(path, filter);
    else if (status != BK_OK)
        result = cli_filter_error(path, "export", status);
    else if (bytes == NULL)
        result = cli_error("out of memory");
    else if ((status = bk_sbbf_to_parquet(filter, form, bytes, size, &size)) != BK_OK)
        result = cli_filter_error(path, "export", status);
    else if (fwrite(bytes, 1, size, stdout) != size)
        result = cli_error("cannot write standard output: %s", strerror(errno));
    free(bytes);
    bk_filter_free(filter);
    return result == CLI_OK ? output_finish() : result;
}

int cli_parquet_export(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(argc, argv, OPT_BIT(OPT_HEADER), &args);
    if (result < 0)
        return cli_usage(export_usage);
    if (result != CLI_OK)
        return result;
    if (args.positional_count != 1)
        result = cli_usage_error(export_usage, "parquet-export takes one FILE");
    else
        result = export_filter(&args, args.positional[0]);
    cli_args_free(&args);
    return result;
}

/* ------------------------------------------------------------------------ */
/* import                                                                   */
/* ------------------------------------------------------------------------ */

/* Moves `in` to `offset`: a seek in a regular file, else by reading
 * (into `buffer`, IMPORT_LIMIT bytes).  CLI_ERROR after a message. */
static int skip_to(FILE *in, const char *name, uint64_t offset, unsigned char *buffer)
{
    struct stat info;
    if (fstat(fileno(in), &info) == 0 && S_ISREG(info.st_mode)) {
        if (offset > (uint64_t)info.st_size)
            return cli_error("%s ends before --offset %llu", name, (unsigned long long)offset);
        if (fseeko(in, (off_t)offset, SEEK_SET) == 0)
            return CLI_OK;
    }
    for (uint64_t skipped = 0; skipped < offset;) {
        size_t chunk = offset - skipped < IMPORT_LIMIT ? (size_t)(offset - skipped)
                                                       : IMPORT_LIMIT;
        size_t got = fread(buffer, 1, chunk, in);
        skipped += got;
        if (got < chunk)
            return ferror(in) ? cli_error("cannot read %s: %s", name, strerror(errno))
                              : cli_error("%s ends before --offset %llu", name,
                                          (unsigned long long)offset);
    }
    return CLI_OK;
}

/* Reads at most IMPORT_LIMIT bytes of `path` ('-': stdin) from `offset`. */
static int read_input(const char *path, uint64_t offset, unsigned char **data, size_t *size)
{
    bool from_stdin = strcmp(path, "-") == 0;
    FILE *in = from_stdin ? stdin : fopen(path, "rb");
    if (in == NULL)
        return cli_error("cannot read %s: %s", path, strerror(errno));
    const char *name = from_stdin ? "standard input" : path;
    unsigned char *buffer = malloc(IMPORT_LIMIT);
    int result = buffer == NULL ? cli_error("out of memory") : skip_to(in, name, offset, buffer);
    size_t used = result == CLI_OK ? fread(buffer, 1, IMPORT_LIMIT, in) : 0;
    if (result == CLI_OK && ferror(in))
        result = cli_error("cannot read %s: %s", name, strerror(errno));
    if (!from_stdin)
        fclose(in);
    if (result != CLI_OK) {
        free(buffer);
        return CLI_ERROR;
    }
    *data = buffer;
    *size = used;
    return CLI_OK;
}

static int import_error(const char *name, bk_parquet_form form, size_t size, bk_status status)
{
    switch (status) {
    case BK_EINVAL:
        return cli_error("%s: a Parquet bitset is a multiple of 32 bytes from 32 B to 128 MiB, "
                         "got %zu bytes (with a BloomFilterHeader first: --header)",
                         name, size);
    case BK_ETRUNCATED:
        return cli_error("%s: the Parquet filter ends early (%zu bytes)", name, size);
    case BK_ECORRUPT:
        return cli_error("%s: not a valid Parquet BloomFilterHeader%s", name,
                         form == BK_PARQUET_WITH_HEADER ? " (check --offset)" : "");
    case BK_EUNSUPPORTED:
        return cli_error("%s: a Parquet filter of an algorithm, hash or compression other "
                         "than BLOCK, XXHASH and UNCOMPRESSED",
                         name);
    default: return cli_filter_error(name, "import", status);
    }
}

static int import_filter(const cli_args *args, const char *out, const char *in)
{
    if (cli_check_output(args, out) != CLI_OK)
        return CLI_ERROR;
    unsigned char *data = NULL;
    size_t size = 0;
    if (read_input(in, args->offset, &data, &size) != CLI_OK)
        return CLI_ERROR;
    bk_parquet_form form = args->given[OPT_HEADER] ? BK_PARQUET_WITH_HEADER : BK_PARQUET_BITSET;
    bk_filter *filter;
    bk_status status = bk_sbbf_from_parquet(data, size, form, args->params.capacity, &filter,
                                            NULL);
    free(data);
    if (status != BK_OK)
        return import_error(strcmp(in, "-") == 0 ? "standard input" : in, form, size, status);
    int result = cli_save(filter, out);
    if (result == CLI_OK && !args->quiet && strcmp(out, "-") != 0) {
        bk_stats s;
        bk_filter_stats(filter, &s);
        printf("%s: imported sbbf filter, m = %llu bits (%llu bytes), about %.0f keys\n", out,
               (unsigned long long)s.bits, (unsigned long long)s.bytes, s.keys_estimated);
    }
    bk_filter_free(filter);
    return result == CLI_OK ? output_finish() : result;
}

int cli_parquet_import(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(argc, argv,
                           OPT_BIT(OPT_HEADER) | OPT_BIT(OPT_OFFSET) | OPT_BIT(OPT_CAPACITY) |
                               OPT_BIT(OPT_FORCE) | OPT_BIT(OPT_QUIET),
                           &args);
    if (result < 0)
        return cli_usage(import_usage);
    if (result != CLI_OK)
        return result;
    if (args.positional_count != 2)
        result = cli_usage_error(import_usage, "parquet-import takes OUT and IN");
    else
        result = import_filter(&args, args.positional[0], args.positional[1]);
    cli_args_free(&args);
    return result;
}
