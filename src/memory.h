/*
 * src/memory.h -- zeroed, 64-byte aligned memory for filter payloads.
 *
 * Small payloads come from aligned_alloc and are cleared.  Payloads of
 * BK_HUGE_THRESHOLD bytes or more come straight from mmap (already zero,
 * page aligned) with a transparent huge page hint, madvise(MADV_HUGEPAGE):
 * a 2 MiB page covers 512 times the memory of a 4 KiB one, so random
 * probes into a big filter miss the TLB far less often.  The hint is
 * given before the pages are populated only when the kernel has free
 * 2 MiB blocks to spare, else after (src/memory.c says why: the policy).
 * The environment variables BLOOMKIT_HUGEPAGE=always|never and
 * BLOOMKIT_NO_HUGEPAGE (= never: MADV_NOHUGEPAGE, 4 KiB pages even where
 * the system default is "always") force a choice, so bloomkit-bench can
 * measure what each gives.
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BK_HUGE_THRESHOLD ((size_t)2 << 20)

/* The huge-page policy of big blocks (src/memory.c). */
typedef enum bk_huge_policy {
    BK_HUGE_AUTO = 0, /* hint before populating when free 2 MiB blocks are at hand */
    BK_HUGE_ALWAYS,   /* hint before populating */
    BK_HUGE_NEVER     /* MADV_NOHUGEPAGE */
} bk_huge_policy;

/* The policy the environment asks for (BLOOMKIT_HUGEPAGE, BLOOMKIT_NO_HUGEPAGE);
 * BK_HUGE_AUTO when it asks for none. */
bk_huge_policy bk_huge_policy_from_env(void);

/* The free memory in blocks of 2^order pages that /proc/buddyinfo's
 * `text` lists over every zone (a free block of a higher order counts as
 * the blocks it holds), or UINT64_MAX when the text lists no zone. */
uint64_t bk_buddyinfo_free_blocks(const char *text, unsigned order);

/* True when a block of `bytes` gets the huge-page hint before it is
 * populated, under `policy`, with `free_blocks` free 2 MiB blocks
 * (UINT64_MAX: unknown, hint). */
bool bk_huge_hint_at_population(bk_huge_policy policy, size_t bytes, uint64_t free_blocks);

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
