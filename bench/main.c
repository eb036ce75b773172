/*
 * bench/main.c -- bloomkit-bench: how fast is each kind of filter, next to
 * the machine's own limits and next to a peer library?
 *
 * For each key type (8-byte integers, 16-byte strings), each size n and each
 * kind this build has (found at run time, bench/options.c), plus Debian's
 * libbloom when the build found it, the program times:
 *
 *   inserts    one precomputed hash per call, batches of raw keys, or the
 *              build of a static kind (bench/forms.c, bench/run.c)
 *   queries    over present and absent keys in every query form of
 *              bench/forms.c: one key per call from its hash or its bytes,
 *              the inline views, batches of bk_key descriptors, packed keys
 *              and hashes; a present key reported absent is a false
 *              negative, and the forms must agree on every answer
 *   accuracy   the FPR over the absent keys; bits per key = bytes * 8 / n
 *   limits     one random cache-line read in a buffer of the filter's size
 *              and in its own bit array, and one key hashed and its line
 *              read (bench/machine.c): the floors the queries are held to
 *   design     once per run: microseconds per bk_filter_create of each
 *              dynamic kind for 1,000 keys
 *   one key    after each block, bloom, blocked, sbbf and fuse8 one key per
 *              call and through the inline views built at -O2 and at
 *              -march=native, beside the fastest peers of the same design
 *              where the build has them (bench/one_key.c, bench/peers.h)
 *
 * The program pins itself to one CPU (the one it starts on, or --cpu N), so
 * that a kind, its peer and the machine's limits are timed on the same
 * core: the two CPUs of a virtual machine can differ widely in the same
 * minute (docs/PERFORMANCE.md).  It locks its memory as it is touched, so
 * that memory reclaim cannot evict a filter between two passes.
 *
 * Output (bench/report.c): a table per (key type, n) on stdout, progress on
 * stderr, and with --csv FILE a long-form CSV (keytype,n,kind,metric,value)
 * that scripts/bench-targets.sh holds against the speed targets and
 * scripts/plot-bench.sh plots.  Exit status: 0, 1 if a row is wrong (false
 * negatives, forms that disagree), 2 for bad options or no memory.
 */
#define _GNU_SOURCE /* MCL_ONFAULT, sched_setaffinity, sched_getcpu */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "run.h"

/* Locks every page as it is first touched (MCL_ONFAULT: nothing is
 * populated early, so huge pages still form): virtual machines may run
 * memory reclaim (DAMON "pageout") that otherwise evicts a filter between
 * two passes, and the next pass then times page faults, not the filter.
 * True if locked. */
static bool lock_memory(const options *opts)
{
#ifdef MCL_ONFAULT
    if (!opts->no_mlock)
        return mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == 0;
#else
    (void)opts;
#endif
    return false;
}

/* Pins the run to one CPU: *pinned gets it, or -1 when the run stays free.
 * False when --cpu N was asked for and cannot be had; without --cpu, a
 * failure to pin leaves the run free and the header says so. */
static bool pin_to_cpu(const options *opts, int *pinned)
{
    *pinned = -1;
    if (opts->no_pin)
        return true;
    int cpu = opts->cpu >= 0 ? opts->cpu : sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return opts->cpu < 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        if (opts->cpu >= 0)
            fprintf(stderr, "bloomkit-bench: cannot run on CPU %d: %s\n", cpu, strerror(errno));
        return opts->cpu < 0;
    }
    *pinned = cpu;
    return true;
}

int main(int argc, char **argv)
{
    options opts;
    int pinned_cpu;
    if (parse_options(argc, argv, &opts) != 0 || !pin_to_cpu(&opts, &pinned_cpu))
        return 2;
    if (opts.hash_cost)
        return run_hash_cost();
    bool memory_locked = lock_memory(&opts);
    subject subjects[MAX_SUBJECTS];
    size_t subject_count;
    if (choose_subjects(&opts, subjects, &subject_count) != 0)
        return 2;
    bench_run run = { .opts = &opts, .subjects = subjects, .subject_count = subject_count };
    if (opts.csv_path != NULL && (run.csv = fopen(opts.csv_path, "w")) == NULL) {
        fprintf(stderr, "bloomkit-bench: cannot write %s: %s\n", opts.csv_path, strerror(errno));
        return 2;
    }
    report_header(&opts, run.csv, pinned_cpu, memory_locked);
    if (bench_hash_algorithm != BK_HASH_XXH3)
        printf("hash: %s (--hash)\n", bk_hash_algorithm_name(bench_hash_algorithm));
    report_subjects(subjects, subject_count);
    report_peers(run.csv);
    report_design_times(&run);
    uint64_t begin = bench_now_ns();
    for (int t = 0; t < KEY_TYPE_COUNT; t++) {
        if (opts.key_types[t] && run_key_type(&run, (key_type)t) != 0) {
            fprintf(stderr, "bloomkit-bench: out of memory\n");
            run.exit_code = 2;
            break;
        }
    }
    char peak[64];
    read_first_match("/proc/self/status", "VmHWM", peak, sizeof peak);
    printf("\nwall time: %.1f s; peak memory: %s\n", (double)(bench_now_ns() - begin) / 1e9,
           peak);
    if (run.csv != NULL)
        fclose(run.csv);
    run_free(&run);
    return run.exit_code;
}
