/*
 * src/quotient_bits.h -- rank and select on one 64-bit word (internal), the
 * two primitives the quotient filter's metadata walks are made of.
 *
 *   rank(w)       number of one bits of w                   (popcount)
 *   select(w, k)  position of the one bit of rank k in w, counting from 0
 *                 at the least significant end; 64 when w has k or fewer
 *                 one bits.
 *
 * Hardware paths (x86-64): POPCNT for rank; for select, PDEP deposits the
 * single bit 1 << k onto the k-th one bit of w, and TZCNT reads its
 * position (Pandey, Bender & Johnson, "A Fast x86 Implementation of Select",
 * 2017).  Portable paths: the SWAR popcount (Knuth, TAOCP 7.1.3) and, for
 * select, a byte-wise walk over per-byte popcounts then a bit loop in the
 * chosen byte.  Both give identical answers on every word (tested in
 * tests/test_quotient.c on random words); src/quotient.c chooses at run
 * time from src/cpu.h (BLOOMKIT_PORTABLE=1 forces the portable path).
 */
#ifndef BK_SRC_QUOTIENT_BITS_H
#define BK_SRC_QUOTIENT_BITS_H

#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BK_QUOTIENT_HAVE_BMI2 1
#include <immintrin.h>
#endif

static inline unsigned bk_rank64_portable(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

static inline unsigned bk_select64_portable(uint64_t w, unsigned k)
{
    if (k >= 64)
        return 64;
    for (unsigned byte = 0; byte < 8; byte++) {
        unsigned ones = bk_rank64_portable((w >> (8 * byte)) & 0xff);
        if (k < ones) {
            uint64_t bits = (w >> (8 * byte)) & 0xff;
            for (unsigned bit = 0;; bit++, bits >>= 1)
                if ((bits & 1) && k-- == 0)
                    return 8 * byte + bit;
        }
        k -= ones;
    }
    return 64;
}

#ifdef BK_QUOTIENT_HAVE_BMI2
__attribute__((target("popcnt"))) static inline unsigned bk_rank64_hardware(uint64_t w)
{
    return (unsigned)__builtin_popcountll(w);
}

__attribute__((target("bmi,bmi2"))) static inline unsigned bk_select64_hardware(uint64_t w,
                                                                                unsigned k)
{
    if (k >= 64)
        return 64;
    uint64_t deposited = _pdep_u64((uint64_t)1 << k, w);
    return (unsigned)_tzcnt_u64(deposited); /* 64 when w has k or fewer one bits */
}
#endif

#endif
