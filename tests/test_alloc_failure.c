/*
 * tests/test_alloc_failure.c -- every allocation the library makes, made to
 * fail in turn.
 *
 * The test is linked with -Wl,--wrap for malloc, calloc, realloc,
 * aligned_alloc, strdup, strndup, free, mmap, munmap and madvise (see
 * tests/CMakeLists.txt): the library's calls to them land in the __wrap_
 * functions below, which count what is live and, when armed, fail one call
 * (the n-th after arming) or every call from the n-th on.  madvise counts as
 * an allocation only for MADV_POPULATE_WRITE, where the kernel commits the
 * memory of a big filter (src/memory.c) and may answer ENOMEM.
 *
 * Each scenario is swept: n = 0, 1, 2, ... until a run makes fewer than n + 1
 * allocations, i.e. runs clean.  At every n it checks
 *   - the status: BK_ENOMEM (BK_EIO with errno ENOMEM for the file calls
 *     whose contract says so), or BK_OK with a correct result where the
 *     library has a fallback;
 *   - nothing leaked: live heap blocks and mapped bytes are back where they
 *     were;
 *   - nothing changed: an output pointer is untouched on failure, and a
 *     filter an operation failed on serialises to the same bytes as before
 *     (a saved file is the old one or the new one, and no temporary file
 *     is left beside it).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "bloomkit.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* ------------------------------------------------------------------------ */
/* The wrapped allocators                                                   */
/* ------------------------------------------------------------------------ */

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *block, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);
char *__real_strdup(const char *text);
char *__real_strndup(const char *text, size_t length);
void __real_free(void *block);
void *__real_mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset);
int __real_munmap(void *address, size_t length);
int __real_madvise(void *address, size_t length, int advice);

static struct {
    bool armed;
    bool persistent;  /* fail every allocation from the n-th on, not only the n-th */
    long countdown;   /* allocations still let through */
    bool injected;    /* a failure was injected since arming */
    long live_blocks; /* heap blocks the library holds */
    long long live_map_bytes;
} faults;

static bool allocation_fails(void)
{
    if (!faults.armed)
        return false;
    if (faults.countdown > 0) {
        faults.countdown--;
        return false;
    }
    faults.injected = true;
    if (!faults.persistent)
        faults.armed = false;
    return true;
}

static void *counted(void *block)
{
    if (block != NULL)
        faults.live_blocks++;
    return block;
}

void *__wrap_malloc(size_t size)
{
    return allocation_fails() ? NULL : counted(__real_malloc(size));
}

void *__wrap_calloc(size_t count, size_t size)
{
    return allocation_fails() ? NULL : counted(__real_calloc(count, size));
}

void *__wrap_aligned_alloc(size_t alignment, size_t size)
{
    return allocation_fails() ? NULL : counted(__real_aligned_alloc(alignment, size));
}

char *__wrap_strdup(const char *text)
{
    return allocation_fails() ? NULL : counted(__real_strdup(text));
}

char *__wrap_strndup(const char *text, size_t length)
{
    return allocation_fails() ? NULL : counted(__real_strndup(text, length));
}

void *__wrap_realloc(void *block, size_t size)
{
    if (allocation_fails())
        return NULL; /* the old block stays the caller's */
    void *moved = __real_realloc(block, size);
    if (block == NULL)
        return counted(moved);
    return moved;
}

void __wrap_free(void *block)
{
    if (block != NULL)
        faults.live_blocks--;
    __real_free(block);
}

static long long page_rounded(size_t length)
{
    long page = sysconf(_SC_PAGESIZE);
    return (long long)((length + (size_t)page - 1) / (size_t)page * (size_t)page);
}

void *__wrap_mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset)
{
    if (allocation_fails()) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    void *mapped = __real_mmap(address, length, protection, flags, fd, offset);
    if (mapped != MAP_FAILED)
        faults.live_map_bytes += page_rounded(length);
    return mapped;
}

