/*
 * tests/fuzz/replay.c -- runs the fuzz target's checks over the committed
 * corpus (tests/fuzz/corpus, tests/data) in the ordinary test suite, with
 * gcc and under ASan, so that every input the fuzzer ever found or was
 * seeded with stays a regression test without clang.  A failure aborts
 * (the harness's own property checks) or is caught by the sanitizers.
 *
 * Usage: fuzz_replay DIR_OR_FILE...
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    size_t capacity = 4096, size = 0;
    uint8_t *data = malloc(capacity);
    size_t got;
    while (data != NULL && (got = fread(data + size, 1, capacity - size, f)) > 0) {
        size += got;
        if (size == capacity) {
            uint8_t *bigger = realloc(data, capacity * 2);
            if (bigger == NULL)
                free(data);
            data = bigger;
            capacity *= 2;
        }
    }
    fclose(f);
    if (data == NULL)
        return 1;
    /* An exact-size copy, so that ASan sees a read one byte too far. */
    uint8_t *exact = malloc(size ? size : 1);
    if (exact == NULL) {
        free(data);
        return 1;
    }
    memcpy(exact, data, size);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    free(data);
    return 0;
}

static int replay(const char *path, size_t *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    DIR *dir = opendir(path);
    if (dir == NULL) {
        perror(path);
        return 1;
    }
    int failures = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.')
            continue;
        size_t room = strlen(path) + strlen(entry->d_name) + 2;
        char *child = malloc(room);
        if (child == NULL) {
            failures++;
            break;
        }
        snprintf(child, room, "%s/%s", path, entry->d_name);
        failures += replay(child, count);
        free(child);
    }
    closedir(dir);
    return failures;
}

int main(int argc, char **argv)
{
    size_t count = 0;
    int failures = 0;
    for (int i = 1; i < argc; i++)
        failures += replay(argv[i], &count);
    printf("fuzz_replay: %zu inputs replayed, %d unreadable\n", count, failures);
    return failures == 0 && count > 0 ? 0 : 1;
}
