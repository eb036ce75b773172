/*
 * redis/value.c -- the module's value: family, filters, and their byte
 * encoding (layout and checks in redis/value.h).  No Redis call is made
 * here, so the decoders run under a fuzzer without a server
 * (tests/fuzz/fuzz_redis_value.c).
 */
#include "value.h"

#include "bloomkit/hash_inline.h"

#include <stdlib.h>
#include <string.h>

static uint32_t load32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t load64(const uint8_t *p)
{
    return (uint64_t)load32(p) | (uint64_t)load32(p + 4) << 32;
}

static void store32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void store64(uint8_t *p, uint64_t v)
{
    store32(p, (uint32_t)v);
    store32(p + 4, (uint32_t)(v >> 32));
}

/* Room for `count` filter pointers (the array only grows). */
static bool reserve_filters(bkr_value *value, uint32_t count)
{
    bk_filter **grown = realloc(value->filters, count * sizeof *grown);
    if (grown == NULL)
        return false;
    value->filters = grown;
    return true;
}

bkr_value *bkr_value_wrap(bkr_family family, bk_filter *filter)
{
    bkr_value *value = calloc(1, sizeof *value);
    if (value == NULL || !reserve_filters(value, 1)) {
        free(value);
        bk_filter_free(filter);
        return NULL;
    }
    value->meta.family = family;
    value->meta.filter_count = 1;
    value->filters[0] = filter;
    return value;
}

void bkr_value_free(bkr_value *value)
{
    if (value == NULL)
        return;
    for (uint32_t i = 0; i < value->meta.filter_count; i++)
        bk_filter_free(value->filters[i]);
    free(value->filters);
    free(value->dump);
    free(value->loading);
    free(value);
}

bk_status bkr_value_copy(const bkr_value *value, bkr_value **out)
{
    bkr_value *copy = calloc(1, sizeof *copy);
    if (copy == NULL)
        return BK_ENOMEM;
    copy->meta = value->meta;
    copy->meta.filter_count = 0;
    if (value->meta.filter_count > 0 && !reserve_filters(copy, value->meta.filter_count)) {
        free(copy);
        return BK_ENOMEM;
    }
    if (value->loading != NULL) { /* a LOADCHUNK in progress: copy its bytes */
        copy->loading = malloc(value->loading_size ? value->loading_size : 1);
        if (copy->loading == NULL) {
            free(copy->filters);
            free(copy);
            return BK_ENOMEM;
        }
        memcpy(copy->loading, value->loading, value->loading_size);
        copy->loading_size = value->loading_size;
        copy->loading_expected = value->loading_expected;
    }
    for (uint32_t i = 0; i < value->meta.filter_count; i++) {
        bk_status status = bk_filter_copy(value->filters[i], &copy->filters[i]);
        if (status != BK_OK) {
            bkr_value_free(copy);
            return status;
        }
        copy->meta.filter_count = i + 1;
    }
    copy->past_design_point = value->past_design_point;
    *out = copy;
    return BK_OK;
}

bk_filter *bkr_value_newest(const bkr_value *value)
{
    return value->filters[value->meta.filter_count - 1];
}

size_t bkr_value_memory(const bkr_value *value)
{
    size_t bytes = sizeof *value + value->meta.filter_count * sizeof(bk_filter *) +
                   value->dump_size + value->loading_size;
    /* A filter's serialised size is its memory plus a header of a few
     * hundred bytes at most, and costs no pass over the memory (the stats'
     * fill ratio would). */
    for (uint32_t i = 0; i < value->meta.filter_count; i++) {
        size_t size = 0;
        if (bk_filter_serialized_size(value->filters[i], &size) == BK_OK)
            bytes += size;
    }
    return bytes;
}

/* ------------------------------------------------------------------------ */
/* Encoding                                                                 */
/* ------------------------------------------------------------------------ */

static size_t header_size_for(uint32_t filter_count)
{
    return BKR_HEADER_FIXED + 8u * (size_t)filter_count;
}

