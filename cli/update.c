/*
 * cli/update.c -- the commands that change an existing filter file:
 *
 *   bloomkit add    FILE [KEY...]   adds keys, prints how many were new
 *   bloomkit remove FILE [KEY...]   removes keys (kinds with deletion)
 *
 * Both lock the file (bk_file_update_begin: one writer at a time, a
 * second one waits, or fails with --no-wait), load the filter, change it
 * in memory, print their report, and only when every step worked -- the
 * report reached standard output too -- write it back in place
 * (bk_file_update_commit: just the changed 4 KiB pages, through an undo
 * journal, so a crash leaves the old file): a failed command leaves the
 * file exactly as it was.  A read-only file needs --force.  FILE "-" reads
 * the filter from standard input and writes the result to standard output
 * (the keys are then the operands, and the report goes to stderr).
 *
 * `add` reads keys in batches of CLI_BATCH and hands each batch to
 * bk_filter_add_batch, which hashes all the keys first and then probes
 * with prefetching.  A filter past its design point afterwards gets one
 * warning on stderr, whatever -q says: the rising false-positive rate is
 * never silent.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char add_usage[] =
    "usage: bloomkit add FILE [-0] [-q] [-f] [--no-wait] [--key-file F] [KEY...] [< KEYS]\n"
    "\n"
    "Adds the KEY operands, or else every line of standard input (-0: NUL-\n"
    "terminated records), to the filter in FILE and prints how many keys were\n"
    "new.  A line's '\\n' and a '\\r' before it are not part of the key.  Only the\n"
    "changed pages of the file are rewritten, crash-safely, and nothing at all if\n"
    "anything fails.  Adding to a filter past its design point works but warns\n"
    "once on standard error.  One writer at a time: another waits for the file's\n"
    "lock (--no-wait: fails at once instead).  -f: change a read-only file.\n"
    "FILE '-': filter from standard input, result to standard output.\n"
    "-q: no report and no progress line (shown on a terminal after about a\n"
    "second); the warning and errors are still printed.\n";

static const char remove_usage[] =
    "usage: bloomkit remove FILE [-0] [-q] [-f] [--no-wait] [--key-file F] [KEY...] [< KEYS]\n"
    "\n"
    "Removes keys from a filter of a kind that supports deletion (counting,\n"
    "cuckoo, ...) and prints how many were removed and how many were not found.\n"
    "Remove only keys that were added: removing a key that is a false positive\n"
    "can remove another key.  Exit status 1 if any key was not found, 2 on error\n"
    "(the file is then unchanged).  Locking, -f and --no-wait as for add.\n";

typedef struct update_job {
    const cli_args *args;
    const char *path;
    bk_filter *filter;
    bk_file_update *update; /* NULL when the filter comes from standard input */
    key_reader reader;
    progress progress;
    FILE *report; /* stdout, or stderr when the filter goes to stdout */
} update_job;

/* Loads the filter and prepares the key reader; CLI_ERROR after a message. */
static int start_job(update_job *job, const cli_args *args, const char *verb)
{
    memset(job, 0, sizeof *job);
    job->args = args;
    job->path = args->positional[0];
    size_t operand_count = (size_t)args->positional_count - 1;
    bool filter_from_stdin = strcmp(job->path, "-") == 0;
    if (filter_from_stdin && keys_from_stdin(args->positional + 1, operand_count))
        return cli_error("the filter comes from standard input ('-'), so the keys must be "
                         "given as arguments");
    if (filter_from_stdin && cli_check_output(args, "-") != CLI_OK)
        return CLI_ERROR;
    job->report = filter_from_stdin ? stderr : stdout;
    int loaded = filter_from_stdin
                     ? cli_load(args, job->path, false, &job->filter)
                     : cli_update_begin(args, job->path, &job->update, &job->filter);
    if (loaded != CLI_OK)
        return CLI_ERROR;
    key_reader_init(&job->reader, args->positional + 1, operand_count, args->nul, args->quiet);
    progress_start(&job->progress, verb, args->quiet);
    return CLI_OK;
}

static void end_job(update_job *job)
{
    progress_finish(&job->progress);
    key_reader_free(&job->reader);
    bk_filter_free(job->filter);
    bk_file_update_end(job->update);
}

/* The report is out (a failure to print it fails the command before the
 * file changes); now the filter goes back to its file or to stdout. */
static int write_back(const update_job *job)
{
    if (output_finish() != CLI_OK)
        return CLI_ERROR;
    if (job->update == NULL)
        return cli_save(job->filter, job->path);
    return cli_update_commit(job->update, job->filter, job->path);
}

/* ------------------------------------------------------------------------ */
/* add                                                                      */
/* ------------------------------------------------------------------------ */

static int add_error(const update_job *job, bk_status status)
{
    bk_kind kind = bk_filter_kind(job->filter);
    const char *name = strcmp(job->path, "-") == 0 ? "standard input" : job->path;
    switch (status) {
    case BK_EIMMUTABLE:
        return cli_error("%s is a static %s filter: keys cannot be added (rebuild it with "
                         "'bloomkit build')",
                         name, bk_kind_name(kind));
    case BK_EFULL:
        return cli_error("%s filled up while adding keys (%llu read so far): nothing "
                         "written (create it with a larger -n)",
                         name, (unsigned long long)job->reader.keys_read);
    default:
        return cli_error("cannot add to %s: %s (nothing written)", name, bk_strerror(status));
    }
}

