/*
 * bench/hash_cost.c -- `bloomkit-bench --hash-cost`: what hashing one
 * 8-byte integer key costs under each hash algorithm, side by side.
 *
 * For XXH3 (the default), MIX64 (the integer mixer) and XXH64 (Parquet's),
 * four forms over the same 4096 random keys (32 KiB: in the L1/L2 cache, so
 * the hash is all that is timed), 250 passes over them per round, and 21
 * short rounds in which the algorithms alternate (so that a busy machine
 * slows each alike); the median round is reported, in ns per key:
 *
 *   inline u64   bk_hash_u64(hasher, key) compiled into the loop: what the
 *                bk_filter_*_u64 calls and a caller's own loop pay
 *   call bytes   bk_hash_key(hasher, &key, 8): the library's out-of-line
 *                hash of key bytes (a call, the length dispatched at run
 *                time)
 *   packed       bk_hash_packed over the 4096 keys: the batch forms'
 *                hashing (eight keys per AVX-512 step where the CPU has it)
 *   latency      bk_hash_u64 where each key depends on the previous hash:
 *                the delay from key to hash that a one-key query waits for
 *   blocked u64  bk_filter_contains_u64 on a blocked filter of 10^6 keys at
 *                1% (1.2 MB; the keys queried are mostly absent): the hash
 *                inside a whole one-key library call
 *
 * and three batch forms of keys that are not 8 bytes long, as names and
 * prefixed ids are (16 random bytes a key, of which a form reads the first
 * len):
 *
 *   keys 14B     bk_hash_keys over 4096 descriptors of 14-byte keys
 *   keys 9-15B   the same, lengths 9 to 15 mixed (one XXH3 short-key
 *                branch, one XXH64 word count: both vector paths)
 *   packed 4B    bk_hash_packed over 4096 packed 4-byte keys (ids, IPv4
 *                addresses)
 *
 * Every result is folded into a checksum that is printed, so the compiler
 * cannot drop the work.
 */
#include <math.h>
#include <stdlib.h>

#include "bloomkit/hash_inline.h"
#include "run.h"

enum { HC_KEYS = 4096, HC_PASSES = 250, HC_ROUNDS = 21, HC_FORMS = 8, HC_FILTER_KEYS = 1000000 };

static const char *const form_names[HC_FORMS] = { "inline u64", "call bytes",  "packed",
                                                  "latency",    "blocked u64", "keys 14B",
                                                  "keys 9-15B", "packed 4B" };

/* The keys of the forms that are not 8 bytes long. */
typedef struct other_keys {
    const uint8_t *bytes; /* HC_KEYS * 16 random bytes */
    const bk_key *fixed;  /* 14 bytes each */
    const bk_key *mixed;  /* 9 to 15 bytes */
} other_keys;

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One round of one form: ns per key; *checksum absorbs the results. */
static double time_form(int form, const bk_hasher *hasher, const bk_filter *filter,
                        const uint64_t *keys, const other_keys *other, bk_hash *out,
                        uint64_t *checksum)
{
    uint64_t sum = 0;
    uint64_t begin = bench_now_ns();
    for (int pass = 0; pass < HC_PASSES; pass++) {
        if (form == 0) {
            for (size_t i = 0; i < HC_KEYS; i++) {
                bk_hash h = bk_hash_u64(hasher, keys[i]);
                sum += h.h1 ^ h.h2;
            }
        } else if (form == 1) {
            for (size_t i = 0; i < HC_KEYS; i++) {
                bk_hash h = bk_hash_key(hasher, &keys[i], 8);
                sum += h.h1 ^ h.h2;
            }
        } else if (form == 2) {
            bk_hash_packed(hasher, keys, 8, HC_KEYS, out);
            sum += out[pass % HC_KEYS].h1;
        } else if (form == 3) {
            for (size_t i = 0; i < HC_KEYS; i++) {
                bk_hash h = bk_hash_u64(hasher, keys[i] ^ sum);
                sum = h.h1 ^ h.h2;
            }
        } else if (form == 4) {
            for (size_t i = 0; i < HC_KEYS; i++)
                sum += bk_filter_contains_u64(filter, keys[i] + (uint64_t)pass);
        } else {
            if (form == 5)
                bk_hash_keys(hasher, other->fixed, HC_KEYS, out);
            else if (form == 6)
                bk_hash_keys(hasher, other->mixed, HC_KEYS, out);
            else
                bk_hash_packed(hasher, other->bytes, 4, HC_KEYS, out);
            sum += out[pass % HC_KEYS].h1;
        }
    }
    double ns = (double)(bench_now_ns() - begin) / ((double)HC_PASSES * HC_KEYS);
    *checksum += sum;
    return ns;
}

