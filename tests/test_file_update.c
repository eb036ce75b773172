/*
 * tests/test_file_update.c -- in-place updates of filter files and the
 * rules every file writer follows (src/file_update.c, docs/FORMAT.md,
 * "Updating a file in place"):
 *
 *   - an update writes exactly the bytes a full save would, growing or
 *     shrinking the file when the kind's size changes;
 *   - an interrupted update (a torn file beside its undo journal, built
 *     here byte by byte from the journal's specification) is rolled back
 *     by the next reader when no writer holds the lock, and read around --
 *     the old filter, file untouched -- while one does; a journal for
 *     another file, an incomplete one and one of a completed update are
 *     never applied;
 *   - the lock: a second writer fails at once with wait = false;
 *   - readers racing a writer's 60 updates always load and verify a whole
 *     file;
 *   - a damaged file is refused at commit, nothing written;
 *   - non-regular files are refused before a byte is read or written;
 *     symbolic links are followed, modes kept, dead writers' temporary
 *     files removed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "endian.h"
#include "format.h"
#include "hash.h"
#include "roundtrip.h"

#define PAGE 4096u

static void add_keys(bk_filter *filter, const char *format, size_t first, size_t count)
{
    char key[64];
    for (size_t i = first; i < first + count; i++) {
        int len = snprintf(key, sizeof key, format, i);
        assert_int_equal(bk_filter_add(filter, key, (size_t)len, NULL), BK_OK);
    }
}

static size_t count_present(const bk_filter *filter, const char *format, size_t first,
                            size_t count)
{
    char key[64];
    size_t present = 0;
    for (size_t i = first; i < first + count; i++) {
        int len = snprintf(key, sizeof key, format, i);
        present += bk_filter_contains(filter, key, (size_t)len);
    }
    return present;
}

static void write_file(const char *path, const void *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

static bool file_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void assert_file_is(const char *path, const uint8_t *bytes, size_t size)
{
    size_t actual_size;
    uint8_t *actual = bk_rt_read_file(path, &actual_size);
    assert_int_equal(actual_size, size);
    assert_memory_equal(actual, bytes, size);
    free(actual);
}

/* A bloom filter of ~120 KiB holding "old:0..999"; its bytes in *bytes. */
static bk_filter *old_filter(uint8_t **bytes, size_t *size)
{
    bk_params params = { 0 };
    params.capacity = 100000;
    params.fpr = 0.01;
    bk_filter *filter;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &params, &filter), BK_OK);
    add_keys(filter, "old:%zu", 0, 1000);
    *bytes = bk_rt_serialize(filter, size);
    return filter;
}

/* ------------------------------------------------------------------------ */
/* Updates write what a save writes                                         */
/* ------------------------------------------------------------------------ */

static void update_and_compare(bk_kind kind, const bk_params *params, size_t before,
                               size_t added)
{
    char *dir = bk_rt_make_temp_dir();
    char *path = bk_rt_join(dir, "f.bkf");
    char *journal = bk_rt_join(dir, "f.bkf.bkj");
    bk_filter *filter;
    assert_int_equal(bk_filter_create(kind, params, &filter), BK_OK);
    add_keys(filter, "before:%zu", 0, before);
    assert_int_equal(bk_filter_save(filter, path), BK_OK);
    bk_filter_free(filter);

    bk_file_update *update;
    assert_int_equal(bk_file_update_begin(path, NULL, true, &update, &filter), BK_OK);
    add_keys(filter, "after:%zu", 0, added);
    assert_int_equal(bk_file_update_commit(update, filter), BK_OK);
    assert_int_equal(bk_file_update_commit(update, filter), BK_EINVAL); /* once */
    size_t expected_size;
    uint8_t *expected = bk_rt_serialize(filter, &expected_size);
    bk_filter_free(filter);
    bk_file_update_end(update);

    assert_file_is(path, expected, expected_size);
    assert_false(file_exists(journal));
    assert_int_equal(bk_filter_load(path, NULL, &filter), BK_OK);
    assert_int_equal(count_present(filter, "before:%zu", 0, before), before);
    assert_int_equal(count_present(filter, "after:%zu", 0, added), added);
    bk_filter_free(filter);
    free(expected);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
    free(journal);
    free(path);
    free(dir);
}

