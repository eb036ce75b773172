/*
 * src/endian.h -- explicit little-endian loads and stores.
 *
 * Files and buffers are little-endian whatever the host.  The encoder and
 * decoder never copy a host struct or word to or from the wire: they go
 * through these helpers, byte by byte, which compilers turn into single
 * moves on little-endian hosts.
 */
#ifndef BK_SRC_ENDIAN_H
#define BK_SRC_ENDIAN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline bool bk_host_is_little_endian(void)
{
    const uint16_t probe = 1;
    uint8_t first;
    memcpy(&first, &probe, 1);
    return first == 1;
}

static inline void bk_store_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void bk_store_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* One 8-byte move each (memcpy, byte-swapped on a big-endian host): a
 * byte loop is not always merged into one load or store, and the kinds'
 * hot paths (counting's lines, cuckoo's buckets, the quotient filter's
 * words) read their tables through these. */
static inline void bk_store_le64(uint8_t *p, uint64_t v)
{
    if (!bk_host_is_little_endian())
        v = __builtin_bswap64(v);
    memcpy(p, &v, sizeof v);
}

static inline uint16_t bk_load_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static inline uint32_t bk_load_le32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static inline uint64_t bk_load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return bk_host_is_little_endian() ? v : __builtin_bswap64(v);
}

static inline void bk_store_le_double(uint8_t *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    bk_store_le64(p, bits);
}

static inline double bk_load_le_double(const uint8_t *p)
{
    uint64_t bits = bk_load_le64(p);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* Arrays of 64-bit words, little-endian on the wire. */
static inline void bk_store_le64_array(uint8_t *out, const uint64_t *words, size_t count)
{
    if (bk_host_is_little_endian()) {
        memcpy(out, words, count * 8);
        return;
    }
    for (size_t i = 0; i < count; i++)
        bk_store_le64(out + 8 * i, words[i]);
}

static inline void bk_load_le64_array(uint64_t *words, const uint8_t *in, size_t count)
{
    if (bk_host_is_little_endian()) {
        memcpy(words, in, count * 8);
        return;
    }
    for (size_t i = 0; i < count; i++)
        words[i] = bk_load_le64(in + 8 * i);
}

#endif
