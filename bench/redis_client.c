/*
 * bench/redis_client.c -- bloomkit-redis-client, the load generator of the
 * Redis module benchmark (bench/redis_bench.sh): how many commands per
 * second ONE redis-server answers, with the client out of the way.
 *
 * Why not redis-benchmark.  redis-benchmark formats every command as it
 * goes (a random number per placeholder) and parses every reply into an
 * object; on a 2-core machine it shares the cores with the server, and at
 * a million commands per second its own work is a good part of what is
 * measured.  This client does its work before the clock starts: it builds
 * every command of the run, RESP-encoded, into one buffer, then only
 * copies bytes to the socket and counts replies (a byte scan, no objects).
 *
 * The run:
 *
 *     buffer:  *3 $6 BF.ADD $2 bf $14 k:000381923012 | *3 ... | ...
 *              \____________ command 0 ______________/  requests commands
 *
 *     one TCP connection, non-blocking; at most `depth` commands are in
 *     flight (sent, reply not yet read): the socket is written up to the
 *     end of command (replied + depth) and read whenever it is readable.
 *     commands/s = requests / (time of the last reply - time of the first
 *     byte sent).
 *
 * Items are "k:" and 12 decimal digits of a number below 10^9 (the form of
 * redis-benchmark's __rand_int__ with -r 1000000000), drawn from a
 * splitmix64 sequence of the given seed: the same seed gives the same
 * commands, so two modules are given identical work.  With -u FIRST the
 * numbers are FIRST, FIRST + 1, ... instead (distinct items, to fill a
 * filter to its capacity).  -t puts a word between the key and the items
 * (CF.INSERT key ITEMS ...).
 *
 * usage: bloomkit-redis-client -p PORT -c COMMAND -k KEY [-t TOKEN]
 *            [-n REQUESTS] [-i ITEMS_PER_COMMAND] [-d DEPTH] [-s SEED | -u FIRST]
 * prints "<commands/s> <error replies> <yes answers>" on one line: error
 * replies are counted (a benchmark whose adds fail measures nothing), and
 * the integer or boolean answers 1 / true, nested ones included (present
 * items of an MEXISTS: the false positives of absent ones).
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Commands in flight by default.  The server reads its socket 16 KiB at a
 * time (about 400 single-item commands) and answers a read's commands
 * before it reads again: fewer in flight than a few reads' worth leave it
 * waiting for the client between reads, and that idle time, the same for
 * any module, dilutes the modules' differences (docs/REDIS.md, "Speed"). */
#define DEFAULT_DEPTH 1024

typedef struct options {
    int port;
    const char *command, *key, *token; /* token: a word after the key (ITEMS) */
    size_t requests, items, depth;
    uint64_t seed;
    long long first; /* >= 0: items first, first + 1, ... instead of random */
} options;

/* A growing byte buffer: the commands, back to back. */
typedef struct buffer {
    char *bytes;
    size_t size, capacity;
} buffer;

static void buffer_append(buffer *b, const char *text, size_t len)
{
    if (b->size + len > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 1u << 20;
        while (capacity < b->size + len)
            capacity *= 2;
        char *grown = realloc(b->bytes, capacity);
        if (grown == NULL) {
            fprintf(stderr, "redis_client: out of memory\n");
            exit(1);
        }
        b->bytes = grown;
        b->capacity = capacity;
    }
    memcpy(b->bytes + b->size, text, len);
    b->size += len;
}