int __wrap_munmap(void *address, size_t length)
{
    int result = __real_munmap(address, length);
    if (result == 0)
        faults.live_map_bytes -= page_rounded(length);
    return result;
}

int __wrap_madvise(void *address, size_t length, int advice)
{
    if (advice == MADV_POPULATE_WRITE && allocation_fails()) {
        errno = ENOMEM;
        return -1;
    }
    return __real_madvise(address, length, advice);
}

/* The test's own memory: not the library's, never failed or counted. */
static void *scratch_alloc(size_t size)
{
    void *block = __real_malloc(size);
    assert_non_null(block);
    return block;
}

static void scratch_free(void *block) { __real_free(block); }

static void arm(long fail_at, bool persistent)
{
    faults.countdown = fail_at;
    faults.persistent = persistent;
    faults.armed = true;
}

static void disarm(void) { faults.armed = false; }

/* ------------------------------------------------------------------------ */
/* Sweeping a scenario                                                      */
/* ------------------------------------------------------------------------ */

/* A scenario sets up unarmed, calls arm_for_trial() just before each call
 * under test and disarm() just after, then checks the outcome.  (With two
 * calls under test, each gets the same n.) */
static long trial_fail_at;
static long trials; /* runs made by the sweeps, failed or clean */
static bool trial_persistent;

static void arm_for_trial(void) { arm(trial_fail_at, trial_persistent); }

/* Runs `scenario` with the n-th allocation failing (then every one from the
 * n-th on) for n = 0, 1, ... until a run is clean; checks nothing leaks. */
