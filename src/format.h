/*
 * src/format.h -- the container's internals: the codec (src/format.c), for
 * the file code (src/format_file.c, src/file_update.c), the tests and the
 * fuzz targets.  Byte layout: docs/FORMAT.md.
 */
#ifndef BK_SRC_FORMAT_H
#define BK_SRC_FORMAT_H

#include "bloomkit/format.h"
#include "filter.h"
#include "hash.h" /* XXH3_state_t */

/* Byte offsets of the common header's fields. */
enum {
    BK_FORMAT_OFFSET_MAGIC = 0,
    BK_FORMAT_OFFSET_VERSION = 8,
    BK_FORMAT_OFFSET_KIND = 10,
    BK_FORMAT_OFFSET_HEADER_SIZE = 12,
    BK_FORMAT_OFFSET_PAYLOAD_SIZE = 16,
    BK_FORMAT_OFFSET_HASH_ALGORITHM = 24,
    BK_FORMAT_OFFSET_RESERVED_A = 25, /* 3 bytes */
    BK_FORMAT_OFFSET_PARAMS_SIZE = 28,
    BK_FORMAT_OFFSET_SEED = 32,
    BK_FORMAT_OFFSET_KEYS_ADDED = 40,
    BK_FORMAT_OFFSET_RESERVED_B = 48, /* 8 bytes */
    BK_FORMAT_OFFSET_CHECKSUM = 56,
    BK_FORMAT_PARAMS_OFFSET = 64
};

/* The common header's fields, as decoded (not yet checked against a kind). */
typedef struct bk_format_header {
    uint16_t version;
    uint16_t kind;
    uint32_t header_size;
    uint64_t payload_size;
    uint8_t hash_algorithm;
    uint32_t params_size;
    uint64_t seed;
    uint64_t keys_added;
    uint64_t checksum;
    size_t total_size; /* header_size + payload_size, known to fit */
} bk_format_header;

/* Steps 1-8 of docs/FORMAT.md on the first `available` bytes of an input
 * (the whole of it or just its start): magic, length of the header, version,
 * reserved fields, hash algorithm, sizes and their overflow. */
bk_status bk_format_parse_header(const uint8_t *bytes, size_t available, bk_format_header *out);

/* XXH3-64 of bytes[0..size) with the checksum field (bytes 56..63) read as
 * zero.  size must be at least BK_FORMAT_HEADER_SIZE. */
uint64_t bk_format_checksum(const uint8_t *bytes, size_t size);

/* Starts that checksum from the 64-byte header alone, for a caller that
 * streams the rest (XXH3_64bits_update, then XXH3_64bits_digest). */
void bk_format_checksum_begin(XXH3_state_t *state, const uint8_t *header);

/* Every step of docs/FORMAT.md on a complete input: returns the kind's ops
 * and a new object of that kind.  `verify_checksum` false skips step 12
 * (mapped files).  `in_place` lets the kind keep pointers into `bytes`
 * (which must then outlive the object); it is honoured only on a
 * little-endian host with the payload 64-byte aligned. */
bk_status bk_format_decode(const uint8_t *bytes, size_t size, const bk_load_options *options,
                           bool verify_checksum, bool in_place, const bk_kind_ops **ops_out,
                           void **object_out);

/* Serialises any kind's object (the writer behind bk_filter_serialize and
 * bk_filter_save). */
bk_status bk_format_encoded_size(const bk_kind_ops *ops, const void *object, size_t *size);
bk_status bk_format_encode(const bk_kind_ops *ops, const void *object, uint8_t *buffer,
                           size_t size, size_t *written);
/* bk_format_encode without the checksum (its field left zero; *written is
 * required): for a caller that computes it in a pass of its own. */
bk_status bk_format_encode_unsummed(const bk_kind_ops *ops, const void *object, uint8_t *buffer,
                                    size_t size, size_t *written);

/* A handle owning `object`, decoded as `ops`'s kind; the object is
 * destroyed if the handle cannot be made. */
bk_status bk_format_wrap(const bk_kind_ops *ops, void *object, bk_filter **out);

/* The public description (bk_file_info) of a checked header. */
void bk_format_describe(const bk_format_header *h, bk_file_info *out);

/* True if bytes[0..count) are all zero (the header's padding). */
bool bk_format_all_zero(const uint8_t *bytes, size_t count);

/* ------------------------------------------------------------------------ */
/* Files (src/file_update.c)                                                */
/* ------------------------------------------------------------------------ */

/* Longest part of a target's name kept in its temporary files' names
 * ("NAME.<pid>.<n>.tmp"), so the suffix never pushes a name past NAME_MAX. */
#define BK_TEMP_NAME_KEEP 160

/* The file `path` names: symbolic links followed (realpath) when the last
 * component is one, else `path` itself (which need not exist).  *out is
 * malloc'd.  BK_EIO (errno ENOENT) for a link to nothing. */
bk_status bk_file_resolve(const char *path, char **out);

/* fsync of the directory holding `path`; false with errno on failure. */
bool bk_file_sync_directory(const char *path);

/* Removes the temporary files "PATH.<pid>.<n>.tmp" beside `path` whose
 * writing process no longer exists.  Best effort; errno is kept. */
void bk_file_remove_stale_temporaries(const char *path);

/* Before reading `path`: if an update journal lies beside the file it names
 * (symbolic links followed, as writers do) and no writer
 * holds the lock, rolls the interrupted update back.  *writer_active says a
 * writer is at work (or the reader may not write the file): the caller then
 * reads around the journal with bk_file_old_image when its input fails. */
bk_status bk_file_recover_for_reading(const char *path, bool *writer_active);

/* The file before the update the journal beside `path` describes, rebuilt
 * from `current` (what was read of the file) and the journal's old pages:
 * *out malloc'd.  BK_ENOTFOUND when there is no complete journal. */
bk_status bk_file_old_image(const char *path, const uint8_t *current, size_t current_size,
                            uint8_t **out, size_t *out_size);

#endif
