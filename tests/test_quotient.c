/*
 * tests/test_quotient.c -- the counting quotient filter (src/quotient.c,
 * bloomkit/quotient.h).
 *
 * The filter is exact on fingerprints: given hashes whose fingerprints we
 * choose, its counts must equal an exact multiset's.  The model-based test
 * drives it that way, with quotients crowded on a few home slots (long
 * runs, counters of every encoding) and on the last home slots (runs
 * spilling into the overflow slots), and checks every count, the ordered
 * iteration and the file round trip (whose loader re-checks every
 * structural invariant, offsets included) as it goes.
 *
 * Statistical bounds: a count of false positives among N absent queries is
 * Binomial(N, p); we accept |measured - p N| <= 4 sqrt(N p (1-p)).
 */
#define _GNU_SOURCE /* mkdtemp, for tests/roundtrip.h */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bloomkit.h"
#include "filter.h"
#include "quotient_bits.h"
#include "roundtrip.h"
#include "golden.h"

static uint64_t next_random(uint64_t *state) { return bk_rt_next_random(state); }

static bk_filter *create(uint64_t capacity, unsigned remainder_bits, unsigned flags)
{
    bk_params p = { .capacity = capacity, .remainder_bits = remainder_bits, .flags = flags };
    bk_filter *f = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_QUOTIENT, &p, &f), BK_OK);
    return f;
}

static bk_quotient_info info_of(const bk_filter *f)
{
    bk_quotient_info info;
    assert_int_equal(bk_quotient_get_info(f, &info), BK_OK);
    return info;
}

/* The hash whose fingerprint in a filter of width `width` is `fp`. */
static bk_hash hash_of_fingerprint(uint64_t fp, unsigned width, uint64_t *state)
{
    uint64_t low = width == 64 ? 0 : next_random(state) & ((((uint64_t)1) << (64 - width)) - 1);
    return (bk_hash){ width == 64 ? fp : (fp << (64 - width)) | low, next_random(state) };
}

static uint64_t count_of_hash(const bk_filter *f, bk_hash h)
{
    uint64_t count = 0;
    assert_int_equal(
        bk_filter_ops(f)->count_hash(bk_filter_object_of(f, BK_KIND_QUOTIENT), h, &count),
        BK_OK);
    return count;
}

static uint64_t key_count(const bk_filter *f, const char *key)
{
    uint64_t count = 0;
    assert_int_equal(bk_filter_count(f, key, strlen(key), &count), BK_OK);
    return count;
}

/* ------------------------------------------------------------------------ */
/* Rank and select                                                          */
/* ------------------------------------------------------------------------ */

static unsigned naive_select(uint64_t w, unsigned k)
{
    for (unsigned i = 0; i < 64; i++)
        if (((w >> i) & 1) && k-- == 0)
            return i;
    return 64;
}

static void test_rank_select_paths_agree(void **state)
{
    (void)state;
#ifdef BK_QUOTIENT_HAVE_BMI2
    bool hardware = false;
    __builtin_cpu_init();
    hardware = __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
#endif
    uint64_t seed = 29;
    for (int i = 0; i < 200000; i++) {
        uint64_t w = next_random(&seed);
        switch (i % 4) { /* sparse and dense words too */
        case 1: w &= next_random(&seed) & next_random(&seed); break;
        case 2: w |= next_random(&seed) | next_random(&seed); break;
        case 3: w = i < 64 ? (uint64_t)1 << i : w >> (i % 64); break;
        default: break;
        }
        if (i == 0)
            w = 0;
        if (i == 1)
            w = ~(uint64_t)0;
        unsigned rank = bk_rank64_portable(w);
        assert_int_equal(rank, (unsigned)__builtin_popcountll(w));
        for (unsigned k = 0; k <= 64; k += (i < 1000 ? 1 : 7)) {
            unsigned expected = naive_select(w, k);
            assert_int_equal(bk_select64_portable(w, k), expected);
#ifdef BK_QUOTIENT_HAVE_BMI2
            if (hardware)
                assert_int_equal(bk_select64_hardware(w, k), expected);
#endif
        }
#ifdef BK_QUOTIENT_HAVE_BMI2
        if (hardware)
            assert_int_equal(bk_rank64_hardware(w), rank);
#endif
    }
}

/* ------------------------------------------------------------------------ */
/* The model: an exact multiset of fingerprints                             */
/* ------------------------------------------------------------------------ */

#define MODEL_MAX 4096

typedef struct model {
    uint64_t fp[MODEL_MAX];
    uint64_t count[MODEL_MAX];
    bk_hash hash[MODEL_MAX];
    size_t size;
} model;

static size_t model_find(const model *m, uint64_t fp)
{
    for (size_t i = 0; i < m->size; i++)
        if (m->fp[i] == fp)
            return i;
    return SIZE_MAX;
}

typedef struct visit_state {
    const model *m;
    uint64_t seen;
    uint64_t last;
    bool ordered;
    bool matches;
} visit_state;

static bool check_visit(uint64_t fp, uint64_t count, void *context)
{
    visit_state *v = context;
    if (v->seen != 0 && fp <= v->last)
        v->ordered = false;
    v->last = fp;
    v->seen++;
    size_t i = model_find(v->m, fp);
    if (i == SIZE_MAX || v->m->count[i] != count)
        v->matches = false;
    return true;
}