static void sweep(void (*scenario)(void))
{
    for (int persistent = 0; persistent < 2; persistent++) {
        for (long n = 0;; n++) {
            assert_true(n < 100000);
            long blocks = faults.live_blocks;
            long long map_bytes = faults.live_map_bytes;
            trial_fail_at = n;
            trial_persistent = persistent;
            faults.injected = false;
            scenario();
            disarm();
            assert_int_equal(faults.live_blocks, blocks);
            assert_true(faults.live_map_bytes == map_bytes);
            trials++;
            if (!faults.injected) {
                assert_true(n > 0); /* the scenario allocates: a failure was tried */
                break;
            }
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Keys, kinds and the checks shared by the scenarios                      */
/* ------------------------------------------------------------------------ */

/* KEYS distinct keys, then DUPLICATES repeats of the first ones (static
 * kinds must drop them while building). */
enum { KEYS = 1500, DUPLICATES = 100 };
static bk_key keys[KEYS + DUPLICATES];
static char text[KEYS][24];

static int make_keys(void **state)
{
    (void)state;
    for (size_t i = 0; i < KEYS; i++) {
        keys[i].data = text[i];
        keys[i].len = (size_t)snprintf(text[i], sizeof text[i], "key:%zu", i);
    }
    for (size_t i = 0; i < DUPLICATES; i++)
        keys[KEYS + i] = keys[i];
    return 0;
}

static bk_kind scenario_kind; /* the kind a per-kind scenario works on */

static bk_params params_for(uint64_t capacity)
{
    bk_params params = { .capacity = capacity, .fpr = 0.01, .window_keys = capacity };
    return params;
}

static bk_filter *filter_of(bk_kind kind)
{
    bk_params params = params_for(KEYS);
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_build(kind, &params, keys, KEYS + DUPLICATES, &filter), BK_OK);
    return filter;
}

static void assert_holds_keys(const bk_filter *filter, size_t count)
{
    for (size_t i = 0; i < count; i++)
        assert_true(bk_filter_contains(filter, keys[i].data, keys[i].len));
}

/* The filter's serialised bytes (scratch_free() them). */
static uint8_t *bytes_of(const bk_filter *filter, size_t *size)
{
    assert_int_equal(bk_filter_serialized_size(filter, size), BK_OK);
    uint8_t *bytes = scratch_alloc(*size);
    assert_int_equal(bk_filter_serialize(filter, bytes, *size, NULL), BK_OK);
    return bytes;
}

static bool same_bytes(const bk_filter *a, const bk_filter *b)
{
    size_t size_a, size_b;
    uint8_t *bytes_a = bytes_of(a, &size_a);
    uint8_t *bytes_b = bytes_of(b, &size_b);
    bool same = size_a == size_b && memcmp(bytes_a, bytes_b, size_a) == 0;
    scratch_free(bytes_a);
    scratch_free(bytes_b);
    return same;
}

static void assert_bytes_equal_to(const bk_filter *filter, const uint8_t *expected, size_t size)
{
    size_t now_size;
    uint8_t *now = bytes_of(filter, &now_size);
    assert_int_equal(now_size, size);
    assert_memory_equal(now, expected, size);
    scratch_free(now);
}

/* What a failed constructor must leave: BK_ENOMEM and *out untouched. */
static char untouched_marker;
#define UNTOUCHED ((bk_filter *)(void *)&untouched_marker)

static void assert_constructed(bk_status status, bk_filter *out)
{
    if (status != BK_OK) {
        assert_int_equal(status, BK_ENOMEM);
        assert_ptr_equal(out, UNTOUCHED);
        return;
    }
    assert_ptr_not_equal(out, UNTOUCHED);
}

/* ------------------------------------------------------------------------ */
/* Scenarios                                                                */
/* ------------------------------------------------------------------------ */

static void build_scenario(void)
{
    bk_params params = params_for(KEYS);
    bk_filter *out = UNTOUCHED;
    arm_for_trial();
    bk_status status = bk_filter_build(scenario_kind, &params, keys, KEYS + DUPLICATES, &out);
    disarm();
    assert_constructed(status, out);
    if (status == BK_OK) {
        assert_holds_keys(out, KEYS);
        bk_filter_free(out);
    }
}

static void create_scenario(void)
{
    bk_params params = params_for(KEYS);
    bk_filter *out = UNTOUCHED;
    arm_for_trial();
    bk_status status = bk_filter_create(scenario_kind, &params, &out);
    disarm();
    assert_constructed(status, out);
    if (status == BK_OK)
        bk_filter_free(out);
}

/* Payloads of 2 MiB and more are mapped and populated (src/memory.c). */
static void create_big_scenario(void)
{
    bk_params params = params_for(3000000);
    bk_filter *out = UNTOUCHED;
    arm_for_trial();
    bk_status status = bk_filter_create(scenario_kind, &params, &out);
    disarm();
    assert_constructed(status, out);
    if (status == BK_OK) {
        bk_stats stats;
        bk_filter_stats(out, &stats);
        assert_true(stats.bytes >= (2u << 20));
        assert_int_equal(bk_filter_add(out, "a key", 5, NULL), BK_OK);
        assert_true(bk_filter_contains(out, "a key", 5));
        bk_filter_free(out);
    }
}

static void copy_scenario(void)
{
    bk_filter *original = filter_of(scenario_kind);
    size_t size;
    uint8_t *before = bytes_of(original, &size);
    bk_filter *out = UNTOUCHED;
    arm_for_trial();
    bk_status status = bk_filter_copy(original, &out);
    disarm();
    assert_constructed(status, out);
    assert_bytes_equal_to(original, before, size);
    if (status == BK_OK) {
        assert_true(same_bytes(original, out));
        bk_filter_free(out);
    }
    scratch_free(before);
    bk_filter_free(original);
}

/* bk_counting_to_bloom of each layout: classic (a bloom) and blocked (a
 * blocked filter); the flags of the counting filter converted. */
static unsigned counting_flags;

static void counting_to_bloom_scenario(void)
{
    bk_params params = { .capacity = KEYS, .flags = counting_flags };
    bk_filter *original;
    assert_int_equal(bk_filter_create(BK_KIND_COUNTING, &params, &original), BK_OK);
    assert_int_equal(bk_filter_add_batch(original, keys, KEYS, NULL), BK_OK);
    bk_filter *out = UNTOUCHED;
    arm_for_trial();
    bk_status status = bk_counting_to_bloom(original, &out);
    disarm();
    assert_constructed(status, out);
    if (status == BK_OK) {
        for (size_t i = 0; i < KEYS; i++)
            assert_true(bk_filter_contains(out, keys[i].data, keys[i].len));
        bk_filter_free(out);
    }
    bk_filter_free(original);
}

static void deserialize_scenario(void)
{
    bk_filter *original = filter_of(scenario_kind);
    size_t size;
    uint8_t *bytes = bytes_of(original, &size);
    bk_filter *out = UNTOUCHED;
    arm_for_trial();
    bk_status status = bk_filter_deserialize(bytes, size, NULL, &out);
    disarm();
    assert_constructed(status, out);
    if (status == BK_OK) {
        assert_true(same_bytes(original, out));
        bk_filter_free(out);
    }
    scratch_free(bytes);
    bk_filter_free(original);
}

/* Adds one key at a time to a scalable filter that starts small, so that
 * its chain grows (each growth allocates a sub-filter).  The add that fails
 * must leave the filter as it was. */
static void scalable_growth_scenario(void)
{
    bk_params params = params_for(50);
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_SCALABLE, &params, &filter), BK_OK);
    arm_for_trial();
    for (size_t i = 0; i < KEYS; i++) {
        size_t size;
        uint8_t *before = bytes_of(filter, &size);
        bk_status status = bk_filter_add(filter, keys[i].data, keys[i].len, NULL);
        if (status != BK_OK) {
            disarm();
            assert_int_equal(status, BK_ENOMEM);
            assert_bytes_equal_to(filter, before, size);
            assert_holds_keys(filter, i);
            scratch_free(before);
            break;
        }
        scratch_free(before);
    }
    disarm();
    bk_filter_free(filter);
}