static void test_update_writes_what_save_writes(void **state)
{
    (void)state;
    bk_params params = { 0 };
    params.capacity = 200000;
    params.fpr = 0.01;
    update_and_compare(BK_KIND_BLOOM, &params, 1000, 500);
    if (bk_kind_available(BK_KIND_CUCKOO))
        update_and_compare(BK_KIND_CUCKOO, &params, 1000, 500);
}

static void test_update_that_grows_the_file(void **state)
{
    (void)state;
    if (!bk_kind_available(BK_KIND_SCALABLE))
        skip();
    bk_params params = { 0 };
    params.capacity = 1000;
    params.fpr = 0.01;
    update_and_compare(BK_KIND_SCALABLE, &params, 500, 20000); /* adds sub-filters */
}

/* ------------------------------------------------------------------------ */
/* Interrupted updates                                                      */
/* ------------------------------------------------------------------------ */

/* The undo journal of an update from old to new (same size), per
 * docs/FORMAT.md; *size bytes, malloc'd. */
static uint8_t *make_journal(const uint8_t *old, const uint8_t *new_bytes, size_t size,
                             const struct stat *st, size_t *journal_size)
{
    size_t pages = (size + PAGE - 1) / PAGE;
    uint8_t *out = malloc(176 + pages * (8 + PAGE) + 8);
    assert_non_null(out);
    memcpy(out, "BKFundo1", 8);
    bk_store_le64(out + 8, (uint64_t)st->st_dev);
    bk_store_le64(out + 16, (uint64_t)st->st_ino);
    bk_store_le64(out + 24, size);
    bk_store_le64(out + 32, size);
    memcpy(out + 48, old, 64);
    memcpy(out + 112, new_bytes, 64);
    size_t at = 176, entries = 0;
    for (size_t page = 0; page < pages; page++) {
        size_t length = size - page * PAGE < PAGE ? size - page * PAGE : PAGE;
        if (memcmp(old + page * PAGE, new_bytes + page * PAGE, length) == 0)
            continue;
        bk_store_le64(out + at, page);
        memcpy(out + at + 8, old + page * PAGE, length);
        at += 8 + length;
        entries++;
    }
    bk_store_le64(out + 40, entries);
    bk_store_le64(out + at, XXH3_64bits(out, at));
    *journal_size = at + 8;
    return out;
}

/* The file half updated: the new bytes in every other changed page. */
static uint8_t *torn_between(const uint8_t *old, const uint8_t *new_bytes, size_t size)
{
    uint8_t *torn = malloc(size);
    assert_non_null(torn);
    memcpy(torn, old, size);
    unsigned changed = 0;
    for (size_t page = 0; page * PAGE < size; page++) {
        size_t length = size - page * PAGE < PAGE ? size - page * PAGE : PAGE;
        if (memcmp(old + page * PAGE, new_bytes + page * PAGE, length) != 0 &&
            changed++ % 2 == 0)
            memcpy(torn + page * PAGE, new_bytes + page * PAGE, length);
    }
    assert_true(changed >= 4);
    return torn;
}

typedef struct interrupted {
    char *dir, *path, *journal_path;
    uint8_t *old, *new_bytes, *torn, *journal;
    size_t size, journal_size;
} interrupted;

/* Old file with "old:*", new with "new:*" added too, the torn file written
 * at `path` and its journal beside it. */
static void make_interrupted(interrupted *t)
{
    t->dir = bk_rt_make_temp_dir();
    t->path = bk_rt_join(t->dir, "f.bkf");
    t->journal_path = bk_rt_join(t->dir, "f.bkf.bkj");
    bk_filter *filter = old_filter(&t->old, &t->size);
    add_keys(filter, "new:%zu", 0, 300);
    size_t new_size;
    t->new_bytes = bk_rt_serialize(filter, &new_size);
    assert_int_equal(new_size, t->size);
    bk_filter_free(filter);
    t->torn = torn_between(t->old, t->new_bytes, t->size);
    write_file(t->path, t->torn, t->size);
    struct stat st;
    assert_int_equal(stat(t->path, &st), 0);
    t->journal = make_journal(t->old, t->new_bytes, t->size, &st, &t->journal_size);
    write_file(t->journal_path, t->journal, t->journal_size);
}