/* Every count, the iteration, and a file round trip agree with the model. */
static void check_against_model(bk_filter *f, const model *m)
{
    uint64_t distinct = 0, total = 0;
    for (size_t i = 0; i < m->size; i++) {
        assert_int_equal(count_of_hash(f, m->hash[i]), m->count[i]);
        assert_int_equal(bk_filter_contains_hash(f, m->hash[i]), m->count[i] != 0);
        distinct += m->count[i] != 0;
        total += m->count[i];
    }
    visit_state v = { m, 0, 0, true, true };
    assert_int_equal(bk_quotient_iterate(f, check_visit, &v), BK_OK);
    assert_true(v.ordered);
    assert_true(v.matches);
    assert_int_equal(v.seen, distinct);
    bk_quotient_info info = info_of(f);
    assert_int_equal(info.fingerprints, distinct);
    assert_int_equal(info.counted, total);

    size_t size;
    uint8_t *bytes = bk_rt_serialize(f, &size);
    bk_load_options options = { .expected_kind = BK_KIND_QUOTIENT };
    bk_filter *copy = NULL;
    assert_int_equal(bk_filter_deserialize(bytes, size, &options, &copy), BK_OK);
    for (size_t i = 0; i < m->size; i++)
        assert_int_equal(count_of_hash(copy, m->hash[i]), m->count[i]);
    bk_filter_free(copy);
    free(bytes);
}

/* Quotients crowded on a few home slots, among them the first and the
 * last ones (runs spilling into the overflow slots). */
static uint64_t crowded_fingerprint(uint64_t *seed, const bk_quotient_info *info)
{
    uint64_t hot[] = { 0,
                       1,
                       5,
                       63,
                       64,
                       65,
                       info->home_slots / 2,
                       info->home_slots - 3,
                       info->home_slots - 2,
                       info->home_slots - 1 };
    uint64_t pick = next_random(seed);
    uint64_t x = pick % 4 == 0
                     ? next_random(seed) % info->home_slots
                     : hot[(pick >> 8) % (sizeof hot / sizeof hot[0])] % info->home_slots;
    /* few remainders, so that fingerprints repeat and counts grow */
    uint64_t remainder_choices = 1 + (pick >> 20) % 24;
    uint64_t mask = ((uint64_t)1 << info->remainder_bits) - 1;
    uint64_t v = (next_random(seed) % remainder_choices) & mask;
    if ((pick >> 40) % 3 == 0)
        v = mask - v; /* the largest remainders too */
    return (x << info->remainder_bits) | v;
}

static void run_model(unsigned remainder_bits, uint64_t capacity, uint64_t seed_value, int steps)
{
    bk_filter *f = create(capacity, remainder_bits, 0);
    bk_quotient_info info = info_of(f);
    assert_int_equal(info.remainder_bits, remainder_bits);
    static model m;
    memset(&m, 0, sizeof m);
    uint64_t seed = seed_value;
    size_t full_refusals = 0;
    for (int step = 0; step < steps; step++) {
        uint64_t fp = crowded_fingerprint(&seed, &info);
        size_t i = model_find(&m, fp);
        if (i == SIZE_MAX) {
            assert_true(m.size < MODEL_MAX);
            i = m.size++;
            m.fp[i] = fp;
            m.hash[i] = hash_of_fingerprint(fp, info.fingerprint_bits, &seed);
        }
        uint64_t op = next_random(&seed) % 10;
        if (op < 5) {
            /* add 1, or a burst that reaches the long counter forms */
            uint64_t times = op == 0 && step % 3 == 0 ? 1 + next_random(&seed) % 40 : 1;
            for (uint64_t t = 0; t < times; t++) {
                bool was_new = false;
                bk_status status = bk_filter_add_hash(f, m.hash[i], &was_new);
                if (status == BK_EFULL) {
                    full_refusals++;
                    break;
                }
                assert_int_equal(status, BK_OK);
                assert_int_equal(was_new, m.count[i] == 0);
                m.count[i]++;
            }
        } else if (op < 9) {
            bk_status status = bk_filter_ops(f)->remove_hash(
                bk_filter_object_of(f, BK_KIND_QUOTIENT), m.hash[i]);
            if (m.count[i] == 0) {
                assert_int_equal(status, BK_ENOTFOUND);
            } else {
                assert_int_equal(status, BK_OK);
                m.count[i]--;
            }
        } else {
            /* remove everything of one fingerprint: runs empty and close */
            while (m.count[i] > 0) {
                assert_int_equal(bk_filter_ops(f)->remove_hash(
                                     bk_filter_object_of(f, BK_KIND_QUOTIENT), m.hash[i]),
                                 BK_OK);
                m.count[i]--;
            }
        }
        assert_int_equal(count_of_hash(f, m.hash[i]), m.count[i]);
        if (step % 97 == 0)
            check_against_model(f, &m);
    }
    check_against_model(f, &m);
    /* emptying restores the empty table's bytes */
    for (size_t i = 0; i < m.size; i++)
        while (m.count[i] > 0) {
            assert_int_equal(bk_filter_ops(f)->remove_hash(
                                 bk_filter_object_of(f, BK_KIND_QUOTIENT), m.hash[i]),
                             BK_OK);
            m.count[i]--;
        }
    check_against_model(f, &m);
    bk_filter *empty = create(capacity, remainder_bits, 0);
    size_t size;
    uint8_t *bytes = bk_rt_serialize(empty, &size);
    bk_rt_assert_serializes_to(f, bytes, size);
    free(bytes);
    bk_filter_free(empty);
    bk_filter_free(f);
    if (info.home_slots <= 256) /* small tables fill: refusals are exercised */
        assert_true(full_refusals > 0);
}

