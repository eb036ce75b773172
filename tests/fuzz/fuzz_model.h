/*
 * tests/fuzz/fuzz_model.h -- what the operation fuzz targets share: the
 * input read from the front, and the model of the keys a filter must hold.
 *
 * fuzz_operations.c (filters the library made) and fuzz_loaded.c (filters
 * loaded from hostile bytes) drive a filter with operations decoded from
 * the input and check it against this model: every key with a count above
 * zero must be found (the targets decide when ageing or removal releases
 * one).  The including file defines MAX_KEYS (the model's size: a full
 * model stops tracking new keys) and MAX_KEY_LEN before including it.
 */
#ifndef BK_FUZZ_MODEL_H
#define BK_FUZZ_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomkit.h"

#if !defined(MAX_KEYS) || !defined(MAX_KEY_LEN)
#error "define MAX_KEYS and MAX_KEY_LEN before including fuzz_model.h"
#endif

#define CHECK(condition)  \
    do {                  \
        if (!(condition)) \
            abort();      \
    } while (0)

/* The input, read from the front; zeros once it is used up. */
typedef struct input {
    const uint8_t *data;
    size_t size, at;
} input;

static inline uint8_t take_byte(input *in) { return in->at < in->size ? in->data[in->at++] : 0; }

/* `bytes` bytes of the input, big-endian. */
static inline uint64_t take_uint(input *in, unsigned bytes)
{
    uint64_t value = 0;
    for (unsigned i = 0; i < bytes; i++)
        value = value << 8 | take_byte(in);
    return value;
}

static inline bool used_up(const input *in) { return in->at >= in->size; }

typedef struct model_key {
    uint8_t bytes[MAX_KEY_LEN];
    size_t len;
    uint64_t count;      /* adds minus removes (since loading, for a loaded filter) */
    uint64_t last_added; /* insertion index of its latest add */
} model_key;

typedef struct model {
    model_key keys[MAX_KEYS];
    size_t count;
    uint64_t insertions; /* every successful add, repeats included */
    bk_kind kind;
    uint64_t window; /* insertion window: W; otherwise 0 (no ageing) */
    bool removes;    /* the kind removes keys */
} model;

/* Every status a call returns has a name (no stray value). */
static inline void check_status(bk_status status)
{
    CHECK(strcmp(bk_strerror(status), "unknown status code") != 0);
}

/* A key from the input: 0 to MAX_KEY_LEN bytes, or (one time in four) a
 * key the model already holds, so that repeats and removes find their
 * targets. */
static inline model_key take_key(input *in, const model *m)
{
    uint8_t choice = take_byte(in);
    if (m->count > 0 && choice % 4 == 0)
        return m->keys[take_byte(in) % m->count];
    model_key key = { .len = choice % (MAX_KEY_LEN + 1) };
    for (size_t i = 0; i < key.len; i++)
        key.bytes[i] = take_byte(in);
    return key;
}

static inline model_key *find(model *m, const model_key *key)
{
    for (size_t i = 0; i < m->count; i++)
        if (m->keys[i].len == key->len && memcmp(m->keys[i].bytes, key->bytes, key->len) == 0)
            return &m->keys[i];
    return NULL;
}

/* Records one successful add.  When the model is full a new key goes
 * untracked: it is in the filter, and later checks do not ask for it. */
static inline void record_add(model *m, const model_key *key)
{
    model_key *known = find(m, key);
    if (known == NULL && m->count < MAX_KEYS) {
        known = &m->keys[m->count++];
        *known = *key;
        known->count = 0;
    }
    if (known != NULL) {
        known->count++;
        known->last_added = m->insertions;
    }
    m->insertions++;
}

#endif
