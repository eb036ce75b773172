/*
 * tests/fuzz/fuzz_loaded.c -- libFuzzer target over filters loaded from
 * hostile bytes and then used: added to, removed from, merged, cleared
 * and saved again.
 *
 * The loader target (fuzz_deserialize.c) only loads and queries; the
 * operations target (fuzz_operations.c) only uses filters the library
 * made.  This one joins them: whatever a loader accepts must be a filter
 * the library can live with.
 *
 * Input:  [2 bytes, big-endian: L] [L bytes: a filter file] [operations]
 * The file's checksum field is recomputed before loading (so that
 * mutations reach the kinds' own checks, as in fuzz_deserialize), then the
 * bytes go through bk_filter_deserialize.  If it accepts them, up to
 * MAX_STEPS operations follow, chosen by the input: add, batch add,
 * query, remove (mostly a key added since loading; sometimes any key,
 * which the file may have held), for the kinds that remove,
 * union with an emptied copy holding other keys, intersection with a copy
 * holding more keys, clear, and a save (serialise and load again).
 *
 * Properties checked:
 *   - every status is one bloomkit documents;
 *   - every save loads again (BK_OK, not BK_ECORRUPT: a filter the library
 *     saved always loads), re-serialises to the same bytes and answers as
 *     the filter it came from; later steps use the reloaded filter;
 *   - no false negative for a key added since loading and not removed
 *     since (as many removes as adds); for an insertion window only the
 *     keys of the last W insertions, W read from the file; a refused add
 *     (BK_EFULL, BK_ERANGE) adds nothing the model can see;
 *   - no crash, leak or undefined behaviour (ASan, UBSan, LSan), and no
 *     allocation beyond what libFuzzer allows (-rss_limit_mb, -malloc_limit_mb).
 *
 * Run: scripts/fuzz-smoke.sh (30 s); the ordinary test suite replays the
 * committed seeds, tests/fuzz/loaded (fuzz_loaded_replay): golden files
 * and the reproducers of tests/data/hostile, each followed by operations.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit.h"
#include "endian.h"
#include "filter.h"
#include "format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_KEYS 96
#define MAX_STEPS 64
#define MAX_KEY_LEN 12
#define MAX_BATCH 16

static const uint8_t secret_key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };

#include "fuzz_model.h"

static bool must_be_present(const model *m, const model_key *key)
{
    if (key->count == 0)
        return false;
    return m->window == 0 || m->insertions - key->last_added <= m->window;
}

static void check_model(const bk_filter *filter, const model *m)
{
    for (size_t i = 0; i < m->count; i++)
        if (must_be_present(m, &m->keys[i]))
            CHECK(bk_filter_contains(filter, m->keys[i].bytes, m->keys[i].len));
}

/* An add the model records only when it succeeded: a refused add
 * (BK_EFULL, BK_ERANGE, BK_ENOMEM) changes nothing the model can see. */
static void add_one(bk_filter *filter, model *m, const model_key *key)
{
    bk_status status = bk_filter_add(filter, key->bytes, key->len, NULL);
    check_status(status);
    if (status == BK_OK)
        record_add(m, key);
}

static void add_batch(bk_filter *filter, model *m, input *in)
{
    size_t n = take_byte(in) % (MAX_BATCH + 1);
    model_key taken[MAX_BATCH];
    bk_key keys[MAX_BATCH];
    for (size_t i = 0; i < n; i++) {
        taken[i] = take_key(in, m);
        keys[i] = (bk_key){ taken[i].bytes, taken[i].len };
    }
    bk_status status = bk_filter_add_batch(filter, keys, n, NULL);
    check_status(status);
    if (status == BK_OK)
        for (size_t i = 0; i < n; i++)
            record_add(m, &taken[i]);
}

/* Removes a key added since loading (remove is defined for keys known to
 * be present); it must be found and removed. */