/* One RESP bulk string, $len\r\ntext\r\n. */
static void append_bulk(buffer *b, const char *text, size_t len)
{
    char head[32];
    int n = snprintf(head, sizeof head, "$%zu\r\n", len);
    buffer_append(b, head, (size_t)n);
    buffer_append(b, text, len);
    buffer_append(b, "\r\n", 2);
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Every command of the run; ends[i] is the offset just past command i. */
static buffer build_commands(const options *o, size_t **ends_out)
{
    buffer b = { NULL, 0, 0 };
    size_t *ends = malloc(o->requests * sizeof *ends);
    if (ends == NULL) {
        fprintf(stderr, "redis_client: out of memory\n");
        exit(1);
    }
    uint64_t state = o->seed;
    char head[32], item[32];
    unsigned long long next = (unsigned long long)o->first;
    for (size_t i = 0; i < o->requests; i++) {
        int n = snprintf(head, sizeof head, "*%zu\r\n", o->items + 2 + (o->token != NULL));
        buffer_append(&b, head, (size_t)n);
        append_bulk(&b, o->command, strlen(o->command));
        append_bulk(&b, o->key, strlen(o->key));
        if (o->token != NULL)
            append_bulk(&b, o->token, strlen(o->token));
        for (size_t j = 0; j < o->items; j++) {
            unsigned long long value = o->first >= 0 ? next++ : splitmix64(&state) % 1000000000u;
            n = snprintf(item, sizeof item, "k:%012llu", value);
            append_bulk(&b, item, (size_t)n);
        }
        ends[i] = b.size;
    }
    *ends_out = ends;
    return b;
}

/* The end of the line starting at p (just past its \r\n), NULL if the
 * buffer ends first. */
static const char *line_end(const char *p, const char *end)
{
    const char *cr = memchr(p, '\r', (size_t)(end - p));
    return cr != NULL && cr + 1 < end ? cr + 2 : NULL;
}

/* What the replies said: errors, and answers "yes" (:1 or #t). */
typedef struct tally {
    size_t errors, yes;
} tally;

/* Skips one complete reply starting at p: the byte after it, or NULL if
 * the buffer ends first (then the tally may have counted part of it: the
 * caller keeps a copy).  Nested replies are counted too. */
static const char *skip_reply(const char *p, const char *end, tally *t)
{
    if (p >= end)
        return NULL;
    const char *next = line_end(p, end);
    if (next == NULL)
        return NULL;
    long long n = strtoll(p + 1, NULL, 10);
    switch (*p) {
    case '-': t->errors++; return next;
    case ':':
    case '#': t->yes += p[1] == '1' || p[1] == 't'; return next;
    case '$':
        if (n < 0)
            return next;
        return end - next >= n + 2 ? next + n + 2 : NULL;
    case '*':
    case '~':
    case '%':
        for (long long i = 0; i < (*p == '%' ? 2 * n : n) && next != NULL; i++)
            next = skip_reply(next, end, t);
        return next;
    default: return next; /* + : # , _ and the like: one line */
    }
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || (connect(fd, (struct sockaddr *)&address, sizeof address) != 0 &&
                   errno != EINPROGRESS)) {
        perror("redis_client: connect");
        exit(1);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Sends every command with at most o->depth in flight; returns the
 * seconds from the first byte sent to the last reply read. */
static double run(const options *o, const buffer *commands, const size_t *ends, tally *t)
{
    int fd = connect_to(o->port);
    size_t sent = 0, replied = 0;
    size_t in_size = 0, in_capacity = 1u << 20;
    char *in = malloc(in_capacity);
    if (in == NULL) {
        fprintf(stderr, "redis_client: out of memory\n");
        exit(1);
    }
    double start = seconds_now();
    while (replied < o->requests) {
        size_t window = replied + o->depth < o->requests ? replied + o->depth : o->requests;
        size_t limit = ends[window - 1];
        struct pollfd p = { fd, (short)(POLLIN | (sent < limit ? POLLOUT : 0)), 0 };
        if (poll(&p, 1, 10000) <= 0) {
            fprintf(stderr, "redis_client: the server stopped answering\n");
            exit(1);
        }
        if ((p.revents & POLLOUT) && sent < limit) {
            ssize_t n = write(fd, commands->bytes + sent, limit - sent);
            if (n > 0)
                sent += (size_t)n;
        }
        if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
            if (in_size == in_capacity) {
                in_capacity *= 2;
                char *grown = realloc(in, in_capacity);
                if (grown == NULL) {
                    fprintf(stderr, "redis_client: out of memory\n");
                    exit(1);
                }
                in = grown;
            }
            ssize_t n = read(fd, in + in_size, in_capacity - in_size);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                fprintf(stderr, "redis_client: the server closed the connection\n");
                exit(1);
            }
            if (n > 0)
                in_size += (size_t)n;
            const char *at = in, *end = in + in_size, *next;
            tally counted = *t;
            while (replied < o->requests && (next = skip_reply(at, end, &counted)) != NULL) {
                at = next;
                replied++;
                *t = counted;
            }
            in_size = (size_t)(end - at);
            memmove(in, at, in_size);
        }
    }
    double elapsed = seconds_now() - start;
    free(in);
    close(fd);
    return elapsed;
}

static void usage(void)
{
    fprintf(stderr, "usage: bloomkit-redis-client -p PORT -c COMMAND -k KEY [-t TOKEN]\n"
                    "           [-n REQUESTS] [-i ITEMS_PER_COMMAND] [-d DEPTH]\n"
                    "           [-s SEED | -u FIRST]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    options o = { 0, NULL, NULL, NULL, 1000000, 1, DEFAULT_DEPTH, 1, -1 };
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *flag = argv[i], *value = argv[i + 1];
        if (strcmp(flag, "-p") == 0)
            o.port = atoi(value);
        else if (strcmp(flag, "-c") == 0)
            o.command = value;
        else if (strcmp(flag, "-k") == 0)
            o.key = value;
        else if (strcmp(flag, "-n") == 0)
            o.requests = strtoull(value, NULL, 10);
        else if (strcmp(flag, "-i") == 0)
            o.items = strtoull(value, NULL, 10);
        else if (strcmp(flag, "-d") == 0)
            o.depth = strtoull(value, NULL, 10);
        else if (strcmp(flag, "-t") == 0)
            o.token = value;
        else if (strcmp(flag, "-s") == 0)
            o.seed = strtoull(value, NULL, 10);
        else if (strcmp(flag, "-u") == 0)
            o.first = strtoll(value, NULL, 10);
        else
            usage();
    }
    if (argc % 2 == 0 || o.port <= 0 || o.command == NULL || o.key == NULL || o.requests == 0 ||
        o.depth == 0)
        usage();
    size_t *ends;
    buffer commands = build_commands(&o, &ends);
    tally t = { 0, 0 };
    double elapsed = run(&o, &commands, ends, &t);
    printf("%.0f %zu %zu\n", (double)o.requests / elapsed, t.errors, t.yes);
    free(commands.bytes);
    free(ends);
    return 0;
}
