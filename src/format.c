/*
 * src/format.c -- the portable file format: serialise, save, load, map.
 *
 * One container for every kind (specification: docs/FORMAT.md).  The
 * container owns everything generic -- the 64-byte header, sizes, padding,
 * the checksum, files and mappings -- and asks the kind, through the format
 * hooks of its bk_kind_ops (src/filter.h), for just two byte strings: its
 * parameter block and its payload.
 *
 *   0        64             header_size                 header_size + payload_size
 *   +--------+--------+-----+---------------------------+
 *   | header | params | 0.. |  payload (64-byte aligned)|
 *   +--------+--------+-----+---------------------------+
 *
 *   header: magic "\x89BKF\r\n\x1a\n", version 1, kind, header_size,
 *   payload_size, hash algorithm, params_size, seed (or SipHash key
 *   identifier), keys added, XXH3-64 checksum of the whole file with the
 *   checksum field read as zero.  All little-endian, written and read
 *   field by field with src/endian.h: no host struct ever touches the wire.
 *
 * Reading treats the input as hostile.  The header alone (steps 1-8 of
 * docs/FORMAT.md) decides the total size, which is compared with the real
 * input before a single byte is allocated; then padding, checksum, kind,
 * key, and finally the kind's own checks of its parameters against its
 * payload.  Each failure has its own status.  tests/fuzz/ hammers this with
 * libFuzzer; tests/test_format.c builds one damaged input per error.
 *
 * Files: save writes a temporary file beside the target, fsyncs it, renames
 * it over the target and fsyncs the directory, so a crash leaves the old
 * file or the new one, never half of one.  (Changing a file in place, its
 * lock and its undo journal, which the loaders here roll back or read
 * around: src/file_update.c.)  Map uses mmap(PROT_READ) and lets
 * the kind read its payload in place on little-endian hosts: the first query
 * of a multi-gigabyte filter costs a page fault, not a read of the file.
 *
 * Mapping costs the same for any file size; load reads into memory
 * allocated as filters are (src/memory.c), since page faults on 4 KiB
 * pages would dominate it; save is bound by its fsync.  Timings:
 * docs/PERFORMANCE.md.  The buffer loader is fuzzed under ASan+UBSan in
 * CI (tests/fuzz).
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

static const uint8_t format_magic[8] = { 0x89, 'B', 'K', 'F', '\r', '\n', 0x1a, '\n' };

#define IO_CHUNK ((size_t)1 << 20)

static uint64_t round_up_64(uint64_t bytes)
{
    return (bytes + 63) & ~(uint64_t)63;
}

static bool all_zero(const uint8_t *bytes, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (bytes[i] != 0)
            return false;
    return true;
}

/* ------------------------------------------------------------------------ */
/* The header                                                               */
/* ------------------------------------------------------------------------ */

static bool hash_algorithm_known(uint8_t algorithm)
{
    return algorithm == BK_HASH_XXH3 || algorithm == BK_HASH_SIPHASH ||
           algorithm == BK_HASH_XXH64;
}

static void decode_fields(const uint8_t *bytes, bk_format_header *h)
{
    h->version = bk_load_le16(bytes + BK_FORMAT_OFFSET_VERSION);
    h->kind = bk_load_le16(bytes + BK_FORMAT_OFFSET_KIND);
    h->header_size = bk_load_le32(bytes + BK_FORMAT_OFFSET_HEADER_SIZE);
    h->payload_size = bk_load_le64(bytes + BK_FORMAT_OFFSET_PAYLOAD_SIZE);
    h->hash_algorithm = bytes[BK_FORMAT_OFFSET_HASH_ALGORITHM];
    h->params_size = bk_load_le32(bytes + BK_FORMAT_OFFSET_PARAMS_SIZE);
    h->seed = bk_load_le64(bytes + BK_FORMAT_OFFSET_SEED);
    h->keys_added = bk_load_le64(bytes + BK_FORMAT_OFFSET_KEYS_ADDED);
    h->checksum = bk_load_le64(bytes + BK_FORMAT_OFFSET_CHECKSUM);
}

