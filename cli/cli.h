/*
 * cli/cli.h -- the subcommands of the `bloomkit` command and the helpers
 * they share (cli/common.c: options, numbers, errors, filter files;
 * cli/keys.c: reading keys, progress line, output).
 *
 * Conventions every subcommand follows (docs/bloomkit.1 is the user's view):
 *   - exit status 0 success, 1 "no" (no key present, a key not found),
 *     2 error; an error prints exactly one line "bloomkit: <problem>" on
 *     standard error (cli_error);
 *   - a command that changes a filter file loads it, changes it in memory
 *     and saves it atomically (bk_filter_save) only if everything worked,
 *     so a failed command never modifies or truncates an existing file.
 */
#ifndef BK_CLI_H
#define BK_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bloomkit.h"

#define CLI_OK 0
#define CLI_NO 1
#define CLI_ERROR 2

/* ------------------------------------------------------------------------ */
/* Subcommands: argv starts at the subcommand's own name                    */
/* ------------------------------------------------------------------------ */

int cli_size(int argc, char **argv);
int cli_create(int argc, char **argv);
int cli_build(int argc, char **argv);
int cli_add(int argc, char **argv);
int cli_remove(int argc, char **argv);
int cli_query(int argc, char **argv);
int cli_info(int argc, char **argv);
int cli_count(int argc, char **argv);
int cli_merge(int argc, char **argv);
int cli_intersect(int argc, char **argv);
int cli_estimate(int argc, char **argv);
int cli_demo(int argc, char **argv);
int cli_parquet_export(int argc, char **argv);
int cli_parquet_import(int argc, char **argv);

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* Prints "bloomkit: <message>\n" on stderr and returns CLI_ERROR. */
int cli_error(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* Prints "bloomkit: warning: <message>\n" on stderr. */
void cli_warning(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

/* Every option any subcommand takes; each subcommand allows a subset. */
typedef enum cli_option_id {
    OPT_HELP,
    OPT_CAPACITY,         /* -n, --capacity */
    OPT_FPR,              /* -p, --fpr */
    OPT_BITS_PER_KEY,     /* --bits-per-key */
    OPT_BITS,             /* --bits (m) */
    OPT_HASHES,           /* --hashes (k) */
    OPT_KIND,             /* --kind */
    OPT_HASH,             /* --hash xxh3|siphash|xxh64 */
    OPT_SEED,             /* --seed */
    OPT_KEY_FILE,         /* --key-file */
    OPT_FINGERPRINT_BITS, /* --fingerprint-bits */
    OPT_EXPANSION,        /* --expansion */
    OPT_TIGHTENING,       /* --tightening */
    OPT_MAX_FILTERS,      /* --max-filters */
    OPT_WINDOW_KEYS,      /* --window-keys */
    OPT_WINDOW_SECONDS,   /* --window-seconds */
    OPT_GENERATIONS,      /* --generations */
    OPT_FORCE,            /* -f, --force */
    OPT_NUL,              /* -0, --null */
    OPT_QUIET,            /* -q, --quiet */
    OPT_INVERT,           /* -v, --absent */
    OPT_COUNT,            /* -c, --count */
    OPT_JSON,             /* --json */
    OPT_MMAP,             /* --mmap */
    OPT_PARQUET,          /* --parquet (sbbf: a size every Parquet reader accepts) */
    OPT_HEADER,           /* --header (Parquet: with the BloomFilterHeader) */
    OPT_OFFSET,           /* --offset (Parquet import: where the filter starts) */
    OPT_NO_WAIT,          /* --no-wait */
    OPT_REMAINDER_BITS,   /* --remainder-bits */
    OPT_AUTO_GROW,        /* --auto-grow */
    OPT_PROMETHEUS,       /* --prometheus */
    OPT_FIELD,            /* --field N */
    OPT_DELIMITER,        /* --delimiter C */
    OPT_COUNT_OF_IDS
} cli_option_id;

_Static_assert(OPT_COUNT_OF_IDS <= 64, "options are kept as bits of a uint64_t");

#define OPT_BIT(id) (UINT64_C(1) << (id)) /* a uint64_t mask: up to 64 options */
/* The options that shape a new filter (create, build, size). */
#define OPT_DESIGN                                                                              \
    (OPT_BIT(OPT_CAPACITY) | OPT_BIT(OPT_FPR) | OPT_BIT(OPT_BITS_PER_KEY) | OPT_BIT(OPT_BITS) | \
     OPT_BIT(OPT_HASHES) | OPT_BIT(OPT_KIND) | OPT_BIT(OPT_HASH) | OPT_BIT(OPT_SEED) |          \
     OPT_BIT(OPT_KEY_FILE) | OPT_BIT(OPT_FINGERPRINT_BITS) | OPT_BIT(OPT_EXPANSION) |           \
     OPT_BIT(OPT_TIGHTENING) | OPT_BIT(OPT_MAX_FILTERS) | OPT_BIT(OPT_WINDOW_KEYS) |            \
     OPT_BIT(OPT_WINDOW_SECONDS) | OPT_BIT(OPT_GENERATIONS) | OPT_BIT(OPT_PARQUET) |            \
     OPT_BIT(OPT_REMAINDER_BITS) | OPT_BIT(OPT_AUTO_GROW))

/* What the command line said, after validation. */
typedef struct cli_args {
    bk_params params;                        /* design options, as bk_params fields */
    bool given[OPT_COUNT_OF_IDS];            /* which options appeared */
    const char *kind_name;                   /* --kind (NULL: not given) */
    uint8_t secret_key[BK_SECRET_KEY_BYTES]; /* from --key-file */
    bool force, nul, quiet, invert, count_only, json, mmap;
    uint64_t offset;      /* --offset */
    bool no_wait;         /* --no-wait: fail instead of waiting for the file's lock */
    bool prometheus;      /* --prometheus */
    unsigned field;       /* --field N (1-based; 0: not given) */
    char field_delimiter; /* --delimiter C (default '\t') */
    char **positional;    /* operands, in order (points into argv) */
    int positional_count;
} cli_args;

/*
 * Parses argv[1..argc) (argv[0] is the subcommand name) against the options
 * in `allowed` (OPT_BIT mask; --help is always allowed).  Options and
 * operands may be mixed; "--" ends the options.  Numbers are checked here,
 * each with its own message.  Returns CLI_OK, CLI_ERROR after printing the
 * problem, or -1 when --help was given (the caller prints its usage).
 * After CLI_OK, `positional` is allocated: release it with cli_args_free
 * (on the other results nothing is left to release).
 */
int cli_parse(int argc, char **argv, uint64_t allowed, cli_args *out);
void cli_args_free(cli_args *args);

/* info --prometheus (cli/prometheus.c): the stats of every file in `paths`
 * in the Prometheus text format; CLI_ERROR if a file could not be read
 * (the others are still printed). */
int cli_info_prometheus(const cli_args *args, char **paths, int path_count);

/* Prints `usage` to stdout and returns CLI_OK (for --help). */
int cli_usage(const char *usage);
/* Prints "bloomkit: <problem>" and the usage's first line, returns CLI_ERROR. */
int cli_usage_error(const char *usage, const char *problem);

/* The kind --kind names (default bloom); CLI_ERROR after a message. */
int cli_kind(const cli_args *args, bk_kind *out);

/* The names of the kinds this build has, comma-separated, in the library's
 * registry order (bk_kind_list), into `buffer` (cut at `size`). */
void cli_list_kinds(char *buffer, size_t size);

/* Checks the design options are consistent (for create/build/size):
 * capacity present when `need_capacity`, --bits with --hashes, ... */
int cli_check_design(const cli_args *args, bool need_capacity);

/* Refuses (CLI_ERROR after a message) an option that `kind` does not use
 * (--expansion on a bloom filter, --bits-per-key on a static kind, ...)
 * and a --generations outside what a window can have: the library's kinds
 * ignore the fields of the others without a word. */
int cli_check_kind_options(const cli_args *args, bk_kind kind);

/* After making `filter` with -p given: CLI_ERROR after a message when its
 * false-positive rate is above the one asked for (a static kind's fixed
 * rate, a cuckoo's fixed fingerprint width), a warning when a static kind's
 * fixed rate is below it (-p did not size it). */
int cli_check_fpr_reached(const cli_args *args, const bk_filter *filter);

/* The one warning (whatever -q says) for a filter past its design point,
 * `name` being its file name or "the filter". */
void cli_warn_if_past_design_point(const bk_filter *filter, const char *name);

/* ------------------------------------------------------------------------ */
/* Filter files ("-" = standard input / output)                             */
/* ------------------------------------------------------------------------ */

/* Loads `path` (or maps it when `map`), with the secret key when --key-file
 * was given (a filter that is not keyed is then refused), and brings a
 * filter whose keys age out by the clock to the current time
 * (cli_settle_clock).  On error prints the problem and returns CLI_ERROR. */
int cli_load(const cli_args *args, const char *path, bool map, bk_filter **out);

/* For create, build, merge, intersect: refuses (CLI_ERROR) an existing
 * `path` unless --force, and always one that is not a regular file (or a
 * symbolic link to one) or that has other hard links. */
int cli_check_output(const cli_args *args, const char *path);

/* Saves atomically to `path` (or writes to stdout for "-"). */
int cli_save(const bk_filter *filter, const char *path);

/* The time of filters whose keys age out by the clock (window with
 * --window-seconds): the wall clock in seconds since 1970, or the value of
 * BLOOMKIT_NOW when it is set (deterministic tests).  CLI_ERROR after a
 * message for a BLOOMKIT_NOW that is not a whole number. */
int cli_now(uint64_t *out);

/* Brings a filter whose keys age out by the clock to cli_now (a filter
 * mapped read-only is replaced by a copy first); any other filter is left
 * as it is.  CLI_ERROR after a message. */
int cli_settle_clock(bk_filter **filter, const char *path);
/* For add and remove: refuses a `path` that is not a regular file, or one
 * without write permission unless --force; then locks it (waiting for
 * another writer unless --no-wait) and loads it for an in-place update
 * (bk_file_update_begin).  CLI_ERROR after a message. */
int cli_update_begin(const cli_args *args, const char *path, bk_file_update **update,
                     bk_filter **filter);
/* Writes the changed filter back in place; CLI_ERROR after a message. */
int cli_update_commit(bk_file_update *update, const bk_filter *filter, const char *path);

/* Makes sure descriptors 0, 1 and 2 are open, so a file the command opens
 * never takes one of their numbers; a closed one is replaced by /dev/null
 * opened in the direction that makes its use fail as before (writing a
 * closed standard output still fails). */
void cli_guard_standard_descriptors(void);

/* Describes why two filters cannot be combined, into buffer. */
void cli_describe_incompatibility(const bk_filter *a, const bk_filter *b, char *buffer,
                                  size_t size);

/* Prints a one-line message for a library error on `path` and returns
 * CLI_ERROR. */
int cli_filter_error(const char *path, const char *doing, bk_status status);

/* JSON output: a string with the escapes JSON needs; a number (null when
 * not finite, which JSON cannot hold). */
void json_string(FILE *out, const char *text);
void json_number(FILE *out, double value);

/* ------------------------------------------------------------------------ */
/* Keys (cli/keys.c)                                                        */
/* ------------------------------------------------------------------------ */

/*
 * Keys come either from operands (each argument one key, exactly its
 * bytes) or from a stream: lines (the '\n' removed, and a '\r' before it,
 * so files with CRLF line ends give the same keys; an unterminated last
 * line is a key; an empty line is the empty key) or NUL-terminated records
 * with -0 (exact bytes, nothing removed).
 */
typedef struct key_reader {
    FILE *stream; /* NULL when the keys are operands */
    char delimiter;
    char **operands;
    size_t operand_count, operand_next;
    char *buffer; /* stream data, [start, end) not yet consumed */
    size_t capacity, start, end;
    bool end_of_stream;
    bool failed; /* a read error (errno_value tells) */
    int errno_value;
    uint64_t keys_read;
} key_reader;

/* True when the keys come from stdin: no key operands, or just "-". */
bool keys_from_stdin(char **operands, size_t operand_count);

/* Keys from the operands, or from stdin (keys_from_stdin); when stdin is a
 * terminal, says so on stderr unless `quiet`. */
void key_reader_init(key_reader *reader, char **operands, size_t operand_count, bool nul,
                     bool quiet);
void key_reader_free(key_reader *reader);

/* Up to `max` keys into keys[]; they stay valid until the next call.
 * 0 at the end of the input, or on a read error (reader->failed) or when
 * memory ran out (reader->failed, errno_value ENOMEM). */
size_t key_reader_next(key_reader *reader, bk_key *keys, size_t max);

/* Every key of the input at once (for build): *keys is allocated, and the
 * keys point into the reader's buffer (valid until key_reader_free). */
int key_reader_all(key_reader *reader, bk_key **keys, size_t *count);

/* Prints the read error message and returns CLI_ERROR. */
int key_reader_error(const key_reader *reader);

/* The progress line: shown on stderr, only when stderr is a terminal and
 * not -q, once the work has taken BLOOMKIT_PROGRESS_DELAY seconds (default
 * 1), refreshed a few times a second, erased at the end. */
typedef struct progress {
    bool enabled;
    bool shown;
    const char *verb;
    double started, delay, last_shown;
} progress;

void progress_start(progress *p, const char *verb, bool quiet);
void progress_update(progress *p, uint64_t done);
void progress_finish(progress *p);

/* Output: stdout fully buffered with a big buffer. */
void output_init(void);
void output_key(const bk_key *key, char delimiter);
/* Flushes stdout; CLI_ERROR with a message if writing failed. */
int output_finish(void);

/* Keys handed to the library per batch call. */
#define CLI_BATCH 8192

#endif
