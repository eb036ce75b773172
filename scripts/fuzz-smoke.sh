#!/bin/sh
# Builds the libFuzzer targets with clang (the `fuzz` preset) and runs each
# for a short while (default 30 s each; FUZZ_SECONDS=N to change), starting
# from the committed seeds: the buffer loader (fuzz_deserialize), the
# operation sequences checked against a model (fuzz_operations), filters
# loaded from hostile bytes then used and saved again (fuzz_loaded), the
# reader of Parquet-stored sbbf filters (fuzz_parquet), and the Redis
# module's value decoder (fuzz_redis_value).  New inputs go to
# build/fuzz/corpus, operations, loaded, parquet and redis_value, never into the
# source tree.  Exits non-zero if a fuzzer finds a crash, leak, sanitizer
# report or broken property; the reproducer is left in build/fuzz/
# (crash-*, leak-*, ...).
set -eu
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-30}"
if ! command -v clang >/dev/null 2>&1; then
    echo "fuzz-smoke: clang is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j2 --target fuzz_deserialize fuzz_operations fuzz_loaded \
    fuzz_parquet fuzz_redis_value

mkdir -p build/fuzz/corpus build/fuzz/operations build/fuzz/loaded build/fuzz/redis_value
cd build/fuzz

# run NAME LOG FUZZER-ARGUMENTS...
run() {
    name="$1" log="$2"
    shift 2
    echo "fuzz-smoke: fuzzing $name for ${seconds} s"
    "./tests/fuzz/$name" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
        "$@" 2>"$log" || {
        tail -n 60 "$log" >&2
        echo "fuzz-smoke: $name FAILED (log: build/fuzz/$log)" >&2
        exit 1
    }
    grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+.*DONE)" "$log" || true
}

run fuzz_deserialize fuzz.log -max_len=4096 -dict=../../tests/fuzz/format.dict \
    corpus ../../tests/fuzz/corpus ../../tests/data
run fuzz_operations operations.log -max_len=2048 -len_control=0 \
    operations ../../tests/fuzz/operations
run fuzz_loaded loaded.log -max_len=4096 -rss_limit_mb=1024 -malloc_limit_mb=256 \
    loaded ../../tests/fuzz/loaded
mkdir -p parquet
run fuzz_parquet parquet.log -max_len=1024 parquet ../../tests/fuzz/parquet
# The Redis module's value decoder (SCANDUMP/LOADCHUNK/RDB blobs).
run_redis_value() {
    echo "fuzz-smoke: fuzzing fuzz_redis_value for ${seconds} s"
    ./redis/fuzz_redis_value -max_total_time="$seconds" -timeout=10 -print_final_stats=1 -max_len=4096 \
        redis_value ../../tests/fuzz/redis_value 2>redis_value.log || {
        tail -n 60 redis_value.log >&2
        echo "fuzz-smoke: fuzz_redis_value FAILED (log: build/fuzz/redis_value.log)" >&2
        exit 1
    }
}
run_redis_value
echo "fuzz-smoke: no crash in ${seconds} s per target"