/* Steps 5-8: header_size, params_size, payload_size and their sum. */
static bk_status check_sizes(bk_format_header *h)
{
    if (h->header_size < BK_FORMAT_HEADER_SIZE || h->header_size % 64 != 0)
        return BK_ECORRUPT;
    if (h->header_size > BK_FORMAT_MAX_HEADER_SIZE)
        return BK_ERANGE;
    if (round_up_64((uint64_t)BK_FORMAT_HEADER_SIZE + h->params_size) != h->header_size)
        return BK_ECORRUPT;
    if (h->payload_size > UINT64_MAX - h->header_size ||
        h->header_size + h->payload_size > (uint64_t)SIZE_MAX)
        return BK_ERANGE;
    h->total_size = (size_t)(h->header_size + h->payload_size);
    return BK_OK;
}

bk_status bk_format_parse_header(const uint8_t *bytes, size_t available, bk_format_header *out)
{
    size_t magic_bytes = available < sizeof format_magic ? available : sizeof format_magic;
    if (magic_bytes > 0 && memcmp(bytes, format_magic, magic_bytes) != 0)
        return BK_EMAGIC;
    if (available < BK_FORMAT_HEADER_SIZE)
        return BK_ETRUNCATED;
    bk_format_header h;
    decode_fields(bytes, &h);
    if (h.version != BK_FORMAT_VERSION)
        return BK_EVERSION;
    if (!all_zero(bytes + BK_FORMAT_OFFSET_RESERVED_A, 3) ||
        !all_zero(bytes + BK_FORMAT_OFFSET_RESERVED_B, 8) ||
        !hash_algorithm_known(h.hash_algorithm))
        return BK_ECORRUPT;
    bk_status status = check_sizes(&h);
    if (status != BK_OK)
        return status;
    *out = h;
    return BK_OK;
}

static const uint8_t zero_checksum[8];

uint64_t bk_format_checksum(const uint8_t *bytes, size_t size)
{
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, bytes, BK_FORMAT_OFFSET_CHECKSUM);
    XXH3_64bits_update(&state, zero_checksum, sizeof zero_checksum);
    XXH3_64bits_update(&state, bytes + BK_FORMAT_HEADER_SIZE, size - BK_FORMAT_HEADER_SIZE);
    return XXH3_64bits_digest(&state);
}

/* ------------------------------------------------------------------------ */
/* Decoding                                                                 */
/* ------------------------------------------------------------------------ */

/* Step 15: the hasher the file names; for SipHash, the caller's key must
 * be the one whose identifier the file holds. */
static bk_status hasher_for(const bk_format_header *h, const bk_load_options *options,
                            bk_hasher *hasher)
{
    if (h->hash_algorithm != BK_HASH_SIPHASH)
        return bk_hasher_init(hasher, (bk_hash_algorithm)h->hash_algorithm, h->seed, NULL);
    if (options == NULL || options->secret_key == NULL)
        return BK_EKEY;
    bk_status status = bk_hasher_init(hasher, BK_HASH_SIPHASH, 0, options->secret_key);
    if (status != BK_OK)
        return status;
    if (hasher->seed != h->seed) {
        memset(hasher, 0, sizeof *hasher);
        return BK_EKEY;
    }
    return BK_OK;
}

/* Steps 13-14. */
static bk_status kind_for(const bk_format_header *h, const bk_load_options *options,
                          const bk_kind_ops **ops)
{
    const bk_kind_ops *found = h->kind == BK_KIND_NONE ? NULL : bk_kind_ops_for((bk_kind)h->kind);
    if (found == NULL || found->read == NULL)
        return BK_EKIND;
    if (options != NULL && options->expected_kind != BK_KIND_NONE &&
        options->expected_kind != (bk_kind)h->kind)
        return BK_EKIND;
    *ops = found;
    return BK_OK;
}

