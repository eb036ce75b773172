/*
 * src/format_file.c -- filter files: save, load, map, verify, inspect.
 *
 * Where the container (src/format.c, the codec; docs/FORMAT.md) meets the
 * disk through POSIX calls; every byte is encoded and decoded there.
 *
 * Save writes a temporary file beside the target, fsyncs it, renames it
 * over the target and fsyncs the directory, so a crash leaves the old file
 * or the new one, never half of one; the new file keeps the old one's
 * owner, group and mode, and a symbolic link is followed to its target.
 * (Changing a file in place, its lock and its undo journal, which the
 * loaders here roll back or read around: src/file_update.c.)  Map uses
 * mmap(PROT_READ) and lets the kind read its payload in place on
 * little-endian hosts: the first query of a multi-gigabyte filter costs a
 * page fault, not a read of the file.
 *
 * Mapping costs the same for any file size; load reads into memory
 * allocated as filters are (src/memory.c), since page faults on 4 KiB
 * pages would dominate it; save is bound by its fsync.  Timings:
 * docs/PERFORMANCE.md.
 */
#define _GNU_SOURCE
#include "format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "endian.h"
#include "hash.h"
#include "memory.h"

#define IO_CHUNK ((size_t)1 << 20)

/* ------------------------------------------------------------------------ */
/* Files: small system-call helpers (each keeps errno for the caller)        */
/* ------------------------------------------------------------------------ */

