/*
 * src/file_update.c -- changing a filter file in place, safely: the
 * writer's lock, the undo journal, recovery after a crash, and the
 * housekeeping of the files a save leaves beside its target.
 *
 * Why in place.  bk_filter_save writes a whole new file and renames it over
 * the old one: simple and atomic, but adding one key to a 1 GiB filter then
 * writes and fsyncs 1 GiB.  An update instead rewrites only the 4 KiB pages
 * whose bytes changed -- the payload pages the new keys touched and page 0,
 * which holds the key count and the checksum -- so its disk traffic grows
 * with the keys changed, not with the file.
 *
 * Why it stays crash-safe: an undo journal ("PATH.bkj", beside the file).
 *
 *   1. encode the new filter in memory (without its checksum); one pass
 *      over the file and the new bytes, a chunk at a time, checks the
 *      file's checksum, computes the new one, and lists the pages that
 *      differ;
 *   2. write the OLD contents of those pages to the journal, with its own
 *      XXH3 checksum; fsync the journal and its directory;
 *   3. pwrite the new pages (and truncate or extend the file); fdatasync
 *      (fsync when the size changed);
 *   4. unlink the journal.
 *
 * A crash before step 2 completes leaves the file untouched and at most a
 * journal whose checksum fails (it is discarded).  A crash in step 3 or 4
 * leaves a complete journal: whoever next takes the writer's lock copies
 * the old pages back (roll back), truncates to the old size, fsyncs and
 * removes the journal -- the file is then exactly the old one, every key and
 * the checksum intact.  (A journal that a crash brings back after step 4,
 * its unlink not yet durable, finds the update complete -- the new size,
 * first bytes and checksum all hold -- and is only removed.)  The journal
 * names the file's device and inode and holds its old and new first 64
 * bytes; a journal whose file no longer matches (replaced since) is
 * discarded, never applied.
 *
 * Cost: the file is read once (the checksum covers every byte) and held
 * twice in memory (the kind's copy, the encoded one); what is written is
 * the changed pages twice (journal, file).  Figures: docs/PERFORMANCE.md,
 * "Updating a filter file in place".
 *
 *   journal ("PATH.bkj"), little-endian:
 *   +----------+-----+-----+----------+----------+-------+----------+----------+
 *   |"BKFundo1"| dev | ino | old_size | new_size | pages | old head | new head |
 *   +----------+-----+-----+----------+----------+-------+----------+----------+
 *     8 bytes    u64   u64    u64        u64       u64    64 bytes   64 bytes
 *   then `pages` entries: u64 page index, then the page's old bytes (4096, or
 *   fewer for the last page of the old file), then u64 XXH3-64 of all before.
 *
 * The lock: flock(LOCK_EX) on the filter file itself (after symbolic links
 * are followed), so one writer at a time, whichever name it used; a waiting
 * writer that finds the file replaced while it waited locks the new one.
 * Readers never lock.  A reader that finds a journal tries the lock without
 * waiting: if it gets it, the writer died, and the reader rolls back before
 * reading; if not, a writer is at work, and the reader rebuilds the old file
 * in its own memory (file + journal's old pages) whenever what it read does
 * not pass the checks -- so a query never waits and never sees half an
 * update (a mapped filter excepted: it shows the file as it is).
 *
 * Temporary files of bk_filter_save are named "PATH.<pid>.<n>.tmp"; before
 * writing, a save or update removes those whose process no longer exists
 * (kill(pid, 0) fails with ESRCH), the leftovers of a killed save.
 */
#define _GNU_SOURCE
#include "format.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "endian.h"
#include "hash.h"
#include "memory.h"

#define PAGE_BYTES ((uint64_t)4096)
#define JOURNAL_SUFFIX ".bkj"
#define JOURNAL_HEAD_BYTES (8 + 5 * 8 + 2 * BK_FORMAT_HEADER_SIZE)

static const uint8_t journal_magic[8] = { 'B', 'K', 'F', 'u', 'n', 'd', 'o', '1' };

/* ------------------------------------------------------------------------ */
/* Small system-call helpers (each keeps errno for the caller)              */
/* ------------------------------------------------------------------------ */

static void close_keeping_errno(int fd)
{
    int saved = errno;
    close(fd);
    errno = saved;
}

static void free_keeping_errno(void *memory)
{
    int saved = errno;
    free(memory);
    errno = saved;
}

