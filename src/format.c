/*
 * src/format.c -- the portable file format's codec: header, checksum,
 * serialise, deserialise, inspect.
 *
 * One container for every kind (specification: docs/FORMAT.md).  The
 * container owns everything generic -- the 64-byte header, sizes, padding,
 * the checksum -- and asks the kind, through the format hooks of its
 * bk_kind_ops (src/filter.h), for just two byte strings: its parameter
 * block and its payload.  It knows no kind by name.
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
 * Bytes meet the disk in src/format_file.c (save, load, map, verify) and
 * src/file_update.c (changes in place); both call the codec here.  The
 * buffer loader is fuzzed under ASan+UBSan in CI (tests/fuzz).
 */
#include "format.h"

#include <stdlib.h>
#include <string.h>

#include "endian.h"
#include "hash.h"
#include "memory.h"

static const uint8_t format_magic[8] = { 0x89, 'B', 'K', 'F', '\r', '\n', 0x1a, '\n' };

static uint64_t round_up_64(uint64_t bytes) { return (bytes + 63) & ~(uint64_t)63; }

bool bk_format_all_zero(const uint8_t *bytes, size_t count)
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
           algorithm == BK_HASH_XXH64 || algorithm == BK_HASH_MIX64;
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
    if (!bk_format_all_zero(bytes + BK_FORMAT_OFFSET_RESERVED_A, 3) ||
        !bk_format_all_zero(bytes + BK_FORMAT_OFFSET_RESERVED_B, 8) ||
        !hash_algorithm_known(h.hash_algorithm))
        return BK_ECORRUPT;
    bk_status status = check_sizes(&h);
    if (status != BK_OK)
        return status;
    *out = h;
    return BK_OK;
}

void bk_format_checksum_begin(XXH3_state_t *state, const uint8_t *header)
{
    static const uint8_t zero_checksum[8];
    XXH3_INITSTATE(state);
    XXH3_64bits_reset(state);
    XXH3_64bits_update(state, header, BK_FORMAT_OFFSET_CHECKSUM);
    XXH3_64bits_update(state, zero_checksum, sizeof zero_checksum);
}

uint64_t bk_format_checksum(const uint8_t *bytes, size_t size)
{
    XXH3_state_t state;
    bk_format_checksum_begin(&state, bytes);
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
    const bk_kind_ops *found = h->kind == BK_KIND_NONE ? NULL
                                                       : bk_kind_ops_for((bk_kind)h->kind);
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
    if (!bk_format_all_zero(params + h.params_size, padding))
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

bk_status bk_filter_serialize(const bk_filter *filter, void *buffer, size_t size,
                              size_t *written)
{
    if (filter == NULL || (buffer == NULL && size != 0))
        return BK_EINVAL;
    return bk_format_encode(bk_filter_ops(filter),
                            bk_filter_object_of(filter, bk_filter_kind(filter)), buffer, size,
                            written);
}

bk_status bk_format_wrap(const bk_kind_ops *ops, void *object, bk_filter **out)
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
    return bk_format_wrap(ops, object, out);
}

/* ------------------------------------------------------------------------ */
/* Inspection: the header alone                                             */
/* ------------------------------------------------------------------------ */

void bk_format_describe(const bk_format_header *h, bk_file_info *out)
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
    if (!bk_format_all_zero(bytes + padding_start, h.header_size - padding_start))
        return BK_ECORRUPT;
    bk_format_describe(&h, out);
    return BK_OK;
}
