/*
 * src/bloom.h -- the classic filter's structure and the functions its
 * siblings call (scalable.c and window.c chain filters, counting.c exports
 * one, bloom_avx512.c is its AVX-512 build).  Callers outside the library
 * use a bk_filter handle of kind BK_KIND_BLOOM.
 */
#ifndef BK_SRC_BLOOM_H
#define BK_SRC_BLOOM_H

#include "bloomkit/bloom.h"
#include "bloomkit/bloom_inline.h" /* bk_bloom_test_probes, BK_BLOOM_EXIT_EARLY_BYTES */

typedef struct bk_bloom bk_bloom;

struct bk_bloom {
    uint64_t *words; /* ceil(m/64) words, 64-byte aligned; bits >= m stay 0 */
    size_t word_count;
    uint64_t bits;     /* m */
    unsigned hashes;   /* k */
    uint64_t capacity; /* design n */
    double target_fpr; /* predicted FPR at capacity */
    uint64_t keys_added;
    bk_hasher hasher;
    unsigned flags;  /* BK_FLAG_* */
    bool borrowed;   /* words belong to someone else (a mapped file): read-only */
    bool use_bmi2;   /* one-key queries take the BMI2 build (bloom.c) */
    bool use_avx512; /* one-key queries take the AVX-512 build, and batches past
                             the L2 with k <= 8 (bloom.c, gather_batches) */
    bool exit_early; /* one-key queries stop after two probes if one is 0
                             (bloom.c, test_bits: filters > 32 MiB) */
};

/* Creates an empty filter sized by `params` (bk_size_from_params) with
 * the hash it names: ops.create.  Errors as bk_filter_create. */
bk_status bk_bloom_create(const bk_params *params, bk_bloom **out);

/* Releases the filter; NULL is accepted. */
void bk_bloom_free(bk_bloom *filter);

/* A new, independent filter with the same parameters and contents. */
bk_status bk_bloom_copy(const bk_bloom *filter, bk_bloom **out);

/* Empties the filter (all bits zero, keys_added 0).  BK_EIMMUTABLE if
 * read-only. */
bk_status bk_bloom_clear(bk_bloom *filter);

/* Adds a key (from its bytes, or its hash): *was_new (if not NULL) is
 * whether any bit flipped.  BK_EIMMUTABLE if read-only. */
bk_status bk_bloom_add(bk_bloom *filter, const void *key, size_t len, bool *was_new);
bk_status bk_bloom_add_hash(bk_bloom *filter, bk_hash hash, bool *was_new);

/* True if the key may be present. */
bool bk_bloom_contains(const bk_bloom *filter, const void *key, size_t len);
bool bk_bloom_contains_hash(const bk_bloom *filter, bk_hash hash);

/* For a chain of filters (src/scalable.c): asks the CPU to fetch the
 * cache lines the key's probes touch (a hint; nothing is read), for a
 * later add (for_write) or query -- when the filter is bigger than the L2,
 * else it does nothing; and the batch query, results[i] (may be NULL) for
 * hashes[i], returning how many were present, answered as one
 * bk_bloom_contains_hash per hash but with the lines of later hashes
 * fetched while earlier ones are probed. */
void bk_bloom_prefetch_hash(const bk_bloom *filter, bk_hash hash, bool for_write);
size_t bk_bloom_contains_hash_batch(const bk_bloom *filter, const bk_hash *hashes, size_t count,
                                    bool *results);

/* m, k, adds that reported a new key, set bits, the raw words (ceil(m/64)
 * of them), the key count estimated from the fill, and everything `bloomkit
 * info` shows.  bk_bloom_create, _add, _contains and these getters but
 * _words, _word_count and _stats serve only tests of other kinds (counting's
 * export, the typed save and load of format.c) and go with those. */
uint64_t bk_bloom_bits(const bk_bloom *filter);
unsigned bk_bloom_hashes(const bk_bloom *filter);
uint64_t bk_bloom_keys_added(const bk_bloom *filter);
uint64_t bk_bloom_bits_set(const bk_bloom *filter);
const uint64_t *bk_bloom_words(const bk_bloom *filter);
size_t bk_bloom_word_count(const bk_bloom *filter);
double bk_bloom_estimate_keys(const bk_bloom *filter);
void bk_bloom_stats(const bk_bloom *filter, bk_stats *out);

/* A filter of the given design.  With `borrowed_words` NULL the bit array
 * is allocated and zeroed; otherwise the filter reads those words in place
 * (they must hold ceil(m/64) words, stay valid until bk_bloom_free, and the
 * filter is read-only). */
bk_status bk_bloom_create_from_sizing(const bk_sizing *sizing, const bk_hasher *hasher,
                                      unsigned flags, uint64_t *borrowed_words, bk_bloom **out);

/* Whether one-key queries use the BMI2 build of the probe loop (on by
 * default where the CPU has BMI2 and BLOOMKIT_PORTABLE is unset); for tests
 * and benchmarks.  BK_EUNSUPPORTED to turn it on without BMI2. */
bk_status bk_bloom_set_bmi2(bk_bloom *filter, bool use_bmi2);

/* Whether one-key queries, and past one core's L2 the batch queries and
 * adds with k <= 8, use the AVX-512 build (bloom_avx512.c: eight probe
 * positions at a time, the probe words read by one gather per eight
 * probes).  On by default, where the CPU has AVX-512 F, DQ and BW and
 * neither BLOOMKIT_PORTABLE nor BLOOMKIT_NO_AVX512 is set, for filters with
 * k <= 8 and for bigger ones past the L2; it comes before the BMI2 build.
 * For tests and benchmarks.  BK_EUNSUPPORTED to turn it on without those
 * features. */
bk_status bk_bloom_set_avx512(bk_bloom *filter, bool use_avx512);

#ifdef BK_HAVE_AVX512_SOURCES
bool bk_bloom_avx512_contains_hash(const bk_bloom *filter, bk_hash hash);
bool bk_bloom_avx512_contains(const bk_bloom *filter, const void *key, size_t len);
/* The batch query and (not for BK_FLAG_CONCURRENT) the batch add of the
 * same build for k <= 8 (bloom_avx512.c); the add returns how many keys
 * were new and leaves keys_added to its caller. */
size_t bk_bloom_avx512_test_batch(const bk_bloom *filter, const bk_hash *hashes, size_t count,
                                  bool *results);
size_t bk_bloom_avx512_add_batch(bk_bloom *filter, const bk_hash *hashes, size_t count);
#endif

/* Chains and rings of filters (scalable.c, window.c): frees filters[0..count);
 * copies filters[0..count) into copies[0..count), and on failure frees the
 * copies it made and returns the error. */
void bk_bloom_array_free(bk_bloom *const *filters, unsigned count);
bk_status bk_bloom_array_copy(bk_bloom *const *filters, unsigned count, bk_bloom **copies);

/* Words needed for m bits. */
static inline size_t bk_bloom_words_for_bits(uint64_t bits)
{
    return (size_t)((bits + 63) / 64);
}

#endif
