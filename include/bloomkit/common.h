/*
 * bloomkit/common.h -- the vocabulary shared by every filter kind.
 *
 * Status codes, the 128-bit key hash, the parameter struct, the statistics
 * struct that `info` prints, and the names of the filter kinds.  Every other
 * public header includes this one.
 *
 * Conventions (docs/API.md has the whole list):
 *   - Functions that can fail return bk_status: BK_OK (0) or a negative code.
 *     Results come back through out-parameters.  bk_strerror() names each code.
 *   - No function prints, exits or aborts on bad input; on error nothing the
 *     caller owns has been changed.
 *   - Parameters are given in a bk_params struct with designated initialisers,
 *     so new options never break existing callers:
 *         bk_params p = { .capacity = 1000000, .fpr = 0.01 };
 */
#ifndef BLOOMKIT_COMMON_H
#define BLOOMKIT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The shared library exports what the public headers declare between
 * BK_API_BEGIN and BK_API_END, and nothing else: the library is built with
 * hidden visibility (CMakeLists.txt), so its internal functions stay
 * private and its calls between them bind directly, without the PLT. */
#if defined(__GNUC__) || defined(__clang__)
#define BK_API_BEGIN _Pragma("GCC visibility push(default)")
#define BK_API_END _Pragma("GCC visibility pop")
#else
#define BK_API_BEGIN
#define BK_API_END
#endif