/* Reads up to `count` bytes, fewer only at end of file.  -1 on error. */
static ssize_t read_full(int fd, void *buffer, size_t count)
{
    size_t done = 0;
    while (done < count) {
        ssize_t n = read(fd, (uint8_t *)buffer + done, count - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

static bool write_full(int fd, const void *buffer, size_t count)
{
    size_t done = 0;
    while (done < count) {
        ssize_t n = write(fd, (const uint8_t *)buffer + done, count - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return false;
        }
        done += (size_t)n;
    }
    return true;
}

static void close_keeping_errno(int fd)
{
    int saved = errno;
    close(fd);
    errno = saved;
}

/* The file's first 64 bytes, checked (steps 1-8), and, for a regular file,
 * its size compared with the declared one (steps 9-10). */
static bk_status read_checked_header(int fd, uint8_t head[BK_FORMAT_HEADER_SIZE],
                                     bk_format_header *h, bool *regular)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return BK_EIO;
    *regular = S_ISREG(st.st_mode);
    ssize_t got = read_full(fd, head, BK_FORMAT_HEADER_SIZE);
    if (got < 0)
        return BK_EIO;
    bk_status status = bk_format_parse_header(head, (size_t)got, h);
    if (status != BK_OK || !*regular)
        return status;
    if ((uint64_t)st.st_size < h->total_size)
        return BK_ETRUNCATED;
    if ((uint64_t)st.st_size > h->total_size)
        return BK_EOVERSIZE;
    return BK_OK;
}

/* After the declared bytes have been read: anything more is BK_EOVERSIZE. */
static bk_status expect_end_of_file(int fd)
{
    uint8_t extra;
    ssize_t got = read_full(fd, &extra, 1);
    if (got < 0)
        return BK_EIO;
    return got == 0 ? BK_OK : BK_EOVERSIZE;
}

/*
 * A whole input in memory.  A regular file's size is known and checked, so
 * its buffer comes from bk_alloc_zeroed, which maps big blocks with a
 * transparent huge-page hint: on the development machine, first touches of
 * 114 MiB of fresh 4 KiB pages cost about a second, of 2 MiB pages a few
 * tens of milliseconds.  A pipe's buffer grows with realloc only as bytes
 * arrive (a pipe that promises a terabyte gets a buffer the size of what it
 * actually sent).
 */
typedef struct input_bytes {
    uint8_t *data;
    size_t size;
    bool from_alloc_zeroed;
} input_bytes;

static void release_input(input_bytes *input)
{
    int saved = errno;
    if (input->from_alloc_zeroed)
        bk_free_zeroed(input->data, input->size);
    else
        free(input->data);
    input->data = NULL;
    errno = saved;
}

static bk_status read_regular_rest(int fd, size_t total, input_bytes *input)
{
    input->data = bk_alloc_zeroed(total);
    if (input->data == NULL)
        return BK_ENOMEM;
    input->size = total;
    input->from_alloc_zeroed = true;
    size_t want = total - BK_FORMAT_HEADER_SIZE;
    ssize_t got = read_full(fd, input->data + BK_FORMAT_HEADER_SIZE, want);
    if (got < 0)
        return BK_EIO;
    return (size_t)got < want ? BK_ETRUNCATED : BK_OK;
}

static bk_status read_stream_rest(int fd, size_t total, input_bytes *input)
{
    size_t capacity = total < IO_CHUNK ? total : IO_CHUNK;
    input->data = malloc(capacity);
    if (input->data == NULL)
        return BK_ENOMEM;
    input->size = capacity;
    input->from_alloc_zeroed = false;
    size_t have = BK_FORMAT_HEADER_SIZE;
    while (have < total) {
        if (have == capacity) {
            size_t grown = capacity > total / 2 ? total : capacity * 2;
            uint8_t *bigger = realloc(input->data, grown);
            if (bigger == NULL)
                return BK_ENOMEM;
            input->data = bigger;
            input->size = capacity = grown;
        }
        ssize_t got = read_full(fd, input->data + have, capacity - have);
        if (got < 0)
            return BK_EIO;
        if ((size_t)got < capacity - have)
            return BK_ETRUNCATED;
        have += (size_t)got;
    }
    return BK_OK;
}

/* Reads the input after its (already checked) 64-byte header, then checks
 * that nothing follows. */
static bk_status read_rest(int fd, const uint8_t head[BK_FORMAT_HEADER_SIZE], size_t total,
                           bool regular, input_bytes *input)
{
    bk_status status = regular ? read_regular_rest(fd, total, input)
                               : read_stream_rest(fd, total, input);
    if (status == BK_OK) {
        memcpy(input->data, head, BK_FORMAT_HEADER_SIZE);
        status = expect_end_of_file(fd);
    }
    if (status != BK_OK && input->data != NULL)
        release_input(input);
    return status;
}

/* Reads and decodes the file as it is now. */
static bk_status load_plain(const char *path, const bk_load_options *options,
                            const bk_kind_ops **ops, void **object)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return BK_EIO;
    uint8_t head[BK_FORMAT_HEADER_SIZE];
    bk_format_header h;
    bool regular;
    input_bytes input = { NULL, 0, false };
    bk_status status = read_checked_header(fd, head, &h, &regular);
    if (status == BK_OK)
        status = read_rest(fd, head, h.total_size, regular, &input);
    close_keeping_errno(fd);
    if (status != BK_OK)
        return status;
    status = bk_format_decode(input.data, h.total_size, options, true, false, ops, object);
    release_input(&input);
    return status;
}

/* A regular file's bytes, whatever they are (malloc'd). */
static bk_status read_raw(const char *path, uint8_t **bytes, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return BK_EIO;
    struct stat st;
    bk_status status = fstat(fd, &st) != 0 ? BK_EIO : BK_OK;
    if (status == BK_OK && (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > SIZE_MAX))
        status = BK_EUNSUPPORTED;
    uint8_t *buffer = NULL;
    if (status == BK_OK) {
        buffer = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
        if (buffer == NULL)
            status = BK_ENOMEM;
    }
    if (status == BK_OK && read_full(fd, buffer, (size_t)st.st_size) != (ssize_t)st.st_size)
        status = BK_EIO;
    close_keeping_errno(fd);
    if (status != BK_OK) {
        int saved = errno;
        free(buffer);
        errno = saved;
        return status;
    }
    *bytes = buffer;
    *size = (size_t)st.st_size;
    return BK_OK;
}

/* While a writer updates the file in place: the file as it was before the
 * update (what was read, with the journal's old pages put back). */
static bk_status read_before_update(const char *path, uint8_t **image, size_t *size)
{
    uint8_t *current;
    size_t current_size;
    bk_status status = read_raw(path, &current, &current_size);
    if (status != BK_OK)
        return status;
    status = bk_file_old_image(path, current, current_size, image, size);
    if (status == BK_ENOTFOUND) { /* the writer finished: what was read is the new file */
        *image = current;
        *size = current_size;
        return BK_OK;
    }
    free(current);
    return status;
}

/* Tries of a reader that keeps meeting a writer's half-written pages. */
#define READ_ATTEMPTS 8

/* The errors a read of a half-updated file can give (pages of two versions,
 * or a size between them). */
static bool may_be_torn(bk_status status)
{
    return status == BK_ECHECKSUM || status == BK_ETRUNCATED || status == BK_EOVERSIZE ||
           status == BK_ECORRUPT;
}

/* A path-based reader: from the file as it is, or from an image of it. */
typedef struct file_reader {
    bk_status (*from_file)(const char *path, void *context);
    bk_status (*from_image)(const uint8_t *image, size_t size, void *context);
    void *context;
} file_reader;

/*
 * How bk_filter_load and bk_file_verify meet in-place updates
 * (src/file_update.c): roll back what a dead writer left, then read.  If
 * what was read looks torn, a live writer may be at work: read around its
 * journal (the file as it was before its update), or, when no writer was
 * seen, read once more -- one may have come and gone during the read.  A
 * file that fails twice with no writer about is damaged.
 */
static bk_status read_meeting_updates(const char *path, const file_reader *reader)
{
    bk_status status = BK_OK;
    for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
        bool writer_active;
        status = bk_file_recover_for_reading(path, &writer_active);
        if (status != BK_OK)
            return status;
        status = reader->from_file(path, reader->context);
        if (status == BK_OK || !may_be_torn(status))
            return status;
        if (writer_active) {
            uint8_t *image;
            size_t size;
            bk_status read = read_before_update(path, &image, &size);
            if (read == BK_OK) {
                status = reader->from_image(image, size, reader->context);
                free(image);
                if (status == BK_OK)
                    return status;
            }
        } else if (attempt > 0) {
            return status;
        }
    }
    return status;
}

