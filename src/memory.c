/*
 * src/memory.c -- see memory.h.
 */
#define _GNU_SOURCE
#include "memory.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* BLOOMKIT_NO_HUGEPAGE set (to anything) turns the huge page hint into its
 * opposite, so the benchmark can measure what the hint gives.  Read at each
 * large allocation, which is rare. */
static bool huge_pages_wanted(void) { return getenv("BLOOMKIT_NO_HUGEPAGE") == NULL; }

static size_t round_up_64(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

void *bk_alloc_zeroed(size_t bytes)
{
    if (bytes > SIZE_MAX - 64)
        return NULL;
    if (bytes >= BK_HUGE_THRESHOLD) {
        void *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                           0);
        if (block == MAP_FAILED)
            return NULL;
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
        (void)madvise(block, bytes, huge_pages_wanted() ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
        /* Every page now, as memset does for small blocks: no page faults
         * (nor huge-page compaction) later in the hot path, and no memory
         * is an error here rather than a killed process later.  Kernels
         * before 5.14 answer EINVAL: the pages then come on first touch. */
        if (madvise(block, bytes, MADV_POPULATE_WRITE) != 0 && errno == ENOMEM) {
            munmap(block, bytes);
            return NULL;
        }
#endif
        return block;
    }
    size_t size = round_up_64(bytes == 0 ? 1 : bytes);
    void *block = aligned_alloc(64, size);
    if (block != NULL)
        memset(block, 0, size);
    return block;
}

void bk_free_zeroed(void *block, size_t bytes)
{
    if (block == NULL)
        return;
    if (bytes >= BK_HUGE_THRESHOLD)
        munmap(block, bytes);
    else
        free(block);
}
