#!/bin/sh
# Compiles every installed header (include/bloomkit.h and everything under
# include/bloomkit/, found afresh each run) alone, included twice, as C11
# and as C++17 with every warning an error:
#
#     compile_headers.sh SOURCE_DIR [CC [CXX]]     (default gcc, g++)
#
# On x86-64 each header is compiled again with AVX2 and with AVX-512 on,
# since the inline views take other branches there.  Prints each failure
# and exits 1 if there was one.
set -u
source_dir=$1
cc=${2:-gcc}
cxx=${3:-g++}
include="$source_dir/include"

headers=$(cd "$include" && find . -name '*.h' | sed 's#^\./##' | sort)
[ -n "$headers" ] || { echo "compile_headers: no headers under $include"; exit 1; }

target_flags="-O0"
case $(uname -m) in
x86_64 | amd64) target_flags="-O0|-mavx2|-mavx512f -mavx512dq -mavx512bw -mbmi2" ;;
esac

failures=0
count=0
# check COMPILER LANGUAGE STANDARD TARGET-FLAGS HEADER
check() {
    count=$((count + 1))
    if ! printf '#include "%s"\n#include "%s"\n' "$5" "$5" |
        $1 -std="$3" $4 -Wall -Wextra -Wpedantic -Werror -I"$include" -x "$2" -fsyntax-only - \
            >"$log" 2>&1; then
        echo "compile_headers: $5 fails as $3 ($1 $4):"
        cat "$log"
        failures=$((failures + 1))
    fi
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
old_ifs=$IFS
for header in $headers; do
    IFS='|'
    for flags in $target_flags; do
        IFS=$old_ifs
        check "$cc" c c11 "$flags" "$header"
        check "$cxx" c++ c++17 "$flags" "$header"
    done
    IFS=$old_ifs
done
echo "compile_headers: $count compilations, $failures failed"
[ "$failures" -eq 0 ]