bk_status bk_format_decode(const uint8_t *bytes, size_t size, const bk_load_options *options,
                           bool verify_checksum, bool in_place, const bk_kind_ops **ops_out,
                           void **object_out)
{
    bk_format_header h;
    bk_status status = bk_format_parse_header(bytes, size, &h);
    if (status != BK_OK)
        return status;
    if (size < h.total_size)
        return BK_ETRUNCATED;
    if (size > h.total_size)
        return BK_EOVERSIZE;
    const uint8_t *params = bytes + BK_FORMAT_PARAMS_OFFSET;
    const uint8_t *payload = bytes + h.header_size;
    size_t padding = h.header_size - BK_FORMAT_PARAMS_OFFSET - h.params_size;
    if (!all_zero(params + h.params_size, padding))
        return BK_ECORRUPT;
    if (verify_checksum && bk_format_checksum(bytes, size) != h.checksum)
        return BK_ECHECKSUM;
    const bk_kind_ops *ops;
    status = kind_for(&h, options, &ops);
    if (status != BK_OK)
        return status;
    bk_hasher hasher;
    status = hasher_for(&h, options, &hasher);
    if (status != BK_OK)
        return status;
    bool read_in_place = in_place && bk_host_is_little_endian() &&
                         ((uintptr_t)payload & 63) == 0;
    void *object;
    status = ops->read(params, h.params_size, payload, h.payload_size, &hasher, h.keys_added,
                       read_in_place, &object);
    memset(&hasher, 0, sizeof hasher); /* the kind copied what it needs; drop the key */
    if (status != BK_OK)
        return status;
    *ops_out = ops;
    *object_out = object;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Encoding                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct layout {
    size_t params_size;
    size_t header_size;
    uint64_t payload_size;
    size_t total_size;
} layout;

static bk_status layout_of(const bk_kind_ops *ops, const void *object, layout *out)
{
    if (ops->params_size == NULL || ops->write_params == NULL || ops->payload_size == NULL ||
        ops->write_payload == NULL)
        return BK_EUNSUPPORTED;
    size_t params_size = ops->params_size(object);
    if (params_size > BK_FORMAT_MAX_HEADER_SIZE - BK_FORMAT_HEADER_SIZE)
        return BK_ERANGE;
    size_t header_size = (size_t)round_up_64(BK_FORMAT_HEADER_SIZE + params_size);
    uint64_t payload_size = ops->payload_size(object);
    if (payload_size > (uint64_t)(SIZE_MAX - header_size))
        return BK_ERANGE;
    out->params_size = params_size;
    out->header_size = header_size;
    out->payload_size = payload_size;
    out->total_size = header_size + (size_t)payload_size;
    return BK_OK;
}

bk_status bk_format_encoded_size(const bk_kind_ops *ops, const void *object, size_t *size)
{
    layout l;
    bk_status status = layout_of(ops, object, &l);
    if (status == BK_OK)
        *size = l.total_size;
    return status;
}

static void write_header(const bk_kind_ops *ops, const void *object, const layout *l,
                         uint8_t *out)
{
    const bk_hasher *hasher = ops->hasher(object);
    bk_stats stats;
    ops->stats(object, &stats);
    memset(out, 0, l->header_size);
    memcpy(out + BK_FORMAT_OFFSET_MAGIC, format_magic, sizeof format_magic);
    bk_store_le16(out + BK_FORMAT_OFFSET_VERSION, BK_FORMAT_VERSION);
    bk_store_le16(out + BK_FORMAT_OFFSET_KIND, (uint16_t)ops->kind);
    bk_store_le32(out + BK_FORMAT_OFFSET_HEADER_SIZE, (uint32_t)l->header_size);
    bk_store_le64(out + BK_FORMAT_OFFSET_PAYLOAD_SIZE, l->payload_size);
    out[BK_FORMAT_OFFSET_HASH_ALGORITHM] = (uint8_t)hasher->algorithm;
    bk_store_le32(out + BK_FORMAT_OFFSET_PARAMS_SIZE, (uint32_t)l->params_size);
    bk_store_le64(out + BK_FORMAT_OFFSET_SEED, hasher->seed);
    bk_store_le64(out + BK_FORMAT_OFFSET_KEYS_ADDED, stats.keys_added);
}

bk_status bk_format_encode_unsummed(const bk_kind_ops *ops, const void *object, uint8_t *buffer,
                                    size_t size, size_t *written)
{
    layout l;
    bk_status status = layout_of(ops, object, &l);
    if (status != BK_OK)
        return status;
    if (size < l.total_size)
        return BK_ERANGE;
    write_header(ops, object, &l, buffer);
    ops->write_params(object, buffer + BK_FORMAT_PARAMS_OFFSET);
    ops->write_payload(object, buffer + l.header_size);
    *written = l.total_size;
    return BK_OK;
}

bk_status bk_format_encode(const bk_kind_ops *ops, const void *object, uint8_t *buffer,
                           size_t size, size_t *written)
{
    size_t total;
    bk_status status = bk_format_encode_unsummed(ops, object, buffer, size, &total);
    if (status != BK_OK)
        return status;
    bk_store_le64(buffer + BK_FORMAT_OFFSET_CHECKSUM, bk_format_checksum(buffer, total));
    if (written != NULL)
        *written = total;
    return BK_OK;
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                  */
/* ------------------------------------------------------------------------ */

bk_status bk_filter_serialized_size(const bk_filter *filter, size_t *size)
{
    if (filter == NULL || size == NULL)
        return BK_EINVAL;
    return bk_format_encoded_size(bk_filter_ops(filter),
                                  bk_filter_object_of(filter, bk_filter_kind(filter)), size);
}

bk_status bk_filter_serialize(const bk_filter *filter, void *buffer, size_t size, size_t *written)
{
    if (filter == NULL || (buffer == NULL && size != 0))
        return BK_EINVAL;
    return bk_format_encode(bk_filter_ops(filter),
                            bk_filter_object_of(filter, bk_filter_kind(filter)), buffer, size,
                            written);
}

static bk_status wrap_decoded(const bk_kind_ops *ops, void *object, bk_filter **out)
{
    bk_status status = bk_filter_wrap(ops, object, out);
    if (status != BK_OK)
        ops->destroy(object);
    return status;
}

bk_status bk_filter_deserialize(const void *buffer, size_t size, const bk_load_options *options,
                                bk_filter **out)
{
    if ((buffer == NULL && size != 0) || out == NULL)
        return BK_EINVAL;
    const bk_kind_ops *ops;
    void *object;
    bk_status status = bk_format_decode(buffer, size, options, true, false, &ops, &object);
    if (status != BK_OK)
        return status;
    return wrap_decoded(ops, object, out);
}

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
    return wrap_decoded(ops, object, out);
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
        snprintf(name, room, "%.*s.%ld.%llu.tmp", (int)(base_start + keep), path,
                 (long)getpid(), salt + attempt);
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

static void unmap_backing(void *memory, size_t size)
{
    munmap(memory, size);
}

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
        status = wrap_decoded(ops, object, out);
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

static bk_status checksum_stream(int fd, const uint8_t head[BK_FORMAT_HEADER_SIZE],
                                 size_t total, uint64_t *checksum)
{
    uint8_t *chunk = malloc(IO_CHUNK);
    if (chunk == NULL)
        return BK_ENOMEM;
    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, head, BK_FORMAT_OFFSET_CHECKSUM);
    XXH3_64bits_update(&state, zero_checksum, sizeof zero_checksum);
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

static void describe(const bk_format_header *h, bk_file_info *out)
{
    bk_file_info info;
    memset(&info, 0, sizeof info);
    info.version = h->version;
    info.kind = (bk_kind)h->kind;
    info.hash_algorithm = (bk_hash_algorithm)h->hash_algorithm;
    info.seed = h->seed;
    info.keys_added = h->keys_added;
    info.params_size = h->params_size;
    info.payload_offset = h->header_size;
    info.payload_size = h->payload_size;
    info.total_size = h->total_size;
    *out = info;
}

bk_status bk_buffer_inspect(const void *buffer, size_t size, bk_file_info *out)
{
    if ((buffer == NULL && size != 0) || out == NULL)
        return BK_EINVAL;
    const uint8_t *bytes = buffer;
    bk_format_header h;
    bk_status status = bk_format_parse_header(bytes, size, &h);
    if (status != BK_OK)
        return status;
    if (size < h.total_size)
        return BK_ETRUNCATED;
    if (size > h.total_size)
        return BK_EOVERSIZE;
    size_t padding_start = BK_FORMAT_PARAMS_OFFSET + h.params_size;
    if (!all_zero(bytes + padding_start, h.header_size - padding_start))
        return BK_ECORRUPT;
    describe(&h, out);
    return BK_OK;
}

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
        else if (!all_zero(rest + h.params_size, rest_size - h.params_size))
            status = BK_ECORRUPT;
    }
    close_keeping_errno(fd);
    free(rest);
    if (status == BK_OK)
        describe(&h, out);
    return status;
}