static bool pwrite_full(int fd, const uint8_t *bytes, size_t count, uint64_t offset)
{
    while (count > 0) {
        ssize_t n = pwrite(fd, bytes, count, (off_t)offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return false;
        }
        bytes += n;
        count -= (size_t)n;
        offset += (uint64_t)n;
    }
    return true;
}

static bool pread_full(int fd, uint8_t *bytes, size_t count, uint64_t offset)
{
    while (count > 0) {
        ssize_t n = pread(fd, bytes, count, (off_t)offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return false;
        }
        bytes += n;
        count -= (size_t)n;
        offset += (uint64_t)n;
    }
    return true;
}

/* A malloc'd copy of the directory part of `path` ("." when none). */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

bool bk_file_sync_directory(const char *path)
{
    char *directory = directory_of(path);
    if (directory == NULL) {
        errno = ENOMEM;
        return false;
    }
    int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(directory);
    if (fd < 0)
        return false;
    bool ok = fsync(fd) == 0 || errno == EINVAL; /* some file systems cannot sync a directory */
    close_keeping_errno(fd);
    return ok;
}

/* "PATH.bkj", malloc'd. */
static char *journal_path_of(const char *path)
{
    size_t length = strlen(path);
    char *journal = malloc(length + sizeof JOURNAL_SUFFIX);
    if (journal != NULL) {
        memcpy(journal, path, length);
        memcpy(journal + length, JOURNAL_SUFFIX, sizeof JOURNAL_SUFFIX);
    }
    return journal;
}

/* ------------------------------------------------------------------------ */
/* Targets                                                                  */
/* ------------------------------------------------------------------------ */

bk_status bk_file_resolve(const char *path, char **out)
{
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    if (!exists && errno != ENOENT)
        return BK_EIO;
    bool link = exists && S_ISLNK(st.st_mode);
    char *resolved = link ? realpath(path, NULL) : strdup(path);
    if (resolved == NULL)
        return link ? BK_EIO : BK_ENOMEM; /* a link to nothing: BK_EIO, ENOENT */
    *out = resolved;
    return BK_OK;
}

/* "<digits>.<digits>.tmp" exactly: the pid part goes to *pid. */
static bool parse_temp_suffix(const char *suffix, long *pid)
{
    char *end;
    if (suffix[0] < '0' || suffix[0] > '9')
        return false;
    errno = 0;
    long value = strtol(suffix, &end, 10);
    if (errno != 0 || value <= 0 || *end != '.')
        return false;
    const char *salt = end + 1;
    if (*salt < '0' || *salt > '9')
        return false;
    while (*salt >= '0' && *salt <= '9')
        salt++;
    if (strcmp(salt, ".tmp") != 0)
        return false;
    *pid = value;
    return true;
}

