/*
 * tests/support/golden.h -- golden files: the probes and the writer every test
 * uses (bk_golden_probe, bk_golden_save), and recipes for the counting,
 * cuckoo and quotient kinds, in the
 * style of tests/test_format.c's (tests/data/README.md): a small filter
 * written once, kept in tests/data/, and checked on every run -- on any
 * host, including big-endian ones -- so that neither the format nor the
 * hashing, probing or insertion algorithm can drift by accident.
 *
 * A recipe: create `kind` from `params`, add "golden:0" .. "golden:<keys-1>"
 * (BK_EFULL allowed), then remove "golden:i" for every i < keys with
 * i % remove_every == 0 (0: none).  NAME.answers holds "keys_added N" and
 * one character per probe "golden:0" .. "golden:<probes-1>".
 *
 * Include after <cmocka.h>, "bloomkit.h" and "roundtrip.h"; needs
 * BK_TEST_DATA_DIR.  Regenerate only for a deliberate format change:
 *     build/release/tests/test_counting --write-golden tests/data
 */
#ifndef BK_TESTS_GOLDEN_H
#define BK_TESTS_GOLDEN_H

typedef struct bk_golden {
    const char *name;
    bk_kind kind;
    bk_params params;
    size_t keys;
    size_t remove_every;
    size_t probes;
} bk_golden;

static BK_RT_UNUSED bool bk_golden_probe(const bk_filter *filter, size_t i)
{
    char key[32];
    int len = snprintf(key, sizeof key, "golden:%zu", i);
    return bk_filter_contains(filter, key, (size_t)len);
}

static BK_RT_UNUSED bk_filter *bk_golden_build(const bk_golden *g)
{
    bk_filter *filter;
    if (bk_filter_create(g->kind, &g->params, &filter) != BK_OK)
        return NULL;
    char key[32];
    for (size_t i = 0; i < g->keys; i++) {
        int len = snprintf(key, sizeof key, "golden:%zu", i);
        bk_status status = bk_filter_add(filter, key, (size_t)len, NULL);
        if (status != BK_OK && status != BK_EFULL) {
            bk_filter_free(filter);
            return NULL;
        }
    }
    for (size_t i = 0; g->remove_every != 0 && i < g->keys; i += g->remove_every) {
        int len = snprintf(key, sizeof key, "golden:%zu", i);
        (void)bk_filter_remove(filter, key, (size_t)len);
    }
    return filter;
}

/* Saves `filter` as DIR/NAME and its answers to the probes "golden:0" ..
 * "golden:<probes-1>" as DIR/NAME.answers (the layout above; every golden
 * file of the tests is written so).  0 on success, 1 on an error. */
static BK_RT_UNUSED int bk_golden_save(const bk_filter *filter, const char *dir,
                                       const char *name, size_t probes)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (bk_filter_save(filter, path) != BK_OK)
        return 1;
    snprintf(path, sizeof path, "%s/%s.answers", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return 1;
    bk_stats stats;
    bk_filter_stats(filter, &stats);
    fprintf(f, "keys_added %llu\n", (unsigned long long)stats.keys_added);
    for (size_t i = 0; i < probes; i++)
        fputc(bk_golden_probe(filter, i) ? '1' : '0', f);
    fputc('\n', f);
    fclose(f);
    printf("wrote %s/%s\n", dir, name);
    return 0;
}

static BK_RT_UNUSED int bk_golden_write(const bk_golden *goldens, size_t count, const char *dir)
{
    for (size_t g = 0; g < count; g++) {
        bk_filter *filter = bk_golden_build(&goldens[g]);
        if (filter == NULL)
            return 1;
        int failed = bk_golden_save(filter, dir, goldens[g].name, goldens[g].probes);
        bk_filter_free(filter);
        if (failed)
            return 1;
    }
    return 0;
}

/* Loads the golden file three ways (buffer, file, map); each answers every
 * probe as recorded and re-serialises to the golden bytes; today's code
 * rebuilds the very same bytes from the recipe. */
static BK_RT_UNUSED void bk_golden_check(const bk_golden *g)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.answers", BK_TEST_DATA_DIR, g->name);
    size_t file_size;
    uint8_t *answers_file = bk_rt_read_file(path, &file_size);
    answers_file[file_size] = '\0';
    unsigned long long keys_added;
    int consumed = 0;
    assert_int_equal(sscanf((char *)answers_file, "keys_added %llu\n%n", &keys_added, &consumed),
                     1);
    assert_true(consumed > 0);
    const uint8_t *answers = answers_file + consumed;
    assert_int_equal(file_size - (size_t)consumed, g->probes + 1);

    snprintf(path, sizeof path, "%s/%s", BK_TEST_DATA_DIR, g->name);
    size_t size;
    uint8_t *bytes = bk_rt_read_file(path, &size);
    assert_int_equal(bk_file_verify(path), BK_OK);
    bk_load_options options = { .secret_key = NULL, .expected_kind = g->kind };
    bk_filter *loaded[3] = { NULL, NULL, NULL };
    assert_int_equal(bk_filter_deserialize(bytes, size, &options, &loaded[0]), BK_OK);
    assert_int_equal(bk_filter_load(path, &options, &loaded[1]), BK_OK);
    assert_int_equal(bk_filter_map(path, &options, &loaded[2]), BK_OK);
    for (size_t c = 0; c < 3; c++) {
        bk_stats s;
        bk_filter_stats(loaded[c], &s);
        assert_int_equal(s.kind, g->kind);
        assert_int_equal(s.capacity, g->params.capacity);
        assert_int_equal(s.keys_added, keys_added);
        for (size_t i = 0; i < g->probes; i++)
            assert_int_equal(bk_golden_probe(loaded[c], i), answers[i] == '1');
        bk_rt_assert_serializes_to(loaded[c], bytes, size);
        bk_filter_free(loaded[c]);
    }

    bk_filter *rebuilt = bk_golden_build(g);
    assert_non_null(rebuilt);
    bk_rt_assert_serializes_to(rebuilt, bytes, size);
    bk_filter_free(rebuilt);
    free(bytes);
    free(answers_file);
}

#endif
