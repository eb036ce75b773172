/* bench/views_avx512.c -- bench/views.c's classic bloom loops compiled
 * with -mavx512f -mavx512dq. */
#define BENCH_VIEWS_AVX512
#include "views.c"