void bk_file_remove_stale_temporaries(const char *path)
{
    int saved = errno;
    const char *slash = strrchr(path, '/');
    const char *base = slash == NULL ? path : slash + 1;
    size_t keep = strlen(base);
    if (keep > BK_TEMP_NAME_KEEP)
        keep = BK_TEMP_NAME_KEEP;
    char *directory = directory_of(path);
    DIR *dir = directory == NULL ? NULL : opendir(directory);
    free(directory);
    if (dir != NULL) {
        struct dirent *entry;
        while ((entry = readdir(dir)) != NULL) {
            const char *name = entry->d_name;
            long pid;
            if (strncmp(name, base, keep) != 0 || name[keep] != '.' ||
                !parse_temp_suffix(name + keep + 1, &pid))
                continue;
            if (pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
                (void)unlinkat(dirfd(dir), name, 0);
        }
        closedir(dir);
    }
    errno = saved;
}

/* ------------------------------------------------------------------------ */
/* The journal                                                              */
/* ------------------------------------------------------------------------ */

typedef struct journal {
    uint64_t device, inode, old_size, new_size, pages;
    const uint8_t *old_head, *new_head;
    const uint8_t *entries; /* `pages` entries, as on disk */
} journal;

static uint64_t page_length(uint64_t file_size, uint64_t index)
{
    uint64_t start = index * PAGE_BYTES;
    if (start >= file_size)
        return 0;
    return file_size - start < PAGE_BYTES ? file_size - start : PAGE_BYTES;
}

/* Checks a journal's bytes (magic, sizes, entries, checksum) and decodes its
 * fixed part.  False for anything incomplete or damaged. */
static bool parse_journal(const uint8_t *bytes, size_t size, journal *out)
{
    if (size < JOURNAL_HEAD_BYTES + 8 || memcmp(bytes, journal_magic, 8) != 0)
        return false;
    if (XXH3_64bits(bytes, size - 8) != bk_load_le64(bytes + size - 8))
        return false;
    journal j;
    j.device = bk_load_le64(bytes + 8);
    j.inode = bk_load_le64(bytes + 16);
    j.old_size = bk_load_le64(bytes + 24);
    j.new_size = bk_load_le64(bytes + 32);
    j.pages = bk_load_le64(bytes + 40);
    j.old_head = bytes + 48;
    j.new_head = bytes + 48 + BK_FORMAT_HEADER_SIZE;
    j.entries = bytes + JOURNAL_HEAD_BYTES;
    size_t at = JOURNAL_HEAD_BYTES, end = size - 8;
    uint64_t previous = 0;
    for (uint64_t i = 0; i < j.pages; i++) {
        if (end - at < 8)
            return false;
        uint64_t index = bk_load_le64(bytes + at);
        uint64_t length = page_length(j.old_size, index);
        if (length == 0 || (i > 0 && index <= previous) || end - at - 8 < length)
            return false;
        previous = index;
        at += 8 + (size_t)length;
    }
    if (at != end)
        return false;
    *out = j;
    return true;
}

/* Calls visit(context, index, old bytes, length) for each entry. */
static bool for_each_entry(const journal *j,
                           bool (*visit)(void *context, uint64_t index, const uint8_t *bytes,
                                         size_t length),
                           void *context)
{
    const uint8_t *at = j->entries;
    for (uint64_t i = 0; i < j->pages; i++) {
        uint64_t index = bk_load_le64(at);
        size_t length = (size_t)page_length(j->old_size, index);
        if (!visit(context, index, at + 8, length))
            return false;
        at += 8 + length;
    }
    return true;
}

/* Reads the whole journal at `journal_path`: false with errno ENOENT when
 * there is none, false for another error; *bytes malloc'd. */
static bool read_journal_file(const char *journal_path, uint8_t **bytes, size_t *size)
{
    int fd = open(journal_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    uint8_t *buffer = NULL;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
              (uint64_t)st.st_size <= (uint64_t)SIZE_MAX / 2;
    if (ok) {
        buffer = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
        ok = buffer != NULL && pread_full(fd, buffer, (size_t)st.st_size, 0);
    }
    close_keeping_errno(fd);
    if (!ok) {
        free_keeping_errno(buffer);
        return false;
    }
    *bytes = buffer;
    *size = (size_t)st.st_size;
    return true;
}

/* Whether the journal was written for this very file (same inode, and the
 * file's size and first bytes are those before or after the update). */
static bool journal_matches_file(const journal *j, int fd)
{
    struct stat st;
    uint8_t head[BK_FORMAT_HEADER_SIZE];
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_dev != j->device ||
        (uint64_t)st.st_ino != j->inode)
        return false;
    uint64_t size = (uint64_t)st.st_size;
    if (size < BK_FORMAT_HEADER_SIZE || (size != j->old_size && size != j->new_size))
        return false;
    if (!pread_full(fd, head, sizeof head, 0))
        return false;
    return memcmp(head, j->old_head, sizeof head) == 0 ||
           memcmp(head, j->new_head, sizeof head) == 0;
}

static bool write_old_page(void *context, uint64_t index, const uint8_t *bytes, size_t length)
{
    return pwrite_full(*(int *)context, bytes, length, index * PAGE_BYTES);
}

/* Copies the old pages back, restores the old size, and makes it durable. */
static bool roll_back(int fd, const journal *j)
{
    int descriptor = fd;
    return for_each_entry(j, write_old_page, &descriptor) &&
           ftruncate(fd, (off_t)j->old_size) == 0 && fsync(fd) == 0;
}

/* With `durably`, the removal survives a crash; without, a crash may bring
 * the journal back, which recovery then finds already applied. */
static bool remove_journal(const char *journal_path, bool durably)
{
    if (unlink(journal_path) != 0 && errno != ENOENT)
        return false;
    return !durably || bk_file_sync_directory(journal_path);
}

/* Whether the update the journal describes was completed: the file has the
 * new size and first bytes, and the new checksum holds over all of it. */
static bool update_completed(int fd, const journal *j)
{
    uint8_t head[BK_FORMAT_HEADER_SIZE];
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != j->new_size ||
        j->new_size < BK_FORMAT_HEADER_SIZE || j->new_size > SIZE_MAX ||
        !pread_full(fd, head, sizeof head, 0) || memcmp(head, j->new_head, sizeof head) != 0)
        return false;
    void *mapped = mmap(NULL, (size_t)j->new_size, PROT_READ, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED)
        return false;
    bool whole = bk_format_checksum(mapped, (size_t)j->new_size) ==
                 bk_load_le64(head + BK_FORMAT_OFFSET_CHECKSUM);
    munmap(mapped, (size_t)j->new_size);
    return whole;
}