static void test_model_multiset(void **state)
{
    (void)state;
    run_model(8, 200, 1, 6000);   /* 256 home slots */
    run_model(4, 200, 2, 6000);   /* r = 4: counters escape at 17 */
    run_model(12, 60, 3, 4000);   /* 64 home slots */
    run_model(32, 3000, 4, 4000); /* the widest remainder */
}

/* Clusters longer than 255 slots at 95% load: the offset bytes of the
 * blocks inside them saturate, and every answer must come out exact
 * through the anchor (an earlier block's offset) -- at the start, in the
 * middle and at the end of the table, through adds, removes, iteration
 * and the loader's re-check of every offset byte. */
static void test_clusters_past_255_slots(void **state)
{
    (void)state;
    bk_filter *f = create(3891, 8, 0); /* 2^12 home slots, 95% at capacity */
    bk_quotient_info info = info_of(f);
    assert_int_equal(info.home_slots, 4096);
    static model m;
    memset(&m, 0, sizeof m);
    uint64_t seed = 77;
    /* three piles of 40 quotients holding 450-700 fingerprints each: the
     * first home slots, the middle, and the last ones (spilling into the
     * overflow slots) */
    const uint64_t pile_start[] = { 0, 1500, 4096 - 40 };
    const uint64_t pile_size[] = { 500, 700, 450 };
    for (int pile = 0; pile < 3; pile++)
        for (uint64_t i = 0; i < pile_size[pile]; i++) {
            uint64_t x = pile_start[pile] + i % 40;
            m.fp[m.size] = (x << 8) | (i / 40 * 13 % 256);
            m.hash[m.size] = hash_of_fingerprint(m.fp[m.size], info.fingerprint_bits, &seed);
            m.size++;
        }
    /* random fingerprints elsewhere up to 95% load */
    while (m.size < 3891) {
        uint64_t fp = next_random(&seed) % ((uint64_t)4096 << 8);
        if (model_find(&m, fp) != SIZE_MAX)
            continue;
        m.fp[m.size] = fp;
        m.hash[m.size] = hash_of_fingerprint(fp, info.fingerprint_bits, &seed);
        m.size++;
    }
    for (size_t i = 0; i < m.size; i++) {
        assert_int_equal(bk_filter_add_hash(f, m.hash[i], NULL), BK_OK);
        m.count[i] = 1;
        if (i % 500 == 0)
            check_against_model(f, &m);
    }
    assert_int_equal(info_of(f).used_slots, 3891);
    check_against_model(f, &m);
    /* the offset bytes (at 16 in each block of 17 + 8r bytes, the payload
     * at the end of the file) saturated in several blocks */
    size_t size;
    uint8_t *bytes = bk_rt_serialize(f, &size);
    uint64_t blocks = info.slots / 64;
    const uint8_t *payload = bytes + size - blocks * (17 + 8 * 8);
    unsigned saturated = 0;
    for (uint64_t b = 0; b < blocks; b++)
        saturated += payload[b * (17 + 8 * 8) + 16] == 255;
    assert_true(saturated >= 6);
    free(bytes);
    /* counters inside the piles grow entries and shift the clusters */
    for (size_t i = 0; i < 1650; i += 37) {
        assert_int_equal(
            bk_filter_ops(f)->remove_hash(bk_filter_object_of(f, BK_KIND_QUOTIENT), m.hash[i]),
            BK_OK);
        m.count[i]--;
        assert_int_equal(bk_filter_ops(f)->remove_hash(bk_filter_object_of(f, BK_KIND_QUOTIENT),
                                                       m.hash[i + 1]),
                         BK_OK);
        m.count[i + 1]--;
        for (int t = 0; t < 3; t++) {
            assert_int_equal(bk_filter_add_hash(f, m.hash[i + 2], NULL), BK_OK);
            m.count[i + 2]++;
        }
    }
    check_against_model(f, &m);
    /* removing in a scattered order keeps every other count exact */
    for (size_t step = 0; step < m.size; step++) {
        size_t i = (step * 1237) % m.size;
        while (m.count[i] > 0) {
            assert_int_equal(bk_filter_ops(f)->remove_hash(
                                 bk_filter_object_of(f, BK_KIND_QUOTIENT), m.hash[i]),
                             BK_OK);
            m.count[i]--;
        }
        if (step % 400 == 0)
            check_against_model(f, &m);
    }
    check_against_model(f, &m);
    bk_filter *empty = create(3891, 8, 0);
    bytes = bk_rt_serialize(empty, &size);
    bk_rt_assert_serializes_to(f, bytes, size);
    free(bytes);
    bk_filter_free(empty);
    bk_filter_free(f);
}

/* The layout is canonical (runs in quotient order, each as far left as
 * its home slot and the runs before allow, entries sorted), so a table
 * filled by one-key adds -- most of them taking the in-block insert --
 * and removes must equal, byte for byte, the same fingerprints laid out
 * in one pass by a merge with an empty filter; and every query must find
 * what the exact multiset holds. */
