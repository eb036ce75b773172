/*
 * tests/support/growth_golden.h -- golden files of the scalable and window kinds
 * (tests/data/scalable-*.bkf, window-*.bkf), in the layout of
 * tests/data/README.md: NAME.bkf and NAME.bkf.answers ("keys_added N", then
 * one '0'/'1' per probe key "golden:0", "golden:1", ...).
 *
 * check: loads each file (buffer, file, mapping), compares every recorded
 * answer, and re-serialises to the same bytes.  A failure means the file
 * format, the hashing or the probe sequence (src/level_hash.h) changed:
 * never regenerate the files to make it pass.
 *
 * write (`test_scalable --write-golden tests/data`, same for test_window):
 * only for a deliberate new format version.
 *
 * Include after <cmocka.h>, "bloomkit.h" and "roundtrip.h"; it includes
 * "golden.h" (the probes and the writer of every golden file).
 */
#ifndef BK_TESTS_GROWTH_GOLDEN_H
#define BK_TESTS_GROWTH_GOLDEN_H

#ifndef BK_TEST_DATA_DIR
#define BK_TEST_DATA_DIR "tests/data"
#endif

#include "golden.h"

static const uint8_t growth_golden_key[BK_SECRET_KEY_BYTES] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
};

typedef struct growth_golden {
    const char *name;
    bk_kind kind;
    bk_params params;
    size_t keys;    /* "golden:0" .. "golden:<keys-1>" added */
    size_t probes;  /* "golden:0" .. "golden:<probes-1>" recorded */
    uint64_t start; /* time windows: key i is added at start + i / 5 */
    size_t sure;    /* the last `sure` keys must be present (window: W) */
} growth_golden;

static BK_RT_UNUSED bk_filter *growth_golden_build(const growth_golden *g)
{
    bk_filter *filter = NULL;
    if (bk_filter_create(g->kind, &g->params, &filter) != BK_OK)
        return NULL;
    char key[32];
    for (size_t i = 0; i < g->keys; i++) {
        int len = snprintf(key, sizeof key, "golden:%zu", i);
        if (g->start != 0) /* a time window: its clock first */
            bk_filter_advance_clock(filter, g->start + i / 5);
        bk_filter_add(filter, key, (size_t)len, NULL);
    }
    return filter;
}

static BK_RT_UNUSED int growth_golden_write(const char *dir, const growth_golden *goldens,
                                            size_t count)
{
    for (size_t g = 0; g < count; g++) {
        bk_filter *filter = growth_golden_build(&goldens[g]);
        if (filter == NULL)
            return 1;
        int failed = bk_golden_save(filter, dir, goldens[g].name, goldens[g].probes);
        bk_filter_free(filter);
        if (failed)
            return 1;
    }
    return 0;
}

static BK_RT_UNUSED void growth_golden_check(const growth_golden *g)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.answers", BK_TEST_DATA_DIR, g->name);
    size_t answers_size;
    uint8_t *answers_file = bk_rt_read_file(path, &answers_size);
    answers_file[answers_size] = '\0';
    unsigned long long keys_added;
    int consumed = 0;
    assert_int_equal(sscanf((char *)answers_file, "keys_added %llu\n%n", &keys_added, &consumed),
                     1);
    const uint8_t *answers = answers_file + consumed;
    assert_true(answers_size - (size_t)consumed >= g->probes);

    snprintf(path, sizeof path, "%s/%s", BK_TEST_DATA_DIR, g->name);
    size_t size;
    uint8_t *bytes = bk_rt_read_file(path, &size);
    bk_load_options options = { .secret_key = g->params.secret_key, .expected_kind = g->kind };
    bk_filter *loaded[3] = { NULL, NULL, NULL };
    assert_int_equal(bk_filter_deserialize(bytes, size, &options, &loaded[0]), BK_OK);
    assert_int_equal(bk_filter_load(path, &options, &loaded[1]), BK_OK);
    assert_int_equal(bk_filter_map(path, &options, &loaded[2]), BK_OK);
    for (int c = 0; c < 3; c++) {
        bk_stats s;
        bk_filter_stats(loaded[c], &s);
        assert_int_equal(s.kind, g->kind);
        assert_int_equal(s.keys_added, keys_added);
        for (size_t i = 0; i < g->probes; i++)
            assert_int_equal(bk_golden_probe(loaded[c], i), answers[i] == '1');
        for (size_t i = g->keys - g->sure; i < g->keys; i++)
            assert_int_equal(answers[i], '1'); /* no false negatives */
        bk_rt_assert_serializes_to(loaded[c], bytes, size);
        bk_filter_free(loaded[c]);
    }
    free(bytes);
    free(answers_file);
}

#endif
