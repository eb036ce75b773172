/*
 * bloomkit/detail/view_simd.h -- the SIMD tests an inline view calls from
 * a file compiled without AVX2.
 *
 * A caller built with plain -O2 (what most projects and distributions
 * use) has no AVX2 code of its own, yet the CPU it runs on usually has
 * AVX2 or AVX-512, and the library already knows which (its run-time
 * detection, src/cpu.c).  The views of bloomkit/blocked_inline.h and
 * bloomkit/sbbf_inline.h therefore carry a copy of their SIMD block tests
 * compiled for those instruction sets inside the caller's own file, with
 * GCC's and clang's per-function target attribute, and choose among them
 * by a field the view getter fills from the library's detection:
 *
 *     caller's loop (-O2)                      the same file
 *       hash (inline, scalar)
 *       switch (view->simd_call):
 *         BK_VIEW_SIMD_AVX512 ---- direct call ---> block test, target("avx512f,avx512dq")
 *         BK_VIEW_SIMD_AVX2 ------ direct call ---> block test, target("avx2")
 *         BK_VIEW_SIMD_NONE: the portable test, inline
 *
 * A direct call to a function in the same file: no handle, no table, no
 * indirect jump, its branch predicted (the field is fixed per view).  The
 * compiler cannot inline code for AVX into a function without it, so the
 * call stays; it costs less than the scalar test it replaces.
 *
 * Where: GCC or clang on x86-64, in a file whose target lacks AVX2 (a file
 * built with -mavx2 or -march=native inlines its SIMD test as before).
 * Elsewhere -- other compilers, other CPUs -- the view keeps its portable
 * test alone.  A caller that must not contain code for AVX (a kernel, a
 * program audited for its instruction set) defines BK_VIEW_NO_SIMD_CALLS
 * before including any bloomkit header; the view then ignores the field.
 *
 * Included by the inline view headers; not an interface of the library:
 * names here may change between versions.
 */
#ifndef BLOOMKIT_DETAIL_VIEW_SIMD_H
#define BLOOMKIT_DETAIL_VIEW_SIMD_H

/* The values of a view's simd_call field: the widest SIMD test the library
 * itself runs on this CPU (none under BLOOMKIT_PORTABLE=1, AVX2 under
 * BLOOMKIT_NO_AVX512=1).  A program may lower the field (never raise it)
 * to force a narrower test: the answers are the same. */
enum bk_view_simd {
    BK_VIEW_SIMD_NONE = 0,
    BK_VIEW_SIMD_AVX2 = 1,
    BK_VIEW_SIMD_AVX512 = 2 /* AVX-512 F and DQ (the blocked view only) */
};

#if !defined(BK_VIEW_NO_SIMD_CALLS) && !defined(__AVX2__) && defined(__x86_64__) && \
    (defined(__GNUC__) || defined(__clang__))
#define BK_VIEW_SIMD_CALLS 1
#include <immintrin.h> /* every intrinsic, whatever the file's target */
/* Code of a function compiled for AVX2 (AVX-512 F and DQ). */
#define BK_VIEW_TARGET_AVX2 __attribute__((target("avx2")))
#define BK_VIEW_TARGET_AVX512 __attribute__((target("avx2,avx512f,avx512dq")))
/* The called test (static): kept out of line (it could not be inlined
 * anyway), and unused in a file that never calls it. */
#define BK_VIEW_SIMD_CALL __attribute__((noinline, unused))
#else
#define BK_VIEW_TARGET_AVX2
#define BK_VIEW_TARGET_AVX512
#endif

#endif /* BLOOMKIT_DETAIL_VIEW_SIMD_H */