/* The same through one batch: it stops at the first error, leaving the
 * filter as adding some prefix of the keys one at a time leaves it. */
static bool holds_a_prefix(const bk_filter *filter, size_t added)
{
    bk_params params = params_for(50);
    bk_filter *reference = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_SCALABLE, &params, &reference), BK_OK);
    size_t size;
    uint8_t *expected = bytes_of(filter, &size);
    size_t reference_added = 0;
    bool found = false;
    for (size_t i = 0; i <= KEYS && !found && reference_added <= added; i++) {
        size_t now_size;
        uint8_t *now = bytes_of(reference, &now_size);
        found = reference_added == added && now_size == size && memcmp(now, expected, size) == 0;
        scratch_free(now);
        bool was_new = false;
        if (i < KEYS)
            assert_int_equal(bk_filter_add(reference, keys[i].data, keys[i].len, &was_new),
                             BK_OK);
        reference_added += was_new;
    }
    scratch_free(expected);
    bk_filter_free(reference);
    return found;
}

static void scalable_batch_scenario(void)
{
    bk_params params = params_for(50);
    bk_filter *filter = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_SCALABLE, &params, &filter), BK_OK);
    size_t added = 0;
    arm_for_trial();
    bk_status status = bk_filter_add_batch(filter, keys, KEYS, &added);
    disarm();
    if (status == BK_OK)
        assert_holds_keys(filter, KEYS);
    else
        assert_int_equal(status, BK_ENOMEM);
    assert_true(holds_a_prefix(filter, added));
    bk_filter_free(filter);
}

/* The quotient filter's resize, merge and union each lay a new table: a
 * failure leaves the filter as it was. */
