/*
 * cli/keys.c -- reading keys fast, the progress line, buffered output.
 *
 * Keys from a stream are cut straight out of a large read buffer: one
 * fread of up to 1 MiB, then memchr for each delimiter.  The keys handed
 * back point into the buffer (no copy); the unfinished last record is
 * moved to the front before the next read.  A key longer than the buffer
 * grows it.
 *
 *     buffer: [ consumed | key\n key\n key\n par | free space ]
 *                        ^start               ^ ^end
 *                                             partial record, kept
 *
 * Line mode removes the '\n' and one '\r' before it (CRLF files give the
 * same keys as LF files); -0 mode keeps every byte of each NUL-terminated
 * record.  Either way an unterminated final record is a key.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define READ_BUFFER_BYTES ((size_t)1 << 20)

bool keys_from_stdin(char **operands, size_t operand_count)
{
    return operand_count == 0 || (operand_count == 1 && strcmp(operands[0], "-") == 0);
}

void key_reader_init(key_reader *reader, char **operands, size_t operand_count, bool nul,
                     bool quiet)
{
    memset(reader, 0, sizeof *reader);
    reader->delimiter = nul ? '\0' : '\n';
    if (!keys_from_stdin(operands, operand_count)) {
        reader->operands = operands;
        reader->operand_count = operand_count;
        return;
    }
    reader->stream = stdin;
    if (!quiet && isatty(STDIN_FILENO))
        fprintf(stderr, "bloomkit: reading keys from the terminal, one per line (end with "
                        "Ctrl-D)\n");
}

void key_reader_free(key_reader *reader)
{
    free(reader->buffer);
    reader->buffer = NULL;
}

static void fail(key_reader *reader, int errno_value)
{
    reader->failed = true;
    reader->errno_value = errno_value;
}

/* Makes room for at least one more read: compacts, then grows if full. */
static bool make_room(key_reader *reader, bool keep_consumed)
{
    if (!keep_consumed && reader->start > 0) {
        memmove(reader->buffer, reader->buffer + reader->start, reader->end - reader->start);
        reader->end -= reader->start;
        reader->start = 0;
    }
    if (reader->end < reader->capacity)
        return true;
    size_t capacity = reader->capacity ? reader->capacity * 2 : READ_BUFFER_BYTES;
    char *grown = capacity > reader->capacity ? realloc(reader->buffer, capacity) : NULL;
    if (grown == NULL) {
        fail(reader, ENOMEM);
        return false;
    }
    reader->buffer = grown;
    reader->capacity = capacity;
    return true;
}

/* One read into the free space; false at end of stream or on error. */
static bool fill(key_reader *reader, bool keep_consumed)
{
    if (reader->end_of_stream || !make_room(reader, keep_consumed))
        return false;
    size_t n = fread(reader->buffer + reader->end, 1, reader->capacity - reader->end,
                     reader->stream);
    reader->end += n;
    if (n == 0) {
        reader->end_of_stream = true;
        if (ferror(reader->stream))
            fail(reader, errno);
        return false;
    }
    return true;
}

static bk_key make_key(const key_reader *reader, size_t from, size_t to)
{
    if (reader->delimiter == '\n' && to > from && reader->buffer[to - 1] == '\r')
        to--;
    bk_key key = { reader->buffer + from, to - from };
    return key;
}

/* The next complete record in [start, end), or the final unterminated one
 * at end of stream.  False if there is none (yet). */
static bool take_record(key_reader *reader, bk_key *key)
{
    size_t available = reader->end - reader->start;
    if (available == 0)
        return false;
    const char *begin = reader->buffer + reader->start;
    const char *delimiter = memchr(begin, reader->delimiter, available);
    if (delimiter == NULL) {
        if (!reader->end_of_stream)
            return false;
        *key = make_key(reader, reader->start, reader->end);
        reader->start = reader->end;
        return true;
    }
    size_t stop = (size_t)(delimiter - reader->buffer);
    *key = make_key(reader, reader->start, stop);
    reader->start = stop + 1;
    return true;
}

