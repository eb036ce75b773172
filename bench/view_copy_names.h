/*
 * bench/view_copy_names.h -- renames the external functions of
 * bench/views.c for a second and third compiled copy of it, forced into
 * that file with -include by bench/CMakeLists.txt:
 *
 *   copy     flags                       names
 *   o2       -O2, no -m flag             bench_o2_view_init, bench_o2_view_hits, ...
 *   native   -O3 -march=native           bench_native_view_init, ...
 *
 * so that one run times the inline views as a distribution's package
 * (plain -O2) and as a program built for its own machine compile them
 * (bench/one_key.c).  Each copy's bench_view_init chooses among its own
 * loops only (the copies are built without BENCH_HAVE_AVX2_VIEWS and
 * BENCH_HAVE_AVX512_VIEWS).  BENCH_VIEW_COPY is the prefix (bench_o2,
 * bench_native).  A new external function in bench/views.c needs a line
 * here, or the link fails with a duplicate symbol.
 */
#ifndef BENCH_VIEW_COPY_NAMES_H
#define BENCH_VIEW_COPY_NAMES_H

#define BENCH_COPY_JOIN2(prefix, name) prefix##name
#define BENCH_COPY_JOIN(prefix, name) BENCH_COPY_JOIN2(prefix, name)
#define BENCH_COPY(name) BENCH_COPY_JOIN(BENCH_VIEW_COPY, name)

#define bench_view_init BENCH_COPY(_view_init)
#define bench_view_bit_array BENCH_COPY(_view_bit_array)
#define bench_view_hits BENCH_COPY(_view_hits)
#define bench_view_hash_hits BENCH_COPY(_view_hash_hits)
#define bench_sbbf_hits_portable BENCH_COPY(_sbbf_hits)
#define bench_sbbf_hash_hits_portable BENCH_COPY(_sbbf_hash_hits)
#define bench_bloom_hits_portable BENCH_COPY(_bloom_hits)
#define bench_bloom_hash_hits_portable BENCH_COPY(_bloom_hash_hits)
#define bench_blocked_hits_portable BENCH_COPY(_blocked_hits)
#define bench_blocked_hash_hits_portable BENCH_COPY(_blocked_hash_hits)
#define bench_fuse_hits BENCH_COPY(_fuse_hits)
#define bench_fuse_hash_hits BENCH_COPY(_fuse_hash_hits)

#endif