static void quotient_scenario(void)
{
    bk_filter *filter = filter_of(BK_KIND_QUOTIENT);
    size_t size;
    uint8_t *before = bytes_of(filter, &size);
    bk_quotient_info info;
    assert_int_equal(bk_quotient_get_info(filter, &info), BK_OK);
    arm_for_trial();
    bk_status status = bk_quotient_resize(filter, info.log2_slots + 1);
    disarm();
    if (status != BK_OK) {
        assert_int_equal(status, BK_ENOMEM);
        assert_bytes_equal_to(filter, before, size);
    }
    assert_holds_keys(filter, KEYS);
    scratch_free(before);
    before = bytes_of(filter, &size);

    bk_filter *out = UNTOUCHED;
    arm_for_trial();
    status = bk_quotient_merge(filter, filter, &out);
    disarm();
    assert_constructed(status, out);
    if (status == BK_OK) {
        assert_holds_keys(out, KEYS);
        bk_filter_free(out);
    }
    bk_params params = params_for(KEYS);
    bk_filter *empty = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_QUOTIENT, &params, &empty), BK_OK);
    arm_for_trial();
    status = bk_filter_union(filter, empty);
    disarm();
    bk_filter_free(empty);
    if (status != BK_OK) {
        assert_int_equal(status, BK_ENOMEM);
        assert_bytes_equal_to(filter, before, size);
    }
    assert_holds_keys(filter, KEYS);
    scratch_free(before);
    bk_filter_free(filter);
}

/* ---- files ---- */

static char temp_dir[400];
static char file_path[512];

static int make_temp_dir(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    if (base == NULL || *base == '\0')
        base = "/tmp";
    snprintf(temp_dir, sizeof temp_dir, "%s/bk-alloc-XXXXXX", base);
    assert_non_null(mkdtemp(temp_dir));
    snprintf(file_path, sizeof file_path, "%s/filter.bk", temp_dir);
    return 0;
}

static int remove_temp_dir(void **state)
{
    (void)state;
    unlink(file_path);
    rmdir(temp_dir);
    return 0;
}

static size_t files_in_temp_dir(void)
{
    DIR *directory = opendir(temp_dir);
    assert_non_null(directory);
    size_t count = 0;
    for (struct dirent *entry; (entry = readdir(directory)) != NULL;)
        count += entry->d_name[0] != '.';
    closedir(directory);
    return count;
}

/* The file calls' contract: BK_EIO with errno set for a system error, and a
 * failed malloc is one (ENOMEM); or BK_ENOMEM. */
static void assert_file_failure(bk_status status, int error)
{
    if (status == BK_EIO)
        assert_int_equal(error, ENOMEM);
    else
        assert_int_equal(status, BK_ENOMEM);
}

static bool file_holds(const bk_filter *expected)
{
    bk_filter *loaded = NULL;
    assert_int_equal(bk_filter_load(file_path, NULL, &loaded), BK_OK);
    bool same = same_bytes(expected, loaded);
    bk_filter_free(loaded);
    return same;
}

/* Saving over an older file: on failure the path holds the old filter or
 * (if only the last directory sync failed) the new one, never a part. */
static void save_scenario(void)
{
    bk_filter *old_filter = filter_of(BK_KIND_BLOOM);
    bk_filter *filter = filter_of(scenario_kind);
    assert_int_equal(bk_filter_save(old_filter, file_path), BK_OK);
    arm_for_trial();
    bk_status status = bk_filter_save(filter, file_path);
    int error = errno;
    disarm();
    assert_int_equal(files_in_temp_dir(), 1);
    if (status == BK_OK) {
        assert_true(file_holds(filter));
    } else {
        assert_file_failure(status, error);
        assert_true(file_holds(old_filter) || file_holds(filter));
    }
    bk_filter_free(old_filter);
    bk_filter_free(filter);
}

static void load_scenario(void)
{
    bk_filter *filter = filter_of(scenario_kind);
    assert_int_equal(bk_filter_save(filter, file_path), BK_OK);
    bk_filter *loaded = UNTOUCHED, *mapped = UNTOUCHED;
    arm_for_trial();
    bk_status load_status = bk_filter_load(file_path, NULL, &loaded);
    disarm();
    arm_for_trial();
    bk_status map_status = bk_filter_map(file_path, NULL, &mapped);
    int map_error = errno;
    disarm();
    assert_constructed(load_status, loaded);
    if (load_status == BK_OK) {
        assert_true(same_bytes(filter, loaded));
        bk_filter_free(loaded);
    }
    if (map_status == BK_OK) {
        assert_true(same_bytes(filter, mapped));
        bk_filter_free(mapped);
    } else {
        assert_file_failure(map_status, map_error);
        assert_ptr_equal(mapped, UNTOUCHED);
    }
    bk_filter_free(filter);
}

