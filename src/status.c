/*
 * src/status.c -- names for every bk_status code.
 */
#include "bloomkit/common.h"

const char *bk_strerror(bk_status status)
{
    switch (status) {
    case BK_OK: return "success";
    case BK_EINVAL: return "invalid argument";
    case BK_ERANGE: return "size out of range";
    case BK_ENOMEM: return "out of memory";
    case BK_EINCOMPATIBLE:
        return "filters are incompatible (kind, size, hashes, hash algorithm or seed differ)";
    case BK_EFULL: return "filter is full";
    case BK_ENOTFOUND: return "key not found";
    case BK_EIMMUTABLE: return "filter is read-only";
    case BK_EUNSUPPORTED: return "operation not supported by this kind of filter";
    case BK_EIO: return "input/output error";
    case BK_ETRUNCATED: return "data is truncated";
    case BK_EMAGIC: return "not a bloomkit filter (bad magic number)";
    case BK_EVERSION: return "unsupported format version";
    case BK_EKIND: return "unknown or unexpected filter kind";
    case BK_ECORRUPT: return "inconsistent parameters (corrupt data)";
    case BK_ECHECKSUM: return "checksum mismatch (corrupt data)";
    case BK_EKEY: return "secret key missing or wrong for this filter";
    case BK_EOVERSIZE: return "unexpected data after the end of the filter";
    }
    return "unknown status code";
}
