#!/bin/sh
# Runs, on a big-endian machine, the tests that pin the byte order of the
# file format: tests/test_format.c (round trips, every corruption class,
# the golden files written on x86-64), the quotient filter's (its table of
# little-endian words, its golden files), the integer-key calls'
# (tests/test_u64.c: a uint64_t key is its little-endian bytes), and the
# window's and the counting filter's (both layouts' golden files each),
# and the static kinds' (tests/test_fuse.c: both hash rules' golden files).
# They are built for s390x with Debian's cross compiler and run under
# qemu-user.  Installs gcc-s390x-linux-gnu, libc6-dev-s390x-cross and
# qemu-user if they are missing (saying so).  cmocka has no s390x build in
# Debian, so tests/cross/cmocka.h stands in for it.
set -eu
cd "$(dirname "$0")/.."

packages="gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "cross-s390x: installing:$missing"
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi

out=build/s390x
mkdir -p "$out/xxhash"
ln -sf /usr/include/xxhash.h "$out/xxhash/xxhash.h"  # header-only use; no host headers

# The library's portable sources, as listed in CMakeLists.txt (x86 SIMD
# files are left out: they are chosen at run time and never run here).
sources=$(sed -n '/^set(BLOOMKIT_SOURCES/,/^)/p' CMakeLists.txt |
          grep -o 'src/[A-Za-z0-9_]*\.c' | grep -v -E '_(avx2|avx512|sse[0-9]*|x86)\.c$')

# Each test is built for s390x and run under qemu-s390x (big-endian).
for test in test_format test_quotient test_u64 test_window test_counting test_fuse; do
    echo "cross-s390x: building tests/$test.c for s390x"
    s390x-linux-gnu-gcc -std=c11 -O1 -g -static \
        -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-prototypes \
        -Itests/cross -Itests/support -Iinclude -Isrc -I"$out/xxhash" \
        -DBK_TEST_DATA_DIR="\"$PWD/tests/data\"" \
        $sources "tests/$test.c" -lm -o "$out/$test"
    echo "cross-s390x: running $test under qemu-s390x"
    qemu-s390x "$out/$test"
done
