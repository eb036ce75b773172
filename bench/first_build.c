/*
 * bench/first_build.c -- bloomkit-bench-first-build: what a command-line
 * user sees when a program builds one filter and exits.  Each build runs
 * in a fresh process (fork and exec of this program), which generates its
 * keys, then times the build alone with getrusage and the monotonic clock:
 *
 *   user ns/key   CPU time in the program (hashing, placing keys)
 *   sys ns/key    CPU time in the kernel: above all populating the new
 *                 memory (page faults, zeroing, huge-page compaction; in a
 *                 virtual machine also the host backing the guest's pages)
 *   wall ns/key   elapsed
 *   query ns      one random present key per bk_filter_contains afterwards
 *                 (thread CPU time): what the pages chosen give the queries
 *   huge MiB      anonymous memory in huge pages the build added
 *
 * under each huge-page policy of src/memory.c, forced in the child through
 * BLOOMKIT_HUGEPAGE (auto: the library's choice; always: the hint on every
 * large allocation; never: 4 KiB pages), interleaved: round r runs every
 * (kind, policy) once before round r + 1 runs any, and each figure is the
 * median over the rounds.  A static kind is built with bk_filter_build, a
 * dynamic one created and filled with bk_filter_add_batch.
 *
 *   bloomkit-bench-first-build [--kinds fuse8,blocked] [--sizes 1e6,1e7]
 *                              [--keys int64|str16] [--rounds 5]
 *
 * Exit status 0, 2 for bad options or a child that failed.
 */
#define _GNU_SOURCE /* environ */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_ITEMS 8
#define MAX_ROUNDS 15
#define QUERIES 1000000

static const char *const policies[] = { "auto", "always", "never" };
#define POLICIES (sizeof policies / sizeof policies[0])

/* What one child measured. */
typedef struct build_figures {
    double user_ns, sys_ns, wall_ns, query_ns, huge_mb;
} build_figures;

static double timeval_ns(struct timeval t)
{
    return (double)t.tv_sec * 1e9 + (double)t.tv_usec * 1e3;
}

/* CPU time of this thread: on a loaded machine, unlike the wall clock, it
 * leaves out the time other processes ran. */
static uint64_t thread_cpu_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* ----------------------------------------------------------------- child */

/* Builds a filter of `kind` over n keys and prints its figures on one
 * line.  0, or 1 (the reason on stderr). */
static int child(const char *kind_name, uint64_t n, key_type type)
{
    bk_kind kind;
    if (bk_kind_from_name(kind_name, &kind) != BK_OK || !bk_kind_available(kind)) {
        fprintf(stderr, "first-build: no kind %s in this build\n", kind_name);
        return 1;
    }
    key_set keys;
    if (key_set_generate(&keys, type, 0, (size_t)n) != 0)
        return 1;
    bk_params params = { .capacity = n, .fpr = 0.01 };
    bk_filter *filter = NULL;
    double huge_before = process_huge_mb(); /* the keys' own arrays */
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    uint64_t begin = bench_now_ns();
    bk_status status;
    if (bk_kind_is_static(kind)) {
        status = bk_filter_build(kind, &params, keys.keys, keys.count, &filter);
    } else {
        status = bk_filter_create(kind, &params, &filter);
        if (status == BK_OK)
            status = bk_filter_add_batch(filter, keys.keys, keys.count, NULL);
    }
    uint64_t end = bench_now_ns();
    getrusage(RUSAGE_SELF, &after);
    if (status != BK_OK) {
        fprintf(stderr, "first-build: %s: %s\n", kind_name, bk_strerror(status));
        return 1;
    }
    /* present keys in their order: random places in the filter (the keys
     * are splitmix64 outputs), sequential reads of the key array */
    size_t queries = keys.count < QUERIES ? keys.count : QUERIES;
    uint64_t hits = 0, query_begin = thread_cpu_ns();
    for (size_t i = 0; i < queries; i++)
        hits += bk_filter_contains(filter, keys.keys[i].data, keys.keys[i].len);
    double query_ns = (double)(thread_cpu_ns() - query_begin) / (double)queries;
    double per_key = (double)n;
    printf("%.6g %.6g %.6g %.6g %.6g\n",
           (timeval_ns(after.ru_utime) - timeval_ns(before.ru_utime)) / per_key,
           (timeval_ns(after.ru_stime) - timeval_ns(before.ru_stime)) / per_key,
           (double)(end - begin) / per_key, hits == queries ? query_ns : NAN,
           process_huge_mb() - huge_before);
    bk_filter_free(filter);
    key_set_free(&keys);
    return 0;
}

/* ---------------------------------------------------------------- parent */

/* Runs one child under `policy`; false if it failed. */
static bool run_child(const char *self, const char *kind, uint64_t n, key_type type,
                      const char *policy, build_figures *out)
{
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        return false;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        char size[32];
        snprintf(size, sizeof size, "%llu", (unsigned long long)n);
        dup2(pipe_fds[1], STDOUT_FILENO);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        unsetenv("BLOOMKIT_NO_HUGEPAGE");
        setenv("BLOOMKIT_HUGEPAGE", policy, 1);
        execl(self, self, "--child", kind, size, key_type_name(type), (char *)NULL);
        _exit(127);
    }
    close(pipe_fds[1]);
    FILE *from_child = fdopen(pipe_fds[0], "r");
    int read = from_child == NULL
                   ? 0
                   : fscanf(from_child, "%lf %lf %lf %lf %lf", &out->user_ns, &out->sys_ns,
                            &out->wall_ns, &out->query_ns, &out->huge_mb);
    if (from_child != NULL)
        fclose(from_child);
    int wait_status;
    while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    return read == 5 && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

