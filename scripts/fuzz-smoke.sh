#!/bin/sh
# Builds the libFuzzer targets with clang (the `fuzz` preset) and runs the
# buffer-loader target for a short while (default 30 s; FUZZ_SECONDS=N to
# change), starting from the committed seeds.  New inputs it finds go to
# build/fuzz/corpus, never into the source tree.  Exits non-zero if the
# fuzzer finds a crash, leak, sanitizer report or broken property; the
# reproducer is left in build/fuzz/ (crash-*, leak-*, ...).
set -eu
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-30}"
if ! command -v clang >/dev/null 2>&1; then
    echo "fuzz-smoke: clang is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j2 --target fuzz_deserialize

mkdir -p build/fuzz/corpus
cd build/fuzz
echo "fuzz-smoke: fuzzing bk_filter_deserialize for ${seconds} s"
./tests/fuzz/fuzz_deserialize -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    -dict=../../tests/fuzz/format.dict -print_final_stats=1 \
    corpus ../../tests/fuzz/corpus ../../tests/data 2>fuzz.log || {
    tail -n 60 fuzz.log >&2
    echo "fuzz-smoke: FAILED (log: build/fuzz/fuzz.log)" >&2
    exit 1
}
grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+.*DONE)" fuzz.log || true
echo "fuzz-smoke: no crash in ${seconds} s"