uint64_t bkr_header_total(const bkr_header *header)
{
    uint64_t total = header_size_for(header->meta.filter_count);
    for (uint32_t i = 0; i < header->meta.filter_count; i++)
        total += header->filter_bytes[i];
    return total;
}

static bk_status fill_sizes(const bkr_value *value, bkr_header *header)
{
    header->meta = value->meta;
    for (uint32_t i = 0; i < value->meta.filter_count; i++) {
        size_t size;
        bk_status status = bk_filter_serialized_size(value->filters[i], &size);
        if (status != BK_OK)
            return status;
        header->filter_bytes[i] = size;
    }
    return BK_OK;
}

static void write_header(const bkr_header *header, uint8_t *p)
{
    const bkr_meta *h = &header->meta;
    memcpy(p, "BKRV", 4);
    store32(p + 4, BKR_ENCODING_VERSION);
    store32(p + 8, (uint32_t)h->family);
    store32(p + 12, h->filter_count);
    store64(p + 16, h->expansion);
    store64(p + 24, h->bucket_size);
    store64(p + 32, h->max_iterations);
    store64(p + 40, h->items);
    store64(p + 48, h->deletes);
    for (uint32_t i = 0; i < h->filter_count; i++)
        store64(p + BKR_HEADER_FIXED + 8 * i, header->filter_bytes[i]);
}

bk_status bkr_header_encode(const bkr_value *value, uint8_t **out, size_t *size)
{
    bkr_header header;
    bk_status status = fill_sizes(value, &header);
    if (status != BK_OK)
        return status;
    size_t bytes = header_size_for(header.meta.filter_count);
    uint8_t *buffer = malloc(bytes);
    if (buffer == NULL)
        return BK_ENOMEM;
    write_header(&header, buffer);
    *out = buffer;
    *size = bytes;
    return BK_OK;
}

bk_status bkr_header_decode(const void *bytes, size_t size, bkr_header *out, size_t *header_size)
{
    const uint8_t *p = bytes;
    if (size < BKR_HEADER_FIXED)
        return size >= 4 && memcmp(p, "BKRV", 4) != 0 ? BK_EMAGIC : BK_ETRUNCATED;
    if (memcmp(p, "BKRV", 4) != 0)
        return BK_EMAGIC;
    if (load32(p + 4) != BKR_ENCODING_VERSION)
        return BK_EVERSION;
    bkr_header header;
    memset(&header, 0, sizeof header);
    bkr_meta h = { 0 };
    uint32_t family = load32(p + 8);
    h.filter_count = load32(p + 12);
    if (family < BKR_BF || family > BKR_BK || h.filter_count == 0 ||
        h.filter_count > BKR_MAX_FILTERS || (family != BKR_CF && h.filter_count != 1))
        return BK_ECORRUPT;
    h.family = (bkr_family)family;
    h.expansion = load64(p + 16);
    h.bucket_size = load64(p + 24);
    h.max_iterations = load64(p + 32);
    h.items = load64(p + 40);
    h.deletes = load64(p + 48);
    size_t needed = header_size_for(h.filter_count);
    if (size < needed)
        return BK_ETRUNCATED;
    for (uint32_t i = 0; i < h.filter_count; i++) {
        header.filter_bytes[i] = load64(p + BKR_HEADER_FIXED + 8 * i);
        if (header.filter_bytes[i] < BK_FORMAT_HEADER_SIZE)
            return BK_ECORRUPT;
        if (header.filter_bytes[i] > BKR_MAX_FILTER_BYTES)
            return BK_ERANGE;
    }
    header.meta = h;
    *out = header;
    *header_size = needed;
    return BK_OK;
}

static bk_kind family_kind(bkr_family family)
{
    switch (family) {
    case BKR_BF: return BK_KIND_SCALABLE;
    case BKR_CF: return BK_KIND_CUCKOO;
    default: return BK_KIND_NONE;
    }
}

