/*
 * src/memory.h -- zeroed, 64-byte aligned memory for filter payloads.
 *
 * Small payloads come from aligned_alloc and are cleared.  Payloads of
 * BK_HUGE_THRESHOLD bytes or more come straight from mmap (already zero,
 * page aligned) with a transparent huge page hint, madvise(MADV_HUGEPAGE):
 * a 2 MiB page covers 512 times the memory of a 4 KiB one, so random
 * probes into a big filter miss the TLB far less often.  Setting the
 * environment variable BLOOMKIT_NO_HUGEPAGE replaces the hint by
 * MADV_NOHUGEPAGE (4 KiB pages even where the system default is "always"),
 * so bloomkit-bench can measure what the hint gives.
 *
 * Big payloads are then populated at once (MADV_POPULATE_WRITE, Linux 5.14
 * and later; older kernels fault the pages in on first touch), as the
 * memset populates small ones: inserts never wait for a page fault or for
 * the kernel to compact memory into a huge page, and a machine out of
 * memory fails the allocation (NULL, hence BK_ENOMEM) rather than killing
 * the process at some later insert.  Lazily faulted huge pages made a
 * fresh filter's first inserts the slowest of all (docs/PERFORMANCE.md).
 */
#ifndef BK_SRC_MEMORY_H
#define BK_SRC_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#define BK_HUGE_THRESHOLD ((size_t)2 << 20)

/* `bytes` zeroed bytes, 64-byte aligned, or NULL. bytes == 0 gives a valid
 * minimal block. */
void *bk_alloc_zeroed(size_t bytes);

/* Releases a block from bk_alloc_zeroed; `bytes` must be the size asked for. */
void bk_free_zeroed(void *block, size_t bytes);

/* `bytes` rounded up to whole 2 MiB pages when bk_alloc_zeroed would map it
 * (bytes >= BK_HUGE_THRESHOLD), else unchanged.  For short-lived scratch:
 * a mapping of whole huge pages is faulted in a few huge pages, where the
 * 4 KiB tail of an odd size costs one fault per page (microseconds each on
 * a virtual machine). */
static inline size_t bk_huge_round(size_t bytes)
{
    if (bytes < BK_HUGE_THRESHOLD || bytes > SIZE_MAX - BK_HUGE_THRESHOLD)
        return bytes;
    return (bytes + BK_HUGE_THRESHOLD - 1) & ~(BK_HUGE_THRESHOLD - 1);
}

#endif
