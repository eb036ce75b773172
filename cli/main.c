/*
 * cli/main.c -- the `bloomkit` command: dispatch to the subcommands.
 *
 * Each subcommand lives in its own file (design.c: size, create, build;
 * update.c: add, remove; query.c: query, info; sets.c: merge, intersect,
 * estimate; parquet.c: parquet-export, parquet-import; demo.c) and shares
 * cli/common.c (options, messages, filter files) and cli/keys.c (reading
 * keys, progress, output).  The user's documentation is docs/bloomkit.1.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bloomkit.h"
#include "cli.h"

typedef struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommand;

static const subcommand subcommands[] = {
    { "size", cli_size, "m, k, bytes, bits/key, predicted FPR, lower bound, per kind" },
    { "create", cli_create, "create an empty filter file for N keys at FPR P" },
    { "add", cli_add, "add keys; prints how many were new" },
    { "query", cli_query, "print the keys that may be present (-v: the absent ones)" },
    { "info", cli_info, "describe a filter: size, fill, estimated keys, FPR, status" },
    { "merge", cli_merge, "union of filters" },
    { "intersect", cli_intersect, "intersection of filters" },
    { "estimate", cli_estimate, "estimated |A|, |B|, |A u B|, |A n B|, Jaccard" },
    { "remove", cli_remove, "remove keys (kinds with deletion)" },
    { "count", cli_count, "print how many times each key was added (counting kinds)" },
    { "build", cli_build, "build a filter holding exactly the keys read (static kinds)" },
    { "demo", cli_demo, "the embedded-default demonstration (make demo)" },
    { "parquet-export", cli_parquet_export, "an sbbf filter as a Parquet file stores it" },
    { "parquet-import", cli_parquet_import, "a Parquet file's split-block filter, as a filter" },
};

static void usage(FILE *out)
{
    fprintf(out, "usage: bloomkit COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        fprintf(out, "  %-14s %s\n", subcommands[i].name, subcommands[i].summary);
    char kinds[256];
    cli_list_kinds(kinds, sizeof kinds);
    fprintf(out, "\nkinds (--kind): %s\n", kinds);
    fprintf(out, "\nKeys are lines of standard input (-0: NUL-terminated), or the arguments\n"
                 "after FILE.  Exit status: 0 success, 1 no (no key present, key not found),\n"
                 "2 error.  'bloomkit COMMAND --help' describes each command; man bloomkit.\n");
}

/* Every command's last step: standard output must have reached its file
 * (flushed, closed) -- `bloomkit --help > /dev/full` is an error too.  A
 * command that already reported an error keeps its status. */
static int finish(int result)
{
    errno = 0;
    bool failed = fflush(stdout) != 0 || ferror(stdout);
    int error = errno;
    if (fclose(stdout) != 0) {
        failed = true;
        error = error ? error : errno;
    }
    if (failed && result != CLI_ERROR) {
        fprintf(stderr, "bloomkit: cannot write standard output: %s\n",
                strerror(error ? error : EIO));
        return CLI_ERROR;
    }
    return result;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("bloomkit %s\n", BLOOMKIT_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "bloomkit: unknown command '%s' (try 'bloomkit --help')\n", argv[1]);
    return 2;
}

int main(int argc, char **argv)
{
    cli_guard_standard_descriptors();
    return finish(run(argc, argv));
}
