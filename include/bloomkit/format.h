/*
 * bloomkit/format.h -- saving, loading, serialising and mapping filters.
 *
 * One portable format for every kind: little-endian whatever the host,
 * versioned, checksummed (XXH3-64), payload 64-byte aligned so a file can be
 * mapped and queried in place.  Byte-by-byte specification: docs/FORMAT.md.
 *
 * Every loader treats its input as hostile: truncation, wrong magic,
 * unknown version or kind, contradictory parameters, overflowing sizes and
 * bad checksums each return their own bk_status, never read out of bounds
 * and never allocate more than the input justifies.  On error *out is
 * untouched.
 *
 * Thread safety: serialising or saving reads the filter; no thread may add
 * to it meanwhile (even a BK_FLAG_CONCURRENT filter), or the snapshot may
 * pair bits with a stale count.  Loading and mapping share nothing.
 */
#ifndef BLOOMKIT_FORMAT_H
#define BLOOMKIT_FORMAT_H

#include "bloomkit/common.h"
#include "bloomkit/filter.h"

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

/* The format version this build writes and reads. */
#define BK_FORMAT_VERSION 1
/* Bytes of the common header; the payload offset is a multiple of it. */
#define BK_FORMAT_HEADER_SIZE 64
/* Largest header (common header + kind parameters + padding) a reader
 * accepts: BK_ERANGE beyond it. */
#define BK_FORMAT_MAX_HEADER_SIZE ((size_t)1 << 20)

typedef struct bk_load_options {
    /* 16-byte secret key for filters hashed with SipHash (checked against
     * the key identifier stored in the file: BK_EKEY if it differs or is
     * missing).  NULL otherwise. */
    const uint8_t *secret_key;
    /* Refuse (BK_EKIND) a filter of another kind; BK_KIND_NONE accepts any. */
    bk_kind expected_kind;
} bk_load_options;

/* Bytes bk_filter_serialize will write (header, kind parameters, padding
 * and payload).  BK_EINVAL for NULL arguments, BK_EUNSUPPORTED for a kind
 * without format hooks, BK_ERANGE if the size does not fit a size_t. */
bk_status bk_filter_serialized_size(const bk_filter *filter, size_t *size);

/* Writes the filter into buffer[0..size), which the caller owns.  BK_ERANGE
 * if size is too small (nothing written).  *written (may be NULL) receives
 * the byte count.  The filter is not changed; its bytes are the same on
 * every host. */
bk_status bk_filter_serialize(const bk_filter *filter, void *buffer, size_t size,
                              size_t *written);

/* Reads a filter from buffer[0..size) (copies what it needs; the buffer may
 * be freed afterwards).  `options` may be NULL (any kind, no key).  On
 * success *out is a new, writable filter the caller frees with
 * bk_filter_free.  Errors: see "Errors common to the loaders" below. */
bk_status bk_filter_deserialize(const void *buffer, size_t size, const bk_load_options *options,
                                bk_filter **out);

/* Saves to `path` atomically: written to a temporary file
 * "PATH.<pid>.<n>.tmp" in the same directory, flushed (fsync), then renamed
 * over `path`, so a crash never leaves a half-written filter where a good
 * one was.  BK_EIO on a system error (errno is preserved); on any failure
 * before the rename the temporary file is removed and `path` is untouched.
 * (If only the final fsync of the directory fails, the new file is in place
 * but BK_EIO is returned: its survival of a crash is not assured.)
 *   - A symbolic link at `path` is followed: the file it names is replaced
 *     (temporary file beside that file), the link stays.  A link to nothing:
 *     BK_EIO, errno ENOENT.
 *   - An existing `path` that is not a regular file (device, FIFO, socket,
 *     directory): BK_EUNSUPPORTED, nothing written.
 *   - A replaced file's permission bits are kept, and its owner and group
 *     when the caller is root; a new file gets mode 0666 less the umask.
 *   - Other hard links to a replaced file keep the old contents (use
 *     bk_file_update_commit to change the file every link shows).
 *   - Temporary files of earlier saves of `path` whose process is gone
 *     (killed mid-save) are removed first.
 * Memory: one extra buffer of the serialised size. */
bk_status bk_filter_save(const bk_filter *filter, const char *path);

/* Loads a whole file into memory: a new, writable filter, independent of
 * the file.  The header is checked and the declared size compared with the
 * file's before anything is allocated.  Reads pipes too.  Errors: see
 * below; BK_EIO (errno) if the file cannot be opened or read.
 * bk_filter_load, bk_filter_map and bk_file_verify first roll back an
 * in-place update (bk_file_update_commit) that a crash interrupted, when no
 * writer holds the file's lock; while a writer does, bk_filter_load and
 * bk_file_verify read the file as it was before that update (never half of
 * it), without waiting. */
bk_status bk_filter_load(const char *path, const bk_load_options *options, bk_filter **out);

/* Maps a file read-only (mmap) and queries it in place: a filter of any size
 * answers its first query without reading the file.  The checksum is not
 * verified (that would read the whole file): call bk_file_verify for it.
 * Writes return BK_EIMMUTABLE; bk_filter_free unmaps.  (On a big-endian
 * host the kind converts a private copy of the payload instead, which is
 * writable; the file is never written either way.)  The file must not be
 * truncated or rewritten in place while mapped: replace it by renaming a
 * new file over it, as bk_filter_save does (an in-place update,
 * bk_file_update_commit, shows through a mapping page by page as it is
 * written).  BK_EUNSUPPORTED if `path` is not a regular file (a pipe,
 * /dev/stdin, a device), decided before a byte is read: the caller can
 * still bk_filter_load it. */
