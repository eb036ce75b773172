/*
 * src/memory.c -- zeroed, aligned memory for filter payloads and build
 * scratch (memory.h), and the huge-page policy.
 *
 * Blocks of BK_HUGE_THRESHOLD (2 MiB) or more come from mmap and are
 * populated at once (MADV_POPULATE_WRITE), so no insert or query waits for
 * a page fault later and a machine out of memory fails the allocation.
 * Whether they sit on 2 MiB pages is the policy below.
 *
 * Why huge pages.  A random probe into a filter far bigger than the TLB's
 * reach (about 6 MiB of 4 KiB pages) walks the page tables on most
 * queries; on 2 MiB pages the walk is mostly gone (docs/PERFORMANCE.md,
 * "Design decisions").
 *
 * Why not always.  With transparent huge pages in "madvise" mode (Debian's
 * default) a MADV_HUGEPAGE region is populated with direct compaction:
 * when the kernel has no free 2 MiB block, the faulting thread itself
 * migrates pages until it makes one.  On a busy machine with fragmented
 * memory that stall dominates a program that builds one filter and exits:
 * most of a fresh fuse8 build's time can go to the kernel (its scratch is
 * some 30 times the filter).  When free 2 MiB blocks are at hand the hint
 * costs little: the kernel's time to populate stays near that of 4 KiB
 * pages, and the build's random scratch accesses and the queries after it
 * gain more (docs/PERFORMANCE.md, "First build in a fresh process").
 *
 * The policy ("auto").  Ask for huge pages at population time only when
 * the kernel's free lists (/proc/buddyinfo: free blocks of order 9 and
 * above) hold at least twice the block's 2 MiB pages, that is, when they
 * come without compaction; otherwise populate on the pages the system
 * gives unhinted, then set the hint, so that khugepaged may collapse a
 * long-lived filter into huge pages in the background, where the stall is
 * no one's.  Reading buddyinfo costs far less than populating 2 MiB;
 * where it cannot be read the hint is given as before.
 *
 * Environment, for measurements: BLOOMKIT_HUGEPAGE=always (the hint at
 * population, whatever the free lists say), =never (MADV_NOHUGEPAGE: 4 KiB
 * pages even where the system default is "always"); BLOOMKIT_NO_HUGEPAGE
 * set to anything is "never".  Read at each large allocation, which is
 * rare.
 */
#define _GNU_SOURCE
#include "memory.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* How much more free 2 MiB memory than the block needs the free lists
 * must hold for "auto" to hint at population: other threads allocate too,
 * and the kernel keeps watermarks. */
#define FREE_HUGE_HEADROOM 2

bk_huge_policy bk_huge_policy_from_env(void)
{
    const char *policy = getenv("BLOOMKIT_HUGEPAGE");
    if (getenv("BLOOMKIT_NO_HUGEPAGE") != NULL ||
        (policy != NULL && strcmp(policy, "never") == 0))
        return BK_HUGE_NEVER;
    if (policy != NULL && strcmp(policy, "always") == 0)
        return BK_HUGE_ALWAYS;
    return BK_HUGE_AUTO;
}

uint64_t bk_buddyinfo_free_blocks(const char *text, unsigned order)
{
    uint64_t blocks = 0;
    bool any_zone = false;
    for (const char *line = text; line != NULL && *line != '\0';) {
        const char *zone = strstr(line, "zone");
        const char *end = strchr(line, '\n');
        if (zone != NULL && (end == NULL || zone < end)) {
            /* "Node 0, zone   Normal   c0 c1 ... ": skip "zone" and its name */
            const char *cursor = zone + 4;
            while (*cursor == ' ' || *cursor == '\t')
                cursor++;
            while (*cursor != '\0' && *cursor != ' ' && *cursor != '\t' && *cursor != '\n')
                cursor++;
            for (unsigned o = 0; o < 64; o++) {
                char *after;
                unsigned long long count = strtoull(cursor, &after, 10);
                if (after == cursor || (end != NULL && after > end))
                    break;
                any_zone = true;
                if (o >= order)
                    blocks += (uint64_t)count << (o - order);
                cursor = after;
            }
        }
        line = end != NULL ? end + 1 : NULL;
    }
    return any_zone ? blocks : UINT64_MAX;
}

/* Free blocks of 2 MiB the kernel holds now, or UINT64_MAX when it does
 * not say. */
static uint64_t free_huge_blocks(void)
{
    long page = sysconf(_SC_PAGESIZE);
    unsigned order = 0;
    while (page > 0 && ((size_t)page << order) < BK_HUGE_THRESHOLD)
        order++;
    FILE *file = fopen("/proc/buddyinfo", "r");
    if (page <= 0 || file == NULL) {
        if (file != NULL)
            fclose(file);
        return UINT64_MAX;
    }
    char text[4096];
    size_t length = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[length] = '\0';
    return bk_buddyinfo_free_blocks(text, order);
}

bool bk_huge_hint_at_population(bk_huge_policy policy, size_t bytes, uint64_t free_blocks)
{
    if (policy != BK_HUGE_AUTO)
        return policy == BK_HUGE_ALWAYS;
    uint64_t needed = (bytes + BK_HUGE_THRESHOLD - 1) / BK_HUGE_THRESHOLD;
    return free_blocks == UINT64_MAX || free_blocks / FREE_HUGE_HEADROOM >= needed;
}

static size_t round_up_64(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

/* Pages for a mapped block now (MADV_POPULATE_WRITE, Linux 5.14+; older
 * kernels answer EINVAL and fault the pages in on first touch).  False
 * only when memory ran out. */
static bool populate(void *block, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    return madvise(block, bytes, MADV_POPULATE_WRITE) == 0 || errno != ENOMEM;
#else
    (void)block, (void)bytes;
    return true;
#endif
}

/* A mapped block of `bytes`, populated under the policy (the opening
 * comment); NULL when memory ran out. */
static void *map_block(size_t bytes)
{
    void *block = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED)
        return NULL;
    bool populated;
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    bk_huge_policy policy = bk_huge_policy_from_env();
    if (policy == BK_HUGE_NEVER) {
        (void)madvise(block, bytes, MADV_NOHUGEPAGE);
        populated = populate(block, bytes);
    } else if (bk_huge_hint_at_population(
                   policy, bytes, policy == BK_HUGE_AUTO ? free_huge_blocks() : UINT64_MAX)) {
        (void)madvise(block, bytes, MADV_HUGEPAGE);
        populated = populate(block, bytes);
    } else {
        populated = populate(block, bytes);
        (void)madvise(block, bytes, MADV_HUGEPAGE); /* khugepaged's to collapse, later */
    }
#else
    populated = populate(block, bytes);
#endif
    if (!populated) {
        munmap(block, bytes);
        return NULL;
    }
    return block;
}

void *bk_alloc_zeroed(size_t bytes)
{
    if (bytes > SIZE_MAX - 64)
        return NULL;
    if (bytes >= BK_HUGE_THRESHOLD)
        return map_block(bytes);
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