static double median_of(const build_figures *rounds, int count, size_t offset)
{
    double values[MAX_ROUNDS];
    for (int r = 0; r < count; r++)
        values[r] = *(const double *)((const char *)&rounds[r] + offset);
    return bench_median(values, (size_t)count);
}

static void usage(FILE *out)
{
    fputs(
        "usage: bloomkit-bench-first-build [--kinds LIST] [--sizes LIST] [--keys int64|str16]\n"
        "                                  [--rounds N]\n"
        "  each build in a fresh process, under the huge-page policies auto (the\n"
        "  library's), always and never; defaults: --kinds fuse8,blocked --sizes 1e7\n"
        "  --keys int64 --rounds 5\n",
        out);
}

/* Splits a comma-separated list into at most MAX_ITEMS items. */
static size_t split(char *list, char **items)
{
    size_t count = 0;
    for (char *item = strtok(list, ","); item != NULL && count < MAX_ITEMS;
         item = strtok(NULL, ","))
        items[count++] = item;
    return count;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--child") == 0)
        return child(argv[2], strtoull(argv[3], NULL, 10),
                     strcmp(argv[4], "str16") == 0 ? KEY_STR16 : KEY_INT64);
    char default_kinds[] = "fuse8,blocked", default_sizes[] = "1e7";
    char *kinds[MAX_ITEMS], *size_texts[MAX_ITEMS];
    size_t kind_count = split(default_kinds, kinds),
           size_count = split(default_sizes, size_texts);
    key_type type = KEY_INT64;
    int rounds = 5;
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = value != NULL;
        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (ok && strcmp(argv[i], "--kinds") == 0) {
            kind_count = split(argv[i + 1], kinds);
        } else if (ok && strcmp(argv[i], "--sizes") == 0) {
            size_count = split(argv[i + 1], size_texts);
        } else if (ok && strcmp(argv[i], "--keys") == 0) {
            ok = strcmp(value, "int64") == 0 || strcmp(value, "str16") == 0;
            type = strcmp(value, "str16") == 0 ? KEY_STR16 : KEY_INT64;
        } else if (ok && strcmp(argv[i], "--rounds") == 0) {
            rounds = atoi(value);
            ok = rounds >= 1 && rounds <= MAX_ROUNDS;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "first-build: bad option: %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
        i++;
    }
    uint64_t sizes[MAX_ITEMS];
    for (size_t s = 0; s < size_count; s++) {
        double value = strtod(size_texts[s], NULL);
        if (!(value >= 2 && value <= 1e10)) {
            fprintf(stderr, "first-build: bad size %s\n", size_texts[s]);
            return 2;
        }
        sizes[s] = (uint64_t)value;
    }
    static build_figures figures[MAX_ITEMS][MAX_ITEMS][POLICIES][MAX_ROUNDS];
    char self[4096];
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0)
        return 2;
    self[length] = '\0';
    for (int r = 0; r < rounds; r++)
        for (size_t s = 0; s < size_count; s++)
            for (size_t k = 0; k < kind_count; k++)
                for (size_t p = 0; p < POLICIES; p++) {
                    bench_progress("%s n=%llu %s: round %d/%d", kinds[k],
                                   (unsigned long long)sizes[s], policies[p], r + 1, rounds);
                    if (!run_child(self, kinds[k], sizes[s], type, policies[p],
                                   &figures[s][k][p][r]))
                        return 2;
                }
    char thp[128] = "unknown";
    FILE *thp_file = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (thp_file != NULL) {
        if (fgets(thp, sizeof thp, thp_file) != NULL)
            thp[strcspn(thp, "\n")] = '\0';
        fclose(thp_file);
    }
    printf("first build in a fresh process, %s keys, median of %d rounds; "
           "transparent huge pages: %s\n",
           key_type_name(type), rounds, thp);
    printf("%-8s %12s %-7s %9s %9s %9s %9s %9s\n", "kind", "n", "pages", "user ns", "sys ns",
           "wall ns", "query ns", "huge MiB");
    for (size_t s = 0; s < size_count; s++)
        for (size_t k = 0; k < kind_count; k++)
            for (size_t p = 0; p < POLICIES; p++) {
                const build_figures *f = figures[s][k][p];
                printf("%-8s %12llu %-7s %9.1f %9.1f %9.1f %9.1f %9.0f\n", kinds[k],
                       (unsigned long long)sizes[s], policies[p],
                       median_of(f, rounds, offsetof(build_figures, user_ns)),
                       median_of(f, rounds, offsetof(build_figures, sys_ns)),
                       median_of(f, rounds, offsetof(build_figures, wall_ns)),
                       median_of(f, rounds, offsetof(build_figures, query_ns)),
                       median_of(f, rounds, offsetof(build_figures, huge_mb)));
            }
    return 0;
}