static void remove_one(bk_filter *filter, model *m, input *in)
{
    if (m->count == 0)
        return;
    model_key *key = &m->keys[take_byte(in) % m->count];
    if (key->count == 0 || !m->removes)
        return;
    bk_status status = bk_filter_remove(filter, key->bytes, key->len);
    check_status(status);
    CHECK(status == BK_OK);
    key->count--;
}

/* Removes a key from the input, perhaps one the file held before loading,
 * perhaps a false positive: BK_OK or BK_ENOTFOUND.  Removing a false
 * positive may take another key's fingerprint or counters, so after a
 * successful remove of a key the model does not hold, it forgets them
 * all (their absence is then allowed). */
static void remove_any(bk_filter *filter, model *m, input *in)
{
    if (!m->removes)
        return;
    model_key key = take_key(in, m);
    model_key *known = find(m, &key);
    if (known != NULL && known->count > 0)
        return; /* remove_one's case */
    bk_status status = bk_filter_remove(filter, key.bytes, key.len);
    check_status(status);
    CHECK(status == BK_OK || status == BK_ENOTFOUND);
    if (status == BK_OK)
        for (size_t i = 0; i < m->count; i++)
            m->keys[i].count = 0;
}

/* A filter of the same parameters: a copy, emptied (bk_filter_clear). */
static bk_filter *empty_twin(const bk_filter *filter)
{
    bk_filter *twin = NULL;
    if (bk_filter_copy(filter, &twin) != BK_OK)
        return NULL;
    if (bk_filter_clear(twin) != BK_OK) {
        bk_filter_free(twin);
        return NULL;
    }
    return twin;
}

static void union_with_twin(bk_filter *filter, model *m, input *in)
{
    bk_filter *twin = empty_twin(filter);
    if (twin == NULL)
        return;
    size_t n = take_byte(in) % (MAX_BATCH + 1), added = 0;
    model_key taken[MAX_BATCH];
    for (size_t i = 0; i < n; i++) {
        taken[added] = take_key(in, m);
        bk_status status = bk_filter_add(twin, taken[added].bytes, taken[added].len, NULL);
        check_status(status);
        added += status == BK_OK;
    }
    bk_status status = bk_filter_union(filter, twin);
    check_status(status);
    if (status == BK_OK)
        for (size_t i = 0; i < added; i++)
            record_add(m, &taken[i]);
    bk_filter_free(twin);
}

/* Union or intersection with an unchanged copy of itself, or intersection
 * with a copy holding more keys: every key stays. */
static void merge_with_copy(bk_filter *filter, const model *m, input *in)
{
    bk_filter *copy = NULL;
    bk_status status = bk_filter_copy(filter, &copy);
    check_status(status);
    if (status != BK_OK)
        return;
    uint8_t how = take_byte(in) % 3;
    if (how == 2) {
        size_t n = take_byte(in) % (MAX_BATCH + 1);
        for (size_t i = 0; i < n; i++) {
            model_key key = take_key(in, m);
            check_status(bk_filter_add(copy, key.bytes, key.len, NULL));
        }
    }
    check_status(how == 0 ? bk_filter_union(filter, copy) : bk_filter_intersect(filter, copy));
    bk_filter_free(copy);
}

static void clear_sometimes(bk_filter *filter, model *m, input *in)
{
    if (take_byte(in) % 4 != 0)
        return;
    bk_status status = bk_filter_clear(filter);
    check_status(status);
    if (status == BK_OK)
        for (size_t i = 0; i < m->count; i++)
            m->keys[i].count = 0;
}

/* Saves and loads again: the save must load, write the same bytes and
 * answer as the original.  Returns the reloaded filter (the original is
 * freed), or the original when memory ran out. */