/* With the writer's lock held on fd (the file at `path`): rolls back an
 * update a dead writer left half done, or discards a journal that cannot be
 * applied (incomplete: the file was not touched yet; or for another file). */
static bk_status recover_locked(int fd, const char *path)
{
    char *journal_path = journal_path_of(path);
    if (journal_path == NULL)
        return BK_ENOMEM;
    uint8_t *bytes = NULL;
    size_t size = 0;
    bk_status status = BK_OK;
    if (read_journal_file(journal_path, &bytes, &size)) {
        journal j;
        bool applies = parse_journal(bytes, size, &j) && journal_matches_file(&j, fd) &&
                       !update_completed(fd, &j);
        if ((applies && !roll_back(fd, &j)) || !remove_journal(journal_path, true))
            status = BK_EIO;
    } else if (errno != ENOENT) {
        status = BK_EIO;
    }
    free_keeping_errno(bytes);
    free_keeping_errno(journal_path);
    return status;
}

/* The journal beside the file `path` names: writers name it after the
 * file itself, symbolic links followed.  Malloc'd; NULL when out of
 * memory, or for a link to nothing (which has no journal). */
static char *journal_path_for(const char *path)
{
    char *target;
    if (bk_file_resolve(path, &target) != BK_OK)
        return NULL;
    char *journal_path = journal_path_of(target);
    free(target);
    return journal_path;
}

bk_status bk_file_recover_for_reading(const char *path, bool *writer_active)
{
    *writer_active = false;
    char *journal_path = journal_path_for(path);
    if (journal_path == NULL)
        return BK_OK; /* the read itself will say what is wrong */
    struct stat st;
    bool has_journal = stat(journal_path, &st) == 0;
    free(journal_path);
    if (!has_journal)
        return BK_OK;
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        flock(fd, LOCK_EX | LOCK_NB) != 0) {
        /* a writer holds the lock, or this reader may not write the file:
         * read around the journal instead */
        *writer_active = true;
        if (fd >= 0)
            close(fd);
        return BK_OK;
    }
    char *target;
    bk_status status = bk_file_resolve(path, &target);
    if (status == BK_OK) {
        status = recover_locked(fd, target);
        free(target);
    }
    close_keeping_errno(fd); /* releases the lock */
    return status;
}

/* The file before the update, being rebuilt. */
typedef struct image_builder {
    uint8_t *image;
    uint64_t size;
} image_builder;

static bool copy_old_page(void *context, uint64_t index, const uint8_t *bytes, size_t length)
{
    image_builder *builder = context;
    memcpy(builder->image + index * PAGE_BYTES, bytes, length);
    return true;
}

