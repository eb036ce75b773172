#!/bin/sh
# Installs the built library into a temporary prefix and links a program
# against it the two ways a C user would: pkg-config, and CMake's
# find_package(bloomkit).  Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
for f in include/bloomkit.h include/bloomkit/bloom.h lib/libbloomkit.a lib/pkgconfig/bloomkit.pc \
         lib/cmake/bloomkit/bloomkitConfig.cmake bin/bloomkit; do
    [ -e "$work/prefix/$f" ] || { echo "install_test: missing $f"; exit 1; }
done
ls "$work/prefix/lib/"libbloomkit.so* >/dev/null

# The shared library exports exactly the functions that the installed
# headers declare: the rest of it is built hidden (BK_API_BEGIN/END in
# include/bloomkit/common.h).
grep -hoE '^[A-Za-z_][A-Za-z0-9_ *]*[ *]bk_[a-z0-9_]+\(' "$work/prefix/include/bloomkit/"*.h |
    grep -v '^static' | grep -oE 'bk_[a-z0-9_]+\($' | tr -d '(' | sort -u >"$work/declared"
nm -D --defined-only "$work/prefix/lib/libbloomkit.so" | awk '{ print $3 }' | sort -u >"$work/exported"
[ -s "$work/declared" ] || { echo "install_test: no declarations found in the headers"; exit 1; }
if ! cmp -s "$work/declared" "$work/exported"; then
    echo "install_test: exports differ from the headers' functions (< declared only, > exported only):"
    diff "$work/declared" "$work/exported" || true
    exit 1
fi

# pkg-config, shared and static
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
cc -o "$work/pc_shared" "$source_dir/tests/install/consumer/main.c" $(pkg-config --cflags --libs bloomkit)
LD_LIBRARY_PATH="$work/prefix/lib" "$work/pc_shared"
cc -o "$work/pc_static" "$source_dir/tests/install/consumer/main.c" $(pkg-config --cflags bloomkit) \
   "$work/prefix/lib/libbloomkit.a" -lm -lpthread
"$work/pc_static"

# find_package
cmake -S "$source_dir/tests/install/consumer" -B "$work/consumer" \
      -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib" "$work/consumer/consumer_shared"
"$work/consumer/consumer_static"
echo "install_test: pkg-config and find_package both link and run"