static bk_filter *save_and_reload(bk_filter *filter, const model *m, input *in)
{
    size_t size = 0;
    bk_status status = bk_filter_serialized_size(filter, &size);
    check_status(status);
    if (status != BK_OK)
        return filter;
    uint8_t *bytes = malloc(size), *again = malloc(size);
    bk_filter *copy = NULL;
    if (bytes == NULL || again == NULL)
        goto done;
    CHECK(bk_filter_serialize(filter, bytes, size, NULL) == BK_OK);
    bk_load_options options = { .secret_key = secret_key, .expected_kind = BK_KIND_NONE };
    status = bk_filter_deserialize(bytes, size, &options, &copy);
    check_status(status);
    if (status == BK_ENOMEM)
        goto done;
    CHECK(status == BK_OK); /* a filter the library saved always loads */
    CHECK(bk_filter_serialize(copy, again, size, NULL) == BK_OK);
    CHECK(memcmp(bytes, again, size) == 0);
    for (size_t i = 0; i < m->count; i++)
        CHECK(bk_filter_contains(copy, m->keys[i].bytes, m->keys[i].len) ==
              bk_filter_contains(filter, m->keys[i].bytes, m->keys[i].len));
    model_key probe = take_key(in, m);
    CHECK(bk_filter_contains(copy, probe.bytes, probe.len) ==
          bk_filter_contains(filter, probe.bytes, probe.len));
done:
    free(bytes);
    free(again);
    if (copy == NULL)
        return filter;
    bk_filter_free(filter);
    return copy;
}

static bk_filter *run_step(bk_filter *filter, model *m, input *in)
{
    bool is_static = bk_kind_is_static(bk_filter_kind(filter));
    switch (take_byte(in) % 9) {
    case 0:
    case 1: {
        model_key key = take_key(in, m);
        if (is_static)
            CHECK(bk_filter_add(filter, key.bytes, key.len, NULL) == BK_EIMMUTABLE);
        else
            add_one(filter, m, &key);
        break;
    }
    case 2:
        if (!is_static)
            add_batch(filter, m, in);
        break;
    case 3: {
        model_key key = take_key(in, m);
        (void)bk_filter_contains(filter, key.bytes, key.len);
        break;
    }
    case 4:
        if (take_byte(in) % 4 == 0)
            remove_any(filter, m, in);
        else
            remove_one(filter, m, in);
        break;
    case 5:
        if (!is_static)
            union_with_twin(filter, m, in);
        break;
    case 6:
        if (!is_static)
            merge_with_copy(filter, m, in);
        break;
    case 7: clear_sometimes(filter, m, in); break;
    default: filter = save_and_reload(filter, m, in);
    }
    return filter;
}

/* The window length of an insertion window, read from its parameter
 * block (offset 0: L; offset 56: mode, 0 = insertions); 0 otherwise. */
static uint64_t insertion_window(const uint8_t *file, bk_kind kind)
{
    if (kind != BK_KIND_WINDOW)
        return 0;
    const uint8_t *params = file + BK_FORMAT_PARAMS_OFFSET;
    return bk_load_le32(params + 56) == 0 ? bk_load_le64(params) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t file_size = (size_t)data[0] << 8 | data[1];
    if (file_size < BK_FORMAT_HEADER_SIZE || file_size > size - 2)
        return 0;
    uint8_t *file = malloc(file_size);
    if (file == NULL)
        return 0;
    memcpy(file, data + 2, file_size);
    bk_store_le64(file + BK_FORMAT_OFFSET_CHECKSUM, bk_format_checksum(file, file_size));
    bk_load_options options = { .secret_key = secret_key, .expected_kind = BK_KIND_NONE };
    bk_filter *filter = NULL;
    bk_status status = bk_filter_deserialize(file, file_size, &options, &filter);
    check_status(status);
    if (status != BK_OK) {
        free(file);
        return 0;
    }
    static model m;
    memset(&m, 0, sizeof m);
    bk_kind kind = bk_filter_kind(filter);
    m.window = insertion_window(file, kind);
    m.removes = bk_kind_ops_for(kind)->remove_hash != NULL; /* counting, cuckoo */
    free(file);

    input in = { data, size, 2 + file_size };
    for (int step = 0; step < MAX_STEPS && !used_up(&in); step++) {
        filter = run_step(filter, &m, &in);
        check_model(filter, &m);
    }
    filter = save_and_reload(filter, &m, &in);
    check_model(filter, &m);
    bk_filter_free(filter);
    return 0;
}