bk_status bk_file_old_image(const char *path, const uint8_t *current, size_t current_size,
                            uint8_t **out, size_t *out_size)
{
    char *journal_path = journal_path_for(path);
    if (journal_path == NULL)
        return BK_ENOTFOUND;
    uint8_t *bytes = NULL;
    size_t size = 0;
    bool read = read_journal_file(journal_path, &bytes, &size);
    free(journal_path);
    journal j;
    if (!read || !parse_journal(bytes, size, &j) || j.old_size > SIZE_MAX) {
        free(bytes);
        return BK_ENOTFOUND;
    }
    image_builder builder = { malloc(j.old_size ? (size_t)j.old_size : 1), j.old_size };
    if (builder.image == NULL) {
        free(bytes);
        return BK_ENOMEM;
    }
    size_t common = current_size < j.old_size ? current_size : (size_t)j.old_size;
    memcpy(builder.image, current, common);
    memset(builder.image + common, 0, (size_t)j.old_size - common);
    for_each_entry(&j, copy_old_page, &builder);
    free(bytes);
    *out = builder.image;
    *out_size = (size_t)j.old_size;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Updates                                                                  */
/* ------------------------------------------------------------------------ */

struct bk_file_update {
    char *path;            /* the file itself, symbolic links followed */
    int fd;                /* open read-write, flock(LOCK_EX) held */
    const uint8_t *mapped; /* the file as it was loaded (MAP_SHARED, read-only) */
    size_t size;
    bool committed;
};

/* Opens `path` read-write and takes the writer's lock on it, again if it was
 * replaced by a rename while this waited. */
static bk_status open_locked(const char *path, bool wait, int *out, struct stat *info)
{
    for (;;) {
        struct stat st;
        if (stat(path, &st) != 0)
            return BK_EIO;
        if (!S_ISREG(st.st_mode))
            return BK_EUNSUPPORTED;
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
            return BK_EIO;
        int locked;
        while ((locked = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) != 0 && errno == EINTR)
            ;
        struct stat held, now;
        bool ok = locked == 0 && fstat(fd, &held) == 0;
        if (ok && S_ISREG(held.st_mode) && stat(path, &now) == 0 && now.st_dev == held.st_dev &&
            now.st_ino == held.st_ino) {
            *out = fd;
            *info = held;
            return BK_OK;
        }
        close_keeping_errno(fd);
        if (!ok) /* EWOULDBLOCK when !wait and another writer holds it */
            return BK_EIO;
        if (!S_ISREG(held.st_mode))
            return BK_EUNSUPPORTED;
        /* replaced while waiting: lock the file now at `path` */
    }
}

static bk_status map_and_decode(bk_file_update *update, uint64_t file_size,
                                const bk_load_options *options, bk_filter **out)
{
    if (file_size < BK_FORMAT_HEADER_SIZE) {
        uint8_t head[BK_FORMAT_HEADER_SIZE];
        if (!pread_full(update->fd, head, (size_t)file_size, 0))
            return BK_EIO;
        bk_format_header h;
        bk_status status = bk_format_parse_header(head, (size_t)file_size, &h);
        return status != BK_OK ? status : BK_ETRUNCATED;
    }
    if (file_size > SIZE_MAX)
        return BK_ERANGE;
    void *mapped = mmap(NULL, (size_t)file_size, PROT_READ, MAP_SHARED | MAP_POPULATE,
                        update->fd, 0);
    if (mapped == MAP_FAILED)
        return BK_EIO;
    update->mapped = mapped;
    update->size = (size_t)file_size;
    const bk_kind_ops *ops;
    void *object;
    /* the checksum is checked by the commit's single pass over the file */
    bk_status status = bk_format_decode(mapped, update->size, options, false, false, &ops,
                                        &object);
    if (status != BK_OK)
        return status;
    status = bk_filter_wrap(ops, object, out);
    if (status != BK_OK)
        ops->destroy(object);
    return status;
}

bk_status bk_file_update_begin(const char *path, const bk_load_options *options, bool wait,
                               bk_file_update **update_out, bk_filter **filter_out)
{
    if (path == NULL || *path == '\0' || update_out == NULL || filter_out == NULL)
        return BK_EINVAL;
    bk_file_update *update = calloc(1, sizeof *update);
    if (update == NULL)
        return BK_ENOMEM;
    update->fd = -1;
    struct stat st;
    bk_status status = bk_file_resolve(path, &update->path);
    if (status == BK_OK)
        status = open_locked(update->path, wait, &update->fd, &st);
    if (status == BK_OK)
        status = recover_locked(update->fd, update->path);
    if (status == BK_OK && fstat(update->fd, &st) != 0)
        status = BK_EIO;
    if (status == BK_OK) {
        bk_file_remove_stale_temporaries(update->path);
        status = map_and_decode(update, (uint64_t)st.st_size, options, filter_out);
    }
    if (status != BK_OK) {
        int saved = errno;
        bk_file_update_end(update);
        errno = saved;
        return status;
    }
    *update_out = update;
    return BK_OK;
}

/* A growing list of page indexes. */
typedef struct page_list {
    uint64_t *pages;
    size_t count, capacity;
} page_list;

static bool page_list_push(page_list *list, uint64_t index)
{
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 64;
        uint64_t *grown = realloc(list->pages, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        list->pages = grown;
        list->capacity = capacity;
    }
    list->pages[list->count++] = index;
    return true;
}

/* The format's checksum (src/format.c) computed a chunk at a time: the
 * header with its checksum field read as zero (bk_format_checksum_begin),
 * then bytes from 64 on. */
static void checksum_range(XXH3_state_t *state, const uint8_t *bytes, uint64_t size,
                           uint64_t start, uint64_t end)
{
    if (start < BK_FORMAT_HEADER_SIZE)
        start = BK_FORMAT_HEADER_SIZE;
    if (end > size)
        end = size;
    if (start < end)
        XXH3_64bits_update(state, bytes + start, (size_t)(end - start));
}

static bool page_differs(const uint8_t *old, uint64_t old_size, const uint8_t *next,
                         uint64_t next_size, uint64_t index)
{
    uint64_t old_length = page_length(old_size, index);
    uint64_t offset = index * PAGE_BYTES;
    return old_length != page_length(next_size, index) ||
           memcmp(old + offset, next + offset, (size_t)old_length) != 0;
}

/* Bytes per step of the pass below: both files' chunks stay in cache
 * between the checksums and the comparison. */
#define PASS_CHUNK (64 * PAGE_BYTES)

/*
 * One pass over the mapped file and `next` (encoded without its checksum):
 * checks the file's checksum (BK_ECHECKSUM: it was damaged, nothing is
 * written), stores next's checksum in it, and lists the pages where next
 * differs from the file, in increasing order.
 */
static bk_status compare_and_sum(const bk_file_update *update, uint8_t *next, uint64_t next_size,
                                 page_list *changed)
{
    const uint8_t *old = update->mapped;
    uint64_t old_size = update->size;
    uint64_t larger = old_size > next_size ? old_size : next_size;
    XXH3_state_t old_sum, new_sum;
    bk_format_checksum_begin(&old_sum, old);
    bk_format_checksum_begin(&new_sum, next);
    if (!page_list_push(changed, 0)) /* page 0's place: decided once next is summed */
        return BK_ENOMEM;
    for (uint64_t start = 0; start < larger; start += PASS_CHUNK) {
        uint64_t end = larger - start < PASS_CHUNK ? larger : start + PASS_CHUNK;
        checksum_range(&old_sum, old, old_size, start, end);
        checksum_range(&new_sum, next, next_size, start, end);
        for (uint64_t index = start / PAGE_BYTES; index * PAGE_BYTES < end; index++)
            if (index > 0 && page_differs(old, old_size, next, next_size, index) &&
                !page_list_push(changed, index))
                return BK_ENOMEM;
    }
    if (XXH3_64bits_digest(&old_sum) != bk_load_le64(old + BK_FORMAT_OFFSET_CHECKSUM))
        return BK_ECHECKSUM;
    bk_store_le64(next + BK_FORMAT_OFFSET_CHECKSUM, XXH3_64bits_digest(&new_sum));
    if (!page_differs(old, old_size, next, next_size, 0)) {
        changed->count--;
        memmove(changed->pages, changed->pages + 1, changed->count * sizeof *changed->pages);
    }
    return BK_OK;
}

/* The journal's bytes for an update from the mapped file to `next`. */
static uint8_t *build_journal(const bk_file_update *update, const struct stat *st,
                              const uint8_t *next, uint64_t next_size, const uint64_t *pages,
                              uint64_t count, size_t *size)
{
    size_t bytes = JOURNAL_HEAD_BYTES + 8;
    uint64_t entries = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t length = page_length(update->size, pages[i]);
        if (length > 0) {
            bytes += 8 + (size_t)length;
            entries++;
        }
    }
    uint8_t *out = malloc(bytes);
    if (out == NULL)
        return NULL;
    memcpy(out, journal_magic, 8);
    bk_store_le64(out + 8, (uint64_t)st->st_dev);
    bk_store_le64(out + 16, (uint64_t)st->st_ino);
    bk_store_le64(out + 24, update->size);
    bk_store_le64(out + 32, next_size);
    bk_store_le64(out + 40, entries);
    memcpy(out + 48, update->mapped, BK_FORMAT_HEADER_SIZE);
    memcpy(out + 48 + BK_FORMAT_HEADER_SIZE, next, BK_FORMAT_HEADER_SIZE);
    size_t at = JOURNAL_HEAD_BYTES;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t length = page_length(update->size, pages[i]);
        if (length == 0)
            continue;
        bk_store_le64(out + at, pages[i]);
        memcpy(out + at + 8, update->mapped + pages[i] * PAGE_BYTES, (size_t)length);
        at += 8 + (size_t)length;
    }
    bk_store_le64(out + at, XXH3_64bits(out, at));
    *size = bytes;
    return out;
}

