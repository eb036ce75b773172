/*
 * bench/file_update.c -- bloomkit-bench-file-update: what adding a few keys
 * to a big filter file costs (docs/PERFORMANCE.md, "Updating a file").
 *
 *   bloomkit-bench-file-update [DIR] [--gib G] [--keys K] [--rounds R]
 *
 * Creates a bloom filter file of G GiB (default 1) in DIR (default
 * $TMPDIR or /tmp), then R times (default 5): begins an in-place update
 * (lock, load: map + the kind's copy), adds K fresh keys (default 1,000),
 * commits (encode; one pass checking the old checksum, computing the new
 * one and comparing pages; undo journal, the changed pages, fsync), ends
 * (frees).  Prints each round's wall time split into begin / add / commit
 * / free, and the process's peak
 * resident memory; then checks the file (bk_file_verify) and removes it.
 * The same path `bloomkit add FILE` takes.  Not a test: nothing here is
 * timed against a bound.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bloomkit.h"

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* User + system CPU seconds of this process so far. */
static double cpu_seconds(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

static int fail(const char *what, bk_status status)
{
    fprintf(stderr, "bloomkit-bench-file-update: %s: %s\n", what, bk_strerror(status));
    return 2;
}

/* Creates the G GiB file (k = 7, as a 1% design) holding `count` keys. */
static int create_file(const char *path, double gib)
{
    bk_params params = { 0 };
    params.bits = (uint64_t)(gib * 8.0 * 1024 * 1024 * 1024);
    params.hashes = 7;
    params.capacity = params.bits / 10;
    bk_filter *filter;
    bk_status status = bk_filter_create(BK_KIND_BLOOM, &params, &filter);
    if (status != BK_OK)
        return fail("create", status);
    char key[32];
    for (int i = 0; i < 100000 && status == BK_OK; i++) {
        int length = snprintf(key, sizeof key, "old:%d", i);
        status = bk_filter_add(filter, key, (size_t)length, NULL);
    }
    if (status == BK_OK)
        status = bk_filter_save(filter, path);
    bk_filter_free(filter);
    return status == BK_OK ? 0 : fail("save", status);
}

/* One update of `keys` fresh keys; times into t[0..3]. */
static int update_round(const char *path, int round, int keys, double t[4])
{
    double start = now_seconds();
    bk_file_update *update;
    bk_filter *filter;
    bk_status status = bk_file_update_begin(path, NULL, true, &update, &filter);
    if (status != BK_OK)
        return fail("begin", status);
    double loaded = now_seconds();
    char key[32];
    for (int i = 0; i < keys && status == BK_OK; i++) {
        int length = snprintf(key, sizeof key, "new:%d:%d", round, i);
        status = bk_filter_add(filter, key, (size_t)length, NULL);
    }
    double added = now_seconds();
    if (status == BK_OK)
        status = bk_file_update_commit(update, filter);
    double committed = now_seconds();
    bk_filter_free(filter);
    bk_file_update_end(update);
    double ended = now_seconds();
    if (status != BK_OK)
        return fail("add/commit", status);
    t[0] = loaded - start;
    t[1] = added - loaded;
    t[2] = committed - added;
    t[3] = ended - committed;
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    double gib = 1;
    int keys = 1000, rounds = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--gib") == 0 && i + 1 < argc)
            gib = atof(argv[++i]);
        else if (strcmp(argv[i], "--keys") == 0 && i + 1 < argc)
            keys = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (argv[i][0] != '-')
            dir = argv[i];
        else {
            fprintf(stderr, "usage: bloomkit-bench-file-update [DIR] [--gib G] [--keys K] "
                            "[--rounds R]\n");
            return 2;
        }
    }
    if (!(gib > 0 && gib <= 64) || keys < 0 || rounds < 1) {
        fprintf(stderr, "bloomkit-bench-file-update: --gib in (0, 64], --keys >= 0, "
                        "--rounds >= 1\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/bloomkit-bench-file-update.%ld.bkf", dir, (long)getpid());
    double start = now_seconds();
    if (create_file(path, gib) != 0)
        return 2;
    struct stat st;
    stat(path, &st);
    printf("file: %s, %.3f GiB (created and saved in %.2f s)\n", path,
           (double)st.st_size / (1024.0 * 1024 * 1024), now_seconds() - start);
    printf("adding %d keys per round: wall = begin (lock, map, decode: copy) + add + "
           "commit (encode, checksums + compare, journal, write, fsync) + free\n",
           keys);
    int result = 0;
    for (int round = 0; round < rounds && result == 0; round++) {
        double t[4];
        double cpu = cpu_seconds();
        result = update_round(path, round, keys, t);
        cpu = cpu_seconds() - cpu;
        if (result == 0)
            printf("  round %d: %.3f s = %.3f + %.3f + %.3f + %.3f  (CPU %.3f s)\n", round + 1,
                   t[0] + t[1] + t[2] + t[3], t[0], t[1], t[2], t[3], cpu);
    }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("peak resident memory: %.0f MiB\n", (double)usage.ru_maxrss / 1024.0);
    bk_status verified = bk_file_verify(path);
    printf("bk_file_verify: %s\n", bk_strerror(verified));
    unlink(path);
    return result != 0 || verified != BK_OK ? 2 : 0;
}