typedef struct load_job {
    const bk_load_options *options;
    const bk_kind_ops **ops;
    void **object;
} load_job;

static bk_status load_from_file(const char *path, void *context)
{
    load_job *job = context;
    return load_plain(path, job->options, job->ops, job->object);
}

static bk_status load_from_image(const uint8_t *image, size_t size, void *context)
{
    load_job *job = context;
    return bk_format_decode(image, size, job->options, true, false, job->ops, job->object);
}

static bk_status load_object(const char *path, const bk_load_options *options,
                             const bk_kind_ops **ops, void **object)
{
    load_job job = { options, ops, object };
    file_reader reader = { load_from_file, load_from_image, &job };
    return read_meeting_updates(path, &reader);
}

bk_status bk_filter_load(const char *path, const bk_load_options *options, bk_filter **out)
{
    if (path == NULL || out == NULL)
        return BK_EINVAL;
    const bk_kind_ops *ops;
    void *object;
    bk_status status = load_object(path, options, &ops, &object);
    if (status != BK_OK)
        return status;
    return bk_format_wrap(ops, object, out);
}

/* ------------------------------------------------------------------------ */
/* Saving atomically                                                        */
/* ------------------------------------------------------------------------ */

/* Creates "PATH.<pid>.<n>.tmp" exclusively (PATH's last component cut to
 * BK_TEMP_NAME_KEEP bytes); its name goes to *temp_path.  The pid lets a
 * later save recognise the leftovers of a killed one
 * (bk_file_remove_stale_temporaries). */
static int create_temp_beside(const char *path, char **temp_path)
{
    const char *slash = strrchr(path, '/');
    size_t base_start = slash == NULL ? 0 : (size_t)(slash - path) + 1;
    size_t keep = strlen(path) - base_start;
    if (keep > BK_TEMP_NAME_KEEP)
        keep = BK_TEMP_NAME_KEEP;
    size_t room = base_start + keep + 64;
    char *name = malloc(room);
    if (name == NULL) {
        errno = ENOMEM;
        return -1;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned long long salt = (unsigned long long)now.tv_nsec;
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        snprintf(name, room, "%.*s.%ld.%llu.tmp", (int)(base_start + keep), path, (long)getpid(),
                 salt + attempt);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            *temp_path = name;
            return fd;
        }
        if (errno != EEXIST)
            break;
    }
    int saved = errno;
    free(name);
    errno = saved;
    return -1;
}

/* The new file takes the old one's owner and group (when this process may
 * give them away: root) and its permission bits. */
static bool keep_owner_and_mode(int fd, const struct stat *old)
{
    if (geteuid() == 0 && fchown(fd, old->st_uid, old->st_gid) != 0)
        return false;
    return fchmod(fd, old->st_mode & 07777) == 0;
}

