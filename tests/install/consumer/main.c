/* A program outside the project that links the installed library. */
#include <bloomkit.h>
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
    printf("consumer: %s\n", ok ? "ok" : "wrong answer");
    return ok ? 0 : 1;
}