static void test_one_key_adds_lay_out_canonically(void **state)
{
    (void)state;
    const unsigned widths[] = { 4, 7, 10, 16, 32 };
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        unsigned r = widths[w];
        bk_filter *f = create(3891, r, 0); /* 2^12 home slots */
        bk_filter *empty = create(3891, r, 0);
        bk_quotient_info info = info_of(f);
        static model m;
        memset(&m, 0, sizeof m);
        uint64_t seed = 1000 + r;
        for (int step = 0; m.size < 3700; step++) {
            uint64_t fp = next_random(&seed) >> (64 - info.fingerprint_bits);
            size_t i = model_find(&m, fp);
            if (i == SIZE_MAX) {
                i = m.size++;
                m.fp[i] = fp;
                m.hash[i] = hash_of_fingerprint(fp, info.fingerprint_bits, &seed);
            }
            assert_int_equal(bk_filter_add_hash(f, m.hash[i], NULL), BK_OK);
            m.count[i]++;
            if (step % 5 == 4) { /* and a remove now and then */
                size_t j = (size_t)(next_random(&seed) % m.size);
                if (m.count[j] > 0) {
                    assert_int_equal(bk_filter_ops(f)->remove_hash(
                                         bk_filter_object_of(f, BK_KIND_QUOTIENT), m.hash[j]),
                                     BK_OK);
                    m.count[j]--;
                }
            }
        }
        check_against_model(f, &m);
        bk_filter *laid = NULL;
        assert_int_equal(bk_quotient_merge(f, empty, &laid), BK_OK);
        assert_int_equal(info_of(laid).log2_slots, 12);
        size_t size_f, size_laid;
        uint8_t *bytes_f = bk_rt_serialize(f, &size_f);
        uint8_t *bytes_laid = bk_rt_serialize(laid, &size_laid);
        size_t payload = (size_t)(info.slots / 64) * (17 + 8 * r);
        assert_true(size_f >= payload && size_laid >= payload);
        assert_memory_equal(bytes_f + size_f - payload, bytes_laid + size_laid - payload,
                            payload);
        free(bytes_f);
        free(bytes_laid);
        bk_filter_free(laid);
        bk_filter_free(empty);
        bk_filter_free(f);
    }
}

/* Counts up to and past every boundary of the counter encoding. */
static void test_counter_encoding_boundaries(void **state)
{
    (void)state;
    const unsigned widths[] = { 4, 5, 8 };
    for (size_t w = 0; w < 3; w++) {
        bk_filter *f = create(500, widths[w], 0);
        bk_quotient_info info = info_of(f);
        uint64_t seed = 7;
        uint64_t fp_a = (7ULL << widths[w]) | 0;
        uint64_t fp_b = (7ULL << widths[w]) | (((uint64_t)1 << widths[w]) - 1);
        bk_hash a = hash_of_fingerprint(fp_a, info.fingerprint_bits, &seed);
        bk_hash b = hash_of_fingerprint(fp_b, info.fingerprint_bits, &seed);
        uint64_t limit = ((uint64_t)1 << widths[w]) * 3 + 5;
        for (uint64_t c = 1; c <= limit; c++) {
            assert_int_equal(bk_filter_add_hash(f, a, NULL), BK_OK);
            assert_int_equal(bk_filter_add_hash(f, b, NULL), BK_OK);
            assert_int_equal(count_of_hash(f, a), c);
            assert_int_equal(count_of_hash(f, b), c);
        }
        /* slots: 4 + digits for each, far fewer than the count */
        assert_true(info_of(f).used_slots <= 2 * (4 + 16));
        for (uint64_t c = limit; c-- > 0;) {
            assert_int_equal(
                bk_filter_ops(f)->remove_hash(bk_filter_object_of(f, BK_KIND_QUOTIENT), a),
                BK_OK);
            assert_int_equal(count_of_hash(f, a), c);
            assert_int_equal(count_of_hash(f, b), limit);
        }
        bk_filter_free(f);
    }
}

/* ------------------------------------------------------------------------ */
/* Keys through the generic handle                                          */
/* ------------------------------------------------------------------------ */

static void key_name(char *buffer, size_t size, uint64_t i)
{
    snprintf(buffer, size, "key:%llu", (unsigned long long)i);
}

static void add_keys(bk_filter *f, uint64_t from, uint64_t to, uint64_t times)
{
    char key[32];
    for (uint64_t i = from; i < to; i++) {
        key_name(key, sizeof key, i);
        for (uint64_t t = 0; t < times; t++)
            assert_int_equal(bk_filter_add(f, key, strlen(key), NULL), BK_OK);
    }
}

static void expect_keys(const bk_filter *f, uint64_t from, uint64_t to, uint64_t at_least)
{
    char key[32];
    for (uint64_t i = from; i < to; i++) {
        key_name(key, sizeof key, i);
        assert_true(bk_filter_contains(f, key, strlen(key)));
        assert_true(key_count(f, key) >= at_least);
    }
}

static void test_keys_remove_exact(void **state)
{
    (void)state;
    bk_filter *f = create(20000, 0, 0);
    add_keys(f, 0, 10000, 1);
    add_keys(f, 0, 3000, 2); /* keys 0..2999 three times */
    expect_keys(f, 0, 3000, 3);
    expect_keys(f, 3000, 10000, 1);
    char key[32];
    for (uint64_t i = 0; i < 10000; i += 2) {
        key_name(key, sizeof key, i);
        assert_int_equal(bk_filter_remove(f, key, strlen(key)), BK_OK);
    }
    expect_keys(f, 0, 3000, 2);
    for (uint64_t i = 1; i < 10000; i += 2) {
        key_name(key, sizeof key, i);
        assert_true(key_count(f, key) >= (i < 3000 ? 3u : 1u));
    }
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_int_equal(s.kind, BK_KIND_QUOTIENT);
    /* 10,000 keys less the 3,500 even ones from 3,000 up (a few share
     * fingerprints: F = 15 + 7 bits) */
    assert_true(s.keys_added >= 6400 && s.keys_added <= 6500);
    bk_roundtrip_check(f, NULL, 1000);
    bk_filter_free(f);
}

/* ------------------------------------------------------------------------ */
/* Merge and resize                                                         */
/* ------------------------------------------------------------------------ */