static void free_interrupted(interrupted *t)
{
    unlink(t->path);
    unlink(t->journal_path);
    assert_int_equal(rmdir(t->dir), 0);
    free(t->old);
    free(t->new_bytes);
    free(t->torn);
    free(t->journal);
    free(t->path);
    free(t->journal_path);
    free(t->dir);
}

static void test_interrupted_update_is_rolled_back(void **state)
{
    (void)state;
    interrupted t;
    make_interrupted(&t);
    bk_filter *filter;
    assert_int_equal(bk_filter_deserialize(t.torn, t.size, NULL, &filter), BK_ECHECKSUM);

    /* A writer holds the lock: readers get the old filter, file untouched. */
    int holder = open(t.path, O_RDONLY);
    assert_true(holder >= 0);
    assert_int_equal(flock(holder, LOCK_EX), 0);
    assert_int_equal(bk_filter_load(t.path, NULL, &filter), BK_OK);
    assert_int_equal(count_present(filter, "old:%zu", 0, 1000), 1000);
    bk_filter_free(filter);
    assert_int_equal(bk_file_verify(t.path), BK_OK);
    assert_file_is(t.path, t.torn, t.size);
    assert_true(file_exists(t.journal_path));
    bk_file_update *update;
    errno = 0;
    assert_int_equal(bk_file_update_begin(t.path, NULL, false, &update, &filter), BK_EIO);
    assert_true(errno == EWOULDBLOCK || errno == EAGAIN);
    close(holder);

    /* No writer: the first reader rolls back to exactly the old file. */
    assert_int_equal(bk_file_verify(t.path), BK_OK);
    assert_file_is(t.path, t.old, t.size);
    assert_false(file_exists(t.journal_path));

    /* The same through bk_filter_map and bk_file_update_begin. */
    write_file(t.path, t.torn, t.size);
    write_file(t.journal_path, t.journal, t.journal_size);
    assert_int_equal(bk_filter_map(t.path, NULL, &filter), BK_OK);
    bk_filter_free(filter);
    assert_file_is(t.path, t.old, t.size);
    write_file(t.path, t.torn, t.size);
    write_file(t.journal_path, t.journal, t.journal_size);
    assert_int_equal(bk_file_update_begin(t.path, NULL, false, &update, &filter), BK_OK);
    assert_int_equal(count_present(filter, "old:%zu", 0, 1000), 1000);
    bk_filter_free(filter);
    bk_file_update_end(update);
    assert_file_is(t.path, t.old, t.size);
    assert_false(file_exists(t.journal_path));

    /* Read through a symbolic link: the journal is found beside the file. */
    char *link = bk_rt_join(t.dir, "link.bkf");
    assert_int_equal(symlink("f.bkf", link), 0);
    write_file(t.path, t.torn, t.size);
    write_file(t.journal_path, t.journal, t.journal_size);
    assert_int_equal(bk_filter_load(link, NULL, &filter), BK_OK);
    bk_filter_free(filter);
    assert_file_is(t.path, t.old, t.size);
    assert_false(file_exists(t.journal_path));
    unlink(link);
    free(link);
    free_interrupted(&t);
}