static void warn_if_past_design_point(const update_job *job)
{
    cli_warn_if_past_design_point(job->filter,
                                  strcmp(job->path, "-") == 0 ? "the filter" : job->path);
}

static int add_keys(update_job *job)
{
    if (bk_kind_is_static(bk_filter_kind(job->filter)))
        return add_error(job, BK_EIMMUTABLE);
    bk_key *keys = malloc(CLI_BATCH * sizeof *keys);
    if (keys == NULL)
        return cli_error("out of memory");
    uint64_t new_keys = 0;
    bk_status status = BK_OK;
    size_t count;
    while (status == BK_OK && (count = key_reader_next(&job->reader, keys, CLI_BATCH)) > 0) {
        size_t fresh = 0;
        status = bk_filter_add_batch(job->filter, keys, count, &fresh);
        new_keys += fresh;
        progress_update(&job->progress, job->reader.keys_read);
    }
    free(keys);
    progress_finish(&job->progress);
    if (job->reader.failed)
        return key_reader_error(&job->reader);
    if (status != BK_OK)
        return add_error(job, status);
    if (!job->args->quiet)
        fprintf(job->report, "read %llu keys, %llu new\n",
                (unsigned long long)job->reader.keys_read, (unsigned long long)new_keys);
    if (write_back(job) != CLI_OK)
        return CLI_ERROR;
    warn_if_past_design_point(job);
    return CLI_OK;
}

int cli_add(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(argc, argv,
                           OPT_BIT(OPT_NUL) | OPT_BIT(OPT_QUIET) | OPT_BIT(OPT_KEY_FILE) |
                               OPT_BIT(OPT_FORCE) | OPT_BIT(OPT_NO_WAIT),
                           &args);
    if (result < 0)
        return cli_usage(add_usage);
    if (result != CLI_OK)
        return result;
    if (args.positional_count < 1) {
        result = cli_usage_error(add_usage, "add needs a FILE");
    } else {
        update_job job;
        result = start_job(&job, &args, "added");
        if (result == CLI_OK)
            result = add_keys(&job);
        end_job(&job);
    }
    cli_args_free(&args);
    return result;
}

/* ------------------------------------------------------------------------ */
/* remove                                                                   */
/* ------------------------------------------------------------------------ */

static int remove_error(const update_job *job, bk_status status)
{
    bk_kind kind = bk_filter_kind(job->filter);
    const char *name = strcmp(job->path, "-") == 0 ? "standard input" : job->path;
    if (status == BK_EUNSUPPORTED)
        return cli_error("%s is a %s filter, which cannot remove keys (counting, cuckoo "
                         "and quotient filters can)",
                         name, bk_kind_name(kind));
    if (status == BK_EIMMUTABLE)
        return cli_error("%s is a static %s filter, which cannot remove keys (rebuild it "
                         "with 'bloomkit build')",
                         name, bk_kind_name(kind));
    return cli_error("cannot remove from %s: %s (nothing written)", name, bk_strerror(status));
}

static int remove_keys(update_job *job)
{
    bk_key *keys = malloc(CLI_BATCH * sizeof *keys);
    if (keys == NULL)
        return cli_error("out of memory");
    uint64_t removed = 0, not_found = 0;
    bk_status status = BK_OK;
    size_t count;
    while (status == BK_OK && (count = key_reader_next(&job->reader, keys, CLI_BATCH)) > 0) {
        for (size_t i = 0; i < count && status == BK_OK; i++) {
            status = bk_filter_remove(job->filter, keys[i].data, keys[i].len);
            if (status == BK_ENOTFOUND) {
                not_found++;
                status = BK_OK;
            } else if (status == BK_OK) {
                removed++;
            }
        }
        progress_update(&job->progress, job->reader.keys_read);
    }
    free(keys);
    progress_finish(&job->progress);
    if (job->reader.failed)
        return key_reader_error(&job->reader);
    if (status != BK_OK)
        return remove_error(job, status);
    if (!job->args->quiet)
        fprintf(job->report, "removed %llu keys, %llu not found\n", (unsigned long long)removed,
                (unsigned long long)not_found);
    bool write = removed > 0 || job->update == NULL;
    if (write ? write_back(job) != CLI_OK : output_finish() != CLI_OK)
        return CLI_ERROR;
    return not_found > 0 ? CLI_NO : CLI_OK;
}

int cli_remove(int argc, char **argv)
{
    cli_args args;
    int result = cli_parse(argc, argv,
                           OPT_BIT(OPT_NUL) | OPT_BIT(OPT_QUIET) | OPT_BIT(OPT_KEY_FILE) |
                               OPT_BIT(OPT_FORCE) | OPT_BIT(OPT_NO_WAIT),
                           &args);
    if (result < 0)
        return cli_usage(remove_usage);
    if (result != CLI_OK)
        return result;
    if (args.positional_count < 1) {
        result = cli_usage_error(remove_usage, "remove needs a FILE");
    } else {
        update_job job;
        result = start_job(&job, &args, "removed");
        if (result == CLI_OK)
            result = remove_keys(&job);
        end_job(&job);
    }
    cli_args_free(&args);
    return result;
}