typedef struct list {
    uint64_t *fp;
    uint64_t *count;
    size_t size;
    size_t room;
} list;

static bool collect(uint64_t fp, uint64_t count, void *context)
{
    list *l = context;
    if (l->size == l->room) {
        l->room = l->room ? 2 * l->room : 1024;
        l->fp = realloc(l->fp, l->room * sizeof *l->fp);
        l->count = realloc(l->count, l->room * sizeof *l->count);
        assert_non_null(l->fp);
        assert_non_null(l->count);
    }
    l->fp[l->size] = fp;
    l->count[l->size++] = count;
    return true;
}

static list contents(const bk_filter *f)
{
    list l = { NULL, NULL, 0, 0 };
    assert_int_equal(bk_quotient_iterate(f, collect, &l), BK_OK);
    return l;
}

static void list_free(list *l)
{
    free(l->fp);
    free(l->count);
}

static void assert_same_contents(const bk_filter *a, const bk_filter *b)
{
    list la = contents(a), lb = contents(b);
    assert_int_equal(la.size, lb.size);
    for (size_t i = 0; i < la.size; i++) {
        assert_true(la.fp[i] == lb.fp[i]);
        assert_true(la.count[i] == lb.count[i]);
    }
    list_free(&la);
    list_free(&lb);
}

static void test_merge(void **state)
{
    (void)state;
    bk_filter *a = create(30000, 8, 0);
    bk_filter *b = create(30000, 8, 0);
    add_keys(a, 0, 14000, 1);
    add_keys(b, 10000, 20000, 1);
    add_keys(b, 10000, 11000, 1);
    bk_filter *m = NULL;
    assert_int_equal(bk_quotient_merge(a, b, &m), BK_OK);
    expect_keys(m, 0, 10000, 1);
    expect_keys(m, 10000, 11000, 3);
    expect_keys(m, 11000, 14000, 2);
    expect_keys(m, 14000, 20000, 1);
    /* the merge's contents are the sum of the two, fingerprint by fingerprint */
    list la = contents(a), lb = contents(b), lm = contents(m);
    size_t i = 0, j = 0, k = 0;
    while (i < la.size || j < lb.size) {
        uint64_t fp, count;
        if (j == lb.size || (i < la.size && la.fp[i] < lb.fp[j])) {
            fp = la.fp[i];
            count = la.count[i++];
        } else if (i == la.size || lb.fp[j] < la.fp[i]) {
            fp = lb.fp[j];
            count = lb.count[j++];
        } else {
            fp = la.fp[i];
            count = la.count[i++] + lb.count[j++];
        }
        assert_true(k < lm.size);
        assert_true(lm.fp[k] == fp);
        assert_true(lm.count[k++] == count);
    }
    assert_int_equal(k, lm.size);
    list_free(&la);
    list_free(&lb);
    list_free(&lm);

    /* union into a: the same contents, a's shape (it fits: 2^16 slots) */
    assert_int_equal(bk_filter_union(a, b), BK_OK);
    assert_same_contents(a, m);
    assert_int_equal(info_of(a).log2_slots, info_of(b).log2_slots);
    bk_roundtrip_check(m, NULL, 500);

    /* a union that does not fit is refused, changing nothing */
    bk_filter *small = create(1000, 8, 0); /* 2048 home slots */
    add_keys(small, 0, 1500, 1);
    bk_filter *before = NULL;
    assert_int_equal(bk_filter_copy(small, &before), BK_OK);
    bk_filter *wide = create(1000, 8, 0);
    add_keys(wide, 5000, 6500, 1);
    assert_int_equal(bk_filter_union(small, wide), BK_EFULL);
    assert_same_contents(small, before);
    /* ... unless the filter grows by itself */
    bk_filter *growing = create(1000, 8, BK_FLAG_AUTO_GROW);
    add_keys(growing, 0, 1500, 1);
    assert_int_equal(bk_filter_union(growing, wide), BK_OK);
    expect_keys(growing, 0, 1500, 1);
    expect_keys(growing, 5000, 6500, 1);
    assert_int_equal(info_of(growing).log2_slots, info_of(small).log2_slots + 1);

    /* incompatible: another width, another seed, another kind */
    bk_filter *narrow = create(1000, 9, 0);
    assert_int_equal(bk_filter_union(small, narrow), BK_EINCOMPATIBLE);
    assert_int_equal(bk_quotient_merge(small, narrow, &m), BK_EINCOMPATIBLE);
    bk_params seeded = { .capacity = 1000, .remainder_bits = 8, .seed = 5 };
    bk_filter *other_seed = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_QUOTIENT, &seeded, &other_seed), BK_OK);
    assert_int_equal(bk_filter_union(small, other_seed), BK_EINCOMPATIBLE);
    bk_params bloom_params = { .capacity = 1000 };
    bk_filter *bloom = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_BLOOM, &bloom_params, &bloom), BK_OK);
    bk_filter *unused = NULL;
    assert_int_equal(bk_quotient_merge(small, bloom, &unused), BK_EKIND);
    assert_int_equal(bk_quotient_resize(bloom, 20), BK_EKIND);
    assert_int_equal(bk_quotient_merge(NULL, small, &unused), BK_EINVAL);

    bk_filter_free(bloom);
    bk_filter_free(other_seed);
    bk_filter_free(narrow);
    bk_filter_free(growing);
    bk_filter_free(wide);
    bk_filter_free(before);
    bk_filter_free(small);
    bk_filter_free(m);
    bk_filter_free(a);
    bk_filter_free(b);
}