int run_hash_cost(void)
{
    const bk_hash_algorithm algorithms[] = { BK_HASH_XXH3, BK_HASH_MIX64, BK_HASH_XXH64 };
    enum { ALGORITHMS = sizeof algorithms / sizeof algorithms[0] };
    uint64_t *keys = malloc(HC_KEYS * sizeof *keys);
    bk_hash *out = malloc(HC_KEYS * sizeof *out);
    uint8_t *bytes = malloc(HC_KEYS * 16);
    bk_key *fixed = malloc(HC_KEYS * sizeof *fixed), *mixed = malloc(HC_KEYS * sizeof *mixed);
    if (keys == NULL || out == NULL || bytes == NULL || fixed == NULL || mixed == NULL) {
        free(keys);
        free(out);
        free(bytes);
        free(fixed);
        free(mixed);
        fprintf(stderr, "bloomkit-bench: out of memory\n");
        return 2;
    }
    uint64_t state = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < HC_KEYS; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        keys[i] = state ^ (state >> 31);
        for (size_t b = 0; b < 16; b++)
            bytes[i * 16 + b] = (uint8_t)(state >> (b * 4));
        fixed[i] = (bk_key){ bytes + i * 16, 14 };
        mixed[i] = (bk_key){ bytes + i * 16, 9 + (size_t)(state >> 61) % 7 };
    }
    const other_keys other = { bytes, fixed, mixed };
    bk_hasher hashers[ALGORITHMS];
    bk_filter *filters[ALGORITHMS] = { NULL };
    for (int a = 0; a < ALGORITHMS; a++) {
        bk_hasher_init(&hashers[a], algorithms[a], 0, NULL);
        bk_params params = { .capacity = HC_FILTER_KEYS,
                             .fpr = 0.01,
                             .hash_algorithm = algorithms[a] };
        if (bk_filter_create(BK_KIND_BLOCKED, &params, &filters[a]) != BK_OK)
            break;
        for (uint64_t i = 0; i < HC_FILTER_KEYS; i++)
            bk_filter_add_u64(filters[a], i * 0x9e3779b97f4a7c15ULL, NULL);
    }
    static double ns[HC_FORMS][ALGORITHMS][HC_ROUNDS];
    uint64_t checksum = 0;
    for (int round = 0; round < HC_ROUNDS; round++)
        for (int form = 0; form < HC_FORMS; form++)
            for (int a = 0; a < ALGORITHMS; a++)
                ns[form][a][round] = filters[a] == NULL && form == 4
                                         ? NAN
                                         : time_form(form, &hashers[a], filters[a], keys, &other,
                                                     out, &checksum);
    printf("hash cost per key (8-byte keys, then the batch forms of other lengths), ns "
           "per key (median of %d rounds, algorithms alternating)\n%-12s",
           HC_ROUNDS, "form");
    for (int a = 0; a < ALGORITHMS; a++)
        printf(" %8s", bk_hash_algorithm_name(algorithms[a]));
    printf("\n");
    for (int form = 0; form < HC_FORMS; form++) {
        printf("%-12s", form_names[form]);
        for (int a = 0; a < ALGORITHMS; a++) {
            qsort(ns[form][a], HC_ROUNDS, sizeof ns[form][a][0], compare_doubles);
            printf(" %8.2f", ns[form][a][HC_ROUNDS / 2]);
        }
        printf("\n");
    }
    printf("(checksum %016llx)\n", (unsigned long long)checksum);
    for (int a = 0; a < ALGORITHMS; a++)
        bk_filter_free(filters[a]);
    free(keys);
    free(out);
    free(bytes);
    free(fixed);
    free(mixed);
    return 0;
}
