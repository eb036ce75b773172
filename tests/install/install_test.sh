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
