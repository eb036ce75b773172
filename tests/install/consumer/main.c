/* A program outside the project that links the installed library, and
 * compiles the inline views (which need xxhash.h on the include path). */
#include <bloomkit.h>
#include <bloomkit/blocked_inline.h>
#include <bloomkit/fuse_inline.h>
#include <bloomkit/sbbf_inline.h>
#include <stdio.h>

int main(void)
{
    bk_params params = { .capacity = 1000, .fpr = 0.01 };
    bk_filter *filter;
    if (bk_filter_create(BK_KIND_BLOOM, &params, &filter) != BK_OK)
        return 1;
    bk_filter_add(filter, "alice", 5, NULL);
    int ok = bk_filter_contains(filter, "alice", 5) && !bk_filter_contains(filter, "bob", 3);
    bk_filter_free(filter);

    bk_filter *sbbf;
    struct bk_sbbf_view view;
    if (bk_filter_create(BK_KIND_SBBF, &params, &sbbf) != BK_OK)
        return 1;
    bk_filter_add(sbbf, "carol", 5, NULL);
    ok = ok && bk_sbbf_view(sbbf, &view) == BK_OK &&
         bk_sbbf_view_contains(&view, "carol", 5) == bk_filter_contains(sbbf, "carol", 5) &&
         bk_sbbf_view_contains(&view, "dave", 4) == bk_filter_contains(sbbf, "dave", 4) &&
         bk_sbbf_view_contains(&view, "carol", 5);
    bk_filter_free(sbbf);

    bk_filter *blocked;
    struct bk_blocked_view blocked_view;
    if (bk_filter_create(BK_KIND_BLOCKED, &params, &blocked) != BK_OK)
        return 1;
    bk_filter_add(blocked, "hank", 4, NULL);
    ok = ok && bk_filter_contains(blocked, "hank", 4);
    /* the view: given on a SIMD path (refused on the portable one) */
    if (bk_blocked_view(blocked, &blocked_view) == BK_OK)
        ok = ok && bk_blocked_view_contains(&blocked_view, "hank", 4) &&
             bk_blocked_view_contains(&blocked_view, "ivy", 3) ==
                 bk_filter_contains(blocked, "ivy", 3);
    bk_filter_free(blocked);

    bk_key keys[2] = { { "erin", 4 }, { "frank", 5 } };
    bk_filter *fuse;
    struct bk_fuse_view fuse_view;
    if (bk_filter_build(BK_KIND_FUSE8, &params, keys, 2, &fuse) != BK_OK)
        return 1;
    ok = ok && bk_fuse_view(fuse, &fuse_view) == BK_OK &&
         bk_fuse_view_contains(&fuse_view, "erin", 4) &&
         bk_fuse_view_contains(&fuse_view, "frank", 5) &&
         bk_fuse_view_contains(&fuse_view, "gina", 4) == bk_filter_contains(fuse, "gina", 4);
    bk_filter_free(fuse);
    printf("consumer: %s\n", ok ? "ok" : "wrong answer");
    return ok ? 0 : 1;
}
