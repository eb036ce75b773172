/*
 * cli/cli.h -- the subcommands of the `bloomkit` command.
 */
#ifndef BK_CLI_H
#define BK_CLI_H

/* Each subcommand gets argv starting at its own name and returns the exit
 * status: 0 success, 1 "no" (e.g. no key present), 2 error. */
int cli_demo(int argc, char **argv);

#endif
