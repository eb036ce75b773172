#!/bin/sh
# Builds the concurrency test under ThreadSanitizer and runs it: several
# threads add (BK_FLAG_CONCURRENT) while others query; TSan fails the run
# on any data race, the test on any false negative.
set -eu
cd "$(dirname "$0")/.."
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$(nproc)" --target test_concurrent
ctest --preset tsan -R '^test_concurrent$'