bk_status bk_filter_map(const char *path, const bk_load_options *options, bk_filter **out);

/* Verifies the checksum of a file on disk without loading it: checks the
 * header (magic, version, sizes: the same codes as the loaders), compares
 * the file's size with the declared one, then reads the file in 1 MiB
 * chunks.  BK_ECHECKSUM if it does not match.  Does not look at the kind's
 * parameters (use bk_filter_load for that). */
bk_status bk_file_verify(const char *path);

/*
 * In-place updates: read, change and write back a filter file whose size
 * makes a full rewrite too slow (docs/FORMAT.md, "Updating a file in
 * place").  Only the 4 KiB pages whose bytes changed are written, after
 * their old contents went to an undo journal "PATH.bkj" (fsynced), so a
 * crash at any moment leaves, once the next reader or writer has rolled the
 * journal back, exactly the old file.  One writer at a time: begin takes an
 * advisory lock (flock(LOCK_EX) on the file itself, shared by every name of
 * it) that it holds until bk_file_update_end.  Readers never take it.
 *
 *     bk_file_update *update;
 *     bk_filter *filter;
 *     if (bk_file_update_begin(path, NULL, true, &update, &filter) == BK_OK) {
 *         status = bk_filter_add(filter, key, len, NULL);  -- any changes
 *         if (status == BK_OK)
 *             status = bk_file_update_commit(update, filter);
 *         bk_filter_free(filter);
 *         bk_file_update_end(update);
 *     }
 */
typedef struct bk_file_update bk_file_update;

/* Locks the filter file at `path` (symbolic links followed), rolls back an
 * interrupted update if a dead writer left one, and loads the filter: the
 * checks of bk_filter_load but the checksum, which the commit's single
 * pass over the file verifies (BK_ECHECKSUM there, nothing written); the
 * file stays mapped as the base the commit compares with.  With `wait`
 * false and another writer holding the lock: BK_EIO with errno
 * EWOULDBLOCK at once; with `wait` true this waits for it.
 * BK_EUNSUPPORTED if `path` is not a regular file; BK_EIO (errno) if it
 * cannot be opened for writing.  On success *filter is a new, writable
 * filter the caller frees with bk_filter_free, and *update must be
 * released with bk_file_update_end. */
bk_status bk_file_update_begin(const char *path, const bk_load_options *options, bool wait,
                               bk_file_update **update, bk_filter **filter);

/* Writes `filter` (normally the one begin gave, changed) over the file:
 * the pages that differ, through the undo journal, then fsync (nothing at
 * all when no byte differs).  Call it at
 * most once per update (BK_EINVAL after).  On BK_EIO the old pages are put
 * back (or, if that fails too, the journal stays for the next reader or
 * writer to roll back): the file keeps its old contents.  Memory: one
 * buffer of the serialised size plus the changed pages. */
bk_status bk_file_update_commit(bk_file_update *update, const bk_filter *filter);

/* Releases the lock, the mapping and `update` (NULL is a no-op). */
void bk_file_update_end(bk_file_update *update);

/* What a file's header says, read without loading the filter or knowing
 * its secret key: for `bloomkit info` and for tools that sort files. */
typedef struct bk_file_info {
    unsigned version;
    bk_kind kind; /* possibly one this build lacks */
    bk_hash_algorithm hash_algorithm;
    uint64_t seed; /* the seed, or SipHash's key identifier */
    uint64_t keys_added;
    uint64_t params_size;    /* bytes of the kind's parameter block */
    uint64_t payload_offset; /* = header size, a multiple of 64 */
    uint64_t payload_size;
    uint64_t total_size; /* bytes of the whole file */
} bk_file_info;

/* Checks the header of buffer[0..size) and the size it declares (steps 1-11
 * of docs/FORMAT.md: not the checksum, kind, key or kind parameters) and
 * describes it.  Errors as bk_filter_deserialize. */
bk_status bk_buffer_inspect(const void *buffer, size_t size, bk_file_info *out);

/* The same for a file, reading only its header (and the parameter block's
 * padding): constant time whatever the file's size. */
bk_status bk_file_inspect(const char *path, bk_file_info *out);

/*
 * Errors common to the loaders (bk_filter_deserialize, _load, _map), in the
 * order they are checked (docs/FORMAT.md, "What a reader checks"):
 *   BK_EMAGIC      not a bloomkit filter
 *   BK_ETRUNCATED  the input ends before the data its header declares
 *   BK_EVERSION    a format version this build does not read
 *   BK_ECORRUPT    reserved bytes set, unknown hash algorithm, inconsistent
 *                  sizes, or parameters that contradict the payload
 *   BK_ERANGE      a size beyond the format's or the host's limits
 *   BK_EOVERSIZE   bytes after the declared end
 *   BK_ECHECKSUM   damaged data (not checked by bk_filter_map)
 *   BK_EKIND       a kind this build lacks, or not options->expected_kind
 *   BK_EKEY        SipHash filter without its key, or with another key
 *   BK_EIO         (files) a system call failed; errno says why
 *   BK_EUNSUPPORTED (bk_filter_map) not a regular file, nothing read
 *   BK_EINVAL      NULL path, buffer or out
 */

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_FORMAT_H */
