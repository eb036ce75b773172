/* A program outside the project that links the installed library, and
 * compiles the inline views (which need xxhash.h on the include path). */
#include <bloomkit.h>
#include <bloomkit/sbbf_inline.h>
#include <stdio.h>

int main(void)
{
    bk_params params = { .capacity = 1000, .fpr = 0.01 };
    bk_bloom *filter;
    if (bk_bloom_create(&params, &filter) != BK_OK)
        return 1;
    bk_bloom_add(filter, "alice", 5, NULL);
    int ok = bk_bloom_contains(filter, "alice", 5) && !bk_bloom_contains(filter, "bob", 3);
    bk_bloom_free(filter);

    bk_sbbf *sbbf;
    bk_sbbf_view view;
    if (bk_sbbf_create(&params, &sbbf) != BK_OK)
        return 1;
    bk_sbbf_add(sbbf, "carol", 5, NULL);
    ok = ok && bk_sbbf_view_init(sbbf, &view) == BK_OK &&
         bk_sbbf_view_contains(&view, "carol", 5) == bk_sbbf_contains(sbbf, "carol", 5) &&
         bk_sbbf_view_contains(&view, "dave", 4) == bk_sbbf_contains(sbbf, "dave", 4) &&
         bk_sbbf_view_contains(&view, "carol", 5);
    bk_sbbf_free(sbbf);
    printf("consumer: %s\n", ok ? "ok" : "wrong answer");
    return ok ? 0 : 1;
}
