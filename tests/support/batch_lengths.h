/*
 * tests/support/batch_lengths.h -- batches of every length against one-key
 * queries, for the kinds whose batch loops have a pipeline with a start,
 * a steady part and a tail (src/prefetch.h, src/bloom_avx512.c).  Include
 * after <cmocka.h> and bloomkit.h.
 */
#ifndef BK_TESTS_BATCH_LENGTHS_H
#define BK_TESTS_BATCH_LENGTHS_H

#define BATCH_LENGTHS_MAX 256

typedef size_t (*batch_query_fn)(const void *filter, const bk_hash *hashes, size_t count,
                                 bool *results);
typedef bool (*single_query_fn)(const void *filter, bk_hash hash);

/* For every count from 0 to n (n <= BATCH_LENGTHS_MAX): the batch over
 * hashes[0..count) answers each hash as the one-key query does, and
 * returns how many answers are true, with and without an answer array. */
static void check_batch_lengths_against_single(const void *filter, const bk_hash *hashes,
                                               size_t n, batch_query_fn batch,
                                               single_query_fn single)
{
    assert_true(n <= BATCH_LENGTHS_MAX);
    for (size_t count = 0; count <= n; count++) {
        bool answers[BATCH_LENGTHS_MAX];
        size_t expected = 0;
        size_t present = batch(filter, hashes, count, answers);
        for (size_t i = 0; i < count; i++) {
            assert_int_equal(answers[i], single(filter, hashes[i]));
            expected += answers[i];
        }
        assert_int_equal(present, expected);
        assert_int_equal(batch(filter, hashes, count, NULL), expected);
    }
}

#endif