bk_status bkr_image_decode(const bkr_header *header, unsigned index, const void *bytes,
                           size_t size, bk_filter **out)
{
    if (index >= header->meta.filter_count || size != header->filter_bytes[index])
        return BK_ECORRUPT;
    bk_load_options options = { NULL, family_kind(header->meta.family) };
    return bk_filter_deserialize(bytes, size, &options, out);
}

bk_status bkr_value_assemble(const bkr_header *header, bk_filter **filters, bkr_value **out)
{
    const bkr_meta *meta = &header->meta;
    bkr_value *value = calloc(1, sizeof *value);
    if (value == NULL || !reserve_filters(value, meta->filter_count)) {
        free(value);
        for (uint32_t i = 0; i < meta->filter_count; i++)
            bk_filter_free(filters[i]);
        return BK_ENOMEM;
    }
    value->meta = *meta;
    for (uint32_t i = 0; i < meta->filter_count; i++)
        value->filters[i] = filters[i];
    /* A CF's options must be ones CF.RESERVE accepts. */
    if (meta->family == BKR_CF &&
        (meta->expansion > 32768 || meta->bucket_size == 0 || meta->bucket_size > 255 ||
         meta->max_iterations == 0 || meta->max_iterations > 65535)) {
        bkr_value_free(value);
        return BK_ECORRUPT;
    }
    *out = value;
    return BK_OK;
}

bk_status bkr_value_encode(const bkr_value *value, uint8_t **out, size_t *size)
{
    bkr_header header;
    bk_status status = fill_sizes(value, &header);
    if (status != BK_OK)
        return status;
    uint64_t total = bkr_header_total(&header);
    if (total > SIZE_MAX)
        return BK_ERANGE;
    uint8_t *buffer = malloc((size_t)total);
    if (buffer == NULL)
        return BK_ENOMEM;
    write_header(&header, buffer);
    size_t offset = header_size_for(header.meta.filter_count);
    for (uint32_t i = 0; i < header.meta.filter_count && status == BK_OK; i++) {
        status = bk_filter_serialize(value->filters[i], buffer + offset,
                                     (size_t)header.filter_bytes[i], NULL);
        offset += (size_t)header.filter_bytes[i];
    }
    if (status != BK_OK) {
        free(buffer);
        return status;
    }
    *out = buffer;
    *size = (size_t)total;
    return BK_OK;
}

bk_status bkr_value_decode(const void *bytes, size_t size, bkr_value **out)
{
    bkr_header header;
    size_t offset;
    bk_status status = bkr_header_decode(bytes, size, &header, &offset);
    if (status != BK_OK)
        return status;
    uint64_t total = bkr_header_total(&header);
    if (total > size)
        return BK_ETRUNCATED;
    if (total < size)
        return BK_EOVERSIZE;
    bk_filter *filters[BKR_MAX_FILTERS];
    for (uint32_t i = 0; i < header.meta.filter_count; i++) {
        status = bkr_image_decode(&header, i, (const uint8_t *)bytes + offset,
                                  (size_t)header.filter_bytes[i], &filters[i]);
        if (status != BK_OK) {
            while (i-- > 0)
                bk_filter_free(filters[i]);
            return status;
        }
        offset += (size_t)header.filter_bytes[i];
    }
    return bkr_value_assemble(&header, filters, out);
}

/* ------------------------------------------------------------------------ */
/* Family operations                                                        */
/* ------------------------------------------------------------------------ */

/* Appends a cuckoo link `expansion` times the newest one's capacity. */
static bk_status cf_grow(bkr_value *value, unsigned max_links)
{
    if (value->meta.expansion == 0 || value->meta.filter_count >= max_links ||
        value->meta.filter_count >= BKR_MAX_FILTERS)
        return BK_EFULL;
    bk_stats newest;
    bk_filter_stats(bkr_value_newest(value), &newest);
    if (newest.capacity > UINT64_MAX / value->meta.expansion)
        return BK_EFULL;
    bk_params params;
    memset(&params, 0, sizeof params);
    params.capacity = newest.capacity * value->meta.expansion;
    params.fpr = newest.target_fpr;
    params.fingerprint_bits = newest.fingerprint_bits;
    params.hash_algorithm = newest.hash_algorithm;
    params.seed = newest.seed;
    bk_filter *link;
    bk_status status = bk_filter_create(BK_KIND_CUCKOO, &params, &link);
    if (status != BK_OK)
        return status == BK_ENOMEM ? BK_ENOMEM : BK_EFULL;
    if (!reserve_filters(value, value->meta.filter_count + 1)) {
        bk_filter_free(link);
        return BK_ENOMEM;
    }
    value->filters[value->meta.filter_count++] = link;
    value->cf_room = params.capacity;
    return BK_OK;
}

