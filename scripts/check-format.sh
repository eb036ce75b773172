#!/bin/sh
# check-format.sh -- is the C source formatted as .clang-format says?
#
#   scripts/check-format.sh [FILE...]     (default: every tracked *.c, *.h)
#
# Prints each file that clang-format would change, with the count of lines
# it would change, and exits 1 if there is one.  Uses clang-format 14
# (Debian: clang-format-14), or $CLANG_FORMAT.  Formats nothing itself:
# clang-format -i FILE does.
set -eu
cd "$(dirname "$0")/.."

tool=${CLANG_FORMAT:-}
if [ -z "$tool" ]; then
    for candidate in clang-format-14 clang-format; do
        if command -v "$candidate" >/dev/null 2>&1; then
            tool=$candidate
            break
        fi
    done
fi
[ -n "$tool" ] || { echo "check-format: clang-format not found (apt-get install clang-format-14)" >&2; exit 2; }

if [ $# -eq 0 ]; then
    set -- $(git ls-files '*.c' '*.h')
fi

files=0
lines=0
for file in "$@"; do
    changed=$("$tool" --style=file "$file" | diff "$file" - | grep -c '^<' || true)
    if [ "$changed" -gt 0 ]; then
        echo "$file: $changed lines"
        files=$((files + 1))
        lines=$((lines + changed))
    fi
done
if [ "$files" -gt 0 ]; then
    echo "check-format: $files files not formatted ($lines lines would change)"
    exit 1
fi
echo "check-format: formatted"