static double absent_rate(const bk_filter *f, uint64_t queries, uint64_t seed_value)
{
    uint64_t seed = seed_value, positives = 0;
    for (uint64_t i = 0; i < queries; i++) {
        bk_hash h = { next_random(&seed), next_random(&seed) };
        positives += bk_filter_contains_hash(f, h);
    }
    return (double)positives / (double)queries;
}

static void assert_fpr_near(double measured, double predicted, uint64_t queries)
{
    double sigma = sqrt((double)queries * predicted * (1 - predicted)) / (double)queries;
    assert_true(fabs(measured - predicted) <= 4 * sigma);
}

static double predicted_fpr(uint64_t fingerprints, unsigned width)
{
    return -expm1((double)fingerprints * log1p(-ldexp(1.0, -(int)width)));
}

static void test_resize(void **state)
{
    (void)state;
    bk_filter *f = create(50000, 9, 0);
    bk_quotient_info before = info_of(f);
    add_keys(f, 0, 40000, 1);
    add_keys(f, 0, 500, 40);
    const uint64_t queries = 400000;
    double fpr_before = absent_rate(f, queries, 11);
    bk_filter *original = NULL;
    assert_int_equal(bk_filter_copy(f, &original), BK_OK);
    bk_stats s_before;
    bk_filter_stats(f, &s_before);

    assert_int_equal(bk_quotient_resize(f, before.log2_slots + 1), BK_OK);
    bk_quotient_info after = info_of(f);
    assert_int_equal(after.log2_slots, before.log2_slots + 1);
    assert_int_equal(after.remainder_bits, before.remainder_bits - 1);
    assert_int_equal(after.fingerprints, before.fingerprints + info_of(original).fingerprints);
    assert_same_contents(f, original);
    expect_keys(f, 0, 500, 41);
    expect_keys(f, 500, 40000, 1);
    /* same fingerprints, same width: the same FPR for the keys stored */
    double predicted = predicted_fpr(after.fingerprints, after.fingerprint_bits);
    assert_fpr_near(fpr_before, predicted, queries);
    assert_true(absent_rate(f, queries, 11) == fpr_before); /* the very same answers */
    bk_stats s_after;
    bk_filter_stats(f, &s_after);
    assert_int_equal(s_after.capacity, 2 * s_before.capacity);
    assert_true(s_after.load_factor < s_before.load_factor * 0.51);

    /* two more doublings, then back down */
    assert_int_equal(bk_quotient_resize(f, before.log2_slots + 3), BK_OK);
    assert_same_contents(f, original);
    assert_int_equal(bk_quotient_resize(f, before.log2_slots), BK_OK);
    assert_same_contents(f, original);
    size_t size;
    uint8_t *bytes = bk_rt_serialize(original, &size);
    bk_rt_assert_serializes_to(f, bytes, size); /* back to the original bytes */
    free(bytes);
    /* out of range: a remainder under 4 bits or over 32; too small to fit */
    assert_int_equal(bk_quotient_resize(f, before.log2_slots + 6), BK_ERANGE);
    assert_int_equal(bk_quotient_resize(f, before.log2_slots - 1), BK_EFULL);
    assert_same_contents(f, original);
    bk_filter_free(original);
    bk_filter_free(f);
}

static void test_auto_grow(void **state)
{
    (void)state;
    bk_filter *f = create(1000, 10, BK_FLAG_AUTO_GROW);
    unsigned q0 = info_of(f).log2_slots;
    add_keys(f, 0, 5000, 1);
    expect_keys(f, 0, 5000, 1);
    bk_quotient_info info = info_of(f);
    assert_true(info.log2_slots >= q0 + 2);
    assert_int_equal(info.fingerprint_bits, q0 + 10);
    assert_true(info.load <= BK_QUOTIENT_DESIGN_LOAD);
    assert_true(info.auto_grow);
    bk_roundtrip_check(f, NULL, 500);
    bk_filter_free(f);
}

/* ------------------------------------------------------------------------ */
/* Accuracy                                                                 */
/* ------------------------------------------------------------------------ */

static void test_fpr_at_three_loads(void **state)
{
    (void)state;
    const double loads[] = { 0.3, 0.6, 0.9 };
    const uint64_t queries = 400000;
    for (int l = 0; l < 3; l++) {
        bk_filter *f = create(60000, 8, 0); /* 2^16 home slots */
        bk_quotient_info info = info_of(f);
        assert_int_equal(info.log2_slots, 16);
        uint64_t n = (uint64_t)(loads[l] * (double)info.home_slots);
        add_keys(f, 0, n, 1);
        info = info_of(f);
        double predicted = predicted_fpr(info.fingerprints, info.fingerprint_bits);
        assert_true(fabs(predicted - loads[l] / 256.0) < loads[l] / 256.0 * 0.01);
        double measured = absent_rate(f, queries, 100 + (uint64_t)l);
        assert_fpr_near(measured, predicted, queries);
        bk_stats s;
        bk_filter_stats(f, &s);
        assert_true(s.current_fpr == predicted);
        bk_filter_free(f);
    }
}