#ifdef __cplusplus
extern "C" {
#endif

BK_API_BEGIN

#define BLOOMKIT_VERSION_MAJOR 0
#define BLOOMKIT_VERSION_MINOR 1
#define BLOOMKIT_VERSION_PATCH 0
#define BLOOMKIT_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */
/* ------------------------------------------------------------------------ */

typedef enum bk_status {
    BK_OK = 0,
    BK_EINVAL = -1,        /* an argument is invalid (NULL, NaN, p not in (0,1), n = 0 ...) */
    BK_ERANGE = -2,        /* a size is out of the representable or supported range */
    BK_ENOMEM = -3,        /* memory allocation failed */
    BK_EINCOMPATIBLE = -4, /* filters differ in kind, size, k, hash algorithm or seed */
    BK_EFULL = -5,         /* the filter cannot take another key */
    BK_ENOTFOUND = -6,     /* the key is definitely not in the filter */
    BK_EIMMUTABLE = -7,    /* the filter is read-only (static kind or mapped file) */
    BK_EUNSUPPORTED = -8,  /* this kind does not offer the operation */
    BK_EIO = -9,           /* a system call failed; errno tells why */
    BK_ETRUNCATED = -10,   /* file or buffer ends before the data it declares */
    BK_EMAGIC = -11,       /* not a bloomkit file (wrong magic number) */
    BK_EVERSION = -12,     /* a format version this build does not read */
    BK_EKIND = -13,        /* unknown filter kind, or not the kind asked for */
    BK_ECORRUPT = -14,     /* parameters contradict each other or the payload size */
    BK_ECHECKSUM = -15,    /* checksum mismatch: the data was damaged */
    BK_EKEY = -16,         /* the secret key is missing, or not the filter's own */
    BK_EOVERSIZE = -17     /* trailing bytes after the declared end of the data */
} bk_status;

/* A static, human-readable description of a status code; never NULL. */
const char *bk_strerror(bk_status status);

/* ------------------------------------------------------------------------ */
/* Keys and hashes                                                          */
/* ------------------------------------------------------------------------ */

/* The 128-bit hash of a key, as two 64-bit halves.  Every kind derives its
 * probe positions from these two words (see src/hash.h), so a caller that
 * already has a good 128-bit hash can pass it to the *_hash functions. */
typedef struct bk_hash {
    uint64_t h1;
    uint64_t h2;
} bk_hash;

/* A key for the batch functions: `len` bytes at `data`. */
typedef struct bk_key {
    const void *data;
    size_t len;
} bk_key;

/* ------------------------------------------------------------------------ */
/* Kinds of filter                                                          */
/* ------------------------------------------------------------------------ */

/* The numeric values are written into files: never renumber. */
typedef enum bk_kind {
    BK_KIND_NONE = 0,
    BK_KIND_BLOOM = 1,     /* classic Bloom filter */
    BK_KIND_BLOCKED = 2,   /* cache-line (512-bit) blocked Bloom filter */
    BK_KIND_SBBF = 3,      /* Parquet split-block Bloom filter */
    BK_KIND_COUNTING = 4,  /* counting Bloom filter, 4-bit counters */
    BK_KIND_CUCKOO = 5,    /* cuckoo filter */
    BK_KIND_XOR8 = 6,      /* xor filter, 8-bit fingerprints (static) */
    BK_KIND_FUSE8 = 7,     /* binary fuse filter, 8-bit (static) */
    BK_KIND_FUSE16 = 8,    /* binary fuse filter, 16-bit (static) */
    BK_KIND_FUSE8_4 = 9,   /* 4-wise binary fuse filter, 8-bit (static) */
    BK_KIND_SCALABLE = 10, /* growable chain of Bloom filters */
    BK_KIND_WINDOW = 11,   /* sliding-window filter */
    BK_KIND_QUOTIENT = 12  /* counting quotient filter (rank and select) */
} bk_kind;

/* ------------------------------------------------------------------------ */
/* Parameters                                                               */
/* ------------------------------------------------------------------------ */

/* How keys are hashed.  The numeric values are written into files. */
typedef enum bk_hash_algorithm {
    BK_HASH_XXH3 = 0,    /* XXH3-128 with a 64-bit seed (default; seed 0 is reproducible) */
    BK_HASH_SIPHASH = 1, /* SipHash-2-4-128 with a 128-bit secret key: for adversarial keys */
    BK_HASH_XXH64 = 2,   /* XXH64 of the key (the Parquet split-block filter's hash) */
    BK_HASH_MIX64 = 3    /* 8-byte keys: a seeded integer mixer (fastest); others: as XXH3.
                            Not for adversarial keys */
} bk_hash_algorithm;

/* Creation flags. */
#define BK_FLAG_CONCURRENT 0x1u /* add() may be called from several threads at once */
/* quotient only: double the slots at the design load instead of refusing keys */
#define BK_FLAG_AUTO_GROW 0x2u
/* sbbf only: a size every Parquet reader accepts (bloomkit/sbbf.h) */
#define BK_FLAG_PARQUET_SIZE 0x4u
/* counting only: the classic layout (counters anywhere) instead of one line per key */
#define BK_FLAG_COUNTING_CLASSIC 0x8u
/* scalable only: cache-line blocked sub-filters (one line per key) instead of classic ones */
#define BK_FLAG_BLOCKED_STAGES 0x10u

/*
 * What a filter should be.  Zero means "default" for every field, so a
 * caller names only what matters:
 *
 *     bk_params p = { .capacity = 1000000, .fpr = 0.01 };
 *
 * Sizing, in order of precedence (see bloomkit/sizing.h):
 *   - .bits and .hashes both set: exactly m bits and k probes;
 *   - .bits_per_key set: m = ceil(n * bits_per_key), k at its optimum;
 *   - otherwise .fpr (default 0.01): m and k from the classic formulas.
 */
typedef struct bk_params {
    uint64_t capacity;   /* n: the number of keys the filter is designed for (required) */
    double fpr;          /* p: target false-positive rate, 0 < p < 1 (default 0.01) */
    double bits_per_key; /* alternative to fpr: memory budget per key */
    uint64_t bits;       /* explicit m (with .hashes) */
    unsigned hashes;     /* explicit k (with .bits) */
    bk_hash_algorithm hash_algorithm; /* default BK_HASH_XXH3 */
    uint64_t seed;                    /* XXH3 / XXH64 seed (default 0) */
    const uint8_t *secret_key;        /* 16 bytes, required with BK_HASH_SIPHASH, never stored */
    unsigned flags;                   /* BK_FLAG_* */

    /* Kind-specific options; each kind ignores the ones that are not its own. */
    unsigned fingerprint_bits; /* cuckoo: 8, 12 or 16 (default: from fpr) */
    double expansion;          /* scalable: capacity growth per sub-filter (default 2) */
    double tightening;         /* scalable: fpr ratio per sub-filter (default 0.5) */
    unsigned max_filters;    /* scalable: limit on sub-filters (0 = no limit; 1 = non-scaling) */
    uint64_t window_keys;    /* window: keys age out after this many insertions */
    uint64_t window_seconds; /* window: keys age out after this many seconds */
    unsigned generations;    /* window: number of rotating generations */
    unsigned remainder_bits; /* quotient: 4 to 32 bits stored per slot (default: from fpr) */
} bk_params;

/* ------------------------------------------------------------------------ */
/* Statistics: what `bloomkit info` shows                                   */
/* ------------------------------------------------------------------------ */

typedef struct bk_stats {
    bk_kind kind;
    uint64_t bits;         /* m: bits of filter memory (slots * width for fingerprint kinds) */
    unsigned hashes;       /* k (0 where it does not apply) */
    uint64_t bytes;        /* bytes of filter memory */
    uint64_t capacity;     /* design number of keys */
    double target_fpr;     /* design false-positive rate */
    uint64_t keys_added;   /* add() calls that reported a new key */
    double keys_estimated; /* number of keys estimated from the fill */
    double fill_ratio;     /* fraction of bits (or slots) set */
    double design_fill_ratio; /* fill expected at capacity */
    double current_fpr;       /* false-positive rate estimated from the fill */
    double bits_per_key;      /* bits / capacity */
    bool past_design_point;   /* fill beyond its design point: FPR is degrading */

    /* Kind-specific; zero where they do not apply. */
    double load_factor;          /* cuckoo: occupied slots / slots */
    uint64_t saturated_counters; /* counting: counters stuck at their maximum */
    unsigned filters;            /* scalable: sub-filters; window: generations */
    unsigned fingerprint_bits;   /* cuckoo, xor, fuse */
    bk_hash_algorithm hash_algorithm;
    uint64_t seed; /* seed, or secret-key identifier for SipHash */
    /* Keys (as keys_estimated counts them) beyond which the filter is past
     * its design point (bk_design_point_keys); 0 where the kind's test is
     * not a key estimate. */
    double design_point_keys;
    bool stash_occupied; /* cuckoo: the victim stash holds a fingerprint (full) */
} bk_stats;

BK_API_END

#ifdef __cplusplus
}
#endif
#endif /* BLOOMKIT_COMMON_H */