bk_status bkr_cf_add(bkr_value *value, const void *item, size_t len, unsigned max_links)
{
    bk_status status = bk_filter_add(bkr_value_newest(value), item, len, NULL);
    if (status == BK_EFULL) {
        value->cf_crossed = true; /* the newest link's stash is taken */
        status = cf_grow(value, max_links);
        if (status == BK_OK)
            status = bk_filter_add(bkr_value_newest(value), item, len, NULL);
    }
    if (status == BK_OK) {
        value->meta.items++;
        if (value->cf_room == 0)
            value->cf_crossed = true;
        else
            value->cf_room--;
    }
    return status;
}

/* Whether two hashers give every key the same hash. */
static bool same_hasher(const bk_hasher *a, const bk_hasher *b)
{
    return a->algorithm == b->algorithm && a->seed == b->seed && a->has_key == b->has_key &&
           (!a->has_key || memcmp(a->secret_key, b->secret_key, sizeof a->secret_key) == 0);
}

/* A chain's links share their hasher (cf_grow copies it), so the item is
 * hashed once, not once per link; a link loaded with another hasher gets
 * its own hash. */
bool bkr_value_contains(const bkr_value *value, const void *item, size_t len)
{
    uint32_t links = value->meta.filter_count;
    if (links == 1)
        return bk_filter_contains(value->filters[0], item, len);
    const bk_hasher *hashed_with = NULL;
    bk_hash hash = { 0, 0 };
    for (uint32_t i = links; i-- > 0;) {
        const bk_hasher *hasher = bk_filter_hasher(value->filters[i]);
        if (hashed_with == NULL || !same_hasher(hasher, hashed_with)) {
            hash = bk_hash_inline(hasher, item, len);
            hashed_with = hasher;
        }
        if (bk_filter_contains_hash(value->filters[i], hash))
            return true;
    }
    return false;
}

bk_status bkr_value_contains_batch(const bkr_value *value, const bk_key *keys, size_t count,
                                   bool *results)
{
    uint32_t links = value->meta.filter_count;
    bool *link_results = links > 1 ? malloc(count ? count : 1) : NULL;
    if (links > 1 && link_results == NULL)
        return BK_ENOMEM;
    memset(results, 0, count * sizeof *results);
    if (links > 0)
        bk_filter_contains_batch(value->filters[links - 1], keys, count, results);
    for (uint32_t i = links - 1; i-- > 0;) {
        bk_filter_contains_batch(value->filters[i], keys, count, link_results);
        for (size_t j = 0; j < count; j++)
            results[j] |= link_results[j];
    }
    free(link_results);
    return BK_OK;
}

uint64_t bkr_value_count(const bkr_value *value, const void *item, size_t len)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < value->meta.filter_count; i++) {
        uint64_t count = 0;
        if (bk_filter_count(value->filters[i], item, len, &count) == BK_OK)
            total += count;
    }
    return total;
}

bk_status bkr_cf_delete(bkr_value *value, const void *item, size_t len)
{
    for (uint32_t i = value->meta.filter_count; i-- > 0;) {
        if (bk_filter_remove(value->filters[i], item, len) == BK_OK) {
            if (i + 1 == value->meta.filter_count)
                value->cf_room++;
            if (value->meta.items > 0)
                value->meta.items--;
            value->meta.deletes++;
            return BK_OK;
        }
    }
    return BK_ENOTFOUND;
}