static void test_journals_never_misapplied(void **state)
{
    (void)state;
    interrupted t;
    make_interrupted(&t);
    bk_filter *filter;

    /* A completed update whose journal survived: kept, journal removed. */
    write_file(t.path, t.new_bytes, t.size);
    assert_int_equal(bk_filter_load(t.path, NULL, &filter), BK_OK);
    assert_int_equal(count_present(filter, "new:%zu", 0, 300), 300);
    bk_filter_free(filter);
    assert_file_is(t.path, t.new_bytes, t.size);
    assert_false(file_exists(t.journal_path));

    /* An incomplete journal (cut short, or damaged): the file was not yet
     * touched, so it is discarded. */
    write_file(t.path, t.old, t.size);
    write_file(t.journal_path, t.journal, t.journal_size - 100);
    assert_int_equal(bk_file_verify(t.path), BK_OK);
    assert_file_is(t.path, t.old, t.size);
    assert_false(file_exists(t.journal_path));
    t.journal[200] ^= 1;
    write_file(t.journal_path, t.journal, t.journal_size);
    t.journal[200] ^= 1;
    write_file(t.path, t.torn, t.size);
    assert_int_equal(bk_file_verify(t.path), BK_ECHECKSUM);
    assert_false(file_exists(t.journal_path));

    /* A journal written for another file (the inode differs): discarded. */
    write_file(t.path, t.torn, t.size);
    uint8_t *other = malloc(t.journal_size);
    assert_non_null(other);
    memcpy(other, t.journal, t.journal_size);
    bk_store_le64(other + 16, bk_load_le64(other + 16) + 1);
    bk_store_le64(other + t.journal_size - 8, XXH3_64bits(other, t.journal_size - 8));
    write_file(t.journal_path, other, t.journal_size);
    assert_int_equal(bk_filter_load(t.path, NULL, &filter), BK_ECHECKSUM);
    assert_file_is(t.path, t.torn, t.size);
    assert_false(file_exists(t.journal_path));
    free(other);
    free_interrupted(&t);
}

static void test_damaged_file_refused_at_commit(void **state)
{
    (void)state;
    char *dir = bk_rt_make_temp_dir();
    char *path = bk_rt_join(dir, "f.bkf");
    uint8_t *bytes;
    size_t size;
    bk_filter *filter = old_filter(&bytes, &size);
    bk_filter_free(filter);
    bytes[size / 2] ^= 0x10; /* a payload bit: the kind's checks pass, the checksum fails */
    write_file(path, bytes, size);
    bk_file_update *update;
    assert_int_equal(bk_file_update_begin(path, NULL, true, &update, &filter), BK_OK);
    add_keys(filter, "new:%zu", 0, 10);
    assert_int_equal(bk_file_update_commit(update, filter), BK_ECHECKSUM);
    bk_filter_free(filter);
    bk_file_update_end(update);
    assert_file_is(path, bytes, size);
    free(bytes);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
    free(path);
    free(dir);
}

/* Readers while a writer updates the file again and again: every load and
 * every verification succeeds and sees every key the file held first. */
static void test_readers_never_see_half_an_update(void **state)
{
    (void)state;
    char *dir = bk_rt_make_temp_dir();
    char *path = bk_rt_join(dir, "f.bkf");
    uint8_t *bytes;
    size_t size;
    bk_filter *filter = old_filter(&bytes, &size);
    assert_int_equal(bk_filter_save(filter, path), BK_OK);
    bk_filter_free(filter);
    pid_t writer = fork();
    assert_true(writer >= 0);
    if (writer == 0) {
        for (size_t round = 0; round < 60; round++) {
            bk_file_update *update;
            if (bk_file_update_begin(path, NULL, true, &update, &filter) != BK_OK)
                _exit(1);
            add_keys(filter, "writer:%zu", round * 200, 200);
            bk_status status = bk_file_update_commit(update, filter);
            bk_filter_free(filter);
            bk_file_update_end(update);
            if (status != BK_OK)
                _exit(1);
        }
        _exit(0);
    }
    size_t loads = 0, verified = 0;
    int writer_status = -1;
    while (waitpid(writer, &writer_status, WNOHANG) == 0) {
        assert_int_equal(bk_filter_load(path, NULL, &filter), BK_OK);
        assert_int_equal(count_present(filter, "old:%zu", 0, 1000), 1000);
        bk_filter_free(filter);
        loads++;
        assert_int_equal(bk_file_verify(path), BK_OK);
        verified++;
    }
    assert_true(WIFEXITED(writer_status));
    assert_int_equal(WEXITSTATUS(writer_status), 0);
    assert_true(loads > 0 && verified > 0);
    assert_int_equal(bk_filter_load(path, NULL, &filter), BK_OK);
    assert_int_equal(count_present(filter, "writer:%zu", 0, 60 * 200), 60 * 200);
    bk_filter_free(filter);
    free(bytes);
    unlink(path);
    assert_int_equal(rmdir(dir), 0);
    free(path);
    free(dir);
}