static bk_status write_file_atomically(const char *path, const struct stat *old,
                                       const uint8_t *bytes, size_t size)
{
    char *temp_path;
    int fd = create_temp_beside(path, &temp_path);
    if (fd < 0)
        return BK_EIO;
    bool ok = (old == NULL || keep_owner_and_mode(fd, old)) && write_full(fd, bytes, size) &&
              fsync(fd) == 0;
    if (ok) {
        ok = close(fd) == 0;
        fd = -1;
    }
    if (ok)
        ok = rename(temp_path, path) == 0;
    if (!ok) {
        int saved = errno;
        if (fd >= 0)
            close(fd);
        unlink(temp_path);
        free(temp_path);
        errno = saved;
        return BK_EIO;
    }
    free(temp_path);
    return bk_file_sync_directory(path) ? BK_OK : BK_EIO;
}

/* The file to write (symbolic links followed) and, when it exists, its
 * status; BK_EUNSUPPORTED for anything but a regular file. */
static bk_status save_target(const char *path, char **target, struct stat *old, bool *exists)
{
    bk_status status = bk_file_resolve(path, target);
    if (status != BK_OK)
        return status;
    *exists = stat(*target, old) == 0;
    if (!*exists && errno != ENOENT)
        status = BK_EIO;
    else if (*exists && !S_ISREG(old->st_mode))
        status = BK_EUNSUPPORTED;
    if (status != BK_OK) {
        int saved = errno;
        free(*target);
        errno = saved;
    }
    return status;
}

static bk_status save_object(const bk_kind_ops *ops, const void *object, const char *path)
{
    size_t size;
    bk_status status = bk_format_encoded_size(ops, object, &size);
    if (status != BK_OK)
        return status;
    char *target;
    struct stat old;
    bool exists;
    status = save_target(path, &target, &old, &exists);
    if (status != BK_OK)
        return status;
    bk_file_remove_stale_temporaries(target);
    uint8_t *bytes = bk_alloc_zeroed(size); /* huge pages for big filters, as above */
    if (bytes == NULL) {
        free(target);
        return BK_ENOMEM;
    }
    status = bk_format_encode(ops, object, bytes, size, NULL);
    if (status == BK_OK)
        status = write_file_atomically(target, exists ? &old : NULL, bytes, size);
    int saved = errno;
    bk_free_zeroed(bytes, size);
    free(target);
    errno = saved;
    return status;
}

bk_status bk_filter_save(const bk_filter *filter, const char *path)
{
    if (filter == NULL || path == NULL || *path == '\0')
        return BK_EINVAL;
    return save_object(bk_filter_ops(filter),
                       bk_filter_object_of(filter, bk_filter_kind(filter)), path);
}

/* ------------------------------------------------------------------------ */
/* Mapping                                                                  */
/* ------------------------------------------------------------------------ */

static void unmap_backing(void *memory, size_t size) { munmap(memory, size); }