static void test_sizing(void **state)
{
    (void)state;
    const double fprs[] = { 0.05, 0.01, 0.001, 0.0001 };
    const unsigned widths[] = { 4, 6, 9, 13 }; /* 2^21 slots: load 0.477 */
    for (int i = 0; i < 4; i++) {
        bk_params p = { .capacity = 1000000, .fpr = fprs[i] };
        bk_stats d;
        assert_int_equal(bk_kind_design(BK_KIND_QUOTIENT, &p, &d), BK_OK);
        assert_int_equal(d.kind, BK_KIND_QUOTIENT);
        assert_int_equal(d.fingerprint_bits, widths[i]);
        assert_true(d.target_fpr <= fprs[i]);
        assert_true(d.design_fill_ratio <= BK_QUOTIENT_DESIGN_LOAD);
        /* (r + 2.125) bits per slot, plus the overflow slots */
        double slots_per_key = 1 / d.design_fill_ratio;
        assert_true(d.bits_per_key >= (widths[i] + 2.125) * slots_per_key);
        assert_true(d.bits_per_key <= (widths[i] + 2.125) * slots_per_key * 1.02);
        bk_filter *f = NULL;
        assert_int_equal(bk_filter_create(BK_KIND_QUOTIENT, &p, &f), BK_OK);
        bk_stats s;
        bk_filter_stats(f, &s);
        assert_int_equal(s.bits, d.bits);
        bk_filter_free(f);
    }
    bk_params bad[] = {
        { .capacity = 0 },
        { .capacity = 10, .fpr = 1.5 },
        { .capacity = 10, .remainder_bits = 3 },
        { .capacity = 10, .remainder_bits = 33 },
        { .capacity = 10, .hashes = 3 },
    };
    bk_stats d;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(bk_kind_design(BK_KIND_QUOTIENT, &bad[i], &d), BK_EINVAL);
    bk_params tiny_fpr = { .capacity = 10, .fpr = 1e-12 };
    assert_int_equal(bk_kind_design(BK_KIND_QUOTIENT, &tiny_fpr, &d), BK_ERANGE);
    bk_params concurrent = { .capacity = 10, .flags = BK_FLAG_CONCURRENT };
    bk_filter *f = NULL;
    assert_int_equal(bk_filter_create(BK_KIND_QUOTIENT, &concurrent, &f), BK_EUNSUPPORTED);
    bk_params unknown_flag = { .capacity = 10, .flags = 0x80 };
    assert_int_equal(bk_filter_create(BK_KIND_QUOTIENT, &unknown_flag, &f), BK_EINVAL);
}

/* ------------------------------------------------------------------------ */
/* A full filter                                                            */
/* ------------------------------------------------------------------------ */

static void test_full_filter_keeps_every_key(void **state)
{
    (void)state;
    bk_filter *f = create(60, 8, 0); /* 64 home slots */
    assert_int_equal(info_of(f).home_slots, 64);
    char key[32];
    uint64_t added = 0;
    bk_status status = BK_OK;
    for (; status == BK_OK; added++) {
        key_name(key, sizeof key, added);
        status = bk_filter_add(f, key, strlen(key), NULL);
    }
    added--; /* the refused one */
    assert_int_equal(status, BK_EFULL);
    assert_true(added >= 60);
    size_t size;
    uint8_t *bytes = bk_rt_serialize(f, &size);
    /* every refusal changes nothing */
    for (uint64_t i = added; i < added + 50; i++) {
        key_name(key, sizeof key, i);
        status = bk_filter_add(f, key, strlen(key), NULL);
        if (status == BK_OK) { /* a fingerprint already stored, in a slot that fits */
            assert_int_equal(bk_filter_remove(f, key, strlen(key)), BK_OK);
        } else {
            assert_int_equal(status, BK_EFULL);
        }
        bk_rt_assert_serializes_to(f, bytes, size);
    }
    expect_keys(f, 0, added, 1);
    bk_stats s;
    bk_filter_stats(f, &s);
    assert_true(s.past_design_point);
    /* a remove makes room */
    key_name(key, sizeof key, 0);
    assert_int_equal(bk_filter_remove(f, key, strlen(key)), BK_OK);
    assert_int_equal(bk_filter_add(f, key, strlen(key), NULL), BK_OK);
    expect_keys(f, 0, added, 1);
    free(bytes);
    bk_filter_free(f);
}

/* ------------------------------------------------------------------------ */
/* Files                                                                    */
/* ------------------------------------------------------------------------ */

/* Any change to the parameter block or the payload that the loader
 * accepts must give a filter whose structure is whole: it re-serialises to
 * the very bytes it came from and answers without harm. */
