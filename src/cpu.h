/*
 * src/cpu.h -- CPU features, read once, and the word-array primitives that
 * have a hardware path beside a portable one.
 *
 * The only global state in bloomkit is the one-time feature detection here,
 * with the size of one core's L2 cache (which decides whether batches
 * prefetch: src/filter.c, src/bloom.c).  Setting the environment variable
 * BLOOMKIT_PORTABLE=1 before the first filter operation forces every
 * portable path (for testing and comparison); BLOOMKIT_NO_AVX512=1 keeps
 * AVX2 but not AVX-512.
 */
#ifndef BK_SRC_CPU_H
#define BK_SRC_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bk_cpu_features {
    bool popcnt;
    bool avx2;
    /* AVX-512 F, DQ and BW (64-bit multiplies, byte shuffles), with the OS
     * saving its registers: what every AVX-512 path of the library needs */
    bool avx512dqbw;
    bool bmi2;         /* SHRX and friends: shifts by a register count without the flags */
    uint64_t l2_bytes; /* one core's L2 cache as the system reports it (1 MiB if not) */
} bk_cpu_features;

/* For the one-key queries that choose a build at run time: each build's
 * query is a function of its own, kept out of line, so the function that
 * chooses saves no registers and reaches it by a tail jump (src/bloom.c;
 * the straight-line forms of the AVX-512 builds keep their general forms
 * out of line the same way). */
#if defined(__GNUC__) || defined(__clang__)
#define BK_NOINLINE __attribute__((noinline))
#else
#define BK_NOINLINE
#endif

/* Detected features, cleared where BLOOMKIT_PORTABLE is set;
 * BLOOMKIT_NO_AVX512=1 clears only avx512dqbw (to compare it with AVX2). */
const bk_cpu_features *bk_cpu(void);

/* Number of one bits in words[0..count). */
uint64_t bk_popcount_words(const uint64_t *words, size_t count);
uint64_t bk_popcount_words_portable(const uint64_t *words, size_t count);
/* The same with relaxed atomic loads, for words that BK_FLAG_CONCURRENT
 * adds may be setting meanwhile (a count of some moment's bits, race-free). */
uint64_t bk_popcount_words_shared(const uint64_t *words, size_t count);

#endif
