/* bench/views_avx2.c -- bench/views.c's loop compiled with -mavx2. */
#define BENCH_VIEWS_AVX2
#include "views.c"