static void test_hostile_files(void **state)
{
    (void)state;
    bk_filter *f = create(300, 6, 0);
    add_keys(f, 0, 200, 1);
    add_keys(f, 0, 20, 70); /* long counters */
    const bk_kind_ops *ops = bk_filter_ops(f);
    const void *object = bk_filter_object_of(f, BK_KIND_QUOTIENT);
    size_t params_size = ops->params_size(object);
    size_t payload_size = (size_t)ops->payload_size(object);
    uint8_t *params = malloc(params_size);
    uint8_t *payload = malloc(payload_size);
    ops->write_params(object, params);
    ops->write_payload(object, payload);
    bk_stats s;
    bk_filter_stats(f, &s);
    const bk_hasher *hasher = bk_filter_hasher(f);

    void *loaded = NULL;
    assert_int_equal(ops->read(params, params_size, payload, payload_size, hasher, s.keys_added,
                               false, &loaded),
                     BK_OK);
    ops->destroy(loaded);
    assert_int_equal(ops->read(params, params_size, payload, payload_size, hasher,
                               s.keys_added + 1, false, &loaded),
                     BK_ECORRUPT);
    assert_int_equal(ops->read(params, params_size - 1, payload, payload_size, hasher,
                               s.keys_added, false, &loaded),
                     BK_ECORRUPT);
    assert_int_equal(ops->read(params, params_size, payload, payload_size - 1, hasher,
                               s.keys_added, false, &loaded),
                     BK_ECORRUPT);

    uint64_t seed = 77;
    size_t accepted = 0;
    uint8_t *out_params = malloc(params_size);
    uint8_t *out_payload = malloc(payload_size);
    for (int trial = 0; trial < 20000; trial++) {
        uint8_t *target = trial % 8 == 0 ? params : payload;
        size_t size = trial % 8 == 0 ? params_size : payload_size;
        size_t at = next_random(&seed) % size;
        uint8_t saved = target[at];
        uint64_t r = next_random(&seed);
        target[at] = trial % 3 == 0 ? (uint8_t)r : (uint8_t)(saved ^ (1u << (r % 8)));
        loaded = NULL;
        bk_status status = ops->read(params, params_size, payload, payload_size, hasher,
                                     s.keys_added, false, &loaded);
        if (status == BK_OK) {
            accepted++;
            assert_int_equal(ops->params_size(loaded), params_size);
            assert_int_equal(ops->payload_size(loaded), payload_size);
            ops->write_params(loaded, out_params);
            ops->write_payload(loaded, out_payload);
            assert_memory_equal(out_params, params, params_size);
            assert_memory_equal(out_payload, payload, payload_size);
            bk_hash h = { next_random(&seed), next_random(&seed) };
            (void)ops->contains_hash(loaded, h);
            (void)ops->add_hash(loaded, h, NULL);
            ops->destroy(loaded);
        } else {
            assert_true(status == BK_ECORRUPT || status == BK_ERANGE);
            assert_null(loaded);
        }
        target[at] = saved;
    }
    /* some changes are harmless (the target FPR's low bits, a capacity) */
    assert_true(accepted > 0 && accepted < 20000 / 4);
    free(out_params);
    free(out_payload);
    free(params);
    free(payload);
    bk_filter_free(f);
}

static void test_handle_and_read_only(void **state)
{
    (void)state;
    bk_filter *f = create(1000, 8, 0);
    add_keys(f, 0, 500, 1);
    bk_roundtrip_check(f, NULL, 1000);
    bk_filter *copy = NULL;
    assert_int_equal(bk_filter_copy(f, &copy), BK_OK);
    assert_same_contents(f, copy);
    assert_int_equal(bk_filter_clear(copy), BK_OK);
    assert_int_equal(info_of(copy).fingerprints, 0);
    expect_keys(f, 0, 500, 1);
    bk_kind kind;
    assert_int_equal(bk_kind_from_name("quotient", &kind), BK_OK);
    assert_int_equal(kind, BK_KIND_QUOTIENT);
    assert_int_equal(strcmp(bk_kind_name(BK_KIND_QUOTIENT), "quotient"), 0);
    bk_quotient_info info;
    assert_int_equal(bk_quotient_get_info(NULL, &info), BK_EINVAL);
    assert_int_equal(bk_quotient_get_info(f, NULL), BK_EINVAL);
    uint64_t fp;
    bk_hash h = bk_filter_hash(f, "key:1", 5);
    assert_int_equal(bk_quotient_fingerprint(f, h, &fp), BK_OK);
    assert_true(fp == h.h1 >> (64 - info_of(f).fingerprint_bits));
    /* batch answers equal single ones */
    bk_key keys[64];
    char names[64][16];
    bool results[64];
    for (int i = 0; i < 64; i++) {
        snprintf(names[i], sizeof names[i], "key:%d", i * 13);
        keys[i] = (bk_key){ names[i], strlen(names[i]) };
    }
    size_t present = bk_filter_contains_batch(f, keys, 64, results);
    size_t expected = 0;
    for (int i = 0; i < 64; i++) {
        assert_int_equal(results[i], bk_filter_contains(f, keys[i].data, keys[i].len));
        expected += results[i];
    }
    assert_int_equal(present, expected);
    bk_filter_free(copy);
    bk_filter_free(f);
}

/* Golden files (tests/golden.h, tests/data/): the format and the algorithm
 * cannot drift. */
static const bk_golden goldens[] = {
    { "quotient-counts.bkf",
      BK_KIND_QUOTIENT,
      { .capacity = 100, .remainder_bits = 5 },
      300,
      4,
      600 },
    { "quotient-xxh64-flagged.bkf",
      BK_KIND_QUOTIENT,
      { .capacity = 200,
        .remainder_bits = 9,
        .hash_algorithm = BK_HASH_XXH64,
        .seed = 42,
        .flags = BK_FLAG_AUTO_GROW },
      150,
      5,
      400 },
};
#define GOLDEN_COUNT (sizeof goldens / sizeof goldens[0])

static void test_golden_files(void **state)
{
    (void)state;
    for (size_t g = 0; g < GOLDEN_COUNT; g++)
        bk_golden_check(&goldens[g]);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-golden") == 0)
        return bk_golden_write(goldens, GOLDEN_COUNT, argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_select_paths_agree),
        cmocka_unit_test(test_model_multiset),
        cmocka_unit_test(test_clusters_past_255_slots),
        cmocka_unit_test(test_one_key_adds_lay_out_canonically),
        cmocka_unit_test(test_counter_encoding_boundaries),
        cmocka_unit_test(test_keys_remove_exact),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_auto_grow),
        cmocka_unit_test(test_fpr_at_three_loads),
        cmocka_unit_test(test_sizing),
        cmocka_unit_test(test_full_filter_keeps_every_key),
        cmocka_unit_test(test_hostile_files),
        cmocka_unit_test(test_handle_and_read_only),
        cmocka_unit_test(test_golden_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
