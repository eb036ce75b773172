/*
 * cli/main.c -- the `bloomkit` command: dispatch to the subcommands.
 */
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
    { "demo", cli_demo, "the embedded-default demonstration" },
};

static void usage(FILE *out)
{
    fprintf(out, "usage: bloomkit COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        fprintf(out, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(out, "\n'bloomkit COMMAND --help' describes each command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
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