/* ------------------------------------------------------------------------ */
/* What a writer writes over                                                */
/* ------------------------------------------------------------------------ */

static void test_non_regular_files(void **state)
{
    (void)state;
    bk_filter *filter = (bk_filter *)&filter;
    bk_filter *const untouched = filter;
    struct stat st;
    if (stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode))
        assert_int_equal(bk_filter_map("/dev/null", NULL, &filter), BK_EUNSUPPORTED);
    if (stat("/dev/zero", &st) == 0 && S_ISCHR(st.st_mode))
        assert_int_equal(bk_filter_map("/dev/zero", NULL, &filter), BK_EUNSUPPORTED);
    assert_ptr_equal(filter, untouched);

    char *dir = bk_rt_make_temp_dir();
    char *fifo = bk_rt_join(dir, "fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(bk_filter_map(fifo, NULL, &filter), BK_EUNSUPPORTED);
    bk_file_update *update;
    assert_int_equal(bk_file_update_begin(fifo, NULL, false, &update, &filter), BK_EUNSUPPORTED);
    uint8_t *bytes;
    size_t size;
    bk_filter *small = old_filter(&bytes, &size);
    assert_int_equal(bk_filter_save(small, fifo), BK_EUNSUPPORTED);
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    bk_filter_free(small);
    free(bytes);
    unlink(fifo);
    assert_int_equal(rmdir(dir), 0);
    free(fifo);
    free(dir);
}

static void test_save_follows_links_keeps_mode_cleans_up(void **state)
{
    (void)state;
    char *dir = bk_rt_make_temp_dir();
    char *target = bk_rt_join(dir, "target.bkf");
    char *link = bk_rt_join(dir, "link.bkf");
    uint8_t *bytes;
    size_t size;
    bk_filter *filter = old_filter(&bytes, &size);
    assert_int_equal(bk_filter_save(filter, target), BK_OK);
    assert_int_equal(chmod(target, 0640), 0);
    assert_int_equal(symlink("target.bkf", link), 0);

    pid_t child = fork(); /* a pid certainly gone once reaped */
    if (child == 0)
        _exit(0);
    assert_true(child > 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    char name[64];
    snprintf(name, sizeof name, "target.bkf.%ld.7.tmp", (long)child);
    char *dead = bk_rt_join(dir, name);
    snprintf(name, sizeof name, "target.bkf.%ld.8.tmp", (long)getppid());
    char *alive = bk_rt_join(dir, name);
    write_file(dead, "x", 1);
    write_file(alive, "x", 1);

    add_keys(filter, "new:%zu", 0, 100);
    assert_int_equal(bk_filter_save(filter, link), BK_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    bk_filter *loaded;
    assert_int_equal(bk_filter_load(target, NULL, &loaded), BK_OK);
    assert_int_equal(count_present(loaded, "new:%zu", 0, 100), 100);
    bk_filter_free(loaded);
    assert_false(file_exists(dead));
    assert_true(file_exists(alive));

    bk_filter_free(filter);
    free(bytes);
    unlink(alive);
    unlink(link);
    unlink(target);
    assert_int_equal(rmdir(dir), 0);
    free(alive);
    free(dead);
    free(link);
    free(target);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_update_writes_what_save_writes),
        cmocka_unit_test(test_update_that_grows_the_file),
        cmocka_unit_test(test_interrupted_update_is_rolled_back),
        cmocka_unit_test(test_journals_never_misapplied),
        cmocka_unit_test(test_damaged_file_refused_at_commit),
        cmocka_unit_test(test_readers_never_see_half_an_update),
        cmocka_unit_test(test_non_regular_files),
        cmocka_unit_test(test_save_follows_links_keeps_mode_cleans_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