static size_t next_operands(key_reader *reader, bk_key *keys, size_t max)
{
    size_t count = 0;
    while (count < max && reader->operand_next < reader->operand_count) {
        const char *text = reader->operands[reader->operand_next++];
        keys[count].data = text;
        keys[count].len = strlen(text);
        count++;
    }
    return count;
}

size_t key_reader_next(key_reader *reader, bk_key *keys, size_t max)
{
    size_t count;
    if (reader->stream == NULL) {
        count = next_operands(reader, keys, max);
    } else {
        count = 0;
        while (count < max && !reader->failed) {
            if (take_record(reader, &keys[count])) {
                count++;
                continue;
            }
            /* Hand back what we have before a refill moves the buffer. */
            if (count > 0 || reader->end_of_stream)
                break;
            fill(reader, false); /* data, end of stream (take the last record) or failure */
        }
        if (reader->failed)
            count = 0;
    }
    reader->keys_read += count;
    return count;
}

int key_reader_all(key_reader *reader, bk_key **keys, size_t *count)
{
    size_t capacity = reader->stream == NULL ? reader->operand_count : 0;
    if (reader->stream != NULL) {
        while (fill(reader, true))
            continue;
        if (reader->failed)
            return key_reader_error(reader);
        const char *data = reader->buffer;
        for (size_t i = 0; i < reader->end; i++)
            capacity += data[i] == reader->delimiter;
        capacity += 1; /* an unterminated last record */
    }
    bk_key *all = malloc((capacity ? capacity : 1) * sizeof *all);
    if (all == NULL)
        return cli_error("out of memory for %zu keys", capacity);
    size_t n = 0, got;
    while (n < capacity && (got = key_reader_next(reader, all + n, capacity - n)) > 0)
        n += got;
    if (reader->failed) {
        free(all);
        return key_reader_error(reader);
    }
    *keys = all;
    *count = n;
    return CLI_OK;
}

int key_reader_error(const key_reader *reader)
{
    if (reader->errno_value == ENOMEM)
        return cli_error("out of memory reading keys (a key longer than memory?)");
    return cli_error("cannot read keys from standard input: %s",
                     reader->errno_value ? strerror(reader->errno_value) : "read error");
}

/* ------------------------------------------------------------------------ */
/* Progress line                                                            */
/* ------------------------------------------------------------------------ */

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

void progress_start(progress *p, const char *verb, bool quiet)
{
    memset(p, 0, sizeof *p);
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->verb = verb;
    p->delay = 1.0;
    const char *delay = getenv("BLOOMKIT_PROGRESS_DELAY");
    if (delay != NULL && *delay != '\0') {
        char *end;
        double value = strtod(delay, &end);
        if (*end == '\0' && value >= 0)
            p->delay = value;
    }
    p->started = seconds_now();
}

void progress_update(progress *p, uint64_t done)
{
    if (!p->enabled)
        return;
    double now = seconds_now();
    double elapsed = now - p->started;
    if (elapsed < p->delay || (p->shown && now - p->last_shown < 0.25))
        return;
    fprintf(stderr, "\rbloomkit: %s %llu keys (%.2f million/s)\033[K", p->verb,
            (unsigned long long)done, elapsed > 0 ? 1e-6 * (double)done / elapsed : 0.0);
    fflush(stderr);
    p->shown = true;
    p->last_shown = now;
}

void progress_finish(progress *p)
{
    if (p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->shown = false;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

#define OUTPUT_BUFFER_BYTES ((size_t)1 << 18)

void output_init(void)
{
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOFBF, OUTPUT_BUFFER_BYTES);
}

void output_key(const bk_key *key, char delimiter)
{
    fwrite(key->data, 1, key->len, stdout);
    putc(delimiter, stdout);
}

int output_finish(void)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        return cli_error("cannot write standard output: %s", strerror(errno));
    return CLI_OK;
}