bk_status bk_filter_map(const char *path, const bk_load_options *options, bk_filter **out)
{
    if (path == NULL || out == NULL)
        return BK_EINVAL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO's open must not wait */
    if (fd < 0)
        return BK_EIO;
    struct stat st;
    bool known = fstat(fd, &st) == 0;
    if (!known || !S_ISREG(st.st_mode)) { /* before reading a byte */
        bk_status refused = known ? BK_EUNSUPPORTED : BK_EIO;
        close_keeping_errno(fd);
        return refused;
    }
    bool writer_active; /* a mapping shows the file as it is, even mid-update */
    bk_status status = bk_file_recover_for_reading(path, &writer_active);
    uint8_t head[BK_FORMAT_HEADER_SIZE];
    bk_format_header h;
    bool regular;
    if (status == BK_OK)
        status = read_checked_header(fd, head, &h, &regular);
    void *mapped = MAP_FAILED;
    if (status == BK_OK) {
        mapped = mmap(NULL, h.total_size, PROT_READ, MAP_SHARED, fd, 0);
        if (mapped == MAP_FAILED)
            status = BK_EIO;
    }
    close_keeping_errno(fd);
    if (status != BK_OK)
        return status;
    (void)madvise(mapped, h.total_size, MADV_RANDOM); /* queries touch pages at random */

    const bk_kind_ops *ops;
    void *object;
    bool in_place = bk_host_is_little_endian();
    status = bk_format_decode(mapped, h.total_size, options, false, in_place, &ops, &object);
    if (status == BK_OK)
        status = bk_format_wrap(ops, object, out);
    if (status != BK_OK || !in_place) {
        unmap_backing(mapped, h.total_size); /* not needed: failed, or the kind copied */
        return status;
    }
    bk_filter_attach_backing(*out, mapped, h.total_size, unmap_backing);
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Verification                                                             */
/* ------------------------------------------------------------------------ */

static bk_status checksum_stream(int fd, const uint8_t head[BK_FORMAT_HEADER_SIZE], size_t total,
                                 uint64_t *checksum)
{
    uint8_t *chunk = malloc(IO_CHUNK);
    if (chunk == NULL)
        return BK_ENOMEM;
    XXH3_state_t state;
    bk_format_checksum_begin(&state, head);
    size_t remaining = total - BK_FORMAT_HEADER_SIZE;
    bk_status status = BK_OK;
    while (remaining > 0) {
        size_t want = remaining < IO_CHUNK ? remaining : IO_CHUNK;
        ssize_t got = read_full(fd, chunk, want);
        if (got < 0) {
            status = BK_EIO;
            break;
        }
        if ((size_t)got < want) {
            status = BK_ETRUNCATED;
            break;
        }
        XXH3_64bits_update(&state, chunk, want);
        remaining -= want;
    }
    int saved = errno;
    free(chunk);
    errno = saved;
    if (status == BK_OK)
        status = expect_end_of_file(fd);
    *checksum = XXH3_64bits_digest(&state);
    return status;
}

/* The whole of an image checked against its header's checksum. */
static bk_status verify_image(const uint8_t *image, size_t size, void *context)
{
    (void)context;
    bk_format_header h;
    bk_status status = bk_format_parse_header(image, size, &h);
    if (status == BK_OK && size != h.total_size)
        status = size < h.total_size ? BK_ETRUNCATED : BK_EOVERSIZE;
    if (status == BK_OK && bk_format_checksum(image, size) != h.checksum)
        status = BK_ECHECKSUM;
    return status;
}

static bk_status verify_file(const char *path, void *context)
{
    (void)context;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return BK_EIO;
    uint8_t head[BK_FORMAT_HEADER_SIZE];
    bk_format_header h;
    bool regular;
    uint64_t checksum = 0;
    bk_status status = read_checked_header(fd, head, &h, &regular);
    if (status == BK_OK)
        status = checksum_stream(fd, head, h.total_size, &checksum);
    close_keeping_errno(fd);
    if (status == BK_OK && checksum != h.checksum)
        status = BK_ECHECKSUM;
    return status;
}

bk_status bk_file_verify(const char *path)
{
    if (path == NULL)
        return BK_EINVAL;
    file_reader reader = { verify_file, verify_image, NULL };
    return read_meeting_updates(path, &reader);
}

/* ------------------------------------------------------------------------ */
/* Inspection: the header alone                                             */
/* ------------------------------------------------------------------------ */

bk_status bk_file_inspect(const char *path, bk_file_info *out)
{
    if (path == NULL || out == NULL)
        return BK_EINVAL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return BK_EIO;
    uint8_t head[BK_FORMAT_HEADER_SIZE];
    bk_format_header h;
    bool regular;
    bk_status status = read_checked_header(fd, head, &h, &regular);
    uint8_t *rest = NULL;
    size_t rest_size = 0;
    if (status == BK_OK) {
        rest_size = h.header_size - BK_FORMAT_HEADER_SIZE; /* <= 1 MiB */
        rest = malloc(rest_size ? rest_size : 1);
        if (rest == NULL)
            status = BK_ENOMEM;
    }
    if (status == BK_OK) {
        ssize_t got = read_full(fd, rest, rest_size);
        if (got < 0)
            status = BK_EIO;
        else if ((size_t)got < rest_size)
            status = BK_ETRUNCATED;
        else if (!bk_format_all_zero(rest + h.params_size, rest_size - h.params_size))
            status = BK_ECORRUPT;
    }
    close_keeping_errno(fd);
    free(rest);
    if (status == BK_OK)
        bk_format_describe(&h, out);
    return status;
}