static void verify_scenario(void)
{
    bk_filter *filter = filter_of(scenario_kind);
    assert_int_equal(bk_filter_save(filter, file_path), BK_OK);
    arm_for_trial();
    bk_status status = bk_file_verify(file_path);
    disarm();
    if (status != BK_OK)
        assert_int_equal(status, BK_ENOMEM);
    bk_filter_free(filter);
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */
/* ------------------------------------------------------------------------ */

/* Every kind of the registry (bk_kind_list). */
static void sweep_every_kind(void (*scenario)(void), bool dynamic_only)
{
    bk_kind every[64];
    size_t kinds = bk_kind_list(every, sizeof every / sizeof every[0]);
    assert_true(kinds >= 11 && kinds <= sizeof every / sizeof every[0]);
    for (size_t i = 0; i < kinds; i++) {
        if (dynamic_only && bk_kind_is_static(every[i]))
            continue;
        scenario_kind = every[i];
        sweep(scenario);
    }
}

static void test_wrappers_see_the_library(void **state)
{
    (void)state;
    /* The sweep means something only if the library's calls are wrapped. */
    long blocks = faults.live_blocks;
    bk_filter *filter = filter_of(BK_KIND_BLOOM);
    assert_true(faults.live_blocks > blocks);
    bk_filter_free(filter);
    assert_int_equal(faults.live_blocks, blocks);
    bk_filter *out = UNTOUCHED;
    bk_params params = params_for(KEYS);
    faults.injected = false;
    arm(0, false);
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &params, &out), BK_ENOMEM);
    disarm();
    assert_true(faults.injected);
    assert_ptr_equal(out, UNTOUCHED);
}

static void test_build(void **state)
{
    (void)state;
    sweep_every_kind(build_scenario, false);
}

static void test_create(void **state)
{
    (void)state;
    sweep_every_kind(create_scenario, true);
}

static void test_create_big(void **state)
{
    (void)state;
    const bk_kind big[] = { BK_KIND_BLOOM, BK_KIND_BLOCKED, BK_KIND_SBBF };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        scenario_kind = big[i];
        sweep(create_big_scenario);
    }
}

static void test_copy(void **state)
{
    (void)state;
    sweep_every_kind(copy_scenario, false);
}

static void test_deserialize(void **state)
{
    (void)state;
    sweep_every_kind(deserialize_scenario, false);
}

static void test_counting_to_bloom(void **state)
{
    (void)state;
    counting_flags = BK_FLAG_COUNTING_CLASSIC;
    sweep(counting_to_bloom_scenario);
    counting_flags = 0;
    sweep(counting_to_bloom_scenario);
}

static void test_scalable_growth(void **state)
{
    (void)state;
    sweep(scalable_growth_scenario);
    sweep(scalable_batch_scenario);
}

static void test_quotient_rebuilds(void **state)
{
    (void)state;
    sweep(quotient_scenario);
}

static void test_files(void **state)
{
    (void)state;
    sweep_every_kind(save_scenario, false);
    sweep_every_kind(load_scenario, false);
    sweep_every_kind(verify_scenario, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrappers_see_the_library),
        cmocka_unit_test(test_build),
        cmocka_unit_test(test_create),
        cmocka_unit_test(test_create_big),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_deserialize),
        cmocka_unit_test(test_counting_to_bloom),
        cmocka_unit_test(test_scalable_growth),
        cmocka_unit_test(test_quotient_rebuilds),
        cmocka_unit_test_setup_teardown(test_files, make_temp_dir, remove_temp_dir),
    };
    int failed = cmocka_run_group_tests(tests, make_keys, NULL);
    fprintf(stderr, "allocation-failure sweeps: %ld runs\n", trials);
    return failed;
}
