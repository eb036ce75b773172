/*
 * src/cpu.c -- feature detection and popcount (see cpu.h).
 *
 * Popcount: the POPCNT instruction counts a word per cycle or better; the
 * portable path is the classic SWAR reduction (Knuth, TAOCP 7.1.3), about
 * 3x slower.  Both give the same count; tests/test_bloom.c checks it.
 */
#include "cpu.h"

#include <stdlib.h>
#include <unistd.h>

static bk_cpu_features detected;
static int detection_done;

static bool env_flag_set(const char *name)
{
    const char *value = getenv(name);
    return value != NULL && value[0] != '\0' && value[0] != '0';
}

#define L2_DEFAULT_BYTES ((uint64_t)1 << 20)

/* glibc reads it from CPUID (x86) or sysfs; 0 or -1 where it cannot. */
static uint64_t l2_cache_bytes(void)
{
#ifdef _SC_LEVEL2_CACHE_SIZE
    long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (bytes >= (64L << 10) && bytes <= (64L << 20))
        return (uint64_t)bytes;
#endif
    return L2_DEFAULT_BYTES;
}

static void detect(void)
{
    bk_cpu_features f = { false, false, false, false, l2_cache_bytes() };
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f.popcnt = __builtin_cpu_supports("popcnt");
    f.avx2 = __builtin_cpu_supports("avx2");
    f.avx512dqbw = f.avx2 && __builtin_cpu_supports("avx512f") &&
                   __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
    f.bmi2 = __builtin_cpu_supports("bmi2");
#endif
    if (env_flag_set("BLOOMKIT_PORTABLE")) {
        f.popcnt = false;
        f.bmi2 = false;
        f.avx2 = false;
        f.avx512dqbw = false;
    }
    if (env_flag_set("BLOOMKIT_NO_AVX512"))
        f.avx512dqbw = false;
    detected = f;
}

const bk_cpu_features *bk_cpu(void)
{
    /* Racing first calls compute the same value; the store is idempotent. */
    if (!__atomic_load_n(&detection_done, __ATOMIC_ACQUIRE)) {
        detect();
        __atomic_store_n(&detection_done, 1, __ATOMIC_RELEASE);
    }
    return &detected;
}

static inline uint64_t popcount64_portable(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (x * 0x0101010101010101ULL) >> 56;
}

uint64_t bk_popcount_words_portable(const uint64_t *words, size_t count)
{
    uint64_t total = 0;
    for (size_t i = 0; i < count; i++)
        total += popcount64_portable(words[i]);
    return total;
}

uint64_t bk_popcount_words_shared(const uint64_t *words, size_t count)
{
    uint64_t total = 0;
    for (size_t i = 0; i < count; i++)
        total += (uint64_t)__builtin_popcountll(__atomic_load_n(&words[i], __ATOMIC_RELAXED));
    return total;
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("popcnt"))) static uint64_t popcount_words_hardware(const uint64_t *words,
                                                                          size_t count)
{
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        a += (uint64_t)__builtin_popcountll(words[i]);
        b += (uint64_t)__builtin_popcountll(words[i + 1]);
        c += (uint64_t)__builtin_popcountll(words[i + 2]);
        d += (uint64_t)__builtin_popcountll(words[i + 3]);
    }
    for (; i < count; i++)
        a += (uint64_t)__builtin_popcountll(words[i]);
    return a + b + c + d;
}
#endif

uint64_t bk_popcount_words(const uint64_t *words, size_t count)
{
#if defined(__x86_64__) || defined(__i386__)
    if (bk_cpu()->popcnt)
        return popcount_words_hardware(words, count);
#endif
    return bk_popcount_words_portable(words, count);
}