static bool write_journal(const char *journal_path, const uint8_t *bytes, size_t size)
{
    int fd = open(journal_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    bool ok = pwrite_full(fd, bytes, size, 0) && fsync(fd) == 0;
    if (ok)
        ok = close(fd) == 0;
    else
        close_keeping_errno(fd);
    return ok && bk_file_sync_directory(journal_path);
}

/* Writes the changed pages of `next`, runs of neighbours in one call. */
static bool write_new_pages(int fd, const uint8_t *next, uint64_t next_size,
                            const uint64_t *pages, uint64_t count)
{
    uint64_t i = 0;
    while (i < count) {
        uint64_t run = 1;
        while (i + run < count && pages[i + run] == pages[i] + run)
            run++;
        uint64_t start = pages[i] * PAGE_BYTES;
        uint64_t end = (pages[i] + run) * PAGE_BYTES;
        if (end > next_size)
            end = next_size;
        if (start < end && !pwrite_full(fd, next + start, (size_t)(end - start), start))
            return false;
        i += run;
    }
    struct stat st;
    if (fstat(fd, &st) != 0)
        return false;
    if ((uint64_t)st.st_size == next_size) /* same size: the data alone */
        return fdatasync(fd) == 0;
    return ftruncate(fd, (off_t)next_size) == 0 && fsync(fd) == 0;
}

/* Journal, pages, journal removed: the four steps at the top of the file. */
static bk_status apply_update(bk_file_update *update, const uint8_t *next, uint64_t next_size,
                              const uint64_t *pages, uint64_t count)
{
    struct stat st;
    if (fstat(update->fd, &st) != 0)
        return BK_EIO;
    size_t journal_size;
    uint8_t *journal_bytes = build_journal(update, &st, next, next_size, pages, count,
                                           &journal_size);
    char *journal_path = journal_path_of(update->path);
    if (journal_bytes == NULL || journal_path == NULL) {
        free(journal_bytes);
        free(journal_path);
        return BK_ENOMEM;
    }
    bk_status status = BK_OK;
    if (!write_journal(journal_path, journal_bytes, journal_size)) {
        status = BK_EIO;
        (void)remove_journal(journal_path, true); /* the file is untouched */
    } else if (!write_new_pages(update->fd, next, next_size, pages, count)) {
        status = BK_EIO;
        journal j; /* put the old pages back now; else the next command will */
        int saved = errno;
        if (parse_journal(journal_bytes, journal_size, &j) && roll_back(update->fd, &j))
            (void)remove_journal(journal_path, true);
        errno = saved;
    } else if (!remove_journal(journal_path, false)) {
        status = BK_EIO;
    }
    free_keeping_errno(journal_bytes);
    free_keeping_errno(journal_path);
    return status;
}

bk_status bk_file_update_commit(bk_file_update *update, const bk_filter *filter)
{
    if (update == NULL || filter == NULL || update->committed || update->mapped == NULL)
        return BK_EINVAL;
    size_t size;
    bk_status status = bk_filter_serialized_size(filter, &size);
    if (status != BK_OK)
        return status;
    uint8_t *next = bk_alloc_zeroed(size);
    if (next == NULL)
        return BK_ENOMEM;
    page_list changed = { NULL, 0, 0 };
    status = bk_format_encode_unsummed(bk_filter_ops(filter),
                                       bk_filter_object_of(filter, bk_filter_kind(filter)), next,
                                       size, &size);
    if (status == BK_OK)
        status = compare_and_sum(update, next, size, &changed);
    if (status == BK_OK && changed.count > 0)
        status = apply_update(update, next, size, changed.pages, changed.count);
    if (status == BK_OK)
        update->committed = true;
    int saved = errno;
    free(changed.pages);
    bk_free_zeroed(next, size);
    errno = saved;
    return status;
}

void bk_file_update_end(bk_file_update *update)
{
    if (update == NULL)
        return;
    int saved = errno;
    if (update->mapped != NULL)
        munmap((void *)(uintptr_t)update->mapped, update->size);
    if (update->fd >= 0)
        close(update->fd); /* releases the lock */
    free(update->path);
    free(update);
    errno = saved;
}
